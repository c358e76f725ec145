/* rdb_load.c - importing a Redis dump.rdb into an empty store.
 *
 * The file is "REDIS" and a 4-digit version, then opcodes and key
 * records until EOF (0xFF) and, from version 5, a CRC64 of everything
 * before it. A key record is an optional deadline opcode, a type byte,
 * the key and the value. Strings, hashes, sorted sets and lists
 * (rdb_list.c) in every encoding Redis 7 writes (and older ones it still
 * reads) are loaded; a set, stream or module value stops the import with
 * GOBLIN_ESNAPTYPE naming the key and the type.
 *
 * Values are decoded into a scratch arena and built in bulk: a hash in
 * batches of BATCH pairs (into an object sized for the whole hash up
 * front), a sorted set from all its pairs once they are in order (Redis
 * writes a skiplist from the highest score down: that is reversed, and
 * any other order sorted). Repeated fields or members are refused, as
 * Redis refuses them. All or nothing: a failure empties the store again.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "goblin/keys.h"
#include "goblin/numtext.h"
#include "rdb.h"
#include "format.h"
#include "store/hash.h"

#define BATCH 1024
#define CHUNK (64 * 1024)

struct chunk {
    struct chunk *next;
    size_t size, used;
};

struct imp {
    struct goblin__rdb r;
    goblin_store *st;               /* the store keys go to now */
    goblin_store *home;             /* database 0's: the scratch memory */
    goblin_store *const *dbs;       /* the databases given (ndbs) */
    size_t ndbs;
    bool skip_db;                   /* keys of a database not given */
    struct goblin_snapshot_result *res;
    const struct goblin__fnlibs *fns; /* NULL: libraries are read past */
    unsigned flags, version;
    int64_t now;
    uint64_t db;
    struct goblin_slice key;        /* the current key, in keybuf */
    uint8_t *keybuf;
    size_t keycap;
    struct chunk *chunks;           /* scratch for fields and members */
    /* the hash being built */
    void *obj;
    size_t nfv;
    uint64_t added;
    /* the sorted set being built */
    struct goblin_zpair *zp;
    size_t zn, zcap;
    struct goblin_slice pending;    /* packed: a field or member waiting */
    bool have_pending;
    int err;                        /* from inside a packed walk */
    struct goblin_slice fv[2 * BATCH]; /* last: not cleared at start */
};

/* ---- scratch arena ---- */

static void arena_reset(struct imp *im)
{
    while (im->chunks != NULL) {
        struct chunk *c = im->chunks;

        im->chunks = c->next;
        goblin__free(im->home, c, sizeof(*c) + c->size);
    }
}

/* A stable copy of s, or {NULL, 0} without memory (im->err set). */
static struct goblin_slice arena_copy(struct imp *im, struct goblin_slice s)
{
    struct chunk *c = im->chunks;
    struct goblin_slice out = {NULL, 0};

    if (c == NULL || c->size - c->used < s.len) {
        size_t size = s.len > CHUNK ? s.len : CHUNK;

        c = goblin__alloc(im->home, sizeof(*c) + size);
        if (c == NULL) {
            im->err = GOBLIN_ENOMEM;
            return out;
        }
        c->size = size;
        c->used = 0;
        c->next = im->chunks;
        im->chunks = c;
    }
    out.ptr = (uint8_t *)(c + 1) + c->used;
    out.len = s.len;
    if (s.len != 0)
        memcpy((uint8_t *)(c + 1) + c->used, s.ptr, s.len);
    c->used += s.len;
    return out;
}

/* ---- failures ---- */

static int key_fail(struct imp *im, int code, uint64_t off, const char *what)
{
    char kt[GOBLIN__KEYTEXT_CAP];

    return goblin__snap_fail(im->res, code, off, "key '%s' at byte %" PRIu64
                             ": %s", goblin__snap_keytext(kt, sizeof(kt),
                                                          im->key.ptr,
                                                          im->key.len),
                             off, what);
}

