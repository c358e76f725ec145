/* test_hash.c - hash values through the public API: every command with
 * its edge cases, the compact -> full conversion at its limits, growth,
 * compaction, HSCAN and HRANDFIELD guarantees, and the object-level
 * internals other layers use. */
#include <math.h>
#include <stdio.h>

#include "testutil.h"
#include "store/hash.h"
#include "store/hash_impl.h"
#include "store/store.h"

/* ---- helpers ---- */

struct pair {
    char *f, *v;
    size_t fl, vl;
};

struct pairs {
    struct pair *p;
    size_t n, cap;
};

static char *dup_bytes(const void *p, size_t n)
{
    char *d = malloc(n + 1);

    assert_non_null(d);
    if (n != 0)
        memcpy(d, p, n);
    d[n] = '\0';
    return d;
}

static int collect(void *ctx, struct goblin_slice f, struct goblin_slice v)
{
    struct pairs *ps = ctx;

    if (ps->n == ps->cap) {
        ps->cap = ps->cap ? ps->cap * 2 : 16;
        ps->p = realloc(ps->p, ps->cap * sizeof(*ps->p));
        assert_non_null(ps->p);
    }
    assert_non_null(f.ptr);
    assert_non_null(v.ptr);
    ps->p[ps->n].f = dup_bytes(f.ptr, f.len);
    ps->p[ps->n].fl = f.len;
    ps->p[ps->n].v = dup_bytes(v.ptr, v.len);
    ps->p[ps->n].vl = v.len;
    ps->n++;
    return 0;
}

static void pairs_free(struct pairs *ps)
{
    for (size_t i = 0; i < ps->n; i++) {
        free(ps->p[i].f);
        free(ps->p[i].v);
    }
    free(ps->p);
    memset(ps, 0, sizeof(*ps));
}

static long pairs_find(const struct pairs *ps, const void *f, size_t fl)
{
    for (size_t i = 0; i < ps->n; i++) {
        if (ps->p[i].fl == fl && memcmp(ps->p[i].f, f, fl) == 0)
            return (long)i;
    }
    return -1;
}

static struct pairs get_all(goblin_store *st, struct goblin_slice key)
{
    struct pairs ps = {0};
    int64_t n = goblin_hash_foreach(st, key, collect, &ps);

    assert_int_equal(n, (int64_t)ps.n);
    return ps;
}

static int hset1(goblin_store *st, struct goblin_slice key,
                 struct goblin_slice f, struct goblin_slice v)
{
    struct goblin_slice fv[2] = {f, v};

    return goblin_hash_set(st, key, fv, 1);
}

static void assert_value(goblin_store *st, struct goblin_slice key,
                         struct goblin_slice f, const void *want, size_t len)
{
    struct goblin_slice v = {NULL, 0};

    assert_int_equal(goblin_hash_get(st, key, f, &v), 1);
    assert_int_equal(v.len, len);
    assert_non_null(v.ptr);
    if (len != 0)
        assert_memory_equal(v.ptr, want, len);
}

static const char *encoding(goblin_store *st, struct goblin_slice key)
{
    void **slot;

    assert_int_equal(goblin__key_lookup(st, key, GOBLIN_TYPE_HASH, &slot), 1);
    return goblin__hash_encoding(*slot);
}

static struct goblin_slice fmt(char *buf, const char *f, size_t i)
{
    int n = snprintf(buf, 64, f, i);

    return slice_of(buf, (size_t)n);
}

/* ---- basic commands ---- */

static void test_set_get_and_counts(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    struct goblin_slice fv[6] = {S("a"), S("1"), S("b"), S("2"), S("a"),
                                 S("3")};

    assert_int_equal(goblin_hash_set(st, S("h"), fv, 3), 2);
    assert_value(st, S("h"), S("a"), "3", 1);
    assert_value(st, S("h"), S("b"), "2", 1);
    assert_int_equal(goblin_hash_len(st, S("h")), 2);
    assert_int_equal(hset1(st, S("h"), S("a"), S("xyz")), 0);
    assert_value(st, S("h"), S("a"), "xyz", 3);
    assert_int_equal(hset1(st, S("h"), S("c"), S("")), 1);
    assert_int_equal(goblin_hash_len(st, S("h")), 3);
    assert_int_equal(goblin_hash_exists(st, S("h"), S("c")), 1);
    assert_int_equal(goblin_hash_exists(st, S("h"), S("d")), 0);
    assert_int_equal(goblin_hash_strlen(st, S("h"), S("a")), 3);
    assert_int_equal(goblin_hash_strlen(st, S("h"), S("c")), 0);
    assert_int_equal(goblin_hash_strlen(st, S("h"), S("zz")), 0);
    assert_string_equal(encoding(st, S("h")), "listpack");
    assert_int_equal(goblin_hash_set(st, S("h"), fv, 0), GOBLIN_EINVAL);
}

static void test_absent_key_reads_as_empty(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    struct goblin_slice v = {"keep", 4}, f, vals[2] = {{"x", 1}, {"y", 1}};
    struct goblin_slice fields[2] = {S("a"), S("b")};
    struct pairs ps = {0};
    uint64_t next = 99;

    assert_int_equal(goblin_hash_get(st, S("no"), S("a"), &v), 0);
    assert_int_equal(v.len, 4);
    assert_int_equal(goblin_hash_len(st, S("no")), 0);
    assert_int_equal(goblin_hash_exists(st, S("no"), S("a")), 0);
    assert_int_equal(goblin_hash_strlen(st, S("no"), S("a")), 0);
    assert_int_equal(goblin_hash_mget(st, S("no"), fields, 2, vals), 0);
    assert_null(vals[0].ptr);
    assert_null(vals[1].ptr);
    assert_int_equal(goblin_hash_del(st, S("no"), fields, 2), 0);
    assert_int_equal(goblin_hash_foreach(st, S("no"), collect, &ps), 0);
    assert_int_equal(goblin_hash_randfield(st, S("no"), &f, &v), 0);
    assert_int_equal(goblin_hash_randfield_count(st, S("no"), 5, 1, collect,
                                                 &ps), 0);
    assert_int_equal(goblin_hash_randfield_count(st, S("no"), -5, 1, collect,
                                                 &ps), 0);
    assert_int_equal(goblin_hash_scan(st, S("no"), 0, 10,
                                      (struct goblin_slice){NULL, 0},
                                      collect, &ps, &next), 0);
    assert_int_equal(next, 0);
    assert_int_equal(ps.n, 0);
    assert_int_equal(goblin_hash_len(st, S("no")), 0);
    assert_int_equal(goblin_store_dirty(st), 0);
}

