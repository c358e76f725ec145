/* vm.c - one sandboxed Lua 5.1 interpreter as Redis 7 sets it up: the
 * libraries base, table, string, math, cjson, cmsgpack, bit and struct;
 * no os, io, package, debug, loadfile, dofile or print; a read-only
 * global table that refuses new globals and reports unknown ones;
 * loadstring and load refuse precompiled chunks.
 *
 * Layout of the globals: the libraries live in the real table R. Scripts
 * see an empty proxy P whose __index is R and whose __newindex refuses
 * ("Attempt to modify a readonly table"); R's own metatable reports a
 * missing name ("Script attempted to access nonexistent global variable
 * 'x'"). P is also the thread's global table, so getfenv(0) is P, and
 * _G is P. Each library table is replaced by such a proxy of its own
 * (without the missing-name report), and rawset refuses every proxy, so
 * nothing a script does outlives it except through redis.call; rawget,
 * next and pairs read through the proxies. getmetatable('') shows a
 * proxy of the string metatable.
 */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua-bitop.h>
#include <lua-cjson.h>
#include <lualib.h>

#include "script.h"

static const char REG_GUARDED[] = "goblin.guarded";

void *goblin__vm_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    struct goblin__vm *vm = ud;
    void *p;

    if (nsize == 0) {
        free(ptr);
        vm->used -= osize;
        return NULL;
    }
    if (vm->bounded && nsize > osize &&
        vm->used - osize + nsize > vm->limit)
        return NULL;
    /* Most blocks are new small objects: malloc is glibc's short path. */
    p = ptr == NULL ? malloc(nsize) : realloc(ptr, nsize);
    if (p == NULL)
        return NULL;
    vm->used = vm->used - osize + nsize;
    return p;
}

void goblin__vm_bound(struct goblin__vm *vm, bool on)
{
    if (on) {
        uint64_t max = goblin_script_heap_max(vm->g->eng);

        vm->limit = max == 0 || max > SIZE_MAX ? SIZE_MAX : (size_t)max;
    }
    vm->bounded = on;
}

void goblin__vm_reclaim(struct goblin__vm *vm)
{
    /* A full cycle frees the garbage but only halves the string table
     * and the parse buffer, so cycles go on while the heap shrinks. */
    for (int i = 0; i < 16; i++) {
        size_t before = vm->used;

        lua_gc(vm->L, LUA_GCCOLLECT, 0);
        if (vm->used >= before)
            break;
    }
}

void goblin__vm_after_run(struct goblin__vm *vm, int rc)
{
    /* Otherwise Lua's incremental collector keeps pace with what
     * scripts allocate, stepping as they allocate: the heap stays within
     * its pause (twice what is live). A step every 50 runs (after Redis's
     * LUA_GC_CYCLE_PERIOD), a step per run or Redis's full cycle every
     * 50 would cost more than a short script itself, for garbage the
     * collector frees anyway. */
    if (rc == LUA_ERRMEM)
        goblin__vm_reclaim(vm);
}

/* The vm of L: its allocator's ud, found without a table lookup. */
static struct goblin__vm *vm_of(lua_State *L)
{
    void *ud;

    lua_getallocf(L, &ud);
    return ud;
}

struct goblin__lua *goblin__vm_owner(lua_State *L)
{
    return vm_of(L)->g;
}

void goblin__vm_push_globals(lua_State *L)
{
    lua_rawgeti(L, LUA_REGISTRYINDEX, vm_of(L)->ref_globals);
}

void goblin__vm_push_handler(lua_State *L)
{
    lua_rawgeti(L, LUA_REGISTRYINDEX, vm_of(L)->ref_handler);
}

void goblin__vm_push_real(lua_State *L)
{
    lua_rawgeti(L, LUA_REGISTRYINDEX, vm_of(L)->ref_real);
}

/* Whether the array on top, made for n strings, is as made: no
 * metatable and no key but 1..n (its values the script may have
 * changed: they are all set again). */
static bool as_made(lua_State *L, size_t n)
{
    if (lua_getmetatable(L, -1)) {
        lua_pop(L, 1);
        return false;
    }
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
        lua_Number k;

        lua_pop(L, 1);
        k = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : 0;
        if (!(k >= 1 && k <= (lua_Number)n && k == (lua_Number)(size_t)k)) {
            lua_pop(L, 1);
            return false;
        }
    }
    return true;
}

