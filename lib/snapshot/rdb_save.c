/* rdb_save.c - a whole Redis RDB file (goblin/snapshot.h, "Redis RDB
 * files written"): "REDIS0010", the aux fields Redis 7.0 writes
 * (redis-ver, redis-bits, ctime, used-mem, then repl-stream-db, repl-id
 * and repl-offset when given, aof-base), each database's SELECTDB,
 * RESIZEDB and keys, EOF and the CRC64 of every byte before it.
 *
 * A key's value is rdb_write.c's encoding, the one DUMP uses, so an
 * export, a full resynchronisation and DUMP cannot disagree. Bytes
 * gather in one buffer; past FLUSH_AT they are checksummed and written
 * in one go. A descriptor that is non-blocking (a replica's socket,
 * shared with the parent that set O_NONBLOCK) is waited on with poll.
 *
 * The walk only reads the stores and fixes "now" once: a forked child
 * can run it.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "checksum.h"
#include "goblin/buf.h"
#include "goblin/numtext.h"
#include "rdb.h"
#include "snapshot_int.h"
#include "store/hash_ttl.h"

#define RDB_FILE_VERSION "0010"
#define FLUSH_AT (256 * 1024)

struct rs {
    int fd;
    struct goblin_buf b;
    struct goblin_buf v;  /* one value's encoding */
    struct goblin__crc64 *tab;
    uint64_t crc;
    uint64_t bytes;
    int err;              /* first error, sticky */
    int64_t now;          /* fixed once for the walk */
};

static int send_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t r = write(fd, p, n);

        if (r > 0) {
            p += r;
            n -= (size_t)r;
        } else if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd pf = {fd, POLLOUT, 0};

            if (poll(&pf, 1, -1) < 0 && errno != EINTR)
                return -errno;
        } else if (r < 0 && errno == EINTR) {
            continue;
        } else {
            return r < 0 ? -errno : -EIO;
        }
    }
    return 0;
}

/* Checksums and writes what is buffered (all of it, or once past
 * FLUSH_AT). */
static void drain(struct rs *w, bool all)
{
    if (w->err != 0 || w->b.len == 0 || (!all && w->b.len < FLUSH_AT))
        return;
    if (w->b.failed) {
        w->err = GOBLIN_ENOMEM;
        return;
    }
    w->crc = goblin__crc64(w->tab, w->crc, w->b.data, w->b.len);
    w->err = send_all(w->fd, (const uint8_t *)w->b.data, w->b.len);
    w->bytes += w->b.len;
    w->b.len = 0;
}

static void put(struct rs *w, const void *p, size_t n)
{
    if (!w->b.failed && goblin_buf_append(&w->b, p, n) != 0)
        w->b.failed = true;
}

static void put_op(struct rs *w, uint8_t op)
{
    put(w, &op, 1);
}

static void aux_str(struct rs *w, const char *k, const char *v)
{
    put_op(w, RDB_OPCODE_AUX);
    goblin__rdb_put_str(&w->b, (struct goblin_slice){k, strlen(k)});
    goblin__rdb_put_str(&w->b, (struct goblin_slice){v, strlen(v)});
}

/* An integer aux value, as Redis's rdbSaveAuxFieldStrInt: its text,
 * int-encoded when it fits 32 bits. */
static void aux_int(struct rs *w, const char *k, int64_t v)
{
    char num[24];
    size_t n = goblin_int64_format(num, v);

    put_op(w, RDB_OPCODE_AUX);
    goblin__rdb_put_str(&w->b, (struct goblin_slice){k, strlen(k)});
    goblin__rdb_put_int_str(&w->b, (struct goblin_slice){num, n});
}

