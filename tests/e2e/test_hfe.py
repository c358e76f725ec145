"""test_hfe.py - hash field expiry (Redis 7.4's HEXPIRE family) in goblind.

    /usr/bin/python3 test_hfe.py GOBLIND

redis-server 7.0 lacks these commands, so the expected replies are written
down from Redis 7.4's t_hash.c (hexpireGenericCommand, httlGenericCommand,
hpersistCommand): reply codes -2/0/1/2, the error texts and their order
(the type first, then the time, the condition, FIELDS, numfields). Then
time does its work: fields expire on access and in the background, a hash
whose last field expires is deleted with the keyspace events 7.4 emits
(hexpired, del), HSET drops a field's TTL and HINCRBY keeps it,
RENAME/COPY/MOVE keep TTLs, and the append-only file carries HPEXPIREAT
with absolute times and an HDEL per expired field, so a restart from it
rebuilds the same deadlines.
"""

import os
import sys
import time

import e2e

GOBLIND = sys.argv[1]


def call(c, *args):
    return e2e.plain(c.call(*args))


def codes(c, *args):
    t, v = c.call(*args)
    assert t == "*", (args, t, v)
    return [x[1] for x in v]


def err(c, *args):
    t, v = c.call(*args)
    assert t == "-", (args, t, v)
    return v.decode()


def test_replies():
    g = e2e.goblind(GOBLIND)
    for c in (g.client(), g.client(tcp=True)):
        call(c, "FLUSHALL")
        call(c, "HSET", "h", "a", "1", "b", "2", "c", "3")
        assert codes(c, "HEXPIRE", "nokey", "100", "FIELDS", "2", "a",
                     "b") == [-2, -2]
        assert codes(c, "HEXPIRE", "h", "100", "FIELDS", "2", "a",
                     "zz") == [1, -2]
        assert codes(c, "HTTL", "h", "FIELDS", "3", "a", "b", "zz") == \
            [100, -1, -2]
        pt = codes(c, "HPTTL", "h", "FIELDS", "1", "a")[0]
        assert 99000 < pt <= 100000, pt
        now = int(time.time())
        et = codes(c, "HEXPIRETIME", "h", "FIELDS", "1", "a")[0]
        assert now + 98 <= et <= now + 102, et
        pet = codes(c, "HPEXPIRETIME", "h", "FIELDS", "1", "a")[0]
        assert (pet + 999) // 1000 == et
        # NX XX GT LT, a field without a TTL counting as infinite.
        assert codes(c, "HEXPIRE", "h", "200", "NX", "FIELDS", "2", "a",
                     "b") == [0, 1]
        assert codes(c, "HEXPIRE", "h", "50", "XX", "FIELDS", "2", "a",
                     "c") == [1, 0]
        assert codes(c, "HEXPIRE", "h", "10", "GT", "FIELDS", "2", "a",
                     "c") == [0, 0]
        assert codes(c, "HEXPIRE", "h", "60", "gt", "FIELDS", "1", "a") == \
            [1]
        assert codes(c, "HEXPIRE", "h", "70", "LT", "FIELDS", "2", "a",
                     "c") == [0, 1]
        assert codes(c, "HPEXPIREAT", "h", str(pet + 5000), "FIELDS", "1",
                     "a") == [1]
        assert codes(c, "HPEXPIRETIME", "h", "FIELDS", "1", "a") == \
            [pet + 5000]
        assert codes(c, "HEXPIREAT", "h", str(now + 1000), "FIELDS", "1",
                     "b") == [1]
        assert codes(c, "HEXPIRETIME", "h", "FIELDS", "1", "b") == \
            [now + 1000]
        assert call(c, "OBJECT", "ENCODING", "h") == b"hashtable"
        # HPERSIST: 1, -1, -2.
        assert codes(c, "HPERSIST", "h", "FIELDS", "3", "a", "a", "zz") == \
            [1, -1, -2]
        assert codes(c, "HPERSIST", "nokey", "FIELDS", "1", "a") == [-2]
        # A time not in the future deletes: 2, and the key with the last.
        assert codes(c, "HEXPIRE", "h", "0", "FIELDS", "2", "a", "zz") == \
            [2, -2]
        assert codes(c, "HPEXPIREAT", "h", "1", "FIELDS", "2", "b", "c") == \
            [2, 2]
        assert call(c, "EXISTS", "h") == 0
        # Errors, in 7.4's order.
        call(c, "HSET", "h", "a", "1")
        call(c, "SET", "s", "x")
        assert err(c, "HEXPIRE", "s", "abc", "FIELDS", "1", "a") == \
            "WRONGTYPE Operation against a key holding the wrong kind " \
            "of value"
        assert err(c, "HTTL", "s", "FIELDS", "0", "a").startswith(
            "WRONGTYPE")
        assert err(c, "HEXPIRE", "h", "abc", "FIELDS", "1", "a") == \
            "ERR value is not an integer or out of range"
        assert err(c, "HEXPIRE", "h", "-1", "FIELDS", "1", "a") == \
            "ERR invalid expire time, must be >= 0"
        assert err(c, "HEXPIRE", "h", "70368744177664", "FIELDS", "1",
                   "a") == "ERR invalid expire time in 'hexpire' command"
        assert err(c, "HPEXPIREAT", "h", "70368744177664", "FIELDS", "1",
                   "a") == "ERR invalid expire time in 'hpexpireat' command"
        assert codes(c, "HPEXPIREAT", "h", "70368744177663", "FIELDS", "1",
                     "a") == [1]
        assert err(c, "HEXPIRE", "h", "1", "NX", "XX", "FIELDS", "1",
                   "a") == "ERR Mandatory argument FIELDS is missing or " \
            "not at the right position"
        assert err(c, "HEXPIRE", "h", "1", "FOO", "1", "a") == \
            "ERR Mandatory argument FIELDS is missing or not at the " \
            "right position"
        assert err(c, "HEXPIRE", "h", "1", "FIELDS", "0", "a") == \
            "ERR Parameter `numFields` should be greater than 0"
        assert err(c, "HEXPIRE", "h", "1", "FIELDS", "x", "a") == \
            "ERR Parameter `numFields` should be greater than 0"
        assert err(c, "HEXPIRE", "h", "1", "FIELDS", "2", "a") == \
            "ERR The `numfields` parameter must match the number of " \
            "arguments"
        assert err(c, "HTTL", "h", "FIELDS", "0", "a") == \
            "ERR Number of fields must be a positive integer"
        assert err(c, "HPERSIST", "h", "FIELDS", "3", "a") == \
            "ERR The `numfields` parameter must match the number of " \
            "arguments"
        assert err(c, "HTTL", "h", "FOO", "1", "a").startswith(
            "ERR Mandatory argument FIELDS")
        assert err(c, "HEXPIRE", "h", "1", "FIELDS") == \
            "ERR wrong number of arguments for 'hexpire' command"
        assert err(c, "HPERSIST", "h", "FIELDS", "1") == \
            "ERR wrong number of arguments for 'hpersist' command"
        # COMMAND INFO knows them.
        info = c.call("COMMAND", "INFO", "hexpire", "httl", "hpersist")[1]
        assert [e2e.plain(x)[1] for x in info] == [-6, -5, -5], info
        c.close()
    e2e.check_stopped_cleanly(g)


