/* test_snapshot_util.h - what the snapshot and RDB tests share: snapshots
 * in memory, stores like the fixture's, data of every kind, and a
 * comparison of two stores through the public API. */
#ifndef GOBLIN_TEST_SNAPSHOT_UTIL_H
#define GOBLIN_TEST_SNAPSHOT_UTIL_H

#include <glob.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "goblin.h"
#include "goblin/snapshot.h"
#include "snapshot/checksum.h"
#include "snapshot/snapshot_int.h"
#include "store/keyspace.h"
#include "testutil.h"

/* Not every test file uses every helper. */
#define UTIL static __attribute__((unused))

struct mbuf {
    uint8_t *p;
    size_t len;
};

/* Saves st through goblin_snapshot_save_fd into m (malloc'ed). */
UTIL void save_mem(goblin_store *st, struct mbuf *m)
{
    int fd = memfd_create("snap", 0);
    off_t end;

    assert_true(fd >= 0);
    assert_int_equal(goblin_snapshot_save_fd(st, fd, NULL), 0);
    end = lseek(fd, 0, SEEK_END);
    assert_true(end > 0);
    m->len = (size_t)end;
    m->p = malloc(m->len);
    assert_non_null(m->p);
    assert_int_equal(pread(fd, m->p, m->len, 0), (ssize_t)m->len);
    close(fd);
}

/* A store with the fixture's allocator, clock and seed. */
UTIL goblin_store *open_like(struct fixture *f)
{
    struct goblin_config cfg = {0};
    goblin_store *st;

    cfg.allocator = &f->alloc;
    cfg.seed = 42;
    cfg.now_ms = test_clock_now;
    cfg.clock_ctx = &f->clock;
    assert_int_equal(goblin_store_open(&cfg, &st), 0);
    return st;
}

UTIL void tmp_path(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "/tmp/goblin-snap-%ld-%s", (long)getpid(), name);
}

UTIL size_t count_tmp_files(const char *path)
{
    char pat[256];
    glob_t g;
    size_t n;

    snprintf(pat, sizeof(pat), "%s.tmp-*", path);
    if (glob(pat, 0, NULL, &g) != 0)
        return 0;
    n = g.gl_pathc;
    globfree(&g);
    return n;
}

/* Sets the u32 at off of a snapshot's header and fixes its CRC. */
UTIL void rewrite_header_u32(struct mbuf *m, size_t off, uint32_t v)
{
    uint32_t crc;

    memcpy(m->p + off, &v, 4);
    crc = goblin__crc32c(0, m->p, 60);
    memcpy(m->p + 60, &crc, 4);
}

UTIL void set_str(goblin_store *st, struct goblin_slice k,
                    struct goblin_slice v)
{
    assert_true(goblin_str_set(st, k, v, NULL, NULL) >= 0);
}

UTIL void add_pairs(goblin_store *st, const char *key, int n, int vlen,
                      int zset)
{
    char f[32], v[200];

    memset(v, 'v', sizeof(v));
    for (int i = 0; i < n; i++) {
        int fl = snprintf(f, sizeof(f), "field:%d", i);

        if (zset)
            assert_true(goblin_zset_add(st, slice_of(key, strlen(key)),
                                        slice_of(f, (size_t)fl),
                                        (double)(i % 17) / 4 - 2) >= 0);
        else
            assert_true(goblin_hash_set(st, slice_of(key, strlen(key)),
                                        (struct goblin_slice[]){
                                            slice_of(f, (size_t)fl),
                                            slice_of(v, (size_t)(vlen +
                                                                 i % 3))},
                                        1) >= 0);
    }
}

