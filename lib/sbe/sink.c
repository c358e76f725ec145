/* sink.c - the SBE reply sink (sbe.h): scalar replies are encoded at once;
 * an aggregate is recorded as a pre-order node list until its last item
 * arrives and is then encoded as the most specific reply message.
 *
 * Invariants:
 *  - nodes and bytes hold exactly the reply being built, and open the
 *    aggregates of it still waiting for items (innermost last); all three
 *    are empty between replies.
 *  - Once a reply has more nodes than one group may hold, or more string
 *    bytes than one frame, the sink stops recording (overflow) but keeps
 *    counting items, so it still knows where the reply ends; the reply is
 *    then an ErrorReply.
 *  - Every frame is sized exactly before it is encoded, so encoding into
 *    the reserved space cannot fail.
 */
#include <assert.h>
#include <string.h>

#include "sbe.h"
#include "sbe/goblin_sbe_gen.h"
#include "util/copy_short.h"

#define FRAME_HDR (4 + GOBLIN_SBE_HEADER_LENGTH)
#define VAR GOBLIN_SBE_VAR_HEADER_LENGTH
#define GRP GOBLIN_SBE_GROUP_HEADER_LENGTH
#define DEFERRED UINT64_MAX

#define T_NULL GOBLIN_SBE_VALUE_TYPE_NULL
#define T_INTEGER GOBLIN_SBE_VALUE_TYPE_INTEGER
#define T_BULK GOBLIN_SBE_VALUE_TYPE_BULK
#define T_STATUS GOBLIN_SBE_VALUE_TYPE_STATUS
#define T_ERROR GOBLIN_SBE_VALUE_TYPE_ERROR
#define T_ARRAY GOBLIN_SBE_VALUE_TYPE_ARRAY
#define T_MAP GOBLIN_SBE_VALUE_TYPE_MAP
#define T_DOUBLE GOBLIN_SBE_VALUE_TYPE_DOUBLE
#define T_BOOLEAN GOBLIN_SBE_VALUE_TYPE_BOOLEAN
#define T_SET GOBLIN_SBE_VALUE_TYPE_SET
#define T_VERBATIM GOBLIN_SBE_VALUE_TYPE_VERBATIM
#define T_PUSH GOBLIN_SBE_VALUE_TYPE_PUSH
#define T_NULL_ARRAY GOBLIN_SBE_VALUE_TYPE_NULL_ARRAY

static struct goblin__sbe_sink *of(struct goblin_sink *s)
{
    return (struct goblin__sbe_sink *)s;
}

static struct goblin__sbe_node *node(struct goblin__sbe_sink *k, size_t i)
{
    return (struct goblin__sbe_node *)k->nodes.data + i;
}

static struct goblin__sbe_open *open_at(struct goblin__sbe_sink *k,
                                        size_t i)
{
    return (struct goblin__sbe_open *)k->open.data + i;
}

static struct goblin_slice node_bytes(struct goblin__sbe_sink *k, size_t i)
{
    struct goblin_slice s = {"", node(k, i)->len};

    /* Empty strings only: the byte area may not exist (NULL + 0 is
     * undefined behaviour). */
    if (k->bytes.data != NULL)
        s.ptr = k->bytes.data + node(k, i)->off;
    return s;
}

static struct goblin_slice slice(const void *p, size_t n)
{
    struct goblin_slice s = {p, n};
    return s;
}

/* ---- frames ---- */

/* Reserves size bytes at the end of out and points w at them. */
static bool frame_begin(struct goblin__sbe_sink *k, size_t size,
                        struct goblin_sbe_writer *w)
{
    if (goblin_buf_reserve(k->out, size) != 0)
        return false;
    goblin_sbe_writer_init(w, k->out->data + k->out->len, size, true);
    return true;
}

static void frame_end(struct goblin__sbe_sink *k, int n)
{
    assert(n > 0);
    if (n > 0)
        k->out->len += (size_t)n;
}

static void put_error(struct goblin__sbe_sink *k, struct goblin_slice code,
                      struct goblin_slice msg)
{
    struct goblin_sbe_writer w;

