#!/usr/bin/env bash
# The disni fabric's tests on soft-RoCE: builds libdisni and core's tests on the host, then runs, inside the test
# VM (one boot), the JUnit classes that need an RDMA device (DisniSpiConformanceTest, the fabric conformance
# suite; DisniFabricTest; DisniEngineTest) over rxe0 (10.0.2.15), plus the host-side ones for good measure. Exits 0
# when every test passed and none was skipped.
#
# libdisni reaches DiSNI the way it does from the agent jar: packed as the resource
# META-INF/native/linux-x86_64/libdisni.so on the class path, extracted at run time; no java.library.path.
#
#   native/vm/test-fabric.sh [CLASS[#METHOD]...]   (default: DisniSpiConformanceTest, DisniFabricTest and
#                                                   DisniEngineTest)
#
# RDMANIO_TEST_LOG=debug shows the fabric's debug log.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
native=$(cd "$here/.." && pwd)
root=$(cd "$native/.." && pwd)
core="$root/core"
start=$(date +%s%N)
"$native/build.sh" >&2
(cd "$root" && mvn -q -pl core -am test-compile) >&2
# The test class path as Maven resolved it: absolute paths into the local repository, which run.sh shares.
cpfile="$core/target/vm-test.classpath"
(cd "$root" && mvn -q -pl core dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$cpfile") >&2
deps=":$(cat "$cpfile")"

# The packed library, as the agent jar carries it.
packed="$core/target/vm-native"
rm -rf "$packed"
mkdir -p "$packed/META-INF/native/linux-x86_64"
cp "$native/target/native/linux-x86_64/libdisni.so" "$packed/META-INF/native/linux-x86_64/libdisni.so"

launcher="$core/target/vm-launcher"
rm -rf "$launcher"
mkdir -p "$launcher"
javac --release 17 -d "$launcher" -cp "${deps#:}" "$here/RunTests.java"

classes=("$@")
if ((${#classes[@]} == 0)); then
  classes=(io.rdmanio.core.fabric.disni.DisniSpiConformanceTest io.rdmanio.core.fabric.disni.DisniFabricTest
    io.rdmanio.core.fabric.disni.DisniEngineTest)
fi
classpath="$launcher:$core/target/test-classes:$core/target/classes:$packed$deps"
built=$(date +%s%N)
echo "test-fabric: host build took $(( (built - start) / 1000000 )) ms" >&2

set +e
RDMANIO_VM_TIMING="${RDMANIO_VM_TIMING:-}" RDMANIO_VM_MEM="${RDMANIO_VM_MEM:-3072}" "$here/run.sh" -C "$core" -- \
  java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xmx1g \
  --add-exports java.base/sun.nio.ch=ALL-UNNAMED \
  -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
  -Dorg.slf4j.simpleLogger.log.io.rdmanio="${RDMANIO_TEST_LOG:-warn}" -Dorg.slf4j.simpleLogger.showDateTime=true \
  -cp "$classpath" RunTests "${classes[@]}"
rc=$?
set -e
end=$(date +%s%N)
echo "test-fabric: exit $rc; VM tier $(( (end - built) / 1000000 )) ms (boot included), total $(( (end - start) / 1000000 )) ms" >&2
exit $rc
