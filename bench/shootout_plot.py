#!/usr/bin/env python3
"""shootout_plot.py - latency CDF plots from shootout's --cdf CSV: one SVG
per op (DIR/cdf-OP.svg) with a line per system / transport / protocol and
the raw cache-line round trip as a dashed reference.

The x axis is the latency in ns on a log scale (the rows span 20 ns to
milliseconds); the y axis is the percentile on a tail-stretching scale
(each tick is one more nine: 0, 90, 99, 99.9, 99.99, 99.999), so the
median and the tail are both readable. The 100th percentile (one sample,
the maximum) is left out.

Needs gnuplot (Debian: gnuplot-nox). Without it, says so and draws
nothing: the plots are optional, the tables are not.

usage: shootout_plot.py shootout_cdf.csv DIR
"""
import csv
import math
import os
import shutil
import subprocess
import sys
import tempfile

# (system, transport, protocol) in legend order, with the label and the
# line colour: a hue per transport (red for redis-server), dark for SBE,
# light for RESP. Lines are solid: some SVG renderers draw dashed paths
# with a stray stroke from the key to the data.
ROWS = [
    ("inproc", "call", "none", "C API, in-process", "#999999"),
    ("inproc", "call", "sbe", "SBE, in-process session", "#54278f"),
    ("inproc", "call", "resp", "RESP, in-process session", "#9e9ac8"),
    ("goblind", "ring", "sbe", "goblind SBE / ring", "#d94801"),
    ("goblind", "ring", "resp", "goblind RESP / ring", "#fdae6b"),
    ("goblind", "uds", "sbe", "goblind SBE / UDS", "#08519c"),
    ("goblind", "uds", "resp", "goblind RESP / UDS", "#6baed6"),
    ("goblind", "tcp", "sbe", "goblind SBE / TCP", "#006d2c"),
    ("goblind", "tcp", "resp", "goblind RESP / TCP", "#74c476"),
    ("redis-server", "uds", "resp", "redis-server RESP / UDS", "#a50f15"),
    ("redis-server", "tcp", "resp", "redis-server RESP / TCP", "#fb6a4a"),
]
FLOOR = ("floor", "cacheline", "none", "RTT")


def load(path):
    """{(system, transport, protocol, op): [(pct, ns), ...]}"""
    series = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            key = (r["system"], r["transport"], r["protocol"], r["op"])
            series.setdefault(key, []).append(
                (float(r["pct"]), float(r["ns"])))
    for v in series.values():
        v.sort()
    return series


def nines(pct):
    """The y coordinate: how many nines pct has (90 -> 1, 99 -> 2)."""
    return -math.log10(1.0 - pct / 100.0)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, outdir = sys.argv[1], sys.argv[2]
    gp = shutil.which("gnuplot")
    if gp is None:
        print("shootout_plot: gnuplot not found, no CDF plots "
              "(Debian: apt-get install gnuplot-nox)")
        return 0
    series = load(src)
    ops = []
    for key in series:
        if key[0] not in ("floor",) and key[3] not in ops:
            ops.append(key[3])
    os.makedirs(outdir, exist_ok=True)
    floor = series.get(FLOOR)
    made = []
    with tempfile.TemporaryDirectory() as tmp:
        def data(name, points):
            # Of a run of equal latencies only the first and last points
            # change the drawing: the rest would only make the SVG big.
            pts = [(ns, nines(pct)) for pct, ns in points
                   if pct < 100.0 and ns > 0]
            keep = [p for i, p in enumerate(pts)
                    if i == 0 or i == len(pts) - 1 or
                    pts[i - 1][0] != p[0] or pts[i + 1][0] != p[0]]
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                for ns, y in keep:
                    f.write("{} {}\n".format(ns, y))
            return path

        for op in ops:
            plots = []
            for s, t, p, label, style in ROWS:
                pts = series.get((s, t, p, op))
                if pts:
                    f = data("{}-{}-{}-{}".format(s, t, p, op), pts)
                    plots.append("'{}' using 1:2 with lines lw 2 lc '{}' "
                                 "title '{}'".format(f, style, label))
            if not plots:
                continue
            if floor:
                f = data("floor", floor)
                plots.append("'{}' using 1:2 with lines lw 3 lc "
                             "'black' title 'cache-line round trip'".format(f))
            svg = os.path.join(outdir, "cdf-{}.svg".format(op))
            script = "\n".join([
                "set terminal svg size 900,560 dynamic font 'sans,11'",
                "set output '{}'".format(svg),
                "set title '{} round-trip latency CDF, one request at a "
                "time'".format(op),
                "set logscale x 10",
                "set xtics ('10 ns' 10, '100 ns' 100, '1 us' 1e3, "
                "'10 us' 1e4, '100 us' 1e5, '1 ms' 1e6, '10 ms' 1e7, "
                "'100 ms' 1e8)",
                "set xlabel 'round-trip latency'",
                "set ylabel 'percentile'",
                "set ytics ('0' 0, '90' 1, '99' 2, '99.9' 3, '99.99' 4, "
                "'99.999' 5)",
                "set yrange [0:5.2]",
                "set grid xtics ytics mxtics",
                "set key outside right top",
                "plot " + ", \\\n     ".join(plots),
                "",
            ])
            rc = subprocess.run([gp], input=script, text=True).returncode
            if rc != 0:
                print("shootout_plot: gnuplot failed on {}".format(op))
                continue
            made.append(svg)
    print("shootout_plot: {} plot(s) in {}".format(len(made), outdir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
