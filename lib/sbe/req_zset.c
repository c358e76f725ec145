/* req_zset.c - SBE requests that add, read and remove sorted-set members
 * and ranges: ZADD (options as bits), ZINCRBY, ZSCORE, ZMSCORE, ZRANK,
 * ZREVRANK, ZREM, ZCARD, ZCOUNT, ZLEXCOUNT, ZRANGE, ZRANGEBYSCORE,
 * ZRANGEBYLEX, the three ZRANGESTORE forms and ZREMRANGEBY*.
 *
 * Scores and bounds arrive as doubles and go to the store as they are.
 * A NaN, which RESP cannot even spell, is refused with the text RESP
 * gives an unparsable number in the same place. Score bounds are always
 * min (lower) and max (upper), whatever the order asked (docs/sbe.md).
 * Replies and texts are commands/cmd_zset.c's and cmd_zrange.c's. */
#include <math.h>
#include <string.h>

#include "goblin/zset.h"
#include "request.h"

#define ERR_NOTFLOAT "ERR value is not a valid float"
#define ERR_MINMAX_FLOAT "ERR min or max is not a float"
#define ERR_MINMAX_LEX "ERR min or max not valid string range item"
#define ERR_LIMIT                                                             \
    "ERR syntax error, LIMIT is only supported in combination with either "  \
    "BYSCORE or BYLEX"
#define ERR_LEX_SCORES                                                        \
    "ERR syntax error, WITHSCORES not supported in combination with BYLEX"

/* ZADD's checks in Redis's order; replies and returns false. */
static bool zadd_check(struct goblin__sbe_req *r, unsigned flags, size_t n)
{
    unsigned f = flags & ~GOBLIN_SBE_ZADD_FLAGS_INCR;

    if (flags & ~GOBLIN_SBE_ZADD_FLAGS_MASK) {
        goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);
        return false;
    }
    if (n == 0) {
        goblin__sbe_arity(r, "zadd");
        return false;
    }
    if ((f & GOBLIN_ZADD_NX) && (f & GOBLIN_ZADD_XX)) {
        goblin__reply_error(&r->x, "ERR XX and NX options at the same time "
                                   "are not compatible");
        return false;
    }
    if (__builtin_popcount(f & (GOBLIN_ZADD_NX | GOBLIN_ZADD_GT |
                                GOBLIN_ZADD_LT)) > 1) {
        goblin__reply_error(&r->x, "ERR GT, LT, and/or NX options at the "
                                   "same time are not compatible");
        return false;
    }
    if ((flags & GOBLIN_SBE_ZADD_FLAGS_INCR) && n > 1) {
        goblin__reply_error(&r->x, "ERR INCR option supports a single "
                                   "increment-element pair");
        return false;
    }
    return true;
}

static void incr_reply(struct goblin__sbe_req *r, int rc, double score)
{
    if (rc == 1)
        goblin__reply_double(&r->x, score);
    else if (rc == 0)
        goblin__reply_null(&r->x);
    else
        goblin__reply_code(&r->x, rc == GOBLIN_EINVAL ? GOBLIN_ENOTFLOAT : rc);
}

void goblin__sbe_zadd(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zadd v;
    struct goblin_sbe_zadd_members e;
    struct goblin_zpair *pairs;
    double score = 0;
    unsigned flags;
    size_t n = 0;

    if (!goblin__sbe_decoded(r, goblin_sbe_zadd_decode(&v, r->m)))
        return;
    flags = goblin_sbe_zadd_flags(&v);
    if (!zadd_check(r, flags, v.members.count) ||
        (pairs = goblin__sbe_scratch(r, v.members.count,
                                     sizeof(*pairs))) == NULL)
        return;
    for (; goblin_sbe_zadd_members_next(&v.members, &e); n++) {
        pairs[n].score = goblin_sbe_zadd_members_score(&e);
        pairs[n].member = e.member;
        if (isnan(pairs[n].score)) {
            goblin__reply_error(&r->x, ERR_NOTFLOAT);
            return;
        }
    }
    if (flags & GOBLIN_SBE_ZADD_FLAGS_INCR) {
        int rc = goblin_zset_incr(r->x.st, v.key,
                                  flags & ~GOBLIN_SBE_ZADD_FLAGS_INCR,
                                  pairs[0].member, pairs[0].score, &score);

        incr_reply(r, rc, score);
        return;
    }
    goblin__sbe_count(r, goblin_zset_add_pairs(r->x.st, v.key, flags, pairs,
                                               n));
}

