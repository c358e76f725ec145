/* ring_poll.h - what goblind's two ring files share: the --ring
 * endpoints and options (ring_options.c reads them; ring_poll.c serves
 * them with its polling threads).
 */
#ifndef GOBLIND_RING_POLL_H
#define GOBLIND_RING_POLL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <goblin/ring.h>
#include <goblin/serve.h>

#include "goblind.h"

#define RING_MAX_CPUS 64

/* One --ring endpoint (goblin/serve.h does the work). */
struct ring_ep {
    char *path;
    uint64_t size;
    goblin_ring_endpoint *ep;  /* NULL until started */
};

/* A ring thread: runs a library poller over its rings. */
struct ring_poller {
    struct goblind *g;
    int cpu;                   /* pinned to this CPU, or -1 */
    goblin_ring_poller *p;
    pthread_t th;
    bool started;
};

struct goblind_rings {
    struct ring_ep *v;         /* every --ring, in order */
    int n;
    struct ring_poller *pollers;
    int npollers;
    char *cpus_text;
    int cpus[RING_MAX_CPUS];
    int ncpus;
    long idle;                 /* GOBLIN_RING_IDLE_SPIN or _BACKOFF */
    long spin_us;
    long perm;
    char setting[5][GOBLIN_SETTING_VALUE_MAX];
};

/* ring_options.c: the options' state, created on first use (NULL when
 * out of memory). */
struct goblind_rings *goblind_rings_of(struct goblind *g);

#endif
