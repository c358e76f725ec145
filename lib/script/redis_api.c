/* redis_api.c - the redis table scripts see (redis.call, redis.pcall,
 * redis.error_reply, redis.status_reply, redis.sha1hex, redis.log,
 * redis.setresp, redis.set_repl, redis.replicate_commands, the version
 * and the level and replication constants), the global pcall that turns
 * Redis's error tables back into their text, and the error handler every
 * script runs under. Texts are Redis 7.0's (script_lua.c).
 *
 * redis.call runs its command through goblin_script_call, which replies
 * into a sink that keeps the reply (call_reply.c); the reply becomes a
 * Lua value only after the command has returned, so no Lua error can
 * leave a command half done.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "goblin/numtext.h"
#include "goblin/resp.h"
#include "goblin/sha1.h"
#include "script.h"

#define REDIS_VERSION "7.0.15"
#define REDIS_VERSION_NUM 0x07000f

/* Replication targets of redis.set_repl, as Redis numbers them. */
enum { REPL_NONE = 0, REPL_AOF = 1, REPL_REPLICA = 2, REPL_ALL = 3 };

void goblin__lua_push_error(lua_State *L, const char *text, size_t len)
{
    const char *sp;

    /* "-CODE msg" keeps its code; plain "msg" gets ERR. A trailing CR or
     * LF is dropped, as Redis trims them. */
    while (len > 0 && (text[len - 1] == '\r' || text[len - 1] == '\n'))
        len--;
    lua_newtable(L);
    if (len > 0 && text[0] == '-') {
        sp = memchr(text, ' ', len);
        if (sp == NULL) {
            lua_pushliteral(L, "ERR ");
            lua_pushlstring(L, text + 1, len - 1);
        } else {
            lua_pushlstring(L, text + 1, (size_t)(sp - text) - 1);
            lua_pushlstring(L, sp, len - (size_t)(sp - text));
        }
        lua_concat(L, 2);
    } else {
        lua_pushliteral(L, "ERR ");
        lua_pushlstring(L, text, len);
        lua_concat(L, 2);
    }
    lua_setfield(L, -2, "err");
}

static void push_error_cstr(lua_State *L, const char *text)
{
    goblin__lua_push_error(L, text, strlen(text));
}

static int raise_error_text(lua_State *L, const char *text)
{
    push_error_cstr(L, text);
    return lua_error(L);
}

/* Gathers the call's arguments into g->argv: strings as they are,
 * numbers as "%.17g" (Lua's own conversion would lose precision). Returns
 * false when one is neither. */
static bool gather(lua_State *L, struct goblin__lua *g, int argc)
{
    size_t need_txt = (size_t)argc * 32, off = 0;
    int j;

    if ((size_t)argc > g->cap_argv) {
        struct goblin_slice *v = realloc(g->argv, (size_t)argc * sizeof(*v));

        if (v == NULL)
            luaL_error(L, "not enough memory");
        g->argv = v;
        g->cap_argv = (size_t)argc;
    }
    if (need_txt > g->cap_numtext) {
        char *t = realloc(g->numtext, need_txt);

        if (t == NULL)
            luaL_error(L, "not enough memory");
        g->numtext = t;
        g->cap_numtext = need_txt;
    }
    for (j = 0; j < argc; j++) {
        int type = lua_type(L, j + 1);

        if (type == LUA_TSTRING) {
            size_t len;
            const char *s = lua_tolstring(L, j + 1, &len);

            g->argv[j] = (struct goblin_slice){s, len};
        } else if (type == LUA_TNUMBER) {
            double d = (double)lua_tonumber(L, j + 1);
            int n;

            /* A whole number below 1e17 is what "%.17g" prints, digit for
             * digit (not -0, which prints its sign). */
            if (d > -1e17 && d < 1e17 && d == (double)(int64_t)d &&
                !(d == 0 && signbit(d)))
                n = (int)goblin_int64_format(g->numtext + off, (int64_t)d);
            else
                n = snprintf(g->numtext + off, 32, "%.17g", d);
            g->argv[j] = (struct goblin_slice){g->numtext + off, (size_t)n};
            off += 32;
        } else {
            return false;
        }
    }
    return true;
}

