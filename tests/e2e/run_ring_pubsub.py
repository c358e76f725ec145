"""run_ring_pubsub.py - Pub/Sub over goblind's rings, end to end.

    /usr/bin/python3 run_ring_pubsub.py GOBLIND TEST_RING_PUBSUB

Starts goblind with two 4 KiB rings and a Unix socket, runs
TEST_RING_PUBSUB (test_ring_pubsub.c) with their paths, then stops
goblind and checks that it exited cleanly.
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
                      "--ring", ring_b, "4k")
    try:
        rc = subprocess.run([program, ring_a, ring_b, gob.sock],
                            timeout=110).returncode
        e2e.check_stopped_cleanly(gob)
    finally:
        gob.kill_now()
    sys.exit(rc)


if __name__ == "__main__":
    main()
