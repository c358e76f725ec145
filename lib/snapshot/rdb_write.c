/* rdb_write.c - writing values in Redis's RDB encoding: one key's value
 * (its type byte and body), and the DUMP payload built on it (the value,
 * the 2-byte RDB version, the CRC64 of both), so that DUMP from goblind
 * RESTOREs in redis-server. The value writer is what a whole RDB export
 * or a replication stream would reuse.
 *
 * Encodings written (RDB version 10, every one readable by Redis 2.6
 * and later, and by rdb_load.c):
 *   string      type 0; an int-encoded string as an integer (int8/16/32)
 *               when it fits, else length-prefixed bytes
 *   hash        type 4 (RDB_TYPE_HASH): pairs count, then field, value
 *   sorted set  type 5 (RDB_TYPE_ZSET_2): count, then member and the
 *               score as a little-endian binary double, highest first
 *               as Redis writes its skiplist
 *   list        type 18 (RDB_TYPE_LIST_QUICKLIST_2, Redis 7.0): node
 *               count, then each node's container (2 packed) and its
 *               listpack (lp_write.c) of at most 8 KiB, Redis's default
 *               list-max-listpack-size -2; an element that does not fit
 *               gets a node of its own, and one of 1 GiB or more a plain
 *               node (container 1), as Redis's packed_threshold
 *   set         an intset as type 11 (RDB_TYPE_SET_INTSET: u32 width,
 *               u32 count, the values ascending, little-endian), any
 *               other form as type 2 (RDB_TYPE_SET: count, members),
 *               what Redis 7.0 writes for its intset and hashtable
 *               (Redis 7.0 cannot read 7.2's listpack sets, type 20)
 * Redis converts hashes and sorted sets under its listpack thresholds to
 * listpacks on load, and an all-integer set of type 2 within
 * set-max-intset-entries to an intset, so OBJECT ENCODING agrees after a
 * RESTORE.
 *
 * Lengths use RDB's length encoding: 6 bits, 14 bits, or 0x80 / 0x81
 * followed by 32 / 64 bits big-endian.
 */
#include <string.h>

#include "checksum.h"
#include "goblin/buf.h"
#include "goblin/numtext.h"
#include "rdb.h"
#include "snapshot_int.h"
#include "store/hash.h"
#include "store/hash_ttl.h"
#include "store/list.h"
#include "store/set.h"
#include "store/zset.h"

#define DUMP_RDB_VERSION 10

static void put(struct goblin_buf *b, const void *p, size_t n)
{
    if (!b->failed && goblin_buf_append(b, p, n) != 0)
        b->failed = true;
}

static void put_len(struct goblin_buf *b, uint64_t n)
{
    uint8_t p[9];

    if (n < 64) {
        p[0] = (uint8_t)n;
        put(b, p, 1);
    } else if (n < 16384) {
        p[0] = (uint8_t)(0x40 | (n >> 8));
        p[1] = (uint8_t)n;
        put(b, p, 2);
    } else if (n <= UINT32_MAX) {
        p[0] = 0x80;
        for (int i = 0; i < 4; i++)
            p[1 + i] = (uint8_t)(n >> (24 - 8 * i));
        put(b, p, 5);
    } else {
        p[0] = 0x81;
        for (int i = 0; i < 8; i++)
            p[1 + i] = (uint8_t)(n >> (56 - 8 * i));
        put(b, p, 9);
    }
}

static void put_str(struct goblin_buf *b, struct goblin_slice s)
{
    put_len(b, s.len);
    put(b, s.ptr, s.len);
}

