/* net.c - socket connections served from an engine (goblin/serve.h,
 * "socket connections"): the per-connection state machine (read, feed,
 * write, close after flush, output interest), accepting with maxclients
 * and protected mode, peer names for CLIENT LIST, the CLIENT KILL wake
 * list and the idle timeout. The caller's event loop watches the
 * descriptors; this file moves the bytes.
 *
 * Latency rule: when a connection becomes readable it reads once, runs
 * every complete command, and writes the replies at once, in the same
 * call: one read and one write per unpipelined request. Only a partial
 * write asks for WRITE interest, dropped again once the output is out.
 * Reading stops after a short read, so a level-triggered loop wakes again
 * for bytes left instead of paying a read that returns EAGAIN.
 *
 * Group commit (appendfsync always): inside a loop's pass
 * (goblin__net_pass_begin ... goblin__net_pass_next), the writes of every
 * connection are made durable by one fsync at the pass's end, and a
 * connection whose replies would leave while a write is not yet durable
 * is held until then (Redis: the AOF is flushed in beforeSleep, before
 * the replies are written).
 *
 * Locking: the lock is taken around each call into the engine or a
 * session, never around a system call (see the top of goblin/serve.h).
 * Connections are freed only from goblin_conn_close, which the loop calls
 * (or cron, for idle ones), so no event can refer to a freed one.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <goblin/serve.h>

#include "serve_int.h"
#include "stream/aof_int.h"
#include "util/config_size.h"

#define READ_CHUNK 65536
#define DEFAULT_MAXCLIENTS 10000

struct goblin_net {
    struct goblin_net_config cfg;
    struct goblin_net_limits limits;
    goblin_conn *conns;          /* every open connection, a list */
    long nconns;
    goblin_conn *woken;          /* filled under the lock by any thread */
    int wake_fd;                 /* eventfd: woken from another thread */
    bool wake_signaled;          /* wake_fd was written (under the lock) */
    int64_t now_ms;              /* at the last cron: idle times */
    bool pass;                   /* in a loop's pass: group commit */
    goblin_conn *held;           /* replies waiting for the pass's fsync */
    unsigned char buf[READ_CHUNK];
};

struct goblin_conn {
    goblin_net *net;
    int fd;
    int interest;                /* the mask returned last */
    bool closing;                /* no more input; close once flushed */
    bool on_woken;
    bool read_wants_write;       /* the I/O layer's read waits for WRITE */
    bool held;                   /* on net->held */
    const struct goblin_conn_io *io;
    void *io_ctx;
    goblin_session *s;
    int64_t last_ms;             /* last input, for the idle timeout */
    goblin_conn *prev, *next, *wnext, *hnext;
};

static void lock(goblin_net *n)
{
    if (n->cfg.lock != NULL)
        n->cfg.lock(n->cfg.lock_ctx);
}

static void unlock(goblin_net *n)
{
    if (n->cfg.unlock != NULL)
        n->cfg.unlock(n->cfg.lock_ctx);
}

static void say(goblin_net *n, enum goblin_log_level level, const char *fmt,
                ...) __attribute__((format(printf, 3, 4)));

