/* test_hash_model.c - a seeded random walk of hash commands checked
 * against a plain reference model after every step, over both forms
 * (compact, then full with churn that drives arena compaction in both of
 * its modes), plus a walk of the full form's internal invariants. */
#include <stdio.h>

#include "testutil.h"
#include "store/hash.h"
#include "store/hash_entry.h"
#include "store/hash_impl.h"
#include "store/store.h"

/* ---- the reference model: pairs in insertion order ---- */

struct mpair {
    char *f, *v;
    size_t fl, vl;
};

struct mhash {
    struct mpair *p;
    size_t n, cap;
    int full; /* the encoding the store must report */
};

static long m_find(const struct mhash *h, const void *f, size_t fl)
{
    for (size_t i = 0; i < h->n; i++) {
        if (h->p[i].fl == fl && (fl == 0 || memcmp(h->p[i].f, f, fl) == 0))
            return (long)i;
    }
    return -1;
}

static char *dup_bytes(const void *p, size_t n)
{
    char *d = malloc(n + 1);

    assert_non_null(d);
    if (n != 0)
        memcpy(d, p, n);
    d[n] = '\0';
    return d;
}

/* Sets one pair; returns 1 if new. */
static int m_set(struct mhash *h, struct goblin_slice f, struct goblin_slice v)
{
    long i = m_find(h, f.ptr, f.len);

    if (f.len > GOBLIN__HASH_COMPACT_MAX_VALUE ||
        v.len > GOBLIN__HASH_COMPACT_MAX_VALUE)
        h->full = 1;
    if (i >= 0) {
        free(h->p[i].v);
        h->p[i].v = dup_bytes(v.ptr, v.len);
        h->p[i].vl = v.len;
        return 0;
    }
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 16;
        h->p = realloc(h->p, h->cap * sizeof(*h->p));
        assert_non_null(h->p);
    }
    h->p[h->n].f = dup_bytes(f.ptr, f.len);
    h->p[h->n].fl = f.len;
    h->p[h->n].v = dup_bytes(v.ptr, v.len);
    h->p[h->n].vl = v.len;
    h->n++;
    if (h->n > GOBLIN__HASH_COMPACT_MAX_ENTRIES)
        h->full = 1;
    return 1;
}

static int m_del(struct mhash *h, struct goblin_slice f)
{
    long i = m_find(h, f.ptr, f.len);

    if (i < 0)
        return 0;
    free(h->p[i].f);
    free(h->p[i].v);
    memmove(&h->p[i], &h->p[i + 1], (h->n - (size_t)i - 1) * sizeof(*h->p));
    h->n--;
    if (h->n == 0)
        h->full = 0; /* the key goes away */
    return 1;
}

static void m_free(struct mhash *h)
{
    while (h->n > 0) {
        h->n--;
        free(h->p[h->n].f);
        free(h->p[h->n].v);
    }
    free(h->p);
    memset(h, 0, sizeof(*h));
}

/* ---- checking the store against the model ---- */

struct got {
    struct mpair *p;
    size_t n, cap;
};

static int got_visit(void *ctx, struct goblin_slice f, struct goblin_slice v)
{
    struct got *g = ctx;

    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 64;
        g->p = realloc(g->p, g->cap * sizeof(*g->p));
        assert_non_null(g->p);
    }
    g->p[g->n].f = (char *)f.ptr; /* borrowed: no write until checked */
    g->p[g->n].fl = f.len;
    g->p[g->n].v = (char *)v.ptr;
    g->p[g->n].vl = v.len;
    g->n++;
    return 0;
}

static int cmp_pair(const void *a, const void *b)
{
    const struct mpair *x = a, *y = b;
    size_t n = x->fl < y->fl ? x->fl : y->fl;
    int c = n ? memcmp(x->f, y->f, n) : 0;

    return c != 0 ? c : (x->fl > y->fl) - (x->fl < y->fl);
}

static void assert_pairs_equal(const struct mpair *a, const struct mpair *b,
                               size_t n)
{
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(a[i].fl, b[i].fl);
        assert_int_equal(a[i].vl, b[i].vl);
        if (a[i].fl)
            assert_memory_equal(a[i].f, b[i].f, a[i].fl);
        if (a[i].vl)
            assert_memory_equal(a[i].v, b[i].v, a[i].vl);
    }
}

