/* test_script.c - libgoblin-script through an engine and a session:
 * EVAL's conversions both ways in RESP2 and RESP3, the redis API, the
 * sandbox's refusals, errors with their @user_script lines, the script
 * cache, shebang flags, ACL inside scripts, cmsgpack and struct, and
 * scripts that must fail without harm (deep recursion, huge tables,
 * error objects of every type). Texts are redis-server 7.0.15's. */
#include <stdarg.h>

#include "goblin/lua.h"
#include "goblin/stream.h"
#include "test_commands_util.h"

static int lua_setup(void **state)
{
    struct cfix *f;

    if (cfix_setup(state) != 0)
        return -1;
    f = *state;
    return goblin_lua_attach(f->eng);
}

#define LUA_TEST(fn) \
    cmocka_unit_test_setup_teardown(fn, lua_setup, cfix_teardown)

/* Sends argv (n C strings) as one multibulk; returns the reply bytes. */
static const char *call(struct cfix *f, int n, ...)
{
    static char buf[1 << 16];
    size_t len = (size_t)snprintf(buf, sizeof(buf), "*%d\r\n", n);
    va_list ap;
    int i;

    va_start(ap, n);
    for (i = 0; i < n; i++) {
        const char *a = va_arg(ap, const char *);

        len += (size_t)snprintf(buf + len, sizeof(buf) - len,
                                "$%zu\r\n%s\r\n", strlen(a), a);
    }
    va_end(ap);
    assert_true(len < sizeof(buf));
    return feed_on(f, f->s, buf);
}

#define EVAL(script) call(f, 3, "EVAL", script, "0")
#define EXPECT_EVAL(script, want) assert_string_equal(EVAL(script), want)

static void test_lua_to_resp2(void **state)
{
    struct cfix *f = *state;

    EXPECT_EVAL("return 3.99", ":3\r\n");
    EXPECT_EVAL("return -3.99", ":-3\r\n");
    EXPECT_EVAL("return 'x'", "$1\r\nx\r\n");
    EXPECT_EVAL("return true", ":1\r\n");
    EXPECT_EVAL("return false", "$-1\r\n");
    EXPECT_EVAL("return nil", "$-1\r\n");
    EXPECT_EVAL("return {1,2,nil,3}", "*2\r\n:1\r\n:2\r\n");
    EXPECT_EVAL("return {ok='fine'}", "+fine\r\n");
    EXPECT_EVAL("return {err='MY bad'}", "-MY bad\r\n");
    EXPECT_EVAL("return {double=3.5}", "$3\r\n3.5\r\n");
    EXPECT_EVAL("return {big_number='123'}", "$3\r\n123\r\n");
    EXPECT_EVAL("return {map={a=1}}", "*2\r\n$1\r\na\r\n:1\r\n");
    EXPECT_EVAL("return {set={a=true}}", "*1\r\n$1\r\na\r\n");
    EXPECT_EVAL("return 0/0", ":-9223372036854775808\r\n");
    EXPECT_EVAL("return redis.status_reply('yo')", "+yo\r\n");
    EXPECT_EVAL("return redis.error_reply('nocode')", "-ERR nocode\r\n");
    EXPECT_EVAL("return redis.error_reply('-MY x')", "-MY x\r\n");
}

static void test_lua_to_resp3(void **state)
{
    struct cfix *f = *state;

    call(f, 2, "HELLO", "3");
    EXPECT_EVAL("return {double=3.5}", ",3.5\r\n");
    EXPECT_EVAL("return {big_number='123'}", "(123\r\n");
    EXPECT_EVAL("return {map={a=1}}", "%1\r\n$1\r\na\r\n:1\r\n");
    EXPECT_EVAL("return {set={a=true}}", "~1\r\n$1\r\na\r\n");
    EXPECT_EVAL("return {verbatim_string={format='txt',string='hi'}}",
                "=6\r\ntxt:hi\r\n");
    /* Booleans follow the script's RESP version, not the client's. */
    EXPECT_EVAL("return true", ":1\r\n");
    EXPECT_EVAL("return false", "_\r\n");
    EXPECT_EVAL("redis.setresp(3) return true", "#t\r\n");
    EXPECT_EVAL("redis.setresp(3) return false", "#f\r\n");
}

