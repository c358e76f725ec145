/* net_epoll.c - goblind's sockets: TCP (IPv4 and IPv6) and Unix
 * listeners, one libgoblin session per connection, and the epoll loop.
 *
 * Latency rule: when a connection becomes readable we read once, run
 * every complete command, and write the replies at once, in the same
 * wake-up: one read and one write per unpipelined request. Only a
 * partial write registers EPOLLOUT, and it is dropped again as soon as
 * the output is drained. Reads are level triggered, so bytes left in the
 * socket after a short read wake us again instead of costing a read that
 * returns EAGAIN.
 *
 * The loop sleeps in epoll_wait with a timeout only for the engine's cron
 * (10 times a second), so an idle server uses no CPU.
 *
 * Locking (docs/threading.md): the engine lock is taken around each call
 * into the engine or a session, never around a system call. A read goes
 * into this thread's own buffer and is then fed to the session under the
 * lock; the replies are written from the session's output without the
 * lock (its bytes change only through calls on that session, and only
 * this thread makes those), then consumed under the lock.
 *
 * TLS connections (tls.c) read and write through their SSL session
 * instead of the socket; a handshake step that must write while the
 * connection wanted to read sets read_wants_write, so EPOLLOUT resumes
 * the read. A TLS read may leave decrypted bytes in the session, which
 * the read loop drains before it waits again.
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
#include "tls.h"

#define LISTEN_TAGS 64
#define SIGNAL_TAG 100
#define MAX_ACCEPTS_PER_EVENT 1000
#define CRON_MS 100
#define TCP_BACKLOG 511
#define READ_CHUNK 65536

/* The epoll thread's read buffer (goblind has one epoll thread). */
static unsigned char read_buf[READ_CHUNK];

struct goblind_conn {
    int fd;
    uint32_t events;           /* what epoll watches now */
    bool closing;              /* no more input; close once flushed */
    bool on_woken;
    bool read_wants_write;     /* TLS: the read waits for EPOLLOUT */
    struct goblind_tls *tls;   /* NULL for plain TCP and Unix sockets */
    goblin_session *s;
    int64_t last_ms;           /* last input, for the idle timeout */
    struct goblind_conn *prev, *next, *wnext;
};

static int64_t mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

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
    uint64_t id;

    goblind_lock();
    if (c->on_woken) {
        struct goblind_conn **pp = &g->woken;
        while (*pp != c)
            pp = &(*pp)->wnext;
        *pp = c->wnext;
    }
    id = goblin_session_id(c->s);
    goblin_session_close(c->s);
    goblind_unlock();
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        g->conns = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    goblind_log(g, GOBLIN_LOG_VERBOSE, "Client closed connection id=%llu",
                (unsigned long long)id);
    goblind_tls_close(c->tls);
    /* Explicitly: a BGSAVE child may still hold a copy of the socket, and
     * epoll drops a registration only when every copy is closed. */
    watch(g, EPOLL_CTL_DEL, c->fd, 0, 0);
    close(c->fd);
    free(c);
    g->nconns--;
}

/* read(2) and write(2), through TLS when the connection has it. */
static ssize_t conn_read(struct goblind_conn *c, void *p, size_t n)
{
    return c->tls != NULL ? goblind_tls_read(c->tls, p, n,
                                             &c->read_wants_write)
                          : read(c->fd, p, n);
}

static ssize_t conn_send(struct goblind_conn *c, const void *p, size_t n)
{
    bool want_write;

    return c->tls != NULL ? goblind_tls_write(c->tls, p, n, &want_write)
                          : write(c->fd, p, n);
}

/* Writes out and len, the session's output taken under the lock by the
 * caller, without the lock; then, under it, consumes what was written.
 * Then decides what to wait for next: input (unless closing), EPOLLOUT
 * while output is pending. A closing connection goes once its output is
 * out (or cannot go). */
static void conn_write(struct goblind *g, struct goblind_conn *c,
                       const void *out, size_t len)
{
    ssize_t n = 0;
    uint32_t events;

    while (len > 0) {
        n = conn_send(c, out, len);          /* SIGPIPE is ignored */
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN) {
            conn_close(g, c);
            return;
        }
        break; /* written all, or the socket is full: EPOLLOUT */
    }
    goblind_lock();
    if (n > 0)
        goblin_session_output_consume(c->s, (size_t)n);
    goblin_session_output(c->s, &len);
    c->closing = c->closing || goblin_session_should_close(c->s);
    goblind_unlock();
    if (c->closing && len == 0) {
        conn_close(g, c);
        return;
    }
    events = (c->closing ? 0 : EPOLLIN) |
             (len > 0 || c->read_wants_write ? EPOLLOUT : 0);
    if (events != c->events && watch(g, EPOLL_CTL_MOD, c->fd, events,
                                     (uintptr_t)c) == 0)
        c->events = events;
}