/* An integer-encoded string (RDB_ENC_INT8/16/32), or its text. */
static void put_int_str(struct goblin_buf *b, struct goblin_slice s)
{
    int64_t v;
    uint8_t p[5];

    if (goblin_int64_parse((const char *)s.ptr, s.len, &v) != 0 || v < INT32_MIN ||
        v > INT32_MAX) {
        put_str(b, s);
        return;
    }
    if (v >= INT8_MIN && v <= INT8_MAX) {
        p[0] = 0xC0;
        p[1] = (uint8_t)(int8_t)v;
        put(b, p, 2);
    } else if (v >= INT16_MIN && v <= INT16_MAX) {
        p[0] = 0xC1;
        p[1] = (uint8_t)((uint16_t)v);
        p[2] = (uint8_t)((uint16_t)v >> 8);
        put(b, p, 3);
    } else {
        p[0] = 0xC2;
        for (int i = 0; i < 4; i++)
            p[1 + i] = (uint8_t)((uint32_t)v >> (8 * i));
        put(b, p, 5);
    }
}

static int hash_pair(void *ctx, struct goblin_slice f, struct goblin_slice v)
{
    put_str(ctx, f);
    put_str(ctx, v);
    return 0;
}

static void put_zset(struct goblin_buf *b, const void *obj)
{
    size_t n = goblin__zset_obj_card(obj);
    struct goblin__zset_walk w;
    struct goblin_slice m;
    double score;

    put_len(b, n);
    if (n == 0)
        return;
    goblin__zset_obj_walk(obj, n - 1, n, true, &w);
    while (goblin__zset_walk_next(&w, &m, &score) == 1) {
        uint64_t bits;
        uint8_t p[8];

        memcpy(&bits, &score, 8);
        for (int i = 0; i < 8; i++)
            p[i] = (uint8_t)(bits >> (8 * i));
        put_str(b, m);
        put(b, p, 8);
    }
}

#define LIST_NODE_MAX 8192               /* list-max-listpack-size -2 */
#define LIST_PLAIN_MIN ((size_t)1 << 30) /* Redis's packed_threshold */

/* The elements of the next node from it on: their count and entry
 * bytes; *plain when it is one element for a plain node. */
static uint64_t list_node(struct goblin__list_iter it, size_t *bytes,
                          bool *plain)
{
    struct goblin_slice e;
    uint64_t n = 0;

    *bytes = 0;
    *plain = false;
    while (goblin__list_iter_next(&it, &e)) {
        size_t es = goblin__lp_entry_size(e);

        if (e.len >= LIST_PLAIN_MIN) {
            if (n == 0) {
                *plain = true;
                *bytes = e.len;
                return 1;
            }
            break;
        }
        if (n > 0 && goblin__lp_size(*bytes + es) > LIST_NODE_MAX)
            break;
        *bytes += es;
        n++;
    }
    return n;
}

void goblin__rdb_list_shape(const void *obj, size_t *nodes, size_t *bytes)
{
    struct goblin__list_iter it;
    uint64_t left = goblin__list_obj_len(obj);
    struct goblin_slice e;
    size_t nb;
    bool plain;

    *nodes = 0;
    *bytes = 0;
    goblin__list_iter_init(&it, obj, 0, false);
    while (left > 0) {
        uint64_t n = list_node(it, &nb, &plain);

        for (uint64_t i = 0; i < n; i++)
            goblin__list_iter_next(&it, &e);
        left -= n;
        *bytes += plain ? nb : goblin__lp_size(nb);
        (*nodes)++;
    }
}

static void put_list(struct goblin_buf *b, const void *obj)
{
    struct goblin__list_iter it;
    uint64_t nodes = 0, left = goblin__list_obj_len(obj);
    struct goblin_slice e;
    size_t bytes;
    bool plain;

    goblin__list_iter_init(&it, obj, 0, false);
    while (left > 0) {
        uint64_t n = list_node(it, &bytes, &plain);

        for (uint64_t i = 0; i < n; i++)
            goblin__list_iter_next(&it, &e);
        left -= n;
        nodes++;
    }
    put_len(b, nodes);
    goblin__list_iter_init(&it, obj, 0, false);
    for (uint64_t i = 0; i < nodes && !b->failed; i++) {
        uint64_t n = list_node(it, &bytes, &plain);
        uint8_t container = plain ? 1 : 2;

        put_len(b, container);
        if (plain) {
            goblin__list_iter_next(&it, &e);
            put_str(b, e);
            continue;
        }
        put_len(b, goblin__lp_size(bytes));
        goblin__lp_put_header(b, bytes, (size_t)n);
        for (uint64_t k = 0; k < n; k++) {
            goblin__list_iter_next(&it, &e);
            goblin__lp_put_entry(b, e);
        }
        goblin__lp_put_end(b);
    }
}

