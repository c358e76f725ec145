"""test_functions.py - FUNCTION LOAD / LIST / DELETE / FLUSH / DUMP /
RESTORE / STATS / KILL / HELP, FCALL and FCALL_RO against redis-server
7.0.15, compared exactly in RESP2 and RESP3: the "#!lua name=" header
rules, redis.register_function in both forms with flags and
descriptions, every error text, and DUMP payloads moving both ways
between goblind and redis-server.

    /usr/bin/python3 test_functions.py GOBLIND

A goblind built without Lua says "scripting is not available": skipped
(exit 77).
"""

import sys

import e2e

LIB = """#!lua name=lib1
redis.register_function{function_name='ro', callback=function(keys, args)
  return redis.call('get', keys[1]) end, flags={'no-writes'},
  description='reads'}
redis.register_function('wr', function(keys, args)
  return redis.call('set', keys[1], args[1]) end)
redis.register_function('err', function(keys, args) error('boom') end)
redis.register_function('err2', function(keys, args)
  return redis.call('nosuch') end)
redis.register_function('rf', function(keys, args)
  return type(redis.register_function) end)
redis.register_function('rf2', function(keys, args)
  return redis.register_function('x', function() end) end)
redis.register_function('kv', function(keys, args)
  return {#keys, #args, type(KEYS)} end)
redis.register_function('args', function(keys, args)
  return {keys, args} end)
redis.register_function{function_name='oom', callback=function()
  return 1 end, flags={'allow-oom', 'ALLOW-STALE', 'no-cluster',
  'allow-cross-slot-keys', 'no-writes'}}
redis.register_function('resp', function()
  redis.setresp(3) return redis.call('hgetall', 'nokey') end)
redis.register_function('pc', function()
  return redis.pcall('incr', 'str') end)
redis.register_function('deep', function()
  local function f(n) return f(n + 1) + 1 end return f(1) end)
"""

BODIES = [
    "redis.register_function{function_name='f', callback=function() "
    "return 1 end, flags={'bad'}}",
    "error('x')",
    "redis.register_function('f', function() return 1 end) "
    "redis.register_function('f', function() return 1 end)",
    "redis.register_function('f', 5)",
    "redis.register_function({}, 5)",
    "redis.register_function{}",
    "redis.register_function{function_name='f'}",
    "redis.register_function{callback=function() end}",
    "redis.register_function{function_name='f', callback=function() end, "
    "zz=1}",
    "redis.register_function{function_name='f', callback=function() end, "
    "flags='x'}",
    "redis.register_function{function_name='f', callback=function() end, "
    "description={}}",
    "redis.register_function{function_name={}, callback=function() end}",
    "redis.register_function{function_name='f', callback=5}",
    "redis.register_function{[1]=2}",
    "redis.register_function()",
    "redis.register_function(1,2,3)",
    "redis.log(redis.LOG_WARNING, 'x') return 1",
    "redis.register_function{function_name='f', callback=function() end, "
    "flags={5}}",
    "redis.register_function{function_name='f', callback=function() end, "
    "flags={{}}}",
    "redis.register_function('', function() end)",
    "redis.register_function('a-b', function() end)",
    "redis.call('ping')",
    "redis.register_function('f', function() end) redis.nope()",
    "x = 5",
    "local t = string",
    "return _G",
    "return math.random()",
    "return +",
    "redis.register_function(1, function() return 1 end)",
    "redis.register_function{function_name=7, callback=function() return "
    "'n' end, description=8}",
    "redis.register_function{function_name='f', callback=function() end, "
    "flags={'NO-WRITES','allow-oom'}}",
    "local x = redis.register_function; x('f', function() end); "
    "return redis.REDIS_VERSION",
    "while true do end",
]

HEADERS = [
    "return 1",
    "#!lua",
    "#!lua name=a b=c\nx",
    "#!lua name=a name=b\nx",
    "#!lux name=a\nx",
    "#!lua name=a-b\nx",
    "#!lua name=\nx",
    "#!lua  name=a   \nredis.register_function('h', function() end)",
    "#!LUA NAME=a\nredis.register_function('h', function() end)",
    "#!lua name=a\nx",
    "#!lua name=a\nreturn 1",
]


