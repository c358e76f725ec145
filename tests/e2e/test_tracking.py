"""test_tracking.py - client-side caching on goblind: CLIENT TRACKING in
its default, BCAST, OPTIN/OPTOUT and NOLOOP modes, invalidations as RESP3
pushes and as RESP2 messages on __redis__:invalidate through REDIRECT,
the null invalidation of FLUSHDB/FLUSHALL, a broken redirection, the
replies of CLIENT CACHING/GETREDIR/TRACKINGINFO, python3-redis's tracking
calls and tracking-table-max-keys; and MONITOR's lines (quoting, Unix and
TCP origins, scripts, MULTI, redacted secrets). The byte streams of
scripted sessions are compared with redis-server 7.0's.

    /usr/bin/python3 test_tracking.py GOBLIND
"""

import re
import socket
import sys
import time

import redis

import e2e

R = "$r"  # the redirect client's id, filled in per server
C = "$c"  # the id of a client that closes

SCRIPT = [
    ("a", "CLIENT", "TRACKING", "on"),
    # SORT_RO remembers its sorted key and SORT (a write command) nothing;
    # neither the keys GET reads. (25 elements: integer replies that are
    # no client's id.)
    ("b", "RPUSH", "sl", *[str(i) for i in range(25)]),
    ("b", "SET", "g_1", "a"),
    ("a", "SORT_RO", "sl", "GET", "g_*"), ("a", "SORT", "sl2", "GET", "g_*"),
    ("a", "SORT", "sl2", "GET", "g_*", "STORE", "sd"),
    ("b", "SET", "g_1", "x"), ("b", "SET", "sl", "x"),
    ("b", "SET", "sl2", "x"), ("b", "SET", "sd", "x"),
    ("a", "GET", "k1"), ("a", "MGET", "k2", "k3"), ("a", "HGET", "h", "f"),
    ("a", "SMEMBERS", "s"), ("a", "ZSCORE", "z", "m"),
    ("a", "LRANGE", "l", "0", "-1"), ("a", "EXISTS", "e1"),
    ("a", "PFCOUNT", "hll"), ("a", "GETBIT", "bits", "1"),
    ("b", "SET", "k1", "v"), ("b", "MSET", "k2", "1", "k3", "2"),
    ("b", "HSET", "h", "f", "1"), ("b", "SADD", "s", "x"),
    ("b", "ZADD", "z", "1", "m"), ("b", "RPUSH", "l", "x"),
    ("b", "SET", "e1", "1"), ("b", "PFADD", "hll", "a"),
    ("b", "SETBIT", "bits", "1", "1"),
    ("b", "SET", "k1", "again"),
    ("a", "GET", "k1"), ("a", "SET", "k1", "self"),
    ("a", "GET", "k2"), ("b", "DEL", "k2"),
    ("a", "GET", "k3"),
    ("a", ["MULTI"], ["SET", "k3", "m"], ["GET", "k3"], ["INCR", "k3"],
     ["EXEC"]),
    ("a", "CLIENT", "TRACKING", "on", "NOLOOP"),
    ("a", "GET", "k1"), ("a", "SET", "k1", "y"), ("b", "SET", "k1", "z"),
    ("a", "GET", "k4"), ("b", "FLUSHDB"),
    ("a", "CLIENT", "TRACKINGINFO"), ("a", "CLIENT", "GETREDIR"),
    ("a", "CLIENT", "TRACKING", "off"),
    ("r", "SUBSCRIBE", "__redis__:invalidate"),
    ("a", "CLIENT", "TRACKING", "on", "REDIRECT", R),
    ("a", "CLIENT", "GETREDIR"), ("a", "CLIENT", "TRACKINGINFO"),
    ("a", "GET", "k5"), ("b", "SET", "k5", "1"), ("b", "FLUSHALL"),
    ("a", "CLIENT", "TRACKING", "off"),
    ("a", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:",
     "PREFIX", "obj:"),
    ("a", "CLIENT", "TRACKINGINFO"),
    ("a", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "us"),
    ("a", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "x", "PREFIX",
     "xy"),
    ("a", "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "zz"),
    ("a", "CLIENT", "TRACKINGINFO"),
    ("b", "SET", "user:1", "a"), ("b", "SET", "other", "x"),
    ("b", "MSET", "user:2", "a", "obj:1", "b", "user:1", "c"),
    ("b", "SET", "user:9", "me"), ("b", "DEL", "user:9", "nothere"),
    ("a", "CLIENT", "TRACKING", "off"),
    ("a", "CLIENT", "TRACKING", "on", "BCAST", "NOLOOP"),
    ("a", "SET", "p1", "x"), ("b", "SET", "p2", "x"),
    ("a", "CLIENT", "TRACKING", "off"),
    ("a", "CLIENT", "TRACKING", "on", "OPTIN"),
    ("a", "GET", "o1"), ("b", "SET", "o1", "1"),
    ("a", ["CLIENT", "CACHING", "yes"], ["GET", "o1"]),
    ("b", "SET", "o1", "2"),
    ("a", "CLIENT", "CACHING", "no"), ("a", "CLIENT", "CACHING", "maybe"),
    ("a", "CLIENT", "TRACKING", "on", "OPTOUT"),
    ("a", "CLIENT", "TRACKING", "off"),
    ("a", "CLIENT", "TRACKING", "on", "OPTOUT"),
    ("a", ["CLIENT", "CACHING", "no"], ["GET", "o2"]),
    ("b", "SET", "o2", "1"), ("a", "GET", "o3"), ("b", "SET", "o3", "1"),
    ("a", "CLIENT", "TRACKING", "off"),
    ("a", "CLIENT", "TRACKING", "on", "PREFIX", "x"),
    ("a", "CLIENT", "TRACKING", "on", "BCAST", "OPTIN"),
    ("a", "CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"),
    ("a", "CLIENT", "TRACKING", "on", "REDIRECT", "x"),
    ("a", "CLIENT", "TRACKING", "on", "REDIRECT", "123456"),
    ("a", "CLIENT", "TRACKING", "on", "FOO"),
    ("a", "CLIENT", "TRACKING", "maybe"),
    ("a", "CLIENT", "CACHING", "yes"),
    ("a", "CLIENT", "TRACKINGINFO"), ("a", "CLIENT", "GETREDIR"),
    ("c", "PING"),
    ("a", "CLIENT", "TRACKING", "on", "REDIRECT", C),
    ("a", "GET", "q"), ("c", "CLOSE"), ("b", "SET", "q", "1"),
    ("a", "CLIENT", "TRACKINGINFO"), ("a", "CLIENT", "TRACKING", "off"),
    ("a", "RESET"),
]


def read_to_mark(cl, mark, what):
    data = b""
    while not data.endswith(mark + b"\r\n"):
        try:
            chunk = cl.s.recv(65536)
        except TimeoutError:
            raise AssertionError("%s: %r" % (what, data))
        if not chunk:
            break
        data += chunk
    return data


def transcript(srv, r_resp3):
    """What each client receives for SCRIPT ('a' speaks RESP3, 'b' and 'c'
    RESP2, 'r' RESP3 when r_resp3), ids replaced by names. After each step
    every open client sends PING with a marker, the actor first."""
    names = ("a", "b", "r", "c")
    clients = {n: srv.client() for n in names}
    for n in ("a", "r") if r_resp3 else ("a",):
        clients[n].call("HELLO", "3")
    ids = {n: e2e.plain(clients[n].call("CLIENT", "ID")) for n in names}
    got = {n: b"" for n in names}
    for i, (who, *cmd) in enumerate(SCRIPT):
        if cmd == ["CLOSE"]:
            clients.pop(who).close()
            time.sleep(0.1)
            continue
        cmds = cmd if isinstance(cmd[0], list) else [cmd]
        cmds = [[str(ids["r"]) if a == R else str(ids["c"]) if a == C
                 else a for a in c] for c in cmds]
        clients[who].send_raw(b"".join(e2e.Client.encode(c) for c in cmds))
        mark = b"m%d" % i
        for name in sorted(clients, key=lambda n: n != who):
            cl = clients[name]
            cl.send_raw(e2e.Client.encode(["PING", mark]))
            got[name] += read_to_mark(cl, mark, "step %d %r" % (i, cmd))
    for c in clients.values():
        c.close()
    for n in names:
        for m, v in ids.items():
            got[n] = got[n].replace(b"\n:%d\r\n" % v,
                                    b"\n:<%s>\r\n" % m.encode())
    return got


def test_differential(gob):
    red = e2e.redis_server()
    try:
        for r_resp3 in (False, True):
            want, got = transcript(red, r_resp3), transcript(gob, r_resp3)
            for who in want:
                g, w = got[who], want[who]
                if g != w:
                    i = next((k for k in range(min(len(g), len(w)))
                              if g[k] != w[k]), min(len(g), len(w)))
                    raise AssertionError(
                        "r RESP%d: client %s differs at byte %d:\n"
                        "goblind %r\nredis   %r" % (
                            3 if r_resp3 else 2, who, i,
                            g[max(0, i - 120):i + 120],
                            w[max(0, i - 120):i + 120]))
    finally:
        red.stop()


def test_redis_py_redirect(gob):
    """python3-redis over RESP2: invalidations redirected to a pubsub."""
    r = redis.Redis(unix_socket_path=gob.sock)
    w = redis.Redis(unix_socket_path=gob.sock)
    p = r.pubsub()
    p.subscribe("__redis__:invalidate")
    m = p.get_message(timeout=5)
    assert m["type"] == "subscribe", m
    # The subscriber's id from CLIENT LIST (the connection with sub=1).
    rid = next(int(c["id"]) for c in w.client_list() if c["sub"] == "1")
    r.client_tracking_on(clientid=rid)
    assert r.client_getredir() == rid
    r.get("pk")
    w.set("pk", "1")
    end = time.monotonic() + 5
    m = None
    while m is None or m["type"] != "message":
        assert time.monotonic() < end, "no invalidation"
        m = p.get_message(timeout=0.5)
    assert m["channel"] == b"__redis__:invalidate" and m["data"] == [b"pk"], m
    r.client_tracking_off()
    assert r.client_getredir() == -1
    p.close()
    r.close()
    w.close()


def test_table_max_keys(gob):
    c = gob.client()
    w = gob.client()
    c.call("HELLO", "3")
    assert e2e.plain(w.call("CONFIG", "SET", "tracking-table-max-keys",
                            "2")) == b"OK"
    assert e2e.plain(w.call("CONFIG", "GET", "tracking-table-max-keys")) \
        == [b"tracking-table-max-keys", b"2"]
    c.call("CLIENT", "TRACKING", "on")
    for k in ("t1", "t2", "t3"):
        c.call("GET", k)
    # Past the limit a key is forgotten and invalidated at once.
    m = e2e.plain(c.read())
    assert m[0] == b"invalidate" and m[1][0] in (b"t1", b"t2", b"t3"), m
    info = e2e.plain(w.call("INFO", "stats")).decode()
    assert "tracking_total_keys:2\r\n" in info, info
    assert "tracking_clients:1\r\n" in e2e.plain(
        w.call("INFO", "clients")).decode()
    flags = [ln for ln in e2e.plain(w.call("CLIENT", "LIST")).decode()
             .splitlines() if "cmd=get" in ln][0]
    assert " flags=tU " in flags and " redir=0 " in flags, flags
    w.call("CONFIG", "SET", "tracking-table-max-keys", "1000000")
    c.close()
    w.close()


MONITOR_SCRIPT = [
    ("SET", "k", "a b\"c\\\n\r\t\x01\x7f\xc3\xa9"),
    ("SELECT", "1"), ("SET", "x", "1"), ("SELECT", "0"),
    ("AUTH", "pw"), ("AUTH", "u", "pw"),
    ("HELLO", "2", "AUTH", "default", "pw", "SETNAME", "n"),
    ("CONFIG", "GET", "port"), ("NOSUCH", "x"), ("GET",),
    ("EVAL", "redis.call('set','e','1') return 1", "0"),
    ("PING",), ("DEBUG", "SLEEP", "0"), ("CLIENT", "ID"),
    ("INFO", "server"), ("GET", "k"),
]


def monitor_lines(srv):
    """The lines a monitor sees for MONITOR_SCRIPT (timestamps and origins
    cut to the database), then what the monitor's own GET gets."""
    m = srv.client()
    assert m.call("MONITOR") == ("+", b"OK")
    a = srv.client()
    for cmd in MONITOR_SCRIPT:
        a.call(*cmd)
    a.send_raw(e2e.Client.encode(["MULTI"]) + e2e.Client.encode(
        ["SET", "q", "1"]) + e2e.Client.encode(["GET", "q"]) +
        e2e.Client.encode(["EXEC"]))
    for _ in range(4):
        a.read()
    a.call("SET", "last", "1")
    m.send_raw(e2e.Client.encode(["GET", "k"]))
    lines = []
    while True:
        r = m.read()
        if r[0] == "-":
            lines.append(r[1])
            break
        lines.append(re.sub(rb"^(\d+\.\d{6}) \[(\d+) [^\]]*\]", rb"T [\2]",
                            r[1]))
    m.close()
    a.close()
    return lines


def test_monitor_differential(gob):
    red = e2e.redis_server()
    try:
        want, got = monitor_lines(red), monitor_lines(gob)
    finally:
        red.stop()
    assert got == want, "goblind %r\nredis   %r" % (got, want)
    assert b'T [0] "HELLO" "2" "AUTH" "(redacted)" "(redacted)" ' \
        b'"SETNAME" "n"' in got, got


def test_monitor_origins(gob):
    """[db unix:<path>] for Unix clients, [db ip:port] for TCP ones."""
    m = gob.client()
    m.call("MONITOR")
    u = gob.client()
    t = gob.client(tcp=True)
    u.call("SET", "from", "unix")
    t.call("SET", "from", "tcp")
    port = t.s.getsockname()[1]
    one, two = m.read()[1], m.read()[1]
    assert re.match(rb'^\d+\.\d{6} \[0 unix:%s\] "SET" "from" "unix"$'
                    % re.escape(gob.sock.encode()), one), one
    assert re.match(rb'^\d+\.\d{6} \[0 127\.0\.0\.1:%d\] "SET" "from" '
                    rb'"tcp"$' % port, two), two
    flags = [ln for ln in e2e.plain(u.call("CLIENT", "LIST")).decode()
             .splitlines() if "cmd=monitor" in ln][0]
    assert " flags=OU " in flags, flags
    assert m.call("RESET") == ("+", b"RESET")
    u.call("SET", "after", "reset")
    assert m.call("PING") == ("+", b"PONG")
    for c in (m, u, t):
        c.close()


def test_stops_cleanly(gob):
    e2e.check_stopped_cleanly(gob)


def main():
    gob = e2e.goblind(sys.argv[1])
    e2e.run_tests([test_differential, test_redis_py_redirect,
                   test_table_max_keys, test_monitor_differential,
                   test_monitor_origins, test_stops_cleanly], gob)


if __name__ == "__main__":
    main()
