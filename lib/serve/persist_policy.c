/* persist_policy.c - the persistence policy of a server (goblin/serve.h,
 * "persistence policy"): before serving, import a Redis dump or remove
 * the leftovers of saves that died and load the snapshot; at shutdown,
 * the final save when a save policy is set; and the two ends of a
 * background save, what the child does (save, log) and what the parent
 * does when it ended (log, remove a dead child's temporary file, tell the
 * engine). Forking is the server's (the engine's bgsave hook); this file
 * never forks.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <goblin/serve.h>
#include <goblin/snapshot.h>

#include "util/config_size.h"

static void say(const struct goblin_serve_persist *p,
                enum goblin_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(const struct goblin_serve_persist *p,
                enum goblin_log_level level, const char *fmt, ...)
{
    char text[1024];
    va_list ap;

    if (p->log == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    p->log(p->log_ctx, level, text);
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A save killed with its process (kill -9 of the server during SAVE, of
 * a child during BGSAVE while the server died too) leaves PATH.tmp-PID
 * behind. Those whose process no longer exists are removed. */
static void remove_stale_temps(const struct goblin_serve_persist *p,
                               const char *path)
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
            say(p, GOBLIN_LOG_NOTICE, "Removed %s/%s, left by a save that "
                "did not finish (pid %ld)", dir, de->d_name, pid);
    }
    closedir(d);
}

static int import_rdb(const struct goblin_serve_persist *p, char *err,
                      size_t cap)
{
    struct goblin_snapshot_result res;
    double t0 = now_s();
    int rc = goblin_engine_import_rdb(p->engine, p->import_rdb, 0, &res);

    if (rc < 0) {
        const char *why = res.message[0] ? res.message
                                         : goblin_snapshot_strerror(rc);

        say(p, GOBLIN_LOG_WARNING, "Can't import the RDB file %s: %s",
            p->import_rdb, why);
        snprintf(err, cap, "can't import the RDB file %s: %s",
                 p->import_rdb, why);
        return rc;
    }
    say(p, GOBLIN_LOG_NOTICE, "Imported %llu keys from the RDB file %s "
        "(RDB version %u, %llu expired keys skipped): %.3f seconds",
        (unsigned long long)res.keys, p->import_rdb, res.version,
        (unsigned long long)res.expired, now_s() - t0);
    return 0;
}

/* With the export-rdb setting: the data just loaded written as a Redis
 * RDB file. Returns 1 (the server stops) or a negative code. */
static int export_rdb(const struct goblin_serve_persist *p, const char *path,
                      char *err, size_t cap)
{
    struct goblin_snapshot_result res;
    double t0 = now_s();
    int rc = goblin_engine_export_rdb(p->engine, path, &res);

    if (rc < 0) {
        const char *why = res.message[0] ? res.message
                                         : goblin_snapshot_strerror(rc);

        say(p, GOBLIN_LOG_WARNING, "Can't export the RDB file %s: %s",
            path, why);
        snprintf(err, cap, "can't export the RDB file %s: %s", path, why);
        return rc;
    }
    say(p, GOBLIN_LOG_NOTICE, "Exported %llu keys to the RDB file %s (RDB "
        "version 10, %llu bytes): %.3f seconds",
        (unsigned long long)res.keys, path, (unsigned long long)res.bytes,
        now_s() - t0);
    return 1;
}

static int load(const struct goblin_serve_persist *p, char *err,
                size_t cap);

/* The caller's struct in this library's layout; false when it asks for
 * more than this library knows. */
static bool copy_in(struct goblin_serve_persist *dst,
                    const struct goblin_serve_persist *src, size_t size)
{
    return src != NULL && goblin__config_copy(dst, sizeof(*dst), src, size,
                                              sizeof(src->engine)) == 0 &&
           dst->engine != NULL;
}

int goblin_serve_load_sized(const struct goblin_serve_persist *in,
                            size_t in_size, char *err, size_t cap)
{
    struct goblin_serve_persist c;
    char out[GOBLIN_SETTING_VALUE_MAX];
    int rc;

    if (cap > 0)
        err[0] = '\0';
    if (!copy_in(&c, in, in_size))
        return GOBLIN_EINVAL;
    if ((rc = load(&c, err, cap)) < 0)
        return rc;
    if (goblin_engine_config_get(c.engine, "export-rdb", out,
                                 sizeof(out)) > 0)
        return export_rdb(&c, out, err, cap);
    return 0;
}

