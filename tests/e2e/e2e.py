"""e2e.py - what the end-to-end tests share: starting goblind and
redis-server on free ports and private Unix sockets, stopping them on every
exit path, and a tiny RESP2/RESP3 client that returns replies exactly as
the server sent them (errors included), so two servers can be compared.

Every test runs `/usr/bin/python3 test_x.py GOBLIND` and may run in
parallel with others: each server gets a fresh temporary directory, its own
Unix socket in it and a TCP port the kernel just reported free. Children
get PR_SET_PDEATHSIG, so even a test killed by meson's timeout leaves no
server behind; normal exits and exceptions stop them in `finally`/atexit.
"""

import atexit
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"

_children = []
_tmpdirs = []


def _die_with_parent():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _cleanup():
    for proc in list(_children):
        proc.kill_now()
    for d in _tmpdirs:
        shutil.rmtree(d, ignore_errors=True)


atexit.register(_cleanup)


def _on_signal(signum, frame):
    raise SystemExit(128 + signum)


signal.signal(signal.SIGTERM, _on_signal)


def tmpdir():
    """A private directory removed at exit."""
    d = tempfile.mkdtemp(prefix="goblin-e2e-")
    _tmpdirs.append(d)
    return d


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A server child process reachable at .sock (Unix) and .port (TCP)."""

    def __init__(self, argv, sock, port, logfile, name):
        self.argv = argv
        self.sock = sock
        self.port = port
        self.logfile = logfile
        self.name = name
        self.proc = None
        self.returncode = None

    def start(self, timeout=30.0):
        out = open(self.logfile + ".out", "wb")
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL,
                                     stdout=out, stderr=subprocess.STDOUT,
                                     preexec_fn=_die_with_parent)
        out.close()
        _children.append(self)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited with %d at start:\n%s" % (
                    self.name, self.proc.returncode, self.output()))
            try:
                c = self.client()
                reply = c.call("PING")
                if reply == ("+", b"PONG") or reply[1].startswith(b"NOAUTH"):
                    c.close()
                    return self
                c.close()
            except OSError:
                pass
            time.sleep(0.02)
        raise RuntimeError("%s did not answer PING within %.0f s:\n%s" % (
            self.name, timeout, self.output()))

    def output(self):
        text = b""
        for path in (self.logfile, self.logfile + ".out"):
            try:
                with open(path, "rb") as f:
                    text += f.read()
            except OSError:
                pass
        return text.decode("utf-8", "replace")

    def client(self, tcp=False, timeout=20.0):
        if tcp or self.sock is None:
            return Client(("127.0.0.1", self.port), timeout)
        return Client(self.sock, timeout)

    def pid(self):
        return self.proc.pid

    def stop(self, timeout=20.0):
        """SIGTERM, then wait; returns the exit code (SIGKILL if stuck)."""
        if self.proc is None or self.returncode is not None:
            return self.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.returncode = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.returncode = self.proc.wait()
        if self in _children:
            _children.remove(self)
        return self.returncode

    def kill_now(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self in _children:
            _children.remove(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill_now()


def goblind(path, *extra, tcp=True, unix=True, start=True, conf=None):
    """goblind on a private Unix socket and a free loopback port; conf, a
    config file, goes first as goblind wants it."""
    d = tmpdir()
    sock = os.path.join(d, "goblind.sock") if unix else None
    port = free_port() if tcp else 0
    logfile = os.path.join(d, "goblind.log")
    argv = [path] + ([conf] if conf else [])
    argv += ["--port", str(port), "--bind", "127.0.0.1", "--logfile", logfile]
    if sock:
        argv += ["--unixsocket", sock]
    argv += [str(a) for a in extra]
    srv = Server(argv, sock, port, logfile, "goblind")
    return srv.start() if start else srv


def redis_server(*extra):
    """Debian's redis-server on a private Unix socket only."""
    d = tmpdir()
    sock = os.path.join(d, "redis.sock")
    logfile = os.path.join(d, "redis.log")
    argv = [REDIS_SERVER, "--port", "0", "--unixsocket", sock,
            "--save", "", "--appendonly", "no", "--daemonize", "no",
            "--dir", d, "--logfile", logfile]
    argv += [str(a) for a in extra]
    return Server(argv, sock, 0, logfile, "redis-server").start()


def check_stopped_cleanly(srv):
    """Stops srv with SIGTERM and fails unless it exited 0 (under ASan a
    leak makes the exit code non-zero)."""
    rc = srv.stop()
    if rc != 0:
        raise AssertionError("%s exited with %r:\n%s" % (
            srv.name, rc, srv.output()))


# ---------------------------------------------------------------- RESP

class ProtocolError(Exception):
    pass


