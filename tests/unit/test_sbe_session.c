/* test_sbe_session.c - SBE sessions in process: protocol selection by the
 * magic, typed requests against the store, Argv through the command
 * table, framing split at every byte, every malformed-frame case (each
 * answered with an ErrorReply, or the session closed when the frame's
 * end is unknown, and another session of the engine unaffected), AUTH
 * before anything when a password is set, MULTI, CLIENT REPLY,
 * statistics, and sessions that do not speak SBE. Replies are printed
 * the redis-cli -3 way to be compared. */
#include "test_commands_util.h"

#include "client/client.h"
#include "goblin/client.h"
#include "goblin/sbe.h"
#include "sbe/goblin_sbe_gen.h"
#include "sbe/request.h"

#define W_INIT(w, buf) goblin_sbe_writer_init(&(w), (buf), sizeof(buf), true)

static char text[1 << 16];

/* Prints every reply frame in p[0..n) into text. */
static const char *print_frames(const uint8_t *p, size_t n)
{
    struct goblin__sbe_tree t = {.double_text = true};
    struct goblin_buf b = {0};
    const struct goblin_resp_value *v;
    size_t pos = 0;
    uint32_t len;

    while (pos < n) {
        assert_true(n - pos >= 4);
        len = goblin_sbe_rd_u32(p + pos);
        assert_true(n - pos - 4 >= len);
        assert_int_equal(goblin__sbe_tree_build(&t, p + pos + 4, len, &v), 0);
        assert_int_equal(goblin_client_format_reply(v, 0, &b), 0);
        pos += 4 + len;
    }
    assert_true(b.len < sizeof(text));
    if (b.len > 0)
        memcpy(text, b.data, b.len);
    text[b.len] = '\0';
    goblin_buf_free(&b);
    goblin__sbe_tree_free(&t);
    return text;
}

/* Feeds n bytes to s and prints the replies. */
static const char *feed_sbe(struct cfix *f, goblin_session *s, const void *p,
                            size_t n)
{
    size_t len;
    const void *out;

    f->rc = goblin_session_feed(s, p, n);
    out = goblin_session_output(s, &len);
    if (len > 0) /* out may be NULL when there is nothing */
        memcpy(f->out, out, len);
    goblin_session_output_consume(s, len);
    return print_frames((const uint8_t *)f->out, len);
}

/* Sends what w holds and resets it. */
static const char *send_w(struct cfix *f, goblin_session *s,
                          struct goblin_sbe_writer *w)
{
    size_t n = w->pos;

    w->pos = 0;
    return feed_sbe(f, s, w->buf, n);
}

static void magic(struct cfix *f, goblin_session *s)
{
    assert_string_equal(feed_sbe(f, s, GOBLIN_SBE_MAGIC, 8), "");
    assert_int_equal(f->rc, 0);
}

/* Runs words through an Argv request. */
static const char *argv_of(struct cfix *f, goblin_session *s,
                           const char *words)
{
    static uint8_t buf[4096];
    struct goblin_sbe_writer w;
    const char *p = words, *q;

    W_INIT(w, buf);
    goblin_sbe_argv_begin(&w);
    goblin_sbe_argv_args_begin(&w);
    while (*p != '\0') {
        for (q = p; *q != '\0' && *q != ' '; q++)
            ;
        goblin_sbe_argv_args_add(&w, (struct goblin_slice){p, (size_t)(q - p)});
        p = *q == ' ' ? q + 1 : q;
    }
    assert_true(goblin_sbe_argv_end(&w) > 0);
    return send_w(f, s, &w);
}

#define S(lit) ((struct goblin_slice){(lit), sizeof(lit) - 1})

