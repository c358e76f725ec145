/* snap_write.c - writing a snapshot (format.h has the layout): the block
 * writer and the walk over the keyspace.
 *
 * Records stream into one buffer the size of a block; when it fills, its
 * header (length, CRC32C) is completed in front of it and the block goes
 * out in one write. So the cost is one pass of copying and one of CRC over
 * cache-hot bytes, and a system call per 256 KiB.
 *
 * The walk only reads the store (a forked child can run it) and fixes
 * "now" once, so the keys it leaves out as expired are exactly those the
 * header's count left out.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "checksum.h"
#include "format.h"
#include "snapshot_int.h"
#include "store/hash.h"
#include "store/hash_ttl.h"
#include "store/list.h"
#include "store/set.h"
#include "store/zset.h"

struct wr {
    goblin_store *st;
    int fd;
    uint8_t *buf;         /* SNAP_BLOCK_HDR + SNAP_BLOCK_SIZE bytes */
    uint8_t *zbuf;        /* SNAP_ZCHUNK bytes: a sorted-set chunk */
    size_t zlen;          /* bytes in zbuf */
    uint64_t zpairs;      /* pairs in zbuf */
    size_t len;           /* payload bytes in buf */
    uint32_t index;       /* blocks written */
    uint32_t chain;       /* the trailer's CRC so far */
    uint64_t payload;     /* payload bytes written */
    uint64_t bytes;       /* file bytes written */
    int err;              /* first error, sticky */
};

#define WR_BUF_SIZE (SNAP_BLOCK_HDR + SNAP_BLOCK_SIZE)

uint32_t goblin__snap_block_crc(uint32_t len, uint32_t index,
                                const uint8_t *payload)
{
    uint8_t h[8];

    le32_put(h, len);
    le32_put(h + 4, index);
    return goblin__crc32c(goblin__crc32c(0, h, 8), payload, len);
}

static void write_all(struct wr *w, const void *p, size_t n)
{
    const uint8_t *b = p;

    while (n > 0 && w->err == 0) {
        ssize_t r = write(w->fd, b, n);

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            w->err = r < 0 ? -errno : -EIO;
            break;
        }
        b += r;
        n -= (size_t)r;
        w->bytes += (uint64_t)r;
    }
}

/* Sends the buffered block (or, when it is empty, the end marker). */
static void flush_block(struct wr *w)
{
    uint32_t len = (uint32_t)w->len;

    le32_put(w->buf, len);
    le32_put(w->buf + 4, goblin__snap_block_crc(len, w->index,
                                               w->buf + SNAP_BLOCK_HDR));
    w->chain = goblin__crc32c(w->chain, w->buf, SNAP_BLOCK_HDR);
    write_all(w, w->buf, SNAP_BLOCK_HDR + len);
    w->payload += len;
    w->index++;
    w->len = 0;
}

static void put(struct wr *w, const void *p, size_t n)
{
    const uint8_t *b = p;

    while (n > 0) {
        size_t room = SNAP_BLOCK_SIZE - w->len;

        if (room == 0) {
            flush_block(w);
            room = SNAP_BLOCK_SIZE;
        }
        if (room > n)
            room = n;
        memcpy(w->buf + SNAP_BLOCK_HDR + w->len, b, room);
        w->len += room;
        b += room;
        n -= room;
    }
}

/* Room for at least n (<= 32) more bytes in the current block, returning
 * where they go; the caller then adds what it wrote to w->len. */
static inline uint8_t *reserve(struct wr *w, size_t n)
{
    if (SNAP_BLOCK_SIZE - w->len < n)
        flush_block(w);
    return w->buf + SNAP_BLOCK_HDR + w->len;
}

static inline void put_varint(struct wr *w, uint64_t v)
{
    uint8_t *p = reserve(w, VARINT_MAX);

    w->len += varint_put(p, v);
}

static inline void put_bytes(struct wr *w, const void *p, size_t n)
{
    if (n <= SNAP_BLOCK_SIZE - w->len) {
        memcpy(w->buf + SNAP_BLOCK_HDR + w->len, p, n);
        w->len += n;
        return;
    }
    put(w, p, n);
}

/* ---- collections ---- */

