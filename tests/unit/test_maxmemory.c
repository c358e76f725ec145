/* test_maxmemory.c - memory limits: which key each maxmemory-policy
 * evicts (volatile-* touch only keys with a deadline, volatile-ttl the
 * nearest deadline, allkeys-lru idle keys by the settable clock), access
 * times and their aging, LFU counters and their decay, CONFIG SET
 * validation, the OOM refusal with
 * Redis's exact texts (MULTI and EXEC included), eviction keeping used
 * memory under the limit, OBJECT IDLETIME, and store allocation failures
 * turned into OOM replies that change nothing. */
#include "test_commands_util.h"

#include "store/evict.h"
#include "store/store.h"

#define OOM "-OOM command not allowed when used memory > 'maxmemory'.\r\n"

static void put(goblin_store *st, const char *fmt, int i, int64_t ttl_ms)
{
    char key[32];
    int n = snprintf(key, sizeof(key), fmt, i);

    assert_int_equal(goblin_str_set(st, slice_of(key, (size_t)n),
                                    S("value"), NULL, NULL),
                     GOBLIN_SET_DONE);
    if (ttl_ms > 0)
        assert_int_equal(goblin_key_pexpire(st, slice_of(key, (size_t)n),
                                            ttl_ms, 0), 1);
}

static bool has(goblin_store *st, const char *fmt, int i)
{
    char key[32];
    int n = snprintf(key, sizeof(key), fmt, i);

    return goblin_key_exists(st, slice_of(key, (size_t)n)) == 1;
}

static void volatile_only(struct fixture *f, enum goblin__policy p)
{
    for (int i = 0; i < 20; i++)
        put(f->st, "plain:%d", i, 0);
    for (int i = 0; i < 5; i++)
        put(f->st, "ttl:%d", i, 100000 + i);
    for (int i = 0; i < 5; i++)
        assert_int_equal(goblin__evict_one(f->st, p, 5), 1);
    assert_int_equal(goblin__evict_one(f->st, p, 5), 0);
    assert_int_equal(goblin_key_count(f->st), 20);
    for (int i = 0; i < 20; i++)
        assert_true(has(f->st, "plain:%d", i));
}

static void test_volatile_lru_evicts_only_keys_with_ttl(void **state)
{
    volatile_only(*state, GOBLIN__POLICY_VOLATILE_LRU);
}

static void test_volatile_random_evicts_only_keys_with_ttl(void **state)
{
    volatile_only(*state, GOBLIN__POLICY_VOLATILE_RANDOM);
}

static void test_volatile_ttl_evicts_only_keys_with_ttl(void **state)
{
    volatile_only(*state, GOBLIN__POLICY_VOLATILE_TTL);
}

static void test_noeviction_evicts_nothing(void **state)
{
    struct fixture *f = *state;

    put(f->st, "k:%d", 1, 1000);
    assert_int_equal(goblin__evict_one(f->st, GOBLIN__POLICY_NOEVICTION, 5),
                     0);
    assert_int_equal(goblin_key_count(f->st), 1);
}

static void test_allkeys_evict_from_an_empty_store_is_zero(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(goblin__evict_one(f->st, GOBLIN__POLICY_ALLKEYS_LRU, 5),
                     0);
    assert_int_equal(
        goblin__evict_one(f->st, GOBLIN__POLICY_ALLKEYS_RANDOM, 5), 0);
}

static void test_volatile_ttl_prefers_the_nearest_deadline(void **state)
{
    struct fixture *f = *state;

    /* Deadlines 10 s apart, inserted out of order. */
    for (int i = 0; i < 20; i++)
        put(f->st, "t:%d", (i * 7) % 20, 10000 * (1 + (i * 7) % 20));
    for (int want = 0; want < 5; want++) {
        assert_int_equal(goblin__evict_one(f->st,
                                           GOBLIN__POLICY_VOLATILE_TTL, 200),
                         1);
        assert_false(has(f->st, "t:%d", want));
        assert_true(has(f->st, "t:%d", want + 1));
    }
}

