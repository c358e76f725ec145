"""test_rdb_export.py - goblind --export-rdb FILE writes the data it
loaded as a Redis RDB file: Debian's redis-server 7.0 loads it with
every database, key, type, value and deadline as goblind held them, and
goblind imports it back to the same.

    /usr/bin/python3 test_rdb_export.py GOBLIND
"""
import os
import subprocess
import sys

import e2e
import repl_data


def saved_goblind(goblind, seed):
    """A goblind directory with a snapshot of a seeded fill, and the
    dump of what it held."""
    srv = e2e.goblind(goblind, "--save", "")
    d = os.path.dirname(srv.logfile)
    c = srv.client()
    repl_data.fill(c, seed)
    want = repl_data.dump(c)
    c.call(b"CONFIG", b"SET", b"dir", d.encode())
    assert c.call(b"SAVE") == ("+", b"OK")
    c.close()
    e2e.check_stopped_cleanly(srv)
    return d, want


def export(goblind, d, name):
    path = os.path.join(d, name)
    r = subprocess.run([goblind, "--dir", d, "--port", "0", "--save", "",
                        "--export-rdb", path], capture_output=True,
                       timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert b"Exported" in r.stdout, r.stdout
    return path


def test_redis_server_loads_the_export(goblind):
    d, want = saved_goblind(goblind, 7)
    export(goblind, d, "out.rdb")
    redis = e2e.redis_server("--dir", d, "--dbfilename", "out.rdb")
    c = redis.client()
    got = repl_data.dump(c)
    c.close()
    redis.kill_now()
    err = repl_data.differences(want, got, ("goblind", "redis-server"))
    assert err is None, err


def test_goblind_imports_its_own_export(goblind):
    d, want = saved_goblind(goblind, 8)
    path = export(goblind, d, "back.rdb")
    srv = e2e.goblind(goblind, "--save", "", "--import-rdb", path)
    c = srv.client()
    got = repl_data.dump(c)
    c.close()
    e2e.check_stopped_cleanly(srv)
    err = repl_data.differences(want, got, ("before", "imported"))
    assert err is None, err


def test_an_empty_store_exports_a_loadable_file(goblind):
    d = e2e.tmpdir()
    export(goblind, d, "empty.rdb")
    redis = e2e.redis_server("--dir", d, "--dbfilename", "empty.rdb")
    c = redis.client()
    assert e2e.plain(c.call(b"DBSIZE")) == 0
    c.close()
    redis.kill_now()


def test_redis_check_rdb_accepts_the_export(goblind):
    d, _ = saved_goblind(goblind, 9)
    path = export(goblind, d, "check.rdb")
    r = subprocess.run(["redis-check-rdb", path], capture_output=True,
                       timeout=60)
    assert r.returncode == 0 and b"RDB looks OK" in r.stdout, r.stdout


def main():
    e2e.run_tests([test_redis_server_loads_the_export,
                   test_goblind_imports_its_own_export,
                   test_an_empty_store_exports_a_loadable_file,
                   test_redis_check_rdb_accepts_the_export],
                  sys.argv[1])


if __name__ == "__main__":
    main()
