#!/usr/bin/env bash
# report.sh - the one-command benchmark report: runs the latency shootout
# (with its CDF plots), the instruction counts per round trip under
# callgrind (icount.sh, when valgrind is installed), the redis-benchmark throughput comparison,
# EVALSHA and FCALL throughput over Unix sockets and TCP (script_bench.sh),
# Pub/Sub latency and subscription memory against redis-server (pubsub.sh),
# AOF write throughput (aof_bench.py), full sync time and replication lag
# against redis-server (repl_bench.py), the
# bytes-per-element memory comparison and, when Google Benchmark is there,
# the in-process microbenchmarks, then writes DIR/REPORT.md: the machine,
# every target of the benchmark plan marked met or missed, and every table.
#
#   bench/report.sh [--quick] [--out DIR] [--window-ms N] [--reps N]
#                   [--requests N] [--repeat N]
#                   [--skip shootout,icount,server_icount,throughput,
#                          scripting,pubsub,memory,microbench,aof,repl]
#
# --quick is the smoke run (a few seconds per step, tiny sizes): it proves
# every step starts and prints; its figures and verdicts mean nothing.
# --window-ms is the shootout's window per op and row (default 2000),
# --reps the microbenchmark repetitions (default 5), --requests and
# --repeat redis-benchmark's pipelined request count (default 200,000; a
# quarter of it at depth one) and runs per figure (default 3). Each step
# also runs alone: bench/shootout.sh, bench/redis_benchmark.sh,
# bench/script_bench.sh, bench/memory.sh, bench/microbench.sh. Their outputs and logs stay in
# DIR (default $BUILD_DIR/report).
#
# Programs come from $GOBLIND, $SHOOTOUT, $MEM_BYTES, $PUBSUB_BENCH, $ICOUNT and
# $MICROBENCH, else
# from $BUILD_DIR (default build-benchmarks, a release build made on first
# use). Needs redis-server and redis-tools (Debian), and gnuplot-nox for
# the plots (without it the report says so and has no plots). Exits 1 if a
# step failed (the report is still written), else 0: it never judges a
# figure.
set -euo pipefail

cd "$(dirname "$0")/.."
QUICK=0
OUT=""
WINDOW_MS=2000
REPS=5
REQUESTS=200000
REPEAT=3
SKIP=""
BUILD_DIR=${BUILD_DIR:-build-benchmarks}
export BUILD_DIR

while [ $# -gt 0 ]; do
    case "$1" in
    --quick) QUICK=1; shift ;;
    --out) OUT=$2; shift 2 ;;
    --window-ms) WINDOW_MS=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --requests) REQUESTS=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --skip) SKIP=$2; shift 2 ;;
    *) echo "usage: $0 [--quick] [--out DIR] [--window-ms N] [--reps N]" \
            "[--requests N] [--repeat N] [--skip LIST]" >&2
       exit 2 ;;
    esac
done
COMMAND="bench/report.sh"
[ "$QUICK" = 1 ] && COMMAND="$COMMAND --quick"
[ "$QUICK" = 0 ] && COMMAND="$COMMAND --window-ms $WINDOW_MS --reps $REPS\
 --requests $REQUESTS --repeat $REPEAT"
