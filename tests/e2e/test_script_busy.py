"""test_script_busy.py - a script past busy-reply-threshold, as Redis
7.0.15 handles it: other clients (Unix socket, TCP and ring) are answered
BUSY, SCRIPT KILL / FUNCTION KILL stop a script that has not written (its
caller gets Redis's text), one that has written is UNKILLABLE and
SHUTDOWN NOSAVE is the way out. Every reply is compared with
redis-server's for the same sequence.

    /usr/bin/python3 test_script_busy.py GOBLIND

No timing is asserted: the test waits (bounded) until the second client
sees BUSY, whatever the machine's load.
"""

import os
import subprocess
import sys
import time

import e2e

SPIN = "while true do end"
LIB = """#!lua name=busy
redis.register_function('spin', function() while true do end end)
redis.register_function{function_name='spin_ro', callback=function()
  while true do end end, flags={'no-writes'}}
"""
WAIT_S = 60


def wait_busy(c):
    """PINGs until the answer is BUSY; returns it."""
    deadline = time.time() + WAIT_S
    while time.time() < deadline:
        got = c.call("PING")
        if got[0] == "-" and got[1].startswith(b"BUSY"):
            return got
        time.sleep(0.02)
    raise AssertionError("never saw BUSY")


def start_script(srv, *cmd):
    a = e2e.Client(srv.sock)
    a.send_raw(e2e.Client.encode(cmd))
    return a


def eval_sequence(srv):
    """A read-only EVAL killed by SCRIPT KILL."""
    b = e2e.Client(srv.sock)
    b.call("CONFIG", "SET", "busy-reply-threshold", "50")
    a = start_script(srv, "EVAL", SPIN, "0")
    out = [wait_busy(b)]
    for cmd in (("GET", "x"), ("FUNCTION", "KILL"), ("FUNCTION", "STATS"),
                ("MULTI",), ("DISCARD",), ("SCRIPT", "KILL")):
        out.append(b.call(*cmd))
    out.append(a.read())
    out.append(b.call("PING"))
    out.append(a.call("PING"))
    a.close()
    b.close()
    return out


def fcall_sequence(srv):
    """A function killed by FUNCTION KILL; FUNCTION STATS names it."""
    b = e2e.Client(srv.sock)
    b.call("FUNCTION", "LOAD", "REPLACE", LIB)
    a = start_script(srv, "FCALL", "spin", "0")
    out = [wait_busy(b)]
    stats = b.call("FUNCTION", "STATS")
    # duration_ms moves: keep the rest of the reply.
    running = stats[1][1][1]
    out.append(running[:5])
    for cmd in (("SCRIPT", "KILL"), ("FUNCTION", "KILL")):
        out.append(b.call(*cmd))
    out.append(a.read())
    a.close()
    a = start_script(srv, "FCALL_RO", "spin_ro", "0")
    out.append(wait_busy(b))
    out.append(b.call("FUNCTION", "KILL"))
    out.append(a.read())
    out.append(b.call("PING"))
    a.close()
    b.close()
    return out


def unkillable_sequence(srv):
    """A script that wrote: UNKILLABLE, then SHUTDOWN NOSAVE ends the
    server."""
    b = e2e.Client(srv.sock)
    a = start_script(srv, "EVAL", "redis.call('set','w','1') " + SPIN, "0")
    out = [wait_busy(b)]
    out.append(b.call("SCRIPT", "KILL"))
    out.append(b.call("SHUTDOWN"))
    b.send_raw(e2e.Client.encode(("SHUTDOWN", "NOSAVE")))
    try:
        b.read_until_closed(timeout=WAIT_S)
    except Exception:
        pass
    deadline = time.time() + WAIT_S
    while time.time() < deadline and srv.proc.poll() is None:
        time.sleep(0.05)
    out.append(srv.proc.poll() is not None)
    a.close()
    b.close()
    return out


def test_eval_killed_by_script_kill(gob, ref):
    want = eval_sequence(ref)
    got = eval_sequence(gob)
    assert got == want, (got, want)


def test_function_killed_by_function_kill(gob, ref):
    want = fcall_sequence(ref)
    got = fcall_sequence(gob)
    assert got == want, (got, want)


def test_tcp_and_ring_clients_see_busy(gob, ref):
    """While a socket client's script spins, a TCP client and a ring
    client are answered BUSY, and the ring client can kill it; then a
    ring client's script spins and a socket client kills it."""
    cli = os.path.join(os.path.dirname(os.path.dirname(gob.path)),
                       "clients", "goblin-cli")
    b = e2e.Client(gob.sock)
    a = start_script(gob, "EVAL", SPIN, "0")
    wait_busy(b)
    t = e2e.Client(("127.0.0.1", gob.port))
    got = t.call("GET", "x")
    assert got == ("-", b"BUSY Redis is busy running a script. You can only "
                   b"call SCRIPT KILL or SHUTDOWN NOSAVE."), got
    ring = subprocess.run([cli, "--ring", gob.ring, "GET", "x"],
                          capture_output=True, timeout=WAIT_S)
    assert b"BUSY Redis is busy running a script" in ring.stdout, ring
    ring = subprocess.run([cli, "--ring", gob.ring, "SCRIPT", "KILL"],
                          capture_output=True, timeout=WAIT_S)
    assert ring.stdout.strip() == b"OK", ring
    got = a.read()
    assert got[0] == "-" and b"Script killed by user" in got[1], got
    a.close()
    # The script on the ring thread; the socket and TCP clients kill it.
    spin = subprocess.Popen([cli, "--ring", gob.ring, "EVAL", SPIN, "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_busy(b)
    assert t.call("PING")[1].startswith(b"BUSY")
    assert b.call("SCRIPT", "KILL") == ("+", b"OK")
    out, _ = spin.communicate(timeout=WAIT_S)
    assert b"Script killed by user with SCRIPT KILL" in out, out
    assert b.call("PING") == ("+", b"PONG")
    t.close()
    b.close()


def test_unkillable_script_and_shutdown_nosave(gob, ref):
    want = unkillable_sequence(ref)
    got = unkillable_sequence(gob)
    assert got == want, (got, want)


def main():
    path = sys.argv[1]
    d = e2e.tmpdir()
    ring = os.path.join(d, "busy.ring")
    gob = e2e.goblind(path, "--ring", ring, "64k")
    gob.path = path
    gob.ring = ring
    if not e2e.has_lua(e2e.Client(gob.sock)):
        print("goblind was built without Lua: skipped")
        gob.stop()
        sys.exit(77)
    ref = e2e.redis_server()
    e2e.run_tests([test_eval_killed_by_script_kill,
                   test_function_killed_by_function_kill,
                   test_tcp_and_ring_clients_see_busy,
                   test_unkillable_script_and_shutdown_nosave], gob, ref)


if __name__ == "__main__":
    main()