static void test_typed_requests_answer_with_native_values(void **state)
{
    struct cfix *f = *state;
    uint8_t buf[1024];
    struct goblin_sbe_writer w;

    magic(f, f->s);
    W_INIT(w, buf);
    goblin_sbe_ping_encode(&w);
    goblin_sbe_set_encode(&w, 0, GOBLIN_SBE_EXPIRE_MODE_NONE, 0, S("k"),
                          S("v"));
    goblin_sbe_get_encode(&w, S("k"));
    goblin_sbe_get_encode(&w, S("nope"));
    goblin_sbe_zadd_begin(&w, 0);
    goblin_sbe_zadd_members_begin(&w);
    goblin_sbe_zadd_members_add(&w, 1.5, S("alice"));
    goblin_sbe_zadd_members_add(&w, 0.1, S("bob"));
    goblin_sbe_zadd_end(&w, S("lb"));
    goblin_sbe_zscore_encode(&w, S("lb"), S("alice"));
    goblin_sbe_zrange_encode(&w, 0, -1, 1, 0, S("lb"));
    goblin_sbe_zrevrank_encode(&w, S("lb"), S("bob"));
    goblin_sbe_incr_encode(&w, S("k"));
    assert_string_equal(send_w(f, f->s, &w),
                        "PONG\n"
                        "OK\n"
                        "\"v\"\n"
                        "(nil)\n"
                        "(integer) 2\n"
                        "(double) 1.5\n"
                        "1) 1) \"bob\"\n   2) (double) 0.1\n"
                        "2) 1) \"alice\"\n   2) (double) 1.5\n"
                        "(integer) 1\n"
                        "(error) ERR value is not an integer or out of "
                        "range\n");
    assert_int_equal(f->rc, 0);
    /* Generic commands go through the command table. */
    assert_string_equal(argv_of(f, f->s, "zadd lb 2 carol"), "(integer) 1\n");
    assert_string_equal(argv_of(f, f->s, "zcard lb"), "(integer) 3\n");
    assert_string_equal(argv_of(f, f->s, "hset h a 1 b 2"), "(integer) 2\n");
    assert_string_equal(argv_of(f, f->s, "hgetall h"),
                        "1# \"a\" => \"1\"\n2# \"b\" => \"2\"\n");
    assert_string_equal(argv_of(f, f->s, "zscore lb carol"), "(double) 2\n");
    assert_string_equal(argv_of(f, f->s, "nosuch x"),
                        "(error) ERR unknown command 'nosuch', with args "
                        "beginning with: 'x' \n");
}

/* Lists and sets as typed requests: native counts and indices, and what
 * only a frame can get wrong refused with RESP's text in the same place,
 * before anything is popped. */
static void test_list_and_set_requests(void **state)
{
    struct cfix *f = *state;
    static uint8_t buf[1 << 20];
    struct goblin_sbe_writer w;
    unsigned i;
    char e[16];

    magic(f, f->s);
    W_INIT(w, buf);
    goblin_sbe_rpush_begin(&w);
    goblin_sbe_rpush_elements_begin(&w);
    goblin_sbe_rpush_elements_add(&w, S("a"));
    goblin_sbe_rpush_elements_add(&w, S("b"));
    goblin_sbe_rpush_end(&w, S("l"));
    goblin_sbe_lpush_begin(&w);
    goblin_sbe_lpush_elements_begin(&w);
    goblin_sbe_lpush_elements_add(&w, S("z"));
    goblin_sbe_lpush_end(&w, S("l"));
    goblin_sbe_lrange_encode(&w, 0, -1, S("l"));
    goblin_sbe_llen_encode(&w, S("l"));
    goblin_sbe_lpop_encode(&w, 0, 0, S("l"));
    goblin_sbe_rpop_encode(&w, 5, GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT, S("l"));
    goblin_sbe_rpop_encode(&w, 5, GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT, S("l"));
    goblin_sbe_lpop_encode(&w, 0, 0, S("l"));
    goblin_sbe_sadd_begin(&w);
    goblin_sbe_sadd_members_begin(&w);
    goblin_sbe_sadd_members_add(&w, S("2"));
    goblin_sbe_sadd_members_add(&w, S("1"));
    goblin_sbe_sadd_end(&w, S("t"));
    goblin_sbe_sismember_encode(&w, S("t"), S("1"));
    goblin_sbe_smembers_encode(&w, S("t"));
    goblin_sbe_scard_encode(&w, S("t"));
    goblin_sbe_srem_begin(&w);
    goblin_sbe_srem_members_begin(&w);
    goblin_sbe_srem_members_add(&w, S("1"));
    goblin_sbe_srem_end(&w, S("t"));
    goblin_sbe_smembers_encode(&w, S("nope"));
    assert_string_equal(send_w(f, f->s, &w),
                        "(integer) 2\n"
                        "(integer) 3\n"
                        "1) \"z\"\n2) \"a\"\n3) \"b\"\n"
                        "(integer) 3\n"
                        "\"z\"\n"
                        "1) \"b\"\n2) \"a\"\n"
                        "(nil)\n"
                        "(nil)\n"
                        "(integer) 2\n"
                        "(integer) 1\n"
                        "1) \"1\"\n2) \"2\"\n"
                        "(integer) 2\n"
                        "(integer) 1\n"
                        "(empty array)\n");
    /* Refused as RESP refuses them. */
    goblin_sbe_lpush_begin(&w);
    goblin_sbe_lpush_elements_begin(&w);
    goblin_sbe_lpush_end(&w, S("l"));
    goblin_sbe_sadd_begin(&w);
    goblin_sbe_sadd_end(&w, S("t"));
    goblin_sbe_lpop_encode(&w, 1, 0x02, S("t"));
    goblin_sbe_lpop_encode(&w, -1, GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT, S("l"));
    goblin_sbe_llen_encode(&w, S("t"));
    assert_string_equal(send_w(f, f->s, &w),
                        "(error) ERR wrong number of arguments for 'lpush' "
                        "command\n"
                        "(error) ERR wrong number of arguments for 'sadd' "
                        "command\n"
                        "(error) ERR syntax error\n"
                        "(error) ERR value is out of range, must be "
                        "positive\n"
                        "(error) WRONGTYPE Operation against a key holding "
                        "the wrong kind of value\n");
    /* A pop whose reply could not be one SBE array pops nothing. */
    for (i = 0; i < 70000; i++) {
        int n = snprintf(e, sizeof(e), "%u", i);

        if (i % 10000 == 0) {
            if (i > 0)
                assert_true(goblin_sbe_rpush_end(&w, S("big")) > 0);
            if (i > 0)
                send_w(f, f->s, &w);
            goblin_sbe_rpush_begin(&w);
            goblin_sbe_rpush_elements_begin(&w);
        }
        goblin_sbe_rpush_elements_add(&w, (struct goblin_slice){e,
                                                                (size_t)n});
    }
    assert_true(goblin_sbe_rpush_end(&w, S("big")) > 0);
    assert_string_equal(send_w(f, f->s, &w), "(integer) 70000\n");
    goblin_sbe_lpop_encode(&w, 65536, GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT,
                           S("big"));
    goblin_sbe_llen_encode(&w, S("big"));
    goblin_sbe_lpop_encode(&w, 3, GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT,
                           S("big"));
    assert_string_equal(send_w(f, f->s, &w),
                        "(error) ERR result too large for one SBE array "
                        "reply\n"
                        "(integer) 70000\n"
                        "1) \"0\"\n2) \"1\"\n3) \"2\"\n");
}

