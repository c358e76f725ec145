"""test_replica.py - goblind as a replica (REPLICAOF, --replicaof): of
Debian's redis-server 7.0 and of goblind, chained, through a full sync,
live writes, a killed link and a partial resync; promotion with
REPLICAOF NO ONE that former siblings continue from; the replica's
refusals (READONLY, MASTERDOWN), keys it never expires itself, and
REPLICAOF, ROLE and INFO replication compared with a redis-server
replica.

    /usr/bin/python3 test_replica.py GOBLIND
"""
import os
import subprocess
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


def info_keys(c):
    text = e2e.plain(c.call(b"INFO", b"replication")).decode()
    return [line.split(":", 1)[0] for line in text.split("\r\n")
            if ":" in line]


def wait_for(cond, what, timeout=30.0, logs=()):
    """Polls cond; on a timeout the servers in logs show their logs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what + "".join(
        "\n--- %s:\n%s" % (s.name, s.output()[-3000:]) for s in logs))


def caught_up(master, replica):
    """The replica's link is up and it applied all of the master's
    stream."""
    mi, ri = info(master), info(replica)
    return (ri.get("master_link_status") == "up" and
            ri.get("slave_repl_offset") == mi["master_repl_offset"])


def redis_master(*extra):
    """redis-server on a TCP port (a replica connects over TCP), with no
    delay before a full sync."""
    port = e2e.free_port()
    srv = e2e.redis_server("--port", port, "--bind", "127.0.0.1",
                           "--repl-diskless-sync-delay", "0", *extra)
    srv.port = port
    return srv


def goblind(path, *extra):
    """goblind in a directory of its own: a replica receives its payload
    into a temporary file there."""
    return e2e.goblind(path, "--save", "", "--dir", e2e.tmpdir(),
                       "--repl-diskless-sync-delay", "0", *extra)


def same_keyspace(a, b, names):
    err = repl_data.differences(repl_data.dump(a), repl_data.dump(b), names)
    assert err is None, err


def live_writes(c, tag=b"live"):
    """Writes whose stream differs from their text: relative deadlines,
    INCRBYFLOAT, SPOP, a deletion, a MULTI, another database."""
    c.call(b"SET", tag + b":px", b"v", b"PX", b"500000")
    c.call(b"SETEX", tag + b":ex", b"800", b"w")
    c.call(b"INCRBYFLOAT", tag + b":f", b"1.25")
    c.call(b"SADD", tag + b":s", b"a", b"b", b"c")
    c.call(b"SPOP", tag + b":s")
    c.call(b"RPUSH", tag + b":l", b"1", b"2", b"3")
    c.call(b"LPOP", tag + b":l")
    c.call(b"EXPIRE", b"0:1:h", b"1000")
    c.call(b"DEL", b"0:2:z")
    c.call(b"MULTI")
    c.call(b"HSET", tag + b":h", b"f", b"1")
    c.call(b"ZADD", tag + b":z", b"1.5", b"m")
    c.call(b"EXEC")
    c.call(b"SELECT", b"1")
    c.call(b"SET", tag + b":db1", b"x")
    c.call(b"SELECT", b"3")
    c.call(b"HSET", tag + b":db3", b"a", b"b")
    c.call(b"SELECT", b"0")


def test_replica_of_redis_server(goblind_path):
    """Full sync, live writes, a killed link and a partial resync: the
    goblind replica ends with exactly the redis-server master's data."""
    master = redis_master()
    mc = master.client()
    repl_data.fill(mc, seed=7)
    rep = goblind(goblind_path, "--replicaof", "127.0.0.1", master.port)
    rc = rep.client()
    wait_for(lambda: caught_up(mc, rc), "the full sync", logs=(rep,))
    same_keyspace(mc, rc, ("redis-server", "goblind"))
    live_writes(mc)
    wait_for(lambda: caught_up(mc, rc), "the live writes", logs=(rep,))
    same_keyspace(mc, rc, ("redis-server", "goblind"))
    # The link dies; writes go on; the replica continues where it was.
    assert mc.call(b"CLIENT", b"KILL", b"TYPE", b"replica") == (":", 1)
    live_writes(mc, b"after")
    wait_for(lambda: caught_up(mc, rc), "the partial resync", logs=(rep,))
    same_keyspace(mc, rc, ("redis-server", "goblind"))
    mi = info(mc, b"stats")
    assert mi["sync_full"] == "1" and mi["sync_partial_ok"] == "1", mi
    assert "Successful partial resynchronization" in rep.output()
    # The master client, as Redis shows and kills it.
    line = e2e.plain(rc.call(b"CLIENT", b"LIST", b"TYPE", b"master"))
    assert b"flags=M" in line and line.count(b"\n") == 1, line
    assert rc.call(b"CLIENT", b"KILL", b"TYPE", b"master") == (":", 1)
    mc.call(b"SET", b"after:master:kill", b"1")
    wait_for(lambda: caught_up(mc, rc), "the resync after CLIENT KILL TYPE "
             "master", logs=(rep,))
    assert info(mc, b"stats")["sync_partial_ok"] == "2"
    same_keyspace(mc, rc, ("redis-server", "goblind"))
    ri = info(rc)
    assert ri["role"] == "slave" and ri["master_link_status"] == "up", ri
    assert ri["master_replid"] == info(mc)["master_replid"], ri
    # A redis-server replica of the same master: the same fields, ROLE.
    twin = e2e.redis_server("--replicaof", "127.0.0.1", master.port)
    wc = twin.client()
    wait_for(lambda: caught_up(mc, wc), "redis-server's sync", logs=(twin,))
    assert info_keys(rc) == info_keys(wc), (info_keys(rc), info_keys(wc))
    gr, wr = e2e.plain(rc.call(b"ROLE")), e2e.plain(wc.call(b"ROLE"))
    assert gr[:4] == wr[:4] and gr[4] == wr[4], (gr, wr)
    wc.close()
    twin.kill_now()
    rc.close()
    e2e.check_stopped_cleanly(rep)
    master.kill_now()