static void test_wrong_type_everywhere(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    struct goblin_slice v, f, fv[2] = {S("a"), S("1")}, vals[1];
    struct pairs ps = {0};
    uint64_t next;
    int64_t i64;
    const int E = GOBLIN_EWRONGTYPE;

    assert_int_equal(goblin__key_add(st, S("s"), GOBLIN_TYPE_STRING, NULL),
                     0);
    assert_int_equal(goblin_hash_set(st, S("s"), fv, 1), E);
    assert_int_equal(goblin_hash_setnx(st, S("s"), S("a"), S("1")), E);
    assert_int_equal(goblin_hash_get(st, S("s"), S("a"), &v), E);
    assert_int_equal(goblin_hash_mget(st, S("s"), fv, 1, vals), E);
    assert_int_equal(goblin_hash_del(st, S("s"), fv, 1), E);
    assert_int_equal(goblin_hash_len(st, S("s")), E);
    assert_int_equal(goblin_hash_exists(st, S("s"), S("a")), E);
    assert_int_equal(goblin_hash_strlen(st, S("s"), S("a")), E);
    assert_int_equal(goblin_hash_foreach(st, S("s"), collect, &ps), E);
    assert_int_equal(goblin_hash_incrby(st, S("s"), S("a"), 1, &i64), E);
    assert_int_equal(goblin_hash_incrbyfloat(st, S("s"), S("a"), 1.0L, &v),
                     E);
    assert_int_equal(goblin_hash_randfield(st, S("s"), &f, &v), E);
    assert_int_equal(goblin_hash_randfield_count(st, S("s"), 2, 0, collect,
                                                 &ps), E);
    assert_int_equal(goblin_hash_scan(st, S("s"), 0, 10,
                                      (struct goblin_slice){NULL, 0},
                                      collect, &ps, &next), E);
    assert_int_equal(ps.n, 0);
}

static void test_binary_fields_and_values(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    struct pairs ps;

    assert_int_equal(hset1(st, S("k\0"), S(""), S("")), 1);
    assert_int_equal(hset1(st, S("k\0"), S("a\0b"), S("\0\0\0")), 1);
    assert_int_equal(hset1(st, S("k\0"), S("a\0c"), S("v\0")), 1);
    assert_int_equal(hset1(st, S("k\0"), S("a"), S("plain")), 1);
    assert_int_equal(goblin_hash_len(st, S("k")), 0);
    assert_value(st, S("k\0"), S(""), "", 0);
    assert_value(st, S("k\0"), S("a\0b"), "\0\0\0", 3);
    assert_value(st, S("k\0"), S("a\0c"), "v\0", 2);
    assert_int_equal(goblin_hash_exists(st, S("k\0"), S("a\0")), 0);
    ps = get_all(st, S("k\0"));
    assert_int_equal(ps.n, 4);
    assert_int_equal(ps.p[0].fl, 0); /* insertion order while compact */
    assert_memory_equal(ps.p[1].f, "a\0b", 3);
    pairs_free(&ps);
    assert_int_equal(goblin_hash_del(st, S("k\0"), &S(""), 1), 1);
    assert_int_equal(goblin_hash_exists(st, S("k\0"), S("")), 0);
}

static void test_misses_leave_out_values_alone(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    char fb[64], vb[64];

    /* 128 fields fill half the fingerprint byte values, so most misses
     * meet a fingerprint that matches and must compare bytes. */
    for (int form = 0; form < 2; form++) {
        for (size_t i = 0; i < 128 + (size_t)form * 200; i++)
            assert_true(hset1(st, S("h"), fmt(fb, "f%zu", i),
                              fmt(vb, "v%zu", i)) >= 0);
        assert_string_equal(encoding(st, S("h")),
                            form ? "hashtable" : "listpack");
        for (size_t i = 0; i < 200; i++) {
            struct goblin_slice v = {"keep", 4}, f = fmt(fb, "miss%zu", i);

            assert_int_equal(goblin_hash_get(st, S("h"), f, &v), 0);
            assert_int_equal(v.len, 4);
            assert_int_equal(goblin_hash_mget(st, S("h"), &f, 1, &v), 0);
            assert_null(v.ptr);
        }
    }
}

static void test_setnx_sets_only_absent_fields(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;

    assert_int_equal(goblin_hash_setnx(st, S("h"), S("f"), S("1")), 1);
    assert_int_equal(goblin_hash_setnx(st, S("h"), S("f"), S("2")), 0);
    assert_value(st, S("h"), S("f"), "1", 1);
    assert_int_equal(goblin_hash_setnx(st, S("h"), S("g"), S("2")), 1);
    assert_int_equal(goblin_hash_len(st, S("h")), 2);
}

static void test_mget_mixes_present_and_absent(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    struct goblin_slice fv[4] = {S("a"), S("1"), S("e"), S("")};
    struct goblin_slice fields[4] = {S("a"), S("zz"), S("e"), S("a")};
    struct goblin_slice vals[4];

    assert_int_equal(goblin_hash_set(st, S("h"), fv, 2), 2);
    assert_int_equal(goblin_hash_mget(st, S("h"), fields, 4, vals), 3);
    assert_int_equal(vals[0].len, 1);
    assert_null(vals[1].ptr);
    assert_non_null(vals[2].ptr);
    assert_int_equal(vals[2].len, 0);
    assert_memory_equal(vals[3].ptr, "1", 1);
}

