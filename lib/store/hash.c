/* hash.c - hash values: the object layer over the two forms (compact
 * block, full arena + index; see hash_impl.h) and the public commands
 * that reach objects through the keyspace.
 *
 * Invariants:
 *  - A key's hash object is never empty: a write that would leave no
 *    field removes the key instead.
 *  - A compact object holds at most GOBLIN__HASH_COMPACT_MAX_ENTRIES
 *    pairs, none longer than GOBLIN__HASH_COMPACT_MAX_VALUE bytes. A write
 *    that would break that converts the object to the full form first
 *    (the count is that of distinct fields after the write, as in Redis
 *    7.0); the full form never converts back.
 *  - Every write either completes or changes nothing, and reports the key
 *    through goblin__key_changed when it changed something.
 *  - Inside the object layer a NULL object means "empty compact", so a
 *    new key is built directly in its final form.
 */
#include <assert.h>
#include <limits.h>
#include <math.h>

#include "hash.h"
#include "hash_entry.h"
#include "hash_impl.h"
#include "hash_ttl.h"
#include "keyspace.h"
#include "goblin/numtext.h"
#include "util/copy_short.h"

/* A pair's entry (header + field + value) must fit 32 bits. */
#define MAX_PAIR_BYTES ((size_t)UINT32_MAX - GOBLIN__ENT_MAX_HDR)

static inline uint64_t field_hash(const goblin_store *st,
                                  struct goblin_slice f)
{
    return goblin__hash_with(st->hash_secret, f.ptr, f.len);
}

/* ---- object layer ---- */

size_t goblin__hash_obj_len(const void *obj)
{
    if (obj == NULL)
        return 0;
    if (goblin__hobj_is_full(obj))
        return goblin__hobj_full(obj)->n;
    return goblin__hc_len(obj);
}

size_t goblin__hash_obj_bytes(const void *obj)
{
    if (obj == NULL)
        return 0;
    if (goblin__hobj_is_full(obj))
        return goblin__hf_bytes(goblin__hobj_full(obj));
    return goblin__hc_bytes(obj);
}

void goblin__hash_free(goblin_store *st, void *obj)
{
    if (obj == NULL)
        return;
    if (goblin__hobj_is_full(obj))
        goblin__hf_free(st, goblin__hobj_full(obj));
    else
        goblin__hc_free(st, obj);
}

const char *goblin__hash_encoding(const void *obj)
{
    return obj != NULL && goblin__hobj_is_full(obj) ? "hashtable"
                                                    : "listpack";
}

int64_t goblin__hash_obj_foreach(const void *obj, goblin_hash_visit visit,
                                 void *ctx)
{
    struct goblin_slice f, v;
    int64_t count = 0;
    int r;

    if (obj == NULL)
        return 0;
    if (goblin__hobj_is_full(obj)) {
        const struct goblin__hash_full *hf = goblin__hobj_full(obj);

        for (uint32_t id = 0; id < hf->n; id++, count++) {
            goblin__hf_pair(hf, id, &f, &v);
            if ((r = visit(ctx, f, v)) != 0)
                return r;
        }
        return count;
    }
    struct goblin__hc_iter it;

    goblin__hc_iter_init(&it, obj);
    for (; goblin__hc_next(&it, &f, &v); count++) {
        if ((r = visit(ctx, f, v)) != 0)
            return r;
    }
    return count;
}

/* Finds field in obj (h its hash). Returns 1 and sets *v, or 0. */
static int obj_get(const void *obj, uint64_t h, struct goblin_slice field,
                   struct goblin_slice *v)
{
    struct goblin_slice f;
    uint32_t id;

    if (obj == NULL)
        return 0;
    if (!goblin__hobj_is_full(obj))
        return goblin__hc_find(obj, h, field, v) >= 0;
    if (!goblin__hf_find(goblin__hobj_full(obj), h, field, &id))
        return 0;
    goblin__hf_pair(goblin__hobj_full(obj), id, &f, v);
    return 1;
}

