"""test_migrate.py - MIGRATE between goblind and redis-server 7.0, both
ways, and from goblind to goblind.

    /usr/bin/python3 test_migrate.py GOBLIND

Every type moves with its TTL (each key read back on the target, the
source's copy gone unless COPY); KEYS, COPY, REPLACE, AUTH and AUTH2;
the target's errors passed through as Redis passes them (BUSYKEY,
NOAUTH, WRONGPASS); and the same error replies as redis-server's for
bad arguments, a missing key, a dead port, a name that does not
resolve, a target that closes at once and one that never answers
(IOERR after the timeout, the server still serving and the key kept).
"""

import socket
import sys
import threading

import e2e

TYPES = [
    [b"SET", b"s", b"v"],
    [b"HSET", b"h", b"f1", b"v1", b"f2", b"v2"],
    [b"RPUSH", b"l", b"a", b"b", b"c"],
    [b"SADD", b"st", b"x", b"y", b"1"],
    [b"ZADD", b"z", b"1.5", b"m1", b"2", b"m2"],
    [b"PFADD", b"hll", b"a", b"b", b"c"],
]
READ = {b"s": [b"GET", b"s"], b"h": [b"HGETALL", b"h"],
        b"l": [b"LRANGE", b"l", b"0", b"-1"], b"st": [b"SMEMBERS", b"st"],
        b"z": [b"ZRANGE", b"z", b"0", b"-1", b"WITHSCORES"],
        b"hll": [b"PFCOUNT", b"hll"]}


def value(c, key):
    v = e2e.plain(c.call(*READ[key]))
    return sorted(v) if key == b"st" else v


def fill(c):
    for cmd in TYPES:
        c.call(*cmd)
        c.call(b"PEXPIRE", cmd[1], b"100000")


def tcp_redis():
    port = e2e.free_port()
    return e2e.redis_server("--port", port), port


def check_moves(src, dst, dst_port):
    """Every type from src to db 2 of dst, with its TTL."""
    a, b = src.client(), dst.client()
    a.call(b"FLUSHALL")
    b.call(b"FLUSHALL")
    fill(a)
    want = {k: value(a, k) for k in READ}
    # One key, then the rest with KEYS (a missing one among them).
    assert a.call(b"MIGRATE", b"127.0.0.1", b"%d" % dst_port, b"s", b"2",
                  b"5000") == ("+", b"OK")
    keys = [k for k in READ if k != b"s"]
    r = a.call(b"MIGRATE", b"127.0.0.1", b"%d" % dst_port, b"", b"2",
               b"5000", b"KEYS", *(keys + [b"nokey"]))
    assert r == ("+", b"OK"), r
    b.call(b"SELECT", b"2")
    for k in READ:
        assert value(b, k) == want[k], (k, value(b, k), want[k])
        ttl = e2e.plain(b.call(b"PTTL", k))
        assert 0 < ttl <= 100000, (k, ttl)
        assert e2e.plain(a.call(b"EXISTS", k)) == 0, k
    # COPY keeps the source's key; the target's BUSYKEY comes back.
    fill(a)
    r = a.call(b"MIGRATE", b"127.0.0.1", b"%d" % dst_port, b"s", b"2",
               b"5000", b"COPY")
    assert r == ("-", b"ERR Target instance replied with error: BUSYKEY "
                      b"Target key name already exists."), r
    assert e2e.plain(a.call(b"EXISTS", b"s")) == 1
    a.call(b"SET", b"s", b"new")
    r = a.call(b"MIGRATE", b"127.0.0.1", b"%d" % dst_port, b"", b"2",
               b"5000", b"COPY", b"REPLACE", b"KEYS", b"s", b"h")
    assert r == ("+", b"OK"), r
    assert e2e.plain(b.call(b"GET", b"s")) == b"new"
    assert e2e.plain(b.call(b"PTTL", b"s")) == -1
    assert e2e.plain(a.call(b"EXISTS", b"s", b"h")) == 2
    # AUTH and AUTH2 against a target with a password.
    b.call(b"CONFIG", b"SET", b"requirepass", b"pw")
    # redis-server keeps its connection to a target for 10 s, signed in
    # from before: dropped, its next MIGRATE retries on a new one.
    b.call(b"CLIENT", b"KILL", b"TYPE", b"normal", b"SKIPME", b"yes")
    base = [b"MIGRATE", b"127.0.0.1", b"%d" % dst_port, b"", b"2", b"5000",
            b"COPY", b"REPLACE"]
    r = a.call(*(base + [b"KEYS", b"s"]))
    assert r == ("-", b"ERR Target instance replied with error: NOAUTH "
                      b"Authentication required."), r
    r = a.call(*(base + [b"AUTH", b"bad", b"KEYS", b"s"]))
    assert r[0] == "-" and r[1].startswith(
        b"ERR Target instance replied with error: WRONGPASS"), r
    assert a.call(*(base + [b"AUTH", b"pw", b"KEYS", b"s"])) == ("+", b"OK")
    assert a.call(*(base + [b"AUTH2", b"default", b"pw", b"KEYS", b"s"])) \
        == ("+", b"OK")
    b.call(b"AUTH", b"pw")
    b.call(b"CONFIG", b"SET", b"requirepass", b"")


