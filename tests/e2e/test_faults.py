"""test_faults.py - goblind keeps serving everyone while clients fail in
every way we can produce on loopback, and loses or corrupts nothing.

    /usr/bin/python3 test_faults.py GOBLIND GOBLIN_LOAD RING_FAULT
        [--conns N] [--seconds S] [--rounds R] [--silent N] [--seed N]
        [--control-rings N]

One goblind (TCP, a Unix socket, 4 KiB rings: A for the faults and N
control rings B0..) and one redis-server.
While the faults run, three kinds of client must keep being served, with
every reply checked:
  * goblin_load (bench/load.c): N connections over TCP and the Unix
    socket, depth 1 and pipelined, for S seconds, each checking its own
    keys against its own model (it exits non-zero on any error);
  * a Python control client on TCP (INCR, SET, GET in a loop);
  * a ring control client on each ring B (ring_fault control), each a
    ring thread of goblind contending for the engine lock.
Meanwhile the seeded differential sequence of test_differential.py runs
on both servers in batches, and between batches the faults hit goblind
only:
  * mid-command: half a RESP frame (or inline line) then FIN, or then a
    reset (SO_LINGER 0), or then the sending process SIGKILLed;
  * mid-pipeline: thousands of SETs sent, then FIN or reset with every
    reply unread;
  * slow readers: a pipeline of big GETs never read, under a configured
    client-output-buffer-limit (the server must cut it off) and without
    one (the server must only hold it);
  * half-open: --silent connections that connect and never send, kept open
    to the end, then closed by the idle timeout;
  * trickle: a pipeline sent one byte per write;
  * rings (ring A): a client SIGKILLed with half an SQ record written, with
    a committed but unflushed record, with a flushed half RESP frame, or
    with SQ full and CQ unread; a client publishing garbage records; a
    client scribbling over SQ and its tail; 200 clients in a row, half
    leaving a request unanswered, with a second client trying to join.
    After each, a new ring client must get a working session.
The faults' own writes go to keys fault:*; the half commands name the
differential keys (s:0...), so if any of them executed, the final dump
differs. At the end: the differential keyspaces must agree (ignoring the
fault:, ctl:, ringchk: keys), each mid-pipeline's SETs must have applied
in order (a prefix of them, nothing else), goblind must be back to the
connections still open, and it must stop cleanly (no leak under ASan).

The faults repeat in rounds, at least --rounds of them and more until
goblin_load's --seconds are over. Defaults are the short version run by
`meson test` (~15 s); bench/faults.sh runs the full one.
"""

import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

import e2e
import test_differential as diff

OWN_PREFIXES = (b"fault:", b"ctl:", b"ringchk:", b"ld:")
BATCH = 400


def opt(args, name, default, conv=int):
    if name in args:
        return conv(args[args.index(name) + 1])
    return default


def resp(*args):
    return e2e.Client.encode(args)


def rst_close(s):
    """Closes s with a reset instead of a FIN: the peer vanishes."""
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                 struct.pack("ii", 1, 0))
    s.close()


class Ctx:
    def __init__(self, gob, ring_a, ring_fault, seed):
        self.gob = gob
        self.ring_a = ring_a
        self.ring_fault = ring_fault
        self.seq = 0
        self.pipelines = []        # (tag, how many SETs were sent)
        self.silent = []
        self.seed = seed

    def raw(self, tcp):
        if tcp:
            s = socket.create_connection(("127.0.0.1", self.gob.port), 10)
        else:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(10)
            s.connect(self.gob.sock)
        return s

    def tag(self):
        self.seq += 1
        return self.seq


# ------------------------------------------------------------ the faults

HALF = [resp("SET", "s:3", "HALF-COMMAND"),
        resp("HSET", "h:0", "m0", "HALF"),
        resp("ZADD", "z:0", "99", "m0"),
        b"SET s:4 HALF-INLINE\r\n"]


def halves():
    """Every proper prefix of each command above (the inline one without
    its line end): none of them is a whole command."""
    for cmd in HALF:
        for cut in range(1, len(cmd) - 1, 3):
            yield cmd[:cut]


def fault_half_command_fin(ctx):
    for i, part in enumerate(halves()):
        s = ctx.raw(tcp=i % 2 == 0)
        s.sendall(part)
        s.close()


def fault_half_command_rst(ctx):
    for i, part in enumerate(halves()):
        s = ctx.raw(tcp=i % 2 == 0)
        s.sendall(part)
        rst_close(s)


