/* direct.c - typed SBE requests on their direct path, and the one table
 * and counting step both paths use to run them (request.h).
 *
 * The direct path takes one ring record that holds exactly one typed
 * frame of a session in its plain state: authenticated by a user without
 * restrictions, not in MULTI, not blocked, not subscribed, replies on, no
 * maxmemory, no write stream consumer, nothing buffered either way.
 * Everything the general path checks per frame (session.c, admit) is
 * then known to pass, so what is
 * left per request is: copy the record once to the stack (the client may
 * still write the shared record: every length used is read from the
 * copy), check the frame length and header from locals, find the handler
 * by template id in a table, and run it through goblin__sbe_run_typed,
 * the same counting step the general path uses. The handler calls the
 * command's execution function (commands/exec.h), so the store calls, the
 * write hooks (keyspace notifications, WATCH, tracking, the write stream)
 * and the replies are the general path's, byte for byte. A session that
 * is not plain, a template not seen yet by this session (the general path
 * learns it), or anything odd in the frame takes the general path, which
 * gives the frame its error reply.
 */
#include <string.h>

#include "engine/block.h"
#include "engine/maxmemory.h"
#include "engine/acl.h"
#include "engine/tracking.h"
#include "pubsub/pubsub.h"
#include "argv_form.h"
#include "request.h"

#define HANDLER(ID, name) [GOBLIN_SBE_##ID] = goblin__sbe_##name,
goblin__sbe_handler *const goblin__sbe_handlers[GOBLIN__SBE_TEMPLATE_SLOTS] =
    {GOBLIN_SBE_REQUESTS(HANDLER)};
#undef HANDLER

/* CLIENT REPLY SKIP applies to one command only (as dispatch.c). */
static inline void after_command(goblin_session *s)
{
    s->flags &= ~(uint32_t)SESS_REPLY_SKIP;
    if (s->flags & SESS_REPLY_SKIP_NEXT) {
        s->flags |= SESS_REPLY_SKIP;
        s->flags &= ~(uint32_t)SESS_REPLY_SKIP_NEXT;
    }
}

/* Runs a typed request and counts it like a command of the table (timed
 * on a sample, goblin__cmdstat_timed, or every call while the slow log
 * or the latency monitor watches; a slow one is logged as its argv
 * form). The no-touch mode of OBJECT does not apply to typed requests;
 * CLIENT NO-TOUCH does. With plain (the direct path's state, see plain()
 * below) CLIENT NO-TOUCH and CLIENT REPLY SKIP are known to be off, and
 * no typed request turns them on (CLIENT is an Argv frame), so neither
 * is looked at. */
static inline __attribute__((always_inline)) void run_typed(
    struct goblin__sbe_req *r, bool plain)
{
    goblin_engine *eng = r->x.eng;
    const struct goblin__command *cmd = r->ss->cmds[r->m->template_id];
    goblin__sbe_handler *fn = goblin__sbe_handlers[r->m->template_id];
    struct goblin__cmdstat *st = NULL;
    bool timed = false;
    uint64_t t0 = 0;

    r->x.cmd = cmd;
    eng->running = r->x.sess;
    if (cmd != NULL) {
        st = &eng->stats[cmd - goblin__commands];
        /* As goblin__run: every call while the slow log or the latency
         * monitor needs it (eng->time_all), else one in the sample. */
        timed = goblin__cmdstat_timed(st) || eng->time_all;
        if (timed)
            t0 = goblin__ticks(eng);
        if (!plain && (r->x.sess->flags & SESS_NO_TOUCH))
            goblin__maxmemory_touch_mode(&r->x);
        r->x.st->reads = GOBLIN__CMD_READ_MODE(cmd);
    }
    /* The write stream and MONITOR need the request's words (neither is
     * on for a plain session: eng->direct_off). */
    if (!plain && __builtin_expect(eng->stream_on || eng->nmonitors != 0, 0))
        goblin__sbe_run_logged(r, fn);
    else
        fn(r);
    r->x.st->reads = 0;
    r->x.st->no_touch = false;
    /* Invalidations held for the end of a command (BCAST, the writer's
     * own) go out now, as after a RESP command: one flag test. */
    if (__builtin_expect(eng->track_pending, 0))
        goblin__tracking_flush(eng, r->x.sess, false);
    eng->running = NULL;
    eng->stat_commands++;
    if (st != NULL) {
        goblin__cmdstat_count(eng, st, timed, t0);
        if (timed && __builtin_expect(st->sample >= eng->watch_ticks, 0))
            goblin__sbe_slowlog_watch(r, st->sample);
        st->failed += r->x.failed;
        r->x.sess->lastcmd = cmd;
    }
    if (!plain)
        after_command(r->x.sess);
    goblin__block_after(eng);
}

