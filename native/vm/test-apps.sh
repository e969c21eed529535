#!/usr/bin/env bash
# Unmodified applications over real verbs: inside the soft-RoCE VM, the plain java.nio echo example (no rdmanio
# import) runs with the agent jar, a rules file routing the VM's RDMA address to the fabric, and
# rdmanio.fabric=disni; its stats file must show every connection on the fabric and none on TCP, with zero
# receiver-not-ready events. Exits 0 on success. Needs `mvn package` first (the agent jar and example classes).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
agent="$root/selector/target/rdmanio-agent.jar"
examples="$root/examples/target/classes"
[[ -f "$agent" && -d "$examples" ]] || { echo "test-apps: build first (mvn -B package): $agent or $examples missing" >&2; exit 1; }
listing=$(jar tf "$agent")
grep -q 'META-INF/native/linux-x86_64/libdisni.so' <<<"$listing" \
  || { echo "test-apps: $agent carries no libdisni (native/build.sh, then mvn package)" >&2; exit 1; }

# Inside the VM, rxe0 sits on eth0 at this address (native/vm/run.sh).
address=10.0.2.15
clients=4
work="$root/examples/target/vm-apps"
rm -rf "$work"
mkdir -p "$work"
cat >"$work/disni.rules" <<RULES
# The VM's RDMA interface is carried by the disni fabric; nothing else matches, so it would stay on TCP.
bind $address * rdma
connect $address * rdma
RULES

set +e
"$here/run.sh" -C "$root" -- \
  java -Xmx1g -Djava.nio.channels.spi.SelectorProvider=io.rdmanio.selector.RdmaSelectorProvider \
  --add-exports java.base/sun.nio.ch=ALL-UNNAMED \
  -Drdmanio.rules="$work/disni.rules" -Drdmanio.fabric=disni -Drdmanio.stats="$work/stats.json" \
  -cp "$agent:$examples" io.rdmanio.examples.echo.EchoDemo --clients "$clients" --messages 300 --timeout 300 "$address"
rc=$?
set -e
[[ $rc -eq 0 ]] || { echo "test-apps: the echo example failed in the VM (exit $rc)" >&2; exit 1; }
[[ -f "$work/stats.json" ]] || { echo "test-apps: no stats file was written" >&2; exit 1; }
cat "$work/stats.json"
stat() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v=d
for k in sys.argv[2:]: v=v.get(k, 0) if isinstance(v, dict) else 0
print(v)' "$work/stats.json" "$@"; }
fabric=$(stat fabric); rdma=$(stat connections rdma); tcp=$(stat connections tcp)
failures=0
check() { if [[ "$2" == "$3" ]]; then echo "PASS $1"; else echo "FAIL $1: expected $3, found $2"; failures=$((failures + 1)); fi; }
check "the stats name the disni fabric" "$fabric" disni
check "every connection end is on the fabric" "$rdma" $((2 * clients))
check "no connection is on TCP" "$tcp" 0
rnr=$(grep -o '"receiverNotReady": *[0-9]*' "$work/stats.json" | grep -o '[0-9]*$' || echo 0)
check "zero receiver-not-ready events" "$rnr" 0
echo "tests: 4 found, $((4 - failures)) succeeded, $failures failed, 0 skipped, 0 aborted"
exit $((failures > 0))
