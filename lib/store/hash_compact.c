/* hash_compact.c - the compact form of a hash: one exact-size block
 * holding every pair in insertion order (layout in hash_impl.h).
 *
 * Invariants: n and ebytes fit in 16 bits (hash.c keeps a compact hash
 * within GOBLIN__HASH_COMPACT_MAX_ENTRIES pairs of at most
 * GOBLIN__HASH_COMPACT_MAX_VALUE bytes, far below that); fp[i] is the low
 * byte of goblin__hash_bytes(seed, field i); dir[k] is the offset of entry
 * 16(k+1). No entry carries the dead bit.
 */
#include <assert.h>

#include "hash.h"
#include "hash_entry.h"
#include "hash_impl.h"
#include "util/bytes_cmp.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

static inline size_t get16(const uint8_t *p)
{
    return (size_t)p[0] | (size_t)p[1] << 8;
}

static inline void put16(uint8_t *p, size_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline size_t dir_len(size_t n)
{
    return n > 0 ? (n - 1) / 16 : 0;
}

static inline const uint8_t *entries(const uint8_t *b, size_t n)
{
    return b + GOBLIN__HC_HDR + n + 2 * dir_len(n);
}

size_t goblin__hc_bytes(const uint8_t *b)
{
    size_t n = goblin__hc_len(b);

    return GOBLIN__HC_HDR + n + 2 * dir_len(n) + get16(b + 2);
}

/* Steps over one entry; sets the views and returns the next entry. */
static inline const uint8_t *entry_read(const uint8_t *p,
                                        struct goblin_slice *f,
                                        struct goblin_slice *v)
{
    size_t flen, vlen, h = goblin__ent_get_hdr(p, &flen, &vlen);

    f->ptr = p + h;
    f->len = flen;
    v->ptr = p + h + flen;
    v->len = vlen;
    return p + h + flen + vlen;
}

static inline const uint8_t *entry_skip(const uint8_t *p)
{
    size_t flen, vlen, h = goblin__ent_get_hdr(p, &flen, &vlen);

    return p + h + flen + vlen;
}

static const uint8_t *entry_at(const uint8_t *b, size_t i)
{
    size_t n = goblin__hc_len(b);
    const uint8_t *p = entries(b, n);

    if (i >= 16)
        p += get16(b + GOBLIN__HC_HDR + n + 2 * (i / 16 - 1));
    for (size_t k = i % 16; k > 0; k--)
        p = entry_skip(p);
    return p;
}

void goblin__hc_pair(const uint8_t *b, size_t i, struct goblin_slice *f,
                     struct goblin_slice *v)
{
    (void)entry_read(entry_at(b, i), f, v);
}

/* Whether the entry at p holds field; sets *v only when it does. */
static inline __attribute__((always_inline)) bool entry_is(
    const uint8_t *p, struct goblin_slice field, struct goblin_slice *v)
{
    struct goblin_slice f, val;

    (void)entry_read(p, &f, &val);
    if (f.len != field.len || !goblin__bytes_eq(f.ptr, field.ptr, f.len))
        return false;
    *v = val;
    return true;
}

/* Bit i set where fps[i] == fp, for the 16 bytes at fps. */
static inline uint32_t match16(const uint8_t *fps, uint8_t fp)
{
#ifdef __SSE2__
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)fps);

    return (uint32_t)_mm_movemask_epi8(
        _mm_cmpeq_epi8(x, _mm_set1_epi8((char)fp)));
#else
    uint32_t m = 0;

    for (int i = 0; i < 16; i++)
        m |= (uint32_t)(fps[i] == fp) << i;
    return m;
#endif
}

/* The entry of b at i: through at[] when the caller has every entry's
 * offset, else by stepping from the directory. */
static inline const uint8_t *entry_of(const uint8_t *b, const uint32_t *at,
                                      size_t i)
{
    return at != NULL ? b + at[i] : entry_at(b, i);
}

static inline __attribute__((always_inline)) int find(
    const uint8_t *b, const uint32_t *at, uint64_t h,
    struct goblin_slice field, struct goblin_slice *v)
{
    size_t n = goblin__hc_len(b), i = 0;
    const uint8_t *fps = b + GOBLIN__HC_HDR;
    uint8_t fp = (uint8_t)h;

    /* 16 fingerprints per match, the last 1-15 masked: 16 bytes from
     * there lie in the block, since each entry has a header of 2 bytes at
     * least, so n - i fingerprints and the 2n entry bytes that follow
     * them are 16 bytes or more once n >= 6. A smaller block takes the
     * byte loop. */
    for (; n >= 6 && i < n; i += 16) {
        uint32_t m = match16(fps + i, fp);

        if (n - i < 16)
            m &= (1u << (n - i)) - 1;
        for (; m != 0; m &= m - 1) {
            size_t k = i + (size_t)__builtin_ctz(m);

            if (entry_is(entry_of(b, at, k), field, v))
                return (int)k;
        }
    }
    for (; i < n; i++) {
        if (fps[i] == fp && entry_is(entry_of(b, at, i), field, v))
            return (int)i;
    }
    return -1;
}

