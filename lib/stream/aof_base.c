/* aof_base.c - an AOF base in command form (Redis 7.0's
 * rewriteAppendOnlyFileRio): FUNCTION LOAD for each function library
 * (rewriteFunctions), then for each database holding keys a SELECT,
 * then each key as the commands that rebuild it, collections 64 items per
 * command (AOF_REWRITE_ITEMS_PER_CMD), then PEXPIREAT for a key with a
 * deadline. A hash's live fields go out as HSET and each field deadline
 * as an HPEXPIREAT of its own (Redis 7.4's rewriteHashObject), read from
 * the object directly so that nothing expires in the child. Written into a temporary file and fsynced; runs in a forked
 * child during BGREWRITEAOF, so it reads the store and writes only the
 * file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "aof_int.h"
#include "engine/fn_libs.h"
#include "goblin/hash.h"
#include "goblin/keys.h"
#include "goblin/list.h"
#include "goblin/numtext.h"
#include "goblin/set.h"
#include "goblin/zset.h"
#include "store/hash_ttl.h"
#include "store/store.h"

#define PER_CMD 64

struct wr {
    FILE *f;
    goblin_store *st;
    struct goblin_slice key;
    const char *cmd;
    int64_t left; /* items still to write for the key */
    int64_t in_cmd; /* items left in the command being written */
    int per;        /* slices per item: 1, or 2 for pairs */
};

static void bulk(FILE *f, const void *p, size_t len)
{
    fprintf(f, "$%zu\r\n", len);
    fwrite(p, 1, len, f);
    fwrite("\r\n", 1, 2, f);
}

static void bulk_str(FILE *f, const char *s)
{
    bulk(f, s, strlen(s));
}

static void item_start(struct wr *w)
{
    if (w->in_cmd == 0) {
        w->in_cmd = w->left < PER_CMD ? w->left : PER_CMD;
        fprintf(w->f, "*%lld\r\n", (long long)(2 + w->in_cmd * w->per));
        bulk_str(w->f, w->cmd);
        bulk(w->f, w->key.ptr, w->key.len);
    }
    w->in_cmd--;
    w->left--;
}

static int one(void *ctx, struct goblin_slice m)
{
    struct wr *w = ctx;

    item_start(w);
    bulk(w->f, m.ptr, m.len);
    return 0;
}

static int pair(void *ctx, struct goblin_slice f, struct goblin_slice v)
{
    struct wr *w = ctx;

    item_start(w);
    bulk(w->f, f.ptr, f.len);
    bulk(w->f, v.ptr, v.len);
    return 0;
}

static int scored(void *ctx, struct goblin_slice m, double score)
{
    struct wr *w = ctx;
    char num[64];

    item_start(w);
    bulk(w->f, num, goblin_double_format(num, score));
    bulk(w->f, m.ptr, m.len);
    return 0;
}

static int ttl_count(void *ctx, struct goblin_slice f, struct goblin_slice v,
                     int64_t when)
{
    (void)f;
    (void)v;
    (void)when;
    ++*(int64_t *)ctx;
    return 0;
}

static int ttl_pair(void *ctx, struct goblin_slice f, struct goblin_slice v,
                    int64_t when)
{
    (void)when;
    return pair(ctx, f, v);
}

static int ttl_expire(void *ctx, struct goblin_slice f, struct goblin_slice v,
                      int64_t when)
{
    struct wr *w = ctx;
    char num[24];

    (void)v;
    if (when == -1)
        return 0;
    fwrite("*6\r\n$10\r\nHPEXPIREAT\r\n", 1, 21, w->f);
    bulk(w->f, w->key.ptr, w->key.len);
    bulk(w->f, num, goblin_int64_format(num, when));
    fwrite("$6\r\nFIELDS\r\n$1\r\n1\r\n", 1, 19, w->f);
    bulk(w->f, f.ptr, f.len);
    return 0;
}

/* A hash with field deadlines: its live fields, then their deadlines. 0,
 * or 1 when no field is left (the key is then not written). */
static int hash_with_ttl(struct wr *w, const void *obj)
{
    int64_t now = goblin__now_ms(w->st), live = 0;

    goblin__hash_obj_foreach_ttl(obj, now, ttl_count, &live);
    if (live == 0)
        return 1;
    w->cmd = "HSET", w->per = 2;
    w->left = live;
    goblin__hash_obj_foreach_ttl(obj, now, ttl_pair, w);
    goblin__hash_obj_foreach_ttl(obj, now, ttl_expire, w);
    return 0;
}

