"""test_hll_corrupt.py - corrupted HyperLogLog values against redis-server
7.0, after Redis's own "Fuzzing dense/sparse encoding" and "Corrupted
sparse/dense HyperLogLogs are detected" tests.

    /usr/bin/python3 test_hll_corrupt.py GOBLIND [SEEDS]

(SEEDS, 12 unless given: how many seeds, for a longer run by hand.)

For fixed seeds, the same sparse or dense HLL is built on goblind and on
redis-server, the same bytes are corrupted in the same way on both
(random overwrites past the header, truncation, extension, the magic, the
encoding byte, the cached cardinality and its stale bit), then the same
PFCOUNT (one key and two), PFADD, PFMERGE, PFDEBUG GETREG / DECODE /
ENCODING / TODENSE and GET go to both: every reply must be byte for byte
the same, errors included, and both must still answer PING.
"""

import random
import sys

import e2e

GOBLIND = sys.argv[1]
SEEDS = range(1, 1 + (int(sys.argv[2]) if len(sys.argv) > 2 else 12))
ROUNDS = 25  # per seed and encoding


def build(r, dense):
    """The commands that build one HLL under hll:k and a clean hll:o."""
    n = r.choice([1, 3, 20, 100]) if not dense else r.choice([2000, 5000])
    base = r.randrange(10**6)
    elems = [b"e%d" % (base + i) for i in range(n)]
    cmds = [[b"DEL", b"hll:k", b"hll:o", b"hll:d"]]
    for i in range(0, n, 500):
        cmds.append([b"PFADD", b"hll:k"] + elems[i:i + 500])
    if dense and r.random() < 0.3:
        cmds.append([b"PFDEBUG", b"TODENSE", b"hll:k"])
    elif not dense and r.random() < 0.3:
        cmds.append([b"PFCOUNT", b"hll:k"])  # a valid cached cardinality
    cmds.append([b"PFADD", b"hll:o", b"x1", b"x2", b"x3"])
    return cmds


def corrupt(r, value):
    """SETRANGE / SET commands that corrupt value (the bytes of hll:k)."""
    kind = r.random()
    n = len(value)
    if kind < 0.45:  # random bytes past the header
        out = []
        for _ in range(r.randint(1, 5)):
            off = r.randrange(16, max(n, 17))
            ln = r.choice([1, 1, 1, 2, 3, 8])
            out.append([b"SETRANGE", b"hll:k", b"%d" % off,
                        bytes(r.randrange(256) for _ in range(ln))])
        return out
    if kind < 0.55:  # truncated
        return [[b"SET", b"hll:k", value[:r.randrange(0, n)]]]
    if kind < 0.65:  # extended
        tail = bytes(r.choice([0, r.randrange(256)])
                     for _ in range(r.randint(1, 6)))
        return [[b"SET", b"hll:k", value + tail]]
    if kind < 0.72:  # magic
        return [[b"SETRANGE", b"hll:k", b"%d" % r.randrange(4),
                 bytes([r.randrange(256)])]]
    if kind < 0.8:  # encoding byte
        return [[b"SETRANGE", b"hll:k", b"4",
                 bytes([r.choice([0, 1, 2, 255])])]]
    if kind < 0.9:  # cached cardinality, stale bit left as it is or cleared
        card = bytes(r.randrange(256) for _ in range(8))
        if r.random() < 0.6:
            card = card[:7] + bytes([card[7] & 0x7f])
        return [[b"SETRANGE", b"hll:k", b"8", card]]
    # the stale bit alone, set or cleared, and an unused header byte
    return [[b"SETRANGE", b"hll:k", b"15",
             bytes([r.choice([0x80, 0x00, 0x7f, 0xff])])],
            [b"SETRANGE", b"hll:k", b"%d" % r.randrange(5, 8),
             bytes([r.randrange(256)])]]


