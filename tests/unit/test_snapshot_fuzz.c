/* test_snapshot_fuzz.c - hostile input to both loaders: every truncation
 * and every single-bit flip of a small snapshot, seeded random damage to
 * a bigger one, snapshots whose checksums are right but whose content is
 * not (huge counts, repeated keys and members, bad order, bad list
 * chunks), and a
 * hand-made RDB file in the older encodings (ziplist, zipmap, text
 * scores, deadlines in seconds, LZF) with its own truncations and flips.
 * Every refusal must leave the store empty and nothing leaked. */
#include <math.h>

#include "testutil.h"
#include "test_snapshot_util.h"
#include "snapshot/format.h"

static void small_store(goblin_store *st)
{
    assert_int_equal(goblin_str_set(st, S("s"), S("v"), NULL, NULL), 1);
    assert_int_equal(goblin_key_pexpire(st, S("s"), 5000, 0), 1);
    assert_int_equal(goblin_hash_set(st, S("h"), (struct goblin_slice[]){
                         S("f"), S("1")}, 1), 1);
    assert_int_equal(goblin_zset_add(st, S("z"), S("m"), 2.5), 1);
    assert_int_equal(goblin_list_push(st, S("l"), GOBLIN_LIST_TAIL,
                                      (struct goblin_slice[]){S("a"), S("")},
                                      2, 0), 2);
}

static void refused(goblin_store *b, const uint8_t *p, size_t n)
{
    struct goblin_snapshot_result res;
    int rc = goblin_snapshot_load_mem(b, p, n, &res);

    assert_true(rc < 0);
    assert_int_equal(res.code, rc);
    assert_true(res.message[0] != '\0');
    assert_int_equal(goblin_key_count(b), 0);
}

static void test_every_truncation_is_refused(void **state)
{
    struct fixture *f = *state;
    struct mbuf m;
    struct goblin_snapshot_result res;
    goblin_store *b = open_like(f);

    small_store(f->st);
    save_mem(f->st, &m);
    for (size_t n = 0; n < m.len; n++) {
        refused(b, m.p, n);
        assert_int_equal(goblin_snapshot_load_mem(b, m.p, n, &res),
                         GOBLIN_ESNAPTRUNC);
    }
    /* One byte too many is refused as well. */
    m.p = realloc(m.p, m.len + 1);
    m.p[m.len] = 0;
    refused(b, m.p, m.len + 1);
    assert_int_equal(goblin_snapshot_load_mem(b, m.p, m.len + 1, &res),
                     GOBLIN_ESNAPFORMAT);
    assert_int_equal(goblin_snapshot_load_mem(b, m.p, m.len, &res), 0);
    goblin_store_close(b);
    free(m.p);
}

