/* test_resp_writer.c - the RESP reply writer: the exact bytes of every sink
 * op in RESP2 and RESP3, deferred headers, large replies, buffer growth and
 * allocation failure, the error texts of GOBLIN_E* codes, the sink helpers'
 * fallbacks and the command encoder. */
#include <math.h>
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

struct fx {
    struct counting_alloc counts;
    struct goblin_allocator alloc;
    struct goblin_buf buf;
    struct goblin_resp_writer w2, w3;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));

    f->counts.fail_after = -1;
    f->alloc = (struct goblin_allocator){counting_malloc, counting_realloc, counting_free,
                                         &f->counts};
    f->buf.alloc = &f->alloc;
    goblin_resp_writer_init(&f->w2, &f->buf, 2);
    goblin_resp_writer_init(&f->w3, &f->buf, 3);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    goblin_buf_free(&f->buf);
    assert_int_equal(f->counts.live_bytes, 0);
    assert_int_equal(f->counts.live_blocks, 0);
    free(f);
    return 0;
}

#define FX_TEST(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

/* The buffer holds exactly `want`; then it is emptied. */
static void expect_bytes(struct fx *f, const char *want, size_t n)
{
    if (f->buf.len != n || memcmp(f->buf.data, want, n) != 0)
        fail_msg("got '%.*s' (%zu bytes), want '%.*s'", (int)f->buf.len,
                 f->buf.data, f->buf.len, (int)n, want);
    f->buf.len = 0;
}

#define EXPECT(f, lit) expect_bytes(f, lit, sizeof(lit) - 1)

static void test_scalars_in_both_protocols(void **state)
{
    struct fx *f = *state;
    struct goblin_sink *s2 = goblin_resp_writer_sink(&f->w2);
    struct goblin_sink *s3 = goblin_resp_writer_sink(&f->w3);

    goblin_sink_ok(s2);
    EXPECT(f, "+OK\r\n");
    goblin_sink_ok(s3);
    EXPECT(f, "+OK\r\n");
    s2->ops->status(s2, "PONG", 4);
    EXPECT(f, "+PONG\r\n");
    s2->ops->error(s2, "ERR syntax error", 16);
    EXPECT(f, "-ERR syntax error\r\n");
    s3->ops->error(s3, "ERR a\r\nb", 8);
    EXPECT(f, "-ERR a  b\r\n");
    s2->ops->integer(s2, 0);
    EXPECT(f, ":0\r\n");
    s3->ops->integer(s3, -42);
    EXPECT(f, ":-42\r\n");
    s2->ops->integer(s2, INT64_MIN);
    EXPECT(f, ":-9223372036854775808\r\n");
    s2->ops->integer(s2, INT64_MAX);
    EXPECT(f, ":9223372036854775807\r\n");
    s2->ops->bulk(s2, "hello", 5);
    EXPECT(f, "$5\r\nhello\r\n");
    s3->ops->bulk(s3, "", 0);
    EXPECT(f, "$0\r\n\r\n");
    s2->ops->bulk(s2, NULL, 0);
    EXPECT(f, "$0\r\n\r\n");
    s2->ops->bulk(s2, "a\0\r\nb", 5);
    EXPECT(f, "$5\r\na\0\r\nb\r\n");
    s2->ops->null(s2);
    EXPECT(f, "$-1\r\n");
    s3->ops->null(s3);
    EXPECT(f, "_\r\n");
    s2->ops->null_array(s2);
    EXPECT(f, "*-1\r\n");
    s3->ops->null_array(s3);
    EXPECT(f, "_\r\n");
    s2->ops->boolean(s2, 1);
    EXPECT(f, ":1\r\n");
    s2->ops->boolean(s2, 0);
    EXPECT(f, ":0\r\n");
    s3->ops->boolean(s3, 7);
    EXPECT(f, "#t\r\n");
    s3->ops->boolean(s3, 0);
    EXPECT(f, "#f\r\n");
}