struct sizer {
    uint64_t bytes;
};

static int hash_size(void *ctx, struct goblin_slice f, struct goblin_slice v)
{
    struct sizer *s = ctx;

    s->bytes += varint_size(f.len) + f.len + varint_size(v.len) + v.len;
    return 0;
}

static int hash_pair(void *ctx, struct goblin_slice f, struct goblin_slice v)
{
    struct wr *w = ctx;

    put_varint(w, f.len);
    put_bytes(w, f.ptr, f.len);
    put_varint(w, v.len);
    put_bytes(w, v.ptr, v.len);
    return 0;
}

/* A sorted set goes out in chunks (format.h), gathered in w->zbuf during
 * one walk: its pairs are read once, not once to size it and once to
 * write it, which matters when their records are scattered. */
static void zchunk_flush(struct wr *w)
{
    if (w->zpairs == 0)
        return;
    put_varint(w, w->zpairs);
    put_varint(w, w->zlen);
    put_bytes(w, w->zbuf, w->zlen);
    w->zpairs = 0;
    w->zlen = 0;
}

static int zset_pair(void *ctx, struct goblin_slice m, double score)
{
    struct wr *w = ctx;
    size_t size = 8 + varint_size(m.len) + m.len;
    uint8_t *p = w->zbuf + w->zlen;
    uint64_t bits;

    memcpy(&bits, &score, 8);
    if (SNAP_ZCHUNK - w->zlen < size)
        zchunk_flush(w);
    if (size > SNAP_ZCHUNK) { /* a huge member: a chunk of its own */
        uint8_t h[8 + VARINT_MAX];

        put_varint(w, 1);
        put_varint(w, size);
        le64_put(h, bits);
        put_bytes(w, h, 8 + varint_put(h + 8, m.len));
        put_bytes(w, m.ptr, m.len);
        return 0;
    }
    p = w->zbuf + w->zlen;
    le64_put(p, bits);
    p += 8 + varint_put(p + 8, m.len);
    if (m.len != 0)
        memcpy(p, m.ptr, m.len);
    w->zlen += size;
    w->zpairs++;
    return 0;
}

/* A hash with field deadlines (TAG_HASH_TTL): each pair then its
 * deadline + 1. Fields already due are written too (the key count is
 * fixed before the walk); the loader drops them. */
static int hash_ttl_size(void *ctx, struct goblin_slice f,
                         struct goblin_slice v, int64_t when)
{
    struct sizer *s = ctx;

    s->bytes += varint_size(f.len) + f.len + varint_size(v.len) + v.len +
                varint_size((uint64_t)(when + 1));
    return 0;
}

static int hash_ttl_pair(void *ctx, struct goblin_slice f,
                         struct goblin_slice v, int64_t when)
{
    struct wr *w = ctx;

    hash_pair(w, f, v);
    put_varint(w, (uint64_t)(when + 1));
    return 0;
}

static void put_hash(struct wr *w, const void *obj)
{
    struct sizer s = {0};

    put_varint(w, goblin__hash_obj_len(obj));
    if (goblin__hash_obj_has_ttl(obj)) {
        goblin__hash_obj_foreach_ttl(obj, INT64_MIN, hash_ttl_size, &s);
        put_varint(w, s.bytes);
        goblin__hash_obj_foreach_ttl(obj, INT64_MIN, hash_ttl_pair, w);
        return;
    }
    goblin__hash_obj_foreach(obj, hash_size, &s);
    put_varint(w, s.bytes);
    goblin__hash_obj_foreach(obj, hash_pair, w);
}

static int set_size(void *ctx, const struct goblin__set_elem *e)
{
    struct sizer *s = ctx;

    s->bytes += varint_size(e->s.len) + e->s.len;
    return 0;
}

static int set_member(void *ctx, const struct goblin__set_elem *e)
{
    struct wr *w = ctx;

    put_varint(w, e->s.len);
    put_bytes(w, e->s.ptr, e->s.len);
    return 0;
}

static void put_set(struct wr *w, const void *obj)
{
    struct sizer s = {0};

    put_varint(w, goblin__set_obj_card(obj));
    goblin__set_obj_foreach(obj, set_size, &s);
    put_varint(w, s.bytes);
    goblin__set_obj_foreach(obj, set_member, w);
}