static int generic_call(lua_State *L, bool raise)
{
    struct goblin__lua *g = goblin__vm_owner(L);
    struct goblin__call_reply r;
    struct goblin_sink *sink;
    int argc = lua_gettop(L), is_error;

    if (g->run == NULL)
        return raise_error_text(L, "redis.call/pcall can only be called "
                                   "inside a script invocation");
    if (argc == 0) {
        push_error_cstr(L, "Please specify at least one argument for this "
                           "redis lib call");
        return raise ? lua_error(L) : 1;
    }
    if (!gather(L, g, argc)) {
        lua_settop(L, 0);
        push_error_cstr(L, "Lua redis lib command arguments must be "
                           "strings or integers");
        return raise ? lua_error(L) : 1;
    }
    sink = goblin__call_reply_init(&r, &g->reply, g->run->resp);
    goblin_script_call(g->run, argc, g->argv, sink);
    lua_settop(L, 0);
    if ((is_error = goblin__call_reply_push(L, &r)) < 0)
        return luaL_error(L, "not enough memory");
    if (g->reply.cap > 65536) /* a huge reply's buffer is not kept */
        goblin_buf_free(&g->reply);
    if (raise && is_error)
        return lua_error(L);
    return 1;
}

static int redis_call(lua_State *L)
{
    return generic_call(L, true);
}

static int redis_pcall(lua_State *L)
{
    return generic_call(L, false);
}

/* The global pcall: Redis 7's error objects are tables; a caught one
 * gives its text, as older versions gave. */
static int global_pcall(lua_State *L)
{
    int argc = lua_gettop(L);

    luaL_checkany(L, 1);
    lua_pushboolean(L, 1);
    lua_insert(L, 1);
    if (lua_pcall(L, argc - 1, LUA_MULTRET, 0) != 0) {
        lua_remove(L, 1);
        if (lua_istable(L, -1)) {
            lua_getfield(L, -1, "err");
            if (lua_isstring(L, -1))
                lua_replace(L, -2);
            else
                lua_pop(L, 1);
        }
        lua_pushboolean(L, 0);
        lua_insert(L, 1);
    }
    return lua_gettop(L);
}

static int redis_error_reply(lua_State *L)
{
    size_t len;
    const char *s;

    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
        push_error_cstr(L, "wrong number or type of arguments");
        return 1;
    }
    s = lua_tolstring(L, 1, &len);
    if (len > 0 && s[0] == '-') {
        goblin__lua_push_error(L, s, len);
    } else {
        lua_pushliteral(L, "-");
        lua_pushvalue(L, 1);
        lua_concat(L, 2);
        s = lua_tolstring(L, -1, &len);
        goblin__lua_push_error(L, s, len);
    }
    return 1;
}

static int redis_status_reply(lua_State *L)
{
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
        push_error_cstr(L, "wrong number or type of arguments");
        return 1;
    }
    lua_newtable(L);
    lua_pushvalue(L, 1);
    lua_setfield(L, -2, "ok");
    return 1;
}

static int redis_sha1hex(lua_State *L)
{
    char hex[41];
    size_t len;
    const char *s;

    if (lua_gettop(L) != 1)
        return raise_error_text(L, "wrong number of arguments");
    s = lua_tolstring(L, 1, &len);
    goblin_sha1_hex(hex, s != NULL ? s : "", s != NULL ? len : 0);
    lua_pushstring(L, hex);
    return 1;
}

