"""test_command_groups.py - the "Redis 7.0 commands by group" section of
docs/commands.md against a running goblind and redis-server: the section
is what tools/command_groups.py writes, from the JSON files and from the
two servers' COMMAND DOCS alike; every command and subcommand
redis-server has is either in goblind's COMMAND DOCS or listed as
missing with a reason; everything listed as implemented is in goblind's
COMMAND LIST / COMMAND DOCS; goblind's commands Redis 7.0 lacks are in
their own part. Then a few listed commands of each group are run with
redis-cli and python3-redis.

Usage: test_command_groups.py GOBLIND
"""

import os
import re
import subprocess
import sys

import redis as redispy

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
import e2e  # noqa: E402
import command_groups  # noqa: E402


def doc_text():
    with open(command_groups.DOC, encoding="utf-8") as f:
        return command_groups.doc_section(f.read())


def parse(text):
    """(implemented, missing, goblind-only) full names, from the doc."""
    impl, missing, extra = set(), set(), set()
    part = None
    for block in text.split("\n\n"):
        line = " ".join(block.split())
        if line.startswith("### "):
            part = "extra" if "lacks" in line else "group"
            state = "impl"
            continue
        if line == "Missing:":
            state = "missing"
            continue
        if part == "extra":
            for m in re.finditer(r"^- `([^`]+)`", block, re.M):
                extra.add(m.group(1).lower().replace(" ", "|"))
            continue
        if line.startswith("Implemented: "):
            impl.update(n.lower() for n in re.findall(r"`([^`]+)`", line))
            continue
        if not line.startswith("- "):
            continue
        for item in re.split(r"\n- ", "\n" + block.lstrip("- ")):
            item = " ".join(item.split())
            if not item:
                continue
            m = re.match(r"`([^`]+)`(?: and its subcommands \(([^)]*)\))?"
                         r"(?: \(\d+ of \d+ subcommands\))?: (.*)$", item)
            assert m, "unparsed line in the doc: %r" % item
            name = m.group(1).lower().replace(" ", "|")
            if state == "impl":
                impl.add(name)
                impl.update(name + "|" + s.strip().lower() for s in
                            m.group(3).rstrip(".").split(","))
            else:
                assert m.group(3).strip(), "no reason for %s" % name
                missing.add(name)
                if m.group(2):
                    missing.update(name + "|" + s.strip().lower()
                                   for s in m.group(2).split(","))
    return impl, missing, extra


def docs_names(srv):
    """Every command and subcommand fullname in srv's COMMAND DOCS."""
    c = srv.client()
    reply = e2e.plain(c.call("COMMAND", "DOCS"))
    c.close()
    names = set()
    for i in range(0, len(reply), 2):
        names.add(reply[i].decode())
        d = dict(zip(reply[i + 1][::2], reply[i + 1][1::2]))
        subs = d.get(b"subcommands") or []
        names.update(subs[j].decode() for j in range(0, len(subs), 2))
    return names


def test_section_is_generated(goblind, redis):
    text = doc_text()
    f = e2e.Failures()
    f.check(text == command_groups.section(*command_groups.from_files()),
            "docs/commands.md differs from tools/command_groups.py's output"
            " (regenerate with tools/command_groups.py --write)")
    live = command_groups.section(command_groups.from_server(redis.sock),
                                  command_groups.from_server(goblind.sock))
    f.check(text == live, "docs/commands.md differs from what the running "
            "redis-server and goblind give")
    f.finish()


def test_every_command_accounted_for(goblind, redis):
    impl, missing, extra = parse(doc_text())
    rnames, gnames = docs_names(redis), docs_names(goblind)
    c = goblind.client()
    glist = {n.decode() for n in e2e.plain(c.call("COMMAND", "LIST"))}
    c.close()
    f = e2e.Failures()
    f.eq(sorted(glist ^ gnames), [],
         "goblind's COMMAND LIST against its COMMAND DOCS")
    f.eq(impl & missing, set(), "listed both implemented and missing")
    for n in sorted(rnames):
        f.check((n in gnames) != (n in missing),
                "%s: in goblind's COMMAND DOCS %s, listed missing %s" % (
                    n, n in gnames, n in missing))
        f.check(n in impl or n in missing, "%s is not in the doc" % n)
    for n in sorted(impl):
        f.check(n in gnames, "%s listed as implemented, not in goblind" % n)
        f.check(n in rnames, "%s listed for Redis 7.0, not in redis" % n)
    f.eq(sorted(extra ^ (gnames - rnames)), [],
         "goblind-only commands in the doc")
    f.finish()


