/* sbe_tree.c - turns one SBE reply message into the RESP3-shaped tree a
 * RESP reader would give (struct goblin_resp_value), so the generic
 * client call and the reply printer treat both protocols alike.
 *
 *   NilReply            null              IntReply      integer
 *   StatusReply         status            DoubleReply   double (+ text)
 *   ErrorReply          error "CODE msg"  BulkReply     bulk
 *   ArrayReply          array of bulks
 *   NullableArrayReply  array of bulks and nulls
 *   NullableDoubleArrayReply  array of doubles and nulls
 *   ScoredArrayReply    array of [member, double] pairs (RESP3 WITHSCORES)
 *   MapReply            map of bulks
 *   StringScanReply     [cursor, [items]]             (as SCAN replies)
 *   ScoredScanReply     [cursor, [member, score, ...]] (as ZSCAN replies:
 *                       scores as bulk strings, as Redis sends them)
 *   ValueReply          the tree its pre-order nodes describe
 *
 * Invariants: strings are views into the message; the texts made here
 * (doubles, cursors, the joined error) live in one block sized before it
 * is filled, so no view moves. The message comes from a peer: every count
 * in a ValueReply is checked against the nodes that are really there.
 */
#include <string.h>

#include "client/client.h"
#include "goblin/numtext.h"
#include "resp/value_set.h"
#include "sbe/goblin_sbe_gen.h"

#define DEPTH_MAX 512

static void *grow(const struct goblin_allocator *a, void *p, size_t old,
                  size_t want)
{
    if (a == NULL)
        return realloc(p, want);
    if (a->realloc != NULL)
        return a->realloc(a->ctx, p, old, want);
    {
        void *q = a->malloc(a->ctx, want);

        if (q != NULL && old > 0)
            memcpy(q, p, old);
        if (q != NULL && p != NULL)
            a->free(a->ctx, p, old);
        return q;
    }
}

static void drop(const struct goblin_allocator *a, void *p, size_t size)
{
    if (p == NULL)
        return;
    if (a == NULL)
        free(p);
    else
        a->free(a->ctx, p, size);
}

/* Room for nodes values and text bytes; the old contents are not kept. */
static int reserve(struct goblin__sbe_tree *t, size_t nodes, size_t text)
{
    void *p;

    if (nodes > t->cap) {
        if (nodes > SIZE_MAX / sizeof(*t->v))
            return GOBLIN_ENOMEM;
        p = grow(t->alloc, t->v, t->cap * sizeof(*t->v),
                 nodes * sizeof(*t->v));
        if (p == NULL)
            return GOBLIN_ENOMEM;
        t->v = p;
        t->cap = nodes;
    }
    if (text > t->text_cap) {
        p = grow(t->alloc, t->text, t->text_cap, text);
        if (p == NULL)
            return GOBLIN_ENOMEM;
        t->text = p;
        t->text_cap = text;
    }
    t->used = 0;
    t->text_used = 0;
    return 0;
}

static struct goblin_resp_value *take(struct goblin__sbe_tree *t, size_t n)
{
    struct goblin_resp_value *v = t->v + t->used;

    /* One or two values field by field (goblin__resp_value_set); more
     * with one memset, whose start-up the size pays for. */
    if (n <= 2) {
        for (size_t i = 0; i < n; i++)
            goblin__resp_value_set(&v[i], 0, NULL, 0, 0);
    } else {
        memset(v, 0, n * sizeof(*v));
    }
    t->used += n;
    return v;
}

static void set_double(struct goblin__sbe_tree *t, struct goblin_resp_value *v,
                       double d)
{
    char *at = t->text + t->text_used;

    v->type = GOBLIN_RESP_DOUBLE;
    v->dbl = d;
    if (!t->double_text) {
        v->str = (struct goblin_slice){"", 0};
        return;
    }
    v->str.ptr = at;
    v->str.len = goblin_double_format(at, d);
    t->text_used += v->str.len;
}

static void set_str(struct goblin_resp_value *v, enum goblin_resp_type type,
                    struct goblin_slice s)
{
    v->type = type;
    v->str = s;
}

