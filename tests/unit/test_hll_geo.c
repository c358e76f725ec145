/* test_hll_geo.c - HyperLogLog and geo in the store (lib/store/hll.c,
 * geohash.c, geo.c): Redis's exact bytes for known additions, sparse to
 * dense promotion, corrupt values refused (a PFADD keeping what it set
 * before), allocation failures that change nothing; geohash scores,
 * distances and searches at the poles and across the antimeridian. */
#include <math.h>

#include "test_keys_util.h"
#include "goblin/str.h"
#include "goblin/zset.h"
#include "store/geo.h"
#include "store/hll.h"

static struct goblin_slice elems[5000];
static char texts[5000][8];

static void make_elems(void)
{
    for (int i = 0; i < 5000; i++) {
        int n = snprintf(texts[i], sizeof(texts[i]), "e%d", i);

        elems[i] = slice_of(texts[i], (size_t)n);
    }
}

static void test_hll_bytes_are_redis_bytes(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice abc[3] = {S("a"), S("b"), S("c")}, v;
    uint64_t card;

    /* Redis 7.0.15: PFADD k a b c, then GET k. */
    assert_int_equal(goblin__hll_add(f->st, S("k"), abc, 3, 3000), 1);
    assert_int_equal(goblin_str_get(f->st, S("k"), &v), 1);
    assert_slice(v, "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80"
                    "`\xf3\x80P\xb1\x84K\xfb\x80" "BZ");
    assert_int_equal(goblin__hll_add(f->st, S("k"), abc, 3, 3000), 0);
    assert_int_equal(goblin__hll_count(f->st, abc, 1, &card), 0);
    assert_int_equal(goblin__hll_count(f->st, (struct goblin_slice[]){
                                           S("k")}, 1, &card), 0);
    assert_int_equal(card, 3);
    /* The count is cached in the header now. */
    goblin_str_get(f->st, S("k"), &v);
    assert_int_equal(((const uint8_t *)v.ptr)[8], 3);
    assert_int_equal(goblin__hll_add(f->st, S("empty"), NULL, 0, 3000), 1);
    goblin_str_get(f->st, S("empty"), &v);
    assert_slice(v, "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80"
                    "\x7f\xff");
}

static void test_hll_promotes_to_dense_with_redis_counts(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice k = S("d"), v;
    uint64_t card;

    make_elems();
    assert_int_equal(goblin__hll_add(f->st, k, elems, 100, 3000), 1);
    goblin_str_get(f->st, k, &v);
    assert_int_equal(v.len, 285); /* Redis's sparse length */
    assert_int_equal(goblin__hll_count(f->st, &k, 1, &card), 0);
    assert_int_equal(card, 100);
    assert_int_equal(goblin__hll_add(f->st, k, elems, 5000, 3000), 1);
    goblin_str_get(f->st, k, &v);
    assert_int_equal(v.len, GOBLIN__HLL_DENSE_SIZE);
    assert_int_equal(((const uint8_t *)v.ptr)[4], 0);
    assert_int_equal(goblin__hll_count(f->st, &k, 1, &card), 0);
    assert_int_equal(card, 4968); /* Redis's PFCOUNT of e0..e4999 */
    /* A tiny hll-sparse-max-bytes promotes at once. */
    assert_int_equal(goblin__hll_add(f->st, S("t"), elems, 10, 20), 1);
    goblin_str_get(f->st, S("t"), &v);
    assert_int_equal(v.len, GOBLIN__HLL_DENSE_SIZE);
    assert_null(goblin__hll_selftest(f->st));
}

