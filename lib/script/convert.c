/* convert.c - Redis's conversions between replies and Lua values
 * (script_lua.c, and the table in Redis's "Conversion between Lua and
 * Redis data types"):
 *
 *   reply -> Lua (what redis.call returns)
 *     integer -> number, bulk -> string, null bulk / null array -> false,
 *     array -> table, status -> {ok=s}, error -> {err=s};
 *     RESP3 (redis.setresp(3)): null -> nil, boolean -> boolean,
 *     double -> {double=n}, big number -> {big_number=s},
 *     verbatim -> {verbatim_string={format=f, string=s}},
 *     map -> {map={k=v}}, set -> {set={m=true}}.
 *   Lua -> reply (what a script returns)
 *     number -> integer (truncated), string -> bulk, table -> array up
 *     to the first nil, {ok=s} -> status, {err=s} -> error, {double=n},
 *     {big_number=s}, {verbatim_string=...}, {map=t}, {set=t};
 *     true -> 1 and false -> null while the script speaks RESP2, RESP3
 *     booleans once it called redis.setresp(3); anything else -> null.
 *
 * Replies are read from RESP bytes libgoblin wrote itself, so they are
 * well formed. Lua values are read with raw accesses only: a metamethod
 * could run script code where no error may be raised.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "goblin/numtext.h"
#include "script.h"

/* ---- reply -> Lua ---- */

struct cursor {
    const char *p, *end;
};

/* The line after the type byte, without its CRLF. */
static const char *line(struct cursor *c, size_t *len)
{
    const char *s = c->p + 1, *e = memchr(s, '\r', (size_t)(c->end - s));

    if (e == NULL)
        e = c->end;
    *len = (size_t)(e - s);
    c->p = e + 2 <= c->end ? e + 2 : c->end;
    return s;
}

static long long line_int(struct cursor *c)
{
    size_t len, i = 0;
    const char *s = line(c, &len);
    unsigned long long v = 0;
    bool neg = len > 0 && s[0] == '-';

    /* libgoblin wrote it: digits within int64 (strtoll's result). */
    for (i = neg; i < len && s[i] >= '0' && s[i] <= '9'; i++)
        v = v * 10 + (unsigned long long)(s[i] - '0');
    return neg ? (long long)(0 - v) : (long long)v;
}

/* A bulk-like payload of n bytes then CRLF. */
static const char *payload(struct cursor *c, long long n)
{
    const char *s = c->p;

    if (n < 0 || (size_t)n > (size_t)(c->end - c->p))
        n = c->end - c->p;
    c->p += n;
    c->p = c->p + 2 <= c->end ? c->p + 2 : c->end;
    return s;
}

static void push_value(lua_State *L, struct cursor *c);

static void push_items(lua_State *L, struct cursor *c, long long n)
{
    long long j;

    lua_newtable(L);
    for (j = 0; j < n; j++) {
        push_value(L, c);
        lua_rawseti(L, -2, (int)(j + 1));
    }
}

static void push_wrapped(lua_State *L, const char *field)
{
    lua_newtable(L);
    lua_insert(L, -2);
    lua_setfield(L, -2, field);
}