/* The same pipeline fed whole, byte by byte and split at every offset
 * gives the same replies. */
static void test_input_split_anywhere_gives_the_same_replies(void **state)
{
    struct cfix *f = *state;
    uint8_t buf[512];
    struct goblin_sbe_writer w;
    struct goblin_session_info si = {GOBLIN_TRANSPORT_TCP, "x", "y", -1,
                                     NULL};
    const char *want = "OK\n\"1\"\n(integer) 2\n";
    goblin_session *s;
    size_t n, cut, i;

    memcpy(buf, GOBLIN_SBE_MAGIC, 8);
    goblin_sbe_writer_init(&w, buf + 8, sizeof(buf) - 8, true);
    goblin_sbe_set_encode(&w, 0, 0, 0, S("n"), S("1"));
    goblin_sbe_get_encode(&w, S("n"));
    goblin_sbe_incr_encode(&w, S("n"));
    n = 8 + w.pos;
    for (cut = 0; cut <= n; cut++) {
        static char got[256];

        assert_int_equal(goblin_session_open(f->eng, &si, &s), 0);
        got[0] = '\0';
        strcat(got, feed_sbe(f, s, buf, cut));
        strcat(got, feed_sbe(f, s, buf + cut, n - cut));
        assert_string_equal(got, want);
        goblin_session_close(s);
    }
    assert_int_equal(goblin_session_open(f->eng, &si, &s), 0);
    text[0] = '\0';
    {
        static char got[256];

        got[0] = '\0';
        for (i = 0; i < n; i++)
            strcat(got, feed_sbe(f, s, buf + i, 1));
        assert_string_equal(got, want);
    }
    goblin_session_close(s);
}

/* ---- malformed frames ---- */

struct bad_frame {
    const char *name;
    uint8_t bytes[48];
    size_t len;
    const char *reply;
};

#define LE32(n) (n) & 0xff, ((n) >> 8) & 0xff, ((n) >> 16) & 0xff, (n) >> 24
#define HDR(bl, tid, sid, ver) \
    (bl) & 0xff, (bl) >> 8, (tid) & 0xff, (tid) >> 8, (sid) & 0xff, \
        (sid) >> 8, (ver) & 0xff, (ver) >> 8

