/* session.c - the epoch handshake that starts a client session, the
 * server's side of it, the client's check that its server still exists,
 * and the test hooks.
 *
 * Handshake: the client stores its flags, bumps epoch (seq_cst, then wakes
 * a sleeping server) and waits until epoch_ack equals it. The server, on
 * its next peek/poll/wait, sees the new epoch and resets the session
 * before anything queued is parsed: sq_head = sq_tail (the old client's
 * half-sent requests are discarded), cq_tail = cq_head (unread replies
 * are dropped), a fresh random session key (so no stamp written before
 * can match), then releases epoch_ack. The client is spinning on the ack
 * meanwhile and writes nothing, so the server may move both indices; the
 * client reads all four and the key after the ack. cq_tail moves
 * backwards here, so a consumer caches the producer's tail only within a
 * session.
 */
#include <errno.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ring_int.h"

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

uint64_t goblin__ring_new_key(uint64_t old)
{
    uint64_t k = 0;

    if (getrandom(&k, sizeof(k), GRND_NONBLOCK) != (ssize_t)sizeof(k))
        k = mix64((uint64_t)goblin__ring_now_ns() ^
                  ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&k);
    k ^= mix64(old);            /* never the previous key */
    return k != old ? k : ~k;
}

static int wait_ack(goblin_ring *r, uint64_t e, int64_t deadline)
{
    struct goblin__ring_hdr *h = r->hdr;
    int64_t start = goblin__ring_now_ns(), checked = start, now;
    unsigned spins = 0;

    /* Pairs with the server's release of epoch_ack: its index resets are
     * visible once the ack is. */
    while (atomic_load_explicit(&h->epoch_ack, memory_order_acquire) != e) {
        goblin__ring_relax();
        if (++spins % 64 != 0)
            continue;
        now = goblin__ring_now_ns();
        if (now - checked >= 10000000 || now >= deadline) {
            if (!goblin__ring_pid_alive(h->owner_pid))
                return GOBLIN_ECONNREFUSED;
            /* The server closed this file (to re-create it) before it saw
             * our epoch: no ack will come; open retries the path. */
            if (atomic_load_explicit(&h->magic, memory_order_acquire) !=
                RING_MAGIC)
                return GOBLIN_ECONNRESET;
            checked = now;
        }
        if (now >= deadline)
            return GOBLIN_ETIMEDOUT;
        if (r->cfg.idle != GOBLIN_RING_IDLE_SPIN &&
            now - start >= (int64_t)r->cfg.spin_ns)
            goblin__ring_nap(20000);
    }
    return 0;
}

/* Client, after the ack: picks up the four indices. */
static int client_queues(goblin_ring *r)
{
    struct goblin__ring_hdr *h = r->hdr;
    uint64_t st = atomic_load_explicit(&h->sq_tail, memory_order_relaxed);
    uint64_t sh = atomic_load_explicit(&h->sq_head, memory_order_acquire);
    uint64_t ch = atomic_load_explicit(&h->cq_head, memory_order_relaxed);
    uint64_t ct = atomic_load_explicit(&h->cq_tail, memory_order_acquire);
    uint64_t key;

    if (((st | sh | ch | ct) & (RING_LINE - 1)) != 0 ||
        st - sh > r->tx.cap || ct - ch > r->rx.cap)
        return GOBLIN_EPROTO;
    key = atomic_load_explicit(&h->session_key, memory_order_relaxed);
    goblin__ring_queue_reset(&r->tx, st, key);
    r->tx.peer = sh;
    r->tx.peer_sleeps = (h->server_flags & RING_SERVER_SLEEPS) != 0;
    goblin__ring_queue_reset(&r->rx, ch, key);
    r->err = 0;
    return 0;
}

/* The inode of this process's pid namespace, 0 when unknown: a server
 * in another namespace cannot judge our pid. */
