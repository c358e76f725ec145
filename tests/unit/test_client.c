/* test_client.c - the C client API (goblin/client.h) against in-process
 * sessions: every typed call over SBE, RESP2 and RESP3 gives the same
 * native results (lists and sets too, their strings read in place);
 * generic calls; error replies; pipelines of many requests; a session
 * that closes. */
#include <math.h>

#include "test_commands_util.h"

#include "goblin/client.h"

static const enum goblin_client_protocol protos[] = {
    GOBLIN_CLIENT_SBE, GOBLIN_CLIENT_RESP2, GOBLIN_CLIENT_RESP3};

static goblin_client *client_on(struct cfix *f, goblin_session **s,
                                enum goblin_client_protocol proto)
{
    struct goblin_session_info si = {GOBLIN_TRANSPORT_LOCAL, "local",
                                     "local", -1, NULL};
    struct goblin_client_config cfg = {0};
    goblin_client *c;

    cfg.protocol = proto;
    assert_int_equal(goblin_session_open(f->eng, &si, s), 0);
    assert_int_equal(goblin_client_connect_session(*s, &cfg, &c), 0);
    assert_int_equal(goblin_client_protocol(c), proto);
    return c;
}

static void typed_calls(goblin_client *c)
{
    struct goblin_slice v, keys[2] = {S("s"), S("nope")};
    struct goblin_set_options nx = {GOBLIN_SET_NX, GOBLIN_TTL_PX, 5000, 0};
    struct goblin_slice fv[4] = {S("f1"), S("v1"), S("f2"), S("v2")};
    struct goblin_slice members[3] = {S("a"), S("b"), S("c")};
    double scores[3] = {1.5, -2, INFINITY}, d = 0;
    const struct goblin_client_member *m;
    int64_t r = 0;

    assert_int_equal(goblin_client_flushall(c), 0);
    assert_int_equal(goblin_client_ping(c), 0);
    assert_int_equal(goblin_client_set(c, S("s"), S("v\0x"), NULL), 1);
    assert_int_equal(goblin_client_set(c, S("s"), S("w"), &nx), 0);
    assert_int_equal(goblin_client_get(c, S("s"), &v), 1);
    assert_int_equal(v.len, 3);
    assert_memory_equal(v.ptr, "v\0x", 3);
    assert_int_equal(goblin_client_get(c, S("nope"), &v), 0);
    assert_int_equal(goblin_client_incrby(c, S("n"), -7, &r), 0);
    assert_int_equal(r, -7);
    assert_int_equal(goblin_client_incrby(c, S("s"), 1, &r), GOBLIN_EREPLY);
    assert_string_equal(goblin_client_error(c),
                        "ERR value is not an integer or out of range");
    assert_int_equal(goblin_client_exists(c, keys, 2), 1);
    assert_int_equal(goblin_client_pexpire(c, S("s"), 10000, 0), 1);
    assert_int_equal(goblin_client_pexpire(c, S("s"), 5000,
                                           GOBLIN_EXPIRE_GT), 0);
    assert_int_equal(goblin_client_pttl(c, S("s")), 10000);
    assert_int_equal(goblin_client_pttl(c, S("nope")), -2);
    assert_int_equal(goblin_client_hset(c, S("h"), fv, 2), 2);
    assert_int_equal(goblin_client_hget(c, S("h"), S("f2"), &v), 1);
    assert_memory_equal(v.ptr, "v2", 2);
    assert_int_equal(goblin_client_hdel(c, S("h"), fv, 1), 1);
    assert_int_equal(goblin_client_hlen(c, S("h")), 1);
    assert_int_equal(goblin_client_hget(c, S("s"), S("f"), &v),
                     GOBLIN_EWRONGTYPE);
    assert_int_equal(goblin_client_zadd(c, S("z"), scores, members, 3, 0), 3);
    assert_int_equal(goblin_client_zadd(c, S("z"), scores, members, 1,
                                        GOBLIN_ZADD_CH | GOBLIN_ZADD_XX), 0);
    assert_int_equal(goblin_client_zincrby(c, S("z"), S("a"), 0.25, &d), 0);
    if (d != 1.75)
        fail_msg("zincrby gave %.17g over %d", d,
                 (int)goblin_client_protocol(c));
    assert_int_equal(goblin_client_zscore(c, S("z"), S("c"), &d), 1);
    assert_true(isinf(d));
    assert_int_equal(goblin_client_zscore(c, S("z"), S("x"), &d), 0);
    assert_int_equal(goblin_client_zrank(c, S("z"), S("a"), 1, &r), 1);
    assert_int_equal(r, 1);
    assert_int_equal(goblin_client_zrange(c, S("z"), 0, -1, 0, &m), 3);
    assert_memory_equal(m[0].member.ptr, "b", 1);
    assert_true(m[0].score == -2 && m[1].score == 1.75 && isinf(m[2].score));
    assert_int_equal(goblin_client_zrange(c, S("z"), 0, 0, 1, &m), 1);
    assert_memory_equal(m[0].member.ptr, "c", 1);
    assert_int_equal(goblin_client_zrange_by_score(c, S("z"), -2, 1, 10, 0, 0,
                                                   0, -1, &m), 1);
    assert_memory_equal(m[0].member.ptr, "a", 1);
    assert_int_equal(goblin_client_zrange_by_score(c, S("z"), -INFINITY, 0,
                                                   INFINITY, 0, 1, 1, 1, &m),
                     1);
    assert_memory_equal(m[0].member.ptr, "a", 1);
    assert_int_equal(goblin_client_zrem(c, S("z"), members, 2), 2);
    assert_int_equal(goblin_client_zcard(c, S("z")), 1);
    assert_int_equal(goblin_client_del(c, keys, 2), 1);
    assert_int_equal(goblin_client_dbsize(c), 3);
}