static void put_zset(struct wr *w, const void *obj)
{
    put_varint(w, goblin__zset_obj_card(obj));
    goblin__zset_obj_foreach(obj, zset_pair, w);
    zchunk_flush(w);
}

/* A list goes out in chunks as a sorted set does, through the same
 * buffer: elements of (varint length, bytes). */
static void list_elem(struct wr *w, struct goblin_slice e)
{
    size_t size = varint_size(e.len) + e.len;
    uint8_t *p;

    if (SNAP_ZCHUNK - w->zlen < size)
        zchunk_flush(w);
    if (size > SNAP_ZCHUNK) { /* a huge element: a chunk of its own */
        put_varint(w, 1);
        put_varint(w, size);
        put_varint(w, e.len);
        put_bytes(w, e.ptr, e.len);
        return;
    }
    p = w->zbuf + w->zlen;
    p += varint_put(p, e.len);
    if (e.len != 0)
        memcpy(p, e.ptr, e.len);
    w->zlen += size;
    w->zpairs++;
}

static void put_list(struct wr *w, const void *obj)
{
    struct goblin__list_iter it;
    struct goblin_slice e;

    put_varint(w, goblin__list_obj_len(obj));
    goblin__list_iter_init(&it, obj, 0, false);
    while (goblin__list_iter_next(&it, &e))
        list_elem(w, e);
    zchunk_flush(w);
}

/* ---- records ---- */

static void put_record(struct wr *w, const uint8_t *rec, int64_t deadline,
                       struct goblin_snapshot_result *res)
{
    enum goblin_type type = goblin__rec_type(rec);
    struct goblin__rec r;
    uint8_t tag = type_tag(type), *p;

    if (type == GOBLIN_TYPE_STRING)
        tag |= (uint8_t)(goblin__rec_str_enc(rec) << TAG_ENC_SHIFT);
    if (type == GOBLIN_TYPE_HASH &&
        goblin__hash_obj_has_ttl(goblin__snap_rec_obj(rec)))
        tag |= TAG_HASH_TTL;
    if (deadline >= 0)
        tag |= TAG_DEADLINE;
    goblin__rec_parse(rec, &r);
    p = reserve(w, 1 + 8);
    p[0] = tag;
    w->len++;
    if (deadline >= 0) {
        le64_put(p + 1, (uint64_t)deadline);
        w->len += 8;
    }
    put_varint(w, r.klen);
    put_bytes(w, r.key, r.klen);
    if (type == GOBLIN_TYPE_STRING) {
        struct goblin_slice v = goblin__rec_str(rec);

        put_varint(w, v.len);
        put_bytes(w, v.ptr, v.len);
        res->strings++;
    } else if (type == GOBLIN_TYPE_HASH) {
        put_hash(w, goblin__snap_rec_obj(rec));
        res->hashes++;
    } else if (type == GOBLIN_TYPE_LIST) {
        put_list(w, goblin__snap_rec_obj(rec));
    } else if (type == GOBLIN_TYPE_SET) {
        put_set(w, goblin__snap_rec_obj(rec));
    } else {
        put_zset(w, goblin__snap_rec_obj(rec));
        res->zsets++;
    }
    res->keys++;
    res->expires += deadline >= 0;
}

/* Keys with a deadline already passed at now, which the walk leaves out. */
static uint64_t count_expired(const goblin_store *st, int64_t now)
{
    uint64_t n = 0;

    for (size_t pos = 0; pos < st->ks.exp_count; pos++)
        n += now > goblin__exp_when(st, pos);
    return n;
}

static void put_header(struct wr *w, int64_t now, uint64_t keys,
                       uint64_t expires, uint64_t functions)
{
    uint8_t h[SNAP_HEADER_SIZE] = {0};

    memcpy(h + SH_MAGIC, SNAP_MAGIC, 8);
    le32_put(h + SH_VERSION, GOBLIN_SNAPSHOT_VERSION);
    le32_put(h + SH_SIZE, SNAP_HEADER_SIZE);
    le64_put(h + SH_CREATED, (uint64_t)now);
    le64_put(h + SH_KEYS, keys);
    le64_put(h + SH_EXPIRES, expires);
    le32_put(h + SH_BLOCK, SNAP_BLOCK_SIZE);
    le64_put(h + SH_FUNCTIONS, functions);
    le32_put(h + SH_CRC, goblin__crc32c(0, h, SH_CRC));
    w->chain = goblin__crc32c(0, h, SNAP_HEADER_SIZE);
    write_all(w, h, SNAP_HEADER_SIZE);
}