void goblin__sbe_zincrby(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zincrby v;
    double incr, score = 0;
    int rc;

    if (!goblin__sbe_decoded(r, goblin_sbe_zincrby_decode(&v, r->m)))
        return;
    incr = goblin_sbe_zincrby_increment(&v);
    if (isnan(incr)) {
        goblin__reply_error(&r->x, ERR_NOTFLOAT);
        return;
    }
    rc = goblin_zset_incr(r->x.st, v.key, 0, v.member, incr, &score);
    incr_reply(r, rc, score);
}

void goblin__sbe_zscore(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zscore v;
    double score = 0;
    int rc;

    if (!goblin__sbe_decoded(r, goblin_sbe_zscore_decode(&v, r->m)))
        return;
    rc = goblin_zset_score(r->x.st, v.key, v.member, &score);
    if (rc == 1)
        goblin__reply_double(&r->x, score);
    else if (rc == 0)
        goblin__reply_null(&r->x);
    else
        goblin__reply_code(&r->x, rc);
}

void goblin__sbe_zmscore(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zmscore v;
    struct goblin_slice *members;
    double *scores;
    bool *present;
    int64_t rc;
    size_t n, i;

    if (!goblin__sbe_decoded(r, goblin_sbe_zmscore_decode(&v, r->m)))
        return;
    if (v.members.count == 0) {
        goblin__sbe_arity(r, "zmscore");
        return;
    }
    n = v.members.count;
    members = goblin__sbe_scratch(r, n, sizeof(*members) + sizeof(double) +
                                            sizeof(bool));
    if (members == NULL)
        return;
    scores = (double *)(members + n);
    present = (bool *)(scores + n);
    for (i = 0; goblin_sbe_rt_entry_next(&v.members, 1, members + i); i++)
        ;
    rc = goblin_zset_mscore(r->x.st, v.key, members, n, scores);
    if (rc < 0) {
        goblin__reply_code(&r->x, (int)rc);
        return;
    }
    for (i = 0; i < n; i++)
        present[i] = !isnan(scores[i]);
    if (goblin__sbe_out(r) != NULL)
        goblin__sbe_reply_doubles(goblin__sbe_out(r), scores, present, n);
}

static void rank(struct goblin__sbe_req *r, struct goblin_slice key,
                 struct goblin_slice member, int rev)
{
    int64_t rk = 0;
    int rc = goblin_zset_rank(r->x.st, key, member, rev, &rk, NULL);

    if (rc < 0)
        goblin__reply_code(&r->x, rc);
    else if (rc == 0)
        goblin__reply_null(&r->x);
    else
        goblin__reply_int(&r->x, rk);
}

void goblin__sbe_zrank(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zrank v;

    if (goblin__sbe_decoded(r, goblin_sbe_zrank_decode(&v, r->m)))
        rank(r, v.key, v.member, 0);
}

void goblin__sbe_zrevrank(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zrevrank v;

    if (goblin__sbe_decoded(r, goblin_sbe_zrevrank_decode(&v, r->m)))
        rank(r, v.key, v.member, 1);
}

void goblin__sbe_zrem(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zrem v;
    struct goblin_slice *members;
    size_t n;

    if (!goblin__sbe_decoded(r, goblin_sbe_zrem_decode(&v, r->m)))
        return;
    if (v.members.count == 0) {
        goblin__sbe_arity(r, "zrem");
        return;
    }
    if ((members = goblin__sbe_gather(r, v.members, 1, &n)) != NULL)
        goblin__sbe_count(r, goblin_zset_rem(r->x.st, v.key, members, n));
}

void goblin__sbe_zcard(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zcard v;

    if (goblin__sbe_decoded(r, goblin_sbe_zcard_decode(&v, r->m)))
        goblin__sbe_count(r, goblin_zset_card(r->x.st, v.key));
}

/* ---- ranges ---- */

/* Score bounds into rg; replies and returns false for a NaN or for
 * flags outside allowed. */
