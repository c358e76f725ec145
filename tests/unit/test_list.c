/* test_list.c - the list store (goblin/list.h, lib/store/list*.c): each
 * call's results and Redis's index rules, both forms and the moves
 * between them, long elements, and allocation failures that must change
 * nothing. */
#include <stdio.h>

#include "testutil.h"
#include "store/keyspace.h"
#include "store/list.h"
#include "store/list_impl.h"
#include "store/store.h"

#define T GOBLIN_LIST_TAIL
#define H GOBLIN_LIST_HEAD

static void push1(goblin_store *st, const char *key, enum goblin_list_end e,
                  const char *v)
{
    struct goblin_slice s = slice_of(v, strlen(v));

    assert_true(goblin_list_push(st, slice_of(key, strlen(key)), e, &s, 1,
                                 0) > 0);
}

/* Collects a range as one string "a,b,c". */
struct joined {
    char buf[1 << 16];
    size_t len;
};

static int join_visit(void *ctx, struct goblin_slice e)
{
    struct joined *j = ctx;

    if (j->len > 0)
        j->buf[j->len++] = ',';
    memcpy(j->buf + j->len, e.ptr, e.len);
    j->len += e.len;
    j->buf[j->len] = 0;
    return 0;
}

static const char *range(goblin_store *st, int64_t a, int64_t b)
{
    static struct joined j;

    j.len = 0;
    j.buf[0] = 0;
    goblin_list_range(st, S("l"), a, b, join_visit, &j);
    return j.buf;
}

static void *list_obj(goblin_store *st, const char *key)
{
    void **slot;

    if (goblin__key_lookup(st, slice_of(key, strlen(key)), GOBLIN_TYPE_LIST,
                           &slot) != 1)
        return NULL;
    return *slot;
}

static void test_push_pop_order_follows_redis(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice abc[] = {S("a"), S("b"), S("c")};
    static struct joined j;

    j.len = 0;
    j.buf[0] = 0;

    assert_int_equal(goblin_list_push(f->st, S("l"), H, abc, 3, 0), 3);
    assert_string_equal(range(f->st, 0, -1), "c,b,a");
    assert_int_equal(goblin_list_push(f->st, S("l"), T, abc, 3, 0), 6);
    assert_string_equal(range(f->st, 0, -1), "c,b,a,a,b,c");
    assert_int_equal(goblin_list_pop(f->st, S("l"), T, 2, join_visit, &j), 2);
    assert_string_equal(j.buf, "c,b");
    assert_int_equal(goblin_list_pop(f->st, S("l"), H, 0, NULL, NULL), 0);
    assert_int_equal(goblin_list_pop(f->st, S("l"), H, -1, NULL, NULL),
                     GOBLIN_EINVAL);
    assert_int_equal(goblin_list_pop(f->st, S("l"), H, 100, NULL, NULL), 4);
    assert_int_equal(goblin_key_type(f->st, S("l")), GOBLIN_TYPE_NONE);
    assert_int_equal(goblin_list_push(f->st, S("l"), H, abc, 3, 1), 0);
    assert_int_equal(goblin_list_push(f->st, S("l"), H, abc, 0, 0),
                     GOBLIN_EINVAL);
}

static void test_wrong_type_is_refused(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice e;
    int64_t len;

    assert_int_equal(goblin_str_set(f->st, S("s"), S("x"), NULL, NULL),
                     GOBLIN_SET_DONE);
    assert_int_equal(goblin_list_push(f->st, S("s"), H, &e, 1, 0),
                     GOBLIN_EWRONGTYPE);
    assert_int_equal(goblin_list_len(f->st, S("s")), GOBLIN_EWRONGTYPE);
    assert_int_equal(goblin_list_index(f->st, S("s"), 0, &e),
                     GOBLIN_EWRONGTYPE);
    assert_int_equal(goblin_list_insert(f->st, S("s"), 0, S("a"), S("b"),
                                        &len), GOBLIN_EWRONGTYPE);
    push1(f->st, "l", T, "a");
    assert_int_equal(goblin_list_move(f->st, S("l"), S("s"), H, H, NULL,
                                      NULL), GOBLIN_EWRONGTYPE);
    assert_int_equal(goblin_list_len(f->st, S("l")), 1);
    assert_int_equal(goblin_list_move(f->st, S("none"), S("s"), H, H, NULL,
                                      NULL), 0);
}

