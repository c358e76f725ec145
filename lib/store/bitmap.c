/* bitmap.c - strings as arrays of bits: population count, first set or
 * clear bit, bit fields of 1 to 64 bits with Redis's overflow rules,
 * BITOP, and the store side of SETBIT, BITOP and BITFIELD (bitmap.h).
 *
 * Counting, scanning and BITOP go a 64-bit word at a time (loaded with
 * memcpy, so any alignment is fine); only the ragged ends go byte by
 * byte. Bit fields are read and written bit by bit, most significant
 * first, as Redis's getUnsignedBitfield does: a field spans at most nine
 * bytes, so that costs at most 64 steps. Overflow arithmetic is done on
 * unsigned numbers where Redis relies on two's complement wrapping, so
 * the results are Redis's without undefined behaviour.
 */
#include "bitmap.h"

#include "goblin/str.h"
#include "store.h"

static inline uint64_t load64(const uint8_t *p)
{
    uint64_t w;

    memcpy(&w, p, 8);
    return w;
}

static inline void store64(uint8_t *p, uint64_t w)
{
    memcpy(p, &w, 8);
}

static inline unsigned pop64(uint64_t x)
{
#ifdef __POPCNT__
    return (unsigned)__builtin_popcountll(x);
#else
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (unsigned)((x * 0x0101010101010101ull) >> 56);
#endif
}

uint64_t goblin__popcount(const uint8_t *p, size_t n)
{
    uint64_t c = 0;

    while (n >= 32) {
        c += pop64(load64(p)) + pop64(load64(p + 8)) +
             pop64(load64(p + 16)) + pop64(load64(p + 24));
        p += 32;
        n -= 32;
    }
    while (n >= 8) {
        c += pop64(load64(p));
        p += 8;
        n -= 8;
    }
    while (n-- > 0)
        c += pop64(*p++);
    return c;
}

int64_t goblin__bitpos(const uint8_t *p, size_t n, int bit)
{
    uint64_t skipw = bit ? 0 : ~(uint64_t)0;
    uint8_t skip = bit ? 0 : 0xff, b;
    size_t i = 0;

    while (i + 8 <= n && load64(p + i) == skipw)
        i += 8;
    while (i < n && p[i] == skip)
        i++;
    if (i == n)
        return bit ? -1 : (int64_t)n * 8;
    b = bit ? p[i] : (uint8_t)~p[i];
    return (int64_t)i * 8 + (__builtin_clz((unsigned)b) - 24);
}

uint64_t goblin__bitfield_get(const uint8_t *p, uint64_t off, unsigned bits)
{
    uint64_t v = 0;

    for (unsigned j = 0; j < bits; j++, off++)
        v = (v << 1) | ((p[off >> 3] >> (7 - (off & 7))) & 1);
    return v;
}

int64_t goblin__bitfield_get_signed(const uint8_t *p, uint64_t off,
                                    unsigned bits)
{
    uint64_t v = goblin__bitfield_get(p, off, bits);

    /* Propagate the field's sign bit to the bits above it. */
    if (bits < 64 && (v & ((uint64_t)1 << (bits - 1))))
        v |= ~(uint64_t)0 << bits;
    return (int64_t)v;
}

void goblin__bitfield_set(uint8_t *p, uint64_t off, unsigned bits,
                          uint64_t v)
{
    for (unsigned j = 0; j < bits; j++, off++) {
        unsigned bitval = (v >> (bits - 1 - j)) & 1;
        uint8_t mask = (uint8_t)(1u << (7 - (off & 7)));

        if (bitval)
            p[off >> 3] |= mask;
        else
            p[off >> 3] &= (uint8_t)~mask;
    }
}

int goblin__bf_overflow_u(uint64_t value, int64_t incr, unsigned bits,
                          enum goblin__bf_overflow ow, uint64_t *limit)
{
    uint64_t max = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    int64_t maxincr = (int64_t)(max - value);
    int64_t minincr = (int64_t)(0 - value);
    int dir;

    if (value > max || (incr > 0 && incr > maxincr))
        dir = 1;
    else if (incr < 0 && incr < minincr)
        dir = -1;
    else
        return 0;
    if (ow == GOBLIN__BF_WRAP)
        *limit = (value + (uint64_t)incr) & ~(~(uint64_t)0 << bits);
    else if (ow == GOBLIN__BF_SAT)
        *limit = dir > 0 ? max : 0;
    /* Redis answers 1 for a wrap either way. */
    return ow == GOBLIN__BF_WRAP ? 1 : dir;
}

int goblin__bf_overflow_s(int64_t value, int64_t incr, unsigned bits,
                          enum goblin__bf_overflow ow, int64_t *limit)
{
    int64_t max = bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
    int64_t min = -max - 1;
    int64_t maxincr = (int64_t)((uint64_t)max - (uint64_t)value);
    int64_t minincr = (int64_t)((uint64_t)min - (uint64_t)value);
    int dir;

