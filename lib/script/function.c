/* function.c - Redis 7.0's function libraries (functions.c,
 * function_lua.c): FUNCTION LOAD's "#!lua name=LIB" header, running a
 * library's code so that it registers its functions with
 * redis.register_function (both the positional and the named-argument
 * form, with flags and a description), the library registry, and FCALL /
 * FCALL_RO. FUNCTION's other subcommands are in function_cmd.c.
 *
 * Libraries live in their own interpreter (g->fn), as Redis keeps them
 * apart from EVAL's. A library's code runs with a globals table that
 * holds only a small redis table (register_function, log, the log levels
 * and the version): the functions' proxy globals table has its __index
 * pointed at that table for the run, then back at the real globals, so
 * the functions the code defined see the whole API when they are called.
 * Each function is a reference in the interpreter's registry; deleting or
 * replacing a library drops its references.
 *
 * Names: library and function names are [A-Za-z0-9_]+. As in Redis
 * 7.0.15, library names and the function names within one library are
 * case sensitive, but FCALL finds a function, and a new library collides
 * with another's function, ignoring case.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <lauxlib.h>

#include "goblin/numtext.h"
#include "script.h"

/* A library's code may run this long at load (Redis's LOAD_TIMEOUT_MS). */
#define LOAD_TIMEOUT_MS 500

static const char REG_LOAD_ENV[] = "goblin.load_env";

const struct goblin__flag_name goblin__flag_names[] = {
    {"no-writes", GOBLIN_SCRIPT_NO_WRITES},
    {"allow-oom", GOBLIN_SCRIPT_ALLOW_OOM},
    {"allow-stale", GOBLIN_SCRIPT_ALLOW_STALE},
    {"no-cluster", GOBLIN_SCRIPT_NO_CLUSTER},
    {"allow-cross-slot-keys", GOBLIN_SCRIPT_ALLOW_CROSS_SLOT},
    {NULL, 0},
};

static uint64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

bool goblin__fn_name_ok(const char *p, size_t len)
{
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)p[i]) && p[i] != '_')
            return false;
    return true;
}

/* ---- the registry ---- */

static void lib_free(struct goblin__lua *g, struct goblin__lib *lib)
{
    if (lib == NULL)
        return;
    for (size_t i = 0; i < lib->nfns; i++) {
        if (g->fn.L != NULL)
            luaL_unref(g->fn.L, LUA_REGISTRYINDEX, lib->fns[i].ref);
        free(lib->fns[i].name);
        free(lib->fns[i].desc);
    }
    free(lib->fns);
    free(lib->name);
    free(lib->code);
    free(lib);
}

struct goblin__lib *goblin__lib_find(const struct goblin__libset *set,
                                     const char *name, size_t len)
{
    for (size_t i = 0; i < set->n; i++)
        if (strlen(set->v[i]->name) == len &&
            memcmp(set->v[i]->name, name, len) == 0)
            return set->v[i];
    return NULL;
}

struct goblin__fn *goblin__fn_find(const struct goblin__libset *set,
                                   const char *name, size_t len)
{
    for (size_t i = 0; i < set->n; i++)
        for (size_t j = 0; j < set->v[i]->nfns; j++) {
            struct goblin__fn *f = &set->v[i]->fns[j];

            if (f->name_len == len && strncasecmp(f->name, name, len) == 0)
                return f;
        }
    return NULL;
}

void goblin__lib_unlink(struct goblin__libset *set, struct goblin__lib *lib)
{
    for (size_t i = 0; i < set->n; i++)
        if (set->v[i] == lib) {
            memmove(&set->v[i], &set->v[i + 1],
                    (set->n - i - 1) * sizeof(*set->v));
            set->n--;
            set->nfunctions -= lib->nfns;
            return;
        }
}

int goblin__lib_link(struct goblin__libset *set, struct goblin__lib *lib)
{
    if (set->n == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 8;
        struct goblin__lib **v = realloc(set->v, cap * sizeof(*v));

        if (v == NULL)
            return GOBLIN_ENOMEM;
        set->v = v;
        set->cap = cap;
    }
    set->v[set->n++] = lib;
    set->nfunctions += lib->nfns;
    for (size_t i = 0; i < lib->nfns; i++)
        lib->fns[i].lib = lib;
    return 0;
}

void goblin__lib_delete(struct goblin__lua *g, struct goblin__libset *set,
                        struct goblin__lib *lib)
{
    goblin__lib_unlink(set, lib);
    lib_free(g, lib);
}

