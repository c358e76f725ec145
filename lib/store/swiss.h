/* swiss.h - an index from byte keys to dense uint32 ids: open addressing
 * with one control byte per slot and 16-wide SIMD group probes, grown
 * incrementally.
 *
 * The owner (keyspace, hash, sorted set) stores the keys; the index stores
 * only ids, so a slot costs 4 bytes plus its control byte. The owner answers
 * two questions through goblin__swiss_ops: the hash of the key stored under
 * an id (needed to move entries into a bigger table) and whether that key
 * equals a probe key.
 *
 * Growth never rehashes the whole table inside one call: a bigger table is
 * allocated and every later insert or erase moves a bounded number of
 * entries from the old one, while lookups consult both. A table is
 * therefore never more than one growth step away from being fully migrated.
 *
 * Control bytes: 0x80 empty, 0xFE deleted, 0x00-0x7F full with the low 7
 * bits of the hash as a fingerprint. The home group is taken from the high
 * bits of the hash, so position and fingerprint stay independent.
 */
#ifndef GOBLIN_SWISS_H
#define GOBLIN_SWISS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "goblin/common.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

struct goblin__swiss_ops {
    /* Hash of the key stored under id: the value given at insert. */
    uint64_t (*hash)(const void *owner, uint32_t id);
    /* Whether the key stored under id equals key[0, len). */
    bool (*eq)(const void *owner, uint32_t id, const void *key, size_t len);
};

struct goblin__swiss_table {
    uint8_t *ctrl;   /* cap bytes, right after ids in the same block */
    uint32_t *ids;   /* cap slots; the block is cap * 5 bytes */
    size_t cap;      /* a multiple of 16, or 0 */
    size_t used;     /* full slots */
    size_t deleted;  /* tombstones */
};

struct goblin__swiss {
    struct goblin__swiss_table cur;
    struct goblin__swiss_table old; /* cap 0 unless migrating */
    size_t migrate_pos;             /* next old slot to move */
};

void goblin__swiss_init(struct goblin__swiss *s);
void goblin__swiss_free(goblin_store *st, struct goblin__swiss *s);

/* Entries in the index (both tables). */
size_t goblin__swiss_count(const struct goblin__swiss *s);

/* ---- the probe, inline ----
 * Lookups are the hot path of every read, so the probe is here, inline,
 * and an owner whose eq is a known static function (the keyspace) gets it
 * compiled into its own lookup with no call per candidate. */

#define GOBLIN__SWISS_GROUP 16
#define GOBLIN__SWISS_EMPTY 0x80

#ifdef __SSE2__
static inline uint32_t goblin__swiss_match_byte(const uint8_t *g, uint8_t b)
{
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)g);

    return (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v,
                                           _mm_set1_epi8((char)b)));
}

/* EMPTY and DELETED are the bytes with the high bit set. */
static inline uint32_t goblin__swiss_match_free(const uint8_t *g)
{
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)g);

    return (uint32_t)_mm_movemask_epi8(v);
}
#else
static inline uint32_t goblin__swiss_match_byte(const uint8_t *g, uint8_t b)
{
    uint32_t m = 0;

    for (int i = 0; i < GOBLIN__SWISS_GROUP; i++)
        m |= (uint32_t)(g[i] == b) << i;
    return m;
}

static inline uint32_t goblin__swiss_match_free(const uint8_t *g)
{
    uint32_t m = 0;

    for (int i = 0; i < GOBLIN__SWISS_GROUP; i++)
        m |= (uint32_t)(g[i] >> 7) << i;
    return m;
}
#endif

static inline uint32_t goblin__swiss_match_empty(const uint8_t *g)
{
    return goblin__swiss_match_byte(g, GOBLIN__SWISS_EMPTY);
}

static inline size_t goblin__swiss_home_group(uint64_t hash, size_t groups)
{
    return (size_t)(((hash >> 32) * (uint64_t)groups) >> 32);
}

