"""test_persist.py - goblind's snapshots and operations end to end:

  * SAVE and a restart bring back every type (strings in each encoding,
    keys with TTLs, small and large hashes and sorted sets); a stale
    temporary file of a dead save is removed at start;
  * BGSAVE, BGSAVE SCHEDULE, LASTSAVE and INFO persistence, a BGSAVE child
    killed by a signal (status err, no temporary file left);
  * save policies (CONFIG SET save, a config file with two save lines),
    SIGTERM saves with a policy and writes nothing without one;
  * SHUTDOWN SAVE / NOSAVE / ABORT, CONFIG SET dir and dbfilename errors;
  * a final save that fails keeps goblind running (SIGTERM, SHUTDOWN),
    SHUTDOWN FORCE stops it anyway;
  * a truncated, a corrupted and a wrong-version file: goblind refuses to
    start, names the file and the problem, and leaves the file alone;
  * --import-rdb of a dump written by Debian's redis-server in the test;
  * sd_notify READY=1 / STOPPING=1 to a socket the test owns;
  * --daemonize yes with --pidfile.

    /usr/bin/python3 test_persist.py GOBLIND
"""

import os
import re
import signal
import socket
import subprocess
import sys
import time

import e2e

GOBLIND = sys.argv[1]
F = e2e.Failures()
DUMP = "dump.goblin"


def call(c, *args):
    return e2e.plain(c.call(*args))


def fill(c):
    """Every type and encoding, with and without TTLs."""
    cmds = [[b"SET", b"int", b"12345"], [b"SET", b"emb", b"short"],
            [b"SET", b"raw", b"x" * 100], [b"SET", b"bin", b"a\x00\r\nb"],
            [b"SET", b"ttl", b"v", b"EX", b"5000"],
            [b"HSET", b"hsmall", b"f1", b"v1", b"f2", b"2"],
            [b"ZADD", b"zsmall", b"1.5", b"a", b"-inf", b"b", b"0", b"c"],
            [b"HSET", b"httl", b"f", b"v"], [b"PEXPIRE", b"httl", b"900000"],
            [b"ZADD", b"zttl", b"1", b"m"],
            [b"EXPIREAT", b"zttl", b"%d" % (time.time() + 7200)]]
    args = [b"HSET", b"hbig"]
    for i in range(300):
        args += [b"f%d" % i, b"value-%d" % i]
    cmds.append(args)
    args = [b"ZADD", b"zbig"]
    for i in range(300):
        args += [b"%r" % (i * 0.25 - 30), b"member-%d" % i]
    cmds.append(args)
    for r in c.pipeline(cmds):
        e2e.plain(r)


def contents(c):
    """Every key: type, encoding, value, remaining ms (None: no TTL)."""
    out = {}
    for k in call(c, b"KEYS", b"*"):
        t = call(c, b"TYPE", k)
        if t == b"string":
            v = call(c, b"GET", k)
        elif t == b"hash":
            v = sorted(call(c, b"HGETALL", k))
        else:
            v = call(c, b"ZRANGE", k, b"0", b"-1", b"WITHSCORES")
        pttl = call(c, b"PTTL", k)
        out[k] = (t, call(c, b"OBJECT", b"ENCODING", k), v,
                  None if pttl < 0 else pttl)
    return out


def same_contents(a, b, what):
    F.eq(sorted(a), sorted(b), what + ": keys")
    for k in a:
        if k not in b:
            continue
        x, y = a[k], b[k]
        F.eq(x[:3], y[:3], "%s: key %r" % (what, k))
        if (x[3] is None) != (y[3] is None) or (
                x[3] is not None and abs(x[3] - y[3]) > 5000):
            F.check(False, "%s: TTL of %r: %r vs %r" % (what, k, x[3], y[3]))


def start(d, *extra, conf=None):
    return e2e.goblind(GOBLIND, "--dir", d, *extra, conf=conf)


