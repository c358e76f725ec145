/* reader.c - the incremental RESP2/RESP3 reply reader (client side).
 *
 * Two passes. The scan pass walks the bytes as they arrive and only checks
 * them and counts values; it keeps its place (pos, a stack of items still
 * owed at each nesting level, the node count) so new bytes resume it. When
 * the top-level value is whole, the build pass walks the same bytes again
 * and fills a node array sized from the count, so a peer's claimed counts
 * and lengths commit no memory before the bytes that back them arrived.
 *
 * The commonest replies, a whole bulk string, null, integer or status at
 * the start of the input, skip both passes (simple_reply): one read of the
 * header's digits, no line search, nothing to resume.
 *
 * Accepted (RESP3 spec, plus RESP2's "$-1" and "*-1"): + - : $ * _ , # ! =
 * ( % ~ > |. An attribute ("|") is attached to the value that follows it.
 * Lines must end in CRLF. Streamed strings and aggregates ("$?", "*?"),
 * which Redis never sends, are a protocol error.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "goblin/numtext.h"
#include "goblin/resp.h"
#include "resp/value_set.h"

#define DEPTH_MAX 512

struct level {
    uint64_t left; /* items still owed */
    bool attribute; /* completing it does not complete a parent item */
};

struct goblin_resp_reader {
    struct goblin_allocator alloc;
    bool has_alloc;
    bool failed;
    bool whole; /* scanned to the end of a reply; the build is pending */
    uint64_t max_bulk;
    size_t pos;
    size_t nodes_seen;
    int depth;
    struct level stack[DEPTH_MAX + 1];
    size_t node_cap;
    struct goblin_resp_value *nodes;
    size_t next_node;
};

#define NEED_MORE 0
#define BAD (-1)

static void *mem_alloc(goblin_resp_reader *r, size_t n)
{
    return r->has_alloc ? r->alloc.malloc(r->alloc.ctx, n) : malloc(n);
}

static void mem_free(goblin_resp_reader *r, void *p, size_t n)
{
    if (p == NULL)
        return;
    if (r->has_alloc)
        r->alloc.free(r->alloc.ctx, p, n);
    else
        free(p);
}

int goblin_resp_reader_open(const struct goblin_allocator *allocator,
                            uint64_t max_bulk_len, goblin_resp_reader **out)
{
    goblin_resp_reader *r;

    if (out == NULL)
        return GOBLIN_EINVAL;
    r = allocator != NULL ? allocator->malloc(allocator->ctx, sizeof(*r))
                          : malloc(sizeof(*r));
    if (r == NULL)
        return GOBLIN_ENOMEM;
    memset(r, 0, sizeof(*r));
    if (allocator != NULL) {
        r->alloc = *allocator;
        r->has_alloc = true;
    }
    r->max_bulk = max_bulk_len ? max_bulk_len : GOBLIN_RESP_BULK_MAX_DEFAULT;
    *out = r;
    return 0;
}

void goblin_resp_reader_close(goblin_resp_reader *r)
{
    if (r == NULL)
        return;
    mem_free(r, r->nodes, r->node_cap * sizeof(*r->nodes));
    mem_free(r, r, sizeof(*r));
}

void goblin_resp_reader_reset(goblin_resp_reader *r)
{
    r->failed = false;
    r->whole = false;
    r->pos = 0;
    r->nodes_seen = 0;
    r->depth = 0;
}

/* ---- lines and numbers ------------------------------------------------- */

/* The line at in[pos..): its content ends at *end (the CR). Returns 1,
 * NEED_MORE or BAD (a CR not followed by LF). */
static int line_at(const char *in, size_t len, size_t pos, size_t *end)
{
    const char *cr = memchr(in + pos, '\r', len - pos);

    if (cr == NULL || (size_t)(cr - in) + 1 >= len)
        return NEED_MORE;
    if (cr[1] != '\n')
        return BAD;
    *end = (size_t)(cr - in);
    return 1;
}

/* [+-]?digits within int64. */
static int parse_int(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    uint64_t v = 0;

    if (i < n && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    if (i == n)
        return BAD;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - 9) / 10)
            return BAD;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > (uint64_t)INT64_MAX + neg)
        return BAD;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 1;
}

