#!/usr/bin/env python3
"""aof_bench.py - write throughput and latency with an append-only file:
redis-benchmark SET against goblind and redis-server with the same
appendfsync (everysec, always), each writing its AOF to a fresh directory
on the same disk, pipelined (-P 16) and at depth 1; the median of REPS
runs (rps, and the p50/p99 latency of the median run). Prints a Markdown
table with goblind / redis-server ratios.

    bench/aof_bench.py GOBLIND [--requests N] [--reps N] [--dir DIR]
"""

import argparse
import os
import shutil
import socket
import subprocess
import tempfile
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(argv, port):
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return p
        except OSError:
            time.sleep(0.05)
    p.kill()
    raise RuntimeError("server did not start: %r" % argv)


def bench(port, n, pipeline):
    out = subprocess.run(
        ["redis-benchmark", "-p", str(port), "-t", "set", "-n", str(n),
         "-c", "50", "-P", str(pipeline), "-r", "100000", "--csv"],
        capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = [x.strip('"') for x in line.split(",")]
        if f[0] == "SET":
            return float(f[1]), float(f[4]), float(f[6])
    raise RuntimeError(out)


def run(server, fsync, pipeline, args, base):
    results = []
    for _ in range(args.reps):
        d = tempfile.mkdtemp(dir=base)
        port = free_port()
        if server == "goblind":
            argv = [args.goblind, "--port", str(port), "--bind", "127.0.0.1",
                    "--dir", d, "--appendonly", "yes",
                    "--appendfsync", fsync, "--save", ""]
        else:
            argv = ["redis-server", "--port", str(port), "--bind",
                    "127.0.0.1", "--dir", d, "--appendonly", "yes",
                    "--appendfsync", fsync, "--save", "",
                    "--aof-use-rdb-preamble", "no"]
        p = start(argv, port)
        try:
            results.append(bench(port, args.requests, pipeline))
        finally:
            p.terminate()
            p.wait()
            shutil.rmtree(d, ignore_errors=True)
    results.sort()
    return results[len(results) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("goblind")
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    base = args.dir or tempfile.gettempdir()
    print("load average: %.2f %.2f %.2f" % os.getloadavg())
    print("| appendfsync | pipeline | goblind rps | redis rps | ratio | "
          "goblind p50/p99 ms | redis p50/p99 ms |")
    print("|---|---|---|---|---|---|---|")
    for fsync in ("everysec", "always"):
        for pipeline in (16, 1):
            n = args.requests if pipeline > 1 else args.requests // 4
            a = args.requests
            args.requests = n
            g = run("goblind", fsync, pipeline, args, base)
            r = run("redis", fsync, pipeline, args, base)
            args.requests = a
            print("| %s | %d | %.0f | %.0f | %.2f | %.3f / %.3f | "
                  "%.3f / %.3f |" % (fsync, pipeline, g[0], r[0],
                                      g[0] / r[0], g[1], g[2], r[1], r[2]),
                  flush=True)


if __name__ == "__main__":
    main()
