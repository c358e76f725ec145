/* set.c - set objects: the layer over the four forms (set.h) that finds,
 * adds and removes members and converts between forms.
 *
 * Invariants:
 *  - An integer form holds only members that string2ll accepts, stored as
 *    numbers; their text is made again on the way out, as Redis does.
 *  - A hash form holds each member as a field with an empty value, so the
 *    compact block and the full arena + swiss index of hashes serve sets
 *    unchanged (a 16-byte member costs 18 arena bytes).
 *  - Every write either completes or changes nothing: adds to a big
 *    integer set are undone one by one on failure (removal never
 *    allocates there), and the other forms build their result whole.
 */
#include <assert.h>
#include <limits.h>
#include <stdlib.h>

#include "hash.h"
#include "hash_impl.h"
#include "set.h"
#include "goblin/numtext.h"

static const char empty_value[1];

static inline uint64_t member_hash(const goblin_store *st,
                                   struct goblin_slice m)
{
    return goblin__hash_with(st->hash_secret, m.ptr, m.len);
}

static inline bool as_int(struct goblin_slice m, int64_t *v)
{
    return goblin_int64_parse(m.ptr, m.len, v) == 0;
}

size_t goblin__set_obj_card(const void *obj)
{
    if (obj == NULL)
        return 0;
    switch (goblin__set_form(obj)) {
    case GOBLIN__SET_INTSET:
        return ((const struct goblin__intset *)goblin__set_ptr(obj))->n;
    case GOBLIN__SET_BIGINT:
        return ((const struct goblin__bigint *)goblin__set_ptr(obj))->n;
    default:
        return goblin__hash_obj_len(obj);
    }
}

size_t goblin__set_obj_bytes(const void *obj)
{
    if (obj == NULL)
        return 0;
    switch (goblin__set_form(obj)) {
    case GOBLIN__SET_INTSET:
        return goblin__intset_bytes(goblin__set_ptr(obj));
    case GOBLIN__SET_BIGINT:
        return goblin__bigint_bytes(goblin__set_ptr(obj));
    default:
        return goblin__hash_obj_bytes(obj);
    }
}

/* Redis 7.0 has intset and hashtable only: the compact block and the big
 * integer form answer as the hashtable Redis 7.0 would hold there. */
const char *goblin__set_encoding(const void *obj)
{
    return obj != NULL && goblin__set_form(obj) == GOBLIN__SET_INTSET
               ? "intset"
               : "hashtable";
}

void goblin__set_free(goblin_store *st, void *obj)
{
    if (obj == NULL)
        return;
    switch (goblin__set_form(obj)) {
    case GOBLIN__SET_INTSET:
        goblin__intset_free(st, goblin__set_ptr(obj));
        break;
    case GOBLIN__SET_BIGINT:
        goblin__bigint_free(st, goblin__set_ptr(obj));
        break;
    default:
        goblin__hash_free(st, obj);
        break;
    }
}

bool goblin__set_obj_has(const goblin_store *st, const void *obj,
                         struct goblin_slice m)
{
    struct goblin_slice v;
    int64_t iv;
    uint32_t id;

    if (obj == NULL)
        return false;
    switch (goblin__set_form(obj)) {
    case GOBLIN__SET_INTSET:
        return as_int(m, &iv) &&
               goblin__intset_search(goblin__set_ptr(obj), iv) >= 0;
    case GOBLIN__SET_BIGINT:
        return as_int(m, &iv) && goblin__bigint_has(goblin__set_ptr(obj), iv);
    case GOBLIN__SET_COMPACT:
        return goblin__hc_find(obj, member_hash(st, m), m, &v) >= 0;
    default:
        return goblin__hf_find(goblin__hobj_full(obj), member_hash(st, m), m,
                               &id) != 0;
    }
}

bool goblin__set_obj_pos(const goblin_store *st, const void *obj,
                         struct goblin_slice m, uint64_t *pos)
{
    struct goblin_slice v;
    int64_t iv, r;
    uint32_t id;