static void test_resp_to_lua(void **state)
{
    struct cfix *f = *state;

    call(f, 3, "HSET", "h", "f");
    call(f, 4, "HSET", "h", "f", "v");
    call(f, 4, "ZADD", "z", "1.5", "m");
    EXPECT_EVAL("return type(redis.call('get','nokey'))",
                "$7\r\nboolean\r\n");
    EXPECT_EVAL("redis.setresp(3) return type(redis.call('get','nokey'))",
                "$3\r\nnil\r\n");
    EXPECT_EVAL("return redis.call('ping')", "+PONG\r\n");
    EXPECT_EVAL("return redis.call('ping')['ok']", "$4\r\nPONG\r\n");
    EXPECT_EVAL("return redis.call('hgetall','h')",
                "*2\r\n$1\r\nf\r\n$1\r\nv\r\n");
    EXPECT_EVAL("redis.setresp(3) return redis.call('hgetall','h').map.f",
                "$1\r\nv\r\n");
    EXPECT_EVAL("redis.setresp(3) return redis.call('zscore','z','m')"
                ".double * 2", ":3\r\n");
    EXPECT_EVAL("return redis.call('zscore','z','m')", "$3\r\n1.5\r\n");
    EXPECT_EVAL("return redis.pcall('incr','h')['err']",
                "$65\r\nWRONGTYPE Operation against a key holding the wrong "
                "kind of value\r\n");
    EXPECT_EVAL("return redis.call('set',1.5,2^60)", "+OK\r\n");
    EXPECT_EVAL("return redis.call('get','1.5')",
                "$21\r\n1.152921504606847e+18\r\n");
}

static void test_errors_name_the_script_line(void **state)
{
    struct cfix *f = *state;

    call(f, 3, "SET", "s", "a");
    EXPECT_EVAL("return redis.call('incr','s')",
                "-ERR value is not an integer or out of range script: "
                "c243b9f46db13ba8f69da41b45a77708832babed, on "
                "@user_script:1.\r\n");
    EXPECT_EVAL("error('boom')",
                "-ERR user_script:1: boom script: "
                "82903a0434f1503e152f89c03c9acd881a0e8150, on "
                "@user_script:1.\r\n");
    EXPECT_EVAL("return x(",
                "-ERR Error compiling script (new function): user_script:1: "
                "unexpected symbol near '<eof>'\r\n");
    EXPECT_EVAL("#!lua flags=no-writes\nreturn redis.call('set','x',1)",
                "-ERR Write commands are not allowed from read-only "
                "scripts. script: 0da8acfc3df79811000ffcaca482af70e298d476, "
                "on @user_script:2.\r\n");
    assert_non_null(strstr(EVAL("return redis.call('nosuch')"),
                           "-ERR Unknown Redis command called from script"));
    assert_non_null(strstr(EVAL("return redis.call('get')"),
                           "-ERR Wrong number of args calling Redis"));
    assert_non_null(strstr(EVAL("return redis.call('eval','return 1',0)"),
                           "-ERR This Redis command is not allowed from "
                           "script"));
    assert_non_null(strstr(EVAL("return redis.call('set','k',{})"),
                           "-ERR Lua redis lib command arguments must be "
                           "strings or integers"));
}

static void test_error_objects_of_every_type(void **state)
{
    struct cfix *f = *state;

    assert_non_null(strstr(EVAL("error(nil)"), "-ERR nil script:"));
    assert_non_null(strstr(EVAL("error(true)"), "-ERR true script:"));
    assert_non_null(strstr(EVAL("error(5)"), "-ERR user_script:1: 5"));
    assert_non_null(strstr(EVAL("error({err=5})"), "-5 script:"));
    assert_non_null(strstr(EVAL("error({})"), "-ERR unknown error"));
    assert_non_null(strstr(EVAL("error(function() end)"),
                           "-ERR function: "));
    assert_non_null(strstr(EVAL("error(setmetatable({}, {__index="
                                "function() error('x') end}))"),
                           "-ERR unknown error"));
    assert_non_null(strstr(EVAL("error(coroutine.create(print))"), "-ERR"));
    /* pcall of a failing redis.call gives the text back. */
    call(f, 3, "SET", "s", "a");
    EXPECT_EVAL("local ok, e = pcall(redis.call, 'incr', 's') return e",
                "$43\r\nERR value is not an integer or out of range\r\n");
}

