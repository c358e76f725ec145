/* test_zset.c - sorted sets command by command: ZADD and its flags,
 * ZINCRBY, point reads, ranges by rank / score / lex with REV and LIMIT,
 * removals, pops, missing keys and wrong types, ordering rules, and the
 * compact <-> full thresholds. */
#include <math.h>
#include <stdio.h>

#include "testutil.h"
#include "store/keyspace.h"
#include "store/zset.h"

/* ---- helpers ---- */

#define MAXC 512

struct got {
    size_t n;
    char m[MAXC][80];
    size_t len[MAXC];
    double s[MAXC];
};

static struct got g;

static int collect(void *ctx, struct goblin_slice m, double s)
{
    struct got *c = ctx;

    assert_true(c->n < MAXC && m.len <= 80);
    if (m.len > 0)
        memcpy(c->m[c->n], m.ptr, m.len);
    c->len[c->n] = m.len;
    c->s[c->n] = s;
    c->n++;
    return 0;
}

static void add(goblin_store *st, const char *key, const char *m, double s)
{
    assert_true(goblin_zset_add(st, slice_of(key, strlen(key)),
                                slice_of(m, strlen(m)), s) >= 0);
}

/* Walks range r of key into g; returns what goblin_zset_range said. */
static int64_t range(goblin_store *st, const char *key,
                     const struct goblin_zrange *r)
{
    struct goblin_zset_iter it;
    struct goblin_slice m;
    double s;
    int64_t n = goblin_zset_range(st, slice_of(key, strlen(key)), r, &it);

    g.n = 0;
    while (goblin_zset_next(&it, &m, &s))
        collect(&g, m, s);
    if (n >= 0)
        assert_int_equal(n, (int64_t)g.n);
    return n;
}

/* g holds exactly the space-separated members of want, in order. */
static void expect(const char *want)
{
    char buf[1024];
    size_t i = 0;

    snprintf(buf, sizeof(buf), "%s", want);
    for (char *tok = strtok(buf, " "); tok != NULL; tok = strtok(NULL, " ")) {
        assert_true(i < g.n);
        assert_int_equal(g.len[i], strlen(tok));
        assert_memory_equal(g.m[i], tok, g.len[i]);
        i++;
    }
    assert_int_equal(g.n, i);
}

static struct goblin_zrange by_rank(int64_t a, int64_t b, int rev)
{
    struct goblin_zrange r;

    memset(&r, 0, sizeof(r));
    r.by = GOBLIN_ZRANGE_BY_RANK;
    r.start = a;
    r.stop = b;
    r.rev = rev;
    return r;
}

static struct goblin_zrange by_score(double lo, int lx, double hi, int hx)
{
    struct goblin_zrange r;

    memset(&r, 0, sizeof(r));
    r.by = GOBLIN_ZRANGE_BY_SCORE;
    r.min = lo;
    r.min_excl = lx;
    r.max = hi;
    r.max_excl = hx;
    return r;
}

static struct goblin_lex_bound lex(const char *text)
{
    struct goblin_lex_bound b;

    assert_int_equal(goblin_lex_bound_parse(text, strlen(text), &b), 0);
    return b;
}

static struct goblin_zrange by_lex(const char *lo, const char *hi)
{
    struct goblin_zrange r;

    memset(&r, 0, sizeof(r));
    r.by = GOBLIN_ZRANGE_BY_LEX;
    r.lmin = lex(lo);
    r.lmax = lex(hi);
    return r;
}

static void abcde(goblin_store *st)
{
    add(st, "z", "a", 1);
    add(st, "z", "b", 2);
    add(st, "z", "c", 3);
    add(st, "z", "d", 4);
    add(st, "z", "e", 5);
}

static void check_obj(goblin_store *st, const char *key)
{
    void **slot;

    if (goblin__key_lookup(st, slice_of(key, strlen(key)), GOBLIN_TYPE_ZSET,
                           &slot) == 1)
        assert_int_equal(goblin__zset_obj_check(*slot), 0);
}

static const char *encoding(goblin_store *st, const char *key)
{
    const char *enc = "none";

    goblin_key_encoding(st, slice_of(key, strlen(key)), &enc);
    return enc;
}

/* ---- ZADD ---- */

static void test_zadd_adds_and_updates(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    double s;

    assert_int_equal(goblin_zset_add(st, S("z"), S("a"), 1), 1);
    assert_int_equal(goblin_zset_add(st, S("z"), S("a"), 2), 0);
    assert_int_equal(goblin_zset_score(st, S("z"), S("a"), &s), 1);
    assert_true(s == 2);
    assert_int_equal(goblin_zset_card(st, S("z")), 1);
    assert_string_equal(encoding(st, "z"), "listpack");
}

static void test_zadd_nan_is_rejected_and_changes_nothing(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_zpair p[3] = {{1, S("a")}, {2, S("b")}, {NAN, S("c")}};

    assert_int_equal(goblin_zset_add_pairs(st, S("z"), 0, p, 3),
                     GOBLIN_EINVAL);
    assert_int_equal(goblin_zset_card(st, S("z")), 0);
    assert_int_equal(goblin_zset_add_pairs(st, S("z"), 0, p, 0),
                     GOBLIN_EINVAL);
    assert_int_equal(goblin_zset_add(st, S("z"), S("a"), NAN), GOBLIN_EINVAL);
}

