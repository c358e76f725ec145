/* test_ring_util.h - what the ring tests share: unique ring paths under
 * /dev/shm, the skip check (exit 77 without shm), connecting a client while
 * the test thread serves the server's side of the handshake, and a
 * deterministic byte generator for record contents. */
#ifndef GOBLIN_TEST_RING_UTIL_H
#define GOBLIN_TEST_RING_UTIL_H

#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "goblin.h"
#include "ring/ring_int.h"

#define SKIP_EXIT 77

/* A path unique to this process and name; any old file is removed. */
static inline const char *ring_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "/dev/shm/goblin-test-%d-%s.ring", (int)getpid(),
             name);
    unlink(buf);
    return buf;
}

/* True if /dev/shm takes files (else the tests are skipped). */
static inline int shm_available(void)
{
    char p[128];
    int fd;

    ring_path(p, sizeof(p), "probe");
    fd = open(p, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        return 0;
    close(fd);
    unlink(p);
    return 1;
}

struct opener {
    const char *path;
    const struct goblin_ring_config *cfg;
    goblin_ring *srv;        /* attach to this server's mapping if set */
    goblin_ring *cli;
    int rc;
    atomic_int done;
};

static inline void *opener_main(void *arg)
{
    struct opener *o = arg;

    if (o->srv != NULL)
        o->rc = goblin__ring_attach(o->srv, o->cfg, &o->cli);
    else
        o->rc = goblin_ring_open(o->path, o->cfg, &o->cli);
    atomic_store(&o->done, 1);
    return NULL;
}

/* Opens a client (or attaches one when path is NULL) while this thread
 * polls srv so the handshake completes. Returns what open returned. */
static inline int connect_client(goblin_ring *srv, const char *path,
                          const struct goblin_ring_config *cfg,
                          goblin_ring **cli)
{
    struct opener o = {path, cfg, path == NULL ? srv : NULL, NULL, 0, 0};
    struct goblin_slice rec;
    pthread_t th;

    if (pthread_create(&th, NULL, opener_main, &o) != 0)
        return GOBLIN_ENOMEM;
    while (!atomic_load(&o.done)) {
        (void)goblin_ring_peek(srv, &rec);
        usleep(20);
    }
    pthread_join(th, NULL);
    *cli = o.cli;
    return o.rc;
}

/* A server and a connected client on the smallest rings. */
struct pair {
    char path[128];
    goblin_ring *srv;
    goblin_ring *cli;
};

static inline void pair_open(struct pair *p, const char *name,
                             uint64_t size)
{
    struct goblin_ring_config cfg = {0};

    cfg.sq_size = cfg.cq_size = size;
    cfg.idle = GOBLIN_RING_IDLE_SPIN;
    ring_path(p->path, sizeof(p->path), name);
    assert_int_equal(goblin_ring_create(p->path, &cfg, &p->srv), 0);
    assert_int_equal(connect_client(p->srv, p->path, &cfg, &p->cli), 0);
}

static inline void pair_close(struct pair *p)
{
    goblin_ring_close(p->cli);
    goblin_ring_close(p->srv);
    assert_int_equal(access(p->path, F_OK), -1);    /* server unlinked it */
}

static inline struct goblin_slice slice_of(const void *p, size_t n)
{
    struct goblin_slice s = {p, n};
    return s;
}

/* xorshift64*: record contents that the reader can regenerate. */
static inline uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static inline void fill_bytes(unsigned char *p, size_t n, uint64_t seed)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1, v;
    size_t i;

    for (i = 0; i < n; i += 8) {
        v = rnd(&s);
        memcpy(p + i, &v, n - i < 8 ? n - i : 8);
    }
}

/* FNV-1a over bytes. */
static inline uint64_t checksum(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i;

    for (i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

#endif