static inline uint8_t goblin__swiss_fingerprint(uint64_t hash)
{
    return (uint8_t)(hash & 0x7F);
}

/* Whether the entry id is the one looked for; ctx is the caller's (it
 * holds the key, and may keep what the check found out). */
typedef bool goblin__swiss_match_fn(void *ctx, uint32_t id);

/* Finds the entry of table t that match accepts among those whose
 * fingerprint is hash's. Returns 1 and sets *id, or 0. */
static inline __attribute__((always_inline)) int goblin__swiss_table_find(
    const struct goblin__swiss_table *t, uint64_t hash,
    goblin__swiss_match_fn *match, void *ctx, uint32_t *id)
{
    size_t groups = t->cap / GOBLIN__SWISS_GROUP, g;
    uint8_t h2 = goblin__swiss_fingerprint(hash);

    if (groups == 0)
        return 0;
    g = goblin__swiss_home_group(hash, groups);
    /* The home group's ids are fetched while its control bytes arrive:
     * without this the id load waits for the match, one more dependent
     * cache miss per lookup on a cold table. 16 ids may span two lines. */
    __builtin_prefetch(t->ids + g * GOBLIN__SWISS_GROUP);
    __builtin_prefetch(t->ids + g * GOBLIN__SWISS_GROUP +
                       GOBLIN__SWISS_GROUP - 1);
    for (size_t n = 0; n < groups; n++) {
        const uint8_t *c = t->ctrl + g * GOBLIN__SWISS_GROUP;

        for (uint32_t m = goblin__swiss_match_byte(c, h2); m != 0;
             m &= m - 1) {
            uint32_t cand = t->ids[g * GOBLIN__SWISS_GROUP +
                                   (size_t)__builtin_ctz(m)];

            if (match(ctx, cand)) {
                *id = cand;
                return 1;
            }
        }
        if (goblin__swiss_match_empty(c) != 0)
            return 0;
        if (++g == groups)
            g = 0;
    }
    return 0;
}

/* goblin__swiss_find with the check inlined (see above): both tables. */
static inline __attribute__((always_inline)) int goblin__swiss_find_with(
    const struct goblin__swiss *s, uint64_t hash,
    goblin__swiss_match_fn *match, void *ctx, uint32_t *id)
{
    if (goblin__swiss_table_find(&s->cur, hash, match, ctx, id))
        return 1;
    return s->old.cap != 0 &&
           goblin__swiss_table_find(&s->old, hash, match, ctx, id);
}

/* Finds key, whose hash is hash. Returns 1 and sets *id, or 0. */
int goblin__swiss_find(const struct goblin__swiss *s,
                       const struct goblin__swiss_ops *ops, const void *owner,
                       uint64_t hash, const void *key, size_t len,
                       uint32_t *id);

/* Inserts id, whose key hashes to hash and is known to be absent. May
 * allocate a bigger table and moves a bounded number of old entries.
 * Returns 0, or GOBLIN_ENOMEM with nothing changed. */
int goblin__swiss_insert(goblin_store *st, struct goblin__swiss *s,
                         const struct goblin__swiss_ops *ops,
                         const void *owner, uint64_t hash, uint32_t id);

/* Removes the entry holding id (its key hashes to hash). Cannot fail: when
 * the index becomes very sparse it may start rebuilding into a smaller
 * table, and simply skips that if the allocation fails. An index that
 * becomes empty frees all its memory. */
void goblin__swiss_erase(goblin_store *st, struct goblin__swiss *s,
                         const struct goblin__swiss_ops *ops,
                         const void *owner, uint64_t hash, uint32_t id);

/* The entry holding old_id (its key hashes to hash) now holds new_id: the
 * owner moved that key to a new id (swap-remove). */
void goblin__swiss_retarget(struct goblin__swiss *s, uint64_t hash,
                            uint32_t old_id, uint32_t new_id);

/* Bytes of table memory held, both tables. */
size_t goblin__swiss_bytes(const struct goblin__swiss *s);

#endif
