/* test_block.c - the wait registry of blocking commands (engine/block.c)
 * through in-process sessions: the order waiters are served in, keys in
 * the order a client gave, timeouts by the engine's cron, MULTI, CLIENT
 * UNBLOCK, the input that waits behind a blocked command, and sessions
 * that close while blocked (the teardown checks nothing is left). */
#include "test_commands_util.h"

struct waker {
    int wakes;
};

static void count_wake(void *ctx)
{
    ((struct waker *)ctx)->wakes++;
}

static goblin_session *client(struct cfix *f, struct waker *w)
{
    struct goblin_session_info si = {GOBLIN_TRANSPORT_TCP, "127.0.0.1:5001",
                                     "127.0.0.1:6379", 8, NULL};
    goblin_session *s;

    (void)f;
    assert_int_equal(goblin_session_open(f->eng, &si, &s), 0);
    goblin_session_set_wake(s, count_wake, w);
    return s;
}

/* What a woken session says once its transport resumes it. */
static const char *resumed(struct cfix *f, goblin_session *s)
{
    goblin_session_resume(s);
    return take_output(f, s);
}

static void advance_ms(struct cfix *f, int64_t ms)
{
    f->base->clock.now_ms += ms;
}

static void test_waiters_are_served_in_the_order_they_blocked(void **state)
{
    struct cfix *f = *state;
    struct waker w[3] = {{0}, {0}, {0}};
    goblin_session *c[3];
    int i;

    for (i = 0; i < 3; i++) {
        c[i] = client(f, &w[i]);
        assert_string_equal(cmd_on(f, c[i], "BZPOPMIN z 0"), "");
    }
    assert_non_null(strstr(CMD("INFO clients"), "blocked_clients:3\r\n"));
    EXPECT("ZADD z 1 a 2 b", ":2\r\n");
    assert_int_equal(w[0].wakes, 1);
    assert_int_equal(w[1].wakes, 1);
    assert_int_equal(w[2].wakes, 0);
    assert_string_equal(resumed(f, c[0]),
                        "*3\r\n$1\r\nz\r\n$1\r\na\r\n$1\r\n1\r\n");
    assert_string_equal(resumed(f, c[1]),
                        "*3\r\n$1\r\nz\r\n$1\r\nb\r\n$1\r\n2\r\n");
    assert_string_equal(resumed(f, c[2]), "");
    EXPECT("EXISTS z", ":0\r\n");
    assert_non_null(strstr(CMD("INFO clients"), "blocked_clients:1\r\n"));
    for (i = 0; i < 3; i++)
        goblin_session_close(c[i]);
}

static void test_a_client_is_served_by_the_key_that_became_ready(void **state)
{
    struct cfix *f = *state;
    struct waker w = {0};
    goblin_session *c = client(f, &w);

    assert_string_equal(cmd_on(f, c, "BZPOPMAX k1 k2 k3 0"), "");
    EXPECT("ZADD k3 5 x", ":1\r\n");
    assert_string_equal(resumed(f, c),
                        "*3\r\n$2\r\nk3\r\n$1\r\nx\r\n$1\r\n5\r\n");
    /* Not blocked any more: a later write finds nobody. */
    EXPECT("ZADD k1 1 y", ":1\r\n");
    assert_int_equal(w.wakes, 1);
    assert_string_equal(resumed(f, c), "");
    goblin_session_close(c);
}

static void test_keys_are_checked_in_the_order_given(void **state)
{
    struct cfix *f = *state;

    EXPECT("ZADD b 2 m2", ":1\r\n");
    EXPECT("ZADD c 3 m3", ":1\r\n");
    EXPECT("BZPOPMIN a c b 0", "*3\r\n$1\r\nc\r\n$2\r\nm3\r\n$1\r\n3\r\n");
    EXPECT("BZMPOP 0 3 a b c MIN COUNT 5",
           "*2\r\n$1\r\nb\r\n*1\r\n*2\r\n$2\r\nm2\r\n$1\r\n2\r\n");
    EXPECT("SET s x", "+OK\r\n");
    EXPECT("BZPOPMIN a s 0",
           "-WRONGTYPE Operation against a key holding the wrong kind of "
           "value\r\n");
}

static void test_timeout_answers_a_null_array_at_cron(void **state)
{
    struct cfix *f = *state;
    struct waker w = {0};
    goblin_session *c = client(f, &w);

    assert_string_equal(cmd_on(f, c, "BZPOPMIN z 1.5"), "");
    advance_ms(f, 1499);
    goblin_engine_cron(f->eng);
    assert_int_equal(w.wakes, 0);
    assert_non_null(strstr(CMD("INFO clients"),
                           "clients_in_timeout_table:1\r\n"));
    advance_ms(f, 1);
    goblin_engine_cron(f->eng);
    assert_int_equal(w.wakes, 1);
    assert_string_equal(resumed(f, c), "*-1\r\n");
    EXPECT("ZADD z 1 a", ":1\r\n");
    assert_int_equal(w.wakes, 1);
    goblin_session_close(c);
}

