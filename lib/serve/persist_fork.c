/* persist_fork.c - the persistence of a server that forks (goblin/serve.h,
 * "a forking server's persistence"): BGSAVE, BGREWRITEAOF and the
 * automatic AOF rewrite as children, and replicas' full syncs
 * (goblin/repl.h) (the engine's bgsave, aof_rewrite and repl_fork
 * hooks call the server's fork hook: the library never forks by itself),
 * reaping them by pid, appendonly at start and on CONFIG SET, and the
 * final save. What a child does and what the parent does once it ended
 * are the persistence policy's (persist_policy.c) and the AOF's.
 *
 * The fork happens inside an engine call, so the engine lock is held
 * (other threads wait) and the child's copy of the store is consistent.
 * The BGSAVE child (goblin_serve_bgsave_child) unblocks signals, closes
 * every descriptor but the log, saves (temporary file, fsync, rename) and
 * _exit()s; the AOF child writes the base and _exit()s. Neither touches
 * the lock, the sockets or the rings.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <goblin/aof.h>
#include <goblin/repl.h>
#include <goblin/serve.h>

#include "util/config_size.h"

struct goblin_persist {
    struct goblin_persist_config cfg;
    struct goblin_serve_persist policy;
    goblin_engine *engine;
    pid_t save_child;            /* the BGSAVE child, 0 = none */
    char save_path[4096];        /* where it saves */
    pid_t aof_child;             /* the AOF rewrite child, 0 = none */
    pid_t repl_child;            /* a replicas' full sync, 0 = none */
    goblin_aof *aof;             /* appendonly yes: the AOF, or NULL */
    char dir[GOBLIN_SETTING_VALUE_MAX];
    char why[128];               /* why appendonly could not start */
};

static void say(goblin_persist *p, enum goblin_log_level level,
                const char *text)
{
    if (p->cfg.log != NULL)
        p->cfg.log(p->cfg.log_ctx, level, text);
}

/* The server's fork; in the child *keep_fd is its log. */
static pid_t fork_child(goblin_persist *p, int *keep_fd)
{
    *keep_fd = -1;
    return (pid_t)p->cfg.fork(p->cfg.fork_ctx, keep_fd);
}

static void started(goblin_persist *p, const char *what, pid_t pid)
{
    char text[128];

    snprintf(text, sizeof(text), "%s started by pid %ld", what, (long)pid);
    say(p, GOBLIN_LOG_NOTICE, text);
}

static int bgsave(void *ctx, const char *path)
{
    goblin_persist *p = ctx;
    int keep;
    pid_t pid;

    if (p->save_child > 0)
        return GOBLIN_EBUSY;
    if ((pid = fork_child(p, &keep)) < 0)
        return -errno;
    if (pid == 0)
        _exit(goblin_serve_bgsave_child(&p->policy, path, keep) == 0 ? 0
                                                                      : 1);
    p->save_child = pid;
    snprintf(p->save_path, sizeof(p->save_path), "%s", path);
    started(p, "Background saving", pid);
    return 0;
}

/* One child at a time, as Redis. */
static int aof_rewrite(void *ctx)
{
    goblin_persist *p = ctx;
    char path[4400];
    int rc, keep;
    pid_t pid;

    if (p->save_child > 0 || p->aof_child > 0)
        return GOBLIN_EBUSY;
    if ((rc = goblin_aof_rewrite_start(p->aof, path, sizeof(path))) != 0)
        return rc;
    if ((pid = fork_child(p, &keep)) < 0) {
        rc = -errno;
        goblin_aof_rewrite_done(p->aof, false);
        return rc;
    }
    if (pid == 0)
        _exit(goblin_aof_write_base(p->engine, path) == 0 ? 0 : 1);
    p->aof_child = pid;
    started(p, "Background append only file rewriting", pid);
    return 0;
}

/* A full sync for replicas: the child writes the RDB payload to their
 * sockets (goblin_repl_sync_child) and _exit()s. It may run beside a
 * BGSAVE, as Redis's disk-less sync is a child of its own. */
static int repl_fork(void *ctx)
{
    goblin_persist *p = ctx;
    int keep;
    pid_t pid;

    if (p->repl_child > 0)
        return GOBLIN_EBUSY;
    if ((pid = fork_child(p, &keep)) < 0)
        return -errno;
    if (pid == 0)
        _exit(goblin_repl_sync_child(p->engine, keep) == 0 ? 0 : 1);
    p->repl_child = pid;
    return 0;
}

/* Before the final save and at exit: a save still running is killed and
 * its file removed, as Redis does. */
static void kill_children(void *ctx)
{
    goblin_persist *p = ctx;
    bool killed = false;

    if (p->save_child > 0 && kill(p->save_child, SIGKILL) == 0)
        killed = true;
    if (p->aof_child > 0 && kill(p->aof_child, SIGKILL) == 0)
        killed = true;
    if (p->repl_child > 0 && kill(p->repl_child, SIGKILL) == 0)
        killed = true;
    if (killed)
        goblin_persist_reap(p, true);
}

