"""repl_data.py - what the export and replication tests share: a seeded
fill that writes every type Goblin holds (strings raw and integer,
hashes, sorted sets with awkward scores, lists, sets of integers and of
text, small and large) into several databases, some keys with a
deadline, and an exact dump of a server's keyspace (every database, key,
type, value and absolute deadline) to compare two servers by."""
import random

import e2e

DBS = (0, 1, 3)
SCORES = (b"0", b"-0", b"1.5", b"inf", b"-inf", b"1e308", b"0.1", b"-3",
          b"123456789012")


def fill(c, seed=1, n=60, big=300):
    """Writes about n keys of every type into each of DBS; returns how
    many keys it wrote."""
    rnd = random.Random(seed)
    count = 0
    for db in DBS:
        c.call(b"SELECT", str(db).encode())
        for i in range(n):
            size = big if i % 17 == 0 else rnd.randint(1, 8)
            k = b"%d:%d:" % (db, i)
            kind = i % 6
            if kind == 0:
                v = rnd.choice([b"%d" % rnd.randint(-10**12, 10**12),
                                b"x" * rnd.randint(0, 100),
                                bytes(rnd.randrange(256) for _ in range(20))
                                + b"\r\n\0"])
                c.call(b"SET", k + b"s", v)
                k += b"s"
            elif kind == 1:
                args = []
                for j in range(size):
                    args += [b"f%d" % j, b"v%d" % rnd.randint(0, 10**6)]
                c.call(b"HSET", k + b"h", *args)
                k += b"h"
            elif kind == 2:
                args = []
                for j in range(size):
                    args += [rnd.choice(SCORES) if j < 9 else
                             b"%d" % rnd.randint(-100, 100), b"m%d" % j]
                c.call(b"ZADD", k + b"z", *args)
                k += b"z"
            elif kind == 3:
                c.call(b"RPUSH", k + b"l",
                       *[b"e%d" % rnd.randint(0, 99) for _ in range(size)])
                k += b"l"
            elif kind == 4:
                c.call(b"SADD", k + b"i",
                       *[b"%d" % rnd.randint(-5000, 5000)
                         for _ in range(size)])
                k += b"i"
            else:
                c.call(b"SADD", k + b"t",
                       *[b"t%d" % rnd.randint(0, 10**6)
                         for _ in range(size)])
                k += b"t"
            if rnd.random() < 0.3:
                c.call(b"PEXPIRE", k, b"%d" % rnd.randint(600000, 9000000))
            count += 1
    c.call(b"SELECT", b"0")
    return count


def dump(c, dbs=DBS):
    """{(db, key): (type, value, pexpiretime)} of every key in dbs."""
    out = {}
    for db in dbs:
        c.call(b"SELECT", str(db).encode())
        for k in e2e.plain(c.call(b"KEYS", b"*")):
            t = e2e.plain(c.call(b"TYPE", k))
            if t == b"string":
                v = e2e.plain(c.call(b"GET", k))
            elif t == b"hash":
                v = e2e.plain(c.call(b"HGETALL", k))
                v = sorted(zip(v[0::2], v[1::2]))
            elif t == b"zset":
                v = e2e.plain(c.call(b"ZRANGE", k, b"0", b"-1",
                                     b"WITHSCORES"))
                v = [(m, float(s)) for m, s in zip(v[0::2], v[1::2])]
            elif t == b"list":
                v = e2e.plain(c.call(b"LRANGE", k, b"0", b"-1"))
            elif t == b"set":
                v = sorted(e2e.plain(c.call(b"SMEMBERS", k)))
            else:
                v = None
            out[(db, k)] = (t, v, e2e.plain(c.call(b"PEXPIRETIME", k)))
    c.call(b"SELECT", b"0")
    return out


def differences(a, b, names=("first", "second")):
    """None when the dumps agree, else a text naming what differs."""
    if a == b:
        return None
    lines = ["keyspaces differ (%d vs %d keys):" % (len(a), len(b))]
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            lines.append("  %r\n    %s: %.200r\n    %s: %.200r" % (
                k, names[0], a.get(k), names[1], b.get(k)))
            if len(lines) > 12:
                break
    return "\n".join(lines)
