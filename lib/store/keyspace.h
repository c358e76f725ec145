/* keyspace.h - the one namespace of keys, and the interface the type
 * modules (strings, hashes, sorted sets) use to reach their objects.
 *
 * A key holds exactly one type. Hash and sorted-set objects are owned by
 * the keyspace once added: deleting, expiring or overwriting the key frees
 * them through goblin__hash_free / goblin__zset_free.
 */
#ifndef GOBLIN_KEYSPACE_H
#define GOBLIN_KEYSPACE_H

#include <stddef.h>
#include <stdint.h>

#include "goblin/common.h"

struct goblin__keyspace {
    int unused; /* the keyspace module defines the real layout */
};

void goblin__keyspace_init(goblin_store *st);
void goblin__keyspace_free(goblin_store *st);

/* Finds key for an operation on type `type` (lazily deleting it first if it
 * has expired). Returns 1 and sets *slot to the place holding the object
 * pointer, which the caller may read or replace (e.g. after converting a
 * compact form to a full one); 0 if the key is absent; GOBLIN_EWRONGTYPE if
 * it holds another type. *slot stays valid until the next key is added or
 * removed. */
int goblin__key_lookup(goblin_store *st, struct goblin_slice key,
                       enum goblin_type type, void ***slot);

/* Adds key, known to be absent, holding obj of type, with no expiry.
 * Returns 0, or GOBLIN_ENOMEM with nothing added (obj stays the caller's). */
int goblin__key_add(goblin_store *st, struct goblin_slice key,
                    enum goblin_type type, void *obj);

/* Replaces whatever key holds (any type, any expiry) with obj of type and
 * no expiry, as a STORE-style command does. Returns 0, or GOBLIN_ENOMEM with
 * nothing changed (obj stays the caller's). */
int goblin__key_replace(goblin_store *st, struct goblin_slice key,
                        enum goblin_type type, void *obj);

/* Removes key, which is present, and frees its object: used when a
 * collection becomes empty. */
void goblin__key_remove(goblin_store *st, struct goblin_slice key);

/* Provided by the type modules and called by the keyspace. */
void goblin__hash_free(goblin_store *st, void *obj);
void goblin__zset_free(goblin_store *st, void *obj);
const char *goblin__hash_encoding(const void *obj); /* "listpack" or "hashtable" */
const char *goblin__zset_encoding(const void *obj); /* "listpack" or "skiplist" */

#endif
