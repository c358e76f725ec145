/* zset_impl.h - what the sorted-set sources share: the two object forms
 * and their primitives. Nothing outside lib/store/zset_*.c includes it.
 *
 * An object starts with a kind byte:
 *
 *  - ZK_COMPACT: one exact-size block, an 8-byte header (kind, count,
 *    bytes used, bytes allocated) and then the entries in order, each
 *    [member length (1 byte)][member bytes][score]. The score is one tag
 *    byte, followed by nothing for an integer in [-120, 120] (tag =
 *    value + 120), or 2, 4 or 6 bytes of a little-endian integer, or the
 *    8 bytes of a double. -0.0 is stored as the integer 0, as Redis's
 *    listpack does, except in a set flagged ZC_F_SKIPLIST: one that was
 *    full and shrank, which Redis would still hold as a skiplist (it
 *    never converts back), keeps -0.0 as a double and reports the
 *    skiplist encoding. Members are at most 64 bytes and entries at most
 *    128 while compact, so every operation is a short linear scan.
 *
 *  - ZK_FULL: struct zfull: the arena of records (zset_arena.h) whose
 *    positions are the member ids, a swiss index from member bytes to id,
 *    and the B+tree of (score, id) (zset_tree.h).
 */
#ifndef GOBLIN_ZSET_IMPL_H
#define GOBLIN_ZSET_IMPL_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "store.h"
#include "swiss.h"
#include "zset.h"
#include "zset_arena.h"
#include "zset_tree.h"

#define ZK_COMPACT 1
#define ZK_FULL 2

/* ---- compact form ---- */

struct zc_hdr {
    uint8_t kind;
    uint8_t flags;  /* ZC_F_* */
    uint16_t count;
    uint16_t used;  /* header included */
    uint16_t cap;   /* bytes allocated */
};

#define ZC_HDR sizeof(struct zc_hdr)
#define ZC_F_SKIPLIST 1 /* a skiplist in Redis: keeps -0.0 (see the top) */
#define ZC_SMALL 120
#define ZC_T_I16 0xF1
#define ZC_T_I32 0xF2
#define ZC_T_I48 0xF3
#define ZC_T_F64 0xF4

/* One decoded entry. */
struct zc_ent {
    const uint8_t *m;
    size_t len;
    double score;
    size_t size;    /* bytes of the whole entry */
};

static inline size_t zc_tag_extra(uint8_t t)
{
    switch (t) {
    case ZC_T_I16: return 2;
    case ZC_T_I32: return 4;
    case ZC_T_I48: return 6;
    case ZC_T_F64: return 8;
    default: return 0;
    }
}

static inline int64_t zc_get_int(const uint8_t *p, size_t n)
{
    uint64_t v = 0;

    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    if (v >> (8 * n - 1))
        v |= ~(uint64_t)0 << (8 * n); /* sign-extend */
    return (int64_t)v;
}

/* Decodes the entry at p. */
static inline void zc_decode(const uint8_t *p, struct zc_ent *e)
{
    const uint8_t *s;
    uint8_t t;

    e->len = p[0];
    e->m = p + 1;
    s = p + 1 + e->len;
    t = s[0];
    if (t <= 2 * ZC_SMALL) {
        e->score = (double)((int)t - ZC_SMALL);
        e->size = 2 + e->len;
    } else if (t == ZC_T_F64) {
        memcpy(&e->score, s + 1, 8);
        e->size = 10 + e->len;
    } else {
        size_t n = zc_tag_extra(t);

        e->score = (double)zc_get_int(s + 1, n);
        e->size = 2 + e->len + n;
    }
}

static inline const struct zc_hdr *zc_hdr(const void *obj)
{
    return obj;
}

static inline const uint8_t *zc_first(const void *obj)
{
    return (const uint8_t *)obj + ZC_HDR;
}

static inline const uint8_t *zc_end(const void *obj)
{
    return (const uint8_t *)obj + zc_hdr(obj)->used;
}

/* Bytes an entry for a member of len bytes with score s takes in a set
 * with the header flags given. */
size_t goblin__zc_entry_size(size_t len, double s, uint8_t flags);

/* Whether a compact object keeps -0.0 (ZC_F_SKIPLIST). */
static inline bool zc_keeps_sign(const void *obj)
{
    return zc_hdr(obj)->flags & ZC_F_SKIPLIST;
}

/* An empty compact object with room for cap bytes of entries. */
void *goblin__zc_new(goblin_store *st, size_t cap);
void goblin__zc_free(goblin_store *st, void *obj);