static void test_index_set_and_ranges_clamp_like_redis(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice e;

    for (int i = 0; i < 5; i++) {
        char v[2] = {(char)('a' + i), 0};

        push1(f->st, "l", T, v);
    }
    assert_string_equal(range(f->st, -100, 100), "a,b,c,d,e");
    assert_string_equal(range(f->st, 3, 1), "");
    assert_string_equal(range(f->st, -2, -1), "d,e");
    assert_string_equal(range(f->st, INT64_MIN, INT64_MAX), "a,b,c,d,e");
    assert_int_equal(goblin_list_index(f->st, S("l"), -5, &e), 1);
    assert_int_equal(e.len, 1);
    assert_memory_equal(e.ptr, "a", 1);
    assert_int_equal(goblin_list_index(f->st, S("l"), 5, &e), 0);
    assert_int_equal(goblin_list_index(f->st, S("l"), INT64_MIN, &e), 0);
    assert_int_equal(goblin_list_set(f->st, S("l"), -1, S("E")), 0);
    assert_int_equal(goblin_list_set(f->st, S("l"), 5, S("x")),
                     GOBLIN_ERANGE);
    assert_int_equal(goblin_list_set(f->st, S("no"), 0, S("x")),
                     GOBLIN_ENOKEY);
    assert_int_equal(goblin_list_trim(f->st, S("l"), 1, -2), 0);
    assert_string_equal(range(f->st, 0, -1), "b,c,d");
    assert_int_equal(goblin_list_trim(f->st, S("l"), 2, 1), 0);
    assert_int_equal(goblin_key_type(f->st, S("l")), GOBLIN_TYPE_NONE);
}

static int pos_collect(void *ctx, int64_t index)
{
    struct joined *j = ctx;

    j->len += (size_t)snprintf(j->buf + j->len, sizeof(j->buf) - j->len,
                               "%s%lld", j->len ? "," : "",
                               (long long)index);
    return 0;
}

static void test_lpos_rank_count_maxlen(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice v[] = {S("a"), S("b"), S("c"), S("a"), S("b"),
                               S("a")};
    struct goblin_lpos_options o = {1, 0, 0};
    static struct joined j;

    j.len = 0;
    j.buf[0] = 0;

    goblin_list_push(f->st, S("l"), T, v, 6, 0);
    assert_int_equal(goblin_list_pos(f->st, S("l"), S("a"), &o, pos_collect,
                                     &j), 3);
    assert_string_equal(j.buf, "0,3,5");
    o.rank = -2;
    j.len = 0;
    assert_int_equal(goblin_list_pos(f->st, S("l"), S("a"), &o, pos_collect,
                                     &j), 2);
    assert_string_equal(j.buf, "3,0");
    o.rank = 1;
    o.maxlen = 4;
    o.count = 1;
    j.len = 0;
    assert_int_equal(goblin_list_pos(f->st, S("l"), S("b"), &o, pos_collect,
                                     &j), 1);
    assert_string_equal(j.buf, "1");
    o.rank = 0;
    assert_int_equal(goblin_list_pos(f->st, S("l"), S("b"), &o, pos_collect,
                                     &j), GOBLIN_EINVAL);
}

static void test_insert_rem_and_move(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice v[] = {S("a"), S("b"), S("a"), S("c"), S("a")};
    static struct joined j;

    j.len = 0;
    j.buf[0] = 0;
    int64_t len;

    goblin_list_push(f->st, S("l"), T, v, 5, 0);
    assert_int_equal(goblin_list_insert(f->st, S("l"), 1, S("c"), S("d"),
                                        &len), 1);
    assert_int_equal(len, 6);
    assert_int_equal(goblin_list_insert(f->st, S("l"), 0, S("zz"), S("d"),
                                        &len), 0);
    assert_int_equal(len, -1);
    assert_int_equal(goblin_list_insert(f->st, S("x"), 0, S("a"), S("d"),
                                        &len), 0);
    assert_int_equal(len, 0);
    assert_int_equal(goblin_list_rem(f->st, S("l"), -2, S("a")), 2);
    assert_string_equal(range(f->st, 0, -1), "a,b,c,d");
    assert_int_equal(goblin_list_move(f->st, S("l"), S("l"), T, H,
                                      join_visit, &j), 1);
    assert_string_equal(j.buf, "d");
    assert_string_equal(range(f->st, 0, -1), "d,a,b,c");
    assert_int_equal(goblin_list_move(f->st, S("l"), S("l"), H, H, NULL,
                                      NULL), 1);
    assert_string_equal(range(f->st, 0, -1), "d,a,b,c");
    for (int i = 0; i < 4; i++)
        assert_int_equal(goblin_list_move(f->st, S("l"), S("m"), H, T, NULL,
                                          NULL), 1);
    assert_int_equal(goblin_key_type(f->st, S("l")), GOBLIN_TYPE_NONE);
    assert_int_equal(goblin_list_len(f->st, S("m")), 4);
    assert_int_equal(goblin_list_rem(f->st, S("m"), 0, S("a")), 1);
}

