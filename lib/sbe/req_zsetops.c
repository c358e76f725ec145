/* req_zsetops.c - SBE requests over whole sorted sets: ZPOPMIN, ZPOPMAX,
 * ZRANDMEMBER, ZSCAN, ZUNION, ZINTER, ZDIFF, their STORE forms and
 * ZINTERCARD. Each decodes its frame into the arguments of the command's
 * execution (commands/exec.h), which RESP's handler calls too.
 *
 * ZPOP* always answer a ScoredArrayReply (RESP3 answers a flat pair when
 * no count is given; the members and scores are the same). */
#include <math.h>
#include <string.h>

#include "commands/exec.h"
#include "goblin/zset.h"
#include "request.h"

_Static_assert(GOBLIN_SBE_ZADD_FLAGS_NX == GOBLIN_ZADD_NX &&
                   GOBLIN_SBE_ZADD_FLAGS_XX == GOBLIN_ZADD_XX &&
                   GOBLIN_SBE_ZADD_FLAGS_GT == GOBLIN_ZADD_GT &&
                   GOBLIN_SBE_ZADD_FLAGS_LT == GOBLIN_ZADD_LT &&
                   GOBLIN_SBE_ZADD_FLAGS_CH == GOBLIN_ZADD_CH,
               "the schema's ZADD bits are the store's");

/* A pop whose reply could not be sent would lose members: it is refused
 * before anything is popped. */
static void zpop(struct goblin__sbe_req *r, struct goblin_slice key,
                 unsigned flags, int64_t count, int max)
{
    bool has_count = (flags & GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT) != 0;

    if (flags & ~(unsigned)GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT)
        goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);
    else if (has_count && count < 0)
        goblin__reply_error(&r->x, GOBLIN__ERR_POSITIVE);
    else if (has_count && count > GOBLIN_SBE_GROUP_MAX &&
             goblin_zset_card(r->x.st, key) > GOBLIN_SBE_GROUP_MAX)
        goblin__reply_error(&r->x, "ERR result too large for one SBE array "
                                   "reply");
    else
        goblin__exec_zpop(&r->x, key, max, has_count, count);
}

void goblin__sbe_zpopmin(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zpopmin v;

    if (GOBLIN__SBE_DECODED(zpopmin, v))
        zpop(r, v.key, goblin_sbe_zpopmin_flags(&v),
             goblin_sbe_zpopmin_count(&v), 0);
}

void goblin__sbe_zpopmax(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zpopmax v;

    if (GOBLIN__SBE_DECODED(zpopmax, v))
        zpop(r, v.key, goblin_sbe_zpopmax_flags(&v),
             goblin_sbe_zpopmax_count(&v), 1);
}

void goblin__sbe_zrandmember(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zrandmember v;
    int64_t count;
    bool has_count, scores;

    if (!GOBLIN__SBE_DECODED(zrandmember, v))
        return;
    count = goblin_sbe_zrandmember_count(&v);
    if (goblin__sbe_count_flags(r, goblin_sbe_zrandmember_flags(&v), count,
                                &has_count, &scores))
        goblin__exec_zrandmember(&r->x, v.key, has_count, count, scores);
}

void goblin__sbe_zscan(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zscan v;
    struct goblin_scan_options o = {{NULL, 0}, GOBLIN_TYPE_NONE, 0};
    bool known;

    if (GOBLIN__SBE_DECODED(zscan, v) &&
        goblin__scan_key(&r->x, v.key, GOBLIN_TYPE_ZSET) &&
        goblin__sbe_scan_options(r, goblin_sbe_zscan_flags(&v),
                                 goblin_sbe_zscan_count(&v), v.pattern, NULL,
                                 &o, &known))
        goblin__exec_zscan(&r->x, v.key, goblin_sbe_zscan_cursor(&v), &o);
}

/* ---- union, intersection, difference ---- */

/* The keys (and weights) of group g into a, checked as Redis checks
 * them before the options; replies and returns false on an error. */
static bool combine_keys(struct goblin__sbe_req *r, struct goblin_sbe_group g,
                         bool weighted, struct goblin__zcombine *a)
{
    struct goblin_slice key, *keys;
    const uint8_t *block;
    double *weights;
    size_t i;

    keys = goblin__sbe_scratch(r, g.count, sizeof(*keys) + sizeof(double));
    if (keys == NULL)
        return false;
    weights = (double *)(keys + g.count);
    for (i = 0; (block = goblin_sbe_rt_entry_next(&g, 1, &key)); i++) {
        keys[i] = key;
        weights[i] = weighted ? goblin_sbe_rd_f64(block) : 1;
    }
    a->keys = keys;
    a->nkeys = i;
    a->weights = weighted ? weights : NULL;
    return goblin__zkeys_check(&r->x, keys, i);
}