def test_expiry_and_events():
    g = e2e.goblind(GOBLIND)
    c = g.client()
    sub = g.client()
    call(c, "CONFIG", "SET", "notify-keyspace-events", "KEA")
    assert call(sub, "PSUBSCRIBE", "__keyevent@0__:*")[0] == b"psubscribe"
    call(c, "HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4")
    assert codes(c, "HPEXPIRE", "h", "60", "FIELDS", "2", "a", "b") == [1, 1]
    # HSET drops a TTL, HINCRBY keeps it.
    call(c, "HSET", "h", "a", "9")
    assert codes(c, "HTTL", "h", "FIELDS", "1", "a") == [-1]
    assert codes(c, "HPEXPIRE", "h", "60", "FIELDS", "1", "c") == [1]
    assert call(c, "HINCRBY", "h", "c", "1") == 4
    assert codes(c, "HPTTL", "h", "FIELDS", "1", "c")[0] > 0
    time.sleep(0.2)
    # Access: the expired fields are gone from every read.
    assert sorted(call(c, "HKEYS", "h")) == [b"a", b"d"]
    assert call(c, "HLEN", "h") == 2
    assert call(c, "HGET", "h", "b") is None
    assert sorted(call(c, "HGETALL", "h")[0::2]) == [b"a", b"d"]
    cur, items = call(c, "HSCAN", "h", "0")
    assert sorted(items[0::2]) == [b"a", b"d"], items
    for _ in range(20):
        assert call(c, "HRANDFIELD", "h") in (b"a", b"d")
    # The last field: the key goes, with hexpired and del.
    assert codes(c, "HPEXPIRE", "h", "50", "FIELDS", "2", "a", "d") == [1, 1]
    time.sleep(0.15)
    assert call(c, "EXISTS", "h") == 0
    # Background: keys nobody reads lose their fields to the cron.
    for i in range(20):
        call(c, "HSET", "k%d" % i, "a", "1", "b", "2")
        codes(c, "HPEXPIRE", "k%d" % i, "30", "FIELDS", "1", "a")
        if i % 2:
            codes(c, "HPEXPIRE", "k%d" % i, "30", "FIELDS", "1", "b")
    deadline = time.monotonic() + 5
    while call(c, "DBSIZE") != 10 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert call(c, "DBSIZE") == 10
    assert call(c, "HKEYS", "k0") == [b"b"]
    # HPERSIST's event, and hdel for a time in the past.
    call(c, "HSET", "p", "a", "1", "b", "2")
    codes(c, "HEXPIRE", "p", "100", "FIELDS", "1", "a")
    codes(c, "HPERSIST", "p", "FIELDS", "1", "a")
    codes(c, "HEXPIRE", "p", "0", "FIELDS", "1", "a")
    codes(c, "HEXPIRE", "p", "0", "FIELDS", "1", "b")
    events = []
    sub.s.settimeout(2)
    try:
        while True:
            m = e2e.plain(sub.read())
            events.append((m[2].split(b":")[1].decode(), m[3].decode()))
            if events[-1] == ("del", "p"):
                break
    except OSError:
        pass
    def of(key):
        # Fields due at different moments may expire in one pass or in
        # several (the cron's timing): repeated hexpired events count once.
        out = []
        for e, k in events:
            if k == key and not (e == "hexpired" and out and
                                 out[-1] == "hexpired"):
                out.append(e)
        return out
    assert of("h") == ["hset", "hexpire", "hset", "hexpire", "hincrby",
                       "hexpired", "hexpire", "hexpired", "del"], of("h")
    assert of("k0") == ["hset", "hexpire", "hexpired"], of("k0")
    assert of("k1") == ["hset", "hexpire", "hexpire", "hexpired", "del"], \
        of("k1")
    assert of("p") == ["hset", "hexpire", "hpersist", "hdel", "hdel",
                       "del"], of("p")
    c.close()
    sub.close()
    e2e.check_stopped_cleanly(g)