static int check_pairs(const struct goblin_slice *fv, size_t npairs,
                       bool *compact_ok)
{
    /* As Redis 7.0: only a long field or value converts up front; the
     * count is judged after the set (7.2 also converts a call passing
     * more pairs than the limit, duplicates or not). */
    *compact_ok = true;
    for (size_t i = 0; i < npairs; i++) {
        size_t fl = fv[2 * i].len, vl = fv[2 * i + 1].len;

        if (fl > MAX_PAIR_BYTES || vl > MAX_PAIR_BYTES - fl)
            return GOBLIN_ELIMIT;
        if (fl > GOBLIN__HASH_COMPACT_MAX_VALUE ||
            vl > GOBLIN__HASH_COMPACT_MAX_VALUE)
            *compact_ok = false;
    }
    return 0;
}

/* Converts the compact *objp (NULL = empty) to the full form and sets the
 * pairs there; *objp changes only on success. */
static int convert_and_set(goblin_store *st, void **objp,
                           const struct goblin_slice *fv, size_t npairs)
{
    static const uint8_t empty[GOBLIN__HC_HDR];
    struct goblin__hash_full *hf;
    int r;

    r = goblin__hf_from_compact(st, *objp != NULL ? *objp : empty, &hf);
    if (r != 0)
        return r;
    r = goblin__hf_set(st, hf, fv, NULL, npairs);
    if (r < 0) {
        goblin__hf_free(st, hf);
        return r;
    }
    goblin__hc_free(st, *objp);
    *objp = goblin__hobj_of_full(hf);
    return r;
}

/* Where one pair of a compact set lands: an old index or a new slot. */
static size_t find_new(const struct goblin_slice *add, const uint64_t *hs,
                       size_t nadd, uint64_t h, struct goblin_slice f)
{
    for (size_t j = 0; j < nadd; j++) {
        if (hs[j] == h && add[2 * j].len == f.len &&
            (f.len == 0 || memcmp(add[2 * j].ptr, f.ptr, f.len) == 0))
            return j;
    }
    return nadd;
}

/* Sets pairs in a compact object, all known to fit the value limit.
 * Returns the number added, INT_MAX when the count limit would be passed
 * (nothing changed), or a negative code. */
static int compact_set(goblin_store *st, void **objp,
                       const struct goblin_slice *fv, size_t npairs)
{
    enum { MAX = GOBLIN__HASH_COMPACT_MAX_ENTRIES };
    struct goblin_slice repl[MAX], add[2 * MAX], v;
    uint64_t hs[MAX];
    uint8_t *at[MAX];
    struct goblin__hc_edit e = {NULL, repl, add, hs, 0};
    const uint8_t *b = *objp;
    size_t n = b != NULL ? goblin__hc_len(b) : 0;
    const uint8_t *end = b != NULL ? b + goblin__hc_bytes(b) : NULL;
    bool in_place = b != NULL;
    uint32_t offs[MAX], *off = NULL;
    uint8_t *nb;

    memset(repl, 0, n * sizeof(repl[0]));
    if (npairs > 1 && n > 1) {
        goblin__hc_offsets(b, offs); /* one pass for all the lookups */
        off = offs;
    }
    for (size_t i = 0; i < npairs; i++) {
        struct goblin_slice f = fv[2 * i], nv = fv[2 * i + 1];
        uint64_t h = field_hash(st, f);
        int idx = b == NULL ? -1
                  : off != NULL ? goblin__hc_find_at(b, off, h, f, &v)
                                : goblin__hc_find(b, h, f, &v);
        size_t j;

        if (idx >= 0) {
            /* In place only if no value changes length and none is a
             * view into the object itself. */
            in_place &= v.len == nv.len &&
                        ((const uint8_t *)nv.ptr >= end ||
                         (const uint8_t *)nv.ptr + nv.len <= b);
            at[idx] = (uint8_t *)v.ptr;
            repl[idx] = nv;
            continue;
        }
        j = find_new(add, hs, e.nadd, h, f);
        if (j == e.nadd) {
            if (n + e.nadd == MAX)
                return INT_MAX;
            hs[e.nadd++] = h;
            add[2 * j] = f;
        }
        add[2 * j + 1] = fv[2 * i + 1];
    }
    if (in_place && e.nadd == 0) {
        /* Every field exists and keeps its value's length (a counter, a
         * flag, a rewrite): the values are written where they lie. */
        for (size_t i = 0; i < n; i++)
            if (repl[i].len != 0)
                goblin__copy_short(at[i], repl[i].ptr, repl[i].len);
        return 0;
    }
    if (goblin__hc_rebuild(st, b, &e, &nb) != 0)
        return GOBLIN_ENOMEM;
    goblin__hc_free(st, *objp);
    *objp = nb;
    return (int)e.nadd;
}

