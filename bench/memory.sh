#!/usr/bin/env bash
# memory.sh - bytes per element of Goblin and of redis-server on the same
# data, as a Markdown table.
#
#   bench/memory.sh [--quick] [--n N] [--seed S]
#                   [--cases "zset_int hash ..."] [--out DIR]
#
# --quick is a smoke run (n = 20,000, short settling pauses): per-element
# figures at that size mostly show fixed costs.
#
# Goblin: bench/mem_bytes builds each case through the C API in a fresh
# process and reports the goblin_store_used_memory delta and the VmRSS
# delta (after malloc_trim). Redis: for each case a fresh redis-server
# (Debian's, on its own allocator) is started on a temporary Unix socket
# with persistence off, loaded with `redis-cli --pipe` from the RESP that
# `mem_bytes --resp` writes for exactly the same op sequence, and its
# INFO used_memory delta and /proc/PID/status VmRSS delta are read.
# Both measurements are deltas over the empty process, so neither side's
# code or start-up heap is counted.
#
# Goblin and redis-server run on SERVER_CPU (default 1); the RESP
# generator and redis-cli on CLIENT_CPU (default 0). mem_bytes comes from
# $MEM_BYTES, else $BUILD_DIR (default build-benchmarks, a release build
# made on first use). With --out DIR the table goes to DIR/memory.md and
# the raw rows to DIR/memory.tsv as well. This is a benchmark: it reports
# and never fails on a figure.
set -euo pipefail

cd "$(dirname "$0")/.."
N=1000000
SEED=12345
CASES="zset_int zset_u32 hash zset_small hash_small string list list_small set set_int set_small"
OUT=""
SERVER_CPU=${SERVER_CPU:-1}
CLIENT_CPU=${CLIENT_CPU:-0}
BUILD_DIR=${BUILD_DIR:-build-benchmarks}
SETTLE=1 # seconds redis-server gets after a load, before it is measured

while [ $# -gt 0 ]; do
    case "$1" in
    --quick) N=20000; SETTLE=0.1; shift ;;
    --n) N=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --cases) CASES=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    *) echo "usage: $0 [--quick] [--n N] [--seed S] [--cases LIST]" \
            "[--out DIR]" >&2
       exit 2 ;;
    esac
done

build() {
    if [ ! -d "$BUILD_DIR" ]; then
        meson setup "$BUILD_DIR" --buildtype=release -Dwerror=false \
            >/dev/null
    else
        meson setup --reconfigure "$BUILD_DIR" >/dev/null
    fi
    meson compile -C "$BUILD_DIR" mem_bytes >/dev/null
}

if [ -z "${MEM_BYTES:-}" ]; then
    build
    MEM_BYTES=$BUILD_DIR/bench/mem_bytes
fi
command -v redis-server >/dev/null || { echo "no redis-server" >&2; exit 1; }

