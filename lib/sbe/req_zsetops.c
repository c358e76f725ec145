/* req_zsetops.c - SBE requests over whole sorted sets: ZPOPMIN, ZPOPMAX,
 * ZRANDMEMBER, ZSCAN, ZUNION, ZINTER, ZDIFF, their STORE forms and
 * ZINTERCARD; replies and texts as commands/cmd_zsetops.c gives them.
 *
 * ZPOP* always answer a ScoredArrayReply (RESP3 answers a flat pair when
 * no count is given; the members and scores are the same). Members the
 * store hands out only for the length of a call (popped, combined) are
 * copied before the reply is written. */
#include <math.h>
#include <string.h>

#include "goblin/zset.h"
#include "request.h"

_Static_assert(GOBLIN_SBE_ZADD_FLAGS_NX == GOBLIN_ZADD_NX &&
                   GOBLIN_SBE_ZADD_FLAGS_XX == GOBLIN_ZADD_XX &&
                   GOBLIN_SBE_ZADD_FLAGS_GT == GOBLIN_ZADD_GT &&
                   GOBLIN_SBE_ZADD_FLAGS_LT == GOBLIN_ZADD_LT &&
                   GOBLIN_SBE_ZADD_FLAGS_CH == GOBLIN_ZADD_CH,
               "the schema's ZADD bits are the store's");

static void zpop(struct goblin__sbe_req *r, struct goblin_slice key,
                 unsigned flags, int64_t count, int max)
{
    struct goblin__sbe_members c;
    int64_t rc;

    if (flags & ~(unsigned)GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT) {
        goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);
        return;
    }
    if (!(flags & GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT))
        count = 1;
    if (count < 0) {
        goblin__reply_error(&r->x, "ERR value is out of range, must be "
                                   "positive");
        return;
    }
    if (count > GOBLIN_SBE_GROUP_MAX && goblin_zset_card(r->x.st, key) >
                                            GOBLIN_SBE_GROUP_MAX) {
        goblin__reply_error(&r->x, "ERR result too large for one SBE array "
                                   "reply");
        return;
    }
    goblin__sbe_members_start(&c, r, true);
    if (count == 0) /* nothing to pop, but the key's type still counts */
        rc = goblin_zset_card(r->x.st, key);
    else
        rc = goblin_zset_pop(r->x.st, key, max, count, goblin__sbe_keep, &c);
    if (rc < 0)
        goblin__reply_code(&r->x, (int)rc);
    else
        goblin__sbe_reply_members(r, goblin__sbe_kept(&c), c.n, true);
}

void goblin__sbe_zpopmin(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zpopmin v;

    if (goblin__sbe_decoded(r, goblin_sbe_zpopmin_decode(&v, r->m)))
        zpop(r, v.key, goblin_sbe_zpopmin_flags(&v),
             goblin_sbe_zpopmin_count(&v), 0);
}

void goblin__sbe_zpopmax(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zpopmax v;

    if (goblin__sbe_decoded(r, goblin_sbe_zpopmax_decode(&v, r->m)))
        zpop(r, v.key, goblin_sbe_zpopmax_flags(&v),
             goblin_sbe_zpopmax_count(&v), 1);
}

static bool randmember_count_ok(struct goblin__sbe_req *r, int64_t count,
                                bool scores)
{
    if (count == INT64_MIN) {
        goblin__reply_error(&r->x, "ERR value is out of range, value must "
                                   "between -9223372036854775807 and "
                                   "9223372036854775807");
        return false;
    }
    if (scores && (count < -INT64_MAX / 2 || count > INT64_MAX / 2)) {
        goblin__reply_error(&r->x, "ERR value is out of range");
        return false;
    }
    return true;
}

void goblin__sbe_zrandmember(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zrandmember v;
    struct goblin__sbe_members c;
    unsigned flags;
    bool counted, scores;
    int64_t rc;

    if (!goblin__sbe_decoded(r, goblin_sbe_zrandmember_decode(&v, r->m)))
        return;
    flags = goblin_sbe_zrandmember_flags(&v);
    counted = flags & GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT;
    scores = flags & GOBLIN_SBE_COUNT_FLAGS_WITH_SCORES;
    if ((flags & ~GOBLIN_SBE_COUNT_FLAGS_MASK) || (scores && !counted)) {
        goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);
        return;
    }
    if (counted && !randmember_count_ok(r, goblin_sbe_zrandmember_count(&v),
                                        scores))
        return;
    goblin__sbe_members_start(&c, r, false);
    rc = goblin_zset_randmember(r->x.st, v.key,
                                counted ? goblin_sbe_zrandmember_count(&v) : 1,
                                goblin__sbe_keep, &c);
    if (rc < 0)
        goblin__reply_code(&r->x, (int)rc);
    else if (!counted && c.n == 0)
        goblin__reply_null(&r->x);
    else if (!counted)
        goblin__reply_slice(&r->x, goblin__sbe_kept(&c)[0].member);
    else
        goblin__sbe_reply_members(r, goblin__sbe_kept(&c), c.n, scores);
}