static void test_scripts_that_must_fail_without_harm(void **state)
{
    struct cfix *f = *state;

    assert_non_null(strstr(EVAL("local function f() return 1 + f() end "
                                "return f()"), "stack overflow"));
    assert_string_equal(EVAL("local t = {} for i = 1, 100000 do t[i] = i "
                             "end return #t"), ":100000\r\n");
    assert_non_null(strstr(EVAL("local t = {} t[1] = t return t"),
                           "-ERR reached lua stack limit\r\n"));
    assert_non_null(strstr(EVAL("return unpack({}, 1, 2^28)"),
                           "too many results to unpack"));
    assert_string_equal(EVAL("return 1"), ":1\r\n");
}

static void test_sandbox_refusals(void **state)
{
    struct cfix *f = *state;
    static const char *const missing[] = {
        "os", "io", "loadfile", "dofile", "print", "require", "getfenv",
        "setfenv", "debug", "package", "module", "newproxy",
    };
    char script[64];
    size_t i;

    for (i = 0; i < sizeof(missing) / sizeof(*missing); i++) {
        snprintf(script, sizeof(script), "return %s", missing[i]);
        assert_non_null(strstr(EVAL(script),
                               "Script attempted to access nonexistent "
                               "global variable"));
    }
    assert_non_null(strstr(EVAL("x = 1"),
                           "-ERR user_script:1: Attempt to modify a "
                           "readonly table script:"));
    assert_non_null(strstr(EVAL("rawset(_G, 'x', 1)"),
                           "-ERR Attempt to modify a readonly table"));
    assert_non_null(strstr(EVAL("string.x = 1"), "readonly table"));
    assert_non_null(strstr(EVAL("redis.call = nil"), "readonly table"));
    assert_non_null(strstr(EVAL("setmetatable(_G, {})"), "readonly table"));
    assert_non_null(strstr(EVAL("getmetatable('').__index.upper = 1"),
                           "readonly table"));
    /* The string metatable is read-only too, as Redis 7.0.15 answers. */
    EXPECT_EVAL("return type(getmetatable(''))", "$5\r\ntable\r\n");
    assert_non_null(strstr(EVAL("getmetatable('').x = 1"),
                           "-ERR user_script:1: Attempt to modify a "
                           "readonly table script:"));
    assert_non_null(strstr(EVAL("getmetatable('').__index = nil"),
                           "readonly table"));
    assert_non_null(strstr(EVAL("rawset(getmetatable(''), 'x', 1)"),
                           "-ERR Attempt to modify a readonly table"));
    EXPECT_EVAL("return getmetatable('').__index.upper('a')",
                "$1\r\nA\r\n");
    /* rawget reads the read-only tables themselves, as in Redis. */
    EXPECT_EVAL("return {rawget(_G, 'redis') == redis, "
                "type(rawget(redis, 'call')), rawget(_G, 'nosuch')}",
                "*2\r\n:1\r\n$8\r\nfunction\r\n");
    EXPECT_EVAL("return loadstring(string.dump(function() return 1 end))",
                "$-1\r\n");
    EXPECT_EVAL("return load(function() return nil end) ~= nil", ":1\r\n");
    EXPECT_EVAL("return loadstring('return 7')()", ":7\r\n");
    EXPECT_EVAL("local t = {} for k in pairs(_G) do t[#t+1] = k end "
                "return #t", ":35\r\n");
}

/* What a run does to KEYS and ARGV (new entries, a metatable) is gone
 * at the next run, whether that runs the same script or another. */
