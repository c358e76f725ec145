/* test_limits.c - the per-client limits of a session, on both sides of
 * each: the output buffer's hard limit and its soft limit held for the
 * given seconds (the session is closed and its output dropped, as
 * Redis's client-output-buffer-limit does), the query buffer limit, the
 * longest argument (proto-max-bulk-len) and, before authentication,
 * Redis's small multibulk and bulk limits. */
#include "test_commands_util.h"

/* A session that never reads: n GETs of a 100-byte value. */
static int pile_up(struct cfix *f, int n)
{
    char buf[64];
    int rc = 0;

    resp_of(buf, sizeof(buf), "get v");
    for (int i = 0; i < n && rc == 0; i++)
        rc = goblin_session_feed(f->s, buf, strlen(buf));
    return rc;
}

static size_t pending(struct cfix *f)
{
    size_t len;

    goblin_session_output(f->s, &len);
    return len;
}

static void set_value(struct cfix *f)
{
    char cmd[256];

    snprintf(cmd, sizeof(cmd), "*3\r\n$3\r\nset\r\n$1\r\nv\r\n$100\r\n"
             "%0100d\r\n", 0);
    assert_string_equal(FEED(cmd), "+OK\r\n");
}

static void obuf_limit(struct cfix *f, const char *value)
{
    char cmd[256];

    snprintf(cmd, sizeof(cmd), "*4\r\n$6\r\nconfig\r\n$3\r\nset\r\n"
             "$26\r\nclient-output-buffer-limit\r\n$%zu\r\n%s\r\n",
             strlen(value), value);
    assert_string_equal(FEED(cmd), "+OK\r\n");
}

static void test_output_hard_limit_closes_at_once(void **state)
{
    struct cfix *f = *state;

    set_value(f);
    obuf_limit(f, "normal 2000 0 0");
    assert_int_equal(pile_up(f, 18), 0);          /* 18 * 107 = 1926 */
    assert_false(goblin_session_should_close(f->s));
    assert_int_equal(pile_up(f, 1), GOBLIN_ELIMIT); /* 2033 > 2000 */
    assert_true(goblin_session_should_close(f->s));
    assert_int_equal(pending(f), 0);              /* output dropped */
}

static void test_output_soft_limit_needs_its_seconds(void **state)
{
    struct cfix *f = *state;

    set_value(f);
    obuf_limit(f, "normal 0 1000 2");
    assert_int_equal(pile_up(f, 9), 0);           /* 963: under */
    assert_int_equal(pile_up(f, 1), 0);           /* 1070: over, 0 s */
    f->base->clock.now_ms += 1000;
    assert_int_equal(pile_up(f, 1), 0);           /* 1 s over */
    /* Draining below the soft limit starts the count again. */
    goblin_session_output_consume(f->s, pending(f));
    assert_int_equal(pile_up(f, 10), 0);
    f->base->clock.now_ms += 1999;
    assert_int_equal(pile_up(f, 1), 0);           /* 1.999 s over */
    assert_false(goblin_session_should_close(f->s));
    f->base->clock.now_ms += 1;
    assert_int_equal(pile_up(f, 1), GOBLIN_ELIMIT); /* 2 s over */
    assert_true(goblin_session_should_close(f->s));
    assert_int_equal(pending(f), 0);
}

static void test_query_buffer_limit_stops_input(void **state)
{
    struct cfix *f = *state;
    static char big[70000];
    size_t room = 0;
    int rc;

    EXPECT("config set client-query-buffer-limit 1048576", "+OK\r\n");
    /* A bulk of 2 MiB claimed: the input may hold 1 MiB of it. */
    assert_int_equal(goblin_session_feed(f->s, "*2\r\n$4\r\necho\r\n"
                                         "$2097152\r\n", 25), 0);
    memset(big, 'x', sizeof(big));
    for (int i = 0; i < 14; i++)
        assert_int_equal(goblin_session_feed(f->s, big, sizeof(big)), 0);
    rc = goblin_session_feed(f->s, big, sizeof(big));    /* > 1 MiB */
    assert_int_equal(rc, GOBLIN_ELIMIT);
    assert_null(goblin_session_input_space(f->s, &room));
    assert_int_equal(room, 0);
}

static void test_bulk_longer_than_proto_max_bulk_len(void **state)
{
    struct cfix *f = *state;

    goblin_session *s2;

    EXPECT("config set proto-max-bulk-len 1mb", "+OK\r\n");
    assert_int_equal(goblin_session_open(f->eng, NULL, &s2), 0);
    assert_string_equal(feed_on(f, s2, "*2\r\n$4\r\necho\r\n"
                                       "$1048576\r\n"), "");
    assert_int_equal(f->rc, 0);
    goblin_session_close(s2);
    assert_string_equal(FEED("*2\r\n$4\r\necho\r\n$1048577\r\n"),
                        "-ERR Protocol error: invalid bulk length\r\n");
    assert_int_equal(f->rc, GOBLIN_EPROTO);
}

static void test_multibulk_count_past_int_max(void **state)
{
    struct cfix *f = *state;

    assert_string_equal(FEED("*2147483648\r\n"),
                        "-ERR Protocol error: invalid multibulk length\r\n");
    assert_int_equal(f->rc, GOBLIN_EPROTO);
}

static void test_unauthenticated_requests_stay_small(void **state)
{
    struct cfix *f = *state;
    goblin_session *s2;

    assert_int_equal(goblin_session_open(f->eng, NULL, &s2), 0);
    assert_string_equal(feed_on(f, s2, "*11\r\n"),
                        "-ERR Protocol error: unauthenticated multibulk "
                        "length\r\n");
    goblin_session_close(s2);
    assert_int_equal(goblin_session_open(f->eng, NULL, &s2), 0);
    assert_string_equal(feed_on(f, s2, "*2\r\n$4\r\nauth\r\n$16385\r\n"),
                        "-ERR Protocol error: unauthenticated bulk "
                        "length\r\n");
    goblin_session_close(s2);
    assert_int_equal(goblin_session_open(f->eng, NULL, &s2), 0);
    assert_string_equal(feed_on(f, s2, "*10\r\n$16384\r\n"), "");
    goblin_session_close(s2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CMD_TEST(test_output_hard_limit_closes_at_once),
        CMD_TEST(test_output_soft_limit_needs_its_seconds),
        CMD_TEST(test_query_buffer_limit_stops_input),
        CMD_TEST(test_bulk_longer_than_proto_max_bulk_len),
        CMD_TEST(test_multibulk_count_past_int_max),
        CMD_TEST_PASS(test_unauthenticated_requests_stay_small),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
