/* test_keyspace.c - the keyspace: the interface of the type modules
 * (lookup, add, replace, remove), the public key calls (DEL, EXISTS, TYPE,
 * RENAME, DBSIZE, FLUSHALL, RANDOMKEY, OBJECT ENCODING), growth with
 * swap-remove, memory per key and allocation failures. */
#include "test_keys_util.h"

static struct goblin_slice keyname(char *buf, size_t i)
{
    int n = snprintf(buf, 32, "key:%zu", i);

    return slice_of(buf, (size_t)n);
}

static void test_add_lookup_remove_many(void **state)
{
    struct fixture *f = *state;
    goblin_store *st = f->st;
    const size_t n = 30000;
    char buf[32];
    void **slot;

    for (size_t i = 0; i < n; i++) {
        struct goblin_slice k = keyname(buf, i);

        assert_int_equal(goblin__key_lookup(st, k, GOBLIN_TYPE_STRING,
                                            &slot), 0);
        assert_int_equal(goblin__key_add(st, k, GOBLIN_TYPE_STRING, NULL),
                         0);
    }
    assert_int_equal(st->ks.count, n);
    for (size_t i = 0; i < n; i += 2)
        goblin__key_remove(st, keyname(buf, i));
    for (size_t i = 0; i < n; i++) {
        int r = goblin__key_lookup(st, keyname(buf, i), GOBLIN_TYPE_STRING,
                                   &slot);

        assert_int_equal(r, i % 2 == 0 ? 0 : 1);
        if (r == 1)
            assert_null(slot);
    }
    assert_int_equal(st->ks.count, n / 2);
    for (size_t i = 1; i < n; i += 2)
        goblin__key_remove(st, keyname(buf, i));
    assert_int_equal(st->ks.count, 0);
    goblin__write_begin(st);
    assert_int_equal(f->counts.live_blocks, 1);
}

static void test_replace_changes_type_and_wrongtype_is_reported(void **state)
{
    struct fixture *f = *state;
    goblin_store *st = f->st;
    void **slot;

    assert_int_equal(goblin__key_replace(st, S("a\0b"), GOBLIN_TYPE_STRING,
                                         NULL), 0);
    assert_int_equal(goblin__key_lookup(st, S("a\0b"), GOBLIN_TYPE_HASH,
                                        &slot), GOBLIN_EWRONGTYPE);
    assert_int_equal(goblin__key_lookup(st, S("a"), GOBLIN_TYPE_STRING,
                                        &slot), 0);
    assert_int_equal(goblin__key_replace(st, S("a\0b"), GOBLIN_TYPE_STRING,
                                         NULL), 0);
    assert_int_equal(st->ks.count, 1);
    assert_int_equal(goblin__key_add(st, S(""), GOBLIN_TYPE_STRING, NULL), 0);
    assert_int_equal(goblin__key_lookup(st, S(""), GOBLIN_TYPE_STRING,
                                        &slot), 1);
    assert_int_equal(st->ks.count, 2);
}

static void set(goblin_store *st, struct goblin_slice k,
                struct goblin_slice v)
{
    assert_int_equal(goblin_str_set(st, k, v, NULL, NULL), GOBLIN_SET_DONE);
}

static void test_delete_exists_type(void **state)
{
    struct fixture *f = *state;
    uint64_t dirty;

    assert_int_equal(goblin_key_exists(f->st, S("k")), 0);
    assert_int_equal(goblin_key_type(f->st, S("k")), GOBLIN_TYPE_NONE);
    dirty = goblin_store_dirty(f->st);
    assert_int_equal(goblin_key_delete(f->st, S("k")), 0);
    assert_int_equal(goblin_store_dirty(f->st), dirty);
    set(f->st, S("k\0"), S("v"));
    add_fake_hash(f->st, S("h"));
    assert_int_equal(goblin_key_exists(f->st, S("k\0")), 1);
    assert_int_equal(goblin_key_exists(f->st, S("k")), 0);
    assert_int_equal(goblin_key_type(f->st, S("k\0")), GOBLIN_TYPE_STRING);
    assert_int_equal(goblin_key_type(f->st, S("h")), GOBLIN_TYPE_HASH);
    assert_int_equal(goblin_key_delete(f->st, S("k\0")), 1);
    assert_int_equal(goblin_store_dirty(f->st), dirty + 2);
    assert_int_equal(goblin_key_delete(f->st, S("h")), 1);
    assert_int_equal(goblin_key_delete(f->st, S("h")), 0);
    assert_int_equal(goblin_key_count(f->st), 0);
}

