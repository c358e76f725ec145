/* ring_poller.c - the loop of a thread serving ring endpoints
 * (goblin/serve.h, "ring poller"): priority order, the idle wait on every
 * ring at once, the short waits while a CQ is full, and the chores
 * cadence. It uses only the endpoints' public calls; the engine lock is
 * theirs (their config), so this file takes none.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <goblin/serve.h>

#include "serve_int.h"
#include "util/config_size.h"

#define WAIT_NS 100000000    /* idle pollers look at stop this often */
#define CHORES_NS 100000000  /* dead clients, kills, failed re-creation */
#define CHORES_EVERY 4096    /* busy loop turns between clock reads */
#define FULL_NAP_NS 50000    /* backoff, CQ full: first nap, doubling */
#define FULL_NAP_MAX 1000000 /* ... up to 1 ms */

struct goblin_ring_poller {
    goblin_ring_endpoint **eps;
    goblin_ring **wait;          /* scratch for goblin_ring_wait_any */
    int n;
    int idle;
    int64_t spin_ns;
    int64_t full_since, nap;     /* while a CQ is full */
    atomic_bool stop;
};

static int64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int goblin_ring_poller_open_sized(const struct goblin_ring_poller_config *in,
                                  size_t in_size, goblin_ring_poller **out)
{
    struct goblin_ring_poller_config c;
    const struct goblin_ring_poller_config *cfg = &c;
    goblin_ring_poller *p;

    *out = NULL;
    if (in == NULL || goblin__config_copy(&c, sizeof(c), in, in_size,
                                          sizeof(in->eps)) != 0 ||
        c.n <= 0 || c.n > GOBLIN_RING_WAIT_MAX || c.eps == NULL)
        return GOBLIN_EINVAL;
    if ((p = calloc(1, sizeof(*p))) == NULL)
        return GOBLIN_ENOMEM;
    p->eps = calloc((size_t)cfg->n, sizeof(*p->eps));
    p->wait = calloc((size_t)cfg->n, sizeof(*p->wait));
    if (p->eps == NULL || p->wait == NULL) {
        goblin_ring_poller_close(p);
        return GOBLIN_ENOMEM;
    }
    memcpy(p->eps, cfg->eps, sizeof(*p->eps) * (size_t)cfg->n);
    p->n = cfg->n;
    p->idle = cfg->idle;
    p->spin_ns = (int64_t)cfg->spin_ns;
    atomic_init(&p->stop, false);
    *out = p;
    return 0;
}

void goblin_ring_poller_close(goblin_ring_poller *p)
{
    if (p == NULL)
        return;
    free(p->eps);
    free(p->wait);
    free(p);
}

void goblin_ring_poller_stop(goblin_ring_poller *p)
{
    atomic_store(&p->stop, true);
}

/* Nothing to do on any ring: waits until one has work. A ring waiting
 * for CQ room has no wake-up of its own, so then the wait is short:
 * none in spin mode, naps from 50 us doubling to 1 ms in backoff mode
 * once spin_ns has passed. */
static int idle_wait(goblin_ring_poller *p)
{
    bool full = false;
    int64_t timeout = WAIT_NS, now;
    unsigned n = 0;

    for (int i = 0; i < p->n; i++) {
        goblin_ring *r = goblin_ring_endpoint_ring(p->eps[i]);

        if (r != NULL)
            p->wait[n++] = r;
        full = full || goblin_ring_endpoint_full(p->eps[i]);
    }
    if (full) {
        now = now_ns();
        if (p->full_since == 0) {
            p->full_since = now;
            p->nap = FULL_NAP_NS;
        }
        if (p->idle == GOBLIN_RING_IDLE_SPIN ||
            now - p->full_since < p->spin_ns)
            timeout = 0;
        else {
            timeout = p->nap;
            p->nap = p->nap * 2 < FULL_NAP_MAX ? p->nap * 2 : FULL_NAP_MAX;
        }
    } else {
        p->full_since = 0;
    }
    if (n > 0)
        return goblin_ring_wait_any(p->wait, n, timeout);
    if (timeout > 0)
        nanosleep(&(struct timespec){0, timeout}, NULL);
    return GOBLIN_ETIMEDOUT;
}

void goblin_ring_poller_serve_busy(goblin_ring_poller *p,
                                   const goblin_session *busy)
{
    for (int i = 0; i < p->n; i++)
        if (goblin__ring_endpoint_session(p->eps[i]) != busy ||
            busy == NULL)
            goblin_ring_endpoint_step(p->eps[i]);
}

int goblin_ring_poller_run(goblin_ring_poller *p)
{
    int64_t chores_at = now_ns() + CHORES_NS;
    unsigned turns = 0;

    goblin__running_poller = p;  /* for the busy hook (busy.c) */

    while (!atomic_load_explicit(&p->stop, memory_order_relaxed)) {
        bool timed_out;
        int i = 0;

        while (i < p->n && goblin_ring_endpoint_step(p->eps[i]) == 0)
            i++;                         /* the first ring with work */
        /* The clock is read only after a wait that timed out or every
         * CHORES_EVERY turns: not between a request's arrival and its
         * service. */
        timed_out = i == p->n && idle_wait(p) < 0;
        if (!timed_out && ++turns % CHORES_EVERY != 0)
            continue;
        if (now_ns() >= chores_at) {
            for (int k = 0; k < p->n; k++)
                goblin_ring_endpoint_chores(p->eps[k]);
            chores_at = now_ns() + CHORES_NS;
        }
    }
    goblin__running_poller = NULL;
    return 0;
}