def fault_half_command_sigkill(ctx):
    """A process that sent half a command is killed with SIGKILL."""
    code = ("import socket,os,signal,sys\n"
            "s=socket.create_connection(('127.0.0.1',%d))\n"
            "s.sendall(%r)\n"
            "print('ready',flush=True)\n"
            "sys.stdin.read()\n") % (ctx.gob.port,
                                     resp("SET", "s:5", "KILLED")[:-5])
    p = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE)
    assert p.stdout.readline().strip() == b"ready"
    p.send_signal(signal.SIGKILL)
    p.wait()


def pipeline(ctx, close):
    n = 3000
    for tcp in (True, False):
        tag = "%d%s" % (ctx.tag(), "t" if tcp else "u")
        s = ctx.raw(tcp)
        s.sendall(b"".join(resp("SET", "fault:seq:%s:%d" % (tag, i), str(i))
                           for i in range(n)))
        close(s)
        ctx.pipelines.append((tag, n))


def fault_pipeline_fin(ctx):
    pipeline(ctx, lambda s: s.close())


def fault_pipeline_rst(ctx):
    pipeline(ctx, rst_close)


def slow_reader(ctx, limited):
    big = 256 * 1024
    c = ctx.gob.client()
    c.call("SET", "fault:big", b"b" * big)
    if limited:
        assert c.call("CONFIG", "SET", "client-output-buffer-limit",
                      "normal 4mb 2mb 10") == ("+", b"OK")
    count = 400 if limited else 64          # 100 MiB / 16 MiB of replies
    s = ctx.raw(tcp=True)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(resp("GET", "fault:big") * count)
    # Others are served while the replies pile up.
    assert c.call("PING") == ("+", b"PONG")
    if limited:
        got = e2e.Client.__new__(e2e.Client)
        got.s, got.buf, got.pos = s, bytearray(), 0
        n = len(got.read_until_closed(timeout=20))
        assert n < count * big // 2, "slow reader read %d bytes" % n
        assert c.call("CONFIG", "SET", "client-output-buffer-limit",
                      "normal 0 0 0") == ("+", b"OK")
    else:
        time.sleep(0.2)
        assert c.call("PING") == ("+", b"PONG")
    if limited:
        s.close()
    else:
        rst_close(s)        # with megabytes of replies still queued
    c.close()


def fault_slow_reader_limited(ctx):
    slow_reader(ctx, True)


def fault_slow_reader_unlimited(ctx):
    slow_reader(ctx, False)


def fault_silent(ctx):
    for i in range(ctx.silent_per_round):
        ctx.silent.append(ctx.raw(tcp=i % 2 == 0))


def ring(ctx, mode, *extra):
    return [ctx.ring_fault, mode, ctx.ring_a] + [str(x) for x in extra]