/* A long list is full-form, a binary search away from any index, and
 * shrinks back to one compact block. */
static void test_long_list_changes_form_and_back(void **state)
{
    struct fixture *f = *state;
    char v[32];
    struct goblin_slice e;
    void *obj;

    for (int i = 0; i < 20000; i++) {
        int n = snprintf(v, sizeof(v), "element:%08d", i);

        e = slice_of(v, (size_t)n);
        assert_int_equal(goblin_list_push(f->st, S("l"), i % 2 ? T : H, &e, 1,
                                          0), i + 1);
    }
    obj = list_obj(f->st, "l");
    assert_true(goblin__lobj_is_full(obj));
    assert_true(goblin__lobj_full(obj)->nb > 50);
    assert_int_equal(goblin__store_check(f->st), 0);
    assert_int_equal(goblin_list_index(f->st, S("l"), 10000, &e), 1);
    assert_memory_equal(e.ptr, "element:00000001", 16);
    assert_int_equal(goblin_list_index(f->st, S("l"), 9999, &e), 1);
    assert_memory_equal(e.ptr, "element:00000000", 16);
    assert_int_equal(goblin_list_set(f->st, S("l"), 10000, S("x")), 0);
    assert_int_equal(goblin_list_trim(f->st, S("l"), 9990, 10010), 0);
    assert_int_equal(goblin_list_len(f->st, S("l")), 21);
    assert_false(goblin__lobj_is_full(list_obj(f->st, "l")));
    assert_int_equal(goblin__store_check(f->st), 0);
    assert_string_equal(goblin__list_encoding(list_obj(f->st, "l")),
                        "quicklist");
}

static void test_long_elements_round_trip(void **state)
{
    struct fixture *f = *state;
    static char big[70000];
    struct goblin_slice e;

    memset(big, 'x', sizeof(big));
    for (size_t len = 250; len < 260; len++) {
        big[0] = (char)len;
        e = slice_of(big, len);
        goblin_list_push(f->st, S("l"), len % 2 ? H : T, &e, 1, 0);
    }
    e = slice_of(big, sizeof(big));
    assert_int_equal(goblin_list_push(f->st, S("l"), T, &e, 1, 0), 11);
    assert_int_equal(goblin_list_insert(f->st, S("l"), 0, e, S("mid"),
                                        &(int64_t){0}), 1);
    assert_int_equal(goblin__store_check(f->st), 0);
    assert_int_equal(goblin_list_index(f->st, S("l"), -1, &e), 1);
    assert_int_equal(e.len, sizeof(big));
    assert_int_equal(goblin_list_index(f->st, S("l"), 0, &e), 1);
    assert_int_equal(e.len, 259);
    assert_int_equal(goblin_list_set(f->st, S("l"), 0, S("s")), 0);
    assert_int_equal(goblin_list_rem(f->st, S("l"), 0, S("mid")), 1);
    assert_int_equal(goblin__store_check(f->st), 0);
}

/* Every allocation of a write fails in turn: each failure gives
 * GOBLIN_ENOMEM and leaves the list as it was. */
static void fail_loop(struct fixture *f, int (*op)(goblin_store *st))
{
    static char before[1 << 16];
    int rc = GOBLIN_ENOMEM;

    snprintf(before, sizeof(before), "%s", range(f->st, 0, -1));
    for (long n = 0; rc == GOBLIN_ENOMEM; n++) {
        f->counts.fail_after = n;
        rc = op(f->st);
        f->counts.fail_after = -1;
        if (rc == GOBLIN_ENOMEM) {
            assert_string_equal(range(f->st, 0, -1), before);
            assert_int_equal(goblin__store_check(f->st), 0);
        }
        assert_true(n < 1000);
    }
    assert_true(rc >= 0);
    assert_int_equal(goblin__store_check(f->st), 0);
}

