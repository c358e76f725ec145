/* latency_hist.c - the per-command latency histograms LATENCY HISTOGRAM
 * reads (latency.h), and latency-tracking, which turns them on and off
 * (yes by default, as in Redis 7.0).
 *
 * Redis records each call's duration (microseconds times 1000, clamped
 * to [1 ns, 1 s]) in an hdr_histogram of 2 significant figures, and
 * LATENCY HISTOGRAM walks it with a base-2 logarithmic iterator from
 * 1024 ns. That iterator stops at the sub-bucket where each power of two
 * L starts, whose width is L/128, so the count it reports for L covers
 * every duration up to L + L/128 - 1 ns and is labelled with that bound
 * in microseconds. Past 2^29 ns the iterator runs off the end of the
 * counts and reports the rest under the last sub-bucket's bound,
 * 1073741 us. Keeping just those 21 counts gives the same reply.
 *
 * INFO latencystats reads the same calls from a finer histogram, with
 * Redis's hdr layout (latency_hdr.c), filled the same way. Redis times
 * calls in whole microseconds; that one takes the nanoseconds the clock
 * gives, so a call under a microsecond shows as what it took.
 */
#include <stdio.h>
#include <string.h>

#include "latency.h"
#include "settings.h"

#define FIRST_NS 1024u
#define LAST_US 1073741u /* (2^30 - 1) ns, the iterator's last bound */

/* The highest duration in nanoseconds level i (< LEVELS - 1) takes. */
static uint64_t bound_ns(int i)
{
    return ((uint64_t)FIRST_NS << i) + ((uint64_t)FIRST_NS << i) / 128 - 1;
}

#define FINE_BYTES (GOBLIN__HDR_COUNTS * sizeof(uint64_t))

/* The fine histograms come from the store's allocator but are not
 * charged to used_memory (24 KB for each command called, as Redis's are):
 * made at a command's first call, they would move used_memory under a
 * running workload, and MEMORY USAGE or a tight maxmemory would see a
 * command's first call as data. */
static uint64_t *fine_alloc(goblin_engine *eng)
{
    uint64_t *p = eng->st->alloc.malloc(eng->st->alloc.ctx, FINE_BYTES);

    if (p != NULL)
        memset(p, 0, FINE_BYTES);
    return p;
}

/* Charges k more calls to the last timed call's durations. */
static void credit(struct goblin__cmdhist *h, uint64_t k)
{
    h->n[h->last] += k;
    if (h->fine != NULL)
        h->fine[h->last_fine] += k;
}

int goblin__cmdhist_level(uint64_t us)
{
    uint64_t ns = us > 1000000 ? 1000000000 : us * 1000;
    int i = 0;

    while (i < GOBLIN__CMDHIST_LEVELS - 1 && ns > bound_ns(i))
        i++;
    return i;
}

uint64_t goblin__cmdhist_bound_us(int i)
{
    return i >= GOBLIN__CMDHIST_LEVELS - 1 ? LAST_US : bound_ns(i) / 1000;
}

void goblin__cmdhist_sample(goblin_engine *eng,
                            const struct goblin__cmdstat *st)
{
    struct goblin__cmdhist *h;
    int level, fine;

    if (eng->cmdhist == NULL)
        return;
    h = &eng->cmdhist[st - eng->stats];
    if (!eng->latency_tracking) {
        h->counted = st->calls + 1; /* this call and those before: none */
        return;
    }
    level = goblin__cmdhist_level(goblin__ticks_to_us(eng, st->sample));
    fine = goblin__hdr_index(goblin__ticks_to_ns(eng, st->sample));
    if (st->calls > h->counted)
        credit(h, st->calls - h->counted);
    if (h->fine == NULL && (h->fine = fine_alloc(eng)) != NULL) {
        /* Made late (an allocation failed before): the calls so far. */
        for (int j = 0; j < GOBLIN__CMDHIST_LEVELS; j++)
            h->fine[fine] += h->n[j];
    }
    h->n[level]++;
    if (h->fine != NULL)
        h->fine[fine]++;
    h->last = (uint8_t)level;
    h->last_fine = (uint16_t)fine;
    h->counted = st->calls + 1;
}

void goblin__cmdhist_outlier(goblin_engine *eng, size_t i)
{
    const struct goblin__cmdstat *st = &eng->stats[i];
    uint64_t nth = st->calls - 1; /* this call's number */
    struct goblin__cmdhist *h;

    if ((nth & (GOBLIN__TIME_SAMPLE - 1)) == 0 || eng->cmdhist == NULL ||
        !eng->latency_tracking)
        return; /* the sample itself: already in */
    h = &eng->cmdhist[i];
    if (nth > h->counted && h->counted != 0)
        credit(h, nth - h->counted);
    h->n[goblin__cmdhist_level(goblin__ticks_to_us(eng, st->sample))]++;
    if (h->fine != NULL)
        h->fine[goblin__hdr_index(goblin__ticks_to_ns(eng, st->sample))]++;
    h->counted = nth + 1;
}

