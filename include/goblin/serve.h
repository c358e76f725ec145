/* goblin/serve.h - serving an engine to other processes: what a server
 * (goblind, or an application that embeds the store and lets other
 * processes reach it) needs beyond the engine and the ring. Four parts:
 *
 *  - socket connections (goblin_net, goblin_conn): one object per client
 *    socket, driven from any event loop, with protected mode, maxclients,
 *    the idle timeout, CLIENT KILL, peer names and the output limits
 *    inside; and listener helpers with Redis's bind rules;
 *  - ring endpoints (goblin_ring_endpoint): one ring file and its client;
 *  - a ring poller (goblin_ring_poller): the loop of a thread serving
 *    rings in priority order, and ring sets (goblin_ring_set): rings and
 *    pollers from Redis-style directives (ring PATH SIZE, ring-cpus ...);
 *  - the persistence policy (goblin_serve_load, goblin_serve_final_save,
 *    the two ends of a forked background save) and, for a server that
 *    forks, its children, the AOF and the final save (goblin_persist);
 *  - serving from the settings: the listeners, connection limits and
 *    open-file limit that Redis's directives (port, bind, unixsocket,
 *    maxclients ...) ask for;
 *  - an epoll loop (goblin_epoll) that drives a net's connections, for a
 *    server that has no event loop of its own.
 *
 * TLS is an I/O layer under a connection (struct goblin_conn_io); the
 * companion library libgoblin-tls (goblin/tls.h) provides one, so
 * libgoblin itself links only libc and pthreads.
 *
 * ---- ring endpoints ----
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
#include <stddef.h>
#include <stdint.h>

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
    /* Sizes, mode, idle strategy (copied); NULL: every default. A pointer,
     * not a member, so that either struct can grow at its end. */
    const struct goblin_ring_config *ring;
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

/* ---- ring poller ----
 *
 * The loop of a thread that serves some ring endpoints: it looks at them
 * from the first each time round, does one step (a batch) of the first
 * that has work, then starts again from the first, so the order given is
 * a priority order (a busy first ring can starve a later one). When none
 * has work it waits on all of them at once (goblin_ring_wait_any); while
 * an endpoint waits for CQ room (which has no wake-up of its own) the
 * waits are short: none in spin mode, in backoff mode none for spin_ns,
 * then naps from 50 us doubling to 1 ms. About every 100 ms it runs the
 * endpoints' chores (dead clients, CLIENT KILL, failed re-creation) and
 * looks at the stop flag; the clock is read only after a wait that timed
 * out or every 4,096 turns, never between a request and its reply.
 *
 * The engine lock is the endpoints' own (their config's lock and unlock):
 * the poller takes no lock of its own, so several pollers and a socket
 * loop may share one engine. */
typedef struct goblin_ring_poller goblin_ring_poller;

/* Sized as every configuration struct (goblin/common.h). */
struct goblin_ring_poller_config {
    goblin_ring_endpoint *const *eps; /* in priority order; copied array,
                                       * endpoints borrowed; at most
                                       * GOBLIN_RING_WAIT_MAX */
    int n;
    int idle;                    /* GOBLIN_RING_IDLE_SPIN or _BACKOFF */
    uint64_t spin_ns;            /* backoff, CQ full: spin this long first */
};

/* Returns 0, GOBLIN_EINVAL (no endpoints, too many) or GOBLIN_ENOMEM. */
GOBLIN_API int goblin_ring_poller_open_sized(
    const struct goblin_ring_poller_config *cfg, size_t cfg_size,
    goblin_ring_poller **out);
static inline int goblin_ring_poller_open(
    const struct goblin_ring_poller_config *cfg, goblin_ring_poller **out)
{
    return goblin_ring_poller_open_sized(cfg, sizeof(*cfg), out);
}

/* Serves the endpoints on the calling thread until goblin_ring_poller_stop
 * (seen within 100 ms). Returns 0. */
GOBLIN_API int goblin_ring_poller_run(goblin_ring_poller *p);

/* For a script past busy-reply-threshold running on the poller's own
 * thread, called without the engine lock: one step of every endpoint but
 * the one serving busy (its script is on the stack), so that the
 * poller's other clients are answered (BUSY) meanwhile. */
