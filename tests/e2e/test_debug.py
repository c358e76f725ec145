"""test_debug.py - DEBUG and OBJECT REFCOUNT against redis-server 7.0.

    /usr/bin/python3 test_debug.py GOBLIND

The same commands go to redis-server (started with enable-debug-command
yes) and to goblind (its default, local, allows the Unix socket), over
RESP2 and then RESP3, and the replies are compared exactly: DEBUG DIGEST
and DIGEST-VALUE of every type (with deadlines, in several databases, and
after DEBUG RELOAD), PROTOCOL of each type, POPULATE, OBJECT REFCOUNT of
shared integers, DEBUG OBJECT (the address, LRU clock and idle time
masked) with the quicklist fields Redis shows, and the error texts.
Then the clock keys expire by stands still while EXEC's queue or a script
runs, as in Redis (DEBUG SLEEP inside MULTI; a script that spins on
TIME). Then enable-debug-command no refuses DEBUG with Redis's text, and
a TCP client from 127.0.0.1 counts as local.
"""

import re
import sys

import e2e

SETUP = [
    [b"SET", b"s", b"100"], [b"SET", b"big", b"123456"],
    [b"SET", b"e", b"hello"], [b"SET", b"t", b"v", b"EX", b"1000"],
    [b"RPUSH", b"l", b"a", b"1", b"-5", b"x" * 70],
    [b"RPUSH", b"lb"] + [b"%d" % i for i in range(3000)],
    [b"SADD", b"si", b"1", b"2", b"-3"], [b"SADD", b"ss", b"a", b"b", b"7"],
    [b"ZADD", b"z", b"1.5", b"a", b"0.1", b"b", b"-inf", b"c", b"3", b"d"],
    [b"HSET", b"h", b"f", b"v", b"g", b"12"],
    [b"SELECT", b"3"], [b"SET", b"k3", b"v"], [b"SELECT", b"0"],
]
KEYS = [b"s", b"big", b"e", b"t", b"l", b"lb", b"si", b"ss", b"z", b"h"]


def commands():
    c = [[b"FLUSHALL"], [b"DEBUG", b"DIGEST"]] + SETUP
    c += [[b"DEBUG", b"DIGEST"], [b"DEBUG", b"DIGEST-VALUE"] + KEYS +
          [b"nokey"], [b"DEBUG", b"DIGEST-VALUE"]]
    c += [[b"OBJECT", b"REFCOUNT", k] for k in KEYS + [b"nokey"]]
    c += [[b"DEBUG", b"OBJECT", k] for k in KEYS]
    c += [[b"DEBUG", b"OBJECT", b"nokey"], [b"DEBUG", b"OBJECT"],
          [b"DEBUG", b"FOO"], [b"DEBUG", b"SLEEP", b"0"],
          [b"DEBUG", b"SLEEP", b"0.01"],
          [b"DEBUG", b"SET-ACTIVE-EXPIRE", b"0"],
          [b"DEBUG", b"SET-ACTIVE-EXPIRE", b"1"],
          [b"DEBUG", b"CHANGE-REPL-ID"], [b"DEBUG", b"ERROR", b"FOO bar"],
          [b"DEBUG", b"ERROR", b"plain"], [b"DEBUG", b"JMAP"],
          [b"DEBUG", b"LOG", b"hello"], [b"DEBUG", b"RELOAD", b"BOGUS"],
          [b"DEBUG", b"RELOAD"], [b"DEBUG", b"DIGEST"],
          [b"DEBUG", b"RELOAD", b"NOSAVE"], [b"DEBUG", b"DIGEST"],
          [b"SET", b"s", b"changed"], [b"DEL", b"e"],
          [b"DEBUG", b"RELOAD", b"NOSAVE", b"NOFLUSH", b"MERGE"],
          [b"GET", b"s"], [b"GET", b"e"], [b"DEBUG", b"DIGEST"],
          [b"DEBUG", b"POPULATE", b"3"], [b"DEBUG", b"POPULATE", b"2",
                                           b"p", b"10"],
          [b"DEBUG", b"POPULATE", b"x"], [b"DEBUG", b"POPULATE", b"-1"],
          [b"GET", b"key:2"], [b"GET", b"p:1"], [b"DEBUG", b"DIGEST"]]
    for t in (b"string", b"integer", b"double", b"null", b"array", b"set",
              b"push",
              b"map", b"verbatim", b"true", b"false", b"bogus"):
        c.append([b"DEBUG", b"PROTOCOL", t])
    return c


MASK = re.compile(rb"Value at:\S+ (.*) lru:\d+ lru_seconds_idle:\d+")
# Redis writes collections in its listpack encodings and LZF-compresses
# strings over 20 bytes; Goblin's RDB lengths are uncompressed, so only
# short strings' serializedlength is compared.
SERLEN = re.compile(rb"(encoding:(?!int|embstr)\S+) serializedlength:\d+")


def masked(reply):
    if reply[0] == "+" and reply[1].startswith(b"Value at:"):
        return ("+", SERLEN.sub(rb"\1", MASK.sub(rb"\1", reply[1])))
    return reply