static void test_allkeys_lru_prefers_idle_keys(void **state)
{
    struct fixture *f = *state;

    for (int i = 0; i < 10; i++)
        put(f->st, "old:%d", i, 0);
    f->clock.now_ms += 100000; /* 100 s later the new keys arrive */
    goblin__lru_tick(f->st);
    for (int i = 0; i < 10; i++)
        put(f->st, "new:%d", i, 0);
    f->clock.now_ms += 1000;
    for (int i = 0; i < 10; i++)
        assert_int_equal(goblin__evict_one(f->st, GOBLIN__POLICY_ALLKEYS_LRU,
                                           200), 1);
    for (int i = 0; i < 10; i++) {
        assert_false(has(f->st, "old:%d", i));
        assert_true(has(f->st, "new:%d", i));
    }
}

static void test_a_read_makes_a_key_recent(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice v;

    for (int i = 0; i < 10; i++)
        put(f->st, "k:%d", i, 0);
    f->clock.now_ms += 50000;
    goblin__lru_tick(f->st);
    assert_int_equal(goblin_str_get(f->st, S("k:3"), &v), 1);
    f->clock.now_ms += 1000;
    for (int i = 0; i < 9; i++)
        assert_int_equal(goblin__evict_one(f->st, GOBLIN__POLICY_ALLKEYS_LRU,
                                           200), 1);
    assert_int_equal(goblin_key_count(f->st), 1);
    assert_true(has(f->st, "k:%d", 3));
}

static void test_idle_time_counts_seconds_and_ages_without_wrapping(
    void **state)
{
    struct fixture *f = *state;
    uint32_t id;

    put(f->st, "k:%d", 0, 0);
    f->clock.now_ms += 7000;
    goblin__lru_tick(f->st);
    f->st->no_touch = true;
    assert_int_equal(goblin__key_find(f->st, S("k:0"), &id), 1);
    assert_int_equal(goblin__key_idle(f->st, id), 7);
    /* 40000 s: beyond 2^15, so aging caps the stamp at 2^15 s old. */
    f->clock.now_ms += 40000000;
    goblin__lru_tick(f->st);
    goblin__lru_age_step(f->st, 10);
    assert_int_equal(goblin__key_idle(f->st, id), 0x8000);
    /* Another 40000 s with aging in between: old, never young again. */
    f->clock.now_ms += 20000000;
    goblin__lru_tick(f->st);
    goblin__lru_age_step(f->st, 10);
    f->clock.now_ms += 20000000;
    goblin__lru_tick(f->st);
    assert_true(goblin__key_idle(f->st, id) >= 0x8000);
    f->st->no_touch = false;
}

static void test_swap_remove_moves_the_stamp_with_the_key(void **state)
{
    struct fixture *f = *state;
    uint32_t id;

    put(f->st, "a:%d", 0, 0);
    put(f->st, "b:%d", 0, 0);
    f->clock.now_ms += 30000;
    goblin__lru_tick(f->st);
    put(f->st, "c:%d", 0, 0); /* the last id, 30 s younger */
    assert_int_equal(goblin_key_delete(f->st, S("a:0")), 1);
    f->st->no_touch = true;
    assert_int_equal(goblin__key_find(f->st, S("c:0"), &id), 1);
    assert_int_equal(goblin__key_idle(f->st, id), 0);
    assert_int_equal(goblin__key_find(f->st, S("b:0"), &id), 1);
    assert_int_equal(goblin__key_idle(f->st, id), 30);
    f->st->no_touch = false;
}

static void test_allkeys_lfu_prefers_rarely_used_keys(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice v;
    char key[32];

    f->st->lfu = true;
    f->st->lfu_log_factor = 0; /* every access counts one */
    for (int i = 0; i < 20; i++)
        put(f->st, "k:%d", i, 0);
    for (int i = 0; i < 20; i += 2)
        for (int n = 0; n < 10; n++)
            assert_int_equal(goblin_str_get(f->st, slice_of(key, (size_t)
                                  snprintf(key, sizeof(key), "k:%d", i)),
                                            &v), 1);
    for (int i = 0; i < 10; i++)
        assert_int_equal(goblin__evict_one(f->st, GOBLIN__POLICY_ALLKEYS_LFU,
                                           200), 1);
    for (int i = 0; i < 20; i++)
        assert_int_equal(has(f->st, "k:%d", i), i % 2 == 0);
}

