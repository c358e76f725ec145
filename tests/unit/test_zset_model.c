/* test_zset_model.c - sorted sets against a reference model: seeded random
 * ZADD / ZINCRBY / ZREM / ZREMRANGEBY* / ZPOP on a simple sorted array,
 * comparing scores, ranks and ranges after every step and running the
 * object validator (tree counts, order, fill, index, arena). Sizes cross
 * the compact threshold both ways and reach a few thousand members. */
#include <math.h>
#include <stdio.h>

#include "testutil.h"
#include "store/zset.h"
#include "store/keyspace.h"

/* ---- the model: members "m<number>" (some binary), sorted ---- */

#define MAXM 4096

struct mentry {
    char m[80];
    size_t len;
    double score;
};

struct model {
    struct mentry e[MAXM];
    size_t n;
};

static int mcmp(const struct mentry *a, const struct mentry *b)
{
    size_t n = a->len < b->len ? a->len : b->len;
    int c;

    if (a->score < b->score)
        return -1;
    if (a->score > b->score)
        return 1;
    c = memcmp(a->m, b->m, n);
    if (c != 0)
        return c;
    return a->len < b->len ? -1 : a->len > b->len;
}

static long mfind(const struct model *md, const char *m, size_t len)
{
    for (size_t i = 0; i < md->n; i++)
        if (md->e[i].len == len && memcmp(md->e[i].m, m, len) == 0)
            return (long)i;
    return -1;
}

static void mremove_at(struct model *md, size_t i)
{
    memmove(&md->e[i], &md->e[i + 1], (md->n - i - 1) * sizeof(md->e[0]));
    md->n--;
}

static void minsert(struct model *md, const char *m, size_t len, double s)
{
    struct mentry x;
    size_t i = 0;

    memcpy(x.m, m, len);
    x.len = len;
    x.score = s;
    while (i < md->n && mcmp(&md->e[i], &x) < 0)
        i++;
    memmove(&md->e[i + 1], &md->e[i], (md->n - i) * sizeof(md->e[0]));
    md->e[i] = x;
    md->n++;
}

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t rndn(size_t n)
{
    return (size_t)(rnd() % n);
}

/* A random member name: mostly "m<k>", sometimes long or binary. */
static size_t make_member(char *buf, size_t universe)
{
    size_t k = rndn(universe), len;

    switch (rnd() % 16) {
    case 0:
        len = (size_t)snprintf(buf, 80, "long-member-%zu-", k);
        for (; len < 70; len++)
            buf[len] = (char)('a' + (k + len) % 26);
        return len;
    case 1:
        buf[0] = 'b';
        buf[1] = '\0';
        buf[2] = (char)(k & 0xFF);
        buf[3] = (char)(k >> 8);
        return 4;
    case 2:
        return k % 3 == 0 ? 0 : (size_t)snprintf(buf, 80, "%zu", k % 10);
    default:
        return (size_t)snprintf(buf, 80, "m%zu", k);
    }
}

/* All scores 0: the set is ordered by member, as lex ranges assume. */
static bool lex_mode;

static double make_score(void)
{
    if (lex_mode)
        return 0;
    switch (rnd() % 10) {
    case 0: return (double)(rndn(7)) - 3; /* many ties */
    case 1: return (double)rndn(1000) / 8.0;
    case 2: return rnd() % 50 == 0 ? INFINITY : -INFINITY;
    case 3: return rnd() % 2 ? -0.0 : 0.0;
    case 4: return (double)(int64_t)(rnd() % 4000000000ull) - 2e9;
    default: return (double)rndn(100000);
    }
}

/* ---- comparing ---- */

static void same_entry(const struct mentry *a, struct goblin_slice m,
                       double s)
{
    assert_int_equal(a->len, m.len);
    assert_memory_equal(a->m, m.ptr, m.len);
    assert_true(a->score == s);
}