static void set_cursor(struct goblin__sbe_tree *t, struct goblin_resp_value *v,
                       uint64_t cursor)
{
    char *at = t->text + t->text_used;
    char tmp[24];
    size_t n = 0, i;

    do {
        tmp[n++] = (char)('0' + cursor % 10);
        cursor /= 10;
    } while (cursor != 0);
    for (i = 0; i < n; i++)
        at[i] = tmp[n - 1 - i];
    set_str(v, GOBLIN_RESP_BULK, (struct goblin_slice){at, n});
    t->text_used += n;
}

static int build_error(struct goblin__sbe_tree *t, struct goblin_sbe_msg *m,
                       struct goblin_resp_value **out)
{
    struct goblin_sbe_error_reply e;
    struct goblin_resp_value *v;
    char *at;
    size_t n;

    if (goblin_sbe_error_reply_decode(&e, m) != 0 ||
        reserve(t, 1, e.code.len + 1 + e.message.len) != 0)
        return m->why != NULL ? GOBLIN_EPROTO : GOBLIN_ENOMEM;
    at = t->text;
    memcpy(at, e.code.ptr, e.code.len);
    n = e.code.len;
    if (e.message.len > 0) {
        at[n++] = ' ';
        memcpy(at + n, e.message.ptr, e.message.len);
        n += e.message.len;
    }
    v = take(t, 1);
    set_str(v, GOBLIN_RESP_ERROR, (struct goblin_slice){at, n});
    *out = v;
    return 0;
}

/* The root array of n items, which the caller fills. */
static struct goblin_resp_value *array_of(struct goblin__sbe_tree *t,
                                          size_t n,
                                          struct goblin_resp_value **out)
{
    struct goblin_resp_value *v = take(t, 1);

    v->type = GOBLIN_RESP_ARRAY;
    v->n = n;
    v->items = take(t, n);
    *out = v;
    return v->items;
}

/* A PublishedMessage as the push RESP3 sends: [message, channel,
 * payload], [pmessage, pattern, channel, payload] or [smessage, ...]. */
static int build_published(struct goblin__sbe_tree *t,
                           struct goblin_sbe_msg *m,
                           struct goblin_resp_value **out)
{
    static const char *const words[] = {"message", "pmessage", "smessage"};
    struct goblin_sbe_published_message p;
    struct goblin_resp_value *items;
    unsigned kind;
    size_t i = 0;

    if (goblin_sbe_published_message_decode(&p, m) != 0 ||
        (kind = goblin_sbe_published_message_kind(&p)) >
            GOBLIN_SBE_MESSAGE_KIND_MAX)
        return GOBLIN_EPROTO;
    if (reserve(t, 5, 0) != 0)
        return GOBLIN_ENOMEM;
    items = array_of(t, kind == GOBLIN_SBE_MESSAGE_KIND_PMESSAGE ? 4 : 3,
                     out);
    (*out)->type = GOBLIN_RESP_PUSH;
    set_str(&items[i++], GOBLIN_RESP_BULK,
            (struct goblin_slice){words[kind], strlen(words[kind])});
    if (kind == GOBLIN_SBE_MESSAGE_KIND_PMESSAGE)
        set_str(&items[i++], GOBLIN_RESP_BULK, p.pattern);
    set_str(&items[i++], GOBLIN_RESP_BULK, p.channel);
    set_str(&items[i], GOBLIN_RESP_BULK, p.payload);
    return 0;
}

static int build_array(struct goblin__sbe_tree *t, struct goblin_sbe_msg *m,
                       struct goblin_resp_value **out)
{
    struct goblin_sbe_array_reply a;
    struct goblin_sbe_array_reply_items e;
    struct goblin_resp_value *items;
    size_t i;

    if (goblin_sbe_array_reply_decode(&a, m) != 0)
        return GOBLIN_EPROTO;
    if (reserve(t, 1 + (size_t)a.items.count, 0) != 0)
        return GOBLIN_ENOMEM;
    items = array_of(t, a.items.count, out);
    for (i = 0; goblin_sbe_array_reply_items_next(&a.items, &e); i++)
        set_str(&items[i], GOBLIN_RESP_BULK, e.value);
    return 0;
}

static int build_nullable(struct goblin__sbe_tree *t,
                          struct goblin_sbe_msg *m,
                          struct goblin_resp_value **out)
{
    struct goblin_sbe_nullable_array_reply a;
    struct goblin_sbe_nullable_array_reply_items e;
    struct goblin_resp_value *items;
    size_t i;

