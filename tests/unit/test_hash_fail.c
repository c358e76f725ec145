/* test_hash_fail.c - hash writes under allocation failure: for N = 0, 1,
 * 2... the Nth allocation fails until the call succeeds; every failed
 * call must return GOBLIN_ENOMEM and leave every key exactly as it was
 * (content, order while compact, encoding, existence, dirty count), and
 * the fixture's teardown proves nothing leaked. */
#include <stdio.h>

#include "testutil.h"
#include "store/hash.h"
#include "store/store.h"

/* ---- snapshots of what the test keys hold ---- */

#define NKEYS 3
static const char *const keys[NKEYS] = {"a", "b", "c"};

struct snap {
    char *bytes[NKEYS]; /* field/value pairs laid out with lengths */
    size_t len[NKEYS], cap[NKEYS];
    int64_t hlen[NKEYS];
    const char *enc[NKEYS];
    uint64_t dirty;
};

static struct snap *cur_snap;
static size_t cur_key;

static void snap_put(const void *p, size_t n)
{
    size_t k = cur_key;

    if (cur_snap->len[k] + n + sizeof(n) > cur_snap->cap[k]) {
        cur_snap->cap[k] = 2 * (cur_snap->len[k] + n + sizeof(n)) + 64;
        cur_snap->bytes[k] = realloc(cur_snap->bytes[k], cur_snap->cap[k]);
        assert_non_null(cur_snap->bytes[k]);
    }
    memcpy(cur_snap->bytes[k] + cur_snap->len[k], &n, sizeof(n));
    if (n != 0)
        memcpy(cur_snap->bytes[k] + cur_snap->len[k] + sizeof(n), p, n);
    cur_snap->len[k] += sizeof(n) + n;
}

static int snap_visit(void *ctx, struct goblin_slice f, struct goblin_slice v)
{
    (void)ctx;
    snap_put(f.ptr, f.len);
    snap_put(v.ptr, v.len);
    return 0;
}

static void take(goblin_store *st, struct snap *s)
{
    memset(s, 0, sizeof(*s));
    cur_snap = s;
    for (size_t k = 0; k < NKEYS; k++) {
        struct goblin_slice key = slice_of(keys[k], 1);
        void **slot;

        cur_key = k;
        s->hlen[k] = goblin_hash_len(st, key);
        assert_true(goblin_hash_foreach(st, key, snap_visit, NULL) >= 0);
        s->enc[k] = goblin__key_lookup(st, key, GOBLIN_TYPE_HASH, &slot) == 1
                        ? goblin__hash_encoding(*slot)
                        : "none";
    }
    s->dirty = goblin_store_dirty(st);
}

static void drop(struct snap *s)
{
    for (size_t k = 0; k < NKEYS; k++)
        free(s->bytes[k]);
}

static void assert_same(const struct snap *a, const struct snap *b)
{
    for (size_t k = 0; k < NKEYS; k++) {
        assert_int_equal(a->hlen[k], b->hlen[k]);
        assert_string_equal(a->enc[k], b->enc[k]);
        assert_int_equal(a->len[k], b->len[k]);
        if (a->len[k] != 0)
            assert_memory_equal(a->bytes[k], b->bytes[k], a->len[k]);
    }
    assert_int_equal(a->dirty, b->dirty);
}

/* ---- the driver ---- */

typedef int64_t (*op_fn)(goblin_store *st, void *arg);

/* Runs op with the Nth allocation failing for N = 0, 1, ... until it
 * succeeds; returns its result and how many failures were seen. */
static int64_t fail_each_step(struct fixture *fx, op_fn op, void *arg,
                              long *failures)
{
    struct snap before, after;
    int64_t r;

    *failures = 0;
    take(fx->st, &before);
    for (long n = 0;; n++) {
        fx->counts.fail_after = n;
        r = op(fx->st, arg);
        fx->counts.fail_after = -1;
        if (r != GOBLIN_ENOMEM)
            break;
        (*failures)++;
        take(fx->st, &after);
        assert_same(&before, &after);
        drop(&after);
        assert_int_equal(goblin_store_used_memory(fx->st),
                         fx->counts.live_bytes);
        assert_true(n < 100000);
    }
    drop(&before);
    return r;
}

static struct goblin_slice fmt(char *buf, const char *f, size_t i)
{
    int n = snprintf(buf, 64, f, i);

    return slice_of(buf, (size_t)n);
}

