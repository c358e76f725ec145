"""soak.py - a time-bounded randomized soak of the differential test with
persistence in the loop: the seeded command stream of test_differential.py
goes to redis-server and to goblind, with

  * a BGSAVE every cycle while traffic keeps flowing (the forked child
    saves while the parent serves and changes the store);
  * then a restart: a BGSAVE with the traffic paused, goblind stopped
    with SIGTERM (it must exit 0), started again on the same directory
    so it loads that snapshot, redis-server reloading its own (DEBUG
    RELOAD, so both hold what a load gives), and goblind's full contents
    compared with redis-server's: every key, its type, its value (and a
    set's encoding), and its remaining time to live within 2 s.

Every reply is compared as in test_differential.py.

    /usr/bin/python3 soak.py GOBLIND [--seconds N] [--seed N]

The test suite runs it for 15 s (meson test soak); for a long run:

    /usr/bin/python3 tests/e2e/soak.py build/server/goblind --seconds 600
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
import test_differential as diff  # noqa: E402

CYCLE = 3000       # commands between restarts
DURING = 600       # of them, sent while a BGSAVE runs


def bgsave_wait(c):
    r = e2e.plain(c.call(b"BGSAVE"))
    assert r == b"Background saving started", r


def bgsave_done(c):
    for _ in range(6000):
        text = e2e.plain(c.call(b"INFO", b"persistence")).decode()
        if "rdb_bgsave_in_progress:0" in text:
            m = re.search(r"rdb_last_bgsave_status:(\w+)", text)
            return m.group(1)
        time.sleep(0.005)
    return "timeout"


def ttl_differences(ref, test):
    """Keys whose remaining times differ by more than 2 s."""
    out = []
    for k in e2e.plain(ref.call(b"KEYS", b"*")):
        a = e2e.plain(ref.call(b"PTTL", k))
        b = e2e.plain(test.call(b"PTTL", k))
        if (a < 0 or b < 0) and a != b or abs(a - b) > 2000:
            out.append("  %r: PTTL redis-server %d, goblind %d" % (k, a, b))
    return out


def main():
    args = sys.argv[1:]
    goblind = args[0]
    seconds = float(args[args.index("--seconds") + 1]) \
        if "--seconds" in args else 15.0
    seed = int(args[args.index("--seed") + 1]) if "--seed" in args \
        else int(time.time())
    print("soak: seed %d, %.0f s" % (seed, seconds), flush=True)
    d = e2e.tmpdir()
    # DEBUG RELOAD (below) needs the debug command, which Redis 7.0 keeps
    # off by default.
    ref = e2e.redis_server("--enable-debug-command", "local")
    test = e2e.goblind(goblind, "--dir", d)
    gen = diff.Gen(seed, int(time.time() * 1000))
    end = time.monotonic() + seconds
    err = None
    restarts = sent = 0
    try:
        while err is None and time.monotonic() < end:
            pair = diff.Pair(ref.client(), test.client())
            tc = test.client()
            err = diff.run_sequence(pair, gen, CYCLE - DURING)
            if err:
                break
            bgsave_wait(tc)
            err = diff.run_sequence(pair, gen, DURING)
            status = bgsave_done(tc)
            if err is None and status != "ok":
                err = "BGSAVE under traffic ended with status %s:\n%s" % (
                    status, test.output()[-2000:])
            if err:
                break
            bgsave_wait(tc)
            status = bgsave_done(tc)
            if status != "ok":
                err = "BGSAVE ended with status %s" % status
                break
            sent += pair.sent
            e2e.check_stopped_cleanly(test)
            test = e2e.goblind(goblind, "--dir", d)
            restarts += 1
            rc, tc = ref.client(), test.client()
            # redis-server saves and loads its own dump too: a load picks
            # compact encodings a live key never converts back to (a set
            # of integers that was once a hashtable is an intset again, a
            # small skiplist zset a listpack), and the OBJECT ENCODING
            # commands that follow must see both servers after a load.
            if e2e.plain(rc.call(b"DEBUG", b"RELOAD")) != b"OK":
                err = "redis-server's DEBUG RELOAD failed"
                break
            err = diff.compare_dumps(rc, tc)
            if err is None:
                lines = ttl_differences(rc, tc)
                if lines:
                    err = "after restart %d, TTLs differ:\n%s" % (
                        restarts, "\n".join(lines))
            else:
                err = "after restart %d (load of the BGSAVE file): %s" % (
                    restarts, err)
            if err is None:
                print("restart %d: %d keys agree after %d commands" % (
                    restarts, e2e.plain(rc.call(b"DBSIZE")), sent),
                    flush=True)
        if err is None:
            e2e.check_stopped_cleanly(test)
    finally:
        ref.kill_now()
        test.kill_now()
    if err:
        print("seed %d: %s" % (seed, err))
        sys.exit(1)
    print("soak passed: %d commands, %d restarts, seed %d" % (
        sent, restarts, seed))


if __name__ == "__main__":
    main()
