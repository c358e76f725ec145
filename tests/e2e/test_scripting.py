"""test_scripting.py - EVAL, EVALSHA, EVAL_RO and SCRIPT against
redis-server 7.0.15, compared exactly, in RESP2 and RESP3; and
python3-redis's register_script and Lock, which run Lua scripts; scripts
and functions over goblind's ring in RESP2 and in SBE (each command an Argv
frame), printed by goblin-cli and compared with goblin-cli's print of
redis-server's RESP2 and RESP3 replies; and the Lua heap's bound
(lua-heap-max, Goblin's own: redis-server has none).

    /usr/bin/python3 test_scripting.py GOBLIND

Every case runs on a fresh goblind and a fresh redis-server over their
Unix sockets; the replies (errors with their "script: SHA, on
@user_script:N." references included) must be byte for byte the same.
A goblind built without Lua answers "ERR scripting is not available" and
the test says so and skips (exit 77).
"""

import hashlib
import os
import subprocess
import sys

import redis

import e2e

# One script per case: conversions both ways, errors of every kind, the
# sandbox, shebang flags, the libraries (cjson, cmsgpack, struct, bit).
CASES = [
    ('set','s','a'),
    ('eval',"return redis.call('incr','s')",0),
    ('eval',"return redis.pcall('incr','s')",0),
    ('eval',"return x",0),
    ('eval',"return x(",0),
    ('eval',"x=1",0),
    ('eval',"error('boom')",0),
    ('eval',"error({err='MY boom'})",0),
    ('eval',"return redis.call('nosuch')",0),
    ('eval',"return redis.call('get')",0),
    ('eval',"return redis.call()",0),
    ('eval',"return 1",-1),
    ('eval',"return 1",2,'a'),
    ('eval',"return 1",'x'),
    ('evalsha','ffffffffffffffffffffffffffffffffffffffff',0),
    ('evalsha','abc',0),
    ('eval',"return redis.call('eval','return 1',0)",0),
    ('eval_ro',"return redis.call('set','x',1)",0),
    ('eval',"#!lua flags=no-writes\nreturn redis.call('set','x',1)",0),
    ('eval',"return os",0),
    ('eval',"return loadfile",0),
    ('eval',"return {1,2,{3,'x'},nil,5}",0),
    ('eval',"return {ok='fine'}",0),
    ('eval',"return {err='bad'}",0),
    ('eval',"return 3.99",0),
    ('eval',"return true",0),
    ('eval',"return false",0),
    ('eval',"return redis.error_reply('x y')",0),
    ('eval',"return redis.status_reply('yo')",0),
    ('eval',"return redis.sha1hex('')",0),
    ('eval',"error(nil)",0),
    ('eval',"error(true)",0),
    ('eval',"error({err=5})",0),
    ('eval',"#!foo\nreturn 1",0),
    ('eval',"#!lua flags=bad\nreturn 1",0),
    ('eval',"#!lua xx=1\nreturn 1",0),
    ('eval',"#!lua\nreturn 1",0),
    ('eval',"#!lua flags=no-writes,allow-oom\nreturn 1",0),
    ('eval',"#!lua name=x\nreturn 1",0),
    ('eval',"return {1,2,nil,3}",0),
    ('eval',"return {double=3.5}",0),
    ('eval',"return {big_number='123'}",0),
    ('eval',"return {map={a=1}}",0),
    ('eval',"return {set={a=true}}",0),
    ('eval',"redis.setresp(3); return redis.call('hgetall','nokey')",0),
    ('eval',"redis.setresp(3); local r = redis.call('zscore','z','a'); return type(r)",0),
    ('eval',"redis.setresp(3); return {type(redis.call('get','nokey')), tostring(redis.call('get','nokey'))}",0),
    ('eval',"return {type(redis.call('get','nokey')), tostring(redis.call('get','nokey'))}",0),
    ('eval',"return -3.99",0),
    ('eval',"return {ok=5}",0),
    ('eval',"return redis.call('set',1.5,2^60)",0),
    ('eval',"return redis.call('get','1.5')",0),
    ('eval',"return redis.call('set','k',{})",0),
    ('eval',"return redis.call('set','k',nil)",0),
    ('eval',"return redis.error_reply('MY x')",0),
    ('eval',"return redis.error_reply('-MY x')",0),
    ('eval',"return redis.error_reply('nocode')",0),
    ('eval',"return redis.error_reply(5)",0),
    ('eval',"return pcall(redis.call,'incr','s')",0),
    ('eval',"local ok,e = pcall(redis.call,'incr','s'); return e",0),
    ('eval',"local e = redis.pcall('incr','s'); return e",0),
    ('eval',"local e = redis.pcall('incr','s'); return e['err']",0),
    ('eval',"return redis.REDIS_VERSION .. ' ' .. redis.REDIS_VERSION_NUM",0),
    ('script','help'),
    ('script','flush','x'),
    ('script','flush','async','x'),
    ('script','kill'),
    ('script','exists','A'),
    ('script','load','return 1'),
    ('script','exists','E0E1F9FABFC9D4800C877A703B823AC0578FF8DB','e0e1f9fabfc9d4800c877a703b823ac0578ff8db'),
    ('evalsha','E0E1F9FABFC9D4800C877A703B823AC0578FF8DB',0),
    ('script','load','return +'),
    ('eval','return string.x','0'),
    ('eval','string.x=1','0'),
    ('eval','rawset(_G,"x",1)','0'),
    ('eval','return _G.x','0'),
    ('eval','setmetatable(_G,{})','0'),
    ('eval','return loadstring(string.dump(function() return 1 end))','0'),
    ('eval','return loadstring("return 7")()','0'),
    ('eval','return type(cjson.encode)..type(cmsgpack.pack)..type(bit.band)..type(struct.pack)','0'),
    ('eval','return cjson.encode({1,2,{a=1}})','0'),
    ('eval','return {1,{2,{3}}}','0'),
    ('eval','return coroutine.running()','0'),
    ('eval','return type(getfenv)','0'),
    ('eval','local f = function() x = 5 end f()','0'),
    ('eval','redis.call = nil','0'),
    ('eval','return tostring(2^63)','0'),
    ('eval','return 2^63','0'),
    ('eval','return 0/0','0'),
    ('eval',"local t={} for k,v in pairs(_G) do t[#t+1]=k end table.sort(t) return t",0),
    ('eval',"local t={} for k,v in pairs(string) do t[#t+1]=k end table.sort(t) return t",0),
    ('eval',"local t={} for k,v in pairs(math) do t[#t+1]=k end table.sort(t) return t",0),
    ('eval',"local t={} for k,v in pairs(redis) do t[#t+1]=k end table.sort(t) return t",0),
    ('eval',"return {KEYS[1],KEYS[2],ARGV[1],#ARGV}",2,'k1','k2','a1','a2','a3'),
    ('eval',"return cmsgpack.pack({1,2,3},'abc',{a=1},-5,300,1.5,3.1)",0),
    ('eval',"return {cmsgpack.unpack(cmsgpack.pack({1,2,3},'abc',-5,300,70000,-70000,1.5))}",0),
    ('eval',"return {struct.pack('>i2<I4!4bhd', 1, 2, 3, 4, 5.5), struct.size('>i2<I4b')}",0),
    ('eval',"return {struct.unpack('>i2<I4', struct.pack('>i2<I4', -7, 9))}",0),
    ('eval',"return struct.unpack('c0', 'abc')",0),
    ('eval',"return {struct.unpack('bc0', struct.pack('bc0', 3, 'xyz'))}",0),
    ('eval',"return bit.tohex(bit.bxor(0xff, 0x0f))",0),
    ('eval',"return cjson.decode('[1,2,{\"a\":3}]')[3].a",0),
    ('eval',"return redis.call('ping')",0),
    ('eval',"return redis.pcall('ping')",0),
    ('eval',"redis.setresp(3) return redis.call('ping')",0),
    ('eval',"return {double=3.5}",0),
    ('eval',"return {big_number='123'}",0),
    ('eval',"return {map={a=1}}",0),
    ('eval',"return {set={a=true}}",0),
    ('eval',"return true",0),
    ('eval',"return false",0),
    ('eval',"return nil",0),
    ('eval',"return {verbatim_string={format='txt',string='hi'}}",0),
    ('eval',"redis.setresp(3) return true",0),
    ('eval',"redis.setresp(3) return false",0),
    ('eval',"redis.setresp(3) return redis.call('hgetall','h')",0),
    ('hset','h','f','v'),
    ('eval',"redis.setresp(3) return redis.call('hgetall','h')",0),
    ('eval',"return redis.call('hgetall','h')",0),
    ('eval',"redis.setresp(3) return redis.call('hgetall','h')['map']['f']",0),
    ('zadd','z','1.5','m'),
    ('eval',"redis.setresp(3) return redis.call('zscore','z','m')",0),
    ('eval',"redis.setresp(3) return redis.call('zscore','z','m')['double']",0),
    ('eval',"return redis.call('zscore','z','m')",0),
    ('eval',"redis.setresp(3) return redis.call('zrange','z',0,-1,'withscores')",0),
    ('eval',"return redis.setresp(4)",0),
    ('eval',"return redis.log(redis.LOG_WARNING, 'hi', 'there')",0),
    ('eval',"return redis.log(9, 'hi')",0),
    ('eval',"return redis.log('x', 'hi')",0),
    ('eval',"return redis.log(1)",0),
    ('eval',"return redis.set_repl(redis.REPL_ALL)",0),
    ('eval',"return redis.set_repl(99)",0),
    ('eval',"return redis.replicate_commands()",0),
    ('eval',"local a = {} a[1]=a return #a",0),
    ('eval',"return string.rep('x', 10)",0),
    ('eval',"return redis.call('blpop','nolist',0)",0),
    ('eval',"return redis.call('set','x','1','GET')",0),
    ('eval',"local function f(n) return 1 + f(n+1) end return f(1)",0),
    # A script runs in its caller's database, and its SELECT is its own:
    # the caller is back on its database afterwards (inside EXEC too).
    ('flushall',),
    ('set','a','0'),
    ('select','1'),
    ('set','a','1'),
    ('eval',"return redis.call('get','a')",0),
    ('eval',"redis.call('set','b','x') return 1",0),
    ('get','b'),
    ('select','0'),
    ('get','b'),
    ('eval',"redis.call('select','1') return redis.call('get','a')",0),
    ('get','a'),
    ('select','1'),
    ('eval',"redis.call('select','0') redis.call('set','c','0') return 1",0),
    ('get','c'),
    ('select','0'),
    ('get','c'),
    ('multi',),
    ('select','2'),
    ('eval',"redis.call('set','d','1') redis.call('select','3') return 1",0),
    ('get','d'),
    ('exec',),
    ('get','d'),
    ('select','0'),
    ('get','d'),
    ('function','load','replace',"#!lua name=dblib\n"
     "redis.register_function('dbget', function(k, a) "
     "local v = redis.call('get', k[1]) redis.call('select', '4') "
     "return {v, redis.call('get', k[1])} end)"),
    ('select','4'),
    ('set','e','four'),
    ('select','5'),
    ('set','e','five'),
    ('fcall','dbget',1,'e'),
    ('get','e'),
    ('select','0'),
    ('function','delete','dblib'),
]


