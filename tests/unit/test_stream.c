/* test_stream.c - the write stream (goblin/stream.h): command in, stream
 * out, for every kind of write command, with the rewrites Redis 7.0.15
 * makes (each expectation was read from a redis-server 7.0.15 AOF fed the
 * same commands, its timestamps turned into the fixture's clock); SELECT
 * and MULTI/EXEC framing, expired keys, blocked clients served later,
 * the classes, offsets and the consumer calls. */
#include "goblin/stream.h"
#include "test_commands_util.h"

/* What a consumer got: the RESP bytes, and the calls. */
struct got {
    char bytes[1 << 16];
    size_t len;
    int calls;
    uint64_t offset;
};

static struct got got, got_local;

static void collect(void *ctx, const void *bytes, size_t len,
                    uint64_t offset)
{
    struct got *g = ctx;

    assert_non_null(bytes);
    assert_true(g->len + len < sizeof(g->bytes));
    memcpy(g->bytes + g->len, bytes, len);
    g->len += len;
    g->calls++;
    g->offset = offset;
}

/* The stream's RESP arrays as "a b | c d" (each array's words spaced,
 * arrays split by " | "); fails on anything but arrays of bulk strings. */
static const char *words_of(const char *p, size_t len, char *out, size_t cap)
{
    const char *end = p + len;
    size_t o = 0;

    out[0] = '\0';
    while (p < end) {
        long n, l;
        char *q;

        assert_int_equal(*p, '*');
        n = strtol(p + 1, &q, 10);
        assert_memory_equal(q, "\r\n", 2);
        p = q + 2;
        if (o > 0)
            o += (size_t)snprintf(out + o, cap - o, " | ");
        for (long i = 0; i < n; i++) {
            assert_int_equal(*p, '$');
            l = strtol(p + 1, &q, 10);
            assert_memory_equal(q, "\r\n", 2);
            p = q + 2;
            o += (size_t)snprintf(out + o, cap - o, "%s%.*s", i ? " " : "",
                                  (int)l, p);
            p += l;
            assert_memory_equal(p, "\r\n", 2);
            p += 2;
        }
    }
    assert_true(o < cap);
    return out;
}

static const char *take(struct got *g, char *out, size_t cap)
{
    words_of(g->bytes, g->len, out, cap);
    g->len = 0;
    return out;
}

static int setup(void **state)
{
    struct cfix *f;

    if (cfix_setup(state) != 0)
        return -1;
    f = *state;
    memset(&got, 0, sizeof(got));
    memset(&got_local, 0, sizeof(got_local));
    return goblin_stream_subscribe(f->eng, GOBLIN_STREAM_REPLICATION,
                                   collect, &got, NULL);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, cfix_teardown)