GOBLIN_API void goblin_ring_poller_serve_busy(goblin_ring_poller *p,
                                              const goblin_session *busy);

/* Asks run to return; safe from any thread, and before run starts. */
GOBLIN_API void goblin_ring_poller_stop(goblin_ring_poller *p);

/* Frees the poller (not its endpoints); run must have returned. NULL is
 * a no-op. */
GOBLIN_API void goblin_ring_poller_close(goblin_ring_poller *p);

/* ---- ring sets: the ring directives, their endpoints and pollers ----
 *
 * What a server with rings configured as Redis-style directives needs:
 * "ring PATH SIZE" (any number, in priority order), "ring-cpus LIST"
 * (e.g. "0,2-3": one poller per CPU, ring i served by poller i mod the
 * count; without it one poller), "ring-idle spin|backoff",
 * "ring-spin-us N" and "ring-perm OCTAL" (the files' mode). The set
 * registers them as read-only settings that CONFIG GET shows, opens the
 * endpoints and builds the pollers; the server runs each poller on a
 * thread of its own (pinned to its CPU if it likes). */
typedef struct goblin_ring_set goblin_ring_set;

/* An empty set (no rings: backoff, 50 us, mode 0600). Returns 0 or
 * GOBLIN_ENOMEM. */
GOBLIN_API int goblin_ring_set_new(goblin_ring_set **out);

/* Applies one directive, argv[0] its name. Returns 1 when it is not a
 * ring directive, 0 once applied, or -1 with *why (a static text). */
GOBLIN_API int goblin_ring_set_directive(goblin_ring_set *rs, int argc,
                                         const char *const *argv,
                                         const char **why);

/* Registers the read-only settings ring, ring-cpus, ring-idle,
 * ring-spin-us and ring-perm on eng (rs must outlive it). */
GOBLIN_API int goblin_ring_set_settings(goblin_ring_set *rs,
                                        goblin_engine *eng);

/* Writes the ring directives' --help lines (name, type, default) to f,
 * in the layout of goblin_engine_config_usage. */
GOBLIN_API void goblin_ring_set_usage(FILE *f);

/* How the endpoints are served; as in goblin_ring_endpoint_config. */
struct goblin_ring_set_config {
    goblin_engine *engine;
    bool no_sbe;
    void (*lock)(void *ctx);
    void (*unlock)(void *ctx);
    void *lock_ctx;
    void (*log)(void *ctx, enum goblin_log_level level, const char *text);
    void *log_ctx;
};

/* Creates every ring file and endpoint ("Ring ready at ..." at NOTICE)
 * and the pollers. Returns 0, or a negative code after logging why (the
 * endpoints opened so far stay until goblin_ring_set_close). */
GOBLIN_API int goblin_ring_set_open_sized(
    goblin_ring_set *rs, const struct goblin_ring_set_config *cfg,
    size_t cfg_size);
static inline int goblin_ring_set_open(
    goblin_ring_set *rs, const struct goblin_ring_set_config *cfg)
{
    return goblin_ring_set_open_sized(rs, cfg, sizeof(*cfg));
}

/* The number of pollers (0 without rings), and poller i with the CPU its
 * thread should run on (-1: any). */
GOBLIN_API int goblin_ring_set_npollers(const goblin_ring_set *rs);
GOBLIN_API goblin_ring_poller *goblin_ring_set_poller(goblin_ring_set *rs,
                                                      int i, int *cpu);

/* Closes the endpoints (removing their files) and frees the set; every
 * poller's run must have returned. NULL is a no-op. */
GOBLIN_API void goblin_ring_set_close(goblin_ring_set *rs);

