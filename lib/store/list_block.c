/* list_block.c - the block both list forms are made of (layout in
 * list_impl.h): allocation, offsets, reading elements from either end,
 * inserting, deleting, copying and filtering in place.
 *
 * Invariants: used + n + GOBLIN__LB_HDR <= cap; nlong is the number of
 * length bytes equal to GOBLIN__LB_LONG; a block's elements are never
 * more than 65535 (a block of GOBLIN__LIST_COMPACT_MAX bytes holds at
 * most 8180 elements, each at least its length byte).
 */
#include <assert.h>

#include "list_impl.h"

static inline uint8_t *data_of(uint8_t *b)
{
    return b + GOBLIN__LB_HDR;
}

static void set_used(uint8_t *b, uint32_t v)
{
    goblin__lb_put32(b + 4, v);
}

static void set_n(uint8_t *b, uint32_t n)
{
    b[8] = (uint8_t)n;
    b[9] = (uint8_t)(n >> 8);
}

static void set_nlong(uint8_t *b, uint32_t n)
{
    b[10] = (uint8_t)n;
    b[11] = (uint8_t)(n >> 8);
}

uint8_t *goblin__lb_new(goblin_store *st, size_t cap)
{
    uint8_t *b;

    if (cap > UINT32_MAX)
        return NULL;
    b = goblin__alloc(st, cap);
    if (b == NULL)
        return NULL;
    goblin__lb_put32(b, (uint32_t)cap);
    set_used(b, 0);
    set_n(b, 0);
    set_nlong(b, 0);
    return b;
}

void goblin__lb_free_block(goblin_store *st, uint8_t *b)
{
    if (b != NULL)
        goblin__free(st, b, goblin__lb_cap(b));
}

uint8_t *goblin__lb_resize(goblin_store *st, uint8_t *b, size_t cap)
{
    uint32_t old = goblin__lb_cap(b), n = goblin__lb_n(b);
    uint8_t *nb;

    assert(cap >= GOBLIN__LB_HDR + goblin__lb_used(b) + n);
    if (cap > UINT32_MAX)
        return NULL;
    if (cap == old)
        return b;
    if (cap < old) {
        /* Move the lengths down first: the tail is about to go. Should
         * the shrink fail, put them back so b stays as it was. */
        memmove(b + cap - n, b + old - n, n);
        nb = goblin__realloc(st, b, old, cap);
        if (nb == NULL) {
            memmove(b + old - n, b + cap - n, n);
            return NULL;
        }
    } else {
        nb = goblin__realloc(st, b, old, cap);
        if (nb == NULL)
            return NULL;
        memmove(nb + cap - n, nb + old - n, n);
    }
    goblin__lb_put32(nb, (uint32_t)cap);
    return nb;
}

/* Sum of the length bytes of elements [i, j): they sit at bytes
 * cap - j .. cap - 1 - i, one run the compiler vectorises. */
static uint32_t sum_lens(const uint8_t *b, uint32_t i, uint32_t j)
{
    const uint8_t *p = b + goblin__lb_cap(b) - j;
    uint32_t s = 0;

    for (uint32_t m = 0; m < j - i; m++)
        s += p[m];
    return s;
}

uint32_t goblin__lb_dsize_fwd(const uint8_t *b, uint32_t k, uint32_t off)
{
    uint8_t l = goblin__lb_lens(b, k);

    if (l < GOBLIN__LB_LONG)
        return l;
    return 8 + goblin__lb_get32(goblin__lb_data(b) + off);
}

uint32_t goblin__lb_dsize_back(const uint8_t *b, uint32_t k, uint32_t end)
{
    uint8_t l = goblin__lb_lens(b, k);

    if (l < GOBLIN__LB_LONG)
        return l;
    return 8 + goblin__lb_get32(goblin__lb_data(b) + end - 4);
}

uint32_t goblin__lb_offset(const uint8_t *b, uint32_t k)
{
    uint32_t n = goblin__lb_n(b), off;

    if (k == n)
        return goblin__lb_used(b);
    if (goblin__lb_nlong(b) == 0)
        return k <= n / 2 ? sum_lens(b, 0, k)
                          : goblin__lb_used(b) - sum_lens(b, k, n);
    if (k <= n / 2) {
        off = 0;
        for (uint32_t i = 0; i < k; i++)
            off += goblin__lb_dsize_fwd(b, i, off);
        return off;
    }
    off = goblin__lb_used(b);
    for (uint32_t i = n; i > k; i--)
        off -= goblin__lb_dsize_back(b, i - 1, off);
    return off;
}

struct goblin_slice goblin__lb_elem(const uint8_t *b, uint32_t k,
                                    uint32_t off)
{
    const uint8_t *d = goblin__lb_data(b) + off;
    uint8_t l = goblin__lb_lens(b, k);
    struct goblin_slice s;

    if (l < GOBLIN__LB_LONG) {
        s.ptr = d;
        s.len = l;
    } else {
        s.ptr = d + 4;
        s.len = goblin__lb_get32(d);
    }
    return s;
}

