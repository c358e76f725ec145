#!/usr/bin/env python3
"""table_gen.py - generates Goblin's command table (goblin__commands[], see
command.h) from two data files, at build time (lib/meson.build):

  redis-commands.json   Redis 7.0's own COMMAND INFO and COMMAND DOCS for
                        every Redis command, dumped from a redis-server by
                        tools/redis_commands_dump.py;
  goblin-commands.json  the commands Goblin implements, in table order,
                        each with its handler, and for a command Redis 7.0
                        lacks its whole entry ("entry"), or fields Goblin
                        changes on purpose ("override"), each with "why".

    table_gen.py REDIS.json GOBLIN.json OUT.c

The data keeps the order in which redis-server writes each map's keys;
cmd_command.c writes the fields in Redis's fixed order, so the generator
refuses keys it does not know and keys out of that order rather than
emit a table whose replies would differ from Redis's. Python 3 standard
library only, no network (docs/commands.md).
"""

import json
import re
import sys

CMD_FLAGS = [
    "write", "readonly", "denyoom", "module", "admin", "pubsub",
    "noscript", "blocking", "loading", "stale", "skip_monitor",
    "skip_slowlog", "asking", "fast", "no_auth", "may_replicate",
    "no_mandatory_keys", "no_async_loading", "no_multi", "movablekeys",
    "allow_busy",
]
ACL_CATS = [
    "keyspace", "read", "write", "set", "sortedset", "list", "hash",
    "string", "bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin",
    "fast", "slow", "blocking", "dangerous", "connection", "transaction",
    "scripting",
]
KS_FLAGS = [
    "RO", "RW", "OW", "RM", "access", "update", "insert", "delete",
    "not_key", "incomplete", "variable_flags",
]
ARG_TYPES = [
    "string", "integer", "double", "key", "pattern", "unix-time",
    "pure-token", "oneof", "block",
]
ARG_FLAGS = ["optional", "multiple", "multiple_token"]
DOC_FLAGS = ["deprecated", "syscmd"]

# Key orders as redis-server writes them (server.c, addReplyCommand*).
DOC_KEYS = ["summary", "since", "group", "complexity", "doc_flags",
            "deprecated_since", "replaced_by", "history", "arguments"]
ARG_KEYS = ["name", "type", "key_spec_index", "token", "since",
            "deprecated_since", "flags", "arguments"]
KS_KEYS = ["notes", "flags", "begin_search", "find_keys"]
INFO_KEYS = ["name", "arity", "flags", "first_key", "last_key", "step",
             "acl_categories", "tips", "key_specs", "subcommands", "docs"]


class DataError(Exception):
    pass


def check_keys(m, order, what):
    keys = list(m)
    unknown = [k for k in keys if k not in order]
    if unknown:
        raise DataError("%s: unknown keys %s" % (what, unknown))
    if keys != sorted(keys, key=order.index):
        raise DataError("%s: keys %s out of Redis's order %s"
                        % (what, keys, order))


def c_str(s):
    if s is None:
        return "NULL"
    out = []
    for b in s.encode("utf-8"):
        c = chr(b)
        if c in '"\\?':
            out.append("\\" + c)
        elif 0x20 <= b < 0x7f:
            out.append(c)
        else:
            out.append("\\%03o" % b)
    return '"' + "".join(out) + '"'


def bits(names, table, prefix, what):
    out = []
    for n in names:
        if n not in table:
            raise DataError("%s: unknown flag %r" % (what, n))
        out.append(prefix + re.sub(r"[^A-Za-z0-9]", "_", n).upper())
    order = [table.index(n) for n in names]
    if order != sorted(order) or len(set(order)) != len(order):
        raise DataError("%s: flags %s not in Redis's order" % (what, names))
    return " | ".join(out) if out else "0"


# The commands whose lookups are Redis's lookupKeyRead (keyspace hits and
# misses, keymiss events): the read-only ones with keys, but MEMORY USAGE
# (a plain dictionary probe in Redis) and the read-only scripts, whose
# own commands count. Write commands that read some keys count them in
# their handlers.
NOT_READS = ("memory|usage", "eval_ro", "evalsha_ro", "fcall_ro")


def reads(e):
    return ("readonly" in e["flags"] and bool(e.get("key_specs")) and
            e["name"] not in NOT_READS)


def c_ident(fullname):
    return re.sub(r"[^a-z0-9]", "_", fullname)


