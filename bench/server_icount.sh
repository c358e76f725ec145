#!/usr/bin/env bash
# server_icount.sh - instructions a server spends per pipelined request,
# goblind next to redis-server, each counted by callgrind over the same
# redis-benchmark run (-P 16 -c 50 over a Unix socket, the throughput
# table's configuration): SET, GET, HSET, ZADD (redis-benchmark's own)
# and ZSCORE, ZRANK and ZRANGE 0 15 on a sorted set of 10,000 members
# preloaded in both (-r 10000). Counting starts after the preload (callgrind_control
# -z) and stops when redis-benchmark is done (callgrind_control -d), so a
# figure is the server's whole user-space work (parsing, running,
# replying, its event loop and libc's syscall wrappers; not the kernel's)
# divided by the requests. Deterministic: it does not move with load, as
# the req/s of bench/redis_benchmark.sh do.
#
#   bench/server_icount.sh [--quick] [--requests N] [--out DIR]
#
# --requests per test (default 20,000: the servers run some 50 times
# slower under callgrind). --quick is the smoke run (400 requests, 1,000
# members): it proves the script runs; its figures carry start-up costs. goblind comes from $GOBLIND, else a release
# build in $BUILD_DIR (default build-benchmarks, made on first use).
# Writes DIR/server_icount.md when --out is given and prints the table.
# Needs valgrind. A benchmark: it reports and never fails on a figure.
set -euo pipefail
cd "$(dirname "$0")/.."
REQUESTS=20000
KEYS=10000
OUT=""
BUILD_DIR=${BUILD_DIR:-build-benchmarks}
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) REQUESTS=400; KEYS=1000; shift ;;
    --requests) REQUESTS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "usage: $0 [--quick] [--requests N] [--out DIR]" >&2; exit 2 ;;
    esac
done
if [ -z "${GOBLIND:-}" ]; then
    GOBLIND=$BUILD_DIR/server/goblind
    [ -d "$BUILD_DIR" ] || meson setup "$BUILD_DIR" --buildtype=release \
        -Dwerror=false >/dev/null
    meson compile -C "$BUILD_DIR" goblind >/dev/null
fi

TMP=$(mktemp -d /tmp/goblin-sicount.XXXXXX)
VPID=""
cleanup() {
    [ -n "$VPID" ] && kill "$VPID" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

preload() {
    /usr/bin/python3 - "$KEYS" <<'EOF' | redis-cli "$@" --pipe >/dev/null
import sys
out = sys.stdout.buffer
for i in range(int(sys.argv[1])):
    m = b"member:%012d" % i
    s = b"%d.5" % i
    out.write(b"*4\r\n$4\r\nZADD\r\n$6\r\nmyzset\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n"
              % (len(s), s, len(m), m))
EOF
}

# count NAME TEST... -- SERVER...: instructions per request of one test.
count() {
    local name=$1 sock=$TMP/$1.sock out=$TMP/$1.cg test=() total
    shift
    while [ "$1" != -- ]; do test+=("$1"); shift; done
    shift
    valgrind --tool=callgrind --callgrind-out-file="$out" "$@" \
        --port 0 --unixsocket "$sock" >"$TMP/$name.log" 2>&1 &
    VPID=$!
    for _ in $(seq 300); do
        redis-cli -s "$sock" PING 2>/dev/null | grep -q PONG && break
        sleep 0.2
    done
    preload -s "$sock"
    callgrind_control -z "$VPID" >/dev/null 2>&1
    redis-benchmark -s "$sock" -n "$REQUESTS" -r "$KEYS" -P 16 -c 50 \
        "${test[@]}" >/dev/null 2>&1
    callgrind_control -d "$VPID" >/dev/null 2>&1
    kill "$VPID"
    wait "$VPID" 2>/dev/null || true
    VPID=""
    # The dump after the reset holds the measured part only.
    total=$(awk '/^summary:/ { s = $2 } END { print s }' "$out".1)
    echo $((total / REQUESTS))
}

TESTS=("SET|-t set" "GET|-t get" "HSET|-t hset" "ZADD|-t zadd"
       "ZSCORE|zscore myzset member:__rand_int__"
       "ZRANK|zrank myzset member:__rand_int__"
       "ZRANGE 0 15|zrange myzset 0 15")
{
    echo
    echo "Server instructions per request, redis-benchmark -P 16 -c 50" \
         "-r $KEYS -n $REQUESTS over a Unix socket, under callgrind" \
         "(goblind $("$GOBLIND" --version | awk '{sub(/^v=/, "", $2); print $2}'), redis-server" \
         "$(redis-server --version | awk '{sub(/^v=/, "", $3); print $3}'))"
    echo
    echo "| test | redis-server | goblind | redis/goblind |"
    echo "|---|---:|---:|---:|"
} | tee "$TMP/table.md"
i=0
for t in "${TESTS[@]}"; do
    name=${t%%|*}
    read -r -a args <<<"${t#*|}"
    r=$(count "r$i" "${args[@]}" -- redis-server --save '' --appendonly no)
    g=$(count "g$i" "${args[@]}" -- "$GOBLIND")
    ratio=$(awk -v r="$r" -v g="$g" 'BEGIN { printf "%.2f", r / g }')
    echo "| $name | $r | $g | $ratio |" | tee -a "$TMP/table.md"
    i=$((i + 1))
done
if [ -n "$OUT" ]; then
    mkdir -p "$OUT"
    cp "$TMP/table.md" "$OUT/server_icount.md"
fi
