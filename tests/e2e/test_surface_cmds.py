"""test_surface_cmds.py - LOLWUT, ACL GENPASS, ACL LOG and RESTORE-ASKING
against redis-server 7.0.

    /usr/bin/python3 test_surface_cmds.py GOBLIND

The same commands go to both servers over RESP2 and RESP3 and the replies
are compared: exactly where Redis's output is fixed, by shape where it is
random (LOLWUT 5 and 6 draw with random numbers: their size, alphabet,
first rows and closing lines must match; GENPASS: length and hex), and
with the time and the client's id and ports masked in ACL LOG.
"""

import re
import sys

import e2e

GOBLIND = sys.argv[1]


def both():
    return e2e.goblind(GOBLIND), e2e.redis_server()


def replies(c, cmds):
    return [c.call(*cmd) for cmd in cmds]


def test_lolwut():
    g, r = both()
    for proto in (2, 3):
        gc, rc = g.client(), r.client()
        if proto == 3:
            gc.call("HELLO", "3")
            rc.call("HELLO", "3")
        fixed = [["LOLWUT"], ["LOLWUT", "VERSION", "7"],
                 ["LOLWUT", "VERSION", "4"], ["LOLWUT", "version", "x"],
                 ["LOLWUT", "VERSION"], ["LOLWUT", "5", "1", "1"],
                 ["LOLWUT", "VERSION", "5", "a"],
                 ["LOLWUT", "VERSION", "6", "1", "b"],
                 ["LOLWUT", "VERSION", "4294967301", "1", "1", "1"],
                 ["LOLWUT", "VERSION", "5", "1", "1", "1"],
                 ["LOLWUT", "VERSION", "6", "1", "1"]]
        a, b = replies(gc, fixed), replies(rc, fixed)
        # VERSION 6 1 1: one pixel of one of four grays.
        a6, b6 = a.pop(), b.pop()
        assert a6[0] == b6[0]
        assert a == b, (proto, a, b)
        for args in (["5"], ["5", "40", "3", "5"], ["5", "2000", "300"],
                     ["6"], ["6", "30", "7"], ["6", "0", "-3"]):
            ga = gc.call("LOLWUT", "VERSION", *args)
            ra = rc.call("LOLWUT", "VERSION", *args)
            assert ga[0] == ra[0], (ga[0], ra[0])
            gt = e2e.plain(ga)
            rt = e2e.plain(ra)
            if isinstance(gt, tuple):  # RESP3 verbatim: (format, text)
                gt, rt = gt[-1], rt[-1]
            if proto == 3:
                assert gt[:4] == rt[:4] == b"txt:"
                gt, rt = gt[4:], rt[4:]
            gl, rl = gt.split(b"\n"), rt.split(b"\n")
            assert len(gl) == len(rl), (args, len(gl), len(rl))
            assert gl[-3:] == rl[-3:], (gl[-3:], rl[-3:])
            if args[0] == "5":
                assert [len(l) for l in gl] == [len(l) for l in rl], args
                assert gl[:2] == rl[:2]
                alphabet = set("".join(l.decode() for l in gl
                                       if b"Georg" not in l))
                assert all(0x2800 <= ord(ch) <= 0x28FF
                           for ch in alphabet), alphabet
            else:
                cell = rb"\x1b\[([0-9;]+)m \x1b\[0m"
                assert [len(re.findall(cell, l)) for l in gl] == \
                    [len(re.findall(cell, l)) for l in rl], args
                cells = set(re.findall(cell, gt))
                assert cells <= {b"0;30;40", b"0;90;100", b"0;37;47",
                                 b"0;97;107"}, cells
        gc.close()
        rc.close()
    e2e.check_stopped_cleanly(g)
    r.stop()


def test_acl_genpass_and_restore_asking():
    g, r = both()
    gc, rc = g.client(), r.client()
    cmds = [["ACL", "GENPASS", "0"], ["ACL", "GENPASS", "4097"],
            ["ACL", "GENPASS", "-1"], ["ACL", "GENPASS", "x"],
            ["ACL", "GENPASS", "1", "2"],
            ["RESTORE-ASKING", "k", "0", "junk"],
            ["RESTORE-ASKING", "k", "0"],
            ["SET", "s", "v"], ["DUMP", "s"]]
    a, b = replies(gc, cmds), replies(rc, cmds)
    assert a == b, (a, b)
    payload = a[-1][1]
    for c in (gc, rc):
        assert e2e.plain(c.call("RESTORE-ASKING", "t", "0", payload)) == \
            b"OK"
        assert c.call("RESTORE-ASKING", "t", "0", payload)[1].startswith(
            b"BUSYKEY")
        assert e2e.plain(c.call("GET", "t")) == b"v"
        for bits, n in ((None, 64), ("1", 1), ("5", 2), ("256", 64),
                        ("4096", 1024), ("9", 3)):
            p = e2e.plain(c.call("ACL", "GENPASS", *([bits] if bits else [])))
            assert len(p) == n and re.fullmatch(rb"[0-9a-f]+", p), (bits, p)
    gc.close()
    rc.close()
    e2e.check_stopped_cleanly(g)
    r.stop()


