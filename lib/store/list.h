/* list.h - what other parts of libgoblin (the keyspace, snapshots, RDB
 * import, the command layer, blocking commands) may use of list objects
 * beyond the public API: the object layer under goblin/list.h.
 *
 * An object is what the keyspace slot of a GOBLIN_TYPE_LIST key holds;
 * it is owned by the keyspace and freed through goblin__list_free. Inside
 * the object layer a NULL object is an empty list, so a new key is built
 * by pushing into a NULL object and adding the result. A key's object is
 * never empty: a write that leaves no element removes the key.
 */
#ifndef GOBLIN_LIST_INTERNAL_H
#define GOBLIN_LIST_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "goblin/list.h"
#include "store.h"

/* A list stays one compact block up to this many bytes (Redis's
 * list-max-listpack-size -2: 8 KiB a node); bigger lists are made of
 * blocks of up to GOBLIN__LIST_BLOCK_MAX bytes. */
#define GOBLIN__LIST_COMPACT_MAX 8192
#define GOBLIN__LIST_BLOCK_MAX 4096
/* An element takes at most this many bytes (the block format's u32). */
#define GOBLIN__LIST_ELEM_MAX ((size_t)UINT32_MAX - 64)

size_t goblin__list_obj_len(const void *obj);
/* Bytes obj holds through the store's allocator. */
size_t goblin__list_obj_bytes(const void *obj);
/* Checks obj's invariants. Returns 0 or a negative number naming the
 * check that failed. For tests and fuzz targets. */
int goblin__list_obj_check(const void *obj);

/* Pushes n elements at end (GOBLIN_LIST_HEAD: each in turn becomes the
 * first, as LPUSH does). *objp may be NULL (an empty list) and may change.
 * All or nothing: 0, or GOBLIN_ENOMEM / GOBLIN_ELIMIT with the content
 * unchanged. */
int goblin__list_obj_push(goblin_store *st, void **objp,
                          enum goblin_list_end end,
                          const struct goblin_slice *e, size_t n);
/* Removes cnt elements from index idx (idx + cnt <= length). Never
 * fails; may leave an empty object, which the caller frees or removes. */
void goblin__list_obj_delete(goblin_store *st, void **objp, uint64_t idx,
                             uint64_t cnt);
/* Element idx (< length), borrowed until the next write. */
struct goblin_slice goblin__list_obj_at(const void *obj, uint64_t idx);
/* Inserts e before index idx (idx == length appends). 0 or
 * GOBLIN_ENOMEM / GOBLIN_ELIMIT with nothing changed. */
int goblin__list_obj_insert(goblin_store *st, void **objp, uint64_t idx,
                            struct goblin_slice e);
/* Replaces element idx (< length) with e. 0 or GOBLIN_ENOMEM /
 * GOBLIN_ELIMIT with nothing changed. */
int goblin__list_obj_set(goblin_store *st, void **objp, uint64_t idx,
                         struct goblin_slice e);
/* LREM: removes elements equal to e, the first count of them (count > 0),
 * the last -count (count < 0) or all (0). Returns the number removed;
 * never fails. */
uint64_t goblin__list_obj_rem(goblin_store *st, void **objp, int64_t count,
                              struct goblin_slice e);

/* A walk over elements from an index, forwards or backwards. The object
 * must not change during the walk. */
struct goblin__list_iter {
    const void *obj;
    const uint8_t *b;  /* the current block */
    uint32_t slot;     /* its slot (full form) */
    uint32_t k;        /* the next element's index in b */
    uint32_t off;      /* forwards: its data offset; backwards: its end */
    bool rev;
    uint64_t left;     /* elements still to visit */
};

/* Starts at index idx (< length, or any value when the list is empty),
 * visiting at most the elements up to the end it walks towards. */
void goblin__list_iter_init(struct goblin__list_iter *it, const void *obj,
                            uint64_t idx, bool rev);
bool goblin__list_iter_next(struct goblin__list_iter *it,
                            struct goblin_slice *e);

#endif
