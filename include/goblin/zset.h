/* goblin/zset.h - sorted sets (Redis zsets): a key holding members
 * (binary-safe byte strings) each with a score (a double, never NaN),
 * ordered by score and then by member bytes (memcmp order, a shorter
 * prefix first). -0.0 and 0.0 compare equal, as in Redis: a member keeps
 * the one it was stored with until its score really changes, and, as in
 * Redis, a compact set stores -0.0 as 0 while the full form keeps it.
 *
 * Conventions shared by every call below:
 *  - A missing key acts as an empty sorted set; a key holding another type
 *    gives GOBLIN_EWRONGTYPE.
 *  - Members passed in are copied. Views handed out (members given to a
 *    visitor or by goblin_zset_next) are borrowed: they stay valid until
 *    the next write to the store.
 *  - A failed call changes nothing: a ZADD of several pairs whose
 *    allocation fails adds none of them.
 *  - Removing the last member removes the key. Every change is reported
 *    through the store's key_changed hook.
 *  - Small sets (at most 128 members, none longer than 64 bytes: Redis's
 *    defaults) are kept in one compact block ("listpack" for OBJECT
 *    ENCODING); bigger ones in the full form ("skiplist"): a hash index
 *    for member lookups and an order-statistics B+tree for ranks. A full
 *    set that shrinks to 64 members or fewer, all short, turns compact
 *    again.
 *  - Goblin limits: a full set holds at most 4 GiB of member records;
 *    passing it gives GOBLIN_ELIMIT.
 *  - Visitors: called once per (member, score) with borrowed views. Return
 *    0 to go on; any other value stops the call, which returns that value
 *    (so return a negative GOBLIN_E* code to pass an error up). A visitor
 *    must not call into the store.
 */
#ifndef GOBLIN_ZSET_H
#define GOBLIN_ZSET_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "numtext.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*goblin_zset_visit)(void *ctx, struct goblin_slice member,
                                 double score);

/* ZADD flags. */
#define GOBLIN_ZADD_NX 0x01 /* only add new members */
#define GOBLIN_ZADD_XX 0x02 /* only update existing members */
#define GOBLIN_ZADD_GT 0x04 /* update only to a greater score */
#define GOBLIN_ZADD_LT 0x08 /* update only to a lesser score */
#define GOBLIN_ZADD_CH 0x10 /* count changed members too */

struct goblin_zpair {
    double score;
    struct goblin_slice member;
};

/* ZADD key [NX|XX] [GT|LT] [CH] score member [score member ...].
 * Pairs apply left to right (a member given twice sees its first pair's
 * effect); the call is all or nothing. Returns the number of members
 * added (with GOBLIN_ZADD_CH: added plus those whose score changed), or:
 *  - GOBLIN_ESYNTAX: NX with XX ("ERR XX and NX options at the same time
 *    are not compatible"), or two of GT, LT and NX ("ERR GT, LT, and/or NX
 *    options at the same time are not compatible"): the caller tells the
 *    two apart from its flags; checked first;
 *  - GOBLIN_EINVAL: n is 0, or a score is NaN;
 *  - GOBLIN_EWRONGTYPE, GOBLIN_ENOMEM, GOBLIN_ELIMIT. */
GOBLIN_API int64_t goblin_zset_add_pairs(goblin_store *st,
                                         struct goblin_slice key,
                                         unsigned flags,
                                         const struct goblin_zpair *pairs,
                                         size_t n);

/* ZADD key score member: returns 1 if added, 0 if it existed (its score
 * is now score), or GOBLIN_EINVAL (NaN), GOBLIN_EWRONGTYPE, GOBLIN_ENOMEM,
 * GOBLIN_ELIMIT. */
GOBLIN_API int goblin_zset_add(goblin_store *st, struct goblin_slice key,
                               struct goblin_slice member, double score);

/* ZADD key [NX|XX] [GT|LT] INCR incr member, and ZINCRBY (flags 0): adds
 * incr to the member's score (an absent member starts at 0). Returns 1 and
 * sets *score to the new score; 0 when a flag blocked it (Redis replies
 * nil; nothing changed, *score untouched); GOBLIN_ENAN when the sum is NaN
 * (inf + -inf: "ERR resulting score is not a number (NaN)"); GOBLIN_EINVAL
 * (incr is NaN); GOBLIN_ESYNTAX (as goblin_zset_add_pairs);
 * GOBLIN_EWRONGTYPE; GOBLIN_ENOMEM; GOBLIN_ELIMIT. CH is ignored. */
GOBLIN_API int goblin_zset_incr(goblin_store *st, struct goblin_slice key,
                                unsigned flags, struct goblin_slice member,
                                double incr, double *score);

/* ZSCORE. Returns 1 and sets *score, 0 if the key or member is absent, or
 * GOBLIN_EWRONGTYPE. */
GOBLIN_API int goblin_zset_score(goblin_store *st, struct goblin_slice key,
                                 struct goblin_slice member, double *score);

