/* conn.c - making a client (goblin/client.h): the TCP and Unix-socket
 * transports over one blocking file descriptor (poll() bounds each wait
 * by the client's timeout), the in-process transport over a session, and
 * the greeting every connection starts with: the SBE magic for SBE, then
 * AUTH when a password is given, then HELLO 3 for RESP3.
 *
 * Invariants: a client whose `failed` is set makes no more I/O; every
 * failure leaves its reason in err.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "client/client.h"
#include "goblin/sbe.h"
#include "sbe/goblin_sbe_gen.h"
#include "util/config_size.h"

static void *mem(const struct goblin_allocator *a, size_t n)
{
    return a != NULL ? a->malloc(a->ctx, n) : malloc(n);
}

static void mem_free(const struct goblin_allocator *a, void *p, size_t n)
{
    if (a != NULL)
        a->free(a->ctx, p, n);
    else
        free(p);
}

void *goblin__client_mem(goblin_client *c, size_t size)
{
    return mem(c->alloc, size);
}

void goblin__client_mem_free(goblin_client *c, void *p, size_t size)
{
    if (p != NULL)
        mem_free(c->alloc, p, size);
}

int goblin__client_fail(goblin_client *c, int code, const char *what)
{
    if (c->failed == 0)
        c->failed = code;
    snprintf(c->err, sizeof(c->err), "%s", what);
    return code;
}

int goblin__client_new(const struct goblin_client_config *cfg,
                       goblin_client **out)
{
    const struct goblin_allocator *a = cfg != NULL ? cfg->allocator : NULL;
    goblin_client *c = mem(a, sizeof(*c));

    if (c == NULL)
        return GOBLIN_ENOMEM;
    memset(c, 0, sizeof(*c));
    c->alloc = a;
    c->fd = -1;
    c->proto = cfg != NULL && cfg->protocol != 0 ? cfg->protocol
                                                  : GOBLIN_CLIENT_RESP2;
    c->timeout_ms = cfg != NULL ? cfg->timeout_ms : 0;
    c->max_frame = cfg != NULL && cfg->max_frame != 0
                       ? cfg->max_frame
                       : GOBLIN_SBE_FRAME_MAX_DEFAULT;
    c->out.alloc = a;
    c->in.alloc = a;
    c->msgq.alloc = a;
    c->msg.alloc = a;
    c->tree.alloc = a;
    c->tree.double_text = true;
    if (c->proto != GOBLIN_CLIENT_SBE &&
        goblin_resp_reader_open(a, 0, &c->reader) != 0) {
        mem_free(a, c, sizeof(*c));
        return GOBLIN_ENOMEM;
    }
    *out = c;
    return 0;
}

void goblin_client_close(goblin_client *c)
{
    if (c == NULL)
        return;
    if (c->tr != NULL && c->tr->close != NULL)
        c->tr->close(c);
    goblin_buf_free(&c->out);
    goblin_buf_free(&c->in);
    goblin_buf_free(&c->msgq);
    goblin_buf_free(&c->msg);
    goblin_resp_reader_close(c->reader);
    goblin__sbe_tree_free(&c->tree);
    if (c->members != NULL)
        mem_free(c->alloc, c->members, c->members_cap * sizeof(*c->members));
    if (c->strings != NULL)
        mem_free(c->alloc, c->strings, c->strings_cap * sizeof(*c->strings));
    mem_free(c->alloc, c, sizeof(*c));
}

/* ---- file descriptors ---- */

/* Waits until fd is ready for events; GOBLIN_ETIMEDOUT after the client's
 * timeout. */
static int wait_fd(goblin_client *c, short events)
{
    struct pollfd p = {c->fd, events, 0};
    int n;

    do {
        n = poll(&p, 1, c->timeout_ms > 0 ? c->timeout_ms : -1);
    } while (n < 0 && errno == EINTR);
    if (n == 0)
        return GOBLIN_ETIMEDOUT;
    return n < 0 ? -errno : 0;
}

