#!/usr/bin/env python3
"""report.py - DIR/REPORT.md from what bench/report.sh left in DIR: the
machine it ran on, every target of the benchmark plan marked met or missed
from the raw outputs (shootout.csv, icount.csv, scripting.tsv, pubsub.tsv,
memory.tsv, microbench.json), then every table (shootout.md with its CDF
plots, icount.md, throughput.md, scripting.md, pubsub.md, memory.md,
microbench.md)
as the scripts wrote them.

A target whose input is missing is "not run"; one whose definition needs a
size the run did not use (1,000,000 members or elements) is "not judged".
This is a report: it never fails on a figure.

usage: report.py DIR [--load-start "1.00 2.00 3.00"] [--command TEXT]
                     [--quick] [--failed STEP ...]
"""
import csv
import datetime
import os
import platform
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import microbench_report  # noqa: E402  (the microbench targets and loader)
import icount_report  # noqa: E402  (the instruction-count targets)

OPS = ["PING", "SET", "GET", "HSET", "HGET", "ZADD", "ZSCORE", "HSET10",
       "ZADD10"]
LOAD_WARN = 1.5
FULL_N = 1000000


# ---- the machine ----

def read(path, default=None):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def machine():
    """[(label, value)] for the header."""
    info = read("/proc/cpuinfo", "")
    model = re.search(r"^model name\s*:\s*(.*)$", info, re.M)
    flags = re.search(r"^flags\s*:(.*)$", info, re.M)
    hyper = flags is not None and " hypervisor" in flags.group(1)
    fam = re.search(r"^cpu family\s*:\s*(\d+)", info, re.M)
    mod = re.search(r"^model\s*:\s*(\d+)", info, re.M)
    mhz = re.search(r"^cpu MHz\s*:\s*([\d.]+)", info, re.M)
    cpu = model.group(1) if model else platform.processor() or "?"
    if fam and mod:
        cpu += " (family {}, model {})".format(fam.group(1), mod.group(1))
    if mhz:
        cpu += ", {:.0f} MHz".format(float(mhz.group(1)))
    online = read("/sys/devices/system/cpu/online", "?")
    mem = re.search(r"^MemTotal:\s*(\d+)", read("/proc/meminfo", ""), re.M)
    gov = read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    thp = read("/sys/kernel/mm/transparent_hugepage/enabled")
    rows = [
        ("CPU", cpu),
        ("cores", "{} online CPUs ({}){}".format(
            os.cpu_count(), online,
            ", under a hypervisor" if hyper else "")),
        ("memory", "{:.1f} GiB".format(int(mem.group(1)) / 2**20)
         if mem else "?"),
        ("kernel", "{} {}".format(platform.system(), platform.release())),
        ("governor", gov if gov else "not visible (no cpufreq in sysfs)"),
    ]
    if thp:
        rows.append(("transparent huge pages", thp))
    return rows


def loadavg():
    v = read("/proc/loadavg", "")
    return v.split()[:3] if v else []


# ---- inputs ----

def load_shootout(path):
    rows = {}
    if not os.path.exists(path):
        return None
    with open(path) as f:
        for r in csv.DictReader(f):
            rows[(r["system"], r["transport"], r["protocol"], r["op"])] = {
                k: float(r[k]) for k in ("p50_ns", "p99_ns")}
    return rows


def load_memory(path):
    """({case: (elements, used/elem, rss/elem)} for goblin, and for redis),
    or None."""
    if not os.path.exists(path):
        return None
    gob, red = {}, {}
    redis_part = False
    with open(path) as f:
        for line in f:
            if line.startswith("# redis"):
                redis_part = True
                continue
            if line.startswith("#") or not line.strip():
                continue
            p = line.split()
            if redis_part:
                if p[0] in gob:
                    n = gob[p[0]][0]
                    red[p[0]] = (n, int(p[1]) / n, int(p[2]) / n)
            else:
                gob[p[0]] = (int(p[1]), float(p[5]), float(p[6]))
    return gob, red


# ---- targets ----

def verdict(ok, judged=True):
    if not judged:
        return "not judged"
    return "met" if ok else "**missed**"


