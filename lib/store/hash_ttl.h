/* hash_ttl.h - per-field deadlines of hashes (Redis 7.4's hash field
 * expiry) as the rest of libgoblin sees them.
 *
 * Only the full form holds deadlines: a compact hash that gets one is
 * converted first. A full hash without any deadline has hf->ttl == NULL,
 * so a hash nobody gave a field TTL costs nothing, and the store counts
 * the hashes that have one (st->httl_hashes): while it is 0 every hash
 * lookup pays one load and one branch.
 *
 * The table is kept by id, next to the full form's dense ids: when[id]
 * (ms since the epoch, -1 for none), and a binary min-heap of the ids
 * that have one, so the fields due are found at the top. Entries in
 * [n, cap) always read "none". A field is expired when now > deadline,
 * as keys are (at the deadline itself it still exists).
 */
#ifndef GOBLIN_HASH_TTL_H
#define GOBLIN_HASH_TTL_H

#include <stdbool.h>
#include <stdint.h>

#include "hash_impl.h"
#include "store.h"

struct goblin__hf_ttl {
    int64_t *when;   /* by id: the deadline, or -1 */
    uint32_t *hpos;  /* by id: its place in heap, or UINT32_MAX */
    uint32_t *heap;  /* ids with a deadline, a min-heap on when */
    uint32_t nheap;
    uint32_t cap;    /* entries of each array */
};

/* Bytes the table takes (0 without one). */
size_t goblin__httl_bytes(const struct goblin__hash_full *hf);
void goblin__httl_free(goblin_store *st, struct goblin__hash_full *hf);

/* Room for need ids (creating the table). 0 or GOBLIN_ENOMEM. */
int goblin__httl_reserve(goblin_store *st, struct goblin__hash_full *hf,
                         uint32_t need);

/* The deadline of id, or -1. */
static inline int64_t goblin__httl_get(const struct goblin__hash_full *hf,
                                       uint32_t id)
{
    return hf->ttl != NULL ? hf->ttl->when[id] : -1;
}

/* Sets id's deadline (room reserved) or clears it (when == -1; the table
 * goes when no deadline is left). */
void goblin__httl_set(goblin_store *st, struct goblin__hash_full *hf,
                      uint32_t id, int64_t when);

/* goblin__hf_del calls it before id leaves and the last id moves into
 * its place. The table stays even when it empties: whoever deletes calls
 * goblin__httl_settle when done. */
void goblin__httl_on_del(goblin_store *st, struct goblin__hash_full *hf,
                         uint32_t id);

/* Drops the table when no deadline is left in it. */
void goblin__httl_settle(goblin_store *st, struct goblin__hash_full *hf);

/* goblin__key_lookup for a hash, with its due fields expired first (each
 * reported to the store's field_gone hook, the key deleted when none is
 * left). 1 with *slot, 0 when absent, or GOBLIN_EWRONGTYPE. */
int goblin__hash_lookup_slow(goblin_store *st, struct goblin_slice key,
                             void ***slot);
static inline int goblin__hash_lookup(goblin_store *st,
                                      struct goblin_slice key, void ***slot)
{
    if (__builtin_expect(st->httl_hashes != 0, 0))
        return goblin__hash_lookup_slow(st, key, slot);
    return goblin__key_lookup(st, key, GOBLIN_TYPE_HASH, slot);
}

/* Clears the deadlines of the fields named in fv (field, value, ...):
 * HSET and friends replace a field's TTL as Redis 7.4 does. */
void goblin__httl_clear_pairs(goblin_store *st, void *obj,
                              const struct goblin_slice *fv, size_t npairs);

/* Copies src's deadlines onto dst, a copy of the same fields. 0 or
 * GOBLIN_ENOMEM (dst then keeps none). */
int goblin__httl_copy(goblin_store *dst_st, void **dstp, const void *src);

/* The deadline of the field of obj (any form), or -1. */
int64_t goblin__hash_obj_field_deadline(const goblin_store *st,
                                        const void *obj,
                                        struct goblin_slice field);

/* Gives field of *objp (converted to the full form if needed) the
 * deadline when: loaders. 1 done, 0 no such field, GOBLIN_ENOMEM. */
int goblin__hash_obj_set_deadline(goblin_store *st, void **objp,
                                  struct goblin_slice field, int64_t when);

/* Whether obj holds any field deadline. */
bool goblin__hash_obj_has_ttl(const void *obj);

/* The fields of obj not past their deadlines at now. */
size_t goblin__hash_obj_live_len(const void *obj, int64_t now);

/* Calls visit for every live pair of obj (fields due at now skipped)
 * with its deadline (-1 for none). */
typedef int (*goblin__hash_ttl_visit)(void *ctx, struct goblin_slice f,
                                      struct goblin_slice v, int64_t when);
int64_t goblin__hash_obj_foreach_ttl(const void *obj, int64_t now,
                                     goblin__hash_ttl_visit visit, void *ctx);

/* One bounded step of active field expiry: looks at up to max_work keys
 * from a cursor kept in the store. Returns the fields expired. */
size_t goblin__hash_expire_step(goblin_store *st, size_t max_work);

/* Checks the table against hf (hash_check.c). 0 or negative. */
int goblin__httl_check(const struct goblin__hash_full *hf);

#endif