def cut_xzero(value):
    """Whether value is a sparse HLL whose runs end in an XZERO cut after
    its first byte.

    Redis reads the missing byte as the string's NUL terminator, as
    goblind reads 0; but when PFADD or PFMERGE splits that XZERO, Redis
    writes the new runs from its first byte on, so their last byte lands
    on the terminator, past the string's new end (sdsIncrLen comes before
    the memcpy in hllSparseSet). Later reads of the cut run see that byte,
    which is no part of the value (GET, DUMP and a reload do not carry
    it): Redis's answers then depend on memory outside the string, so no
    command that edits such a value is compared."""
    if len(value) < 16 or value[:5] != b"HYLL\x01":
        return False
    p = 16
    while p < len(value):
        if value[p] & 0xc0 == 0x40:
            if p == len(value) - 1:
                return True
            p += 2
        else:
            p += 1
    return False


def probes(r, edits=True):
    """The commands sent once hll:k is corrupted, in a random order;
    without edits, none that splits a run of hll:k."""
    cmds = [
        [b"PFCOUNT", b"hll:k"],
        [b"PFCOUNT", b"hll:k", b"hll:o"],
        [b"PFADD", b"hll:k", b"p%d" % r.randrange(10**6)],
        [b"PFADD", b"hll:k"] + [b"q%d" % r.randrange(10**6)
                                for _ in range(r.choice([2, 10, 100]))],
        [b"PFMERGE", b"hll:d", b"hll:k", b"hll:o"],
        [b"PFMERGE", b"hll:k", b"hll:o"],
        [b"PFDEBUG", b"GETREG", b"hll:k"],
        [b"PFDEBUG", b"DECODE", b"hll:k"],
        [b"PFDEBUG", b"ENCODING", b"hll:k"],
        [b"PFDEBUG", b"TODENSE", b"hll:k"],
    ]
    if not edits:
        cmds = [c for c in cmds if c[:2] not in (
            [b"PFADD", b"hll:k"], [b"PFMERGE", b"hll:k"])]
    picked = r.sample(cmds, r.randint(3, len(cmds)))
    out = []
    for c in picked:
        out += [c, [b"GET", b"hll:k"]]
    return out + [[b"GET", b"hll:d"], [b"PFCOUNT", b"hll:k"]]


def show(reply):
    text = repr(reply)
    return text if len(text) < 300 else text[:300] + "..."


def round_trip(gc, rc, cmds, where, fails):
    a, b = gc.pipeline(cmds), rc.pipeline(cmds)
    for cmd, x, y in zip(cmds, a, b):
        if x != y:
            fails.check(False, "%s %r:\n  redis-server: %s\n  goblind:      %s"
                        % (where, b" ".join(cmd)[:120], show(y), show(x)))
            return False
    return True


def test_corrupted_hlls():
    g, rs = e2e.goblind(GOBLIND), e2e.redis_server()
    gc, rc = g.client(), rs.client()
    fails = e2e.Failures()
    for seed in SEEDS:
        for dense in (False, True):
            r = random.Random(seed * 2 + dense)
            for i in range(ROUNDS):
                where = "seed %d %s round %d" % (
                    seed, "dense" if dense else "sparse", i)
                cmds = build(r, dense) + [[b"GET", b"hll:k"]]
                rc_build = rc.pipeline(cmds)
                gc.pipeline(cmds)
                value = rc_build[-1][1]
                cmds = corrupt(r, value) + [[b"GET", b"hll:k"]]
                if round_trip(gc, rc, cmds, where, fails):
                    bad = rc.call("GET", "hll:k")[1]
                    edits = bad is None or not cut_xzero(bad)
                    if not round_trip(gc, rc, probes(r, edits), where,
                                      fails):
                        print("  corrupted value: %s" % (
                            bad.hex() if bad is not None else None))
                for c in (gc, rc):
                    fails.eq(c.call("PING"), ("+", b"PONG"), where + " PING")
                if len(fails.items) > 5:
                    fails.finish()
    fails.finish()
    e2e.check_stopped_cleanly(g)


if __name__ == "__main__":
    e2e.run_tests([test_corrupted_hlls])