/* ---- socket connections ----
 *
 * A goblin_net is the set of socket connections one event loop serves
 * from one engine; a goblin_conn is one of them: a socket, its session,
 * and the state around it. The event loop is the caller's (epoll, poll,
 * libuv, io_uring ...): it watches the descriptors and tells the
 * connection what happened; the connection says what to watch next as a
 * mask of GOBLIN_CONN_* bits:
 *
 *   READ   watch for readability (not while closing);
 *   WRITE  watch for writability: output is pending, or the I/O layer
 *          (TLS) must write before it can read on;
 *   CLOSE  done: call goblin_conn_close (after the output was flushed,
 *          or at once when it cannot be: an error, a peer that left);
 *   CHANGED  READ/WRITE differ from the mask returned last time, so a
 *          loop that registers interest (epoll) knows when to update it.
 *
 * Two ways to drive one. goblin_conn_event does the I/O itself, on the
 * descriptor through the connection's I/O layer: it reads until the
 * socket is drained, runs every complete command and writes the replies
 * in the same call (one read and one write per unpipelined request).
 * Or a loop that moves bytes itself feeds what it read with
 * goblin_conn_feed, takes the bytes to send from goblin_conn_output and
 * reports what went with goblin_conn_consume.
 *
 * Inside the connection: maxclients and protected mode at accept (with
 * Redis's refusal texts, written in clear unless the listener is secure),
 * the idle timeout (goblin_net_cron closes idle connections), CLIENT KILL
 * from any session or thread (goblin_net_session_wake queues the
 * connection; goblin_net_woken hands it to the loop), the peer and local
 * names CLIENT LIST shows, and the query and output buffer limits (the
 * session reports them; the connection logs and closes).
 *
 * Locking: a goblin_net and its connections belong to one thread (the
 * loop's). Every call into the engine or a session is made between the
 * config's lock and unlock, never across a system call: reads go into
 * the net's own buffer and are fed under the lock; replies are written
 * from the session's output without it (goblin/engine.h says why that is
 * safe) and consumed under it.
 *
 * Connection states. A client blocked in BLPOP is a connection whose
 * session has a command waiting: it runs no further input, the engine's
 * cron checks its deadline (the idle timeout does not apply), and the
 * command that pushes to the key wakes it through session_wake, as CLIENT
 * KILL does, after which goblin_net_woken hands it to the loop, whose
 * goblin_conn_event(c, false, false) resumes the session and flushes the
 * reply. A subscribed client (Pub/Sub) is a connection
 * whose session output grows through PUBLISH in other sessions: the same
 * wake puts it on the woken list and the loop writes it out; its output
 * limit is the pubsub class of client-output-buffer-limit. Neither needs
 * a new call in the event loop: WRITE interest and the woken list carry
 * them. */
typedef struct goblin_net goblin_net;
typedef struct goblin_conn goblin_conn;

#define GOBLIN_CONN_READ 1
#define GOBLIN_CONN_WRITE 2
#define GOBLIN_CONN_CLOSE 4
#define GOBLIN_CONN_CHANGED 8

/* An I/O layer between a connection and its descriptor (TLS). Each call
 * behaves as read(2) or write(2) on a non-blocking socket: bytes moved, 0
 * for a peer that closed (read), or -1 with errno: EAGAIN when the layer
 * waits for the socket, with *want_write set when what it waits for is
 * writability. pending (may be NULL) tells how many bytes the layer has
 * already decoded; close frees the layer, not the descriptor. */
struct goblin_conn_io {
    long (*read)(void *io, void *buf, size_t n, bool *want_write);
    long (*write)(void *io, const void *buf, size_t n, bool *want_write);
    size_t (*pending)(void *io);
    void (*close)(void *io);
};

/* The limits CONFIG SET may change while serving. */
struct goblin_net_limits {
    long maxclients;             /* 0: 10000 */
    long timeout;                /* idle seconds; 0: never */
    bool protected_mode;         /* refuse non-loopback TCP clients while
                                  * the default user has no password */
};

