/* store.c - opening and closing a store, allocation with exact accounting,
 * the clock, the random generator, byte hashing and error texts.
 *
 * used_memory counts what the allocator really holds for each block. With
 * a configured allocator that is the size asked for (the allocator is told
 * every size, so it can do its own accounting). With the default one,
 * glibc malloc, a block costs its usable size (the request rounded up to
 * the 16-byte chunk grid, at least 24 bytes) plus the 8-byte chunk header:
 * a 21-byte key record really takes 32 bytes, and counting 21 would put
 * used_memory far below the process's RSS on many small keys
 * (docs/memory.md). */
#include <stdlib.h>
#include <time.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "goblin/str.h"
#include "store.h"
#include "util/config_size.h"

void goblin__keyspace_init(goblin_store *st);
void goblin__keyspace_free(goblin_store *st);

static void *libc_malloc(void *ctx, size_t size)
{
    (void)ctx;
    return malloc(size);
}

static void *libc_realloc(void *ctx, void *ptr, size_t old_size,
                          size_t new_size)
{
    (void)ctx;
    (void)old_size;
    return realloc(ptr, new_size);
}

static void libc_free(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    (void)size;
    free(ptr);
}

static const struct goblin_allocator libc_allocator = {
    libc_malloc, libc_realloc, libc_free, NULL,
};