    if (frame_begin(k, FRAME_HDR + 2 * VAR + code.len + msg.len, &w))
        frame_end(k, goblin_sbe_error_reply_encode(&w, code, msg));
}

void goblin__sbe_reply_error(struct goblin__sbe_sink *k, const char *text,
                             size_t len)
{
    const char *sp = memchr(text, ' ', len);
    size_t clen = sp != NULL ? (size_t)(sp - text) : len;

    if (sp == NULL)
        put_error(k, slice(text, len), slice("", 0));
    else
        put_error(k, slice(text, clen), slice(sp + 1, len - clen - 1));
}

void goblin__sbe_reply_code(struct goblin__sbe_sink *k, int code)
{
    char buf[GOBLIN_REPLY_ERROR_TEXT_MAX];
    size_t n = goblin_reply_error_text(code, buf, sizeof(buf));

    goblin__sbe_reply_error(k, buf, n < sizeof(buf) ? n : sizeof(buf));
}

static void too_large(struct goblin__sbe_sink *k, const char *what)
{
    static const char pre[] = "result too large for one SBE ";
    char msg[64];
    size_t n = strlen(what);

    memcpy(msg, pre, sizeof(pre) - 1);
    memcpy(msg + sizeof(pre) - 1, what, n);
    memcpy(msg + sizeof(pre) - 1 + n, " reply", 6);
    put_error(k, slice("ERR", 3), slice(msg, sizeof(pre) - 1 + n + 6));
}

/* True when a reply of size bytes and n group entries may be sent. */
static bool fits(struct goblin__sbe_sink *k, size_t size, size_t n,
                 const char *what)
{
    if (n <= GOBLIN_SBE_GROUP_MAX && size <= k->max_reply)
        return true;
    too_large(k, what);
    return false;
}

/* ---- scalars ---- */

static void put_string(struct goblin__sbe_sink *k, bool status,
                       const void *p, size_t n)
{
    struct goblin_sbe_writer w;
    struct goblin_slice v = slice(p, n);

    if (n > k->max_reply - FRAME_HDR - VAR) {
        too_large(k, status ? "status" : "bulk");
        return;
    }
    if (!frame_begin(k, FRAME_HDR + VAR + n, &w))
        return;
    frame_end(k, status ? goblin_sbe_status_reply_encode(&w, v)
                        : goblin_sbe_bulk_reply_encode(&w, v));
}

/* A scalar at the top level that has its own message: sends it and
 * returns true. */
static bool put_scalar(struct goblin__sbe_sink *k, uint8_t type, int64_t i,
                       double d, const void *p, size_t n)
{
    struct goblin_sbe_writer w;

    switch (type) {
    case T_NULL:
    case T_NULL_ARRAY:
        if (frame_begin(k, FRAME_HDR, &w))
            frame_end(k, goblin_sbe_nil_reply_encode(&w));
        return true;
    case T_INTEGER:
        if (frame_begin(k, FRAME_HDR + 8, &w))
            frame_end(k, goblin_sbe_int_reply_encode(&w, i));
        return true;
    case T_DOUBLE:
        if (frame_begin(k, FRAME_HDR + 8, &w))
            frame_end(k, goblin_sbe_double_reply_encode(&w, d));
        return true;
    case T_BULK:
    case T_STATUS:
        put_string(k, type == T_STATUS, p, n);
        return true;
    case T_ERROR:
        goblin__sbe_reply_error(k, p, n);
        return true;
    default:
        return false;
    }
}

/* The usual reply, one scalar of a few bytes, when out already has room
 * (as it does when it is a CQ reservation): the frame written by hand,
 * length, header, block and at most one var field, without a writer.
 * The layout is the schema's (docs/sbe.md); a test compares every scalar
 * reply with the generated encoder's. True when it was written. */