    if (goblin_sbe_nullable_array_reply_decode(&a, m) != 0)
        return GOBLIN_EPROTO;
    if (reserve(t, 1 + (size_t)a.items.count, 0) != 0)
        return GOBLIN_ENOMEM;
    items = array_of(t, a.items.count, out);
    for (i = 0; goblin_sbe_nullable_array_reply_items_next(&a.items, &e);
         i++) {
        if (goblin_sbe_nullable_array_reply_items_present(&e))
            set_str(&items[i], GOBLIN_RESP_BULK, e.value);
        else
            items[i].type = GOBLIN_RESP_NULL;
    }
    return 0;
}

static int build_doubles(struct goblin__sbe_tree *t, struct goblin_sbe_msg *m,
                         struct goblin_resp_value **out)
{
    struct goblin_sbe_nullable_double_array_reply a;
    struct goblin_sbe_nullable_double_array_reply_items e;
    struct goblin_resp_value *v, *items;
    size_t n, i;

    if (goblin_sbe_nullable_double_array_reply_decode(&a, m) != 0)
        return GOBLIN_EPROTO;
    n = a.items.count;
    if (reserve(t, 1 + n, n * GOBLIN_DOUBLE_TEXT_MAX) != 0)
        return GOBLIN_ENOMEM;
    v = take(t, 1);
    items = take(t, n);
    v->type = GOBLIN_RESP_ARRAY;
    v->n = n;
    v->items = items;
    for (i = 0; i < n; i++) {
        if (!goblin_sbe_nullable_double_array_reply_items_next(&a.items, &e))
            return GOBLIN_EPROTO;
        if (goblin_sbe_nullable_double_array_reply_items_present(&e))
            set_double(t, &items[i],
                       goblin_sbe_nullable_double_array_reply_items_value(&e));
        else
            items[i].type = GOBLIN_RESP_NULL;
    }
    *out = v;
    return 0;
}

/* Fills pair[0..2) with member and score as RESP3 gives WITHSCORES. */
static void scored_pair(struct goblin__sbe_tree *t,
                        struct goblin_resp_value *pair,
                        struct goblin_slice member, double score)
{
    set_str(&pair[0], GOBLIN_RESP_BULK, member);
    set_double(t, &pair[1], score);
}

static int build_scored(struct goblin__sbe_tree *t, struct goblin_sbe_msg *m,
                        struct goblin_resp_value **out)
{
    struct goblin_sbe_scored_array_reply a;
    struct goblin_sbe_scored_array_reply_items e;
    struct goblin_resp_value *v, *items, *pair;
    size_t n, i;

    if (goblin_sbe_scored_array_reply_decode(&a, m) != 0)
        return GOBLIN_EPROTO;
    n = a.items.count;
    if (reserve(t, 1 + 3 * n, n * GOBLIN_DOUBLE_TEXT_MAX) != 0)
        return GOBLIN_ENOMEM;
    v = take(t, 1);
    items = take(t, n);
    v->type = GOBLIN_RESP_ARRAY;
    v->n = n;
    v->items = items;
    for (i = 0; i < n; i++) {
        if (!goblin_sbe_scored_array_reply_items_next(&a.items, &e))
            return GOBLIN_EPROTO;
        pair = take(t, 2);
        items[i].type = GOBLIN_RESP_ARRAY;
        items[i].n = 2;
        items[i].items = pair;
        scored_pair(t, pair, e.member,
                    goblin_sbe_scored_array_reply_items_score(&e));
    }
    *out = v;
    return 0;
}

static int build_map(struct goblin__sbe_tree *t, struct goblin_sbe_msg *m,
                     struct goblin_resp_value **out)
{
    struct goblin_sbe_map_reply a;
    struct goblin_sbe_map_reply_entries e;
    struct goblin_resp_value *v, *items;
    size_t n, i;

    if (goblin_sbe_map_reply_decode(&a, m) != 0)
        return GOBLIN_EPROTO;
    n = a.entries.count;
    if (reserve(t, 1 + 2 * n, 0) != 0)
        return GOBLIN_ENOMEM;
    v = take(t, 1);
    items = take(t, 2 * n);
    v->type = GOBLIN_RESP_MAP;
    v->n = 2 * n;
    v->items = items;
    for (i = 0; i < n; i++) {
        if (!goblin_sbe_map_reply_entries_next(&a.entries, &e))
            return GOBLIN_EPROTO;
        set_str(&items[2 * i], GOBLIN_RESP_BULK, e.key);
        set_str(&items[2 * i + 1], GOBLIN_RESP_BULK, e.value);
    }
    *out = v;
    return 0;
}

