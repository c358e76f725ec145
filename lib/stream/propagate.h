/* propagate.h - the write stream inside libgoblin (goblin/stream.h is
 * its public face): the pending unit, the hooks commands call, and the
 * run wrapper dispatch takes when a consumer is registered.
 *
 * A unit collects ops (one command each, RESP array bytes, with the
 * database it applies to) while a top-level command runs; when that
 * command returns, the unit is framed per class of consumer (SELECT,
 * MULTI/EXEC) and delivered. Ops appended outside any command (active
 * expiry, served blocked clients) are delivered by goblin__stream_flush
 * from the cron and the serving code.
 *
 * Every hook starts with the test of eng->stream_on, so a server with no
 * consumer pays one predictable branch per call site.
 */
#ifndef GOBLIN_PROPAGATE_H
#define GOBLIN_PROPAGATE_H

#include <stdbool.h>
#include <stdint.h>

#include "commands/command.h"
#include "engine/session.h"
#include "goblin/buf.h"
#include "goblin/stream.h"

#define GOBLIN__STREAM_MAX_CONSUMERS 16

struct goblin__stream_consumer {
    goblin_stream_fn *fn; /* NULL: removed, compacted after delivery */
    void *ctx;
    uint32_t id;
    uint8_t cls;
};

struct goblin__stream {
    struct goblin__stream_consumer c[GOBLIN__STREAM_MAX_CONSUMERS];
    int nc;
    int ncls[2];   /* live consumers per class */
    uint32_t next_id;
    uint64_t offset;
    int seldb[2];  /* per class; -1: SELECT before the next op */
    bool follow;
    bool delivering;
    bool lost;     /* an op could not be buffered: the unit is lost */
    int depth;     /* nested goblin__run calls under the wrapper */
    bool own_done; /* the running command went out (or must not) */
    /* Ops: each an int32 db, a uint32 length, then the bytes. */
    struct goblin_buf ops;
    size_t nops;
    struct goblin_buf out;
};

/* The run wrapper: goblin__run calls it instead of running directly
 * while eng->stream_on. */
void goblin__stream_run(goblin__exec *x, int argc,
                        const struct goblin_slice *argv);

/* The same wrapper around a request that is not run from argv (a typed
 * SBE request): run(ctx) runs it as the command x->cmd, and its effect
 * goes out as argv's would (lib/sbe/argv_form.c builds argv). argc 0:
 * the request has no argv form; a change it makes marks the unit lost. */
void goblin__stream_run_as(goblin__exec *x, int argc,
                           const struct goblin_slice *argv,
                           void (*run)(void *ctx), void *ctx);

/* What goblin__run does without the stream (dispatch.c). */
void goblin__run_command(goblin__exec *x, int argc,
                         const struct goblin_slice *argv);

/* Appends one op (argc arguments) for database db to the pending unit. */
void goblin__stream_op(goblin_engine *eng, int db, int argc,
                       const struct goblin_slice *argv);

/* Delivers the pending unit, if any. */
void goblin__stream_deliver(goblin_engine *eng);

/* Frees the stream (engine close). */
void goblin__stream_free(goblin_engine *eng);

/* The database number of store st (its slot), or -1. */
int goblin__stream_db_of(const goblin_engine *eng, const goblin_store *st);

/* The command x runs goes out as argv instead of as it was sent (Redis's
 * rewriteClientCommandVector / alsoPropagate; call once per op). Outside
 * a command (a blocked client served later) it is an op of its own. */
void goblin__propagate_as_slow(goblin__exec *x, int argc,
                               const struct goblin_slice *argv);
static inline void goblin__propagate_as(goblin__exec *x, int argc,
                                        const struct goblin_slice *argv)
{
    if (__builtin_expect(x->eng->stream_on, 0))
        goblin__propagate_as_slow(x, argc, argv);
}

/* The command x runs goes out as nothing of its own: it sent its ops
 * itself (or changed nothing), whatever the dirty counter says. */
void goblin__propagate_none_slow(goblin__exec *x);
static inline void goblin__propagate_none(goblin__exec *x)
{
    if (__builtin_expect(x->eng->stream_on, 0))
        goblin__propagate_none_slow(x);
}

/* A pop goes out as "name key" or, count >= 0, "name key count": the
 * blocking and multi-key pops, with the key they served. */
void goblin__propagate_pop_slow(goblin__exec *x, const char *name,
                                struct goblin_slice key, int64_t count);
static inline void goblin__propagate_pop(goblin__exec *x, const char *name,
                                         struct goblin_slice key,
                                         int64_t count)
{
    if (__builtin_expect(x->eng->stream_on, 0))
        goblin__propagate_pop_slow(x, name, key, count);
}

/* A key left without a command deleting it (why: GOBLIN__GONE_*) from
 * database db. */
void goblin__stream_key_gone_slow(goblin_engine *eng, int db, int why,
                                  struct goblin_slice key);
static inline void goblin__stream_key_gone(goblin_engine *eng, int db,
                                           int why, struct goblin_slice key)
{
    if (__builtin_expect(eng->stream_on, 0))
        goblin__stream_key_gone_slow(eng, db, why, key);
}

/* Delivers ops appended outside a command (cron, served clients). */
static inline void goblin__stream_flush(goblin_engine *eng)
{
    if (__builtin_expect(eng->stream_on, 0) && eng->stream->depth == 0)
        goblin__stream_deliver(eng);
}

#endif