static void test_lfu_decay_survives_the_8_bit_minute(void **state)
{
    struct fixture *f = *state;
    uint32_t id;

    f->st->lfu = true;
    f->st->lfu_decay_time = 100;
    put(f->st, "k:%d", 0, 0);
    f->st->no_touch = true;
    assert_int_equal(goblin__key_find(f->st, S("k:0"), &id), 1);
    goblin__key_set_stamp(f->st, id, (uint16_t)(f->st->lfu_minute << 8 | 255));
    /* 200 minutes, aged, then 200 more: 4 periods of 100 minutes, where
     * the 8-bit minute alone would see 400 % 256 = 144 minutes, 1 period. */
    f->clock.now_ms += 200 * 60000;
    goblin__lru_tick(f->st);
    goblin__lru_age_step(f->st, 1);
    assert_int_equal(goblin__key_freq(f->st, id), 253);
    f->clock.now_ms += 200 * 60000;
    goblin__lru_tick(f->st);
    goblin__lru_age_step(f->st, 1);
    assert_int_equal(goblin__key_freq(f->st, id), 251);
    f->st->no_touch = false;
}

/* ---- through the engine ---- */

static void test_config_set_validation(void **state)
{
    struct cfix *f = *state;

    EXPECT("CONFIG SET maxmemory-policy foo",
           "-ERR CONFIG SET failed (possibly related to argument "
           "'maxmemory-policy') - argument(s) must be one of the following: "
           "volatile-lru, volatile-lfu, volatile-random, volatile-ttl, "
           "allkeys-lru, allkeys-lfu, allkeys-random, noeviction\r\n");
    EXPECT("CONFIG SET maxmemory foo",
           "-ERR CONFIG SET failed (possibly related to argument "
           "'maxmemory') - argument must be a memory value\r\n");
    EXPECT("CONFIG SET maxmemory -1",
           "-ERR CONFIG SET failed (possibly related to argument "
           "'maxmemory') - argument must be a memory value\r\n");
    EXPECT("CONFIG SET maxmemory-samples 0",
           "-ERR CONFIG SET failed (possibly related to argument "
           "'maxmemory-samples') - argument must be between 1 and "
           "2147483647 inclusive\r\n");
    EXPECT("CONFIG SET maxmemory-samples x",
           "-ERR CONFIG SET failed (possibly related to argument "
           "'maxmemory-samples') - argument couldn't be parsed into an "
           "integer\r\n");
    EXPECT("CONFIG GET maxmemory",
           "*2\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n");
    EXPECT("CONFIG GET maxmemory-policy",
           "*2\r\n$16\r\nmaxmemory-policy\r\n$10\r\nnoeviction\r\n");
    EXPECT("CONFIG GET maxmemory-samples",
           "*2\r\n$17\r\nmaxmemory-samples\r\n$1\r\n5\r\n");
    EXPECT("CONFIG SET maxmemory 1k", "+OK\r\n");
    EXPECT("CONFIG GET maxmemory",
           "*2\r\n$9\r\nmaxmemory\r\n$4\r\n1000\r\n");
    EXPECT("CONFIG SET maxmemory 2mb", "+OK\r\n");
    EXPECT("CONFIG GET maxmemory",
           "*2\r\n$9\r\nmaxmemory\r\n$7\r\n2097152\r\n");
    EXPECT("CONFIG SET maxmemory-policy ALLKEYS-LRU", "+OK\r\n");
    EXPECT("CONFIG GET maxmemory-policy",
           "*2\r\n$16\r\nmaxmemory-policy\r\n$11\r\nallkeys-lru\r\n");
    EXPECT("CONFIG SET maxmemory-samples 10", "+OK\r\n");
    EXPECT("CONFIG SET lfu-log-factor -1",
           "-ERR CONFIG SET failed (possibly related to argument "
           "'lfu-log-factor') - argument must be between 0 and 2147483647 "
           "inclusive\r\n");
    EXPECT("CONFIG GET lfu-decay-time",
           "*2\r\n$14\r\nlfu-decay-time\r\n$1\r\n1\r\n");
    EXPECT("CONFIG SET maxmemory-policy volatile-lfu", "+OK\r\n");
    EXPECT("CONFIG GET maxmemory-policy",
           "*2\r\n$16\r\nmaxmemory-policy\r\n$12\r\nvolatile-lfu\r\n");
}