static const struct bad_frame bad_frames[] = {
    {"truncated header", {LE32(5), 0, 0, 16, 0, 7}, 9,
     "(error) ERR malformed SBE frame: truncated header\n"},
    {"empty frame", {LE32(0)}, 4,
     "(error) ERR malformed SBE frame: truncated header\n"},
    {"block length past the frame", {LE32(10), HDR(8, 22, 7, 1), 1, 2}, 14,
     "(error) ERR malformed SBE frame: block length past the end of the "
     "frame\n"},
    {"var length past the frame", {LE32(10), HDR(0, 22, 7, 1), 1, 0}, 14,
     "(error) ERR malformed SBE frame: var data length past the end of the "
     "frame\n"},
    {"var data past the frame", {LE32(13), HDR(0, 22, 7, 1), 9, 0, 0, 0, 's'},
     17, "(error) ERR malformed SBE frame: var data past the end of the "
         "frame\n"},
    {"group count past the frame", {LE32(17), HDR(1, 17, 7, 1), 0, 8, 0,
     0xff, 0xff, 1, 0, 0, 0}, 21,
     "(error) ERR malformed SBE frame: group entries past the end of the "
     "frame\n"},
    {"group block too short", {LE32(13), HDR(1, 17, 7, 1), 0, 4, 0, 0, 0},
     17, "(error) ERR malformed SBE frame: group block length too short\n"},
    {"unknown template", {LE32(8), HDR(0, 999, 7, 1)}, 12,
     "(error) ERR unknown SBE template id 999\n"},
    {"a reply sent as a request", {LE32(8), HDR(0, 1, 7, 1)}, 12,
     "(error) ERR unknown SBE template id 1\n"},
    {"schema id mismatch", {LE32(8), HDR(0, 16, 9, 1)}, 12,
     "(error) ERR SBE schema id 9 does not match 7\n"},
    {"schema version mismatch", {LE32(8), HDR(0, 16, 7, 0)}, 12,
     "(error) ERR SBE schema version 0 is not supported (this server "
     "speaks 1)\n"},
    {"trailing bytes", {LE32(9), HDR(0, 16, 7, 1), 0}, 13,
     "(error) ERR malformed SBE frame: trailing bytes after the message\n"},
    /* Lists and sets: counts that lie, lengths past the end. */
    {"LPUSH elements counted past the frame", {LE32(17), HDR(0, 110, 7, 1),
     0, 0, 0xff, 0xff, 1, 0, 0, 0, 'a'}, 21,
     "(error) ERR malformed SBE frame: var data length past the end of the "
     "frame\n"},
    {"SADD member longer than the frame", {LE32(22), HDR(0, 116, 7, 1),
     0, 0, 1, 0, 0xff, 0xff, 0xff, 0x3f, 'a', 1, 0, 0, 0, 't'}, 26,
     "(error) ERR malformed SBE frame: var data past the end of the "
     "frame\n"},
    {"SREM key missing after the group", {LE32(17), HDR(0, 117, 7, 1),
     0, 0, 1, 0, 1, 0, 0, 0, 'a'}, 21,
     "(error) ERR malformed SBE frame: var data length past the end of the "
     "frame\n"},
    {"LPOP block too short", {LE32(12), HDR(4, 112, 7, 1), 1, 0, 0, 0}, 16,
     "(error) ERR malformed SBE frame: block length too short for the "
     "template\n"},
    {"LRANGE block past the frame", {LE32(14), HDR(16, 114, 7, 1), 0, 0, 0,
     0, 0, 0}, 18,
     "(error) ERR malformed SBE frame: block length past the end of the "
     "frame\n"},
    {"SISMEMBER without its member", {LE32(13), HDR(0, 118, 7, 1), 1, 0, 0,
     0, 't'}, 17,
     "(error) ERR malformed SBE frame: var data length past the end of the "
     "frame\n"},
};

static void test_malformed_frames_get_errors_and_the_session_goes_on(
    void **state)
{
    struct cfix *f = *state;
    uint8_t ping[16], buf[64];
    struct goblin_sbe_writer w;
    size_t i, n;

    magic(f, f->s);
    W_INIT(w, ping);
    n = (size_t)goblin_sbe_ping_encode(&w);
    for (i = 0; i < sizeof(bad_frames) / sizeof(bad_frames[0]); i++) {
        const struct bad_frame *b = &bad_frames[i];

        char want[256];

        memcpy(buf, b->bytes, b->len);
        memcpy(buf + b->len, ping, n);
        snprintf(want, sizeof(want), "%sPONG\n", b->reply);
        if (strcmp(feed_sbe(f, f->s, buf, b->len + n), want) != 0)
            fail_msg("%s: got\n%s\nwant\n%s", b->name, text, want);
        assert_int_equal(f->rc, 0);
    }
    /* Another session of the engine sees nothing of it. */
    {
        struct goblin_session_info si = {GOBLIN_TRANSPORT_TCP, "x", "y", -1,
                                         NULL};
        goblin_session *other;

        assert_int_equal(goblin_session_open(f->eng, &si, &other), 0);
        magic(f, other);
        assert_string_equal(argv_of(f, other, "dbsize"), "(integer) 0\n");
        goblin_session_close(other);
    }
}