/* now: the fixture's clock, 1700000000000 ms. */
static const struct row {
    const char *in, *out; /* out "" : nothing goes out */
} rows[] = {
    /* strings */
    {"set a 1", "SELECT 0 | set a 1"},
    {"set a 1 ex 100", "SET a 1 PXAT 1700000100000"},
    {"set a 1 px 100000", "SET a 1 PXAT 1700000100000"},
    {"set a 1 EXAT 1800000000", "SET a 1 PXAT 1800000000000"},
    {"set a 1 pxat 1800000000000", "SET a 1 PXAT 1800000000000"},
    {"set a 2 keepttl", "set a 2 keepttl"},
    {"set b 1 nx", "set b 1 nx"},
    {"set b 1 nx", ""},
    {"set b 2 xx get", "set b 2 xx"},
    {"setex c 100 v", "SET c v PXAT 1700000100000"},
    {"psetex c 100000 v", "SET c v PXAT 1700000100000"},
    {"getex a ex 100", "PEXPIREAT a 1700000100000"},
    {"getex a persist", "PERSIST a"},
    {"getex a", ""},
    {"get a", ""},
    {"getset a 2", "SET a 2"},
    {"getdel a", "DEL a"},
    {"getdel a", ""},
    {"incrbyfloat f 1.5", "SET f 1.5 KEEPTTL"},
    {"incrbyfloat f 1e3", "SET f 1001.5 KEEPTTL"},
    {"incr i", "incr i"},
    {"incrby i 5", "incrby i 5"},
    {"decr i", "decr i"},
    {"decrby i 2", "decrby i 2"},
    {"append ap x", "append ap x"},
    {"setrange sr 0 ab", "setrange sr 0 ab"},
    {"mset m1 c m3 d", "mset m1 c m3 d"},
    {"msetnx m1 a m2 b", ""},
    {"msetnx m4 a m5 b", "msetnx m4 a m5 b"},
    {"setnx m1 z", ""},
    /* keys */
    {"expire m1 100", "PEXPIREAT m1 1700000100000"},
    {"pexpire m1 100000", "PEXPIREAT m1 1700000100000"},
    {"expireat m1 1800000000", "PEXPIREAT m1 1800000000000"},
    {"pexpireat m1 1800000000000", "pexpireat m1 1800000000000"},
    {"expire m1 100 nx", ""},
    {"expire nokey 100", ""},
    {"persist m1", "persist m1"},
    {"persist m1", ""},
    {"expire m1 0", "DEL m1"},
    {"set k 1", "set k 1"},
    {"expire k -5", "DEL k"},
    {"set k 1", "set k 1"},
    {"pexpireat k 1", "DEL k"},
    {"set k 5", "set k 5"},
    {"rename k k2", "rename k k2"},
    {"renamenx k2 k3", "renamenx k2 k3"},
    {"copy k3 kc", "copy k3 kc"},
    {"copy k3 kc db 2", "copy k3 kc db 2"},
    {"move kc 3", "move kc 3"},
    {"del nokey", ""},
    {"del m3 m4", "del m3 m4"},
    {"unlink m5", "unlink m5"},
    {"touch k3", ""},
    {"swapdb 0 1", "swapdb 0 1"},
    {"swapdb 0 1", "swapdb 0 1"},
    /* hashes */
    {"hset h a 1 b 2", "hset h a 1 b 2"},
    {"hset h a 1", "hset h a 1"},
    {"hsetnx h a 2", ""},
    {"hsetnx h c 3", "hsetnx h c 3"},
    {"hmset h d 4", "hmset h d 4"},
    {"hdel h nope", ""},
    {"hdel h d", "hdel h d"},
    {"hincrby h a 5", "hincrby h a 5"},
    {"hincrbyfloat h x 1.5", "HSET h x 1.5"},
    {"hrandfield h", ""},
    /* sets */
    {"sadd s a", "sadd s a"},
    {"sadd s a", ""},
    {"srem s nope", ""},
    {"sadd s2 a b", "sadd s2 a b"},
    {"smove s2 s b", "smove s2 s b"},
    {"srandmember s", ""},
    {"spop nokey", ""},
    {"sadd one x", "sadd one x"},
    {"spop one", "SREM one x"},
    {"sadd two x", "sadd two x"},
    {"spop two 5", "DEL two"},
    {"sadd t a b", "sadd t a b"},
    {"sinterstore si t nokey", ""},
    {"sunionstore su t s", "sunionstore su t s"},
    {"sdiffstore sd t s", ""},
    /* sorted sets and geo */
    {"zadd z 1 a 2 b 3 c", "zadd z 1 a 2 b 3 c"},
    {"zadd z xx 1 nope", ""},
    {"zadd z incr 5 m", "zadd z incr 5 m"},
    {"zincrby z 1 m", "zincrby z 1 m"},
    {"zrem z nope", ""},
    {"zrem z m", "zrem z m"},
    {"zrangestore zr z 0 -1", "zrangestore zr z 0 -1"},
    {"zunionstore zu 1 z", "zunionstore zu 1 z"},
    {"zremrangebyscore zu 1 1", "zremrangebyscore zu 1 1"},
    {"zpopmin zu", "zpopmin zu"},
    {"zmpop 1 z min count 2", "ZPOPMIN z 2"},
    {"bzpopmax z 1", "ZPOPMAX z"},
    {"zrandmember zr", ""},
    {"geoadd g 13.361389 38.115556 Palermo",
     "zadd g 3479099956230698 Palermo"},
    /* lists */
    {"rpush l a b c", "rpush l a b c"},
    {"lpop l", "lpop l"},
    {"rpop l 5", "rpop l 5"},
    {"lpop l", ""},
    {"lpush bl x", "lpush bl x"},
    {"blpop bl 1", "LPOP bl"},
    {"rpush bl2 x y", "rpush bl2 x y"},
    {"brpoplpush bl2 bl3 1", "RPOPLPUSH bl2 bl3"},
    {"blmove bl2 bl3 left right 1", "LMOVE bl2 bl3 left right"},
    {"rpush bl4 a b c", "rpush bl4 a b c"},
    {"blmpop 1 1 bl4 left count 2", "LPOP bl4 2"},
    {"lmpop 1 bl3 right count 1", "RPOP bl3 1"},
    {"lpush q a b c", "lpush q a b c"},
    {"lrem q 0 zz", ""},
    {"lset q 0 x", "lset q 0 x"},
    {"linsert q before x y", "linsert q before x y"},
    {"ltrim q 0 1", "ltrim q 0 1"},
    {"lmove nol x left right", ""},
    /* bitmaps and HyperLogLog */
    {"setbit bb 3 1", "setbit bb 3 1"},
    {"setbit bb 3 1", ""},
    {"bitfield bf set u8 0 255", "bitfield bf set u8 0 255"},
    {"bitfield bf get u8 0", ""},
    {"bitop not bn bb", "bitop not bn bb"},
    {"pfadd hl a", "pfadd hl a"},
    {"pfadd hl a", ""},
    /* SORT */
    {"rpush sl 3 1 2", "rpush sl 3 1 2"},
    {"sort sl store so", "sort sl store so"},
    {"sort sl", ""},
    {"sort nokey store so3", ""},
    /* databases */
    {"select 3", ""},
    {"set in3 1", "SELECT 3 | set in3 1"},
    {"select 0", ""},
    {"set back 1", "SELECT 0 | set back 1"},
    {"flushdb", "flushdb"},
    {"flushall", "flushall"},
};

