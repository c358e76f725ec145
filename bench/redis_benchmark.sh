#!/usr/bin/env bash
# redis_benchmark.sh - requests per second of goblind and redis-server,
# measured in the same run with the same redis-benchmark flags, and their
# ratio, as a Markdown table.
#
#   bench/redis_benchmark.sh [--tcp] [--quick] [--pipelined] [--requests N]
#                            [--keys N] [--out DIR]
#
# Both servers run pinned to one core (SERVER_CPU, default 0) and
# redis-benchmark to another (CLIENT_CPU, default 1). They listen on Unix
# sockets, or on loopback TCP with --tcp. Each test runs with -P 16 -c 50
# (pipelined, many clients) and -P 1 -c 1 (one request in flight: latency
# bound), alternating servers run by run so drift hits both alike; each
# figure is the median of REPEAT (default 3) runs.
#
# Tests: SET, GET, HSET, ZADD (redis-benchmark's own), and on a sorted set
# preloaded with --keys members: ZSCORE, ZRANK and ZRANGE 0 15; on a list
# of LIST_LEN (default 1,000,000) 16-byte elements: LINDEX near its head,
# and LINDEX, LSET and a 10-element LRANGE in its middle.
#
# --quick is a smoke run (2,000 requests, one run each, 1,000 keys).
# --pipelined runs only the -P 16 -c 50 configuration.
# With --out DIR the table also goes to DIR/throughput.md and its rows to
# DIR/throughput.tsv (test, flags, redis req/s, goblind req/s, ratio).
#
# goblind comes from $GOBLIND, else a release build in $BUILD_DIR
# (default build-benchmarks, made on first use). Both servers are started and stopped here; nothing else
# listens on the ports or sockets used. This is a benchmark, not a test:
# it reports and never fails on a ratio.
set -euo pipefail

cd "$(dirname "$0")/.."
TRANSPORT=unix
REQUESTS=${REQUESTS:-200000}
KEYS=${KEYS:-10000}
LIST_LEN=${LIST_LEN:-1000000}
REPEAT=${REPEAT:-3}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
BUILD_DIR=${BUILD_DIR:-build-benchmarks}
OUT=""
while [ $# -gt 0 ]; do
    case "$1" in
    --tcp) TRANSPORT=tcp ;;
    --quick) REQUESTS=2000; KEYS=1000; LIST_LEN=100000; REPEAT=1 ;;
    --pipelined) PIPELINED_ONLY=1 ;;
    --out) OUT=$2; shift ;;
    --requests) REQUESTS=$2; shift ;;
    --keys) KEYS=$2; shift ;;
    -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

if [ -z "${GOBLIND:-}" ]; then
    GOBLIND=$BUILD_DIR/server/goblind
    [ -d "$BUILD_DIR" ] || meson setup "$BUILD_DIR" --buildtype=release \
        -Dwerror=false >/dev/null
    meson compile -C "$BUILD_DIR" goblind >/dev/null
fi

TMP=$(mktemp -d /tmp/goblin-bench.XXXXXX)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

free_port() {
    /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Server addresses as redis-benchmark/redis-cli arguments.
if [ "$TRANSPORT" = tcp ]; then
    RPORT=$(free_port); GPORT=$(free_port)
    REDIS_ADDR=(-h 127.0.0.1 -p "$RPORT")
    GOBLIN_ADDR=(-h 127.0.0.1 -p "$GPORT")
    REDIS_LISTEN=(--port "$RPORT" --bind 127.0.0.1)
    GOBLIN_LISTEN=(--port "$GPORT" --bind 127.0.0.1)
else
    REDIS_ADDR=(-s "$TMP/redis.sock")
    GOBLIN_ADDR=(-s "$TMP/goblind.sock")
    REDIS_LISTEN=(--port 0 --unixsocket "$TMP/redis.sock")
    GOBLIN_LISTEN=(--port 0 --unixsocket "$TMP/goblind.sock")
fi

taskset -c "$SERVER_CPU" redis-server "${REDIS_LISTEN[@]}" --save '' \
    --appendonly no --daemonize no --logfile "$TMP/redis.log" &
PIDS+=($!)
taskset -c "$SERVER_CPU" "$GOBLIND" "${GOBLIN_LISTEN[@]}" \
    --logfile "$TMP/goblind.log" &
PIDS+=($!)

wait_ready() {
    for _ in $(seq 100); do
        redis-cli "$@" PING 2>/dev/null | grep -q PONG && return 0
        sleep 0.1
    done
    echo "server at $* did not start" >&2
    exit 1
}
wait_ready "${REDIS_ADDR[@]}"
wait_ready "${GOBLIN_ADDR[@]}"

# The same sorted set in both: KEYS members "member:000000000000"...,
# the names redis-benchmark's __rand_int__ produces with -r KEYS.
preload() {
    /usr/bin/python3 - "$KEYS" <<'EOF' | redis-cli "$@" --pipe >/dev/null
import sys
n = int(sys.argv[1])
out = sys.stdout.buffer
for i in range(n):
    m = b"member:%012d" % i
    s = b"%d.5" % i
    out.write(b"*4\r\n$4\r\nZADD\r\n$6\r\nmyzset\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n"
              % (len(s), s, len(m), m))
EOF
}
preload "${REDIS_ADDR[@]}"
preload "${GOBLIN_ADDR[@]}"

# The same long list in both: LIST_LEN 16-byte elements, RPUSH 128 a call,
# for reads and writes in its middle (Redis walks its quicklist node by
# node from the nearer end; Goblin's block index finds the block at once).
preload_list() {
    /usr/bin/python3 - "$LIST_LEN" <<'EOF' | redis-cli "$@" --pipe >/dev/null
import sys
n = int(sys.argv[1])
out = sys.stdout.buffer
for i in range(0, n, 128):
    args = [b"RPUSH", b"mylist"] + [b"element:%08d" % j
                                    for j in range(i, min(i + 128, n))]
    out.write(b"*%d\r\n" % len(args) + b"".join(
        b"$%d\r\n%s\r\n" % (len(a), a) for a in args))
EOF
}
preload_list "${REDIS_ADDR[@]}"
preload_list "${GOBLIN_ADDR[@]}"
MID=$((LIST_LEN / 2))

# rps NAME FLAGS... : requests per second of one redis-benchmark run.
rps() {
    taskset -c "$CLIENT_CPU" redis-benchmark --csv "$@" 2>/dev/null |
        awk -F'","' 'NR == 2 { print $2 }'
}

# A rate as a whole number with thousands separators, or "error".
whole() {
    [ -n "$1" ] || { echo error; return; }
    awk -v x="$1" 'BEGIN { s = sprintf("%.0f", x); o = ""
        while (length(s) > 3) {
            o = "," substr(s, length(s) - 2) o; s = substr(s, 1, length(s) - 3)
        }
        print s o }'
}

