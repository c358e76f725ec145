/* session_io.c - a session's bytes: the input space the server reads into,
 * the SBE magic test, the RESP loop that runs every complete command, and
 * the output the server sends. Which loop runs is decided above this
 * layer, in lib/sbe/input.c, so lib/engine and lib/commands never call lib/sbe.
 *
 * The loop costs, per command, one parse, one lookup and the handler (no
 * clock read: commands are timed on a sample, see goblin__cmdstat_timed);
 * nothing is allocated once the buffers have grown to the traffic.
 */
#include <string.h>

#include "block.h"
#include "commands/respond.h"
#include "resp/parser_impl.h"
#include "session.h"

#define INPUT_CHUNK (16 * 1024)

/* Moves the unparsed bytes to the front of the input buffer. */
void goblin__input_compact(goblin_session *s)
{
    size_t left = s->in_len - s->in_pos, from = s->in_pos;

    s->in_len = left;
    s->in_pos = 0;
    if (left > 0 && from > 0)
        memmove(s->in, s->in + from, left);
}

/* goblin_session_input_space when the space holds fewer than want
 * bytes: compacts, else grows the buffer. */
static __attribute__((noinline)) void *input_grow(goblin_session *s,
                                                  size_t want, size_t *room)
{
    size_t cap;
    unsigned char *p;

    goblin__input_compact(s);
    if (s->in_cap - s->in_len < want) {
        cap = s->in_cap == 0 ? INPUT_CHUNK : s->in_cap;
        while (cap - s->in_len < want)
            cap *= 2;
        if (s->in_len >= s->eng->qbuf_limit)
            return NULL;
        p = goblin__realloc(s->eng->st, s->in, s->in_cap, cap);
        if (p == NULL)
            return NULL;
        s->in = p;
        s->in_cap = cap;
    }
    *room = s->in_cap - s->in_len;
    return s->in + s->in_len;
}

void *goblin_session_input_space(goblin_session *s, size_t *room)
{
    size_t want = INPUT_CHUNK, have = s->in_cap - s->in_len;
    uint64_t big = goblin__resp_wanted(s->parser);

    *room = 0;
    if (s->flags & SESS_CLOSE)
        return NULL;
    if (big > want && big < s->eng->qbuf_limit)
        want = (size_t)big;
    if (have < want)
        return input_grow(s, want, room);
    *room = have;
    return s->in + s->in_len;
}

void goblin__session_detect(goblin_session *s)
{
    size_t n = s->in_len - s->in_pos, i;
    const unsigned char *p = s->in + s->in_pos;

    for (i = s->magic_seen; i < n && i < GOBLIN__SBE_MAGIC_LEN; i++) {
        if (p[i] != (unsigned char)GOBLIN__SBE_MAGIC[i]) {
            s->proto = GOBLIN__PROTO_RESP;
            return;
        }
    }
    s->magic_seen = (uint8_t)i;
    if (i == GOBLIN__SBE_MAGIC_LEN)
        s->proto = GOBLIN__PROTO_SBE;
}

/* Keeps the parser's limits in step with the engine and the session's
 * authentication. */
static void parser_limits(goblin_session *s)
{
    bool unauth = !(s->flags & SESS_AUTHED);

    if (unauth != s->parser_unauth) {
        goblin_resp_parser_set_unauthenticated(s->parser, unauth);
        s->parser_unauth = unauth;
    }
    if (s->parser_bulk_max != s->eng->proto_max_bulk_len) {
        goblin_resp_parser_set_max_bulk_len(s->parser,
                                            s->eng->proto_max_bulk_len);
        s->parser_bulk_max = s->eng->proto_max_bulk_len;
    }
}

/* A protocol error: the reply is Redis's text, then the session closes. */
static int protocol_error(goblin_session *s)
{
    const char *text = goblin_resp_parser_error(s->parser);

    s->writer.sink.ops->error(&s->writer.sink, text, strlen(text));
    goblin__errstat_count(s->eng, text, strlen(text));
    s->flags |= SESS_CLOSE;
    return GOBLIN_EPROTO;
}