/* A list of n elements "key:i" padded to at least len bytes. */
UTIL void add_list(goblin_store *st, const char *key, int n, int len)
{
    char v[512];

    for (int i = 0; i < n; i++) {
        int vl = snprintf(v, sizeof(v), "%s:%d", key, i);
        struct goblin_slice e;

        for (; vl < len && vl < (int)sizeof(v); vl++)
            v[vl] = (char)('a' + vl % 26);
        e = slice_of(v, (size_t)vl);
        assert_true(goblin_list_push(st, slice_of(key, strlen(key)),
                                     GOBLIN_LIST_TAIL, &e, 1, 0) > 0);
    }
}

/* A set of n members made from fmt and i. */
UTIL void add_members(goblin_store *st, const char *key, int n,
                      const char *fmt)
{
    char m[48];

    for (int i = 0; i < n; i++) {
        int ml = snprintf(m, sizeof(m), fmt, i);

        assert_int_equal(goblin_set_add(st, slice_of(key, strlen(key)),
                                        &(struct goblin_slice){m,
                                                               (size_t)ml},
                                        1),
                         1);
    }
}

/* Strings of every encoding, hashes and sorted sets compact and full,
 * binary keys, odd scores; with_expiry gives some keys deadlines. */
UTIL void fill_every_kind(goblin_store *st, int with_expiry)
{
    static char big[100000];
    struct goblin_slice big_s = {big, sizeof(big)};

    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (char)('a' + i % 26);
    set_str(st, S("int"), S("-12345"));
    set_str(st, S("emb"), S("hello world"));
    set_str(st, S("empty"), S(""));
    set_str(st, S("raw"), S("0123456789012345678901234567890123456789xyzw"
                            "more than forty-four bytes"));
    set_str(st, S("k\0with\0nul"), S("v\0al\0ue"));
    set_str(st, S(""), S("the empty key"));
    set_str(st, S("long"), big_s);
    assert_true(goblin_str_append(st, S("short-raw"), S("ab")) > 0);
    assert_true(goblin_str_append(st, S("short-raw"), S("cd")) > 0);
    add_pairs(st, "hash-compact", 10, 5, 0);
    add_pairs(st, "hash-full", 300, 10, 0);
    add_pairs(st, "hash-longval", 3, 100, 0);
    assert_int_equal(goblin_hash_set(st, S("h\0bin"), (struct goblin_slice[]){
                         S("f\0"), S("\0v"), S(""), S("")}, 2), 2);
    add_pairs(st, "zset-compact", 20, 0, 1);
    add_pairs(st, "zset-full", 500, 0, 1);
    assert_int_equal(goblin_zset_add(st, S("zset-full"), S("negzero"), -0.0),
                     1);
    assert_int_equal(goblin_zset_add(st, S("zset-full"), S("inf"), INFINITY),
                     1);
    assert_int_equal(goblin_zset_add(st, S("zset-full"), S("-inf"),
                                     -INFINITY), 1);
    assert_int_equal(goblin_zset_add(st, S("zset-full"), S("m\0nul"), 1e300),
                     1);
    assert_int_equal(goblin_zset_add(st, S("zset-long"),
                                     S("a member longer than sixty-four "
                                       "bytes, so the set is in full form"),
                                     3.5), 1);
    assert_int_equal(goblin_zset_add(st, S("z\0bin"), S(""), 5e-324), 1);
    add_list(st, "list-compact", 10, 3);
    add_list(st, "list-full", 3000, 12);
    add_list(st, "list-longelem", 4, 300);
    assert_int_equal(goblin_list_push(st, S("l\0bin"), GOBLIN_LIST_HEAD,
                                      (struct goblin_slice[]){S("\0"), S(""),
                                                              big_s}, 3, 0),
                     3);
    add_members(st, "set-intset", 20, "%d");
    add_members(st, "set-bigint", 3000, "-%d0000000000");
    add_members(st, "set-compact", 20, "m%d");
    add_members(st, "set-full", 300, "member:%d");
    assert_int_equal(goblin_set_add(st, S("s\0bin"), (struct goblin_slice[]){
                         S("\0"), S("")}, 2), 2);
    if (!with_expiry)
        return;
    assert_int_equal(goblin_key_pexpire(st, S("emb"), 100000, 0), 1);
    assert_int_equal(goblin_key_pexpire(st, S("long"), 200000, 0), 1);
    assert_int_equal(goblin_key_pexpire(st, S("hash-full"), 300000, 0), 1);
    assert_int_equal(goblin_key_pexpire(st, S("hash-compact"), 1, 0), 1);
    assert_int_equal(goblin_key_pexpire(st, S("zset-full"), 400000, 0), 1);
    assert_int_equal(goblin_key_pexpire(st, S("z\0bin"), 500000, 0), 1);
    assert_int_equal(goblin_key_pexpire(st, S("list-full"), 600000, 0), 1);
}

