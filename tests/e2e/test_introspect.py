"""test_introspect.py - MEMORY and LATENCY against redis-server 7.0.

    /usr/bin/python3 test_introspect.py GOBLIND

Both servers run the same commands and their replies are compared where
Redis's reply does not depend on its allocator: MEMORY HELP, the
argument errors of MEMORY USAGE, a missing key, PURGE, DOCTOR on an
almost empty server, the field names, order and types of MEMORY STATS
(with the databases that hold keys), over RESP2 and RESP3. The numbers
are Goblin's own: MEMORY USAGE of a new key must be what deleting it frees, for every type.

LATENCY: with latency-monitor-threshold off, then at 5 ms, both servers
sleep in DEBUG SLEEP and their LATEST, HISTORY, RESET, DOCTOR, GRAPH
and HELP are compared with times, durations and counts masked. The slow
log sees every slow call, not one in 16.

LATENCY HISTOGRAM: both servers run the same commands and their
histograms are compared: the same commands (only those that ran, a
container naming its subcommands, unknown names left out), the exact
calls, over RESP2 and RESP3, levels labelled as Redis labels them
(a call over 541 ms under 1073741), cumulative, the last equal to the
calls; latency-tracking no records nothing; CONFIG RESETSTAT clears.

INFO latencystats: the same commands on both servers give the same
lines (names, percentile labels from latency-tracking-info-percentiles,
in its order), each value on a boundary of Redis's hdr_histogram (the
highest value of its sub-bucket, the lowest for p0), rising with the
percentile; a 0.6 s DEBUG SLEEP reports from 0.6 s up on both (not
the same 4 ms sub-bucket: a loaded machine sleeps longer); the section
sits where Redis puts it, only in INFO all and everything, and is empty
with latency-tracking no.
"""

import re
import time

import sys

import e2e


def memory_script():
    return [[b"MEMORY", b"HELP"], [b"MEMORY", b"USAGE", b"nokey"],
            [b"SET", b"a", b"b"], [b"MEMORY", b"USAGE", b"a", b"SAMPLES"],
            [b"MEMORY", b"USAGE", b"a", b"SAMPLES", b"-1"],
            [b"MEMORY", b"USAGE", b"a", b"SAMPLES", b"x"],
            [b"MEMORY", b"USAGE", b"a", b"FOO", b"1"],
            [b"MEMORY", b"USAGE"], [b"MEMORY", b"STATS", b"x"],
            [b"MEMORY", b"BOGUS"], [b"MEMORY"], [b"MEMORY", b"PURGE"],
            [b"MEMORY", b"DOCTOR"], [b"MEMORY", b"DOCTOR", b"x"],
            [b"MEMORY", b"HELP", b"x"]]


def shape(reply):
    """A reply with every number replaced by its type."""
    t, v = reply
    if t in ":,":
        return t
    if t in "*~" and v is not None:
        return (t, [shape(x) for x in v])
    if t == "%":
        return (t, [(shape(a), shape(b)) for a, b in v])
    return reply


def stats_shape(reply):
    t, v = reply
    if t == "*":  # RESP2: names and values alternate
        return (t, [x if i % 2 == 0 else shape(x) if x[0] != "$" else
                    ("$", "double") for i, x in enumerate(v)])
    return shape(reply)


def test_memory_same_as_redis(goblind):
    ref = e2e.redis_server()
    srv = e2e.goblind(goblind)
    try:
        for proto in (b"2", b"3"):
            a, b = ref.client(), srv.client()
            a.call(b"HELLO", proto)
            b.call(b"HELLO", proto)
            for cmd in memory_script():
                ra, rb = a.call(*cmd), b.call(*cmd)
                assert ra == rb, "%r:\n  redis:  %r\n  goblin: %r" % (
                    cmd, ra, rb)
            for c in (a, b):
                c.call(b"SELECT", b"5")
                c.call(b"SET", b"x", b"y")
            ra = stats_shape(a.call(b"MEMORY", b"STATS"))
            rb = stats_shape(b.call(b"MEMORY", b"STATS"))
            assert ra == rb, "STATS:\n  redis:  %r\n  goblin: %r" % (ra, rb)
            ra = a.call(b"MEMORY", b"MALLOC-STATS")
            rb = b.call(b"MEMORY", b"MALLOC-STATS")
            assert ra[0] == rb[0] and rb[1], (ra[0], rb)
            for c in (a, b):
                c.call(b"FLUSHALL")
        e2e.check_stopped_cleanly(srv)
    finally:
        ref.kill_now()
        srv.kill_now()


