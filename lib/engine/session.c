/* session.c - a client connection: opening and closing it, its input and
 * output buffers, protocol selection and the RESP command loop.
 *
 * Input: the server writes received bytes at in + in_len (input_space) and
 * commits them. The loop parses commands from in + in_pos; argv views
 * point into the buffer, so it is compacted only after the loop, when no
 * view is alive. Output: replies append to `out`; the server sends from
 * out_pos and consumes; the buffer rewinds when everything was sent.
 *
 * Protocol selection: while undecided, the bytes so far are compared with
 * the SBE magic; on the first byte that differs the session is RESP (and
 * the bytes already held are parsed at once), after eight equal bytes it
 * is SBE (handed to lib/sbe for good). A session given
 * goblin_session_no_sbe() before any input is RESP from the first byte.
 */
#include <string.h>

#include "acl.h"
#include "block.h"
#include "commands/respond.h"
#include "session.h"
#include "monitor.h"
#include "repl/repl.h"
#include "tracking.h"

#define INPUT_CHUNK (16 * 1024)

static char *dup_cstr(goblin_store *st, const char *s)
{
    size_t n = s != NULL ? strlen(s) : 0;
    char *p = goblin__alloc(st, n + 1);

    if (p != NULL) {
        if (n > 0)
            memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static void free_cstr(goblin_store *st, char *s)
{
    if (s != NULL)
        goblin__free(st, s, strlen(s) + 1);
}

static void discard_status(struct goblin_sink *s, const char *p, size_t n)
{
    (void)s, (void)p, (void)n;
}

static void discard_int(struct goblin_sink *s, int64_t v)
{
    (void)s, (void)v;
}

static void discard_dbl(struct goblin_sink *s, double v)
{
    (void)s, (void)v;
}

static void discard_bulk(struct goblin_sink *s, const void *p, size_t n)
{
    (void)s, (void)p, (void)n;
}

static void discard_none(struct goblin_sink *s)
{
    (void)s;
}

static void discard_count(struct goblin_sink *s, size_t n)
{
    (void)s, (void)n;
}

static void discard_bool(struct goblin_sink *s, int v)
{
    (void)s, (void)v;
}

static void discard_verbatim(struct goblin_sink *s, const char fmt[3],
                             const void *p, size_t n)
{
    (void)s, (void)fmt, (void)p, (void)n;
}

/* The sink of CLIENT REPLY OFF and SKIP: every reply is dropped. */
static const struct goblin_sink_ops discard_ops = {
    discard_status, discard_status, discard_int, discard_dbl,
    discard_bulk, discard_none, discard_none, discard_count,
    discard_count, discard_count, discard_bool, discard_verbatim,
    discard_count, NULL, NULL, NULL, NULL, NULL, NULL,
};

static void session_free(goblin_session *s)
{
    goblin_store *st = s->eng->st;

    goblin__block_drop(s);
    goblin__unwatch_all(s);
    goblin__multi_discard(s);
    goblin__pubsub_leave(s);
    goblin__tracking_disable(s);
    goblin__monitor_remove(s);
    if (s->flags & SESS_REPLICA)
        goblin__repl_session_gone(s);
    goblin_buf_free(&s->push);
    goblin__free(st, s->queue, s->capqueue * sizeof(*s->queue));
    goblin__free(st, s->qarea, s->qarea_cap);
    goblin__free(st, s->scratch, s->scratch_cap * sizeof(*s->scratch));
    goblin__free(st, s->in, s->in_cap);
    goblin_buf_free(&s->out);
    goblin_resp_parser_close(s->parser);
    if (s->sbe != NULL)
        s->sbe_free(s);
    free_cstr(st, s->peer);
    free_cstr(st, s->local);
    free_cstr(st, s->name);
    free_cstr(st, s->lib_name);
    free_cstr(st, s->lib_ver);
    goblin__free(st, s, sizeof(*s));
}

static int session_init(goblin_session *s,
                        const struct goblin_session_info *info)
{
    goblin_engine *eng = s->eng;
    struct goblin_resp_parser_config pc = {&eng->acct,
                                           eng->proto_max_bulk_len};

    s->transport = info != NULL ? info->transport : GOBLIN_TRANSPORT_LOCAL;
    s->fd = info != NULL ? info->fd : -1;
    s->user = info != NULL ? info->user : NULL;
    s->peer = dup_cstr(eng->st, info != NULL ? info->peer : NULL);
    s->local = dup_cstr(eng->st, info != NULL ? info->local : NULL);
    if (s->peer == NULL || s->local == NULL)
        return GOBLIN_ENOMEM;
    if (goblin_resp_parser_open(&pc, &s->parser) != 0)
        return GOBLIN_ENOMEM;
    s->parser_bulk_max = eng->proto_max_bulk_len;
    s->out.alloc = &eng->acct;
    s->push.alloc = &eng->acct;
    s->resp = 2;
    goblin_resp_writer_init(&s->writer, &s->out, 2);
    s->discard.ops = &discard_ops;
    s->ctime_ms = s->last_ms = goblin__now_ms(eng->st);
    s->acl = eng->default_user;
    if (goblin__acl_default_open(eng))
        s->flags |= SESS_AUTHED;
    s->proto = GOBLIN__PROTO_UNDECIDED;
    s->db = eng->dbs[0].st;
    return 0;
}

int goblin_session_open(goblin_engine *eng,
                        const struct goblin_session_info *info,
                        goblin_session **out)
{
    goblin_session *s;
    int rc;

    if (eng == NULL || out == NULL)
        return GOBLIN_EINVAL;
    s = goblin__alloc(eng->st, sizeof(*s));
    if (s == NULL)
        return GOBLIN_ENOMEM;
    memset(s, 0, sizeof(*s));
    s->eng = eng;
    if ((rc = session_init(s, info)) != 0) {
        session_free(s);
        return rc;
    }
    s->id = eng->next_id++;
    s->prev = eng->last;
    if (eng->last != NULL)
        eng->last->next = s;
    else
        eng->first = s;
    eng->last = s;
    eng->nsessions++;
    eng->stat_connections++;
    *out = s;
    return 0;
}

void goblin_session_close(goblin_session *s)
{
    goblin_engine *eng;

    if (s == NULL)
        return;
    eng = s->eng;
    if (s->prev != NULL)
        s->prev->next = s->next;
    else
        eng->first = s->next;
    if (s->next != NULL)
        s->next->prev = s->prev;
    else
        eng->last = s->prev;
    eng->nsessions--;
    session_free(s);
}

uint64_t goblin_session_id(const goblin_session *s)
{
    return s->id;
}

void goblin_session_set_wake(goblin_session *s, void (*wake)(void *ctx),
                             void *ctx)
{
    s->wake = wake;
    s->wake_ctx = ctx;
}

bool goblin_session_blocked(const goblin_session *s)
{
    return (s->flags & SESS_BLOCKED) != 0;
}

int goblin_session_no_sbe(goblin_session *s)
{
    if (s->proto == GOBLIN__PROTO_SBE ||
        (s->proto == GOBLIN__PROTO_UNDECIDED && s->magic_seen > 0))
        return GOBLIN_EINVAL;
    s->proto = GOBLIN__PROTO_RESP;
    return 0;
}

bool goblin_session_should_close(const goblin_session *s)
{
    return (s->flags & SESS_CLOSE) != 0;
}

void goblin__session_set_resp(goblin_session *s, int resp)
{
    s->resp = (uint8_t)resp;
    goblin_resp_writer_set_proto(&s->writer, resp);
}

struct goblin_buf *goblin__session_out(goblin_session *s)
{
    return &s->out;
}

int goblin__scratch_reserve(goblin_session *s, size_t n)
{
    size_t cap = s->scratch_cap == 0 ? 16 : s->scratch_cap;
    struct goblin_slice *p;

    if (n <= s->scratch_cap)
        return 0;
    while (cap < n)
        cap *= 2;
    p = goblin__realloc(s->eng->st, s->scratch,
                        s->scratch_cap * sizeof(*p),
                        goblin__mul(cap, sizeof(*p)));
    if (p == NULL)
        return GOBLIN_ENOMEM;
    s->scratch = p;
    s->scratch_cap = cap;
    return 0;
}

void *goblin__scratch_bytes(goblin_session *s, size_t bytes)
{
    size_t n = bytes / sizeof(struct goblin_slice) + 1;

    if (bytes >= SIZE_MAX / 2 || goblin__scratch_reserve(s, n) != 0)
        return NULL;
    return s->scratch;
}

void goblin__session_reset(goblin_session *s)
{
    goblin__multi_discard(s);
    goblin__unwatch_all(s);
    goblin__pubsub_leave(s);
    goblin__tracking_disable(s);
    goblin__monitor_remove(s);
    goblin__session_set_resp(s, 2);
    free_cstr(s->eng->st, s->name);
    s->name = NULL;
    s->flags &= ~(uint32_t)(SESS_AUTHED | SESS_NO_EVICT | SESS_NO_TOUCH |
                            SESS_REPLY_OFF | SESS_REPLY_SKIP |
                            SESS_REPLY_SKIP_NEXT);
    s->acl = s->eng->default_user;
    if (goblin__acl_default_open(s->eng))
        s->flags |= SESS_AUTHED;
    s->db = s->eng->dbs[0].st;
    s->dbid = 0;
}

void goblin__session_mem(const goblin_session *s,
                         struct goblin__session_mem *m)
{
    memset(m, 0, sizeof(*m));
    m->qbuf = s->in_len - s->in_pos;
    m->qbuf_free = s->in_cap - s->in_len;
    m->multi_mem = s->qarea_cap + s->capqueue * sizeof(*s->queue);
    m->rbs = s->out.cap;
    m->rbp = s->out_peak;
    m->obl = s->out.len - s->out_pos;
    /* Every byte not sent yet, the messages delivered and not yet moved
     * to the output included: what client-output-buffer-limit counts. */
    m->omem = s->out.len - s->out_pos + s->push.len;
    m->total = sizeof(*s) + s->in_cap + s->out.cap + m->multi_mem +
               s->scratch_cap * sizeof(*s->scratch) + s->push.cap +
               goblin__ps_client_mem(&s->ps);
}
