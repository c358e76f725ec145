/* ring_poll.c - goblind's shared-memory ring endpoints (--ring PATH SIZE):
 * one ring file per endpoint (goblin/ring.h), one libgoblin session per
 * attached client, and the polling threads that serve them.
 *
 * Threads: one per CPU given to --ring-cpus (pinned there), or one
 * unpinned thread without it. Ring i belongs to thread i mod threads. A
 * thread serves its rings in --ring order, which is their priority: it
 * looks at them from the first, serves one batch of the first ring that
 * has work, then starts again from the first. When none has work it waits
 * on all of them at once (goblin_ring_wait_any): spinning, or in backoff
 * mode spinning for ring-spin-us and then sleeping on every ring's futex
 * word with one system call.
 *
 * Locking (docs/threading.md): the engine, its sessions and the store
 * belong to whoever holds the engine lock (goblind_lock). A ring thread
 * takes it only to feed a batch of SQ records to a session and copy the
 * replies into CQ, and to open or close a session; never while waiting.
 *
 * Per ring: SQ records are a byte stream into the session (RESP may span
 * records; an SBE client sends the magic, then one frame per record, and
 * the session's parser takes the same stream). Replies are copied into
 * CQ records of at most goblin_ring_max_record() bytes. When CQ is full
 * the rest stays in the session output and the ring runs no more requests
 * until CQ has room (the thread serves its other rings meanwhile and never
 * blocks). It still peeks SQ, without releasing (the client's SQ fills
 * up: backpressure), only to notice a new client epoch; those held
 * records are fed once CQ has room, or dropped with the old session. A
 * new epoch replaces the session; a protocol violation (GOBLIN_EPROTO),
 * QUIT, CLIENT KILL or a client process that no longer exists closes the
 * session and re-creates the ring file, so only that ring's client sees
 * the connection reset.
 *
 * Invariants: e->s is NULL or the session of the current epoch; only the
 * ring's own thread touches e->r; e->s is touched only under the lock.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ring_poll.h"

#define WAIT_NS 100000000    /* idle threads look at stop this often */
#define CHORES_NS 100000000  /* dead clients, kills, failed re-creation */
#define CHORES_EVERY 4096    /* busy loop turns between clock reads */
#define BATCH 64             /* SQ records fed per lock hold */
#define FULL_NAP_NS 50000    /* backoff, CQ full: first nap, doubling */
#define FULL_NAP_MAX 1000000 /* ... up to 1 ms */
#define HELD_MAX 65537       /* records peeked while CQ is full, at most:
                              * all SQ can hold up to 4 MiB rings */

static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;

void goblind_lock(void)
{
    pthread_mutex_lock(&engine_lock);
}

void goblind_unlock(void)
{
    pthread_mutex_unlock(&engine_lock);
}

static int64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- one ring ---- */

static int ring_create(struct ring_ep *e)
{
    struct goblind_rings *rs = e->g->rings;
    struct goblin_ring_config cfg = {0};
    int rc;

    cfg.sq_size = cfg.cq_size = e->size;
    cfg.mode = (unsigned)rs->perm;
    cfg.idle = (int)rs->idle;
    cfg.spin_ns = rs->spin_us > 0 ? (uint64_t)rs->spin_us * 1000 : 1;
    e->nheld = 0;
    if (e->held == NULL) {          /* every record takes >= 64 bytes */
        e->held_cap = (size_t)(goblin_ring_capacity(e->size) / 64) + 1;
        e->held_cap = e->held_cap < HELD_MAX ? e->held_cap : HELD_MAX;
        e->held = calloc(e->held_cap, sizeof(*e->held));
        if (e->held == NULL)
            return GOBLIN_ENOMEM;
    }
    rc = goblin_ring_create(e->path, &cfg, &e->r);
    if (rc < 0)
        goblind_log(e->g, GOBLIN_LOG_WARNING, "Can't create ring %s: %s",
                    e->path, goblin_strerror(rc));
    return rc;
}

