/* zset_ops.c - sorted-set calls over several members at once: ZUNION,
 * ZINTER, ZDIFF (and their STORE forms), ZINTERCARD, ZRANDMEMBER, ZSCAN.
 *
 * Set operations follow Redis's t_zset.c: for UNION and INTER the inputs
 * are taken from the smallest to the largest (a stable order, so equal
 * sizes keep argument order), which fixes the order in which a member's
 * scores are aggregated and hence the rounding of sums. Each input score
 * is multiplied by its weight, a NaN product (inf * 0) counting as 0, and
 * a NaN sum counts as 0 too -- except, as in Redis, INTER's products from
 * the second input on, which reach the aggregate as NaN: SUM turns NaN
 * into 0, MIN and MAX keep what they had (a comparison with NaN is false).
 * UNION gathers every (member, score) and sorts
 * by member so each member's scores meet in input order; INTER and DIFF
 * walk the first (smallest) input and probe the others.
 *
 * ZSCAN on a full set walks arena positions upward from the cursor
 * (tag << 48 | chunk sequence << 16 | offset); compaction only moves
 * records to younger chunks, so a member present throughout is met at
 * least once. A cursor whose tag is not the set's (the set was rebuilt in
 * between) restarts the walk.
 */
#include <assert.h>

#include "goblin/keys.h"
#include "keyspace.h"
#include "zset_impl.h"

struct elem {
    struct goblin_slice m;
    double score;
};

_Static_assert(sizeof(struct elem) == sizeof(struct goblin_zpair),
               "elements are converted to pairs in place");

struct input {
    const void *obj;    /* NULL: missing key */
    double weight;
    size_t card;
};

static int slice_cmp(struct goblin_slice a, struct goblin_slice b)
{
    return goblin__bytes_cmp(a.ptr, a.len, b.ptr, b.len);
}

static int by_member(const struct elem *a, const struct elem *b)
{
    return slice_cmp(a->m, b->m);
}

static int by_score(const struct elem *a, const struct elem *b)
{
    if (a->score < b->score)
        return -1;
    if (a->score > b->score)
        return 1;
    return slice_cmp(a->m, b->m);
}

/* Stable merge sort of e[0, n) using tmp[0, n). */
static void sort_elems(struct elem *e, struct elem *tmp, size_t n,
                       int (*cmp)(const struct elem *, const struct elem *))
{
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n;
            size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t a = lo, b = mid, k = lo;

            while (a < mid && b < hi)
                tmp[k++] = cmp(&e[b], &e[a]) < 0 ? e[b++] : e[a++];
            while (a < mid)
                tmp[k++] = e[a++];
            while (b < hi)
                tmp[k++] = e[b++];
        }
        memcpy(e, tmp, n * sizeof(*e));
    }
}

static double weigh(double score, double weight)
{
    double v = score * weight;

    return isnan(v) ? 0 : v;
}

static void aggregate(double *acc, double v, enum goblin_zset_aggregate agg)
{
    if (agg == GOBLIN_ZAGG_SUM) {
        *acc += v;
        if (isnan(*acc))
            *acc = 0;
    } else if (agg == GOBLIN_ZAGG_MIN) {
        *acc = v < *acc ? v : *acc;
    } else {
        *acc = v > *acc ? v : *acc;
    }
}

/* Looks every key up. Orders the inputs by size unless DIFF. */
static int open_inputs(goblin_store *st, enum goblin_zset_op op,
                       const struct goblin_slice *keys, size_t nkeys,
                       const double *weights, struct input *in)
{
    for (size_t i = 0; i < nkeys; i++) {
        void **slot;
        int rc = goblin__key_lookup(st, keys[i], GOBLIN_TYPE_ZSET, &slot);

        if (rc < 0)
            return rc;
        in[i].obj = rc == 1 ? *slot : NULL;
        in[i].card = rc == 1 ? goblin__zset_obj_card(*slot) : 0;
        in[i].weight = weights != NULL && op != GOBLIN_ZSET_DIFF
                           ? weights[i] : 1;
    }
    if (op == GOBLIN_ZSET_DIFF)
        return 0;
    for (size_t i = 1; i < nkeys; i++) { /* insertion sort: stable */
        struct input x = in[i];
        size_t j = i;

        for (; j > 0 && in[j - 1].card > x.card; j--)
            in[j] = in[j - 1];
        in[j] = x;
    }
    return 0;
}

/* The result of an operation: elements in (score, member) order. */
struct result {
    struct elem *e;
    size_t n;
    size_t cap;       /* elements e was allocated for (twice, with tmp) */
};

static void result_free(goblin_store *st, struct result *r)
{
    goblin__free(st, r->e, goblin__mul(2 * r->cap, sizeof(struct elem)));
    r->e = NULL;
}

