#!/usr/bin/env bash
# Unmodified applications over real verbs, inside the soft-RoCE VM (one boot), each with a rules file routing the
# VM's RDMA address to the fabric and fabric=disni; each one's stats file must show every connection on the
# fabric and none on TCP, with zero receiver-not-ready events.
#  - the plain java.nio echo example (no rdmanio import), started with the provider property;
#  - the Netty 4.1 echo example (server and clients in one JVM, byte-exact echo checked by its clients), started
#    with only the agent flag -javaagent:rdmanio-agent.jar=rules=FILE,fabric=disni,stats=FILE. It runs when the
#    example is in the tree (examples/src/main/java/io/rdmanio/examples/netty).
# Exits 0 on success. Needs `mvn package` first (the agent jar, the example classes and examples/target/lib).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
agent="$root/selector/target/rdmanio-agent.jar"
examples="$root/examples/target/classes"
[[ -f "$agent" && -d "$examples" ]] || { echo "test-apps: build first (mvn -B package): $agent or $examples missing" >&2; exit 1; }
listing=$(jar tf "$agent")
grep -q 'META-INF/native/linux-x86_64/libdisni.so' <<<"$listing" \
  || { echo "test-apps: $agent carries no libdisni (native/build.sh, then mvn package)" >&2; exit 1; }

netty=0
if [[ -d "$root/examples/src/main/java/io/rdmanio/examples/netty" ]]; then
  netty=1
  [[ -f "$examples/io/rdmanio/examples/netty/NettyEchoDemo.class" && -d "$root/examples/target/lib" ]] \
    || { echo "test-apps: the Netty example is not built (mvn -B package): NettyEchoDemo.class or examples/target/lib missing" >&2; exit 1; }
else
  echo "test-apps: no Netty example in this tree (examples/src/main/java/io/rdmanio/examples/netty): only the NIO echo runs" >&2
fi

# Inside the VM, rxe0 sits on eth0 at this address (native/vm/run.sh).
address=10.0.2.15
clients=4
netty_clients=4
# Bytes each Netty client sends and checks; not a multiple of any buffer size, so partial frames are exercised.
netty_bytes=1000003
work="$root/examples/target/vm-apps"
rm -rf "$work"
mkdir -p "$work"
cat >"$work/disni.rules" <<RULES
# The VM's RDMA interface is carried by the disni fabric; nothing else matches, so it would stay on TCP.
bind $address * rdma
connect $address * rdma
RULES

# What runs inside the VM: each application in turn, its output and exit status kept in the shared directory so
# that one boot serves both and the checks below see each result.
cat >"$work/inside.sh" <<INSIDE
#!/usr/bin/env bash
cd "$root"
# Each application has a bounded time, so that one that hangs leaves the VM's time to the others.
timeout 300 java -Xmx1g -Djava.nio.channels.spi.SelectorProvider=io.rdmanio.selector.RdmaSelectorProvider \\
  --add-exports java.base/sun.nio.ch=ALL-UNNAMED \\
  -Drdmanio.rules="$work/disni.rules" -Drdmanio.fabric=disni -Drdmanio.stats="$work/nio-stats.json" \\
  -cp "$agent:$examples" io.rdmanio.examples.echo.EchoDemo --clients $clients --messages 300 --timeout 300 $address \\
  2>&1 | tee "$work/nio.out"
echo "\${PIPESTATUS[0]}" >"$work/nio.rc"
if [[ $netty == 1 ]]; then
  # Only the agent flag: it opens sun.nio.ch to DiSNI's class loader too.
  timeout 300 java -Xmx1g \\
    -javaagent:"$agent=rules=$work/disni.rules,fabric=disni,stats=$work/netty-stats.json" \\
    -cp "$examples:$root/examples/target/lib/*" io.rdmanio.examples.netty.NettyEchoDemo $address \\
    --clients $netty_clients --bytes $netty_bytes 2>&1 | tee "$work/netty.out"
  echo "\${PIPESTATUS[0]}" >"$work/netty.rc"
fi
INSIDE
chmod +x "$work/inside.sh"

set +e
RDMANIO_VM_MEM="${RDMANIO_VM_MEM:-3072}" "$here/run.sh" -C "$root" -- "$work/inside.sh"
rc=$?
set -e
[[ $rc -eq 0 ]] || echo "test-apps: the VM run ended with exit $rc" >&2

failures=0
found=0
check() {
  found=$((found + 1))
  if [[ "$2" == "$3" ]]; then echo "PASS $1"; else echo "FAIL $1: expected $3, found $2"; failures=$((failures + 1)); fi
}
stat() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v=d
for k in sys.argv[2:]: v=v.get(k, 0) if isinstance(v, dict) else 0
print(v)' "$@" 2>/dev/null || echo "(unreadable)"; }
rnr() { grep -o '"receiverNotReady": *[0-9]*' "$1" 2>/dev/null | grep -o '[0-9]*$' | sort -n | tail -n 1 || true; }

# check_stats NAME STATS_FILE CONNECTION_ENDS
check_stats() {
  if [[ ! -f "$2" ]]; then
    check "$1: a stats file was written" missing present
    return
  fi
  cat "$2"
  check "$1: the stats name the disni fabric" "$(stat "$2" fabric)" disni
  check "$1: every connection end is on the fabric" "$(stat "$2" connections rdma)" "$3"
  check "$1: no connection is on TCP" "$(stat "$2" connections tcp)" 0
  local n
  n=$(rnr "$2")
  check "$1: zero receiver-not-ready events" "${n:-0}" 0
}

check "nio echo: the example exits 0" "$(cat "$work/nio.rc" 2>/dev/null || echo none)" 0
check_stats "nio echo" "$work/nio-stats.json" $((2 * clients))
if [[ $netty == 1 ]]; then
  check "netty echo: the example exits 0" "$(cat "$work/netty.rc" 2>/dev/null || echo none)" 0
  intact=$(grep -c '^all netty echoes intact$' "$work/netty.out" 2>/dev/null || true)
  check "netty echo: every byte came back intact" "${intact:-0}" 1
  check_stats "netty echo" "$work/netty-stats.json" $((2 * netty_clients))
fi
echo "tests: $found found, $((found - failures)) succeeded, $failures failed, 0 skipped, 0 aborted"
exit $((failures > 0))