/* One pair into a compact object whose value keeps its length: in place. */
static bool compact_overwrite(goblin_store *st, void *obj,
                              struct goblin_slice f, struct goblin_slice v)
{
    struct goblin_slice old;

    if (obj == NULL || goblin__hc_find(obj, field_hash(st, f), f, &old) < 0 ||
        old.len != v.len)
        return false;
    if (v.len != 0)
        memmove((void *)old.ptr, v.ptr, v.len);
    return true;
}

int goblin__hash_obj_set(goblin_store *st, void **objp,
                         const struct goblin_slice *fv, size_t npairs)
{
    bool compact_ok;
    int r = check_pairs(fv, npairs, &compact_ok);

    if (r != 0)
        return r;
    if (*objp != NULL && goblin__hobj_is_full(*objp)) {
        struct goblin__hash_full *hf = goblin__hobj_full(*objp);

        r = goblin__hf_set(st, hf, fv, NULL, npairs);
        if (r >= 0)
            goblin__hf_compact_step(st, hf);
        return r;
    }
    if (!compact_ok)
        return convert_and_set(st, objp, fv, npairs);
    if (npairs == 1 && compact_overwrite(st, *objp, fv[0], fv[1]))
        return 0;
    r = compact_set(st, objp, fv, npairs);
    if (r == INT_MAX)
        r = convert_and_set(st, objp, fv, npairs);
    return r;
}

/* Pairs per call when building an object: a new object needs no undo
 * journal of its own (failure frees it), so big loads go in batches. */
#define BUILD_BATCH 1024

int goblin__hash_obj_from_pairs(goblin_store *st,
                                const struct goblin_slice *fv, size_t npairs,
                                void **out)
{
    static const struct goblin__hc_edit none;
    void *obj = NULL;
    uint8_t *b;
    int r;

    if (npairs == 0) {
        if (goblin__hc_rebuild(st, NULL, &none, &b) != 0)
            return GOBLIN_ENOMEM;
        *out = b;
        return 0;
    }
    for (size_t i = 0; i < npairs; i += BUILD_BATCH) {
        size_t n = npairs - i < BUILD_BATCH ? npairs - i : BUILD_BATCH;

        r = goblin__hash_obj_set(st, &obj, fv + 2 * i, n);
        if (r < 0) {
            goblin__hash_free(st, obj);
            return r;
        }
    }
    *out = obj;
    return 0;
}

/* Removes the listed fields from obj, which stays non-empty. Returns the
 * number removed or GOBLIN_ENOMEM (a compact block is rebuilt). */
static int obj_del(goblin_store *st, void **objp,
                   const struct goblin_slice *fields, size_t n)
{
    uint64_t del[(GOBLIN__HASH_COMPACT_MAX_ENTRIES + 63) / 64] = {0};
    struct goblin__hc_edit e = {del, NULL, NULL, NULL, 0};
    struct goblin_slice v;
    uint8_t *nb;
    int removed = 0;

    if (goblin__hobj_is_full(*objp)) {
        struct goblin__hash_full *hf = goblin__hobj_full(*objp);
        uint32_t id;

        for (size_t i = 0; i < n && hf->n > 0; i++) {
            uint64_t h = field_hash(st, fields[i]);

            if (goblin__hf_find(hf, h, fields[i], &id)) {
                goblin__hf_del(st, hf, id, h);
                removed++;
            }
        }
        goblin__httl_settle(st, hf);
        if (hf->n > 0)
            goblin__hf_compact_step(st, hf);
        return removed;
    }
    for (size_t i = 0; i < n; i++) {
        int idx = goblin__hc_find(*objp, field_hash(st, fields[i]),
                                  fields[i], &v);

        if (idx >= 0 && !(del[idx / 64] >> (idx % 64) & 1u)) {
            del[idx / 64] |= (uint64_t)1 << (idx % 64);
            removed++;
        }
    }
    if (removed == 0 || (size_t)removed == goblin__hc_len(*objp))
        return removed;
    if (goblin__hc_rebuild(st, *objp, &e, &nb) != 0)
        return GOBLIN_ENOMEM;
    goblin__hc_free(st, *objp);
    *objp = nb;
    return removed;
}