/* A zeroed field means its default; the struct grows only at the end. */
struct goblin_net_config {
    goblin_engine *engine;       /* required; must outlive the net */
    /* The engine lock (see goblin_ring_endpoint_config). NULL: the engine
     * is used by this thread only. */
    void (*lock)(void *ctx);
    void (*unlock)(void *ctx);
    void *lock_ctx;
    /* Where connections log (accepts and closes at VERBOSE, refusals,
     * limits). NULL discards. Called without the lock. */
    void (*log)(void *ctx, enum goblin_log_level level, const char *text);
    void *log_ctx;
    struct goblin_net_limits limits;
    /* Called under the lock at each accept and cron to refresh limits
     * (settings that CONFIG SET changes). NULL: limits stay as given. */
    void (*limits_get)(void *ctx, struct goblin_net_limits *out);
    void *limits_ctx;
    bool no_sbe_tcp;             /* TCP sessions speak RESP only */
    bool no_sbe_unix;            /* Unix socket sessions speak RESP only */
    /* Called by goblin_conn_close just before the descriptor is closed,
     * so the loop can forget it (epoll: EPOLL_CTL_DEL, needed when a
     * forked child still holds a copy). NULL: nothing. */
    void (*closing)(void *ctx, goblin_conn *c, int fd);
    void *closing_ctx;
};

/* A listening socket as goblin_net_accept sees it. */
struct goblin_listener {
    int fd;
    enum goblin_transport transport; /* GOBLIN_TRANSPORT_TCP or _UNIX */
    bool secure;                 /* an I/O layer will be set (TLS): the
                                  * refusals are not written in clear */
    const char *path;            /* _UNIX: the socket path CLIENT LIST
                                  * shows as the peer and local name */
};

/* Opens a net into *out. Returns 0, GOBLIN_EINVAL or GOBLIN_ENOMEM. */
GOBLIN_API int goblin_net_open_sized(const struct goblin_net_config *cfg,
                                     size_t cfg_size, goblin_net **out);
static inline int goblin_net_open(const struct goblin_net_config *cfg,
                                  goblin_net **out)
{
    return goblin_net_open_sized(cfg, sizeof(*cfg), out);
}

/* Closes every connection and frees the net (not the engine or the
 * listeners). NULL is a no-op. */
GOBLIN_API void goblin_net_close(goblin_net *n);

/* Accepts one connection from l->fd (non-blocking), checks maxclients
 * and protected mode, names both ends and opens its session. Returns 1
 * with *out the new connection (interest READ) or NULL when it was
 * refused or could not be set up (logged, descriptor closed); 0 when
 * nothing waits; or the negative errno of accept4 (logged): -EMFILE and
 * -ENFILE mean the loop should stop watching its listeners for a while
 * (they stay readable) and try again at its next cron. */
GOBLIN_API int goblin_net_accept(goblin_net *n, const struct goblin_listener *l,
                                 goblin_conn **out);

/* Puts an I/O layer under a connection just accepted (before any event):
 * io and ctx are used until goblin_conn_close, which calls io->close. */
GOBLIN_API void goblin_conn_set_io(goblin_conn *c,
                                   const struct goblin_conn_io *io,
                                   void *ctx);

/* The loop saw c's descriptor readable (or in error, or hung up) and/or
 * writable: does the I/O and returns the GOBLIN_CONN_* mask. Also the
 * call for a connection from goblin_net_woken (both false: flush). */
GOBLIN_API int goblin_conn_event(goblin_conn *c, bool readable,
                                 bool writable);

/* Bytes-only driving: feeds n bytes read from the peer (runs every
 * complete command), the output to send and what was sent. feed returns
 * the GOBLIN_CONN_* mask; output never returns NULL. */
GOBLIN_API int goblin_conn_feed(goblin_conn *c, const void *data, size_t n);
GOBLIN_API const void *goblin_conn_output(goblin_conn *c, size_t *len);
GOBLIN_API int goblin_conn_consume(goblin_conn *c, size_t n);

/* The GOBLIN_CONN_* mask now (without CHANGED). */
GOBLIN_API int goblin_conn_interest(goblin_conn *c);

GOBLIN_API int goblin_conn_fd(const goblin_conn *c);

/* Closes the session and the descriptor (after the closing callback) and
 * frees the connection. NULL is a no-op. */
GOBLIN_API void goblin_conn_close(goblin_conn *c);

/* The engine's session_wake hook (struct goblin_engine_config) for an
 * engine whose socket sessions are goblin_conn's: queues the connection
 * (its user pointer) for goblin_net_woken; a NULL user (ring sessions) is
 * ignored. Called under the lock, from any thread; ctx is unused. */
