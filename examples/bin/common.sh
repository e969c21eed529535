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
