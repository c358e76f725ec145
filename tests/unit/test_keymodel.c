/* test_keymodel.c - a seeded random walk over strings and the keyspace:
 * every operation is applied to the store and to a plain model of it, the
 * answers must agree, and after every step the whole store must equal the
 * model (keys, types, values, deadlines). */
#include "test_keys_util.h"

#define NKEYS 24
#define STEPS 10000

struct ment {
    bool present;
    int type;          /* GOBLIN_TYPE_STRING or GOBLIN_TYPE_HASH */
    char *val;
    size_t len;
    int64_t deadline;  /* -1: none */
};

struct model {
    struct ment k[NKEYS];
    uint64_t rng;
    struct fixture *f;
};

static uint64_t rnd(struct model *m, uint64_t n)
{
    m->rng ^= m->rng << 13;
    m->rng ^= m->rng >> 7;
    m->rng ^= m->rng << 17;
    return m->rng % n;
}

/* Key i: three bytes, some with a NUL inside. */
static struct goblin_slice key_of(size_t i, char *buf)
{
    buf[0] = 'k';
    buf[1] = i % 2 ? '\0' : '_';
    buf[2] = (char)('a' + i / 2);
    return slice_of(buf, 3);
}

static int64_t now(struct model *m)
{
    return m->f->clock.now_ms;
}

/* The model's view: an expired key is absent. */
static struct ment *alive(struct model *m, size_t i)
{
    struct ment *e = &m->k[i];

    if (e->present && e->deadline != -1 && now(m) > e->deadline) {
        free(e->val);
        memset(e, 0, sizeof(*e));
    }
    return e->present ? e : NULL;
}

static void put(struct ment *e, const void *v, size_t len, int64_t deadline)
{
    char *n = malloc(len + 1);

    memcpy(n, v, len);
    free(e->val);
    e->val = n;
    e->len = len;
    e->present = true;
    e->type = GOBLIN_TYPE_STRING;
    e->deadline = deadline;
}

static void drop(struct ment *e)
{
    free(e->val);
    memset(e, 0, sizeof(*e));
}

static struct goblin_slice rand_value(struct model *m, char *buf)
{
    static const char *const pool[] = {
        "", "0", "1", "-7", "42", "9223372036854775807",
        "-9223372036854775808", "01", "abc", "x\0y", "3.5",
        "a value longer than forty-four bytes, so it is raw",
    };
    size_t i = (size_t)rnd(m, sizeof(pool) / sizeof(pool[0]));
    size_t len = i == 9 ? 3 : strlen(pool[i]);

    memcpy(buf, pool[i], len);
    return slice_of(buf, len);
}

static void check_store(struct model *m)
{
    struct snap a = snap_take(m->f->st), b = {NULL, 0, 0};
    char kb[3];

    for (size_t i = 0; i < NKEYS; i++) {
        struct ment *e = alive(m, i);
        struct goblin_key_info in;

        if (e == NULL)
            continue;
        in.key = key_of(i, kb);
        in.type = (enum goblin_type)e->type;
        in.deadline_ms = e->deadline;
        in.value = slice_of(e->type == GOBLIN_TYPE_STRING ? e->val : "",
                            e->type == GOBLIN_TYPE_STRING ? e->len : 0);
        snap_visit(&b, &in);
    }
    if (b.n > 1)
        qsort(b.lines, b.n, sizeof(char *), snap_cmp);
    snap_assert_equal(&a, &b);
    snap_free(&a);
    snap_free(&b);
}

/* string2ll, written plainly. */
static bool parse_ll(const char *s, size_t n, int64_t *out)
{
    bool neg = n > 0 && s[0] == '-';
    size_t i = neg ? 1 : 0;
    __int128 v = 0;

    if (i == n || (s[i] == '0' && (n - i > 1 || neg)))
        return false;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
        if (v > (__int128)INT64_MAX + 1)
            return false;
    }
    v = neg ? -v : v;
    if (v > INT64_MAX || v < INT64_MIN)
        return false;
    *out = (int64_t)v;
    return true;
}

static void op_get(struct model *m, struct goblin_slice k, size_t i)
{
    struct ment *e = alive(m, i);
    struct goblin_slice out;
    int r = goblin_str_get(m->f->st, k, &out);

    if (e == NULL) {
        assert_int_equal(r, 0);
    } else if (e->type != GOBLIN_TYPE_STRING) {
        assert_int_equal(r, GOBLIN_EWRONGTYPE);
    } else {
        assert_int_equal(r, 1);
        assert_int_equal(out.len, e->len);
        if (e->len)
            assert_memory_equal(out.ptr, e->val, e->len);
    }
}

