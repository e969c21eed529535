#!/usr/bin/env bash
# Hadoop's MapReduce shuffle (3.4.2), unmodified, with only the agent flag: one JVM writes map outputs with IFile
# and serves them with the NodeManager's ShuffleHandler (Netty 4, NIO), another runs a reduce task's Shuffle
# (Fetcher over HttpURLConnection, MergeManager) and checks every merged record. Prints the reduce side's lines and
# which transport carried the connections of each process.
#   examples/bin/hadoop-shuffle-demo.sh               the demo: the pair once, on the shm fabric (a few seconds)
#   examples/bin/hadoop-shuffle-demo.sh --pairs [N]   N pairs (default 3) of a larger shuffle (4 maps x 4 reduces,
#                                                     32 MiB per reduce), on TCP then on shm: fetch MB/s of each
#                                                     run, and min/median/max of TCP, shm and shm/TCP
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
HADOOP="$ROOT/hadoop"

pairs=0
if [[ "${1:-}" == --pairs ]]; then
    pairs=3
    [[ "${2:-}" =~ ^[0-9]+$ ]] && pairs="$2"
    (( pairs > 0 )) || { echo "hadoop-shuffle-demo.sh: --pairs needs a positive number" >&2; exit 2; }
elif [[ $# -gt 0 ]]; then
    echo "usage: $0 [--pairs [N]]" >&2
    exit 2
fi

# Hadoop 3.4's UserGroupInformation needs Subject.getSubject, which JDK 23 and later no longer support
# (HADOOP-19212).
major="$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)"
if (( ${major:-0} >= 23 )); then
    echo "==> skipped: Hadoop 3.4 does not run on JDK $major (Subject.getSubject is not supported, HADOOP-19212);"
    echo "    put a JDK 17 first on PATH"
    exit 0
fi

if [[ ! -f "$AGENT" || ! -d "$HADOOP/target/classes" || ! -d "$HADOOP/target/lib" ]]; then
    echo "==> building rdmanio and the Hadoop example (mvn -q package -DskipTests)" >&2
    (cd "$ROOT" && mvn -B -q -Dstyle.color=never -pl core,selector,hadoop -am package -DskipTests) >&2
fi
HCP="$HADOOP/target/classes:$HADOOP/target/lib/*"
with_work_dir
# The NodeManager binds the wildcard address (new InetSocketAddress(port)): a rule for 0.0.0.0 routes it.
cat > "$WORK/rules" <<RULES
bind 0.0.0.0 *
connect 127.0.0.1 *
RULES

# shuffle_run DIR TRANSPORT(tcp|shm) MAPS REDUCES RECORDS VALUE_BYTES: the map side, then the reduce side; the
# reduce side's output in DIR/reduce.log, the stats files in DIR (shm only).
shuffle_run() {
    local dir="$1" transport="$2" map_agent=() reduce_agent=() port status=0
    shift 2
    mkdir -p "$dir"
    if [[ $transport == shm ]]; then
        map_agent=(-javaagent:"$AGENT=rules=$WORK/rules,fabric=shm,stats=$dir/map.json")
        reduce_agent=(-javaagent:"$AGENT=rules=$WORK/rules,fabric=shm,stats=$dir/reduce.json")
    fi
    java "${map_agent[@]}" @"$HADOOP/java17.args" -cp "$HCP" io.rdmanio.examples.hadoop.MapSide "$dir" "$@" \
        > "$dir/map.log" 2>&1 &
    SERVER_PID=$!
    port="$(await_port "$SERVER_PID" "$dir/map.log" '^shuffle handler on 127\.0\.0\.1:\([0-9]*\)$')" || return 1
    java "${reduce_agent[@]}" @"$HADOOP/java17.args" -Xmx512m -cp "$HCP" io.rdmanio.examples.hadoop.ReduceSide \
        "$dir" "$port" "$@" > "$dir/reduce.log" 2>&1 || status=$?
    # A TERM runs the shutdown hooks, which write the stats file.
    kill "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
    rm -rf "$dir/nm-local" "$dir"/reduce-local-*
    if (( status != 0 )); then
        echo "the reduce side failed (exit $status):" >&2
        cat "$dir/reduce.log" >&2
        return 1
    fi
}

# The fetch MB/s of a run, from the reduce side's summary.
mbps() {
    sed -n 's/^shuffle: .*(\([0-9.]*\) MB\/s)$/\1/p' "$1/reduce.log"
}

if (( pairs == 0 )); then
    echo "==> rules (both sides):"; sed 's/^/    /' "$WORK/rules"
    echo "==> map side: IFile outputs of 4 maps for 3 reduces, served by ShuffleHandler; reduce side: Shuffle"
    shuffle_run "$WORK/run" shm 4 3 2000 200 || exit 1
    sed -n 's/^map outputs/    map outputs/p' "$WORK/run/map.log"
    grep -E '^(reduce|shuffle)' "$WORK/run/reduce.log" | sed 's/^/    /'
    echo "==> which transport carried the connections:"
    printf '    %-43s %s\n' "map side (ShuffleHandler, Netty on NIO):" "$(summary "$WORK/run/map.json")" \
        "reduce side (Fetcher, HttpURLConnection):" "$(summary "$WORK/run/reduce.json")"
    exit 0
fi

echo "==> $pairs pairs of the Hadoop shuffle, 4 maps x 4 reduces, 32 MiB per reduce: TCP, then shm" \
    "(load: $(cut -d' ' -f1-3 /proc/loadavg))"
for ((i = 1; i <= pairs; i++)); do
    shuffle_run "$WORK/tcp-$i" tcp 4 4 8192 1000 || exit 1
    shuffle_run "$WORK/shm-$i" shm 4 4 8192 1000 || exit 1
    tcp="$(mbps "$WORK/tcp-$i")"
    shm="$(mbps "$WORK/shm-$i")"
    echo "$tcp" >> "$WORK/tcp"
    echo "$shm" >> "$WORK/shm"
    awk -v s="$shm" -v t="$tcp" 'BEGIN { printf "%.2f\n", s / t }' >> "$WORK/ratio"
    printf '    pair %d: fetch TCP %8.1f MB/s, shm %8.1f MB/s (%s), shm/TCP %sx\n' "$i" "$tcp" "$shm" \
        "$(summary "$WORK/shm-$i/reduce.json")" "$(tail -n 1 "$WORK/ratio")"
done
echo "==> min / median / max over the pairs"
for f in tcp shm ratio; do
    sort -n "$WORK/$f" | awk -v label="$f" '{ t[NR] = $1 } END {
        m = NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
        unit = label == "ratio" ? "x" : " MB/s"
        printf "    %-8s %8.2f / %8.2f / %8.2f%s\n", (label == "ratio" ? "shm/TCP" : label), t[1], m, t[NR], unit }'
done
