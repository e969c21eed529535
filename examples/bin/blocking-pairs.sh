#!/usr/bin/env bash
# Round trips between two blocking threads (a thread-per-connection server and its client, MeasureBlocking), as two
# processes, first on the JDK's TCP, then with only the agent flag on the shm fabric, PAIRS back-to-back pairs, with
# the default spin and with rdmanio.spinMicros=0 (every wait parks: what a waiter sees on crowded processors);
# prints each pair and the spread (min/median/max) of the shm/TCP ratios of the p50.
#   examples/bin/blocking-pairs.sh [SECONDS [PAIRS]]   each measurement's time (default 2, after a 2 s warm-up)
#   CONTEND=N examples/bin/blocking-pairs.sh ...       with N CPU-bound processes beside the pairs
#   RTT_WARMUP=S examples/bin/blocking-pairs.sh ...    the warm-up in seconds (default 2)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ensure_built
pair_settings "$@"
RTT_WARMUP="${RTT_WARMUP:-2}"
printf 'bind 127.0.0.1 *\nconnect 127.0.0.1 *\n' > "$WORK/rules"

# run LABEL [JAVA_OPTIONS...]: one server and one client process; prints the client's p50 in us
run() {
    local label="$1"
    shift
    : > "$WORK/$label-server.log"
    java "$@" -cp "$CP" io.rdmanio.examples.measure.MeasureBlocking server 127.0.0.1 0 > "$WORK/$label-server.log" 2>&1 &
    SERVER_PID=$!
    local port
    port="$(await_port "$SERVER_PID" "$WORK/$label-server.log" \
        '^measure-blocking server listening on 127\.0\.0\.1:\([0-9]*\)$')" || exit 1
    java "$@" -cp "$CP" io.rdmanio.examples.measure.MeasureBlocking client 127.0.0.1 "$port" "$SECONDS_EACH" "$RTT_WARMUP" \
        > "$WORK/$label-client.log" 2>&1 || { cat "$WORK/$label-client.log" >&2; exit 1; }
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
    sed -n 's/^result rtt_p50_us=\([0-9.]*\).*/\1/p' "$WORK/$label-client.log"
}

spread() { sort -g | awk '{v[NR] = $1} END {printf "%s / %s / %s", v[1], v[int((NR + 1) / 2)], v[NR]}'; }

AGENT_FLAG=(-javaagent:"$AGENT=rules=$WORK/rules,fabric=shm,stats=$WORK/stats.json")
echo "==> blocking 64 B round trips, p50 in us, $PAIRS pairs (TCP, shm; shm with rdmanio.spinMicros=0)$( ((CONTEND)) && echo ", $CONTEND CPU-bound processes beside")"
printf '    %-6s %10s %10s %8s %14s %8s\n' pair TCP shm shm/TCP "shm spin 0" shm/TCP
: > "$WORK/ratios"
: > "$WORK/ratios0"
for ((pair = 1; pair <= PAIRS; pair++)); do
    tcp="$(run tcp)"
    shm="$(run shm "${AGENT_FLAG[@]}")"
    shm0="$(run shm0 -Drdmanio.spinMicros=0 "${AGENT_FLAG[@]}")"
    r="$(awk -v a="$shm" -v b="$tcp" 'BEGIN {printf "%.2f", a / b}')"
    r0="$(awk -v a="$shm0" -v b="$tcp" 'BEGIN {printf "%.2f", a / b}')"
    echo "$r" >> "$WORK/ratios"
    echo "$r0" >> "$WORK/ratios0"
    printf '    %-6s %10s %10s %7sx %14s %7sx\n' "$pair" "$tcp" "$shm" "$r" "$shm0" "$r0"
done
echo "    the last shm client: $(summary "$WORK/stats.json")"
echo "    shm/TCP min / median / max: $(spread < "$WORK/ratios")x; with spin 0: $(spread < "$WORK/ratios0")x"
