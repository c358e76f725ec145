/* snap_load.c - loading and verifying snapshots (format.h has the
 * layout).
 *
 * Records are parsed from the block reader. A hash is taken as one view
 * of its whole body (its byte length comes first, checked against what
 * is left of the file before anything is allocated) and built in batches
 * of BATCH pairs; a sorted set's chunks are copied out of the blocks
 * (each length checked the same way) and the set is built from all its
 * pairs, in order, in one call; a list's chunks are viewed one at a time
 * and appended in batches. Counts are checked against sizes too (a
 * hash pair takes at least 2 bytes, a sorted-set pair 9), so a hostile
 * file cannot make the loader allocate more than a small multiple of its
 * own size.
 *
 * Load is all or nothing: on any failure every key loaded so far is
 * dropped and the store is empty again. Verify runs the same parser
 * without a store.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "goblin/keys.h"

#include "format.h"
#include "snap_read.h"
#include "store/hash.h"
#include "store/hash_ttl.h"
#include "store/list.h"
#include "store/set.h"
#include "store/zset.h"

#define BATCH 1024

struct ld {
    struct goblin__rd rd;
    goblin_store *st;        /* NULL when verifying */
    goblin_store *const *dbs; /* the databases loaded into (ndbs) */
    size_t ndbs;
    uint64_t db;             /* the database of the records read now */
    const struct goblin__fnlibs *fns; /* NULL: libraries are read past */
    int64_t now;
    uint8_t *key;            /* the current key, copied */
    size_t key_cap;
    struct goblin_slice fv[2 * BATCH];
    int64_t when[BATCH];     /* a batch's field deadlines (-1: none) */
};

/* Fails for the record of key k starting at off. */
static int rec_fail(struct ld *l, int code, uint64_t off,
                    struct goblin_slice k, const char *what)
{
    char kt[GOBLIN__KEYTEXT_CAP];

    return goblin__snap_fail(l->rd.res, code, off, "record at byte %" PRIu64
                             " (key '%s'): %s", off,
                             goblin__snap_keytext(kt, sizeof(kt), k.ptr,
                                                  k.len), what);
}

/* Reads a varint length into *v, at most max. */
static int rd_len(struct ld *l, uint64_t max, uint64_t *v)
{
    uint64_t off = goblin__rd_off(&l->rd);
    int rc = goblin__rd_varint(&l->rd, v);

    if (rc == 0 && *v > max)
        return goblin__snap_fail(l->rd.res, GOBLIN_ESNAPFORMAT, off,
                                 "length %" PRIu64 " at byte %" PRIu64
                                 " is too large", *v, off);
    return rc;
}

static int read_key(struct ld *l, struct goblin_slice *k)
{
    uint64_t len;
    int rc = rd_len(l, SNAP_STR_MAX, &len);

    if (rc != 0)
        return rc;
    if (len > l->key_cap) {
        uint8_t *n = goblin__mem_alloc(&l->rd.mem, len);

        if (n == NULL)
            return goblin__snap_fail(l->rd.res, GOBLIN_ENOMEM,
                                     goblin__rd_off(&l->rd),
                                     "out of memory for a key");
        goblin__mem_free(&l->rd.mem, l->key, l->key_cap);
        l->key = n;
        l->key_cap = len;
    }
    if ((rc = goblin__rd_copy(&l->rd, l->key, len)) != 0)
        return rc;
    k->ptr = l->key;
    k->len = len;
    return 0;
}

/* Parses a varint from the body b[*i..end), bounded by end. */
static bool body_varint(const uint8_t *b, size_t end, size_t *i,
                        uint64_t *v)
{
    uint64_t x = 0;

    for (unsigned k = 0; k < VARINT_MAX && *i < end; k++) {
        uint8_t c = b[(*i)++];

        x |= (uint64_t)(c & 0x7F) << (7 * k);
        if (!(c & 0x80)) {
            *v = x;
            return k < VARINT_MAX - 1 || c <= 1;
        }
    }
    return false;
}

/* The next length-prefixed string of the body. */
static bool body_str(const uint8_t *b, size_t end, size_t *i,
                     struct goblin_slice *s)
{
    uint64_t len;

    if (!body_varint(b, end, i, &len) || len > end - *i)
        return false;
    s->ptr = b + *i;
    s->len = (size_t)len;
    *i += (size_t)len;
    return true;
}

