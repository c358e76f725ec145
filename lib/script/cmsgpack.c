/* cmsgpack.c - the cmsgpack library Redis scripts get: MessagePack
 * encoding of Lua values (cmsgpack.pack(v1, v2, ...) -> one string of
 * them all) and decoding (cmsgpack.unpack(s) -> every value in s;
 * unpack_one(s [, offset]) and unpack_limit(s, limit [, offset]) -> the
 * next offset, -1 at the end, then the values), as Redis's lua_cmsgpack
 * does:
 *
 *   nil -> nil; booleans; a number equal to an int64 -> the smallest
 *   integer form, else float 32 when exact, else float 64; strings ->
 *   str (fixstr, str8, str16, str32); a table whose keys are exactly
 *   1..n -> array, any other table -> map; tables nested deeper than 16
 *   and other types -> nil.
 *   Decoding also takes bin 8/16/32 as strings; truncated input raises
 *   "Missing bytes in input.", an unknown byte "Bad data format in
 *   input.".
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <lauxlib.h>

#include "script.h"

#define MAX_NESTING 16
/* Decoding's nesting bound: each level costs C stack and Lua slots. */
#define MAX_DECODE_DEPTH 1000

/* ---- encoding ----
 *
 * Into the engine's scratch buffer (no Lua buffer: values are read from
 * the stack while the output grows). */

static void add(struct goblin_buf *b, const void *p, size_t n)
{
    goblin_buf_append(b, p, n); /* a failure is checked once, at the end */
}

static void add_byte(struct goblin_buf *b, unsigned char c)
{
    add(b, &c, 1);
}

static void put_be(struct goblin_buf *b, unsigned char type, uint64_t v,
                   int bytes)
{
    unsigned char buf[9];
    int i;

    buf[0] = type;
    for (i = 0; i < bytes; i++)
        buf[1 + i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
    add(b, buf, (size_t)bytes + 1);
}

static void encode_int(struct goblin_buf *b, int64_t n)
{
    if (n >= 0) {
        if (n <= 127)
            add_byte(b, (unsigned char)n);
        else if (n <= 0xff)
            put_be(b, 0xcc, (uint64_t)n, 1);
        else if (n <= 0xffff)
            put_be(b, 0xcd, (uint64_t)n, 2);
        else if (n <= 0xffffffffLL)
            put_be(b, 0xce, (uint64_t)n, 4);
        else
            put_be(b, 0xcf, (uint64_t)n, 8);
    } else {
        if (n >= -32)
            add_byte(b, (unsigned char)(signed char)n);
        else if (n >= -128)
            put_be(b, 0xd0, (uint64_t)n, 1);
        else if (n >= -32768)
            put_be(b, 0xd1, (uint64_t)n, 2);
        else if (n >= -2147483648LL)
            put_be(b, 0xd2, (uint64_t)n, 4);
        else
            put_be(b, 0xd3, (uint64_t)n, 8);
    }
}

static void encode_number(struct goblin_buf *b, lua_Number n)
{
    if (n >= -9223372036854775808.0 && n < 9223372036854775808.0 &&
        (lua_Number)(int64_t)n == n) {
        encode_int(b, (int64_t)n);
    } else if (isnan(n) || isinf(n) || (lua_Number)(float)n == n) {
        float f = (float)n;
        uint32_t u;

        memcpy(&u, &f, 4);
        put_be(b, 0xca, u, 4);
    } else {
        double d = (double)n;
        uint64_t u;

        memcpy(&u, &d, 8);
        put_be(b, 0xcb, u, 8);
    }
}

static void encode_header(struct goblin_buf *b, size_t n, unsigned char fix,
                          unsigned char t16, unsigned char t32)
{
    if (n <= 15)
        add_byte(b, (unsigned char)(fix | n));
    else if (n <= 0xffff)
        put_be(b, t16, n, 2);
    else
        put_be(b, t32, n, 4);
}

static void encode_string(struct goblin_buf *b, const char *s, size_t len)
{
    if (len < 32)
        add_byte(b, (unsigned char)(0xa0 | len));
    else if (len <= 0xff)
        put_be(b, 0xd9, len, 1);
    else if (len <= 0xffff)
        put_be(b, 0xda, len, 2);
    else
        put_be(b, 0xdb, len, 4);
    add(b, s, len);
}

/* Keys exactly 1..n (an empty table counts): an array. */
static bool is_array(lua_State *L, int t)
{
    size_t count = 0;
    lua_Number max = 0;

    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_Number k;

        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TNUMBER ||
            (k = lua_tonumber(L, -1)) <= 0 || k != floor(k) ||
            k > (lua_Number)INT_MAX) {
            lua_pop(L, 1);
            return false;
        }
        if (k > max)
            max = k;
        count++;
    }
    return max == (lua_Number)count;
}

