/* cmd_persist.c - snapshots through the engine: SAVE, BGSAVE, LASTSAVE,
 * SHUTDOWN, the settings save, dir and dbfilename, the save policies
 * checked by cron, INFO persistence, and the calls a server makes at start
 * and stop (goblin_engine_load, goblin_engine_save, goblin_engine_bgsave_done).
 *
 * The library never forks: BGSAVE calls the server's bgsave hook (goblind
 * forks there, under its engine lock, and the child saves and _exit()s),
 * and the server reports the end with goblin_engine_bgsave_done. Without
 * the hook BGSAVE and the policies answer an error; SAVE always works.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "goblin/snapshot.h"
#include "handlers.h"
#include "respond.h"
#include "engine/settings.h"
#include "engine/text.h"
#include "stream/aof_int.h"

#define MAX_POLICIES GOBLIN__SAVE_POLICIES
#define RETRY_DELAY_MS 5000 /* after a failed background save, as Redis */

struct goblin__persist {
    struct goblin_persist_info pi;
    struct { int64_t seconds, changes; } policy[MAX_POLICIES];
    int npolicies;
    char *dir;            /* NULL: the working directory */
    char *dbfilename;
    bool bg_running;      /* a background save is running */
    bool bg_scheduled;    /* BGSAVE inside EXEC: cron starts one */
    int64_t bg_tried_ms;  /* the last background save's start */
    int64_t last_bg_sec;  /* rdb_last_bgsave_time_sec, -1 = none */
    uint64_t load_keys, load_expired;
};

#define DEFAULT_DBFILENAME "dump.goblin"

