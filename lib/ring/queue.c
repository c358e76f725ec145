/* queue.c - the SPSC byte queues: producing records (reserve, commit,
 * flush, publish) and consuming them in place (peek, poll, release), with
 * everything read from the peer checked before it is used.
 *
 * A record is [u64 stamp][u32 len][u32 flags][payload], 64-byte aligned.
 * It exists for the consumer once its stamp equals position ^ key: the
 * consumer polls that one word, so the record's own line is the only one
 * that moves to announce it (no separate tail line on the round trip).
 *
 * Ordering: the producer writes records with plain stores; the stamps of
 * all committed records but the first are stored relaxed at commit; flush
 * stores the first stamp with release, so one release publishes a batch
 * (the consumer reaches later records only through the first). Then flush
 * stores the tail: the index the wait path and the sleeper's re-check
 * read. The consumer loads a stamp with acquire, reads the record, then
 * stores its head with release; the producer loads the head with acquire
 * before reusing space. When the consumer may sleep, the tail store and
 * the load of its futex word are seq_cst (see wait.c): no lost wake-up.
 *
 * A record never crosses the end of its region: when it would, a filler
 * (length 0, flag FILLER) takes the rest of the region and the record
 * starts at offset 0. The producer also wraps early, at a RING_WINDOW
 * edge, when the consumer has caught up (see filler_before).
 */
#include <string.h>

#include "ring_fast.h"

#define rec_size goblin__ring_rec_size
#define at_window_edge goblin__ring_at_window_edge

void goblin__ring_queue_init(struct goblin__ring_queue *q,
                             unsigned char *data, uint64_t cap,
                             _Atomic uint64_t *head_w,
                             _Atomic uint64_t *tail_w,
                             _Atomic uint32_t *sleep_w)
{
    memset(q, 0, sizeof(*q));
    q->data = data;
    q->cap = cap;
    q->max_len = (uint32_t)(cap / 2 - RING_REC_HDR);
    q->head_w = head_w;
    q->tail_w = tail_w;
    q->sleep_w = sleep_w;
}

void goblin__ring_queue_reset(struct goblin__ring_queue *q, uint64_t base,
                              uint64_t key)
{
    q->key = key;
    q->pos = base;
    q->peer = base;
    q->published = base;
    q->released = base;
    q->reserved = false;
}

int goblin__ring_fail(goblin_ring *r)
{
    r->err = GOBLIN_EPROTO;
    return GOBLIN_EPROTO;
}

/* Producer: re-reads the consumer's head and checks it lies between the
 * cached one and our tail. */
static int refresh_head(goblin_ring *r, struct goblin__ring_queue *q)
{
    uint64_t h;

    goblin_ring_flush(r);   /* a waiting caller must not hold commits back */
    /* Pairs with the consumer's release of head: the bytes it gave back
     * are no longer being read. */
    h = atomic_load_explicit(q->head_w, memory_order_acquire);
    if ((h & (RING_LINE - 1)) != 0 || h - q->peer > q->pos - q->peer)
        return goblin__ring_fail(r);        /* behind us, or past our tail */
    q->peer = h;
    return 0;
}

/* Producer: makes room for need bytes at q->pos, re-reading the
 * consumer's head only when the cached one says they won't fit. */
static int make_room(goblin_ring *r, struct goblin__ring_queue *q,
                     uint64_t need)
{
    int rc;

    if (q->cap - (q->pos - q->peer) >= need)
        return 0;
    if ((rc = refresh_head(r, q)) != 0)
        return rc;
    if (q->cap - (q->pos - q->peer) >= need)
        return 0;
    r->stats.full++;
    return GOBLIN_EAGAIN;
}


/* Producer: the filler to put before a record of size bytes at off. One
 * that would cross the end always wraps. At each RING_WINDOW edge the
 * producer also wraps early if the consumer has released everything (it
 * re-reads the head once per edge if its copy says otherwise): a
 * ping-pong then keeps reusing a few hot lines instead of walking the
 * whole ring through cold ones, while a backlog still gets all of it. */
static uint64_t filler_before(goblin_ring *r, struct goblin__ring_queue *q,
                              uint64_t off, uint64_t size)
{
    uint64_t skip = q->cap - off;

    if (skip < size)
        return skip;
    if (!at_window_edge(off, size) || skip + size > q->cap)
        return 0;                   /* no edge, or a wrap would not fit */
    if (q->peer != q->pos && (refresh_head(r, q) != 0 || q->peer != q->pos))
        return 0;
    return skip;
}