static void test_object_freq_under_lfu(void **state)
{
    struct cfix *f = *state;

    EXPECT("SET k v", "+OK\r\n");
    EXPECT("OBJECT FREQ k",
           "-ERR An LFU maxmemory policy is not selected, access frequency "
           "not tracked. Please note that when switching between policies "
           "at runtime LRU and LFU data will take some time to adjust.\r\n");
    EXPECT("CONFIG SET maxmemory-policy allkeys-lfu", "+OK\r\n");
    EXPECT("CONFIG SET lfu-log-factor 0", "+OK\r\n");
    EXPECT("SET n v", "+OK\r\n");
    EXPECT("OBJECT FREQ n", ":5\r\n");
    EXPECT("GET n", "$1\r\nv\r\n");
    EXPECT("GET n", "$1\r\nv\r\n");
    EXPECT("GET n", "$1\r\nv\r\n");
    EXPECT("OBJECT FREQ n", ":8\r\n");
    EXPECT("OBJECT FREQ nokey", "$-1\r\n");
    EXPECT("OBJECT IDLETIME n",
           "-ERR An LFU maxmemory policy is selected, idle time not "
           "tracked. Please note that when switching between policies at "
           "runtime LRU and LFU data will take some time to adjust.\r\n");
    f->base->clock.now_ms += 3 * 60000; /* one decrement a minute */
    goblin_engine_cron(f->eng);
    EXPECT("OBJECT FREQ n", ":5\r\n");
}

static void test_noeviction_refuses_denyoom_commands_only(void **state)
{
    struct cfix *f = *state;

    EXPECT("SET a 1", "+OK\r\n");
    EXPECT("CONFIG SET maxmemory 1", "+OK\r\n"); /* always over */
    EXPECT("SET b 2", OOM);
    EXPECT("HSET h f v", OOM);
    EXPECT("ZADD z 1 m", OOM);
    EXPECT("GET a", "$1\r\n1\r\n");
    EXPECT("EXPIRE a 100", ":1\r\n");
    EXPECT("DEL a", ":1\r\n");
    assert_non_null(strstr(CMD("INFO stats"), "evicted_keys:0\r\n"));
    assert_non_null(strstr(CMD("INFO commandstats"),
                           "cmdstat_set:calls=1,"));
    assert_non_null(strstr(f->out, "rejected_calls=1,failed_calls=0"));
    assert_non_null(strstr(CMD("INFO errorstats"),
                           "errorstat_OOM:count=3\r\n"));
}

static void test_oom_in_multi_aborts_exec(void **state)
{
    struct cfix *f = *state;

    EXPECT("CONFIG SET maxmemory 1", "+OK\r\n");
    EXPECT("MULTI", "+OK\r\n");
    EXPECT("GET a", OOM); /* queueing takes memory: refused */
    EXPECT("EXEC", "-EXECABORT Transaction discarded because of previous "
                   "errors.\r\n");
    EXPECT("MULTI", "+OK\r\n");
    EXPECT("DISCARD", "+OK\r\n");
}

static void test_exec_of_queued_denyoom_is_refused(void **state)
{
    struct cfix *f = *state;
    struct goblin_session_info si = {GOBLIN_TRANSPORT_TCP, "127.0.0.1:5001",
                                     "127.0.0.1:6379", 8, NULL};
    goblin_session *other;

    assert_int_equal(goblin_session_open(f->eng, &si, &other), 0);
    EXPECT("MULTI", "+OK\r\n");
    EXPECT("SET a 1", "+QUEUED\r\n");
    assert_string_equal(cmd_on(f, other, "CONFIG SET maxmemory 1"),
                        "+OK\r\n");
    EXPECT("EXEC", "-EXECABORT Transaction discarded because of: OOM "
                   "command not allowed when used memory > 'maxmemory'."
                   "\r\n");
    EXPECT("EXISTS a", ":0\r\n");
    /* Queued reads only: EXEC runs them. */
    assert_string_equal(cmd_on(f, other, "CONFIG SET maxmemory 0"),
                        "+OK\r\n");
    EXPECT("MULTI", "+OK\r\n");
    EXPECT("GET a", "+QUEUED\r\n");
    assert_string_equal(cmd_on(f, other, "CONFIG SET maxmemory 1"),
                        "+OK\r\n");
    EXPECT("EXEC", "*1\r\n$-1\r\n");
    goblin_session_close(other);
}

