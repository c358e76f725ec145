"""test_atomicity.py - at every instant the snapshot file is either the
previous complete snapshot or the new one.

A store of a large hash, a large sorted set and many strings is saved as
generation g. Then every value is rewritten as generation g+1 (and the
sizes change a little), a save starts, and at a random moment in it:

  * phase 1: goblind itself is killed with SIGKILL during SAVE;
  * phase 2: the BGSAVE child is killed with SIGKILL.

goblind restarts on the same directory and its whole content must equal
generation g or generation g+1 exactly (and g+1 whenever the save was
reported finished); no temporary file may be left once it has started
(it removes those of saves whose process is gone). Each phase runs for a bounded time (about 6 s).

    /usr/bin/python3 test_atomicity.py GOBLIND [--seconds N]
"""

import os
import random
import re
import signal
import sys
import time

import e2e

GOBLIND = sys.argv[1]
SECONDS = 6.0
if "--seconds" in sys.argv:
    SECONDS = float(sys.argv[sys.argv.index("--seconds") + 1])
N = 60000      # hash fields and sorted-set members
STRINGS = 20000
R = random.Random(int(os.environ.get("GOBLIN_SEED", "0")) or None)


def sizes(g):
    return N + g % 5, STRINGS - g % 3


def write_gen(c, g):
    """Replaces the whole content with generation g."""
    nf, ns = sizes(g)
    cmds = [[b"FLUSHALL"]]
    for base in range(0, nf, 2000):
        h, z = [b"HSET", b"h"], [b"ZADD", b"z"]
        for i in range(base, min(nf, base + 2000)):
            h += [b"f%d" % i, b"g%d-v%d" % (g, i)]
            z += [b"%d" % (i * 7 + g), b"m%d" % i]
        cmds += [h, z]
    for base in range(0, ns, 2000):
        s = [b"MSET"]
        for i in range(base, min(ns, base + 2000)):
            s += [b"s%d" % i, b"g%d-s%d" % (g, i)]
        cmds.append(s)
    for r in c.pipeline(cmds):
        e2e.plain(r)


def which_gen(c):
    """The generation the store holds exactly, or a description of how it
    is not one."""
    v = e2e.plain(c.call(b"HGET", b"h", b"f0"))
    if v is None:
        return "no key h"
    g = int(v[1:v.index(b"-")])
    nf, ns = sizes(g)
    if e2e.plain(c.call(b"DBSIZE")) != ns + 2:
        return "gen %d: DBSIZE %r" % (g, e2e.plain(c.call(b"DBSIZE")))
    h = e2e.plain(c.call(b"HGETALL", b"h"))
    if dict(zip(h[0::2], h[1::2])) != {
            b"f%d" % i: b"g%d-v%d" % (g, i) for i in range(nf)}:
        return "gen %d: hash differs" % g
    z = e2e.plain(c.call(b"ZRANGE", b"z", b"0", b"-1", b"WITHSCORES"))
    if z != [x for i in range(nf) for x in (b"m%d" % i, b"%d" % (i * 7 + g))]:
        return "gen %d: sorted set differs" % g
    keys = [b"s%d" % i for i in range(ns)]
    for base in range(0, ns, 5000):
        got = e2e.plain(c.call(b"MGET", *keys[base:base + 5000]))
        if got != [b"g%d-s%d" % (g, i) for i in range(base,
                                                      min(ns, base + 5000))]:
            return "gen %d: strings differ" % g
    return g


def start(d):
    return e2e.goblind(GOBLIND, "--dir", d)


def main():
    d = e2e.tmpdir()
    srv = start(d)
    c = srv.client()
    write_gen(c, 0)
    t0 = time.monotonic()
    e2e.plain(c.call(b"SAVE"))
    save_s = time.monotonic() - t0
    print("SAVE of %d keys takes %.3f s" % (STRINGS + 2, save_s))
    disk = 0
    failures = []
    counts = {"old": 0, "new": 0}
    for phase in ("SAVE", "BGSAVE"):
        end = time.monotonic() + SECONDS
        runs = 0
        while runs < 2 or time.monotonic() < end:
            runs += 1
            new = disk + 1
            write_gen(c, new)
            delay = R.uniform(0, save_s * 1.5)
            finished = False
            if phase == "SAVE":
                c.send_raw(c.encode([b"SAVE"]))
                time.sleep(delay)
                srv.kill_now()
            else:
                e2e.plain(c.call(b"BGSAVE"))
                pid = int(re.findall(r"started by pid (\d+)",
                                     srv.output())[-1])
                time.sleep(delay)
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                for _ in range(3000):
                    text = e2e.plain(c.call(b"INFO", b"persistence"))
                    if b"rdb_bgsave_in_progress:0" in text:
                        break
                    time.sleep(0.005)
                finished = b"rdb_last_bgsave_status:ok" in text
                srv.kill_now()
            srv = start(d)
            c = srv.client()
            left = [n for n in os.listdir(d) if ".tmp-" in n]
            if left:
                failures.append("temporary files left after a restart: %r"
                                % left)
                break
            g = which_gen(c)
            if g not in (disk, new) or (finished and g != new):
                failures.append("%s run %d (kill after %.3f s): expected "
                                "gen %d or %d%s, found %r" % (
                                    phase, runs, delay, disk, new,
                                    " (save finished)" if finished else "",
                                    g))
                break
            counts["new" if g == new else "old"] += 1
            disk = g
        print("%s: %d kills" % (phase, runs))
    print("restarts found the previous snapshot %d times, the new one %d "
          "times" % (counts["old"], counts["new"]))
    e2e.check_stopped_cleanly(srv)
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print("atomicity test passed")


if __name__ == "__main__":
    main()
