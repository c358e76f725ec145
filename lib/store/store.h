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
#include "goblin/str.h"
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
    uint64_t hash_secret; /* goblin__hash_secret(hash_seed), worked out once */
    uint64_t rng;
    struct goblin__keyspace ks;
    /* Told of each key that leaves without a command deleting it
     * (expired, evicted), before it goes, and of the key events of
     * key_events; keyspace notifications. */
    void (*key_event)(void *ctx, int why, struct goblin_slice key);
    void *key_event_ctx;
    /* Which of GOBLIN__KEY_NEW / GOBLIN__KEY_MISS go to key_event: a
     * key created (Redis's dbAdd), a read lookup that found nothing. */
    uint8_t key_events;
    /* Read lookups (Redis's lookupKeyRead): while the running command
     * reads (GOBLIN__READS_*, set around the command by the engine),
     * every lookup counts a hit or a miss in *read_stats. */
    uint8_t reads;
    struct goblin__read_stats *read_stats;
    /* CLIENT PAUSE: a read lookup takes an expired key for missing but
     * leaves it in place. */
    bool expire_paused;
    /* A replica running its master's command (dispatch.c): a key whose
     * deadline passed is live to it, as Redis's expireIfNeeded leaves it
     * to server.master, so a master whose clock is behind ours changes
     * the value it still has. */
    bool master_view;
    /* The engine's frozen clock (goblin__expiry_now), or NULL. */
    const int64_t *frozen_ms;
    /* Hash field expiry (hash_ttl.h): the hashes holding a field deadline,
     * where the active step resumes, and the fields expired so far. Each
     * field that expires goes to field_gone (before it goes), then
     * fields_done once per hash and pass, saying whether the key went
     * with its last field; both with key_event_ctx. */
    size_t httl_hashes;
    size_t httl_cursor;
    uint64_t expired_fields;
    void (*field_gone)(void *ctx, struct goblin_slice key,
                       struct goblin_slice field);
    void (*fields_done)(void *ctx, struct goblin_slice key, bool key_gone);
};

/* Redis's keyspace_hits and keyspace_misses. */
struct goblin__read_stats {
    uint64_t hits, misses;
};

/* st->reads: lookups count; misses are also key events (not for
 * OBJECT, whose lookups Redis makes without notifying). */
enum { GOBLIN__READS_COUNT = 1, GOBLIN__READS_NOTIFY = 2 };

/* Why a key left that no command deleted, and the other key events. */
enum {
    GOBLIN__GONE_EXPIRED = 1,
    GOBLIN__GONE_EVICTED = 2,
    GOBLIN__KEY_NEW = 4,
    GOBLIN__KEY_MISS = 8,
};

/* A read lookup found key (found) or not: counts it, and reports a miss
 * as a key event when asked to. */
void goblin__read_missed(goblin_store *st, struct goblin_slice key);
static inline void goblin__read_counted(goblin_store *st, int found,
                                        struct goblin_slice key)
{
    if (__builtin_expect(st->reads != 0, 0)) {
        if (found)
            st->read_stats->hits++;
        else
            goblin__read_missed(st, key);
    }
}

/* A key was just created: the key event when asked for. */
static inline void goblin__key_created(goblin_store *st,
                                       struct goblin_slice key)
{
    if (__builtin_expect((st->key_events & GOBLIN__KEY_NEW) != 0, 0))
        st->key_event(st->key_event_ctx, GOBLIN__KEY_NEW, key);
}

/* Reports key as changed and, to the key_event hook, as gone for why. */
void goblin__key_gone(goblin_store *st, int why, struct goblin_slice key);

/* The NX|XX|GT|LT rules of key and hash field deadlines (expire.c). */
int goblin__expire_flags_check(int flags);
bool goblin__expire_allowed(int flags, int64_t cur, int64_t when);

/* Opens an empty store with proto's allocator, clock, seed, string limit
 * and eviction settings, and no change hook: another numbered database of
 * the same server. 0 or GOBLIN_ENOMEM. */
int goblin__store_open_like(const goblin_store *proto, goblin_store **out);
/* The longest string value (cfg.string_max), clamped to GOBLIN_STRING_MAX
 * .. GOBLIN_STRING_LIMIT. The engine sets it from proto-max-bulk-len
 * (whose lower values its commands check themselves). */
void goblin__store_set_string_max(goblin_store *st, uint64_t max);
/* The limit a write meets now: a replica's master is held only to what a
 * record holds (Redis exempts server.master from proto-max-bulk-len), so
 * a master whose limit is higher than ours is followed exactly. */
static inline size_t goblin__string_limit(const goblin_store *st)
{
    return __builtin_expect(st->master_view, 0) ? GOBLIN_STRING_LIMIT
                                                : st->cfg.string_max;
}

