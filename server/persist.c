/* persist.c - goblind's side of snapshots, what is about the process:
 * the fork behind BGSAVE and the save policies (the engine's bgsave
 * hook), reaping the child on SIGCHLD, and SHUTDOWN. What the child and
 * the parent do around the fork, loading before serving and the final
 * save at SIGTERM are the library's persistence policy (goblin/serve.h).
 *
 * The fork happens inside an engine call, so the engine lock is held
 * (ring threads wait) and the child's copy of the store is consistent.
 * The child (goblin_serve_bgsave_child) unblocks signals, closes every
 * descriptor but the log, saves (temporary file, fsync, rename) and
 * _exit()s: it never touches the lock, the sockets or the rings.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "goblind.h"

static int bgsave(void *ctx, const char *path)
{
    struct goblind *g = ctx;
    pid_t pid;

    if (g->child_pid > 0)
        return GOBLIN_EBUSY;
    if (g->logf != NULL)
        fflush(g->logf);
    fflush(stdout);
    if ((pid = fork()) < 0)
        return -errno;
    if (pid == 0) {
        g->child_pid = -1;
        _exit(goblin_serve_bgsave_child(&g->persist, path, g->logf != NULL ?
                                        fileno(g->logf) : -1) == 0 ? 0 : 1);
    }
    g->child_pid = pid;
    snprintf(g->child_path, sizeof(g->child_path), "%s", path);
    goblind_log(g, GOBLIN_LOG_NOTICE, "Background saving started by pid %ld",
                (long)pid);
    return 0;
}

/* BGREWRITEAOF and the automatic rewrite: one child at a time, as
 * Redis; the child writes the base and _exit()s like BGSAVE's. */
static int aof_rewrite(void *ctx)
{
    struct goblind *g = ctx;
    char path[4400];
    pid_t pid;
    int rc;

    if (g->child_pid > 0 || g->aof_child > 0)
        return GOBLIN_EBUSY;
    if ((rc = goblin_aof_rewrite_start(g->aof, path, sizeof(path))) != 0)
        return rc;
    if (g->logf != NULL)
        fflush(g->logf);
    fflush(stdout);
    if ((pid = fork()) < 0) {
        rc = -errno;
        goblin_aof_rewrite_done(g->aof, false);
        return rc;
    }
    if (pid == 0) {
        g->child_pid = -1;
        _exit(goblin_aof_write_base(g->engine, path) == 0 ? 0 : 1);
    }
    g->aof_child = pid;
    goblind_log(g, GOBLIN_LOG_NOTICE, "Background append only file "
                "rewriting started by pid %ld", (long)pid);
    return 0;
}

/* A full sync for replicas (goblin/repl.h): the child writes the RDB
 * payload to their sockets and _exit()s. */
static int repl_fork(void *ctx)
{
    struct goblind *g = ctx;
    pid_t pid;

    if (g->repl_child > 0)
        return GOBLIN_EBUSY;
    if (g->logf != NULL)
        fflush(g->logf);
    fflush(stdout);
    if ((pid = fork()) < 0)
        return -errno;
    if (pid == 0) {
        g->child_pid = -1;
        _exit(goblin_repl_sync_child(g->engine, g->logf != NULL ?
                                     fileno(g->logf) : -1) == 0 ? 0 : 1);
    }
    g->repl_child = pid;
    return 0;
}

/* SIGCHLD (flags WNOHANG): reaps every child that ended; at exit (0):
 * waits for them. The engine lock is held. */
void goblind_persist_reap(struct goblind *g, int flags)
{
    int wstatus;
    pid_t pid;

    while ((pid = waitpid(-1, &wstatus, flags)) > 0)
        if (pid == g->aof_child) {
            g->aof_child = 0;
            if (g->aof != NULL)
                goblin_aof_rewrite_done(g->aof, WIFEXITED(wstatus) &&
                                                    WEXITSTATUS(wstatus) == 0);
        } else if (pid == g->repl_child) {
            g->repl_child = 0;
            goblin_repl_sync_done(g->engine, WIFEXITED(wstatus) &&
                                                 WEXITSTATUS(wstatus) == 0);
        } else if (pid == g->child_pid) {
            g->child_pid = 0;
            goblin_serve_bgsave_ended(&g->persist, g->child_path, pid,
                                      wstatus);
        }
}

