/* dispatch.c - running one command: lookup, the container's subcommand,
 * arity, authentication, MULTI queueing, the handler, statistics; in
 * Redis 7's order (server.c processCommand) and with its texts.
 *
 * A command refused before it runs ("rejected": unknown, wrong arity,
 * NOAUTH, a no-multi command inside MULTI, NOPERM, OOM) counts in rejected_calls and, inside MULTI, makes EXEC abort
 * (Redis's flagTransaction). A refused EXEC aborts the transaction with
 * "EXECABORT Transaction discarded because of: <error>".
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "acl_log.h"
#include "acl.h"
#include "block.h"
#include "commands/handlers.h"
#include "maxmemory.h"
#include "commands/respond.h"
#include "goblin/script.h"
#include "session.h"
#include "slowlog.h"
#include "monitor.h"
#include "pause.h"
#include "tracking.h"
#include "stream/propagate.h"
#include "repl/replica.h"

/* The error for an unknown command: argv[0] and the first arguments up to
 * 128 bytes of them, each quoted, as Redis formats it. */
static void unknown_command(goblin__exec *x, int argc,
                            const struct goblin_slice *argv)
{
    char args[512];
    size_t len = 0;
    int i;

    args[0] = '\0';
    for (i = 1; i < argc && len < 128; i++) {
        int n = goblin__cstr_len(argv[i]);

        if ((size_t)n > 128 - len)
            n = (int)(128 - len);
        len += (size_t)snprintf(args + len, sizeof(args) - len, "'%.*s' ", n,
                                (const char *)argv[i].ptr);
    }
    goblin__reply_errorf(x, "ERR unknown command '%.*s', with args "
                            "beginning with: %s",
                         goblin__cstr_len(argv[0]) > 128
                             ? 128
                             : goblin__cstr_len(argv[0]),
                         (const char *)argv[0].ptr, args);
}

static void unknown_subcommand(goblin__exec *x, const struct goblin_slice *argv,
                               const struct goblin__command *parent)
{
    char upper[32];
    size_t i;

    for (i = 0; parent->name[i] != '\0' && i < sizeof(upper) - 1; i++)
        upper[i] = (char)(parent->name[i] - ('a' <= parent->name[i] &&
                                                     parent->name[i] <= 'z'
                                                 ? 'a' - 'A'
                                                 : 0));
    upper[i] = '\0';
    goblin__reply_errorf(x, "ERR unknown subcommand '%.*s'. Try %s HELP.",
                         goblin__cstr_len(argv[1]) > 128
                             ? 128
                             : goblin__cstr_len(argv[1]),
                         (const char *)argv[1].ptr, upper);
}

/* Finds what argv names, replying the error when nothing: returns the
 * command or NULL. */
static const struct goblin__command *resolve(goblin__exec *x, int argc,
                                             const struct goblin_slice *argv)
{
    const struct goblin__command *c = goblin__command_lookup_hinted(
        x->eng, argv[0], &x->sess->lookup_hint);

    if (c == NULL) {
        unknown_command(x, argc, argv);
        return NULL;
    }
    if (c->nsub == 0 || argc < 2)
        return c;
    x->cmd = goblin__command_lookup_sub(x->eng, c, argv[1]);
    if (x->cmd == NULL)
        unknown_subcommand(x, argv, c);
    return x->cmd;
}

static bool arity_ok(const struct goblin__command *c, int argc)
{
    return c->arity > 0 ? argc == c->arity : argc >= -c->arity;
}

static bool is_exec(const struct goblin__command *c)
{
    return c->fn == goblin__cmd_exec;
}

/* Commands that run at once inside MULTI instead of being queued. */
static bool runs_in_multi(const struct goblin__command *c)
{
    return c->fn == goblin__cmd_exec || c->fn == goblin__cmd_discard || c->fn == goblin__cmd_multi ||
           c->fn == goblin__cmd_watch || c->fn == goblin__cmd_quit || c->fn == goblin__cmd_reset;
}