/* Inlined into each sink op, whose constant type folds the switches. */
static inline __attribute__((always_inline)) bool put_scalar_fast(
    struct goblin__sbe_sink *k, uint8_t type,
    int64_t i, double d, const void *p, size_t n)
{
    struct goblin_buf *out = k->out;
    uint16_t tpl, block = 0;
    size_t size = FRAME_HDR;
    uint8_t *b;

    switch (type) {
    case T_NULL:
    case T_NULL_ARRAY:
        tpl = GOBLIN_SBE_NIL_REPLY;
        break;
    case T_INTEGER:
        tpl = GOBLIN_SBE_INT_REPLY;
        block = GOBLIN_SBE_INT_REPLY_BLOCK_LENGTH;
        break;
    case T_DOUBLE:
        tpl = GOBLIN_SBE_DOUBLE_REPLY;
        block = GOBLIN_SBE_DOUBLE_REPLY_BLOCK_LENGTH;
        break;
    case T_BULK:
        tpl = GOBLIN_SBE_BULK_REPLY;
        size += VAR + n;
        break;
    case T_STATUS:
        tpl = GOBLIN_SBE_STATUS_REPLY;
        size += VAR + n;
        break;
    default:
        return false;
    }
    size += block;
    if (n > 4096 || out->cap - out->len < size)
        return false;
    b = (uint8_t *)out->data + out->len;
    goblin_sbe_wr_u32(b, (uint32_t)(size - 4));
    goblin_sbe_wr_u16(b + 4, block);
    goblin_sbe_wr_u16(b + 6, tpl);
    goblin_sbe_wr_u16(b + 8, GOBLIN_SBE_SCHEMA_ID);
    goblin_sbe_wr_u16(b + 10, GOBLIN_SBE_SCHEMA_VERSION);
    b += FRAME_HDR;
    if (type == T_INTEGER) {
        goblin_sbe_wr_u64(b, (uint64_t)i);
    } else if (type == T_DOUBLE) {
        goblin_sbe_wr_f64(b, d);
    } else if (type == T_BULK || type == T_STATUS) {
        goblin_sbe_wr_u32(b, (uint32_t)n);
        goblin__copy_short(b + VAR, p, n);
    }
    out->len += size;
    return true;
}

/* ---- recording ---- */

static void broken(struct goblin__sbe_sink *k)
{
    k->broken = true;
    k->out->failed = true;
}

static bool record(struct goblin__sbe_sink *k, uint8_t type, int64_t i,
                   double d, uint64_t children)
{
    struct goblin__sbe_node *n;

    if (k->overflow)
        return true;
    if (k->nnodes > GOBLIN_SBE_GROUP_MAX) {
        k->overflow = true;
        return true;
    }
    if (goblin_buf_reserve(&k->nodes, sizeof(*n)) != 0) {
        broken(k);
        return false;
    }
    n = node(k, k->nnodes++);
    k->nodes.len += sizeof(*n);
    n->type = type;
    n->children = children;
    n->i = i;
    n->d = d;
    n->off = k->bytes.len;
    n->len = 0;
    return true;
}

/* Appends bytes to the last node's string. */
static bool bytes_add(struct goblin__sbe_sink *k, const void *p, size_t n)
{
    if (n == 0 || k->overflow)
        return true;
    if (n > k->max_reply - k->bytes.len) {
        k->overflow = true;
        return true;
    }
    if (goblin_buf_append(&k->bytes, p, n) != 0) {
        broken(k);
        return false;
    }
    node(k, k->nnodes - 1)->len += n;
    return true;
}

static bool push_open(struct goblin__sbe_sink *k, size_t at, uint64_t left)
{
    struct goblin__sbe_open *o;

    if (goblin_buf_reserve(&k->open, sizeof(*o)) != 0) {
        broken(k);
        return false;
    }
    o = open_at(k, k->nopen++);
    k->open.len += sizeof(*o);
    o->node = at;
    o->left = left;
    return true;
}

static void emit(struct goblin__sbe_sink *k);

/* One item of the innermost open aggregate is complete. */
static void item_done(struct goblin__sbe_sink *k)
{
    struct goblin__sbe_open *o;

    while (k->nopen > 0) {
        o = open_at(k, k->nopen - 1);
        if (o->left == DEFERRED || --o->left > 0)
            return;
        k->nopen--;
        k->open.len -= sizeof(*o);
    }
    emit(k);
}

