#!/usr/bin/env python3
"""icount_report.py - turns the callgrind dumps of bench/icount (one per
row and op, each described "icount ROW OP ITERS") into instructions per
round trip: DIR/icount.csv (row,op,instructions) with --csv, and a
markdown table on stdout, ops down, rows across.

    icount_report.py DUMPDIR [--csv FILE] [--cmdline TEXT]
"""
import argparse
import glob
import os
import re
import sys

ROWS = ["ring-sbe", "ring-resp", "session-sbe", "session-resp", "capi",
        "capi-1key"]
HEADS = {"ring-sbe": "ring SBE", "ring-resp": "ring RESP",
         "session-sbe": "session SBE", "session-resp": "session RESP",
         "capi": "C API", "capi-1key": "C API, one-key store"}
OPS = ["PING", "SET", "GET", "HSET", "HGET", "ZADD", "ZSCORE", "ZRANK",
       "ZRANGE", "GET5", "HSET10", "ZADD10", "EVALSHA", "FCALL"]
OP_NAMES = {"EVALSHA": "EVALSHA (GET, INCR, EXPIRE)",
            "FCALL": "FCALL (GET, INCR, EXPIRE)",
            "ZRANGE": "ZRANGE 0 9 WITHSCORES (10 members)",
            "GET5": "GET of a 5-byte key",
            "HSET10": "HSET of 10 fields (all exist)",
            "ZADD10": "ZADD of 10 members (all exist, one moves)"}

# The targets stated on these counts: (row, op, at most, what).
TARGETS = [("capi-1key", "GET5", 200,
            "C API GET of a 5-byte key (one-key store)"),
           ("ring-sbe", "PING", 250, "SBE PING over a ring"),
           ("ring-sbe", "GET", 600, "SBE GET over a ring"),
           ("ring-resp", "GET", 1000, "RESP GET over a ring")]
# And every op with a C API row: SBE over a ring within its C API cost
# plus this many.
OVER_CAPI = 350


def read_dumps(d):
    """{(row, op): instructions per round trip} from the dump files."""
    out = {}
    for path in sorted(glob.glob(os.path.join(d, "cg.out*"))):
        desc = total = None
        with open(path, errors="replace") as f:
            for line in f:
                m = re.match(r"desc: Trigger: Client Request: icount "
                             r"(\S+) (\S+) (\d+)", line)
                if m:
                    desc = (m.group(1), m.group(2), int(m.group(3)))
                m = re.match(r"(?:totals|summary): (\d+)", line)
                if m and total is None:
                    total = int(m.group(1))
        if desc is not None:
            out[(desc[0], desc[1])] = (total or 0) / desc[2]
    base = out.pop(("base", "NOP"), 0.0)
    return {k: round(v - base) for k, v in out.items()}


def counts_from_csv(path):
    out = {}
    with open(path) as f:
        for line in f:
            p = line.strip().split(",")
            if len(p) == 3 and p[2].isdigit():
                out[(p[0], p[1])] = int(p[2])
    return out


def table(counts):
    rows = [r for r in ROWS if any(k[0] == r for k in counts)]
    lines = ["| op | " + " | ".join(HEADS[r] for r in rows) + " |",
             "|---|" + "---:|" * len(rows)]
    for op in OPS:
        if not any(k[1] == op for k in counts):
            continue
        cells = [f"{counts[(r, op)]:,}" if (r, op) in counts else ""
                 for r in rows]
        lines.append(f"| {OP_NAMES.get(op, op)} | " + " | ".join(cells)
                     + " |")
    return lines


def verdicts(counts):
    """[(what, figure or None, limit, 'met'|'missed'|'not run')]."""
    out = []
    targets = list(TARGETS)
    for op in OPS:
        base = counts.get(("capi", op))
        if base is not None and op != "GET5":
            targets.append(("ring-sbe", op, base + OVER_CAPI,
                            f"SBE {OP_NAMES.get(op, op)} over a ring, within "
                            f"its C API cost ({base:,}) + {OVER_CAPI}"))
    for row, op, limit, what in targets:
        v = counts.get((row, op))
        out.append((what, v, limit,
                    "not run" if v is None else
                    "met" if v <= limit else "missed"))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dumps")
    ap.add_argument("--csv")
    ap.add_argument("--cmdline", default="bench/icount.sh")
    a = ap.parse_args()
    counts = read_dumps(a.dumps)
    if not counts:
        sys.exit("icount_report: no icount dumps in " + a.dumps)
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("row,op,instructions\n")
            for (r, op), v in sorted(counts.items()):
                f.write(f"{r},{op},{v}\n")
    print("# Instructions per round trip (callgrind)\n")
    print(f"`{a.cmdline}`: instructions per request/reply, client and "
          "server together, counted by callgrind over the measured loop "
          "only (setup and warm-up excluded), less the loop's own cost "
          "(the same loop around an op that does nothing). Ring rows run "
          "in one "
          "thread: the client queues the request, the ring endpoint is "
          "stepped, the client reads the reply.\n")
    print("\n".join(table(counts)))
    print()
    bare = counts.get(("ring-bare", "REC32"))
    if bare is not None:
        print(f"The bare ring (row ring-bare): {bare:,} instructions for a "
              "32-byte record there and back over goblin/ring.h's public "
              "calls (client publish, server peek, publish and release, "
              "client peek and release): the transport alone, which the "
              "ring rows take through inline forms of the same steps.\n")
    for what, v, limit, verdict in verdicts(counts):
        fig = "-" if v is None else f"{v:,}"
        print(f"- {what}: {fig} instructions, target <= {limit:,}: "
              f"**{verdict}**")


if __name__ == "__main__":
    main()