static void check_all(goblin_store *st, const struct model *md)
{
    struct goblin_zset_iter it;
    struct goblin_zrange r;
    struct goblin_slice m;
    double s;
    void **slot;
    int rc = goblin__key_lookup(st, S("z"), GOBLIN_TYPE_ZSET, &slot);

    if (md->n == 0) {
        assert_int_equal(rc, 0);
        return;
    }
    assert_int_equal(rc, 1);
    assert_int_equal(goblin__zset_obj_check(*slot), 0);
    assert_int_equal(goblin_zset_card(st, S("z")), (int64_t)md->n);
    memset(&r, 0, sizeof(r));
    r.start = 0;
    r.stop = -1;
    assert_int_equal(goblin_zset_range(st, S("z"), &r, &it), md->n);
    for (size_t i = 0; i < md->n; i++) {
        assert_int_equal(goblin_zset_next(&it, &m, &s), 1);
        same_entry(&md->e[i], m, s);
    }
    assert_int_equal(goblin_zset_next(&it, &m, &s), 0);
}

/* Spot checks: a few ranks, scores and score ranges. */
static void check_some(goblin_store *st, const struct model *md)
{
    for (int k = 0; k < 4 && md->n > 0; k++) {
        size_t i = rndn(md->n);
        const struct mentry *e = &md->e[i];
        int64_t rank;
        double s;

        assert_int_equal(goblin_zset_rank(st, S("z"),
                                          slice_of(e->m, e->len), 0, &rank,
                                          &s), 1);
        assert_int_equal(rank, (int64_t)i);
        assert_true(s == e->score);
        assert_int_equal(goblin_zset_rank(st, S("z"),
                                          slice_of(e->m, e->len), 1, &rank,
                                          NULL), 1);
        assert_int_equal(rank, (int64_t)(md->n - 1 - i));
    }
    for (int k = 0; k < 2; k++) {
        struct goblin_zrange r;
        struct goblin_zset_iter it;
        double lo = make_score(), hi = make_score();
        size_t a = 0, b;
        struct goblin_slice m;
        double s;
        int64_t n;

        memset(&r, 0, sizeof(r));
        r.by = GOBLIN_ZRANGE_BY_SCORE;
        r.min = lo;
        r.max = hi;
        r.min_excl = (int)(rnd() % 2);
        r.max_excl = (int)(rnd() % 2);
        r.rev = (int)(rnd() % 2);
        while (a < md->n && (r.min_excl ? md->e[a].score <= lo
                                        : md->e[a].score < lo))
            a++;
        b = a;
        while (b < md->n && (r.max_excl ? md->e[b].score < hi
                                        : md->e[b].score <= hi))
            b++;
        n = goblin_zset_range(st, S("z"), &r, &it);
        assert_int_equal(n, (int64_t)(b - a));
        for (size_t j = 0; j < b - a; j++) {
            size_t want = r.rev ? b - 1 - j : a + j;

            assert_int_equal(goblin_zset_next(&it, &m, &s), 1);
            same_entry(&md->e[want], m, s);
        }
        assert_int_equal(goblin_zset_count(st, S("z"), &r), (int64_t)(b - a));
    }
}

/* In lex mode: a lex range between two members' bounds. */
static void check_lex(goblin_store *st, const struct model *md)
{
    struct goblin_zset_iter it;
    struct goblin_zrange r;
    struct goblin_slice m;
    size_t a, b;
    double s;

    if (!lex_mode || md->n == 0)
        return;
    a = rndn(md->n);
    b = a + rndn(md->n - a);
    memset(&r, 0, sizeof(r));
    r.by = GOBLIN_ZRANGE_BY_LEX;
    r.rev = (int)(rnd() % 2);
    r.lmin.kind = GOBLIN_LEX_INCLUSIVE;
    r.lmin.value = slice_of(md->e[a].m, md->e[a].len);
    r.lmax.kind = b + 1 < md->n ? GOBLIN_LEX_EXCLUSIVE : GOBLIN_LEX_PLUS_INF;
    if (b + 1 < md->n)
        r.lmax.value = slice_of(md->e[b + 1].m, md->e[b + 1].len);
    assert_int_equal(goblin_zset_count(st, S("z"), &r), (int64_t)(b - a + 1));
    assert_int_equal(goblin_zset_range(st, S("z"), &r, &it),
                     (int64_t)(b - a + 1));
    for (size_t j = 0; j <= b - a; j++) {
        assert_int_equal(goblin_zset_next(&it, &m, &s), 1);
        same_entry(&md->e[r.rev ? b - j : a + j], m, s);
    }
}