TMP=$(mktemp -d /tmp/goblin-memory.XXXXXX)
REDIS_PID=""
cleanup() {
    if [ -n "$REDIS_PID" ]; then
        kill "$REDIS_PID" 2>/dev/null || true
        wait "$REDIS_PID" 2>/dev/null || true
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT

rss_of() { awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$1/status"; }
used_of() {
    redis-cli -s "$TMP/redis.sock" INFO memory |
        awk -F: '/^used_memory:/ { sub(/\r/, "", $2); print $2 }'
}

start_redis() {
    taskset -c "$SERVER_CPU" redis-server --port 0 \
        --unixsocket "$TMP/redis.sock" --save '' --appendonly no \
        --dir "$TMP" --daemonize no --io-threads 1 --activedefrag no \
        --maxmemory 0 --logfile "$TMP/redis.log" &
    REDIS_PID=$!
    for _ in $(seq 100); do
        redis-cli -s "$TMP/redis.sock" PING >/dev/null 2>&1 && return 0
        sleep 0.05
    done
    echo "redis-server did not start" >&2
    exit 1
}

stop_redis() {
    redis-cli -s "$TMP/redis.sock" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
    wait "$REDIS_PID" 2>/dev/null || true
    REDIS_PID=""
}

# One case into a fresh redis-server: prints "case used_delta rss_delta".
redis_case() {
    local c=$1 used0 rss0 used1 rss1
    start_redis
    sleep 0.2
    used0=$(used_of); rss0=$(rss_of "$REDIS_PID")
    "$MEM_BYTES" --resp --case "$c" --n "$N" --seed "$SEED" |
        taskset -c "$CLIENT_CPU" redis-cli -s "$TMP/redis.sock" --pipe \
        >"$TMP/pipe.log"
    if ! grep -q 'errors: 0' "$TMP/pipe.log"; then
        echo "redis-cli --pipe reported errors" >&2
        cat "$TMP/pipe.log" >&2
    fi
    sleep "$SETTLE"
    used1=$(used_of); rss1=$(rss_of "$REDIS_PID")
    echo "$c $((used1 - used0)) $((rss1 - rss0))"
    stop_redis
}

ALLOC=$(redis-server --version | tr '\n' ' ')
taskset -c "$SERVER_CPU" "$MEM_BYTES" --n "$N" --seed "$SEED" \
    >"$TMP/goblin.tsv"
: >"$TMP/redis.txt"
for c in $CASES; do
    redis_case "$c" >>"$TMP/redis.txt"
done

# The table: per element (member, field or key), both measures, and the
# goblin/redis ratios. A target is met only if both measures meet it.
table() {
    awk -v cases="$CASES" '
    BEGIN {
        n = split(cases, order, " ")
        desc["zset_int"] = "(a) 1 zset, integer scores"
        desc["zset_u32"] = "(a) 1 zset, random u32 scores"
        desc["hash"] = "(b) 1 hash, 16 B field + 16 B value"
        desc["zset_small"] = "(c) 10-member zsets"
        desc["hash_small"] = "(d) 10-field hashes"
        desc["string"] = "(e) string keys, 8 B values"
        desc["list"] = "(f) 1 list, 16 B elements, RPUSH 128 a call"
        desc["list_small"] = "(g) 10-element lists, 16 B elements"
        desc["set"] = "(h) 1 set, 16 B members"
        desc["set_int"] = "(i) 1 set of integers"
        desc["set_small"] = "(j) 10-member sets, 16 B members"
        limit["zset_int"] = 45; limit["zset_u32"] = 45; limit["hash"] = 45
        limit["list"] = 18; limit["list_small"] = 28
        limit["set"] = 32; limit["set_int"] = 12; limit["set_small"] = 40
    }
    FNR == NR { if ($1 !~ /^#/) { el[$1] = $2; keys[$1] = $3
                gu[$1] = $6; gr[$1] = $7 }; next }
    { ru[$1] = $2 / el[$1]; rr[$1] = $3 / el[$1] }
    END {
        print "| case | elements | keys | goblin used B/elem" \
              " | goblin RSS B/elem | redis used B/elem | redis RSS B/elem" \
              " | ratio used | ratio RSS | target | |"
        print "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"
        for (i = 1; i <= n; i++) {
            c = order[i]
            if (!(c in gu)) continue
            if (c in limit) {
                t = "<= " limit[c]
                ok = gu[c] <= limit[c] && gr[c] <= limit[c]
            } else {
                t = "< redis"
                ok = gu[c] < ru[c] && gr[c] < rr[c]
            }
            printf "| %s | %d | %d | %.2f | %.2f | %.2f | %.2f" \
                   " | %.2f | %.2f | %s | %s |\n",
                desc[c], el[c], keys[c], gu[c], gr[c], ru[c], rr[c],
                gu[c] / ru[c], gr[c] / rr[c], t, ok ? "met" : "missed"
        }
    }' "$TMP/goblin.tsv" "$TMP/redis.txt"
}

{
    echo "Memory per element, n=$N, seed=$SEED ($(date -u +%Y-%m-%dT%H:%MZ))."
    echo "redis: $ALLOC"
    echo
    table
} >"$TMP/memory.md"
cat "$TMP/memory.md"
if [ -n "$OUT" ]; then
    mkdir -p "$OUT"
    cp "$TMP/memory.md" "$OUT/memory.md"
    { cat "$TMP/goblin.tsv"; echo "# redis: case used_bytes rss_bytes";
      cat "$TMP/redis.txt"; } >"$OUT/memory.tsv"
fi
