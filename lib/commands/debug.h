/* debug.h - what DEBUG (cmd_debug.c) uses from its helper files. */
#ifndef GOBLIN_COMMANDS_DEBUG_H
#define GOBLIN_COMMANDS_DEBUG_H

#include <stdint.h>

#include "goblin/engine.h"
#include "goblin/common.h"
#include "command.h"

/* Mixes the value of key id (with its deadline) into d, as Redis's
 * xorObjectDigest (debug_digest.c). */
void goblin__value_digest(goblin_store *st, uint32_t id, uint8_t d[20]);

/* The digest of every database's keys, as DEBUG DIGEST (all zeros for
 * an empty dataset). */
void goblin__dataset_digest(goblin_engine *eng, uint8_t out[20]);

/* OBJECT REFCOUNT of key id: Redis's shared-integer count (2147483647)
 * for an int string 0..9999 when no LRU/LFU maxmemory policy is set,
 * else 1 (cmd_debug.c). */
int64_t goblin__refcount(goblin__exec *x, uint32_t id);

#endif
