/* call_reply.c - the sink a command called by redis.call replies into.
 * Most replies are one integer, bulk string, status or null: those are
 * kept as they come (a bulk's or a status's bytes copied into the
 * buffer) and become their Lua value without being written as RESP and
 * read back. Anything else (an error, an aggregate, a double, a boolean,
 * ...) is written as RESP, in the script's RESP version, and converted
 * by goblin__lua_push_resp as before. Either way the Lua value is made
 * only after the command has returned (see redis_api.c).
 */
#include <string.h>

#include <lauxlib.h>

#include "goblin/numtext.h"
#include "script.h"

static struct goblin__call_reply *of(struct goblin_sink *s)
{
    return (struct goblin__call_reply *)s;
}

/* From the first reply that is not a plain scalar on, everything goes to
 * the RESP writer. */
static struct goblin_sink *resp(struct goblin_sink *s)
{
    struct goblin__call_reply *r = of(s);

    if (r->kind == GOBLIN__CALL_NONE)
        r->kind = GOBLIN__CALL_RESP;
    return &r->w.sink;
}

/* Whether a plain scalar is the reply: the first one written. After
 * one, a second is dropped, as reading the RESP back read only the
 * first. */
static bool first(struct goblin__call_reply *r)
{
    return r->kind == GOBLIN__CALL_NONE;
}

static void keep_bytes(struct goblin__call_reply *r, int kind, const void *p,
                       size_t len, bool one_line)
{
    r->kind = kind;
    if (len == 0)
        return;
    if (goblin_buf_reserve(r->buf, len) != 0) {
        r->buf->failed = true;
        return;
    }
    memcpy(r->buf->data, p, len);
    /* A status is one line: CR and LF become spaces, as the writer
     * makes them. */
    if (one_line)
        for (size_t i = 0; i < len; i++)
            if (r->buf->data[i] == '\r' || r->buf->data[i] == '\n')
                r->buf->data[i] = ' ';
    r->buf->len = len;
}

static void op_status(struct goblin_sink *s, const char *t, size_t len)
{
    if (first(of(s)))
        keep_bytes(of(s), GOBLIN__CALL_STATUS, t, len, true);
    else if (of(s)->kind == GOBLIN__CALL_RESP)
        of(s)->w.sink.ops->status(&of(s)->w.sink, t, len);
}

static void op_error(struct goblin_sink *s, const char *t, size_t len)
{
    if (first(of(s)) || of(s)->kind == GOBLIN__CALL_RESP)
        resp(s)->ops->error(resp(s), t, len);
}

static void op_integer(struct goblin_sink *s, int64_t v)
{
    if (first(of(s))) {
        of(s)->kind = GOBLIN__CALL_INT;
        of(s)->i = v;
    } else if (of(s)->kind == GOBLIN__CALL_RESP) {
        of(s)->w.sink.ops->integer(&of(s)->w.sink, v);
    }
}

static void op_bulk(struct goblin_sink *s, const void *p, size_t len)
{
    if (first(of(s)))
        keep_bytes(of(s), GOBLIN__CALL_BULK, p, len, false);
    else if (of(s)->kind == GOBLIN__CALL_RESP)
        of(s)->w.sink.ops->bulk(&of(s)->w.sink, p, len);
}

static void op_bulk_int64(struct goblin_sink *s, int64_t v)
{
    char digits[24];

    if (first(of(s)))
        keep_bytes(of(s), GOBLIN__CALL_BULK, digits,
                   goblin_int64_format(digits, v), false);
    else if (of(s)->kind == GOBLIN__CALL_RESP)
        goblin_sink_bulk_int64(&of(s)->w.sink, v);
}

static void op_null(struct goblin_sink *s)
{
    if (first(of(s)))
        of(s)->kind = GOBLIN__CALL_NULL;
    else if (of(s)->kind == GOBLIN__CALL_RESP)
        of(s)->w.sink.ops->null(&of(s)->w.sink);
}

static void op_null_array(struct goblin_sink *s)
{
    if (first(of(s)))
        of(s)->kind = GOBLIN__CALL_NULL;
    else if (of(s)->kind == GOBLIN__CALL_RESP)
        of(s)->w.sink.ops->null_array(&of(s)->w.sink);
}

