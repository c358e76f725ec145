/* respond.c - the reply helpers of respond.h over the session's sink, and
 * argument helpers shared by the handlers. */
#include <stdio.h>
#include <string.h>

#include "goblin/numtext.h"
#include "goblin/reply.h"
#include "respond.h"
#include "engine/session.h"

#define SINK(x) ((x)->sink)

void goblin__reply_ok(goblin__exec *x)
{
    SINK(x)->ops->status(SINK(x), "OK", 2);
}

static void count_error(goblin__exec *x, const char *text, size_t len)
{
    goblin__errstat_count(x->eng, text, len);
    x->failed = true;
}

static void error_len(goblin__exec *x, const char *text, size_t len)
{
    count_error(x, text, len);
    SINK(x)->ops->error(SINK(x), text, len);
}

void goblin__reply_error(goblin__exec *x, const char *text)
{
    error_len(x, text, strlen(text));
}

void goblin__reply_errorf(goblin__exec *x, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    error_len(x, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

void goblin__reply_code(goblin__exec *x, int code)
{
    char buf[GOBLIN_REPLY_ERROR_TEXT_MAX];
    size_t n = goblin_reply_error_text(code, buf, sizeof(buf));

    error_len(x, buf, n < sizeof(buf) ? n : sizeof(buf));
}

void goblin__reply_int(goblin__exec *x, int64_t v)
{
    SINK(x)->ops->integer(SINK(x), v);
}

void goblin__reply_bulk(goblin__exec *x, const void *p, size_t n)
{
    SINK(x)->ops->bulk(SINK(x), p, n);
}

void goblin__reply_cstr(goblin__exec *x, const char *s)
{
    SINK(x)->ops->bulk(SINK(x), s, strlen(s));
}

void goblin__reply_slice(goblin__exec *x, struct goblin_slice s)
{
    SINK(x)->ops->bulk(SINK(x), s.ptr, s.len);
}

void goblin__reply_null(goblin__exec *x)
{
    SINK(x)->ops->null(SINK(x));
}

void goblin__reply_null_array(goblin__exec *x)
{
    SINK(x)->ops->null_array(SINK(x));
}

void goblin__reply_array(goblin__exec *x, size_t n)
{
    SINK(x)->ops->array(SINK(x), n);
}

void goblin__reply_map(goblin__exec *x, size_t n)
{
    SINK(x)->ops->map(SINK(x), n);
}

void goblin__reply_set(goblin__exec *x, size_t n)
{
    SINK(x)->ops->set(SINK(x), n);
}

void goblin__reply_double(goblin__exec *x, double v)
{
    SINK(x)->ops->dbl(SINK(x), v);
}

void goblin__reply_verbatim(goblin__exec *x, const char *p, size_t n)
{
    SINK(x)->ops->verbatim(SINK(x), "txt", p, n);
}

void goblin__reply_help(goblin__exec *x, const char *const *lines, size_t n)
{
    size_t i;

    goblin__reply_array(x, n);
    for (i = 0; i < n; i++)
        goblin__reply_status(x, lines[i]);
}

int goblin__reply_proto(const goblin__exec *x)
{
    return x->resp;
}

bool goblin__arg_is(struct goblin_slice arg, const char *lit)
{
    const unsigned char *p = arg.ptr;
    size_t i;

    for (i = 0; i < arg.len; i++) {
        unsigned char c = p[i];

        if (c >= 'A' && c <= 'Z')
            c += 'a' - 'A';
        if (lit[i] == '\0' || (unsigned char)lit[i] != c)
            return false;
    }
    return lit[arg.len] == '\0';
}

bool goblin__arg_int64(goblin__exec *x, struct goblin_slice arg,
                       int64_t *out, const char *msg)
{
    if (goblin_int64_parse(arg.ptr, arg.len, out) == 0)
        return true;
    goblin__reply_error(x, msg != NULL ? msg : GOBLIN__ERR_NOTINT);
    return false;
}

bool goblin__rand_count_ok(goblin__exec *x, int64_t count, bool pairs)
{
    if (count == INT64_MIN) {
        goblin__reply_error(x, "ERR value is out of range, value must "
                               "between -9223372036854775807 and "
                               "9223372036854775807");
        return false;
    }
    /* With the option each answer is a pair: Redis caps the count so the
     * reply's length cannot overflow. */
    if (pairs && (count < -INT64_MAX / 2 || count > INT64_MAX / 2)) {
        goblin__reply_error(x, "ERR value is out of range");
        return false;
    }
    return true;
}

bool goblin__arg_rand_count(goblin__exec *x, int argc,
                            const struct goblin_slice *argv, const char *opt,
                            int64_t *count)
{
    if (!goblin__arg_int64(x, argv[2], count, NULL))
        return false;
    if (*count == INT64_MIN)
        return goblin__rand_count_ok(x, *count, false);
    if (argc > 4 || (argc == 4 && !goblin__arg_is(argv[3], opt))) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return false;
    }
    return goblin__rand_count_ok(x, *count, argc == 4);
}

bool goblin__arg_range(goblin__exec *x, struct goblin_slice arg, int64_t lo,
                       int64_t hi, int64_t *out, const char *msg)
{
    int64_t v;

    if (goblin_int64_parse(arg.ptr, arg.len, &v) != 0 || v < lo || v > hi) {
        goblin__reply_error(x, msg != NULL ? msg : GOBLIN__ERR_NOTINT);
        return false;
    }
    *out = v;
    return true;
}

int goblin__cstr_len(struct goblin_slice arg)
{
    const void *nul = arg.len > 0 ? memchr(arg.ptr, '\0', arg.len) : NULL;
    size_t n = nul != NULL ? (size_t)((const char *)nul -
                                      (const char *)arg.ptr)
                           : arg.len;

    return n > 256 ? 256 : (int)n;
}
