/* store.h - the store object and what every store module shares inside
 * libgoblin: allocation with exact accounting, the clock, the random source,
 * byte hashing, and the change hook.
 *
 * Every byte the store holds goes through goblin__alloc/realloc/free, which
 * pass the block's size back to the allocator and keep used_memory exact
 * (with the default allocator: what malloc really holds per block, see
 * store.c). Callers must therefore remember the size of what they
 * allocate.
 */
#ifndef GOBLIN_STORE_INTERNAL_H
#define GOBLIN_STORE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "evict.h"
#include "goblin/common.h"
#include "keyspace.h"

struct goblin_store {
    struct goblin_allocator alloc;
    struct goblin_config cfg;
    /* The microsecond clock (store.c): the configured now_us with its
     * ctx, or one derived from cfg.now_ms. */
    int64_t (*now_us)(void *ctx);
    void *now_us_ctx;
    bool libc;          /* the default allocator: charge chunk sizes */
    /* Access stamps (evict.c): the coarse clock keys are stamped with, in
     * seconds modulo 2^16, and whether lookups leave stamps alone (OBJECT,
     * CLIENT NO-TOUCH). With lfu, a stamp is instead the minute of the
     * last decay (modulo 256) in its high byte and Redis's logarithmic
     * access counter in its low byte. */
    uint16_t lru_clock;
    uint8_t lfu_minute;
    bool no_touch;
    bool lfu;
    int lfu_log_factor;   /* lfu-log-factor */
    int lfu_decay_time;   /* lfu-decay-time, minutes per decrement */
    struct goblin__evpool evpool;
    size_t used_memory;
    uint64_t dirty;
    uint64_t hash_seed;
    uint64_t rng;
    struct goblin__keyspace ks;
};

void *goblin__alloc(goblin_store *st, size_t size);
void *goblin__realloc(goblin_store *st, void *ptr, size_t old_size,
                      size_t new_size);
void goblin__free(goblin_store *st, void *ptr, size_t size);

/* n * size, or SIZE_MAX when it overflows (so the allocation then fails). */
static inline size_t goblin__mul(size_t n, size_t size)
{
    size_t r;

    if (__builtin_mul_overflow(n, size, &r))
        return SIZE_MAX;
    return r;
}

int64_t goblin__now_ms(const goblin_store *st);

/* A 64-bit pseudo-random number from the store's seeded generator. */
uint64_t goblin__rand64(goblin_store *st);

/* Hash of bytes, keyed by the store's seed. Good avalanche in every bit,
 * so callers may take position from the high bits and a fingerprint from
 * the low ones. */
uint64_t goblin__hash_bytes(uint64_t seed, const void *p, size_t len);

/* Records a change of key: bumps the dirty counter and calls the
 * configured key_changed hook. */
void goblin__key_changed(goblin_store *st, struct goblin_slice key);

/* Checks the keyspace's invariants and every object's (keyspace.c).
 * Returns 0 or a negative number naming the check that failed. Reads
 * only; slow. For tests and fuzz targets. */
int goblin__store_check(const goblin_store *st);

#endif
