/* goblin/common.h - what every part of the public API shares: the export
 * macro, version, error codes, byte slices, the store handle and its
 * configuration.
 *
 * Conventions (docs/errors.md has the full table):
 *  - A return value of 0 or more is a result; a negative one is a GOBLIN_E*
 *    code. Codes for system conditions equal -errno; Goblin's own count down
 *    from -1000.
 *  - "Not found" is an answer, not an error: 0, with out-values untouched.
 *  - A failed call changes nothing.
 *  - Pointers passed in are copied unless a comment says borrowed or taken.
 *  - A store belongs to one thread at a time.
 */
#ifndef GOBLIN_COMMON_H
#define GOBLIN_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define GOBLIN_API __attribute__((visibility("default")))
#else
#define GOBLIN_API
#endif

#define GOBLIN_VERSION_MAJOR 0
#define GOBLIN_VERSION_MINOR 1
#define GOBLIN_VERSION_PATCH 0
#define GOBLIN_VERSION_STRING "0.1.0"
/* One integer for compile-time checks (#if GOBLIN_VERSION_NUM >= 200):
 * MAJOR * 10000 + MINOR * 100 + PATCH, as goblin_version() returns it. */
#define GOBLIN_VERSION_NUM 100

/* The version of the library linked at run time, as
 * MAJOR * 10000 + MINOR * 100 + PATCH. */
GOBLIN_API int goblin_version(void);

/* Error codes. System conditions are -errno (Linux values, fixed here so
 * the header needs no <errno.h>). */
#define GOBLIN_OK 0
#define GOBLIN_EAGAIN (-11)       /* try again: queue full, need more bytes */
#define GOBLIN_ENOMEM (-12)       /* an allocation failed */
#define GOBLIN_EINVAL (-22)       /* an argument is out of its domain */
#define GOBLIN_ERANGE (-34)       /* an index or length is out of range */
#define GOBLIN_EPROTO (-71)       /* the peer broke the protocol */
#define GOBLIN_EBUSY (-16)        /* a live server or client holds it */
#define GOBLIN_ECONNABORTED (-103) /* the session ended (QUIT, CLIENT KILL) */
#define GOBLIN_ECONNRESET (-104)  /* the peer closed, died or restarted */
#define GOBLIN_ETIMEDOUT (-110)   /* a bounded wait ran out */
#define GOBLIN_ECONNREFUSED (-111) /* nobody serves it (stale ring file) */

#define GOBLIN_EWRONGTYPE (-1000) /* key holds another type */
#define GOBLIN_ENOTINT (-1001)    /* value is not an integer or out of range */
#define GOBLIN_EOVERFLOW (-1002)  /* increment or decrement would overflow */
#define GOBLIN_ENOTFLOAT (-1003)  /* value is not a valid float */
#define GOBLIN_ENANINF (-1004)    /* increment would produce NaN or Infinity */
#define GOBLIN_ENAN (-1005)       /* resulting score is not a number (NaN) */
#define GOBLIN_ENOKEY (-1006)     /* no such key (RENAME and friends) */
#define GOBLIN_ELIMIT (-1007)     /* a size limit of Goblin would be passed */
#define GOBLIN_EINCOMPAT (-1008)  /* layout or version mismatch */
#define GOBLIN_ESYNTAX (-1009)    /* options that cannot go together */
#define GOBLIN_EHASHNOTINT (-1010)   /* hash value is not an integer */
#define GOBLIN_EHASHNOTFLOAT (-1011) /* hash value is not a float */
#define GOBLIN_ESTRBIG (-1012)    /* string exceeds maximum allowed size */
#define GOBLIN_EOFFSET (-1013)    /* offset is out of range */
#define GOBLIN_EREPLY (-1014)     /* the server answered an error reply */

/* Persistence (goblin/snapshot.h). */
#define GOBLIN_ESNAPTRUNC (-1100)   /* the file ends before its end */
#define GOBLIN_ESNAPCRC (-1101)     /* a checksum does not match */
#define GOBLIN_ESNAPMAGIC (-1102)   /* not a file of the expected kind */
#define GOBLIN_ESNAPVERSION (-1103) /* a format version we cannot read */
#define GOBLIN_ESNAPFORMAT (-1104)  /* malformed content */
#define GOBLIN_ESNAPTYPE (-1105)    /* RDB: a value type Goblin lacks */
#define GOBLIN_ESNAPDB (-1106)      /* RDB: a key outside database 0 */

/* A short English text for a code, without Redis's "ERR " prefix; never
 * NULL. */
GOBLIN_API const char *goblin_strerror(int code);