void goblin__lib_flush(struct goblin__lua *g, struct goblin__libset *set)
{
    while (set->n > 0)
        goblin__lib_delete(g, set, set->v[set->n - 1]);
    free(set->v);
    set->v = NULL;
    set->cap = 0;
}

size_t goblin__lib_memory(const struct goblin__libset *set)
{
    size_t sum = 0;

    for (size_t i = 0; i < set->n; i++) {
        const struct goblin__lib *lib = set->v[i];

        sum += sizeof(*lib) + strlen(lib->name) + 1 + lib->code_len;
        for (size_t j = 0; j < lib->nfns; j++)
            sum += sizeof(lib->fns[j]) + lib->fns[j].name_len + 1 +
                   (lib->fns[j].desc != NULL ? strlen(lib->fns[j].desc) + 1
                                             : 0);
    }
    return sum;
}

/* ---- the header ---- */

/* Splits the header line into words as Redis's sdssplitargs does for
 * plain words (no quoting). */
static int header_words(const char *p, size_t len, struct goblin_slice *w,
                        int cap)
{
    int n = 0;
    size_t i = 0;

    while (i < len) {
        size_t j;

        while (i < len && isspace((unsigned char)p[i]))
            i++;
        if (i >= len)
            break;
        j = i;
        while (j < len && !isspace((unsigned char)p[j]))
            j++;
        if (n == cap)
            return -1;
        w[n++] = (struct goblin_slice){p + i, j - i};
        i = j;
    }
    return n;
}

/* Reads the "#!ENGINE name=LIB" header of code: *name the library's name
 * and *body the code after the header (from its newline). Returns false
 * with Redis's text in err. */
static bool header(struct goblin_slice code, struct goblin_slice *name,
                   struct goblin_slice *body, char *err, size_t cap)
{
    const char *p = code.ptr, *nl;
    struct goblin_slice w[16];
    int n;

    name->ptr = NULL;
    if (code.len < 2 || p[0] != '#' || p[1] != '!') {
        snprintf(err, cap, "ERR Missing library metadata");
        return false;
    }
    nl = memchr(p, '\n', code.len);
    n = nl == NULL ? -1 : header_words(p, (size_t)(nl - p), w, 16);
    if (n <= 0) {
        snprintf(err, cap, "ERR Invalid library metadata");
        return false;
    }
    for (int i = 1; i < n; i++) {
        const char *s = w[i].ptr;

        if (w[i].len >= 5 && strncasecmp(s, "name=", 5) == 0) {
            if (name->ptr != NULL) {
                snprintf(err, cap, "ERR Invalid metadata value, name "
                                   "argument was given multiple times");
                return false;
            }
            *name = (struct goblin_slice){s + 5, w[i].len - 5};
            continue;
        }
        snprintf(err, cap, "ERR Invalid metadata value given: %.*s",
                 (int)w[i].len, s);
        return false;
    }
    if (name->ptr == NULL) {
        snprintf(err, cap, "ERR Library name was not given");
        return false;
    }
    if (!goblin__fn_name_ok(name->ptr, name->len)) {
        snprintf(err, cap, "ERR Library names can only contain letters, "
                           "numbers, or underscores(_) and must be at least "
                           "one character long");
        return false;
    }
    if (w[0].len != 5 || strncasecmp((const char *)w[0].ptr + 2, "lua", 3)) {
        snprintf(err, cap, "ERR Engine '%.*s' not found",
                 (int)w[0].len - 2, (const char *)w[0].ptr + 2);
        return false;
    }
    *body = (struct goblin_slice){nl, code.len - (size_t)(nl - p)};
    return true;
}

/* ---- redis.register_function ---- */

static int raise(lua_State *L, const char *text)
{
    goblin__lua_push_error(L, text, strlen(text));
    return lua_error(L);
}

/* Reads a flags table (at idx) into *flags; false for an unknown one. */
static bool read_flags(lua_State *L, int idx, unsigned *flags)
{
    for (int j = 1;; j++) {
        const char *s;
        int k;

        lua_rawgeti(L, idx, j);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            return true;
        }
        if (lua_type(L, -1) != LUA_TSTRING && !lua_isnumber(L, -1)) {
            lua_pop(L, 1);
            return false;
        }
        s = lua_tostring(L, -1);
        for (k = 0; goblin__flag_names[k].name != NULL; k++)
            if (strcasecmp(goblin__flag_names[k].name, s) == 0)
                break;
        lua_pop(L, 1);
        if (goblin__flag_names[k].name == NULL)
            return false;
        *flags |= goblin__flag_names[k].flag;
    }
}

/* Adds a function to the library being loaded; the callback is on top of
 * the stack (taken). */
