"""test_aof.py - goblind's append-only file end to end, against Debian's
redis-server 7.0:

  * appendfsync always: kill -9 while clients on TCP and the Unix socket
    write (plain and pipelined, at random moments, four rounds); after a
    restart every acknowledged write is there;
  * appendfsync everysec: a kill -9 loses only writes of the last moments;
  * kill -9 during BGREWRITEAOF: nothing acknowledged is lost, and a
    finished rewrite leaves one base, one incremental part, a manifest;
  * a torn last record is cut at start with a log line;
  * CONFIG SET appendonly yes at runtime writes the data so far;
  * INFO persistence's aof_* fields;
  * redis-server loads goblind's AOF directory, and goblind loads
    redis-server's (command base, and an RDB preamble base), with
    identical contents (every key, type, value and TTL).

    /usr/bin/python3 test_aof.py GOBLIND
"""

import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time

import e2e

GOBLIND = sys.argv[1]


def call(c, *args):
    return e2e.plain(c.call(*args))


def aof_goblind(d, *extra):
    return e2e.goblind(GOBLIND, "--dir", d, "--appendonly", "yes", *extra)


def writer(srv, tcp, prefix, acked, stop):
    c = srv.client(tcp=tcp)
    i = 0
    try:
        while not stop.is_set():
            key = b"%s:%d" % (prefix, i)
            if c.call(b"SET", key, b"v%d" % i) == ("+", b"OK"):
                acked.append(key)
            i += 1
    except Exception:  # noqa: BLE001 - the server was killed under us
        pass


def write_then_kill(srv, during=None):
    """Writers on TCP and Unix; kill -9 after a while (during() runs
    first, halfway). Returns the acknowledged keys."""
    acked, stop = [], threading.Event()
    threads = [threading.Thread(target=writer,
                                args=(srv, tcp, b"%s%d" % (b"k", n), acked,
                                      stop))
               for n, tcp in enumerate((True, False, True))]
    for t in threads:
        t.start()
    time.sleep(0.4)
    if during is not None:
        during()
    time.sleep(0.3)
    os.kill(srv.pid(), signal.SIGKILL)
    stop.set()
    for t in threads:
        t.join()
    srv.kill_now()
    return acked


def missing(srv, keys):
    c = srv.client()
    out = [k for k in keys if call(c, b"EXISTS", k) != 1]
    c.close()
    return out


def test_always_kill9_loses_no_acknowledged_write(d=None):
    d = e2e.tmpdir()
    srv = aof_goblind(d, "--appendfsync", "always")
    acked = write_then_kill(srv)
    assert len(acked) > 50, len(acked)
    srv = aof_goblind(d, "--appendfsync", "always")
    lost = missing(srv, acked)
    assert not lost, "%d of %d lost, first %r" % (len(lost), len(acked),
                                                  lost[:3])
    info = call(srv.client(), b"INFO", b"persistence").decode()
    assert "aof_enabled:1" in info, info
    assert "aof_last_write_status:ok" in info, info
    srv.stop()


def pipelined_writer(srv, tcp, prefix, acked, stop, depth=8):
    """SETs depth at a time in one write; a key counts as acknowledged
    only once its own +OK arrived."""
    c = srv.client(tcp=tcp)
    i = 0
    try:
        while not stop.is_set():
            keys = [b"%s:%d" % (prefix, i + j) for j in range(depth)]
            i += depth
            c.s.sendall(b"".join(c.encode([b"SET", k, b"v"]) for k in keys))
            for k in keys:
                if c.read() == ("+", b"OK"):
                    acked.append(k)
    except Exception:  # noqa: BLE001 - killed under us
        pass


