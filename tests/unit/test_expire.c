/* test_expire.c - deadlines: EXPIRE and relatives with NX/XX/GT/LT, the
 * boundary at the deadline, TTL rounding, PERSIST, lazy expiry and the
 * active expiry step, all on the fixture's settable clock. */
#include "test_keys_util.h"

static void set(goblin_store *st, struct goblin_slice k)
{
    assert_int_equal(goblin_str_set(st, k, S("v"), NULL, NULL), 1);
}

static void test_ttl_of_absent_and_persistent_keys(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(goblin_key_ttl(f->st, S("k")), -2);
    assert_int_equal(goblin_key_pttl(f->st, S("k")), -2);
    assert_int_equal(goblin_key_expiretime(f->st, S("k")), -2);
    set(f->st, S("k"));
    assert_int_equal(goblin_key_ttl(f->st, S("k")), -1);
    assert_int_equal(goblin_key_pttl(f->st, S("k")), -1);
    assert_int_equal(goblin_key_pexpiretime(f->st, S("k")), -1);
    assert_int_equal(goblin_key_expire(f->st, S("nope"), 10, 0), 0);
    assert_int_equal(goblin_key_persist(f->st, S("nope")), 0);
    assert_int_equal(goblin_key_persist(f->st, S("k")), 0);
}

static void test_key_lives_until_just_after_its_deadline(void **state)
{
    struct fixture *f = *state;
    uint64_t dirty;

    set(f->st, S("k"));
    assert_int_equal(goblin_key_pexpire(f->st, S("k"), 100, 0), 1);
    f->clock.now_ms += 100;
    assert_int_equal(goblin_key_pttl(f->st, S("k")), 0);
    assert_int_equal(goblin_key_exists(f->st, S("k")), 1);
    dirty = goblin_store_dirty(f->st);
    f->clock.now_ms += 1;
    assert_int_equal(goblin_key_exists(f->st, S("k")), 0);
    /* The read deleted it and reported the change. */
    assert_int_equal(goblin_store_dirty(f->st), dirty + 1);
    assert_int_equal(goblin_key_count(f->st), 0);
    assert_int_equal(goblin_key_expires_count(f->st), 0);
    assert_int_equal(goblin_key_pttl(f->st, S("k")), -2);
}

static void test_ttl_rounds_like_redis(void **state)
{
    struct fixture *f = *state;
    int64_t now = f->clock.now_ms;

    set(f->st, S("k"));
    assert_int_equal(goblin_key_pexpire(f->st, S("k"), 1499, 0), 1);
    assert_int_equal(goblin_key_ttl(f->st, S("k")), 1);
    assert_int_equal(goblin_key_pexpire(f->st, S("k"), 1500, 0), 1);
    assert_int_equal(goblin_key_ttl(f->st, S("k")), 2);
    assert_int_equal(goblin_key_pexpire(f->st, S("k"), 499, 0), 1);
    assert_int_equal(goblin_key_ttl(f->st, S("k")), 0);
    assert_int_equal(goblin_key_pexpireat(f->st, S("k"), now + 2500, 0), 1);
    assert_int_equal(goblin_key_pexpiretime(f->st, S("k")), now + 2500);
    assert_int_equal(goblin_key_expiretime(f->st, S("k")),
                     (now + 2500 + 500) / 1000);
    assert_int_equal(goblin_key_expireat(f->st, S("k"), now / 1000 + 7, 0),
                     1);
    assert_int_equal(goblin_key_pexpiretime(f->st, S("k")),
                     (now / 1000 + 7) * 1000);
}

static void test_deadline_not_after_now_deletes(void **state)
{
    struct fixture *f = *state;
    int64_t now = f->clock.now_ms;

    set(f->st, S("a"));
    set(f->st, S("b"));
    set(f->st, S("c"));
    set(f->st, S("d"));
    assert_int_equal(goblin_key_expire(f->st, S("a"), 0, 0), 1);
    assert_int_equal(goblin_key_expire(f->st, S("b"), -1, 0), 1);
    assert_int_equal(goblin_key_pexpireat(f->st, S("c"), now, 0), 1);
    assert_int_equal(goblin_key_pexpireat(f->st, S("d"), now + 1, 0), 1);
    assert_int_equal(goblin_key_exists(f->st, S("a")), 0);
    assert_int_equal(goblin_key_exists(f->st, S("b")), 0);
    assert_int_equal(goblin_key_exists(f->st, S("c")), 0);
    assert_int_equal(goblin_key_exists(f->st, S("d")), 1);
    assert_int_equal(goblin_key_count(f->st), 1);
}