static void test_del_counts_and_removes_empty_key(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    struct goblin_slice fv[6] = {S("a"), S("1"), S("b"), S("2"), S("c"),
                                 S("3")};
    struct goblin_slice d1[3] = {S("a"), S("a"), S("zz")};
    struct goblin_slice d2[2] = {S("b"), S("c")};
    void **slot;

    assert_int_equal(goblin_hash_set(st, S("h"), fv, 3), 3);
    assert_int_equal(goblin_hash_del(st, S("h"), d1, 3), 1);
    assert_int_equal(goblin_hash_len(st, S("h")), 2);
    assert_int_equal(goblin_hash_del(st, S("h"), d1, 3), 0);
    assert_int_equal(goblin_hash_del(st, S("h"), d2, 2), 2);
    assert_int_equal(goblin__key_lookup(st, S("h"), GOBLIN_TYPE_HASH, &slot),
                     0);
    assert_int_equal(goblin_hash_del(st, S("h"), d2, 0), GOBLIN_EINVAL);
}

static int count_calls(void *ctx, struct goblin_slice f, struct goblin_slice v)
{
    (void)f;
    (void)v;
    return ++*(int *)ctx == 3 ? -77 : 0;
}

static void test_foreach_stops_on_visitor_code(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    char b[64];
    int calls = 0;

    for (size_t i = 0; i < 5; i++)
        assert_int_equal(hset1(st, S("h"), fmt(b, "f%zu", i), S("v")), 1);
    assert_int_equal(goblin_hash_foreach(st, S("h"), count_calls, &calls),
                     -77);
    assert_int_equal(calls, 3);
}

static void test_writes_report_key_changes(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    struct goblin_slice d = S("zz");
    int64_t r;

    assert_int_equal(hset1(st, S("h"), S("a"), S("1")), 1);
    assert_int_equal(goblin_store_dirty(st), 1);
    assert_int_equal(goblin_hash_setnx(st, S("h"), S("a"), S("1")), 0);
    assert_int_equal(goblin_hash_del(st, S("h"), &d, 1), 0);
    assert_int_equal(goblin_store_dirty(st), 1);
    assert_int_equal(goblin_hash_incrby(st, S("h"), S("a"), 1, &r), 0);
    assert_int_equal(goblin_store_dirty(st), 2);
}

/* ---- increments ---- */

static void test_incrby_and_its_errors(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    static const char *bad[] = {"abc", " 1", "", "1.5", "01", "+1", "-0",
                                "1 ", "9223372036854775808"};
    int64_t r = 12345;

    assert_int_equal(goblin_hash_incrby(st, S("h"), S("n"), 5, &r), 0);
    assert_int_equal(r, 5);
    assert_int_equal(goblin_hash_incrby(st, S("h"), S("n"), -7, &r), 0);
    assert_int_equal(r, -2);
    assert_value(st, S("h"), S("n"), "-2", 2);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(hset1(st, S("h"), S("b"),
                               slice_of(bad[i], strlen(bad[i]))), i == 0);
        r = 777;
        assert_int_equal(goblin_hash_incrby(st, S("h"), S("b"), 1, &r),
                         GOBLIN_EHASHNOTINT);
        assert_int_equal(r, 777);
        assert_int_equal(goblin_hash_strlen(st, S("h"), S("b")),
                         (int64_t)strlen(bad[i]));
    }
}

static void test_incrby_overflow_on_both_sides(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    int64_t r;

    assert_int_equal(hset1(st, S("h"), S("max"), S("9223372036854775806")),
                     1);
    assert_int_equal(goblin_hash_incrby(st, S("h"), S("max"), 1, &r), 0);
    assert_true(r == INT64_MAX);
    assert_int_equal(goblin_hash_incrby(st, S("h"), S("max"), 1, &r),
                     GOBLIN_EOVERFLOW);
    assert_int_equal(goblin_hash_incrby(st, S("h"), S("max"), INT64_MAX, &r),
                     GOBLIN_EOVERFLOW);
    assert_int_equal(goblin_hash_incrby(st, S("h"), S("max"), 0, &r), 0);
    assert_int_equal(goblin_hash_incrby(st, S("h"), S("max"), INT64_MIN, &r),
                     0);
    assert_int_equal(r, -1);
    assert_int_equal(hset1(st, S("h"), S("min"), S("-9223372036854775807")),
                     1);
    assert_int_equal(goblin_hash_incrby(st, S("h"), S("min"), -1, &r), 0);
    assert_true(r == INT64_MIN);
    assert_value(st, S("h"), S("min"), "-9223372036854775808", 20);
    assert_int_equal(goblin_hash_incrby(st, S("h"), S("min"), -1, &r),
                     GOBLIN_EOVERFLOW);
    assert_int_equal(goblin_hash_incrby(st, S("h"), S("min"), INT64_MIN, &r),
                     GOBLIN_EOVERFLOW);
    assert_int_equal(goblin_hash_incrby(st, S("h"), S("min"), INT64_MAX, &r),
                     0);
    assert_int_equal(r, -1);
    assert_int_equal(goblin_hash_incrby(st, S("h"), S("new"), INT64_MIN, &r),
                     0);
    assert_true(r == INT64_MIN);
}

static void assert_float_step(goblin_store *st, const char *start,
                              long double incr, const char *want)
{
    struct goblin_slice v;

    if (start != NULL)
        assert_true(hset1(st, S("h"), S("x"),
                          slice_of(start, strlen(start))) >= 0);
    assert_int_equal(goblin_hash_incrbyfloat(st, S("h"), S("x"), incr, &v),
                     0);
    assert_int_equal(v.len, strlen(want));
    assert_memory_equal(v.ptr, want, v.len);
    assert_value(st, S("h"), S("x"), want, strlen(want));
}

