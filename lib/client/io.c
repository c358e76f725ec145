/* io.c - moving a client's bytes: sending what is queued, reading replies
 * one at a time as trees (RESP through the RESP reader, SBE through
 * sbe_tree.c; the SBE reply of a typed call that returns an array goes
 * straight into its array instead, typed_reply.c), generic calls and
 * pipelines (goblin/client.h).
 *
 * Invariants: a reply handed out stays at in[in_pos, in_pos + last) until
 * the next read consumes it; only then may the buffer be compacted or
 * grown. pending counts requests queued or sent whose replies are not
 * read yet.
 */
#include <stdio.h>
#include <string.h>

#include "client/client.h"
#include "ring/ring_fast.h"
#include "sbe/goblin_sbe_gen.h"

#define READ_CHUNK (16 * 1024)

const char *goblin_client_error(const goblin_client *c)
{
    return c->err;
}

enum goblin_client_protocol goblin_client_protocol(const goblin_client *c)
{
    return c->proto;
}

int goblin_client_flush(goblin_client *c)
{
    int rc;

    if (c->failed)
        return c->failed;
    if (c->out.len == 0) {
        /* Requests encoded straight into SQ are committed, not yet
         * published. */
        if (c->ring != NULL)
            goblin__ring_flush_fast(c->ring);
        return 0;
    }
    goblin__client_ring_let_go(c); /* sending may drain CQ */
    rc = c->tr->send(c, c->out.data, c->out.len);
    if (rc < 0)
        return goblin__client_fail(c, rc, "connection lost while sending");
    c->out.len = 0;
    return 0;
}

/* Reads more bytes, making room for at least want of them. */
static int fill(goblin_client *c, size_t want)
{
    size_t left = c->in.len - c->in_pos;
    int64_t n;

    if (c->in_pos > 0) {
        if (left > 0)
            memmove(c->in.data, c->in.data + c->in_pos, left);
        c->in.len = left;
        c->in_pos = 0;
    }
    for (;;) {
        if (want < READ_CHUNK)
            want = READ_CHUNK;
        if (want < c->read_min)
            want = c->read_min;
        if (goblin_buf_reserve(&c->in, want) != 0)
            return goblin__client_fail(c, GOBLIN_ENOMEM, "out of memory");
        n = c->tr->recv(c, c->in.data + c->in.len, c->in.cap - c->in.len);
        if (n != GOBLIN_ERANGE)
            break;
        want = c->read_min; /* a ring record bigger than the room */
    }
    if (n == GOBLIN_ETIMEDOUT && c->soft_timeout)
        return (int)n;
    if (n == GOBLIN_ETIMEDOUT)
        return goblin__client_fail(c, (int)n, "timed out waiting for a "
                                              "reply");
    if (n < 0)
        return goblin__client_fail(c, (int)n, "connection closed");
    c->in.len += (size_t)n;
    return 0;
}

/* The body of an SBE reply frame into *v: a scalar in place, what the
 * typed call reading it wants (typed_reply.c), else a tree. 0 or a
 * code. */
static inline int sbe_decode(goblin_client *c, const uint8_t *p, size_t n,
                             const struct goblin_resp_value **v)
{
    int rc;

    if (goblin__sbe_tree_scalar(&c->tree, p, n, v))
        return 0;
    if (__builtin_expect(c->want != GOBLIN__WANT_TREE, 0) &&
        (rc = goblin__client_typed_reply(c, p, n, v)) != 0)
        return rc < 0 ? rc : 0;
    return goblin__sbe_tree_build(&c->tree, p, n, v);
}

/* One SBE reply frame, if whole: 1 with *v, 0 for more bytes (*want says
 * how many in all), or a failure. */
static int sbe_reply(goblin_client *c, const struct goblin_resp_value **v,
                     size_t *want)
{
    const uint8_t *p = (const uint8_t *)c->in.data + c->in_pos;
    size_t avail = c->in.len - c->in_pos;
    uint32_t n;
    int rc;

    if (avail < 4)
        return 0;
    n = goblin_sbe_rd_u32(p);
    if (n > c->max_frame)
        return goblin__client_fail(c, GOBLIN_EPROTO, "reply frame too long");
    if (avail - 4 < n) {
        *want = 4 + (size_t)n - avail;
        return 0;
    }
    rc = sbe_decode(c, p + 4, n, v);
    if (rc < 0)
        return goblin__client_fail(c, rc, "malformed SBE reply");
    c->last = 4 + (size_t)n;
    return 1;
}

static int resp_reply(goblin_client *c, const struct goblin_resp_value **v)
{
    int64_t n = goblin_resp_reply_parse(c->reader, c->in.data + c->in_pos,
                                        c->in.len - c->in_pos, v);

    if (n < 0)
        return goblin__client_fail(c, (int)n, "malformed RESP reply");
    c->last = (size_t)n;
    return n > 0;
}

void goblin__client_ring_let_go(goblin_client *c)
{
    if (c->cq_held) {
        goblin_ring_release(c->ring);
        c->cq_held = false;
    }
}