static void plog(goblin_engine *eng, enum goblin_log_level level,
                 const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void plog(goblin_engine *eng, enum goblin_log_level level,
                 const char *fmt, ...)
{
    char text[512];
    va_list ap;

    if (eng->cfg.log == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    eng->cfg.log(eng->cfg.log_ctx, level, text);
}

static char *dup_text(goblin_engine *eng, const void *p, size_t len)
{
    char *s = goblin__alloc(eng->st, len + 1);

    if (s != NULL) {
        memcpy(s, p, len);
        s[len] = '\0';
    }
    return s;
}

static void free_text(goblin_engine *eng, char *s)
{
    if (s != NULL)
        goblin__free(eng->st, s, strlen(s) + 1);
}

int goblin_engine_snapshot_path(const goblin_engine *eng, char *buf,
                                size_t cap)
{
    const struct goblin__persist *p = eng->persist;
    int n = snprintf(buf, cap, "%s%s%s", p->dir != NULL ? p->dir : "",
                     p->dir != NULL ? "/" : "", p->dbfilename);

    return n < 0 || (size_t)n >= cap ? GOBLIN_EINVAL : 0;
}

/* ---- settings ---- */

static int get_save(void *ctx, char *buf, size_t cap)
{
    const struct goblin__persist *p = ((goblin_engine *)ctx)->persist;
    char text[MAX_POLICIES * 48] = "";
    size_t len = 0;

    for (int i = 0; i < p->npolicies; i++)
        len += (size_t)snprintf(text + len, sizeof(text) - len,
                                "%s%lld %lld", i > 0 ? " " : "",
                                (long long)p->policy[i].seconds,
                                (long long)p->policy[i].changes);
    len = len < cap ? len : cap;
    memcpy(buf, text, len);
    return (int)len;
}

/* The descriptor checks the pairs (settings_special.c); its normal form
 * is "seconds changes ..." in decimal. */
static int set_save(void *ctx, struct goblin_slice v, const char **why)
{
    struct goblin__persist *p = ((goblin_engine *)ctx)->persist;
    char norm[GOBLIN_SETTING_VALUE_MAX + 1], *s = norm;
    int n = 0;

    if (goblin__setting_norm("save", v, norm, sizeof(norm), why) != 0)
        return GOBLIN_EINVAL;
    while (*s != '\0' && n < MAX_POLICIES) {
        p->policy[n].seconds = strtoll(s, &s, 10);
        p->policy[n++].changes = strtoll(s, &s, 10);
        s += strspn(s, " ");
    }
    p->npolicies = n;
    return 0;
}

static int get_dir(void *ctx, char *buf, size_t cap)
{
    const struct goblin__persist *p = ((goblin_engine *)ctx)->persist;
    char cwd[PATH_MAX] = "";
    const char *d = p->dir;
    size_t len;

    if (d == NULL)
        d = getcwd(cwd, sizeof(cwd)) != NULL ? cwd : ".";
    len = strlen(d);
    len = len < cap ? len : cap;
    memcpy(buf, d, len);
    return (int)len;
}

/* The descriptor checks it is an existing directory and gives its
 * absolute path (the library does not chdir: the process's working
 * directory is the application's). The default, "", is the working
 * directory only at start: Redis's chdir("") fails, and so does this. */
static int set_dir(void *ctx, struct goblin_slice v, const char **why)
{
    goblin_engine *eng = ctx;
    char abs[PATH_MAX], *copy;

    *why = "No such file or directory";
    if (v.len == 0 ||
        goblin__setting_norm("dir", v, abs, sizeof(abs), why) != 0)
        return GOBLIN_EINVAL;
    if ((copy = dup_text(eng, abs, strlen(abs))) == NULL)
        return GOBLIN_ENOMEM;
    free_text(eng, eng->persist->dir);
    eng->persist->dir = copy;
    return 0;
}

static int get_dbfilename(void *ctx, char *buf, size_t cap)
{
    const char *s = ((goblin_engine *)ctx)->persist->dbfilename;
    size_t len = strlen(s);

    len = len < cap ? len : cap;
    memcpy(buf, s, len);
    return (int)len;
}

static int set_dbfilename(void *ctx, struct goblin_slice v, const char **why)
{
    goblin_engine *eng = ctx;
    char norm[GOBLIN_SETTING_VALUE_MAX + 1], *s;

    /* Checked by the descriptor; kept as given, of any length. */
    if (goblin__setting_norm("dbfilename", v, norm, sizeof(norm), why) != 0)
        return GOBLIN_EINVAL;
    if ((s = dup_text(eng, v.ptr, v.len)) == NULL)
        return GOBLIN_ENOMEM;
    free_text(eng, eng->persist->dbfilename);
    eng->persist->dbfilename = s;
    return 0;
}

int goblin__persist_init(goblin_engine *eng)
{
    const struct goblin_setting own[] = {
        {"save", NULL, get_save, set_save, eng},
        {"dir", NULL, get_dir, set_dir, eng},
        {"dbfilename", NULL, get_dbfilename, set_dbfilename, eng},
    };
    struct goblin__persist *p = goblin__alloc(eng->st, sizeof(*p));
    int rc;

    if (p == NULL)
        return GOBLIN_ENOMEM;
    memset(p, 0, sizeof(*p));
    eng->persist = p;
    p->last_bg_sec = -1;
    goblin_persist_init(&p->pi, eng->st);
    p->dbfilename = dup_text(eng, DEFAULT_DBFILENAME,
                             strlen(DEFAULT_DBFILENAME));
    if (p->dbfilename == NULL)
        return GOBLIN_ENOMEM;
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        if ((rc = goblin_engine_setting_add(eng, &own[i])) != 0)
            return rc;
    return 0;
}

void goblin__persist_free(goblin_engine *eng)
{
    struct goblin__persist *p = eng->persist;

    if (p == NULL)
        return;
    free_text(eng, p->dir);
    free_text(eng, p->dbfilename);
    goblin__free(eng->st, p, sizeof(*p));
    eng->persist = NULL;
}

/* ---- saving ---- */

int goblin_engine_save(goblin_engine *eng, struct goblin_snapshot_result *res)
{
    struct goblin__persist *p = eng->persist;
    struct goblin_snapshot_result own;
    char path[PATH_MAX];
    int rc;

    if (res == NULL)
        res = &own;
    memset(res, 0, sizeof(*res));
    if (p->bg_running)
        return GOBLIN_EBUSY;
    if ((rc = goblin_engine_snapshot_path(eng, path, sizeof(path))) < 0)
        return rc;
    goblin_persist_begin(&p->pi, eng->st);
    rc = goblin_engine_snapshot_save(eng, path, res);
    goblin_persist_end(&p->pi, eng->st, rc, res->bytes);
    if (rc == 0)
        plog(eng, GOBLIN_LOG_NOTICE, "DB saved on disk");
    else
        plog(eng, GOBLIN_LOG_WARNING, "Failed saving the DB to %s: %s",
             path, res->message[0] != '\0' ? res->message
                                           : goblin_snapshot_strerror(rc));
    return rc;
}

/* Starts a background save through the server's hook. */
static int bgsave_start(goblin_engine *eng)
{
    struct goblin__persist *p = eng->persist;
    char path[PATH_MAX];
    int rc;

    if (eng->cfg.bgsave == NULL)
        return GOBLIN_EINVAL;
    if ((rc = goblin_engine_snapshot_path(eng, path, sizeof(path))) < 0)
        return rc;
    p->bg_tried_ms = goblin__now_ms(eng->st);
    goblin_persist_begin(&p->pi, eng->st);
    rc = eng->cfg.bgsave(eng->cfg.bgsave_ctx, path);
    if (rc < 0) {
        goblin_persist_end(&p->pi, eng->st, rc, 0);
        plog(eng, GOBLIN_LOG_WARNING, "Can't save in background: %s",
             goblin_strerror(rc));
        return rc;
    }
    p->bg_running = true;
    p->bg_scheduled = false;
    return 0;
}

void goblin_engine_bgsave_done(goblin_engine *eng, int status)
{
    struct goblin__persist *p = eng->persist;
    char path[PATH_MAX];
    struct stat sb;
    uint64_t bytes = 0;

    if (!p->bg_running)
        return;
    if (status == 0 &&
        goblin_engine_snapshot_path(eng, path, sizeof(path)) == 0 &&
        stat(path, &sb) == 0)
        bytes = (uint64_t)sb.st_size;
    p->bg_running = false;
    goblin_persist_end(&p->pi, eng->st, status, bytes);
    p->last_bg_sec = p->pi.last_duration_ms / 1000;
}

bool goblin_engine_bgsave_running(const goblin_engine *eng)
{
    return eng->persist->bg_running;
}

bool goblin_engine_save_policy_set(const goblin_engine *eng)
{
    return eng->persist->npolicies > 0;
}

int goblin_engine_load(goblin_engine *eng, struct goblin_snapshot_result *res)
{
    struct goblin__persist *p = eng->persist;
    char path[PATH_MAX];
    int rc;

    memset(res, 0, sizeof(*res));
    if ((rc = goblin_engine_snapshot_path(eng, path, sizeof(path))) < 0)
        return rc;
    if (access(path, F_OK) < 0 && errno == ENOENT)
        return 0;
    rc = goblin__db_load(eng, path, res);
    if (rc < 0)
        return rc;
    goblin_persist_init(&p->pi, eng->st);
    p->load_keys = res->keys;
    p->load_expired = res->expired;
    return 1;
}

/* Redis's serverCron: a policy "seconds changes" fires once that many
 * changes are unsaved and that many seconds passed since the last good
 * save; after a failure, not again for RETRY_DELAY_MS. */
void goblin__persist_cron(goblin_engine *eng)
{
    struct goblin__persist *p = eng->persist;
    int64_t now = goblin__now_ms(eng->st);
    uint64_t dirty = goblin_store_dirty(eng->st);

    if (p->bg_running || p->pi.in_progress || eng->cfg.bgsave == NULL)
        return;
    if (p->bg_scheduled) {
        bgsave_start(eng);
        return;
    }
    for (int i = 0; i < p->npolicies; i++) {
        if (dirty >= (uint64_t)p->policy[i].changes &&
            now - p->pi.last_save_ms > p->policy[i].seconds * 1000 &&
            (now - p->bg_tried_ms > RETRY_DELAY_MS ||
             p->pi.last_status == 0)) {
            plog(eng, GOBLIN_LOG_NOTICE, "%lld changes in %lld seconds. "
                 "Saving...", (long long)p->policy[i].changes,
                 (long long)p->policy[i].seconds);
            bgsave_start(eng);
            return;
        }
    }
}

void goblin__persist_info(goblin__exec *x, struct goblin__text *t)
{
    const struct goblin__persist *p = x->eng->persist;
    int64_t now = goblin__now_ms(x->st);

    goblin__text_addf(t,
        "loading:0\r\nasync_loading:0\r\n"
        "current_cow_peak:0\r\ncurrent_cow_size:0\r\n"
        "current_cow_size_age:0\r\ncurrent_fork_perc:0.00\r\n"
        "current_save_keys_processed:0\r\ncurrent_save_keys_total:0\r\n"
        "rdb_changes_since_last_save:%llu\r\n"
        "rdb_bgsave_in_progress:%d\r\n"
        "rdb_last_save_time:%lld\r\n"
        "rdb_last_bgsave_status:%s\r\n"
        "rdb_last_bgsave_time_sec:%lld\r\n"
        "rdb_current_bgsave_time_sec:%lld\r\n"
        "rdb_saves:%llu\r\n"
        "rdb_last_cow_size:0\r\n"
        "rdb_last_load_keys_expired:%llu\r\n"
        "rdb_last_load_keys_loaded:%llu\r\n",
        (unsigned long long)goblin_store_dirty(x->st), p->bg_running,
        (long long)(p->pi.last_save_ms / 1000),
        p->pi.last_status == 0 ? "ok" : "err",
        (long long)p->last_bg_sec,
        (long long)(p->bg_running ? (now - p->pi.started_ms) / 1000 : -1),
        (unsigned long long)p->pi.saves,
        (unsigned long long)p->load_expired,
        (unsigned long long)p->load_keys);
    goblin__aof_info_text(x, t);
    goblin__text_addf(t, "module_fork_in_progress:0\r\n"
                         "module_fork_last_cow_size:0\r\n");
}

/* ---- commands ---- */

void goblin__cmd_save(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    if (x->eng->persist->bg_running) {
        goblin__reply_error(x, "ERR Background save already in progress");
        return;
    }
    if (goblin_engine_save(x->eng, NULL) < 0) {
        goblin__reply_error(x, "ERR");
        return;
    }
    goblin__reply_ok(x);
}

void goblin__cmd_bgsave(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    struct goblin__persist *p = x->eng->persist;
    bool schedule = argc == 2 && goblin__arg_is(argv[1], "schedule");

    if (argc > 2 || (argc == 2 && !schedule)) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return;
    }
    if (x->eng->cfg.bgsave == NULL) {
        goblin__reply_error(x, "ERR Background saving is not available "
                               "here: use SAVE");
        return;
    }
    /* As Redis: a save in progress is an error even with SCHEDULE (which
     * waits only for other kinds of child); inside EXEC the save starts
     * from cron once the transaction is over. */
    if (p->bg_running) {
        goblin__reply_error(x, "ERR Background save already in progress");
        return;
    }
    if (x->eng->in_exec) {
        p->bg_scheduled = true;
        goblin__reply_status(x, "Background saving scheduled");
        return;
    }
    if (bgsave_start(x->eng) < 0) {
        goblin__reply_error(x, "ERR");
        return;
    }
    goblin__reply_status(x, "Background saving started");
}

void goblin__cmd_lastsave(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    goblin__reply_int(x, x->eng->persist->pi.last_save_ms / 1000);
}

/* SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]: goblind has no replicas
 * to wait for, so NOW changes nothing and there is never a shutdown in
 * progress to abort. On success there is no reply: the server closes. */
void goblin__cmd_shutdown(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    bool nosave = false, save = false, force = false, abort_ = false;
    bool bad = false;
    goblin_engine *eng = x->eng;

    for (int i = 1; i < argc; i++) {
        if (goblin__arg_is(argv[i], "nosave"))
            nosave = true;
        else if (goblin__arg_is(argv[i], "save"))
            save = true;
        else if (goblin__arg_is(argv[i], "force"))
            force = true;
        else if (goblin__arg_is(argv[i], "abort"))
            abort_ = true;
        else if (!goblin__arg_is(argv[i], "now"))
            bad = true;
    }
    if (bad || (nosave && save) || (abort_ && argc > 2)) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return;
    }
    if (abort_) {
        goblin__reply_error(x, "ERR No shutdown in progress.");
        return;
    }
    if (eng->cfg.shutdown == NULL) {
        goblin__reply_error(x, "ERR SHUTDOWN is not available here");
        return;
    }
    plog(eng, GOBLIN_LOG_WARNING, "User requested shutdown...");
    if (eng->persist->bg_running && eng->cfg.bgsave_kill != NULL) {
        plog(eng, GOBLIN_LOG_WARNING, "There is a child saving an .rdb. "
             "Killing it!");
        eng->cfg.bgsave_kill(eng->cfg.bgsave_ctx);
    }
    if (save || (!nosave && eng->persist->npolicies > 0)) {
        plog(eng, GOBLIN_LOG_NOTICE, "Saving the final RDB snapshot "
             "before exiting.");
        if (goblin_engine_save(eng, NULL) < 0 && !force) {
            plog(eng, GOBLIN_LOG_WARNING, "Error trying to save the DB, "
                 "can't exit.");
            goblin__reply_error(x, "ERR Errors trying to SHUTDOWN. Check "
                                   "logs.");
            return;
        }
    }
    eng->cfg.shutdown(eng->cfg.shutdown_ctx);
    x->sess->flags |= SESS_CLOSE;
}