def test_always_kill9_at_random_moments():
    """appendfsync always, one fsync per loop pass: four rounds of plain
    and pipelined writers on TCP and the Unix socket, each killed -9 at a
    random moment; after every restart every write acknowledged in any
    round is there (a reply leaves only after its pass's fsync)."""
    rnd = random.Random(int(os.environ.get("AOF_SEED", "16")))
    d = e2e.tmpdir()
    acked = []
    for rnd_no in range(4):
        srv = aof_goblind(d, "--appendfsync", "always")
        lost = missing(srv, acked)
        assert not lost, "round %d: %d of %d lost, first %r" % (
            rnd_no, len(lost), len(acked), lost[:3])
        stop = threading.Event()
        threads = [threading.Thread(target=fn, args=(srv, tcp, b"r%d%s%d" % (
                       rnd_no, tag, n), acked, stop))
                   for n, (fn, tcp, tag) in enumerate((
                       (writer, True, b"w"), (writer, False, b"w"),
                       (pipelined_writer, True, b"p"),
                       (pipelined_writer, False, b"p")))]
        for t in threads:
            t.start()
        time.sleep(rnd.uniform(0.05, 0.6))
        os.kill(srv.pid(), signal.SIGKILL)
        stop.set()
        for t in threads:
            t.join()
        srv.kill_now()
    assert len(acked) > 200, len(acked)
    srv = aof_goblind(d, "--appendfsync", "always")
    lost = missing(srv, acked)
    assert not lost, "%d of %d lost" % (len(lost), len(acked))
    srv.stop()


def test_everysec_kill9_loses_at_most_about_a_second():
    """appendfsync everysec: whatever a kill -9 loses was acknowledged in
    the last moments before it (Redis's promise: about a second; 2.5 s
    allowed for a loaded machine), never earlier writes."""
    d = e2e.tmpdir()
    srv = aof_goblind(d, "--appendfsync", "everysec")
    when, stop = {}, threading.Event()

    def timed_writer(tcp, prefix):
        c = srv.client(tcp=tcp)
        i = 0
        try:
            while not stop.is_set():
                key = b"%s:%d" % (prefix, i)
                i += 1
                if c.call(b"SET", key, b"v") == ("+", b"OK"):
                    when[key] = time.monotonic()
        except Exception:  # noqa: BLE001 - killed under us
            pass

    threads = [threading.Thread(target=timed_writer, args=(tcp, b"e%d" % n))
               for n, tcp in enumerate((True, False))]
    for t in threads:
        t.start()
    time.sleep(3.5)
    killed = time.monotonic()
    os.kill(srv.pid(), signal.SIGKILL)
    stop.set()
    for t in threads:
        t.join()
    srv.kill_now()
    assert len(when) > 100, len(when)
    srv = aof_goblind(d, "--appendfsync", "everysec")
    lost = missing(srv, list(when))
    early = [k for k in lost if killed - when[k] > 2.5]
    assert not early, "%d writes older than 2.5 s lost, first %r" % (
        len(early), early[:3])
    srv.stop()