static void test_zadd_pairs_apply_left_to_right(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_zpair p[4] = {{1, S("a")}, {2, S("a")}, {5, S("b")},
                                {3, S("a")}};
    double s;

    assert_int_equal(goblin_zset_add_pairs(st, S("z"), GOBLIN_ZADD_CH, p, 4),
                     4);
    assert_int_equal(goblin_zset_score(st, S("z"), S("a"), &s), 1);
    assert_true(s == 3);
    p[0].score = 9;
    p[1].score = 9;
    assert_int_equal(goblin_zset_add_pairs(st, S("z"), GOBLIN_ZADD_NX, p, 2),
                     0);
    assert_int_equal(goblin_zset_score(st, S("z"), S("a"), &s), 1);
    assert_true(s == 3);
}

/* A ZADD of many pairs on a compact set finds members that share their
 * first 8 bytes or are prefixes of each other, repeated members included,
 * whether the call sorts by insertion (up to 16 pairs) or by merging. */
static void test_zadd_many_pairs_of_members_sharing_a_prefix(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    /* Binary members too: a member's first word pads with zero bytes,
     * so "ab" and "ab\0" differ only by length. */
    static const struct goblin_slice names[] = {
        S("user:00"), S("user:0001"), S("user:0001x"), {"ab\0", 3},
        {"ab\0\0\0\0\0\0\0", 9}, S("user:00000000001"), S("user:000"),
        S("user:0001y"), S("user:00000000002"), S("user:0000000000123"),
        S("u"), S(""), {"ab", 2}, {"ab\0\0\0\0\0\0", 8},
    };
    enum { N = sizeof(names) / sizeof(names[0]) };
    struct goblin_zpair p[2 * N];
    double want[N], s;

    for (size_t i = 0; i < N; i++) {
        p[i] = (struct goblin_zpair){(double)i, names[i]};
        want[i] = (double)i;
    }
    assert_int_equal(goblin_zset_add_pairs(st, S("z"), 0, p, 6), 6);
    for (size_t round = 0; round < 2; round++) {
        /* Round 0: N pairs; round 1: 2N (each member twice, the second
         * score winning). Existing members keep or change their score. */
        size_t n = round == 0 ? N : 2 * N;

        for (size_t i = 0; i < n; i++) {
            size_t m = i % N;
            double score = m % 3 == 0 ? want[m] : 100.0 * (double)round + i;

            p[i] = (struct goblin_zpair){score, names[m]};
        }
        for (size_t i = 0; i < n; i++)
            want[i % N] = p[i].score;
        /* The first 6 were there; the rest are added in round 0. */
        assert_int_equal(goblin_zset_add_pairs(st, S("z"), 0, p, n),
                         round == 0 ? N - 6 : 0);
        assert_string_equal(encoding(st, "z"), "listpack");
        check_obj(st, "z");
        assert_int_equal(goblin_zset_card(st, S("z")), N);
        for (size_t i = 0; i < N; i++) {
            assert_int_equal(goblin_zset_score(st, S("z"), names[i], &s), 1);
            assert_true(s == want[i]);
        }
    }
}

static bool bad_combo(unsigned f)
{
    bool nx = f & GOBLIN_ZADD_NX, xx = f & GOBLIN_ZADD_XX;
    bool gt = f & GOBLIN_ZADD_GT, lt = f & GOBLIN_ZADD_LT;

    return (nx && xx) || (gt && nx) || (lt && nx) || (gt && lt);
}

/* One pair against {a: 5}: what Redis replies and a's score after. */
static void zadd_case(goblin_store *st, unsigned f, const char *m, double s,
                      int64_t want_reply, double want_score)
{
    struct goblin_zpair p = {s, slice_of(m, strlen(m))};
    double got;

    goblin_key_delete(st, S("f"));
    add(st, "f", "a", 5);
    assert_int_equal(goblin_zset_add_pairs(st, S("f"), f, &p, 1),
                     want_reply);
    if (isnan(want_score)) {
        assert_int_equal(goblin_zset_score(st, S("f"), p.member, &got), 0);
    } else {
        assert_int_equal(goblin_zset_score(st, S("f"), p.member, &got), 1);
        assert_true(got == want_score);
    }
}

