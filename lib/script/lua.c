/* lua.c - libgoblin-script's entry: the state an engine's scripting keeps
 * (script.h), attached through goblin_engine_scripting, and the routing
 * of each scripting command to its file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "goblin/lua.h"
#include "script.h"

static void lua_command(void *ctx, goblin_session *s, int argc,
                        const struct goblin_slice *argv,
                        struct goblin_sink *sink)
{
    struct goblin__lua *g = ctx;
    const char *name = argv[0].ptr;

    if (argv[0].len == 5 && strncasecmp(name, "fcall", 5) == 0)
        goblin__fcall(g, s, argc, argv, false, sink);
    else if (argv[0].len == 8 && strncasecmp(name, "fcall_ro", 8) == 0)
        goblin__fcall(g, s, argc, argv, true, sink);
    else if (argv[0].len == 8 && strncasecmp(name, "function", 8) == 0)
        goblin__function_command(g, s, argc, argv, sink);
    else
        goblin__eval_command(g, s, argc, argv, sink);
}

static size_t lua_memory(void *ctx)
{
    struct goblin__lua *g = ctx;

    return g->eval.used + g->fn.used;
}

static size_t lua_cached(void *ctx)
{
    struct goblin__lua *g = ctx;

    return g->nscripts;
}

static void lua_close_all(void *ctx)
{
    struct goblin__lua *g = ctx;

    goblin__lib_flush(g, &g->libs);
    goblin__vm_close(&g->fn);
    goblin__vm_close(&g->eval);
    goblin__sha_cache_clear(&g->scripts);
    free(g->argv);
    free(g->numtext);
    goblin_buf_free(&g->reply);
    goblin_buf_free(&g->scratch);
    free(g);
}

static void lua_info(void *ctx, struct goblin_scripting_info *out)
{
    struct goblin__lua *g = ctx;

    out->vm_eval = g->eval.used;
    out->vm_functions = g->fn.used;
    out->scripts_eval = g->scripts_bytes;
    out->functions = goblin__lib_memory(&g->libs);
    out->cached_scripts = g->nscripts;
    out->nfunctions = g->libs.nfunctions;
    out->nlibraries = g->libs.n;
}

static const struct goblin_scripting lua_ops = {
    lua_command, lua_memory, lua_cached, lua_close_all, lua_info,
};

/* ---- the libraries the engine's files carry ---- */

static size_t libs_count(void *ctx)
{
    struct goblin__lua *g = ctx;

    return g->libs.n;
}

static struct goblin_slice libs_code(void *ctx, size_t i)
{
    struct goblin__lua *g = ctx;

    return (struct goblin_slice){g->libs.v[i]->code, g->libs.v[i]->code_len};
}

static int libs_load(void *ctx, struct goblin_slice code, char *err,
                     size_t cap)
{
    struct goblin__lua *g = ctx;
    struct goblin__lib *lib;
    int rc = goblin__lib_create(g, &g->libs, code, false, &lib, err, cap);

    if (rc == 0 && (rc = goblin__lib_commit(g, &g->libs, lib)) != 0)
        snprintf(err, cap, "ERR Out of memory");
    return rc;
}

static void libs_flush(void *ctx)
{
    struct goblin__lua *g = ctx;

    goblin__lib_flush(g, &g->libs);
}

static const struct goblin_function_libs lib_ops = {
    libs_count, libs_code, libs_load, libs_flush,
};

int goblin_lua_attach(goblin_engine *eng)
{
    struct goblin__lua *g = calloc(1, sizeof(*g));

    if (g == NULL)
        return GOBLIN_ENOMEM;
    g->eng = eng;
    /* lrand48's state before any seed: what Redis's math.random starts
     * from (its rand.c X0, X1, X2). */
    g->rand48 = 0x1234ABCD330Eull;
    if (goblin__vm_open(g, &g->eval) != 0 || goblin__fn_vm_open(g) != 0) {
        goblin__vm_close(&g->fn);
        goblin__vm_close(&g->eval);
        free(g);
        return GOBLIN_ENOMEM;
    }
    /* The vm's allocator state lives in g, where it stays. */
    goblin_engine_scripting(eng, &lua_ops, g);
    goblin_engine_function_libs(eng, &lib_ops, g);
    return 0;
}
