/* rdb_read.c - the RDB reader (rdb.h): a window over the file that
 * refills in big reads, RDB's length and string encodings, scores, and
 * the closing checksum.
 *
 * The CRC64 covers every byte before the 8 checksum bytes. For a file
 * it is computed as bytes arrive in the window; for a memory source, in
 * one pass at the end. A window that must hold a long string grows to
 * that string's length, which was first checked against the bytes left.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "format.h"
#include "goblin/numtext.h"
#include "rdb.h"

#define WINDOW (1024 * 1024)
#define LZF_MAX_RATIO 88

int goblin__rdb_fail(struct goblin__rdb *r, int code, uint64_t off,
                     const char *what)
{
    return goblin__snap_fail(r->res, code, off, "%s at byte %" PRIu64, what,
                             off);
}

int goblin__rdb_init(struct goblin__rdb *r)
{
    r->tab = goblin__mem_alloc(&r->mem, sizeof(*r->tab));
    if (r->tab == NULL)
        return goblin__rdb_fail(r, GOBLIN_ENOMEM, 0, "out of memory");
    goblin__crc64_init(r->tab);
    if (r->src->fd < 0) {
        r->buf = (uint8_t *)r->src->mem;
        r->end = (size_t)r->src->size;
    }
    return 0;
}

void goblin__rdb_fini(struct goblin__rdb *r)
{
    goblin__mem_free(&r->mem, r->tab, sizeof(*r->tab));
    if (r->cap != 0)
        goblin__mem_free(&r->mem, r->buf, r->cap);
    goblin__mem_free(&r->mem, r->lzf, r->lzf_cap);
    r->tab = NULL;
    r->buf = r->lzf = NULL;
    r->cap = r->lzf_cap = 0;
}

/* Adds the window's bytes [from, end) to the CRC, up to the checksum. */
static void crc_window(struct goblin__rdb *r, size_t from)
{
    uint64_t limit = r->src->size >= 8 ? r->src->size - 8 : 0;
    uint64_t a = r->base + from, b = r->base + r->end;

    if (b > limit)
        b = limit;
    if (a < b)
        r->crc = goblin__crc64(r->tab, r->crc, r->buf + from, b - a);
    if (b > r->crc_done)
        r->crc_done = b;
}

/* Makes at least n bytes readable at pos (n <= bytes left). */
static int fill(struct goblin__rdb *r, size_t n)
{
    size_t have = r->end - r->pos, want;
    int rc;

    if (r->cap < n || r->pos != 0) {
        size_t cap = n > WINDOW ? n : WINDOW;
        uint8_t *b = r->cap >= cap ? r->buf : goblin__mem_alloc(&r->mem, cap);

        if (b == NULL)
            return goblin__rdb_fail(r, GOBLIN_ENOMEM, goblin__rdb_off(r),
                                    "out of memory for a value");
        if (have != 0)
            memmove(b, r->buf + r->pos, have);
        if (b != r->buf) {
            goblin__mem_free(&r->mem, r->buf, r->cap);
            r->buf = b;
            r->cap = cap;
        }
        r->base += r->pos;
        r->pos = 0;
        r->end = have;
    }
    want = r->cap - r->end;
    if (want > r->src->size - r->src->off)
        want = (size_t)(r->src->size - r->src->off);
    rc = goblin__src_read(r->src, r->buf + r->end, want);
    if (rc != 0)
        return goblin__rdb_fail(r, rc, r->src->off, rc == GOBLIN_ESNAPTRUNC
                                ? "file shrank while being read"
                                : "read error");
    r->end += want;
    crc_window(r, r->end - want);
    return 0;
}

int goblin__rdb_take(struct goblin__rdb *r, size_t n, const uint8_t **out)
{
    int rc;

    if (r->end - r->pos < n) {
        if (n > goblin__rdb_left(r))
            return goblin__snap_fail(r->res, GOBLIN_ESNAPTRUNC, r->src->size,
                                     "file is truncated: %zu bytes at byte %"
                                     PRIu64 " run past its end at byte %"
                                     PRIu64, n, goblin__rdb_off(r),
                                     r->src->size);
        if ((rc = fill(r, n)) != 0)
            return rc;
    }
    *out = r->buf + r->pos;
    r->pos += n;
    return 0;
}

int goblin__rdb_byte(struct goblin__rdb *r, uint8_t *b)
{
    const uint8_t *p = NULL;
    int rc = goblin__rdb_take(r, 1, &p);

    if (rc == 0)
        *b = *p;
    return rc;
}