static void check_key(goblin_store *st, struct goblin_slice key,
                      const struct mhash *m)
{
    struct got g = {0};
    struct mpair *want;
    void **slot;
    int r = goblin__key_lookup(st, key, GOBLIN_TYPE_HASH, &slot);

    assert_int_equal(r, m->n > 0);
    assert_int_equal(goblin_hash_len(st, key), (int64_t)m->n);
    if (m->n == 0)
        return;
    assert_string_equal(goblin__hash_encoding(*slot),
                        m->full ? "hashtable" : "listpack");
    assert_int_equal(goblin_hash_foreach(st, key, got_visit, &g),
                     (int64_t)m->n);
    if (!m->full) { /* compact: exactly insertion order */
        assert_pairs_equal(g.p, m->p, m->n);
    } else {
        want = malloc(m->n * sizeof(*want));
        assert_non_null(want);
        memcpy(want, m->p, m->n * sizeof(*want));
        qsort(want, m->n, sizeof(*want), cmp_pair);
        qsort(g.p, g.n, sizeof(*g.p), cmp_pair);
        assert_pairs_equal(g.p, want, m->n);
        free(want);
        /* Chunks, byte accounting, ids, positions and the index agree:
         * the library's own walk (hash_check.c), shared with the fuzzers. */
        assert_int_equal(goblin__hash_obj_check(st, *slot), 0);
    }
    free(g.p);
}

/* ---- the random walk ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t below(size_t n)
{
    return (size_t)(rnd() % n);
}

#define NKEYS 3
#define FIELDS 320

struct walk {
    goblin_store *st;
    struct mhash m[NKEYS];
    char fbuf[8][128];
    char vbuf[8][8192];
    size_t vmax[NKEYS]; /* typical value size per key */
};

static struct goblin_slice key_of(size_t k)
{
    static const char *const names[NKEYS] = {"small", "mid", "big"};

    return slice_of(names[k], strlen(names[k]));
}

/* A field: mostly short names, a few empty or longer than the compact
 * limit, a few with NUL bytes. */
static struct goblin_slice rand_field(struct walk *w, int slot)
{
    size_t i = below(FIELDS), n;
    char *b = w->fbuf[slot];

    if (i == 0)
        return slice_of(b, 0);
    if (i == 1) {
        memset(b, 'L', 70);
        return slice_of(b, 70);
    }
    n = (size_t)snprintf(b, 128, "f%zu", i);
    if (i % 50 == 7) {
        b[n++] = '\0';
        b[n++] = 'z';
    }
    return slice_of(b, n);
}

static struct goblin_slice rand_value(struct walk *w, size_t k, int slot)
{
    size_t r = below(100), n;
    char *b = w->vbuf[slot];

    if (r < 5)
        n = 0;
    else if (r < 10)
        n = (size_t)snprintf(b, 32, "%lld", (long long)below(1000) - 500);
    else if (r < 12 && k > 0)
        n = 65 + below(20);
    else
        n = below(w->vmax[k] + 1);
    if (r >= 10) {
        for (size_t i = 0; i < n; i++)
            b[i] = (char)('a' + (rnd() & 15));
    }
    return slice_of(b, n);
}

static void step_set(struct walk *w, size_t k)
{
    struct goblin_slice fv[8];
    size_t np = 1 + below(4);
    struct mhash before = w->m[k];
    int want = 0;

    (void)before;
    for (size_t i = 0; i < np; i++) {
        fv[2 * i] = rand_field(w, (int)i);
        fv[2 * i + 1] = rand_value(w, k, (int)i);
        if (i > 0 && below(4) == 0) /* repeat an earlier field */
            fv[2 * i] = fv[0];
    }
    for (size_t i = 0; i < np; i++)
        want += m_set(&w->m[k], fv[2 * i], fv[2 * i + 1]);
    assert_int_equal(goblin_hash_set(w->st, key_of(k), fv, np), want);
}

static void step_del(struct walk *w, size_t k)
{
    struct goblin_slice d[3];
    size_t nd = 1 + below(3);
    int want = 0;

    for (size_t i = 0; i < nd; i++) {
        if (w->m[k].n > 0 && below(3) != 0) {
            const struct mpair *p = &w->m[k].p[below(w->m[k].n)];

            memcpy(w->fbuf[i], p->f, p->fl);
            d[i] = slice_of(w->fbuf[i], p->fl);
        } else {
            d[i] = rand_field(w, (int)i);
        }
    }
    for (size_t i = 0; i < nd; i++)
        want += m_del(&w->m[k], d[i]);
    assert_int_equal(goblin_hash_del(w->st, key_of(k), d, nd), want);
}

