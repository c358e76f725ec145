"""test_blocking.py - blocking commands end to end, with several clients
over sockets and rings at once.

    /usr/bin/python3 test_blocking.py GOBLIND GOBLIN_CLI

Sockets: clients served in the order they blocked, a timeout, MULTI,
CLIENT UNBLOCK, a client that disconnects while blocked, pipelined input
behind a blocked command, a blocked client that does not stall the other
sockets. Rings (two, served by one ring thread): a client blocked on one
ring while the other ring and the sockets keep being served, a ring client
served by a socket client's write and a socket client served by a ring
client's write, over RESP and SBE, for sorted sets and lists. Timeouts are short; nothing here
asserts a duration, only that every reply comes.
"""

import os
import subprocess
import sys
import time

import e2e

WAIT = 20.0  # seconds a reply may take before the test fails


def wait_blocked(c, n):
    """Waits until INFO shows n blocked clients."""
    deadline = time.time() + WAIT
    while True:
        info = c.call("INFO", "clients")[1]
        if (b"blocked_clients:%d\r\n" % n) in info:
            return
        assert time.time() < deadline, info
        time.sleep(0.005)


def test_socket_order_and_fairness(gob):
    c = gob.client()
    waiters = [gob.client() for _ in range(3)]
    # Each blocks before the next one sends: the order is known.
    for i, w in enumerate(waiters):
        w.send_raw(w.encode(["BZPOPMIN", "z", "0"]))
        wait_blocked(c, i + 1)
    assert c.call("ZADD", "z", "1", "a", "2", "b") == (":", 2)
    got = [waiters[0].read(), waiters[1].read()]
    assert got == [("*", [("$", b"z"), ("$", b"a"), ("$", b"1")]),
                   ("*", [("$", b"z"), ("$", b"b"), ("$", b"2")])], got
    wait_blocked(c, 1)
    assert c.call("ZADD", "z", "3", "c") == (":", 1)
    assert waiters[2].read() == ("*", [("$", b"z"), ("$", b"c"),
                                        ("$", b"3")])
    for w in waiters:
        w.close()


def test_socket_timeout_multi_unblock(gob):
    c = gob.client()
    w = gob.client()
    assert w.call("BZPOPMIN", "nokey", "0.05") == ("*", None)
    assert w.call("MULTI") == ("+", b"OK")
    assert w.call("BZMPOP", "0", "1", "nokey", "MIN") == ("+", b"QUEUED")
    assert w.call("EXEC") == ("*", [("*", None)])
    wid = w.call("CLIENT", "ID")[1]
    w.send_raw(w.encode(["BZPOPMAX", "nokey", "0"]))
    wait_blocked(c, 1)
    line = [ln for ln in c.call("CLIENT", "LIST")[1].split(b"\n")
            if ln.startswith(b"id=%d " % wid)][0]
    assert b" flags=bU " in line and b" cmd=bzpopmax " in line, line
    assert c.call("CLIENT", "UNBLOCK", str(wid), "ERROR") == (":", 1)
    assert w.read() == ("-", b"UNBLOCKED client unblocked via CLIENT "
                              b"UNBLOCK")
    w.send_raw(w.encode(["BZPOPMAX", "nokey", "0"]) +
               w.encode(["PING"]))
    wait_blocked(c, 1)
    assert c.call("CLIENT", "UNBLOCK", str(wid)) == (":", 1)
    assert w.read() == ("*", None)
    assert w.read() == ("+", b"PONG")
    w.close()


def test_socket_disconnect_while_blocked(gob):
    c = gob.client()
    gone = gob.client()
    stays = gob.client()
    gone.send_raw(gone.encode(["BZPOPMIN", "d", "0"]))
    wait_blocked(c, 1)
    stays.send_raw(stays.encode(["BZPOPMIN", "d", "0"]))
    wait_blocked(c, 2)
    gone.close()
    wait_blocked(c, 1)
    assert c.call("ZADD", "d", "1", "x") == (":", 1)
    assert stays.read() == ("*", [("$", b"d"), ("$", b"x"), ("$", b"1")])
    assert c.call("EXISTS", "d") == (":", 0)
    stays.close()


