/* file.c - ring files: the server builds one (temporary name, size,
 * allocate, map, fill the header, publish magic last, rename over the
 * path), the client waits for one to appear and maps it, and both unmap.
 *
 * Every mapping sits between two PROT_NONE guard pages, so a stray access
 * just outside the file faults instead of touching other memory. The
 * server write-touches and mlocks every page (no first-lap faults, no
 * SIGBUS on a full tmpfs: fallocate fails cleanly instead); the client
 * prefaults with MAP_POPULATE and mlocks. mlock is best effort.
 *
 * Ownership: owner_pid is the creating server. A file whose owner is dead
 * is stale: clients refuse it (GOBLIN_ECONNREFUSED), a new server replaces
 * it. One client at a time: a client holds an exclusive flock on the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ring_int.h"
#include "util/config_size.h"

static void *libc_malloc(void *ctx, size_t size)
{
    (void)ctx;
    return malloc(size);
}

static void *libc_realloc(void *ctx, void *p, size_t old_size, size_t size)
{
    (void)ctx;
    (void)old_size;
    return realloc(p, size);
}

static void libc_free(void *ctx, void *p, size_t size)
{
    (void)ctx;
    (void)size;
    free(p);
}

static const struct goblin_allocator libc_allocator = {
    libc_malloc, libc_realloc, libc_free, NULL,
};

void *goblin__ring_alloc(const struct goblin_allocator *a, size_t size)
{
    return a->malloc(a->ctx, size);
}

void goblin__ring_free(const struct goblin_allocator *a, void *p, size_t size)
{
    if (p != NULL)
        a->free(a->ctx, p, size);
}

void *goblin__ring_realloc(const struct goblin_allocator *a, void *p,
                           size_t old_size, size_t new_size)
{
    void *n;

    if (a->realloc != NULL)
        return a->realloc(a->ctx, p, old_size, new_size);
    n = a->malloc(a->ctx, new_size);
    if (n != NULL && p != NULL) {
        memcpy(n, p, old_size < new_size ? old_size : new_size);
        a->free(a->ctx, p, old_size);
    }
    return n;
}

/* A zeroed handle with the configuration's defaults filled in. */
static goblin_ring *ring_new(const struct goblin_ring_config *cfg)
{
    struct goblin_ring_config c = {0};
    const struct goblin_allocator *a;
    goblin_ring *r;

    if (cfg != NULL)
        c = *cfg;
    a = c.allocator != NULL ? c.allocator : &libc_allocator;
    r = goblin__ring_alloc(a, sizeof(*r));
    if (r == NULL)
        return NULL;
    memset(r, 0, sizeof(*r));
    r->alloc = *a;
    if (c.mode == 0)
        c.mode = 0600;
    if (c.idle == GOBLIN_RING_IDLE_DEFAULT)
        c.idle = GOBLIN_RING_IDLE_BACKOFF;
    if (c.spin_ns == 0)
        c.spin_ns = 50000;
    if (c.open_timeout_ns == 0)
        c.open_timeout_ns = 2000000000;
    if (c.drain_limit == 0)
        c.drain_limit = (size_t)64 << 20;
    r->cfg = c;
    r->fd = -1;
    r->sleep_slice_ns = 100000000;  /* wake at least every 100 ms to let a
                                     * client check its server */
    return r;
}

static void ring_free(goblin_ring *r)
{
    struct goblin_allocator a = r->alloc;

    if (r->owns_map && r->area != NULL)
        munmap(r->area, r->area_len);
    if (r->fd >= 0)
        close(r->fd);
    goblin__ring_free(&a, r->path, r->path_size);
    goblin__ring_free(&a, r->acc, r->acc_cap);
    goblin__ring_free(&a, r, sizeof(*r));
}

/* Maps len bytes of fd between two guard pages. */
static int map_file(goblin_ring *r, size_t len, int extra)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char *area, *p;

    area = mmap(NULL, len + 2 * page, PROT_NONE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (area == MAP_FAILED)
        return -errno;
    p = mmap(area + page, len, PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_FIXED | extra, r->fd, 0);
    if (p == MAP_FAILED) {
        int rc = -errno;

        munmap(area, len + 2 * page);
        return rc;
    }
    r->area = area;
    r->area_len = len + 2 * page;
    r->map_len = len;
    r->owns_map = true;
    r->hdr = (struct goblin__ring_hdr *)p;
    (void)mlock(p, len);                    /* best effort */
    return 0;
}

