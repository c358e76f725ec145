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

/* Sets whether x->cmd's lookups update access times. */
void goblin__maxmemory_touch_mode(goblin__exec *x);

/* OBJECT IDLETIME: seconds since key was last accessed, or -1 when it
 * does not exist. Does not count as an access. */
int64_t goblin__object_idletime(goblin_store *st, struct goblin_slice key);

struct goblin__text;
/* INFO's memory section. */
void goblin__info_memory(goblin__exec *x, struct goblin__text *t);

#endif