/* At exit, and before the final save: a save still running is killed
 * and its file removed, as Redis does. */
void goblind_persist_kill_child(void *ctx)
{
    struct goblind *g = ctx;

    if (g->child_pid > 0 && kill(g->child_pid, SIGKILL) == 0)
        goblind_persist_reap(g, 0);
    if (g->aof_child > 0 && kill(g->aof_child, SIGKILL) == 0)
        goblind_persist_reap(g, 0);
    if (g->repl_child > 0 && kill(g->repl_child, SIGKILL) == 0)
        goblind_persist_reap(g, 0);
}

/* SHUTDOWN (after the engine's own final save, if any). */
static void shutdown_cmd(void *ctx)
{
    struct goblind *g = ctx;

    goblind_persist_kill_child(g);
    g->shutdown_cmd = true;
    goblin_epoll_stop(g->loop);
}

void goblind_persist_hooks(struct goblind *g,
                           struct goblin_engine_config *ecfg)
{
    ecfg->bgsave = bgsave;
    ecfg->bgsave_kill = goblind_persist_kill_child;
    ecfg->bgsave_ctx = ecfg->shutdown_ctx = g;
    ecfg->shutdown = shutdown_cmd;
    ecfg->aof_rewrite = aof_rewrite;
    ecfg->aof_rewrite_ctx = g;
    ecfg->repl_fork = repl_fork;
    ecfg->repl_fork_ctx = g;
}

static const char *aof_dir(struct goblind *g)
{
    static char dir[4096];

    if (goblin_engine_config_get(g->engine, "dir", dir, sizeof(dir)) < 0)
        snprintf(dir, sizeof(dir), ".");
    return dir;
}

/* appendonly yes (at start, or CONFIG SET: then the base is the data
 * now) or no. */
int goblind_aof_switch(struct goblind *g, bool on)
{
    char err[4400];

    if (!on) {
        goblin_aof_close(g->aof);
        g->aof = NULL;
        return 0;
    }
    if (g->aof != NULL)
        return 0;
    if (goblin_aof_open(g->engine, &(struct goblin_aof_config){
                            aof_dir(g), goblind_engine_log, g},
                        &g->aof, err, sizeof(err)) != 0) {
        goblind_log(g, GOBLIN_LOG_WARNING, "%s", err);
        snprintf(g->why, sizeof(g->why), "%.120s", err);
        return -1;
    }
    return 0;
}

/* Before serving: the library's load (goblin_serve_load), which logs;
 * with a log file, the reason goes where whoever started us looks too.
 * 1 after --export-rdb wrote its file. */
int goblind_persist_load(struct goblind *g)
{
    char err[4400];

    bool aof = goblin_engine_config_int(g->engine, "appendonly", 0);
    int rc = 0;

    g->persist = (struct goblin_serve_persist){
        g->engine, g->store, NULL, goblind_persist_kill_child, g,
        goblind_engine_log, g};
    /* With appendonly yes the AOF, when there is one, is what loads (as
     * Redis prefers it to the snapshot). */
    if (aof && (rc = goblin_aof_load(g->engine, &(struct goblin_aof_config){
                        aof_dir(g), goblind_engine_log, g}, err,
                                     sizeof(err))) < 0)
        goto fail;
    if (rc != 1 && (rc = goblin_serve_load(&g->persist, err,
                                           sizeof(err))) == 1)
        return 1; /* exported (--export-rdb): stop */
    if (rc >= 0 && (!aof || goblind_aof_switch(g, true) == 0))
        return 0;
    if (aof && g->aof == NULL)
        snprintf(err, sizeof(err), "%s", g->why);
fail:
    if (g->logf != NULL)
        fprintf(stderr, "goblind: %s\n", err);
    return -1;
}