static int fd_send(goblin_client *c, const void *p, size_t n)
{
    const char *b = p;
    ssize_t k;
    int rc;

    while (n > 0) {
        k = send(c->fd, b, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if ((rc = wait_fd(c, POLLOUT)) < 0)
                return rc;
            continue;
        }
        if (k < 0)
            return errno == EPIPE ? GOBLIN_ECONNRESET : -errno;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

static int64_t fd_recv(goblin_client *c, void *p, size_t cap)
{
    ssize_t k;
    int rc;

    for (;;) {
        k = recv(c->fd, p, cap, 0);
        if (k > 0)
            return k;
        if (k == 0)
            return GOBLIN_ECONNRESET;
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return errno == ECONNRESET ? GOBLIN_ECONNRESET : -errno;
        if ((rc = wait_fd(c, POLLIN)) < 0)
            return rc;
    }
}

static void fd_close(goblin_client *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

const struct goblin__transport goblin__fd_transport = {fd_send, fd_recv,
                                                       fd_close};

/* ---- an in-process session ---- */

static int sess_send(goblin_client *c, const void *p, size_t n)
{
    int rc = goblin_session_feed(c->sess, p, n);

    /* A session that closes after these bytes still has its replies to
     * give; the end shows when they run out. */
    return rc == GOBLIN_ENOMEM ? rc : 0;
}

static int64_t sess_recv(goblin_client *c, void *p, size_t cap)
{
    size_t len;
    const void *out = goblin_session_output(c->sess, &len);

    if (len == 0)
        return goblin_session_should_close(c->sess) ? GOBLIN_ECONNRESET
                                                     : GOBLIN_ETIMEDOUT;
    if (len > cap)
        len = cap;
    memcpy(p, out, len);
    goblin_session_output_consume(c->sess, len);
    return (int64_t)len;
}

const struct goblin__transport goblin__session_transport = {
    sess_send, sess_recv, NULL};

/* ---- connecting ---- */

static int fd_ready(goblin_client *c, int fd)
{
    int flags = fcntl(fd, F_GETFL, 0);

    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        close(fd);
        return -errno;
    }
    c->fd = fd;
    c->tr = &goblin__fd_transport;
    return 0;
}

static int tcp_open(goblin_client *c, const char *host, int port)
{
    struct addrinfo hints, *res = NULL, *ai;
    char ports[16];
    int fd = -1, rc = GOBLIN_EINVAL, one = 1;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(ports, sizeof(ports), "%d", port);
    if (getaddrinfo(host, ports, &hints, &res) != 0)
        return goblin__client_fail(c, GOBLIN_EINVAL, "cannot resolve host");
    for (ai = res; ai != NULL; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
                    ai->ai_protocol);
        if (fd < 0) {
            rc = -errno;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        rc = -errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0)
        return goblin__client_fail(c, rc, strerror(-rc));
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd_ready(c, fd);
}

static int unix_open(goblin_client *c, const char *path)
{
    struct sockaddr_un sa;
    int fd, rc;

    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sa.sun_path))
        return goblin__client_fail(c, GOBLIN_EINVAL, "socket path too long");
    strcpy(sa.sun_path, path);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return goblin__client_fail(c, -errno, strerror(errno));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        rc = -errno;
        close(fd);
        return goblin__client_fail(c, rc, strerror(-rc));
    }
    return fd_ready(c, fd);
}

