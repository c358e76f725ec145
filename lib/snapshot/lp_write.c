/* lp_write.c - writing Redis's listpack (the packed node of a Redis 7.0
 * quicklist, RDB type 18), byte for byte as Redis's listpack.c encodes
 * it, so that redis-server RESTOREs what DUMP wrote. rdb_packed.c reads
 * the same format; its comment lists the encodings.
 *
 * An element that is an integer by string2ll's rules is written as the
 * smallest integer encoding that holds it (Redis's lpEncodeGetType), any
 * other as a string of 6, 12 or 32-bit length; each entry ends with its
 * backlen, the size of encoding + data in 7-bit groups read backwards.
 */
#include "goblin/buf.h"
#include "goblin/numtext.h"
#include "rdb.h"

#define LP_HDR 6

/* The entry's encoding and data, up to the string's bytes: *hlen header
 * bytes in h, then (for a string) the element itself. Returns whether
 * the element is written as a string. */
static bool lp_head(struct goblin_slice e, uint8_t h[9], size_t *hlen)
{
    int64_t v;

    if (e.len <= 20 && goblin_int64_parse((const char *)e.ptr, e.len, &v) == 0) {
        uint64_t u = (uint64_t)v;

        if (v >= 0 && v <= 127) {
            h[0] = (uint8_t)v;
            *hlen = 1;
        } else if (v >= -4096 && v <= 4095) {
            u = v < 0 ? (uint64_t)((1 << 13) + v) : u;
            h[0] = (uint8_t)(0xC0 | (u >> 8));
            h[1] = (uint8_t)u;
            *hlen = 2;
        } else {
            int w = v >= -32768 && v <= 32767 ? 2
                    : v >= -8388608 && v <= 8388607 ? 3
                    : v >= INT32_MIN && v <= INT32_MAX ? 4 : 8;

            h[0] = (uint8_t)(w == 2 ? 0xF1 : w == 3 ? 0xF2 : w == 4 ? 0xF3
                                                                 : 0xF4);
            for (int i = 0; i < w; i++)
                h[1 + i] = (uint8_t)(u >> (8 * i)); /* two's complement */
            *hlen = 1 + (size_t)w;
        }
        return false;
    }
    if (e.len < 64) {
        h[0] = (uint8_t)(0x80 | e.len);
        *hlen = 1;
    } else if (e.len < 4096) {
        h[0] = (uint8_t)(0xE0 | (e.len >> 8));
        h[1] = (uint8_t)e.len;
        *hlen = 2;
    } else {
        h[0] = 0xF0;
        for (int i = 0; i < 4; i++)
            h[1 + i] = (uint8_t)((uint64_t)e.len >> (8 * i));
        *hlen = 5;
    }
    return true;
}

/* Redis's lpEncodeBacklen: l in 1 to 5 bytes, the first holding the
 * highest bits, every byte after it with bit 7 set. */
static size_t lp_backlen(uint64_t l, uint8_t b[5])
{
    size_t n = l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3
               : l < 268435455 ? 4 : 5;

    for (size_t i = 0; i < n; i++) {
        b[i] = (uint8_t)((l >> (7 * (n - 1 - i))) & 127);
        if (i > 0)
            b[i] |= 128;
    }
    return n;
}

size_t goblin__lp_entry_size(struct goblin_slice e)
{
    uint8_t h[9], b[5];
    size_t hlen, body;

    body = lp_head(e, h, &hlen) ? hlen + e.len : hlen;
    return body + lp_backlen(body, b);
}

size_t goblin__lp_size(size_t entry_bytes)
{
    return LP_HDR + entry_bytes + 1;
}

void goblin__lp_put_header(struct goblin_buf *b, size_t entry_bytes,
                           size_t count)
{
    uint32_t total = (uint32_t)goblin__lp_size(entry_bytes);
    uint16_t n = count < 65535 ? (uint16_t)count : 65535;
    uint8_t h[LP_HDR];

    for (int i = 0; i < 4; i++)
        h[i] = (uint8_t)(total >> (8 * i));
    h[4] = (uint8_t)n;
    h[5] = (uint8_t)(n >> 8);
    if (!b->failed && goblin_buf_append(b, h, sizeof(h)) != 0)
        b->failed = true;
}

void goblin__lp_put_entry(struct goblin_buf *b, struct goblin_slice e)
{
    uint8_t h[9], bl[5];
    size_t hlen, body, n;
    bool str = lp_head(e, h, &hlen);

    body = str ? hlen + e.len : hlen;
    n = lp_backlen(body, bl);
    if (b->failed || goblin_buf_append(b, h, hlen) != 0 ||
        (str && e.len != 0 && goblin_buf_append(b, e.ptr, e.len) != 0) ||
        goblin_buf_append(b, bl, n) != 0)
        b->failed = true;
}

void goblin__lp_put_end(struct goblin_buf *b)
{
    uint8_t end = 0xFF;

    if (!b->failed && goblin_buf_append(b, &end, 1) != 0)
        b->failed = true;
}
