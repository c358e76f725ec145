"""test_server.py - goblind itself: options and config file, settings seen
by CONFIG GET/SET, listeners (TCP v4/v6, Unix socket mode, SBE switched
off per listener), maxclients, idle timeout, requirepass, client limits
(query and output buffers),
CLIENT KILL and QUIT, big replies written in parts, many clients at once,
shutdown on SIGTERM/SIGINT, the log format, one read and one write per
request, and no CPU use while idle.

    /usr/bin/python3 test_server.py GOBLIND [TEST...]
"""

import os
import re
import signal
import socket
import stat
import subprocess
import sys
import threading
import time

import e2e

LOG_LINE = re.compile(r"^\d+:M \d\d \w{3} \d{4} \d\d:\d\d:\d\d\.\d{3} "
                      r"[.\-*#] \S")


def write_conf(text):
    path = os.path.join(e2e.tmpdir(), "goblin.conf")
    with open(path, "w") as f:
        f.write(text)
    return path


def config_get(c, name):
    t, v = c.call("CONFIG", "GET", name)
    assert t == "*" and len(v) == 2, (name, t, v)
    return v[1][1]


def run_fail(argv):
    """Runs goblind expecting a startup failure; returns its stderr."""
    p = subprocess.run(argv, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=60)
    err = p.stderr.decode() + p.stdout.decode()
    assert p.returncode != 0, "goblind %r started: %s" % (argv[1:], err)
    return err


def test_config_file_and_overrides(path):
    d = e2e.tmpdir()
    conf = write_conf("# a comment\n\nport 1\nmaxclients 77\n"
                      "loglevel verbose\ntimeout 30\n"
                      "unixsocketperm 750\nhz 20\nsbe-ring no\n")
    gob = e2e.goblind(path, "--loglevel", "warning", conf=conf)
    c = gob.client()
    assert config_get(c, "port") == b"%d" % gob.port   # argv wins
    assert config_get(c, "maxclients") == b"77"
    assert config_get(c, "loglevel") == b"warning"
    assert config_get(c, "timeout") == b"30"
    assert config_get(c, "unixsocketperm") == b"750"
    assert config_get(c, "hz") == b"20"                # via the engine
    assert config_get(c, "sbe-ring") == b"no"
    assert config_get(c, "bind") == b"127.0.0.1"
    assert config_get(c, "unixsocket") == gob.sock.encode()
    assert config_get(c, "logfile") == gob.logfile.encode()
    assert stat.S_IMODE(os.stat(gob.sock).st_mode) == 0o750
    del d
    e2e.check_stopped_cleanly(gob)


def test_config_errors(path):
    conf = write_conf("port 7000\n\nno-such-directive yes\n")
    err = run_fail([path, conf])
    assert "%s:3" % conf in err and "no-such-directive" in err, err
    conf = write_conf("port abc\n")
    err = run_fail([path, conf])
    assert "%s:1" % conf in err and "port" in err, err
    conf = write_conf("timeout 0\nrequirepass \"unbalanced\n")
    err = run_fail([path, conf])
    assert "%s:2" % conf in err, err
    err = run_fail([path, "--port", "0", "--no-such-option", "1"])
    assert "no-such-option" in err, err
    err = run_fail([path, "/nonexistent/goblin.conf"])
    assert "/nonexistent/goblin.conf" in err, err
    err = run_fail([path, "--port", "0"])
    assert "not listen anywhere" in err, err
    gob = e2e.goblind(path)
    err = run_fail([path, "--port", str(gob.port), "--bind", "127.0.0.1"])
    assert "Address already in use" in err, err
    e2e.check_stopped_cleanly(gob)


