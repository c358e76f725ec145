/* persist.c - goblind's side of snapshots, what is about the process:
 * the fork behind BGSAVE and the save policies (the engine's bgsave
 * hook), reaping the child on SIGCHLD, and SHUTDOWN. Loading before
 * serving and the final save at SIGTERM are the library's persistence
 * policy (goblin/serve.h: goblin_serve_load, goblin_serve_final_save).
 *
 * The fork happens inside an engine call, so the engine lock is held
 * (ring threads wait) and the child's copy of the store is consistent.
 * The child unblocks signals, closes every descriptor but the log, saves
 * with goblin_snapshot_save (temporary file, fsync, rename) and _exit()s:
 * it never touches the lock, the sockets or the rings.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <goblin/snapshot.h>

#include "goblind.h"

/* Closes every descriptor from 3 up except keep (-1: none): two
 * close_range calls, or one close per descriptor where that fails. */
static void close_all_but(int keep)
{
    long max = sysconf(_SC_OPEN_MAX);

    if (keep < 3 && close_range(3, ~0u, 0) == 0)
        return;
    if (keep >= 3 && (keep == 3 || close_range(3, (unsigned)keep - 1, 0) ==
                      0) && close_range((unsigned)keep + 1, ~0u, 0) == 0)
        return;
    for (int fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
        if (fd != keep)
            close(fd);
}

static int bgsave(void *ctx, const char *path)
{
    struct goblind *g = ctx;
    pid_t pid;

    if (g->child_pid > 0)
        return GOBLIN_EBUSY;
    if (g->logf != NULL)
        fflush(g->logf);
    fflush(stdout);
    pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) {
        struct goblin_snapshot_result res;
        sigset_t none;
        int rc;

        g->child_pid = -1;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        close_all_but(g->logf != NULL ? fileno(g->logf) : -1);
        rc = goblin_engine_snapshot_save(g->engine, path, &res);
        if (rc == 0)
            goblind_log(g, GOBLIN_LOG_NOTICE, "DB saved on disk");
        else
            goblind_log(g, GOBLIN_LOG_WARNING, "Failed saving the DB: %s",
                        res.message[0] ? res.message
                                       : goblin_snapshot_strerror(rc));
        _exit(rc == 0 ? 0 : 1);
    }
    g->child_pid = pid;
    snprintf(g->child_tmp, sizeof(g->child_tmp), "%s.tmp-%ld", path,
             (long)pid);
    goblind_log(g, GOBLIN_LOG_NOTICE, "Background saving started by pid %ld",
                (long)pid);
    return 0;
}

/* After a child died without finishing, its temporary file is garbage. */
static void child_ended(struct goblind *g, int wstatus)
{
    int ok = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;

    if (ok)
        goblind_log(g, GOBLIN_LOG_NOTICE,
                    "Background saving terminated with success");
    else if (WIFSIGNALED(wstatus))
        goblind_log(g, GOBLIN_LOG_WARNING,
                    "Background saving terminated by signal %d",
                    WTERMSIG(wstatus));
    else
        goblind_log(g, GOBLIN_LOG_WARNING, "Background saving error");
    if (!ok)
        unlink(g->child_tmp);
    g->child_pid = 0;
    goblin_engine_bgsave_done(g->engine, ok ? 0 : GOBLIN_ESNAPFORMAT);
}

/* SIGCHLD: reaps every child that ended. The engine lock is held. */
void goblind_persist_reap(struct goblind *g)
{
    int wstatus;
    pid_t pid;

    while ((pid = waitpid(-1, &wstatus, WNOHANG)) > 0)
        if (pid == g->child_pid)
            child_ended(g, wstatus);
}

/* At exit: a save still running is killed and its file removed, as
 * Redis does. */
void goblind_persist_kill_child(struct goblind *g)
{
    int wstatus;

    if (g->child_pid <= 0)
        return;
    kill(g->child_pid, SIGKILL);
    waitpid(g->child_pid, &wstatus, 0);
    unlink(g->child_tmp);
    g->child_pid = 0;
    goblin_engine_bgsave_done(g->engine, GOBLIN_ESNAPFORMAT);
}

static void kill_child(void *ctx)
{
    goblind_persist_kill_child(ctx);
}

static void shutdown_cmd(void *ctx)
{
    struct goblind *g = ctx;

    goblind_persist_kill_child(g);
    g->stopping = true;
    g->shutdown_cmd = true;
}

void goblind_persist_hooks(struct goblind *g,
                           struct goblin_engine_config *ecfg)
{
    ecfg->bgsave = bgsave;
    ecfg->bgsave_ctx = g;
    ecfg->bgsave_kill = kill_child;
    ecfg->shutdown = shutdown_cmd;
    ecfg->shutdown_ctx = g;
}

/* Before serving: the library's load (goblin_serve_load), which logs;
 * with a log file, the reason goes where whoever started us looks too. */
int goblind_persist_load(struct goblind *g)
{
    char err[4400];

    g->persist = (struct goblin_serve_persist){
        g->engine, g->store, g->import_rdb, kill_child, g,
        goblind_engine_log, g};
    if (goblin_serve_load(&g->persist, err, sizeof(err)) == 0)
        return 0;
    if (g->logf != NULL)
        fprintf(stderr, "goblind: %s\n", err);
    return -1;
}