/* [cursor, [...]]: the outer pair and the inner array of n values. */
static struct goblin_resp_value *scan_frame(struct goblin__sbe_tree *t,
                                            uint64_t cursor, size_t n,
                                            struct goblin_resp_value **out)
{
    struct goblin_resp_value *v = take(t, 1), *pair = take(t, 2);

    v->type = GOBLIN_RESP_ARRAY;
    v->n = 2;
    v->items = pair;
    set_cursor(t, &pair[0], cursor);
    pair[1].type = GOBLIN_RESP_ARRAY;
    pair[1].n = n;
    pair[1].items = take(t, n);
    *out = v;
    return pair[1].items;
}

static int build_scan(struct goblin__sbe_tree *t, struct goblin_sbe_msg *m,
                      struct goblin_resp_value **out)
{
    struct goblin_sbe_string_scan_reply a;
    struct goblin_sbe_string_scan_reply_items e;
    struct goblin_resp_value *items;
    size_t n, i;

    if (goblin_sbe_string_scan_reply_decode(&a, m) != 0)
        return GOBLIN_EPROTO;
    n = a.items.count;
    if (reserve(t, 3 + n, 24) != 0)
        return GOBLIN_ENOMEM;
    items = scan_frame(t, goblin_sbe_string_scan_reply_next_cursor(&a), n,
                       out);
    for (i = 0; i < n; i++) {
        if (!goblin_sbe_string_scan_reply_items_next(&a.items, &e))
            return GOBLIN_EPROTO;
        set_str(&items[i], GOBLIN_RESP_BULK, e.value);
    }
    return 0;
}

static int build_scored_scan(struct goblin__sbe_tree *t,
                             struct goblin_sbe_msg *m,
                             struct goblin_resp_value **out)
{
    struct goblin_sbe_scored_scan_reply a;
    struct goblin_sbe_scored_scan_reply_items e;
    struct goblin_resp_value *items;
    size_t n, i;

    if (goblin_sbe_scored_scan_reply_decode(&a, m) != 0)
        return GOBLIN_EPROTO;
    n = a.items.count;
    if (reserve(t, 3 + 2 * n, 24 + n * GOBLIN_DOUBLE_TEXT_MAX) != 0)
        return GOBLIN_ENOMEM;
    items = scan_frame(t, goblin_sbe_scored_scan_reply_next_cursor(&a),
                       2 * n, out);
    for (i = 0; i < n; i++) {
        if (!goblin_sbe_scored_scan_reply_items_next(&a.items, &e))
            return GOBLIN_EPROTO;
        scored_pair(t, &items[2 * i], e.member,
                    goblin_sbe_scored_scan_reply_items_score(&e));
        items[2 * i + 1].type = GOBLIN_RESP_BULK;
    }
    return 0;
}

/* Fills v from one ValueReply node; *items is how many values follow as
 * its items. */