/* Adds the batch of n pairs to *obj, then their deadlines (ttl); *added
 * counts new fields. */
static int hash_batch(struct ld *l, void **obj, size_t n, bool ttl,
                      uint64_t *added)
{
    int r;

    if (l->st == NULL || n == 0)
        return 0;
    r = goblin__snap_hash_set(l->st, obj, l->fv, n);
    if (r < 0)
        return r;
    *added += (uint64_t)r;
    for (size_t i = 0; ttl && i < n; i++)
        if (l->when[i] != -1 &&
            goblin__hash_obj_set_deadline(l->st, obj, l->fv[2 * i],
                                          l->when[i]) < 0)
            return GOBLIN_ENOMEM;
    return 0;
}

/* Parses (and, when loading, builds) a hash body of n pairs, each with a
 * deadline when ttl (version 3). A field whose deadline has passed is
 * left out; *skipped counts them. */
static int hash_body(struct ld *l, const uint8_t *b, size_t len, size_t n,
                     bool ttl, void **obj, size_t *skipped)
{
    uint64_t added = 0, d = 0;
    size_t i = 0, nb = 0;
    int rc;

    *skipped = 0;
    for (size_t k = 0; k < n; k++) {
        if (!body_str(b, len, &i, &l->fv[2 * nb]) ||
            !body_str(b, len, &i, &l->fv[2 * nb + 1]) ||
            (ttl && (!body_varint(b, len, &i, &d) ||
                     d > (uint64_t)INT64_MAX)))
            return GOBLIN_ESNAPFORMAT;
        l->when[nb] = (int64_t)d - 1;
        if (ttl && d != 0 && l->now > l->when[nb]) {
            (*skipped)++;
            continue;
        }
        if (++nb == BATCH) {
            if ((rc = hash_batch(l, obj, nb, ttl, &added)) != 0)
                return rc;
            nb = 0;
        }
    }
    if ((rc = hash_batch(l, obj, nb, ttl, &added)) != 0)
        return rc;
    if (i != len || (l->st != NULL && added != n - *skipped))
        return GOBLIN_ESNAPFORMAT; /* slack, or a field given twice */
    return 0;
}

static int load_hash(struct ld *l, uint64_t off, struct goblin_slice k,
                     int64_t deadline, bool ttl)
{
    uint64_t n, len;
    const uint8_t *b;
    void *obj = NULL;
    size_t skipped;
    int rc;

    if ((rc = rd_len(l, UINT32_MAX - 1, &n)) != 0 ||
        (rc = rd_len(l, goblin__rd_left(&l->rd), &len)) != 0)
        return rc;
    if (n == 0 || n > len / 2)
        return rec_fail(l, GOBLIN_ESNAPFORMAT, off, k, "bad hash size");
    if ((rc = goblin__rd_view(&l->rd, (size_t)len, &b)) != 0)
        return rc;
    if (l->st != NULL && deadline >= 0 && l->now > deadline)
        return 1;
    if (l->st != NULL && n > GOBLIN__HASH_COMPACT_MAX_ENTRIES &&
        (rc = goblin__snap_hash_full(l->st, (size_t)n, &obj)) != 0)
        return rec_fail(l, rc, off, k, goblin_strerror(rc));
    rc = hash_body(l, b, (size_t)len, (size_t)n, ttl, &obj, &skipped);
    if (rc == 0 && l->st != NULL && skipped == n) { /* every field due */
        goblin__hash_free(l->st, obj);
        return 1;
    }
    if (rc != 0) {
        if (obj != NULL)
            goblin__hash_free(l->st, obj);
        return rec_fail(l, rc, off, k, rc == GOBLIN_ESNAPFORMAT ?
                        "malformed hash body" : goblin_strerror(rc));
    }
    if (l->st == NULL)
        return 0;
    rc = goblin__snap_put_obj(l->st, k, GOBLIN_TYPE_HASH, obj, deadline);
    return rc == 0 ? 0 : rec_fail(l, rc, off, k, rc == GOBLIN_ESNAPFORMAT ?
                                  "key appears twice" : goblin_strerror(rc));
}

/* Parses (and, when loading, builds) a set body of n members, BATCH at
 * a time into l->fv. */
