#!/usr/bin/env bash
# faults.sh - the full load and fault runs against goblind (docs/testing.md,
# "Load and faults"); `make load` runs it with the defaults.
#
#   bench/faults.sh [--conns N] [--seconds S] [--runs N] [--rounds N]
#                   [--silent N] [--control-rings N] [--soak-seconds S]
#
# 1. load:   goblin_load (bench/load.c) with --conns connections (default
#            1000) over TCP and a Unix socket, depth 1 and pipelined, for
#            --seconds (default 20) per run, --runs times (default 3);
#            zero errors, every reply checked, keys deleted after each run
#            (DBSIZE 0), and goblind's RSS after the last run within 10%
#            + 16 MiB of the RSS after the first.
# 2. faults: tests/e2e/test_faults.py with the same connections and time:
#            clients killed mid-command, mid-pipeline and mid-ring-record,
#            slow readers, half-open connections (--silent per round,
#            default 50), garbage rings, while goblin_load, a socket
#            control client, --control-rings ring control clients (default
#            4, one goblind thread each) and the differential sequence
#            against redis-server run; at least --rounds rounds (default 3).
# 3. soak:   tests/e2e/soak.py for --soak-seconds (default 300) with a new
#            seed: the differential sequence against redis-server with
#            BGSAVEs, restarts and blocked clients, and a goblind and a
#            redis-server replica compared with goblind at every restart.
# Each prints its tables; the script exits non-zero if any fails.
# Everything is on loopback, on a free port and in temporary directories.
# goblind, goblin_load and ring_fault come from $BUILD_DIR (default
# build-load, a release build with the tests, made on first use).
set -euo pipefail

cd "$(dirname "$0")/.."
CONNS=1000
SECONDS_=20
RUNS=3
ROUNDS=3
SILENT=50
RINGS=4
SOAK=300
BUILD_DIR=${BUILD_DIR:-build-load}
PY=/usr/bin/python3          # the interpreter with python3-redis

while [ $# -gt 0 ]; do
    case "$1" in
    --conns) CONNS=$2; shift 2 ;;
    --seconds) SECONDS_=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --silent) SILENT=$2; shift 2 ;;
    --control-rings) RINGS=$2; shift 2 ;;
    --soak-seconds) SOAK=$2; shift 2 ;;
    *) echo "usage: $0 [--conns N] [--seconds S] [--runs N]" \
            "[--rounds N] [--silent N] [--control-rings N]" \
            "[--soak-seconds S]" >&2
       exit 2 ;;
    esac
done

# Every connection is a descriptor on both sides; goblind raises its own
# limit for its maxclients, this shell raises it for goblin_load and the
# silent connections of the fault test.
want=$((CONNS * 2 + SILENT * 100 + 256))
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt "$want" ]; then
    ulimit -Hn "$want" 2>/dev/null || want=$hard
fi
ulimit -Sn "$want" 2>/dev/null || ulimit -Sn "$(ulimit -Hn)"
echo "open files limit: $(ulimit -Sn)"

if [ ! -d "$BUILD_DIR" ]; then
    meson setup "$BUILD_DIR" --buildtype=release -Dbench=disabled >/dev/null
fi
meson compile -C "$BUILD_DIR" server/goblind bench/goblin_load \
    tests/e2e/ring_fault >/dev/null
GOBLIND=$BUILD_DIR/server/goblind
LOAD=$BUILD_DIR/bench/goblin_load
RING_FAULT=$BUILD_DIR/tests/e2e/ring_fault

status=0
echo
echo "== load: $CONNS connections, $SECONDS_ s x $RUNS runs"
$PY tests/e2e/run_load.py "$GOBLIND" "$LOAD" --conns "$CONNS" \
    --seconds "$SECONDS_" --runs "$RUNS" || status=1
echo
echo "== faults: $CONNS connections under load for $SECONDS_ s," \
     "at least $ROUNDS rounds"
$PY tests/e2e/test_faults.py "$GOBLIND" "$LOAD" "$RING_FAULT" \
    --conns "$CONNS" --seconds "$SECONDS_" --rounds "$ROUNDS" \
    --silent "$SILENT" --control-rings "$RINGS" || status=1
echo
echo "== soak: $SOAK s, with replicas"
$PY tests/e2e/soak.py "$GOBLIND" --seconds "$SOAK" || status=1
echo
[ $status = 0 ] && echo "load, faults and soak: passed" ||
    echo "load, faults and soak: FAILED"
exit $status