/* Ring, SBE, nothing buffered: the next reply decoded where it lies in
 * CQ, when its record holds one whole frame (the usual case: the server
 * sends each reply as one record). 1 with *v, 0 when the record was
 * copied into the input buffer for the general path instead, or a
 * failure. */
static int sbe_reply_in_place(goblin_client *c,
                              const struct goblin_resp_value **v)
{
    struct goblin_slice rec;
    const uint8_t *p;
    int rc = goblin__client_ring_next(c, &rec);

    if (rc == GOBLIN_ETIMEDOUT && c->soft_timeout)
        return rc;
    if (rc < 0)
        return goblin__client_fail(c, rc, "connection closed");
    p = rec.ptr;
    if (rec.len >= 4 && goblin_sbe_rd_u32(p) == rec.len - 4 &&
        rec.len - 4 <= c->max_frame) {
        rc = sbe_decode(c, p + 4, rec.len - 4, v);
        if (rc < 0)
            return goblin__client_fail(c, rc, "malformed SBE reply");
        c->cq_held = true;
        return 1;
    }
    if (goblin_buf_append(&c->in, rec.ptr, rec.len) != 0)
        return goblin__client_fail(c, GOBLIN_ENOMEM, "out of memory");
    goblin_ring_release(c->ring);
    return 0;
}

/* Ring, RESP, nothing buffered: the next reply parsed where it lies in
 * CQ when its record holds exactly one whole reply (the usual case for
 * one request at a time). 1 with *v, 0 when the record was copied into
 * the input buffer for the general path instead (a reply split across
 * records or several in one: the reader, reset or resumable, then reads
 * the same bytes from the buffer's start), or a failure. */
static int resp_reply_in_place(goblin_client *c,
                               const struct goblin_resp_value **v)
{
    struct goblin_slice rec;
    int64_t n;
    int rc = goblin__client_ring_next(c, &rec);

    if (rc == GOBLIN_ETIMEDOUT && c->soft_timeout)
        return rc;
    if (rc < 0)
        return goblin__client_fail(c, rc, "connection closed");
    n = goblin_resp_reply_parse(c->reader, rec.ptr, rec.len, v);
    if (n < 0)
        return goblin__client_fail(c, (int)n, "malformed RESP reply");
    if ((size_t)n == rec.len) {
        c->cq_held = true;
        return 1;
    }
    if (goblin_buf_append(&c->in, rec.ptr, rec.len) != 0)
        return goblin__client_fail(c, GOBLIN_ENOMEM, "out of memory");
    goblin_ring_release(c->ring);
    return 0;
}

/* Ring, nothing queued or buffered, and the next reply already in CQ
 * (the usual case of one request at a time): the record is taken with
 * the ring's inline steps and read where it lies, as sbe_reply_in_place
 * and resp_reply_in_place do. 1 with *v, 0 for the general path
 * (nothing is lost: a record that is not one whole reply is moved into
 * the input buffer, as there), or a failure. */
static inline int ring_fast(goblin_client *c,
                                const struct goblin_resp_value **v)
{
    struct goblin_slice rec;
    const uint8_t *p;
    int rc;

    if (c->out.len != 0 || c->in_pos + c->last != c->in.len)
        return 0;
    if (c->cq_held) {
        goblin__ring_release_fast(c->ring);
        c->cq_held = false;
    }
    goblin__ring_flush_fast(c->ring);
    c->in_pos = c->in.len = 0;
    c->last = 0;
    if (goblin__ring_peek_fast(c->ring, &rec) != GOBLIN_RING_RECORD)
        return 0;
    p = rec.ptr;
    if (c->proto != GOBLIN_CLIENT_SBE) {
        int64_t n = goblin_resp_reply_parse(c->reader, rec.ptr, rec.len, v);

        if (n < 0)
            return goblin__client_fail(c, (int)n, "malformed RESP reply");
        if ((size_t)n == rec.len) {
            c->cq_held = true;
            c->pending--;
            c->reply = *v;
            return 1;
        }
    } else if (__builtin_expect(rec.len >= 4 &&
                                    goblin_sbe_rd_u32(p) == rec.len - 4 &&
                                    rec.len - 4 <= c->max_frame,
                                1)) {
        if ((rc = sbe_decode(c, p + 4, rec.len - 4, v)) < 0)
            return goblin__client_fail(c, rc, "malformed SBE reply");
        c->cq_held = true;
        c->pending--;
        c->reply = *v;
        return 1;
    }
    if (rec.len > 0 && goblin_buf_append(&c->in, rec.ptr, rec.len) != 0)
        return goblin__client_fail(c, GOBLIN_ENOMEM, "out of memory");
    goblin__ring_release_fast(c->ring);
    return 0;
}