static void test_zadd_every_flag_combination(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;

    for (unsigned f = 0; f < 32; f++) {
        bool nx = f & GOBLIN_ZADD_NX, xx = f & GOBLIN_ZADD_XX;
        bool gt = f & GOBLIN_ZADD_GT, lt = f & GOBLIN_ZADD_LT;
        int ch = (f & GOBLIN_ZADD_CH) != 0;
        struct goblin_zpair p = {1, S("x")};
        double s;

        if (bad_combo(f)) {
            assert_int_equal(goblin_zset_add_pairs(st, S("f"), f, &p, 1),
                             GOBLIN_ESYNTAX);
            assert_int_equal(goblin_zset_incr(st, S("f"), f, S("x"), 1, &s),
                             GOBLIN_ESYNTAX);
            continue;
        }
        /* absent member: added unless XX (GT and LT do not stop adds) */
        zadd_case(st, f, "n", 1, xx ? 0 : 1, xx ? NAN : 1);
        /* greater score */
        zadd_case(st, f, "a", 7, (!nx && !lt) ? ch : 0,
                  (!nx && !lt) ? 7 : 5);
        /* lesser score */
        zadd_case(st, f, "a", 3, (!nx && !gt) ? ch : 0,
                  (!nx && !gt) ? 3 : 5);
        /* same score: never a change */
        zadd_case(st, f, "a", 5, 0, 5);
    }
}

static void zincr_case(goblin_store *st, unsigned f, const char *m,
                       double incr, int want, double want_score)
{
    double got = -12345;

    goblin_key_delete(st, S("f"));
    add(st, "f", "a", 5);
    assert_int_equal(goblin_zset_incr(st, S("f"), f, slice_of(m, strlen(m)),
                                      incr, &got), want);
    if (want == 1)
        assert_true(got == want_score);
    else
        assert_true(got == -12345);
}

static void test_zadd_incr_and_its_nil_cases(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;

    for (unsigned f = 0; f < 32; f++) {
        bool nx = f & GOBLIN_ZADD_NX, xx = f & GOBLIN_ZADD_XX;
        bool gt = f & GOBLIN_ZADD_GT, lt = f & GOBLIN_ZADD_LT;

        if (bad_combo(f))
            continue;
        zincr_case(st, f, "n", 2, xx ? 0 : 1, 2);
        zincr_case(st, f, "a", 2, (!nx && !lt) ? 1 : 0, 7);
        zincr_case(st, f, "a", -2, (!nx && !gt) ? 1 : 0, 3);
        zincr_case(st, f, "a", 0, (!nx && !gt && !lt) ? 1 : 0, 5);
    }
}

static void test_zincrby_nan_result_is_an_error(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    double s = 0;

    add(st, "z", "a", INFINITY);
    assert_int_equal(goblin_zset_incr(st, S("z"), 0, S("a"), -INFINITY, &s),
                     GOBLIN_ENAN);
    assert_int_equal(goblin_zset_score(st, S("z"), S("a"), &s), 1);
    assert_true(s == INFINITY);
    assert_int_equal(goblin_zset_incr(st, S("z"), 0, S("a"), NAN, &s),
                     GOBLIN_EINVAL);
    assert_int_equal(goblin_zset_incr(st, S("z"), 0, S("a"), 1, &s), 1);
    assert_true(s == INFINITY);
    assert_int_equal(goblin_zset_incr(st, S("new"), GOBLIN_ZADD_XX, S("a"), 1,
                                      &s), 0);
    assert_int_equal(goblin_key_exists(st, S("new")), 0);
}

static void test_zadd_xx_on_missing_key_creates_nothing(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_zpair p = {1, S("a")};

    assert_int_equal(goblin_zset_add_pairs(st, S("z"), GOBLIN_ZADD_XX, &p, 1),
                     0);
    assert_int_equal(goblin_key_exists(st, S("z")), 0);
}

static void test_changes_bump_dirty_and_no_ops_do_not(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    uint64_t d;
    double s;

    add(st, "z", "a", 1);
    d = goblin_store_dirty(st);
    add(st, "z", "a", 1);
    assert_int_equal(goblin_store_dirty(st), d);
    assert_int_equal(goblin_zset_incr(st, S("z"), 0, S("a"), 0, &s), 1);
    assert_int_equal(goblin_store_dirty(st), d);
    add(st, "z", "a", 2);
    assert_true(goblin_store_dirty(st) > d);
}

/* ---- missing keys and wrong types ---- */

static int never(void *ctx, struct goblin_slice m, double s)
{
    (void)ctx;
    (void)m;
    (void)s;
    fail();
    return 0;
}

static void test_missing_key_is_an_empty_set(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_zrange r = by_rank(0, -1, 0);
    struct goblin_slice ms[2] = {S("a"), S("b")};
    double s = 7, sc[2];
    int64_t rank = 7;
    uint64_t next = 9;

    assert_int_equal(goblin_zset_score(st, S("no"), S("a"), &s), 0);
    assert_true(s == 7);
    assert_int_equal(goblin_zset_mscore(st, S("no"), ms, 2, sc), 0);
    assert_true(isnan(sc[0]) && isnan(sc[1]));
    assert_int_equal(goblin_zset_card(st, S("no")), 0);
    assert_int_equal(goblin_zset_rank(st, S("no"), S("a"), 0, &rank, &s), 0);
    assert_int_equal(rank, 7);
    assert_int_equal(range(st, "no", &r), 0);
    r = by_score(-INFINITY, 0, INFINITY, 0);
    assert_int_equal(goblin_zset_count(st, S("no"), &r), 0);
    assert_int_equal(goblin_zset_rem(st, S("no"), ms, 2), 0);
    assert_int_equal(goblin_zset_rem_range(st, S("no"), &r), 0);
    assert_int_equal(goblin_zset_pop(st, S("no"), 0, 3, never, NULL), 0);
    assert_int_equal(goblin_zset_randmember(st, S("no"), 3, never, NULL), 0);
    assert_int_equal(goblin_zset_scan(st, S("no"), 0, 10, S(""), never, NULL,
                                      &next), 0);
    assert_int_equal(next, 0);
    assert_int_equal(goblin_key_exists(st, S("no")), 0);
}

