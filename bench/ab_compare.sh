#!/usr/bin/env bash
# ab_compare.sh - is build B slower than build A? Two release builds of
# goblind (meson build directories, e.g. of two commits) compared on the
# rows a serving change can slow down, on a shared, noisy machine:
#
#   latency  bench/shootout's rows over a ring (SBE, RESP), a Unix socket
#            and TCP (SBE, RESP), each build's own goblind and client,
#            run interleaved A B B A A B ... for --rounds rounds, server on
#            SERVER_CPU (default 0) and client on CLIENT_CPU (default 1);
#            each row's p50 and p99 is the median over the rounds of one
#            --window-ms window's percentiles (thousands of samples each);
#   throughput  redis-benchmark -P 16 -c 50 over a Unix socket against
#            each build's goblind, interleaved the same way, the median
#            requests per second over the rounds;
#   icount   instructions per request, which load cannot change: over a
#            ring with bench/icount (this tree's harness compiled against
#            each build's libgoblin.a; client and server together), and
#            over a Unix socket with goblind itself under callgrind
#            (server only: the counters are zeroed before and dumped after
#            --icount-requests RESP requests from redis-benchmark -c 1,
#            divided by that number; for SBE, the build's own client runs a
#            short and a long window, and the difference of the counts is
#            divided by the difference of the requests made).
#
#   bench/ab_compare.sh BUILD_A BUILD_B [--rounds N] [--window-ms N]
#                       [--ops LIST] [--requests N] [--icount-requests N]
#                       [--skip latency,throughput,icount] [--out DIR]
#
# Each build directory needs server/goblind, bench/shootout and
# lib/libgoblin.a (a release build: meson setup DIR --buildtype=release).
# Prints one Markdown table per part, with B/A ratios (a ratio above 1 is
# B slower for latency and instructions, faster for throughput); with
# --out DIR also writes DIR/ab_*.csv. A benchmark: it reports and never
# fails on a figure.
set -euo pipefail

cd "$(dirname "$0")/.."
ROUNDS=6
WINDOW_MS=400
OPS=PING,GET,SET,ZSCORE
REQUESTS=200000
ICOUNT_REQUESTS=20000
SKIP=""
OUT=""
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}

usage() {
    echo "usage: $0 BUILD_A BUILD_B [--rounds N] [--window-ms N]" \
         "[--ops LIST] [--requests N] [--icount-requests N]" \
         "[--skip LIST] [--out DIR]" >&2
    exit 2
}
[ $# -ge 2 ] || usage
A=$(realpath "$1")
B=$(realpath "$2")
shift 2
while [ $# -gt 0 ]; do
    case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --window-ms) WINDOW_MS=$2; shift 2 ;;
    --ops) OPS=$2; shift 2 ;;
    --requests) REQUESTS=$2; shift 2 ;;
    --icount-requests) ICOUNT_REQUESTS=$2; shift 2 ;;
    --skip) SKIP=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    *) usage ;;
    esac
done
for d in "$A" "$B"; do
    for f in server/goblind bench/shootout lib/libgoblin.a; do
        [ -e "$d/$f" ] || { echo "ab_compare: no $d/$f" >&2; exit 2; }
    done
done
skipped() { [[ ",$SKIP," == *",$1,"* ]]; }

TMP=$(mktemp -d /tmp/goblin-ab.XXXXXX)
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT

wait_for() {
    for _ in $(seq 400); do
        redis-cli -s "$1" PING >/dev/null 2>&1 && return 0
        sleep 0.05
    done
    echo "ab_compare: server on $1 did not start" >&2
    exit 1
}

stop_server() {
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
}

# start BUILD ARGS...: goblind of BUILD on SERVER_CPU, on $TMP/s.sock.
start() {
    local build=$1
    shift
    rm -f "$TMP/s.sock"
    taskset -c "$SERVER_CPU" "$build/server/goblind" --port 0 \
        --unixsocket "$TMP/s.sock" --loglevel warning "$@" \
        >>"$TMP/server.log" 2>&1 &
    SERVER_PID=$!
    wait_for "$TMP/s.sock"
}

# The order of round r: A then B on even rounds, B then A on odd ones.
order() { if [ $(($1 % 2)) = 0 ]; then echo "A B"; else echo "B A"; fi; }
dir_of() { if [ "$1" = A ]; then echo "$A"; else echo "$B"; fi; }

