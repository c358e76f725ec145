/* testutil.h - what the unit tests share: S() slices, a counting
 * allocator that can fail the Nth allocation, a settable clock, and a
 * store fixture built on both. Everything is static inline, so a test may
 * use any part of it. */
#ifndef GOBLIN_TESTUTIL_H
#define GOBLIN_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "goblin.h"

/* A slice from a string literal (binary-safe: sizeof, not strlen). */
#define S(lit) ((struct goblin_slice){(lit), sizeof(lit) - 1})

/* A slice over n bytes at p. */
static inline struct goblin_slice slice_of(const void *p, size_t n)
{
    struct goblin_slice s = {p, n};
    return s;
}

struct counting_alloc {
    size_t live_bytes;
    size_t live_blocks;
    long fail_after; /* allocations left before one fails; -1 = never */
};

static inline void *counting_malloc(void *ctx, size_t size)
{
    struct counting_alloc *c = ctx;
    void *p;

    if (c->fail_after == 0)
        return NULL;
    if (c->fail_after > 0)
        c->fail_after--;
    p = malloc(size);
    if (p != NULL) {
        c->live_bytes += size;
        c->live_blocks++;
    }
    return p;
}

static inline void *counting_realloc(void *ctx, void *ptr, size_t old_size,
                              size_t new_size)
{
    struct counting_alloc *c = ctx;
    void *p;

    if (c->fail_after == 0)
        return NULL;
    if (c->fail_after > 0)
        c->fail_after--;
    p = realloc(ptr, new_size);
    if (p != NULL) {
        c->live_bytes += new_size - old_size;
        if (ptr == NULL) /* realloc of NULL allocates a new block */
            c->live_blocks++;
    }
    return p;
}

static inline void counting_free(void *ctx, void *ptr, size_t size)
{
    struct counting_alloc *c = ctx;

    if (ptr == NULL)
        return;
    c->live_bytes -= size;
    c->live_blocks--;
    free(ptr);
}

struct test_clock {
    int64_t now_ms;
};

static inline int64_t test_clock_now(void *ctx)
{
    return ((struct test_clock *)ctx)->now_ms;
}

/* The usual fixture: a store with a fixed seed, a counting allocator and a
 * clock the test sets. state points at a struct fixture. */
struct fixture {
    goblin_store *st;
    struct counting_alloc counts;
    struct goblin_allocator alloc;
    struct test_clock clock;
};

static inline int fixture_setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    struct goblin_config cfg = {0};

    if (f == NULL)
        return -1;
    f->counts.fail_after = -1;
    f->alloc.malloc = counting_malloc;
    f->alloc.realloc = counting_realloc;
    f->alloc.free = counting_free;
    f->alloc.ctx = &f->counts;
    f->clock.now_ms = 1700000000000;
    cfg.allocator = &f->alloc;
    cfg.seed = 42;
    cfg.now_ms = test_clock_now;
    cfg.clock_ctx = &f->clock;
    if (goblin_store_open(&cfg, &f->st) != 0)
        return -1;
    *state = f;
    return 0;
}

/* Closes the store and fails the test if anything is still allocated. */
static inline int fixture_teardown(void **state)
{
    struct fixture *f = *state;

    goblin_store_close(f->st);
    assert_int_equal(f->counts.live_bytes, 0);
    assert_int_equal(f->counts.live_blocks, 0);
    free(f);
    return 0;
}

/* True under `meson test --setup valgrind`, which sets GOBLIN_VALGRIND.
 * Valgrind computes x87 long doubles with 64 bits (its manual's
 * "Limitations"), so tests of INCRBYFLOAT's long double results skip. */
static inline int under_valgrind(void)
{
    return getenv("GOBLIN_VALGRIND") != NULL;
}

#define FIXTURE_TEST(fn) \
    cmocka_unit_test_setup_teardown(fn, fixture_setup, fixture_teardown)

#endif