static uint64_t pid_namespace(void)
{
    struct stat st;

    return stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

int goblin__ring_handshake(goblin_ring *r, int64_t deadline)
{                                                 /* client side */
    struct goblin__ring_hdr *h = r->hdr;
    uint32_t flags = r->cfg.idle == GOBLIN_RING_IDLE_BACKOFF
                         ? RING_CLIENT_SLEEPS : 0;
    uint64_t e;
    int rc;

    r->owner = h->owner_pid;
    atomic_store_explicit(&h->cq_sleep, 0, memory_order_relaxed);
    atomic_store_explicit(&h->client_flags, flags, memory_order_relaxed);
    atomic_store_explicit(&h->client_pid, (int32_t)getpid(),
                          memory_order_relaxed);
    atomic_store_explicit(&h->client_pidns, pid_namespace(),
                          memory_order_relaxed);
    e = atomic_load_explicit(&h->epoch, memory_order_relaxed) + 1;
    /* seq_cst: a server asleep on SQ re-checks the epoch (wait.c). */
    atomic_store_explicit(&h->epoch, e, memory_order_seq_cst);
    if (atomic_load_explicit(&h->sq_sleep, memory_order_seq_cst) != 0)
        goblin__ring_wake(r, &h->sq_sleep);
    rc = wait_ack(r, e, deadline);
    if (rc != 0)
        return rc;
    r->epoch = e;
    return client_queues(r);
}

/* The client's words are untrusted: misaligned ones fail the ring (the
 * session is still acknowledged, so the client learns by timeouts). */
int goblin__ring_new_session(goblin_ring *r, uint64_t e)
{
    struct goblin__ring_hdr *h = r->hdr;
    uint64_t t = atomic_load_explicit(&h->sq_tail, memory_order_acquire);
    uint64_t c = atomic_load_explicit(&h->cq_head, memory_order_acquire);
    uint32_t f = atomic_load_explicit(&h->client_flags,
                                      memory_order_relaxed);
    uint64_t key = goblin__ring_new_key(r->rx.key);
    int32_t pid = atomic_load_explicit(&h->client_pid, memory_order_relaxed);
    uint64_t ns = atomic_load_explicit(&h->client_pidns,
                                       memory_order_relaxed);

    goblin__ring_queue_reset(&r->rx, t, key);
    goblin__ring_queue_reset(&r->tx, c, key);
    atomic_store_explicit(&h->session_key, key, memory_order_relaxed);
    r->tx.peer_sleeps = (f & RING_CLIENT_SLEEPS) != 0;
    r->err = ((t | c) & (RING_LINE - 1)) != 0 ? GOBLIN_EPROTO : 0;
    atomic_store_explicit(&h->sq_head, t, memory_order_relaxed);
    atomic_store_explicit(&h->cq_tail, c, memory_order_relaxed);
    /* A pid is only judged when the client shares our pid namespace. */
    r->peer_pid = pid > 0 && ns != 0 && ns == pid_namespace() ? pid : 0;
    r->epoch = e;
    r->stats.sessions++;
    atomic_store_explicit(&h->epoch_ack, e, memory_order_release);
    return GOBLIN_RING_SESSION;
}

int goblin_ring_check(goblin_ring *r)
{                                                 /* client side */
    struct goblin__ring_hdr *h = r->hdr;

    if (r->server)
        return 0;
    if (atomic_load_explicit(&h->magic, memory_order_acquire) != RING_MAGIC ||
        h->owner_pid != r->owner || !goblin__ring_pid_alive(r->owner))
        return GOBLIN_ECONNRESET;
    return 0;
}

int goblin_ring_client_alive(const goblin_ring *r)
{                                                 /* server side */
    if (!r->server)
        return GOBLIN_EINVAL;
    /* A new client handshaking replaces this one's session anyway. */
    if (r->epoch == 0 || r->peer_pid == 0 ||
        atomic_load_explicit(&r->hdr->epoch, memory_order_acquire) !=
            r->epoch ||
        goblin__ring_pid_alive(r->peer_pid))
        return 0;
    return GOBLIN_ECONNRESET;
}

int goblin__ring_set_base(goblin_ring *srv, uint64_t base)
{                                                 /* server side */
    struct goblin__ring_hdr *h = srv->hdr;

    if (!srv->server || (base & (RING_LINE - 1)) != 0)
        return GOBLIN_EINVAL;
    atomic_store_explicit(&h->sq_head, base, memory_order_relaxed);
    atomic_store_explicit(&h->sq_tail, base, memory_order_relaxed);
    atomic_store_explicit(&h->cq_head, base, memory_order_relaxed);
    atomic_store_explicit(&h->cq_tail, base, memory_order_release);
    goblin__ring_queue_reset(&srv->rx, base, srv->rx.key);
    goblin__ring_queue_reset(&srv->tx, base, srv->tx.key);
    return 0;
}