static void test_keys_argv_fresh_each_run(void **state)
{
    struct cfix *f = *state;
    static const char touch[] =
        "KEYS[3] = 'x' KEYS.k = 1 ARGV[1] = 'changed' "
        "setmetatable(ARGV, {__index = function() return 'm' end}) "
        "return {KEYS[1], KEYS[3], ARGV[9]}";
    static const char look[] =
        "return {tostring(KEYS[1]), tostring(ARGV[1]), tostring(KEYS[3]), "
        "tostring(KEYS.k), tostring(ARGV[9]), tostring(getmetatable(ARGV)), "
        "#KEYS, #ARGV}";

    assert_string_equal(call(f, 5, "EVAL", touch, "1", "a", "b"),
                        "*3\r\n$1\r\na\r\n$1\r\nx\r\n$1\r\nm\r\n");
    assert_string_equal(call(f, 5, "EVAL", touch, "1", "c", "d"),
                        "*3\r\n$1\r\nc\r\n$1\r\nx\r\n$1\r\nm\r\n");
    assert_string_equal(call(f, 5, "EVAL", look, "1", "e", "f"),
                        "*8\r\n$1\r\ne\r\n$1\r\nf\r\n$3\r\nnil\r\n"
                        "$3\r\nnil\r\n$3\r\nnil\r\n$3\r\nnil\r\n"
                        ":1\r\n:1\r\n");
    /* A changed value only: the arrays are as the call gives them. */
    assert_string_equal(call(f, 5, "EVAL", "KEYS[1] = 'z' ARGV[1] = nil "
                             "return 1", "1", "g", "h"), ":1\r\n");
    assert_string_equal(call(f, 5, "EVAL", look, "1", "i", "j"),
                        "*8\r\n$1\r\ni\r\n$1\r\nj\r\n$3\r\nnil\r\n"
                        "$3\r\nnil\r\n$3\r\nnil\r\n$3\r\nnil\r\n"
                        ":1\r\n:1\r\n");
    assert_string_equal(call(f, 3, "EVAL", look, "0"),
                        "*8\r\n$3\r\nnil\r\n$3\r\nnil\r\n$3\r\nnil\r\n"
                        "$3\r\nnil\r\n$3\r\nnil\r\n$3\r\nnil\r\n"
                        ":0\r\n:0\r\n");
}

/* EVAL gives redis, KEYS and ARGV locals where nothing shows it: the
 * errors that name them still say "global", as Redis 7.0.15's do, and an
 * assignment is still refused. */
static void test_globals_read_as_redis_reads_them(void **state)
{
    struct cfix *f = *state;

    assert_non_null(strstr(EVAL("return KEYS .. 'x'"),
                           "-ERR user_script:1: attempt to concatenate "
                           "global 'KEYS' (a table value) script:"));
    assert_non_null(strstr(EVAL("redis.call('PING') return redis()"),
                           "attempt to call global 'redis' (a table value)"));
    assert_non_null(strstr(EVAL("local n = #KEYS return KEYS + 1"),
                           "attempt to perform arithmetic on global 'KEYS'"));
    assert_non_null(strstr(EVAL("return KEYS[[x]]"),
                           "attempt to call global 'KEYS'"));
    assert_non_null(strstr(EVAL("local x = KEYS[1]\nKEYS = 1"),
                           "-ERR user_script:2: Attempt to modify a readonly "
                           "table script:"));
    EXPECT_EVAL("local KEYS = 1 return KEYS", ":1\r\n");
    EXPECT_EVAL("local function f() return redis.call('PING') end "
                "return f()", "+PONG\r\n");
    EXPECT_EVAL("return -- KEYS = 1\n#KEYS", ":0\r\n");
    EXPECT_EVAL("return --[==[ redis = 1 ]==] #ARGV", ":0\r\n");
    EXPECT_EVAL("return 'redis = 1' .. [[ KEYS = 2]]",
                "$18\r\nredis = 1 KEYS = 2\r\n");
    /* Lines count as in the text. */
    assert_non_null(strstr(EVAL("redis.call('PING')\n\nerror('x')"),
                           "user_script:3: x"));
    assert_non_null(strstr(EVAL("#!lua\nredis.call('PING')\nerror('x')"),
                           "user_script:3: x"));
    /* A script that does not compile gets Lua's words for its own text. */
    assert_non_null(strstr(EVAL("redis.call('PING') +"),
                           "Error compiling script (new function): "
                           "user_script:1: unexpected symbol near '+'"));
}