static void test_allkeys_lru_keeps_used_memory_under_the_limit(void **state)
{
    struct cfix *f = *state;
    goblin_store *st = f->base->st;
    size_t limit = goblin_store_used_memory(st) + 64 * 1024;
    char cmd[128], val[101];

    memset(val, 'v', 100);
    val[100] = '\0';
    snprintf(cmd, sizeof(cmd), "CONFIG SET maxmemory %zu", limit);
    EXPECT(cmd, "+OK\r\n");
    EXPECT("CONFIG SET maxmemory-policy allkeys-lru", "+OK\r\n");
    for (int i = 0; i < 3000; i++) {
        snprintf(cmd, sizeof(cmd), "SET key:%d %s", i, val);
        EXPECT(cmd, "+OK\r\n");
        /* One command may pass the limit; the next one evicts first. */
        assert_true(goblin_store_used_memory(st) < limit + 4096);
    }
    assert_true(goblin_key_count(st) < 3000);
    assert_true(goblin_key_count(st) > 100);
    EXPECT("EXISTS key:2999", ":1\r\n");
    assert_non_null(strstr(CMD("INFO stats"), "evicted_keys:"));
    assert_null(strstr(f->out, "evicted_keys:0\r\n"));
    assert_non_null(strstr(CMD("INFO memory"), "maxmemory_policy:"
                                               "allkeys-lru\r\n"));
}

static void test_object_idletime_counts_from_the_last_access(void **state)
{
    struct cfix *f = *state;

    EXPECT("SET k v", "+OK\r\n");
    EXPECT("OBJECT IDLETIME nokey", "$-1\r\n");
    f->base->clock.now_ms += 5000;
    goblin_engine_cron(f->eng);
    EXPECT("OBJECT IDLETIME k", ":5\r\n");
    EXPECT("OBJECT ENCODING k", "$6\r\nembstr\r\n"); /* not an access */
    EXPECT("OBJECT IDLETIME k", ":5\r\n");
    EXPECT("CLIENT NO-TOUCH on", "+OK\r\n");
    EXPECT("GET k", "$1\r\nv\r\n");
    EXPECT("OBJECT IDLETIME k", ":5\r\n");
    EXPECT("TOUCH k", ":1\r\n");
    EXPECT("OBJECT IDLETIME k", ":0\r\n");
    EXPECT("CLIENT NO-TOUCH off", "+OK\r\n");
    f->base->clock.now_ms += 3000;
    goblin_engine_cron(f->eng);
    EXPECT("GET k", "$1\r\nv\r\n");
    EXPECT("OBJECT IDLETIME k", ":0\r\n");
}

/* The reads Redis 7.0 makes with LOOKUP_NOTOUCH leave the access time
 * alone (redis-server 7.0.15: SET foo bar, 4 s, TTL foo, OBJECT IDLETIME
 * foo gives 4); so LRU eviction still picks a key only they have read. */
static void test_reads_that_leave_access_times_alone(void **state)
{
    static const char *const quiet[] = {
        "TTL a", "PTTL a", "EXPIRETIME a", "PEXPIRETIME a", "TYPE a",
        "EXISTS a", "OBJECT ENCODING a", "OBJECT REFCOUNT a", "WATCH a",
        "MULTI", "EXEC",
    };
    struct cfix *f = *state;

    EXPECT("SET a v", "+OK\r\n");
    EXPECT("SET b v", "+OK\r\n");
    f->base->clock.now_ms += 4000;
    goblin_engine_cron(f->eng);
    for (size_t i = 0; i < sizeof(quiet) / sizeof(*quiet); i++)
        CMD(quiet[i]);
    EXPECT("OBJECT IDLETIME a", ":4\r\n");
    EXPECT("STRLEN b", ":1\r\n"); /* a read that touches */
    EXPECT("OBJECT IDLETIME b", ":0\r\n");
    f->base->clock.now_ms += 1000;
    goblin_engine_cron(f->eng);
    assert_int_equal(goblin__evict_one(f->base->st,
                                       GOBLIN__POLICY_ALLKEYS_LRU, 200), 1);
    EXPECT("EXISTS a b", ":1\r\n");
    EXPECT("EXISTS b", ":1\r\n");
}