static void put_trailer(struct wr *w, uint64_t keys)
{
    uint8_t t[SNAP_TRAILER_SIZE] = {0};
    uint32_t blocks;

    if (w->len > 0)
        flush_block(w);       /* the last data block */
    blocks = w->index;
    flush_block(w);           /* empty: the end marker */
    memcpy(t + ST_MAGIC, SNAP_END_MAGIC, 8);
    le64_put(t + ST_KEYS, keys);
    le64_put(t + ST_PAYLOAD, w->payload);
    le32_put(t + ST_BLOCKS, blocks);
    w->chain = goblin__crc32c(w->chain, t, ST_CRC);
    le32_put(t + ST_CRC, w->chain);
    write_all(w, t, SNAP_TRAILER_SIZE);
}

/* The records of one store; a database other than 0 that holds a live
 * key starts with its marker (tag 0, varint database number). */
static void put_db(struct wr *w, const goblin_store *st, size_t db,
                   int64_t now, uint64_t live,
                   struct goblin_snapshot_result *res)
{
    if (db > 0 && live > 0) {
        *reserve(w, 1) = SNAP_TAG_DB;
        w->len++;
        put_varint(w, db);
    }
    for (size_t id = 0; id < st->ks.count && w->err == 0; id++) {
        int64_t deadline = goblin__key_deadline(st, (uint32_t)id);

        if (deadline >= 0 && now > deadline)
            continue;
        put_record(w, goblin__key_rec(st, (uint32_t)id), deadline, res);
    }
}

/* The function libraries, before any key: tag, varint length, code. */
static void put_functions(struct wr *w, const struct goblin__fnlibs *fns)
{
    for (size_t i = 0; fns != NULL && i < fns->n && w->err == 0; i++) {
        *reserve(w, 1) = SNAP_TAG_FUNCTION;
        w->len++;
        put_varint(w, fns->codes[i].len);
        put_bytes(w, fns->codes[i].ptr, fns->codes[i].len);
    }
}

static int save_fd(goblin_store *const *dbs, size_t ndbs, int fd,
                   const struct goblin__fnlibs *fns,
                   struct goblin_snapshot_result *res)
{
    goblin_store *st = dbs[0];
    struct wr w = {st, fd, NULL, NULL, 0, 0, 0, 0, 0, 0, 0, 0};
    int64_t now = goblin__now_ms(st);
    uint64_t expired = 0, keys = 0, expires = 0;

    for (size_t i = 0; i < ndbs; i++) {
        uint64_t e;

        if (dbs[i] == NULL)
            continue;
        e = count_expired(dbs[i], now);
        expired += e;
        keys += dbs[i]->ks.count - e;
        expires += dbs[i]->ks.exp_count - e;
    }

    w.buf = goblin__alloc(st, WR_BUF_SIZE + SNAP_ZCHUNK);
    if (w.buf == NULL)
        return goblin__snap_fail(res, GOBLIN_ENOMEM, 0,
                                 "out of memory for the write buffer");
    w.zbuf = w.buf + WR_BUF_SIZE;
    res->created_ms = now;
    res->expired = expired;
    put_header(&w, now, keys, expires, fns != NULL ? fns->n : 0);
    put_functions(&w, fns);
    for (size_t i = 0; i < ndbs; i++)
        if (dbs[i] != NULL)
            put_db(&w, dbs[i], i, now,
                   dbs[i]->ks.count - count_expired(dbs[i], now), res);
    put_trailer(&w, keys);
    goblin__free(st, w.buf, WR_BUF_SIZE + SNAP_ZCHUNK);
    res->bytes = w.bytes;
    if (w.err != 0)
        return goblin__snap_fail(res, w.err, w.bytes,
                                 "write failed at byte %llu: %s",
                                 (unsigned long long)w.bytes,
                                 strerror(-w.err));
    return 0;
}

