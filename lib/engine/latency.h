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

#endif
