/* latency_hdr.c - the counts behind INFO latencystats: the layout of
 * Redis 7.0's hdr_histogram for values from 1 ns to 1 s at 2 significant
 * figures, and its hdr_value_at_percentile, so the percentiles Goblin
 * reports fall on the same value boundaries as Redis's.
 *
 * That histogram keeps 256 sub-buckets of width 1 for the values below
 * 256 and, for each power of two above, 128 sub-buckets whose width
 * doubles with each power: 3072 counts in all. A value is reported as the
 * highest value of its sub-bucket (6000 ns and 6010 ns are both 6015 ns).
 */
#include "latency.h"

#define HALF_MAG 7                 /* log2 of the 128 sub-buckets a power has */
#define HALF (1u << HALF_MAG)
#define SUB_MASK 255u              /* 256 sub-buckets in the first power */
#define MAX_NS 1000000000u         /* Redis's cap: one second */

int goblin__hdr_index(uint64_t ns)
{
    int bucket, sub;

    if (ns < 1)
        ns = 1;
    if (ns > MAX_NS)
        ns = MAX_NS;
    /* The power of two ns falls in, counted from the first 256 values. */
    bucket = 64 - __builtin_clzll(ns | SUB_MASK) - (HALF_MAG + 1);
    sub = (int)(ns >> bucket);
    return ((bucket + 1) << HALF_MAG) + (sub - (int)HALF);
}

/* The lowest value of index idx's sub-bucket, and its width. */
static uint64_t index_value(int idx, uint64_t *width)
{
    int bucket = (idx >> HALF_MAG) - 1;
    uint64_t sub = (uint64_t)(idx & (int)(HALF - 1)) + HALF;

    if (bucket < 0) {
        sub -= HALF;
        bucket = 0;
    }
    *width = (uint64_t)1 << bucket;
    return sub << bucket;
}

uint64_t goblin__hdr_percentile(const uint64_t *counts, uint64_t total,
                                int extra_idx, uint64_t extra, double pct)
{
    uint64_t want, seen = 0, width, low;
    int idx;

    if (total == 0)
        return 0;
    if (pct > 100.0)
        pct = 100.0;
    want = (uint64_t)(pct / 100.0 * (double)total + 0.5);
    if (want < 1)
        want = 1;
    for (idx = 0; idx < GOBLIN__HDR_COUNTS; idx++) {
        seen += counts[idx] + (idx == extra_idx ? extra : 0);
        if (seen >= want)
            break;
    }
    if (idx == GOBLIN__HDR_COUNTS)
        return 0;
    low = index_value(idx, &width);
    /* hdr_value_at_percentile: the lowest equivalent value for 0, the
     * highest for any other percentile. */
    return pct == 0.0 ? low : low + width - 1;
}
