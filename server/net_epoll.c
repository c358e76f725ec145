/* net_epoll.c - goblind's sockets: TCP (IPv4 and IPv6) and Unix
 * listeners, one libgoblin session per connection, and the epoll loop.
 *
 * Latency rule: when a connection becomes readable we read once straight
 * into the session's input space, run every complete command, and write
 * the replies at once, in the same wake-up: one read and one write per
 * unpipelined request. Only a partial write registers EPOLLOUT, and it is
 * dropped again as soon as the output is drained. Reads are level
 * triggered, so bytes left in the socket after a short read wake us again
 * instead of costing a read that returns EAGAIN.
 *
 * The loop sleeps in epoll_wait with a timeout only for the engine's cron
 * (10 times a second), so an idle server uses no CPU.
 *
 * Epoll data: listeners carry their index (< LISTEN_TAGS), the signalfd
 * SIGNAL_TAG, and connections their struct pointer. A connection is freed
 * only from its own event, the woken list (after an event batch) or cron,
 * so no event in a batch can refer to a freed connection.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "goblind.h"

#define LISTEN_TAGS 64
#define SIGNAL_TAG 100
#define MAX_ACCEPTS_PER_EVENT 1000
#define CRON_MS 100
#define TCP_BACKLOG 511

struct goblind_conn {
    int fd;
    uint32_t events;           /* what epoll watches now */
    bool closing;              /* no more input; close once flushed */
    bool on_woken;
    goblin_session *s;
    int64_t last_ms;           /* last input, for the idle timeout */
    struct goblind_conn *prev, *next, *wnext;
};

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int watch(struct goblind *g, int op, int fd, uint32_t events,
                 uint64_t tag)
{
    struct epoll_event ev = {.events = events, .data.u64 = tag};

    return epoll_ctl(g->epfd, op, fd, &ev);
}

static void conn_close(struct goblind *g, struct goblind_conn *c)
{
    if (c->on_woken) {
        struct goblind_conn **pp = &g->woken;
        while (*pp != c)
            pp = &(*pp)->wnext;
        *pp = c->wnext;
    }
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        g->conns = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    goblind_log(g, GOBLIN_LOG_VERBOSE, "Client closed connection id=%llu",
                (unsigned long long)goblin_session_id(c->s));
    goblin_session_close(c->s);
    /* Explicitly: a BGSAVE child may still hold a copy of the socket, and
     * epoll drops a registration only when every copy is closed. */
    watch(g, EPOLL_CTL_DEL, c->fd, 0, 0);
    close(c->fd);
    free(c);
    g->nconns--;
}

/* Writes what the session has for its client, then decides what to wait
 * for next: input (unless closing), EPOLLOUT while output is pending. A
 * closing connection goes once its output is out (or cannot go). */
static void conn_flush(struct goblind *g, struct goblind_conn *c)
{
    size_t len;
    const void *out = goblin_session_output(c->s, &len);
    uint32_t events;

    while (len > 0) {
        ssize_t n = write(c->fd, out, len); /* SIGPIPE is ignored */
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN) {
            conn_close(g, c);
            return;
        }
        if (n > 0) {
            goblin_session_output_consume(c->s, (size_t)n);
            out = goblin_session_output(c->s, &len);
        }
        break; /* written all, or the socket is full: EPOLLOUT */
    }
    c->closing = c->closing || goblin_session_should_close(c->s);
    if (c->closing && len == 0) {
        conn_close(g, c);
        return;
    }
    events = (c->closing ? 0 : EPOLLIN) | (len > 0 ? EPOLLOUT : 0);
    if (events != c->events && watch(g, EPOLL_CTL_MOD, c->fd, events,
                                     (uintptr_t)c) == 0)
        c->events = events;
}

/* The one place a session runs bytes that arrived for it: n bytes were
 * written at its input space. A ring polling thread would take the engine
 * lock around this call (never around the read before it). */
static int session_run(struct goblind *g, struct goblind_conn *c, size_t n)
{
    int rc = goblin_session_input_commit(c->s, n);

    /* The engine reports both client limits as GOBLIN_ELIMIT. */
    if (rc == GOBLIN_ELIMIT)
        goblind_log(g, GOBLIN_LOG_WARNING, "Closing client that reached max "
                    "query buffer length or its output buffer limit: "
                    "id=%llu", (unsigned long long)goblin_session_id(c->s));
    return rc;
}

