/* lstruct.c - the struct library Redis scripts get: struct.pack(fmt,
 * ...), struct.unpack(fmt, s [, pos]) and struct.size(fmt), with the
 * semantics of Roberto Ierusalimschy's struct 0.2 as Redis ships it.
 *
 * Format: '<' little, '>' big endian, '!n' alignment n (a power of two;
 * '!' alone the largest native one), ' ' ignored; 'b' 'B' char, 'h' 'H'
 * short, 'l' 'L' long, 'T' size_t, 'i' 'I' with an optional byte count
 * (1..32, default an int), 'f' float, 'd' double, 'x' a zero byte, 's' a
 * zero-terminated string, 'cn' n bytes ('c0': pack the whole string;
 * unpack as many bytes as the previous number said). Lower case is
 * signed. unpack returns the values and the position after them.
 */
#include <ctype.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <lauxlib.h>

#include "script.h"

#define MAXINTSIZE 32
#define MAXALIGN 8

enum { LITTLE = 0, BIG = 1 };

struct header {
    int endian;
    size_t align;
};

static int native_endian(void)
{
    const uint16_t one = 1;

    return *(const unsigned char *)&one == 1 ? LITTLE : BIG;
}

static size_t number(lua_State *L, const char **fmt, size_t dflt)
{
    size_t a = 0;

    if (!isdigit((unsigned char)**fmt))
        return dflt;
    do {
        if (a > ((size_t)INT_MAX - (size_t)(**fmt - '0')) / 10)
            luaL_error(L, "integral size overflow");
        a = a * 10 + (size_t)(*(*fmt)++ - '0');
    } while (isdigit((unsigned char)**fmt));
    return a;
}

static size_t opt_size(lua_State *L, int opt, const char **fmt)
{
    size_t sz;

    switch (opt) {
    case 'B': case 'b': return sizeof(char);
    case 'H': case 'h': return sizeof(short);
    case 'L': case 'l': return sizeof(long);
    case 'T': return sizeof(size_t);
    case 'f': return sizeof(float);
    case 'd': return sizeof(double);
    case 'x': return 1;
    case 'c': return number(L, fmt, 1);
    case 'i': case 'I':
        sz = number(L, fmt, sizeof(int));
        if (sz > MAXINTSIZE)
            luaL_error(L, "integral size %d is larger than limit of %d",
                       (int)sz, MAXINTSIZE);
        return sz;
    default:
        return 0;
    }
}

/* Padding before an item of size at offset len. */
static size_t to_align(size_t len, const struct header *h, int opt,
                       size_t size)
{
    if (size == 0 || opt == 'c')
        return 0;
    if (size > h->align)
        size = h->align;
    return (size - (len & (size - 1))) & (size - 1);
}

static void control(lua_State *L, int opt, const char **fmt,
                    struct header *h)
{
    size_t a;

    switch (opt) {
    case ' ':
        return;
    case '>':
        h->endian = BIG;
        return;
    case '<':
        h->endian = LITTLE;
        return;
    case '!':
        a = number(L, fmt, MAXALIGN);
        if (a == 0 || (a & (a - 1)) != 0)
            luaL_error(L, "alignment %d is not a power of 2", (int)a);
        h->align = a;
        return;
    default:
        luaL_error(L, "invalid format option '%c'", opt);
    }
}

static void put_integer(lua_State *L, luaL_Buffer *b, int arg, int endian,
                        size_t size)
{
    lua_Number n = luaL_checknumber(L, arg);
    unsigned char buf[MAXINTSIZE];
    uint64_t v;
    size_t i;

    /* What the C casts give on x86-64, without their undefined cases. */
    if (n < 0)
        v = n >= -9223372036854775808.0 ? (uint64_t)(int64_t)n
                                        : (uint64_t)INT64_MIN;
    else
        v = n < 18446744073709551616.0 ? (uint64_t)n : 0;
    for (i = 0; i < size; i++) {
        buf[endian == LITTLE ? i : size - 1 - i] = (unsigned char)v;
        v = i < 7 ? v >> 8 : 0;
    }
    luaL_addlstring(b, (const char *)buf, size);
}

static void swap_bytes(unsigned char *p, size_t size, int endian)
{
    size_t i;

    if (endian == native_endian())
        return;
    for (i = 0; i < size / 2; i++) {
        unsigned char t = p[i];

        p[i] = p[size - 1 - i];
        p[size - 1 - i] = t;
    }
}

