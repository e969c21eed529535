#!/usr/bin/env bash
# The NIO conformance suite over real verbs: builds the selector module's tests and libdisni on the host, then
# runs DisniFabricConformanceTest and DisniDirectWakeupTest (a blocked select woken by the completion channel
# itself) inside the soft-RoCE VM (one boot), every socket on rxe0's address (10.0.2.15) carried by the disni
# fabric. Exits 0 when every test passed and none was skipped.
#
# libdisni reaches DiSNI the way it does from the agent jar: packed as the resource
# META-INF/native/linux-x86_64/libdisni.so on the class path, extracted at run time.
#
#   native/vm/test-conformance.sh [CLASS[#METHOD]...]   (default: both classes above, whole)
#
# RDMANIO_TEST_LOG=debug shows rdmanio's debug log.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
native=$(cd "$here/.." && pwd)
root=$(cd "$native/.." && pwd)
selector="$root/selector"
start=$(date +%s%N)
"$native/build.sh" >&2
# One reactor build: core and selector compiled with their tests, and each module's test class path as Maven
# resolved it (core's classes from the reactor, the rest absolute paths into the local repository, which run.sh
# shares) written to that module's target/vm-test.classpath.
(cd "$root" && mvn -q -pl selector -am test-compile dependency:build-classpath -Dmdep.includeScope=test \
  -Dmdep.outputFile=target/vm-test.classpath) >&2
deps=":$(cat "$selector/target/vm-test.classpath")"
# RunTests needs the JUnit launcher, which core's tests carry and selector's do not.
launcher_jar=$(tr ':' '\n' <"$root/core/target/vm-test.classpath" | grep '/junit-platform-launcher-' | head -n 1)
[[ -n "$launcher_jar" ]] || { echo "test-conformance: no junit-platform-launcher on core's test class path" >&2; exit 1; }

# The packed library, as the agent jar carries it.
packed="$selector/target/vm-native"
rm -rf "$packed"
mkdir -p "$packed/META-INF/native/linux-x86_64"
cp "$native/target/native/linux-x86_64/libdisni.so" "$packed/META-INF/native/linux-x86_64/libdisni.so"

launcher="$selector/target/vm-launcher"
rm -rf "$launcher"
mkdir -p "$launcher"
javac --release 17 -d "$launcher" -cp "${deps#:}:$launcher_jar" "$here/RunTests.java"

classes=("$@")
if ((${#classes[@]} == 0)); then
  # The direct-wakeup tests last, on the engine the suite has used: they check that the completion thread is
  # parked whenever nobody waits on it, which holds only if every earlier wait (timed out, interrupted, woken by a
  # local close or by another queue's completion) withdrew the relay it asked the fabric for.
  classes=(io.rdmanio.selector.DisniFabricConformanceTest io.rdmanio.selector.DisniDirectWakeupTest)
fi
classpath="$launcher:$selector/target/test-classes:$selector/target/classes:$packed$deps:$launcher_jar"
built=$(date +%s%N)
echo "test-conformance: host build took $(( (built - start) / 1000000 )) ms" >&2

set +e
RDMANIO_VM_TIMEOUT="${RDMANIO_VM_TIMEOUT:-1800}" RDMANIO_VM_TIMING="${RDMANIO_VM_TIMING:-}" \
  RDMANIO_VM_MEM="${RDMANIO_VM_MEM:-3072}" "$here/run.sh" -C "$selector" -- \
  java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xmx1g \
  --add-exports java.base/sun.nio.ch=ALL-UNNAMED \
  -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
  -Dorg.slf4j.simpleLogger.log.io.rdmanio="${RDMANIO_TEST_LOG:-warn}" -Dorg.slf4j.simpleLogger.showDateTime=true \
  -cp "$classpath" RunTests "${classes[@]}"
rc=$?
set -e
end=$(date +%s%N)
echo "test-conformance: exit $rc; VM tier $(( (end - built) / 1000000 )) ms (boot included), total $(( (end - start) / 1000000 )) ms" >&2
exit $rc
