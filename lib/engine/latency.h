/* latency.h - the latency monitor (latency.c): Redis 7.0's LATENCY
 * events. With latency-monitor-threshold N > 0 (milliseconds; 0, the
 * default, is off) each event that took N ms or more is recorded in its
 * time series: the last 160 seconds that had one, the worst per second,
 * and the worst of all time.
 *
 * Events: "command" and "fast-command" (a command's execution, by its
 * "fast" flag, measured where the slow log measures it), "expire-cycle"
 * (the cron's active expiry step) and "eviction-cycle" (the evictions
 * made before one command). Nothing is timed for the monitor while it
 * is off.
 */
#ifndef GOBLIN_ENGINE_LATENCY_H
#define GOBLIN_ENGINE_LATENCY_H

#include <stdbool.h>
#include <stdint.h>

#include "session.h"

#define GOBLIN__LATENCY_TS_LEN 160
#define GOBLIN__LATENCY_EVENTS 16

struct goblin__latency_sample {
    int64_t time_s;   /* Unix seconds; 0 = unused */
    uint32_t ms;
};

struct goblin__latency_ts {
    char name[32];
    int idx;          /* where the next second goes */
    uint32_t max;     /* worst of all time */
    struct goblin__latency_sample s[GOBLIN__LATENCY_TS_LEN];
};

struct goblin__latency {
    struct goblin__latency_ts *ev[GOBLIN__LATENCY_EVENTS]; /* in first use order */
    int nev;
};

/* Registers latency-monitor-threshold. */
int goblin__latency_init(goblin_engine *eng);
void goblin__latency_free(goblin_engine *eng);

/* Records ms for event when the monitor is on and ms reaches the
 * threshold. */
void goblin__latency_add(goblin_engine *eng, const char *event, uint64_t ms);

/* The clock for timing an event, read only while the monitor is on
 * (0 otherwise), and the milliseconds since t0. */
uint64_t goblin__latency_start(const goblin_engine *eng);
void goblin__latency_end(goblin_engine *eng, const char *event, uint64_t t0);

/* The series named event (exactly, as Redis's HISTORY and GRAPH look it
 * up), or NULL. */
struct goblin__latency_ts *goblin__latency_find(const goblin_engine *eng,
                                                const char *event,
                                                size_t len);
/* LATENCY RESET: drops event's series, its name in any case (every
 * series when event is NULL);
 * returns how many were dropped. */
int goblin__latency_reset(goblin_engine *eng, const char *event, size_t len);

/* LATENCY HISTOGRAM (latency_hist.c): per command, Redis 7.0's
 * cumulative distribution of its calls' durations at the powers of two
 * from 1024 ns (Redis's hdr_histogram of 2 significant figures read with
 * a base-2 logarithmic iterator from 1024: level L covers every duration
 * up to L + L/128 - 1 ns, reported as that bound in microseconds, so 1, 2,
 * 4, 8, 16, 33, 66 ...; the last level takes everything to Redis's cap of
 * one second).
 *
 * The histogram counts every call, as Redis's does, but takes the
 * duration of one call in 16 of each command (session.h,
 * goblin__cmdstat_count: the commandstats sample, also when the slow log
 * times every call), and charges each other call the duration of the
 * command's last sampled one, as INFO commandstats charges its time. A
 * sampled call puts the calls since the previous sample in that one's
 * level and itself in its own; the reader adds the calls since the last
 * sample. Calls the slow log or latency monitor sees as slow (timed
 * over their threshold) are put in their own level as well, without
 * becoming the sample. So "calls" is exact, slow calls are, and each
 * other level is exact to within the calls between two samples. Nothing
 * of this is on the command path but a test of the call count. */
#define GOBLIN__CMDHIST_LEVELS 21

struct goblin__cmdhist {
    uint64_t counted; /* the command's calls already in n[] */
    uint64_t n[GOBLIN__CMDHIST_LEVELS];
    /* The same calls at nanosecond resolution for INFO latencystats
     * (GOBLIN__HDR_COUNTS counts, latency_hdr.c), made at the command's
     * first timed call as Redis makes its histogram, so a command never
     * called costs nothing; NULL until then, or when that failed. */
    uint64_t *fine;
    uint16_t last_fine; /* the last timed call's index in fine */
    uint8_t last;     /* the level of the last timed call */
};

/* The level a duration in microseconds falls in. */
int goblin__cmdhist_level(uint64_t us);
/* Level i's bound in microseconds, as Redis reports it. */
uint64_t goblin__cmdhist_bound_us(int i);
/* The histogram of command index i as of now (untimed calls since the
 * last sample added) into out; false when the command has none (no call
 * while latency-tracking was on). */
bool goblin__cmdhist_get(const goblin_engine *eng, size_t i,
                         struct goblin__cmdhist *out);
/* A call of command index i timed over the slow log's or the latency
 * monitor's threshold (slowlog.c), after it was counted. */
void goblin__cmdhist_outlier(goblin_engine *eng, size_t i);
/* INFO latencystats: the np percentiles pct[] of command index i's
 * durations into us[] (microseconds, as Redis reports them); false when
 * the command has no histogram. */
bool goblin__cmdhist_percentiles(const goblin_engine *eng, size_t i,
                                 const double *pct, int np, double *us);

/* latency_hdr.c: Redis's hdr_histogram layout for 1 ns to 1 s at two
 * significant figures. The index of a duration in nanoseconds (clamped
 * to that range), and hdr_value_at_percentile of counts (total calls,
 * extra more at extra_idx) in nanoseconds; 0 for no calls. */
#define GOBLIN__HDR_COUNTS 3072
int goblin__hdr_index(uint64_t ns);
uint64_t goblin__hdr_percentile(const uint64_t *counts, uint64_t total,
                                int extra_idx, uint64_t extra, double pct);

/* CONFIG RESETSTAT: drops every histogram. */
void goblin__cmdhist_reset(goblin_engine *eng);
/* Registers latency-tracking (from goblin__latency_init), and frees. */
int goblin__cmdhist_init(goblin_engine *eng);
void goblin__cmdhist_free(goblin_engine *eng);

#endif
