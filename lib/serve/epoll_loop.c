/* epoll_loop.c - a ready-made event loop for socket connections on Linux
 * (goblin/serve.h, "an epoll loop"): it opens the net, watches the
 * listeners, accepts (with TLS or another layer on secure listeners),
 * drives every goblin_conn, hands woken connections (CLIENT KILL) back to
 * them, runs the net's cron ten times a second and serves the caller's
 * own descriptors (a signalfd ...).
 *
 * Epoll data: listeners carry their index (< LISTEN_TAGS), the caller's
 * descriptors EXTRA_TAG + their index, the net's wake descriptor
 * WAKE_TAG (a connection woken from another thread, such as a ring
 * client's push serving a socket client blocked in BLPOP: the woken list
 * after the batch takes it), a replica's link descriptor LINK_TAG
 * (goblin_repl_link_fd: goblin_repl_link_ready under the lock), and
 * connections their goblin_conn pointer. Reads are level triggered; a connection asks for EPOLLOUT only
 * while output is pending. A connection is closed only from its own
 * event, the woken list or cron, so no event in a batch can refer to a
 * closed one, and it leaves the epoll set before its descriptor closes (a
 * forked child may hold a copy, and epoll drops a registration only when
 * every copy is closed). The loop sleeps in epoll_wait with a timeout
 * only for cron.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <goblin/repl.h>   /* goblin_repl_link_fd */
#include <goblin/script.h> /* goblin_engine_busy_hook */
#include <goblin/serve.h>

#include "serve_int.h"
#include "util/config_size.h"

#define LISTEN_TAGS 64
#define EXTRA_TAG 64
#define MAX_EXTRA 8
#define WAKE_TAG (EXTRA_TAG + MAX_EXTRA)   /* the net's wake_fd */
#define LINK_TAG (WAKE_TAG + 1)   /* a replica's link (goblin/repl.h) */
#define MAX_ACCEPTS_PER_EVENT 1000
#define CRON_MS 100

struct goblin_epoll {
    struct goblin_epoll_config cfg;
    struct goblin_net_config ncfg;   /* the caller's, closing replaced */
    void (*closing)(void *ctx, goblin_conn *c, int fd);
    void *closing_ctx;
    goblin_net *net;
    int epfd;
    int nextra;
    struct { void (*ready)(void *ctx); void *ctx; } extra[MAX_EXTRA];
    int64_t loop_ms;             /* monotonic ms, read once per wake-up */
    bool accept_paused;          /* out of descriptors: until next cron */
    const goblin_session *busy;  /* in goblin_epoll_serve_busy: its
                                    connection is on the stack */
    bool nested;
    bool busy_hooked;            /* goblin_epoll_busy_hook installed */
    atomic_bool stop;
};