def test_auth_and_bulk_payload(goblind_path):
    """masterauth against a master with a password, and the payload in
    its $<length> form (redis-server saving to disk first); then
    goblind -> goblind with masteruser and an ACL user."""
    master = redis_master("--requirepass", "s3cret", "--repl-diskless-sync",
                          "no")
    mc = master.client()
    assert mc.call(b"AUTH", b"s3cret") == ("+", b"OK")
    repl_data.fill(mc, seed=11, n=20)
    rep = goblind(goblind_path, "--masterauth", "s3cret", "--replicaof",
                  "127.0.0.1", master.port)
    rc = rep.client()
    wait_for(lambda: caught_up(mc, rc), "the full sync", logs=(rep,))
    assert "receiving streamed RDB" not in rep.output()
    assert "bytes from master to disk" in rep.output()
    same_keyspace(mc, rc, ("redis-server", "goblind"))
    top = goblind(goblind_path, "--requirepass", "other")
    tc = top.client()
    assert tc.call(b"AUTH", b"other") == ("+", b"OK")
    assert tc.call(b"ACL", b"SETUSER", b"rep", b"on", b">pw", b"+@all",
                   b"~*", b"&*") == ("+", b"OK")
    tc.call(b"SET", b"k", b"v")
    low = goblind(goblind_path, "--masteruser", "rep", "--masterauth", "pw",
                  "--replicaof", "127.0.0.1", top.port)
    lc = low.client()
    wait_for(lambda: caught_up(tc, lc), "the sync as an ACL user",
             logs=(low,))
    assert lc.call(b"GET", b"k") == ("$", b"v")
    for c in (mc, rc, tc, lc):
        c.close()
    for s in (rep, low, top):
        e2e.check_stopped_cleanly(s)
    master.kill_now()


