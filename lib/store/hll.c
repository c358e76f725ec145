/* hll.c - HyperLogLog (hll.h): Redis's dense and sparse representations,
 * its sparse update (hllSparseSet: split a run, then merge equal
 * neighbours), promotion to dense past hll-sparse-max-bytes or a run
 * value above 32, and Ertl's cardinality estimate (hllCount), all as in
 * Redis 7.0's hyperloglog.c so that values and counts are identical.
 *
 * A sparse HLL is edited in a working copy with room for the three bytes
 * a split can add, then stored back whole, so a call that runs out of
 * memory changes nothing; a PFADD that meets corrupt runs keeps what the
 * elements before set, as Redis's in-place edit does. A dense HLL held as
 * a raw string is updated in place: every register write there succeeds.
 */
#include <math.h>

#include "hll.h"

#include "bitmap.h"
#include "goblin/numtext.h"
#include "goblin/str.h"
#include "store.h"

#define P 14
#define Q (64 - P)
#define REGS GOBLIN__HLL_REGISTERS
#define HDR GOBLIN__HLL_HDR
#define DENSE_SIZE GOBLIN__HLL_DENSE_SIZE
#define REG_BYTES (DENSE_SIZE - HDR)
#define ENC_DENSE 0
#define ENC_SPARSE 1
#define ALPHA_INF 0.721347520444481703680 /* 0.5 / ln 2 */

#define SP_IS_ZERO(p) ((*(p) & 0xc0) == 0)
#define SP_IS_XZERO(p) ((*(p) & 0xc0) == 0x40)
#define SP_IS_VAL(p) (*(p) & 0x80)
#define SP_ZERO_LEN(p) ((*(p) & 0x3f) + 1)
/* An XZERO's second byte past the value's end reads as 0: the NUL that
 * ends every Redis string, so a value cut there counts as in Redis and
 * nothing past the value is read. */
#define SP_XZERO_LEN(p) \
    ((((*(p) & 0x3f) << 8) | ((p) + 1 < end ? *((p) + 1) : 0)) + 1)
#define SP_VAL_VALUE(p) (((*(p) >> 2) & 0x1f) + 1)
#define SP_VAL_LEN(p) ((*(p) & 0x3) + 1)
#define SP_VAL_MAX_VALUE 32
#define SP_VAL_MAX_LEN 4
#define SP_ZERO_MAX_LEN 64
#define SP_XZERO_MAX_LEN 16384

static inline void sp_val_set(uint8_t *p, int val, int len)
{
    *p = (uint8_t)(((val - 1) << 2 | (len - 1)) | 0x80);
}

static inline void sp_zero_set(uint8_t *p, int len)
{
    *p = (uint8_t)(len - 1);
}

static inline void sp_xzero_set(uint8_t *p, int len)
{
    int l = len - 1;

    p[0] = (uint8_t)((l >> 8) | 0x40);
    p[1] = (uint8_t)(l & 0xff);
}

uint64_t goblin__murmur64a(const void *key, size_t len, uint64_t seed)
{
    const uint64_t m = 0xc6a4a7935bd1e995ull;
    const int r = 47;
    const uint8_t *data = key;
    const uint8_t *end = data + (len - (len & 7));
    uint64_t h = seed ^ (len * m);

    for (; data != end; data += 8) {
        uint64_t k = 0;

        for (int i = 7; i >= 0; i--) /* little-endian, as Redis reads it */
            k = (k << 8) | data[i];
        k *= m;
        k ^= k >> r;
        k *= m;
        h ^= k;
        h *= m;
    }
    switch (len & 7) {
    case 7: h ^= (uint64_t)data[6] << 48; /* fall through */
    case 6: h ^= (uint64_t)data[5] << 40; /* fall through */
    case 5: h ^= (uint64_t)data[4] << 32; /* fall through */
    case 4: h ^= (uint64_t)data[3] << 24; /* fall through */
    case 3: h ^= (uint64_t)data[2] << 16; /* fall through */
    case 2: h ^= (uint64_t)data[1] << 8;  /* fall through */
    case 1:
        h ^= (uint64_t)data[0];
        h *= m;
        break;
    default:
        break;
    }
    h ^= h >> r;
    h *= m;
    h ^= h >> r;
    return h;
}