static int op_push_many(goblin_store *st)
{
    static char v[300][8];
    struct goblin_slice e[300];

    for (int i = 0; i < 300; i++)
        e[i] = slice_of(v[i], (size_t)snprintf(v[i], 8, "%d", i % 10));
    return (int)goblin_list_push(st, S("l"), T, e, 300, 0);
}

static int op_lpush_many(goblin_store *st)
{
    static char v[2000];
    struct goblin_slice e[3] = {{v, 2000}, {v, 1500}, {v, 1}};

    memset(v, 'q', sizeof(v));
    return (int)goblin_list_push(st, S("l"), H, e, 3, 0);
}

static int op_insert(goblin_store *st)
{
    int64_t len;

    return goblin_list_insert(st, S("l"), 1, S("5"), S("inserted"), &len);
}

static int op_set(goblin_store *st)
{
    static char v[3000];

    memset(v, 'z', sizeof(v));
    return goblin_list_set(st, S("l"), 3, slice_of(v, sizeof(v)));
}

static int op_move(goblin_store *st)
{
    return goblin_list_move(st, S("l"), S("other"), T, H, NULL, NULL);
}

/* SORT ... STORE's replacement: any type, deadline dropped, elements
 * that are views of the replaced list itself, an empty result deletes. */
static void test_replace_takes_any_key_and_empty_deletes(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice v, e[3] = {S("c"), S("a"), S("b")};
    struct goblin_slice own[2];

    assert_int_equal(goblin_str_set(f->st, S("l"), S("str"), NULL, NULL),
                     GOBLIN_SET_DONE);
    assert_int_equal(goblin_key_pexpire(f->st, S("l"), 100000, 0), 1);
    assert_int_equal(goblin_list_replace(f->st, S("l"), e, 3), 3);
    assert_int_equal(goblin_key_type(f->st, S("l")), GOBLIN_TYPE_LIST);
    assert_int_equal(goblin_key_pttl(f->st, S("l")), -1);
    assert_string_equal(range(f->st, 0, -1), "c,a,b");
    assert_int_equal(goblin_list_index(f->st, S("l"), 2, &own[0]), 1);
    assert_int_equal(goblin_list_index(f->st, S("l"), 0, &own[1]), 1);
    assert_int_equal(goblin_list_replace(f->st, S("l"), own, 2), 2);
    assert_string_equal(range(f->st, 0, -1), "b,c");
    assert_int_equal(goblin_list_replace(f->st, S("l"), e, 0), 0);
    assert_int_equal(goblin_key_exists(f->st, S("l")), 0);
    assert_int_equal(goblin_list_replace(f->st, S("l"), e, 0), 0);
    assert_int_equal(goblin_str_get(f->st, S("l"), &v), 0);
}

static int op_replace(goblin_store *st)
{
    static char big[3000];
    struct goblin_slice e[4] = {S("x"), {big, sizeof(big)}, {big, 2000},
                                {big, 2500}};
    int64_t rc;

    memset(big, 'r', sizeof(big));
    rc = goblin_list_replace(st, S("l"), e, 4);
    return rc < 0 ? (int)rc : 0;
}

static void test_allocation_failures_change_nothing(void **state)
{
    struct fixture *f = *state;

    fail_loop(f, op_push_many);   /* a new key, compact */
    fail_loop(f, op_push_many);   /* compact to full */
    for (int i = 0; i < 10; i++)
        fail_loop(f, op_push_many);
    fail_loop(f, op_lpush_many);
    fail_loop(f, op_insert);
    fail_loop(f, op_set);
    fail_loop(f, op_move);
    assert_int_equal(goblin_list_trim(f->st, S("l"), 0, 5), 0);
    fail_loop(f, op_insert);
    fail_loop(f, op_set);
    fail_loop(f, op_replace);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_push_pop_order_follows_redis),
        FIXTURE_TEST(test_wrong_type_is_refused),
        FIXTURE_TEST(test_index_set_and_ranges_clamp_like_redis),
        FIXTURE_TEST(test_lpos_rank_count_maxlen),
        FIXTURE_TEST(test_insert_rem_and_move),
        FIXTURE_TEST(test_long_list_changes_form_and_back),
        FIXTURE_TEST(test_long_elements_round_trip),
        FIXTURE_TEST(test_replace_takes_any_key_and_empty_deletes),
        FIXTURE_TEST(test_allocation_failures_change_nothing),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