def test_goblind_chain(goblind_path):
    """goblind -> goblind -> goblind: the middle one is a replica with a
    replica; every offset follows the top master's, and each link that
    dies resumes with a partial resync."""
    top = goblind(goblind_path)
    tc = top.client()
    repl_data.fill(tc, seed=3)
    mid = goblind(goblind_path)
    mc = mid.client()
    assert mc.call(b"REPLICAOF", b"127.0.0.1", str(top.port).encode()) == \
        ("+", b"OK")
    low = goblind(goblind_path, "--replicaof", "127.0.0.1", mid.port)
    lc = low.client()
    # And a redis-server replica of the middle one, a replica itself.
    red = e2e.redis_server("--replicaof", "127.0.0.1", mid.port)
    rdc = red.client()
    wait_for(lambda: caught_up(tc, mc) and caught_up(mc, lc), "the chain",
             logs=(mid, low))
    live_writes(tc)
    wait_for(lambda: caught_up(tc, mc) and caught_up(mc, lc),
             "the writes down the chain", logs=(mid, low))
    same_keyspace(tc, mc, ("top", "middle"))
    same_keyspace(tc, lc, ("top", "bottom"))
    assert info(lc)["master_replid"] == info(tc)["master_replid"]
    assert info(lc)["master_repl_offset"] == info(tc)["master_repl_offset"]
    # Kill each link in turn.
    assert tc.call(b"CLIENT", b"KILL", b"TYPE", b"replica") == (":", 1)
    live_writes(tc, b"k1")
    wait_for(lambda: caught_up(tc, mc) and caught_up(mc, lc),
             "the top link's resync", logs=(mid, low))
    assert mc.call(b"CLIENT", b"KILL", b"TYPE", b"replica") == (":", 2)
    live_writes(tc, b"k2")
    wait_for(lambda: caught_up(tc, mc) and caught_up(mc, lc),
             "the middle link's resync", logs=(mid, low))
    same_keyspace(tc, lc, ("top", "bottom"))
    wait_for(lambda: caught_up(mc, rdc), "the redis-server replica",
             logs=(red, mid))
    same_keyspace(tc, rdc, ("top", "redis-server under the middle"))
    assert info(rdc)["master_replid"] == info(tc)["master_replid"]
    assert info(tc, b"stats")["sync_partial_ok"] == "1"
    # The middle one's two replicas both continued after its kill.
    assert info(mc, b"stats")["sync_partial_ok"] == "2"
    rdc.close()
    red.kill_now()
    for c in (tc, mc, lc):
        c.close()
    for s in (low, mid, top):
        e2e.check_stopped_cleanly(s)


def test_master_restarted_and_replica_killed_mid_sync(goblind_path):
    """A goblind master restarted (empty, a new id) with a replica
    attached: the replica resyncs in full and ends with the new data. A
    replica killed while its payload flows leaves the master serving
    and a restarted replica syncs."""
    top = goblind(goblind_path)
    tc = top.client()
    repl_data.fill(tc, seed=9, n=30)
    rep = goblind(goblind_path, "--replicaof", "127.0.0.1", top.port)
    rc = rep.client()
    wait_for(lambda: caught_up(tc, rc), "the first sync", logs=(rep,))
    tc.close()
    top.kill_now()
    wait_for(lambda: info(rc)["master_link_status"] == "down",
             "the link to go down", logs=(rep,))
    top = e2e.Server(top.argv, top.sock, top.port, top.logfile,
                     "goblind").start()
    tc = top.client()
    tc.call(b"SET", b"reborn", b"1")
    wait_for(lambda: caught_up(tc, rc), "the sync with the restarted master",
             logs=(rep, top))
    assert rc.call(b"GET", b"reborn") == ("$", b"1")
    assert rc.call(b"DBSIZE") == (":", 1)
    same_keyspace(tc, rc, ("restarted master", "replica"))
    # A big value so the payload takes a moment; the replica dies in it.
    tc.call(b"SET", b"big", b"x" * (8 << 20))
    for i in range(3):
        doomed = goblind(goblind_path, "--replicaof", "127.0.0.1", top.port)
        time.sleep(0.05 * i)
        doomed.kill_now()
    assert tc.call(b"PING") == ("+", b"PONG")
    again = goblind(goblind_path, "--replicaof", "127.0.0.1", top.port)
    ac = again.client()
    wait_for(lambda: caught_up(tc, ac), "a sync after the killed ones",
             logs=(again, top))
    assert ac.call(b"STRLEN", b"big") == (":", 8 << 20)
    wait_for(lambda: caught_up(tc, rc), "the first replica", logs=(rep,))
    for c in (tc, rc, ac):
        c.close()
    for s in (again, rep, top):
        e2e.check_stopped_cleanly(s)