static void test_incrbyfloat_formats_as_redis(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;

    if (under_valgrind())
        skip(); /* long double precision: see under_valgrind() */
    assert_float_step(st, NULL, 10.5L, "10.5");
    assert_float_step(st, NULL, 0.1L, "10.6");
    assert_float_step(st, NULL, -5.0L, "5.6");
    assert_float_step(st, "5.0e3", 2.0e2L, "5200");
    assert_float_step(st, "3", 0, "3");
    assert_float_step(st, "1", -1.1L, "-0.1");
    assert_float_step(st, "0x10", 1, "17");
    assert_float_step(st, "9223372036854775807", 1, "9223372036854775808");
    assert_string_equal(encoding(st, S("h")), "listpack");
}

static void test_incrbyfloat_long_result_converts(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    struct goblin_slice v;

    if (under_valgrind())
        skip(); /* long double precision: see under_valgrind() */
    assert_int_equal(goblin_hash_incrbyfloat(st, S("h"), S("x"), 1e300L, &v),
                     0);
    assert_int_equal(v.len, 301);
    assert_memory_equal(v.ptr, "1000000000000000000", 19);
    assert_string_equal(encoding(st, S("h")), "hashtable");
}

static void test_incrbyfloat_errors(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    static const char *bad[] = {"abc", " 1", "", "nan", "1e5000", "1x"};
    struct goblin_slice v = {"keep", 4};

    if (under_valgrind())
        skip(); /* long double precision: see under_valgrind() */
    assert_int_equal(goblin_hash_incrbyfloat(st, S("h"), S("x"), INFINITY,
                                             &v), GOBLIN_EINVAL);
    assert_int_equal(goblin_hash_incrbyfloat(st, S("h"), S("x"), NAN, &v),
                     GOBLIN_EINVAL);
    assert_int_equal(goblin_hash_len(st, S("h")), 0);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_true(hset1(st, S("h"), S("x"),
                          slice_of(bad[i], strlen(bad[i]))) >= 0);
        assert_int_equal(goblin_hash_incrbyfloat(st, S("h"), S("x"), 1, &v),
                         GOBLIN_EHASHNOTFLOAT);
    }
    assert_int_equal(hset1(st, S("h"), S("x"), S("inf")), 0);
    assert_int_equal(goblin_hash_incrbyfloat(st, S("h"), S("x"), 1, &v),
                     GOBLIN_ENANINF);
    assert_int_equal(hset1(st, S("h"), S("x"), S("1e4932")), 0);
    assert_int_equal(goblin_hash_incrbyfloat(st, S("h"), S("x"), 1e4932L,
                                             &v), GOBLIN_ENANINF);
    assert_value(st, S("h"), S("x"), "1e4932", 6);
    assert_int_equal(v.len, 4);
}

/* ---- encodings ---- */

static void fill(goblin_store *st, struct goblin_slice key, size_t from,
                 size_t to)
{
    char fb[64], vb[64];

    for (size_t i = from; i < to; i++)
        assert_int_equal(hset1(st, key, fmt(fb, "field:%zu", i),
                               fmt(vb, "value:%zu", i)), 1);
}

static void check_fill(goblin_store *st, struct goblin_slice key,
                       size_t from, size_t to)
{
    char fb[64], vb[64];

    for (size_t i = from; i < to; i++) {
        struct goblin_slice v = fmt(vb, "value:%zu", i);

        assert_value(st, key, fmt(fb, "field:%zu", i), v.ptr, v.len);
    }
}

static void test_conversion_at_entry_limit(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    const size_t max = GOBLIN__HASH_COMPACT_MAX_ENTRIES;

    fill(st, S("h"), 0, max);
    assert_string_equal(encoding(st, S("h")), "listpack");
    assert_int_equal(hset1(st, S("h"), S("field:0"), S("again")), 0);
    assert_string_equal(encoding(st, S("h")), "listpack");
    fill(st, S("h"), max, max + 1);
    assert_string_equal(encoding(st, S("h")), "hashtable");
    assert_int_equal(goblin_hash_len(st, S("h")), (int64_t)max + 1);
    assert_value(st, S("h"), S("field:0"), "again", 5);
    check_fill(st, S("h"), 1, max + 1);
}

static void test_conversion_at_length_limits(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    const size_t lim = GOBLIN__HASH_COMPACT_MAX_VALUE;
    char big[GOBLIN__HASH_COMPACT_MAX_VALUE + 1];

    memset(big, 'x', sizeof(big));
    assert_int_equal(hset1(st, S("f"), slice_of(big, lim), S("1")), 1);
    assert_int_equal(hset1(st, S("v"), S("1"), slice_of(big, lim)), 1);
    assert_string_equal(encoding(st, S("f")), "listpack");
    assert_string_equal(encoding(st, S("v")), "listpack");
    assert_int_equal(hset1(st, S("f"), slice_of(big, lim + 1), S("2")), 1);
    assert_int_equal(hset1(st, S("v"), S("1"), slice_of(big, lim + 1)), 0);
    assert_string_equal(encoding(st, S("f")), "hashtable");
    assert_string_equal(encoding(st, S("v")), "hashtable");
    assert_value(st, S("f"), slice_of(big, lim), "1", 1);
    assert_value(st, S("f"), slice_of(big, lim + 1), "2", 1);
    assert_value(st, S("v"), S("1"), big, lim + 1);
    /* A new key born big is full at once. */
    assert_int_equal(hset1(st, S("n"), S("1"), slice_of(big, lim + 1)), 1);
    assert_string_equal(encoding(st, S("n")), "hashtable");
}

/* Redis 7.0 counts distinct fields: 129 pairs of one field stay compact
 * (7.2 would convert; redis-server 7.0.15 answers listpack). */
/* Several existing fields at once, every value keeping its length: written
 * in place, the last of a repeated field winning, and a value that is a
 * view into the hash itself read as it was before the call. */
