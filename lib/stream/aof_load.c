/* aof_load.c - loading an append-only file at start (Redis 7.0's
 * loadAppendOnlyFiles): the manifest, then the base (commands, or a
 * Redis RDB file for a .rdb base), then each incremental part in order,
 * every record run as a command by a session of the engine's own that
 * needs no password and whose replies are dropped.
 *
 * A torn last record (the server died in the middle of a write) of the
 * last part is cut off the file when aof-load-truncated is yes (logged),
 * refused otherwise; so is a MULTI with no EXEC at the end. Anything
 * that is not a record is refused: garbage is never loaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aof_int.h"
#include "commands/command.h"
#include "engine/fn_libs.h"
#include "engine/session.h"
#include "goblin/snapshot.h"

static void say(const struct goblin_aof_config *cfg,
                enum goblin_log_level level, const char *text)
{
    if (cfg->log != NULL)
        cfg->log(cfg->log_ctx, level, text);
}

void goblin__aof_paths(goblin_engine *eng, const struct goblin_aof_config *cfg,
                       char *out, size_t cap, char *name, size_t ncap)
{
    char dirname[1024];

    if (goblin_engine_config_get(eng, "appenddirname", dirname,
                                 sizeof(dirname)) < 0)
        snprintf(dirname, sizeof(dirname), "appendonlydir");
    if (goblin_engine_config_get(eng, "appendfilename", name, ncap) < 0)
        snprintf(name, ncap, "appendonly.aof");
    snprintf(out, cap, "%s/%s",
             cfg->dir != NULL && cfg->dir[0] != '\0' ? cfg->dir : ".",
             dirname);
}

/* Reads the whole of path into a malloc'd block (*len bytes). */
static int slurp(const char *path, char **out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    char *p;
    size_t at = 0;

    if (fd < 0)
        return -errno;
    if (fstat(fd, &sb) != 0 || (p = malloc((size_t)sb.st_size + 1)) == NULL) {
        close(fd);
        return GOBLIN_ENOMEM;
    }
    while (at < (size_t)sb.st_size) {
        ssize_t n = read(fd, p + at, (size_t)sb.st_size - at);

        if (n <= 0) {
            free(p);
            close(fd);
            return n < 0 ? -errno : -EIO;
        }
        at += (size_t)n;
    }
    close(fd);
    *out = p;
    *len = at;
    return 0;
}

int goblin__aof_manifest_read(struct goblin__aof_manifest *m,
                              const char *dir, const char *name, char *err,
                              size_t cap)
{
    char path[4400], *text;
    size_t len;
    int rc;

    snprintf(path, sizeof(path), "%s/%s.manifest", dir, name);
    if ((rc = slurp(path, &text, &len)) == -ENOENT)
        return 0;
    if (rc != 0) {
        snprintf(err, cap, "Can't read the AOF manifest %s: %s", path,
                 strerror(-rc));
        return rc;
    }
    rc = goblin__aof_manifest_parse(m, text, len, err, cap);
    free(text);
    return rc == 0 ? 1 : rc;
}

/* Runs the records of one part; *good is the length of the part that
 * holds whole records (and no open MULTI). Returns 0, 1 when the part
 * ends torn at *good, 2 at a FUNCTION command without scripting (the
 * libraries would be lost, as with a snapshot: fn_libs.c), or a negative
 * code. */
static int run_part(goblin_session *s, const char *p, size_t len,
                    size_t *good)
{
    struct goblin_slice small[64], *argv = small;
    int max = 64, argc = 0;
    size_t at = 0, multi_at = 0;
    int64_t k;
    int rc = 0;

    while (at < len) {
        k = goblin_aof_record(p + at, len - at, argv, max, &argc);
        if (k == GOBLIN_ELIMIT) {
            struct goblin_slice *v = malloc((size_t)argc * sizeof(*v));

            if (v == NULL) {
                rc = GOBLIN_ENOMEM;
                break;
            }
            if (argv != small)
                free(argv);
            argv = v;
            max = argc;
            continue;
        }
        if (k < 0) {
            rc = (int)k;
            break;
        }
        if (k == 0) {
            rc = 1;
            break;
        }
        if (!(s->flags & SESS_MULTI))
            multi_at = at;
        if (s->eng->scripting == NULL && argc >= 2 &&
            argv[0].len == 8 && strncasecmp(argv[0].ptr, "function", 8) == 0) {
            rc = 2; /* a library this build cannot load: refused */
            break;
        }
        goblin__command_execute(s, argc, argv, &s->discard);
        at += (size_t)k;
    }
    if (argv != small)
        free(argv);
    *good = at;
    if (rc == 0 && (s->flags & SESS_MULTI)) {
        *good = multi_at; /* a transaction with no EXEC: torn */
        rc = 1;
    }
    return rc;
}

