"""test_config_diff.py - goblind's settings against redis-server 7.0.15:

  * every parameter redis-server's CONFIG GET * lists, goblind's CONFIG GET
    returns too;
  * CONFIG SET of Redis's own default value gets the same answer from both;
  * a set of invalid (and edge) values gets the same error text from both,
    and a value both accept reads back the same;
  * a config file in the shape of Redis's test suite's default.conf starts
    goblind, and the start-up sequence of Redis's test harness (FLUSHALL,
    CONFIG SET of the encoding and limit settings under their old ziplist
    names, lazyfree, activedefrag, appendonly...) answers no error.

The few settings where Goblin differs on purpose (docs/config.md) are
listed in LIVE_ON_REDIS and PROTECTED_ON_REDIS.

Usage: test_config_diff.py GOBLIND
"""
import sys

import e2e

# CONFIG SET changes these on Redis; goblind reads them at start only.
LIVE_ON_REDIS = {"port", "bind", "tls-port", "tls-cert-file", "tls-key-file",
                 "tls-ca-cert-file", "tls-auth-clients"}
# Redis refuses these unless enable-protected-configs; goblind allows them.
PROTECTED_ON_REDIS = {"dir", "dbfilename"}
# Not probed with odd values: they would lock the test's own client out or
# move files (the values both accept may still differ in effect).
NOT_PROBED = LIVE_ON_REDIS | PROTECTED_ON_REDIS | {
    "requirepass", "maxclients", "unixsocket", "logfile", "pidfile",
    "save", "client-output-buffer-limit", "maxmemory-clients",
    "latency-tracking-info-percentiles",
    # redis-server reloads its TLS context for these and fails without
    # certificates; Goblin only keeps them.
    "tls-cluster", "tls-replication"}
VALUES = ["xyz!", "-1", "0", "1", "", "99999999999999999999", "1k", "1kb",
          "+1", "010", "1.5", "65536", "2147483648", "4294967296",
          "9223372036854775807", "-9223372036854775808", "YES", "no", "A"]


def all_settings(c):
    t, v = c.call("CONFIG", "GET", "*")
    assert t == "*", (t, v)
    return {v[i][1].decode(): v[i + 1][1] for i in range(0, len(v), 2)}


def setting(c, name):
    t, v = c.call("CONFIG", "GET", name)
    assert t == "*" and len(v) == 2, (name, t, v)
    return v[1][1]


def answer(reply):
    t, v = reply
    return ("ok",) if t == "+" else ("err", v)


def test_every_redis_parameter(path):
    f = e2e.Failures()
    red = e2e.redis_server()
    gob = e2e.goblind(path)
    rc, gc = red.client(), gob.client()
    names = all_settings(rc)
    print("    redis-server lists %d parameters" % len(names))
    mine = all_settings(gc)
    for name in sorted(names):
        t, v = gc.call("CONFIG", "GET", name)
        f.check(t == "*" and len(v) == 2 and v[0][1] == name.encode(),
                "CONFIG GET %s on goblind: %r" % (name, (t, v)))
        f.check(name in mine, "CONFIG GET * on goblind lacks %s" % name)
    e2e.check_stopped_cleanly(gob)
    red.stop()
    f.finish()


def test_set_redis_defaults(path):
    f = e2e.Failures()
    red = e2e.redis_server()
    gob = e2e.goblind(path)
    rc, gc = red.client(), gob.client()
    for name, value in sorted(all_settings(rc).items()):
        if name in LIVE_ON_REDIS | PROTECTED_ON_REDIS:
            continue
        want = answer(rc.call("CONFIG", "SET", name, value))
        got = answer(gc.call("CONFIG", "SET", name, value))
        f.eq(got, want, "CONFIG SET %s %r" % (name, value))
    e2e.check_stopped_cleanly(gob)
    red.stop()
    f.finish()


def test_invalid_values(path):
    f = e2e.Failures()
    red = e2e.redis_server()
    gob = e2e.goblind(path)
    rc, gc = red.client(), gob.client()
    defaults = all_settings(rc)
    mine = all_settings(gc)
    probed = 0
    for name in sorted(defaults):
        if name in NOT_PROBED:
            continue
        # One pipeline per setting and server: set, read back, restore.
        def run(c, default):
            cmds = []
            for value in VALUES:
                cmds += [["CONFIG", "SET", name, value],
                         ["CONFIG", "GET", name],
                         ["CONFIG", "SET", name, default]]
            return c.pipeline(cmds)
        want_all, got_all = run(rc, defaults[name]), run(gc, mine[name])
        for i, value in enumerate(VALUES):
            want, got = answer(want_all[3 * i]), answer(got_all[3 * i])
            probed += 1
            f.eq(got, want, "CONFIG SET %s %r" % (name, value))
            if want == got == ("ok",):
                f.eq(got_all[3 * i + 1], want_all[3 * i + 1],
                     "CONFIG GET %s after %r" % (name, value))
    print("    %d values compared" % probed)
    # Several pairs: all or none, on both.
    for args in (["hz", "20", "maxmemory", "x"],
                 ["maxmemory", "1mb", "timeout", "-1"],
                 ["hz", "20", "hz", "30"],
                 ["no-such-setting", "1"],
                 ["hz", "20", "databases", "4"]):
        want = answer(rc.call("CONFIG", "SET", *args))
        got = answer(gc.call("CONFIG", "SET", *args))
        f.eq(got, want, "CONFIG SET %r" % args)
        f.eq(setting(gc, "hz"), setting(rc, "hz"), "hz after %r" % args)
    e2e.check_stopped_cleanly(gob)
    red.stop()
    f.finish()