static int redis_log(lua_State *L)
{
    struct goblin__lua *g = goblin__vm_owner(L);
    int argc = lua_gettop(L), j;
    lua_Number level;
    luaL_Buffer b;

    if (argc < 2)
        return raise_error_text(L, "redis.log() requires two arguments or "
                                   "more.");
    if (!lua_isnumber(L, 1))
        return raise_error_text(L, "First argument must be a number (log "
                                   "level).");
    level = lua_tonumber(L, 1);
    if (level < GOBLIN_LOG_DEBUG || level > GOBLIN_LOG_WARNING)
        return raise_error_text(L, "Invalid debug level.");
    luaL_buffinit(L, &b);
    for (j = 2; j <= argc; j++) {
        if (!lua_isstring(L, j))
            continue;
        if (j != 2)
            luaL_addchar(&b, ' ');
        lua_pushvalue(L, j);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    if (g->run != NULL)
        goblin_script_log(g->run->caller, (enum goblin_log_level)level,
                          lua_tostring(L, -1));
    return 0;
}

static int redis_setresp(lua_State *L)
{
    struct goblin__lua *g = goblin__vm_owner(L);
    int resp;

    if (g->run == NULL)
        return raise_error_text(L, "redis.setresp can only be called "
                                   "inside a script invocation");
    if (lua_gettop(L) != 1)
        return raise_error_text(L, "redis.setresp() requires one "
                                   "argument.");
    resp = (int)lua_tonumber(L, 1);
    if (resp != 2 && resp != 3)
        return raise_error_text(L, "RESP version must be 2 or 3.");
    g->run->resp = resp;
    return 0;
}

static int redis_set_repl(lua_State *L)
{
    struct goblin__lua *g = goblin__vm_owner(L);
    int flags;

    if (g->run == NULL)
        return raise_error_text(L, "redis.set_repl can only be called "
                                   "inside a script invocation");
    if (lua_gettop(L) != 1)
        return raise_error_text(L, "redis.set_repl() requires two "
                                   "arguments.");
    flags = (int)lua_tonumber(L, 1);
    if ((flags & ~REPL_ALL) != 0)
        return raise_error_text(L, "Invalid replication flags. Use "
                                   "REPL_AOF, REPL_REPLICA, REPL_ALL or "
                                   "REPL_NONE.");
    return 0;
}

/* redis.acl_check_cmd(cmd, ...): whether the caller's user may run it. */
static int redis_acl_check_cmd(lua_State *L)
{
    struct goblin__lua *g = goblin__vm_owner(L);
    int argc = lua_gettop(L), rc;

    if (g->run == NULL)
        return raise_error_text(L, "redis.acl_check_cmd can only be called "
                                   "inside a script invocation");
    if (argc == 0)
        return raise_error_text(L, "Please specify at least one argument "
                                   "for this redis lib call");
    if (!gather(L, g, argc))
        return raise_error_text(L, "Lua redis lib command arguments must "
                                   "be strings or integers");
    rc = goblin_script_acl_check(g->run, argc, g->argv);
    if (rc < 0)
        return raise_error_text(L, "Invalid command passed to "
                                   "redis.acl_check_cmd()");
    lua_settop(L, 0);
    lua_pushboolean(L, rc);
    return 1;
}

/* Redis 7 always replicates a script's effects: this is a no-op that
 * answers true, as Redis's does. */
static int redis_replicate_commands(lua_State *L)
{
    lua_pushboolean(L, 1);
    return 1;
}

/* The debugger's calls do nothing outside SCRIPT DEBUG, as in Redis. */
static int redis_breakpoint(lua_State *L)
{
    lua_pushboolean(L, 0);
    return 1;
}

static int redis_debug(lua_State *L)
{
    (void)L;
    return 0;
}

static void set_number(lua_State *L, const char *name, lua_Number v)
{
    lua_pushnumber(L, v);
    lua_setfield(L, -2, name);
}

static void set_function(lua_State *L, const char *name, lua_CFunction f)
{
    lua_pushcfunction(L, f);
    lua_setfield(L, -2, name);
}

void goblin__redis_load_api_open(lua_State *L)
{
    set_function(L, "log", redis_log);
    set_number(L, "LOG_DEBUG", GOBLIN_LOG_DEBUG);
    set_number(L, "LOG_VERBOSE", GOBLIN_LOG_VERBOSE);
    set_number(L, "LOG_NOTICE", GOBLIN_LOG_NOTICE);
    set_number(L, "LOG_WARNING", GOBLIN_LOG_WARNING);
    lua_pushstring(L, REDIS_VERSION);
    lua_setfield(L, -2, "REDIS_VERSION");
    set_number(L, "REDIS_VERSION_NUM", REDIS_VERSION_NUM);
}

void goblin__redis_api_open(lua_State *L)
{
    set_function(L, "call", redis_call);
    set_function(L, "pcall", redis_pcall);
    set_function(L, "log", redis_log);
    set_number(L, "LOG_DEBUG", GOBLIN_LOG_DEBUG);
    set_number(L, "LOG_VERBOSE", GOBLIN_LOG_VERBOSE);
    set_number(L, "LOG_NOTICE", GOBLIN_LOG_NOTICE);
    set_number(L, "LOG_WARNING", GOBLIN_LOG_WARNING);
    lua_pushstring(L, REDIS_VERSION);
    lua_setfield(L, -2, "REDIS_VERSION");
    set_number(L, "REDIS_VERSION_NUM", REDIS_VERSION_NUM);
    set_function(L, "setresp", redis_setresp);
    set_function(L, "sha1hex", redis_sha1hex);
    set_function(L, "error_reply", redis_error_reply);
    set_function(L, "status_reply", redis_status_reply);
    set_function(L, "set_repl", redis_set_repl);
    set_function(L, "replicate_commands", redis_replicate_commands);
    set_function(L, "acl_check_cmd", redis_acl_check_cmd);
    set_function(L, "breakpoint", redis_breakpoint);
    set_function(L, "debug", redis_debug);
    set_number(L, "REPL_NONE", REPL_NONE);
    set_number(L, "REPL_AOF", REPL_AOF);
    set_number(L, "REPL_SLAVE", REPL_REPLICA);
    set_number(L, "REPL_REPLICA", REPL_REPLICA);
    set_number(L, "REPL_ALL", REPL_ALL);
    /* The global pcall, set beside the table (see global_pcall). */
    lua_pushcfunction(L, global_pcall);
    lua_setfield(L, LUA_GLOBALSINDEX, "pcall");
    /* Redis keeps its error handler in a global of this name. */
    lua_pushcfunction(L, goblin__lua_error_handler);
    lua_setfield(L, LUA_GLOBALSINDEX, "__redis__err__handler");
}

/* The value to show for an error object that is not a table, as Lua's
 * tostring shows it (no metamethods: they could raise again). */
static void push_error_text(lua_State *L, int idx)
{
    switch (lua_type(L, idx)) {
    case LUA_TSTRING:
    case LUA_TNUMBER:
        lua_pushvalue(L, idx);
        lua_tostring(L, -1);
        break;
    case LUA_TNIL:
        lua_pushliteral(L, "nil");
        break;
    case LUA_TBOOLEAN:
        lua_pushstring(L, lua_toboolean(L, idx) ? "true" : "false");
        break;
    default:
        lua_pushfstring(L, "%s: %p", lua_typename(L, lua_type(L, idx)),
                        lua_topointer(L, idx));
        break;
    }
}

int goblin__lua_error_handler(lua_State *L)
{
    lua_Debug ar;
    bool have = false;

    /* Level 1 raised the error; when it is a C function (error,
     * redis.call) the line is its caller's. */
    if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar)) {
        have = true;
        if (strcmp(ar.what, "C") == 0)
            have = lua_getstack(L, 2, &ar) && lua_getinfo(L, "Sl", &ar);
    }
    /* A new table, so an error object the script still holds (or one of
     * the read-only tables) is never written to. */
    lua_newtable(L);
    if (lua_istable(L, 1)) {
        lua_pushliteral(L, "err");
        lua_rawget(L, 1);
        lua_setfield(L, -2, "err");
        lua_pushliteral(L, "ignore_error_stats_update");
        lua_rawget(L, 1);
        lua_setfield(L, -2, "ignore_error_stats_update");
    } else {
        lua_pushliteral(L, "ERR ");
        push_error_text(L, 1);
        lua_concat(L, 2);
        lua_setfield(L, -2, "err");
    }
    if (have) {
        lua_pushstring(L, ar.source);
        lua_setfield(L, -2, "source");
        lua_pushinteger(L, ar.currentline);
        lua_setfield(L, -2, "line");
    }
    return 1;
}
