#!/usr/bin/env python3
"""shootout_floor.py - the cache-line floor measured again before each
op's ring rows (FLOORS, in the order of OPS) goes into CSV as one row per
op, op "RTT OP" (floor, cacheline, none), which the reports divide that
op's rows by; and the floor row itself (op RTT) becomes the median over
every run of each percentile and of the mean, the lowest minimum and the
sum of the samples. This VM's floor can jump between two levels within a
run (vCPU placement: 130 ns and 570 ns in one run here), so a ratio is
only fair against the floor measured beside it.

    shootout_floor.py CSV FLOORS OPS     (OPS comma separated)
"""
import csv
import statistics
import sys

KEY = ("floor", "cacheline", "none", "RTT")
COLS = ["p50_ns", "p90_ns", "p99_ns", "p999_ns", "min_ns", "mean_ns",
        "samples"]


def key_of(r):
    return (r["system"], r["transport"], r["protocol"], r["op"])


def median_row(runs):
    m = dict(zip(["system", "transport", "protocol", "op"], KEY))
    for c in COLS:
        v = [float(r[c]) for r in runs]
        x = min(v) if c == "min_ns" else sum(v) if c == "samples" else \
            statistics.median(v)
        m[c] = "{:.0f}".format(x) if c == "samples" else "{:.1f}".format(x)
    return m


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    path, floors, ops = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    with open(path) as f:
        rd = csv.DictReader(f)
        fields = rd.fieldnames
        rows = list(rd)
    with open(floors) as f:
        per_op = [r for r in csv.DictReader(f) if key_of(r) == KEY]
    first = [r for r in rows if key_of(r) == KEY]
    runs = first + per_op
    if not runs:
        return 0
    out = []
    for r in rows:
        if key_of(r) == KEY:
            out.append(median_row(runs))
            for op, fr in zip(ops, per_op):
                fr = dict(fr)
                fr["op"] = "RTT " + op
                out.append(fr)
        else:
            out.append(r)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(out)
    print("shootout_floor: cache-line floor p50 per run (first, then one "
          "per op): {}".format(", ".join("{:.0f}".format(float(r["p50_ns"]))
                                         for r in runs)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
