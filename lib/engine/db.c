/* db.c - the engine's numbered databases (SELECT, SWAPDB, the
 * "databases" setting) and the change hook that tells WATCH which
 * database a key changed in.
 *
 * Each database is a store of its own (goblin/engine.h,
 * goblin_engine_db): a command runs on the session's selected store, so
 * the path of a program that never SELECTs is exactly what it was with
 * one store. Database 0 starts on the store the engine was opened on;
 * the others open on first use (SELECT, MOVE, COPY ... DB, SWAPDB, a
 * load) with its allocator, clock and seed, and stay open until the
 * engine closes. Loops over every database (INFO keyspace, FLUSHALL,
 * expiry, eviction, saves) skip the ones never opened, and dbs_open == 0
 * keeps them to one store.
 *
 * Memory: engine memory (sessions, buffers, settings) stays charged to
 * eng->st, keys to the store of their database; used_memory is the sum.
 * SWAPDB swaps stores between slots, so a store handle follows its data
 * (Redis's SWAPDB: clients of database 0 then see the old database 1).
 */
#include <stdio.h>
#include <string.h>

#include "goblin/keys.h"
#include "commands/notify.h"
#include "goblin/snapshot.h"
#include "block.h"
#include "fn_libs.h"
#include "repl/replica.h"
#include "session.h"
#include "settings.h"
#include "tracking.h"
#include "stream/propagate.h"

/* Expired and evicted keys: DEL in the write stream, then keyspace
 * notifications; new and missed keys: notifications only. */
static void db_key_event(void *ctx, int why, struct goblin_slice key)
{
    struct goblin__db *d = ctx;

    if (why == GOBLIN__KEY_NEW)
        goblin__notify_emit(d->eng, GOBLIN__NOTIFY_NEW, "new", key, d->id);
    else if (why == GOBLIN__KEY_MISS)
        goblin__notify_emit(d->eng, GOBLIN__NOTIFY_KEY_MISS, "keymiss", key,
                            d->id);
    else {
        goblin__stream_key_gone(d->eng, d->id, why, key);
        goblin__notify_key_gone(ctx, why, key);
    }
}

/* A hash field past its deadline: HDEL in the write stream (Redis 7.4's
 * propagateHashFieldDeletion). */
static void db_field_gone(void *ctx, struct goblin_slice key,
                          struct goblin_slice field)
{
    struct goblin__db *d = ctx;
    struct goblin_slice v[3] = {{"HDEL", 4}, key, field};

    if (__builtin_expect(d->eng->stream_on, 0))
        goblin__stream_op(d->eng, d->id, 3, v);
}

/* Then, once per hash: "hexpired", and "del" when the key went. */
static void db_fields_done(void *ctx, struct goblin_slice key, bool gone)
{
    struct goblin__db *d = ctx;

    goblin__notify_emit(d->eng, GOBLIN__NOTIFY_HASH, "hexpired", key, d->id);
    if (gone)
        goblin__notify_emit(d->eng, GOBLIN__NOTIFY_GENERIC, "del", key,
                            d->id);
}

/* The store hook: ctx is the database's slot. */
static void db_key_changed(void *ctx, struct goblin_slice key)
{
    struct goblin__db *d = ctx;
    goblin_engine *eng = d->eng;

    if (d->st == eng->st) {
        if (eng->prev_hook != NULL)
            eng->prev_hook(eng->prev_hook_ctx, key);
    } else {
        eng->st->dirty++; /* eng->st's counter is the server's (saves) */
    }
    goblin__watch_touch(eng, d->id, key);
    goblin__block_touch(eng, d->id, key);
    if (__builtin_expect(eng->track_on, 0))
        goblin__tracking_invalidate(eng, key);
}