/* The rest only ever go to the writer (when they are the reply or
 * inside one). */
#define TO_RESP(s) (first(of(s)) || of(s)->kind == GOBLIN__CALL_RESP)

static void op_dbl(struct goblin_sink *s, double v)
{
    if (TO_RESP(s))
        resp(s)->ops->dbl(resp(s), v);
}

static void op_array(struct goblin_sink *s, size_t n)
{
    if (TO_RESP(s))
        resp(s)->ops->array(resp(s), n);
}

static void op_map(struct goblin_sink *s, size_t n)
{
    if (TO_RESP(s))
        resp(s)->ops->map(resp(s), n);
}

static void op_set(struct goblin_sink *s, size_t n)
{
    if (TO_RESP(s))
        resp(s)->ops->set(resp(s), n);
}

static void op_boolean(struct goblin_sink *s, int v)
{
    if (TO_RESP(s))
        resp(s)->ops->boolean(resp(s), v);
}

static void op_verbatim(struct goblin_sink *s, const char fmt[3],
                        const void *p, size_t len)
{
    if (TO_RESP(s))
        resp(s)->ops->verbatim(resp(s), fmt, p, len);
}

static void op_push(struct goblin_sink *s, size_t n)
{
    if (TO_RESP(s))
        resp(s)->ops->push(resp(s), n);
}

static void op_bulk_dbl(struct goblin_sink *s, const void *p, size_t len,
                        double score)
{
    if (TO_RESP(s))
        goblin_sink_bulk_dbl(resp(s), p, len, score);
}

static void op_reserve(struct goblin_sink *s, size_t bytes)
{
    if (of(s)->kind == GOBLIN__CALL_RESP)
        goblin_sink_reserve(&of(s)->w.sink, bytes);
}

static size_t op_defer(struct goblin_sink *s)
{
    return resp(s)->ops->defer(resp(s));
}

static void op_set_deferred(struct goblin_sink *s, size_t token,
                            enum goblin_aggregate kind, size_t n)
{
    resp(s)->ops->set_deferred(resp(s), token, kind, n);
}

static void op_bignum(struct goblin_sink *s, const char *t, size_t len)
{
    if (TO_RESP(s))
        goblin_sink_bignum(resp(s), t, len);
}

static const struct goblin_sink_ops call_reply_ops = {
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
    .bulk_int64 = op_bulk_int64,
    .bulk_dbl = op_bulk_dbl,
    .reserve = op_reserve,
    .defer = op_defer,
    .set_deferred = op_set_deferred,
    .bignum = op_bignum,
};

struct goblin_sink *goblin__call_reply_init(struct goblin__call_reply *r,
                                            struct goblin_buf *buf,
                                            int resp_version)
{
    r->sink.ops = &call_reply_ops;
    r->kind = GOBLIN__CALL_NONE;
    r->buf = buf;
    r->resp = resp_version;
    buf->len = 0;
    buf->failed = false;
    goblin_resp_writer_init(&r->w, buf, resp_version);
    return &r->sink;
}

int goblin__call_reply_push(lua_State *L, struct goblin__call_reply *r)
{
    if (r->buf->failed || r->kind == GOBLIN__CALL_NONE ||
        (r->kind == GOBLIN__CALL_RESP && r->buf->len == 0))
        return -1;
    switch (r->kind) {
    case GOBLIN__CALL_INT:
        lua_pushnumber(L, (lua_Number)r->i);
        return 0;
    case GOBLIN__CALL_BULK:
        lua_pushlstring(L, r->buf->len > 0 ? r->buf->data : "", r->buf->len);
        return 0;
    case GOBLIN__CALL_NULL:
        /* RESP2's null bulk and null array are false, RESP3's null nil. */
        if (r->resp == 3)
            lua_pushnil(L);
        else
            lua_pushboolean(L, 0);
        return 0;
    case GOBLIN__CALL_STATUS:
        lua_newtable(L);
        lua_pushlstring(L, r->buf->len > 0 ? r->buf->data : "", r->buf->len);
        lua_setfield(L, -2, "ok");
        return 0;
    default:
        goblin__lua_push_resp(L, r->buf->data, r->buf->len);
        return r->buf->data[0] == '-';
    }
}
