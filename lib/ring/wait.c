/* wait.c - how a side waits for its peer: the idle strategies (spin with
 * the relax hint; or spin, then sleep on the header's futex word), the
 * waker's side of the futex, and the client's send with backpressure.
 *
 * Sleeping without lost wake-ups: the consumer stores 1 in its futex word
 * (seq_cst), re-checks its queue (seq_cst loads), and only then calls
 * FUTEX_WAIT(word, 1). A producer that may have a sleeping peer stores its
 * tail seq_cst and loads the word seq_cst; if it reads 1 it stores 0 and
 * calls FUTEX_WAKE. In the single total order of seq_cst operations,
 * either the re-check follows the tail store (and sees the record) or the
 * producer's load follows the announcement (and wakes); a wake that comes
 * before FUTEX_WAIT finds the word already 0 and FUTEX_WAIT returns at
 * once. So a busy ring makes no system calls and an idle one sleeps.
 *
 * Clock reads cost a large share of a sub-microsecond trip: spin loops
 * read the clock only every 64 iterations. They poll only the next stamp:
 * the producer's tail line is read only by a single check (timeout 0)
 * and before sleeping, since reading it while waiting pulls a line the
 * producer writes on every publish.
 */
#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ring_int.h"

#define CLOCK_EVERY 64               /* spins between clock reads */
#define LIVENESS_NS 10000000         /* client checks its server: 10 ms */
#define NAP_NS 20000                 /* producer waiting for room */

int64_t goblin__ring_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void goblin__ring_nap(int64_t ns)
{
    struct timespec ts = {ns / 1000000000, ns % 1000000000};

    nanosleep(&ts, NULL);
}