static void fill(goblin_store *st, const char *key, size_t from, size_t to,
                 size_t vlen)
{
    char fb[64], *vb = malloc(vlen + 1);

    assert_non_null(vb);
    memset(vb, 'v', vlen);
    for (size_t i = from; i < to; i++) {
        struct goblin_slice fv[2] = {fmt(fb, "field:%zu", i),
                                     slice_of(vb, vlen)};

        assert_int_equal(goblin_hash_set(st, slice_of(key, 1), fv, 1), 1);
    }
    free(vb);
}

/* A list of pairs for goblin_hash_set. */
struct setarg {
    const char *key;
    struct goblin_slice fv[2 * 1024];
    size_t npairs;
    char buf[1024][2][64];
    char *big;
};

static struct setarg *arg_new(const char *key)
{
    struct setarg *a = calloc(1, sizeof(*a));

    assert_non_null(a);
    a->key = key;
    return a;
}

static void arg_add(struct setarg *a, const char *f, size_t fi, size_t vlen,
                    char c)
{
    size_t i = a->npairs++;

    a->fv[2 * i] = fmt(a->buf[i][0], f, fi);
    if (vlen < 64) {
        memset(a->buf[i][1], c, vlen);
        a->fv[2 * i + 1] = slice_of(a->buf[i][1], vlen);
    } else {
        if (a->big == NULL) {
            a->big = malloc(200000);
            assert_non_null(a->big);
        }
        memset(a->big, c, vlen);
        a->fv[2 * i + 1] = slice_of(a->big, vlen);
    }
}

static int64_t op_set(goblin_store *st, void *arg)
{
    struct setarg *a = arg;

    return goblin_hash_set(st, slice_of(a->key, 1), a->fv, a->npairs);
}

static void run_set(struct fixture *fx, struct setarg *a, int64_t want)
{
    long failures;

    assert_int_equal(fail_each_step(fx, op_set, a, &failures), want);
    assert_true(failures > 0);
    free(a->big);
    free(a);
}

/* ---- the cases ---- */

static void test_new_key_single_pair(void **state)
{
    struct setarg *a = arg_new("a");

    arg_add(a, "f%zu", 1, 5, 'x');
    run_set(*state, a, 1);
}

static void test_new_key_born_full(void **state)
{
    struct setarg *a = arg_new("a");

    for (size_t i = 0; i < 200; i++)
        arg_add(a, "f%zu", i, 10, 'x');
    run_set(*state, a, 200);
}

static void test_compact_mixed_pairs(void **state)
{
    struct fixture *fx = *state;
    struct setarg *a = arg_new("a");

    fill(fx->st, "a", 0, 20, 8);
    arg_add(a, "field:%zu", 3, 8, 'y');  /* same length: in place */
    arg_add(a, "field:%zu", 4, 2, 'y');  /* new length */
    arg_add(a, "new:%zu", 1, 0, 'y');
    arg_add(a, "field:%zu", 3, 30, 'z'); /* again, longer */
    arg_add(a, "new:%zu", 1, 5, 'w');
    run_set(fx, a, 1);
}

static void test_compact_to_full_at_limit(void **state)
{
    struct fixture *fx = *state;
    struct setarg *a = arg_new("b");

    fill(fx->st, "b", 0, GOBLIN__HASH_COMPACT_MAX_ENTRIES, 8);
    fill(fx->st, "a", 0, 5, 8);
    arg_add(a, "field:%zu", 0, 3, 'q');
    arg_add(a, "more:%zu", 0, 3, 'q');
    run_set(fx, a, 1);
}

static void test_compact_to_full_by_length(void **state)
{
    struct fixture *fx = *state;
    struct setarg *a = arg_new("a");

    fill(fx->st, "a", 0, 10, 8);
    arg_add(a, "field:%zu", 2, 65, 'q');
    run_set(fx, a, 0);
}

static void test_full_many_pairs_with_growth(void **state)
{
    struct fixture *fx = *state;
    struct setarg *a = arg_new("c");

    fill(fx->st, "c", 0, 1000, 12);
    for (size_t i = 0; i < 100; i++)
        arg_add(a, "field:%zu", i * 7, i % 3 == 0 ? 12 : i % 40, 'n');
    for (size_t i = 0; i < 900; i++) /* the index must grow */
        arg_add(a, "new:%zu", i, i % 50, 'n');
    run_set(fx, a, 900);
}