static void test_an_oversized_frame_closes_only_its_session(void **state)
{
    struct cfix *f = *state;
    struct goblin_session_info si = {GOBLIN_TRANSPORT_TCP, "x", "y", -1,
                                     NULL};
    const uint8_t huge[] = {LE32(GOBLIN_SBE_FRAME_MAX_DEFAULT + 1),
                            HDR(0, 16, 7, 1)};
    uint8_t buf[64];
    struct goblin_sbe_writer w;
    goblin_session *other;

    assert_int_equal(goblin_session_open(f->eng, &si, &other), 0);
    magic(f, f->s);
    magic(f, other);
    assert_string_equal(feed_sbe(f, f->s, huge, sizeof(huge)),
                        "(error) ERR SBE frame of 67108865 bytes exceeds "
                        "the limit of 67108864 bytes\n");
    assert_int_equal(f->rc, GOBLIN_EPROTO);
    assert_true(goblin_session_should_close(f->s));
    /* Further input is ignored. */
    W_INIT(w, buf);
    goblin_sbe_ping_encode(&w);
    assert_string_equal(send_w(f, f->s, &w), "");
    /* The other session is untouched. */
    goblin_sbe_ping_encode(&w);
    assert_string_equal(send_w(f, other, &w), "PONG\n");
    assert_int_equal(f->rc, 0);
    goblin_session_close(other);
}

static void test_query_buffer_limit_lowers_the_frame_limit(void **state)
{
    struct cfix *f = *state;
    uint8_t buf[256];
    struct goblin_sbe_writer w;

    magic(f, f->s);
    assert_string_equal(argv_of(f, f->s,
                                "config set client-query-buffer-limit "
                                "1048576"), "OK\n");
    W_INIT(w, buf);
    goblin_sbe_get_encode(&w, S("k"));
    assert_string_equal(send_w(f, f->s, &w), "(nil)\n");
    buf[0] = 1, buf[1] = 0, buf[2] = 0x10, buf[3] = 0; /* 1 MiB + 1 */
    assert_string_equal(feed_sbe(f, f->s, buf, 12),
                        "(error) ERR SBE frame of 1048577 bytes exceeds the "
                        "limit of 1048576 bytes\n");
    assert_int_equal(f->rc, GOBLIN_EPROTO);
}

/* A pipeline whose replies pass client-output-buffer-limit stops there
 * and closes the session, as on RESP. */
static void test_output_limit_stops_a_pipeline(void **state)
{
    struct cfix *f = *state;
    static uint8_t buf[1 << 16];
    static char value[4000];
    struct goblin_sbe_writer w;
    size_t len, i;

    magic(f, f->s);
    W_INIT(w, buf);
    goblin_sbe_argv_begin(&w);
    goblin_sbe_argv_args_begin(&w);
    goblin_sbe_argv_args_add(&w, S("config"));
    goblin_sbe_argv_args_add(&w, S("set"));
    goblin_sbe_argv_args_add(&w, S("client-output-buffer-limit"));
    goblin_sbe_argv_args_add(&w, S("normal 20000 0 0"));
    goblin_sbe_argv_end(&w);
    assert_string_equal(send_w(f, f->s, &w), "OK\n");
    goblin_sbe_set_encode(&w, 0, 0, 0, S("big"),
                          (struct goblin_slice){value, sizeof(value)});
    for (i = 0; i < 10; i++)
        goblin_sbe_get_encode(&w, S("big"));
    goblin_sbe_set_encode(&w, 0, 0, 0, S("after"), S("1"));
    f->rc = goblin_session_feed(f->s, buf, w.pos);
    assert_int_equal(f->rc, GOBLIN_ELIMIT);
    assert_true(goblin_session_should_close(f->s));
    goblin_session_output(f->s, &len);
    assert_int_equal(len, 0);
    /* Nothing after the request that passed the limit ran. */
    assert_int_equal(goblin_key_exists(f->base->st, S("after")), 0);
}