static void test_timeout_texts_follow_redis(void **state)
{
    struct cfix *f = *state;

    EXPECT("BZPOPMIN z -1", "-ERR timeout is negative\r\n");
    EXPECT("BZPOPMIN z inf", "-ERR timeout is negative\r\n");
    EXPECT("BZPOPMIN z 1e30", "-ERR timeout is negative\r\n");
    EXPECT("BZPOPMIN z abc",
           "-ERR timeout is not a float or out of range\r\n");
    EXPECT("BZPOPMIN z nan",
           "-ERR timeout is not a float or out of range\r\n");
    EXPECT("BZMPOP x 1 z MIN",
           "-ERR timeout is not a float or out of range\r\n");
    EXPECT("BZMPOP 0 0 z MIN", "-ERR numkeys should be greater than 0\r\n");
    EXPECT("BZMPOP 0 2 z MIN", "-ERR syntax error\r\n");
    EXPECT("ZMPOP 1 z MIN COUNT 0", "-ERR count should be greater than 0\r\n");
    EXPECT("ZMPOP 1 z MIDDLE", "-ERR syntax error\r\n");
    EXPECT("ZMPOP 1 z MIN", "*-1\r\n");
}

static void test_input_behind_a_blocked_command_waits(void **state)
{
    struct cfix *f = *state;
    struct waker w = {0};
    goblin_session *c = client(f, &w);

    assert_string_equal(feed_on(f, c, "BZPOPMIN z 0\r\nPING\r\n"), "");
    assert_string_equal(feed_on(f, c, "ECHO hi\r\n"), "");
    EXPECT("ZADD z 1 a", ":1\r\n");
    assert_string_equal(resumed(f, c),
                        "*3\r\n$1\r\nz\r\n$1\r\na\r\n$1\r\n1\r\n+PONG\r\n"
                        "$2\r\nhi\r\n");
    goblin_session_close(c);
}

/* The same in multibulk, run where the fed bytes lie: what follows the
 * blocked command, whole or cut in the middle of a word, waits in the
 * input buffer and runs once the command is served. */
static void test_multibulk_behind_a_blocked_command_waits(void **state)
{
    struct cfix *f = *state;
    struct waker w = {0};
    goblin_session *c = client(f, &w);

    assert_string_equal(feed_on(f, c, "*3\r\n$8\r\nBZPOPMIN\r\n$1\r\nz\r\n"
                                       "$1\r\n0\r\n*1\r\n$4\r\nPING\r\n"
                                       "*2\r\n$4\r\nECHO\r\n$5\r\nhel"),
                        "");
    assert_string_equal(feed_on(f, c, "lo\r\n"), "");
    EXPECT("ZADD z 1 a", ":1\r\n");
    assert_string_equal(resumed(f, c),
                        "*3\r\n$1\r\nz\r\n$1\r\na\r\n$1\r\n1\r\n+PONG\r\n"
                        "$5\r\nhello\r\n");
    goblin_session_close(c);
}

static void test_a_served_reply_comes_before_new_input(void **state)
{
    struct cfix *f = *state;
    struct waker w = {0};
    goblin_session *c = client(f, &w);

    assert_string_equal(cmd_on(f, c, "BZPOPMIN z 0"), "");
    EXPECT("ZADD z 1 a", ":1\r\n");
    /* The transport has not resumed yet when the next request arrives. */
    assert_string_equal(cmd_on(f, c, "PING"),
                        "*3\r\n$1\r\nz\r\n$1\r\na\r\n$1\r\n1\r\n+PONG\r\n");
    goblin_session_close(c);
}

static void test_inside_multi_blocking_answers_at_once(void **state)
{
    struct cfix *f = *state;

    EXPECT("MULTI", "+OK\r\n");
    EXPECT("BZPOPMIN z 0", "+QUEUED\r\n");
    EXPECT("BZMPOP 0 1 z MAX", "+QUEUED\r\n");
    EXPECT("EXEC", "*2\r\n*-1\r\n*-1\r\n");
    assert_non_null(strstr(CMD("INFO clients"), "blocked_clients:0\r\n"));
}

static void test_a_write_inside_multi_serves_after_exec(void **state)
{
    struct cfix *f = *state;
    struct waker w[2] = {{0}, {0}};
    goblin_session *a = client(f, &w[0]), *b = client(f, &w[1]);

    assert_string_equal(cmd_on(f, a, "BZPOPMIN z 0"), "");
    assert_string_equal(cmd_on(f, b, "BZPOPMIN y 0"), "");
    EXPECT("MULTI", "+OK\r\n");
    EXPECT("ZADD z 1 a", "+QUEUED\r\n");
    EXPECT("ZREM z a", "+QUEUED\r\n");
    EXPECT("ZADD y 2 b", "+QUEUED\r\n");
    EXPECT("ZCARD y", "+QUEUED\r\n");
    /* Inside EXEC nobody is served: ZCARD still sees the member, and z,
     * emptied again, wakes nobody. */
    EXPECT("EXEC", "*4\r\n:1\r\n:1\r\n:1\r\n:1\r\n");
    assert_int_equal(w[0].wakes, 0);
    assert_int_equal(w[1].wakes, 1);
    assert_string_equal(resumed(f, b),
                        "*3\r\n$1\r\ny\r\n$1\r\nb\r\n$1\r\n2\r\n");
    assert_string_equal(resumed(f, a), "");
    goblin_session_close(a);
    goblin_session_close(b);
}

