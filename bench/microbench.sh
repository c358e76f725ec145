#!/usr/bin/env bash
# microbench.sh - runs the in-process microbenchmarks pinned to one CPU
# and writes DIR/microbench.md (tables shaped like the reference's, every
# figure also as a multiple of one DRAM miss measured in the same run),
# DIR/microbench.json (Google Benchmark's raw JSON, every repetition) and
# DIR/microbench.txt (its console output).
#
#   bench/microbench.sh [--members N] [--ops N] [--reps N] [--range N]
#                       [--seed S] [--score-shape integer|fractional]
#                       [--chase-mib N] [--out DIR] [-- BENCHMARK_FLAGS...]
#
# The program comes from $MICROBENCH, else $BUILD_DIR (default
# build-benchmarks, a release build made on first use). It runs on
# BENCH_CPU (default 1). --out defaults to $BUILD_DIR/results. Flags after --
# go to Google Benchmark (e.g. --benchmark_filter=raw/). This is a
# benchmark: it reports and never fails on a figure.
set -euo pipefail

cd "$(dirname "$0")/.."
OUT=""
BENCH_CPU=${BENCH_CPU:-1}
BUILD_DIR=${BUILD_DIR:-build-benchmarks}
ARGS=()

while [ $# -gt 0 ]; do
    case "$1" in
    --members|--ops|--reps|--range|--seed|--score-shape|--chase-mib)
        ARGS+=("$1" "$2"); shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --) shift; ARGS+=("$@"); break ;;
    *) echo "usage: $0 [--members N] [--ops N] [--reps N] [--range N]" \
            "[--seed S] [--score-shape S] [--chase-mib N] [--out DIR]" \
            "[-- BENCHMARK_FLAGS]" >&2
       exit 2 ;;
    esac
done

if [ -z "${MICROBENCH:-}" ]; then
    if [ ! -d "$BUILD_DIR" ]; then
        meson setup "$BUILD_DIR" --buildtype=release -Dwerror=false \
            -Dbench=enabled >/dev/null
    else
        meson setup --reconfigure "$BUILD_DIR" >/dev/null
    fi
    meson compile -C "$BUILD_DIR" microbench >/dev/null
    MICROBENCH=$BUILD_DIR/bench/microbench
fi

OUT=${OUT:-$BUILD_DIR/results}
mkdir -p "$OUT"
CMD=(taskset -c "$BENCH_CPU" "$MICROBENCH" "${ARGS[@]}"
     --benchmark_out="$OUT/microbench.json" --benchmark_out_format=json)
"${CMD[@]}" | tee "$OUT/microbench.txt"
python3 bench/microbench_report.py "$OUT/microbench.json" \
    --cmdline "bench/microbench.sh ${ARGS[*]}" >"$OUT/microbench.md"
echo
cat "$OUT/microbench.md"