static int64_t realtime_ms(void *ctx)
{
    struct timespec ts;

    (void)ctx;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

_Static_assert(GOBLIN_VERSION_NUM == GOBLIN_VERSION_MAJOR * 10000 +
                                         GOBLIN_VERSION_MINOR * 100 +
                                         GOBLIN_VERSION_PATCH,
               "GOBLIN_VERSION_NUM must agree with its parts");

static int64_t realtime_us(void *ctx)
{
    struct timespec ts;

    (void)ctx;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* A millisecond clock read as microseconds (ctx is the store). */
static int64_t us_from_ms(void *ctx)
{
    const goblin_store *st = ctx;

    return st->cfg.now_ms(st->cfg.clock_ctx) * 1000;
}

/* A microsecond clock read as milliseconds (ctx is the store). */
static int64_t ms_from_us(void *ctx)
{
    const goblin_store *st = ctx;
    int64_t us = st->now_us(st->now_us_ctx);

    return us >= 0 ? us / 1000 : -((-us + 999) / 1000);
}

/* One clock from what cfg gives (goblin_config.now_us). */
static void clock_init(goblin_store *st)
{
    const struct goblin_config *c = &st->cfg;

    st->now_us = c->now_us;
    st->now_us_ctx = c->clock_ctx;
    if (c->now_us == NULL && c->now_ms == NULL) {
        st->cfg.now_ms = realtime_ms;
        st->now_us = realtime_us;
    } else if (c->now_us == NULL) {
        st->now_us = us_from_ms;
        st->now_us_ctx = st;
    } else if (c->now_ms == NULL) {
        st->cfg.now_ms = ms_from_us;
        st->cfg.clock_ctx = st;
    }
}

int goblin_version(void)
{
    return GOBLIN_VERSION_MAJOR * 10000 + GOBLIN_VERSION_MINOR * 100 +
           GOBLIN_VERSION_PATCH;
}

static int store_open(const struct goblin_config *cfg, goblin_store **out)
{
    struct goblin_config c = {0};
    const struct goblin_allocator *a;
    goblin_store *st;

    if (out == NULL)
        return GOBLIN_EINVAL;
    if (cfg != NULL)
        c = *cfg;
    a = c.allocator != NULL ? c.allocator : &libc_allocator;
    if (a->malloc == NULL || a->free == NULL ||
        (c.string_max != 0 && c.string_max < GOBLIN_STRING_MAX) ||
        c.string_max > GOBLIN_STRING_LIMIT)
        return GOBLIN_EINVAL;
    if (c.string_max == 0)
        c.string_max = GOBLIN_STRING_MAX;
    st = a->malloc(a->ctx, sizeof(*st));
    if (st == NULL)
        return GOBLIN_ENOMEM;
    memset(st, 0, sizeof(*st));
    st->alloc = *a;
    st->libc = a == &libc_allocator;
    st->cfg = c;
    st->cfg.allocator = &st->alloc;
    clock_init(st);
    st->hash_seed = c.seed != 0 ? c.seed : 0x9e3779b97f4a7c15ull;
    st->hash_secret = goblin__hash_secret(st->hash_seed);
    st->rng = st->hash_seed ^ 0xd1b54a32d192ed03ull;
    goblin__keyspace_init(st);
    st->lfu_log_factor = 10;
    st->lfu_decay_time = 1;
    goblin__lru_tick(st);
    *out = st;
    return 0;
}

int goblin_store_open_sized(const struct goblin_config *cfg, size_t cfg_size,
                            goblin_store **out)
{
    struct goblin_config c;

    if (cfg == NULL)
        return store_open(NULL, out);
    if (goblin__config_copy(&c, sizeof(c), cfg, cfg_size,
                            sizeof(cfg->allocator)) != 0)
        return GOBLIN_EINVAL;
    return store_open(&c, out);
}

void goblin__store_set_string_max(goblin_store *st, uint64_t max)
{
    st->cfg.string_max = max < GOBLIN_STRING_MAX ? GOBLIN_STRING_MAX
                         : max > GOBLIN_STRING_LIMIT ? GOBLIN_STRING_LIMIT
                                                     : (size_t)max;
}

int goblin__store_open_like(const goblin_store *proto, goblin_store **out)
{
    goblin_store *st = proto->alloc.malloc(proto->alloc.ctx, sizeof(*st));

    if (st == NULL)
        return GOBLIN_ENOMEM;
    memset(st, 0, sizeof(*st));
    st->alloc = proto->alloc;
    st->libc = proto->libc;
    st->cfg = proto->cfg;
    st->cfg.allocator = &st->alloc;
    st->cfg.key_changed = NULL;
    st->cfg.key_changed_ctx = NULL;
    /* The clock adapters of clock_init take their own store as ctx. */
    if (st->cfg.clock_ctx == proto)
        st->cfg.clock_ctx = st;
    st->now_us = proto->now_us;
    st->now_us_ctx = proto->now_us_ctx == proto ? st : proto->now_us_ctx;
    st->hash_seed = proto->hash_seed;
    st->hash_secret = proto->hash_secret;
    st->rng = proto->rng ^ (uint64_t)(uintptr_t)st;
    goblin__keyspace_init(st);
    st->lfu = proto->lfu;
    st->lfu_log_factor = proto->lfu_log_factor;
    st->lfu_decay_time = proto->lfu_decay_time;
    goblin__lru_tick(st);
    *out = st;
    return 0;
}

void goblin_store_close(goblin_store *st)
{
    struct goblin_allocator a;

    if (st == NULL)
        return;
    goblin__keyspace_free(st);
    a = st->alloc;
    a.free(a.ctx, st, sizeof(*st));
}

size_t goblin_store_used_memory(const goblin_store *st)
{
    return st->used_memory + sizeof(*st);
}

uint64_t goblin_store_dirty(const goblin_store *st)
{
    return st->dirty;
}

void goblin_store_reset_dirty(goblin_store *st)
{
    st->dirty = 0;
}

int64_t goblin_store_now_ms(const goblin_store *st)
{
    return goblin__now_ms(st);
}

int64_t goblin__now_ms(const goblin_store *st)
{
    return st->cfg.now_ms(st->cfg.clock_ctx);
}

int64_t goblin_store_now_us(const goblin_store *st)
{
    return st->now_us(st->now_us_ctx);
}

/* What the block p of size bytes costs (see the top of this file). */
static inline size_t charge(const goblin_store *st, void *p, size_t size)
{
#if defined(__GLIBC__)
    if (st->libc)
        return malloc_usable_size(p) + sizeof(size_t);
#else
    if (st->libc)   /* a typical malloc: 16-byte grid, one header word */
        return ((size + sizeof(size_t) + 15) & ~(size_t)15);
#endif
    (void)p;
    return size;
}

size_t goblin__charge(const goblin_store *st, void *p, size_t size)
{
    return charge(st, p, size);
}

void *goblin__alloc(goblin_store *st, size_t size)
{
    void *p;

    if (size == 0 || size == SIZE_MAX)
        return NULL;
    p = st->alloc.malloc(st->alloc.ctx, size);
    if (p != NULL)
        st->used_memory += charge(st, p, size);
    return p;
}

void *goblin__realloc(goblin_store *st, void *ptr, size_t old_size,
                      size_t new_size)
{
    size_t old_charge;
    void *p;

    if (ptr == NULL)
        return goblin__alloc(st, new_size);
    if (new_size == 0 || new_size == SIZE_MAX)
        return NULL;
    old_charge = charge(st, ptr, old_size);
    if (st->alloc.realloc != NULL) {
        p = st->alloc.realloc(st->alloc.ctx, ptr, old_size, new_size);
        if (p == NULL)
            return NULL;
    } else {
        p = st->alloc.malloc(st->alloc.ctx, new_size);
        if (p == NULL)
            return NULL;
        memcpy(p, ptr, old_size < new_size ? old_size : new_size);
        st->alloc.free(st->alloc.ctx, ptr, old_size);
    }
    st->used_memory += charge(st, p, new_size);
    st->used_memory -= old_charge;
    return p;
}

void goblin__free(goblin_store *st, void *ptr, size_t size)
{
    if (ptr == NULL)
        return;
    st->used_memory -= charge(st, ptr, size);
    st->alloc.free(st->alloc.ctx, ptr, size);
}

uint64_t goblin__rand64(goblin_store *st)
{
    /* splitmix64: one add and three mixes, full period over 2^64. */
    uint64_t z = (st->rng += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The hash is goblin__hash_with (store.h); this is its seeded form for
 * the callers that keep only a seed. */
uint64_t goblin__hash_bytes(uint64_t seed, const void *data, size_t len)
{
    return goblin__hash_with(goblin__hash_secret(seed), data, len);
}

void goblin__key_gone(goblin_store *st, int why, struct goblin_slice key)
{
    goblin__key_changed(st, key);
    if (st->key_event != NULL)
        st->key_event(st->key_event_ctx, why, key);
}

void goblin__read_missed(goblin_store *st, struct goblin_slice key)
{
    st->read_stats->misses++;
    if ((st->reads & GOBLIN__READS_NOTIFY) &&
        (st->key_events & GOBLIN__KEY_MISS))
        st->key_event(st->key_event_ctx, GOBLIN__KEY_MISS, key);
}

void goblin__key_changed(goblin_store *st, struct goblin_slice key)
{
    st->dirty++;
    if (st->cfg.key_changed != NULL)
        st->cfg.key_changed(st->cfg.key_changed_ctx, key);
}

const char *goblin_strerror(int code)
{
    switch (code) {
    case GOBLIN_OK: return "ok";
    case GOBLIN_EAGAIN: return "resource temporarily unavailable";
    case GOBLIN_ENOMEM: return "out of memory";
    case GOBLIN_EINVAL: return "invalid argument";
    case GOBLIN_ERANGE: return "index out of range";
    case GOBLIN_EPROTO: return "protocol error";
    case GOBLIN_EBUSY: return "in use by a live peer";
    case GOBLIN_ECONNABORTED: return "session ended";
    case GOBLIN_ECONNRESET: return "peer closed, died or restarted";
    case GOBLIN_ETIMEDOUT: return "timed out";
    case GOBLIN_ECONNREFUSED: return "no server behind it";
    case GOBLIN_EWRONGTYPE:
        return "Operation against a key holding the wrong kind of value";
    case GOBLIN_ENOTINT: return "value is not an integer or out of range";
    case GOBLIN_EOVERFLOW: return "increment or decrement would overflow";
    case GOBLIN_ENOTFLOAT: return "value is not a valid float";
    case GOBLIN_ENANINF: return "increment would produce NaN or Infinity";
    case GOBLIN_ENAN: return "resulting score is not a number (NaN)";
    case GOBLIN_ENOKEY: return "no such key";
    case GOBLIN_ELIMIT: return "size limit exceeded";
    case GOBLIN_EINCOMPAT: return "incompatible layout or version";
    case GOBLIN_ESYNTAX: return "syntax error";
    case GOBLIN_EHASHNOTINT: return "hash value is not an integer";
    case GOBLIN_EHASHNOTFLOAT: return "hash value is not a float";
    case GOBLIN_ESTRBIG:
        return "string exceeds maximum allowed size (proto-max-bulk-len)";
    case GOBLIN_EOFFSET: return "offset is out of range";
    case GOBLIN_EREPLY: return "the server answered an error";
    case GOBLIN_ESNAPTRUNC: return "snapshot file is truncated";
    case GOBLIN_ESNAPCRC: return "snapshot checksum mismatch";
    case GOBLIN_ESNAPMAGIC: return "not a snapshot file of this kind";
    case GOBLIN_ESNAPVERSION: return "snapshot format version not supported";
    case GOBLIN_ESNAPFORMAT: return "malformed snapshot content";
    case GOBLIN_ESNAPTYPE: return "value type not supported";
    case GOBLIN_ESNAPDB: return "key outside database 0";
    default: return "unknown error";
    }
}