def test_settings(path):
    gob = e2e.goblind(path)
    c = gob.client()
    assert config_get(c, "maxclients") == b"10000"
    assert config_get(c, "timeout") == b"0"
    assert config_get(c, "loglevel") == b"notice"
    assert config_get(c, "unixsocketperm") == b"700"
    assert stat.S_IMODE(os.stat(gob.sock).st_mode) == 0o700
    limit = config_get(c, "client-output-buffer-limit").split()
    assert limit[:2] == [b"normal", b"268435456"], limit
    assert config_get(c, "socket-spin-us") == b"50"
    for name, value in (("timeout", "100"), ("maxclients", "500"),
                        ("loglevel", "debug"), ("socket-spin-us", "0"),
                        ("socket-spin-us", "200")):
        assert c.call("CONFIG", "SET", name, value) == ("+", b"OK")
        assert config_get(c, name) == value.encode()
    t, v = c.call("CONFIG", "SET", "loglevel", "loud")
    assert t == "-" and b"debug, verbose, notice, warning" in v, v
    t, v = c.call("CONFIG", "SET", "timeout", "-1")
    assert t == "-" and b"between 0 and" in v, v
    t, v = c.call("CONFIG", "SET", "port", "1234")
    assert t == "-" and b"port" in v, v
    assert config_get(c, "port") == b"%d" % gob.port
    t, v = c.call("CONFIG", "GET", "*")
    names = set(v[0::2])
    for n in ("port", "bind", "unixsocket", "maxclients", "timeout",
              "loglevel", "logfile", "unixsocketperm", "requirepass"):
        assert ("$", n.encode()) in names, n
    e2e.check_stopped_cleanly(gob)


def test_ipv4_ipv6_and_unix(path):
    port = e2e.free_port()
    gob = e2e.goblind(path, "--bind", "127.0.0.1", "::1", "--port", port)
    gob.port = port
    with socket.create_connection(("::1", port), timeout=10) as s:
        s.sendall(b"PING\r\n")
        assert s.recv(100) == b"+PONG\r\n"
    assert gob.client(tcp=True).call("PING") == ("+", b"PONG")
    assert gob.client().call("PING") == ("+", b"PONG")
    assert config_get(gob.client(), "bind") == b"127.0.0.1 ::1"
    e2e.check_stopped_cleanly(gob)


SBE_MAGIC = b"GOBLINS!"
SBE_PING = bytes.fromhex("08000000 0000 1000 0700 0100".replace(" ", ""))


def read_exact(s, n):
    data = b""
    while len(data) < n:
        part = s.recv(n - len(data))
        assert part, "connection closed after %r" % data
        data += part
    return data


def test_sbe_per_listener(path):
    gob = e2e.goblind(path, "--sbe-unixsocket", "no")
    c = gob.client()
    assert config_get(c, "sbe-tcp") == b"yes"
    assert config_get(c, "sbe-unixsocket") == b"no"
    assert config_get(c, "sbe-ring") == b"yes"
    t, v = c.call("CONFIG", "SET", "sbe-tcp", "no")
    assert t == "-" and b"sbe-tcp" in v, v
    # The Unix socket speaks RESP only: the magic is a command name. (Not
    # followed by a frame, whose NUL bytes would hide the inline line's
    # end: see lib/resp/parser.c.)
    c.send_raw(SBE_MAGIC + b" PING\r\n")
    reply = c.read()
    assert reply == ("-", b"ERR unknown command 'GOBLINS!', with args "
                          b"beginning with: 'PING' "), reply
    assert c.call("PING") == ("+", b"PONG")
    # TCP still turns SBE: a StatusReply (template 2) PONG.
    with socket.create_connection(("127.0.0.1", gob.port), timeout=10) as s:
        s.sendall(SBE_MAGIC + SBE_PING)
        n = int.from_bytes(read_exact(s, 4), "little")
        frame = read_exact(s, n)
        assert frame[2:4] == b"\x02\x00" and frame.endswith(b"PONG"), frame
    e2e.check_stopped_cleanly(gob)
    err = run_fail([path, "--port", "0", "--sbe-tcp", "maybe"])
    assert "sbe-tcp" in err and "'yes' or 'no'" in err, err


def test_maxclients(path):
    gob = e2e.goblind(path, "--maxclients", "3")
    held = [gob.client() for _ in range(3)]
    for c in held:
        assert c.call("PING") == ("+", b"PONG")
    extra = gob.client()
    assert extra.read_until_closed() == \
        b"-ERR max number of clients reached\r\n"
    held.pop().close()
    deadline = time.monotonic() + 10
    while True:     # the close is seen by the server asynchronously
        c = gob.client()
        try:
            if c.call("PING") == ("+", b"PONG"):
                break
        except (EOFError, ProtocolError, OSError):
            pass
        assert time.monotonic() < deadline, "no slot after a close"
        time.sleep(0.05)
    e2e.check_stopped_cleanly(gob)