static void test_small_frame_limit(void **state)
{
    struct cfix *f = *state;
    uint8_t buf[256];
    struct goblin_sbe_writer w;

    magic(f, f->s);
    goblin__sbe_set_max_frame(f->s, 16);
    W_INIT(w, buf);
    goblin_sbe_get_encode(&w, S("abc"));            /* 15 bytes: fits */
    assert_string_equal(send_w(f, f->s, &w), "(nil)\n");
    goblin_sbe_get_encode(&w, S("abcd"));           /* 16 bytes: fits */
    assert_string_equal(send_w(f, f->s, &w), "(nil)\n");
    goblin_sbe_get_encode(&w, S("abcde"));          /* 17 bytes */
    assert_string_equal(send_w(f, f->s, &w),
                        "(error) ERR SBE frame of 17 bytes exceeds the "
                        "limit of 16 bytes\n");
    assert_int_equal(f->rc, GOBLIN_EPROTO);
}

/* ---- authentication ---- */

static void test_auth_comes_first_when_a_password_is_set(void **state)
{
    struct cfix *f = *state;
    uint8_t buf[256];
    struct goblin_sbe_writer w;

    magic(f, f->s);
    W_INIT(w, buf);
    goblin_sbe_ping_encode(&w);
    goblin_sbe_get_encode(&w, S("k"));
    goblin_sbe_auth_encode(&w, S(""), S("wrong"));
    goblin_sbe_set_encode(&w, 0, 0, 0, S("k"), S("v"));
    assert_string_equal(send_w(f, f->s, &w),
                        "(error) NOAUTH Authentication required.\n"
                        "(error) NOAUTH Authentication required.\n"
                        "(error) WRONGPASS invalid username-password pair "
                        "or user is disabled.\n"
                        "(error) NOAUTH Authentication required.\n");
    assert_string_equal(argv_of(f, f->s, "get k"),
                        "(error) NOAUTH Authentication required.\n");
    goblin_sbe_auth_encode(&w, S(""), S("sekret"));
    goblin_sbe_set_encode(&w, 0, 0, 0, S("k"), S("v"));
    goblin_sbe_get_encode(&w, S("k"));
    assert_string_equal(send_w(f, f->s, &w), "OK\nOK\n\"v\"\n");
}

static void test_hello_with_auth(void **state)
{
    struct cfix *f = *state;
    uint8_t buf[256];
    struct goblin_sbe_writer w;

    magic(f, f->s);
    W_INIT(w, buf);
    goblin_sbe_hello_encode(&w, 3, GOBLIN_SBE_HELLO_FLAGS_AUTH |
                                       GOBLIN_SBE_HELLO_FLAGS_SET_NAME,
                            S(""), S("sekret"), S("app1"));
    send_w(f, f->s, &w);
    assert_non_null(strstr(text, "1# \"server\" => \"redis\"\n"));
    assert_non_null(strstr(text, "\"proto\" => (integer) 3\n"));
    assert_string_equal(argv_of(f, f->s, "client getname"), "\"app1\"\n");
    goblin_sbe_hello_encode(&w, 4, 0, S(""), S(""), S(""));
    assert_string_equal(send_w(f, f->s, &w),
                        "(error) NOPROTO unsupported protocol version\n");
}

/* ---- MULTI, CLIENT REPLY, statistics ---- */

static void test_multi_takes_argv_and_refuses_typed(void **state)
{
    struct cfix *f = *state;
    uint8_t buf[256];
    struct goblin_sbe_writer w;

    magic(f, f->s);
    assert_string_equal(argv_of(f, f->s, "multi"), "OK\n");
    assert_string_equal(argv_of(f, f->s, "set a 1"), "QUEUED\n");
    assert_string_equal(argv_of(f, f->s, "incr a"), "QUEUED\n");
    assert_string_equal(argv_of(f, f->s, "exec"),
                        "1) OK\n2) (integer) 2\n");
    assert_string_equal(argv_of(f, f->s, "multi"), "OK\n");
    W_INIT(w, buf);
    goblin_sbe_incr_encode(&w, S("a"));
    assert_string_equal(send_w(f, f->s, &w),
                        "(error) ERR typed SBE requests cannot be queued in "
                        "MULTI; send them as Argv\n");
    assert_string_equal(argv_of(f, f->s, "exec"),
                        "(error) EXECABORT Transaction discarded because of "
                        "previous errors.\n");
    goblin_sbe_get_encode(&w, S("a"));
    assert_string_equal(send_w(f, f->s, &w), "\"2\"\n");
}

