"""test_repl_master.py - goblind as a master under trouble, against
Debian's redis-server 7.0 as replica where a real one is needed:

  * a replica that stops reading is dropped at the replica class of
    client-output-buffer-limit, with Redis's log line, and the master
    goes on;
  * repl-diskless-sync-delay: replicas that ask within the delay share
    one fork (one "Starting BGSAVE for SYNC" line, sync_full 2);
  * CLIENT LIST shows a replica with flags=S, as Redis;
  * a replica killed in the middle of its full sync: the master survives,
    logs the failed transfer as Redis ("Background transfer error"), and
    the next replica's sync gives it every key.

    /usr/bin/python3 test_repl_master.py GOBLIND
"""
import re
import socket
import struct
import sys

import e2e
import repl_data
from test_repl import caught_up, info, raw, read_line, wait_for


def fake_replica(srv):
    """A raw replica that takes its full sync (EOF form) and ACKs once."""
    cl = srv.client(tcp=True)
    assert cl.call(b"REPLCONF", b"capa", b"eof", b"capa",
                   b"psync2") == ("+", b"OK")
    cl.send_raw(e2e.Client.encode([b"PSYNC", b"?", b"-1"]))
    m = re.match(rb"\+FULLRESYNC [0-9a-f]{40} (\d+)$", read_line(cl))
    assert m
    mark = read_line(cl)[5:]
    data = b""
    while not data.endswith(mark):
        data += raw(cl, 1)
    cl.send_raw(e2e.Client.encode([b"REPLCONF", b"ACK", m.group(1)]))
    return cl


def test_slow_replica_dropped_at_output_limit(goblind):
    srv = e2e.goblind(goblind, "--save", "", "--repl-diskless-sync-delay",
                      "0")
    c = srv.client()
    c.call(b"SET", b"k", b"v")
    cl = fake_replica(srv)
    wait_for(lambda: info(c).get("connected_slaves") == "1" and
             "state=online" in info(c).get("slave0", ""), "online")
    # A client list line for it says S, as redis-server's does.
    line = [ln for ln in e2e.plain(c.call(b"CLIENT", b"LIST", b"TYPE",
                                          b"replica")).split(b"\n") if ln]
    assert len(line) == 1 and b" flags=S " in line[0], line
    assert c.call(b"CONFIG", b"SET", b"client-output-buffer-limit",
                  b"replica 1mb 0 0") == ("+", b"OK")
    big = b"x" * 100000
    # It reads nothing more: what the master sends it piles up.
    for i in range(300):
        assert c.call(b"SET", b"big%d" % i, big) == ("+", b"OK")
        if info(c).get("connected_slaves") == "0":
            break
    wait_for(lambda: info(c).get("connected_slaves") == "0",
             "the slow replica dropped", logs=(srv,))
    assert ("scheduled to be closed ASAP for overcoming of output buffer "
            "limits") in srv.output(), srv.output()[-2000:]
    assert c.call(b"PING") == ("+", b"PONG")
    assert c.call(b"DBSIZE")[1] > 1
    cl.close()
    c.close()
    e2e.check_stopped_cleanly(srv)


def test_diskless_sync_delay_shares_one_fork(goblind):
    srv = e2e.goblind(goblind, "--save", "", "--repl-diskless-sync-delay",
                      "2")
    c = srv.client()
    repl_data.fill(c, seed=3, n=20, big=50)
    r1 = e2e.redis_server("--replicaof", "127.0.0.1", str(srv.port))
    r2 = e2e.redis_server("--replicaof", "127.0.0.1", str(srv.port))
    c1, c2 = r1.client(), r2.client()
    wait_for(lambda: caught_up(c, c1) and caught_up(c, c2), "both online",
             logs=(srv, r1, r2))
    log = srv.output()
    assert log.count("Starting BGSAVE for SYNC") == 1, log[-3000:]
    assert "sync_full:2" in e2e.plain(c.call(b"INFO", b"stats")).decode()
    want = repl_data.dump(c)
    for name, rc in (("first", c1), ("second", c2)):
        err = repl_data.differences(want, repl_data.dump(rc),
                                    ("goblind", name))
        assert err is None, err
    for x in (c1, c2):
        x.close()
    r1.kill_now()
    r2.kill_now()
    c.close()
    e2e.check_stopped_cleanly(srv)


def test_replica_killed_mid_sync(goblind):
    srv = e2e.goblind(goblind, "--save", "", "--repl-diskless-sync-delay",
                      "0")
    c = srv.client()
    # A payload far larger than the socket buffers: the child is still
    # writing when the replica goes.
    assert c.call(b"DEBUG", b"POPULATE", b"60000", b"p", b"1000") == \
        ("+", b"OK")
    s = socket.create_connection(("127.0.0.1", srv.port))
    s.sendall(e2e.Client.encode([b"REPLCONF", b"capa", b"eof"]) +
              e2e.Client.encode([b"PSYNC", b"?", b"-1"]))
    got = b""
    while len(got) < 200000:
        chunk = s.recv(65536)
        assert chunk, got[:200]
        got += chunk
    assert got.startswith(b"+OK\r\n+FULLRESYNC"), got[:100]
    # Reset, not a clean close: the child's next write fails.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                 struct.pack("ii", 1, 0))
    s.close()
    wait_for(lambda: "Background transfer error" in srv.output(),
             "the failed transfer's log line", logs=(srv,))
    assert "Connection with replica" in srv.output()
    wait_for(lambda: info(c).get("connected_slaves") == "0",
             "the killed replica gone", logs=(srv,))
    assert c.call(b"PING") == ("+", b"PONG")
    c.call(b"SET", b"after", b"1")
    r = e2e.redis_server("--replicaof", "127.0.0.1", str(srv.port))
    rc = r.client()
    wait_for(lambda: caught_up(c, rc), "the next sync", timeout=60,
             logs=(srv, r))
    assert rc.call(b"DBSIZE") == c.call(b"DBSIZE")
    assert e2e.plain(rc.call(b"GET", b"after")) == b"1"
    assert e2e.plain(rc.call(b"STRLEN", b"p:59999")) == 1000
    rc.close()
    r.kill_now()
    c.close()
    e2e.check_stopped_cleanly(srv)


def main():
    e2e.run_tests([test_slow_replica_dropped_at_output_limit,
                   test_diskless_sync_delay_shares_one_fork,
                   test_replica_killed_mid_sync],
                  sys.argv[1])


if __name__ == "__main__":
    main()
