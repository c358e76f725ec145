/* cmd_client.c - CLIENT and its subcommands: ID, SETNAME, GETNAME,
 * SETINFO, LIST, INFO, KILL, NO-EVICT, NO-TOUCH, REPLY, PAUSE, UNPAUSE,
 * HELP, with Redis
 * 7.2's replies and texts (networking.c).
 *
 * A CLIENT LIST line has Redis's fields in Redis's order; memory figures
 * are the session's own buffers. A session killed by another is marked,
 * the server is woken through session_wake, and the session executes
 * nothing more.
 */
#include <string.h>

#include "engine/tracking.h"
#include "engine/acl.h"
#include "engine/block.h"
#include "engine/pause.h"
#include "goblin/numtext.h"
#include "respond.h"
#include "engine/session.h"
#include "engine/text.h"
#include "repl/repl.h"

bool goblin__client_name_ok(struct goblin_slice name)
{
    const unsigned char *p = name.ptr;
    size_t i;

    for (i = 0; i < name.len; i++)
        if (p[i] < '!' || p[i] > '~')
            return false;
    return true;
}

/* Replaces *dst (a NUL-terminated copy or NULL) with v, or NULL when v is
 * empty. */
static int set_text(goblin_store *st, char **dst, struct goblin_slice v)
{
    char *copy = NULL;

    if (v.len > 0) {
        copy = goblin__alloc(st, v.len + 1);
        if (copy == NULL)
            return GOBLIN_ENOMEM;
        memcpy(copy, v.ptr, v.len);
        copy[v.len] = '\0';
    }
    if (*dst != NULL)
        goblin__free(st, *dst, strlen(*dst) + 1);
    *dst = copy;
    return 0;
}

int goblin__client_set_name(goblin_session *s, struct goblin_slice name)
{
    return set_text(s->eng->st, &s->name, name);
}

void goblin__cmd_client_id(goblin__exec *x, int argc,
                           const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    goblin__reply_int(x, (int64_t)x->sess->id);
}

void goblin__cmd_client_setname(goblin__exec *x, int argc,
                                const struct goblin_slice *argv)
{
    (void)argc;
    if (!goblin__client_name_ok(argv[2])) {
        goblin__reply_error(x, GOBLIN__ERR_CLIENT_NAME);
        return;
    }
    if (goblin__client_set_name(x->sess, argv[2]) != 0) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    goblin__reply_ok(x);
}

void goblin__cmd_client_getname(goblin__exec *x, int argc,
                                const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    if (x->sess->name == NULL)
        goblin__reply_null(x);
    else
        goblin__reply_cstr(x, x->sess->name);
}

void goblin__cmd_client_setinfo(goblin__exec *x, int argc,
                                const struct goblin_slice *argv)
{
    const struct goblin_slice attr = argv[2];
    char **dst;

    (void)argc;
    if (goblin__arg_is(attr, "lib-name")) {
        dst = &x->sess->lib_name;
    } else if (goblin__arg_is(attr, "lib-ver")) {
        dst = &x->sess->lib_ver;
    } else {
        goblin__reply_errorf(x, "ERR Unrecognized option '%.*s'",
                             goblin__cstr_len(attr), (const char *)attr.ptr);
        return;
    }
    if (!goblin__client_name_ok(argv[3])) {
        goblin__reply_errorf(x,
                             "ERR %.*s cannot contain spaces, newlines or "
                             "special characters.",
                             goblin__cstr_len(attr), (const char *)attr.ptr);
        return;
    }
    if (set_text(x->eng->st, dst, argv[3]) != 0) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    goblin__reply_ok(x);
}

static void client_flags(const goblin_session *s, char *buf)
{
    char *p = buf;

    if (s->flags & SESS_MONITOR)
        *p++ = 'O';
    else if (goblin__repl_is_replica((goblin_session *)s))
        *p++ = 'S'; /* Redis's CLIENT_SLAVE, as MONITOR's 'O' */
    if (s->flags & SESS_MASTER)
        *p++ = 'M';
    if (goblin__ps_total(&s->ps) > 0)
        *p++ = 'P';
    if (s->flags & SESS_MULTI)
        *p++ = 'x';
    if (s->flags & (SESS_BLOCKED | SESS_PAUSED))
        *p++ = 'b';
    if (s->track & TRACK_ON)
        *p++ = 't';
    if (s->track & TRACK_BROKEN)
        *p++ = 'R';
    if (s->track & TRACK_BCAST)
        *p++ = 'B';
    if (s->flags & SESS_DIRTY_CAS)
        *p++ = 'd';
    if (s->flags & SESS_CLOSE)
        *p++ = 'c';
    if (s->transport == GOBLIN_TRANSPORT_UNIX)
        *p++ = 'U';
    if (s->flags & SESS_NO_EVICT)
        *p++ = 'e';
    if (s->flags & SESS_NO_TOUCH)
        *p++ = 'T';
    if (p == buf)
        *p++ = 'N';
    *p = '\0';
}

