"""test_redis_cli.py - Debian's redis-cli against goblind, beside a real
redis-server running the same commands.

    /usr/bin/python3 test_redis_cli.py GOBLIND

One-shot commands must print exactly what they print against redis-server
(over the Unix socket and over TCP), RESP3 (`redis-cli -3`) likewise, and
`redis-cli --pipe` must mass-insert 100,000 commands with no error.
"""

import os
import re
import subprocess
import sys

import e2e

# Scores are chosen so Redis 7.0's 17-digit output and Goblin's shortest
# output print the same text.
ONE_SHOT = [
    ["PING"], ["PING", "hello world"], ["ECHO", "a\tb"],
    ["SET", "k", "v"], ["GET", "k"], ["GET", "nokey"],
    ["SET", "n", "41"], ["INCR", "n"], ["INCRBY", "n", "-50"],
    ["DECR", "n"], ["APPEND", "k", "alue"], ["STRLEN", "k"],
    ["MSET", "a", "1", "b", "2"], ["MGET", "a", "nokey", "b"],
    ["SET", "k2", "x", "NX"], ["SET", "k2", "y", "XX", "GET"],
    ["HSET", "h", "f1", "v1", "f2", "v2"], ["HGET", "h", "f1"],
    ["HLEN", "h"], ["HINCRBY", "h", "c", "5"], ["HMGET", "h", "f1", "no"],
    ["HEXISTS", "h", "f2"], ["HDEL", "h", "f2", "zz"],
    ["ZADD", "z", "1.5", "a", "2", "b", "3", "c", "-inf", "m"],
    ["ZRANGE", "z", "0", "-1", "WITHSCORES"], ["ZSCORE", "z", "a"],
    ["ZSCORE", "z", "m"], ["ZRANK", "z", "c"], ["ZREVRANK", "z", "c"],
    ["ZCARD", "z"], ["ZINCRBY", "z", "2.5", "a"],
    ["ZRANGEBYSCORE", "z", "(1.5", "+inf", "WITHSCORES"],
    ["ZRANGE", "z", "+inf", "2", "BYSCORE", "REV", "LIMIT", "0", "2"],
    ["ZCOUNT", "z", "-inf", "2"], ["ZPOPMIN", "z"],
    ["EXISTS", "k", "h", "z", "nokey"], ["TYPE", "h"], ["TYPE", "z"],
    ["TYPE", "k"], ["TYPE", "nokey"], ["TTL", "k"], ["EXPIRE", "k", "100"],
    ["PERSIST", "k"], ["TTL", "k"], ["PTTL", "nokey"],
    ["GET", "h"], ["INCR", "k"], ["ZADD", "z", "nan", "x"],
    ["HSET", "h"], ["NOSUCHCOMMAND", "arg"],
    ["RENAME", "k", "k3"], ["GET", "k3"], ["DEL", "k3", "a", "b"],
    ["DBSIZE"], ["SELECT", "0"], ["ECHO", "bye"],
]


def cli(*args, stdin=None):
    p = subprocess.run([e2e.REDIS_CLI] + [str(a) for a in args],
                       input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=100)
    return p.stdout.decode("utf-8", "replace")


def test_one_shot(goblind_path):
    redis = e2e.redis_server()
    gob = e2e.goblind(goblind_path)
    f = e2e.Failures()
    for cmd in ONE_SHOT:
        want = cli("-s", redis.sock, "--no-raw", *cmd)
        got = cli("-s", gob.sock, "--no-raw", *cmd)
        f.eq(got, want, "redis-cli %s" % " ".join(cmd))
    # The same over TCP, and raw output (what scripts parse).
    f.eq(cli("-h", "127.0.0.1", "-p", gob.port, "PING"), "PONG\n",
         "PING over TCP")
    f.eq(cli("-h", "127.0.0.1", "-p", gob.port, "GET", "n"),
         cli("-s", redis.sock, "GET", "n"), "raw GET over TCP")
    f.eq(cli("-s", gob.sock, "ZRANGE", "z", "0", "-1"),
         cli("-s", redis.sock, "ZRANGE", "z", "0", "-1"), "raw ZRANGE")
    e2e.check_stopped_cleanly(gob)
    redis.kill_now()
    f.finish()


def map_lines(text):
    """RESP3 map output as a set of 'key => value' lines: Redis does not
    specify hash field order."""
    return sorted(re.sub(r"^\s*\d+# ", "", line)
                  for line in text.splitlines())


def test_resp3(goblind_path):
    redis = e2e.redis_server()
    gob = e2e.goblind(goblind_path)
    f = e2e.Failures()
    setup = [["HSET", "h", "a", "1", "b", "2", "c", "3"],
             ["ZADD", "z", "1.5", "a", "2", "b", "-inf", "c"],
             ["SET", "s", "text"]]
    for srv in (redis, gob):
        for cmd in setup:
            cli("-3", "-s", srv.sock, *cmd)
    ordered = [["ZSCORE", "z", "a"], ["ZSCORE", "z", "c"],
               ["ZSCORE", "z", "none"], ["GET", "nokey"], ["GET", "s"],
               ["ZRANGE", "z", "0", "-1", "WITHSCORES"],
               ["ZPOPMAX", "z"], ["ZINCRBY", "z", "1", "a"],
               ["ZMSCORE", "z", "a", "none"], ["HGET", "h", "a"],
               ["EXISTS", "h"], ["GET", "h"], ["PING"]]
    for cmd in ordered:
        want = cli("-3", "-s", redis.sock, "--no-raw", *cmd)
        got = cli("-3", "-s", gob.sock, "--no-raw", *cmd)
        f.eq(got, want, "redis-cli -3 %s" % " ".join(cmd))
    want = cli("-3", "-s", redis.sock, "--no-raw", "HGETALL", "h")
    got = cli("-3", "-s", gob.sock, "--no-raw", "HGETALL", "h")
    f.eq(map_lines(got), map_lines(want), "redis-cli -3 HGETALL (a map)")
    f.check(got.lstrip().startswith("1# "), "HGETALL is a RESP3 map: %r"
            % got)
    hello = cli("-3", "-s", gob.sock, "--no-raw", "HELLO", "3")
    f.check('"proto" => (integer) 3' in hello, "HELLO 3: %r" % hello)
    e2e.check_stopped_cleanly(gob)
    redis.kill_now()
    f.finish()


def test_pipe_mass_insert(goblind_path):
    gob = e2e.goblind(goblind_path)
    n = 100000
    parts = []
    for i in range(n):
        k, v = b"key:%d" % i, b"value:%d\r\nwith crlf" % i
        parts.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (
            len(k), k, len(v), v))
    data = b"".join(parts)
    path = os.path.join(e2e.tmpdir(), "mass.resp")
    with open(path, "wb") as fh:
        fh.write(data)
    with open(path, "rb") as fh:
        out = subprocess.run([e2e.REDIS_CLI, "-s", gob.sock, "--pipe"],
                             stdin=fh, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, timeout=100)
    text = out.stdout.decode()
    print(text.strip())
    assert out.returncode == 0, text
    assert "errors: 0, replies: %d" % n in text, text
    assert cli("-s", gob.sock, "DBSIZE") == "%d\n" % n
    c = gob.client()
    assert c.call("GET", "key:99999") == ("$", b"value:99999\r\nwith crlf")
    assert c.call("STRLEN", "key:0") == (":", len(b"value:0\r\nwith crlf"))
    c.close()
    e2e.check_stopped_cleanly(gob)


if __name__ == "__main__":
    e2e.run_tests([test_one_shot, test_resp3, test_pipe_mass_insert],
                  sys.argv[1])