static void same_strings(const struct goblin_slice *got, int64_t n,
                         const char *const *want, int64_t k)
{
    assert_int_equal(n, k);
    for (int64_t i = 0; i < n; i++) {
        assert_int_equal(got[i].len, strlen(want[i]));
        assert_memory_equal(got[i].ptr, want[i], got[i].len);
    }
}

static void list_and_set_calls(goblin_client *c)
{
    struct goblin_slice e[3] = {S("a"), S("b\0c"), S("")};
    struct goblin_slice m[4] = {S("3"), S("1"), S("2"), S("1")};
    const struct goblin_slice *out = NULL;
    static const char *const ints[] = {"1", "2", "3"};
    int64_t n;

    assert_int_equal(goblin_client_rpush(c, S("l"), e, 3), 3);
    assert_int_equal(goblin_client_lpush(c, S("l"), e, 1), 4);
    assert_int_equal(goblin_client_llen(c, S("l")), 4);
    n = goblin_client_lrange(c, S("l"), 1, -2, &out);
    assert_int_equal(n, 2);
    assert_memory_equal(out[0].ptr, "a", 1);
    assert_int_equal(out[1].len, 3);
    assert_memory_equal(out[1].ptr, "b\0c", 3);
    assert_int_equal(goblin_client_lrange(c, S("l"), 5, 9, &out), 0);
    assert_int_equal(goblin_client_lrange(c, S("nope"), 0, -1, &out), 0);
    assert_int_equal(goblin_client_rpop(c, S("l"), 2, &out), 2);
    assert_int_equal(out[0].len, 0);
    assert_int_equal(out[1].len, 3);
    assert_memory_equal(out[1].ptr, "b\0c", 3);
    n = goblin_client_lpop(c, S("l"), 5, &out);
    same_strings(out, n, (const char *const[]){"a", "a"}, 2);
    assert_int_equal(goblin_client_llen(c, S("l")), 0);
    assert_int_equal(goblin_client_lpop(c, S("l"), 1, &out), 0);
    assert_int_equal(goblin_client_lpush(c, S("l"), e, 0), GOBLIN_EREPLY);
    assert_string_equal(goblin_client_error(c),
                        "ERR wrong number of arguments for 'lpush' command");
    assert_int_equal(goblin_client_lpop(c, S("h"), 1, &out),
                     GOBLIN_EWRONGTYPE);
    assert_int_equal(goblin_client_lpop(c, S("l"), -1, &out), GOBLIN_EREPLY);
    assert_string_equal(goblin_client_error(c),
                        "ERR value is out of range, must be positive");
    assert_int_equal(goblin_client_sadd(c, S("t"), m, 4), 3);
    assert_int_equal(goblin_client_sadd(c, S("t"), m, 1), 0);
    assert_int_equal(goblin_client_scard(c, S("t")), 3);
    assert_int_equal(goblin_client_sismember(c, S("t"), S("2")), 1);
    assert_int_equal(goblin_client_sismember(c, S("t"), S("9")), 0);
    assert_int_equal(goblin_client_sismember(c, S("nope"), S("2")), 0);
    n = goblin_client_smembers(c, S("t"), &out);
    same_strings(out, n, ints, 3); /* an intset, in ascending order */
    assert_int_equal(goblin_client_smembers(c, S("nope"), &out), 0);
    assert_int_equal(goblin_client_srem(c, S("t"), m + 1, 3), 2);
    assert_int_equal(goblin_client_scard(c, S("t")), 1);
    assert_int_equal(goblin_client_srem(c, S("t"), m, 1), 1);
    assert_int_equal(goblin_client_scard(c, S("t")), 0);
    assert_int_equal(goblin_client_sadd(c, S("h"), m, 1), GOBLIN_EWRONGTYPE);
    assert_int_equal(goblin_client_llen(c, S("h")), GOBLIN_EWRONGTYPE);
}