/* Appends s's CLIENT LIST line, ending in "\n". */
void goblin__client_line(struct goblin__text *t, const goblin_session *s)
{
    int64_t now = goblin__now_ms(s->eng->st);
    struct goblin__session_mem m;
    char flags[16];

    client_flags(s, flags);
    goblin__session_mem(s, &m);
    goblin__text_addf(t, "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld "
                      "idle=%lld flags=%s db=%d sub=%u psub=%u ssub=%u "
                      "multi=%lld ",
                      (unsigned long long)s->id, s->peer, s->local, s->fd,
                      s->name != NULL ? s->name : "",
                      (long long)(now - s->ctime_ms) / 1000,
                      (long long)(now - s->last_ms) / 1000, flags, s->dbid,
                      goblin__ps_count(&s->ps, GOBLIN__PS_CHANNEL),
                      goblin__ps_count(&s->ps, GOBLIN__PS_PATTERN),
                      goblin__ps_count(&s->ps, GOBLIN__PS_SHARD),
                      s->flags & SESS_MULTI ? (long long)s->nqueue : -1LL);
    goblin__text_addf(t, "qbuf=%zu qbuf-free=%zu argv-mem=%zu multi-mem=%zu "
                      "rbs=%zu rbp=%zu obl=%zu oll=0 omem=%zu tot-mem=%zu ",
                      m.qbuf, m.qbuf_free, m.argv_mem, m.multi_mem, m.rbs,
                      m.rbp, m.obl, m.omem, m.total);
    goblin__text_addf(t, "events=r%s cmd=%s user=%.*s redir=%lld resp=%d "
                      "lib-name=%s lib-ver=%s\n",
                      m.obl > 0 ? "w" : "",
                      s->lastcmd != NULL ? s->lastcmd->fullname : "NULL",
                      s->acl != NULL ? (int)s->acl->namelen : 0,
                      s->acl != NULL ? s->acl->name : "",
                      s->track & TRACK_ON ? (long long)s->track_redir : -1LL,
                      s->resp, s->lib_name != NULL ? s->lib_name : "",
                      s->lib_ver != NULL ? s->lib_ver : "");
}

static void reply_text(goblin__exec *x, struct goblin__text *t)
{
    if (t->oom)
        goblin__reply_code(x, GOBLIN_ENOMEM);
    else
        goblin__reply_verbatim(x, t->p, t->len);
    goblin__text_free(t);
}

void goblin__cmd_client_info(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    struct goblin__text t;

    (void)argc;
    (void)argv;
    goblin__text_init(&t, x->st);
    goblin__client_line(&t, x->sess);
    reply_text(x, &t);
}

/* Redis's client types; sessions are "normal", "replica" or "master"
 * (a replica's link: lib/repl/replica.c). */
static int client_type(struct goblin_slice name)
{
    if (goblin__arg_is(name, "normal"))
        return 0;
    if (goblin__arg_is(name, "slave") || goblin__arg_is(name, "replica"))
        return 1;
    if (goblin__arg_is(name, "pubsub"))
        return 2;
    if (goblin__arg_is(name, "master"))
        return 3;
    return -1;
}

/* A session's type as client_type numbers it, as Redis's getClientType
 * tells them: a master's link, a replica (MONITOR is normal), one
 * subscribed to anything (the output buffer class it is held to,
 * session_io.c), else normal. */
static int session_type(const goblin_session *s)
{
    if (s->flags & SESS_MASTER)
        return 3;
    if (goblin__repl_is_replica((goblin_session *)s))
        return 1;
    return goblin__ps_total(&s->ps) > 0 ? 2 : 0;
}

static void unknown_type(goblin__exec *x, struct goblin_slice name)
{
    goblin__reply_errorf(x, "ERR Unknown client type '%.*s'",
                         goblin__cstr_len(name), (const char *)name.ptr);
}

static bool id_listed(uint64_t id, int argc, const struct goblin_slice *argv)
{
    int64_t v;
    int j;

    for (j = 3; j < argc; j++)
        if (goblin_int64_parse(argv[j].ptr, argv[j].len, &v) == 0 &&
            (uint64_t)v == id)
            return true;
    return false;
}

