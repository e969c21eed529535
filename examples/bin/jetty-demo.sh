#!/usr/bin/env bash
# Jetty 12 over rdmanio, unmodified, with only the agent flag. One Jetty server is bound under a `both` rule, so it
# listens on the shm fabric and on kernel TCP at the same address; a client JVM with the agent fetches over the
# fabric, and curl (or a JVM without the agent) over TCP. Prints each routing decision and which transport
# carried the connections of each process.
#   examples/bin/jetty-demo.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ensure_built
with_work_dir
cat > "$WORK/rules" <<RULES
# Jetty listens on the fabric and on TCP; clients with the agent connect over the fabric.
bind 127.0.0.1 * both
connect 127.0.0.1 *
RULES
# Routing decisions at debug level (SLF4J simple logger, to stdout).
LOG=(-Dorg.slf4j.simpleLogger.logFile=System.out -Dorg.slf4j.simpleLogger.log.io.rdmanio.routing=debug
     -Dorg.slf4j.simpleLogger.log.org.eclipse.jetty=warn)

echo "==> rules:"; sed 's/^/    /' "$WORK/rules"
java "${LOG[@]}" -javaagent:"$AGENT=rules=$WORK/rules,fabric=shm,stats=$WORK/server.json" -cp "$CP" \
    io.rdmanio.examples.jetty.JettyServer 127.0.0.1 0 "$WORK/www" > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
PORT="$(await_port "$SERVER_PID" "$WORK/server.log" '^jetty on 127\.0\.0\.1:\([0-9]*\)$')" || exit 1
BASE="http://127.0.0.1:$PORT"
echo "==> Jetty server (with the agent): $(grep -m1 'bind ' "$WORK/server.log" | sed 's/.*io.rdmanio.routing - //')"

echo "==> client with the agent: JDK HttpClient, Jetty HttpClient (NIO) and HttpURLConnection (java.net)"
java "${LOG[@]}" -javaagent:"$AGENT=rules=$WORK/rules,fabric=shm,stats=$WORK/client.json" -cp "$CP" \
    io.rdmanio.examples.httpclient.Fetch "$BASE" "$WORK/www" all > "$WORK/client.log" 2>&1 \
    || { cat "$WORK/client.log" >&2; exit 1; }
grep -E 'GET|routing|fetches' "$WORK/client.log" | sed 's/.*io.rdmanio.routing - /    routed: /; s/^\([a-z]\)/    \1/'

echo "==> plain TCP client, no agent:"
if command -v curl >/dev/null 2>&1; then
    for f in index.html blob.bin dynamic/3145745; do
        bytes="$(curl -sS --fail --max-time 60 -o /dev/null -w '%{size_download}' "$BASE/$f")"
        echo "    curl GET /$f: $bytes bytes"
    done
else
    java -cp "$CP" io.rdmanio.examples.httpclient.Fetch "$BASE" "$WORK/www" jdk | sed 's/^/    /'
fi

kill "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""
echo "==> which transport carried the connections:"
echo "    client with the agent: $(summary "$WORK/client.json")"
echo "    Jetty server:          $(summary "$WORK/server.json")  (the agent's on the fabric, curl's on TCP)"
