"""test_redis_py.py - Debian's python3-redis against goblind.

    /usr/bin/python3 test_redis_py.py GOBLIND

Strings, hashes, sorted sets, expiry, pipelines, transactions (MULTI/EXEC
and WATCH with a conflicting write from a second connection), over the
Unix socket and TCP, in RESP2 and RESP3. redis-py speaks RESP3 from 5.0
(protocol=3); with an older redis-py (Debian 12 ships 4.3) the RESP3 part
runs through e2e's raw client after HELLO 3 instead, and says so.
"""

import sys
import time

import redis

import e2e


def connect(gob, tcp=False, **kw):
    if tcp:
        return redis.Redis(host="127.0.0.1", port=gob.port, **kw)
    return redis.Redis(unix_socket_path=gob.sock, **kw)


def check_strings(r):
    assert r.ping() is True
    assert r.set("s", b"bin\x00\r\nval") is True
    assert r.get("s") == b"bin\x00\r\nval"
    assert r.get("missing") is None
    assert r.set("s", "new", nx=True) is None
    assert r.set("s", "new", xx=True, get=True) == b"bin\x00\r\nval"
    assert r.incr("counter") == 1
    assert r.incrby("counter", 41) == 42
    assert r.decr("counter") == 41
    assert r.incrbyfloat("fl", 1.5) == 1.5
    assert r.append("s", "er") == 5
    assert r.strlen("s") == 5
    assert r.getrange("s", 1, 3) == b"ewe"
    assert r.mset({"m1": "a", "m2": "b"}) is True
    assert r.mget("m1", "nope", "m2") == [b"a", None, b"b"]
    assert r.getdel("m1") == b"a"
    assert r.exists("m1", "m2") == 1
    assert r.type("m2") == b"string"
    try:
        r.hget("s", "f")
        raise AssertionError("HGET on a string did not fail")
    except redis.ResponseError as e:
        assert str(e).startswith("WRONGTYPE"), e
    try:
        r.set("big", "9223372036854775807")
        r.incr("big")
        raise AssertionError("INCR past the maximum did not fail")
    except redis.ResponseError as e:
        assert "overflow" in str(e), e


def check_hashes(r):
    assert r.hset("h", mapping={"a": "1", "b": "2", "c": b"\x00"}) == 3
    assert r.hget("h", "a") == b"1"
    assert r.hgetall("h") == {b"a": b"1", b"b": b"2", b"c": b"\x00"}
    assert sorted(r.hkeys("h")) == [b"a", b"b", b"c"]
    assert r.hlen("h") == 3
    assert r.hincrby("h", "a", 10) == 11
    assert r.hincrbyfloat("h", "f", 0.5) == 0.5
    assert r.hexists("h", "b") is True
    assert r.hdel("h", "b", "zz") == 1
    assert r.hmget("h", ["a", "b"]) == [b"11", None]
    assert r.hsetnx("h", "a", "x") == 0
    assert r.hstrlen("h", "a") == 2


def check_sorted_sets(r):
    assert r.zadd("z", {"a": 1.5, "b": 2, "c": -3, "d": float("inf")}) == 4
    assert r.zscore("z", "a") == 1.5
    assert r.zscore("z", "d") == float("inf")
    assert r.zscore("z", "none") is None
    assert r.zrank("z", "a") == 1
    assert r.zrevrank("z", "a") == 2
    assert r.zcard("z") == 4
    assert r.zrange("z", 0, -1) == [b"c", b"a", b"b", b"d"]
    assert r.zrange("z", 0, 1, withscores=True) == [(b"c", -3.0),
                                                    (b"a", 1.5)]
    assert r.zrangebyscore("z", "(1.5", "+inf") == [b"b", b"d"]
    assert r.zrevrangebyscore("z", 2, "-inf", start=0, num=2) == [b"b",
                                                                  b"a"]
    assert r.zincrby("z", 0.25, "a") == 1.75
    assert r.zadd("z", {"a": 1}, gt=True, ch=True) == 0
    assert r.zadd("z", {"a": 5}, gt=True, ch=True) == 1
    assert r.zadd("z", {"new": 1}, xx=True) == 0
    assert r.zcount("z", 0, 5) == 2
    assert r.zrem("z", "b", "none") == 1
    assert r.zpopmin("z") == [(b"c", -3.0)]
    assert r.zmscore("z", ["a", "none"]) == [5.0, None]
    assert r.zadd("z2", {"x": 0.1}) == 1
    assert r.zscore("z2", "x") == 0.1


def check_expiry(r):
    r.set("e1", "v", ex=1000)
    assert 990 <= r.ttl("e1") <= 1000
    assert r.pttl("e1") > 990000
    assert r.persist("e1") is True
    assert r.ttl("e1") == -1
    assert r.ttl("none") == -2
    assert r.expire("e1", 500) is True
    assert r.pexpireat("e1", 1) is True       # in the past: gone now
    assert r.exists("e1") == 0
    r.set("e2", "v", px=30)
    r.hset("e3", "f", "v")
    r.pexpire("e3", 30)
    time.sleep(0.25)
    assert r.get("e2") is None
    assert r.exists("e3") == 0
    r.set("e4", "v")
    assert r.expireat("e4", int(time.time()) + 3600) is True
    assert 3500 <= r.ttl("e4") <= 3600