/* Refuses the command with text (code word included). */
static void reject(goblin__exec *x, const char *text)
{
    goblin_session *s = x->sess;

    if (x->cmd != NULL)
        x->eng->stats[x->cmd - goblin__commands].rejected++;
    x->eng->stat_rejected++;
    if (x->cmd != NULL && is_exec(x->cmd)) {
        goblin__multi_discard(s);
        goblin__unwatch_all(s);
        goblin__reply_errorf(x, "EXECABORT Transaction discarded because "
                                "of: %s",
                             strncmp(text, "ERR ", 4) == 0 ? text + 4 : text);
        return;
    }
    if (s->flags & SESS_MULTI)
        s->flags |= SESS_DIRTY_EXEC;
    goblin__reply_error(x, text);
}

/* The user's permissions (Redis's ACLCheckAllPerm), for commands that
 * need authentication; replies the NOPERM refusal. */
static bool acl_ok(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    char text[160];
    enum goblin__acl_denied d;
    int pos = 0;

    if (x->sess->acl == NULL)
        return true; /* AUTH or HELLO on a session whose user is gone */
    if (goblin__acl_unrestricted(x->sess->acl))
        return true; /* no ACL users: one predictable branch */
    d = goblin__acl_check(x->sess, x->sess->acl, x->cmd, argc, argv, &pos);
    if (d == ACL_OK)
        return true;
    x->sess->lastcmd = x->cmd; /* Redis's CLIENT LIST line shows it */
    goblin__acl_log_denied(x->sess, x->cmd, d,
                           (x->sess->flags & SESS_MULTI)
                               ? GOBLIN__ACLLOG_MULTI
                               : GOBLIN__ACLLOG_TOPLEVEL,
                           argv, pos);
    reject(x, goblin__acl_denied_text(d, x->cmd, text, sizeof(text)));
    return false;
}

/* While a script is past busy-reply-threshold, only the table's
 * allow-busy commands run, and SHUTDOWN only with NOSAVE. */
static bool busy_refuses(const goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    if (!(x->cmd->flags & CMD_ALLOW_BUSY))
        return true;
    if (x->cmd->fn == goblin__cmd_shutdown) {
        for (int i = 1; i < argc; i++)
            if (argv[i].len == 6 &&
                strncasecmp(argv[i].ptr, "nosave", 6) == 0)
                return false;
        return true;
    }
    return false;
}

/* A session authenticated by a user without restrictions, outside MULTI
 * and MONITOR, not subscribed, on an engine without maxmemory, a write
 * refusal or a busy script: none of admit's checks after the arity can
 * refuse its command. */
static inline bool nothing_refuses(const goblin__exec *x)
{
    const goblin_session *s = x->sess;

    return __builtin_expect((s->flags & (SESS_AUTHED | SESS_MULTI |
                                         SESS_MONITOR)) == SESS_AUTHED &&
                                s->acl != NULL &&
                                goblin__acl_unrestricted(s->acl) &&
                                x->eng->maxmemory == 0 &&
                                !x->eng->refuse_writes &&
                                !x->eng->script_busy &&
                                goblin__ps_total(&s->ps) == 0,
                            1);
}

/* The usual case of admit, inline: the command the session's hint
 * names, no subcommand, its arity right, and nothing_refuses. Sets
 * x->cmd when true. */
static inline bool admit_plain(goblin__exec *x, int argc,
                               const struct goblin_slice *argv)
{
    const struct goblin__command *c =
        goblin__lookup_hint_hit(&x->sess->lookup_hint, argv[0]);

    if (c == NULL || c->nsub != 0 || !arity_ok(c, argc))
        return false;
    if (!nothing_refuses(x))
        return false;
    x->cmd = c;
    return true;
}

/* Checks what Redis checks before running or queueing; replies the
 * refusal and returns false. */