def test_promotion_keeps_history(goblind_path):
    """REPLICAOF NO ONE: a new id, the old one as master_replid2, and a
    sibling (here a redis-server replica of the same master) that
    switches to the promoted one continues with +CONTINUE."""
    top = goblind(goblind_path)
    tc = top.client()
    repl_data.fill(tc, seed=5, n=20)
    a = goblind(goblind_path, "--replicaof", "127.0.0.1", top.port)
    ac = a.client()
    sib = e2e.redis_server("--replicaof", "127.0.0.1", top.port)
    sc = sib.client()
    wait_for(lambda: caught_up(tc, ac) and caught_up(tc, sc), "two replicas",
             logs=(a, sib))
    old = info(ac)["master_replid"]
    assert ac.call(b"REPLICAOF", b"NO", b"ONE") == ("+", b"OK")
    ai = info(ac)
    assert ai["role"] == "master" and ai["master_replid2"] == old, ai
    assert ai["second_repl_offset"] == str(int(ai["master_repl_offset"]) + 1)
    assert ac.call(b"SET", b"after", b"promotion") == ("+", b"OK")
    top.kill_now()
    assert sc.call(b"REPLICAOF", b"127.0.0.1", str(a.port).encode()) == \
        ("+", b"OK")
    wait_for(lambda: caught_up(ac, sc), "the sibling on the new master",
             logs=(a, sib))
    assert info(ac, b"stats")["sync_partial_ok"] == "1"
    assert info(ac, b"stats")["sync_full"] == "0"
    assert sc.call(b"GET", b"after") == ("$", b"promotion")
    same_keyspace(ac, sc, ("promoted goblind", "redis-server"))
    ac.close()
    sc.close()
    sib.kill_now()
    e2e.check_stopped_cleanly(a)


def test_rewrite_and_maxmemory(goblind_path):
    """A replica keeps every key its master has, whatever its own
    maxmemory (replica-ignore-maxmemory), and CONFIG REWRITE writes the
    master it follows, so a restart follows it again."""
    top = goblind(goblind_path)
    tc = top.client()
    for i in range(60):
        tc.call(b"SET", b"big:%d" % i, b"v" * 50000)
    conf = os.path.join(e2e.tmpdir(), "replica.conf")
    with open(conf, "w") as f:
        f.write("maxmemory 1mb\nmaxmemory-policy allkeys-lru\n")
    rep = e2e.goblind(goblind_path, "--save", "", "--dir", e2e.tmpdir(),
                      "--repl-diskless-sync-delay", "0", conf=conf)
    rc = rep.client()
    assert rc.call(b"REPLICAOF", b"127.0.0.1", str(top.port).encode()) == \
        ("+", b"OK")
    wait_for(lambda: caught_up(tc, rc), "the sync", logs=(rep,))
    assert rc.call(b"DBSIZE") == (":", 60)
    tc.call(b"SET", b"big:60", b"v" * 50000)
    wait_for(lambda: caught_up(tc, rc), "a write", logs=(rep,))
    assert rc.call(b"DBSIZE") == (":", 61)
    assert info(rc, b"stats")["evicted_keys"] == "0"
    assert rc.call(b"CONFIG", b"REWRITE") == ("+", b"OK")
    with open(conf) as f:
        text = f.read()
    assert "replicaof 127.0.0.1 %d\n" % top.port in text, text
    rc.close()
    e2e.check_stopped_cleanly(rep)
    rep = e2e.Server(rep.argv, rep.sock, rep.port, rep.logfile,
                     "goblind").start()
    rc = rep.client()
    wait_for(lambda: caught_up(tc, rc), "the sync after a restart",
             logs=(rep,))
    assert rc.call(b"REPLICAOF", b"NO", b"ONE") == ("+", b"OK")
    assert rc.call(b"CONFIG", b"REWRITE") == ("+", b"OK")
    with open(conf) as f:
        text = f.read()
    # Redis drops the line once promoted; `replicaof ""` would not load.
    assert "replicaof" not in text, text
    rc.close()
    e2e.check_stopped_cleanly(rep)
    rep = e2e.Server(rep.argv, rep.sock, rep.port, rep.logfile,
                     "goblind").start()
    rc = rep.client()
    assert info(rc)["role"] == "master"
    for c in (tc, rc):
        c.close()
    for s in (rep, top):
        e2e.check_stopped_cleanly(s)