void goblin__sbe_run_typed(struct goblin__sbe_req *r)
{
    run_typed(r, false);
}

/* The session flags that send a frame the general way. */
#define NOT_PLAIN                                                             \
    (SESS_MULTI | SESS_CLOSE | SESS_NO_TOUCH | SESS_REPLY_OFF |              \
     SESS_REPLY_SKIP | SESS_REPLY_SKIP_NEXT | SESS_OBUF_LIMIT | SESS_BLOCKED | \
     SESS_PAUSED)

/* Is s in the plain state, where every per-frame check of admit passes?
 * One load and branch per condition, all predictable. */
static inline bool plain(const goblin_session *s,
                         const struct goblin__sbe_state *ss)
{
    return ss != NULL && ss->magic_done && s->proto == GOBLIN__PROTO_SBE &&
           (s->flags & (NOT_PLAIN | SESS_AUTHED)) == SESS_AUTHED &&
           s->acl != NULL && goblin__acl_unrestricted(s->acl) &&
           !s->eng->direct_off && s->blk == NULL && s->in_pos == s->in_len &&
           goblin__ps_total(&s->ps) == 0;
}

/* Frames up to this size take the direct path. */
#define DIRECT_COPY_MAX 512
/* The payload bytes of a one-line ring record (64 less its header). */
#define DIRECT_LINE 48

int goblin__sbe_direct(goblin_session *s, const void *rec, size_t len,
                       int *rc)
{
    struct goblin__sbe_state *ss = s->sbe;
    goblin_engine *eng = s->eng;
    unsigned char copy[DIRECT_COPY_MAX];
    struct goblin_sbe_msg m;
    struct goblin__sbe_req r;
    uint32_t n, q;
    uint16_t id;

    if (len < 4 + GOBLIN_SBE_HEADER_LENGTH || len > sizeof(copy) ||
        !plain(s, ss))
        return 0;
    /* A ring record's payload is readable to the end of its last 64-byte
     * line: a small one is copied as one fixed-size block. */
    if (len <= DIRECT_LINE)
        memcpy(copy, rec, DIRECT_LINE);
    else
        memcpy(copy, rec, len);
    n = goblin_sbe_rd_u32(copy);
    id = goblin_sbe_rd_u16(copy + 6);
    q = eng->qbuf_limit != 0 && eng->qbuf_limit < ss->max_frame
            ? (uint32_t)eng->qbuf_limit : ss->max_frame;
    if (n != len - 4 || n > q || id >= GOBLIN__SBE_TEMPLATE_SLOTS ||
        ss->kinds[id] != GOBLIN__SBE_KIND_TYPED ||
        goblin_sbe_rd_u16(copy + 8) != GOBLIN_SBE_SCHEMA_ID ||
        goblin_sbe_rd_u16(copy + 10) != GOBLIN_SBE_SCHEMA_VERSION)
        return 0;
    m.buf = copy + 4;
    m.len = n;
    m.block_length = goblin_sbe_rd_u16(copy + 4);
    m.template_id = id;
    m.schema_id = GOBLIN_SBE_SCHEMA_ID;
    m.version = GOBLIN_SBE_SCHEMA_VERSION;
    m.why = NULL;
    r.x = (goblin__exec){eng,     s,     s->db,      &ss->sink.sink, NULL,
                         NULL,    s->resp, false,    &goblin__sbe_typed};
    r.ss = ss;
    r.m = &m;
    r.quiet = false;
    eng->stat_net_in += len;
    s->last_ms = eng->clock_ms;
    run_typed(&r, true);
    if (s->out.len > s->out_peak)
        s->out_peak = s->out.len;
    if (s->out.len > eng->obuf_trip)
        goblin__output_check(s);
    /* goblin__input_verdict's codes; the common case in one test. */
    if (__builtin_expect(!s->out.failed &&
                             !(s->flags & (SESS_OBUF_LIMIT | SESS_CLOSE)),
                         1))
        *rc = 0;
    else
        *rc = goblin__input_verdict(s, 0);
    return 1;
}