void goblin__cmd_client_list(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    struct goblin__text t;
    goblin_session *s;
    int64_t v;
    int j, type = 0;
    bool by_id = false;

    if (argc == 4 && goblin__arg_is(argv[2], "type")) {
        if ((type = client_type(argv[3])) < 0) {
            unknown_type(x, argv[3]);
            return;
        }
    } else if (argc > 3 && goblin__arg_is(argv[2], "id")) {
        for (j = 3; j < argc; j++)
            if (!goblin__arg_range(x, argv[j], 1, INT64_MAX, &v,
                                   "ERR Invalid client ID"))
                return;
        by_id = true;
    } else if (argc != 2) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return;
    }
    goblin__text_init(&t, x->st);
    for (s = x->eng->first; s != NULL; s = s->next)
        if ((!by_id || id_listed(s->id, argc, argv)) &&
            (by_id || argc == 2 || type == session_type(s)))
            goblin__client_line(&t, s);
    reply_text(x, &t);
}

struct kill_filter {
    int64_t id;                       /* 0 = any */
    const struct goblin_slice *addr;  /* NULL = any */
    const struct goblin_slice *laddr; /* NULL = any */
    int type;                         /* -1 = any */
    const struct goblin__acl_user *user; /* NULL = any */
    bool skipme;
};

static bool slice_is(struct goblin_slice a, const char *s)
{
    return strlen(s) == a.len && memcmp(s, a.ptr, a.len) == 0;
}

/* Parses CLIENT KILL's filters (the form with options); replies the error
 * and returns false on a bad one. */
static bool kill_parse(goblin__exec *x, int argc,
                       const struct goblin_slice *argv, struct kill_filter *f)
{
    int i;

    for (i = 2; i < argc; i += 2) {
        const struct goblin_slice *opt = &argv[i], *val = &argv[i + 1];

        if (i + 1 >= argc) {
            goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
            return false;
        } else if (goblin__arg_is(*opt, "id")) {
            if (!goblin__arg_range(x, *val, 1, INT64_MAX, &f->id,
                                   "ERR client-id should be greater than 0"))
                return false;
        } else if (goblin__arg_is(*opt, "type")) {
            if ((f->type = client_type(*val)) < 0) {
                unknown_type(x, *val);
                return false;
            }
        } else if (goblin__arg_is(*opt, "addr")) {
            f->addr = val;
        } else if (goblin__arg_is(*opt, "laddr")) {
            f->laddr = val;
        } else if (goblin__arg_is(*opt, "user")) {
            if ((f->user = goblin__acl_find(x->eng, *val)) == NULL) {
                goblin__reply_errorf(x, "ERR No such user '%.*s'",
                                     goblin__cstr_len(*val),
                                     (const char *)val->ptr);
                return false;
            }
        } else if (goblin__arg_is(*opt, "skipme") &&
                   (goblin__arg_is(*val, "yes") ||
                    goblin__arg_is(*val, "no"))) {
            f->skipme = goblin__arg_is(*val, "yes");
        } else {
            goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
            return false;
        }
    }
    return true;
}

static bool kill_matches(const goblin__exec *x, const goblin_session *s,
                         const struct kill_filter *f)
{
    if (s->flags & SESS_KILLED)
        return false;
    if (f->id != 0 && (uint64_t)f->id != s->id)
        return false;
    if (f->type >= 0 && f->type != session_type(s))
        return false;
    if (f->addr != NULL && !slice_is(*f->addr, s->peer))
        return false;
    if (f->laddr != NULL && !slice_is(*f->laddr, s->local))
        return false;
    if (f->user != NULL && f->user != s->acl)
        return false;
    return !(f->skipme && s == x->sess);
}

/* Marks s to be closed; another session's server is woken to do it. */
void goblin__session_kill(goblin_session *s, goblin_session *by)
{
    goblin_engine *eng = s->eng;

    (void)eng;
    s->flags |= SESS_CLOSE | SESS_KILLED;
    if (s != by)
        goblin__session_wake(s);
}

void goblin__cmd_client_kill(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    struct kill_filter f = {0, NULL, NULL, -1, NULL, true};
    goblin_session *s;
    int64_t killed = 0;

    if (argc == 3) {
        f.addr = &argv[2];
        f.skipme = false;
    } else if (!kill_parse(x, argc, argv, &f)) {
        return;
    }
    for (s = x->eng->first; s != NULL; s = s->next) {
        if (kill_matches(x, s, &f)) {
            goblin__session_kill(s, x->sess);
            killed++;
        }
    }
    if (argc > 3)
        goblin__reply_int(x, killed);
    else if (killed == 0)
        goblin__reply_error(x, "ERR No such client");
    else
        goblin__reply_ok(x);
}

/* CLIENT NO-EVICT and NO-TOUCH: ON or OFF sets a flag. */
static void on_off(goblin__exec *x, const struct goblin_slice *arg,
                   uint32_t flag)
{
    if (goblin__arg_is(*arg, "on")) {
        x->sess->flags |= flag;
    } else if (goblin__arg_is(*arg, "off")) {
        x->sess->flags &= ~flag;
    } else {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return;
    }
    goblin__reply_ok(x);
}

