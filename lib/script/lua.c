/* lua.c - libgoblin-script's entry: the state an engine's scripting keeps
 * (script.h), attached through goblin_engine_scripting, and the routing
 * of each scripting command to its file.
 */
#include <stdlib.h>
#include <string.h>

#include "goblin/lua.h"
#include "script.h"

static void lua_command(void *ctx, goblin_session *s, int argc,
                        const struct goblin_slice *argv,
                        struct goblin_sink *sink)
{
    struct goblin__lua *g = ctx;

    goblin__eval_command(g, s, argc, argv, sink);
}

static size_t lua_memory(void *ctx)
{
    struct goblin__lua *g = ctx;

    return g->eval.used;
}

static size_t lua_cached(void *ctx)
{
    struct goblin__lua *g = ctx;

    return g->nscripts;
}

static void lua_close_all(void *ctx)
{
    struct goblin__lua *g = ctx;

    goblin__vm_close(&g->eval);
    free(g->argv);
    free(g->numtext);
    goblin_buf_free(&g->reply);
    goblin_buf_free(&g->scratch);
    free(g);
}

static const struct goblin_scripting lua_ops = {
    lua_command, lua_memory, lua_cached, lua_close_all,
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
    if (goblin__vm_open(g, &g->eval) != 0) {
        goblin__vm_close(&g->eval);
        free(g);
        return GOBLIN_ENOMEM;
    }
    /* The vm's allocator state lives in g, where it stays. */
    goblin_engine_scripting(eng, &lua_ops, g);
    return 0;
}