static void test_hll_refuses_what_is_not_an_hll(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice keys[2] = {S("c"), S("s")};
    uint64_t card;

    goblin_str_set(f->st, S("s"), S("not an hll at all"), NULL, NULL);
    /* Runs covering 32768 registers, no cached count. */
    goblin_str_set(f->st, S("c"), S("HYLL\x01\x00\x00\x00\x00\x00\x00\x00"
                                    "\x00\x00\x00\x80\x7f\xff\x7f\xff"),
                   NULL, NULL);
    assert_int_equal(goblin__hll_add(f->st, S("s"), keys, 1, 3000),
                     GOBLIN__EHLL_NOT);
    assert_int_equal(goblin__hll_count(f->st, keys, 1, &card),
                     GOBLIN__EHLL_CORRUPT);
    assert_int_equal(goblin__hll_count(f->st, keys, 2, &card),
                     GOBLIN__EHLL_CORRUPT);
    add_fake_hash(f->st, S("h"));
    assert_int_equal(goblin__hll_add(f->st, S("h"), keys, 1, 3000),
                     GOBLIN_EWRONGTYPE);
}

/* Runs that pass the last register are corrupt even when the scan could
 * stop at exactly 16384: an XZERO of 16384, then a VAL of one. */
static void test_hll_run_past_the_last_register_is_corrupt(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice keys[2] = {S("c"), S("ok")};
    uint64_t card;

    make_elems();
    goblin_str_set(f->st, S("c"), S("HYLL\x01\x00\x00\x00\x00\x00\x00\x00"
                                    "\x00\x00\x00\x80\x7f\xff\x80"),
                   NULL, NULL);
    assert_int_equal(goblin__hll_add(f->st, S("ok"), elems, 3, 3000), 1);
    assert_int_equal(goblin__hll_count(f->st, keys, 2, &card),
                     GOBLIN__EHLL_CORRUPT);
    assert_int_equal(goblin__hll_merge(f->st, S("ok"), keys, 2, 3000),
                     GOBLIN__EHLL_CORRUPT);
    assert_int_equal(goblin__hll_todense(f->st, S("c"), NULL),
                     GOBLIN__EHLL_CORRUPT);
}

/* A PFADD whose later element meets corrupt runs keeps what the earlier
 * ones set, as Redis's in-place edit does, and still fails. */
static void test_hll_pfadd_keeps_updates_before_corrupt_runs(void **state)
{
    struct fixture *f = *state;
    /* One XZERO covering registers 0..8191 only. */
    struct goblin_slice half = S("HYLL\x01\x00\x00\x00\x00\x00\x00\x00"
                                 "\x00\x00\x00\x00\x5f\xff"), v, two[2];
    long reg;
    int lo = -1, hi = -1;

    make_elems();
    for (int i = 0; i < 5000 && (lo < 0 || hi < 0); i++) {
        goblin__hll_patlen(elems[i].ptr, elems[i].len, &reg);
        if (reg < 8192 && lo < 0)
            lo = i;
        if (reg >= 8192 && hi < 0)
            hi = i;
    }
    assert_true(lo >= 0 && hi >= 0);
    goblin_str_set(f->st, S("k"), half, NULL, NULL);
    assert_int_equal(goblin__hll_add(f->st, S("k"), &elems[hi], 1, 3000),
                     GOBLIN__EHLL_CORRUPT);
    assert_int_equal(goblin_str_get(f->st, S("k"), &v), 1);
    assert_memory_equal(v.ptr, half.ptr, half.len);
    two[0] = elems[lo];
    two[1] = elems[hi];
    assert_int_equal(goblin__hll_add(f->st, S("k"), two, 2, 3000),
                     GOBLIN__EHLL_CORRUPT);
    assert_int_equal(goblin_str_get(f->st, S("k"), &v), 1);
    assert_true(v.len > half.len);
    assert_int_equal(((const uint8_t *)v.ptr)[15] & 0x80, 0x80);
}

static int64_t op_pfadd(goblin_store *st, void *arg)
{
    (void)arg;
    return goblin__hll_add(st, S("a"), elems, 300, 3000);
}

static int64_t op_pfmerge(goblin_store *st, void *arg)
{
    struct goblin_slice keys[2] = {S("m"), S("a")};

    (void)arg;
    return goblin__hll_merge(st, S("m"), keys, 2, 3000);
}

static int64_t op_pfcount(goblin_store *st, void *arg)
{
    struct goblin_slice keys[2] = {S("m"), S("a")};
    uint64_t card;
    int r = goblin__hll_count(st, keys, 2, &card);

    (void)arg;
    return r < 0 ? r : (int64_t)card;
}

