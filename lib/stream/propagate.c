/* propagate.c - which commands go out, and in what form (goblin/stream.h
 * lists the rewrites): the run wrapper dispatch takes while a consumer
 * is registered, the rewrites of commands whose effect is not a function
 * of their arguments, and the DEL of keys that expire or are evicted.
 *
 * A command goes out when it is a write (or may-replicate) command, the
 * server's dirty counter moved while it ran, and it did not already say
 * how it goes out (goblin__propagate_as) or that it does not (EXEC and
 * the scripting calls, whose inner commands go out instead). The
 * rewrites that the state after the command decides (an absolute
 * deadline, the result of a float increment) are made here, reading the
 * store; the ones only the command knows (which member SPOP took, which
 * key a blocking pop served) are made by the command.
 */
#include <string.h>
#include <strings.h>

#include "commands/handlers.h"
#include "commands/respond.h"
#include "goblin/hash.h"
#include "goblin/keys.h"
#include "goblin/numtext.h"
#include "goblin/str.h"
#include "goblin/zset.h"
#include "propagate.h"
#include "store/store.h"

#define S(lit) ((struct goblin_slice){(lit), sizeof(lit) - 1})

static void op(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    goblin__stream_op(x->eng, goblin__stream_db_of(x->eng, x->st), argc,
                      argv);
}

/* key's deadline as "PEXPIREAT key ms" into v (num holds the digits), or
 * DEL key when the key is gone (its time had passed). Returns argc. */
static int deadline_form(goblin__exec *x, struct goblin_slice key,
                         struct goblin_slice *v, char *num)
{
    int64_t at = goblin_key_pexpiretime(x->st, key);

    v[1] = key;
    if (at == -2) {
        v[0] = S("DEL");
        return 2;
    }
    if (at == -1) {
        v[0] = S("PERSIST");
        return 2;
    }
    v[0] = S("PEXPIREAT");
    v[2] = (struct goblin_slice){num, goblin_int64_format(num, at)};
    return 3;
}

/* Whether any of argv[from..argc) is one of the words (NULL-ended). */
static bool has_word(int argc, const struct goblin_slice *argv, int from,
                     const char *const *words)
{
    for (int i = from; i < argc; i++)
        for (const char *const *w = words; *w != NULL; w++)
            if (goblin__arg_is(argv[i], *w))
                return true;
    return false;
}

/* SET k v with a relative or EXAT time, SETEX, PSETEX: SET k v PXAT ms. */
static void set_pxat(goblin__exec *x, struct goblin_slice key,
                     struct goblin_slice value)
{
    char num[24];
    struct goblin_slice v[5] = {S("SET"), key, value, S("PXAT"), {num, 0}};
    int64_t at = goblin_key_pexpiretime(x->st, key);

    if (at == -2) {
        v[0] = S("DEL");
        op(x, 2, v);
        return;
    }
    if (at == -1) {
        op(x, 3, v);
        return;
    }
    v[4].len = goblin_int64_format(num, at);
    op(x, 5, v);
}

/* SET with any time goes out as SET k v PXAT ms, and without GET (Redis
 * 7.0's setCommand). */
static void rewrite_set(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    static const char *const timed[] = {"ex", "px", "exat", "pxat", NULL};
    struct goblin_slice v[8];
    int i, n = 0;

    if (has_word(argc, argv, 3, timed)) {
        set_pxat(x, argv[1], argv[2]);
        return;
    }
    if (argc > 8) {
        op(x, argc, argv);
        return;
    }
    for (i = 0; i < argc; i++)
        if (i < 3 || !goblin__arg_is(argv[i], "get"))
            v[n++] = argv[i];
    op(x, n, v);
}

/* GEOADD goes out as the ZADD it made: zadd key [options] score member
 * ..., the scores read back (Redis 7.0's geoaddCommand). */
