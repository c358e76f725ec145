/* settings.h - the registry CONFIG GET and CONFIG SET read and change, and
 * the engine's own settings. */
#ifndef GOBLIN_SETTINGS_H
#define GOBLIN_SETTINGS_H

#include "session.h"

/* Registers the engine's own settings. */
int goblin__settings_init(goblin_engine *eng);

/* Applies the initial values given in the engine configuration. */
int goblin__settings_apply_config(goblin_engine *eng,
                                  const struct goblin_engine_config *cfg);

void goblin__settings_free(goblin_engine *eng);

/* Recomputes eng->obuf_trip from client-output-buffer-limit. */
void goblin__obuf_trip_update(goblin_engine *eng);

/* Sets requirepass to len bytes at p; len 0 removes the password. */
int goblin__set_requirepass(goblin_engine *eng, const void *p, size_t len);

/* The setting called name (or whose alias is name), case-insensitively;
 * NULL if none. */
const struct goblin__setting *goblin__setting_find(const goblin_engine *eng,
                                                   struct goblin_slice name);

/* Parses a memory amount as Redis's memtoull: digits and an optional unit
 * (b, k, kb, m, mb, g, gb in any case; k = 1000, kb = 1024). Returns 0 or
 * GOBLIN_EINVAL. */
int goblin__parse_memory(struct goblin_slice v, uint64_t *out);

/* cmd_persist.c: the save, dir and dbfilename settings and the save
 * state (init registers the settings), the save policies run by cron,
 * and INFO persistence. */
struct goblin__text;
int goblin__persist_init(goblin_engine *eng);
void goblin__persist_free(goblin_engine *eng);
void goblin__persist_cron(goblin_engine *eng);
void goblin__persist_info(goblin__exec *x, struct goblin__text *t);

#endif
