/* ring_poll.c - goblind's ring threads (--ring PATH SIZE): one per CPU
 * given to --ring-cpus (pinned there), or one unpinned thread without
 * it. Ring i belongs to thread i mod threads, and each thread runs the
 * library's ring poller (goblin/serve.h) over its rings in --ring order,
 * their priority; the endpoints take the engine lock (docs/threading.md).
 */
#include <sched.h>
#include <stdlib.h>

#include "ring_poll.h"

static void *poller_main(void *arg)
{
    struct ring_poller *p = arg;
    cpu_set_t set;

    pthread_setname_np(pthread_self(), "goblind-ring");
    CPU_ZERO(&set);
    if (p->cpu >= 0)
        CPU_SET(p->cpu, &set);
    if (p->cpu >= 0 &&
        pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
        goblind_log(p->g, GOBLIN_LOG_WARNING, "Can't pin a ring thread to "
                    "CPU %d", p->cpu);
    goblin_ring_poller_run(p->p);
    return NULL;
}

/* One poller per --ring-cpus CPU (at most one per ring), or one. */
static int make_pollers(struct goblind *g)
{
    struct goblind_rings *rs = g->rings;
    int np = rs->ncpus > 0 ? rs->ncpus : 1;
    goblin_ring_endpoint *eps[GOBLIN_RING_WAIT_MAX];

    np = np < rs->n ? np : rs->n;
    if ((rs->pollers = calloc((size_t)np, sizeof(*rs->pollers))) == NULL)
        return -1;
    rs->npollers = np;
    for (int t = 0; t < np; t++) {
        struct goblin_ring_poller_config cfg = {
            eps, 0, (int)rs->idle, (uint64_t)rs->spin_us * 1000};

        for (int i = t; i < rs->n; i += np)
            eps[cfg.n++] = rs->v[i].ep;
        rs->pollers[t].g = g;
        rs->pollers[t].cpu = rs->ncpus > 0 ? rs->cpus[t] : -1;
        if (goblin_ring_poller_open(&cfg, &rs->pollers[t].p) < 0)
            return -1;
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
    cfg.lock = goblind_lock;
    cfg.unlock = goblind_unlock;
    cfg.lock_ctx = g;
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
    for (int t = 0; t < rs->npollers; t++)
        if (rs->pollers[t].p != NULL)
            goblin_ring_poller_stop(rs->pollers[t].p);
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
    for (int t = 0; t < rs->npollers; t++)
        goblin_ring_poller_close(rs->pollers[t].p);
    free(rs->pollers);
    free(rs->v);
    free(rs->cpus_text);
    free(rs);
    g->rings = NULL;
}
