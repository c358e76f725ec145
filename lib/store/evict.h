/* evict.h - key access times and eviction: the coarse LRU clock, idle
 * times, and choosing a key to evict by sampling, as Redis approximates
 * its maxmemory policies (docs/memory.md).
 */
#ifndef GOBLIN_EVICT_H
#define GOBLIN_EVICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "goblin/common.h"

/* maxmemory-policy values, in the order Redis lists them. */
enum goblin__policy {
    GOBLIN__POLICY_VOLATILE_LRU = 0,
    GOBLIN__POLICY_ALLKEYS_LRU,
    GOBLIN__POLICY_VOLATILE_RANDOM,
    GOBLIN__POLICY_ALLKEYS_RANDOM,
    GOBLIN__POLICY_VOLATILE_TTL,
    GOBLIN__POLICY_NOEVICTION,
    GOBLIN__POLICY_VOLATILE_LFU,
    GOBLIN__POLICY_ALLKEYS_LFU,
    GOBLIN__POLICY_COUNT,
};

/* The candidates the sampling keeps between evictions (Redis: 16). */
#define GOBLIN__EVPOOL 16

struct goblin__evpool_ent {
    uint64_t score; /* higher = evict first: idle seconds, or time to live
                     * turned around */
    uint8_t *key;   /* a copy, klen bytes (NULL: empty entry) */
    size_t klen;
};

struct goblin__evpool {
    struct goblin__evpool_ent e[GOBLIN__EVPOOL]; /* by score, ascending */
    size_t n;
};

/* Reads the store clock into st->lru_clock (seconds modulo 2^16) and
 * st->lfu_minute. */
void goblin__lru_tick(goblin_store *st);

/* Redis's LFU_INIT_VAL: the counter of a new key. */
#define GOBLIN__LFU_INIT 5

/* The stamp a new key gets. */
uint16_t goblin__stamp_new(const goblin_store *st);

/* The stamp after an access to a key stamped old (LRU: now; LFU: the
 * counter decayed, then incremented with probability 1/(c*factor+1)). */
uint16_t goblin__stamp_touch(goblin_store *st, uint16_t old);

/* LFU: the key's counter decayed to now (OBJECT FREQ). */
unsigned goblin__key_freq(const goblin_store *st, uint32_t id);

/* Seconds since the key at id was last looked up, by the store's coarse
 * clock. Exact up to about 9 hours; older keys read 9 to 18 hours, as
 * long as goblin__lru_age_step visits every key in each 9 hours. */
uint64_t goblin__key_idle(const goblin_store *st, uint32_t id);

/* Visits up to n keys from where the last call stopped and caps stamps
 * older than 2^15 seconds at that age, so that a 16-bit stamp never
 * wraps. The engine's cron calls it. */
void goblin__lru_age_step(goblin_store *st, size_t n);

/* Evicts one key chosen by policy from `samples` random keys (and the
 * pool of earlier candidates; the LFU policies read LFU stamps, so they
 * want st->lfu set): reports it through goblin__key_changed and
 * frees it at once. Returns 1 when a key was evicted, 0 when the policy
 * finds none (noeviction, or no key with a deadline for volatile-*). */
int goblin__evict_one(goblin_store *st, enum goblin__policy policy,
                      unsigned samples);

/* Frees the pool's key copies (store close, FLUSHALL, policy change). */
void goblin__evpool_clear(goblin_store *st);

#endif