    switch (goblin__set_form(obj)) {
    case GOBLIN__SET_INTSET:
        if (!as_int(m, &iv) ||
            (r = goblin__intset_search(goblin__set_ptr(obj), iv)) < 0)
            return false;
        *pos = (uint64_t)r;
        return true;
    case GOBLIN__SET_BIGINT:
        if (!as_int(m, &iv) || !goblin__bigint_has(goblin__set_ptr(obj), iv))
            return false;
        *pos = goblin__bigint_lower_bound(goblin__set_ptr(obj), iv);
        return true;
    case GOBLIN__SET_COMPACT:
        if ((r = goblin__hc_find(obj, member_hash(st, m), m, &v)) < 0)
            return false;
        *pos = (uint64_t)r;
        return true;
    default:
        if (!goblin__hf_find(goblin__hobj_full(obj), member_hash(st, m), m,
                             &id))
            return false;
        *pos = id;
        return true;
    }
}

/* ---- adding ---- */

/* Members per batch when integer members are turned into text. */
#define BATCH 256

/* Adds n members to the hash object *objp (NULL = empty): one
 * all-or-nothing call of the hash layer. */
static int hash_add(goblin_store *st, void **objp,
                    const struct goblin_slice *m, size_t n)
{
    struct goblin_slice small[2 * BATCH], *fv = small;
    size_t bytes = 2 * n * sizeof(*fv);
    void *obj = *objp;
    int r;

    small[0] = small[1] = (struct goblin_slice){empty_value, 0};
    if (n > BATCH && (fv = goblin__alloc(st, bytes)) == NULL)
        return GOBLIN_ENOMEM;
    for (size_t j = 0; j < n; j++) {
        fv[2 * j] = m[j];
        fv[2 * j + 1] = (struct goblin_slice){empty_value, 0};
    }
    r = goblin__hash_obj_set(st, &obj, fv, n);
    if (fv != small)
        goblin__free(st, fv, bytes);
    if (r < 0) {
        if (*objp == NULL)
            goblin__hash_free(st, obj);
        return r;
    }
    *objp = obj;
    return r;
}

/* A hash object holding the integer object's members, then m. */
static int int_to_hash(goblin_store *st, void **objp,
                       const struct goblin_slice *m, size_t n)
{
    struct goblin_slice txt[BATCH];
    char buf[BATCH][GOBLIN_INT64_TEXT_MAX];
    size_t card = goblin__set_obj_card(*objp);
    struct goblin__set_elem e;
    void *h = NULL;
    int r, before;

    for (size_t i = 0; i < card; i += BATCH) {
        size_t k = card - i < BATCH ? card - i : BATCH;

        for (size_t j = 0; j < k; j++) {
            goblin__set_obj_at(*objp, i + j, &e);
            txt[j].ptr = buf[j];
            txt[j].len = goblin_int64_format(buf[j], e.v);
        }
        void *cur = h;
        r = hash_add(st, &cur, txt, k);
        if (r < 0)
            goto fail;
        h = cur;
    }
    before = (int)goblin__hash_obj_len(h);
    for (size_t i = 0; i < n; i += BATCH) {
        size_t k = n - i < BATCH ? n - i : BATCH;
        void *cur = h;

        r = hash_add(st, &cur, m + i, k);
        if (r < 0)
            goto fail;
        h = cur;
    }
    r = (int)goblin__hash_obj_len(h) - before;
    goblin__set_free(st, *objp);
    *objp = h;
    return r;
fail:
    goblin__hash_free(st, h);
    return r;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

/* Adds the integers v (n, sorted and distinct) to the intset *objp. */
static int intset_add(goblin_store *st, void **objp, const int64_t *v,
                      size_t n)
{
    struct goblin__intset *is = goblin__set_ptr(*objp), *nis;
    struct goblin__bigint *b;
    size_t nadd = 0;
    int r;

    for (size_t i = 0; i < n; i++)
        nadd += goblin__intset_search(is, v[i]) < 0;
    if (nadd == 0)
        return 0;
    if ((is != NULL ? is->n : 0) + nadd <= GOBLIN__SET_INTSET_MAX) {
        if (goblin__intset_merge(st, is, v, n, nadd, &nis) != 0)
            return GOBLIN_ENOMEM;
        goblin__intset_free(st, is);
        *objp = goblin__set_tag(nis, GOBLIN__SET_INTSET);
        return (int)nadd;
    }
    /* Past the intset limit: the big integer form, built whole. */
    if (is != NULL) {
        r = goblin__bigint_from_intset(st, is, &b);
    } else {
        static const struct goblin__intset none = {0, 2, {0}};

        r = goblin__bigint_from_intset(st, &none, &b);
    }
    if (r != 0)
        return r;
    for (size_t i = 0; i < n; i++) {
        if (goblin__bigint_add(st, b, v[i]) < 0) {
            goblin__bigint_free(st, b);
            return GOBLIN_ENOMEM;
        }
    }
    goblin__intset_free(st, is);
    *objp = goblin__set_tag(b, GOBLIN__SET_BIGINT);
    return (int)nadd;
}

/* Adds members that are all integers (their values v, n) to an integer
 * form or an empty object. */
static int ints_add(goblin_store *st, void **objp, int64_t *v, size_t n)
{
    struct goblin__bigint *b;
    size_t k = 0;

    qsort(v, n, sizeof(*v), cmp_i64);
    for (size_t i = 0; i < n; i++) {
        if (k == 0 || v[k - 1] != v[i])
            v[k++] = v[i];
    }
    if (*objp == NULL || goblin__set_form(*objp) == GOBLIN__SET_INTSET)
        return intset_add(st, objp, v, k);
    b = goblin__set_ptr(*objp);
    /* Keep only the new values, so that undoing removes exactly them. */
    n = k;
    k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!goblin__bigint_has(b, v[i]))
            v[k++] = v[i];
    }
    for (size_t i = 0; i < k; i++) {
        if (goblin__bigint_add(st, b, v[i]) < 0) {
            while (i-- > 0)
                goblin__bigint_del(st, b, v[i]);
            return GOBLIN_ENOMEM;
        }
    }
    return (int)k;
}