static int set_body(struct ld *l, const uint8_t *b, size_t len, size_t n,
                    void **obj)
{
    uint64_t added = 0;
    size_t i = 0, nb = 0;
    int r;

    for (size_t k = 0; k < n; k++) {
        if (!body_str(b, len, &i, &l->fv[nb]))
            return GOBLIN_ESNAPFORMAT;
        if (++nb == BATCH || k + 1 == n) {
            if (l->st != NULL) {
                r = goblin__set_obj_add(l->st, obj, l->fv, nb);
                if (r < 0)
                    return r;
                added += (uint64_t)r;
            }
            nb = 0;
        }
    }
    if (i != len || (l->st != NULL && added != n))
        return GOBLIN_ESNAPFORMAT; /* slack, or a member given twice */
    return 0;
}

static int load_set(struct ld *l, uint64_t off, struct goblin_slice k,
                    int64_t deadline)
{
    uint64_t n, len;
    const uint8_t *b;
    void *obj = NULL;
    int rc;

    if ((rc = rd_len(l, UINT32_MAX - 1, &n)) != 0 ||
        (rc = rd_len(l, goblin__rd_left(&l->rd), &len)) != 0)
        return rc;
    if (n == 0 || n > len)
        return rec_fail(l, GOBLIN_ESNAPFORMAT, off, k, "bad set size");
    if ((rc = goblin__rd_view(&l->rd, (size_t)len, &b)) != 0)
        return rc;
    if (l->st != NULL && deadline >= 0 && l->now > deadline)
        return 1;
    rc = set_body(l, b, (size_t)len, (size_t)n, &obj);
    if (rc != 0) {
        goblin__set_free(l->st, obj);
        return rec_fail(l, rc, off, k, rc == GOBLIN_ESNAPFORMAT ?
                        "malformed set body" : goblin_strerror(rc));
    }
    if (l->st == NULL)
        return 0;
    rc = goblin__snap_put_obj(l->st, k, GOBLIN_TYPE_SET, obj, deadline);
    return rc == 0 ? 0 : rec_fail(l, rc, off, k, rc == GOBLIN_ESNAPFORMAT ?
                                  "key appears twice" : goblin_strerror(rc));
}

/* memcmp order, a shorter prefix first: the order of members. */
static int member_cmp(struct goblin_slice a, struct goblin_slice b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int c = n == 0 ? 0 : memcmp(a.ptr, b.ptr, n);

    if (c != 0)
        return c;
    return a.len < b.len ? -1 : a.len > b.len;
}

/* Parses a sorted-set chunk of n pairs into p[0, n), checking the order
 * from the pair before it (prev, or NULL for the first chunk). */
static int zset_chunk(const uint8_t *b, size_t len, size_t n,
                      struct goblin_zpair *p, const struct goblin_zpair *prev)
{
    size_t i = 0;

    for (size_t k = 0; k < n; k++) {
        uint64_t bits;

        if (len - i < 8)
            return GOBLIN_ESNAPFORMAT;
        bits = le64_get(b + i);
        i += 8;
        memcpy(&p[k].score, &bits, 8);
        if (!body_str(b, len, &i, &p[k].member) || isnan(p[k].score))
            return GOBLIN_ESNAPFORMAT;
        if (prev != NULL && (prev->score > p[k].score ||
                             (prev->score == p[k].score &&
                              member_cmp(prev->member, p[k].member) >= 0)))
            return GOBLIN_ESNAPFORMAT;
        prev = &p[k];
    }
    return i == len ? 0 : GOBLIN_ESNAPFORMAT;
}

/* Chunks of a sorted set, copied out of the blocks: the pairs point into
 * them until the set is built. */
struct zchunk {
    struct zchunk *next;
    size_t size;
};

static void zchunks_free(struct ld *l, struct zchunk *c)
{
    while (c != NULL) {
        struct zchunk *next = c->next;

        goblin__mem_free(&l->rd.mem, c, sizeof(*c) + c->size);
        c = next;
    }
}

/* Reads the chunks of a set of n pairs into p, keeping their bytes in
 * *chunks. */
static int zset_chunks(struct ld *l, uint64_t off, struct goblin_slice k,
                       struct goblin_zpair *p, size_t n,
                       struct zchunk **chunks)
{
    size_t got = 0;
    uint64_t cn, len;
    int rc;

