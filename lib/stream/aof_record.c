/* aof_record.c - one record of an append-only file: a RESP array of bulk
 * strings (RESP2, "*<n>\r\n" then n times "$<len>\r\n<bytes>\r\n"), the
 * only form Redis writes and reads back (aof.c loadSingleAppendOnlyFile).
 * A record cut anywhere reads as "need more"; anything else is refused.
 */
#include <string.h>

#include "goblin/aof.h"

/* Reads "<c><digits>\r\n" at p: the number into *v, the bytes taken, 0
 * when cut short, or GOBLIN_EPROTO. */
static int64_t header(const char *p, size_t len, char c, int64_t *v)
{
    size_t i = 1;
    int64_t n = 0;

    if (len == 0)
        return 0;
    if (p[0] != c)
        return GOBLIN_EPROTO;
    for (; i < len && p[i] >= '0' && p[i] <= '9'; i++) {
        if (n > (INT64_MAX - 9) / 10)
            return GOBLIN_EPROTO;
        n = n * 10 + (p[i] - '0');
    }
    if (i == len)
        return 0;
    if (i == 1 || p[i] != '\r')
        return GOBLIN_EPROTO;
    if (i + 1 == len)
        return 0;
    if (p[i + 1] != '\n')
        return GOBLIN_EPROTO;
    *v = n;
    return (int64_t)i + 2;
}

int64_t goblin_aof_record(const void *data, size_t len,
                          struct goblin_slice *argv, int max, int *argc)
{
    const char *p = data;
    size_t at;
    int64_t n, l, k;

    k = header(p, len, '*', &n);
    if (k <= 0)
        return k;
    if (n < 1 || n > INT32_MAX)
        return GOBLIN_EPROTO;
    if (n > max) {
        *argc = (int)n;
        return GOBLIN_ELIMIT;
    }
    at = (size_t)k;
    for (int64_t i = 0; i < n; i++) {
        k = header(p + at, len - at, '$', &l);
        if (k <= 0)
            return k;
        at += (size_t)k;
        if ((uint64_t)l > len - at || len - at - (size_t)l < 2)
            return 0;
        if (p[at + l] != '\r' || p[at + l + 1] != '\n')
            return GOBLIN_EPROTO;
        argv[i] = (struct goblin_slice){p + at, (size_t)l};
        at += (size_t)l + 2;
    }
    *argc = (int)n;
    return (int64_t)at;
}