static void rewrite_geoadd(goblin__exec *x, int argc,
                           const struct goblin_slice *argv)
{
    int i = 2, n, k, j;
    struct goblin_slice *v;
    char *num;
    size_t vsize, nsize;

    while (i < argc && (goblin__arg_is(argv[i], "nx") ||
                        goblin__arg_is(argv[i], "xx") ||
                        goblin__arg_is(argv[i], "ch")))
        i++;
    n = (argc - i) / 3;
    vsize = (size_t)(i + 2 * n) * sizeof(*v);
    nsize = (size_t)n * 32;
    v = goblin__alloc(x->eng->st, vsize);
    num = goblin__alloc(x->eng->st, nsize);
    if (v == NULL || num == NULL) {
        op(x, argc, argv);
        goto done;
    }
    v[0] = S("zadd");
    for (k = 1; k < i; k++)
        v[k] = argv[k];
    for (j = 0; j < n; j++) {
        struct goblin_slice m = argv[i + 3 * j + 2];
        double score = 0;

        goblin_zset_score(x->st, argv[1], m, &score);
        v[k] = (struct goblin_slice){num + 32 * j,
                                     goblin_double_format(num + 32 * j,
                                                          score)};
        v[k + 1] = m;
        k += 2;
    }
    op(x, k, v);
done:
    if (v != NULL)
        goblin__free(x->eng->st, v, vsize);
    if (num != NULL)
        goblin__free(x->eng->st, num, nsize);
}

static void rewrite_getex(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    struct goblin_slice v[3];
    char num[24];

    op(x, deadline_form(x, argv[1], v, num), v);
    (void)argc;
}

static void rewrite_expire(goblin__exec *x, int argc,
                           const struct goblin_slice *argv)
{
    struct goblin_slice v[3];
    char num[24];
    int n = deadline_form(x, argv[1], v, num);

    /* PEXPIREAT goes out as sent unless it deleted the key. */
    if (x->cmd->fn == goblin__cmd_pexpireat && n != 2)
        op(x, argc, argv);
    else
        op(x, n, v);
}

static void rewrite_incrbyfloat(goblin__exec *x, int argc,
                                const struct goblin_slice *argv)
{
    struct goblin_slice v[4] = {S("SET"), argv[1], {NULL, 0}, S("KEEPTTL")};

    if (goblin_str_get(x->st, argv[1], &v[2]) != 1) {
        op(x, argc, argv);
        return;
    }
    op(x, 4, v);
}

static void rewrite_hincrbyfloat(goblin__exec *x, int argc,
                                 const struct goblin_slice *argv)
{
    struct goblin_slice v[4] = {S("HSET"), argv[1], argv[2], {NULL, 0}};

    if (goblin_hash_get(x->st, argv[1], argv[2], &v[3]) != 1) {
        op(x, argc, argv);
        return;
    }
    op(x, 4, v);
}

/* RESTORE k ttl payload [REPLACE] [ABSTTL] ...: a relative ttl goes out
 * as the deadline with ABSTTL (Redis 7.0's restoreCommand). */
static void rewrite_restore(goblin__exec *x, int argc,
                            const struct goblin_slice *argv)
{
    static const char *const abs[] = {"absttl", NULL};
    struct goblin_slice v[16];
    char num[24];
    int64_t at = goblin_key_pexpiretime(x->st, argv[1]);

    if (at < 0 || argc >= 15 || has_word(argc, argv, 4, abs)) {
        op(x, argc, argv);
        return;
    }
    memcpy(v, argv, (size_t)argc * sizeof(*v));
    v[2] = (struct goblin_slice){num, goblin_int64_format(num, at)};
    v[argc] = S("ABSTTL");
    op(x, argc + 1, v);
}

/* The blocking forms that know their keys from their arguments. */
static void rewrite_bmove(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    struct goblin_slice v[5] = {S("LMOVE"), argv[1], argv[2]};

    if (x->cmd->fn == goblin__cmd_brpoplpush) {
        v[0] = S("RPOPLPUSH");
        op(x, 3, v);
        return;
    }
    v[3] = argv[3];
    v[4] = argv[4];
    op(x, 5, v);
    (void)argc;
}

/* EXEC and the scripting calls: their commands went out instead. */
static bool goes_out_inside(const struct goblin__command *c)
{
    if (c->fn == goblin__cmd_exec)
        return true;
    return c->fn == goblin__cmd_scripting &&
           (strncmp(c->name, "eval", 4) == 0 ||
            strncmp(c->name, "fcall", 5) == 0);
}