def masked(reply):
    """ACL LOG entries with age-seconds and client-info's varying fields
    masked."""
    out = []
    for entry in e2e.plain(reply):
        if isinstance(entry, dict):
            items = list(entry.items())
        elif entry and isinstance(entry[0], tuple):  # a RESP3 map
            items = list(entry)
        else:
            items = list(zip(entry[0::2], entry[1::2]))
        row = []
        for k, v in items:
            if k == b"age-seconds":
                v = float(v) < 30
            elif k == b"client-info":
                v = re.sub(rb"(id|addr|laddr|fd|age|idle|qbuf|qbuf-free|"
                           rb"argv-mem|multi-mem|rbs|rbp|obl|oll|omem|"
                           rb"tot-mem)=\S*", rb"\1=*", v)
                # CLIENT SETINFO's fields (Redis 7.2) are Goblin's own.
                v = re.sub(rb" lib-name=\S* lib-ver=\S*", b"", v)
            row.append((k, v))
        out.append(row)
    return out


def test_acl_log():
    g, r = both()
    setup = [["ACL", "SETUSER", "u", "on", ">p", "+get", "+multi", "+exec",
              "+eval", "+subscribe", "~k*", "&ch*"],
             ["ACL", "LOG", "RESET"]]
    for srv in (g, r):
        c = srv.client()
        replies(c, setup)
        c.close()
    logs = []
    for srv in (g, r):
        c = srv.client()
        u = srv.client()
        out = [u.call("AUTH", "u", "wrong"), u.call("AUTH", "nobody", "x"),
               u.call("HELLO", "2", "AUTH", "u", "bad")[0],
               u.call("AUTH", "u", "p"),
               u.call("SET", "k1", "v"), u.call("GET", "zz"),
               u.call("GET", "zz"), u.call("GET", "k1"),
               u.call("SUBSCRIBE", "other"),
               u.call("EVAL", "return redis.call('get', 'zz')", "0"),
               u.call("EVAL", "return redis.call('publish', 'x', 'm')", "0"),
               u.call("EVAL", "return redis.call('set', 'k1', 'm')", "0"),
               u.call("MULTI"), u.call("GET", "x1"), u.call("EXEC")]
        for proto in (2, 3):
            c.call("HELLO", str(proto))
            logs.append((out, masked(c.call("ACL", "LOG")),
                         masked(c.call("ACL", "LOG", "2")),
                         masked(c.call("ACL", "LOG", "-5")),
                         c.call("ACL", "LOG", "x"), c.call("ACL", "LOG",
                                                           "1", "2")))
        assert c.call("ACL", "LOG", "RESET") == ("+", b"OK")
        assert c.call("ACL", "LOG") == ("*", [])
        c.call("CONFIG", "SET", "acllog-max-len", "2")
        for i in range(4):
            u.call("GET", "y%d" % i)
        assert len(e2e.plain(c.call("ACL", "LOG"))) == 2
        c.call("HELLO", "2")
        assert e2e.plain(c.call("CONFIG", "GET", "acllog-max-len")) == \
            [b"acllog-max-len", b"2"]
        c.close()
        u.close()
    assert logs[0][0] == logs[2][0], (logs[0][0], logs[2][0])
    for i in range(2):
        for j in range(1, 6):
            if logs[i][j] != logs[i + 2][j]:
                for a, b in zip(logs[i][j], logs[i + 2][j]):
                    print("goblin:", a)
                    print("redis: ", b)
            assert logs[i][j] == logs[i + 2][j], (i, j)
    e2e.check_stopped_cleanly(g)
    r.stop()


if __name__ == "__main__":
    e2e.run_tests([test_lolwut, test_acl_genpass_and_restore_asking,
                   test_acl_log])
