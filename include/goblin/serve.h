/* goblin/serve.h - serving an engine's sessions over a shared-memory ring:
 * what a server (goblind, or an application that embeds the store and
 * lets other processes reach it) needs beyond the engine and the ring.
 *
 * A ring endpoint owns one ring file (goblin/ring.h) and the session of
 * whichever client is attached to it. goblin_ring_endpoint_step does one
 * unit of work and never blocks: a new client (epoch) gets a fresh
 * session; a batch of SQ records is fed to the session (SBE or RESP, as
 * the session's protocol detection decides) and its replies are copied
 * into CQ records; a protocol violation (GOBLIN_EPROTO from the ring),
 * QUIT or CLIENT KILL closes the session and re-creates the ring file, so
 * only that client sees GOBLIN_ECONNRESET; a client whose process exited
 * only has its session closed (goblin_ring_endpoint_chores).
 *
 * When CQ is full the rest of the replies stays in the session and the
 * endpoint runs nothing more until the client makes room; it still peeks
 * SQ (without releasing it: the client's SQ fills up, which is the
 * backpressure) to notice a new client's epoch. A caller that has nothing
 * else to do waits with goblin_ring_wait_any on the endpoints' rings,
 * with a short timeout while goblin_ring_endpoint_full() says an endpoint
 * waits for room (that has no wake-up of its own).
 *
 * Threading: an endpoint belongs to one thread. It calls into the engine
 * and its session only between the configured lock and unlock callbacks,
 * and never holds the lock while it waits or creates or removes files, so
 * other threads (a socket loop, other endpoints) may share the engine.
 */
#ifndef GOBLIN_SERVE_H
#define GOBLIN_SERVE_H

#include <stdbool.h>

#include "common.h"
#include "engine.h"
#include "ring.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct goblin_ring_endpoint goblin_ring_endpoint;

/* A zeroed field means its default; the struct grows only at the end. */
struct goblin_ring_endpoint_config {
    goblin_engine *engine;       /* required; must outlive the endpoint */
    const char *path;            /* required; the ring file (copied) */
    struct goblin_ring_config ring; /* sizes, mode, idle strategy */
    bool no_sbe;                 /* sessions speak RESP only */
    /* The engine lock, taken around every call into the engine or the
     * session. NULL: the engine is used by this thread only. */
    void (*lock)(void *ctx);
    void (*unlock)(void *ctx);
    void *lock_ctx;
    /* Where the endpoint logs (a ring it cannot create, a broken ring, a
     * client attaching or exiting). NULL discards. Called without the
     * lock; text is borrowed for the call. */
    void (*log)(void *ctx, enum goblin_log_level level, const char *text);
    void *log_ctx;
};

/* Creates the ring file and the endpoint into *out. Returns 0, the
 * errors of goblin_ring_create (the file could not be made: nothing is
 * left behind), GOBLIN_EINVAL or GOBLIN_ENOMEM. cfg is copied. */
GOBLIN_API int goblin_ring_endpoint_open_sized(
    const struct goblin_ring_endpoint_config *cfg, size_t cfg_size,
    goblin_ring_endpoint **out);
static inline int goblin_ring_endpoint_open(
    const struct goblin_ring_endpoint_config *cfg, goblin_ring_endpoint **out)
{
    return goblin_ring_endpoint_open_sized(cfg, sizeof(*cfg), out);
}

/* Does one unit of work (see the top of this file). Returns 1 when it
 * did something, 0 when there was nothing to do. Never blocks. */
GOBLIN_API int goblin_ring_endpoint_step(goblin_ring_endpoint *ep);

/* The ring to wait on, or NULL while re-creating the file fails (chores
 * tries again). Valid until the next call on the endpoint. */
GOBLIN_API goblin_ring *goblin_ring_endpoint_ring(goblin_ring_endpoint *ep);

/* True while replies wait for CQ room. */
GOBLIN_API bool goblin_ring_endpoint_full(const goblin_ring_endpoint *ep);

/* Slow checks, for about every 100 ms: re-creates a ring file that could
 * not be re-created, and closes the session of a client that was killed
 * (CLIENT KILL) or whose process exited without reconnecting. */
GOBLIN_API void goblin_ring_endpoint_chores(goblin_ring_endpoint *ep);

/* Closes the session, closes the ring (which removes its file) and frees
 * the endpoint. NULL is a no-op. */
GOBLIN_API void goblin_ring_endpoint_close(goblin_ring_endpoint *ep);

#ifdef __cplusplus
}
#endif

#endif