static int set_member(void *ctx, const struct goblin__set_elem *e)
{
    put_str(ctx, e->s);
    return 0;
}

static void put_set(struct goblin_buf *b, const void *obj)
{
    uint8_t t;

    if (goblin__set_form(obj) == GOBLIN__SET_INTSET) {
        const struct goblin__intset *is = goblin__set_ptr(obj);
        uint8_t h[8], v[8];

        t = RDB_TYPE_SET_INTSET;
        put(b, &t, 1);
        put_len(b, 8 + (uint64_t)is->n * is->width);
        for (int i = 0; i < 4; i++) {
            h[i] = (uint8_t)((uint32_t)is->width >> (8 * i));
            h[4 + i] = (uint8_t)(is->n >> (8 * i));
        }
        put(b, h, 8);
        for (uint32_t i = 0; i < is->n; i++) {
            uint64_t u = (uint64_t)goblin__intset_get(is, i);

            for (unsigned k = 0; k < is->width; k++)
                v[k] = (uint8_t)(u >> (8 * k));
            put(b, v, is->width);
        }
        return;
    }
    t = RDB_TYPE_SET;
    put(b, &t, 1);
    put_len(b, goblin__set_obj_card(obj));
    goblin__set_obj_foreach(obj, set_member, b);
}

/* A hash with field deadlines: its live fields only, without their
 * deadlines (RDB 10 has no field TTLs). */
static int hash_ttl_pair(void *ctx, struct goblin_slice f,
                         struct goblin_slice v, int64_t when)
{
    (void)when;
    return hash_pair(ctx, f, v);
}

int goblin__rdb_write_value(const uint8_t *rec, int64_t now,
                            struct goblin_buf *out)
{
    enum goblin_type type = goblin__rec_type(rec);
    uint8_t t;

    switch (type) {
    case GOBLIN_TYPE_STRING:
        t = RDB_TYPE_STRING;
        put(out, &t, 1);
        if (goblin__rec_str_enc(rec) == GOBLIN__STR_INT)
            put_int_str(out, goblin__rec_str(rec));
        else
            put_str(out, goblin__rec_str(rec));
        break;
    case GOBLIN_TYPE_HASH:
        t = RDB_TYPE_HASH;
        put(out, &t, 1);
        if (goblin__hash_obj_has_ttl(goblin__rec_obj(rec))) {
            put_len(out, goblin__hash_obj_live_len(goblin__rec_obj(rec), now));
            goblin__hash_obj_foreach_ttl(goblin__rec_obj(rec), now,
                                         hash_ttl_pair, out);
            break;
        }
        put_len(out, goblin__hash_obj_len(goblin__rec_obj(rec)));
        goblin__hash_obj_foreach(goblin__rec_obj(rec), hash_pair, out);
        break;
    case GOBLIN_TYPE_ZSET:
        t = RDB_TYPE_ZSET_2;
        put(out, &t, 1);
        put_zset(out, goblin__rec_obj(rec));
        break;
    case GOBLIN_TYPE_LIST:
        t = RDB_TYPE_LIST_QUICKLIST_2;
        put(out, &t, 1);
        put_list(out, goblin__rec_obj(rec));
        break;
    case GOBLIN_TYPE_SET:
        put_set(out, goblin__rec_obj(rec));
        break;
    default:
        return GOBLIN_ESNAPTYPE;
    }
    return out->failed ? GOBLIN_ENOMEM : 0;
}

int goblin__dump_payload(goblin_store *st, const uint8_t *rec,
                         struct goblin_buf *out)
{
    struct goblin__crc64 *tab;
    uint8_t foot[10];
    uint64_t crc;
    int rc = goblin__rdb_write_value(rec, goblin__now_ms(st), out);

