/* test_store.c - opening and closing stores, allocation accounting, error
 * texts. */
#include "testutil.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_open_close_leaves_nothing_allocated),
        cmocka_unit_test(test_open_with_null_config_uses_defaults),
        cmocka_unit_test(test_open_fails_cleanly_without_memory),
        cmocka_unit_test(test_open_rejects_missing_out_pointer),
        cmocka_unit_test(test_every_error_code_has_a_text),
        cmocka_unit_test(test_version_matches_header),
    };

    return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