GOBLIN_API void goblin_net_session_wake(void *ctx, void *user);

/* The next connection woken since the last call (CLIENT KILL, or a
 * blocked client served, timed out or unblocked), or NULL;
 * the loop then calls goblin_conn_event(c, false, false). Call it after
 * each batch of events. */
GOBLIN_API goblin_conn *goblin_net_woken(goblin_net *n);

/* A descriptor (an eventfd) that becomes readable when a connection is
 * woken from a thread other than the loop's (a ring client's push that
 * serves a socket client blocked in BLPOP): the loop watches it for
 * reading and then calls goblin_net_woken as after any batch, which also
 * drains it. -1 if it could not be made (wakes then wait for the next
 * event or cron). */
GOBLIN_API int goblin_net_wake_fd(const goblin_net *n);

/* Periodic work, about ten times a second: the engine's cron (in place of
 * goblin_engine_cron), refreshed limits, and the idle timeout, which
 * closes (goblin_conn_close) connections idle longer than it. */
GOBLIN_API void goblin_net_cron(goblin_net *n);

/* Open connections. */
GOBLIN_API long goblin_net_count(const goblin_net *n);

/* ---- listeners, with Redis's bind rules ---- */

/* Listens on TCP addr:port (non-blocking, SO_REUSEADDR, IPV6_V6ONLY for
 * IPv6, backlog 511). "*" is every IPv4 address and "::*" every IPv6 one;
 * a leading '-', or optional, makes a missing address or address family
 * a skip instead of an error. Returns the descriptor, or a negative code
 * with Redis's log line in msg: then *skipped says whether it was only
 * skipped (a warning) or failed. */
GOBLIN_API int goblin_listen_tcp(const char *addr, long port, bool optional,
                                 bool *skipped, char *msg, size_t cap);

/* Listens on a Unix socket at path (replacing a stale file) with the
 * given permissions (chmod). Returns the descriptor, or a negative code
 * with the log line in msg. */
GOBLIN_API int goblin_listen_unix(const char *path, unsigned mode, char *msg,
                                  size_t cap);

/* ---- persistence policy ----
 *
 * What a server does with the snapshot around serving: before it serves,
 * goblin_serve_load imports a Redis dump (import_rdb) or removes the
 * temporary files of saves that died with their process and loads the
 * snapshot file (a file that cannot be read is fatal: never an empty
 * store in its place, and the file stays). At shutdown (SIGTERM),
 * goblin_serve_final_save saves when a save policy is set, as Redis does.
 * The save policies themselves run in the engine's cron; a background
 * save is the server's fork (the engine's bgsave hook). */
struct goblin_serve_persist {
    goblin_engine *engine;       /* required */
    goblin_store *store;         /* the engine's store (not read) */
    const char *import_rdb;      /* a Redis dump to start from; NULL:
                                  * the import-rdb setting, if set */
    /* Stops a running background save before the final save. NULL: none. */
    void (*bgsave_kill)(void *ctx);
    void *bgsave_ctx;
    void (*log)(void *ctx, enum goblin_log_level level, const char *text);
    void *log_ctx;
};

/* Returns 0, or a negative code after logging why, with a one-line
 * reason ("can't load the snapshot PATH: WHY") in err for stderr. With
 * the export-rdb setting (--export-rdb FILE) the data loaded is then
 * written to FILE as a Redis RDB file and 1 is returned: the server
 * stops without serving. */
GOBLIN_API int goblin_serve_load_sized(const struct goblin_serve_persist *p,
                                       size_t p_size, char *err, size_t cap);
static inline int goblin_serve_load(const struct goblin_serve_persist *p,
                                    char *err, size_t cap)
{
    return goblin_serve_load_sized(p, sizeof(*p), err, cap);
}

/* Returns true when the server may stop: no policy, or the save worked
 * (a failed save is logged and keeps the server running, as Redis). Call
 * it under the engine lock. */
GOBLIN_API bool goblin_serve_final_save_sized(
    const struct goblin_serve_persist *p, size_t p_size);
