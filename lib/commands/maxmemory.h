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

/* OBJECT IDLETIME and OBJECT FREQ for key, with Redis's replies and
 * errors (each works under its kind of policy only). Neither counts as
 * an access. */
void goblin__object_idletime(goblin__exec *x, struct goblin_slice key);
void goblin__object_freq(goblin__exec *x, struct goblin_slice key);

struct goblin__text;
/* INFO's memory section. */
void goblin__info_memory(goblin__exec *x, struct goblin__text *t);

#endif
