#!/usr/bin/env bash
# The same unmodified NIO server and client, as two processes, first on the JDK's TCP, then with only the agent
# flag on the shm fabric; prints their numbers side by side.
#   examples/bin/shm-vs-tcp.sh [SECONDS]      each measurement's time after a one-second warm-up (default 2)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ensure_built
SECONDS_EACH="${1:-2}"
with_work_dir
cat > "$WORK/rules" <<RULES
bind 127.0.0.1 *
connect 127.0.0.1 *
RULES

# run LABEL [AGENT_OPTIONS_PREFIX]: one server process and one client process; leaves the client's result line
# in $WORK/LABEL.result
run() {
    local label="$1" agent=()
    if [[ -n "${2:-}" ]]; then
        agent=(-javaagent:"$AGENT=$2,stats=$WORK/$label-server.json")
    fi
    java "${agent[@]}" -cp "$CP" io.rdmanio.examples.measure.MeasureServer 127.0.0.1 0 > "$WORK/$label-server.log" 2>&1 &
    SERVER_PID=$!
    local port
    port="$(await_port "$SERVER_PID" "$WORK/$label-server.log" \
        '^measure server listening on 127\.0\.0\.1:\([0-9]*\)$')" || exit 1
    if [[ -n "${2:-}" ]]; then
        agent=(-javaagent:"$AGENT=$2,stats=$WORK/$label-client.json")
    fi
    java "${agent[@]}" -cp "$CP" io.rdmanio.examples.measure.MeasureClient 127.0.0.1 "$port" "$SECONDS_EACH" \
        > "$WORK/$label-client.log" 2>&1 || { cat "$WORK/$label-client.log" >&2; exit 1; }
    sed -n '/^result /!s/^/    /p' "$WORK/$label-client.log"
    grep '^result ' "$WORK/$label-client.log" > "$WORK/$label.result"
    kill "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
}

field() { sed -n "s/.* $2=\([0-9.]*\).*/\1/p" "$WORK/$1.result"; }

echo "==> JDK TCP: java -cp ... MeasureServer / MeasureClient (no agent)"
run tcp
echo "==> rdmanio shm: the same two commands with -javaagent:rdmanio-agent.jar=rules=...,fabric=shm"
run shm "rules=$WORK/rules,fabric=shm"
echo "    client: $(summary "$WORK/shm-client.json"); server: $(summary "$WORK/shm-server.json")"

awk -v tp50="$(field tcp rtt_p50_us)" -v sp50="$(field shm rtt_p50_us)" \
    -v tmean="$(field tcp rtt_mean_us)" -v smean="$(field shm rtt_mean_us)" \
    -v tmbs="$(field tcp stream_mb_s)" -v smbs="$(field shm stream_mb_s)" 'BEGIN {
    printf "==> side by side (one run, this machine)\n"
    printf "    %-30s %12s %12s %8s\n", "", "JDK TCP", "rdmanio shm", "shm/TCP"
    printf "    %-30s %9.1f us %9.1f us %7.2fx\n", "64 B round trip, median", tp50, sp50, sp50 / tp50
    printf "    %-30s %9.1f us %9.1f us %7.2fx\n", "64 B round trip, mean", tmean, smean, smean / tmean
    printf "    %-30s %7.0f MB/s %7.0f MB/s %7.2fx\n", "stream, 1 MiB writes", tmbs, smbs, smbs / tmbs
}'