static void test_same_length_overwrite_of_many_fields(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    struct goblin_slice fv[8] = {S("a"), S("11"), S("b"), S("22"),
                                 S("c"), S("33"), S("d"), S("")};
    struct goblin_slice va, vb;

    assert_int_equal(goblin_hash_set(st, S("h"), fv, 4), 4);
    fv[1] = S("44"), fv[3] = S("55"), fv[4] = S("a"), fv[5] = S("66");
    assert_int_equal(goblin_hash_set(st, S("h"), fv, 4), 0);
    assert_value(st, S("h"), S("a"), "66", 2);
    assert_value(st, S("h"), S("b"), "55", 2);
    assert_value(st, S("h"), S("c"), "33", 2);
    assert_value(st, S("h"), S("d"), "", 0);
    assert_int_equal(goblin_hash_len(st, S("h")), 4);
    /* b := a's value, a := b's value, both views into the hash. */
    assert_int_equal(goblin_hash_get(st, S("h"), S("a"), &va), 1);
    assert_int_equal(goblin_hash_get(st, S("h"), S("b"), &vb), 1);
    {
        struct goblin_slice swap[4] = {S("b"), va, S("a"), vb};

        assert_int_equal(goblin_hash_set(st, S("h"), swap, 2), 0);
    }
    assert_value(st, S("h"), S("a"), "55", 2);
    assert_value(st, S("h"), S("b"), "66", 2);
    /* One value changing length among same-length ones. */
    fv[1] = S("7"), fv[3] = S("88"), fv[5] = S("99");
    assert_int_equal(goblin_hash_set(st, S("h"), fv, 3), 0);
    assert_value(st, S("h"), S("a"), "99", 2);
    assert_value(st, S("h"), S("b"), "88", 2);
    assert_string_equal(encoding(st, S("h")), "listpack");
}

static void test_many_pairs_in_one_call_count_distinct_fields(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    const size_t max = GOBLIN__HASH_COMPACT_MAX_ENTRIES;
    struct goblin_slice fv[2 * (GOBLIN__HASH_COMPACT_MAX_ENTRIES + 1)];

    for (size_t i = 0; i < max + 1; i++) {
        fv[2 * i] = S("same");
        fv[2 * i + 1] = i == max ? S("last") : S("x");
    }
    assert_int_equal(goblin_hash_set(st, S("a"), fv, max), 1);
    assert_string_equal(encoding(st, S("a")), "listpack");
    assert_int_equal(goblin_hash_set(st, S("b"), fv, max + 1), 1);
    assert_string_equal(encoding(st, S("b")), "listpack");
    assert_value(st, S("b"), S("same"), "last", 4);
    assert_int_equal(goblin_hash_len(st, S("b")), 1);
    /* One call of max + 1 distinct fields converts. */
    {
        char names[GOBLIN__HASH_COMPACT_MAX_ENTRIES + 1][8];

        for (size_t i = 0; i < max + 1; i++) {
            snprintf(names[i], sizeof(names[i]), "f%zu", i);
            fv[2 * i] = (struct goblin_slice){names[i], strlen(names[i])};
        }
        assert_int_equal(goblin_hash_set(st, S("c"), fv, max), (int)max);
        assert_string_equal(encoding(st, S("c")), "listpack");
        assert_int_equal(goblin_hash_set(st, S("d"), fv, max + 1),
                         (int)max + 1);
        assert_string_equal(encoding(st, S("d")), "hashtable");
    }
}

static void test_full_hash_keeps_working_when_small_again(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    char fb[64];

    fill(st, S("h"), 0, 300);
    for (size_t i = 1; i < 300; i++) {
        struct goblin_slice d = fmt(fb, "field:%zu", i);

        assert_int_equal(goblin_hash_del(st, S("h"), &d, 1), 1);
    }
    assert_int_equal(goblin_hash_len(st, S("h")), 1);
    assert_string_equal(encoding(st, S("h")), "hashtable");
    check_fill(st, S("h"), 0, 1);
    fill(st, S("h"), 1, 10);
    check_fill(st, S("h"), 0, 10);
}

/* ---- growth, deletes, compaction ---- */

static void test_growth_with_interleaved_deletes(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    const size_t n = 30000;
    char fb[64];

    for (size_t i = 0; i < n; i++) {
        fill(st, S("h"), i, i + 1);
        if (i % 3 == 2) {
            struct goblin_slice d = fmt(fb, "field:%zu", i - 1);

            assert_int_equal(goblin_hash_del(st, S("h"), &d, 1), 1);
        }
    }
    assert_int_equal(goblin_hash_len(st, S("h")), (int64_t)(n - n / 3));
    for (size_t i = 0; i < n; i++) {
        struct goblin_slice f = fmt(fb, "field:%zu", i);

        if (i % 3 == 1)
            assert_int_equal(goblin_hash_exists(st, S("h"), f), 0);
        else
            check_fill(st, S("h"), i, i + 1);
    }
    for (size_t i = 1; i < n; i += 3)
        fill(st, S("h"), i, i + 1);
    check_fill(st, S("h"), 0, n);
}

