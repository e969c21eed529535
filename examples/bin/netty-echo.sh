#!/usr/bin/env bash
# An unmodified Netty 4.1 NIO echo server and clients in one JVM, started with only the rdmanio agent flag:
# connections to 127.0.0.1 are routed to the loopback fabric by a two-line rules file.
#   examples/bin/netty-echo.sh [HOST]     (127.0.0.2 stays on kernel TCP)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ensure_built
HOST="${1:-127.0.0.1}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
printf 'bind 127.0.0.1 *\nconnect 127.0.0.1 *\n' > "$WORK/rules"
java_agent "rules=$WORK/rules,fabric=loopback,stats=$WORK/stats.json" \
    io.rdmanio.examples.netty.NettyEchoDemo "$HOST" --clients 4 --bytes 4000000
echo "connections: $(summary "$WORK/stats.json")"