static void say(goblin_net *n, enum goblin_log_level level, const char *fmt,
                ...)
{
    char text[512];
    va_list ap;

    if (n->cfg.log == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    n->cfg.log(n->cfg.log_ctx, level, text);
}

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Called under the lock. */
static void refresh_limits(goblin_net *n)
{
    if (n->cfg.limits_get != NULL)
        n->cfg.limits_get(n->cfg.limits_ctx, &n->limits);
    if (n->limits.maxclients <= 0)
        n->limits.maxclients = DEFAULT_MAXCLIENTS;
}

int goblin_net_open_sized(const struct goblin_net_config *cfg,
                          size_t cfg_size, goblin_net **out)
{
    struct goblin_net_config c;
    goblin_net *n;

    *out = NULL;
    if (cfg == NULL || goblin__config_copy(&c, sizeof(c), cfg, cfg_size,
                                           sizeof(cfg->engine)) != 0 ||
        c.engine == NULL)
        return GOBLIN_EINVAL;
    if ((n = calloc(1, sizeof(*n))) == NULL)
        return GOBLIN_ENOMEM;
    n->cfg = c;
    n->limits = c.limits;
    n->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    lock(n);
    refresh_limits(n);
    unlock(n);
    n->now_ms = mono_ms();
    *out = n;
    return 0;
}

void goblin_net_close(goblin_net *n)
{
    if (n == NULL)
        return;
    while (n->conns != NULL)
        goblin_conn_close(n->conns);
    if (n->wake_fd >= 0)
        close(n->wake_fd);
    free(n);
}

long goblin_net_count(const goblin_net *n)
{
    return n->nconns;
}

int goblin_conn_fd(const goblin_conn *c)
{
    return c->fd;
}

void goblin_conn_set_io(goblin_conn *c, const struct goblin_conn_io *io,
                        void *ctx)
{
    c->io = io;
    c->io_ctx = ctx;
}

void goblin_conn_close(goblin_conn *c)
{
    goblin_net *n;
    uint64_t id;

    if (c == NULL)
        return;
    n = c->net;
    lock(n);
    if (c->on_woken) {
        goblin_conn **pp = &n->woken;
        while (*pp != c)
            pp = &(*pp)->wnext;
        *pp = c->wnext;
    }
    if (c->held) {
        goblin_conn **pp = &n->held;
        while (*pp != c)
            pp = &(*pp)->hnext;
        *pp = c->hnext;
    }
    id = goblin_session_id(c->s);
    goblin_session_close(c->s);
    unlock(n);
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        n->conns = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    n->nconns--;
    say(n, GOBLIN_LOG_VERBOSE, "Client closed connection id=%llu",
        (unsigned long long)id);
    if (c->io != NULL && c->io->close != NULL)
        c->io->close(c->io_ctx);
    if (n->cfg.closing != NULL)
        n->cfg.closing(n->cfg.closing_ctx, c, c->fd);
    close(c->fd);
    free(c);
}

/* ---- the state machine ---- */

static long conn_read(goblin_conn *c, void *p, size_t len)
{
    return c->io != NULL ? c->io->read(c->io_ctx, p, len,
                                       &c->read_wants_write)
                         : (long)read(c->fd, p, len);
}

static long conn_send(goblin_conn *c, const void *p, size_t len)
{
    bool want_write;

    return c->io != NULL ? c->io->write(c->io_ctx, p, len, &want_write)
                         : (long)write(c->fd, p, len);
}

/* The mask for the state now; CHANGED when READ/WRITE moved. Called with
 * the output length taken under the lock. */
static int mask(goblin_conn *c, size_t pending)
{
    int m;

    if (c->closing && pending == 0)
        return GOBLIN_CONN_CLOSE;
    m = (c->closing ? 0 : GOBLIN_CONN_READ) |
        (pending > 0 || c->read_wants_write ? GOBLIN_CONN_WRITE : 0);
    if (m != c->interest) {
        c->interest = m;
        m |= GOBLIN_CONN_CHANGED;
    }
    return m;
}

/* Under the lock: consumes n written bytes and looks at what is left. */
static int settle(goblin_conn *c, size_t written)
{
    size_t len;

    if (written > 0)
        goblin_session_output_consume(c->s, written);
    goblin_session_output(c->s, &len);
    c->closing = c->closing || goblin_session_should_close(c->s);
    return mask(c, len);
}

/* Writes out[0..len), the session's output taken under the lock, without
 * the lock (a socket that cannot take it all gets WRITE interest), then
 * consumes what went under it. A write error ends the connection. */
static int conn_write(goblin_conn *c, const void *out, size_t len)
{
    long n = 0;
    int m;

    while (len > 0) {
        n = conn_send(c, out, len);          /* SIGPIPE must be ignored */
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN)
            return GOBLIN_CONN_CLOSE;
        break; /* written all, or the socket is full */
    }
    lock(c->net);
    m = settle(c, n > 0 ? (size_t)n : 0);
    unlock(c->net);
    return m;
}

