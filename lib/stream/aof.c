/* aof.c - appending to the AOF (goblin/aof.h): the stream consumer, the
 * three appendfsync modes, the everysec fsync thread, the parts and the
 * manifest across a rewrite, the automatic rewrite's trigger, INFO.
 *
 * Invariant: the manifest on disk always names a base and incremental
 * parts that together hold every write that was acknowledged, in order:
 * a new incremental part is in the manifest before anything is written
 * to it, and the parts a rewrite replaces leave the manifest before they
 * are removed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "aof_int.h"
#include "engine/session.h"
#include "goblin/buf.h"
#include "goblin/stream.h"

enum { FSYNC_EVERYSEC = 0, FSYNC_ALWAYS = 1, FSYNC_NO = 2 };

/* everysec buffers up to this much before writing in the callback. */
#define BUFFER_MAX (1u << 16)

struct goblin_aof {
    goblin_engine *eng;
    struct goblin_aof_config cfg;
    char cfgdir[4096];
    char dir[4096];
    char name[200]; /* appendfilename: parts add at most 21 bytes */
    struct goblin__aof_manifest m;
    int fd;
    int mode;
    uint32_t stream_id;
    struct goblin_buf buf;
    bool write_failed;
    /* Sizes: base, and every incremental part (current_size); base_size
     * is the size right after the last rewrite. */
    uint64_t current_size, base_size;
    /* The rewrite in progress. */
    bool rewriting;
    bool scheduled; /* BGREWRITEAOF waits for another child */
    char tmp[4400];
    int64_t rewrite_start_ms;
    int64_t last_rewrite_sec;
    bool last_rewrite_ok;
    uint64_t rewrites;
    /* everysec: the thread and what it syncs. */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool thread_on, stop, dirty, syncing;
};

