/* test_hash_ttl.c - hash field expiry (Redis 7.4's HEXPIRE family) in the
 * store: reply codes, the NX/XX/GT/LT conditions, lazy and active expiry,
 * the key going with its last field, HSET dropping a deadline, copies
 * keeping them, the heap against a model over many fields, and every
 * write under allocation failure. */
#include <stdio.h>

#include "testutil.h"
#include "store/hash.h"
#include "store/hash_impl.h"
#include "store/hash_ttl.h"
#include "store/store.h"

#define NOW 1700000000000LL

static struct fixture *fx(void **state)
{
    return *state;
}

static void hset(goblin_store *st, const char *key, const char *f,
                 const char *v)
{
    struct goblin_slice fv[2] = {slice_of(f, strlen(f)),
                                 slice_of(v, strlen(v))};

    assert_true(goblin_hash_set(st, slice_of(key, strlen(key)), fv, 1) >= 0);
}

static int expire1(goblin_store *st, const char *key, const char *f,
                   int64_t when, int flags)
{
    struct goblin_slice fs = slice_of(f, strlen(f));
    int8_t code = 99;
    int r = goblin_hash_field_expire(st, slice_of(key, strlen(key)), &fs, 1,
                                     when, flags, &code);

    assert_true(r >= 0);
    return code;
}

static int64_t deadline1(goblin_store *st, const char *key, const char *f)
{
    struct goblin_slice fs = slice_of(f, strlen(f));
    int64_t w = 99;

    assert_int_equal(goblin_hash_field_deadline(st, slice_of(key, strlen(key)),
                                                &fs, 1, &w),
                     0);
    return w;
}

static void test_codes_and_conditions(void **state)
{
    goblin_store *st = fx(state)->st;
    struct goblin_slice fs[3] = {S("a"), S("zz"), S("b")};
    int8_t codes[3];
    int64_t w[3];

    assert_int_equal(expire1(st, "h", "a", NOW + 1000, 0), -2);
    hset(st, "h", "a", "1");
    hset(st, "h", "b", "2");
    assert_int_equal(goblin_hash_field_expire(st, S("h"), fs, 3, NOW + 1000,
                                              0, codes),
                     2);
    assert_int_equal(codes[0], 1);
    assert_int_equal(codes[1], -2);
    assert_int_equal(codes[2], 1);
    assert_int_equal(goblin_hash_field_deadline(st, S("h"), fs, 3, w), 0);
    assert_int_equal(w[0], NOW + 1000);
    assert_int_equal(w[1], -2);
    /* NX: only without a deadline. */
    assert_int_equal(expire1(st, "h", "a", NOW + 5000, GOBLIN_EXPIRE_NX), 0);
    hset(st, "h", "c", "3");
    assert_int_equal(deadline1(st, "h", "c"), -1);
    assert_int_equal(expire1(st, "h", "c", NOW + 5000, GOBLIN_EXPIRE_XX), 0);
    assert_int_equal(expire1(st, "h", "c", NOW + 5000, GOBLIN_EXPIRE_GT), 0);
    assert_int_equal(expire1(st, "h", "c", NOW + 5000, GOBLIN_EXPIRE_LT), 1);
    assert_int_equal(expire1(st, "h", "c", NOW + 6000, GOBLIN_EXPIRE_LT), 0);
    assert_int_equal(expire1(st, "h", "c", NOW + 5000, GOBLIN_EXPIRE_GT), 0);
    assert_int_equal(expire1(st, "h", "c", NOW + 6000, GOBLIN_EXPIRE_GT), 1);
    assert_int_equal(expire1(st, "h", "c", NOW + 7000, GOBLIN_EXPIRE_XX), 1);
    assert_int_equal(deadline1(st, "h", "c"), NOW + 7000);
    assert_int_equal(expire1(st, "h", "c", NOW + 7000, GOBLIN_EXPIRE_NX), 0);
    /* Bad flags, no fields, a negative time. */
    assert_int_equal(goblin_hash_field_expire(st, S("h"), fs, 1, NOW,
                                              GOBLIN_EXPIRE_NX |
                                                  GOBLIN_EXPIRE_XX,
                                              codes),
                     GOBLIN_ESYNTAX);
    assert_int_equal(goblin_hash_field_expire(st, S("h"), fs, 0, NOW, 0,
                                              codes),
                     GOBLIN_EINVAL);
    assert_int_equal(goblin_hash_field_expire(st, S("h"), fs, 1, -1, 0,
                                              codes),
                     GOBLIN_EINVAL);
    /* Persist: -2, -1, 1. */
    assert_int_equal(goblin_hash_field_persist(st, S("h"), fs, 3, codes), 2);
    assert_int_equal(codes[0], 1);
    assert_int_equal(codes[1], -2);
    assert_int_equal(codes[2], 1);
    assert_int_equal(goblin_hash_field_persist(st, S("h"), fs, 1, codes), 0);
    assert_int_equal(codes[0], -1);
    assert_int_equal(goblin_hash_field_persist(st, S("nokey"), fs, 1, codes),
                     0);
    assert_int_equal(codes[0], -2);
    assert_int_equal(goblin__store_check(st), 0);
    /* A string key. */
    assert_int_equal(goblin_str_set(st, S("s"), S("x"), NULL, NULL) >= 0, 1);
    assert_int_equal(goblin_hash_field_expire(st, S("s"), fs, 1, NOW, 0,
                                              codes),
                     GOBLIN_EWRONGTYPE);
    assert_int_equal(goblin_hash_field_deadline(st, S("s"), fs, 1, w),
                     GOBLIN_EWRONGTYPE);
}