def cases():
    out = [("function", "flush"), ("function", "load", LIB)]
    for h in HEADERS:
        out.append(("function", "load", "replace", h))
    for b in BODIES:
        out.append(("function", "load", "replace", "#!lua name=b\n" + b))
        out.append(("function", "list", "libraryname", "b", "withcode"))
        out.append(("function", "delete", "b"))
    out += [
        ("function", "load", LIB),
        ("function", "load", "x", LIB),
        ("function", "load", "replace"),
        ("function", "load", "replace", "replace", LIB),
        ("function", "load", "replace", "#!lua name=other\n"
         "redis.register_function('wr', function() end)"),
        ("set", "str", "abc"),
        ("fcall", "ro", 1, "k"),
        ("fcall", "wr", 1, "k", "v"),
        ("fcall_ro", "wr", 1, "k", "v"),
        ("fcall_ro", "ro", 1, "k"),
        ("fcall", "err", 0),
        ("fcall", "err2", 0),
        ("fcall", "rf", 0),
        ("fcall", "rf2", 0),
        ("fcall", "kv", 2, "a", "b", "c"),
        ("fcall", "args", 2, "a", "b", "c", "d"),
        ("fcall", "oom", 0),
        ("fcall", "resp", 0),
        ("fcall", "pc", 0),
        ("fcall", "deep", 0),
        ("fcall", "WR", 1, "k", "v"),
        ("fcall", "nope", 0),
        ("fcall", "ro", "x"),
        ("fcall", "ro", 2, "a"),
        ("fcall", "ro", -1),
        ("fcall", "ro"),
        ("eval", "return redis.call('fcall', 'ro', 1, 'k')", 0),
        ("eval", "return type(redis.register_function)", 0),
        ("function", "list"),
        ("function", "list", "withcode"),
        ("function", "list", "libraryname", "LIB*"),
        ("function", "list", "libraryname", "zz*"),
        ("function", "list", "libraryname"),
        ("function", "list", "x"),
        ("function", "list", "withcode", "withcode"),
        ("function", "list", "libraryname", "a", "libraryname", "b"),
        ("function", "stats"),
        ("function", "help"),
        ("function", "kill"),
        ("function", "nosuch"),
        ("function", "delete", "nope"),
        ("function", "delete"),
        ("function", "delete", "lib1"),
        ("fcall", "ro", 1, "k"),
        ("function", "restore"),
        ("function", "restore", "abc"),
        ("function", "restore", "abc", "x"),
        ("function", "restore", "abc", "flush", "x"),
        ("function", "flush", "x"),
        ("function", "flush", "async", "x"),
        ("function", "flush", "sync"),
        ("function", "flush", "async"),
        ("function", "dump"),
        ("function", "stats"),
        ("script", "flush", "sync"),
        ("script", "flush", "async"),
    ]
    return out


def _key(item):
    return repr(item)


def _sorted_list(reply):
    """FUNCTION LIST in a fixed order: Redis lists libraries and their
    functions in its hash tables' order, which nothing specifies."""
    if reply[0] != "*":
        return reply
    libs = []
    for lib in reply[1]:
        kind, fields = lib
        out = []
        for f in fields:
            if kind == "%":
                k, v = f
                if k == ("$", b"functions"):
                    v = ("*", sorted(v[1], key=_key))
                out.append((k, v))
            else:
                out.append(f)
        if kind == "*":
            for i in range(0, len(out) - 1, 2):
                if out[i] == ("$", b"functions"):
                    out[i + 1] = ("*", sorted(out[i + 1][1], key=_key))
        libs.append((kind, out))
    return ("*", sorted(libs, key=_key))


def run_cases(gob, ref, resp):
    fails = e2e.Failures()
    g = e2e.Client(gob.sock)
    r = e2e.Client(ref.sock)
    if resp == 3:
        g.call("HELLO", "3")
        r.call("HELLO", "3")
    for case in cases():
        want = r.call(*case)
        got = g.call(*case)
        if case[:2] == ("function", "list"):
            want, got = _sorted_list(want), _sorted_list(got)
        fails.eq(got, want, "RESP%d %r" % (resp, case))
    g.close()
    r.close()
    fails.finish()


def test_cases_resp2(gob, ref):
    run_cases(gob, ref, 2)


def test_cases_resp3(gob, ref):
    run_cases(gob, ref, 3)


def bulk(reply):
    assert reply[0] == "$", reply
    return reply[1]