int goblin__hll_patlen(const void *ele, size_t len, long *reg)
{
    uint64_t hash = goblin__murmur64a(ele, len, 0xadc83b19ull), bit = 1;
    int count = 1;

    *reg = (long)(hash & (REGS - 1));
    hash >>= P;
    hash |= (uint64_t)1 << Q; /* the loop ends, count <= Q + 1 */
    while ((hash & bit) == 0) {
        count++;
        bit <<= 1;
    }
    return count;
}

/* ---- dense registers (the last one does not reach a byte past) ---- */

static inline unsigned dense_get(const uint8_t *r, unsigned i)
{
    unsigned byte = i * 6 / 8, fb = i * 6 & 7;
    unsigned b0 = r[byte], b1 = byte + 1 < REG_BYTES ? r[byte + 1] : 0;

    return ((b0 >> fb) | (b1 << (8 - fb))) & 63;
}

static inline void dense_put(uint8_t *r, unsigned i, unsigned v)
{
    unsigned byte = i * 6 / 8, fb = i * 6 & 7;

    r[byte] = (uint8_t)((r[byte] & ~(63u << fb)) | (v << fb));
    if (byte + 1 < REG_BYTES)
        r[byte + 1] = (uint8_t)((r[byte + 1] & ~(63u >> (8 - fb))) |
                                (v >> (8 - fb)));
}

static int dense_set(uint8_t *r, long index, uint8_t count)
{
    if (count <= dense_get(r, (unsigned)index))
        return 0;
    dense_put(r, (unsigned)index, count);
    return 1;
}

/* ---- the working copy ---- */

struct hll {
    goblin_store *st;
    uint8_t *p;
    size_t len, cap;
};

static void hll_drop(struct hll *h)
{
    if (h->p != NULL)
        goblin__free(h->st, h->p, h->cap);
    h->p = NULL;
}

/* A copy of v with room for a split and the merge's one byte of look
 * ahead (Redis reads the sds terminator there). */
static int hll_copy(struct hll *h, goblin_store *st, const uint8_t *v,
                    size_t len)
{
    h->st = st;
    h->len = len;
    h->cap = len + 4;
    if ((h->p = goblin__alloc(st, h->cap)) == NULL)
        return GOBLIN_ENOMEM;
    memcpy(h->p, v, len);
    memset(h->p + len, 0, 4);
    return 0;
}

/* createHLLObject: an empty sparse HLL, one XZERO run. */
static int hll_empty(struct hll *h, goblin_store *st)
{
    uint8_t v[HDR + 2] = {'H', 'Y', 'L', 'L', ENC_SPARSE};

    sp_xzero_set(v + HDR, REGS);
    return hll_copy(h, st, v, sizeof(v));
}

static inline void invalidate(uint8_t *hdr)
{
    hdr[15] |= 1u << 7;
}

/* hllSparseToDense: 0, GOBLIN__EHLL_CORRUPT or GOBLIN_ENOMEM. */
static int hll_to_dense(struct hll *h)
{
    uint8_t *d, *p = h->p + HDR, *end = h->p + h->len;
    int idx = 0, runlen, regval;

    if (h->p[4] == ENC_DENSE)
        return 0;
    if ((d = goblin__alloc(h->st, DENSE_SIZE)) == NULL)
        return GOBLIN_ENOMEM;
    memset(d, 0, DENSE_SIZE);
    memcpy(d, h->p, HDR); /* magic and cached cardinality */
    d[4] = ENC_DENSE;
    while (p < end) {
        if (SP_IS_ZERO(p)) {
            idx += SP_ZERO_LEN(p);
            p++;
        } else if (SP_IS_XZERO(p)) {
            idx += SP_XZERO_LEN(p);
            p += 2;
        } else {
            runlen = SP_VAL_LEN(p);
            regval = SP_VAL_VALUE(p);
            if (runlen + idx > REGS)
                break;
            while (runlen--)
                dense_put(d + HDR, (unsigned)idx++, (unsigned)regval);
            p++;
        }
    }
    /* A run past the last register stops the scan early: corrupt too. */
    if (p < end || idx != REGS) {
        goblin__free(h->st, d, DENSE_SIZE);
        return GOBLIN__EHLL_CORRUPT;
    }
    hll_drop(h);
    h->p = d;
    h->len = h->cap = DENSE_SIZE;
    return 0;
}

