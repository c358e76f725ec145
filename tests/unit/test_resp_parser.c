/* test_resp_parser.c - the RESP command parser: every input fed whole,
 * byte by byte and split at every offset (with the buffer moved between
 * calls) must give the same commands and the same outcome; inline quoting;
 * every protocol error with Redis's text on both sides of each limit;
 * memory claimed by the peer; allocation failures; random round trips.
 * Expected outcomes were checked against redis-server 7. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "goblin.h"
#include "testutil.h"

/* ---- the transcript harness ---------------------------------------------- */

struct text {
    char *p;
    size_t len, cap;
};

static void text_add(struct text *t, const void *p, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->p = realloc(t->p, t->cap);
    }
    memcpy(t->p + t->len, p, n);
    t->len += n;
    t->p[t->len] = '\0';
}

static void text_str(struct text *t, const char *s)
{
    text_add(t, s, strlen(s));
}

static void text_cmd(struct text *t, const struct goblin_resp_command *c)
{
    char num[32];

    snprintf(num, sizeof(num), "%zu[", c->argc);
    text_str(t, num);
    for (size_t i = 0; i < c->argc; i++) {
        snprintf(num, sizeof(num), "%s%zu:", i ? "|" : "", c->argv[i].len);
        text_str(t, num);
        text_add(t, c->argv[i].ptr, c->argv[i].len);
    }
    text_str(t, "]");
}

enum feed_mode { WHOLE, BYTES, SPLIT };

struct feeder {
    goblin_resp_parser *p;
    char *buf; /* unconsumed bytes, in a fresh block after each call */
    size_t len, cap;
    struct text out;
};

/* Calls the parser until it wants more. Small buffers move to a new block
 * before every call so stale pointers show up under ASan. */
static int drain(struct feeder *f)
{
    for (;;) {
        struct goblin_resp_command cmd;
        int64_t r;

        if (f->len < 4096) {
            char *moved = malloc(f->len + 1);

            memcpy(moved, f->buf, f->len);
            free(f->buf);
            f->buf = moved;
            f->cap = f->len + 1;
        }
        r = goblin_resp_parse(f->p, f->buf, f->len, &cmd);
        if (r == 0)
            return 0;
        if (r < 0) {
            text_str(&f->out, "ERROR:");
            text_str(&f->out, goblin_resp_parser_error(f->p));
            return -1;
        }
        assert_true((size_t)r <= f->len);
        text_cmd(&f->out, &cmd);
        memmove(f->buf, f->buf + r, f->len - (size_t)r);
        f->len -= (size_t)r;
    }
}

static void give(struct feeder *f, const char *p, size_t n)
{
    if (f->len + n + 1 > f->cap) {
        f->cap = (f->len + n + 1) * 2;
        f->buf = realloc(f->buf, f->cap);
    }
    memcpy(f->buf + f->len, p, n);
    f->len += n;
}

/* Feeds in[0..n) in pieces; split is the first piece's size in SPLIT. */
static char *transcript(const char *in, size_t n, enum feed_mode mode,
                        size_t split, uint64_t max_bulk, bool unauth)
{
    struct goblin_resp_parser_config cfg = {NULL, max_bulk};
    struct feeder f = {0};
    size_t at = 0;

    assert_int_equal(goblin_resp_parser_open(&cfg, &f.p), 0);
    goblin_resp_parser_set_unauthenticated(f.p, unauth);
    while (at < n) {
        size_t piece = mode == WHOLE ? n : mode == BYTES ? 1
                       : at == 0 ? split : n - at;

        give(&f, in + at, piece);
        at += piece;
        if (drain(&f) < 0)
            goto done;
    }
    if (f.len > 0) {
        char num[32];

        snprintf(num, sizeof(num), "MORE:%zu", f.len);
        text_str(&f.out, num);
    }
done:
    goblin_resp_parser_close(f.p);
    free(f.buf);
    if (f.out.p == NULL)
        text_str(&f.out, "");
    return f.out.p;
}

