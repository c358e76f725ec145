/* cmd_zsetops.c - sorted-set commands over whole sets: ZPOPMIN, ZPOPMAX,
 * ZRANDMEMBER, ZUNION, ZINTER, ZDIFF (and their STORE forms), ZINTERCARD
 * and ZSCAN, with Redis 7's argument order and texts (t_zset.c).
 *
 * Results whose size is known only at the end (ZUNION, ZINTER, ZDIFF) are
 * copied into a text buffer first, then replied; popped members are
 * replied while the store visits them, after a ZCARD gave their number.
 *
 * Each command is an execution function (exec.h), which SBE's typed
 * requests call too, and a RESP handler that parses argv and calls it.
 */
#include <stdio.h>
#include <string.h>

#include "exec.h"
#include "goblin/keys.h"
#include "goblin/zset.h"
#include "notify.h"
#include "respond.h"
#include "engine/session.h"
#include "engine/text.h"

struct emit {
    goblin__exec *x;
    bool pairs; /* RESP3 [member, score] arrays */
    bool scores;
};

static int emit_member(void *ctx, struct goblin_slice m, double score)
{
    struct emit *e = ctx;

    if (e->pairs)
        goblin__reply_array(e->x, 2);
    goblin__reply_slice(e->x, m);
    if (e->scores)
        goblin__reply_double(e->x, score);
    return 0;
}

/* Without a count the reply is flat even in RESP3, as in Redis; SBE
 * (typed replies) always answers pairs, a ScoredArrayReply (docs/sbe.md).
 * The sink copies the popped members as they are visited. */
void goblin__exec_zpop(goblin__exec *x, struct goblin_slice key, int max,
                       bool has_count, int64_t count)
{
    struct emit e = {x, false, true};
    int64_t card = goblin_zset_card(x->st, key), n;

    if (card < 0) {
        goblin__reply_code(x, (int)card);
        return;
    }
    if (!has_count)
        count = 1;
    n = count < card ? count : card;
    e.pairs = (has_count || x->typed != NULL) && x->resp == 3;
    goblin__reply_array(x, (size_t)n * (e.pairs ? 1 : 2));
    if (n > 0 && goblin_zset_pop(x->st, key, max, n, emit_member, &e) > 0)
        goblin__notify_removed(x, GOBLIN__NOTIFY_ZSET,
                               max ? "zpopmax" : "zpopmin", key);
}

/* ZPOPMIN and ZPOPMAX key [count]. */
static void zpop(goblin__exec *x, int argc, const struct goblin_slice *argv,
                 int max)
{
    int64_t count = 1;

    if (argc > 3)
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
    else if (argc == 2 || goblin__arg_range(x, argv[2], 0, INT64_MAX, &count,
                                            GOBLIN__ERR_POSITIVE))
        goblin__exec_zpop(x, argv[1], max, argc == 3, count);
}

void goblin__cmd_zpopmin(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    zpop(x, argc, argv, 0);
}

void goblin__cmd_zpopmax(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    zpop(x, argc, argv, 1);
}

/* Gathers members with their scores in the session's scratch. */
struct zgather {
    goblin_session *s;
    size_t n;
};

static int gather_zpair(void *ctx, struct goblin_slice m, double score)
{
    struct zgather *g = ctx;
    struct goblin__scored *p = goblin__scratch_bytes(
        g->s, (g->n + 1) * sizeof(struct goblin__scored));

    if (p == NULL)
        return GOBLIN_ENOMEM;
    p[g->n].member = m;
    p[g->n].score = score;
    g->n++;
    return 0;
}

static struct goblin__scored *gathered(goblin__exec *x)
{
    return (void *)x->sess->scratch;
}

void goblin__exec_zrandmember(goblin__exec *x, struct goblin_slice key,
                              bool has_count, int64_t count, bool withscores)
{
    struct zgather g = {x->sess, 0};
    int64_t rc = goblin_zset_randmember(x->st, key, has_count ? count : 1,
                                        gather_zpair, &g);

    if (rc < 0)
        goblin__reply_code(x, (int)rc);
    else if (has_count)
        goblin__reply_scored(x, gathered(x), g.n, withscores);
    else if (g.n == 0)
        goblin__reply_null(x);
    else
        goblin__reply_slice(x, gathered(x)[0].member);
}

void goblin__cmd_zrandmember(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    int64_t count = 0;

    if (argc == 2 || goblin__arg_rand_count(x, argc, argv, "withscores",
                                            &count))
        goblin__exec_zrandmember(x, argv[1], argc > 2, count, argc == 4);
}

void goblin__exec_zscan(goblin__exec *x, struct goblin_slice key,
                        uint64_t cursor, const struct goblin_scan_options *o)
{
    struct zgather g = {x->sess, 0};
    uint64_t next = 0;
    int64_t rc = goblin_zset_scan(x->st, key, cursor, o->count, o->match,
                                  gather_zpair, &g, &next);

    if (rc < 0)
        goblin__reply_code(x, (int)rc);
    else
        goblin__reply_scored_scan(x, next, gathered(x), g.n);
}