static uint64_t be_get(const uint8_t *p, int n)
{
    uint64_t v = 0;

    for (int i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

int goblin__rdb_len(struct goblin__rdb *r, uint64_t *len, bool *enc)
{
    uint64_t off = goblin__rdb_off(r);
    const uint8_t *p = NULL;
    uint8_t b = 0;
    int rc = goblin__rdb_byte(r, &b);

    if (rc != 0)
        return rc;
    if (enc != NULL)
        *enc = false;
    switch (b >> 6) {
    case 0:
        *len = b & 0x3F;
        return 0;
    case 1:
        if ((rc = goblin__rdb_take(r, 1, &p)) != 0)
            return rc;
        *len = ((uint64_t)(b & 0x3F) << 8) | p[0];
        return 0;
    case 3:
        if (enc == NULL)
            break;
        *enc = true;
        *len = b & 0x3F;
        return 0;
    default:
        if (b != 0x80 && b != 0x81)
            break;
        if ((rc = goblin__rdb_take(r, b == 0x80 ? 4 : 8, &p)) != 0)
            return rc;
        *len = be_get(p, b == 0x80 ? 4 : 8);
        return 0;
    }
    return goblin__rdb_fail(r, GOBLIN_ESNAPFORMAT, off, "bad length");
}

/* An integer-encoded string of 1, 2 or 4 bytes (little-endian, signed). */
static int int_string(struct goblin__rdb *r, int bytes,
                      struct goblin_slice *s)
{
    const uint8_t *p = NULL;
    uint32_t u = 0;
    int64_t v;
    int rc = goblin__rdb_take(r, (size_t)bytes, &p);

    if (rc != 0)
        return rc;
    for (int i = bytes - 1; i >= 0; i--)
        u = (u << 8) | p[i];
    if (bytes == 1)
        v = (int8_t)u;
    else if (bytes == 2)
        v = (int16_t)u;
    else
        v = (int32_t)u;
    s->ptr = r->num;
    s->len = goblin_int64_format(r->num, v);
    return 0;
}

static int lzf_string(struct goblin__rdb *r, struct goblin_slice *s)
{
    uint64_t off = goblin__rdb_off(r), clen, ulen;
    const uint8_t *p = NULL;
    int rc;

    if ((rc = goblin__rdb_len(r, &clen, NULL)) != 0 ||
        (rc = goblin__rdb_len(r, &ulen, NULL)) != 0)
        return rc;
    if (clen > goblin__rdb_left(r))
        return goblin__rdb_take(r, (size_t)clen, &p);
    if (ulen == 0 || ulen > clen * LZF_MAX_RATIO || ulen > SNAP_STR_MAX)
        return goblin__rdb_fail(r, GOBLIN_ESNAPFORMAT, off,
                                "bad compressed string length");
    if (ulen > r->lzf_cap) {
        uint8_t *b = goblin__mem_alloc(&r->mem, (size_t)ulen);

        if (b == NULL)
            return goblin__rdb_fail(r, GOBLIN_ENOMEM, off, "out of memory "
                                    "for a compressed string");
        goblin__mem_free(&r->mem, r->lzf, r->lzf_cap);
        r->lzf = b;
        r->lzf_cap = (size_t)ulen;
    }
    if ((rc = goblin__rdb_take(r, (size_t)clen, &p)) != 0)
        return rc;
    if (goblin__lzf_decompress(p, (size_t)clen, r->lzf, (size_t)ulen) != 0)
        return goblin__rdb_fail(r, GOBLIN_ESNAPFORMAT, off,
                                "corrupt compressed string");
    s->ptr = r->lzf;
    s->len = (size_t)ulen;
    return 0;
}

int goblin__rdb_string(struct goblin__rdb *r, struct goblin_slice *s)
{
    uint64_t off = goblin__rdb_off(r), len = 0;
    const uint8_t *p = NULL;
    bool enc = false;
    int rc = goblin__rdb_len(r, &len, &enc);

    if (rc != 0)
        return rc;
    if (enc) {
        if (len <= 2)
            return int_string(r, 1 << len, s);
        if (len == 3)
            return lzf_string(r, s);
        return goblin__rdb_fail(r, GOBLIN_ESNAPFORMAT, off,
                                "unknown string encoding");
    }
    if ((rc = goblin__rdb_take(r, (size_t)(len > SIZE_MAX ? SIZE_MAX : len),
                               &p)) != 0)
        return rc;
    s->ptr = p;
    s->len = (size_t)len;
    return 0;
}

int goblin__rdb_double_text(struct goblin__rdb *r, double *d)
{
    uint64_t off = goblin__rdb_off(r);
    const uint8_t *p = NULL;
    uint8_t len = 0;
    int rc = goblin__rdb_byte(r, &len);

    if (rc != 0)
        return rc;
    if (len >= 253) {
        *d = len == 253 ? (double)NAN : len == 254 ? (double)INFINITY
                                                     : -(double)INFINITY;
        return 0;
    }
    if ((rc = goblin__rdb_take(r, len, &p)) != 0)
        return rc;
    if (goblin_double_parse((const char *)p, len, d) != 0)
        return goblin__rdb_fail(r, GOBLIN_ESNAPFORMAT, off, "bad score");
    return 0;
}

int goblin__rdb_double_bin(struct goblin__rdb *r, double *d)
{
    const uint8_t *p = NULL;
    uint64_t bits = 0;
    int rc = goblin__rdb_take(r, 8, &p);

    if (rc != 0)
        return rc;
    for (int i = 7; i >= 0; i--)
        bits = (bits << 8) | p[i];
    memcpy(d, &bits, 8);
    return 0;
}

int goblin__rdb_finish(struct goblin__rdb *r, unsigned version)
{
    uint64_t off = goblin__rdb_off(r), stored = 0;
    const uint8_t *p = NULL;
    int rc;

    if (version >= 5) {
        if ((rc = goblin__rdb_take(r, 8, &p)) != 0)
            return rc;
        for (int i = 7; i >= 0; i--)
            stored = (stored << 8) | p[i];
    }
    if (goblin__rdb_left(r) != 0)
        return goblin__rdb_fail(r, GOBLIN_ESNAPFORMAT, goblin__rdb_off(r),
                                "data after the end of the RDB file");
    if (stored == 0)
        return 0; /* saved with rdbchecksum no */
    if (r->src->fd < 0)
        r->crc = goblin__crc64(r->tab, 0, r->src->mem, (size_t)off);
    else if (r->crc_done != off)
        return goblin__rdb_fail(r, GOBLIN_ESNAPFORMAT, off, "checksum "
                                "position");
    if (r->crc != stored)
        return goblin__snap_fail(r->res, GOBLIN_ESNAPCRC, off, "RDB checksum "
                                 "mismatch at byte %" PRIu64 " (stored 0x%016"
                                 PRIx64 ", computed 0x%016" PRIx64 ")", off,
                                 stored, r->crc);
    return 0;
}