/* Finds member m. Returns 1 and fills *e and *rank (either may be NULL),
 * or 0. */
int goblin__zc_find(const void *obj, const void *m, size_t len, struct zc_ent *e,
                    size_t *rank);

/* Byte offset of the entry at rank r (r may be count: the end). */
size_t goblin__zc_offset_of_rank(const void *obj, size_t r);

/* Ranks of the first entry at or above a score / lex bound. */
size_t goblin__zc_rank_score(const void *obj, double s, bool excl);
size_t goblin__zc_rank_lex(const void *obj, const void *m, size_t len, bool excl);

/* Makes the block hold at least cap bytes. Returns 0 or GOBLIN_ENOMEM
 * (nothing changed); *objp may move. */
int goblin__zc_reserve(goblin_store *st, void **objp, size_t cap);

/* Inserts an entry for an absent member; the block must have room. */
void goblin__zc_insert(void *obj, const void *m, size_t len, double s);

/* Deletes n entries from rank r on. */
void goblin__zc_delete(void *obj, size_t r, size_t n);

/* Gives the block back its slack, if the allocator lets it. */
void goblin__zc_shrink(goblin_store *st, void **objp);

/* ---- full form ---- */

struct zfull {
    uint8_t kind;
    uint8_t pad;
    uint16_t tag;       /* scan cursors carry it: stale ones restart */
    uint32_t clean_off; /* next record to move in the oldest chunk */
    uint64_t secret;    /* the store's hash secret (goblin__hash_with) */
    struct zarena ar;
    struct goblin__swiss idx;
    struct ztree tree;
};

extern const struct goblin__swiss_ops goblin__zf_swiss_ops;

static inline uint64_t zf_hash(const struct zfull *z, const void *m,
                               size_t len)
{
    return goblin__hash_with(z->secret, m, len);
}

/* An empty full object. Returns NULL without memory. */
struct zfull *goblin__zf_new(goblin_store *st);
void goblin__zf_free(goblin_store *st, struct zfull *z);

/* Finds member m; returns 1 and sets *id, or 0. */
static inline int zf_find(const struct zfull *z, const void *m, size_t len,
                          uint32_t *id)
{
    return goblin__swiss_find(&z->idx, &goblin__zf_swiss_ops, z, zf_hash(z, m, len),
                              m, len, id);
}

/* Adds an absent member. Returns 0 and sets *id, or an error with nothing
 * changed. */
int goblin__zf_insert(goblin_store *st, struct zfull *z, const void *m, size_t len,
                      double score, uint32_t *id);

/* Removes the member at id. Never fails. */
void goblin__zf_remove(goblin_store *st, struct zfull *z, uint32_t id);

/* Removes n members from rank `from` on, calling fn (if not NULL) for each
 * first. */
void goblin__zf_remove_range(goblin_store *st, struct zfull *z, size_t from,
                             size_t n);

/* One bounded step of arena compaction; called at the end of writes. */
void goblin__zf_clean_step(goblin_store *st, struct zfull *z);

/* Bytes z holds through the allocator. */
size_t goblin__zf_bytes(const struct zfull *z);

/* ---- changes to apply (zset_obj.c) ---- */

struct zchange {
    const uint8_t *m;
    size_t len;
    double old;         /* the score before, if exists */
    double score;       /* the score after */
    bool exists;
    uint32_t id;        /* full form: the member's id */
};

/* Applies changes (distinct members, each a new member or a real score
 * change) to a full object, all or nothing. */
int goblin__zf_apply(goblin_store *st, struct zfull *z, struct zchange *c, size_t n);

/* Same for a compact object whose result stays compact; *objp may move. */
int goblin__zc_apply(goblin_store *st, void **objp, const struct zchange *c,
                     size_t n);

/* Stores n pairs (strictly increasing) into key dst, replacing whatever it
 * held, or deletes dst when n is 0; reports the change (zset.c). */
int goblin__zset_store(goblin_store *st, struct goblin_slice dst,
                       const struct goblin_zpair *pairs, size_t n);

/* Converts a compact object to a new full one (the compact one is left
 * alone). Returns 0 or an error. */
int goblin__zc_to_full(goblin_store *st, const void *obj, struct zfull **out);

/* Converts a full object to a new compact one, if it is small enough
 * (returns 0 and leaves *out NULL when not); errors leave *out NULL. */
int goblin__zf_to_compact(goblin_store *st, const struct zfull *z, void **out);

#endif