static const char *type_name(unsigned t)
{
    switch (t) {
    case 6: case 7: return "a module value (RDB type 6/7)";
    case 15: case 19: case 21: return "a stream (RDB type 15/19/21)";
    case 22: case 23: case 24: case 25:
        return "a hash with field expiry (RDB type 22-25)";
    default: return NULL;
    }
}

/* ---- hashes ---- */

static int hash_flush(struct imp *im)
{
    int r;

    if (im->nfv == 0)
        return 0;
    r = goblin__snap_hash_set(im->st, &im->obj, im->fv, im->nfv);
    im->nfv = 0;
    arena_reset(im);
    if (r < 0)
        return r;
    im->added += (uint64_t)r;
    return 0;
}

static int hash_add(struct imp *im, struct goblin_slice f,
                    struct goblin_slice v)
{
    im->fv[2 * im->nfv] = f;
    im->fv[2 * im->nfv + 1] = arena_copy(im, v);
    if (im->err != 0)
        return im->err;
    if (++im->nfv == BATCH)
        return hash_flush(im);
    return 0;
}

static int hash_begin(struct imp *im, uint64_t n)
{
    im->obj = NULL;
    im->nfv = 0;
    im->added = 0;
    im->have_pending = false;
    if (n > GOBLIN__HASH_COMPACT_MAX_ENTRIES)
        return goblin__snap_hash_full(im->st, (size_t)n, &im->obj);
    return 0;
}

static void hash_drop(struct imp *im)
{
    if (im->obj != NULL)
        goblin__hash_free(im->st, im->obj);
    im->obj = NULL;
    im->nfv = 0;
    arena_reset(im);
}

/* A hash of n pairs, each two RDB strings. */
static int hash_plain(struct imp *im, uint64_t n)
{
    struct goblin_slice f, v;
    int rc = hash_begin(im, n);

    for (uint64_t i = 0; rc == 0 && i < n; i++) {
        rc = goblin__rdb_string(&im->r, &f);
        if (rc == 0) {
            f = arena_copy(im, f);
            rc = im->err;
        }
        if (rc == 0)
            rc = goblin__rdb_string(&im->r, &v);
        if (rc == 0)
            rc = hash_add(im, f, v);
    }
    return rc == 0 ? hash_flush(im) : rc;
}

static int hash_elem(void *ctx, struct goblin_slice e)
{
    struct imp *im = ctx;

    if (!im->have_pending) {
        im->pending = arena_copy(im, e);
        im->have_pending = true;
        return im->err;
    }
    im->have_pending = false;
    return hash_add(im, im->pending, e);
}

/* ---- sorted sets ---- */

static int zset_begin(struct imp *im, uint64_t n)
{
    size_t bytes = goblin__mul((size_t)n, sizeof(*im->zp));

    im->zn = 0;
    im->have_pending = false;
    im->zp = goblin__alloc(im->home, bytes);
    if (im->zp == NULL)
        return GOBLIN_ENOMEM;
    im->zcap = (size_t)n;
    return 0;
}

static void zset_drop(struct imp *im)
{
    goblin__free(im->home, im->zp, im->zcap * sizeof(*im->zp));
    im->zp = NULL;
    im->zcap = im->zn = 0;
    arena_reset(im);
}

static int zcmp(const void *a, const void *b)
{
    const struct goblin_zpair *x = a, *y = b;
    size_t n = x->member.len < y->member.len ? x->member.len : y->member.len;
    int c;

    if (x->score != y->score)
        return x->score < y->score ? -1 : 1;
    c = n == 0 ? 0 : memcmp(x->member.ptr, y->member.ptr, n);
    if (c != 0)
        return c;
    return x->member.len < y->member.len ? -1 : x->member.len > y->member.len;
}

/* Puts the pairs in increasing order: as they are, reversed (a skiplist
 * is written from the top), or sorted. */
static void zset_order(struct imp *im)
{
    struct goblin_zpair *p = im->zp;
    size_t n = im->zn, up = 1, down = 1;

    for (size_t i = 1; i < n && (up || down); i++) {
        int c = zcmp(&p[i - 1], &p[i]);

        up &= c < 0;
        down &= c > 0;
    }
    if (up)
        return;
    if (down) {
        for (size_t i = 0; i < n / 2; i++) {
            struct goblin_zpair t = p[i];

            p[i] = p[n - 1 - i];
            p[n - 1 - i] = t;
        }
        return;
    }
    qsort(p, n, sizeof(*p), zcmp);
}

