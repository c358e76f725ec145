/* rdb_packed.c - the packed encodings of small Redis values, as RDB files
 * carry them in a string: ziplist (RDB 2-9), listpack (RDB 10 on) and
 * the old zipmap. Each walker checks every header and length against the
 * blob's end before it reads, so a hostile blob cannot make it read out
 * of bounds, and hands each element to a callback (integers as text).
 *
 * ziplist:  u32 zlbytes, u32 zltail, u16 zllen, entries, 0xFF.
 *           entry: prevlen (1 byte, or 0xFE + u32), encoding, data:
 *             00pppppp             string of 6-bit length
 *             01pppppp qqqqqqqq    string of 14-bit length (big-endian)
 *             10000000 + u32 BE    string of 32-bit length
 *             11000000 int16, 11010000 int32, 11100000 int64,
 *             11110000 int24, 11111110 int8 (little-endian, signed)
 *             1111xxxx             xxxx - 1 (0..12), for xxxx in 1..13
 * listpack: u32 total bytes, u16 count, entries, 0xFF.
 *           entry: encoding, data, backlen (1-5 bytes: the size of
 *           encoding + data, 7 bits a byte):
 *             0xxxxxxx             7-bit unsigned int
 *             10xxxxxx             string of 6-bit length
 *             110xxxxx yyyyyyyy    13-bit signed int
 *             1110xxxx yyyyyyyy    string of 12-bit length
 *             11110000 + u32 LE    string of 32-bit length
 *             0xF1 int16, 0xF2 int24, 0xF3 int32, 0xF4 int64 (LE)
 * zipmap:   u8 count, then (len, field, len, free, value, free bytes)...,
 *           0xFF; a len is one byte < 254, or 254 + u32 LE.
 */
#include "goblin/numtext.h"
#include "rdb.h"

#define BAD GOBLIN_ESNAPFORMAT

static int64_t sign_extend(uint64_t v, unsigned bits)
{
    uint64_t m = (uint64_t)1 << (bits - 1);

    return (int64_t)((v ^ m) - m);
}

static uint64_t le_get(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;

    for (unsigned i = n; i-- > 0;)
        v = (v << 8) | p[i];
    return v;
}

/* Hands an integer element to fn as text. */
static int emit_int(goblin__rdb_elem_fn fn, void *ctx, int64_t v)
{
    char buf[GOBLIN_INT64_TEXT_MAX];
    struct goblin_slice s = {buf, goblin_int64_format(buf, v)};

    return fn == NULL ? 0 : fn(ctx, s);
}

static int emit_str(goblin__rdb_elem_fn fn, void *ctx, const uint8_t *p,
                    size_t n)
{
    struct goblin_slice s = {p, n};

    return fn == NULL ? 0 : fn(ctx, s);
}

/* ---- ziplist ---- */

/* One ziplist entry's encoding and data at b[*i..end). */
static int zl_entry(const uint8_t *b, size_t end, size_t *i,
                    goblin__rdb_elem_fn fn, void *ctx)
{
    uint8_t e = b[(*i)++];
    size_t len;

    if ((e >> 6) < 3) {
        unsigned hdr = (e >> 6) == 0 ? 0 : (e >> 6) == 1 ? 1 : 4;

        if (end - *i < hdr || ((e >> 6) == 2 && e != 0x80))
            return BAD;
        len = (e >> 6) == 0 ? (size_t)(e & 0x3F)
            : (e >> 6) == 1 ? ((size_t)(e & 0x3F) << 8) | b[*i]
                            : (size_t)((uint64_t)b[*i] << 24 |
                                       (uint64_t)b[*i + 1] << 16 |
                                       (uint64_t)b[*i + 2] << 8 | b[*i + 3]);
        *i += hdr;
        if (end - *i < len)
            return BAD;
        *i += len;
        return emit_str(fn, ctx, b + *i - len, len);
    }
    if (e >= 0xF1 && e <= 0xFD)
        return emit_int(fn, ctx, (int64_t)(e & 0x0F) - 1);
    len = e == 0xC0 ? 2 : e == 0xD0 ? 4 : e == 0xE0 ? 8 : e == 0xF0 ? 3
        : e == 0xFE ? 1 : 0;
    if (len == 0 || end - *i < len)
        return BAD;
    *i += len;
    return emit_int(fn, ctx, sign_extend(le_get(b + *i - len, (unsigned)len),
                                         (unsigned)len * 8));
}