def info(c, field):
    text = call(c, b"INFO", b"persistence").decode()
    m = re.search(r"^%s:(.*)\r$" % field, text, re.M)
    return m.group(1) if m else None


def wait_bgsave(c):
    for _ in range(2000):
        if info(c, "rdb_bgsave_in_progress") == "0":
            return
        time.sleep(0.01)
    F.check(False, "BGSAVE did not end")


def test_round_trip():
    d = e2e.tmpdir()
    srv = start(d)
    c = srv.client()
    fill(c)
    before = contents(c)
    F.eq(call(c, b"SAVE"), b"OK", "SAVE")
    F.check(os.path.exists(os.path.join(d, DUMP)), "SAVE wrote the file")
    F.eq(info(c, "rdb_changes_since_last_save"), "0", "dirty after SAVE")
    F.eq(info(c, "rdb_saves"), "1", "rdb_saves")
    srv.kill_now()
    # A temporary file of a save whose process is gone is removed at start.
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = os.path.join(d, DUMP + ".tmp-%d" % dead.pid)
    open(stale, "w").close()
    srv = start(d)
    c = srv.client()
    F.check(not os.path.exists(stale), "stale temporary file removed")
    same_contents(before, contents(c), "after SAVE and restart")
    F.eq(info(c, "rdb_last_load_keys_loaded"), str(len(before)),
         "rdb_last_load_keys_loaded")
    F.check("DB loaded from disk" in srv.output(), "log: DB loaded")
    e2e.check_stopped_cleanly(srv)


def test_bgsave():
    d = e2e.tmpdir()
    srv = start(d)
    c = srv.client()
    fill(c)
    before = contents(c)
    t0 = int(time.time())
    F.eq(call(c, b"BGSAVE"), b"Background saving started", "BGSAVE")
    r = c.call(b"BGSAVE")
    F.check(r in (("-", b"ERR Background save already in progress"),
                  ("+", b"Background saving started")), "BGSAVE twice: %r"
            % (r,))
    wait_bgsave(c)
    F.eq(call(c, b"BGSAVE", b"SCHEDULE")[:17], b"Background saving",
         "BGSAVE SCHEDULE")
    wait_bgsave(c)
    F.eq(c.call(b"BGSAVE", b"NOW")[0], "-", "BGSAVE NOW is a syntax error")
    F.eq(info(c, "rdb_last_bgsave_status"), "ok", "bgsave status")
    F.check(call(c, b"LASTSAVE") >= t0 - 1, "LASTSAVE moved")
    F.check("Background saving terminated with success" in srv.output(),
            "log: bgsave success")
    # A child killed by a signal: status err, its temporary file gone.
    c.pipeline([[b"SET", b"pad:%d" % i, b"y" * 200] for i in range(20000)])
    F.eq(call(c, b"BGSAVE"), b"Background saving started", "BGSAVE 2")
    pid = int(re.findall(r"Background saving started by pid (\d+)",
                         srv.output())[-1])
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    wait_bgsave(c)
    killed = "terminated by signal 9" in srv.output()
    F.eq(info(c, "rdb_last_bgsave_status"), "err" if killed else "ok",
         "status after a killed child")
    F.eq([n for n in os.listdir(d) if ".tmp-" in n], [],
         "no temporary file left")
    srv.kill_now()
    srv = start(d)
    got = contents(srv.client())
    if killed:
        same_contents(before, got, "after BGSAVE, child killed")
    e2e.check_stopped_cleanly(srv)