static int add_function(lua_State *L, struct goblin__lib *lib,
                        const char *name, size_t nlen, const char *desc,
                        unsigned flags)
{
    struct goblin__fn *f;

    if (!goblin__fn_name_ok(name, nlen))
        return raise(L, "Library names can only contain letters, numbers, "
                        "or underscores(_) and must be at least one "
                        "character long");
    for (size_t i = 0; i < lib->nfns; i++)
        if (lib->fns[i].name_len == nlen &&
            memcmp(lib->fns[i].name, name, nlen) == 0)
            return raise(L, "Function already exists in the library");
    if (lib->nfns == lib->cap_fns) {
        size_t cap = lib->cap_fns ? lib->cap_fns * 2 : 4;
        struct goblin__fn *v = realloc(lib->fns, cap * sizeof(*v));

        if (v == NULL)
            return luaL_error(L, "not enough memory");
        lib->fns = v;
        lib->cap_fns = cap;
    }
    f = &lib->fns[lib->nfns];
    memset(f, 0, sizeof(*f));
    f->name = malloc(nlen + 1);
    f->desc = desc != NULL ? strdup(desc) : NULL;
    if (f->name == NULL || (desc != NULL && f->desc == NULL)) {
        free(f->name);
        free(f->desc);
        return luaL_error(L, "not enough memory");
    }
    memcpy(f->name, name, nlen);
    f->name[nlen] = '\0';
    f->name_len = nlen;
    f->flags = flags;
    f->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lib->nfns++;
    return 0;
}

/* The named form: {function_name=, callback=, flags=, description=}.
 * Stack slots: 1 the table, 2 the callback, 3 the name, 4 the
 * description (strings, so a number given as a name is its text). */
static int register_named(lua_State *L, struct goblin__lib *lib)
{
    const char *name, *desc;
    size_t nlen;
    unsigned flags = 0;

    if (!lua_istable(L, 1))
        return raise(L, "calling redis.register_function with a single "
                        "argument is only applicable to Lua table "
                        "(representing named arguments).");
    lua_settop(L, 4);
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        const char *key;

        if (!lua_isstring(L, -2))
            return raise(L, "named argument key given to "
                            "redis.register_function is not a string");
        key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
        if (strcasecmp(key, "function_name") == 0 ||
            strcasecmp(key, "description") == 0) {
            bool is_name = strcasecmp(key, "function_name") == 0;

            if (!lua_isstring(L, -1))
                return raise(L, is_name
                                    ? "function_name argument given to "
                                      "redis.register_function must be a "
                                      "string"
                                    : "description argument given to "
                                      "redis.register_function must be a "
                                      "string");
            lua_pushvalue(L, -1);
            lua_tostring(L, -1);
            lua_replace(L, is_name ? 3 : 4);
        } else if (strcasecmp(key, "callback") == 0) {
            if (!lua_isfunction(L, -1))
                return raise(L, "callback argument given to "
                                "redis.register_function must be a "
                                "function");
            lua_pushvalue(L, -1);
            lua_replace(L, 2);
        } else if (strcasecmp(key, "flags") == 0) {
            if (!lua_istable(L, -1))
                return raise(L, "flags argument to redis.register_function "
                                "must be a table representing function "
                                "flags");
            if (!read_flags(L, lua_gettop(L), &flags))
                return raise(L, "unknown flag given");
        } else {
            return raise(L, "unknown argument given to "
                            "redis.register_function");
        }
        lua_pop(L, 1);
    }
    if (lua_isnil(L, 3))
        return raise(L, "redis.register_function must get a function name "
                        "argument");
    if (lua_isnil(L, 2))
        return raise(L, "redis.register_function must get a callback "
                        "argument");
    name = lua_tolstring(L, 3, &nlen);
    desc = lua_isnil(L, 4) ? NULL : lua_tostring(L, 4);
    lua_pushvalue(L, 2);
    return add_function(L, lib, name, nlen, desc, flags);
}

static int register_function(lua_State *L)
{
    struct goblin__lua *g = goblin__vm_owner(L);
    struct goblin__lib *lib = g->loading;
    const char *name;
    size_t nlen;
    int argc = lua_gettop(L);

    if (lib == NULL)
        return raise(L, "redis.register_function can only be called on "
                        "FUNCTION LOAD command");
    if (argc < 1 || argc > 2)
        return raise(L, "wrong number of arguments to "
                        "redis.register_function");
    if (argc == 1)
        return register_named(L, lib);
    if (!lua_isstring(L, 1))
        return raise(L, "first argument to redis.register_function must be "
                        "a string");
    if (!lua_isfunction(L, 2))
        return raise(L, "second argument to redis.register_function must "
                        "be a function");
    name = lua_tolstring(L, 1, &nlen);
    lua_pushvalue(L, 2);
    return add_function(L, lib, name, nlen, NULL, 0);
}

