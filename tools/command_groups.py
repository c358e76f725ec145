#!/usr/bin/env python3
"""command_groups.py - writes the "Redis 7.0 commands by group" section of
docs/commands.md: per COMMAND DOCS group, the Redis 7.0 commands and
subcommands goblind implements, those it lacks with the reason from
command_groups_missing.json, then the commands goblind has that Redis 7.0
lacks. Fails on a missing command without a reason, a reason for a command
that is not missing, or a group it does not know.

Usage:
  tools/command_groups.py                 from lib/commands/*.json
  tools/command_groups.py REDIS GOBLIND   from two running servers, each a
                                          Unix socket path or host:port
  tools/command_groups.py --write         replace the section in the doc
"""

import json
import os
import re
import socket
import sys
import textwrap

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
REDIS_JSON = os.path.join(ROOT, "lib", "commands", "redis-commands.json")
GOBLIN_JSON = os.path.join(ROOT, "lib", "commands", "goblin-commands.json")
MISSING_JSON = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            "command_groups_missing.json")
DOC = os.path.join(ROOT, "docs", "commands.md")
BEGIN, END = "<!-- groups:begin -->", "<!-- groups:end -->"
GROUPS = ["generic", "string", "list", "set", "sorted-set", "hash", "pubsub",
          "transactions", "connection", "server", "scripting", "hyperloglog",
          "cluster", "geo", "stream", "bitmap", "sentinel"]


def from_files():
    """({name: (group, since, [sub names])} for Redis and for goblind;
    goblind's "#subs" holds (group, since) of subcommands with an entry)."""
    with open(REDIS_JSON, encoding="utf-8") as f:
        redis = {c["name"]: (c["docs"]["group"], c["docs"]["since"],
                             [s["name"].split("|", 1)[1]
                              for s in c["subcommands"]])
                 for c in json.load(f)["commands"]}
    goblin = {}
    with open(GOBLIN_JSON, encoding="utf-8") as f:
        for c in json.load(f)["commands"]:
            docs = c["entry"]["docs"] if "entry" in c else None
            group, since = (docs["group"], docs["since"]) if docs else \
                redis[c["name"]][:2]
            goblin[c["name"]] = (group, since, [s["name"] for s in
                                                c.get("subcommands", [])])
            for s in c.get("subcommands", []):
                if "entry" in s:
                    goblin.setdefault("#subs", {})[
                        c["name"] + "|" + s["name"]] = (
                        s["entry"]["docs"]["group"],
                        s["entry"]["docs"]["since"])
    return redis, goblin