static inline bool goblin_serve_final_save(
    const struct goblin_serve_persist *p)
{
    return goblin_serve_final_save_sized(p, sizeof(*p));
}

/* A background save forked by the server (the engine's bgsave hook),
 * in the child: unblocks every signal, closes every descriptor from 3 up
 * but keep_fd (the log; -1: none), so the child holds no socket or ring,
 * saves the store to path and logs the outcome (Redis's lines). Returns
 * 0 or the save's error; the child then _exit()s. */
GOBLIN_API int goblin_serve_bgsave_child_sized(
    const struct goblin_serve_persist *p, size_t p_size, const char *path,
    int keep_fd);
static inline int goblin_serve_bgsave_child(
    const struct goblin_serve_persist *p, const char *path, int keep_fd)
{
    return goblin_serve_bgsave_child_sized(p, sizeof(*p), path, keep_fd);
}

/* In the server, once the child pid that saved to path was reaped with
 * wait status wstatus: logs how it ended, removes the temporary file of a
 * child that did not finish, and tells the engine
 * (goblin_engine_bgsave_done). Call it under the engine lock. */
GOBLIN_API void goblin_serve_bgsave_ended_sized(
    const struct goblin_serve_persist *p, size_t p_size, const char *path,
    long pid, int wstatus);
static inline void goblin_serve_bgsave_ended(
    const struct goblin_serve_persist *p, const char *path, long pid,
    int wstatus)
{
    goblin_serve_bgsave_ended_sized(p, sizeof(*p), path, pid, wstatus);
}

/* ---- a forking server's persistence ----
 *
 * A goblin_persist does what a server that forks needs around the policy
 * above: BGSAVE, BGREWRITEAOF and the automatic AOF rewrite run in
 * children, through the engine's bgsave and aof_rewrite hooks and the
 * server's fork hook (the library never forks by itself); the children
 * are reaped by pid when the server sees SIGCHLD; appendonly is followed
 * at start (the AOF, when there is one, loads instead of the snapshot, as
 * Redis prefers it) and on CONFIG SET; the final save comes at SIGTERM.
 * The server keeps the process: the fork, signals, its log. Every call
 * after goblin_persist_load is made under the engine lock. */
typedef struct goblin_persist goblin_persist;

/* Sized as every configuration struct (goblin/common.h). */
struct goblin_persist_config {
    /* Required: forks as fork(2) does (-1 with errno set; 0 in the child;
     * the child's pid), once the server flushed what it buffers. In the
     * child it sets *keep_fd to the one descriptor from 3 up that the
     * child keeps (its log file; -1: none). */
    int (*fork)(void *ctx, int *keep_fd);
    void *fork_ctx;
    void (*log)(void *ctx, enum goblin_log_level level, const char *text);
    void *log_ctx;
};

/* Returns 0, GOBLIN_EINVAL or GOBLIN_ENOMEM. cfg is copied. */
GOBLIN_API int goblin_persist_new_sized(
    const struct goblin_persist_config *cfg, size_t cfg_size,
    goblin_persist **out);
static inline int goblin_persist_new(const struct goblin_persist_config *cfg,
                                     goblin_persist **out)
{
    return goblin_persist_new_sized(cfg, sizeof(*cfg), out);
}

/* Sets the bgsave, bgsave_kill and aof_rewrite hooks of the engine's
 * configuration (before goblin_engine_open) to p's. */
GOBLIN_API void goblin_persist_engine_hooks(goblin_persist *p,
                                            struct goblin_engine_config *ecfg);

/* Before serving, the engine open with p's hooks and configured: the AOF
 * with appendonly yes (if there is one), else goblin_serve_load, then
 * appendonly. Returns as goblin_serve_load (1 after export-rdb). */
GOBLIN_API int goblin_persist_load(goblin_persist *p, goblin_engine *eng,
                                   char *err, size_t cap);

/* CONFIG SET appendonly (after start): opens the AOF (its base is the
 * data now) or closes it. 0, or -1 with the reason in *why (p's). */
GOBLIN_API int goblin_persist_appendonly(goblin_persist *p, bool on,
                                         const char **why);