/* Writes e's data at d; returns its length byte. */
static uint8_t write_elem(uint8_t *d, struct goblin_slice e)
{
    if (e.len < GOBLIN__LB_LONG) {
        if (e.len > 0)
            memcpy(d, e.ptr, e.len);
        return (uint8_t)e.len;
    }
    goblin__lb_put32(d, (uint32_t)e.len);
    memcpy(d + 4, e.ptr, e.len);
    goblin__lb_put32(d + 4 + e.len, (uint32_t)e.len);
    return GOBLIN__LB_LONG;
}

void goblin__lb_insert(uint8_t *b, uint32_t k, uint32_t off,
                       struct goblin_slice e)
{
    uint32_t cap = goblin__lb_cap(b), n = goblin__lb_n(b);
    uint32_t used = goblin__lb_used(b);
    uint32_t ds = (uint32_t)goblin__lb_cost(e.len) - 1;
    uint8_t *d = data_of(b);

    assert(goblin__lb_free(b) >= ds + 1);
    memmove(d + off + ds, d + off, used - off);
    /* Lengths of k.. move one byte down to make room for k's. */
    memmove(b + cap - n - 1, b + cap - n, n - k);
    b[cap - 1 - k] = write_elem(d + off, e);
    set_used(b, used + ds);
    set_n(b, n + 1);
    if (e.len >= GOBLIN__LB_LONG)
        set_nlong(b, goblin__lb_nlong(b) + 1);
}

void goblin__lb_delete(uint8_t *b, uint32_t k, uint32_t off, uint32_t cnt)
{
    uint32_t cap = goblin__lb_cap(b), n = goblin__lb_n(b);
    uint32_t used = goblin__lb_used(b), end = off, longs = 0;
    uint8_t *d = data_of(b);

    assert(k + cnt <= n);
    if (cnt == 0)
        return;
    if (goblin__lb_nlong(b) == 0) {
        end = off + sum_lens(b, k, k + cnt);
    } else {
        for (uint32_t i = k; i < k + cnt; i++) {
            longs += goblin__lb_lens(b, i) == GOBLIN__LB_LONG;
            end += goblin__lb_dsize_fwd(b, i, end);
        }
    }
    memmove(d + off, d + end, used - end);
    /* Lengths of k + cnt.. move cnt bytes up, over the removed ones. */
    memmove(b + cap - n + cnt, b + cap - n, n - k - cnt);
    set_used(b, used - (end - off));
    set_n(b, n - cnt);
    set_nlong(b, goblin__lb_nlong(b) - longs);
}

size_t goblin__lb_span_bytes(const uint8_t *b, uint32_t k, uint32_t off,
                             uint32_t cnt)
{
    uint32_t end = off;

    for (uint32_t i = k; i < k + cnt; i++)
        end += goblin__lb_dsize_fwd(b, i, end);
    return (size_t)(end - off) + cnt;
}

void goblin__lb_append_from(uint8_t *dst, const uint8_t *src, uint32_t k,
                            uint32_t off, uint32_t cnt)
{
    uint32_t dcap = goblin__lb_cap(dst), dn = goblin__lb_n(dst);
    uint32_t dused = goblin__lb_used(dst), end = off, longs = 0;

    for (uint32_t i = k; i < k + cnt; i++) {
        uint8_t l = goblin__lb_lens(src, i);

        longs += l == GOBLIN__LB_LONG;
        end += goblin__lb_dsize_fwd(src, i, end);
        dst[dcap - 1 - (dn + i - k)] = l;
    }
    assert(goblin__lb_free(dst) >= (end - off) + cnt);
    memcpy(data_of(dst) + dused, goblin__lb_data(src) + off, end - off);
    set_used(dst, dused + (end - off));
    set_n(dst, dn + cnt);
    set_nlong(dst, goblin__lb_nlong(dst) + longs);
}

uint32_t goblin__lb_filter(uint8_t *b, uint32_t k, struct goblin_slice e,
                           int64_t *quota)
{
    uint32_t cap = goblin__lb_cap(b), n = goblin__lb_n(b);
    uint32_t r = goblin__lb_offset(b, k), w = r, j = k, removed = 0;
    uint32_t longs = goblin__lb_nlong(b);
    uint8_t *d = data_of(b);

    for (uint32_t i = k; i < n; i++) {
        uint8_t l = b[cap - 1 - i];
        uint32_t ds = goblin__lb_dsize_fwd(b, i, r);
        struct goblin_slice s = goblin__lb_elem(b, i, r);

        if (*quota != 0 && s.len == e.len &&
            (e.len == 0 || memcmp(s.ptr, e.ptr, e.len) == 0)) {
            removed++;
            longs -= l == GOBLIN__LB_LONG;
            if (*quota > 0)
                (*quota)--;
        } else {
            if (w != r)
                memmove(d + w, d + r, ds);
            b[cap - 1 - j] = l;
            j++;
            w += ds;
        }
        r += ds;
    }
    set_used(b, w);
    set_n(b, j);
    set_nlong(b, longs);
    return removed;
}