static int value_node(struct goblin__sbe_tree *t, struct goblin_resp_value *v,
                      const struct goblin_sbe_value_reply_nodes *e,
                      uint64_t *items)
{
    static const enum goblin_resp_type aggs[] = {
        [GOBLIN_SBE_VALUE_TYPE_ARRAY] = GOBLIN_RESP_ARRAY,
        [GOBLIN_SBE_VALUE_TYPE_MAP] = GOBLIN_RESP_MAP,
        [GOBLIN_SBE_VALUE_TYPE_SET] = GOBLIN_RESP_SET,
        [GOBLIN_SBE_VALUE_TYPE_PUSH] = GOBLIN_RESP_PUSH,
    };
    uint8_t type = goblin_sbe_value_reply_nodes_type(e);
    const char *b = e->bytes.ptr;

    *items = 0;
    switch (type) {
    case GOBLIN_SBE_VALUE_TYPE_NULL_ARRAY:
        v->null_array = true;
        /* fall through */
    case GOBLIN_SBE_VALUE_TYPE_NULL:
        v->type = GOBLIN_RESP_NULL;
        return 0;
    case GOBLIN_SBE_VALUE_TYPE_INTEGER:
    case GOBLIN_SBE_VALUE_TYPE_BOOLEAN:
        v->type = type == GOBLIN_SBE_VALUE_TYPE_INTEGER ? GOBLIN_RESP_INTEGER
                                                         : GOBLIN_RESP_BOOLEAN;
        v->integer = goblin_sbe_value_reply_nodes_int_value(e);
        if (v->type == GOBLIN_RESP_BOOLEAN)
            v->integer = v->integer != 0;
        return 0;
    case GOBLIN_SBE_VALUE_TYPE_BULK:
        set_str(v, GOBLIN_RESP_BULK, e->bytes);
        return 0;
    case GOBLIN_SBE_VALUE_TYPE_STATUS:
        set_str(v, GOBLIN_RESP_STATUS, e->bytes);
        return 0;
    case GOBLIN_SBE_VALUE_TYPE_ERROR:
        set_str(v, GOBLIN_RESP_ERROR, e->bytes);
        return 0;
    case GOBLIN_SBE_VALUE_TYPE_BIG_NUMBER:
        set_str(v, GOBLIN_RESP_BIGNUM, e->bytes);
        return 0;
    case GOBLIN_SBE_VALUE_TYPE_DOUBLE:
        set_double(t, v, goblin_sbe_value_reply_nodes_double_value(e));
        return 0;
    case GOBLIN_SBE_VALUE_TYPE_VERBATIM:
        if (e->bytes.len < 4 || b[3] != ':')
            return GOBLIN_EPROTO;
        memcpy(v->fmt, b, 3);
        set_str(v, GOBLIN_RESP_VERBATIM,
                (struct goblin_slice){b + 4, e->bytes.len - 4});
        return 0;
    case GOBLIN_SBE_VALUE_TYPE_ARRAY:
    case GOBLIN_SBE_VALUE_TYPE_MAP:
    case GOBLIN_SBE_VALUE_TYPE_SET:
    case GOBLIN_SBE_VALUE_TYPE_PUSH:
        v->type = aggs[type];
        *items = goblin_sbe_value_reply_nodes_child_count(e);
        if (type == GOBLIN_SBE_VALUE_TYPE_MAP)
            *items *= 2;
        return 0;
    default:
        return GOBLIN_EPROTO;
    }
}

struct frame {
    struct goblin_resp_value *block;
    size_t next, n;
};

static size_t count_doubles(struct goblin_sbe_group g)
{
    struct goblin_sbe_value_reply_nodes e;
    size_t n = 0;

    while (goblin_sbe_value_reply_nodes_next(&g, &e))
        n += goblin_sbe_value_reply_nodes_type(&e) ==
             GOBLIN_SBE_VALUE_TYPE_DOUBLE;
    return n;
}

/* Places each pre-order node: the first is the root, the others fill the
 * item blocks of the open aggregates in order. */
static int place_nodes(struct goblin__sbe_tree *t, struct goblin_sbe_group g,
                       size_t n, struct frame *stack)
{
    struct goblin_sbe_value_reply_nodes e;
    struct goblin_resp_value *slot;
    size_t depth = 0, i;
    uint64_t items;

    for (i = 0; i < n; i++) {
        if (!goblin_sbe_value_reply_nodes_next(&g, &e))
            return GOBLIN_EPROTO;
        if (depth == 0 && i > 0)
            return GOBLIN_EPROTO; /* nodes after a complete value */
        slot = depth == 0 ? take(t, 1)
                          : &stack[depth - 1].block[stack[depth - 1].next++];
        if (value_node(t, slot, &e, &items) != 0)
            return GOBLIN_EPROTO;
        if (items > 0) {
            if (items > n - t->used || depth == DEPTH_MAX)
                return GOBLIN_EPROTO;
            slot->n = (size_t)items;
            slot->items = take(t, slot->n);
            stack[depth++] = (struct frame){slot->items, 0, slot->n};
        }
        while (depth > 0 && stack[depth - 1].next == stack[depth - 1].n)
            depth--;
    }
    return depth == 0 && t->used == n ? 0 : GOBLIN_EPROTO;
}

