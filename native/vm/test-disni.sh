#!/usr/bin/env bash
# End-to-end test of libdisni on soft-RoCE: builds the library and the check programs on the
# host, then runs inside the test VM (one boot) DisniVerbsCheck (DiSNI 2.1's verbs API over
# rxe0) and DisniEndpointCheck (its endpoint API, with DiSNI's own CM and completion threads).
# Exits 0 when every check passed.
#
# DISNI_SANITIZE=address,undefined native/vm/test-disni.sh runs the same check against a
# sanitizer build of the library (built into target/native-sanitize, preloaded in the VM).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
native=$(cd "$here/.." && pwd)
user_home="$(getent passwd "$(id -u)" | cut -d: -f6)"
m2="${MAVEN_REPO:-${user_home:-$HOME}/.m2/repository}"
disni_jar="$m2/com/ibm/disni/disni/2.1/disni-2.1.jar"
slf4j_api="$m2/org/slf4j/slf4j-api/2.0.16/slf4j-api-2.0.16.jar"
slf4j_simple="$m2/org/slf4j/slf4j-simple/2.0.16/slf4j-simple-2.0.16.jar"

for jar in "$disni_jar" "$slf4j_api" "$slf4j_simple"; do
  if [[ ! -f "$jar" ]]; then
    echo "test-disni: $jar missing; fetch the project's dependencies first (mvn -q -pl native test-compile)" >&2
    exit 1
  fi
done

sanitize="${DISNI_SANITIZE:-}"
if [[ -z "$sanitize" ]]; then
  "$native/build.sh" >&2
  libdir="$native/target/native/linux-x86_64"
  preload=()
else
  "$native/build.sh" >&2 # installs the toolchain when missing
  libdir="$native/target/native-sanitize/linux-x86_64"
  cmake -S "$native" -B "$native/target/cmake-sanitize" --log-level=WARNING -DCMAKE_RULE_MESSAGES=OFF \
    -DDISNI_SANITIZE="$sanitize" -DDISNI_OUTPUT_DIR="$libdir" >/dev/null
  cmake --build "$native/target/cmake-sanitize" >&2
  runtime=""
  [[ "$sanitize" == *address* ]] && runtime=libasan.so.8
  [[ -z "$runtime" && "$sanitize" == *undefined* ]] && runtime=libubsan.so.1
  # The JVM handles SIGSEGV itself and never frees some allocations: let it.
  preload=(env "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/$runtime"
    "ASAN_OPTIONS=handle_segv=0:allow_user_segv_handler=1:detect_leaks=0:abort_on_error=1"
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
fi
classes="$native/target/vm-check-classes"
rm -rf "$classes"
mkdir -p "$classes"
javac --release 17 -d "$classes" -cp "$disni_jar" \
  "$native/src/test/java/io/rdmanio/nativetest/DisniVerbsCheck.java" \
  "$native/src/test/java/io/rdmanio/nativetest/DisniEndpointCheck.java"

classpath="$classes:$disni_jar:$slf4j_api:$slf4j_simple"
start=$(date +%s%N)
set +e
java_cmd=("${preload[@]}" java -XX:+UseSerialGC -XX:TieredStopAtLevel=1
  --add-exports java.base/sun.nio.ch=ALL-UNNAMED
  -Dorg.slf4j.simpleLogger.defaultLogLevel=warn
  -Djava.library.path="$libdir"
  -cp "$classpath")
RDMANIO_VM_TIMING="${RDMANIO_VM_TIMING:-}" "$here/run.sh" -C "$native" -- bash -c '
  "$@" io.rdmanio.nativetest.DisniVerbsCheck 10.0.2.15 19755 &&
  "$@" io.rdmanio.nativetest.DisniEndpointCheck 10.0.2.15 19756' test-disni "${java_cmd[@]}"
rc=$?
set -e
end=$(date +%s%N)
echo "test-disni: exit $rc after $(( (end - start) / 1000000 )) ms (VM boot included)" >&2
exit $rc
