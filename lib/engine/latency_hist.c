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
    int level;

    if (eng->cmdhist == NULL)
        return;
    h = &eng->cmdhist[st - eng->stats];
    if (!eng->latency_tracking) {
        h->counted = st->calls + 1; /* this call and those before: none */
        return;
    }
    level = goblin__cmdhist_level(goblin__ticks_to_us(eng, st->sample));
    if (st->calls > h->counted)
        h->n[h->last] += st->calls - h->counted;
    h->n[level]++;
    h->last = (uint8_t)level;
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
        h->n[h->last] += nth - h->counted;
    h->n[goblin__cmdhist_level(goblin__ticks_to_us(eng, st->sample))]++;
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

void goblin__cmdhist_reset(goblin_engine *eng)
{
    if (eng->cmdhist != NULL)
        memset(eng->cmdhist, 0,
               goblin__command_count * sizeof(*eng->cmdhist));
}

void goblin__cmdhist_free(goblin_engine *eng)
{
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
            h->n[h->last] += calls - h->counted;
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