static int build_value(struct goblin__sbe_tree *t, struct goblin_sbe_msg *m,
                       struct goblin_resp_value **out)
{
    struct goblin_sbe_value_reply a;
    int r;

    if (goblin_sbe_value_reply_decode(&a, m) != 0 || a.nodes.count == 0)
        return GOBLIN_EPROTO;
    if (t->stack == NULL) {
        t->stack = grow(t->alloc, NULL, 0, DEPTH_MAX * sizeof(struct frame));
        if (t->stack == NULL)
            return GOBLIN_ENOMEM;
    }
    if (reserve(t, a.nodes.count,
                count_doubles(a.nodes) * GOBLIN_DOUBLE_TEXT_MAX) != 0)
        return GOBLIN_ENOMEM;
    r = place_nodes(t, a.nodes, a.nodes.count, t->stack);
    *out = t->v;
    return r;
}

static int build_scalar(struct goblin__sbe_tree *t, struct goblin_sbe_msg *m,
                        struct goblin_resp_value **out)
{
    struct goblin_sbe_int_reply i;
    struct goblin_sbe_double_reply d;
    struct goblin_sbe_bulk_reply b;
    struct goblin_sbe_status_reply s;
    struct goblin_sbe_nil_reply nil;
    struct goblin_resp_value *v;

    /* The usual case, room from earlier replies, without the call. */
    if (t->cap >= 1 && t->text_cap >= GOBLIN_DOUBLE_TEXT_MAX) {
        t->used = 0;
        t->text_used = 0;
    } else if (reserve(t, 1, GOBLIN_DOUBLE_TEXT_MAX) != 0) {
        return GOBLIN_ENOMEM;
    }
    v = *out = take(t, 1);
    switch (m->template_id) {
    case GOBLIN_SBE_NIL_REPLY:
        v->type = GOBLIN_RESP_NULL;
        return goblin_sbe_nil_reply_decode(&nil, m) ? GOBLIN_EPROTO : 0;
    case GOBLIN_SBE_INT_REPLY:
        if (goblin_sbe_int_reply_decode(&i, m) != 0)
            return GOBLIN_EPROTO;
        v->type = GOBLIN_RESP_INTEGER;
        v->integer = goblin_sbe_int_reply_value(&i);
        return 0;
    case GOBLIN_SBE_DOUBLE_REPLY:
        if (goblin_sbe_double_reply_decode(&d, m) != 0)
            return GOBLIN_EPROTO;
        set_double(t, v, goblin_sbe_double_reply_value(&d));
        return 0;
    case GOBLIN_SBE_BULK_REPLY:
        if (goblin_sbe_bulk_reply_decode(&b, m) != 0)
            return GOBLIN_EPROTO;
        set_str(v, GOBLIN_RESP_BULK, b.value);
        return 0;
    default:
        if (goblin_sbe_status_reply_decode(&s, m) != 0)
            return GOBLIN_EPROTO;
        set_str(v, GOBLIN_RESP_STATUS, s.status);
        return 0;
    }
}

/* The usual reply: one scalar message of this schema version, with room
 * from earlier replies, read by hand from its fixed layout (docs/sbe.md:
 * header, an 8-byte block for IntReply and DoubleReply, one data field
 * for StatusReply and BulkReply). Anything else, well formed or not, is
 * left to the decoders: 0. */
_Static_assert(GOBLIN_SBE_INT_REPLY_BLOCK_LENGTH == 8 &&
                   GOBLIN_SBE_DOUBLE_REPLY_BLOCK_LENGTH == 8 &&
                   GOBLIN_SBE_HEADER_LENGTH == 8 &&
                   GOBLIN_SBE_VAR_HEADER_LENGTH == 4,
               "the scalar replies' layout");

