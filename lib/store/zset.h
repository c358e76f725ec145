/* zset.h - what other parts of libgoblin (snapshots, the command layer,
 * the microbenchmarks) may use of sorted-set objects beyond the public
 * API: the form limits, and operations on a standalone object that is in
 * no keyspace, so raw costs can be measured and snapshots loaded.
 *
 * An object is what the keyspace slot of a GOBLIN_TYPE_ZSET key holds; it
 * is owned by the keyspace once added and freed through goblin__zset_free.
 * Calls that may change an object's form take void **objp and may replace
 * *objp. None of them calls goblin__key_changed.
 */
#ifndef GOBLIN_ZSET_INTERNAL_H
#define GOBLIN_ZSET_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "goblin/zset.h"
#include "store.h"
#include "zset_tree.h"

/* A set stays compact while it has at most this many members and none is
 * longer than GOBLIN__ZSET_COMPACT_MAX_VALUE bytes (Redis's
 * zset-max-listpack-entries / -value defaults). A full set turns compact
 * again once it has at most GOBLIN__ZSET_COMPACT_DOWN members, all short
 * enough: the gap keeps a set that hovers around the limit from
 * converting back and forth. */
#define GOBLIN__ZSET_COMPACT_MAX_ENTRIES 128
#define GOBLIN__ZSET_COMPACT_MAX_VALUE 64
#define GOBLIN__ZSET_COMPACT_DOWN 64

/* An empty object (compact). Returns 0 or GOBLIN_ENOMEM. */
int goblin__zset_obj_new(goblin_store *st, void **out);

/* Builds an object from n pairs in strictly increasing (score, member)
 * order (a snapshot's order), in the form their count and sizes call for.
 * Returns 0 or GOBLIN_ENOMEM / GOBLIN_ELIMIT / GOBLIN_EINVAL (unordered
 * or NaN) with nothing allocated. */
int goblin__zset_obj_from_sorted(goblin_store *st,
                                 const struct goblin_zpair *pairs, size_t n,
                                 void **out);

size_t goblin__zset_obj_card(const void *obj);

/* Bytes obj holds through the store's allocator. */
size_t goblin__zset_obj_bytes(const void *obj);

/* 1 and *score, or 0. */
int goblin__zset_obj_score(const void *obj, struct goblin_slice member,
                           double *score);

/* 1 and *rank (0-based from the lowest) and *score (may be NULL), or 0. */
int goblin__zset_obj_rank(const void *obj, struct goblin_slice member,
                          size_t *rank, double *score);

/* What a ZADD did. */
struct goblin__zadd_result {
    size_t added;
    size_t updated;  /* existing members whose score changed */
    int processed;   /* INCR: 0 when a flag blocked the pair */
    double score;    /* INCR: the member's score after */
};

/* ZADD on an object: flags as GOBLIN_ZADD_*, incr for ZADD INCR/ZINCRBY
 * (then n must be 1). All or nothing. Returns 0 or GOBLIN_ENAN /
 * GOBLIN_ENOMEM / GOBLIN_ELIMIT (flags and NaN inputs are the caller's to
 * check). */
int goblin__zset_obj_add(goblin_store *st, void **objp, unsigned flags,
                         bool incr, const struct goblin_zpair *pairs,
                         size_t n, struct goblin__zadd_result *res);

/* Removes members; returns the number removed. May leave obj empty. */
size_t goblin__zset_obj_remove(goblin_store *st, void **objp,
                               const struct goblin_slice *members, size_t n);

/* Removes the n members from rank `from` on. */
void goblin__zset_obj_remove_ranks(goblin_store *st, void **objp,
                                   size_t from, size_t n);

/* Ranks of the first member whose score is >= s (> s when excl), and of
 * the first whose member bytes are >= / > m. */
size_t goblin__zset_obj_rank_score(const void *obj, double s, bool excl);
size_t goblin__zset_obj_rank_lex(const void *obj, struct goblin_slice m,
                                 bool excl);

/* A walk from a rank, up or down (the public iterator's storage). */
struct goblin__zset_walk {
    const void *obj;
    size_t left;        /* entries still to give */
    bool rev;
    uint8_t kind;
    /* compact: the next entry's offset (up), or offsets of the range
     * (down, last first) */
    uint32_t off;
    uint32_t noffs;
    /* full: the tree position */
    struct zt_path pos;
    uint16_t offs[GOBLIN__ZSET_COMPACT_MAX_ENTRIES];
};

/* Starts a walk of n entries from rank r (upward) or, when rev, from rank
 * r downward. r + n <= card (up) or n <= r + 1 (down). */
void goblin__zset_obj_walk(const void *obj, size_t r, size_t n, bool rev,
                           struct goblin__zset_walk *w);
int goblin__zset_walk_next(struct goblin__zset_walk *w,
                           struct goblin_slice *member, double *score);

/* Visits every pair in order (snapshots). Returns the number visited or
 * the visitor's nonzero return. */
int64_t goblin__zset_obj_foreach(const void *obj, goblin_zset_visit visit,
                                 void *ctx);

/* Checks every invariant of obj; returns 0 or a negative line number. */
int goblin__zset_obj_check(const void *obj);

/* "listpack" or "skiplist". */
const char *goblin__zset_encoding(const void *obj);

/* SORT's first step on a sorted set: a compact object becomes the full
 * form, as Redis converts it (zset_sort.c). 0, GOBLIN_EWRONGTYPE or
 * GOBLIN_ENOMEM (nothing changed). */
int goblin__zset_sort_prepare(goblin_store *st, struct goblin_slice key);

#endif
