/* goblin/hash.h - hash values (Redis hashes): a key holding a map from
 * field to value, both binary-safe byte strings.
 *
 * Conventions shared by every call below:
 *  - A missing key acts as an empty hash; a key holding another type gives
 *    GOBLIN_EWRONGTYPE.
 *  - Fields and values passed in are copied. A write must not be given
 *    views borrowed from the same hash (copy them first): the write may
 *    move or free the bytes they point at before it has read them.
 *  - Views handed out (values, and the field/value slices given to a
 *    visitor) are borrowed: they stay valid until the next write to the
 *    store. A present value's ptr is never NULL, even when it is empty.
 *  - A failed call changes nothing: an HSET of several pairs whose
 *    allocation fails adds none of them.
 *  - Removing the last field removes the key.
 *  - Small hashes are kept in one compact block ("listpack" for OBJECT
 *    ENCODING) and converted once, for good, to the full form
 *    ("hashtable") when they pass 128 fields or a field or value longer
 *    than 64 bytes arrives, as Redis does with its default settings.
 *  - Goblin limits (Redis has none below 512 MB a value): a hash holds
 *    fewer than 2^32 fields in at most 4 GiB of pair bytes (freed space is
 *    reclaimed as it goes), and one field and its value take at most
 *    4 GiB - 16 bytes together. Passing them gives GOBLIN_ELIMIT.
 */
#ifndef GOBLIN_HASH_H
#define GOBLIN_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Visitor for iteration: called once per pair with borrowed views. Return
 * 0 to go on; any other value stops the iteration, and the iterating call
 * returns that value (so return a negative GOBLIN_E* code to pass an error
 * up). The visitor must not call into the store. */
typedef int (*goblin_hash_visit)(void *ctx, struct goblin_slice field,
                                 struct goblin_slice value);

/* HSET / HMSET. fv holds 2 * npairs slices: field, value, field, value...
 * Pairs apply left to right, so a field given twice ends with its last
 * value. Returns the number of fields that were new (HMSET replies OK
 * instead), or GOBLIN_EWRONGTYPE, GOBLIN_ENOMEM, GOBLIN_ELIMIT, or
 * GOBLIN_EINVAL when npairs is 0 or above INT_MAX / 2. */
GOBLIN_API int goblin_hash_set(goblin_store *st, struct goblin_slice key,
                               const struct goblin_slice *fv, size_t npairs);

/* HSETNX. Sets field only if it is absent. Returns 1 if set, 0 if the field
 * existed (nothing changes), or GOBLIN_EWRONGTYPE / GOBLIN_ENOMEM /
 * GOBLIN_ELIMIT. */
GOBLIN_API int goblin_hash_setnx(goblin_store *st, struct goblin_slice key,
                                 struct goblin_slice field,
                                 struct goblin_slice value);

/* HGET. Returns 1 and sets *value (borrowed), 0 if the key or field is
 * absent (*value untouched), or GOBLIN_EWRONGTYPE. */
GOBLIN_API int goblin_hash_get(goblin_store *st, struct goblin_slice key,
                               struct goblin_slice field,
                               struct goblin_slice *value);

/* HMGET. For each of the n fields sets values[i] to its value (borrowed),
 * or to {NULL, 0} when absent. Returns the number found, or
 * GOBLIN_EWRONGTYPE (values untouched) or GOBLIN_EINVAL (n above INT_MAX).
 * A missing key gives all {NULL, 0}. */
GOBLIN_API int goblin_hash_mget(goblin_store *st, struct goblin_slice key,
                                const struct goblin_slice *fields, size_t n,
                                struct goblin_slice *values);

/* HDEL. Removes the n fields (repeats count once). Returns the number
 * removed, or GOBLIN_EWRONGTYPE, GOBLIN_EINVAL (n 0 or above INT_MAX), or
 * GOBLIN_ENOMEM (a compact hash is rebuilt at its new size; a full one
 * never fails). */
GOBLIN_API int goblin_hash_del(goblin_store *st, struct goblin_slice key,
                               const struct goblin_slice *fields, size_t n);

/* HLEN. Returns the number of fields (0 for a missing key), or
 * GOBLIN_EWRONGTYPE. */
GOBLIN_API int64_t goblin_hash_len(goblin_store *st, struct goblin_slice key);

/* HEXISTS. Returns 1, 0, or GOBLIN_EWRONGTYPE. */
GOBLIN_API int goblin_hash_exists(goblin_store *st, struct goblin_slice key,
                                  struct goblin_slice field);

/* HSTRLEN. Returns the value's length, 0 when absent, or
 * GOBLIN_EWRONGTYPE. */
GOBLIN_API int64_t goblin_hash_strlen(goblin_store *st,
                                      struct goblin_slice key,
                                      struct goblin_slice field);

/* HGETALL / HKEYS / HVALS. Calls visit for every pair, in the hash's order
 * (insertion order while compact; unspecified once full). Returns the
 * number of pairs visited (0 for a missing key), GOBLIN_EWRONGTYPE, or the
 * visitor's nonzero return. goblin_hash_len gives the count beforehand,
 * for a reply header. */
GOBLIN_API int64_t goblin_hash_foreach(goblin_store *st,
                                       struct goblin_slice key,
                                       goblin_hash_visit visit, void *ctx);

/* HINCRBY. Adds incr to the field's integer value (a missing field counts
 * as 0) and stores the result as decimal text. Returns 0 and sets *result,
 * or GOBLIN_EHASHNOTINT (the value is not a canonical int64 text),
 * GOBLIN_EOVERFLOW, GOBLIN_EWRONGTYPE, GOBLIN_ENOMEM. */