static int promote(struct hll *h, long index, uint8_t count)
{
    int r = hll_to_dense(h);

    if (r != 0)
        return r;
    return dense_set(h->p + HDR, index, count);
}

/* Step 4 of hllSparseSet: merges adjacent VAL runs of equal value,
 * scanning up to five opcodes from prev. */
static void sparse_merge(struct hll *h, uint8_t *p)
{
    uint8_t *end = h->p + h->len;
    int scanlen = 5;

    while (p < end && scanlen--) {
        if (SP_IS_XZERO(p)) {
            p += 2;
            continue;
        } else if (SP_IS_ZERO(p)) {
            p++;
            continue;
        }
        if (p + 1 < end && SP_IS_VAL(p + 1)) {
            int v1 = SP_VAL_VALUE(p), v2 = SP_VAL_VALUE(p + 1);

            if (v1 == v2) {
                int len = SP_VAL_LEN(p) + SP_VAL_LEN(p + 1);

                if (len <= SP_VAL_MAX_LEN) {
                    sp_val_set(p + 1, v1, len);
                    memmove(p, p + 1, (size_t)(end - p));
                    h->len--;
                    end--;
                    continue;
                }
            }
        }
        p++;
    }
    invalidate(h->p);
}

/* The split of the run at p (covering first..last) around index. */
static int sparse_split(uint8_t *seq, const uint8_t *p, bool zero,
                        long first, long last, long index, uint8_t count)
{
    uint8_t *n = seq;
    int curval = zero ? 0 : SP_VAL_VALUE(p);

    for (int side = 0; side < 2; side++) {
        long len = side == 0 ? index - first : last - index;

        if (side == 1) {
            sp_val_set(n++, count, 1);
        }
        if (len == 0)
            continue;
        if (!zero) {
            sp_val_set(n++, curval, (int)len);
        } else if (len > SP_ZERO_MAX_LEN) {
            sp_xzero_set(n, (int)len);
            n += 2;
        } else {
            sp_zero_set(n++, (int)len);
        }
    }
    return (int)(n - seq);
}

/* Room for a split's three bytes and the merge's look ahead, as
 * sdsMakeRoomFor(3) makes it before every sparse update. */
static int hll_reserve(struct hll *h)
{
    size_t cap = h->len * 2 + 4;
    uint8_t *p;

    if (h->cap >= h->len + 4)
        return 0;
    if ((p = goblin__realloc(h->st, h->p, h->cap, cap)) == NULL)
        return GOBLIN_ENOMEM;
    memset(p + h->len, 0, cap - h->len);
    h->p = p;
    h->cap = cap;
    return 0;
}

/* hllSparseSet: 1 (updated), 0, or GOBLIN__EHLL_CORRUPT / GOBLIN_ENOMEM
 * (from promotion). */