void goblin__sbe_zscan(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zscan v;
    struct goblin_scan_options o = {{NULL, 0}, GOBLIN_TYPE_NONE, 0};
    struct goblin__sbe_members c;
    enum goblin_type t;
    uint64_t next = 0;
    unsigned flags;
    int64_t rc;
    bool known;

    if (!goblin__sbe_decoded(r, goblin_sbe_zscan_decode(&v, r->m)))
        return;
    t = goblin_key_type(r->x.st, v.key);
    if (t != GOBLIN_TYPE_ZSET && t != GOBLIN_TYPE_NONE) {
        goblin__reply_code(&r->x, GOBLIN_EWRONGTYPE);
        return;
    }
    flags = goblin_sbe_zscan_flags(&v);
    if (t == GOBLIN_TYPE_ZSET &&
        !goblin__sbe_scan_options(r, flags, goblin_sbe_zscan_count(&v),
                                  v.pattern, NULL, &o, &known))
        return;
    goblin__sbe_members_start(&c, r, false);
    rc = goblin_zset_scan(r->x.st, v.key, goblin_sbe_zscan_cursor(&v),
                          o.count, o.match, goblin__sbe_keep, &c, &next);
    if (rc < 0)
        goblin__reply_code(&r->x, (int)rc);
    else if (goblin__sbe_out(r) != NULL)
        goblin__sbe_reply_scored_scan(goblin__sbe_out(r), next,
                                      goblin__sbe_kept(&c), c.n);
}

/* ---- union, intersection, difference ---- */

struct combine {
    enum goblin_zset_op op;
    enum goblin_zset_aggregate agg;
    struct goblin_slice *keys;
    double *weights; /* NULL: all 1 */
    size_t nkeys;
};

/* The keys (and weights) of group g, each key's type checked first as
 * Redis does; replies and returns false on an error. */
static bool combine_keys(struct goblin__sbe_req *r, struct goblin_sbe_group g,
                         bool weighted, const char *name, struct combine *a)
{
    struct goblin_slice key;
    const uint8_t *block;
    enum goblin_type t;
    size_t i;

    if (g.count == 0) {
        goblin__reply_errorf(&r->x, "ERR at least 1 input key is needed for "
                                    "'%s' command", name);
        return false;
    }
    a->keys = goblin__sbe_scratch(r, g.count,
                                  sizeof(*a->keys) + sizeof(double));
    if (a->keys == NULL)
        return false;
    a->weights = weighted ? (double *)(a->keys + g.count) : NULL;
    for (i = 0; (block = goblin_sbe_rt_entry_next(&g, 1, &key)); i++) {
        a->keys[i] = key;
        if (weighted)
            a->weights[i] = goblin_sbe_rd_f64(block);
    }
    a->nkeys = i;
    for (i = 0; i < a->nkeys; i++) {
        t = goblin_key_type(r->x.st, a->keys[i]);
        if (t != GOBLIN_TYPE_NONE && t != GOBLIN_TYPE_ZSET) {
            goblin__reply_code(&r->x, GOBLIN_EWRONGTYPE);
            return false;
        }
    }
    return true;
}

/* Aggregate and flags; weights (NaN ones refused) when asked. */
static bool combine_options(struct goblin__sbe_req *r, unsigned agg,
                            unsigned flags, unsigned allowed,
                            struct combine *a)
{
    size_t i;

    if (!goblin_sbe_aggregate_valid(agg) || (flags & ~allowed)) {
        goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);
        return false;
    }
    a->agg = (enum goblin_zset_aggregate)agg;
    for (i = 0; a->weights != NULL && i < a->nkeys; i++) {
        if (isnan(a->weights[i])) {
            goblin__reply_error(&r->x, "ERR weight value is not a float");
            return false;
        }
    }
    return true;
}

