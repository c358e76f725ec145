"""test_fd_limit.py - goblind when connections outnumber its descriptors.

    /usr/bin/python3 test_fd_limit.py GOBLIND

* Started under a low open-files limit, goblind brings maxclients down to
  what fits (limit - 32) as Redis does, so the extra clients get "max
  number of clients reached" instead of hanging; CONFIG SET maxclients
  above that fails with Redis's error and keeps the old value.
* Out of descriptors anyway (the limit lowered under a running goblind),
  accept fails with EMFILE: goblind stops watching its listeners until the
  next cron tick instead of spinning on them (the log says so about ten
  times a second, not millions), and once descriptors are free again the
  waiting clients are served.
"""

import select
import socket
import subprocess
import time

import e2e

PRLIMIT = "prlimit"


def start_limited(path, nofile):
    gob = e2e.goblind(path, start=False)
    gob.argv = [PRLIMIT, "--nofile=%d:%d" % (nofile, nofile)] + gob.argv
    return gob.start()


def test_maxclients_fits_the_limit(path):
    gob = start_limited(path, 64)
    c = gob.client()
    assert c.call("CONFIG", "GET", "maxclients") == \
        ("*", [("$", b"maxclients"), ("$", b"32")])
    assert "maxclients has been reduced to 32" in gob.output()
    got = c.call("CONFIG", "SET", "maxclients", "100")
    assert got == ("-", b"ERR CONFIG SET failed (possibly related to "
                   b"argument 'maxclients') - The operating system is not "
                   b"able to handle the specified number of clients, try "
                   b"with 32"), got
    assert c.call("CONFIG", "GET", "maxclients")[1][1] == ("$", b"32")
    held = [gob.client() for _ in range(31)]
    for h in held:
        assert h.call("PING") == ("+", b"PONG")
    extra = gob.client()
    assert extra.read_until_closed() == \
        b"-ERR max number of clients reached\r\n"
    for h in held:
        h.close()
    e2e.check_stopped_cleanly(gob)


def open_fds(pid):
    return len(subprocess.run(["ls", "/proc/%d/fd" % pid],
                              stdout=subprocess.PIPE).stdout.split())


def set_nofile(pid, n):
    """The soft limit only: raising a hard limit again needs privilege."""
    subprocess.run([PRLIMIT, "--pid", str(pid), "--nofile=%d:" % n],
                   check=True)


def test_out_of_descriptors_pauses_accept(path):
    gob = e2e.goblind(path)
    c = gob.client()
    pid = gob.pid()
    set_nofile(pid, open_fds(pid) + 5)
    socks = []
    for _ in range(20):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(gob.sock)        # the kernel's backlog takes it
        s.sendall(b"PING\r\n")
        socks.append(s)
    t0 = time.monotonic()
    time.sleep(1.0)
    # Under a busy machine the accepted ones may take longer to answer.
    for _ in range(100):
        answered = [s for s in socks if select.select([s], [], [], 0)[0]]
        if answered and "Too many open files" in gob.output():
            break
        time.sleep(0.1)
    assert 0 < len(answered) < len(socks), len(answered)
    lines = gob.output().count("Too many open files")
    print("    %d of %d answered; %d log lines about it in %.1f s"
          % (len(answered), len(socks), lines, time.monotonic() - t0))
    # About 10 a second with the pause; without it, 100,000 a second.
    assert 0 < lines < 1000, lines
    assert c.call("PING") == ("+", b"PONG")   # the others are served
    set_nofile(pid, 1024)
    for s in socks:
        s.settimeout(10)
        assert s.recv(100) == b"+PONG\r\n"
        s.close()
    e2e.check_stopped_cleanly(gob)


if __name__ == "__main__":
    import sys
    e2e.run_tests([test_maxclients_fits_the_limit,
                   test_out_of_descriptors_pauses_accept], sys.argv[1])