# ---- latency ----
LAT=$TMP/latency.csv
echo "build,round,system,transport,protocol,op,p50_ns,p90_ns,p99_ns,\
p999_ns,min_ns,mean_ns,samples" >"$LAT"
shoot() {   # shoot WHICH ROUND ARGS...
    local which=$1 round=$2 build
    build=$(dir_of "$1")
    shift 2
    taskset -c "$CLIENT_CPU" "$build/bench/shootout" --cpu "$CLIENT_CPU" \
        --peer-cpu "$SERVER_CPU" --window-ms "$WINDOW_MS" \
        --warmup-ms 100 --ops "$OPS" --target client --system goblind "$@" \
        2>>"$TMP/client.log" | grep -v '^system,' |
        sed "s/^/$which,$round,/" >>"$LAT" ||
        echo "ab_compare: shootout $which $* failed" >&2
}
if ! skipped latency; then
    for ((r = 0; r < ROUNDS; r++)); do
        for which in $(order $r); do
            build=$(dir_of $which)
            for proto in sbe resp; do
                ring=/dev/shm/goblin-ab-$$-$proto
                start "$build" --ring "$ring" 1m --ring-cpus "$SERVER_CPU" \
                    --ring-idle spin
                shoot $which $r --transport ring --protocol $proto \
                    --path "$ring"
                stop_server
                rm -f "$ring"
            done
            port=$(python3 -c 'import socket; s = socket.socket()
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
            start "$build" --port "$port" --bind 127.0.0.1
            for proto in sbe resp; do
                shoot $which $r --transport uds --protocol $proto \
                    --path "$TMP/s.sock"
                shoot $which $r --transport tcp --protocol $proto \
                    --host 127.0.0.1 --port "$port"
            done
            stop_server
        done
        echo "ab_compare: latency round $((r + 1))/$ROUNDS done" >&2
    done
fi

# ---- throughput ----
RB=$TMP/throughput.csv
echo "build,round,test,rps" >"$RB"
if ! skipped throughput; then
    for ((r = 0; r < ROUNDS; r++)); do
        for which in $(order $r); do
            start "$(dir_of $which)"
            taskset -c "$CLIENT_CPU" redis-benchmark -s "$TMP/s.sock" \
                -P 16 -c 50 -n "$REQUESTS" -r 10000 -t set,get,hset,zadd \
                --csv 2>/dev/null | grep -v '^"test"' |
                awk -F'","' -v w=$which -v r=$r '{ gsub(/"/, "");
                    split($0, f, ","); print w "," r "," f[1] "," f[2] }' \
                >>"$RB"
            stop_server
        done
        echo "ab_compare: throughput round $((r + 1))/$ROUNDS done" >&2
    done
fi

# ---- instructions ----
IC=$TMP/icount.csv
echo "build,path,op,instructions" >"$IC"
if ! skipped icount && command -v valgrind >/dev/null; then
    for which in A B; do
        build=$(dir_of $which)
        src=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["directories"]["source"])' \
            "$build/meson-info/meson-info.json")
        # The ring: this tree's harness against the build's library.
        cc -O2 -std=gnu11 -I"$src/include" -I"$build/include" -I"$build" \
            -o "$TMP/icount-$which" bench/icount.c "$build/lib/libgoblin.a" \
            -lpthread -lm
        mkdir -p "$TMP/ic-$which"
        valgrind --tool=callgrind --collect-atstart=no \
            --callgrind-out-file="$TMP/ic-$which/cg.out" \
            "$TMP/icount-$which" --rows base,ring-sbe,ring-resp \
            --ops NOP,PING,GET,SET,ZSCORE --iters 2000 --warmup 200 \
            >/dev/null 2>"$TMP/ic-$which/stderr"
        python3 bench/icount_report.py "$TMP/ic-$which" \
            --csv "$TMP/ic-$which/icount.csv" >/dev/null
        grep -v '^row,' "$TMP/ic-$which/icount.csv" |
            sed "s/^/$which,/" >>"$IC"
        # A Unix socket: goblind under callgrind, zeroed and dumped around
        # ICOUNT_REQUESTS one-at-a-time requests.
        rm -f "$TMP/s.sock"
        valgrind --tool=callgrind --callgrind-out-file="$TMP/gd-$which.%p" \
            "$build/server/goblind" --port 0 --unixsocket "$TMP/s.sock" \
            --socket-spin-us 0 --hz 1 --loglevel warning \
            >>"$TMP/server.log" 2>&1 &
        SERVER_PID=$!
        wait_for "$TMP/s.sock"
        for t in ping_mbulk get set; do
            callgrind_control -z "$SERVER_PID" >/dev/null 2>&1
            redis-benchmark -s "$TMP/s.sock" -c 1 -n "$ICOUNT_REQUESTS" \
                -t $t -q >/dev/null 2>&1
            callgrind_control -d "uds-$t" "$SERVER_PID" >/dev/null 2>&1
        done
        # SBE over the socket: the build's own client, a short and a long
        # window; the difference of their counts over the difference of
        # their requests leaves out the client's set-up (its fixtures).
        for t in PING GET; do
            for ms in 200 800; do
                callgrind_control -z "$SERVER_PID" >/dev/null 2>&1
                n=$("$build/bench/shootout" --target client \
                    --system goblind --transport uds --protocol sbe \
                    --path "$TMP/s.sock" --ops $t --window-ms $ms \
                    --warmup-ms 0 2>/dev/null | awk -F, 'END { print $NF }')
                callgrind_control -d "sbe-$t-$ms-$n" "$SERVER_PID" \
                    >/dev/null 2>&1
            done
        done
        stop_server
        for f in "$TMP"/gd-$which.*.[0-9]*; do
            desc=$(sed -n 's/^desc: Trigger: dump //p' "$f")
            total=$(sed -n 's/^totals: //p' "$f")
            case "$desc" in
            uds-*)
                echo "$which,uds-resp,${desc#uds-}," \
                     "$((total / ICOUNT_REQUESTS))" | tr -d ' ' >>"$IC" ;;
            sbe-*)
                set -- $(echo "$desc" | tr - ' ')
                echo "$2 $3 $4 $total" >>"$TMP/sbe-$which" ;;
            esac
        done
        # Per op: (long total - short total) / (long n - short n).
        sort -k1,1 -k2,2n "$TMP/sbe-$which" | awk -v w=$which '
            $1 != op { op = $1; n = $3; t = $4; next }
            $3 > n { printf "%s,uds-sbe,%s,%d\n", w, op, ($4 - t) / ($3 - n) }' \
            >>"$IC"
    done