ProtocolError = e2e.ProtocolError


def test_idle_timeout(path):
    gob = e2e.goblind(path, "--timeout", "1")
    idle = gob.client()
    busy = gob.client()
    assert idle.call("PING") == ("+", b"PONG")
    deadline = time.monotonic() + 4
    while time.monotonic() < deadline:
        assert busy.call("PING") == ("+", b"PONG")
        time.sleep(0.2)
    assert idle.read_until_closed(timeout=10) == b""
    assert busy.call("PING") == ("+", b"PONG")
    e2e.check_stopped_cleanly(gob)


def test_requirepass(path):
    redis = e2e.redis_server("--requirepass", "s3cret")
    gob = e2e.goblind(path, "--requirepass", "s3cret")
    f = e2e.Failures()
    for cmd in (["PING"], ["GET", "a"], ["AUTH", "wrong"],
                ["AUTH", "default", "wrong"], ["AUTH", "s3cret"],
                ["GET", "a"], ["AUTH", "s3cret"]):
        want = redis.client().call(*cmd)
        c = gob.client()
        f.eq(c.call(*cmd), want, "requirepass: %s" % cmd)
        c.close()
    c = gob.client()
    f.eq(c.call("AUTH", "s3cret"), ("+", b"OK"), "AUTH")
    f.eq(c.call("SET", "a", "1"), ("+", b"OK"), "SET after AUTH")
    f.eq(config_get(c, "requirepass"), b"s3cret", "CONFIG GET requirepass")
    e2e.check_stopped_cleanly(gob)
    redis.kill_now()
    f.finish()


def test_query_buffer_limit(path):
    gob = e2e.goblind(path)
    c = gob.client()
    assert c.call("CONFIG", "SET", "client-query-buffer-limit",
                  "1048576") == ("+", b"OK")
    bystander = gob.client()
    c.send_raw(b"*2\r\n$4\r\nECHO\r\n$4000000\r\n")
    try:
        for _ in range(40):
            c.send_raw(b"x" * 65536)
    except OSError:
        pass
    assert c.read_until_closed(timeout=10) in (b"",)
    assert bystander.call("PING") == ("+", b"PONG")
    log = gob.output()
    assert "max query buffer" in log, log
    e2e.check_stopped_cleanly(gob)


