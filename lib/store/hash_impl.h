/* hash_impl.h - the two forms of a hash object, as hash.c drives them.
 *
 * A hash object is a pointer with its low bit as the tag:
 *  - low bit 0: a compact block (hash_compact.c), for small hashes;
 *  - low bit 1: a struct goblin__hash_full (hash_full.c), for big ones.
 * Allocations are at least 8-byte aligned, so the bit is free. A hash goes
 * from compact to full once and never back, as in Redis.
 */
#ifndef GOBLIN_HASH_IMPL_H
#define GOBLIN_HASH_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "goblin/hash.h"
#include "store.h"
#include "swiss.h"

/* ---- compact form: one exact-size block (hash_compact.c) ----
 *
 * [u16 n][u16 ebytes][fp[n]][dir[nd] u16][entries]
 *
 * n pairs in insertion order, entries as in hash_entry.h (ebytes bytes in
 * all). fp[i] is the low byte of pair i's field hash, so a lookup tests n
 * bytes and compares bytes only where they match (a false match 1 time in
 * 256). dir[k] is the offset of entry 16(k+1) from the first entry, so
 * reaching any entry walks at most 15 headers; nd = (n - 1) / 16 for n > 0,
 * else 0. Every write builds a new block of exact size. */
#define GOBLIN__HC_HDR 4

static inline size_t goblin__hc_len(const uint8_t *b)
{
    return (size_t)b[0] | (size_t)b[1] << 8;
}

size_t goblin__hc_bytes(const uint8_t *b);

/* Finds field (whose hash is h). Returns its index and sets *v to a view
 * of its value in the block, or -1. */
int goblin__hc_find(const uint8_t *b, uint64_t h, struct goblin_slice field,
                    struct goblin_slice *v);

/* Every entry's offset from b (goblin__hc_len(b) of them), so that a
 * call looking up many fields steps over the entries once, not once per
 * field. */
void goblin__hc_offsets(const uint8_t *b, uint32_t *at);

/* goblin__hc_find with the offsets goblin__hc_offsets gave. */
int goblin__hc_find_at(const uint8_t *b, const uint32_t *at, uint64_t h,
                       struct goblin_slice field, struct goblin_slice *v);

/* The pair at index i (< n). */
void goblin__hc_pair(const uint8_t *b, size_t i, struct goblin_slice *f,
                     struct goblin_slice *v);

/* Walks the pairs in order. */
struct goblin__hc_iter {
    const uint8_t *p;
    size_t left;
};

void goblin__hc_iter_init(struct goblin__hc_iter *it, const uint8_t *b);
bool goblin__hc_next(struct goblin__hc_iter *it, struct goblin_slice *f,
                     struct goblin_slice *v);

/* A rebuild: from the old block (NULL = empty), drop the pairs whose bit
 * is set in del, replace the values given in repl (ptr NULL = keep), then
 * append nadd new pairs (add holds field, value, ...; add_hash their field
 * hashes). The result must stay within the compact limits. */
struct goblin__hc_edit {
    const uint64_t *del;             /* bitmap over old indexes, or NULL */
    const struct goblin_slice *repl; /* one per old index, or NULL */
    const struct goblin_slice *add;
    const uint64_t *add_hash;
    size_t nadd;
};

/* Builds the edited block into *out; the old block is left alone (the
 * caller frees it). Returns 0 or GOBLIN_ENOMEM. */
int goblin__hc_rebuild(goblin_store *st, const uint8_t *old,
                       const struct goblin__hc_edit *e, uint8_t **out);

void goblin__hc_free(goblin_store *st, uint8_t *b);

/* ---- full form: chunked arena + dense ids + swiss index (hash_full.c) */

struct goblin__hf_chunk {
    uint8_t *p;     /* NULL: a free slot, and used links the free list */
    uint32_t cap;   /* bytes allocated */
    uint32_t used;  /* entries (and a compaction gap) fill [0, used) */
    uint32_t dead;  /* bytes in [0, used) holding no live entry */
    uint32_t own;   /* 1: holds one big entry, never compacted */
};

struct goblin__hash_full {
    uint64_t secret;     /* the store's hash secret (goblin__hash_with) */
    uint32_t n;          /* fields, ids 0..n-1 */
    uint32_t npages;     /* id pages allocated */
    uint32_t last_cap;   /* capacity of the last page, in ids */
    uint32_t pages_cap;  /* slots of pages */
    uint32_t **pages;    /* per id: the arena position of its entry */
    struct goblin__swiss index;
    struct goblin__hf_chunk *chunks;
    uint32_t nchunks;    /* slots in use or on the free list */
    uint32_t chunks_cap; /* slots allocated */
    uint32_t tail;       /* chunk receiving appends, or GOBLIN__HF_NONE */
    uint32_t free_slot;  /* head of the free slot list */
    uint64_t live;       /* bytes of live entries */
    uint64_t dead;       /* bytes of dead entries and gaps */
    uint32_t cz_chunk;   /* chunk being compacted, or GOBLIN__HF_NONE */
    uint32_t cz_read;    /* next entry to look at */
    uint32_t cz_write;   /* where the next live entry slides to */
    uint32_t cz_evac;    /* 1: live entries move to the tail instead */
    struct goblin__hf_ttl *ttl; /* field deadlines (hash_ttl.h), or NULL */
};

#define GOBLIN__HF_NONE UINT32_MAX

int goblin__hf_new(goblin_store *st, struct goblin__hash_full **out);
void goblin__hf_free(goblin_store *st, struct goblin__hash_full *hf);
size_t goblin__hf_bytes(const struct goblin__hash_full *hf);

/* Builds a full hash holding the compact block's pairs, in order.
 * Returns 0 or GOBLIN_ENOMEM (nothing allocated). */
int goblin__hf_from_compact(goblin_store *st, const uint8_t *b,
                            struct goblin__hash_full **out);

/* Finds field (hash h). Returns 1 and sets *id, or 0. */
int goblin__hf_find(const struct goblin__hash_full *hf, uint64_t h,
                    struct goblin_slice field, uint32_t *id);

/* The pair under id (< n). */
void goblin__hf_pair(const struct goblin__hash_full *hf, uint32_t id,
                     struct goblin_slice *f, struct goblin_slice *v);

/* Sets npairs pairs (fv: field, value, ...; hashes: their field hashes,
 * or NULL to compute them), left to right. All or nothing: returns the
 * number of new fields, or GOBLIN_ENOMEM / GOBLIN_ELIMIT with nothing
 * changed. Does not compact: the caller runs a step afterwards. */
int goblin__hf_set(goblin_store *st, struct goblin__hash_full *hf,
                   const struct goblin_slice *fv, const uint64_t *hashes,
                   size_t npairs);

/* Removes the pair under id (hash h of its field); the last id moves into
 * its place. Never fails. */
void goblin__hf_del(goblin_store *st, struct goblin__hash_full *hf,
                    uint32_t id, uint64_t h);

/* One bounded step of arena compaction; called after each write. */
void goblin__hf_compact_step(goblin_store *st, struct goblin__hash_full *hf);

/* ---- the tagged object ---- */

static inline bool goblin__hobj_is_full(const void *obj)
{
    return ((uintptr_t)obj & 1u) != 0;
}

static inline struct goblin__hash_full *goblin__hobj_full(const void *obj)
{
    return (struct goblin__hash_full *)((uintptr_t)obj & ~(uintptr_t)1);
}

static inline void *goblin__hobj_of_full(struct goblin__hash_full *hf)
{
    return (void *)((uintptr_t)hf | 1u);
}

#endif