static int conn_flush(goblin_conn *c)
{
    const void *out;
    size_t len;

    lock(c->net);
    out = goblin_session_output(c->s, &len);
    unlock(c->net);
    return conn_write(c, out, len);
}

/* Under the lock: runs bytes that arrived. The engine reports both
 * client limits as GOBLIN_ELIMIT. */
static int run(goblin_conn *c, const void *data, size_t len)
{
    goblin_engine *eng = c->net->cfg.engine;
    int rc;

    if (c->net->pass)
        goblin__aof_hold(eng); /* the fsync waits for the pass's end */
    rc = goblin_session_feed(c->s, data, len);
    if (c->net->pass)
        goblin__aof_unhold(eng);

    c->last_ms = c->net->now_ms;
    if (rc == GOBLIN_ELIMIT)
        say(c->net, GOBLIN_LOG_WARNING, "Closing client that reached max "
            "query buffer length or its output buffer limit: id=%llu",
            (unsigned long long)goblin_session_id(c->s));
    if (rc < 0)
        c->closing = true;
    return rc;
}

/* Reads what arrived (until the socket is drained or a read comes back
 * short), runs it, and writes the replies. */
static int conn_readable(goblin_conn *c)
{
    goblin_net *n = c->net;
    const void *out = NULL;
    size_t len = 0;
    bool hold = false;

    for (;;) {
        long got = conn_read(c, n->buf, sizeof(n->buf));
        int rc;

        if (got < 0 && errno == EINTR)
            continue;
        if (got == 0 || (got < 0 && errno != EAGAIN))
            return GOBLIN_CONN_CLOSE;
        if (got < 0)
            break;
        lock(n);
        rc = run(c, n->buf, (size_t)got);
        out = goblin_session_output(c->s, &len);
        hold = n->pass && goblin__aof_sync_pending(n->cfg.engine);
        unlock(n);
        if (rc < 0)
            break;
        if ((size_t)got < sizeof(n->buf) &&
            (c->io == NULL || c->io->pending == NULL ||
             c->io->pending(c->io_ctx) == 0))
            break;
    }
    if (hold) {
        /* Written once the pass's fsync made its writes durable. */
        if (!c->held) {
            c->held = true;
            c->hnext = n->held;
            n->held = c;
        }
        return 0;
    }
    return out == NULL ? conn_flush(c) : conn_write(c, out, len);
}

/* Woken (goblin_net_woken): a blocked session was served, timed out or
 * unblocked, or the session was killed. Resuming moves its reply into the
 * output and runs the input that waited behind the blocking command. */
static int conn_woken(goblin_conn *c)
{
    lock(c->net);
    if (!c->closing && goblin_session_resume(c->s) < 0)
        c->closing = true;
    unlock(c->net);
    return conn_flush(c);
}

int goblin_conn_event(goblin_conn *c, bool readable, bool writable)
{
    bool resume = c->read_wants_write && writable;

    c->read_wants_write = false;
    if ((resume || readable) && !c->closing)
        return conn_readable(c);
    if (c->held)
        return 0; /* its output waits for the pass's fsync */
    if (!readable && !writable)
        return conn_woken(c);
    return conn_flush(c);
}

void goblin__net_pass_begin(goblin_net *n)
{
    n->pass = true;
}

goblin_conn *goblin__net_pass_next(goblin_net *n, int *m)
{
    goblin_conn *c;

    if (n->pass) {
        n->pass = false;
        lock(n);
        if (goblin__aof_sync_pending(n->cfg.engine))
            goblin__aof_sync(n->cfg.engine);
        unlock(n);
    }
    if ((c = n->held) == NULL)
        return NULL;
    n->held = c->hnext;
    c->held = false;
    *m = conn_flush(c);
    return c;
}