/* Under the lock: closes the session of the last client, if any. */
static void session_end(struct ring_ep *e)
{
    goblin_session_close(e->s);
    e->s = NULL;
    e->pending = 0;
    e->closing = false;
}

/* A new client attached (new epoch): a fresh session. */
static void session_begin(struct ring_ep *e)
{
    struct goblin_session_info info = {GOBLIN_TRANSPORT_RING, e->path,
                                       e->path, -1, NULL};
    int rc;

    goblind_lock();
    session_end(e);
    e->nheld = 0;
    rc = goblin_session_open(e->g->engine, &info, &e->s);
    if (rc == 0 && !e->g->sbe_ring)
        rc = goblin_session_no_sbe(e->s);
    goblind_unlock();
    if (rc < 0)
        goblind_log(e->g, GOBLIN_LOG_WARNING, "Ring %s: can't open a "
                    "session: %s", e->path, goblin_strerror(rc));
    else
        goblind_log(e->g, GOBLIN_LOG_VERBOSE, "Ring client attached to %s",
                    e->path);
}

/* Drops the client: closes its session and replaces the ring file, so
 * the client sees GOBLIN_ECONNRESET and others are untouched. */
static void ring_reset(struct ring_ep *e)
{
    goblind_lock();
    session_end(e);
    goblind_unlock();
    goblin_ring_close(e->r);
    e->r = NULL;
    ring_create(e);
}

static void broken(struct ring_ep *e)
{
    goblind_log(e->g, GOBLIN_LOG_WARNING, "Ring %s: the client broke the "
                "ring protocol (bad index, length or record); resetting the "
                "ring", e->path);
    ring_reset(e);
}

/* Under the lock: copies the session's output into CQ records, as much
 * as fits, with one flush. Leaves in e->pending what did not fit. */
static void output_to_cq(struct ring_ep *e)
{
    size_t len, done = 0;
    const char *out = goblin_session_output(e->s, &len);
    uint32_t max = goblin_ring_max_record(e->r);

    while (done < len) {
        uint32_t k = len - done < max ? (uint32_t)(len - done) : max;
        void *buf;

        if (goblin_ring_reserve(e->r, k, &buf) < 0)
            break;
        memcpy(buf, out + done, k);
        goblin_ring_commit(e->r, k);
        done += k;
    }
    if (done > 0) {
        goblin_ring_flush(e->r);
        goblin_session_output_consume(e->s, done);
    }
    e->pending = len - done;
    e->closing = e->closing || goblin_session_should_close(e->s);
}

/* Feeds n records to the session, releases them, collects the replies. */
static void feed(struct ring_ep *e, const struct goblin_slice *recs, int n)
{
    goblind_lock();
    for (int i = 0; i < n && e->s != NULL && !e->closing; i++)
        if (recs[i].len > 0 &&
            goblin_session_feed(e->s, recs[i].ptr, recs[i].len) < 0)
            e->closing = true;
    goblin_ring_release(e->r);
    if (e->s != NULL)
        output_to_cq(e);
    goblind_unlock();
}

/* CQ was full: true once it has room for the next piece of output (no
 * lock needed to ask: a reservation that is not committed is nothing). */
static bool cq_has_room(struct ring_ep *e)
{
    uint32_t max = goblin_ring_max_record(e->r);
    void *buf;

    return goblin_ring_reserve(e->r, e->pending < max ? (uint32_t)e->pending
                                                      : max, &buf) == 0;
}

/* CQ full: peeks one more SQ record without executing it, to notice a
 * new epoch or a broken ring. True when something happened. */
static bool hold_next(struct ring_ep *e)
{
    struct goblin_slice rec;
    int rc;

    if (e->nheld >= e->held_cap)
        return false;
    rc = goblin_ring_peek(e->r, &rec);
    if (rc == GOBLIN_RING_RECORD)
        e->held[e->nheld++] = rec;
    else if (rc == GOBLIN_RING_SESSION)
        session_begin(e);
    else if (rc == GOBLIN_EPROTO)
        broken(e);
    return rc != 0;
}