static bool score_range(struct goblin__sbe_req *r, double min, double max,
                        unsigned flags, unsigned allowed,
                        struct goblin_zrange *rg)
{
    if (flags & ~allowed) {
        goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);
        return false;
    }
    if (isnan(min) || isnan(max)) {
        goblin__reply_error(&r->x, ERR_MINMAX_FLOAT);
        return false;
    }
    rg->by = GOBLIN_ZRANGE_BY_SCORE;
    rg->min = min;
    rg->max = max;
    rg->min_excl = (flags & GOBLIN_SBE_RANGE_FLAGS_MIN_EXCLUSIVE) != 0;
    rg->max_excl = (flags & GOBLIN_SBE_RANGE_FLAGS_MAX_EXCLUSIVE) != 0;
    return true;
}

static bool lex_bound(unsigned kind, struct goblin_slice v,
                      struct goblin_lex_bound *out)
{
    static const enum goblin_lex_bound_kind kinds[] = {
        GOBLIN_LEX_INCLUSIVE, GOBLIN_LEX_EXCLUSIVE, GOBLIN_LEX_MIN_INF,
        GOBLIN_LEX_PLUS_INF};

    if (!goblin_sbe_lex_bound_kind_valid(kind))
        return false;
    out->kind = kinds[kind];
    out->value = kind <= 1 ? v : (struct goblin_slice){"", 0};
    return true;
}

/* Lex bounds into rg; replies and returns false on a bad kind. */
static bool lex_range(struct goblin__sbe_req *r, unsigned min_kind,
                      struct goblin_slice min, unsigned max_kind,
                      struct goblin_slice max, struct goblin_zrange *rg)
{
    rg->by = GOBLIN_ZRANGE_BY_LEX;
    if (lex_bound(min_kind, min, &rg->lmin) &&
        lex_bound(max_kind, max, &rg->lmax))
        return true;
    goblin__reply_error(&r->x, ERR_MINMAX_LEX);
    return false;
}

/* LIMIT and direction from RangeFlags. */
static void range_walk(struct goblin_zrange *rg, unsigned flags,
                       int64_t offset, int64_t count)
{
    rg->rev = (flags & GOBLIN_SBE_RANGE_FLAGS_REV) != 0;
    rg->limit = (flags & GOBLIN_SBE_RANGE_FLAGS_HAS_LIMIT) != 0;
    rg->offset = rg->limit ? offset : 0;
    rg->count = rg->limit ? count : -1;
}

/* Walks range rg of key and replies its members (with scores). */
static void range_reply(struct goblin__sbe_req *r, struct goblin_slice key,
                        const struct goblin_zrange *rg, bool scores)
{
    struct goblin_zset_iter it;
    struct goblin__scored *v;
    int64_t n = goblin_zset_range(r->x.st, key, rg, &it);
    size_t i;

    if (n < 0) {
        goblin__reply_code(&r->x, (int)n);
        return;
    }
    if (n > GOBLIN_SBE_GROUP_MAX) {
        goblin__reply_error(&r->x, "ERR result too large for one SBE array "
                                   "reply");
        return;
    }
    if ((v = goblin__sbe_scratch(r, (size_t)n, sizeof(*v))) == NULL)
        return;
    for (i = 0; i < (size_t)n; i++)
        if (goblin_zset_next(&it, &v[i].member, &v[i].score) != 1)
            break;
    goblin__sbe_reply_members(r, v, i, scores);
}

void goblin__sbe_zrange(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zrange v;
    struct goblin_zrange rg;

    if (!goblin__sbe_decoded(r, goblin_sbe_zrange_decode(&v, r->m)))
        return;
    memset(&rg, 0, sizeof(rg));
    rg.by = GOBLIN_ZRANGE_BY_RANK;
    rg.start = goblin_sbe_zrange_start(&v);
    rg.stop = goblin_sbe_zrange_stop(&v);
    rg.rev = goblin_sbe_zrange_rev(&v) != 0;
    rg.count = -1;
    range_reply(r, v.key, &rg, goblin_sbe_zrange_with_scores(&v) != 0);
}

#define SCORE_FLAGS                                                           \
    (GOBLIN_SBE_RANGE_FLAGS_MIN_EXCLUSIVE |                                   \
     GOBLIN_SBE_RANGE_FLAGS_MAX_EXCLUSIVE)

