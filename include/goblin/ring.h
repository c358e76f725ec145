/* goblin/ring.h - the shared-memory ring transport: one file (on tmpfs,
 * /dev/shm by default) per client connection, holding a versioned header
 * and two single-producer/single-consumer byte queues, SQ (client to
 * server) and CQ (server to client). docs/ring.md fixes the layout and the
 * protocol.
 *
 * Sides: the server creates the file (goblin_ring_create); one client
 * opens it (goblin_ring_open). Each handle produces into one queue (the
 * client into SQ, the server into CQ) and consumes the other. Every
 * function names the side(s) it may be called from. A handle belongs to
 * one thread at a time; the two sides normally run in different threads
 * or processes and share nothing but the file.
 *
 * Records: a record is a byte string of 0 to goblin_ring_max_record()
 * bytes; records arrive whole and in order, and their bytes are
 * contiguous in memory (peek hands out a pointer into the ring).
 *
 * The peer is untrusted: indices, lengths or fillers that do not fit give
 * GOBLIN_EPROTO for that ring only, never a read or write outside it.
 */
#ifndef GOBLIN_RING_H
#define GOBLIN_RING_H

#include <stddef.h>
#include <stdint.h>

#include "goblin/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ring reports GOBLIN_EBUSY (a live server or client holds it),
 * GOBLIN_ECONNRESET (the server closed, died or restarted) and
 * GOBLIN_ECONNREFUSED (stale file: its server is dead); see
 * goblin/common.h. */

/* What peek returns besides 0 (empty) and errors. SESSION is large so
 * that poll's record counts never collide with it. */
#define GOBLIN_RING_RECORD 1
#define GOBLIN_RING_SESSION 0x40000000

/* Capacity bounds of each queue, in bytes (before rounding, a size is
 * raised to at least one page and to a power of two). */
#define GOBLIN_RING_DEFAULT_SIZE ((uint64_t)1 << 20)
#define GOBLIN_RING_MAX_SIZE ((uint64_t)1 << 30)

typedef struct goblin_ring goblin_ring;

/* How a side waits for its peer (goblin_ring_wait, goblin_ring_send and
 * the open handshake). */
enum goblin_ring_idle {
    GOBLIN_RING_IDLE_DEFAULT = 0, /* BACKOFF */
    /* Busy-poll with the CPU's relax hint: lowest latency, one core at
     * 100% while waiting. */
    GOBLIN_RING_IDLE_SPIN = 1,
    /* Spin for spin_ns, then sleep on the header's futex word. The peer
     * wakes the sleeper with one system call, and only when the sleeper
     * has announced it is asleep: a busy ring makes no system calls, an
     * idle one costs no CPU. */
    GOBLIN_RING_IDLE_BACKOFF = 2,
};

/* Options of one endpoint. A zeroed field means its default; the struct
 * grows only at the end. cfg may be NULL everywhere (all defaults). */
struct goblin_ring_config {
    /* Server: bytes of SQ and CQ, each rounded up to a power of two of at
     * least one page. Default GOBLIN_RING_DEFAULT_SIZE; more than
     * GOBLIN_RING_MAX_SIZE is GOBLIN_ERANGE. */
    uint64_t sq_size;
    uint64_t cq_size;
    /* Server: permission bits of the file. Default 0600. */
    unsigned mode;
    /* Both: enum goblin_ring_idle for this side's waits. */
    int idle;
    /* Both, BACKOFF: nanoseconds to spin before sleeping. Default 50000. */
    uint64_t spin_ns;
    /* Client: how long goblin_ring_open waits for the server (file
     * missing, not yet sized or not yet published) and for its handshake
     * acknowledgement. Default 2 s. */
    uint64_t open_timeout_ns;
    /* Client: most bytes goblin_ring_drain may hold aside. Default 64 MiB. */
    size_t drain_limit;
    /* Both: memory for the handle and the drain buffer. Default libc. */
    const struct goblin_allocator *allocator;
};

/* Counters of one handle, for tests and monitoring. */
struct goblin_ring_stats {
    uint64_t sleeps;    /* futex sleeps this side entered */
    uint64_t wakes;     /* FUTEX_WAKE calls this side made for its peer */
    uint64_t full;      /* reserves refused for lack of space */
    uint64_t sessions;  /* server: client sessions started */
    uint64_t drained;   /* client: CQ records moved aside by drain */
};

/* Parses a size: decimal digits, then optionally b, k, kb, kib, m, mb,
 * mib, g, gb or gib in any case (base 1024), e.g. "4096", "64k", "1MiB".
 * text need not be NUL-terminated. Stores the bytes (not yet rounded) in
 * *out and returns 0; GOBLIN_EINVAL for bad text (nothing stored),
 * GOBLIN_ERANGE above GOBLIN_RING_MAX_SIZE. */