/* Writes the header of the record at pos. Its stamp waits for flush if it
 * is the first unpublished record: that one release publishes them all. */
static void write_header(struct goblin__ring_queue *q, uint64_t pos,
                         uint32_t len, uint32_t flags)
{
    unsigned char *p = q->data + (pos & (q->cap - 1));
    uint64_t word = (uint64_t)flags << 32 | len;

    memcpy(p + 8, &word, 8);
    if (pos != q->published)
        atomic_store_explicit(goblin__ring_stamp(q, pos), pos ^ q->key,
                              memory_order_relaxed);
}

/* The general reservation: a filler first, a full ring, errors. Kept out
 * of line so the usual case below needs no saved registers. */
static __attribute__((noinline)) int reserve_slow(goblin_ring *r,
                                                  uint32_t len, void **buf)
{
    struct goblin__ring_queue *q = &r->tx;
    uint64_t size = rec_size(len), off = q->pos & (q->cap - 1), skip;
    int rc;

    if (r->err != 0)
        return r->err;
    if (len > q->max_len || buf == NULL)
        return GOBLIN_EINVAL;
    skip = filler_before(r, q, off, size);
    if (r->err != 0)
        return r->err;
    rc = make_room(r, q, skip + size);
    if (rc != 0)
        return rc;
    q->res_skip = skip;
    q->res_len = len;
    q->reserved = true;
    *buf = q->data + ((q->pos + skip) & (q->cap - 1)) + RING_REC_HDR;
    return 0;
}

int goblin_ring_reserve(goblin_ring *r, uint32_t len, void **buf)
{                                                 /* producer side */
    struct goblin__ring_queue *q = &r->tx;
    uint64_t size = rec_size(len), off = q->pos & (q->cap - 1);

    /* One pass for the usual case: no filler, no window edge, room by the
     * cached head (the same conditions as publish's fast path). */
    if (r->err == 0 && len <= q->max_len && buf != NULL &&
        off + size <= q->cap && !at_window_edge(off, size) &&
        q->cap - (q->pos - q->peer) >= size) {
        q->res_skip = 0;
        q->res_len = len;
        q->reserved = true;
        *buf = q->data + off + RING_REC_HDR;
        return 0;
    }
    return reserve_slow(r, len, buf);
}

int goblin_ring_commit(goblin_ring *r, uint32_t len)
{                                                 /* producer side */
    struct goblin__ring_queue *q = &r->tx;

    if (!q->reserved || len > q->res_len)
        return GOBLIN_EINVAL;
    if (q->res_skip != 0) {
        write_header(q, q->pos, 0, RING_FLAG_FILLER);
        q->pos += q->res_skip;
    }
    write_header(q, q->pos, len, RING_FLAG_DATA);
    q->pos += rec_size(len);
    q->reserved = false;
    return 0;
}

void goblin_ring_flush(goblin_ring *r)
{                                                 /* producer side */
    goblin__ring_flush_fast(r);
}

/* The general path: wraps, full rings, pending commits, errors. */
static int publish_slow(goblin_ring *r, const void *msg, uint32_t len)
{
    void *buf;
    int rc = goblin_ring_reserve(r, len, &buf);

    if (rc != 0)
        return rc;
    if (len > 0)
        memcpy(buf, msg, len);
    goblin_ring_commit(r, len);
    goblin_ring_flush(r);
    return 0;
}

int goblin_ring_publish(goblin_ring *r, const void *msg, uint32_t len)
{                                                 /* producer side */
    struct goblin__ring_queue *q = &r->tx;
    uint64_t off = q->pos & (q->cap - 1), size = rec_size(len);
    unsigned char *p = q->data + off;
    uint64_t word = len;                /* flags RING_FLAG_DATA = 0 */

    if (r->err != 0 || len > q->max_len || off + size > q->cap ||
        at_window_edge(off, size) ||
        q->cap - (q->pos - q->peer) < size || q->pos != q->published)
        return publish_slow(r, msg, len);   /* a filler, full, or more */
    q->reserved = false;
    memcpy(p + 8, &word, 8);
    if (len > 0)
        memcpy(p + RING_REC_HDR, msg, len);
    q->pos += size;
    goblin__ring_flush_fast(r);
    return 0;
}