/* ---- commands ---- */

/* Looks key up as a hash. Returns 1 with *obj, 0 if absent, or
 * GOBLIN_EWRONGTYPE. */
static int read_obj(goblin_store *st, struct goblin_slice key,
                    const void **obj)
{
    void **slot;
    int r = goblin__hash_lookup(st, key, &slot);

    if (r == 1)
        *obj = *slot;
    return r;
}

/* Sets pairs in the hash at key, creating it if needed. Without
 * keep_ttl the fields set lose their deadlines (HSET as in Redis 7.4;
 * HINCRBY and HINCRBYFLOAT keep them). */
static int set_pairs(goblin_store *st, struct goblin_slice key,
                     const struct goblin_slice *fv, size_t npairs,
                     bool keep_ttl)
{
    void **slot, *obj = NULL;
    int r = goblin__hash_lookup(st, key, &slot), added;

    if (r < 0)
        return r;
    if (r == 1)
        obj = *slot;
    added = goblin__hash_obj_set(st, &obj, fv, npairs);
    if (added < 0)
        return added;
    if (!keep_ttl && __builtin_expect(st->httl_hashes != 0, 0))
        goblin__httl_clear_pairs(st, obj, fv, npairs);
    if (r == 1) {
        *slot = obj;
    } else if ((r = goblin__key_add(st, key, GOBLIN_TYPE_HASH, obj)) != 0) {
        goblin__hash_free(st, obj);
        return r;
    }
    goblin__key_changed(st, key);
    return added;
}

int goblin_hash_set(goblin_store *st, struct goblin_slice key,
                    const struct goblin_slice *fv, size_t npairs)
{
    if (npairs == 0 || npairs > INT_MAX / 2)
        return GOBLIN_EINVAL;
    goblin__write_begin(st);
    return set_pairs(st, key, fv, npairs, false);
}

int goblin_hash_setnx(goblin_store *st, struct goblin_slice key,
                      struct goblin_slice field, struct goblin_slice value)
{
    struct goblin_slice fv[2] = {field, value}, v;
    const void *obj = NULL;
    int r;

    goblin__write_begin(st);
    r = read_obj(st, key, &obj);
    if (r < 0)
        return r;
    if (r == 1 && obj_get(obj, field_hash(st, field), field, &v))
        return 0;
    r = set_pairs(st, key, fv, 1, false);
    return r < 0 ? r : 1;
}

int goblin_hash_get(goblin_store *st, struct goblin_slice key,
                    struct goblin_slice field, struct goblin_slice *value)
{
    const void *obj;
    int r = read_obj(st, key, &obj);

    if (r != 1)
        return r;
    return obj_get(obj, field_hash(st, field), field, value);
}

int goblin_hash_mget(goblin_store *st, struct goblin_slice key,
                     const struct goblin_slice *fields, size_t n,
                     struct goblin_slice *values)
{
    const void *obj = NULL;
    int r, found = 0;

    if (n > INT_MAX)
        return GOBLIN_EINVAL;
    r = read_obj(st, key, &obj);
    if (r < 0)
        return r;
    for (size_t i = 0; i < n; i++) {
        values[i].ptr = NULL;
        values[i].len = 0;
        if (r == 1)
            found += obj_get(obj, field_hash(st, fields[i]), fields[i],
                             &values[i]);
    }
    return found;
}

