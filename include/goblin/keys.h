/* goblin/keys.h - the keyspace: keys of every type, their deadlines and
 * iteration over them (DEL, EXISTS, TYPE, RENAME, RENAMENX, DBSIZE,
 * FLUSHALL, RANDOMKEY, SCAN, KEYS, OBJECT ENCODING, EXPIRE and its
 * relatives, TTL, PTTL, EXPIRETIME, PERSIST).
 *
 * Keys are binary-safe byte strings and are copied. A key whose deadline
 * has passed (now > deadline, in the store's clock) is absent for every
 * call; the first call that meets it deletes it and reports the change.
 *
 * Views: a struct goblin_slice or string handed back borrows from the
 * store and stays valid until the next call that writes to the store. A
 * view of a key whose deadline has passed ends at the next call.
 */
#ifndef GOBLIN_KEYS_H
#define GOBLIN_KEYS_H

#include "goblin/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Deletes key. Returns 1 if it existed, else 0. */
GOBLIN_API int goblin_key_delete(goblin_store *st, struct goblin_slice key);

/* Returns 1 if key exists, else 0. */
GOBLIN_API int goblin_key_exists(goblin_store *st, struct goblin_slice key);

/* The type key holds, GOBLIN_TYPE_NONE when absent. */
GOBLIN_API enum goblin_type goblin_key_type(goblin_store *st,
                                            struct goblin_slice key);

/* Renames src to dst with its value and deadline (RENAME), replacing
 * whatever dst holds; with nx nonzero only when dst is absent (RENAMENX).
 * Returns 1 when renamed (also when src equals dst), 0 when nx stopped it
 * (RENAMENX of a key onto itself is 0 too, as in Redis), GOBLIN_ENOKEY when
 * src is absent ("ERR no such key"), or GOBLIN_ENOMEM. */
GOBLIN_API int goblin_key_rename(goblin_store *st, struct goblin_slice src,
                                 struct goblin_slice dst, int nx);

/* Keys in the store (DBSIZE), counting keys whose deadline passed but that
 * were not yet deleted, as Redis does. */
GOBLIN_API size_t goblin_key_count(const goblin_store *st);

/* Keys with a deadline (INFO keyspace "expires="). */
GOBLIN_API size_t goblin_key_expires_count(const goblin_store *st);

/* Deletes every key (FLUSHALL, FLUSHDB) and returns how many there were.
 * Each deleted key is reported as changed. */
GOBLIN_API size_t goblin_store_flush(goblin_store *st);

/* A random key (RANDOMKEY). Returns 1 and sets *out to a view of the key,
 * or 0 when the store is empty. */
GOBLIN_API int goblin_key_random(goblin_store *st, struct goblin_slice *out);

/* OBJECT ENCODING: returns 1 and sets *out to a static text -- "int",
 * "embstr" or "raw" for strings, as Redis names them; "listpack",
 * "hashtable" or "skiplist" for collections -- or 0 when key is absent. */
GOBLIN_API int goblin_key_encoding(goblin_store *st, struct goblin_slice key,
                                   const char **out);

/* ---- deadlines ---- */

/* Conditions of EXPIRE and its relatives (Redis 7), as a bit set. NX
 * cannot go with XX, GT or LT; GT cannot go with LT. A key without a
 * deadline counts as one infinitely far: GT never applies to it, LT does. */
#define GOBLIN_EXPIRE_NX 0x1 /* only when the key has no deadline */
#define GOBLIN_EXPIRE_XX 0x2 /* only when it has one */
#define GOBLIN_EXPIRE_GT 0x4 /* only when the new one is later */
#define GOBLIN_EXPIRE_LT 0x8 /* only when the new one is earlier */

/* EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT: give key a deadline `seconds` or
 * `ms` from now, or at a Unix time in seconds or ms. A deadline not after
 * now deletes the key at once. Returns 1 when the deadline was set or the
 * key deleted, 0 when the key is absent or a condition stopped it,
 * GOBLIN_ESYNTAX for flags that cannot go together (Redis: "ERR NX and XX,
 * GT or LT options at the same time are not compatible", "ERR GT and LT
 * options at the same time are not compatible"), GOBLIN_EINVAL when the
 * time overflows ("ERR invalid expire time in 'expire' command"; checked
 * before the key is looked at, as Redis does), or GOBLIN_ENOMEM. */
GOBLIN_API int goblin_key_expire(goblin_store *st, struct goblin_slice key,
                                 int64_t seconds, int flags);
