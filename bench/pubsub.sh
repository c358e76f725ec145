#!/usr/bin/env bash
# pubsub.sh - Pub/Sub latency and subscription memory of goblind and
# redis-server with one client program and one timer
# (bench/pubsub_bench): rows goblind SBE over rings (and, for 1:1 16 B,
# the same with PUBLISH as an Argv frame instead of the typed request),
# goblind RESP over a Unix socket (a goblind without rings), redis-server
# RESP over a Unix socket; cases 1:1 with 16 B
# and 256 B payloads, fanout to 8 and 32 listeners (the last listener's
# latency), 1 and 16,384 literal subscriptions on one client, 8,192
# patterns with one match; server RSS for 16,384 channels on one client
# and for 32 clients x 256 channels; the raw cache-line round trip of the
# same two CPUs in the same run. Prints markdown tables (and writes them
# to DIR/pubsub.md) with the targets' ratios, and the targets as
# DIR/pubsub.tsv (label, measured, limit, verdict) for bench/report.py.
# Servers on SERVER_CPU (default 0), the client on CLIENT_CPU (default 1).
#
#   bench/pubsub.sh [--quick] [--samples N] [--out DIR]
#
# Each memory case runs on a server of its own, started for it: RSS
# growth measured on a server that already held and freed subscriptions
# (the latency cases, or the other memory case) is memory reused, not
# memory needed. --quick is the smoke run (200 samples).
# With valgrind and without --quick, the instructions of one delivery
# over rings follow (bench/pubsub_icount.sh, its table appended to
# DIR/pubsub.md), from
# $PUBSUB_ICOUNT, else the pubsub_icount next to $PUBSUB_BENCH.
# Programs come from $GOBLIND and $PUBSUB_BENCH, else $BUILD_DIR (default
# build-benchmarks, a release build made on first use). Every latency is a
# median over the samples of one run; run it when the machine is quiet.
set -euo pipefail

cd "$(dirname "$0")/.."
SAMPLES=20000
ICOUNT=1
OUT=""
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
BUILD_DIR=${BUILD_DIR:-build-benchmarks}
while [ $# -gt 0 ]; do
    case "$1" in
    --samples) SAMPLES=$2; shift 2 ;;
    --quick) SAMPLES=200; ICOUNT=0; shift ;;
    --out) OUT=$2; shift 2 ;;
    *) echo "usage: $0 [--quick] [--samples N] [--out DIR]" >&2; exit 2 ;;
    esac
done
OUT=${OUT:-$BUILD_DIR/results}
if [ -z "${GOBLIND:-}" ] || [ -z "${PUBSUB_BENCH:-}" ]; then
    [ -d "$BUILD_DIR" ] || meson setup "$BUILD_DIR" --buildtype=release \
        -Dwerror=false >/dev/null
    meson compile -C "$BUILD_DIR" goblind pubsub_bench pubsub_icount \
        >/dev/null
    GOBLIND=${GOBLIND:-$BUILD_DIR/server/goblind}
    PUBSUB_BENCH=${PUBSUB_BENCH:-$BUILD_DIR/bench/pubsub_bench}
fi
mkdir -p "$OUT"
TMP=$(mktemp -d)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT

wait_for() { for _ in $(seq 200); do [ -S "$1" ] && return 0; sleep 0.05; done; return 1; }

RINGS=""
RARGS=()
for i in $(seq 0 9); do
    RARGS+=(--ring "$TMP/r$i.ring" 64k)
    RINGS="$RINGS${RINGS:+,}ring:$TMP/r$i.ring"
done
taskset -c "$SERVER_CPU" "$GOBLIND" --port 0 --unixsocket "$TMP/g.sock" \
    "${RARGS[@]}" --ring-cpus "$SERVER_CPU" --ring-idle spin \
    --loglevel warning >"$TMP/g.log" 2>&1 &
GPID=$!; PIDS+=("$GPID")
# The socket rows get a goblind of their own, without rings: the ring
# threads spin on SERVER_CPU, and are stopped (SIGSTOP) while the socket
# rows run, so neither goblind's nor redis-server's socket row shares
# that CPU with them.
taskset -c "$SERVER_CPU" "$GOBLIND" --port 0 --unixsocket "$TMP/u.sock" \
    --loglevel warning >"$TMP/u.log" 2>&1 &