static void encode(lua_State *L, struct goblin_buf *b, int idx, int level);

static void encode_table(lua_State *L, struct goblin_buf *b, int t,
                         int level)
{
    size_t n = 0, j;

    if (is_array(L, t)) {
        n = lua_objlen(L, t);
        encode_header(b, n, 0x90, 0xdc, 0xdd);
        for (j = 1; j <= n; j++) {
            lua_rawgeti(L, t, (int)j);
            encode(L, b, lua_gettop(L), level + 1);
            lua_pop(L, 1);
        }
        return;
    }
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        n++;
    }
    encode_header(b, n, 0x80, 0xde, 0xdf);
    lua_pushnil(L);
    while (lua_next(L, t)) {
        int v = lua_gettop(L);

        encode(L, b, v - 1, level + 1);
        encode(L, b, v, level + 1);
        lua_pop(L, 1);
    }
}

static void encode(lua_State *L, struct goblin_buf *b, int idx, int level)
{
    int t = lua_type(L, idx);
    size_t len;
    const char *s;

    if (t == LUA_TTABLE && level == MAX_NESTING)
        t = LUA_TNIL;
    luaL_checkstack(L, 4, "in function encode");
    switch (t) {
    case LUA_TBOOLEAN:
        add_byte(b, lua_toboolean(L, idx) ? 0xc3 : 0xc2);
        break;
    case LUA_TNUMBER:
        encode_number(b, lua_tonumber(L, idx));
        break;
    case LUA_TSTRING:
        s = lua_tolstring(L, idx, &len);
        encode_string(b, s, len);
        break;
    case LUA_TTABLE:
        encode_table(L, b, idx, level);
        break;
    default:
        add_byte(b, 0xc0);
        break;
    }
}

static int mp_pack(lua_State *L)
{
    struct goblin_buf *b = &goblin__vm_owner(L)->scratch;
    int n = lua_gettop(L), i;

    if (n == 0)
        return luaL_argerror(L, 0, "MessagePack pack needs input.");
    b->len = 0;
    b->failed = false;
    for (i = 1; i <= n; i++)
        encode(L, b, i, 0);
    if (b->failed)
        return luaL_error(L, "not enough memory");
    lua_pushlstring(L, b->data != NULL ? b->data : "", b->len);
    if (b->cap > 65536)
        goblin_buf_free(b);
    return 1;
}

/* ---- decoding ---- */

enum { OK, ERR_EOF, ERR_FORMAT };

struct cur {
    const unsigned char *p;
    size_t left;
    int err;
};

static bool need(struct cur *c, size_t n)
{
    if (c->left < n) {
        c->err = ERR_EOF;
        return false;
    }
    return true;
}

static uint64_t take_be(struct cur *c, int bytes)
{
    uint64_t v = 0;
    int i;

    for (i = 0; i < bytes; i++)
        v = v << 8 | c->p[i];
    c->p += bytes;
    c->left -= (size_t)bytes;
    return v;
}

