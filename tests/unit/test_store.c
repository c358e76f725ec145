/* test_store.c - opening and closing stores, allocation accounting, error
 * texts, the invariant check. */
#include <stdio.h>

#include "testutil.h"
#include "store/store.h"

static void test_open_close_leaves_nothing_allocated(void **state)
{
    struct fixture *f = *state;

    assert_non_null(f->st);
    assert_true(goblin_store_used_memory(f->st) > 0);
}

static void test_open_with_null_config_uses_defaults(void **state)
{
    goblin_store *st = NULL;

    (void)state;
    assert_int_equal(goblin_store_open(NULL, &st), 0);
    assert_non_null(st);
    assert_true(goblin_store_now_ms(st) > 1600000000000);
    goblin_store_close(st);
    goblin_store_close(NULL);
}

static int64_t fixed_us(void *ctx)
{
    return *(const int64_t *)ctx;
}

/* One clock whichever resolution the embedder gives: microseconds alone
 * also give the milliseconds; milliseconds alone are the microseconds
 * times 1000 (TIME then ends in 000, as the clock says); none is the real
 * time, whose microseconds are not all multiples of 1000. */
static void test_clock_in_microseconds(void **state)
{
    struct test_clock ms = {1700000000123};
    int64_t us = 1700000000123456;
    struct goblin_config cfg = {0};
    goblin_store *st;
    bool odd = false;

    (void)state;
    cfg.now_us = fixed_us;
    cfg.clock_ctx = &us;
    assert_int_equal(goblin_store_open(&cfg, &st), 0);
    assert_int_equal(goblin_store_now_us(st), 1700000000123456);
    assert_int_equal(goblin_store_now_ms(st), 1700000000123);
    goblin_store_close(st);

    cfg.now_us = NULL;
    cfg.now_ms = test_clock_now;
    cfg.clock_ctx = &ms;
    assert_int_equal(goblin_store_open(&cfg, &st), 0);
    assert_int_equal(goblin_store_now_us(st), 1700000000123000);
    goblin_store_close(st);

    assert_int_equal(goblin_store_open(NULL, &st), 0);
    for (int i = 0; i < 50 && !odd; i++) {
        odd = goblin_store_now_us(st) % 1000 != 0;
    }
    assert_true(odd);
    assert_true(goblin_store_now_us(st) / 1000 - goblin_store_now_ms(st) <= 0);
    goblin_store_close(st);
}

static void test_open_fails_cleanly_without_memory(void **state)
{
    struct counting_alloc counts = {0, 0, 0};
    struct goblin_allocator a = {counting_malloc, counting_realloc,
                                 counting_free, &counts};
    struct goblin_config cfg = {0};
    goblin_store *st = NULL;

    (void)state;
    cfg.allocator = &a;
    assert_int_equal(goblin_store_open(&cfg, &st), GOBLIN_ENOMEM);
    assert_null(st);
    assert_int_equal(counts.live_blocks, 0);
}

static void test_open_rejects_missing_out_pointer(void **state)
{
    (void)state;
    assert_int_equal(goblin_store_open(NULL, NULL), GOBLIN_EINVAL);
}

static void test_every_error_code_has_a_text(void **state)
{
    (void)state;
    for (int code = -1200; code <= 0; code++)
        assert_non_null(goblin_strerror(code));
    assert_string_equal(goblin_strerror(GOBLIN_ENOTINT),
                        "value is not an integer or out of range");
}

static void test_version_matches_header(void **state)
{
    (void)state;
    assert_int_equal(goblin_version(), GOBLIN_VERSION_MAJOR * 10000 +
                                           GOBLIN_VERSION_MINOR * 100 +
                                           GOBLIN_VERSION_PATCH);
}

/* goblin__store_check (the fuzz targets' invariant check) passes on every
 * kind of key: strings of each encoding, compact and full hashes and
 * sorted sets, keys with deadlines, and after deletes move ids. */
static void test_store_check_passes_on_every_kind_of_key(void **state)
{
    struct fixture *f = *state;
    char field[32], big[100];

    memset(big, 'x', sizeof(big));
    assert_int_equal(goblin__store_check(f->st), 0);
    assert_int_equal(goblin_str_set(f->st, S("i"), S("42"), NULL, NULL), 1);
    assert_int_equal(goblin_str_set(f->st, S("e"), S("short"), NULL, NULL),
                     1);
    assert_int_equal(goblin_str_set(f->st, S("r"),
                                    slice_of(big, sizeof(big)), NULL, NULL),
                     1);
    for (int i = 0; i < 200; i++) {
        int n = snprintf(field, sizeof(field), "f%d", i);
        struct goblin_slice fv[2] = {slice_of(field, (size_t)n), S("v")};

        assert_true(goblin_hash_set(f->st, S("hf"), fv, 1) >= 0);
        assert_true(goblin_zset_add(f->st, S("zf"), fv[0], i) >= 0);
    }
    assert_true(goblin_hash_set(f->st, S("hc"), (struct goblin_slice[]){
                                    S("a"), S("1")}, 1) >= 0);
    assert_true(goblin_zset_add(f->st, S("zc"), S("m"), 1.5) >= 0);
    assert_int_equal(goblin_key_pexpire(f->st, S("e"), 100000, 0), 1);
    assert_int_equal(goblin_key_pexpire(f->st, S("zf"), 100000, 0), 1);
    assert_int_equal(goblin__store_check(f->st), 0);
    assert_int_equal(goblin_key_delete(f->st, S("i")), 1);
    assert_int_equal(goblin__store_check(f->st), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_open_close_leaves_nothing_allocated),
        FIXTURE_TEST(test_store_check_passes_on_every_kind_of_key),
        cmocka_unit_test(test_open_with_null_config_uses_defaults),
        cmocka_unit_test(test_clock_in_microseconds),
        cmocka_unit_test(test_open_fails_cleanly_without_memory),
        cmocka_unit_test(test_open_rejects_missing_out_pointer),
        cmocka_unit_test(test_every_error_code_has_a_text),
        cmocka_unit_test(test_version_matches_header),
    };

    return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
