"""run_load.py - goblin_load (bench/load.c) against a fresh goblind.

    /usr/bin/python3 run_load.py GOBLIND GOBLIN_LOAD [LOAD OPTIONS...]

Starts goblind on a free port and a private Unix socket, runs goblin_load
over both with the server's pid (for RSS), --expect-empty and, unless
given, 200 connections, 3 s and 2 runs; then stops goblind with SIGTERM.
Fails if goblin_load reports any error or RSS growth, or goblind does not
exit cleanly (under ASan, a leak). A goblind built with AddressSanitizer
gets --no-rss-check: its quarantine holds freed memory on purpose, and
its leak check at exit is the stricter test.
"""

import subprocess
import sys

import e2e


def main():
    goblind_path, load_path, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    gob = e2e.goblind(goblind_path)
    argv = [load_path, "--tcp", "127.0.0.1:%d" % gob.port, "--unix",
            gob.sock, "--server-pid", str(gob.pid()), "--expect-empty"]
    with open(goblind_path, "rb") as f:
        if b"__asan_init" in f.read():
            argv.append("--no-rss-check")
    for name, value in (("--conns", "200"), ("--seconds", "3"),
                        ("--runs", "2")):
        if name not in extra:
            argv += [name, value]
    try:
        rc = subprocess.run(argv + extra, timeout=3600).returncode
        e2e.check_stopped_cleanly(gob)
    finally:
        gob.kill_now()
    sys.exit(rc)


if __name__ == "__main__":
    main()