static inline __attribute__((always_inline)) void scalar(
    struct goblin__sbe_sink *k, uint8_t type, int64_t i, double d,
    const void *p, size_t n)
{
    if (k->broken)
        return;
    if (k->nopen == 0 && k->nnodes == 0 &&
        (put_scalar_fast(k, type, i, d, p, n) ||
         put_scalar(k, type, i, d, p, n)))
        return;
    if (!record(k, type, i, d, 0) || !bytes_add(k, p, n))
        return;
    item_done(k);
}

static void aggregate(struct goblin__sbe_sink *k, uint8_t type, size_t n,
                      uint64_t items)
{
    if (k->broken || !record(k, type, 0, 0, n))
        return;
    if (items == 0)
        item_done(k);
    else
        push_open(k, k->nnodes - 1, items);
}

/* ---- encoding a recorded aggregate ---- */

static bool children_all(struct goblin__sbe_sink *k, uint8_t a, uint8_t b,
                         uint8_t c)
{
    size_t i, items = node(k, 0)->children;

    if (node(k, 0)->type == T_MAP)
        items *= 2;
    if (items != k->nnodes - 1)
        return false;
    for (i = 1; i < k->nnodes; i++) {
        uint8_t t = node(k, i)->type;

        if (t != a && t != b && t != c)
            return false;
    }
    return true;
}

/* An array of [bulk, double] pairs (RESP3 WITHSCORES). */
static bool scored_pairs(struct goblin__sbe_sink *k)
{
    size_t i, n = node(k, 0)->children;

    if (n == 0 || k->nnodes != 1 + 3 * n)
        return false;
    for (i = 0; i < n; i++) {
        if (node(k, 1 + 3 * i)->type != T_ARRAY ||
            node(k, 1 + 3 * i)->children != 2 ||
            node(k, 2 + 3 * i)->type != T_BULK ||
            node(k, 3 + 3 * i)->type != T_DOUBLE)
            return false;
    }
    return true;
}

static void emit_strings(struct goblin__sbe_sink *k, bool nullable)
{
    size_t i, n = k->nnodes - 1, size = FRAME_HDR + GRP;
    struct goblin_sbe_writer w;

    for (i = 1; i <= n; i++)
        size += VAR + node(k, i)->len + (nullable ? 1 : 0);
    if (!fits(k, size, n, "array") || !frame_begin(k, size, &w))
        return;
    if (!nullable) {
        goblin_sbe_array_reply_begin(&w);
        goblin_sbe_array_reply_items_begin(&w);
        for (i = 1; i <= n; i++)
            goblin_sbe_array_reply_items_add(&w, node_bytes(k, i));
        frame_end(k, goblin_sbe_array_reply_end(&w));
        return;
    }
    goblin_sbe_nullable_array_reply_begin(&w);
    goblin_sbe_nullable_array_reply_items_begin(&w);
    for (i = 1; i <= n; i++)
        goblin_sbe_nullable_array_reply_items_add(
            &w, node(k, i)->type == T_BULK, node_bytes(k, i));
    frame_end(k, goblin_sbe_nullable_array_reply_end(&w));
}

static void emit_doubles(struct goblin__sbe_sink *k)
{
    size_t i, n = k->nnodes - 1, size = FRAME_HDR + GRP + n * 9;
    struct goblin_sbe_writer w;

    if (!fits(k, size, n, "array") || !frame_begin(k, size, &w))
        return;
    goblin_sbe_nullable_double_array_reply_begin(&w);
    goblin_sbe_nullable_double_array_reply_items_begin(&w);
    for (i = 1; i <= n; i++)
        goblin_sbe_nullable_double_array_reply_items_add(
            &w, node(k, i)->type == T_DOUBLE, node(k, i)->d);
    frame_end(k, goblin_sbe_nullable_double_array_reply_end(&w));
}