def test_keys_keep_ttls():
    g = e2e.goblind(GOBLIND)
    c = g.client()
    call(c, "HSET", "h", "a", "1", "b", "2")
    codes(c, "HEXPIRE", "h", "1000", "FIELDS", "1", "a")
    assert call(c, "COPY", "h", "h2") == 1
    assert call(c, "RENAME", "h", "h3") == b"OK"
    assert call(c, "MOVE", "h2", "5") == 1
    assert codes(c, "HTTL", "h3", "FIELDS", "2", "a", "b") == [1000, -1]
    call(c, "SELECT", "5")
    assert codes(c, "HTTL", "h2", "FIELDS", "2", "a", "b") == [1000, -1]
    c.close()
    e2e.check_stopped_cleanly(g)


def test_aof_carries_deadlines():
    d = e2e.tmpdir()
    g = e2e.goblind(GOBLIND, "--dir", d, "--appendonly", "yes")
    c = g.client()
    call(c, "HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4")
    assert codes(c, "HEXPIRE", "h", "1000", "FIELDS", "3", "a", "zz",
                 "b") == [1, -2, 1]
    et = codes(c, "HPEXPIRETIME", "h", "FIELDS", "1", "a")[0]
    assert codes(c, "HEXPIRE", "h", "0", "FIELDS", "1", "c") == [2]
    assert codes(c, "HPEXPIRE", "h", "40", "FIELDS", "1", "d") == [1]
    assert codes(c, "HEXPIRE", "h", "10", "NX", "FIELDS", "1", "a") == [0]
    time.sleep(0.1)
    assert call(c, "HGET", "h", "d") is None
    c.close()
    e2e.check_stopped_cleanly(g)
    adir = os.path.join(d, "appendonlydir")
    incr = [n for n in os.listdir(adir) if n.endswith(".incr.aof")][0]
    text = open(os.path.join(adir, incr), "rb").read()
    assert b"HPEXPIREAT\r\n$1\r\nh\r\n$13\r\n%d\r\n$6\r\nFIELDS\r\n" \
           b"$1\r\n2\r\n$1\r\na\r\n$1\r\nb\r\n" % et in text, text
    assert b"$4\r\nHDEL\r\n$1\r\nh\r\n$1\r\nc\r\n" in text, text
    assert b"$4\r\nHDEL\r\n$1\r\nh\r\n$1\r\nd\r\n" in text, text
    assert b"HEXPIRE\r\n" not in text and b"NX" not in text, text
    g = e2e.goblind(GOBLIND, "--dir", d, "--appendonly", "yes")
    c = g.client()
    assert sorted(call(c, "HKEYS", "h")) == [b"a", b"b"]
    assert codes(c, "HPEXPIRETIME", "h", "FIELDS", "2", "a", "b") == [et, et]
    c.close()
    e2e.check_stopped_cleanly(g)


