#!/usr/bin/env python3
"""redis_commands_dump.py - dumps a running redis-server's own command
metadata (COMMAND INFO and COMMAND DOCS, read over RESP3) into the JSON
file that lib/commands/table_gen.py turns into Goblin's command table.

Run by hand when the data is refreshed, never by the build:

    redis-server --port 0 --unixsocket /tmp/r.sock --save '' &
    tools/redis_commands_dump.py /tmp/r.sock > lib/commands/redis-commands.json

The output holds one entry per top-level command, sorted by name, each
with its COMMAND INFO fields, its COMMAND DOCS map (as the server ordered
its keys) and its subcommands, sorted by full name. Sorting replaces the
server's hash-table order, which changes from run to run. Python 3
standard library only.
"""

import json
import socket
import sys


class Resp3:
    """A minimal blocking RESP3 client: maps become dicts (key order kept),
    arrays and sets lists, bulk and simple strings str."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(path)
        self.f = self.s.makefile("rb")

    def call(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a.encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.s.sendall(b"".join(out))
        return self.read()

    def read(self):
        line = self.f.readline()[:-2]
        t, rest = chr(line[0]), line[1:]
        if t == "+":
            return rest.decode()
        if t == "-":
            raise RuntimeError(rest.decode())
        if t == ":":
            return int(rest)
        if t == "_":
            return None
        if t in "$=":
            data = self.f.read(int(rest) + 2)[:-2]
            return data.decode()
        if t in "*~":
            return [self.read() for _ in range(int(rest))]
        if t == "%":
            m = {}
            for _ in range(int(rest)):
                k = self.read()
                m[k] = self.read()
            return m
        raise RuntimeError("unexpected reply %r" % line)


def info_entry(info):
    """COMMAND INFO's ten fields by name; subcommands sorted."""
    (name, arity, flags, first, last, step, acl, tips, specs, subs) = info
    return {
        "name": name,
        "arity": arity,
        "flags": flags,
        "first_key": first,
        "last_key": last,
        "step": step,
        "acl_categories": acl,
        "tips": tips,
        "key_specs": specs,
        "subcommands": sorted((info_entry(s) for s in subs),
                              key=lambda e: e["name"]),
    }


def attach_docs(entry, docs):
    d = dict(docs)
    subdocs = d.pop("subcommands", {})
    entry["docs"] = d
    for sub in entry["subcommands"]:
        attach_docs(sub, subdocs[sub["name"]])


def main():
    r = Resp3(sys.argv[1])
    r.call("HELLO", "3")
    version = r.call("INFO", "server").split("redis_version:")[1].split()[0]
    names = sorted(r.call("COMMAND", "LIST", "FILTERBY", "PATTERN", "*"))
    names = [n for n in names if "|" not in n]
    commands = []
    for name in names:
        (info,) = r.call("COMMAND", "INFO", name)
        entry = info_entry(info)
        attach_docs(entry, r.call("COMMAND", "DOCS", name)[name])
        commands.append(entry)
    json.dump({"redis_version": version, "commands": commands},
              sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
