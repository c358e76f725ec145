/* fn_libs.c - the function libraries in the engine's files (fn_libs.h).
 * The libraries themselves are the scripting library's; the engine only
 * asks for their code when it writes a file and hands each code back when
 * it loads one.
 *
 * An engine without scripting refuses a file that holds libraries, as
 * redis-server refuses an RDB file with a library it cannot load: loading
 * the keys alone would lose the libraries at the next save.
 */
#include <stdio.h>
#include <string.h>

#include "fn_libs.h"
#include "goblin/script.h"
#include "store/store.h"

int goblin__fnlibs_save(goblin_engine *eng, struct goblin__fnlibs *f)
{
    const struct goblin_function_libs *ops = eng->fn_libs;
    struct goblin_slice *v;
    size_t n;

    memset(f, 0, sizeof(*f));
    if (ops == NULL || (n = ops->count(eng->fn_libs_ctx)) == 0)
        return 0;
    if ((v = goblin__alloc(eng->st, goblin__mul(n, sizeof(*v)))) == NULL)
        return GOBLIN_ENOMEM;
    for (size_t i = 0; i < n; i++)
        v[i] = ops->code(eng->fn_libs_ctx, i);
    f->codes = v;
    f->n = n;
    return 0;
}

void goblin__fnlibs_done(goblin_engine *eng, struct goblin__fnlibs *f)
{
    if (f->codes != NULL)
        goblin__free(eng->st, (void *)f->codes, f->n * sizeof(*f->codes));
    memset(f, 0, sizeof(*f));
}

static int add(void *ctx, struct goblin_slice code, char *err, size_t cap)
{
    goblin_engine *eng = ctx;

    return eng->fn_libs->load(eng->fn_libs_ctx, code, err, cap);
}

static int refuse(void *ctx, struct goblin_slice code, char *err,
                  size_t cap)
{
    (void)ctx;
    (void)code;
    snprintf(err, cap, "%s", GOBLIN__FNLIBS_NO_SCRIPTING);
    return GOBLIN_EINVAL;
}

void goblin__fnlibs_load(goblin_engine *eng, struct goblin__fnlibs *f)
{
    memset(f, 0, sizeof(*f));
    f->add = eng->fn_libs != NULL ? add : refuse;
    f->ctx = eng;
}

void goblin__fnlibs_flush(goblin_engine *eng)
{
    if (eng->fn_libs != NULL)
        eng->fn_libs->flush(eng->fn_libs_ctx);
}