fi

python3 - "$LAT" "$RB" "$IC" "$A" "$B" <<'EOF'
import csv, statistics, sys
lat, rb, ic, a, b = sys.argv[1:6]
print(f"A = {a}\nB = {b}\n")

def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))

def ratio(x, y):
    return f"{y / x:.2f}" if x else "-"

L = rows(lat)
if L:
    print("### Latency (ns; median over rounds of each window's percentile)")
    print()
    print("| transport | protocol | op | A p50 | B p50 | B/A | A p99 | B p99 "
          "| B/A | rounds |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    keys = []
    for r in L:
        k = (r["transport"], r["protocol"], r["op"])
        if k not in keys:
            keys.append(k)
    for k in keys:
        got = {}
        for w in "AB":
            sel = [r for r in L if r["build"] == w and
                   (r["transport"], r["protocol"], r["op"]) == k]
            got[w] = (statistics.median(float(r["p50_ns"]) for r in sel),
                      statistics.median(float(r["p99_ns"]) for r in sel),
                      len(sel)) if sel else (0, 0, 0)
        print(f"| {k[0]} | {k[1]} | {k[2]} | {got['A'][0]:.0f} | "
              f"{got['B'][0]:.0f} | {ratio(got['A'][0], got['B'][0])} | "
              f"{got['A'][1]:.0f} | {got['B'][1]:.0f} | "
              f"{ratio(got['A'][1], got['B'][1])} | {got['B'][2]} |")
    print()
T = rows(rb)
if T:
    print("### redis-benchmark -P 16 -c 50, Unix socket (median req/s)")
    print()
    print("| test | A | B | B/A | rounds |")
    print("|---|---:|---:|---:|---:|")
    tests = []
    for r in T:
        if r["test"] not in tests:
            tests.append(r["test"])
    for t in tests:
        m = {w: statistics.median(float(r["rps"]) for r in T
                                  if r["build"] == w and r["test"] == t)
             for w in "AB"}
        n = sum(1 for r in T if r["build"] == "B" and r["test"] == t)
        print(f"| {t} | {m['A']:.0f} | {m['B']:.0f} | "
              f"{ratio(m['A'], m['B'])} | {n} |")
    print()
I = rows(ic)
if I:
    print("### Instructions per request (callgrind)")
    print()
    print("| path | op | A | B | B/A |")
    print("|---|---|---:|---:|---:|")
    keys = []
    for r in I:
        k = (r["path"], r["op"])
        if k not in keys and r["path"] != "base":
            keys.append(k)
    for k in keys:
        v = {w: next((float(r["instructions"]) for r in I
                      if r["build"] == w and (r["path"], r["op"]) == k), 0)
             for w in "AB"}
        print(f"| {k[0]} | {k[1]} | {v['A']:.0f} | {v['B']:.0f} | "
              f"{ratio(v['A'], v['B'])} |")
EOF
if [ -n "$OUT" ]; then
    mkdir -p "$OUT"
    cp "$LAT" "$OUT/ab_latency.csv"
    cp "$RB" "$OUT/ab_throughput.csv"
    cp "$IC" "$OUT/ab_icount.csv"
fi