def test_goblind_to_redis_and_back(goblind):
    ref, ref_port = tcp_redis()
    srv = e2e.goblind(goblind)
    try:
        check_moves(srv, ref, ref_port)
        check_moves(ref, srv, srv.port)
        e2e.check_stopped_cleanly(srv)
    finally:
        ref.kill_now()
        srv.kill_now()


def test_goblind_to_goblind(goblind):
    src = e2e.goblind(goblind)
    dst = e2e.goblind(goblind)
    try:
        check_moves(src, dst, dst.port)
        e2e.check_stopped_cleanly(src)
        e2e.check_stopped_cleanly(dst)
    finally:
        src.kill_now()
        dst.kill_now()


class Target:
    """A TCP listener that closes each connection at once (close) or
    keeps it and never answers."""

    def __init__(self, close):
        self.s = socket.socket()
        self.s.bind(("127.0.0.1", 0))
        self.s.listen(16)
        self.port = self.s.getsockname()[1]
        self.kept = []
        self.close = close
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                c, _ = self.s.accept()
            except OSError:
                return
            if self.close:
                c.close()
            else:
                self.kept.append(c)


def test_errors_same_as_redis(goblind):
    ref = e2e.redis_server()
    srv = e2e.goblind(goblind)
    closing, silent = Target(True), Target(False)
    dead = e2e.free_port()
    try:
        a, b = ref.client(), srv.client()
        m = [b"MIGRATE", b"127.0.0.1"]
        script = [
            [b"SET", b"k", b"v"],
            m + [b"%d" % dead, b"nokey", b"0", b"100"],
            m + [b"%d" % dead, b"", b"0", b"100", b"KEYS", b"no1", b"no2"],
            m + [b"%d" % dead, b"k", b"0", b"100", b"KEYS", b"k"],
            m + [b"%d" % dead, b"k", b"0", b"100", b"BOGUS"],
            m + [b"%d" % dead, b"k", b"0", b"100", b"AUTH"],
            m + [b"%d" % dead, b"k", b"0", b"100", b"AUTH2", b"u"],
            m + [b"%d" % dead, b"k", b"x", b"100"],
            m + [b"%d" % dead, b"k", b"0", b"x"],
            m + [b"%d" % dead, b"k"],
            m + [b"%d" % dead, b"k", b"0", b"100"],
            m + [b"x", b"k", b"0", b"-5"],
            [b"MIGRATE", b"nosuch.invalid", b"1", b"k", b"0", b"100"],
            m + [b"%d" % closing.port, b"k", b"0", b"500"],
            m + [b"%d" % silent.port, b"k", b"0", b"300"],
            m + [b"%d" % silent.port, b"", b"0", b"300", b"COPY", b"AUTH",
                 b"p", b"KEYS", b"k"],
            [b"GET", b"k"], [b"PING"],
        ]
        for cmd in script:
            ra, rb = a.call(*cmd), b.call(*cmd)
            assert ra == rb, "%r:\n  redis:  %r\n  goblin: %r" % (cmd, ra, rb)
        e2e.check_stopped_cleanly(srv)
    finally:
        ref.kill_now()
        srv.kill_now()


if __name__ == "__main__":
    e2e.run_tests([test_goblind_to_redis_and_back, test_goblind_to_goblind,
                   test_errors_same_as_redis], sys.argv[1])
