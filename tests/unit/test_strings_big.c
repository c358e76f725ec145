/* test_strings_big.c - strings past the default 512 MB: refused by a store
 * opened with the default limit, held by one whose goblin_config.string_max
 * raises it, and the bounds of that setting. Each test keeps at most two
 * values of that size alive (the tests of a suite run in parallel). */
#include "test_keys_util.h"
#include "goblin/str.h"
#include "store/bitmap.h"
#include "store/store.h"

#define MB ((size_t)1024 * 1024)
#define JUST_OVER (GOBLIN_STRING_MAX + 16)

static goblin_store *open_with(size_t string_max)
{
    struct goblin_config cfg = {0};
    goblin_store *st = NULL;

    cfg.seed = 42;
    cfg.string_max = string_max;
    assert_int_equal(goblin_store_open(&cfg, &st), 0);
    return st;
}

/* len bytes, each its offset's low byte, so a range read shows where it
 * came from. */
static uint8_t *pattern(size_t len)
{
    uint8_t *p = malloc(len);

    assert_non_null(p);
    for (size_t i = 0; i < len; i++)
        p[i] = (uint8_t)i;
    return p;
}

static void test_string_max_must_be_in_range(void **state)
{
    struct goblin_config cfg = {0};
    goblin_store *st = NULL;

    (void)state;
    cfg.string_max = GOBLIN_STRING_MAX - 1;
    assert_int_equal(goblin_store_open(&cfg, &st), GOBLIN_EINVAL);
    cfg.string_max = GOBLIN_STRING_LIMIT + 1;
    assert_int_equal(goblin_store_open(&cfg, &st), GOBLIN_EINVAL);
    assert_null(st);
    cfg.string_max = GOBLIN_STRING_LIMIT;
    assert_int_equal(goblin_store_open(&cfg, &st), 0);
    goblin_store_close(st);
}

/* At the default limit every way to a string past 512 MB is refused,
 * without allocating for it. */
static void test_default_limit_refuses_past_512mb(void **state)
{
    goblin_store *st = open_with(0);
    struct goblin_slice key = S("k"), big = {"", JUST_OVER}, out;

    (void)state;
    big.ptr = malloc(1); /* never read: the length is refused first */
    assert_int_equal(goblin_str_set(st, S("k"), big, NULL, NULL),
                     GOBLIN_ESTRBIG);
    assert_int_equal(goblin_str_mset(st, &key, &big, 1), GOBLIN_ESTRBIG);
    assert_int_equal(goblin_str_append(st, S("k"), big), GOBLIN_ESTRBIG);
    assert_int_equal(goblin_str_setrange(st, S("k"),
                                         (int64_t)GOBLIN_STRING_MAX, S("x")),
                     GOBLIN_ESTRBIG);
    assert_int_equal(goblin__bit_set(st, S("k"),
                                     (uint64_t)GOBLIN_STRING_MAX * 8, 1),
                     GOBLIN_ESTRBIG);
    assert_int_equal(goblin_str_set(st, S("k"), S("abc"), NULL, NULL), 1);
    assert_int_equal(goblin_str_append(st, S("k"),
                                       (struct goblin_slice){big.ptr,
                                           GOBLIN_STRING_MAX - 2}),
                     GOBLIN_ESTRBIG);
    assert_int_equal(goblin_str_get(st, S("k"), &out), 1);
    assert_slice(out, "abc");
    free((void *)big.ptr);
    goblin_store_close(st);
}

/* With the limit raised, a value just over 512 MB is set whole, read,
 * appended to and written in the middle of. */