/* Sets the global of name_ref to an array of the n strings v. The last
 * run's array is filled again when it holds as many and the script left
 * it as made: nothing but the globals refers to it once a run is over
 * (no table a script can write to outlives the run), so reusing it is
 * not seen, and saves a script two tables of garbage per run. */
static void set_array(lua_State *L, struct goblin__vm *vm,
                      struct goblin__vm_array *a,
                      const struct goblin_slice *v, size_t n)
{
    if (a->ref != LUA_NOREF && a->n == n) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, a->ref);
        if (as_made(L, n)) {
            for (size_t i = 0; i < n; i++) {
                lua_pushlstring(L, v[i].ptr, v[i].len);
                lua_rawseti(L, -2, (int)(i + 1));
            }
            lua_pop(L, 1);
            return;
        }
        lua_pop(L, 1);
    }
    goblin__lua_push_strings(L, v, n);
    lua_rawgeti(L, LUA_REGISTRYINDEX, vm->ref_real);
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->name_ref);
    lua_pushvalue(L, -3);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    if (a->ref == LUA_NOREF)
        a->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    else
        lua_rawseti(L, LUA_REGISTRYINDEX, a->ref);
    a->n = n;
}

void goblin__vm_set_keys_argv(lua_State *L, const struct goblin_slice *keys,
                              size_t nkeys, const struct goblin_slice *args,
                              size_t nargs)
{
    struct goblin__vm *vm = vm_of(L);

    set_array(L, vm, &vm->keys, keys, nkeys);
    set_array(L, vm, &vm->argv, args, nargs);
}

static int readonly_error(lua_State *L)
{
    return luaL_error(L, "Attempt to modify a readonly table");
}

static int missing_global(lua_State *L)
{
    const char *name = lua_tostring(L, 2);

    return luaL_error(L, "Script attempted to access nonexistent global "
                         "variable '%s'", name != NULL ? name : "?");
}

/* Raised by a library function (rawset): no script location, as
 * Redis's read-only check inside Lua's own rawset gives none. */
static int readonly_error_raw(lua_State *L)
{
    lua_pushliteral(L, "Attempt to modify a readonly table");
    return lua_error(L);
}

/* Pushes the table a guarded proxy reads through (for a proxy), else
 * nil. */
static void push_guarded(lua_State *L, int idx)
{
    lua_getfield(L, LUA_REGISTRYINDEX, REG_GUARDED);
    lua_pushvalue(L, idx);
    lua_rawget(L, -2);
    lua_remove(L, -2);
}

static bool guarded(lua_State *L, int idx)
{
    bool yes;

    push_guarded(L, idx);
    yes = !lua_isnil(L, -1);
    lua_pop(L, 1);
    return yes;
}

/* next and pairs see through the proxies, so pairs(_G) or pairs(string)
 * list what Redis lists. */
static int safe_next(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 2);
    push_guarded(L, 1);
    if (lua_istable(L, -1))
        lua_replace(L, 1);
    else
        lua_pop(L, 1);
    if (lua_next(L, 1))
        return 2;
    lua_pushnil(L);
    return 1;
}

static int safe_pairs(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_pushcfunction(L, safe_next);
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

/* rawget reads what a read-only proxy stands for, as Redis's tables are
 * the read-only ones themselves: rawget(_G, 'redis') is redis. */
static int safe_rawget(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    lua_settop(L, 2);
    push_guarded(L, 1);
    if (lua_istable(L, -1))
        lua_replace(L, 1);
    else
        lua_pop(L, 1);
    lua_rawget(L, 1);
    return 1;
}

/* rawset and setmetatable, refusing the read-only proxies. */
static int safe_rawset(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    luaL_checkany(L, 3);
    if (guarded(L, 1))
        return readonly_error_raw(L);
    lua_settop(L, 3);
    lua_rawset(L, 1);
    return 1;
}

static int safe_setmetatable(lua_State *L)
{
    int t = lua_type(L, 2);

    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_argcheck(L, t == LUA_TNIL || t == LUA_TTABLE, 2,
                  "nil or table expected");
    if (guarded(L, 1))
        return readonly_error_raw(L);
    if (luaL_getmetafield(L, 1, "__metatable"))
        return luaL_error(L, "cannot change a protected metatable");
    lua_settop(L, 2);
    lua_setmetatable(L, 1);
    return 1;
}

/* loadstring and load without precompiled chunks: Lua 5.1 trusts
 * bytecode, so a crafted chunk could break out of the interpreter. */
static int load_checked(lua_State *L, const char *s, size_t len,
                        const char *name)
{
    if (len > 0 && s[0] == LUA_SIGNATURE[0]) {
        lua_pushnil(L);
        lua_pushliteral(L, "cannot load precompiled code");
        return 2;
    }
    if (luaL_loadbuffer(L, s, len, name) != 0) {
        lua_pushnil(L);
        lua_insert(L, -2);
        return 2;
    }
    goblin__vm_push_globals(L);
    lua_setfenv(L, -2);
    return 1;
}

static int safe_loadstring(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);

    return load_checked(L, s, len, luaL_optstring(L, 2, s));
}