static int zset_plain(struct imp *im, uint64_t n, bool binary)
{
    struct goblin_slice m;
    double d;
    int rc = zset_begin(im, n);

    for (uint64_t i = 0; rc == 0 && i < n; i++) {
        rc = goblin__rdb_string(&im->r, &m);
        if (rc == 0) {
            m = arena_copy(im, m);
            rc = im->err;
        }
        if (rc == 0)
            rc = binary ? goblin__rdb_double_bin(&im->r, &d)
                        : goblin__rdb_double_text(&im->r, &d);
        if (rc == 0) {
            im->zp[im->zn].member = m;
            im->zp[im->zn++].score = d;
        }
    }
    return rc;
}

static int zset_elem(void *ctx, struct goblin_slice e)
{
    struct imp *im = ctx;
    double d;

    if (!im->have_pending) {
        im->pending = arena_copy(im, e);
        im->have_pending = true;
        return im->err;
    }
    im->have_pending = false;
    if (goblin_double_parse(e.ptr, e.len, &d) != 0)
        return GOBLIN_ESNAPFORMAT;
    if (im->zn == im->zcap)
        return GOBLIN_ESNAPFORMAT;
    im->zp[im->zn].member = im->pending;
    im->zp[im->zn++].score = d;
    return 0;
}

/* ---- values ---- */

static bool is_list(unsigned t)
{
    return t == RDB_TYPE_LIST || t == RDB_TYPE_LIST_ZIPLIST ||
           t == RDB_TYPE_LIST_QUICKLIST || t == RDB_TYPE_LIST_QUICKLIST_2;
}

static bool is_hash(unsigned t)
{
    return t == RDB_TYPE_HASH || t == RDB_TYPE_HASH_ZIPMAP ||
           t == RDB_TYPE_HASH_ZIPLIST || t == RDB_TYPE_HASH_LISTPACK;
}

static bool is_set(unsigned t)
{
    return t == RDB_TYPE_SET || t == RDB_TYPE_SET_INTSET ||
           t == RDB_TYPE_SET_LISTPACK;
}

/* A hash or sorted set in a packed blob (ziplist, listpack, zipmap). */
static int packed(struct imp *im, unsigned t, uint64_t *pairs)
{
    int64_t (*walk)(const uint8_t *, size_t, goblin__rdb_elem_fn, void *) =
        t == RDB_TYPE_HASH_ZIPMAP ? goblin__rdb_zipmap
        : t == RDB_TYPE_HASH_ZIPLIST || t == RDB_TYPE_ZSET_ZIPLIST
            ? goblin__rdb_ziplist : goblin__rdb_listpack;
    struct goblin_slice blob;
    int64_t n;
    int rc = goblin__rdb_string(&im->r, &blob);

    if (rc != 0)
        return rc;
    n = walk(blob.ptr, blob.len, NULL, NULL);
    if (n < 0 || n % 2 != 0)
        return GOBLIN_ESNAPFORMAT;
    *pairs = (uint64_t)n / 2;
    if (n == 0)
        return 0;
    rc = is_hash(t) ? hash_begin(im, *pairs) : zset_begin(im, *pairs);
    if (rc == 0)
        rc = (int)walk(blob.ptr, blob.len, is_hash(t) ? hash_elem : zset_elem,
                       im);
    if (rc >= 0 && is_hash(t))
        rc = hash_flush(im);
    return rc < 0 ? rc : 0;
}

/* Reads the value of type t into im (a hash into im->obj, a sorted set
 * into im->zp); *pairs is its size, 0 for an empty one. */
