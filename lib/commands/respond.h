/* respond.h - how handlers answer: thin helpers over the session's reply
 * sink that also keep the engine's error statistics.
 *
 * Every error a command sends goes through goblin__reply_error*, which
 * marks the command failed (INFO commandstats failed_calls), counts it by
 * its first word (INFO errorstats) and, like Redis's addReplyErrorLength,
 * turns CR and LF in the text into spaces so the reply stays one line.
 * Texts are given without the leading '-' and with their code word
 * ("ERR syntax error").
 */
#ifndef GOBLIN_RESPOND_H
#define GOBLIN_RESPOND_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "command.h"
#include "goblin/reply.h"

/* A sorted-set member with its score, as list replies carry them. */
struct goblin__scored {
    struct goblin_slice member;
    double score;
};

/* List replies a protocol may carry as typed messages of their own
 * (goblin__exec.typed); each writes one whole reply. */
struct goblin__typed_replies {
    void (*strings)(goblin__exec *x, const struct goblin_slice *v, size_t n,
                    bool nullable);
    void (*scored)(goblin__exec *x, const struct goblin__scored *v,
                   size_t n);
    void (*scan)(goblin__exec *x, uint64_t cursor,
                 const struct goblin_slice *v, size_t n);
    void (*scored_scan)(goblin__exec *x, uint64_t cursor,
                        const struct goblin__scored *v, size_t n);
};

/* ---- list replies (reply_list.c): through x->typed when it is set,
 * else item by item, in the shape the session's RESP version asks ---- */

/* An array of n bulk strings; with nullable, a NULL ptr is a null. */
void goblin__reply_strings(goblin__exec *x, const struct goblin_slice *v,
                           size_t n, bool nullable);
/* Members, with their scores when withscores: RESP3 [member, score]
 * pairs, RESP2 a flat array with scores as bulk strings. Without scores
 * v may be overwritten (members packed in place). */
void goblin__reply_scored(goblin__exec *x, struct goblin__scored *v,
                          size_t n, bool withscores);
/* A SCAN page: the cursor as a bulk string, then the n strings. */
void goblin__reply_scan(goblin__exec *x, uint64_t cursor,
                        const struct goblin_slice *v, size_t n);
/* A ZSCAN page: member, score (a bulk string, as Redis sends it), ... */
void goblin__reply_scored_scan(goblin__exec *x, uint64_t cursor,
                               const struct goblin__scored *v, size_t n);

void goblin__reply_ok(goblin__exec *x);
/* Inline, so the length of a literal ("PONG") is known where it is
 * written instead of measured per reply. */
static inline void goblin__reply_status(goblin__exec *x, const char *text)
{
    x->sink->ops->status(x->sink, text, strlen(text));
}
void goblin__reply_error(goblin__exec *x, const char *text);
void goblin__reply_errorf(goblin__exec *x, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The Redis error for a GOBLIN_E* code (goblin_sink_error_code's text). */
void goblin__reply_code(goblin__exec *x, int code);
void goblin__reply_int(goblin__exec *x, int64_t v);
void goblin__reply_bulk(goblin__exec *x, const void *p, size_t n);
void goblin__reply_cstr(goblin__exec *x, const char *s);
void goblin__reply_slice(goblin__exec *x, struct goblin_slice s);
/* A null bulk string: "$-1" in RESP2, "_" in RESP3. */
void goblin__reply_null(goblin__exec *x);
/* A null array: "*-1" in RESP2, "_" in RESP3. */
void goblin__reply_null_array(goblin__exec *x);
void goblin__reply_array(goblin__exec *x, size_t n);
/* A map of n pairs: an array of 2n elements in RESP2. */
void goblin__reply_map(goblin__exec *x, size_t n);
/* A set: an array in RESP2. */
void goblin__reply_set(goblin__exec *x, size_t n);
/* A double: a bulk string in RESP2, formatted as Redis does. */
void goblin__reply_double(goblin__exec *x, double v);
/* Text for humans (INFO, CLIENT LIST): a bulk string in RESP2, a verbatim
 * "txt" string in RESP3. */
void goblin__reply_verbatim(goblin__exec *x, const char *p, size_t n);

/* A HELP reply: an array of status lines, as Redis's addReplyHelp. */
void goblin__reply_help(goblin__exec *x, const char *const *lines, size_t n);

/* The session's RESP version (2 or 3). */
int goblin__reply_proto(const goblin__exec *x);

/* True when arg equals lit (lower case) ignoring ASCII case. */
bool goblin__arg_is(struct goblin_slice arg, const char *lit);

/* Parses arg as a Redis integer (string2ll); on failure replies msg, or
 * "ERR value is not an integer or out of range" when msg is NULL, and
 * returns false. */
bool goblin__arg_int64(goblin__exec *x, struct goblin_slice arg,
                       int64_t *out, const char *msg);

/* Like goblin__arg_int64 but also requires lo <= value <= hi; out of range
 * replies msg too (or "ERR value is out of range, must be positive" style
 * texts the caller passes). */
bool goblin__arg_range(goblin__exec *x, struct goblin_slice arg, int64_t lo,
                       int64_t hi, int64_t *out, const char *msg);

/* The count and option of HRANDFIELD / ZRANDMEMBER key count [opt]
 * (argc 3 or 4), checked in Redis's order with its texts; opt is
 * "withvalues" or "withscores". Replies the error and returns false on
 * failure. */
bool goblin__arg_rand_count(goblin__exec *x, int argc,
                            const struct goblin_slice *argv, const char *opt,
                            int64_t *count);

/* The count of HRANDFIELD / ZRANDMEMBER as Redis bounds it (INT64_MIN
 * cannot be negated; with values or scores, pairs, |count| <=
 * INT64_MAX / 2); replies Redis's text and returns false outside. */
bool goblin__rand_count_ok(goblin__exec *x, int64_t count, bool pairs);

/* The length of arg as Redis's "%s" of it shows it: up to the first NUL
 * byte (Redis formats arguments as C strings), as an int for "%.*s". */
int goblin__cstr_len(struct goblin_slice arg);

/* The Redis version Goblin answers as, in INFO and HELLO: every reply and
 * error text follows it (docs/errors.md, "Which Redis version Goblin
 * follows"). Goblin's own version is INFO's goblin_version. */
#define GOBLIN__REDIS_VERSION "7.0.15"

/* Redis's common texts. */
#define GOBLIN__ERR_SYNTAX "ERR syntax error"
#define GOBLIN__ERR_NOTINT "ERR value is not an integer or out of range"
#define GOBLIN__ERR_CLIENT_NAME                                               \
    "ERR Client names cannot contain spaces, newlines or special characters."
#define GOBLIN__ERR_WRONGTYPE                                                 \
    "WRONGTYPE Operation against a key holding the wrong kind of value"

#endif
