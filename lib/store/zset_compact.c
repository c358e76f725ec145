/* zset_compact.c - the compact form of small sorted sets: one block of
 * entries in (score, member) order (layout in zset_impl.h).
 *
 * Invariants: entries are strictly increasing in (score, member bytes);
 * count is their number and used their bytes plus the header; used <= cap,
 * and cap is the size the block was allocated with. Writes that grow the
 * block reserve first, so once they start they cannot fail.
 */
#include <assert.h>

#include "zset_impl.h"

#define I48_MAX 140737488355327.0

static size_t score_size(double s, uint8_t flags)
{
    int64_t v;

    /* -0.0 passes as the integer 0: Redis's listpack keeps no signed
     * zero either (ZADD z -0 m; ZSCORE z m gives "0" while compact);
     * a set Redis would hold as a skiplist keeps it as a double. */
    if (!(s >= -I48_MAX - 1 && s <= I48_MAX) || (double)(int64_t)s != s ||
        ((flags & ZC_F_SKIPLIST) && s == 0 && signbit(s)))
        return 9;
    v = (int64_t)s;
    if (v >= -ZC_SMALL && v <= ZC_SMALL)
        return 1;
    if (v >= INT16_MIN && v <= INT16_MAX)
        return 3;
    if (v >= INT32_MIN && v <= INT32_MAX)
        return 5;
    return 7;
}

static size_t score_put(uint8_t *p, double s, uint8_t flags)
{
    size_t size = score_size(s, flags);
    uint64_t v;

    switch (size) {
    case 1:
        p[0] = (uint8_t)((int)s + ZC_SMALL);
        return 1;
    case 9:
        p[0] = ZC_T_F64;
        memcpy(p + 1, &s, 8);
        return 9;
    default:
        p[0] = size == 3 ? ZC_T_I16 : size == 5 ? ZC_T_I32 : ZC_T_I48;
        v = (uint64_t)(int64_t)s;
        for (size_t i = 0; i + 1 < size; i++)
            p[1 + i] = (uint8_t)(v >> (8 * i));
        return size;
    }
}

size_t goblin__zc_entry_size(size_t len, double s, uint8_t flags)
{
    return 1 + len + score_size(s, flags);
}

static struct zc_hdr *hdr(void *obj)
{
    return obj;
}

void *goblin__zc_new(goblin_store *st, size_t cap)
{
    struct zc_hdr *h;

    if (cap < ZC_HDR)
        cap = ZC_HDR;
    if (cap > UINT16_MAX)
        return NULL;
    h = goblin__alloc(st, cap);
    if (h == NULL)
        return NULL;
    memset(h, 0, ZC_HDR);
    h->kind = ZK_COMPACT;
    h->used = ZC_HDR;
    h->cap = (uint16_t)cap;
    return h;
}

void goblin__zc_free(goblin_store *st, void *obj)
{
    goblin__free(st, obj, hdr(obj)->cap);
}

/* Bytes of the entry at p, without decoding its score. */
static inline size_t entry_skip(const uint8_t *p)
{
    size_t len = p[0];

    return 2 + len + zc_tag_extra(p[1 + len]);
}

/* Whether the entry at p holds member m (len bytes, last 8 of them in
 * tail). Members often share a prefix ("user:..."), so the last eight
 * bytes go first. */
static inline bool entry_is(const uint8_t *p, const void *m, size_t len,
                            uint64_t tail)
{
    if (p[0] != len)
        return false;
    if (len >= 8 && goblin__ld64(p + 1 + len - 8) != tail)
        return false;
    return goblin__bytes_eq(p + 1, m, len);
}

static inline uint64_t tail_of(const void *m, size_t len)
{
    return len >= 8 ? goblin__ld64((const uint8_t *)m + len - 8) : 0;
}

int goblin__zc_find(const void *obj, const void *m, size_t len, struct zc_ent *e,
                    size_t *rank)
{
    const uint8_t *p = zc_first(obj), *end = zc_end(obj);
    uint64_t tail = tail_of(m, len);

    for (size_t r = 0; p < end; r++) {
        if (entry_is(p, m, len, tail)) {
            if (e != NULL)
                zc_decode(p, e);
            if (rank != NULL)
                *rank = r;
            return 1;
        }
        p += entry_skip(p);
    }
    return 0;
}

size_t goblin__zc_offset_of_rank(const void *obj, size_t r)
{
    const uint8_t *p = zc_first(obj);

    while (r-- > 0)
        p += entry_skip(p);
    return (size_t)(p - (const uint8_t *)obj);
}

size_t goblin__zc_rank_score(const void *obj, double s, bool excl)
{
    const uint8_t *p = zc_first(obj), *end = zc_end(obj);
    size_t r = 0;
    struct zc_ent e;

    for (; p < end; p += e.size, r++) {
        zc_decode(p, &e);
        if (excl ? e.score > s : e.score >= s)
            break;
    }
    return r;
}

size_t goblin__zc_rank_lex(const void *obj, const void *m, size_t len, bool excl)
{
    const uint8_t *p = zc_first(obj), *end = zc_end(obj);
    size_t r = 0;

    for (; p < end; p += entry_skip(p), r++) {
        int c = goblin__bytes_cmp(p + 1, p[0], m, len);

        if (excl ? c > 0 : c >= 0)
            break;
    }
    return r;
}

int goblin__zc_reserve(goblin_store *st, void **objp, size_t cap)
{
    struct zc_hdr *h = *objp;

    if (cap <= h->cap)
        return 0;
    if (cap > UINT16_MAX)
        return GOBLIN_ELIMIT;
    h = goblin__realloc(st, h, h->cap, cap);
    if (h == NULL)
        return GOBLIN_ENOMEM;
    h->cap = (uint16_t)cap;
    *objp = h;
    return 0;
}

