"""test_big_strings.py - strings past 512 MB with proto-max-bulk-len
raised, against redis-server 7.0.

    /usr/bin/python3 test_big_strings.py GOBLIND

The same commands go to both servers and the replies are compared
exactly: at the default limit the refusals (SETRANGE, SETBIT's offset, a
bulk longer than the limit); with CONFIG SET proto-max-bulk-len 1gb a
SETRANGE to 600000000, STRLEN, GETRANGE of its ends, APPEND, SETBIT past
bit 2^32 with GETBIT, BITCOUNT and BITPOS, and a SET of a 520 MB bulk
through redis-py; with the limit lowered again, APPEND and SETRANGE past
it refused while the value stays readable and writable inside it. Then
goblind keeps the 520 MB value through DEBUG RELOAD, SAVE and a restart
(at the default limit, as Redis loads it), and an RDB export that
redis-server loads.

Each server holds at most two such values at once and every one is
deleted after use (tests run in parallel on one machine).
"""

import os
import subprocess
import sys

import redis

import e2e

GOBLIND = sys.argv[1]
F = e2e.Failures()
MB = 1024 * 1024
BIG = 520 * MB
TIMEOUT = 300.0  # a 600 MB memset or snapshot under ASan takes a while


def pattern(n):
    """n bytes that say where they are: 256-byte runs of 0..255."""
    return bytes(range(256)) * (n // 256) + bytes(range(n % 256))


def compare(g, r, cmds, what):
    for cmd in cmds:
        want = r.call(*cmd)
        got = g.call(*cmd)
        F.eq(got, want, "%s: %r" % (what, cmd[:3]))


def pieces(key, n):
    """Reads that cover a value of n bytes: both ends, a middle run, the
    byte at 512 MB and its length."""
    mid = b"%d" % (n // 2)
    at = b"%d" % (512 * MB)
    return [[b"STRLEN", key], [b"GETRANGE", key, b"0", b"15"],
            [b"GETRANGE", key, b"-16", b"-1"],
            [b"GETRANGE", key, mid, b"%d" % (n // 2 + 300)],
            [b"GETRANGE", key, at, at]]


def test_default_limit_refuses():
    g, r = e2e.goblind(GOBLIND), e2e.redis_server()
    gc, rc = g.client(timeout=TIMEOUT), r.client(timeout=TIMEOUT)
    compare(gc, rc, [
        [b"CONFIG", b"GET", b"proto-max-bulk-len"],
        [b"SETRANGE", b"k", b"536870912", b"x"],
        [b"SETRANGE", b"k", b"536870911", b"xy"],
        [b"SETRANGE", b"k", b"536870911", b"x"],
        [b"STRLEN", b"k"],
        [b"APPEND", b"k", b"y"],
        [b"SETBIT", b"b", b"4294967296", b"1"],
        [b"SETBIT", b"b", b"4294967304", b"1"],
        [b"BITFIELD", b"b", b"SET", b"u8", b"4294967296", b"1"],
        [b"EXISTS", b"b"],
        [b"DEL", b"k"],
    ], "default limit")
    # A bulk past the limit is a protocol error that closes the connection.
    for c in (gc, rc):
        c.send_raw(b"*3\r\n$3\r\nSET\r\n$1\r\nv\r\n$536870913\r\n")
    F.eq(gc.read(), rc.read(), "bulk past proto-max-bulk-len")
    gc.close()
    rc.close()
    e2e.check_stopped_cleanly(g)
    r.kill_now()


def test_raised_limit_matches_redis():
    g, r = e2e.goblind(GOBLIND), e2e.redis_server()
    gc, rc = g.client(timeout=TIMEOUT), r.client(timeout=TIMEOUT)
    compare(gc, rc, [
        [b"CONFIG", b"SET", b"proto-max-bulk-len", b"1gb"],
        [b"CONFIG", b"GET", b"proto-max-bulk-len"],
        [b"SETRANGE", b"k", b"1073741824", b"x"],
        [b"SETRANGE", b"k", b"600000000", b"x"],
    ] + pieces(b"k", 600000001) + [
        [b"GETRANGE", b"k", b"599999990", b"600000010"],
        [b"APPEND", b"k", b"yz"],
        [b"GETRANGE", b"k", b"-4", b"-1"],
        [b"SETRANGE", b"k", b"536870912", b"mid"],
        [b"GETRANGE", b"k", b"536870910", b"536870916"],
        [b"SETBIT", b"b", b"4294967304", b"1"],
        [b"GETBIT", b"b", b"4294967304"],
        [b"GETBIT", b"b", b"4294967305"],
        [b"STRLEN", b"b"],
        [b"BITCOUNT", b"b"],
        [b"BITPOS", b"b", b"1"],
        [b"SETBIT", b"b", b"8589934592", b"1"],
        [b"BITFIELD", b"b", b"GET", b"u8", b"4294967304"],
        [b"GETRANGE", b"b", b"-1", b"-1"],
        [b"DEL", b"b", b"k"],
    ], "raised limit")

    value = pattern(BIG)
    for name, srv in (("goblind", g), ("redis-server", r)):
        py = redis.Redis(unix_socket_path=srv.sock, socket_timeout=TIMEOUT)
        F.eq(py.set("v", value), True, "%s: SET of a 520 MB bulk" % name)
        F.eq(py.strlen("v"), BIG, "%s: STRLEN" % name)
        F.eq(py.getrange("v", BIG - 300, BIG - 1), value[-300:],
             "%s: the bulk's tail" % name)
        py.close()
    del value
    compare(gc, rc, pieces(b"v", BIG) + [
        [b"APPEND", b"v", b"tail"],
        [b"GETRANGE", b"v", b"-6", b"-1"],
        # Lowered again: the value stays, but may not grow past the limit.
        [b"CONFIG", b"SET", b"proto-max-bulk-len", b"512mb"],
        [b"STRLEN", b"v"],
        [b"APPEND", b"v", b"x"],
        [b"SETRANGE", b"v", b"536870912", b"x"],
        [b"SETRANGE", b"v", b"536870911", b"x"],
        [b"SETRANGE", b"v", b"0", b"Z"],
        [b"SETBIT", b"v", b"4294967296", b"1"],
        [b"SETBIT", b"v", b"7", b"1"],
        [b"GETRANGE", b"v", b"0", b"3"],
        [b"STRLEN", b"v"],
        [b"DEL", b"v"],
        [b"CONFIG", b"SET", b"proto-max-bulk-len", b"1gb"],
    ], "lowered limit")
    gc.close()
    rc.close()
    e2e.check_stopped_cleanly(g)
    r.kill_now()


def test_snapshots_carry_the_value():
    d = e2e.tmpdir()
    g = e2e.goblind(GOBLIND, "--dir", d, "--save", "",
                    "--proto-max-bulk-len", "1gb")
    c = g.client(timeout=TIMEOUT)
    py = redis.Redis(unix_socket_path=g.sock, socket_timeout=TIMEOUT)
    value = pattern(BIG)
    F.eq(py.set("v", value), True, "SET of a 520 MB bulk")
    py.close()
    del value
    want = [c.call(*cmd) for cmd in pieces(b"v", BIG)]
    F.eq(c.call(b"DEBUG", b"RELOAD"), ("+", b"OK"), "DEBUG RELOAD")
    F.eq([c.call(*cmd) for cmd in pieces(b"v", BIG)], want,
         "after DEBUG RELOAD")
    F.eq(c.call(b"SAVE"), ("+", b"OK"), "SAVE")
    c.close()
    e2e.check_stopped_cleanly(g)

    # Loading does not ask proto-max-bulk-len, which is back at 512 MB.
    g = e2e.goblind(GOBLIND, "--dir", d, "--save", "")
    c = g.client(timeout=TIMEOUT)
    F.eq(c.call(b"CONFIG", b"GET", b"proto-max-bulk-len"),
         ("*", [("$", b"proto-max-bulk-len"), ("$", b"536870912")]),
         "the default limit after restart")
    F.eq([c.call(*cmd) for cmd in pieces(b"v", BIG)], want,
         "after SAVE and restart")
    c.close()
    e2e.check_stopped_cleanly(g)

    # RDB: exported by goblind, loaded by redis-server.
    path = os.path.join(d, "out.rdb")
    out = subprocess.run([GOBLIND, "--dir", d, "--port", "0", "--save", "",
                          "--export-rdb", path], capture_output=True,
                         timeout=TIMEOUT)
    F.check(out.returncode == 0 and b"Exported" in out.stdout,
            "export: %r" % (out.stdout + out.stderr))
    os.remove(os.path.join(d, "dump.goblin"))
    r = e2e.redis_server("--dir", d, "--dbfilename", "out.rdb")
    rc = r.client(timeout=TIMEOUT)
    F.eq([rc.call(*cmd) for cmd in pieces(b"v", BIG)], want,
         "redis-server loading the export")
    rc.close()
    r.kill_now()

    # And back: goblind imports the RDB file.
    g = e2e.goblind(GOBLIND, "--dir", d, "--save", "", "--import-rdb", path)
    os.remove(path)
    c = g.client(timeout=TIMEOUT)
    F.eq([c.call(*cmd) for cmd in pieces(b"v", BIG)], want,
         "goblind importing the export")
    c.close()
    e2e.check_stopped_cleanly(g)


def main():
    rc = e2e.run_tests([test_default_limit_refuses,
                        test_raised_limit_matches_redis,
                        test_snapshots_carry_the_value])
    F.finish()
    return rc


if __name__ == "__main__":
    sys.exit(main())