static int load(const struct goblin_serve_persist *in, char *err,
                size_t cap)
{
    struct goblin_serve_persist c = *in;
    const struct goblin_serve_persist *p = &c;
    struct goblin_snapshot_result res;
    char path[4096], rdb[GOBLIN_SETTING_VALUE_MAX];
    double t0 = now_s();
    int rc;

    if (p->import_rdb == NULL &&
        goblin_engine_config_get(p->engine, "import-rdb", rdb,
                                 sizeof(rdb)) > 0)
        c.import_rdb = rdb;
    if (p->import_rdb != NULL)
        return import_rdb(p, err, cap);
    goblin_engine_snapshot_path(p->engine, path, sizeof(path));
    remove_stale_temps(p, path);
    rc = goblin_engine_load(p->engine, &res);
    if (rc < 0) {
        const char *why = res.message[0] ? res.message
                                         : goblin_snapshot_strerror(rc);

        say(p, GOBLIN_LOG_WARNING, "Can't load the snapshot %s: %s. "
            "Refusing to start: move the file away or restore a good one.",
            path, why);
        snprintf(err, cap, "can't load the snapshot %s: %s", path, why);
        return rc;
    }
    if (rc > 0)
        say(p, GOBLIN_LOG_NOTICE, "DB loaded from disk: %.3f seconds (%llu "
            "keys from %s)", now_s() - t0, (unsigned long long)res.keys,
            path);
    return 0;
}

bool goblin_serve_final_save_sized(const struct goblin_serve_persist *in,
                                   size_t in_size)
{
    struct goblin_serve_persist c;
    const struct goblin_serve_persist *p = &c;

    if (!copy_in(&c, in, in_size))
        return true;
    if (!goblin_engine_save_policy_set(p->engine))
        return true;
    if (p->bgsave_kill != NULL)
        p->bgsave_kill(p->bgsave_ctx);
    say(p, GOBLIN_LOG_NOTICE, "Saving the final RDB snapshot before "
        "exiting.");
    if (goblin_engine_save(p->engine, NULL) == 0)
        return true;
    say(p, GOBLIN_LOG_WARNING, "Error trying to save the DB, can't exit.");
    say(p, GOBLIN_LOG_WARNING, "SIGTERM received but errors trying to shut "
        "down the server, check the logs for more information");
    return false;
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

int goblin_serve_bgsave_child_sized(const struct goblin_serve_persist *in,
                                    size_t in_size, const char *path,
                                    int keep_fd)
{
    struct goblin_serve_persist c;
    struct goblin_snapshot_result res;
    sigset_t none;
    int rc;

    if (!copy_in(&c, in, in_size))
        return GOBLIN_EINVAL;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    close_all_but(keep_fd);
    rc = goblin_engine_snapshot_save(c.engine, path, &res);
    if (rc == 0)
        say(&c, GOBLIN_LOG_NOTICE, "DB saved on disk");
    else
        say(&c, GOBLIN_LOG_WARNING, "Failed saving the DB: %s",
            res.message[0] ? res.message : goblin_snapshot_strerror(rc));
    return rc;
}

void goblin_serve_bgsave_ended_sized(const struct goblin_serve_persist *in,
                                     size_t in_size, const char *path,
                                     long pid, int wstatus)
{
    struct goblin_serve_persist c;
    bool ok = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;
    char tmp[4200];

    if (!copy_in(&c, in, in_size))
        return;
    if (ok)
        say(&c, GOBLIN_LOG_NOTICE, "Background saving terminated with "
            "success");
    else if (WIFSIGNALED(wstatus))
        say(&c, GOBLIN_LOG_WARNING, "Background saving terminated by signal "
            "%d", WTERMSIG(wstatus));
    else
        say(&c, GOBLIN_LOG_WARNING, "Background saving error");
    /* A child that died without finishing leaves its temporary file. */
    snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", path, pid);
    if (!ok)
        unlink(tmp);
    goblin_engine_bgsave_done(c.engine, ok ? 0 : GOBLIN_ESNAPFORMAT);
}