    while (got < n) {
        struct zchunk *c;

        if ((rc = rd_len(l, n - got, &cn)) != 0 ||
            (rc = rd_len(l, goblin__rd_left(&l->rd), &len)) != 0)
            return rc;
        if (cn == 0 || cn > len / 9)
            return rec_fail(l, GOBLIN_ESNAPFORMAT, off, k,
                            "bad sorted set chunk");
        c = goblin__mem_alloc(&l->rd.mem, sizeof(*c) + (size_t)len);
        if (c == NULL)
            return rec_fail(l, GOBLIN_ENOMEM, off, k, "out of memory");
        c->size = (size_t)len;
        c->next = *chunks;
        *chunks = c;
        if ((rc = goblin__rd_copy(&l->rd, c + 1, (size_t)len)) != 0)
            return rc;
        if (zset_chunk((const uint8_t *)(c + 1), (size_t)len, (size_t)cn,
                       p + got, got > 0 ? &p[got - 1] : NULL) != 0)
            return rec_fail(l, GOBLIN_ESNAPFORMAT, off, k,
                            "malformed sorted set body");
        got += (size_t)cn;
    }
    return 0;
}

static int load_zset(struct ld *l, uint64_t off, struct goblin_slice k,
                     int64_t deadline)
{
    struct zchunk *chunks = NULL;
    struct goblin_zpair *p;
    uint64_t n;
    size_t bytes;
    void *obj = NULL;
    int rc;

    if ((rc = rd_len(l, goblin__rd_left(&l->rd) / 9, &n)) != 0)
        return rc;
    if (n == 0 || n >= UINT32_MAX)
        return rec_fail(l, GOBLIN_ESNAPFORMAT, off, k, "bad sorted set size");
    bytes = goblin__mul((size_t)n, sizeof(*p));
    if ((p = goblin__mem_alloc(&l->rd.mem, bytes)) == NULL)
        return rec_fail(l, GOBLIN_ENOMEM, off, k, "out of memory");
    rc = zset_chunks(l, off, k, p, (size_t)n, &chunks);
    if (rc == 0 && l->st != NULL && !(deadline >= 0 && l->now > deadline))
        rc = goblin__snap_zset_build(l->st, p, (size_t)n, &obj);
    else if (rc == 0 && l->st != NULL)
        rc = 1; /* expired: skipped */
    zchunks_free(l, chunks);
    goblin__mem_free(&l->rd.mem, p, bytes);
    if (rc == GOBLIN_ESNAPFORMAT && l->rd.res->message[0] == '\0')
        return rec_fail(l, rc, off, k, "repeated member");
    if (rc < 0 && l->rd.res->message[0] == '\0')
        return rec_fail(l, rc, off, k, goblin_strerror(rc));
    if (rc != 0 || l->st == NULL)
        return rc;
    rc = goblin__snap_put_obj(l->st, k, GOBLIN_TYPE_ZSET, obj, deadline);
    return rc == 0 ? 0 : rec_fail(l, rc, off, k, rc == GOBLIN_ESNAPFORMAT ?
                                  "key appears twice" : goblin_strerror(rc));
}

/* Pushes the batch of n elements at the tail of *obj. */
static int list_batch(struct ld *l, void **obj, size_t n)
{
    if (l->st == NULL || n == 0)
        return 0;
    return goblin__list_obj_push(l->st, obj, GOBLIN_LIST_TAIL, l->fv, n);
}

/* Parses (and, when loading, appends) a list chunk of n elements. */
static int list_chunk(struct ld *l, const uint8_t *b, size_t len, size_t n,
                      void **obj)
{
    size_t i = 0, nb = 0;
    int rc;

    for (size_t k = 0; k < n; k++) {
        if (!body_str(b, len, &i, &l->fv[nb]))
            return GOBLIN_ESNAPFORMAT;
        if (++nb == 2 * BATCH) {
            if ((rc = list_batch(l, obj, nb)) != 0)
                return rc;
            nb = 0;
        }
    }
    if ((rc = list_batch(l, obj, nb)) != 0)
        return rc;
    return i == len ? 0 : GOBLIN_ESNAPFORMAT;
}