static void emit_scored(struct goblin__sbe_sink *k)
{
    size_t i, n = node(k, 0)->children, size = FRAME_HDR + GRP;
    struct goblin_sbe_writer w;

    for (i = 0; i < n; i++)
        size += 8 + VAR + node(k, 2 + 3 * i)->len;
    if (!fits(k, size, n, "array") || !frame_begin(k, size, &w))
        return;
    goblin_sbe_scored_array_reply_begin(&w);
    goblin_sbe_scored_array_reply_items_begin(&w);
    for (i = 0; i < n; i++)
        goblin_sbe_scored_array_reply_items_add(&w, node(k, 3 + 3 * i)->d,
                                                node_bytes(k, 2 + 3 * i));
    frame_end(k, goblin_sbe_scored_array_reply_end(&w));
}

static void emit_map(struct goblin__sbe_sink *k)
{
    size_t i, n = node(k, 0)->children, size = FRAME_HDR + GRP;
    struct goblin_sbe_writer w;

    for (i = 1; i < k->nnodes; i++)
        size += VAR + node(k, i)->len;
    if (!fits(k, size, n, "map") || !frame_begin(k, size, &w))
        return;
    goblin_sbe_map_reply_begin(&w);
    goblin_sbe_map_reply_entries_begin(&w);
    for (i = 0; i < n; i++)
        goblin_sbe_map_reply_entries_add(&w, node_bytes(k, 1 + 2 * i),
                                         node_bytes(k, 2 + 2 * i));
    frame_end(k, goblin_sbe_map_reply_end(&w));
}

static void emit_value(struct goblin__sbe_sink *k)
{
    size_t i, size = FRAME_HDR + GRP;
    struct goblin_sbe_writer w;
    const struct goblin__sbe_node *n;

    for (i = 0; i < k->nnodes; i++)
        size += GOBLIN_SBE_VALUE_REPLY_NODES_BLOCK_LENGTH + VAR +
                node(k, i)->len;
    if (!fits(k, size, k->nnodes, "value") || !frame_begin(k, size, &w))
        return;
    goblin_sbe_value_reply_begin(&w);
    goblin_sbe_value_reply_nodes_begin(&w);
    for (i = 0; i < k->nnodes; i++) {
        n = node(k, i);
        goblin_sbe_value_reply_nodes_add(&w, n->type, n->i,
                                         (uint32_t)n->children, n->d,
                                         node_bytes(k, i));
    }
    frame_end(k, goblin_sbe_value_reply_end(&w));
}

static void classify(struct goblin__sbe_sink *k)
{
    uint8_t root = node(k, 0)->type;

    if (root == T_ARRAY && children_all(k, T_BULK, T_BULK, T_BULK))
        emit_strings(k, false);
    else if (root == T_ARRAY && children_all(k, T_BULK, T_NULL, T_NULL))
        emit_strings(k, true);
    else if (root == T_ARRAY && children_all(k, T_DOUBLE, T_NULL, T_NULL))
        emit_doubles(k);
    else if (root == T_ARRAY && scored_pairs(k))
        emit_scored(k);
    else if (root == T_MAP && children_all(k, T_BULK, T_BULK, T_BULK))
        emit_map(k);
    else
        emit_value(k);
}

/* The reply is complete: encode it and forget it. */
static void emit(struct goblin__sbe_sink *k)
{
    uint8_t root = k->nnodes > 0 ? node(k, 0)->type : T_ARRAY;

    if (k->overflow)
        too_large(k, root == T_MAP ? "map" : k->nnodes > 0 &&
                  (root == T_ARRAY || root == T_SET || root == T_PUSH)
                  ? "array" : "value");
    else
        classify(k);
    k->nnodes = 0;
    k->nodes.len = 0;
    k->bytes.len = 0;
    k->overflow = false;
}

/* ---- sink ops ---- */

static void op_status(struct goblin_sink *s, const char *p, size_t n)
{
    scalar(of(s), T_STATUS, 0, 0, p, n);
}

static void op_error(struct goblin_sink *s, const char *p, size_t n)
{
    scalar(of(s), T_ERROR, 0, 0, p, n);
}

static void op_integer(struct goblin_sink *s, int64_t v)
{
    scalar(of(s), T_INTEGER, v, 0, NULL, 0);
}

static void op_dbl(struct goblin_sink *s, double v)
{
    scalar(of(s), T_DOUBLE, 0, v, NULL, 0);
}

