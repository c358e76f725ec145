/* net_epoll.c - goblind's event loop: listeners (the library's helpers,
 * Redis's bind rules), an epoll loop that drives the library's socket
 * connections (goblin/serve.h: goblin_net, goblin_conn), TLS from
 * libgoblin-tls when built with it, signals and cron.
 *
 * Epoll data: listeners carry their index (< LISTEN_TAGS), the signalfd
 * SIGNAL_TAG, and connections their goblin_conn pointer. Reads are level
 * triggered; a connection asks for EPOLLOUT only while output is pending.
 * A connection is closed only from its own event, the woken list or cron,
 * so no event in a batch can refer to a closed one. The loop sleeps in
 * epoll_wait with a timeout only for cron (10 times a second).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "goblind.h"

#ifdef GOBLIND_TLS
#include <goblin/tls.h>
#endif

#define LISTEN_TAGS 64
#define SIGNAL_TAG 100
#define WAKE_TAG 101
#define MAX_ACCEPTS_PER_EVENT 1000
#define CRON_MS 100

/* The Unix socket's path as the listener names it to CLIENT LIST: a copy,
 * since the option's own string may be replaced when settings change. */
static char unix_path[108];

static int64_t mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int watch(struct goblind *g, int op, int fd, uint32_t events,
                 uint64_t tag)
{
    struct epoll_event ev = {.events = events, .data.u64 = tag};

    return epoll_ctl(g->epfd, op, fd, &ev);
}

/* Explicitly: a BGSAVE child may still hold a copy of the socket, and
 * epoll drops a registration only when every copy is closed. */
static void conn_closing(void *ctx, goblin_conn *c, int fd)
{
    (void)c;
    watch(ctx, EPOLL_CTL_DEL, fd, 0, 0);
}

/* Applies what a connection asks for after an event. */
static void apply(struct goblind *g, goblin_conn *c, int m)
{
    if (m & GOBLIN_CONN_CLOSE)
        goblin_conn_close(c);
    else if (m & GOBLIN_CONN_CHANGED)
        watch(g, EPOLL_CTL_MOD, goblin_conn_fd(c),
              (m & GOBLIN_CONN_READ ? EPOLLIN : 0) |
                  (m & GOBLIN_CONN_WRITE ? EPOLLOUT : 0),
              (uintptr_t)c);
}

static void limits_get(void *ctx, struct goblin_net_limits *out)
{
    struct goblind *g = ctx;

    *out = (struct goblin_net_limits){g->maxclients, g->timeout,
                                      g->protected_mode};
}

/* Out of descriptors (EMFILE, ENFILE): the listeners stay readable, so a
 * level-triggered loop would spin and log without end. They are left
 * unwatched until the next cron tick, when accept is tried again. */
static void accept_pause(struct goblind *g, bool pause)
{
    for (int i = 0; i < g->nlisten; i++)
        watch(g, EPOLL_CTL_MOD, g->listeners[i].fd, pause ? 0 : EPOLLIN,
              (uint64_t)i);
    g->accept_paused = pause;
}

static void accept_ready(struct goblind *g, int index)
{
    const struct goblin_listener *l = &g->listeners[index];

    for (int i = 0; i < MAX_ACCEPTS_PER_EVENT; i++) {
        goblin_conn *c;
        int rc = goblin_net_accept(g->net, l, &c);

        if (rc == -EMFILE || rc == -ENFILE)
            accept_pause(g, true);
        if (rc <= 0)
            return;
        if (c == NULL)
            continue;
#ifdef GOBLIND_TLS
        if (l->secure && goblin_tls_attach(g->tls, c) < 0) {
            goblind_log(g, GOBLIN_LOG_WARNING, "Error creating the TLS "
                        "session of a new client");
            goblin_conn_close(c);
            continue;
        }
#endif
        if (watch(g, EPOLL_CTL_ADD, goblin_conn_fd(c), EPOLLIN,
                  (uintptr_t)c) < 0) {
            goblind_log(g, GOBLIN_LOG_WARNING, "Error registering fd event "
                        "for the new client: out of memory or descriptors");
            goblin_conn_close(c);
        }
    }
}