static void op_set(struct model *m, struct goblin_slice k, size_t i)
{
    struct goblin_set_options o = {0};
    struct ment *e = alive(m, i);
    struct goblin_slice old = {NULL, 0};
    char vb[64];
    struct goblin_slice v = rand_value(m, vb);
    int64_t deadline = -1;
    int r, expect = 0;

    o.cond = (enum goblin_set_cond)rnd(m, 3);
    o.get = (int)rnd(m, 2);
    o.ttl = (enum goblin_ttl_mode)rnd(m, 6);
    o.ttl_value = (int64_t)rnd(m, 3000);
    if (o.ttl == GOBLIN_TTL_PXAT)
        o.ttl_value = now(m) - 1500 + o.ttl_value;
    if (o.ttl == GOBLIN_TTL_EXAT)
        o.ttl = GOBLIN_TTL_PX;
    r = goblin_str_set(m->f->st, k, v, &o, &old);
    if ((o.ttl >= GOBLIN_TTL_EX && o.ttl <= GOBLIN_TTL_PXAT) &&
        o.ttl_value <= 0) {
        assert_int_equal(r, GOBLIN_EINVAL);
        return;
    }
    if (o.get && e != NULL && e->type != GOBLIN_TYPE_STRING) {
        assert_int_equal(r, GOBLIN_EWRONGTYPE);
        return;
    }
    if (o.get && e != NULL)
        expect |= GOBLIN_SET_HAD_OLD;
    if (expect & GOBLIN_SET_HAD_OLD) {
        assert_true(r >= 0 && (r & GOBLIN_SET_HAD_OLD));
        assert_int_equal(old.len, e->len);
        if (e->len)
            assert_memory_equal(old.ptr, e->val, e->len);
    }
    if ((o.cond == GOBLIN_SET_NX && e != NULL) ||
        (o.cond == GOBLIN_SET_XX && e == NULL)) {
        assert_int_equal(r, expect);
        return;
    }
    assert_int_equal(r, expect | GOBLIN_SET_DONE);
    if (o.ttl == GOBLIN_TTL_EX)
        deadline = now(m) + o.ttl_value * 1000;
    else if (o.ttl == GOBLIN_TTL_PX)
        deadline = now(m) + o.ttl_value;
    else if (o.ttl == GOBLIN_TTL_PXAT)
        deadline = o.ttl_value;
    else if (o.ttl == GOBLIN_TTL_KEEP && e != NULL)
        deadline = e->deadline;
    put(&m->k[i], v.ptr, v.len, deadline);
}

static void op_append_or_setrange(struct model *m, struct goblin_slice k,
                                  size_t i)
{
    struct ment *e = alive(m, i);
    char vb[64], buf[256];
    struct goblin_slice v = rand_value(m, vb);
    bool append = rnd(m, 2);
    size_t off = append ? (e ? e->len : 0) : (size_t)rnd(m, 12), len;
    int64_t r;

    if (append)
        r = goblin_str_append(m->f->st, k, v);
    else
        r = goblin_str_setrange(m->f->st, k, (int64_t)off, v);
    if (e != NULL && e->type != GOBLIN_TYPE_STRING) {
        assert_int_equal(r, GOBLIN_EWRONGTYPE);
        return;
    }
    if (!append && v.len == 0) {
        assert_int_equal(r, e ? (int64_t)e->len : 0);
        return;
    }
    len = e ? e->len : 0;
    memset(buf, 0, sizeof(buf));
    if (e && len)
        memcpy(buf, e->val, len);
    if (v.len)
        memcpy(buf + off, v.ptr, v.len);
    if (off + v.len > len)
        len = off + v.len;
    if (len > 200) {
        /* Keep values short: start over. */
        assert_int_equal(goblin_key_delete(m->f->st, k), 1);
        drop(&m->k[i]);
        return;
    }
    assert_int_equal(r, (int64_t)len);
    put(&m->k[i], buf, len, e ? e->deadline : -1);
}