static void test_changing_lengths_keep_arena_bounded(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    const size_t n = 2000;
    char fb[64], vb[200];
    void **slot;
    size_t bytes0, bytes1;
    struct goblin__hash_full *hf;

    fill(st, S("h"), 0, n);
    assert_int_equal(goblin__key_lookup(st, S("h"), GOBLIN_TYPE_HASH, &slot),
                     1);
    bytes0 = goblin__hash_obj_bytes(*slot);
    for (size_t round = 0; round < 40; round++) {
        for (size_t i = 0; i < n; i++) {
            size_t len = 10 + (i * 7 + round * 13) % 50;

            memset(vb, 'a' + (int)(round % 26), len);
            assert_int_equal(hset1(st, S("h"), fmt(fb, "field:%zu", i),
                                   slice_of(vb, len)), 0);
        }
    }
    for (size_t i = 0; i < n; i++) {
        size_t len = 10 + (i * 7 + 39 * 13) % 50;

        memset(vb, 'a' + 39 % 26, len);
        assert_value(st, S("h"), fmt(fb, "field:%zu", i), vb, len);
    }
    assert_int_equal(goblin__key_lookup(st, S("h"), GOBLIN_TYPE_HASH, &slot),
                     1);
    bytes1 = goblin__hash_obj_bytes(*slot);
    hf = goblin__hobj_full(*slot);
    /* Values average ~35 bytes against ~12 at the start: live data grows
     * to ~2x; compaction keeps dead bytes below the live ones. */
    assert_true(bytes1 < bytes0 * 4);
    assert_true(hf->dead <= hf->live);
}

static void test_big_values_get_their_own_chunk(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    const size_t big = 300000;
    char *v = malloc(big);
    size_t used0;
    struct goblin_slice d = S("big");

    assert_non_null(v);
    memset(v, 'q', big);
    v[big - 1] = 'z';
    fill(st, S("h"), 0, 200);
    used0 = goblin_store_used_memory(st);
    assert_int_equal(hset1(st, S("h"), S("big"), slice_of(v, big)), 1);
    assert_true(goblin_store_used_memory(st) >= used0 + big);
    assert_value(st, S("h"), S("big"), v, big);
    v[0] = 'r';
    assert_int_equal(hset1(st, S("h"), S("big"), slice_of(v, big)), 0);
    assert_value(st, S("h"), S("big"), v, big);
    assert_int_equal(hset1(st, S("h"), S("big"), slice_of(v, big - 1)), 0);
    assert_value(st, S("h"), S("big"), v, big - 1);
    assert_true(goblin_store_used_memory(st) < used0 + big + 4096);
    assert_int_equal(goblin_hash_del(st, S("h"), &d, 1), 1);
    assert_true(goblin_store_used_memory(st) < used0 + 4096);
    check_fill(st, S("h"), 0, 200);
    free(v);
}

static void test_delete_everything_then_refill(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    const size_t n = 5000;
    char fb[64];
    size_t used[2];

    for (int round = 0; round < 2; round++) {
        fill(st, S("h"), 0, n);
        for (size_t i = n; i-- > 0;) {
            struct goblin_slice d = fmt(fb, "field:%zu", (i * 7919) % n);

            assert_int_equal(goblin_hash_del(st, S("h"), &d, 1), 1);
        }
        assert_int_equal(goblin_hash_len(st, S("h")), 0);
        goblin__write_begin(st);
        used[round] = goblin_store_used_memory(st);
    }
    assert_int_equal(used[0], used[1]);
}

/* ---- HSCAN ---- */

static const struct goblin_slice nomatch = {NULL, 0};

static void test_scan_compact_returns_all_at_once(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    struct pairs ps = {0};
    uint64_t next = 7;

    fill(st, S("h"), 0, 50);
    assert_int_equal(goblin_hash_scan(st, S("h"), 12345, 1, nomatch, collect,
                                      &ps, &next), 50);
    assert_int_equal(next, 0);
    assert_int_equal(ps.n, 50);
    assert_memory_equal(ps.p[0].f, "field:0", 7);
    pairs_free(&ps);
}

static void test_scan_sees_every_stable_field_under_churn(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    const size_t stable = 1500;
    char fb[64], vb[64];
    struct pairs ps = {0};
    uint64_t cursor = 0;
    size_t calls = 0, churn = 0;
    unsigned char *seen = calloc(stable, 1);

    assert_non_null(seen);
    fill(st, S("h"), 0, stable);
    do {
        assert_true(goblin_hash_scan(st, S("h"), cursor, 7, nomatch, collect,
                                     &ps, &cursor) >= 0);
        /* Between calls: add new fields (growth) and delete some earlier
         * churn fields (swap-removes moving ids around). */
        for (int k = 0; k < 9; k++, churn++)
            assert_int_equal(hset1(st, S("h"), fmt(fb, "churn:%zu", churn),
                                   fmt(vb, "%zu", churn)), 1);
        for (size_t k = churn - 9; k < churn; k += 2) {
            struct goblin_slice d = fmt(fb, "churn:%zu", k);

            assert_int_equal(goblin_hash_del(st, S("h"), &d, 1), 1);
        }
        calls++;
    } while (cursor != 0);
    for (size_t i = 0; i < ps.n; i++) {
        unsigned long k;

        if (ps.p[i].fl > 6 && memcmp(ps.p[i].f, "field:", 6) == 0) {
            assert_int_equal(sscanf(ps.p[i].f, "field:%lu", &k), 1);
            seen[k] = 1;
        }
    }
    for (size_t i = 0; i < stable; i++)
        assert_true(seen[i]);
    assert_true(calls > stable / 7);
    free(seen);
    pairs_free(&ps);
}

static void test_scan_with_deletes_of_visited_and_unvisited(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    const size_t n = 1000;
    char fb[64];
    struct pairs ps = {0};
    uint64_t cursor = 0;
    size_t del = 0;

    fill(st, S("h"), 0, n);
    do {
        assert_true(goblin_hash_scan(st, S("h"), cursor, 10, nomatch,
                                     collect, &ps, &cursor) >= 0);
        /* Delete fields with numbers divisible by 5 as we go, some seen,
         * some not. */
        for (int k = 0; k < 3 && del < n; k++, del += 5) {
            struct goblin_slice d = fmt(fb, "field:%zu", del);

            assert_int_equal(goblin_hash_del(st, S("h"), &d, 1), 1);
        }
    } while (cursor != 0);
    for (size_t i = 0; i < n; i++) {
        struct goblin_slice f = fmt(fb, "field:%zu", i);

        if (i % 5 != 0)
            assert_true(pairs_find(&ps, f.ptr, f.len) >= 0);
    }
    pairs_free(&ps);
}