def run_cases(gob, ref, resp):
    fails = e2e.Failures()
    g = e2e.Client(gob.sock)
    r = e2e.Client(ref.sock)
    if resp == 3:
        g.call("HELLO", "3")
        r.call("HELLO", "3")
    for case in CASES:
        want = r.call(*case)
        got = g.call(*case)
        fails.eq(got, want, "RESP%d %r" % (resp, case))
    g.close()
    r.close()
    fails.finish()


def test_cases_resp2(gob, ref):
    run_cases(gob, ref, 2)


def test_cases_resp3(gob, ref):
    run_cases(gob, ref, 3)


def test_math_random_sequence(gob, ref):
    # A fresh server's first values: Redis's own lrand48 from its
    # unseeded state, the same on every machine.
    g = e2e.Client(gob.sock)
    got = [g.call("EVAL", "return math.random(1000)", "0") for _ in range(3)]
    assert got == [(":", 397), (":", 841), (":", 354)], got


def test_redis_py_register_script_and_lock(gob, ref):
    r = redis.Redis(unix_socket_path=gob.sock)
    add = r.register_script(
        "return redis.call('INCRBY', KEYS[1], ARGV[1])")
    assert add(keys=["counter"], args=[5]) == 5
    r.script_flush()
    assert add(keys=["counter"], args=[2]) == 7  # NOSCRIPT, then EVAL
    lock = r.lock("resource", timeout=5)
    assert lock.acquire(blocking=False)
    assert not r.lock("resource").acquire(blocking=False)
    assert lock.extend(5)
    lock.release()
    assert r.get("resource") is None
    assert r.lock("resource").acquire(blocking=False)


