/* session.c - an SBE session: the hooks of engine/session.h that
 * lib/sbe implements (docs/sbe.md).
 *
 * Input after the magic is a stream of frames, each a u32 LE length
 * (header + body) and one SBE message. Every complete frame is executed
 * in order; a partial one waits for more bytes. A frame whose message is
 * malformed gets an ErrorReply and the next frame is read, since its
 * length told where it ends. A declared length above the frame limit
 * cannot be skipped safely: it gets an ErrorReply and the session closes.
 * The limit is 64 MiB, lowered by a smaller client-query-buffer-limit.
 *
 * Before a message runs: its header is checked (schema id, version), its
 * template must be a request, the session must be authenticated when a
 * password is set (only AUTH, HELLO and Argv may come first), and typed
 * requests are not accepted inside MULTI (Argv is queued as on RESP).
 * Typed requests count in INFO commandstats under their command.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "engine/acl.h"
#include "engine/block.h"
#include "engine/maxmemory.h"
#include "engine/pause.h"
#include "goblin/sbe.h"
#include "repl/replica.h"
#include "request.h"

/* The session's sbe_push hook: one PublishedMessage frame appended to
 * b (docs/sbe.md), exactly sized. Out of memory the message is lost, as
 * a socket's would be. */
static void sbe_push(goblin_session *s, struct goblin_buf *b,
                     struct goblin_slice channel, struct goblin_slice message,
                     struct goblin_slice pattern, bool shard)
{
    size_t size = 4 + GOBLIN_SBE_HEADER_LENGTH +
                  GOBLIN_SBE_PUBLISHED_MESSAGE_BLOCK_LENGTH +
                  3 * GOBLIN_SBE_VAR_HEADER_LENGTH + channel.len +
                  pattern.len + message.len;
    uint8_t kind = pattern.ptr != NULL ? GOBLIN_SBE_MESSAGE_KIND_PMESSAGE
                   : shard             ? GOBLIN_SBE_MESSAGE_KIND_SMESSAGE
                                       : GOBLIN_SBE_MESSAGE_KIND_MESSAGE;
    struct goblin_sbe_writer w;
    int n;

    (void)s;
    if (goblin_buf_reserve(b, size) != 0)
        return;
    goblin_sbe_writer_init(&w, b->data + b->len, size, true);
    n = goblin_sbe_published_message_encode(&w, kind, channel, pattern,
                                            message);
    if (n > 0)
        b->len += (size_t)n;
}

static struct goblin__sbe_state *state(goblin_session *s)
{
    struct goblin__sbe_state *ss = s->sbe;
    struct goblin_buf *out = goblin__session_out(s);

    if (ss != NULL)
        return ss;
    ss = goblin__alloc(s->eng->st, sizeof(*ss));
    if (ss == NULL)
        return NULL;
    memset(ss, 0, sizeof(*ss));
    goblin__sbe_sink_init(&ss->sink, out, GOBLIN_SBE_FRAME_MAX_DEFAULT + 4);
    ss->scratch.alloc = out->alloc;
    ss->copies.alloc = out->alloc;
    ss->max_frame = GOBLIN_SBE_FRAME_MAX_DEFAULT;
    s->sbe = ss;
    s->sbe_free = goblin__sbe_session_free;
    s->sbe_push = sbe_push;
    return ss;
}

void goblin__sbe_session_free(goblin_session *s)
{
    struct goblin__sbe_state *ss = s->sbe;

    if (ss == NULL)
        return;
    goblin__sbe_sink_free(&ss->sink);
    goblin_buf_free(&ss->scratch);
    goblin_buf_free(&ss->copies);
    goblin__free(s->eng->st, ss, sizeof(*ss));
    s->sbe = NULL;
}

/* What a template id is, found once per session (kinds[]): the command
 * it counts as, and whether it is a request at all, so the per-frame
 * checks are one load and a predictable branch. */
#define KIND_UNSEEN GOBLIN__SBE_KIND_UNSEEN
#define KIND_TYPED GOBLIN__SBE_KIND_TYPED
#define KIND_ROUTED GOBLIN__SBE_KIND_ROUTED
#define KIND_INVALID GOBLIN__SBE_KIND_INVALID
#define KIND_RENAMED GOBLIN__SBE_KIND_RENAMED