static int read_collection(struct imp *im, unsigned t, uint64_t *pairs)
{
    uint64_t off = goblin__rdb_off(&im->r);
    unsigned min = t == RDB_TYPE_ZSET_2 ? 9 : 2;
    int rc;

    if (t != RDB_TYPE_HASH && t != RDB_TYPE_ZSET && t != RDB_TYPE_ZSET_2)
        return packed(im, t, pairs);
    if ((rc = goblin__rdb_len(&im->r, pairs, NULL)) != 0)
        return rc;
    if (*pairs > goblin__rdb_left(&im->r) / min || *pairs >= UINT32_MAX)
        return goblin__rdb_fail(&im->r, GOBLIN_ESNAPFORMAT, off,
                                "element count larger than the file");
    if (*pairs == 0)
        return 0;
    if (t == RDB_TYPE_HASH)
        return hash_plain(im, *pairs);
    return zset_plain(im, *pairs, t == RDB_TYPE_ZSET_2);
}

/* Puts the collection just read under the key (or drops it: skip). */
static int store_collection(struct imp *im, unsigned t, uint64_t pairs,
                            int64_t deadline, bool skip)
{
    void *obj = NULL;
    int rc = 0;

    if (is_hash(t)) {
        if (im->added != pairs)
            rc = GOBLIN_ESNAPFORMAT; /* a field given twice */
        if (rc != 0 || skip) {
            hash_drop(im);
            return rc;
        }
        obj = im->obj;
        im->obj = NULL;
        return goblin__snap_put_obj(im->st, im->key, GOBLIN_TYPE_HASH, obj,
                                    deadline);
    }
    if (im->zn != pairs)
        rc = GOBLIN_ESNAPFORMAT;
    if (rc == 0 && !skip) {
        zset_order(im);
        rc = goblin__snap_zset_build(im->st, im->zp, im->zn, &obj);
    }
    zset_drop(im);
    if (rc != 0 || skip)
        return rc;
    return goblin__snap_put_obj(im->st, im->key, GOBLIN_TYPE_ZSET, obj,
                                deadline);
}

static int read_key(struct imp *im)
{
    struct goblin_slice k;
    int rc = goblin__rdb_string(&im->r, &k);

    if (rc != 0)
        return rc;
    if (k.len > im->keycap) {
        uint8_t *b = goblin__alloc(im->home, k.len);

        if (b == NULL)
            return goblin__rdb_fail(&im->r, GOBLIN_ENOMEM,
                                    goblin__rdb_off(&im->r), "out of memory");
        goblin__free(im->home, im->keybuf, im->keycap);
        im->keybuf = b;
        im->keycap = k.len;
    }
    if (k.len != 0)
        memcpy(im->keybuf, k.ptr, k.len);
    im->key.ptr = im->keybuf;
    im->key.len = k.len;
    return 0;
}

static int key_error(struct imp *im, int rc, uint64_t off)
{
    if (im->res->message[0] != '\0')
        return rc; /* already reported where it was found */
    return key_fail(im, rc, off, rc == GOBLIN_ESNAPFORMAT
                    ? "malformed or repeated content" : goblin_strerror(rc));
}

static void count_key(struct imp *im, unsigned t, int64_t deadline)
{
    struct goblin_snapshot_result *res = im->res;

    res->keys++;
    res->strings += t == RDB_TYPE_STRING;
    res->hashes += is_hash(t);
    res->zsets += t != RDB_TYPE_STRING && !is_hash(t) && !is_list(t) &&
                  !is_set(t);
    res->expires += deadline >= 0;
}