static void put_aux(struct rs *w, goblin_store *const *dbs, size_t count,
                    int64_t now, const struct goblin_rdb_aux *aux)
{
    uint64_t mem = 0;

    for (size_t i = 0; i < count; i++)
        if (dbs[i] != NULL)
            mem += goblin_store_used_memory(dbs[i]);
    aux_str(w, "redis-ver", "7.0.15");
    aux_int(w, "redis-bits", (int64_t)sizeof(void *) * 8);
    aux_int(w, "ctime", now / 1000);
    aux_int(w, "used-mem", (int64_t)mem);
    if (aux != NULL && aux->repl_id != NULL) {
        aux_int(w, "repl-stream-db", aux->repl_stream_db);
        aux_str(w, "repl-id", aux->repl_id);
        aux_int(w, "repl-offset", aux->repl_offset);
    }
    aux_int(w, "aof-base", aux != NULL && aux->aof_base);
}

static void put_key(struct rs *w, const uint8_t *rec, int64_t deadline,
                    struct goblin_snapshot_result *res)
{
    struct goblin__rec r;
    int rc;

    if (deadline >= 0) {
        uint8_t e[9] = {RDB_OPCODE_EXPIRETIME_MS};

        for (int i = 0; i < 8; i++)
            e[1 + i] = (uint8_t)((uint64_t)deadline >> (8 * i));
        put(w, e, sizeof(e));
        res->expires++;
    }
    goblin__rec_parse(rec, &r);
    /* The value's type byte comes before the key, its body after: the
     * value is encoded into a scratch buffer kept for the whole walk. */
    w->v.len = 0;
    if ((rc = goblin__rdb_write_value(rec, w->now, &w->v)) != 0) {
        w->err = rc;
        return;
    }
    put(w, w->v.data, 1);
    goblin__rdb_put_str(&w->b, (struct goblin_slice){r.key, r.klen});
    put(w, w->v.data + 1, w->v.len - 1);
    res->keys++;
    switch (goblin__rec_type(rec)) {
    case GOBLIN_TYPE_STRING: res->strings++; break;
    case GOBLIN_TYPE_HASH: res->hashes++; break;
    case GOBLIN_TYPE_ZSET: res->zsets++; break;
    default: break;
    }
}

static void put_db(struct rs *w, goblin_store *st, size_t db, int64_t now,
                   struct goblin_snapshot_result *res)
{
    uint64_t live = 0, live_exp = 0;

    for (size_t pos = 0; pos < st->ks.exp_count; pos++)
        live_exp += now <= goblin__exp_when(st, pos);
    live = st->ks.count - (st->ks.exp_count - live_exp);
    if (live == 0)
        return;
    put_op(w, RDB_OPCODE_SELECTDB);
    goblin__rdb_put_len(&w->b, db);
    put_op(w, RDB_OPCODE_RESIZEDB);
    goblin__rdb_put_len(&w->b, live);
    goblin__rdb_put_len(&w->b, live_exp);
    for (size_t id = 0; id < st->ks.count && w->err == 0; id++) {
        int64_t deadline = goblin__key_deadline(st, (uint32_t)id);

        const uint8_t *rec = goblin__key_rec(st, (uint32_t)id);

        if ((deadline >= 0 && now > deadline) ||
            (goblin__rec_type(rec) == GOBLIN_TYPE_HASH &&
             goblin__hash_obj_has_ttl(goblin__rec_obj(rec)) &&
             goblin__hash_obj_live_len(goblin__rec_obj(rec), now) == 0)) {
            res->expired++;
            continue;
        }
        w->now = now;
        put_key(w, rec, deadline, res);
        drain(w, false);
    }
}

/* The function libraries, after the aux fields and before the keys, as
 * Redis 7.0's rdbSaveFunctions: RDB_OPCODE_FUNCTION2 and the code. */
static void put_functions(struct rs *w, const struct goblin__fnlibs *fns)
{
    for (size_t i = 0; fns != NULL && i < fns->n && w->err == 0; i++) {
        put_op(w, RDB_OPCODE_FUNCTION2);
        goblin__rdb_put_str(&w->b, fns->codes[i]);
        drain(w, false);
    }
}