static void test_wrong_type_everywhere(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_zrange r = by_rank(0, -1, 0);
    struct goblin_zset_iter it;
    struct goblin_slice ms[1] = {S("a")}, keys[2] = {S("z"), S("s")};
    struct goblin_zpair p = {1, S("a")};
    double s, sc[1];
    int64_t rank;
    uint64_t next;
    const int W = GOBLIN_EWRONGTYPE;

    add(st, "z", "a", 1);
    assert_true(goblin_str_set(st, S("s"), S("v"), NULL, NULL) >= 0);
    assert_int_equal(goblin_zset_add(st, S("s"), S("a"), 1), W);
    assert_int_equal(goblin_zset_add_pairs(st, S("s"), 0, &p, 1), W);
    assert_int_equal(goblin_zset_incr(st, S("s"), 0, S("a"), 1, &s), W);
    assert_int_equal(goblin_zset_score(st, S("s"), S("a"), &s), W);
    assert_int_equal(goblin_zset_mscore(st, S("s"), ms, 1, sc), W);
    assert_int_equal(goblin_zset_card(st, S("s")), W);
    assert_int_equal(goblin_zset_rank(st, S("s"), S("a"), 0, &rank, &s), W);
    assert_int_equal(goblin_zset_range(st, S("s"), &r, &it), W);
    assert_int_equal(goblin_zset_rem(st, S("s"), ms, 1), W);
    assert_int_equal(goblin_zset_rem_range(st, S("s"), &r), W);
    assert_int_equal(goblin_zset_pop(st, S("s"), 0, 1, never, NULL), W);
    assert_int_equal(goblin_zset_randmember(st, S("s"), 1, never, NULL), W);
    assert_int_equal(goblin_zset_scan(st, S("s"), 0, 1, S(""), never, NULL,
                                      &next), W);
    assert_int_equal(goblin_zset_combine(st, GOBLIN_ZSET_UNION, keys, 2, NULL,
                                         GOBLIN_ZAGG_SUM, never, NULL), W);
    assert_int_equal(goblin_zset_combine_store(st, S("d"), GOBLIN_ZSET_INTER,
                                               keys, 2, NULL,
                                               GOBLIN_ZAGG_SUM), W);
    assert_int_equal(goblin_zset_intercard(st, keys, 2, 0), W);
    assert_int_equal(goblin_zset_range_store(st, S("d"), S("s"), &r), W);
    r = by_score(0, 0, 1, 0);
    assert_int_equal(goblin_zset_count(st, S("s"), &r), W);
    assert_int_equal(goblin_key_exists(st, S("d")), 0);
    assert_int_equal(goblin_zset_card(st, S("z")), 1);
}

/* ---- reads ---- */

static void test_zmscore_and_zrank_with_score(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_slice ms[3] = {S("c"), S("nope"), S("a")};
    double sc[3], s;
    int64_t rank;

    abcde(st);
    assert_int_equal(goblin_zset_mscore(st, S("z"), ms, 3, sc), 2);
    assert_true(sc[0] == 3 && isnan(sc[1]) && sc[2] == 1);
    assert_int_equal(goblin_zset_rank(st, S("z"), S("b"), 0, &rank, &s), 1);
    assert_int_equal(rank, 1);
    assert_true(s == 2);
    assert_int_equal(goblin_zset_rank(st, S("z"), S("b"), 1, &rank, NULL),
                     1);
    assert_int_equal(rank, 3);
    assert_int_equal(goblin_zset_rank(st, S("z"), S("x"), 1, &rank, NULL),
                     0);
}

static void test_ties_order_by_member_bytes(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_zrange r = by_rank(0, -1, 0);

    add(st, "z", "b", 0);
    add(st, "z", "ab", 0);
    add(st, "z", "a", 0);
    add(st, "z", "", 0);
    add(st, "z", "B", 0);
    add(st, "z", "\xff", 0);
    add(st, "z", "zz", -1);
    assert_int_equal(goblin_zset_add(st, S("z"), S("a\0"), 0), 1);
    range(st, "z", &r);
    assert_int_equal(g.n, 8);
    assert_int_equal(g.len[0], 2);
    assert_int_equal(g.len[1], 0); /* "" sorts first among the zeros */
    assert_memory_equal(g.m[2], "B", 1);
    assert_memory_equal(g.m[3], "a", 1);
    /* then a, a\0, ab, b, \xff */
    r = by_score(0, 0, 0, 0);
    range(st, "z", &r);
    assert_int_equal(g.n, 7);
    assert_int_equal(g.len[0], 0);
    assert_int_equal(g.len[3], 2);
    assert_memory_equal(g.m[3], "a\0", 2);
    assert_memory_equal(g.m[4], "ab", 2);
    assert_memory_equal(g.m[6], "\xff", 1);
}

