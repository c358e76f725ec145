/* test_set.c - sets: the forms and their conversions (OBJECT ENCODING as
 * Redis 7.0 reports it), a seeded random walk of set commands checked
 * against a plain model after every step (with the store's invariants),
 * the SSCAN guarantee under writes between pages, SRANDMEMBER's and
 * SPOP's count rules and spread, and the combining commands. */
#include <stdio.h>

#include "testutil.h"
#include "store/keyspace.h"
#include "store/set.h"
#include "store/store.h"

/* ---- a model: members as NUL-free strings, unsorted ---- */

struct mset {
    char **m;
    size_t n, cap;
    bool hashtable; /* what OBJECT ENCODING must say */
};

static long m_find(const struct mset *s, struct goblin_slice v)
{
    for (size_t i = 0; i < s->n; i++) {
        if (strlen(s->m[i]) == v.len && memcmp(s->m[i], v.ptr, v.len) == 0)
            return (long)i;
    }
    return -1;
}

static bool is_int(struct goblin_slice v)
{
    int64_t x;

    return goblin_int64_parse(v.ptr, v.len, &x) == 0;
}

static int m_add(struct mset *s, struct goblin_slice v)
{
    if (m_find(s, v) >= 0)
        return 0;
    if (s->n == s->cap) {
        s->cap = s->cap * 2 + 16;
        s->m = realloc(s->m, s->cap * sizeof(*s->m));
        assert_non_null(s->m);
    }
    s->m[s->n] = strndup(v.ptr, v.len);
    s->n++;
    if (!is_int(v) || s->n > GOBLIN__SET_INTSET_MAX)
        s->hashtable = true;
    return 1;
}

static int m_rem(struct mset *s, struct goblin_slice v)
{
    long i = m_find(s, v);

    if (i < 0)
        return 0;
    free(s->m[i]);
    s->m[i] = s->m[--s->n];
    if (s->n == 0)
        s->hashtable = false;
    return 1;
}

static void m_free(struct mset *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->m[i]);
    free(s->m);
    memset(s, 0, sizeof(*s));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

struct got {
    char **m;
    size_t n, cap;
};

static int got_visit(void *ctx, struct goblin_slice v)
{
    struct got *g = ctx;

    if (g->n == g->cap) {
        g->cap = g->cap * 2 + 16;
        g->m = realloc(g->m, g->cap * sizeof(*g->m));
        assert_non_null(g->m);
    }
    g->m[g->n++] = strndup(v.ptr, v.len);
    return 0;
}

static void got_free(struct got *g)
{
    for (size_t i = 0; i < g->n; i++)
        free(g->m[i]);
    free(g->m);
    memset(g, 0, sizeof(*g));
}

static const char *encoding(goblin_store *st, struct goblin_slice key)
{
    const char *e = "none";

    goblin_key_encoding(st, key, &e);
    return e;
}

static void check_key(goblin_store *st, struct goblin_slice key,
                      struct mset *s)
{
    struct got g = {0};

    assert_int_equal(goblin_set_card(st, key), (int64_t)s->n);
    assert_int_equal(goblin_set_foreach(st, key, got_visit, &g),
                     (int64_t)s->n);
    if (s->n != 0) {
        qsort(g.m, g.n, sizeof(*g.m), cmp_str);
        qsort(s->m, s->n, sizeof(*s->m), cmp_str);
    }
    for (size_t i = 0; i < s->n; i++)
        assert_string_equal(g.m[i], s->m[i]);
    if (s->n == 0)
        assert_int_equal(goblin_key_type(st, key), GOBLIN_TYPE_NONE);
    else
        assert_string_equal(encoding(st, key),
                            s->hashtable ? "hashtable" : "intset");
    assert_int_equal(goblin__store_check(st), 0);
    got_free(&g);
}

/* ---- forms ---- */