def peak_rss_kb(pid):
    """The most resident memory the process ever had (VmHWM)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def test_output_buffer_limit(path):
    """A client that sends but never reads is cut off at the limit instead
    of making the server hold every reply."""
    gob = e2e.goblind(path, "--client-output-buffer-limit",
                      "normal", "4194304", "0", "0")
    c = gob.client()
    c.call("SET", "big", b"v" * 100000)
    c.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    rss0 = peak_rss_kb(gob.pid())
    c.send_raw(b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n" * 3000)  # 300 MB out
    time.sleep(1.0)
    grown = peak_rss_kb(gob.pid()) - rss0
    got = len(c.read_until_closed(timeout=20))
    assert got < 50 * 1000 * 1000, "read %d bytes before the cut" % got
    print("    peak RSS grew by %d kB, client read %d bytes" % (grown, got))
    assert grown < 64 * 1024, "server grew by %d kB" % grown
    assert gob.client().call("PING") == ("+", b"PONG")
    e2e.check_stopped_cleanly(gob)


def test_quit_and_client_kill(path):
    gob = e2e.goblind(path)
    a, b = gob.client(), gob.client()
    assert a.call("QUIT") == ("+", b"OK")
    assert a.read_until_closed() == b""
    t, bid = b.call("CLIENT", "ID")
    c = gob.client()
    assert c.call("CLIENT", "KILL", "ID", str(bid)) == (":", 1)
    assert b.read_until_closed() == b""
    assert c.call("PING") == ("+", b"PONG")
    e2e.check_stopped_cleanly(gob)


def test_big_values_and_slow_reader(path):
    gob = e2e.goblind(path)
    big = bytes(range(256)) * (32 * 1024)          # 8 MB
    c = gob.client(tcp=True)
    assert c.call("SET", "big", big) == ("+", b"OK")
    c.send_raw(b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n" * 3 +
               b"*1\r\n$4\r\nPING\r\n")
    time.sleep(0.3)       # let the server fill the socket and wait
    for _ in range(3):
        assert c.read() == ("$", big)
    assert c.read() == ("+", b"PONG")
    e2e.check_stopped_cleanly(gob)


def test_many_clients(path):
    gob = e2e.goblind(path)
    errors = []

    def worker(i):
        try:
            c = gob.client(tcp=i % 2 == 0)
            cmds = [("INCR", "shared")] * 100 + [("SET", "k%d" % i, i)]
            for r in c.pipeline(cmds)[:-1]:
                assert r[0] == ":"
            for _ in range(20):
                assert c.call("GET", "k%d" % i) == ("$", b"%d" % i)
            c.close()
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(60)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert gob.client().call("GET", "shared") == ("$", b"6000")
    e2e.check_stopped_cleanly(gob)


def test_shutdown_signals_and_log(path):
    for sig, name in ((signal.SIGTERM, "SIGTERM"), (signal.SIGINT,
                                                    "SIGINT")):
        gob = e2e.goblind(path)
        c = gob.client()
        c.call("SET", "a", "1")
        gob.proc.send_signal(sig)
        rc = gob.proc.wait(30)
        gob.returncode = rc
        assert rc == 0, gob.output()
        assert not os.path.exists(gob.sock), "socket left behind"
        assert c.read_until_closed() == b""
        with open(gob.logfile) as f:
            lines = f.read().splitlines()
        for line in lines:
            assert LOG_LINE.match(line), "log line %r" % line
        text = "\n".join(lines)
        assert "Ready to accept connections" in text, text
        assert "Received %s" % name in text, text
        assert "bye bye" in text, text
        gob.kill_now()


def read_io(pid):
    with open("/proc/%d/io" % pid) as f:
        return dict((k, int(v)) for k, v in
                    (line.split(": ") for line in f))


def test_one_read_one_write_per_request(path):
    gob = e2e.goblind(path)
    try:
        read_io(gob.pid())
    except OSError:
        print("    /proc/PID/io not available; skipped")
        return
    c = gob.client()
    c.call("SET", "k", "v")
    n = 2000
    before = read_io(gob.pid())
    for _ in range(n):
        assert c.call("GET", "k") == ("$", b"v")
    after = read_io(gob.pid())
    reads = after["syscr"] - before["syscr"]
    writes = after["syscw"] - before["syscw"]
    print("    %d requests: %d reads, %d writes" % (n, reads, writes))
    assert n <= reads <= n + 20, reads
    assert n <= writes <= n + 20, writes
    e2e.check_stopped_cleanly(gob)


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])      # utime + stime


def test_idle_uses_no_cpu(path):
    gob = e2e.goblind(path)
    gob.client().call("PING")
    time.sleep(0.5)
    t0, c0 = time.monotonic(), cpu_ticks(gob.pid())
    time.sleep(3)
    used = cpu_ticks(gob.pid()) - c0
    hz = os.sysconf("SC_CLK_TCK")
    share = used / hz / (time.monotonic() - t0)
    print("    idle CPU: %d ticks in 3 s (%.2f%%)" % (used, share * 100))
    assert share < 0.05, share
    e2e.check_stopped_cleanly(gob)


ALL = [test_config_file_and_overrides, test_config_errors, test_settings,
       test_ipv4_ipv6_and_unix, test_sbe_per_listener, test_maxclients,
       test_idle_timeout,
       test_requirepass, test_query_buffer_limit, test_output_buffer_limit,
       test_quit_and_client_kill, test_big_values_and_slow_reader,
       test_many_clients, test_shutdown_signals_and_log,
       test_one_read_one_write_per_request, test_idle_uses_no_cpu]

if __name__ == "__main__":
    chosen = [t for t in ALL if t.__name__ in sys.argv[2:]] or ALL
    e2e.run_tests(chosen, sys.argv[1])