/* ---- random operations ---- */

static void op_add(goblin_store *st, struct model *md, size_t universe)
{
    struct goblin_zpair p[8];
    char names[8][80];
    size_t n = 1 + rndn(rnd() % 4 == 0 ? 8 : 1);
    int64_t added = 0, rc;

    if (md->n > MAXM - 16)
        return;
    for (size_t i = 0; i < n; i++) {
        p[i].member = slice_of(names[i], make_member(names[i], universe));
        p[i].score = make_score();
    }
    for (size_t i = 0; i < n; i++) {
        long at = mfind(md, p[i].member.ptr, p[i].member.len);

        if (at >= 0) {
            if (md->e[at].score == p[i].score)
                continue;
            mremove_at(md, (size_t)at);
        } else {
            added++;
        }
        minsert(md, p[i].member.ptr, p[i].member.len, p[i].score);
    }
    rc = goblin_zset_add_pairs(st, S("z"), 0, p, n);
    assert_int_equal(rc, added);
}

static void op_incr(goblin_store *st, struct model *md, size_t universe)
{
    char name[80];
    size_t len = make_member(name, universe);
    double incr = lex_mode ? 0 : (double)rndn(20) - 10, s = 0, got;
    long at = mfind(md, name, len);

    if (at >= 0) {
        s = md->e[at].score;
        mremove_at(md, (size_t)at);
    }
    if (isinf(s) && isinf(incr))
        incr = 1;
    s += incr;
    minsert(md, name, len, s);
    assert_int_equal(goblin_zset_incr(st, S("z"), 0, slice_of(name, len),
                                      incr, &got), 1);
    assert_true(got == s);
}

static void op_rem(goblin_store *st, struct model *md, size_t universe)
{
    struct goblin_slice ms[4];
    char names[4][80];
    size_t n = 1 + rndn(4);
    int64_t removed = 0;

    for (size_t i = 0; i < n; i++) {
        long at;

        if (md->n > 0 && rnd() % 2) {
            const struct mentry *e = &md->e[rndn(md->n)];

            memcpy(names[i], e->m, e->len);
            ms[i] = slice_of(names[i], e->len);
        } else {
            ms[i] = slice_of(names[i], make_member(names[i], universe));
        }
        at = mfind(md, ms[i].ptr, ms[i].len);
        if (at >= 0) {
            mremove_at(md, (size_t)at);
            removed++;
        }
    }
    assert_int_equal(goblin_zset_rem(st, S("z"), ms, n), removed);
}

static void op_remrange(goblin_store *st, struct model *md)
{
    struct goblin_zrange r;
    size_t a, b;

    memset(&r, 0, sizeof(r));
    if (md->n == 0)
        return;
    a = rndn(md->n);
    b = a + rndn(rnd() % 64 == 0 ? md->n - a : (md->n - a < 6 ? md->n - a
                                                              : 6));
    if (b >= md->n)
        b = md->n - 1;
    if (lex_mode && rnd() % 2) {
        bool ax = rnd() % 2 && a < b, bx = rnd() % 2 && a + ax < b;

        r.by = GOBLIN_ZRANGE_BY_LEX;
        r.lmin.kind = ax ? GOBLIN_LEX_EXCLUSIVE : GOBLIN_LEX_INCLUSIVE;
        r.lmin.value = slice_of(md->e[a].m, md->e[a].len);
        r.lmax.kind = bx ? GOBLIN_LEX_EXCLUSIVE : GOBLIN_LEX_INCLUSIVE;
        r.lmax.value = slice_of(md->e[b].m, md->e[b].len);
        if (a == 0 && rnd() % 4 == 0)
            r.lmin.kind = GOBLIN_LEX_MIN_INF;
        else
            a += ax;
        b -= bx;
    } else if (rnd() % 2) {
        r.by = GOBLIN_ZRANGE_BY_RANK;
        r.start = (int64_t)a;
        r.stop = rnd() % 2 ? (int64_t)b : (int64_t)b - (int64_t)md->n;
    } else {
        /* by score over whole ties */
        r.by = GOBLIN_ZRANGE_BY_SCORE;
        r.min = md->e[a].score;
        r.max = md->e[b].score;
        while (a > 0 && md->e[a - 1].score == r.min)
            a--;
        while (b + 1 < md->n && md->e[b + 1].score == r.max)
            b++;
    }
    assert_int_equal(goblin_zset_rem_range(st, S("z"), &r),
                     (int64_t)(b - a + 1));
    for (size_t i = a; i <= b; i++)
        mremove_at(md, a);
}

