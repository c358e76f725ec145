#!/usr/bin/env bash
# script_bench.sh - requests per second of EVALSHA and FCALL on goblind
# and redis-server: one script of three commands (GET, INCR and EXPIRE on
# one key, the script bench/ops.h times over the ring), loaded with
# SCRIPT LOAD and, as function bench3 of library "bench", with FUNCTION
# LOAD, then run by redis-benchmark's arbitrary-command form on random
# keys. Writes a Markdown table and its rows.
#
#   bench/script_bench.sh [--quick] [--requests N] [--keys N]
#                         [--transports unix,tcp] [--out DIR]
#
# For each transport (Unix socket, loopback TCP) both servers run pinned
# to SERVER_CPU (default 0) and redis-benchmark to CLIENT_CPU (default 1).
# Each test runs with -P 16 -c 50 (pipelined) and -P 1 -c 1 (one request
# in flight), the two servers alternating run by run so drift hits both
# alike; each figure is the median of REPEAT (default 3) runs. --requests
# (default 200,000; a quarter of it at depth one), --keys the key range
# (-r, default 10,000). --quick is a smoke run (2,000 requests, one run).
# With --out DIR the table goes to DIR/scripting.md and its rows to
# DIR/scripting.tsv (transport, test, flags, redis req/s, goblind req/s,
# ratio).
#
# goblind comes from $GOBLIND, else a release build in $BUILD_DIR
# (default build-benchmarks, made on first use). A benchmark: it reports
# and never fails on a ratio.
set -euo pipefail

cd "$(dirname "$0")/.."
REQUESTS=${REQUESTS:-200000}
KEYS=${KEYS:-10000}
REPEAT=${REPEAT:-3}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
BUILD_DIR=${BUILD_DIR:-build-benchmarks}
TRANSPORTS=unix,tcp
OUT=""
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) REQUESTS=2000; KEYS=1000; REPEAT=1 ;;
    --out) OUT=$2; shift ;;
    --requests) REQUESTS=$2; shift ;;
    --keys) KEYS=$2; shift ;;
    --transports) TRANSPORTS=$2; shift ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
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

# The script of bench/ops.h, word for word.
SCRIPT="redis.call('GET', KEYS[1]) local n = redis.call('INCR', KEYS[1]) \
redis.call('EXPIRE', KEYS[1], 3600) return n"
LIBRARY="#!lua name=bench
redis.register_function('bench3', function(KEYS, ARGV) $SCRIPT end)"

TMP=$(mktemp -d /tmp/goblin-script-bench.XXXXXX)
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

wait_ready() {
    for _ in $(seq 100); do
        redis-cli "$@" PING 2>/dev/null | grep -q PONG && return 0
        sleep 0.1
    done
    echo "server at $* did not start" >&2
    exit 1
}

# rps ADDR... ARGS...: requests per second of one redis-benchmark run.
rps() {
    taskset -c "$CLIENT_CPU" redis-benchmark --csv "$@" 2>/dev/null |
        awk -F'","' 'NR == 2 { print $2 }'
}

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

{
echo
echo "goblind $("$GOBLIND" --version | awk '{print $2}') vs redis-server" \
    "$(redis-server --version | awk '{print $3}'): EVALSHA and FCALL of" \
    "GET, INCR and EXPIRE on one key (-r $KEYS), servers on CPU" \
    "$SERVER_CPU, redis-benchmark on CPU $CLIENT_CPU, $REQUESTS requests" \
    "pipelined and $((REQUESTS / 4)) at depth one, median of $REPEAT," \
    "servers alternated; load average at start" \
    "$(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| transport | test | flags | redis-server req/s | goblind req/s |" \
    "goblind/redis |"
echo "|---|---|---|---:|---:|---:|"
} | tee "$TMP/scripting.md"
: >"$TMP/scripting.tsv"

for transport in ${TRANSPORTS//,/ }; do
    if [ "$transport" = tcp ]; then
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
    RPID=$!
    taskset -c "$SERVER_CPU" "$GOBLIND" "${GOBLIN_LISTEN[@]}" \
        --logfile "$TMP/goblind.log" &
    GPID=$!
    PIDS=("$RPID" "$GPID")
    wait_ready "${REDIS_ADDR[@]}"
    wait_ready "${GOBLIN_ADDR[@]}"
    SHA=""
    for addr in REDIS_ADDR GOBLIN_ADDR; do
        declare -n a=$addr
        sha=$(redis-cli "${a[@]}" SCRIPT LOAD "$SCRIPT")
        redis-cli "${a[@]}" FUNCTION LOAD REPLACE "$LIBRARY" >/dev/null
        [ -z "$SHA" ] || [ "$SHA" = "$sha" ] ||
            { echo "the two servers disagree on the SHA-1" >&2; exit 1; }
        SHA=$sha
        unset -n a
    done
    TESTS=("EVALSHA|evalsha $SHA 1 key:__rand_int__"
           "FCALL|fcall bench3 1 key:__rand_int__")
    for cfg in "-P 16 -c 50" "-P 1 -c 1"; do
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
            printf "| %s | %s | %s | %s | %s | %s |\n" "$transport" "$name" \
                "$cfg" "$(whole "${r:-}")" "$(whole "${g:-}")" "$ratio" |
                tee -a "$TMP/scripting.md"
            printf "%s\t%s\t%s\t%s\t%s\t%s\n" "$transport" "$name" "$cfg" \
                "${r:-error}" "${g:-error}" "$ratio" >>"$TMP/scripting.tsv"
        done
    done
    # The script really ran: its counters are there on both.
    for addr in REDIS_ADDR GOBLIN_ADDR; do
        declare -n a=$addr
        [ "$(redis-cli "${a[@]}" DBSIZE)" -gt 0 ] ||
            { echo "no keys after the runs on ${a[*]}" >&2; exit 1; }
        unset -n a
    done
    kill "$RPID" "$GPID" 2>/dev/null || true
    wait "$RPID" "$GPID" 2>/dev/null || true
    PIDS=()
done
echo "load average at end $(cut -d' ' -f1-3 /proc/loadavg)" |
    tee -a "$TMP/scripting.md"
if [ -n "$OUT" ]; then
    mkdir -p "$OUT"
    cp "$TMP/scripting.md" "$TMP/scripting.tsv" "$OUT/"
fi
