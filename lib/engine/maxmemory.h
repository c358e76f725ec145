/* maxmemory.h - memory limits in the command layer (maxmemory.c). */
#ifndef GOBLIN_MAXMEMORY_H
#define GOBLIN_MAXMEMORY_H

#include <stdbool.h>
#include <stdint.h>

#include "session.h"

/* Redis's refusal, the text goblin_sink_error_code gives GOBLIN_ENOMEM. */
#define GOBLIN__OOM_TEXT \
    "OOM command not allowed when used memory > 'maxmemory'."

/* Registers maxmemory, maxmemory-policy and maxmemory-samples. */
int goblin__maxmemory_init(goblin_engine *eng);

/* Cron: refreshes the access clock and ages a few keys' stamps. */
void goblin__maxmemory_cron(goblin_engine *eng);

/* Evicts until used memory is within maxmemory (always true without
 * one); false when the policy can evict nothing more. */
bool goblin__maxmemory_fits(goblin_engine *eng);

/* Before x->cmd runs or is queued: evicts as needed and says whether the
 * command may go on (false: the caller refuses it with the OOM text). */
bool goblin__maxmemory_admit(goblin__exec *x);

/* Access-time rules per command (eng->touch_rule): NEVER for the
 * lookups Redis 7.0 makes with LOOKUP_NOTOUCH, ALWAYS for TOUCH, which a
 * CLIENT NO-TOUCH session's lookups still make. */
enum { GOBLIN__TOUCH_NEVER = 1, GOBLIN__TOUCH_ALWAYS = 2 };

/* Fills eng->touch_rule. Returns 0 or GOBLIN_ENOMEM. */
int goblin__touch_rules_build(goblin_engine *eng);
void goblin__touch_rules_free(goblin_engine *eng);

/* Sets whether x->cmd's lookups update access times: one table read. */
static inline void goblin__maxmemory_touch_mode(goblin__exec *x)
{
    uint8_t r = x->eng->touch_rule[x->cmd - goblin__commands];

    x->st->no_touch = (r & GOBLIN__TOUCH_NEVER) ||
                      ((x->sess->flags & SESS_NO_TOUCH) &&
                       !(r & GOBLIN__TOUCH_ALWAYS));
}

/* OBJECT IDLETIME and OBJECT FREQ for key, with Redis's replies and
 * errors (each works under its kind of policy only). Neither counts as
 * an access. */
void goblin__object_idletime(goblin__exec *x, struct goblin_slice key);
void goblin__object_freq(goblin__exec *x, struct goblin_slice key);

/* What INFO memory and MEMORY STATS report, computed once (maxmemory.c):
 * used memory is Goblin's accounting (docs/memory.md), the overhead is
 * startup memory, client buffers and the keyspaces' own tables. Reading
 * it raises the recorded peak to the current use. */
struct goblin__mem_overhead {
    uint64_t used, peak, startup, rss;
    uint64_t clients;           /* client buffers and sessions */
    uint64_t overhead;          /* startup + clients + keyspace tables */
    uint64_t dataset;           /* used - overhead */
    uint64_t keys;              /* in every database */
};
void goblin__mem_overhead(goblin_engine *eng, struct goblin__mem_overhead *m);

struct goblin__text;
/* INFO's memory section. */
void goblin__info_memory(goblin__exec *x, struct goblin__text *t);

#endif