def ring_check(ctx):
    r = subprocess.run(ring(ctx, "check", "t%d" % ctx.tag()), timeout=60,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert r.returncode == 0, "ring A unusable after the fault:\n%s" % (
        r.stdout.decode(errors="replace"))


def ring_killed(ctx, mode):
    p = subprocess.Popen(ring(ctx, mode), stdout=subprocess.PIPE)
    line = p.stdout.readline().strip()
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert line == b"ready", "ring_fault %s: %r" % (mode, line)
    ring_check(ctx)


def fault_ring_partial_record(ctx):
    ring_killed(ctx, "partial")


def fault_ring_unflushed_record(ctx):
    ring_killed(ctx, "unflushed")


def fault_ring_half_frame(ctx):
    ring_killed(ctx, "halfframe")


def fault_ring_stuck(ctx):
    ring_killed(ctx, "stuck")


def ring_hostile(ctx, mode):
    r = subprocess.run(ring(ctx, mode, ctx.seed + ctx.tag()), timeout=60,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert r.returncode == 0, "ring_fault %s:\n%s" % (
        mode, r.stdout.decode(errors="replace"))
    ring_check(ctx)


def fault_ring_garbage(ctx):
    ring_hostile(ctx, "garbage")


def fault_ring_scribble(ctx):
    ring_hostile(ctx, "scribble")


def fault_ring_flap(ctx):
    """200 ring clients in a row, half of them leaving a PING unread, and
    a second client trying to join each other one."""
    r = subprocess.run(ring(ctx, "flap", 200), timeout=120,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert r.returncode == 0, "ring_fault flap:\n%s" % (
        r.stdout.decode(errors="replace"))


def fault_trickle(ctx):
    """A pipeline sent one byte per write: every split of every frame."""
    tag = ctx.tag()
    cmds = [("SET", "fault:trickle:%d" % tag, "a\r\nb"),
            ("APPEND", "fault:trickle:%d" % tag, "\x00c"),
            ("GET", "fault:trickle:%d" % tag)]
    data = b"".join(resp(*c) for c in cmds) + b"PING\r\n"
    for tcp in (True, False):
        c = ctx.gob.client(tcp=tcp)
        if tcp:
            c.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for i in range(len(data)):
            c.send_raw(data[i:i + 1])
        got = [c.read() for _ in range(4)]
        assert got == [("+", b"OK"), (":", 6), ("$", b"a\r\nb\x00c"),
                       ("+", b"PONG")], got
        c.close()


FAULTS = [fault_half_command_fin, fault_ring_partial_record,
          fault_pipeline_fin, fault_silent, fault_half_command_rst,
          fault_ring_unflushed_record, fault_slow_reader_limited,
          fault_pipeline_rst, fault_ring_half_frame,
          fault_half_command_sigkill, fault_ring_garbage,
          fault_slow_reader_unlimited, fault_ring_stuck,
          fault_ring_scribble, fault_trickle, fault_ring_flap]


# ------------------------------------------------------ the differential

class Gen(diff.Gen):
    """The differential generator without the commands that see the whole
    keyspace (KEYS *, DBSIZE, SCAN *): goblind also holds the load's and
    the faults' keys, which redis-server never sees. No SCAN at all: while
    other clients add keys the table grows, and a SCAN may then return a
    key twice (allowed in Redis too)."""

    def c_keys(self):
        return [b"KEYS", self.pick([b"s:*", b"h:?", b"z:[0-2]", b"x:1*",
                                    b"nomatch*"])]

    def c_dbsize(self):
        return [b"KEYS", b"?:[0-3]"]

    def c_scan(self):
        return [b"KEYS", self.pick([b"z:*", b"?:1"])]


# ---------------------------------------------------------- the control

class Control(threading.Thread):
    """One TCP connection doing INCR, SET, GET until stopped; every reply
    checked, every request must complete (10 s socket timeout)."""

    def __init__(self, gob):
        super().__init__(daemon=True)
        self.c = gob.client(tcp=True, timeout=10)
        self.stop = threading.Event()
        self.rounds = 0
        self.error = None
        self.slowest = 0.0

    def run(self):
        try:
            self.c.call("DEL", "ctl:py:n")
            while not self.stop.is_set():
                t0 = time.monotonic()
                n = self.rounds + 1
                got = self.c.pipeline([["INCR", "ctl:py:n"],
                                       ["SET", "ctl:py:v", str(n)],
                                       ["GET", "ctl:py:v"]])
                want = [(":", n), ("+", b"OK"), ("$", str(n).encode())]
                if got != want:
                    raise AssertionError("control got %r, want %r" % (
                        got, want))
                self.slowest = max(self.slowest, time.monotonic() - t0)
                self.rounds = n
                time.sleep(0.001)
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            self.error = e


# ------------------------------------------------------------ the checks

def own_dump(client):
    return {k: v for k, v in diff.dump(client).items()
            if not k.startswith(OWN_PREFIXES)}


def check_pipelines(c, pipelines):
    """Each mid-pipeline's SETs applied in order: keys 0..m-1, nothing
    after a gap, each with its own value."""
    applied = []
    for tag, n in pipelines:
        keys = e2e.plain(c.call("KEYS", "fault:seq:%s:*" % tag))
        idx = sorted(int(k.rsplit(b":", 1)[1]) for k in keys)
        assert idx == list(range(len(idx))), \
            "pipeline %s applied out of order: %r" % (tag, idx[:20])
        for i in (0, len(idx) // 2, len(idx) - 1) if idx else ():
            got = c.call("GET", "fault:seq:%s:%d" % (tag, i))
            assert got == ("$", b"%d" % i), (tag, i, got)
        applied.append(len(idx))
    print("    %d closed pipelines of %d SETs: %d to %d applied, in order"
          % (len(pipelines), pipelines[0][1], min(applied), max(applied)))


def socket_clients(c):
    """Socket connections in CLIENT LIST (a ring's session stays until
    its next client, so rings are left out)."""
    text = e2e.plain(c.call("CLIENT", "LIST")).decode(errors="replace")
    return sum(1 for line in text.splitlines() if ".ring " not in line)


def wait_clients(c, want):
    """goblind's count reaches want (closes are seen asynchronously)."""
    for _ in range(200):
        got = socket_clients(c)
        if got == want:
            return
        time.sleep(0.05)
    raise AssertionError("%d socket clients, want %d:\n%s" % (
        got, want, e2e.plain(c.call("CLIENT", "LIST")).decode(
            errors="replace")))


def idle_timeout_closes_silent(ctx, c):
    """The half-open connections that never sent anything are closed by
    the idle timeout (c keeps sending, so it stays)."""
    assert c.call("CONFIG", "SET", "timeout", "1") == ("+", b"OK")
    deadline = time.monotonic() + 15
    for s in ctx.silent:
        s.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            data = s.recv(1)
        except ConnectionResetError:
            data = b""
        except socket.timeout:
            raise AssertionError("a silent connection outlived the timeout")
        assert data == b"", data
        assert c.call("PING") == ("+", b"PONG")
    assert c.call("CONFIG", "SET", "timeout", "0") == ("+", b"OK")
    for s in ctx.silent:
        s.close()
    print("    %d silent connections closed by the idle timeout"
          % len(ctx.silent))


# ----------------------------------------------------------------- main

def main():
    args = sys.argv[1:]
    goblind_path, load_path, ring_fault = args[:3]
    conns = opt(args, "--conns", 200)
    seconds = opt(args, "--seconds", 5.0, float)
    rounds = opt(args, "--rounds", 1)      # at least; see below
    silent = opt(args, "--silent", 20)
    nrings = opt(args, "--control-rings", 2)
    seed = opt(args, "--seed", diff.SEED)
    d = e2e.tmpdir()
    ring_a = os.path.join(d, "a.ring")
    ring_bs = [os.path.join(d, "b%d.ring" % i) for i in range(nrings)]
    ring_args = ["--ring", ring_a, "4k"]
    for path in ring_bs:
        ring_args += ["--ring", path, "4k"]
    gob = e2e.goblind(goblind_path, *ring_args, "--maxclients", conns + 100 * silent +
                      1000)
    ref = e2e.redis_server()
    ctx = Ctx(gob, ring_a, ring_fault, seed)
    ctx.silent_per_round = silent
    load, ringctl = None, []
    try:
        load = subprocess.Popen(
            [load_path, "--tcp", "127.0.0.1:%d" % gob.port, "--unix",
             gob.sock, "--conns", str(conns), "--seconds", str(seconds),
             "--prefix", "ld", "--server-pid", str(gob.pid())],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        ringctl = [subprocess.Popen(
            [ring_fault, "control", path, str(seconds)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            for path in ring_bs]
        control = Control(gob)
        control.start()
        pair = diff.Pair(ref.client(), gob.client())
        gen = Gen(seed, int(time.time() * 1000))
        t0 = time.monotonic()
        done = 0
        # At least --rounds rounds, and more while goblin_load still runs,
        # so the faults overlap its whole run.
        while done < rounds or load.poll() is None:
            for fault in FAULTS:
                err = diff.run_sequence(pair, gen, BATCH)
                assert err is None, err
                f0 = time.monotonic()
                fault(ctx)
                took = time.monotonic() - f0
                if done == 0 or took > 1.0:
                    print("    %-32s ok (%.2f s)%s" % (
                        fault.__name__, took,
                        " round %d" % (done + 1) if done else ""),
                        flush=True)
                assert control.error is None, control.error
            done += 1
        err = diff.run_sequence(pair, gen, BATCH)
        assert err is None, err
        print("%d rounds of %d faults in %.1f s; %d differential commands "
              "agree" % (done, len(FAULTS), time.monotonic() - t0,
                         pair.sent), flush=True)
        out, _ = load.communicate(timeout=seconds + 120)
        print(out.decode(errors="replace"), end="")
        assert load.returncode == 0, "goblin_load failed"
        for p in ringctl:
            out, _ = p.communicate(timeout=seconds + 120)
            print(out.decode(errors="replace"), end="")
            assert p.returncode == 0, "ring control client failed"
        control.stop.set()
        control.join(30)
        assert control.error is None, control.error
        print("python control: %d rounds, slowest %.3f s" % (
            control.rounds, control.slowest))
        a, b = own_dump(pair.ref), own_dump(pair.test)
        assert a == b, "keyspaces differ:\n%s" % "\n".join(
            "  %r: redis %s, goblind %s" % (k, diff.show(a.get(k)),
                                           diff.show(b.get(k)))
            for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k))
        print("final keyspaces agree (%d keys)" % len(a))
        c = gob.client()
        check_pipelines(c, ctx.pipelines)
        # Every fault's connection is gone; left open: c and the silent.
        control.c.close()
        pair.test.close()
        wait_clients(c, 1 + len(ctx.silent))
        idle_timeout_closes_silent(ctx, c)
        wait_clients(c, 1)
        assert "broke the ring protocol" in gob.output()
        e2e.check_stopped_cleanly(gob)
    except BaseException:
        print("goblind's log (end):\n" + gob.output()[-6000:])
        raise
    finally:
        for p in [load] + ringctl:
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
        gob.kill_now()
        ref.kill_now()
    print("fault test passed")


if __name__ == "__main__":
    main()