def test_policies_and_signals():
    # Without a save policy (the default) SIGTERM writes nothing.
    d = e2e.tmpdir()
    srv = start(d)
    c = srv.client()
    F.eq(call(c, b"CONFIG", b"GET", b"save"), [b"save", b""],
         "default save is empty")
    c.call(b"SET", b"k", b"v")
    e2e.check_stopped_cleanly(srv)
    F.eq(os.listdir(d), [], "no file without a policy")
    # Two save lines in a config file add up; SIGTERM saves.
    conf = os.path.join(d, "goblind.conf")
    with open(conf, "w") as f:
        f.write("# policies\nsave 3600 1\nsave 300 100\n")
    srv = start(d, conf=conf)
    c = srv.client()
    F.eq(call(c, b"CONFIG", b"GET", b"save"), [b"save", b"3600 1 300 100"],
         "save lines add up")
    c.call(b"SET", b"k", b"v")
    e2e.check_stopped_cleanly(srv)
    F.check(DUMP in os.listdir(d), "SIGTERM saved with a policy")
    srv = start(d)
    F.eq(call(srv.client(), b"GET", b"k"), b"v", "saved on SIGTERM")
    c = srv.client()
    for bad in (b"1", b"0 1", b"a b", b"1 -1"):
        r = c.call(b"CONFIG", b"SET", b"save", bad)
        F.eq(r, ("-", b"ERR CONFIG SET failed (possibly related to argument "
                      b"'save') - Invalid save parameters"), "save %r" % bad)
    # A policy fires from cron.
    F.eq(call(c, b"CONFIG", b"SET", b"save", b"1 1"), b"OK", "save 1 1")
    c.call(b"SET", b"k2", b"v2")
    time.sleep(1.3)
    for _ in range(300):
        if info(c, "rdb_changes_since_last_save") == "0":
            break
        time.sleep(0.01)
    F.eq(info(c, "rdb_changes_since_last_save"), "0", "policy saved")
    F.check("1 changes in 1 seconds. Saving..." in srv.output(),
            "log: policy")
    r = c.call(b"CONFIG", b"SET", b"dbfilename", b"a/b")
    F.eq(r[0], "-", "dbfilename with a slash")
    r = c.call(b"CONFIG", b"SET", b"dir", os.path.join(d, "nope"))
    F.eq(r[0], "-", "dir that does not exist")
    sub = os.path.join(d, "sub")
    os.mkdir(sub)
    F.eq(call(c, b"CONFIG", b"SET", b"dir", sub), b"OK", "CONFIG SET dir")
    F.eq(call(c, b"CONFIG", b"SET", b"dbfilename", b"x.snap"), b"OK",
         "CONFIG SET dbfilename")
    F.eq(call(c, b"SAVE"), b"OK", "SAVE to the new place")
    F.check(os.path.exists(os.path.join(sub, "x.snap")), "file in new dir")
    # SHUTDOWN ABORT / syntax / SAVE.
    F.eq(c.call(b"SHUTDOWN", b"ABORT"),
         ("-", b"ERR No shutdown in progress."), "SHUTDOWN ABORT")
    F.eq(c.call(b"SHUTDOWN", b"SAVE", b"NOSAVE"),
         ("-", b"ERR syntax error"), "SHUTDOWN SAVE NOSAVE")
    c.call(b"SET", b"k3", b"v3")
    c.send_raw(c.encode([b"SHUTDOWN", b"SAVE"]))
    F.eq(srv.proc.wait(20), 0, "SHUTDOWN SAVE exit code")
    srv = start(d, "--dir", sub, "--dbfilename", "x.snap")
    F.eq(call(srv.client(), b"GET", b"k3"), b"v3", "SHUTDOWN SAVE saved")
    c = srv.client()
    c.call(b"SET", b"k4", b"v4")
    c.send_raw(c.encode([b"SHUTDOWN", b"NOSAVE"]))
    srv.proc.wait(20)
    srv = start(d, "--dir", sub, "--dbfilename", "x.snap")
    F.eq(call(srv.client(), b"EXISTS", b"k4"), 0, "SHUTDOWN NOSAVE")
    e2e.check_stopped_cleanly(srv)