/* SIGCHLD: reaps the children that ended and finishes their work
 * (goblin_serve_bgsave_ended, goblin_aof_rewrite_done); wait: waits for
 * them. Only p's own children are waited for. */
GOBLIN_API void goblin_persist_reap(goblin_persist *p, bool wait);

/* SHUTDOWN, exit: kills the running children and reaps them (a killed
 * save's temporary file is removed). NULL: nothing. */
GOBLIN_API void goblin_persist_kill(goblin_persist *p);

/* SIGTERM: goblin_serve_final_save. True when the server may stop. */
GOBLIN_API bool goblin_persist_final_save(goblin_persist *p);

/* Kills the children, closes the AOF and frees p. NULL is a no-op. */
GOBLIN_API void goblin_persist_close(goblin_persist *p);

/* ---- serving from the settings ----
 *
 * What a server configured with Redis's directives opens: the listener
 * set reads port, bind, tls-port, unixsocket and unixsocketperm from the
 * engine (after the config file and command line were applied) and
 * listens on each, with Redis's rules and log lines (see
 * goblin_listen_tcp); the limits callback reads maxclients, timeout and
 * protected-mode; the maxclients calls fit the process's open-file limit
 * to maxclients as Redis does. */
typedef struct goblin_listen_set goblin_listen_set;

/* Sized as every configuration struct (goblin/common.h). */
struct goblin_listen_set_config {
    goblin_engine *engine;       /* required; its settings are read once */
    bool tls;                    /* the caller puts TLS under tls-port's
                                  * connections; false: tls-port is an
                                  * error */
    void (*log)(void *ctx, enum goblin_log_level level, const char *text);
    void *log_ctx;
};

/* Opens every listener into *out: TCP on each bind address for port,
 * then for tls-port (secure), then the Unix socket. Returns 0, or a
 * negative code after logging why (nowhere to listen, an address that
 * cannot be had); *out is then still set, with what was opened, for
 * goblin_listen_set_close. GOBLIN_ENOMEM leaves *out NULL. */
GOBLIN_API int goblin_listen_set_open_sized(
    const struct goblin_listen_set_config *cfg, size_t cfg_size,
    goblin_listen_set **out);
static inline int goblin_listen_set_open(
    const struct goblin_listen_set_config *cfg, goblin_listen_set **out)
{
    return goblin_listen_set_open_sized(cfg, sizeof(*cfg), out);
}

/* The number of listeners, and listener i (NULL past the end), for the
 * loop to watch and to pass to goblin_net_accept. */
GOBLIN_API int goblin_listen_set_count(const goblin_listen_set *ls);
GOBLIN_API const struct goblin_listener *goblin_listen_set_get(
    const goblin_listen_set *ls, int i);

/* Closes every listener and removes the Unix socket file ("Removing the
 * unix socket file." at NOTICE). NULL is a no-op. */
GOBLIN_API void goblin_listen_set_close(goblin_listen_set *ls);

/* A limits_get callback (struct goblin_net_config) reading maxclients,
 * timeout and protected-mode from the engine passed as ctx. */
GOBLIN_API void goblin_net_limits_from_settings(
    void *engine, struct goblin_net_limits *out);

/* At start, after the settings were read: raises the open-file limit so
 * maxclients connections fit, or when the hard limit does not allow it,
 * lowers maxclients to what fits, logging Redis's two warnings. */
GOBLIN_API void goblin_serve_maxclients_fit(
    goblin_engine *eng,
    void (*log)(void *ctx, enum goblin_log_level level, const char *text),
    void *log_ctx);

/* For a server's changed hook on maxclients (goblin_config_hooks), once
 * serving: raises the open-file limit if needed; returns 0 when the new
 * value fits, else -1 with Redis's refusal in why. */
GOBLIN_API int goblin_serve_maxclients_check(const goblin_engine *eng,
                                             char *why, size_t cap);