static void test_typed_calls_agree_on_every_protocol(void **state)
{
    struct cfix *f = *state;
    goblin_session *s;
    goblin_client *c;
    size_t i;

    for (i = 0; i < 3; i++) {
        c = client_on(f, &s, protos[i]);
        typed_calls(c);
        list_and_set_calls(c);
        goblin_client_close(c);
        goblin_session_close(s);
    }
}

static void test_generic_calls_give_trees(void **state)
{
    struct cfix *f = *state;
    struct goblin_slice hset[] = {S("hset"), S("h"), S("a"), S("1")};
    struct goblin_slice hgetall[] = {S("hgetall"), S("h")};
    struct goblin_slice bad[] = {S("hget"), S("h")};
    const struct goblin_resp_value *v;
    goblin_session *s;
    goblin_client *c;
    size_t i;

    for (i = 0; i < 3; i++) {
        c = client_on(f, &s, protos[i]);
        assert_int_equal(goblin_client_call(c, 4, hset, &v), 0);
        assert_int_equal(v->type, GOBLIN_RESP_INTEGER);
        assert_int_equal(goblin_client_call(c, 2, hgetall, &v), 0);
        assert_int_equal(v->type, i == 1 ? GOBLIN_RESP_ARRAY
                                         : GOBLIN_RESP_MAP);
        assert_int_equal(v->n, 2);
        assert_memory_equal(v->items[1].str.ptr, "1", 1);
        assert_int_equal(goblin_client_call(c, 2, bad, &v), 0);
        assert_int_equal(v->type, GOBLIN_RESP_ERROR);
        assert_int_equal(goblin_client_call(c, 0, bad, &v), GOBLIN_EINVAL);
        goblin_client_close(c);
        goblin_session_close(s);
    }
}

static void test_pipelines_keep_order(void **state)
{
    struct cfix *f = *state;
    const struct goblin_resp_value *v;
    goblin_session *s;
    goblin_client *c;
    struct goblin_slice get[] = {S("get"), S("k")}, val;
    int64_t r, i;
    size_t p;

    for (p = 0; p < 3; p++) {
        c = client_on(f, &s, protos[p]);
        goblin_client_pipeline_begin(c);
        for (i = 0; i < 2000; i++)
            assert_int_equal(goblin_client_incrby(c, S("cnt"), 1, &r), 0);
        assert_int_equal(goblin_client_call(c, 2, get, &v), 0);
        assert_int_equal(goblin_client_pending(c), 2001);
        for (i = 1; i <= 2000; i++) {
            assert_int_equal(goblin_client_next_reply(c, &v), 0);
            assert_int_equal(v->type, GOBLIN_RESP_INTEGER);
            assert_int_equal(v->integer, (int64_t)p * 2000 + i);
        }
        goblin_client_pipeline_end(c);
        /* A synchronous call waits while a reply is unread. */
        assert_int_equal(goblin_client_get(c, S("k"), &val), GOBLIN_EINVAL);
        assert_int_equal(goblin_client_next_reply(c, &v), 0);
        assert_int_equal(v->type, GOBLIN_RESP_NULL);
        assert_int_equal(goblin_client_next_reply(c, &v), GOBLIN_EINVAL);
        assert_int_equal(goblin_client_get(c, S("cnt"), &val), 1);
        goblin_client_close(c);
        goblin_session_close(s);
    }
}

