/* test_config_size.c - the size rule for public configuration structs: a
 * caller built against an older (shorter) or newer (longer) header still
 * gets what it asked for, or GOBLIN_EINVAL when it asks for a setting the
 * library does not know. */
#include <stddef.h>
#include <string.h>

#include "testutil.h"
#include "util/config_size.h"

static int64_t fixed_clock(void *ctx)
{
    (void)ctx;
    return 1234567;
}

/* A caller whose header ended before now_ms: the clock is the default. */
static void test_an_older_shorter_config_defaults_the_rest(void **state)
{
    struct goblin_config cfg;
    goblin_store *st = NULL;

    (void)state;
    memset(&cfg, 0, sizeof(cfg));
    cfg.seed = 7;
    cfg.now_ms = fixed_clock; /* past the size given: must not be read */
    assert_int_equal(goblin_store_open_sized(
                         &cfg, offsetof(struct goblin_config, now_ms), &st),
                     0);
    assert_true(goblin_store_now_ms(st) > 1600000000000);
    goblin_store_close(st);

    assert_int_equal(goblin_store_open_sized(&cfg, sizeof(cfg), &st), 0);
    assert_int_equal(goblin_store_now_ms(st), 1234567);
    goblin_store_close(st);
}

/* A caller whose header has fields this library lacks. */
static void test_a_newer_config_works_unless_it_sets_unknown_fields(
    void **state)
{
    struct {
        struct goblin_config known;
        uint64_t future[2];
    } newer;
    goblin_store *st = NULL;

    (void)state;
    memset(&newer, 0, sizeof(newer));
    assert_int_equal(goblin_store_open_sized(&newer.known, sizeof(newer),
                                             &st),
                     0);
    goblin_store_close(st);
    st = NULL;
    newer.future[1] = 1;
    assert_int_equal(goblin_store_open_sized(&newer.known, sizeof(newer),
                                             &st),
                     GOBLIN_EINVAL);
    assert_null(st);
}

static void test_a_size_too_small_for_the_first_field_is_refused(
    void **state)
{
    struct goblin_config cfg = {0};
    goblin_store *st = NULL;

    (void)state;
    assert_int_equal(goblin_store_open_sized(&cfg, 0, &st), GOBLIN_EINVAL);
    assert_int_equal(goblin_store_open_sized(&cfg, 1, &st), GOBLIN_EINVAL);
    assert_null(st);
}

static void test_copy_zeroes_what_the_caller_did_not_give(void **state)
{
    unsigned char src[4] = {1, 2, 3, 4}, dst[8];

    (void)state;
    memset(dst, 0xee, sizeof(dst));
    assert_int_equal(goblin__config_copy(dst, sizeof(dst), src, 4, 1), 0);
    assert_memory_equal(dst, ((unsigned char[8]){1, 2, 3, 4, 0, 0, 0, 0}), 8);
    assert_int_equal(goblin__config_copy(dst, 2, src, 4, 1), GOBLIN_EINVAL);
    src[2] = src[3] = 0;
    assert_int_equal(goblin__config_copy(dst, 2, src, 4, 1), 0);
    assert_memory_equal(dst, src, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_an_older_shorter_config_defaults_the_rest),
        cmocka_unit_test(
            test_a_newer_config_works_unless_it_sets_unknown_fields),
        cmocka_unit_test(
            test_a_size_too_small_for_the_first_field_is_refused),
        cmocka_unit_test(test_copy_zeroes_what_the_caller_did_not_give),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
