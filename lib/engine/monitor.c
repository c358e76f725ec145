/* monitor.c - MONITOR's feed (monitor.h). */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "monitor.h"

void goblin__monitor_add(goblin_session *s)
{
    goblin_engine *eng = s->eng;

    if (s->flags & SESS_MONITOR)
        return;
    if (eng->nmonitors == eng->capmonitors) {
        size_t cap = eng->capmonitors == 0 ? 4 : eng->capmonitors * 2;
        goblin_session **m =
            goblin__alloc(eng->st, goblin__mul(cap, sizeof(*m)));

        if (m == NULL)
            return;
        if (eng->nmonitors > 0)
            memcpy(m, eng->monitors, eng->nmonitors * sizeof(*m));
        goblin__free(eng->st, eng->monitors,
                     eng->capmonitors * sizeof(*m));
        eng->monitors = m;
        eng->capmonitors = cap;
    }
    eng->monitors[eng->nmonitors++] = s;
    s->flags |= SESS_MONITOR;
    goblin__engine_direct_update(eng);
}

void goblin__monitor_remove(goblin_session *s)
{
    goblin_engine *eng = s->eng;

    if (!(s->flags & SESS_MONITOR))
        return;
    for (size_t i = 0; i < eng->nmonitors; i++)
        if (eng->monitors[i] == s) {
            memmove(&eng->monitors[i], &eng->monitors[i + 1],
                    (eng->nmonitors - i - 1) * sizeof(*eng->monitors));
            eng->nmonitors--;
            break;
        }
    s->flags &= ~(uint32_t)SESS_MONITOR;
    goblin__engine_direct_update(eng);
}

void goblin__monitor_free(goblin_engine *eng)
{
    goblin__free(eng->st, eng->monitors,
                 eng->capmonitors * sizeof(*eng->monitors));
    eng->monitors = NULL;
    eng->nmonitors = eng->capmonitors = 0;
    goblin__engine_direct_update(eng);
}

static void put(struct goblin_buf *b, const void *p, size_t n)
{
    goblin_buf_append(b, p, n);
}

/* Redis's sdscatrepr. */
static void put_repr(struct goblin_buf *b, const unsigned char *p, size_t n)
{
    char esc[8];

    put(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = p[i];
        const char *e = NULL;

        switch (c) {
        case '\\': e = "\\\\"; break;
        case '"': e = "\\\""; break;
        case '\n': e = "\\n"; break;
        case '\r': e = "\\r"; break;
        case '\t': e = "\\t"; break;
        case '\a': e = "\\a"; break;
        case '\b': e = "\\b"; break;
        default: break;
        }
        if (e != NULL) {
            put(b, e, 2);
        } else if (c >= 0x20 && c < 0x7f) {
            put(b, &c, 1);
        } else {
            snprintf(esc, sizeof(esc), "\\x%02x", c);
            put(b, esc, 4);
        }
    }
    put(b, "\"", 1);
}

static bool arg_is(struct goblin_slice a, const char *lit)
{
    size_t n = strlen(lit);

    return a.len == n && strncasecmp(a.ptr, lit, n) == 0;
}

/* The arguments Redis replaces with "(redacted)": bit i of the mask for
 * argument i (arguments past 63 are never secrets here). */
static uint64_t redacted(const struct goblin__command *c, int argc,
                         const struct goblin_slice *argv)
{
    uint64_t mask = 0;

    if (strcmp(c->fullname, "auth") == 0)
        return argc >= 64 ? ~1ull : ((1ull << argc) - 1) & ~1ull;
    if (strcmp(c->fullname, "hello") == 0) {
        for (int j = 2; j + 2 < argc && j < 61; j++)
            if (arg_is(argv[j], "auth")) {
                mask |= 3ull << (j + 1);
                j += 2;
            } else if (arg_is(argv[j], "setname")) {
                j++;
            }
    } else if (strcmp(c->fullname, "migrate") == 0) {
        for (int j = 6; j < argc && j < 61; j++)
            if (arg_is(argv[j], "auth") && j + 1 < argc) {
                mask |= 1ull << (j + 1);
                j++;
            } else if (arg_is(argv[j], "auth2") && j + 2 < argc) {
                mask |= 3ull << (j + 1);
                j += 2;
            } else if (arg_is(argv[j], "keys")) {
                break;
            }
    }
    return mask;
}

static void put_origin(struct goblin_buf *b, const goblin__exec *x)
{
    const goblin_session *s = x->sess;
    char head[64];
    struct timespec ts;
    int n;

    clock_gettime(CLOCK_REALTIME, &ts);
    n = snprintf(head, sizeof(head), "+%ld.%06ld [%d ", (long)ts.tv_sec,
                 (long)(ts.tv_nsec / 1000), s->dbid);
    put(b, head, (size_t)n);
    if (x->eng->script_run != NULL && x->sink != &s->writer.sink &&
        !(x->cmd->flags & CMD_SKIP_MONITOR)) {
        put(b, "lua", 3);
    } else if (s->transport == GOBLIN_TRANSPORT_UNIX) {
        size_t len = strlen(s->local);

        /* The socket's path: the local address without its ":0". */
        if (len >= 2 && strcmp(s->local + len - 2, ":0") == 0)
            len -= 2;
        put(b, "unix:", 5);
        put(b, s->local, len);
    } else {
        put(b, s->peer, strlen(s->peer));
    }
    put(b, "] ", 2);
}

/* The replica class of client-output-buffer-limit, which Redis applies
 * to monitors: true when m must be disconnected. */
static bool over_limit(goblin_session *m)
{
    const uint64_t *lim = m->eng->obuf_limit[1];
    uint64_t pending = m->out.len - m->out_pos + m->push.len;
    int64_t now;

    if (lim[0] != 0 && pending > lim[0])
        return true;
    if (lim[1] == 0 || pending <= lim[1]) {
        m->obuf_soft_since_ms = 0;
        return false;
    }
    now = goblin__now_ms(m->eng->st);
    if (m->obuf_soft_since_ms == 0)
        m->obuf_soft_since_ms = now;
    return (uint64_t)(now - m->obuf_soft_since_ms) / 1000 >= lim[2];
}

static void deliver(goblin__exec *x, goblin_session *m,
                    const struct goblin_buf *line)
{
    if (m->flags & SESS_CLOSE)
        return;
    if (m == x->sess && x->sink == &m->writer.sink) {
        put(&m->out, line->data, line->len); /* after its own reply */
        return;
    }
    put(&m->push, line->data, line->len);
    if (over_limit(m)) {
        m->flags |= SESS_CLOSE | SESS_OBUF_LIMIT;
        m->push.len = 0;
    }
    if (m != x->sess)
        goblin__session_wake(m);
}

void goblin__monitor_feed(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    struct goblin_buf line = {.alloc = &x->eng->acct};
    uint64_t mask = redacted(x->cmd, argc, argv);

    put_origin(&line, x);
    for (int j = 0; j < argc; j++) {
        if (j < 64 && mask & (1ull << j))
            put(&line, "\"(redacted)\"", 12);
        else
            put_repr(&line, argv[j].ptr, argv[j].len);
        if (j != argc - 1)
            put(&line, " ", 1);
    }
    put(&line, "\r\n", 2);
    if (!line.failed)
        for (size_t i = 0; i < x->eng->nmonitors; i++)
            deliver(x, x->eng->monitors[i], &line);
    goblin_buf_free(&line);
}