static void op_incr(struct model *m, struct goblin_slice k, size_t i)
{
    static const int64_t deltas[] = {1, -1, 5, INT64_MAX, INT64_MIN, 1000};
    struct ment *e = alive(m, i);
    int64_t d = deltas[rnd(m, 6)], cur = 0, res = 0, sum;
    char buf[32];
    int r = goblin_str_incrby(m->f->st, k, d, &res);

    if (e != NULL && e->type != GOBLIN_TYPE_STRING) {
        assert_int_equal(r, GOBLIN_EWRONGTYPE);
        return;
    }
    if (e != NULL && !parse_ll(e->val, e->len, &cur)) {
        assert_int_equal(r, GOBLIN_ENOTINT);
        return;
    }
    if (__builtin_add_overflow(cur, d, &sum)) {
        assert_int_equal(r, GOBLIN_EOVERFLOW);
        return;
    }
    assert_int_equal(r, 0);
    assert_int_equal(res, sum);
    snprintf(buf, sizeof(buf), "%lld", (long long)sum);
    put(&m->k[i], buf, strlen(buf), e ? e->deadline : -1);
}

static void op_getdel_getset_getex(struct model *m, struct goblin_slice k,
                                   size_t i)
{
    struct ment *e = alive(m, i);
    struct goblin_slice out = {NULL, 0};
    char vb[64];
    struct goblin_slice v = rand_value(m, vb);
    int which = (int)rnd(m, 3), r;

    if (which == 0)
        r = goblin_str_getdel(m->f->st, k, &out);
    else if (which == 1)
        r = goblin_str_getset(m->f->st, k, v, &out);
    else
        r = goblin_str_getex(m->f->st, k, GOBLIN_TTL_PX, 700, &out);
    if (e != NULL && e->type != GOBLIN_TYPE_STRING) {
        assert_int_equal(r, GOBLIN_EWRONGTYPE);
        return;
    }
    assert_int_equal(r, e != NULL ? 1 : 0);
    if (e != NULL) {
        assert_int_equal(out.len, e->len);
        if (e->len)
            assert_memory_equal(out.ptr, e->val, e->len);
    }
    if (which == 0 && e != NULL)
        drop(e);
    else if (which == 1)
        put(&m->k[i], v.ptr, v.len, -1);
    else if (e != NULL)
        e->deadline = now(m) + 700;
}

static void op_expire(struct model *m, struct goblin_slice k, size_t i)
{
    static const int flag_sets[] = {
        0, GOBLIN_EXPIRE_NX, GOBLIN_EXPIRE_XX, GOBLIN_EXPIRE_GT,
        GOBLIN_EXPIRE_LT, GOBLIN_EXPIRE_XX | GOBLIN_EXPIRE_GT,
    };
    struct ment *e = alive(m, i);
    int flags = flag_sets[rnd(m, 6)];
    int64_t ms = (int64_t)rnd(m, 4000) - 500, when = now(m) + ms;
    int r = goblin_key_pexpire(m->f->st, k, ms, flags), expect = 1;

    if (e == NULL)
        expect = 0;
    else if ((flags & GOBLIN_EXPIRE_NX) && e->deadline != -1)
        expect = 0;
    else if ((flags & GOBLIN_EXPIRE_XX) && e->deadline == -1)
        expect = 0;
    else if ((flags & GOBLIN_EXPIRE_GT) &&
             (e->deadline == -1 || when <= e->deadline))
        expect = 0;
    else if ((flags & GOBLIN_EXPIRE_LT) && e->deadline != -1 &&
             when >= e->deadline)
        expect = 0;
    assert_int_equal(r, expect);
    if (expect && when <= now(m))
        drop(e);
    else if (expect)
        e->deadline = when;
}

static void op_ttl_persist(struct model *m, struct goblin_slice k, size_t i)
{
    struct ment *e = alive(m, i);

    if (rnd(m, 2)) {
        int64_t t = goblin_key_pttl(m->f->st, k);

        assert_int_equal(t, e == NULL ? -2 : e->deadline == -1
                                                 ? -1
                                                 : e->deadline - now(m));
        return;
    }
    assert_int_equal(goblin_key_persist(m->f->st, k),
                     e != NULL && e->deadline != -1 ? 1 : 0);
    if (e != NULL)
        e->deadline = -1;
}