def test_kill9_during_rewrite_loses_nothing():
    d = e2e.tmpdir()
    srv = aof_goblind(d, "--appendfsync", "always")
    c = srv.client()
    args = [b"HSET", b"big"]
    for i in range(20000):
        args += [b"f%d" % i, b"x" * 20]
    call(c, *args)
    acked = write_then_kill(srv, lambda: c.call(b"BGREWRITEAOF"))
    srv = aof_goblind(d, "--appendfsync", "always")
    lost = missing(srv, acked)
    assert not lost, "%d of %d lost" % (len(lost), len(acked))
    c = srv.client()
    assert call(c, b"HLEN", b"big") == 20000
    # A rewrite that finishes: one base, one incr, the manifest.
    assert call(c, b"BGREWRITEAOF").startswith(b"Background")
    deadline = time.monotonic() + 30
    while b"aof_rewrite_in_progress:1" in call(c, b"INFO", b"persistence"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    names = sorted(os.listdir(os.path.join(d, "appendonlydir")))
    assert len(names) == 3 and names[-1] == "appendonly.aof.manifest", names
    srv.stop()
    srv = aof_goblind(d)
    assert missing(srv, acked) == []
    srv.stop()


def test_ring_writes_reach_the_aof():
    """The ring transport (RESP and SBE) writes to the AOF too; a typed SBE
    write is either kept or refused, never acknowledged and lost."""
    cli = os.path.join(os.path.dirname(GOBLIND), "..", "clients",
                       "goblin-cli")
    d = e2e.tmpdir()
    ring = os.path.join(d, "r.ring")
    srv = aof_goblind(d, "--appendfsync", "always", "--ring", ring, "64k")
    out = subprocess.run([cli, "--ring", ring, "set", "kr", "v"],
                         capture_output=True, text=True).stdout
    assert "OK" in out, out
    sbe = subprocess.run([cli, "--ring", ring, "--sbe", "set", "ks", "v"],
                         capture_output=True, text=True).stdout
    srv.kill_now()
    srv = aof_goblind(d, "--ring", ring, "64k")
    c = srv.client()
    assert call(c, b"GET", b"kr") == b"v"
    assert ("OK" in sbe) == (call(c, b"EXISTS", b"ks") == 1), sbe
    srv.stop()


def test_torn_tail_is_cut_with_a_log_line():
    d = e2e.tmpdir()
    srv = aof_goblind(d)
    call(srv.client(), b"SET", b"a", b"1")
    srv.stop()
    adir = os.path.join(d, "appendonlydir")
    incr = [n for n in os.listdir(adir) if n.endswith(".incr.aof")][0]
    with open(os.path.join(adir, incr), "ab") as f:
        f.write(b"*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$5\r\nhal")
    srv = aof_goblind(d)
    c = srv.client()
    assert call(c, b"GET", b"a") == b"1"
    assert call(c, b"EXISTS", b"b") == 0
    assert "short read while loading the AOF" in srv.output()
    srv.stop()
    with open(os.path.join(adir, incr), "ab") as f:
        f.write(b"*1\r\n$3\r\nSET")
    bad = e2e.goblind(GOBLIND, "--dir", d, "--appendonly", "yes",
                      "--aof-load-truncated", "no", start=False)
    try:
        bad.start(timeout=10)
        raise AssertionError("started on a torn AOF")
    except RuntimeError as e:
        assert "Unexpected end of file" in str(e), e


def test_config_set_appendonly_at_runtime():
    d = e2e.tmpdir()
    srv = e2e.goblind(GOBLIND, "--dir", d)
    c = srv.client()
    call(c, b"SET", b"before", b"1")
    assert call(c, b"CONFIG", b"SET", b"appendfsync", b"always") == b"OK"
    assert call(c, b"CONFIG", b"SET", b"appendonly", b"yes") == b"OK"
    call(c, b"SET", b"after", b"1")
    srv.kill_now()
    srv = aof_goblind(d)
    c = srv.client()
    assert call(c, b"MGET", b"before", b"after") == [b"1", b"1"]
    srv.stop()


def fill(c):
    now = int(time.time())
    cmds = [[b"SET", b"s", b"str"], [b"SET", b"n", b"12"], [b"INCR", b"n"],
            [b"SET", b"ttl", b"v", b"EX", b"5000"],
            [b"HSET", b"h", b"a", b"1", b"b", b"2"],
            [b"ZADD", b"z", b"1.5", b"a", b"-2", b"b"],
            [b"PEXPIREAT", b"z", b"%d" % ((now + 7200) * 1000)],
            [b"INCRBYFLOAT", b"f", b"1.25"],
            [b"SELECT", b"3"], [b"SET", b"in3", b"x"], [b"SELECT", b"0"]]
    lists = [[b"RPUSH", b"l", b"x", b"y", b"z"], [b"LPOP", b"l"],
             [b"SADD", b"st", b"m1", b"m2", b"3"], [b"SPOP", b"st"]]
    return cmds, lists


def contents(c):
    out = {}
    for db in (b"0", b"3"):
        call(c, b"SELECT", db)
        for k in call(c, b"KEYS", b"*"):
            t = call(c, b"TYPE", k)
            v = {b"string": lambda: call(c, b"GET", k),
                 b"hash": lambda: sorted(call(c, b"HGETALL", k)),
                 b"zset": lambda: call(c, b"ZRANGE", k, b"0", b"-1",
                                       b"WITHSCORES"),
                 b"list": lambda: call(c, b"LRANGE", k, b"0", b"-1"),
                 b"set": lambda: sorted(call(c, b"SMEMBERS", k))}[t]()
            out[(db, k)] = (t, v, call(c, b"PEXPIRETIME", k))
    call(c, b"SELECT", b"0")
    return out


def move_aof(src, dst):
    shutil.rmtree(os.path.join(dst, "appendonlydir"), ignore_errors=True)
    shutil.copytree(os.path.join(src, "appendonlydir"),
                    os.path.join(dst, "appendonlydir"))


def run(c, cmds):
    for cmd in cmds:
        e2e.plain(c.call(*cmd))


def test_redis_server_loads_goblind_aof_and_back():
    gd = e2e.tmpdir()
    srv = aof_goblind(gd)
    c = srv.client()
    cmds, lists = fill(c)
    run(c, cmds + lists)
    call(c, b"BGREWRITEAOF")
    time.sleep(0.5)
    call(c, b"SET", b"later", b"1")
    want = contents(c)
    srv.stop()
    rd = e2e.tmpdir()
    move_aof(gd, rd)
    r = e2e.redis_server("--dir", rd, "--appendonly", "yes")
    got = contents(r.client())
    adir = os.path.join(rd, "appendonlydir")
    assert got == want, "redis-server: %r\nwant %r\n%r %s\n%s" % (
        got, want, os.listdir(adir),
        open(os.path.join(adir, "appendonly.aof.manifest")).read(),
        srv.output())
    r.stop()
    # And back: redis-server's own AOF (command base) into goblind.
    rd2 = e2e.tmpdir()
    r = e2e.redis_server("--dir", rd2, "--appendonly", "yes",
                         "--aof-use-rdb-preamble", "no")
    rc = r.client()
    run(rc, cmds + lists)
    call(rc, b"BGREWRITEAOF")
    time.sleep(0.5)
    call(rc, b"SET", b"later", b"1")
    want = contents(rc)
    r.stop()
    gd2 = e2e.tmpdir()
    move_aof(rd2, gd2)
    srv = aof_goblind(gd2)
    got = contents(srv.client())
    assert got == want, "goblind: %r\nwant %r" % (got, want)
    srv.stop()


def test_goblind_loads_redis_rdb_preamble_base():
    rd = e2e.tmpdir()
    r = e2e.redis_server("--dir", rd, "--appendonly", "yes",
                         "--aof-use-rdb-preamble", "yes")
    rc = r.client()
    cmds, _ = fill(rc)
    run(rc, cmds)
    call(rc, b"BGREWRITEAOF")
    time.sleep(0.5)
    call(rc, b"SET", b"later", b"1")
    want = contents(rc)
    r.stop()
    assert any(n.endswith(".base.rdb")
               for n in os.listdir(os.path.join(rd, "appendonlydir")))
    gd = e2e.tmpdir()
    move_aof(rd, gd)
    srv = aof_goblind(gd)
    got = contents(srv.client())
    assert got == want, "goblind: %r\nwant %r" % (got, want)
    srv.stop()


e2e.run_tests([
    test_always_kill9_loses_no_acknowledged_write,
    test_always_kill9_at_random_moments,
    test_everysec_kill9_loses_at_most_about_a_second,
    test_kill9_during_rewrite_loses_nothing,
    test_ring_writes_reach_the_aof,
    test_torn_tail_is_cut_with_a_log_line,
    test_config_set_appendonly_at_runtime,
    test_redis_server_loads_goblind_aof_and_back,
    test_goblind_loads_redis_rdb_preamble_base,
])