/* libgoblin-script's own (lib/script/prologue.c). */
size_t goblin__script_prologue(const char *body, size_t len, char *out,
                               size_t cap);

static const char *prologue(const char *body)
{
    static char out[64];
    size_t n = goblin__script_prologue(body, strlen(body), out,
                                       sizeof(out) - 1);

    out[n] = '\0';
    return out;
}

/* Which globals get their local: those only ever indexed (or measured
 * with #), never assigned, shadowed, called or computed with. */
static void test_prologue_only_where_unseen(void **state)
{
    (void)state;
    assert_string_equal(prologue("redis.call('GET', KEYS[1]) local n = "
                                 "redis.call('INCR', KEYS[1]) return n"),
                        "local redis, KEYS = redis, KEYS; ");
    assert_string_equal(prologue("return redis.call('GET', ARGV[1], "
                                 "#KEYS)"),
                        "local redis, KEYS, ARGV = redis, KEYS, ARGV; ");
    assert_string_equal(prologue("return redis:x() .. KEYS [ 1 ] .. "
                                 "ARGV\n.n"),
                        "local redis, KEYS, ARGV = redis, KEYS, ARGV; ");
    assert_string_equal(prologue("return 1"), "");
    assert_string_equal(prologue("return t.redis, t:KEYS(), 'redis'"), "");
    assert_string_equal(prologue("-- redis = 1\n--[[ KEYS = 2 ]] "
                                 "return \"ARGV = 3\", [==[ redis ]==]"),
                        "");
    /* Each of these leaves the name its global. */
    assert_string_equal(prologue("KEYS = 1 return redis.call('PING')"),
                        "local redis = redis; ");
    assert_string_equal(prologue("local KEYS return KEYS[1]"), "");
    assert_string_equal(prologue("return {KEYS, ARGV[1]}"),
                        "local ARGV = ARGV; ");
    assert_string_equal(prologue("return redis() or KEYS .. ARGV[1]"),
                        "local ARGV = ARGV; ");
    assert_string_equal(prologue("return KEYS[[x]], (ARGV)[1]"), "");
    assert_string_equal(prologue("for _, KEYS in pairs(redis) do end"), "");
    assert_string_equal(prologue("function f(redis) end return KEYS.n"),
                        "local KEYS = KEYS; ");
    assert_string_equal(prologue("a, redis = 1, 2"), "");
    assert_string_equal(prologue("return KEYS + 1"), "");
    /* Source the scanner cannot follow gets none. */
    assert_string_equal(prologue("return KEYS[1] .. 'open"), "");
    assert_string_equal(prologue("return KEYS[1] --[[ open"), "");
    assert_string_equal(prologue("return KEYS[1], [==[ open ]=]"), "");
}

