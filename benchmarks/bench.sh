#!/usr/bin/env bash
# Benchmarks of unmodified java.nio code on the JDK's TCP and on every fabric this machine has, side by side.
#
#   benchmarks/bench.sh --quick     about 2-3 minutes: a table with ratios to TCP (nothing written to the repository)
#   benchmarks/bench.sh             the full suite (about 14 minutes): JMH JSON under benchmarks/results/, and the
#                                   PNG plots regenerated from it
#   benchmarks/bench.sh --profile   the shm 64 B round trip and 1 MiB stream under JMH's stack profiler
#   benchmarks/bench.sh --plots     only regenerate the plots from the JSON already in benchmarks/results/
#   benchmarks/bench.sh --startup   a JVM's whole life (start, main, exit) with and without the agent, 7 runs each
#   benchmarks/bench.sh --pairs [N] [--contend M]
#                                   N back-to-back pairs (default 5) of one NIO server and client as two processes,
#                                   on TCP then on shm (64 B round trips, a 1 MiB-write stream); each pair and the
#                                   min/median/max of every number and ratio; --contend: M CPU-bound processes beside
#   benchmarks/bench.sh --scale [--repeat N] [--idle 0,500,2000] [--connections 1000,5000] [--transports tcp,shm]
#                                   a round trip beside idle connections, and N connections opened and held
#                                   (rate, memory, descriptors, mappings per connection), TCP beside shm
#   benchmarks/bench.sh --blocking [N] [--contend M]
#                                   N pairs of blocking 64 B round trips between two processes (a thread per
#                                   connection on each side), TCP then shm, and shm with rdmanio.spinMicros=0
#   benchmarks/bench.sh --vthreads [N] [--platform]
#                                   200 threads, each blocked on its own connection, 100 round trips of 64 B each,
#                                   TCP then shm in N pairs (default 5): virtual threads on a JDK 21+ (the one on
#                                   PATH, else the newest under /usr/lib/jvm); --platform: platform threads
#   benchmarks/bench.sh --file [N]
#                                   a 256 MiB file sent with FileChannel.transferTo, TCP (sendfile) then shm, in N
#                                   pairs (default 3), 5 rounds per run with the first left out
#   benchmarks/bench.sh --shuffle [N]
#                                   Hadoop's MapReduce shuffle (ShuffleHandler, a reduce task's Shuffle; 4 maps x 4
#                                   reduces, 32 MiB per reduce) in N pairs (default 3), TCP then shm: fetch MB/s
#   ... --transports tcp,disni      (after --quick or alone) only these transports; tcp is always one of them
#
# Builds the agent jar and the benchmarks jar first when they are missing or older than the sources.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
results="$root/benchmarks/results"
bench_jar="$root/benchmarks/target/benchmarks.jar"
agent_jar="$root/selector/target/rdmanio-agent.jar"

mode=full
case "${1:-}" in
  --quick|--profile|--plots|--scale|--startup|--pairs|--blocking|--vthreads|--file|--shuffle) mode="${1#--}"; shift ;;
  -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