/* A big hash, a big sorted set and a 600 KB string. */
UTIL void fill_big(goblin_store *st, int n)
{
    char *v = malloc(600000);

    for (int i = 0; i < 600000; i++)
        v[i] = (char)(i * 31);
    add_pairs(st, "big-hash", n, 8, 0);
    add_pairs(st, "big-zset", n, 0, 1);
    add_members(st, "big-set", n, "a-set-member-%d");
    add_members(st, "big-intset", n, "%d");
    /* A member bigger than a sorted-set chunk, among small ones. */
    assert_int_equal(goblin_zset_add(st, S("big-zset"),
                                     slice_of(v, 100000), 0.5), 1);
    set_str(st, S("big-string"), slice_of(v, 600000));
    add_list(st, "big-list", n, 20);
    /* An element bigger than a list chunk, among small ones. */
    assert_true(goblin_list_push(st, S("big-list"), GOBLIN_LIST_HEAD,
                                 &(struct goblin_slice){v, 100000}, 1, 0) > 0);
    free(v);
}

struct keylist {
    struct goblin_slice *k;
    size_t n, cap;
};

UTIL int collect_key(void *ctx, const struct goblin_key_info *info)
{
    struct keylist *l = ctx;
    void *copy = malloc(info->key.len + 1);

    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->k = realloc(l->k, l->cap * sizeof(*l->k));
    }
    memcpy(copy, info->key.ptr, info->key.len);
    l->k[l->n].ptr = copy;
    l->k[l->n++].len = info->key.len;
    return 0;
}

struct hcmp {
    goblin_store *b;
    struct goblin_slice key;
};

UTIL int hash_pair_in_b(void *ctx, struct goblin_slice f,
                          struct goblin_slice v)
{
    struct hcmp *c = ctx;
    struct goblin_slice got;

    assert_int_equal(goblin_hash_get(c->b, c->key, f, &got), 1);
    assert_int_equal(got.len, v.len);
    assert_memory_equal(got.ptr, v.ptr, v.len);
    return 0;
}

UTIL int member_in_b(void *ctx, struct goblin_slice m)
{
    struct hcmp *c = ctx;

    assert_int_equal(goblin_set_ismember(c->b, c->key, m), 1);
    return 0;
}

UTIL void assert_zsets_equal(goblin_store *a, goblin_store *b,
                               struct goblin_slice k)
{
    struct goblin_zrange r;
    struct goblin_zset_iter ia, ib;
    struct goblin_slice ma, mb;
    double sa, sb;

    memset(&r, 0, sizeof(r));
    r.by = GOBLIN_ZRANGE_BY_RANK;
    r.start = 0;
    r.stop = -1;
    assert_int_equal(goblin_zset_range(a, k, &r, &ia),
                     goblin_zset_range(b, k, &r, &ib));
    while (goblin_zset_next(&ia, &ma, &sa)) {
        assert_int_equal(goblin_zset_next(&ib, &mb, &sb), 1);
        assert_int_equal(ma.len, mb.len);
        assert_memory_equal(ma.ptr, mb.ptr, ma.len);
        assert_memory_equal(&sa, &sb, sizeof(double));
    }
}

