/* input.c - a session's input (goblin/engine.h): the bytes a server
 * commits go to the RESP loop or to SBE's, by the magic the session
 * started with (DESIGN.md, Protocol selection). It sits in lib/sbe, above
 * lib/engine and lib/commands, so the layers depend one way: lib/sbe uses
 * them, never the reverse. goblin__resp_record is the ring's RESP fast
 * path: a small record is run from a stack copy, without the input
 * buffer. */
#include <string.h>

#include "engine/block.h"
#include "request.h"
#include "stream/aof_int.h"

/* Runs the requests at p[0..len) of a RESP or SBE session, wherever they
 * lie (the input buffer, or bytes fed in place): *used bytes taken. */
static int run_requests(goblin_session *s, const unsigned char *p,
                        size_t len, size_t *used)
{
    if (s->proto == GOBLIN__PROTO_RESP)
        return goblin__resp_run(s, (const char *)p, len, used);
    return goblin__sbe_session_input(s, p, len, used);
}

/* The end of a batch of input: its writes are durable before any of its
 * replies leave. */
static inline void batch_end(goblin_session *s)
{
    if (--s->eng->input_batch == 0 && __builtin_expect(s->eng->sync_due, 0))
        goblin__aof_sync(s->eng);
}

int goblin_session_input_commit(goblin_session *s, size_t n)
{
    int rc = 0;

    if (s->flags & SESS_CLOSE)
        return goblin__input_verdict(s, 0);
    if (n > s->in_cap - s->in_len)
        return GOBLIN_EINVAL;
    if (s->blk != NULL)
        goblin__block_flush(s); /* a served blocking reply comes first */
    s->eng->input_batch++;
    s->in_len += n;
    s->eng->stat_net_in += n;
    s->last_ms = s->eng->clock_ms;
    if (s->proto == GOBLIN__PROTO_UNDECIDED)
        goblin__session_detect(s);
    if (s->proto == GOBLIN__PROTO_RESP || s->proto == GOBLIN__PROTO_SBE) {
        size_t used = 0;

        rc = run_requests(s, s->in + s->in_pos, s->in_len - s->in_pos,
                          &used);
        s->in_pos += used;
    }
    goblin__input_compact(s);
    if (rc == 0 && s->in_len >= s->eng->qbuf_limit) {
        s->flags |= SESS_CLOSE;
        rc = GOBLIN_ELIMIT;
    }
    goblin__output_check(s);
    batch_end(s);
    return goblin__input_verdict(s, rc);
}

int goblin_session_resume(goblin_session *s)
{
    /* Woken with nothing to run (a published message, an invalidation or
     * a MONITOR line was delivered): the output is all there is. */
    if (s->blk == NULL && s->in_pos == s->in_len)
        return goblin__input_verdict(s, 0);
    return goblin_session_input_commit(s, 0);
}

/* goblin_session_feed by copies into the input buffer, each committed:
 * for bytes another party may still write (a ring record), which must be
 * read once, into memory it cannot reach. */
int goblin__session_feed_copy(goblin_session *s, const void *data, size_t len)
{
    const unsigned char *p = data;
    size_t room, k;
    void *at;
    int rc = 0;

    do {
        at = goblin_session_input_space(s, &room);
        if (at == NULL)
            return goblin__input_verdict(s, s->flags & SESS_CLOSE
                                                ? 0 : GOBLIN_ELIMIT);
        k = len < room ? len : room;
        if (k > 0)
            memcpy(at, p, k);
        rc = goblin_session_input_commit(s, k);
        p += k;
        len -= k;
    } while (rc == 0 && len > 0);
    return rc;
}

/* goblin_session_feed with nothing buffered, the usual case: the RESP
 * commands or SBE frames are parsed and run where they lie (the
 * caller's bytes are its own and unchanged during the call, and nothing
 * keeps a view of them past it: MULTI's queue and a blocked command copy
 * their words, as they must for the input buffer, which moves). Only
 * what is left, a command or frame not whole yet or requests held
 * behind a blocked or paused one, is copied into the input buffer by
 * goblin__session_feed_copy, as if it had come in a second feed; the
 * RESP parser resumes from that command's first byte, as it does for a
 * ring record (goblin__resp_record). */
static int feed_in_place(goblin_session *s, const unsigned char *p,
                         size_t len)
{
    size_t used = 0;
    int rc;

    s->eng->input_batch++;
    s->last_ms = s->eng->clock_ms;
    s->in_pos = s->in_len = 0;
    rc = run_requests(s, p, len, &used);
    s->eng->stat_net_in += used;
    if (rc == 0 && used < len && !(s->flags & SESS_CLOSE))
        rc = goblin__session_feed_copy(s, p + used, len - used);
    else
        goblin__output_check(s);
    batch_end(s);
    return goblin__input_verdict(s, rc);
}

int goblin_session_feed(goblin_session *s, const void *data, size_t len)
{
    if ((s->proto == GOBLIN__PROTO_RESP || s->proto == GOBLIN__PROTO_SBE) &&
        s->in_pos == s->in_len && s->blk == NULL && len > 0 &&
        !(s->flags & SESS_CLOSE))
        return feed_in_place(s, data, len);
    return goblin__session_feed_copy(s, data, len);
}

/* Records up to this size take the stack copy of goblin__resp_record. */
#define RESP_RECORD_COPY_MAX 512
/* The payload bytes of a one-line ring record (64 less its header). */
#define RESP_RECORD_LINE 48

int goblin__resp_record(goblin_session *s, const void *rec, size_t len,
                        int *rc)
{
    char copy[RESP_RECORD_COPY_MAX];
    size_t used = 0, room;
    void *at;
    int r;

    if (s->proto != GOBLIN__PROTO_RESP || s->in_pos != s->in_len ||
        len == 0 || len > sizeof(copy) || (s->flags & SESS_CLOSE))
        return 0;
    /* Read once, into memory the client cannot reach (as SBE's records):
     * the bytes parsed are the bytes run. A ring record is readable to
     * the end of its 64-byte line, so a short one is one fixed-size
     * copy. */
    if (len <= RESP_RECORD_LINE)
        memcpy(copy, rec, RESP_RECORD_LINE);
    else
        memcpy(copy, rec, len);
    s->eng->stat_net_in += len;
    s->last_ms = s->eng->clock_ms;
    s->in_pos = s->in_len = 0;
    r = goblin__resp_run(s, copy, len, &used);
    if (r == 0 && used < len && !(s->flags & SESS_CLOSE)) {
        /* A command that goes on in the next record: its bytes so far
         * go to the input buffer, where the parser (which keeps offsets
         * from the command's first byte) resumes. */
        at = goblin_session_input_space(s, &room);
        if (at == NULL || room < len - used) {
            s->flags |= SESS_CLOSE;
            r = GOBLIN_ELIMIT;
        } else {
            memcpy(at, copy + used, len - used);
            s->in_len += len - used;
        }
    }
    if (s->out.len - s->out_pos > s->out_peak)
        s->out_peak = s->out.len - s->out_pos;
    if (s->out.len - s->out_pos > s->eng->obuf_trip)
        goblin__output_check(s);
    *rc = goblin__input_verdict(s, r);
    return 1;
}
