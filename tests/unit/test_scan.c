/* test_scan.c - SCAN's guarantee under growth and deletion, its MATCH,
 * TYPE and COUNT options, the full walk, and Redis's glob matching. */
#include "test_keys_util.h"

static int glob(const char *p, const char *s)
{
    return goblin_glob_match(p, strlen(p), s, strlen(s), 0);
}

static void test_glob_matches_like_redis(void **state)
{
    (void)state;
    assert_false(glob("*", ""));
    assert_true(glob("*", "abc"));
    assert_true(glob("", ""));
    assert_false(glob("", "a"));
    assert_true(glob("h?llo", "hello"));
    assert_false(glob("h?llo", "hllo"));
    assert_true(glob("h*llo", "heeeello"));
    assert_true(glob("h*llo", "hllo"));
    assert_true(glob("h[ae]llo", "hallo"));
    assert_false(glob("h[ae]llo", "hillo"));
    assert_true(glob("h[^e]llo", "hallo"));
    assert_false(glob("h[^e]llo", "hello"));
    assert_true(glob("h[a-b]llo", "hbllo"));
    assert_true(glob("h[b-a]llo", "hallo"));
    assert_false(glob("h[a-b]llo", "hcllo"));
    assert_true(glob("h\\*llo", "h*llo"));
    assert_false(glob("h\\*llo", "hello"));
    assert_true(glob("[\\]]", "]"));
    assert_true(glob("a*b*c", "aXXbYYc"));
    assert_false(glob("a*b*c", "aXXbYY"));
    assert_true(glob("**a", "bba"));
    assert_true(glob("a**", "a"));
    assert_true(glob("*a*", "xxax"));
    /* An unclosed set takes the rest of the pattern. */
    assert_true(glob("[abc", "a"));
    assert_false(glob("[abc", "d"));
    assert_true(glob("ab\\", "ab\\"));
    assert_true(goblin_glob_match("HeLLo", 5, "hello", 5, 1));
    assert_true(goblin_glob_match("h[A-Z]llo", 9, "hello", 5, 1));
    assert_false(goblin_glob_match("HeLLo", 5, "hello", 5, 0));
    /* Binary-safe: NUL bytes in both. */
    assert_true(goblin_glob_match("a\0*", 3, "a\0bc", 4, 0));
    assert_false(goblin_glob_match("a\0*", 3, "a\1bc", 4, 0));
}

static void test_glob_is_fast_on_hostile_patterns(void **state)
{
    char pat[2001], str[200];

    (void)state;
    for (int i = 0; i < 1000; i++) {
        pat[2 * i] = '*';
        pat[2 * i + 1] = 'a';
    }
    pat[2000] = 'b';
    memset(str, 'a', sizeof(str));
    assert_false(goblin_glob_match(pat, sizeof(pat), str, sizeof(str), 0));
    assert_false(goblin_glob_match("a*a*a*a*a*a*a*a*a*b", 19, str,
                                   sizeof(str), 0));
}

/* A set of keys seen, by number. */
struct seen {
    unsigned char *hits;
    size_t max, calls;
};

static int note(void *ctx, struct goblin_slice key)
{
    struct seen *s = ctx;
    char num[32] = {0};
    size_t i;

    assert_true(key.len > 1 && key.len < sizeof(num));
    memcpy(num, (const char *)key.ptr + 1, key.len - 1);
    i = (size_t)atol(num);

    assert_true(i < s->max);
    s->hits[i]++;
    s->calls++;
    return 0;
}

static struct goblin_slice num_key(char *buf, size_t i)
{
    int n = snprintf(buf, 32, "k%zu", i);

    return slice_of(buf, (size_t)n);
}

static void set(goblin_store *st, struct goblin_slice k)
{
    assert_int_equal(goblin_str_set(st, k, S("v"), NULL, NULL), 1);
}

static void test_scan_returns_each_key_of_a_quiet_store_once(void **state)
{
    struct fixture *f = *state;
    struct seen s = {calloc(1000, 1), 1000, 0};
    uint64_t cursor = 0;
    char buf[32];
    int steps = 0;

    for (size_t i = 0; i < 1000; i++)
        set(f->st, num_key(buf, i));
    do {
        assert_int_equal(goblin_key_scan(f->st, cursor, NULL, note, &s,
                                         &cursor), 0);
        steps++;
    } while (cursor != 0);
    assert_int_equal(steps, 100);
    for (size_t i = 0; i < 1000; i++)
        assert_int_equal(s.hits[i], 1);
    free(s.hits);
}

/* Keys 0..1999 exist throughout; between steps keys from another range
 * are added (growing everything) and deleted (moving ids). */