static int safe_load(lua_State *L)
{
    luaL_Buffer b;
    const char *name = luaL_optstring(L, 2, "=(load)");
    size_t len;
    const char *s;

    if (lua_type(L, 1) == LUA_TSTRING)
        return safe_loadstring(L);
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_settop(L, 2);
    luaL_buffinit(L, &b);
    for (;;) {
        lua_pushvalue(L, 1);
        lua_call(L, 0, 1);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            break;
        }
        if (!lua_isstring(L, -1))
            return luaL_error(L, "reader function must return a string");
        /* The piece goes under the buffer's own stack slots. */
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    s = lua_tolstring(L, -1, &len);
    return load_checked(L, s, len, name);
}

/* Pushes a new read-only proxy of the table at idx (absolute), known to
 * rawset and setmetatable as guarded. */
static void push_proxy(lua_State *L, int idx)
{
    lua_newtable(L);          /* proxy */
    lua_newtable(L);          /* its metatable */
    lua_pushvalue(L, idx);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, readonly_error);
    lua_setfield(L, -2, "__newindex");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    lua_getfield(L, LUA_REGISTRYINDEX, REG_GUARDED);
    lua_pushvalue(L, -2);
    lua_pushvalue(L, idx);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

/* Replaces the table at real[name] by a read-only proxy. */
static void guard_library(lua_State *L, int real, const char *name)
{
    lua_getfield(L, real, name);
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        return;
    }
    push_proxy(L, lua_gettop(L));
    lua_pushstring(L, name);
    lua_insert(L, -2);
    lua_rawset(L, real); /* real[name] = proxy */
    lua_pop(L, 1);
}

/* Opens a library and sets its global (Debian's cjson returns its table
 * without setting one). */
static void open_lib(lua_State *L, const char *name, lua_CFunction fn)
{
    lua_pushcfunction(L, fn);
    lua_pushstring(L, name);
    lua_call(L, 1, 1);
    if (name[0] != '\0' && lua_istable(L, -1))
        lua_setfield(L, LUA_GLOBALSINDEX, name);
    else
        lua_pop(L, 1);
}

/* Redis's math.random: its own lrand48, the same sequence everywhere. */
static double next_random(struct goblin__lua *g)
{
    g->rand48 = (g->rand48 * 0x5DEECE66Dull + 0xB) & ((1ull << 48) - 1);
    return (double)((int32_t)(g->rand48 >> 17) % INT32_MAX) /
           (double)INT32_MAX;
}

static int math_random(lua_State *L)
{
    struct goblin__lua *g = goblin__vm_owner(L);
    double r = next_random(g);
    int l, u;

    switch (lua_gettop(L)) {
    case 0:
        lua_pushnumber(L, r);
        return 1;
    case 1:
        u = luaL_checkint(L, 1);
        luaL_argcheck(L, 1 <= u, 1, "interval is empty");
        lua_pushnumber(L, (lua_Number)((int64_t)(r * u) + 1));
        return 1;
    case 2:
        l = luaL_checkint(L, 1);
        u = luaL_checkint(L, 2);
        luaL_argcheck(L, l <= u, 2, "interval is empty");
        lua_pushnumber(L, (lua_Number)((int64_t)(r * ((double)u - l + 1)) +
                                       l));
        return 1;
    default:
        return luaL_error(L, "wrong number of arguments");
    }
}

static int math_randomseed(lua_State *L)
{
    struct goblin__lua *g = goblin__vm_owner(L);
    uint32_t seed = (uint32_t)luaL_checkint(L, 1);

    g->rand48 = (uint64_t)seed << 16 | 0x330E;
    return 0;
}

/* Redis 7.0.15's globals are the allow list; these base functions are
 * not on it. */
static const char *const removed[] = {
    "dofile", "loadfile", "print", "module", "require", "getfenv",
    "setfenv", "newproxy", NULL,
};

static const char *const libraries[] = {
    "string", "table", "math", "cjson", "bit", "struct", "cmsgpack",
    "redis", "coroutine", NULL,
};

