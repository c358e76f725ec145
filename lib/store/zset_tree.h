/* zset_tree.h - the order of a full sorted set: an order-statistics B+tree
 * of (score, member id) records, ordered by score and then by the member's
 * bytes (read from the arena through the id).
 *
 * Leaves are 512-byte struct-of-arrays nodes: the scores, then the ids. A
 * leaf whose scores are all integers in int32 range (and not -0.0) stores
 * them as int32 and holds up to 63 records; otherwise as doubles, up to 42.
 * Inner nodes hold, per child, the child's smallest record (score and id),
 * its record count and the pointer. Rank is therefore the sum of counts to
 * the left on the way down: a root-to-leaf walk, no scan, no cache.
 *
 * Invariants (goblin__zt_check verifies them):
 *  - records are strictly increasing in (score, member bytes); scores are
 *    never NaN;
 *  - every inner entry's key is exactly its child's smallest record and its
 *    count the child's record count;
 *  - all leaves are at the same depth; a non-root node is never empty; a
 *    narrow leaf holds only scores that fit int32.
 * Inserts move records to a sibling with room before splitting, and split
 * two full leaves into three, so leaves stay about 80% full; appends at
 * either end of the set keep leaves full. An insert allocates everything it
 * needs before it changes anything; an erase never allocates.
 */
#ifndef GOBLIN_ZSET_TREE_H
#define GOBLIN_ZSET_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"
#include "zset_arena.h"

#define ZT_LEAF_BYTES 512
#define ZT_CAP_W ((ZT_LEAF_BYTES - 8) / 12) /* double scores */
#define ZT_CAP_N ((ZT_LEAF_BYTES - 8) / 8)  /* int32 scores */
#define ZT_FAN 32
#define ZT_MAXH 12

struct zt_leaf {
    uint16_t n;
    uint8_t leaf;  /* 1 */
    uint8_t wide;  /* scores are doubles */
    uint32_t pad;
    union {
        double w[ZT_CAP_W];
        int32_t s[ZT_CAP_N];
        uint8_t raw[ZT_LEAF_BYTES - 8];
    } u;
};

struct zt_inner {
    uint16_t n;
    uint8_t leaf;  /* 0 */
    uint8_t pad[5];
    double ks[ZT_FAN];    /* smallest record of each child: score */
    uint32_t cnt[ZT_FAN]; /* records under each child */
    void *ch[ZT_FAN];
    uint32_t kid[ZT_FAN]; /* smallest record of each child: member id */
};

struct ztree {
    void *root;
    uint32_t height;     /* 0 when empty; 1 when the root is a leaf */
    size_t count;
    size_t bytes;        /* node memory */
    const struct zarena *ar;
};

/* A position in the tree: the path from the root, idx[level] being the
 * child (inner levels) or record (leaf) index. */
struct zt_path {
    void *node[ZT_MAXH];
    uint32_t idx[ZT_MAXH];
};

static inline uint32_t *zt_leaf_ids(const struct zt_leaf *l)
{
    return (uint32_t *)(void *)(l->u.raw + (l->wide ? ZT_CAP_W * 8
                                                    : ZT_CAP_N * 4));
}

static inline double zt_leaf_score(const struct zt_leaf *l, unsigned i)
{
    return l->wide ? l->u.w[i] : (double)l->u.s[i];
}

/* Whether a score can be stored in a narrow (int32) leaf. */
static inline bool zt_fits_narrow(double s)
{
    if (!(s >= -2147483648.0 && s <= 2147483647.0))
        return false;
    if ((double)(int32_t)s != s)
        return false;
    return !(s == 0 && __builtin_signbit(s));
}

void goblin__zt_init(struct ztree *t, const struct zarena *ar);
void goblin__zt_free(goblin_store *st, struct ztree *t);

/* Inserts a record for id, whose member is in the arena and absent from
 * the tree. Returns 0 or GOBLIN_ENOMEM with nothing changed. */
int goblin__zt_insert(goblin_store *st, struct ztree *t, double score, uint32_t id);

/* Removes the record (score, id), which is present. Never fails. */
void goblin__zt_erase(goblin_store *st, struct ztree *t, double score, uint32_t id);

/* Moves the record (old_s, id), which is present, to new_s (a different
 * score). Returns 0 or GOBLIN_ENOMEM with nothing changed. A move inside
 * one leaf, or into a leaf with room, walks down once per leaf. */
int goblin__zt_update(goblin_store *st, struct ztree *t, double old_s, double new_s,
                      uint32_t id);

/* The record (score, old_id) now refers to new_id (same member bytes). */
void goblin__zt_retarget(struct ztree *t, double score, uint32_t old_id,
                         uint32_t new_id);

/* 0-based rank of the record (score, id), which is present. */
size_t goblin__zt_rank(const struct ztree *t, double score, uint32_t id);

/* Rank of the first record whose score is >= s (> s when excl). */
size_t goblin__zt_rank_score(const struct ztree *t, double s, bool excl);

/* Rank of the first record whose member is >= m (> m when excl), the
 * tree being ordered by member (all scores equal), as Redis's lex ranges
 * assume. */
size_t goblin__zt_rank_lex(const struct ztree *t, const void *m, size_t len,
                   bool excl);

/* Positions *p at rank r (< count). */
void goblin__zt_seek(const struct ztree *t, size_t r, struct zt_path *p);

/* Moves *p one record forward (backward); false past the end. */
bool goblin__zt_next(const struct ztree *t, struct zt_path *p);
bool goblin__zt_prev(const struct ztree *t, struct zt_path *p);

static inline void zt_get(const struct ztree *t, const struct zt_path *p,
                          double *score, uint32_t *id)
{
    const struct zt_leaf *l = p->node[t->height - 1];
    uint32_t i = p->idx[t->height - 1];

    *score = zt_leaf_score(l, i);
    *id = zt_leaf_ids(l)[i];
}

/* Removes n records from rank `from` on, calling fn for each before it
 * goes (in order). fn must not touch the tree. Never fails. */
void goblin__zt_erase_range(goblin_store *st, struct ztree *t, size_t from,
                            size_t n,
                            void (*fn)(void *ctx, double score, uint32_t id),
                            void *ctx);

/* Builds the tree, which is empty, from n records already in order.
 * Returns 0 or GOBLIN_ENOMEM with the tree still empty. */
int goblin__zt_build(goblin_store *st, struct ztree *t, const double *scores,
                     const uint32_t *ids, size_t n);

/* Checks every invariant; returns 0 or a negative line number. For
 * tests. Also reports the number of leaves through *leaves if not NULL. */
int goblin__zt_check(const struct ztree *t, size_t *leaves);

#endif