def used(c):
    info = e2e.plain(c.call(b"INFO", b"memory")).decode()
    for line in info.split("\r\n"):
        if line.startswith("used_memory:"):
            return int(line.split(":")[1])
    raise AssertionError(info)


def fill(c, kind, key, n):
    """n elements in key, in batches, so big values take their full
    encoding."""
    for lo in range(0, n, 500):
        vals = [b"%d-%s" % (i, b"v" * (i % 40)) for i in range(lo, min(n, lo + 500))]
        if kind == "string":
            c.call(b"APPEND", key, b"".join(vals))
        elif kind == "hash":
            args = []
            for v in vals:
                args += [b"f" + v, v]
            c.call(b"HSET", key, *args)
        elif kind == "zset":
            args = []
            for i, v in enumerate(vals):
                args += [b"%d" % (lo + i), v]
            c.call(b"ZADD", key, *args)
        elif kind == "list":
            c.call(b"RPUSH", key, *vals)
        elif kind == "set":
            c.call(b"SADD", key, *vals)
        elif kind == "intset":
            c.call(b"SADD", key, *[b"%d" % (lo + i) for i in range(len(vals))])


def test_memory_usage_is_goblins_bytes(goblind):
    srv = e2e.goblind(goblind)
    f = e2e.Failures()
    try:
        c = srv.client()
        # The key index grows in steps: keep it from growing while
        # measuring by filling it first.
        for i in range(200):
            c.call(b"SET", b"pad%d" % i, b"x")
        used(c)  # INFO's own reply buffer grows once
        sizes = {}
        for kind in ("string", "hash", "zset", "list", "set", "intset"):
            for n in (3, 5000):
                key = b"%s-%d" % (kind.encode(), n)
                fill(c, kind, key, n)
                u = e2e.plain(c.call(b"MEMORY", b"USAGE", key))
                s0 = e2e.plain(c.call(b"MEMORY", b"USAGE", key,
                                      b"SAMPLES", b"0"))
                f.eq(s0, u, "%s SAMPLES 0 is the same count" % key)
                sizes[key] = u
                # Every byte deleting the key gives back is in USAGE, up
                # to malloc's rounding of the blocks of a big value.
                before = used(c)
                c.call(b"DEL", key)
                # The next write frees the deleted record (kept for views
                # of the last write); it replaces a record of one size.
                c.call(b"SET", b"pad0", b"y")
                freed = before - used(c)
                f.check(freed * 0.97 <= u <= freed + 32,
                        "%s: usage %d, deleting it freed %d" % (key, u, freed))
                fill(c, kind, key, n)
        f.check(sizes[b"hash-5000"] > sizes[b"hash-3"] > 0,
                "a bigger hash takes more")
        f.finish()
        e2e.check_stopped_cleanly(srv)
    finally:
        srv.kill_now()


def masked(cmd, reply):
    """Times, durations and counts masked; a text's numbers too."""
    t, v = reply
    if t in "$=" and v is not None:
        return (t, re.sub(rb"[0-9]+(\.[0-9]+)?", b"N", v))
    if t == "*" and v is not None and cmd[1].upper() != b"HELP":
        return (t, [masked(cmd, x) for x in v])
    if t == ":" and cmd[1].upper() != b"RESET":
        return (t, "N")
    return reply