def test_replica_aof_holds_the_synced_data(goblind_path):
    """With appendonly yes, the replica's AOF holds what the full sync
    loaded (a rewrite follows the load) and the stream after it: the
    replica restarted alone loads all of it."""
    top = goblind(goblind_path)
    tc = top.client()
    repl_data.fill(tc, seed=13, n=20)
    rep = goblind(goblind_path, "--appendonly", "yes", "--replicaof",
                  "127.0.0.1", top.port)
    rc = rep.client()
    wait_for(lambda: caught_up(tc, rc), "the sync", logs=(rep,))
    live_writes(tc)
    wait_for(lambda: caught_up(tc, rc), "the writes", logs=(rep,))
    wait_for(lambda: info(rc, b"persistence")["aof_rewrite_in_progress"] ==
             "0", "the rewrite", logs=(rep,))
    want = repl_data.dump(tc)
    rc.close()
    e2e.check_stopped_cleanly(rep)
    argv = [a for a in rep.argv]
    i = argv.index("--replicaof")
    del argv[i:i + 3]
    alone = e2e.Server(argv, rep.sock, rep.port, rep.logfile,
                       "goblind").start()
    ac = alone.client()
    err = repl_data.differences(want, repl_data.dump(ac),
                                ("master", "replica's AOF"))
    assert err is None, err
    for c in (tc, ac):
        c.close()
    for s in (alone, top):
        e2e.check_stopped_cleanly(s)


def test_replica_refusals_as_redis(goblind_path):
    """READONLY, MASTERDOWN, WAIT on a replica, REPLICAOF's errors and
    ROLE's shape while it connects: the texts of a redis-server
    replica of the same (absent) master."""
    dead = e2e.free_port()
    rs = e2e.redis_server("--replicaof", "127.0.0.1", dead)
    gs = goblind(goblind_path, "--replicaof", "127.0.0.1", dead)
    r, g = rs.client(), gs.client()
    cmds = [
        (b"SET", b"k", b"v"),
        (b"GET", b"k"),
        (b"WAIT", b"0", b"0"),
        (b"REPLICAOF", b"127.0.0.1"),
        (b"REPLICAOF", b"127.0.0.1", b"-1"),
        (b"REPLICAOF", b"127.0.0.1", b"70000"),
        (b"REPLICAOF", b"127.0.0.1", b"x"),
        (b"SLAVEOF", b"127.0.0.1", str(dead).encode()),
        (b"CONFIG", b"SET", b"replicaof", b"127.0.0.1 1"),
        (b"CONFIG", b"SET", b"replica-serve-stale-data", b"no"),
        (b"GET", b"k"),
        (b"SET", b"k", b"v"),
        (b"PING",),
        (b"CONFIG", b"GET", b"replica-serve-stale-data"),
        (b"CONFIG", b"SET", b"replica-serve-stale-data", b"yes"),
        (b"CONFIG", b"SET", b"replica-read-only", b"no"),
        (b"SET", b"k", b"v"),
        (b"GET", b"k"),
        (b"CONFIG", b"SET", b"slave-read-only", b"yes"),
        (b"CONFIG", b"GET", b"slave-read-only"),
        (b"SET", b"k", b"v2"),
    ]
    for cmd in cmds:
        want, got = r.call(*cmd), g.call(*cmd)
        assert got == want, (cmd, got, want)
    want, got = e2e.plain(r.call(b"ROLE")), e2e.plain(g.call(b"ROLE"))
    assert got[:3] == want[:3] and got[4] == want[4] == -1, (got, want)
    assert got[3] in (b"connect", b"connecting"), got
    ri, gi = info_keys(r), info_keys(g)
    assert gi == ri, (gi, ri)
    assert info(g)["master_link_status"] == "down"
    # Promotion answers as Redis too.
    for cmd in [(b"REPLICAOF", b"NO", b"ONE"), (b"ROLE",),
                (b"REPLICAOF", b"NO", b"ONE")]:
        want, got = e2e.plain(r.call(*cmd)), e2e.plain(g.call(*cmd))
        assert got == want, (cmd, got, want)
    assert info_keys(g) == info_keys(r)
    r.close()
    g.close()
    rs.kill_now()
    e2e.check_stopped_cleanly(gs)