void goblin__cmd_zscan(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    struct goblin_scan_options o = {{NULL, 0}, GOBLIN_TYPE_NONE, 0};
    uint64_t cursor;
    bool known;

    if (goblin__scan_cursor(x, argv[2], &cursor) &&
        goblin__scan_key(x, argv[1], GOBLIN_TYPE_ZSET) &&
        goblin__scan_options(x, argc, argv, 3, false, &o, &known))
        goblin__exec_zscan(x, argv[1], cursor, &o);
}

bool goblin__zkeys_check(goblin__exec *x, const struct goblin_slice *keys,
                         size_t n)
{
    enum goblin_type t;
    size_t i;

    if (n == 0) {
        goblin__reply_errorf(x, "ERR at least 1 input key is needed for "
                                "'%s' command",
                             x->cmd->fullname);
        return false;
    }
    /* Redis's read lookups of the sources, STORE or not; the passes
     * after this one are not counted again. */
    goblin__reads_begin(x);
    for (i = 0; i < n; i++) {
        t = goblin_key_type(x->st, keys[i]);
        if (t != GOBLIN_TYPE_NONE && t != GOBLIN_TYPE_ZSET) {
            goblin__reads_done(x);
            goblin__reply_code(x, GOBLIN_EWRONGTYPE);
            return false;
        }
    }
    goblin__reads_done(x);
    return true;
}

/* The RESP arguments of a combination, with ZINTERCARD's LIMIT. */
struct combine_args {
    struct goblin__zcombine c;
    double *weights;
    bool card_only;
    int64_t limit;
};

/* numkeys and the keys from argv[at], checked as Redis does before the
 * options; replies and returns false on an error. */
static bool combine_keys(goblin__exec *x, int argc,
                         const struct goblin_slice *argv, int at,
                         struct combine_args *a)
{
    int64_t n;

    if (!goblin__arg_int64(x, argv[at], &n, NULL))
        return false;
    if (n < 1)
        return goblin__zkeys_check(x, NULL, 0);
    if (n > argc - at - 1) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return false;
    }
    a->c.keys = argv + at + 1;
    a->c.nkeys = (size_t)n;
    return goblin__zkeys_check(x, a->c.keys, a->c.nkeys);
}

static bool combine_weights(goblin__exec *x, const struct goblin_slice *w,
                            struct combine_args *a)
{
    size_t i;

    a->weights = goblin__scratch_bytes(x->sess, a->c.nkeys * sizeof(double));
    if (a->weights == NULL) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return false;
    }
    for (i = 0; i < a->c.nkeys; i++) {
        if (goblin_double_parse(w[i].ptr, w[i].len, &a->weights[i]) != 0) {
            goblin__reply_error(x, GOBLIN__ERR_WEIGHT);
            return false;
        }
    }
    a->c.weights = a->weights;
    return true;
}

static bool combine_aggregate(goblin__exec *x, struct goblin_slice v,
                              struct combine_args *a)
{
    if (goblin__arg_is(v, "sum"))
        a->c.agg = GOBLIN_ZAGG_SUM;
    else if (goblin__arg_is(v, "min"))
        a->c.agg = GOBLIN_ZAGG_MIN;
    else if (goblin__arg_is(v, "max"))
        a->c.agg = GOBLIN_ZAGG_MAX;
    else
        return goblin__reply_error(x, GOBLIN__ERR_SYNTAX), false;
    return true;
}

/* WEIGHTS, AGGREGATE, WITHSCORES (and ZINTERCARD's LIMIT) after the keys. */
static bool combine_options(goblin__exec *x, int argc,
                            const struct goblin_slice *argv, int j,
                            struct combine_args *a)
{
    bool diff = a->c.op == GOBLIN_ZSET_DIFF;

    while (j < argc) {
        int left = argc - j;

        if (a->card_only && left >= 2 && goblin__arg_is(argv[j], "limit")) {
            if (!goblin__arg_range(x, argv[j + 1], 0, INT64_MAX, &a->limit,
                                   GOBLIN__ERR_LIMIT_NEGATIVE))
                return false;
            j += 2;
        } else if (!a->card_only && !diff && left >= (int)a->c.nkeys + 1 &&
                   goblin__arg_is(argv[j], "weights")) {
            if (!combine_weights(x, argv + j + 1, a))
                return false;
            j += 1 + (int)a->c.nkeys;
        } else if (!a->card_only && !diff && left >= 2 &&
                   goblin__arg_is(argv[j], "aggregate")) {
            if (!combine_aggregate(x, argv[j + 1], a))
                return false;
            j += 2;
        } else if (!a->card_only && a->c.dst == NULL &&
                   goblin__arg_is(argv[j], "withscores")) {
            a->c.withscores = true;
            j++;
        } else {
            goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
            return false;
        }
    }
    return true;
}

