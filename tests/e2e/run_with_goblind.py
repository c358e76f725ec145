"""run_with_goblind.py - runs a test program against a fresh goblind.

    /usr/bin/python3 run_with_goblind.py GOBLIND PROGRAM [ARGS...]

Starts goblind on a private Unix socket and a free TCP port, runs PROGRAM
with the socket path and the port appended to ARGS, then stops goblind
with SIGTERM. Fails if the program fails or goblind does not exit cleanly.
"""

import subprocess
import sys

import e2e


def main():
    goblind_path, program = sys.argv[1], sys.argv[2:]
    gob = e2e.goblind(goblind_path)
    try:
        rc = subprocess.run(program + [gob.sock, str(gob.port)],
                            timeout=110).returncode
        e2e.check_stopped_cleanly(gob)
    finally:
        gob.kill_now()
    sys.exit(rc)


if __name__ == "__main__":
    main()