void goblin__sbe_zrangebyscore(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zrangebyscore v;
    struct goblin_zrange rg;
    unsigned flags;

    if (!goblin__sbe_decoded(r, goblin_sbe_zrangebyscore_decode(&v, r->m)))
        return;
    memset(&rg, 0, sizeof(rg));
    flags = goblin_sbe_zrangebyscore_flags(&v);
    if (!score_range(r, goblin_sbe_zrangebyscore_min(&v),
                     goblin_sbe_zrangebyscore_max(&v), flags,
                     GOBLIN_SBE_RANGE_FLAGS_MASK, &rg))
        return;
    range_walk(&rg, flags, goblin_sbe_zrangebyscore_offset(&v),
               goblin_sbe_zrangebyscore_count(&v));
    range_reply(r, v.key, &rg, flags & GOBLIN_SBE_RANGE_FLAGS_WITH_SCORES);
}

void goblin__sbe_zrangebylex(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zrangebylex v;
    struct goblin_zrange rg;
    unsigned flags;

    if (!goblin__sbe_decoded(r, goblin_sbe_zrangebylex_decode(&v, r->m)))
        return;
    memset(&rg, 0, sizeof(rg));
    flags = goblin_sbe_zrangebylex_flags(&v);
    if (flags & SCORE_FLAGS || flags & ~GOBLIN_SBE_RANGE_FLAGS_MASK) {
        goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);
        return;
    }
    if (flags & GOBLIN_SBE_RANGE_FLAGS_WITH_SCORES) {
        goblin__reply_error(&r->x, ERR_LEX_SCORES);
        return;
    }
    if (!lex_range(r, goblin_sbe_zrangebylex_min_kind(&v), v.min,
                   goblin_sbe_zrangebylex_max_kind(&v), v.max, &rg))
        return;
    range_walk(&rg, flags, goblin_sbe_zrangebylex_offset(&v),
               goblin_sbe_zrangebylex_count(&v));
    range_reply(r, v.key, &rg, false);
}

static void store_reply(struct goblin__sbe_req *r, struct goblin_slice dst,
                        struct goblin_slice src,
                        const struct goblin_zrange *rg)
{
    goblin__sbe_count(r, goblin_zset_range_store(r->x.st, dst, src, rg));
}

void goblin__sbe_zrangestore(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zrangestore v;
    struct goblin_zrange rg;
    unsigned flags;

    if (!goblin__sbe_decoded(r, goblin_sbe_zrangestore_decode(&v, r->m)))
        return;
    flags = goblin_sbe_zrangestore_flags(&v);
    if (flags & ~(unsigned)GOBLIN_SBE_RANGE_FLAGS_REV &
        ~(unsigned)GOBLIN_SBE_RANGE_FLAGS_HAS_LIMIT) {
        goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);
        return;
    }
    if (flags & GOBLIN_SBE_RANGE_FLAGS_HAS_LIMIT) {
        goblin__reply_error(&r->x, ERR_LIMIT);
        return;
    }
    memset(&rg, 0, sizeof(rg));
    rg.by = GOBLIN_ZRANGE_BY_RANK;
    rg.start = goblin_sbe_zrangestore_start(&v);
    rg.stop = goblin_sbe_zrangestore_stop(&v);
    rg.count = -1;
    rg.rev = (flags & GOBLIN_SBE_RANGE_FLAGS_REV) != 0;
    store_reply(r, v.destination, v.source, &rg);
}

void goblin__sbe_zrangestorebyscore(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zrangestorebyscore v;
    struct goblin_zrange rg;
    unsigned flags;

    if (!goblin__sbe_decoded(r,
                             goblin_sbe_zrangestorebyscore_decode(&v, r->m)))
        return;
    memset(&rg, 0, sizeof(rg));
    flags = goblin_sbe_zrangestorebyscore_flags(&v);
    if (!score_range(r, goblin_sbe_zrangestorebyscore_min(&v),
                     goblin_sbe_zrangestorebyscore_max(&v), flags,
                     GOBLIN_SBE_RANGE_FLAGS_MASK &
                         ~(unsigned)GOBLIN_SBE_RANGE_FLAGS_WITH_SCORES,
                     &rg))
        return;
    range_walk(&rg, flags, goblin_sbe_zrangestorebyscore_offset(&v),
               goblin_sbe_zrangestorebyscore_count(&v));
    store_reply(r, v.destination, v.source, &rg);
}