UPID=$!; PIDS+=("$UPID")
taskset -c "$SERVER_CPU" redis-server --port 0 --unixsocket "$TMP/r.sock" \
    --save "" --appendonly no --io-threads 1 >"$TMP/r.log" 2>&1 &
RPID=$!; PIDS+=("$RPID")
wait_for "$TMP/g.sock"; wait_for "$TMP/u.sock"; wait_for "$TMP/r.sock"
sleep 0.3

bench() { "$PUBSUB_BENCH" --cpu "$CLIENT_CPU" --samples "$SAMPLES" "$@"; }
field() { echo "$1" | cut -d, -f"$2"; }

declare -A P50 P99 P999 RATE
run() { # row case-label args...
    local row=$1 label=$2 line
    shift 2
    line=$(bench "$@") || { echo "  $row $label: failed" >&2; return; }
    P50[$row,$label]=$(field "$line" 3); P99[$row,$label]=$(field "$line" 4)
    P999[$row,$label]=$(field "$line" 5); RATE[$row,$label]=$(field "$line" 6)
}

# The floor's peer thread runs on SERVER_CPU alone: the ring threads
# stopped meanwhile.
kill -STOP "$GPID"
FLOOR=$(field "$(bench --case floor --peer-cpu "$SERVER_CPU")" 3)
kill -CONT "$GPID"
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
CASES=("1:1 16 B" "1:1 256 B" "fanout 8" "fanout 32" "1 literal"
       "16384 literals" "8192 patterns")
for row in ring-sbe gob-uds red-uds; do
    case $row in
    ring-sbe) A=(--addr "$RINGS" --proto sbe) ;;
    gob-uds) A=(--addr "unix:$TMP/u.sock"); kill -STOP "$GPID" ;;
    red-uds) A=(--addr "unix:$TMP/r.sock") ;;
    esac
    run $row "1:1 16 B" --case one --payload 16 "${A[@]}"
    # The same delivery with PUBLISH as an Argv frame (goblin_client_call)
    # instead of the typed request: what the typed request saves. (Before
    # the fanout, whose listeners' sessions end a moment after it.)
    [ $row = ring-sbe ] &&
        run ring-sbe-argv "1:1 16 B" --case one --payload 16 "${A[@]}" \
            --generic 1
    run $row "1:1 256 B" --case one --payload 256 "${A[@]}"
    run $row "fanout 8" --case fanout --listeners 8 "${A[@]}"
    [ $row = ring-sbe ] && continue  # ten rings: up to 8 listeners
    run $row "fanout 32" --case fanout --listeners 32 "${A[@]}"
    run $row "1 literal" --case literal --subs 1 "${A[@]}"
    run $row "16384 literals" --case literal --subs 16384 "${A[@]}"
    run $row "8192 patterns" --case pattern --patterns 8192 "${A[@]}"
done
kill -CONT "$GPID"

