/* test_session.c - sessions and the engine: transactions across
 * sessions, authentication flows, pipelines, input split at every byte,
 * the zero-copy input calls, buffer limits and allocation failures. */
#include "test_commands_util.h"

static goblin_session *other(struct cfix *f)
{
    struct goblin_session_info si = {GOBLIN_TRANSPORT_TCP, "127.0.0.1:5001",
                                     "127.0.0.1:6379", 8, NULL};
    goblin_session *s;

    assert_int_equal(goblin_session_open(f->eng, &si, &s), 0);
    return s;
}

static void test_multi_exec_queues_and_runs(void **state)
{
    struct cfix *f = *state;

    EXPECT("multi", "+OK\r\n");
    EXPECT("multi", "-ERR MULTI calls can not be nested\r\n");
    EXPECT("watch a", "-ERR WATCH inside MULTI is not allowed\r\n");
    EXPECT("set a 1", "+QUEUED\r\n");
    EXPECT("incr a", "+QUEUED\r\n");
    EXPECT("hset a f v", "+QUEUED\r\n");
    EXPECT("get a", "+QUEUED\r\n");
    EXPECT("exec", "*4\r\n+OK\r\n:2\r\n-WRONGTYPE Operation against a "
                   "key holding the wrong kind of value\r\n$1\r\n2\r\n");
    EXPECT("exec", "-ERR EXEC without MULTI\r\n");
    EXPECT("discard", "-ERR DISCARD without MULTI\r\n");
    EXPECT("multi", "+OK\r\n");
    EXPECT("exec", "*0\r\n");
}

static void test_queueing_errors_abort_exec(void **state)
{
    struct cfix *f = *state;

    EXPECT("multi", "+OK\r\n");
    EXPECT("set a 1", "+QUEUED\r\n");
    EXPECT("set a", "-ERR wrong number of arguments for 'set' command\r\n");
    EXPECT("exec", "-EXECABORT Transaction discarded because of previous "
                   "errors.\r\n");
    EXPECT("get a", "$-1\r\n");
    EXPECT("multi", "+OK\r\n");
    EXPECT("nosuch", "-ERR unknown command 'nosuch', with args beginning "
                     "with: \r\n");
    EXPECT("exec", "-EXECABORT Transaction discarded because of previous "
                   "errors.\r\n");
    EXPECT("multi", "+OK\r\n");
    EXPECT("exec x", "-EXECABORT Transaction discarded because of: wrong "
                     "number of arguments for 'exec' command\r\n");
    EXPECT("exec", "-ERR EXEC without MULTI\r\n");
    EXPECT("multi", "+OK\r\n");
    EXPECT("ping", "+QUEUED\r\n");
    EXPECT("discard", "+OK\r\n");
    EXPECT("exec", "-ERR EXEC without MULTI\r\n");
}

static void test_watched_key_changed_by_another_session(void **state)
{
    struct cfix *f = *state;
    goblin_session *b = other(f);

    EXPECT("set k 1", "+OK\r\n");
    EXPECT("watch k", "+OK\r\n");
    EXPECT("multi", "+OK\r\n");
    EXPECT("incr k", "+QUEUED\r\n");
    assert_string_equal(cmd_on(f, b, "set k 5"), "+OK\r\n");
    EXPECT("exec", "*-1\r\n");
    EXPECT("get k", "$1\r\n5\r\n");
    /* The WATCH is gone after EXEC: the next transaction runs. */
    EXPECT("multi", "+OK\r\n");
    EXPECT("incr k", "+QUEUED\r\n");
    EXPECT("exec", "*1\r\n:6\r\n");
    /* Another session writing an unrelated key changes nothing. */
    EXPECT("watch k", "+OK\r\n");
    assert_string_equal(cmd_on(f, b, "set other 1"), "+OK\r\n");
    EXPECT("multi", "+OK\r\n");
    EXPECT("get k", "+QUEUED\r\n");
    EXPECT("exec", "*1\r\n$1\r\n6\r\n");
    /* A session's own write to its watched key counts too. */
    EXPECT("watch k", "+OK\r\n");
    EXPECT("del k", ":1\r\n");
    EXPECT("multi", "+OK\r\n");
    EXPECT("exec", "*-1\r\n");
    goblin_session_close(b);
}