def shootout_targets(rows):
    """[(target, measured, limit, verdict)] from shootout.csv."""
    out = []
    if rows is None:
        names = ["goblind SBE / ring p50", "goblind SBE / ring p99",
                 "goblind RESP / ring p50", "goblind RESP / UDS p50",
                 "SBE faster than RESP"]
        return [(n, "shootout did not run", "", "not run") for n in names]
    floor = rows.get(("floor", "cacheline", "none", "RTT"))

    def vs(key, col, ref, limit, label, unit):
        cells, ok, n = [], 0, 0
        for op in OPS:
            v = rows.get(key + (op,))
            r = ref(op)
            if not v or not r:
                continue
            x = v[col] / r
            n += 1
            ok += x <= limit
            cells.append("{} {:.2f}".format(op, x))
        if n == 0:
            out.append((label, "no rows", "<= {}x {}".format(limit, unit),
                        "not run"))
            return
        out.append((label, "; ".join(cells) + " (met on {}/{} ops)".format(
            ok, n), "<= {}x {}".format(limit, unit), verdict(ok == n)))

    def fl(op):
        # The floor measured beside op's ring rows (shootout_floor.py).
        f = rows.get(("floor", "cacheline", "none", "RTT " + op)) or floor
        return f["p50_ns"] if f else None

    # The fast path's limits (docs/BENCHMARKS.md, targets).
    vs(("goblind", "ring", "sbe"), "p50_ns", fl, 1.5,
       "goblind SBE / ring, p50", "cache-line RTT p50")
    vs(("goblind", "ring", "sbe"), "p99_ns", fl, 2.5,
       "goblind SBE / ring, p99", "cache-line RTT p50")
    vs(("goblind", "ring", "resp"), "p50_ns", fl, 2,
       "goblind RESP / ring, p50", "cache-line RTT p50")
    vs(("goblind", "uds", "resp"), "p50_ns",
       lambda op: (rows.get(("redis-server", "uds", "resp", op)) or
                   {}).get("p50_ns"), 0.9,
       "goblind RESP / UDS, p50", "redis-server RESP / UDS p50")
    # SBE below RESP at the median, op by op, on every transport both run.
    slower, n = [], 0
    for sysname, tr, name in [("goblind", "ring", "ring"),
                              ("goblind", "uds", "UDS"),
                              ("goblind", "tcp", "TCP"),
                              ("inproc", "call", "in-process")]:
        for op in OPS:
            s = rows.get((sysname, tr, "sbe", op))
            r = rows.get((sysname, tr, "resp", op))
            if not s or not r:
                continue
            n += 1
            if s["p50_ns"] >= r["p50_ns"]:
                slower.append("{} {}".format(name, op))
    if n == 0:
        out.append(("SBE faster than RESP", "no rows", "every pair",
                    "not run"))
    else:
        out.append(("SBE p50 below RESP p50, every transport and op",
                    "{}/{} pairs{}".format(
                        n - len(slower), n,
                        "; not on: " + ", ".join(slower) if slower else ""),
                    "every pair", verdict(not slower)))
    return out


SCRIPT_TESTS = ["EVALSHA", "FCALL"]
RING_SCRIPT_P50_NS = 2000


def scripting_targets(path, rows):
    """The scripting targets: EVALSHA and FCALL throughput at least
    redis-server's on the same socket type, pipelined and at depth one
    (scripting.tsv, script_bench.sh), and EVALSHA over the ring under
    2 us at p50, next to the cache-line floor of the same shootout run."""
    out = []
    got = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                p = line.rstrip("\n").split("\t")
                if len(p) == 6:
                    got.setdefault(p[1], []).append(p)
    for test in SCRIPT_TESTS:
        label = "{} req/s >= redis-server, UDS and TCP, -P 16 and -P 1".format(
            test)
        if test not in got:
            out.append((label, "script_bench did not run", ">= 1.00x",
                        "not run"))
            continue
        cells, ok = [], True
        for tr, _, flags, r, g, ratio in got[test]:
            try:
                x = float(g) / float(r)
            except ValueError:
                cells.append("{} {}: error".format(tr, flags))
                ok = False
                continue
            ok = ok and x >= 1.0
            cells.append("{} {} {:.2f}".format(tr, flags.split(" -c")[0], x))
        out.append((label, "; ".join(cells), ">= 1.00x", verdict(ok)))
    floor = (rows or {}).get(("floor", "cacheline", "none", "RTT"))
    for proto in ("sbe", "resp"):
        for test in SCRIPT_TESTS:
            label = "{} over the ring, {}, p50".format(test, proto.upper())
            lim = "< {:,} ns".format(RING_SCRIPT_P50_NS)
            v = (rows or {}).get(("goblind", "ring", proto, test))
            if v is None:
                out.append((label, "no shootout row", lim, "not run"))
                continue
            m = "p50 {:,.0f} ns, p99 {:,.0f} ns".format(v["p50_ns"],
                                                        v["p99_ns"])
            if floor:
                m += "; cache-line floor p50 {:,.0f} ns ({:.1f}x)".format(
                    floor["p50_ns"], v["p50_ns"] / floor["p50_ns"])
            out.append((label, m, lim,
                        verdict(v["p50_ns"] < RING_SCRIPT_P50_NS)))
    return out