static void test_rename_moves_value_and_deadline(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice out;

    assert_int_equal(goblin_key_rename(f->st, S("a"), S("b"), 0),
                     GOBLIN_ENOKEY);
    assert_int_equal(goblin_key_rename(f->st, S("a"), S("a"), 0),
                     GOBLIN_ENOKEY);
    set(f->st, S("a"), S("1"));
    assert_int_equal(goblin_key_pexpire(f->st, S("a"), 5000, 0), 1);
    assert_int_equal(goblin_key_rename(f->st, S("a"), S("a"), 0), 1);
    assert_int_equal(goblin_key_rename(f->st, S("a"), S("a"), 1), 0);
    assert_int_equal(goblin_key_rename(f->st, S("a"), S("b"), 0), 1);
    assert_int_equal(goblin_key_exists(f->st, S("a")), 0);
    assert_int_equal(goblin_str_get(f->st, S("b"), &out), 1);
    assert_slice(out, "1");
    assert_int_equal(goblin_key_pttl(f->st, S("b")), 5000);
    assert_int_equal(goblin_key_expires_count(f->st), 1);
    /* Over an existing key with a deadline of its own, of another type. */
    add_fake_hash(f->st, S("h"));
    assert_int_equal(goblin_key_expire(f->st, S("h"), 9, 0), 1);
    assert_int_equal(goblin_key_rename(f->st, S("b"), S("h"), 1), 0);
    assert_int_equal(goblin_key_rename(f->st, S("b"), S("h"), 0), 1);
    assert_int_equal(goblin_key_type(f->st, S("h")), GOBLIN_TYPE_STRING);
    assert_int_equal(goblin_key_pttl(f->st, S("h")), 5000);
    assert_int_equal(goblin_key_expires_count(f->st), 1);
    assert_int_equal(goblin_key_count(f->st), 1);
    /* A collection keeps its object, without a deadline. */
    add_fake_hash(f->st, S("h2"));
    assert_int_equal(goblin_key_rename(f->st, S("h2"), S("h3"), 1), 1);
    assert_int_equal(goblin_key_type(f->st, S("h3")), GOBLIN_TYPE_HASH);
    assert_int_equal(goblin_key_ttl(f->st, S("h3")), -1);
}

/* Renames among many keys, some with deadlines, checking every key after
 * each step: ids move under swap-remove and expiry entries must follow. */
static void test_rename_keeps_everything_consistent(void **state)
{
    struct fixture *f = *state;
    char a[32], b[32];

    for (int i = 0; i < 300; i++) {
        int n = snprintf(a, sizeof(a), "k%d", i);

        set(f->st, slice_of(a, (size_t)n), slice_of(a, (size_t)n));
        if (i % 2)
            assert_int_equal(goblin_key_pexpire(f->st, slice_of(a, (size_t)n),
                                                100000 + i, 0), 1);
    }
    for (int i = 0; i < 300; i += 3) {
        int n = snprintf(a, sizeof(a), "k%d", i);
        int m = snprintf(b, sizeof(b), "k%d", (i * 7 + 1) % 300);

        goblin_key_rename(f->st, slice_of(a, (size_t)n),
                          slice_of(b, (size_t)m), 0);
    }
    for (int i = 0; i < 300; i++) {
        int n = snprintf(a, sizeof(a), "k%d", i);
        int64_t pttl = goblin_key_pttl(f->st, slice_of(a, (size_t)n));
        struct goblin_slice out;

        if (pttl == -2)
            continue;
        assert_int_equal(goblin_str_get(f->st, slice_of(a, (size_t)n), &out),
                         1);
        /* The value names the key it came from, whose parity says
         * whether it had a deadline, and which one. */
        {
            char num[32] = {0};
            int from;

            memcpy(num, (const char *)out.ptr + 1, out.len - 1);
            from = atoi(num);
            assert_int_equal(pttl, from % 2 ? 100000 + from : -1);
        }
    }
}