static void test_past_deletes_and_key_goes(void **state)
{
    goblin_store *st = fx(state)->st;
    struct goblin_slice fs[3] = {S("a"), S("b"), S("a")};
    int8_t codes[3];

    hset(st, "h", "a", "1");
    hset(st, "h", "b", "2");
    hset(st, "h", "c", "3");
    assert_int_equal(expire1(st, "h", "c", NOW, 0), 2); /* now: not after */
    assert_int_equal(goblin_hash_len(st, S("h")), 2);
    assert_int_equal(goblin_hash_field_expire(st, S("h"), fs, 3, 0, 0, codes),
                     2);
    assert_int_equal(codes[0], 2);
    assert_int_equal(codes[1], 2);
    assert_int_equal(codes[2], -2);
    assert_int_equal(goblin_key_exists(st, S("h")), 0);
    assert_int_equal(st->httl_hashes, 0);
    assert_int_equal(goblin__store_check(st), 0);
}

static int gone_fields, gone_done, gone_deleted;

static void on_field(void *ctx, struct goblin_slice key,
                     struct goblin_slice field)
{
    (void)ctx;
    (void)key;
    (void)field;
    gone_fields++;
}

static void on_done(void *ctx, struct goblin_slice key, bool deleted)
{
    (void)ctx;
    (void)key;
    gone_done++;
    gone_deleted += deleted;
}

static void test_lazy_expiry(void **state)
{
    struct fixture *f = fx(state);
    goblin_store *st = f->st;
    struct goblin_slice v;

    st->field_gone = on_field;
    st->fields_done = on_done;
    gone_fields = gone_done = gone_deleted = 0;
    hset(st, "h", "a", "1");
    hset(st, "h", "b", "2");
    hset(st, "h", "c", "3");
    assert_int_equal(expire1(st, "h", "a", NOW + 100, 0), 1);
    assert_int_equal(expire1(st, "h", "b", NOW + 200, 0), 1);
    assert_string_equal(goblin__hash_encoding(
                            goblin__rec_obj(goblin__key_rec(st, 0))),
                        "hashtable");
    f->clock.now_ms = NOW + 100; /* at the deadline it still exists */
    assert_int_equal(goblin_hash_get(st, S("h"), S("a"), &v), 1);
    f->clock.now_ms = NOW + 101;
    assert_int_equal(goblin_hash_get(st, S("h"), S("a"), &v), 0);
    assert_int_equal(goblin_hash_len(st, S("h")), 2);
    assert_int_equal(gone_fields, 1);
    assert_int_equal(gone_done, 1);
    assert_int_equal(deadline1(st, "h", "a"), -2);
    /* HSET drops a deadline, HINCRBY keeps one. */
    hset(st, "h", "b", "5");
    assert_int_equal(deadline1(st, "h", "b"), -1);
    assert_int_equal(st->httl_hashes, 0);
    assert_int_equal(expire1(st, "h", "b", NOW + 500, 0), 1);
    {
        int64_t res;

        assert_int_equal(goblin_hash_incrby(st, S("h"), S("b"), 1, &res), 0);
        assert_int_equal(res, 6);
    }
    assert_int_equal(deadline1(st, "h", "b"), NOW + 500);
    assert_int_equal(expire1(st, "h", "c", NOW + 500, 0), 1);
    f->clock.now_ms = NOW + 501;
    assert_int_equal(goblin_hash_len(st, S("h")), 0);
    assert_int_equal(goblin_key_exists(st, S("h")), 0);
    assert_int_equal(gone_fields, 3);
    assert_int_equal(gone_deleted, 1);
    assert_int_equal(st->httl_hashes, 0);
    assert_int_equal(goblin__store_check(st), 0);
}

