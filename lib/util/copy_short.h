/* copy_short.h - memcpy for the short strings most keys, values, member
 * names and status texts are, without a call: two overlapping loads and
 * stores cover 4-32 bytes. Used where a reply or request is written
 * byte by byte into room already reserved (RESP writer, SBE frames). */
#ifndef GOBLIN_UTIL_COPY_SHORT_H
#define GOBLIN_UTIL_COPY_SHORT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Past 32 bytes, memcpy itself. Out of line, so that where a caller's
 * source is a small array the compiler does not take this branch for a
 * read past its end. */
static __attribute__((noinline, unused)) void
goblin__copy_long(char *dst, const char *s, size_t n)
{
    memcpy(dst, s, n);
}

static inline void goblin__copy_short(void *dst_, const void *src, size_t n)
{
    const char *s = src;
    char *dst = dst_;

    if (n > 32) {
        goblin__copy_long(dst, s, n);
    } else if (n >= 16) {
        char a[16], b[16];

        memcpy(a, s, 16);
        memcpy(b, s + n - 16, 16);
        memcpy(dst, a, 16);
        memcpy(dst + n - 16, b, 16);
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
