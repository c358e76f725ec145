/* zset.c - the public sorted-set calls that reach objects through the
 * keyspace: ZADD and ZINCRBY, point reads, ranges, removals, pops. Set
 * operations, random members and scans are in zset_ops.c; the object
 * layer is zset_obj.c.
 *
 * Invariants:
 *  - A key's sorted-set object is never empty: a write that leaves no
 *    member removes the key.
 *  - Every write calls goblin__write_begin first, and reports the key
 *    through goblin__key_changed when it changed something.
 *  - Ranges are resolved to (first rank, entries, direction) before any
 *    member is touched, so a walk knows its length up front.
 */
#include <assert.h>

#include "keyspace.h"
#include "zset_impl.h"

_Static_assert(sizeof(struct goblin__zset_walk) <=
                   sizeof(struct goblin_zset_iter),
               "goblin_zset_iter too small");

static int find(goblin_store *st, struct goblin_slice key, void ***slot)
{
    return goblin__key_lookup(st, key, GOBLIN_TYPE_ZSET, slot);
}

static int check_flags(unsigned flags)
{
    bool nx = flags & GOBLIN_ZADD_NX, xx = flags & GOBLIN_ZADD_XX;
    bool gt = flags & GOBLIN_ZADD_GT, lt = flags & GOBLIN_ZADD_LT;

    if (nx && xx)
        return GOBLIN_ESYNTAX;
    if ((gt && nx) || (lt && nx) || (gt && lt))
        return GOBLIN_ESYNTAX;
    return 0;
}

/* ZADD's core: the pairs go into key's set, created if absent. */
static int add(goblin_store *st, struct goblin_slice key, unsigned flags,
               bool incr, const struct goblin_zpair *pairs, size_t n,
               struct goblin__zadd_result *res)
{
    void **slot, *obj;
    int rc;

    goblin__write_begin(st);
    if ((rc = find(st, key, &slot)) < 0)
        return rc;
    if (rc == 1) {
        rc = goblin__zset_obj_add(st, slot, flags, incr, pairs, n, res);
    } else {
        memset(res, 0, sizeof(*res));
        if (flags & GOBLIN_ZADD_XX)
            return 0; /* nothing can be added to a missing key */
        if ((rc = goblin__zset_obj_new(st, &obj)) != 0)
            return rc;
        rc = goblin__zset_obj_add(st, &obj, flags, incr, pairs, n, res);
        if (rc == 0 && res->added > 0)
            rc = goblin__key_add(st, key, GOBLIN_TYPE_ZSET, obj);
        if (rc != 0 || res->added == 0) {
            goblin__zset_free(st, obj);
            if (rc != 0)
                return rc;
        }
    }
    if (rc == 0 && (res->added > 0 || res->updated > 0))
        goblin__key_changed(st, key);
    return rc;
}

int64_t goblin_zset_add_pairs(goblin_store *st, struct goblin_slice key,
                              unsigned flags,
                              const struct goblin_zpair *pairs, size_t n)
{
    struct goblin__zadd_result res;
    int rc;

    if ((rc = check_flags(flags)) != 0)
        return rc;
    if (n == 0)
        return GOBLIN_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (isnan(pairs[i].score))
            return GOBLIN_EINVAL;
    if ((rc = add(st, key, flags, false, pairs, n, &res)) != 0)
        return rc;
    if (flags & GOBLIN_ZADD_CH)
        return (int64_t)(res.added + res.updated);
    return (int64_t)res.added;
}

int goblin_zset_add(goblin_store *st, struct goblin_slice key,
                    struct goblin_slice member, double score)
{
    struct goblin_zpair p = {score, member};

    return (int)goblin_zset_add_pairs(st, key, 0, &p, 1);
}

