"""test_differential.py - the same seeded random command sequence sent to a
real redis-server and to goblind; every reply must match.

    /usr/bin/python3 test_differential.py GOBLIND [--seed N] [--count N]
                                      [--against-redis] [--keep-going]

Coverage: strings, hashes, sorted sets, lists, sets, keyspace and expiry, including
tricky scores (inf, -inf, -0.0, 1e308, 0.1, integer-valued floats), binary
values with NUL and CRLF inside, wrong-type errors, arity errors, syntax
errors, INCR overflow, ZADD flag combinations and expiry (far-future and
past absolute times, short TTLs waited out).

Replies are compared exactly, with three documented exceptions where Redis
itself leaves room:
  * order-insensitive where Redis does not specify order (HGETALL, HKEYS,
    HVALS, KEYS, a full SCAN, RESP3 maps and sets);
  * scores compared by numeric value: Debian's Redis 7.0 prints 17
    significant digits (0.10000000000000001) where Goblin prints the
    shortest text that reads back to the same double (0.1);
  * remaining times (TTL, PTTL, EXPIRETIME...) within 2 s, since the two
    servers see each command at slightly different moments.
INCRBYFLOAT/HINCRBYFLOAT values (Redis computes in long double) live on
their own keys and are compared within a relative 1e-9.

SORT_RO runs with BY, GET, LIMIT, DESC and ALPHA (orders Redis leaves
open compared as multisets, see sort_form), and SORT ... STORE in the
orders Redis fixes (the stored lists are compared with the keyspace);
RANDOMKEY, HRANDFIELD and ZRANDMEMBER are left out, as their replies
are random in both servers. SRANDMEMBER and SPOP are compared by what is
deterministic: the reply's type and size, and that every member returned
belongs to the set (SPOP's members are then added back on each server, so
both keyspaces stay the same). SSCAN runs whole scans, compared as sets.

Last, TIME (microseconds), INFO redis_version and HELLO's version are
checked against redis-server's, and goblind's INFO must carry
goblin_version.

The sequence runs over RESP2, then continues over RESP3 (HELLO 3) on new
connections, then checks short TTLs, then three fixed lists compared byte
for byte: transactions (MULTI with queued and refused commands, the
EXECABORT that follows, DISCARD), SORT_RO's and SORT ... STORE's fixed
cases, SORT's BY and GET under ACL users limited to key patterns and
the @list, @set and @blocking categories taken away (new connections),
score edges (inf, -inf, -0 and the NaN
they make through WEIGHTS, AGGREGATE, ZINCRBY and ZADD INCR, the sign of
zero in both encodings), numbered databases (SELECT, MOVE, COPY of
every type, SWAPDB, FLUSHDB, WATCH across databases), DUMP of every
type on each server RESTOREd in the other (same values, encodings and
deadlines; RESTORE's refusals), and which
commands leave a key's access time
alone (OBJECT IDLETIME after one 3 s wait, compared only as 'recent' or
'idle'); then compares a full dump. On the
first difference it prints the command, both replies and the commands
just before it, and fails.

--keep-going (for diagnosis) prints every difference instead of stopping
at the first; later ones may follow from earlier ones.

--against-redis runs a second redis-server in goblind's place: a self
check of the generator and the comparison (it must always pass).
"""

import math
import random
import sys
import time

import diff_bits
import diff_scripts
import e2e

SEED = 20240601
COUNT = 20000
RESP3_COUNT = 5000
# Commands per pipeline. A batch runs whole on redis-server before it runs
# on goblind, so a relative TTL set inside it lands later on goblind by up
# to one batch's time: small batches keep that well inside the 2 s the
# comparison allows, even on a loaded machine.
BATCH = 50

# ------------------------------------------------------------- the data

S_KEYS = [b"s:%d" % i for i in range(7)] + [b"s:\x00bin\r\nkey"]
H_KEYS = [b"h:%d" % i for i in range(6)]
Z_KEYS = [b"z:%d" % i for i in range(6)]
# Lex ranges are specified only when every score is equal: these sorted
# sets only ever get score 0, and only they get BYLEX and *LEX commands.
ZL_KEYS = [b"zl:%d" % i for i in range(2)]
M_KEYS = [b"m:%d" % i for i in range(4)]     # any type: wrong-type errors
F_KEYS = [b"f:%d" % i for i in range(3)]     # INCRBYFLOAT only
FH_KEYS = [b"fh:%d" % i for i in range(2)]   # HINCRBYFLOAT only
X_KEYS = [b"x:%d" % i for i in range(12)]    # expiry playground
L_KEYS = [b"l:%d" % i for i in range(6)]
T_KEYS = [b"t:%d" % i for i in range(5)]     # sets of any members
TI_KEYS = [b"ti:%d" % i for i in range(3)]   # sets mostly of integers
GENERIC = (S_KEYS + H_KEYS + Z_KEYS + M_KEYS + X_KEYS + L_KEYS + T_KEYS +
           TI_KEYS)
ALL_KEYS = GENERIC + F_KEYS + FH_KEYS + ZL_KEYS

MEMBERS = [b"m%d" % i for i in range(14)] + [
    b"", b"a b", b"\x00nul", b"cr\r\nlf", b"\xff\xfe", "ünï".encode(),
    b"1.5", b"-inf"]

INT_TEXTS = [b"0", b"1", b"-1", b"10", b"9223372036854775807",
             b"-9223372036854775808", b"9223372036854775806",
             b"-9223372036854775807", b"9223372036854775808", b" 5", b"5 ",
             b"007", b"+5", b"-0", b"1e3", b"", b"abc", b"0x10", b"12.0"]

SCORES = [b"inf", b"-inf", b"+inf", b"-0.0", b"0", b"1e308", b"-1e308",
          b"0.1", b"1.5", b"3", b"3.0", b"-2.5", b"1e-300", b"17",
          b"1000000", b"-7", b"2.5e10", b"0.30000000000000004", b"1e+20",
          b"123456789012345678", b"4.0000000000000001", b"+3", b" 3"]
BAD_SCORES = [b"nan", b"abc", b"", b"1.5x", b"--1", b"NaN", b"inf inf"]

RANGE_BOUNDS = [b"-inf", b"+inf", b"inf", b"(1", b"1", b"(0", b"0", b"3",
                b"(3", b"10", b"(-inf", b"5.5", b"(1e308", b"-2.5", b"17"]
LEX_BOUNDS = [b"-", b"+", b"[m1", b"(m3", b"[m12", b"(m", b"[", b"(",
              b"[a b", b"(\xff"]