/* ZUNIONSTORE and ZINTERSTORE share a layout. */
#define STORE_REQUEST(name, OP)                                               \
    void goblin__sbe_##name(struct goblin__sbe_req *r)                        \
    {                                                                         \
        struct goblin_sbe_##name v;                                           \
        struct combine a = {OP, GOBLIN_ZAGG_SUM, NULL, NULL, 0};              \
        unsigned flags;                                                       \
                                                                              \
        if (!goblin__sbe_decoded(r, goblin_sbe_##name##_decode(&v, r->m)))    \
            return;                                                           \
        flags = goblin_sbe_##name##_flags(&v);                                \
        if (!combine_keys(r, v.keys,                                          \
                          flags & GOBLIN_SBE_SET_OP_FLAGS_HAS_WEIGHTS, #name, \
                          &a) ||                                              \
            !combine_options(r, goblin_sbe_##name##_aggregate(&v), flags,     \
                             GOBLIN_SBE_SET_OP_FLAGS_HAS_WEIGHTS, &a))        \
            return;                                                           \
        goblin__sbe_count(r, goblin_zset_combine_store(                       \
                                 r->x.st, v.destination, a.op, a.keys,        \
                                 a.nkeys, a.weights, a.agg));                 \
    }

STORE_REQUEST(zunionstore, GOBLIN_ZSET_UNION)
STORE_REQUEST(zinterstore, GOBLIN_ZSET_INTER)

void goblin__sbe_zdiffstore(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zdiffstore v;
    struct combine a = {GOBLIN_ZSET_DIFF, GOBLIN_ZAGG_SUM, NULL, NULL, 0};

    if (!goblin__sbe_decoded(r, goblin_sbe_zdiffstore_decode(&v, r->m)) ||
        !combine_keys(r, v.keys, false, "zdiffstore", &a))
        return;
    goblin__sbe_count(r, goblin_zset_combine_store(r->x.st, v.destination,
                                                   a.op, a.keys, a.nkeys,
                                                   NULL, a.agg));
}

/* The result of ZUNION, ZINTER or ZDIFF, copied, then replied. The keys
 * and weights live in the scratch area the copies also use, so they are
 * moved aside first. */
static void combine_reply(struct goblin__sbe_req *r, struct combine *a,
                          bool scores)
{
    struct goblin__sbe_members c;
    struct goblin_buf keep = {0};
    size_t bytes = a->nkeys * (sizeof(*a->keys) + sizeof(double));
    int64_t n;

    keep.alloc = r->ss->scratch.alloc;
    if (goblin_buf_append(&keep, a->keys, bytes) != 0) {
        goblin__reply_code(&r->x, GOBLIN_ENOMEM);
        return;
    }
    a->keys = (struct goblin_slice *)(void *)keep.data;
    if (a->weights != NULL)
        a->weights = (double *)(a->keys + a->nkeys);
    goblin__sbe_members_start(&c, r, true);
    n = goblin_zset_combine(r->x.st, a->op, a->keys, a->nkeys, a->weights,
                            a->agg, goblin__sbe_keep, &c);
    if (n < 0)
        goblin__reply_code(&r->x, (int)n);
    else
        goblin__sbe_reply_members(r, goblin__sbe_kept(&c), c.n, scores);
    goblin_buf_free(&keep);
}

#define COMBINE_REQUEST(name, OP)                                             \
    void goblin__sbe_##name(struct goblin__sbe_req *r)                        \
    {                                                                         \
        struct goblin_sbe_##name v;                                           \
        struct combine a = {OP, GOBLIN_ZAGG_SUM, NULL, NULL, 0};              \
        unsigned flags;                                                       \
                                                                              \
        if (!goblin__sbe_decoded(r, goblin_sbe_##name##_decode(&v, r->m)))    \
            return;                                                           \
        flags = goblin_sbe_##name##_flags(&v);                                \
        if (!combine_keys(r, v.keys,                                          \
                          flags & GOBLIN_SBE_SET_OP_FLAGS_HAS_WEIGHTS, #name, \
                          &a) ||                                              \
            !combine_options(r, goblin_sbe_##name##_aggregate(&v), flags,     \
                             GOBLIN_SBE_SET_OP_FLAGS_MASK, &a))               \
            return;                                                           \
        combine_reply(r, &a, flags & GOBLIN_SBE_SET_OP_FLAGS_WITH_SCORES);    \
    }

COMBINE_REQUEST(zunion, GOBLIN_ZSET_UNION)
COMBINE_REQUEST(zinter, GOBLIN_ZSET_INTER)

void goblin__sbe_zdiff(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zdiff v;
    struct combine a = {GOBLIN_ZSET_DIFF, GOBLIN_ZAGG_SUM, NULL, NULL, 0};
    unsigned flags;

    if (!goblin__sbe_decoded(r, goblin_sbe_zdiff_decode(&v, r->m)))
        return;
    flags = goblin_sbe_zdiff_flags(&v);
    if (!combine_keys(r, v.keys, false, "zdiff", &a) ||
        !combine_options(r, 0, flags, GOBLIN_SBE_SET_OP_FLAGS_WITH_SCORES,
                         &a))
        return;
    combine_reply(r, &a, flags & GOBLIN_SBE_SET_OP_FLAGS_WITH_SCORES);
}

void goblin__sbe_zintercard(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zintercard v;
    struct combine a = {GOBLIN_ZSET_INTER, GOBLIN_ZAGG_SUM, NULL, NULL, 0};
    int64_t limit;

    if (!goblin__sbe_decoded(r, goblin_sbe_zintercard_decode(&v, r->m)) ||
        !combine_keys(r, v.keys, false, "zintercard", &a))
        return;
    limit = goblin_sbe_zintercard_limit(&v);
    if (limit < 0) {
        goblin__reply_error(&r->x, "ERR LIMIT can't be negative");
        return;
    }
    goblin__sbe_count(r, goblin_zset_intercard(r->x.st, a.keys, a.nkeys,
                                               limit));
}