static void signal_ready(struct goblind *g)
{
    struct signalfd_siginfo si;
    bool stop;

    if (read(g->sigfd, &si, sizeof(si)) != sizeof(si))
        return;
    goblind_lock(g);
    if (si.ssi_signo == SIGCHLD) {      /* a BGSAVE child ended */
        goblind_persist_reap(g);
        goblind_unlock(g);
        return;
    }
    goblind_log(g, GOBLIN_LOG_WARNING, "Received %s scheduling shutdown...",
                si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
    stop = goblin_serve_final_save(&g->persist);
    goblind_unlock(g);
    g->stopping = g->stopping || stop;
}

static void dispatch(struct goblind *g, const struct epoll_event *ev)
{
    uint64_t tag = ev->data.u64;

    if (tag < LISTEN_TAGS) {
        accept_ready(g, (int)tag);
    } else if (tag == SIGNAL_TAG) {
        signal_ready(g);
    } else if (tag == WAKE_TAG) {
        /* a woken connection: goblin_net_woken below takes it */
    } else {
        goblin_conn *c = (void *)(uintptr_t)tag;

        apply(g, c, goblin_conn_event(c, ev->events & (EPOLLIN | EPOLLERR |
                                                       EPOLLHUP),
                                      ev->events & EPOLLOUT));
    }
}

/* True when an event in evs[0..n) came from a client connection. */
static bool client_traffic(const struct epoll_event *evs, int n)
{
    for (int i = 0; i < n; i++)
        if (evs[i].data.u64 >= LISTEN_TAGS && evs[i].data.u64 != SIGNAL_TAG &&
            evs[i].data.u64 != WAKE_TAG)
            return true;
    return false;
}

static int64_t spin_setting(struct goblind *g)
{
    int64_t ns;

    goblind_lock(g);                    /* CONFIG SET may change it */
    ns = g->socket_spin_us * 1000;
    goblind_unlock(g);
    return ns;
}

/* The loop. After client traffic it polls (epoll_wait with no timeout)
 * for socket-spin-us before sleeping again: a client that sends its next
 * request soon after its reply, as an unpipelined client does, then
 * finds the server awake instead of paying the scheduler's wake-up. An
 * idle server sleeps in epoll_wait and uses no CPU. */
int goblind_run(struct goblind *g)
{
    struct epoll_event evs[256];
    int64_t next_cron = mono_ns() / 1000000 + CRON_MS;
    int64_t spin_ns = spin_setting(g), spin_until = 0;
    goblin_conn *c;

    while (!g->stopping) {
        /* loop_ms was read after the last wake-up: one clock read each. */
        int64_t wait = next_cron - g->loop_ms;
        bool spinning = spin_until != 0;
        int n = epoll_wait(g->epfd, evs, 256,
                           spinning ? 0 : wait > 0 ? (int)wait : 0);

        if (n < 0 && errno != EINTR) {
            goblind_log(g, GOBLIN_LOG_WARNING, "epoll_wait: %s",
                        strerror(errno));
            return -1;
        }
        if (n <= 0 && spinning) {
            int64_t now = mono_ns();

            if (now < spin_until && now / 1000000 < next_cron)
                continue;
            spin_until = 0;
        }
        g->loop_ms = mono_ns() / 1000000;
        for (int i = 0; i < n; i++)
            dispatch(g, &evs[i]);
        while ((c = goblin_net_woken(g->net)) != NULL) /* kill, unblock */
            apply(g, c, goblin_conn_event(c, false, false));
        if (n > 0 && spin_ns > 0 && client_traffic(evs, n))
            spin_until = mono_ns() + spin_ns;
        if (g->loop_ms >= next_cron) {
            goblin_net_cron(g->net);
            if (g->accept_paused)
                accept_pause(g, false);
            spin_ns = spin_setting(g);
            next_cron += CRON_MS;
            if (next_cron <= g->loop_ms)
                next_cron = g->loop_ms + CRON_MS;
        }
    }
    return 0;
}

/* Watches a listening descriptor (closed on failure). */
static int add_listener(struct goblind *g, int fd, bool is_unix,
                        bool secure)
{
    if (g->nlisten > 2 * GOBLIND_MAX_BIND ||
        watch(g, EPOLL_CTL_ADD, fd, EPOLLIN, (uint64_t)g->nlisten) < 0) {
        close(fd);
        return -1;
    }
    g->listeners[g->nlisten++] = (struct goblin_listener){
        fd, is_unix ? GOBLIN_TRANSPORT_UNIX : GOBLIN_TRANSPORT_TCP, secure,
        unix_path};
    return 0;
}

/* Every bind address on port; 0, or -1 after logging why. */
static int listen_port(struct goblind *g, long port, bool secure)
{
    int before = g->nlisten;

    for (int i = 0; port != 0 && i < g->nbind; i++) {
        char msg[512];
        bool skipped;
        int fd = goblin_listen_tcp(g->bind[i], port, g->bind_default,
                                   &skipped, msg, sizeof(msg));

        if (fd < 0)
            goblind_log(g, GOBLIN_LOG_WARNING, "%s", msg);
        if ((fd < 0 && !skipped) ||
            (fd >= 0 && add_listener(g, fd, false, secure) < 0))
            return -1;
    }
    if (port != 0 && g->nlisten == before) {
        goblind_log(g, GOBLIN_LOG_WARNING, "Failed listening on port %ld "
                    "(tcp), aborting.", port);
        return -1;
    }
    return 0;
}

static int tls_init(struct goblind *g)
{
    char err[512];

    if (g->tls_port == 0)
        return 0;
#ifdef GOBLIND_TLS
    struct goblin_tls_server_config cfg = {g->tls_cert_file, g->tls_key_file,
                                           g->tls_ca_cert_file,
                                           g->tls_auth_clients};

    if (goblin_tls_server_open(&cfg, (goblin_tls_server **)&g->tls, err,
                               sizeof(err)) == 0)
        return 0;
#else
    snprintf(err, sizeof(err), "tls-port is set but this goblind was built "
             "without TLS (meson -Dtls=enabled)");
#endif
    goblind_log(g, GOBLIN_LOG_WARNING, "%s", err);
    return -1;
}

/* Blocks SIGTERM, SIGINT and SIGCHLD and reads them from a signalfd in
 * the loop, so shutdown and reaping a BGSAVE child run in the normal
 * flow: no work in a signal handler. */
static int watch_signals(struct goblind *g)
{
    sigset_t set;

    signal(SIGPIPE, SIG_IGN);
    /* An inherited SIG_IGN would drop the signals before signalfd saw
     * them; blocked with the default action they wait for us. */
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGCHLD);
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
        return -1;
    g->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (g->sigfd < 0)
        return -1;
    return watch(g, EPOLL_CTL_ADD, g->sigfd, EPOLLIN, SIGNAL_TAG);
}

