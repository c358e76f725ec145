/* test_set_fail.c - set writes under allocation failure: for N = 0, 1,
 * 2... the Nth allocation fails until the call succeeds; every failed
 * call must return GOBLIN_ENOMEM and leave every key exactly as it was
 * (members, encoding, existence, dirty count), and the fixture's
 * teardown proves nothing leaked. Each form is driven through its
 * conversions: intset -> big integers, integers -> compact and full,
 * compact -> full. */
#include <stdio.h>

#include "testutil.h"
#include "store/keyspace.h"
#include "store/set.h"
#include "store/store.h"

#define NKEYS 3
static const char *const keys[NKEYS] = {"a", "b", "c"};

struct snap {
    char text[NKEYS][1 << 16];
    size_t len[NKEYS];
    int64_t card[NKEYS];
    const char *enc[NKEYS];
    uint64_t dirty;
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

struct list {
    char *m[4096];
    size_t n;
};

static int list_visit(void *ctx, struct goblin_slice v)
{
    struct list *l = ctx;

    assert_true(l->n < 4096);
    l->m[l->n++] = strndup(v.ptr, v.len);
    return 0;
}

static void take(goblin_store *st, struct snap *s)
{
    memset(s, 0, sizeof(*s));
    for (size_t k = 0; k < NKEYS; k++) {
        struct goblin_slice key = slice_of(keys[k], 1);
        struct list l = {{0}, 0};

        s->card[k] = goblin_set_card(st, key);
        assert_true(goblin_set_foreach(st, key, list_visit, &l) >= 0);
        qsort(l.m, l.n, sizeof(l.m[0]), cmp_str);
        for (size_t i = 0; i < l.n; i++) {
            size_t n = strlen(l.m[i]);

            assert_true(s->len[k] + n + 1 < sizeof(s->text[k]));
            memcpy(s->text[k] + s->len[k], l.m[i], n + 1);
            s->len[k] += n + 1;
            free(l.m[i]);
        }
        s->enc[k] = "none";
        goblin_key_encoding(st, key, &s->enc[k]);
    }
    s->dirty = goblin_store_dirty(st);
}

static void assert_same(const struct snap *a, const struct snap *b)
{
    for (size_t k = 0; k < NKEYS; k++) {
        assert_int_equal(a->card[k], b->card[k]);
        assert_string_equal(a->enc[k], b->enc[k]);
        assert_int_equal(a->len[k], b->len[k]);
        assert_memory_equal(a->text[k], b->text[k], a->len[k]);
    }
    assert_int_equal(a->dirty, b->dirty);
}

typedef int64_t (*op_fn)(goblin_store *st, void *arg);

/* Runs op with the Nth allocation failing for N = 0, 1, ... until it
 * succeeds; each failure must change nothing. */
static void fail_loop(struct fixture *fx, op_fn op, void *arg)
{
    static struct snap before, after;
    int64_t r;

    for (long n = 0;; n++) {
        take(fx->st, &before);
        fx->counts.fail_after = n;
        r = op(fx->st, arg);
        fx->counts.fail_after = -1;
        if (r != GOBLIN_ENOMEM)
            break;
        take(fx->st, &after);
        assert_same(&before, &after);
        assert_int_equal(goblin__store_check(fx->st), 0);
        assert_true(n < 100000);
    }
    assert_true(r >= 0);
    assert_int_equal(goblin__store_check(fx->st), 0);
}

struct members {
    struct goblin_slice key;
    struct goblin_slice m[600];
    char buf[600][80];
    size_t n;
};

static void make(struct members *ms, const char *key, size_t n,
                 const char *fmt, int base)
{
    ms->key = slice_of(key, 1);
    ms->n = n;
    for (size_t i = 0; i < n; i++) {
        ms->m[i].ptr = ms->buf[i];
        ms->m[i].len = (size_t)snprintf(ms->buf[i], 80, fmt,
                                        base + (int)i);
    }
}

static int64_t op_add(goblin_store *st, void *arg)
{
    struct members *ms = arg;

    return goblin_set_add(st, ms->key, ms->m, ms->n);
}

static int64_t op_rem(goblin_store *st, void *arg)
{
    struct members *ms = arg;

    return goblin_set_rem(st, ms->key, ms->m, ms->n);
}

static int discard(void *ctx, struct goblin_slice v)
{
    (void)ctx;
    (void)v;
    return 0;
}

static int64_t op_pop(goblin_store *st, void *arg)
{
    struct members *ms = arg;

    return goblin_set_pop(st, ms->key, 3, NULL, discard, NULL);
}

static int64_t op_move(goblin_store *st, void *arg)
{
    struct members *ms = arg;

    return goblin_set_move(st, ms->key, S("c"), ms->m[0]);
}

static int64_t op_store(goblin_store *st, void *arg)
{
    struct goblin_slice k[] = {S("a"), S("b")};

    (void)arg;
    return goblin_set_combine_store(st, GOBLIN_SET_UNION, S("c"), k, 2);
}

static int64_t op_combine(goblin_store *st, void *arg)
{
    struct goblin_slice k[] = {S("a"), S("b")};

    (void)arg;
    return goblin_set_combine(st, GOBLIN_SET_DIFF, k, 2, NULL, discard,
                              NULL);
}

static void test_adds_fail_cleanly(void **state)
{
    struct fixture *fx = *state;
    static struct members ms;

    make(&ms, "a", 10, "%d", 0);
    fail_loop(fx, op_add, &ms);       /* new intset */
    make(&ms, "a", 600, "%d", 100);
    fail_loop(fx, op_add, &ms);       /* intset -> big integers */
    make(&ms, "a", 5, "%d", -100000);
    fail_loop(fx, op_add, &ms);       /* more big integers */
    make(&ms, "a", 3, "%d00000000000", 1);
    fail_loop(fx, op_add, &ms);       /* widened to 64 bits */
    make(&ms, "b", 5, "%d", 7);
    fail_loop(fx, op_add, &ms);
    make(&ms, "b", 5, "m%d", 0);
    fail_loop(fx, op_add, &ms);       /* intset -> compact */
    make(&ms, "b", 200, "m%d", 10);
    fail_loop(fx, op_add, &ms);       /* compact -> full */
    make(&ms, "a", 2, "s%d", 0);
    fail_loop(fx, op_add, &ms);       /* big integers -> full */
    make(&ms, "c", 3, "a-member-longer-than-sixty-four-bytes-%d-"
                      "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 0);
    fail_loop(fx, op_add, &ms);       /* new, straight to full */
}

static void test_removals_and_moves_fail_cleanly(void **state)
{
    struct fixture *fx = *state;
    static struct members ms;

    make(&ms, "a", 20, "%d", 0);
    fail_loop(fx, op_add, &ms);
    make(&ms, "b", 20, "m%d", 0);
    fail_loop(fx, op_add, &ms);
    make(&ms, "a", 3, "%d", 0);
    fail_loop(fx, op_rem, &ms);       /* intset rebuild */
    make(&ms, "b", 3, "m%d", 0);
    fail_loop(fx, op_rem, &ms);       /* compact rebuild */
    fail_loop(fx, op_pop, &ms);
    make(&ms, "a", 1, "%d", 10);
    fail_loop(fx, op_pop, &ms);
    fail_loop(fx, op_move, &ms);
    make(&ms, "b", 1, "m%d", 10);
    fail_loop(fx, op_move, &ms);
    fail_loop(fx, op_store, NULL);
    fail_loop(fx, op_combine, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_adds_fail_cleanly),
        FIXTURE_TEST(test_removals_and_moves_fail_cleanly),
    };

    return cmocka_run_group_tests_name("set_fail", tests, NULL, NULL);
}