rss() { awk '/VmRSS/{print $2}' "/proc/$1/status"; }
hold() { # pid addr listeners subs -> RSS growth in KiB
    local before after
    before=$(rss "$1")
    coproc H { "$PUBSUB_BENCH" --case hold --addr "$2" --listeners "$3" \
        --subs "$4"; }
    read -r _ <&"${H[0]}"
    after=$(rss "$1")
    exec {H[1]}>&-
    wait "$H_PID" 2>/dev/null || true
    echo $((after - before))
}
# fresh ROW NAME -> starts a server of ROW (gob, red) on $TMP/NAME.sock
# and sets FPID.
fresh() {
    if [ "$1" = gob ]; then
        taskset -c "$SERVER_CPU" "$GOBLIND" --port 0 \
            --unixsocket "$TMP/$2.sock" --loglevel warning \
            >"$TMP/$2.log" 2>&1 &
    else
        taskset -c "$SERVER_CPU" redis-server --port 0 \
            --unixsocket "$TMP/$2.sock" --save "" --appendonly no \
            --io-threads 1 >"$TMP/$2.log" 2>&1 &
    fi
    FPID=$!; PIDS+=("$FPID")
    wait_for "$TMP/$2.sock"
    sleep 0.2
}
declare -A MEM
for row in gob red; do
    for m in 1 32; do
        fresh "$row" "m$row$m"
        if [ "$m" = 1 ]; then
            MEM[$row,1]=$(hold "$FPID" "unix:$TMP/m$row$m.sock" 1 16384)
        else
            MEM[$row,32]=$(hold "$FPID" "unix:$TMP/m$row$m.sock" 32 256)
        fi
        kill "$FPID" 2>/dev/null || true
        wait "$FPID" 2>/dev/null || true
    done
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a=="" || b=="" || b==0) print "-"; else printf "%.2f", a/b }'; }
verdict() { awk -v r="$1" -v t="$2" 'BEGIN{ if (r=="-") print "not measured"; else if (r<=t) print "met"; else print "missed" }'; }
{
    echo "## Pub/Sub (closed loop, ns; server CPU $SERVER_CPU, client CPU $CLIENT_CPU)"
    echo
    echo "cache-line floor p50: ${FLOOR} ns; load average $LOAD0 -> $LOAD1; $SAMPLES samples per cell"
    echo
    echo "| case | row | p50 | p99 | p99.9 | pubs/s |"
    echo "|---|---|---|---|---|---|"
    for c in "${CASES[@]}"; do
        for row in ring-sbe ring-sbe-argv gob-uds red-uds; do
            [ -n "${P50[$row,$c]:-}" ] || continue
            echo "| $c | $row | ${P50[$row,$c]} | ${P99[$row,$c]} | ${P999[$row,$c]} | ${RATE[$row,$c]} |"
        done
    done
    echo
    echo "| server RSS growth (KiB) | goblind | redis-server | ratio |"
    echo "|---|---|---|---|"
    echo "| 16,384 channels, 1 client | ${MEM[gob,1]} | ${MEM[red,1]} | $(ratio "${MEM[gob,1]}" "${MEM[red,1]}") |"
    echo "| 32 clients x 256 channels | ${MEM[gob,32]} | ${MEM[red,32]} | $(ratio "${MEM[gob,32]}" "${MEM[red,32]}") |"
    echo
    echo "| target | figures | ratio | verdict |"
    echo "|---|---|---|---|"
    r=$(ratio "${P50[ring-sbe,1:1 16 B]:-}" "$FLOOR")
    echo "| ring SBE 1:1 p50 <= 2x floor | ${P50[ring-sbe,1:1 16 B]:-} / $FLOOR | $r | $(verdict "$r" 2) |"
    r=$(ratio "${P50[gob-uds,1:1 16 B]:-}" "${P50[red-uds,1:1 16 B]:-}")
    echo "| UDS RESP 1:1 p50 <= 0.9x redis | ${P50[gob-uds,1:1 16 B]:-} / ${P50[red-uds,1:1 16 B]:-} | $r | $(verdict "$r" 0.9) |"
    r=$(ratio "${P50[gob-uds,8192 patterns]:-}" "${P50[red-uds,8192 patterns]:-}")
    echo "| 8192 patterns p50 <= 0.25x redis | ${P50[gob-uds,8192 patterns]:-} / ${P50[red-uds,8192 patterns]:-} | $r | $(verdict "$r" 0.25) |"
    r=$(ratio "${MEM[gob,1]}" "${MEM[red,1]}")
    echo "| 16,384 channels RSS <= redis | ${MEM[gob,1]} / ${MEM[red,1]} KiB | $r | $(verdict "$r" 1) |"
    r=$(ratio "${MEM[gob,32]}" "${MEM[red,32]}")
    echo "| 32 x 256 channels RSS <= redis | ${MEM[gob,32]} / ${MEM[red,32]} KiB | $r | $(verdict "$r" 1) |"
} | tee "$OUT/pubsub.md"
PUBSUB_ICOUNT=${PUBSUB_ICOUNT:-$(dirname "$PUBSUB_BENCH")/pubsub_icount}
if [ "$ICOUNT" = 0 ]; then
    : # the smoke run: pubsub_icount.sh has a smoke test of its own
elif command -v valgrind >/dev/null && [ -x "$PUBSUB_ICOUNT" ]; then
    { echo; PUBSUB_ICOUNT=$PUBSUB_ICOUNT bench/pubsub_icount.sh \
          --out "$OUT"; } | tee -a "$OUT/pubsub.md"
else
    echo "pubsub: instruction counts skipped (needs valgrind and" \
         "pubsub_icount)" >&2
fi
# The target rows again, tab-separated, for bench/report.py.
awk -F' [|] ' '/^[|] .* [|] (met|missed|not measured) [|]$/ {
    sub(/^[|] /, "", $1); sub(/ [|]$/, "", $4); print $1 "\t" $2 "\t" $3 "\t" $4
}' "$OUT/pubsub.md" >"$OUT/pubsub.tsv"
