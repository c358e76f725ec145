"""test_error_stats.py - how error replies are counted, against
redis-server 7.0: INFO errorstats (every code word, as Redis names it),
total_error_replies, and each command's calls, rejected_calls and
failed_calls in INFO commandstats.

    /usr/bin/python3 test_error_stats.py GOBLIND

Each case runs on both servers after FLUSHALL and CONFIG RESETSTAT, over
one Unix-socket connection each, and the counters must be the same.
The cases: plain command errors (arity, unknown command, WRONGTYPE, a
bad integer), errors inside MULTI/EXEC, and scripts, where Redis counts
an error a command inside the script replied once (the script's own
error reply then marks EVAL failed without counting again, Redis's
ignore_error_stats_update), and an error the script makes itself (Lua
errors, {err=...}, redis.error_reply, NOSCRIPT, a missing function, a
bad numkeys) as an error of EVAL's; codes of any name, the empty code of
a reply that begins with a space, a code past Redis's 32-character
window (ERR); and DEBUG ERROR, which Redis does not count. Then more
than 128 distinct codes: Goblin keeps 128 and counts the rest as
ERRORSTATS_OVERFLOW (Redis 7.0 keeps every code; a bound is Goblin's
own, so a client cannot grow the table without end).
"""

import re
import sys

import e2e

CASES = [
    [[b"GET"]],
    [[b"NOSUCH", b"x"]],
    [[b"SET", b"k", b"v"], [b"LPUSH", b"k", b"x"], [b"INCR", b"k"]],
    [[b"MULTI"], [b"SET", b"a"], [b"INCR", b"a"], [b"EXEC"]],
    [[b"SET", b"k", b"v"], [b"MULTI"], [b"INCR", b"k"], [b"SET", b"b", b"1"],
     [b"EXEC"]],
    [[b"SELECT", b"99"], [b"WATCH"], [b"AUTH", b"x"]],
    [[b"SET", b"k", b"v"], [b"EVAL", b"return redis.call('INCR','k')", b"0"]],
    [[b"SET", b"k", b"v"], [b"EVAL", b"return redis.pcall('INCR','k')", b"0"]],
    [[b"SET", b"k", b"v"],
     [b"EVAL", b"return {1, redis.pcall('INCR','k')}", b"0"]],
    [[b"SET", b"k", b"v"],
     [b"EVAL", b"local ok = pcall(redis.call, 'INCR', 'k') return 1", b"0"]],
    [[b"EVAL", b"return redis.call('GET')", b"0"]],
    [[b"EVAL", b"return redis.call('nosuch')", b"0"]],
    [[b"EVAL", b"return redis.call('EVAL','return 1','0')", b"0"]],
    [[b"EVAL", b"#!lua flags=no-writes\nreturn redis.call('SET','a','1')",
      b"0"]],
    [[b"EVAL_RO", b"return redis.call('SET','a','1')", b"0"]],
    [[b"EVAL", b"error('x')", b"0"]],
    [[b"EVAL", b"return {err='MYERR x'}", b"0"]],
    [[b"EVAL", b"return {1, {err='NEST x'}}", b"0"]],
    [[b"EVAL", b"return redis.error_reply('CODE2 text')", b"0"]],
    [[b"EVAL", b"return {err=' lead'}", b"0"],
     [b"EVAL", b"return {err='nospace'}", b"0"],
     [b"EVAL", b"return {err='lower x'}", b"0"],
     [b"EVAL", b"return {err='-DASH x'}", b"0"],
     [b"EVAL", b"return {err='ABCDEFGHIJKLMNOPQRSTUVWXYZABCD x'}", b"0"],
     [b"EVAL", b"return {err='ABCDEFGHIJKLMNOPQRSTUVWXYZABCDE x'}", b"0"]],
    [[b"EVALSHA", b"0" * 40, b"0"]],
    [[b"FCALL", b"nosuch", b"0"]],
    [[b"EVAL", b"return 1", b"-1"], [b"EVAL", b"return 1", b"x"],
     [b"EVAL", b"return +", b"0"]],
    [[b"SCRIPT", b"LOAD", b"return +"], [b"FUNCTION", b"LOAD", b"bad"]],
    [[b"DEBUG", b"ERROR", b"FOO bar"]],
]

LINE = re.compile(
    rb"^(?:cmdstat_(\S+):calls=(\d+),.*rejected_calls=(\d+),"
    rb"failed_calls=(\d+)|errorstat_(\S*):count=(\d+)|"
    rb"(total_error_replies):(\d+))\r?$", re.M)


def counters(c):
    """{name: counts} from INFO commandstats, errorstats and stats."""
    text = b"".join(c.call(b"INFO", s)[1]
                    for s in (b"commandstats", b"errorstats", b"stats"))
    out = {}
    for m in LINE.finditer(text):
        if m.group(1) is not None:
            if m.group(1) not in (b"config|resetstat", b"flushall"):
                out[b"cmd " + m.group(1)] = m.group(2, 3, 4)
        elif m.group(5) is not None:
            out[b"err " + m.group(5)] = m.group(6)
        else:
            out[m.group(7)] = m.group(8)
    return out


def run_case(c, case):
    c.call(b"FLUSHALL")
    c.call(b"CONFIG", b"RESETSTAT")
    for cmd in case:
        c.call(*cmd)
    return counters(c)


def test_counted_as_redis_counts(goblind):
    ref = e2e.redis_server("--enable-debug-command", "yes")
    srv = e2e.goblind(goblind)
    try:
        a, b = ref.client(), srv.client()
        lua = e2e.has_lua(b)
        for case in CASES:
            if not lua and any(c[0] in (b"EVAL", b"EVAL_RO", b"EVALSHA",
                                        b"FCALL", b"SCRIPT", b"FUNCTION")
                               for c in case):
                continue
            want, got = run_case(a, case), run_case(b, case)
            assert want == got, "%r:\n  redis:  %r\n  goblin: %r" % (
                case, want, got)
        e2e.check_stopped_cleanly(srv)
    finally:
        ref.kill_now()
        srv.kill_now()


def test_codes_past_the_bound(goblind):
    srv = e2e.goblind(goblind)
    try:
        c = srv.client()
        if not e2e.has_lua(c):
            return  # no way to make up error codes
        c.call(b"CONFIG", b"RESETSTAT")
        for i in range(140):
            c.call(b"EVAL", b"return {err=ARGV[1]}", b"0", b"E%d x" % i)
        c.call(b"GET")  # an ERR, a code not kept yet
        got = counters(c)
        codes = {k: v for k, v in got.items() if k.startswith(b"err ")}
        assert len(codes) == 129, sorted(codes)
        assert codes[b"err ERRORSTATS_OVERFLOW"] == b"13", codes
        assert got[b"total_error_replies"] == b"141", got
        e2e.check_stopped_cleanly(srv)
    finally:
        srv.kill_now()


if __name__ == "__main__":
    e2e.run_tests([test_counted_as_redis_counts, test_codes_past_the_bound],
                  sys.argv[1])
