/* set_scan.c - the set reads that walk or sample: members by position,
 * iteration, SSCAN pages and random distinct samples.
 *
 * SSCAN cursors, by form (each keeps Redis's guarantee that a member
 * present for the whole scan is returned at least once):
 *  - intset and compact block: one page holds the whole set, cursor 0.
 *  - full hash form: ids from the top down, the cursor being the number
 *    of ids still to visit (hash_scan.c explains why writes between calls
 *    cannot hide a member). A cursor >= card restarts from the top.
 *  - big integer form: values in ascending order, the cursor encoding the
 *    next value to return: c = (v ^ 2^63) + 1, so a value inserted or
 *    removed elsewhere moves nothing. A page always ends on a value whose
 *    cursor is at least 2^32, so any cursor it gives out is above every
 *    id a full form can hold: if the set turns into the full form between
 *    two calls, the next call starts again from the top (members may then
 *    repeat, which SSCAN allows, but none is missed).
 */
#include <stdlib.h>

#include "goblin/keys.h"
#include "goblin/numtext.h"
#include "hash_impl.h"
#include "hash.h"
#include "set.h"

#define SCAN_DEFAULT_COUNT 10
#define CURSOR_FLOOR ((uint64_t)1 << 32)

uint64_t goblin__set_rand_below(goblin_store *st, uint64_t n)
{
    return (uint64_t)(((__uint128_t)goblin__rand64(st) * n) >> 64);
}

static void int_elem(struct goblin__set_elem *e, int64_t v)
{
    e->is_int = true;
    e->v = v;
    e->s.ptr = e->buf;
    e->s.len = goblin_int64_format(e->buf, v);
}

static void str_elem(struct goblin__set_elem *e, struct goblin_slice s)
{
    e->is_int = false;
    e->v = 0;
    e->s = s;
}

void goblin__set_obj_at(const void *obj, uint64_t i,
                        struct goblin__set_elem *e)
{
    struct goblin_slice f, v;

    switch (goblin__set_form(obj)) {
    case GOBLIN__SET_INTSET:
        int_elem(e, goblin__intset_get(goblin__set_ptr(obj), (size_t)i));
        break;
    case GOBLIN__SET_BIGINT:
        int_elem(e, goblin__bigint_get(goblin__set_ptr(obj), i));
        break;
    case GOBLIN__SET_COMPACT:
        goblin__hc_pair(obj, (size_t)i, &f, &v);
        str_elem(e, f);
        break;
    default:
        goblin__hf_pair(goblin__hobj_full(obj), (uint32_t)i, &f, &v);
        str_elem(e, f);
        break;
    }
}

/* Walks positions in increasing order cheaply in every form. */
struct walker {
    const void *obj;
    struct goblin__hc_iter it; /* compact: positions in order */
    uint64_t next;             /* compact: the iterator's next position */
    uint32_t chunk;            /* big integers: the chunk of the last */
    uint64_t base;             /* position, and its first position */
};

static void walker_init(struct walker *w, const void *obj)
{
    w->obj = obj;
    w->next = 0;
    w->chunk = 0;
    w->base = 0;
    if (goblin__set_form(obj) == GOBLIN__SET_COMPACT)
        goblin__hc_iter_init(&w->it, obj);
}

/* The member at position i, i not below the previous call's. */
static void walker_at(struct walker *w, uint64_t i,
                      struct goblin__set_elem *e)
{
    struct goblin_slice f, v;

    if (goblin__set_form(w->obj) == GOBLIN__SET_COMPACT) {
        while (w->next <= i) {
            goblin__hc_next(&w->it, &f, &v);
            w->next++;
        }
        str_elem(e, f);
    } else if (goblin__set_form(w->obj) == GOBLIN__SET_BIGINT) {
        const struct goblin__bigint *b = goblin__set_ptr(w->obj);

        goblin__bigint_locate(b, i, &w->chunk, &w->base);
        int_elem(e, goblin__bigint_chunk_get(b, w->chunk,
                                             (uint32_t)(i - w->base)));
    } else {
        goblin__set_obj_at(w->obj, i, e);
    }
}

int64_t goblin__set_obj_foreach(const void *obj, goblin__set_visit visit,
                                void *ctx)
{
    struct goblin__set_elem e;
    struct walker w;
    uint64_t n = goblin__set_obj_card(obj);
    int r;

    if (n == 0)
        return 0;
    walker_init(&w, obj);
    for (uint64_t i = 0; i < n; i++) {
        walker_at(&w, i, &e);
        if ((r = visit(ctx, &e)) != 0)
            return r;
    }
    return (int64_t)n;
}

static bool matches(struct goblin_slice match, struct goblin_slice m)
{
    return match.ptr == NULL ||
           goblin_glob_match(match.ptr, match.len, m.ptr, m.len, 0);
}

static inline uint64_t value_cursor(int64_t v)
{
    return ((uint64_t)v ^ ((uint64_t)1 << 63)) + 1;
}