static int sparse_set(struct hll *h, long index, uint8_t count,
                      size_t sparse_max)
{
    uint8_t *sparse, *p, *end, *prev = NULL, *next, seq[5];
    long first = 0, span = 0, runlen, oplen;
    bool is_zero, is_xzero, is_val;
    int seqlen, deltalen;

    if (count > SP_VAL_MAX_VALUE)
        return promote(h, index, count);
    if (hll_reserve(h) != 0)
        return GOBLIN_ENOMEM;
    sparse = p = h->p + HDR;
    end = h->p + h->len;
    while (p < end) {
        oplen = 1;
        if (SP_IS_ZERO(p)) {
            span = SP_ZERO_LEN(p);
        } else if (SP_IS_VAL(p)) {
            span = SP_VAL_LEN(p);
        } else {
            span = SP_XZERO_LEN(p);
            oplen = 2;
        }
        if (index <= first + span - 1)
            break;
        prev = p;
        p += oplen;
        first += span;
    }
    if (span == 0 || p >= end)
        return GOBLIN__EHLL_CORRUPT;
    next = SP_IS_XZERO(p) ? p + 2 : p + 1;
    if (next >= end)
        next = NULL;
    is_zero = SP_IS_ZERO(p);
    is_xzero = SP_IS_XZERO(p);
    is_val = !is_zero && !is_xzero;
    runlen = is_zero ? SP_ZERO_LEN(p) : is_xzero ? SP_XZERO_LEN(p)
                                                 : SP_VAL_LEN(p);
    if (is_val) {
        if (SP_VAL_VALUE(p) >= count)
            return 0;
        if (runlen == 1) {
            sp_val_set(p, count, 1);
            goto updated;
        }
    }
    if (is_zero && runlen == 1) {
        sp_val_set(p, count, 1);
        goto updated;
    }
    seqlen = sparse_split(seq, p, !is_val, first, first + span - 1, index,
                          count);
    deltalen = seqlen - (is_xzero ? 2 : 1);
    if (deltalen > 0 && h->len + (size_t)deltalen > sparse_max)
        return promote(h, index, count);
    if (deltalen != 0 && next != NULL)
        memmove(next + deltalen, next, (size_t)(end - next));
    h->len = (size_t)((long)h->len + deltalen);
    memcpy(p, seq, (size_t)seqlen);
updated:
    sparse_merge(h, prev != NULL ? prev : sparse);
    return 1;
}

/* ---- counting ---- */

static double sigma(double x)
{
    double zp, y = 1, z = x;

    if (x == 1.)
        return INFINITY;
    do {
        x *= x;
        zp = z;
        z += x * y;
        y += y;
    } while (zp != z);
    return z;
}

static double tau(double x)
{
    double zp, y = 1.0, z = 1 - x;

    if (x == 0. || x == 1.)
        return 0.;
    do {
        x = sqrt(x);
        zp = z;
        y *= 0.5;
        z -= pow(1 - x, 2) * y;
    } while (zp != z);
    return z / 3;
}

static uint64_t estimate(const int *histo)
{
    double m = REGS, z = m * tau((m - histo[Q + 1]) / m);

    for (int j = Q; j >= 1; --j) {
        z += histo[j];
        z *= 0.5;
    }
    z += m * sigma(histo[0] / m);
    return (uint64_t)llroundl(ALPHA_INF * m * m / z);
}

/* Register histogram of an HLL value; false when its sparse runs do not
 * cover every register. */
static bool histo_of(const uint8_t *v, size_t len, int *histo)
{
    const uint8_t *p = v + HDR, *end = v + len;
    int idx = 0, runlen;

    if (v[4] == ENC_DENSE) {
        for (unsigned i = 0; i < REGS; i++)
            histo[dense_get(p, i)]++;
        return true;
    }
    while (p < end) {
        if (SP_IS_ZERO(p)) {
            runlen = SP_ZERO_LEN(p);
            histo[0] += runlen;
            p++;
        } else if (SP_IS_XZERO(p)) {
            runlen = SP_XZERO_LEN(p);
            histo[0] += runlen;
            p += 2;
        } else {
            runlen = SP_VAL_LEN(p);
            histo[SP_VAL_VALUE(p)] += runlen;
            p++;
        }
        idx += runlen;
    }
    return idx == REGS;
}

/* hllMerge: max[i] = MAX(max[i], register i of v). */
static int merge_into(uint8_t *max, const uint8_t *v, size_t len)
{
    const uint8_t *p = v + HDR, *end = v + len;
    long i = 0, runlen, regval;

    if (v[4] == ENC_DENSE) {
        for (unsigned j = 0; j < REGS; j++) {
            uint8_t r = (uint8_t)dense_get(p, j);

            if (r > max[j])
                max[j] = r;
        }
        return 0;
    }
    while (p < end) {
        if (SP_IS_ZERO(p)) {
            i += SP_ZERO_LEN(p);
            p++;
        } else if (SP_IS_XZERO(p)) {
            i += SP_XZERO_LEN(p);
            p += 2;
        } else {
            runlen = SP_VAL_LEN(p);
            regval = SP_VAL_VALUE(p);
            if (runlen + i > REGS)
                break;
            while (runlen--) {
                if (regval > max[i])
                    max[i] = (uint8_t)regval;
                i++;
            }
            p++;
        }
    }
    return p >= end && i == REGS ? 0 : GOBLIN__EHLL_CORRUPT;
}