static int result_alloc(goblin_store *st, struct result *r, size_t cap)
{
    r->n = 0;
    r->cap = cap;
    r->e = NULL;
    if (cap == 0)
        return 0;
    r->e = goblin__alloc(st, goblin__mul(2 * cap, sizeof(struct elem)));
    return r->e == NULL ? GOBLIN_ENOMEM : 0;
}

static int do_union(goblin_store *st, const struct input *in, size_t nkeys,
                    enum goblin_zset_aggregate agg, struct result *r)
{
    size_t total = 0, k = 0;
    struct elem *e;
    int rc;

    for (size_t i = 0; i < nkeys; i++)
        total += in[i].card;
    if ((rc = result_alloc(st, r, total)) != 0 || total == 0)
        return rc;
    e = r->e;
    for (size_t i = 0; i < nkeys; i++) {
        struct goblin__zset_walk w;

        if (in[i].obj == NULL)
            continue;
        goblin__zset_obj_walk(in[i].obj, 0, in[i].card, false, &w);
        while (goblin__zset_walk_next(&w, &e[k].m, &e[k].score)) {
            e[k].score = weigh(e[k].score, in[i].weight);
            k++;
        }
    }
    sort_elems(e, e + total, total, by_member);
    for (size_t i = 0; i < total;) {
        size_t j = i + 1;

        e[r->n] = e[i];
        for (; j < total && by_member(&e[i], &e[j]) == 0; j++)
            aggregate(&e[r->n].score, e[j].score, agg);
        r->n++;
        i = j;
    }
    sort_elems(e, e + total, r->n, by_score);
    return 0;
}

/* INTER (and its count) and DIFF: walk in[0], probe the others. limit >
 * 0 stops INTER after that many. With count_only nothing is stored. */
static int probe_first(goblin_store *st, enum goblin_zset_op op,
                       const struct input *in, size_t nkeys,
                       enum goblin_zset_aggregate agg, size_t limit,
                       bool count_only, struct result *r)
{
    struct goblin__zset_walk w;
    struct elem x;
    int rc;

    if ((rc = result_alloc(st, r, count_only ? 0 : in[0].card)) != 0)
        return rc;
    if (in[0].obj == NULL)
        return 0;
    goblin__zset_obj_walk(in[0].obj, 0, in[0].card, false, &w);
    while (goblin__zset_walk_next(&w, &x.m, &x.score)) {
        size_t j = 1;

        if (op == GOBLIN_ZSET_INTER)
            x.score = weigh(x.score, in[0].weight);
        for (; j < nkeys; j++) {
            double s = 0;
            int found = in[j].obj != NULL &&
                        goblin__zset_obj_score(in[j].obj, x.m, &s);

            if (op == GOBLIN_ZSET_DIFF ? found : !found)
                break;
            if (op == GOBLIN_ZSET_INTER) /* NaN passes: see the top */
                aggregate(&x.score, s * in[j].weight, agg);
        }
        if (j < nkeys)
            continue;
        if (!count_only)
            r->e[r->n] = x;
        r->n++;
        if (limit > 0 && r->n == limit)
            break;
    }
    if (op == GOBLIN_ZSET_INTER && !count_only)
        sort_elems(r->e, r->e + r->cap, r->n, by_score);
    return 0;
}

static int compute(goblin_store *st, enum goblin_zset_op op,
                   const struct goblin_slice *keys, size_t nkeys,
                   const double *weights, enum goblin_zset_aggregate agg,
                   struct result *r)
{
    struct input *in;
    size_t bytes = goblin__mul(nkeys, sizeof(*in));
    int rc;

    if (nkeys == 0 || (unsigned)op > GOBLIN_ZSET_DIFF ||
        (unsigned)agg > GOBLIN_ZAGG_MAX)
        return GOBLIN_EINVAL;
    if ((in = goblin__alloc(st, bytes)) == NULL)
        return GOBLIN_ENOMEM;
    rc = open_inputs(st, op, keys, nkeys, weights, in);
    if (rc == 0 && op == GOBLIN_ZSET_UNION)
        rc = do_union(st, in, nkeys, agg, r);
    else if (rc == 0)
        rc = probe_first(st, op, in, nkeys, agg, 0, false, r);
    goblin__free(st, in, bytes);
    return rc;
}

int64_t goblin_zset_combine(goblin_store *st, enum goblin_zset_op op,
                            const struct goblin_slice *keys, size_t nkeys,
                            const double *weights,
                            enum goblin_zset_aggregate agg,
                            goblin_zset_visit visit, void *ctx)
{
    struct result r = {NULL, 0, 0};
    int rc = compute(st, op, keys, nkeys, weights, agg, &r);

    if (rc != 0)
        return rc;
    for (size_t i = 0; i < r.n && rc == 0; i++)
        rc = visit(ctx, r.e[i].m, r.e[i].score);
    result_free(st, &r);
    return rc != 0 ? rc : (int64_t)r.n;
}

