/* writer.c - the RESP2/RESP3 reply writer: a goblin_sink that appends to a
 * goblin_buf.
 *
 * This is the hot path of every reply, so each op reserves its whole
 * encoding once and writes it by hand: no snprintf, numbers through the
 * digit-pair writer of numtext. The protocol is chosen by swapping the ops
 * table (one for RESP2, one for RESP3), so no op tests the version.
 *
 * After an allocation failure the buffer's failed flag is set and every
 * later op writes nothing, so a reply is never half-written past the
 * failure point in a way that could be mistaken for a whole one; the owner
 * closes the connection.
 *
 * Deferred headers take no bytes when opened: set_deferred formats the
 * header and moves the items written since defer() up to make room. That
 * is one memmove of the aggregate's bytes, like Redis's setDeferredReply
 * when its placeholder cannot be glued to a neighbour.
 */
#include <string.h>

#include "goblin/numtext.h"
#include "goblin/resp.h"
#include "util/numtext_internal.h"
#include "writer_put.h"

#define HEADER_MAX GOBLIN__RESP_HEADER_MAX

static inline struct goblin_resp_writer *W(struct goblin_sink *s)
{
    return (struct goblin_resp_writer *)s;
}

/* Room for n more bytes, or NULL when the buffer failed. */
static inline char *room(struct goblin_sink *s, size_t n)
{
    return goblin__resp_room(W(s)->out, n);
}

static inline void advance(struct goblin_sink *s, size_t n)
{
    W(s)->out->len += n;
}

static void put_const(struct goblin_sink *s, const char *lit, size_t n)
{
    char *p = room(s, n);

    if (p != NULL) {
        memcpy(p, lit, n);
        advance(s, n);
    }
}

static void put_header_op(struct goblin_sink *s, char prefix, uint64_t n)
{
    char *p = room(s, HEADER_MAX);

    if (p != NULL)
        advance(s, goblin__resp_put_header(p, prefix, n));
}

/* Does the word x hold a CR or LF byte? (The zero-byte test of
 * x ^ 0x0d.. and x ^ 0x0a..: exact for whether any byte matches.) */
static inline bool word_has_crlf(uint64_t x)
{
    const uint64_t ones = UINT64_C(0x0101010101010101);
    const uint64_t highs = UINT64_C(0x8080808080808080);
    uint64_t cr = x ^ (ones * '\r'), lf = x ^ (ones * '\n');

    return (((cr - ones) & ~cr) | ((lf - ones) & ~lf)) & highs;
}

/* Is there a CR or LF in t[0..len), len >= 4? A word at a time (the
 * last word overlapping the one before), as status lines are short and
 * almost never hold one. */
static inline bool has_crlf(const char *t, size_t len)
{
    uint64_t w;
    uint32_t h;

    if (len >= 8) {
        for (size_t i = 0; i + 8 < len; i += 8) {
            memcpy(&w, t + i, 8);
            if (word_has_crlf(w))
                return true;
        }
        memcpy(&w, t + len - 8, 8);
        return word_has_crlf(w);
    }
    memcpy(&h, t, 4);
    w = h;
    memcpy(&h, t + len - 4, 4);
    return word_has_crlf(w | (uint64_t)h << 32);
}

/* A line of text: CR and LF inside become spaces so the reply stays one
 * line (Redis does the same to error texts). */
static inline __attribute__((always_inline)) void put_line(
    struct goblin_sink *s, char prefix, const char *t, size_t len)
{
    char *p = room(s, len + 3);

    if (p == NULL)
        return;
    p[0] = prefix;
    /* "OK" and the like: the loop below is cheapest. */
    if (len >= 4 && __builtin_expect(!has_crlf(t, len), 1))
        goblin__copy_short(p + 1, t, len);
    else
        for (size_t i = 0; i < len; i++)
            p[i + 1] = t[i] == '\r' || t[i] == '\n' ? ' ' : t[i];
    p[len + 1] = '\r';
    p[len + 2] = '\n';
    advance(s, len + 3);
}

static void op_status(struct goblin_sink *s, const char *t, size_t len)
{
    put_line(s, '+', t, len);
}

static void op_error(struct goblin_sink *s, const char *t, size_t len)
{
    put_line(s, '-', t, len);
}

/* RESP3 big number "(digits"; RESP2 has none and sends a bulk string. */
static void op_bignum3(struct goblin_sink *s, const char *t, size_t len)
{
    put_line(s, '(', t, len);
}