static void test_flush_deletes_everything(void **state)
{
    struct fixture *f = *state;
    char buf[32];
    uint64_t dirty;

    for (size_t i = 0; i < 3000; i++) {
        struct goblin_slice k = keyname(buf, i);

        set(f->st, k, k);
        if (i % 2)
            assert_int_equal(goblin_key_expire(f->st, k, 100, 0), 1);
    }
    dirty = goblin_store_dirty(f->st);
    assert_int_equal(goblin_store_flush(f->st), 3000);
    assert_int_equal(goblin_store_dirty(f->st), dirty + 3000);
    assert_int_equal(goblin_key_count(f->st), 0);
    assert_int_equal(goblin_key_expires_count(f->st), 0);
    assert_int_equal(goblin_key_exists(f->st, S("key:5")), 0);
    assert_int_equal(f->counts.live_blocks, 1);
    set(f->st, S("again"), S("v"));
    assert_int_equal(goblin_key_count(f->st), 1);
}

static void test_random_key(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice k = {"x", 1};
    int seen[3] = {0, 0, 0};

    assert_int_equal(goblin_key_random(f->st, &k), 0);
    assert_slice(k, "x");
    set(f->st, S("0"), S("v"));
    set(f->st, S("1"), S("v"));
    set(f->st, S("2"), S("v"));
    for (int i = 0; i < 300; i++) {
        assert_int_equal(goblin_key_random(f->st, &k), 1);
        assert_int_equal(k.len, 1);
        seen[((const char *)k.ptr)[0] - '0']++;
    }
    assert_true(seen[0] > 0 && seen[1] > 0 && seen[2] > 0);
    /* Expired keys are deleted on the way, not returned. */
    assert_int_equal(goblin_key_pexpire(f->st, S("0"), 10, 0), 1);
    assert_int_equal(goblin_key_pexpire(f->st, S("1"), 10, 0), 1);
    f->clock.now_ms += 11;
    for (int i = 0; i < 20; i++) {
        assert_int_equal(goblin_key_random(f->st, &k), 1);
        assert_slice(k, "2");
    }
    assert_int_equal(goblin_key_count(f->st), 1);
    /* All keys expired: one comes back after the tries run out. */
    assert_int_equal(goblin_key_pexpire(f->st, S("2"), 10, 0), 1);
    f->clock.now_ms += 11;
    assert_int_equal(goblin_key_count(f->st), 1);
    assert_int_equal(goblin_key_random(f->st, &k), 0);
}

static void test_encoding_of_keys(void **state)
{
    struct fixture *f = *state;
    const char *e = "x";

    assert_int_equal(goblin_key_encoding(f->st, S("k"), &e), 0);
    assert_string_equal(e, "x");
    set(f->st, S("k"), S("42"));
    assert_string_equal(encoding_of(f->st, S("k")), "int");
}

/* Many keys with interleaved deletes, across many resizes of the index
 * and the id pages; every key checked at the end. */