/* Reads the chunks of a list of n elements into *obj. */
static int list_chunks(struct ld *l, uint64_t off, struct goblin_slice k,
                       uint64_t n, void **obj)
{
    uint64_t got = 0, cn, len;
    const uint8_t *b;
    int rc;

    while (got < n) {
        if ((rc = rd_len(l, n - got, &cn)) != 0 ||
            (rc = rd_len(l, goblin__rd_left(&l->rd), &len)) != 0)
            return rc;
        if (cn == 0 || cn > len)
            return rec_fail(l, GOBLIN_ESNAPFORMAT, off, k, "bad list chunk");
        if ((rc = goblin__rd_view(&l->rd, (size_t)len, &b)) != 0)
            return rc;
        rc = list_chunk(l, b, (size_t)len, (size_t)cn, obj);
        if (rc != 0)
            return rec_fail(l, rc, off, k, rc == GOBLIN_ESNAPFORMAT ?
                            "malformed list body" : goblin_strerror(rc));
        got += cn;
    }
    return 0;
}

static int load_list(struct ld *l, uint64_t off, struct goblin_slice k,
                     int64_t deadline)
{
    uint64_t n;
    void *obj = NULL;
    int rc;

    if ((rc = rd_len(l, goblin__rd_left(&l->rd), &n)) != 0)
        return rc;
    if (n == 0)
        return rec_fail(l, GOBLIN_ESNAPFORMAT, off, k, "bad list size");
    rc = list_chunks(l, off, k, n, &obj);
    if (rc == 0 && l->st != NULL && deadline >= 0 && l->now > deadline)
        rc = 1; /* expired: skipped */
    if (rc != 0 || l->st == NULL) {
        goblin__list_free(l->st, obj);
        return rc;
    }
    rc = goblin__snap_put_obj(l->st, k, GOBLIN_TYPE_LIST, obj, deadline);
    return rc == 0 ? 0 : rec_fail(l, rc, off, k, rc == GOBLIN_ESNAPFORMAT ?
                                  "key appears twice" : goblin_strerror(rc));
}

static int load_string(struct ld *l, uint64_t off, struct goblin_slice k,
                       int64_t deadline, int enc)
{
    uint64_t len;
    struct goblin_slice v;
    const uint8_t *b;
    int rc;

    if ((rc = rd_len(l, SNAP_STR_MAX, &len)) != 0 ||
        (rc = goblin__rd_view(&l->rd, (size_t)len, &b)) != 0)
        return rc;
    if (l->st == NULL)
        return 0;
    if (deadline >= 0 && l->now > deadline)
        return 1;
    v.ptr = b;
    v.len = (size_t)len;
    rc = goblin__snap_put_str(l->st, k, v, enc, deadline);
    return rc == 0 ? 0 : rec_fail(l, rc, off, k, rc == GOBLIN_ESNAPFORMAT ?
                                  "key appears twice" : goblin_strerror(rc));
}

/* A database marker (its tag read): the records that follow go to the
 * store of that database. Numbers only grow, so a database cannot come
 * twice. */
static int load_marker(struct ld *l, uint64_t off,
                       struct goblin_snapshot_result *res)
{
    uint64_t db;
    int rc = goblin__rd_varint(&l->rd, &db);

    if (rc != 0)
        return rc;
    if (db <= l->db)
        return goblin__snap_fail(res, GOBLIN_ESNAPFORMAT, off, "database "
                                 "%" PRIu64 " out of order at byte %" PRIu64,
                                 db, off);
    l->db = db;
    if (l->dbs == NULL) /* verifying */
        return 0;
    if (db >= l->ndbs || l->dbs[db] == NULL)
        return goblin__snap_fail(res, GOBLIN_ESNAPDB, off, "keys of "
                                 "database %" PRIu64 " at byte %" PRIu64
                                 ", which is not loaded", db, off);
    l->st = l->dbs[db];
    goblin__write_begin(l->st);
    return 0;
}

/* Reads one record. Returns 0 (loaded), 1 (skipped: expired) or an
 * error. */
