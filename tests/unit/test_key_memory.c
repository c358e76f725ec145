/* test_key_memory.c - goblin__key_memory, MEMORY USAGE's count: with an
 * allocator that is told every size, what a key reports is exactly what
 * deleting it gives back, for every type and form. */
#include <stdio.h>

#include "store/keyspace.h"
#include "testutil.h"

/* Fills key with n elements of the given type. */
static void fill(goblin_store *st, char type, struct goblin_slice key,
                 int n)
{
    char buf[64];

    for (int i = 0; i < n; i++) {
        int len = snprintf(buf, sizeof(buf), "%d%s", i,
                           type == 'i' ? "" : "-member-of-some-length");
        struct goblin_slice m = slice_of(buf, (size_t)len);
        struct goblin_slice fv[2] = {m, m};

        switch (type) {
        case 'h': assert_true(goblin_hash_set(st, key, fv, 1) >= 0); break;
        case 'z':
            assert_true(goblin_zset_add(st, key, m, (double)i) >= 0);
            break;
        case 'l':
            assert_true(goblin_list_push(st, key, GOBLIN_LIST_TAIL, &m, 1,
                                         0) > 0);
            break;
        default: assert_true(goblin_set_add(st, key, &m, 1) >= 0); break;
        }
    }
}

/* What deleting key gives back (the next write frees its record). */
static size_t freed_by_delete(struct fixture *f, struct goblin_slice key)
{
    size_t before;

    /* Another key keeps the keyspace's own tables in place. */
    if (!goblin_key_exists(f->st, S("pad")))
        assert_int_equal(goblin_str_set(f->st, S("pad"), S("x"), NULL, NULL),
                         1);
    assert_int_equal(goblin_key_delete(f->st, S("no-such-key")), 0);
    before = f->counts.live_bytes;

    assert_int_equal(goblin_key_delete(f->st, key), 1);
    assert_int_equal(goblin_key_delete(f->st, S("no-such-key")), 0);
    return before - f->counts.live_bytes;
}

static void test_usage_is_what_delete_frees(void **state)
{
    struct fixture *f = *state;
    static const int sizes[] = {1, 3, 200, 5000};
    size_t got;

    for (const char *t = "hzlsi"; *t; t++)
        for (size_t k = 0; k < sizeof(sizes) / sizeof(*sizes); k++) {
            fill(f->st, *t, S("key"), sizes[k]);
            assert_int_equal(goblin__key_memory(f->st, S("key"), &got), 1);
            assert_int_equal(got, freed_by_delete(f, S("key")));
        }
}

static void test_usage_of_strings_is_their_record(void **state)
{
    struct fixture *f = *state;
    static char big[100000];
    struct goblin_slice vals[] = {S(""), S("12345"), S("short"),
                                  slice_of(big, sizeof(big))};
    size_t got;

    for (size_t i = 0; i < sizeof(vals) / sizeof(*vals); i++) {
        assert_int_equal(goblin_str_set(f->st, S("s"), vals[i], NULL, NULL),
                         1);
        assert_int_equal(goblin__key_memory(f->st, S("s"), &got), 1);
        assert_true(got >= vals[i].len + 1);
        assert_int_equal(got, freed_by_delete(f, S("s")));
    }
}

static void test_missing_and_expired_keys_have_no_usage(void **state)
{
    struct fixture *f = *state;
    size_t got = 7;

    assert_int_equal(goblin__key_memory(f->st, S("none"), &got), 0);
    assert_int_equal(got, 7);
    assert_int_equal(goblin_str_set(f->st, S("e"), S("v"), NULL, NULL), 1);
    assert_int_equal(goblin_key_pexpire(f->st, S("e"), 10, 0), 1);
    f->clock.now_ms += 20;
    assert_int_equal(goblin__key_memory(f->st, S("e"), &got), 0);
    assert_int_equal(got, 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_usage_is_what_delete_frees),
        FIXTURE_TEST(test_usage_of_strings_is_their_record),
        FIXTURE_TEST(test_missing_and_expired_keys_have_no_usage),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
