#!/usr/bin/env bash
# pubsub_icount.sh - instructions per Pub/Sub delivery over rings, client
# and server together, counted by callgrind, phase by phase (the
# publisher's send, the publisher's endpoint running PUBLISH, the
# subscriber's endpoint sending the message, the publisher reading its
# reply, the subscriber decoding the message). See bench/pubsub_icount.c
# for the method. Writes DIR/pubsub_icount.csv (proto,phase,instructions)
# and DIR/pubsub_icount.md and prints the table.
#
#   bench/pubsub_icount.sh [--quick] [--iters N] [--warmup N]
#                          [--payload BYTES] [--out DIR]
#
# Rows: SBE (the typed PublishedMessage frame) and RESP2. --iters rounds
# (default 2000) per phase after --warmup (default 200); --quick is the
# smoke run (20 after 5). The program comes from $PUBSUB_ICOUNT, else
# $BUILD_DIR (default build-benchmarks, a release build made on first
# use). Needs valgrind. A benchmark: it reports and never judges.
set -euo pipefail

cd "$(dirname "$0")/.."
ITERS=2000
WARMUP=200
PAYLOAD=16
OUT=""
BUILD_DIR=${BUILD_DIR:-build-benchmarks}
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) ITERS=20; WARMUP=5; shift ;;
    --iters) ITERS=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --payload) PAYLOAD=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    *) echo "usage: $0 [--quick] [--iters N] [--warmup N] [--payload B]" \
            "[--out DIR]" >&2
       exit 2 ;;
    esac
done
if ! command -v valgrind >/dev/null; then
    echo "pubsub_icount: valgrind not installed (Debian: valgrind)" >&2
    exit 1
fi
if [ -z "${PUBSUB_ICOUNT:-}" ]; then
    [ -d "$BUILD_DIR" ] || meson setup "$BUILD_DIR" --buildtype=release \
        -Dwerror=false >/dev/null
    meson compile -C "$BUILD_DIR" bench/pubsub_icount >/dev/null
    PUBSUB_ICOUNT=$BUILD_DIR/bench/pubsub_icount
fi
OUT=${OUT:-$BUILD_DIR/results}
mkdir -p "$OUT"
DUMPS=$(mktemp -d)
trap 'rm -rf "$DUMPS"' EXIT
for proto in sbe resp; do
    mkdir -p "$DUMPS/$proto"
    valgrind --tool=callgrind --collect-atstart=no \
        --callgrind-out-file="$DUMPS/$proto/cg.out" \
        "$PUBSUB_ICOUNT" --iters "$ITERS" --warmup "$WARMUP" \
        --payload "$PAYLOAD" --proto "$proto" \
        >"$DUMPS/$proto/stdout" 2>"$DUMPS/$proto/stderr" || {
        cat "$DUMPS/$proto/stderr" >&2
        echo "pubsub_icount: the program failed under callgrind" >&2
        exit 1
    }
done
python3 - "$DUMPS" "$OUT/pubsub_icount.csv" \
    "bench/pubsub_icount.sh --iters $ITERS --warmup $WARMUP --payload $PAYLOAD" \
    >"$OUT/pubsub_icount.md" <<'PY'
import glob, os, re, sys
dumps, csv, cmd = sys.argv[1:4]
PHASES = ["send", "pub-ep", "sub-ep", "reply", "message", "total"]
NAMES = {"send": "publisher queues and sends PUBLISH",
         "pub-ep": "publisher's endpoint: PUBLISH runs, reply, message out",
         "sub-ep": "subscriber's endpoint: the message into its CQ",
         "reply": "publisher reads its reply",
         "message": "subscriber decodes the message",
         "total": "**one whole delivery**"}
counts = {}
for proto in ("sbe", "resp"):
    per = {}
    for path in glob.glob(os.path.join(dumps, proto, "cg.out*")):
        desc = total = None
        for line in open(path, errors="replace"):
            m = re.match(r"desc: Trigger: Client Request: icount pubsub "
                         r"(\S+) (\d+)", line)
            if m:
                desc = (m.group(1), int(m.group(2)))
            m = re.match(r"(?:totals|summary): (\d+)", line)
            if m and total is None:
                total = int(m.group(1))
        if desc:
            per[desc[0]] = (total or 0) / desc[1]
    base = per.pop("base", 0.0)
    for k, v in per.items():
        counts[(proto, k)] = round(v - base)
with open(csv, "w") as f:
    for (proto, k), v in sorted(counts.items()):
        f.write(f"{proto},{k},{v}\n")
print("Instructions per Pub/Sub delivery over rings (16 B payload unless "
      "stated), client and server together, callgrind: `" + cmd + "`\n")
print("| phase | ring SBE | ring RESP2 |")
print("|---|---:|---:|")
for p in PHASES:
    cells = [f"{counts[(r, p)]:,}" if (r, p) in counts else ""
             for r in ("sbe", "resp")]
    print(f"| {NAMES[p]} | " + " | ".join(cells) + " |")
PY
cat "$OUT/pubsub_icount.md"