bool goblin__hll_valid(struct goblin_slice v)
{
    const uint8_t *p = v.ptr;

    if (v.len < HDR || memcmp(p, "HYLL", 4) != 0 || p[4] > ENC_SPARSE)
        return false;
    return p[4] != ENC_DENSE || v.len == DENSE_SIZE;
}

/* The HLL at key: 1 with *v, 0 absent, or an error. */
static int hll_get(goblin_store *st, struct goblin_slice key,
                   struct goblin_slice *v)
{
    int r = goblin_str_get(st, key, v);

    if (r == 1 && !goblin__hll_valid(*v))
        return GOBLIN__EHLL_NOT;
    return r;
}

/* Stores the working copy under key, keeping its deadline (the key
 * existed: found) or with none. */
static int hll_store(goblin_store *st, struct goblin_slice key,
                     const struct hll *h, bool found)
{
    uint8_t *dst = goblin__str_put_raw(st, key, h->len, found);

    if (dst == NULL)
        return GOBLIN_ENOMEM;
    memcpy(dst, h->p, h->len);
    goblin__key_changed(st, key);
    return 0;
}

/* PFADD on a dense HLL held raw: in place, nothing can fail. */
static int add_dense_in_place(goblin_store *st, struct goblin_slice key,
                              const struct goblin_slice *elems, size_t n)
{
    uint8_t *p;
    size_t len;
    int updated = 0;
    long reg;

    goblin__str_grow_zero(st, key, 0, &p, &len);
    for (size_t i = 0; i < n; i++) {
        uint8_t c = (uint8_t)goblin__hll_patlen(elems[i].ptr, elems[i].len,
                                                &reg);

        updated |= dense_set(p + HDR, reg, c);
    }
    if (updated) {
        invalidate(p);
        goblin__key_changed(st, key);
    }
    return updated;
}

int goblin__hll_add(goblin_store *st, struct goblin_slice key,
                    const struct goblin_slice *elems, size_t n,
                    size_t sparse_max)
{
    struct goblin_slice v;
    struct hll h = {0};
    int r, updated = 0;
    long reg;

    goblin__write_begin(st);
    if ((r = hll_get(st, key, &v)) < 0)
        return r;
    if (r == 1 && ((const uint8_t *)v.ptr)[4] == ENC_DENSE)
        return add_dense_in_place(st, key, elems, n);
    if ((r == 1 ? hll_copy(&h, st, v.ptr, v.len) : hll_empty(&h, st)) != 0)
        return GOBLIN_ENOMEM;
    updated = r == 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = (uint8_t)goblin__hll_patlen(elems[i].ptr, elems[i].len,
                                                &reg);
        int s = h.p[4] == ENC_DENSE ? dense_set(h.p + HDR, reg, c)
                                    : sparse_set(&h, reg, c, sparse_max);

        if (s < 0) {
            /* Redis keeps the registers the elements before this one
             * set (the value is edited in place there), and the error
             * stands: corrupt runs past them are found only now. */
            if (updated && s == GOBLIN__EHLL_CORRUPT &&
                hll_store(st, key, &h, true) < 0)
                s = GOBLIN_ENOMEM;
            hll_drop(&h);
            return s;
        }
        updated |= s;
    }
    if (updated) {
        invalidate(h.p);
        r = hll_store(st, key, &h, r == 1);
    }
    hll_drop(&h);
    return r < 0 ? r : updated;
}

