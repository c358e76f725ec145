"""test_function_persist.py - FUNCTION libraries survive every file
goblind writes, against Debian's redis-server 7.0:

  * a snapshot: SAVE, restart, the same libraries and FCALL works;
  * FUNCTION LOAD/DELETE/FLUSH/RESTORE count as changes (save points);
  * goblind --export-rdb: redis-server loads goblind's libraries, and
    goblind imports redis-server's dump.rdb with its libraries;
  * the AOF: FUNCTION commands go out as Redis sends them; redis-server
    loads goblind's AOF directory (incremental part and rewritten base)
    and goblind loads redis-server's (command base and RDB preamble).

    /usr/bin/python3 test_function_persist.py GOBLIND
"""
import os
import shutil
import subprocess
import sys
import time

import e2e

GOBLIND = sys.argv[1]

LIB1 = (b"#!lua name=lib1\n"
        b"redis.register_function('f1', function(keys, args) "
        b"return redis.call('INCR', keys[1]) end)")
LIB2 = (b"#!lua name=lib2\n"
        b"redis.register_function{function_name='f2', callback="
        b"function(keys, args) return args[1] end, flags={'no-writes'}}")


def call(c, *args):
    return e2e.plain(c.call(*args))


def libs(c):
    out = call(c, b"FUNCTION", b"LIST", b"WITHCODE")
    return sorted(repr(x) for x in out)


def load_libs(c):
    assert call(c, b"FUNCTION", b"LOAD", LIB1) == b"lib1"
    assert call(c, b"FUNCTION", b"LOAD", LIB2) == b"lib2"
    assert call(c, b"FCALL", b"f1", b"1", b"k") == 1


def works(c):
    assert call(c, b"FCALL", b"f1", b"1", b"k") is not None
    assert call(c, b"FCALL_RO", b"f2", b"0", b"x") == b"x"


def save_libraries(d):
    """Loads both libraries into a goblind in d, SAVEs, stops it; returns
    FUNCTION LIST WITHCODE as it was."""
    srv = e2e.goblind(GOBLIND, "--dir", d, "--save", "")
    c = srv.client()
    load_libs(c)
    want = libs(c)
    assert call(c, b"SAVE") == b"OK"
    e2e.check_stopped_cleanly(srv)
    return want


def test_snapshot_restart():
    d = e2e.tmpdir()
    want = save_libraries(d)
    srv = e2e.goblind(GOBLIND, "--dir", d, "--save", "")
    c = srv.client()
    assert libs(c) == want
    works(c)
    assert call(c, b"GET", b"k") == b"2"
    e2e.check_stopped_cleanly(srv)


def changes(c):
    info = call(c, b"INFO", b"persistence").decode()
    for line in info.split("\r\n"):
        if line.startswith("rdb_changes_since_last_save:"):
            return int(line.split(":")[1])
    raise AssertionError(info)


def test_function_commands_count_as_changes():
    srv = e2e.goblind(GOBLIND, "--save", "")
    c = srv.client()
    n = changes(c)
    call(c, b"FUNCTION", b"LOAD", LIB1)
    assert changes(c) == n + 1
    dump = call(c, b"FUNCTION", b"DUMP")
    call(c, b"FUNCTION", b"DELETE", b"lib1")
    assert changes(c) == n + 2
    call(c, b"FUNCTION", b"RESTORE", dump)
    assert changes(c) == n + 3
    call(c, b"FUNCTION", b"FLUSH")
    assert changes(c) == n + 4
    # A refused load changes nothing.
    assert c.call(b"FUNCTION", b"LOAD", b"#!lua name=x\nbad(")[0] == "-"
    assert changes(c) == n + 4
    e2e.check_stopped_cleanly(srv)


def test_rdb_both_ways():
    d = e2e.tmpdir()
    want = save_libraries(d)
    path = os.path.join(d, "out.rdb")
    r = subprocess.run([GOBLIND, "--dir", d, "--port", "0", "--save", "",
                        "--export-rdb", path], capture_output=True,
                       timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    redis = e2e.redis_server("--dir", d, "--dbfilename", "out.rdb")
    rc = redis.client()
    assert libs(rc) == want
    works(rc)
    # And back: redis-server's dump.rdb into goblind.
    assert call(rc, b"FUNCTION", b"DELETE", b"lib2") == b"OK"
    want = libs(rc)
    assert call(rc, b"SAVE") == b"OK"
    redis.stop()
    srv = e2e.goblind(GOBLIND, "--save", "", "--import-rdb", path)
    c = srv.client()
    assert libs(c) == want
    assert call(c, b"FCALL", b"f1", b"1", b"k") == 3
    e2e.check_stopped_cleanly(srv)


def move_aof(src, dst):
    shutil.rmtree(os.path.join(dst, "appendonlydir"), ignore_errors=True)
    shutil.copytree(os.path.join(src, "appendonlydir"),
                    os.path.join(dst, "appendonlydir"))


def redis_loads_aof(gd, want):
    """redis-server started on a copy of goblind's AOF directory has the
    same libraries."""
    rd = e2e.tmpdir()
    move_aof(gd, rd)
    r = e2e.redis_server("--dir", rd, "--appendonly", "yes")
    assert libs(r.client()) == want
    r.stop()


def aof_session(c):
    """FUNCTION commands of every kind, leaving lib1 and lib2."""
    load_libs(c)
    dump = call(c, b"FUNCTION", b"DUMP")
    call(c, b"FUNCTION", b"FLUSH")
    call(c, b"FUNCTION", b"RESTORE", dump)
    call(c, b"FUNCTION", b"DELETE", b"lib2")
    call(c, b"FUNCTION", b"LOAD", LIB2)


def test_aof_both_ways():
    gd = e2e.tmpdir()
    srv = e2e.goblind(GOBLIND, "--dir", gd, "--appendonly", "yes")
    c = srv.client()
    aof_session(c)
    want = libs(c)
    srv.stop()
    # goblind restarts from its own AOF; redis-server loads it.
    srv = e2e.goblind(GOBLIND, "--dir", gd, "--appendonly", "yes")
    c = srv.client()
    assert libs(c) == want
    works(c)
    redis_loads_aof(gd, want)
    # A rewritten base carries the libraries (FUNCTION LOAD commands).
    assert call(c, b"BGREWRITEAOF") is not None
    time.sleep(1.0)
    call(c, b"SET", b"later", b"1")
    srv.stop()
    srv = e2e.goblind(GOBLIND, "--dir", gd, "--appendonly", "yes")
    assert libs(srv.client()) == want
    srv.stop()
    redis_loads_aof(gd, want)
    # And back: redis-server's AOF, both base forms, into goblind.
    for preamble in ("no", "yes"):
        rd = e2e.tmpdir()
        r = e2e.redis_server("--dir", rd, "--appendonly", "yes",
                             "--aof-use-rdb-preamble", preamble)
        rc = r.client()
        call(rc, b"FUNCTION", b"LOAD", LIB1)
        call(rc, b"BGREWRITEAOF")
        time.sleep(1.0)
        call(rc, b"FUNCTION", b"LOAD", LIB2)
        want = libs(rc)
        r.stop()
        gd2 = e2e.tmpdir()
        move_aof(rd, gd2)
        srv = e2e.goblind(GOBLIND, "--dir", gd2, "--appendonly", "yes")
        c = srv.client()
        assert libs(c) == want, (preamble, libs(c), want)
        works(c)
        srv.stop()


e2e.run_tests([
    test_snapshot_restart,
    test_function_commands_count_as_changes,
    test_rdb_both_ways,
    test_aof_both_ways,
])
