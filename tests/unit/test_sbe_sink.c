/* test_sbe_sink.c - the SBE reply sink (lib/sbe/sink.c, reply.c) and the
 * client's SBE reply trees and printer (lib/client/sbe_tree.c, format.c).
 *
 * The main check drives the SBE sink and the RESP3 writer with the same
 * calls (fixed cases and seeded random trees), reads both outputs back as
 * trees and prints them the redis-cli way: the texts must be equal. Other
 * tests pin which message each reply shape becomes and the limits.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "goblin.h"
#include "goblin/client.h"
#include "goblin/resp.h"

#include "client/client.h"
#include "sbe/goblin_sbe_gen.h"
#include "sbe/sbe.h"

#define S(lit) ((struct goblin_slice){(lit), sizeof(lit) - 1})

struct pair {
    struct goblin_buf sbe_out, resp_out;
    struct goblin__sbe_sink sbe;
    struct goblin_resp_writer resp;
};

static struct pair *pair_new(size_t max_reply)
{
    struct pair *p = calloc(1, sizeof(*p));

    assert_non_null(p);
    goblin__sbe_sink_init(&p->sbe, &p->sbe_out, max_reply);
    goblin_resp_writer_init(&p->resp, &p->resp_out, 3);
    return p;
}

static void pair_free(struct pair *p)
{
    goblin__sbe_sink_free(&p->sbe);
    goblin_buf_free(&p->sbe_out);
    goblin_buf_free(&p->resp_out);
    free(p);
}

/* Prints every SBE frame in buf (redis-cli terminal form) into text, and
 * returns the template of the last one. */
static unsigned print_sbe(const struct goblin_buf *buf, struct goblin_buf *text)
{
    struct goblin__sbe_tree t = {.double_text = true};
    const struct goblin_resp_value *v;
    size_t pos = 0;
    unsigned tid = 0;

    while (pos < buf->len) {
        const uint8_t *f = (const uint8_t *)buf->data + pos;
        uint32_t len = goblin_sbe_rd_u32(f);

        assert_true(4 + (size_t)len <= buf->len - pos);
        assert_int_equal(goblin__sbe_tree_build(&t, f + 4, len, &v), 0);
        assert_int_equal(goblin_client_format_reply(v, 0, text), 0);
        tid = goblin_sbe_rd_u16(f + 6);
        pos += 4 + len;
    }
    goblin__sbe_tree_free(&t);
    return tid;
}

static void print_resp(const struct goblin_buf *buf, struct goblin_buf *text)
{
    goblin_resp_reader *r;
    const struct goblin_resp_value *v;
    size_t pos = 0;
    int64_t n;

    assert_int_equal(goblin_resp_reader_open(NULL, 0, &r), 0);
    while (pos < buf->len) {
        n = goblin_resp_reply_parse(r, buf->data + pos, buf->len - pos, &v);
        assert_true(n > 0);
        assert_int_equal(goblin_client_format_reply(v, 0, text), 0);
        pos += (size_t)n;
    }
    goblin_resp_reader_close(r);
}

/* Both outputs print alike; returns the template of the last SBE frame. */
static unsigned same_text(struct pair *p)
{
    struct goblin_buf a = {0}, b = {0};
    unsigned tid = print_sbe(&p->sbe_out, &a);

    print_resp(&p->resp_out, &b);
    if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0)
        fail_msg("SBE printed:\n%.*s\nRESP3 printed:\n%.*s", (int)a.len,
                 a.data, (int)b.len, b.data);
    assert_true(goblin__sbe_sink_idle(&p->sbe));
    goblin_buf_free(&a);
    goblin_buf_free(&b);
    p->sbe_out.len = 0;
    p->resp_out.len = 0;
    return tid;
}