/* The next command at in[0..len) (len > 0) by goblin_resp_parse, with
 * its limits brought up to date: bytes taken, 0 for more, or an error. */
static __attribute__((noinline)) int64_t parse_general(
    goblin_session *s, const char *in, size_t len,
    struct goblin_resp_command *cmd)
{
    parser_limits(s);
    return goblin_resp_parse(s->parser, in, len, cmd);
}

/* A whole plain request, nearly every one, is taken in place
 * (goblin__resp_take_whole) under the limits the parser would apply now;
 * anything else goes to the parser, which gives the same verdicts. */
int goblin__resp_run(goblin_session *s, const char *in, size_t len,
                     size_t *used)
{
    struct goblin_resp_command cmd;
    size_t pos = 0;
    int64_t n;
    int rc = 0;

    /* A blocked session runs nothing behind its blocking command until it
     * is served (block.h), nor a paused one until the pause ends. */
    while (!(s->flags & (SESS_CLOSE | SESS_BLOCKED | SESS_PAUSED)) &&
           pos < len) {
        n = (int64_t)goblin__resp_take_whole(
            s->parser, in + pos, len - pos, !(s->flags & SESS_AUTHED),
            s->eng->proto_max_bulk_len, &cmd);
        if (__builtin_expect(n == 0, 0)) {
            n = parse_general(s, in + pos, len - pos, &cmd);
            if (n == 0)
                break;
            if (n == GOBLIN_EPROTO) {
                rc = protocol_error(s);
                break;
            }
            if (n < 0) {
                rc = (int)n;
                break;
            }
            if (cmd.argc == 0) {
                pos += (size_t)n;
                continue;
            }
        }
        pos += (size_t)n;
        rc = goblin__execute(s, (int)cmd.argc, cmd.argv);
        if (rc != 0)
            break;
        if (__builtin_expect((s->flags & SESS_PAUSED) != 0, 0)) {
            pos -= (size_t)n; /* held: parsed again when the pause ends */
            break;
        }
        if (s->out.len - s->out_pos > s->eng->obuf_trip)
            goblin__output_check(s);
    }
    *used = pos;
    return rc;
}

int goblin__input_verdict(goblin_session *s, int rc)
{
    if (rc != 0)
        return rc;
    if (s->out.failed)
        return GOBLIN_ENOMEM;
    if (s->flags & SESS_OBUF_LIMIT)
        return GOBLIN_ELIMIT;
    if (s->flags & SESS_CLOSE)
        return GOBLIN_ECONNABORTED;
    return 0;
}

/* Under the owner's call: messages delivered while other sessions ran
 * join the output, or, past the output limit, everything is dropped. */
static void output_settle(goblin_session *s)
{
    if (s->flags & SESS_OBUF_LIMIT) {
        s->out.len = 0;
        s->out_pos = 0;
        s->push.len = 0;
        return;
    }
    if (s->out.len == 0 && s->redirect == NULL && !s->out.failed &&
        !s->push.failed &&
        s->out.alloc == s->push.alloc) {
        /* Nothing else to send: the messages' buffer becomes the
         * output, without a copy. */
        struct goblin_buf empty = s->out;

        s->out = s->push;
        s->push = empty;
        s->out_pos = 0;
    } else if (goblin_buf_append(&s->out, s->push.data, s->push.len) == 0) {
        s->push.len = 0;
    }
    if (s->push.cap > 64 * 1024) {
        goblin_buf_free(&s->push);
        s->push.alloc = &s->eng->acct;
    }
}

/* goblin_session_output when messages wait, the output limit was passed
 * or a blocking command was served. */
static __attribute__((noinline)) const void *output_prepared(
    goblin_session *s, size_t *len)
{
    if (s->push.len != 0 || (s->flags & SESS_OBUF_LIMIT))
        output_settle(s);
    if (s->blk != NULL && s->blk->done)
        goblin__block_flush(s);
    *len = s->out.len - s->out_pos;
    if (*len == 0)
        return "";
    return s->out.data + s->out_pos;
}

