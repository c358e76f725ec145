/* req_zset.c - SBE requests that add, read and remove sorted-set members
 * and ranges: ZADD (options as bits), ZINCRBY, ZSCORE, ZMSCORE, ZRANK,
 * ZREVRANK, ZREM, ZCARD, ZCOUNT, ZLEXCOUNT, ZRANGE, ZRANGEBYSCORE,
 * ZRANGEBYLEX, the three ZRANGESTORE forms and ZREMRANGEBY*. Each decodes
 * its frame into the arguments of the command's execution
 * (commands/exec.h), which RESP's handler calls too.
 *
 * Scores and bounds arrive as doubles and go to the store as they are.
 * A NaN, which RESP cannot even spell, is refused with the text RESP
 * gives an unparsable number in the same place. Score bounds are always
 * min (lower) and max (upper), whatever the order asked (docs/sbe.md). */
#include <math.h>
#include <string.h>

#include "commands/exec.h"
#include "goblin/zset.h"
#include "request.h"

#define ERR_NOTFLOAT "ERR value is not a valid float"
#define ERR_MINMAX_FLOAT "ERR min or max is not a float"
#define ERR_MINMAX_LEX "ERR min or max not valid string range item"

void goblin__sbe_zadd(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zadd v;
    struct goblin_sbe_zadd_members e;
    struct goblin_zpair *pairs;
    unsigned flags;
    bool incr;
    size_t n = 0;

    if (!GOBLIN__SBE_DECODED(zadd, v))
        return;
    flags = goblin_sbe_zadd_flags(&v);
    incr = (flags & GOBLIN_SBE_ZADD_FLAGS_INCR) != 0;
    flags &= ~(unsigned)GOBLIN_SBE_ZADD_FLAGS_INCR;
    if (flags & ~GOBLIN_SBE_ZADD_FLAGS_MASK) {
        goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);
        return;
    }
    if (v.members.count == 0) {
        goblin__sbe_arity(r, "zadd");
        return;
    }
    if (!goblin__zadd_check(&r->x, flags, incr, v.members.count) ||
        (pairs = goblin__sbe_scratch(r, v.members.count,
                                     sizeof(*pairs))) == NULL)
        return;
    /* goblin_sbe_zadd_members_next without its checks (the decoder's
     * are enough); the score is the block's first field. */
    while ((e.block = goblin__sbe_next(&v.members, 1, &e.member)) != NULL) {
        pairs[n].score = goblin_sbe_zadd_members_score(&e);
        pairs[n].member = e.member;
        if (isnan(pairs[n].score)) {
            goblin__reply_error(&r->x, ERR_NOTFLOAT);
            return;
        }
        n++;
    }
    goblin__exec_zadd(&r->x, v.key, flags, incr, pairs, n);
}

void goblin__sbe_zincrby(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zincrby v;
    double incr;

    if (!GOBLIN__SBE_DECODED(zincrby, v))
        return;
    incr = goblin_sbe_zincrby_increment(&v);
    if (isnan(incr))
        goblin__reply_error(&r->x, ERR_NOTFLOAT);
    else
        goblin__exec_zincrby(&r->x, v.key, incr, v.member);
}

void goblin__sbe_zscore(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zscore v;

    if (GOBLIN__SBE_DECODED(zscore, v))
        goblin__exec_zscore(&r->x, v.key, v.member);
}

void goblin__sbe_zmscore(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zmscore v;
    struct goblin_slice *members;
    size_t n;

    if (GOBLIN__SBE_DECODED(zmscore, v) &&
        (members = goblin__sbe_args(r, v.members, 1, "zmscore", &n)) !=
            NULL)
        goblin__exec_zmscore(&r->x, v.key, members, n);
}

void goblin__sbe_zrank(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zrank v;

    if (GOBLIN__SBE_DECODED(zrank, v))
        goblin__exec_zrank(&r->x, v.key, v.member, 0, false);
}

void goblin__sbe_zrevrank(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zrevrank v;

    if (GOBLIN__SBE_DECODED(zrevrank, v))
        goblin__exec_zrank(&r->x, v.key, v.member, 1, false);
}

void goblin__sbe_zrem(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zrem v;
    struct goblin_slice *members;
    size_t n;

    if (GOBLIN__SBE_DECODED(zrem, v) &&
        (members = goblin__sbe_args(r, v.members, 1, "zrem", &n)) != NULL)
        goblin__exec_zrem(&r->x, v.key, members, n);
}

void goblin__sbe_zcard(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zcard v;

    if (GOBLIN__SBE_DECODED(zcard, v))
        goblin__exec_zcard(&r->x, v.key);
}

/* ---- ranges ---- */