class Gen:
    """Seeded generator of commands (lists of bytes)."""

    def __init__(self, seed, base_ms):
        self.r = random.Random(seed)
        self.base_ms = base_ms
        self.table = self._table()
        self.weights = [w for w, _ in self.table]

    # helpers
    def pick(self, seq):
        return self.r.choice(seq)

    def chance(self, p):
        return self.r.random() < p

    def num(self, lo, hi):
        return b"%d" % self.r.randint(lo, hi)

    def value(self):
        k = self.r.random()
        if k < 0.3:
            return self.num(-100, 100)
        if k < 0.45:
            return self.pick(INT_TEXTS)
        if k < 0.75:
            n = self.r.randint(0, 24)
            alphabet = b"ab c\x00\r\n\xff\t\"'\\xyz0123"
            return bytes(self.r.choice(alphabet) for _ in range(n))
        if k < 0.97:
            return self.pick([b"hello", b"world", b"", b"x" * 40,
                              "grüße".encode(), b"a\r\nb", b"\x00"])
        return bytes(self.r.randrange(256)) * self.r.randint(100, 3000)

    def member(self):
        return self.pick(MEMBERS)

    def field(self):
        return self.pick(MEMBERS[:10] + [b"f\x00", b"\r\n", b"num"])

    def score(self):
        k = self.r.random()
        if k < 0.4:
            return self.pick(SCORES)
        if k < 0.7:
            return self.num(-20, 20)
        if k < 0.97:
            return repr(round(self.r.uniform(-100, 100),
                              self.r.randint(0, 6))).encode()
        return self.pick(BAD_SCORES)

    def key(self, pool=None):
        if pool is None or self.chance(0.04):
            return self.pick(GENERIC)
        return self.pick(pool)

    def skey(self):
        return self.key(S_KEYS)

    def hkey(self):
        return self.key(H_KEYS)

    def zkey(self):
        return self.key(Z_KEYS)

    def zkey_any(self):
        """For commands that keep scores as they are."""
        return self.key(Z_KEYS + ZL_KEYS)

    def zlkey(self):
        """A lex-safe sorted set, or now and then a key that can never be
        a sorted set (for WRONGTYPE): any other key may be one with mixed
        scores after a RENAME."""
        if self.chance(0.04):
            return self.pick(F_KEYS + FH_KEYS)
        return self.pick(ZL_KEYS)

    def index(self):
        return self.pick([b"0", b"1", b"-1", b"2", b"-2", b"5", b"100",
                          b"-100", b"3", b"x"])

    def ttl_s(self):
        return self.pick([b"1000", b"5000", b"100000", b"0", b"-5", b"x",
                          b"9223372036854775807", b"2000"])

    def future_ms(self):
        return b"%d" % (self.base_ms + self.r.randint(10**6, 10**9))

    def past_ms(self):
        return b"%d" % self.r.randint(1, self.base_ms - 10**6)

    # --------------------------------------------------------- strings
    def c_set(self):
        cmd = [b"SET", self.skey(), self.value()]
        opts = [[b"EX", self.ttl_s()], [b"PX", b"9000000"], [b"NX"],
                [b"XX"], [b"GET"], [b"KEEPTTL"],
                [b"EXAT", b"%d" % (self.base_ms // 1000 + 10**6)],
                [b"PXAT", self.future_ms()], [b"PX", b"0"], [b"BOGUS"]]
        for _ in range(self.r.choice([0, 0, 1, 1, 2, 3])):
            cmd += self.pick(opts)
        return cmd

    def c_get(self):
        return [b"GET", self.skey()]

    def c_getset(self):
        return [b"GETSET", self.skey(), self.value()]

    def c_setnx(self):
        return [b"SETNX", self.skey(), self.value()]

    def c_setex(self):
        return [self.pick([b"SETEX", b"PSETEX"]), self.skey(),
                self.pick([b"100000", b"0", b"-1", b"x"]), self.value()]

    def c_mset(self):
        cmd = [self.pick([b"MSET", b"MSET", b"MSETNX"])]
        for _ in range(self.r.randint(1, 4)):
            cmd += [self.skey(), self.value()]
        if self.chance(0.05):
            cmd.pop()
        return cmd

    def c_mget(self):
        return [b"MGET"] + [self.skey() for _ in range(self.r.randint(1, 5))]

    def c_append(self):
        return [b"APPEND", self.skey(), self.value()]

    def c_strlen(self):
        return [b"STRLEN", self.skey()]

    def c_getrange(self):
        return [self.pick([b"GETRANGE", b"SUBSTR"]), self.skey(),
                self.index(), self.index()]

    def c_setrange(self):
        return [b"SETRANGE", self.skey(),
                self.pick([b"0", b"3", b"10", b"-1", b"x"]), self.value()]

    def c_incr(self):
        op = self.pick([b"INCR", b"DECR", b"INCRBY", b"DECRBY"])
        cmd = [op, self.skey()]
        if op.endswith(b"BY"):
            cmd.append(self.pick(INT_TEXTS + [self.num(-50, 50)] * 6))
        return cmd

    def c_setint(self):
        return [b"SET", self.skey(), self.pick(INT_TEXTS[:9])]

    def c_getdel(self):
        return [b"GETDEL", self.skey()]

    def c_getex(self):
        cmd = [b"GETEX", self.skey()]
        cmd += self.pick([[], [b"EX", b"100000"], [b"PX", b"9000000"],
                          [b"PERSIST"], [b"EXAT", b"1"], [b"EX", b"0"],
                          [b"PXAT", self.future_ms()], [b"FOO"]])
        return cmd

    def c_incrbyfloat(self):
        incr = self.pick([b"0.1", b"1.5", b"-2.25", b"10", b"3e2", b"-0.5",
                          b"abc", b"inf", b"", b"1e-3"])
        return [b"INCRBYFLOAT", self.pick(F_KEYS + [self.hkey()]), incr]

    # ---------------------------------------------------------- hashes
    def c_hset(self):
        cmd = [self.pick([b"HSET", b"HSET", b"HMSET"]), self.hkey()]
        for _ in range(self.r.randint(1, 4)):
            cmd += [self.field(), self.value()]
        if self.chance(0.04):
            cmd.pop()
        return cmd

    def c_hsetnx(self):
        return [b"HSETNX", self.hkey(), self.field(), self.value()]

    def c_hget(self):
        return [b"HGET", self.hkey(), self.field()]

    def c_hmget(self):
        return [b"HMGET", self.hkey()] + [
            self.field() for _ in range(self.r.randint(1, 4))]

    def c_hdel(self):
        return [b"HDEL", self.hkey()] + [
            self.field() for _ in range(self.r.randint(1, 3))]

    def c_hlen(self):
        return [self.pick([b"HLEN", b"HEXISTS", b"HSTRLEN"]),
                self.hkey()] + ([] if self.chance(0.3) else [self.field()])

    def c_hgetall(self):
        return [self.pick([b"HGETALL", b"HKEYS", b"HVALS"]), self.hkey()]

    def c_hincrby(self):
        return [b"HINCRBY", self.hkey(), self.field(),
                self.pick(INT_TEXTS[:11] + [self.num(-9, 9)] * 6)]

    def c_hincrbyfloat(self):
        return [b"HINCRBYFLOAT", self.pick(FH_KEYS + [self.zkey()]),
                self.pick([b"a", b"b", b"c"]),
                self.pick([b"0.5", b"-1.25", b"7", b"abc", b"inf", b"1e2"])]

    # ----------------------------------------------------- sorted sets
    def c_zadd(self):
        cmd = [b"ZADD", self.zkey()]
        flags = [b"NX", b"XX", b"GT", b"LT", b"CH", b"INCR"]
        for f in flags:
            if self.chance(0.12):
                cmd.append(f if self.chance(0.8) else f.lower())
        n = 1 if b"INCR" in cmd and self.chance(0.8) else \
            self.r.randint(1, 5)
        for _ in range(n):
            cmd += [self.score(), self.member()]
        if self.chance(0.03):
            cmd.pop()
        return cmd

    def c_zadd_lex(self):
        cmd = [b"ZADD", self.pick(ZL_KEYS)]
        for f in (b"NX", b"XX", b"CH"):
            if self.chance(0.1):
                cmd.append(f)
        for _ in range(self.r.randint(1, 4)):
            cmd += [self.pick([b"0", b"0.0", b"-0"]), self.member()]
        return cmd

    def c_zincrby(self):
        return [b"ZINCRBY", self.zkey(), self.score(), self.member()]

    def c_zscore(self):
        return [b"ZSCORE", self.zkey_any(), self.member()]

    def c_zmscore(self):
        return [b"ZMSCORE", self.zkey_any()] + [
            self.member() for _ in range(self.r.randint(1, 4))]

    def c_zcard(self):
        return [b"ZCARD", self.zkey_any()]

    def c_zrank(self):
        return [self.pick([b"ZRANK", b"ZREVRANK"]), self.zkey_any(),
                self.member()]

    def c_zcount(self):
        return [b"ZCOUNT", self.zkey(), self.pick(RANGE_BOUNDS),
                self.pick(RANGE_BOUNDS + [b"(x"])]

    def c_zlexcount(self):
        return [b"ZLEXCOUNT", self.zlkey(), self.pick(LEX_BOUNDS),
                self.pick(LEX_BOUNDS + [b"m1"])]

    def _limit(self):
        if self.chance(0.3):
            return [b"LIMIT", self.pick([b"0", b"1", b"2", b"-1", b"5"]),
                    self.pick([b"1", b"2", b"-1", b"0", b"10"])]
        return []

    def c_zrange(self):
        k = self.r.random()
        cmd = [b"ZRANGE", self.zkey_any() if k < 0.75 else self.zlkey()]
        if k < 0.4:
            cmd += [self.index(), self.index()]
            if self.chance(0.3):
                cmd.append(b"REV")
        elif k < 0.75:
            cmd += [self.pick(RANGE_BOUNDS), self.pick(RANGE_BOUNDS),
                    b"BYSCORE"]
            if self.chance(0.3):
                cmd.append(b"REV")
            cmd += self._limit()
        else:
            cmd += [self.pick(LEX_BOUNDS), self.pick(LEX_BOUNDS), b"BYLEX"]
            if self.chance(0.3):
                cmd.append(b"REV")
            cmd += self._limit()
            if self.chance(0.05):
                cmd.append(b"WITHSCORES")
            return cmd
        if self.chance(0.5):
            cmd.append(b"WITHSCORES")
        if self.chance(0.03):
            cmd.append(self.pick([b"LIMIT", b"BOGUS", b"REV"]))
        return cmd

    def c_zrange_legacy(self):
        op = self.pick([b"ZREVRANGE", b"ZRANGEBYSCORE", b"ZREVRANGEBYSCORE",
                        b"ZRANGEBYLEX", b"ZREVRANGEBYLEX"])
        cmd = [op, self.zlkey() if b"LEX" in op else self.zkey_any()]
        if op == b"ZREVRANGE":
            cmd += [self.index(), self.index()]
        elif b"LEX" in op:
            cmd += [self.pick(LEX_BOUNDS), self.pick(LEX_BOUNDS)]
            cmd += self._limit()
            return cmd
        else:
            cmd += [self.pick(RANGE_BOUNDS), self.pick(RANGE_BOUNDS)]
        if self.chance(0.5):
            cmd.append(b"WITHSCORES")
        if op != b"ZREVRANGE":
            cmd += self._limit()
        return cmd

    def c_zrem(self):
        return [b"ZREM", self.zkey_any()] + [
            self.member() for _ in range(self.r.randint(1, 3))]

    def c_zremrange(self):
        op = self.pick([b"ZREMRANGEBYRANK", b"ZREMRANGEBYSCORE",
                        b"ZREMRANGEBYLEX"])
        if op == b"ZREMRANGEBYRANK":
            args = [self.index(), self.index()]
        elif op == b"ZREMRANGEBYSCORE":
            args = [self.pick(RANGE_BOUNDS), self.pick(RANGE_BOUNDS)]
        else:
            return [op, self.zlkey(), self.pick(LEX_BOUNDS),
                    self.pick(LEX_BOUNDS)]
        return [op, self.zkey_any()] + args

    def c_zpop(self):
        cmd = [self.pick([b"ZPOPMIN", b"ZPOPMAX"]), self.zkey_any()]
        if self.chance(0.6):
            cmd.append(self.pick([b"1", b"2", b"0", b"5", b"-1", b"x"]))
        return cmd

    # ----------------------------------------------------------- lists
    def lkey(self):
        return self.key(L_KEYS)

    def elem(self):
        """Mostly short elements that repeat (for LREM, LPOS, LINSERT);
        now and then one past the 255-byte short form, rarely one past a
        whole block, never the huge values of value()."""
        k = self.r.random()
        if k < 0.5:
            return self.pick(MEMBERS[:8])
        if k < 0.97:
            return self.value()[:40]
        return b"L%d" % self.r.randint(0, 9) * self.r.randint(100, 3000)

    def c_lpush(self):
        op = self.pick([b"LPUSH", b"RPUSH", b"LPUSH", b"RPUSH", b"LPUSHX",
                        b"RPUSHX"])
        n = self.r.randint(1, 4) if self.chance(0.9) else \
            self.r.randint(50, 200)
        return [op, self.lkey()] + [self.elem() for _ in range(n)]

    def c_lpop(self):
        cmd = [self.pick([b"LPOP", b"RPOP"]), self.lkey()]
        if self.chance(0.5):
            cmd.append(self.pick([b"0", b"1", b"2", b"5", b"100", b"-1",
                                  b"x"]))
        return cmd

    def c_llen(self):
        return [b"LLEN", self.lkey()]

    def c_lindex(self):
        return [b"LINDEX", self.lkey(), self.index()]

    def c_lset(self):
        return [b"LSET", self.lkey(), self.index(), self.elem()]

    def c_lrange(self):
        return [b"LRANGE", self.lkey(), self.index(), self.index()]

    def c_ltrim(self):
        return [b"LTRIM", self.lkey(), self.pick([b"0", b"1", b"2", b"-5"]),
                self.pick([b"-1", b"-2", b"100", b"50", b"1", b"x"])]

    def c_linsert(self):
        return [b"LINSERT", self.lkey(),
                self.pick([b"BEFORE", b"AFTER", b"after", b"middle"]),
                self.elem(), self.elem()]

    def c_lrem(self):
        return [b"LREM", self.lkey(),
                self.pick([b"0", b"1", b"-1", b"2", b"-2", b"x"]),
                self.elem()]

    def c_lpos(self):
        cmd = [b"LPOS", self.lkey(), self.elem()]
        opts = [[b"RANK", self.pick([b"1", b"2", b"-1", b"-3", b"0",
                                     b"-9223372036854775808"])],
                [b"COUNT", self.pick([b"0", b"1", b"3", b"-1"])],
                [b"MAXLEN", self.pick([b"0", b"2", b"10", b"-1"])],
                [b"BOGUS"]]
        for _ in range(self.r.choice([0, 1, 1, 2, 3])):
            cmd += self.pick(opts)
        return cmd

    # ------------------------------------------------------------ sets
    def tkey(self):
        return self.key(T_KEYS + TI_KEYS)

    def smember(self, key=None):
        if key in TI_KEYS and self.chance(0.9):
            return self.num(-300, 700)
        k = self.r.random()
        if k < 0.35:
            return self.num(-20, 40)
        if k < 0.5:
            return self.pick(INT_TEXTS)
        if k < 0.97:
            return self.member()
        return b"y" * self.r.randint(60, 70)

    def c_sadd(self):
        k = self.tkey()
        n = self.r.randint(1, 4)
        if self.chance(0.03):
            n = self.r.randint(100, 600)   # past the compact limits
        return [b"SADD", k] + [self.smember(k) for _ in range(n)]

    def c_srem(self):
        k = self.tkey()
        return [b"SREM", k] + [self.smember(k)
                               for _ in range(self.r.randint(1, 4))]

    def c_sread(self):
        k = self.tkey()
        op = self.pick([b"SISMEMBER", b"SMISMEMBER", b"SCARD", b"SMEMBERS",
                        b"SMISMEMBER"])
        if op == b"SISMEMBER":
            return [op, k, self.smember(k)]
        if op == b"SMISMEMBER":
            return [op, k] + [self.smember(k)
                              for _ in range(self.r.randint(1, 4))]
        return [op, k]

    def c_smove(self):
        k = self.tkey()
        return [b"SMOVE", k, self.tkey(), self.smember(k)]

    def c_scombine(self):
        op = self.pick([b"SINTER", b"SUNION", b"SDIFF", b"SINTERSTORE",
                        b"SUNIONSTORE", b"SDIFFSTORE", b"SINTERCARD"])
        keys = [self.tkey() for _ in range(self.r.randint(1, 3))]
        if op.endswith(b"STORE"):
            return [op, self.tkey()] + keys
        if op == b"SINTERCARD":
            cmd = [op, self.pick([b"%d" % len(keys)] * 6 +
                                 [b"0", b"x", b"9"])] + keys
            if self.chance(0.4):
                cmd += [b"LIMIT", self.pick([b"0", b"1", b"2", b"-1",
                                             b"x"])]
            return cmd
        return [op] + keys

    def c_srandom(self):
        k = self.tkey()
        if self.chance(0.2):
            return [b"SRANDMEMBER-CHECK", k]
        return [b"SRANDMEMBER-CHECK", k,
                self.pick([b"0", b"1", b"3", b"-3", b"100", b"-100", b"x",
                           b"-9223372036854775808"])]

    def c_spop(self):
        k = self.tkey()
        if self.chance(0.3):
            return [b"SPOP-RESTORE", k]
        return [b"SPOP-RESTORE", k,
                self.pick([b"0", b"1", b"2", b"1000", b"-1", b"x"])]

    def c_sscan(self):
        return [b"SSCAN-ALL", self.tkey(),
                self.pick([b"*", b"1*", b"m*", b"*x*"])]

    def c_sencoding(self):
        return [b"OBJECT", b"ENCODING", self.tkey()]

    # ------------------------------------------------------------ SORT
    def c_sortdata(self):
        """Weights for SORT's BY and GET patterns: w:<member> strings (now
        and then not a number), wh:<member> hashes with field f."""
        m = self.smember(self.pick(TI_KEYS)) if self.chance(0.5) \
            else self.member()
        v = self.pick([self.num(-50, 50), self.num(-50, 50), b"1.5",
                       b"abc", b"", b" 7", b"inf"])
        if self.chance(0.5):
            return [b"SET", b"w:" + m, v]
        return [b"HSET", b"wh:" + m, b"f", v]

    def c_sort(self):
        key = self.pick(T_KEYS + TI_KEYS + Z_KEYS + [self.key()])
        cmd = [b"SORT_RO", key]
        opts = [[b"BY", b"w:*"], [b"BY", b"wh:*->f"], [b"BY", b"nosort"],
                [b"GET", b"#"], [b"GET", b"w:*"], [b"GET", b"wh:*->f"],
                [b"GET", b"nokey"], [b"LIMIT", self.num(-1, 5),
                                     self.num(-1, 5)],
                [b"ASC"], [b"DESC"], [b"ALPHA"], [b"ALPHA"], [b"ALPHA"],
                [b"LIMIT", b"x", b"1"], [b"BOGUS"]]
        for _ in range(self.r.choice([0, 1, 1, 2, 3])):
            cmd += self.pick(opts)
        return cmd

    def c_sort_store(self):
        """SORT ... STORE into a list key (or over a key of another type,
        which it replaces): only orders Redis fixes, since the stored
        list is compared exactly (no ALPHA with a BY pattern, whose ties
        Redis's qsort leaves open)."""
        key = self.pick(T_KEYS + TI_KEYS + Z_KEYS + L_KEYS + [self.key()])
        cmd = [b"SORT", key]
        by = self.pick([None, None, [b"BY", b"w:*"], [b"BY", b"wh:*->f"],
                        [b"BY", b"nosort"]])
        if by is not None:
            cmd += by
        for _ in range(self.r.choice([0, 1, 2])):
            cmd += self.pick([[b"GET", b"#"], [b"GET", b"w:*"],
                              [b"GET", b"wh:*->f"], [b"GET", b"nokey"],
                              [b"LIMIT", self.num(-1, 5), self.num(-1, 5)],
                              [b"DESC"]])
        if by is None and self.chance(0.4):
            cmd.append(b"ALPHA")
        dst = self.pick(L_KEYS + L_KEYS + [self.pick(T_KEYS),
                                           self.pick(S_KEYS)])
        return cmd + [b"STORE", dst]

    def c_lmove(self):
        ends = [b"LEFT", b"RIGHT", b"left", b"right", b"UP"]
        if self.chance(0.3):
            return [b"RPOPLPUSH", self.lkey(), self.lkey()]
        return [b"LMOVE", self.lkey(), self.lkey(), self.pick(ends),
                self.pick(ends)]

    def c_lmpop(self):
        n = self.r.randint(1, 3)
        cmd = [b"LMPOP", self.pick([b"%d" % n] * 8 + [b"0", b"x", b"9"])]
        cmd += [self.lkey() for _ in range(n)]
        cmd.append(self.pick([b"LEFT", b"RIGHT", b"middle"]))
        if self.chance(0.5):
            cmd += [b"COUNT", self.pick([b"1", b"3", b"0", b"-1", b"x"])]
        if self.chance(0.05):
            cmd += [b"COUNT", b"2"]
        return cmd

    def c_zmpop(self):
        keys = [self.zkey_any() for _ in range(self.r.randint(1, 3))]
        n = self.pick([b"%d" % len(keys)] * 6 + [b"0", b"x", b"9"])
        cmd = [b"ZMPOP", n] + keys + [self.pick([b"MIN", b"MAX", b"max",
                                                 b"mid"])]
        if self.chance(0.5):
            cmd += [b"COUNT", self.pick([b"1", b"3", b"0", b"-1", b"x"])]
        if self.chance(0.05):
            cmd.append(b"COUNT")
        return cmd

    # The blocking forms with timeouts refused before any key is looked
    # at (blocking itself is the blocking() stage: a random sequence that
    # waited for timeouts would drift the two servers' clocks apart).
    def c_bzpop(self):
        t = self.pick([b"-1", b"x", b"nan", b"inf", b"1e30", b"-0.5",
                       b""])
        if self.chance(0.5):
            return [self.pick([b"BZPOPMIN", b"BZPOPMAX"]), self.zkey_any(),
                    t]
        return [b"BZMPOP", t, b"1", self.zkey_any(),
                self.pick([b"MIN", b"MAX", b"x"])]

    # -------------------------------------------------------- keyspace
    def c_del(self):
        return [self.pick([b"DEL", b"UNLINK"])] + [
            self.pick(ALL_KEYS) for _ in range(self.r.randint(1, 3))]

    def c_exists(self):
        return [b"EXISTS"] + [self.pick(ALL_KEYS)
                              for _ in range(self.r.randint(1, 3))]

    def c_type(self):
        return [b"TYPE", self.pick(ALL_KEYS)]

    def c_rename(self):
        pool = self.pick([S_KEYS, H_KEYS, Z_KEYS, X_KEYS, M_KEYS, F_KEYS,
                          FH_KEYS, ZL_KEYS, L_KEYS,
                          T_KEYS] +
                         [GENERIC] * (self.chance(0.1)))
        return [self.pick([b"RENAME", b"RENAMENX"]), self.pick(pool),
                self.pick(pool)]

    def c_keys(self):
        return [b"KEYS", self.pick([b"*", b"s:*", b"h:?", b"z:[0-2]",
                                    b"*:1", b"nomatch*", b"x:1*"])]

    def c_dbsize(self):
        return [b"DBSIZE"]

    def c_scan(self):
        return [b"SCAN-ALL", self.pick([b"*", b"z:*", b"?:1"])]

    # ---------------------------------------------------------- expiry
    def c_expire(self):
        op = self.pick([b"EXPIRE", b"PEXPIRE", b"EXPIREAT", b"PEXPIREAT"])
        key = self.key(X_KEYS)
        if op == b"EXPIRE":
            t = self.ttl_s()
        elif op == b"PEXPIRE":
            t = self.pick([b"9000000", b"100000000", b"0", b"-1"])
        elif op == b"EXPIREAT":
            t = self.pick([b"%d" % (self.base_ms // 1000 + 10**6), b"1",
                           b"%d" % (self.base_ms // 1000 - 100)])
        else:
            t = self.future_ms() if self.chance(0.7) else self.past_ms()
        cmd = [op, key, t]
        # GT and LT compare the new time with the current one: only with
        # absolute times is that free of which millisecond each server
        # ran the command in.
        flags = [b"NX", b"XX", b"FOO"]
        if op.endswith(b"AT"):
            flags += [b"GT", b"LT", b"GT", b"LT"]
        if self.chance(0.15):
            cmd.append(self.pick(flags))
        return cmd

    def c_ttl(self):
        return [self.pick([b"TTL", b"PTTL", b"EXPIRETIME", b"PEXPIRETIME"]),
                self.pick(X_KEYS + S_KEYS + [self.key()])]

    def c_persist(self):
        return [b"PERSIST", self.key(X_KEYS)]

    def c_xset(self):
        op = self.r.random()
        k = self.pick(X_KEYS)
        if op < 0.5:
            return [b"SET", k, self.value()]
        if op < 0.7:
            return [b"HSET", k, self.field(), self.value()]
        if op < 0.85:
            return [b"RPUSH", k, self.value()]
        return [b"ZADD", k, self.score(), self.member()]

    # ---------------------------------------------------------- errors
    def c_arity(self):
        return self.pick([[b"GET"], [b"SET", b"a"], [b"HSET", b"h:0"],
                          [b"HSET", b"h:0", b"f"], [b"ZADD", b"z:0"],
                          [b"ZADD", b"z:0", b"1"], [b"INCRBY", b"s:0"],
                          [b"ZRANGE", b"z:0", b"0"], [b"EXPIRE", b"x:0"],
                          [b"DEL"], [b"MGET"], [b"ZSCORE", b"z:0"],
                          [b"HGETALL"], [b"TTL"], [b"RENAME", b"a"],
                          [b"get", b"a", b"b"], [b"ZCARD"],
                          [b"NOSUCHCMD", b"x"], [b"dbsize", b"x"],
                          [b"LPUSH", b"l:0"], [b"LPOP"],
                          [b"LPOP", b"l:0", b"1", b"2"],
                          [b"LRANGE", b"l:0", b"0"], [b"LMPOP", b"1"],
                          [b"LMOVE", b"l:0", b"l:1", b"LEFT"],
                          [b"LINSERT", b"l:0", b"BEFORE", b"a"]])

    def c_misc(self):
        return self.pick([[b"PING"], [b"PING", b"hello\x00"],
                          [b"ECHO", b"bin\r\n\x00"], [b"ECHO"],
                          [b"EXISTS", b"nokey"]])

    def _table(self):
        t = [(6, self.c_set), (6, self.c_get), (1, self.c_getset),
             (1, self.c_setnx), (1, self.c_setex), (2, self.c_mset),
             (2, self.c_mget), (2, self.c_append), (1, self.c_strlen),
             (2, self.c_getrange), (1, self.c_setrange), (5, self.c_incr),
             (2, self.c_setint), (1, self.c_getdel), (1, self.c_getex),
             (2, self.c_incrbyfloat),
             (7, self.c_hset), (1, self.c_hsetnx), (4, self.c_hget),
             (2, self.c_hmget), (2, self.c_hdel), (2, self.c_hlen),
             (2, self.c_hgetall), (2, self.c_hincrby),
             (2, self.c_hincrbyfloat),
             (10, self.c_zadd), (3, self.c_zadd_lex), (3, self.c_zincrby),
             (4, self.c_zscore),
             (2, self.c_zmscore), (2, self.c_zcard), (4, self.c_zrank),
             (2, self.c_zcount), (1, self.c_zlexcount), (6, self.c_zrange),
             (3, self.c_zrange_legacy), (2, self.c_zrem),
             (1, self.c_zremrange), (2, self.c_zpop),
             (2, self.c_del), (2, self.c_exists), (2, self.c_type),
             (1, self.c_rename), (1, self.c_keys), (1, self.c_dbsize),
             (0.3, self.c_scan),
             (4, self.c_expire), (3, self.c_ttl), (1, self.c_persist),
             (4, self.c_xset),
             (6, self.c_lpush), (3, self.c_lpop), (1, self.c_llen),
             (2, self.c_lindex), (2, self.c_lset), (2, self.c_lrange),
             (1, self.c_ltrim), (2, self.c_linsert), (2, self.c_lrem),
             (2, self.c_lpos), (2, self.c_lmove), (2, self.c_lmpop),
             (2, self.c_arity), (0.5, self.c_misc),
             (8, self.c_sadd), (3, self.c_srem), (5, self.c_sread),
             (1, self.c_smove), (3, self.c_scombine), (2, self.c_srandom),
             (1, self.c_spop), (0.5, self.c_sscan), (1, self.c_sencoding),
             (2, self.c_sortdata), (3, self.c_sort),
             (2, self.c_sort_store)]
        return t

    def next(self):
        fn = self.r.choices(self.table, weights=self.weights)[0][1]
        return fn()


# ----------------------------------------------------------- comparison

SCORE_REPLY = {b"ZSCORE", b"ZINCRBY", b"ZMSCORE"}
WITHSCORES_REPLY = {b"ZPOPMIN", b"ZPOPMAX"}
UNORDERED = {b"HGETALL", b"HKEYS", b"HVALS", b"KEYS", b"SCAN-ALL",
             b"SMEMBERS", b"SINTER", b"SUNION", b"SDIFF", b"SSCAN-ALL"}
PSEUDO = {b"SCAN-ALL", b"SSCAN-ALL", b"SRANDMEMBER-CHECK", b"SPOP-RESTORE"}
LOOSE_TIME = {b"TTL", b"PTTL", b"EXPIRETIME", b"PEXPIRETIME"}
FLOATISH = {b"INCRBYFLOAT", b"HINCRBYFLOAT"}


def as_float(b):
    try:
        return float(b)
    except (TypeError, ValueError):
        return b


def score_form(reply):
    """A score reply (bulk text or RESP3 double) as a float."""
    t, v = reply
    if t in "$," and v is not None:
        return ("score", as_float(v))
    return reply


def has_withscores(cmd):
    return any(a.upper() == b"WITHSCORES" for a in cmd[1:])


def normalize(cmd, reply):
    """The reply in a form where equal means 'as Redis would accept'."""
    name = cmd[0].upper()
    t, v = reply
    if t == "-":
        return reply
    if name == b"ZADD" and any(a.upper() == b"INCR" for a in cmd):
        return score_form(reply)
    if name in SCORE_REPLY:
        if t in "*" and v is not None:
            return (t, [score_form(x) for x in v])
        return score_form(reply)
    if name in FLOATISH or (name == b"GET" and cmd[1] in F_KEYS):
        return ("float", as_float(v) if t in "$" else v)
    if name == b"HGET" and cmd[1] in FH_KEYS:
        return ("float", as_float(v) if t in "$" else v)
    if name in (b"ZMPOP", b"BZMPOP") and t == "*" and v is not None:
        return (t, [v[0], [(p[1][0], score_form(p[1][1]))
                           for p in v[1][1]]])
    if name in (b"BZPOPMIN", b"BZPOPMAX") and t == "*" and v is not None:
        return (t, [v[0], v[1], score_form(v[2])])
    if t in "*~" and v is not None and (
            name in WITHSCORES_REPLY or has_withscores(cmd)):
        if v and v[0][0] == "*":     # RESP3: [[member, score], ...]
            return (t, [(p[1][0][1], score_form(p[1][1])) for p in v])
        if name in WITHSCORES_REPLY and len(v) == 2 and v[1][0] == ",":
            return (t, [v[0], score_form(v[1])])
        return (t, [x if i % 2 == 0 else score_form(x)
                    for i, x in enumerate(v)])
    if name == b"HGETALL" and t == "*" and v is not None:
        return ("map", sorted(zip(v[0::2], v[1::2])))
    if t == "%":
        return ("map", sorted(v))
    if name in UNORDERED and t in "*~" and v is not None:
        return ("set", sorted(v))
    if name == b"SORT_RO" and t == "*" and v is not None:
        return sort_form(cmd, v)
    if t == "~":
        return ("set", sorted(v))
    return reply


def sort_form(cmd, v, other=()):
    """A SORT reply in the form Redis fixes: a set not sorted (a BY
    without '*') comes in the set's own order, so only its members are
    compared (only their count under LIMIT; exact_sort() checks a sorted
    set's own order); ALPHA compares C strings,
    so members equal up to a NUL byte, or BY values that tie, may come in
    either order: compared as a multiset (also when GET hides the
    members). other is the other server's reply to the same command: under
    LIMIT a tied member with a NUL may fall inside one server's window
    and outside the other's, so a NUL in either reply decides."""
    up = [x.upper() for x in cmd]
    nosort = any(b"*" not in cmd[i + 1] for i, x in enumerate(up[:-1])
                 if x == b"BY")
    # (A RENAME may have put a set under a z: key: the type is unknown.)
    if nosort:
        if b"LIMIT" in up:
            return ("count", len(v))
        return ("set", sorted(v, key=repr))
    if b"ALPHA" in up and (b"BY" in up or b"GET" in up or any(
            x[1] is not None and b"\x00" in x[1]
            for x in list(v) + list(other))):
        # Under LIMIT, which of the tied ones fall in the range is open.
        if b"LIMIT" in up:
            return ("count", len(v))
        return ("set", sorted(v, key=repr))
    return ("*", v)


def same(cmd, a, b):
    name = cmd[0].upper()
    if name in LOOSE_TIME and a[0] == ":" and b[0] == ":":
        if a[1] < 0 or b[1] < 0:
            return a == b
        slack = 2 if name in (b"TTL", b"EXPIRETIME") else 2000
        return abs(a[1] - b[1]) <= slack
    if name == b"SORT_RO" and a[0] == b[0] == "*" and None not in (
            a[1], b[1]):
        return sort_form(cmd, a[1], b[1]) == sort_form(cmd, b[1], a[1])
    na, nb = normalize(cmd, a), normalize(cmd, b)
    if na[0] == "float" and nb[0] == "float":
        x, y = na[1], nb[1]
        if isinstance(x, float) and isinstance(y, float):
            return x == y or abs(x - y) <= 1e-9 * max(abs(x), abs(y))
    return na == nb


def show(v, limit=400):
    s = repr(v)
    return s if len(s) <= limit else s[:limit] + "...(%d chars)" % len(s)


class Pair:
    """The reference and the server under test, side by side."""

    def __init__(self, ref, test, keep_going=False):
        self.ref, self.test = ref, test
        self.history = []
        self.sent = 0
        self.keep_going = keep_going
        self.differences = 0
        self.test_name = None

    def run(self, cmds, exact=False):
        """Runs cmds on both; returns None or a failure description.
        exact: replies must be byte-identical (no score normalization)."""
        real = [c for c in cmds if c[0] not in PSEUDO]
        if len(real) == len(cmds):
            ra = self.ref.pipeline(cmds)
            rb = self.test.pipeline(cmds)
        else:
            # One command at a time, each on both servers in turn: a whole
            # batch of round trips on one before the other would put a
            # relative TTL set in it seconds apart on a loaded machine.
            ra, rb = [], []
            for c in cmds:
                ra.append(self.one(self.ref, c))
                rb.append(self.one(self.test, c))
        for cmd, a, b in zip(cmds, ra, rb):
            self.sent += 1
            self.history.append(cmd)
            if not (a == b if exact else same(cmd, a, b)):
                if not self.keep_going:
                    return self.failure(cmd, a, b)
                self.differences += 1
                print(self.failure(cmd, a, b).split("  preceding")[0])
        del self.history[:-8]
        return None

    @staticmethod
    def one(client, cmd):
        if cmd[0] == b"SRANDMEMBER-CHECK" or cmd[0] == b"SPOP-RESTORE":
            return random_check(client, cmd)
        if cmd[0] == b"SSCAN-ALL":
            return sscan_all(client, cmd)
        if cmd[0] != b"SCAN-ALL":
            return client.call(*cmd)
        keys, cursor = [], b"0"
        while True:
            t, v = client.call(b"SCAN", cursor, b"MATCH", cmd[1],
                               b"COUNT", b"7")
            if t != "*":
                return (t, v)
            cursor = v[0][1]
            keys += v[1][1]
            if cursor == b"0":
                return ("*", keys)

    def failure(self, cmd, a, b):
        lines = ["first difference at command #%d:" % self.sent,
                 "  command:      %s" % show(cmd),
                 "  redis-server: %s" % show(a),
                 "  goblind:      %s" % show(b),
                 "  preceding commands:"]
        lines += ["    %s" % show(c, 200) for c in self.history[-9:-1]]
        return "\n".join(lines)


def random_check(client, cmd):
    """SRANDMEMBER or SPOP: the reply's type, its size, and whether every
    member it gives is one of the set's; SPOP's are added back."""
    pop = cmd[0] == b"SPOP-RESTORE"
    before = client.call(b"SMEMBERS", cmd[1])
    t, v = client.call(b"SPOP" if pop else b"SRANDMEMBER", *cmd[1:])
    if t == "-" or before[0] == "-":
        return (t, v)
    members = {x[1] for x in before[1]}
    got = ([] if v is None else [v] if t == "$"
           else [x[1] for x in v])
    if pop and got:
        client.call(b"SADD", cmd[1], *got)
    if pop and len(set(got)) != len(got):
        return ("repeated", got)
    return ("random", (t, len(got), all(x in members for x in got)))


def sscan_all(client, cmd):
    """A whole SSCAN (COUNT 3), its members as a sorted list."""
    out, cursor = set(), b"0"
    while True:
        t, v = client.call(b"SSCAN", cmd[1], cursor, b"MATCH", cmd[2],
                           b"COUNT", b"3")
        if t != "*":
            return (t, v)
        cursor = v[0][1]
        out |= {x[1] for x in v[1][1]}
        if cursor == b"0":
            return ("*", sorted(out))


def run_sequence(pair, gen, count):
    for start in range(0, count, BATCH):
        cmds = [gen.next() for _ in range(min(BATCH, count - start))]
        err = pair.run(cmds)
        if err:
            return err
    return None


def short_ttls(pair, gen):
    """Keys with 1-50 ms to live on both servers, waited out, then read."""
    cmds = []
    for i in range(20):
        k = b"t:%d" % i
        ms = b"%d" % gen.r.randint(1, 50)
        cmds.append(gen.pick([[b"SET", k, b"v", b"PX", ms],
                              [b"PSETEX", k, ms, b"v"]]))
        if i % 3 == 0:
            cmds.append([b"HSET", b"th:%d" % i, b"f", b"v"])
            cmds.append([b"PEXPIRE", b"th:%d" % i, ms])
    err = pair.run(cmds)
    if err:
        return err
    time.sleep(0.3)
    checks = []
    for i in range(20):
        checks += [[b"GET", b"t:%d" % i], [b"EXISTS", b"t:%d" % i],
                   [b"TTL", b"t:%d" % i], [b"HGET", b"th:%d" % i, b"f"]]
    checks += [[b"KEYS", b"t*"], [b"DBSIZE"]]
    return pair.run(checks)


# ------------------------------------------------------- exact stages
# Fixed command lists whose replies must be byte-identical: every score in
# them has one text in both servers (no 0.1), so even the sign of zero is
# compared.

def transactions():
    """MULTI with queued, refused (no-multi, arity, unknown) and
    immediate commands, the EXECABORT that follows a refusal, DISCARD."""
    c = []
    for body in ([[b"SET", b"e:m", b"bar"], [b"SHUTDOWN", b"NOSAVE"],
                  [b"SAVE"], [b"GET", b"e:m"]],
                 [[b"SET", b"e:m", b"1"], [b"INCR", b"e:m"],
                  [b"HSET", b"e:m", b"f", b"v"], [b"ZADD", b"e:mz", b"1",
                                                   b"a"],
                  [b"ZRANK", b"e:mz", b"a"], [b"ZSCORE", b"e:mz", b"a"],
                  [b"TTL", b"e:m"], [b"TYPE", b"e:mz"]],
                 [[b"MULTI"], [b"WATCH", b"e:m"], [b"INCR", b"e:m"]],
                 # (ZRANK WITHSCORE is Redis 7.2's: compared in
                 # diff_bits.py's own stage, not against 7.0 here.)
                 [[b"SAVE", b"x"]], [[b"SHUTDOWN"]], [[b"NOSUCHCMD"]],
                 [[b"GET"], [b"SET", b"e:m", b"2"]], []):
        c += [[b"MULTI"]] + body + [[b"EXEC"], [b"GET", b"e:m"]]
    c += [[b"MULTI"], [b"SHUTDOWN", b"NOSAVE"], [b"SET", b"e:m", b"3"],
          [b"DISCARD"], [b"EXEC"], [b"DISCARD"], [b"GET", b"e:m"]]
    c += [[b"WATCH", b"e:m"], [b"MULTI"], [b"GET", b"e:m"], [b"EXEC"],
          [b"WATCH", b"e:m"], [b"SET", b"e:m", b"4"], [b"MULTI"],
          [b"GET", b"e:m"], [b"EXEC"], [b"MULTI"], [b"SAVE"],
          [b"DISCARD"], [b"GET", b"e:m"]]
    return c


def databases():
    """Numbered databases: SELECT, MOVE, COPY of every type (DB,
    REPLACE, with deadlines), SWAPDB, FLUSHDB, DBSIZE and their errors.
    Works in databases 1-9 and on db: keys of database 0, which it
    deletes again, so the final dump compares what it did before."""
    c = [[b"SET", b"db:s", b"12345"], [b"SET", b"db:e", b"hello"],
         [b"SET", b"db:r", b"x" * 60], [b"HSET", b"db:h", b"f", b"v",
                                          b"g", b"w"],
         [b"ZADD", b"db:z", b"1", b"a", b"2.5", b"b"],
         [b"EXPIRE", b"db:z", b"1000"],
         [b"RPUSH", b"db:l", b"a", b"7", b"c" * 100],
         [b"SADD", b"db:si", b"3", b"-1", b"70000"],
         [b"SADD", b"db:ss", b"x", b"y", b"5"], [b"EXPIRE", b"db:ss", b"900"]]
    c += [[b"SADD", b"db:sb"] + [b"%d" % (i * 7) for i in range(600)],
          [b"SREM", b"db:sb"] + [b"%d" % (i * 7) for i in range(550)]]
    for bad in (b"16", b"-1", b"x", b"99999999999", b"1.5"):
        c += [[b"SELECT", bad], [b"MOVE", b"db:s", bad],
              [b"COPY", b"db:s", b"db:t", b"DB", bad],
              [b"SWAPDB", bad, b"1"], [b"SWAPDB", b"1", bad]]
    c += [[b"COPY", b"db:s", b"db:s"], [b"COPY", b"db:s", b"db:s", b"DB",
                                        b"0"],
          [b"COPY", b"db:s", b"db:t", b"BOGUS"],
          [b"COPY", b"db:s", b"db:t", b"DB"], [b"MOVE", b"db:s", b"0"],
          [b"COPY", b"db:nope", b"db:t"], [b"MOVE", b"db:nope", b"1"]]
    for k in (b"db:s", b"db:e", b"db:r", b"db:h", b"db:z", b"db:l",
              b"db:si", b"db:ss", b"db:sb"):
        c += [[b"COPY", k, k, b"DB", b"1"], [b"COPY", k, k, b"DB", b"1"],
              [b"COPY", k, k + b"2"], [b"OBJECT", b"ENCODING", k + b"2"],
              [b"TYPE", k + b"2"], [b"TTL", k + b"2"],
              [b"COPY", k, b"db:s2", b"REPLACE"], [b"TYPE", b"db:s2"]]
    c += [[b"MOVE", b"db:e", b"2"], [b"EXISTS", b"db:e"],
          [b"SET", b"db:e", b"again"], [b"MOVE", b"db:e", b"2"],
          [b"SELECT", b"1"], [b"DBSIZE"], [b"GET", b"db:s"],
          [b"HGETALL", b"db:h"], [b"ZRANGE", b"db:z", b"0", b"-1",
                                  b"WITHSCORES"], [b"TTL", b"db:z"],
          [b"LRANGE", b"db:l", b"0", b"-1"], [b"SORT_RO", b"db:si"],
          [b"SORT_RO", b"db:ss", b"ALPHA"], [b"TTL", b"db:ss"],
          [b"SCARD", b"db:sb"], [b"OBJECT", b"ENCODING", b"db:sb"],
          [b"SORT_RO", b"db:sb"],
          [b"SELECT", b"2"], [b"GET", b"db:e"], [b"DBSIZE"],
          [b"SWAPDB", b"1", b"2"], [b"DBSIZE"], [b"GET", b"db:s"],
          [b"SWAPDB", b"2", b"2"], [b"SELECT", b"1"], [b"DBSIZE"],
          [b"GET", b"db:e"], [b"FLUSHDB"], [b"DBSIZE"], [b"SELECT", b"2"],
          [b"DBSIZE"], [b"FLUSHDB", b"BOGUS"], [b"FLUSHDB", b"ASYNC"],
          [b"DBSIZE"], [b"SELECT", b"9"], [b"SET", b"k", b"v"],
          [b"WATCH", b"k"], [b"SELECT", b"8"], [b"SET", b"k", b"w"],
          [b"MULTI"], [b"GET", b"k"], [b"EXEC"], [b"FLUSHDB"],
          [b"SELECT", b"9"], [b"FLUSHDB"], [b"SELECT", b"0"]]
    c += [[b"DEL", b"db:s", b"db:e", b"db:r", b"db:h", b"db:z", b"db:s2",
           b"db:e2", b"db:r2", b"db:h2", b"db:z2", b"db:l", b"db:l2",
           b"db:si", b"db:si2", b"db:ss", b"db:ss2", b"db:sb", b"db:sb2"],
          [b"DBSIZE"]]
    return c


DUMP_SETUP = [
    [b"SET", b"du:int", b"-12345"], [b"SET", b"du:big", b"99999999999"],
    [b"SET", b"du:emb", b"hello\x00\r\nworld"],
    [b"SET", b"du:raw", b"r" * 300],
    [b"HSET", b"du:h", b"f", b"v", b"n", b"1"],
    [b"ZADD", b"du:z", b"-inf", b"a", b"0", b"b", b"1.5", b"c", b"inf",
     b"d"]]
for _i in range(200):
    DUMP_SETUP += [[b"HSET", b"du:hb", b"f%d" % _i, b"v" * (_i % 90)],
                   [b"ZADD", b"du:zb", b"%d.25" % _i, b"m%d" % _i]]
# Lists: one listpack node, and many nodes with every listpack entry
# encoding (7-bit, 13, 16, 24, 32, 64-bit integers, 6, 12 and 32-bit
# strings) and elements bigger than a node. Sets: intset (2, 4 and 8-byte
# values), small and large hashtable, and a large integer set.
DUMP_SETUP += [[b"RPUSH", b"du:l", b"a", b"1", b"-1", b""]]
_lv = [b"0", b"127", b"128", b"-4096", b"4095", b"-32768", b"32767",
       b"8388607", b"-8388608", b"2147483647", b"-2147483648",
       b"9223372036854775807", b"-9223372036854775808", b"007", b"-0",
       b"+1", b"1.5", b"e" * 63, b"f" * 64, b"g" * 4095, b"h" * 4096,
       b"i" * 20000]
for _i in range(40):
    DUMP_SETUP += [[b"RPUSH", b"du:lb"] + _lv + [b"x%d" % _i * 30]]
DUMP_SETUP += [[b"SADD", b"du:si", b"1", b"-2", b"300"],
               [b"SADD", b"du:si4", b"1", b"100000"],
               [b"SADD", b"du:si8", b"1", b"-9223372036854775808"],
               [b"SADD", b"du:ss", b"a", b"b", b"12"],
               [b"SADD", b"du:sh"] + [b"m%d" % _i for _i in range(300)],
               [b"SADD", b"du:sn"] + [b"%d" % (_i * 3) for _i in range(700)]]
DUMP_KEYS = [b"du:int", b"du:big", b"du:emb", b"du:raw", b"du:h", b"du:hb",
             b"du:z", b"du:zb", b"du:l", b"du:lb", b"du:si", b"du:si4",
             b"du:si8", b"du:ss", b"du:sh", b"du:sn"]


def dump_restore(pair):
    """DUMP of every type on each server RESTOREd in the other: both
    then hold the same values, encodings and deadlines."""
    err = pair.run(DUMP_SETUP + [[b"PEXPIRE", b"du:zb", b"500000"]])
    if err:
        return err
    for k in DUMP_KEYS:
        ta, pa = pair.ref.call(b"DUMP", k)
        tb, pb = pair.test.call(b"DUMP", k)
        if ta != "$" or tb != "$":
            return "DUMP %r: %r %r" % (k, (ta, pa), (tb, pb))
        pttl = b"%d" % max(0, e2e.plain(pair.ref.call(b"PTTL", k)))
        for c, p in ((pair.ref, pb), (pair.test, pa)):
            r = c.call(b"RESTORE", k + b":x", pttl, p)
            if r != ("+", b"OK"):
                return "RESTORE %r of the other's DUMP: %r" % (k, r)
    checks = []
    for k in DUMP_KEYS:
        x = k + b":x"
        checks += [[b"TYPE", x], [b"OBJECT", b"ENCODING", x],
                   [b"EXISTS", x]]
        if k.startswith(b"du:h"):
            checks += [[b"HLEN", x], [b"HGET", x, b"f"], [b"HGET", x,
                                                             b"f150"]]
        elif k.startswith(b"du:z"):
            checks += [[b"ZRANGE", x, b"0", b"-1", b"WITHSCORES"],
                       [b"TTL", x]]
        elif k.startswith(b"du:l"):
            checks += [[b"LLEN", x], [b"LRANGE", x, b"0", b"-1"]]
        elif k.startswith(b"du:s"):
            checks += [[b"SCARD", x], [b"SORT_RO", x, b"ALPHA"]]
        else:
            checks += [[b"GET", x], [b"STRLEN", x]]
    checks += [[b"RESTORE", b"du:int", b"0", b"garbage"],
               [b"RESTORE", b"du:new", b"0", b"garbage"],
               [b"RESTORE", b"du:new", b"-5", b"garbage"],
               [b"RESTORE", b"du:new", b"0", b"garbage", b"IDLETIME", b"-1"],
               [b"RESTORE", b"du:new", b"0", b"garbage", b"FREQ", b"300"],
               [b"RESTORE", b"du:new", b"0", b"garbage", b"BOGUS"],
               [b"DUMP", b"du:nope"]]
    checks += [[b"DEL"] + DUMP_KEYS + [k + b":x" for k in DUMP_KEYS]]
    return pair.run(checks)


def zmpop_cases(gen):
    """ZMPOP and the blocking forms' argument checks on the random
    sequence's keys (a list of their own, so that the random sequence,
    which the soak shares, stays as it was)."""
    return [gen.c_zmpop() for _ in range(300)] + \
        [gen.c_bzpop() for _ in range(100)]


def blocked_count(c):
    info = c.call(b"INFO", b"clients")[1]
    return int(info.split(b"blocked_clients:")[1].split(b"\r\n")[0])


def blocking_script(srv):
    """Runs the blocking scenarios on one server with several clients and
    returns every reply in the order read. A command that blocks is
    followed by a wait until the server shows it blocked, so the order
    clients block in is the same on both servers."""
    c = srv.client()
    w = [srv.client() for _ in range(3)]
    got = []

    def block(i, *cmd):
        n = blocked_count(c)
        w[i].send_raw(w[i].encode(cmd))
        deadline = time.time() + 20
        while blocked_count(c) != n + 1:
            assert time.time() < deadline, cmd
            time.sleep(0.005)

    def run(*cmd):
        got.append(c.call(*cmd))

    def read(i):
        got.append(w[i].read())

    # Three waiters on one key, served in the order they blocked, each
    # with its own command's reply shape.
    block(0, b"BZPOPMIN", b"bk:1", b"bk:2", b"0")
    block(1, b"BZPOPMAX", b"bk:2", b"0")
    block(2, b"BZMPOP", b"0", b"2", b"bk:2", b"bk:1", b"MAX", b"COUNT",
          b"2")
    run(b"ZADD", b"bk:2", b"1", b"a", b"2", b"b", b"3", b"c", b"4", b"d",
        b"5", b"e")
    read(0), read(1), read(2)
    run(b"ZRANGE", b"bk:2", b"0", b"-1", b"WITHSCORES")
    # More waiters than members: the last keeps waiting.
    block(0, b"BZPOPMIN", b"bk:3", b"0")
    block(1, b"BZPOPMIN", b"bk:3", b"0")
    run(b"ZADD", b"bk:3", b"1", b"a")
    read(0)
    run(b"ZADD", b"bk:3", b"2", b"b")
    read(1)
    # A timeout, and pipelined input behind a blocked command.
    got.append(w[0].call(b"BZPOPMIN", b"bk:4", b"0.05"))
    got.append(w[0].call(b"BZMPOP", b"0.05", b"1", b"bk:4", b"MIN"))
    w[0].send_raw(w[0].encode([b"BZPOPMIN", b"bk:4", b"0.05"]) +
                  w[0].encode([b"PING"]))
    read(0), read(0)
    # Inside MULTI a blocking command answers at once; a push inside
    # MULTI serves a waiter only after EXEC, with what is left then.
    block(0, b"BZPOPMAX", b"bk:5", b"0")
    for cmd in ([b"MULTI"], [b"BZPOPMIN", b"bk:6", b"0"],
                [b"ZADD", b"bk:5", b"1", b"x", b"2", b"y"],
                [b"ZPOPMAX", b"bk:5"], [b"ZCARD", b"bk:5"], [b"EXEC"]):
        run(*cmd)
    read(0)
    # A write of another type does not serve; the zset written later
    # does. RENAME onto a waited key serves too.
    block(0, b"BZPOPMIN", b"bk:7", b"0")
    run(b"SET", b"bk:7", b"str")
    run(b"DEL", b"bk:7")
    run(b"ZADD", b"bk:7", b"1", b"q")
    read(0)
    block(1, b"BZPOPMIN", b"bk:8", b"0")
    run(b"ZADD", b"bk:tmp", b"3", b"r")
    run(b"RENAME", b"bk:tmp", b"bk:8")
    read(1)
    # CLIENT UNBLOCK, both ways (the ids differ: not compared).
    wid = w[2].call(b"CLIENT", b"ID")[1]
    block(2, b"BZPOPMIN", b"bk:9", b"0")
    run(b"CLIENT", b"UNBLOCK", b"%d" % wid, b"TIMEOUT")
    read(2)
    block(2, b"BZMPOP", b"0", b"1", b"bk:9", b"MIN")
    run(b"CLIENT", b"UNBLOCK", b"%d" % wid, b"ERROR")
    read(2)
    run(b"CLIENT", b"UNBLOCK", b"%d" % wid)
    # Lists: waiters served in order, keys in the order given, BLMPOP's
    # count, and a BLMOVE whose push to its destination serves the next
    # waiter (Redis serves that chain in the same round).
    block(0, b"BLPOP", b"bl:1", b"bl:2", b"0")
    block(1, b"BRPOP", b"bl:2", b"0")
    block(2, b"BLMPOP", b"0", b"2", b"bl:3", b"bl:2", b"RIGHT", b"COUNT",
          b"2")
    run(b"RPUSH", b"bl:2", b"a", b"b", b"c", b"d", b"e")
    read(0), read(1), read(2)
    run(b"LRANGE", b"bl:2", b"0", b"-1")
    block(0, b"BLMOVE", b"bl:src", b"bl:dst", b"LEFT", b"RIGHT", b"0")
    block(1, b"BLPOP", b"bl:dst", b"0")
    run(b"RPUSH", b"bl:src", b"x", b"y")
    read(0), read(1)
    run(b"LRANGE", b"bl:src", b"0", b"-1")
    run(b"EXISTS", b"bl:dst")
    block(0, b"BRPOPLPUSH", b"bl:4", b"bl:5", b"0")
    run(b"LPUSH", b"bl:4", b"p", b"q")
    read(0)
    run(b"LRANGE", b"bl:5", b"0", b"-1")
    # SORT ... STORE onto a waited key serves its waiter; inside MULTI
    # only after EXEC, with what the list holds then.
    run(b"RPUSH", b"bl:ss", b"3", b"1", b"2")
    block(0, b"BLPOP", b"bl:sorted", b"0")
    run(b"SORT", b"bl:ss", b"STORE", b"bl:sorted")
    read(0)
    run(b"LRANGE", b"bl:sorted", b"0", b"-1")
    block(1, b"BRPOP", b"bl:sorted2", b"0")
    for cmd in ([b"MULTI"], [b"SORT", b"bl:ss", b"DESC", b"STORE",
                             b"bl:sorted2"],
                [b"RPOP", b"bl:sorted2"], [b"EXEC"]):
        run(*cmd)
    read(1)
    run(b"LRANGE", b"bl:sorted2", b"0", b"-1")
    # A destination of the wrong type: the waiter gets WRONGTYPE.
    run(b"SET", b"bl:wdst", b"str")
    block(0, b"BLMOVE", b"bl:6", b"bl:wdst", b"LEFT", b"LEFT", b"0")
    run(b"RPUSH", b"bl:6", b"m")
    read(0)
    run(b"LRANGE", b"bl:6", b"0", b"-1")
    # Databases (11-13, flushed after): a waiter waits in its own
    # database; a list or sorted set made by COPY (and COPY ... DB), MOVE,
    # RENAME, RESTORE or SWAPDB wakes it, as Redis 7.0's dbAdd and
    # scanDatabaseForReadyKeys do; a swapped-in string does not.
    got.append(w[0].call(b"SELECT", b"11"))
    got.append(w[1].call(b"SELECT", b"13"))
    run(b"SELECT", b"11")
    block(0, b"BLPOP", b"bd:k", b"0")
    for cmd in ([b"SELECT", b"12"], [b"RPUSH", b"bd:k", b"x"],
                [b"SELECT", b"11"], [b"RPUSH", b"bd:k", b"y"]):
        run(*cmd)
    read(0)
    block(0, b"BLPOP", b"bd:c1", b"0")
    run(b"RPUSH", b"bd:src", b"a", b"b")
    run(b"COPY", b"bd:src", b"bd:c1")
    read(0)
    block(1, b"BZPOPMIN", b"bd:z", b"0")
    run(b"ZADD", b"bd:zs", b"1", b"a", b"2", b"b")
    run(b"COPY", b"bd:zs", b"bd:z", b"DB", b"13")
    read(1)
    block(1, b"BLPOP", b"bd:m", b"0")
    run(b"RPUSH", b"bd:m", b"q")
    run(b"MOVE", b"bd:m", b"13")
    read(1)
    block(0, b"BRPOP", b"bd:rn", b"0")
    run(b"RPUSH", b"bd:rs", b"1", b"2")
    run(b"RENAME", b"bd:rs", b"bd:rn")
    read(0)
    block(0, b"BZPOPMAX", b"bd:re", b"0")
    run(b"ZADD", b"bd:tmp", b"5", b"z")
    payload = c.call(b"DUMP", b"bd:tmp")[1]  # each server's own bytes
    run(b"RESTORE", b"bd:re", b"0", payload)
    read(0)
    block(0, b"BLPOP", b"bd:sw", b"0")
    for cmd in ([b"SELECT", b"12"], [b"RPUSH", b"bd:sw", b"s"],
                [b"SWAPDB", b"11", b"12"]):
        run(*cmd)
    read(0)
    block(0, b"BLPOP", b"bd:wt", b"0")
    for cmd in ([b"SELECT", b"12"], [b"SET", b"bd:wt", b"v"],
                [b"SWAPDB", b"11", b"12"], [b"SELECT", b"11"],
                [b"TYPE", b"bd:wt"], [b"DEL", b"bd:wt"],
                [b"RPUSH", b"bd:wt", b"ok"]):
        run(*cmd)
    read(0)
    for db in (b"11", b"12", b"13"):
        run(b"SELECT", db)
        run(b"DBSIZE")
        run(b"FLUSHDB")
    run(b"SELECT", b"0")
    got.append(w[0].call(b"SELECT", b"0"))
    got.append(w[1].call(b"SELECT", b"0"))
    # Timeouts and MULTI.
    got.append(w[0].call(b"BLPOP", b"bl:7", b"0.05"))
    got.append(w[0].call(b"BLMOVE", b"bl:7", b"bl:8", b"LEFT", b"LEFT",
                         b"0.05"))
    got.append(w[0].call(b"BLMPOP", b"0.05", b"1", b"bl:7", b"LEFT"))
    for cmd in ([b"MULTI"], [b"BLPOP", b"bl:9", b"0"],
                [b"BRPOPLPUSH", b"bl:9", b"bl:10", b"0"], [b"EXEC"]):
        run(*cmd)
    block(2, b"BRPOP", b"bl:11", b"0")
    for cmd in ([b"MULTI"], [b"RPUSH", b"bl:11", b"1", b"2"],
                [b"LPOP", b"bl:11"], [b"EXEC"]):
        run(*cmd)
    read(2)
    # A push inside a script serves only after the script: its own RPOP
    # takes the last element first, the waiter gets what is left then; a
    # script that empties the list again serves nobody.
    block(2, b"BRPOP", b"bl:12", b"0")
    run(b"EVAL", b"redis.call('rpush', KEYS[1], 'a', 'b', 'c') "
        b"local x = redis.call('rpop', KEYS[1]) "
        b"return {x, redis.call('llen', KEYS[1])}", b"1", b"bl:12")
    read(2)
    run(b"LRANGE", b"bl:12", b"0", b"-1")
    block(2, b"BLMPOP", b"0", b"1", b"bl:13", b"LEFT")
    run(b"EVAL", b"redis.call('rpush', KEYS[1], 'x') "
        b"return redis.call('lpop', KEYS[1])", b"1", b"bl:13")
    run(b"EXISTS", b"bl:13")
    run(b"RPUSH", b"bl:13", b"y")
    read(2)
    # RESP3: doubles in the reply, and the null of a timeout.
    w[1].call(b"HELLO", b"3")
    block(1, b"BZMPOP", b"0", b"1", b"bk:10", b"MAX", b"COUNT", b"3")
    run(b"ZADD", b"bk:10", b"1.5", b"a", b"-2", b"b")
    read(1)
    got.append(w[1].call(b"BZPOPMIN", b"bk:11", b"0.05"))
    # A client that disconnects while blocked is gone for good.
    block(0, b"BZPOPMIN", b"bk:12", b"0")
    w[0].close()
    deadline = time.time() + 20
    while blocked_count(c) != 0:
        assert time.time() < deadline
        time.sleep(0.005)
    run(b"ZADD", b"bk:12", b"1", b"a")
    run(b"ZCARD", b"bk:12")
    run(b"INFO", b"clients")
    got[-1] = (got[-1][0], b"blocked_clients:0\r\n" in got[-1][1])
    for x in [c] + w[1:]:
        x.close()
    return got


def blocking(ref, test):
    """blocking_script on both servers, compared reply by reply."""
    a, b = blocking_script(ref), blocking_script(test)
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return ("blocking stage, reply #%d:\n  redis-server: %s\n"
                    "  goblind:      %s" % (i, show(x), show(y)))
    return None if len(a) == len(b) else "blocking stage: reply counts"


# Read (and a few write) commands, each on a key of its own: after one
# wait, which of them leave the key's access time alone.
IDLE_READS = [
    (b"s", [b"GET"]), (b"s", [b"STRLEN"]), (b"s", [b"GETRANGE", 0, 1]),
    (b"s", [b"MGET"]), (b"s", [b"EXISTS"]), (b"s", [b"TYPE"]),
    (b"s", [b"TTL"]), (b"s", [b"PTTL"]), (b"s", [b"EXPIRETIME"]),
    (b"s", [b"PEXPIRETIME"]), (b"s", [b"OBJECT", b"ENCODING"]),
    (b"s", [b"OBJECT", b"REFCOUNT"]), (b"s", [b"TOUCH"]),
    (b"s", [b"GETEX"]), (b"s", [b"APPEND", b"x"]),
    (b"s", [b"EXPIRE", 100]), (b"s", [b"PERSIST"]), (b"s", [b"WATCH"]),
    (b"h", [b"HGET", b"f"]), (b"h", [b"HLEN"]), (b"h", [b"HEXISTS", b"f"]),
    (b"h", [b"HGETALL"]), (b"h", [b"HSCAN", 0]), (b"h", [b"HDEL", b"no"]),
    (b"z", [b"ZSCORE", b"m"]), (b"z", [b"ZCARD"]), (b"z", [b"ZRANK", b"m"]),
    (b"z", [b"ZRANGE", 0, -1]), (b"z", [b"ZCOUNT", b"-inf", b"inf"]),
    (b"z", [b"ZSCAN", 0]), (b"z", [b"ZREM", b"no"]),
    (b"z", [b"ZUNION", 1]), (b"z", [b"ZINTERCARD", 1]),
]


def idle_command(i, kind, words):
    k = b"i:%d" % i
    name = words[0]
    if name == b"OBJECT":
        return [name, words[1], k]
    if name in (b"ZUNION", b"ZINTERCARD"):
        return [name, b"1", k]
    return [name, k] + [b"%d" % w if isinstance(w, int) else w
                        for w in words[1:]]


def idle_class(reply):
    """OBJECT IDLETIME as 'recent' (0 or 1 s) or 'idle' (2 s or more):
    both servers count whole seconds of a clock their cron advances, so
    only that much is compared."""
    t, v = reply
    if t != ":":
        return reply
    return "recent" if v <= 1 else "idle"


def idle_times(pair):
    setup = [[b"SET", b"i:scan", b"v"], [b"SET", b"i:keys", b"v"]]
    for i, (kind, _) in enumerate(IDLE_READS):
        k = b"i:%d" % i
        setup.append({b"s": [b"SET", k, b"v"],
                      b"h": [b"HSET", k, b"f", b"v"],
                      b"z": [b"ZADD", k, b"1", b"m"]}[kind])
    err = pair.run(setup, exact=True)
    if err:
        return err
    time.sleep(3.0)   # untouched keys read 2 s idle or more
    checks = [[b"SCAN", b"0", b"TYPE", b"string", b"COUNT", b"1000"],
              [b"KEYS", b"i:k*"], [b"DBSIZE"], [b"UNWATCH"]]
    for i, (kind, words) in enumerate(IDLE_READS):
        checks.append(idle_command(i, kind, words))
    ra, rb = pair.ref.pipeline(checks), pair.test.pipeline(checks)
    for cmd, a, b in zip(checks[4:], ra[4:], rb[4:]):
        pair.sent += 1
        if not same(cmd, a, b):
            return pair.failure(cmd, a, b)
    looks = [[b"OBJECT", b"IDLETIME", b"i:%d" % i]
             for i in range(len(IDLE_READS))]
    looks += [[b"OBJECT", b"IDLETIME", b"i:scan"],
              [b"OBJECT", b"IDLETIME", b"i:keys"]]
    ra, rb = pair.ref.pipeline(looks), pair.test.pipeline(looks)
    for cmd, before, a, b in zip(looks, checks[4:] + checks[:2], ra, rb):
        pair.sent += 1
        if idle_class(a) != idle_class(b):
            return pair.failure([b"after"] + before + [b"then"] + cmd, a, b)
    return None


ZW = [b"inf", b"-inf", b"0", b"-0", b"1", b"-1"]


def exact_sort():
    """SORT_RO byte for byte: numbers and ALPHA, BY strings and hash
    fields, GET #, LIMIT edges, a sorted set's own order under a BY
    without '*' (and its conversion to a skiplist), and the errors."""
    c = [[b"SADD", b"e:s", b"3", b"10", b"-2", b"7", b"1.5e1"],
         [b"ZADD", b"e:z", b"1", b"c", b"2", b"a", b"3", b"b"],
         [b"SADD", b"e:w", b"a", b"b", b"c", b"d"],
         [b"MSET", b"e:w_a", b"3", b"e:w_b", b"1", b"e:w_c", b"2"],
         [b"HSET", b"e:h_a", b"f", b"z", b"n", b"x"],
         [b"HSET", b"e:h_b", b"f", b"y"],
         [b"SET", b"e:str", b"v"]]
    for args in ([], [b"DESC"], [b"LIMIT", b"1", b"2"],
                 [b"LIMIT", b"-5", b"2"], [b"LIMIT", b"2", b"-1"],
                 [b"LIMIT", b"10", b"5"], [b"LIMIT", b"0", b"0"],
                 [b"ALPHA"], [b"ALPHA", b"DESC", b"LIMIT", b"1", b"1"],
                 [b"GET", b"#", b"GET", b"e:w_*"],
                 [b"BY", b"e:w_*", b"GET", b"#"]):
        c.append([b"SORT_RO", b"e:s"] + args)
    for args in ([b"BY", b"nosort"], [b"BY", b"nosort", b"DESC"],
                 [b"BY", b"nosort", b"LIMIT", b"1", b"5"],
                 [b"BY", b"nosort", b"DESC", b"LIMIT", b"1", b"1"],
                 [b"ALPHA"], [b"BY", b"e:w_*"], [b"BY", b"e:w_*", b"DESC"],
                 [b"BY", b"e:h_*->f", b"ALPHA"],
                 [b"BY", b"e:w_*", b"GET", b"e:h_*->f", b"GET", b"#",
                  b"GET", b"e:h_*->n", b"GET", b"e:h_*->"]):
        c.append([b"SORT_RO", b"e:z"] + args)
    c += [[b"OBJECT", b"ENCODING", b"e:z"],
          [b"SORT_RO", b"e:w"], [b"SORT_RO", b"e:w", b"BY", b"e:w_*"],
          [b"SORT_RO", b"e:w", b"ALPHA", b"BY", b"e:w_*", b"DESC"],
          [b"SORT_RO", b"e:none"], [b"SORT_RO", b"e:str"],
          [b"SORT_RO", b"e:none", b"BOGUS"], [b"SORT_RO", b"e:s", b"STORE",
                                              b"e:d"],
          [b"SORT_RO", b"e:s", b"LIMIT", b"1"],
          [b"SORT_RO", b"e:s", b"LIMIT", b"x", b"1"],
          [b"SORT_RO", b"e:s", b"BY"], [b"SORT_RO"]]
    # Lists, and elements long and many enough that the weights' scratch
    # grows while an element is being read (no BY, and BY "#").
    c += [[b"RPUSH", b"e:l", b"5", b"-1", b"3.25", b"1e2", b"0"],
          [b"SORT_RO", b"e:l"], [b"SORT_RO", b"e:l", b"ALPHA", b"DESC"],
          [b"SORT_RO", b"e:l", b"BY", b"nosort", b"LIMIT", b"1", b"3"],
          [b"RPUSH", b"e:big"] + [b"%d%s" % (i * 7919 % 1000, b"0" * 200)
                                  for i in range(400)],
          [b"SORT_RO", b"e:big", b"LIMIT", b"0", b"3"],
          [b"SORT_RO", b"e:big", b"BY", b"#", b"DESC", b"LIMIT", b"0", b"3"]]
    return c


def sort_store():
    """SORT ... STORE byte for byte: the result kept as a list in place of
    whatever the destination held (its deadline dropped), the count
    replied, GET values with "" for a missing one, an empty result
    deleting the destination, a set under a BY without '*' stored sorted
    ALPHA (Redis makes it independent of the encoding), a list's own
    order under DESC, a key stored onto itself, inside MULTI, and the
    errors."""
    c = [[b"SADD", b"st:i", b"3", b"10", b"-2", b"7"],
         [b"SADD", b"st:a", b"b", b"a", b"c", b"a b", b"B"],
         [b"RPUSH", b"st:l", b"5", b"1", b"4", b"1"],
         [b"ZADD", b"st:z", b"1", b"c", b"2", b"a", b"3", b"b"],
         [b"MSET", b"st:w_a", b"3", b"st:w_b", b"1", b"st:w_c", b"2",
          b"st:w_3", b"x", b"st:w_10", b""],
         [b"HSET", b"st:h_a", b"f", b"z", b"st:h_c", b"f", b""],
         [b"SET", b"st:str", b"v"], [b"SET", b"st:d", b"old", b"EX", b"100"]]
    check = [[b"TYPE", b"st:d"], [b"LRANGE", b"st:d", b"0", b"-1"],
             [b"TTL", b"st:d"], [b"OBJECT", b"ENCODING", b"st:d"]]
    for args in ([b"st:i"], [b"st:i", b"DESC", b"LIMIT", b"1", b"2"],
                 [b"st:a", b"ALPHA"], [b"st:a", b"ALPHA", b"DESC"],
                 [b"st:a", b"BY", b"nosort"],
                 [b"st:a", b"BY", b"nosort", b"DESC", b"LIMIT", b"1", b"2"],
                 [b"st:i", b"BY", b"nosort", b"GET", b"st:w_*"],
                 [b"st:l"], [b"st:l", b"BY", b"nosort", b"DESC"],
                 [b"st:l", b"BY", b"nosort", b"LIMIT", b"1", b"2"],
                 [b"st:z", b"BY", b"nosort", b"LIMIT", b"1", b"5"],
                 [b"st:z", b"BY", b"nosort", b"DESC"],
                 [b"st:z", b"BY", b"st:w_*", b"GET", b"#", b"GET",
                  b"st:h_*->f", b"GET", b"st:nokey"],
                 [b"st:i", b"GET", b"st:w_*", b"GET", b"#"],
                 [b"st:none"], [b"st:i", b"LIMIT", b"10", b"5"],
                 [b"st:i", b"BY", b"st:w_*"], [b"st:str"],
                 [b"st:a"]):
        c.append([b"SORT"] + args + [b"STORE", b"st:d"])
        c += check
    c += [[b"SORT", b"st:l", b"STORE", b"st:l"],
          [b"LRANGE", b"st:l", b"0", b"-1"],
          [b"SORT", b"st:i", b"STORE", b"st:str"], [b"TYPE", b"st:str"],
          [b"LRANGE", b"st:str", b"0", b"-1"],
          [b"SORT", b"st:none", b"STORE", b"st:missing"],
          [b"EXISTS", b"st:missing"],
          [b"SORT", b"st:i", b"STORE"], [b"SORT", b"st:i", b"STORE",
                                         b"st:d", b"BOGUS"],
          [b"SORT_RO", b"st:i", b"STORE", b"st:d"],
          [b"MULTI"], [b"SORT", b"st:i", b"DESC", b"STORE", b"st:m"],
          [b"LLEN", b"st:m"], [b"SORT", b"st:m", b"STORE", b"st:m2"],
          [b"EXEC"], [b"LRANGE", b"st:m2", b"0", b"-1"]]
    return c


def acl_script(srv):
    """SORT's BY and GET patterns under a user limited to key patterns
    (Redis 7.0 refuses them; a user that may read every key passes), and
    the @list, @set and @blocking categories taken away; every reply in
    order."""
    c = srv.client()
    got = []
    for cmd in ([b"RPUSH", b"acl:l", b"2", b"1", b"3"],
                [b"SET", b"acl:w_1", b"5"], [b"SADD", b"acl:s", b"x"],
                [b"ACL", b"SETUSER", b"st_keys", b"on", b"nopass", b"~acl:*",
                 b"+@all"],
                [b"ACL", b"SETUSER", b"st_read", b"on", b"nopass", b"%R~*",
                 b"~acl:*", b"+@all"],
                [b"ACL", b"SETUSER", b"st_nolist", b"on", b"nopass", b"~*",
                 b"+@all", b"-@list"],
                [b"ACL", b"SETUSER", b"st_noset", b"on", b"nopass", b"~*",
                 b"+@all", b"-@set"],
                [b"ACL", b"SETUSER", b"st_noblock", b"on", b"nopass", b"~*",
                 b"+@all", b"-@blocking"]):
        got.append(c.call(*cmd))
    cases = {
        b"st_keys": [
            [b"SORT", b"acl:l"], [b"SORT", b"acl:l", b"BY", b"nosort"],
            [b"SORT", b"acl:l", b"BY", b"acl:w_*"],
            [b"SORT", b"acl:l", b"GET", b"#"],
            [b"SORT_RO", b"acl:l", b"GET", b"acl:w_*"],
            [b"SORT", b"acl:l", b"LIMIT", b"0", b"1", b"BY", b"acl:w_*",
             b"BOGUS"],
            [b"SORT", b"acl:l", b"BOGUS", b"BY", b"acl:w_*"],
            [b"SORT", b"acl:l", b"STORE", b"acl:d"],
            [b"SORT", b"acl:l", b"STORE", b"other:d"],
            [b"LRANGE", b"acl:d", b"0", b"-1"]],
        b"st_read": [
            [b"SORT", b"acl:l", b"BY", b"acl:w_*", b"GET", b"#"],
            [b"SORT_RO", b"acl:l", b"GET", b"acl:w_*"],
            [b"SORT", b"acl:l", b"GET", b"#", b"STORE", b"acl:d2"],
            [b"SORT", b"acl:l", b"STORE", b"other:d"]],
        b"st_nolist": [
            [b"LPUSH", b"acl:l", b"x"], [b"LRANGE", b"acl:l", b"0", b"-1"],
            [b"BLPOP", b"acl:l", b"0"], [b"LMPOP", b"1", b"acl:l", b"LEFT"],
            [b"SORT", b"acl:l"], [b"SADD", b"acl:s", b"y"],
            [b"SCARD", b"acl:s"]],
        b"st_noset": [
            [b"SADD", b"acl:s", b"z"], [b"SMEMBERS", b"acl:s"],
            [b"SINTERCARD", b"1", b"acl:s"], [b"LLEN", b"acl:l"]],
        b"st_noblock": [
            [b"BLPOP", b"acl:l", b"0"], [b"BRPOPLPUSH", b"acl:l", b"acl:m",
                                          b"0"],
            [b"BLMOVE", b"acl:l", b"acl:m", b"LEFT", b"LEFT", b"0"],
            [b"BZPOPMIN", b"acl:z", b"0"], [b"LPOP", b"acl:l"],
            [b"RPUSH", b"acl:l", b"9"]],
    }
    for user, cmds in cases.items():
        u = srv.client()
        got.append(u.call(b"AUTH", user, b"x"))
        for cmd in cmds:
            got.append(u.call(*cmd))
        u.close()
    for name in cases:
        got.append(c.call(b"ACL", b"DELUSER", name))
    got.append(c.call(b"DEL", b"acl:l", b"acl:d", b"acl:d2", b"acl:w_1",
                      b"acl:s", b"acl:m"))
    c.close()
    return got


def acl_lists_sets(ref, test):
    """acl_script on both servers, compared reply by reply."""
    a, b = acl_script(ref), acl_script(test)
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return ("ACL stage, reply #%d:\n  redis-server: %s\n"
                    "  goblind:      %s" % (i, show(x), show(y)))
    return None if len(a) == len(b) else "ACL stage: reply counts"


def score_edges():
    """inf, -inf and -0 through WEIGHTS, AGGREGATE, ZINCRBY and ZADD INCR;
    the sign of zero in the compact and the skiplist encoding."""
    c = [[b"ZADD", b"e:p", b"1", b"x", b"2.5", b"y", b"inf", b"i",
          b"-inf", b"n", b"0", b"z"],
         [b"ZADD", b"e:q", b"0", b"x", b"-inf", b"y", b"inf", b"n",
          b"-0", b"z", b"3", b"w", b"1", b"v"],
         [b"ZADD", b"e:r", b"inf", b"x", b"-inf", b"n"],
         [b"ZADD", b"e:a", b"0.5", b"x"], [b"ZADD", b"e:b", b"0", b"x",
                                          b"0", b"y"]]
    pairs = [(w1, w2) for w1 in ZW for w2 in ZW]
    for n, (w1, w2) in enumerate(pairs):
        agg = [b"SUM", b"MIN", b"MAX"][n % 3]
        keys = [(b"e:p", b"e:q"), (b"e:a", b"e:b"), (b"e:r", b"e:p")][n % 3]
        for op in (b"ZUNION", b"ZINTER"):
            c.append([op, b"2", keys[0], keys[1], b"WEIGHTS", w1, w2,
                      b"AGGREGATE", agg, b"WITHSCORES"])
        if n % 4 == 0:
            for op in (b"ZUNIONSTORE", b"ZINTERSTORE"):
                c += [[op, b"e:d", b"2", keys[0], keys[1], b"WEIGHTS", w1,
                       w2, b"AGGREGATE", agg],
                      [b"ZRANGE", b"e:d", b"0", b"-1", b"WITHSCORES"]]
    c += [[b"ZINTERSTORE", b"e:d", b"2", b"e:a", b"e:b", b"WEIGHTS",
           b"-inf", b"-inf"], [b"ZSCORE", b"e:d", b"x"],
          [b"ZUNION", b"3", b"e:p", b"e:q", b"e:r", b"WEIGHTS", b"inf",
           b"-inf", b"1", b"WITHSCORES"],
          [b"ZUNION", b"2", b"e:p", b"e:q", b"WEIGHTS", b"nan", b"1"],
          [b"ZDIFF", b"2", b"e:p", b"e:r", b"WITHSCORES"],
          [b"ZINCRBY", b"e:p", b"-inf", b"i"],
          [b"ZADD", b"e:p", b"INCR", b"-inf", b"i"],
          [b"ZINCRBY", b"e:p", b"inf", b"n"], [b"ZINCRBY", b"e:p", b"-0",
                                               b"z"],
          [b"ZINCRBY", b"e:p", b"inf", b"y"], [b"ZSCORE", b"e:p", b"y"],
          [b"ZADD", b"e:p", b"INCR", b"-0", b"new"],
          [b"ZINCRBY", b"e:new", b"-0", b"m"], [b"ZSCORE", b"e:new", b"m"],
          [b"ZADD", b"e:s", b"-0", b"m"], [b"ZSCORE", b"e:s", b"m"],
          [b"OBJECT", b"ENCODING", b"e:s"]]
    big = [b"ZADD", b"e:big"]
    for i in range(130):
        big += [b"%d" % (i + 1), b"p%d" % i]
    c += [big, [b"ZADD", b"e:big", b"-0", b"m0", b"-0", b"m1", b"0", b"m2"],
          [b"ZSCORE", b"e:big", b"m0"], [b"ZMSCORE", b"e:big", b"m0", b"m2"],
          [b"ZREMRANGEBYRANK", b"e:big", b"3", b"-1"],
          [b"OBJECT", b"ENCODING", b"e:big"],
          [b"ZRANGE", b"e:big", b"0", b"-1", b"WITHSCORES"],
          [b"ZADD", b"e:big", b"5", b"m2"], [b"ZADD", b"e:big", b"-0", b"m2",
                                             b"-0", b"m3"],
          [b"ZINCRBY", b"e:big", b"-0", b"m0"],
          [b"ZADD", b"e:big", b"INCR", b"-0", b"m4"],
          [b"ZRANGEBYSCORE", b"e:big", b"-0", b"0", b"WITHSCORES"],
          [b"ZUNION", b"1", b"e:big", b"WITHSCORES"],
          [b"ZUNIONSTORE", b"e:bu", b"1", b"e:big"],
          [b"ZRANGE", b"e:bu", b"0", b"-1", b"WITHSCORES"],
          [b"OBJECT", b"ENCODING", b"e:bu"],
          [b"ZPOPMIN", b"e:big"],
          [b"INCRBYFLOAT", b"e:f", b"-0"], [b"HINCRBYFLOAT", b"e:h", b"f",
                                            b"-0"],
          [b"HSET", b"e:hd"] + [b"f", b"v"] * 130,
          [b"OBJECT", b"ENCODING", b"e:hd"]]
    return c


def info_field(client, name):
    for line in e2e.plain(client.call(b"INFO", b"server")).split(b"\r\n"):
        if line.startswith(name + b":"):
            return line[len(name) + 1:]
    return None


def clock_and_version(pair):
    """TIME in microseconds (not all multiples of 1000), seconds as
    redis-server's; the Redis version both claim, and goblind's own."""
    times = pair.test.pipeline([[b"TIME"]] * 20)
    if all(e2e.plain(t)[1].endswith(b"000") for t in times):
        return "goblind TIME has millisecond resolution: %r" % (times,)
    a = e2e.plain(pair.ref.call(b"TIME"))
    b = e2e.plain(pair.test.call(b"TIME"))
    if abs(int(a[0]) - int(b[0])) > 2:
        return "TIME seconds differ: %r %r" % (a, b)
    for name in (b"redis_version",):
        if info_field(pair.ref, name) != info_field(pair.test, name):
            return "INFO %s: redis-server %r, goblind %r" % (
                name, info_field(pair.ref, name), info_field(pair.test, name))
    ha = dict(zip(*[iter(e2e.plain(pair.ref.call(b"HELLO")))] * 2))
    hb = dict(zip(*[iter(e2e.plain(pair.test.call(b"HELLO")))] * 2))
    if ha[b"version"] != hb[b"version"]:
        return "HELLO version: %r %r" % (ha[b"version"], hb[b"version"])
    if pair.test_name == b"goblind" and \
            not info_field(pair.test, b"goblin_version"):
        return "goblind's INFO has no goblin_version"
    return None


def dump(client):
    """The whole keyspace as comparable plain data."""
    out = {}
    keys = e2e.plain(client.call(b"KEYS", b"*"))
    for k in keys:
        t = e2e.plain(client.call(b"TYPE", k))
        if t == b"string":
            v = e2e.plain(client.call(b"GET", k))
            if k in F_KEYS:
                v = float(v)
        elif t == b"hash":
            v = e2e.plain(client.call(b"HGETALL", k))
            v = dict(zip(v[0::2], v[1::2]))
            if k in FH_KEYS:
                v = {f: float(x) for f, x in v.items()}
        elif t == b"zset":
            v = e2e.plain(client.call(b"ZRANGE", k, b"0", b"-1",
                                      b"WITHSCORES"))
            v = [(m, float(s)) for m, s in zip(v[0::2], v[1::2])]
        elif t == b"list":
            v = e2e.plain(client.call(b"LRANGE", k, b"0", b"-1"))
        elif t == b"set":
            v = (sorted(e2e.plain(client.call(b"SMEMBERS", k))),
                 e2e.plain(client.call(b"OBJECT", b"ENCODING", k)))
        else:
            v = None
        ttl = e2e.plain(client.call(b"TTL", k))
        out[k] = (t, v, ttl >= 0 if ttl != -1 else -1)
    return out


def compare_dumps(ref, test):
    a, b = dump(ref), dump(test)
    if a == b:
        return None
    lines = ["final keyspace differs:"]
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            x, y = a.get(k), b.get(k)
            if x and y and x[0] == y[0] == b"hash" and k in FH_KEYS:
                if all(math.isclose(x[1][f], y[1].get(f, math.nan),
                                    rel_tol=1e-9) for f in x[1]):
                    continue
            lines.append("  %r\n    redis-server: %s\n    goblind:      %s"
                         % (k, show(x), show(y)))
    return None if len(lines) == 1 else "\n".join(lines)


def main():
    args = sys.argv[1:]
    seed, count = SEED, COUNT
    if "--seed" in args:
        seed = int(args[args.index("--seed") + 1])
    if "--count" in args:
        count = int(args[args.index("--count") + 1])
    print("seed %d, %d RESP2 + %d RESP3 commands" % (seed, count,
                                                     RESP3_COUNT))
    ref = e2e.redis_server()
    if "--against-redis" in args:
        test = e2e.redis_server()
    else:
        test = e2e.goblind(args[0])
    try:
        base_ms = int(time.time() * 1000)
        gen = Gen(seed, base_ms)
        keep = "--keep-going" in args
        pair = Pair(ref.client(), test.client(), keep)
        t0 = time.monotonic()
        err = run_sequence(pair, gen, count)
        if not err:
            print("RESP2: %d commands agree (%.1f s)" % (
                pair.sent, time.monotonic() - t0))
            p3 = Pair(ref.client(), test.client(), keep)
            for c in (p3.ref, p3.test):
                c.call(b"HELLO", b"3")
            err = run_sequence(p3, gen, RESP3_COUNT)
            if not err:
                print("RESP3: %d commands agree" % p3.sent)
        if not err:
            err = short_ttls(pair, gen)
        if not err:
            err = pair.run(transactions(), exact=True)
        if not err:
            err = pair.run(score_edges(), exact=True)
        if not err:
            err = pair.run(exact_sort(), exact=True)
        if not err:
            err = pair.run(sort_store(), exact=True)
        if not err:
            err = acl_lists_sets(ref, test)
        if not err:
            err = pair.run(databases(), exact=True)
        if not err:
            err = dump_restore(pair)
        if not err:
            err = pair.run(zmpop_cases(gen))
        if not err:
            err = blocking(ref, test)
        if not err:
            err = idle_times(pair)
        if not err:
            pair.test_name = test.name.encode()
            err = clock_and_version(pair)
        if not err:
            print("transactions, score edges, blocking and idle times "
                  "agree")
        if not err:
            err = diff_bits.run(pair, random.Random(seed))
        if not err:
            print("bitmaps, LCS, HyperLogLog and geo agree")
        if not err:
            err = diff_scripts.run(pair, random.Random(seed))
        if not err:
            print("EVAL, EVALSHA and FCALL agree")
        if not err:
            err = compare_dumps(pair.ref, pair.test)
        if not err:
            print("final keyspaces agree (%d keys)" % len(dump(pair.ref)))
        if test.name == "goblind":
            e2e.check_stopped_cleanly(test)
    finally:
        ref.kill_now()
        test.kill_now()
    if err:
        print(err)
        sys.exit(1)
    print("differential test passed")


if __name__ == "__main__":
    main()