int goblin_ring_publish_batch(goblin_ring *r, const struct goblin_slice *msgs,
                              unsigned n)
{                                                 /* producer side */
    unsigned i;
    void *buf;
    int rc = 0;

    for (i = 0; i < n; i++) {
        if (msgs[i].len > UINT32_MAX) {
            rc = GOBLIN_EINVAL;
            break;
        }
        rc = goblin_ring_reserve(r, (uint32_t)msgs[i].len, &buf);
        if (rc != 0)
            break;
        if (msgs[i].len > 0)
            memcpy(buf, msgs[i].ptr, msgs[i].len);
        goblin_ring_commit(r, (uint32_t)msgs[i].len);
    }
    goblin_ring_flush(r);
    return i > 0 ? (int)i : rc;
}

/* Consumer: skips a filler at off. It has no length, is never at offset
 * 0 (that would skip a whole lap), and leaves room for the record after
 * it without overrunning what we have not released. */
static int skip_filler(goblin_ring *r, struct goblin__ring_queue *q,
                       uint64_t off, uint32_t len)
{
    uint64_t skip = q->cap - off;

    if (len != 0 || off == 0 || q->pos + skip - q->released >= q->cap)
        return goblin__ring_fail(r);
    q->pos += skip;
    return 0;
}

static int queue_peek(goblin_ring *r, struct goblin__ring_queue *q,
                      struct goblin_slice *rec);

/* Consumer: the record at q->pos is not plain data that fits: skip a
 * legal filler and look again, or fail the ring. */
static int peek_odd(goblin_ring *r, struct goblin__ring_queue *q,
                    struct goblin_slice *rec, uint64_t word)
{
    uint64_t off = q->pos & (q->cap - 1);
    int rc;

    if ((word >> 32) != RING_FLAG_FILLER)
        return goblin__ring_fail(r);        /* bad length, flags or end */
    if ((rc = skip_filler(r, q, off, (uint32_t)word)) != 0)
        return rc;
    return queue_peek(r, q, rec);           /* at offset 0: no filler */
}

/* Consumer: the next record of q, in place. */
static inline int queue_peek(goblin_ring *r, struct goblin__ring_queue *q,
                             struct goblin_slice *rec)
{
    uint64_t word;
    int rc = goblin__ring_queue_peek_plain(q, rec);

    if (rc >= 0)
        return rc ? GOBLIN_RING_RECORD : 0;
    memcpy(&word, q->data + (q->pos & (q->cap - 1)) + 8, 8);
    return peek_odd(r, q, rec, word);   /* crosses the end, overran */
}

/* Client: the next record set aside by goblin_ring_drain. Entries are
 * [u32 length][u32 0][payload padded to 8]. */
static int acc_peek(goblin_ring *r, struct goblin_slice *rec)
{
    uint32_t len;

    memcpy(&len, r->acc + r->acc_pos, 4);
    rec->ptr = r->acc + r->acc_pos + 8;
    rec->len = len;
    r->acc_pos += 8 + (((size_t)len + 7) & ~(size_t)7);
    return GOBLIN_RING_RECORD;
}

static int next_record(goblin_ring *r, struct goblin_slice *rec)
{
    if (r->acc_pos < r->acc_len)
        return acc_peek(r, rec);
    return queue_peek(r, &r->rx, rec);
}

/* Server: whether peek and poll may look at SQ before the session check.
 * Without a client yet, or with the ring failed, the check comes first:
 * it alone can change the answer. */
static bool sync_first(const goblin_ring *r)
{
    return r->epoch == 0 || r->err != 0;
}

/* A server's peek and poll load the next stamp first and the client's
 * epoch after it, so the load a spinning server waits on comes first and
 * the epoch check runs beside it rather than ahead of it. A moved epoch
 * still wins: the reset moves the cursor back over whatever was found,
 * and no record of the old session is returned. A server has no drain
 * buffer. */
static int server_peek(goblin_ring *r, struct goblin_slice *rec)
{
    int rc, s;

    if (sync_first(r)) {
        if ((rc = goblin__ring_sync(r)) != 0)
            return rc;
        if (r->epoch == 0)
            return 0;                       /* no client yet */
        if (r->err != 0)
            return r->err;
    }
    rc = queue_peek(r, &r->rx, rec);
    if ((s = goblin__ring_sync(r)) != 0)
        return s;
    return rc;
}