/* ---- the interpreter ---- */

static int missing_name(lua_State *L)
{
    const char *name = lua_tostring(L, 2);

    return luaL_error(L, "Script attempted to access nonexistent global "
                         "variable '%s'", name != NULL ? name : "?");
}

static int readonly(lua_State *L)
{
    return luaL_error(L, "Attempt to modify a readonly table");
}

/* Gives the table on top a metatable that reports missing names and
 * refuses writes. */
static void protect(lua_State *L)
{
    lua_newtable(L);
    lua_pushcfunction(L, missing_name);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, readonly);
    lua_setfield(L, -2, "__newindex");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
}

/* Builds what a library's code sees at load: {redis = {register_function,
 * log, LOG_*, REDIS_VERSION, REDIS_VERSION_NUM}}, both protected. */
static int setup_load_env(lua_State *L)
{
    lua_newtable(L); /* the load globals */
    lua_newtable(L); /* their redis */
    lua_pushcfunction(L, register_function);
    lua_setfield(L, -2, "register_function");
    goblin__redis_load_api_open(L);
    protect(L);
    lua_setfield(L, -2, "redis");
    protect(L);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_LOAD_ENV);
    return 0;
}

int goblin__fn_vm_open(struct goblin__lua *g)
{
    if (goblin__vm_open(g, &g->fn) != 0)
        return GOBLIN_ENOMEM;
    if (lua_cpcall(g->fn.L, setup_load_env, NULL) != 0)
        return GOBLIN_ENOMEM;
    return 0;
}

/* Points the proxy globals' __index at the table on top (popped). */
static void globals_index(lua_State *L)
{
    goblin__vm_push_globals(L);
    lua_getmetatable(L, -1);
    lua_pushvalue(L, -3);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 3);
}

static void load_hook(lua_State *L, lua_Debug *ar)
{
    struct goblin__lua *g = goblin__vm_owner(L);

    (void)ar;
    if (mono_ms() - g->load_started_ms <= LOAD_TIMEOUT_MS)
        return;
    lua_sethook(L, load_hook, LUA_MASKLINE, 0);
    raise(L, "FUNCTION LOAD timeout");
}

/* Runs body into lib's functions. Returns false with the error text. */
static bool run_library(struct goblin__lua *g, struct goblin__lib *lib,
                        struct goblin_slice body, char *err, size_t cap)
{
    lua_State *L = g->fn.L;
    const char *msg;
    int rc;

    goblin__vm_bound(&g->fn, true);
    rc = luaL_loadbuffer(L, body.ptr, body.len, "@user_function");
    if (rc != 0) {
        goblin__vm_bound(&g->fn, false);
        msg = lua_tostring(L, -1);
        snprintf(err, cap, "ERR Error compiling function: %s",
                 msg != NULL ? msg : "?");
        lua_pop(L, 1);
        if (rc == LUA_ERRMEM)
            goblin__vm_reclaim(&g->fn);
        return false;
    }
    goblin__vm_push_globals(L);
    lua_setfenv(L, -2);
    lua_getfield(L, LUA_REGISTRYINDEX, REG_LOAD_ENV);
    globals_index(L);
    g->loading = lib;
    g->load_started_ms = mono_ms();
    lua_sethook(L, load_hook, LUA_MASKCOUNT, 100000);
    rc = lua_pcall(L, 0, 0, 0);
    lua_sethook(L, NULL, 0, 0);
    g->loading = NULL;
    goblin__vm_bound(&g->fn, false);
    goblin__vm_push_real(L);
    globals_index(L);
    if (rc == 0)
        return true;
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, "err");
        msg = lua_tostring(L, -1);
        snprintf(err, cap, "ERR Error registering functions: %s",
                 msg != NULL ? msg : "?");
        lua_pop(L, 2);
    } else {
        msg = lua_tostring(L, -1);
        snprintf(err, cap, "ERR Error registering functions: ERR %s",
                 msg != NULL ? msg : "?");
        lua_pop(L, 1);
    }
    if (rc == LUA_ERRMEM)
        goblin__vm_reclaim(&g->fn); /* past lua-heap-max: give it back */
    return false;
}

/* A function of lib whose name a library of set other than old has. */
static const struct goblin__fn *collision(const struct goblin__libset *set,
                                          const struct goblin__lib *lib,
                                          const struct goblin__lib *old)
{
    for (size_t i = 0; i < lib->nfns; i++) {
        struct goblin__fn *f = goblin__fn_find(set, lib->fns[i].name,
                                               lib->fns[i].name_len);

        if (f != NULL && f->lib != old)
            return &lib->fns[i];
    }
    return NULL;
}