static void test_unwatch_and_closed_watchers(void **state)
{
    struct cfix *f = *state;
    goblin_session *b = other(f);

    EXPECT("watch a b c", "+OK\r\n");
    assert_string_equal(cmd_on(f, b, "watch b"), "+OK\r\n");
    EXPECT("unwatch", "+OK\r\n");
    EXPECT("set b 1", "+OK\r\n");
    EXPECT("multi", "+OK\r\n");
    EXPECT("exec", "*0\r\n");
    assert_string_equal(cmd_on(f, b, "multi"), "+OK\r\n");
    assert_string_equal(cmd_on(f, b, "exec"), "*-1\r\n");
    assert_string_equal(cmd_on(f, b, "watch x"), "+OK\r\n");
    goblin_session_close(b);
    EXPECT("set x 1", "+OK\r\n");
}

static void test_expired_watched_key_aborts_exec(void **state)
{
    struct cfix *f = *state;

    EXPECT("set k v px 100", "+OK\r\n");
    EXPECT("watch k", "+OK\r\n");
    f->base->clock.now_ms += 200;
    EXPECT("multi", "+OK\r\n");
    EXPECT("ping", "+QUEUED\r\n");
    EXPECT("exec", "*-1\r\n");
    /* A key already expired when watched is no change. */
    EXPECT("set k v px 100", "+OK\r\n");
    f->base->clock.now_ms += 200;
    EXPECT("watch k", "+OK\r\n");
    EXPECT("multi", "+OK\r\n");
    EXPECT("ping", "+QUEUED\r\n");
    EXPECT("exec", "*1\r\n+PONG\r\n");
}

static void test_flushall_touches_watched_keys(void **state)
{
    struct cfix *f = *state;

    EXPECT("set k v", "+OK\r\n");
    EXPECT("watch k", "+OK\r\n");
    EXPECT("flushall", "+OK\r\n");
    EXPECT("multi", "+OK\r\n");
    EXPECT("exec", "*-1\r\n");
}

static void test_exec_null_in_resp3(void **state)
{
    struct cfix *f = *state;

    EXPECT("hello 3", CMD("hello 3"));
    EXPECT("watch k", "+OK\r\n");
    EXPECT("set k v", "+OK\r\n");
    EXPECT("multi", "+OK\r\n");
    EXPECT("exec", "_\r\n");
}

static void test_requirepass_flow(void **state)
{
    struct cfix *f = *state;

    EXPECT("ping", "-NOAUTH Authentication required.\r\n");
    EXPECT("foo", "-ERR unknown command 'foo', with args beginning with: "
                  "\r\n");
    EXPECT("get", "-ERR wrong number of arguments for 'get' command\r\n");
    EXPECT("hello 3",
           "-NOAUTH HELLO must be called with the client already "
           "authenticated, otherwise the HELLO AUTH <user> <pass> option "
           "can be used to authenticate the client and select the RESP "
           "protocol version at the same time\r\n");
    EXPECT("hello 3 auth default wrong",
           "-WRONGPASS invalid username-password pair or user is "
           "disabled.\r\n");
    EXPECT("auth wrong", "-WRONGPASS invalid username-password pair or user "
                         "is disabled.\r\n");
    EXPECT("auth bob sekret", "-WRONGPASS invalid username-password pair or "
                              "user is disabled.\r\n");
    EXPECT("exec", "-EXECABORT Transaction discarded because of: NOAUTH "
                   "Authentication required.\r\n");
    EXPECT("auth sekret", "+OK\r\n");
    EXPECT("ping", "+PONG\r\n");
    EXPECT("reset", "+RESET\r\n");
    EXPECT("ping", "-NOAUTH Authentication required.\r\n");
    assert_int_equal(CMD("hello 3 auth default sekret")[0], '%');
    EXPECT("get k", "_\r\n");
}

static void test_unauthenticated_limits_apply(void **state)
{
    struct cfix *f = *state;

    assert_string_equal(FEED("*11\r\n"),
                        "-ERR Protocol error: unauthenticated multibulk "
                        "length\r\n");
    assert_int_equal(f->rc, GOBLIN_EPROTO);
}