static void test_client_unblock_timeout_and_error(void **state)
{
    struct cfix *f = *state;
    struct waker w = {0};
    goblin_session *c = client(f, &w);
    char cmd[64];

    assert_string_equal(cmd_on(f, c, "BZPOPMIN z 0"), "");
    assert_non_null(strstr(CMD("CLIENT LIST"), "flags=b "));
    assert_non_null(strstr(CMD("CLIENT LIST"), "cmd=bzpopmin "));
    snprintf(cmd, sizeof(cmd), "CLIENT UNBLOCK %llu",
             (unsigned long long)goblin_session_id(c));
    EXPECT(cmd, ":1\r\n");
    EXPECT(cmd, ":0\r\n");
    assert_string_equal(resumed(f, c), "*-1\r\n");
    assert_string_equal(cmd_on(f, c, "BZPOPMIN z 0"), "");
    snprintf(cmd, sizeof(cmd), "CLIENT UNBLOCK %llu ERROR",
             (unsigned long long)goblin_session_id(c));
    EXPECT(cmd, ":1\r\n");
    assert_string_equal(resumed(f, c),
                        "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n");
    EXPECT("CLIENT UNBLOCK 1 MAYBE",
           "-ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR\r\n");
    EXPECT("CLIENT UNBLOCK x", "-ERR value is not an integer or out of "
                               "range\r\n");
    EXPECT("CLIENT UNBLOCK 12345", ":0\r\n");
    goblin_session_close(c);
}

static void test_a_session_closed_while_blocked_leaves_nothing(void **state)
{
    struct cfix *f = *state;
    struct waker w[3] = {{0}, {0}, {0}};
    goblin_session *a = client(f, &w[0]), *b = client(f, &w[1]);
    goblin_session *c = client(f, &w[2]);

    assert_string_equal(cmd_on(f, a, "BZPOPMIN z y 0"), "");
    assert_string_equal(cmd_on(f, b, "BZPOPMIN z 0"), "");
    assert_string_equal(cmd_on(f, c, "BZPOPMIN y 5"), "");
    goblin_session_close(a);
    EXPECT("ZADD z 1 a", ":1\r\n");
    assert_int_equal(w[1].wakes, 1);
    assert_string_equal(resumed(f, b),
                        "*3\r\n$1\r\nz\r\n$1\r\na\r\n$1\r\n1\r\n");
    /* Served but never resumed: the reply is freed with the session. */
    EXPECT("ZADD y 1 a", ":1\r\n");
    assert_int_equal(w[2].wakes, 1);
    goblin_session_close(c);
    goblin_session_close(b);
    assert_non_null(strstr(CMD("INFO clients"), "blocked_clients:0\r\n"));
}

static void test_resp3_replies_doubles(void **state)
{
    struct cfix *f = *state;
    struct waker w = {0};
    goblin_session *c = client(f, &w);

    assert_non_null(strstr(cmd_on(f, c, "HELLO 3"), "proto"));
    assert_string_equal(cmd_on(f, c, "BZMPOP 0 1 z MAX COUNT 2"), "");
    EXPECT("ZADD z 1.5 a 2 b 3 c", ":3\r\n");
    assert_string_equal(resumed(f, c),
                        "*2\r\n$1\r\nz\r\n*2\r\n*2\r\n$1\r\nc\r\n,3\r\n"
                        "*2\r\n$1\r\nb\r\n,2\r\n");
    assert_string_equal(cmd_on(f, c, "BZPOPMIN nokey 0.01"), "");
    advance_ms(f, 10);
    goblin_engine_cron(f->eng);
    assert_string_equal(resumed(f, c), "_\r\n");
    goblin_session_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CMD_TEST(test_waiters_are_served_in_the_order_they_blocked),
        CMD_TEST(test_a_client_is_served_by_the_key_that_became_ready),
        CMD_TEST(test_keys_are_checked_in_the_order_given),
        CMD_TEST(test_timeout_answers_a_null_array_at_cron),
        CMD_TEST(test_timeout_texts_follow_redis),
        CMD_TEST(test_input_behind_a_blocked_command_waits),
        CMD_TEST(test_multibulk_behind_a_blocked_command_waits),
        CMD_TEST(test_a_served_reply_comes_before_new_input),
        CMD_TEST(test_inside_multi_blocking_answers_at_once),
        CMD_TEST(test_a_write_inside_multi_serves_after_exec),
        CMD_TEST(test_client_unblock_timeout_and_error),
        CMD_TEST(test_a_session_closed_while_blocked_leaves_nothing),
        CMD_TEST(test_resp3_replies_doubles),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
