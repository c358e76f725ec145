#!/usr/bin/env python3
"""repl_bench.py - replication from goblind against redis-server: the time
of a full sync of a sorted set of MEMBERS members plus a hash of FIELDS
fields (goblind -> redis-server, redis-server -> redis-server, and
goblind -> goblind when goblind can be a replica), and the replication
lag under a steady write load (p50/p99 of the master's offset minus the
offset the replica acknowledged, and minus the offset the replica has
applied, sampled every 10 ms). Prints Markdown tables.

Every server writes nothing to disk (no snapshots, no AOF); the masters
start a full sync at once (repl-diskless-sync-delay 0, redis-server
included) and send it disk-less. The sync time runs from REPLICAOF on
the replica to its link being up with the whole dataset loaded.

    bench/repl_bench.py GOBLIND [--members N] [--fields N] [--reps N]
                        [--lag-seconds S] [--lag-rate OPS]

--members and --fields default to 1,000,000 each; a smoke run takes
--members 20000 --fields 20000 --lag-seconds 2.
"""

import argparse
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Conn:
    """A minimal blocking RESP client (replies parsed enough for INFO)."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), 10)
        self.buf = b""

    @staticmethod
    def encode(args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        return b"".join(out)

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.s.recv(1 << 16)
            if not chunk:
                raise EOFError
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t in (b"+", b":"):
            return rest
        if t == b"-":
            raise RuntimeError(rest.decode())
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.s.recv(1 << 16)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        if t == b"*":
            return [self.read() for _ in range(int(rest))]
        raise RuntimeError("bad reply %r" % line)

    def call(self, *args):
        self.s.sendall(self.encode(args))
        return self.read()

    def pipeline(self, cmds):
        self.s.sendall(b"".join(self.encode(c) for c in cmds))
        return [self.read() for _ in cmds]

    def info(self, section="replication"):
        text = self.call("INFO", section).decode()
        return dict(line.split(":", 1) for line in text.split("\r\n")
                    if ":" in line)


def start(kind, goblind, port, d, *extra):
    if kind == "goblind":
        argv = [goblind, "--port", str(port), "--bind", "127.0.0.1",
                "--dir", d, "--save", "", "--appendonly", "no",
                "--repl-diskless-sync-delay", "0"]
    else:
        argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                "--dir", d, "--save", "", "--appendonly", "no",
                "--repl-diskless-sync", "yes",
                "--repl-diskless-sync-delay", "0"]
    p = subprocess.Popen(argv + list(extra), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            c = Conn(port)
            if c.call("PING") == b"PONG":
                return p, c
        except (OSError, EOFError, RuntimeError):
            pass
        time.sleep(0.05)
    p.kill()
    raise RuntimeError("%s did not start" % kind)


def fill(c, members, fields):
    """The sorted set and the hash, 1000 entries per command."""
    step = 1000
    for base in range(0, members, step):
        args = ["ZADD", "bench:z"]
        for i in range(base, min(base + step, members)):
            args += [str(i * 0.5), "member:%d" % i]
        c.s.sendall(Conn.encode(args))
    for base in range(0, fields, step):
        args = ["HSET", "bench:h"]
        for i in range(base, min(base + step, fields)):
            args += ["field:%d" % i, "value:%d" % i]
        c.s.sendall(Conn.encode(args))
    for _ in range((members + step - 1) // step +
                   (fields + step - 1) // step):
        c.read()


def sync_seconds(master_kind, replica_kind, args, base):
    mport, rport = free_port(), free_port()
    md, rd = tempfile.mkdtemp(dir=base), tempfile.mkdtemp(dir=base)
    procs = []
    try:
        mp, mc = start(master_kind, args.goblind, mport, md)
        procs.append(mp)
        fill(mc, args.members, args.fields)
        rp, rc = start(replica_kind, args.goblind, rport, rd)
        procs.append(rp)
        t0 = time.monotonic()
        try:
            rc.call("REPLICAOF", "127.0.0.1", mport)
        except RuntimeError as e:
            return None, str(e)
        while True:
            ri = rc.info()
            if (ri.get("master_link_status") == "up" and
                    ri.get("master_sync_in_progress", "0") == "0"):
                break
            if time.monotonic() - t0 > 600:
                return None, "timed out"
            time.sleep(0.01)
        took = time.monotonic() - t0
        want = int(args.members), int(args.fields)
        got = int(rc.call("ZCARD", "bench:z")), int(rc.call("HLEN",
                                                            "bench:h"))
        if got != want:
            return None, "replica holds %r, want %r" % (got, want)
        return took, ""
    finally:
        for p in procs:
            p.kill()
            p.wait()
        shutil.rmtree(md, ignore_errors=True)
        shutil.rmtree(rd, ignore_errors=True)


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))] if xs else 0


def lag(master_kind, args, base):
    """p50/p99 of master offset - acked offset, and - applied offset."""
    mport, rport = free_port(), free_port()
    md, rd = tempfile.mkdtemp(dir=base), tempfile.mkdtemp(dir=base)
    procs, stop = [], threading.Event()
    try:
        mp, mc = start(master_kind, args.goblind, mport, md)
        procs.append(mp)
        rp, rc = start("redis", args.goblind, rport, rd, "--replicaof",
                       "127.0.0.1", str(mport))
        procs.append(rp)
        deadline = time.monotonic() + 60
        while rc.info().get("master_link_status") != "up":
            if time.monotonic() > deadline:
                raise RuntimeError("replica of %s not up" % master_kind)
            time.sleep(0.05)

        def writer():
            w = Conn(mport)
            batch = max(1, args.lag_rate // 100)
            i = 0
            while not stop.is_set():
                t = time.monotonic()
                w.pipeline([["SET", "lag:%d" % (i + j), "x" * 32]
                            for j in range(batch)])
                i += batch
                time.sleep(max(0.0, 0.01 - (time.monotonic() - t)))

        th = threading.Thread(target=writer)
        th.start()
        acked, applied = [], []
        t_end = time.monotonic() + args.lag_seconds
        time.sleep(0.5)
        while time.monotonic() < t_end:
            mi = mc.info()
            moff = int(mi["master_repl_offset"])
            ack = int(dict(kv.split("=") for kv in
                           mi["slave0"].split(","))["offset"])
            roff = int(rc.info()["master_repl_offset"])
            acked.append(moff - ack)
            applied.append(max(0, moff - roff))
            time.sleep(0.01)
        stop.set()
        th.join()
        return (percentile(acked, 50), percentile(acked, 99),
                percentile(applied, 50), percentile(applied, 99))
    finally:
        stop.set()
        for p in procs:
            p.kill()
            p.wait()
        shutil.rmtree(md, ignore_errors=True)
        shutil.rmtree(rd, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("goblind")
    ap.add_argument("--members", type=int, default=1000000)
    ap.add_argument("--fields", type=int, default=1000000)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--lag-seconds", type=float, default=10)
    ap.add_argument("--lag-rate", type=int, default=10000)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    base = args.dir or tempfile.gettempdir()
    print("load average: %.2f %.2f %.2f" % os.getloadavg())
    print()
    print("Full sync of a %d-member sorted set and a %d-field hash "
          "(median of %d):" % (args.members, args.fields, args.reps))
    print()
    print("| master -> replica | seconds | vs redis -> redis |")
    print("|---|---:|---:|")
    pairs = (("redis", "redis"), ("goblind", "redis"),
             ("goblind", "goblind"))
    times = {}
    for m, r in pairs:
        runs, why = [], ""
        for _ in range(args.reps):
            t, why = sync_seconds(m, r, args, base)
            if t is None:
                break
            runs.append(t)
        name = "%s -> %s" % ("redis-server" if m == "redis" else m,
                             "redis-server" if r == "redis" else r)
        if len(runs) < args.reps:
            print("| %s | n/a (%s) | |" % (name, why), flush=True)
            continue
        times[(m, r)] = sorted(runs)[len(runs) // 2]
        ref = times.get(("redis", "redis"))
        print("| %s | %.2f | %s |" % (
            name, times[(m, r)],
            "%.2f" % (times[(m, r)] / ref) if ref else ""), flush=True)
    if ("goblind", "goblind") in times and ("redis", "redis") in times:
        ratio = times[("goblind", "goblind")] / times[("redis", "redis")]
        print()
        print("- goblind -> goblind at most half of redis -> redis: "
              "%.2f, **%s**" % (ratio, "met" if ratio <= 0.5 else "missed"))
    else:
        print()
        print("- goblind -> goblind at most half of redis -> redis: "
              "**not measured** (goblind cannot be a replica here)")
    print()
    print("Replication lag to a redis-server replica, %d SET/s for %.0f s, "
          "sampled every 10 ms (bytes of the stream):" % (
              args.lag_rate, args.lag_seconds))
    print()
    print("| master | acked p50 | acked p99 | applied p50 | applied p99 |")
    print("|---|---:|---:|---:|---:|")
    for m in ("redis", "goblind"):
        a50, a99, p50, p99 = lag(m, args, base)
        print("| %s | %d | %d | %d | %d |" % (
            "redis-server" if m == "redis" else m, a50, a99, p50, p99),
            flush=True)


if __name__ == "__main__":
    main()
