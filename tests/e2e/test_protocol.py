"""test_protocol.py - malformed RESP against goblind and redis-server.

    /usr/bin/python3 test_protocol.py GOBLIND

Each input goes to both servers on a fresh connection. Where Redis answers
"-ERR Protocol error: ..." and closes, goblind must send the same bytes and
close too; where Redis keeps the connection (empty or odd but legal input)
goblind must answer the same and stay open. Throughout, a second client
connected before the bad input must keep working.
"""

import random
import sys

import e2e

CLOSING = [
    b"*1\r\n$-5\r\n",                       # invalid bulk length
    b"*1\r\n$abc\r\n",
    b"*1\r\n$999999999999\r\n",
    b"*1\r\n$2147483648\r\n",
    b"*1\r\n$536870913\r\n",                # past proto-max-bulk-len
    b"*99999999999\r\n",                    # invalid multibulk length
    b"*2147483648\r\n",
    b"*abc\r\n",
    b"*\xff\xfe\r\n",                       # binary garbage
    b"*1\r\nxx\r\n",                        # expected '$', got 'x'
    b"*1\r\n\xff\xfe\r\n",
    b"*3\r\n$3\r\nSET\r\n$1\r\na\r\n:1\r\n",
    b"set \"a b\r\n",                       # unbalanced quotes
    b"set 'a b\r\n",
    b"set \"a\"b c\r\n",
    b"*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$-1\r\n",  # good, then bad
    b"x" * 70000,                           # too big inline request
    b"*1\r\n$" + b"9" * 70000,              # too big bulk count string
    b"*" + b"1" * 70000,                    # too big mbulk count string
]

STAYING = [
    b"*0\r\n",
    b"*-1\r\n",
    b"\r\n\r\n",
    b"PING\r\n",
    b"  ping   hello  \r\n",
    b"echo \"a\\x41\\n\" 'b c'\r\n",
    b"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n",
]


def exchange(server, data, expect_close):
    """Sends data on a new connection; returns what came back and whether
    the server closed the connection (probed with a PING when not)."""
    c = server.client()
    c.send_raw(data)
    if expect_close:
        try:
            return c.read_until_closed(timeout=10), True
        except AssertionError:
            c.close()
            return b"(still open)", False
    c.send_raw(b"*2\r\n$4\r\nECHO\r\n$6\r\nMARKER\r\n")
    out = b""
    c.s.settimeout(10)
    while not out.endswith(b"$6\r\nMARKER\r\n"):
        chunk = c.s.recv(65536)
        if not chunk:
            c.close()
            return out, True
        out += chunk
    c.close()
    return out, False


def test_bad_input(goblind_path):
    redis = e2e.redis_server()
    gob = e2e.goblind(goblind_path)
    bystander = gob.client()
    bystander.call("SET", "bystander", "1")
    rnd = random.Random(7)
    garbage = []
    for _ in range(20):
        junk = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 40)))
        # No CR, LF or NUL inside: Redis looks for the line end with
        # strchr, so a NUL would make it wait for more input.
        junk = bytes(b for b in junk if b not in b"\r\n\x00")
        garbage.append(b"*" + b"g" + junk + b"\r\n")
    f = e2e.Failures()
    for data in CLOSING + STAYING + garbage:
        want_close = data not in STAYING
        want, want_closed = exchange(redis, data, want_close)
        got, got_closed = exchange(gob, data, want_close)
        label = repr(data)[:50]
        f.eq(got, want, "reply to %s" % label)
        f.eq(got_closed, want_closed, "closed after %s" % label)
        if want_close:
            f.check(want.startswith(b"-ERR Protocol error: ") or
                    want.startswith(b"+PONG\r\n-ERR Protocol error: "),
                    "redis-server answered %s with %r" % (label, want))
        f.eq(bystander.call("INCR", "bystander")[0], ":",
             "bystander after %s" % label)
    f.eq(bystander.call("GET", "bystander"),
         ("$", b"%d" % (1 + len(CLOSING + STAYING + garbage))),
         "bystander count")
    e2e.check_stopped_cleanly(gob)
    redis.kill_now()
    f.finish()


if __name__ == "__main__":
    e2e.run_tests([test_bad_input], sys.argv[1])
