"""test_repl.py - goblind as a replication master (PSYNC2) with Debian's
redis-server 7.0 as its replica: a full sync of every type with its
deadlines, live writes after it, a killed link that resumes with a
partial resync (+CONTINUE), the old SYNC, the raw PSYNC exchange in
both payload forms, and ROLE, INFO replication and REPLCONF compared in
form with a redis-server master.

    /usr/bin/python3 test_repl.py GOBLIND
"""
import re
import sys
import time

import e2e
import repl_data


def info(c, section=b"replication"):
    text = e2e.plain(c.call(b"INFO", section)).decode()
    out = {}
    for line in text.split("\r\n"):
        if ":" in line:
            k, v = line.split(":", 1)
            out[k] = v
    return out


def wait_for(cond, what, timeout=20.0, logs=()):
    """Polls cond; on a timeout the servers in logs show their logs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what + "".join(
        "\n--- %s:\n%s" % (s.name, s.output()[-3000:]) for s in logs))


def caught_up(master, replica):
    """The replica's link is up and it has all of the master's stream."""
    mi, ri = info(master), info(replica)
    return (ri.get("master_link_status") == "up" and
            ri.get("master_repl_offset") == mi["master_repl_offset"])


def pair(goblind, *extra):
    """A goblind master and a redis-server replica of it, in sync."""
    srv = e2e.goblind(goblind, "--save", "", "--repl-diskless-sync-delay", "0", *extra)
    replica = e2e.redis_server("--replicaof", "127.0.0.1", str(srv.port))
    return srv, replica


def live_writes(c):
    """Writes whose stream differs from their text: relative deadlines,
    INCRBYFLOAT, SPOP, a deletion, a MULTI, another database."""
    c.call(b"SET", b"live:px", b"v", b"PX", b"500000")
    c.call(b"SETEX", b"live:ex", b"800", b"w")
    c.call(b"INCRBYFLOAT", b"live:f", b"1.25")
    c.call(b"SADD", b"live:s", b"a", b"b", b"c")
    c.call(b"SPOP", b"live:s")
    c.call(b"RPUSH", b"live:l", b"1", b"2", b"3")
    c.call(b"LPOP", b"live:l")
    c.call(b"EXPIRE", b"0:1:h", b"1000")
    c.call(b"DEL", b"0:2:z")
    c.call(b"MULTI")
    c.call(b"HSET", b"live:h", b"f", b"1")
    c.call(b"ZADD", b"live:z", b"1.5", b"m")
    c.call(b"EXEC")
    c.call(b"SELECT", b"1")
    c.call(b"SET", b"live:db1", b"x")
    c.call(b"SELECT", b"0")


def same_keyspace(master, replica):
    want = repl_data.dump(master)
    got = repl_data.dump(replica)
    # Deadlines are absolute (PEXPIRETIME), so they agree exactly.
    err = repl_data.differences(want, got, ("goblind", "redis-server"))
    assert err is None, err


def test_redis_replica_full_sync_and_live_writes(goblind):
    srv = e2e.goblind(goblind, "--save", "", "--repl-diskless-sync-delay", "0")
    c = srv.client()
    repl_data.fill(c, 3)
    replica = e2e.redis_server("--replicaof", "127.0.0.1", str(srv.port))
    r = replica.client()
    wait_for(lambda: caught_up(c, r), "the full sync",
             logs=(srv, replica))
    same_keyspace(c, r)
    live_writes(c)
    wait_for(lambda: caught_up(c, r), "the live writes")
    same_keyspace(c, r)
    mi = info(c)
    assert mi["role"] == "master" and mi["connected_slaves"] == "1", mi
    assert re.match(r"ip=127\.0\.0\.1,port=\d+,state=online,offset=\d+,"
                    r"lag=\d+$", mi["slave0"]), mi["slave0"]
    assert info(c, b"stats")["sync_full"] == "1"
    r.close()
    replica.kill_now()
    c.close()
    e2e.check_stopped_cleanly(srv)


def test_killed_link_resumes_with_partial_resync(goblind):
    srv = e2e.goblind(goblind, "--save", "", "--repl-diskless-sync-delay", "0")
    c = srv.client()
    repl_data.fill(c, 4, n=20)
    replica = e2e.redis_server("--replicaof", "127.0.0.1", str(srv.port))
    r = replica.client()
    wait_for(lambda: caught_up(c, r), "the full sync",
             logs=(srv, replica))
    assert e2e.plain(c.call(b"CLIENT", b"KILL", b"TYPE", b"replica")) == 1
    live_writes(c)
    wait_for(lambda: caught_up(c, r), "the resync")
    same_keyspace(c, r)
    st = info(c, b"stats")
    assert st["sync_full"] == "1" and st["sync_partial_ok"] == "1", st
    assert "Successful partial resynchronization" in replica.output()
    r.close()
    replica.kill_now()
    c.close()
    e2e.check_stopped_cleanly(srv)


def read_line(cl):
    return cl._line()


def raw(cl, n):
    """The next n bytes as they come (no CRLF after them)."""
    while len(cl.buf) - cl.pos < n:
        cl._fill()
    data = bytes(cl.buf[cl.pos:cl.pos + n])
    cl.pos += n
    return data


def test_raw_psync_eof_form_then_stream(goblind):
    srv = e2e.goblind(goblind, "--save", "", "--repl-diskless-sync-delay", "0")
    c = srv.client()
    c.call(b"SET", b"k", b"v")
    cl = srv.client(tcp=True)
    assert cl.call(b"REPLCONF", b"listening-port", b"4242") == ("+", b"OK")
    assert cl.call(b"REPLCONF", b"capa", b"eof", b"capa",
                   b"psync2") == ("+", b"OK")
    cl.send_raw(e2e.Client.encode([b"PSYNC", b"?", b"-1"]))
    line = read_line(cl)
    m = re.match(rb"\+FULLRESYNC ([0-9a-f]{40}) (\d+)$", line)
    assert m, line
    head = read_line(cl)
    assert head.startswith(b"$EOF:") and len(head) == 45, head
    mark = head[5:]
    data = b""
    while not data.endswith(mark):
        data += raw(cl, 1)
    assert data.startswith(b"REDIS00"), data[:16]
    # As from Redis, the stream starts at the replica's first ACK, so
    # that its first bytes cannot be read as part of the payload.
    c.call(b"SET", b"k2", b"v2")
    cl.send_raw(e2e.Client.encode([b"REPLCONF", b"ACK", m.group(2)]))
    want = (b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n"
            b"*3\r\n$3\r\nSET\r\n$2\r\nk2\r\n$2\r\nv2\r\n")
    got = b""
    while not got.endswith(want) and len(got) < 4096:
        got += raw(cl, 1)
    # Only the master's PINGs (every repl-ping-replica-period) may come
    # before it.
    ping = b"*1\r\n$4\r\nPING\r\n"
    assert got[:-len(want)] == ping * (len(got[:-len(want)]) // len(ping)), \
        got
    want = got
    mi = info(c)
    assert mi["slave0"].startswith("ip=127.0.0.1,port=4242,state=online")
    # ROLE lists it with its ACK offset.
    cl.send_raw(e2e.Client.encode([b"REPLCONF", b"ACK", b"%d" % (
        int(m.group(2)) + len(want))]))
    wait_for(lambda: e2e.plain(c.call(b"ROLE"))[2] == [
        [b"127.0.0.1", b"4242", b"%d" % (int(m.group(2)) + len(want))]],
             "the ACK in ROLE")
    cl.close()
    c.close()
    e2e.check_stopped_cleanly(srv)


def test_old_sync_gets_a_bulk_payload(goblind):
    srv = e2e.goblind(goblind, "--save", "", "--repl-diskless-sync-delay", "0")
    c = srv.client()
    c.call(b"RPUSH", b"l", b"a", b"b")
    cl = srv.client(tcp=True)
    cl.send_raw(e2e.Client.encode([b"SYNC"]))
    head = read_line(cl)
    assert head.startswith(b"$"), head
    data = raw(cl, int(head[1:]))
    assert data.startswith(b"REDIS00") and b"l" in data, data[:16]
    cl.close()
    c.close()
    e2e.check_stopped_cleanly(srv)


def shape(reply):
    """ROLE's reply with the numbers and names replaced by their kind."""
    if isinstance(reply, list):
        return [shape(x) for x in reply]
    if isinstance(reply, int):
        return "int"
    return "text" if reply != b"master" else reply