struct popcheck {
    struct model *md;
    size_t i;
    int max;
};

static int pop_visit(void *ctx, struct goblin_slice m, double s)
{
    struct popcheck *p = ctx;
    size_t at = p->max ? p->md->n - 1 - p->i : p->i;

    same_entry(&p->md->e[at], m, s);
    p->i++;
    return 0;
}

static void op_pop(goblin_store *st, struct model *md)
{
    struct popcheck p = {md, 0, (int)(rnd() % 2)};
    int64_t count = (int64_t)rndn(6);
    size_t n = (size_t)count < md->n ? (size_t)count : md->n;

    assert_int_equal(goblin_zset_pop(st, S("z"), p.max, count, pop_visit,
                                     &p), (int64_t)n);
    for (size_t i = 0; i < n; i++)
        mremove_at(md, p.max ? md->n - 1 : 0);
}

static struct model md;

static void run_model(goblin_store *st, uint64_t seed, size_t steps,
                      size_t universe, unsigned add_weight)
{
    size_t maxn = 0, full_steps = 0;

    rng_state = seed;
    for (size_t step = 0; step < steps; step++) {
        void **slot;

        if (md.n > maxn)
            maxn = md.n;
        if (goblin__key_lookup(st, S("z"), GOBLIN_TYPE_ZSET, &slot) == 1 &&
            strcmp(goblin__zset_encoding(*slot), "skiplist") == 0)
            full_steps++;
        unsigned k = (unsigned)(rnd() % (add_weight + 5));

        if (k < add_weight)
            op_add(st, &md, universe);
        else if (k == add_weight)
            op_incr(st, &md, universe);
        else if (k == add_weight + 1 || k == add_weight + 2)
            op_rem(st, &md, universe);
        else if (k == add_weight + 3)
            op_remrange(st, &md);
        else
            op_pop(st, &md);
        if (step % 16 == 0 || md.n < 300)
            check_all(st, &md);
        check_some(st, &md);
        check_lex(st, &md);
    }
    check_all(st, &md);
    if (getenv("ZSET_MODEL_VERBOSE") != NULL)
        fprintf(stderr, "seed %llu: max %zu members, %zu steps full, end %zu\n",
                (unsigned long long)seed, maxn, full_steps, md.n);
}

static void test_model_small_sets(void **state)
{
    struct fixture *f = *state;

    md.n = 0;
    run_model(f->st, 1, 3000, 200, 4);
}

static void test_model_crosses_compact_threshold(void **state)
{
    struct fixture *f = *state;

    md.n = 0;
    run_model(f->st, 2, 4000, 400, 6);
}

static void test_model_grows_to_thousands(void **state)
{
    struct fixture *f = *state;

    md.n = 0;
    run_model(f->st, 3, 6000, 100000, 40);
}

static void test_model_shrinks_after_growth(void **state)
{
    struct fixture *f = *state;

    md.n = 0;
    run_model(f->st, 4, 4000, 100000, 40);
    run_model(f->st, 5, 3000, 100000, 1);
}

static void test_model_lex_ranges(void **state)
{
    struct fixture *f = *state;

    md.n = 0;
    lex_mode = true;
    run_model(f->st, 6, 3000, 5000, 40);
    run_model(f->st, 7, 2000, 5000, 1);
    lex_mode = false;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_model_small_sets),
        FIXTURE_TEST(test_model_crosses_compact_threshold),
        FIXTURE_TEST(test_model_grows_to_thousands),
        FIXTURE_TEST(test_model_shrinks_after_growth),
        FIXTURE_TEST(test_model_lex_ranges),
    };

    return cmocka_run_group_tests_name("zset_model", tests, NULL, NULL);
}
