/* cmd_script.c - the scripting commands (EVAL, EVALSHA, EVAL_RO,
 * EVALSHA_RO, FCALL, FCALL_RO, SCRIPT and FUNCTION): handed whole to the
 * scripting library attached to the engine (goblin/script.h), or refused
 * with one clear text when the build has none.
 *
 * The library replies through a sink of ours in front of the command's,
 * which counts each error it writes as Redis counts an error reply: in
 * INFO errorstats and total_error_replies, and the command as failed;
 * an error a command inside the script replied already (the library says
 * so first, goblin_script_error_counted) counts as the failure only.
 */
#include <stddef.h>

#include "engine/session.h"
#include "goblin/script.h"
#include "handlers.h"
#include "respond.h"

struct counting_sink {
    struct goblin_sink sink;
    struct goblin_sink *to;
    goblin__exec *x;
};

static struct counting_sink *of(struct goblin_sink *s)
{
    return (struct counting_sink *)(void *)((char *)s -
                                            offsetof(struct counting_sink,
                                                     sink));
}

static struct goblin_sink *to(struct goblin_sink *s)
{
    return of(s)->to;
}

static void op_error(struct goblin_sink *s, const char *p, size_t n)
{
    goblin__exec *x = of(s)->x;

    if (x->eng->script_err_counted)
        x->eng->script_err_counted = false;
    else
        goblin__errstat_count(x->eng, p, n);
    x->failed = true;
    to(s)->ops->error(to(s), p, n);
}

static void op_status(struct goblin_sink *s, const char *p, size_t n)
{
    to(s)->ops->status(to(s), p, n);
}

static void op_integer(struct goblin_sink *s, int64_t v)
{
    to(s)->ops->integer(to(s), v);
}

static void op_dbl(struct goblin_sink *s, double v)
{
    to(s)->ops->dbl(to(s), v);
}

static void op_bulk(struct goblin_sink *s, const void *p, size_t n)
{
    to(s)->ops->bulk(to(s), p, n);
}

static void op_null(struct goblin_sink *s)
{
    to(s)->ops->null(to(s));
}

static void op_null_array(struct goblin_sink *s)
{
    to(s)->ops->null_array(to(s));
}

static void op_array(struct goblin_sink *s, size_t n)
{
    to(s)->ops->array(to(s), n);
}

static void op_map(struct goblin_sink *s, size_t n)
{
    to(s)->ops->map(to(s), n);
}

static void op_set(struct goblin_sink *s, size_t n)
{
    to(s)->ops->set(to(s), n);
}

static void op_boolean(struct goblin_sink *s, int v)
{
    to(s)->ops->boolean(to(s), v);
}

static void op_verbatim(struct goblin_sink *s, const char fmt[3],
                        const void *p, size_t n)
{
    to(s)->ops->verbatim(to(s), fmt, p, n);
}

static void op_push(struct goblin_sink *s, size_t n)
{
    to(s)->ops->push(to(s), n);
}

static void op_bulk_int64(struct goblin_sink *s, int64_t v)
{
    goblin_sink_bulk_int64(to(s), v);
}

static void op_bulk_dbl(struct goblin_sink *s, const void *p, size_t n,
                        double score)
{
    goblin_sink_bulk_dbl(to(s), p, n, score);
}

static void op_reserve(struct goblin_sink *s, size_t bytes)
{
    goblin_sink_reserve(to(s), bytes);
}

static void op_bignum(struct goblin_sink *s, const char *p, size_t n)
{
    goblin_sink_bignum(to(s), p, n);
}

static size_t op_defer(struct goblin_sink *s)
{
    return to(s)->ops->defer(to(s));
}

static void op_set_deferred(struct goblin_sink *s, size_t token,
                            enum goblin_aggregate kind, size_t n)
{
    to(s)->ops->set_deferred(to(s), token, kind, n);
}

#define COUNTING_OPS                                                         \
    .status = op_status, .error = op_error, .integer = op_integer,           \
    .dbl = op_dbl, .bulk = op_bulk, .null = op_null,                         \
    .null_array = op_null_array, .array = op_array, .map = op_map,          \
    .set = op_set, .boolean = op_boolean, .verbatim = op_verbatim,          \
    .push = op_push, .bulk_int64 = op_bulk_int64, .bulk_dbl = op_bulk_dbl,  \
    .reserve = op_reserve, .bignum = op_bignum

/* Deferred headers only where the sink behind has them. */
static const struct goblin_sink_ops counting_ops = {COUNTING_OPS};
static const struct goblin_sink_ops counting_ops_defer = {
    COUNTING_OPS, .defer = op_defer, .set_deferred = op_set_deferred};

void goblin__cmd_scripting(goblin__exec *x, int argc,
                           const struct goblin_slice *argv)
{
    const struct goblin_scripting *ops = x->eng->scripting;
    struct counting_sink c = {{NULL}, x->sink, x};

    if (ops == NULL) {
        goblin__reply_error(x, "ERR scripting is not available in this "
                               "build (Goblin was built without Lua)");
        return;
    }
    c.sink.ops = x->sink->ops->defer != NULL ? &counting_ops_defer
                                              : &counting_ops;
    x->eng->script_err_counted = false;
    ops->command(x->eng->scripting_ctx, x->sess, argc, argv, &c.sink);
    x->eng->script_err_counted = false;
}
