#!/usr/bin/env bash
# shootout.sh - unpipelined round-trip latency of goblind and redis-server
# on every transport and protocol they share, with one client and one
# timer (bench/shootout), next to the raw cache-line round trip between
# the same two CPUs and the in-process call. Writes DIR/shootout.csv,
# DIR/shootout.md (tables with ratios), DIR/shootout_cdf.csv (every row's
# latency distribution: percentiles 0-100 in 0.1 steps plus the far tail)
# and, when gnuplot is installed (Debian: gnuplot-nox), one latency CDF
# per op with a line per row in DIR/plots/cdf-OP.svg.
#
#   bench/shootout.sh [--quick] [--window-ms N] [--warmup-ms N]
#                     [--ops LIST] [--no-plots] [--out DIR]
#
# --quick is a smoke run (20 ms windows, 5 ms warm-ups): it proves every
# row starts and prints; its figures mean little.
#
# Servers run on SERVER_CPU (default 0), the client on CLIENT_CPU
# (default 1); the cache-line echo thread runs on SERVER_CPU. redis-server
# (Debian's) gets the parity configuration: no RDB, no AOF, io-threads 1,
# activedefrag no, maxmemory 0 noeviction, listpack limits 128 entries /
# 64 bytes. goblind runs with its defaults. Each server is started here on
# temporary sockets and stopped afterwards. Programs come from $GOBLIND and
# $SHOOTOUT, else $BUILD_DIR (default build-benchmarks, a release build
# made on first use). This is a benchmark: it reports and never judges.
#
# The ring rows use a goblind of their own per op (--ring-idle spin, its
# ring thread on SERVER_CPU); the client busy-polls too. The rows a ratio
# compares are measured op by op, interleaved, each op in a rotated order:
# the cache-line floor and the two ring rows, then the six socket rows
# (goblind and redis-server up at once), so the VM's drift over a run
# does not land on one row. Each op's ring rows are judged against the
# floor measured beside them (bench/shootout_floor.py), the report's
# headline floor is the median of every run of it.
set -euo pipefail

cd "$(dirname "$0")/.."
WINDOW_MS=2000
WARMUP_MS=300
OPS=PING,SET,GET,HSET,HGET,ZADD,ZSCORE,HSET10,ZADD10,EVALSHA,FCALL
OUT=""
PLOTS=1
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
BUILD_DIR=${BUILD_DIR:-build-benchmarks}

while [ $# -gt 0 ]; do
    case "$1" in
    --quick) WINDOW_MS=20; WARMUP_MS=5; shift ;;
    --no-plots) PLOTS=0; shift ;;
    --window-ms) WINDOW_MS=$2; shift 2 ;;
    --warmup-ms) WARMUP_MS=$2; shift 2 ;;
    --ops) OPS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    *) echo "usage: $0 [--quick] [--window-ms N] [--warmup-ms N]" \
            "[--ops LIST] [--no-plots] [--out DIR]" >&2
       exit 2 ;;
    esac
done
OUT=${OUT:-$BUILD_DIR/results}

if [ -z "${GOBLIND:-}" ] || [ -z "${SHOOTOUT:-}" ]; then
    if [ ! -d "$BUILD_DIR" ]; then
        meson setup "$BUILD_DIR" --buildtype=release -Dwerror=false \
            >/dev/null
    else
        meson setup --reconfigure "$BUILD_DIR" >/dev/null
    fi
    meson compile -C "$BUILD_DIR" goblind shootout >/dev/null
    GOBLIND=${GOBLIND:-$BUILD_DIR/server/goblind}
    SHOOTOUT=${SHOOTOUT:-$BUILD_DIR/bench/shootout}
fi