int goblin_conn_feed(goblin_conn *c, const void *data, size_t len)
{
    size_t left;

    lock(c->net);
    if (!c->closing)
        run(c, data, len);
    goblin_session_output(c->s, &left);
    c->closing = c->closing || goblin_session_should_close(c->s);
    left = mask(c, left);
    unlock(c->net);
    return (int)left;
}

const void *goblin_conn_output(goblin_conn *c, size_t *len)
{
    const void *out;

    lock(c->net);
    out = goblin_session_output(c->s, len);
    unlock(c->net);
    return out;
}

int goblin_conn_consume(goblin_conn *c, size_t written)
{
    int m;

    lock(c->net);
    m = settle(c, written);
    unlock(c->net);
    return m;
}

int goblin_conn_interest(goblin_conn *c)
{
    size_t len;
    int m;

    lock(c->net);
    goblin_session_output(c->s, &len);
    unlock(c->net);
    if (c->closing && len == 0)
        return GOBLIN_CONN_CLOSE;
    m = (c->closing ? 0 : GOBLIN_CONN_READ) |
        (len > 0 || c->read_wants_write ? GOBLIN_CONN_WRITE : 0);
    return m;
}

/* ---- accepting ---- */

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
static void describe(const struct goblin_listener *l, int fd,
                     const struct sockaddr_storage *peer, char (*text)[128])
{
    struct sockaddr_storage local;
    socklen_t llen = sizeof(local);

    if (l->transport == GOBLIN_TRANSPORT_UNIX) {
        snprintf(text[0], sizeof(text[0]), "%s:0", l->path ? l->path : "");
        snprintf(text[1], sizeof(text[1]), "%s:0", l->path ? l->path : "");
        return;
    }
    addr_text(peer, text[0], sizeof(text[0]));
    if (getsockname(fd, (struct sockaddr *)&local, &llen) < 0)
        local.ss_family = AF_UNSPEC;
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

static const char full[] = "-ERR max number of clients reached\r\n";

/* Maxclients and protected mode (Redis's clientAcceptHandler): NULL, or
 * the refusal text to send. */
static const char *refusal(goblin_net *n, const struct goblin_listener *l,
                           const struct sockaddr_storage *peer)
{
    const char *why = NULL;

    lock(n);                             /* CONFIG SET may change these */
    refresh_limits(n);
    if (n->nconns >= n->limits.maxclients)
        why = full;
    else if (n->limits.protected_mode &&
             l->transport != GOBLIN_TRANSPORT_UNIX &&
             goblin_engine_default_user_nopass(n->cfg.engine) &&
             !peer_is_loopback(peer))
        why = denied;
    unlock(n);
    return why;
}

static goblin_conn *conn_open(goblin_net *n, const struct goblin_listener *l,
                              int fd, const struct sockaddr_storage *peer)
{
    bool is_unix = l->transport == GOBLIN_TRANSPORT_UNIX;
    struct goblin_session_info info = {0};
    const char *why = refusal(n, l, peer);
    goblin_conn *c;
    char text[2][128];
    int one = 1;

    if (why != NULL) {
        /* In clear only: a TLS client just sees the close. */
        if (!l->secure && write(fd, why, strlen(why)) < 0)
            say(n, GOBLIN_LOG_VERBOSE, "Error sending %s", why == full ?
                "max clients" : "protected mode error");
        return NULL;
    }
    if (!is_unix)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    describe(l, fd, peer, text);
    if ((c = calloc(1, sizeof(*c))) == NULL) {
        say(n, GOBLIN_LOG_WARNING, "Error opening the session of a new "
            "client: out of memory");
        return NULL;
    }
    *c = (goblin_conn){.net = n, .fd = fd, .interest = GOBLIN_CONN_READ,
                       .last_ms = n->now_ms};
    info = (struct goblin_session_info){
        is_unix ? GOBLIN_TRANSPORT_UNIX : GOBLIN_TRANSPORT_TCP, text[0],
        text[1], fd, c};
    lock(n);
    if (goblin_session_open(n->cfg.engine, &info, &c->s) < 0 ||
        ((is_unix ? n->cfg.no_sbe_unix : n->cfg.no_sbe_tcp) &&
         goblin_session_no_sbe(c->s) < 0)) {
        goblin_session_close(c->s);
        c->s = NULL;
    }
    unlock(n);
    if (c->s == NULL) {
        say(n, GOBLIN_LOG_WARNING, "Error opening the session of a new "
            "client: out of memory");
        free(c);
        return NULL;
    }
    c->next = n->conns;
    if (n->conns != NULL)
        n->conns->prev = c;
    n->conns = c;
    n->nconns++;
    say(n, GOBLIN_LOG_VERBOSE, "Accepted %s", text[0]);
    return c;
}

int goblin_net_accept(goblin_net *n, const struct goblin_listener *l,
                      goblin_conn **out)
{
    struct sockaddr_storage peer = {0};
    socklen_t len = sizeof(peer);
    int fd = accept4(l->fd, (struct sockaddr *)&peer, &len,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);

    *out = NULL;
    if (fd < 0) {
        int err = errno;    /* logging may change errno */

        if (err == EAGAIN || err == EINTR)
            return 0;
        say(n, GOBLIN_LOG_WARNING, "Accepting client connection: %s",
            strerror(err));
        return -err;
    }
    if ((*out = conn_open(n, l, fd, &peer)) == NULL)
        close(fd);
    return 1;
}

/* ---- woken connections and cron ---- */

void goblin_net_session_wake(void *ctx, void *user)
{
    goblin_conn *c = user;

    (void)ctx;
    if (c == NULL || c->on_woken)
        return;
    c->on_woken = true;
    c->wnext = c->net->woken;
    c->net->woken = c;
    /* The wake may come from a ring thread while the loop sleeps: one
     * eventfd write per batch of wakes (it never waits). */
    if (!c->net->wake_signaled && c->net->wake_fd >= 0) {
        uint64_t one = 1;

        c->net->wake_signaled = true;
        if (write(c->net->wake_fd, &one, sizeof(one)) < 0)
            c->net->wake_signaled = false;
    }
}

goblin_session *goblin__conn_session(const goblin_conn *c)
{
    return c->s;
}

void goblin__conn_defer_close(goblin_conn *c)
{
    lock(c->net);
    c->closing = true;
    goblin_net_session_wake(NULL, c);
    unlock(c->net);
}

goblin_conn *goblin_net_woken(goblin_net *n)
{
    goblin_conn *c;
    uint64_t v;

    lock(n);
    c = n->woken;
    if (c != NULL) {
        n->woken = c->wnext;
        c->on_woken = false;
    } else if (n->wake_signaled) {
        /* Drained under the lock, so a wake queued after it writes again:
         * a non-blocking read of an eventfd never waits. */
        n->wake_signaled = false;
        if (read(n->wake_fd, &v, sizeof(v)) < 0)
            v = 0;
    }
    unlock(n);
    return c;
}

int goblin_net_wake_fd(const goblin_net *n)
{
    return n->wake_fd;
}

/* A client waiting in a blocking command is not idle (as in Redis). */
static bool conn_blocked(goblin_conn *c)
{
    bool b;

    lock(c->net);
    b = goblin_session_blocked(c->s);
    unlock(c->net);
    return b;
}

void goblin_net_cron(goblin_net *n)
{
    goblin_conn *c, *next;
    long timeout;

    lock(n);
    goblin_engine_cron(n->cfg.engine);
    refresh_limits(n);
    timeout = n->limits.timeout;
    unlock(n);
    n->now_ms = mono_ms();
    if (timeout <= 0)
        return;
    for (c = n->conns; c != NULL; c = next) {
        next = c->next;
        if (n->now_ms - c->last_ms > (int64_t)timeout * 1000 &&
            !conn_blocked(c)) {
            say(n, GOBLIN_LOG_VERBOSE, "Closing idle client");
            goblin_conn_close(c);
        }
    }
}