def latency_script():
    sleep = [b"DEBUG", b"SLEEP", b"0.02"]
    return [[b"LATENCY", b"HELP"], [b"LATENCY", b"LATEST"],
            [b"LATENCY", b"DOCTOR"], [b"LATENCY", b"HISTORY", b"command"],
            [b"LATENCY", b"GRAPH", b"command"], [b"LATENCY", b"RESET"],
            [b"LATENCY", b"BOGUS"], [b"LATENCY", b"HISTORY"],
            [b"LATENCY", b"LATEST", b"x"], [b"LATENCY", b"GRAPH"],
            [b"CONFIG", b"SET", b"latency-monitor-threshold", b"5"],
            [b"CONFIG", b"GET", b"latency-monitor-threshold"],
            [b"LATENCY", b"DOCTOR"], sleep, [b"PING"],
            [b"LATENCY", b"LATEST"], [b"LATENCY", b"HISTORY", b"command"],
            [b"LATENCY", b"HISTORY", b"COMMAND"],
            [b"LATENCY", b"HISTORY", b"fast-command"],
            [b"LATENCY", b"GRAPH", b"command"], [b"LATENCY", b"DOCTOR"],
            [b"CONFIG", b"SET", b"slowlog-log-slower-than", b"-1"],
            [b"LATENCY", b"DOCTOR"],
            [b"CONFIG", b"SET", b"slowlog-log-slower-than", b"100000"],
            [b"LATENCY", b"DOCTOR"],
            [b"LATENCY", b"RESET", b"fast-command", b"Command", b"x"],
            [b"LATENCY", b"LATEST"], [b"LATENCY", b"DOCTOR"],
            [b"CONFIG", b"SET", b"latency-monitor-threshold", b"-1"],
            [b"CONFIG", b"SET", b"latency-monitor-threshold", b"x"]]


def test_latency_same_as_redis(goblind):
    ref = e2e.redis_server("--enable-debug-command", "yes")
    srv = e2e.goblind(goblind)
    try:
        a, b = ref.client(), srv.client()
        for cmd in latency_script():
            ra, rb = masked(cmd, a.call(*cmd)), masked(cmd, b.call(*cmd))
            assert ra == rb, "%r:\n  redis:  %r\n  goblin: %r" % (cmd, ra, rb)
        # The masked numbers are sane.
        b.call(b"CONFIG", b"SET", b"latency-monitor-threshold", b"5")
        b.call(b"LATENCY", b"RESET")
        time.sleep(0.3)  # the cron has measured the cycle counter's rate
        b.call(b"DEBUG", b"SLEEP", b"0.02")
        ev = e2e.plain(b.call(b"LATENCY", b"LATEST"))
        assert len(ev) == 1 and ev[0][0] == b"command", ev
        assert ev[0][1] > 1600000000 and ev[0][2] >= 20 and ev[0][3] >= 20, ev
        h = e2e.plain(b.call(b"LATENCY", b"HISTORY", b"command"))
        assert len(h) == 1 and h[0][0] == ev[0][1], h
        e2e.check_stopped_cleanly(srv)
    finally:
        ref.kill_now()
        srv.kill_now()