def test_role_info_and_replconf_as_redis(goblind):
    srv = e2e.goblind(goblind, "--save", "", "--repl-diskless-sync-delay", "0")
    mport = e2e.free_port()
    rm = e2e.redis_server("--port", str(mport),
                          "--repl-diskless-sync-delay", "0")
    gr = e2e.redis_server("--replicaof", "127.0.0.1", str(srv.port))
    rr = e2e.redis_server("--replicaof", "127.0.0.1", str(mport))
    g, r = srv.client(), rm.client()
    for cl in (g, r):
        cl.call(b"SET", b"a", b"1")
    wait_for(lambda: caught_up(g, gr.client()), "goblind's replica",
             logs=(srv, gr))
    wait_for(lambda: caught_up(r, rr.client()), "redis's replica")
    gi, ri = info(g), info(r)
    assert list(gi) == list(ri), (list(gi), list(ri))
    for k in ("role", "connected_slaves", "master_failover_state",
              "second_repl_offset", "repl_backlog_active",
              "repl_backlog_size"):
        assert gi[k] == ri[k], (k, gi[k], ri[k])
    for k in ("master_replid", "master_replid2"):
        assert re.match(r"[0-9a-f]{40}$", gi[k]), gi[k]
    # Each master lists its replica once that one's link is up; under
    # load either may take a moment after the INFO above.
    wait_for(lambda: shape(e2e.plain(g.call(b"ROLE"))) ==
             shape(e2e.plain(r.call(b"ROLE"))) and
             len(e2e.plain(g.call(b"ROLE"))[2]) == 1, "ROLE alike",
             logs=(srv, gr))
    for args in ([b"REPLCONF", b"listening-port"],
                 [b"REPLCONF", b"nosuch", b"1"],
                 [b"REPLCONF", b"listening-port", b"x"],
                 [b"REPLCONF", b"listening-port", b"1", b"capa", b"eof"],
                 [b"PSYNC", b"?"]):
        assert g.call(*args) == r.call(*args), args
    # Only sessions that sent PSYNC or SYNC are of type replica.
    gl = e2e.plain(g.call(b"CLIENT", b"LIST", b"TYPE", b"replica"))
    assert gl.count(b"\n") == 1, gl
    for cl in (g, r):
        cl.close()
    for s in (gr, rr, rm):
        s.kill_now()
    e2e.check_stopped_cleanly(srv)