class Emitter:
    def __init__(self):
        self.pre = []    # static arrays, children before parents
        self.rows = []   # the table's initializers
        self.nargs = 0

    def args(self, ident, args, what):
        names = []
        for a in args:
            check_keys(a, ARG_KEYS, "%s argument %r" % (what, a.get("name")))
            if a["type"] not in ARG_TYPES:
                raise DataError("%s: argument type %r" % (what, a["type"]))
            sub = a.get("arguments")
            if (sub is not None) != (a["type"] in ("oneof", "block")):
                raise DataError("%s: %r children" % (what, a["name"]))
            names.append(self.args(ident, sub, what) if sub else None)
        self.nargs += 1
        name = "args_%s_%d" % (ident, self.nargs)
        lines = ["static const struct goblin__arg %s[] = {" % name]
        for a, child in zip(args, names):
            ksi = a.get("key_spec_index", -1)
            if not -1 <= ksi < 128 or len(a.get("arguments", [])) > 255:
                raise DataError("%s: %r out of range" % (what, a["name"]))
            lines.append(
                "    {.name = %s, .token = %s, .since = %s,\n"
                "     .deprecated_since = %s, .args = %s,\n"
                "     .key_spec_index = %d, .type = ARGT_%s, .flags = %s,"
                " .nargs = %d},"
                % (c_str(a["name"]), c_str(a.get("token")),
                   c_str(a.get("since")), c_str(a.get("deprecated_since")),
                   child or "NULL", ksi,
                   a["type"].replace("-", "_").upper(),
                   bits(a.get("flags", []), ARG_FLAGS, "ARGF_", what),
                   len(a.get("arguments", []))))
        lines.append("};")
        self.pre.append("\n".join(lines))
        return name

    def keyspec(self, k, what):
        check_keys(k, KS_KEYS, what + " key spec")
        bs, fk = k["begin_search"], k["find_keys"]
        if bs["type"] == "index":
            begin = ".begin_keyword = 0, .bs = %d" % bs["spec"]["index"]
        elif bs["type"] == "keyword":
            begin = ".begin_keyword = 1, .bs = %d, .keyword = %s" % (
                bs["spec"]["startfrom"], c_str(bs["spec"]["keyword"]))
        elif bs["type"] == "unknown":
            begin = ".begin_keyword = 2"
        else:
            raise DataError("%s: begin_search %r" % (what, bs["type"]))
        if fk["type"] == "range":
            s = fk["spec"]
            find = ".find_keynum = 0, .fk = {%d, %d, %d}" % (
                s["lastkey"], s["keystep"], s["limit"])
        elif fk["type"] == "keynum":
            s = fk["spec"]
            find = ".find_keynum = 1, .fk = {%d, %d, %d}" % (
                s["keynumidx"], s["firstkey"], s["keystep"])
        elif fk["type"] == "unknown":
            find = ".find_keynum = 2"
        else:
            raise DataError("%s: find_keys %r" % (what, fk["type"]))
        return "    {.flags = %s,\n     %s,\n     %s,\n     .notes = %s}," % (
            bits(k["flags"], KS_FLAGS, "KS_", what), begin, find,
            c_str(k.get("notes")))

    def command(self, e, handler, nsub):
        full = e["name"]
        what = "command " + full
        ident = c_ident(full)
        check_keys(e, INFO_KEYS, what)
        d = e["docs"]
        check_keys(d, DOC_KEYS, what + " docs")
        for f, lo, hi in (("first_key", -128, 127), ("last_key", -128, 127),
                          ("step", -128, 127), ("arity", -32768, 32767)):
            if not lo <= e[f] <= hi:
                raise DataError("%s: %s out of range" % (what, f))
        row = [
            ".name = %s, .fullname = %s," % (
                c_str(full.split("|")[-1]), c_str(full)),
            ".fn = %s, .arity = %d," % (handler or "NULL", e["arity"]),
            ".first_key = %d, .last_key = %d, .key_step = %d," % (
                e["first_key"], e["last_key"], e["step"]),
            ".nsub = %d," % nsub,
            ".flags = %s%s," % (bits(e["flags"], CMD_FLAGS, "CMD_", what),
                                " | CMD_READS" if reads(e) else ""),
            ".acl = %s," % bits([a.lstrip("@") for a in e["acl_categories"]],
                                ACL_CATS, "ACL_", what),
            ".since = %s, .group = %s," % (c_str(d.get("since")),
                                            c_str(d["group"])),
            ".summary = %s," % c_str(d.get("summary")),
            ".complexity = %s," % c_str(d.get("complexity")),
        ]
        if e["tips"]:
            self.pre.append("static const char *const tips_%s[] = {%s};" % (
                ident, ", ".join(c_str(t) for t in e["tips"])))
            row.append(".tips = tips_%s, .ntips = %d," % (
                ident, len(e["tips"])))
        if e["key_specs"]:
            self.pre.append(
                "static const struct goblin__keyspec ks_%s[] = {\n%s\n};" % (
                    ident, "\n".join(self.keyspec(k, what)
                                     for k in e["key_specs"])))
            row.append(".keyspecs = ks_%s, .nkeyspecs = %d," % (
                ident, len(e["key_specs"])))
        if "doc_flags" in d:
            row.append(".doc_flags = %s," % bits(d["doc_flags"], DOC_FLAGS,
                                                 "DOCF_", what))
        for f in ("deprecated_since", "replaced_by"):
            if f in d:
                row.append(".%s = %s," % (f, c_str(d[f])))
        if "history" in d:
            pairs = []
            for version, change in d["history"]:
                pairs += [c_str(version), c_str(change)]
            self.pre.append("static const char *const hist_%s[] = {\n"
                            "    %s,\n};" % (ident, ",\n    ".join(pairs)))
            row.append(".history = hist_%s, .nhistory = %d," % (
                ident, len(d["history"])))
        if "arguments" in d:
            if len(d["arguments"]) > 255:
                raise DataError(what + ": too many arguments")
            row.append(".args = %s, .nargs = %d," % (
                self.args(ident, d["arguments"], what), len(d["arguments"])))
        self.rows.append("    {\n" + "".join("        %s\n" % r for r in row)
                         + "    },")