    if (value > max || (bits != 64 && incr > maxincr) ||
        (value >= 0 && incr > 0 && incr > maxincr))
        dir = 1;
    else if (value < min || (bits != 64 && incr < minincr) ||
             (value < 0 && incr < 0 && incr < minincr))
        dir = -1;
    else
        return 0;
    if (ow == GOBLIN__BF_WRAP) {
        uint64_t c = (uint64_t)value + (uint64_t)incr;

        if (bits < 64) {
            uint64_t mask = ~(uint64_t)0 << bits;

            if (c & ((uint64_t)1 << (bits - 1)))
                c |= mask;
            else
                c &= ~mask;
        }
        *limit = (int64_t)c;
        return 1;
    }
    if (ow == GOBLIN__BF_SAT)
        *limit = dir > 0 ? max : min;
    return dir;
}

/* Combines src[0..len) into dst[0..maxlen) (first: copies it in). */
static void bitop_one(enum goblin__bitop op, uint8_t *restrict dst,
                      size_t maxlen, const uint8_t *restrict src, size_t len,
                      bool first)
{
    size_t i = 0;

    if (first || op == GOBLIN__BITOP_NOT) {
        if (op == GOBLIN__BITOP_NOT) {
            for (; i + 8 <= len; i += 8)
                store64(dst + i, ~load64(src + i));
            for (; i < len; i++)
                dst[i] = (uint8_t)~src[i];
        } else if (len != 0) {
            memcpy(dst, src, len);
        }
        memset(dst + len, 0, maxlen - len);
        return;
    }
    switch (op) {
    case GOBLIN__BITOP_AND:
        for (; i + 8 <= len; i += 8)
            store64(dst + i, load64(dst + i) & load64(src + i));
        for (; i < len; i++)
            dst[i] &= src[i];
        memset(dst + len, 0, maxlen - len);
        break;
    case GOBLIN__BITOP_OR:
        for (; i + 8 <= len; i += 8)
            store64(dst + i, load64(dst + i) | load64(src + i));
        for (; i < len; i++)
            dst[i] |= src[i];
        break;
    default:
        for (; i + 8 <= len; i += 8)
            store64(dst + i, load64(dst + i) ^ load64(src + i));
        for (; i < len; i++)
            dst[i] ^= src[i];
        break;
    }
}

void goblin__bitop_bytes(enum goblin__bitop op, uint8_t *dst, size_t maxlen,
                         const uint8_t *const *src, const size_t *len,
                         size_t n)
{
    for (size_t k = 0; k < n; k++)
        bitop_one(op, dst, maxlen, src[k], len[k], k == 0);
}

int goblin__bit_set(goblin_store *st, struct goblin_slice key, uint64_t off,
                    int on)
{
    size_t byte = (size_t)(off >> 3), len;
    unsigned shift = 7 - (unsigned)(off & 7);
    uint8_t *p;
    int r, old;

    goblin__write_begin(st);
    if ((off >> 3) >= goblin__string_limit(st))
        return GOBLIN_ESTRBIG;
    r = goblin__str_grow_zero(st, key, byte + 1, &p, &len);
    if (r < 0)
        return r;
    old = (p[byte] >> shift) & 1;
    /* As Redis: a key that did not change is not reported. */
    if (r == 1 || old != on) {
        p[byte] = (uint8_t)((p[byte] & ~(1u << shift)) |
                            ((unsigned)on << shift));
        goblin__key_changed(st, key);
    }
    return old;
}

/* The source key k of BITOP as a view (absent: empty). */
static int bitop_src(goblin_store *st, struct goblin_slice k,
                     struct goblin_slice *v)
{
    int r = goblin_str_get(st, k, v);

    if (r == 0)
        v->ptr = NULL, v->len = 0;
    return r;
}

