/* goblin/list.h - list values (Redis lists): a key holding a sequence of
 * binary-safe byte strings, pushed and popped at either end and reached
 * by index.
 *
 * Conventions shared by every call below:
 *  - A missing key acts as an empty list; a key holding another type gives
 *    GOBLIN_EWRONGTYPE.
 *  - Indexes are Redis's: 0 is the first element, -1 the last.
 *  - Elements passed in are copied. A write must not be given views
 *    borrowed from the store (copy them first): the write may move or free
 *    the bytes they point at before it has read them.
 *  - Views handed out (to a visitor or through *out) are borrowed: they
 *    stay valid until the next write to the store. A visitor must not
 *    call into the store; a nonzero return stops the walk and the call
 *    returns that value (a negative GOBLIN_E* code passes an error up).
 *  - A failed call changes nothing: an RPUSH of several elements whose
 *    allocation fails pushes none of them.
 *  - Removing the last element removes the key.
 *  - Pushes and pops at either end take constant time; reaching index i
 *    takes a binary search over blocks of a few KiB, not a walk.
 *  - Goblin limit: an element takes at most 4 GiB - 64 bytes
 *    (GOBLIN_ELIMIT beyond).
 */
#ifndef GOBLIN_LIST_H
#define GOBLIN_LIST_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ends of a list: LEFT and RIGHT in Redis's words. */
enum goblin_list_end {
    GOBLIN_LIST_HEAD = 0,
    GOBLIN_LIST_TAIL = 1,
};

typedef int (*goblin_list_visit)(void *ctx, struct goblin_slice elem);

/* LPUSH / RPUSH (exists 0), LPUSHX / RPUSHX (exists 1: only when the key
 * holds a list). The n elements are pushed left to right, so LPUSH a b c
 * leaves c first. Returns the new length (0 when exists and the key is
 * missing), or GOBLIN_EWRONGTYPE, GOBLIN_ENOMEM, GOBLIN_ELIMIT, or
 * GOBLIN_EINVAL when n is 0. */
GOBLIN_API int64_t goblin_list_push(goblin_store *st, struct goblin_slice key,
                                    enum goblin_list_end end,
                                    const struct goblin_slice *elems,
                                    size_t n, int exists);

/* SORT ... STORE: replaces whatever key holds (any type, any deadline)
 * with a list of elems[0..n), in order, with no deadline; n == 0 deletes
 * the key. elems may point into any key's value, the replaced one too.
 * Returns n, or GOBLIN_ENOMEM / GOBLIN_ELIMIT with nothing changed. */
GOBLIN_API int64_t goblin_list_replace(goblin_store *st,
                                       struct goblin_slice key,
                                       const struct goblin_slice *elems,
                                       size_t n);

/* LPOP / RPOP key count: visits, then removes, the first (last) count
 * elements, nearest the end first. Returns the number popped (0 for a
 * missing key), GOBLIN_EWRONGTYPE, GOBLIN_EINVAL (count < 0), or the
 * visitor's nonzero return (then nothing is removed). visit may be NULL. */
GOBLIN_API int64_t goblin_list_pop(goblin_store *st, struct goblin_slice key,
                                   enum goblin_list_end end, int64_t count,
                                   goblin_list_visit visit, void *ctx);

/* LLEN. Returns the length (0 for a missing key) or GOBLIN_EWRONGTYPE. */
GOBLIN_API int64_t goblin_list_len(goblin_store *st, struct goblin_slice key);

/* LINDEX. Returns 1 and sets *out (borrowed), 0 when the key is missing or
 * the index out of range, or GOBLIN_EWRONGTYPE. */
GOBLIN_API int goblin_list_index(goblin_store *st, struct goblin_slice key,
                                 int64_t index, struct goblin_slice *out);

/* LSET. Returns 0, GOBLIN_ENOKEY (missing key), GOBLIN_ERANGE (index out
 * of range), GOBLIN_EWRONGTYPE, GOBLIN_ENOMEM or GOBLIN_ELIMIT. */
GOBLIN_API int goblin_list_set(goblin_store *st, struct goblin_slice key,
                               int64_t index, struct goblin_slice elem);

/* LRANGE key start stop: visits the elements from start to stop
 * (inclusive, Redis's clamping). Returns the number visited, or
 * GOBLIN_EWRONGTYPE, or the visitor's nonzero return. */
GOBLIN_API int64_t goblin_list_range(goblin_store *st,
                                     struct goblin_slice key, int64_t start,
                                     int64_t stop, goblin_list_visit visit,
                                     void *ctx);

/* LTRIM key start stop: keeps only that range (an empty one removes the
 * key). Returns 0 or GOBLIN_EWRONGTYPE; never runs out of memory. */
GOBLIN_API int goblin_list_trim(goblin_store *st, struct goblin_slice key,
                                int64_t start, int64_t stop);

/* LINSERT key BEFORE|AFTER pivot elem (after 0 or 1). Returns 1 when
 * inserted, with *len the new length; 0 when not, with *len 0 (missing
 * key) or -1 (no pivot), as LINSERT replies; or GOBLIN_EWRONGTYPE,
 * GOBLIN_ENOMEM, GOBLIN_ELIMIT. */
GOBLIN_API int goblin_list_insert(goblin_store *st, struct goblin_slice key,
                                  int after, struct goblin_slice pivot,
                                  struct goblin_slice elem, int64_t *len);

/* LREM key count elem: removes the first count elements equal to elem
 * (count > 0), the last -count (count < 0) or all (0). Returns the number
 * removed or GOBLIN_EWRONGTYPE; never runs out of memory. */
GOBLIN_API int64_t goblin_list_rem(goblin_store *st, struct goblin_slice key,
                                   int64_t count, struct goblin_slice elem);

/* LPOS's options: rank (not 0; negative searches from the tail), count
 * (0: all matches), maxlen (0: the whole list), as Redis takes them. */
struct goblin_lpos_options {
    int64_t rank;
    int64_t count;
    int64_t maxlen;
};

typedef int (*goblin_list_pos_visit)(void *ctx, int64_t index);

/* LPOS: visits the indexes of the matches of elem, in search order, up to
 * o->count of them (o NULL: rank 1, count 1, maxlen 0). Returns the number
 * visited, GOBLIN_EWRONGTYPE, GOBLIN_EINVAL (rank 0 or INT64_MIN, count or
 * maxlen negative), or the visitor's nonzero return. */
GOBLIN_API int64_t goblin_list_pos(goblin_store *st, struct goblin_slice key,
                                   struct goblin_slice elem,
                                   const struct goblin_lpos_options *o,
                                   goblin_list_pos_visit visit, void *ctx);

/* LMOVE src dst from to (and RPOPLPUSH: TAIL, HEAD): pops an element at
 * src's end `from` and pushes it at dst's end `to`, visiting it (visit
 * may be NULL). src and dst may be the same key. Returns 1 when moved, 0
 * when src is missing, or GOBLIN_EWRONGTYPE (src or dst of another type;
 * nothing moves), GOBLIN_ENOMEM, or the visitor's nonzero return (the
 * move has then happened). */
GOBLIN_API int goblin_list_move(goblin_store *st, struct goblin_slice src,
                                struct goblin_slice dst,
                                enum goblin_list_end from,
                                enum goblin_list_end to,
                                goblin_list_visit visit, void *ctx);

#ifdef __cplusplus
}
#endif

#endif