static void step_incr(struct walk *w, size_t k)
{
    struct goblin_slice f = rand_field(w, 0);
    long i = m_find(&w->m[k], f.ptr, f.len);
    int64_t incr = (int64_t)below(2001) - 1000, cur = 0, got = 0;
    char buf[32];
    int ok = 1, r;

    if (below(20) == 0)
        incr = below(2) ? INT64_MAX : INT64_MIN;
    if (i >= 0)
        ok = goblin_int64_parse(w->m[k].p[i].v, w->m[k].p[i].vl, &cur) == 0;
    r = goblin_hash_incrby(w->st, key_of(k), f, incr, &got);
    if (!ok) {
        assert_int_equal(r, GOBLIN_EHASHNOTINT);
        return;
    }
    if ((incr < 0 && cur < 0 && incr < INT64_MIN - cur) ||
        (incr > 0 && cur > 0 && incr > INT64_MAX - cur)) {
        assert_int_equal(r, GOBLIN_EOVERFLOW);
        return;
    }
    assert_int_equal(r, 0);
    assert_true(got == cur + incr);
    m_set(&w->m[k], f, slice_of(buf, goblin_int64_format(buf, got)));
}

static void step_incrfloat(struct walk *w, size_t k)
{
    struct goblin_slice f = rand_field(w, 0), got;
    long i = m_find(&w->m[k], f.ptr, f.len);
    long double incr = (long double)((int64_t)below(2001) - 1000) / 8, cur = 0;
    static char buf[GOBLIN_LONG_DOUBLE_TEXT_MAX];
    int ok = 1, r;

    if (i >= 0)
        ok = goblin_long_double_parse(w->m[k].p[i].v, w->m[k].p[i].vl,
                                      &cur) == 0;
    r = goblin_hash_incrbyfloat(w->st, key_of(k), f, incr, &got);
    if (!ok) {
        assert_int_equal(r, GOBLIN_EHASHNOTFLOAT);
        return;
    }
    assert_int_equal(r, 0);
    m_set(&w->m[k], f,
          slice_of(buf, goblin_long_double_format(buf, sizeof(buf),
                                                  cur + incr)));
    assert_int_equal(got.len, w->m[k].p[m_find(&w->m[k], f.ptr, f.len)].vl);
}

static void step_setnx(struct walk *w, size_t k)
{
    struct goblin_slice f = rand_field(w, 0), v = rand_value(w, k, 0);
    int want = m_find(&w->m[k], f.ptr, f.len) < 0;

    if (want)
        m_set(&w->m[k], f, v);
    assert_int_equal(goblin_hash_setnx(w->st, key_of(k), f, v), want);
}

static void step_reads(struct walk *w, size_t k)
{
    struct goblin_slice f[4], v[4];

    for (int i = 0; i < 4; i++)
        f[i] = rand_field(w, i);
    assert_true(goblin_hash_mget(w->st, key_of(k), f, 4, v) >= 0);
    for (int i = 0; i < 4; i++) {
        long j = m_find(&w->m[k], f[i].ptr, f[i].len);

        assert_int_equal(goblin_hash_exists(w->st, key_of(k), f[i]), j >= 0);
        if (j < 0) {
            assert_null(v[i].ptr);
            assert_int_equal(goblin_hash_strlen(w->st, key_of(k), f[i]), 0);
            continue;
        }
        assert_int_equal(v[i].len, w->m[k].p[j].vl);
        assert_memory_equal(v[i].ptr, w->m[k].p[j].v, v[i].len);
        assert_int_equal(goblin_hash_strlen(w->st, key_of(k), f[i]),
                         (int64_t)v[i].len);
    }
}

static int in_model(void *ctx, struct goblin_slice f, struct goblin_slice v)
{
    const struct mhash *m = ctx;
    long j = m_find(m, f.ptr, f.len);

    assert_true(j >= 0);
    assert_int_equal(m->p[j].vl, v.len);
    return 0;
}

static void step_random_reads(struct walk *w, size_t k)
{
    int64_t count = (int64_t)below(2 * (w->m[k].n + 2)) - (int64_t)w->m[k].n;
    int64_t want = count < 0 ? -count
                   : (uint64_t)count < w->m[k].n ? count
                                                 : (int64_t)w->m[k].n;

    if (w->m[k].n == 0)
        want = 0;
    assert_int_equal(goblin_hash_randfield_count(w->st, key_of(k), count, 1,
                                                 in_model, &w->m[k]),
                     want);
}

