/* test_resp_reader.c - the RESP2/RESP3 reply reader: every type of the
 * RESP3 spec, attributes, nesting, every way of cutting the input, bad
 * input, memory claimed by the peer, allocation failures, and replies the
 * writer produced read back. */
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

/* ---- printing a tree ------------------------------------------------------ */

static void put(char **o, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    *o += vsprintf(*o, fmt, ap);
    va_end(ap);
}

static void show(char **o, const struct goblin_resp_value *v)
{
    static const char *const open[] = {
        [GOBLIN_RESP_ARRAY] = "A[", [GOBLIN_RESP_MAP] = "M[",
        [GOBLIN_RESP_SET] = "S[", [GOBLIN_RESP_PUSH] = "P[",
        [GOBLIN_RESP_ATTRIBUTE] = "@[",
    };
    int n = (int)v->str.len;
    const char *s = v->str.ptr;

    if (v->attribute != NULL)
        show(o, v->attribute);
    switch (v->type) {
    case GOBLIN_RESP_STATUS:
        put(o, "+%.*s", n, s);
        break;
    case GOBLIN_RESP_ERROR:
        put(o, "-%.*s", n, s);
        break;
    case GOBLIN_RESP_INTEGER:
        put(o, ":%lld", (long long)v->integer);
        break;
    case GOBLIN_RESP_BULK:
        put(o, "$%d:%.*s", n, n, s);
        break;
    case GOBLIN_RESP_NULL:
        put(o, v->null_array ? "null*" : "null");
        break;
    case GOBLIN_RESP_DOUBLE:
        put(o, ",%.*s=%g", n, s, v->dbl);
        break;
    case GOBLIN_RESP_BOOLEAN:
        put(o, v->integer ? "#t" : "#f");
        break;
    case GOBLIN_RESP_BLOB_ERROR:
        put(o, "!%.*s", n, s);
        break;
    case GOBLIN_RESP_VERBATIM:
        put(o, "=%s:%.*s", v->fmt, n, s);
        break;
    case GOBLIN_RESP_BIGNUM:
        put(o, "(%.*s", n, s);
        break;
    default:
        put(o, "%s", open[v->type]);
        for (size_t i = 0; i < v->n; i++) {
            put(o, i ? " " : "");
            show(o, &v->items[i]);
        }
        put(o, "]");
    }
}

enum mode { WHOLE, BYTES, SPLIT };

/* Reads every reply in in[0..n), fed as mode says; returns a printout. */
static char *transcript(const char *in, size_t n, enum mode mode,
                        size_t split)
{
    goblin_resp_reader *r;
    char *out = calloc(1, 16 * n + 256), *o = out;
    char *buf = NULL;
    size_t have = 0, at = 0;

    assert_int_equal(goblin_resp_reader_open(NULL, 1000, &r), 0);
    while (at < n) {
        size_t piece = mode == WHOLE ? n : mode == BYTES ? 1
                       : at == 0 ? split : n - at;
        const struct goblin_resp_value *v;
        int64_t got;
        char *moved = malloc(have + piece + 1);

        if (have > 0) /* buf is NULL before the first piece */
            memcpy(moved, buf, have);
        memcpy(moved + have, in + at, piece);
        free(buf);
        buf = moved;
        have += piece;
        at += piece;
        while ((got = goblin_resp_reply_parse(r, buf, have, &v)) > 0) {
            show(&o, v);
            put(&o, ";");
            memmove(buf, buf + got, have - (size_t)got);
            have -= (size_t)got;
        }
        if (got < 0) {
            put(&o, "ERROR");
            break;
        }
    }
    if (have > 0 && strstr(out, "ERROR") == NULL)
        put(&o, "MORE:%zu", have);
    goblin_resp_reader_close(r);
    free(buf);
    return out;
}

static void check(const char *in, size_t n, const char *want)
{
    char *whole = transcript(in, n, WHOLE, 0);

    if (strcmp(whole, want) != 0)
        fail_msg("got  %s\nwant %s", whole, want);
    char *bytes = transcript(in, n, BYTES, 0);
    assert_string_equal(bytes, whole);
    free(bytes);
    for (size_t k = 1; k < n; k++) {
        char *split = transcript(in, n, SPLIT, k);

        assert_string_equal(split, whole);
        free(split);
    }
    free(whole);
}

#define CHECK(lit, want) check(lit, sizeof(lit) - 1, want)

/* The simple replies read without a line search (bulk strings, nulls,
 * integers, statuses) and every edge of that road: each must read as the
 * general road reads it, cut anywhere. The transcript's reader takes bulk
 * strings up to 1000 bytes. */
