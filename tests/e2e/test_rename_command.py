"""test_rename_command.py - rename-command in the config file, compared
with redis-server 7.0.15 started with the same lines: the old name is an
unknown command (and so in MULTI and in scripts), the new one runs it,
NEWNAME "" disables a command, COMMAND INFO / DOCS / GETKEYS / LIST /
COUNT see the table as calls do (a renamed command keeps its own name in
their replies), ACL rules and INFO commandstats keep the original names,
CONFIG REWRITE keeps the lines, and a bad line stops the server with
Redis's report. Unix socket, TCP and the ring (RESP, SBE Argv frames and
a typed SBE frame) all see the same table.

Usage: test_rename_command.py GOBLIND
"""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402

LINES = ['rename-command FLUSHALL ""',
         'rename-command get fetch',
         'rename-command CONFIG cfg',
         'rename-command set put',
         'rename-command put store']


def conf_file(lines):
    path = os.path.join(e2e.tmpdir(), "rename.conf")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def start_pair():
    """goblind and redis-server, each with its own copy of LINES."""
    g = e2e.goblind(GOBLIND, conf=conf_file(LINES))
    conf = conf_file(LINES)
    d = e2e.tmpdir()
    sock = os.path.join(d, "redis.sock")
    logfile = os.path.join(d, "redis.log")
    argv = [e2e.REDIS_SERVER, conf, "--port", "0", "--unixsocket", sock,
            "--save", "", "--appendonly", "no", "--daemonize", "no",
            "--dir", d, "--logfile", logfile]
    r = e2e.Server(argv, sock, 0, logfile, "redis-server").start()
    return g, r


def both(g, r, *args):
    a, b = g.client(), r.client()
    out = (a.call(*args), b.call(*args))
    a.close()
    b.close()
    return out


def same(fails, g, r, *args):
    got, want = both(g, r, *args)
    fails.eq(got, want, " ".join(str(x) for x in args))
    return got


def count(srv):
    c = srv.client()
    n = c.call("COMMAND", "COUNT")[1]
    c.close()
    return n


def listed(srv):
    c = srv.client()
    names = {x for _, x in c.call("COMMAND", "LIST")[1]}
    c.close()
    return names


def test_calls_follow_the_new_names(g, r):
    fails = e2e.Failures()
    for args in (["FLUSHALL"], ["GET", "a"], ["SET", "a", "1"],
                 ["PUT", "a", "1"], ["STORE", "a", "1"], ["FETCH", "a"],
                 ["fetch", "a"], ["CONFIG", "GET", "maxmemory"],
                 ["CFG", "GET", "maxmemory"], ["CFG", "SET",
                                               "maxmemory-samples", "7"],
                 ["CFG", "GET", "maxmemory-samples"], ["CFG", "HELP", "x"],
                 ["MULTI"], ["GET", "a"], ["FETCH", "a"], ["EXEC"]):
        same(fails, g, r, *args)
    for script in ("return redis.call('get', 'a')",
                   "return redis.call('fetch', 'a')",
                   "return redis.pcall('flushall')"):
        same(fails, g, r, "EVAL", script, "0")
    fails.finish()


def test_introspection_sees_the_table(g, r):
    fails = e2e.Failures()
    got, want = both(g, r, "COMMAND", "INFO", "get", "fetch", "flushall",
                     "set", "store", "cfg", "config", "config|get",
                     "cfg|get", "cfg|nosuch")
    names = [None if x[1] is None else x[1][0][1] for x in got[1]]
    fails.eq(names, [None if x[1] is None else x[1][0][1] for x in want[1]],
             "COMMAND INFO names")
    fails.eq(names, [None, b"get", None, None, b"set", b"config", None,
                     None, b"config|get", None], "COMMAND INFO names")
    got, want = both(g, r, "COMMAND", "DOCS", "fetch", "get", "cfg|set")
    fails.eq([k for k, _ in got[1]], [k for k, _ in want[1]],
             "COMMAND DOCS keys")
    for args in (["COMMAND", "GETKEYS", "fetch", "a"],
                 ["COMMAND", "GETKEYS", "get", "a"],
                 ["COMMAND", "GETKEYS", "store", "k", "v"],
                 ["COMMAND", "GETKEYSANDFLAGS", "store", "k", "v"]):
        same(fails, g, r, *args)
    gl, rl = listed(g), listed(r)
    for name in (b"get", b"fetch", b"flushall", b"set", b"store", b"config",
                 b"config|get", b"cfg"):
        fails.eq(name in gl, name in rl, "COMMAND LIST has " + repr(name))
    fails.finish()