int goblin_hash_del(goblin_store *st, struct goblin_slice key,
                    const struct goblin_slice *fields, size_t n)
{
    void **slot, *obj;
    size_t before;
    int r, removed;

    if (n == 0 || n > INT_MAX)
        return GOBLIN_EINVAL;
    goblin__write_begin(st);
    r = goblin__hash_lookup(st, key, &slot);
    if (r != 1)
        return r;
    obj = *slot;
    before = goblin__hash_obj_len(obj);
    removed = obj_del(st, &obj, fields, n);
    if (removed <= 0)
        return removed;
    if ((size_t)removed == before)
        goblin__key_remove(st, key);
    else
        *slot = obj;
    goblin__key_changed(st, key);
    return removed;
}

int64_t goblin_hash_len(goblin_store *st, struct goblin_slice key)
{
    const void *obj;
    int r = read_obj(st, key, &obj);

    return r == 1 ? (int64_t)goblin__hash_obj_len(obj) : r;
}

int goblin_hash_exists(goblin_store *st, struct goblin_slice key,
                       struct goblin_slice field)
{
    struct goblin_slice v;

    return goblin_hash_get(st, key, field, &v);
}

int64_t goblin_hash_strlen(goblin_store *st, struct goblin_slice key,
                           struct goblin_slice field)
{
    struct goblin_slice v;
    int r = goblin_hash_get(st, key, field, &v);

    return r == 1 ? (int64_t)v.len : r;
}

int64_t goblin_hash_foreach(goblin_store *st, struct goblin_slice key,
                            goblin_hash_visit visit, void *ctx)
{
    const void *obj;
    int r = read_obj(st, key, &obj);

    return r == 1 ? goblin__hash_obj_foreach(obj, visit, ctx) : r;
}

/* The field's current value for an increment: 1 and *v, or 0 if absent. */
static int incr_operand(goblin_store *st, struct goblin_slice key,
                        struct goblin_slice field, struct goblin_slice *v)
{
    const void *obj;
    int r = read_obj(st, key, &obj);

    if (r != 1)
        return r;
    return obj_get(obj, field_hash(st, field), field, v);
}

int goblin_hash_incrby(goblin_store *st, struct goblin_slice key,
                       struct goblin_slice field, int64_t incr,
                       int64_t *result)
{
    char buf[GOBLIN_INT64_TEXT_MAX];
    struct goblin_slice v, fv[2];
    int64_t cur = 0;
    int r;

    goblin__write_begin(st);
    r = incr_operand(st, key, field, &v);
    if (r < 0)
        return r;
    if (r == 1 && goblin_int64_parse(v.ptr, v.len, &cur) != 0)
        return GOBLIN_EHASHNOTINT;
    if ((incr < 0 && cur < 0 && incr < INT64_MIN - cur) ||
        (incr > 0 && cur > 0 && incr > INT64_MAX - cur))
        return GOBLIN_EOVERFLOW;
    cur += incr;
    fv[0] = field;
    fv[1].ptr = buf;
    fv[1].len = goblin_int64_format(buf, cur);
    r = set_pairs(st, key, fv, 1, true);
    if (r < 0)
        return r;
    *result = cur;
    return 0;
}

int goblin_hash_incrbyfloat(goblin_store *st, struct goblin_slice key,
                            struct goblin_slice field, long double incr,
                            struct goblin_slice *result)
{
    char buf[GOBLIN_LONG_DOUBLE_TEXT_MAX];
    struct goblin_slice v, fv[2];
    long double cur = 0;
    int r;

    if (isnan(incr) || isinf(incr))
        return GOBLIN_EINVAL;
    goblin__write_begin(st);
    r = incr_operand(st, key, field, &v);
    if (r < 0)
        return r;
    if (r == 1 && goblin_long_double_parse(v.ptr, v.len, &cur) != 0)
        return GOBLIN_EHASHNOTFLOAT;
    cur += incr;
    if (isnan(cur) || isinf(cur))
        return GOBLIN_ENANINF;
    fv[0] = field;
    fv[1].ptr = buf;
    fv[1].len = goblin_long_double_format(buf, sizeof(buf), cur);
    r = set_pairs(st, key, fv, 1, true);
    if (r < 0)
        return r;
    r = incr_operand(st, key, field, result); /* the pair just set */
    assert(r == 1);
    (void)r;
    return 0;
}