/* A write whose Nth allocation fails answers OOM and changes nothing, for
 * N = 0, 1, ... until it succeeds. The session's buffers are grown by a
 * first run of the same command, so the store's allocations are what
 * fails. */
static void fail_loop(struct cfix *f, const char *setup, const char *words,
                      const char *ok, const char *check, const char *before)
{
    char buf[8192];
    const char *in = resp_of(buf, sizeof(buf), words);
    long n;

    if (setup != NULL)
        CMD(setup);
    CMD(words); /* warm the session's buffers ... */
    CMD("FLUSHALL");
    if (setup != NULL)
        CMD(setup);
    for (n = 0; n < 1000; n++) {
        const char *got;

        f->base->counts.fail_after = n;
        got = FEED(in);
        f->base->counts.fail_after = -1;
        assert_int_equal(f->rc, 0);
        if (strcmp(got, ok) == 0)
            break;
        assert_string_equal(got, OOM);
        assert_string_equal(CMD(check), before);
    }
    assert_true(n > 0 && n < 1000);
    CMD("FLUSHALL");
}

static void test_store_allocation_failures_answer_oom(void **state)
{
    struct cfix *f = *state;

    fail_loop(f, NULL, "SET k value", "+OK\r\n", "EXISTS k", ":0\r\n");
    fail_loop(f, NULL, "HSET h a 1 b 2 c 3", ":3\r\n", "HLEN h", ":0\r\n");
    fail_loop(f, "HSET h a 1", "HSET h b 2 c 3", ":2\r\n", "HLEN h",
              ":1\r\n");
    fail_loop(f, NULL, "ZADD z 1 a 2 b 3 c", ":3\r\n", "ZCARD z", ":0\r\n");
    fail_loop(f, "SET k v", "EXPIRE k 100", ":1\r\n", "TTL k", ":-1\r\n");
    fail_loop(f, NULL, "MSET a 1 b 2 c 3", "+OK\r\n", "EXISTS a b c",
              ":0\r\n");
}

#define STORE_TEST(fn) FIXTURE_TEST(fn)

int main(void)
{
    const struct CMUnitTest tests[] = {
        STORE_TEST(test_volatile_lru_evicts_only_keys_with_ttl),
        STORE_TEST(test_volatile_random_evicts_only_keys_with_ttl),
        STORE_TEST(test_volatile_ttl_evicts_only_keys_with_ttl),
        STORE_TEST(test_noeviction_evicts_nothing),
        STORE_TEST(test_allkeys_evict_from_an_empty_store_is_zero),
        STORE_TEST(test_volatile_ttl_prefers_the_nearest_deadline),
        STORE_TEST(test_allkeys_lru_prefers_idle_keys),
        STORE_TEST(test_a_read_makes_a_key_recent),
        STORE_TEST(test_idle_time_counts_seconds_and_ages_without_wrapping),
        STORE_TEST(test_swap_remove_moves_the_stamp_with_the_key),
        STORE_TEST(test_allkeys_lfu_prefers_rarely_used_keys),
        STORE_TEST(test_lfu_decay_survives_the_8_bit_minute),
        CMD_TEST(test_config_set_validation),
        CMD_TEST(test_object_freq_under_lfu),
        CMD_TEST(test_noeviction_refuses_denyoom_commands_only),
        CMD_TEST(test_oom_in_multi_aborts_exec),
        CMD_TEST(test_exec_of_queued_denyoom_is_refused),
        CMD_TEST(test_allkeys_lru_keeps_used_memory_under_the_limit),
        CMD_TEST(test_object_idletime_counts_from_the_last_access),
        CMD_TEST(test_reads_that_leave_access_times_alone),
        CMD_TEST(test_store_allocation_failures_answer_oom),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