static void test_every_bit_flip_is_refused(void **state)
{
    struct fixture *f = *state;
    struct mbuf m;
    goblin_store *b = open_like(f);

    small_store(f->st);
    save_mem(f->st, &m);
    for (size_t bit = 0; bit < m.len * 8; bit++) {
        m.p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        refused(b, m.p, m.len);
        m.p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    goblin_store_close(b);
    free(m.p);
}

static uint64_t rng(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

static void test_random_damage_to_a_big_snapshot(void **state)
{
    struct fixture *f = *state;
    struct mbuf m;
    uint64_t seed = 7;
    goblin_store *b = open_like(f);

    fill_every_kind(f->st, 1);
    save_mem(f->st, &m);
    for (int round = 0; round < 200; round++) {
        size_t at = (size_t)(rng(&seed) % m.len);
        uint8_t old = m.p[at];
        size_t cut = m.len - (size_t)(rng(&seed) % 64);

        m.p[at] = (uint8_t)rng(&seed);
        if (m.p[at] != old)
            refused(b, m.p, m.len);
        m.p[at] = old;
        if (cut < m.len)
            refused(b, m.p, cut);
    }
    goblin_store_close(b);
    free(m.p);
}

/* ---- snapshots with right checksums and wrong content ---- */

struct raw {
    uint8_t p[16384];
    size_t n;
};

static void raw_put(struct raw *r, const void *p, size_t n)
{
    memcpy(r->p + r->n, p, n);
    r->n += n;
}

static void raw_varint(struct raw *r, uint64_t v)
{
    r->n += varint_put(r->p + r->n, v);
}

/* A complete snapshot of one block holding payload, claiming keys. */
static void make_snap(struct mbuf *m, const struct raw *payload,
                      uint64_t keys)
{
    uint8_t *p = malloc(64 + 8 + payload->n + 8 + 32), *t;
    uint32_t chain, idx = 0;

    memset(p, 0, 64);
    memcpy(p, SNAP_MAGIC, 8);
    le32_put(p + SH_VERSION, 1);
    le32_put(p + SH_SIZE, 64);
    le64_put(p + SH_KEYS, keys);
    le32_put(p + SH_BLOCK, SNAP_BLOCK_SIZE);
    le32_put(p + SH_CRC, goblin__crc32c(0, p, SH_CRC));
    chain = goblin__crc32c(0, p, 64);
    m->len = 64;
    if (payload->n > 0) {
        le32_put(p + 64, (uint32_t)payload->n);
        le32_put(p + 68, goblin__snap_block_crc((uint32_t)payload->n, idx++,
                                                payload->p));
        chain = goblin__crc32c(chain, p + 64, 8);
        memcpy(p + 72, payload->p, payload->n);
        m->len += 8 + payload->n;
    }
    le32_put(p + m->len, 0);
    le32_put(p + m->len + 4, goblin__snap_block_crc(0, idx, NULL));
    chain = goblin__crc32c(chain, p + m->len, 8);
    m->len += 8;
    t = p + m->len;
    memset(t, 0, 32);
    memcpy(t, SNAP_END_MAGIC, 8);
    le64_put(t + ST_KEYS, keys);
    le64_put(t + ST_PAYLOAD, payload->n);
    le32_put(t + ST_BLOCKS, idx);
    le32_put(t + ST_CRC, goblin__crc32c(chain, t, ST_CRC));
    m->len += 32;
    m->p = p;
}

static void zset_record(struct raw *r, const char *key, size_t n,
                        const char *const *members, const double *scores)
{
    size_t body = 0;

    for (size_t i = 0; i < n; i++)
        body += 8 + 1 + strlen(members[i]);
    r->p[r->n++] = GOBLIN_TYPE_ZSET;
    raw_varint(r, strlen(key));
    raw_put(r, key, strlen(key));
    raw_varint(r, n);
    raw_varint(r, n);      /* one chunk of all the pairs */
    raw_varint(r, body);
    for (size_t i = 0; i < n; i++) {
        uint64_t bits;

        memcpy(&bits, &scores[i], 8);
        le64_put(r->p + r->n, bits);
        r->n += 8;
        raw_varint(r, strlen(members[i]));
        raw_put(r, members[i], strlen(members[i]));
    }
}

static void expect_format(struct fixture *f, const struct raw *r,
                          uint64_t keys, int code)
{
    struct mbuf m;
    struct goblin_snapshot_result res;
    goblin_store *b = open_like(f);

    make_snap(&m, r, keys);
    assert_int_equal(goblin_snapshot_load_mem(b, m.p, m.len, &res), code);
    assert_int_equal(goblin_key_count(b), code == 0 ? keys : 0);
    goblin_store_close(b);
    free(m.p);
}

static void test_valid_checksums_bad_content(void **state)
{
    struct fixture *f = *state;
    struct raw r = {.n = 0};
    static const char *mem[200];
    static char names[200][8];
    double sc[200];

    /* The baseline: one good sorted set loads. */
    for (int i = 0; i < 200; i++) {
        snprintf(names[i], sizeof(names[i]), "m%03d", i);
        mem[i] = names[i];
        sc[i] = i;
    }
    zset_record(&r, "z", 200, mem, sc);
    expect_format(f, &r, 1, 0);
    /* The same key twice. */
    zset_record(&r, "z", 200, mem, sc);
    expect_format(f, &r, 2, GOBLIN_ESNAPFORMAT);
    /* A member twice with different scores, in full and compact sets. */
    r.n = 0;
    mem[150] = "m007";
    zset_record(&r, "z", 200, mem, sc);
    expect_format(f, &r, 1, GOBLIN_ESNAPFORMAT);
    r.n = 0;
    zset_record(&r, "z", 3, (const char *[]){"a", "b", "a"},
                (double[]){1, 2, 3});
    expect_format(f, &r, 1, GOBLIN_ESNAPFORMAT);
    /* Out of order, and NaN. */
    r.n = 0;
    zset_record(&r, "z", 2, (const char *[]){"a", "b"}, (double[]){2, 1});
    expect_format(f, &r, 1, GOBLIN_ESNAPFORMAT);
    r.n = 0;
    zset_record(&r, "z", 1, (const char *[]){"a"}, (double[]){NAN});
    expect_format(f, &r, 1, GOBLIN_ESNAPFORMAT);
    /* Two chunks: in order they load; out of order across the edge
     * between them they are refused. */
    for (int bad = 0; bad < 2; bad++) {
        r.n = 0;
        r.p[r.n++] = GOBLIN_TYPE_ZSET;
        raw_varint(&r, 1);
        raw_put(&r, "z", 1);
        raw_varint(&r, 2);
        for (int i = 0; i < 2; i++) {
            double d = bad ? 2 - i : 1 + i;
            uint64_t bits;

            raw_varint(&r, 1);
            raw_varint(&r, 10);
            memcpy(&bits, &d, 8);
            le64_put(r.p + r.n, bits);
            r.n += 8;
            raw_put(&r, i ? "\1b" : "\1a", 2);
        }
        expect_format(f, &r, 1, bad ? GOBLIN_ESNAPFORMAT : 0);
    }
    /* A huge count in a small body, and a body past the end. */
    r.n = 0;
    r.p[r.n++] = GOBLIN_TYPE_HASH;
    raw_varint(&r, 1);
    raw_put(&r, "h", 1);
    raw_varint(&r, (uint64_t)1 << 31);
    raw_varint(&r, 4);
    raw_put(&r, "\1a\1b", 4);
    expect_format(f, &r, 1, GOBLIN_ESNAPFORMAT);
    r.n = 0;
    r.p[r.n++] = GOBLIN_TYPE_STRING;
    raw_varint(&r, 1);
    raw_put(&r, "s", 1);
    raw_varint(&r, (uint64_t)1 << 40);
    expect_format(f, &r, 1, GOBLIN_ESNAPFORMAT);
    r.n = 0;
    r.p[r.n++] = GOBLIN_TYPE_STRING;
    raw_varint(&r, 1);
    raw_put(&r, "s", 1);
    raw_varint(&r, 1000);
    expect_format(f, &r, 1, GOBLIN_ESNAPTRUNC);
    /* A repeated hash field; an unknown tag; fewer records than keys. */
    r.n = 0;
    r.p[r.n++] = GOBLIN_TYPE_HASH;
    raw_varint(&r, 1);
    raw_put(&r, "h", 1);
    raw_varint(&r, 2);
    raw_varint(&r, 8);
    raw_put(&r, "\1a\1b\1a\1c", 8);
    expect_format(f, &r, 1, GOBLIN_ESNAPFORMAT);
    /* Lists (tag 0x20: the type's bit 2): two chunks load; a chunk
     * count past the list's, an empty list, an element running past
     * its chunk, and a type past the last known are refused. */
    for (int bad = 0; bad < 5; bad++) {
        r.n = 0;
        r.p[r.n++] = bad == 4 ? 0x21 : 0x20;
        raw_varint(&r, 1);
        raw_put(&r, "l", 1);
        raw_varint(&r, bad == 2 ? 0 : 3);
        raw_varint(&r, bad == 1 ? 3 : 2);
        raw_varint(&r, 4);
        raw_put(&r, bad == 3 ? "\1a\3b" : "\1a\1b", 4);
        raw_varint(&r, 1);
        raw_varint(&r, 1);
        raw_put(&r, "\0", 1);
        expect_format(f, &r, 1, bad ? GOBLIN_ESNAPFORMAT : 0);
    }
    r.n = 0;
    r.p[r.n++] = 0x80 | GOBLIN_TYPE_STRING;
    expect_format(f, &r, 1, GOBLIN_ESNAPFORMAT);
    r.n = 0;
    expect_format(f, &r, 1, GOBLIN_ESNAPFORMAT);
}

/* ---- a hand-made RDB file (version 9) ---- */

struct rdbw {
    uint8_t p[1024];
    size_t n;
};

static void w_bytes(struct rdbw *w, const void *p, size_t n)
{
    memcpy(w->p + w->n, p, n);
    w->n += n;
}

static void w_byte(struct rdbw *w, uint8_t b)
{
    w->p[w->n++] = b;
}

static void w_str(struct rdbw *w, const char *s, size_t n)
{
    w_byte(w, (uint8_t)n); /* all test strings are under 64 bytes */
    w_bytes(w, s, n);
}

#define W_STR(w, lit) w_str((w), (lit), sizeof(lit) - 1)

/* A ziplist of the given raw entries (each: encoding + data). */
static void w_ziplist(struct rdbw *w, const char *const *ents,
                      const size_t *lens, size_t n)
{
    uint8_t zl[256];
    size_t i = 10, prev = 0, tail = 10;

    for (size_t k = 0; k < n; k++) {
        tail = i;
        zl[i++] = (uint8_t)prev;
        memcpy(zl + i, ents[k], lens[k]);
        i += lens[k];
        prev = 1 + lens[k];
    }
    zl[i++] = 0xFF;
    le32_put(zl, (uint32_t)i);
    le32_put(zl + 4, (uint32_t)tail);
    zl[8] = (uint8_t)n;
    zl[9] = 0;
    w_byte(w, (uint8_t)i);
    w_bytes(w, zl, i);
}

static void make_rdb9(struct mbuf *m)
{
    struct rdbw w = {.n = 0};
    struct goblin__crc64 *c = malloc(sizeof(*c));
    uint64_t crc;
    static const uint8_t lzf[] = {0x00, 'a', 0xE0, 0x00, 0x00, 0x00, 'b'};

    w_bytes(&w, "REDIS0009", 9);
    w_byte(&w, 0xFA);
    W_STR(&w, "redis-ver");
    W_STR(&w, "5.0.7");
    w_byte(&w, 0xFE);
    w_byte(&w, 0);
    w_byte(&w, 0xFB);
    w_byte(&w, 5);
    w_byte(&w, 1);
    /* string, LZF: "aaaaaaaaaab" */
    w_byte(&w, 0);
    W_STR(&w, "lzf");
    w_byte(&w, 0xC3);
    w_byte(&w, sizeof(lzf));
    w_byte(&w, 11);
    w_bytes(&w, lzf, sizeof(lzf));
    /* string with a deadline in seconds and LRU/LFU hints */
    w_byte(&w, 0xFD);
    w_bytes(&w, "\x00\x57\x86\xf4", 4); /* 4102444800 s */
    w_byte(&w, 0xF8);
    w_byte(&w, 3);
    w_byte(&w, 0xF9);
    w_byte(&w, 7);
    w_byte(&w, 0);
    W_STR(&w, "exp");
    w_byte(&w, 0xC1); /* int16 */
    w_bytes(&w, "\x2e\xfb", 2); /* -1234 */
    /* hash as ziplist: a=1 (immediate), bb=hello, c=-300 (int16) */
    w_byte(&w, 13);
    W_STR(&w, "zl");
    w_ziplist(&w, (const char *[]){"\x01" "a", "\xF2", "\x02" "bb",
                                   "\x05" "hello", "\x01" "c",
                                   "\xC0\xd4\xfe"},
              (size_t[]){2, 1, 3, 6, 2, 3}, 6);
    /* hash as zipmap: f1=v1 */
    w_byte(&w, 9);
    W_STR(&w, "zm");
    W_STR(&w, "\x01\x02" "f1\x02\x00" "v1\xff");
    /* sorted set, text scores: a=1.5, b=inf */
    w_byte(&w, 3);
    W_STR(&w, "z3");
    w_byte(&w, 2);
    W_STR(&w, "b");
    w_byte(&w, 254);
    W_STR(&w, "a");
    W_STR(&w, "1.5");
    /* sorted set as ziplist: x=2.5 (text), y=7 (int8) */
    w_byte(&w, 12);
    W_STR(&w, "zz");
    w_ziplist(&w, (const char *[]){"\x01" "x", "\x03" "2.5", "\x01" "y",
                                   "\xFE\x07"},
              (size_t[]){2, 4, 2, 2}, 4);
    w_byte(&w, 0xFF);
    goblin__crc64_init(c);
    crc = goblin__crc64(c, 0, w.p, w.n);
    le64_put(w.p + w.n, crc);
    w.n += 8;
    free(c);
    m->len = w.n;
    m->p = malloc(w.n);
    memcpy(m->p, w.p, w.n);
}

static void test_rdb9_older_encodings(void **state)
{
    struct fixture *f = *state;
    struct mbuf m;
    struct goblin_snapshot_result res;
    struct goblin_slice v;
    double d;
    goblin_store *b = open_like(f);

    make_rdb9(&m);
    assert_int_equal(goblin_rdb_import_mem(b, m.p, m.len, 0, &res), 0);
    assert_int_equal(res.version, 9);
    assert_int_equal(res.keys, 6);
    assert_int_equal(goblin_str_get(b, S("lzf"), &v), 1);
    assert_int_equal(v.len, 11);
    assert_memory_equal(v.ptr, "aaaaaaaaaab", 11);
    assert_int_equal(goblin_str_get(b, S("exp"), &v), 1);
    assert_memory_equal(v.ptr, "-1234", 5);
    assert_int_equal(goblin_key_pexpiretime(b, S("exp")), 4102444800000LL);
    assert_int_equal(goblin_hash_len(b, S("zl")), 3);
    assert_int_equal(goblin_hash_get(b, S("zl"), S("a"), &v), 1);
    assert_memory_equal(v.ptr, "1", 1);
    assert_int_equal(goblin_hash_get(b, S("zl"), S("c"), &v), 1);
    assert_int_equal(v.len, 4);
    assert_memory_equal(v.ptr, "-300", 4);
    assert_int_equal(goblin_hash_get(b, S("zm"), S("f1"), &v), 1);
    assert_memory_equal(v.ptr, "v1", 2);
    assert_int_equal(goblin_zset_score(b, S("z3"), S("b"), &d), 1);
    assert_true(isinf(d) && d > 0);
    assert_int_equal(goblin_zset_score(b, S("zz"), S("x"), &d), 1);
    assert_true(d == 2.5);
    assert_int_equal(goblin_zset_score(b, S("zz"), S("y"), &d), 1);
    assert_true(d == 7);
    goblin_store_flush(b);
    /* Every truncation and every bit flip is refused. */
    for (size_t n = 0; n < m.len; n++) {
        assert_true(goblin_rdb_import_mem(b, m.p, n, 0, &res) < 0);
        assert_int_equal(goblin_key_count(b), 0);
    }
    for (size_t bit = 0; bit < m.len * 8; bit++) {
        m.p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        assert_true(goblin_rdb_import_mem(b, m.p, m.len, 0, &res) < 0);
        assert_int_equal(goblin_key_count(b), 0);
        m.p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    goblin_store_close(b);
    free(m.p);
}

static void test_rdb_import_allocation_failures(void **state)
{
    struct fixture *f = *state;
    struct mbuf m;
    struct goblin_snapshot_result res;
    int rc = GOBLIN_ENOMEM;

    make_rdb9(&m);
    for (long n = 0; rc == GOBLIN_ENOMEM; n++) {
        size_t before = f->counts.live_bytes;
        goblin_store *b = open_like(f);

        f->counts.fail_after = n;
        rc = goblin_rdb_import_mem(b, m.p, m.len, 0, &res);
        f->counts.fail_after = -1;
        assert_true(rc == GOBLIN_ENOMEM || rc == 0);
        assert_int_equal(goblin_key_count(b), rc == 0 ? 6 : 0);
        goblin_store_close(b);
        assert_int_equal(f->counts.live_bytes, before);
    }
    free(m.p);
}

static void test_rdb_hostile_lengths(void **state)
{
    struct fixture *f = *state;
    struct goblin_snapshot_result res;
    goblin_store *b = open_like(f);
    /* A string claiming 2^62 bytes; a hash claiming 2^31 pairs; an LZF
     * string claiming a huge output; version 12. */
    static const uint8_t big_str[] = "REDIS0010\x00\x01k\x81\x40\0\0\0\0\0\0\0";
    static const uint8_t big_hash[] = "REDIS0010\x04\x01h\x80\x80\0\0\0xx";
    static const uint8_t big_lzf[] = "REDIS0010\x00\x01k\xC3\x02\x80\x7f\xff"
                                     "\xff\xff\x00\x61";
    size_t before = f->counts.live_bytes;

    assert_int_equal(goblin_rdb_import_mem(b, big_str, sizeof(big_str) - 1,
                                           0, &res), GOBLIN_ESNAPTRUNC);
    assert_int_equal(goblin_rdb_import_mem(b, big_hash, sizeof(big_hash) - 1,
                                           0, &res), GOBLIN_ESNAPFORMAT);
    assert_int_equal(goblin_rdb_import_mem(b, big_lzf, sizeof(big_lzf) - 1,
                                           0, &res), GOBLIN_ESNAPFORMAT);
    assert_int_equal(goblin_rdb_import_mem(b, "REDIS0012\xff", 10, 0, &res),
                     GOBLIN_ESNAPVERSION);
    assert_non_null(strstr(res.message, "version 12"));
    assert_int_equal(f->counts.live_bytes, before);
    goblin_store_close(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_every_truncation_is_refused),
        FIXTURE_TEST(test_every_bit_flip_is_refused),
        FIXTURE_TEST(test_random_damage_to_a_big_snapshot),
        FIXTURE_TEST(test_valid_checksums_bad_content),
        FIXTURE_TEST(test_rdb9_older_encodings),
        FIXTURE_TEST(test_rdb_import_allocation_failures),
        FIXTURE_TEST(test_rdb_hostile_lengths),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
