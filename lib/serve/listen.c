/* listen.c - listening sockets with Redis's bind rules (goblin/serve.h,
 * "listeners"): TCP on IPv4 and IPv6 ("*" and "::*" for every address,
 * a leading '-' for an optional one) and a Unix socket with its
 * permissions. The texts are Redis's log lines, for the caller to log.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <goblin/serve.h>

#define TCP_BACKLOG 511

/* A non-blocking listening TCP socket bound to ai, or -1 with errno. */
static int tcp_socket(const struct addrinfo *ai)
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
        listen(fd, TCP_BACKLOG) == 0)
        return fd;
    err = errno;
    close(fd);
    errno = err;
    return -1;
}

int goblin_listen_tcp(const char *addr, long port_num, bool optional,
                      bool *skipped, char *msg, size_t cap)
{
    struct addrinfo hints = {0}, *ai = NULL;
    char port[16];
    int fd, rc, err;

    *skipped = false;
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
        snprintf(msg, cap, "Bad bind address %s: %s", addr,
                 gai_strerror(rc));
        return GOBLIN_EINVAL;
    }
    fd = tcp_socket(ai);
    err = errno;
    freeaddrinfo(ai);
    if (fd >= 0)
        return fd;
    *skipped = optional && (err == EADDRNOTAVAIL || err == EAFNOSUPPORT ||
                            err == EPROTONOSUPPORT);
    snprintf(msg, cap, "%s: Could not create server TCP listening socket "
             "%s:%ld: %s", *skipped ? "Skipping" : "Error", addr, port_num,
             strerror(err));
    return -err;
}

int goblin_listen_unix(const char *path, unsigned mode, char *msg,
                       size_t cap)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd, err;

    if (strlen(path) >= sizeof(sa.sun_path)) {
        snprintf(msg, cap, "Unix socket path too long: %s", path);
        return GOBLIN_EINVAL;
    }
    strcpy(sa.sun_path, path);
    unlink(path);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
        chmod(path, (mode_t)mode) == 0 && listen(fd, TCP_BACKLOG) == 0)
        return fd;
    err = errno;
    snprintf(msg, cap, "Failed opening Unix socket %s: %s", path,
             strerror(err));
    if (fd >= 0)
        close(fd);
    return -err;
}
