"""test_sentinel.py - Debian's redis-sentinel 7.0 fails over goblind: a
goblind master with two goblind replicas, the master killed, a replica
promoted and the other one following it, and a redis-py client using
redis.sentinel.Sentinel writing on through the failover.

    /usr/bin/python3 test_sentinel.py GOBLIND
"""
import os
import shutil
import subprocess
import sys
import time

import redis
import redis.sentinel

import e2e

SENTINEL = shutil.which("redis-sentinel") or "/usr/bin/redis-sentinel"


def info(c):
    text = e2e.plain(c.call(b"INFO", b"replication")).decode()
    return dict(line.split(":", 1) for line in text.split("\r\n")
                if ":" in line)


def wait_for(cond, what, timeout=60.0, logs=()):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if cond():
                return
        except (OSError, redis.RedisError, e2e.ProtocolError):
            pass
        time.sleep(0.1)
    raise AssertionError("timed out waiting for " + what + "".join(
        "\n--- %s:\n%s" % (s.name, s.output()[-4000:]) for s in logs))


def sentinel(master_port):
    d = e2e.tmpdir()
    port = e2e.free_port()
    conf = os.path.join(d, "sentinel.conf")
    logfile = os.path.join(d, "sentinel.log")
    with open(conf, "w") as f:
        f.write("port %d\nbind 127.0.0.1\ndaemonize no\ndir %s\n"
                "logfile %s\n"
                "sentinel monitor mymaster 127.0.0.1 %d 1\n"
                "sentinel down-after-milliseconds mymaster 1000\n"
                "sentinel failover-timeout mymaster 20000\n"
                "sentinel parallel-syncs mymaster 1\n"
                % (port, d, logfile, master_port))
    srv = e2e.Server([SENTINEL, conf], None, port, logfile, "redis-sentinel")
    return srv.start()


def test_sentinel_fails_over_goblind(goblind_path):
    master = e2e.goblind(goblind_path, "--save", "",
                         "--repl-diskless-sync-delay", "0")
    reps = [e2e.goblind(goblind_path, "--save", "", "--dir", e2e.tmpdir(),
                        "--repl-diskless-sync-delay", "0",
                        "--replicaof", "127.0.0.1", master.port)
            for _ in range(2)]
    mc = master.client()
    for r in reps:
        wait_for(lambda: info(r.client())["master_link_status"] == "up",
                 "a replica's link", logs=(r,))
    sen = sentinel(master.port)
    sc = redis.Redis(port=sen.port, socket_timeout=5)
    wait_for(lambda: len(sc.sentinel_slaves("mymaster")) == 2,
             "Sentinel to find both replicas", logs=(sen,))
    client = redis.sentinel.Sentinel([("127.0.0.1", sen.port)],
                                     socket_timeout=2)
    w = client.master_for("mymaster", socket_timeout=2)
    for i in range(50):
        w.set("before:%d" % i, i)
    assert w.get("before:49") == b"49"
    for r in reps:
        wait_for(lambda: r.client().call(b"GET", b"before:49") ==
                 ("$", b"49"), "the writes on a replica", logs=(r,))
    mc.close()
    master.kill_now()
    old = master.port
    wait_for(lambda: sc.sentinel_get_master_addr_by_name("mymaster")[1]
             != old, "the failover", logs=(sen,) + tuple(reps))
    new_port = int(sc.sentinel_get_master_addr_by_name("mymaster")[1])
    new = [r for r in reps if r.port == new_port][0]
    other = [r for r in reps if r.port != new_port][0]
    # The client keeps writing: to the promoted replica.
    done = []

    def write_after():
        w.set("after", "failover")
        done.append(1)
        return True
    wait_for(write_after, "a write after the failover", logs=(sen, new))
    nc = new.client()
    assert info(nc)["role"] == "master"
    assert nc.call(b"GET", b"after") == ("$", b"failover")
    assert nc.call(b"GET", b"before:49") == ("$", b"49")
    oc = other.client()
    wait_for(lambda: info(oc)["master_port"] == str(new_port) and
             info(oc)["master_link_status"] == "up",
             "the other replica to follow the new master",
             logs=(sen, other))
    wait_for(lambda: oc.call(b"GET", b"after") == ("$", b"failover"),
             "the new master's writes on the other replica",
             logs=(other,))
    for i in range(20):
        w.set("later:%d" % i, i)
    wait_for(lambda: oc.call(b"GET", b"later:19") == ("$", b"19"),
             "later writes", logs=(other,))
    sc.close()
    nc.close()
    oc.close()
    sen.kill_now()
    for r in reps:
        e2e.check_stopped_cleanly(r)


def main():
    e2e.run_tests([test_sentinel_fails_over_goblind], sys.argv[1])


if __name__ == "__main__":
    main()