static void test_active_expiry(void **state)
{
    struct fixture *f = fx(state);
    goblin_store *st = f->st;
    char k[16];

    st->field_gone = on_field;
    st->fields_done = on_done;
    gone_fields = gone_done = gone_deleted = 0;
    for (int i = 0; i < 50; i++) {
        snprintf(k, sizeof(k), "k%d", i);
        hset(st, k, "a", "1");
        hset(st, k, "b", "2");
        assert_int_equal(expire1(st, k, "a", NOW + 10, 0), 1);
        if (i % 2 == 0)
            assert_int_equal(expire1(st, k, "b", NOW + 10, 0), 1);
    }
    assert_int_equal(st->httl_hashes, 50);
    f->clock.now_ms = NOW + 11;
    for (int i = 0; i < 20; i++)
        goblin_store_expire_step(st, 200, NULL);
    assert_int_equal(gone_fields, 75);
    assert_int_equal(gone_deleted, 25);
    assert_int_equal(goblin_key_count(st), 25);
    assert_int_equal(st->httl_hashes, 0);
    assert_int_equal(st->expired_fields, 75);
    assert_int_equal(goblin__store_check(st), 0);
}

static void test_copy_and_rename_keep(void **state)
{
    goblin_store *st = fx(state)->st;

    hset(st, "h", "a", "1");
    hset(st, "h", "b", "2");
    assert_int_equal(expire1(st, "h", "a", NOW + 1000, 0), 1);
    assert_int_equal(goblin__key_copy(st, S("h"), st, S("h2"), false), 1);
    assert_int_equal(deadline1(st, "h2", "a"), NOW + 1000);
    assert_int_equal(deadline1(st, "h2", "b"), -1);
    assert_int_equal(goblin_key_rename(st, S("h"), S("h3"), 0), 1);
    assert_int_equal(deadline1(st, "h3", "a"), NOW + 1000);
    assert_int_equal(st->httl_hashes, 2);
    assert_int_equal(goblin__store_check(st), 0);
}

/* Many fields, deadlines set, changed, dropped and deleted at random,
 * then time runs: what is left is what a plain model says. */
static void test_model(void **state)
{
    struct fixture *f = fx(state);
    goblin_store *st = f->st;
    enum { N = 600 };
    static int64_t model[N]; /* -3: absent, -1: no deadline */
    char name[16];
    uint64_t r = 7;

    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof(name), "f%d", i);
        hset(st, "h", name, "v");
        model[i] = -1;
    }
    for (int step = 0; step < 4000; step++) {
        int i;
        struct goblin_slice fs;

        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        i = (int)((r >> 33) % N);
        snprintf(name, sizeof(name), "f%d", i);
        fs = slice_of(name, strlen(name));
        switch ((r >> 20) % 5) {
        case 0:
        case 1: {
            int64_t when = NOW + 1 + (int64_t)((r >> 40) % 1000);

            assert_int_equal(expire1(st, "h", name, when, 0),
                             model[i] == -3 ? -2 : 1);
            if (model[i] != -3)
                model[i] = when;
            break;
        }
        case 2: {
            int8_t c;

            assert_true(goblin_hash_field_persist(st, S("h"), &fs, 1, &c) >=
                        0);
            assert_int_equal(c, model[i] == -3 ? -2 : model[i] == -1 ? -1 : 1);
            if (model[i] != -3)
                model[i] = -1;
            break;
        }
        case 3:
            assert_int_equal(goblin_hash_del(st, S("h"), &fs, 1),
                             model[i] == -3 ? 0 : 1);
            model[i] = -3;
            break;
        default:
            hset(st, "h", name, "w");
            model[i] = -1;
            break;
        }
        if (step % 500 == 0)
            assert_int_equal(goblin__store_check(st), 0);
    }
    for (int64_t t = NOW; t <= NOW + 1001; t += 97) {
        int64_t live = 0;

        f->clock.now_ms = t;
        for (int i = 0; i < N; i++)
            live += model[i] == -1 || (model[i] >= 0 && t <= model[i]);
        if (live == 0) {
            assert_int_equal(goblin_hash_len(st, S("h")), 0);
            break;
        }
        assert_int_equal(goblin_hash_len(st, S("h")), live);
        for (int i = 0; i < N; i += 37) {
            snprintf(name, sizeof(name), "f%d", i);
            if (model[i] == -3 || (model[i] >= 0 && t > model[i]))
                assert_int_equal(deadline1(st, "h", name), -2);
            else
                assert_int_equal(deadline1(st, "h", name), model[i]);
        }
        assert_int_equal(goblin__store_check(st), 0);
    }
}