int goblin__set_obj_add(goblin_store *st, void **objp,
                        const struct goblin_slice *m, size_t n)
{
    int64_t small[64], *v = small;
    bool ints = *objp == NULL || goblin__set_form(*objp) >= GOBLIN__SET_INTSET;
    size_t i;
    int r;

    if (n == 0)
        return 0;
    if (n > INT_MAX / 2)
        return GOBLIN_ELIMIT;
    if (!ints)
        return hash_add(st, objp, m, n);
    if (n > 64) {
        v = goblin__alloc(st, n * sizeof(*v));
        if (v == NULL)
            return GOBLIN_ENOMEM;
    }
    for (i = 0; i < n && as_int(m[i], &v[i]); i++)
        ;
    if (i < n)
        r = *objp == NULL ? hash_add(st, objp, m, n)
                          : int_to_hash(st, objp, m, n);
    else
        r = ints_add(st, objp, v, n);
    if (v != small)
        goblin__free(st, v, n * sizeof(*v));
    return r;
}

/* ---- removing ---- */

static int intset_rem(goblin_store *st, void **objp,
                      const struct goblin_slice *m, size_t n)
{
    uint64_t del[(GOBLIN__SET_INTSET_MAX + 63) / 64] = {0};
    struct goblin__intset *is = goblin__set_ptr(*objp), *nis;
    size_t removed = 0;
    int64_t v, pos;

    for (size_t i = 0; i < n; i++) {
        if (!as_int(m[i], &v) || (pos = goblin__intset_search(is, v)) < 0 ||
            (del[pos / 64] >> (pos % 64) & 1u))
            continue;
        del[pos / 64] |= (uint64_t)1 << (pos % 64);
        removed++;
    }
    if (removed == 0 || removed == is->n)
        return (int)removed;
    if (goblin__intset_remove(st, is, del, removed, &nis) != 0)
        return GOBLIN_ENOMEM;
    goblin__intset_free(st, is);
    *objp = goblin__set_tag(nis, GOBLIN__SET_INTSET);
    return (int)removed;
}

