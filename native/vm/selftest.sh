#!/usr/bin/env bash
# Proves the soft-RoCE VM works: the rxe device is visible to libibverbs, and rping
# (rdma_cm + verbs) and ib_send_lat (perftest) complete between two processes over rxe0.
# Exits 0 when all three pass.
#
# Usage: native/vm/selftest.sh          (boots the VM and runs the checks inside it)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
addr=10.0.2.15

if [[ "${1:-}" != "--guest" ]]; then
  exec "$here/run.sh" -C "$here" -- bash "$here/selftest.sh" --guest
fi

# Retries a client until its server is ready (bounded; the server starts in the background).
retry() {
  local attempt
  for attempt in $(seq 40); do
    if "$@"; then return 0; fi
    sleep 0.25
  done
  return 1
}

step() { printf '== %s\n' "$*"; }

step "ibv_devinfo"
ibv_devinfo -d rxe0 | grep -E 'hca_id|state|link_layer'
ibv_devinfo -d rxe0 | grep -q 'PORT_ACTIVE' || { echo "FAIL rxe0 port not active"; exit 1; }
echo "PASS rxe0 present and active"

step "rping (3 iterations, server and client over rdma_cm)"
t0=$(date +%s%N)
timeout 60 rping -s -a "$addr" -C 3 -v >/tmp/rping-server.log 2>&1 &
server=$!
retry timeout 30 rping -c -a "$addr" -C 3 -S 64 -v >/tmp/rping-client.log 2>&1 \
  || { echo "FAIL rping client"; cat /tmp/rping-client.log /tmp/rping-server.log; exit 1; }
wait "$server" || { echo "FAIL rping server"; cat /tmp/rping-server.log; exit 1; }
cat /tmp/rping-client.log
echo "PASS rping in $(( ($(date +%s%N) - t0) / 1000000 )) ms"

step "ib_send_lat (1000 iterations, 64 bytes)"
t0=$(date +%s%N)
timeout 120 ib_send_lat -d rxe0 -R -s 64 -n 1000 >/tmp/lat-server.log 2>&1 &
server=$!
retry timeout 100 ib_send_lat -d rxe0 -R -s 64 -n 1000 "$addr" >/tmp/lat-client.log 2>&1 \
  || { echo "FAIL ib_send_lat client"; cat /tmp/lat-client.log /tmp/lat-server.log; exit 1; }
wait "$server" || { echo "FAIL ib_send_lat server"; cat /tmp/lat-server.log; exit 1; }
grep -E '#bytes|^ *64 ' /tmp/lat-client.log
echo "PASS ib_send_lat in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