/* One key record of type t. */
static int load_key(struct imp *im, unsigned t, int64_t deadline)
{
    uint64_t off = goblin__rdb_off(&im->r) - 1, pairs = 0;
    bool expired = deadline >= 0 && im->now > deadline;
    bool skip = expired || im->skip_db;
    struct goblin_slice v;
    int rc = read_key(im);

    im->err = 0;
    if (rc != 0)
        return rc;
    if (type_name(t) != NULL) {
        char what[128];

        snprintf(what, sizeof(what), "holds %s, a type Goblin does not "
                 "store", type_name(t));
        return key_fail(im, GOBLIN_ESNAPTYPE, off, what);
    }
    if (t == RDB_TYPE_STRING) {
        if ((rc = goblin__rdb_string(&im->r, &v)) != 0)
            return rc;
        if (!skip && (rc = goblin__snap_put_str(im->st, im->key, v, -1,
                                                deadline)) != 0)
            return key_error(im, rc, off);
    } else if (is_list(t)) {
        bool stored;

        rc = goblin__rdb_list(&im->r, im->st, t, im->key, deadline, skip,
                              &stored);
        if (rc != 0)
            return key_error(im, rc, off);
        if (!stored && !skip)
            return 0; /* an empty list: Redis skips it too */
    } else if (is_set(t)) {
        void *obj;

        rc = goblin__rdb_set(&im->r, skip ? NULL : im->st, t, &obj, &pairs);
        if (rc == 0 && pairs == 0)
            return 0; /* an empty collection: Redis skips it too */
        if (rc == 0 && !skip &&
            (rc = goblin__snap_put_obj(im->st, im->key, GOBLIN_TYPE_SET, obj,
                                       deadline)) != 0)
            return key_error(im, rc, off);
        if (rc != 0)
            return key_error(im, rc, off);
    } else if (is_hash(t) || t == RDB_TYPE_ZSET || t == RDB_TYPE_ZSET_2 ||
               t == RDB_TYPE_ZSET_ZIPLIST || t == RDB_TYPE_ZSET_LISTPACK) {
        rc = read_collection(im, t, &pairs);
        if (rc == 0 && pairs == 0)
            return 0; /* an empty collection: Redis skips it too */
        if (rc == 0)
            rc = store_collection(im, t, pairs, deadline, skip);
        if (rc != 0) {
            hash_drop(im);
            zset_drop(im);
            return key_error(im, rc, off);
        }
    } else {
        return key_fail(im, GOBLIN_ESNAPFORMAT, off, "unknown RDB type");
    }
    im->res->expired += expired && !im->skip_db;
    if (!skip)
        count_key(im, t, deadline);
    return 0;
}

/* ---- the file ---- */

static int read_header(struct imp *im)
{
    const uint8_t *p = NULL;
    size_t n = goblin__rdb_left(&im->r) < 9 ? (size_t)goblin__rdb_left(&im->r)
                                              : 9;
    int rc = goblin__rdb_take(&im->r, n, &p);

    if (rc != 0)
        return rc;
    if (memcmp(p, "REDIS", n < 5 ? n : 5) != 0)
        return goblin__rdb_fail(&im->r, GOBLIN_ESNAPMAGIC, 0, "not an RDB "
                                "file: no REDIS magic");
    if (n < 9)
        return goblin__snap_fail(im->res, GOBLIN_ESNAPTRUNC, n, "file is "
                                 "truncated: it ends at byte %zu inside the "
                                 "header", n);
    im->version = 0;
    for (int i = 5; i < 9; i++) {
        if (p[i] < '0' || p[i] > '9')
            return goblin__rdb_fail(&im->r, GOBLIN_ESNAPMAGIC, 5,
                                    "bad RDB version digits");
        im->version = im->version * 10 + (unsigned)(p[i] - '0');
    }
    im->res->version = im->version;
    if (im->version < 1 || im->version > RDB_VERSION_MAX)
        return goblin__snap_fail(im->res, GOBLIN_ESNAPVERSION, 5, "RDB version"
                                 " %u (at byte 5) is not supported: this "
                                 "library reads versions 1 to %d",
                                 im->version, RDB_VERSION_MAX);
    return 0;
}

/* Skips n RDB strings (aux fields, function libraries). */
static int skip_strings(struct imp *im, int n)
{
    struct goblin_slice s;
    int rc = 0;

    while (rc == 0 && n-- > 0)
        rc = goblin__rdb_string(&im->r, &s);
    return rc;
}

/* RDB_OPCODE_FUNCTION2: a library's whole code, for fns (if any). */
static int function_lib(struct imp *im, uint64_t off)
{
    struct goblin_slice code;
    char err[512];
    int rc = goblin__rdb_string(&im->r, &code);

    if (rc != 0 || im->fns == NULL || im->fns->add == NULL)
        return rc;
    err[0] = '\0';
    if ((rc = im->fns->add(im->fns->ctx, code, err, sizeof(err))) != 0)
        return goblin__rdb_fail(&im->r, rc < 0 ? rc : GOBLIN_ESNAPFORMAT,
                                off, err[0] != '\0' ? err : "function "
                                "library not loaded");
    return 0;
}