static void test_raised_limit_holds_a_value_past_512mb(void **state)
{
    goblin_store *st = open_with(GOBLIN_STRING_MAX * 2);
    uint8_t *src = pattern(JUST_OVER);
    struct goblin_slice out;

    (void)state;
    assert_int_equal(goblin_str_set(st, S("k"),
                                    (struct goblin_slice){src, JUST_OVER},
                                    NULL, NULL), GOBLIN_SET_DONE);
    free(src);
    assert_int_equal(goblin_str_len(st, S("k")), (int64_t)JUST_OVER);
    assert_int_equal(goblin_str_getrange(st, S("k"), -3, -1, &out), 1);
    assert_int_equal(out.len, 3);
    assert_memory_equal(out.ptr, "\x0d\x0e\x0f", 3);
    assert_int_equal(goblin_str_append(st, S("k"), S("xyz")),
                     (int64_t)JUST_OVER + 3);
    assert_int_equal(goblin_str_setrange(st, S("k"), (int64_t)JUST_OVER,
                                         S("ab")), (int64_t)JUST_OVER + 3);
    assert_int_equal(goblin_str_getrange(st, S("k"), (int64_t)JUST_OVER - 1,
                                         -1, &out), 1);
    assert_int_equal(out.len, 4);
    assert_memory_equal(out.ptr, "\x0f" "abz", 4);
    assert_int_equal(goblin_str_get(st, S("k"), &out), 1);
    assert_int_equal(out.len, JUST_OVER + 3);
    assert_int_equal(((const uint8_t *)out.ptr)[GOBLIN_STRING_MAX], 0);
    assert_int_equal(goblin_key_delete(st, S("k")), 1);
    goblin_store_close(st);
}

/* SETRANGE and SETBIT grow a new key past 512 MB, zero-filled, up to the
 * raised limit and not past it. */
static void test_raised_limit_grows_by_setrange_and_setbit(void **state)
{
    size_t limit = 600 * MB;
    goblin_store *st = open_with(limit);
    uint64_t bit = (uint64_t)4294967296ull + 8; /* byte 2^29 + 1 */
    struct goblin_slice out;

    (void)state;
    assert_int_equal(goblin_str_setrange(st, S("r"), (int64_t)limit,
                                         S("x")), GOBLIN_ESTRBIG);
    assert_int_equal(goblin_str_setrange(st, S("r"), (int64_t)limit - 1,
                                         S("x")), (int64_t)limit);
    assert_int_equal(goblin_str_getrange(st, S("r"), -2, -1, &out), 1);
    assert_int_equal(out.len, 2);
    assert_memory_equal(out.ptr, "\0x", 2);
    assert_int_equal(goblin_key_delete(st, S("r")), 1);

    assert_int_equal(goblin__bit_set(st, S("b"), (uint64_t)limit * 8, 1),
                     GOBLIN_ESTRBIG);
    assert_int_equal(goblin__bit_set(st, S("b"), bit, 1), 0);
    assert_int_equal(goblin_str_len(st, S("b")), (int64_t)(bit / 8) + 1);
    assert_int_equal(goblin__bit_set(st, S("b"), bit, 1), 1);
    assert_int_equal(goblin_str_getrange(st, S("b"), -1, -1, &out), 1);
    assert_int_equal(out.len, 1);
    assert_int_equal(((const uint8_t *)out.ptr)[0], 0x80);
    assert_int_equal(goblin_key_delete(st, S("b")), 1);
    goblin_store_close(st);
}

/* The engine's setter clamps to what a record holds; past that the store
 * refuses with nothing allocated. */
static void test_limit_is_what_a_record_holds(void **state)
{
    goblin_store *st = open_with(0);

    (void)state;
    goblin__store_set_string_max(st, UINT64_MAX);
    assert_int_equal(goblin_str_setrange(st, S("k"),
                                         (int64_t)GOBLIN_STRING_LIMIT,
                                         S("x")), GOBLIN_ESTRBIG);
    assert_int_equal(goblin__bit_set(st, S("k"),
                                     (uint64_t)GOBLIN_STRING_LIMIT * 8, 1),
                     GOBLIN_ESTRBIG);
    goblin__store_set_string_max(st, 1);
    assert_int_equal(goblin_str_setrange(st, S("k"),
                                         (int64_t)GOBLIN_STRING_MAX,
                                         S("x")), GOBLIN_ESTRBIG);
    assert_int_equal(goblin_key_count(st), 0);
    goblin_store_close(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_string_max_must_be_in_range),
        cmocka_unit_test(test_default_limit_refuses_past_512mb),
        cmocka_unit_test(test_raised_limit_holds_a_value_past_512mb),
        cmocka_unit_test(test_raised_limit_grows_by_setrange_and_setbit),
        cmocka_unit_test(test_limit_is_what_a_record_holds),
    };

    if (under_valgrind())
        return 0; /* hundreds of MB memset under valgrind: too slow */
    return cmocka_run_group_tests_name("strings_big", tests, NULL, NULL);
}