[ -n "$SKIP" ] && COMMAND="$COMMAND --skip $SKIP"
OUT=${OUT:-$BUILD_DIR/report}
mkdir -p "$OUT"
rm -f "$OUT"/REPORT.md "$OUT"/shootout* "$OUT"/throughput.* "$OUT"/scripting.* \
    "$OUT"/pubsub.* \
    "$OUT"/memory.* "$OUT"/microbench.* "$OUT"/icount.* \
    "$OUT"/server_icount.* "$OUT"/*.log
rm -rf "$OUT/plots"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

skipped() { [[ ",$SKIP," == *",$1,"* ]]; }

# One release build for every step, unless the programs were given.
if [ -z "${GOBLIND:-}" ] || [ -z "${SHOOTOUT:-}" ] ||
   [ -z "${MEM_BYTES:-}" ] || [ -z "${PUBSUB_BENCH:-}" ]; then
    if [ ! -d "$BUILD_DIR" ]; then
        meson setup "$BUILD_DIR" --buildtype=release -Dwerror=false \
            >/dev/null
    fi
    meson compile -C "$BUILD_DIR" goblind shootout mem_bytes icount \
        pubsub_bench >/dev/null
    GOBLIND=${GOBLIND:-$BUILD_DIR/server/goblind}
    ICOUNT=${ICOUNT:-$BUILD_DIR/bench/icount}
    SHOOTOUT=${SHOOTOUT:-$BUILD_DIR/bench/shootout}
    MEM_BYTES=${MEM_BYTES:-$BUILD_DIR/bench/mem_bytes}
    PUBSUB_BENCH=${PUBSUB_BENCH:-$BUILD_DIR/bench/pubsub_bench}
    if [ -z "${MICROBENCH:-}" ] &&
       meson compile -C "$BUILD_DIR" microbench >/dev/null 2>&1; then
        MICROBENCH=$BUILD_DIR/bench/microbench
    fi
fi
export GOBLIND SHOOTOUT MEM_BYTES PUBSUB_BENCH
[ -n "${ICOUNT:-}" ] && export ICOUNT
[ -n "${MICROBENCH:-}" ] && export MICROBENCH

FAILED=()
# step NAME CMD...: runs one script, its output in DIR/NAME.log.
step() {
    local name=$1 t0=$SECONDS
    shift
    if skipped "$name"; then
        echo "report: $name skipped"
        return 0
    fi
    echo "report: $name ..."
    if "$@" >"$OUT/$name.log" 2>&1; then
        echo "report: $name done in $((SECONDS - t0)) s"
    else
        echo "report: $name FAILED, see $OUT/$name.log" >&2
        tail -5 "$OUT/$name.log" >&2
        FAILED+=("$name")
    fi
}

ICOUNT_ARGS=()
[ "$QUICK" = 1 ] && ICOUNT_ARGS=(--quick)
if [ "$QUICK" = 1 ]; then
    step shootout bench/shootout.sh --quick --out "$OUT"
    step throughput bench/redis_benchmark.sh --quick --out "$OUT"
    step scripting bench/script_bench.sh --quick --out "$OUT"
    step pubsub bench/pubsub.sh --quick --out "$OUT"
    step memory bench/memory.sh --quick --out "$OUT"
    MB_ARGS=(--members 3000 --ops 3000 --reps 1 --chase-mib 4 --
             --benchmark_min_time=0)
else
    step shootout bench/shootout.sh --window-ms "$WINDOW_MS" --out "$OUT"
    step throughput env REPEAT="$REPEAT" bench/redis_benchmark.sh \
        --requests "$REQUESTS" --out "$OUT"
    step scripting env REPEAT="$REPEAT" bench/script_bench.sh \
        --requests "$REQUESTS" --out "$OUT"
    step pubsub bench/pubsub.sh --out "$OUT"
    step memory bench/memory.sh --out "$OUT"
    MB_ARGS=(--reps "$REPS")
fi
if [ -n "${ICOUNT:-}" ] && command -v valgrind >/dev/null; then
    step icount bench/icount.sh "${ICOUNT_ARGS[@]}" --out "$OUT"
    SIC_ARGS=()
    [ "$QUICK" = 1 ] && SIC_ARGS=(--quick)
    step server_icount bench/server_icount.sh "${SIC_ARGS[@]}" --out "$OUT"
else
    echo "report: icount and server_icount skipped (need valgrind," \
         "Debian: valgrind)"
fi
if [ -n "${MICROBENCH:-}" ]; then
    step microbench bench/microbench.sh --out "$OUT" "${MB_ARGS[@]}"
else
    echo "report: microbench not built (needs g++ and Google Benchmark," \
         "Debian: libbenchmark-dev), skipped"
fi
# Writes with an append-only file, against redis-server with the same
# appendfsync on the same disk (bench/aof_bench.py).
if [ "$QUICK" = 1 ]; then
    step aof python3 bench/aof_bench.py "$GOBLIND" --requests 20000 --reps 1
else
    step aof python3 bench/aof_bench.py "$GOBLIND"
fi
# Replication: full sync time and lag against redis-server
# (bench/repl_bench.py).
if [ "$QUICK" = 1 ]; then
    step repl python3 bench/repl_bench.py "$GOBLIND" --members 20000 \
        --fields 20000 --lag-seconds 1
else
    step repl python3 bench/repl_bench.py "$GOBLIND"
fi
grep -h '^shootout_plot:' "$OUT/shootout.log" 2>/dev/null || true

REPORT_ARGS=(--load-start "$LOAD_START" --command "$COMMAND")
[ "$QUICK" = 1 ] && REPORT_ARGS+=(--quick)
[ ${#FAILED[@]} -gt 0 ] && REPORT_ARGS+=(--failed "${FAILED[@]}")
python3 bench/report.py "$OUT" "${REPORT_ARGS[@]}"
if [ -s "$OUT/aof.log" ] && ! skipped aof; then
    { echo; echo "## Writes with an append-only file (bench/aof_bench.py)"
      echo; cat "$OUT/aof.log"; } >>"$OUT/REPORT.md"
fi
if [ -s "$OUT/repl.log" ] && ! skipped repl; then
    { echo; echo "## Replication (bench/repl_bench.py)"
      echo; cat "$OUT/repl.log"; } >>"$OUT/REPORT.md"
fi
cat "$OUT/REPORT.md"
echo
echo "report: $OUT/REPORT.md"
[ ${#FAILED[@]} -eq 0 ]