static void decode(lua_State *L, struct cur *c, int depth);

static void decode_string(lua_State *L, struct cur *c, int lenbytes)
{
    size_t len;

    if (!need(c, 1 + (size_t)lenbytes))
        return;
    c->p++;
    c->left--;
    len = (size_t)take_be(c, lenbytes);
    if (!need(c, len))
        return;
    lua_pushlstring(L, (const char *)c->p, len);
    c->p += len;
    c->left -= len;
}

static void decode_array(lua_State *L, struct cur *c, size_t n, int depth)
{
    size_t j;

    lua_newtable(L);
    for (j = 0; j < n; j++) {
        decode(L, c, depth + 1);
        if (c->err != OK)
            return;
        lua_rawseti(L, -2, (int)(j + 1));
    }
}

static void decode_map(lua_State *L, struct cur *c, size_t n, int depth)
{
    size_t j;

    lua_newtable(L);
    for (j = 0; j < n; j++) {
        decode(L, c, depth + 1);
        if (c->err != OK)
            return;
        decode(L, c, depth + 1);
        if (c->err != OK)
            return;
        lua_settable(L, -3);
    }
}

/* An aggregate whose count takes `bytes` bytes after the type byte. */
static size_t take_count(struct cur *c, int bytes)
{
    if (!need(c, 1 + (size_t)bytes))
        return 0;
    c->p++;
    c->left--;
    return (size_t)take_be(c, bytes);
}

static void decode(lua_State *L, struct cur *c, int depth)
{
    unsigned char t;

    if (!need(c, 1))
        return;
    if (depth > MAX_DECODE_DEPTH) {
        c->err = ERR_FORMAT;
        return;
    }
    luaL_checkstack(L, 4, "in function decode");
    t = c->p[0];
    if (t <= 0x7f || t >= 0xe0) {
        lua_pushnumber(L, t <= 0x7f ? (lua_Number)t
                                    : (lua_Number)(signed char)t);
        c->p++;
        c->left--;
        return;
    }
    if (t >= 0xa0 && t <= 0xbf) {
        size_t len = t & 0x1f;

        if (!need(c, 1 + len))
            return;
        lua_pushlstring(L, (const char *)c->p + 1, len);
        c->p += 1 + len;
        c->left -= 1 + len;
        return;
    }
    if (t >= 0x90 && t <= 0x9f) {
        c->p++;
        c->left--;
        decode_array(L, c, t & 0x0f, depth);
        return;
    }
    if (t >= 0x80 && t <= 0x8f) {
        c->p++;
        c->left--;
        decode_map(L, c, t & 0x0f, depth);
        return;
    }
    switch (t) {
    case 0xc0:
    case 0xc2:
    case 0xc3:
        if (t == 0xc0)
            lua_pushnil(L);
        else
            lua_pushboolean(L, t == 0xc3);
        c->p++;
        c->left--;
        return;
    case 0xcc: case 0xcd: case 0xce: case 0xcf: {
        int bytes = 1 << (t - 0xcc);

        if (!need(c, 1 + (size_t)bytes))
            return;
        c->p++;
        c->left--;
        lua_pushnumber(L, (lua_Number)take_be(c, bytes));
        return;
    }
    case 0xd0: case 0xd1: case 0xd2: case 0xd3: {
        int bytes = 1 << (t - 0xd0);
        uint64_t v;

        if (!need(c, 1 + (size_t)bytes))
            return;
        c->p++;
        c->left--;
        v = take_be(c, bytes);
        if (bytes < 8 && (v >> (8 * bytes - 1)) & 1)
            v |= ~(uint64_t)0 << (8 * bytes);
        lua_pushnumber(L, (lua_Number)(int64_t)v);
        return;
    }
    case 0xca: {
        uint32_t u;
        float f;

        if (!need(c, 5))
            return;
        c->p++;
        c->left--;
        u = (uint32_t)take_be(c, 4);
        memcpy(&f, &u, 4);
        lua_pushnumber(L, f);
        return;
    }
    case 0xcb: {
        uint64_t u;
        double d;

        if (!need(c, 9))
            return;
        c->p++;
        c->left--;
        u = take_be(c, 8);
        memcpy(&d, &u, 8);
        lua_pushnumber(L, d);
        return;
    }
    case 0xd9: case 0xc4: decode_string(L, c, 1); return;
    case 0xda: case 0xc5: decode_string(L, c, 2); return;
    case 0xdb: case 0xc6: decode_string(L, c, 4); return;
    case 0xdc: case 0xdd: {
        size_t n = take_count(c, t == 0xdc ? 2 : 4);

        if (c->err == OK)
            decode_array(L, c, n, depth);
        return;
    }
    case 0xde: case 0xdf: {
        size_t n = take_count(c, t == 0xde ? 2 : 4);

        if (c->err == OK)
            decode_map(L, c, n, depth);
        return;
    }
    default:
        c->err = ERR_FORMAT;
        return;
    }
}