#define SCORE_FLAGS                                                           \
    (GOBLIN_SBE_RANGE_FLAGS_MIN_EXCLUSIVE |                                   \
     GOBLIN_SBE_RANGE_FLAGS_MAX_EXCLUSIVE)
#define WALK_FLAGS                                                            \
    (GOBLIN_SBE_RANGE_FLAGS_REV | GOBLIN_SBE_RANGE_FLAGS_HAS_LIMIT)

/* Starts rg as a walk by `by` with RangeFlags' direction and LIMIT;
 * replies a syntax error and returns false for flags outside allowed. */
static bool range_init(struct goblin__sbe_req *r, enum goblin_zrange_by by,
                       unsigned flags, unsigned allowed, int64_t offset,
                       int64_t count, struct goblin_zrange *rg)
{
    memset(rg, 0, sizeof(*rg));
    if (flags & ~allowed) {
        goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);
        return false;
    }
    rg->by = by;
    rg->rev = (flags & GOBLIN_SBE_RANGE_FLAGS_REV) != 0;
    rg->limit = (flags & GOBLIN_SBE_RANGE_FLAGS_HAS_LIMIT) != 0;
    rg->offset = rg->limit ? offset : 0;
    rg->count = rg->limit ? count : -1;
    return goblin__zrange_check(&r->x, by, rg->limit,
                                flags & GOBLIN_SBE_RANGE_FLAGS_WITH_SCORES);
}

/* Score bounds into rg; replies and returns false for a NaN. */
static bool score_range(struct goblin__sbe_req *r, double min, double max,
                        unsigned flags, struct goblin_zrange *rg)
{
    if (isnan(min) || isnan(max)) {
        goblin__reply_error(&r->x, ERR_MINMAX_FLOAT);
        return false;
    }
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
    if (lex_bound(min_kind, min, &rg->lmin) &&
        lex_bound(max_kind, max, &rg->lmax))
        return true;
    goblin__reply_error(&r->x, ERR_MINMAX_LEX);
    return false;
}

void goblin__sbe_zrange(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zrange v;
    struct goblin_zrange rg;

    if (!GOBLIN__SBE_DECODED(zrange, v))
        return;
    range_init(r, GOBLIN_ZRANGE_BY_RANK,
               goblin_sbe_zrange_rev(&v) ? GOBLIN_SBE_RANGE_FLAGS_REV : 0,
               GOBLIN_SBE_RANGE_FLAGS_REV, 0, 0, &rg);
    rg.start = goblin_sbe_zrange_start(&v);
    rg.stop = goblin_sbe_zrange_stop(&v);
    goblin__exec_zrange(&r->x, v.key, &rg,
                        goblin_sbe_zrange_with_scores(&v) != 0);
}

void goblin__sbe_zrangebyscore(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zrangebyscore v;
    struct goblin_zrange rg;
    unsigned flags;

    if (!GOBLIN__SBE_DECODED(zrangebyscore, v))
        return;
    flags = goblin_sbe_zrangebyscore_flags(&v);
    if (range_init(r, GOBLIN_ZRANGE_BY_SCORE, flags,
                   GOBLIN_SBE_RANGE_FLAGS_MASK,
                   goblin_sbe_zrangebyscore_offset(&v),
                   goblin_sbe_zrangebyscore_count(&v), &rg) &&
        score_range(r, goblin_sbe_zrangebyscore_min(&v),
                    goblin_sbe_zrangebyscore_max(&v), flags, &rg))
        goblin__exec_zrange(&r->x, v.key, &rg,
                            flags & GOBLIN_SBE_RANGE_FLAGS_WITH_SCORES);
}

void goblin__sbe_zrangebylex(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zrangebylex v;
    struct goblin_zrange rg;
    unsigned flags;

    if (!GOBLIN__SBE_DECODED(zrangebylex, v))
        return;
    flags = goblin_sbe_zrangebylex_flags(&v);
    if (range_init(r, GOBLIN_ZRANGE_BY_LEX, flags,
                   GOBLIN_SBE_RANGE_FLAGS_MASK & ~(unsigned)SCORE_FLAGS,
                   goblin_sbe_zrangebylex_offset(&v),
                   goblin_sbe_zrangebylex_count(&v), &rg) &&
        lex_range(r, goblin_sbe_zrangebylex_min_kind(&v), v.min,
                  goblin_sbe_zrangebylex_max_kind(&v), v.max, &rg))
        goblin__exec_zrange(&r->x, v.key, &rg, false);
}

void goblin__sbe_zrangestore(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zrangestore v;
    struct goblin_zrange rg;

    if (!GOBLIN__SBE_DECODED(zrangestore, v) ||
        !range_init(r, GOBLIN_ZRANGE_BY_RANK, goblin_sbe_zrangestore_flags(&v),
                    WALK_FLAGS, 0, 0, &rg))
        return;
    rg.start = goblin_sbe_zrangestore_start(&v);
    rg.stop = goblin_sbe_zrangestore_stop(&v);
    goblin__exec_zrangestore(&r->x, v.destination, v.source, &rg);
}