# Run in order on both servers: each call's output over the ring (SBE,
# then RESP2) against redis-server's over its socket (RESP3, then RESP2).
RING_SCRIPT = ("redis.call('SET', KEYS[1], ARGV[1]) "
               "return {redis.call('INCR', KEYS[1]), "
               "redis.call('GET', KEYS[1]), {ok='fine'}, 2.5}")
RING_CASES = [
    ["SCRIPT", "LOAD", RING_SCRIPT],
    ["EVALSHA", hashlib.sha1(RING_SCRIPT.encode()).hexdigest(), "1", "rk",
     "41"],
    ["EVAL", RING_SCRIPT, "1", "rk", "7"],
    ["EVAL", "redis.setresp(3) return redis.call('HGETALL', KEYS[1])", "1",
     "rh"],
    ["EVAL", "return {double=1.5}", "0"],
    ["EVAL", "return redis.call('nosuch')", "0"],
    ["EVAL", "return x", "0"],
    ["EVAL_RO", "return redis.call('SET', 'a', 1)", "0"],
    ["EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0"],
    ["FUNCTION", "LOAD", "REPLACE", "#!lua name=ringlib\n"
     "redis.register_function('rf', function(keys, args) "
     "return redis.call('INCRBY', keys[1], args[1]) end)\n"
     "redis.register_function{function_name='rro', callback=function(keys) "
     "return redis.call('GET', keys[1]) end, flags={'no-writes'}}"],
    ["FCALL", "rf", "1", "rc", "5"],
    ["FCALL_RO", "rro", "1", "rc"],
    ["FCALL_RO", "rf", "1", "rc", "1"],
    ["FCALL", "nosuch", "0"],
]


