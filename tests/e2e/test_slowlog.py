"""test_slowlog.py - SLOWLOG against redis-server 7.0.

    /usr/bin/python3 test_slowlog.py GOBLIND

With slowlog-log-slower-than 0 every command is logged; both servers run
the same commands and their SLOWLOG GET replies are compared with the
timestamp, duration and client address masked: ids, arguments (more than
32 of them, and arguments over 128 bytes, cut as Redis cuts them), client
names, slowlog-max-len trimming, LEN, RESET, HELP, the count argument's
errors, and the commands Redis never logs (EXEC). A threshold of -1 logs
nothing; a threshold above a command's time does not log it.
"""

import sys

import e2e


def script():
    c = [[b"CONFIG", b"SET", b"slowlog-log-slower-than", b"0"],
         [b"SLOWLOG", b"RESET"], [b"SET", b"a", b"b"],
         [b"CLIENT", b"SETNAME", b"tester"], [b"GET", b"a"],
         [b"RPUSH", b"l"] + [b"%d" % i for i in range(40)],
         [b"SET", b"long", b"x" * 300], [b"MULTI"], [b"INCR", b"n"],
         [b"EXEC"], [b"SLOWLOG", b"LEN"], [b"SLOWLOG", b"GET"],
         [b"SLOWLOG", b"GET", b"2"], [b"SLOWLOG", b"GET", b"-1"],
         [b"SLOWLOG", b"GET", b"-2"], [b"SLOWLOG", b"GET", b"x"],
         [b"SLOWLOG", b"GET", b"1", b"2"], [b"SLOWLOG", b"HELP"],
         [b"SLOWLOG", b"BOGUS"], [b"CONFIG", b"SET", b"slowlog-max-len",
                                  b"3"], [b"PING"],
         [b"SLOWLOG", b"LEN"], [b"SLOWLOG", b"GET", b"-1"],
         [b"CONFIG", b"GET", b"slowlog-*"],
         [b"CONFIG", b"SET", b"slowlog-log-slower-than", b"-1"],
         [b"SLOWLOG", b"RESET"], [b"PING"], [b"SLOWLOG", b"LEN"],
         [b"CONFIG", b"SET", b"slowlog-log-slower-than", b"100000000"],
         [b"PING"], [b"SLOWLOG", b"LEN"],
         [b"CONFIG", b"SET", b"slowlog-log-slower-than", b"-2"],
         [b"CONFIG", b"SET", b"slowlog-max-len", b"-1"]]
    return c


def masked(cmd, reply):
    if cmd[:2] == [b"CONFIG", b"GET"] and reply[0] == "*":
        v = reply[1]  # Redis's order is its hash table's
        return ("*", sorted(zip(v[0::2], v[1::2])))
    if cmd[:2] != [b"SLOWLOG", b"GET"] or reply[0] != "*":
        return reply
    out = []
    for e in reply[1]:
        f = e[1]
        out.append((f[0], f[3], f[5]))  # id, arguments, client name
    return ("*", out)


def test_same_as_redis(goblind):
    ref = e2e.redis_server()
    srv = e2e.goblind(goblind)
    try:
        a, b = ref.client(), srv.client()
        for cmd in script():
            ra, rb = masked(cmd, a.call(*cmd)), masked(cmd, b.call(*cmd))
            assert ra == rb, "%r:\n  redis:  %r\n  goblin: %r" % (cmd, ra, rb)
        # The fields masked above are there and sane.
        b.call(b"CONFIG", b"SET", b"slowlog-log-slower-than", b"0")
        b.call(b"SLOWLOG", b"RESET")
        b.call(b"SET", b"k", b"v")
        e = b.call(b"SLOWLOG", b"GET", b"1")[1][0][1]
        assert e[1][0] == ":" and e[1][1] > 1600000000, e
        assert e[2][0] == ":" and e[2][1] >= 0, e
        assert e[4][0] == "$", e
        e2e.check_stopped_cleanly(srv)
    finally:
        ref.kill_now()
        srv.kill_now()


if __name__ == "__main__":
    e2e.run_tests([test_same_as_redis], sys.argv[1])