static void test_every_write_command_goes_out_as_redis_sends_it(void **state)
{
    struct cfix *f = *state;
    char out[4096];

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        CMD(rows[i].in);
        take(&got, out, sizeof(out));
        if (strcmp(out, rows[i].out) != 0)
            fail_msg("%s: got \"%s\", want \"%s\"", rows[i].in, out,
                     rows[i].out);
    }
}

static void test_multi_exec_is_one_unit_and_one_write_goes_bare(void **state)
{
    struct cfix *f = *state;
    char out[4096];

    CMD("set a 1");
    take(&got, out, sizeof(out));
    got.calls = 0;
    CMD("multi");
    CMD("set a 2");
    CMD("incr n");
    CMD("get a");
    assert_int_equal(got.len, 0);
    CMD("exec");
    assert_string_equal(take(&got, out, sizeof(out)),
                        "MULTI | set a 2 | incr n | EXEC");
    assert_int_equal(got.calls, 1);
    CMD("multi");
    CMD("get a");
    CMD("exec");
    assert_string_equal(take(&got, out, sizeof(out)), "");
    CMD("multi");
    CMD("select 4");
    CMD("set in4 1");
    CMD("exec");
    assert_string_equal(take(&got, out, sizeof(out)), "SELECT 4 | set in4 1");
    CMD("multi");
    CMD("incrbyfloat f 2");
    CMD("spop nokey");
    CMD("sadd s x");
    CMD("spop s");
    CMD("exec");
    assert_string_equal(take(&got, out, sizeof(out)),
                        "MULTI | SET f 2 KEEPTTL | sadd s x | "
                        "SREM s x | EXEC");
}

static void test_expired_key_goes_out_as_del(void **state)
{
    struct cfix *f = *state;
    char out[4096];

    CMD("set t1 v px 10");
    take(&got, out, sizeof(out));
    f->base->clock.now_ms += 20;
    EXPECT("get t1", "$-1\r\n");
    assert_string_equal(take(&got, out, sizeof(out)), "DEL t1");
    CMD("set t2 v px 10");
    take(&got, out, sizeof(out));
    f->base->clock.now_ms += 20;
    goblin_engine_cron(f->eng); /* active expiry */
    CMD("dbsize");
    assert_string_equal(take(&got, out, sizeof(out)), "DEL t2");
}

static void test_spop_with_count_goes_out_as_srem_each(void **state)
{
    struct cfix *f = *state;
    char out[4096], *p;
    int srem = 0;

    CMD("sadd s a b c d");
    take(&got, out, sizeof(out));
    CMD("spop s 2");
    take(&got, out, sizeof(out));
    assert_memory_equal(out, "MULTI | SREM s ", 15);
    for (p = out; (p = strstr(p, "SREM s ")) != NULL; p++)
        srem++;
    assert_int_equal(srem, 2);
    assert_non_null(strstr(out, " | EXEC"));
    EXPECT("scard s", ":2\r\n");
}

