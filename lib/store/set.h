/* set.h - what other parts of libgoblin (the keyspace, snapshots, the
 * command layer) may use of set objects beyond the public API: the form
 * limits, member iteration and random access, bulk building and size.
 *
 * An object is what the keyspace slot of a GOBLIN_TYPE_SET key holds; it
 * is owned by the keyspace and freed through goblin__set_free. It is a
 * tagged pointer (the low two bits; allocations are 8-byte aligned):
 *
 *   tag 0, 1  a hash object (hash_impl.h) whose values are all empty:
 *             tag 0 its compact block, for small sets ("listpack" in
 *             Redis 7.2; Redis 7.0 reports "hashtable"), tag 1 its full
 *             form (arena + swiss index) for large ones;
 *   tag 2     a small sorted array of integers (set_intset.c, "intset");
 *   tag 3     a large integer-only set: sorted chunks of fixed-width
 *             integers (set_bigint.c), no hash table at all.
 *
 * Forms move one way, as Redis's do: intset -> bigint when it passes
 * GOBLIN__SET_INTSET_MAX members; either integer form -> a hash form when
 * a member that is not an integer (string2ll's rules) arrives; compact ->
 * full past the compact limits. Nothing converts back. Inside the object
 * layer NULL means "empty", and the first member decides the first form.
 */
#ifndef GOBLIN_SET_INTERNAL_H
#define GOBLIN_SET_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "goblin/set.h"
#include "store.h"

/* One integer of w bytes (2, 4 or 8), native order, at any alignment:
 * the element of the intset and of the large integer set's chunks. */
