"""test_pause.py - CLIENT PAUSE and CLIENT UNPAUSE on goblind, compared
with redis-server 7.0: the error texts, which commands WRITE holds, ALL
holding everything (CLIENT UNPAUSE too) until the timeout, held commands
answered in order when the pause ends, MULTI under WRITE, INFO's
blocked_clients and CLIENT LIST's flags and cmd while a command waits,
and expiry paused.

    /usr/bin/python3 test_pause.py GOBLIND

"Held" is seen from another client through INFO (blocked_clients), never
by timing, except where a pause must end by its own timeout.
"""

import select
import sys
import time

import e2e


def wait_held(srv, n):
    """Until n clients wait (INFO clients' blocked_clients)."""
    c = srv.client()
    deadline = time.monotonic() + 20
    try:
        while time.monotonic() < deadline:
            info = e2e.plain(c.call("INFO", "clients"))
            if b"blocked_clients:%d\r\n" % n in info:
                return
            time.sleep(0.005)
        raise AssertionError("%s: %d clients never waited" % (srv.name, n))
    finally:
        c.close()


ERRORS = [
    ["CLIENT", "PAUSE", "x"], ["CLIENT", "PAUSE", "-1"],
    ["CLIENT", "PAUSE", "100", "BAD"], ["CLIENT", "PAUSE", "x", "BAD"],
    ["CLIENT", "PAUSE", "100", "write", "x"], ["CLIENT", "UNPAUSE", "x"],
    ["CLIENT", "PAUSE"], ["CLIENT", "PAUSE", "0"], ["CLIENT", "UNPAUSE"],
    ["CLIENT", "PAUSE", "9223372036854775808"],
    ["CLIENT", "PAUSE", "0", "all"], ["CLIENT", "UNPAUSE"],
]


def test_error_texts(gob):
    red = e2e.redis_server()
    try:
        for cmd in ERRORS:
            want = red.client().call(*cmd)
            got = gob.client().call(*cmd)
            assert got == want, (cmd, got, want)
    finally:
        red.stop()


# Probed one at a time under CLIENT PAUSE WRITE: held or run at once.
WRITE_CASES = [
    ["SET", "k", "v"], ["GET", "k"], ["PUBLISH", "c", "m"],
    ["SPUBLISH", "c", "m"], ["EVAL", "return 1", "0"],
    ["EVAL", "#!lua flags=no-writes\nreturn 1", "0"],
    ["EVAL", "#!lua\nreturn 1", "0"], ["EVAL_RO", "return 1", "0"],
    ["EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"],
    ["FCALL", "nofn", "0"], ["FCALL_RO", "nofn", "0"], ["PFCOUNT", "p"],
    ["SCRIPT", "FLUSH"], ["FUNCTION", "FLUSH"], ["PING"], ["DBSIZE"],
    ["INFO", "server"], ["SELECT", "0"], ["SWAPDB", "0", "1"],
    ["MOVE", "k", "1"], ["PERSIST", "k"], ["FLUSHDB"], ["DEL", "k"],
    ["EXPIRE", "k", "10"], ["CLIENT", "ID"], ["CONFIG", "GET", "hz"],
    ["UNKNOWNCMD"], ["GET"], ["SUBSCRIBE", "z"], ["LPUSH", "l", "a"],
    ["BLPOP", "nol", "0.01"], ["TOUCH", "k"], ["OBJECT", "FREQ", "k"],
]


def answered_or_held(srv, ctl, b):
    """True once b's reply is there, False once b waits: whichever comes
    first, seen through select() and INFO (no timeout decides)."""
    while True:
        if len(b.buf) > b.pos or select.select([b.s], [], [], 0)[0]:
            return True
        info = e2e.plain(ctl.call("INFO", "clients"))
        if b"blocked_clients:1\r\n" in info:
            return False


def held_under_write(srv):
    out = []
    ctl = srv.client()
    for cmd in WRITE_CASES:
        b = srv.client()
        assert ctl.call("CLIENT", "PAUSE", "60000", "WRITE") == ("+", b"OK")
        b.send_raw(e2e.Client.encode(cmd))
        ran = answered_or_held(srv, ctl, b)
        ctl.call("CLIENT", "UNPAUSE")
        out.append((" ".join(cmd), "ran" if ran else "held", b.read()[0]))
        b.close()
    ctl.close()
    return out


def test_write_pause_holds_what_redis_holds(gob):
    red = e2e.redis_server()
    try:
        want = held_under_write(red)
        got = held_under_write(gob)
        bad = [(g, w) for g, w in zip(got, want) if g != w]
        assert not bad, "goblind, redis-server:\n" + "\n".join(
            "%r\n%r" % p for p in bad)
    finally:
        red.stop()


def all_pause_transcript(srv):
    """ALL holds everything, CLIENT UNPAUSE included, until the timeout;
    the held commands then answer in the order each client sent them."""
    a, b, c = srv.client(), srv.client(), srv.client()
    a.call("DEL", "x")
    assert a.call("CLIENT", "PAUSE", "400", "ALL") == ("+", b"OK")
    a.send_raw(e2e.Client.encode(["INCR", "x"]) +
               e2e.Client.encode(["GET", "x"]))
    b.send_raw(e2e.Client.encode(["PING"]))
    c.send_raw(e2e.Client.encode(["CLIENT", "UNPAUSE"]) +
               e2e.Client.encode(["INFO", "nosuchsection"]))
    out = [a.read(), a.read(), b.read(), c.read(), c.read()]
    for x in (a, b, c):
        x.close()
    return out