GOBLIN_API int goblin_ring_size_parse(const char *text, size_t len,
                                      uint64_t *out);

/* The capacity a queue of size bytes gets: 0 means the default, then at
 * least one page, rounded up to a power of two. Returns 0 (no capacity)
 * above GOBLIN_RING_MAX_SIZE. */
GOBLIN_API uint64_t goblin_ring_capacity(uint64_t size);

/* Server side. Creates the ring file at path (path is copied) and maps
 * it: the file is built under a temporary name and renamed over path, so
 * clients never see a half-built ring. Pages are allocated, prefaulted
 * and mlocked (best effort). A file already at path is taken over unless
 * a live process other than this one serves it (GOBLIN_EBUSY); a client
 * still attached to a replaced file sees GOBLIN_ECONNRESET. Returns 0,
 * GOBLIN_EINVAL, GOBLIN_ERANGE, GOBLIN_ENOMEM, GOBLIN_EBUSY or -errno of
 * a failed system call (e.g. -13 EACCES, -28 ENOSPC). */
GOBLIN_API int goblin_ring_create_sized(
    const char *path, const struct goblin_ring_config *cfg, size_t cfg_size,
    goblin_ring **out);
static inline int goblin_ring_create(
    const char *path, const struct goblin_ring_config *cfg, goblin_ring **out)
{
    return goblin_ring_create_sized(path, cfg, sizeof(*cfg), out);
}

/* Client side. Opens the ring file at path, waiting up to open_timeout_ns
 * for the server to publish it, then runs the epoch handshake: the server
 * discards whatever an earlier client left and acknowledges. If the server
 * closes the file before acknowledging (it is resetting the ring and puts
 * a new file at path), open starts again on the new file within the same
 * timeout. Returns 0, GOBLIN_ETIMEDOUT (no server in time),
 * GOBLIN_ECONNRESET (the file kept being replaced until the timeout), GOBLIN_EINCOMPAT (not a ring of
 * this version, or an impossible layout), GOBLIN_ECONNREFUSED (stale file:
 * its server is dead), GOBLIN_EBUSY (another client has it open),
 * GOBLIN_ENOMEM, GOBLIN_EINVAL or -errno (e.g. -13 EACCES). */
GOBLIN_API int goblin_ring_open_sized(
    const char *path, const struct goblin_ring_config *cfg, size_t cfg_size,
    goblin_ring **out);
static inline int goblin_ring_open(
    const char *path, const struct goblin_ring_config *cfg, goblin_ring **out)
{
    return goblin_ring_open_sized(path, cfg, sizeof(*cfg), out);
}

/* Both sides. Unmaps and frees. The server also marks the file closed,
 * wakes a sleeping client and unlinks path if it is still its file.
 * Records peeked or reserved become invalid. NULL is a no-op. */
GOBLIN_API void goblin_ring_close(goblin_ring *r);

/* Client side: 0 while the server that acknowledged this session still
 * serves the file; GOBLIN_ECONNRESET once it closed it, died or was
 * replaced (close and open again to reconnect). One system call. Server
 * side: always 0. */
GOBLIN_API int goblin_ring_check(goblin_ring *r);

/* Server side: 0 while the client of the current session may still be
 * alive (or no client is attached, a new client is handshaking, or its
 * liveness cannot be judged: it runs in another pid namespace);
 * GOBLIN_ECONNRESET once the process that opened the session no longer
 * exists. One system call: a server calls it
 * when idle, not per request. GOBLIN_EINVAL on a client handle. */
GOBLIN_API int goblin_ring_client_alive(const goblin_ring *r);

/* Both sides: the largest record this side may publish (capacity of its
 * outgoing queue / 2 - 8). */
GOBLIN_API uint32_t goblin_ring_max_record(const goblin_ring *r);

/* Producer (either side). Appends one record holding a copy of msg and
 * publishes it. Returns 0, GOBLIN_EAGAIN when it does not fit now
 * (nothing written; the server keeps the reply in its own buffer and
 * retries later), GOBLIN_EINVAL when len > goblin_ring_max_record(), or
 * GOBLIN_EPROTO on a failed ring. */
GOBLIN_API int goblin_ring_publish(goblin_ring *r, const void *msg,
                                   uint32_t len);

/* Producer. Appends msgs[0..n) in order and publishes them with one index
 * store. Returns how many were appended: fewer than n when the queue
 * filled up or msgs[i] is too long (the first call that cannot append
 * anything returns GOBLIN_EAGAIN or GOBLIN_EINVAL instead of 0). */
GOBLIN_API int goblin_ring_publish_batch(goblin_ring *r,
                                         const struct goblin_slice *msgs,
                                         unsigned n);