static int setup(lua_State *L)
{
    struct goblin__vm *vm = vm_of(L);
    int real;
    size_t i;

    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_GUARDED);
    open_lib(L, "", luaopen_base);
    open_lib(L, LUA_TABLIBNAME, luaopen_table);
    open_lib(L, LUA_STRLIBNAME, luaopen_string);
    open_lib(L, LUA_MATHLIBNAME, luaopen_math);
    open_lib(L, "cjson", luaopen_cjson);
    open_lib(L, "bit", luaopen_bit);
    open_lib(L, "struct", goblin__luaopen_struct);
    open_lib(L, "cmsgpack", goblin__luaopen_cmsgpack);
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    real = lua_gettop(L);
    lua_pushvalue(L, real);
    vm->ref_real = luaL_ref(L, LUA_REGISTRYINDEX);
    for (i = 0; removed[i] != NULL; i++) {
        lua_pushnil(L);
        lua_setfield(L, real, removed[i]);
    }
    lua_pushcfunction(L, safe_rawset);
    lua_setfield(L, real, "rawset");
    lua_pushcfunction(L, safe_rawget);
    lua_setfield(L, real, "rawget");
    lua_pushcfunction(L, safe_setmetatable);
    lua_setfield(L, real, "setmetatable");
    lua_pushcfunction(L, safe_loadstring);
    lua_setfield(L, real, "loadstring");
    lua_pushcfunction(L, safe_load);
    lua_setfield(L, real, "load");
    lua_pushcfunction(L, safe_next);
    lua_setfield(L, real, "next");
    lua_pushcfunction(L, safe_pairs);
    lua_setfield(L, real, "pairs");
    lua_getfield(L, real, "math");
    lua_pushcfunction(L, math_random);
    lua_setfield(L, -2, "random");
    lua_pushcfunction(L, math_randomseed);
    lua_setfield(L, -2, "randomseed");
    lua_pop(L, 1);
    lua_newtable(L);
    goblin__redis_api_open(L);
    lua_setfield(L, real, "redis");

    /* The string metatable's __index becomes the guarded string table,
     * and what getmetatable('') shows is a read-only proxy of it, so no
     * table a script can write to outlives its run (Redis makes the
     * metatable itself read-only). */
    for (i = 0; libraries[i] != NULL; i++)
        guard_library(L, real, libraries[i]);
    lua_pushliteral(L, "");
    lua_getmetatable(L, -1);
    lua_getfield(L, real, "string");
    lua_setfield(L, -2, "__index");
    push_proxy(L, lua_gettop(L));
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 2);

    /* R's metatable reports missing names; P reads through R. */
    lua_newtable(L);
    lua_pushcfunction(L, missing_global);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, readonly_error);
    lua_setfield(L, -2, "__newindex");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, real);
    lua_newtable(L); /* P */
    lua_newtable(L);
    lua_pushvalue(L, real);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, readonly_error);
    lua_setfield(L, -2, "__newindex");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    lua_getfield(L, LUA_REGISTRYINDEX, REG_GUARDED);
    lua_pushvalue(L, -2);
    lua_pushvalue(L, real);
    lua_rawset(L, -3);
    lua_pushvalue(L, real);
    lua_pushvalue(L, real);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    lua_pushvalue(L, -1);
    vm->ref_globals = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushcfunction(L, goblin__lua_error_handler);
    vm->ref_handler = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushliteral(L, "KEYS");
    vm->keys.name_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushliteral(L, "ARGV");
    vm->argv.name_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushliteral(L, "_G");
    lua_pushvalue(L, -2);
    lua_rawset(L, real);
    lua_replace(L, LUA_GLOBALSINDEX);
    return 0;
}

int goblin__vm_open(struct goblin__lua *g, struct goblin__vm *vm)
{
    vm->g = g;
    vm->used = 0;
    vm->bounded = false;
    vm->keys.ref = vm->argv.ref = LUA_NOREF;
    vm->L = lua_newstate(goblin__vm_alloc, vm);
    if (vm->L == NULL)
        return GOBLIN_ENOMEM;
    if (lua_cpcall(vm->L, setup, NULL) != 0) {
        lua_close(vm->L);
        vm->L = NULL;
        return GOBLIN_ENOMEM;
    }
    return 0;
}

void goblin__vm_close(struct goblin__vm *vm)
{
    if (vm->L != NULL)
        lua_close(vm->L);
    vm->L = NULL;
}