static void test_signed_zero_matches_redis(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    double s;
    char m[16];

    /* compact: stored as 0, like a listpack */
    add(st, "z", "a", -0.0);
    assert_int_equal(goblin_zset_score(st, S("z"), S("a"), &s), 1);
    assert_true(s == 0 && !signbit(s));
    /* -0 and 0 are equal: no update, no change */
    assert_int_equal(goblin_zset_add_pairs(st, S("z"), GOBLIN_ZADD_CH,
                                           &(struct goblin_zpair){-0.0,
                                                                  S("a")},
                                           1), 0);
    /* full: kept as given */
    for (int i = 0; i < 200; i++) {
        snprintf(m, sizeof(m), "m%d", i);
        add(st, "z", m, i);
    }
    assert_string_equal(encoding(st, "z"), "skiplist");
    add(st, "z", "neg", -0.0);
    assert_int_equal(goblin_zset_score(st, S("z"), S("neg"), &s), 1);
    assert_true(s == 0 && signbit(s));
    add(st, "z", "neg", 0.0);
    assert_int_equal(goblin_zset_score(st, S("z"), S("neg"), &s), 1);
    assert_true(signbit(s));
    check_obj(st, "z");
}

static void test_empty_member_with_null_pointer(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_slice none = {NULL, 0};
    int64_t rank;
    double s;

    for (int form = 0; form < 2; form++) {
        const char *key = form ? "full" : "small";
        struct goblin_slice k = {key, strlen(key)};
        char m[16];

        for (int i = 0; i < (form ? 200 : 5); i++) {
            snprintf(m, sizeof(m), "m%d", i);
            add(st, key, m, 0);
        }
        assert_int_equal(goblin_zset_add(st, k, none, 0), 1);
        assert_int_equal(goblin_zset_add(st, k, none, 0.5), 0);
        assert_int_equal(goblin_zset_add(st, k, none, -1), 0);
        assert_int_equal(goblin_zset_rank(st, k, none, 0, &rank, &s), 1);
        assert_int_equal(rank, 0);
        assert_true(s == -1);
        assert_int_equal(goblin_zset_rem(st, k, &none, 1), 1);
        check_obj(st, key);
    }
}

/* ---- ranges ---- */

static void test_range_by_rank_with_negative_indexes_and_rev(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_zrange r;

    abcde(st);
    r = by_rank(0, -1, 0);
    range(st, "z", &r);
    expect("a b c d e");
    r = by_rank(-2, -1, 0);
    range(st, "z", &r);
    expect("d e");
    r = by_rank(1, 100, 0);
    range(st, "z", &r);
    expect("b c d e");
    r = by_rank(-100, 1, 0);
    range(st, "z", &r);
    expect("a b");
    r = by_rank(3, 1, 0);
    assert_int_equal(range(st, "z", &r), 0);
    r = by_rank(5, 10, 0);
    assert_int_equal(range(st, "z", &r), 0);
    r = by_rank(0, 1, 1);
    range(st, "z", &r);
    expect("e d");
    r = by_rank(-2, -1, 1);
    range(st, "z", &r);
    expect("b a");
    r = by_rank(0, -1, 1);
    range(st, "z", &r);
    expect("e d c b a");
    r = by_rank(-1, -1, 0);
    range(st, "z", &r);
    expect("e");
}

static void test_range_by_score_bounds_and_infinities(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_zrange r;

    abcde(st);
    add(st, "z", "lo", -INFINITY);
    add(st, "z", "hi", INFINITY);
    r = by_score(-INFINITY, 0, INFINITY, 0);
    range(st, "z", &r);
    expect("lo a b c d e hi");
    r = by_score(-INFINITY, 1, INFINITY, 1);
    range(st, "z", &r);
    expect("a b c d e");
    r = by_score(2, 0, 4, 0);
    range(st, "z", &r);
    expect("b c d");
    r = by_score(2, 1, 4, 0);
    range(st, "z", &r);
    expect("c d");
    r = by_score(2, 0, 4, 1);
    range(st, "z", &r);
    expect("b c");
    r = by_score(2, 1, 4, 1);
    range(st, "z", &r);
    expect("c");
    r = by_score(3, 1, 3, 0);
    assert_int_equal(range(st, "z", &r), 0);
    r = by_score(4, 0, 2, 0);
    assert_int_equal(range(st, "z", &r), 0);
    r = by_score(2.5, 0, 3.5, 0);
    range(st, "z", &r);
    expect("c");
    r = by_score(2, 0, 4, 0);
    r.rev = 1;
    range(st, "z", &r);
    expect("d c b");
    r = by_score(2, 0, 4, 0);
    assert_int_equal(goblin_zset_count(st, S("z"), &r), 3);
    r = by_score(NAN, 0, 4, 0);
    assert_int_equal(goblin_zset_count(st, S("z"), &r), GOBLIN_EINVAL);
    r = by_rank(0, 1, 0);
    assert_int_equal(goblin_zset_count(st, S("z"), &r), GOBLIN_EINVAL);
    r.by = (enum goblin_zrange_by)7;
    assert_int_equal(range(st, "z", &r), GOBLIN_EINVAL);
}

