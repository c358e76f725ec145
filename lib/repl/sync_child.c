/* sync_child.c - the forked child of a full sync (goblin_repl_sync_child):
 * to each replica waiting for it, what its output held (the +FULLRESYNC
 * line), then the RDB payload, straight to the socket. With "capa eof"
 * the payload streams as Redis's disk-less sync sends it: "$EOF:<40
 * bytes>\r\n", the RDB, the same 40 bytes; otherwise it is written to
 * a memory file first, for its length ("$<len>\r\n" and the bytes). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "goblin/repl.h"
#include "goblin/snapshot.h"
#include "goblin/stream.h"
#include "repl.h"

/* Writes all n bytes to a non-blocking socket, waiting when it is full,
 * at most timeout_ms for each wait. 0 or -errno. */
static int write_all(int fd, const void *p, size_t n, int timeout_ms)
{
    const char *q = p;

    while (n > 0) {
        ssize_t w = write(fd, q, n);

        if (w > 0) {
            q += w;
            n -= (size_t)w;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && errno == EAGAIN) {
            struct pollfd pfd = {fd, POLLOUT, 0};
            int rc = poll(&pfd, 1, timeout_ms);

            if (rc == 0)
                return -ETIMEDOUT;
            if (rc < 0 && errno != EINTR)
                return -errno;
        } else {
            return w < 0 ? -errno : -EIO;
        }
    }
    return 0;
}

static void eof_mark(char *mark)
{
    static const char hex[] = "0123456789abcdef";
    struct timespec ts;
    uint64_t h;

    clock_gettime(CLOCK_REALTIME, &ts);
    h = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
    for (int i = 0; i < 40; i++) {
        h ^= h << 13;
        h ^= h >> 7;
        h ^= h << 17;
        mark[i] = hex[h & 15];
    }
}

static int send_eof_form(goblin_engine *eng, int fd,
                         const struct goblin_rdb_aux *aux, int tmo)
{
    char head[48], mark[40];
    int rc;

    eof_mark(mark);
    memcpy(head, "$EOF:", 5);
    memcpy(head + 5, mark, 40);
    memcpy(head + 45, "\r\n", 2);
    if ((rc = write_all(fd, head, 47, tmo)) != 0)
        return rc;
    if ((rc = goblin_engine_rdb_write_fd(eng, fd, aux, NULL)) != 0)
        return rc;
    return write_all(fd, mark, 40, tmo);
}

static int send_bulk_form(goblin_engine *eng, int fd,
                          const struct goblin_rdb_aux *aux, int tmo)
{
    char head[32], buf[65536];
    struct stat st;
    off_t pos = 0;
    int mfd, rc, k;

    if ((mfd = memfd_create("goblin-sync", MFD_CLOEXEC)) < 0)
        return -errno;
    if ((rc = goblin_engine_rdb_write_fd(eng, mfd, aux, NULL)) != 0 ||
        (rc = fstat(mfd, &st) != 0 ? -errno : 0) != 0)
        goto out;
    k = snprintf(head, sizeof(head), "$%lld\r\n", (long long)st.st_size);
    if ((rc = write_all(fd, head, (size_t)k, tmo)) != 0)
        goto out;
    while (pos < st.st_size) {
        ssize_t r = pread(mfd, buf, sizeof(buf), pos);

        if (r <= 0) {
            rc = r < 0 ? -errno : -EIO;
            goto out;
        }
        if ((rc = write_all(fd, buf, (size_t)r, tmo)) != 0)
            goto out;
        pos += r;
    }
out:
    close(mfd);
    return rc;
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* Closes every descriptor from 3 up but the n in keep. */
static void close_others(int *keep, size_t n)
{
    int from = 3;

    qsort(keep, n, sizeof(*keep), cmp_int);
    for (size_t i = 0; i < n; i++) {
        if (keep[i] < from)
            continue;
        if (keep[i] > from)
            close_range((unsigned)from, (unsigned)keep[i] - 1, 0);
        from = keep[i] + 1;
    }
    close_range((unsigned)from, ~0u, 0);
}

int goblin_repl_sync_child(goblin_engine *eng, int keep_fd)
{
    struct goblin__repl *r = eng->repl;
    struct goblin_rdb_aux aux = {0};
    sigset_t all;
    int *keep, rc = 0, tmo;
    size_t n = 0;

    if (r == NULL)
        return GOBLIN_EINVAL;
    sigfillset(&all);
    sigprocmask(SIG_UNBLOCK, &all, NULL);
    signal(SIGPIPE, SIG_IGN);
    if ((keep = calloc(r->nreplicas + 1, sizeof(*keep))) == NULL)
        return GOBLIN_ENOMEM;
    if (keep_fd >= 0)
        keep[n++] = keep_fd;
    for (size_t i = 0; i < r->nreplicas; i++)
        if (r->replicas[i]->state == GOBLIN__REPLICA_SYNCING)
            keep[n++] = r->replicas[i]->s->fd;
    close_others(keep, n);
    free(keep);
    tmo = (int)goblin_engine_config_int(eng, "repl-timeout", 60) * 1000;
    aux.repl_id = r->replid;
    aux.repl_offset = (int64_t)goblin_stream_offset(eng);
    aux.repl_stream_db = 0;
    for (size_t i = 0; i < r->nreplicas; i++) {
        struct goblin__replica *rp = r->replicas[i];
        goblin_session *s = rp->s;
        int one;

        if (rp->state != GOBLIN__REPLICA_SYNCING)
            continue;
        one = write_all(s->fd, s->out.data + s->out_pos,
                        s->out.len - s->out_pos, tmo);
        if (one == 0)
            one = rp->capa_eof ? send_eof_form(eng, s->fd, &aux, tmo) :
                                 send_bulk_form(eng, s->fd, &aux, tmo);
        if (one != 0)
            rc = one;
    }
    return rc;
}
