/* goblin/set.h - set values (Redis sets): a key holding a collection of
 * distinct binary-safe byte strings.
 *
 * Conventions shared by every call below:
 *  - A missing key acts as an empty set; a key holding another type gives
 *    GOBLIN_EWRONGTYPE.
 *  - Members passed in are copied.
 *  - Views handed to a visitor are borrowed for that call only (a member
 *    of an integer set is text made for the call); the visitor must not
 *    call into the store.
 *  - A failed call changes nothing. Removing the last member removes the
 *    key.
 *  - Forms, as Redis's defaults have them: a set of at most 512 integers
 *    (string2ll's rules: "12", not "012" or "+12") is a sorted array
 *    ("intset" for OBJECT ENCODING, members in ascending order); a small
 *    set (at most 128 members of at most 64 bytes) one compact block; a
 *    large one an arena with a hash index, except that a large set of
 *    integers only stays sorted chunks of numbers. The last three answer
 *    "hashtable", as Redis 7.0 does.
 *  - Goblin limits: a set holds fewer than 2^32 members; n counts above
 *    INT_MAX / 2 give GOBLIN_ELIMIT.
 */
#ifndef GOBLIN_SET_H
#define GOBLIN_SET_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Visitor: called once per member. Return 0 to go on; any other value
 * stops, and the calling function returns it. */
typedef int (*goblin_set_visit)(void *ctx, struct goblin_slice member);

/* SADD. Returns the number of members that were new, or
 * GOBLIN_EWRONGTYPE, GOBLIN_ENOMEM, GOBLIN_ELIMIT, or GOBLIN_EINVAL when
 * n is 0. */
GOBLIN_API int goblin_set_add(goblin_store *st, struct goblin_slice key,
                              const struct goblin_slice *members, size_t n);

/* SREM. Returns the number removed, or GOBLIN_EWRONGTYPE, GOBLIN_ENOMEM
 * or GOBLIN_EINVAL (n 0). */
GOBLIN_API int goblin_set_rem(goblin_store *st, struct goblin_slice key,
                              const struct goblin_slice *members, size_t n);

/* SISMEMBER: 1, 0, or GOBLIN_EWRONGTYPE. */
GOBLIN_API int goblin_set_ismember(goblin_store *st, struct goblin_slice key,
                                   struct goblin_slice member);

/* SMISMEMBER: out[i] is 1 when members[i] is a member, else 0. Returns
 * the number found or GOBLIN_EWRONGTYPE (out untouched). */
GOBLIN_API int goblin_set_mismember(goblin_store *st, struct goblin_slice key,
                                    const struct goblin_slice *members,
                                    size_t n, uint8_t *out);

/* SCARD: the number of members, or GOBLIN_EWRONGTYPE. */
GOBLIN_API int64_t goblin_set_card(goblin_store *st, struct goblin_slice key);

/* SMEMBERS: visits every member (integer sets in ascending order).
 * Returns the number visited, the visitor's nonzero return, or
 * GOBLIN_EWRONGTYPE. */
GOBLIN_API int64_t goblin_set_foreach(goblin_store *st,
                                      struct goblin_slice key,
                                      goblin_set_visit visit, void *ctx);

/* SMOVE: moves member from src to dst (created if missing). Returns 1 if
 * moved (or src == dst holds it), 0 if src does not hold it, or
 * GOBLIN_EWRONGTYPE (src, or dst when it exists) / GOBLIN_ENOMEM. */
GOBLIN_API int goblin_set_move(goblin_store *st, struct goblin_slice src,
                               struct goblin_slice dst,
                               struct goblin_slice member);

/* Called once, before the first member is visited, with the number of
 * members that will be: a reply can write its length first. Its nonzero
 * return stops the call, which returns it. */
typedef int (*goblin_set_begin)(void *ctx, uint64_t n);

/* SRANDMEMBER key count: count >= 0 visits min(count, card) distinct
 * members, uniformly chosen; count < 0 visits -count members chosen
 * independently (repeats possible). begin (may be NULL) is called first,
 * also when nothing is visited. Returns the number visited, a callback's
 * return, GOBLIN_EWRONGTYPE, GOBLIN_ENOMEM (before begin), or
 * GOBLIN_ERANGE for INT64_MIN. */
GOBLIN_API int64_t goblin_set_random(goblin_store *st,
                                     struct goblin_slice key, int64_t count,
                                     goblin_set_begin begin,
                                     goblin_set_visit visit, void *ctx);

/* SPOP key count: removes min(count, card) distinct random members and
 * visits each (before it is removed); begin (may be NULL) as above.
 * Returns the number removed, GOBLIN_EWRONGTYPE or GOBLIN_ENOMEM (nothing
 * removed, nothing visited, begin not called). A visitor's nonzero
 * return stops the visits only: the members are removed all the same. */
GOBLIN_API int64_t goblin_set_pop(goblin_store *st, struct goblin_slice key,
                                  uint64_t count, goblin_set_begin begin,
                                  goblin_set_visit visit, void *ctx);

/* SSCAN: one page from cursor (0 to start); *next is 0 when the scan is
 * over. Every member present for the whole scan is visited at least
 * once. count 0 means 10; match (ptr NULL: all) is a glob pattern.
 * Returns the number visited or GOBLIN_EWRONGTYPE. */
GOBLIN_API int64_t goblin_set_scan(goblin_store *st, struct goblin_slice key,
                                   uint64_t cursor, size_t count,
                                   struct goblin_slice match,
                                   goblin_set_visit visit, void *ctx,
                                   uint64_t *next);

enum goblin_set_op {
    GOBLIN_SET_UNION = 0,
    GOBLIN_SET_INTER = 1,
    GOBLIN_SET_DIFF = 2, /* the first set minus the others */
};

/* SUNION, SINTER, SDIFF over nkeys >= 1 keys (a missing key is empty;
 * every key is type-checked first). begin (may be NULL) is called once
 * with the result's size before the first member is visited. Returns the
 * result's size, a callback's nonzero return, GOBLIN_EWRONGTYPE or
 * GOBLIN_ENOMEM. */
GOBLIN_API int64_t goblin_set_combine(goblin_store *st, enum goblin_set_op op,
                                      const struct goblin_slice *keys,
                                      size_t nkeys, goblin_set_begin begin,
                                      goblin_set_visit visit, void *ctx);

/* SUNIONSTORE, SINTERSTORE, SDIFFSTORE: dst becomes the result (an empty
 * result deletes dst), whatever dst held. Returns the result's size,
 * GOBLIN_EWRONGTYPE or GOBLIN_ENOMEM. */
GOBLIN_API int64_t goblin_set_combine_store(goblin_store *st,
                                            enum goblin_set_op op,
                                            struct goblin_slice dst,
                                            const struct goblin_slice *keys,
                                            size_t nkeys);

/* SINTERCARD: the intersection's size, counting stops at limit (0: no
 * limit). Returns it or GOBLIN_EWRONGTYPE. */
GOBLIN_API int64_t goblin_set_intercard(goblin_store *st,
                                        const struct goblin_slice *keys,
                                        size_t nkeys, uint64_t limit);

#ifdef __cplusplus
}
#endif

#endif