static void test_doubles_in_both_protocols(void **state)
{
    struct fx *f = *state;
    struct goblin_sink *s2 = goblin_resp_writer_sink(&f->w2);
    struct goblin_sink *s3 = goblin_resp_writer_sink(&f->w3);

    s2->ops->dbl(s2, 1.5);
    EXPECT(f, "$3\r\n1.5\r\n");
    s3->ops->dbl(s3, 1.5);
    EXPECT(f, ",1.5\r\n");
    s2->ops->dbl(s2, 3.0);
    EXPECT(f, "$1\r\n3\r\n");
    s3->ops->dbl(s3, INFINITY);
    EXPECT(f, ",inf\r\n");
    s3->ops->dbl(s3, -INFINITY);
    EXPECT(f, ",-inf\r\n");
    s3->ops->dbl(s3, NAN);
    EXPECT(f, ",nan\r\n");
    s2->ops->dbl(s2, -INFINITY);
    EXPECT(f, "$4\r\n-inf\r\n");
    s2->ops->dbl(s2, 0.1 + 0.2);
    EXPECT(f, "$19\r\n0.30000000000000004\r\n");
    s2->ops->dbl(s2, -0x1.a249b1f10a06cp+76);
    EXPECT(f, "$25\r\n-123456789012345670000000\r\n");
    goblin_sink_bulk_dbl(s2, "m", 1, 2.5);
    EXPECT(f, "$1\r\nm\r\n$3\r\n2.5\r\n");
    goblin_sink_bulk_dbl(s3, "m", 1, 2.5);
    EXPECT(f, "$1\r\nm\r\n,2.5\r\n");
    goblin_sink_bulk_int64(s2, -12);
    EXPECT(f, "$3\r\n-12\r\n");
    goblin_sink_bulk_int64(s3, INT64_MIN);
    EXPECT(f, "$20\r\n-9223372036854775808\r\n");
}

static void test_aggregates_in_both_protocols(void **state)
{
    struct fx *f = *state;
    struct goblin_sink *s2 = goblin_resp_writer_sink(&f->w2);
    struct goblin_sink *s3 = goblin_resp_writer_sink(&f->w3);

    s2->ops->array(s2, 0);
    EXPECT(f, "*0\r\n");
    s3->ops->array(s3, 12);
    EXPECT(f, "*12\r\n");
    s2->ops->map(s2, 3);
    EXPECT(f, "*6\r\n");
    s3->ops->map(s3, 3);
    EXPECT(f, "%3\r\n");
    s2->ops->set(s2, 4);
    EXPECT(f, "*4\r\n");
    s3->ops->set(s3, 4);
    EXPECT(f, "~4\r\n");
    s2->ops->push(s2, 3);
    EXPECT(f, "*3\r\n");
    s3->ops->push(s3, 3);
    EXPECT(f, ">3\r\n");
    s2->ops->verbatim(s2, "txt", "Some string", 11);
    EXPECT(f, "$11\r\nSome string\r\n");
    s3->ops->verbatim(s3, "txt", "Some string", 11);
    EXPECT(f, "=15\r\ntxt:Some string\r\n");
    s3->ops->array(s3, 1000000);
    EXPECT(f, "*1000000\r\n");
}

static void test_protocol_switches_at_run_time(void **state)
{
    struct fx *f = *state;
    struct goblin_sink *s = goblin_resp_writer_sink(&f->w2);

    s->ops->null(s);
    goblin_resp_writer_set_proto(&f->w2, 3);
    s->ops->null(s);
    goblin_resp_writer_set_proto(&f->w2, 2);
    s->ops->map(s, 1);
    EXPECT(f, "$-1\r\n_\r\n*2\r\n");
}