int goblin_ring_peek(goblin_ring *r, struct goblin_slice *rec)
{                                                 /* consumer side */
    if (r->server)
        return server_peek(r, rec);
    if (r->err != 0)
        return r->err;
    if (r->acc_pos < r->acc_len)
        return acc_peek(r, rec);
    return queue_peek(r, &r->rx, rec);
}

int goblin_ring_poll(goblin_ring *r, struct goblin_slice *recs, unsigned max)
{                                                 /* consumer side */
    unsigned n = 0;
    int rc = 0, s;

    if (max > 65536 || (recs == NULL && max > 0))
        return GOBLIN_EINVAL;
    if (r->server && sync_first(r) && (rc = goblin__ring_sync(r)) != 0)
        return rc;
    if (r->err != 0)
        return r->err;
    if (r->server && r->epoch == 0)
        return 0;                           /* no client yet */
    while (n < max) {
        rc = next_record(r, &recs[n]);
        if (rc <= 0)
            break;
        n++;
    }
    if (r->server && (s = goblin__ring_sync(r)) != 0)
        return s;
    return n > 0 ? (int)n : rc;
}

void goblin_ring_release(goblin_ring *r)
{                                                 /* consumer side */
    struct goblin__ring_queue *q = &r->rx;

    r->acc_head = r->acc_pos;
    if (r->acc_head == r->acc_len)
        r->acc_head = r->acc_pos = r->acc_len = 0;
    if (q->pos == q->released)
        return;
    q->released = q->pos;
    /* Our reads of the released records happen before the producer may
     * overwrite them. */
    atomic_store_explicit(q->head_w, q->pos, memory_order_release);
}

/* Client: grows the drain buffer to hold at least need bytes. */
static int grow_acc(goblin_ring *r, size_t need)
{
    size_t cap = r->acc_cap > 0 ? r->acc_cap : 4096;
    unsigned char *p;

    while (cap < need)
        cap *= 2;
    if (cap > r->cfg.drain_limit)
        cap = r->cfg.drain_limit;
    p = goblin__ring_realloc(&r->alloc, r->acc, r->acc_cap, cap);
    if (p == NULL)
        return GOBLIN_ENOMEM;
    r->acc = p;
    r->acc_cap = cap;
    return 0;
}

/* Client: copies the ready CQ records into the drain buffer. */
static int drain_some(goblin_ring *r, int *moved)
{
    struct goblin_slice rec;
    uint64_t at;
    size_t need;
    int rc;

    for (;;) {
        at = r->rx.pos;
        rc = queue_peek(r, &r->rx, &rec);
        if (rc <= 0)
            return rc;
        need = 8 + ((rec.len + 7) & ~(size_t)7);
        if (r->acc_len + need > r->cfg.drain_limit)
            rc = GOBLIN_ELIMIT;
        else if (r->acc_len + need > r->acc_cap)
            rc = grow_acc(r, r->acc_len + need);
        else
            rc = 0;
        if (rc != 0) {
            r->rx.pos = at;                 /* leave it in the ring */
            return rc;
        }
        memcpy(r->acc + r->acc_len, &(uint32_t){(uint32_t)rec.len}, 4);
        memset(r->acc + r->acc_len + 4, 0, 4);
        memcpy(r->acc + r->acc_len + 8, rec.ptr, rec.len);
        r->acc_len += need;
        (*moved)++;
    }
}

int goblin_ring_drain(goblin_ring *r)
{                                                 /* client side */
    int moved = 0, rc;

    if (r->server)
        return GOBLIN_EINVAL;
    if (r->err != 0)
        return r->err;
    if (r->rx.pos != r->rx.released || r->acc_pos != r->acc_head)
        return 0;                           /* the caller holds records */
    if (r->acc_head > 0) {
        memmove(r->acc, r->acc + r->acc_head, r->acc_len - r->acc_head);
        r->acc_len -= r->acc_head;
        r->acc_pos = r->acc_head = 0;
    }
    rc = drain_some(r, &moved);
    r->acc_pos = r->acc_head;   /* drained records are not peeked yet */
    goblin_ring_release(r);
    r->stats.drained += (uint64_t)moved;
    return moved > 0 || rc >= 0 ? moved : rc;
}

uint32_t goblin_ring_max_record(const goblin_ring *r)
{                                                 /* both sides */
    return r->tx.max_len;
}

void goblin_ring_get_stats(const goblin_ring *r, struct goblin_ring_stats *out)
{                                                 /* both sides */
    *out = r->stats;
}