/* Writes whatever the session has for its client. */
static void conn_flush(struct goblind *g, struct goblind_conn *c)
{
    const void *out;
    size_t len;

    goblind_lock();
    out = goblin_session_output(c->s, &len);
    goblind_unlock();
    conn_write(g, c, out, len);
}

/* The one place a session runs bytes that arrived for it, under the lock
 * (the read before it is not). */
static int session_run(struct goblind *g, struct goblind_conn *c, size_t n)
{
    int rc = goblin_session_feed(c->s, read_buf, n);

    /* The engine reports both client limits as GOBLIN_ELIMIT. */
    if (rc == GOBLIN_ELIMIT)
        goblind_log(g, GOBLIN_LOG_WARNING, "Closing client that reached max "
                    "query buffer length or its output buffer limit: "
                    "id=%llu", (unsigned long long)goblin_session_id(c->s));
    return rc;
}

/* Reads what arrived (until the socket is drained or a read comes back
 * short), runs it, and writes the replies. */
static void conn_readable(struct goblind *g, struct goblind_conn *c)
{
    const void *out = NULL;
    size_t len = 0;

    for (;;) {
        ssize_t n = conn_read(c, read_buf, sizeof(read_buf));
        int rc;

        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 || (n < 0 && errno != EAGAIN)) {
            conn_close(g, c);
            return;
        }
        if (n < 0)
            break;
        c->last_ms = g->loop_ms;
        goblind_lock();
        rc = session_run(g, c, (size_t)n);
        out = goblin_session_output(c->s, &len);
        goblind_unlock();
        if (rc < 0) {
            c->closing = true;
            break;
        }
        if ((size_t)n < sizeof(read_buf) &&
            (c->tls == NULL || goblind_tls_pending(c->tls) == 0))
            break;
    }
    if (out == NULL)
        conn_flush(g, c);                   /* nothing read this time */
    else
        conn_write(g, c, out, len);
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

/* Redis's connIsLocal: a loopback peer (127.0.0.0/8, ::1, or 127.x
 * mapped into IPv6). */
static bool peer_is_loopback(const struct sockaddr_storage *sa)
{
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                             0xff, 0xff};

    if (sa->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const void *)sa;
        return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const void *)sa;
        const unsigned char *b = a->sin6_addr.s6_addr;
        return IN6_IS_ADDR_LOOPBACK(&a->sin6_addr) ||
               (memcmp(b, mapped, 12) == 0 && b[12] == 127);
    }
    return false;
}

/* Protected mode (Redis's clientAcceptHandler): while the default user
 * has no password, only loopback and Unix socket clients get in. */
static bool protected_refuses(struct goblind *g, bool is_unix,
                              const struct sockaddr_storage *peer)
{
    return g->protected_mode && !is_unix &&
           goblin_engine_default_user_nopass(g->engine) &&
           !peer_is_loopback(peer);
}

static const char denied[] =
    "-DENIED Redis is running in protected mode because protected mode is "
    "enabled and no password is set for the default user. In this mode "
    "connections are only accepted from the loopback interface. If you "
    "want to connect from external computers to Redis you may adopt one of "
    "the following solutions: 1) Just disable protected mode sending the "
    "command 'CONFIG SET protected-mode no' from the loopback interface by "
    "connecting to Redis from the same host the server is running, however "
    "MAKE SURE Redis is not publicly accessible from internet if you do so. "
    "Use CONFIG REWRITE to make this change permanent. 2) Alternatively you "
    "can just disable the protected mode by editing the Redis configuration "
    "file, and setting the protected mode option to 'no', and then "
    "restarting the server. 3) If you started the server manually just for "
    "testing, restart it with the '--protected-mode no' option. 4) Setup a "
    "an authentication password for the default user. NOTE: You only need "
    "to do one of the above things in order for the server to start "
    "accepting connections from the outside.\r\n";