static void test_range_limit_offsets(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_zrange r = by_score(-INFINITY, 0, INFINITY, 0);

    abcde(st);
    r.limit = 1;
    r.offset = 1;
    r.count = 2;
    range(st, "z", &r);
    expect("b c");
    r.count = -1;
    range(st, "z", &r);
    expect("b c d e");
    r.count = -7;
    range(st, "z", &r);
    expect("b c d e");
    r.count = 0;
    assert_int_equal(range(st, "z", &r), 0);
    r.count = 100;
    r.offset = 5;
    assert_int_equal(range(st, "z", &r), 0);
    r.offset = 4;
    range(st, "z", &r);
    expect("e");
    r.offset = -1;
    assert_int_equal(range(st, "z", &r), 0);
    r.offset = 1;
    r.count = 2;
    r.rev = 1;
    range(st, "z", &r);
    expect("d c");
    r = by_lex("-", "+");
    r.limit = 1;
    r.offset = 3;
    r.count = 5;
    range(st, "z", &r);
    expect("d e");
}

static void test_range_by_lex_with_binary_members(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_zrange r;
    struct goblin_lex_bound nul = {GOBLIN_LEX_INCLUSIVE, {"a\0", 2}};

    add(st, "l", "a", 0);
    add(st, "l", "ab", 0);
    add(st, "l", "b", 0);
    add(st, "l", "", 0);
    assert_int_equal(goblin_zset_add(st, S("l"), S("a\0"), 0), 1);
    assert_int_equal(goblin_zset_add(st, S("l"), S("a\0z"), 0), 1);
    r = by_lex("-", "+");
    assert_int_equal(range(st, "l", &r), 6);
    assert_int_equal(g.len[0], 0);
    r = by_lex("[a", "(b");
    assert_int_equal(range(st, "l", &r), 4);
    assert_int_equal(g.len[1], 2);
    assert_int_equal(g.len[2], 3);
    r = by_lex("(a", "+");
    assert_int_equal(range(st, "l", &r), 4);
    r.lmin = nul;
    assert_int_equal(range(st, "l", &r), 4);
    r.lmin.kind = GOBLIN_LEX_EXCLUSIVE;
    assert_int_equal(range(st, "l", &r), 3);
    r = by_lex("[b", "[a");
    assert_int_equal(range(st, "l", &r), 0);
    r = by_lex("+", "-");
    assert_int_equal(range(st, "l", &r), 0);
    r = by_lex("[ab", "[b");
    r.rev = 1;
    range(st, "l", &r);
    expect("b ab");
    r = by_lex("-", "(ab");
    assert_int_equal(goblin_zset_count(st, S("l"), &r), 4);
}

static void test_range_walks_agree_in_both_forms(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct got small;
    char m[16];

    for (int form = 0; form < 2; form++) {
        const char *key = form ? "full" : "small";
        int n = form ? 300 : 100;

        for (int i = 0; i < n; i++) {
            snprintf(m, sizeof(m), "m%03d", i);
            add(st, key, m, i / 3);
        }
    }
    assert_string_equal(encoding(st, "small"), "listpack");
    assert_string_equal(encoding(st, "full"), "skiplist");
    for (int k = 0; k < 40; k++) {
        struct goblin_zrange r;

        switch (k % 4) {
        case 0: r = by_rank(k - 20, k, k & 1); break;
        case 1: r = by_score(k % 7, k & 2, k % 13 + 3, k & 8); break;
        case 2: r = by_lex("[m010", "(m05"); break;
        default: r = by_score(-INFINITY, 0, 30, 0); break;
        }
        r.rev = k & 1;
        if (r.by != GOBLIN_ZRANGE_BY_RANK) {
            r.limit = k % 3 == 0;
            r.offset = k % 5;
            r.count = k % 11 - 2;
        }
        range(st, "small", &r);
        small = g;
        range(st, "full", &r);
        /* the first 100 members are shared, so ranges within them match */
        if (r.by != GOBLIN_ZRANGE_BY_RANK && k % 4 != 3 && k % 4 != 0) {
            assert_int_equal(small.n, g.n);
            for (size_t i = 0; i < g.n; i++) {
                assert_int_equal(small.len[i], g.len[i]);
                assert_memory_equal(small.m[i], g.m[i], g.len[i]);
                assert_true(small.s[i] == g.s[i]);
            }
        }
    }
}

/* ---- removal ---- */

static void test_zrem_counts_repeats_once_and_drops_empty_key(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_slice ms[4] = {S("a"), S("a"), S("x"), S("b")};

    add(st, "z", "a", 1);
    add(st, "z", "b", 2);
    assert_int_equal(goblin_zset_rem(st, S("z"), ms, 3), 1);
    assert_int_equal(goblin_zset_rem(st, S("z"), ms, 4), 1);
    assert_int_equal(goblin_key_exists(st, S("z")), 0);
}