static inline int64_t goblin__set_int_load(const uint8_t *p, unsigned w)
{
    if (w == 2) {
        int16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    if (w == 4) {
        int32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    int64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline void goblin__set_int_store(uint8_t *p, unsigned w, int64_t v)
{
    if (w == 2) {
        int16_t x = (int16_t)v;
        memcpy(p, &x, 2);
    } else if (w == 4) {
        int32_t x = (int32_t)v;
        memcpy(p, &x, 4);
    } else {
        memcpy(p, &v, 8);
    }
}

/* Redis's defaults: set-max-intset-entries (7.0 and 7.2) and, for the
 * compact block, set-max-listpack-entries / -value (7.2 names). */
#define GOBLIN__SET_INTSET_MAX 512
#define GOBLIN__SET_COMPACT_MAX_ENTRIES 128
#define GOBLIN__SET_COMPACT_MAX_VALUE 64

enum goblin__set_form {
    GOBLIN__SET_COMPACT = 0,
    GOBLIN__SET_FULL = 1,
    GOBLIN__SET_INTSET = 2,
    GOBLIN__SET_BIGINT = 3,
};

static inline enum goblin__set_form goblin__set_form(const void *obj)
{
    return (enum goblin__set_form)((uintptr_t)obj & 3u);
}

static inline void *goblin__set_ptr(const void *obj)
{
    return (void *)((uintptr_t)obj & ~(uintptr_t)3);
}

static inline void *goblin__set_tag(void *p, enum goblin__set_form f)
{
    return (void *)((uintptr_t)p | (uintptr_t)f);
}

/* A member as the object layer hands it out: its bytes (for an integer
 * member, text in the caller's element buffer) and, for a member of an
 * integer form, the number itself. */
struct goblin__set_elem {
    struct goblin_slice s;
    bool is_int;
    int64_t v;
    char buf[24];
};

/* Internal visitor: e is valid only during the call. */
typedef int (*goblin__set_visit)(void *ctx, const struct goblin__set_elem *e);

size_t goblin__set_obj_card(const void *obj);
size_t goblin__set_obj_bytes(const void *obj);
const char *goblin__set_encoding(const void *obj);
void goblin__set_free(goblin_store *st, void *obj);

/* Whether m is a member. */
bool goblin__set_obj_has(const goblin_store *st, const void *obj,
                         struct goblin_slice m);

/* Whether m is a member, and then its position (see goblin__set_obj_at). */
bool goblin__set_obj_pos(const goblin_store *st, const void *obj,
                         struct goblin_slice m, uint64_t *pos);

/* Adds n members to *objp (NULL = empty), converting it as needed; *objp
 * may change. All or nothing: returns the number of new members, or
 * GOBLIN_ENOMEM / GOBLIN_ELIMIT with *objp unchanged. */
int goblin__set_obj_add(goblin_store *st, void **objp,
                        const struct goblin_slice *m, size_t n);

/* Removes the listed members. When that would remove every member the
 * object is left unspecified and must be freed (the caller removes the
 * key). Returns the number removed, or GOBLIN_ENOMEM
 * with nothing changed (a compact block is rebuilt). */
int goblin__set_obj_rem(goblin_store *st, void **objp,
                        const struct goblin_slice *m, size_t n);

/* The member at position i < card: sorted order for the integer forms,
 * insertion order for the compact block, dense id for the full form.
 * Removals may reorder positions. */
void goblin__set_obj_at(const void *obj, uint64_t i,
                        struct goblin__set_elem *e);

/* Calls visit for every member, in position order. Returns the number
 * visited or the visitor's nonzero return. */
int64_t goblin__set_obj_foreach(const void *obj, goblin__set_visit visit,
                                void *ctx);

/* One page of SSCAN (see set_scan.c for the cursor); *next 0 = done. */
int64_t goblin__set_obj_scan(const void *obj, uint64_t cursor, size_t count,
                             struct goblin_slice match,
                             goblin__set_visit visit, void *ctx,
                             uint64_t *next);

/* count distinct random positions of obj (count < card), uniformly
 * chosen, written ascending into pos. 0 or GOBLIN_ENOMEM. */
int goblin__set_obj_pick(goblin_store *st, const void *obj, uint64_t count,
                         uint64_t *pos);

/* Visits the members at the ascending positions pos[0..k). Returns k or
 * the visitor's nonzero return. */
int64_t goblin__set_obj_visit_at(const void *obj, const uint64_t *pos,
                                 uint64_t k, goblin__set_visit visit,
                                 void *ctx);

/* SPOP's removal. For the block forms (intset, compact): builds into
 * *out a new object without the ascending positions pos[0..k) (k < card);
 * 0 or GOBLIN_ENOMEM. For the others *out is NULL and the caller removes
 * position by position, highest first, with goblin__set_obj_del_at,
 * which never fails. */
int goblin__set_obj_without(goblin_store *st, const void *obj,
                            const uint64_t *pos, uint64_t k, void **out);
void goblin__set_obj_del_at(goblin_store *st, void *obj, uint64_t i);

/* Checks obj's invariants (set_check.c); 0 or a negative number. */
int goblin__set_obj_check(const goblin_store *st, const void *obj);

/* A uniform integer in [0, n), n > 0. */
uint64_t goblin__set_rand_below(goblin_store *st, uint64_t n);

/* ---- the integer forms (set_intset.c, set_bigint.c) ---- */

/* The width an integer needs: 2, 4 or 8 bytes. */
static inline unsigned goblin__iset_width(int64_t v)
{
    if (v >= INT16_MIN && v <= INT16_MAX)
        return 2;
    if (v >= INT32_MIN && v <= INT32_MAX)
        return 4;
    return 8;
}

/* Small intset: [u32 n][u8 width][3 pad][n sorted values of width]. */
struct goblin__intset {
    uint32_t n;
    uint8_t width;
    uint8_t pad[3];
    uint8_t data[];
};

size_t goblin__intset_bytes(const struct goblin__intset *is);
int64_t goblin__intset_get(const struct goblin__intset *is, size_t i);
/* Position of v, or -(insertion point) - 1. */
int64_t goblin__intset_search(const struct goblin__intset *is, int64_t v);
/* A new intset (old NULL = empty) holding old's values plus the sorted,
 * distinct vals (nvals), of which nadd are not in old. */
int goblin__intset_merge(goblin_store *st, const struct goblin__intset *old,
                         const int64_t *vals, size_t nvals, size_t nadd,
                         struct goblin__intset **out);
/* A new intset without the positions whose bit is set in del (ndel of
 * them, fewer than old->n). */
int goblin__intset_remove(goblin_store *st, const struct goblin__intset *old,
                          const uint64_t *del, size_t ndel,
                          struct goblin__intset **out);
void goblin__intset_free(goblin_store *st, struct goblin__intset *is);

/* Large integer set: chunks of sorted values, each chunk's values in
 * [min, next chunk's min). */
struct goblin__bigint_chunk {
    int64_t min;     /* its first value */
    uint32_t n, cap; /* values held, room */
    uint8_t *p;      /* cap * width bytes */
};

struct goblin__bigint {
    uint64_t n;
    uint32_t nchunks, chunks_cap;
    uint8_t width;
    struct goblin__bigint_chunk *chunks;
};

int goblin__bigint_from_intset(goblin_store *st,
                               const struct goblin__intset *is,
                               struct goblin__bigint **out);
void goblin__bigint_free(goblin_store *st, struct goblin__bigint *b);
size_t goblin__bigint_bytes(const struct goblin__bigint *b);
bool goblin__bigint_has(const struct goblin__bigint *b, int64_t v);
/* 1 added, 0 present, or GOBLIN_ENOMEM (nothing changed). */
int goblin__bigint_add(goblin_store *st, struct goblin__bigint *b, int64_t v);
/* 1 removed or 0 absent; never fails. */
int goblin__bigint_del(goblin_store *st, struct goblin__bigint *b, int64_t v);
int64_t goblin__bigint_get(const struct goblin__bigint *b, uint64_t i);
/* The chunk holding position i, and i's place in it (first as a hint:
 * the chunk to start from, whose first position is *base). */
void goblin__bigint_locate(const struct goblin__bigint *b, uint64_t i,
                           uint32_t *chunk, uint64_t *base);
int64_t goblin__bigint_chunk_get(const struct goblin__bigint *b,
                                 uint32_t chunk, uint32_t j);
/* The position of the first value >= v (n when none). */
uint64_t goblin__bigint_lower_bound(const struct goblin__bigint *b,
                                    int64_t v);

#endif