def test_same_as_redis(goblind):
    ref = e2e.redis_server("--enable-debug-command", "yes")
    # DEBUG RELOAD saves: into a directory of its own, not the cwd, where
    # every other test's goblind would load it.
    srv = e2e.goblind(goblind, "--dir", e2e.tmpdir())
    try:
        for resp3 in (False, True):
            a, b = ref.client(), srv.client()
            if resp3:
                a.call(b"HELLO", b"3")
                b.call(b"HELLO", b"3")
            for cmd in commands():
                ra, rb = masked(a.call(*cmd)), masked(b.call(*cmd))
                assert ra == rb, "%r (RESP%d):\n  redis:  %r\n  goblin: %r" % (
                    cmd, 3 if resp3 else 2, ra, rb)
        e2e.check_stopped_cleanly(srv)
    finally:
        ref.kill_now()
        srv.kill_now()


# Spins until the clock has moved 3 ms past the script's start (TIME is
# not frozen in Redis 7.0), then asks whether KEYS[1], set to expire in
# 1 ms, is still there.
SPIN = (b"redis.call('SET', KEYS[1], 'v', 'PX', 1) "
        b"local t0 = redis.call('TIME') "
        b"repeat local t = redis.call('TIME') "
        b"until (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) > 3000 "
        b"return {redis.call('EXISTS', KEYS[1]), redis.call('GET', KEYS[1])}")
# The same, with SCAN and KEYS: a key that is live to the script is
# listed by both.
SPIN_SCAN = (b"redis.call('SET', KEYS[1], 'v', 'PX', 1) "
             b"local t0 = redis.call('TIME') "
             b"repeat local t = redis.call('TIME') "
             b"until (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) > 3000 "
             b"local s = redis.call('SCAN', 0, 'COUNT', 100)[2] "
             b"local k = redis.call('KEYS', '*') "
             b"table.sort(s) table.sort(k) return {s, k}")
SPIN_LIB = (b"#!lua name=spinlib\nredis.register_function('spin', "
            b"function(KEYS, ARGV) " + SPIN + b" end)")


def frozen_clock_commands(lua):
    """Keys expire by the time EXEC or a script began, as Redis's
    keyIsExpired: a key set to expire in 1 ms is still there later in
    the same EXEC or script, and gone after it. A script inside EXEC
    expires keys by its own start; EXEC's time holds again after it; and
    a script inside EXEC leaves EXEC's state as it was (a blocking
    command after it still answers at once)."""
    c = [[b"FLUSHALL"],
         [b"MULTI"], [b"SET", b"k", b"v", b"PX", b"1"],
         [b"DEBUG", b"SLEEP", b"0.01"], [b"EXISTS", b"k"], [b"GET", b"k"],
         [b"EXEC"], [b"EXISTS", b"k"]]
    if not lua:
        return c
    c += [[b"EVAL", SPIN, b"1", b"k"], [b"EXISTS", b"k"],
          [b"SET", b"other", b"1"], [b"EVAL", SPIN_SCAN, b"1", b"k"],
          [b"EXISTS", b"k"], [b"DEL", b"other"],
          [b"FUNCTION", b"LOAD", b"REPLACE", SPIN_LIB],
          [b"FCALL", b"spin", b"1", b"k"], [b"EXISTS", b"k"],
          [b"MULTI"], [b"SET", b"k2", b"v", b"PX", b"5"],
          [b"DEBUG", b"SLEEP", b"0.02"], [b"EVAL", b"return 1", b"0"],
          [b"EXISTS", b"k2"], [b"EXEC"],
          [b"MULTI"], [b"SET", b"k3", b"v", b"PX", b"5"],
          [b"DEBUG", b"SLEEP", b"0.02"],
          [b"EVAL", b"return redis.call('EXISTS', KEYS[1])", b"1", b"k3"],
          [b"EXISTS", b"k3"], [b"EXEC"],
          [b"MULTI"], [b"EVAL", b"return 1", b"0"],
          [b"BLPOP", b"nolist", b"0"], [b"LPOP", b"nolist"], [b"EXEC"],
          [b"FUNCTION", b"DELETE", b"spinlib"]]
    return c


def test_time_stands_still_in_exec_and_scripts(goblind):
    ref = e2e.redis_server("--enable-debug-command", "yes")
    srv = e2e.goblind(goblind)
    try:
        a, b = ref.client(), srv.client()
        for cmd in frozen_clock_commands(e2e.has_lua(b)):
            ra, rb = a.call(*cmd), b.call(*cmd)
            assert ra == rb, "%r:\n  redis:  %r\n  goblin: %r" % (
                cmd, ra, rb)
        e2e.check_stopped_cleanly(srv)
    finally:
        ref.kill_now()
        srv.kill_now()


def test_enable_debug_command(goblind):
    srv = e2e.goblind(goblind, "--enable-debug-command", "no")
    try:
        r = srv.client().call(b"DEBUG", b"DIGEST")
        assert r[0] == "-" and r[1].startswith(
            b"ERR DEBUG command not allowed. If the enable-debug-command "
            b"option is set to \"local\""), r
    finally:
        srv.kill_now()
    srv = e2e.goblind(goblind)
    try:
        assert srv.client(tcp=True).call(b"DEBUG", b"SLEEP", b"0") == \
            ("+", b"OK")
    finally:
        srv.kill_now()


if __name__ == "__main__":
    e2e.run_tests([test_same_as_redis,
                   test_time_stands_still_in_exec_and_scripts,
                   test_enable_debug_command], sys.argv[1])