static int load_part(goblin_session *s, const struct goblin_aof_config *cfg,
                     const char *dir, const char *name, bool last,
                     bool truncated_ok, char *err, size_t cap)
{
    char path[4400], text[4600];
    char *data;
    size_t len, good;
    int rc;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if ((rc = slurp(path, &data, &len)) != 0) {
        snprintf(err, cap, "Can't open the append-only file %s: %s", path,
                 strerror(-rc));
        return rc;
    }
    rc = run_part(s, data, len, &good);
    free(data);
    if (rc < 0) {
        snprintf(err, cap, "Bad file format reading the append only file "
                           "%s: make a backup of your AOF file, then use "
                           "./redis-check-aof --fix <filename.manifest>",
                 path);
        return GOBLIN_EPROTO;
    }
    if (rc == 0)
        return 0;
    if (rc == 2) {
        snprintf(err, cap, "Can't load the append only file %s: %s", path,
                 GOBLIN__FNLIBS_NO_SCRIPTING);
        return GOBLIN_EINVAL;
    }
    if (!last || !truncated_ok) {
        snprintf(err, cap, "Unexpected end of file reading the append only "
                           "file %s. You can: 1) Make a backup of your AOF "
                           "file, then use ./redis-check-aof --fix "
                           "<filename.manifest>. 2) Alternatively you can "
                           "set the 'aof-load-truncated' configuration "
                           "option to yes and restart the server.", path);
        return GOBLIN_EPROTO;
    }
    snprintf(text, sizeof(text), "!!! Warning: short read while loading the "
             "AOF file %s!!! AOF loaded anyway because aof-load-truncated "
             "is enabled; truncated to %zu bytes (%zu bytes cut)", path,
             good, len - good);
    say(cfg, GOBLIN_LOG_WARNING, text);
    if (truncate(path, (off_t)good) != 0) {
        snprintf(err, cap, "Can't truncate %s: %s", path, strerror(errno));
        return -errno;
    }
    return 0;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);

    return n >= t && strcmp(s + n - t, tail) == 0;
}

/* A .rdb base: Redis's RDB reader into every database, its function
 * libraries included. */
static int load_rdb(goblin_engine *eng, const char *dir, const char *name,
                    char *err, size_t cap)
{
    struct goblin_snapshot_result res;
    char path[4400];
    int rc;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    memset(&res, 0, sizeof(res));
    rc = goblin_engine_import_rdb(eng, path, 0, &res);
    if (rc != 0)
        snprintf(err, cap, "Can't load the AOF base %s: %s", path,
                 res.message[0] != '\0' ? res.message
                                        : goblin_snapshot_strerror(rc));
    return rc;
}

static int load_all(goblin_engine *eng, goblin_session *s,
                    const struct goblin_aof_config *cfg, const char *dir,
                    const struct goblin__aof_manifest *m, char *err,
                    size_t cap)
{
    bool ok_torn = goblin_engine_config_int(eng, "aof-load-truncated", 1);
    int rc = 0;

    if (m->base[0] != '\0') {
        if (ends_with(m->base, ".rdb"))
            rc = load_rdb(eng, dir, m->base, err, cap);
        else
            rc = load_part(s, cfg, dir, m->base, m->nincr == 0, ok_torn,
                           err, cap);
    }
    for (int i = 0; rc == 0 && i < m->nincr; i++)
        rc = load_part(s, cfg, dir, m->incr[i], i == m->nincr - 1, ok_torn,
                       err, cap);
    return rc;
}

int goblin_aof_load(goblin_engine *eng, const struct goblin_aof_config *cfg,
                    char *err, size_t cap)
{
    struct goblin__aof_manifest *m = malloc(sizeof(*m));
    struct goblin_session_info si = {GOBLIN_TRANSPORT_LOCAL, "aof", "aof",
                                     -1, NULL};
    char dir[4096], name[1024], text[4400];
    goblin_session *s;
    int rc;

    if (m == NULL)
        return GOBLIN_ENOMEM;
    goblin__aof_paths(eng, cfg, dir, sizeof(dir), name, sizeof(name));
    rc = goblin__aof_manifest_read(m, dir, name, err, cap);
    if (rc <= 0) {
        free(m);
        return rc;
    }
    if ((rc = goblin_session_open(eng, &si, &s)) != 0) {
        free(m);
        return rc;
    }
    s->flags |= SESS_AUTHED | SESS_NO_PAUSE; /* CLIENT PAUSE holds none */
    s->acl = eng->default_user;
    rc = load_all(eng, s, cfg, dir, m, err, cap);
    goblin_session_close(s);
    free(m);
    if (rc != 0)
        return rc;
    snprintf(text, sizeof(text), "DB loaded from append only file %s", dir);
    say(cfg, GOBLIN_LOG_NOTICE, text);
    return 1;
}