int goblin_persist_new_sized(const struct goblin_persist_config *cfg,
                             size_t cfg_size, goblin_persist **out)
{
    goblin_persist *p;

    *out = NULL;
    if ((p = calloc(1, sizeof(*p))) == NULL)
        return GOBLIN_ENOMEM;
    if (cfg == NULL || goblin__config_copy(&p->cfg, sizeof(p->cfg), cfg,
                                           cfg_size, sizeof(cfg->fork)) ||
        p->cfg.fork == NULL) {
        free(p);
        return GOBLIN_EINVAL;
    }
    *out = p;
    return 0;
}

void goblin_persist_engine_hooks(goblin_persist *p,
                                 struct goblin_engine_config *ecfg)
{
    ecfg->bgsave = bgsave;
    ecfg->bgsave_kill = kill_children;
    ecfg->bgsave_ctx = p;
    ecfg->aof_rewrite = aof_rewrite;
    ecfg->aof_rewrite_ctx = p;
    ecfg->repl_fork = repl_fork;
    ecfg->repl_fork_ctx = p;
}

static const struct goblin_aof_config *aof_config(
    goblin_persist *p, struct goblin_aof_config *c)
{
    if (goblin_engine_config_get(p->engine, "dir", p->dir,
                                 sizeof(p->dir)) < 0)
        snprintf(p->dir, sizeof(p->dir), ".");
    *c = (struct goblin_aof_config){p->dir, p->cfg.log, p->cfg.log_ctx};
    return c;
}

int goblin_persist_appendonly(goblin_persist *p, bool on, const char **why)
{
    struct goblin_aof_config c;
    char err[4400];

    *why = p->why;
    if (!on) {
        goblin_aof_close(p->aof);
        p->aof = NULL;
        return 0;
    }
    if (p->aof != NULL)
        return 0;
    if (goblin_aof_open(p->engine, aof_config(p, &c), &p->aof, err,
                        sizeof(err)) != 0) {
        say(p, GOBLIN_LOG_WARNING, err);
        snprintf(p->why, sizeof(p->why), "%.120s", err);
        return -1;
    }
    return 0;
}

int goblin_persist_load(goblin_persist *p, goblin_engine *eng, char *err,
                        size_t cap)
{
    bool aof = goblin_engine_config_int(eng, "appendonly", 0);
    struct goblin_aof_config c;
    const char *why;
    int rc = 0;

    p->engine = eng;
    p->policy = (struct goblin_serve_persist){
        eng, NULL, NULL, kill_children, p, p->cfg.log, p->cfg.log_ctx};
    /* With appendonly yes the AOF, when there is one, is what loads (as
     * Redis prefers it to the snapshot). */
    if (aof && (rc = goblin_aof_load(eng, aof_config(p, &c), err, cap)) < 0)
        return rc;
    if (rc != 1 && (rc = goblin_serve_load(&p->policy, err, cap)) != 0)
        return rc;  /* an error, or 1: exported (--export-rdb) */
    if (aof && goblin_persist_appendonly(p, true, &why) < 0) {
        snprintf(err, cap, "%s", why);
        return -1;
    }
    return 0;
}

void goblin_persist_reap(goblin_persist *p, bool wait)
{
    int wstatus;
    pid_t pid;

    if (p->aof_child > 0 &&
        waitpid(p->aof_child, &wstatus, wait ? 0 : WNOHANG) == p->aof_child) {
        p->aof_child = 0;
        if (p->aof != NULL)
            goblin_aof_rewrite_done(p->aof, WIFEXITED(wstatus) &&
                                                WEXITSTATUS(wstatus) == 0);
    }
    if ((pid = p->repl_child) > 0 &&
        waitpid(pid, &wstatus, wait ? 0 : WNOHANG) == pid) {
        p->repl_child = 0;
        if (p->engine != NULL)
            goblin_repl_sync_done(p->engine, WIFEXITED(wstatus) &&
                                                 WEXITSTATUS(wstatus) == 0);
    }
    if ((pid = p->save_child) > 0 &&
        waitpid(pid, &wstatus, wait ? 0 : WNOHANG) == pid) {
        p->save_child = 0;   /* first: the engine may start the next */
        goblin_serve_bgsave_ended(&p->policy, p->save_path, pid, wstatus);
    }
}

void goblin_persist_kill(goblin_persist *p)
{
    if (p != NULL)
        kill_children(p);
}

bool goblin_persist_final_save(goblin_persist *p)
{
    return goblin_serve_final_save(&p->policy);
}

void goblin_persist_close(goblin_persist *p)
{
    const char *why;

    if (p == NULL)
        return;
    kill_children(p);
    goblin_persist_appendonly(p, false, &why);
    free(p);
}