class Client:
    """A blocking RESP client. Replies are tuples (type, value):
    ('+', b'OK'), ('-', b'ERR ...'), (':', 3), ('$', b'..' or None),
    ('*', [replies] or None) and the RESP3 types ('_', None),
    (',', b'1.5'), ('#', True), ('=', b'txt:..'), ('(', 12345),
    ('%', [(k, v), ...]), ('~', [..]), ('>', [..]), ('|', [(k, v)])."""

    def __init__(self, addr, timeout=20.0):
        family = socket.AF_UNIX if isinstance(addr, str) else socket.AF_INET
        self.s = socket.socket(family, socket.SOCK_STREAM)
        self.s.settimeout(timeout)
        self.s.connect(addr)
        self.buf = bytearray()
        self.scratch = bytearray(1 << 16)
        self.scratch_view = memoryview(self.scratch)
        self.pos = 0

    def close(self):
        self.s.close()

    @staticmethod
    def encode(args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            if isinstance(a, str):
                a = a.encode()
            elif isinstance(a, (int, float)):
                a = repr(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        return b"".join(out)

    def send_raw(self, data):
        self.s.sendall(data)

    def call(self, *args):
        self.s.sendall(self.encode(args))
        return self.read()

    def pipeline(self, commands):
        """Sends all commands in one write, then reads one reply each."""
        self.s.sendall(b"".join(self.encode(c) for c in commands))
        return [self.read() for _ in commands]

    def _fill(self):
        if self.pos > 65536:
            del self.buf[:self.pos]
            self.pos = 0
        # Into one buffer kept for the connection: recv(1 << 20) would make
        # a fresh 1 MiB object per call, which malloc maps and unmaps (and,
        # under meson's MALLOC_PERTURB_, fills) every time.
        n = self.s.recv_into(self.scratch)
        if n == 0:
            raise EOFError("connection closed by server")
        self.buf += self.scratch_view[:n]

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n", self.pos)
            if i >= 0:
                line = bytes(self.buf[self.pos:i])
                self.pos = i + 2
                return line
            self._fill()

    def _bytes(self, n):
        while len(self.buf) - self.pos < n + 2:
            self._fill()
        data = bytes(self.buf[self.pos:self.pos + n])
        if self.buf[self.pos + n:self.pos + n + 2] != b"\r\n":
            raise ProtocolError("bulk not followed by CRLF")
        self.pos += n + 2
        return data

    def read(self):
        line = self._line()
        t, rest = chr(line[0]), line[1:]
        if t in "+-":
            return (t, rest)
        if t in ":(":
            return (t, int(rest))
        if t == ",":
            return (t, rest)
        if t == "#":
            return (t, rest == b"t")
        if t == "_":
            return (t, None)
        if t in "$=!":
            n = int(rest)
            return (t, None if n < 0 else self._bytes(n))
        if t in "*~>":
            n = int(rest)
            return (t, None if n < 0 else [self.read() for _ in range(n)])
        if t in "%|":
            n = int(rest)
            return (t, [(self.read(), self.read()) for _ in range(n)])
        raise ProtocolError("unexpected reply line %r" % line)

    def read_until_closed(self, timeout=5.0):
        """Everything the server sends until it closes the connection;
        raises if it keeps it open past timeout."""
        self.s.settimeout(timeout)
        data = bytes(self.buf[self.pos:])
        self.buf, self.pos = bytearray(), 0
        while True:
            try:
                chunk = self.s.recv(65536)
            except ConnectionResetError:
                return data
            except socket.timeout:
                raise AssertionError("connection still open; got %r" % data)
            if not chunk:
                return data
            data += chunk


def has_lua(client):
    """Whether the server behind client runs scripts (a goblind built
    without Lua answers EVAL "ERR scripting is not available ...")."""
    probe = client.call("EVAL", "return 1", "0")
    return not (probe[0] == "-" and b"not available" in probe[1])


def plain(reply):
    """A reply as plain Python values, for readable assertions."""
    t, v = reply
    if t in "*~>" and v is not None:
        return [plain(x) for x in v]
    if t in "%|":
        return [(plain(a), plain(b)) for a, b in v]
    if t == "-":
        raise AssertionError("error reply: %r" % v)
    return v


class Failures:
    """Collects check failures so one run reports them all."""

    def __init__(self):
        self.items = []

    def check(self, cond, msg):
        if not cond:
            self.items.append(msg)
            print("FAIL:", msg, flush=True)

    def eq(self, got, want, msg):
        self.check(got == want, "%s: got %r, want %r" % (msg, got, want))

    def finish(self):
        if self.items:
            raise AssertionError("%d check(s) failed, first: %s" % (
                len(self.items), self.items[0]))


def run_tests(tests, *args):
    """Runs each test function with args, printing its name; exits 1 if
    any raised. Test functions raise AssertionError to fail."""
    failed = []
    for fn in tests:
        print("--- %s" % fn.__name__, flush=True)
        t0 = time.monotonic()
        try:
            fn(*args)
            print("    ok (%.2f s)" % (time.monotonic() - t0), flush=True)
        except Exception as e:  # noqa: BLE001 - report every failure
            import traceback
            traceback.print_exc()
            failed.append(fn.__name__)
            print("    FAILED: %s" % e, flush=True)
    _cleanup()
    if failed:
        print("failed: %s" % ", ".join(failed))
        sys.exit(1)
    print("all %d passed" % len(tests))