/* AUTH then HELLO 3 as configured; the magic goes first for SBE. */
static int greet(goblin_client *c, const struct goblin_client_config *cfg)
{
    const struct goblin_resp_value *v;
    struct goblin_slice argv[3];
    size_t argc = 0;
    int rc;

    if (c->proto == GOBLIN_CLIENT_SBE &&
        goblin_buf_append(&c->out, GOBLIN_SBE_MAGIC, GOBLIN_SBE_MAGIC_LEN))
        return GOBLIN_ENOMEM;
    if (cfg != NULL && cfg->password != NULL) {
        argv[argc++] = (struct goblin_slice){"AUTH", 4};
        if (cfg->username != NULL)
            argv[argc++] = (struct goblin_slice){cfg->username,
                                                 strlen(cfg->username)};
        argv[argc++] = (struct goblin_slice){cfg->password,
                                             strlen(cfg->password)};
        if ((rc = goblin_client_call(c, argc, argv, &v)) < 0)
            return rc;
        if (v->type == GOBLIN_RESP_ERROR)
            return goblin__client_reply_error(c, v) < 0 ? GOBLIN_EREPLY : 0;
    }
    if (c->proto == GOBLIN_CLIENT_RESP3) {
        argv[0] = (struct goblin_slice){"HELLO", 5};
        argv[1] = (struct goblin_slice){"3", 1};
        if ((rc = goblin_client_call(c, 2, argv, &v)) < 0)
            return rc;
        if (v->type == GOBLIN_RESP_ERROR) {
            goblin__client_reply_error(c, v);
            return GOBLIN_EREPLY;
        }
    }
    return goblin_client_flush(c);
}

/* Greets and hands the client out, or closes it. */
static int finish(goblin_client *c, int rc,
                  const struct goblin_client_config *cfg, goblin_client **out)
{
    if (rc == 0)
        rc = greet(c, cfg);
    if (rc != 0) {
        goblin_client_close(c);
        return rc;
    }
    *out = c;
    return 0;
}

static int client_connect_tcp(const char *host, int port,
                              const struct goblin_client_config *cfg,
                              goblin_client **out)
{
    goblin_client *c;
    int rc = goblin__client_new(cfg, &c);

    if (rc != 0)
        return rc;
    return finish(c, tcp_open(c, host, port), cfg, out);
}

int goblin_client_connect_tcp_sized(const char *host, int port,
                                    const struct goblin_client_config *cfg,
                                    size_t cfg_size, goblin_client **out)
{
    struct goblin_client_config c;

    if (cfg == NULL)
        return client_connect_tcp(host, port, NULL, out);
    if (goblin__config_copy(&c, sizeof(c), cfg, cfg_size,
                            sizeof(cfg->protocol)) != 0)
        return GOBLIN_EINVAL;
    return client_connect_tcp(host, port, &c, out);
}

static int client_connect_unix(const char *path,
                               const struct goblin_client_config *cfg,
                               goblin_client **out)
{
    goblin_client *c;
    int rc = goblin__client_new(cfg, &c);

    if (rc != 0)
        return rc;
    return finish(c, unix_open(c, path), cfg, out);
}

int goblin_client_connect_unix_sized(const char *path,
                                     const struct goblin_client_config *cfg,
                                     size_t cfg_size, goblin_client **out)
{
    struct goblin_client_config c;

    if (cfg == NULL)
        return client_connect_unix(path, NULL, out);
    if (goblin__config_copy(&c, sizeof(c), cfg, cfg_size,
                            sizeof(cfg->protocol)) != 0)
        return GOBLIN_EINVAL;
    return client_connect_unix(path, &c, out);
}

static int client_connect_session(goblin_session *s,
                                  const struct goblin_client_config *cfg,
                                  goblin_client **out)
{
    goblin_client *c;
    int rc = goblin__client_new(cfg, &c);

    if (rc != 0)
        return rc;
    c->sess = s;
    c->tr = &goblin__session_transport;
    return finish(c, 0, cfg, out);
}

int goblin_client_connect_session_sized(goblin_session *s,
                                        const struct goblin_client_config *cfg,
                                        size_t cfg_size, goblin_client **out)
{
    struct goblin_client_config c;

    if (cfg == NULL)
        return client_connect_session(s, NULL, out);
    if (goblin__config_copy(&c, sizeof(c), cfg, cfg_size,
                            sizeof(cfg->protocol)) != 0)
        return GOBLIN_EINVAL;
    return client_connect_session(s, &c, out);
}

/* ---- a shared-memory ring ---- */

/* Empty peeks before the client waits by the ring's idle strategy. */
#define RING_SPINS 4096

static int64_t ring_timeout_ns(const goblin_client *c)
{
    return c->timeout_ms > 0 ? (int64_t)c->timeout_ms * 1000000 : -1;
}