int goblin__lib_create(struct goblin__lua *g,
                       const struct goblin__libset *set,
                       struct goblin_slice code, bool replace,
                       struct goblin__lib **out, char *err, size_t cap)
{
    struct goblin_slice name, body;
    struct goblin__lib *lib, *old;
    const struct goblin__fn *f;

    *out = NULL;
    if (!header(code, &name, &body, err, cap))
        return GOBLIN_EINVAL;
    old = goblin__lib_find(set, name.ptr, name.len);
    if (old != NULL && !replace) {
        snprintf(err, cap, "ERR Library '%.*s' already exists",
                 (int)name.len, (const char *)name.ptr);
        return GOBLIN_EINVAL;
    }
    if ((lib = calloc(1, sizeof(*lib))) == NULL ||
        (lib->name = malloc(name.len + 1)) == NULL ||
        (lib->code = malloc(code.len + 1)) == NULL) {
        lib_free(g, lib);
        snprintf(err, cap, "ERR Out of memory");
        return GOBLIN_ENOMEM;
    }
    memcpy(lib->name, name.ptr, name.len);
    lib->name[name.len] = '\0';
    memcpy(lib->code, code.ptr, code.len);
    lib->code[code.len] = '\0';
    lib->code_len = code.len;
    if (!run_library(g, lib, body, err, cap))
        goto fail;
    if (lib->nfns == 0) {
        snprintf(err, cap, "ERR No functions registered");
        goto fail;
    }
    for (size_t i = 0; i < lib->nfns; i++)
        lib->fns[i].lib = lib;
    if ((f = collision(set, lib, old)) != NULL) {
        snprintf(err, cap, "ERR Function %s already exists", f->name);
        goto fail;
    }
    *out = lib;
    return 0;
fail:
    lib_free(g, lib);
    return GOBLIN_EINVAL;
}

int goblin__lib_commit(struct goblin__lua *g, struct goblin__libset *set,
                       struct goblin__lib *lib)
{
    struct goblin__lib *old = goblin__lib_find(set, lib->name,
                                               strlen(lib->name));
    int rc;

    if (old != NULL)
        goblin__lib_unlink(set, old);
    if ((rc = goblin__lib_link(set, lib)) != 0) {
        if (old != NULL)
            goblin__lib_link(set, old);
        lib_free(g, lib);
        return rc;
    }
    lib_free(g, old);
    return 0;
}

void goblin__lib_discard(struct goblin__lua *g, struct goblin__lib *lib)
{
    lib_free(g, lib);
}

/* ---- FCALL ---- */

void goblin__fcall(struct goblin__lua *g, goblin_session *s, int argc,
                   const struct goblin_slice *argv, bool ro,
                   struct goblin_sink *sink)
{
    lua_State *L = g->fn.L;
    struct goblin_script_run run = {0};
    struct goblin__fn *f = goblin__fn_find(&g->libs, argv[1].ptr,
                                         argv[1].len);
    int64_t numkeys;
    int rc;

    if (f == NULL) {
        goblin__lua_reply_error(sink, "ERR Function not found");
        return;
    }
    if (goblin__lua_numkeys(argc, argv, "ERR Bad number of keys provided",
                            sink, &numkeys) != 0)
        return;
    run.flags = f->flags | (ro ? GOBLIN_SCRIPT_RO : 0);
    run.resp = 2;
    if (goblin_script_begin(s, &run, sink) != 0)
        return;
    goblin__vm_push_handler(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, f->ref);
    goblin__lua_push_strings(L, argv + 3, (size_t)numkeys);
    goblin__lua_push_strings(L, argv + 3 + numkeys,
                             (size_t)(argc - 3 - numkeys));
    g->run = &run;
    g->funcname = f->name;
    g->running_argc = argc;
    g->running_argv = argv;
    goblin__script_hook_start(g, &g->fn);
    goblin__vm_bound(&g->fn, true);
    rc = lua_pcall(L, 2, 1, -4);
    goblin__vm_bound(&g->fn, false);
    goblin__script_hook_stop(g, &g->fn);
    g->run = NULL;
    g->running_argv = NULL;
    goblin_script_end(&run);
    if (rc == 0)
        goblin__lua_reply(L, s, run.resp, sink);
    else
        goblin__lua_run_error(L, s, f->name, sink);
    lua_pop(L, 1); /* the handler */
    goblin__vm_after_run(&g->fn, rc);
}