static void conn_open(struct goblind *g, int fd, bool is_unix, bool is_tls,
                      const struct sockaddr_storage *peer)
{
    static const char full[] = "-ERR max number of clients reached\r\n";
    struct goblin_session_info info = {0};
    struct goblind_conn *c = NULL;
    char text[2][128];
    int one = 1;
    bool room, refused;

    goblind_lock();                     /* CONFIG SET may change these */
    room = g->nconns < g->maxclients;
    refused = protected_refuses(g, is_unix, peer);
    goblind_unlock();
    /* The refusals are plain text: a TLS client only sees the close. */
    if (!room) {
        if (!is_tls && write(fd, full, sizeof(full) - 1) < 0)
            goblind_log(g, GOBLIN_LOG_VERBOSE, "Error sending max clients");
        goto fail;
    }
    if (refused) {
        if (!is_tls && write(fd, denied, sizeof(denied) - 1) < 0)
            goblind_log(g, GOBLIN_LOG_VERBOSE, "Error sending protected "
                        "mode error");
        goto fail;
    }
    if (!is_unix)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    describe(g, fd, is_unix, peer, text);
    c = calloc(1, sizeof(*c));
    info = (struct goblin_session_info){
        is_unix ? GOBLIN_TRANSPORT_UNIX : GOBLIN_TRANSPORT_TCP, text[0],
        text[1], fd, c};
    goblind_lock();
    if (c != NULL && (goblin_session_open(g->engine, &info, &c->s) < 0 ||
                      (!(is_unix ? g->sbe_unixsocket : g->sbe_tcp) &&
                       goblin_session_no_sbe(c->s) < 0))) {
        goblin_session_close(c->s);
        c->s = NULL;
    }
    goblind_unlock();
    if (c == NULL || c->s == NULL ||
        watch(g, EPOLL_CTL_ADD, fd, EPOLLIN, (uintptr_t)c) < 0) {
        goblind_log(g, GOBLIN_LOG_WARNING, "Error registering fd event for "
                    "the new client: out of memory or descriptors");
        goto fail;
    }
    *c = (struct goblind_conn){.fd = fd, .events = EPOLLIN, .s = c->s,
                               .last_ms = g->loop_ms, .next = g->conns};
    if (is_tls && (c->tls = goblind_tls_open(g, fd)) == NULL) {
        goblind_log(g, GOBLIN_LOG_WARNING, "Error creating the TLS "
                    "session of a new client");
        epoll_ctl(g->epfd, EPOLL_CTL_DEL, fd, NULL);
        goto fail;
    }
    if (g->conns != NULL)
        g->conns->prev = c;
    g->conns = c;
    g->nconns++;
    goblind_log(g, GOBLIN_LOG_VERBOSE, "Accepted %s", text[0]);
    return;
fail:
    if (c != NULL) {
        goblind_lock();
        goblin_session_close(c->s);
        goblind_unlock();
    }
    free(c);
    close(fd);
}

/* Out of descriptors (EMFILE, ENFILE): the listeners stay readable, so a
 * level-triggered loop would spin and log without end. They are left
 * unwatched until the next cron tick, when accept is tried again. */
static void accept_pause(struct goblind *g, bool pause)
{
    for (int i = 0; i < g->nlisten; i++)
        watch(g, EPOLL_CTL_MOD, g->listen_fds[i], pause ? 0 : EPOLLIN,
              (uint64_t)i);
    g->accept_paused = pause;
}

