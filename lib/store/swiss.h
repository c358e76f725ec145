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