static void test_deferred_headers_nest(void **state)
{
    struct fx *f = *state;
    struct goblin_sink *s2 = goblin_resp_writer_sink(&f->w2);
    struct goblin_sink *s3 = goblin_resp_writer_sink(&f->w3);
    size_t outer, inner;

    s2->ops->integer(s2, 1);
    outer = s2->ops->defer(s2);
    s2->ops->bulk(s2, "a", 1);
    inner = s2->ops->defer(s2);
    for (int i = 0; i < 12; i++)
        s2->ops->integer(s2, i % 10);
    s2->ops->set_deferred(s2, inner, GOBLIN_AGG_ARRAY, 12);
    s2->ops->set_deferred(s2, outer, GOBLIN_AGG_MAP, 1);
    EXPECT(f, ":1\r\n*2\r\n$1\r\na\r\n*12\r\n:0\r\n:1\r\n:2\r\n:3\r\n"
              ":4\r\n:5\r\n:6\r\n:7\r\n:8\r\n:9\r\n:0\r\n:1\r\n");
    outer = s3->ops->defer(s3);
    s3->ops->set_deferred(s3, outer, GOBLIN_AGG_MAP, 0);
    outer = s3->ops->defer(s3);
    s3->ops->bulk(s3, "x", 1);
    s3->ops->set_deferred(s3, outer, GOBLIN_AGG_SET, 1);
    outer = s3->ops->defer(s3);
    s3->ops->set_deferred(s3, outer, GOBLIN_AGG_PUSH, 0);
    EXPECT(f, "%0\r\n~1\r\n$1\r\nx\r\n>0\r\n");
}

/* A reply far larger than the first allocation: every byte in place. */
static void test_large_array_grows_the_buffer(void **state)
{
    struct fx *f = *state;
    struct goblin_sink *s = goblin_resp_writer_sink(&f->w2);
    char member[32], *want, *p;
    size_t wlen = 0;

    want = malloc(4 << 20);
    wlen += (size_t)sprintf(want, "*200000\r\n");
    s->ops->array(s, 200000);
    for (int i = 0; i < 100000; i++) {
        int n = sprintf(member, "member:%d", i);

        goblin_sink_bulk_dbl(s, member, (size_t)n, i / 4.0);
        wlen += (size_t)sprintf(want + wlen, "$%d\r\n%s\r\n", n, member);
        n = (int)goblin_double_format(member, i / 4.0);
        wlen += (size_t)sprintf(want + wlen, "$%d\r\n%.*s\r\n", n, n, member);
    }
    assert_false(goblin_resp_writer_failed(&f->w2));
    assert_int_equal(f->buf.len, wlen);
    assert_memory_equal(f->buf.data, want, wlen);
    f->buf.len = 0;
    /* A big bulk after a reserve hint: one allocation. */
    p = malloc(3 << 20);
    memset(p, 'z', 3 << 20);
    goblin_sink_reserve(s, (3 << 20) + 32);
    size_t cap = f->buf.cap;
    s->ops->bulk(s, p, 3 << 20);
    assert_int_equal(f->buf.cap, cap);
    assert_int_equal(f->buf.len, (3 << 20) + 12);
    assert_memory_equal(f->buf.data, "$3145728\r\nzzz", 13);
    free(p);
    free(want);
}

static void test_allocation_failure_is_sticky(void **state)
{
    struct fx *f = *state;
    struct goblin_sink *s = goblin_resp_writer_sink(&f->w2);

    f->counts.fail_after = 0;
    s->ops->bulk(s, "abc", 3);
    assert_true(goblin_resp_writer_failed(&f->w2));
    assert_int_equal(f->buf.len, 0);
    f->counts.fail_after = -1;
    s->ops->integer(s, 5);
    assert_int_equal(f->buf.len, 0);
    f->buf.failed = false;
    s->ops->integer(s, 5);
    EXPECT(f, ":5\r\n");
    /* Growth fails midway through a reply: what was written stays. */
    s->ops->array(s, 2);
    f->counts.fail_after = 0;
    char big[1000] = {0};
    s->ops->bulk(s, big, sizeof(big));
    assert_true(goblin_resp_writer_failed(&f->w2));
    EXPECT(f, "*2\r\n");
}