static void hook(struct goblin__db *d)
{
    if (d->st == NULL)
        return;
    d->st->cfg.key_changed = db_key_changed;
    d->st->cfg.key_changed_ctx = d;
    /* Expired and evicted keys, new and missed ones, for keyspace
     * notifications; read lookups counted in the engine's statistics. */
    d->st->key_event = db_key_event;
    d->st->key_event_ctx = d;
    d->st->field_gone = db_field_gone;
    d->st->fields_done = db_fields_done;
    d->st->read_stats = &d->eng->stat_keyspace;
    d->st->frozen_ms = &d->eng->frozen_ms;
    d->st->key_events = goblin__notify_key_events(d->eng);
    d->st->expire_paused = d->eng->pause_type != 0 ||
                           goblin__repl_following(d->eng);
}

void goblin__db_key_events(goblin_engine *eng)
{
    for (int i = 0; i < eng->ndbs; i++)
        if (eng->dbs[i].st != NULL)
            eng->dbs[i].st->key_events = goblin__notify_key_events(eng);
}

int goblin__db_init(goblin_engine *eng, int n)
{
    struct goblin__db *dbs;

    if (n < 1 || (size_t)n > SIZE_MAX / sizeof(*dbs))
        return GOBLIN_EINVAL;
    dbs = goblin__alloc(eng->st, (size_t)n * sizeof(*dbs));
    if (dbs == NULL)
        return GOBLIN_ENOMEM;
    memset(dbs, 0, (size_t)n * sizeof(*dbs));
    for (int i = 0; i < n; i++) {
        dbs[i].eng = eng;
        dbs[i].id = i;
    }
    if (eng->dbs == NULL) {
        dbs[0].st = eng->st;
    } else {
        dbs[0].st = eng->dbs[0].st;
        goblin__free(eng->st, eng->dbs, (size_t)eng->ndbs * sizeof(*dbs));
    }
    eng->dbs = dbs;
    eng->ndbs = n;
    if (dbs[0].st->cfg.key_changed == db_key_changed)
        hook(&dbs[0]);
    return 0;
}

void goblin__db_hook_install(goblin_engine *eng)
{
    eng->prev_hook = eng->st->cfg.key_changed;
    eng->prev_hook_ctx = eng->st->cfg.key_changed_ctx;
    hook(&eng->dbs[0]);
}

void goblin__db_free(goblin_engine *eng)
{
    if (eng->dbs == NULL)
        return;
    for (int i = 0; i < eng->ndbs; i++)
        if (eng->dbs[i].st != NULL && eng->dbs[i].st != eng->st)
            goblin_store_close(eng->dbs[i].st);
    if (eng->st->cfg.key_changed == db_key_changed) {
        eng->st->cfg.key_changed = eng->prev_hook;
        eng->st->cfg.key_changed_ctx = eng->prev_hook_ctx;
    }
    eng->st->key_event = NULL;
    eng->st->key_events = 0;
    eng->st->reads = 0;
    eng->st->frozen_ms = NULL;
    eng->st->field_gone = NULL;
    eng->st->fields_done = NULL;
    goblin__free(eng->st, eng->dbs, (size_t)eng->ndbs * sizeof(*eng->dbs));
    eng->dbs = NULL;
}

void goblin__db_string_max(goblin_engine *eng)
{
    goblin__store_set_string_max(eng->st, eng->proto_max_bulk_len);
    for (int i = 0; eng->dbs != NULL && i < eng->ndbs; i++)
        if (eng->dbs[i].st != NULL)
            goblin__store_set_string_max(eng->dbs[i].st,
                                         eng->proto_max_bulk_len);
}

goblin_store *goblin__db_store(goblin_engine *eng, int id)
{
    struct goblin__db *d = &eng->dbs[id];

    if (d->st != NULL)
        return d->st;
    if (goblin__store_open_like(eng->st, &d->st) != 0)
        return NULL;
    hook(d);
    eng->dbs_open++;
    return d->st;
}

int goblin__db_swap(goblin_engine *eng, int a, int b)
{
    goblin_store *t;

    if (a == b)
        return 0;
    if (goblin__db_store(eng, a) == NULL || goblin__db_store(eng, b) == NULL)
        return GOBLIN_ENOMEM;
    t = eng->dbs[a].st;
    eng->dbs[a].st = eng->dbs[b].st;
    eng->dbs[b].st = t;
    hook(&eng->dbs[a]);
    hook(&eng->dbs[b]);
    for (goblin_session *s = eng->first; s != NULL; s = s->next)
        if (s->dbid == a || s->dbid == b)
            s->db = eng->dbs[s->dbid].st;
    return 0;
}

