#!/usr/bin/env python3
"""shootout_report.py - Markdown tables from shootout.sh's CSV: p50 / p99
per system, transport, protocol and op in ns; the p50 as a multiple of
redis-server over a Unix socket (same op) and of the raw cache-line round
trip between the same two CPUs; and every percentile.

With --plots DIR (relative to the report), links the CDF plots
shootout_plot.py drew there.

usage: shootout_report.py shootout.csv [--redis-version V] [--window-ms N]
                          [--timer TEXT] [--cpus TEXT] [--plots DIR]
                          > shootout.md
"""
import csv
import datetime
import os
import sys

OPS = ["PING", "SET", "GET", "HSET", "HGET", "ZADD", "ZSCORE", "HSET10",
       "ZADD10", "EVALSHA", "FCALL"]

# Rows in report order: (system, transport, protocol, label).
ROWS = [
    ("inproc", "call", "none", "Goblin C API, in-process"),
    ("inproc", "call", "sbe", "Goblin SBE, in-process session"),
    ("inproc", "call", "resp", "Goblin RESP, in-process session"),
    ("goblind", "ring", "sbe", "goblind SBE / ring"),
    ("goblind", "ring", "resp", "goblind RESP / ring"),
    ("goblind", "uds", "sbe", "goblind SBE / UDS"),
    ("goblind", "uds", "resp", "goblind RESP / UDS"),
    ("goblind", "tcp", "sbe", "goblind SBE / TCP"),
    ("goblind", "tcp", "resp", "goblind RESP / TCP"),
    ("redis-server", "uds", "resp", "redis-server RESP / UDS"),
    ("redis-server", "tcp", "resp", "redis-server RESP / TCP"),
]


def num(x):
    return "{:,.0f}".format(x)


def ratio(x):
    """1.07x, or 1/236 when far below one."""
    if x < 0.1:
        return "1/{:,.0f}".format(1 / x)
    return "{:.2f}x".format(x)


def floor_of(rows, op):
    """The cache-line floor measured beside op's ring rows
    (shootout_floor.py), else the run's floor."""
    return rows.get(("floor", "cacheline", "none", "RTT " + op)) or \
        rows.get(("floor", "cacheline", "none", "RTT"))


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    opt = {"--redis-version": "?", "--window-ms": "?", "--timer": "?",
           "--cpus": "?", "--plots": None}
    path = None
    i = 0
    while i < len(args):
        if args[i] in opt:
            opt[args[i]] = args[i + 1]
            i += 2
        else:
            path = args[i]
            i += 1
    rows = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            key = (r["system"], r["transport"], r["protocol"], r["op"])
            rows[key] = {k: float(r[k]) for k in r
                         if k.endswith("_ns") or k == "samples"}
    cl = rows.get(("floor", "cacheline", "none", "RTT"))
    timer = rows.get(("floor", "timer", "none", "EMPTY"))
    out = []
    w = out.append
    w("# Goblin latency shootout")
    w("")
    w("Generated {} UTC. One synchronous request at a time, one C client "
      "(bench/shootout.c) and one timer ({}) for every row; CPUs: {}; "
      "{} ms window per op after a warm-up; redis-server {} with the "
      "parity configuration.".format(
          datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M"),
          opt["--timer"].replace("shootout: timer ", ""), opt["--cpus"],
          opt["--window-ms"], opt["--redis-version"]))
    w("")
    if cl:
        w("Floors: the raw cache-line round trip between the two CPUs is "
          "{} ns at p50 ({} p99, {} min; the median over its runs); an "
          "empty timed sample costs {} ns (the timer's own share of every "
          "figure below).".format(
              num(cl["p50_ns"]), num(cl["p99_ns"]), num(cl["min_ns"]),
              num(timer["p50_ns"]) if timer else "?"))
        w("")
    w("## p50 / p99 (ns)")
    w("")
    w("| system / transport | " + " | ".join(OPS) + " |")
    w("|---|" + "---:|" * len(OPS))
    missing = []
    for sysname, tr, proto, label in ROWS:
        cells = []
        for op in OPS:
            v = rows.get((sysname, tr, proto, op))
            cells.append("{} / {}".format(num(v["p50_ns"]), num(v["p99_ns"]))
                         if v else "n/a")
        if all(c == "n/a" for c in cells):
            missing.append(label)
            continue
        w("| {} | {} |".format(label, " | ".join(cells)))
    if missing:
        w("")
        w("Not measured: {}.".format(", ".join(missing)))
    w("")
    w("## p50 as a multiple of redis-server RESP / UDS (same op)")
    w("")
    w("| system / transport | " + " | ".join(OPS) + " |")
    w("|---|" + "---:|" * len(OPS))
    for sysname, tr, proto, label in ROWS:
        if label in missing:
            continue
        cells = []
        for op in OPS:
            v = rows.get((sysname, tr, proto, op))
            ref = rows.get(("redis-server", "uds", "resp", op))
            cells.append(ratio(v["p50_ns"] / ref["p50_ns"])
                         if v and ref else "n/a")
        w("| {} | {} |".format(label, " | ".join(cells)))
    if cl:
        per_op = any(floor_of(rows, op) is not cl for op in OPS)
        w("")
        if per_op:
            w("## p50 in raw cache-line round trips (the floor measured "
              "beside each op)")
            w("")
            w("Each op's figures divided by the cache-line floor measured "
              "just before that op's ring rows (the first row); this VM's "
              "floor can move between levels within one run.")
        else:
            w("## p50 in raw cache-line round trips ({} ns)".format(
                num(cl["p50_ns"])))
        w("")
        w("| system / transport | " + " | ".join(OPS) + " |")
        w("|---|" + "---:|" * len(OPS))
        if per_op:
            w("| cache-line floor, p50 (ns) | " + " | ".join(
                num(floor_of(rows, op)["p50_ns"]) for op in OPS) + " |")
        for sysname, tr, proto, label in ROWS:
            if label in missing:
                continue
            cells = []
            for op in OPS:
                v = rows.get((sysname, tr, proto, op))
                f = floor_of(rows, op)
                cells.append("{:.1f}".format(v["p50_ns"] / f["p50_ns"])
                             if v else "n/a")
            w("| {} | {} |".format(label, " | ".join(cells)))
    plots = opt["--plots"]
    if plots:
        here = os.path.dirname(os.path.abspath(path))
        svgs = [op for op in OPS if os.path.exists(
            os.path.join(here, plots, "cdf-{}.svg".format(op)))]
        if svgs:
            w("")
            w("## Latency CDFs")
            w("")
            w("One plot per op, a line per row; x is the latency on a log "
              "scale, y the percentile with one more nine per tick.")
            w("")
            for op in svgs:
                w("![{} latency CDF]({}/cdf-{}.svg)".format(op, plots, op))
    w("")
    w("## Every percentile (ns)")
    w("")
    w("| system | transport | protocol | op | p50 | p90 | p99 | p99.9 | min "
      "| mean | samples |")
    w("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for (s, tr, proto, op), v in rows.items():
        w("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
            s, tr, proto, op, num(v["p50_ns"]), num(v["p90_ns"]),
            num(v["p99_ns"]), num(v["p999_ns"]), num(v["min_ns"]),
            num(v["mean_ns"]), num(v["samples"])))
    print("\n".join(out))


if __name__ == "__main__":
    main()