static void test_expire_rejects_overflow(void **state)
{
    struct fixture *f = *state;

    set(f->st, S("k"));
    assert_int_equal(goblin_key_expire(f->st, S("k"), INT64_MAX / 1000 + 1,
                                       0), GOBLIN_EINVAL);
    assert_int_equal(goblin_key_expire(f->st, S("k"), INT64_MIN / 1000 - 1,
                                       0), GOBLIN_EINVAL);
    assert_int_equal(goblin_key_pexpire(f->st, S("k"), INT64_MAX, 0),
                     GOBLIN_EINVAL);
    assert_int_equal(goblin_key_expire(f->st, S("k"), INT64_MAX / 1000, 0),
                     GOBLIN_EINVAL);
    /* Absolute times do not add now. */
    assert_int_equal(goblin_key_pexpireat(f->st, S("k"), INT64_MAX, 0), 1);
    assert_int_equal(goblin_key_expireat(f->st, S("k"), INT64_MAX / 1000, 0),
                     1);
    /* Checked before the key: absent keys get the error too. */
    assert_int_equal(goblin_key_pexpire(f->st, S("nope"), INT64_MAX, 0),
                     GOBLIN_EINVAL);
    assert_int_equal(goblin_key_ttl(f->st, S("k")),
                     (INT64_MAX / 1000 * 1000 - f->clock.now_ms + 500) /
                         1000);
    /* A large negative relative time deletes. */
    assert_int_equal(goblin_key_expire(f->st, S("k"), INT64_MIN / 1000, 0),
                     1);
    assert_int_equal(goblin_key_exists(f->st, S("k")), 0);
}

static void test_expire_conditions(void **state)
{
    struct fixture *f = *state;

    set(f->st, S("k"));
    assert_int_equal(goblin_key_expire(f->st, S("k"), 100,
                                       GOBLIN_EXPIRE_XX), 0);
    assert_int_equal(goblin_key_expire(f->st, S("k"), 100,
                                       GOBLIN_EXPIRE_GT), 0);
    assert_int_equal(goblin_key_ttl(f->st, S("k")), -1);
    assert_int_equal(goblin_key_expire(f->st, S("k"), 100,
                                       GOBLIN_EXPIRE_LT), 1);
    assert_int_equal(goblin_key_ttl(f->st, S("k")), 100);
    assert_int_equal(goblin_key_expire(f->st, S("k"), 50,
                                       GOBLIN_EXPIRE_NX), 0);
    assert_int_equal(goblin_key_expire(f->st, S("k"), 50,
                                       GOBLIN_EXPIRE_GT), 0);
    assert_int_equal(goblin_key_expire(f->st, S("k"), 100,
                                       GOBLIN_EXPIRE_GT), 0);
    assert_int_equal(goblin_key_expire(f->st, S("k"), 200,
                                       GOBLIN_EXPIRE_GT), 1);
    assert_int_equal(goblin_key_expire(f->st, S("k"), 200,
                                       GOBLIN_EXPIRE_LT), 0);
    assert_int_equal(goblin_key_expire(f->st, S("k"), 150,
                                       GOBLIN_EXPIRE_LT |
                                           GOBLIN_EXPIRE_XX), 1);
    assert_int_equal(goblin_key_ttl(f->st, S("k")), 150);
    assert_int_equal(goblin_key_persist(f->st, S("k")), 1);
    assert_int_equal(goblin_key_expire(f->st, S("k"), 10,
                                       GOBLIN_EXPIRE_NX), 1);
    /* A failed condition never deletes, even with a past time. */
    assert_int_equal(goblin_key_expire(f->st, S("k"), -5,
                                       GOBLIN_EXPIRE_NX), 0);
    assert_int_equal(goblin_key_exists(f->st, S("k")), 1);
    assert_int_equal(goblin_key_expire(f->st, S("k"), -5,
                                       GOBLIN_EXPIRE_LT), 1);
    assert_int_equal(goblin_key_exists(f->st, S("k")), 0);
}

static void test_expire_rejects_conflicting_flags(void **state)
{
    struct fixture *f = *state;
    static const int bad[] = {
        GOBLIN_EXPIRE_NX | GOBLIN_EXPIRE_XX,
        GOBLIN_EXPIRE_NX | GOBLIN_EXPIRE_GT,
        GOBLIN_EXPIRE_NX | GOBLIN_EXPIRE_LT,
        GOBLIN_EXPIRE_GT | GOBLIN_EXPIRE_LT,
        GOBLIN_EXPIRE_XX | GOBLIN_EXPIRE_GT | GOBLIN_EXPIRE_LT,
        0x10,
    };

    set(f->st, S("k"));
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(goblin_key_expire(f->st, S("k"), 10, bad[i]),
                         GOBLIN_ESYNTAX);
        assert_int_equal(goblin_key_expire(f->st, S("nope"), 10, bad[i]),
                         GOBLIN_ESYNTAX);
    }
    assert_int_equal(goblin_key_ttl(f->st, S("k")), -1);
}