UTIL void assert_key_equal(goblin_store *a, goblin_store *b,
                             struct goblin_slice k)
{
    enum goblin_type t = goblin_key_type(a, k);
    struct goblin_slice va, vb;
    const char *ea, *eb;
    struct hcmp c = {b, k};

    assert_int_equal(goblin_key_type(b, k), t);
    assert_int_equal(goblin_key_pexpiretime(a, k),
                     goblin_key_pexpiretime(b, k));
    assert_int_equal(goblin_key_encoding(a, k, &ea), 1);
    assert_int_equal(goblin_key_encoding(b, k, &eb), 1);
    assert_string_equal(ea, eb);
    if (t == GOBLIN_TYPE_STRING) {
        assert_int_equal(goblin_str_get(a, k, &va), 1);
        assert_int_equal(goblin_str_get(b, k, &vb), 1);
        assert_int_equal(va.len, vb.len);
        assert_memory_equal(va.ptr, vb.ptr, va.len);
    } else if (t == GOBLIN_TYPE_HASH) {
        assert_int_equal(goblin_hash_len(a, k), goblin_hash_len(b, k));
        assert_int_equal(goblin_hash_foreach(a, k, hash_pair_in_b, &c),
                         goblin_hash_len(a, k));
    } else if (t == GOBLIN_TYPE_LIST) {
        int64_t n = goblin_list_len(a, k);

        assert_int_equal(goblin_list_len(b, k), n);
        for (int64_t i = 0; i < n; i++) {
            assert_int_equal(goblin_list_index(a, k, i, &va), 1);
            assert_int_equal(goblin_list_index(b, k, i, &vb), 1);
            assert_int_equal(va.len, vb.len);
            assert_memory_equal(va.ptr, vb.ptr, va.len);
        }
    } else if (t == GOBLIN_TYPE_SET) {
        struct hcmp c2 = {b, k};

        assert_int_equal(goblin_set_card(a, k), goblin_set_card(b, k));
        assert_int_equal(goblin_set_foreach(a, k, member_in_b, &c2),
                         goblin_set_card(a, k));
    } else {
        assert_int_equal(goblin_zset_card(a, k), goblin_zset_card(b, k));
        assert_zsets_equal(a, b, k);
    }
}

/* Same keys, types, deadlines, encodings and contents. */
UTIL void assert_stores_equal(goblin_store *a, goblin_store *b)
{
    struct keylist l = {0};

    assert_int_equal(goblin_key_count(a), goblin_key_count(b));
    assert_int_equal(goblin_key_expires_count(a),
                     goblin_key_expires_count(b));
    goblin_key_foreach(a, collect_key, &l);
    for (size_t i = 0; i < l.n; i++) {
        assert_key_equal(a, b, l.k[i]);
        free((void *)l.k[i].ptr);
    }
    free(l.k);
}

/* Saves the fixture's store, loads it into a fresh one, compares, and
 * checks that a save of the loaded store is byte-identical. */
UTIL void round_trip_check(struct fixture *f, int check_bytes)
{
    struct mbuf m = {0}, m2 = {0};
    struct goblin_snapshot_result res;
    goblin_store *b = open_like(f);

    save_mem(f->st, &m);
    assert_int_equal(goblin_snapshot_load_mem(b, m.p, m.len, &res), 0);
    assert_int_equal(res.keys, goblin_key_count(f->st));
    assert_int_equal(res.bytes, m.len);
    assert_stores_equal(f->st, b);
    if (check_bytes) {
        /* Same keys in the same order with the same encodings, written
         * at the same clock: the very same bytes. */
        save_mem(b, &m2);
        assert_int_equal(m2.len, m.len);
        assert_memory_equal(m2.p, m.p, m.len);
        free(m2.p);
    }
    goblin_store_close(b);
    free(m.p);
}

#endif
