/* bytes_cmp.h - equality and order of the short byte strings that keys,
 * hash fields and sorted-set members mostly are, without a call: a
 * memcmp call costs more than comparing a few bytes, and a small hash or
 * sorted set compares its entries one by one. Longer strings go to
 * memcmp. */
#ifndef GOBLIN_UTIL_BYTES_CMP_H
#define GOBLIN_UTIL_BYTES_CMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t goblin__ld64(const unsigned char *p)
{
    uint64_t v;

    memcpy(&v, p, 8);
    return v;
}

static inline uint32_t goblin__ld32(const unsigned char *p)
{
    uint32_t v;

    memcpy(&v, p, 4);
    return v;
}

/* Whether a[0, n) == b[0, n). Up to 16 bytes: two overlapping loads from
 * each side; under 4: the first, middle and last bytes (which cover
 * every byte of 1-3). */
static inline bool goblin__bytes_eq(const void *a_, const void *b_, size_t n)
{
    const unsigned char *a = a_, *b = b_;

    if (n >= 8) {
        if (n > 16)
            return memcmp(a, b, n) == 0;
        return goblin__ld64(a) == goblin__ld64(b) &&
               goblin__ld64(a + n - 8) == goblin__ld64(b + n - 8);
    }
    if (n >= 4)
        return goblin__ld32(a) == goblin__ld32(b) &&
               goblin__ld32(a + n - 4) == goblin__ld32(b + n - 4);
    return n == 0 ||
           (a[0] == b[0] && a[n >> 1] == b[n >> 1] && a[n - 1] == b[n - 1]);
}

/* a[0, alen) against b[0, blen) as memcmp orders bytes, a proper prefix
 * first: negative, 0 or positive. The first 8 common bytes are compared
 * as one big-endian word; a shorter common part byte by byte. */
static inline int goblin__bytes_cmp(const void *a_, size_t alen,
                                    const void *b_, size_t blen)
{
    const unsigned char *a = a_, *b = b_;
    size_t n = alen < blen ? alen : blen;

    if (n >= 8) {
        uint64_t x = goblin__ld64(a), y = goblin__ld64(b);
        int c;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        x = __builtin_bswap64(x);
        y = __builtin_bswap64(y);
#endif

        if (x != y)
            return x < y ? -1 : 1;
        if (n > 8 && (c = memcmp(a + 8, b + 8, n - 8)) != 0)
            return c;
    } else {
        for (size_t i = 0; i < n; i++)
            if (a[i] != b[i])
                return a[i] < b[i] ? -1 : 1;
    }
    return alen < blen ? -1 : alen > blen;
}

#endif