int64_t goblin_zset_combine_store(goblin_store *st, struct goblin_slice dst,
                                  enum goblin_zset_op op,
                                  const struct goblin_slice *keys,
                                  size_t nkeys, const double *weights,
                                  enum goblin_zset_aggregate agg)
{
    struct result r = {NULL, 0, 0};
    struct goblin_zpair *pairs;
    int rc;

    goblin__write_begin(st);
    if ((rc = compute(st, op, keys, nkeys, weights, agg, &r)) != 0)
        return rc;
    /* An elem is laid out as a goblin_zpair with the fields swapped:
     * convert in place. */
    pairs = (struct goblin_zpair *)(void *)r.e;
    for (size_t i = 0; i < r.n; i++) {
        struct elem x = r.e[i];

        pairs[i].score = x.score;
        pairs[i].member = x.m;
    }
    rc = goblin__zset_store(st, dst, pairs, r.n);
    result_free(st, &r);
    return rc != 0 ? rc : (int64_t)r.n;
}

int64_t goblin_zset_intercard(goblin_store *st,
                              const struct goblin_slice *keys, size_t nkeys,
                              int64_t limit)
{
    struct result r = {NULL, 0, 0};
    struct input *in;
    size_t bytes = goblin__mul(nkeys, sizeof(*in));
    int rc;

    if (nkeys == 0 || limit < 0)
        return GOBLIN_EINVAL;
    if ((in = goblin__alloc(st, bytes)) == NULL)
        return GOBLIN_ENOMEM;
    rc = open_inputs(st, GOBLIN_ZSET_INTER, keys, nkeys, NULL, in);
    if (rc == 0)
        rc = probe_first(st, GOBLIN_ZSET_INTER, in, nkeys, GOBLIN_ZAGG_SUM,
                         (size_t)limit, true, &r);
    goblin__free(st, in, bytes);
    return rc != 0 ? rc : (int64_t)r.n;
}

/* ---- ZRANDMEMBER ---- */

static size_t uniform(goblin_store *st, size_t n)
{
    return (size_t)(((unsigned __int128)goblin__rand64(st) * n) >> 64);
}

static int visit_rank(const void *obj, size_t r, goblin_zset_visit visit,
                      void *ctx)
{
    struct goblin__zset_walk w;
    struct goblin_slice m;
    double s;

    goblin__zset_obj_walk(obj, r, 1, false, &w);
    goblin__zset_walk_next(&w, &m, &s);
    return visit(ctx, m, s);
}

/* Visits every member, in order or from the highest down; 0 or the
 * visitor's nonzero return. */
static int visit_all(const void *obj, bool down, goblin_zset_visit visit,
                     void *ctx)
{
    struct goblin__zset_walk w;
    struct goblin_slice m;
    size_t card = goblin__zset_obj_card(obj);
    double s;
    int rc;

    goblin__zset_obj_walk(obj, down ? card - 1 : 0, card, down, &w);
    while (goblin__zset_walk_next(&w, &m, &s))
        if ((rc = visit(ctx, m, s)) != 0)
            return rc;
    return 0;
}

/* count distinct ranks by selection sampling over a walk (in order). */
static int sample_walk(goblin_store *st, const void *obj, size_t card,
                       size_t count, goblin_zset_visit visit, void *ctx)
{
    struct goblin__zset_walk w;
    struct goblin_slice m;
    double s;
    size_t need = count;
    int rc;

    goblin__zset_obj_walk(obj, 0, card, false, &w);
    for (size_t left = card; need > 0 && goblin__zset_walk_next(&w, &m, &s);
         left--) {
        if (uniform(st, left) >= need)
            continue;
        need--;
        if ((rc = visit(ctx, m, s)) != 0)
            return rc;
    }
    return 0;
}

/* count distinct ranks by Floyd's algorithm, remembered in a small
 * open-addressing set. */
static int sample_floyd(goblin_store *st, const void *obj, size_t card,
                        size_t count, goblin_zset_visit visit, void *ctx)
{
    size_t cap = 16, bytes;
    unsigned shift = 60;
    uint64_t *set;
    int rc = 0;

    while (cap < 2 * count) {
        cap *= 2;
        shift--;
    }
    bytes = goblin__mul(cap, sizeof(*set));
    if ((set = goblin__alloc(st, bytes)) == NULL)
        return GOBLIN_ENOMEM;
    memset(set, 0xFF, bytes);
    for (size_t j = card - count; j < card && rc == 0; j++) {
        size_t t = uniform(st, j + 1), pick = t, h;

        for (int round = 0; round < 2; round++) {
            h = (size_t)((pick * 0x9E3779B97F4A7C15ull) >> shift);
            while (set[h] != UINT64_MAX && set[h] != pick)
                h = (h + 1) & (cap - 1);
            if (set[h] == UINT64_MAX)
                break;
            pick = j; /* t was taken: take j, never taken before */
        }
        set[h] = pick;
        rc = visit_rank(obj, pick, visit, ctx);
    }
    goblin__free(st, set, bytes);
    return rc;
}