static __attribute__((noinline)) bool admit(goblin__exec *x, int argc,
                                            const struct goblin_slice *argv)
{
    char text[160];
    const char *gate;
    goblin_session *s = x->sess;

    x->cmd = resolve(x, argc, argv);
    if (x->cmd == NULL) {
        x->eng->stat_rejected++;
        if (s->flags & SESS_MULTI)
            s->flags |= SESS_DIRTY_EXEC;
        return false;
    }
    if (!arity_ok(x->cmd, argc)) {
        snprintf(text, sizeof(text),
                 "ERR wrong number of arguments for '%s' command",
                 x->cmd->fullname);
        reject(x, text);
        return false;
    }
    if (nothing_refuses(x))
        return true;
    if ((!(s->flags & SESS_AUTHED) || s->acl == NULL) &&
        !(x->cmd->flags & CMD_NO_AUTH)) {
        reject(x, "NOAUTH Authentication required.");
        return false;
    }
    /* The table's no-multi flag (SAVE, SHUTDOWN): refused while queueing,
     * so EXEC then aborts, as Redis does before its ACL check. */
    if ((s->flags & SESS_MULTI) && (x->cmd->flags & CMD_NO_MULTI)) {
        reject(x, "ERR Command not allowed inside a transaction");
        return false;
    }
    if (!acl_ok(x, argc, argv))
        return false;
    if (x->eng->maxmemory != 0 && !goblin__maxmemory_admit(x)) {
        reject(x, GOBLIN__OOM_TEXT);
        return false;
    }
    /* NOREPLICAS, and a replica's READONLY and MASTERDOWN. */
    if (__builtin_expect(x->eng->refuse_writes, 0) &&
        (gate = goblin__repl_gate(x)) != NULL) {
        reject(x, gate);
        return false;
    }
    if (__builtin_expect((s->flags & SESS_MONITOR) != 0, 0) &&
        x->cmd->flags & (CMD_READONLY | CMD_WRITE | CMD_MAY_REPLICATE)) {
        reject(x, "ERR Replica can't interact with the keyspace");
        return false;
    }
    if (!goblin__pubsub_allowed(s, x->cmd)) {
        snprintf(text, sizeof(text), "ERR Can't execute '%s': only "
                 "(P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
                 "are allowed in this context", x->cmd->fullname);
        reject(x, text);
        return false;
    }
    if (x->eng->script_busy && busy_refuses(x, argc, argv)) {
        reject(x, (x->eng->script_run->flags & GOBLIN_SCRIPT_EVAL)
                      ? "BUSY Redis is busy running a script. You can only "
                        "call SCRIPT KILL or SHUTDOWN NOSAVE."
                      : "BUSY Redis is busy running a script. You can only "
                        "call FUNCTION KILL or SHUTDOWN NOSAVE.");
        return false;
    }
    return true;
}

/* After each command: CLIENT REPLY SKIP applies to the next one only;
 * CLIENT CACHING to the next command but CLIENT's own, or to a whole
 * transaction. */
static void after_command(goblin_session *s, const struct goblin__command *c)
{
    if (__builtin_expect((s->track & TRACK_CACHING) != 0, 0) &&
        !(s->flags & SESS_MULTI) &&
        (c == NULL || strncmp(c->fullname, "client|", 7) != 0))
        s->track &= ~(uint32_t)TRACK_CACHING;
    s->flags &= ~(uint32_t)SESS_REPLY_SKIP;
    if (s->flags & SESS_REPLY_SKIP_NEXT) {
        s->flags |= SESS_REPLY_SKIP;
        s->flags &= ~(uint32_t)SESS_REPLY_SKIP_NEXT;
    }
}

/* Runs an admitted command's handler and counts it (timed on a sample,
 * see goblin__cmdstat_timed). */