esac
extra=()
if [[ $mode == pairs || $mode == blocking ]]; then
  pairs=5
  contend=0
  if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
    pairs="$1"
    shift
  fi
  if [[ "${1:-}" == --contend ]]; then
    [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "bench.sh: --contend needs a number of CPU-bound processes" >&2; exit 2; }
    contend="$2"
    shift 2
  fi
  [[ $# -eq 0 ]] || { echo "bench.sh: unknown argument '$1' after --$mode (expected [N] [--contend M])" >&2; exit 2; }
  script=shm-vs-tcp.sh
  [[ $mode == pairs ]] || script=blocking-pairs.sh
  CONTEND="$contend" exec "$root/examples/bin/$script" 2 "$pairs"
fi
if [[ $mode == shuffle ]]; then
  pairs=3
  if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
    pairs="$1"
    shift
  fi
  [[ $# -eq 0 ]] || { echo "bench.sh: unknown argument '$1' after --shuffle (expected [N])" >&2; exit 2; }
  exec "$root/examples/bin/hadoop-shuffle-demo.sh" --pairs "$pairs"
fi
if [[ $mode == scale ]]; then
  extra=("$@")
  set --
fi
if [[ $mode == vthreads ]]; then
  extra=(--pairs 5)
  if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
    extra=(--pairs "$1")
    shift
  fi
  if [[ "${1:-}" == --platform ]]; then
    extra+=(--platform)
    shift
  fi
  [[ $# -eq 0 ]] || { echo "bench.sh: unknown argument '$1' after --vthreads (expected [N] [--platform])" >&2; exit 2; }
fi
if [[ $mode == file ]]; then
  extra=(--pairs 3)
  if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
    extra=(--pairs "$1")
    shift
  fi
  [[ $# -eq 0 ]] || { echo "bench.sh: unknown argument '$1' after --file (expected [N])" >&2; exit 2; }
fi
if [[ "${1:-}" == --transports && $mode != plots && $mode != profile ]]; then
  [[ -n "${2:-}" ]] || { echo "bench.sh: --transports needs a list such as tcp,disni" >&2; exit 2; }
  extra=(--transports "$2")
  shift 2
fi
[[ $# -eq 0 ]] || { echo "bench.sh: unknown argument '$1' (expected --quick, --profile, --plots, [--quick] --transports LIST, or nothing)" >&2; exit 2; }

needs_build() {
  [[ -f "$bench_jar" && -f "$agent_jar" ]] || return 0
  # Rebuild when any source of the modules the jars hold is newer than the older jar.
  local oldest="$bench_jar"
  [[ "$agent_jar" -ot "$oldest" ]] && oldest="$agent_jar"
  [[ -n "$(find core/src/main selector/src/main benchmarks/src/main benchmarks/pom.xml selector/pom.xml core/pom.xml pom.xml \
            -newer "$oldest" -type f -print -quit)" ]]
}

# A python3 that has matplotlib: the one on PATH, or Debian's (which python3-matplotlib installs into).
find_python() {
  local py
  for py in python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null && "$py" -c 'import matplotlib' 2>/dev/null; then
      echo "$py"
      return 0
    fi
  done
  return 1
}

plots() {
  local py
  if ! py="$(find_python)"; then
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
      echo "installing python3-matplotlib for the plots ..."
      apt-get install -y -qq python3-matplotlib >/dev/null || { apt-get update -qq && apt-get install -y -qq python3-matplotlib >/dev/null; }
    fi
    py="$(find_python)" || {
      echo "bench.sh: python3 with matplotlib is needed for the plots (Debian: apt-get install python3-matplotlib); JSON results are in $results" >&2
      return 1
    }
  fi
  "$py" "$root/benchmarks/plot.py" "$results"
}

if [[ $mode == plots ]]; then
  plots
  exit
fi

if needs_build; then
  echo "building the agent jar and the benchmarks jar ..."
  mvn -q -B -pl benchmarks -am package -DskipTests
fi

java=java
[[ -n "${JAVA_HOME:-}" ]] && java="$JAVA_HOME/bin/java"
cp="$bench_jar:$agent_jar"

# time_ms COMMAND...: the wall time of COMMAND's whole life in ms.
time_ms() {
  local t0 t1
  t0=$(date +%s%N)
  "$@" > /dev/null 2>&1 || { echo "bench.sh: '$*' failed" >&2; exit 1; }
  t1=$(date +%s%N)
  echo $(( (t1 - t0) / 1000000 ))
}

# spread LABEL FILE: min / median / max of the numbers in FILE.
spread() {
  sort -n "$2" | awk -v label="$1" '{ t[NR] = $1 } END {
    m = NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
    printf "  %-46s %6d / %6d / %6d ms\n", label, t[1], m, t[NR] }'
}

case $mode in
  startup)
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    printf 'bind 127.0.0.1 *\nconnect 127.0.0.1 *\n' > "$tmp/rules"
    hello=(-cp "$bench_jar" io.rdmanio.benchmarks.StartupHello)
    runs=7
    echo "A JVM's whole life (start, main, exit), $runs rounds of the four runs in turn (so load hits all alike)"
    for ((i = 0; i < runs; i++)); do
      time_ms "$java" "${hello[@]}" >> "$tmp/plain"
      time_ms "$java" -javaagent:"$agent_jar" "${hello[@]}" >> "$tmp/agent"
      time_ms "$java" "${hello[@]}" socket >> "$tmp/plain-socket"
      time_ms "$java" -javaagent:"$agent_jar=rules=$tmp/rules,fabric=shm" "${hello[@]}" socket >> "$tmp/agent-socket"
    done
    echo "  min / median / max"
    spread "hello, no agent" "$tmp/plain"
    spread "hello, agent, no rules" "$tmp/agent"
    spread "hello over a socket, no agent" "$tmp/plain-socket"
    spread "hello over a socket, agent, the socket on shm" "$tmp/agent-socket"
    ;;
  quick)
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    "$java" -cp "$cp" io.rdmanio.benchmarks.BenchMain --quick --results "$tmp" "${extra[@]}"
    ;;
  scale)
    "$java" -cp "$cp" io.rdmanio.benchmarks.ScaleBench "${extra[@]}"
    ;;
  vthreads)
    vjava="$java"
    major="$("$vjava" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)"
    if [[ " ${extra[*]} " != *" --platform "* ]] && (( ${major:-0} < 21 )); then
      vjava=""
      for home in $(ls -d /usr/lib/jvm/*/ 2>/dev/null | sort -r); do
        m="$("$home/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)"
        if (( ${m:-0} >= 21 )); then
          vjava="$home/bin/java"
          break
        fi
      done
      [[ -n "$vjava" ]] || { echo "bench.sh: virtual threads need a JDK 21 or later (none on PATH or under /usr/lib/jvm)" >&2; exit 1; }
      echo "(java on PATH is $major: running on $vjava)"
    fi
    "$vjava" -cp "$cp" io.rdmanio.benchmarks.VirtualThreadsBench "${extra[@]}"
    ;;
  file)
    "$java" -cp "$cp" io.rdmanio.benchmarks.FileTransferBench "${extra[@]}"
    ;;
  profile)
    mkdir -p "$results"
    "$java" -cp "$cp" io.rdmanio.benchmarks.BenchMain --profile --results "$results"
    ;;
  full)
    mkdir -p "$results"
    "$java" -cp "$cp" io.rdmanio.benchmarks.BenchMain --results "$results" "${extra[@]}"
    plots
    ;;
esac