void goblin__cmd_client_no_evict(goblin__exec *x, int argc,
                                 const struct goblin_slice *argv)
{
    (void)argc;
    on_off(x, &argv[2], SESS_NO_EVICT);
}

/* CLIENT PAUSE timeout [WRITE|ALL]: the mode is read before the
 * timeout, as Redis does. A pause in effect keeps the later end and the
 * stronger type. */
void goblin__cmd_client_pause(goblin__exec *x, int argc,
                              const struct goblin_slice *argv)
{
    int type = GOBLIN__PAUSE_ALL;
    int64_t ms, now;

    if (argc > 4) {
        goblin__reply_errorf(x, "ERR unknown subcommand or wrong number of "
                                "arguments for '%.*s'. Try CLIENT HELP.",
                             (int)argv[1].len, (const char *)argv[1].ptr);
        return;
    }
    if (argc == 4 && goblin__arg_is(argv[3], "write")) {
        type = GOBLIN__PAUSE_WRITE;
    } else if (argc == 4 && !goblin__arg_is(argv[3], "all")) {
        goblin__reply_error(x, "ERR CLIENT PAUSE mode must be WRITE or ALL");
        return;
    }
    if (!goblin__arg_int64(x, argv[2], &ms,
                           "ERR timeout is not an integer or out of range"))
        return;
    if (ms < 0) {
        goblin__reply_error(x, "ERR timeout is negative");
        return;
    }
    now = goblin__now_ms(x->eng->st);
    goblin__pause(x->eng, type, ms > INT64_MAX - now ? INT64_MAX : now + ms);
    goblin__reply_ok(x);
}

void goblin__cmd_client_unpause(goblin__exec *x, int argc,
                                const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    goblin__unpause(x->eng);
    goblin__reply_ok(x);
}

void goblin__cmd_client_no_touch(goblin__exec *x, int argc,
                                 const struct goblin_slice *argv)
{
    (void)argc;
    on_off(x, &argv[2], SESS_NO_TOUCH);
}

/* CLIENT REPLY: OFF and SKIP answer nothing, not even to themselves. */
void goblin__cmd_client_reply(goblin__exec *x, int argc,
                              const struct goblin_slice *argv)
{
    goblin_session *s = x->sess;

    (void)argc;
    if (goblin__arg_is(argv[2], "on")) {
        s->flags &= ~(uint32_t)(SESS_REPLY_OFF | SESS_REPLY_SKIP);
        x->sink = x->out;
        goblin__reply_ok(x);
    } else if (goblin__arg_is(argv[2], "off")) {
        s->flags |= SESS_REPLY_OFF;
    } else if (goblin__arg_is(argv[2], "skip")) {
        if (!(s->flags & SESS_REPLY_OFF))
            s->flags |= SESS_REPLY_SKIP_NEXT;
    } else {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
    }
}

void goblin__cmd_client_help(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    static const char *const help[] = {
        "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GETNAME",
        "    Return the name of the current connection.",
        "ID",
        "    Return the ID of the current connection.",
        "INFO",
        "    Return information about the current client connection.",
        "KILL <ip:port>",
        "    Kill connection made from <ip:port>.",
        "KILL <option> <value> [<option> <value> [...]]",
        "    Kill connections. Options are:",
        "    * ADDR (<ip:port>|<unixsocket>:0)",
        "      Kill connections made from the specified address",
        "    * LADDR (<ip:port>|<unixsocket>:0)",
        "      Kill connections made to specified local address",
        "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
        "      Kill connections by type.",
        "    * USER <username>",
        "      Kill connections authenticated by <username>.",
        "    * SKIPME (YES|NO)",
        "      Skip killing current connection (default: yes).",
        "LIST [options ...]",
        "    Return information about client connections. Options:",
        "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
        "      Return clients of specified type.",
        "UNPAUSE",
        "    Stop the current client pause, resuming traffic.",
        "PAUSE <timeout> [WRITE|ALL]",
        "    Suspend all, or just write, clients for <timeout> milliseconds.",
        "REPLY (ON|OFF|SKIP)",
        "    Control the replies sent to the current connection.",
        "SETNAME <name>",
        "    Assign the name <name> to the current connection.",
        "SETINFO <option> <value>",
        "    Set client meta attr. Options are:",
        "    * LIB-NAME: the client lib name.",
        "    * LIB-VER: the client lib version.",
        "NO-EVICT (ON|OFF)",
        "    Protect current client connection from eviction.",
        "NO-TOUCH (ON|OFF)",
        "    Will not touch LRU/LFU stats when this mode is on.",
        "HELP",
        "    Prints this help.",
    };

    (void)argc;
    (void)argv;
    goblin__reply_help(x, help, sizeof(help) / sizeof(help[0]));
}