bool goblin__cmdhist_get(const goblin_engine *eng, size_t i,
                         struct goblin__cmdhist *out)
{
    uint64_t total = 0, calls = eng->stats[i].calls;

    if (eng->cmdhist == NULL)
        return false;
    *out = eng->cmdhist[i];
    for (int j = 0; j < GOBLIN__CMDHIST_LEVELS; j++)
        total += out->n[j];
    if (eng->latency_tracking && calls > out->counted) {
        /* Only CONFIG RESETSTAT's own call has no sample: it cleared
         * the one it took; its time is the commandstats sample's. */
        if (total == 0)
            out->last = (uint8_t)goblin__cmdhist_level(
                goblin__ticks_to_us(eng, eng->stats[i].sample));
        out->n[out->last] += calls - out->counted;
        out->counted = calls;
        total = calls;
    }
    return total != 0;
}

bool goblin__cmdhist_percentiles(const goblin_engine *eng, size_t i,
                                 const double *pct, int np, double *us)
{
    const struct goblin__cmdhist *h;
    uint64_t total = 0, extra = 0, calls = eng->stats[i].calls;
    int extra_idx;

    if (eng->cmdhist == NULL || eng->cmdhist[i].fine == NULL)
        return false;
    h = &eng->cmdhist[i];
    for (int j = 0; j < GOBLIN__HDR_COUNTS; j++)
        total += h->fine[j];
    extra_idx = h->last_fine;
    if (eng->latency_tracking && calls > h->counted) {
        /* As goblin__cmdhist_get: the untimed calls since the last
         * sample, or CONFIG RESETSTAT's own call. */
        if (total == 0)
            extra_idx = goblin__hdr_index(
                goblin__ticks_to_ns(eng, eng->stats[i].sample));
        extra = calls - h->counted;
    }
    if (total + extra == 0)
        return false;
    for (int j = 0; j < np; j++)
        us[j] = (double)goblin__hdr_percentile(h->fine, total + extra,
                                               extra_idx, extra, pct[j]) /
                1000.0;
    return true;
}

static void free_fine(goblin_engine *eng)
{
    for (size_t i = 0; eng->cmdhist != NULL && i < goblin__command_count;
         i++) {
        if (eng->cmdhist[i].fine != NULL)
            eng->st->alloc.free(eng->st->alloc.ctx, eng->cmdhist[i].fine,
                                FINE_BYTES);
        eng->cmdhist[i].fine = NULL;
    }
}

void goblin__cmdhist_reset(goblin_engine *eng)
{
    free_fine(eng); /* as Redis's RESETSTAT closes each histogram */
    if (eng->cmdhist != NULL)
        memset(eng->cmdhist, 0,
               goblin__command_count * sizeof(*eng->cmdhist));
}

void goblin__cmdhist_free(goblin_engine *eng)
{
    free_fine(eng);
    if (eng->cmdhist != NULL)
        goblin__free(eng->st, eng->cmdhist,
                     goblin__command_count * sizeof(*eng->cmdhist));
    eng->cmdhist = NULL;
}

/* ---- latency-tracking ---- */

static int get_tracking(void *ctx, char *buf, size_t cap)
{
    return snprintf(buf, cap, "%s",
                    ((goblin_engine *)ctx)->latency_tracking ? "yes" : "no");
}

static int set_tracking(void *ctx, struct goblin_slice v, const char **why)
{
    goblin_engine *eng = ctx;
    int64_t on;

    if (goblin__setting_parse("latency-tracking", v, &on, why) != 0)
        return GOBLIN_EINVAL;
    /* Turned off, the untimed calls since each command's last sample
     * are counted; turned on, the calls made while it was off are not. */
    for (size_t i = 0; eng->cmdhist != NULL && (on != 0) !=
                       eng->latency_tracking && i < goblin__command_count;
         i++) {
        struct goblin__cmdhist *h = &eng->cmdhist[i];
        uint64_t calls = eng->stats[i].calls;

        if (!on && calls > h->counted && h->counted != 0)
            credit(h, calls - h->counted);
        h->counted = calls;
    }
    eng->latency_tracking = on != 0;
    return 0;
}

int goblin__cmdhist_init(goblin_engine *eng)
{
    const struct goblin_setting own = {"latency-tracking", NULL,
                                       get_tracking, set_tracking, eng};

    size_t n = goblin__command_count * sizeof(*eng->cmdhist);

    /* Made with the engine, as the commandstats table is: made at the
     * first sample instead, used_memory would jump by the whole table
     * under a running workload, which a small maxmemory would feel. */
    eng->cmdhist = goblin__alloc(eng->st, n);
    if (eng->cmdhist == NULL)
        return GOBLIN_ENOMEM;
    memset(eng->cmdhist, 0, n);
    eng->latency_tracking = true;
    return goblin_engine_setting_add(eng, &own);
}
