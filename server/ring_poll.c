/* ring_poll.c - goblind's ring threads: the --ring directives went to a
 * library ring set (goblin/serve.h, config.c), which opens the endpoints
 * and builds one poller per --ring-cpus CPU (or one); goblind runs each
 * poller on a thread of its own, pinned to its CPU (docs/threading.md). */
#include <sched.h>
#include <stdlib.h>

#include "goblind.h"

struct ring_thread {
    struct goblind *g;
    goblin_ring_poller *p;
    int cpu;
    pthread_t th;
};

static void *thread_main(void *arg)
{
    struct ring_thread *t = arg;
    cpu_set_t set;

    pthread_setname_np(pthread_self(), "goblind-ring");
    CPU_ZERO(&set);
    CPU_SET(t->cpu >= 0 ? t->cpu : 0, &set);
    if (t->cpu >= 0 &&
        pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
        goblind_log(t->g, GOBLIN_LOG_WARNING, "Can't pin a ring thread to "
                    "CPU %d", t->cpu);
    goblin_ring_poller_run(t->p);
    return NULL;
}

int goblind_ring_start(struct goblind *g)
{
    struct goblin_ring_set_config cfg = {
        g->engine, !goblin_engine_config_int(g->engine, "sbe-ring", 1),
        goblind_lock, goblind_unlock, g, goblind_engine_log, g};
    struct ring_thread *t;
    int n;

    if (goblin_ring_set_open(g->rings, &cfg) < 0)
        return -1;
    n = goblin_ring_set_npollers(g->rings);
    if (n > 0 && (g->ring_threads = t = calloc((size_t)n, sizeof(*t))) ==
                     NULL)
        return -1;
    for (int i = 0; i < n; i++, g->nring_threads++) {
        t[i].g = g;
        t[i].p = goblin_ring_set_poller(g->rings, i, &t[i].cpu);
        if (pthread_create(&t[i].th, NULL, thread_main, &t[i]) != 0) {
            goblind_log(g, GOBLIN_LOG_WARNING, "Can't start a ring thread");
            return -1;
        }
    }
    return 0;
}

/* Stops and joins the threads, then closes the rings (removing their
 * files) while the engine is still open. */
void goblind_ring_stop(struct goblind *g)
{
    struct ring_thread *t = g->ring_threads;

    for (int i = 0; i < g->nring_threads; i++)
        goblin_ring_poller_stop(t[i].p);
    for (int i = 0; i < g->nring_threads; i++)
        pthread_join(t[i].th, NULL);
    free(t);
    g->ring_threads = NULL;
    g->nring_threads = 0;
    goblin_ring_set_close(g->rings);
    g->rings = NULL;
}