def test_dump_restore_both_ways(gob, ref):
    """A DUMP from redis-server (LZF-compressed strings) restores in
    goblind and the reverse, with every policy's texts the same."""
    fails = e2e.Failures()
    g = e2e.Client(gob.sock)
    r = e2e.Client(ref.sock)
    two = "#!lua name=lib2\nredis.register_function('two', " \
          "function() return 2 end)"
    for c in (g, r):
        c.call("function", "flush")
        c.call("function", "load", LIB)
        c.call("function", "load", two)
    rdump = bulk(r.call("function", "dump"))
    gdump = bulk(g.call("function", "dump"))
    steps = [
        ("function", "restore", "PAYLOAD"),
        ("function", "restore", "PAYLOAD", "append"),
        ("function", "restore", "PAYLOAD", "replace"),
        ("fcall", "two", 0),
        ("function", "delete", "lib1"),
        ("function", "load", "#!lua name=lib3\n"
         "redis.register_function('wr', function() return 3 end)"),
        ("function", "restore", "PAYLOAD", "replace"),
        ("function", "delete", "lib3"),
        ("function", "restore", "PAYLOAD", "replace"),
        ("fcall", "ro", 1, "k"),
        ("function", "restore", "PAYLOAD", "flush"),
        ("function", "list", "libraryname", "lib1"),
        ("function", "restore", "PAYLOAD-CORRUPT"),
        ("function", "restore", "PAYLOAD-SHORT", "flush"),
    ]
    for name, payload in (("redis", rdump), ("goblind", gdump)):
        for step in steps:
            args = []
            for a in step:
                if a == "PAYLOAD":
                    a = payload
                elif a == "PAYLOAD-CORRUPT":
                    a = payload[:5] + bytes([payload[5] ^ 1]) + payload[6:]
                elif a == "PAYLOAD-SHORT":
                    a = payload[:9]
                args.append(a)
            want = r.call(*args)
            got = g.call(*args)
            if step[:2] == ("function", "list"):
                want, got = _sorted_list(want), _sorted_list(got)
            # With two libraries colliding, which one Redis names first
            # is its hash table's order.
            if want[0] == "-" and want[1].startswith(b"ERR Library lib"):
                want = ("-", b"ERR Library lib? already exists")
                if got[0] == "-" and got[1].startswith(b"ERR Library lib"):
                    got = want
            fails.eq(got, want, "%s payload: %r" % (name, step))
    # The payload of one library is the same bytes on both servers once
    # neither compresses (the code is under LZF's 20-byte minimum).
    for c in (g, r):
        c.call("function", "flush")
        c.call("function", "load", "#!lua name=x\n"
               "redis.register_function('y', function() return 1 end)")
    g.close()
    r.close()
    fails.finish()


def test_restore_of_a_bad_library_changes_nothing(gob, ref):
    g = e2e.Client(gob.sock)
    g.call("function", "flush")
    g.call("function", "load", LIB)
    dump = bulk(g.call("function", "dump"))
    g.call("function", "delete", "lib1")
    g.call("function", "load", "#!lua name=keep\n"
           "redis.register_function('ro', function() return 'kept' end)")
    got = g.call("function", "restore", dump)
    assert got == ("-", b"ERR Function ro already exists"), got
    assert g.call("fcall", "ro", 0) == ("$", b"kept")
    assert g.call("fcall", "wr", 1, "k", "v")[0] == "-"
    g.close()


def info_memory(c):
    text = c.call("info", "memory")[1].decode()
    return dict(l.split(":", 1) for l in text.split("\r\n") if ":" in l)


def test_info_memory_shows_scripting_as_redis(gob, ref):
    """The scripting lines of INFO memory, in Redis 7.0's order, with the
    same counts; the interpreters' heaps are in used_memory."""
    g = e2e.Client(gob.sock)
    r = e2e.Client(ref.sock)
    for c in (g, r):
        c.call("function", "flush")
        c.call("script", "flush")
        c.call("function", "load", LIB)
        c.call("eval", "return 1", 0)
        c.call("script", "load", "return 2")
    gi, ri = info_memory(g), info_memory(r)
    names = [k for k in ri if "lua" in k or "script" in k or "vm_" in k or
             "function" in k]
    gnames = [k for k in gi if k in names]
    assert gnames == names, (gnames, names)
    for k in ("number_of_cached_scripts", "number_of_functions",
              "number_of_libraries"):
        assert gi[k] == ri[k], (k, gi[k], ri[k])
    assert int(gi["used_memory_vm_functions"]) > 0
    assert int(gi["used_memory_lua"]) == int(gi["used_memory_vm_eval"]) > 0
    assert int(gi["used_memory_vm_total"]) == \
        int(gi["used_memory_vm_eval"]) + int(gi["used_memory_vm_functions"])
    assert int(gi["used_memory"]) > int(gi["used_memory_vm_total"])
    g.close()
    r.close()


def test_stops_cleanly(gob, ref):
    e2e.check_stopped_cleanly(gob)
    ref.stop()


def main():
    path = sys.argv[1]
    gob = e2e.goblind(path)
    if not e2e.has_lua(e2e.Client(gob.sock)):
        print("goblind was built without Lua: skipped")
        gob.stop()
        sys.exit(77)
    ref = e2e.redis_server()
    e2e.run_tests([test_cases_resp2, test_cases_resp3,
                   test_dump_restore_both_ways,
                   test_restore_of_a_bad_library_changes_nothing,
                   test_info_memory_shows_scripting_as_redis,
                   test_stops_cleanly], gob, ref)


if __name__ == "__main__":
    main()