void goblin__sbe_zrangestorebyscore(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zrangestorebyscore v;
    struct goblin_zrange rg;
    unsigned flags;

    if (!GOBLIN__SBE_DECODED(zrangestorebyscore, v))
        return;
    flags = goblin_sbe_zrangestorebyscore_flags(&v);
    if (range_init(r, GOBLIN_ZRANGE_BY_SCORE, flags,
                   WALK_FLAGS | SCORE_FLAGS,
                   goblin_sbe_zrangestorebyscore_offset(&v),
                   goblin_sbe_zrangestorebyscore_count(&v), &rg) &&
        score_range(r, goblin_sbe_zrangestorebyscore_min(&v),
                    goblin_sbe_zrangestorebyscore_max(&v), flags, &rg))
        goblin__exec_zrangestore(&r->x, v.destination, v.source, &rg);
}

void goblin__sbe_zrangestorebylex(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zrangestorebylex v;
    struct goblin_zrange rg;

    if (GOBLIN__SBE_DECODED(zrangestorebylex, v) &&
        range_init(r, GOBLIN_ZRANGE_BY_LEX,
                   goblin_sbe_zrangestorebylex_flags(&v), WALK_FLAGS,
                   goblin_sbe_zrangestorebylex_offset(&v),
                   goblin_sbe_zrangestorebylex_count(&v), &rg) &&
        lex_range(r, goblin_sbe_zrangestorebylex_min_kind(&v), v.min,
                  goblin_sbe_zrangestorebylex_max_kind(&v), v.max, &rg))
        goblin__exec_zrangestore(&r->x, v.destination, v.source, &rg);
}

void goblin__sbe_zcount(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zcount v;
    struct goblin_zrange rg;
    unsigned flags;

    if (!GOBLIN__SBE_DECODED(zcount, v))
        return;
    flags = goblin_sbe_zcount_flags(&v);
    if (range_init(r, GOBLIN_ZRANGE_BY_SCORE, flags, SCORE_FLAGS, 0, 0, &rg)
        && score_range(r, goblin_sbe_zcount_min(&v), goblin_sbe_zcount_max(&v),
                       flags, &rg))
        goblin__exec_zcount(&r->x, v.key, &rg);
}

void goblin__sbe_zlexcount(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zlexcount v;
    struct goblin_zrange rg;

    if (GOBLIN__SBE_DECODED(zlexcount, v) &&
        range_init(r, GOBLIN_ZRANGE_BY_LEX, 0, 0, 0, 0, &rg) &&
        lex_range(r, goblin_sbe_zlexcount_min_kind(&v), v.min,
                  goblin_sbe_zlexcount_max_kind(&v), v.max, &rg))
        goblin__exec_zcount(&r->x, v.key, &rg);
}

void goblin__sbe_zremrangebyrank(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zremrangebyrank v;
    struct goblin_zrange rg;

    if (!GOBLIN__SBE_DECODED(zremrangebyrank, v))
        return;
    range_init(r, GOBLIN_ZRANGE_BY_RANK, 0, 0, 0, 0, &rg);
    rg.start = goblin_sbe_zremrangebyrank_start(&v);
    rg.stop = goblin_sbe_zremrangebyrank_stop(&v);
    goblin__exec_zremrange(&r->x, v.key, &rg);
}

void goblin__sbe_zremrangebyscore(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zremrangebyscore v;
    struct goblin_zrange rg;
    unsigned flags;

    if (!GOBLIN__SBE_DECODED(zremrangebyscore, v))
        return;
    flags = goblin_sbe_zremrangebyscore_flags(&v);
    if (range_init(r, GOBLIN_ZRANGE_BY_SCORE, flags, SCORE_FLAGS, 0, 0, &rg)
        && score_range(r, goblin_sbe_zremrangebyscore_min(&v),
                       goblin_sbe_zremrangebyscore_max(&v), flags, &rg))
        goblin__exec_zremrange(&r->x, v.key, &rg);
}

void goblin__sbe_zremrangebylex(struct goblin__sbe_req *r)
{
    struct goblin_sbe_zremrangebylex v;
    struct goblin_zrange rg;

    if (GOBLIN__SBE_DECODED(zremrangebylex, v) &&
        range_init(r, GOBLIN_ZRANGE_BY_LEX, 0, 0, 0, 0, &rg) &&
        lex_range(r, goblin_sbe_zremrangebylex_min_kind(&v), v.min,
                  goblin_sbe_zremrangebylex_max_kind(&v), v.max, &rg))
        goblin__exec_zremrange(&r->x, v.key, &rg);
}