static void test_pipeline_in_one_feed(void **state)
{
    struct cfix *f = *state;
    char in[64 * 1024], want[64 * 1024];
    size_t n = 0, w = 0;
    int i;

    for (i = 0; i < 500; i++) {
        n += (size_t)snprintf(in + n, sizeof(in) - n,
                              "*3\r\n$3\r\nSET\r\n$%d\r\nk%d\r\n$1\r\nv\r\n"
                              "*2\r\n$4\r\nINCR\r\n$1\r\nc\r\n",
                              i < 10 ? 2 : i < 100 ? 3 : 4, i);
        w += (size_t)snprintf(want + w, sizeof(want) - w, "+OK\r\n:%d\r\n",
                              i + 1);
    }
    n += (size_t)snprintf(in + n, sizeof(in) - n, "DBSIZE\r\n");
    w += (size_t)snprintf(want + w, sizeof(want) - w, ":501\r\n");
    f->rc = goblin_session_feed(f->s, in, n);
    assert_int_equal(f->rc, 0);
    assert_string_equal(take_output(f, f->s), want);
}

static void test_command_split_at_every_byte(void **state)
{
    struct cfix *f = *state;
    const char *in = "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n"
                     "GET key\r\n*1\r\n$4\r\nPING\r\n";
    const char *want = "+OK\r\n$5\r\nvalue\r\n+PONG\r\n";
    size_t len = strlen(in), cut, i;

    for (cut = 0; cut <= len; cut++) {
        assert_int_equal(goblin_session_feed(f->s, in, cut), 0);
        assert_int_equal(goblin_session_feed(f->s, in + cut, len - cut), 0);
        assert_string_equal(take_output(f, f->s), want);
    }
    for (i = 0; i < len; i++)
        assert_int_equal(goblin_session_feed(f->s, in + i, 1), 0);
    assert_string_equal(take_output(f, f->s), want);
}

/* Feeds in[0..n) to one new session whole and to another byte by byte
 * (the first takes whole requests in place, the second has the parser's
 * state machine wait for every line): replies and verdicts must agree.
 * Both first get warm, whole: a session's first command takes the state
 * machine, which gives argv its room. */
static void check_whole_and_split(struct cfix *f, const char *warm,
                                  const char *in, size_t n)
{
    static char whole[1 << 18];
    goblin_session *a = other(f), *b = other(f);
    int rca, rcb = 0;
    size_t wlen;

    assert_int_equal(goblin_session_feed(a, warm, strlen(warm)), 0);
    assert_int_equal(goblin_session_feed(b, warm, strlen(warm)), 0);
    take_output(f, a);
    take_output(f, b);
    rca = goblin_session_feed(a, in, n);
    take_output(f, a);
    wlen = f->outlen;
    memcpy(whole, f->out, wlen);
    for (size_t i = 0; i < n && rcb == 0; i++)
        rcb = goblin_session_feed(b, in + i, 1);
    take_output(f, b);
    if (rca != rcb || wlen != f->outlen || memcmp(whole, f->out, wlen) != 0)
        fail_msg("'%.*s': whole %d '%.*s', split %d '%s'", (int)n, in, rca,
                 (int)wlen, whole, rcb, f->out);
    goblin_session_close(a);
    goblin_session_close(b);
}

/* Requests at the edges of the whole-request road (counts and lengths of
 * one, two and three digits, leading zeros, zero and negative counts,
 * argv growing past its first room and past the size that is freed, a
 * missing '$', a short input, unchecked bytes after CR) and pipelines of
 * them, each fed whole and split. */