# Redis 7.0's LATENCY HISTOGRAM labels: level L (1024 ns, doubling)
# covers up to L + L/128 - 1 ns, in microseconds; the rest is 1073741.
HIST_LABELS = [((1024 << k) + (8 << k) - 1) // 1000 for k in range(20)]
HIST_LABELS.append(1073741)


def hist_map(reply):
    """LATENCY HISTOGRAM as {name: (calls, [(usec, cumulative)...])},
    from either protocol's shape."""
    def pairs(r):
        t, v = r
        if t == "%":
            return [(e2e.plain(a), b) for a, b in v]
        assert t == "*", r
        return [(e2e.plain(v[i]), v[i + 1]) for i in range(0, len(v), 2)]
    out = {}
    for name, body in pairs(reply):
        fields = dict(pairs(body))
        assert list(fields) == [b"calls", b"histogram_usec"], fields
        levels = [(a, e2e.plain(b)) for a, b in pairs(fields[b"histogram_usec"])]
        out.setdefault(name, []).append((e2e.plain(fields[b"calls"]), levels))
    return out


def hist_shape(reply):
    """The reply's types and structure, numbers and how many levels
    masked."""
    t, v = reply
    if t == ":":
        return t
    if t in "%*" and all(x[0] == ":" for x in (
            [a for a, _ in v] if t == "%" else v)):
        return (t, "levels")
    if t == "%":
        return (t, [(hist_shape(a), hist_shape(b)) for a, b in v])
    if t == "*":
        return (t, [hist_shape(x) for x in v])
    return reply


def hist_script():
    # The slow log off: goblind times one call in 16 (latency.h).
    return [[b"CONFIG", b"SET", b"slowlog-log-slower-than", b"-1"],
            [b"CONFIG", b"SET", b"latency-tracking", b"yes"],
            [b"CONFIG", b"RESETSTAT"], [b"LATENCY", b"HISTOGRAM"],
            [b"LATENCY", b"HISTOGRAM", b"get"]] + \
        [[b"SET", b"k%d" % i, b"v"] for i in range(37)] + \
        [[b"PING"]] * 100 + \
        [[b"GET", b"k1"], [b"GET", b"nokey"], [b"INCR", b"k1"],
         [b"CONFIG", b"GET", b"maxmemory"],
         [b"CLIENT", b"GETNAME"], [b"DEBUG", b"SLEEP", b"0.6"],
         [b"LATENCY", b"HISTOGRAM", b"set", b"ping", b"get", b"incr",
          b"debug"],
         [b"LATENCY", b"HISTOGRAM", b"SET", b"nosuch", b"hgetall",
          b"set", b"CONFIG", b"config|GET", b"client|getname",
          b"client|nosuch", b"latency"],
         [b"LATENCY", b"HISTOGRAM"],
         [b"CONFIG", b"SET", b"latency-tracking", b"no"],
         [b"HSET", b"h", b"f", b"v"], [b"SET", b"k1", b"w"],
         [b"LATENCY", b"HISTOGRAM", b"hset", b"set"],
         [b"CONFIG", b"SET", b"latency-tracking", b"yes"],
         [b"CONFIG", b"RESETSTAT"],
         [b"LATENCY", b"HISTOGRAM", b"set", b"config"],
         [b"LATENCY", b"HISTOGRAM", b"x", b"y"]]


def test_latency_histogram_same_as_redis(goblind):
    ref = e2e.redis_server("--enable-debug-command", "yes")
    srv = e2e.goblind(goblind)
    try:
        for proto in (b"2", b"3"):
            a, b = ref.client(), srv.client()
            a.call(b"HELLO", proto)
            b.call(b"HELLO", proto)
            for cmd in hist_script():
                ra, rb = a.call(*cmd), b.call(*cmd)
                if cmd[:2] != [b"LATENCY", b"HISTOGRAM"]:
                    assert ra == rb, (cmd, ra, rb)
                    continue
                assert ra[0] == rb[0] == ("%" if proto == b"3" else "*"), \
                    (cmd, ra, rb)
                ha, hb = hist_map(ra), hist_map(rb)
                assert sorted(ha) == sorted(hb), (cmd, ha, hb)
                for name in ha:
                    assert [c for c, _ in ha[name]] == \
                        [c for c, _ in hb[name]], (cmd, name, ha, hb)
                    for calls, levels in hb[name]:
                        assert levels and levels[-1][1] == calls, levels
                        us = [u for u, _ in levels]
                        assert all(u in HIST_LABELS for u in us), levels
                        assert us == sorted(set(us)), levels
                        cum = [n for _, n in levels]
                        assert cum == sorted(set(cum)), levels
                if len(cmd) == 2:
                    continue
                if cmd[2] == b"set":  # named: in the order asked for
                    assert [n for n in ha] == [n for n in hb], (ha, hb)
                    assert hist_shape(ra) == hist_shape(rb), (ra, rb)
                if b"debug" in cmd:  # 0.6 s: the last label on both
                    assert ha[b"debug"] == hb[b"debug"] == \
                        [(1, [(1073741, 1)])], (ha, hb)
    finally:
        ref.kill_now()
        srv.kill_now()


def hdr_bounds(ns):
    """The lowest and highest value of the sub-bucket of Redis's
    hdr_histogram (1 ns to 1 s, 2 significant figures) ns falls in."""
    ns = min(max(ns, 1), 10**9)
    bucket = max((ns | 255).bit_length() - 8, 0)
    low = (ns >> bucket) << bucket
    return low, low + (1 << bucket) - 1


def latencystats(c):
    """INFO latencystats as {name: [(label, usec text)...]}."""
    text = e2e.plain(c.call(b"INFO", b"latencystats")).decode()
    lines = text.split("\r\n")
    assert lines[0] == "# Latencystats" and lines[-1] == "", text
    out = {}
    for line in lines[1:-1]:
        m = re.fullmatch(r"latency_percentiles_usec_([a-z|_-]+):(.*)", line)
        assert m, line
        fields = [f.split("=") for f in m.group(2).split(",")] \
            if m.group(2) else []
        out[m.group(1)] = [(k, v) for k, v in fields]
    return out


def latencystats_script():
    return [[b"CONFIG", b"SET", b"slowlog-log-slower-than", b"-1"],
            [b"CONFIG", b"SET", b"latency-tracking", b"yes"],
            [b"CONFIG", b"SET", b"latency-tracking-info-percentiles",
             b"50 99 99.9"],
            [b"CONFIG", b"RESETSTAT"]] + \
        [[b"SET", b"k%d" % i, b"v"] for i in range(37)] + \
        [[b"PING"]] * 100 + \
        [[b"GET", b"k1"], [b"INCR", b"n"], [b"CONFIG", b"GET", b"maxmemory"],
         [b"CLIENT", b"GETNAME"], [b"DEBUG", b"SLEEP", b"0.6"]]


def test_latencystats_same_as_redis(goblind):
    ref = e2e.redis_server("--enable-debug-command", "yes")
    srv = e2e.goblind(goblind)
    try:
        a, b = ref.client(), srv.client()
        for cmd in latencystats_script():
            ra, rb = a.call(*cmd), b.call(*cmd)
            assert ra == rb, (cmd, ra, rb)
        for pcts in (b"50 99 99.9", b"0 50 99.9999 100", b"12.5", b""):
            cmd = [b"CONFIG", b"SET", b"latency-tracking-info-percentiles",
                   pcts]
            assert a.call(*cmd) == b.call(*cmd) == ("+", b"OK")
            cmd = [b"CONFIG", b"GET", b"latency-tracking-info-percentiles"]
            assert a.call(*cmd) == b.call(*cmd), cmd
            la, lb = latencystats(a), latencystats(b)
            assert sorted(la) == sorted(lb), (pcts, la, lb)
            for name, fields in lb.items():
                assert [k for k, _ in fields] == [k for k, _ in la[name]], \
                    (pcts, name, la[name], fields)
                prev = 0
                for label, value in fields:
                    assert re.fullmatch(r"\d+\.\d{3}", value), (name, value)
                    ns = int(value.replace(".", ""))
                    low, high = hdr_bounds(ns)
                    assert ns == (low if label == "p0" else high), \
                        (name, label, value)
                    assert ns >= prev, (name, fields)
                    prev = ns
            if pcts:
                # DEBUG SLEEP 0.6: the same percentile labels, and on both
                # values of a sub-bucket that reaches 0.6 s (the checks
                # above made each a sub-bucket's bound). Not the same
                # sub-bucket: they are 4 ms wide there, and a loaded
                # machine (ASan) can sleep past the first one's end.
                assert [k for k, _ in la["debug"]] == \
                    [k for k, _ in lb["debug"]], (la["debug"], lb["debug"])
                for _, value in la["debug"] + lb["debug"]:
                    ns = int(value.replace(".", ""))
                    assert hdr_bounds(ns)[1] >= 600 * 10**6 and \
                        ns < 700 * 10**6, (la["debug"], lb["debug"])
        for section in (b"all", b"everything"):
            heads = [[line for line in e2e.plain(c.call(b"INFO", section))
                      .decode().split("\r\n") if line.startswith("#")]
                     for c in (a, b)]
            assert heads[0] == heads[1], heads
        assert b"Latencystats" not in e2e.plain(b.call(b"INFO"))
        assert b"Latencystats" not in e2e.plain(a.call(b"INFO"))
        cmd = [b"CONFIG", b"SET", b"latency-tracking", b"no"]
        assert a.call(*cmd) == b.call(*cmd)
        assert a.call(b"INFO", b"latencystats") == \
            b.call(b"INFO", b"latencystats") == ("$", b"# Latencystats\r\n")
    finally:
        ref.kill_now()
        srv.kill_now()


def test_slowlog_sees_every_slow_call(goblind):
    srv = e2e.goblind(goblind)
    try:
        c = srv.client()
        c.call(b"CONFIG", b"SET", b"slowlog-log-slower-than", b"1000")
        c.call(b"SLOWLOG", b"RESET")
        for _ in range(40):
            c.call(b"DEBUG", b"SLEEP", b"0.002")
            c.call(b"PING")
        n = e2e.plain(c.call(b"SLOWLOG", b"LEN"))
        assert n == 40, "%d of 40 slow calls logged" % n
        e2e.check_stopped_cleanly(srv)
    finally:
        srv.kill_now()


if __name__ == "__main__":
    e2e.run_tests([test_memory_same_as_redis,
                   test_memory_usage_is_goblins_bytes,
                   test_latency_same_as_redis,
                   test_latency_histogram_same_as_redis,
                   test_latencystats_same_as_redis,
                   test_slowlog_sees_every_slow_call], sys.argv[1])
