/* size.c - ring sizes: parsing "64k"-style text and rounding a size to a
 * queue capacity (a power of two of at least one page, so offsets are a
 * mask and every region is page aligned). Base 1024 throughout. */
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "ring_int.h"

struct suffix {
    const char *text;
    unsigned shift;
};

static const struct suffix suffixes[] = {
    {"", 0},    {"b", 0},    {"k", 10},   {"kb", 10}, {"kib", 10},
    {"m", 20},  {"mb", 20},  {"mib", 20}, {"g", 30},  {"gb", 30},
    {"gib", 30},
};

/* The shift for the suffix s[0..n), or -1 when it is not one. */
static int suffix_shift(const char *s, size_t n)
{
    size_t i;

    for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        const char *t = suffixes[i].text;

        if (strlen(t) == n && strncasecmp(s, t, n) == 0)
            return (int)suffixes[i].shift;
    }
    return -1;
}

int goblin_ring_size_parse(const char *text, size_t len, uint64_t *out)
{
    uint64_t v = 0;
    bool big = false;
    size_t i = 0;
    int shift;

    if (text == NULL || out == NULL)
        return GOBLIN_EINVAL;
    for (; i < len && text[i] >= '0' && text[i] <= '9'; i++) {
        if (v > GOBLIN_RING_MAX_SIZE)
            big = true;             /* keep scanning to check the suffix */
        else
            v = v * 10 + (uint64_t)(text[i] - '0');
    }
    if (i == 0)
        return GOBLIN_EINVAL;
    shift = suffix_shift(text + i, len - i);
    if (shift < 0)
        return GOBLIN_EINVAL;
    if (big || v > (GOBLIN_RING_MAX_SIZE >> shift))
        return GOBLIN_ERANGE;
    *out = v << shift;
    return 0;
}

uint64_t goblin_ring_capacity(uint64_t size)
{
    uint64_t cap = (uint64_t)sysconf(_SC_PAGESIZE);

    if (size == 0)
        size = GOBLIN_RING_DEFAULT_SIZE;
    if (size > GOBLIN_RING_MAX_SIZE)
        return 0;
    while (cap < size)
        cap <<= 1;
    return cap;
}