static void conn_readable(struct goblind *g, struct goblind_conn *c)
{
    for (;;) {
        size_t room;
        void *p = goblin_session_input_space(c->s, &room);
        ssize_t n;

        if (p == NULL) {   /* at the query buffer limit, or closing */
            if (!goblin_session_should_close(c->s))
                goblind_log(g, GOBLIN_LOG_WARNING, "Closing client that "
                            "reached max query buffer length: id=%llu",
                            (unsigned long long)goblin_session_id(c->s));
            c->closing = true;
            break;
        }
        n = read(c->fd, p, room);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 || (n < 0 && errno != EAGAIN)) {
            conn_close(g, c);
            return;
        }
        if (n < 0)
            break;
        c->last_ms = g->loop_ms;
        if (session_run(g, c, (size_t)n) < 0) {
            c->closing = true;
            break;
        }
        if ((size_t)n < room)
            break;
    }
    conn_flush(g, c);
}

/* "127.0.0.1:6379" or "[::1]:6379" for a socket address. */
static void addr_text(const struct sockaddr_storage *sa, char *buf,
                      size_t cap)
{
    char ip[INET6_ADDRSTRLEN] = "?";

    if (sa->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const void *)sa;
        inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
        snprintf(buf, cap, "[%s]:%u", ip, ntohs(a->sin6_port));
    } else {
        const struct sockaddr_in *a = (const void *)sa;
        inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
        snprintf(buf, cap, "%s:%u", ip, ntohs(a->sin_port));
    }
}

/* Names both ends of a new connection as CLIENT LIST shows them. */
static void describe(struct goblind *g, int fd, bool is_unix,
                     const struct sockaddr_storage *peer,
                     char (*text)[128])
{
    struct sockaddr_storage local;
    socklen_t llen = sizeof(local);

    if (is_unix) {
        snprintf(text[0], sizeof(text[0]), "%s:0", g->unixsocket);
        snprintf(text[1], sizeof(text[1]), "%s:0", g->unixsocket);
        return;
    }
    addr_text(peer, text[0], sizeof(text[0]));
    getsockname(fd, (struct sockaddr *)&local, &llen);
    addr_text(&local, text[1], sizeof(text[1]));
}

static void conn_open(struct goblind *g, int fd, bool is_unix,
                      const struct sockaddr_storage *peer)
{
    static const char full[] = "-ERR max number of clients reached\r\n";
    struct goblin_session_info info = {0};
    struct goblind_conn *c = NULL;
    char text[2][128];
    int one = 1;

    if (g->nconns >= g->maxclients) {
        if (write(fd, full, sizeof(full) - 1) < 0)
            goblind_log(g, GOBLIN_LOG_VERBOSE, "Error sending max clients");
        goto fail;
    }
    if (!is_unix)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    describe(g, fd, is_unix, peer, text);
    c = calloc(1, sizeof(*c));
    info = (struct goblin_session_info){
        is_unix ? GOBLIN_TRANSPORT_UNIX : GOBLIN_TRANSPORT_TCP, text[0],
        text[1], fd, c};
    if (c == NULL || goblin_session_open(g->engine, &info, &c->s) < 0 ||
        (!(is_unix ? g->sbe_unixsocket : g->sbe_tcp) &&
         goblin_session_no_sbe(c->s) < 0) ||
        watch(g, EPOLL_CTL_ADD, fd, EPOLLIN, (uintptr_t)c) < 0) {
        goblind_log(g, GOBLIN_LOG_WARNING, "Error registering fd event for "
                    "the new client: out of memory or descriptors");
        goto fail;
    }
    *c = (struct goblind_conn){.fd = fd, .events = EPOLLIN, .s = c->s,
                               .last_ms = g->loop_ms, .next = g->conns};
    if (g->conns != NULL)
        g->conns->prev = c;
    g->conns = c;
    g->nconns++;
    goblind_log(g, GOBLIN_LOG_VERBOSE, "Accepted %s", text[0]);
    return;
fail:
    if (c != NULL)
        goblin_session_close(c->s);
    free(c);
    close(fd);
}

