/* slowlog.h - the slow log (slowlog.c): commands whose execution took
 * at least slowlog-log-slower-than microseconds, newest first, at most
 * slowlog-max-len of them, as Redis 7.0 keeps it.
 *
 * Cost on the command path: goblin__run, and for a typed SBE request
 * sbe/direct.c's run_typed, compares the timed execution's ticks with
 * eng->watch_ticks (one branch, the lower of this threshold and the
 * latency monitor's); a slow typed request is logged as its argv form.
 * With the CPU's cycle counter as the clock every command is timed while
 * either is on (eng->time_all: two reads of the counter around the
 * handler), so every slow call is logged, as in Redis. Without it
 * commands are timed on the commandstats sample (session.h,
 * goblin__cmdstat_timed: one call in 16 of each command, and its first)
 * and a slow call is logged when it is in the sample;
 * slowlog-log-slower-than 0 times every command in any case.
 */
#ifndef GOBLIN_ENGINE_SLOWLOG_H
#define GOBLIN_ENGINE_SLOWLOG_H

#include <stddef.h>
#include <stdint.h>

#include "commands/command.h"

struct goblin__slow_entry {
    struct goblin__slow_entry *next; /* older */
    uint64_t id;
    int64_t time_s;   /* Unix seconds */
    uint64_t us;      /* duration */
    int argc;         /* arguments kept (at most 32) */
    struct goblin_slice *argv; /* into bytes below */
    char *peer, *name;
    size_t size;      /* bytes allocated for the entry */
};

/* Registers slowlog-log-slower-than and slowlog-max-len. */
int goblin__slowlog_init(goblin_engine *eng);
void goblin__slowlog_free(goblin_engine *eng);

/* Recomputes eng->slow_ticks from the threshold (after the tick rate's
 * calibration changes, and when the setting does). */
void goblin__slowlog_ticks(goblin_engine *eng);

/* After a timed execution of ticks at or over eng->watch_ticks: logs it
 * in the slow log and the latency monitor, as each threshold says. */
void goblin__slowlog_watch(goblin__exec *x, int argc,
                           const struct goblin_slice *argv, uint64_t ticks);

/* Logs x's command (argv), which took ticks. */
void goblin__slowlog_push(goblin__exec *x, int argc,
                          const struct goblin_slice *argv, uint64_t ticks);

/* SLOWLOG RESET. */
void goblin__slowlog_reset(goblin_engine *eng);

#endif