static void say(const goblin_aof *a, enum goblin_log_level level,
                const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(const goblin_aof *a, enum goblin_log_level level,
                const char *fmt, ...)
{
    char text[4600];
    va_list ap;

    if (a->cfg.log == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    a->cfg.log(a->cfg.log_ctx, level, text);
}

static int64_t wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool goblin__aof_db_open(goblin_engine *eng, int i, goblin_store **st)
{
    if (i < 0 || i >= eng->ndbs || eng->dbs[i].st == NULL)
        return false;
    *st = eng->dbs[i].st;
    return true;
}

goblin_aof *goblin_engine_aof(const goblin_engine *eng)
{
    return eng->aof;
}

static int write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Writes what is buffered. A failed write keeps the bytes for the next
 * try (Redis keeps them too and reports aof_last_write_status:err). */
static void flush_buf(goblin_aof *a)
{
    if (a->buf.len == 0)
        return;
    if (write_all(a->fd, a->buf.data, a->buf.len) != 0) {
        if (!a->write_failed)
            say(a, GOBLIN_LOG_WARNING, "Error writing to the AOF file: %s",
                strerror(errno));
        a->write_failed = true;
        return;
    }
    a->write_failed = false;
    a->current_size += a->buf.len;
    a->buf.len = 0;
    if (a->mode == FSYNC_EVERYSEC) {
        pthread_mutex_lock(&a->mu);
        a->dirty = true;
        pthread_mutex_unlock(&a->mu);
    }
}

/* The stream consumer: always writes and fsyncs before returning (the
 * reply has not left yet); the others buffer. */
static void on_unit(void *ctx, const void *bytes, size_t len, uint64_t off)
{
    goblin_aof *a = ctx;

    (void)off;
    if (bytes == NULL) {
        say(a, GOBLIN_LOG_WARNING, "A write could not be kept for the AOF "
                                   "(out of memory)");
        a->write_failed = true;
        return;
    }
    goblin_buf_append(&a->buf, bytes, len);
    if (a->mode == FSYNC_ALWAYS && a->eng->input_batch > 0) {
        a->eng->sync_due = true; /* goblin__aof_sync before replies */
    } else if (a->mode == FSYNC_ALWAYS) {
        flush_buf(a);
        if (!a->write_failed && fdatasync(a->fd) != 0) {
            say(a, GOBLIN_LOG_WARNING, "Can't fsync the AOF: %s",
                strerror(errno));
            a->write_failed = true;
        }
    } else if (a->buf.len >= BUFFER_MAX) {
        flush_buf(a);
    }
}

static void *fsync_thread(void *arg)
{
    goblin_aof *a = arg;
    struct timespec ts;

    pthread_mutex_lock(&a->mu);
    while (!a->stop) {
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&a->cv, &a->mu, &ts);
        if (a->dirty) {
            int fd = a->fd;

            /* Outside the lock, so that the engine's thread never waits
             * for the disk; next_part waits for syncing to end before it
             * closes fd. */
            a->dirty = false;
            a->syncing = true;
            pthread_mutex_unlock(&a->mu);
            fdatasync(fd);
            pthread_mutex_lock(&a->mu);
            a->syncing = false;
            pthread_cond_broadcast(&a->cv);
        }
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

/* Starts the everysec thread with every signal blocked: signals stay the
 * server's (goblind takes them through a signalfd). */
static bool thread_start(goblin_aof *a)
{
    sigset_t all, old;
    int rc;

    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&a->thread, NULL, fsync_thread, a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    a->thread_on = rc == 0;
    return a->thread_on;
}

static uint64_t file_size(const char *dir, const char *name)
{
    char path[4400];
    struct stat sb;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

/* Opens incremental part name for appending. */
static int open_part(goblin_aof *a, const char *name)
{
    char path[4400];
    int fd;

    snprintf(path, sizeof(path), "%s/%s", a->dir, name);
    fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    return fd < 0 ? -errno : fd;
}

/* Adds incremental part seq to the manifest (on disk first) and moves
 * appending to it. */
static int next_part(goblin_aof *a)
{
    struct goblin__aof_manifest m = a->m;
    int seq = m.nincr > 0 ? m.incr_seq[m.nincr - 1] + 1 : 1, fd, old;

    if (m.nincr == GOBLIN__AOF_MAX_INCR)
        return GOBLIN_ELIMIT;
    snprintf(m.incr[m.nincr], sizeof(m.incr[0]), "%s.%d.incr.aof", a->name,
             seq);
    m.incr_seq[m.nincr++] = seq;
    if ((fd = open_part(a, m.incr[m.nincr - 1])) < 0)
        return fd;
    if (goblin__aof_manifest_write(&m, a->dir, a->name) != 0) {
        close(fd);
        return -EIO;
    }
    a->m = m;
    pthread_mutex_lock(&a->mu);
    while (a->syncing)
        pthread_cond_wait(&a->cv, &a->mu);
    old = a->fd;
    if (old >= 0)
        fdatasync(old);
    a->fd = fd;
    a->dirty = false;
    pthread_mutex_unlock(&a->mu);
    if (old >= 0)
        close(old);
    goblin_stream_reselect(a->eng, GOBLIN_STREAM_LOCAL);
    return 0;
}

/* A fresh AOF: a base of the data now, and its first incremental part. */
static int create_fresh(goblin_aof *a, char *err, size_t cap)
{
    char path[4400];
    int rc;

    memset(&a->m, 0, sizeof(a->m));
    snprintf(a->m.base, sizeof(a->m.base), "%s.1.base.aof", a->name);
    a->m.base_seq = 1;
    snprintf(path, sizeof(path), "%s/%s", a->dir, a->m.base);
    if ((rc = goblin_aof_write_base(a->eng, path)) != 0) {
        snprintf(err, cap, "Can't write the AOF base %s: %s", path,
                 strerror(-rc));
        return rc;
    }
    if ((rc = next_part(a)) != 0)
        snprintf(err, cap, "Can't create the AOF in %s: %s", a->dir,
                 strerror(-rc));
    a->base_size = a->current_size = file_size(a->dir, a->m.base);
    return rc;
}

static int open_existing(goblin_aof *a, char *err, size_t cap)
{
    int fd;

    a->current_size = a->m.base[0] ? file_size(a->dir, a->m.base) : 0;
    for (int i = 0; i < a->m.nincr; i++)
        a->current_size += file_size(a->dir, a->m.incr[i]);
    a->base_size = a->current_size;
    if (a->m.nincr == 0)
        return next_part(a);
    fd = open_part(a, a->m.incr[a->m.nincr - 1]);
    if (fd < 0) {
        snprintf(err, cap, "Can't open the AOF %s: %s",
                 a->m.incr[a->m.nincr - 1], strerror(-fd));
        return fd;
    }
    a->fd = fd;
    return 0;
}

/* A rewrite whose server died leaves its temporary base behind. */
static void remove_temps(goblin_aof *a)
{
    char path[4400];
    struct dirent *de;
    DIR *d = opendir(a->dir);

    if (d == NULL)
        return;
    while ((de = readdir(d)) != NULL)
        if (strncmp(de->d_name, "temp-rewriteaof-", 16) == 0) {
            snprintf(path, sizeof(path), "%s/%s", a->dir, de->d_name);
            unlink(path);
        }
    closedir(d);
}

static int start(goblin_aof *a, char *err, size_t cap)
{
    int rc;

    if (mkdir(a->dir, 0755) != 0 && errno != EEXIST) {
        snprintf(err, cap, "Can't create the AOF directory %s: %s", a->dir,
                 strerror(errno));
        return -errno;
    }
    remove_temps(a);
    rc = goblin__aof_manifest_read(&a->m, a->dir, a->name, err, cap);
    if (rc < 0)
        return rc;
    rc = rc == 0 ? create_fresh(a, err, cap) : open_existing(a, err, cap);
    if (rc != 0)
        return rc;
    if (a->mode == FSYNC_EVERYSEC && !thread_start(a)) {
        snprintf(err, cap, "Can't start the AOF fsync thread");
        return GOBLIN_ENOMEM;
    }
    rc = goblin_stream_subscribe(a->eng, GOBLIN_STREAM_LOCAL, on_unit, a,
                                 &a->stream_id);
    if (rc != 0)
        snprintf(err, cap, "Can't follow the write stream");
    return rc;
}

int goblin_aof_open(goblin_engine *eng, const struct goblin_aof_config *cfg,
                    goblin_aof **out, char *err, size_t cap)
{
    goblin_aof *a = calloc(1, sizeof(*a));
    int rc;

    if (a == NULL)
        return GOBLIN_ENOMEM;
    a->eng = eng;
    a->cfg = *cfg;
    snprintf(a->cfgdir, sizeof(a->cfgdir), "%s",
             cfg->dir != NULL ? cfg->dir : ".");
    a->cfg.dir = a->cfgdir;
    a->fd = -1;
    a->mode = (int)goblin_engine_config_int(eng, "appendfsync", 0);
    a->last_rewrite_sec = -1;
    a->last_rewrite_ok = true;
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    goblin__aof_paths(eng, &a->cfg, a->dir, sizeof(a->dir), a->name,
                      sizeof(a->name));
    if ((rc = start(a, err, cap)) != 0) {
        goblin_aof_close(a);
        return rc;
    }
    eng->aof = a;
    *out = a;
    return 0;
}

void goblin_aof_close(goblin_aof *a)
{
    if (a == NULL)
        return;
    if (a->stream_id != 0)
        goblin_stream_unsubscribe(a->eng, a->stream_id);
    if (a->eng->aof == a)
        a->eng->aof = NULL;
    if (a->fd >= 0) {
        flush_buf(a);
        fdatasync(a->fd);
    }
    if (a->thread_on) {
        pthread_mutex_lock(&a->mu);
        a->stop = true;
        pthread_cond_signal(&a->cv);
        pthread_mutex_unlock(&a->mu);
        pthread_join(a->thread, NULL);
    }
    if (a->fd >= 0)
        close(a->fd);
    if (a->rewriting)
        unlink(a->tmp);
    goblin_buf_free(&a->buf);
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->cv);
    free(a);
}

bool goblin_aof_cron(goblin_aof *a)
{
    int64_t pct = goblin_engine_config_int(a->eng,
                                           "auto-aof-rewrite-percentage", 100);
    int64_t min = goblin_engine_config_int(a->eng,
                                           "auto-aof-rewrite-min-size",
                                           64 << 20);
    uint64_t base = a->base_size ? a->base_size : 1;

    flush_buf(a);
    if (a->rewriting || pct <= 0 || a->current_size < (uint64_t)min)
        return false;
    return (a->current_size - base) * 100 / base >= (uint64_t)pct &&
           a->current_size > base;
}

int goblin_aof_rewrite_start(goblin_aof *a, char *path, size_t cap)
{
    int rc;

    if (a->rewriting)
        return GOBLIN_EBUSY;
    flush_buf(a);
    if ((rc = next_part(a)) != 0)
        return rc;
    snprintf(a->tmp, sizeof(a->tmp), "%s/temp-rewriteaof-%ld.aof", a->dir,
             (long)getpid());
    snprintf(path, cap, "%s", a->tmp);
    a->rewriting = true;
    a->rewrite_start_ms = wall_ms();
    return 0;
}

/* After a rewrite: the new base and the current part only. */
static int install(goblin_aof *a)
{
    struct goblin__aof_manifest m, old = a->m;
    char path[4400];
    int seq = old.base_seq + 1;

    memset(&m, 0, sizeof(m));
    snprintf(m.base, sizeof(m.base), "%s.%d.base.aof", a->name, seq);
    m.base_seq = seq;
    snprintf(m.incr[0], sizeof(m.incr[0]), "%s", old.incr[old.nincr - 1]);
    m.incr_seq[0] = old.incr_seq[old.nincr - 1];
    m.nincr = 1;
    snprintf(path, sizeof(path), "%s/%s", a->dir, m.base);
    if (rename(a->tmp, path) != 0)
        return -errno;
    if (goblin__aof_manifest_write(&m, a->dir, a->name) != 0)
        return -EIO;
    a->m = m;
    if (old.base[0] != '\0') {
        snprintf(path, sizeof(path), "%s/%s", a->dir, old.base);
        unlink(path);
    }
    for (int i = 0; i < old.nincr - 1; i++) {
        snprintf(path, sizeof(path), "%s/%s", a->dir, old.incr[i]);
        unlink(path);
    }
    a->base_size = file_size(a->dir, m.base);
    a->current_size = a->base_size + file_size(a->dir, m.incr[0]);
    return 0;
}

void goblin_aof_rewrite_done(goblin_aof *a, bool ok)
{
    int rc = 0;

    if (!a->rewriting)
        return;
    a->rewriting = false;
    if (ok && (rc = install(a)) == 0) {
        a->rewrites++;
        a->last_rewrite_ok = true;
        a->last_rewrite_sec = (wall_ms() - a->rewrite_start_ms) / 1000;
        say(a, GOBLIN_LOG_NOTICE, "Background AOF rewrite finished "
                                  "successfully");
        return;
    }
    unlink(a->tmp);
    a->last_rewrite_ok = false;
    say(a, GOBLIN_LOG_WARNING, "Background AOF rewrite failed%s%s",
        rc != 0 ? ": " : "", rc != 0 ? strerror(-rc) : "");
}

void goblin_aof_info(const goblin_aof *a, struct goblin_aof_info *out)
{
    memset(out, 0, sizeof(*out));
    out->rewrite_in_progress = a->rewriting;
    out->rewrite_scheduled = a->scheduled;
    out->last_rewrite_ok = a->last_rewrite_ok;
    out->last_write_ok = !a->write_failed;
    out->rewrites = a->rewrites;
    out->last_rewrite_time_sec = a->last_rewrite_sec;
    out->current_size = a->current_size + a->buf.len;
    out->base_size = a->base_size;
    out->buffer_length = a->buf.len;
}

void goblin__aof_sync(goblin_engine *eng)
{
    goblin_aof *a = eng->aof;

    eng->sync_due = false;
    if (a == NULL)
        return;
    flush_buf(a);
    if (!a->write_failed && fdatasync(a->fd) != 0) {
        say(a, GOBLIN_LOG_WARNING, "Can't fsync the AOF: %s",
            strerror(errno));
        a->write_failed = true;
    }
}

void goblin__aof_hold(goblin_engine *eng)
{
    eng->input_batch++;
}

void goblin__aof_unhold(goblin_engine *eng)
{
    eng->input_batch--;
}

bool goblin__aof_sync_pending(const goblin_engine *eng)
{
    return eng->sync_due;
}

/* A rewrite with no server hook: in this thread. */
static int rewrite_here(goblin_aof *a)
{
    char path[4400];
    int rc = goblin_aof_rewrite_start(a, path, sizeof(path));

    if (rc != 0)
        return rc;
    rc = goblin_aof_write_base(a->eng, path);
    goblin_aof_rewrite_done(a, rc == 0);
    return rc;
}

int goblin__aof_bgrewrite(goblin_engine *eng)
{
    goblin_aof *a = eng->aof;
    int rc;

    if (a->rewriting)
        return GOBLIN_EBUSY;
    if (eng->cfg.aof_rewrite == NULL)
        return rewrite_here(a);
    rc = eng->cfg.aof_rewrite(eng->cfg.aof_rewrite_ctx);
    if (rc == GOBLIN_EBUSY) {
        a->scheduled = true;
        return 1;
    }
    a->scheduled = false;
    return rc;
}

void goblin__aof_cron(goblin_engine *eng)
{
    goblin_aof *a = eng->aof;
    int mode = (int)goblin_engine_config_int(eng, "appendfsync", 0);

    if (mode != a->mode) {
        flush_buf(a);
        a->mode = mode;
        if (mode == FSYNC_EVERYSEC && !a->thread_on)
            thread_start(a);
    }
    if ((goblin_aof_cron(a) || a->scheduled) && !a->rewriting) {
        if (!a->scheduled)
            say(a, GOBLIN_LOG_NOTICE, "Starting automatic rewriting of AOF "
                                      "on %llu%% growth",
                (unsigned long long)((a->current_size - a->base_size) *
                                     100 / (a->base_size ? a->base_size
                                                         : 1)));
        goblin__aof_bgrewrite(eng);
    }
}