int goblin_rdb_write_fd(goblin_store *const *dbs, size_t count, int fd,
                        const struct goblin_rdb_aux *aux,
                        struct goblin_snapshot_result *res)
{
    return goblin__rdb_write_fd_fn(dbs, count, fd, aux, NULL, res);
}

int goblin__rdb_write_fd_fn(goblin_store *const *dbs, size_t count, int fd,
                            const struct goblin_rdb_aux *aux,
                            const struct goblin__fnlibs *fns,
                            struct goblin_snapshot_result *res)
{
    struct goblin_snapshot_result local;
    struct goblin_allocator a;
    struct rs w = {.fd = fd};
    uint8_t foot[8];
    int64_t now;

    if (res == NULL)
        res = &local;
    memset(res, 0, sizeof(*res));
    res->version = 10;
    if (count == 0 || dbs[0] == NULL)
        return goblin__snap_fail(res, GOBLIN_EINVAL, 0, "no database 0");
    now = goblin__now_ms(dbs[0]);
    res->created_ms = now;
    goblin__snap_allocator(dbs[0], &a);
    w.b.alloc = w.v.alloc = &a;
    if ((w.tab = goblin__alloc(dbs[0], sizeof(*w.tab))) == NULL)
        return goblin__snap_fail(res, GOBLIN_ENOMEM, 0, "out of memory");
    goblin__crc64_init(w.tab);
    put(&w, "REDIS" RDB_FILE_VERSION, 9);
    put_aux(&w, dbs, count, now, aux);
    put_functions(&w, fns);
    for (size_t i = 0; i < count && w.err == 0; i++)
        if (dbs[i] != NULL)
            put_db(&w, dbs[i], i, now, res);
    put_op(&w, RDB_OPCODE_EOF);
    drain(&w, true);
    for (int i = 0; i < 8; i++)
        foot[i] = (uint8_t)(w.crc >> (8 * i));
    if (w.err == 0 && (w.err = send_all(fd, foot, 8)) == 0)
        w.bytes += 8;
    goblin_buf_free(&w.b);
    goblin_buf_free(&w.v);
    goblin__free(dbs[0], w.tab, sizeof(*w.tab));
    res->bytes = w.bytes;
    if (w.err != 0)
        return goblin__snap_fail(res, w.err, w.bytes, "RDB write failed at "
                                 "byte %llu: %s", (unsigned long long)w.bytes,
                                 goblin_snapshot_strerror(w.err));
    return 0;
}

struct file_arg {
    goblin_store *const *dbs;
    size_t count;
    const struct goblin_rdb_aux *aux;
    const struct goblin__fnlibs *fns;
};

static int write_file(void *ctx, int fd, struct goblin_snapshot_result *res)
{
    const struct file_arg *f = ctx;

    return goblin__rdb_write_fd_fn(f->dbs, f->count, fd, f->aux, f->fns,
                                   res);
}

int goblin_rdb_write(goblin_store *const *dbs, size_t count,
                     const char *path, const struct goblin_rdb_aux *aux,
                     struct goblin_snapshot_result *res)
{
    return goblin__rdb_write_fn(dbs, count, path, aux, NULL, res);
}

int goblin__rdb_write_fn(goblin_store *const *dbs, size_t count,
                         const char *path, const struct goblin_rdb_aux *aux,
                         const struct goblin__fnlibs *fns,
                         struct goblin_snapshot_result *res)
{
    struct goblin_snapshot_result local;
    struct file_arg f = {dbs, count, aux, fns};

    if (res == NULL)
        res = &local;
    memset(res, 0, sizeof(*res));
    if (count == 0 || dbs[0] == NULL)
        return goblin__snap_fail(res, GOBLIN_EINVAL, 0, "no database 0");
    return goblin__save_atomic(path, write_file, &f, res);
}