static void test_simple_replies_take_the_short_road(void **state)
{
    (void)state;
    CHECK("$16\r\n0123456789abcdef\r\n", "$16:0123456789abcdef;");
    CHECK("$1\r\nx\r\n$0\r\n\r\n$-1\r\n", "$1:x;$0:;null;");
    CHECK("$01\r\na\r\n$+1\r\nb\r\n", "$1:a;$1:b;");
    CHECK("$1000\r\n", "MORE:7");
    CHECK("$1001\r\n", "ERROR");
    CHECK("$123456789012345678\r\n", "ERROR");
    CHECK("$1234567890123456789\r\n", "ERROR");
    CHECK("$-2\r\n", "ERROR");
    CHECK("$-1\r\r", "ERROR");
    CHECK("$-1x\r\n", "ERROR");
    CHECK("$1\r\nab\r\n", "ERROR");
    CHECK("$1\r\na\n\n", "ERROR");
    CHECK("$1\n\na\r\n", "ERROR");
    CHECK("$1\rxa\r\n", "ERROR");
    CHECK("$x\r\n", "ERROR");
    CHECK("$1x\r\na\r\n", "ERROR");
    CHECK("$3\r\nab", "MORE:6");
    CHECK(":0\r\n:-0\r\n:42\r\n", ":0;:0;:42;");
    CHECK(":123456789012345678\r\n:-123456789012345678\r\n",
          ":123456789012345678;:-123456789012345678;");
    CHECK(":9223372036854775807\r\n:-9223372036854775808\r\n",
          ":9223372036854775807;:-9223372036854775808;");
    CHECK(":9223372036854775808\r\n", "ERROR");
    CHECK(":\r\n", "ERROR");
    CHECK(":-\r\n", "ERROR");
    CHECK(":1x\r\n", "ERROR");
    CHECK(":1\rx", "ERROR");
    CHECK(":12", "MORE:3");
    CHECK("+OK\r\n+\r\n+a b\r\n", "+OK;+;+a b;");
    CHECK("+a\rb\r\n", "ERROR");
    CHECK("+OK\r", "MORE:4");
    /* Status texts either side of the 16 bytes looked at by a loop. */
    CHECK("+0123456789abcde\r\n+0123456789abcdef\r\n"
          "+0123456789abcdefg\r\n",
          "+0123456789abcde;+0123456789abcdef;+0123456789abcdefg;");
    CHECK("+0123456789abcdefgh\rx", "ERROR");
    CHECK("+0123456789abcdefgh", "MORE:19");
}

/* Flat aggregates of simple items read in one pass once the reader has
 * nodes for them: each reply comes twice (the first sizes the nodes on
 * the general road, the second takes the short one), cut anywhere. */
static void test_flat_aggregates_take_the_short_road(void **state)
{
    (void)state;
    CHECK("*2\r\n$1\r\na\r\n:5\r\n*2\r\n$1\r\na\r\n:5\r\n",
          "A[$1:a :5];A[$1:a :5];");
    CHECK("%1\r\n+k\r\n$1\r\nv\r\n%1\r\n+k\r\n$1\r\nv\r\n",
          "M[+k $1:v];M[+k $1:v];");
    CHECK("~2\r\n:1\r\n:-2\r\n~2\r\n:1\r\n:-2\r\n", "S[:1 :-2];S[:1 :-2];");
    CHECK("*1\r\n$-1\r\n*1\r\n$-1\r\n*01\r\n:7\r\n", "A[null];A[null];A[:7];");
    CHECK("*2\r\n*1\r\n:1\r\n:2\r\n*2\r\n*1\r\n:1\r\n:2\r\n",
          "A[A[:1] :2];A[A[:1] :2];");
    CHECK("*2\r\n:1\r\n_\r\n*2\r\n:1\r\n,1.5\r\n",
          "A[:1 null];A[:1 ,1.5=1.5];");
    CHECK("*2\r\n:1\r\n:2\r\n*2\r\n:1\r\n:x\r\n", "A[:1 :2];ERROR");
    CHECK("*2\r\n:1\r\n:2\r\n*2\r\n$3\r\nab\r\n:1\r\n", "A[:1 :2];ERROR");
    CHECK("*2\r\n:1\r\n:2\r\n*2\r\n:1\r\n", "A[:1 :2];MORE:8");
    CHECK("*2\r\n:1\r\n:2\r\n*3\r\n:1\r\n:2\r\n:3\r\n*0\r\n*-1\r\n",
          "A[:1 :2];A[:1 :2 :3];A[];null*;");
}

