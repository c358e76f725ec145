"""test_redis_benchmark.py - Debian's redis-benchmark with its default test
list against goblind, as a new user first runs it, beside redis-server.

    /usr/bin/python3 test_redis_benchmark.py GOBLIND

`redis-benchmark -q` runs every default test (PING_INLINE, PING_MBULK,
SET, GET, INCR, LPUSH, RPUSH, LPOP, RPOP, SADD, HSET, SPOP, ZADD, ZPOPMIN,
LPUSH for LRANGE, LRANGE_100/300/500/600, MSET) with few requests, once
at depth one and once pipelined (-P 16), over the Unix socket and over
TCP. redis-benchmark 7.0 prints the first error reply it gets and exits
at once; the test fails on any error or warning line, on a non-zero exit,
and unless goblind finishes the same tests redis-server finishes with the
same flags. Nothing here looks
at a rate.
"""

import re
import subprocess
import sys

import e2e

REDIS_BENCHMARK = "redis-benchmark"
DONE = re.compile(r"^(.+?): \S+ requests per second")  # "inf" too


def bench(target, *flags):
    """Runs redis-benchmark against target (argv naming the server);
    returns (exit code, finished test names, suspicious lines, text)."""
    p = subprocess.run([REDIS_BENCHMARK] + target +
                       ["-q", "-n", "300", "-c", "4", "-r", "1000"] +
                       list(flags),
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=280)
    text = p.stdout.decode("utf-8", "replace")
    names, bad = [], []
    for line in re.split(r"[\r\n]+", text):
        line = line.strip()
        if not line:
            continue
        m = DONE.match(line)
        if m:
            names.append(m.group(1))
        elif re.search(r"error|warning|ERR|WRONGTYPE", line, re.I):
            bad.append(line)
    return p.returncode, names, bad, text


def main():
    goblind_path = sys.argv[1]
    redis = e2e.redis_server()
    gob = e2e.goblind(goblind_path)
    f = e2e.Failures()
    try:
        for flags in ([], ["-P", "16"]):
            rc, want, bad, text = bench(["-s", redis.sock], *flags)
            assert rc == 0 and not bad and len(want) >= 20, text
            for target in (["-s", gob.sock],
                           ["-h", "127.0.0.1", "-p", str(gob.port)]):
                rc, got, bad, text = bench(target, *flags)
                what = " ".join(target[:1] + flags)
                f.eq(rc, 0, "exit code, %s:\n%s" % (what, text))
                f.eq(bad, [], "error lines, %s" % what)
                f.eq(got, want, "tests finished, %s:\n%s" % (what, text))
                # The server answers the next client: no state is left.
                c = gob.client()
                f.eq(c.call("PING"), ("+", b"PONG"), "PING after, " + what)
                c.call("FLUSHALL")
                c.close()
        e2e.check_stopped_cleanly(gob)
    finally:
        gob.kill_now()
        redis.kill_now()
    f.finish()


if __name__ == "__main__":
    main()
