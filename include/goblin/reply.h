/* goblin/reply.h - the reply sink: the one interface every command handler
 * writes its reply into, so that the same handler answers RESP2, RESP3 or
 * SBE, or fills an in-process result.
 *
 * A sink is any struct whose first member is `struct goblin_sink` (whose
 * only member is the ops pointer); the handler calls through the ops.
 * Aggregates are written as a header followed by their items: array(2)
 * then two items; map(n) then 2n items, key and value alternating.
 * Every op takes its pointer arguments borrowed for the call (the sink
 * copies what it keeps). Ops return nothing: a sink that runs out of
 * memory records it and reports it its own way (goblin_resp_writer_failed
 * for the RESP writer), so handlers need no error path for replies.
 *
 * How each op maps to RESP (RESP2 | RESP3):
 *   status      +OK                     | same
 *   error       -ERR text               | same (CR and LF become spaces)
 *   integer     :12                     | same
 *   dbl         $4 1.25 (bulk)          | ,1.25   (text: goblin_double_format)
 *   bulk        $n bytes                | same
 *   null        $-1                     | _
 *   null_array  *-1                     | _
 *   array       *n                      | same
 *   map         *2n                     | %n
 *   set         *n                      | ~n
 *   boolean     :1 / :0                 | #t / #f
 *   verbatim    $n bytes                | =n+4 fmt:bytes
 *   push        *n                      | >n
 *   bignum      $n digits (bulk)        | (digits   (optional op)
 */
#ifndef GOBLIN_REPLY_H
#define GOBLIN_REPLY_H

#include <stddef.h>
#include <stdint.h>

#include "goblin/common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct goblin_sink;

/* Kinds of aggregate a deferred header can become. */
enum goblin_aggregate {
    GOBLIN_AGG_ARRAY = 0,
    GOBLIN_AGG_MAP = 1, /* n counts pairs */
    GOBLIN_AGG_SET = 2,
    GOBLIN_AGG_PUSH = 3,
};

struct goblin_sink_ops {
    /* A status line without CR or LF ("OK", "PONG"). */
    void (*status)(struct goblin_sink *, const char *s, size_t len);
    /* The whole error text with its code word and no leading '-':
     * "ERR syntax error", "WRONGTYPE Operation against ...". */
    void (*error)(struct goblin_sink *, const char *s, size_t len);
    void (*integer)(struct goblin_sink *, int64_t v);
    void (*dbl)(struct goblin_sink *, double v);
    void (*bulk)(struct goblin_sink *, const void *p, size_t len);
    void (*null)(struct goblin_sink *);
    void (*null_array)(struct goblin_sink *);
    void (*array)(struct goblin_sink *, size_t n);
    void (*map)(struct goblin_sink *, size_t npairs);
    void (*set)(struct goblin_sink *, size_t n);
    void (*boolean)(struct goblin_sink *, int v);
    /* fmt is three bytes such as "txt" or "mkd" (no NUL needed). */
    void (*verbatim)(struct goblin_sink *, const char fmt[3], const void *p,
                     size_t len);
    void (*push)(struct goblin_sink *, size_t n);

    /* ---- optional: NULL means "not provided"; call them through the
     * goblin_sink_* helpers below, which fall back to the ops above. ---- */

    /* A bulk string holding v in decimal (Redis's addReplyBulkLongLong). */
    void (*bulk_int64)(struct goblin_sink *, int64_t v);
    /* A member followed by its score (WITHSCORES): bulk then dbl. */
    void (*bulk_dbl)(struct goblin_sink *, const void *p, size_t len,
                     double score);
    /* A hint that about `bytes` of reply follow; lets a buffer grow once. */
    void (*reserve)(struct goblin_sink *, size_t bytes);
    /* An aggregate header whose count is not known yet: defer() marks its
     * place and returns a token; the items follow; then set_deferred()
     * writes the header with its kind and count. Deferred headers nest and
     * must be set innermost first (in reverse order of defer). Both or
     * neither must be provided; without them handlers must count first. */
    size_t (*defer)(struct goblin_sink *);
    void (*set_deferred)(struct goblin_sink *, size_t token,
                         enum goblin_aggregate kind, size_t n);
    /* A big number given as its text (a script's {big_number=...});
     * without it, a bulk string. */
    void (*bignum)(struct goblin_sink *, const char *s, size_t len);
};