def cli_out(cli, *args):
    p = subprocess.run([cli, "--no-raw"] + list(args), capture_output=True,
                       timeout=20)
    return p.stdout + p.stderr


def test_scripts_over_the_ring_sbe_and_resp(gob, ref):
    cli = os.path.join(os.path.dirname(os.path.dirname(gob.path)),
                       "clients", "goblin-cli")
    for proto, ring_flags, ref_flags in [("SBE", ["--sbe"], ["-3"]),
                                         ("RESP2", [], [])]:
        for sock in (gob.sock, ref.sock):
            e2e.Client(sock).call("FLUSHALL")
            e2e.Client(sock).call("HSET", "rh", "f", "v")
        for case in RING_CASES:
            want = cli_out(cli, "-s", ref.sock, *ref_flags, *case)
            got = cli_out(cli, "--ring", gob.ring, *ring_flags, *case)
            assert got == want, (proto, case, got, want)
    for sock in (gob.sock, ref.sock):
        assert e2e.Client(sock).call("FUNCTION", "FLUSH") == ("+", b"OK")


def info_field(c, name):
    text = c.call("INFO", "memory")[1].decode()
    for line in text.split("\r\n"):
        if line.startswith(name + ":"):
            return int(line.split(":", 1)[1])
    raise AssertionError("INFO memory has no " + name)


# Builds a table until the heap is refused.
GROW = ("local t = {} for i = 1, 1e8 do "
        "t[i] = i .. 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' end")