static void test_client_reply_off_silences_typed_replies(void **state)
{
    struct cfix *f = *state;
    uint8_t buf[256];
    struct goblin_sbe_writer w;

    magic(f, f->s);
    assert_string_equal(argv_of(f, f->s, "client reply off"), "");
    W_INIT(w, buf);
    goblin_sbe_set_encode(&w, 0, 0, 0, S("k"), S("v"));
    goblin_sbe_keys_encode(&w, S("*"));
    goblin_sbe_get_encode(&w, S("k"));
    assert_string_equal(send_w(f, f->s, &w), "");
    assert_string_equal(argv_of(f, f->s, "client reply on"), "OK\n");
    goblin_sbe_get_encode(&w, S("k"));
    assert_string_equal(send_w(f, f->s, &w), "\"v\"\n");
}

static void test_typed_requests_count_in_commandstats(void **state)
{
    struct cfix *f = *state;
    uint8_t buf[256];
    struct goblin_sbe_writer w;

    magic(f, f->s);
    W_INIT(w, buf);
    goblin_sbe_zadd_begin(&w, 0);
    goblin_sbe_zadd_members_begin(&w);
    goblin_sbe_zadd_members_add(&w, 1, S("m"));
    goblin_sbe_zadd_end(&w, S("z"));
    goblin_sbe_get_encode(&w, S("z"));
    send_w(f, f->s, &w);
    argv_of(f, f->s, "info commandstats");
    assert_non_null(strstr(text, "cmdstat_zadd:calls=1,"));
    assert_non_null(strstr(text, "cmdstat_get:calls=1,"));
    assert_non_null(strstr(text, "failed_calls=1"));
}

/* Typed requests reach the slow log as RESP commands do: every call is
 * timed while the log watches, and a slow one is logged as its words. */
static void test_typed_requests_reach_the_slow_log(void **state)
{
    struct cfix *f = *state;
    uint8_t buf[256];
    struct goblin_sbe_writer w;

    magic(f, f->s);
    argv_of(f, f->s, "config set slowlog-log-slower-than 0");
    argv_of(f, f->s, "slowlog reset");
    W_INIT(w, buf);
    goblin_sbe_zadd_begin(&w, 0);
    goblin_sbe_zadd_members_begin(&w);
    goblin_sbe_zadd_members_add(&w, 1.5, S("m"));
    goblin_sbe_zadd_end(&w, S("z"));
    goblin_sbe_zscore_encode(&w, S("z"), S("m"));
    assert_string_equal(send_w(f, f->s, &w), "(integer) 1\n(double) 1.5\n");
    /* slowlog reset, ZADD and ZSCORE */
    assert_string_equal(argv_of(f, f->s, "slowlog len"), "(integer) 3\n");
    argv_of(f, f->s, "slowlog get");
    assert_non_null(strstr(text, "4) 1) \"ZSCORE\"\n      2) \"z\"\n"
                                 "      3) \"m\"\n"));
    assert_non_null(strstr(text, "4) 1) \"ZADD\"\n      2) \"z\"\n"
                                 "      3) \"1.5\"\n      4) \"m\"\n"));
}

/* RESP is unaffected: bytes that leave the magic are RESP at once. */
static void test_bytes_that_leave_the_magic_are_resp(void **state)
{
    struct cfix *f = *state;

    assert_string_equal(feed_on(f, f->s, "GOBLIN"), "");
    assert_string_equal(feed_on(f, f->s, ".x\r\n"),
                        "-ERR unknown command 'GOBLIN.x', with args "
                        "beginning with: \r\n");
    assert_string_equal(feed_on(f, f->s, "PING\r\n"), "+PONG\r\n");
}

/* A session given goblin_session_no_sbe() is RESP from the first byte:
 * the magic is an unknown command there, while another session of the
 * engine still turns SBE on it. Once SBE has begun it can't be undone. */
