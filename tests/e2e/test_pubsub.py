"""test_pubsub.py - Pub/Sub on goblind: python3-redis's pubsub (RESP2,
Unix socket and TCP), RESP3 push messages, redis-cli SUBSCRIBE, ACL
channel rules, a slow subscriber cut off by the pubsub output limit, and
the replies and message streams of a scripted session compared byte for
byte with redis-server 7.0.

    /usr/bin/python3 test_pubsub.py GOBLIND [GOBLIN_CLI]

With GOBLIN_CLI, goblin-cli SUBSCRIBE too, over the Unix socket, TCP and
a ring, in RESP2, RESP3 and SBE, against redis-cli's output.
"""

import os
import subprocess
import sys
import time

import redis

import e2e


def connect(gob, tcp=False, **kw):
    if tcp:
        return redis.Redis(host="127.0.0.1", port=gob.port, **kw)
    return redis.Redis(unix_socket_path=gob.sock, **kw)


def next_message(p, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        m = p.get_message(timeout=0.2)
        if m is not None:
            return m
    raise AssertionError("no message within %.1f s" % timeout)


def check_redis_py(gob, tcp):
    r = connect(gob, tcp)
    sub = connect(gob, tcp)
    p = sub.pubsub()
    p.subscribe("news", "sport")
    assert next_message(p) == {"type": "subscribe", "pattern": None,
                               "channel": b"news", "data": 1}
    assert next_message(p)["data"] == 2
    p.psubscribe("n*")
    assert next_message(p) == {"type": "psubscribe", "pattern": None,
                               "channel": b"n*", "data": 3}
    assert r.publish("news", b"bin\x00\r\nary") == 2
    assert next_message(p) == {"type": "message", "pattern": None,
                               "channel": b"news", "data": b"bin\x00\r\nary"}
    assert next_message(p) == {"type": "pmessage", "pattern": b"n*",
                               "channel": b"news", "data": b"bin\x00\r\nary"}
    assert r.publish("nothing-here", "x") == 1
    assert next_message(p)["channel"] == b"nothing-here"
    assert r.publish("other", "x") == 0
    assert sorted(r.pubsub_channels()) == [b"news", b"sport"]
    assert r.pubsub_channels("s*") == [b"sport"]
    assert r.pubsub_numsub("news", "none") == [(b"news", 1), (b"none", 0)]
    assert r.pubsub_numpat() == 1
    line = [c for c in r.client_list() if c["id"] != str(r.client_id())]
    assert line[0]["sub"] == "2" and line[0]["psub"] == "1", line
    assert "P" in line[0]["flags"], line
    p.unsubscribe()
    p.punsubscribe()
    kinds = sorted(next_message(p)["type"] for _ in range(3))
    assert kinds == ["punsubscribe", "unsubscribe", "unsubscribe"], kinds
    assert r.pubsub_numpat() == 0 and r.pubsub_channels() == []
    p.close()
    r.close()
    sub.close()


def test_redis_py_unix(gob):
    check_redis_py(gob, False)


def test_redis_py_tcp(gob):
    check_redis_py(gob, True)


def test_resp2_subscribed_mode(gob):
    c = gob.client()
    assert e2e.plain(c.call("SUBSCRIBE", "a")) == [b"subscribe", b"a", 1]
    assert e2e.plain(c.call("PING")) == [b"pong", b""]
    assert e2e.plain(c.call("PING", "x")) == [b"pong", b"x"]
    t, v = c.call("GET", "a")
    assert t == "-" and v == (b"ERR Can't execute 'get': only (P|S)SUBSCRIBE"
                              b" / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
                              b"are allowed in this context"), v
    assert c.call("RESET") == ("+", b"RESET")
    assert c.call("GET", "a") == ("$", None)
    c.close()


def test_resp3_push(gob):
    sub, pub = gob.client(), gob.client()
    assert sub.call("HELLO", "3")[0] == "%"
    assert sub.call("SUBSCRIBE", "ch") == (">", [
        ("$", b"subscribe"), ("$", b"ch"), (":", 1)])
    assert sub.call("SET", "k", "v") == ("+", b"OK")  # every command runs
    assert pub.call("PUBLISH", "ch", "hello") == (":", 1)
    assert sub.read() == (">", [("$", b"message"), ("$", b"ch"),
                                ("$", b"hello")])
    # Publishing to itself: the message comes before the reply.
    sub.send_raw(e2e.Client.encode(["PUBLISH", "ch", "me"]))
    assert sub.read() == (">", [("$", b"message"), ("$", b"ch"),
                                ("$", b"me")])
    assert sub.read() == (":", 1)
    assert sub.call("UNSUBSCRIBE") == (">", [
        ("$", b"unsubscribe"), ("$", b"ch"), (":", 0)])
    assert sub.call("UNSUBSCRIBE") == (">", [
        ("$", b"unsubscribe"), ("_", None), (":", 0)])
    sub.close()
    pub.close()


def test_redis_cli_subscribe(gob):
    cli = subprocess.Popen(["redis-cli", "-s", gob.sock, "SUBSCRIBE", "tv"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        c = gob.client()
        end = time.monotonic() + 10
        while c.call("PUBSUB", "NUMSUB", "tv")[1][1] != (":", 1):
            assert time.monotonic() < end, "redis-cli did not subscribe"
            time.sleep(0.05)
        assert c.call("PUBLISH", "tv", "show") == (":", 1)
        want = ["subscribe", "tv", "1", "message", "tv", "show"]
        lines = [cli.stdout.readline().decode().strip() for _ in want]
        assert lines == want, lines
        c.close()
    finally:
        cli.kill()
        cli.wait()


def cli_subscribe_lines(argv, pub, channel, n_lines):
    """Runs argv (a CLI's SUBSCRIBE channel), waits until the server counts
    its subscription, publishes twice and returns the first n_lines lines
    of its output."""
    cli = subprocess.Popen(argv + ["SUBSCRIBE", channel],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        end = time.monotonic() + 20
        while pub.call("PUBSUB", "NUMSUB", channel)[1][1] != (":", 1):
            assert cli.poll() is None, (argv, cli.stderr.read())
            assert time.monotonic() < end, "%r did not subscribe" % argv
            time.sleep(0.02)
        assert pub.call("PUBLISH", channel, "first") == (":", 1)
        assert pub.call("PUBLISH", channel, "two words") == (":", 1)
        lines = [cli.stdout.readline().decode() for _ in range(n_lines)]
        return [l.replace(channel, "CH") for l in lines]
    finally:
        cli.kill()
        cli.wait()


# goblin-cli's path and goblind's ring (main sets them).
CLI_PATH = None
RING = None


def test_goblin_cli_subscribe(gob):
    """goblin-cli SUBSCRIBE prints what redis-cli prints (raw, stdout not
    a terminal), over the Unix socket, TCP and the ring, in every
    protocol."""
    cli_path, ring = CLI_PATH, RING
    if cli_path is None:
        return
    pub = gob.client()
    want = cli_subscribe_lines(["redis-cli", "-s", gob.sock], pub, "cli0", 9)
    assert want[:3] == ["subscribe\n", "CH\n", "1\n"], want
    n = 0
    for where in (["-s", gob.sock], ["-h", "127.0.0.1", "-p", str(gob.port)],
                  ["--ring", ring]):
        for proto in ([], ["-3"], ["--sbe"]):
            n += 1
            got = cli_subscribe_lines([cli_path] + where + proto, pub,
                                      "cli%d" % n, 9)
            assert got == want, (where, proto, got, want)
    pub.close()


def test_acl_channels(gob):
    admin = gob.client()
    assert admin.call("ACL", "SETUSER", "ann", "on", "nopass", "+@all",
                      "~*", "resetchannels", "&news.*", "&exact")[0] == "+"
    c = gob.client()
    assert c.call("AUTH", "ann", "x") == ("+", b"OK")
    denied = (b"NOPERM this user has no permissions to access one of the "
              b"channels used as arguments")
    assert c.call("PUBLISH", "news.tech", "x") == (":", 0)
    assert c.call("PUBLISH", "sport", "x") == ("-", denied)
    assert c.call("SUBSCRIBE", "sport") == ("-", denied)
    # A pattern must be one of the user's literally.
    assert c.call("PSUBSCRIBE", "news.t*") == ("-", denied)
    assert e2e.plain(c.call("PSUBSCRIBE", "news.*")) == [
        b"psubscribe", b"news.*", 1]
    assert e2e.plain(c.call("UNSUBSCRIBE", "sport")) == [
        b"unsubscribe", b"sport", 1]
    assert admin.call("ACL", "DRYRUN", "ann", "PUBLISH", "x", "y") == (
        "$", b"This user has no permissions to access the 'x' channel")
    assert admin.call("ACL", "SETUSER", "ann", "allchannels")[0] == "+"
    c.close()
    c = gob.client()
    assert c.call("AUTH", "ann", "x") == ("+", b"OK")
    assert c.call("PUBLISH", "sport", "x") == (":", 0)
    c.close()
    admin.close()


def test_slow_subscriber_is_disconnected(gob):
    pub = gob.client()
    assert pub.call("CONFIG", "SET", "client-output-buffer-limit",
                    "pubsub 256kb 128kb 60")[0] == "+"
    slow = gob.client()
    slow.s.setsockopt(__import__("socket").SOL_SOCKET,
                      __import__("socket").SO_RCVBUF, 4096)
    assert e2e.plain(slow.call("SUBSCRIBE", "flood")) == [
        b"subscribe", b"flood", 1]
    payload = b"x" * 16384
    t0 = time.monotonic()
    for i in range(400):
        # The publisher is answered every time and never waits.
        assert pub.call("PUBLISH", "flood", payload)[0] == ":"
        if pub.call("PUBSUB", "NUMSUB", "flood")[1][1] == (":", 0):
            break
    assert pub.call("PUBSUB", "NUMSUB", "flood")[1][1] == (":", 0)
    assert time.monotonic() - t0 < 60
    try:
        slow.read_until_closed(timeout=10)
    except AssertionError:
        raise AssertionError("the slow subscriber is still connected")
    assert pub.call("CONFIG", "SET", "client-output-buffer-limit",
                    "pubsub 32mb 8mb 60")[0] == "+"
    pub.close()


SCRIPT = [
    # (client, command...) for the subscriber "s" and publisher "p".
    ("s", "SUBSCRIBE", "a", "b"), ("s", "PSUBSCRIBE", "a*", "[ab]?"),
    ("p", "PUBLISH", "a", "one"), ("p", "PUBLISH", "bb", "two"),
    ("p", "PUBLISH", "zz", "none"), ("p", "PUBSUB", "NUMPAT"),
    ("p", "PUBSUB", "NUMSUB", "a", "b", "c"), ("p", "PUBSUB", "CHANNELS",
                                               "a"),
    ("s", "PING"), ("s", "PING", "hi"), ("s", "SET", "dk", "v"),
    ("s", "SSUBSCRIBE", "sh"), ("p", "SPUBLISH", "sh", "shard"),
    ("p", "PUBSUB", "SHARDCHANNELS"), ("p", "PUBSUB", "SHARDNUMSUB", "sh"),
    ("s", "SUNSUBSCRIBE", "sh"), ("s", "UNSUBSCRIBE", "b"),
    ("s", "PUNSUBSCRIBE", "a*"), ("p", "PUBLISH", "b", "gone"),
    ("s", "PUNSUBSCRIBE", "[ab]?"), ("s", "UNSUBSCRIBE", "a"),
    ("s", "UNSUBSCRIBE"), ("s", "PUNSUBSCRIBE"), ("s", "SUNSUBSCRIBE"),
    ("s", "GET", "dk"), ("p", "PUBSUB", "CHANNELS", "a", "b"),
    ("p", "PUBSUB", "NUMPAT", "x"), ("p", "PUBSUB", "NOPE"),
    ("p", "SUBSCRIBE"), ("p", "PUBLISH", "a"),
]


def test_omem_counts_unsent_output(gob):
    """CLIENT LIST's omem is the bytes a subscriber has not been sent yet
    (what the pubsub output limit counts), not only pending messages."""
    c, sub = gob.client(), gob.client()
    c.call("CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 0 0")
    sid = e2e.plain(sub.call("CLIENT", "ID"))
    sub.call("SUBSCRIBE", "big")
    payload = b"x" * (256 * 1024)
    for _ in range(64):  # 16 MiB: far more than the socket buffers hold
        c.call("PUBLISH", "big", payload)
    line = [l for l in e2e.plain(c.call("CLIENT", "LIST")).split(b"\n")
            if l.startswith(b"id=%d " % sid)][0]
    fields = dict(f.split(b"=", 1) for f in line.split(b" ") if b"=" in f)
    assert int(fields[b"omem"]) >= 8 * 1024 * 1024, line
    assert int(fields[b"omem"]) <= 64 * (256 * 1024 + 64), line
    sub.close()
    c.call("CONFIG", "SET", "client-output-buffer-limit",
           "pubsub 33554432 8388608 60")
    c.close()


def transcript(srv, resp3):
    """The bytes each client receives for SCRIPT. After each step both
    clients send PING with a marker (answered as PONG text or, subscribed
    in RESP2, as a ["pong", marker] array): everything up to the marker's
    reply is what the step produced."""
    clients = {"s": srv.client(), "p": srv.client()}
    if resp3:
        for c in clients.values():
            c.call("HELLO", "3")
    got = {"s": b"", "p": b""}
    for i, (who, *cmd) in enumerate(SCRIPT):
        clients[who].send_raw(e2e.Client.encode(cmd))
        mark = b"m%d" % i
        # The actor first: once its marker is back, its command has run
        # and delivered whatever it delivers.
        for name in sorted(clients, key=lambda n: n != who):
            cl = clients[name]
            cl.send_raw(e2e.Client.encode(["PING", mark]))
            data = b""
            while not data.endswith(mark + b"\r\n"):
                try:
                    chunk = cl.s.recv(65536)
                except TimeoutError:
                    raise AssertionError("step %d %r: %r" % (i, cmd, data))
                if not chunk:
                    break
                data += chunk
            got[name] += data
    for c in clients.values():
        c.close()
    return got


def test_differential(gob):
    red = e2e.redis_server()
    try:
        for resp3 in (False, True):
            want, got = transcript(red, resp3), transcript(gob, resp3)
            for who in ("s", "p"):
                g, w = got[who], want[who]
                if g != w:
                    i = next((k for k in range(min(len(g), len(w)))
                              if g[k] != w[k]), min(len(g), len(w)))
                    raise AssertionError(
                        "RESP%d client %s differs at byte %d:\ngoblind %r\n"
                        "redis   %r" % (3 if resp3 else 2, who, i,
                                        g[max(0, i - 80):i + 120],
                                        w[max(0, i - 80):i + 120]))
    finally:
        red.stop()


NOTIFY_SCRIPT = [
    ["SET", "s", "1"], ["SET", "s", "2", "EX", "100"], ["SETNX", "s", "x"],
    ["SETNX", "n", "x"], ["APPEND", "s", "z"], ["SETRANGE", "s", "1", "q"],
    ["SETRANGE", "s", "1", ""], ["INCR", "i"], ["INCRBY", "i", "5"],
    ["DECR", "i"], ["INCRBYFLOAT", "i", "1.5"], ["GETSET", "s", "g"],
    ["MSET", "m1", "a", "m2", "b"], ["MSETNX", "m1", "a", "m3", "c"],
    ["MSETNX", "m4", "a", "m5", "c"], ["GETDEL", "m4"], ["GET", "nokey"],
    ["MGET", "m1", "nokey2"], ["GETEX", "m1", "EX", "100"],
    ["GETEX", "m1", "PERSIST"], ["GETEX", "m1", "PERSIST"],
    ["EXPIRE", "m2", "100"], ["PERSIST", "m2"], ["PEXPIRE", "m2", "-1"],
    ["EXPIRE", "missing", "10"], ["RENAME", "m3", "m6"],
    ["RENAMENX", "m6", "m1"], ["RENAME", "m6", "m6"], ["DEL", "m6", "nx"],
    ["HSET", "h", "a", "1", "b", "2"], ["HSETNX", "h", "a", "9"],
    ["HSETNX", "h", "c", "3"], ["HINCRBY", "h", "a", "2"],
    ["HINCRBYFLOAT", "h", "a", "0.5"], ["HDEL", "h", "a", "zz"],
    ["HDEL", "h", "b", "c"], ["HMSET", "h2", "f", "v"],
    ["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"],
    ["ZADD", "z", "NX", "5", "a"], ["ZADD", "z", "INCR", "1", "a"],
    ["ZINCRBY", "z", "1", "b"], ["ZREM", "z", "a", "nope"],
    ["ZREMRANGEBYRANK", "z", "0", "0"], ["ZADD", "z", "9", "x", "8", "y"],
    ["ZREMRANGEBYSCORE", "z", "9", "9"], ["ZPOPMIN", "z"],
    ["ZPOPMAX", "z", "5"], ["ZADD", "za", "1", "a", "2", "b"],
    ["ZADD", "zb", "1", "b"], ["ZUNIONSTORE", "zu", "2", "za", "zb"],
    ["ZINTERSTORE", "zi", "2", "za", "zb"],
    ["ZDIFFSTORE", "zu", "2", "za", "za"],
    ["ZRANGESTORE", "zr", "za", "0", "-1"],
    ["ZRANGESTORE", "zr", "za", "5", "6"],
    ["ZADD", "zl", "0", "a", "0", "b", "0", "c"],
    ["ZREMRANGEBYLEX", "zl", "[a", "[b"], ["ZREM", "zl", "c"],
    ["SETBIT", "b1", "7", "1"], ["SETBIT", "b2", "0", "1"],
    ["BITOP", "AND", "b3", "b1", "b2"], ["BITOP", "OR", "b3", "nob", "nob"],
    ["PFADD", "p1", "a", "b"], ["PFADD", "p1", "a"],
    ["PFMERGE", "p2", "p1"], ["GEOADD", "g", "13.36", "38.11", "pa"],
    ["GEOADD", "g", "NX", "13.36", "38.11", "pa"],
    ["BITFIELD", "bf", "SET", "u8", "0", "7", "GET", "u8", "0"],
    ["BITFIELD", "bf", "GET", "u8", "0"],
    ["BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "300"],
    ["BITFIELD", "bf", "INCRBY", "u8", "0", "1"],
    ["GEOADD", "g", "13.37", "38.12", "pb", "15.08", "37.50", "pc"],
    ["GEOSEARCHSTORE", "gs", "g", "FROMLONLAT", "13.36", "38.11",
     "BYRADIUS", "50", "km"],
    ["GEOSEARCHSTORE", "gs", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "1",
     "km"],
    ["GEORADIUS", "g", "13.36", "38.11", "50", "km", "STORE", "gr"],
    ["GEORADIUSBYMEMBER", "g", "pa", "500", "km", "STOREDIST", "gr"],
    ["GEORADIUS", "g", "0", "0", "1", "km", "STORE", "gr"],
    ["GEORADIUS", "nog", "0", "0", "1", "km", "STORE", "gs"],
    ["LPUSH", "l", "a", "b", "c"], ["RPUSH", "l", "d", "e"],
    ["LPUSHX", "nol", "a"], ["RPUSHX", "l", "f"], ["LPOP", "l"],
    ["RPOP", "l", "2"], ["LPOP", "l", "0"], ["LPOP", "nol"],
    ["LSET", "l", "0", "z"], ["LINSERT", "l", "BEFORE", "z", "y"],
    ["LINSERT", "l", "BEFORE", "nope", "y"], ["LREM", "l", "0", "nope"],
    ["LREM", "l", "1", "y"], ["LTRIM", "l", "0", "-1"],
    ["LTRIM", "nol", "0", "1"], ["RPUSH", "l2", "x"],
    ["LMOVE", "l", "l2", "LEFT", "RIGHT"], ["RPOPLPUSH", "l", "l"],
    ["RPOPLPUSH", "l", "l3"], ["LTRIM", "l3", "1", "0"],
    ["RPUSH", "lm", "1", "2", "3"], ["LMPOP", "2", "nol", "lm", "LEFT",
                                      "COUNT", "2"],
    ["LMPOP", "1", "lm", "RIGHT", "COUNT", "5"],
    ["RPUSH", "bl", "a", "b"], ["BLPOP", "nol", "bl", "1"],
    ["BRPOP", "bl", "1"], ["RPUSH", "bl", "a", "b"],
    ["BLMPOP", "1", "1", "bl", "RIGHT", "COUNT", "9"],
    ["RPUSH", "bl", "a"], ["BLMOVE", "bl", "bl2", "RIGHT", "LEFT", "1"],
    ["BRPOPLPUSH", "bl2", "bl3", "1"],
    ["ZADD", "bz", "1", "a", "2", "b"], ["BZPOPMIN", "bz", "1"],
    ["BZPOPMAX", "bz", "1"], ["ZADD", "bz", "1", "a", "2", "b"],
    ["BZMPOP", "1", "1", "bz", "MIN", "COUNT", "5"],
    ["ZADD", "bz", "1", "a"], ["ZMPOP", "1", "bz", "MAX"],
    ["WAIT", "BLPOP", "w1", "w2", "0"], ["RPUSH", "w2", "x", "y"],
    ["WAIT", "BRPOP", "w1", "0"], ["LPUSH", "w1", "x"],
    ["WAIT", "BLMOVE", "w3", "w4", "LEFT", "RIGHT", "0"],
    ["RPUSH", "w3", "x"],
    ["WAIT", "BLMPOP", "0", "1", "w5", "LEFT", "COUNT", "3"],
    ["RPUSH", "w5", "a", "b"],
    ["WAIT", "BZPOPMIN", "wz", "0"], ["ZADD", "wz", "1", "a", "2", "b"],
    ["WAIT", "BZMPOP", "0", "1", "wz2", "MAX", "COUNT", "2"],
    ["ZADD", "wz2", "1", "a"],
    ["SADD", "st", "a", "b", "c", "d"], ["SADD", "st", "a"],
    ["SREM", "st", "a", "nope"], ["SREM", "st", "nope"],
    ["SMOVE", "st", "st2", "b"], ["SMOVE", "st", "st2", "nope"],
    ["SADD", "st", "b"], ["SMOVE", "st", "st2", "b"],
    ["SMOVE", "st", "st", "c"], ["SPOP", "st"], ["SPOP", "st", "0"],
    ["SADD", "st", "a", "b", "c"], ["SPOP", "st", "2"],
    ["SPOP", "st", "5"], ["SPOP", "nost"], ["SADD", "st", "1", "2", "3"],
    ["SADD", "su", "3", "4"], ["SINTERSTORE", "sx", "st", "su"],
    ["SINTERSTORE", "sx", "st", "nost"], ["SINTERSTORE", "sx", "st", "nost"],
    ["SUNIONSTORE", "sx", "st", "su"], ["SDIFFSTORE", "sx", "st", "su"],
    ["SDIFFSTORE", "sx", "st", "st"], ["SINTERCARD", "2", "st", "su"],
    ["SET", "px", "v", "PX", "30"], ["SLEEP"], ["GET", "px"],
    ["COPY", "s", "cp"], ["COPY", "s", "cp"], ["COPY", "s", "cp", "REPLACE"],
    ["COPY", "s", "cp", "DB", "2"], ["MOVE", "cp", "4"], ["SET", "r1", "x"],
    ["SET", "r2", "y"], ["RENAME", "r1", "r2"], ["DUMPRESTORE", "s", "rs"],
    ["DUMPRESTORE", "s", "rs", "REPLACE"], ["SORT", "st", "STORE", "so"],
    ["SORT", "st", "STORE", "so"], ["APPEND", "ap", "x"], ["INCR", "in"],
    ["HINCRBY", "hi", "f", "1"], ["PFADD", "pf"], ["SETRANGE", "sr", "2", "x"],
    ["SMOVE", "st", "sm", "1"], ["MSET", "ms1", "a", "ms2", "b", "ms1", "c"],
    ["MSETNX", "ms3", "a", "ms4", "b"], ["GETSET", "gs1", "v"],
    ["SET", "gs2", "v", "GET"], ["BITFIELD", "bf2", "GET", "u8", "0"],
    ["SELECT", "3"], ["SET", "d3", "x"], ["LPUSH", "d3l", "a"],
    ["SET", "px3", "v", "PX", "30"], ["SLEEP"], ["GET", "px3"],
    ["SELECT", "0"],
]


def wait_blocked(c, n):
    """Until n clients are blocked (INFO clients' blocked_clients)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        info = e2e.plain(c.call("INFO", "clients"))
        if b"blocked_clients:%d\r\n" % n in info:
            return
        time.sleep(0.01)
    raise AssertionError("no client blocked")


def notify_transcript(srv, flags):
    """The messages a PSUBSCRIBE __key*__:* client gets while another
    runs NOTIFY_SCRIPT with notify-keyspace-events set to flags."""
    sub, c = srv.client(), srv.client()
    assert c.call("FLUSHALL")[0] == "+"
    assert c.call("CONFIG", "SET", "notify-keyspace-events", flags)[0] == "+"
    sub.call("PSUBSCRIBE", "__key*__:*")
    out = []
    waiter = None
    for i, cmd in enumerate(NOTIFY_SCRIPT):
        if cmd == ["SLEEP"]:
            time.sleep(0.1)
            continue
        if cmd[0] == "WAIT":
            # A client blocks on cmd[1:]; the next step serves it.
            waiter = srv.client()
            waiter.send_raw(e2e.Client.encode(cmd[1:]))
            wait_blocked(c, 1)
            continue
        if cmd[0] == "DUMPRESTORE":
            # RESTORE of a DUMP taken here: the payload is the server's.
            payload = e2e.plain(c.call("DUMP", cmd[1]))
            c.call("RESTORE", cmd[2], "0", payload, *cmd[3:])
        else:
            c.call(*cmd)
        if waiter is not None:
            waiter.read()
            waiter.close()
            waiter = None
        mark = b"n%d" % i
        sub.send_raw(e2e.Client.encode(["PING", mark]))
        while True:
            m = e2e.plain(sub.read())
            if m == [b"pong", mark]:
                break
            out.append((i, m[2], m[3]))
    c.call("CONFIG", "SET", "notify-keyspace-events", "")
    sub.close()
    c.close()
    return out


def test_keyspace_notifications_differential(gob):
    red = e2e.redis_server()
    try:
        for flags in ("KEA", "K$", "Egx", "Ehz", "KEm", "Kl", "Es", "KEn",
                      "KEAnm", "En"):
            want = notify_transcript(red, flags)
            got = notify_transcript(gob, flags)
            if got != want:
                extra = [m for m in got if m not in want]
                missing = [m for m in want if m not in got]
                raise AssertionError(
                    "notify-keyspace-events %s: goblind has %r more, %r "
                    "fewer (step, channel, message)" % (flags, extra,
                                                        missing))
        assert gob.client().call("CONFIG", "GET",
                                 "notify-keyspace-events") == ("*", [
            ("$", b"notify-keyspace-events"), ("$", b"")])
    finally:
        red.stop()


READ_SETUP = [["SET", "s", "hello"], ["HSET", "h", "f", "v"], ["RPUSH", "l", "a", "b"],
         ["SADD", "t", "a", "b"], ["ZADD", "z", "1", "a", "2", "b"],
         ["GEOADD", "g", "13.36", "38.11", "pa"], ["PFADD", "p", "a"]]
READ_SCRIPT = [
 ["GET","s"],["GET","ns"],["MGET","s","ns","ns"],["STRLEN","ns"],["GETRANGE","ns","0","1"],
 ["GETRANGE","ns","x","1"],["SUBSTR","ns","0","1"],["LCS","s","ns"],["GETBIT","ns","1"],
 ["GETBIT","ns","x"],["BITCOUNT","ns"],["BITCOUNT","ns","0","x"],["BITCOUNT","ns","0","1","BAD"],
 ["BITPOS","ns","1"],["BITFIELD_RO","ns","GET","u8","0"],["BITFIELD","ns","GET","u8","0"],
 ["BITFIELD","nsb","SET","u8","0","1"],["BITFIELD","s","GET","u8","0"],
 ["EXISTS","s","ns","ns"],["TYPE","ns"],["TTL","ns"],["PTTL","s"],["EXPIRETIME","ns"],
 ["PEXPIRETIME","ns"],["DUMP","ns"],["OBJECT","ENCODING","ns"],["OBJECT","ENCODING","s"],
 ["TOUCH","s","ns"],["SORT","nl"],["SORT","l","ALPHA"],["SORT_RO","nl"],["SORT","nl","STORE","d1"],
 ["SORT","l","BY","w_*","GET","o_*","ALPHA"],
 ["HGET","nh","f"],["HGET","h","f"],["HMGET","nh","f","g"],["HGETALL","nh"],["HKEYS","nh"],
 ["HVALS","nh"],["HLEN","nh"],["HEXISTS","nh","f"],["HSTRLEN","nh","f"],["HRANDFIELD","nh"],
 ["HRANDFIELD","nh","x"],["HSCAN","nh","0"],["HSCAN","nh","x"],
 ["LRANGE","nl","0","1"],["LRANGE","nl","x","1"],["LINDEX","nl","0"],["LLEN","nl"],
 ["LPOS","nl","a"],["LPOS","nl","a","RANK","0"],["LLEN","h"],
 ["SMEMBERS","nt"],["SISMEMBER","nt","a"],["SMISMEMBER","nt","a"],["SCARD","nt"],
 ["SRANDMEMBER","nt"],["SRANDMEMBER","nt","x"],["SSCAN","nt","0"],["SINTER","t","nt","nt2"],
 ["SINTER","nt","t"],["SUNION","nt","t"],["SDIFF","nt","t"],["SDIFF","t","nt"],
 ["SINTERCARD","2","t","nt"],["SINTERCARD","2","nt","t"],["SINTER","s","t"],["SINTER","t","s","nt"],
 ["SINTERSTORE","d2","nt","t"],["SUNIONSTORE","d2","nt","t"],["SDIFFSTORE","d2","nt","t"],
 ["SMOVE","nt","t","a"],
 ["ZSCORE","nz","a"],["ZMSCORE","nz","a"],["ZRANK","nz","a"],["ZREVRANK","nz","a"],
 ["ZCARD","nz"],["ZCOUNT","nz","0","1"],["ZCOUNT","nz","x","1"],["ZLEXCOUNT","nz","-","+"],
 ["ZRANGE","nz","0","1"],["ZRANGE","nz","0","1","BAD"],["ZRANGEBYSCORE","nz","0","1"],
 ["ZRANGEBYLEX","nz","-","+"],["ZREVRANGE","nz","0","1"],["ZREVRANGEBYSCORE","nz","1","0"],
 ["ZREVRANGEBYLEX","nz","+","-"],["ZRANDMEMBER","nz"],["ZSCAN","nz","0"],
 ["ZUNION","2","nz","z"],["ZINTER","2","nz","z"],["ZDIFF","2","nz","z"],["ZINTERCARD","2","nz","z"],
 ["ZUNIONSTORE","d3","2","nz","z"],["ZRANGESTORE","d3","nz","0","1"],
 ["GEOPOS","ng","a"],["GEODIST","ng","a","b"],["GEOHASH","ng","a"],
 ["GEORADIUS_RO","ng","0","0","1","km"],["GEORADIUSBYMEMBER_RO","ng","a","1","km"],
 ["GEOSEARCH","ng","FROMLONLAT","0","0","BYRADIUS","1","km"],
 ["GEOSEARCH","ng","FROMLONLAT","0","0","BYRADIUS","1","km","BAD"],
 ["GEOSEARCH","g","FROMMEMBER","pa","BYRADIUS","1","km"],
 ["GEOSEARCHSTORE","d4","ng","FROMLONLAT","0","0","BYRADIUS","1","km"],
 ["PFCOUNT","np"],["PFCOUNT","p","np"],["PFMERGE","d5","np"],
 ["GETDEL","ns"],["GETEX","ns"],["GETSET","ns2","x"],["SET","ns3","x","GET"],
 ["INCR","ns4"],["LPOP","nl"],["RPOPLPUSH","nl","d6"],["LMOVE","nl","d6","LEFT","LEFT"],
 ["COPY","nl","d7"],["RENAME","nl","d7"],["BITOP","AND","d8","ns","s"],
 ["OBJECT","FREQ","ns"],["MEMORY","USAGE","ns"],["RANDOMKEY"],["KEYS","ns"],["SCAN","0"],
 ["DBSIZE"],["EVAL","return redis.call('GET','ns')","0"],["HINCRBY","nh2","f","1"],
]


def read_transcript(srv):
    """Per step of READ_SCRIPT: the keyspace_hits and keyspace_misses it
    added, the keymiss events a PSUBSCRIBE __key*__:* client got, and
    whether the reply was an error."""
    sub, c = srv.client(), srv.client()

    def stats():
        info = e2e.plain(c.call("INFO", "stats"))
        d = dict(l.split(b":", 1) for l in info.split(b"\r\n") if b":" in l)
        return int(d[b"keyspace_hits"]), int(d[b"keyspace_misses"])

    c.call("FLUSHALL")
    for cmd in READ_SETUP:
        c.call(*cmd)
    c.call("CONFIG", "SET", "notify-keyspace-events", "KEm")
    sub.call("PSUBSCRIBE", "__key*__:*")
    out = []
    for i, cmd in enumerate(READ_SCRIPT):
        h0, m0 = stats()
        r = c.call(*cmd)
        h1, m1 = stats()
        mark = b"r%d" % i
        sub.send_raw(e2e.Client.encode(["PING", mark]))
        ev = []
        while True:
            m = e2e.plain(sub.read())
            if m == [b"pong", mark]:
                break
            ev.append((m[2], m[3]))
        out.append((" ".join(cmd), h1 - h0, m1 - m0, ev, r[0] == "-"))
    c.call("CONFIG", "SET", "notify-keyspace-events", "")
    sub.close()
    c.close()
    return out


def test_read_lookups_differential(gob):
    """keyspace_hits, keyspace_misses and keymiss events of every read
    command, on present, missing and wrong-typed keys and with argument
    errors before or after Redis looks the key up, as redis-server."""
    red = e2e.redis_server()
    try:
        want = read_transcript(red)
        got = read_transcript(gob)
        bad = [(g, w) for g, w in zip(got, want) if g != w]
        assert not bad, "goblind, redis-server (command, hits, misses, " \
            "events, error):\n" + "\n".join("%r\n%r" % p for p in bad)
    finally:
        red.stop()


def test_evicted_events(gob):
    c, sub = gob.client(), gob.client()
    c.call("FLUSHALL")
    c.call("CONFIG", "SET", "notify-keyspace-events", "Ee")
    sub.call("SUBSCRIBE", "__keyevent@0__:evicted")
    for i in range(200):
        c.call("SET", "ev%d" % i, "x" * 1000)
    used = int(dict(l.split(b":", 1) for l in e2e.plain(
        c.call("INFO", "memory")).split(b"\r\n") if b":" in l)[
        b"used_memory"])
    c.call("CONFIG", "SET", "maxmemory-policy", "allkeys-random")
    c.call("CONFIG", "SET", "maxmemory", str(used - 50000))
    c.call("SET", "trigger", "x")
    m = e2e.plain(sub.read())
    assert m[0] == b"message" and m[1] == b"__keyevent@0__:evicted", m
    c.call("CONFIG", "SET", "maxmemory", "0")
    c.call("CONFIG", "SET", "notify-keyspace-events", "")
    c.close()
    sub.close()


def client_types(srv):
    """What CLIENT LIST TYPE and CLIENT KILL TYPE see of subscribed
    clients: one per kind of subscription, one that unsubscribed, one
    that never subscribed."""
    ctl, plain, left = srv.client(), srv.client(), srv.client()
    subs = [srv.client() for _ in range(3)]
    subs[0].call("SUBSCRIBE", "a")
    subs[1].call("HELLO", "3")
    subs[1].call("PSUBSCRIBE", "x*")
    subs[2].call("SSUBSCRIBE", "sh")
    left.call("SUBSCRIBE", "b")
    left.call("UNSUBSCRIBE", "b")
    plain.call("PING")
    out = []
    for t in ("pubsub", "normal", "PUBSUB"):
        lines = e2e.plain(ctl.call("CLIENT", "LIST", "TYPE", t))
        out.append((t, len(lines.splitlines())))
    out.append(ctl.call("CLIENT", "KILL", "TYPE", "pubsub"))
    out.append(ctl.call("CLIENT", "LIST", "TYPE", "pubsub"))
    out.append([c.call("PING") for c in (plain, left)])
    for c in subs:  # closed by the kill
        c.s.settimeout(5)
        out.append(c.s.recv(100))
    for c in [ctl, plain, left] + subs:
        c.close()
    return out


def test_client_type_pubsub_differential(gob):
    red = e2e.redis_server()
    try:
        want, got = client_types(red), client_types(gob)
        assert got == want, (got, want)
        assert want[3] == (":", 3), want
    finally:
        red.stop()


def test_stops_cleanly(gob):
    e2e.check_stopped_cleanly(gob)


def main():
    global CLI_PATH, RING
    RING = os.path.join(e2e.tmpdir(), "pubsub.ring")
    CLI_PATH = sys.argv[2] if len(sys.argv) > 2 else None
    gob = e2e.goblind(sys.argv[1], "--ring", RING, "64k")
    e2e.run_tests([test_redis_py_unix, test_redis_py_tcp,
                   test_resp2_subscribed_mode, test_resp3_push,
                   test_redis_cli_subscribe, test_goblin_cli_subscribe,
                   test_acl_channels,
                   test_slow_subscriber_is_disconnected,
                   test_omem_counts_unsent_output, test_differential,
                   test_keyspace_notifications_differential,
                   test_read_lookups_differential,
                   test_evicted_events, test_client_type_pubsub_differential,
                   test_stops_cleanly], gob)


if __name__ == "__main__":
    main()