bool goblin__ring_pid_alive(int32_t pid)
{
    return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

static long futex(_Atomic uint32_t *w, int op, uint32_t val,
                  const struct timespec *ts)
{
    /* Not FUTEX_PRIVATE_FLAG: the word is shared between processes. */
    return syscall(SYS_futex, (uint32_t *)w, op, val, ts, NULL, 0);
}

void goblin__ring_wake(goblin_ring *r, _Atomic uint32_t *w)
{
    atomic_store_explicit(w, 0, memory_order_relaxed);
    futex(w, FUTEX_WAKE, 1, NULL);
    r->stats.wakes++;
}

/* Consumer, wait path: reads the producer's tail (seq_cst, for the
 * sleeper's re-check). A tail ahead of pos means a record is there (its
 * stamp was stored before the tail); one at or behind pos is a producer
 * that published a batch and has not stored its tail yet. A tail past
 * what may be in use, more than a lap behind, misaligned, or ahead with
 * no record at pos fails the ring. */
static bool tail_says_ready(goblin_ring *r, struct goblin__ring_queue *q)
{
    uint64_t t = atomic_load_explicit(q->tail_w, memory_order_seq_cst);

    q->peer = t;
    if ((t & (RING_LINE - 1)) != 0) {
        goblin__ring_fail(r);
        return true;
    }
    if (t - q->pos > q->released + q->cap - q->pos) {   /* not ahead */
        if (q->pos - t <= q->cap)
            return false;
        goblin__ring_fail(r);
        return true;
    }
    if (t == q->pos)
        return false;
    if (atomic_load_explicit(goblin__ring_stamp(q, q->pos),
                             memory_order_acquire) != (q->pos ^ q->key))
        goblin__ring_fail(r);
    return true;
}

bool goblin__ring_ready(goblin_ring *r, bool check_tail)
{
    struct goblin__ring_queue *q = &r->rx;
    memory_order mo = check_tail ? memory_order_seq_cst
                                 : memory_order_acquire;

    if (r->err != 0 || r->acc_pos < r->acc_len)
        return true;
    /* The stamp first, as in peek (queue.c). Without a client a match is
     * harmless: peek then answers 0. */
    if (atomic_load_explicit(goblin__ring_stamp(q, q->pos),
                             memory_order_acquire) == (q->pos ^ q->key))
        return true;
    if (r->server && atomic_load_explicit(&r->nudged, mo))
        return true;
    if (r->server) {
        if (atomic_load_explicit(&r->hdr->epoch, mo) != r->epoch)
            return true;
        if (r->epoch == 0)
            return false;                   /* no client yet */
    }
    return check_tail && tail_says_ready(r, q);
}

/* The nudge and the sleeper's announcement are both seq_cst, as a
 * client's publish is (see the top of this file): either the sleeper's
 * re-check sees the nudge, or the nudger sees the announcement and wakes
 * the word. The waker's statistics are not touched: they belong to the
 * server thread. */
void goblin__ring_nudge(goblin_ring *r)
{
    _Atomic uint32_t *w = r->rx.sleep_w;

    atomic_store_explicit(&r->nudged, true, memory_order_seq_cst);
    if (atomic_load_explicit(w, memory_order_seq_cst) != 0) {
        atomic_store_explicit(w, 0, memory_order_relaxed);
        futex(w, FUTEX_WAKE, 1, NULL);
    }
}

bool goblin__ring_nudge_take(goblin_ring *r)
{
    return atomic_load_explicit(&r->nudged, memory_order_relaxed) &&
           atomic_exchange_explicit(&r->nudged, false, memory_order_acquire);
}

/* Announces sleep, re-checks, sleeps until woken or the slice ends. */
static void sleep_once(goblin_ring *r, int64_t deadline, int64_t now)
{
    _Atomic uint32_t *w = r->rx.sleep_w;
    int64_t ns = r->sleep_slice_ns;
    struct timespec ts;

    if (deadline >= 0 && deadline - now < ns)
        ns = deadline - now;
    atomic_store_explicit(w, 1, memory_order_seq_cst);
    if (!goblin__ring_ready(r, true) &&
        (r->server || atomic_load_explicit(&r->hdr->magic,
                                           memory_order_seq_cst) ==
                          RING_MAGIC)) {
        ts.tv_sec = ns / 1000000000;
        ts.tv_nsec = ns % 1000000000;
        r->stats.sleeps++;
        futex(w, FUTEX_WAIT, 1, &ts);
    }
    atomic_store_explicit(w, 0, memory_order_relaxed);
}

/* What a wait that found nothing returns: the client first makes sure
 * its server still exists. */
static int give_up(goblin_ring *r)
{
    if (!r->server && goblin_ring_check(r) != 0)
        return GOBLIN_ECONNRESET;
    return GOBLIN_ETIMEDOUT;
}

/* Client: true once its server closed the file (magic gone: one shared
 * load) or, checked every LIVENESS_NS, died or was replaced. */
static bool server_gone(goblin_ring *r, int64_t now, int64_t *checked)
{
    if (r->server)
        return false;
    if (atomic_load_explicit(&r->hdr->magic, memory_order_acquire) !=
        RING_MAGIC)
        return true;
    if (now - *checked < LIVENESS_NS)
        return false;
    *checked = now;
    return goblin_ring_check(r) != 0;
}

int goblin_ring_wait(goblin_ring *r, int64_t timeout_ns)
{                                                 /* consumer side */
    int64_t start, now, deadline, checked;
    unsigned spins = 0;

    /* A single check reads the tail too; a longer wait reads it only
     * before sleeping (see the top of this file). */
    if (goblin__ring_ready(r, timeout_ns == 0))
        return 1;
    if (timeout_ns == 0)
        return GOBLIN_ETIMEDOUT;
    start = checked = goblin__ring_now_ns();
    deadline = timeout_ns < 0 ? -1 : start + timeout_ns;
    for (;;) {
        if (goblin__ring_ready(r, false))
            return 1;
        goblin__ring_relax();
        if (++spins % CLOCK_EVERY != 0)
            continue;
        now = goblin__ring_now_ns();
        if (deadline >= 0 && now >= deadline)
            return give_up(r);
        if (server_gone(r, now, &checked))
            return GOBLIN_ECONNRESET;
        if (r->cfg.idle == GOBLIN_RING_IDLE_BACKOFF &&
            now - start >= (int64_t)r->cfg.spin_ns)
            sleep_once(r, deadline, now);
    }
}

int goblin_ring_send(goblin_ring *r, const void *msg, uint32_t len,
                     int64_t timeout_ns)
{                                                 /* client side */
    int64_t start = 0, now, checked = 0;
    unsigned spins = 0;
    int rc;

    if (r->server)
        return GOBLIN_EINVAL;
    while ((rc = goblin_ring_publish(r, msg, len)) == GOBLIN_EAGAIN) {
        /* Make room in CQ so a server blocked on it can consume SQ. */
        rc = goblin_ring_drain(r);
        if (rc < 0 && rc != GOBLIN_ELIMIT)
            return rc;
        if (rc > 0)
            continue;
        goblin__ring_relax();
        if (++spins % CLOCK_EVERY != 1)
            continue;
        now = goblin__ring_now_ns();
        if (start == 0)
            start = checked = now;
        if (timeout_ns >= 0 && now - start >= timeout_ns)
            return give_up(r);
        if (server_gone(r, now, &checked))
            return GOBLIN_ECONNRESET;
        if (r->cfg.idle == GOBLIN_RING_IDLE_BACKOFF &&
            now - start >= (int64_t)r->cfg.spin_ns)
            goblin__ring_nap(NAP_NS);
    }
    return rc;
}
