"""test_command_table.py - goblind's command introspection against
redis-server 7.0.15's: COMMAND INFO and COMMAND DOCS of every command
Goblin implements (RESP2 and RESP3, byte-exact structure), COMMAND,
COUNT and LIST against what is implemented, COMMAND GETKEYS and
GETKEYSANDFLAGS with many keys, "parent|sub" names refused as commands,
and redis-cli's own rendering of COMMAND DOCS.

The only differences allowed are the deliberate ones docs/commands.md
lists, read from lib/commands/goblin-commands.json: Goblin's table holds
only the commands it implements (so COUNT, LIST and a container's
subcommands cover those), commands Redis 7.0 lacks ("entry", compared
with their entry instead), and fields replaced on purpose ("override").
Redis's subcommand lists come from a hash table, in an order that
changes from run to run: those, and maps, compare without order.

Usage: test_command_table.py GOBLIND
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402

OVERLAY = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "..", "..", "lib", "commands", "goblin-commands.json")
INFO_FIELDS = ["name", "arity", "flags", "first_key", "last_key", "step",
               "acl_categories", "tips", "key_specs", "subcommands"]


def load_overlay():
    with open(OVERLAY, encoding="utf-8") as f:
        cmds = json.load(f)["commands"]
    top, specs = [], {}
    for c in cmds:
        top.append(c["name"])
        specs[c["name"]] = c
        for s in c.get("subcommands", []):
            specs[c["name"] + "|" + s["name"]] = s
    return top, specs


def pairs(reply):
    """A map reply (RESP3 '%', or RESP2's flat array) as (k, v) pairs."""
    t, v = reply
    if t == "%":
        return list(v)
    assert t == "*" and len(v) % 2 == 0, reply
    return [(v[i], v[i + 1]) for i in range(0, len(v), 2)]


def remap(reply, items):
    t = reply[0]
    if t == "%":
        return ("%", items)
    return ("*", [x for kv in items for x in kv])


def norm_info(reply, keep):
    """COMMAND INFO entry with its subcommands filtered by keep (full
    names) and sorted: Redis lists them in hash-table order."""
    t, v = reply
    if t != "*":
        return reply
    subs = [norm_info(s, keep) for s in v[9][1]
            if s[1][0][1].decode() in keep]
    subs.sort(key=repr)
    return (t, v[:9] + [(v[9][0], subs)])


def norm_docs(reply, keep):
    """One command's COMMAND DOCS map, subcommands filtered and sorted."""
    items = []
    for k, val in pairs(reply):
        if k[1] == b"subcommands":
            subs = [(n, norm_docs(d, keep)) for n, d in pairs(val)
                    if n[1].decode() in keep]
            subs.sort(key=repr)
            val = remap(val, subs)
            if not subs:
                continue
        items.append((k, val))
    return remap(reply, items)


def to_json(reply):
    """A RESP3 reply as the JSON shapes the data files hold."""
    t, v = reply
    if t == "%":
        return {to_json(a): to_json(b) for a, b in v}
    if t in "*~":
        return [to_json(x) for x in v]
    if t in "$+":
        return v.decode()
    return v


def info_json(reply):
    d = dict(zip(INFO_FIELDS, to_json(reply)))
    d["subcommands"] = sorted((info_json(s) for s in
                               reply[1][9][1]), key=lambda e: e["name"])
    return d


def connect(srv, resp):
    c = e2e.Client(srv.sock)
    if resp == 3:
        assert c.call("HELLO", "3")[0] == "%"
    return c


def drop_fields(name, spec, info, docs):
    """Applies the overlay's deliberate overrides: the overridden fields
    are left out of the comparison (each has its "why")."""
    over = spec.get("override", {})
    if info is not None and info[0] == "*":
        v = list(info[1])
        for i, f in enumerate(INFO_FIELDS):
            if f in over:
                v[i] = None
        info = ("*", v)
    if docs is not None and "docs" in over:
        docs = remap(docs, [(k, val) for k, val in pairs(docs)
                            if k[1].decode() not in over["docs"]])
    return info, docs


def test_info_and_docs_equal_redis(goblind, redis):
    top, specs = load_overlay()
    # Subcommands both servers have; Goblin's additions are compared with
    # their entry by test_additions_equal_their_entry.
    keep = {n for n, s in specs.items() if "entry" not in s}
    fails = e2e.Failures()
    for resp in (2, 3):
        g, r = connect(goblind, resp), connect(redis, resp)
        for name, spec in specs.items():
            gi = g.call("COMMAND", "INFO", name)[1][0]
            ri = r.call("COMMAND", "INFO", name)[1][0]
            gd = pairs(g.call("COMMAND", "DOCS", name))
            rd = pairs(r.call("COMMAND", "DOCS", name))
            if "entry" in spec:
                fails.eq(ri, ("$", None) if resp == 2 else ("_", None),
                         "%s: Redis 7.0 has it after all" % name)
                continue
            fails.eq(len(gd), 1, "COMMAND DOCS %s: one entry" % name)
            fails.eq(len(rd), 1, "redis COMMAND DOCS %s" % name)
            gi, gdoc = drop_fields(name, spec, norm_info(gi, keep),
                                   norm_docs(gd[0][1], keep))
            ri, rdoc = drop_fields(name, spec, norm_info(ri, keep),
                                   norm_docs(rd[0][1], keep))
            fails.eq(gi, ri, "RESP%d COMMAND INFO %s" % (resp, name))
            fails.eq(gd[0][0], rd[0][0], "COMMAND DOCS %s key" % name)
            fails.eq(gdoc, rdoc, "RESP%d COMMAND DOCS %s" % (resp, name))
        g.close()
        r.close()
    fails.finish()


def test_additions_equal_their_entry(goblind, redis):
    """Commands Redis 7.0 lacks answer exactly what their entry says."""
    _, specs = load_overlay()
    g = connect(goblind, 3)
    fails = e2e.Failures()
    for name, spec in specs.items():
        if "entry" not in spec:
            continue
        want = dict(spec["entry"])
        docs = want.pop("docs")
        fails.eq(info_json(g.call("COMMAND", "INFO", name)[1][0]), want,
                 "COMMAND INFO %s" % name)
        fails.eq(to_json(g.call("COMMAND", "DOCS", name)),
                 {name: docs}, "COMMAND DOCS %s" % name)
    fails.finish()


def test_bare_command_count_and_list(goblind, redis):
    top, specs = load_overlay()
    keep = set(specs)
    g, r = connect(goblind, 2), connect(redis, 2)
    fails = e2e.Failures()
    fails.eq(g.call("COMMAND", "COUNT"), (":", len(top)), "COMMAND COUNT")
    listed = sorted(x.decode() for x in e2e.plain(g.call("COMMAND",
                                                         "LIST")))
    fails.eq(listed, sorted(specs), "COMMAND LIST")
    bare = sorted(repr(norm_info(e, keep)) for e in g.call("COMMAND")[1])
    each = sorted(repr(norm_info(g.call("COMMAND", "INFO", n)[1][0], keep))
                  for n in top)
    fails.eq(bare, each, "COMMAND is COMMAND INFO of every command")
    alldocs = sorted(k[1].decode() for k, _ in pairs(g.call("COMMAND",
                                                           "DOCS")))
    fails.eq(alldocs, sorted(top), "COMMAND DOCS lists every command")
    added = {n for n, s in specs.items() if "entry" in s}
    filters = [("ACLCAT", c) for c in
               ("keyspace", "read", "write", "sortedset", "hash", "string",
                "admin", "fast", "slow", "dangerous", "connection",
                "transaction", "nosuch")]
    filters += [("PATTERN", p) for p in
                ("z*", "*range*", "client|*", "config|?et", "[a-c]*", "*")]
    filters += [("MODULE", "nosuch")]
    for kind, arg in filters:
        got = sorted(x.decode() for x in e2e.plain(
            g.call("COMMAND", "LIST", "FILTERBY", kind, arg)))
        want = sorted(x.decode() for x in e2e.plain(
            r.call("COMMAND", "LIST", "FILTERBY", kind, arg))
            if x.decode() in keep)
        fails.eq([x for x in got if x not in added], want,
                 "COMMAND LIST FILTERBY %s %s" % (kind, arg))
    for bad in (["LIST", "FILTERBY"], ["LIST", "FILTERBY", "ACLCAT"],
                ["LIST", "FILTERBY", "nosuch", "x"], ["LIST", "x"]):
        fails.eq(g.call("COMMAND", *bad), r.call("COMMAND", *bad),
                 "COMMAND %s" % " ".join(bad))
    fails.finish()


def keys(prefix, n):
    return ["%s%d" % (prefix, i) for i in range(n)]


def getkeys_cases():
    n = 100
    pairs_ = [x for k in keys("k", n) for x in (k, "v")]
    return [
        ["DEL"] + keys("k", n), ["UNLINK"] + keys("k", n),
        ["EXISTS"] + keys("k", n), ["TOUCH"] + keys("k", n),
        ["MGET"] + keys("k", n), ["WATCH"] + keys("k", n),
        ["MSET"] + pairs_, ["MSETNX"] + pairs_,
        ["ZUNIONSTORE", "d", str(n)] + keys("z", n),
        ["ZINTERSTORE", "d", str(n)] + keys("z", n) + ["AGGREGATE", "MAX"],
        ["ZDIFFSTORE", "d", str(n)] + keys("z", n),
        ["ZUNION", str(n)] + keys("z", n) + ["WITHSCORES"],
        ["ZINTER", str(n)] + keys("z", n), ["ZDIFF", str(n)] + keys("z", n),
        ["ZINTERCARD", str(n)] + keys("z", n) + ["LIMIT", "3"],
        ["ZUNIONSTORE", "d", "70"] + keys("z", 70) + ["WEIGHTS"] +
        ["1"] * 70,
        ["ZUNIONSTORE", "d", "2abc"] + keys("z", 80),
        ["ZUNION", "0", "a"], ["ZUNION", "-3", "a", "b"],
        ["ZUNION", "5", "a", "b"], ["ZINTERCARD", "2x", "a", "b"],
        ["SET", "k", "v"], ["SET", "k", "v", "GET"], ["GET", "k"],
        ["GETEX", "k", "PERSIST"], ["RENAME", "a", "b"],
        ["RENAMENX", "a", "b"], ["ZRANGESTORE", "d", "s", "0", "-1"],
        ["HSET", "h", "f", "v"], ["OBJECT", "ENCODING", "k"],
        ["EXPIRE", "k", "10"], ["GET"], ["GET", "a", "b"], ["PING", "x"],
        ["NOSUCH", "a"], ["CONFIG", "GET", "x"], ["CONFIG|GET", "x"],
        ["client|id"], ["SCAN", "0"], ["KEYS", "*"],
        ["SORT", "l", "BY", "w_*", "GET", "g_*", "STORE", "d"],
        ["SORT_RO", "l"], ["SORT_RO", "l", "BY", "w_*", "GET", "g_*"],
    ]


def test_getkeys_equal_redis(goblind, redis):
    g, r = connect(goblind, 2), connect(redis, 2)
    fails = e2e.Failures()
    for case in getkeys_cases():
        for sub in ("GETKEYS", "GETKEYSANDFLAGS"):
            fails.eq(g.call("COMMAND", sub, *case),
                     r.call("COMMAND", sub, *case),
                     "COMMAND %s %s" % (sub, " ".join(case[:4])))
    big = g.call("COMMAND", "GETKEYS", "DEL", *keys("k", 100))
    fails.eq(len(big[1]), 100, "GETKEYS DEL of 100 keys")
    # ACL key checks see every key too: the 100th is the forbidden one.
    for c in (g, r):
        c.call("ACL", "SETUSER", "kk", "on", "nopass", "~k*", "+@all")
    for case in (["DEL"] + keys("k", 99) + ["x"],
                 ["ZUNIONSTORE", "k", "90"] + keys("k", 89) + ["x"],
                 ["MSET"] + [a for k in keys("k", 80) for a in (k, "v")] +
                 ["x", "v"]):
        fails.eq(g.call("ACL", "DRYRUN", "kk", *case),
                 r.call("ACL", "DRYRUN", "kk", *case),
                 "ACL DRYRUN %s of %d arguments" % (case[0], len(case)))
    fails.finish()


def test_fullnames_are_not_command_names(goblind, redis):
    g, r = connect(goblind, 2), connect(redis, 2)
    fails = e2e.Failures()
    cases = [["CONFIG|GET", "maxmemory"], ["config|get"], ["client|id"],
             ["CLIENT|SETNAME", "x"], ["object|help"], ["command|count"],
             ["acl|whoami"], ["get|x", "k"], ["|"], ["config|"],
             ["ACL", "DRYRUN", "default", "config|get", "maxmemory"],
             ["ACL", "DRYRUN", "default", "CONFIG", "GET", "maxmemory"],
             ["CONFIG", "GET|x"], ["COMMAND", "INFO|x"],
             ["COMMAND", "INFO", "config|get|x", "get|x", "|"],
             ["COMMAND", "DOCS", "config|nosuch", "get|x"]]
    for case in cases:
        fails.eq(g.call(*case), r.call(*case), " ".join(case))
    m = e2e.Client(goblind.sock)
    r2 = e2e.Client(redis.sock)
    for c in (m, r2):
        c.call("MULTI")
    fails.eq(m.call("CONFIG|GET", "maxmemory"),
             r2.call("CONFIG|GET", "maxmemory"), "CONFIG|GET in MULTI")
    fails.eq(m.call("EXEC"), r2.call("EXEC"), "EXEC after CONFIG|GET")
    fails.finish()


def test_redis_cli_renders_docs_as_for_redis(goblind, redis):
    fails = e2e.Failures()
    for name in ("zadd", "set", "zrange", "client|kill", "getex",
                 "shutdown", "zunionstore", "config|set", "hrandfield"):
        out = []
        for srv in (goblind, redis):
            out.append(subprocess.run(
                [e2e.REDIS_CLI, "-s", srv.sock, "--no-raw", "COMMAND",
                 "DOCS", name], capture_output=True, timeout=20).stdout)
        fails.eq(out[0], out[1], "redis-cli --no-raw COMMAND DOCS " + name)
        fails.check(len(out[0]) > 5, "redis-cli printed %r" % out[0])
    fails.finish()


def test_goblind_stops_cleanly(goblind, redis):
    e2e.check_stopped_cleanly(goblind)


def main():
    srv = e2e.goblind(sys.argv[1], tcp=False)
    redis = e2e.redis_server()
    e2e.run_tests([test_info_and_docs_equal_redis,
                   test_additions_equal_their_entry,
                   test_bare_command_count_and_list,
                   test_getkeys_equal_redis,
                   test_fullnames_are_not_command_names,
                   test_redis_cli_renders_docs_as_for_redis,
                   test_goblind_stops_cleanly],
                  srv, redis)


if __name__ == "__main__":
    main()