GOBLIN_API int goblin_key_pexpire(goblin_store *st, struct goblin_slice key,
                                  int64_t ms, int flags);
GOBLIN_API int goblin_key_expireat(goblin_store *st, struct goblin_slice key,
                                   int64_t unix_seconds, int flags);
GOBLIN_API int goblin_key_pexpireat(goblin_store *st, struct goblin_slice key,
                                    int64_t unix_ms, int flags);

/* TTL and PTTL: the time left, in seconds (rounded to nearest, as Redis)
 * or ms; -1 when key has no deadline, -2 when it is absent. */
GOBLIN_API int64_t goblin_key_ttl(goblin_store *st, struct goblin_slice key);
GOBLIN_API int64_t goblin_key_pttl(goblin_store *st, struct goblin_slice key);

/* EXPIRETIME and PEXPIRETIME: the deadline as a Unix time in seconds
 * (rounded to nearest, as Redis) or ms; -1 without one, -2 when key is
 * absent. */
GOBLIN_API int64_t goblin_key_expiretime(goblin_store *st,
                                         struct goblin_slice key);
GOBLIN_API int64_t goblin_key_pexpiretime(goblin_store *st,
                                          struct goblin_slice key);

/* PERSIST: drops key's deadline. Returns 1 if it had one, 0 if it had none
 * or is absent, or GOBLIN_ENOMEM. */
GOBLIN_API int goblin_key_persist(goblin_store *st, struct goblin_slice key);

/* One step of active expiry, for the server to call periodically (Redis's
 * activeExpireCycle): examines at most max_work keys with a deadline,
 * resuming where the last step stopped, and deletes those past it, adding
 * their number to *expired (which may be NULL). Returns 1 when it used all
 * of max_work and its last batch (20 keys) found more than a tenth of its
 * keys expired, so more work is likely and the caller should step again
 * soon; else 0. */
GOBLIN_API int goblin_store_expire_step(goblin_store *st, size_t max_work,
                                        size_t *expired);

/* ---- iteration ---- */

/* Redis's glob matching (stringmatchlen, as KEYS, SCAN MATCH and PSUBSCRIBE
 * use it): '*', '?', '[...]' with ranges and '^', '\' escapes; nocase
 * folds ASCII letters. Binary-safe. Returns 1 on a match, else 0. As in
 * Redis, "*" does not match the empty string: KEYS and SCAN treat the
 * pattern "*" as no pattern. */
GOBLIN_API int goblin_glob_match(const void *pattern, size_t pattern_len,
                                 const void *str, size_t str_len, int nocase);

struct goblin_scan_options {
    /* MATCH: keys matching this glob pattern only; ptr NULL (or "*")
     * for all. */
    struct goblin_slice match;
    /* TYPE: keys of this type only; GOBLIN_TYPE_NONE for all. */
    enum goblin_type type;
    /* COUNT: how many keys to examine (not return); 0 means 10. */
    size_t count;
};

/* Called with each key a scan or a walk returns; key is a view. Return 0
 * to go on, nonzero to stop. Must not write to the store. */
typedef int (*goblin_key_fn)(void *ctx, struct goblin_slice key);

/* SCAN: start with cursor 0 and pass back each *next until it is 0. Every
 * key present for the whole scan is returned at least once, whatever is
 * added or deleted meanwhile; a key may be returned more than once. opts
 * may be NULL. Keys found expired are deleted and not returned. Returns 0,
 * or the nonzero value fn stopped with; *next then resumes right after the
 * key fn stopped at. */
GOBLIN_API int goblin_key_scan(goblin_store *st, uint64_t cursor,
                               const struct goblin_scan_options *opts,
                               goblin_key_fn fn, void *ctx, uint64_t *next);

/* What goblin_key_foreach shows of each key. */
struct goblin_key_info {
    struct goblin_slice key;   /* a view */
    enum goblin_type type;
    int64_t deadline_ms;       /* Unix ms, or -1 */
    struct goblin_slice value; /* strings: a view of the value; else empty */
};

typedef int (*goblin_key_visit_fn)(void *ctx,
                                   const struct goblin_key_info *info);

/* Visits every key whose deadline has not passed (KEYS, snapshots), in
 * no particular order, deleting nothing. Returns 0, or the nonzero value
 * fn stopped with. fn must not write to the store. */
GOBLIN_API int goblin_key_foreach(goblin_store *st, goblin_key_visit_fn fn,
                                  void *ctx);

#ifdef __cplusplus
}
#endif

#endif