def test_wait_counts_acknowledging_replicas(goblind):
    srv = e2e.goblind(goblind, "--save", "", "--repl-diskless-sync-delay", "0")
    c = srv.client()
    replica = e2e.redis_server("--replicaof", "127.0.0.1", str(srv.port))
    r = replica.client()
    wait_for(lambda: caught_up(c, r), "the full sync",
             logs=(srv, replica))
    c.call(b"SET", b"w", b"1")
    assert c.call(b"WAIT", b"1", b"5000") == (":", 1)
    assert c.call(b"WAIT", b"0", b"0") == (":", 1)
    t0 = time.monotonic()
    assert c.call(b"WAIT", b"2", b"200") == (":", 1)
    assert time.monotonic() - t0 >= 0.15
    # Inside MULTI it answers at once, as Redis.
    c.call(b"MULTI")
    c.call(b"WAIT", b"5", b"0")
    assert e2e.plain(c.call(b"EXEC")) == [1]
    rm = e2e.redis_server()
    rc = rm.client()
    for args in ([b"WAIT", b"1", b"-1"], [b"WAIT", b"x", b"10"],
                 [b"WAIT", b"1", b"x"], [b"WAIT", b"1"]):
        assert c.call(*args) == rc.call(*args), args
    rc.close()
    rm.kill_now()
    r.close()
    replica.kill_now()
    c.close()
    e2e.check_stopped_cleanly(srv)


def test_min_replicas_refuses_writes_as_redis(goblind):
    srv = e2e.goblind(goblind, "--save", "", "--repl-diskless-sync-delay", "0", "--min-replicas-to-write", "1")
    c = srv.client()
    rm = e2e.redis_server("--min-replicas-to-write", "1")
    want = rm.client().call(b"SET", b"a", b"1")
    rm.kill_now()
    assert want[1].startswith(b"NOREPLICAS"), want
    # Refused from the first command on, and at once after CONFIG SET.
    assert c.call(b"SET", b"a", b"1") == want
    assert c.call(b"GET", b"a") == ("$", None)  # reads still work
    assert c.call(b"CONFIG", b"SET", b"min-replicas-to-write", b"0") == \
        ("+", b"OK")
    assert c.call(b"SET", b"b", b"1") == ("+", b"OK")
    assert c.call(b"CONFIG", b"SET", b"min-slaves-to-write", b"1") == \
        ("+", b"OK")
    assert c.call(b"SET", b"b", b"2") == want
    assert e2e.plain(c.call(b"CONFIG", b"GET", b"min-replicas-to-write")) \
        == [b"min-replicas-to-write", b"1"]
    assert info(c)["min_slaves_good_slaves"] == "0"
    replica = e2e.redis_server("--replicaof", "127.0.0.1", str(srv.port))
    wait_for(lambda: c.call(b"SET", b"a", b"1") == ("+", b"OK"),
             "writes with a good replica")
    assert info(c)["min_slaves_good_slaves"] == "1"
    replica.kill_now()
    c.close()
    e2e.check_stopped_cleanly(srv)


def main():
    e2e.run_tests([test_redis_replica_full_sync_and_live_writes,
                   test_killed_link_resumes_with_partial_resync,
                   test_raw_psync_eof_form_then_stream,
                   test_old_sync_gets_a_bulk_payload,
                   test_role_info_and_replconf_as_redis,
                   test_wait_counts_acknowledging_replicas,
                   test_min_replicas_refuses_writes_as_redis],
                  sys.argv[1])


if __name__ == "__main__":
    main()