static void test_resp2_types(void **state)
{
    (void)state;
    CHECK("+OK\r\n", "+OK;");
    CHECK("-ERR unknown\r\n", "-ERR unknown;");
    CHECK(":1234\r\n:-5\r\n:+7\r\n", ":1234;:-5;:7;");
    CHECK(":-9223372036854775808\r\n", ":-9223372036854775808;");
    CHECK("$5\r\nhello\r\n$0\r\n\r\n", "$5:hello;$0:;");
    CHECK("$-1\r\n*-1\r\n", "null;null*;");
    CHECK("*0\r\n", "A[];");
    CHECK("*3\r\n:1\r\n$1\r\na\r\n*2\r\n+x\r\n*0\r\n",
          "A[:1 $1:a A[+x A[]]];");
    CHECK("*2\r\n$1\r\na\r\n", "MORE:11");
}

static void test_resp3_types(void **state)
{
    (void)state;
    CHECK("_\r\n", "null;");
    CHECK(",1.5\r\n,inf\r\n,-inf\r\n,nan\r\n,1e+20\r\n",
          ",1.5=1.5;,inf=inf;,-inf=-inf;,nan=nan;,1e+20=1e+20;");
    CHECK("#t\r\n#f\r\n", "#t;#f;");
    CHECK("!21\r\nSYNTAX invalid syntax\r\n", "!SYNTAX invalid syntax;");
    CHECK("=15\r\ntxt:Some string\r\n", "=txt:Some string;");
    CHECK("(3492890328409238509324850943850943825024385\r\n",
          "(3492890328409238509324850943850943825024385;");
    CHECK("%2\r\n+first\r\n:1\r\n+second\r\n:2\r\n",
          "M[+first :1 +second :2];");
    CHECK("~2\r\n$1\r\na\r\n$1\r\nb\r\n", "S[$1:a $1:b];");
    CHECK(">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n",
          "P[$7:message $2:ch $2:hi];");
    CHECK("%0\r\n~0\r\n", "M[];S[];");
}

/* The RESP3 spec's attribute example: attached to the array after it. */
static void test_attributes_attach_to_the_next_value(void **state)
{
    (void)state;
    CHECK("|1\r\n+key-popularity\r\n%2\r\n$1\r\na\r\n,0.1923\r\n$1\r\nb\r\n"
          ",0.0012\r\n*2\r\n:2039123\r\n:9543892\r\n",
          "@[+key-popularity M[$1:a ,0.1923=0.1923 $1:b ,0.0012=0.0012]]"
          "A[:2039123 :9543892];");
    CHECK("*2\r\n:1\r\n|1\r\n+ttl\r\n:3600\r\n:2\r\n",
          "A[:1 @[+ttl :3600]:2];");
    CHECK("|0\r\n+OK\r\n", "@[]+OK;");
    CHECK("|1\r\n+a\r\n:1\r\n", "MORE:12");
}

static void test_bad_input_fails_for_good(void **state)
{
    static const char *const bad[] = {
        "?x\r\n", "+OK\rx", ":abc\r\n", ":\r\n", ":99999999999999999999\r\n",
        "$-2\r\n", "*-2\r\n", "%-1\r\n", "#x\r\n", "#\r\n", "_x\r\n",
        ",abc\r\n", "=3\r\nabc\r\n", "=5\r\ntxt+x\r\n", "$3\r\nabcXY",
        "$1001\r\n", "!-1\r\n", "(12a\r\n", "$?\r\n", "*?\r\n", "$ 1\r\n",
    };
    goblin_resp_reader *r;
    const struct goblin_resp_value *v;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *t = transcript(bad[i], strlen(bad[i]), WHOLE, 0);

        if (strcmp(t, "ERROR") != 0)
            fail_msg("'%s' gave %s", bad[i], t);
        free(t);
    }
    assert_int_equal(goblin_resp_reader_open(NULL, 0, &r), 0);
    assert_int_equal(goblin_resp_reply_parse(r, "?\r\n", 3, &v),
                     GOBLIN_EPROTO);
    assert_int_equal(goblin_resp_reply_parse(r, "+OK\r\n", 5, &v),
                     GOBLIN_EPROTO);
    goblin_resp_reader_reset(r);
    assert_int_equal(goblin_resp_reply_parse(r, "+OK\r\n", 5, &v), 5);
    goblin_resp_reader_close(r);
    goblin_resp_reader_close(NULL);
}