static void whole_requests_answer_as_split_ones(struct cfix *f,
                                                const char *warm)
{
    static const char *const cases[] = {
        "*1\r\n$4\r\nPING\r\n",
        "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n",
        "*2\r\n$4\r\nECHO\r\n$01\r\nx\r\n",
        "*2\r\n$4\r\nECHO\r\n$9\r\n123456789\r\n",
        "*2\r\n$4\r\nECHO\r\n$10\r\n0123456789\r\n",
        "*01\r\n$4\r\nPING\r\n",
        "*0\r\n*1\r\n$4\r\nPING\r\n",
        "*-1\r\n*1\r\n$4\r\nPING\r\n",
        "*2\r\n$4\r\nECHO\r\n:5\r\nhello\r\n",
        "*2\r\n$4\r\nECHO\r\n$5\r\nhel",
        "*2\r\n$4\r\nECHO\r\n$5\r\nhello",
        "*2\r\n$4\r\nECHO\r\n$5\r\nhello\r",
        "*2\r\n$4\r\nECHO\r\n$",
        "*2\r\n$4\r\nECHO\r\n$5",
        "*2\r\n$4\r\nECHO\r\n$5\r",
        "*2\r\n$4\r\nECHO\r\n$-1\r\n",
        "*1\r\n$4\r\nPING\rX*1\r\n$4\r\nPINGxy",
        "*2\r\n$4\r\nECHO\r\n$1\r\nx\r\n*1\r\n$4\r\nPING\r\nPING\r\n",
        "*1\r\n$4\r\nPING\r\n*1",
        "*",
        "*1",
        "*1\r",
        "*1\r\n",
        "*12\r",
        /* The bytes next to the digits: '/' and ':'. */
        "*2\r\n$4\r\nECHO\r\n$:\r\n0123456789\r\n",
        "*2\r\n$4\r\nECHO\r\n$/\r\n0123456789\r\n",
        "*2\r\n$4\r\nECHO\r\n$1:\r\n012345678901234567890123456789\r\n",
        "*2\r\n$4\r\nECHO\r\n$:1\r\n0123456789\r\n",
        "*2\r\n$4\r\nECHO\r\n$1/\r\n0123456789\r\n",
        "*:\r\n$4\r\nPING\r\n$4\r\nPING\r\n$4\r\nPING\r\n$4\r\nPING\r\n"
        "$4\r\nPING\r\n$4\r\nPING\r\n$4\r\nPING\r\n$4\r\nPING\r\n"
        "$4\r\nPING\r\n$4\r\nPING\r\n",
        "*/\r\n$4\r\nPING\r\n",
        "*1:\r\n$4\r\nPING\r\n",
        "*:1\r\n$4\r\nPING\r\n",
    };
    char in[64 * 1024];
    size_t n;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        check_whole_and_split(f, warm, cases[i], strlen(cases[i]));
    /* ECHO of 99 and 100 bytes: lengths of two and three digits. */
    for (int len = 98; len <= 101; len++) {
        n = (size_t)snprintf(in, sizeof(in), "*2\r\n$4\r\nECHO\r\n$%d\r\n",
                             len);
        memset(in + n, 'x', (size_t)len);
        n += (size_t)len;
        n += (size_t)snprintf(in + n, sizeof(in) - n,
                              "\r\n*1\r\n$4\r\nPING\r\n");
        check_whole_and_split(f, warm, in, n);
    }
    /* DEL of 7 to 12 keys (argv's first room is 8), of 99 and 100 (the
     * count's digits) and of 1100, past what argv keeps, then a short
     * command again. */
    static const int counts[] = {7, 8, 9, 10, 11, 12, 98, 99, 100, 1100};
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        n = (size_t)snprintf(in, sizeof(in), "*%d\r\n$3\r\nDEL\r\n",
                             counts[c] + 1);
        for (int k = 0; k < counts[c]; k++)
            n += (size_t)snprintf(in + n, sizeof(in) - n, "$2\r\nk%c\r\n",
                                  'a' + k % 26);
        n += (size_t)snprintf(in + n, sizeof(in) - n,
                              "*2\r\n$3\r\nGET\r\n$2\r\nka\r\n");
        check_whole_and_split(f, warm, in, n);
    }
}

/* A DEL of 16 keys: room for 17 arguments. */
#define WARM_DEL                                                          \
    "*17\r\n$3\r\nDEL\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n" \
    "$1\r\ne\r\n$1\r\nf\r\n$1\r\ng\r\n$1\r\nh\r\n$1\r\ni\r\n$1\r\nj\r\n"     \
    "$1\r\nk\r\n$1\r\nl\r\n$1\r\nm\r\n$1\r\nn\r\n$1\r\no\r\n$1\r\np\r\n"

static void test_whole_requests_answer_as_split_ones(void **state)
{
    whole_requests_answer_as_split_ones(*state, "*1\r\n$4\r\nPING\r\n");
    whole_requests_answer_as_split_ones(*state, WARM_DEL);
}

/* The same while unauthenticated (counts above 10 are refused), also
 * after argv had room for more while authenticated. */
static void test_whole_requests_answer_as_split_ones_unauthenticated(
    void **state)
{
    whole_requests_answer_as_split_ones(*state, "*1\r\n$4\r\nPING\r\n");
    whole_requests_answer_as_split_ones(
        *state, "*2\r\n$4\r\nAUTH\r\n$6\r\nsekret\r\n" WARM_DEL
                "*1\r\n$5\r\nRESET\r\n");
}

