"""diff_scripts.py - the differential test's scripting stage: EVAL,
EVALSHA, EVAL_RO and FCALL / FCALL_RO of scripts drawn from a fixed set
(erroring ones included: Lua errors, error tables, redis.call errors with
their "script: NAME, on @user_script:N." references, read-only refusals,
wrong types, bad arguments), with random keys of every type and random
arguments, on the keyspace the earlier stages left. Compared byte for
byte with redis-server; test_differential.py calls run(pair, rng).
"""

import hashlib

KEYS = [b"s:%d" % i for i in range(4)] + [b"h:0", b"z:0", b"l:0", b"t:0",
                                         b"m:0", b"x:0", b"nokey"]
ARGS = [b"0", b"1", b"-1", b"5", b"100", b"abc", b"1.5", b"", b"f",
        b"m1", b"\x00bin\r\n", b"9223372036854775807", b"inf"]

# Scripts whose replies do not depend on hash order or on time.
SCRIPTS = [
    b"return redis.call('GET', KEYS[1])",
    b"return redis.call('INCR', KEYS[1])",
    b"local v = redis.call('INCR', KEYS[1]) "
    b"redis.call('EXPIRE', KEYS[1], 1000) return v",
    b"redis.call('GET', KEYS[1]) local v = redis.call('INCR', KEYS[2]) "
    b"redis.call('EXPIRE', KEYS[2], ARGV[1]) return v",
    b"return redis.pcall('HINCRBY', KEYS[1], ARGV[1], ARGV[2])",
    b"return redis.call('HGET', KEYS[1], ARGV[1])",
    b"return redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])",
    b"return redis.call('ZSCORE', KEYS[1], ARGV[1])",
    b"return redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')",
    b"return redis.call('LPUSH', KEYS[1], unpack(ARGV))",
    b"return redis.call('LRANGE', KEYS[1], 0, -1)",
    b"return {redis.call('TYPE', KEYS[1])['ok'], "
    b"redis.call('EXISTS', KEYS[1])}",
    b"return redis.call('SET', KEYS[1], ARGV[1], 'GET')",
    b"return redis.call('STRLEN', KEYS[1]) + #ARGV",
    b"return tonumber(ARGV[1])",
    b"return {ARGV[1], tonumber(ARGV[1]), #KEYS}",
    b"return redis.call('SCARD', KEYS[1])",
    b"error('boom')",
    b"error({err='MY custom error'})",
    b"return {err='ERR from a table'}",
    b"return redis.error_reply('CODE text')",
    b"return redis.status_reply(ARGV[1])",
    b"return redis.call('nosuch', KEYS[1])",
    b"return redis.call('GET')",
    b"return redis.pcall('INCR', KEYS[1])",
    b"local ok, e = pcall(redis.call, 'INCR', KEYS[1]) "
    b"return {tostring(ok), type(e)}",
    b"return 3.99",
    b"return {1, 2, nil, 4}",
    b"return x + 1",
    b"#!lua flags=no-writes\nreturn redis.call('SET', KEYS[1], ARGV[1])",
    b"#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])",
    b"#!lua\nreturn redis.call('DEL', KEYS[1])",
    b"redis.setresp(3) return redis.call('ZSCORE', KEYS[1], ARGV[1])",
    b"return cjson.encode({ARGV[1], #KEYS})",
    b"return redis.sha1hex(ARGV[1])",
    # The sandbox: each refusal with its text, and what a run does to
    # KEYS and ARGV gone by the next one.
    b"x = 1",
    b"redis.call = nil",
    b"rawset(_G, 'x', 1)",
    b"return os",
    b"getmetatable('').x = 1",
    b"local mt = getmetatable('') mt.__index = nil",
    b"return {type(getmetatable('')), rawget(_G, 'redis') == redis, "
    b"type(rawget(redis, 'call'))}",
    b"KEYS[5] = 'x' KEYS.k = 1 ARGV[1] = 'y' "
    b"setmetatable(ARGV, {__index = function() return 'z' end}) "
    b"return {KEYS[5], ARGV[9]}",
    b"return {tostring(KEYS[5]), tostring(KEYS.k), tostring(ARGV[9]), "
    b"tostring(getmetatable(ARGV)), tostring(ARGV[1])}",
    # redis, KEYS and ARGV used in every way, with the errors that name
    # them as globals (EVAL gives them locals only where that is unseen).
    b"return KEYS .. 'x'",
    b"return redis()",
    b"return KEYS + 1",
    b"return KEYS[[x]]",
    b"KEYS = 1",
    b"local KEYS = 1 return KEYS",
    b"return #KEYS + #ARGV",
    b"return (KEYS)[1]",
    b"return ARGV:len()",
    b"local function f() return redis.call('EXISTS', KEYS[1]) end "
    b"return f()",
    b"return -- KEYS = 1\nKEYS[1]",
    b"return [[redis = 1]] .. tostring(KEYS[1])",
    b"local t = {redis = 1} return t.redis + #ARGV",
    b"local r = redis return r.sha1hex(ARGV[1] or '')",
    b"redis.call('SET', KEYS[1], 'v') return redis.call('GET', KEYS[1])",
]

