/* list_impl.h - the two forms of a list object and the block both are
 * made of, as list_obj.c drives them.
 *
 * A block holds consecutive elements in one allocation:
 *
 *   [u32 cap][u32 used][u16 n][u16 nlong][data ... ->      <- lens]
 *
 * cap is the allocation's size, used the bytes of data, n the elements.
 * Element i's length byte is lens(i) = b[cap - 1 - i] (the lengths grow
 * down from the end, the data up from the header, the free space sits in
 * between). A length below 255 is the element's length and its data is
 * exactly its bytes; 255 marks a long element, whose data is
 * [u32 len][bytes][u32 len] (nlong counts them), so the data can be read
 * from either end. An element therefore costs its length plus one byte
 * while it is shorter than 255 bytes. The offset of element k is the sum
 * of the data sizes before it: with no long element, a sum of length
 * bytes, which the compiler vectorises, taken from whichever end is
 * nearer. The last element is reached without a walk, so pops at either
 * end are constant time.
 *
 * A list object is a pointer with its low bit as the tag:
 *  - low bit 0: one block of exact size (compact), for lists of up to
 *    GOBLIN__LIST_COMPACT_MAX bytes;
 *  - low bit 1: a struct goblin__list_full: an array of blocks of up to
 *    GOBLIN__LIST_BLOCK_MAX bytes each (one long element may make a block
 *    bigger), with a free gap at both ends of the array so that blocks
 *    come and go at either end in constant amortised time.
 * Positions: the full form numbers its elements with 64-bit positions
 * head .. head + count - 1; a push at the front lowers head. Each slot
 * keeps the position of its first element, so a push or pop at an end
 * changes only the end slot's start, and the element at index i is found
 * by a binary search of the starts for head + i. A change in the middle
 * (LINSERT, LSET, LREM, LTRIM) renumbers the slots after it.
 */
#ifndef GOBLIN_LIST_IMPL_H
#define GOBLIN_LIST_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "list.h"
#include "store.h"

#define GOBLIN__LB_HDR 12
#define GOBLIN__LB_LONG 255

static inline uint32_t goblin__lb_get32(const uint8_t *p)
{
    uint32_t v;

    memcpy(&v, p, 4);
    return v;
}

static inline void goblin__lb_put32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static inline uint32_t goblin__lb_cap(const uint8_t *b)
{
    return goblin__lb_get32(b);
}

static inline uint32_t goblin__lb_used(const uint8_t *b)
{
    return goblin__lb_get32(b + 4);
}

static inline uint32_t goblin__lb_n(const uint8_t *b)
{
    return (uint32_t)b[8] | (uint32_t)b[9] << 8;
}

static inline uint32_t goblin__lb_nlong(const uint8_t *b)
{
    return (uint32_t)b[10] | (uint32_t)b[11] << 8;
}

static inline const uint8_t *goblin__lb_data(const uint8_t *b)
{
    return b + GOBLIN__LB_HDR;
}

/* Element i's length byte. */
static inline uint8_t goblin__lb_lens(const uint8_t *b, uint32_t i)
{
    return b[goblin__lb_cap(b) - 1 - i];
}

/* Bytes free between the data and the lengths. */
static inline uint32_t goblin__lb_free(const uint8_t *b)
{
    return goblin__lb_cap(b) - GOBLIN__LB_HDR - goblin__lb_used(b) -
           goblin__lb_n(b);
}

/* What an element of len bytes costs a block (data and length byte). */
static inline size_t goblin__lb_cost(size_t len)
{
    return len < GOBLIN__LB_LONG ? len + 1 : len + 9;
}

/* A new empty block of cap bytes, or NULL. */
uint8_t *goblin__lb_new(goblin_store *st, size_t cap);
void goblin__lb_free_block(goblin_store *st, uint8_t *b);
/* Reallocates b to cap bytes (at least its content), moving the lengths
 * to the new end. Returns the block or NULL (b unchanged). */
uint8_t *goblin__lb_resize(goblin_store *st, uint8_t *b, size_t cap);
/* The data offset of element k (k <= n: n gives used). */
uint32_t goblin__lb_offset(const uint8_t *b, uint32_t k);
/* Element k, whose data starts at off. */
struct goblin_slice goblin__lb_elem(const uint8_t *b, uint32_t k,
                                    uint32_t off);
/* The data size of element k starting at off / ending at end. */
uint32_t goblin__lb_dsize_fwd(const uint8_t *b, uint32_t k, uint32_t off);
uint32_t goblin__lb_dsize_back(const uint8_t *b, uint32_t k, uint32_t end);
/* Inserts e as element k (data at off) into b, which has room
 * (goblin__lb_free >= goblin__lb_cost(e.len)). */
void goblin__lb_insert(uint8_t *b, uint32_t k, uint32_t off,
                       struct goblin_slice e);
/* Removes cnt elements from k (data at off). */
void goblin__lb_delete(uint8_t *b, uint32_t k, uint32_t off, uint32_t cnt);
/* Appends elements [k, k + cnt) of src (data from off) to dst, which has
 * room for them. */
void goblin__lb_append_from(uint8_t *dst, const uint8_t *src, uint32_t k,
                            uint32_t off, uint32_t cnt);
/* The bytes elements [k, k + cnt) take (data and lengths). */
size_t goblin__lb_span_bytes(const uint8_t *b, uint32_t k, uint32_t off,
                             uint32_t cnt);
/* Removes the elements from k on that match e, at most *quota of them
 * (*quota < 0: no limit), in one pass; lowers *quota by the number
 * removed and returns that number. */
uint32_t goblin__lb_filter(uint8_t *b, uint32_t k, struct goblin_slice e,
                           int64_t *quota);

/* ---- the full form ---- */

struct goblin__list_slot {
    uint8_t *b;
    int64_t start; /* position of the block's first element */
};

struct goblin__list_full {
    uint64_t count;
    int64_t head;   /* position of the first element */
    uint32_t first; /* slots [first, first + nb) are in use */
    uint32_t nb;
    uint32_t cap;   /* slots allocated */
    struct goblin__list_slot *s;
};

static inline bool goblin__lobj_is_full(const void *obj)
{
    return ((uintptr_t)obj & 1u) != 0;
}

static inline struct goblin__list_full *goblin__lobj_full(const void *obj)
{
    return (struct goblin__list_full *)((uintptr_t)obj & ~(uintptr_t)1);
}

static inline void *goblin__lobj_of_full(struct goblin__list_full *f)
{
    return (void *)((uintptr_t)f | 1u);
}

#endif
