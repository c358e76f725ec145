/* test_zset_ops.c - sorted sets beyond single commands: ZUNION / ZINTER /
 * ZDIFF (STORE), ZINTERCARD, ZRANGESTORE, ZRANDMEMBER, ZSCAN under growth
 * and compaction, allocation failures (fail the Nth allocation until the
 * call succeeds), tree invariants through growth and shrinkage, bulk
 * building and the standalone object calls. */
#include <math.h>
#include <stdio.h>

#include "testutil.h"
#include "store/keyspace.h"
#include "store/zset_impl.h"

#define MAXC 4096

struct got {
    size_t n;
    char m[MAXC][24];
    size_t len[MAXC];
    double s[MAXC];
};

static struct got g;

/* No MATCH pattern. */
#define ALL ((struct goblin_slice){NULL, 0})

static int collect(void *ctx, struct goblin_slice m, double s)
{
    struct got *c = ctx;

    assert_true(c->n < MAXC && m.len <= 24);
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

static void fill(goblin_store *st, const char *key, int n, int step)
{
    char m[24];

    for (int i = 0; i < n; i++) {
        snprintf(m, sizeof(m), "m%d", i * step);
        add(st, key, m, i * step);
    }
}

/* g holds "member:score" pairs as in want ("a:1 b:2"). */
static void expect(const char *want)
{
    char buf[1024];
    size_t i = 0;

    snprintf(buf, sizeof(buf), "%s", want);
    for (char *tok = strtok(buf, " "); tok != NULL; tok = strtok(NULL, " ")) {
        char *colon = strchr(tok, ':');

        assert_non_null(colon);
        *colon = '\0';
        assert_true(i < g.n);
        assert_int_equal(g.len[i], strlen(tok));
        assert_memory_equal(g.m[i], tok, g.len[i]);
        assert_true(g.s[i] == strtod(colon + 1, NULL));
        i++;
    }
    assert_int_equal(g.n, i);
}

static void dump(goblin_store *st, const char *key)
{
    g.n = 0;
    goblin_zset_randmember(st, slice_of(key, strlen(key)), INT64_MAX,
                           collect, &g);
    /* randmember gives the whole set from the top: reverse it */
    for (size_t i = 0; i < g.n / 2; i++) {
        struct got *x = &g;
        size_t j = g.n - 1 - i;
        char t[24];
        size_t tl = x->len[i];
        double ts = x->s[i];

        memcpy(t, x->m[i], 24);
        memcpy(x->m[i], x->m[j], 24);
        memcpy(x->m[j], t, 24);
        x->len[i] = x->len[j];
        x->len[j] = tl;
        x->s[i] = x->s[j];
        x->s[j] = ts;
    }
}

static void check_obj(goblin_store *st, const char *key)
{
    void **slot;

    if (goblin__key_lookup(st, slice_of(key, strlen(key)), GOBLIN_TYPE_ZSET,
                           &slot) == 1)
        assert_int_equal(goblin__zset_obj_check(*slot), 0);
}

/* ---- set operations ---- */

static void setup_abc(goblin_store *st)
{
    add(st, "x", "a", 1);
    add(st, "x", "b", 2);
    add(st, "x", "c", 3);
    add(st, "y", "b", 10);
    add(st, "y", "c", 20);
    add(st, "y", "d", 30);
}

static void test_union_weights_and_aggregates(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_slice keys[3] = {S("x"), S("y"), S("missing")};
    double w[3] = {2, 1, 5};

    setup_abc(st);
    g.n = 0;
    assert_int_equal(goblin_zset_combine(st, GOBLIN_ZSET_UNION, keys, 3,
                                         NULL, GOBLIN_ZAGG_SUM, collect, &g),
                     4);
    expect("a:1 b:12 c:23 d:30");
    g.n = 0;
    assert_int_equal(goblin_zset_combine(st, GOBLIN_ZSET_UNION, keys, 2, w,
                                         GOBLIN_ZAGG_SUM, collect, &g), 4);
    expect("a:2 b:14 c:26 d:30");
    g.n = 0;
    goblin_zset_combine(st, GOBLIN_ZSET_UNION, keys, 2, w, GOBLIN_ZAGG_MIN,
                        collect, &g);
    expect("a:2 b:4 c:6 d:30");
    g.n = 0;
    goblin_zset_combine(st, GOBLIN_ZSET_UNION, keys, 2, w, GOBLIN_ZAGG_MAX,
                        collect, &g);
    expect("a:2 b:10 c:20 d:30");
}

static void test_inter_and_diff(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_slice keys[3] = {S("x"), S("y"), S("x")};
    double w[3] = {1, 2, 1};

    setup_abc(st);
    g.n = 0;
    assert_int_equal(goblin_zset_combine(st, GOBLIN_ZSET_INTER, keys, 2, w,
                                         GOBLIN_ZAGG_SUM, collect, &g), 2);
    expect("b:22 c:43");
    g.n = 0;
    /* a key given twice counts twice */
    goblin_zset_combine(st, GOBLIN_ZSET_INTER, keys, 3, NULL, GOBLIN_ZAGG_SUM,
                        collect, &g);
    expect("b:14 c:26");
    g.n = 0;
    assert_int_equal(goblin_zset_combine(st, GOBLIN_ZSET_DIFF, keys, 2, w,
                                         GOBLIN_ZAGG_SUM, collect, &g), 1);
    expect("a:1");
    g.n = 0;
    keys[1] = S("missing");
    assert_int_equal(goblin_zset_combine(st, GOBLIN_ZSET_INTER, keys, 2, NULL,
                                         GOBLIN_ZAGG_SUM, collect, &g), 0);
    assert_int_equal(goblin_zset_combine(st, GOBLIN_ZSET_DIFF, keys, 2, NULL,
                                         GOBLIN_ZAGG_SUM, collect, &g), 3);
    keys[0] = S("missing");
    assert_int_equal(goblin_zset_combine(st, GOBLIN_ZSET_DIFF, keys, 2, NULL,
                                         GOBLIN_ZAGG_SUM, collect, &g), 0);
    assert_int_equal(goblin_zset_combine(st, GOBLIN_ZSET_DIFF, keys, 0, NULL,
                                         GOBLIN_ZAGG_SUM, collect, &g),
                     GOBLIN_EINVAL);
}

static void test_inf_times_zero_and_nan_sums_are_zero(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_slice keys[2] = {S("p"), S("n")};
    double w[2] = {0, 1};

    add(st, "p", "a", INFINITY);
    add(st, "n", "a", -INFINITY);
    g.n = 0;
    goblin_zset_combine(st, GOBLIN_ZSET_UNION, keys, 1, w, GOBLIN_ZAGG_SUM,
                        collect, &g);
    expect("a:0");
    g.n = 0;
    goblin_zset_combine(st, GOBLIN_ZSET_UNION, keys, 2, NULL, GOBLIN_ZAGG_SUM,
                        collect, &g);
    expect("a:0");
    g.n = 0;
    goblin_zset_combine(st, GOBLIN_ZSET_INTER, keys, 2, NULL, GOBLIN_ZAGG_SUM,
                        collect, &g);
    expect("a:0");
    g.n = 0;
    goblin_zset_combine(st, GOBLIN_ZSET_UNION, keys, 2, NULL, GOBLIN_ZAGG_MAX,
                        collect, &g);
    assert_true(g.n == 1 && g.s[0] == INFINITY);
}

/* Redis 7.0.15's answers: ZADD a 0.1 x; ZADD b 0 x 0 y; then INTER with
 * WEIGHTS inf inf gives x inf*0.1 = inf from the smaller input and NaN
 * (0 * inf) from the other, passed to the aggregate as NaN: SUM 0, MIN
 * and MAX inf. WEIGHTS -inf -inf with SUM gives 0 (-inf + NaN); UNION
 * turns each NaN product into 0 first (x: -inf + 0 = -inf). */
static void test_inter_passes_nan_products_to_the_aggregate(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_slice keys[2] = {S("a"), S("b")};
    double inf[2] = {INFINITY, INFINITY}, ninf[2] = {-INFINITY, -INFINITY};
    double zi[2] = {0, INFINITY};

    add(st, "a", "x", 0.1);
    add(st, "b", "x", 0);
    add(st, "b", "y", 0);
    g.n = 0;
    goblin_zset_combine(st, GOBLIN_ZSET_INTER, keys, 2, inf, GOBLIN_ZAGG_SUM,
                        collect, &g);
    assert_true(g.n == 1 && g.s[0] == 0);
    g.n = 0;
    goblin_zset_combine(st, GOBLIN_ZSET_INTER, keys, 2, inf, GOBLIN_ZAGG_MIN,
                        collect, &g);
    assert_true(g.n == 1 && g.s[0] == INFINITY);
    g.n = 0;
    goblin_zset_combine(st, GOBLIN_ZSET_INTER, keys, 2, inf, GOBLIN_ZAGG_MAX,
                        collect, &g);
    assert_true(g.n == 1 && g.s[0] == INFINITY);
    g.n = 0;
    goblin_zset_combine(st, GOBLIN_ZSET_INTER, keys, 2, zi, GOBLIN_ZAGG_MAX,
                        collect, &g);
    assert_true(g.n == 1 && g.s[0] == 0);
    g.n = 0;
    goblin_zset_combine(st, GOBLIN_ZSET_INTER, keys, 2, ninf, GOBLIN_ZAGG_SUM,
                        collect, &g);
    assert_true(g.n == 1 && g.s[0] == 0);
    g.n = 0;
    goblin_zset_combine(st, GOBLIN_ZSET_UNION, keys, 2, ninf, GOBLIN_ZAGG_SUM,
                        collect, &g);
    expect("x:-inf y:0");
}

static void test_store_replaces_and_empty_result_deletes(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_slice keys[2] = {S("x"), S("y")};
    const char *enc = NULL;

    setup_abc(st);
    assert_true(goblin_str_set(st, S("dst"), S("v"), NULL, NULL) >= 0);
    assert_int_equal(goblin_zset_combine_store(st, S("dst"), GOBLIN_ZSET_UNION,
                                               keys, 2, NULL, GOBLIN_ZAGG_SUM),
                     4);
    dump(st, "dst");
    expect("a:1 b:12 c:23 d:30");
    assert_int_equal(goblin_key_encoding(st, S("dst"), &enc), 1);
    assert_string_equal(enc, "listpack");
    /* the destination may be an input */
    assert_int_equal(goblin_zset_combine_store(st, S("x"), GOBLIN_ZSET_INTER,
                                               keys, 2, NULL, GOBLIN_ZAGG_MIN),
                     2);
    dump(st, "x");
    expect("b:2 c:3");
    keys[1] = S("nothing");
    assert_int_equal(goblin_zset_combine_store(st, S("dst"), GOBLIN_ZSET_INTER,
                                               keys, 2, NULL, GOBLIN_ZAGG_SUM),
                     0);
    assert_int_equal(goblin_key_exists(st, S("dst")), 0);
    assert_int_equal(goblin_zset_intercard(st, keys, 2, 0), 0);
}

static void test_intercard_with_limit(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_slice keys[2] = {S("big"), S("odd")};

    fill(st, "big", 300, 1);
    fill(st, "odd", 100, 3);
    assert_int_equal(goblin_zset_intercard(st, keys, 2, 0), 100);
    assert_int_equal(goblin_zset_intercard(st, keys, 2, 7), 7);
    assert_int_equal(goblin_zset_intercard(st, keys, 2, 1000), 100);
    assert_int_equal(goblin_zset_intercard(st, keys, 2, -1), GOBLIN_EINVAL);
}

static void test_big_union_matches_by_hand(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_slice keys[2] = {S("a"), S("b")};

    fill(st, "a", 600, 1);
    fill(st, "b", 400, 2);
    assert_int_equal(goblin_zset_combine_store(st, S("u"), GOBLIN_ZSET_UNION,
                                               keys, 2, NULL, GOBLIN_ZAGG_SUM),
                     700);
    assert_int_equal(goblin_zset_combine_store(st, S("i"), GOBLIN_ZSET_INTER,
                                               keys, 2, NULL, GOBLIN_ZAGG_SUM),
                     300);
    assert_int_equal(goblin_zset_combine_store(st, S("d"), GOBLIN_ZSET_DIFF,
                                               keys, 2, NULL, GOBLIN_ZAGG_SUM),
                     300);
    check_obj(st, "u");
    check_obj(st, "i");
    check_obj(st, "d");
    dump(st, "i");
    for (size_t k = 0; k < g.n; k++)
        assert_true(g.s[k] == 2 * 2 * (double)k);
}

static void test_range_store(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_zrange r;

    setup_abc(st);
    memset(&r, 0, sizeof(r));
    r.by = GOBLIN_ZRANGE_BY_SCORE;
    r.min = 1;
    r.max = 3;
    r.rev = 1;
    r.limit = 1;
    r.offset = 0;
    r.count = 2;
    assert_int_equal(goblin_zset_range_store(st, S("d"), S("x"), &r), 2);
    dump(st, "d");
    expect("b:2 c:3");
    r.min = 100;
    r.max = 200;
    assert_int_equal(goblin_zset_range_store(st, S("d"), S("x"), &r), 0);
    assert_int_equal(goblin_key_exists(st, S("d")), 0);
    r.min = 0;
    assert_int_equal(goblin_zset_range_store(st, S("d"), S("gone"), &r), 0);
}

/* ---- ZRANDMEMBER ---- */

static void test_randmember_counts(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;

    for (int form = 0; form < 2; form++) {
        int n = form ? 1000 : 50;

        goblin_key_delete(st, S("r"));
        fill(st, "r", n, 1);
        for (int64_t count = -3 * n; count <= 2 * n; count += n / 7 + 1) {
            int64_t want = count < 0 ? -count : (count < n ? count : n);

            if (count < -MAXC)
                continue;
            g.n = 0;
            assert_int_equal(goblin_zset_randmember(st, S("r"), count,
                                                    collect, &g), want);
            for (size_t i = 0; i < g.n; i++) {
                double s;

                assert_int_equal(goblin_zset_score(st, S("r"),
                                                   slice_of(g.m[i], g.len[i]),
                                                   &s), 1);
                assert_true(s == g.s[i]);
                for (size_t j = 0; count > 0 && j < i; j++)
                    assert_false(g.len[i] == g.len[j] &&
                                 memcmp(g.m[i], g.m[j], g.len[i]) == 0);
            }
        }
        assert_int_equal(goblin_zset_randmember(st, S("r"), 0, collect, &g),
                         0);
    }
    assert_int_equal(goblin_zset_randmember(st, S("r"), INT64_MIN, collect,
                                            &g), GOBLIN_ERANGE);
}

static void test_randmember_whole_set_comes_from_the_top(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;

    setup_abc(st);
    g.n = 0;
    assert_int_equal(goblin_zset_randmember(st, S("x"), 3, collect, &g), 3);
    expect("c:3 b:2 a:1");
}

static void test_randmember_is_reproducible_per_seed(void **state)
{
    struct got first;
    struct goblin_config cfg = {0};

    (void)state;
    for (int run = 0; run < 2; run++) {
        goblin_store *st;

        cfg.seed = 77;
        assert_int_equal(goblin_store_open(&cfg, &st), 0);
        fill(st, "r", 500, 1);
        g.n = 0;
        goblin_zset_randmember(st, S("r"), 20, collect, &g);
        goblin_zset_randmember(st, S("r"), -20, collect, &g);
        goblin_zset_randmember(st, S("r"), 400, collect, &g);
        if (run == 0)
            first = g;
        else
            assert_memory_equal(&first, &g, sizeof(g));
        goblin_store_close(st);
    }
}

/* ---- ZSCAN ---- */

struct seen {
    uint8_t mark[20000];
};

static int mark_seen(void *ctx, struct goblin_slice m, double s)
{
    struct seen *sn = ctx;
    char buf[24];
    int k;

    (void)s;
    assert_true(m.len < sizeof(buf));
    memcpy(buf, m.ptr, m.len);
    buf[m.len] = '\0';
    k = atoi(buf + 1);
    assert_true(k >= 0 && k < 20000);
    sn->mark[k]++;
    return 0;
}

static void scan_name(char *buf, int k)
{
    snprintf(buf, 24, "m%d", k);
}

static size_t arena_base(goblin_store *st)
{
    void **slot;

    assert_int_equal(goblin__key_lookup(st, S("s"), GOBLIN_TYPE_ZSET, &slot),
                     1);
    return (size_t)((struct zfull *)*slot)->ar.base;
}

/* Members 0..1999 stay for the whole scan; 2000..19999 come and go (and
 * their removal makes the arena compact, moving the stable records). */
static void test_zscan_sees_every_stable_member_under_churn(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    static struct seen sn;
    uint64_t cursor = 0, next;
    int fresh = 2000, gone = 2000, calls = 0;
    char m[24];

    memset(&sn, 0, sizeof(sn));
    /* stable and coming-and-going members interleave in the arena */
    for (int i = 0; i < 6000; i++) {
        scan_name(m, i % 3 == 0 ? i / 3 : 2000 + i - i / 3 - 1);
        add(st, "s", m, i % 97);
    }
    fresh = 6000;
    do {
        assert_true(goblin_zset_scan(st, S("s"), cursor, 25, ALL,
                                     mark_seen, &sn, &next) >= 0);
        cursor = next;
        calls++;
        for (int i = 0; i < 15 && fresh < 20000; i++) {
            scan_name(m, fresh++);
            add(st, "s", m, i);
        }
        for (int i = 0; i < 30 && gone < fresh; i++) {
            scan_name(m, gone++);
            goblin_zset_rem(st, S("s"), &(struct goblin_slice){m, strlen(m)},
                            1);
        }
        /* score changes of stable members do not move them */
        scan_name(m, calls % 2000);
        add(st, "s", m, -calls);
    } while (cursor != 0 && calls < 100000);
    assert_int_equal(cursor, 0);
    for (int k = 0; k < 2000; k++)
        assert_true(sn.mark[k] >= 1);
    assert_true(arena_base(st) > 0); /* compaction dropped chunks */
    check_obj(st, "s");
}

static void test_zscan_compact_set_comes_whole(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    uint64_t next = 5;

    fill(st, "c", 100, 1);
    g.n = 0;
    assert_int_equal(goblin_zset_scan(st, S("c"), 12345, 3, ALL, collect,
                                      &g, &next), 100);
    assert_int_equal(next, 0);
    g.n = 0;
    assert_int_equal(goblin_zset_scan(st, S("c"), 0, 3, S("m1?"), collect,
                                      &g, &next), 10);
}

static void test_zscan_stale_cursor_restarts(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    uint64_t next, total = 0, cursor = 0x123456789abcull;

    fill(st, "s", 500, 1);
    do {
        g.n = 0;
        assert_true(goblin_zset_scan(st, S("s"), cursor, 50, ALL, collect,
                                     &g, &next) >= 0);
        total += g.n;
        cursor = next;
    } while (cursor != 0);
    assert_true(total >= 500);
}

/* ---- allocation failures ---- */

struct snapshot {
    size_t used;
    size_t live;
    struct got content;
};

static void take(struct fixture *f, struct snapshot *s, const char *key)
{
    goblin__write_begin(f->st);
    s->used = goblin_store_used_memory(f->st);
    s->live = f->counts.live_bytes;
    dump(f->st, key);
    s->content = g;
}

static void same(struct fixture *f, const struct snapshot *s,
                 const char *key)
{
    goblin__write_begin(f->st);
    dump(f->st, key);
    assert_int_equal(g.n, s->content.n);
    assert_memory_equal(g.len, s->content.len, g.n * sizeof(g.len[0]));
    assert_memory_equal(g.s, s->content.s, g.n * sizeof(g.s[0]));
    for (size_t i = 0; i < g.n; i++)
        assert_memory_equal(g.m[i], s->content.m[i], g.len[i]);
    /* Nothing escaped the accounting (teardown then proves nothing
     * leaked). A failed call may leave its structural work behind (a
     * split leaf, a grown index), so the totals need not match. */
    assert_int_equal(goblin_store_used_memory(f->st), f->counts.live_bytes);
    (void)s->used;
    (void)s->live;
    check_obj(f->st, key);
}

typedef int64_t (*op_fn)(goblin_store *st);

/* Runs op with the Nth allocation failing, N = 0, 1, 2...: each failure
 * is GOBLIN_ENOMEM and changes nothing; returns the first success. */
static int64_t until_success(struct fixture *f, const char *key, op_fn op)
{
    static struct snapshot before;
    int64_t rc;

    for (long n = 0;; n++) {
        take(f, &before, key);
        f->counts.fail_after = n;
        rc = op(f->st);
        f->counts.fail_after = -1;
        if (rc != GOBLIN_ENOMEM) {
            if (getenv("ZSET_DEBUG"))
                fprintf(stderr, "succeeded after %ld failures\n", n);
            assert_true(n > 0 || rc >= 0);
            return rc;
        }
        same(f, &before, key);
        assert_true(n < 10000);
    }
}

static struct goblin_zpair batch[200];
static char batch_names[200][24];

static int64_t op_batch(goblin_store *st)
{
    return goblin_zset_add_pairs(st, S("z"), GOBLIN_ZADD_CH, batch, 200);
}

static void make_batch(int base, int step)
{
    for (int i = 0; i < 200; i++) {
        scan_name(batch_names[i], base + i * step);
        batch[i].member = slice_of(batch_names[i], strlen(batch_names[i]));
        batch[i].score = (double)((i * 7919) % 1000) + 0.5;
    }
}

static void test_enomem_zadd_batch_into_new_key(void **state)
{
    struct fixture *f = *state;

    make_batch(0, 1);
    assert_int_equal(until_success(f, "z", op_batch), 200);
    check_obj(f->st, "z");
}

static void test_enomem_zadd_batch_converting_compact(void **state)
{
    struct fixture *f = *state;

    fill(f->st, "z", 100, 1);
    make_batch(50, 1);
    assert_int_equal(until_success(f, "z", op_batch), 200);
    assert_int_equal(goblin_zset_card(f->st, S("z")), 250);
}

static void test_enomem_zadd_batch_into_full_set(void **state)
{
    struct fixture *f = *state;

    fill(f->st, "z", 3000, 1);
    make_batch(2900, 3); /* 34 updates (moves), 166 new members */
    assert_int_equal(until_success(f, "z", op_batch), 200);
    assert_int_equal(goblin_zset_card(f->st, S("z")), 3166);
}

static int64_t op_single(goblin_store *st)
{
    return goblin_zset_add(st, S("z"), S("m1234567"), 17.25);
}

static int64_t op_incr(goblin_store *st)
{
    double s;
    int rc = goblin_zset_incr(st, S("z"), 0, S("m5"), 1.5, &s);

    return rc;
}

static void test_enomem_single_adds(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(until_success(f, "z", op_single), 1);
    fill(f->st, "z", 127, 1);
    assert_int_equal(goblin_zset_rem(f->st, S("z"), &S("m1234567"), 1), 1);
    assert_int_equal(until_success(f, "z", op_single), 1); /* 128: compact */
    assert_int_equal(goblin_zset_rem(f->st, S("z"), &S("m1234567"), 1), 1);
    add(f->st, "z", "x", 0);
    assert_int_equal(until_success(f, "z", op_single), 1); /* converts */
    assert_int_equal(until_success(f, "z", op_incr), 1);
    fill(f->st, "z", 3000, 1);
    assert_int_equal(until_success(f, "z", op_incr), 1);
}

static int64_t op_move_into_full_leaf(goblin_store *st)
{
    return goblin_zset_add(st, S("z"), S("m10"), 1500.5);
}

/* Leaves of an ordered load are full: moving a member into the middle of
 * one must split it, and a failed split changes nothing. */
static void test_enomem_update_that_splits(void **state)
{
    struct fixture *f = *state;

    fill(f->st, "z", 3000, 1);
    assert_int_equal(until_success(f, "z", op_move_into_full_leaf), 0);
    check_obj(f->st, "z");
}

static void test_score_updates_keep_the_tree_valid(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    uint64_t x = 7;
    char m[24];
    double s;

    fill(st, "u", 2000, 1);
    for (int i = 0; i < 3000; i++) {
        int k;

        x = x * 6364136223846793005ull + 1442695040888963407ull;
        k = (int)((x >> 33) % 2000);
        scan_name(m, k);
        assert_int_equal(goblin_zset_score(st, S("u"),
                                           slice_of(m, strlen(m)), &s), 1);
        switch (i % 4) {
        case 0: s += 1; break;                       /* stays in its leaf */
        case 1: s = (double)((x >> 40) % 2000); break; /* anywhere */
        case 2: s = -1.0 * i; break;                 /* to the front */
        default: s = 1e6 + i + 0.25; break;          /* to the end, wide */
        }
        add(st, "u", m, s);
        check_obj(st, "u");
    }
}

static int64_t op_union(goblin_store *st)
{
    struct goblin_slice keys[2] = {S("z"), S("w")};

    return goblin_zset_combine_store(st, S("z"), GOBLIN_ZSET_UNION, keys, 2,
                                     NULL, GOBLIN_ZAGG_SUM);
}

static int64_t op_rangestore(goblin_store *st)
{
    struct goblin_zrange r;

    memset(&r, 0, sizeof(r));
    r.start = 10;
    r.stop = -10;
    return goblin_zset_range_store(st, S("z"), S("z"), &r);
}

static void test_enomem_store_operations(void **state)
{
    struct fixture *f = *state;

    fill(f->st, "z", 300, 1);
    fill(f->st, "w", 200, 2);
    assert_int_equal(until_success(f, "z", op_union), 350);
    assert_int_equal(until_success(f, "z", op_rangestore), 331);
}

/* ---- tree invariants ---- */

static struct ztree *tree_of(goblin_store *st, const char *key)
{
    void **slot;

    assert_int_equal(goblin__key_lookup(st, slice_of(key, strlen(key)),
                                        GOBLIN_TYPE_ZSET, &slot), 1);
    assert_int_equal(*(uint8_t *)*slot, ZK_FULL);
    return &((struct zfull *)*slot)->tree;
}

static double fill_ratio(goblin_store *st, const char *key)
{
    struct ztree *t = tree_of(st, key);
    size_t leaves;

    assert_int_equal(goblin__zt_check(t, &leaves), 0);
    return (double)t->count / (double)(leaves * ZT_CAP_N);
}

static void test_ordered_inserts_fill_leaves(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    char m[24];

    for (int i = 0; i < 20000; i++) {
        scan_name(m, i);
        add(st, "up", m, i);
        scan_name(m, 20000 - i);
        add(st, "down", m, 20000 - i);
    }
    assert_true(fill_ratio(st, "up") > 0.97);
    assert_true(fill_ratio(st, "down") > 0.97);
}

static void test_random_inserts_fill_leaves_well(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    uint64_t x = 12345;
    char m[24];

    for (int i = 0; i < 30000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        scan_name(m, i);
        add(st, "r", m, (double)(x >> 40));
    }
    assert_true(fill_ratio(st, "r") > 0.75);
}

/* The validator runs after every step, growing through many splits (some
 * leaves wide, some narrow) and shrinking to nothing in a scattered order. */
static void test_growth_and_deletes_down_to_empty(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    uint64_t x = 99;
    char m[24];

    for (int i = 0; i < 3000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        scan_name(m, i);
        add(st, "t", m, (double)(x >> 52) + (i % 5 ? 0 : 0.5));
        check_obj(st, "t");
    }
    for (int i = 0; i < 3000; i++) {
        int k = (int)((uint64_t)i * 761 % 3000);

        scan_name(m, k);
        assert_int_equal(goblin_zset_rem(st, S("t"), &(struct goblin_slice)
                                         {m, strlen(m)}, 1), 1);
        check_obj(st, "t");
    }
    assert_int_equal(goblin_key_exists(st, S("t")), 0);
}

static void test_range_removals_on_big_sets(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct goblin_zrange r;

    fill(st, "t", 20000, 1);
    memset(&r, 0, sizeof(r));
    r.start = 100;
    r.stop = 15000;
    assert_int_equal(goblin_zset_rem_range(st, S("t"), &r), 14901);
    check_obj(st, "t");
    r.by = GOBLIN_ZRANGE_BY_SCORE;
    r.min = 15500;
    r.max = 19000;
    assert_int_equal(goblin_zset_rem_range(st, S("t"), &r), 3501);
    check_obj(st, "t");
    assert_int_equal(goblin_zset_card(st, S("t")), 20000 - 14901 - 3501);
    r.min = -INFINITY;
    r.max = INFINITY;
    assert_int_equal(goblin_zset_rem_range(st, S("t"), &r), 1598);
    assert_int_equal(goblin_key_exists(st, S("t")), 0);
}

static size_t long_member(char *buf, int i)
{
    size_t len = i % 4 == 0 ? 2100 + (size_t)(i % 2000) : 100 + (size_t)i;

    memset(buf, 'a' + i % 26, len);
    snprintf(buf, 16, "%07d", i);
    buf[7] = '-';
    return len;
}

/* Long members live out of line; removing most of a set makes the arena
 * compact, moving records (and with them the pointers to those blocks). */
static void test_long_members_survive_compaction(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    static char big[5000];
    struct zfull *z;
    void **slot;
    double s;

    for (int i = 0; i < 4000; i++)
        assert_int_equal(goblin_zset_add(st, S("b"),
                                         slice_of(big, long_member(big, i)),
                                         i % 13), 1);
    for (int j = 0; j < 3000; j++) {
        int i = (int)((uint64_t)j * 761 % 4000);

        assert_int_equal(goblin_zset_rem(st, S("b"), &(struct goblin_slice)
                                         {big, long_member(big, i)}, 1), 1);
        if (j % 100 == 0)
            check_obj(st, "b");
    }
    check_obj(st, "b");
    assert_int_equal(goblin__key_lookup(st, S("b"), GOBLIN_TYPE_ZSET, &slot),
                     1);
    z = *slot;
    assert_true(z->ar.base > 0);
    assert_true(z->ar.dead * 4 <= z->ar.live + 64 * 1024);
    for (int j = 3000; j < 4000; j++) {
        int i = (int)((uint64_t)j * 761 % 4000);

        assert_int_equal(goblin_zset_score(st, S("b"),
                                           slice_of(big, long_member(big, i)),
                                           &s), 1);
        assert_true(s == i % 13);
    }
}

/* Members coming and going with the same sizes reuse the dead records:
 * the arena neither grows nor needs compacting. */
static void test_same_size_churn_reuses_dead_records(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    struct zfull *z;
    void **slot;
    size_t bytes;
    char m[24];

    for (int i = 0; i < 3000; i++) {
        snprintf(m, sizeof(m), "user:%06d", i);
        add(st, "c", m, i);
    }
    assert_int_equal(goblin__key_lookup(st, S("c"), GOBLIN_TYPE_ZSET, &slot),
                     1);
    z = *slot;
    bytes = z->ar.bytes;
    for (int i = 0; i < 30000; i++) {
        snprintf(m, sizeof(m), "user:%06d", i);
        assert_int_equal(goblin_zset_rem(st, S("c"), &(struct goblin_slice)
                                         {m, strlen(m)}, 1), 1);
        snprintf(m, sizeof(m), "user:%06d", i + 3000);
        add(st, "c", m, -i);
    }
    check_obj(st, "c");
    assert_true(z->ar.bytes <= bytes);
    assert_int_equal(z->ar.base, 0);
    assert_int_equal(z->ar.dead, 0);
}

/* ---- standalone objects ---- */

static void test_standalone_object_calls(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    static struct goblin_zpair pairs[3000];
    static char names[3000][24];
    struct goblin__zadd_result res;
    struct goblin__zset_walk w;
    struct goblin_slice m;
    void *obj;
    size_t rank;
    double s;

    for (int i = 0; i < 3000; i++) {
        snprintf(names[i], 24, "n%05d", i);
        pairs[i].member = slice_of(names[i], 6);
        pairs[i].score = i / 2;
    }
    assert_int_equal(goblin__zset_obj_from_sorted(st, pairs, 3000, &obj), 0);
    assert_int_equal(goblin__zset_obj_check(obj), 0);
    assert_int_equal(goblin__zset_obj_card(obj), 3000);
    assert_true(goblin__zset_obj_bytes(obj) > 3000 * 20);
    assert_int_equal(goblin__zset_obj_rank(obj, S("n01001"), &rank, &s), 1);
    assert_int_equal(rank, 1001);
    assert_true(s == 500);
    assert_int_equal(goblin__zset_obj_add(st, &obj, 0, false,
                                          &(struct goblin_zpair){-1,
                                                                 S("n02999")},
                                          1, &res), 0);
    assert_int_equal(res.updated, 1);
    goblin__zset_obj_walk(obj, 0, 2, false, &w);
    assert_int_equal(goblin__zset_walk_next(&w, &m, &s), 1);
    assert_true(s == -1 && m.len == 6 && memcmp(m.ptr, "n02999", 6) == 0);
    goblin__zset_obj_remove_ranks(st, &obj, 0, 2990);
    assert_int_equal(goblin__zset_obj_card(obj), 10);
    /* compact again, still a skiplist as Redis sees it */
    assert_string_equal(goblin__zset_encoding(obj), "skiplist");
    assert_true(goblin__zset_obj_bytes(obj) < 200);
    assert_int_equal(goblin__zset_obj_check(obj), 0);
    goblin__zset_free(st, obj);
    pairs[1] = pairs[0];
    assert_int_equal(goblin__zset_obj_from_sorted(st, pairs, 3, &obj),
                     GOBLIN_EINVAL);
    pairs[1].score = NAN;
    assert_int_equal(goblin__zset_obj_from_sorted(st, pairs + 1, 1, &obj),
                     GOBLIN_EINVAL);
}

/* What an object says it holds is exactly what the store accounts. */
static void test_object_bytes_match_the_accounting(void **state)
{
    goblin_store *st = ((struct fixture *)*state)->st;
    static struct goblin_zpair pairs[5000];
    static char names[5000][24];
    struct goblin__zadd_result res;
    size_t before = goblin_store_used_memory(st);
    void *obj;

    for (int i = 0; i < 5000; i++) {
        snprintf(names[i], 24, "k%05d%s", i, i % 7 ? "" : "-a-longer-one");
        pairs[i].member = slice_of(names[i], strlen(names[i]));
        pairs[i].score = i % 3 ? i : i + 0.5;
    }
    for (size_t n = 1; n <= 5000; n *= 4) {
        assert_int_equal(goblin__zset_obj_from_sorted(st, pairs, n, &obj), 0);
        assert_int_equal(goblin_store_used_memory(st) - before,
                         goblin__zset_obj_bytes(obj));
        for (size_t i = 0; i < n; i += 3) {
            struct goblin_zpair p = {-(double)i, pairs[i].member};

            assert_int_equal(goblin__zset_obj_add(st, &obj, 0, false, &p, 1,
                                                  &res), 0);
        }
        goblin__zset_obj_remove_ranks(st, &obj, 0, n / 2);
        assert_int_equal(goblin_store_used_memory(st) - before,
                         goblin__zset_obj_bytes(obj));
        goblin__zset_free(st, obj);
        assert_int_equal(goblin_store_used_memory(st), before);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_union_weights_and_aggregates),
        FIXTURE_TEST(test_inter_and_diff),
        FIXTURE_TEST(test_inf_times_zero_and_nan_sums_are_zero),
        FIXTURE_TEST(test_inter_passes_nan_products_to_the_aggregate),
        FIXTURE_TEST(test_store_replaces_and_empty_result_deletes),
        FIXTURE_TEST(test_intercard_with_limit),
        FIXTURE_TEST(test_big_union_matches_by_hand),
        FIXTURE_TEST(test_range_store),
        FIXTURE_TEST(test_randmember_counts),
        FIXTURE_TEST(test_randmember_whole_set_comes_from_the_top),
        cmocka_unit_test(test_randmember_is_reproducible_per_seed),
        FIXTURE_TEST(test_zscan_sees_every_stable_member_under_churn),
        FIXTURE_TEST(test_zscan_compact_set_comes_whole),
        FIXTURE_TEST(test_zscan_stale_cursor_restarts),
        FIXTURE_TEST(test_enomem_zadd_batch_into_new_key),
        FIXTURE_TEST(test_enomem_zadd_batch_converting_compact),
        FIXTURE_TEST(test_enomem_zadd_batch_into_full_set),
        FIXTURE_TEST(test_enomem_single_adds),
        FIXTURE_TEST(test_enomem_update_that_splits),
        FIXTURE_TEST(test_score_updates_keep_the_tree_valid),
        FIXTURE_TEST(test_enomem_store_operations),
        FIXTURE_TEST(test_ordered_inserts_fill_leaves),
        FIXTURE_TEST(test_random_inserts_fill_leaves_well),
        FIXTURE_TEST(test_growth_and_deletes_down_to_empty),
        FIXTURE_TEST(test_range_removals_on_big_sets),
        FIXTURE_TEST(test_long_members_survive_compaction),
        FIXTURE_TEST(test_same_size_churn_reuses_dead_records),
        FIXTURE_TEST(test_standalone_object_calls),
        FIXTURE_TEST(test_object_bytes_match_the_accounting),
    };

    return cmocka_run_group_tests_name("zset_ops", tests, NULL, NULL);
}