def test_count_drops_only_disabled(g, r):
    """COMMAND COUNT loses one (FLUSHALL); renamed commands still count.
    Goblin's table holds only what it implements, so the difference is
    what compares."""
    plain_g = e2e.goblind(GOBLIND)
    plain_r = e2e.redis_server()
    assert count(plain_g) - count(g) == count(plain_r) - count(r) == 1
    gl, pl = {b"flushall"} | listed(g), listed(plain_g)
    assert gl == pl, (gl ^ pl)
    plain_g.stop()
    plain_r.stop()


def test_acl_and_stats_keep_the_original_names(g, r):
    fails = e2e.Failures()
    for args in (["ACL", "SETUSER", "u", "on", "nopass", "~*", "+get",
                  "+set"],
                 ["ACL", "SETUSER", "v", "+fetch"],
                 ["ACL", "DRYRUN", "u", "fetch", "a"],
                 ["ACL", "DRYRUN", "u", "get", "a"]):
        same(fails, g, r, *args)
    a, b = g.client(), r.client()
    for c in (a, b):
        c.call("AUTH", "u", "x")
    fails.eq(a.call("FETCH", "a"), b.call("FETCH", "a"), "FETCH as u")
    fails.eq(a.call("STORE", "b", "2"), b.call("STORE", "b", "2"),
             "STORE as u")
    gi, ri = (c.call("INFO", "commandstats")[1] for c in (a, b))
    for field in (b"cmdstat_get:", b"cmdstat_set:", b"cmdstat_fetch:",
                  b"cmdstat_store:", b"cmdstat_flushall:"):
        fails.eq(field in gi, field in ri, "INFO commandstats " + repr(field))
    fails.finish()


def test_other_transports(g, r):
    """TCP answers as the Unix socket; the ring's RESP and SBE Argv
    frames use the same table, and a typed SBE frame for a renamed
    command is refused like its old name."""
    c = g.client(tcp=True)
    assert c.call("GET", "a")[1].startswith(b"ERR unknown command 'GET'")
    assert c.call("FETCH", "a")[0] == "$"
    c.close()
    ring = os.path.join(e2e.tmpdir(), "r.ring")
    srv = e2e.goblind(GOBLIND, "--ring", ring, "64k", conf=conf_file(LINES))
    cli = os.path.join(os.path.dirname(GOBLIND), "..", "clients",
                       "goblin-cli")

    def ring_cli(*args):
        return subprocess.run([cli, "--ring", ring] + list(args),
                              capture_output=True, text=True).stdout

    assert "OK" in ring_cli("store", "k", "v")
    assert "unknown command 'set'" in ring_cli("set", "k", "v")
    assert "v" in ring_cli("fetch", "k")
    assert "unknown command 'get'" in ring_cli("--sbe", "get", "k")
    assert "unknown command 'flushall'" in ring_cli("flushall")
    srv.stop()


def test_rewrite_keeps_the_lines(g, r):
    for srv in (g, r):
        c = srv.client()
        assert c.call("CFG", "REWRITE") == ("+", b"OK")
        c.close()
        with open(srv.argv[1]) as f:
            text = f.read()
        for line in LINES:
            assert text.count(line + "\n") == 1, (srv.name, line, text)


def test_bad_lines_stop_the_server():
    for line in ('rename-command nosuch foo', 'rename-command get set',
                 'rename-command get', 'rename-command get a b',
                 'rename-command config|get foo'):
        conf = conf_file([line])
        outs = []
        runs = [[GOBLIND, conf, "--port", "0"]]
        # redis-server asserts (and dumps core) on a subcommand name;
        # Goblin says there is no such command.
        if "|" not in line:
            runs.append([e2e.REDIS_SERVER, conf, "--port", "0"])
        for argv in runs:
            p = subprocess.run(argv, capture_output=True, text=True,
                               timeout=20)
            assert p.returncode != 0, (argv, p.stdout, p.stderr)
            text = p.stdout + p.stderr
            tail = text[text.index(">>> '"):].splitlines()[:2]
            outs.append(tail[1])   # the reason (Goblin quotes the words)
        if "|" in line:
            assert outs[0] == "No such command in rename-command", outs
        else:
            assert outs[0] == outs[1], outs


def test_stops_cleanly(g, r):
    e2e.check_stopped_cleanly(g)
    r.stop()


def main():
    g, r = start_pair()
    tests = [test_calls_follow_the_new_names,
             test_introspection_sees_the_table,
             test_count_drops_only_disabled,
             test_acl_and_stats_keep_the_original_names,
             test_other_transports,
             test_rewrite_keeps_the_lines,
             test_stops_cleanly]
    e2e.run_tests([test_bad_lines_stop_the_server] +
                  [bind(t, g, r) for t in tests])


def bind(fn, *args):
    def run():
        fn(*args)
    run.__name__ = fn.__name__
    return run


if __name__ == "__main__":
    GOBLIND = os.path.abspath(sys.argv[1])
    main()
