#!/usr/bin/env bash
# The same unmodified NIO server and client, as two processes, first on the JDK's TCP, then with only the agent
# flag on the shm fabric, repeated as PAIRS back-to-back pairs; prints each pair's numbers and the spread
# (min/median/max) of the shm/TCP ratios over the pairs: one run on a shared machine says little.
#   examples/bin/shm-vs-tcp.sh [SECONDS [PAIRS]]   each measurement's time (default 2) after a warm-up (4 s for
#                                                the round trips, whose first second is reported on its own;
#                                                1 s for the stream), and the number of pairs (default 3)
#   CONTEND=N examples/bin/shm-vs-tcp.sh ...       the same with N CPU-bound processes running beside the pair
#                                                (a machine doing other work), stopped when the script ends
#   RTT_WARMUP=S examples/bin/shm-vs-tcp.sh ...    the round trips' warm-up in seconds (default 4)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ensure_built
pair_settings "$@"
RTT_WARMUP="${RTT_WARMUP:-4}"
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
    # Emptied here, not only by the redirection below: that one runs in the background job, and on a loaded machine
    # the port could be read from the last pair's log before it did (a client then met "Connection refused").
    : > "$WORK/$label-server.log"
    java "${agent[@]}" -cp "$CP" io.rdmanio.examples.measure.MeasureServer 127.0.0.1 0 > "$WORK/$label-server.log" 2>&1 &
    SERVER_PID=$!
    local port
    port="$(await_port "$SERVER_PID" "$WORK/$label-server.log" \
        '^measure server listening on 127\.0\.0\.1:\([0-9]*\)$')" || exit 1
    if [[ -n "${2:-}" ]]; then
        agent=(-javaagent:"$AGENT=$2,stats=$WORK/$label-client.json")
    fi
    java "${agent[@]}" -cp "$CP" io.rdmanio.examples.measure.MeasureClient 127.0.0.1 "$port" "$SECONDS_EACH" \
        "$RTT_WARMUP" \
        > "$WORK/$label-client.log" 2>&1 || { cat "$WORK/$label-client.log" >&2; exit 1; }
    [[ "${QUIET:-0}" == 1 ]] || sed -n '/^result /!s/^/    /p' "$WORK/$label-client.log"
    grep '^result ' "$WORK/$label-client.log" > "$WORK/$label.result"
    kill "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
}

field() { sed -n "s/.* $2=\([0-9.]*\).*/\1/p" "$WORK/$1.result"; }

: > "$WORK/pairs"
for ((pair = 1; pair <= PAIRS; pair++)); do
    QUIET=1
    (( pair == 1 )) && QUIET=0
    (( QUIET )) || echo "==> JDK TCP: java -cp ... MeasureServer / MeasureClient (no agent)"
    run tcp
    (( QUIET )) || echo "==> rdmanio shm: the same two commands with -javaagent:rdmanio-agent.jar=rules=...,fabric=shm"
    run shm "rules=$WORK/rules,fabric=shm"
    (( QUIET )) || echo "    client: $(summary "$WORK/shm-client.json"); server: $(summary "$WORK/shm-server.json")"
    # The limit the shm stream is held to: the same writes and reads through a ring of shared memory between two
    # threads, with no connection at all, measured right after the pair so that it sees the machine as the pair
    # did, twice, keeping the higher (a stolen or busy core makes one run of it collapse, and the lower limit would
    # flatter the stream).
    (( QUIET )) || echo "==> ring-copy limit: java -cp ... MeasureRingCopy (two threads, 64 KiB slots, 2 MiB ring), twice"
    for r in 1 2; do
        java -cp "$CP" io.rdmanio.examples.measure.MeasureRingCopy "$SECONDS_EACH" > "$WORK/ring$r.log" 2>&1 \
            || { cat "$WORK/ring$r.log" >&2; exit 1; }
        [[ "$QUIET" == 1 ]] || sed -n '/^result /!s/^/    /p' "$WORK/ring$r.log"
    done
    grep -h '^result ' "$WORK/ring1.log" "$WORK/ring2.log" \
        | sort -t= -k2 -n | tail -n 1 > "$WORK/ring.result"
    echo "$pair $(field tcp rtt_p50_us) $(field shm rtt_p50_us) $(field tcp rtt_mean_us) $(field shm rtt_mean_us)" \
        "$(field tcp stream_mb_s) $(field shm stream_mb_s) $(field ring ring_mb_s)" \
        "$(field tcp rtt_cold_p50_us) $(field shm rtt_cold_p50_us)" >> "$WORK/pairs"
done

# Each pair on its own line, then min/median/max of each column over the pairs.
awk -v pairs="$PAIRS" -v contend="$CONTEND" '
function sortcol(a, n,    i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
}
function spread(name, a, unit, fmt, n,    median) {
    if (n == "") n = pairs
    if (n == 0) { printf "    %-30s none\n", name; return }
    sortcol(a, n)
    median = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    printf "    %-30s " fmt " / " fmt " / " fmt "%s\n", name, a[1], median, a[n], unit
}
{
    i = NR; tp[i] = $2; sp[i] = $3; tm[i] = $4; sm[i] = $5; tb[i] = $6; sb[i] = $7; tc[i] = $9; sc[i] = $10
    rcold[i] = $10 / $9
    r50[i] = $3 / $2; rmean[i] = $5 / $4; rmbs[i] = $7 / $6; lim[i] = $8; rlim[i] = $7 / $8
    # A limit below the stream it bounds is no limit: the ring copy ran in one of this machine slow spells.
    if ($8 >= $7) okl[++nokl] = $7 / $8
}
END {
    printf "==> side by side, %d back-to-back pairs (TCP run, then shm run; this machine as it is now%s)\n", pairs, \
        (contend > 0 ? sprintf(", %d CPU-bound processes beside the pair", contend) : "")
    printf "    %-6s %14s %14s %8s %14s %14s %8s %14s %9s\n", "pair", "TCP rtt p50", "shm rtt p50", "shm/TCP", \
        "TCP stream", "shm stream", "shm/TCP", "ring limit", "shm/limit"
    for (i = 1; i <= NR; i++)
        printf "    %-6d %11.1f us %11.1f us %7.2fx %9.0f MB/s %9.0f MB/s %7.2fx %9.0f MB/s %8.0f%%\n", i, tp[i], \
            sp[i], r50[i], tb[i], sb[i], rmbs[i], lim[i], 100 * rlim[i]
    printf "==> spread over the %d pairs: min / median / max\n", pairs
    spread("64 B round trip, median, TCP", tp, " us", "%.1f")
    spread("64 B round trip, median, shm", sp, " us", "%.1f")
    spread("  shm/TCP", r50, "x", "%.2f")
    spread("64 B round trip, mean, shm/TCP", rmean, "x", "%.2f")
    spread("first second, median, TCP", tc, " us", "%.1f")
    spread("first second, median, shm", sc, " us", "%.1f")
    spread("  shm/TCP", rcold, "x", "%.2f")
    spread("stream, 1 MiB writes, TCP", tb, " MB/s", "%.0f")
    spread("stream, 1 MiB writes, shm", sb, " MB/s", "%.0f")
    spread("  shm/TCP", rmbs, "x", "%.2f")
    spread("ring-copy limit", lim, " MB/s", "%.0f")
    spread("  shm stream / limit", okl, "", "%.2f", nokl + 0)
    if (nokl < pairs)
        printf "    (%d pair(s) left out of the stream / limit spread: both ring copies ran slower than the stream)\n", \
            pairs - nokl
}' "$WORK/pairs"
