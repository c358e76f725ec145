/* test_list_model.c - seeded random operations on one list key, played
 * against a plain array model, the whole list and the store's invariants
 * compared after every step. Lengths are mostly short, sometimes past
 * the 255-byte long form, sometimes past a whole block, so both forms,
 * block splits and merges back to compact are all reached. */
#include <stdio.h>

#include "testutil.h"
#include "../../lib/store/list.h"
#include "../../lib/store/store.h"

struct elem {
    char *p;
    size_t len;
};

struct model {
    struct elem *v;
    size_t n, cap;
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static struct elem make_elem(void)
{
    uint64_t r = rnd() % 100;
    size_t len = r < 80 ? rnd() % 20 : r < 97 ? 200 + rnd() % 200
                                               : 3000 + rnd() % 3000;
    struct elem e = {malloc(len + 1), len};

    /* A small alphabet, so LREM, LPOS and LINSERT find matches. */
    for (size_t i = 0; i < len; i++)
        e.p[i] = (char)('a' + rnd() % 2);
    return e;
}

static void m_insert(struct model *m, size_t at, struct elem e)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 64;
        m->v = realloc(m->v, m->cap * sizeof(m->v[0]));
    }
    memmove(m->v + at + 1, m->v + at, (m->n - at) * sizeof(m->v[0]));
    m->v[at] = e;
    m->n++;
}

static void m_delete(struct model *m, size_t at, size_t cnt)
{
    for (size_t i = at; i < at + cnt; i++)
        free(m->v[i].p);
    memmove(m->v + at, m->v + at + cnt,
            (m->n - at - cnt) * sizeof(m->v[0]));
    m->n -= cnt;
}

static bool e_eq(struct elem a, struct goblin_slice b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.p, b.ptr, a.len) == 0);
}

struct cmp {
    const struct model *m;
    size_t i;
    bool ok;
};

static int cmp_visit(void *ctx, struct goblin_slice e)
{
    struct cmp *c = ctx;

    if (c->i >= c->m->n || !e_eq(c->m->v[c->i], e))
        c->ok = false;
    c->i++;
    return 0;
}

static void compare(goblin_store *st, const struct model *m, int step)
{
    struct cmp c = {m, 0, true};
    int64_t n = goblin_list_range(st, S("l"), 0, -1, cmp_visit, &c);

    if (n != (int64_t)m->n || !c.ok || c.i != m->n)
        fail_msg("step %d: %lld elements, the model %lld, %s at %lld", step,
                 (long long)n, (long long)m->n, c.ok ? "same" : "differs",
                 (long long)c.i);
    assert_int_equal(goblin_list_len(st, S("l")), (int64_t)m->n);
    assert_int_equal(goblin__store_check(st), 0);
}

static struct goblin_slice sl(struct elem e)
{
    return slice_of(e.p, e.len);
}

static void step_push(goblin_store *st, struct model *m)
{
    bool head = rnd() % 2;
    size_t n = 1 + rnd() % (rnd() % 8 == 0 ? 200 : 4);
    struct goblin_slice s[200];
    struct elem e[200];

    for (size_t i = 0; i < n; i++) {
        e[i] = make_elem();
        s[i] = sl(e[i]);
    }
    assert_int_equal(goblin_list_push(st, S("l"), head ? GOBLIN_LIST_HEAD
                                                       : GOBLIN_LIST_TAIL,
                                      s, n, 0),
                     (int64_t)(m->n + n));
    for (size_t i = 0; i < n; i++)
        m_insert(m, head ? 0 : m->n, e[i]);
}

struct popcheck {
    const struct model *m;
    bool tail;
    size_t i;
    bool ok;
};

static int pop_visit(void *ctx, struct goblin_slice e)
{
    struct popcheck *p = ctx;
    size_t at = p->tail ? p->m->n - 1 - p->i : p->i;

    if (!e_eq(p->m->v[at], e))
        p->ok = false;
    p->i++;
    return 0;
}