# The directives of Redis's tests/assets/default.conf that do not name
# files or ports (the harness passes those itself).
DEFAULT_CONF = """\
always-show-logo yes
notify-keyspace-events KEA
daemonize no
timeout 0
loglevel verbose
databases 16
latency-monitor-threshold 1
repl-diskless-sync-delay 0
rdbcompression yes
slave-serve-stale-data yes
appendonly no
appendfsync everysec
no-appendfsync-on-rewrite no
activerehashing yes
enable-protected-configs yes
enable-debug-command yes
enable-module-command yes
propagation-error-behavior panic
save 900 1
save 300 10
save 60 10000
"""

HARNESS = [
    ["FLUSHALL"],
    ["CONFIG", "SET", "hash-max-ziplist-entries", "512"],
    ["CONFIG", "SET", "hash-max-ziplist-value", "64"],
    ["CONFIG", "SET", "zset-max-ziplist-entries", "128"],
    ["CONFIG", "SET", "zset-max-ziplist-value", "64"],
    ["CONFIG", "SET", "list-max-ziplist-size", "-2"],
    ["CONFIG", "SET", "set-max-intset-entries", "512"],
    ["CONFIG", "SET", "appendonly", "no"],
    ["CONFIG", "SET", "activedefrag", "no"],
    ["CONFIG", "SET", "lazyfree-lazy-eviction", "no"],
    ["CONFIG", "SET", "lazyfree-lazy-expire", "no"],
    ["CONFIG", "SET", "lazyfree-lazy-server-del", "no"],
    ["CONFIG", "SET", "lazyfree-lazy-user-del", "no"],
    ["CONFIG", "SET", "lazyfree-lazy-user-flush", "no"],
    ["CONFIG", "SET", "latency-tracking", "yes"],
    ["CONFIG", "SET", "maxmemory", "0"],
    ["CONFIG", "SET", "maxmemory-policy", "noeviction"],
    ["CONFIG", "SET", "notify-keyspace-events", ""],
    ["CONFIG", "SET", "slowlog-log-slower-than", "10000"],
    ["CONFIG", "SET", "busy-reply-threshold", "5000"],
    ["CONFIG", "SET", "proto-max-bulk-len", "512mb"],
    ["CONFIG", "SET", "client-query-buffer-limit", "1gb"],
    ["CONFIG", "SET", "save", ""],
    ["CONFIG", "SET", "hz", "10"],
    ["CONFIG", "SET", "list-compress-depth", "0"],
    ["CONFIG", "SET", "stream-node-max-bytes", "4096"],
    ["CONFIG", "SET", "hash-max-ziplist-entries", "0",
     "zset-max-ziplist-entries", "0"],
    ["CONFIG", "RESETSTAT"],
]


def test_harness_start(path):
    f = e2e.Failures()
    d = e2e.tmpdir()
    conf = d + "/default.conf"
    with open(conf, "w") as out:
        out.write(DEFAULT_CONF)
    gob = e2e.goblind(path, "--save", "", conf=conf)
    c = gob.client()
    f.eq(setting(c, "databases"), b"16", "databases from the file")
    f.eq(setting(c, "notify-keyspace-events"), b"AKE", "notify from KEA")
    f.eq(setting(c, "save"), b"", "--save '' clears the file's lines")
    red = e2e.redis_server()
    rc = red.client()
    for cmd in HARNESS:
        f.eq(answer(c.call(*cmd)), ("ok",), " ".join(cmd))
        f.eq(answer(rc.call(*cmd)), ("ok",), "redis: " + " ".join(cmd))
    e2e.check_stopped_cleanly(gob)
    red.stop()
    f.finish()


ALL = [test_every_redis_parameter, test_set_redis_defaults,
       test_invalid_values, test_harness_start]

if __name__ == "__main__":
    chosen = [t for t in ALL if t.__name__ in sys.argv[2:]] or ALL
    e2e.run_tests(chosen, sys.argv[1])