/* SELECTDB: the keys that follow go to that database's store, or are
 * left out (GOBLIN_RDB_SKIP_OTHER_DBS) when it was not given. A skipped
 * key's object is still built (in database 0's store) and dropped. */
static int select_db(struct imp *im, uint64_t off)
{
    int rc = goblin__rdb_len(&im->r, &im->db, NULL);

    if (rc != 0)
        return rc;
    im->skip_db = false;
    if (im->db < im->ndbs && im->dbs[im->db] != NULL) {
        im->st = im->dbs[im->db];
        goblin__write_begin(im->st);
        return 0;
    }
    im->st = im->home;
    im->skip_db = true;
    if (im->flags & GOBLIN_RDB_SKIP_OTHER_DBS)
        return 0;
    return goblin__snap_fail(im->res, GOBLIN_ESNAPDB, off, "database %"
                             PRIu64 " selected at byte %" PRIu64 ": not "
                             "loaded (GOBLIN_RDB_SKIP_OTHER_DBS leaves it "
                             "out)", im->db, off);
}

/* An opcode other than a key's type. Returns 0, 1 at EOF, or an error. */
static int opcode(struct imp *im, unsigned op, uint64_t off,
                  int64_t *deadline)
{
    const uint8_t *p = NULL;
    uint64_t a, b;
    uint8_t c;
    int rc;

    switch (op) {
    case RDB_OPCODE_EXPIRETIME_MS:
    case RDB_OPCODE_EXPIRETIME:
        if ((rc = goblin__rdb_take(&im->r, op == RDB_OPCODE_EXPIRETIME ? 4
                                                                        : 8,
                                   &p)) != 0)
            return rc;
        if (op == RDB_OPCODE_EXPIRETIME)
            *deadline = (int64_t)((uint64_t)p[0] | (uint64_t)p[1] << 8 |
                                  (uint64_t)p[2] << 16 |
                                  (uint64_t)p[3] << 24) * 1000;
        else
            *deadline = (int64_t)le64_get(p);
        if (*deadline < 0)
            *deadline = 0; /* before the epoch: long expired */
        return 0;
    case RDB_OPCODE_SELECTDB: return select_db(im, off);
    case RDB_OPCODE_RESIZEDB:
        rc = goblin__rdb_len(&im->r, &a, NULL);
        return rc != 0 ? rc : goblin__rdb_len(&im->r, &b, NULL);
    case RDB_OPCODE_AUX: return skip_strings(im, 2);
    case RDB_OPCODE_IDLE: return goblin__rdb_len(&im->r, &a, NULL);
    case RDB_OPCODE_FREQ: return goblin__rdb_byte(&im->r, &c);
    case RDB_OPCODE_FUNCTION2: return function_lib(im, off);
    case RDB_OPCODE_EOF: return 1;
    case RDB_OPCODE_FUNCTION_PRE_GA:
    case RDB_OPCODE_MODULE_AUX:
        return goblin__rdb_fail(&im->r, GOBLIN_ESNAPTYPE, off, op ==
                                RDB_OPCODE_MODULE_AUX ? "module data (not "
                                "supported)" : "Redis 7.0 RC functions (not "
                                "supported)");
    default:
        return goblin__rdb_fail(&im->r, GOBLIN_ESNAPFORMAT, off,
                                "unknown RDB opcode");
    }
}

static int import_all(struct imp *im)
{
    int64_t deadline = -1;
    int rc = read_header(im);

    while (rc == 0) {
        uint64_t off = goblin__rdb_off(&im->r);
        uint8_t t;

        if ((rc = goblin__rdb_byte(&im->r, &t)) != 0)
            break;
        if (t >= RDB_OPCODE_FUNCTION2 ||
            (t < RDB_OPCODE_FUNCTION2 && t > 30)) {
            rc = opcode(im, t, off, &deadline);
            continue;
        }
        rc = load_key(im, t, deadline);
        deadline = -1;
    }
    if (rc == 1)
        rc = goblin__rdb_finish(&im->r, im->version);
    im->res->bytes = goblin__rdb_off(&im->r);
    return rc;
}