static int compact_rem(goblin_store *st, void **objp,
                       const struct goblin_slice *m, size_t n)
{
    uint64_t del[(GOBLIN__HASH_COMPACT_MAX_ENTRIES + 63) / 64] = {0};
    struct goblin__hc_edit e = {del, NULL, NULL, NULL, 0};
    struct goblin_slice v;
    size_t removed = 0;
    uint8_t *nb;

    for (size_t i = 0; i < n; i++) {
        int idx = goblin__hc_find(*objp, member_hash(st, m[i]), m[i], &v);

        if (idx >= 0 && !(del[idx / 64] >> (idx % 64) & 1u)) {
            del[idx / 64] |= (uint64_t)1 << (idx % 64);
            removed++;
        }
    }
    if (removed == 0 || removed == goblin__hc_len(*objp))
        return (int)removed;
    if (goblin__hc_rebuild(st, *objp, &e, &nb) != 0)
        return GOBLIN_ENOMEM;
    goblin__hc_free(st, *objp);
    *objp = nb;
    return (int)removed;
}

int goblin__set_obj_rem(goblin_store *st, void **objp,
                        const struct goblin_slice *m, size_t n)
{
    int removed = 0;
    int64_t v;

    if (*objp == NULL || n == 0)
        return 0;
    switch (goblin__set_form(*objp)) {
    case GOBLIN__SET_INTSET:
        return intset_rem(st, objp, m, n);
    case GOBLIN__SET_COMPACT:
        return compact_rem(st, objp, m, n);
    case GOBLIN__SET_BIGINT: {
        struct goblin__bigint *b = goblin__set_ptr(*objp);

        for (size_t i = 0; i < n && b->n > 0; i++)
            removed += as_int(m[i], &v) && goblin__bigint_del(st, b, v);
        return removed;
    }
    default: {
        struct goblin__hash_full *hf = goblin__hobj_full(*objp);
        uint32_t id;

        for (size_t i = 0; i < n && hf->n > 0; i++) {
            uint64_t h = member_hash(st, m[i]);

            if (goblin__hf_find(hf, h, m[i], &id)) {
                goblin__hf_del(st, hf, id, h);
                removed++;
            }
        }
        if (hf->n > 0)
            goblin__hf_compact_step(st, hf);
        return removed;
    }
    }
}

/* ---- SPOP's removal by position ---- */

int goblin__set_obj_without(goblin_store *st, const void *obj,
                            const uint64_t *pos, uint64_t k, void **out)
{
    uint64_t del[(GOBLIN__SET_INTSET_MAX + 63) / 64] = {0};
    struct goblin__intset *nis;
    uint8_t *nb;

    *out = NULL;
    if (goblin__set_form(obj) == GOBLIN__SET_FULL ||
        goblin__set_form(obj) == GOBLIN__SET_BIGINT)
        return 0;
    for (uint64_t i = 0; i < k; i++)
        del[pos[i] / 64] |= (uint64_t)1 << (pos[i] % 64);
    if (goblin__set_form(obj) == GOBLIN__SET_INTSET) {
        if (goblin__intset_remove(st, goblin__set_ptr(obj), del, (size_t)k,
                                  &nis) != 0)
            return GOBLIN_ENOMEM;
        *out = goblin__set_tag(nis, GOBLIN__SET_INTSET);
        return 0;
    }
    struct goblin__hc_edit e = {del, NULL, NULL, NULL, 0};

    if (goblin__hc_rebuild(st, obj, &e, &nb) != 0)
        return GOBLIN_ENOMEM;
    *out = nb;
    return 0;
}

void goblin__set_obj_del_at(goblin_store *st, void *obj, uint64_t i)
{
    struct goblin_slice f, v;

    if (goblin__set_form(obj) == GOBLIN__SET_BIGINT) {
        struct goblin__bigint *b = goblin__set_ptr(obj);

        goblin__bigint_del(st, b, goblin__bigint_get(b, i));
        return;
    }
    assert(goblin__set_form(obj) == GOBLIN__SET_FULL);
    struct goblin__hash_full *hf = goblin__hobj_full(obj);

    goblin__hf_pair(hf, (uint32_t)i, &f, &v);
    goblin__hf_del(st, hf, (uint32_t)i, member_hash(st, f));
    if (hf->n > 0)
        goblin__hf_compact_step(st, hf);
}