int goblin_zset_incr(goblin_store *st, struct goblin_slice key,
                     unsigned flags, struct goblin_slice member, double incr,
                     double *score)
{
    struct goblin_zpair p = {incr, member};
    struct goblin__zadd_result res;
    int rc;

    if ((rc = check_flags(flags)) != 0)
        return rc;
    if (isnan(incr))
        return GOBLIN_EINVAL;
    if ((rc = add(st, key, flags, true, &p, 1, &res)) != 0)
        return rc;
    if (!res.processed)
        return 0;
    *score = res.score;
    return 1;
}

int goblin_zset_score(goblin_store *st, struct goblin_slice key,
                      struct goblin_slice member, double *score)
{
    void **slot;
    int rc = find(st, key, &slot);

    if (rc <= 0)
        return rc;
    return goblin__zset_obj_score(*slot, member, score);
}

int64_t goblin_zset_mscore(goblin_store *st, struct goblin_slice key,
                           const struct goblin_slice *members, size_t n,
                           double *scores)
{
    void **slot;
    int rc = find(st, key, &slot);
    int64_t found = 0;

    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        scores[i] = NAN;
        if (rc == 1)
            found += goblin__zset_obj_score(*slot, members[i], &scores[i]);
    }
    return found;
}

int64_t goblin_zset_card(goblin_store *st, struct goblin_slice key)
{
    void **slot;
    int rc = find(st, key, &slot);

    if (rc <= 0)
        return rc;
    return (int64_t)goblin__zset_obj_card(*slot);
}

int goblin_zset_rank(goblin_store *st, struct goblin_slice key,
                     struct goblin_slice member, int rev, int64_t *rank,
                     double *score)
{
    void **slot;
    size_t r;
    int rc = find(st, key, &slot);

    if (rc <= 0)
        return rc;
    if (!goblin__zset_obj_rank(*slot, member, &r, score))
        return 0;
    if (rev)
        r = goblin__zset_obj_card(*slot) - 1 - r;
    *rank = (int64_t)r;
    return 1;
}

/* ---- ranges ---- */

/* A range resolved to ranks: n entries from rank `first`, upward, or
 * downward from it when rev. */
struct span {
    size_t first;
    size_t n;
    bool rev;
};

/* Rank where a lex bound starts (as a minimum) or ends (as a maximum,
 * exclusive end). */
static size_t lex_rank(const void *obj, const struct goblin_lex_bound *b,
                       bool is_max)
{
    switch (b->kind) {
    case GOBLIN_LEX_MIN_INF:
        return 0;
    case GOBLIN_LEX_PLUS_INF:
        return goblin__zset_obj_card(obj);
    case GOBLIN_LEX_INCLUSIVE:
        return goblin__zset_obj_rank_lex(obj, b->value, is_max);
    default:
        return goblin__zset_obj_rank_lex(obj, b->value, !is_max);
    }
}

/* Resolves a BY_SCORE or BY_LEX range to [*lo, *hi) in ranks. */
static int bounds(const void *obj, const struct goblin_zrange *r, size_t *lo,
                  size_t *hi)
{
    if (r->by == GOBLIN_ZRANGE_BY_SCORE) {
        if (isnan(r->min) || isnan(r->max))
            return GOBLIN_EINVAL;
        *lo = goblin__zset_obj_rank_score(obj, r->min, r->min_excl);
        *hi = goblin__zset_obj_rank_score(obj, r->max, !r->max_excl);
    } else if (r->by == GOBLIN_ZRANGE_BY_LEX) {
        if ((unsigned)r->lmin.kind > GOBLIN_LEX_EXCLUSIVE ||
            (unsigned)r->lmax.kind > GOBLIN_LEX_EXCLUSIVE)
            return GOBLIN_EINVAL;
        *lo = lex_rank(obj, &r->lmin, false);
        *hi = lex_rank(obj, &r->lmax, true);
    } else {
        return GOBLIN_EINVAL;
    }
    if (*hi < *lo)
        *hi = *lo;
    return 0;
}

static void resolve_rank(size_t card, const struct goblin_zrange *r,
                         struct span *sp)
{
    int64_t len = (int64_t)card, s = r->start, e = r->stop;