static void test_script_cache(void **state)
{
    struct cfix *f = *state;

    assert_string_equal(call(f, 3, "SCRIPT", "LOAD", "return 1"),
                        "$40\r\ne0e1f9fabfc9d4800c877a703b823ac0578ff8db\r\n");
    assert_string_equal(call(f, 3, "EVALSHA",
                             "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "0"),
                        ":1\r\n");
    assert_string_equal(call(f, 4, "SCRIPT", "EXISTS",
                             "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "x"),
                        "*2\r\n:1\r\n:0\r\n");
    assert_string_equal(call(f, 3, "SCRIPT", "FLUSH", "x"),
                        "-ERR SCRIPT FLUSH only support SYNC|ASYNC "
                        "option\r\n");
    assert_string_equal(call(f, 3, "SCRIPT", "FLUSH", "ASYNC"), "+OK\r\n");
    assert_string_equal(call(f, 3, "EVALSHA",
                             "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"),
                        "-NOSCRIPT No matching script. Please use EVAL.\r\n");
    assert_string_equal(call(f, 2, "SCRIPT", "KILL"),
                        "-NOTBUSY No scripts in execution right now.\r\n");
    assert_string_equal(call(f, 3, "EVAL", "return 1", "-1"),
                        "-ERR Number of keys can't be negative\r\n");
    assert_string_equal(call(f, 4, "EVAL", "return 1", "2", "a"),
                        "-ERR Number of keys can't be greater than number "
                        "of args\r\n");
    assert_string_equal(call(f, 6, "EVAL", "return {KEYS[1], ARGV[2], #ARGV}",
                             "1", "k", "a", "b"),
                        "*3\r\n$1\r\nk\r\n$1\r\nb\r\n:2\r\n");
}

static void test_shebang_flags(void **state)
{
    struct cfix *f = *state;

    EXPECT_EVAL("#!lua\nreturn 1", ":1\r\n");
    EXPECT_EVAL("#!foo\nreturn 1",
                "-ERR Unexpected engine in script shebang: #!foo\r\n");
    EXPECT_EVAL("#!lua flags=bad\nreturn 1",
                "-ERR Unexpected flag in script shebang: bad\r\n");
    EXPECT_EVAL("#!lua name=x\nreturn 1",
                "-ERR Unknown lua shebang option: name=x\r\n");
    assert_string_equal(call(f, 3, "EVAL_RO", "#!lua\nreturn 1", "0"),
                        "-ERR Can not execute a script with write flag "
                        "using *_ro command.\r\n");
    assert_string_equal(call(f, 3, "EVAL_RO",
                             "#!lua flags=no-writes\nreturn 2", "0"),
                        ":2\r\n");
    assert_non_null(strstr(call(f, 3, "EVAL_RO",
                                "return redis.call('set','a','b')", "0"),
                           "Write commands are not allowed from read-only "
                           "scripts."));
}

static void test_acl_applies_inside_scripts(void **state)
{
    struct cfix *f = *state;

    call(f, 6, "ACL", "SETUSER", "lim", "on", "nopass", "+eval");
    call(f, 4, "ACL", "SETUSER", "lim", "+get");
    call(f, 4, "ACL", "SETUSER", "lim", "~k*");
    assert_string_equal(call(f, 3, "AUTH", "lim", "x"), "+OK\r\n");
    assert_string_equal(EVAL("return redis.call('get','k1')"), "$-1\r\n");
    assert_non_null(strstr(EVAL("return redis.call('set','k1','v')"),
                           "-ERR The user executing the script can't run "
                           "this command or subcommand script:"));
    assert_non_null(strstr(EVAL("return redis.call('get','other')"),
                           "-ERR The user executing the script can't "
                           "access at least one of the keys"));
    EXPECT_EVAL("return {redis.acl_check_cmd('get','k1') and 1 or 0, "
                "redis.acl_check_cmd('set','k1','v') and 1 or 0}",
                "*2\r\n:1\r\n:0\r\n");
}

static void test_cmsgpack_and_struct(void **state)
{
    struct cfix *f = *state;

    EXPECT_EVAL("return cmsgpack.pack({1,2,3},'abc',-5,300)",
                "$12\r\n\x93\x01\x02\x03\xa3" "abc\xfb\xcd\x01\x2c\r\n");
    EXPECT_EVAL("local t = {cmsgpack.unpack(cmsgpack.pack({1,{a=2}}, "
                "-70000, 1.5, 'x'))} return {t[1][2].a, t[2], t[3]*2, t[4]}",
                "*4\r\n:2\r\n:-70000\r\n:3\r\n$1\r\nx\r\n");
    EXPECT_EVAL("return {cmsgpack.unpack_one(cmsgpack.pack(1, 2))}",
                "*2\r\n:1\r\n:1\r\n");
    assert_non_null(strstr(EVAL("return cmsgpack.unpack('\\220')"),
                           "Missing bytes in input."));
    assert_non_null(strstr(EVAL("return cmsgpack.unpack('\\193')"),
                           "Bad data format in input."));
    EXPECT_EVAL("return {struct.unpack('>i2<I4', struct.pack('>i2<I4', -7, "
                "9))}", "*3\r\n:-7\r\n:9\r\n:7\r\n");
    EXPECT_EVAL("return struct.size('>i2<I4!4bhd')", ":20\r\n");
    EXPECT_EVAL("return {struct.unpack('bc0', struct.pack('bc0', 3, "
                "'xyz'))}", "*2\r\n$3\r\nxyz\r\n:5\r\n");
    assert_non_null(strstr(EVAL("return struct.pack('i40', 1)"),
                           "integral size 40 is larger than limit of 32"));
    EXPECT_EVAL("return bit.tohex(bit.bxor(0xff, 0x0f))",
                "$8\r\n000000f0\r\n");
    EXPECT_EVAL("return cjson.decode('[1,2,{\"a\":3}]')[3].a", ":3\r\n");
}

static void test_math_random_is_redis_sequence(void **state)
{
    struct cfix *f = *state;

    EXPECT_EVAL("return math.random(1000)", ":397\r\n");
    EXPECT_EVAL("return math.random(1000)", ":841\r\n");
    EXPECT_EVAL("math.randomseed(0) return math.random(1000)", ":171\r\n");
}

/* What the write stream's LOCAL class received, all units together. */
static char stream_seen[4096];
static size_t stream_len;

static void stream_cb(void *ctx, const void *bytes, size_t len,
                      uint64_t offset)
{
    (void)ctx;
    (void)offset;
    assert_true(stream_len + len < sizeof(stream_seen));
    memcpy(stream_seen + stream_len, bytes, len);
    stream_len += len;
    stream_seen[stream_len] = '\0';
}

static void test_script_effects_go_out_as_their_commands(void **state)
{
    struct cfix *f = *state;
    uint32_t id;

    stream_len = 0;
    assert_int_equal(goblin_stream_subscribe(f->eng, GOBLIN_STREAM_LOCAL,
                                             stream_cb, NULL, &id), 0);
    EXPECT_EVAL("redis.call('set','a','1') redis.call('incr','a') "
                "return redis.call('get','a')", "$1\r\n2\r\n");
    assert_string_equal(stream_seen,
                        "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n"
                        "*1\r\n$5\r\nMULTI\r\n"
                        "*3\r\n$3\r\nset\r\n$1\r\na\r\n$1\r\n1\r\n"
                        "*2\r\n$4\r\nincr\r\n$1\r\na\r\n"
                        "*1\r\n$4\r\nEXEC\r\n");
    /* A script that only reads, or fails before writing, sends nothing;
     * one write goes out alone; FCALL's the same. */
    stream_len = 0;
    EXPECT_EVAL("return redis.call('get','a')", "$1\r\n2\r\n");
    EXPECT_EVAL("return redis.call('nosuch')",
                "-ERR Unknown Redis command called from script script: "
                "206396248e12c6e742fd7296250433c8d7343b74, on "
                "@user_script:1.\r\n");
    assert_int_equal(stream_len, 0);
    assert_string_equal(call(f, 3, "FUNCTION", "LOAD",
                             "#!lua name=l\nredis.register_function('f', "
                             "function(k) return redis.call('del', k[1]) "
                             "end)"),
                        "$1\r\nl\r\n");
    stream_len = 0;
    assert_string_equal(call(f, 4, "FCALL", "f", "1", "a"), ":1\r\n");
    assert_string_equal(stream_seen,
                        "*2\r\n$3\r\ndel\r\n$1\r\na\r\n");
    goblin_stream_unsubscribe(f->eng, id);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LUA_TEST(test_lua_to_resp2),
        LUA_TEST(test_lua_to_resp3),
        LUA_TEST(test_resp_to_lua),
        LUA_TEST(test_errors_name_the_script_line),
        LUA_TEST(test_error_objects_of_every_type),
        LUA_TEST(test_scripts_that_must_fail_without_harm),
        LUA_TEST(test_sandbox_refusals),
        LUA_TEST(test_keys_argv_fresh_each_run),
        LUA_TEST(test_globals_read_as_redis_reads_them),
        cmocka_unit_test(test_prologue_only_where_unseen),
        LUA_TEST(test_script_cache),
        LUA_TEST(test_shebang_flags),
        LUA_TEST(test_acl_applies_inside_scripts),
        LUA_TEST(test_cmsgpack_and_struct),
        LUA_TEST(test_math_random_is_redis_sequence),
        LUA_TEST(test_script_effects_go_out_as_their_commands),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
