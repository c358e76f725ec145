/* goblin/repl.h - replication, Redis's protocol (PSYNC2): both sides.
 *
 * ---- the master side ----
 *
 * An engine is a master for any session that sends PSYNC (or the
 * old SYNC); from then on the session is a replica: it gets the full
 * sync (an RDB file, or only what it missed from the replication backlog
 * when it asks with a replication id and offset the backlog still
 * covers), and then the write stream (goblin/stream.h, the REPLICATION
 * class) as it happens, through the session's output like any other
 * output. The replica's REPLCONF ACK offsets are kept for INFO
 * replication, ROLE and WAIT.
 *
 * The full sync runs in a child process so that other clients are not
 * stalled by a large dataset: the library never forks, so the server
 * provides the engine's repl_fork hook (struct goblin_engine_config). It
 * is called under the engine lock, inside PSYNC or the engine's cron,
 * when replicas wait for a full sync; the server forks, and the child
 * calls goblin_repl_sync_child and _exit()s with its result. The child
 * writes, to each waiting replica's socket, the +FULLRESYNC line and the
 * RDB payload (the EOF-marker form to a replica that announced
 * "capa eof", else a "$<length>" bulk), without touching the lock. Meanwhile the
 * parent keeps every change for those replicas, from the fork on; when
 * the server has reaped the child it calls goblin_repl_sync_done under
 * the lock, and the kept changes follow the payload.
 *
 * Replicas are sessions with a socket (TCP or Unix, not TLS: the child
 * writes the payload to the descriptor itself) and an event loop that
 * honours the engine's session_wake hook (goblind's, goblin_net's).
 */
#ifndef GOBLIN_REPL_H
#define GOBLIN_REPL_H

#include <stdbool.h>

#include "common.h"
#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* In the child forked by repl_fork: unblocks every signal, closes every
 * descriptor from 3 up but keep_fd (the log; -1: none) and the replicas'
 * sockets, and writes the full sync to each replica waiting for it.
 * Returns 0 when every payload went out, else a negative code; the
 * child then _exit()s. */
GOBLIN_API int goblin_repl_sync_child(goblin_engine *eng, int keep_fd);

/* In the server, under the engine lock, once the child ended: ok when it
 * exited with 0. The replicas it served go online (their kept changes
 * follow); after a failure they are disconnected. Replicas that asked
 * meanwhile get a new child from the engine's cron. */
GOBLIN_API void goblin_repl_sync_done(goblin_engine *eng, bool ok);

/* ---- the replica side ----
 *
 * REPLICAOF host port (or the replicaof setting, --replicaof) makes the
 * engine a replica: it connects to the master itself, without blocking,
 * does the handshake (PING, AUTH with masterauth / masteruser, REPLCONF
 * listening-port and capa eof psync2, PSYNC with the id and offset it
 * has), receives the full sync's RDB into a file in "dir" and loads it
 * in place of its data, then runs the master's stream (a master
 * session: CLIENT LIST flag M) and passes it on, byte for byte, to its
 * own replicas and AOF. The socket is the engine's; the server's loop
 * only watches one descriptor for it: */

/* A descriptor (an epoll set over the link's socket, made on the first
 * call and kept until the engine closes) that is readable whenever the
 * link has I/O to do; the loop calls goblin_repl_link_ready under the
 * engine lock then. -1 when it cannot be made: the engine's cron then
 * drives the link alone, ten times a second. goblin_epoll does both. */
GOBLIN_API int goblin_repl_link_fd(goblin_engine *eng);

/* Does the link's pending I/O (never blocks). Under the engine lock. */
GOBLIN_API void goblin_repl_link_ready(goblin_engine *eng);

#ifdef __cplusplus
}
#endif

#endif