    sp->n = 0;
    sp->rev = r->rev;
    if (s < 0)
        s += len;
    if (e < 0)
        e += len;
    if (s < 0)
        s = 0;
    if (s > e || s >= len)
        return;
    if (e >= len)
        e = len - 1;
    sp->n = (size_t)(e - s + 1);
    sp->first = r->rev ? (size_t)(len - 1 - s) : (size_t)s;
}

/* Resolves any range on obj, LIMIT included when use_limit. */
static int resolve(const void *obj, const struct goblin_zrange *r,
                   bool use_limit, struct span *sp)
{
    size_t lo, hi, total, off;
    int rc;

    if (r->by == GOBLIN_ZRANGE_BY_RANK) {
        resolve_rank(goblin__zset_obj_card(obj), r, sp);
        return 0;
    }
    if ((rc = bounds(obj, r, &lo, &hi)) != 0)
        return rc;
    total = hi - lo;
    sp->rev = r->rev;
    sp->n = total;
    sp->first = r->rev ? hi - 1 : lo;
    if (!use_limit || !r->limit)
        return 0;
    if (r->offset < 0 || (uint64_t)r->offset >= total) {
        sp->n = 0;
        return 0;
    }
    off = (size_t)r->offset;
    sp->n = total - off;
    if (r->count >= 0 && (uint64_t)r->count < sp->n)
        sp->n = (size_t)r->count;
    sp->first = r->rev ? sp->first - off : sp->first + off;
    return 0;
}

/* The lowest rank of a span. */
static size_t span_low(const struct span *sp)
{
    return sp->rev ? sp->first + 1 - sp->n : sp->first;
}

int64_t goblin_zset_range(goblin_store *st, struct goblin_slice key,
                          const struct goblin_zrange *r,
                          struct goblin_zset_iter *it)
{
    struct goblin__zset_walk *w = (struct goblin__zset_walk *)(void *)it;
    struct span sp = {0, 0, false};
    void **slot;
    int rc;

    w->left = 0;
    if ((unsigned)r->by > GOBLIN_ZRANGE_BY_LEX)
        return GOBLIN_EINVAL;
    if ((rc = find(st, key, &slot)) <= 0)
        return rc;
    if ((rc = resolve(*slot, r, true, &sp)) != 0)
        return rc;
    goblin__zset_obj_walk(*slot, sp.first, sp.n, sp.rev, w);
    return (int64_t)sp.n;
}

int goblin_zset_next(struct goblin_zset_iter *it, struct goblin_slice *member,
                     double *score)
{
    return goblin__zset_walk_next((struct goblin__zset_walk *)(void *)it,
                                  member, score);
}

int64_t goblin_zset_count(goblin_store *st, struct goblin_slice key,
                          const struct goblin_zrange *r)
{
    size_t lo, hi;
    void **slot;
    int rc;

    if (r->by != GOBLIN_ZRANGE_BY_SCORE && r->by != GOBLIN_ZRANGE_BY_LEX)
        return GOBLIN_EINVAL;
    if ((rc = find(st, key, &slot)) <= 0)
        return rc;
    if ((rc = bounds(*slot, r, &lo, &hi)) != 0)
        return rc;
    return (int64_t)(hi - lo);
}

/* Drops key if its set became empty, and reports the change. */
static void after_removal(goblin_store *st, struct goblin_slice key,
                          void **slot)
{
    if (goblin__zset_obj_card(*slot) == 0)
        goblin__key_remove(st, key);
    goblin__key_changed(st, key);
}

int64_t goblin_zset_rem(goblin_store *st, struct goblin_slice key,
                        const struct goblin_slice *members, size_t n)
{
    void **slot;
    size_t removed;
    int rc;

    goblin__write_begin(st);
    if ((rc = find(st, key, &slot)) <= 0)
        return rc;
    removed = goblin__zset_obj_remove(st, slot, members, n);
    if (removed > 0)
        after_removal(st, key, slot);
    return (int64_t)removed;
}