static inline __attribute__((always_inline)) void
run_command(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    struct goblin__cmdstat *st = &x->eng->stats[x->cmd - goblin__commands];
    bool timed = goblin__cmdstat_timed(st) || x->eng->time_all;
    uint64_t t0 = timed ? goblin__ticks(x->eng) : 0;

    x->sess->lastcmd = x->cmd;
    x->failed = false;
    goblin__maxmemory_touch_mode(x);
    if (__builtin_expect(x->eng->nmonitors != 0, 0) &&
        (x->cmd->flags & (CMD_SKIP_MONITOR | CMD_ADMIN)) == CMD_SKIP_MONITOR)
        goblin__monitor_feed(x, argc, argv); /* EVAL before its script */
    x->st->reads = GOBLIN__CMD_READ_MODE(x->cmd);
    x->cmd->fn(x, argc, argv);
    x->st->reads = 0;
    if (__builtin_expect(x->eng->nmonitors != 0, 0) &&
        !(x->cmd->flags & (CMD_SKIP_MONITOR | CMD_ADMIN)))
        goblin__monitor_feed(x, argc, argv);
    if (__builtin_expect(x->sess->track != 0, 0))
        goblin__tracking_after(x, argc, argv);
    x->st->no_touch = false;
    goblin__cmdstat_count(x->eng, st, timed, t0);
    if (timed && st->sample >= x->eng->watch_ticks)
        goblin__slowlog_watch(x, argc, argv, st->sample);
    st->failed += x->failed;
    x->eng->stat_commands++;
}

void goblin__run_command(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    run_command(x, argc, argv);
}

/* With a write stream consumer, the stream's wrapper runs the command
 * and sends its effect (stream/propagate.c); without one, one branch. */
void goblin__run(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    /* A replica running its master's command: keys past their deadline
     * are live to it and to the stream's reading of its effect (store.h,
     * master_view), set once around EXEC and its queue. A path of its
     * own: folded into the one below, it costs every RESP request 4
     * instructions (bench/icount.sh). */
    if (__builtin_expect(x->sess->flags & SESS_MASTER, 0) &&
        !x->st->master_view) {
        goblin_store *st = x->st; /* SELECT changes x->st */

        st->master_view = true;
        if (x->eng->stream_on)
            goblin__stream_run(x, argc, argv);
        else
            run_command(x, argc, argv);
        st->master_view = false;
        return;
    }
    if (__builtin_expect(x->eng->stream_on, 0))
        goblin__stream_run(x, argc, argv);
    else
        run_command(x, argc, argv);
}

int goblin__dispatch(goblin_session *s, int argc,
                     const struct goblin_slice *argv,
                     struct goblin_sink *sink)
{
    goblin__exec x = {s->eng, s,    s->db,      sink,
                      sink,   NULL, s->resp,    false, NULL};

    if (s->flags & (SESS_REPLY_OFF | SESS_REPLY_SKIP))
        x.sink = &s->discard;
    s->eng->running = s;
    if (admit_plain(&x, argc, argv) || admit(&x, argc, argv)) {
        /* CLIENT PAUSE: the command waits, unrun and unanswered. */
        if (__builtin_expect(s->eng->pause_type != 0, 0) &&
            goblin__pause_holds(s, x.cmd, argc, argv)) {
            s->eng->running = NULL;
            return 0;
        }
        if ((s->flags & SESS_MULTI) && !runs_in_multi(x.cmd))
            goblin__multi_queue(&x, argc, argv);
        else if (__builtin_expect(!(s->flags & SESS_MASTER) &&
                                      !s->eng->stream_on,
                                  1))
            run_command(&x, argc, argv); /* goblin__run's usual case */
        else
            goblin__run(&x, argc, argv);
    }
    if (__builtin_expect(s->eng->track_pending, 0))
        goblin__tracking_flush(s->eng, s, sink == &s->writer.sink);
    s->eng->running = NULL;
    after_command(s, x.cmd);
    goblin__block_after(s->eng);
    return 0;
}

int goblin__execute(goblin_session *s, int argc,
                    const struct goblin_slice *argv)
{
    return goblin__dispatch(s, argc, argv, &s->writer.sink);
}

int goblin__command_execute(goblin_session *s, int argc,
                            const struct goblin_slice *argv,
                            struct goblin_sink *sink)
{
    if (argc < 1 || s->flags & SESS_CLOSE)
        return GOBLIN_EINVAL;
    goblin__dispatch(s, argc, argv, sink);
    return s->flags & SESS_CLOSE ? GOBLIN_ECONNABORTED : 0;
}