def test_all_pause(gob):
    red = e2e.redis_server()
    try:
        want = all_pause_transcript(red)
        got = all_pause_transcript(gob)
        assert got == want, (got, want)
    finally:
        red.stop()


def multi_transcript(srv):
    """Under WRITE: MULTI runs, a queued write waits (it is not even
    queued), a queued read is queued, EXEC of a write waits."""
    ctl, b = srv.client(), srv.client()
    ctl.call("DEL", "x")
    out = []
    assert ctl.call("CLIENT", "PAUSE", "60000", "WRITE") == ("+", b"OK")
    out.append(b.call("MULTI"))
    b.send_raw(e2e.Client.encode(["SET", "x", "1"]))
    wait_held(srv, 1)
    ctl.call("CLIENT", "UNPAUSE")
    out.append(b.read())
    out.append(b.call("GET", "x"))
    assert ctl.call("CLIENT", "PAUSE", "60000", "WRITE") == ("+", b"OK")
    b.send_raw(e2e.Client.encode(["EXEC"]))
    wait_held(srv, 1)
    out.append(ctl.call("GET", "x"))
    ctl.call("CLIENT", "UNPAUSE")
    out.append(b.read())
    out.append(ctl.call("GET", "x"))
    # A read-only transaction runs through a WRITE pause.
    assert ctl.call("CLIENT", "PAUSE", "60000", "WRITE") == ("+", b"OK")
    out.append(b.call("MULTI"))
    out.append(b.call("GET", "x"))
    out.append(b.call("EXEC"))
    ctl.call("CLIENT", "UNPAUSE")
    ctl.close()
    b.close()
    return out


def test_multi_under_write_pause(gob):
    red = e2e.redis_server()
    try:
        want = multi_transcript(red)
        got = multi_transcript(gob)
        assert got == want, (got, want)
    finally:
        red.stop()


def client_line(srv, cid):
    listing = e2e.plain(srv.client().call("CLIENT", "LIST"))
    for line in listing.split(b"\n"):
        if line.startswith(b"id=%d " % cid):
            return dict(f.split(b"=", 1) for f in line.split(b" ")
                        if b"=" in f)
    raise AssertionError("client %d not listed" % cid)


def waiting_view(srv):
    """INFO and CLIENT LIST while two clients wait."""
    ctl, a, b = srv.client(), srv.client(), srv.client()
    ida = e2e.plain(a.call("CLIENT", "ID"))
    assert ctl.call("CLIENT", "PAUSE", "60000", "WRITE") == ("+", b"OK")
    a.send_raw(e2e.Client.encode(["SET", "k", "v"]))
    b.send_raw(e2e.Client.encode(["PUBLISH", "c", "m"]))
    wait_held(srv, 2)
    line = client_line(srv, ida)
    info = e2e.plain(ctl.call("INFO", "clients"))
    fields = dict(l.split(b":", 1) for l in info.split(b"\r\n")
                  if b":" in l)
    ctl.call("CLIENT", "UNPAUSE")
    replies = [a.read(), b.read()]
    for x in (ctl, a, b):
        x.close()
    return (b"b" in line[b"flags"], line[b"cmd"], fields[b"blocked_clients"],
            fields[b"clients_in_timeout_table"], replies)


def test_waiting_clients_in_info_and_client_list(gob):
    red = e2e.redis_server()
    try:
        want = waiting_view(red)
        got = waiting_view(gob)
        assert got == want, (got, want)
        assert want[0] and want[1] == b"set", want
    finally:
        red.stop()


def expiry_transcript(srv):
    """A pause stops expiry: the expired key reads as missing but stays
    (DBSIZE), with no "expired" event until the pause is over."""
    ctl, sub = srv.client(), srv.client()
    ctl.call("FLUSHALL")
    ctl.call("CONFIG", "SET", "notify-keyspace-events", "Ex")
    sub.call("SUBSCRIBE", "__keyevent@0__:expired")
    ctl.call("SET", "e", "v", "PX", "50")
    ctl.call("CLIENT", "PAUSE", "60000", "WRITE")
    time.sleep(0.3)  # past the deadline, and several cron ticks
    out = [ctl.call("GET", "e"), ctl.call("EXISTS", "e"),
           ctl.call("DBSIZE")]
    ctl.call("CLIENT", "UNPAUSE")
    out.append(ctl.call("GET", "e"))
    out.append(ctl.call("DBSIZE"))
    sub.send_raw(e2e.Client.encode(["PING"]))
    m = sub.read()
    out.append(m)
    if m[0] != "+":
        out.append(sub.read())
    ctl.call("CONFIG", "SET", "notify-keyspace-events", "")
    sub.close()
    ctl.close()
    return out


def test_expiry_waits_for_the_pause(gob):
    red = e2e.redis_server()
    try:
        want = expiry_transcript(red)
        got = expiry_transcript(gob)
        assert got == want, (got, want)
    finally:
        red.stop()


def test_stops_cleanly(gob):
    e2e.check_stopped_cleanly(gob)


def main():
    gob = e2e.goblind(sys.argv[1])
    e2e.run_tests([test_error_texts, test_write_pause_holds_what_redis_holds,
                   test_all_pause, test_multi_under_write_pause,
                   test_waiting_clients_in_info_and_client_list,
                   test_expiry_waits_for_the_pause, test_stops_cleanly], gob)


if __name__ == "__main__":
    main()