/* Producer, zero copy. Reserves room for a record of up to len bytes and
 * points *buf at it (contiguous, 8-byte aligned), valid until the next
 * reserve, publish or flush. Nothing is visible to the peer before
 * goblin_ring_commit and goblin_ring_flush. Returns 0, GOBLIN_EAGAIN (no
 * room now; earlier commits are flushed first), GOBLIN_EINVAL or
 * GOBLIN_EPROTO. */
GOBLIN_API int goblin_ring_reserve(goblin_ring *r, uint32_t len, void **buf);

/* Producer. Turns the reservation into a record of len bytes (len at most
 * the reserved length, else GOBLIN_EINVAL and nothing changes), written
 * through *buf. It stays invisible until goblin_ring_flush, so several
 * records can be published by one flush. Returns 0. */
GOBLIN_API int goblin_ring_commit(goblin_ring *r, uint32_t len);

/* Producer. Publishes every committed record with one release store of
 * the tail, and wakes the peer if it announced it is asleep. */
GOBLIN_API void goblin_ring_flush(goblin_ring *r);

/* Consumer (either side). Returns the next record not yet returned, in
 * place: *rec points into the ring (or, on the client, into the drain
 * buffer) and stays valid until goblin_ring_release. Returns
 * GOBLIN_RING_RECORD, 0 when none is ready, GOBLIN_EPROTO when the peer
 * broke the protocol (sticky until the next session), or, on the server,
 * GOBLIN_RING_SESSION: a new client completed the handshake, everything
 * queued by the old one is discarded, earlier peeked records are void and
 * the caller must reset its protocol state.
 * The bytes are shared with an untrusted peer that may still write them:
 * read each one once, or copy first. */
GOBLIN_API int goblin_ring_peek(goblin_ring *r, struct goblin_slice *rec);

/* Consumer. Peeks up to max (at most 65536) records into recs[]. Returns
 * the count, or GOBLIN_RING_SESSION / GOBLIN_EPROTO as peek does (then no
 * record is returned), or GOBLIN_EINVAL for a bad max. */
GOBLIN_API int goblin_ring_poll(goblin_ring *r, struct goblin_slice *recs,
                                unsigned max);

/* Consumer. Gives back every record peeked so far (one release store of
 * the head), so the producer may reuse the space. */
GOBLIN_API void goblin_ring_release(goblin_ring *r);

/* Consumer. Waits, by the handle's idle strategy, until peek has
 * something to return (a record, or on the server a new session or a
 * protocol error). timeout_ns < 0 waits forever; 0 checks once. Returns
 * 1 when something is ready, GOBLIN_ETIMEDOUT, or on the client
 * GOBLIN_ECONNRESET when the server went away. */
GOBLIN_API int goblin_ring_wait(goblin_ring *r, int64_t timeout_ns);

/* Server side: waits on several rings at once, by the idle strategy and
 * spin time of rings[0], until one has something for peek (as
 * goblin_ring_wait). Returns the index of the first such ring in array
 * order, so the array is a priority order; GOBLIN_ETIMEDOUT when
 * timeout_ns passes (< 0 waits forever, 0 checks once); GOBLIN_EINVAL
 * for n == 0, n > GOBLIN_RING_WAIT_MAX or a client handle. A backoff
 * sleep covers every ring with one futex_waitv system call (Linux 5.16
 * and later; older kernels sleep on rings[0] in slices of at most 1 ms
 * and look at the others between slices). */
#define GOBLIN_RING_WAIT_MAX 64
GOBLIN_API int goblin_ring_wait_any(goblin_ring *const *rings, unsigned n,
                                    int64_t timeout_ns);

/* Client side. Moves every ready CQ record into the handle's drain
 * buffer, from which peek and poll return them first, in order, and
 * releases their CQ space. Does nothing while peeked records are
 * unreleased. Returns the number moved, GOBLIN_ELIMIT when drain_limit
 * would be passed (nothing moved), GOBLIN_ENOMEM or GOBLIN_EPROTO. */
GOBLIN_API int goblin_ring_drain(goblin_ring *r);

/* Client side. Publishes msg like goblin_ring_publish, but when SQ is
 * full it drains CQ (so the server, blocked on a full CQ, can go on) and
 * waits for room, up to timeout_ns (< 0: forever). A pipeline deeper than
 * both queues therefore never deadlocks, provided no peeked record is
 * held across the call. Returns 0, GOBLIN_ETIMEDOUT, GOBLIN_ECONNRESET or
 * the errors of publish and drain. */
GOBLIN_API int goblin_ring_send(goblin_ring *r, const void *msg,
                                uint32_t len, int64_t timeout_ns);

/* Both sides: copies the handle's counters into *out. */
GOBLIN_API void goblin_ring_get_stats(const goblin_ring *r,
                                      struct goblin_ring_stats *out);

#ifdef __cplusplus
}
#endif

#endif