/* Every write that may allocate, failing its Nth allocation until it
 * succeeds: a failed call changes nothing. */
static void test_alloc_failure(void **state)
{
    struct fixture *f = fx(state);
    goblin_store *st = f->st;
    struct goblin_slice fs[2] = {S("a"), S("b")};
    char name[16];

    for (int big = 0; big < 2; big++) {
        const char *key = big ? "big" : "small";
        struct goblin_slice k = slice_of(key, strlen(key));

        for (int i = 0; i < (big ? 300 : 3); i++) {
            snprintf(name, sizeof(name), i < 2 ? "%c" : "x%d",
                     i < 2 ? 'a' + i : i);
            hset(st, key, name, "v");
        }
        for (long n = 0;; n++) {
            int8_t codes[2];
            size_t hashes = st->httl_hashes;
            int r;

            f->counts.fail_after = n;
            r = goblin_hash_field_expire(st, k, fs, 2, NOW + 100, 0, codes);
            f->counts.fail_after = -1;
            if (r >= 0) {
                assert_int_equal(r, 2);
                break;
            }
            assert_int_equal(r, GOBLIN_ENOMEM);
            assert_int_equal(st->httl_hashes, hashes);
            assert_int_equal(deadline1(st, key, "a"), -1);
            assert_int_equal(goblin__store_check(st), 0);
        }
        /* New fields in a hash with a table. */
        for (long n = 0;; n++) {
            struct goblin_slice fv[4] = {S("n1"), S("v"), S("n2"), S("v")};
            int64_t before = goblin_hash_len(st, k);
            int r;

            f->counts.fail_after = n;
            r = goblin_hash_set(st, k, fv, 2);
            f->counts.fail_after = -1;
            if (r >= 0)
                break;
            assert_int_equal(r, GOBLIN_ENOMEM);
            assert_int_equal(goblin_hash_len(st, k), before);
            assert_int_equal(goblin__store_check(st), 0);
        }
        assert_int_equal(deadline1(st, key, "a"), NOW + 100);
        assert_int_equal(deadline1(st, key, "n1"), -1);
        assert_int_equal(goblin__store_check(st), 0);
    }
    /* A copy into a failing allocator leaves no destination key. */
    for (long n = 0;; n++) {
        int r;

        f->counts.fail_after = n;
        r = goblin__key_copy(st, S("small"), st, S("copy"), false);
        f->counts.fail_after = -1;
        if (r == 1)
            break;
        assert_int_equal(r, GOBLIN_ENOMEM);
        assert_int_equal(goblin_key_exists(st, S("copy")), 0);
    }
    assert_int_equal(deadline1(st, "copy", "b"), NOW + 100);
    assert_int_equal(goblin__store_check(st), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_codes_and_conditions),
        FIXTURE_TEST(test_past_deletes_and_key_goes),
        FIXTURE_TEST(test_lazy_expiry),
        FIXTURE_TEST(test_active_expiry),
        FIXTURE_TEST(test_copy_and_rename_keep),
        FIXTURE_TEST(test_model),
        FIXTURE_TEST(test_alloc_failure),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