static void test_scan_returns_stable_keys_despite_churn(void **state)
{
    struct fixture *f = *state;
    const size_t stable = 2000, max = 40000;
    struct seen s = {calloc(max, 1), max, 0};
    struct goblin_scan_options o = {{NULL, 0}, GOBLIN_TYPE_NONE, 7};
    uint64_t cursor = 0, x = 12345;
    size_t next = stable;
    char buf[32];

    for (size_t i = 0; i < stable + 500; i++)
        set(f->st, num_key(buf, i < stable ? i : next++));
    do {
        assert_int_equal(goblin_key_scan(f->st, cursor, &o, note, &s,
                                         &cursor), 0);
        for (int j = 0; j < 20 && next < max; j++)
            set(f->st, num_key(buf, next++));
        for (int j = 0; j < 15; j++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            goblin_key_delete(f->st, num_key(buf, stable +
                                             (x >> 33) % (next - stable)));
        }
    } while (cursor != 0);
    for (size_t i = 0; i < stable; i++)
        assert_true(s.hits[i] >= 1);
    free(s.hits);
}

static int stop_at_third(void *ctx, struct goblin_slice key)
{
    (void)key;
    return ++*(int *)ctx == 3 ? 42 : 0;
}

static int count_calls(void *ctx, struct goblin_slice key)
{
    (void)key;
    ++*(int *)ctx;
    return 0;
}

static void test_scan_options(void **state)
{
    struct fixture *f = *state;
    struct seen s = {calloc(100, 1), 100, 0};
    struct goblin_scan_options o = {S("k1*"), GOBLIN_TYPE_NONE, 1000};
    uint64_t cursor = 0;
    char buf[32];
    int calls = 0;

    for (size_t i = 0; i < 100; i++)
        set(f->st, num_key(buf, i));
    add_fake_hash(f->st, S("k99x"));
    add_fake_hash(f->st, S(""));
    assert_int_equal(goblin_key_scan(f->st, 0, &o, note, &s, &cursor), 0);
    assert_int_equal(cursor, 0);
    assert_int_equal(s.calls, 11); /* k1, k10..k19 */
    assert_int_equal(s.hits[15], 1);
    o.match = S("*");
    o.type = GOBLIN_TYPE_HASH;
    calls = 0;
    assert_int_equal(goblin_key_scan(f->st, 0, &o, count_calls, &calls,
                                     &cursor), 0);
    assert_int_equal(calls, 2); /* "*" even matches the empty key */
    o.match.ptr = NULL;
    calls = 0;
    o.type = GOBLIN_TYPE_NONE;
    assert_int_equal(goblin_key_scan(f->st, 0, &o, stop_at_third, &calls,
                                     &cursor), 42);
    assert_int_equal(cursor, 102 - 3);
    /* A cursor past the end (keys were deleted) starts at the top. */
    calls = 0;
    assert_int_equal(goblin_key_scan(f->st, 1 << 30, &o, count_calls, &calls,
                                     &cursor), 0);
    assert_int_equal(calls, 102);
    free(s.hits);
}

static void test_scan_of_empty_store(void **state)
{
    struct fixture *f = *state;
    struct seen s = {calloc(1, 1), 1, 0};
    uint64_t cursor = 5;

    assert_int_equal(goblin_key_scan(f->st, 0, NULL, note, &s, &cursor), 0);
    assert_int_equal(cursor, 0);
    assert_int_equal(s.calls, 0);
    free(s.hits);
}

static void test_scan_and_walk_skip_expired_keys(void **state)
{
    struct fixture *f = *state;
    struct seen s = {calloc(10, 1), 10, 0};
    struct snap snap;
    uint64_t cursor;
    char buf[32];

    for (size_t i = 0; i < 10; i++) {
        set(f->st, num_key(buf, i));
        if (i % 2)
            assert_int_equal(goblin_key_pexpire(f->st, num_key(buf, i), 5, 0),
                             1);
    }
    f->clock.now_ms += 6;
    snap = snap_take(f->st);
    assert_int_equal(snap.n, 5);
    snap_free(&snap);
    /* The walk deletes nothing; SCAN deletes what it meets. */
    assert_int_equal(goblin_key_count(f->st), 10);
    assert_int_equal(goblin_key_scan(f->st, 0, NULL, note, &s, &cursor), 0);
    assert_int_equal(cursor, 0);
    assert_int_equal(s.calls, 5);
    assert_int_equal(goblin_key_count(f->st), 5);
    free(s.hits);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_glob_matches_like_redis),
        cmocka_unit_test(test_glob_is_fast_on_hostile_patterns),
        FIXTURE_TEST(test_scan_returns_each_key_of_a_quiet_store_once),
        FIXTURE_TEST(test_scan_returns_stable_keys_despite_churn),
        FIXTURE_TEST(test_scan_options),
        FIXTURE_TEST(test_scan_of_empty_store),
        FIXTURE_TEST(test_scan_and_walk_skip_expired_keys),
    };

    return cmocka_run_group_tests_name("scan", tests, NULL, NULL);
}