def test_heap_bound(gob, ref):
    c = e2e.Client(gob.sock)
    other = e2e.Client(gob.sock)
    assert other.call("SET", "k", "v") == ("+", b"OK")
    assert c.call("CONFIG", "SET", "lua-heap-max", "4mb") == ("+", b"OK")
    assert c.call("CONFIG", "GET", "lua-heap-max") == \
        ("*", [("$", b"lua-heap-max"), ("$", b"4194304")])
    assert c.call("CONFIG", "SET", "lua-heap-max", "x1")[1].endswith(
        b"argument must be a memory value")
    c.call("EVAL", "return 1", "0")
    lua0 = info_field(c, "used_memory_lua")
    used0 = info_field(c, "used_memory")

    # A script past the bound fails with Lua's "not enough memory" through
    # Redis's error path for a non-table error; the server stays up, the
    # heap comes back and the next script runs.
    script = GROW + " return #t"
    sha = hashlib.sha1(script.encode()).hexdigest()
    got = c.call("EVAL", script, "0")
    assert got == ("-", b"ERR Error running script " + sha.encode() +
                   b", not enough memory"), got
    assert other.call("GET", "k") == ("$", b"v")
    assert info_field(c, "used_memory_lua") < lua0 + 65536
    assert info_field(c, "used_memory") < used0 + 262144
    assert c.call("EVAL", "return redis.call('GET', 'k')", "0") == \
        ("$", b"v")
    got = c.call("EVALSHA", sha, "0")
    assert got[1].endswith(b"not enough memory"), got
    # pcall catches it, as any error; the script goes on once it has let
    # the collector free the garbage (Lua 5.1 has no emergency collection).
    got = c.call("EVAL", "local ok, e = pcall(function() " + GROW +
                 " end) collectgarbage() return {tostring(ok), e}", "0")
    assert got == ("*", [("$", b"false"), ("$", b"not enough memory")]), got
    # Source too big to compile under the bound.
    got = c.call("EVAL", "return '" + "x" * (5 << 20) + "'", "0")
    assert got == ("-", b"ERR Error compiling script (new function): "
                   b"not enough memory"), got[1][:80]
    assert info_field(c, "used_memory_lua") < lua0 + 65536

    # A library whose code allocates past it does not load; one whose
    # function does loads, and its FCALL fails the same way.
    fn0 = info_field(c, "used_memory_vm_functions")
    got = c.call("FUNCTION", "LOAD", "#!lua name=big\n" + GROW +
                 "\nredis.register_function('f', function() return 1 end)")
    assert got == ("-", b"ERR Error registering functions: ERR not enough "
                   b"memory"), got
    assert c.call("FUNCTION", "LIST") == ("*", [])
    assert info_field(c, "used_memory_vm_functions") < fn0 + 65536
    assert c.call("FUNCTION", "LOAD", "#!lua name=lib\n"
                  "redis.register_function('grow', function() " + GROW +
                  " end)\n"
                  "redis.register_function('one', function() return 1 "
                  "end)") == ("$", b"lib")
    got = c.call("FCALL", "grow", "0")
    assert got == ("-", b"ERR Error running script grow, not enough "
                   b"memory"), got
    assert other.call("PING") == ("+", b"PONG")
    assert c.call("FCALL", "one", "0") == (":", 1)
    assert info_field(c, "used_memory_vm_functions") < fn0 + 131072

    # 0 lifts the bound; the default is 1 GiB.
    assert c.call("CONFIG", "SET", "lua-heap-max", "0") == ("+", b"OK")
    assert c.call("EVAL", "return #string.rep('x', 5000000)", "0") == \
        (":", 5000000)
    assert c.call("CONFIG", "SET", "lua-heap-max", "1gb") == ("+", b"OK")
    assert c.call("FUNCTION", "FLUSH") == ("+", b"OK")
    c.close()
    other.close()


def test_stops_cleanly(gob, ref):
    e2e.check_stopped_cleanly(gob)
    ref.stop()


def main():
    path = sys.argv[1]
    ring = os.path.join(e2e.tmpdir(), "scripting.ring")
    gob = e2e.goblind(path, "--ring", ring, "64k")
    gob.path = path
    gob.ring = ring
    if not e2e.has_lua(e2e.Client(gob.sock)):
        print("goblind was built without Lua: skipped")
        gob.stop()
        sys.exit(77)
    ref = e2e.redis_server()
    e2e.run_tests([test_math_random_sequence, test_cases_resp2,
                   test_cases_resp3, test_redis_py_register_script_and_lock,
                   test_scripts_over_the_ring_sbe_and_resp,
                   test_heap_bound, test_stops_cleanly], gob, ref)


if __name__ == "__main__":
    main()