/* One step of one ring: true when it did something. */
static bool ring_step(struct ring_ep *e)
{
    struct goblin_slice recs[BATCH];
    int n;

    if (e->r == NULL)
        return false;                    /* chores() re-creates it */
    if (e->pending > 0) {
        if (!cq_has_room(e))
            return hold_next(e);         /* CQ full: nothing runs */
        goblind_lock();
        if (e->s != NULL)
            output_to_cq(e);
        else
            e->pending = 0;
        goblind_unlock();
        return true;
    }
    if (e->nheld > 0) {
        feed(e, e->held, (int)e->nheld);
        e->nheld = 0;
        return true;
    }
    if (e->closing) {
        ring_reset(e);
        return true;
    }
    n = goblin_ring_poll(e->r, recs, BATCH);
    if (n == GOBLIN_RING_SESSION)
        session_begin(e);
    else if (n == GOBLIN_EPROTO)
        broken(e);
    else if (n > 0)
        feed(e, recs, n);
    return n != 0;
}

/* Slow checks, every CHORES_NS: a ring whose re-creation failed, a
 * session killed from elsewhere (CLIENT KILL), a client process that
 * exited without reconnecting. */
static void chores(struct ring_ep *e)
{
    bool killed;

    if (e->r == NULL) {
        ring_create(e);
        return;
    }
    goblind_lock();
    killed = e->s != NULL && goblin_session_should_close(e->s);
    goblind_unlock();
    if (!killed && e->s != NULL && goblin_ring_client_alive(e->r) != 0) {
        goblind_log(e->g, GOBLIN_LOG_VERBOSE, "Ring %s: its client exited; "
                    "closing the session", e->path);
        killed = true;
    }
    if (killed)
        ring_reset(e);
}

/* ---- a polling thread ---- */

