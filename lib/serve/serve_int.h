/* serve_int.h - what lib/serve's files share beyond goblin/serve.h: the
 * accessors the busy-script passes (busy.c, epoll_loop.c, ring_poller.c)
 * need to recognise the connection or endpoint whose script is running,
 * to find the thread's loop or poller, and to put off closing a
 * connection until the loop's own pass.
 */
#ifndef GOBLIN_SERVE_INT_H
#define GOBLIN_SERVE_INT_H

#include <goblin/serve.h>

/* The session a connection or a ring endpoint serves (NULL: none). Read
 * on the thread that drives it. */
goblin_session *goblin__conn_session(const goblin_conn *c);
goblin_session *goblin__ring_endpoint_session(const goblin_ring_endpoint *ep);

/* Marks c to close and queues it on the net's woken list, whose next
 * pass by the loop closes it once its output is out: a pass nested in a
 * busy script must not free a connection the outer pass may still hold. */
void goblin__conn_defer_close(goblin_conn *c);

/* net.c: a loop's pass over its ready connections, for group commit
 * (appendfsync always): pass_begin before the pass's events; after them,
 * pass_next makes the pass's writes durable with one fsync (first call),
 * then returns each connection whose replies waited for it, flushed,
 * with *m what it asks for now (as goblin_conn_event), until NULL. */
void goblin__net_pass_begin(goblin_net *n);
goblin_conn *goblin__net_pass_next(goblin_net *n, int *m);

/* busy.c: the engine's busy hook that goblin_epoll_busy_hook installs
 * (ctx: the loop), and the loop or poller whose run is on this thread's
 * stack (set by goblin_epoll_run and goblin_ring_poller_run). */
void goblin__busy_hook(void *ctx, goblin_session *s);
extern _Thread_local goblin_epoll *goblin__running_loop;
extern _Thread_local goblin_ring_poller *goblin__running_poller;

/* epoll_loop.c: the loop's copy of its net's configuration. */
const struct goblin_net_config *goblin__epoll_net_config(
    const goblin_epoll *ep);

#endif