static void op_integer(struct goblin_sink *s, int64_t v)
{
    char *p = room(s, HEADER_MAX);
    size_t k;

    if (p == NULL)
        return;
    p[0] = ':';
    k = 1 + goblin_int64_format(p + 1, v);
    p[k] = '\r';
    p[k + 1] = '\n';
    advance(s, k + 2);
}

static void op_bulk(struct goblin_sink *s, const void *data, size_t len)
{
    char *p;

    if (len > SIZE_MAX - HEADER_MAX - 2) {
        W(s)->out->failed = true;
        return;
    }
    p = room(s, len + HEADER_MAX + 2);
    if (p != NULL)
        advance(s, goblin__resp_put_bulk(p, data, len));
}

static void op_bulk_int64(struct goblin_sink *s, int64_t v)
{
    char *p = room(s, HEADER_MAX + GOBLIN_INT64_TEXT_MAX);
    char digits[GOBLIN_INT64_TEXT_MAX];

    if (p != NULL)
        advance(s, goblin__resp_put_bulk(p, digits, goblin_int64_format(digits, v)));
}

#define DBL_MAX_BYTES GOBLIN__RESP_DOUBLE_MAX

static void op_dbl2(struct goblin_sink *s, double v)
{
    char *p = room(s, DBL_MAX_BYTES);

    if (p != NULL)
        advance(s, goblin__resp_put_double(p, 2, v));
}

static void op_dbl3(struct goblin_sink *s, double v)
{
    char *p = room(s, DBL_MAX_BYTES);

    if (p != NULL)
        advance(s, goblin__resp_put_double(p, 3, v));
}

static void op_bulk_dbl2(struct goblin_sink *s, const void *data, size_t len,
                         double score)
{
    char *p;
    size_t k;

    if (len > SIZE_MAX - HEADER_MAX - 2 - DBL_MAX_BYTES) {
        W(s)->out->failed = true;
        return;
    }
    p = room(s, len + HEADER_MAX + 2 + DBL_MAX_BYTES);
    if (p == NULL)
        return;
    k = goblin__resp_put_bulk(p, data, len);
    advance(s, k + goblin__resp_put_double(p + k, 2, score));
}

static void op_bulk_dbl3(struct goblin_sink *s, const void *data, size_t len,
                         double score)
{
    char *p;
    size_t k;

    if (len > SIZE_MAX - HEADER_MAX - 2 - DBL_MAX_BYTES) {
        W(s)->out->failed = true;
        return;
    }
    p = room(s, len + HEADER_MAX + 2 + DBL_MAX_BYTES);
    if (p == NULL)
        return;
    k = goblin__resp_put_bulk(p, data, len);
    advance(s, k + goblin__resp_put_double(p + k, 3, score));
}

static void op_null2(struct goblin_sink *s)
{
    put_const(s, "$-1\r\n", 5);
}

static void op_null_array2(struct goblin_sink *s)
{
    put_const(s, "*-1\r\n", 5);
}

static void op_null3(struct goblin_sink *s)
{
    put_const(s, "_\r\n", 3);
}

static void op_array(struct goblin_sink *s, size_t n)
{
    put_header_op(s, '*', n);
}

static void op_map2(struct goblin_sink *s, size_t n)
{
    put_header_op(s, '*', (uint64_t)n * 2);
}

static void op_map3(struct goblin_sink *s, size_t n)
{
    put_header_op(s, '%', n);
}

static void op_set3(struct goblin_sink *s, size_t n)
{
    put_header_op(s, '~', n);
}

static void op_push3(struct goblin_sink *s, size_t n)
{
    put_header_op(s, '>', n);
}

static void op_boolean2(struct goblin_sink *s, int v)
{
    put_const(s, v ? ":1\r\n" : ":0\r\n", 4);
}

static void op_boolean3(struct goblin_sink *s, int v)
{
    put_const(s, v ? "#t\r\n" : "#f\r\n", 4);
}

static void op_verbatim2(struct goblin_sink *s, const char fmt[3],
                         const void *data, size_t len)
{
    (void)fmt;
    op_bulk(s, data, len);
}