static void test_no_sbe_makes_the_magic_a_resp_command(void **state)
{
    struct cfix *f = *state;
    struct goblin_session_info si = {GOBLIN_TRANSPORT_UNIX, "x", "y", -1,
                                     NULL};
    uint8_t buf[64];
    struct goblin_sbe_writer w;
    goblin_session *plain;

    assert_int_equal(goblin_session_open(f->eng, &si, &plain), 0);
    assert_int_equal(goblin_session_no_sbe(plain), 0);
    assert_string_equal(feed_on(f, plain, GOBLIN_SBE_MAGIC "\r\n"),
                        "-ERR unknown command 'GOBLINS!', with args "
                        "beginning with: \r\n");
    assert_int_equal(f->rc, 0);
    assert_string_equal(feed_on(f, plain, "PING\r\n"), "+PONG\r\n");
    magic(f, f->s);
    W_INIT(w, buf);
    goblin_sbe_ping_encode(&w);
    assert_string_equal(send_w(f, f->s, &w), "PONG\n");
    assert_int_equal(goblin_session_no_sbe(f->s), GOBLIN_EINVAL);
    goblin_sbe_ping_encode(&w);
    assert_string_equal(send_w(f, f->s, &w), "PONG\n");
    goblin_session_close(plain);
}

/* min-replicas-to-write with no replica: typed writes get NOREPLICAS as
 * RESP ones do, and reads still run. */
static void test_min_replicas_refuses_typed_writes(void **state)
{
    struct cfix *f = *state;
    uint8_t buf[256];
    struct goblin_sbe_writer w;

    magic(f, f->s);
    W_INIT(w, buf);
    assert_string_equal(argv_of(f, f->s, "config set min-replicas-to-write 1"),
                        "OK\n");
    goblin_sbe_set_encode(&w, 0, 0, 0, S("k"), S("v"));
    goblin_sbe_get_encode(&w, S("k"));
    assert_string_equal(send_w(f, f->s, &w),
                        "(error) NOREPLICAS Not enough good replicas to "
                        "write.\n(nil)\n");
    assert_string_equal(argv_of(f, f->s, "set k v"),
                        "(error) NOREPLICAS Not enough good replicas to "
                        "write.\n");
    assert_string_equal(argv_of(f, f->s, "config set min-replicas-to-write 0"),
                        "OK\n");
    goblin_sbe_set_encode(&w, 0, 0, 0, S("k"), S("v"));
    assert_string_equal(send_w(f, f->s, &w), "OK\n");
}

static void test_maxmemory_refuses_typed_denyoom_requests(void **state)
{
    struct cfix *f = *state;
    uint8_t buf[256];
    struct goblin_sbe_writer w;

    magic(f, f->s);
    W_INIT(w, buf);
    goblin_sbe_set_encode(&w, 0, 0, 0, S("k"), S("v"));
    assert_string_equal(send_w(f, f->s, &w), "OK\n");
    assert_string_equal(argv_of(f, f->s, "config set maxmemory 1"), "OK\n");
    goblin_sbe_set_encode(&w, 0, 0, 0, S("k2"), S("v"));
    goblin_sbe_get_encode(&w, S("k"));
    assert_string_equal(send_w(f, f->s, &w),
                        "(error) OOM command not allowed when used memory "
                        "> 'maxmemory'.\n\"v\"\n");
    assert_string_equal(argv_of(f, f->s, "set k3 v"),
                        "(error) OOM command not allowed when used memory "
                        "> 'maxmemory'.\n");
    assert_string_equal(argv_of(f, f->s, "config set maxmemory 0"), "OK\n");
    goblin_sbe_set_encode(&w, 0, 0, 0, S("k2"), S("v"));
    assert_string_equal(send_w(f, f->s, &w), "OK\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CMD_TEST(test_typed_requests_answer_with_native_values),
        CMD_TEST(test_list_and_set_requests),
        CMD_TEST(test_input_split_anywhere_gives_the_same_replies),
        CMD_TEST(test_malformed_frames_get_errors_and_the_session_goes_on),
        CMD_TEST(test_an_oversized_frame_closes_only_its_session),
        CMD_TEST(test_small_frame_limit),
        CMD_TEST(test_output_limit_stops_a_pipeline),
        CMD_TEST(test_query_buffer_limit_lowers_the_frame_limit),
        CMD_TEST_PASS(test_auth_comes_first_when_a_password_is_set),
        CMD_TEST_PASS(test_hello_with_auth),
        CMD_TEST(test_multi_takes_argv_and_refuses_typed),
        CMD_TEST(test_client_reply_off_silences_typed_replies),
        CMD_TEST(test_typed_requests_count_in_commandstats),
        CMD_TEST(test_typed_requests_reach_the_slow_log),
        CMD_TEST(test_bytes_that_leave_the_magic_are_resp),
        CMD_TEST(test_no_sbe_makes_the_magic_a_resp_command),
        CMD_TEST(test_maxmemory_refuses_typed_denyoom_requests),
        CMD_TEST(test_min_replicas_refuses_typed_writes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