/* Requests that go through the command table, which keeps their
 * statistics and applies its own checks. */
static bool routed(unsigned id)
{
    return id == GOBLIN_SBE_ARGV || id == GOBLIN_SBE_AUTH ||
           id == GOBLIN_SBE_HELLO || id == GOBLIN_SBE_INFO;
}

static unsigned learn(struct goblin__sbe_req *r, unsigned id)
{
    struct goblin__sbe_state *ss = r->ss;
    const char *name = goblin_sbe_template_name(id);
    char lower[32];
    size_t n;

    if (name == NULL || goblin_sbe_is_reply(id))
        return KIND_INVALID; /* not cached: ids past the table too */
    for (n = 0; name[n] != '\0' && n < sizeof(lower); n++)
        lower[n] = (char)tolower((unsigned char)name[n]);
    if (n > 11 && memcmp(lower, "zrangestore", 11) == 0)
        n = 11; /* ZRANGESTOREBYSCORE and BYLEX are ZRANGESTORE */
    ss->cmds[id] = goblin__command_lookup(r->x.eng,
                                          (struct goblin_slice){lower, n});
    ss->kinds[id] = routed(id) ? KIND_ROUTED : KIND_TYPED;
    if (ss->kinds[id] == KIND_TYPED && ss->cmds[id] == NULL &&
        goblin__command_lookup_orig(r->x.eng, (struct goblin_slice){
                                                  lower, n}) != NULL)
        ss->kinds[id] = KIND_RENAMED;
    return ss->kinds[id];
}

static inline unsigned kind_of(struct goblin__sbe_req *r)
{
    unsigned id = r->m->template_id;

    if (id >= GOBLIN__SBE_TEMPLATE_SLOTS)
        return learn(r, id);
    if (r->ss->kinds[id] != KIND_UNSEEN)
        return r->ss->kinds[id];
    return learn(r, id);
}

/* The command a request counts as (after kind_of). */
static inline const struct goblin__command *command_of(
    const struct goblin__sbe_req *r)
{
    return r->ss->cmds[r->m->template_id];
}

#define CASE(ID, name)                                                        \
    case GOBLIN_SBE_##ID:                                                     \
        goblin__sbe_##name(r);                                                \
        break;

static void run(struct goblin__sbe_req *r)
{
    switch (r->m->template_id) {
        GOBLIN_SBE_REQUESTS(CASE)
    default:
        goblin__reply_errorf(&r->x, "ERR unknown SBE template id %u",
                             (unsigned)r->m->template_id);
        break;
    }
}

#undef CASE

/* Why the header cannot be used, as the error reply says it. */
static void header_error(struct goblin__sbe_req *r, int rc)
{
    struct goblin_sbe_msg *m = r->m;

    if (m->len < GOBLIN_SBE_HEADER_LENGTH)
        goblin__reply_error(&r->x, "ERR malformed SBE frame: truncated "
                                   "header");
    else if (m->schema_id != GOBLIN_SBE_SCHEMA_ID)
        goblin__reply_errorf(&r->x, "ERR SBE schema id %u does not match %u",
                             (unsigned)m->schema_id, GOBLIN_SBE_SCHEMA_ID);
    else if (rc == GOBLIN_EINCOMPAT)
        goblin__reply_errorf(&r->x, "ERR SBE schema version %u is not "
                                    "supported (this server speaks %u)",
                             (unsigned)m->version,
                             GOBLIN_SBE_SCHEMA_VERSION);
    else
        goblin__sbe_decoded(r, rc);
}

/* The user's permissions for a typed request (acl.h): its command must
 * be allowed, and one with keys needs a user with every key (a user
 * limited to key patterns sends such requests as Argv). */
static bool acl_ok(struct goblin__sbe_req *r)
{
    const struct goblin__command *cmd = command_of(r);
    enum goblin__acl_denied d;
    char text[160];

    if (goblin__acl_unrestricted(r->x.sess->acl))
        return true; /* no ACL users: one predictable branch */
    d = goblin__acl_check_typed(r->x.sess->acl, cmd);
    if (d == ACL_OK)
        return true;
    r->x.eng->stat_rejected++;
    if (cmd != NULL)
        r->x.eng->stats[cmd - goblin__commands].rejected++;
    goblin__reply_error(&r->x, goblin__acl_denied_text(d, cmd, text,
                                                       sizeof(text)));
    return false;
}