static void test_scan_full_default_count_is_ten(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    struct pairs ps = {0};
    uint64_t next = 0;

    fill(st, S("h"), 0, 200);
    assert_int_equal(goblin_hash_scan(st, S("h"), 0, 0, nomatch, collect,
                                      &ps, &next), 10);
    assert_int_equal(next, 190);
    assert_int_equal(goblin_hash_scan(st, S("h"), 5, 0, nomatch, collect,
                                      &ps, &next), 5);
    assert_int_equal(next, 0);
    /* A cursor past the end (the hash shrank) starts from the top. */
    assert_int_equal(goblin_hash_scan(st, S("h"), 1000000, 50, nomatch,
                                      collect, &ps, &next), 50);
    assert_int_equal(next, 150);
    pairs_free(&ps);
}

static void test_scan_match_filters_fields(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    struct pairs ps = {0};
    uint64_t cursor = 0;

    fill(st, S("small"), 0, 30);
    assert_int_equal(goblin_hash_scan(st, S("small"), 0, 0, S("field:1*"),
                                      collect, &ps, &cursor), 11);
    assert_int_equal(cursor, 0);
    pairs_free(&ps);
    fill(st, S("big"), 0, 300);
    do {
        assert_true(goblin_hash_scan(st, S("big"), cursor, 0, S("*:2?"),
                                     collect, &ps, &cursor) >= 0);
    } while (cursor != 0);
    assert_int_equal(ps.n, 10);
    for (size_t i = 0; i < ps.n; i++)
        assert_int_equal(strncmp(ps.p[i].f, "field:2", 7), 0);
    pairs_free(&ps);
}

/* ---- HRANDFIELD ---- */

static void assert_distinct(const struct pairs *ps)
{
    for (size_t i = 0; i < ps->n; i++)
        assert_int_equal(pairs_find(ps, ps->p[i].f, ps->p[i].fl), (long)i);
}

static void randfield_cases(goblin_store *st, struct goblin_slice key,
                            size_t n)
{
    struct pairs ps = {0};
    size_t counts[] = {1, 2, n / 5, n / 3, n - 1, n, n + 10};

    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        size_t want = counts[c] < n ? counts[c] : n;

        assert_int_equal(goblin_hash_randfield_count(st, key,
                                                     (int64_t)counts[c], 1,
                                                     collect, &ps),
                         (int64_t)want);
        assert_int_equal(ps.n, want);
        assert_distinct(&ps);
        for (size_t i = 0; i < ps.n; i++) {
            char vb[64];
            unsigned long k;

            assert_int_equal(sscanf(ps.p[i].f, "field:%lu", &k), 1);
            assert_int_equal(ps.p[i].vl, fmt(vb, "value:%zu", k).len);
            assert_memory_equal(ps.p[i].v, vb, ps.p[i].vl);
        }
        pairs_free(&ps);
    }
    assert_int_equal(goblin_hash_randfield_count(st, key, -3 * (int64_t)n, 1,
                                                 collect, &ps),
                     3 * (int64_t)n);
    assert_int_equal(ps.n, 3 * n);
    for (size_t i = 0; i < ps.n; i++)
        assert_int_equal(strncmp(ps.p[i].f, "field:", 6), 0);
    pairs_free(&ps);
    assert_int_equal(goblin_hash_randfield_count(st, key, 0, 1, collect, &ps),
                     0);
}

static void test_randfield_count_cases_both_forms(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    struct goblin_slice f, v;

    fill(st, S("small"), 0, 20);
    fill(st, S("big"), 0, 5000);
    randfield_cases(st, S("small"), 20);
    randfield_cases(st, S("big"), 5000);
    assert_int_equal(goblin_hash_randfield(st, S("big"), &f, &v), 1);
    assert_int_equal(strncmp(f.ptr, "field:", 6), 0);
    assert_int_equal(goblin_hash_randfield(st, S("small"), &f, NULL), 1);
}

static void test_randfield_negative_count_limits(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    struct pairs ps = {0};

    fill(st, S("h"), 0, 3);
    assert_int_equal(goblin_hash_randfield_count(st, S("h"), INT64_MIN, 0,
                                                 collect, &ps),
                     GOBLIN_ERANGE);
    assert_int_equal(goblin_hash_randfield_count(st, S("h"),
                                                 -(INT64_MAX / 2) - 1, 1,
                                                 collect, &ps),
                     GOBLIN_ERANGE);
    assert_int_equal(goblin_hash_randfield_count(st, S("no"),
                                                 -(INT64_MAX / 2) - 1, 1,
                                                 collect, &ps),
                     GOBLIN_ERANGE);
    assert_int_equal(ps.n, 0);
}

static void test_randfield_covers_all_fields_and_is_seeded(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st, *st2;
    struct goblin_config cfg = {0};
    struct goblin_slice f1, f2;
    int hits[10] = {0};

    fill(st, S("h"), 0, 10);
    for (int i = 0; i < 2000; i++) {
        unsigned long k;
        char text[32];

        assert_int_equal(goblin_hash_randfield(st, S("h"), &f1, NULL), 1);
        assert_true(f1.len < sizeof(text)); /* a view: not NUL-ended */
        memcpy(text, f1.ptr, f1.len);
        text[f1.len] = '\0';
        assert_int_equal(sscanf(text, "field:%lu", &k), 1);
        hits[k]++;
    }
    for (int i = 0; i < 10; i++)
        assert_true(hits[i] > 120 && hits[i] < 280);
    cfg.seed = 5;
    assert_int_equal(goblin_store_open(&cfg, &st), 0);
    assert_int_equal(goblin_store_open(&cfg, &st2), 0);
    fill(st, S("h"), 0, 300);
    fill(st2, S("h"), 0, 300);
    for (int i = 0; i < 50; i++) {
        assert_int_equal(goblin_hash_randfield(st, S("h"), &f1, NULL), 1);
        assert_int_equal(goblin_hash_randfield(st2, S("h"), &f2, NULL), 1);
        assert_int_equal(f1.len, f2.len);
        assert_memory_equal(f1.ptr, f2.ptr, f1.len);
    }
    goblin_store_close(st);
    goblin_store_close(st2);
}