static inline __attribute__((always_inline)) int read_any(
    goblin_client *c, const struct goblin_resp_value **v)
{
    size_t want;
    int rc;

    if (c->failed)
        return c->failed;
    if (c->pending == 0)
        return GOBLIN_EINVAL;
    if (c->ring != NULL && (rc = ring_fast(c, v)) != 0)
        return rc < 0 ? rc : 0;
    goblin__client_ring_let_go(c);
    if ((rc = goblin_client_flush(c)) < 0)
        return rc;
    c->in_pos += c->last;
    c->last = 0;
    if (c->ring != NULL && c->in_pos == c->in.len) {
        c->in_pos = c->in.len = 0;
        rc = c->proto == GOBLIN_CLIENT_SBE ? sbe_reply_in_place(c, v)
                                           : resp_reply_in_place(c, v);
        if (rc < 0)
            return rc;
        if (rc > 0) {
            c->pending--;
            c->reply = *v;
            return 0;
        }
    }
    for (;;) {
        want = 0;
        rc = c->proto == GOBLIN_CLIENT_SBE ? sbe_reply(c, v, &want)
                                           : resp_reply(c, v);
        if (rc < 0)
            return rc;
        if (rc > 0) {
            c->pending--;
            c->reply = *v;
            return 0;
        }
        if ((rc = fill(c, want)) < 0)
            return rc;
    }
}

int goblin__client_read_any(goblin_client *c,
                            const struct goblin_resp_value **v)
{
    return read_any(c, v);
}

int goblin__client_read(goblin_client *c, const struct goblin_resp_value **v)
{
    int rc, kind;

    for (;;) {
        if ((rc = read_any(c, v)) < 0)
            return rc;
        /* goblin__client_message_kind's first test, inline */
        if ((*v)->type != GOBLIN_RESP_PUSH &&
            ((*v)->type != GOBLIN_RESP_ARRAY || c->subs + c->ssubs == 0))
            return 0;
        kind = goblin__client_message_kind(c, *v);
        if (kind < 0)
            return 0;
        /* Not the reply: a message, kept; the reply is still to come. */
        if ((rc = goblin__client_message_keep(c, *v, kind)) < 0)
            return rc;
        c->pending++;
    }
}

int goblin__client_reply_error(goblin_client *c,
                               const struct goblin_resp_value *v)
{
    size_t n = v->str.len < sizeof(c->err) - 1 ? v->str.len
                                               : sizeof(c->err) - 1;

    memcpy(c->err, v->str.ptr, n);
    c->err[n] = '\0';
    return n >= 9 && memcmp(c->err, "WRONGTYPE", 9) == 0 ? GOBLIN_EWRONGTYPE
                                                         : GOBLIN_EREPLY;
}

/* ---- generic calls and pipelines ---- */

int goblin__client_fits(goblin_client *c, int n)
{
    if (n < 0 || c->max_request == 0 || (size_t)n <= c->max_request)
        return 0;
    snprintf(c->err, sizeof(c->err), "request of %d bytes does not fit one "
             "ring record", n);
    return GOBLIN_ELIMIT;
}

static int queue_argv(goblin_client *c, size_t argc,
                      const struct goblin_slice *argv)
{
    struct goblin_sbe_writer w;
    size_t need = 64, i;
    int n;

    if (c->proto != GOBLIN_CLIENT_SBE)
        return goblin_resp_command_write(&c->out, argc, argv);
    if (argc > GOBLIN_SBE_GROUP_MAX)
        return GOBLIN_ELIMIT;
    for (i = 0; i < argc; i++)
        need += 4 + argv[i].len;
    if (goblin_buf_reserve(&c->out, need) != 0)
        return GOBLIN_ENOMEM;
    goblin_sbe_writer_init(&w, c->out.data + c->out.len,
                           c->out.cap - c->out.len, true);
    goblin_sbe_argv_begin(&w);
    goblin_sbe_argv_args_begin(&w);
    for (i = 0; i < argc; i++)
        goblin_sbe_argv_args_add(&w, argv[i]);
    if ((n = goblin_sbe_argv_end(&w)) < 0)
        return n;
    if (goblin__client_fits(c, n) != 0)
        return GOBLIN_ELIMIT;
    c->out.len += (size_t)n;
    return 0;
}

int goblin_client_call(goblin_client *c, size_t argc,
                       const struct goblin_slice *argv,
                       const struct goblin_resp_value **reply)
{
    int rc;

    if (c->failed)
        return c->failed;
    if (argc == 0 || (!c->pipelining && c->pending > 0))
        return GOBLIN_EINVAL;
    if ((rc = queue_argv(c, argc, argv)) < 0)
        return rc;
    c->tree.double_text = true;
    rc = goblin__client_round(c, reply);
    return rc < 0 ? rc : 0;
}

void goblin_client_pipeline_begin(goblin_client *c)
{
    c->pipelining = true;
}

void goblin_client_pipeline_end(goblin_client *c)
{
    c->pipelining = false;
}

size_t goblin_client_pending(const goblin_client *c)
{
    return c->pending;
}

int goblin_client_next_reply(goblin_client *c,
                             const struct goblin_resp_value **reply)
{
    c->tree.double_text = true;
    return goblin__client_read(c, reply);
}