static void accept_ready(struct goblind *g, int index)
{
    for (int i = 0; i < MAX_ACCEPTS_PER_EVENT; i++) {
        struct sockaddr_storage peer;
        socklen_t len = sizeof(peer);
        int fd = accept4(g->listen_fds[index], (struct sockaddr *)&peer,
                         &len, SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (fd < 0) {
            if (errno != EAGAIN && errno != EINTR)
                goblind_log(g, GOBLIN_LOG_WARNING, "Accepting client "
                            "connection: %s", strerror(errno));
            return;
        }
        conn_open(g, fd, g->listen_unix[index], &peer);
    }
}

/* CLIENT KILL from another session: look at this one after the event. */
void goblind_session_wake(void *ctx, void *user)
{
    struct goblind *g = ctx;
    struct goblind_conn *c = user;

    if (c == NULL || c->on_woken)
        return;
    c->on_woken = true;
    c->wnext = g->woken;
    g->woken = c;
}

static void run_woken(struct goblind *g)
{
    while (g->woken != NULL) {
        struct goblind_conn *c = g->woken;
        g->woken = c->wnext;
        c->on_woken = false;
        conn_flush(g, c);
    }
}

static void cron(struct goblind *g)
{
    struct goblind_conn *c, *next;

    goblin_engine_cron(g->engine);
    if (g->timeout <= 0)
        return;
    for (c = g->conns; c != NULL; c = next) {
        next = c->next;
        if (g->loop_ms - c->last_ms > (int64_t)g->timeout * 1000) {
            goblind_log(g, GOBLIN_LOG_VERBOSE, "Closing idle client");
            conn_close(g, c);
        }
    }
}

static void signal_ready(struct goblind *g)
{
    struct signalfd_siginfo si;

    if (read(g->sigfd, &si, sizeof(si)) != sizeof(si))
        return;
    if (si.ssi_signo == SIGCHLD) {   /* a BGSAVE child ended */
        goblind_persist_reap(g);
        return;
    }
    goblind_log(g, GOBLIN_LOG_WARNING, "Received %s scheduling shutdown...",
                si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
    if (goblind_persist_on_signal(g))
        g->stopping = true;
}

static void dispatch(struct goblind *g, const struct epoll_event *ev)
{
    uint64_t tag = ev->data.u64;

    if (tag < LISTEN_TAGS) {
        accept_ready(g, (int)tag);
    } else if (tag == SIGNAL_TAG) {
        signal_ready(g);
    } else {
        struct goblind_conn *c = (void *)(uintptr_t)tag;
        if (ev->events & (EPOLLIN | EPOLLERR | EPOLLHUP) && !c->closing)
            conn_readable(g, c);
        else
            conn_flush(g, c);
    }
}

int goblind_run(struct goblind *g)
{
    struct epoll_event evs[256];
    int64_t next_cron = mono_ms() + CRON_MS;

    while (!g->stopping) {
        /* loop_ms was read after the last wake-up: one clock read each. */
        int64_t wait = next_cron - g->loop_ms;
        int n = epoll_wait(g->epfd, evs, 256, wait > 0 ? (int)wait : 0);

        if (n < 0 && errno != EINTR) {
            goblind_log(g, GOBLIN_LOG_WARNING, "epoll_wait: %s",
                        strerror(errno));
            return -1;
        }
        g->loop_ms = mono_ms();
        for (int i = 0; i < n; i++) {   /* the engine lock: ring_poll.c */
            goblind_lock();
            dispatch(g, &evs[i]);
            goblind_unlock();
        }
        goblind_lock();
        run_woken(g);
        goblind_unlock();
        if (g->loop_ms >= next_cron) {
            goblind_lock();
            cron(g);
            goblind_unlock();
            next_cron += CRON_MS;
            if (next_cron <= g->loop_ms)
                next_cron = g->loop_ms + CRON_MS;
        }
    }
    return 0;
}

/* Listens on fd and watches it; the caller closes fd on failure. */
static int add_listener(struct goblind *g, int fd, bool is_unix)
{
    if (g->nlisten > GOBLIND_MAX_BIND || listen(fd, TCP_BACKLOG) < 0 ||
        watch(g, EPOLL_CTL_ADD, fd, EPOLLIN, (uint64_t)g->nlisten) < 0)
        return -1;
    g->listen_unix[g->nlisten] = is_unix;
    g->listen_fds[g->nlisten++] = fd;
    return 0;
}

/* A non-blocking listening TCP socket bound to ai, or -1 with errno. */
static int tcp_socket(struct goblind *g, const struct addrinfo *ai)
{
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK |
                    SOCK_CLOEXEC, 0);
    int one = 1, err;

    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (ai->ai_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
        add_listener(g, fd, false) == 0)
        return 0;
    err = errno;
    close(fd);
    errno = err;
    return -1;
}

/* Listens on one bind address. "*" is every IPv4 address and "::*" every
 * IPv6 one, as in Redis; a leading '-' (or the default bind list) makes a
 * missing address family or address a warning instead of an error. */
static int listen_tcp(struct goblind *g, const char *addr, bool optional)
{
    struct addrinfo hints = {0}, *ai = NULL;
    char port[16];
    int rc, err;
    bool skip;

    optional = optional || addr[0] == '-';
    addr += addr[0] == '-';
    if (strcmp(addr, "*") == 0)
        addr = "0.0.0.0";
    else if (strcmp(addr, "::*") == 0)
        addr = "::";
    snprintf(port, sizeof(port), "%ld", g->port);
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
    if ((rc = getaddrinfo(addr, port, &hints, &ai)) != 0) {
        goblind_log(g, GOBLIN_LOG_WARNING, "Bad bind address %s: %s", addr,
                    gai_strerror(rc));
        return -1;
    }
    rc = tcp_socket(g, ai);
    err = errno;
    freeaddrinfo(ai);
    if (rc == 0)
        return 0;
    skip = optional && (err == EADDRNOTAVAIL || err == EAFNOSUPPORT ||
                        err == EPROTONOSUPPORT);
    goblind_log(g, GOBLIN_LOG_WARNING, "%s: Could not create server TCP "
                "listening socket %s:%ld: %s", skip ? "Skipping" : "Error",
                addr, g->port, strerror(err));
    return skip ? 0 : -1;
}

static int listen_unix(struct goblind *g)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd;

    if (strlen(g->unixsocket) >= sizeof(sa.sun_path)) {
        goblind_log(g, GOBLIN_LOG_WARNING, "Unix socket path too long: %s",
                    g->unixsocket);
        return -1;
    }
    strcpy(sa.sun_path, g->unixsocket);
    unlink(g->unixsocket);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        chmod(g->unixsocket, (mode_t)g->unixsocketperm) < 0 ||
        add_listener(g, fd, true) < 0) {
        goblind_log(g, GOBLIN_LOG_WARNING, "Failed opening Unix socket %s: "
                    "%s", g->unixsocket, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return 0;
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
    g->loop_ms = mono_ms();
    g->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (g->epfd < 0 || watch_signals(g) < 0) {
        goblind_log(g, GOBLIN_LOG_WARNING, "epoll/signalfd: %s",
                    strerror(errno));
        return -1;
    }
    if (g->port == 0 && g->unixsocket == NULL) {
        goblind_log(g, GOBLIN_LOG_WARNING, "Configured to not listen "
                    "anywhere, exiting.");
        return -1;
    }
    for (int i = 0; g->port != 0 && i < g->nbind; i++)
        if (listen_tcp(g, g->bind[i], g->bind_default) < 0)
            return -1;
    if (g->port != 0 && g->nlisten == 0) {
        goblind_log(g, GOBLIN_LOG_WARNING, "Failed listening on port %ld "
                    "(tcp), aborting.", g->port);
        return -1;
    }
    if (g->unixsocket != NULL && listen_unix(g) < 0)
        return -1;
    return 0;
}

/* Closes every connection and listener and removes the Unix socket. */
void goblind_shutdown_net(struct goblind *g)
{
    while (g->conns != NULL)
        conn_close(g, g->conns);
    for (int i = 0; i < g->nlisten; i++)
        close(g->listen_fds[i]);
    g->nlisten = 0;
    if (g->unixsocket != NULL && unlink(g->unixsocket) == 0)
        goblind_log(g, GOBLIN_LOG_NOTICE, "Removing the unix socket file.");
    if (g->sigfd >= 0)
        close(g->sigfd);
    if (g->epfd >= 0)
        close(g->epfd);
    g->sigfd = g->epfd = -1;
}
