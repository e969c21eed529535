# Sourced by the example scripts: locates the agent jar and the examples' class path, building them if missing.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
AGENT="$ROOT/selector/target/rdmanio-agent.jar"
EXAMPLES="$ROOT/examples/target"

ensure_built() {
    if [[ ! -f "$AGENT" || ! -d "$EXAMPLES/classes" || ! -d "$EXAMPLES/lib" ]]; then
        echo "==> building rdmanio and the examples (mvn -q package -DskipTests)" >&2
        (cd "$ROOT" && mvn -B -q -Dstyle.color=never -pl core,selector,examples -am package -DskipTests) >&2
    fi
    CP="$EXAMPLES/classes:$EXAMPLES/lib/*"
}

# A work directory in $WORK, removed on exit together with the server in $SERVER_PID (if one is running).
with_work_dir() {
    WORK="$(mktemp -d)"
    SERVER_PID=""
    trap cleanup_work_dir EXIT
}

cleanup_work_dir() {
    if [[ -n "$SERVER_PID" ]]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}

# pair_settings [SECONDS [PAIRS]]: what the pair scripts share: SECONDS_EACH (default 2) and PAIRS (default 3) from
# the arguments, CONTEND from the environment (default 0), a work directory and the CPU-bound processes beside.
pair_settings() {
    SECONDS_EACH="${1:-2}"
    PAIRS="${2:-3}"
    CONTEND="${CONTEND:-0}"
    with_work_dir
    start_contenders "$CONTEND"
}

# start_contenders N: N CPU-bound processes beside a measurement (a machine doing other work), each bounded in time
# should the script be killed before its trap runs; stopped, with the work directory removed, when the script ends.
start_contenders() {
    CONTENDERS=()
    trap stop_contenders EXIT
    for ((i = 0; i < $1; i++)); do
        timeout 900 sh -c 'while :; do :; done' &
        CONTENDERS+=($!)
    done
}

stop_contenders() {
    (( ${#CONTENDERS[@]} == 0 )) || kill "${CONTENDERS[@]}" 2>/dev/null || true
    cleanup_work_dir
}

# await_port PID LOG SED_PATTERN: prints the port a starting server wrote to LOG (the pattern's one group);
# fails, showing the log, if the server exits first or takes more than 60 s.
await_port() {
    local pid="$1" log="$2" pattern="$3" port=""
    for _ in $(seq 1 600); do
        port="$(sed -n "s/$pattern/\1/p" "$log")"
        if [[ -n "$port" ]]; then
            echo "$port"
            return 0
        fi
        kill -0 "$pid" 2>/dev/null || { echo "the server exited before it listened:" >&2; cat "$log" >&2; return 1; }
        sleep 0.1
    done
    echo "the server did not listen within 60 s:" >&2
    cat "$log" >&2
    return 1
}

# java with only the agent flag added: java_agent OPTIONS MAIN ARGS...
java_agent() {
    local options="$1"
    shift
    java -javaagent:"$AGENT${options:+=$options}" -cp "$CP" "$@"
}

# The connection counts of a stats file, one line: "fabric N, TCP M".
summary() {
    sed -n 's/.*"connections": {[^"]*"rdma": \([0-9]*\),[^"]*"tcp": \([0-9]*\).*/fabric \1, TCP \2/p' \
        <(tr -d '\n' < "$1")
}