static void test_hll_allocation_failures_change_nothing(void **state)
{
    struct fixture *f = *state;

    make_elems();
    assert_int_equal(goblin__hll_add(f->st, S("a"), elems + 1000, 10, 3000),
                     1);
    assert_int_equal(run_failing(f, op_pfadd, NULL), 1);
    assert_int_equal(run_failing(f, op_pfmerge, NULL), 0);
    assert_true(run_failing(f, op_pfcount, NULL) > 250);
}

static void test_geohash_at_the_poles_and_the_antimeridian(void **state)
{
    double xy[2];
    char text[11];

    (void)state;
    /* Redis 7.0.15's scores and positions. */
    assert_true(goblin__geohash_score(13.361389, 38.115556) ==
                3479099956230698ull);
    goblin__geohash_decode_score(0, xy);
    assert_true(fabs(xy[0] - -179.99999731779098511) < 1e-12);
    goblin__geohash_decode_score((double)goblin__geohash_score(180,
                                                               85.05112878),
                                 xy);
    assert_true(xy[0] <= 180 && xy[1] <= GOBLIN__GEO_LAT_MAX);
    assert_true(xy[1] > 85.0511);
    goblin__geohash_text(3479099956230698.0, text);
    assert_memory_equal(text, "sqc8b49rny0", 11);
    /* 0.2 degrees of longitude apart across the antimeridian. */
    assert_true(fabs(goblin__geo_distance(179.9, 0, -179.9, 0) -
                     22239) < 10);
    /* Over the pole: 10 degrees of a great circle. */
    assert_true(fabs(goblin__geo_distance(0, 85, 180, 85) -
                     10 * M_PI / 180 * 6372797.560856) < 1);
}

static void test_geo_search_crosses_the_antimeridian(void **state)
{
    struct fixture *f = *state;
    struct goblin__geo_shape s = {0};
    struct goblin__geo_points pts = {0};
    struct goblin_zpair p[3] = {
        {(double)goblin__geohash_score(179.9, 0), S("east")},
        {(double)goblin__geohash_score(-179.9, 0), S("west")},
        {(double)goblin__geohash_score(0, 0), S("far")},
    };

    assert_int_equal(goblin_zset_add_pairs(f->st, S("g"), 0, p, 3), 3);
    /* As in Redis, a centre at exactly 180 maps to no cell of its own;
     * just west of it the cells wrap round to -180. */
    s.xy[0] = 179.99;
    s.radius = 50;
    s.conversion = 1000;
    assert_int_equal(goblin__geo_search(f->st, S("g"), &s, 0, &pts), 1);
    assert_int_equal(pts.n, 2);
    goblin__geo_points_free(f->st, &pts);
    /* Near the pole a box of 4000 km reaches all around. */
    p[0].score = (double)goblin__geohash_score(0, 85);
    p[1].score = (double)goblin__geohash_score(90, 85);
    assert_int_equal(goblin_zset_add_pairs(f->st, S("n"), 0, p, 2), 2);
    memset(&s, 0, sizeof(s));
    s.xy[0] = 45;
    s.xy[1] = 84;
    s.box = true;
    s.width = 4000;
    s.height = 500;
    s.conversion = 1000;
    assert_int_equal(goblin__geo_search(f->st, S("n"), &s, 0, &pts), 1);
    assert_int_equal(pts.n, 2);
    goblin__geo_points_free(f->st, &pts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_hll_bytes_are_redis_bytes),
        FIXTURE_TEST(test_hll_promotes_to_dense_with_redis_counts),
        FIXTURE_TEST(test_hll_refuses_what_is_not_an_hll),
        FIXTURE_TEST(test_hll_run_past_the_last_register_is_corrupt),
        FIXTURE_TEST(test_hll_pfadd_keeps_updates_before_corrupt_runs),
        FIXTURE_TEST(test_hll_allocation_failures_change_nothing),
        cmocka_unit_test(test_geohash_at_the_poles_and_the_antimeridian),
        FIXTURE_TEST(test_geo_search_crosses_the_antimeridian),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
