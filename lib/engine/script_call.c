/* script_call.c - the engine's side of scripting: attaching a scripting
 * library, the checks Redis makes before a script runs (script.c
 * scriptPrepareForRun) and on each command a script calls (scriptCall),
 * in Redis 7.0's order and with its texts.
 *
 * A script runs inside its EVAL or FCALL, under the engine's lock, as the
 * calling session: redis.call uses the caller's ACL user and database. Its
 * commands reply into the scripting library's sink in the RESP version
 * the script chose (redis.setresp), not the caller's. While a script
 * runs, eng->in_exec is set as during EXEC: blocking commands answer at
 * once instead of blocking, and BGSAVE waits; and the clock keys expire
 * by stands still at the script's start (eng->frozen_ms), as in Redis.
 */
#include <stdio.h>
#include <string.h>

#include "acl_log.h"
#include "acl.h"
#include "commands/respond.h"
#include "goblin/script.h"
#include "maxmemory.h"
#include "session.h"
#include "settings.h"

void goblin_engine_scripting(goblin_engine *eng,
                             const struct goblin_scripting *ops, void *ctx)
{
    eng->scripting = ops;
    eng->scripting_ctx = ctx;
}

void goblin_engine_function_libs(goblin_engine *eng,
                                 const struct goblin_function_libs *ops,
                                 void *ctx)
{
    eng->fn_libs = ops;
    eng->fn_libs_ctx = ctx;
}

void goblin_script_functions_changed(goblin_session *s)
{
    s->eng->st->dirty++; /* eng->st's counter is the server's (saves) */
}

int goblin_session_resp(const goblin_session *s)
{
    return s->resp;
}

int64_t goblin_script_busy_ms(const goblin_session *s)
{
    return s->eng->script_busy_ms;
}

uint64_t goblin_script_heap_max(const goblin_engine *eng)
{
    return eng->lua_heap_max;
}

/* ---- settings: kept in the engine, as every run reads them ---- */

static int get_busy_ms(void *ctx, char *buf, size_t cap)
{
    return snprintf(buf, cap, "%lld",
                    (long long)((goblin_engine *)ctx)->script_busy_ms);
}

static int set_busy_ms(void *ctx, struct goblin_slice v, const char **why)
{
    int64_t n;

    if (goblin__setting_parse("busy-reply-threshold", v, &n, why) != 0)
        return GOBLIN_EINVAL;
    ((goblin_engine *)ctx)->script_busy_ms = n;
    return 0;
}

static int get_heap_max(void *ctx, char *buf, size_t cap)
{
    return snprintf(buf, cap, "%llu",
                    (unsigned long long)((goblin_engine *)ctx)->lua_heap_max);
}

static int set_heap_max(void *ctx, struct goblin_slice v, const char **why)
{
    int64_t n;

    if (goblin__setting_parse("lua-heap-max", v, &n, why) != 0)
        return GOBLIN_EINVAL;
    ((goblin_engine *)ctx)->lua_heap_max = (uint64_t)n;
    return 0;
}