static int count_one(goblin_store *st, struct goblin_slice key,
                     uint64_t *card)
{
    struct goblin_slice v;
    int histo[64] = {0};
    uint8_t *p;
    size_t len;
    int r;

    goblin__write_begin(st);
    if ((r = hll_get(st, key, &v)) <= 0) {
        *card = 0;
        return r;
    }
    p = (uint8_t *)v.ptr;
    if ((p[15] & 0x80) == 0) {
        *card = 0;
        for (int i = 7; i >= 0; i--)
            *card = (*card << 8) | p[8 + i];
        return 0;
    }
    if (!histo_of(p, v.len, histo))
        return GOBLIN__EHLL_CORRUPT;
    *card = estimate(histo);
    /* The cache lives in the value: a PFCOUNT writes it, as in Redis. */
    if ((r = goblin__str_grow_zero(st, key, 0, &p, &len)) < 0)
        return r;
    for (int i = 0; i < 8; i++)
        p[8 + i] = (uint8_t)(*card >> (8 * i));
    goblin__key_changed(st, key);
    return 0;
}

/* The registers of the union of keys into max (REGS bytes, zeroed);
 * *dense: one of them is dense. */
static int union_of(goblin_store *st, const struct goblin_slice *keys,
                    size_t n, uint8_t *max, bool *dense)
{
    struct goblin_slice v;
    int r;

    for (size_t i = 0; i < n; i++) {
        if ((r = hll_get(st, keys[i], &v)) < 0)
            return r;
        if (r == 0)
            continue;
        if (((const uint8_t *)v.ptr)[4] == ENC_DENSE)
            *dense = true;
        if ((r = merge_into(max, v.ptr, v.len)) < 0)
            return r;
    }
    return 0;
}

int goblin__hll_count(goblin_store *st, const struct goblin_slice *keys,
                      size_t n, uint64_t *card)
{
    int histo[64] = {0};
    bool dense = false;
    uint8_t *max;
    int r;

    if (n == 1)
        return count_one(st, keys[0], card);
    if ((max = goblin__alloc(st, REGS)) == NULL)
        return GOBLIN_ENOMEM;
    memset(max, 0, REGS);
    if ((r = union_of(st, keys, n, max, &dense)) == 0) {
        for (unsigned i = 0; i < REGS; i++)
            histo[max[i]]++;
        *card = estimate(histo);
    }
    goblin__free(st, max, REGS);
    return r;
}

/* PFMERGE's writes of max into h, in register order as Redis makes them
 * (a sparse failure is ignored there too). */
static int merge_write(struct hll *h, const uint8_t *max, size_t sparse_max)
{
    for (long j = 0; j < REGS; j++) {
        int r;

        if (max[j] == 0)
            continue;
        r = h->p[4] == ENC_DENSE ? dense_set(h->p + HDR, j, max[j])
                                 : sparse_set(h, j, max[j], sparse_max);
        if (r == GOBLIN_ENOMEM)
            return r;
    }
    invalidate(h->p);
    return 0;
}

int goblin__hll_merge(goblin_store *st, struct goblin_slice dst,
                      const struct goblin_slice *keys, size_t n,
                      size_t sparse_max)
{
    struct goblin_slice v;
    struct hll h = {0};
    bool dense = false;
    uint8_t *max;
    int r, found;

    goblin__write_begin(st);
    if ((max = goblin__alloc(st, REGS)) == NULL)
        return GOBLIN_ENOMEM;
    memset(max, 0, REGS);
    if ((r = union_of(st, keys, n, max, &dense)) < 0)
        goto out;
    if ((found = hll_get(st, dst, &v)) < 0) {
        r = found;
        goto out;
    }
    r = found ? hll_copy(&h, st, v.ptr, v.len) : hll_empty(&h, st);
    if (r == 0 && dense)
        r = hll_to_dense(&h);
    if (r == 0)
        r = merge_write(&h, max, sparse_max);
    if (r == 0)
        r = hll_store(st, dst, &h, found == 1);
out:
    hll_drop(&h);
    goblin__free(st, max, REGS);
    return r;
}

int goblin__hll_debug_view(goblin_store *st, struct goblin_slice key,
                           struct goblin_slice *v)
{
    uint8_t *p;
    size_t len;
    int r;