static void test_blocked_pop_served_later_goes_out_non_blocking(void **state)
{
    struct cfix *f = *state;
    struct goblin_session_info si = {GOBLIN_TRANSPORT_TCP, "127.0.0.1:5001",
                                     "127.0.0.1:6379", 8, NULL};
    goblin_session *b;
    char out[4096];

    assert_int_equal(goblin_session_open(f->eng, &si, &b), 0);
    cmd_on(f, b, "blpop bq 0");
    cmd_on(f, b, "select 0");
    assert_string_equal(take(&got, out, sizeof(out)), "");
    CMD("rpush bq x y");
    assert_string_equal(take(&got, out, sizeof(out)),
                        "SELECT 0 | rpush bq x y | LPOP bq");
    cmd_on(f, b, "blmove bq2 bq3 right left 0");
    CMD("rpush bq2 z");
    assert_string_equal(take(&got, out, sizeof(out)),
                        "rpush bq2 z | LMOVE bq2 bq3 RIGHT LEFT");
    goblin_session_close(b);
}

static void test_local_class_and_offsets(void **state)
{
    struct cfix *f = *state;
    uint32_t id;
    char out[4096];
    uint64_t before;

    assert_int_equal(goblin_stream_subscribe(f->eng, GOBLIN_STREAM_LOCAL,
                                             collect, &got_local, &id), 0);
    before = goblin_stream_offset(f->eng);
    CMD("set a 1");
    assert_int_equal(goblin_stream_offset(f->eng), before + got.len);
    assert_int_equal(got.offset, goblin_stream_offset(f->eng));
    assert_string_equal(take(&got_local, out, sizeof(out)),
                        "SELECT 0 | set a 1");
    take(&got, out, sizeof(out));
    /* Following a master: replication sees only what is fed. */
    goblin_stream_follow(f->eng, true);
    CMD("set b 1");
    assert_int_equal(got.len, 0);
    assert_string_equal(take(&got_local, out, sizeof(out)), "set b 1");
    goblin_stream_feed(f->eng, "*1\r\n$4\r\nPING\r\n", 14);
    assert_string_equal(take(&got, out, sizeof(out)), "PING");
    goblin_stream_follow(f->eng, false);
    CMD("set c 1");
    assert_string_equal(take(&got, out, sizeof(out)), "SELECT 0 | set c 1");
    goblin_stream_reselect(f->eng, GOBLIN_STREAM_LOCAL);
    CMD("set d 1");
    assert_string_equal(take(&got_local, out, sizeof(out)),
                        "set c 1 | SELECT 0 | set d 1");
    assert_int_equal(goblin_stream_emit(f->eng, GOBLIN_STREAM_REPLICATION,
                                        -1, 1,
                                        (struct goblin_slice[]){{"PING", 4}}),
                     0);
    take(&got, out, sizeof(out));
    assert_string_equal(out, "set d 1 | PING");
    goblin_stream_unsubscribe(f->eng, id);
    CMD("set e 1");
    assert_int_equal(got_local.len, 0);
    goblin_stream_set_offset(f->eng, 1000);
    assert_int_equal(goblin_stream_offset(f->eng), 1000);
}

static void test_nothing_goes_out_without_a_consumer(void **state)
{
    struct cfix *f = NULL;
    char out[64];

    (void)state;
    assert_int_equal(cfix_setup((void **)&f), 0);
    memset(&got, 0, sizeof(got));
    CMD("set a 1");
    assert_int_equal(goblin_stream_offset(f->eng), 0);
    assert_string_equal(take(&got, out, sizeof(out)), "");
    cfix_teardown((void **)&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_every_write_command_goes_out_as_redis_sends_it),
        T(test_multi_exec_is_one_unit_and_one_write_goes_bare),
        T(test_expired_key_goes_out_as_del),
        T(test_spop_with_count_goes_out_as_srem_each),
        T(test_blocked_pop_served_later_goes_out_non_blocking),
        T(test_local_class_and_offsets),
        cmocka_unit_test(test_nothing_goes_out_without_a_consumer),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