static void test_zero_copy_input_and_partial_output(void **state)
{
    struct cfix *f = *state;
    const char *in = "PING\r\nECHO hello\r\n";
    size_t room, len;
    const char *out;
    char *space = goblin_session_input_space(f->s, &room);

    assert_non_null(space);
    assert_true(room >= strlen(in));
    memcpy(space, in, strlen(in));
    assert_int_equal(goblin_session_input_commit(f->s, strlen(in)), 0);
    out = goblin_session_output(f->s, &len);
    assert_int_equal(len, 18);
    assert_memory_equal(out, "+PONG\r\n$5\r\nhello\r\n", 18);
    goblin_session_output_consume(f->s, 3);
    out = goblin_session_output(f->s, &len);
    assert_int_equal(len, 15);
    assert_memory_equal(out, "NG\r\n$5\r\nhello\r\n", 15);
    goblin_session_output_consume(f->s, 15);
    goblin_session_output(f->s, &len);
    assert_int_equal(len, 0);
    assert_int_equal(goblin_session_input_commit(f->s, room + 1),
                     GOBLIN_EINVAL);
}

static void test_large_value_through_input_space(void **state)
{
    struct cfix *f = *state;
    size_t n = 300 * 1000, sent = 0, room, k;
    char *v = malloc(n), head[64];
    int hl = snprintf(head, sizeof(head),
                      "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$%zu\r\n", n);

    memset(v, 'x', n);
    assert_int_equal(goblin_session_feed(f->s, head, (size_t)hl), 0);
    while (sent < n) {
        char *at = goblin_session_input_space(f->s, &room);

        assert_non_null(at);
        k = n - sent < room ? n - sent : room;
        k = k > 4000 ? 4000 : k;
        memcpy(at, v + sent, k);
        assert_int_equal(goblin_session_input_commit(f->s, k), 0);
        sent += k;
    }
    assert_string_equal(FEED("\r\n"), "+OK\r\n");
    EXPECT("strlen big", ":300000\r\n");
    free(v);
}

static void test_output_buffer_limit_closes(void **state)
{
    struct cfix *f = *state;

    assert_string_equal(
        FEED("*4\r\n$6\r\nCONFIG\r\n$3\r\nSET\r\n$26\r\n"
             "client-output-buffer-limit\r\n$14\r\nnormal 100 0 0\r\n"),
        "+OK\r\n");
    EXPECT("set k 0123456789012345678901234567890123456789", "+OK\r\n");
    assert_string_equal(FEED("GET k\r\nGET k\r\nGET k\r\nSET after 1\r\n"),
                        "");
    assert_int_equal(f->rc, GOBLIN_ELIMIT);
    assert_true(goblin_session_should_close(f->s));
    /* The limit stopped the batch: the last command never ran. */
    assert_string_equal(cmd_on(f, other(f), "exists after"), ":0\r\n");
}

static void test_query_buffer_limit_closes(void **state)
{
    struct cfix *f = *state;
    static char chunk[64 * 1024];
    size_t sent = 0;

    EXPECT("config set client-query-buffer-limit 1048576", "+OK\r\n");
    assert_int_equal(goblin_session_feed(f->s, "*2\r\n$4\r\nECHO\r\n"
                                                "$5000000\r\n", 25),
                     0);
    memset(chunk, 'x', sizeof(chunk));
    while (f->rc == 0 && sent < 2 * 1024 * 1024) {
        f->rc = goblin_session_feed(f->s, chunk, sizeof(chunk));
        sent += sizeof(chunk);
    }
    assert_int_equal(f->rc, GOBLIN_ELIMIT);
    assert_true(goblin_session_should_close(f->s));
}

static void test_engine_and_session_open_fail_cleanly(void **state)
{
    struct cfix *f = *state;
    struct goblin_engine_config ec = {0};
    goblin_engine *eng;
    goblin_session *s;
    long n;
    int rc;

    ec.store = f->base->st;
    assert_int_equal(goblin_engine_open(NULL, &eng), GOBLIN_EINVAL);
    for (n = 0;; n++) {
        f->base->counts.fail_after = n;
        rc = goblin_session_open(f->eng, NULL, &s);
        f->base->counts.fail_after = -1;
        if (rc == 0)
            break;
        assert_int_equal(rc, GOBLIN_ENOMEM);
    }
    assert_int_equal(goblin_engine_session_count(f->eng), 2);
    goblin_session_close(s);
    for (n = 0;; n++) {
        size_t before = f->base->counts.live_bytes;

        f->base->counts.fail_after = n;
        rc = goblin_engine_open(&ec, &eng);
        f->base->counts.fail_after = -1;
        if (rc == 0)
            break;
        assert_int_equal(rc, GOBLIN_ENOMEM);
        assert_int_equal(f->base->counts.live_bytes, before);
    }
    goblin_engine_close(eng);
}