static int struct_pack(lua_State *L)
{
    const char *fmt = luaL_checkstring(L, 1);
    struct header h = {native_endian(), 1};
    size_t total = 0;
    int arg = 2;
    luaL_Buffer b;

    lua_pushnil(L); /* keeps the arguments apart from the buffer */
    luaL_buffinit(L, &b);
    while (*fmt != '\0') {
        int opt = *fmt++;
        size_t size = opt_size(L, opt, &fmt);
        size_t pad = to_align(total, &h, opt, size);

        total += pad;
        while (pad-- > 0)
            luaL_addchar(&b, '\0');
        switch (opt) {
        case 'b': case 'B': case 'h': case 'H': case 'l': case 'L':
        case 'T': case 'i': case 'I':
            put_integer(L, &b, arg++, h.endian, size);
            break;
        case 'x':
            luaL_addchar(&b, '\0');
            break;
        case 'f': {
            float f = (float)luaL_checknumber(L, arg++);

            swap_bytes((unsigned char *)&f, sizeof(f), h.endian);
            luaL_addlstring(&b, (const char *)&f, sizeof(f));
            break;
        }
        case 'd': {
            double d = (double)luaL_checknumber(L, arg++);

            swap_bytes((unsigned char *)&d, sizeof(d), h.endian);
            luaL_addlstring(&b, (const char *)&d, sizeof(d));
            break;
        }
        case 'c': case 's': {
            size_t l;
            const char *s = luaL_checklstring(L, arg++, &l);

            if (size == 0)
                size = l;
            luaL_argcheck(L, l >= size, arg, "string too short");
            luaL_addlstring(&b, s, size);
            if (opt == 's') {
                luaL_addchar(&b, '\0');
                size++;
            }
            break;
        }
        default:
            control(L, opt, &fmt, &h);
        }
        total += size;
    }
    luaL_pushresult(&b);
    return 1;
}

static lua_Number get_integer(const unsigned char *p, int endian,
                              bool is_signed, size_t size)
{
    uint64_t v = 0;
    size_t i;

    for (i = 0; i < size; i++) {
        size_t k = endian == BIG ? i : size - 1 - i;

        v = v << 8 | p[k];
    }
    if (!is_signed)
        return (lua_Number)v;
    if (size < 8) {
        uint64_t mask = ~(uint64_t)0 << (size * 8 - 1);

        if (v & mask)
            v |= mask;
    }
    return (lua_Number)(int64_t)v;
}

static int struct_unpack(lua_State *L)
{
    const char *fmt = luaL_checkstring(L, 1);
    size_t ld;
    const char *data = luaL_checklstring(L, 2, &ld);
    lua_Integer start = luaL_optinteger(L, 3, 1);
    struct header h = {native_endian(), 1};
    size_t pos;
    int n = 0;

    luaL_argcheck(L, start >= 1 && (size_t)(start - 1) <= ld, 3,
                  "offset must be 1 or greater");
    pos = (size_t)start - 1;
    while (*fmt != '\0') {
        int opt = *fmt++;
        size_t size = opt_size(L, opt, &fmt);

        pos += to_align(pos, &h, opt, size);
        luaL_argcheck(L, size <= ld && pos <= ld - size, 2,
                      "data string too short");
        luaL_checkstack(L, 2, "too many results");
        switch (opt) {
        case 'b': case 'B': case 'h': case 'H': case 'l': case 'L':
        case 'T': case 'i': case 'I':
            lua_pushnumber(L, get_integer((const unsigned char *)data + pos,
                                          h.endian, islower(opt), size));
            n++;
            break;
        case 'x':
            break;
        case 'f': {
            float f;

            memcpy(&f, data + pos, sizeof(f));
            swap_bytes((unsigned char *)&f, sizeof(f), h.endian);
            lua_pushnumber(L, f);
            n++;
            break;
        }
        case 'd': {
            double d;

            memcpy(&d, data + pos, sizeof(d));
            swap_bytes((unsigned char *)&d, sizeof(d), h.endian);
            lua_pushnumber(L, d);
            n++;
            break;
        }
        case 'c':
            if (size == 0) {
                lua_Number want;

                if (n == 0 || !lua_isnumber(L, -1))
                    luaL_error(L, "format 'c0' needs a previous size");
                want = lua_tonumber(L, -1);
                size = want > 0 && want < (lua_Number)ld ? (size_t)want
                       : want >= (lua_Number)ld         ? ld + 1
                                                        : 0;
                lua_pop(L, 1);
                n--;
                luaL_argcheck(L, size <= ld && pos <= ld - size, 2,
                              "data string too short");
            }
            lua_pushlstring(L, data + pos, size);
            n++;
            break;
        case 's': {
            const char *e = memchr(data + pos, '\0', ld - pos);

            if (e == NULL)
                luaL_error(L, "unfinished string in data");
            size = (size_t)(e - (data + pos)) + 1;
            lua_pushlstring(L, data + pos, size - 1);
            n++;
            break;
        }
        default:
            control(L, opt, &fmt, &h);
        }
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)pos + 1);
    return n + 1;
}

static int struct_size(lua_State *L)
{
    const char *fmt = luaL_checkstring(L, 1);
    struct header h = {native_endian(), 1};
    size_t pos = 0;

    while (*fmt != '\0') {
        int opt = *fmt++;
        size_t size = opt_size(L, opt, &fmt);

        pos += to_align(pos, &h, opt, size);
        if (opt == 's')
            luaL_argerror(L, 1, "options 's' has no fixed size");
        else if (opt == 'c' && size == 0)
            luaL_argerror(L, 1, "option 'c0' has no fixed size");
        if (!isalnum(opt))
            control(L, opt, &fmt, &h);
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)pos);
    return 1;
}

static const luaL_Reg struct_fns[] = {
    {"pack", struct_pack},
    {"unpack", struct_unpack},
    {"size", struct_size},
    {NULL, NULL},
};

int goblin__luaopen_struct(lua_State *L)
{
    luaL_register(L, "struct", struct_fns);
    return 1;
}