int64_t goblin_zset_randmember(goblin_store *st, struct goblin_slice key,
                               int64_t count, goblin_zset_visit visit,
                               void *ctx)
{
    void **slot;
    size_t card, n;
    int rc;

    if (count < -INT64_MAX)
        return GOBLIN_ERANGE;
    if ((rc = goblin__key_lookup(st, key, GOBLIN_TYPE_ZSET, &slot)) <= 0)
        return rc;
    card = goblin__zset_obj_card(*slot);
    if (count == 0)
        return 0;
    if (count < 0) {
        n = (size_t)-count;
        for (size_t i = 0; i < n; i++)
            if ((rc = visit_rank(*slot, uniform(st, card), visit, ctx)) != 0)
                return rc;
        return (int64_t)n;
    }
    n = (uint64_t)count < card ? (size_t)count : card;
    if (n == card) /* Redis gives the whole set from the highest down */
        rc = visit_all(*slot, true, visit, ctx);
    else if (n * 3 > card || card <= GOBLIN__ZSET_COMPACT_MAX_ENTRIES)
        rc = sample_walk(st, *slot, card, n, visit, ctx);
    else
        rc = sample_floyd(st, *slot, card, n, visit, ctx);
    return rc != 0 ? rc : (int64_t)n;
}

/* ---- ZSCAN ---- */

struct scan {
    struct goblin_slice match;
    goblin_zset_visit visit;
    void *ctx;
    int64_t visited;
};

static int scan_one(struct scan *sc, struct goblin_slice m, double s)
{
    int rc;

    if (sc->match.ptr != NULL &&
        !goblin_glob_match(sc->match.ptr, sc->match.len, m.ptr, m.len, 0))
        return 0;
    if ((rc = sc->visit(sc->ctx, m, s)) != 0)
        return rc;
    sc->visited++;
    return 0;
}

static uint64_t cursor_of(const struct zfull *z, uint64_t seq, uint32_t off)
{
    return (uint64_t)z->tag << 48 | (seq & 0xFFFFFFFFull) << 16 | off;
}

static int scan_full(const struct zfull *z, uint64_t cursor, size_t count,
                     struct scan *sc, uint64_t *next)
{
    const struct zarena *a = &z->ar;
    uint64_t seq = (cursor >> 16) & 0xFFFFFFFFull;
    uint32_t off = (uint32_t)(cursor & 0xFFFF);
    size_t seen = 0;
    int rc;

    if (cursor == 0 || (cursor >> 48) != z->tag || seq < a->base ||
        off < ZA_HDR) {
        seq = a->base;
        off = ZA_HDR;
    }
    for (; seq < a->base + a->nchunks; seq++, off = ZA_HDR) {
        const uint8_t *c = za_chunk_at(a, seq);
        uint32_t used = ((const struct za_chunk *)(const void *)c)->used;

        for (; off < used; off += (uint32_t)za_rec_size(c + off)) {
            struct goblin_slice m;
            size_t at;

            if (za_rec_dead(c + off))
                continue;
            if (seen++ == count) {
                *next = cursor_of(z, seq, off);
                return 0;
            }
            m.ptr = za_decode(c + off, &m.len, &at);
            if ((rc = scan_one(sc, m, za_score(a, za_pos(seq, off)))) != 0)
                return rc;
        }
    }
    *next = 0;
    return 0;
}

static int scan_visit(void *ctx, struct goblin_slice m, double s)
{
    return scan_one(ctx, m, s);
}

int64_t goblin_zset_scan(goblin_store *st, struct goblin_slice key,
                         uint64_t cursor, size_t count,
                         struct goblin_slice match, goblin_zset_visit visit,
                         void *ctx, uint64_t *next)
{
    struct scan sc = {match, visit, ctx, 0};
    void **slot;
    int64_t rc;

    *next = 0;
    if ((rc = goblin__key_lookup(st, key, GOBLIN_TYPE_ZSET, &slot)) <= 0)
        return rc;
    if (count == 0)
        count = 10;
    if (*(const uint8_t *)*slot == ZK_COMPACT)
        rc = visit_all(*slot, false, scan_visit, &sc);
    else
        rc = scan_full(*slot, cursor, count, &sc, next);
    return rc != 0 ? rc : sc.visited;
}
