/* ring_poll.c - goblind's shared-memory ring endpoints (--ring PATH SIZE)
 * and the polling threads that serve them. Each endpoint is a libgoblin
 * ring endpoint (goblin/serve.h): a ring file and the session of its
 * client; this file only decides which thread serves which ring, when,
 * and how it waits.
 *
 * Threads: one per CPU given to --ring-cpus (pinned there), or one
 * unpinned thread without it. Ring i belongs to thread i mod threads. A
 * thread serves its rings in --ring order, which is their priority: it
 * looks at them from the first, does one step (a batch) of the first ring
 * that has work, then starts again from the first. When none has work it
 * waits on all of them at once (goblin_ring_wait_any): spinning, or in
 * backoff mode spinning for ring-spin-us and then sleeping on every
 * ring's futex word with one system call.
 *
 * Locking (docs/threading.md): the engine, its sessions and the store
 * belong to whoever holds the engine lock (goblind_lock); endpoints take
 * it only around their calls into the engine, never while waiting.
 */
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "ring_poll.h"

#define WAIT_NS 100000000    /* idle threads look at stop this often */
#define CHORES_NS 100000000  /* dead clients, kills, failed re-creation */
#define CHORES_EVERY 4096    /* busy loop turns between clock reads */
#define FULL_NAP_NS 50000    /* backoff, CQ full: first nap, doubling */
#define FULL_NAP_MAX 1000000 /* ... up to 1 ms */

static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;

void goblind_lock(void)
{
    pthread_mutex_lock(&engine_lock);
}

void goblind_unlock(void)
{
    pthread_mutex_unlock(&engine_lock);
}

static void lock_cb(void *ctx)
{
    (void)ctx;
    goblind_lock();
}

static void unlock_cb(void *ctx)
{
    (void)ctx;
    goblind_unlock();
}

static int64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

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
static int idle_wait(struct ring_poller *p, int64_t *full_since, int64_t *nap)
{
    struct goblind_rings *rs = p->g->rings;
    bool full = false;
    int64_t timeout = WAIT_NS, now;
    unsigned n = 0;

    for (int i = 0; i < p->n; i++) {
        goblin_ring *r = goblin_ring_endpoint_ring(p->eps[i]->ep);

        if (r != NULL)
            p->wait[n++] = r;
        full = full || goblin_ring_endpoint_full(p->eps[i]->ep);
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
        return goblin_ring_wait_any(p->wait, n, timeout);
    if (timeout > 0)
        nanosleep(&(struct timespec){0, timeout}, NULL);
    return GOBLIN_ETIMEDOUT;
}

static void *poller_main(void *arg)
{
    struct ring_poller *p = arg;
    struct goblind_rings *rs = p->g->rings;
    int64_t full_since = 0, nap = 0, chores_at = now_ns() + CHORES_NS;
    unsigned turns = 0;

    pin(p);
    while (!atomic_load_explicit(&rs->stop, memory_order_relaxed)) {
        bool timed_out;
        int i = 0;

        while (i < p->n && goblin_ring_endpoint_step(p->eps[i]->ep) == 0)
            i++;                         /* the first ring with work */
        /* The clock is read only after a wait that timed out or every
         * CHORES_EVERY turns: not between a request's arrival and its
         * service. */
        timed_out = i == p->n && idle_wait(p, &full_since, &nap) < 0;
        if (!timed_out && ++turns % CHORES_EVERY != 0)
            continue;
        if (now_ns() >= chores_at) {
            for (int k = 0; k < p->n; k++)
                goblin_ring_endpoint_chores(p->eps[k]->ep);
            chores_at = now_ns() + CHORES_NS;
        }
    }
    return NULL;
}

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

static int open_endpoint(struct goblind *g, struct ring_ep *e)
{
    struct goblind_rings *rs = g->rings;
    struct goblin_ring_endpoint_config cfg = {0};

    cfg.engine = g->engine;
    cfg.path = e->path;
    cfg.ring.sq_size = cfg.ring.cq_size = e->size;
    cfg.ring.mode = (unsigned)rs->perm;
    cfg.ring.idle = (int)rs->idle;
    cfg.ring.spin_ns = rs->spin_us > 0 ? (uint64_t)rs->spin_us * 1000 : 1;
    cfg.no_sbe = !g->sbe_ring;
    cfg.lock = lock_cb;
    cfg.unlock = unlock_cb;
    cfg.log = goblind_engine_log;
    cfg.log_ctx = g;
    return goblin_ring_endpoint_open(&cfg, &e->ep);
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
        if (open_endpoint(g, &rs->v[i]) < 0)
            return -1;                   /* the endpoint logged why */
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
        goblin_ring_endpoint_close(rs->v[i].ep);   /* removes the file */
        rs->v[i].ep = NULL;
    }
}

void goblind_ring_free(struct goblind *g)
{
    struct goblind_rings *rs = g->rings;

    if (rs == NULL)
        return;
    for (int i = 0; i < rs->n; i++)
        free(rs->v[i].path);
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