const void *goblin_session_output(goblin_session *s, size_t *len)
{
    if (__builtin_expect(s->push.len != 0 || (s->flags & SESS_OBUF_LIMIT) ||
                             s->blk != NULL,
                         0))
        return output_prepared(s, len);
    *len = s->out.len - s->out_pos;
    /* Never NULL, so a caller may memcpy from it even when it is empty
     * (the buffer is unallocated until the first reply). */
    if (*len == 0)
        return "";
    return s->out.data + s->out_pos;
}

void goblin_session_output_consume(goblin_session *s, size_t n)
{
    size_t left = s->out.len - s->out_pos;

    if (n > left)
        n = left;
    s->out_pos += n;
    s->eng->stat_net_out += n;
    if (s->out_pos == s->out.len) {
        s->out.len = 0;
        s->out_pos = 0;
    } else if (s->out_pos >= s->out.cap / 2) {
        n = s->out_pos;
        s->out_pos = 0;
        goblin_buf_consume(&s->out, n);
    }
}

/* goblin__output_check past a class whose limits are set: lim. */
static __attribute__((noinline)) void output_limits(goblin_session *s,
                                                   const uint64_t *lim,
                                                   size_t pending)
{
    int64_t now;

    if (lim[0] != 0 && pending > lim[0])
        goto over;
    if (lim[1] == 0 || pending <= lim[1]) {
        s->obuf_soft_since_ms = 0;
        return;
    }
    now = goblin__now_ms(s->eng->st);
    if (s->obuf_soft_since_ms == 0)
        s->obuf_soft_since_ms = now;
    if ((uint64_t)(now - s->obuf_soft_since_ms) / 1000 < lim[2])
        return;
over:
    s->flags |= SESS_CLOSE | SESS_OBUF_LIMIT;
    s->out.len = 0;
    s->out_pos = 0;
}

/* Applies client-output-buffer-limit (class normal): past the hard limit,
 * or past the soft one for longer than its seconds, the output is dropped
 * and the session closes, as Redis's closeClientOnOutputBufferLimit. */
void goblin__output_check(goblin_session *s)
{
    /* A subscribed session is of the pubsub class, as in Redis. */
    const uint64_t *lim =
        s->eng->obuf_limit[goblin__ps_total(&s->ps) > 0 ? 2 : 0];
    size_t pending = s->out.len - s->out_pos;

    if (pending > s->out_peak)
        s->out_peak = pending;
    if ((lim[0] | lim[1]) != 0)
        output_limits(s, lim, pending);
}

/* ---- output straight into a transport's buffer ---- */

/* The allocator of a redirected output buffer: the first growth moves the
 * bytes out of the borrowed space into memory of the engine's own; after
 * that it is the engine's allocator. */
static void *spill_realloc(void *ctx, void *p, size_t old, size_t size)
{
    goblin_session *s = ctx;
    const struct goblin_allocator *a = &s->eng->acct;
    void *q;

    if (p != s->redirect)
        return a->realloc(a->ctx, p, old, size);
    q = a->malloc(a->ctx, size);
    if (q != NULL)
        memcpy(q, p, s->out.len);
    return q;
}

static void *spill_malloc(void *ctx, size_t size)
{
    goblin_session *s = ctx;

    return s->eng->acct.malloc(s->eng->acct.ctx, size);
}

static void spill_free(void *ctx, void *p, size_t size)
{
    goblin_session *s = ctx;

    if (p != s->redirect)
        s->eng->acct.free(s->eng->acct.ctx, p, size);
}

void goblin__output_spill_init(goblin_session *s)
{
    s->spill.malloc = spill_malloc;
    s->spill.realloc = spill_realloc;
    s->spill.free = spill_free;
    s->spill.ctx = s;
}

/* The spilled case of goblin__output_redirect_end: the grown buffer
 * becomes the session's. */
void goblin__output_spilled(goblin_session *s)
{
    goblin_buf_free(&s->out_saved);
    s->out.alloc = &s->eng->acct;
    s->redirect = NULL;
}