static int load_record(struct ld *l, struct goblin_snapshot_result *res)
{
    uint64_t off = goblin__rd_off(&l->rd), dl = 0;
    struct goblin_slice k = {NULL, 0};
    uint8_t tag;
    int type, rc;

    if ((rc = goblin__rd_byte(&l->rd, &tag)) != 0)
        return rc;
    if (tag == SNAP_TAG_DB) {
        if ((rc = load_marker(l, off, res)) != 0)
            return rc;
        off = goblin__rd_off(&l->rd);
        if ((rc = goblin__rd_byte(&l->rd, &tag)) != 0)
            return rc;
    }
    type = tag_type(tag);
    if (type == 0 || type > GOBLIN_TYPE_SET || (tag & TAG_RESERVED) ||
        (type != GOBLIN_TYPE_STRING && (tag & TAG_ENC) &&
         !(type == GOBLIN_TYPE_HASH && (tag & TAG_ENC) == TAG_HASH_TTL &&
           l->rd.version >= 3)) ||
        (tag & TAG_ENC) == TAG_ENC)
        return goblin__snap_fail(res, GOBLIN_ESNAPFORMAT, off, "bad record "
                                 "tag 0x%02x at byte %" PRIu64, tag, off);
    if ((tag & TAG_DEADLINE) && (rc = goblin__rd_u64(&l->rd, &dl)) != 0)
        return rc;
    if ((tag & TAG_DEADLINE) && dl > INT64_MAX)
        return goblin__snap_fail(res, GOBLIN_ESNAPFORMAT, off, "bad deadline"
                                 " at byte %" PRIu64, off);
    if ((rc = read_key(l, &k)) != 0)
        return rc;
    int64_t deadline = (tag & TAG_DEADLINE) ? (int64_t)dl : -1;

    if (type == GOBLIN_TYPE_STRING)
        rc = load_string(l, off, k, deadline, (tag & TAG_ENC) >> TAG_ENC_SHIFT);
    else if (type == GOBLIN_TYPE_HASH)
        rc = load_hash(l, off, k, deadline, (tag & TAG_HASH_TTL) != 0);
    else if (type == GOBLIN_TYPE_LIST)
        rc = load_list(l, off, k, deadline);
    else if (type == GOBLIN_TYPE_SET)
        rc = load_set(l, off, k, deadline);
    else
        rc = load_zset(l, off, k, deadline);
    if (rc != 0)
        return rc;
    res->strings += type == GOBLIN_TYPE_STRING;
    res->hashes += type == GOBLIN_TYPE_HASH;
    res->zsets += type == GOBLIN_TYPE_ZSET;
    res->expires += deadline >= 0;
    return 0;
}

/* One function library record: tag, varint length, code. */
static int load_function(struct ld *l, struct goblin_snapshot_result *res)
{
    uint64_t off = goblin__rd_off(&l->rd), len;
    const uint8_t *code;
    char err[512];
    uint8_t tag;
    int rc;

    if ((rc = goblin__rd_byte(&l->rd, &tag)) != 0)
        return rc;
    if (tag != SNAP_TAG_FUNCTION)
        return goblin__snap_fail(res, GOBLIN_ESNAPFORMAT, off, "bad function "
                                 "library tag 0x%02x at byte %" PRIu64, tag,
                                 off);
    if ((rc = rd_len(l, SNAP_STR_MAX, &len)) != 0 ||
        (rc = goblin__rd_view(&l->rd, (size_t)len, &code)) != 0)
        return rc;
    if (l->fns == NULL || l->fns->add == NULL)
        return 0;
    err[0] = '\0';
    rc = l->fns->add(l->fns->ctx, (struct goblin_slice){code, (size_t)len},
                     err, sizeof(err));
    if (rc != 0)
        return goblin__snap_fail(res, rc < 0 ? rc : GOBLIN_ESNAPFORMAT, off,
                                 "function library at byte %" PRIu64
                                 ": %s", off, err);
    return 0;
}

static int load_all(struct ld *l, struct goblin_snapshot_result *res)
{
    int rc = goblin__rd_open(&l->rd);

    for (uint64_t i = 0; rc == 0 && i < l->rd.functions; i++)
        rc = load_function(l, res);
    for (uint64_t i = 0; rc == 0 && i < l->rd.keys; i++) {
        rc = load_record(l, res);
        if (rc == 1) {
            res->expired++;
            rc = 0;
        } else if (rc == 0) {
            res->keys++;
        }
    }
    if (rc == 0)
        rc = goblin__rd_finish(&l->rd, l->rd.keys);
    res->bytes = l->rd.src->off;
    return rc;
}

/* Runs a load (dbs not NULL) or a verify over src. */
static int run(goblin_store *const *dbs, size_t ndbs,
               const struct goblin_allocator *al,
               const struct goblin__fnlibs *fns,
               struct goblin__src *src, struct goblin_snapshot_result *res)
{
    struct ld *l;
    goblin_store *st = dbs != NULL ? dbs[0] : NULL;
    struct goblin__mem mem = {st, al};
    int rc;