static void step_scan(struct walk *w, size_t k)
{
    struct got g = {0};
    uint64_t cursor = 0;
    size_t count = below(40);

    do {
        assert_true(goblin_hash_scan(w->st, key_of(k), cursor, count,
                                     (struct goblin_slice){NULL, 0},
                                     got_visit, &g, &cursor) >= 0);
    } while (cursor != 0);
    assert_int_equal(g.n, w->m[k].n); /* no writes in between: no repeats */
    for (size_t i = 0; i < g.n; i++)
        assert_true(m_find(&w->m[k], g.p[i].f, g.p[i].fl) >= 0);
    free(g.p);
}

static void step(struct walk *w, size_t no)
{
    size_t k = below(NKEYS), op = below(100);

    if (op < 40)
        step_set(w, k);
    else if (op < 62)
        step_del(w, k);
    else if (op < 70)
        step_incr(w, k);
    else if (op < 74)
        step_incrfloat(w, k);
    else if (op < 80)
        step_setnx(w, k);
    else if (op < 92)
        step_reads(w, k);
    else if (op < 97)
        step_random_reads(w, k);
    else
        step_scan(w, k);
    /* The big-value key is compared whole every 16th step (it holds
     * megabytes); its length and encoding every step. */
    if (k != 2 || no % 16 == 0) {
        check_key(w->st, key_of(k), &w->m[k]);
    } else {
        assert_int_equal(goblin_hash_len(w->st, key_of(k)),
                         (int64_t)w->m[k].n);
    }
}

static void run_walk(goblin_store *st, uint64_t seed, size_t steps)
{
    struct walk *w = calloc(1, sizeof(*w));

    assert_non_null(w);
    rng_state = seed;
    w->st = st;
    w->vmax[0] = 20;
    w->vmax[1] = 60;
    w->vmax[2] = 8000; /* big enough for several arena chunks */
    for (size_t i = 0; i < steps; i++)
        step(w, i);
    for (size_t k = 0; k < NKEYS; k++) {
        check_key(st, key_of(k), &w->m[k]);
        m_free(&w->m[k]);
    }
    free(w);
}

static void test_model_walk_seed_1(void **state)
{
    struct fixture *fx = *state;

    run_walk(fx->st, 1, 8000);
}

static void test_model_walk_seed_2(void **state)
{
    struct fixture *fx = *state;

    run_walk(fx->st, 0xfeedbeef, 8000);
}

/* Heavy churn on one full hash with chunks of several kinds: values whose
 * length keeps changing, deletes, and big values, checking the internal
 * invariants as compaction slides and evacuates chunks. */
static void test_compaction_churn_invariants(void **state)
{
    struct fixture *fx = *state;
    goblin_store *st = fx->st;
    struct mhash m = {0};
    static char vb[80000];
    char fb[32];
    void **slot;

    rng_state = 7;
    for (size_t i = 0; i < 30000; i++) {
        size_t fi = below(3000), len = below(100) < 2 ? 70000 : below(400);
        struct goblin_slice f = slice_of(fb, (size_t)snprintf(fb, 32, "k%zu",
                                                              fi));
        struct goblin_slice fv[2] = {f, slice_of(vb, len)};

        memset(vb, 'a' + (int)(i % 26), len);
        if (below(3) == 0) {
            assert_int_equal(goblin_hash_del(st, S("h"), &f, 1),
                             m_del(&m, f));
        } else {
            assert_int_equal(goblin_hash_set(st, S("h"), fv, 1),
                             m_set(&m, f, fv[1]));
        }
        if (i % 500 == 0 || i == 29999)
            check_key(st, S("h"), &m);
    }
    assert_int_equal(goblin__key_lookup(st, S("h"), GOBLIN_TYPE_HASH, &slot),
                     1);
    assert_true(goblin__hobj_full(*slot)->dead <=
                goblin__hobj_full(*slot)->live);
    m_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_model_walk_seed_1),
        FIXTURE_TEST(test_model_walk_seed_2),
        FIXTURE_TEST(test_compaction_churn_invariants),
    };

    return cmocka_run_group_tests_name("hash_model", tests, NULL, NULL);
}