static void test_close_engine_closes_sessions(void **state)
{
    struct cfix *f = *state;

    other(f);
    other(f);
    assert_int_equal(goblin_engine_session_count(f->eng), 3);
    EXPECT("info clients", CMD("info clients"));
    assert_non_null(strstr(CMD("info clients"), "connected_clients:3\r\n"));
}

static void test_cron_expires_keys(void **state)
{
    struct cfix *f = *state;
    int i;
    char cmd[64];

    for (i = 0; i < 100; i++) {
        snprintf(cmd, sizeof(cmd), "set k%d v px 10", i);
        EXPECT(cmd, "+OK\r\n");
    }
    f->base->clock.now_ms += 100;
    for (i = 0; i < 20; i++)
        goblin_engine_cron(f->eng);
    EXPECT("dbsize", ":0\r\n");
    assert_non_null(strstr(CMD("info stats"), "expired_keys:100\r\n"));
}

static void test_steady_state_dispatch_allocates_nothing(void **state)
{
    struct cfix *f = *state;
    const char *batch = "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"
                        "*1\r\n$4\r\nPING\r\n"
                        "*3\r\n$4\r\nHGET\r\n$1\r\nh\r\n$1\r\nf\r\n"
                        "*3\r\n$6\r\nZSCORE\r\n$1\r\nz\r\n$1\r\nm\r\n"
                        "*3\r\n$6\r\nEXISTS\r\n$1\r\nk\r\n$1\r\nh\r\n"
                        "*3\r\n$4\r\nMGET\r\n$1\r\nk\r\n$1\r\nx\r\n";
    const char *want = "$1\r\nv\r\n+PONG\r\n$1\r\nw\r\n$3\r\n1.5\r\n"
                       ":2\r\n*2\r\n$1\r\nv\r\n$-1\r\n";
    int i;

    EXPECT("set k v", "+OK\r\n");
    EXPECT("hset h f w", ":1\r\n");
    EXPECT("zadd z 1.5 m", ":1\r\n");
    assert_string_equal(FEED(batch), want);
    f->base->counts.fail_after = 0;
    for (i = 0; i < 100; i++)
        assert_string_equal(FEED(batch), want);
    f->base->counts.fail_after = -1;
}

static void test_zpop_count_zero_still_checks_the_type(void **state)
{
    struct cfix *f = *state;

    EXPECT("set s x", "+OK\r\n");
    EXPECT("zpopmin s 0", "-WRONGTYPE Operation against a key holding the "
                          "wrong kind of value\r\n");
    EXPECT("zpopmin nokey 0", "*0\r\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CMD_TEST(test_multi_exec_queues_and_runs),
        CMD_TEST(test_queueing_errors_abort_exec),
        CMD_TEST(test_watched_key_changed_by_another_session),
        CMD_TEST(test_unwatch_and_closed_watchers),
        CMD_TEST(test_expired_watched_key_aborts_exec),
        CMD_TEST(test_flushall_touches_watched_keys),
        CMD_TEST(test_exec_null_in_resp3),
        CMD_TEST_PASS(test_requirepass_flow),
        CMD_TEST_PASS(test_unauthenticated_limits_apply),
        CMD_TEST(test_pipeline_in_one_feed),
        CMD_TEST(test_command_split_at_every_byte),
        CMD_TEST(test_whole_requests_answer_as_split_ones),
        CMD_TEST_PASS(test_whole_requests_answer_as_split_ones_unauthenticated),
        CMD_TEST(test_zero_copy_input_and_partial_output),
        CMD_TEST(test_large_value_through_input_space),
        CMD_TEST(test_output_buffer_limit_closes),
        CMD_TEST(test_query_buffer_limit_closes),
        CMD_TEST(test_engine_and_session_open_fail_cleanly),
        CMD_TEST(test_close_engine_closes_sessions),
        CMD_TEST(test_cron_expires_keys),
        CMD_TEST(test_steady_state_dispatch_allocates_nothing),
        CMD_TEST(test_zpop_count_zero_still_checks_the_type),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