    if (rc != 0)
        return rc;
    foot[0] = DUMP_RDB_VERSION & 0xff;
    foot[1] = DUMP_RDB_VERSION >> 8;
    put(out, foot, 2);
    if (out->failed || (tab = goblin__alloc(st, sizeof(*tab))) == NULL)
        return GOBLIN_ENOMEM;
    goblin__crc64_init(tab);
    crc = goblin__crc64(tab, 0, out->data, out->len);
    goblin__free(st, tab, sizeof(*tab));
    for (int i = 0; i < 8; i++)
        foot[i] = (uint8_t)(crc >> (8 * i));
    put(out, foot, 8);
    return out->failed ? GOBLIN_ENOMEM : 0;
}

int goblin__dump_verify(goblin_store *st, const void *p, size_t len)
{
    const uint8_t *b = p;
    struct goblin__crc64 *tab;
    uint64_t crc, want = 0;
    unsigned ver;

    if (len < 10)
        return GOBLIN_ESNAPFORMAT;
    ver = (unsigned)b[len - 10] | (unsigned)b[len - 9] << 8;
    if (ver > DUMP_RDB_VERSION)
        return GOBLIN_ESNAPVERSION;
    if ((tab = goblin__alloc(st, sizeof(*tab))) == NULL)
        return GOBLIN_ENOMEM;
    goblin__crc64_init(tab);
    crc = goblin__crc64(tab, 0, b, len - 8);
    goblin__free(st, tab, sizeof(*tab));
    for (int i = 7; i >= 0; i--)
        want = want << 8 | b[len - 8 + (size_t)i];
    return crc == want ? 0 : GOBLIN_ESNAPCRC;
}

/* The payload's value as a whole RDB file of one key in memory: header,
 * the value under key, EOF and an all-zero checksum (the payload's own
 * CRC64 was checked already). */
static int as_rdb(struct goblin_buf *f, struct goblin_slice key,
                  const uint8_t *p, size_t vlen)
{
    uint8_t eof[9] = {RDB_OPCODE_EOF};

    put(f, "REDIS0010", 9);
    put(f, p, 1); /* the type */
    put_str(f, key);
    put(f, p + 1, vlen - 1);
    put(f, eof, sizeof(eof));
    return f->failed ? GOBLIN_ENOMEM : 0;
}

/* The helpers a whole RDB file's writer (rdb_save.c) shares. */
void goblin__rdb_put_len(struct goblin_buf *b, uint64_t n)
{
    put_len(b, n);
}

void goblin__rdb_put_str(struct goblin_buf *b, struct goblin_slice s)
{
    put_str(b, s);
}

void goblin__rdb_put_int_str(struct goblin_buf *b, struct goblin_slice s)
{
    put_int_str(b, s);
}

/* A buffer's memory, charged to a store (ctx). */
static void *st_malloc(void *ctx, size_t size)
{
    return goblin__alloc(ctx, size);
}

static void *st_realloc(void *ctx, void *p, size_t old_size, size_t new_size)
{
    return goblin__realloc(ctx, p, old_size, new_size);
}

static void st_free(void *ctx, void *p, size_t size)
{
    goblin__free(ctx, p, size);
}

void goblin__snap_allocator(goblin_store *st, struct goblin_allocator *a)
{
    *a = (struct goblin_allocator){st_malloc, st_realloc, st_free, st};
}

int goblin__dump_restore(goblin_store *scratch, struct goblin_slice key,
                         const void *payload, size_t len)
{
    struct goblin_allocator a = {st_malloc, st_realloc, st_free, scratch};
    struct goblin_buf f = {NULL, 0, 0, &a, false};
    struct goblin_snapshot_result res;
    int rc;

    if (len < 11)
        return GOBLIN_ESNAPFORMAT;
    rc = as_rdb(&f, key, payload, len - 10);
    if (rc == 0)
        rc = goblin_rdb_import_mem(scratch, f.data, f.len, 0, &res);
    goblin_buf_free(&f);
    return rc;
}
