/* geo.c - geo searches over sorted sets (geo.h): the nine cells of a
 * shape scanned as score ranges, each candidate decoded and checked
 * against the shape as Redis's geoGetPointsInRange does, and the STORE
 * forms built into a new sorted set.
 */
#include <stdlib.h>

#include "geo.h"

#include "goblin/zset.h"
#include "store.h"
#include "zset_impl.h"

static int push(goblin_store *st, struct goblin__geo_points *p,
                const struct goblin__geo_point *pt)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        void *v = goblin__realloc(st, p->v, p->cap * sizeof(*p->v),
                                  goblin__mul(cap, sizeof(*p->v)));

        if (v == NULL)
            return GOBLIN_ENOMEM;
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n++] = *pt;
    return 0;
}

void goblin__geo_points_free(goblin_store *st, struct goblin__geo_points *p)
{
    if (p->v != NULL)
        goblin__free(st, p->v, p->cap * sizeof(*p->v));
    p->v = NULL;
    p->n = p->cap = 0;
}

/* The members scored in [min, max) that lie inside the shape. */
static int scan_range(goblin_store *st, struct goblin_slice key,
                      struct goblin__geo_shape *s, double min, double max,
                      size_t limit, struct goblin__geo_points *out)
{
    struct goblin_zrange r = {0};
    struct goblin_zset_iter it;
    struct goblin__geo_point pt;
    double xy[2];
    int64_t n;
    int rc;

    r.by = GOBLIN_ZRANGE_BY_SCORE;
    r.min = min;
    r.max = max;
    r.max_excl = 1;
    r.count = -1;
    if ((n = goblin_zset_range(st, key, &r, &it)) < 0)
        return (int)n;
    while (goblin_zset_next(&it, &pt.member, &pt.score) == 1) {
        goblin__geohash_decode_score(pt.score, xy);
        if (!goblin__geo_within(s, xy[0], xy[1], &pt.dist))
            continue;
        pt.lon = xy[0];
        pt.lat = xy[1];
        if ((rc = push(st, out, &pt)) != 0)
            return rc;
        if (limit && out->n >= limit)
            break;
    }
    return 0;
}

int goblin__geo_search(goblin_store *st, struct goblin_slice key,
                       struct goblin__geo_shape *shape, size_t limit,
                       struct goblin__geo_points *out)
{
    double min[9], max[9];
    int64_t card = goblin_zset_card(st, key);
    int rc;

    if (card < 0)
        return (int)card;
    if (card == 0)
        return 0;
    goblin__geo_ranges(shape, min, max);
    for (int i = 0; i < 9; i++) {
        if (min[i] == max[i])
            continue;
        if (limit && out->n >= limit)
            break;
        if ((rc = scan_range(st, key, shape, min[i], max[i], limit, out)))
            return rc;
    }
    return 1;
}

static int pair_cmp(const void *a, const void *b)
{
    const struct goblin_zpair *x = a, *y = b;
    size_t n = x->member.len < y->member.len ? x->member.len : y->member.len;
    int c;

    if (x->score != y->score)
        return x->score < y->score ? -1 : 1;
    c = n ? memcmp(x->member.ptr, y->member.ptr, n) : 0;
    if (c != 0)
        return c;
    return x->member.len < y->member.len ? -1 : x->member.len > y->member.len;
}

int goblin__geo_store(goblin_store *st, struct goblin_slice dst,
                      const struct goblin__geo_point *p, size_t n,
                      bool storedist, double conversion)
{
    size_t bytes = goblin__mul(n, sizeof(struct goblin_zpair));
    struct goblin_zpair *pairs = NULL;
    int rc;

    goblin__write_begin(st);
    if (n != 0 && (pairs = goblin__alloc(st, bytes)) == NULL)
        return GOBLIN_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        pairs[i].member = p[i].member;
        pairs[i].score = storedist ? p[i].dist / conversion : p[i].score;
    }
    if (n > 1)
        qsort(pairs, n, sizeof(*pairs), pair_cmp);
    rc = goblin__zset_store(st, dst, pairs, n);
    if (pairs != NULL)
        goblin__free(st, pairs, bytes);
    return rc;
}