static int64_t scan_bigint(const struct goblin__bigint *b, uint64_t cursor,
                           size_t count, struct goblin_slice match,
                           goblin__set_visit visit, void *ctx,
                           uint64_t *next)
{
    struct goblin__set_elem e;
    struct walker w;
    uint64_t i = 0, n = b->n;
    int64_t seen = 0;
    size_t looked = 0;
    int r;

    if (cursor != 0)
        i = goblin__bigint_lower_bound(b, (int64_t)((cursor - 1) ^
                                                    ((uint64_t)1 << 63)));
    walker_init(&w, goblin__set_tag((void *)b, GOBLIN__SET_BIGINT));
    for (; i < n; i++) {
        walker_at(&w, i, &e);
        /* Stop before a value whose cursor would be too small or would
         * wrap to 0 (INT64_MAX): it goes in this page instead. */
        if (looked >= count && value_cursor(e.v) >= CURSOR_FLOOR &&
            value_cursor(e.v) != 0) {
            *next = value_cursor(e.v);
            return seen;
        }
        looked++;
        if (!matches(match, e.s))
            continue;
        if ((r = visit(ctx, &e)) != 0)
            return r;
        seen++;
    }
    *next = 0;
    return seen;
}

int64_t goblin__set_obj_scan(const void *obj, uint64_t cursor, size_t count,
                             struct goblin_slice match,
                             goblin__set_visit visit, void *ctx,
                             uint64_t *next)
{
    struct goblin__set_elem e;
    uint64_t n = goblin__set_obj_card(obj), top, lo;
    int64_t seen = 0;
    int r;

    if (count == 0)
        count = SCAN_DEFAULT_COUNT;
    if (goblin__set_form(obj) == GOBLIN__SET_BIGINT)
        return scan_bigint(goblin__set_ptr(obj), cursor, count, match, visit,
                           ctx, next);
    if (goblin__set_form(obj) != GOBLIN__SET_FULL) {
        struct walker w;

        walker_init(&w, obj);
        for (uint64_t i = 0; i < n; i++) {
            walker_at(&w, i, &e);
            if (!matches(match, e.s))
                continue;
            if ((r = visit(ctx, &e)) != 0)
                return r;
            seen++;
        }
        *next = 0;
        return seen;
    }
    top = cursor != 0 && cursor < n ? cursor : n;
    lo = top > count ? top - count : 0;
    for (uint64_t i = top; i-- > lo;) {
        goblin__set_obj_at(obj, i, &e);
        if (!matches(match, e.s))
            continue;
        if ((r = visit(ctx, &e)) != 0)
            return r;
        seen++;
    }
    *next = lo;
    return seen;
}

/* Adds x to the set (open addressing over x + 1, 0 = empty); false if it
 * was there. */
static bool pos_add(uint64_t *set, size_t mask, uint64_t x)
{
    size_t i = (size_t)(x * 0x9E3779B97F4A7C15ull >> 20) & mask;

    for (;; i = (i + 1) & mask) {
        if (set[i] == x + 1)
            return false;
        if (set[i] == 0) {
            set[i] = x + 1;
            return true;
        }
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return (x > y) - (x < y);
}

/* Floyd's algorithm: count distinct positions out of n, every subset
 * equally likely, written ascending into pos. */
static int pick_floyd(goblin_store *st, uint64_t n, uint64_t count,
                      uint64_t *pos)
{
    size_t cap = 16, bytes;
    uint64_t *set, k = 0;

    while (cap < 2 * count)
        cap *= 2;
    bytes = cap * sizeof(*set);
    if ((set = goblin__alloc(st, bytes)) == NULL)
        return GOBLIN_ENOMEM;
    memset(set, 0, bytes);
    for (uint64_t j = n - count; j < n; j++) {
        if (!pos_add(set, cap - 1, goblin__set_rand_below(st, j + 1)))
            pos_add(set, cap - 1, j);
    }
    for (size_t i = 0; i < cap; i++) {
        if (set[i] != 0)
            pos[k++] = set[i] - 1;
    }
    goblin__free(st, set, bytes);
    qsort(pos, (size_t)k, sizeof(*pos), cmp_u64);
    return 0;
}

int goblin__set_obj_pick(goblin_store *st, const void *obj, uint64_t count,
                         uint64_t *pos)
{
    uint64_t n = goblin__set_obj_card(obj), need = count, k = 0;

    if (count * 4 < n)
        return pick_floyd(st, n, count, pos);
    /* A fair share of n: Knuth's selection sampling, one pass, each
     * position taken with probability needed / left. */
    for (uint64_t i = 0; i < n && need > 0; i++) {
        if (goblin__set_rand_below(st, n - i) < need) {
            need--;
            pos[k++] = i;
        }
    }
    return 0;
}

int64_t goblin__set_obj_visit_at(const void *obj, const uint64_t *pos,
                                 uint64_t k, goblin__set_visit visit,
                                 void *ctx)
{
    struct goblin__set_elem e;
    struct walker w;
    int r;

    walker_init(&w, obj);
    for (uint64_t i = 0; i < k; i++) {
        walker_at(&w, pos[i], &e);
        if ((r = visit(ctx, &e)) != 0)
            return r;
    }
    return (int64_t)k;
}
