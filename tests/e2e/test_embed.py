"""test_embed.py - examples/embed_serve.c, the embedding example, end to
end: it serves the data it put in the store to redis-cli over its Unix
socket and to goblin-cli over its ring, both see each other's writes,
CLIENT KILL reaches a socket client, and SIGTERM stops it cleanly.

    /usr/bin/python3 test_embed.py EMBED_SERVE GOBLIN_CLI
"""

import os
import signal
import subprocess
import sys
import time

import e2e


def run(argv):
    p = subprocess.run(argv, capture_output=True, timeout=30)
    return p.stdout.decode().strip()


def main():
    example, cli = sys.argv[1], sys.argv[2]
    d = e2e.tmpdir()
    sock, ring = os.path.join(d, "app.sock"), os.path.join(d, "app.ring")
    proc = subprocess.Popen([example, sock, ring], stdout=subprocess.PIPE,
                            preexec_fn=e2e._die_with_parent)
    f = e2e.Failures()
    try:
        f.eq(proc.stdout.readline().decode().strip(),
             "serving %s and %s" % (sock, ring), "start line")
        redis = [e2e.REDIS_CLI, "-s", sock]
        f.eq(run(redis + ["GET", "key:7"]), "v7", "redis-cli GET")
        f.eq(run(redis + ["DBSIZE"]), "100", "redis-cli DBSIZE")
        f.eq(run([cli, "--ring", ring, "get", "key:42"]), "v42",
             "goblin-cli --ring GET")
        f.eq(run([cli, "--ring", ring, "set", "from", "ring"]), "OK",
             "goblin-cli --ring SET")
        f.eq(run(redis + ["GET", "from"]), "ring", "redis-cli sees the ring")
        f.eq(run(redis + ["SET", "from", "socket"]), "OK", "redis-cli SET")
        f.eq(run([cli, "--ring", ring, "get", "from"]), "socket",
             "goblin-cli sees the socket")
        c = e2e.Client(sock)
        cid = e2e.plain(c.call("CLIENT", "ID"))
        f.eq(run(redis + ["CLIENT", "KILL", "ID", str(cid)]), "1",
             "CLIENT KILL")
        f.check(c.read_until_closed() is not None, "killed client closed")
        f.check("id=%d " % cid not in run(redis + ["CLIENT", "LIST"]),
                "killed client gone from CLIENT LIST")
        proc.send_signal(signal.SIGTERM)
        f.eq(proc.wait(timeout=10), 0, "exit status after SIGTERM")
        time.sleep(0.1)
        f.check(not os.path.exists(sock), "socket removed")
        f.check(not os.path.exists(ring), "ring file removed")
    finally:
        if proc.poll() is None:
            proc.kill()
    f.finish()
    print("ok")


if __name__ == "__main__":
    main()
