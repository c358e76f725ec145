/* busy.c - goblind while a script runs past busy-reply-threshold: the
 * engine's busy hook (goblin/script.h), called by the script's thread
 * every so often with the engine lock held. It lets go of the lock for a
 * moment, so that the other threads (the epoll loop, the ring threads)
 * serve their clients, who are answered BUSY unless they send SCRIPT
 * KILL, FUNCTION KILL or SHUTDOWN NOSAVE; and on the script's own thread
 * it makes one pass of that thread's loop, leaving the script's client
 * alone. Once SHUTDOWN or a signal has stopped the loop, the script is
 * stopped too, written or not, so that the server can exit.
 *
 * The normal path pays nothing for this: the hook runs only inside a
 * script that is already past the threshold.
 */
#include <time.h>

#include "goblind.h"

/* Long enough for a thread waiting on the lock to get it. */
#define HANDOFF_NS 50000

static _Thread_local goblin_ring_poller *this_poller;

void goblind_busy_ring_thread(goblin_ring_poller *p)
{
    this_poller = p;
}

static void busy_hook(void *ctx, goblin_session *s)
{
    struct goblind *g = ctx;

    goblind_unlock(g);
    if (pthread_equal(pthread_self(), g->loop_thread))
        goblin_epoll_serve_busy(g->loop, s);
    else if (this_poller != NULL)
        goblin_ring_poller_serve_busy(this_poller, s);
    nanosleep(&(struct timespec){0, HANDOFF_NS}, NULL);
    goblind_lock(g);
    if (goblin_epoll_stopping(g->loop))
        goblin_engine_script_stop(g->engine);
}

void goblind_busy_start(struct goblind *g)
{
    g->loop_thread = pthread_self();
    goblin_engine_busy_hook(g->engine, busy_hook, g);
}
