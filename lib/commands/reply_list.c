/* reply_list.c - the list replies of respond.h that command executions
 * share: arrays of strings, members with scores and SCAN pages.
 *
 * A session whose protocol has typed messages for them (SBE: ArrayReply,
 * NullableArrayReply, ScoredArrayReply, StringScanReply, ScoredScanReply)
 * sets x->typed, and the whole list goes out as one message without being
 * recorded item by item; every other sink gets the items one by one, in
 * the shape Redis writes for the session's RESP version.
 */
#include "goblin/numtext.h"
#include "respond.h"
#include "engine/session.h"

void goblin__reply_strings(goblin__exec *x, const struct goblin_slice *v,
                           size_t n, bool nullable)
{
    size_t i;

    if (x->typed != NULL) {
        x->typed->strings(x, v, n, nullable);
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