static int fast_scalar(struct goblin__sbe_tree *t, const uint8_t *p,
                       size_t len, const struct goblin_resp_value **out)
{
    struct goblin_resp_value *v;
    uint16_t block, tpl;

    if (len < GOBLIN_SBE_HEADER_LENGTH || t->cap < 1 ||
        t->text_cap < GOBLIN_DOUBLE_TEXT_MAX ||
        goblin_sbe_rd_u16(p + 4) != GOBLIN_SBE_SCHEMA_ID ||
        goblin_sbe_rd_u16(p + 6) != GOBLIN_SBE_SCHEMA_VERSION)
        return 0;
    block = goblin_sbe_rd_u16(p);
    tpl = goblin_sbe_rd_u16(p + 2);
    v = t->v;
    memset(v, 0, sizeof(*v));
    t->used = 1;
    t->text_used = 0;
    if (tpl == GOBLIN_SBE_STATUS_REPLY || tpl == GOBLIN_SBE_BULK_REPLY) {
        if (block != 0 || len < GOBLIN_SBE_HEADER_LENGTH + 4 ||
            goblin_sbe_rd_u32(p + 8) != len - GOBLIN_SBE_HEADER_LENGTH - 4)
            return 0;
        set_str(v, tpl == GOBLIN_SBE_BULK_REPLY ? GOBLIN_RESP_BULK
                                                : GOBLIN_RESP_STATUS,
                (struct goblin_slice){p + 12, len - 12});
    } else if (tpl == GOBLIN_SBE_NIL_REPLY) {
        if (block != 0 || len != GOBLIN_SBE_HEADER_LENGTH)
            return 0;
        v->type = GOBLIN_RESP_NULL;
    } else if (tpl == GOBLIN_SBE_INT_REPLY || tpl == GOBLIN_SBE_DOUBLE_REPLY) {
        if (block != 8 || len != GOBLIN_SBE_HEADER_LENGTH + 8)
            return 0;
        if (tpl == GOBLIN_SBE_DOUBLE_REPLY) {
            set_double(t, v, goblin_sbe_rd_f64(p + 8));
        } else {
            v->type = GOBLIN_RESP_INTEGER;
            v->integer = goblin_sbe_rd_i64(p + 8);
        }
    } else {
        return 0;
    }
    *out = v;
    return 1;
}

int goblin__sbe_tree_build(struct goblin__sbe_tree *t, const void *msg,
                           size_t len, const struct goblin_resp_value **out)
{
    struct goblin_sbe_msg m;
    struct goblin_resp_value *v = NULL;
    int r;

    if (fast_scalar(t, msg, len, out))
        return 0;
    if (goblin_sbe_msg_wrap(&m, msg, len) != 0)
        return GOBLIN_EPROTO;
    switch (m.template_id) {
    case GOBLIN_SBE_NIL_REPLY:
    case GOBLIN_SBE_STATUS_REPLY:
    case GOBLIN_SBE_INT_REPLY:
    case GOBLIN_SBE_DOUBLE_REPLY:
    case GOBLIN_SBE_BULK_REPLY:
        r = build_scalar(t, &m, &v);
        break;
    case GOBLIN_SBE_ERROR_REPLY:
        r = build_error(t, &m, &v);
        break;
    case GOBLIN_SBE_ARRAY_REPLY:
        r = build_array(t, &m, &v);
        break;
    case GOBLIN_SBE_PUBLISHED_MESSAGE:
        r = build_published(t, &m, &v);
        break;
    case GOBLIN_SBE_NULLABLE_ARRAY_REPLY:
        r = build_nullable(t, &m, &v);
        break;
    case GOBLIN_SBE_SCORED_ARRAY_REPLY:
        r = build_scored(t, &m, &v);
        break;
    case GOBLIN_SBE_NULLABLE_DOUBLE_ARRAY_REPLY:
        r = build_doubles(t, &m, &v);
        break;
    case GOBLIN_SBE_MAP_REPLY:
        r = build_map(t, &m, &v);
        break;
    case GOBLIN_SBE_STRING_SCAN_REPLY:
        r = build_scan(t, &m, &v);
        break;
    case GOBLIN_SBE_SCORED_SCAN_REPLY:
        r = build_scored_scan(t, &m, &v);
        break;
    case GOBLIN_SBE_VALUE_REPLY:
        r = build_value(t, &m, &v);
        break;
    default:
        return GOBLIN_EPROTO;
    }
    if (r == 0)
        *out = v;
    return r;
}

void goblin__sbe_tree_free(struct goblin__sbe_tree *t)
{
    drop(t->alloc, t->v, t->cap * sizeof(*t->v));
    drop(t->alloc, t->text, t->text_cap);
    drop(t->alloc, t->stack, DEPTH_MAX * sizeof(struct frame));
    t->v = NULL;
    t->text = NULL;
    t->stack = NULL;
    t->cap = 0;
    t->text_cap = 0;
}