static void test_full_new_chunks_and_big_values(void **state)
{
    struct fixture *fx = *state;
    struct setarg *a = arg_new("c");

    fill(fx->st, "c", 0, 150, 20000); /* several arena chunks */
    arg_add(a, "field:%zu", 2, 100000, 'n'); /* moves to its own chunk */
    arg_add(a, "field:%zu", 1, 30000, 'n');
    arg_add(a, "new:%zu", 1, 150000, 'n'); /* a chunk of its own */
    arg_add(a, "new:%zu", 2, 60000, 'n');
    arg_add(a, "field:%zu", 1, 20000, 'm');
    arg_add(a, "new:%zu", 3, 60000, 'n');
    arg_add(a, "new:%zu", 4, 60000, 'n');
    arg_add(a, "new:%zu", 5, 60000, 'n');
    run_set(fx, a, 5);
}

static int64_t op_del(goblin_store *st, void *arg)
{
    struct goblin_slice d[3] = {S("field:1"), S("field:5"), S("nope")};

    return goblin_hash_del(st, slice_of((const char *)arg, 1), d, 3);
}

static void test_compact_delete(void **state)
{
    struct fixture *fx = *state;
    long failures;

    fill(fx->st, "a", 0, 10, 4);
    assert_int_equal(fail_each_step(fx, op_del, "a", &failures), 2);
    assert_true(failures > 0);
    assert_int_equal(goblin_hash_len(fx->st, S("a")), 8);
}

static int64_t op_incrbyfloat(goblin_store *st, void *arg)
{
    struct goblin_slice v;

    (void)arg;
    return goblin_hash_incrbyfloat(st, S("a"), S("field:3"), 1e100L, &v);
}

static int64_t op_incrby_new(goblin_store *st, void *arg)
{
    int64_t r;

    (void)arg;
    return goblin_hash_incrby(st, S("b"), S("n"), 42, &r);
}

static int64_t op_setnx(goblin_store *st, void *arg)
{
    (void)arg;
    return goblin_hash_setnx(st, S("c"), S("f"), S("v"));
}

static void test_increments_and_setnx(void **state)
{
    struct fixture *fx = *state;
    long failures;
    struct goblin_slice fv[2] = {S("field:3"), S("1.5")};

    fill(fx->st, "a", 0, 10, 1);
    assert_int_equal(goblin_hash_set(fx->st, S("a"), fv, 1), 0);
    assert_int_equal(fail_each_step(fx, op_incrbyfloat, NULL, &failures), 0);
    assert_true(failures > 0);
    assert_int_equal(fail_each_step(fx, op_incrby_new, NULL, &failures), 0);
    assert_true(failures > 0);
    assert_int_equal(fail_each_step(fx, op_setnx, NULL, &failures), 1);
    assert_true(failures > 0);
}

static int count_visit(void *ctx, struct goblin_slice f, struct goblin_slice v)
{
    (void)f;
    (void)v;
    ++*(size_t *)ctx;
    return 0;
}

static int64_t op_randfield(goblin_store *st, void *arg)
{
    return goblin_hash_randfield_count(st, S("c"), 50, 1, count_visit, arg);
}

static void test_randfield_scratch(void **state)
{
    struct fixture *fx = *state;
    long failures;
    size_t visited = 0;

    fill(fx->st, "c", 0, 2000, 4);
    assert_int_equal(fail_each_step(fx, op_randfield, &visited, &failures),
                     50);
    assert_int_equal(failures, 1);
}

static int64_t op_from_pairs(goblin_store *st, void *arg)
{
    struct setarg *a = arg;
    void *obj;
    int r = goblin__hash_obj_from_pairs(st, a->fv, a->npairs, &obj);

    if (r == 0)
        goblin__hash_free(st, obj);
    return r;
}

static void test_bulk_build(void **state)
{
    struct fixture *fx = *state;
    struct setarg *a = arg_new("a");
    long failures;

    for (size_t i = 0; i < 250; i++)
        arg_add(a, "f%zu", i % 200, i % 30, 'x');
    assert_int_equal(fail_each_step(fx, op_from_pairs, a, &failures), 0);
    assert_true(failures > 0);
    free(a->big);
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_new_key_single_pair),
        FIXTURE_TEST(test_new_key_born_full),
        FIXTURE_TEST(test_compact_mixed_pairs),
        FIXTURE_TEST(test_compact_to_full_at_limit),
        FIXTURE_TEST(test_compact_to_full_by_length),
        FIXTURE_TEST(test_full_many_pairs_with_growth),
        FIXTURE_TEST(test_full_new_chunks_and_big_values),
        FIXTURE_TEST(test_compact_delete),
        FIXTURE_TEST(test_increments_and_setnx),
        FIXTURE_TEST(test_randfield_scratch),
        FIXTURE_TEST(test_bulk_build),
    };

    return cmocka_run_group_tests_name("hash_fail", tests, NULL, NULL);
}