def pubsub_targets(path):
    """Issue 14's targets, as bench/pubsub.sh judged them in its own run
    (pubsub.tsv: target, figures, ratio, verdict): ring SBE 1:1 p50 within
    2x the cache-line floor of the same run, UDS RESP 1:1 within 0.9x of
    redis-server, 8,192 patterns within 0.25x, subscription RSS at most
    redis-server's."""
    if not os.path.exists(path):
        return [("Pub/Sub targets (pubsub.sh)", "pubsub.sh did not run", "-",
                 "not run")]
    out = []
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) != 4:
                continue
            label, figures, ratio, v = p
            limit = label.split("<=", 1)[1].strip() if "<=" in label else "-"
            out.append(("Pub/Sub " + label, "{} (ratio {})".format(
                figures, ratio), "<= " + limit,
                verdict(v == "met", v != "not measured")))
    return out


def microbench_targets(path):
    out = []
    if not os.path.exists(path):
        return [(label, "microbench did not run", "<= {} DRAM misses".format(
            limit), "not run") for label, _, limit in
            microbench_report.TARGETS]
    ctx, st, _, reps = microbench_report.load(path)
    both = reps.get("floor/dram_miss", []) + reps.get(
        "floor/dram_miss_after", [])
    dram = statistics.median(both) if both else None
    members = int(ctx.get("members", 0) or 0)
    judged = members >= FULL_N and dram is not None
    for label, name, limit in microbench_report.TARGETS:
        lim = "<= {} DRAM misses".format(limit)
        if name not in st or dram is None:
            out.append((label, "n/a", lim, "not run"))
            continue
        x = st[name][0] / dram
        m = "{:.2f} ({:,.0f} ns; DRAM miss {:,.0f} ns{})".format(
            x, st[name][0], dram,
            "" if judged else "; {:,} members".format(members))
        out.append((label, m, lim, verdict(x <= limit, judged)))
    return out


def icount_targets(path):
    """The instruction-count targets from icount.csv (icount.sh): exact
    counts, so they are judged on any run, quick or not."""
    if not os.path.exists(path):
        return [(what, "icount did not run",
                 "<= {:,} instructions".format(limit), "not run")
                for _, _, limit, what in icount_report.TARGETS]
    out = []
    counts = icount_report.counts_from_csv(path)
    for what, v, limit, _ in icount_report.verdicts(counts):
        lim = "<= {:,} instructions".format(limit)
        if v is None:
            out.append((what, "n/a", lim, "not run"))
        else:
            out.append((what, "{:,}".format(v), lim, verdict(v <= limit)))
    return out


MEM_CASES = [
    ("zset_int", "1M-member zset, integer scores, B/member", 45),
    ("zset_u32", "1M-member zset, random scores, B/member", 45),
    ("hash", "1M-field hash, B/field", 45),
    ("zset_small", "100,000 x 10-member zsets, B/member", None),
    ("hash_small", "100,000 x 10-field hashes, B/field", None),
    ("string", "1M short string keys, B/key", None),
    ("list", "1M-element list, 16 B elements, B/element", 18),
    ("list_small", "100,000 x 10-element lists, B/element", 28),
    ("set", "1M-member set, 16 B members, B/member", 32),
    ("set_int", "1M-integer set, B/member", 12),
    ("set_small", "100,000 x 10-member sets, B/member", 40),
]


