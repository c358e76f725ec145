/* test_keyspace.c - the keyspace: the interface of the type modules
 * (lookup, add, replace, remove), growth with swap-remove, deadlines. */
#include <stdio.h>

#include "testutil.h"
#include "store/store.h"

static struct goblin_slice keyname(char *buf, size_t i)
{
    int n = snprintf(buf, 32, "key:%zu", i);

    return slice_of(buf, (size_t)n);
}

static void test_add_lookup_remove_many(void **state)
{
    struct fixture *f = *state;
    goblin_store *st = f->st;
    const size_t n = 30000;
    char buf[32];
    void **slot;

    for (size_t i = 0; i < n; i++) {
        struct goblin_slice k = keyname(buf, i);

        assert_int_equal(goblin__key_lookup(st, k, GOBLIN_TYPE_STRING,
                                            &slot), 0);
        assert_int_equal(goblin__key_add(st, k, GOBLIN_TYPE_STRING, NULL),
                         0);
    }
    assert_int_equal(st->ks.count, n);
    for (size_t i = 0; i < n; i += 2)
        goblin__key_remove(st, keyname(buf, i));
    for (size_t i = 0; i < n; i++) {
        int r = goblin__key_lookup(st, keyname(buf, i), GOBLIN_TYPE_STRING,
                                   &slot);

        assert_int_equal(r, i % 2 == 0 ? 0 : 1);
        if (r == 1)
            assert_null(slot);
    }
    assert_int_equal(st->ks.count, n / 2);
    for (size_t i = 1; i < n; i += 2)
        goblin__key_remove(st, keyname(buf, i));
    assert_int_equal(st->ks.count, 0);
    goblin__write_begin(st);
    assert_int_equal(f->counts.live_blocks, 1);
}

static void test_replace_changes_type_and_wrongtype_is_reported(void **state)
{
    struct fixture *f = *state;
    goblin_store *st = f->st;
    void **slot;

    assert_int_equal(goblin__key_replace(st, S("a\0b"), GOBLIN_TYPE_STRING,
                                         NULL), 0);
    assert_int_equal(goblin__key_lookup(st, S("a\0b"), GOBLIN_TYPE_HASH,
                                        &slot), GOBLIN_EWRONGTYPE);
    assert_int_equal(goblin__key_lookup(st, S("a"), GOBLIN_TYPE_STRING,
                                        &slot), 0);
    assert_int_equal(goblin__key_replace(st, S("a\0b"), GOBLIN_TYPE_STRING,
                                         NULL), 0);
    assert_int_equal(st->ks.count, 1);
    assert_int_equal(goblin__key_add(st, S(""), GOBLIN_TYPE_STRING, NULL), 0);
    assert_int_equal(goblin__key_lookup(st, S(""), GOBLIN_TYPE_STRING,
                                        &slot), 1);
    assert_int_equal(st->ks.count, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_add_lookup_remove_many),
        FIXTURE_TEST(test_replace_changes_type_and_wrongtype_is_reported),
    };

    return cmocka_run_group_tests_name("keyspace", tests, NULL, NULL);
}