    l = goblin__mem_alloc(&mem, sizeof(*l));
    if (l == NULL)
        return goblin__snap_fail(res, GOBLIN_ENOMEM, 0, "out of memory");
    memset(l, 0, sizeof(*l) - sizeof(l->fv));
    l->rd.mem = mem;
    l->rd.src = src;
    l->rd.res = res;
    l->st = st;
    l->dbs = dbs;
    l->ndbs = ndbs;
    l->fns = fns;
    l->now = st != NULL ? goblin__now_ms(st) : 0;
    rc = load_all(l, res);
    goblin__mem_free(&mem, l->key, l->key_cap);
    goblin__rd_close(&l->rd);
    goblin__mem_free(&mem, l, sizeof(*l));
    return rc;
}

static int load_src(goblin_store *const *dbs, size_t ndbs,
                    const struct goblin__fnlibs *fns,
                    struct goblin__src *src,
                    struct goblin_snapshot_result *res)
{
    int rc;

    if (ndbs == 0 || dbs[0] == NULL)
        return goblin__snap_fail(res, GOBLIN_EINVAL, 0, "no database 0");
    for (size_t i = 0; i < ndbs; i++)
        if (dbs[i] != NULL && goblin_key_count(dbs[i]) != 0)
            return goblin__snap_fail(res, GOBLIN_EINVAL, 0, "the store is "
                                     "not empty");
    goblin__write_begin(dbs[0]);
    rc = run(dbs, ndbs, NULL, fns, src, res);
    if (rc != 0) {
        for (size_t i = 0; i < ndbs; i++)
            if (dbs[i] != NULL)
                goblin__snap_rollback(dbs[i], res);
    }
    return rc;
}

static int open_fail(struct goblin_snapshot_result *res, int rc,
                     const char *path)
{
    return goblin__snap_fail(res, rc, 0, "cannot open %s: %s", path,
                             rc == GOBLIN_EINVAL ? "not a regular file"
                                                 : strerror(-rc));
}

int goblin_snapshot_load(goblin_store *st, const char *path,
                         struct goblin_snapshot_result *res)
{
    struct goblin_snapshot_result local;
    struct goblin__src src;
    int rc;

    res = goblin__snap_res_init(res, &local);
    if ((rc = goblin__src_open(&src, path)) != 0)
        return open_fail(res, rc, path);
    rc = load_src(&st, 1, NULL, &src, res);
    goblin__src_close(&src);
    return rc;
}

int goblin_snapshot_load_dbs(goblin_store *const *dbs, size_t count,
                             const char *path,
                             struct goblin_snapshot_result *res)
{
    return goblin__snapshot_load_dbs_fn(dbs, count, path, NULL, res);
}

int goblin__snapshot_load_dbs_fn(goblin_store *const *dbs, size_t count,
                                 const char *path,
                                 const struct goblin__fnlibs *fns,
                                 struct goblin_snapshot_result *res)
{
    struct goblin_snapshot_result local;
    struct goblin__src src;
    int rc;

    res = goblin__snap_res_init(res, &local);
    if ((rc = goblin__src_open(&src, path)) != 0)
        return open_fail(res, rc, path);
    rc = load_src(dbs, count, fns, &src, res);
    goblin__src_close(&src);
    return rc;
}

int goblin_snapshot_load_mem(goblin_store *st, const void *data, size_t len,
                             struct goblin_snapshot_result *res)
{
    struct goblin_snapshot_result local;
    struct goblin__src src;

    res = goblin__snap_res_init(res, &local);
    goblin__src_mem(&src, data, len);
    return load_src(&st, 1, NULL, &src, res);
}

int goblin_snapshot_verify(const char *path,
                           const struct goblin_allocator *alloc,
                           struct goblin_snapshot_result *res)
{
    struct goblin_snapshot_result local;
    struct goblin__src src;
    int rc;

    res = goblin__snap_res_init(res, &local);
    if ((rc = goblin__src_open(&src, path)) != 0)
        return open_fail(res, rc, path);
    rc = run(NULL, 0, alloc, NULL, &src, res);
    goblin__src_close(&src);
    return rc;
}