    goblin__write_begin(st);
    if ((r = hll_get(st, key, v)) <= 0)
        return r;
    if ((r = goblin__str_grow_zero(st, key, 0, &p, &len)) < 0)
        return r;
    v->ptr = p;
    v->len = len;
    return 1;
}

int goblin__hll_todense(goblin_store *st, struct goblin_slice key,
                        uint8_t *regs)
{
    struct goblin_slice v;
    struct hll h = {0};
    int r, was_sparse;

    goblin__write_begin(st);
    if ((r = hll_get(st, key, &v)) <= 0)
        return r;
    was_sparse = ((const uint8_t *)v.ptr)[4] == ENC_SPARSE;
    if (was_sparse) {
        if ((r = hll_copy(&h, st, v.ptr, v.len)) == 0 &&
            (r = hll_to_dense(&h)) == 0)
            r = hll_store(st, key, &h, true);
        hll_drop(&h);
        if (r < 0)
            return r;
        goblin_str_get(st, key, &v);
    }
    for (unsigned i = 0; regs != NULL && i < REGS; i++)
        regs[i] = (uint8_t)dense_get((const uint8_t *)v.ptr + HDR, i);
    return was_sparse;
}

/* ---- PFSELFTEST ---- */

static const char *selftest_registers(uint8_t *regs, goblin_store *st)
{
    memset(regs, 0, REG_BYTES);
    for (unsigned round = 0; round < 4; round++) {
        for (unsigned i = 0; i < REGS; i++)
            dense_put(regs, i, (unsigned)(goblin__rand64(st) & 63));
        for (unsigned i = 0; i < REGS; i++) {
            unsigned want = (unsigned)((i * 7 + round) & 63);

            dense_put(regs, i, want);
            if (dense_get(regs, i) != want)
                return "TESTFAILED Register error";
        }
        for (unsigned i = 0; i < REGS; i++)
            if (dense_get(regs, i) != ((i * 7 + round) & 63))
                return "TESTFAILED Register error";
    }
    return NULL;
}

/* Adds 1..100000 (as text) to a sparse and a dense HLL: both must count
 * the same, within six standard errors at each power of ten. */
static const char *selftest_counts(struct hll *sp, struct hll *de)
{
    double relerr = 1.04 / sqrt(REGS);
    uint64_t check = 1;
    char buf[24];
    long reg;

    for (uint64_t j = 1; j <= 100000; j++) {
        size_t len = goblin_int64_format(buf, (int64_t)j);
        uint8_t c = (uint8_t)goblin__hll_patlen(buf, len, &reg);
        int histo_s[64] = {0}, histo_d[64] = {0};

        if (sp->p[4] == ENC_DENSE)
            dense_set(sp->p + HDR, reg, c);
        else if (sparse_set(sp, reg, c, 3000) < 0)
            return "TESTFAILED sparse update";
        dense_set(de->p + HDR, reg, c);
        if (j != check)
            continue;
        check *= 10;
        if (!histo_of(sp->p, sp->len, histo_s) ||
            !histo_of(de->p, de->len, histo_d) ||
            estimate(histo_s) != estimate(histo_d))
            return "TESTFAILED sparse and dense disagree";
        double err = fabs((double)j - (double)estimate(histo_d));
        double maxerr = j == 10 ? 1 : ceil(relerr * 6 * (double)j);

        if (err > maxerr)
            return "TESTFAILED Too big error";
    }
    return NULL;
}

const char *goblin__hll_selftest(goblin_store *st)
{
    struct hll sp = {0}, de = {0};
    const char *err = "TESTFAILED out of memory";

    if (hll_empty(&sp, st) == 0 && hll_empty(&de, st) == 0 &&
        hll_to_dense(&de) == 0) {
        err = selftest_registers(de.p + HDR, st);
        if (err == NULL) {
            memset(de.p + HDR, 0, REG_BYTES);
            err = selftest_counts(&sp, &de);
        }
    }
    hll_drop(&sp);
    hll_drop(&de);
    return err;
}