/* "=len+4 CRLF fmt:bytes CRLF" (RESP3 verbatim string). */
static void op_verbatim3(struct goblin_sink *s, const char fmt[3],
                         const void *data, size_t len)
{
    char *p;
    size_t h;

    if (len > SIZE_MAX - HEADER_MAX - 6) {
        W(s)->out->failed = true;
        return;
    }
    p = room(s, len + HEADER_MAX + 6);
    if (p == NULL)
        return;
    h = goblin__resp_put_header(p, '=', (uint64_t)len + 4);
    memcpy(p + h, fmt, 3);
    p[h + 3] = ':';
    if (len > 0)
        memcpy(p + h + 4, data, len);
    p[h + 4 + len] = '\r';
    p[h + 5 + len] = '\n';
    advance(s, h + len + 6);
}

static void op_reserve(struct goblin_sink *s, size_t bytes)
{
    struct goblin_buf *b = W(s)->out;

    if (!b->failed)
        (void)goblin_buf_reserve(b, bytes);
}

static size_t op_defer(struct goblin_sink *s)
{
    return W(s)->out->len;
}

static char deferred_prefix(int proto, enum goblin_aggregate kind)
{
    if (proto == 2)
        return '*';
    switch (kind) {
    case GOBLIN_AGG_MAP:
        return '%';
    case GOBLIN_AGG_SET:
        return '~';
    case GOBLIN_AGG_PUSH:
        return '>';
    default:
        return '*';
    }
}

static void op_set_deferred(struct goblin_sink *s, size_t token,
                            enum goblin_aggregate kind, size_t n)
{
    struct goblin_buf *b = W(s)->out;
    int proto = W(s)->proto;
    char header[HEADER_MAX];
    size_t h;

    if (room(s, HEADER_MAX) == NULL || token > b->len)
        return;
    if (proto == 2 && kind == GOBLIN_AGG_MAP)
        n *= 2;
    h = goblin__resp_put_header(header, deferred_prefix(proto, kind), n);
    memmove(b->data + token + h, b->data + token, b->len - token);
    memcpy(b->data + token, header, h);
    b->len += h;
}

static const struct goblin_sink_ops resp2_ops = {
    .status = op_status,
    .error = op_error,
    .integer = op_integer,
    .dbl = op_dbl2,
    .bulk = op_bulk,
    .null = op_null2,
    .null_array = op_null_array2,
    .array = op_array,
    .map = op_map2,
    .set = op_array,
    .boolean = op_boolean2,
    .verbatim = op_verbatim2,
    .push = op_array,
    .bulk_int64 = op_bulk_int64,
    .bulk_dbl = op_bulk_dbl2,
    .reserve = op_reserve,
    .defer = op_defer,
    .set_deferred = op_set_deferred,
};

static const struct goblin_sink_ops resp3_ops = {
    .status = op_status,
    .error = op_error,
    .integer = op_integer,
    .dbl = op_dbl3,
    .bulk = op_bulk,
    .null = op_null3,
    .null_array = op_null3,
    .array = op_array,
    .map = op_map3,
    .set = op_set3,
    .boolean = op_boolean3,
    .verbatim = op_verbatim3,
    .push = op_push3,
    .bulk_int64 = op_bulk_int64,
    .bulk_dbl = op_bulk_dbl3,
    .reserve = op_reserve,
    .defer = op_defer,
    .set_deferred = op_set_deferred,
    .bignum = op_bignum3,
};

struct goblin_resp_writer *goblin__resp_writer_of(struct goblin_sink *s)
{
    return s->ops == &resp2_ops || s->ops == &resp3_ops ? W(s) : NULL;
}

void goblin_resp_writer_init(struct goblin_resp_writer *w,
                             struct goblin_buf *out, int proto)
{
    w->out = out;
    goblin_resp_writer_set_proto(w, proto);
}

void goblin_resp_writer_set_proto(struct goblin_resp_writer *w, int proto)
{
    w->proto = proto == 3 ? 3 : 2;
    w->sink.ops = w->proto == 3 ? &resp3_ops : &resp2_ops;
}

int goblin_resp_command_write(struct goblin_buf *b, size_t argc,
                              const struct goblin_slice *argv)
{
    size_t total = HEADER_MAX, h;
    char *p;

    for (size_t i = 0; i < argc; i++)
        if (__builtin_add_overflow(total, argv[i].len + HEADER_MAX + 2,
                                   &total))
            return GOBLIN_ENOMEM;
    if (b->cap - b->len < total && goblin_buf_reserve(b, total) != 0)
        return GOBLIN_ENOMEM;
    p = b->data + b->len;
    h = goblin__resp_put_command(p, argc, argv);
    b->len += h;
    return 0;
}