int64_t goblin_zset_rem_range(goblin_store *st, struct goblin_slice key,
                              const struct goblin_zrange *r)
{
    struct span sp;
    void **slot;
    int rc;

    if (r->rev || r->limit || (unsigned)r->by > GOBLIN_ZRANGE_BY_LEX)
        return GOBLIN_EINVAL;
    goblin__write_begin(st);
    if ((rc = find(st, key, &slot)) <= 0)
        return rc;
    if ((rc = resolve(*slot, r, false, &sp)) != 0)
        return rc;
    if (sp.n == 0)
        return 0;
    goblin__zset_obj_remove_ranks(st, slot, span_low(&sp), sp.n);
    after_removal(st, key, slot);
    return (int64_t)sp.n;
}

int64_t goblin_zset_pop(goblin_store *st, struct goblin_slice key, int max,
                        int64_t count, goblin_zset_visit visit, void *ctx)
{
    struct goblin__zset_walk w;
    struct goblin_slice m;
    size_t card, n;
    void **slot;
    double s;
    int rc;

    if (count < 0)
        return GOBLIN_EINVAL;
    goblin__write_begin(st);
    if ((rc = find(st, key, &slot)) <= 0 || count == 0)
        return rc < 0 ? rc : 0;
    card = goblin__zset_obj_card(*slot);
    n = (uint64_t)count < card ? (size_t)count : card;
    goblin__zset_obj_walk(*slot, max ? card - 1 : 0, n, max, &w);
    while (goblin__zset_walk_next(&w, &m, &s))
        if ((rc = visit(ctx, m, s)) != 0)
            return rc;
    goblin__zset_obj_remove_ranks(st, slot, max ? card - n : 0, n);
    after_removal(st, key, slot);
    return (int64_t)n;
}

/* ---- ZRANGESTORE ---- */

/* Stores n pairs (in order) into dst, or deletes dst when n is 0. */
int goblin__zset_store(goblin_store *st, struct goblin_slice dst,
                       const struct goblin_zpair *pairs, size_t n)
{
    void *obj;
    uint32_t id;
    int rc;

    if (n == 0) {
        if (goblin__key_find(st, dst, &id)) {
            goblin__key_delete_id(st, id);
            goblin__key_changed(st, dst);
        }
        return 0;
    }
    if ((rc = goblin__zset_obj_from_sorted(st, pairs, n, &obj)) != 0)
        return rc;
    if ((rc = goblin__key_replace(st, dst, GOBLIN_TYPE_ZSET, obj)) != 0) {
        goblin__zset_free(st, obj);
        return rc;
    }
    goblin__key_changed(st, dst);
    return 0;
}

int64_t goblin_zset_range_store(goblin_store *st, struct goblin_slice dst,
                                struct goblin_slice src,
                                const struct goblin_zrange *r)
{
    struct goblin__zset_walk w;
    struct goblin_zpair *pairs = NULL;
    struct span sp = {0, 0, false};
    size_t bytes = 0;
    void **slot;
    int rc;

    if ((unsigned)r->by > GOBLIN_ZRANGE_BY_LEX)
        return GOBLIN_EINVAL;
    goblin__write_begin(st);
    if ((rc = find(st, src, &slot)) < 0)
        return rc;
    if (rc == 1 && (rc = resolve(*slot, r, true, &sp)) != 0)
        return rc;
    if (sp.n > 0) {
        bytes = goblin__mul(sp.n, sizeof(*pairs));
        if ((pairs = goblin__alloc(st, bytes)) == NULL)
            return GOBLIN_ENOMEM;
        goblin__zset_obj_walk(*slot, sp.first, sp.n, sp.rev, &w);
        for (size_t i = 0; i < sp.n; i++) {
            struct goblin_zpair *p = &pairs[sp.rev ? sp.n - 1 - i : i];

            goblin__zset_walk_next(&w, &p->member, &p->score);
        }
    }
    rc = goblin__zset_store(st, dst, pairs, sp.n);
    goblin__free(st, pairs, bytes);
    return rc != 0 ? rc : (int64_t)sp.n;
}
