/* ring_fast.h - the usual case of each queue operation, inline, for the
 * two hot users of a ring inside libgoblin (the client's ring transport
 * and the ring endpoint): a plain record at the consumer's cursor, room
 * by the cached head at the producer's, no filler, no window edge, no
 * error. Anything else calls the out-of-line functions of queue.c, which
 * use the same inline bodies first, so there is one implementation of
 * each step and the public calls (goblin/ring.h) behave as before.
 */
#ifndef GOBLIN_RING_FAST_H
#define GOBLIN_RING_FAST_H

#include <string.h>

#include "ring_int.h"

static inline uint64_t goblin__ring_rec_size(uint32_t len)
{
    return ((uint64_t)len + RING_REC_HDR + RING_LINE - 1) &
           ~(uint64_t)(RING_LINE - 1);
}

/* Whether a record of size bytes at off starts at or crosses a multiple
 * of RING_WINDOW (other than offset 0). */
static inline bool goblin__ring_at_window_edge(uint64_t off, uint64_t size)
{
    return off != 0 && ((off - 1) ^ (off + size - 1)) >= RING_WINDOW;
}

/* Consumer: the next record of q if it is plain data that fits (1 with
 * *rec), 0 if none is there yet, -1 if it is something else (a filler, a
 * bad length): the caller then takes the general peek, which starts from
 * the same position. */
static inline int goblin__ring_queue_peek_plain(struct goblin__ring_queue *q,
                                                struct goblin_slice *rec)
{
    uint64_t off = q->pos & (q->cap - 1), word, size;
    unsigned char *p = q->data + off;

    /* Pairs with the producer's release in flush: the record and any
     * stamped after it in the same batch are fully written. */
    if (atomic_load_explicit(goblin__ring_stamp(q, q->pos),
                             memory_order_acquire) != (q->pos ^ q->key))
        return 0;
    memcpy(&word, p + 8, 8);            /* length and flags, read once */
    size = goblin__ring_rec_size((uint32_t)word);
    if ((word >> 32) != RING_FLAG_DATA || (uint32_t)word > q->max_len ||
        off + size > q->cap || q->pos + size - q->released > q->cap)
        return -1;                      /* crosses the end, overran */
    rec->ptr = p + RING_REC_HDR;
    rec->len = (uint32_t)word;
    q->pos += size;
    return 1;
}

/* Server: whether the client's epoch moved, or no client came yet. */
static inline bool goblin__ring_session_moved(goblin_ring *r)
{
    /* Pairs with the client's store of epoch (goblin__ring_sync). */
    uint64_t e = atomic_load_explicit(&r->hdr->epoch, memory_order_acquire);

    return e != r->epoch || e == 0;
}

/* goblin_ring_peek: the usual case inline. A server loads the epoch
 * after the stamp, as goblin_ring_peek does (see there); if it moved,
 * goblin_ring_peek starts the new session, which resets the cursor
 * this peek may have advanced. */
static inline int goblin__ring_peek_fast(goblin_ring *r,
                                         struct goblin_slice *rec)
{
    int rc;

    if (__builtin_expect(r->err != 0 || r->acc_pos < r->acc_len, 0))
        return goblin_ring_peek(r, rec);
    rc = goblin__ring_queue_peek_plain(&r->rx, rec);
    if (__builtin_expect(rc < 0, 0) ||
        (r->server && __builtin_expect(goblin__ring_session_moved(r), 0)))
        return goblin_ring_peek(r, rec);
    return rc;
}

/* goblin_ring_release, inline. */
static inline void goblin__ring_release_fast(goblin_ring *r)
{
    struct goblin__ring_queue *q = &r->rx;

    if (__builtin_expect(r->acc_len != 0, 0)) {
        goblin_ring_release(r);
        return;
    }
    if (q->pos == q->released)
        return;
    q->released = q->pos;
    /* Our reads of the released records happen before the producer may
     * overwrite them. */
    atomic_store_explicit(q->head_w, q->pos, memory_order_release);
}

/* goblin_ring_reserve: the usual case inline (no filler, no window edge,
 * room by the cached head), else the general reservation. */
static inline int goblin__ring_reserve_fast(goblin_ring *r, uint32_t len,
                                            void **buf)
{
    struct goblin__ring_queue *q = &r->tx;
    uint64_t size = goblin__ring_rec_size(len), off = q->pos & (q->cap - 1);

    if (__builtin_expect(r->err == 0 && len <= q->max_len &&
                             off + size <= q->cap &&
                             !goblin__ring_at_window_edge(off, size) &&
                             q->cap - (q->pos - q->peer) >= size,
                         1)) {
        q->res_skip = 0;
        q->res_len = len;
        q->reserved = true;
        *buf = q->data + off + RING_REC_HDR;
        return 0;
    }
    return goblin_ring_reserve(r, len, buf);
}

/* goblin_ring_commit of a reservation made without a filler, inline. */
static inline int goblin__ring_commit_fast(goblin_ring *r, uint32_t len)
{
    struct goblin__ring_queue *q = &r->tx;
    unsigned char *p;
    uint64_t word = len;                /* flags RING_FLAG_DATA = 0 */

    if (__builtin_expect(!q->reserved || len > q->res_len ||
                             q->res_skip != 0,
                         0))
        return goblin_ring_commit(r, len);
    p = q->data + (q->pos & (q->cap - 1));
    memcpy(p + 8, &word, 8);
    /* The first unpublished record's stamp waits for flush: that one
     * release publishes them all. */
    if (q->pos != q->published)
        atomic_store_explicit(goblin__ring_stamp(q, q->pos), q->pos ^ q->key,
                              memory_order_relaxed);
    q->pos += goblin__ring_rec_size(len);
    q->reserved = false;
    return 0;
}

/* goblin_ring_flush, inline (queue.c's publish_stores). */
static inline void goblin__ring_flush_fast(goblin_ring *r)
{
    struct goblin__ring_queue *q = &r->tx;

    if (q->pos == q->published)
        return;
    /* The records' bytes and later stamps are visible before this one. */
    atomic_store_explicit(goblin__ring_stamp(q, q->published),
                          q->published ^ q->key, memory_order_release);
    q->published = q->pos;
    if (!q->peer_sleeps) {
        /* The records' bytes must be visible before the new tail is. */
        atomic_store_explicit(q->tail_w, q->pos, memory_order_release);
        return;
    }
    /* seq_cst store then seq_cst load: either the sleeper's re-check sees
     * this tail, or this load sees its announcement. */
    atomic_store_explicit(q->tail_w, q->pos, memory_order_seq_cst);
    if (atomic_load_explicit(q->sleep_w, memory_order_seq_cst) != 0)
        goblin__ring_wake(r, q->sleep_w);
}

/* goblin__ring_nudge_take, inline: one relaxed load when not nudged. */
static inline bool goblin__ring_nudge_take_fast(goblin_ring *r)
{
    return __builtin_expect(atomic_load_explicit(&r->nudged,
                                                 memory_order_relaxed),
                            0) &&
           atomic_exchange_explicit(&r->nudged, false, memory_order_acquire);
}

#endif