def check_pipeline(r):
    p = r.pipeline(transaction=False)
    for i in range(1000):
        p.set("p:%d" % i, i)
        p.incr("p:count")
    p.get("p:999")
    out = p.execute()
    assert out[:2] == [True, 1]
    assert out[-2] == 1000 and out[-1] == b"999"


def check_transactions(r, r2):
    p = r.pipeline(transaction=True)
    p.set("t:a", 1).incr("t:a").hset("t:h", "f", "v").get("t:a")
    assert p.execute() == [True, 2, 1, b"2"]
    # A command error inside EXEC is returned in place, not raised early.
    p = r.pipeline(transaction=True)
    p.set("t:s", "x").incr("t:s").get("t:s")
    out = p.execute(raise_on_error=False)
    assert out[0] is True and out[2] == b"x", out
    assert isinstance(out[1], redis.ResponseError), out
    # WATCH: a write from a second connection aborts EXEC.
    r.set("t:w", "0")
    with r.pipeline() as p:
        p.watch("t:w")
        old = int(p.get("t:w"))
        r2.set("t:w", "100")
        p.multi()
        p.set("t:w", old + 1)
        try:
            p.execute()
            raise AssertionError("EXEC ran despite a conflicting write")
        except redis.WatchError:
            pass
    assert r.get("t:w") == b"100"
    # Without a conflict the same transaction commits.
    with r.pipeline() as p:
        p.watch("t:w")
        old = int(p.get("t:w"))
        p.multi()
        p.set("t:w", old + 1)
        assert p.execute() == [True]
    assert r.get("t:w") == b"101"
    # DISCARD drops the queue (redis-py never sends it, so do it raw).
    c = r.connection_pool.get_connection("MULTI")
    for cmd, want in ((("MULTI",), b"OK"), (("SET", "t:d", "1"), b"QUEUED"),
                      (("DISCARD",), b"OK")):
        c.send_command(*cmd)
        assert c.read_response() == want, cmd
    r.connection_pool.release(c)
    assert r.exists("t:d") == 0


def run_all(gob, tcp):
    r = connect(gob, tcp)
    r2 = connect(gob, tcp)
    for check in (check_strings, check_hashes, check_sorted_sets,
                  check_expiry, check_pipeline):
        check(r)
    check_transactions(r, r2)
    r.close()
    r2.close()


def test_resp2_unix(goblind_path):
    gob = e2e.goblind(goblind_path)
    run_all(gob, tcp=False)
    e2e.check_stopped_cleanly(gob)


def test_resp2_tcp(goblind_path):
    gob = e2e.goblind(goblind_path)
    run_all(gob, tcp=True)
    e2e.check_stopped_cleanly(gob)


def test_resp3(goblind_path):
    gob = e2e.goblind(goblind_path)
    try:
        r = connect(gob, protocol=3)
    except TypeError:
        r = None
    if r is not None:
        run_all(gob, tcp=False)
        r.close()
    else:
        print("    redis-py %s has no RESP3 (protocol=3 needs 5.0); "
              "checking RESP3 with the raw client" % redis.__version__)
    c = gob.client()
    hello = c.call("HELLO", "3")
    assert hello[0] == "%", hello
    fields = dict((k[1], v) for k, v in hello[1])
    assert fields[b"proto"] == (":", 3), fields
    c.call("HSET", "h", "a", "1", "b", "2")
    t, pairs = c.call("HGETALL", "h")
    assert t == "%" and sorted(pairs) == [(("$", b"a"), ("$", b"1")),
                                          (("$", b"b"), ("$", b"2"))]
    c.call("ZADD", "z", "1.5", "m", "-inf", "n")
    assert c.call("ZSCORE", "z", "m") == (",", b"1.5")
    assert c.call("ZSCORE", "z", "n") == (",", b"-inf")
    assert c.call("ZSCORE", "z", "none") == ("_", None)
    assert c.call("GET", "none") == ("_", None)
    assert c.call("ZRANGE", "z", "0", "-1", "WITHSCORES") == ("*", [
        ("*", [("$", b"n"), (",", b"-inf")]),
        ("*", [("$", b"m"), (",", b"1.5")])])
    assert c.call("MULTI") == ("+", b"OK")
    assert c.call("HGETALL", "h") == ("+", b"QUEUED")
    t, v = c.call("EXEC")
    assert t == "*" and v[0][0] == "%", (t, v)
    assert c.call("HELLO", "2")[0] == "*"
    assert c.call("GET", "none") == ("$", None)
    c.close()
    e2e.check_stopped_cleanly(gob)


if __name__ == "__main__":
    e2e.run_tests([test_resp2_unix, test_resp2_tcp, test_resp3],
                  sys.argv[1])