static void test_error_codes_have_redis_texts(void **state)
{
    static const struct {
        int code;
        const char *text;
    } cases[] = {
        {GOBLIN_EWRONGTYPE, "WRONGTYPE Operation against a key holding the "
                            "wrong kind of value"},
        {GOBLIN_ENOTINT, "ERR value is not an integer or out of range"},
        {GOBLIN_EOVERFLOW, "ERR increment or decrement would overflow"},
        {GOBLIN_ENOTFLOAT, "ERR value is not a valid float"},
        {GOBLIN_ENANINF, "ERR increment would produce NaN or Infinity"},
        {GOBLIN_ENAN, "ERR resulting score is not a number (NaN)"},
        {GOBLIN_ENOKEY, "ERR no such key"},
        {GOBLIN_ESYNTAX, "ERR syntax error"},
        {GOBLIN_EHASHNOTINT, "ERR hash value is not an integer"},
        {GOBLIN_EHASHNOTFLOAT, "ERR hash value is not a float"},
        {GOBLIN_ESTRBIG, "ERR string exceeds maximum allowed size "
                         "(proto-max-bulk-len)"},
        {GOBLIN_EOFFSET, "ERR offset is out of range"},
        {GOBLIN_ENOMEM, "OOM command not allowed when used memory > "
                        "'maxmemory'."},
    };
    struct fx *f = *state;
    struct goblin_sink *s = goblin_resp_writer_sink(&f->w3);
    char want[200], small[8];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int n = snprintf(want, sizeof(want), "-%s\r\n", cases[i].text);

        goblin_sink_error_code(s, cases[i].code);
        expect_bytes(f, want, (size_t)n);
    }
    goblin_sink_error_code(s, GOBLIN_EINVAL);
    int n = snprintf(want, sizeof(want), "-ERR %s\r\n",
                     goblin_strerror(GOBLIN_EINVAL));
    expect_bytes(f, want, (size_t)n);
    /* Truncation keeps the full length as the answer. */
    assert_int_equal(goblin_reply_error_text(GOBLIN_ESYNTAX, small,
                                             sizeof(small)), 16);
    assert_memory_equal(small, "ERR synt", 8);
    for (int code = -1100; code <= 0; code++)
        assert_true(goblin_reply_error_text(code, want, sizeof(want)) <
                    GOBLIN_REPLY_ERROR_TEXT_MAX);
}

/* A sink without the optional ops: the helpers fall back. */
struct plain_sink {
    struct goblin_sink sink;
    struct goblin_resp_writer *w;
};

static void plain_bulk(struct goblin_sink *s, const void *p, size_t n)
{
    struct goblin_sink *w = &((struct plain_sink *)s)->w->sink;

    w->ops->bulk(w, p, n);
}

static void plain_dbl(struct goblin_sink *s, double v)
{
    struct goblin_sink *w = &((struct plain_sink *)s)->w->sink;

    w->ops->dbl(w, v);
}

static void test_helpers_fall_back_without_optional_ops(void **state)
{
    struct fx *f = *state;
    struct goblin_sink_ops ops = {0};
    struct plain_sink ps;

    ops.bulk = plain_bulk;
    ops.dbl = plain_dbl;
    ps.sink.ops = &ops;
    ps.w = &f->w3;
    goblin_sink_bulk_int64(&ps.sink, -9876543210);
    goblin_sink_bulk_int64(&ps.sink, 0);
    goblin_sink_bulk_int64(&ps.sink, INT64_MIN);
    goblin_sink_bulk_dbl(&ps.sink, "k", 1, 0.5);
    goblin_sink_reserve(&ps.sink, 100);
    EXPECT(f, "$11\r\n-9876543210\r\n$1\r\n0\r\n"
              "$20\r\n-9223372036854775808\r\n$1\r\nk\r\n,0.5\r\n");
}

static void test_command_write_encodes_multibulk(void **state)
{
    struct fx *f = *state;
    struct goblin_slice argv[3] = {{"SET", 3}, {"k\0y", 3}, {"", 0}};

    assert_int_equal(goblin_resp_command_write(&f->buf, 3, argv), 0);
    EXPECT(f, "*3\r\n$3\r\nSET\r\n$3\r\nk\0y\r\n$0\r\n\r\n");
    assert_int_equal(goblin_resp_command_write(&f->buf, 0, argv), 0);
    EXPECT(f, "*0\r\n");
    f->counts.fail_after = 0;
    f->buf.len = 0;
    goblin_buf_free(&f->buf);
    assert_int_equal(goblin_resp_command_write(&f->buf, 3, argv),
                     GOBLIN_ENOMEM);
    assert_int_equal(f->buf.len, 0);
}