void *goblin__alloc(goblin_store *st, size_t size);
void *goblin__realloc(goblin_store *st, void *ptr, size_t old_size,
                      size_t new_size);
void goblin__free(goblin_store *st, void *ptr, size_t size);
/* What the live block p of size bytes is charged in used_memory. */
size_t goblin__charge(const goblin_store *st, void *p, size_t size);

/* n * size, or SIZE_MAX when it overflows (so the allocation then fails). */
static inline size_t goblin__mul(size_t n, size_t size)
{
    size_t r;

    if (__builtin_mul_overflow(n, size, &r))
        return SIZE_MAX;
    return r;
}

int64_t goblin__now_ms(const goblin_store *st);
/* The time a deadline is compared with to tell whether a key (or a hash
 * field) has expired: while the engine holds the clock (a script, EXEC's
 * queue: *frozen_ms non-zero) the time that began, else now. Relative
 * deadlines (EXPIRE, SET PX) and TTLs still count from now, as in Redis
 * 7.0. */
static inline int64_t goblin__expiry_now(const goblin_store *st)
{
    if (st->frozen_ms != NULL && *st->frozen_ms != 0)
        return *st->frozen_ms;
    return goblin__now_ms(st);
}

/* A 64-bit pseudo-random number from the store's seeded generator. */
uint64_t goblin__rand64(goblin_store *st);

/* Hash of bytes, keyed by the store's seed. Good avalanche in every bit,
 * so callers may take position from the high bits and a fingerprint from
 * the low ones. */
uint64_t goblin__hash_bytes(uint64_t seed, const void *p, size_t len);

/* The hash itself, inline so that key lookups (keyspace.c) hash a short key
 * without a call: a multiply-fold hash in the style of wyhash, 16 bytes per
 * round, each round one 64x64->128 multiply, and a final mix that spreads
 * every input bit over the whole result. secret is what the seed alone
 * decides (goblin__hash_secret), worked out once per store rather than per
 * call; goblin__hash_bytes(seed, p, len) ==
 * goblin__hash_with(goblin__hash_secret(seed), p, len). */
static inline uint64_t goblin__hash_mix(uint64_t a, uint64_t b)
{
    __uint128_t r = (__uint128_t)a * b;

    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

#define GOBLIN__HASH_K0 0xa0761d6478bd642full
#define GOBLIN__HASH_K1 0xe7037ed1a0b428dbull
#define GOBLIN__HASH_K2 0x8ebc6af09c88c6e3ull

static inline uint64_t goblin__hash_secret(uint64_t seed)
{
    return seed ^ goblin__hash_mix(seed ^ GOBLIN__HASH_K0, GOBLIN__HASH_K1);
}

static inline uint64_t goblin__hash_load64(const uint8_t *p)
{
    uint64_t v;

    memcpy(&v, p, 8);
    return v;
}

static inline uint64_t goblin__hash_load32(const uint8_t *p)
{
    uint32_t v;

    memcpy(&v, p, 4);
    return v;
}

static inline uint64_t goblin__hash_with(uint64_t secret, const void *data,
                                         size_t len)
{
    const uint64_t k1 = GOBLIN__HASH_K1;
    const uint8_t *p = data;
    uint64_t a, b, s = secret;
    size_t n = len;

    if (n <= 16) {
        if (n >= 4) {
            a = (goblin__hash_load32(p) << 32) |
                goblin__hash_load32(p + ((n >> 3) << 2));
            b = (goblin__hash_load32(p + n - 4) << 32) |
                goblin__hash_load32(p + n - 4 - ((n >> 3) << 2));
        } else if (n > 0) {
            a = ((uint64_t)p[0] << 16) | ((uint64_t)p[n >> 1] << 8) |
                p[n - 1];
            b = 0;
        } else {
            a = b = 0;
        }
    } else {
        while (n > 16) {
            s = goblin__hash_mix(goblin__hash_load64(p) ^ k1,
                                 goblin__hash_load64(p + 8) ^ s);
            p += 16;
            n -= 16;
        }
        a = goblin__hash_load64(p + n - 16);
        b = goblin__hash_load64(p + n - 8);
    }
    return goblin__hash_mix(k1 ^ len, goblin__hash_mix(a ^ k1, b ^ s) ^
                                          GOBLIN__HASH_K2);
}

/* Records a change of key: bumps the dirty counter and calls the
 * configured key_changed hook. */
void goblin__key_changed(goblin_store *st, struct goblin_slice key);

/* Checks the keyspace's invariants and every object's (keyspace.c).
 * Returns 0 or a negative number naming the check that failed. Reads
 * only; slow. For tests and fuzz targets. */
int goblin__store_check(const goblin_store *st);

#endif
