/* hash_scan.c - the hash reads that walk or sample: HRANDFIELD (with and
 * without a count) and HSCAN.
 *
 * Both work on positions 0..n-1: the insertion-order index of a compact
 * block, or the dense id of a full hash.
 *
 * HSCAN over a full hash visits ids from the top down; the cursor is the
 * number of ids still to visit (ids [0, cursor)). Writes between calls
 * keep this complete: a new field takes id n, above the cursor; removing id
 * i moves the last id into i, and a field moving down from at or above
 * the cursor is at worst visited again, while one below it stays below.
 * Compaction moves bytes, never ids.
 */
#include "goblin/keys.h"
#include "hash.h"
#include "hash_impl.h"
#include "hash_ttl.h"
#include "keyspace.h"

#define SCAN_DEFAULT_COUNT 10

/* A uniform integer in [0, n), n > 0 (Lemire's multiply-shift). */
static inline uint64_t rand_below(goblin_store *st, uint64_t n)
{
    return (uint64_t)(((__uint128_t)goblin__rand64(st) * n) >> 64);
}

static void pair_at(const void *obj, uint64_t i, struct goblin_slice *f,
                    struct goblin_slice *v)
{
    if (goblin__hobj_is_full(obj))
        goblin__hf_pair(goblin__hobj_full(obj), (uint32_t)i, f, v);
    else
        goblin__hc_pair(obj, (size_t)i, f, v);
}

static int read_obj(goblin_store *st, struct goblin_slice key,
                    const void **obj)
{
    void **slot;
    int r = goblin__hash_lookup(st, key, &slot);

    if (r == 1)
        *obj = *slot;
    return r;
}

int goblin_hash_randfield(goblin_store *st, struct goblin_slice key,
                          struct goblin_slice *field,
                          struct goblin_slice *value)
{
    struct goblin_slice f, v;
    const void *obj;
    int r = read_obj(st, key, &obj);

    if (r != 1)
        return r;
    pair_at(obj, rand_below(st, goblin__hash_obj_len(obj)), &f, &v);
    *field = f;
    if (value != NULL)
        *value = v;
    return 1;
}

/* count distinct positions out of n, in order (Knuth's selection
 * sampling: each position is taken with probability needed / left). Used
 * when count is a fair share of n, so the walk costs little extra. */
static int64_t sample_walk(goblin_store *st, const void *obj, uint64_t n,
                           uint64_t count, goblin_hash_visit visit,
                           void *ctx)
{
    struct goblin__hc_iter it;
    struct goblin_slice f, v;
    uint64_t need = count;
    int r;

    if (!goblin__hobj_is_full(obj))
        goblin__hc_iter_init(&it, obj);
    for (uint64_t i = 0; i < n && need > 0; i++) {
        if (goblin__hobj_is_full(obj))
            goblin__hf_pair(goblin__hobj_full(obj), (uint32_t)i, &f, &v);
        else
            goblin__hc_next(&it, &f, &v);
        if (rand_below(st, n - i) >= need)
            continue;
        need--;
        if ((r = visit(ctx, f, v)) != 0)
            return r;
    }
    return (int64_t)count;
}

/* Adds x to the set (open addressing over x + 1, 0 = empty); false if it
 * was there. */
static bool set_add(uint32_t *set, size_t mask, uint32_t x)
{
    size_t i = (size_t)(x * 0x9E3779B1u) & mask;

    for (;; i = (i + 1) & mask) {
        if (set[i] == x + 1)
            return false;
        if (set[i] == 0) {
            set[i] = x + 1;
            return true;
        }
    }
}

/* count distinct ids out of n (count much smaller than n), by Floyd's
 * algorithm: for j = n - count .. n - 1 take a random t <= j, or j itself
 * if t was taken; every count-subset is equally likely. */
static int64_t sample_floyd(goblin_store *st, const void *obj, uint64_t n,
                            uint64_t count, goblin_hash_visit visit,
                            void *ctx)
{
    struct goblin_slice f, v;
    size_t cap = 16, bytes;
    uint32_t *set;
    int r = 0;

    while (cap < 2 * count)
        cap *= 2;
    bytes = cap * sizeof(*set);
    set = goblin__alloc(st, bytes);
    if (set == NULL)
        return GOBLIN_ENOMEM;
    memset(set, 0, bytes);
    for (uint64_t j = n - count; j < n && r == 0; j++) {
        uint32_t t = (uint32_t)rand_below(st, j + 1);

        if (!set_add(set, cap - 1, t)) {
            t = (uint32_t)j;
            set_add(set, cap - 1, t);
        }
        pair_at(obj, t, &f, &v);
        r = visit(ctx, f, v);
    }
    goblin__free(st, set, bytes);
    return r != 0 ? r : (int64_t)count;
}

int64_t goblin_hash_randfield_count(goblin_store *st, struct goblin_slice key,
                                    int64_t count, int withvalues,
                                    goblin_hash_visit visit, void *ctx)
{
    struct goblin_slice f, v;
    const void *obj;
    uint64_t n;
    int r;

    if (count < -INT64_MAX || (withvalues && count < -(INT64_MAX / 2)))
        return GOBLIN_ERANGE;
    r = read_obj(st, key, &obj);
    if (r != 1 || count == 0)
        return r < 0 ? r : 0;
    n = goblin__hash_obj_len(obj);
    if (count < 0) {
        for (int64_t k = 0; k < -count; k++) {
            pair_at(obj, rand_below(st, n), &f, &v);
            if ((r = visit(ctx, f, v)) != 0)
                return r;
        }
        return -count;
    }
    if ((uint64_t)count >= n)
        return goblin__hash_obj_foreach(obj, visit, ctx);
    if (!goblin__hobj_is_full(obj) || (uint64_t)count * 4 >= n)
        return sample_walk(st, obj, n, (uint64_t)count, visit, ctx);
    return sample_floyd(st, obj, n, (uint64_t)count, visit, ctx);
}

static bool field_matches(struct goblin_slice match, struct goblin_slice f)
{
    return match.ptr == NULL ||
           goblin_glob_match(match.ptr, match.len, f.ptr, f.len, 0);
}

int64_t goblin_hash_scan(goblin_store *st, struct goblin_slice key,
                         uint64_t cursor, size_t count,
                         struct goblin_slice match, goblin_hash_visit visit,
                         void *ctx, uint64_t *next)
{
    struct goblin_slice f, v;
    const void *obj;
    uint64_t n, top, lo, i;
    int64_t seen = 0;
    int r = read_obj(st, key, &obj);

    if (r != 1) {
        if (r == 0)
            *next = 0;
        return r;
    }
    n = goblin__hash_obj_len(obj);
    top = n;
    lo = 0;
    if (goblin__hobj_is_full(obj)) {
        if (count == 0)
            count = SCAN_DEFAULT_COUNT;
        if (cursor != 0 && cursor < n)
            top = cursor;
        lo = top > count ? top - count : 0;
    }
    for (i = top; i-- > lo;) {
        pair_at(obj, goblin__hobj_is_full(obj) ? i : top - 1 - i, &f, &v);
        if (!field_matches(match, f))
            continue;
        if ((r = visit(ctx, f, v)) != 0)
            return r;
        seen++;
    }
    *next = lo;
    return seen;
}