static void op_rename(struct model *m, struct goblin_slice k, size_t i)
{
    size_t j = (size_t)rnd(m, NKEYS);
    char kb[3];
    struct goblin_slice dst = key_of(j, kb);
    struct ment *src = alive(m, i), *d = alive(m, j);
    int nx = (int)rnd(m, 2);
    int r = goblin_key_rename(m->f->st, k, dst, nx);

    if (src == NULL) {
        assert_int_equal(r, GOBLIN_ENOKEY);
        return;
    }
    if (i == j) {
        assert_int_equal(r, nx ? 0 : 1);
        return;
    }
    if (nx && d != NULL) {
        assert_int_equal(r, 0);
        return;
    }
    assert_int_equal(r, 1);
    free(m->k[j].val);
    m->k[j] = *src;
    memset(src, 0, sizeof(*src));
}

static void op_mset(struct model *m)
{
    struct goblin_slice keys[3], vals[3];
    char kb[3][3], vb[3][64];
    size_t idx[3], n = 1 + (size_t)rnd(m, 3);
    bool nx = rnd(m, 2), any = false;
    int r;

    for (size_t j = 0; j < n; j++) {
        idx[j] = (size_t)rnd(m, NKEYS);
        keys[j] = key_of(idx[j], kb[j]);
        vals[j] = rand_value(m, vb[j]);
        any = any || alive(m, idx[j]) != NULL;
    }
    r = nx ? goblin_str_msetnx(m->f->st, keys, vals, n)
           : goblin_str_mset(m->f->st, keys, vals, n);
    if (nx && any) {
        assert_int_equal(r, 0);
        return;
    }
    assert_int_equal(r, nx ? 1 : 0);
    for (size_t j = 0; j < n; j++)
        put(&m->k[idx[j]], vals[j].ptr, vals[j].len, -1);
}

static void op_misc(struct model *m, struct goblin_slice k, size_t i)
{
    struct ment *e = alive(m, i);
    size_t expired = 0;

    switch (rnd(m, 5)) {
    case 0:
        assert_int_equal(goblin_key_delete(m->f->st, k), e ? 1 : 0);
        if (e)
            drop(e);
        break;
    case 1:
        if (e == NULL) {
            add_fake_hash(m->f->st, k);
            m->k[i].present = true;
            m->k[i].type = GOBLIN_TYPE_HASH;
            m->k[i].deadline = -1;
        }
        break;
    case 2:
        m->f->clock.now_ms += (int64_t)rnd(m, 400);
        break;
    case 3:
        goblin_store_expire_step(m->f->st, (size_t)rnd(m, 30), &expired);
        break;
    default:
        assert_int_equal(goblin_key_exists(m->f->st, k), e ? 1 : 0);
        assert_int_equal(goblin_key_type(m->f->st, k),
                         e ? e->type : GOBLIN_TYPE_NONE);
        break;
    }
}

static void run_model(struct fixture *f, uint64_t seed)
{
    struct model m;
    char kb[3];

    memset(&m, 0, sizeof(m));
    m.rng = seed;
    m.f = f;
    for (int step = 0; step < STEPS; step++) {
        size_t i = (size_t)rnd(&m, NKEYS);
        struct goblin_slice k = key_of(i, kb);

        switch (rnd(&m, 10)) {
        case 0: op_get(&m, k, i); break;
        case 1: op_set(&m, k, i); break;
        case 2: op_append_or_setrange(&m, k, i); break;
        case 3: op_incr(&m, k, i); break;
        case 4: op_getdel_getset_getex(&m, k, i); break;
        case 5: op_expire(&m, k, i); break;
        case 6: op_ttl_persist(&m, k, i); break;
        case 7: op_rename(&m, k, i); break;
        case 8: op_mset(&m); break;
        default: op_misc(&m, k, i); break;
        }
        if (step % 4000 == 3999) {
            size_t n = goblin_key_count(f->st);

            assert_int_equal(goblin_store_flush(f->st), n);
            for (size_t j = 0; j < NKEYS; j++)
                drop(&m.k[j]);
        }
        check_store(&m);
    }
    for (size_t j = 0; j < NKEYS; j++)
        drop(&m.k[j]);
}

static void test_model_seed_1(void **state)
{
    run_model(*state, 0x9E3779B97F4A7C15ull);
}

static void test_model_seed_2(void **state)
{
    run_model(*state, 12345);
}

static void test_model_seed_3(void **state)
{
    run_model(*state, 0xDEADBEEFull);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_model_seed_1),
        FIXTURE_TEST(test_model_seed_2),
        FIXTURE_TEST(test_model_seed_3),
    };

    return cmocka_run_group_tests_name("keymodel", tests, NULL, NULL);
}