int goblin__script_settings_init(goblin_engine *eng)
{
    const struct goblin_setting own[] = {
        {"busy-reply-threshold", "lua-time-limit", get_busy_ms, set_busy_ms,
         eng},
        {"lua-heap-max", NULL, get_heap_max, set_heap_max, eng},
    };
    size_t i;
    int rc;

    eng->script_busy_ms = 5000;
    eng->lua_heap_max = (uint64_t)1 << 30;
    for (i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        if ((rc = goblin_engine_setting_add(eng, &own[i])) != 0)
            return rc;
    return 0;
}

void goblin_script_log(goblin_session *s, enum goblin_log_level level,
                       const char *text)
{
    if (s->eng->cfg.log != NULL)
        s->eng->cfg.log(s->eng->cfg.log_ctx, level, text);
}

void goblin_script_busy(struct goblin_script_run *run, bool on)
{
    run->caller->eng->script_busy = on;
}

void goblin_script_yield(struct goblin_script_run *run)
{
    goblin_engine *eng = run->caller->eng;

    if (eng->busy_hook != NULL)
        eng->busy_hook(eng->busy_hook_ctx, run->caller);
}

void goblin_engine_busy_hook(goblin_engine *eng,
                             void (*fn)(void *ctx, goblin_session *s),
                             void *ctx)
{
    eng->busy_hook = fn;
    eng->busy_hook_ctx = ctx;
}

void goblin_engine_script_stop(goblin_engine *eng)
{
    if (eng->script_run != NULL)
        eng->script_run->killed = true;
}

goblin_session *goblin_engine_busy_session(const goblin_engine *eng)
{
    return eng->script_busy && eng->script_run != NULL
               ? eng->script_run->caller
               : NULL;
}

static void refuse(struct goblin_sink *sink, const char *text)
{
    sink->ops->error(sink, text, strlen(text));
}

int goblin_script_begin(goblin_session *s, struct goblin_script_run *run,
                        struct goblin_sink *sink)
{
    goblin_engine *eng = s->eng;
    unsigned f = run->flags;

    run->caller = s;
    run->wrote = false;
    run->killed = false;
    run->oom = eng->maxmemory != 0 && !goblin__maxmemory_fits(eng);
    if (!(f & GOBLIN_SCRIPT_EVAL_COMPAT)) {
        if (!(f & GOBLIN_SCRIPT_ALLOW_OOM) && run->oom) {
            refuse(sink, "OOM allow-oom flag is not set on the script, can "
                         "not run it when used memory > 'maxmemory'");
            return GOBLIN_EINVAL;
        }
        if (!(f & GOBLIN_SCRIPT_NO_WRITES) && (f & GOBLIN_SCRIPT_RO)) {
            refuse(sink, "ERR Can not execute a script with write flag "
                         "using *_ro command.");
            return GOBLIN_EINVAL;
        }
    }
    run->read_only = (f & GOBLIN_SCRIPT_RO) ||
                     (!(f & GOBLIN_SCRIPT_EVAL_COMPAT) &&
                      (f & GOBLIN_SCRIPT_NO_WRITES));
    if (!(f & GOBLIN_SCRIPT_EVAL_COMPAT) && (f & GOBLIN_SCRIPT_ALLOW_OOM))
        run->oom = false; /* nothing is refused for memory */
    run->start_ns = eng->cfg.now_ns(eng->cfg.now_ns_ctx);
    /* Scripts do not nest, but one may run inside EXEC's queue: what
     * that set is given back at the end. Keys expire by the script's own
     * start, inside EXEC too (Redis's scriptTimeSnapshot). */
    eng->script_outer_exec = eng->in_exec;
    eng->script_outer_frozen = eng->frozen_ms;
    eng->script_outer_db = s->dbid;
    eng->frozen_ms = goblin__now_ms(eng->st);
    eng->in_exec = true;
    eng->script_run = run;
    return 0;
}

void goblin_script_end(struct goblin_script_run *run)
{
    goblin_session *s = run->caller;
    goblin_engine *eng = s->eng;

    /* The script's SELECT was its own: the caller goes back to its
     * database's number (the one SWAPDB in the script leaves it on). That
     * store was open when the script began and only a load closes one, so
     * selecting it allocates nothing and cannot fail. */
    if (s->dbid != eng->script_outer_db)
        (void)goblin__db_select(s, eng->script_outer_db);
    eng->in_exec = eng->script_outer_exec;
    eng->frozen_ms = eng->script_outer_frozen;
    eng->script_run = NULL;
    eng->script_busy = false;
}

void goblin_script_error_counted(goblin_session *s)
{
    s->eng->script_err_counted = true;
}

/* Finds the command argv names as Redis's lookupCommand does: an unknown
 * subcommand is an unknown command. A script names its commands with the
 * same few Lua strings run after run, so a hint kept by the string's
 * address usually finds the command with one comparison of names (a
 * wrong hint costs only the full lookup: the names are compared). */
static const struct goblin__command *lookup(goblin_engine *eng, int argc,
                                            const struct goblin_slice *argv)
{
    uintptr_t at = (uintptr_t)argv[0].ptr;
    struct goblin__lookup_hint *hint =
        &eng->script_hints[(at >> 4 ^ at >> 9) & 15];
    const struct goblin__command *c =
        goblin__command_lookup_hinted(eng, argv[0], hint);

    if (c == NULL || c->nsub == 0 || argc < 2)
        return c;
    return goblin__command_lookup_sub(eng, c, argv[1]);
}

/* The checks of scriptCall; NULL when the command may run, else the
 * error text (in buf when it is built). */
static const char *check(struct goblin_script_run *run, goblin__exec *x,
                         int argc, const struct goblin_slice *argv,
                         char *buf, size_t cap)
{
    const struct goblin__command *c = x->cmd;
    goblin_session *s = x->sess;
    int pos = 0;

    if (c == NULL)
        return "ERR Unknown Redis command called from script";
    if (c->fn == NULL || (c->arity > 0 ? argc != c->arity
                                       : argc < -c->arity))
        return "ERR Wrong number of args calling Redis command from script";
    if (c->flags & CMD_NOSCRIPT)
        return "ERR This Redis command is not allowed from script";
    if (s->acl == NULL)
        return "ERR The user executing the script can't run this command "
               "or subcommand";
    if (!goblin__acl_unrestricted(s->acl)) {
        enum goblin__acl_denied d =
            goblin__acl_check(s, s->acl, c, argc, argv, &pos);

        if (d != ACL_OK)
            goblin__acl_log_denied(s, c, d, GOBLIN__ACLLOG_LUA, argv, pos);
        /* Redis 7.0's scriptVerifyACL texts. */
        if (d == ACL_DENIED_KEY)
            return "ERR The user executing the script can't access at "
                   "least one of the keys mentioned in the command "
                   "arguments";
        if (d == ACL_DENIED_CHANNEL)
            return "ERR The user executing the script can't publish to the "
                   "channel mentioned in the command";
        if (d != ACL_OK) {
            (void)buf;
            (void)cap;
            return "ERR The user executing the script can't run this "
                   "command or subcommand";
        }
    }
    if (run->read_only && (c->flags & (CMD_WRITE | CMD_MAY_REPLICATE)))
        return "ERR Write commands are not allowed from read-only scripts.";
    if (run->oom && !run->wrote && (c->flags & CMD_DENYOOM) &&
        x->eng->maxmemory != 0)
        return GOBLIN__OOM_TEXT;
    return NULL;
}

int goblin_script_acl_check(struct goblin_script_run *run, int argc,
                            const struct goblin_slice *argv)
{
    goblin_session *s = run->caller;
    const struct goblin__command *c;
    int pos = 0;

    if (argc < 1 || (c = lookup(s->eng, argc, argv)) == NULL ||
        c->fn == NULL)
        return GOBLIN_EINVAL;
    if (s->acl == NULL)
        return 0;
    if (goblin__acl_unrestricted(s->acl))
        return 1;
    return goblin__acl_check(s, s->acl, c, argc, argv, &pos) == ACL_OK;
}

void goblin_script_call(struct goblin_script_run *run, int argc,
                        const struct goblin_slice *argv,
                        struct goblin_sink *sink)
{
    goblin_session *s = run->caller;
    /* The caller's database, or the one the script's SELECT chose. */
    goblin__exec x = {s->eng, s,    s->db,     sink,
                      sink,   NULL, run->resp, false, NULL};
    const char *err;
    char buf[200];

    if (argc < 1) {
        refuse(sink, "ERR Please specify at least one argument for this "
                     "redis lib call");
        return;
    }
    x.cmd = lookup(s->eng, argc, argv);
    err = check(run, &x, argc, argv, buf, sizeof(buf));
    if (err != NULL) {
        if (x.cmd != NULL)
            s->eng->stats[x.cmd - goblin__commands].rejected++;
        s->eng->stat_rejected++;
        goblin__reply_error(&x, err);
        return;
    }
    if (x.cmd->flags & CMD_WRITE)
        run->wrote = true;
    goblin__run(&x, argc, argv);
}
