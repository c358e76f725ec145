/* test_backlog.c - the replication backlog (lib/repl/backlog.h): Redis's
 * offsets, wrapping round the buffer at every position, appends larger
 * than the buffer, what a reconnecting replica can be served, and
 * resizing, against a model that keeps the whole stream. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "repl/backlog.h"

struct out {
    unsigned char b[4096];
    size_t len;
    int pieces;
};

static void collect(void *ctx, const void *p, size_t n)
{
    struct out *o = ctx;

    memcpy(o->b + o->len, p, n);
    o->len += n;
    o->pieces++;
}

/* Every offset the backlog covers gives exactly the model's bytes. */
static void check_against(const struct goblin__backlog *b,
                          const unsigned char *all, uint64_t total)
{
    uint64_t first = goblin__backlog_first(b);

    assert_int_equal(b->end, total);
    assert_false(goblin__backlog_covers(b, first - 1) && first > 1);
    assert_false(goblin__backlog_covers(b, total + 2));
    for (uint64_t from = first; from <= total + 1; from++) {
        struct out o = {.len = 0};

        assert_true(goblin__backlog_covers(b, from));
        assert_int_equal(goblin__backlog_copy(b, from, collect, &o),
                         total + 1 - from);
        assert_true(o.pieces <= 2);
        assert_memory_equal(o.b, all + from - 1, o.len);
    }
}

static void test_offsets_start_where_the_stream_is(void **state)
{
    struct goblin__backlog b;

    (void)state;
    assert_int_equal(goblin__backlog_init(&b, 16, 100), 0);
    assert_int_equal(goblin__backlog_first(&b), 101);
    assert_true(goblin__backlog_covers(&b, 101));
    assert_false(goblin__backlog_covers(&b, 100));
    assert_false(goblin__backlog_covers(&b, 102));
    goblin__backlog_append(&b, "abc", 3);
    assert_int_equal(b.end, 103);
    assert_int_equal(goblin__backlog_first(&b), 101);
    goblin__backlog_free(&b);
}

static void test_wrap_at_every_position(void **state)
{
    unsigned char all[2048];
    uint64_t total = 0;

    (void)state;
    for (size_t i = 0; i < sizeof(all); i++)
        all[i] = (unsigned char)(i * 7 + i / 251);
    for (size_t step = 1; step <= 23; step++) {
        struct goblin__backlog b;

        total = 0;
        assert_int_equal(goblin__backlog_init(&b, 37, 0), 0);
        while (total + step <= 400) {
            goblin__backlog_append(&b, all + total, step);
            total += step;
            assert_int_equal(b.histlen, total < 37 ? total : 37);
            check_against(&b, all, total);
        }
        goblin__backlog_free(&b);
    }
}

static void test_append_larger_than_the_buffer(void **state)
{
    unsigned char all[300];
    struct goblin__backlog b;

    (void)state;
    for (size_t i = 0; i < sizeof(all); i++)
        all[i] = (unsigned char)(i ^ 0x5a);
    assert_int_equal(goblin__backlog_init(&b, 50, 0), 0);
    goblin__backlog_append(&b, all, 7);
    goblin__backlog_append(&b, all + 7, 120); /* more than 50 at once */
    check_against(&b, all, 127);
    assert_int_equal(goblin__backlog_first(&b), 78);
    goblin__backlog_append(&b, all + 127, 3);
    check_against(&b, all, 130);
    goblin__backlog_free(&b);
}

static void test_resize_keeps_the_newest_bytes(void **state)
{
    unsigned char all[500];
    struct goblin__backlog b;

    (void)state;
    for (size_t i = 0; i < sizeof(all); i++)
        all[i] = (unsigned char)(i * 13);
    assert_int_equal(goblin__backlog_init(&b, 64, 0), 0);
    goblin__backlog_append(&b, all, 100);   /* wrapped */
    assert_int_equal(goblin__backlog_resize(&b, 20), 0);
    assert_int_equal(b.histlen, 20);
    check_against(&b, all, 100);
    goblin__backlog_append(&b, all + 100, 15);
    check_against(&b, all, 115);
    assert_int_equal(goblin__backlog_resize(&b, 200), 0);
    assert_int_equal(b.histlen, 20);
    goblin__backlog_append(&b, all + 115, 150);
    assert_int_equal(b.histlen, 170);
    check_against(&b, all, 265);
    goblin__backlog_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offsets_start_where_the_stream_is),
        cmocka_unit_test(test_wrap_at_every_position),
        cmocka_unit_test(test_append_larger_than_the_buffer),
        cmocka_unit_test(test_resize_keeps_the_newest_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