static void test_growth_with_interleaved_deletes(void **state)
{
    struct fixture *f = *state;
    const size_t n = 60000;
    char buf[32];
    struct goblin_slice out;

    for (size_t i = 0; i < n; i++) {
        set(f->st, keyname(buf, i), keyname(buf, i));
        if (i % 3 == 2)
            assert_int_equal(goblin_key_delete(f->st, keyname(buf, i - 1)),
                             1);
    }
    assert_int_equal(goblin_key_count(f->st), n - n / 3);
    for (size_t i = 0; i < n; i++) {
        struct goblin_slice k = keyname(buf, i);
        int r = goblin_str_get(f->st, k, &out);

        assert_int_equal(r, i % 3 == 1 ? 0 : 1);
        if (r)
            assert_memory_equal(out.ptr, k.ptr, k.len);
    }
    for (size_t i = 0; i < n; i++)
        goblin_key_delete(f->st, keyname(buf, i));
    assert_int_equal(goblin_key_count(f->st), 0);
    goblin__write_begin(f->st);
    assert_int_equal(f->counts.live_blocks, 1);
}

/* Memory per short string key: well under Redis's 50-70 bytes. */
static void test_memory_per_short_key(void **state)
{
    struct fixture *f = *state;
    const size_t n = 100000;
    size_t before = goblin_store_used_memory(f->st), per;
    char buf[32];

    for (size_t i = 0; i < n; i++)
        set(f->st, keyname(buf, i), S("value"));
    goblin__write_begin(f->st);
    per = (goblin_store_used_memory(f->st) - before) / n;
    print_message("bytes per key (\"key:N\" = \"value\"): %zu\n", per);
    assert_true(per <= 40);
}

static int64_t op_rename(goblin_store *st, void *arg)
{
    (void)arg;
    return goblin_key_rename(st, S("key:1"), S("new"), 0);
}

static int64_t op_rename_over(goblin_store *st, void *arg)
{
    (void)arg;
    return goblin_key_rename(st, S("new"), S("key:7"), 0);
}

static int64_t op_expire(goblin_store *st, void *arg)
{
    return goblin_key_expire(st, *(struct goblin_slice *)arg, 100, 0);
}

static int64_t op_persist(goblin_store *st, void *arg)
{
    return goblin_key_persist(st, *(struct goblin_slice *)arg);
}

static void test_failed_allocations_change_nothing(void **state)
{
    struct fixture *f = *state;
    char buf[32];
    struct goblin_slice k;

    for (size_t i = 0; i < 1023; i++)
        set(f->st, keyname(buf, i), S("v"));
    assert_int_equal(goblin_key_expire(f->st, S("key:1"), 50, 0), 1);
    assert_int_equal(run_failing(f, op_rename, NULL), 1);
    assert_int_equal(run_failing(f, op_rename_over, NULL), 1);
    assert_int_equal(goblin_key_ttl(f->st, S("key:7")), 50);
    k = S("key:9");
    assert_int_equal(run_failing(f, op_expire, &k), 1);
    assert_int_equal(run_failing(f, op_expire, &k), 1);
    assert_int_equal(run_failing(f, op_persist, &k), 1);
    assert_int_equal(run_failing(f, op_persist, &k), 0);
    add_fake_hash(f->st, S("h"));
    k = S("h");
    assert_int_equal(run_failing(f, op_expire, &k), 1);
    assert_int_equal(run_failing(f, op_persist, &k), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_add_lookup_remove_many),
        FIXTURE_TEST(test_replace_changes_type_and_wrongtype_is_reported),
        FIXTURE_TEST(test_delete_exists_type),
        FIXTURE_TEST(test_rename_moves_value_and_deadline),
        FIXTURE_TEST(test_rename_keeps_everything_consistent),
        FIXTURE_TEST(test_flush_deletes_everything),
        FIXTURE_TEST(test_random_key),
        FIXTURE_TEST(test_encoding_of_keys),
        FIXTURE_TEST(test_growth_with_interleaved_deletes),
        FIXTURE_TEST(test_memory_per_short_key),
        FIXTURE_TEST(test_failed_allocations_change_nothing),
    };

    return cmocka_run_group_tests_name("keyspace", tests, NULL, NULL);
}
