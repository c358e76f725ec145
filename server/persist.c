/* persist.c - goblind's side of snapshots: loading (or importing a Redis
 * dump) before clients are served, the fork behind BGSAVE and the save
 * policies (the engine's bgsave hook), reaping the child on SIGCHLD,
 * saving on SIGTERM when a save policy is set, and SHUTDOWN.
 *
 * The fork happens inside an engine call, so the engine lock is held
 * (ring threads wait) and the child's copy of the store is consistent.
 * The child unblocks signals, closes every descriptor but the log, saves
 * with goblin_snapshot_save (temporary file, fsync, rename) and _exit()s:
 * it never touches the lock, the sockets or the rings.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <goblin/snapshot.h>

#include "goblind.h"

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

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
        rc = goblin_snapshot_save(g->store, path, &res);
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

/* SIGTERM or SIGINT: with a save policy, save first (a failed save keeps
 * the server running, as Redis). Returns true when it may stop. */
bool goblind_persist_on_signal(struct goblind *g)
{
    if (!goblin_engine_save_policy_set(g->engine))
        return true;
    goblind_persist_kill_child(g);
    goblind_log(g, GOBLIN_LOG_NOTICE, "Saving the final RDB snapshot "
                "before exiting.");
    if (goblin_engine_save(g->engine, NULL) == 0)
        return true;
    goblind_log(g, GOBLIN_LOG_WARNING, "Error trying to save the DB, can't "
                "exit.");
    goblind_log(g, GOBLIN_LOG_WARNING, "SIGTERM received but errors trying "
                "to shut down the server, check the logs for more "
                "information");
    return false;
}

/* A save killed with its process (kill -9 of goblind during SAVE, of a
 * child during BGSAVE while goblind died too) leaves PATH.tmp-PID behind.
 * At start those whose process no longer exists are removed. */
static void remove_stale_temps(struct goblind *g, const char *path)
{
    char dir[4096], name[4200];
    const char *slash = strrchr(path, '/');
    struct dirent *de;
    size_t blen;
    DIR *d;

    if (slash != NULL)
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
    else
        snprintf(dir, sizeof(dir), ".");
    snprintf(name, sizeof(name), "%s.tmp-", slash != NULL ? slash + 1
                                                           : path);
    blen = strlen(name);
    if ((d = opendir(dir[0] != '\0' ? dir : "/")) == NULL)
        return;
    while ((de = readdir(d)) != NULL) {
        char *end;
        long pid;

        if (strncmp(de->d_name, name, blen) != 0)
            continue;
        errno = 0;
        pid = strtol(de->d_name + blen, &end, 10);
        if (errno != 0 || *end != '\0' || pid <= 0 ||
            (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
            continue;
        if (unlinkat(dirfd(d), de->d_name, 0) == 0)
            goblind_log(g, GOBLIN_LOG_NOTICE, "Removed %s/%s, left by a "
                        "save that did not finish (pid %ld)", dir,
                        de->d_name, pid);
    }
    closedir(d);
}

/* Before serving: import --import-rdb, or load the snapshot file if there
 * is one. A file that cannot be read is fatal: never an empty store in
 * its place, and the file stays as it is. */
int goblind_persist_load(struct goblind *g)
{
    struct goblin_snapshot_result res;
    char path[4096];
    double t0 = now_s();
    int rc;

    if (g->import_rdb != NULL) {
        rc = goblin_rdb_import(g->store, g->import_rdb, 0, &res);
        if (rc < 0) {
            goblind_log(g, GOBLIN_LOG_WARNING, "Can't import the RDB file "
                        "%s: %s", g->import_rdb, res.message[0] ?
                        res.message : goblin_snapshot_strerror(rc));
            if (g->logf != NULL)
                fprintf(stderr, "goblind: can't import the RDB file %s: "
                        "%s\n", g->import_rdb, res.message[0] ?
                        res.message : goblin_snapshot_strerror(rc));
            return -1;
        }
        goblind_log(g, GOBLIN_LOG_NOTICE, "Imported %llu keys from the RDB "
                    "file %s (RDB version %u, %llu expired keys skipped): "
                    "%.3f seconds", (unsigned long long)res.keys,
                    g->import_rdb, res.version,
                    (unsigned long long)res.expired, now_s() - t0);
        return 0;
    }
    goblin_engine_snapshot_path(g->engine, path, sizeof(path));
    remove_stale_temps(g, path);
    rc = goblin_engine_load(g->engine, &res);
    if (rc < 0) {
        const char *why = res.message[0] ? res.message
                                         : goblin_snapshot_strerror(rc);

        goblind_log(g, GOBLIN_LOG_WARNING, "Can't load the snapshot %s: %s. "
                    "Refusing to start: move the file away or restore a "
                    "good one.", path, why);
        if (g->logf != NULL)   /* and where whoever started us looks */
            fprintf(stderr, "goblind: can't load the snapshot %s: %s\n",
                    path, why);
        return -1;
    }
    if (rc > 0)
        goblind_log(g, GOBLIN_LOG_NOTICE, "DB loaded from disk: %.3f seconds "
                    "(%llu keys from %s)", now_s() - t0,
                    (unsigned long long)res.keys, path);
    return 0;
}