median() {
    printf "%s\n" "$@" | sort -g |
        awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

TESTS=("SET|-t set" "GET|-t get" "HSET|-t hset" "ZADD|-t zadd"
       "ZSCORE|zscore myzset member:__rand_int__"
       "ZRANK|zrank myzset member:__rand_int__"
       "ZRANGE 0 15|zrange myzset 0 15"
       "LINDEX head|lindex mylist 10"
       "LINDEX middle|lindex mylist $MID"
       "LSET middle|lset mylist $MID element:xxxxxxxx"
       "LRANGE middle 10|lrange mylist $MID $((MID + 9))")
CONFIGS=("-P 16 -c 50" "-P 1 -c 1")
[ -n "${PIPELINED_ONLY:-}" ] && CONFIGS=("-P 16 -c 50")

{
echo
echo "goblind $("$GOBLIND" --version | awk "{print \$2}") vs redis-server $(redis-server \
    --version | awk '{print $3}'), $TRANSPORT sockets, servers on CPU" \
    "$SERVER_CPU, redis-benchmark on CPU $CLIENT_CPU, $REQUESTS requests," \
    "-r $KEYS, median of $REPEAT"
echo
echo "| test | flags | redis-server req/s | goblind req/s | goblind/redis |"
echo "|---|---|---:|---:|---:|"
} | tee "$TMP/throughput.md"
: >"$TMP/throughput.tsv"
for cfg in "${CONFIGS[@]}"; do
    # One request in flight is slow: fewer requests keep the run short.
    n=$REQUESTS
    [ "$cfg" = "-P 1 -c 1" ] && n=$((REQUESTS / 4))
    for t in "${TESTS[@]}"; do
        name=${t%%|*}
        read -r -a args <<<"${t#*|}"
        rs=() gs=()
        for _ in $(seq "$REPEAT"); do
            # shellcheck disable=SC2086
            rs+=("$(rps "${REDIS_ADDR[@]}" -n "$n" -r "$KEYS" $cfg \
                "${args[@]}")")
            # shellcheck disable=SC2086
            gs+=("$(rps "${GOBLIN_ADDR[@]}" -n "$n" -r "$KEYS" $cfg \
                "${args[@]}")")
        done
        r=$(median "${rs[@]}")
        g=$(median "${gs[@]}")
        ratio=$(awk -v g="${g:-0}" -v r="${r:-0}" \
            'BEGIN { if (r > 0) printf "%.2f", g / r; else print "-" }')
        printf "| %s | %s | %s | %s | %s |\n" "$name" "$cfg" \
            "$(whole "${r:-}")" "$(whole "${g:-}")" "$ratio" |
            tee -a "$TMP/throughput.md"
        printf "%s\t%s\t%s\t%s\t%s\n" "$name" "$cfg" "${r:-error}" \
            "${g:-error}" "$ratio" >>"$TMP/throughput.tsv"
    done
done
if [ -n "$OUT" ]; then
    mkdir -p "$OUT"
    cp "$TMP/throughput.md" "$TMP/throughput.tsv" "$OUT/"
fi