/* Points both queues of r at the mapped regions. */
static void map_queues(goblin_ring *r, uint64_t sq_cap, uint64_t cq_cap)
{
    struct goblin__ring_hdr *h = r->hdr;
    unsigned char *sq = (unsigned char *)h + sysconf(_SC_PAGESIZE);
    unsigned char *cq = sq + sq_cap;
    struct goblin__ring_queue *sqq = r->server ? &r->rx : &r->tx;
    struct goblin__ring_queue *cqq = r->server ? &r->tx : &r->rx;

    goblin__ring_queue_init(sqq, sq, sq_cap, &h->sq_head, &h->sq_tail,
                            &h->sq_sleep);
    goblin__ring_queue_init(cqq, cq, cq_cap, &h->cq_head, &h->cq_tail,
                            &h->cq_sleep);
}

/* Whether a file already at path may be replaced: 0 if it is absent,
 * empty, or a ring that this process or a dead one served; GOBLIN_EBUSY
 * if a live process serves it; GOBLIN_EINCOMPAT if it is not a ring (we
 * never clobber someone else's file). */
static int check_existing(const char *path)
{
    struct goblin__ring_hdr *h;
    struct stat st;
    int fd, rc = GOBLIN_EINCOMPAT;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    if (fstat(fd, &st) != 0 || st.st_size == 0) {
        close(fd);
        return 0;
    }
    if (S_ISREG(st.st_mode) && st.st_size >= (off_t)sizeof(*h)) {
        h = mmap(NULL, sizeof(*h), PROT_READ, MAP_SHARED, fd, 0);
        if (h != MAP_FAILED) {
            uint32_t m = atomic_load_explicit(&h->magic,
                                              memory_order_acquire);

            if (m == 0)                     /* closed by its server */
                rc = 0;
            else if (m == RING_MAGIC)
                rc = h->version == RING_VERSION &&
                     h->owner_pid != getpid() &&
                     goblin__ring_pid_alive(h->owner_pid)
                         ? GOBLIN_EBUSY : 0;
            munmap(h, sizeof(*h));
        }
    }
    close(fd);
    return rc;
}

/* Server: fills the header of the fresh (zeroed) file; magic goes last. */
static void init_header(goblin_ring *r, uint64_t sq_cap, uint64_t cq_cap)
{
    struct goblin__ring_hdr *h = r->hdr;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), i;

    for (i = 0; i < r->map_len; i += page)  /* write-touch every page */
        ((unsigned char *)h)[i] = 0;
    h->version = RING_VERSION;
    h->line = RING_LINE;
    h->header_size = (uint32_t)page;
    h->sq_cap = sq_cap;
    h->cq_cap = cq_cap;
    h->sq_off = page;
    h->cq_off = page + sq_cap;
    h->owner_pid = (int32_t)getpid();
    h->server_flags = r->cfg.idle == GOBLIN_RING_IDLE_BACKOFF
                          ? RING_SERVER_SLEEPS : 0;
    map_queues(r, sq_cap, cq_cap);
    goblin__ring_queue_reset(&r->rx, 0, goblin__ring_new_key(0));
    goblin__ring_queue_reset(&r->tx, 0, r->rx.key);
    /* Everything above is visible to whoever sees the magic. */
    atomic_store_explicit(&h->magic, RING_MAGIC, memory_order_release);
}

/* Server: sizes, allocates, maps and fills the open temporary file. */
static int build(goblin_ring *r, uint64_t sq_cap, uint64_t cq_cap)
{
    size_t len = (size_t)(sysconf(_SC_PAGESIZE) + sq_cap + cq_cap);
    struct stat st;
    int rc;

    if (fchmod(r->fd, r->cfg.mode & 07777) != 0 ||
        ftruncate(r->fd, (off_t)len) != 0)
        return -errno;
    rc = posix_fallocate(r->fd, 0, (off_t)len);
    if (rc != 0 && rc != EOPNOTSUPP && rc != EINVAL)
        return -rc;
    rc = map_file(r, len, MAP_POPULATE);
    if (rc != 0)
        return rc;
    init_header(r, sq_cap, cq_cap);
    if (fstat(r->fd, &st) != 0)
        return -errno;
    r->dev = st.st_dev;
    r->ino = st.st_ino;
    return 0;
}