static bool same_key(struct goblin_slice a, struct goblin_slice b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

/* BITOP into out[0..maxlen) from the sources. */
static void bitop_fill(goblin_store *st, enum goblin__bitop op, uint8_t *out,
                       size_t maxlen, const struct goblin_slice *keys,
                       size_t n)
{
    struct goblin_slice v;

    for (size_t i = 0; i < n; i++) {
        bitop_src(st, keys[i], &v);
        bitop_one(op, out, maxlen, v.ptr, v.len, i == 0);
    }
}

int64_t goblin__bit_op(goblin_store *st, enum goblin__bitop op,
                       struct goblin_slice dst,
                       const struct goblin_slice *keys, size_t n)
{
    struct goblin_slice v;
    size_t maxlen = 0, i;
    bool alias = false;
    uint32_t id;
    uint8_t *out, *tmp = NULL;
    int r;

    goblin__write_begin(st);
    for (i = 0; i < n; i++) {
        if ((r = bitop_src(st, keys[i], &v)) < 0)
            return r;
        if (v.len > maxlen)
            maxlen = v.len;
        alias = alias || same_key(keys[i], dst);
    }
    if (maxlen == 0) {
        if (goblin__key_find(st, dst, &id)) {
            goblin__key_delete_id(st, id);
            goblin__key_changed(st, dst);
        }
        return 0;
    }
    /* When dst is also a source, the result is built aside first: once
     * dst holds its new record, the old bytes are no longer found by key. */
    if (alias) {
        if ((tmp = goblin__alloc(st, maxlen)) == NULL)
            return GOBLIN_ENOMEM;
        bitop_fill(st, op, tmp, maxlen, keys, n);
    }
    if ((out = goblin__str_put_raw(st, dst, maxlen, false)) == NULL) {
        if (tmp != NULL)
            goblin__free(st, tmp, maxlen);
        return GOBLIN_ENOMEM;
    }
    if (tmp != NULL) {
        memcpy(out, tmp, maxlen);
        goblin__free(st, tmp, maxlen);
    } else {
        bitop_fill(st, op, out, maxlen, keys, n);
    }
    goblin__key_changed(st, dst);
    return (int64_t)maxlen;
}

/* GET of one field from a string of len bytes, read as padded with zeros
 * (Redis copies the nine bytes a field can span into a zeroed buffer). */
static int64_t field_read(const uint8_t *p, size_t len,
                          const struct goblin__bf_op *op)
{
    uint8_t buf[9] = {0};
    uint64_t byte = op->off >> 3;

    for (unsigned i = 0; i < 9 && p != NULL && byte + i < len; i++)
        buf[i] = p[byte + i];
    if (op->sign)
        return goblin__bitfield_get_signed(buf, op->off & 7, op->bits);
    return (int64_t)goblin__bitfield_get(buf, op->off & 7, op->bits);
}

/* SET or INCRBY of one field in p; returns whether it changed. */
static bool field_write(uint8_t *p, const struct goblin__bf_op *op,
                        struct goblin__bf_result *res)
{
    bool incr = op->kind == GOBLIN__BF_INCRBY;
    uint64_t oldv, newv;
    int of;

    if (op->sign) {
        int64_t o = goblin__bitfield_get_signed(p, op->off, op->bits);
        int64_t n = incr ? (int64_t)((uint64_t)o + (uint64_t)op->value)
                         : op->value;
        int64_t lim = 0;

        of = goblin__bf_overflow_s(incr ? o : n, incr ? op->value : 0,
                                   op->bits, op->ow, &lim);
        if (of)
            n = lim;
        res->value = incr ? n : o;
        oldv = (uint64_t)o;
        newv = (uint64_t)n;
    } else {
        uint64_t o = goblin__bitfield_get(p, op->off, op->bits);
        uint64_t n = incr ? o + (uint64_t)op->value : (uint64_t)op->value;
        uint64_t lim = 0;

        of = goblin__bf_overflow_u(incr ? o : n, incr ? op->value : 0,
                                   op->bits, op->ow, &lim);
        if (of)
            n = lim;
        res->value = (int64_t)(incr ? n : o);
        oldv = o;
        newv = n;
    }
    res->failed = of != 0 && op->ow == GOBLIN__BF_FAIL;
    if (res->failed)
        return false;
    goblin__bitfield_set(p, op->off, op->bits, newv);
    return oldv != newv;
}

int goblin__bit_field(goblin_store *st, struct goblin_slice key,
                      const struct goblin__bf_op *ops, size_t n,
                      struct goblin__bf_result *out)
{
    struct goblin_slice v = {NULL, 0};
    uint64_t hi = 0;
    bool write = false, changed = false;
    uint8_t *p;
    size_t len, i;
    int r;

    for (i = 0; i < n; i++) {
        if (ops[i].kind == GOBLIN__BF_GET)
            continue;
        write = true;
        if (ops[i].off + ops[i].bits - 1 > hi)
            hi = ops[i].off + ops[i].bits - 1;
    }
    if (!write) {
        if ((r = goblin_str_get(st, key, &v)) < 0)
            return r;
        for (i = 0; i < n; i++) {
            out[i].value = field_read(v.ptr, v.len, &ops[i]);
            out[i].failed = false;
        }
        return 0;
    }
    goblin__write_begin(st);
    if ((hi >> 3) >= goblin__string_limit(st))
        return GOBLIN_ESTRBIG;
    if ((r = goblin__str_grow_zero(st, key, (size_t)(hi >> 3) + 1, &p,
                                   &len)) < 0)
        return r;
    changed = r == 1;
    for (i = 0; i < n; i++) {
        if (ops[i].kind == GOBLIN__BF_GET) {
            out[i].value = field_read(p, len, &ops[i]);
            out[i].failed = false;
        } else if (field_write(p, &ops[i], &out[i])) {
            changed = true;
        }
    }
    if (changed)
        goblin__key_changed(st, key);
    return 0;
}
