/* microbench_raw.h - the parts of the microbenchmark that reach into
 * libgoblin's internals, behind a small C interface the C++ harness can
 * call (the internal headers are C only).
 *
 *  - A "raw" sorted set: a standalone object (lib/store/zset.h) that sits
 *    in no keyspace, so ZSCORE, ZRANK, range walks and writes can be timed
 *    without key lookup, type checks or change hooks.
 *  - The ZRANGE breakdown: a member arena and a B+tree of (score, id)
 *    built apart from any object (members appended in the insertion order
 *    the real set saw, the tree bulk-built from the sorted records), so
 *    the index walk, the id -> member fetch and the RESP output can be
 *    timed one at a time.
 *  - The command layer's execute entry point (lib/commands/command.h).
 *
 * Every function that reads returns a value derived from what it read, so
 * the caller can feed it to DoNotOptimize.
 */
#ifndef GOBLIN_BENCH_MICROBENCH_RAW_H
#define GOBLIN_BENCH_MICROBENCH_RAW_H

#include <stddef.h>
#include <stdint.h>

#include "goblin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- a standalone sorted-set object ---- */

struct mb_zset;

/* Opens an empty standalone set (with its own store for accounting). */
int mb_zset_open(struct mb_zset **out);
void mb_zset_close(struct mb_zset *z);

/* Bytes the object holds. */
size_t mb_zset_bytes(const struct mb_zset *z);
size_t mb_zset_card(const struct mb_zset *z);

/* ZADD of one pair (flags 0): 1 added, 0 updated, or a negative code. */
int mb_zset_add(struct mb_zset *z, struct goblin_slice member, double score);

/* ZREM of one member: 1 removed, 0 absent. */
int mb_zset_remove(struct mb_zset *z, struct goblin_slice member);

/* ZSCORE: 1 and *score, or 0. */
int mb_zset_score(const struct mb_zset *z, struct goblin_slice member,
                  double *score);

/* ZRANK (rev: ZREVRANK): 1 and *rank, or 0. */
int mb_zset_rank(const struct mb_zset *z, struct goblin_slice member,
                 int rev, int64_t *rank);

/* Walks n entries from rank start upward, touching each member's length
 * and first and last bytes and its score. Returns a checksum. */
uint64_t mb_zset_walk(const struct mb_zset *z, size_t start, size_t n);

/* Rank of the first member with score >= s: tells whether an update
 * moves a member in the order. */
size_t mb_zset_rank_of_score(const struct mb_zset *z, double s);

/* ---- the ZRANGE breakdown: arena + tree built apart ---- */

struct mb_split;

/* Appends pairs[i] to a new arena in the given order (the insertion
 * order), then bulk-builds the tree from them sorted by (score, member).
 * Returns 0 or a negative code. */
int mb_split_open(const struct goblin_zpair *pairs, size_t n,
                  struct mb_split **out);
void mb_split_close(struct mb_split *sp);

/* The member id (arena position) and score at each rank, for the
 * breakdown's precomputed inputs. */
uint32_t mb_split_id_at(const struct mb_split *sp, size_t rank);
double mb_split_score_at(const struct mb_split *sp, size_t rank);

/* Score-index traversal: seek rank start, read n (score, id) records.
 * No member bytes are touched. Returns a checksum. */
uint64_t mb_split_traverse(const struct mb_split *sp, size_t start,
                           size_t n);

/* Member lookup: the member view of each of n ids, touching its length
 * and first and last bytes. Returns a checksum. */
uint64_t mb_split_members(const struct mb_split *sp, const uint32_t *ids,
                          size_t n);

/* A member view by id. */
struct goblin_slice mb_split_member(const struct mb_split *sp, uint32_t id);

/* Member RESP append only: array(n) then n bulk members fetched by id. */
void mb_split_resp_members(const struct mb_split *sp, const uint32_t *ids,
                           size_t n, struct goblin_sink *out);

/* Direct RESP append WITHSCORES: array(2n) then n pairs, each member and
 * score read from its arena record by id, the score formatted. */
void mb_split_resp_withscores(const struct mb_split *sp, const uint32_t *ids,
                              size_t n, struct goblin_sink *out);

/* ---- the command layer ---- */

/* goblin__command_execute: runs argv for session s into sink. */
int mb_command_execute(goblin_session *s, int argc,
                       const struct goblin_slice *argv,
                       struct goblin_sink *sink);

#ifdef __cplusplus
}
#endif

#endif