/* ZMSCORE. Sets scores[i] to the score of members[i], or NaN when absent
 * (a missing key: all NaN). Returns the number found or
 * GOBLIN_EWRONGTYPE (scores untouched). */
GOBLIN_API int64_t goblin_zset_mscore(goblin_store *st,
                                      struct goblin_slice key,
                                      const struct goblin_slice *members,
                                      size_t n, double *scores);

/* ZCARD. Returns the number of members (0 for a missing key) or
 * GOBLIN_EWRONGTYPE. */
GOBLIN_API int64_t goblin_zset_card(goblin_store *st, struct goblin_slice key);

/* ZRANK / ZREVRANK [WITHSCORE]. Returns 1 and sets *rank (0-based, from
 * the highest score when rev) and, if score is not NULL, *score; 0 if the
 * key or member is absent; or GOBLIN_EWRONGTYPE. */
GOBLIN_API int goblin_zset_rank(goblin_store *st, struct goblin_slice key,
                                struct goblin_slice member, int rev,
                                int64_t *rank, double *score);

/* What a range selects. */
enum goblin_zrange_by {
    GOBLIN_ZRANGE_BY_RANK = 0,
    GOBLIN_ZRANGE_BY_SCORE = 1,
    GOBLIN_ZRANGE_BY_LEX = 2,
};

/* A range of ZRANGE (and ZRANGEBYSCORE, ZREVRANGE, ZRANGEBYLEX, ...),
 * ZCOUNT, ZLEXCOUNT and ZREMRANGEBY*. Zero it, then fill what `by` uses.
 *  - BY_RANK: start and stop, inclusive, negative counting from the end;
 *    with rev, ranks count from the highest score (ZREVRANGE).
 *  - BY_SCORE: min and max, each exclusive if its flag is set; with rev
 *    the walk goes from max down to min (the caller swaps ZREVRANGEBYSCORE's
 *    arguments into min and max).
 *  - BY_LEX: lmin and lmax as goblin_lex_bound_parse gives them; the order
 *    of members is only meaningful when all scores are equal, as in Redis.
 *  - limit: skip offset entries (a negative offset selects nothing), then
 *    give at most count (a negative count: all). BY_SCORE and BY_LEX only;
 *    the caller rejects LIMIT with BY_RANK. */
struct goblin_zrange {
    enum goblin_zrange_by by;
    int rev;
    int64_t start, stop;
    double min, max;
    int min_excl, max_excl;
    struct goblin_lex_bound lmin, lmax;
    int limit;
    int64_t offset, count;
};

/* A walk over a range, on the caller's stack. */
struct goblin_zset_iter {
    uint64_t priv[64];
};

/* Starts a walk over range r of key. Returns the number of entries the
 * walk yields (so a reply header can go first; 0 for a missing key or an
 * empty range), GOBLIN_EWRONGTYPE, or GOBLIN_EINVAL (bad `by`). Then call
 * goblin_zset_next until it returns 0. The walk is valid until the next
 * write to the store. */
GOBLIN_API int64_t goblin_zset_range(goblin_store *st, struct goblin_slice key,
                                     const struct goblin_zrange *r,
                                     struct goblin_zset_iter *it);

/* The walk's next entry: returns 1 and sets *member (borrowed) and *score,
 * or 0 at the end. */
GOBLIN_API int goblin_zset_next(struct goblin_zset_iter *it,
                                struct goblin_slice *member, double *score);

/* ZCOUNT (BY_SCORE) and ZLEXCOUNT (BY_LEX): the number of members in r's
 * range, ignoring rev and limit. Returns it, GOBLIN_EWRONGTYPE or
 * GOBLIN_EINVAL (BY_RANK). */
GOBLIN_API int64_t goblin_zset_count(goblin_store *st, struct goblin_slice key,
                                     const struct goblin_zrange *r);

/* ZRANGESTORE dst src ...: stores src's range r into dst, replacing
 * whatever dst held (and its expiry); an empty result deletes dst.
 * Returns the number stored, GOBLIN_EWRONGTYPE (src only: dst may hold any
 * type), GOBLIN_EINVAL, GOBLIN_ENOMEM. */
GOBLIN_API int64_t goblin_zset_range_store(goblin_store *st,
                                           struct goblin_slice dst,
                                           struct goblin_slice src,
                                           const struct goblin_zrange *r);

/* ZREM. Removes the n members (repeats count once). Returns the number
 * removed or GOBLIN_EWRONGTYPE. Never fails for lack of memory. */
GOBLIN_API int64_t goblin_zset_rem(goblin_store *st, struct goblin_slice key,
                                   const struct goblin_slice *members,
                                   size_t n);

/* ZREMRANGEBYRANK / BYSCORE / BYLEX: removes range r (rev and limit must
 * be 0). Returns the number removed, GOBLIN_EWRONGTYPE or GOBLIN_EINVAL.
 * Never fails for lack of memory. */