LIBRARY = b"""#!lua name=difflib
redis.register_function('fget', function(keys, args)
  return redis.call('GET', keys[1]) end)
redis.register_function('fbench', function(keys, args)
  redis.call('GET', keys[1])
  local v = redis.call('INCR', keys[2])
  redis.call('EXPIRE', keys[2], 1000)
  return v end)
redis.register_function{function_name='fro', callback=function(keys, args)
  return redis.call('TYPE', keys[1]) end, flags={'no-writes'}}
redis.register_function{function_name='fro_bad',
  callback=function(keys, args) return redis.call('DEL', keys[1]) end,
  flags={'no-writes'}}
redis.register_function('fzadd', function(keys, args)
  return redis.call('ZADD', keys[1], args[1], args[2]) end)
redis.register_function('fboom', function(keys, args) error('boom') end)
redis.register_function('ferr', function(keys, args)
  return redis.call('HSET', keys[1]) end)
redis.register_function('fargs', function(keys, args)
  return {#keys, #args, args[1]} end)
"""
FUNCTIONS = [b"fget", b"fbench", b"fro", b"fro_bad", b"fzadd", b"fboom",
             b"ferr", b"fargs", b"nosuch"]


def sha(script):
    return hashlib.sha1(script).hexdigest().encode()


def one(rng):
    nkeys = rng.choice([1, 1, 1, 2, 0])
    keys = [rng.choice(KEYS) for _ in range(nkeys)]
    args = [rng.choice(ARGS) for _ in range(rng.choice([0, 1, 2, 2, 3]))]
    k = rng.random()
    if k < 0.35:
        s = rng.choice(SCRIPTS)
        return [b"EVAL", s, b"%d" % nkeys] + keys + args
    if k < 0.6:
        s = rng.choice(SCRIPTS)
        return [b"EVALSHA", sha(s), b"%d" % nkeys] + keys + args
    if k < 0.65:
        s = rng.choice(SCRIPTS)
        return [b"EVAL_RO", s, b"%d" % nkeys] + keys + args
    if k < 0.92:
        return [b"FCALL", rng.choice(FUNCTIONS), b"%d" % nkeys] + keys + args
    return [b"FCALL_RO", rng.choice(FUNCTIONS), b"%d" % nkeys] + keys + args


def stage(rng, count=400):
    cmds = [[b"SCRIPT", b"FLUSH"], [b"FUNCTION", b"FLUSH"],
            [b"FUNCTION", b"LOAD", LIBRARY]]
    # Half are cached by SCRIPT LOAD, half only once an EVAL has run
    # them: EVALSHA of the others answers NOSCRIPT on both.
    cmds += [[b"SCRIPT", b"LOAD", s] for s in SCRIPTS[::2]]
    cmds += [one(rng) for _ in range(count)]
    cmds += [[b"EVAL", b"return 1", b"-1"], [b"EVAL", b"return 1", b"x"],
             [b"EVALSHA", b"abc", b"0"], [b"FCALL", b"fget", b"3", b"a"],
             [b"SCRIPT", b"EXISTS"] + [sha(s) for s in SCRIPTS],
             [b"FUNCTION", b"DELETE", b"difflib"], [b"FCALL", b"fget", b"0"]]
    return cmds


def run(pair, rng):
    err = pair.run(stage(rng), exact=True)
    return "scripts: %s" % err if err else None