/* All ways of feeding in agree, and give want. */
static void check_feeds(const char *in, size_t n, const char *want,
                        uint64_t max_bulk, bool unauth)
{
    char *whole = transcript(in, n, WHOLE, 0, max_bulk, unauth);
    char *bytes;

    if (strcmp(whole, want) != 0)
        fail_msg("input '%.*s':\n got  %s\n want %s", (int)n, in, whole,
                 want);
    bytes = transcript(in, n, BYTES, 0, max_bulk, unauth);
    assert_string_equal(bytes, whole);
    free(bytes);
    for (size_t k = 1; k < n && n < 4096; k++) {
        char *split = transcript(in, n, SPLIT, k, max_bulk, unauth);

        if (strcmp(split, whole) != 0)
            fail_msg("split at %zu: %s vs %s", k, split, whole);
        free(split);
    }
    free(whole);
}

#define FEEDS(lit, want) check_feeds(lit, sizeof(lit) - 1, want, 0, false)

/* ---- multibulk ----------------------------------------------------------- */

static void test_multibulk_commands(void **state)
{
    (void)state;
    FEEDS("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n",
          "3[3:SET|1:k|5:value]");
    FEEDS("*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$0\r\n\r\n",
          "1[4:PING]2[4:ECHO|0:]");
    FEEDS("*2\r\n$3\r\nGET\r\n$5\r\na\0\r\nb\r\n", "2[3:GET|5:a\0\r\nb]");
    FEEDS("*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPI", "1[4:PING]MORE:10");
}

/* Counts and lengths of one and two digits take quick_line's shortest
 * road; its edges (a zero, a leading zero, a third digit, a sign, a byte
 * that is not a digit, the input ending at the CR) give what the general
 * road gives, however the input is cut. */
static void test_short_counts_and_lengths(void **state)
{
    (void)state;
    FEEDS("*2\r\n$3\r\nGET\r\n$16\r\n0123456789abcdef\r\n",
          "2[3:GET|16:0123456789abcdef]");
    FEEDS("*12\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n"
          "$1\r\ne\r\n$1\r\nf\r\n$1\r\ng\r\n$1\r\nh\r\n$1\r\ni\r\n"
          "$1\r\nj\r\n$1\r\nk\r\n$10\r\n0123456789\r\n",
          "12[1:a|1:b|1:c|1:d|1:e|1:f|1:g|1:h|1:i|1:j|1:k|10:0123456789]");
    FEEDS("*1\r\n$99\r\n", "MORE:9");
    FEEDS("*1\r\n$100\r\n", "MORE:10");
    FEEDS("*1\r\n$0\r\n\r\n*1\r\n$9\r\n123456789\r\n",
          "1[0:]1[9:123456789]");
    FEEDS("*1\r\n$00\r\n\r\n",
          "ERROR:ERR Protocol error: invalid bulk length");
    FEEDS("*1\r\n$05\r\nabcde\r\n",
          "ERROR:ERR Protocol error: invalid bulk length");
    FEEDS("*1\r\n$-5\r\n", "ERROR:ERR Protocol error: invalid bulk length");
    FEEDS("*1\r\n$1a\r\n", "ERROR:ERR Protocol error: invalid bulk length");
    FEEDS("*1\r\n$a\r\n", "ERROR:ERR Protocol error: invalid bulk length");
    FEEDS("*1\r\n$:\r\n", "ERROR:ERR Protocol error: invalid bulk length");
    FEEDS("*1\r\n$1:\r\n", "ERROR:ERR Protocol error: invalid bulk length");
    FEEDS("*00\r\n", "ERROR:ERR Protocol error: invalid multibulk length");
    FEEDS("*0\r\n*10\r\n", "0[]MORE:5");
    FEEDS("*1\r", "MORE:3");
    FEEDS("*12\r", "MORE:4");
    FEEDS("*1\r\n$12\r", "MORE:8");
    /* A proto-max-bulk-len below 99 still holds for two-digit lengths. */
    {
        char in[128] = "*1\r\n$99\r\n";
        size_t n = strlen(in);

        memset(in + n, 'x', 99);
        memcpy(in + n + 99, "\r\n", 2);
        n += 101;
        check_feeds(in, n, "1[99:xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx]",
                    99, false);
        check_feeds(in, n, "ERROR:ERR Protocol error: invalid bulk length", 98,
                    false);
    }
}