/* Pipelined list and set calls queue and return 0; their replies come
 * back as trees, in order. */
static void test_list_and_set_calls_pipeline(void **state)
{
    struct cfix *f = *state;
    const struct goblin_resp_value *v;
    const struct goblin_slice *out = NULL;
    struct goblin_slice e = S("x");
    goblin_session *s;
    goblin_client *c;
    size_t p;
    int i;

    for (p = 0; p < 3; p++) {
        c = client_on(f, &s, protos[p]);
        assert_int_equal(goblin_client_del(c, &S("pl"), 1) >= 0, 1);
        goblin_client_pipeline_begin(c);
        for (i = 0; i < 500; i++)
            assert_int_equal(goblin_client_rpush(c, S("pl"), &e, 1), 0);
        assert_int_equal(goblin_client_lrange(c, S("pl"), 0, 2, &out), 0);
        assert_int_equal(goblin_client_sadd(c, S("ps"), &e, 1), 0);
        assert_null(out);
        for (i = 1; i <= 500; i++) {
            assert_int_equal(goblin_client_next_reply(c, &v), 0);
            assert_int_equal(v->integer, i);
        }
        assert_int_equal(goblin_client_next_reply(c, &v), 0);
        assert_true(v->type == GOBLIN_RESP_ARRAY && v->n == 3);
        assert_int_equal(goblin_client_next_reply(c, &v), 0);
        assert_int_equal(v->type, GOBLIN_RESP_INTEGER);
        goblin_client_pipeline_end(c);
        assert_int_equal(goblin_client_llen(c, S("pl")), 500);
        goblin_client_close(c);
        goblin_session_close(s);
    }
}

static void test_quit_ends_the_connection(void **state)
{
    struct cfix *f = *state;
    struct goblin_slice quit[] = {S("quit")};
    const struct goblin_resp_value *v;
    goblin_session *s;
    goblin_client *c;
    size_t i;

    for (i = 0; i < 3; i++) {
        c = client_on(f, &s, protos[i]);
        assert_int_equal(goblin_client_call(c, 1, quit, &v), 0);
        assert_int_equal(v->type, GOBLIN_RESP_STATUS);
        assert_int_equal(goblin_client_ping(c), GOBLIN_ECONNRESET);
        assert_int_equal(goblin_client_ping(c), GOBLIN_ECONNRESET);
        goblin_client_close(c);
        goblin_session_close(s);
    }
}

static void test_password_on_connect(void **state)
{
    struct cfix *f = *state;
    struct goblin_session_info si = {GOBLIN_TRANSPORT_LOCAL, "l", "l", -1,
                                     NULL};
    struct goblin_client_config cfg = {0};
    goblin_session *s;
    goblin_client *c;
    size_t i;

    for (i = 0; i < 3; i++) {
        cfg.protocol = protos[i];
        cfg.password = "wrong";
        assert_int_equal(goblin_session_open(f->eng, &si, &s), 0);
        assert_int_equal(goblin_client_connect_session(s, &cfg, &c),
                         GOBLIN_EREPLY);
        goblin_session_close(s);
        cfg.password = "sekret";
        assert_int_equal(goblin_session_open(f->eng, &si, &s), 0);
        assert_int_equal(goblin_client_connect_session(s, &cfg, &c), 0);
        assert_int_equal(goblin_client_ping(c), 0);
        goblin_client_close(c);
        goblin_session_close(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CMD_TEST(test_typed_calls_agree_on_every_protocol),
        CMD_TEST(test_generic_calls_give_trees),
        CMD_TEST(test_pipelines_keep_order),
        CMD_TEST(test_list_and_set_calls_pipeline),
        CMD_TEST(test_quit_ends_the_connection),
        CMD_TEST_PASS(test_password_on_connect),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
