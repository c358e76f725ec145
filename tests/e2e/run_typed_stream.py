"""run_typed_stream.py - typed SBE writes on the write stream, end to end.

    /usr/bin/python3 run_typed_stream.py GOBLIND TEST_TYPED_STREAM

Starts goblind A (AOF, appendfsync always, two rings) and goblind B (AOF,
appendfsync always), each with a Debian redis-server 7.0 replica, and
runs TEST_TYPED_STREAM (test_typed_stream.c): the same requests go to A
as typed SBE requests over a ring and to B as RESP words, while a MONITOR
on A's second ring checks the lines. Then: A's and B's incremental AOF
files are the same bytes, and A, B and both replicas hold the same keys,
types, values and deadlines.
"""

import os
import subprocess
import sys

import e2e
import repl_data
from test_repl import caught_up, wait_for


def incr_aof(d):
    adir = os.path.join(d, "appendonlydir")
    names = [n for n in os.listdir(adir) if n.endswith(".incr.aof")]
    assert len(names) == 1, names
    with open(os.path.join(adir, names[0]), "rb") as f:
        return f.read()


def main():
    goblind, program = sys.argv[1], sys.argv[2]
    da, db = e2e.tmpdir(), e2e.tmpdir()
    ring, mon = os.path.join(da, "a.ring"), os.path.join(da, "m.ring")
    common = ("--save", "", "--appendonly", "yes", "--appendfsync", "always",
              "--repl-diskless-sync-delay", "0")
    a = e2e.goblind(goblind, "--dir", da, *common, "--ring", ring, "64k",
                    "--ring", mon, "64k")
    b = e2e.goblind(goblind, "--dir", db, *common)
    ra = e2e.redis_server("--replicaof", "127.0.0.1", str(a.port))
    rb = e2e.redis_server("--replicaof", "127.0.0.1", str(b.port))
    try:
        ca, cb = a.client(), b.client()
        cra, crb = ra.client(), rb.client()
        wait_for(lambda: caught_up(ca, cra) and caught_up(cb, crb),
                 "replicas online", logs=(a, b, ra, rb))
        rc = subprocess.run([program, ring, mon, b.sock],
                            timeout=110).returncode
        assert rc == 0, "test_typed_stream failed"
        wait_for(lambda: caught_up(ca, cra) and caught_up(cb, crb),
                 "replicas caught up", logs=(a, b, ra, rb))
        got_a, got_b = incr_aof(da), incr_aof(db)
        assert got_a == got_b and b"ZADD" in got_a, (
            "AOF files differ:\n%r\n%r" % (got_a, got_b))
        want = repl_data.dump(cb, dbs=(0,))
        assert len(want) >= 8, want
        for name, c in (("A", ca), ("replica of A", cra),
                        ("replica of B", crb)):
            err = repl_data.differences(want, repl_data.dump(c, dbs=(0,)),
                                        ("B", name))
            assert err is None, err
        for c in (ca, cb, cra, crb):
            c.close()
        for s in (ra, rb):
            s.kill_now()
        e2e.check_stopped_cleanly(a)
        e2e.check_stopped_cleanly(b)
    finally:
        for s in (a, b, ra, rb):
            s.kill_now()
    print("ok")


if __name__ == "__main__":
    main()