static void test_empty_commands_are_consumed(void **state)
{
    (void)state;
    FEEDS("*0\r\n*-1\r\n*-5\r\n\r\n\n   \r\n*1\r\n$4\r\nPING\r\n",
          "0[]0[]0[]0[]0[]0[]1[4:PING]");
}

/* Redis skips the byte after each CR, and the two after a bulk, unseen. */
static void test_bytes_after_cr_are_not_checked(void **state)
{
    (void)state;
    FEEDS("*1\rx$4\rzPINGab*1\r\n$1\r\nx\r\n", "1[4:PING]1[1:x]");
    FEEDS("*1\r\n$4\r\nPING", "MORE:12");
    FEEDS("*1\r\n$4\r\nPING\r", "MORE:13");
    FEEDS("*1\r", "MORE:3");
}

/* A buffer that ends right after a whole argument of a command still
 * waiting for more: the parser must not look past the end (found by
 * ASan when a client's pipeline filled the read buffer exactly). */
static void test_input_ends_between_arguments(void **state)
{
    static const char text[] = "*3\r\n$1\r\na\r\n$2\r\nbc\r\n";
    struct goblin_resp_command cmd;
    goblin_resp_parser *p;
    char *buf;

    (void)state;
    for (size_t n = 1; n < sizeof(text) - 1; n++) {
        assert_int_equal(goblin_resp_parser_open(NULL, &p), 0);
        buf = malloc(n);
        assert_non_null(buf);
        memcpy(buf, text, n);
        assert_int_equal(goblin_resp_parse(p, buf, n, &cmd), 0);
        free(buf);
        goblin_resp_parser_close(p);
    }
}

static void test_multibulk_count_limits(void **state)
{
    (void)state;
    FEEDS("*2147483647\r\n", "MORE:13");
    FEEDS("*2147483648\r\n",
          "ERROR:ERR Protocol error: invalid multibulk length");
    FEEDS("*\r\n", "ERROR:ERR Protocol error: invalid multibulk length");
    FEEDS("*01\r\n", "ERROR:ERR Protocol error: invalid multibulk length");
    FEEDS("*+1\r\n", "ERROR:ERR Protocol error: invalid multibulk length");
    FEEDS("*-0\r\n", "ERROR:ERR Protocol error: invalid multibulk length");
    FEEDS("*1x\r\n", "ERROR:ERR Protocol error: invalid multibulk length");
    FEEDS("* 1\r\n", "ERROR:ERR Protocol error: invalid multibulk length");
    FEEDS("*99999999999999999999\r\n",
          "ERROR:ERR Protocol error: invalid multibulk length");
}

static void test_bulk_length_limits(void **state)
{
    (void)state;
    FEEDS("*1\r\n$536870912\r\n", "MORE:16");
    FEEDS("*1\r\n$536870913\r\n",
          "ERROR:ERR Protocol error: invalid bulk length");
    FEEDS("*1\r\n$-1\r\n", "ERROR:ERR Protocol error: invalid bulk length");
    FEEDS("*1\r\n$\r\n", "ERROR:ERR Protocol error: invalid bulk length");
    FEEDS("*1\r\n$01\r\n", "ERROR:ERR Protocol error: invalid bulk length");
    FEEDS("*1\r\nx4\r\n",
          "ERROR:ERR Protocol error: expected '$', got 'x'");
    FEEDS("*1\r\n\r\n", "ERROR:ERR Protocol error: expected '$', got ' '");
    FEEDS("*1\r\n\n\r\n", "ERROR:ERR Protocol error: expected '$', got ' '");
    FEEDS("*2\r\n$1\r\na\r\n*1\r\n",
          "ERROR:ERR Protocol error: expected '$', got '*'");
    /* proto-max-bulk-len is per parser. */
    check_feeds("*1\r\n$10\r\n0123456789\r\n", 21, "1[10:0123456789]", 10,
                false);
    check_feeds("*1\r\n$11\r\n", 9,
                "ERROR:ERR Protocol error: invalid bulk length", 10, false);
    /* A whole request in the buffer (the parser's one-pass road) meets the
     * same limits as one that arrives in pieces. */
    check_feeds("*1\r\n$11\r\n01234567890\r\n", 22,
                "ERROR:ERR Protocol error: invalid bulk length", 10, false);
    FEEDS("*2\r\n$1\r\na\r\n$01\r\nb\r\n",
          "ERROR:ERR Protocol error: invalid bulk length");
    FEEDS("*2\r\n$1\r\na\r\nx1\r\nb\r\n",
          "ERROR:ERR Protocol error: expected '$', got 'x'");
    FEEDS("*9\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n"
          "$1\r\nf\r\n$1\r\ng\r\n$1\r\nh\r\n$1\r\ni\r\n",
          "9[1:a|1:b|1:c|1:d|1:e|1:f|1:g|1:h|1:i]");
}