/* The next record to send out of p[0..n): the magic alone, then over SBE
 * one whole frame, over RESP as much as a record holds. */
static size_t ring_piece(goblin_client *c, const char *p, size_t n)
{
    if (c->proto != GOBLIN_CLIENT_SBE)
        return n < goblin_ring_max_record(c->ring)
                   ? n : goblin_ring_max_record(c->ring);
    if (!c->magic_sent) {
        c->magic_sent = true;
        return GOBLIN_SBE_MAGIC_LEN;
    }
    /* The frames queued here are our own, whole. */
    return 4 + (size_t)goblin_sbe_rd_u32((const uint8_t *)p);
}

static int ring_send(goblin_client *c, const void *p, size_t n)
{
    const char *b = p;
    size_t k;
    int rc;

    while (n > 0) {
        k = ring_piece(c, b, n);
        if (k > goblin_ring_max_record(c->ring))
            return GOBLIN_ELIMIT; /* an SBE request must fit one record */
        rc = goblin_ring_send(c->ring, b, (uint32_t)k, ring_timeout_ns(c));
        if (rc < 0)
            return rc;
        b += k;
        n -= k;
    }
    return 0;
}

int goblin__client_ring_next(goblin_client *c, struct goblin_slice *rec)
{
    unsigned spins = 0;
    int rc;

    for (;;) {
        rc = goblin_ring_peek(c->ring, rec);
        if (rc == GOBLIN_RING_RECORD && rec->len > 0)
            return 0;
        if (rc == GOBLIN_RING_RECORD) {
            goblin_ring_release(c->ring);
            continue;
        }
        if (rc < 0)
            return rc;
        /* A reply is usually a few hundred ns away: look again before
         * entering the ring's wait, which reads the clock and may sleep. */
        if (++spins < RING_SPINS)
            continue;
        spins = 0;
        if ((rc = goblin_ring_wait(c->ring, ring_timeout_ns(c))) < 0)
            return rc;
    }
}

/* Copies one CQ record out. A record bigger than cap asks the caller for
 * more room (read_min) with GOBLIN_ERANGE. */
static int64_t ring_recv(goblin_client *c, void *p, size_t cap)
{
    struct goblin_slice rec;
    int rc = goblin__client_ring_next(c, &rec);

    if (rc < 0)
        return rc;
    if (rec.len > cap) {
        c->read_min = rec.len;
        return GOBLIN_ERANGE;
    }
    memcpy(p, rec.ptr, rec.len);
    goblin_ring_release(c->ring);
    return (int64_t)rec.len;
}

static void ring_close(goblin_client *c)
{
    goblin_ring_close(c->ring);
    c->ring = NULL;
}

const struct goblin__transport goblin__ring_transport = {ring_send, ring_recv,
                                                         ring_close};

static int client_connect_ring(const char *path,
                               const struct goblin_client_config *cfg,
                               goblin_client **out)
{
    struct goblin_ring_config rc = {0};
    goblin_client *c;
    int r = goblin__client_new(cfg, &c);

    if (r != 0)
        return r;
    rc.idle = cfg != NULL ? cfg->ring_idle : 0;
    rc.allocator = c->alloc;
    r = goblin_ring_open(path, &rc, &c->ring);
    if (r == 0) {
        c->tr = &goblin__ring_transport;
        c->read_min = goblin_ring_max_record(c->ring);
        c->max_request = goblin_ring_max_record(c->ring);
    }
    return finish(c, r, cfg, out);
}

int goblin_client_connect_ring_sized(const char *path,
                                     const struct goblin_client_config *cfg,
                                     size_t cfg_size, goblin_client **out)
{
    struct goblin_client_config c;

    if (cfg == NULL)
        return client_connect_ring(path, NULL, out);
    if (goblin__config_copy(&c, sizeof(c), cfg, cfg_size,
                            sizeof(cfg->protocol)) != 0)
        return GOBLIN_EINVAL;
    return client_connect_ring(path, &c, out);
}