static int import_src(goblin_store *const *dbs, size_t ndbs,
                      struct goblin__src *src, unsigned flags,
                      const struct goblin__fnlibs *fns,
                      struct goblin_snapshot_result *res)
{
    goblin_store *st = ndbs > 0 ? dbs[0] : NULL;
    struct imp *im;
    int rc;

    if (st == NULL)
        return goblin__snap_fail(res, GOBLIN_EINVAL, 0, "no database 0");
    for (size_t i = 0; i < ndbs; i++)
        if (dbs[i] != NULL && goblin_key_count(dbs[i]) != 0)
            return goblin__snap_fail(res, GOBLIN_EINVAL, 0, "the store is "
                                     "not empty");
    goblin__write_begin(st);
    if ((im = goblin__alloc(st, sizeof(*im))) == NULL)
        return goblin__snap_fail(res, GOBLIN_ENOMEM, 0, "out of memory");
    memset(im, 0, sizeof(*im) - sizeof(im->fv));
    im->r.mem.st = st;
    im->r.src = src;
    im->r.res = res;
    im->st = st;
    im->home = st;
    im->dbs = dbs;
    im->ndbs = ndbs;
    im->res = res;
    im->flags = flags;
    im->fns = fns;
    im->now = goblin__now_ms(st);
    rc = goblin__rdb_init(&im->r);
    if (rc == 0)
        rc = import_all(im);
    arena_reset(im);
    goblin__free(st, im->keybuf, im->keycap);
    goblin__rdb_fini(&im->r);
    goblin__free(st, im, sizeof(*im));
    if (rc != 0) {
        for (size_t i = 0; i < ndbs; i++)
            if (dbs[i] != NULL)
                goblin__snap_rollback(dbs[i], res);
    }
    return rc;
}

int goblin_rdb_import(goblin_store *st, const char *path, unsigned flags,
                      struct goblin_snapshot_result *res)
{
    struct goblin_snapshot_result local;
    struct goblin__src src;
    int rc;

    res = goblin__snap_res_init(res, &local);
    if ((rc = goblin__src_open(&src, path)) != 0)
        return goblin__snap_fail(res, rc, 0, "cannot open %s: %s", path,
                                 rc == GOBLIN_EINVAL ? "not a regular file"
                                                     : strerror(-rc));
    rc = import_src(&st, 1, &src, flags, NULL, res);
    goblin__src_close(&src);
    return rc;
}

int goblin_rdb_import_dbs(goblin_store *const *dbs, size_t count,
                          const char *path, unsigned flags,
                          struct goblin_snapshot_result *res)
{
    return goblin__rdb_import_dbs_fn(dbs, count, path, flags, NULL, res);
}

int goblin__rdb_import_dbs_fn(goblin_store *const *dbs, size_t count,
                              const char *path, unsigned flags,
                              const struct goblin__fnlibs *fns,
                              struct goblin_snapshot_result *res)
{
    struct goblin_snapshot_result local;
    struct goblin__src src;
    int rc;

    res = goblin__snap_res_init(res, &local);
    if ((rc = goblin__src_open(&src, path)) != 0)
        return goblin__snap_fail(res, rc, 0, "cannot open %s: %s", path,
                                 rc == GOBLIN_EINVAL ? "not a regular file"
                                                     : strerror(-rc));
    rc = import_src(dbs, count, &src, flags, fns, res);
    goblin__src_close(&src);
    return rc;
}

int goblin_rdb_import_mem(goblin_store *st, const void *data, size_t len,
                          unsigned flags, struct goblin_snapshot_result *res)
{
    struct goblin_snapshot_result local;
    struct goblin__src src;

    res = goblin__snap_res_init(res, &local);
    goblin__src_mem(&src, data, len);
    return import_src(&st, 1, &src, flags, NULL, res);
}