static int parse_resp_double(const char *s, size_t n, double *out)
{
    if (n == 3 && memcmp(s, "nan", 3) == 0) {
        *out = NAN;
        return 1;
    }
    if (n == 4 && memcmp(s, "-nan", 4) == 0) {
        *out = -NAN;
        return 1;
    }
    return goblin_double_parse(s, n, out) == 0 ? 1 : BAD;
}

static int check_bignum(const char *s, size_t n)
{
    size_t i = n > 0 && (s[0] == '-' || s[0] == '+');

    if (i == n)
        return BAD;
    for (; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return BAD;
    return 1;
}

/* ---- one value's header ---------------------------------------------------
 * Reads the value starting at in[pos]. For a scalar, *next is where the
 * next value starts. For an aggregate, *count is its item count (pairs
 * doubled) and *next where its first item starts. Fills v if not NULL. */

static int scalar_line(char t, const char *s, size_t n,
                       struct goblin_resp_value *v)
{
    struct goblin_resp_value tmp;

    if (v == NULL)
        v = &tmp;
    v->str.ptr = s;
    v->str.len = n;
    switch (t) {
    case '+':
        v->type = GOBLIN_RESP_STATUS;
        return 1;
    case '-':
        v->type = GOBLIN_RESP_ERROR;
        return 1;
    case ':':
        v->type = GOBLIN_RESP_INTEGER;
        return parse_int(s, n, &v->integer);
    case ',':
        v->type = GOBLIN_RESP_DOUBLE;
        return parse_resp_double(s, n, &v->dbl);
    case '#':
        v->type = GOBLIN_RESP_BOOLEAN;
        v->integer = n == 1 && s[0] == 't';
        return n == 1 && (s[0] == 't' || s[0] == 'f') ? 1 : BAD;
    case '(':
        v->type = GOBLIN_RESP_BIGNUM;
        return check_bignum(s, n);
    case '_':
        v->type = GOBLIN_RESP_NULL;
        return n == 0 ? 1 : BAD;
    default:
        return BAD;
    }
}

static enum goblin_resp_type aggregate_type(char t)
{
    switch (t) {
    case '*':
        return GOBLIN_RESP_ARRAY;
    case '%':
        return GOBLIN_RESP_MAP;
    case '~':
        return GOBLIN_RESP_SET;
    case '>':
        return GOBLIN_RESP_PUSH;
    case '|':
        return GOBLIN_RESP_ATTRIBUTE;
    default:
        return 0;
    }
}

static int blob(goblin_resp_reader *r, const char *in, size_t len,
                size_t body, int64_t n, char t, size_t *next,
                struct goblin_resp_value *v)
{
    if (n == -1 && t == '$') {
        if (v != NULL)
            v->type = GOBLIN_RESP_NULL;
        *next = body;
        return 1;
    }
    if (n < 0 || (uint64_t)n > r->max_bulk || (t == '=' && n < 4))
        return BAD;
    if (len - body < (uint64_t)n + 2)
        return NEED_MORE;
    if (in[body + n] != '\r' || in[body + n + 1] != '\n' ||
        (t == '=' && in[body + 3] != ':'))
        return BAD;
    *next = body + (size_t)n + 2;
    if (v == NULL)
        return 1;
    v->type = t == '$' ? GOBLIN_RESP_BULK
              : t == '!' ? GOBLIN_RESP_BLOB_ERROR : GOBLIN_RESP_VERBATIM;
    v->str.ptr = in + body;
    v->str.len = (size_t)n;
    if (t == '=') {
        memcpy(v->fmt, in + body, 3);
        v->fmt[3] = '\0';
        v->str.ptr = in + body + 4;
        v->str.len = (size_t)n - 4;
    }
    return 1;
}

static int value_header(goblin_resp_reader *r, const char *in, size_t len,
                        size_t pos, size_t *next, uint64_t *count,
                        struct goblin_resp_value *v)
{
    size_t end;
    int64_t n;
    char t;
    enum goblin_resp_type agg;
    int rc = line_at(in, len, pos, &end);

    *count = 0;
    if (rc != 1)
        return rc;
    t = in[pos];
    if (t == '$' || t == '!' || t == '=') {
        if (parse_int(in + pos + 1, end - pos - 1, &n) != 1)
            return BAD;
        return blob(r, in, len, end + 2, n, t, next, v);
    }
    *next = end + 2;
    agg = aggregate_type(t);
    if (agg == 0)
        return scalar_line(t, in + pos + 1, end - pos - 1, v);
    if (parse_int(in + pos + 1, end - pos - 1, &n) != 1 ||
        (n < 0 && !(n == -1 && t == '*')))
        return BAD;
    if (v != NULL)
        v->type = n < 0 ? GOBLIN_RESP_NULL : agg;
    if (v != NULL && n < 0)
        v->null_array = true;
    if (n < 0)
        return 1;
    *count = (uint64_t)n;
    if (agg == GOBLIN_RESP_MAP || agg == GOBLIN_RESP_ATTRIBUTE) {
        if (*count > UINT64_MAX / 2)
            return BAD;
        *count *= 2;
    }
    return 1;
}

/* ---- scan pass ------------------------------------------------------------ */

/* An item of the innermost level is done: pops the levels it completes.
 * Returns true when that completed the top-level value. */
static bool item_done(goblin_resp_reader *r)
{
    while (r->depth > 0) {
        struct level *l = &r->stack[r->depth - 1];

        if (--l->left > 0)
            return false;
        r->depth--;
        if (l->attribute)
            return false; /* the value it is attached to follows */
    }
    return true;
}

/* Returns 1 when a whole reply has been scanned, NEED_MORE or BAD. */
static int scan(goblin_resp_reader *r, const char *in, size_t len)
{
    while (r->pos < len) {
        size_t next;
        uint64_t count;
        bool attr = in[r->pos] == '|';
        int rc = value_header(r, in, len, r->pos, &next, &count, NULL);

        if (rc != 1)
            return rc;
        r->pos = next;
        r->nodes_seen++;
        if (count > 0) {
            if (r->depth == DEPTH_MAX)
                return BAD;
            r->stack[r->depth].left = count;
            r->stack[r->depth].attribute = attr;
            r->depth++;
            continue;
        }
        if (attr)
            continue; /* an empty attribute: its value follows */
        if (item_done(r))
            return 1;
    }
    return NEED_MORE;
}

/* ---- build pass ----------------------------------------------------------- */

static size_t build(goblin_resp_reader *r, const char *in, size_t len,
                    size_t pos, struct goblin_resp_value *v);

/* One value without looking for an attribute before it. */
static size_t build_one(goblin_resp_reader *r, const char *in, size_t len,
                        size_t pos, struct goblin_resp_value *v)
{
    uint64_t count;
    size_t next = pos;

    memset(v, 0, sizeof(*v));
    (void)value_header(r, in, len, pos, &next, &count, v);
    if (aggregate_type(in[pos]) == 0 || v->type == GOBLIN_RESP_NULL)
        return next;
    v->n = (size_t)count;
    v->items = &r->nodes[r->next_node];
    r->next_node += (size_t)count;
    for (size_t i = 0; i < count; i++)
        next = build(r, in, len, next, &v->items[i]);
    return next;
}

static size_t build(goblin_resp_reader *r, const char *in, size_t len,
                    size_t pos, struct goblin_resp_value *v)
{
    struct goblin_resp_value *attr = NULL;

    if (in[pos] == '|') {
        attr = &r->nodes[r->next_node++];
        pos = build_one(r, in, len, pos, attr);
    }
    pos = build_one(r, in, len, pos, v);
    v->attribute = attr;
    return pos;
}

static int nodes_reserve(goblin_resp_reader *r, size_t n)
{
    struct goblin_resp_value *a;
    size_t cap = r->node_cap ? r->node_cap : 16;

    if (n <= r->node_cap)
        return 0;
    while (cap < n)
        cap *= 2;
    a = mem_alloc(r, cap * sizeof(*a));
    if (a == NULL)
        return GOBLIN_ENOMEM;
    mem_free(r, r->nodes, r->node_cap * sizeof(*a));
    r->nodes = a;
    r->node_cap = cap;
    return 0;
}

/* A reply that is one scalar value (most replies: a status, an integer,
 * a bulk string, a null) read in one pass straight into nodes[0]: no
 * scan to resume, no count, no second walk. 1 with *used, NEED_MORE, or
 * BAD; any other first byte (aggregates, attributes) is NEED_MORE's
 * sibling 2, which sends the reply the two-pass way. */
static int scalar_reply(goblin_resp_reader *r, const char *in, size_t len,
                        size_t *used)
{
    struct goblin_resp_value *v;
    uint64_t count;
    char t = in[0];

    if (t == '*' || t == '%' || t == '~' || t == '>' || t == '|')
        return 2;
    if (r->node_cap == 0 && nodes_reserve(r, 1) != 0)
        return 2; /* the general way reports the ENOMEM */
    v = &r->nodes[0];
    memset(v, 0, sizeof(*v));
    return value_header(r, in, len, 0, used, &count, v);
}

/* Up to 18 decimal digits at s[*i..len) (at least one), their value in
 * *v; false when there are none or 19 or more. */
static inline bool digits18(const char *s, size_t len, size_t *i,
                            uint64_t *v)
{
    size_t k = *i, end = len - k > 18 ? k + 18 : len;
    uint64_t x = 0;

    while (k < end && (unsigned char)(s[k] - '0') < 10)
        x = x * 10 + (uint64_t)(s[k++] - '0');
    if (k == *i || (k < len && (unsigned char)(s[k] - '0') < 10))
        return false;
    *i = k;
    *v = x;
    return true;
}

/* The commonest values in their plain form, read with no line search and
 * no general header: "$<digits>\r\n<bytes>\r\n", "$-1\r\n",
 * ":[-]<digits>\r\n" and "+<text>\r\n", at in[pos..len) into *v. Returns
 * 1 with *next, NEED_MORE when a plain bulk header is whole and its bytes
 * are not all there yet, or 2 for anything else, partial headers
 * included: the general road (scalar_reply, scan) then gives its verdict,
 * the same one it gives for these forms. */
static inline __attribute__((always_inline)) int simple_value(
    const goblin_resp_reader *r, const char *in, size_t len, size_t pos,
    size_t *next, struct goblin_resp_value *v)
{
    size_t i = pos + 1, body;
    uint64_t n;
    bool neg;
    const char *cr;

    if (len - pos < 4)
        return 2;
    switch (in[pos]) {
    case '$':
        if (in[i] == '-') {
            if (in[i + 1] != '1' || in[i + 2] != '\r' || len - pos < 5 ||
                in[i + 3] != '\n')
                return 2;
            goblin__resp_value_set(v, GOBLIN_RESP_NULL, NULL, 0, 0);
            *next = pos + 5;
            return 1;
        }
        /* A one-digit length, the usual one of a short member or value,
         * first (in[pos + 3] is there: len - pos >= 4). */
        if ((unsigned char)(in[i] - '0') < 10 && in[i + 1] == '\r') {
            n = (uint64_t)(in[i] - '0');
            if (in[i + 2] != '\n' || n > r->max_bulk)
                return 2;
            i++;
        } else if (!digits18(in, len, &i, &n) || len - i < 2 ||
                   in[i] != '\r' || in[i + 1] != '\n' || n > r->max_bulk) {
            return 2;
        }
        body = i + 2;
        if (len - body < n + 2)
            return NEED_MORE;
        if (in[body + n] != '\r' || in[body + n + 1] != '\n')
            return 2;
        goblin__resp_value_set(v, GOBLIN_RESP_BULK, in + body, (size_t)n,
                               0);
        *next = body + (size_t)n + 2;
        return 1;
    case ':':
        neg = in[i] == '-';
        i += neg;
        if (!digits18(in, len, &i, &n) || len - i < 2 || in[i] != '\r' ||
            in[i + 1] != '\n')
            return 2;
        goblin__resp_value_set(v, GOBLIN_RESP_INTEGER, in + pos + 1,
                               i - pos - 1, neg ? -(int64_t)n : (int64_t)n);
        *next = i + 2;
        return 1;
    case '+':
        /* A short status ("OK", "PONG") by a loop, a longer one by
         * memchr. */
        body = len - i > 16 ? i + 16 : len;
        for (n = i; n < body && in[n] != '\r'; n++)
            ;
        cr = n < body ? in + n : memchr(in + n, '\r', len - n);
        if (cr == NULL || (size_t)(cr - in) + 1 >= len || cr[1] != '\n')
            return 2;
        goblin__resp_value_set(v, GOBLIN_RESP_STATUS, in + i,
                               (size_t)(cr - in) - i, 0);
        *next = (size_t)(cr - in) + 2;
        return 1;
    default:
        return 2;
    }
}

/* A flat array, map or set whose items are all simple_value's forms and
 * all there ("*2\r\n$1\r\na\r\n:5\r\n", most multi-value replies), read
 * in one pass into nodes[0..n]. Returns 1 with *used, or 2 for anything
 * else (an empty, null or nested aggregate, an attribute, a partial or
 * unusual item, more items than the nodes already allocated), which the
 * general road then reads from the start. It allocates nothing: the
 * general road sizes the nodes once a reply is whole, and they are kept
 * for the next reply. */
static int flat_aggregate(goblin_resp_reader *r, const char *in, size_t len,
                          size_t *used)
{
    enum goblin_resp_type agg = aggregate_type(in[0]);
    size_t i = 1, pos;
    uint64_t n;
    struct goblin_resp_value *items;

    if (!digits18(in, len, &i, &n) || n == 0 || len - i < 2 ||
        in[i] != '\r' || in[i + 1] != '\n')
        return 2;
    if (agg == GOBLIN_RESP_MAP)
        n *= 2;
    pos = i + 2;
    if (n >= r->node_cap)
        return 2;
    items = r->nodes + 1;
    for (size_t k = 0; k < n; k++)
        if (simple_value(r, in, len, pos, &pos, &items[k]) != 1)
            return 2;
    goblin__resp_value_set(&r->nodes[0], agg, NULL, 0, 0);
    r->nodes[0].n = (size_t)n;
    r->nodes[0].items = items;
    *used = pos;
    return 1;
}

/* The whole reply at in[0..len) when it is simple_value's or
 * flat_aggregate's: 1 with nodes[0] and *used, NEED_MORE, or 2 for the
 * general road. */
static inline int simple_reply(goblin_resp_reader *r, const char *in,
                               size_t len, size_t *used)
{
    if (r->node_cap == 0 || len < 4)
        return 2;
    if (in[0] == '*' || in[0] == '%' || in[0] == '~')
        return flat_aggregate(r, in, len, used);
    return simple_value(r, in, len, 0, used, &r->nodes[0]);
}

/* Everything but simple_reply's forms, kept out of line so the fast
 * path stays a leaf. */
static __attribute__((noinline)) int64_t
reply_parse_general(goblin_resp_reader *r, const char *in, size_t len,
                    const struct goblin_resp_value **out)
{
    int rc;
    size_t used;

    if (r->pos == 0 && !r->whole && len > 0) {
        rc = scalar_reply(r, in, len, &used);
        if (rc == NEED_MORE)
            return 0;
        if (rc == BAD) {
            r->failed = true;
            return GOBLIN_EPROTO;
        }
        if (rc == 1) {
            *out = &r->nodes[0];
            return (int64_t)used;
        }
    }
    rc = r->whole ? 1 : scan(r, in, len);
    r->whole = rc == 1;
    if (rc == NEED_MORE)
        return 0;
    if (rc == BAD) {
        r->failed = true;
        return GOBLIN_EPROTO;
    }
    if (nodes_reserve(r, r->nodes_seen) != 0)
        return GOBLIN_ENOMEM; /* the scan is kept: retrying resumes */
    r->next_node = 1;
    used = build(r, in, len, 0, &r->nodes[0]);
    *out = &r->nodes[0];
    r->whole = false;
    r->pos = 0;
    r->nodes_seen = 0;
    r->depth = 0;
    return (int64_t)used;
}

int64_t goblin_resp_reply_parse(goblin_resp_reader *r, const char *in,
                                size_t len,
                                const struct goblin_resp_value **out)
{
    size_t used;
    int rc;

    if (r->failed)
        return GOBLIN_EPROTO;
    if (r->pos == 0 && !r->whole) {
        rc = simple_reply(r, in, len, &used);
        if (rc == 1) {
            *out = &r->nodes[0];
            return (int64_t)used;
        }
        if (rc == NEED_MORE)
            return 0;
    }
    return reply_parse_general(r, in, len, out);
}