static void test_forms_and_encodings(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    struct goblin_slice m[600];
    char buf[600][24];

    assert_int_equal(goblin_set_add(st, S("i"), (struct goblin_slice[]){
                                        S("3"), S("1"), S("2"), S("1")}, 4),
                     3);
    assert_string_equal(encoding(st, S("i")), "intset");
    /* "01", "+1" and "-0" are not integers to string2ll. */
    assert_int_equal(goblin_set_add(st, S("j"), &S("01"), 1), 1);
    assert_string_equal(encoding(st, S("j")), "hashtable");
    for (int k = 0; k < 600; k++) {
        m[k].ptr = buf[k];
        m[k].len = (size_t)snprintf(buf[k], 24, "%d", k * 1000003);
    }
    assert_int_equal(goblin_set_add(st, S("i"), m, 512 - 3), 512 - 3);
    assert_string_equal(encoding(st, S("i")), "intset");
    assert_int_equal(goblin_set_add(st, S("i"), m + 509, 1), 1);
    assert_string_equal(encoding(st, S("i")), "hashtable"); /* big ints */
    assert_int_equal(goblin_set_ismember(st, S("i"), S("2")), 1);
    assert_int_equal(goblin_set_ismember(st, S("i"), S("02")), 0);
    /* A 64-bit value widens every chunk. */
    assert_int_equal(goblin_set_add(st, S("i"), &S("-9223372036854775808"),
                                    1),
                     1);
    assert_int_equal(goblin_set_ismember(st, S("i"),
                                         S("-9223372036854775808")),
                     1);
    assert_int_equal(goblin__store_check(st), 0);
    /* A string turns the big integer set into the full form. */
    assert_int_equal(goblin_set_add(st, S("i"), &S("x"), 1), 1);
    assert_int_equal(goblin_set_card(st, S("i")), 515);
    assert_int_equal(goblin_set_ismember(st, S("i"), S("2")), 1);
    assert_int_equal(goblin__store_check(st), 0);
    assert_int_equal(goblin_set_add(st, S("z"), &S("x"), 1), 1);
    assert_int_equal(goblin_set_add(st, S("z"), &S("7"), 1), 1);
    assert_string_equal(encoding(st, S("z")), "hashtable");
    assert_int_equal(goblin_set_rem(st, S("z"), (struct goblin_slice[]){
                                        S("x"), S("7"), S("x")}, 3),
                     2);
    assert_int_equal(goblin_key_type(st, S("z")), GOBLIN_TYPE_NONE);
    assert_int_equal(goblin_str_set(st, S("s"), S("v"), NULL, NULL) >= 0, 1);
    assert_int_equal(goblin_set_add(st, S("s"), &S("a"), 1),
                     GOBLIN_EWRONGTYPE);
    assert_int_equal(goblin_set_card(st, S("s")), GOBLIN_EWRONGTYPE);
}

static int collect_sorted_ints(void *ctx, struct goblin_slice v)
{
    int64_t *prev = ctx, x;

    assert_int_equal(goblin_int64_parse(v.ptr, v.len, &x), 0);
    assert_true(x > *prev);
    *prev = x;
    return 0;
}

static void test_integer_sets_iterate_in_order(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    char buf[24];
    int64_t prev = INT64_MIN;

    for (int k = 0; k < 5000; k++) {
        int64_t v = (int64_t)((uint64_t)k * 2654435761u % 100000) - 50000;
        struct goblin_slice m = slice_of(buf, (size_t)snprintf(buf, 24,
                                                               "%lld",
                                                               (long long)v));

        assert_true(goblin_set_add(st, S("b"), &m, 1) >= 0);
    }
    assert_int_equal(goblin__store_check(st), 0);
    assert_true(goblin_set_foreach(st, S("b"), collect_sorted_ints, &prev) >
                4000);
}

/* ---- a seeded walk against the model ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static size_t below(size_t n)
{
    return (size_t)(rnd() % n);
}

#define NKEYS 3

static struct goblin_slice key_of(size_t k)
{
    static const char *const names[NKEYS] = {"ints", "mixed", "long"};

    return slice_of(names[k], strlen(names[k]));
}

/* Members per key: integers (some 64-bit), mixed, long strings. */
static struct goblin_slice rand_member(size_t k, char *buf)
{
    size_t n;

    if (k == 0 || (k == 1 && below(2) == 0)) {
        long long v = (long long)below(3000) - 1000;

        if (below(50) == 0)
            v *= 100000000000LL;
        n = (size_t)snprintf(buf, 64, "%lld", v);
    } else if (k == 1) {
        n = (size_t)snprintf(buf, 64, "m%zu", below(300));
    } else {
        n = (size_t)snprintf(buf, 128, "%s-%zu",
                             below(10) == 0 ? "a-member-longer-than-the-"
                                              "compact-limit-of-64-bytes-xxxxxxxxxxxxxxxxxxxx"
                                            : "s",
                             below(400));
    }
    return slice_of(buf, n);
}

struct walk {
    goblin_store *st;
    struct mset m[NKEYS];
};