static void test_unauthenticated_limits(void **state)
{
    (void)state;
    check_feeds("*10\r\n", 5, "MORE:5", 0, true);
    check_feeds("*11\r\n", 5,
                "ERROR:ERR Protocol error: unauthenticated multibulk length",
                0, true);
    check_feeds("*1\r\n$16384\r\n", 12, "MORE:12", 0, true);
    check_feeds("*1\r\n$16385\r\n", 12,
                "ERROR:ERR Protocol error: unauthenticated bulk length", 0,
                true);
    check_feeds("*11\r\n", 5, "MORE:5", 0, false);
}

/* A NUL before the CR hides the line end, as strchr does in Redis: the
 * parser waits, and fails once more than 64 KiB follow the line start. */
static void test_nul_hides_the_line_end(void **state)
{
    size_t n = 70000;
    char *in = malloc(n);

    (void)state;
    FEEDS("*1\r\n\0\r\n", "MORE:7");
    FEEDS("*\0\r\n", "MORE:4");
    FEEDS("PI\0NG\r\n", "MORE:7");
    memset(in, 'a', n);
    memcpy(in, "*1\r\n$\0\r\n", 8);
    check_feeds(in, 65540, "MORE:65540", 0, false);
    char *t = transcript(in, 65541, WHOLE, 0, 0, false);
    assert_string_equal(t, "ERROR:ERR Protocol error: too big bulk count "
                           "string");
    free(t);
    free(in);
}

/* A line end at offset 65536 is fine; at 65537 the line is too big. */
static void check_line_limit(char first, char end, const char *too_big,
                             const char *at_limit_outcome)
{
    size_t n = 65540;
    char *in = malloc(n);
    char *t;

    memset(in, '1', n);
    in[0] = first;
    in[65536] = end;
    in[65537] = '\n';
    t = transcript(in, 65538, WHOLE, 0, 0, false);
    if (strncmp(t, at_limit_outcome, strlen(at_limit_outcome)) != 0)
        fail_msg("at the limit: %.80s", t);
    free(t);
    t = transcript(in, 65538, BYTES, 0, 0, false);
    if (strncmp(t, at_limit_outcome, strlen(at_limit_outcome)) != 0)
        fail_msg("at the limit, bytes: %.80s", t);
    free(t);
    memset(in, '1', n);
    in[0] = first;
    in[65537] = end;
    in[65538] = '\n';
    t = transcript(in, 65539, WHOLE, 0, 0, false);
    assert_string_equal(t, too_big);
    free(t);
    t = transcript(in, 65539, BYTES, 0, 0, false);
    assert_string_equal(t, too_big);
    free(t);
    /* No end at all: fails once 65537 bytes are buffered. */
    memset(in, '1', n);
    in[0] = first;
    t = transcript(in, 65536, WHOLE, 0, 0, false);
    assert_string_equal(t, "MORE:65536");
    free(t);
    t = transcript(in, 65537, WHOLE, 0, 0, false);
    assert_string_equal(t, too_big);
    free(t);
    free(in);
}

static void test_line_length_limits(void **state)
{
    (void)state;
    check_line_limit('*', '\r',
                     "ERROR:ERR Protocol error: too big mbulk count string",
                     "ERROR:ERR Protocol error: invalid multibulk length");
    check_line_limit('x', '\n',
                     "ERROR:ERR Protocol error: too big inline request",
                     "1[65536:x111");
}

