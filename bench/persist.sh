#!/usr/bin/env bash
# persist.sh - snapshot save and load of Goblin against redis-server's
# SAVE and restart load, on the same data in the same run, as a Markdown
# table with ratios.
#
#   bench/persist.sh [--n N] [--seed S] [--reps R] [--cases "zset hash"]
#                    [--dir DIR]
#
# Cases (bench/persist_bench.c has the details): one sorted set of N
# members with random scores, one hash of N fields.
#
# Goblin: persist_bench builds the case through the C API, then times
# goblin_snapshot_save (temp file, fsync, rename, fsync of the directory)
# and goblin_snapshot_load into a fresh store, best of R.
#
# Redis: a fresh redis-server (Debian's) on a Unix socket in DIR is
# loaded with `redis-cli --pipe` from the RESP that `persist_bench --resp`
# writes for exactly the same data. SAVE is timed around the command
# (best of R; redis-server fsyncs and renames too); the load is a restart
# on the saved file, timed by redis-server itself ("DB loaded from disk:
# X seconds" in its log), best of R. Both write to DIR (default a
# temporary directory under /tmp), so both pay the same disk.
#
# A second table compares the servers over the wire: goblind (from
# $GOBLIND, else $BUILD_DIR/server/goblind) gets the same RESP through
# `redis-cli --pipe`; its SAVE command is timed around the command like
# redis-server's, and its restart load is what it logs ("DB loaded from
# disk: X seconds"), best of R each. --no-wire leaves that table out.
#
# persist_bench comes from $PERSIST_BENCH, else $BUILD_DIR (default
# build-benchmarks, a release build made on first use). This is a
# benchmark: it reports and never fails on a figure.
set -euo pipefail

cd "$(dirname "$0")/.."
N=1000000
SEED=12345
REPS=3
CASES="zset hash"
DIR=""
WIRE=1
BUILD_DIR=${BUILD_DIR:-build-benchmarks}

while [ $# -gt 0 ]; do
    case "$1" in
    --n) N=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --cases) CASES=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --no-wire) WIRE=0; shift ;;
    *) echo "usage: $0 [--n N] [--seed S] [--reps R] [--cases LIST]" \
            "[--dir DIR]" >&2
       exit 2 ;;
    esac
done

if [ -z "${PERSIST_BENCH:-}" ]; then
    if [ ! -d "$BUILD_DIR" ]; then
        meson setup "$BUILD_DIR" --buildtype=release -Dwerror=false \
            >/dev/null
    fi
    meson compile -C "$BUILD_DIR" persist_bench >/dev/null
    PERSIST_BENCH=$BUILD_DIR/bench/persist_bench
fi
if [ "$WIRE" = 1 ] && [ -z "${GOBLIND:-}" ]; then
    [ -d "$BUILD_DIR" ] || meson setup "$BUILD_DIR" --buildtype=release \
        -Dwerror=false >/dev/null
    meson compile -C "$BUILD_DIR" goblind >/dev/null
    GOBLIND=$BUILD_DIR/server/goblind
fi
command -v redis-server >/dev/null || { echo "no redis-server" >&2; exit 1; }

if [ -z "$DIR" ]; then
    DIR=$(mktemp -d /tmp/goblin-persist.XXXXXX)
    trap 'rm -rf "$DIR"' EXIT
fi
SOCK=$DIR/redis.sock
LOG=$DIR/redis.log

now_ms() { date +%s%N | awk '{ printf "%.1f", $1 / 1e6 }'; }

start_redis() { # $1: dbfilename
    rm -f "$SOCK"
    : > "$LOG"
    redis-server --port 0 --unixsocket "$SOCK" --dir "$DIR" \
        --dbfilename "$1" --save '' --appendonly no --logfile "$LOG" \
        --daemonize no &
    REDIS_PID=$!
    for _ in $(seq 1 600); do
        if [ -S "$SOCK" ] && redis-cli -s "$SOCK" ping 2>/dev/null |
                grep -q PONG; then
            return 0
        fi
        sleep 0.1
    done
    echo "redis-server did not start" >&2
    exit 1
}

stop_redis() {
    redis-cli -s "$SOCK" shutdown nosave >/dev/null 2>&1 || true
    wait "$REDIS_PID" 2>/dev/null || true
}

best() { sort -g | head -1; }

GSOCK=$DIR/goblind.sock
GLOG=$DIR/goblind.log