/* The result of ZUNION, ZINTER or ZDIFF, copied before it is replied. */
struct collected {
    struct goblin__text bytes;
    struct goblin__text index; /* (offset, length, score) per member */
};

struct collected_entry {
    size_t off, len;
    double score;
};

static int collect_member(void *ctx, struct goblin_slice m, double score)
{
    struct collected *c = ctx;
    struct collected_entry e = {c->bytes.len, m.len, score};

    goblin__text_add(&c->bytes, m.ptr, m.len);
    goblin__text_add(&c->index, &e, sizeof(e));
    return c->bytes.oom || c->index.oom ? GOBLIN_ENOMEM : 0;
}

static void combine_reply(goblin__exec *x, const struct goblin__zcombine *a)
{
    struct collected c;
    struct emit e = {x, a->withscores && x->resp == 3, a->withscores};
    const struct collected_entry *en;
    int64_t n;
    size_t i;

    goblin__text_init(&c.bytes, x->st);
    goblin__text_init(&c.index, x->st);
    n = goblin_zset_combine(x->st, a->op, a->keys, a->nkeys, a->weights,
                            a->agg, collect_member, &c);
    if (n < 0) {
        goblin__reply_code(x, (int)n);
    } else {
        n = (int64_t)(c.index.len / sizeof(*en));
        en = (const void *)c.index.p;
        goblin__reply_array(x, (size_t)n * (e.scores && !e.pairs ? 2 : 1));
        for (i = 0; i < (size_t)n; i++) {
            /* Only empty members when nothing was stored: no NULL + 0. */
            struct goblin_slice m = {"", en[i].len};

            if (c.bytes.p != NULL)
                m.ptr = c.bytes.p + en[i].off;
            emit_member(&e, m, en[i].score);
        }
    }
    goblin__text_free(&c.bytes);
    goblin__text_free(&c.index);
}

void goblin__exec_zcombine(goblin__exec *x, const struct goblin__zcombine *a)
{
    int64_t n;

    if (a->dst == NULL) {
        combine_reply(x, a);
        return;
    }
    static const char *const events[] = {"zunionstore", "zinterstore",
                                         "zdiffstore"};
    bool existed = goblin__notify_on(x, GOBLIN__NOTIFY_GENERIC) &&
                   goblin_key_exists(x->st, *a->dst);

    n = goblin_zset_combine_store(x->st, *a->dst, a->op, a->keys, a->nkeys,
                                  a->weights, a->agg);
    goblin__notify_stored(x, GOBLIN__NOTIFY_ZSET, events[a->op], *a->dst, n,
                          existed);
    if (n < 0)
        goblin__reply_code(x, (int)n);
    else
        goblin__reply_int(x, n);
}

static void combine(goblin__exec *x, int argc, const struct goblin_slice *argv,
                    enum goblin_zset_op op, bool store)
{
    struct combine_args a;
    int at = store ? 2 : 1;

    memset(&a, 0, sizeof(a));
    a.c.op = op;
    a.c.dst = store ? &argv[1] : NULL;
    if (combine_keys(x, argc, argv, at, &a) &&
        combine_options(x, argc, argv, at + 1 + (int)a.c.nkeys, &a))
        goblin__exec_zcombine(x, &a.c);
}

void goblin__cmd_zunionstore(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    combine(x, argc, argv, GOBLIN_ZSET_UNION, true);
}

void goblin__cmd_zinterstore(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    combine(x, argc, argv, GOBLIN_ZSET_INTER, true);
}

void goblin__cmd_zdiffstore(goblin__exec *x, int argc,
                            const struct goblin_slice *argv)
{
    combine(x, argc, argv, GOBLIN_ZSET_DIFF, true);
}

void goblin__cmd_zunion(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    combine(x, argc, argv, GOBLIN_ZSET_UNION, false);
}

void goblin__cmd_zinter(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    combine(x, argc, argv, GOBLIN_ZSET_INTER, false);
}

void goblin__cmd_zdiff(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    combine(x, argc, argv, GOBLIN_ZSET_DIFF, false);
}

void goblin__exec_zintercard(goblin__exec *x, const struct goblin_slice *keys,
                             size_t n, int64_t limit)
{
    int64_t rc = goblin_zset_intercard(x->st, keys, n, limit);

    if (rc < 0)
        goblin__reply_code(x, (int)rc);
    else
        goblin__reply_int(x, rc);
}

void goblin__cmd_zintercard(goblin__exec *x, int argc,
                            const struct goblin_slice *argv)
{
    struct combine_args a;

    memset(&a, 0, sizeof(a));
    a.c.op = GOBLIN_ZSET_INTER;
    a.card_only = true;
    if (combine_keys(x, argc, argv, 1, &a) &&
        combine_options(x, argc, argv, 2 + (int)a.c.nkeys, &a))
        goblin__exec_zintercard(x, a.c.keys, a.c.nkeys, a.limit);
}