def memory_targets(mem):
    out = []
    for case, label, limit in MEM_CASES:
        lim = "<= {} B".format(limit) if limit else "< redis-server"
        if mem is None or case not in mem[0]:
            out.append((label, "memory did not run", lim, "not run"))
            continue
        g = mem[0][case]
        r = mem[1].get(case)
        judged = g[0] >= FULL_N
        if limit:
            ok = g[1] <= limit and g[2] <= limit
            m = "used {:.2f}, RSS {:.2f}".format(g[1], g[2])
        elif r is None:
            out.append((label, "no redis-server figure", lim, "not run"))
            continue
        else:
            ok = g[1] < r[1] and g[2] < r[2]
            m = "used {:.2f} vs {:.2f}, RSS {:.2f} vs {:.2f}".format(
                g[1], r[1], g[2], r[2])
        if r is not None and limit:
            m += " (redis-server {:.2f} / {:.2f})".format(r[1], r[2])
        if not judged:
            m += "; n = {:,}".format(g[0])
        out.append((label, m, lim, verdict(ok, judged)))
    return out


# ---- the report ----

def demote(md):
    """A sub-report's Markdown with every heading one level lower and its
    title dropped."""
    lines = md.splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    return "\n".join("#" + l if l.startswith("#") else l
                     for l in lines).strip()


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    d = args.pop(0)
    load_start, command, quick, failed = [], "", False, []
    while args:
        a = args.pop(0)
        if a == "--load-start":
            load_start = args.pop(0).split()[:3]
        elif a == "--command":
            command = args.pop(0)
        elif a == "--quick":
            quick = True
        elif a == "--failed":
            failed = args
            args = []
        else:
            sys.exit(__doc__)
    load_end = loadavg()
    out = []
    w = out.append
    w("# Goblin benchmark report")
    w("")
    w("Generated {} UTC{}.".format(
        datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M"),
        " by `{}`".format(command) if command else ""))
    w("")
    if quick:
        w("**Quick (smoke) run: tiny sizes and windows; the figures and "
          "verdicts below say nothing about performance.**")
        w("")
    w("| machine | |")
    w("|---|---|")
    for k, v in machine():
        w("| {} | {} |".format(k, v))
    w("| load average at start | {} |".format(" ".join(load_start) or "?"))
    w("| load average at end | {} |".format(" ".join(load_end) or "?"))
    w("")
    peak = max([float(x) for x in load_start[:1] + load_end[:1]] or [0])
    if peak > LOAD_WARN:
        w("**Warning: the 1-minute load average reached {:.2f} (above {}): "
          "other work shared the CPUs, so these numbers are noisy; the "
          "socket rows and the DRAM unit suffer most.**".format(
              peak, LOAD_WARN))
        w("")
    if failed:
        w("**Steps that failed: {} (see their .log files beside this "
          "report).**".format(", ".join(failed)))
        w("")
    shoot = load_shootout(os.path.join(d, "shootout.csv"))
    targets = (shootout_targets(shoot) +
               scripting_targets(os.path.join(d, "scripting.tsv"), shoot) +
               pubsub_targets(os.path.join(d, "pubsub.tsv")) +
               icount_targets(os.path.join(d, "icount.csv")) +
               microbench_targets(os.path.join(d, "microbench.json")) +
               memory_targets(load_memory(os.path.join(d, "memory.tsv"))))
    w("## Targets")
    w("")
    met = sum(t[3] == "met" for t in targets)
    judged = sum(t[3] in ("met", "**missed**") for t in targets)
    w("{} of {} judged targets met. Shootout ratios are per op, p50 (or "
      "p99) divided by the reference's p50 measured in the same run; the "
      "microbenchmark targets are in DRAM misses of the same run and are "
      "judged at 1,000,000 members only; memory targets need both "
      "measures (store used memory and process RSS growth) to pass and are "
      "judged at 1,000,000 elements only.".format(met, judged))
    w("")
    w("| target | measured | limit | |")
    w("|---|---|---|---|")
    for t in targets:
        w("| {} | {} | {} | {} |".format(*t))
    for name, title in [("shootout.md", "Latency shootout"),
                        ("icount.md", "Instructions per round trip"),
                        ("throughput.md", "Throughput (redis-benchmark)"),
                        ("server_icount.md",
                         "Server instructions per pipelined request"),
                        ("scripting.md",
                         "Scripting throughput (EVALSHA, FCALL)"),
                        ("pubsub.md", "Pub/Sub latency and memory"),
                        ("memory.md", "Memory per element"),
                        ("microbench.md", "In-process microbenchmarks")]:
        md = read(os.path.join(d, name))
        w("")
        w("## " + title)
        w("")
        w(demote(md) if md else "Not run.")
    with open(os.path.join(d, "REPORT.md"), "w") as f:
        f.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