static void test_zremrange_by_rank_score_lex(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_zrange r;

    abcde(st);
    r = by_rank(1, -2, 0);
    assert_int_equal(goblin_zset_rem_range(st, S("z"), &r), 3);
    r = by_rank(0, -1, 0);
    range(st, "z", &r);
    expect("a e");
    r = by_rank(5, 6, 0);
    assert_int_equal(goblin_zset_rem_range(st, S("z"), &r), 0);
    abcde(st);
    r = by_score(2, 1, INFINITY, 0);
    assert_int_equal(goblin_zset_rem_range(st, S("z"), &r), 3);
    r = by_rank(0, -1, 0);
    range(st, "z", &r);
    expect("a b");
    r = by_lex("[a", "[a");
    assert_int_equal(goblin_zset_rem_range(st, S("z"), &r), 1);
    r = by_rank(0, 0, 1);
    assert_int_equal(goblin_zset_rem_range(st, S("z"), &r), GOBLIN_EINVAL);
    r = by_lex("-", "+");
    assert_int_equal(goblin_zset_rem_range(st, S("z"), &r), 1);
    assert_int_equal(goblin_key_exists(st, S("z")), 0);
}

static int stop_at_two(void *ctx, struct goblin_slice m, double s)
{
    (void)m;
    (void)s;
    return ++*(int *)ctx == 2 ? 42 : 0;
}

static void test_zpop_min_max_and_counts(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    int calls = 0;

    abcde(st);
    g.n = 0;
    assert_int_equal(goblin_zset_pop(st, S("z"), 0, 2, collect, &g), 2);
    expect("a b");
    g.n = 0;
    assert_int_equal(goblin_zset_pop(st, S("z"), 1, 2, collect, &g), 2);
    expect("e d");
    assert_int_equal(goblin_zset_pop(st, S("z"), 1, 0, never, NULL), 0);
    assert_int_equal(goblin_zset_pop(st, S("z"), 1, -1, never, NULL),
                     GOBLIN_EINVAL);
    add(st, "z", "x", 9);
    assert_int_equal(goblin_zset_pop(st, S("z"), 0, 5, stop_at_two, &calls),
                     42);
    assert_int_equal(goblin_zset_card(st, S("z")), 2);
    g.n = 0;
    assert_int_equal(goblin_zset_pop(st, S("z"), 0, 5, collect, &g), 2);
    expect("c x");
    assert_int_equal(goblin_key_exists(st, S("z")), 0);
}

/* ---- forms ---- */

static void fill(goblin_store *st, const char *key, int n)
{
    char m[16];

    for (int i = 0; i < n; i++) {
        snprintf(m, sizeof(m), "m%d", i);
        add(st, key, m, i);
    }
}

static void test_compact_holds_128_members_and_129_converts(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;

    fill(st, "z", 128);
    assert_string_equal(encoding(st, "z"), "listpack");
    add(st, "z", "m127", 1000);
    assert_string_equal(encoding(st, "z"), "listpack");
    add(st, "z", "one-more", 5);
    assert_string_equal(encoding(st, "z"), "skiplist");
    assert_int_equal(goblin_zset_card(st, S("z")), 129);
    check_obj(st, "z");
}

static void test_compact_holds_64_byte_members_and_65_converts(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    char m[80];

    memset(m, 'x', sizeof(m));
    assert_int_equal(goblin_zset_add(st, S("z"), slice_of(m, 64), 1), 1);
    assert_string_equal(encoding(st, "z"), "listpack");
    assert_int_equal(goblin_zset_add(st, S("z"), slice_of(m, 65), 1), 1);
    assert_string_equal(encoding(st, "z"), "skiplist");
    check_obj(st, "z");
    /* small again, but a long member keeps it full */
    assert_int_equal(goblin_zset_add(st, S("y"), slice_of(m, 65), 1), 1);
    assert_string_equal(encoding(st, "y"), "skiplist");
}

static void test_full_set_turns_compact_below_64(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    char m[16];

    fill(st, "z", 200);
    for (int i = 199; i >= 65; i--) {
        snprintf(m, sizeof(m), "m%d", i);
        assert_int_equal(goblin_zset_rem(st, S("z"),
                                         &(struct goblin_slice){m,
                                                                strlen(m)},
                                         1), 1);
        assert_string_equal(encoding(st, "z"), "skiplist");
    }
    assert_int_equal(goblin_zset_rem(st, S("z"), &(struct goblin_slice)
                                     {"m64", 3}, 1), 1);
    /* Compact inside, but Redis never converts back: it still reports
     * (and behaves as) a skiplist. */
    assert_string_equal(encoding(st, "z"), "skiplist");
    check_obj(st, "z");
    assert_int_equal(goblin_zset_card(st, S("z")), 64);
    /* and it grows back past 128 */
    fill(st, "z", 128);
    assert_string_equal(encoding(st, "z"), "skiplist");
    add(st, "z", "x", 1);
    assert_string_equal(encoding(st, "z"), "skiplist");
}

