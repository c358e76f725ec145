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
    set's encoding), and its remaining time to live within 2 s;
  * clients blocked in BLPOP, BLMOVE, BZPOPMIN and BLMPOP served by
    another client's write, each cycle (a replica gets what the pop
    did, never the blocking command);
  * two replicas following goblind the whole time, one goblind and one
    redis-server, told to follow again at each restart (goblind comes
    back on another port): before each restart and at the end, once
    both have applied all of the master's stream, each must hold exactly
    the master's keyspace: every database, key, type, value and
    absolute deadline (repl_data.dump).

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
import repl_data  # noqa: E402
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


def replication(c):
    text = e2e.plain(c.call(b"INFO", b"replication")).decode()
    return dict(line.split(":", 1) for line in text.split("\r\n")
                if ":" in line)


def follow(replicas, master):
    for r in replicas:
        reply = r.client().call(b"REPLICAOF", b"127.0.0.1",
                                str(master.port).encode())
        assert reply[0] == "+", reply


def caught_up(mc, rc):
    m, r = replication(mc), replication(rc)
    return (r.get("master_link_status") == "up" and
            r.get("slave_repl_offset") == m.get("master_repl_offset"))


AGREED = []  # the keys held by the master at each agreement


def replicas_agree(master, replicas, when):
    """None once every replica applied the master's whole stream and
    holds its keyspace, else what differs. A key may expire between two
    dumps (the master's DEL is then on its way): a difference counts only
    if it is still there after the replicas catch up again."""
    mc = master.client()
    err = None
    for attempt in range(3):
        for r in replicas:
            rc = r.client()
            end = time.monotonic() + 60
            while not caught_up(mc, rc):
                if time.monotonic() > end:
                    return "%s: %s never caught up: %r\n%s" % (
                        when, r.name, replication(rc), r.output()[-2000:])
                time.sleep(0.02)
        want = repl_data.dump(mc, range(16))
        err = None
        for r in replicas:
            got = repl_data.dump(r.client(), range(16))
            err = err or repl_data.differences(
                want, got, ("goblind master", r.name + " replica"))
        if err is None:
            AGREED.append(len(want))
            return None
        time.sleep(0.2)
    return "%s: %s" % (when, err)


BLOCKED = [
    ([b"BLPOP", b"bq:%d", b"5"], [b"RPUSH", b"bq:%d", b"a", b"b"]),
    ([b"BLMOVE", b"bm:%d", b"bm:dst", b"LEFT", b"RIGHT", b"5"],
     [b"LPUSH", b"bm:%d", b"x"]),
    ([b"BZPOPMIN", b"bz:%d", b"5"], [b"ZADD", b"bz:%d", b"2", b"m", b"1.5",
                                     b"n"]),
    ([b"BLMPOP", b"5", b"1", b"bl:%d", b"RIGHT", b"COUNT", b"2"],
     [b"RPUSH", b"bl:%d", b"p", b"q", b"r"]),
]


def blocked_serves(srv, n):
    """The replies of clients blocked on srv until another client's
    write serves them."""
    out = []
    for wait, serve in BLOCKED:
        a, b = srv.client(), srv.client()
        a.send_raw(e2e.Client.encode([w.replace(b"%d", b"%d" % n)
                                      for w in wait]))
        for _ in range(500):  # until a is blocked
            if b"blocked_clients:1" in e2e.plain(b.call(b"INFO",
                                                        b"clients")):
                break
            time.sleep(0.005)
        out.append(b.call(*[w.replace(b"%d", b"%d" % n) for w in serve]))
        out.append(a.read())
        a.close()
        b.close()
    return out


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
    master_args = ("--dir", d, "--repl-diskless-sync-delay", "0")
    test = e2e.goblind(goblind, *master_args)
    replicas = [e2e.goblind(goblind, "--save", "", "--dir", e2e.tmpdir()),
                e2e.redis_server()]
    replicas[0].name, replicas[1].name = "goblind", "redis-server"
    follow(replicas, test)
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
            want, got = blocked_serves(ref, restarts), \
                blocked_serves(test, restarts)
            if want != got:
                err = "blocked pops: redis-server %r, goblind %r" % (want,
                                                                      got)
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
            err = replicas_agree(test, replicas,
                                 "before restart %d" % (restarts + 1))
            if err:
                break
            e2e.check_stopped_cleanly(test)
            test = e2e.goblind(goblind, *master_args)
            follow(replicas, test)
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
            err = replicas_agree(test, replicas, "at the end")
        if err is None:
            print("replicas agreed with the master %d times, at the end on "
                  "%d keys in all databases" % (len(AGREED), AGREED[-1]),
                  flush=True)
            e2e.check_stopped_cleanly(test)
            e2e.check_stopped_cleanly(replicas[0])
    finally:
        ref.kill_now()
        test.kill_now()
        for r in replicas:
            r.kill_now()
    if err:
        print("seed %d: %s" % (seed, err))
        sys.exit(1)
    print("soak passed: %d commands, %d restarts, seed %d" % (
        sent, restarts, seed))


if __name__ == "__main__":
    main()