static void op_bulk(struct goblin_sink *s, const void *p, size_t n)
{
    scalar(of(s), T_BULK, 0, 0, p, n);
}

static void op_null(struct goblin_sink *s)
{
    scalar(of(s), T_NULL, 0, 0, NULL, 0);
}

static void op_null_array(struct goblin_sink *s)
{
    scalar(of(s), T_NULL_ARRAY, 0, 0, NULL, 0);
}

static void op_boolean(struct goblin_sink *s, int v)
{
    scalar(of(s), T_BOOLEAN, v != 0, 0, NULL, 0);
}

static void op_verbatim(struct goblin_sink *s, const char fmt[3],
                        const void *p, size_t n)
{
    struct goblin__sbe_sink *k = of(s);
    char head[4] = {fmt[0], fmt[1], fmt[2], ':'};

    if (k->broken || !record(k, T_VERBATIM, 0, 0, 0) ||
        !bytes_add(k, head, 4) || !bytes_add(k, p, n))
        return;
    item_done(k);
}

static void op_array(struct goblin_sink *s, size_t n)
{
    aggregate(of(s), T_ARRAY, n, n);
}

static void op_map(struct goblin_sink *s, size_t n)
{
    aggregate(of(s), T_MAP, n, 2 * (uint64_t)n);
}

static void op_set(struct goblin_sink *s, size_t n)
{
    aggregate(of(s), T_SET, n, n);
}

static void op_push(struct goblin_sink *s, size_t n)
{
    aggregate(of(s), T_PUSH, n, n);
}

static size_t op_defer(struct goblin_sink *s)
{
    struct goblin__sbe_sink *k = of(s);
    size_t at = k->nnodes;

    if (k->broken || !record(k, T_ARRAY, 0, 0, 0))
        return 0;
    push_open(k, at, DEFERRED);
    return at;
}

static void op_set_deferred(struct goblin_sink *s, size_t token,
                            enum goblin_aggregate kind, size_t n)
{
    static const uint8_t types[] = {T_ARRAY, T_MAP, T_SET, T_PUSH};
    struct goblin__sbe_sink *k = of(s);

    if (k->broken || k->nopen == 0)
        return;
    assert(open_at(k, k->nopen - 1)->node == token);
    if (token < k->nnodes && !k->overflow) {
        node(k, token)->type = types[(unsigned)kind & 3];
        node(k, token)->children = n;
    }
    k->nopen--;
    k->open.len -= sizeof(struct goblin__sbe_open);
    item_done(k);
}

static const struct goblin_sink_ops sbe_sink_ops = {
    .status = op_status,
    .error = op_error,
    .integer = op_integer,
    .dbl = op_dbl,
    .bulk = op_bulk,
    .null = op_null,
    .null_array = op_null_array,
    .array = op_array,
    .map = op_map,
    .set = op_set,
    .boolean = op_boolean,
    .verbatim = op_verbatim,
    .push = op_push,
    .defer = op_defer,
    .set_deferred = op_set_deferred,
};

void goblin__sbe_sink_init(struct goblin__sbe_sink *k, struct goblin_buf *out,
                           size_t max_reply)
{
    memset(k, 0, sizeof(*k));
    k->sink.ops = &sbe_sink_ops;
    k->out = out;
    k->max_reply = max_reply != 0 ? max_reply : GOBLIN__SBE_MAX_REPLY_DEFAULT;
    if (k->max_reply < FRAME_HDR + 2 * VAR + 64)
        k->max_reply = FRAME_HDR + 2 * VAR + 64;
    k->nodes.alloc = out->alloc;
    k->bytes.alloc = out->alloc;
    k->open.alloc = out->alloc;
}

void goblin__sbe_sink_free(struct goblin__sbe_sink *k)
{
    goblin_buf_free(&k->nodes);
    goblin_buf_free(&k->bytes);
    goblin_buf_free(&k->open);
    k->nnodes = 0;
    k->nopen = 0;
}

bool goblin__sbe_sink_idle(const struct goblin__sbe_sink *k)
{
    return k->nnodes == 0 && k->nopen == 0;
}