/* A typed request for a command renamed or disabled: what calling it by
 * its old name answers (Redis's text, without the arguments). */
static void renamed_error(struct goblin__sbe_req *r)
{
    const char *name = goblin_sbe_template_name(r->m->template_id);
    char lower[32];
    size_t n;

    for (n = 0; name[n] != '\0' && n < sizeof(lower) - 1; n++)
        lower[n] = (char)tolower((unsigned char)name[n]);
    if (n > 11 && memcmp(lower, "zrangestore", 11) == 0)
        n = 11;
    goblin__reply_errorf(&r->x, "ERR unknown command '%.*s', with args "
                                "beginning with: ", (int)n, lower);
}

/* May the message run now? Replies the refusal when not. Unused checks
 * (no password, no MULTI, no maxmemory) cost a predictable branch each. */
static bool admit(struct goblin__sbe_req *r, unsigned kind)
{
    goblin_session *s = r->x.sess;
    unsigned id = r->m->template_id;
    const char *gate;

    if (kind >= KIND_INVALID) {
        if (kind == KIND_INVALID)
            goblin__reply_errorf(&r->x, "ERR unknown SBE template id %u",
                                 id);
        else
            renamed_error(r);
        return false;
    }
    if (kind == KIND_ROUTED)
        return true; /* the command table checks it */
    if (!(s->flags & SESS_AUTHED) || s->acl == NULL) {
        r->x.eng->stat_rejected++;
        goblin__reply_error(&r->x, "NOAUTH Authentication required.");
        return false;
    }
    if (!acl_ok(r))
        return false;
    if (s->flags & SESS_MULTI) {
        s->flags |= SESS_DIRTY_EXEC;
        goblin__reply_error(&r->x, "ERR typed SBE requests cannot be queued "
                                   "in MULTI; send them as Argv");
        return false;
    }
    r->x.cmd = command_of(r);
    if (__builtin_expect(r->x.eng->refuse_writes, 0) && r->x.cmd != NULL &&
        (gate = goblin__repl_gate(&r->x)) != NULL) {
        r->x.eng->stat_rejected++;
        r->x.eng->stats[r->x.cmd - goblin__commands].rejected++;
        goblin__reply_error(&r->x, gate);
        return false;
    }
    if (r->x.cmd != NULL && r->x.eng->maxmemory != 0 &&
        !goblin__maxmemory_admit(&r->x)) {
        r->x.eng->stat_rejected++;
        r->x.eng->stats[r->x.cmd - goblin__commands].rejected++;
        goblin__reply_error(&r->x, GOBLIN__OOM_TEXT);
        return false;
    }
    return true;
}

/* Runs one message (len bytes at msg, which the peer cannot change while
 * it runs: a stack copy or the session's own input). */
static void one_frame(goblin_session *s, struct goblin__sbe_state *ss,
                      const unsigned char *msg, size_t len)
{
    struct goblin_sbe_msg m;
    struct goblin__sbe_req r;
    int rc = goblin_sbe_msg_wrap(&m, msg, len);
    unsigned kind;

    memset(&r, 0, sizeof(r));
    r.x.eng = s->eng;
    r.x.sess = s;
    r.x.st = s->db;
    r.x.sink = &ss->sink.sink;
    r.x.resp = s->resp;
    r.ss = ss;
    r.m = &m;
    if (s->flags & (SESS_REPLY_OFF | SESS_REPLY_SKIP)) {
        r.x.sink = &s->discard;
        r.quiet = true;
    }
    r.x.typed = r.quiet ? NULL : &goblin__sbe_typed;
    if (rc != 0) {
        header_error(&r, rc);
        return;
    }
    kind = kind_of(&r);
    if (!admit(&r, kind))
        return;
    /* CLIENT PAUSE: a typed request waits as its command would (an Argv
     * frame's command is checked where it is dispatched). */
    if (__builtin_expect(s->eng->pause_type != 0, 0) &&
        kind != KIND_ROUTED && goblin__pause_holds(s, r.x.cmd, 0, NULL))
        return;
    if (kind == KIND_ROUTED)
        run(&r);
    else
        goblin__sbe_run_typed(&r);
}