def test_replica_never_expires_keys(goblind_path):
    """A key whose deadline passed reads as missing on the replica but
    stays until the master's DEL, as in Redis."""
    master = redis_master("--enable-debug-command", "yes")
    mc = master.client()
    rep = goblind(goblind_path, "--replicaof", "127.0.0.1", master.port)
    rc = rep.client()
    wait_for(lambda: caught_up(mc, rc), "the link", logs=(rep,))
    assert mc.call(b"DEBUG", b"SET-ACTIVE-EXPIRE", b"0") == ("+", b"OK")
    # The stream flows once the master saw an ACK after the sync.
    mc.call(b"SET", b"warm", b"up")
    wait_for(lambda: rc.call(b"GET", b"warm") == ("$", b"up"), "the stream",
             logs=(rep,))
    mc.call(b"SET", b"gone", b"v", b"PX", b"1500")
    wait_for(lambda: caught_up(mc, rc), "the writes", logs=(rep,))
    assert rc.call(b"EXISTS", b"gone") == (":", 1)
    wait_for(lambda: rc.call(b"PTTL", b"gone") == (":", -2), "the deadline",
             logs=(rep,))
    assert rc.call(b"GET", b"gone") == ("$", None)
    assert rc.call(b"EXISTS", b"gone") == (":", 0)
    assert rc.call(b"DBSIZE") == (":", 2)   # not deleted here
    assert mc.call(b"DBSIZE") == (":", 2)
    assert mc.call(b"GET", b"gone") == ("$", None)  # the master's DEL
    wait_for(lambda: rc.call(b"DBSIZE") == (":", 1), "the master's DEL",
             logs=(rep,))
    rc.close()
    e2e.check_stopped_cleanly(rep)
    master.kill_now()


def unblocked_by_replicaof(srv, master):
    """What clients blocked on srv receive when it becomes a replica of
    master, and what a client blocked after that gets."""
    blocked = [[b"BLPOP", b"q", b"0"], [b"BZPOPMIN", b"z", b"100"],
               [b"BLMOVE", b"a", b"b", b"LEFT", b"LEFT", b"0"],
               [b"WAIT", b"1", b"0"]]
    ctl = srv.client()
    waiting = []
    for cmd in blocked:
        c = srv.client()
        c.send_raw(e2e.Client.encode(cmd))
        waiting.append(c)
    wait_for(lambda: "blocked_clients:%d" % len(blocked) in e2e.plain(
        ctl.call(b"INFO", b"clients")).decode(), "the blocked clients")
    out = [ctl.call(b"REPLICAOF", b"127.0.0.1", str(master.port).encode())]
    out += [c.read_until_closed() for c in waiting]
    out.append(ctl.call(b"INFO", b"clients")[1].count(b"blocked_clients:0"))
    out.append(ctl.call(b"ROLE")[1][0])
    ctl.close()
    return out


def test_replicaof_unblocks_as_redis(goblind_path):
    """REPLICAOF answers every blocked client (WAIT too) with Redis's
    -UNBLOCKED error and closes it, as redis-server does."""
    master = redis_master()
    ref = e2e.redis_server()
    gs = goblind(goblind_path)
    try:
        want = unblocked_by_replicaof(ref, master)
        got = unblocked_by_replicaof(gs, master)
        assert got == want, (got, want)
        assert want[1] == b"-UNBLOCKED force unblock from blocking operation, " \
            b"instance state changed (master -> replica?)\r\n", want
        e2e.check_stopped_cleanly(gs)
    finally:
        master.kill_now()
        ref.kill_now()
        gs.kill_now()