static int pop_visit(void *ctx, struct goblin_slice v)
{
    struct mset *s = ctx;

    assert_int_equal(m_rem(s, v), 1);
    return 0;
}

static void step(struct walk *w, size_t no)
{
    size_t k = below(NKEYS), op = below(100), cnt;
    struct goblin_slice key = key_of(k), ms[8];
    char bufs[8][128];
    int want = 0;

    cnt = 1 + below(8);
    for (size_t i = 0; i < cnt; i++)
        ms[i] = rand_member(k, bufs[i]);
    if (op < 60) {
        for (size_t i = 0; i < cnt; i++)
            want += m_add(&w->m[k], ms[i]);
        int got = goblin_set_add(w->st, key, ms, cnt);
        assert_int_equal(got, want);
    } else if (op < 85) {
        for (size_t i = 0; i < cnt; i++)
            want += m_rem(&w->m[k], ms[i]);
        assert_int_equal(goblin_set_rem(w->st, key, ms, cnt), want);
    } else if (op < 92) {
        uint64_t c = below(4);
        size_t before = w->m[k].n;
        bool ht = w->m[k].hashtable;

        assert_int_equal(goblin_set_pop(w->st, key, c, NULL, pop_visit,
                                        &w->m[k]),
                         (int64_t)(c < before ? c : before));
        if (w->m[k].n != 0)
            w->m[k].hashtable = ht;
    } else if (op < 96) {
        size_t d = (k + 1) % NKEYS;
        bool has = m_find(&w->m[k], ms[0]) >= 0;

        assert_int_equal(goblin_set_move(w->st, key, key_of(d), ms[0]),
                         has ? 1 : 0);
        if (has) {
            bool ht = w->m[k].hashtable;

            m_rem(&w->m[k], ms[0]);
            if (w->m[k].n != 0)
                w->m[k].hashtable = ht;
            m_add(&w->m[d], ms[0]);
        }
    } else {
        for (size_t i = 0; i < cnt; i++)
            assert_int_equal(goblin_set_ismember(w->st, key, ms[i]),
                             m_find(&w->m[k], ms[i]) >= 0);
    }
    if (no % 32 == 0) {
        for (size_t j = 0; j < NKEYS; j++)
            check_key(w->st, key_of(j), &w->m[j]);
    } else {
        assert_int_equal(goblin_set_card(w->st, key), (int64_t)w->m[k].n);
    }
}

static void run_walk(goblin_store *st, uint64_t seed, size_t steps)
{
    struct walk w = {st, {{0}}};

    rng_state = seed;
    for (size_t i = 0; i < steps; i++)
        step(&w, i);
    for (size_t k = 0; k < NKEYS; k++) {
        check_key(st, key_of(k), &w.m[k]);
        m_free(&w.m[k]);
    }
}

static void test_model_walk_seed_1(void **state)
{
    run_walk(((struct fixture *)*state)->st, 1, 6000);
}

static void test_model_walk_seed_2(void **state)
{
    run_walk(((struct fixture *)*state)->st, 0xfeedbeef, 6000);
}

/* ---- SSCAN: a member present for the whole scan is returned ---- */

struct seen {
    char (*m)[64];
    size_t n;
};

static int seen_visit(void *ctx, struct goblin_slice v)
{
    struct seen *s = ctx;

    assert_true(v.len < 64);
    memcpy(s->m[s->n], v.ptr, v.len);
    s->m[s->n++][v.len] = '\0';
    return 0;
}

static bool seen_has(const struct seen *s, const char *m)
{
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->m[i], m) == 0)
            return true;
    }
    return false;
}

/* Scans key while adding and removing other members between pages
 * (adding strings halfway when convert is set); every member of `stable`
 * must come back. */