TMP=$(mktemp -d /tmp/goblin-shootout.XXXXXX)
SERVER_PID=""
GOBLIND_PID=""
cleanup() {
    if [ -n "$GOBLIND_PID" ]; then
        kill "$GOBLIND_PID" 2>/dev/null || true
        wait "$GOBLIND_PID" 2>/dev/null || true
    fi
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT

free_port() {
    python3 -c 'import socket; s = socket.socket()
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_for() {
    for _ in $(seq 200); do
        redis-cli -s "$1" PING >/dev/null 2>&1 && return 0
        sleep 0.05
    done
    echo "server on $1 did not start" >&2
    exit 1
}

stop_server() {
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
}

CSV=$TMP/shootout.csv
run() {
    taskset -c "$CLIENT_CPU" "$SHOOTOUT" --cpu "$CLIENT_CPU" \
        --peer-cpu "$SERVER_CPU" --window-ms "$WINDOW_MS" \
        --warmup-ms "$WARMUP_MS" --ops "$OPS" --cdf "$TMP/cdf.csv" \
        "$@" >>"$CSV" \
        2>>"$TMP/stderr.log" || echo "shootout $* failed" >&2
}

echo "system,transport,protocol,op,p50_ns,p90_ns,p99_ns,p999_ns,min_ns,\
mean_ns,samples" >"$CSV"
cp "$CSV" "$TMP/floors.csv"

# The cache-line floor again, into floors.csv (shootout_floor.py makes
# it each op's floor row).
floor_run() {
    taskset -c "$CLIENT_CPU" "$SHOOTOUT" --target cacheline \
        --cpu "$CLIENT_CPU" --peer-cpu "$SERVER_CPU" \
        --window-ms "$WINDOW_MS" --warmup-ms "$WARMUP_MS" \
        >>"$TMP/floors.csv" 2>>"$TMP/stderr.log" ||
        echo "shootout --target cacheline failed" >&2
}

# Floors: the timer, the cache line between the two CPUs, in-process.
run --target cacheline
run --target capi
run --target session --protocol resp
run --target session --protocol sbe

# Rows compared with each other are measured op by op, interleaved, with
# the order rotated from one op to the next: this VM drifts over a run
# (vCPU placement, neighbours), and rows run one after the other would
# carry the drift into their ratios.
IFS=, read -r -a OP_LIST <<<"$OPS"

# rotated K ROW...: prints the rows, the first K moved to the end.
rotated() {
    local k=$1
    shift
    local rows=("$@") n=$#
    for ((j = 0; j < n; j++)); do
        echo "${rows[$(((j + k) % n))]}"
    done
}

# goblind over a ring: its ring thread busy-polls on SERVER_CPU, and so
# does the client on CLIENT_CPU. A server per op, each run attaching anew
# in its own protocol; before it starts, the cache-line floor again (its
# echo thread needs SERVER_CPU to itself), so each op's ring rows have a
# floor measured beside them.
RING=/dev/shm/goblin-shootout-$$
for i in "${!OP_LIST[@]}"; do
    floor_run
    taskset -c "$SERVER_CPU" "$GOBLIND" --port 0 \
        --unixsocket "$TMP/goblind-ring.sock" --ring "$RING" 1m \
        --ring-cpus "$SERVER_CPU" --ring-idle spin --loglevel warning \
        >"$TMP/goblind-ring.log" 2>&1 &
    SERVER_PID=$!
    wait_for "$TMP/goblind-ring.sock"
    while read -r proto; do
        run --target client --system goblind --transport ring \
            --protocol "$proto" --path "$RING" --ops "${OP_LIST[$i]}"
    done < <(rotated "$i" sbe resp)
    stop_server
    rm -f "$RING" "$TMP/goblind-ring.sock"
done

# goblind and redis-server (the parity configuration) over a Unix socket
# and TCP, both up at once, each pinned to SERVER_CPU; the one not being
# measured waits in epoll and costs nothing.
GPORT=$(free_port)
taskset -c "$SERVER_CPU" "$GOBLIND" --port "$GPORT" --bind 127.0.0.1 \
    --unixsocket "$TMP/goblind.sock" --loglevel warning \
    >"$TMP/goblind.log" 2>&1 &
GOBLIND_PID=$!
RPORT=$(free_port)
while [ "$RPORT" = "$GPORT" ]; do RPORT=$(free_port); done
taskset -c "$SERVER_CPU" redis-server --port "$RPORT" --bind 127.0.0.1 \
    --unixsocket "$TMP/redis.sock" --save '' --appendonly no \
    --io-threads 1 --activedefrag no --maxmemory 0 \
    --maxmemory-policy noeviction --zset-max-listpack-entries 128 \
    --zset-max-listpack-value 64 --hash-max-listpack-entries 128 \
    --hash-max-listpack-value 64 --dir "$TMP" --daemonize no \
    --logfile "$TMP/redis.log" &
SERVER_PID=$!
wait_for "$TMP/goblind.sock"
wait_for "$TMP/redis.sock"
REDIS_VERSION=$(redis-cli -s "$TMP/redis.sock" INFO server |
    awk -F: '/^redis_version:/ { sub(/\r/, "", $2); print $2 }')
SOCKET_ROWS=(
    "goblind uds resp --path $TMP/goblind.sock"
    "goblind uds sbe --path $TMP/goblind.sock"
    "goblind tcp resp --host 127.0.0.1 --port $GPORT"
    "goblind tcp sbe --host 127.0.0.1 --port $GPORT"
    "redis-server uds resp --path $TMP/redis.sock"
    "redis-server tcp resp --host 127.0.0.1 --port $RPORT"
)
for i in "${!OP_LIST[@]}"; do
    while read -r system transport proto where; do
        # shellcheck disable=SC2086 # where is several words
        run --target client --system "$system" --transport "$transport" \
            --protocol "$proto" $where --ops "${OP_LIST[$i]}"
    done < <(rotated "$i" "${SOCKET_ROWS[@]}")
done
stop_server
kill "$GOBLIND_PID" 2>/dev/null || true
wait "$GOBLIND_PID" 2>/dev/null || true

python3 bench/shootout_floor.py "$CSV" "$TMP/floors.csv" "$OPS"
mkdir -p "$OUT"
cp "$CSV" "$OUT/shootout.csv"
[ -f "$TMP/cdf.csv" ] && cp "$TMP/cdf.csv" "$OUT/shootout_cdf.csv"
PLOT_ARGS=()
if [ "$PLOTS" = 1 ] && [ -f "$OUT/shootout_cdf.csv" ]; then
    # Draws nothing, with a message, when gnuplot is missing.
    python3 bench/shootout_plot.py "$OUT/shootout_cdf.csv" "$OUT/plots" >&2
    [ -d "$OUT/plots" ] && PLOT_ARGS=(--plots plots)
fi
python3 bench/shootout_report.py "$OUT/shootout.csv" "${PLOT_ARGS[@]}" \
    --redis-version "$REDIS_VERSION" --window-ms "$WINDOW_MS" \
    --timer "$(head -1 "$TMP/stderr.log")" \
    --cpus "server $SERVER_CPU, client $CLIENT_CPU" >"$OUT/shootout.md"
if grep -v '^shootout: timer' "$TMP/stderr.log" >&2; then :; fi
cat "$OUT/shootout.md"