class FakeMaster:
    """A master that answers a replica's handshake, sends an empty
    payload (written by a redis-server) and then the stream it is
    given: the commands a master's clock makes, whatever the
    replica's clock says."""

    def __init__(self, rdb):
        import socket
        self.rdb = rdb
        self.ls = socket.socket()
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(4)
        self.port = self.ls.getsockname()[1]
        self.conn = None

    def serve(self, stream, timeout=20.0):
        """Takes one replica through the handshake, sends stream."""
        self.ls.settimeout(timeout)
        self.conn, _ = self.ls.accept()
        self.conn.settimeout(timeout)
        buf = b""
        while True:
            while b"\r\n" not in buf:
                buf += self.conn.recv(4096)
            # Each handshake command is one small multibulk: read it whole.
            n = int(buf[1:buf.index(b"\r\n")])
            parts, rest = [], buf[buf.index(b"\r\n") + 2:]
            while len(parts) < n:
                while rest.count(b"\r\n") < 2:
                    rest += self.conn.recv(4096)
                _, rest = rest.split(b"\r\n", 1)
                word, rest = rest.split(b"\r\n", 1)
                parts.append(word)
            buf = rest
            cmd = parts[0].upper()
            if cmd == b"PING":
                self.conn.sendall(b"+PONG\r\n")
            elif cmd in (b"PSYNC", b"SYNC"):
                self.conn.sendall(b"+FULLRESYNC " + b"a" * 40 + b" 0\r\n" +
                                  b"$%d\r\n" % len(self.rdb) + self.rdb)
                break
            else:
                self.conn.sendall(b"+OK\r\n")
        self.conn.sendall(b"".join(e2e.Client.encode(c) for c in stream))

    def close(self):
        for s in (self.conn, self.ls):
            if s is not None:
                s.close()


def empty_rdb():
    ref = e2e.redis_server()
    try:
        path = os.path.join(e2e.tmpdir(), "empty.rdb")
        subprocess.run(["redis-cli", "-s", ref.sock, "--rdb", path],
                       check=True, capture_output=True)
        with open(path, "rb") as f:
            return f.read()
    finally:
        ref.kill_now()


def master_sees_expired(start_replica):
    """What a replica holds after its master, whose clock is behind the
    replica's, changes a key the replica sees as expired."""
    past = b"%d" % (int(time.time() * 1000) - 60000)
    fm = FakeMaster(empty_rdb())
    rep = start_replica(fm.port)
    try:
        fm.serve([[b"SELECT", b"0"],
                  [b"SET", b"k", b"1", b"PXAT", past], [b"INCR", b"k"],
                  [b"PERSIST", b"k"],
                  [b"SET", b"h", b"x", b"PXAT", past], [b"APPEND", b"h", b"y"],
                  [b"SET", b"gone", b"v", b"PXAT", past],
                  [b"SET", b"e", b"v"], [b"PEXPIREAT", b"e", past],
                  [b"SET", b"g", b"v"],
                  [b"GETEX", b"g", b"PXAT", past], [b"APPEND", b"g", b"w"],
                  [b"PERSIST", b"g"],
                  # Past our default proto-max-bulk-len: a master may have
                  # raised its own, and is followed all the same.
                  [b"SETRANGE", b"big", b"600000000", b"x"],
                  [b"SET", b"done", b"1"]])
        c = rep.client()
        wait_for(lambda: c.call(b"GET", b"done") == ("$", b"1"),
                 "the stream", logs=(rep,))
        return [c.call(b"GET", b"k"), c.call(b"TTL", b"k"),
                c.call(b"GET", b"h"), c.call(b"EXISTS", b"gone"),
                c.call(b"EXISTS", b"e"), c.call(b"GET", b"g"),
                c.call(b"STRLEN", b"big"), c.call(b"DBSIZE")]
    finally:
        fm.close()
        rep.kill_now()


def test_master_commands_see_expired_keys(goblind_path):
    """A key whose deadline passed by the replica's clock is still live to
    the master's commands (Redis's expireIfNeeded for server.master), and
    absent to every other client until the master's DEL; the master is
    not held to the replica's proto-max-bulk-len."""
    want = master_sees_expired(lambda port: e2e.redis_server(
        "--replicaof", "127.0.0.1", str(port)))
    got = master_sees_expired(lambda port: goblind(
        goblind_path, "--replicaof", "127.0.0.1", str(port)))
    assert got == want, (got, want)
    assert want[0] == ("$", b"2"), want


def main():
    e2e.run_tests([test_replica_of_redis_server,
                   test_auth_and_bulk_payload,
                   test_goblind_chain,
                   test_master_restarted_and_replica_killed_mid_sync,
                   test_promotion_keeps_history,
                   test_rewrite_and_maxmemory,
                   test_replica_aof_holds_the_synced_data,
                   test_replica_refusals_as_redis,
                   test_replica_never_expires_keys,
                   test_replicaof_unblocks_as_redis,
                   test_master_commands_see_expired_keys],
                  sys.argv[1])


if __name__ == "__main__":
    main()
