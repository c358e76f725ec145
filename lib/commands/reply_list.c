/* reply_list.c - the list replies of respond.h that command executions
 * share: arrays of strings, members with scores and SCAN pages.
 *
 * A session whose protocol has typed messages for them (SBE: ArrayReply,
 * NullableArrayReply, ScoredArrayReply, StringScanReply, ScoredScanReply)
 * sets x->typed, and the whole list goes out as one message without being
 * recorded item by item; every other sink gets the items one by one, in
 * the shape Redis writes for the session's RESP version; the RESP
 * writer itself (a session's own replies) gets the whole array written
 * in one reservation, with no call per item.
 */
#include "goblin/numtext.h"
#include "respond.h"
#include "engine/session.h"
#include "resp/writer_put.h"

#define HDR GOBLIN__RESP_HEADER_MAX

/* The RESP writer of x's sink when it speaks x's protocol, or NULL (the
 * items then go one by one, through the sink's ops). */
static struct goblin_buf *resp_buf(goblin__exec *x)
{
    struct goblin_resp_writer *w = goblin__resp_writer_of(x->sink);

    return w != NULL && w->proto == x->resp ? w->out : NULL;
}

/* The bytes of a bulk string of len bytes: exact below 100, else a
 * bound. */
static inline size_t bulk_size(size_t len)
{
    return len + (len < 10 ? 6 : len < 100 ? 7 : HDR + 2);
}

/* goblin__reply_strings into a RESP writer b. */
static void resp_strings(goblin__exec *x, struct goblin_buf *b,
                         const struct goblin_slice *v, size_t n,
                         bool nullable)
{
    char *p;

    if ((p = goblin__resp_room(b, HDR)) == NULL)
        return;
    b->len += goblin__resp_put_header(p, '*', n);
    for (size_t i = 0; i < n; i++) {
        if (nullable && v[i].ptr == NULL) {
            goblin__reply_null(x); /* the writer's own op, into b */
            continue;
        }
        if (v[i].len > SIZE_MAX - HDR - 2) {
            b->failed = true;
            return;
        }
        if ((p = goblin__resp_room(b, bulk_size(v[i].len))) == NULL)
            return;
        b->len += goblin__resp_put_bulk(p, v[i].ptr, v[i].len);
    }
}

/* goblin__reply_scored into a RESP writer b. A score's text is made
 * first, so its item asks for exactly the room it takes (each item
 * asking for what it takes keeps a reply that fits a transport's buffer,
 * goblin__output_redirect, there). */
static void resp_scored(goblin__exec *x, struct goblin_buf *b,
                        const struct goblin__scored *v, size_t n,
                        bool withscores)
{
    bool pairs = withscores && x->resp == 3;
    char text[GOBLIN_DOUBLE_TEXT_MAX], *p;
    size_t t = 0, need, k;

    if ((p = goblin__resp_room(b, HDR)) == NULL)
        return;
    b->len += goblin__resp_put_header(p, '*',
                                      withscores && !pairs ? 2 * n : n);
    for (size_t i = 0; i < n; i++) {
        struct goblin_slice m = v[i].member;

        if (m.len > SIZE_MAX - 2 * HDR - sizeof(text) - 8) {
            b->failed = true;
            return;
        }
        need = bulk_size(m.len);
        if (withscores) {
            t = goblin_double_format(text, v[i].score);
            need += pairs ? 4 + t + 3 : bulk_size(t);
        }
        if ((p = goblin__resp_room(b, need)) == NULL)
            return;
        k = 0;
        if (pairs) {
            memcpy(p, "*2\r\n", 4);
            k = 4;
        }
        k += goblin__resp_put_bulk(p + k, m.ptr, m.len);
        if (withscores)
            k += goblin__resp_put_double_text(p + k, x->resp, text, t);
        b->len += k;
    }
}

void goblin__reply_strings(goblin__exec *x, const struct goblin_slice *v,
                           size_t n, bool nullable)
{
    struct goblin_buf *b;
    size_t i;

    if (x->typed != NULL) {
        x->typed->strings(x, v, n, nullable);
        return;
    }
    if ((b = resp_buf(x)) != NULL) {
        resp_strings(x, b, v, n, nullable);
        return;
    }
    goblin__reply_array(x, n);
    for (i = 0; i < n; i++) {
        if (nullable && v[i].ptr == NULL)
            goblin__reply_null(x);
        else
            goblin__reply_slice(x, v[i]);
    }
}

void goblin__reply_scored(goblin__exec *x, struct goblin__scored *v,
                          size_t n, bool withscores)
{
    bool pairs = withscores && x->resp == 3;
    struct goblin_slice *m = (struct goblin_slice *)(void *)v;
    struct goblin_buf *b;
    size_t i;

    if (x->typed != NULL && withscores) {
        x->typed->scored(x, v, n);
        return;
    }
    if (x->typed != NULL) {
        /* Members only: packed in place over the pairs. */
        for (i = 0; i < n; i++)
            m[i] = v[i].member;
        x->typed->strings(x, m, n, false);
        return;
    }
    if ((b = resp_buf(x)) != NULL) {
        resp_scored(x, b, v, n, withscores);
        return;
    }
    goblin__reply_array(x, withscores && !pairs ? 2 * n : n);
    for (i = 0; i < n; i++) {
        if (pairs)
            goblin__reply_array(x, 2);
        goblin__reply_slice(x, v[i].member);
        if (withscores)
            goblin__reply_double(x, v[i].score);
    }
}

/* The cursor of a SCAN reply, as a bulk string, after the header of the
 * two-element page. */
void goblin__reply_cursor(goblin__exec *x, uint64_t c)
{
    char buf[GOBLIN_INT64_TEXT_MAX];
    size_t n = 0, i;
    char tmp[GOBLIN_INT64_TEXT_MAX];

    do {
        tmp[n++] = (char)('0' + c % 10);
        c /= 10;
    } while (c != 0);
    for (i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    goblin__reply_array(x, 2);
    goblin__reply_bulk(x, buf, n);
}

void goblin__reply_scan(goblin__exec *x, uint64_t c,
                        const struct goblin_slice *v, size_t n)
{
    size_t i;

    if (x->typed != NULL) {
        x->typed->scan(x, c, v, n);
        return;
    }
    goblin__reply_cursor(x, c);
    goblin__reply_array(x, n);
    for (i = 0; i < n; i++)
        goblin__reply_slice(x, v[i]);
}

void goblin__reply_scored_scan(goblin__exec *x, uint64_t c,
                               const struct goblin__scored *v, size_t n)
{
    char buf[GOBLIN_DOUBLE_TEXT_MAX];
    size_t i;

    if (x->typed != NULL) {
        x->typed->scored_scan(x, c, v, n);
        return;
    }
    goblin__reply_cursor(x, c);
    goblin__reply_array(x, 2 * n);
    for (i = 0; i < n; i++) {
        goblin__reply_slice(x, v[i].member);
        goblin__reply_bulk(x, buf, goblin_double_format(buf, v[i].score));
    }
}