void goblin__zc_insert(void *obj, const void *m, size_t len, double s)
{
    struct zc_hdr *h = hdr(obj);
    uint8_t *p = (uint8_t *)obj + ZC_HDR, *end = (uint8_t *)obj + h->used;
    size_t size = goblin__zc_entry_size(len, s, h->flags);
    struct zc_ent e;

    assert(h->used + size <= h->cap);
    for (; p < end; p += e.size) {
        zc_decode(p, &e);
        if (e.score > s || (e.score == s && goblin__bytes_cmp(e.m, e.len, m, len) > 0))
            break;
    }
    memmove(p + size, p, (size_t)(end - p));
    p[0] = (uint8_t)len;
    if (len > 0)
        memcpy(p + 1, m, len);
    score_put(p + 1 + len, s, h->flags);
    h->used = (uint16_t)(h->used + size);
    h->count++;
}

void goblin__zc_delete(void *obj, size_t r, size_t n)
{
    struct zc_hdr *h = hdr(obj);
    size_t a = goblin__zc_offset_of_rank(obj, r), b = a;
    uint8_t *base = obj;

    for (size_t i = 0; i < n; i++)
        b += entry_skip(base + b);
    memmove(base + a, base + b, h->used - b);
    h->used = (uint16_t)(h->used - (b - a));
    h->count = (uint16_t)(h->count - n);
}

void goblin__zc_shrink(goblin_store *st, void **objp)
{
    struct zc_hdr *h = *objp;
    void *n;

    if (h->cap == h->used)
        return;
    n = goblin__realloc(st, h, h->cap, h->used);
    if (n == NULL)
        return; /* keeps the slack; cap says so */
    h = n;
    h->cap = h->used;
    *objp = n;
}

/* A member whose entry keeps its size moves in place: one scan finds it,
 * one finds its new place, one memmove shifts what lies between. */
static bool move_in_place(void *obj, const struct zchange *c)
{
    uint8_t *base = obj, *p = base + ZC_HDR, *end = base + hdr(obj)->used;
    uint8_t flags = hdr(obj)->flags;
    size_t size = goblin__zc_entry_size(c->len, c->score, flags), a = 0, t;
    struct zc_ent e;

    for (uint64_t tail = tail_of(c->m, c->len); p < end; p += entry_skip(p))
        if (entry_is(p, c->m, c->len, tail))
            break;
    assert(p < end);
    if (entry_skip(p) != size)
        return false;
    a = (size_t)(p - base);
    for (p = base + ZC_HDR; p < end; p += e.size) {
        zc_decode(p, &e);
        if ((size_t)(p - base) == a)
            continue;
        if (e.score > c->score ||
            (e.score == c->score && goblin__bytes_cmp(e.m, e.len, c->m, c->len) > 0))
            break;
    }
    t = (size_t)(p - base);
    if (t > a) {
        memmove(base + a, base + a + size, t - a - size);
        t -= size;
    } else {
        memmove(base + t + size, base + t, a - t);
    }
    base[t] = (uint8_t)c->len;
    if (c->len > 0)
        memcpy(base + t + 1, c->m, c->len);
    score_put(base + t + 1 + c->len, c->score, flags);
    return true;
}

int goblin__zc_apply(goblin_store *st, void **objp, const struct zchange *c,
                     size_t n)
{
    size_t need = hdr(*objp)->used;
    int rc;

    if (n == 1 && c->exists && move_in_place(*objp, c))
        return 0;
    for (size_t i = 0; i < n; i++)
        need += goblin__zc_entry_size(c[i].len, c[i].score, hdr(*objp)->flags);
    if ((rc = goblin__zc_reserve(st, objp, need)) != 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        size_t r;

        if (c[i].exists) {
            int found = goblin__zc_find(*objp, c[i].m, c[i].len, NULL, &r);

            assert(found);
            (void)found;
            goblin__zc_delete(*objp, r, 1);
        }
        goblin__zc_insert(*objp, c[i].m, c[i].len, c[i].score);
    }
    goblin__zc_shrink(st, objp);
    return 0;
}

int goblin__zc_to_full(goblin_store *st, const void *obj, struct zfull **out)
{
    double scores[GOBLIN__ZSET_COMPACT_MAX_ENTRIES];
    uint32_t ids[GOBLIN__ZSET_COMPACT_MAX_ENTRIES];
    const uint8_t *p = zc_first(obj), *end = zc_end(obj);
    size_t n = 0;
    struct zfull *z = goblin__zf_new(st);
    struct zc_ent e;
    int rc = 0;

    if (z == NULL)
        return GOBLIN_ENOMEM;
    assert(zc_hdr(obj)->count <= GOBLIN__ZSET_COMPACT_MAX_ENTRIES);
    for (; p < end; p += e.size, n++) {
        zc_decode(p, &e);
        scores[n] = e.score;
        rc = goblin__za_append(st, &z->ar, e.m, e.len, e.score, &ids[n]);
        if (rc == 0)
            rc = goblin__swiss_insert(st, &z->idx, &goblin__zf_swiss_ops, z,
                                      zf_hash(z, e.m, e.len), ids[n]);
        if (rc != 0)
            goto fail;
    }
    if ((rc = goblin__zt_build(st, &z->tree, scores, ids, n)) != 0)
        goto fail;
    *out = z;
    return 0;
fail:
    goblin__zf_free(st, z);
    return rc;
}
