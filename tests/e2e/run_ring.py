"""run_ring.py - goblind's --ring endpoints, end to end.

    /usr/bin/python3 run_ring.py GOBLIND TEST_RING

Starts goblind with two 4 KiB rings (backoff) and a Unix socket, runs
TEST_RING (test_ring.c) with their paths, then checks that goblind logged
the hostile client of ring B, stops it with SIGTERM and checks that it
exited cleanly and removed both ring files.
"""

import os
import subprocess
import sys

import e2e


def main():
    goblind_path, program = sys.argv[1], sys.argv[2]
    d = e2e.tmpdir()
    ring_a = os.path.join(d, "a.ring")
    ring_b = os.path.join(d, "b.ring")
    gob = e2e.goblind(goblind_path, "--ring", ring_a, "4k",
                      "--ring", ring_b, "4096", "--ring-idle", "backoff",
                      "--ring-spin-us", "20")
    try:
        rc = subprocess.run([program, ring_a, ring_b, gob.sock],
                            timeout=110).returncode
        c = gob.client()
        got = c.call("CONFIG", "GET", "ring*")
        assert got[0] == "*" and len(got[1]) == 10, got
        log = gob.output()
        if "broke the ring protocol" not in log:
            print("goblind did not log the hostile ring client:\n" + log)
            rc = 1
        e2e.check_stopped_cleanly(gob)
        for path in (ring_a, ring_b):
            if os.path.exists(path):
                print("%s left behind after shutdown" % path)
                rc = 1
    finally:
        gob.kill_now()
    sys.exit(rc)


if __name__ == "__main__":
    main()