int goblin__hc_find(const uint8_t *b, uint64_t h, struct goblin_slice field,
                    struct goblin_slice *v)
{
    return find(b, NULL, h, field, v);
}

void goblin__hc_offsets(const uint8_t *b, uint32_t *at)
{
    size_t n = goblin__hc_len(b);
    const uint8_t *p = entries(b, n);

    for (size_t i = 0; i < n; i++) {
        at[i] = (uint32_t)(p - b);
        p = entry_skip(p);
    }
}

int goblin__hc_find_at(const uint8_t *b, const uint32_t *at, uint64_t h,
                       struct goblin_slice field, struct goblin_slice *v)
{
    return find(b, at, h, field, v);
}

void goblin__hc_iter_init(struct goblin__hc_iter *it, const uint8_t *b)
{
    it->left = goblin__hc_len(b);
    it->p = entries(b, it->left);
}

bool goblin__hc_next(struct goblin__hc_iter *it, struct goblin_slice *f,
                     struct goblin_slice *v)
{
    if (it->left == 0)
        return false;
    it->p = entry_read(it->p, f, v);
    it->left--;
    return true;
}

static inline bool is_deleted(const struct goblin__hc_edit *e, size_t i)
{
    return e->del != NULL && (e->del[i / 64] >> (i % 64) & 1u);
}

/* The value pair i of the old block ends with after the edit. */
static inline struct goblin_slice new_value(const struct goblin__hc_edit *e,
                                            size_t i, struct goblin_slice v)
{
    return e->repl != NULL && e->repl[i].ptr != NULL ? e->repl[i] : v;
}

/* Counts the pairs and entry bytes of the edited block. */
static void measure(const uint8_t *old, const struct goblin__hc_edit *e,
                    size_t *n, size_t *ebytes)
{
    struct goblin__hc_iter it;
    struct goblin_slice f, v;

    *n = 0;
    *ebytes = 0;
    if (old != NULL) {
        goblin__hc_iter_init(&it, old);
        for (size_t i = 0; goblin__hc_next(&it, &f, &v); i++) {
            if (is_deleted(e, i))
                continue;
            v = new_value(e, i, v);
            *ebytes += goblin__ent_len(f.len, v.len);
            (*n)++;
        }
    }
    for (size_t j = 0; j < e->nadd; j++)
        *ebytes += goblin__ent_len(e->add[2 * j].len, e->add[2 * j + 1].len);
    *n += e->nadd;
}

struct writer {
    uint8_t *b, *fps, *dir, *ents;
    size_t k, off;
};

static void put_pair(struct writer *w, uint8_t fp, struct goblin_slice f,
                     struct goblin_slice v)
{
    if (w->k > 0 && w->k % 16 == 0)
        put16(w->dir + 2 * (w->k / 16 - 1), w->off);
    w->fps[w->k++] = fp;
    w->off += goblin__ent_put(w->ents + w->off, f.ptr, f.len, v.ptr, v.len);
}

int goblin__hc_rebuild(goblin_store *st, const uint8_t *old,
                       const struct goblin__hc_edit *e, uint8_t **out)
{
    struct goblin__hc_iter it;
    struct goblin_slice f, v;
    struct writer w;
    size_t n, ebytes, size;

    measure(old, e, &n, &ebytes);
    assert(n <= 0xFFFF && ebytes <= 0xFFFF);
    size = GOBLIN__HC_HDR + n + 2 * dir_len(n) + ebytes;
    w.b = goblin__alloc(st, size);
    if (w.b == NULL)
        return GOBLIN_ENOMEM;
    put16(w.b, n);
    put16(w.b + 2, ebytes);
    w.fps = w.b + GOBLIN__HC_HDR;
    w.dir = w.fps + n;
    w.ents = w.dir + 2 * dir_len(n);
    w.k = w.off = 0;
    if (old != NULL) {
        goblin__hc_iter_init(&it, old);
        for (size_t i = 0; goblin__hc_next(&it, &f, &v); i++) {
            if (!is_deleted(e, i))
                put_pair(&w, old[GOBLIN__HC_HDR + i], f, new_value(e, i, v));
        }
    }
    for (size_t j = 0; j < e->nadd; j++)
        put_pair(&w, (uint8_t)e->add_hash[j], e->add[2 * j],
                 e->add[2 * j + 1]);
    assert(w.k == n && w.off == ebytes);
    *out = w.b;
    return 0;
}

void goblin__hc_free(goblin_store *st, uint8_t *b)
{
    if (b != NULL)
        goblin__free(st, b, goblin__hc_bytes(b));
}