def apply_override(entry, spec, what):
    """A copy of entry with spec's "override" fields replaced ("docs"
    fields one by one)."""
    e = json.loads(json.dumps(entry))
    for k, v in spec.get("override", {}).items():
        if k == "docs":
            e["docs"].update(v)
        elif k in e and k != "name":
            e[k] = v
        else:
            raise DataError("%s: cannot override %r" % (what, k))
    if "override" in spec and "why" not in spec:
        raise DataError(what + ": an override needs a why")
    return e


def resolve(spec, known, what):
    if "entry" in spec:
        if spec["entry"]["name"] in known:
            raise DataError(what + ": has an entry but Redis has it too")
        if "why" not in spec:
            raise DataError(what + ": an entry needs a why")
        return spec["entry"]
    if what not in known:
        raise DataError(what + ": not in the Redis data; give an entry")
    return known[what]


def build(redis, goblin):
    em = Emitter()
    top = {c["name"]: c for c in redis["commands"]}
    seen = set()
    for spec in goblin["commands"]:
        name = spec["name"]
        if name in seen or name != name.lower():
            raise DataError("command %s: listed twice or not lower case"
                            % name)
        seen.add(name)
        entry = apply_override(resolve(spec, top, name), spec, name)
        subs = {s["name"]: s for s in entry["subcommands"]}
        if entry["subcommands"] and "subcommands" not in spec:
            raise DataError(name + ": a container lists its subcommands")
        em.command(entry, spec.get("handler"), len(spec.get("subcommands",
                                                            [])))
        for sub in spec.get("subcommands", []):
            full = name + "|" + sub["name"]
            if "handler" not in sub:
                raise DataError(full + ": a subcommand needs a handler")
            se = apply_override(resolve(sub, subs, full), sub, full)
            if se["name"] != full:
                raise DataError(full + ": entry named " + se["name"])
            em.command(se, sub["handler"], 0)
    return em


def main():
    redis_path, goblin_path, out_path = sys.argv[1:4]
    with open(redis_path, encoding="utf-8") as f:
        redis = json.load(f)
    with open(goblin_path, encoding="utf-8") as f:
        goblin = json.load(f)
    try:
        em = build(redis, goblin)
    except DataError as e:
        sys.exit("table_gen.py: %s" % e)
    text = [
        "/* goblin_commands_gen.c - generated by lib/commands/table_gen.py",
        " * from redis-commands.json (Redis %s) and goblin-commands.json."
        % redis["redis_version"],
        " * Do not edit: change the data (docs/commands.md). */",
        '#include "commands/command.h"',
        '#include "commands/handlers.h"',
        "",
    ]
    text += em.pre
    text += ["", "const struct goblin__command goblin__commands[] = {"]
    text += em.rows
    text += ["};", "",
             "const size_t goblin__command_count =",
             "    sizeof(goblin__commands) / sizeof(goblin__commands[0]);",
             ""]
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("\n".join(text))


if __name__ == "__main__":
    main()
