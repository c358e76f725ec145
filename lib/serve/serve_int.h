/* serve_int.h - what lib/serve's files share beyond goblin/serve.h: the
 * accessors the busy-script passes (epoll_loop.c, ring_poller.c) need to
 * recognise the connection or endpoint whose script is running, and to
 * put off closing a connection until the loop's own pass.
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

#endif