static void scan_under_writes(goblin_store *st, bool ints, bool convert)
{
    struct seen s = {calloc(200000, 64), 0};
    char buf[64];
    uint64_t cursor = 0;
    int pages = 0;

    assert_non_null(s.m);
    for (int k = 0; k < 3000; k++) {
        struct goblin_slice m = slice_of(buf, (size_t)snprintf(
            buf, 64, ints ? "%d" : "s%d", k * 2));

        assert_int_equal(goblin_set_add(st, S("sc"), &m, 1), 1);
    }
    do {
        assert_true(goblin_set_scan(st, S("sc"), cursor, 7,
                                    (struct goblin_slice){NULL, 0},
                                    seen_visit, &s, &cursor) >= 0);
        for (int j = 0; j < 5; j++) {
            int v = (int)below(3000) * 2 + 1; /* odd: not stable */
            struct goblin_slice m = slice_of(buf, (size_t)snprintf(
                buf, 64, ints ? "%d" : "s%d", v));

            if (below(2))
                assert_true(goblin_set_add(st, S("sc"), &m, 1) >= 0);
            else
                assert_true(goblin_set_rem(st, S("sc"), &m, 1) >= 0);
        }
        if (convert && pages == 50)
            assert_int_equal(goblin_set_add(st, S("sc"), &S("str"), 1), 1);
        pages++;
    } while (cursor != 0 && pages < 100000);
    assert_int_equal(cursor, 0);
    for (int k = 0; k < 3000; k++) {
        snprintf(buf, 64, ints ? "%d" : "s%d", k * 2);
        assert_true(seen_has(&s, buf));
    }
    free(s.m);
}

static void test_sscan_guarantee_full(void **state)
{
    rng_state = 3;
    scan_under_writes(((struct fixture *)*state)->st, false, false);
}

static void test_sscan_guarantee_bigint(void **state)
{
    rng_state = 4;
    scan_under_writes(((struct fixture *)*state)->st, true, false);
}

static void test_sscan_guarantee_across_conversion(void **state)
{
    rng_state = 5;
    scan_under_writes(((struct fixture *)*state)->st, true, true);
}

/* ---- SRANDMEMBER and SPOP ---- */

struct tally {
    int hits[64];
    int calls;
};

static int tally_visit(void *ctx, struct goblin_slice v)
{
    struct tally *t = ctx;
    int64_t x;

    assert_int_equal(goblin_int64_parse(v.ptr, v.len, &x), 0);
    assert_true(x >= 0 && x < 64);
    t->hits[x]++;
    t->calls++;
    return 0;
}

static void fill(goblin_store *st, struct goblin_slice key, int n,
                 const char *fmt)
{
    char buf[32];

    for (int k = 0; k < n; k++) {
        struct goblin_slice m = slice_of(buf, (size_t)snprintf(buf, 32, fmt,
                                                               k));

        assert_int_equal(goblin_set_add(st, key, &m, 1), 1);
    }
}

static void test_srandmember_counts_and_spread(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct tally t;

    fill(st, S("r"), 40, "%d");
    /* count >= card: every member once. */
    memset(&t, 0, sizeof(t));
    assert_int_equal(goblin_set_random(st, S("r"), 100, NULL, tally_visit,
                                       &t),
                     40);
    for (int k = 0; k < 40; k++)
        assert_int_equal(t.hits[k], 1);
    /* Positive counts are distinct; every member turns up over many
     * draws, none far more often than its share. */
    memset(&t, 0, sizeof(t));
    for (int round = 0; round < 2000; round++) {
        struct tally one;

        memset(&one, 0, sizeof(one));
        assert_int_equal(goblin_set_random(st, S("r"), 5, NULL, tally_visit,
                                           &one),
                         5);
        for (int k = 0; k < 40; k++) {
            assert_true(one.hits[k] <= 1);
            t.hits[k] += one.hits[k];
        }
        memset(&one, 0, sizeof(one));
        assert_int_equal(goblin_set_random(st, S("r"), 30, NULL, tally_visit,
                                           &one),
                         30);
        for (int k = 0; k < 40; k++)
            assert_true(one.hits[k] <= 1);
    }
    for (int k = 0; k < 40; k++)
        assert_true(t.hits[k] > 100 && t.hits[k] < 400); /* mean 250 */
    /* Negative counts repeat and give exactly -count members. */
    memset(&t, 0, sizeof(t));
    assert_int_equal(goblin_set_random(st, S("r"), -1000, NULL, tally_visit,
                                       &t),
                     1000);
    assert_int_equal(t.calls, 1000);
    assert_int_equal(goblin_set_random(st, S("r"), INT64_MIN, NULL,
                                       tally_visit, &t),
                     GOBLIN_ERANGE);
    assert_int_equal(goblin_set_random(st, S("none"), 3, NULL, tally_visit,
                                       &t),
                     0);
}

