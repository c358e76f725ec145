/* hash_entry.h - the byte layout of one hash pair, shared by the compact
 * block and the full form's arena.
 *
 * An entry is [header][field bytes][value bytes], nothing else: no
 * terminator, no padding. The header holds the two lengths:
 *
 *   byte 0:  bit 7   dead (only the arena uses it: the pair was removed or
 *                    moved, and its bytes wait for compaction)
 *            bit 6   more field-length bytes follow
 *            bits 0-5  field length, low 6 bits
 *   then the rest of the field length as LEB128 (7 bits a byte, low first,
 *   bit 7 = more), then the value length as LEB128.
 *
 * So a field under 64 bytes with a value under 128 bytes costs 2 header
 * bytes. Lengths are below 2^32, so a header is at most 10 bytes. The
 * dead bit never changes the header's size, so a dead entry can still be
 * stepped over.
 */
#ifndef GOBLIN_HASH_ENTRY_H
#define GOBLIN_HASH_ENTRY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define GOBLIN__ENT_DEAD 0x80u
#define GOBLIN__ENT_MAX_HDR 10

static inline size_t goblin__leb_len(uint64_t v)
{
    size_t n = 1;

    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline size_t goblin__ent_hdr_len(size_t flen, size_t vlen)
{
    return 1 + (flen >= 64 ? goblin__leb_len(flen >> 6) : 0) +
           goblin__leb_len(vlen);
}

static inline size_t goblin__ent_len(size_t flen, size_t vlen)
{
    return goblin__ent_hdr_len(flen, vlen) + flen + vlen;
}

static inline size_t goblin__leb_put(uint8_t *p, uint64_t v)
{
    size_t n = 0;

    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

static inline size_t goblin__leb_get(const uint8_t *p, uint64_t *v)
{
    uint64_t r = 0;
    size_t n = 0;
    unsigned shift = 0;

    for (;;) {
        uint8_t b = p[n++];

        r |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80))
            break;
        shift += 7;
    }
    *v = r;
    return n;
}

/* Writes the header for a live entry; returns its length. */
static inline size_t goblin__ent_put_hdr(uint8_t *p, size_t flen,
                                         size_t vlen)
{
    size_t n = 1;

    p[0] = (uint8_t)(flen & 0x3F);
    if (flen >= 64) {
        p[0] |= 0x40;
        n += goblin__leb_put(p + 1, flen >> 6);
    }
    return n + goblin__leb_put(p + n, vlen);
}

/* Reads the header at p: sets the lengths and returns the header length. */
static inline size_t goblin__ent_get_hdr(const uint8_t *p, size_t *flen,
                                         size_t *vlen)
{
    size_t n = 1;
    uint64_t hi = 0, v;

    if (p[0] < 0x40 && p[1] < 0x80) { /* the common 2-byte header */
        *flen = p[0];
        *vlen = p[1];
        return 2;
    }
    if (p[0] & 0x40)
        n += goblin__leb_get(p + 1, &hi);
    n += goblin__leb_get(p + n, &v);
    *flen = (size_t)((p[0] & 0x3F) | (hi << 6));
    *vlen = (size_t)v;
    return n;
}

/* Writes a whole live entry; returns its length. */
static inline size_t goblin__ent_put(uint8_t *p, const void *f, size_t flen,
                                     const void *v, size_t vlen)
{
    size_t n = goblin__ent_put_hdr(p, flen, vlen);

    if (flen != 0)
        memcpy(p + n, f, flen);
    if (vlen != 0)
        memcpy(p + n + flen, v, vlen);
    return n + flen + vlen;
}

#endif