static void push_value(lua_State *L, struct cursor *c)
{
    size_t len;
    const char *s;
    long long n, j;
    char buf[64];

    if (!lua_checkstack(L, 8))
        luaL_error(L, "reached lua stack limit");
    if (c->p >= c->end) {
        lua_pushboolean(L, 0);
        return;
    }
    switch (*c->p) {
    case '+':
        s = line(c, &len);
        lua_pushlstring(L, s, len);
        push_wrapped(L, "ok");
        return;
    case '-':
        s = line(c, &len);
        goblin__lua_push_error(L, s - 1, len + 1);
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, "ignore_error_stats_update");
        return;
    case ':':
        lua_pushnumber(L, (lua_Number)line_int(c));
        return;
    case '$':
        n = line_int(c);
        if (n < 0) {
            lua_pushboolean(L, 0);
            return;
        }
        s = payload(c, n);
        lua_pushlstring(L, s, (size_t)n);
        return;
    case '*':
    case '>':
        n = line_int(c);
        if (n < 0)
            lua_pushboolean(L, 0);
        else
            push_items(L, c, n);
        return;
    case '_':
        line(c, &len);
        lua_pushnil(L);
        return;
    case '#':
        s = line(c, &len);
        lua_pushboolean(L, len > 0 && s[0] == 't');
        return;
    case ',':
        s = line(c, &len);
        if (len >= sizeof(buf))
            len = sizeof(buf) - 1;
        memcpy(buf, s, len);
        buf[len] = '\0';
        lua_pushnumber(L, strtod(buf, NULL));
        push_wrapped(L, "double");
        return;
    case '(':
        s = line(c, &len);
        lua_pushlstring(L, s, len);
        push_wrapped(L, "big_number");
        return;
    case '=':
        n = line_int(c);
        s = payload(c, n);
        lua_newtable(L);
        lua_pushlstring(L, s + 4, n >= 4 ? (size_t)n - 4 : 0);
        lua_setfield(L, -2, "string");
        lua_pushlstring(L, s, n >= 3 ? 3 : (size_t)n);
        lua_setfield(L, -2, "format");
        push_wrapped(L, "verbatim_string");
        return;
    case '%':
        n = line_int(c);
        lua_newtable(L);
        for (j = 0; j < n; j++) {
            push_value(L, c);
            push_value(L, c);
            if (lua_isnil(L, -2))
                lua_pop(L, 2);
            else
                lua_rawset(L, -3);
        }
        push_wrapped(L, "map");
        return;
    case '~':
        n = line_int(c);
        lua_newtable(L);
        for (j = 0; j < n; j++) {
            push_value(L, c);
            if (lua_isnil(L, -1)) {
                lua_pop(L, 1);
                continue;
            }
            lua_pushboolean(L, 1);
            lua_rawset(L, -3);
        }
        push_wrapped(L, "set");
        return;
    case '|': /* attributes are not shown to scripts */
        n = line_int(c);
        for (j = 0; j < 2 * n; j++) {
            push_value(L, c);
            lua_pop(L, 1);
        }
        push_value(L, c);
        return;
    default:
        c->p = c->end;
        lua_pushboolean(L, 0);
        return;
    }
}

void goblin__lua_push_resp(lua_State *L, const char *p, size_t len)
{
    struct cursor c = {p, p + len};

    push_value(L, &c);
}

/* ---- Lua -> reply ---- */

struct out {
    lua_State *L;
    goblin_session *sess; /* whose command replies, or NULL */
    struct goblin_sink *sink;
    int resp;        /* the script's RESP version */
    size_t budget;   /* values left to write before refusing (a table
                      * that holds itself would never end) */
};

static void put(struct out *o, int depth);

/* t[field] (raw) pushed; returns its type. */
static int field(lua_State *L, const char *name)
{
    lua_pushstring(L, name);
    lua_rawget(L, -2);
    return lua_type(L, -1);
}

/* A Lua number as Redis's (long long) cast gives it on x86-64: NaN and
 * values out of range become INT64_MIN. */
static int64_t truncate_number(lua_Number v)
{
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
        return INT64_MIN;
    return (int64_t)v;
}

/* The text of a status, error or big number: CR and LF become spaces,
 * and it ends at a NUL (Redis takes these as C strings). */
static void put_text(struct goblin_sink *sink, const char *s, size_t len,
                     int kind)
{
    char small[256];
    char *buf;
    size_t i;

    len = strnlen(s, len);
    buf = len <= sizeof(small) ? small : malloc(len + 1);

    if (buf == NULL) {
        sink->ops->error(sink, "ERR out of memory", 17);
        return;
    }
    for (i = 0; i < len; i++)
        buf[i] = s[i] == '\r' || s[i] == '\n' ? ' ' : s[i];
    if (kind == 0)
        sink->ops->status(sink, buf, len);
    else if (kind == 1)
        sink->ops->error(sink, buf, len);
    else
        goblin_sink_bignum(sink, buf, len);
    if (buf != small)
        free(buf);
}

static size_t count_pairs(lua_State *L)
{
    size_t n = 0;

    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        n++;
    }
    return n;
}