static void own_op(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    goblin__handler *fn = x->cmd->fn;

    if (fn == goblin__cmd_set)
        rewrite_set(x, argc, argv);
    else if (fn == goblin__cmd_setex || fn == goblin__cmd_psetex)
        set_pxat(x, argv[1], argv[3]);
    else if (fn == goblin__cmd_getex)
        rewrite_getex(x, argc, argv);
    else if (fn == goblin__cmd_expire || fn == goblin__cmd_pexpire ||
             fn == goblin__cmd_expireat || fn == goblin__cmd_pexpireat)
        rewrite_expire(x, argc, argv);
    else if (fn == goblin__cmd_incrbyfloat)
        rewrite_incrbyfloat(x, argc, argv);
    else if (fn == goblin__cmd_hincrbyfloat)
        rewrite_hincrbyfloat(x, argc, argv);
    else if (fn == goblin__cmd_getset)
        op(x, 3, (struct goblin_slice[]){S("SET"), argv[1], argv[2]});
    else if (fn == goblin__cmd_getdel)
        op(x, 2, (struct goblin_slice[]){S("DEL"), argv[1]});
    else if (fn == goblin__cmd_brpoplpush || fn == goblin__cmd_blmove)
        rewrite_bmove(x, argc, argv);
    else if (fn == goblin__cmd_geoadd)
        rewrite_geoadd(x, argc, argv);
    else if (fn == goblin__cmd_restore)
        rewrite_restore(x, argc, argv);
    else
        op(x, argc, argv);
}

/* The wrapper around one command: run(ctx) runs it; what it changed goes
 * out as argv (argc 0: the request has no words, so a change it made
 * cannot go out, and the unit is marked lost for the consumers). */
static void wrap(goblin__exec *x, int argc, const struct goblin_slice *argv,
                 void (*run)(void *ctx), void *ctx)
{
    goblin_engine *eng = x->eng;
    struct goblin__stream *s = eng->stream;
    bool saved = s->own_done;
    uint64_t d0;

    if (s->depth == 0)
        goblin__stream_deliver(eng); /* evictions before the command */
    d0 = eng->st->dirty;
    s->own_done = false;
    s->depth++;
    run(ctx);
    s->depth--;
    if (!s->own_done && eng->st->dirty != d0 && x->cmd != NULL &&
        (x->cmd->flags & (CMD_WRITE | CMD_MAY_REPLICATE)) &&
        !goes_out_inside(x->cmd)) {
        if (argc > 0)
            own_op(x, argc, argv);
        else
            s->lost = true;
    }
    s->own_done = saved;
    if (s->depth == 0)
        goblin__stream_deliver(eng);
}

struct resp_run {
    goblin__exec *x;
    int argc;
    const struct goblin_slice *argv;
};

static void run_resp(void *ctx)
{
    struct resp_run *r = ctx;

    goblin__run_command(r->x, r->argc, r->argv);
}

void goblin__stream_run(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    struct resp_run r = {x, argc, argv};

    wrap(x, argc, argv, run_resp, &r);
}

void goblin__stream_run_as(goblin__exec *x, int argc,
                           const struct goblin_slice *argv,
                           void (*run)(void *ctx), void *ctx)
{
    wrap(x, argc, argv, run, ctx);
}

void goblin__propagate_as_slow(goblin__exec *x, int argc,
                               const struct goblin_slice *argv)
{
    struct goblin__stream *s = x->eng->stream;

    op(x, argc, argv);
    if (s->depth > 0)
        s->own_done = true;
}

void goblin__propagate_none_slow(goblin__exec *x)
{
    struct goblin__stream *s = x->eng->stream;

    if (s->depth > 0)
        s->own_done = true;
}

void goblin__propagate_pop_slow(goblin__exec *x, const char *name,
                                struct goblin_slice key, int64_t count)
{
    char num[24];
    struct goblin_slice v[3] = {{name, strlen(name)}, key, {num, 0}};

    if (count < 0) {
        goblin__propagate_as_slow(x, 2, v);
        return;
    }
    v[2].len = goblin_int64_format(num, count);
    goblin__propagate_as_slow(x, 3, v);
}

void goblin__stream_key_gone_slow(goblin_engine *eng, int db, int why,
                                  struct goblin_slice key)
{
    struct goblin_slice v[2] = {S("DEL"), key};

    (void)why;
    goblin__stream_op(eng, db, 2, v);
}