/* Bytes, not C strings: ptr may hold NUL bytes and need not be terminated.
 * ptr may be NULL when len is 0. */
struct goblin_slice {
    const void *ptr;
    size_t len;
};

/* The value types a key can hold. */
enum goblin_type {
    GOBLIN_TYPE_NONE = 0,
    GOBLIN_TYPE_STRING = 1,
    GOBLIN_TYPE_HASH = 2,
    GOBLIN_TYPE_ZSET = 3,
    GOBLIN_TYPE_LIST = 4,
    GOBLIN_TYPE_SET = 5,
};

/* Memory for a store. free and realloc get the size the block was
 * allocated with, so the store can account for every byte it holds without
 * asking the allocator. realloc may be NULL (malloc + copy + free is used).
 * A NULL return means out of memory. */
struct goblin_allocator {
    void *(*malloc)(void *ctx, size_t size);
    void *(*realloc)(void *ctx, void *ptr, size_t old_size, size_t new_size);
    void (*free)(void *ctx, void *ptr, size_t size);
    void *ctx;
};

/* Configuration structs (this one, goblin_engine_config, goblin_client_config,
 * goblin_ring_config, goblin_ring_endpoint_config) grow only at the end, and
 * every call that takes one is an inline wrapper that also passes the size
 * the caller was compiled with (goblin_store_open calls
 * goblin_store_open_sized with sizeof(*cfg)). So a binary built against an
 * older header keeps working: the library reads only the bytes it was given
 * and defaults the rest. A caller built against a newer header works with
 * an older library as long as it sets none of the fields that library does
 * not know; if it does, the call fails with GOBLIN_EINVAL rather than
 * ignoring the setting. */

/* Store configuration. A zeroed field means its default; the struct grows
 * only at the end. */
struct goblin_config {
    const struct goblin_allocator *allocator; /* default: libc */
    /* Seeds hashing and every random choice (RANDOMKEY, HRANDFIELD, ...).
     * 0 means a fixed default, so runs are reproducible. */
    uint64_t seed;
    /* Wall-clock time in milliseconds since the Unix epoch, used for
     * expiry. Default: CLOCK_REALTIME. */
    int64_t (*now_ms)(void *ctx);
    void *clock_ctx;
    /* Called after a key's value is changed, created, deleted or expired
     * (WATCH and client-side caching need it). key is borrowed for the call.
     * The callback must not call back into the store. */
    void (*key_changed)(void *ctx, struct goblin_slice key);
    void *key_changed_ctx;
    /* The same wall clock in microseconds since the Unix epoch, read with
     * clock_ctx (TIME, INFO's server_time_usec). Given alone, it is the
     * clock: now_ms defaults to now_us / 1000. Left NULL with now_ms set,
     * it is now_ms * 1000 (a millisecond clock stays the one clock).
     * Both NULL: CLOCK_REALTIME. */
    int64_t (*now_us)(void *ctx);
    /* The longest string value, in bytes: 0 for GOBLIN_STRING_MAX (512
     * MB), or a larger limit up to GOBLIN_STRING_LIMIT (4 GiB - 1); any
     * other is GOBLIN_EINVAL. An engine sets the limit of its stores from
     * proto-max-bulk-len (512 MB when that is smaller), as Redis 7 lets
     * that setting raise it. */
    size_t string_max;
};

typedef struct goblin_store goblin_store;

/* Opens an empty store into *out. Returns 0, GOBLIN_ENOMEM or
 * GOBLIN_EINVAL. cfg may be NULL; it is copied. */
GOBLIN_API int goblin_store_open_sized(
    const struct goblin_config *cfg, size_t cfg_size, goblin_store **out);
static inline int goblin_store_open(
    const struct goblin_config *cfg, goblin_store **out)
{
    return goblin_store_open_sized(cfg, sizeof(*cfg), out);
}

/* Frees the store and everything in it. NULL is a no-op. */
GOBLIN_API void goblin_store_close(goblin_store *st);

/* Bytes the store holds through its allocator right now. */
GOBLIN_API size_t goblin_store_used_memory(const goblin_store *st);

/* Number of writes that changed data since the count was last reset
 * (Redis's "dirty" counter, used by save policies). */
GOBLIN_API uint64_t goblin_store_dirty(const goblin_store *st);
GOBLIN_API void goblin_store_reset_dirty(goblin_store *st);

/* The store's current time in ms, from the configured clock. */
GOBLIN_API int64_t goblin_store_now_ms(const goblin_store *st);

/* The store's current time in microseconds, from the configured clock
 * (see goblin_config.now_us). */
GOBLIN_API int64_t goblin_store_now_us(const goblin_store *st);

#ifdef __cplusplus
}
#endif

#endif
