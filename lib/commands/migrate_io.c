/* migrate_io.c - MIGRATE's connection to its target: a blocking TCP
 * connection with each step bounded by the command's timeout, as Redis's
 * connBlockingConnect, connSyncWrite and connSyncReadLine (syncio.c).
 *
 * As in Redis, the connect waits for the socket to become writable and
 * does not look at why: a refused connection shows as the first write's
 * error ("error or timeout writing"), a name that does not resolve or a
 * connect that does not finish in time as a connecting error. Writes use
 * MSG_NOSIGNAL, so a target that went away never raises SIGPIPE in the
 * program that embeds the engine.
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
#include <time.h>
#include <unistd.h>

#include "migrate_io.h"

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until fd is ready for events or deadline passes: > 0 ready, 0
 * timed out (errno ETIMEDOUT), < 0 failed. */
static int wait_until(int fd, short events, int64_t deadline)
{
    for (;;) {
        struct pollfd p = {fd, events, 0};
        int64_t left = deadline - mono_ms();
        int n;

        if (left <= 0) {
            errno = ETIMEDOUT;
            return 0;
        }
        n = poll(&p, 1, left > 1000000 ? 1000000 : (int)left);
        if (n > 0)
            return 1;
        if (n < 0 && errno != EINTR)
            return -1;
    }
}

/* One address: a non-blocking socket, its connect started; -1 when the
 * connect failed at once. */
static int start_connect(const struct addrinfo *ai)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
                    ai->ai_protocol);

    if (fd < 0)
        return -1;
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0 ||
        (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 &&
         errno != EINPROGRESS)) {
        close(fd);
        return -1;
    }
    return fd;
}

int goblin__migrate_connect(struct goblin__migrate_conn *c, const char *host,
                            const char *port, int64_t timeout_ms)
{
    struct addrinfo hints, *res = NULL;
    int fd = -1, one = 1;

    memset(c, 0, sizeof(*c));
    c->fd = -1;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port, &hints, &res) != 0)
        return -1;
    for (const struct addrinfo *ai = res; ai != NULL && fd < 0;
         ai = ai->ai_next)
        fd = start_connect(ai);
    freeaddrinfo(res);
    if (fd < 0)
        return -1;
    if (wait_until(fd, POLLOUT, mono_ms() + timeout_ms) <= 0) {
        close(fd);
        return -1;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    c->fd = fd;
    return 0;
}

int goblin__migrate_write(struct goblin__migrate_conn *c, const void *p,
                          size_t n, int64_t timeout_ms)
{
    int64_t deadline = mono_ms() + timeout_ms;
    const char *q = p;

    while (n > 0) {
        ssize_t w = send(c->fd, q, n, MSG_NOSIGNAL);

        if (w > 0) {
            q += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
            errno != EINTR)
            return -1;
        if (wait_until(c->fd, POLLOUT, deadline) <= 0)
            return -1;
    }
    return 0;
}

ssize_t goblin__migrate_read_line(struct goblin__migrate_conn *c, char *line,
                                  size_t cap, int64_t timeout_ms)
{
    int64_t deadline = mono_ms() + timeout_ms;
    size_t n = 0;

    for (;;) {
        while (c->pos < c->len) {
            char ch = c->in[c->pos++];

            if (ch == '\n') {
                if (n > 0 && line[n - 1] == '\r')
                    n--;
                line[n] = '\0';
                return (ssize_t)n;
            }
            if (n + 1 < cap)
                line[n++] = ch; /* a longer line is cut, as Redis's */
        }
        ssize_t r = recv(c->fd, c->in, sizeof(c->in), 0);

        if (r > 0) {
            c->pos = 0;
            c->len = (size_t)r;
            continue;
        }
        if (r == 0) {
            errno = ECONNRESET; /* closed: not a timeout */
            return 0;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return -1;
        if (wait_until(c->fd, POLLIN, deadline) <= 0)
            return -1;
    }
}

void goblin__migrate_close(struct goblin__migrate_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}