static void accept_ready(struct goblind *g, int index)
{
    for (int i = 0; i < MAX_ACCEPTS_PER_EVENT; i++) {
        struct sockaddr_storage peer;
        socklen_t len = sizeof(peer);
        int fd = accept4(g->listen_fds[index], (struct sockaddr *)&peer,
                         &len, SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (fd < 0) {
            int err = errno;    /* logging may change errno */
            if (err != EAGAIN && err != EINTR)
                goblind_log(g, GOBLIN_LOG_WARNING, "Accepting client "
                            "connection: %s", strerror(err));
            if (err == EMFILE || err == ENFILE)
                accept_pause(g, true);
            return;
        }
        conn_open(g, fd, g->listen_unix[index], g->listen_tls[index],
                  &peer);
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

/* The woken list is filled under the lock by any thread (CLIENT KILL). */
static void run_woken(struct goblind *g)
{
    for (;;) {
        struct goblind_conn *c;

        goblind_lock();
        c = g->woken;
        if (c != NULL) {
            g->woken = c->wnext;
            c->on_woken = false;
        }
        goblind_unlock();
        if (c == NULL)
            return;
        conn_flush(g, c);
    }
}

static void cron(struct goblind *g)
{
    struct goblind_conn *c, *next;

    long timeout;

    goblind_lock();
    goblin_engine_cron(g->engine);
    timeout = g->timeout;               /* CONFIG SET may change it */
    goblind_unlock();
    if (g->accept_paused)
        accept_pause(g, false);
    if (timeout <= 0)
        return;
    for (c = g->conns; c != NULL; c = next) {
        next = c->next;
        if (g->loop_ms - c->last_ms > (int64_t)timeout * 1000) {
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
        bool resume = c->read_wants_write && (ev->events & EPOLLOUT);

        c->read_wants_write = false;
        if ((resume || ev->events & (EPOLLIN | EPOLLERR | EPOLLHUP)) &&
            !c->closing)
            conn_readable(g, c);
        else
            conn_flush(g, c);
    }
}

/* True when an event in evs[0..n) came from a client connection. */
static bool client_traffic(const struct epoll_event *evs, int n)
{
    for (int i = 0; i < n; i++)
        if (evs[i].data.u64 >= LISTEN_TAGS && evs[i].data.u64 != SIGNAL_TAG)
            return true;
    return false;
}

/* The loop. After client traffic it polls (epoll_wait with no timeout)
 * for socket-spin-us before sleeping again: a client that sends its next
 * request soon after its reply, as an unpipelined client does, then
 * finds the server awake instead of paying the scheduler's wake-up. An
 * idle server sleeps in epoll_wait and uses no CPU. */
int goblind_run(struct goblind *g)
{
    struct epoll_event evs[256];
    int64_t next_cron = mono_ms() + CRON_MS;
    int64_t spin_ns, spin_until = 0;

    goblind_lock();                     /* CONFIG SET may change it */
    spin_ns = g->socket_spin_us * 1000;
    goblind_unlock();
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
        g->loop_ms = mono_ms();
        for (int i = 0; i < n; i++)
            dispatch(g, &evs[i]);
        run_woken(g);
        if (n > 0 && spin_ns > 0 && client_traffic(evs, n))
            spin_until = mono_ns() + spin_ns;
        if (g->loop_ms >= next_cron) {
            cron(g);
            goblind_lock();
            spin_ns = g->socket_spin_us * 1000;
            goblind_unlock();
            next_cron += CRON_MS;
            if (next_cron <= g->loop_ms)
                next_cron = g->loop_ms + CRON_MS;
        }
    }
    return 0;
}

/* Listens on fd and watches it; the caller closes fd on failure. */
static int add_listener(struct goblind *g, int fd, bool is_unix,
                        bool is_tls)
{
    if (g->nlisten > 2 * GOBLIND_MAX_BIND || listen(fd, TCP_BACKLOG) < 0 ||
        watch(g, EPOLL_CTL_ADD, fd, EPOLLIN, (uint64_t)g->nlisten) < 0)
        return -1;
    g->listen_unix[g->nlisten] = is_unix;
    g->listen_tls[g->nlisten] = is_tls;
    g->listen_fds[g->nlisten++] = fd;
    return 0;
}

/* A non-blocking listening TCP socket bound to ai, or -1 with errno. */
static int tcp_socket(struct goblind *g, const struct addrinfo *ai,
                      bool is_tls)
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
        add_listener(g, fd, false, is_tls) == 0)
        return 0;
    err = errno;
    close(fd);
    errno = err;
    return -1;
}

/* Listens on one bind address. "*" is every IPv4 address and "::*" every
 * IPv6 one, as in Redis; a leading '-' (or the default bind list) makes a
 * missing address family or address a warning instead of an error. */
static int listen_tcp(struct goblind *g, const char *addr, bool optional,
                      long port_num, bool is_tls)
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
    snprintf(port, sizeof(port), "%ld", port_num);
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
    if ((rc = getaddrinfo(addr, port, &hints, &ai)) != 0) {
        goblind_log(g, GOBLIN_LOG_WARNING, "Bad bind address %s: %s", addr,
                    gai_strerror(rc));
        return -1;
    }
    rc = tcp_socket(g, ai, is_tls);
    err = errno;
    freeaddrinfo(ai);
    if (rc == 0)
        return 0;
    skip = optional && (err == EADDRNOTAVAIL || err == EAFNOSUPPORT ||
                        err == EPROTONOSUPPORT);
    goblind_log(g, GOBLIN_LOG_WARNING, "%s: Could not create server TCP "
                "listening socket %s:%ld: %s", skip ? "Skipping" : "Error",
                addr, port_num, strerror(err));
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
        add_listener(g, fd, true, false) < 0) {
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
    if (g->port == 0 && g->tls_port == 0 && g->unixsocket == NULL) {
        goblind_log(g, GOBLIN_LOG_WARNING, "Configured to not listen "
                    "anywhere, exiting.");
        return -1;
    }
    for (int i = 0; g->port != 0 && i < g->nbind; i++)
        if (listen_tcp(g, g->bind[i], g->bind_default, g->port, false) < 0)
            return -1;
    if (g->port != 0 && g->nlisten == 0) {
        goblind_log(g, GOBLIN_LOG_WARNING, "Failed listening on port %ld "
                    "(tcp), aborting.", g->port);
        return -1;
    }
    if (goblind_tls_init(g) < 0)
        return -1;
    for (int i = 0; g->tls_port != 0 && i < g->nbind; i++)
        if (listen_tcp(g, g->bind[i], g->bind_default, g->tls_port,
                       true) < 0)
            return -1;
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
    goblind_tls_free(g);
    if (g->sigfd >= 0)
        close(g->sigfd);
    if (g->epfd >= 0)
        close(g->epfd);
    g->sigfd = g->epfd = -1;
}
