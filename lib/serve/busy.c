/* busy.c - serving while a script runs past busy-reply-threshold
 * (goblin_epoll_busy_hook, goblin/serve.h): the engine's busy hook
 * (goblin/script.h), called by the script's thread every so often with
 * the engine lock held. It lets go of the lock for a moment, so that the
 * other threads (the epoll loop, ring pollers) serve their clients, who
 * are answered BUSY unless they send SCRIPT KILL, FUNCTION KILL or
 * SHUTDOWN NOSAVE; and on the script's own thread it makes one pass of
 * that thread's loop or poller, leaving the script's client alone. Once
 * the loop was stopped (SHUTDOWN, a signal), the script is stopped too,
 * written or not, so that the server can exit.
 *
 * The normal path pays nothing for this: the hook runs only inside a
 * script that is already past the threshold.
 */
#include <time.h>

#include <goblin/script.h>

#include "serve_int.h"

/* Long enough for a thread waiting on the lock to get it. */
#define HANDOFF_NS 50000

_Thread_local goblin_epoll *goblin__running_loop;
_Thread_local goblin_ring_poller *goblin__running_poller;

void goblin__busy_hook(void *ctx, goblin_session *s)
{
    goblin_epoll *ep = ctx;
    const struct goblin_net_config *n = goblin__epoll_net_config(ep);

    if (n->unlock != NULL)
        n->unlock(n->lock_ctx);
    if (goblin__running_loop == ep)
        goblin_epoll_serve_busy(ep, s);
    else if (goblin__running_poller != NULL)
        goblin_ring_poller_serve_busy(goblin__running_poller, s);
    nanosleep(&(struct timespec){0, HANDOFF_NS}, NULL);
    if (n->lock != NULL)
        n->lock(n->lock_ctx);
    if (goblin_epoll_stopping(ep))
        goblin_engine_script_stop(n->engine);
}