GOBLIN_API int64_t goblin_zset_rem_range(goblin_store *st,
                                         struct goblin_slice key,
                                         const struct goblin_zrange *r);

/* ZPOPMIN / ZPOPMAX key [count]: visits, then removes, the count lowest
 * (highest when max, highest first) members. Returns the number popped (0
 * for a missing key or count 0), GOBLIN_EWRONGTYPE, GOBLIN_EINVAL
 * (count < 0), or the visitor's nonzero return (then nothing is removed).
 */
GOBLIN_API int64_t goblin_zset_pop(goblin_store *st, struct goblin_slice key,
                                   int max, int64_t count,
                                   goblin_zset_visit visit, void *ctx);

/* ZRANDMEMBER key [count]. count > 0: min(count, ZCARD) distinct members
 * (the whole set from the highest score down, as Redis gives it, when
 * count >= ZCARD); count < 0: exactly
 * -count members, each drawn uniformly, repeats allowed; 0 or a missing
 * key: none. Without a count the caller passes 1. Choices come from the
 * store's seeded generator, so a run is reproducible for a given seed.
 * Returns the number visited, GOBLIN_EWRONGTYPE, GOBLIN_ENOMEM (a large
 * distinct sample needs scratch memory), GOBLIN_ERANGE (count below
 * -INT64_MAX: Redis's "value is out of range"), or the visitor's nonzero
 * return. */
GOBLIN_API int64_t goblin_zset_randmember(goblin_store *st,
                                          struct goblin_slice key,
                                          int64_t count,
                                          goblin_zset_visit visit, void *ctx);

/* Set operations. */
enum goblin_zset_op {
    GOBLIN_ZSET_UNION = 0,
    GOBLIN_ZSET_INTER = 1,
    GOBLIN_ZSET_DIFF = 2,
};

enum goblin_zset_aggregate {
    GOBLIN_ZAGG_SUM = 0,
    GOBLIN_ZAGG_MIN = 1,
    GOBLIN_ZAGG_MAX = 2,
};

/* ZUNION / ZINTER / ZDIFF numkeys key... [WEIGHTS w...] [AGGREGATE a]:
 * visits the result in order. weights (NULL: all 1; ignored by DIFF)
 * multiply each input's scores, a NaN product (inf * 0) counting as 0;
 * a NaN sum counts as 0; missing keys are empty sets. Returns the result's
 * size, GOBLIN_EWRONGTYPE (any input), GOBLIN_EINVAL (nkeys 0, bad op or
 * aggregate), GOBLIN_ENOMEM, or the visitor's nonzero return. */
GOBLIN_API int64_t goblin_zset_combine(goblin_store *st,
                                       enum goblin_zset_op op,
                                       const struct goblin_slice *keys,
                                       size_t nkeys, const double *weights,
                                       enum goblin_zset_aggregate agg,
                                       goblin_zset_visit visit, void *ctx);

/* ZUNIONSTORE / ZINTERSTORE / ZDIFFSTORE dst ...: as goblin_zset_combine,
 * storing the result into dst (which may be one of the inputs), replacing
 * whatever it held and its expiry; an empty result deletes dst. Returns
 * the result's size or an error as above. */
GOBLIN_API int64_t goblin_zset_combine_store(goblin_store *st,
                                             struct goblin_slice dst,
                                             enum goblin_zset_op op,
                                             const struct goblin_slice *keys,
                                             size_t nkeys,
                                             const double *weights,
                                             enum goblin_zset_aggregate agg);

/* ZINTERCARD numkeys key... [LIMIT limit]: the size of the intersection,
 * counting stops at limit when limit > 0. Returns it, GOBLIN_EWRONGTYPE,
 * GOBLIN_EINVAL (nkeys 0), GOBLIN_ENOMEM. */
GOBLIN_API int64_t goblin_zset_intercard(goblin_store *st,
                                         const struct goblin_slice *keys,
                                         size_t nkeys, int64_t limit);

/* ZSCAN key cursor [MATCH pattern] [COUNT count]. Start with cursor 0;
 * *next is the cursor for the next call, 0 when the scan is complete.
 * Every member present for the whole scan is visited at least once,
 * however the set grows, shrinks or is compacted in between; a member may
 * be visited twice. A compact set is visited whole in one call with
 * *next = 0, whatever the cursor, as Redis does for listpacks. count (0
 * means 10) is how many members to examine, not to return. match, when
 * match.ptr is not NULL, is a glob pattern (goblin_glob_match) on the
 * member. Returns the number visited (0 with *next = 0 for a missing key),
 * GOBLIN_EWRONGTYPE, or the visitor's nonzero return (the scan may then be
 * resumed from the same cursor). */
GOBLIN_API int64_t goblin_zset_scan(goblin_store *st, struct goblin_slice key,
                                    uint64_t cursor, size_t count,
                                    struct goblin_slice match,
                                    goblin_zset_visit visit, void *ctx,
                                    uint64_t *next);

#ifdef __cplusplus
}
#endif

#endif