static void test_expire_counts_and_overwrites(void **state)
{
    struct fixture *f = *state;

    set(f->st, S("a"));
    set(f->st, S("b"));
    assert_int_equal(goblin_key_expire(f->st, S("a"), 10, 0), 1);
    assert_int_equal(goblin_key_expire(f->st, S("b"), 10, 0), 1);
    assert_int_equal(goblin_key_expire(f->st, S("b"), 20, 0), 1);
    assert_int_equal(goblin_key_expires_count(f->st), 2);
    set(f->st, S("a"));
    assert_int_equal(goblin_key_expires_count(f->st), 1);
    assert_int_equal(goblin_key_delete(f->st, S("b")), 1);
    assert_int_equal(goblin_key_expires_count(f->st), 0);
}

/* Many keys with deadlines spread over time: the active step deletes
 * exactly those past their deadline, never does more than max_work, and
 * says when more work is likely. */
static void test_active_expiry(void **state)
{
    struct fixture *f = *state;
    const int n = 5000;
    char buf[32];
    size_t expired = 0;
    int64_t start = f->clock.now_ms;

    for (int i = 0; i < n; i++) {
        int len = snprintf(buf, sizeof(buf), "k%d", i);

        set(f->st, slice_of(buf, (size_t)len));
        if (i % 5 != 0)
            assert_int_equal(goblin_key_pexpire(f->st,
                                                slice_of(buf, (size_t)len),
                                                1 + i % 1000, 0), 1);
    }
    assert_int_equal(goblin_key_expires_count(f->st), n - n / 5);
    assert_int_equal(goblin_store_expire_step(f->st, 1000, &expired), 0);
    assert_int_equal(expired, 0);
    f->clock.now_ms = start + 500;
    /* Half of the keys with a deadline are past it. */
    for (int step = 0; step < 100; step++) {
        size_t before = expired, count = goblin_key_count(f->st);
        int more = goblin_store_expire_step(f->st, 100, &expired);

        assert_true(expired - before <= 100);
        assert_int_equal(goblin_key_count(f->st), count - (expired - before));
        if (!more && step > 50)
            break;
    }
    /* Every key past its deadline is gone; no other is. */
    assert_int_equal(goblin_key_count(f->st) + expired, (size_t)n);
    for (int i = 0; i < n; i++) {
        int len = snprintf(buf, sizeof(buf), "k%d", i);
        bool gone = i % 5 != 0 && 1 + i % 1000 < 500;
        uint32_t id;

        assert_int_equal(goblin__key_find(f->st, slice_of(buf, (size_t)len),
                                          &id), gone ? 0 : 1);
    }
    assert_int_equal(expired, (size_t)(n / 1000) * 399);
    assert_int_equal(goblin_key_expires_count(f->st),
                     (size_t)(n - n / 5) - expired);
    assert_int_equal(goblin_store_expire_step(f->st, 0, NULL), 0);
}

static void test_active_expiry_says_when_more_work_is_likely(void **state)
{
    struct fixture *f = *state;
    char buf[32];
    size_t expired = 0;

    for (int i = 0; i < 200; i++) {
        int len = snprintf(buf, sizeof(buf), "k%d", i);

        set(f->st, slice_of(buf, (size_t)len));
        assert_int_equal(goblin_key_pexpire(f->st, slice_of(buf, (size_t)len),
                                            10, 0), 1);
    }
    f->clock.now_ms += 11;
    assert_int_equal(goblin_store_expire_step(f->st, 40, &expired), 1);
    assert_int_equal(expired, 40);
    assert_int_equal(goblin_store_expire_step(f->st, 1000, &expired), 0);
    assert_int_equal(expired, 200);
    assert_int_equal(goblin_key_count(f->st), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_ttl_of_absent_and_persistent_keys),
        FIXTURE_TEST(test_key_lives_until_just_after_its_deadline),
        FIXTURE_TEST(test_ttl_rounds_like_redis),
        FIXTURE_TEST(test_deadline_not_after_now_deletes),
        FIXTURE_TEST(test_expire_rejects_overflow),
        FIXTURE_TEST(test_expire_conditions),
        FIXTURE_TEST(test_expire_rejects_conflicting_flags),
        FIXTURE_TEST(test_expire_counts_and_overwrites),
        FIXTURE_TEST(test_active_expiry),
        FIXTURE_TEST(test_active_expiry_says_when_more_work_is_likely),
    };

    return cmocka_run_group_tests_name("expire", tests, NULL, NULL);
}
