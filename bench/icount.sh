#!/usr/bin/env bash
# icount.sh - instructions per request/reply, client and server together,
# counted by callgrind: over a ring (SBE and RESP, one thread stepping the
# ring endpoint), on an in-process session (SBE and RESP) and per C API
# call, for PING, SET, GET, HSET, HGET, ZADD, ZSCORE, ZRANK, a 10-member
# ZRANGE, GET5 (a 5-byte key), and EVALSHA and FCALL of a script of three
# commands when libgoblin-script is built. See bench/icount.c for the method.
# Writes DIR/icount.csv (row,op,instructions) and DIR/icount.md (the
# table) and prints the table.
#
#   bench/icount.sh [--quick] [--iters N] [--warmup N] [--rows LIST]
#                   [--ops LIST] [--out DIR]
#
# --iters round trips are counted per row and op (default 2000) after
# --warmup (default 200); --quick is the smoke run (20 after 5: the
# figures are still per round trip but carry first-call costs). The
# program comes from $ICOUNT, else $BUILD_DIR (default build-benchmarks,
# a release build made on first use). --out defaults to $BUILD_DIR/results.
# Needs valgrind. A benchmark: it reports and never fails on a figure.
set -euo pipefail

cd "$(dirname "$0")/.."
OUT=""
ITERS=2000
WARMUP=200
ARGS=()
BUILD_DIR=${BUILD_DIR:-build-benchmarks}

while [ $# -gt 0 ]; do
    case "$1" in
    --quick) ITERS=20; WARMUP=5; shift ;;
    --iters) ITERS=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --rows|--ops) ARGS+=("$1" "$2"); shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    *) echo "usage: $0 [--quick] [--iters N] [--warmup N] [--rows LIST]" \
            "[--ops LIST] [--out DIR]" >&2
       exit 2 ;;
    esac
done

if ! command -v valgrind >/dev/null; then
    echo "icount: valgrind not installed (Debian: valgrind)" >&2
    exit 1
fi
if [ -z "${ICOUNT:-}" ]; then
    if [ ! -d "$BUILD_DIR" ]; then
        meson setup "$BUILD_DIR" --buildtype=release -Dwerror=false \
            >/dev/null
    fi
    meson compile -C "$BUILD_DIR" icount >/dev/null
    ICOUNT=$BUILD_DIR/bench/icount
fi

OUT=${OUT:-$BUILD_DIR/results}
mkdir -p "$OUT"
DUMPS=$(mktemp -d)
trap 'rm -rf "$DUMPS"' EXIT
valgrind --tool=callgrind --collect-atstart=no \
    --callgrind-out-file="$DUMPS/cg.out" \
    "$ICOUNT" --iters "$ITERS" --warmup "$WARMUP" "${ARGS[@]}" \
    >"$DUMPS/stdout" 2>"$DUMPS/stderr" || {
    cat "$DUMPS/stderr" >&2
    echo "icount: the program failed under callgrind" >&2
    exit 1
}
python3 bench/icount_report.py "$DUMPS" --csv "$OUT/icount.csv" \
    --cmdline "bench/icount.sh --iters $ITERS --warmup $WARMUP ${ARGS[*]}" \
    >"$OUT/icount.md"
cat "$OUT/icount.md"