size_t goblin__db_used_memory(const goblin_engine *eng)
{
    size_t sum;

    if (eng->dbs_open == 0)
        return goblin_store_used_memory(eng->st);
    sum = 0;
    for (int i = 0; i < eng->ndbs; i++)
        if (eng->dbs[i].st != NULL)
            sum += goblin_store_used_memory(eng->dbs[i].st);
    return sum;
}

int goblin__db_select(goblin_session *s, int id)
{
    goblin_store *st = goblin__db_store(s->eng, id);

    if (st == NULL)
        return GOBLIN_ENOMEM;
    s->db = st;
    s->dbid = id;
    return 0;
}

/* ---- snapshots of every database ---- */

/* The stores of every database, NULL for the ones not open, in an array
 * from eng->st's allocator (ndbs entries), or NULL. */
static goblin_store **db_array(goblin_engine *eng)
{
    goblin_store **a = goblin__alloc(eng->st, goblin__mul((size_t)eng->ndbs,
                                                          sizeof(*a)));

    for (int i = 0; a != NULL && i < eng->ndbs; i++)
        a[i] = eng->dbs[i].st;
    return a;
}

/* The files below carry the function libraries (fn_libs.h). */

int goblin_engine_snapshot_save(goblin_engine *eng, const char *path,
                                struct goblin_snapshot_result *res)
{
    struct goblin__fnlibs f;
    goblin_store **a;
    int rc;

    if (goblin__fnlibs_save(eng, &f) != 0)
        return GOBLIN_ENOMEM;
    if (eng->dbs_open == 0)
        rc = goblin__snapshot_save_dbs_fn(&eng->dbs[0].st, 1, path, &f, res);
    else if ((a = db_array(eng)) == NULL)
        rc = GOBLIN_ENOMEM;
    else {
        rc = goblin__snapshot_save_dbs_fn(a, (size_t)eng->ndbs, path, &f,
                                          res);
        goblin__free(eng->st, a, (size_t)eng->ndbs * sizeof(*a));
    }
    goblin__fnlibs_done(eng, &f);
    return rc;
}

/* An RDB file to fd (path NULL) or to path. */
static int rdb_out(goblin_engine *eng, int fd, const char *path,
                   const struct goblin_rdb_aux *aux,
                   struct goblin_snapshot_result *res)
{
    struct goblin__fnlibs f;
    goblin_store **a = &eng->dbs[0].st;
    size_t n = 1;
    int rc;

    if (goblin__fnlibs_save(eng, &f) != 0)
        return GOBLIN_ENOMEM;
    if (eng->dbs_open > 0) {
        if ((a = db_array(eng)) == NULL) {
            goblin__fnlibs_done(eng, &f);
            return GOBLIN_ENOMEM;
        }
        n = (size_t)eng->ndbs;
    }
    rc = path == NULL ? goblin__rdb_write_fd_fn(a, n, fd, aux, &f, res)
                      : goblin__rdb_write_fn(a, n, path, aux, &f, res);
    if (eng->dbs_open > 0)
        goblin__free(eng->st, a, (size_t)eng->ndbs * sizeof(*a));
    goblin__fnlibs_done(eng, &f);
    return rc;
}

int goblin_engine_rdb_write_fd(goblin_engine *eng, int fd,
                               const struct goblin_rdb_aux *aux,
                               struct goblin_snapshot_result *res)
{
    return rdb_out(eng, fd, NULL, aux, res);
}

int goblin_engine_export_rdb(goblin_engine *eng, const char *path,
                             struct goblin_snapshot_result *res)
{
    return rdb_out(eng, -1, path, NULL, res);
}

/* Closes the stores of databases 1.. that hold nothing, as if they had
 * never been opened (a load opens them all first). */