/* Aggregate and flags; weights (NaN ones refused, as text RESP cannot
 * parse) when asked. */
static bool combine_options(struct goblin__sbe_req *r, unsigned agg,
                            unsigned flags, unsigned allowed,
                            struct goblin__zcombine *a)
{
    size_t i;

    if (!goblin_sbe_aggregate_valid(agg) || (flags & ~allowed)) {
        goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);
        return false;
    }
    a->agg = (enum goblin_zset_aggregate)agg;
    a->withscores = (flags & GOBLIN_SBE_SET_OP_FLAGS_WITH_SCORES) != 0;
    for (i = 0; a->weights != NULL && i < a->nkeys; i++) {
        if (isnan(a->weights[i])) {
            goblin__reply_error(&r->x, GOBLIN__ERR_WEIGHT);
            return false;
        }
    }
    return true;
}

/* ZUNION[STORE] and ZINTER[STORE] share a layout (the STORE forms have a
 * destination and no WITHSCORES). */
#define COMBINE_REQUEST(name, OP, DST, ALLOWED)                               \
    void goblin__sbe_##name(struct goblin__sbe_req *r)                        \
    {                                                                         \
        struct goblin_sbe_##name v;                                           \
        struct goblin__zcombine a;                                            \
        unsigned flags;                                                       \
                                                                              \
        if (!GOBLIN__SBE_DECODED(name, v))                                    \
            return;                                                           \
        memset(&a, 0, sizeof(a));                                             \
        a.op = OP;                                                            \
        a.dst = DST;                                                          \
        flags = goblin_sbe_##name##_flags(&v);                                \
        if (combine_keys(r, v.keys,                                           \
                         flags & GOBLIN_SBE_SET_OP_FLAGS_HAS_WEIGHTS, &a) &&  \
            combine_options(r, goblin_sbe_##name##_aggregate(&v), flags,      \
                            ALLOWED, &a))                                     \
            goblin__exec_zcombine(&r->x, &a);                                 \
    }

COMBINE_REQUEST(zunionstore, GOBLIN_ZSET_UNION, &v.destination,
                GOBLIN_SBE_SET_OP_FLAGS_HAS_WEIGHTS)
COMBINE_REQUEST(zinterstore, GOBLIN_ZSET_INTER, &v.destination,
                GOBLIN_SBE_SET_OP_FLAGS_HAS_WEIGHTS)
COMBINE_REQUEST(zunion, GOBLIN_ZSET_UNION, NULL, GOBLIN_SBE_SET_OP_FLAGS_MASK)
COMBINE_REQUEST(zinter, GOBLIN_ZSET_INTER, NULL, GOBLIN_SBE_SET_OP_FLAGS_MASK)

void goblin__sbe_zdiffstore(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zdiffstore v;
    struct goblin__zcombine a;

    if (!GOBLIN__SBE_DECODED(zdiffstore, v))
        return;
    memset(&a, 0, sizeof(a));
    a.op = GOBLIN_ZSET_DIFF;
    a.dst = &v.destination;
    if (combine_keys(r, v.keys, false, &a))
        goblin__exec_zcombine(&r->x, &a);
}

void goblin__sbe_zdiff(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zdiff v;
    struct goblin__zcombine a;

    if (!GOBLIN__SBE_DECODED(zdiff, v))
        return;
    memset(&a, 0, sizeof(a));
    a.op = GOBLIN_ZSET_DIFF;
    if (combine_keys(r, v.keys, false, &a) &&
        combine_options(r, 0, goblin_sbe_zdiff_flags(&v),
                        GOBLIN_SBE_SET_OP_FLAGS_WITH_SCORES, &a))
        goblin__exec_zcombine(&r->x, &a);
}

void goblin__sbe_zintercard(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zintercard v;
    struct goblin__zcombine a;
    int64_t limit;

    if (!GOBLIN__SBE_DECODED(zintercard, v))
        return;
    memset(&a, 0, sizeof(a));
    if (!combine_keys(r, v.keys, false, &a))
        return;
    limit = goblin_sbe_zintercard_limit(&v);
    if (limit < 0)
        goblin__reply_error(&r->x, GOBLIN__ERR_LIMIT_NEGATIVE);
    else
        goblin__exec_zintercard(&r->x, a.keys, a.nkeys, limit);
}
