/* set_intset.c - the small integer form of a set: one exact-size block of
 * sorted, distinct integers, all of one width (2, 4 or 8 bytes, the
 * smallest that holds every value), as Redis's intset.
 *
 * Every write builds a new block (at most GOBLIN__SET_INTSET_MAX values,
 * 4 KiB), so a failed allocation leaves the old one whole.
 */
#include <assert.h>
#include <string.h>

#include "set.h"

size_t goblin__intset_bytes(const struct goblin__intset *is)
{
    return sizeof(*is) + (size_t)is->n * is->width;
}

int64_t goblin__intset_get(const struct goblin__intset *is, size_t i)
{
    return goblin__set_int_load(is->data + i * is->width, is->width);
}

int64_t goblin__intset_search(const struct goblin__intset *is, int64_t v)
{
    size_t lo = 0, hi = is != NULL ? is->n : 0;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t x = goblin__intset_get(is, mid);

        if (x == v)
            return (int64_t)mid;
        if (x < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -(int64_t)lo - 1;
}

int goblin__intset_merge(goblin_store *st, const struct goblin__intset *old,
                         const int64_t *vals, size_t nvals, size_t nadd,
                         struct goblin__intset **out)
{
    size_t on = old != NULL ? old->n : 0, n = on + nadd;
    unsigned w = old != NULL ? old->width : 2;
    struct goblin__intset *is;
    size_t i = 0, j = 0, k = 0;

    for (size_t a = 0; a < nvals; a++) {
        if (goblin__iset_width(vals[a]) > w)
            w = goblin__iset_width(vals[a]);
    }
    is = goblin__alloc(st, sizeof(*is) + n * w);
    if (is == NULL)
        return GOBLIN_ENOMEM;
    memset(is, 0, sizeof(*is));
    is->n = (uint32_t)n;
    is->width = (uint8_t)w;
    /* Merge the two sorted runs, skipping values old already holds. */
    while (i < on || j < nvals) {
        int64_t v;

        if (j == nvals || (i < on && goblin__intset_get(old, i) <= vals[j])) {
            v = goblin__intset_get(old, i);
            if (j < nvals && vals[j] == v)
                j++;
            i++;
        } else {
            v = vals[j++];
        }
        goblin__set_int_store(is->data + k++ * w, w, v);
    }
    assert(k == n);
    *out = is;
    return 0;
}

void goblin__intset_free(goblin_store *st, struct goblin__intset *is)
{
    if (is != NULL)
        goblin__free(st, is, goblin__intset_bytes(is));
}

int goblin__intset_remove(goblin_store *st, const struct goblin__intset *old,
                          const uint64_t *del, size_t ndel,
                          struct goblin__intset **out)
{
    size_t n = old->n - ndel, k = 0;
    struct goblin__intset *is = goblin__alloc(st, sizeof(*is) + n * old->width);

    if (is == NULL)
        return GOBLIN_ENOMEM;
    memset(is, 0, sizeof(*is));
    is->n = (uint32_t)n;
    is->width = old->width;
    for (size_t i = 0; i < old->n; i++) {
        if (del[i / 64] >> (i % 64) & 1u)
            continue;
        memcpy(is->data + k++ * old->width, old->data + i * old->width,
               old->width);
    }
    assert(k == n);
    *out = is;
    return 0;
}
