/* copy_short.h - memcpy for the short strings most keys, values, member
 * names and status texts are, without a call: two overlapping loads and
 * stores cover 4-16 bytes. Used where a reply or request is written
 * byte by byte into room already reserved (RESP writer, SBE frames). */
#ifndef GOBLIN_UTIL_COPY_SHORT_H
#define GOBLIN_UTIL_COPY_SHORT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void goblin__copy_short(void *dst_, const void *src, size_t n)
{
    const char *s = src;
    char *dst = dst_;

    if (n > 16) {
        memcpy(dst, s, n);
    } else if (n >= 8) {
        uint64_t a, b;

        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;

        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(dst, &a, 4);
        memcpy(dst + n - 4, &b, 4);
    } else if (n > 0) {
        dst[0] = s[0];
        dst[n / 2] = s[n / 2];
        dst[n - 1] = s[n - 1];
    }
}

#endif