# A few listed commands per group, run for real: (group, argv, reply).
CLI_CASES = [
    ("string", ["SET", "g:s", "v"], "OK"),
    ("string", ["APPEND", "g:s", "w"], "2"),
    ("generic", ["EXPIRE", "g:s", "100"], "1"),
    ("generic", ["TYPE", "g:s"], "string"),
    ("list", ["RPUSH", "g:l", "a", "b"], "2"),
    ("list", ["LPOS", "g:l", "b"], "1"),
    ("set", ["SADD", "g:t", "x", "y"], "2"),
    ("set", ["SINTERCARD", "1", "g:t"], "2"),
    ("sorted-set", ["ZADD", "g:z", "1", "m"], "1"),
    ("sorted-set", ["ZMSCORE", "g:z", "m"], "1"),
    ("hash", ["HSET", "g:h", "f", "1"], "1"),
    ("hash", ["HSTRLEN", "g:h", "f"], "1"),
    ("pubsub", ["PUBSUB", "NUMPAT"], "0"),
    ("pubsub", ["SPUBLISH", "ch", "m"], "0"),
    ("connection", ["ECHO", "hi"], "hi"),
    ("connection", ["CLIENT", "SETNAME", "grp"], "OK"),
    ("server", ["CONFIG", "GET", "maxmemory"], "maxmemory\n0"),
    ("server", ["ACL", "WHOAMI"], "default"),
    ("scripting", ["EVAL", "return 7", "0"], "7"),
    ("scripting", ["SCRIPT", "EXISTS", "ffff"], "0"),
    ("hyperloglog", ["PFADD", "g:p", "a"], "1"),
    ("hyperloglog", ["PFCOUNT", "g:p"], "1"),
    ("geo", ["GEOADD", "g:g", "13.361389", "38.115556", "a"], "1"),
    ("geo", ["GEOHASH", "g:g", "a"], "sqc8b49rny0"),
    ("bitmap", ["SETBIT", "g:b", "7", "1"], "0"),
    ("bitmap", ["BITCOUNT", "g:b"], "1"),
]


def test_listed_commands_work(goblind, redis):
    impl, _, _ = parse(doc_text())
    f = e2e.Failures()
    for group, argv, want in CLI_CASES:
        name = argv[0].lower()
        if name in ("config", "acl", "pubsub", "script", "client"):
            name += "|" + argv[1].lower()
        f.check(name in impl, "%s (%s) is not listed as implemented" % (
            name, group))
        out = subprocess.run([e2e.REDIS_CLI, "-s", goblind.sock] + argv,
                             capture_output=True, text=True, timeout=30)
        f.eq(out.stdout.strip(), want, "redis-cli %s (%s)" % (argv, group))
    r = redispy.Redis(unix_socket_path=goblind.sock)
    f.eq(r.getex("g:s"), b"vw", "python3-redis GETEX")
    f.eq(r.lmpop(1, "g:l", direction="LEFT"), [b"g:l", [b"a"]],
         "python3-redis LMPOP")
    f.eq(r.zrange("g:z", 0, -1, withscores=True), [(b"m", 1.0)],
         "python3-redis ZRANGE")
    f.eq(r.hincrbyfloat("g:h", "f", 1.5), 2.5, "python3-redis HINCRBYFLOAT")
    f.eq(r.smismember("g:t", ["x", "q"]), [1, 0], "python3-redis SMISMEMBER")
    p = r.pipeline(transaction=True)
    p.incr("g:n")
    p.incr("g:n")
    f.eq(p.execute(), [1, 2], "python3-redis MULTI/EXEC")
    f.eq(r.memory_usage("g:s") > 0, True, "python3-redis MEMORY USAGE")
    f.eq(r.function_list(), [], "python3-redis FUNCTION LIST")
    r.close()
    f.finish()


def test_missing_commands_are_unknown(goblind, redis):
    c = goblind.client()
    f = e2e.Failures()
    for argv in (["XADD", "s", "*", "f", "v"], ["CLUSTER", "INFO"],
                 ["MODULE", "LIST"], ["FAILOVER"]):
        reply = c.call(*argv)
        f.check(reply[0] == "-" and reply[1].startswith(
            b"ERR unknown command"), "%s: %r" % (argv, reply))
    c.close()
    f.finish()


def test_goblind_stops_cleanly(goblind, redis):
    e2e.check_stopped_cleanly(goblind)


def main():
    goblind = e2e.goblind(sys.argv[1])
    redis = e2e.redis_server()
    e2e.run_tests([test_section_is_generated,
                   test_every_command_accounted_for,
                   test_listed_commands_work,
                   test_missing_commands_are_unknown,
                   test_goblind_stops_cleanly], goblind, redis)


if __name__ == "__main__":
    main()
