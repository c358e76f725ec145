/* hash.h - what other parts of libgoblin (snapshots, the keyspace, the
 * command layer) may use of hash objects beyond the public API: the
 * compact-form limits, whole-object iteration, bulk building and size.
 *
 * An object is what the keyspace slot of a GOBLIN_TYPE_HASH key holds;
 * it is owned by the keyspace and freed through goblin__hash_free.
 */
#ifndef GOBLIN_HASH_INTERNAL_H
#define GOBLIN_HASH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "goblin/hash.h"
#include "store.h"

/* A hash stays compact while it has at most this many fields and no field
 * or value is longer than GOBLIN__HASH_COMPACT_MAX_VALUE bytes (Redis's
 * hash-max-listpack-entries / -value defaults). */
#define GOBLIN__HASH_COMPACT_MAX_ENTRIES 128
#define GOBLIN__HASH_COMPACT_MAX_VALUE 64

/* Number of fields in obj. */
size_t goblin__hash_obj_len(const void *obj);

/* Bytes obj holds through the store's allocator. */
size_t goblin__hash_obj_bytes(const void *obj);

/* Calls visit for every pair of obj (views borrowed until the next write).
 * Returns the number visited or the visitor's nonzero return. */
int64_t goblin__hash_obj_foreach(const void *obj, goblin_hash_visit visit,
                                 void *ctx);

/* Builds a new object from npairs pairs (fv: field, value, ...; a field
 * given twice keeps its last value), in the form their count and sizes
 * call for. The object is not in the keyspace: hand it to goblin__key_add
 * or free it with goblin__hash_free. npairs may be 0 (an empty compact
 * object, which must not be added to the keyspace as such). Returns 0 or
 * GOBLIN_ENOMEM / GOBLIN_ELIMIT with nothing allocated. */
int goblin__hash_obj_from_pairs(goblin_store *st,
                                const struct goblin_slice *fv, size_t npairs,
                                void **out);

/* Sets npairs pairs in *objp (an object made by goblin__hash_obj_from_pairs
 * or held by a key), converting it to the full form if needed; *objp may
 * change. All or nothing: returns the number of new fields, or
 * GOBLIN_ENOMEM / GOBLIN_ELIMIT with *objp and the object unchanged. Does
 * not report a key change. A snapshot loader can add pairs in batches with
 * it. */
int goblin__hash_obj_set(goblin_store *st, void **objp,
                         const struct goblin_slice *fv, size_t npairs);

/* Checks obj's invariants (hash_check.c). Returns 0 or a negative number
 * naming the check that failed. For tests and fuzz targets. */
int goblin__hash_obj_check(const goblin_store *st, const void *obj);

#endif