/* The object of the hash at key when it holds field deadlines, or NULL
 * (a plain lookup: no field is expired by it). */
static const void *ttl_hash(struct wr *w, struct goblin_slice key)
{
    void **slot;

    if (goblin__key_lookup(w->st, key, GOBLIN_TYPE_HASH, &slot) == 1 &&
        goblin__hash_obj_has_ttl(*slot))
        return *slot;
    return NULL;
}

static int key(void *ctx, const struct goblin_key_info *k)
{
    struct wr *w = ctx;
    const void *obj;
    char num[24];

    w->key = k->key;
    w->in_cmd = 0;
    switch (k->type) {
    case GOBLIN_TYPE_STRING:
        fwrite("*3\r\n$3\r\nSET\r\n", 1, 13, w->f);
        bulk(w->f, k->key.ptr, k->key.len);
        bulk(w->f, k->value.ptr, k->value.len);
        break;
    case GOBLIN_TYPE_LIST:
        w->cmd = "RPUSH", w->per = 1;
        w->left = goblin_list_len(w->st, k->key);
        goblin_list_range(w->st, k->key, 0, -1, one, w);
        break;
    case GOBLIN_TYPE_SET:
        w->cmd = "SADD", w->per = 1;
        w->left = goblin_set_card(w->st, k->key);
        goblin_set_foreach(w->st, k->key, one, w);
        break;
    case GOBLIN_TYPE_HASH:
        if ((obj = ttl_hash(w, k->key)) != NULL) {
            if (hash_with_ttl(w, obj) == 1)
                return 0;
            break;
        }
        w->cmd = "HSET", w->per = 2;
        w->left = goblin_hash_len(w->st, k->key);
        goblin_hash_foreach(w->st, k->key, pair, w);
        break;
    case GOBLIN_TYPE_ZSET:
        w->cmd = "ZADD", w->per = 2;
        w->left = goblin_zset_card(w->st, k->key);
        goblin_zset_combine(w->st, GOBLIN_ZSET_UNION, &k->key, 1, NULL,
                            GOBLIN_ZAGG_SUM, scored, w);
        break;
    default:
        return 0;
    }
    if (k->deadline_ms >= 0) {
        fwrite("*3\r\n$9\r\nPEXPIREAT\r\n", 1, 19, w->f);
        bulk(w->f, k->key.ptr, k->key.len);
        bulk(w->f, num, goblin_int64_format(num, k->deadline_ms));
    }
    return ferror(w->f) ? -EIO : 0;
}

/* The function libraries, as FUNCTION LOAD commands. */
static int functions(goblin_engine *eng, FILE *f)
{
    struct goblin__fnlibs fl;

    if (goblin__fnlibs_save(eng, &fl) != 0)
        return GOBLIN_ENOMEM;
    for (size_t i = 0; i < fl.n; i++) {
        fwrite("*3\r\n$8\r\nFUNCTION\r\n$4\r\nLOAD\r\n", 1, 28, f);
        bulk(f, fl.codes[i].ptr, fl.codes[i].len);
    }
    goblin__fnlibs_done(eng, &fl);
    return ferror(f) ? -EIO : 0;
}

int goblin_aof_write_base(goblin_engine *eng, const char *path)
{
    struct wr w;
    int fd, rc = 0;

    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    memset(&w, 0, sizeof(w));
    if ((w.f = fdopen(fd, "w")) == NULL) {
        close(fd);
        return -errno;
    }
    setvbuf(w.f, NULL, _IOFBF, 1 << 16);
    rc = functions(eng, w.f);
    for (int i = 0; rc == 0 && i < goblin_engine_db_count(eng); i++) {
        char num[16];

        if (!goblin__aof_db_open(eng, i, &w.st) ||
            goblin_key_count(w.st) == 0)
            continue;
        snprintf(num, sizeof(num), "%d", i);
        fwrite("*2\r\n$6\r\nSELECT\r\n", 1, 16, w.f);
        bulk_str(w.f, num);
        rc = goblin_key_foreach(w.st, key, &w);
    }
    if (fflush(w.f) != 0 || fsync(fd) != 0)
        rc = rc != 0 ? rc : -errno;
    if (fclose(w.f) != 0 && rc == 0)
        rc = -errno;
    return rc;
}