/* ---- object layer ---- */

static void test_object_bulk_build_iterate_and_bytes(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    struct goblin_slice fv[2 * 300];
    char buf[300][2][16];
    struct pairs ps = {0};
    void *obj;

    for (size_t i = 0; i < 300; i++) {
        fv[2 * i] = fmt(buf[i][0], "f%zu", i);
        fv[2 * i + 1] = fmt(buf[i][1], "v%zu", i);
    }
    for (size_t n = 0; n <= 300; n += 150) {
        size_t used0 = goblin_store_used_memory(st);

        assert_int_equal(goblin__hash_obj_from_pairs(st, fv, n, &obj), 0);
        assert_int_equal(goblin__hash_obj_len(obj), n);
        assert_int_equal(goblin_store_used_memory(st) - used0,
                         goblin__hash_obj_bytes(obj));
        assert_string_equal(goblin__hash_encoding(obj),
                            n > 128 ? "hashtable" : "listpack");
        assert_int_equal(goblin__hash_obj_foreach(obj, collect, &ps),
                         (int64_t)n);
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(ps.p[i].fl, fv[2 * i].len);
            assert_memory_equal(ps.p[i].v, fv[2 * i + 1].ptr, ps.p[i].vl);
        }
        pairs_free(&ps);
        assert_int_equal(goblin__hash_obj_set(st, &obj, fv, 1), n == 0);
        goblin__hash_free(st, obj);
        assert_int_equal(goblin_store_used_memory(st), used0);
    }
    assert_int_equal(goblin__hash_obj_from_pairs(st, fv, 0, &obj), 0);
    assert_int_equal(goblin__hash_obj_set(st, &obj, fv, 300), 300);
    assert_string_equal(goblin__hash_encoding(obj), "hashtable");
    goblin__hash_free(st, obj);
}

static void test_object_bulk_build_in_batches(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    const size_t n = 5000;
    struct goblin_slice *fv = malloc(2 * n * sizeof(*fv));
    char (*buf)[2][16] = malloc(n * sizeof(*buf));
    struct pairs ps = {0};
    void *obj;

    assert_non_null(fv);
    assert_non_null(buf);
    for (size_t i = 0; i < n; i++) {
        fv[2 * i] = fmt(buf[i][0], "f%zu", i % 3000); /* repeats */
        fv[2 * i + 1] = fmt(buf[i][1], "v%zu", i);
    }
    assert_int_equal(goblin__hash_obj_from_pairs(st, fv, n, &obj), 0);
    assert_int_equal(goblin__hash_obj_len(obj), 3000);
    assert_int_equal(goblin__hash_obj_foreach(obj, collect, &ps), 3000);
    for (size_t i = 0; i < 3000; i++) {
        long j = pairs_find(&ps, fv[2 * i].ptr, fv[2 * i].len);
        size_t last = i < n - 3000 ? i + 3000 : i;

        assert_true(j >= 0);
        assert_string_equal(ps.p[j].v, buf[last][1]);
    }
    pairs_free(&ps);
    goblin__hash_free(st, obj);
    free(fv);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_set_get_and_counts),
        FIXTURE_TEST(test_absent_key_reads_as_empty),
        FIXTURE_TEST(test_wrong_type_everywhere),
        FIXTURE_TEST(test_binary_fields_and_values),
        FIXTURE_TEST(test_misses_leave_out_values_alone),
        FIXTURE_TEST(test_setnx_sets_only_absent_fields),
        FIXTURE_TEST(test_mget_mixes_present_and_absent),
        FIXTURE_TEST(test_del_counts_and_removes_empty_key),
        FIXTURE_TEST(test_foreach_stops_on_visitor_code),
        FIXTURE_TEST(test_writes_report_key_changes),
        FIXTURE_TEST(test_incrby_and_its_errors),
        FIXTURE_TEST(test_incrby_overflow_on_both_sides),
        FIXTURE_TEST(test_incrbyfloat_formats_as_redis),
        FIXTURE_TEST(test_incrbyfloat_long_result_converts),
        FIXTURE_TEST(test_incrbyfloat_errors),
        FIXTURE_TEST(test_conversion_at_entry_limit),
        FIXTURE_TEST(test_conversion_at_length_limits),
        FIXTURE_TEST(test_same_length_overwrite_of_many_fields),
        FIXTURE_TEST(test_many_pairs_in_one_call_count_distinct_fields),
        FIXTURE_TEST(test_full_hash_keeps_working_when_small_again),
        FIXTURE_TEST(test_growth_with_interleaved_deletes),
        FIXTURE_TEST(test_changing_lengths_keep_arena_bounded),
        FIXTURE_TEST(test_big_values_get_their_own_chunk),
        FIXTURE_TEST(test_delete_everything_then_refill),
        FIXTURE_TEST(test_scan_compact_returns_all_at_once),
        FIXTURE_TEST(test_scan_sees_every_stable_field_under_churn),
        FIXTURE_TEST(test_scan_with_deletes_of_visited_and_unvisited),
        FIXTURE_TEST(test_scan_full_default_count_is_ten),
        FIXTURE_TEST(test_scan_match_filters_fields),
        FIXTURE_TEST(test_randfield_count_cases_both_forms),
        FIXTURE_TEST(test_randfield_negative_count_limits),
        FIXTURE_TEST(test_randfield_covers_all_fields_and_is_seeded),
        FIXTURE_TEST(test_object_bulk_build_iterate_and_bytes),
        FIXTURE_TEST(test_object_bulk_build_in_batches),
    };

    return cmocka_run_group_tests_name("hash", tests, NULL, NULL);
}