def refuses(d, what, needle):
    path = os.path.join(d, DUMP)
    with open(path, "rb") as f:
        data = f.read()
    argv = [GOBLIND, "--port", "0", "--dir", d]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=30)
    out = p.stdout.decode("utf-8", "replace")
    F.check(p.returncode != 0, "%s: goblind refused to start" % what)
    F.check(path in out, "%s: message names the file: %s" % (what, out))
    F.check(needle in out, "%s: message says %r: %s" % (what, needle, out))
    with open(path, "rb") as f:
        F.check(f.read() == data, "%s: file left alone" % what)


def test_failed_final_save():
    """A final save that fails keeps goblind running (SIGTERM, SHUTDOWN)
    unless SHUTDOWN FORCE."""
    d = e2e.tmpdir()
    gone = os.path.join(d, "gone")
    os.mkdir(gone)
    srv = start(gone, "--save", "3600 1")
    c = srv.client()
    c.call(b"SET", b"k", b"v")
    os.rmdir(gone)
    srv.proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    F.eq(call(c, b"PING"), b"PONG", "still serving after a failed SIGTERM "
         "save")
    F.check("errors trying to shut down" in srv.output(), "log: SIGTERM "
            "refused")
    F.eq(c.call(b"SHUTDOWN"), ("-", b"ERR Errors trying to SHUTDOWN. Check "
                                    b"logs."), "SHUTDOWN with a failed save")
    F.eq(info(c, "rdb_last_bgsave_status"), "err", "status after failure")
    c.send_raw(c.encode([b"SHUTDOWN", b"FORCE"]))
    F.eq(srv.proc.wait(20), 0, "SHUTDOWN FORCE exits")