/* Calls the same op on both sinks. */
#define BOTH(p, op, ...)                                                      \
    do {                                                                      \
        struct goblin_sink *s1_ = &(p)->sbe.sink, *s2_ = &(p)->resp.sink;     \
        s1_->ops->op(s1_, ##__VA_ARGS__);                                     \
        s2_->ops->op(s2_, ##__VA_ARGS__);                                     \
    } while (0)

static void test_scalars_print_alike(void **state)
{
    struct pair *p = pair_new(0);

    (void)state;
    BOTH(p, status, "OK", 2);
    assert_int_equal(same_text(p), GOBLIN_SBE_STATUS_REPLY);
    BOTH(p, error, "ERR syntax error", 16);
    assert_int_equal(same_text(p), GOBLIN_SBE_ERROR_REPLY);
    BOTH(p, error, "NOAUTH", 6);
    assert_int_equal(same_text(p), GOBLIN_SBE_ERROR_REPLY);
    BOTH(p, integer, -42);
    assert_int_equal(same_text(p), GOBLIN_SBE_INT_REPLY);
    BOTH(p, dbl, 1.5);
    assert_int_equal(same_text(p), GOBLIN_SBE_DOUBLE_REPLY);
    BOTH(p, dbl, -INFINITY);
    assert_int_equal(same_text(p), GOBLIN_SBE_DOUBLE_REPLY);
    BOTH(p, bulk, "a\0\"b\n", 5);
    assert_int_equal(same_text(p), GOBLIN_SBE_BULK_REPLY);
    BOTH(p, null);
    assert_int_equal(same_text(p), GOBLIN_SBE_NIL_REPLY);
    BOTH(p, null_array);
    assert_int_equal(same_text(p), GOBLIN_SBE_NIL_REPLY);
    BOTH(p, boolean, 1);
    assert_int_equal(same_text(p), GOBLIN_SBE_VALUE_REPLY);
    BOTH(p, verbatim, "txt", "# Server\r\nx:1\r\n", 15);
    assert_int_equal(same_text(p), GOBLIN_SBE_VALUE_REPLY);
    pair_free(p);
}

/* One scalar reply through the sink, once into an out buffer that has
 * room already (the hand-written frame) and once into an empty one (the
 * generated encoder): the bytes must be the same. */
static void scalar_both_ways(void (*emit)(struct goblin_sink *, int),
                             int arg)
{
    struct goblin_buf roomy = {0}, bare = {0};
    struct goblin__sbe_sink a, b;

    assert_int_equal(goblin_buf_reserve(&roomy, 512), 0);
    goblin__sbe_sink_init(&a, &roomy, 0);
    goblin__sbe_sink_init(&b, &bare, 0);
    emit(&a.sink, arg);
    emit(&b.sink, arg);
    assert_int_equal(roomy.len, bare.len);
    assert_memory_equal(roomy.data, bare.data, bare.len);
    goblin__sbe_sink_free(&a);
    goblin__sbe_sink_free(&b);
    goblin_buf_free(&roomy);
    goblin_buf_free(&bare);
}

static void emit_scalar(struct goblin_sink *k, int which)
{
    static const char big[600] = {'x'};

    switch (which) {
    case 0: k->ops->status(k, "PONG", 4); break;
    case 1: k->ops->status(k, "", 0); break;
    case 2: k->ops->bulk(k, "0123456789abcdef", 16); break;
    case 3: k->ops->bulk(k, "", 0); break;
    case 4: k->ops->integer(k, -1234567890123LL); break;
    case 5: k->ops->dbl(k, 2.5); break;
    case 6: k->ops->dbl(k, -INFINITY); break;
    case 7: k->ops->null(k); break;
    case 8: k->ops->null_array(k); break;
    case 9: k->ops->bulk(k, big, sizeof(big)); break; /* past the room */
    default: k->ops->error(k, "ERR no", 6); break;
    }
}

static void test_direct_scalar_frames_match_the_encoder(void **state)
{
    (void)state;
    for (int i = 0; i <= 10; i++)
        scalar_both_ways(emit_scalar, i);
}

/* Decodes frame f[0..len) (no length prefix) with the client's inline
 * scalar reader and with the general tree builder, into two trees. */
static void scalar_reads_alike(const uint8_t *f, size_t len)
{
    struct goblin__sbe_tree a = {0}, b = {0};
    const struct goblin_resp_value *va, *vb;

    /* The inline reader fills a root an earlier reply made. */
    assert_int_equal(goblin__sbe_tree_scalar(&a, f, len, &va), 0);
    assert_int_equal(goblin__sbe_tree_build(&a, f, len, &va), 0);
    assert_int_equal(goblin__sbe_tree_build(&b, f, len, &vb), 0);
    if (goblin__sbe_tree_scalar(&a, f, len, &va)) {
        assert_int_equal(va->type, vb->type);
        assert_int_equal(va->integer, vb->integer);
        assert_int_equal(va->str.len, vb->str.len);
        assert_memory_equal(va->str.ptr, vb->str.ptr, vb->str.len);
        assert_int_equal(va->n, 0);
        assert_null(va->items);
        assert_null(va->attribute);
    } else {
        /* only doubles and errors are the general reader's */
        assert_true(vb->type == GOBLIN_RESP_DOUBLE ||
                    vb->type == GOBLIN_RESP_ERROR);
    }
    goblin__sbe_tree_free(&a);
    goblin__sbe_tree_free(&b);
}

/* The client reads a scalar reply inline (client.h) as the tree builder
 * does, and leaves a frame that does not fit its layout to the builder,
 * which refuses it. */
static void test_inline_scalar_reads_match_the_tree(void **state)
{
    struct goblin_buf out = {0};
    struct goblin__sbe_sink k;
    struct goblin__sbe_tree t = {0};
    const struct goblin_resp_value *v;
    uint8_t bad[64];
    size_t pos = 0;

    (void)state;
    goblin__sbe_sink_init(&k, &out, 0);
    for (int i = 0; i <= 10; i++)
        emit_scalar(&k.sink, i);
    while (pos < out.len) {
        const uint8_t *f = (const uint8_t *)out.data + pos;
        uint32_t len = goblin_sbe_rd_u32(f);

        scalar_reads_alike(f + 4, len);
        pos += 4 + len;
    }
    /* A bulk reply whose data length runs past the frame, a nil reply
     * with a stray byte, an int reply cut short, another schema. */
    assert_int_equal(goblin__sbe_tree_build(&t, out.data + 4,
                                            goblin_sbe_rd_u32((const uint8_t *)out.data),
                                            &v), 0);
    memcpy(bad, out.data + 4, 12);
    bad[8] = 200; /* status "PONG" says 200 bytes */
    assert_int_equal(goblin__sbe_tree_scalar(&t, bad, 16, &v), 0);
    assert_true(goblin__sbe_tree_build(&t, bad, 16, &v) < 0);
    goblin_sbe_wr_u16(bad, 0);
    goblin_sbe_wr_u16(bad + 2, GOBLIN_SBE_NIL_REPLY);
    assert_int_equal(goblin__sbe_tree_scalar(&t, bad, 9, &v), 0);
    goblin_sbe_wr_u16(bad, 8);
    goblin_sbe_wr_u16(bad + 2, GOBLIN_SBE_INT_REPLY);
    assert_int_equal(goblin__sbe_tree_scalar(&t, bad, 12, &v), 0);
    assert_true(goblin__sbe_tree_build(&t, bad, 12, &v) < 0);
    goblin_sbe_wr_u16(bad + 4, GOBLIN_SBE_SCHEMA_ID + 1);
    assert_int_equal(goblin__sbe_tree_scalar(&t, bad, 16, &v), 0);
    goblin__sbe_tree_free(&t);
    goblin__sbe_sink_free(&k);
    goblin_buf_free(&out);
}

static void test_aggregate_shapes_pick_their_message(void **state)
{
    struct pair *p = pair_new(0);

    (void)state;
    BOTH(p, array, 2);
    BOTH(p, bulk, "a", 1);
    BOTH(p, bulk, "", 0);
    assert_int_equal(same_text(p), GOBLIN_SBE_ARRAY_REPLY);

    BOTH(p, array, 0);
    assert_int_equal(same_text(p), GOBLIN_SBE_ARRAY_REPLY);

    BOTH(p, array, 3);
    BOTH(p, bulk, "a", 1);
    BOTH(p, null);
    BOTH(p, bulk, "c", 1);
    assert_int_equal(same_text(p), GOBLIN_SBE_NULLABLE_ARRAY_REPLY);

    BOTH(p, array, 2);
    BOTH(p, dbl, 2.5);
    BOTH(p, null);
    assert_int_equal(same_text(p), GOBLIN_SBE_NULLABLE_DOUBLE_ARRAY_REPLY);

    BOTH(p, array, 2);
    BOTH(p, array, 2);
    BOTH(p, bulk, "m1", 2);
    BOTH(p, dbl, 1.0);
    BOTH(p, array, 2);
    BOTH(p, bulk, "m2", 2);
    BOTH(p, dbl, 0.1);
    assert_int_equal(same_text(p), GOBLIN_SBE_SCORED_ARRAY_REPLY);

    BOTH(p, map, 2);
    BOTH(p, bulk, "f1", 2);
    BOTH(p, bulk, "v1", 2);
    BOTH(p, bulk, "f2", 2);
    BOTH(p, bulk, "v2", 2);
    assert_int_equal(same_text(p), GOBLIN_SBE_MAP_REPLY);

    BOTH(p, map, 0);
    assert_int_equal(same_text(p), GOBLIN_SBE_MAP_REPLY);

    BOTH(p, map, 1); /* HELLO-like: mixed values */
    BOTH(p, bulk, "proto", 5);
    BOTH(p, integer, 3);
    assert_int_equal(same_text(p), GOBLIN_SBE_VALUE_REPLY);

    BOTH(p, set, 2);
    BOTH(p, bulk, "x", 1);
    BOTH(p, bulk, "y", 1);
    assert_int_equal(same_text(p), GOBLIN_SBE_VALUE_REPLY);
    pair_free(p);
}

static void test_deferred_headers_nest(void **state)
{
    struct pair *p = pair_new(0);
    struct goblin_sink *s[2] = {&p->sbe.sink, &p->resp.sink};
    int i;

    (void)state;
    for (i = 0; i < 2; i++) {
        size_t outer = s[i]->ops->defer(s[i]), inner;

        s[i]->ops->bulk(s[i], "k", 1);
        inner = s[i]->ops->defer(s[i]);
        s[i]->ops->integer(s[i], 1);
        s[i]->ops->integer(s[i], 2);
        s[i]->ops->set_deferred(s[i], inner, GOBLIN_AGG_ARRAY, 2);
        s[i]->ops->set_deferred(s[i], outer, GOBLIN_AGG_MAP, 1);
        s[i]->ops->status(s[i], "OK", 2);
    }
    assert_int_equal(same_text(p), GOBLIN_SBE_STATUS_REPLY);
    pair_free(p);
}

/* ---- random trees ---- */

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void gen(struct pair *p, uint64_t *rng, int depth);

static void gen_children(struct pair *p, uint64_t *rng, int depth, size_t n)
{
    while (n-- > 0)
        gen(p, rng, depth + 1);
}

static void gen_aggregate(struct pair *p, uint64_t *rng, int depth,
                          unsigned kind)
{
    size_t n = rnd(rng) % 4, t1, t2;

    switch (kind) {
    case 0: BOTH(p, array, n); gen_children(p, rng, depth, n); return;
    case 1: BOTH(p, map, n); gen_children(p, rng, depth, 2 * n); return;
    case 2: BOTH(p, set, n); gen_children(p, rng, depth, n); return;
    case 3: BOTH(p, push, n); gen_children(p, rng, depth, n); return;
    default:
        t1 = p->sbe.sink.ops->defer(&p->sbe.sink);
        t2 = p->resp.sink.ops->defer(&p->resp.sink);
        gen_children(p, rng, depth, 2 * n);
        p->sbe.sink.ops->set_deferred(&p->sbe.sink, t1, GOBLIN_AGG_MAP, n);
        p->resp.sink.ops->set_deferred(&p->resp.sink, t2, GOBLIN_AGG_MAP, n);
    }
}

static void gen(struct pair *p, uint64_t *rng, int depth)
{
    static const char *const words[] = {"", "a", "hello world", "x\"y",
                                        "\x01\xff", "12", "m3"};
    uint64_t r = rnd(rng);
    const char *w = words[(r >> 8) % 7];
    double d = (double)(int64_t)(r >> 20) / 1024.0;

    switch (depth < 4 ? r % 14 : r % 9) {
    case 0: BOTH(p, status, "OK", 2); break;
    case 1: BOTH(p, error, "ERR bad thing", 13); break;
    case 2: BOTH(p, integer, (int64_t)(r >> 3) - (1ll << 59)); break;
    case 3: BOTH(p, dbl, d); break;
    case 4: BOTH(p, bulk, w, strlen(w)); break;
    case 5: BOTH(p, null); break;
    case 6: BOTH(p, boolean, (int)(r >> 7) & 1); break;
    case 7: BOTH(p, verbatim, "txt", w, strlen(w)); break;
    case 8: BOTH(p, bulk, w, strlen(w)); break;
    default: gen_aggregate(p, rng, depth, (unsigned)(r >> 40) % 5); break;
    }
}

static void test_random_trees_print_alike(void **state)
{
    struct pair *p = pair_new(0);
    uint64_t rng = 2024;
    int i;

    (void)state;
    for (i = 0; i < 3000; i++) {
        gen(p, &rng, 0);
        same_text(p);
    }
    pair_free(p);
}

/* ---- limits ---- */

/* The template of the last frame written, which is then dropped. */
static unsigned take_template(struct pair *p)
{
    struct goblin_buf t = {0};
    unsigned tid = print_sbe(&p->sbe_out, &t);

    goblin_buf_free(&t);
    p->sbe_out.len = 0;
    return tid;
}

static void expect_error(struct pair *p, const char *text)
{
    struct goblin_buf t = {0};

    assert_int_equal(print_sbe(&p->sbe_out, &t), GOBLIN_SBE_ERROR_REPLY);
    assert_int_equal(t.len, strlen(text));
    assert_memory_equal(t.data, text, t.len);
    goblin_buf_free(&t);
    p->sbe_out.len = 0;
    p->resp_out.len = 0;
    assert_true(goblin__sbe_sink_idle(&p->sbe));
}

static void test_arrays_past_65535_become_errors(void **state)
{
    struct pair *p = pair_new(0);
    struct goblin_sink *s = &p->sbe.sink;
    size_t i;

    (void)state;
    s->ops->array(s, 65535);
    for (i = 0; i < 65535; i++)
        s->ops->bulk(s, "v", 1);
    assert_int_equal(take_template(p), GOBLIN_SBE_ARRAY_REPLY);

    s->ops->array(s, 65536);
    for (i = 0; i < 65536; i++)
        s->ops->bulk(s, "v", 1);
    expect_error(p, "(error) ERR result too large for one SBE array reply\n");

    s->ops->map(s, 70000);
    for (i = 0; i < 140000; i++)
        s->ops->bulk(s, "v", 1);
    expect_error(p, "(error) ERR result too large for one SBE map reply\n");

    /* A nested reply of more than 65535 nodes. */
    s->ops->array(s, 40000);
    for (i = 0; i < 40000; i++) {
        s->ops->array(s, 1);
        s->ops->integer(s, 1);
    }
    expect_error(p, "(error) ERR result too large for one SBE array reply\n");
    /* The sink goes on. */
    s->ops->integer(s, 7);
    assert_int_equal(take_template(p), GOBLIN_SBE_INT_REPLY);
    pair_free(p);
}

static void test_replies_past_the_frame_limit_become_errors(void **state)
{
    struct pair *p = pair_new(4096);
    struct goblin_sink *s = &p->sbe.sink;
    static char big[5000];

    (void)state;
    s->ops->bulk(s, big, sizeof(big));
    expect_error(p, "(error) ERR result too large for one SBE bulk reply\n");
    s->ops->array(s, 2);
    s->ops->bulk(s, big, 3000);
    s->ops->bulk(s, big, 3000);
    expect_error(p, "(error) ERR result too large for one SBE array reply\n");
    s->ops->bulk(s, big, 4000);
    assert_int_equal(take_template(p), GOBLIN_SBE_BULK_REPLY);
    pair_free(p);
}

static void test_typed_replies(void **state)
{
    struct pair *p = pair_new(0);
    struct goblin_slice v[3] = {S("a"), {NULL, 0}, S("c")};
    struct goblin__scored sc[2] = {{S("m"), 1.5}, {S("n"), -0.25}};
    double d[2] = {3, 0};
    bool present[2] = {true, false};
    struct goblin_buf t = {0};
    static const char want[] =
        "1) \"a\"\n2) \"c\"\n"
        "1) \"a\"\n2) (nil)\n3) \"c\"\n"
        "1) 1) \"m\"\n   2) (double) 1.5\n2) 1) \"n\"\n   2) (double) -0.25\n"
        "1) (double) 3\n2) (nil)\n"
        "1# \"a\" => \"c\"\n"
        "1) \"17\"\n2) 1) \"a\"\n"
        "1) \"0\"\n2) 1) \"m\"\n   2) \"1.5\"\n   3) \"n\"\n   4) \"-0.25\"\n"
        "(error) WRONGTYPE Operation against a key holding the wrong kind "
        "of value\n";

    (void)state;
    goblin__sbe_reply_strings(&p->sbe, (struct goblin_slice[]){v[0], v[2]},
                              2, false);
    goblin__sbe_reply_strings(&p->sbe, v, 3, true);
    goblin__sbe_reply_scored(&p->sbe, sc, 2);
    goblin__sbe_reply_doubles(&p->sbe, d, present, 2);
    goblin__sbe_reply_map(&p->sbe, (struct goblin_slice[]){v[0], v[2]}, 1);
    goblin__sbe_reply_scan(&p->sbe, 17, v, 1);
    goblin__sbe_reply_scored_scan(&p->sbe, 0, sc, 2);
    goblin__sbe_reply_code(&p->sbe, GOBLIN_EWRONGTYPE);
    print_sbe(&p->sbe_out, &t);
    assert_int_equal(t.len, sizeof(want) - 1);
    assert_memory_equal(t.data, want, t.len);
    goblin_buf_free(&t);
    pair_free(p);
}

/* A peer's ValueReply whose counts lie is refused, not followed. */
static void test_lying_value_replies_are_refused(void **state)
{
    uint8_t buf[256];
    struct goblin_sbe_writer w;
    struct goblin__sbe_tree t = {.double_text = true};
    const struct goblin_resp_value *v;
    int n;

    (void)state;
    /* An array claiming 3 children with 1 node after it. */
    goblin_sbe_writer_init(&w, buf, sizeof(buf), false);
    goblin_sbe_value_reply_begin(&w);
    goblin_sbe_value_reply_nodes_begin(&w);
    goblin_sbe_value_reply_nodes_add(&w, GOBLIN_SBE_VALUE_TYPE_ARRAY, 0, 3, 0,
                                     S(""));
    goblin_sbe_value_reply_nodes_add(&w, GOBLIN_SBE_VALUE_TYPE_INTEGER, 1, 0,
                                     0, S(""));
    n = goblin_sbe_value_reply_end(&w);
    assert_true(n > 0);
    assert_int_equal(goblin__sbe_tree_build(&t, buf, (size_t)n, &v),
                     GOBLIN_EPROTO);
    /* Two roots. */
    goblin_sbe_writer_init(&w, buf, sizeof(buf), false);
    goblin_sbe_value_reply_begin(&w);
    goblin_sbe_value_reply_nodes_begin(&w);
    goblin_sbe_value_reply_nodes_add(&w, GOBLIN_SBE_VALUE_TYPE_INTEGER, 1, 0,
                                     0, S(""));
    goblin_sbe_value_reply_nodes_add(&w, GOBLIN_SBE_VALUE_TYPE_INTEGER, 1, 0,
                                     0, S(""));
    n = goblin_sbe_value_reply_end(&w);
    assert_int_equal(goblin__sbe_tree_build(&t, buf, (size_t)n, &v),
                     GOBLIN_EPROTO);
    /* A request is not a reply. */
    goblin_sbe_writer_init(&w, buf, sizeof(buf), false);
    n = goblin_sbe_ping_encode(&w);
    assert_int_equal(goblin__sbe_tree_build(&t, buf, (size_t)n, &v),
                     GOBLIN_EPROTO);
    goblin__sbe_tree_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalars_print_alike),
        cmocka_unit_test(test_direct_scalar_frames_match_the_encoder),
        cmocka_unit_test(test_inline_scalar_reads_match_the_tree),
        cmocka_unit_test(test_aggregate_shapes_pick_their_message),
        cmocka_unit_test(test_deferred_headers_nest),
        cmocka_unit_test(test_random_trees_print_alike),
        cmocka_unit_test(test_arrays_past_65535_become_errors),
        cmocka_unit_test(test_replies_past_the_frame_limit_become_errors),
        cmocka_unit_test(test_typed_replies),
        cmocka_unit_test(test_lying_value_replies_are_refused),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
