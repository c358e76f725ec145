/* writer_put.h - the byte writers of the RESP reply writer (writer.c),
 * shared with the list replies that write a whole array at once
 * (commands/reply_list.c). Each writes at p, which has room for it, and
 * returns the bytes written. */
#ifndef GOBLIN_RESP_WRITER_PUT_H
#define GOBLIN_RESP_WRITER_PUT_H

#include <stdint.h>
#include <string.h>

#include "goblin/numtext.h"
#include "goblin/resp.h"
#include "util/copy_short.h"
#include "util/numtext_internal.h"

#define GOBLIN__RESP_HEADER_MAX 24 /* prefix, 20 digits, CRLF */
/* A RESP2 or RESP3 double: its text and at most 8 bytes of framing. */
#define GOBLIN__RESP_DOUBLE_MAX (GOBLIN_DOUBLE_TEXT_MAX + 8)

/* prefix, n in decimal, CRLF. */
static inline size_t goblin__resp_put_header(char *p, char prefix, uint64_t n)
{
    size_t k;

    p[0] = prefix;
    if (n < 10) {
        p[1] = (char)('0' + n);
        p[2] = '\r';
        p[3] = '\n';
        return 4;
    }
    if (n < 100) {
        p[1] = (char)('0' + n / 10);
        p[2] = (char)('0' + n % 10);
        p[3] = '\r';
        p[4] = '\n';
        return 5;
    }
    k = goblin__u64_format(p + 1, n);
    p[k + 1] = '\r';
    p[k + 2] = '\n';
    return k + 3;
}

/* $len CRLF bytes CRLF. */
static inline size_t goblin__resp_put_bulk(char *p, const void *data,
                                           size_t len)
{
    size_t h = goblin__resp_put_header(p, '$', len);

    goblin__copy_short(p + h, data, len);
    p[h + len] = '\r';
    p[h + len + 1] = '\n';
    return h + len + 2;
}

/* A command's words as a multibulk request, at p, which has room for
 * GOBLIN__RESP_HEADER_MAX bytes plus each word's length and
 * GOBLIN__RESP_HEADER_MAX + 2 more. Returns the bytes written. */
static inline size_t goblin__resp_put_command(char *p, size_t argc,
                                              const struct goblin_slice *argv)
{
    size_t h = goblin__resp_put_header(p, '*', argc);

    for (size_t i = 0; i < argc; i++)
        h += goblin__resp_put_bulk(p + h, argv[i].ptr, argv[i].len);
    return h;
}

/* Room for n more bytes at the end of b, or NULL when b failed: after
 * a failure nothing more of the reply is written. */
static inline char *goblin__resp_room(struct goblin_buf *b, size_t n)
{
    if (b->failed)
        return NULL;
    if (b->cap - b->len < n && goblin_buf_reserve(b, n) != 0)
        return NULL;
    return b->data + b->len;
}

/* A double's text t[0..n) as RESP2 sends it (a bulk string) or as RESP3
 * does (",text CRLF"). */
static inline size_t goblin__resp_put_double_text(char *p, int proto,
                                                  const char *t, size_t n)
{
    if (proto != 3)
        return goblin__resp_put_bulk(p, t, n);
    p[0] = ',';
    goblin__copy_short(p + 1, t, n);
    p[n + 1] = '\r';
    p[n + 2] = '\n';
    return n + 3;
}

/* A double, as goblin__resp_put_double_text; RESP3's text is formatted
 * in place. */
static inline size_t goblin__resp_put_double(char *p, int proto, double v)
{
    char text[GOBLIN_DOUBLE_TEXT_MAX];
    size_t k;

    if (proto != 3)
        return goblin__resp_put_double_text(p, proto, text,
                                            goblin_double_format(text, v));
    k = goblin_double_format(p + 1, v);
    p[0] = ',';
    p[k + 1] = '\r';
    p[k + 2] = '\n';
    return k + 3;
}

/* The writer whose sink s is, or NULL when s is another kind of sink. */
struct goblin_resp_writer *goblin__resp_writer_of(struct goblin_sink *s);

#endif