static void say(goblin_epoll *ep, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void say(goblin_epoll *ep, const char *fmt, ...)
{
    char text[512];
    va_list ap;

    if (ep->ncfg.log == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    ep->ncfg.log(ep->ncfg.log_ctx, GOBLIN_LOG_WARNING, text);
}

static int64_t mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int watch(goblin_epoll *ep, int op, int fd, uint32_t events,
                 uint64_t tag)
{
    struct epoll_event ev = {.events = events, .data.u64 = tag};

    return epoll_ctl(ep->epfd, op, fd, &ev);
}

static void conn_closing(void *ctx, goblin_conn *c, int fd)
{
    goblin_epoll *ep = ctx;

    watch(ep, EPOLL_CTL_DEL, fd, 0, 0);
    if (ep->closing != NULL)
        ep->closing(ep->closing_ctx, c, fd);
}

/* Applies what a connection asks for after an event. */
static void apply(goblin_epoll *ep, goblin_conn *c, int m)
{
    if ((m & GOBLIN_CONN_CLOSE) && ep->nested) {
        /* The outer pass may hold c in its batch: closed after it. */
        watch(ep, EPOLL_CTL_MOD, goblin_conn_fd(c), 0, (uintptr_t)c);
        goblin__conn_defer_close(c);
    } else if (m & GOBLIN_CONN_CLOSE)
        goblin_conn_close(c);
    else if (m & GOBLIN_CONN_CHANGED)
        watch(ep, EPOLL_CTL_MOD, goblin_conn_fd(c),
              (m & GOBLIN_CONN_READ ? EPOLLIN : 0) |
                  (m & GOBLIN_CONN_WRITE ? EPOLLOUT : 0),
              (uintptr_t)c);
}

/* Out of descriptors (EMFILE, ENFILE): the listeners stay readable, so a
 * level-triggered loop would spin and log without end. They are left
 * unwatched until the next cron tick, when accept is tried again. */
static void accept_pause(goblin_epoll *ep, bool pause)
{
    for (int i = 0; i < goblin_listen_set_count(ep->cfg.listen); i++)
        watch(ep, EPOLL_CTL_MOD, goblin_listen_set_get(ep->cfg.listen, i)->fd,
              pause ? 0 : EPOLLIN, (uint64_t)i);
    ep->accept_paused = pause;
}

static void accept_ready(goblin_epoll *ep, int index)
{
    const struct goblin_listener *l = goblin_listen_set_get(ep->cfg.listen,
                                                            index);

    for (int i = 0; i < MAX_ACCEPTS_PER_EVENT; i++) {
        goblin_conn *c;
        int rc = goblin_net_accept(ep->net, l, &c);

        if (rc == -EMFILE || rc == -ENFILE)
            accept_pause(ep, true);
        if (rc <= 0)
            return;
        if (c == NULL)
            continue;
        if (l->secure && (ep->cfg.secure == NULL ||
                          ep->cfg.secure(ep->cfg.secure_ctx, c) < 0)) {
            say(ep, "Error creating the TLS session of a new client");
            goblin_conn_close(c);
            continue;
        }
        if (watch(ep, EPOLL_CTL_ADD, goblin_conn_fd(c), EPOLLIN,
                  (uintptr_t)c) < 0) {
            say(ep, "Error registering fd event for the new client: out of "
                "memory or descriptors");
            goblin_conn_close(c);
        }
    }
}

static void dispatch(goblin_epoll *ep, const struct epoll_event *ev)
{
    uint64_t tag = ev->data.u64;

    if (tag < LISTEN_TAGS) {
        accept_ready(ep, (int)tag);
    } else if (tag < EXTRA_TAG + MAX_EXTRA) {
        ep->extra[tag - EXTRA_TAG].ready(ep->extra[tag - EXTRA_TAG].ctx);
    } else if (tag == WAKE_TAG) {
        /* a woken connection: goblin_net_woken after the batch takes it */
    } else if (tag == LINK_TAG) {
        if (ep->ncfg.lock != NULL)
            ep->ncfg.lock(ep->ncfg.lock_ctx);
        goblin_repl_link_ready(ep->ncfg.engine);
        if (ep->ncfg.unlock != NULL)
            ep->ncfg.unlock(ep->ncfg.lock_ctx);
    } else {
        goblin_conn *c = (void *)(uintptr_t)tag;

        if (ep->nested && goblin__conn_session(c) == ep->busy)
            return; /* its script is the one running */
        apply(ep, c, goblin_conn_event(c, ev->events & (EPOLLIN | EPOLLERR |
                                                        EPOLLHUP),
                                       ev->events & EPOLLOUT));
    }
}

/* True when an event in evs[0..n) came from a client connection. */
static bool client_traffic(const struct epoll_event *evs, int n)
{
    for (int i = 0; i < n; i++)
        if (evs[i].data.u64 > LINK_TAG)
            return true;
    return false;
}

/* socket-spin-us, which CONFIG SET may change (so under the lock). */
static int64_t spin_setting(goblin_epoll *ep)
{
    int64_t ns;

    if (ep->ncfg.lock != NULL)
        ep->ncfg.lock(ep->ncfg.lock_ctx);
    ns = goblin_engine_config_int(ep->ncfg.engine, "socket-spin-us", 0) *
         1000;
    if (ep->ncfg.unlock != NULL)
        ep->ncfg.unlock(ep->ncfg.lock_ctx);
    return ns;
}

int goblin_epoll_open_sized(const struct goblin_epoll_config *cfg,
                            size_t cfg_size, goblin_epoll **out)
{
    goblin_epoll *ep = calloc(1, sizeof(*ep));
    int rc = GOBLIN_EINVAL, lfd;

    *out = NULL;
    if (ep == NULL)
        return GOBLIN_ENOMEM;
    if (cfg == NULL || goblin__config_copy(&ep->cfg, sizeof(ep->cfg), cfg,
                                           cfg_size, sizeof(cfg->net)) ||
        ep->cfg.net == NULL)
        goto fail;
    ep->ncfg = *ep->cfg.net;
    ep->cfg.net = NULL;                   /* borrowed for the call only */
    ep->closing = ep->ncfg.closing;
    ep->closing_ctx = ep->ncfg.closing_ctx;
    ep->ncfg.closing = conn_closing;
    ep->ncfg.closing_ctx = ep;
    ep->loop_ms = mono_ns() / 1000000;
    if ((ep->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
        rc = -errno;
        goto fail;
    }
    if ((rc = goblin_net_open(&ep->ncfg, &ep->net)) < 0)
        goto fail;
    if (goblin_net_wake_fd(ep->net) >= 0 &&
        watch(ep, EPOLL_CTL_ADD, goblin_net_wake_fd(ep->net), EPOLLIN,
              WAKE_TAG) < 0) {
        rc = -errno;
        goto fail;
    }
    for (int i = 0; i < goblin_listen_set_count(ep->cfg.listen); i++)
        if (watch(ep, EPOLL_CTL_ADD,
                  goblin_listen_set_get(ep->cfg.listen, i)->fd, EPOLLIN,
                  (uint64_t)i) < 0) {
            rc = -errno;
            goto fail;
        }
    /* Without it, the engine's cron drives a replica's link. */
    if ((lfd = goblin_repl_link_fd(ep->ncfg.engine)) >= 0)
        watch(ep, EPOLL_CTL_ADD, lfd, EPOLLIN, LINK_TAG);
    *out = ep;
    return 0;
fail:
    goblin_epoll_close(ep);
    return rc;
}

int goblin_epoll_add(goblin_epoll *ep, int fd, void (*ready)(void *ctx),
                     void *ctx)
{
    if (ep->nextra == MAX_EXTRA)
        return GOBLIN_ERANGE;
    if (watch(ep, EPOLL_CTL_ADD, fd, EPOLLIN,
              (uint64_t)(EXTRA_TAG + ep->nextra)) < 0)
        return -errno;
    ep->extra[ep->nextra].ready = ready;
    ep->extra[ep->nextra++].ctx = ctx;
    return 0;
}

goblin_net *goblin_epoll_net(goblin_epoll *ep)
{
    return ep->net;
}

const struct goblin_net_config *goblin__epoll_net_config(
    const goblin_epoll *ep)
{
    return &ep->ncfg;
}

void goblin_epoll_busy_hook(goblin_epoll *ep)
{
    goblin_engine_busy_hook(ep->ncfg.engine, goblin__busy_hook, ep);
    ep->busy_hooked = true;
}

/* The loop. After client traffic it polls (epoll_wait with no timeout)
 * for socket-spin-us before sleeping again: a client that sends its next
 * request soon after its reply, as an unpipelined client does, then
 * finds the server awake instead of paying the scheduler's wake-up. An
 * idle server sleeps in epoll_wait and uses no CPU. */
static int run(goblin_epoll *ep)
{
    struct epoll_event evs[256];
    int64_t next_cron = mono_ns() / 1000000 + CRON_MS;
    int64_t spin_ns = spin_setting(ep), spin_until = 0;
    goblin_conn *c;
    int m;

    while (!atomic_load_explicit(&ep->stop, memory_order_relaxed)) {
        /* loop_ms was read after the last wake-up: one clock read each. */
        int64_t wait = next_cron - ep->loop_ms;
        bool spinning = spin_until != 0;
        int n = epoll_wait(ep->epfd, evs, 256,
                           spinning ? 0 : wait > 0 ? (int)wait : 0);

        if (n < 0 && errno != EINTR) {
            say(ep, "epoll_wait: %s", strerror(errno));
            return -errno;
        }
        if (n <= 0 && spinning) {
            int64_t now = mono_ns();

            if (now < spin_until && now / 1000000 < next_cron)
                continue;
            spin_until = 0;
        }
        ep->loop_ms = mono_ns() / 1000000;
        goblin__net_pass_begin(ep->net);
        for (int i = 0; i < n; i++)
            dispatch(ep, &evs[i]);
        /* One fsync for the pass's writes, then the replies held for it
         * (appendfsync always), before anything woken is answered. */
        while ((c = goblin__net_pass_next(ep->net, &m)) != NULL)
            apply(ep, c, m);
        while ((c = goblin_net_woken(ep->net)) != NULL) /* kill, unblock */
            apply(ep, c, goblin_conn_event(c, false, false));
        if (n > 0 && spin_ns > 0 && client_traffic(evs, n))
            spin_until = mono_ns() + spin_ns;
        if (ep->loop_ms >= next_cron) {
            goblin_net_cron(ep->net);
            if (ep->accept_paused)
                accept_pause(ep, false);
            spin_ns = spin_setting(ep);
            next_cron += CRON_MS;
            if (next_cron <= ep->loop_ms)
                next_cron = ep->loop_ms + CRON_MS;
        }
    }
    return 0;
}

int goblin_epoll_run(goblin_epoll *ep)
{
    goblin_epoll *outer = goblin__running_loop;
    int rc;

    goblin__running_loop = ep;   /* for the busy hook (busy.c) */
    rc = run(ep);
    goblin__running_loop = outer;
    return rc;
}

/* One pass over what is ready, from inside a busy script on the loop's
 * own thread, the engine lock released: other connections are served
 * (the engine answers them BUSY), new ones accepted, but busy's own
 * connection is left alone, the woken list and cron wait for the outer
 * pass, and nothing is freed (closing is deferred to that pass). */
void goblin_epoll_serve_busy(goblin_epoll *ep, const goblin_session *busy)
{
    struct epoll_event evs[64];
    int n;

    if (ep->nested)
        return;
    n = epoll_wait(ep->epfd, evs, 64, 0);
    ep->nested = true;
    ep->busy = busy;
    for (int i = 0; i < n; i++)
        dispatch(ep, &evs[i]);
    ep->nested = false;
    ep->busy = NULL;
}

bool goblin_epoll_stopping(const goblin_epoll *ep)
{
    return atomic_load_explicit(&ep->stop, memory_order_relaxed);
}

void goblin_epoll_stop(goblin_epoll *ep)
{
    if (ep != NULL)
        atomic_store(&ep->stop, true);
}

void goblin_epoll_close(goblin_epoll *ep)
{
    if (ep == NULL)
        return;
    if (ep->busy_hooked)
        goblin_engine_busy_hook(ep->ncfg.engine, NULL, NULL);
    goblin_net_close(ep->net);
    if (ep->epfd > 0)
        close(ep->epfd);
    free(ep);
}