/* The frame limit: 64 MiB (or what a test set), and never more than the
 * engine's client-query-buffer-limit, so CONFIG SET can lower it. */
static uint32_t max_frame(const goblin_session *s,
                          const struct goblin__sbe_state *ss)
{
    uint64_t q = s->eng->qbuf_limit;

    return q != 0 && q < ss->max_frame ? (uint32_t)q : ss->max_frame;
}

/* A declared length the session will not buffer: reply and close. */
static int too_long(goblin_session *s, struct goblin__sbe_state *ss,
                    uint32_t n)
{
    char text[128];
    int len = snprintf(text, sizeof(text),
                       "ERR SBE frame of %u bytes exceeds the limit of %u "
                       "bytes", (unsigned)n, (unsigned)max_frame(s, ss));

    goblin__sbe_reply_error(&ss->sink, text, (size_t)len);
    goblin__errstat_count(s->eng, text, (size_t)len);
    s->flags |= SESS_CLOSE;
    return GOBLIN_EPROTO;
}

int goblin__sbe_session_input(goblin_session *s, const unsigned char *p,
                              size_t len, size_t *used)
{
    struct goblin__sbe_state *ss = state(s);
    size_t pos = 0;
    uint32_t n;
    int rc = 0;

    *used = 0;
    if (ss == NULL)
        return GOBLIN_ENOMEM;
    if (!ss->magic_done) {
        if (len < GOBLIN_SBE_MAGIC_LEN)
            return 0;
        pos = GOBLIN_SBE_MAGIC_LEN;
        ss->magic_done = true;
        goblin__session_set_resp(s, 3);
    }
    while (!(s->flags & (SESS_CLOSE | SESS_BLOCKED | SESS_PAUSED)) &&
           len - pos >= 4) {
        n = goblin_sbe_rd_u32(p + pos);
        if (n > max_frame(s, ss)) {
            rc = too_long(s, ss, n);
            pos = len;
            break;
        }
        if (len - pos - 4 < n)
            break;
        one_frame(s, ss, p + pos + 4, n);
        if (__builtin_expect((s->flags & SESS_PAUSED) != 0, 0))
            break; /* held: run again when the pause ends */
        pos += 4 + (size_t)n;
        /* The output limit is checked after each request, as on RESP. */
        if (s->out.len - s->out_pos > s->eng->obuf_trip)
            goblin__output_check(s);
    }
    *used = pos;
    return rc;
}

void goblin__sbe_set_max_frame(goblin_session *s, uint32_t max)
{
    struct goblin__sbe_state *ss = state(s);

    if (ss != NULL && max >= GOBLIN_SBE_HEADER_LENGTH)
        ss->max_frame = max;
}

/* Frames up to this size take the stack copy of goblin__sbe_record. */
#define RECORD_COPY_MAX 512

int goblin__sbe_record(goblin_session *s, const void *rec, size_t len,
                       int *rc)
{
    struct goblin__sbe_state *ss = s->sbe;
    unsigned char copy[RECORD_COPY_MAX];
    uint32_t n;

    if (ss == NULL || !ss->magic_done || s->proto != GOBLIN__PROTO_SBE ||
        s->in_pos != s->in_len || len < 4 || len > sizeof(copy) ||
        (s->flags & (SESS_CLOSE | SESS_PAUSED)) || s->blk != NULL)
        return 0;
    /* Read once, into memory the client cannot reach: every length the
     * decoder checks is then the one it uses. */
    memcpy(copy, rec, len);
    n = goblin_sbe_rd_u32(copy);
    if (n != len - 4 || n > max_frame(s, ss))
        return 0;
    s->eng->stat_net_in += len;
    s->last_ms = s->eng->clock_ms;
    one_frame(s, ss, copy + 4, n);
    if (__builtin_expect((s->flags & SESS_PAUSED) != 0, 0)) {
        /* Held by CLIENT PAUSE: the frame waits in the input buffer. */
        size_t room;
        void *at = goblin_session_input_space(s, &room);

        if (at == NULL || room < len) {
            s->flags |= SESS_CLOSE;
            *rc = GOBLIN_ELIMIT;
            return 1;
        }
        memcpy(at, copy, len);
        s->in_len += len;
    }
    goblin__output_check(s);
    *rc = goblin__input_verdict(s, 0);
    return 1;
}