def cli(cli_path, *args):
    return subprocess.Popen([cli_path] + list(args), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)


def finish(proc):
    out, _ = proc.communicate(timeout=WAIT)
    assert proc.returncode == 0, out
    return out.decode()


def test_rings(gob, cli_path, ring_a, ring_b):
    c = gob.client()
    # A ring client blocks; the other ring and the sockets keep going.
    a = cli(cli_path, "--ring", ring_a, "BZPOPMIN", "rz", "0")
    wait_blocked(c, 1)
    assert finish(cli(cli_path, "--ring", ring_b, "PING")) == "PONG\n"
    assert c.call("PING") == ("+", b"PONG")
    # A socket client's write serves it.
    assert c.call("ZADD", "rz", "7", "m") == (":", 1)
    assert finish(a) == "rz\nm\n7\n", a
    # A socket client blocked, served by a ring client's write.
    w = gob.client()
    w.send_raw(w.encode(["BZMPOP", "0", "1", "sz", "MAX", "COUNT", "2"]))
    wait_blocked(c, 1)
    assert finish(cli(cli_path, "--ring", ring_b, "ZADD", "sz", "1", "p",
                      "2", "q")) == "2\n"
    assert w.read() == ("*", [("$", b"sz"), ("*", [
        ("*", [("$", b"q"), ("$", b"2")]),
        ("*", [("$", b"p"), ("$", b"1")])])])
    w.close()
    # SBE over a ring (the Argv frame), served by a write on the other.
    s = cli(cli_path, "--ring", ring_a, "--sbe", "BZPOPMAX", "bz", "0")
    wait_blocked(c, 1)
    finish(cli(cli_path, "--ring", ring_b, "--sbe", "ZADD", "bz", "3", "t"))
    out = finish(s)
    assert "bz" in out and "t" in out, out
    # A ring client that times out.
    assert finish(cli(cli_path, "--ring", ring_a, "BZPOPMIN", "none",
                      "0.05")) == "\n"
    # Lists over the rings: a BLPOP on one ring served by a push on the
    # other, and a BLMOVE over SBE whose push serves a socket's BRPOP.
    a = cli(cli_path, "--ring", ring_a, "BLPOP", "rl", "0")
    wait_blocked(c, 1)
    assert finish(cli(cli_path, "--ring", ring_b, "RPUSH", "rl", "v1",
                      "v2")) == "2\n"
    assert finish(a) == "rl\nv1\n", a
    w = gob.client()
    w.send_raw(w.encode(["BRPOP", "rdst", "0"]))
    wait_blocked(c, 1)
    s = cli(cli_path, "--ring", ring_a, "--sbe", "BLMOVE", "rsrc", "rdst",
            "LEFT", "LEFT", "0")
    wait_blocked(c, 2)
    assert c.call("RPUSH", "rsrc", "u") == (":", 1)
    assert "u" in finish(s)
    assert w.read() == ("*", [("$", b"rdst"), ("$", b"u")])
    w.close()


def main():
    goblind_path, cli_path = sys.argv[1], sys.argv[2]
    d = e2e.tmpdir()
    ring_a = os.path.join(d, "a.ring")
    ring_b = os.path.join(d, "b.ring")
    gob = e2e.goblind(goblind_path, "--ring", ring_a, "64k",
                      "--ring", ring_b, "64k", "--ring-idle", "backoff",
                      "--ring-spin-us", "20")
    try:
        test_socket_order_and_fairness(gob)
        test_socket_timeout_multi_unblock(gob)
        test_socket_disconnect_while_blocked(gob)
        test_rings(gob, cli_path, ring_a, ring_b)
        c = gob.client()
        assert b"blocked_clients:0\r\n" in c.call("INFO", "clients")[1]
        e2e.check_stopped_cleanly(gob)
    finally:
        gob.kill_now()


if __name__ == "__main__":
    main()