int64_t goblin__rdb_ziplist(const uint8_t *b, size_t len,
                            goblin__rdb_elem_fn fn, void *ctx)
{
    size_t i = 10;
    int64_t n = 0;
    int rc;

    if (len < 11 || le_get(b, 4) != len || b[len - 1] != 0xFF)
        return BAD;
    while (b[i] != 0xFF) {
        /* prevlen: 1 byte, or 0xFE and 4 bytes */
        i += b[i] == 0xFE ? 5 : 1;
        if (i >= len - 1)
            return BAD;
        if ((rc = zl_entry(b, len - 1, &i, fn, ctx)) != 0)
            return rc;
        n++;
        if (i >= len)
            return BAD;
    }
    return i == len - 1 ? n : BAD;
}

/* ---- listpack ---- */

static size_t backlen_size(size_t l)
{
    return l < 128 ? 1 : l < 16384 ? 2 : l < 2097152 ? 3
         : l < 268435456 ? 4 : 5;
}

/* One listpack element at b[*i..end): its value and its backlen. */
static int lp_entry(const uint8_t *b, size_t end, size_t *i,
                    goblin__rdb_elem_fn fn, void *ctx)
{
    size_t start = *i, hdr, len = 0;
    uint8_t e = b[start];
    int isint = 1;
    int64_t v = 0;
    int rc;

    if (e < 0x80) {
        hdr = 1, v = e;
    } else if ((e & 0xC0) == 0x80) {
        hdr = 1, len = e & 0x3F, isint = 0;
    } else if ((e & 0xE0) == 0xC0) {
        if (end - start < 2)
            return BAD;
        hdr = 2, v = sign_extend(((uint64_t)(e & 0x1F) << 8) | b[start + 1],
                                 13);
    } else if ((e & 0xF0) == 0xE0) {
        if (end - start < 2)
            return BAD;
        hdr = 2, len = ((size_t)(e & 0x0F) << 8) | b[start + 1], isint = 0;
    } else if (e == 0xF0) {
        if (end - start < 5)
            return BAD;
        hdr = 5, len = (size_t)le_get(b + start + 1, 4), isint = 0;
    } else if (e >= 0xF1 && e <= 0xF4) {
        unsigned n = e == 0xF1 ? 2 : e == 0xF2 ? 3 : e == 0xF3 ? 4 : 8;

        if (end - start < 1 + n)
            return BAD;
        hdr = 1 + n, v = sign_extend(le_get(b + start + 1, n), n * 8);
    } else {
        return BAD;
    }
    if (end - start - hdr < len ||
        end - start - hdr - len < backlen_size(hdr + len))
        return BAD;
    *i = start + hdr + len + backlen_size(hdr + len);
    rc = isint ? emit_int(fn, ctx, v) : emit_str(fn, ctx, b + start + hdr,
                                                   len);
    return rc;
}

int64_t goblin__rdb_listpack(const uint8_t *b, size_t len,
                             goblin__rdb_elem_fn fn, void *ctx)
{
    size_t i = 6;
    int64_t n = 0;
    int rc;

    if (len < 7 || le_get(b, 4) != len || b[len - 1] != 0xFF)
        return BAD;
    while (i < len - 1 && b[i] != 0xFF) {
        if ((rc = lp_entry(b, len - 1, &i, fn, ctx)) != 0)
            return rc;
        n++;
    }
    if (i != len - 1)
        return BAD;
    if (le_get(b + 4, 2) != 65535 && (int64_t)le_get(b + 4, 2) != n)
        return BAD;
    return n;
}

/* ---- zipmap ---- */

/* A zipmap length at b[*i..end): 1 byte, or 254 and a u32. */
static bool zm_len(const uint8_t *b, size_t end, size_t *i, size_t *len)
{
    if (*i >= end || b[*i] == 255)
        return false;
    if (b[*i] < 254) {
        *len = b[(*i)++];
        return true;
    }
    if (end - *i < 5)
        return false;
    *len = (size_t)le_get(b + *i + 1, 4);
    *i += 5;
    return true;
}

int64_t goblin__rdb_zipmap(const uint8_t *b, size_t len,
                           goblin__rdb_elem_fn fn, void *ctx)
{
    size_t i = 1, end = len, flen, vlen, freeb;
    int64_t n = 0;
    int rc;

    if (len < 2 || b[len - 1] != 0xFF)
        return BAD;
    end = len - 1;
    while (i < end) {
        if (!zm_len(b, end, &i, &flen) || end - i < flen)
            return BAD;
        if ((rc = emit_str(fn, ctx, b + i, flen)) != 0)
            return rc;
        i += flen;
        if (!zm_len(b, end, &i, &vlen) || i >= end)
            return BAD;
        freeb = b[i++];
        if (end - i < vlen || end - i - vlen < freeb)
            return BAD;
        if ((rc = emit_str(fn, ctx, b + i, vlen)) != 0)
            return rc;
        i += vlen + freeb;
        n += 2;
    }
    return n;
}