/* ---- an epoll loop (Linux) ----
 *
 * A ready-made event loop for a server whose sockets are all goblin_conn's
 * (an application with its own loop drives the connections itself, see
 * "socket connections"): it opens the net, accepts on the listener set's
 * listeners, drives the connections with goblin_conn_event, hands woken
 * ones back to them (watching goblin_net_wake_fd for wakes from other
 * threads), runs goblin_net_cron about ten times a second, and
 * calls ready for each of the caller's own descriptors that is readable.
 * After client traffic it keeps polling for socket-spin-us (a setting)
 * before it sleeps, so an unpipelined client's next request finds it
 * awake (docs/threading.md). The loop, its net and its connections belong
 * to the thread that runs it; it calls into the engine only through the
 * net (under the net's lock). */
typedef struct goblin_epoll goblin_epoll;

/* Sized as every configuration struct (goblin/common.h). */
struct goblin_epoll_config {
    /* Required: the net the loop opens (copied at open); its closing
     * callback is still called, after the loop forgot the descriptor. */
    const struct goblin_net_config *net;
    goblin_listen_set *listen;   /* borrowed; NULL: nothing to accept */
    /* For each connection accepted on a secure listener: puts the I/O
     * layer under it (goblin_tls_attach); nonzero, or NULL, closes it. */
    int (*secure)(void *ctx, goblin_conn *c);
    void *secure_ctx;
};

/* Returns 0, GOBLIN_EINVAL, GOBLIN_ENOMEM or a negative errno. */
GOBLIN_API int goblin_epoll_open_sized(const struct goblin_epoll_config *cfg,
                                       size_t cfg_size, goblin_epoll **out);
static inline int goblin_epoll_open(const struct goblin_epoll_config *cfg,
                                    goblin_epoll **out)
{
    return goblin_epoll_open_sized(cfg, sizeof(*cfg), out);
}

/* Watches one more readable descriptor of the caller's (a signalfd, an
 * eventfd; at most 8): the loop calls ready(ctx), without the lock, each
 * time it is readable. Returns 0, GOBLIN_ERANGE or a negative errno. */
GOBLIN_API int goblin_epoll_add(goblin_epoll *ep, int fd,
                                void (*ready)(void *ctx), void *ctx);

/* The loop's net (for goblin_net_count ...). */
GOBLIN_API goblin_net *goblin_epoll_net(goblin_epoll *ep);

/* Serves until goblin_epoll_stop. Returns 0, or a negative errno after
 * logging (through the net's log) when epoll_wait fails. */
GOBLIN_API int goblin_epoll_run(goblin_epoll *ep);

/* For a script past busy-reply-threshold running on the loop's own
 * thread (goblin_engine_busy_hook), called without the engine lock: one
 * non-blocking pass that serves the other connections (the engine
 * answers them BUSY, and lets SCRIPT KILL and SHUTDOWN NOSAVE through)
 * and accepts new ones, leaving busy's connection alone. Closing a
 * connection waits for the loop's next pass of its own. */
GOBLIN_API void goblin_epoll_serve_busy(goblin_epoll *ep,
                                        const goblin_session *busy);

/* Installs the engine's busy hook (goblin_engine_busy_hook) for a server
 * that runs this loop, and ring pollers sharing the net's lock: each time
 * a script past busy-reply-threshold yields, the hook lets go of the lock
 * for a moment, so that other threads serve their clients (answered BUSY
 * but for SCRIPT KILL, FUNCTION KILL and SHUTDOWN NOSAVE); on the loop's
 * thread it makes one goblin_epoll_serve_busy pass, on a poller's thread
 * one goblin_ring_poller_serve_busy pass. Once goblin_epoll_stop was
 * called the script is stopped, written or not, so the server can exit.
 * goblin_epoll_close removes the hook. */
GOBLIN_API void goblin_epoll_busy_hook(goblin_epoll *ep);

/* Whether goblin_epoll_stop was called. */
GOBLIN_API bool goblin_epoll_stopping(const goblin_epoll *ep);

/* Asks run to return (NULL: nothing): at once from the loop's own
 * callbacks and commands, within 100 ms from any other thread. */
GOBLIN_API void goblin_epoll_stop(goblin_epoll *ep);

/* Closes the net (every connection) and frees the loop; not the
 * listeners. NULL is a no-op. */
GOBLIN_API void goblin_epoll_close(goblin_epoll *ep);

#ifdef __cplusplus
}
#endif

#endif