int goblind_listen(struct goblind *g)
{
    struct goblin_net_config cfg = {
        .engine = g->engine, .lock = goblind_lock, .unlock = goblind_unlock,
        .lock_ctx = g, .log = goblind_engine_log, .log_ctx = g,
        .limits_get = limits_get, .limits_ctx = g,
        .no_sbe_tcp = !g->sbe_tcp, .no_sbe_unix = !g->sbe_unixsocket,
        .closing = conn_closing, .closing_ctx = g};
    char msg[512];
    int fd;

    g->loop_ms = mono_ns() / 1000000;
    g->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (g->epfd < 0 || watch_signals(g) < 0 ||
        goblin_net_open(&cfg, &g->net) < 0) {
        goblind_log(g, GOBLIN_LOG_WARNING, "epoll/signalfd: %s",
                    strerror(errno));
        return -1;
    }
    if (goblin_net_wake_fd(g->net) >= 0 &&
        watch(g, EPOLL_CTL_ADD, goblin_net_wake_fd(g->net), EPOLLIN,
              WAKE_TAG) < 0)
        return -1;
    if (g->port == 0 && g->tls_port == 0 && g->unixsocket == NULL) {
        goblind_log(g, GOBLIN_LOG_WARNING, "Configured to not listen "
                    "anywhere, exiting.");
        return -1;
    }
    if (listen_port(g, g->port, false) < 0 || tls_init(g) < 0 ||
        listen_port(g, g->tls_port, true) < 0)
        return -1;
    if (g->unixsocket == NULL)
        return 0;
    snprintf(unix_path, sizeof(unix_path), "%s", g->unixsocket);
    fd = goblin_listen_unix(g->unixsocket, (unsigned)g->unixsocketperm, msg,
                            sizeof(msg));
    if (fd < 0)
        goblind_log(g, GOBLIN_LOG_WARNING, "%s", msg);
    return fd < 0 ? -1 : add_listener(g, fd, true, false);
}

/* Closes every connection and listener and removes the Unix socket. */
void goblind_shutdown_net(struct goblind *g)
{
    goblin_net_close(g->net);
    g->net = NULL;
    for (int i = 0; i < g->nlisten; i++)
        close(g->listeners[i].fd);
    g->nlisten = 0;
    if (g->unixsocket != NULL && unlink(g->unixsocket) == 0)
        goblind_log(g, GOBLIN_LOG_NOTICE, "Removing the unix socket file.");
#ifdef GOBLIND_TLS
    goblin_tls_server_close(g->tls);
#endif
    g->tls = NULL;
    if (g->sigfd >= 0)
        close(g->sigfd);
    if (g->epfd >= 0)
        close(g->epfd);
    g->sigfd = g->epfd = -1;
}