static bool put_special(struct out *o, int depth)
{
    lua_State *L = o->L;
    struct goblin_sink *sink = o->sink;
    size_t len, n;
    const char *s;

    if (field(L, "err") == LUA_TSTRING) {
        s = lua_tolstring(L, -1, &len);
        lua_pushstring(L, "ignore_error_stats_update");
        lua_rawget(L, -3);
        /* An error a command the script called replied: counted then. */
        if (lua_toboolean(L, -1) && o->sess != NULL)
            goblin_script_error_counted(o->sess);
        lua_pop(L, 1);
        put_text(sink, s, len, 1);
        lua_pop(L, 1);
        return true;
    }
    lua_pop(L, 1);
    if (field(L, "ok") == LUA_TSTRING) {
        s = lua_tolstring(L, -1, &len);
        put_text(sink, s, len, 0);
        lua_pop(L, 1);
        return true;
    }
    lua_pop(L, 1);
    if (field(L, "double") == LUA_TNUMBER) {
        sink->ops->dbl(sink, (double)lua_tonumber(L, -1));
        lua_pop(L, 1);
        return true;
    }
    lua_pop(L, 1);
    if (field(L, "big_number") == LUA_TSTRING) {
        s = lua_tolstring(L, -1, &len);
        put_text(sink, s, len, 2);
        lua_pop(L, 1);
        return true;
    }
    lua_pop(L, 1);
    if (field(L, "verbatim_string") == LUA_TTABLE) {
        if (field(L, "format") == LUA_TSTRING &&
            lua_objlen(L, -1) >= 3) {
            const char *fmt = lua_tostring(L, -1);

            lua_pushstring(L, "string");
            lua_rawget(L, -3);
            if (lua_type(L, -1) == LUA_TSTRING) {
                s = lua_tolstring(L, -1, &len);
                sink->ops->verbatim(sink, fmt, s, len);
                lua_pop(L, 3);
                return true;
            }
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (field(L, "map") == LUA_TTABLE) {
        n = count_pairs(L);
        sink->ops->map(sink, n);
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            lua_pushvalue(L, -2);
            put(o, depth + 1); /* the key */
            put(o, depth + 1); /* the value */
        }
        lua_pop(L, 1);
        return true;
    }
    lua_pop(L, 1);
    if (field(L, "set") == LUA_TTABLE) {
        n = count_pairs(L);
        sink->ops->set(sink, n);
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            lua_pop(L, 1);
            lua_pushvalue(L, -1);
            put(o, depth + 1);
        }
        lua_pop(L, 1);
        return true;
    }
    lua_pop(L, 1);
    return false;
}

static void put_table(struct out *o, int depth)
{
    lua_State *L = o->L;
    size_t n = 0, j;

    if (put_special(o, depth))
        return;
    for (;;) {
        lua_rawgeti(L, -1, (int)(n + 1));
        if (lua_isnil(L, -1) || n >= INT32_MAX - 1) {
            lua_pop(L, 1);
            break;
        }
        lua_pop(L, 1);
        n++;
    }
    o->sink->ops->array(o->sink, n);
    for (j = 0; j < n; j++) {
        lua_rawgeti(L, -1, (int)(j + 1));
        put(o, depth + 1);
    }
}

/* Writes the value on top of the stack and pops it. */
static void put(struct out *o, int depth)
{
    lua_State *L = o->L;
    struct goblin_sink *sink = o->sink;
    size_t len;
    const char *s;

    if (o->budget == 0 || depth > GOBLIN__LUA_DEPTH_MAX ||
        !lua_checkstack(L, 6)) {
        sink->ops->error(sink, "ERR reached lua stack limit", 27);
        lua_pop(L, 1);
        return;
    }
    o->budget--;
    switch (lua_type(L, -1)) {
    case LUA_TSTRING:
        s = lua_tolstring(L, -1, &len);
        sink->ops->bulk(sink, s, len);
        break;
    case LUA_TBOOLEAN:
        if (o->resp == 2) {
            if (lua_toboolean(L, -1))
                sink->ops->integer(sink, 1);
            else
                sink->ops->null(sink);
        } else {
            sink->ops->boolean(sink, lua_toboolean(L, -1));
        }
        break;
    case LUA_TNUMBER:
        sink->ops->integer(sink, truncate_number(lua_tonumber(L, -1)));
        break;
    case LUA_TTABLE:
        put_table(o, depth);
        break;
    default:
        sink->ops->null(sink);
        break;
    }
    lua_pop(L, 1);
}

void goblin__lua_reply(lua_State *L, goblin_session *s, int script_resp,
                       struct goblin_sink *sink)
{
    struct out o = {L, s, sink, script_resp, (size_t)1 << 24};

    put(&o, 0);
}

void goblin__lua_reply_error(struct goblin_sink *sink, const char *text)
{
    sink->ops->error(sink, text, strlen(text));
}

void goblin__lua_push_strings(lua_State *L, const struct goblin_slice *v,
                              size_t n)
{
    lua_createtable(L, n < INT32_MAX ? (int)n : 0, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushlstring(L, v[i].ptr, v[i].len);
        lua_rawseti(L, -2, (int)(i + 1));
    }
}

int goblin__lua_numkeys(int argc, const struct goblin_slice *argv,
                        const char *parse_error, struct goblin_sink *sink,
                        int64_t *out)
{
    if (goblin_int64_parse(argv[2].ptr, argv[2].len, out) != 0) {
        goblin__lua_reply_error(sink, parse_error);
        return -1;
    }
    if (*out > argc - 3) {
        goblin__lua_reply_error(sink, "ERR Number of keys can't be greater "
                                      "than number of args");
        return -1;
    }
    if (*out < 0) {
        goblin__lua_reply_error(sink,
                                "ERR Number of keys can't be negative");
        return -1;
    }
    return 0;
}