static void pin(struct ring_poller *p)
{
    cpu_set_t set;

    pthread_setname_np(pthread_self(), "goblind-ring");
    if (p->cpu < 0)
        return;
    CPU_ZERO(&set);
    CPU_SET(p->cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
        goblind_log(p->g, GOBLIN_LOG_WARNING, "Can't pin a ring thread to "
                    "CPU %d", p->cpu);
}

/* Nothing to do on any ring: waits until one has work. A ring waiting
 * for CQ room has no wake-up of its own, so then the wait is short:
 * none in spin mode, naps from 50 us doubling to 1 ms in backoff mode
 * once ring-spin-us has passed. */
static void idle_wait(struct ring_poller *p, int64_t *full_since, int64_t *nap)
{
    struct goblind_rings *rs = p->g->rings;
    bool full = false;
    int64_t timeout = WAIT_NS, now;
    unsigned n = 0;

    for (int i = 0; i < p->n; i++) {
        if (p->eps[i]->r != NULL)
            p->wait[n++] = p->eps[i]->r;
        full = full || p->eps[i]->pending > 0;
    }
    if (full) {
        now = now_ns();
        if (*full_since == 0) {
            *full_since = now;
            *nap = FULL_NAP_NS;
        }
        if (rs->idle == GOBLIN_RING_IDLE_SPIN ||
            now - *full_since < rs->spin_us * 1000)
            timeout = 0;
        else {
            timeout = *nap;
            *nap = *nap * 2 < FULL_NAP_MAX ? *nap * 2 : FULL_NAP_MAX;
        }
    } else {
        *full_since = 0;
    }
    if (n > 0)
        goblin_ring_wait_any(p->wait, n, timeout);
    else if (timeout > 0)
        nanosleep(&(struct timespec){0, timeout}, NULL);
}

static void *poller_main(void *arg)
{
    struct ring_poller *p = arg;
    struct goblind_rings *rs = p->g->rings;
    int64_t full_since = 0, nap = 0, chores_at = now_ns() + CHORES_NS;
    unsigned turns = 0;

    pin(p);
    while (!atomic_load_explicit(&rs->stop, memory_order_relaxed)) {
        int i = 0;

        while (i < p->n && !ring_step(p->eps[i]))
            i++;                         /* the first ring with work */
        if (i == p->n)
            idle_wait(p, &full_since, &nap);
        if (i < p->n && ++turns % CHORES_EVERY != 0)
            continue;                    /* busy: the clock can wait */
        if (now_ns() >= chores_at) {
            for (int k = 0; k < p->n; k++)
                chores(p->eps[k]);
            chores_at = now_ns() + CHORES_NS;
        }
    }
    return NULL;
}

/* ---- start and stop ---- */

/* One poller per --ring-cpus CPU (at most one per ring), or one. */
static int make_pollers(struct goblind *g)
{
    struct goblind_rings *rs = g->rings;
    int np = rs->ncpus > 0 ? rs->ncpus : 1;

    np = np < rs->n ? np : rs->n;
    rs->pollers = calloc((size_t)np, sizeof(*rs->pollers));
    if (rs->pollers == NULL)
        return -1;
    rs->npollers = np;
    for (int t = 0; t < np; t++) {
        struct ring_poller *p = &rs->pollers[t];

        p->g = g;
        p->cpu = rs->ncpus > 0 ? rs->cpus[t] : -1;
        p->eps = calloc((size_t)rs->n, sizeof(*p->eps));
        p->wait = calloc((size_t)rs->n, sizeof(*p->wait));
        if (p->eps == NULL || p->wait == NULL)
            return -1;
    }
    for (int i = 0; i < rs->n; i++) {
        struct ring_poller *p = &rs->pollers[i % np];
        p->eps[p->n++] = &rs->v[i];
    }
    return 0;
}

int goblind_ring_start(struct goblind *g)
{
    struct goblind_rings *rs = g->rings;

    if (rs == NULL || rs->n == 0)
        return 0;
    if (rs->n > GOBLIN_RING_WAIT_MAX * (rs->ncpus > 0 ? rs->ncpus : 1)) {
        goblind_log(g, GOBLIN_LOG_WARNING, "Too many rings: at most %d per "
                    "ring thread", GOBLIN_RING_WAIT_MAX);
        return -1;
    }
    for (int i = 0; i < rs->n; i++) {
        rs->v[i].g = g;
        if (ring_create(&rs->v[i]) < 0)
            return -1;
        goblind_log(g, GOBLIN_LOG_NOTICE, "Ring ready at %s (%llu bytes "
                    "each way, %s)", rs->v[i].path,
                    (unsigned long long)goblin_ring_capacity(rs->v[i].size),
                    rs->idle == GOBLIN_RING_IDLE_SPIN ? "spin" : "backoff");
    }
    if (make_pollers(g) < 0) {
        goblind_log(g, GOBLIN_LOG_WARNING, "Can't start the ring threads: "
                    "out of memory");
        return -1;
    }
    for (int t = 0; t < rs->npollers; t++) {
        struct ring_poller *p = &rs->pollers[t];

        if (pthread_create(&p->th, NULL, poller_main, p) != 0) {
            goblind_log(g, GOBLIN_LOG_WARNING, "Can't start a ring thread");
            return -1;
        }
        p->started = true;
    }
    return 0;
}

void goblind_ring_stop(struct goblind *g)
{
    struct goblind_rings *rs = g->rings;

    if (rs == NULL)
        return;
    atomic_store(&rs->stop, true);
    for (int t = 0; t < rs->npollers; t++)
        if (rs->pollers[t].started) {
            pthread_join(rs->pollers[t].th, NULL);
            rs->pollers[t].started = false;
        }
    for (int i = 0; i < rs->n; i++) {
        session_end(&rs->v[i]);
        goblin_ring_close(rs->v[i].r);        /* unlinks the file */
        rs->v[i].r = NULL;
    }
}

void goblind_ring_free(struct goblind *g)
{
    struct goblind_rings *rs = g->rings;

    if (rs == NULL)
        return;
    for (int i = 0; i < rs->n; i++) {
        free(rs->v[i].path);
        free(rs->v[i].held);
    }
    for (int t = 0; t < rs->npollers; t++) {
        free(rs->pollers[t].eps);
        free(rs->pollers[t].wait);
    }
    free(rs->pollers);
    free(rs->v);
    free(rs->cpus_text);
    free(rs);
    g->rings = NULL;
}