def test_corrupt_files():
    d = e2e.tmpdir()
    srv = start(d)
    c = srv.client()
    fill(c)
    call(c, b"SAVE")
    srv.kill_now()
    path = os.path.join(d, DUMP)
    with open(path, "rb") as f:
        good = f.read()
    with open(path, "wb") as f:
        f.write(good[:len(good) // 2])
    refuses(d, "truncated", "truncated")
    bad = bytearray(good)
    bad[len(good) // 2] ^= 0x40
    with open(path, "wb") as f:
        f.write(bad)
    refuses(d, "flipped byte", "checksum")
    bad = bytearray(good)
    bad[8] = 99
    with open(path, "wb") as f:
        f.write(bad)
    refuses(d, "wrong version", "version")
    with open(path, "wb") as f:
        f.write(good)
    srv = start(d)
    F.eq(call(srv.client(), b"DBSIZE"), 11, "the good file loads")
    e2e.check_stopped_cleanly(srv)


def test_import_rdb():
    ref = e2e.redis_server()
    rc = ref.client()
    fill(rc)
    before = contents(rc)
    F.eq(call(rc, b"SAVE"), b"OK", "redis SAVE")
    rdir = call(rc, b"CONFIG", b"GET", b"dir")[1].decode()
    rdb = os.path.join(rdir, "dump.rdb")
    d = e2e.tmpdir()
    srv = start(d, "--import-rdb", rdb)
    got = contents(srv.client())
    for k, v in before.items():   # encodings: Redis's names differ
        before[k] = (v[0], got.get(k, v)[1], v[2], v[3])
    same_contents(before, got, "after --import-rdb")
    F.check("Imported 11 keys" in srv.output(), "log: imported")
    e2e.check_stopped_cleanly(srv)
    ref.kill_now()
    p = subprocess.run([GOBLIND, "--port", "0", "--dir", d, "--import-rdb",
                        os.path.join(d, "missing.rdb")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=30)
    F.check(p.returncode != 0 and b"missing.rdb" in p.stdout,
            "a missing RDB file is an error")


def test_notify_and_daemonize():
    d = e2e.tmpdir()
    sock_path = os.path.join(d, "notify.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(sock_path)
    s.settimeout(20)
    os.environ["NOTIFY_SOCKET"] = sock_path
    try:
        srv = start(d)
    finally:
        del os.environ["NOTIFY_SOCKET"]
    msg = s.recv(4096)
    F.check(msg.startswith(b"READY=1"), "READY=1: %r" % msg)
    srv.stop()
    F.check(s.recv(4096) == b"STOPPING=1", "STOPPING=1")
    s.close()
    # Abstract namespace.
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    name = "goblin-test-%d" % os.getpid()
    s.bind("\0" + name)
    s.settimeout(20)
    os.environ["NOTIFY_SOCKET"] = "@" + name
    try:
        srv = start(d)
    finally:
        del os.environ["NOTIFY_SOCKET"]
    F.check(s.recv(4096).startswith(b"READY=1"), "READY=1 (abstract)")
    srv.kill_now()
    s.close()
    # --daemonize yes --pidfile.
    pidfile = os.path.join(d, "goblind.pid")
    port = e2e.free_port()
    p = subprocess.run([GOBLIND, "--port", str(port), "--bind", "127.0.0.1",
                        "--daemonize", "yes", "--pidfile", pidfile,
                        "--logfile", os.path.join(d, "daemon.log")],
                       timeout=30)
    F.eq(p.returncode, 0, "daemonizing parent exits 0")
    pid = None
    for _ in range(500):
        try:
            with open(pidfile) as f:
                pid = int(f.read())
            c = e2e.Client(("127.0.0.1", port))
            F.eq(call(c, b"PING"), b"PONG", "daemon answers")
            break
        except (OSError, ValueError):
            time.sleep(0.02)
    F.check(pid is not None and pid != p.returncode, "pidfile written")
    if pid:
        os.kill(pid, signal.SIGTERM)
        for _ in range(500):
            if not os.path.exists(pidfile):
                break
            time.sleep(0.02)
        F.check(not os.path.exists(pidfile), "pidfile removed at exit")


def test_config_rewrite():
    d = e2e.tmpdir()
    conf = os.path.join(d, "goblind.conf")
    with open(conf, "w") as f:
        f.write("# a comment\nsave 3600 1\n\n# another\nsave 300 100\n"
                "hz 10\nring-idle backoff\n")
    srv = start(d, conf=conf)
    c = srv.client()
    F.eq(call(c, b"CONFIG", b"SET", b"save", b"10 5"), b"OK", "set save")
    F.eq(call(c, b"CONFIG", b"SET", b"hz", b"20"), b"OK", "set hz")
    F.eq(call(c, b"CONFIG", b"SET", b"maxclients", b"77"), b"OK",
         "set maxclients")
    F.eq(call(c, b"CONFIG", b"REWRITE"), b"OK", "CONFIG REWRITE")
    with open(conf) as f:
        lines = f.read().split("\n")
    F.eq(lines[:6], ["# a comment", "save 10 5", "", "# another", "hz 20",
                     "ring-idle backoff"], "rewritten in place: %r" % lines)
    F.check("# Generated by CONFIG REWRITE" in lines and
            "maxclients 77" in lines, "appended: %r" % lines)
    srv.kill_now()
    srv = start(d, conf=conf)
    c = srv.client()
    F.eq(call(c, b"CONFIG", b"GET", b"save"), [b"save", b"10 5"],
         "rewritten file read back")
    F.eq(call(c, b"CONFIG", b"GET", b"maxclients"), [b"maxclients", b"77"],
         "appended line read back")
    e2e.check_stopped_cleanly(srv)
    srv = start(d)
    F.eq(srv.client().call(b"CONFIG", b"REWRITE"),
         ("-", b"ERR The server is running without a config file"),
         "REWRITE without a file")
    e2e.check_stopped_cleanly(srv)


def main():
    test_config_rewrite()
    test_round_trip()
    test_bgsave()
    test_policies_and_signals()
    test_failed_final_save()
    test_corrupt_files()
    test_import_rdb()
    test_notify_and_daemonize()
    if F.items:
        print("%d failures" % len(F.items))
        sys.exit(1)
    print("persistence tests passed")


if __name__ == "__main__":
    main()