def resp_call(addr, *args):
    """One command over RESP2 on a fresh connection, the reply decoded."""
    if ":" in addr and not addr.startswith("/"):
        host, port = addr.rsplit(":", 1)
        s = socket.create_connection((host, int(port)))
    else:
        s = socket.socket(socket.AF_UNIX)
        s.connect(addr)
    f = s.makefile("rb")
    s.sendall(b"*%d\r\n" % len(args) + b"".join(
        b"$%d\r\n%s\r\n" % (len(a), a.encode()) for a in args))

    def read():
        line = f.readline()[:-2]
        t, rest = line[:1], line[1:]
        if t == b"-":
            raise RuntimeError(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"+":
            return rest.decode()
        if t == b"$":
            n = int(rest)
            return None if n < 0 else f.read(n + 2)[:-2].decode()
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [read() for _ in range(n)]
        raise RuntimeError("unexpected reply %r" % line)
    try:
        return read()
    finally:
        s.close()


def from_server(addr):
    """{name: (group, since, [sub names])} from COMMAND DOCS; containers
    keep their subcommands, which are also entered by fullname when their
    group or since differ from the container's (e.g. CLIENT SETINFO)."""
    reply = resp_call(addr, "COMMAND", "DOCS")
    out = {}
    for i in range(0, len(reply), 2):
        name, m = reply[i], reply[i + 1]
        d = dict(zip(m[::2], m[1::2]))
        subs = d.get("subcommands") or []
        out[name] = (d["group"], d["since"],
                     [subs[j].split("|", 1)[1] for j in
                      range(0, len(subs), 2)])
        for j in range(0, len(subs), 2):
            sd = dict(zip(subs[j + 1][::2], subs[j + 1][1::2]))
            out.setdefault("#subs", {})[subs[j]] = (sd["group"],
                                                     sd["since"])
    return out


def model(redis, goblin):
    """Per group: implemented plain commands, implemented containers with
    their subcommands, missing items with reasons; then goblind-only."""
    with open(MISSING_JSON, encoding="utf-8") as f:
        m = json.load(f)
    reasons, empty = m["missing"], m["empty_groups"]
    groups = {g: {"plain": [], "containers": [], "missing": [], "total": 0}
              for g in GROUPS}
    used, errors = set(), []

    def missing(group, key, label):
        if key not in reasons:
            errors.append("no reason for missing %s (%s)" % (key, group))
            return
        used.add(key)
        groups[group]["missing"].append((label, reasons[key]))

    for name in sorted(n for n in redis if not n.startswith("#")):
        group, _, subs = redis[name]
        if group not in groups:
            errors.append("unknown group %r of %s" % (group, name))
            continue
        g = groups[group]
        g["total"] += 1
        subs = sorted(subs)
        if name not in goblin:
            label = "`%s`" % name.upper()
            if subs:
                label += " and its subcommands (%s)" % ", ".join(
                    s.upper() for s in subs)
            missing(group, name, label)
            continue
        if not subs:
            g["plain"].append(name)
            continue
        have = set(goblin[name][2])
        g["containers"].append((name, [s for s in subs if s in have],
                                len(subs)))
        for s in subs:
            if s not in have:
                missing(group, name + "|" + s,
                        "`%s %s`" % (name.upper(), s.upper()))
    for key in sorted(set(reasons) - used):
        errors.append("reason for %s, which is not missing" % key)
    for g in GROUPS:
        if not groups[g]["total"] and g not in empty:
            errors.append("group %s has no command and no note" % g)
    extra = []
    for name in sorted(n for n in goblin if not n.startswith("#")):
        group, since, subs = goblin[name]
        if name not in redis:
            extra.append(("`%s`" % name.upper(), group, since))
            continue
        rsubs = set(redis[name][2])
        for s in sorted(subs):
            if s not in rsubs:
                sg, ss = goblin.get("#subs", {}).get(name + "|" + s,
                                                     (group, since))
                extra.append(("`%s %s`" % (name.upper(), s.upper()), sg, ss))
    if errors:
        raise SystemExit("command_groups.py: " + "; ".join(errors))
    return groups, empty, extra


def wrap(text):
    return textwrap.fill(text, 76, break_long_words=False,
                         break_on_hyphens=False)


def bullet(text):
    return textwrap.fill(text, 76, initial_indent="- ",
                         subsequent_indent="  ", break_long_words=False,
                         break_on_hyphens=False)


def render(groups, empty, extra):
    out = []
    for gname in GROUPS:
        g = groups[gname]
        have = len(g["plain"]) + len(g["containers"])
        out.append("### %s" % gname)
        out.append("")
        if not g["total"]:
            out.append(wrap(empty[gname]))
            out.append("")
            continue
        out.append("%d of %d commands implemented." % (have, g["total"]))
        out.append("")
        if g["plain"]:
            out.append(wrap("Implemented: " + ", ".join(
                "`%s`" % n.upper() for n in g["plain"]) + "."))
            out.append("")
        for name, subs, n in g["containers"]:
            out.append(bullet("`%s` (%d of %d subcommands): %s." % (
                name.upper(), len(subs), n,
                ", ".join(s.upper() for s in subs))))
        if g["containers"]:
            out.append("")
        if g["missing"]:
            out.append("Missing:")
            out.append("")
            for label, why in g["missing"]:
                out.append(bullet("%s: %s" % (label, why)))
            out.append("")
    out.append("### Commands goblind has that Redis 7.0 lacks")
    out.append("")
    for label, group, since in extra:
        out.append(bullet("%s (%s, Redis %s)" % (label, group, since)))
    out.append("")
    return "\n".join(out)


def section(redis, goblin):
    return render(*model(redis, goblin))


def doc_section(text):
    """The generated text between the markers of docs/commands.md."""
    m = re.search(re.escape(BEGIN) + r"\n(.*)" + re.escape(END), text, re.S)
    if not m:
        raise SystemExit("command_groups.py: no %s ... %s in %s" % (
            BEGIN, END, DOC))
    return m.group(1)


def main(argv):
    write = "--write" in argv
    argv = [a for a in argv if a != "--write"]
    if len(argv) == 2:
        redis, goblin = from_server(argv[0]), from_server(argv[1])
    elif not argv:
        redis, goblin = from_files()
    else:
        raise SystemExit(__doc__)
    text = section(redis, goblin)
    if not write:
        sys.stdout.write(text)
        return
    with open(DOC, encoding="utf-8") as f:
        doc = f.read()
    old = doc_section(doc)
    with open(DOC, "w", encoding="utf-8") as f:
        f.write(doc.replace(BEGIN + "\n" + old + END,
                            BEGIN + "\n" + text + END))


if __name__ == "__main__":
    main(sys.argv[1:])