struct goblin_sink {
    const struct goblin_sink_ops *ops;
};

/* Writes the Redis error text for a GOBLIN_E* code into buf (no NUL;
 * at most cap bytes, truncated if cap is smaller) and returns the text's
 * full length. Texts are Redis's exact ones:
 *   GOBLIN_EWRONGTYPE    WRONGTYPE Operation against a key holding the
 *                        wrong kind of value
 *   GOBLIN_ENOTINT       ERR value is not an integer or out of range
 *   GOBLIN_EOVERFLOW     ERR increment or decrement would overflow
 *   GOBLIN_ENOTFLOAT     ERR value is not a valid float
 *   GOBLIN_ENANINF       ERR increment would produce NaN or Infinity
 *   GOBLIN_ENAN          ERR resulting score is not a number (NaN)
 *   GOBLIN_ENOKEY        ERR no such key
 *   GOBLIN_ESYNTAX       ERR syntax error
 *   GOBLIN_EHASHNOTINT   ERR hash value is not an integer
 *   GOBLIN_EHASHNOTFLOAT ERR hash value is not a float
 *   GOBLIN_ESTRBIG       ERR string exceeds maximum allowed size
 *                        (proto-max-bulk-len)
 *   GOBLIN_EOFFSET       ERR offset is out of range
 *   GOBLIN_ENOMEM        OOM command not allowed when used memory >
 *                        'maxmemory'.
 * and "ERR " + goblin_strerror(code) for any other code. */
GOBLIN_API size_t goblin_reply_error_text(int code, char *buf, size_t cap);

/* Room that always holds goblin_reply_error_text's text. */
#define GOBLIN_REPLY_ERROR_TEXT_MAX 128

static inline void goblin_sink_ok(struct goblin_sink *s)
{
    s->ops->status(s, "OK", 2);
}

/* The error reply for a GOBLIN_E* code (see goblin_reply_error_text). */
static inline void goblin_sink_error_code(struct goblin_sink *s, int code)
{
    char buf[GOBLIN_REPLY_ERROR_TEXT_MAX];
    size_t n = goblin_reply_error_text(code, buf, sizeof(buf));

    s->ops->error(s, buf, n < sizeof(buf) ? n : sizeof(buf));
}

static inline void goblin_sink_bulk_int64(struct goblin_sink *s, int64_t v)
{
    if (s->ops->bulk_int64 != NULL) {
        s->ops->bulk_int64(s, v);
    } else {
        char buf[24];
        int n = 0;
        uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
        char tmp[24];
        int t = 0;

        do {
            tmp[t++] = (char)('0' + u % 10);
            u /= 10;
        } while (u != 0);
        if (v < 0)
            buf[n++] = '-';
        while (t > 0)
            buf[n++] = tmp[--t];
        s->ops->bulk(s, buf, (size_t)n);
    }
}

static inline void goblin_sink_bulk_dbl(struct goblin_sink *s, const void *p,
                                        size_t len, double score)
{
    if (s->ops->bulk_dbl != NULL) {
        s->ops->bulk_dbl(s, p, len, score);
    } else {
        s->ops->bulk(s, p, len);
        s->ops->dbl(s, score);
    }
}

static inline void goblin_sink_bignum(struct goblin_sink *s, const char *p,
                                      size_t len)
{
    if (s->ops->bignum != NULL)
        s->ops->bignum(s, p, len);
    else
        s->ops->bulk(s, p, len);
}

static inline void goblin_sink_reserve(struct goblin_sink *s, size_t bytes)
{
    if (s->ops->reserve != NULL)
        s->ops->reserve(s, bytes);
}

#ifdef __cplusplus
}
#endif

#endif