/* Bulk strings of every short length (copied without memcpy up to 16
 * bytes) and around the one- and two-digit headers, from a source that
 * ends right after the bytes (ASan sees any overread), in replies and in
 * commands. */
static void test_bulk_strings_of_every_short_length(void **state)
{
    struct fx *f = *state;
    char want[256];

    for (size_t n = 0; n <= 120; n++) {
        char *src = malloc(n + 1);
        struct goblin_slice arg;
        int h;

        for (size_t i = 0; i < n; i++)
            src[i] = (char)('a' + (i * 7 + n) % 26);
        arg = (struct goblin_slice){src, n};
        h = snprintf(want, sizeof(want), "$%zu\r\n", n);
        memcpy(want + h, src, n);
        memcpy(want + h + n, "\r\n", 2);
        f->w2.sink.ops->bulk(&f->w2.sink, src, n);
        expect_bytes(f, want, (size_t)h + n + 2);
        assert_int_equal(goblin_resp_command_write(&f->buf, 1, &arg), 0);
        memmove(want + 4, want, (size_t)h + n + 2);
        memcpy(want, "*1\r\n", 4);
        expect_bytes(f, want, (size_t)h + n + 6);
        free(src);
    }
}

/* Status and error lines of every short length, plain and with a CR or
 * LF at each position: each becomes a space (the line test reads a word
 * at a time, so every length and position is covered). Each text sits
 * in its own allocation, so a read past its end is caught under ASan. */
static void test_lines_of_every_short_length(void **state)
{
    struct fx *f = *state;
    char want[64];

    for (size_t n = 0; n <= 40; n++) {
        for (size_t at = 0; at <= n; at++) { /* at == n: none */
            for (int c = 0; c < 2; c++) {
                char *src = malloc(n + 1);

                for (size_t i = 0; i < n; i++)
                    src[i] = (char)('A' + (i * 5 + n) % 26);
                if (at < n)
                    src[at] = c ? '\n' : '\r';
                want[0] = c ? '-' : '+';
                for (size_t i = 0; i < n; i++)
                    want[i + 1] = i == at ? ' ' : src[i];
                memcpy(want + n + 1, "\r\n", 2);
                if (c)
                    f->w2.sink.ops->error(&f->w2.sink, src, n);
                else
                    f->w3.sink.ops->status(&f->w3.sink, src, n);
                expect_bytes(f, want, n + 3);
                free(src);
            }
        }
    }
}

static void test_buf_consume_and_append(void **state)
{
    struct fx *f = *state;

    assert_int_equal(goblin_buf_append(&f->buf, "abcdef", 6), 0);
    goblin_buf_consume(&f->buf, 2);
    EXPECT(f, "cdef");
    assert_int_equal(goblin_buf_append(&f->buf, "xy", 2), 0);
    goblin_buf_consume(&f->buf, 5);
    assert_int_equal(f->buf.len, 0);
    assert_int_equal(goblin_buf_append(&f->buf, NULL, 0), 0);
    /* Without an allocator, libc is used. */
    struct goblin_buf b = {0};
    for (int i = 0; i < 10000; i++)
        assert_int_equal(goblin_buf_append(&b, "0123456789", 10), 0);
    assert_int_equal(b.len, 100000);
    assert_memory_equal(b.data + 99990, "0123456789", 10);
    goblin_buf_free(&b);
    assert_null(b.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FX_TEST(test_scalars_in_both_protocols),
        FX_TEST(test_doubles_in_both_protocols),
        FX_TEST(test_aggregates_in_both_protocols),
        FX_TEST(test_protocol_switches_at_run_time),
        FX_TEST(test_deferred_headers_nest),
        FX_TEST(test_large_array_grows_the_buffer),
        FX_TEST(test_allocation_failure_is_sticky),
        FX_TEST(test_error_codes_have_redis_texts),
        FX_TEST(test_lines_of_every_short_length),
        FX_TEST(test_helpers_fall_back_without_optional_ops),
        FX_TEST(test_command_write_encodes_multibulk),
        FX_TEST(test_bulk_strings_of_every_short_length),
        FX_TEST(test_buf_consume_and_append),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