def test_snapshot_rewrite_and_dump():
    """SAVE and a restart, BGREWRITEAOF and a restart keep the deadlines;
    DUMP (RDB 10 has no field TTLs) carries the live fields without them,
    and redis-server RESTOREs it."""
    d = e2e.tmpdir()
    g = e2e.goblind(GOBLIND, "--dir", d)
    c = g.client()
    call(c, "HSET", "h", "a", "1", "b", "2", "c", "3")
    codes(c, "HPEXPIRE", "h", "100000", "FIELDS", "1", "a")
    codes(c, "HPEXPIRE", "h", "30", "FIELDS", "1", "c")
    call(c, "HSET", "gone", "x", "1")
    codes(c, "HPEXPIRE", "gone", "30", "FIELDS", "1", "x")
    big = ["f%d" % i for i in range(300)]
    call(c, "HSET", "big", *[x for f in big for x in (f, "v")])
    codes(c, "HPEXPIRE", "big", "100000", "FIELDS", "2", "f7", "f299")
    et = codes(c, "HPEXPIRETIME", "h", "FIELDS", "1", "a")[0]
    time.sleep(0.1)
    # c and gone are due but not yet read: DUMP leaves c out.
    payload = call(c, "DUMP", "h")
    assert call(c, "SAVE") == b"OK"
    c.close()
    e2e.check_stopped_cleanly(g)
    r = e2e.redis_server()
    rc = r.client()
    assert call(rc, "RESTORE", "h", "0", payload) == b"OK"
    assert sorted(call(rc, "HGETALL", "h")) == [b"1", b"2", b"a", b"b"]
    rc.close()
    r.stop()
    g = e2e.goblind(GOBLIND, "--dir", d)
    c = g.client()
    assert call(c, "DBSIZE") == 2
    assert sorted(call(c, "HKEYS", "h")) == [b"a", b"b"]
    assert codes(c, "HPEXPIRETIME", "h", "FIELDS", "2", "a", "b") == [et, -1]
    assert codes(c, "HTTL", "big", "FIELDS", "3", "f7", "f299", "f8")[2] == -1
    assert call(c, "HLEN", "big") == 300
    assert call(c, "CONFIG", "SET", "appendonly", "yes") == b"OK"
    deadline = time.monotonic() + 10
    while b"aof_rewrite_in_progress:1" in call(c, "INFO", "persistence") \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    assert call(c, "DEBUG", "RELOAD") == b"OK"
    assert codes(c, "HPEXPIRETIME", "h", "FIELDS", "2", "a", "b") == [et, -1]
    c.close()
    e2e.check_stopped_cleanly(g)
    # The rewritten AOF base: HSET then an HPEXPIREAT per field.
    g = e2e.goblind(GOBLIND, "--dir", d, "--appendonly", "yes")
    c = g.client()
    assert codes(c, "HPEXPIRETIME", "h", "FIELDS", "2", "a", "b") == [et, -1]
    assert codes(c, "HPTTL", "big", "FIELDS", "1", "f7")[0] > 0
    c.close()
    e2e.check_stopped_cleanly(g)
    adir = os.path.join(d, "appendonlydir")
    base = [n for n in os.listdir(adir) if ".base." in n][0]
    text = open(os.path.join(adir, base), "rb").read()
    assert b"$10\r\nHPEXPIREAT\r\n$1\r\nh\r\n$13\r\n%d\r\n$6\r\n" \
        b"FIELDS\r\n$1\r\n1\r\n$1\r\na\r\n" % et in text, text[:400]


if __name__ == "__main__":
    e2e.run_tests([test_replies, test_expiry_and_events, test_keys_keep_ttls,
                   test_aof_carries_deadlines, test_snapshot_rewrite_and_dump])