static void test_nesting_is_capped(void **state)
{
    char in[4000];
    size_t n = 0;
    char *t;

    (void)state;
    for (int i = 0; i < 512; i++)
        n += (size_t)sprintf(in + n, "*1\r\n");
    n += (size_t)sprintf(in + n, ":1\r\n");
    t = transcript(in, n, WHOLE, 0);
    assert_true(strncmp(t, "A[A[A[", 6) == 0);
    free(t);
    n = 0;
    for (int i = 0; i < 513; i++)
        n += (size_t)sprintf(in + n, "*1\r\n");
    t = transcript(in, n, WHOLE, 0);
    assert_string_equal(t, "ERROR");
    free(t);
}

static void test_claims_allocate_nothing_until_whole(void **state)
{
    struct counting_alloc c = {0, 0, -1};
    struct goblin_allocator a = {counting_malloc, NULL, counting_free, &c};
    goblin_resp_reader *r;
    const struct goblin_resp_value *v;
    size_t base;
    const char *in = "*1000000000\r\n%1000000000\r\n$536870912\r\nab";

    (void)state;
    assert_int_equal(goblin_resp_reader_open(&a, 0, &r), 0);
    base = c.live_bytes;
    assert_int_equal(goblin_resp_reply_parse(r, in, strlen(in), &v), 0);
    assert_int_equal(c.live_bytes, base);
    goblin_resp_reader_close(r);
    assert_int_equal(c.live_blocks, 0);
}

static void test_allocation_failure_can_be_retried(void **state)
{
    struct counting_alloc c = {0, 0, -1};
    struct goblin_allocator a = {counting_malloc, NULL, counting_free, &c};
    goblin_resp_reader *r;
    const struct goblin_resp_value *v;
    char in[4000];
    size_t n = (size_t)sprintf(in, "*100\r\n");

    (void)state;
    for (int i = 0; i < 100; i++)
        n += (size_t)sprintf(in + n, ":%d\r\n", i);
    assert_int_equal(goblin_resp_reader_open(&a, 0, &r), 0);
    c.fail_after = 0;
    assert_int_equal(goblin_resp_reply_parse(r, in, n, &v), GOBLIN_ENOMEM);
    c.fail_after = -1;
    assert_int_equal(goblin_resp_reply_parse(r, in, n, &v), (int64_t)n);
    assert_int_equal(v->n, 100);
    assert_int_equal(v->items[99].integer, 99);
    goblin_resp_reader_close(r);
    assert_int_equal(c.live_blocks, 0);
}

/* What the writer writes, the reader reads, in both protocols. */
static void test_writer_output_reads_back(void **state)
{
    struct goblin_buf b = {0};
    struct goblin_resp_writer w;
    char *t;

    (void)state;
    for (int proto = 2; proto <= 3; proto++) {
        struct goblin_sink *s;
        size_t tok;

        goblin_resp_writer_init(&w, &b, proto);
        s = goblin_resp_writer_sink(&w);
        s->ops->map(s, 2);
        s->ops->bulk(s, "k", 1);
        s->ops->dbl(s, 2.5);
        s->ops->status(s, "st", 2);
        tok = s->ops->defer(s);
        s->ops->boolean(s, 1);
        s->ops->null(s);
        s->ops->verbatim(s, "txt", "hi", 2);
        s->ops->integer(s, -3);
        s->ops->set_deferred(s, tok, GOBLIN_AGG_SET, 4);
        goblin_sink_error_code(s, GOBLIN_ESYNTAX);
        s->ops->push(s, 1);
        s->ops->null_array(s);
    }
    t = transcript(b.data, b.len, WHOLE, 0);
    assert_string_equal(t,
        "A[$1:k $3:2.5 +st A[:1 null $2:hi :-3]];-ERR syntax error;"
        "A[null*];"
        "M[$1:k ,2.5=2.5 +st S[#t null =txt:hi :-3]];-ERR syntax error;"
        "P[null];");
    free(t);
    goblin_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simple_replies_take_the_short_road),
        cmocka_unit_test(test_flat_aggregates_take_the_short_road),
        cmocka_unit_test(test_resp2_types),
        cmocka_unit_test(test_resp3_types),
        cmocka_unit_test(test_attributes_attach_to_the_next_value),
        cmocka_unit_test(test_bad_input_fails_for_good),
        cmocka_unit_test(test_nesting_is_capped),
        cmocka_unit_test(test_claims_allocate_nothing_until_whole),
        cmocka_unit_test(test_allocation_failure_can_be_retried),
        cmocka_unit_test(test_writer_output_reads_back),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