int goblin_snapshot_save_fd(goblin_store *st, int fd,
                            struct goblin_snapshot_result *res)
{
    struct goblin_snapshot_result local;

    if (res == NULL)
        res = &local;
    memset(res, 0, sizeof(*res));
    res->version = GOBLIN_SNAPSHOT_VERSION;
    return save_fd(&st, 1, fd, NULL, res);
}

/* fsyncs the directory holding path, so a rename in it is durable. */
static int sync_dir(const char *path)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    size_t n = slash == NULL ? 1 : (size_t)(slash - path);
    int fd, r = 0;

    if (slash == NULL)
        memcpy(dir, ".", 2);
    else if (n == 0)
        memcpy(dir, "/", 2);
    else if (n >= sizeof(dir))
        return -ENAMETOOLONG;
    else {
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (fsync(fd) != 0 && errno != EINVAL)
        r = -errno;
    close(fd);
    return r;
}

/* Writes into the open temporary file and makes it durable. */
static int save_tmp(goblin__save_fn fn, void *ctx, int fd, const char *tmp,
                    struct goblin_snapshot_result *res)
{
    int r = fn(ctx, fd, res);

    if (r != 0)
        return r;
    if (fsync(fd) != 0) {
        r = -errno;
        return goblin__snap_fail(res, r, res->bytes, "fsync of %s: %s",
                                 tmp, strerror(-r));
    }
    return 0;
}

int goblin__save_atomic(const char *path, goblin__save_fn fn, void *ctx,
                        struct goblin_snapshot_result *res)
{
    char tmp[PATH_MAX];
    int fd, r;

    if (snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", path, (long)getpid()) >=
        (int)sizeof(tmp))
        return goblin__snap_fail(res, -ENAMETOOLONG, 0, "path too long");
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        r = -errno;
        return goblin__snap_fail(res, r, 0, "cannot create %s: %s", tmp,
                                 strerror(-r));
    }
    r = save_tmp(fn, ctx, fd, tmp, res);
    if (close(fd) != 0 && r == 0) {
        r = -errno;
        goblin__snap_fail(res, r, res->bytes, "close of %s: %s", tmp,
                          strerror(-r));
    }
    if (r == 0 && rename(tmp, path) != 0) {
        r = -errno;
        goblin__snap_fail(res, r, 0, "cannot rename %s to %s: %s", tmp,
                          path, strerror(-r));
    }
    if (r != 0) {
        unlink(tmp);
        return r;
    }
    if ((r = sync_dir(path)) != 0)
        return goblin__snap_fail(res, r, 0, "fsync of the directory of "
                                 "%s: %s", path, strerror(-r));
    return 0;
}

int goblin_snapshot_save(goblin_store *st, const char *path,
                         struct goblin_snapshot_result *res)
{
    return goblin_snapshot_save_dbs(&st, 1, path, res);
}

struct dbs_arg {
    goblin_store *const *dbs;
    size_t count;
    const struct goblin__fnlibs *fns;
};

static int save_dbs_fd(void *ctx, int fd, struct goblin_snapshot_result *res)
{
    const struct dbs_arg *a = ctx;

    return save_fd(a->dbs, a->count, fd, a->fns, res);
}

int goblin_snapshot_save_dbs(goblin_store *const *dbs, size_t count,
                             const char *path,
                             struct goblin_snapshot_result *res)
{
    return goblin__snapshot_save_dbs_fn(dbs, count, path, NULL, res);
}

int goblin__snapshot_save_dbs_fn(goblin_store *const *dbs, size_t count,
                                 const char *path,
                                 const struct goblin__fnlibs *fns,
                                 struct goblin_snapshot_result *res)
{
    struct goblin_snapshot_result local;
    struct dbs_arg a = {dbs, count, fns};

    if (res == NULL)
        res = &local;
    memset(res, 0, sizeof(*res));
    res->version = GOBLIN_SNAPSHOT_VERSION;
    if (count == 0 || dbs[0] == NULL)
        return goblin__snap_fail(res, GOBLIN_EINVAL, 0, "no database 0");
    return goblin__save_atomic(path, save_dbs_fd, &a, res);
}