GOBLIN_API int goblin_hash_incrby(goblin_store *st, struct goblin_slice key,
                                  struct goblin_slice field, int64_t incr,
                                  int64_t *result);

/* HINCRBYFLOAT. Adds incr in long double arithmetic to the field's value
 * (a missing field counts as 0) and stores the result as Redis formats it
 * (%.17Lf, trailing zeros and dot removed). Returns 0 and sets *result to
 * a view of the stored text (borrowed), or GOBLIN_EINVAL (incr is NaN or
 * infinite: Redis replies "value is NaN or Infinity"),
 * GOBLIN_EHASHNOTFLOAT (the stored value does not parse),
 * GOBLIN_ENANINF (the sum is NaN or infinite), GOBLIN_EWRONGTYPE,
 * GOBLIN_ENOMEM. */
GOBLIN_API int goblin_hash_incrbyfloat(goblin_store *st,
                                       struct goblin_slice key,
                                       struct goblin_slice field,
                                       long double incr,
                                       struct goblin_slice *result);

/* HRANDFIELD without a count. Returns 1 and sets *field and, if value is
 * not NULL, *value (borrowed) to a uniformly chosen pair; 0 for a missing
 * key; GOBLIN_EWRONGTYPE. Choices come from the store's seeded generator,
 * so a run is reproducible for a given seed. */
GOBLIN_API int goblin_hash_randfield(goblin_store *st, struct goblin_slice key,
                                     struct goblin_slice *field,
                                     struct goblin_slice *value);

/* HRANDFIELD key count [WITHVALUES]. count > 0: min(count, HLEN) distinct
 * fields (the whole hash when count >= HLEN); count < 0: exactly -count
 * fields, each drawn uniformly, repeats allowed; count 0 or a missing key:
 * none. visit gets each pair (the value is there either way: WITHVALUES is
 * the caller's choice of what to reply). Returns the number visited,
 * GOBLIN_EWRONGTYPE, GOBLIN_ENOMEM (a large distinct sample needs scratch
 * memory), the visitor's nonzero return, or GOBLIN_ERANGE when count is
 * below -INT64_MAX, or below -(INT64_MAX / 2) with withvalues set (Redis's
 * "value is out of range"). */
GOBLIN_API int64_t goblin_hash_randfield_count(goblin_store *st,
                                               struct goblin_slice key,
                                               int64_t count, int withvalues,
                                               goblin_hash_visit visit,
                                               void *ctx);

/* HSCAN key cursor [MATCH pattern] [COUNT count]. Start with cursor 0;
 * *next is the cursor for the next call, 0 when the scan is complete.
 * Every field present for the whole scan is visited at least once, however
 * the hash grows or shrinks in between; a field may be visited twice. A
 * compact hash is visited whole in one call with *next = 0, whatever the
 * cursor, as Redis does for listpacks. count (0 means 10) is how many
 * fields to examine, not to return. match, when match.ptr is not NULL, is a
 * Redis glob pattern on the field. Returns the number of pairs visited
 * (0 with *next = 0 for a missing key), GOBLIN_EWRONGTYPE, or the
 * visitor's nonzero return (the scan may then be resumed from the same
 * cursor). */
GOBLIN_API int64_t goblin_hash_scan(goblin_store *st, struct goblin_slice key,
                                    uint64_t cursor, size_t count,
                                    struct goblin_slice match,
                                    goblin_hash_visit visit, void *ctx,
                                    uint64_t *next);

/* Hash field expiry, as Redis 7.4 has it (HEXPIRE, HPEXPIRE, HEXPIREAT,
 * HPEXPIREAT): gives each of the n fields of the hash at key the deadline
 * unix_ms (ms since the epoch, >= 0), under flags (GOBLIN_EXPIRE_NX, _XX,
 * _GT, _LT of goblin/keys.h; a field without a deadline counts as one
 * infinitely far). codes[i] says what became of fields[i]: -2 no such
 * field (or no key), 0 the condition was not met, 1 the deadline was
 * set, 2 the field was deleted because unix_ms is not after now (the key
 * too, with its last field). A field is gone once now is past its
 * deadline; HSET, HSETNX and HMSET of a field drop its deadline, HINCRBY
 * and HINCRBYFLOAT keep it. Returns the number of fields set or deleted,
 * GOBLIN_EWRONGTYPE, GOBLIN_ESYNTAX (flags), GOBLIN_EINVAL (n == 0,
 * unix_ms < 0) or GOBLIN_ENOMEM (nothing changed). */
GOBLIN_API int goblin_hash_field_expire(goblin_store *st,
                                        struct goblin_slice key,
                                        const struct goblin_slice *fields,
                                        size_t n, int64_t unix_ms, int flags,
                                        int8_t *codes);

/* HPEXPIRETIME: out[i] is the deadline of fields[i] in ms since the
 * epoch, -1 when it has none, -2 when there is no such field (or key).
 * Returns 0 or GOBLIN_EWRONGTYPE. */
GOBLIN_API int goblin_hash_field_deadline(goblin_store *st,
                                          struct goblin_slice key,
                                          const struct goblin_slice *fields,
                                          size_t n, int64_t *out);

/* HPERSIST: drops the deadlines of the n fields. codes[i]: -2 no such
 * field (or key), -1 it had none, 1 dropped. Returns the number dropped,
 * GOBLIN_EWRONGTYPE or GOBLIN_EINVAL (n == 0). */
GOBLIN_API int goblin_hash_field_persist(goblin_store *st,
                                         struct goblin_slice key,
                                         const struct goblin_slice *fields,
                                         size_t n, int8_t *codes);

#ifdef __cplusplus
}
#endif

#endif