static void test_bulk_count_line_limit(void **state)
{
    size_t n = 65600;
    char *in = malloc(n);
    char *t;

    (void)state;
    memset(in, '1', n);
    memcpy(in, "*1\r\n$", 5);
    in[4 + 65536] = '\r';
    t = transcript(in, 4 + 65538, WHOLE, 0, 0, false);
    assert_string_equal(t, "ERROR:ERR Protocol error: invalid bulk length");
    free(t);
    in[4 + 65536] = '1';
    in[4 + 65537] = '\r';
    t = transcript(in, 4 + 65539, WHOLE, 0, 0, false);
    assert_string_equal(t, "ERROR:ERR Protocol error: too big bulk count "
                           "string");
    free(t);
    free(in);
}

/* ---- inline -------------------------------------------------------------- */

static void test_inline_splitting_follows_sdssplitargs(void **state)
{
    (void)state;
    FEEDS("PING\r\n", "1[4:PING]");
    FEEDS("PING\n", "1[4:PING]");
    FEEDS("  SET  a   b  \r\n", "3[3:SET|1:a|1:b]");
    FEEDS("SET a \"b c\"\r\n", "3[3:SET|1:a|3:b c]");
    FEEDS("SET a \"\"\r\n", "3[3:SET|1:a|0:]");
    FEEDS("ECHO \"\\x41\\n\\q\\t\\r\\b\\a\\\\\\\"\"\r\n",
          "2[4:ECHO|9:A\nq\t\r\b\a\\\"]");
    FEEDS("ECHO \"\\x4g\"\r\n", "2[4:ECHO|3:x4g]");
    FEEDS("ECHO 'a\\'b'\r\n", "2[4:ECHO|3:a'b]");
    FEEDS("ECHO 'a\\nb'\r\n", "2[4:ECHO|4:a\\nb]");
    FEEDS("ECHO a\"b c\"\r\n", "2[4:ECHO|4:ab c]");
    FEEDS("ECHO \"a\"\tb\r\n", "3[4:ECHO|1:a|1:b]");
    FEEDS("ECHO \"a\"\vb\r\n", "3[4:ECHO|1:a|1:b]");
    FEEDS("ECHO a\vb\r\n", "2[4:ECHO|3:a\vb]");
    FEEDS("\vECHO\fx\r\n", "1[6:ECHO\fx]");
    FEEDS("PING\r\r\n", "1[4:PING]");
    FEEDS("a\rb\r\n", "2[1:a|1:b]");
    FEEDS("\"\"\r\n", "1[0:]");
    FEEDS("'x' \"y\" z\r\nPING\r\n", "3[1:x|1:y|1:z]1[4:PING]");
    FEEDS("\xff\xfe\r\n", "1[2:\xff\xfe]");
}