/* The sign of zero as redis-server 7.0.15 keeps it: a listpack stores
 * -0 as the integer 0, a skiplist keeps -0 -- also once it is small
 * again, since Redis never converts a skiplist back. */
static void test_negative_zero_follows_the_redis_encoding(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    double s = 1;

    add(st, "small", "m", -0.0);
    assert_int_equal(goblin_zset_score(st, S("small"), S("m"), &s), 1);
    assert_true(s == 0 && !signbit(s));
    fill(st, "big", 200);
    add(st, "big", "a", -0.0);
    add(st, "big", "z", 0.0);
    assert_int_equal(goblin_zset_score(st, S("big"), S("a"), &s), 1);
    assert_true(s == 0 && signbit(s));
    for (int i = 199; i >= 1; i--) {
        char m[16];

        snprintf(m, sizeof(m), "m%d", i);
        goblin_zset_rem(st, S("big"),
                        &(struct goblin_slice){m, strlen(m)}, 1);
    }
    assert_int_equal(goblin_zset_card(st, S("big")), 3);
    assert_string_equal(encoding(st, "big"), "skiplist");
    check_obj(st, "big");
    assert_int_equal(goblin_zset_score(st, S("big"), S("a"), &s), 1);
    assert_true(s == 0 && signbit(s));
    assert_int_equal(goblin_zset_score(st, S("big"), S("z"), &s), 1);
    assert_true(s == 0 && !signbit(s));
    add(st, "big", "n", -0.0); /* a new one keeps its sign too */
    add(st, "big", "z", -0.0); /* equal to 0: Redis changes nothing */
    assert_int_equal(goblin_zset_score(st, S("big"), S("z"), &s), 1);
    assert_true(s == 0 && !signbit(s));
    add(st, "big", "z", 5);
    add(st, "big", "z", -0.0); /* an update from 5 keeps the sign */
    assert_int_equal(goblin_zset_score(st, S("big"), S("n"), &s), 1);
    assert_true(s == 0 && signbit(s));
    assert_int_equal(goblin_zset_score(st, S("big"), S("z"), &s), 1);
    assert_true(s == 0 && signbit(s));
    check_obj(st, "big");
}

static void test_batch_past_128_converts_in_one_call(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    static struct goblin_zpair p[300];
    static char names[300][16];

    for (int i = 0; i < 300; i++) {
        snprintf(names[i], sizeof(names[i]), "k%d", i);
        p[i].member = slice_of(names[i], strlen(names[i]));
        p[i].score = 300 - i;
    }
    add(st, "z", "k5", 1);
    assert_int_equal(goblin_zset_add_pairs(st, S("z"), GOBLIN_ZADD_CH, p,
                                           300), 300);
    assert_string_equal(encoding(st, "z"), "skiplist");
    assert_int_equal(goblin_zset_card(st, S("z")), 300);
    check_obj(st, "z");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_zadd_adds_and_updates),
        FIXTURE_TEST(test_zadd_nan_is_rejected_and_changes_nothing),
        FIXTURE_TEST(test_zadd_pairs_apply_left_to_right),
        FIXTURE_TEST(test_zadd_many_pairs_of_members_sharing_a_prefix),
        FIXTURE_TEST(test_zadd_every_flag_combination),
        FIXTURE_TEST(test_zadd_incr_and_its_nil_cases),
        FIXTURE_TEST(test_zincrby_nan_result_is_an_error),
        FIXTURE_TEST(test_zadd_xx_on_missing_key_creates_nothing),
        FIXTURE_TEST(test_changes_bump_dirty_and_no_ops_do_not),
        FIXTURE_TEST(test_missing_key_is_an_empty_set),
        FIXTURE_TEST(test_wrong_type_everywhere),
        FIXTURE_TEST(test_zmscore_and_zrank_with_score),
        FIXTURE_TEST(test_ties_order_by_member_bytes),
        FIXTURE_TEST(test_signed_zero_matches_redis),
        FIXTURE_TEST(test_empty_member_with_null_pointer),
        FIXTURE_TEST(test_range_by_rank_with_negative_indexes_and_rev),
        FIXTURE_TEST(test_range_by_score_bounds_and_infinities),
        FIXTURE_TEST(test_range_limit_offsets),
        FIXTURE_TEST(test_range_by_lex_with_binary_members),
        FIXTURE_TEST(test_range_walks_agree_in_both_forms),
        FIXTURE_TEST(test_zrem_counts_repeats_once_and_drops_empty_key),
        FIXTURE_TEST(test_zremrange_by_rank_score_lex),
        FIXTURE_TEST(test_zpop_min_max_and_counts),
        FIXTURE_TEST(test_compact_holds_128_members_and_129_converts),
        FIXTURE_TEST(test_compact_holds_64_byte_members_and_65_converts),
        FIXTURE_TEST(test_full_set_turns_compact_below_64),
        FIXTURE_TEST(test_negative_zero_follows_the_redis_encoding),
        FIXTURE_TEST(test_batch_past_128_converts_in_one_call),
    };

    return cmocka_run_group_tests_name("zset", tests, NULL, NULL);
}