static void close_empty(goblin_engine *eng)
{
    for (int i = 1; i < eng->ndbs; i++) {
        struct goblin__db *d = &eng->dbs[i];

        if (d->st == NULL || d->st == eng->st || goblin_key_count(d->st) > 0)
            continue;
        for (goblin_session *s = eng->first; s != NULL; s = s->next)
            if (s->db == d->st)
                goto next;
        goblin_store_close(d->st);
        d->st = NULL;
        eng->dbs_open--;
    next:;
    }
}

/* Loads path into every database with a Goblin snapshot (flags < 0)
 * or a Redis RDB file (flags: goblin_rdb_import's). */
static int load_all(goblin_engine *eng, const char *path, int flags,
                    struct goblin_snapshot_result *res)
{
    struct goblin__fnlibs f;
    goblin_store **a;
    int rc;

    for (int i = 1; i < eng->ndbs; i++)
        if (goblin__db_store(eng, i) == NULL) {
            close_empty(eng);
            return GOBLIN_ENOMEM;
        }
    if ((a = db_array(eng)) == NULL) {
        close_empty(eng);
        return GOBLIN_ENOMEM;
    }
    /* The libraries are the file's too: all or nothing with the keys. */
    goblin__fnlibs_flush(eng);
    goblin__fnlibs_load(eng, &f);
    if (flags < 0)
        rc = goblin__snapshot_load_dbs_fn(a, (size_t)eng->ndbs, path, &f,
                                          res);
    else
        rc = goblin__rdb_import_dbs_fn(a, (size_t)eng->ndbs, path,
                                       (unsigned)flags, &f, res);
    if (rc != 0)
        goblin__fnlibs_flush(eng);
    goblin__free(eng->st, a, (size_t)eng->ndbs * sizeof(*a));
    close_empty(eng);
    return rc;
}

int goblin__db_load(goblin_engine *eng, const char *path,
                    struct goblin_snapshot_result *res)
{
    return load_all(eng, path, -1, res);
}

int goblin_engine_import_rdb(goblin_engine *eng, const char *path,
                             unsigned flags,
                             struct goblin_snapshot_result *res)
{
    struct goblin_snapshot_result local;

    return load_all(eng, path, (int)(flags & 0xffff),
                    res != NULL ? res : &local);
}

/* ---- the public handles ---- */

int goblin_engine_db_count(const goblin_engine *eng)
{
    return eng->ndbs;
}

int goblin_engine_db(goblin_engine *eng, int index, goblin_store **out)
{
    goblin_store *st;

    if (index < 0 || index >= eng->ndbs || out == NULL)
        return GOBLIN_ERANGE;
    if ((st = goblin__db_store(eng, index)) == NULL)
        return GOBLIN_ENOMEM;
    *out = st;
    return 0;
}

/* ---- the "databases" setting ---- */

static int get_databases(void *ctx, char *buf, size_t cap)
{
    const goblin_engine *eng = ctx;
    char tmp[16];
    int n = snprintf(tmp, sizeof(tmp), "%d", eng->ndbs);

    n = (size_t)n < cap ? n : (int)cap;
    memcpy(buf, tmp, (size_t)n);
    return n;
}

/* Start-up only, as in Redis: the config file and the command line set
 * it; from a command (CONFIG SET) it is immutable. */
static int set_databases(void *ctx, struct goblin_slice v, const char **why)
{
    goblin_engine *eng = ctx;
    int64_t n;
    int rc;

    if (eng->running != NULL || eng->dbs_open > 0) {
        *why = "can't set immutable config";
        return GOBLIN_EINVAL;
    }
    if ((rc = goblin__setting_parse("databases", v, &n, why)) != 0)
        return rc;
    if (n == eng->ndbs)
        return 0;
    if (goblin__db_init(eng, (int)n) != 0) {
        *why = "out of memory";
        return GOBLIN_ENOMEM;
    }
    for (goblin_session *s = eng->first; s != NULL; s = s->next)
        s->db = eng->dbs[0].st;
    return 0;
}

int goblin__db_settings_init(goblin_engine *eng)
{
    const struct goblin_setting s = {"databases", NULL, get_databases,
                                     set_databases, eng};

    return goblin_engine_setting_add(eng, &s);
}