static void test_inline_unbalanced_quotes(void **state)
{
    static const char *const bad[] = {
        "ECHO \"abc\r\n", "ECHO \"a\"b\r\n", "ECHO 'a'b\r\n", "ECHO 'abc\n",
        "ECHO \"abc\\\"\r\n", "ECHO \"\\\r\n",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        check_feeds(bad[i], strlen(bad[i]),
                    "ERROR:ERR Protocol error: unbalanced quotes in request",
                    0, false);
}

static void test_mixed_pipeline(void **state)
{
    (void)state;
    FEEDS("PING\r\n*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\nECHO \"x y\"\n\r\n*0\r\n"
          "*1\r\n$4\r\nQUIT\r\n",
          "1[4:PING]2[4:ECHO|2:hi]2[4:ECHO|3:x y]0[]0[]1[4:QUIT]");
}

/* ---- state, memory --------------------------------------------------------- */

static void test_failed_parser_stays_failed_until_reset(void **state)
{
    goblin_resp_parser *p;
    struct goblin_resp_command cmd;

    (void)state;
    assert_int_equal(goblin_resp_parser_open(NULL, &p), 0);
    assert_string_equal(goblin_resp_parser_error(p), "");
    assert_int_equal(goblin_resp_parse(p, "*x\r\n", 4, &cmd), GOBLIN_EPROTO);
    assert_int_equal(goblin_resp_parse(p, "PING\r\n", 6, &cmd),
                     GOBLIN_EPROTO);
    assert_string_equal(goblin_resp_parser_error(p),
                        "ERR Protocol error: invalid multibulk length");
    goblin_resp_parser_reset(p);
    assert_int_equal(goblin_resp_parse(p, "PING\r\n", 6, &cmd), 6);
    assert_int_equal(cmd.argc, 1);
    assert_int_equal(goblin_resp_parse(p, "", 0, &cmd), 0);
    goblin_resp_parser_close(p);
    goblin_resp_parser_close(NULL);
}

/* Claimed counts and lengths commit no memory before their bytes come. */
static void test_peer_claims_allocate_nothing(void **state)
{
    struct counting_alloc c = {0, 0, -1};
    struct goblin_allocator a = {counting_malloc, NULL, counting_free, &c};
    struct goblin_resp_parser_config cfg = {&a, 0};
    goblin_resp_parser *p;
    struct goblin_resp_command cmd;
    size_t base;
    const char *big = "*2000000000\r\n$536870912\r\nabc";

    (void)state;
    assert_int_equal(goblin_resp_parser_open(&cfg, &p), 0);
    base = c.live_bytes;
    assert_int_equal(goblin_resp_parse(p, big, strlen(big), &cmd), 0);
    assert_true(c.live_bytes - base <= 8 * sizeof(struct goblin_slice));
    assert_int_equal(goblin_resp_parser_wanted(p), 536870912 + 2 - 3);
    goblin_resp_parser_close(p);
    assert_int_equal(c.live_bytes, 0);
    assert_int_equal(c.live_blocks, 0);
}

static void test_wanted_tracks_a_big_argument(void **state)
{
    goblin_resp_parser *p;
    struct goblin_resp_command cmd;

    (void)state;
    assert_int_equal(goblin_resp_parser_open(NULL, &p), 0);
    assert_int_equal(goblin_resp_parse(p, "*1\r\n$100\r\n", 10, &cmd), 0);
    assert_int_equal(goblin_resp_parser_wanted(p), 102);
    assert_int_equal(goblin_resp_parse(p, "*1\r\n$100\r\nabcd", 14, &cmd), 0);
    assert_int_equal(goblin_resp_parser_wanted(p), 98);
    goblin_resp_parser_close(p);
}

/* Fail the Nth allocation for N = 0, 1, 2...: each call either succeeds
 * or says GOBLIN_ENOMEM and can be retried to the same result. */
static void test_allocation_failures_can_be_retried(void **state)
{
    struct goblin_buf in = {0};
    struct goblin_slice argv[300];
    char words[300][8];
    char line[2000];
    size_t ll = 0;

    (void)state;
    for (int i = 0; i < 300; i++) {
        argv[i].len = (size_t)snprintf(words[i], 8, "w%d", i);
        argv[i].ptr = words[i];
        if (i < 200)
            ll += (size_t)snprintf(line + ll, sizeof(line) - ll, "%s ",
                                   words[i]);
    }
    assert_int_equal(goblin_resp_command_write(&in, 300, argv), 0);
    ll += (size_t)snprintf(line + ll, sizeof(line) - ll, "'q'\r\n");
    assert_int_equal(goblin_buf_append(&in, line, ll), 0);
    for (long n = 0; n < 20; n++) {
        struct counting_alloc c = {0, 0, -1};
        struct goblin_allocator a = {counting_malloc, NULL, counting_free, &c};
        struct goblin_resp_parser_config cfg = {&a, 0};
        goblin_resp_parser *p;
        struct goblin_resp_command cmd;
        size_t at = 0, got = 0;

        assert_int_equal(goblin_resp_parser_open(&cfg, &p), 0);
        c.fail_after = n;
        while (at < in.len) {
            int64_t r = goblin_resp_parse(p, in.data + at, in.len - at, &cmd);

            if (r == GOBLIN_ENOMEM) {
                c.fail_after = -1;
                continue;
            }
            assert_true(r > 0);
            if (got++ == 0) {
                assert_int_equal(cmd.argc, 300);
                assert_memory_equal(cmd.argv[299].ptr, "w299", 4);
            } else {
                assert_int_equal(cmd.argc, 201);
                assert_memory_equal(cmd.argv[200].ptr, "q", 1);
            }
            at += (size_t)r;
        }
        assert_int_equal(got, 2);
        goblin_resp_parser_close(p);
        assert_int_equal(c.live_blocks, 0);
    }
    goblin_buf_free(&in);
}

static uint64_t rng = 0x243f6a8885a308d3u;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Random binary commands written by the encoder come back as they were,
 * however the stream is cut. */
static void test_random_commands_round_trip(void **state)
{
    struct goblin_buf in = {0};
    struct text want = {0};
    static char data[64][300];
    struct goblin_slice argv[64];

    (void)state;
    for (int c = 0; c < 300; c++) {
        struct goblin_resp_command cmd;
        size_t argc = 1 + rnd() % 12;

        for (size_t i = 0; i < argc; i++) {
            argv[i].len = rnd() % (i == 3 ? 300 : 20);
            for (size_t j = 0; j < argv[i].len; j++)
                data[i][j] = (char)rnd();
            argv[i].ptr = data[i];
        }
        assert_int_equal(goblin_resp_command_write(&in, argc, argv), 0);
        cmd.argc = argc;
        cmd.argv = argv;
        text_cmd(&want, &cmd);
    }
    for (int round = 0; round < 40; round++) {
        struct goblin_resp_parser_config cfg = {NULL, 0};
        struct feeder f = {0};
        size_t at = 0;

        assert_int_equal(goblin_resp_parser_open(&cfg, &f.p), 0);
        while (at < in.len) {
            size_t piece = 1 + rnd() % (round < 20 ? 7 : 4000);

            if (piece > in.len - at)
                piece = in.len - at;
            give(&f, in.data + at, piece);
            at += piece;
            assert_int_equal(drain(&f), 0);
        }
        assert_int_equal(f.len, 0);
        assert_int_equal(f.out.len, want.len);
        assert_memory_equal(f.out.p, want.p, want.len);
        goblin_resp_parser_close(f.p);
        free(f.buf);
        free(f.out.p);
    }
    free(want.p);
    goblin_buf_free(&in);
}

/* Random garbage: however it is cut, the outcome is the same. */
static void test_random_bytes_agree_across_splits(void **state)
{
    static const char alphabet[] = "*$\r\n0123-1 \"'\\x\0aZ";
    char in[64];

    (void)state;
    for (int i = 0; i < 3000; i++) {
        size_t n = 1 + rnd() % sizeof(in);
        char *whole, *other;

        for (size_t j = 0; j < n; j++)
            in[j] = alphabet[rnd() % (sizeof(alphabet) - 1)];
        whole = transcript(in, n, WHOLE, 0, 0, false);
        other = transcript(in, n, BYTES, 0, 0, false);
        assert_string_equal(whole, other);
        free(other);
        other = transcript(in, n, SPLIT, 1 + rnd() % n, 0, false);
        assert_string_equal(whole, other);
        free(other);
        free(whole);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_multibulk_commands),
        cmocka_unit_test(test_short_counts_and_lengths),
        cmocka_unit_test(test_empty_commands_are_consumed),
        cmocka_unit_test(test_bytes_after_cr_are_not_checked),
        cmocka_unit_test(test_input_ends_between_arguments),
        cmocka_unit_test(test_multibulk_count_limits),
        cmocka_unit_test(test_bulk_length_limits),
        cmocka_unit_test(test_unauthenticated_limits),
        cmocka_unit_test(test_nul_hides_the_line_end),
        cmocka_unit_test(test_line_length_limits),
        cmocka_unit_test(test_bulk_count_line_limit),
        cmocka_unit_test(test_inline_splitting_follows_sdssplitargs),
        cmocka_unit_test(test_inline_unbalanced_quotes),
        cmocka_unit_test(test_mixed_pipeline),
        cmocka_unit_test(test_failed_parser_stays_failed_until_reset),
        cmocka_unit_test(test_peer_claims_allocate_nothing),
        cmocka_unit_test(test_wanted_tracks_a_big_argument),
        cmocka_unit_test(test_allocation_failures_can_be_retried),
        cmocka_unit_test(test_random_commands_round_trip),
        cmocka_unit_test(test_random_bytes_agree_across_splits),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