void goblin__sbe_zrangestorebylex(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zrangestorebylex v;
    struct goblin_zrange rg;
    unsigned flags;

    if (!goblin__sbe_decoded(r, goblin_sbe_zrangestorebylex_decode(&v, r->m)))
        return;
    memset(&rg, 0, sizeof(rg));
    flags = goblin_sbe_zrangestorebylex_flags(&v);
    if (flags & ~(unsigned)(GOBLIN_SBE_RANGE_FLAGS_REV |
                            GOBLIN_SBE_RANGE_FLAGS_HAS_LIMIT)) {
        goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);
        return;
    }
    if (!lex_range(r, goblin_sbe_zrangestorebylex_min_kind(&v), v.min,
                   goblin_sbe_zrangestorebylex_max_kind(&v), v.max, &rg))
        return;
    range_walk(&rg, flags, goblin_sbe_zrangestorebylex_offset(&v),
               goblin_sbe_zrangestorebylex_count(&v));
    store_reply(r, v.destination, v.source, &rg);
}

void goblin__sbe_zcount(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zcount v;
    struct goblin_zrange rg;

    if (!goblin__sbe_decoded(r, goblin_sbe_zcount_decode(&v, r->m)))
        return;
    memset(&rg, 0, sizeof(rg));
    if (score_range(r, goblin_sbe_zcount_min(&v), goblin_sbe_zcount_max(&v),
                    goblin_sbe_zcount_flags(&v), SCORE_FLAGS, &rg))
        goblin__sbe_count(r, goblin_zset_count(r->x.st, v.key, &rg));
}

void goblin__sbe_zlexcount(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zlexcount v;
    struct goblin_zrange rg;

    if (!goblin__sbe_decoded(r, goblin_sbe_zlexcount_decode(&v, r->m)))
        return;
    memset(&rg, 0, sizeof(rg));
    if (lex_range(r, goblin_sbe_zlexcount_min_kind(&v), v.min,
                  goblin_sbe_zlexcount_max_kind(&v), v.max, &rg))
        goblin__sbe_count(r, goblin_zset_count(r->x.st, v.key, &rg));
}

void goblin__sbe_zremrangebyrank(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zremrangebyrank v;
    struct goblin_zrange rg;

    if (!goblin__sbe_decoded(r, goblin_sbe_zremrangebyrank_decode(&v, r->m)))
        return;
    memset(&rg, 0, sizeof(rg));
    rg.by = GOBLIN_ZRANGE_BY_RANK;
    rg.start = goblin_sbe_zremrangebyrank_start(&v);
    rg.stop = goblin_sbe_zremrangebyrank_stop(&v);
    goblin__sbe_count(r, goblin_zset_rem_range(r->x.st, v.key, &rg));
}

void goblin__sbe_zremrangebyscore(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zremrangebyscore v;
    struct goblin_zrange rg;

    if (!goblin__sbe_decoded(r,
                             goblin_sbe_zremrangebyscore_decode(&v, r->m)))
        return;
    memset(&rg, 0, sizeof(rg));
    if (score_range(r, goblin_sbe_zremrangebyscore_min(&v),
                    goblin_sbe_zremrangebyscore_max(&v),
                    goblin_sbe_zremrangebyscore_flags(&v), SCORE_FLAGS, &rg))
        goblin__sbe_count(r, goblin_zset_rem_range(r->x.st, v.key, &rg));
}

void goblin__sbe_zremrangebylex(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zremrangebylex v;
    struct goblin_zrange rg;

    if (!goblin__sbe_decoded(r, goblin_sbe_zremrangebylex_decode(&v, r->m)))
        return;
    memset(&rg, 0, sizeof(rg));
    if (lex_range(r, goblin_sbe_zremrangebylex_min_kind(&v), v.min,
                  goblin_sbe_zremrangebylex_max_kind(&v), v.max, &rg))
        goblin__sbe_count(r, goblin_zset_rem_range(r->x.st, v.key, &rg));
}