/* Server: builds the file under path.XXXXXX, then renames it over path. */
static int create_file(goblin_ring *r, const char *path, uint64_t sq_cap,
                       uint64_t cq_cap)
{
    size_t n = strlen(path);
    char *tmp;
    int rc;

    r->path_size = n + 8;       /* room for the temporary suffix */
    r->path = goblin__ring_alloc(&r->alloc, r->path_size);
    if (r->path == NULL)
        return GOBLIN_ENOMEM;
    tmp = r->path;
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".XXXXXX", 8);
    r->fd = mkostemp(tmp, O_CLOEXEC);
    if (r->fd < 0)
        return -errno;
    rc = build(r, sq_cap, cq_cap);
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    if (rc != 0)
        unlink(tmp);
    tmp[n] = '\0';              /* r->path is now the real path */
    return rc;
}

static int ring_create(const char *path, const struct goblin_ring_config *cfg,
                       goblin_ring **out)
{                                                 /* server side */
    uint64_t sq_cap, cq_cap;
    goblin_ring *r;
    int rc;

    if (path == NULL || path[0] == '\0' || out == NULL)
        return GOBLIN_EINVAL;
    sq_cap = goblin_ring_capacity(cfg != NULL ? cfg->sq_size : 0);
    cq_cap = goblin_ring_capacity(cfg != NULL ? cfg->cq_size : 0);
    if (sq_cap == 0 || cq_cap == 0)
        return GOBLIN_ERANGE;
    if ((cfg != NULL && cfg->idle > GOBLIN_RING_IDLE_BACKOFF) ||
        (cfg != NULL && cfg->idle < 0))
        return GOBLIN_EINVAL;
    rc = check_existing(path);
    if (rc != 0)
        return rc;
    r = ring_new(cfg);
    if (r == NULL)
        return GOBLIN_ENOMEM;
    r->server = true;
    rc = create_file(r, path, sq_cap, cq_cap);
    if (rc != 0) {
        ring_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

int goblin_ring_create_sized(const char *path,
                             const struct goblin_ring_config *cfg,
                             size_t cfg_size, goblin_ring **out)
{
    struct goblin_ring_config c;

    if (cfg == NULL)
        return ring_create(path, NULL, out);
    if (goblin__config_copy(&c, sizeof(c), cfg, cfg_size,
                            sizeof(cfg->sq_size)) != 0)
        return GOBLIN_EINVAL;
    return ring_create(path, &c, out);
}

/* Client: checks the published header h against the file's size st_size.
 * GOBLIN_EAGAIN: not published yet. */
static int check_header(const struct goblin__ring_hdr *h, off_t st_size)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint32_t magic = atomic_load_explicit(&h->magic, memory_order_acquire);

    if (magic == 0)
        return GOBLIN_EAGAIN;
    if (magic != RING_MAGIC || h->version != RING_VERSION ||
        h->line != RING_LINE || h->header_size != page)
        return GOBLIN_EINCOMPAT;
    if (goblin_ring_capacity(h->sq_cap) != h->sq_cap ||
        goblin_ring_capacity(h->cq_cap) != h->cq_cap ||
        h->sq_off != page || h->cq_off != page + h->sq_cap ||
        (uint64_t)st_size < h->cq_off + h->cq_cap)
        return GOBLIN_EINCOMPAT;
    if (!goblin__ring_pid_alive(h->owner_pid))
        return GOBLIN_ECONNREFUSED;
    return 0;
}

/* Client: reads the header of the open file r->fd through a temporary
 * one-page mapping. */
static int peek_header(goblin_ring *r, uint64_t *sq_cap, uint64_t *cq_cap,
                       size_t *len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    struct goblin__ring_hdr *h;
    struct stat st;
    int rc;

    if (fstat(r->fd, &st) != 0)
        return -errno;
    if (st.st_size < (off_t)page)
        return GOBLIN_EAGAIN;               /* between create and size */
    h = mmap(NULL, page, PROT_READ, MAP_SHARED, r->fd, 0);
    if (h == MAP_FAILED)
        return -errno;
    rc = check_header(h, st.st_size);
    *sq_cap = h->sq_cap;
    *cq_cap = h->cq_cap;
    *len = (size_t)(h->cq_off + h->cq_cap);
    munmap(h, page);
    return rc;
}

/* Client: one attempt at opening path. GOBLIN_EAGAIN: try again later. */
static int try_open(goblin_ring *r, const char *path)
{
    uint64_t sq_cap = 0, cq_cap = 0;
    size_t len = 0;
    int rc;

    if (r->fd >= 0)
        close(r->fd);
    r->fd = open(path, O_RDWR | O_CLOEXEC);
    if (r->fd < 0)
        return errno == ENOENT ? GOBLIN_EAGAIN : -errno;
    rc = peek_header(r, &sq_cap, &cq_cap, &len);
    if (rc != 0)
        return rc;
    if (flock(r->fd, LOCK_EX | LOCK_NB) != 0)
        return errno == EWOULDBLOCK ? GOBLIN_EBUSY : -errno;
    rc = map_file(r, len, MAP_POPULATE);
    if (rc != 0)
        return rc;
    map_queues(r, sq_cap, cq_cap);
    return 0;
}

static int ring_open(const char *path, const struct goblin_ring_config *cfg,
                     goblin_ring **out)
{                                                 /* client side */
    int64_t deadline;
    goblin_ring *r;
    int rc;

    if (path == NULL || out == NULL ||
        (cfg != NULL && (cfg->idle < 0 ||
                         cfg->idle > GOBLIN_RING_IDLE_BACKOFF)))
        return GOBLIN_EINVAL;
    deadline = 0;
    for (;;) {
        r = ring_new(cfg);
        if (r == NULL)
            return GOBLIN_ENOMEM;
        if (deadline == 0)
            deadline = goblin__ring_now_ns() +
                       (int64_t)r->cfg.open_timeout_ns;
        while ((rc = try_open(r, path)) == GOBLIN_EAGAIN) {
            if (goblin__ring_now_ns() >= deadline) {
                rc = GOBLIN_ETIMEDOUT;
                break;
            }
            goblin__ring_nap(50000);
        }
        if (rc == 0)
            rc = goblin__ring_handshake(r, deadline);
        if (rc == 0)
            break;
        ring_free(r);
        /* The file was replaced during the handshake (the server reset
         * the ring): the new one at path is the one to open. */
        if (rc != GOBLIN_ECONNRESET || goblin__ring_now_ns() >= deadline)
            return rc;
        goblin__ring_nap(50000);
    }
    *out = r;
    return 0;
}

int goblin_ring_open_sized(const char *path,
                           const struct goblin_ring_config *cfg,
                           size_t cfg_size, goblin_ring **out)
{
    struct goblin_ring_config c;

    if (cfg == NULL)
        return ring_open(path, NULL, out);
    if (goblin__config_copy(&c, sizeof(c), cfg, cfg_size,
                            sizeof(cfg->sq_size)) != 0)
        return GOBLIN_EINVAL;
    return ring_open(path, &c, out);
}

/* Server: unlinks path only if it still names the file we created. */
static void unlink_ours(goblin_ring *r)
{
    struct stat st;

    if (r->path != NULL && stat(r->path, &st) == 0 && st.st_dev == r->dev &&
        st.st_ino == r->ino)
        unlink(r->path);
}

void goblin_ring_close(goblin_ring *r)
{                                                 /* both sides */
    struct goblin__ring_hdr *h;

    if (r == NULL)
        return;
    h = r->hdr;
    if (r->server && h != NULL) {
        /* seq_cst, then the futex word: a client about to sleep either
         * sees the magic gone or gets woken. */
        atomic_store_explicit(&h->magic, 0, memory_order_seq_cst);
        if (atomic_load_explicit(&h->cq_sleep, memory_order_seq_cst) != 0)
            goblin__ring_wake(r, &h->cq_sleep);
        unlink_ours(r);
    }
    ring_free(r);
}

int goblin__ring_attach(goblin_ring *srv,
                        const struct goblin_ring_config *cfg,
                        goblin_ring **out)
{                                                 /* test hook */
    goblin_ring *r;
    int rc;

    if (!srv->server)
        return GOBLIN_EINVAL;
    r = ring_new(cfg);
    if (r == NULL)
        return GOBLIN_ENOMEM;
    r->hdr = srv->hdr;
    map_queues(r, srv->rx.cap, srv->tx.cap);
    rc = goblin__ring_handshake(r, goblin__ring_now_ns() +
                                       (int64_t)r->cfg.open_timeout_ns);
    if (rc != 0) {
        ring_free(r);
        return rc;
    }
    *out = r;
    return 0;
}