start_goblind() { # $1: dbfilename
    rm -f "$GSOCK"
    : > "$GLOG"
    "$GOBLIND" --port 0 --unixsocket "$GSOCK" --dir "$DIR" \
        --dbfilename "$1" --logfile "$GLOG" &
    GOBLIND_PID=$!
    for _ in $(seq 1 600); do
        if [ -S "$GSOCK" ] && redis-cli -s "$GSOCK" ping 2>/dev/null |
                grep -q PONG; then
            return 0
        fi
        sleep 0.1
    done
    echo "goblind did not start" >&2
    exit 1
}

stop_goblind() {
    redis-cli -s "$GSOCK" shutdown nosave >/dev/null 2>&1 || true
    wait "$GOBLIND_PID" 2>/dev/null || true
}

# Prints "save_ms load_ms file_bytes" for goblind on case $1.
goblind_case() {
    local c=$1 saves="" loads="" t0 t1
    start_goblind "$c.goblin"
    "$PERSIST_BENCH" --case "$c" --n "$N" --seed "$SEED" --resp |
        redis-cli -s "$GSOCK" --pipe >/dev/null
    for _ in $(seq 1 "$REPS"); do
        t0=$(now_ms)
        redis-cli -s "$GSOCK" save >/dev/null
        t1=$(now_ms)
        saves+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"$'\n'
    done
    stop_goblind
    for _ in $(seq 1 "$REPS"); do
        start_goblind "$c.goblin"
        loads+="$(sed -n 's/.*DB loaded from disk: \([0-9.]*\) seconds.*/\1/p' \
            "$GLOG" | awk '{ print $1 * 1000 }')"$'\n'
        stop_goblind
    done
    echo "$(printf '%s' "$saves" | best) $(printf '%s' "$loads" | best)" \
        "$(stat -c %s "$DIR/$c.goblin")"
    rm -f "$DIR/$c.goblin"
}

# Prints "save_ms load_ms file_bytes" for redis-server on case $1.
redis_case() {
    local c=$1 saves="" loads="" t0 t1
    start_redis "$c.rdb"
    "$PERSIST_BENCH" --case "$c" --n "$N" --seed "$SEED" --resp |
        redis-cli -s "$SOCK" --pipe >/dev/null
    for _ in $(seq 1 "$REPS"); do
        t0=$(now_ms)
        redis-cli -s "$SOCK" save >/dev/null
        t1=$(now_ms)
        saves+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"$'\n'
    done
    stop_redis
    for _ in $(seq 1 "$REPS"); do
        start_redis "$c.rdb"
        loads+="$(sed -n 's/.*DB loaded from disk: \([0-9.]*\) seconds.*/\1/p' \
            "$LOG" | awk '{ print $1 * 1000 }')"$'\n'
        stop_redis
    done
    echo "$(printf '%s' "$saves" | best) $(printf '%s' "$loads" | best)" \
        "$(stat -c %s "$DIR/$c.rdb")"
    rm -f "$DIR/$c.rdb"
}

declare -A RSAVE RLOAD RBYTES
echo "| case | elements | Goblin file | Redis file | Goblin SAVE ms |" \
     "Redis SAVE ms | SAVE speed-up | Goblin load ms | Redis load ms |" \
     "load speed-up |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for c in $CASES; do
    read -r _ n gbytes gsave gload < <("$PERSIST_BENCH" --case "$c" \
        --n "$N" --seed "$SEED" --dir "$DIR" --reps "$REPS")
    read -r rsave rload rbytes < <(redis_case "$c")
    RSAVE[$c]=$rsave RLOAD[$c]=$rload RBYTES[$c]=$rbytes
    awk -v c="$c" -v n="$n" -v gb="$gbytes" -v rb="$rbytes" \
        -v gs="$gsave" -v rs="$rsave" -v gl="$gload" -v rl="$rload" \
        'BEGIN { printf "| %s | %d | %d | %d | %.1f | %.1f | %.2fx | %.1f |" \
                        " %.1f | %.2fx |\n", c, n, gb, rb, gs, rs, rs / gs,
                        gl, rl, rl / gl }'
done

[ "$WIRE" = 1 ] || exit 0
echo
echo "Over the wire (goblind's SAVE command and restart load):"
echo
echo "| case | goblind file | goblind SAVE ms | Redis SAVE ms |" \
     "SAVE speed-up | goblind load ms | Redis load ms | load speed-up |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for c in $CASES; do
    read -r gsave gload gbytes < <(goblind_case "$c")
    awk -v c="$c" -v gb="$gbytes" -v gs="$gsave" -v rs="${RSAVE[$c]}" \
        -v gl="$gload" -v rl="${RLOAD[$c]}" \
        'BEGIN { printf "| %s | %d | %.1f | %.1f | %.2fx | %.1f | %.1f |" \
                        " %.2fx |\n", c, gb, gs, rs, rs / gs, gl, rl,
                        rl / gl }'
done