static int unpack_full(lua_State *L, lua_Integer limit, lua_Integer offset)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    bool all = limit == 0 && offset == 0;
    struct cur c;
    int top, cnt;

    if (offset < 0 || limit < 0)
        return luaL_error(L, "Invalid request to unpack with offset of %d "
                             "and limit of %d.", (int)offset, (int)len);
    if ((size_t)offset > len)
        return luaL_error(L, "Start offset %d greater than input length "
                             "%d.", (int)offset, (int)len);
    if (all)
        limit = INT_MAX;
    c.p = (const unsigned char *)s + offset;
    c.left = len - (size_t)offset;
    c.err = OK;
    top = lua_gettop(L);
    for (cnt = 0; c.left > 0 && cnt < limit; cnt++) {
        decode(L, &c, 0);
        if (c.err == ERR_EOF)
            return luaL_error(L, "Missing bytes in input.");
        if (c.err == ERR_FORMAT)
            return luaL_error(L, "Bad data format in input.");
        /* Only whole values stay on the stack. */
        top++;
        lua_settop(L, top);
    }
    if (!all) {
        luaL_checkstack(L, 1, "in function unpack");
        lua_pushinteger(L, c.left == 0 ? -1 : (lua_Integer)(len - c.left));
        lua_insert(L, 2);
        cnt++;
    }
    return cnt;
}

static int mp_unpack(lua_State *L)
{
    lua_settop(L, 1);
    return unpack_full(L, 0, 0);
}

static int mp_unpack_one(lua_State *L)
{
    lua_Integer offset = luaL_optinteger(L, 2, 0);

    lua_settop(L, 1);
    return unpack_full(L, 1, offset);
}

static int mp_unpack_limit(lua_State *L)
{
    lua_Integer limit = luaL_checkinteger(L, 2);
    lua_Integer offset = luaL_optinteger(L, 3, 0);

    lua_settop(L, 1);
    return unpack_full(L, limit, offset);
}

static const luaL_Reg cmsgpack_fns[] = {
    {"pack", mp_pack},
    {"unpack", mp_unpack},
    {"unpack_one", mp_unpack_one},
    {"unpack_limit", mp_unpack_limit},
    {NULL, NULL},
};

int goblin__luaopen_cmsgpack(lua_State *L)
{
    luaL_register(L, "cmsgpack", cmsgpack_fns);
    lua_pushliteral(L, "lua-cmsgpack");
    lua_setfield(L, -2, "_NAME");
    lua_pushliteral(L, "0.4.0");
    lua_setfield(L, -2, "_VERSION");
    lua_pushliteral(L, "Copyright (C) 2012, Salvatore Sanfilippo");
    lua_setfield(L, -2, "_COPYRIGHT");
    lua_pushliteral(L, "MessagePack C implementation.");
    lua_setfield(L, -2, "_DESCRIPTION");
    return 1;
}