static void step_pop(goblin_store *st, struct model *m)
{
    bool tail = rnd() % 2;
    size_t cnt = rnd() % 4 == 0 ? rnd() % 300 : rnd() % 3;
    struct popcheck p = {m, tail, 0, true};
    size_t n = cnt < m->n ? cnt : m->n;

    assert_int_equal(goblin_list_pop(st, S("l"), tail ? GOBLIN_LIST_TAIL
                                                      : GOBLIN_LIST_HEAD,
                                     (int64_t)cnt, pop_visit, &p),
                     (int64_t)n);
    assert_true(p.ok);
    m_delete(m, tail ? m->n - n : 0, n);
}

static void step_middle(goblin_store *st, struct model *m, uint64_t op)
{
    struct goblin_slice got;
    struct elem e;
    int64_t len;
    size_t at;

    if (m->n == 0)
        return;
    at = rnd() % m->n;
    switch (op) {
    case 0: /* LSET */
        e = make_elem();
        assert_int_equal(goblin_list_set(st, S("l"), (int64_t)at, sl(e)), 0);
        free(m->v[at].p);
        m->v[at] = e;
        break;
    case 1: { /* LINSERT before or after the first match of a pivot */
        struct elem piv = m->v[at];
        size_t first = 0;
        int after = rnd() % 2;

        while (!e_eq(m->v[first], sl(piv)))
            first++;
        e = make_elem();
        assert_int_equal(goblin_list_insert(st, S("l"), after, sl(piv),
                                            sl(e), &len), 1);
        m_insert(m, first + (size_t)after, e);
        assert_int_equal(len, (int64_t)m->n);
        break;
    }
    case 2: { /* LREM */
        int64_t count = (int64_t)(rnd() % 5) - 2, removed = 0;
        struct elem t = {malloc(m->v[at].len + 1), m->v[at].len};

        memcpy(t.p, m->v[at].p, t.len);
        if (count >= 0) {
            for (size_t i = 0; i < m->n;) {
                if ((count == 0 || removed < count) && e_eq(m->v[i], sl(t))) {
                    m_delete(m, i, 1);
                    removed++;
                } else {
                    i++;
                }
            }
        } else {
            for (size_t i = m->n; i-- > 0;)
                if (removed < -count && e_eq(m->v[i], sl(t))) {
                    m_delete(m, i, 1);
                    removed++;
                }
        }
        assert_int_equal(goblin_list_rem(st, S("l"), count, sl(t)), removed);
        free(t.p);
        break;
    }
    case 3: { /* LTRIM, usually keeping most */
        int64_t a = (int64_t)(rnd() % 4), b = -1 - (int64_t)(rnd() % 4);

        assert_int_equal(goblin_list_trim(st, S("l"), a, b), 0);
        size_t keep_to = (size_t)((int64_t)m->n + b);
        if ((int64_t)m->n + b < a) {
            m_delete(m, 0, m->n);
        } else {
            m_delete(m, keep_to + 1, m->n - keep_to - 1);
            m_delete(m, 0, (size_t)a);
        }
        break;
    }
    default: /* LINDEX */
        assert_int_equal(goblin_list_index(st, S("l"), (int64_t)at, &got), 1);
        assert_true(e_eq(m->v[at], got));
        assert_int_equal(goblin_list_index(st, S("l"), (int64_t)at -
                                           (int64_t)m->n, &got), 1);
        assert_true(e_eq(m->v[at], got));
        break;
    }
}

static void run_model(goblin_store *st, uint64_t seed, int steps)
{
    struct model m = {0};

    rng = seed;
    for (int i = 0; i < steps; i++) {
        uint64_t r = rnd() % 16;

        /* Grow while small, then keep a balance around a few thousand. */
        if (r < 5 || (m.n < 50 && r < 9))
            step_push(st, &m);
        else if (r < 8 || m.n > 4000)
            step_pop(st, &m);
        else
            step_middle(st, &m, r - 8 > 4 ? 4 : r - 8);
        compare(st, &m, i);
    }
    m_delete(&m, 0, m.n);
    free(m.v);
    assert_int_equal(goblin_list_trim(st, S("l"), 1, 0), 0);
    assert_int_equal(goblin_key_type(st, S("l")), GOBLIN_TYPE_NONE);
}

static void test_random_operations_match_the_model(void **state)
{
    struct fixture *f = *state;

    run_model(f->st, 12345, 3000);
    run_model(f->st, 777, 2000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_random_operations_match_the_model),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