static void test_spop_removes_what_it_returns(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    static const char *const fmts[] = {"%d", "m%d", "%d"};
    static const int sizes[] = {50, 50, 3000};

    for (int f = 0; f < 3; f++) {
        struct tally t;
        struct goblin_slice key = S("p");
        char buf[32];

        fill(st, key, sizes[f], fmts[f]);
        memset(&t, 0, sizeof(t));
        for (int64_t left = sizes[f]; left > 0;) {
            struct got g = {0};
            int64_t c = goblin_set_pop(st, key, 7, NULL, got_visit, &g);

            assert_int_equal(c, left < 7 ? left : 7);
            for (size_t i = 0; i < g.n; i++)
                assert_int_equal(goblin_set_ismember(st, key,
                                                     slice_of(g.m[i],
                                                              strlen(g.m[i]))),
                                 0);
            left -= c;
            assert_int_equal(goblin_set_card(st, key), left);
            assert_int_equal(goblin__store_check(st), 0);
            got_free(&g);
        }
        assert_int_equal(goblin_key_type(st, key), GOBLIN_TYPE_NONE);
        (void)buf;
    }
}

/* ---- SINTER, SUNION, SDIFF, SINTERCARD, STORE ---- */

static void test_combine(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_slice k2[] = {S("a"), S("b")}, k3[] = {S("a"), S("b"),
                                                          S("none")};
    struct got g = {0};

    assert_int_equal(goblin_set_add(st, S("a"), (struct goblin_slice[]){
                                        S("1"), S("2"), S("3"), S("x")}, 4),
                     4);
    assert_int_equal(goblin_set_add(st, S("b"), (struct goblin_slice[]){
                                        S("2"), S("3"), S("4")}, 3),
                     3);
    assert_int_equal(goblin_set_combine(st, GOBLIN_SET_INTER, k2, 2, NULL,
                                        got_visit, &g),
                     2);
    got_free(&g);
    assert_int_equal(goblin_set_combine(st, GOBLIN_SET_UNION, k3, 3, NULL,
                                        got_visit, &g),
                     5);
    got_free(&g);
    assert_int_equal(goblin_set_combine(st, GOBLIN_SET_DIFF, k2, 2, NULL,
                                        got_visit, &g),
                     2);
    got_free(&g);
    assert_int_equal(goblin_set_combine(st, GOBLIN_SET_INTER, k3, 3, NULL,
                                        got_visit, &g),
                     0);
    assert_int_equal(goblin_set_intercard(st, k2, 2, 0), 2);
    assert_int_equal(goblin_set_intercard(st, k2, 2, 1), 1);
    assert_int_equal(goblin_set_combine_store(st, GOBLIN_SET_INTER, S("d"),
                                              k2, 2),
                     2);
    assert_string_equal(encoding(st, S("d")), "intset");
    assert_int_equal(goblin_set_combine_store(st, GOBLIN_SET_INTER, S("d"),
                                              k3, 3),
                     0);
    assert_int_equal(goblin_key_type(st, S("d")), GOBLIN_TYPE_NONE);
    assert_int_equal(goblin_str_set(st, S("str"), S("v"), NULL, NULL) >= 0, 1);
    struct goblin_slice bad[] = {S("none"), S("str")};
    assert_int_equal(goblin_set_combine(st, GOBLIN_SET_INTER, bad, 2, NULL,
                                        got_visit, &g),
                     GOBLIN_EWRONGTYPE);
    assert_int_equal(goblin_set_move(st, S("none"), S("str"), S("1")), 0);
    assert_int_equal(goblin_set_move(st, S("a"), S("str"), S("1")),
                     GOBLIN_EWRONGTYPE);
    assert_int_equal(goblin_set_move(st, S("a"), S("a"), S("1")), 1);
    assert_int_equal(goblin_set_move(st, S("a"), S("c"), S("x")), 1);
    assert_int_equal(goblin_set_ismember(st, S("c"), S("x")), 1);
    assert_int_equal(goblin_set_ismember(st, S("a"), S("x")), 0);
    assert_int_equal(goblin__store_check(st), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_forms_and_encodings),
        FIXTURE_TEST(test_integer_sets_iterate_in_order),
        FIXTURE_TEST(test_model_walk_seed_1),
        FIXTURE_TEST(test_model_walk_seed_2),
        FIXTURE_TEST(test_sscan_guarantee_full),
        FIXTURE_TEST(test_sscan_guarantee_bigint),
        FIXTURE_TEST(test_sscan_guarantee_across_conversion),
        FIXTURE_TEST(test_srandmember_counts_and_spread),
        FIXTURE_TEST(test_spop_removes_what_it_returns),
        FIXTURE_TEST(test_combine),
    };

    return cmocka_run_group_tests_name("set", tests, NULL, NULL);
}
