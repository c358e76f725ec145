/* test_snapshot.c - Goblin's snapshot format: round trips of every type
 * and encoding, compared by iteration; the checksums; and the API's
 * edges (non-empty store, expired keys, bad versions, allocation
 * failures, the save bookkeeping). Truncation and bit flips are in
 * test_snapshot_fuzz.c. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "test_snapshot_util.h"

/* ---- checksums ---- */

static void test_crc32c_check_values(void **state)
{
    uint8_t buf[1000];

    (void)state;
    assert_int_equal(goblin__crc32c(0, "123456789", 9), 0xE3069283u);
    assert_int_equal(goblin__crc32c_sw(0, "123456789", 9), 0xE3069283u);
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)(i * 7 + 3);
    /* Every length and alignment: both implementations agree, and a
     * split computation equals the whole. */
    for (size_t off = 0; off < 9; off++) {
        for (size_t n = 0; n + off <= 300; n++) {
            uint32_t sw = goblin__crc32c_sw(0, buf + off, n);

            assert_int_equal(goblin__crc32c_hw(0, buf + off, n), sw);
            assert_int_equal(goblin__crc32c(goblin__crc32c(0, buf + off,
                                                           n / 3),
                                            buf + off + n / 3, n - n / 3),
                             sw);
        }
    }
}

static void test_crc64_check_value(void **state)
{
    struct goblin__crc64 *c = malloc(sizeof(*c));
    uint8_t buf[100];
    uint64_t whole;

    (void)state;
    goblin__crc64_init(c);
    assert_true(goblin__crc64(c, 0, "123456789", 9) ==
                0xe9c6d914c4b8d9caULL);
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)(i * 13);
    whole = goblin__crc64(c, 0, buf, sizeof(buf));
    for (size_t k = 0; k <= sizeof(buf); k++)
        assert_true(goblin__crc64(c, goblin__crc64(c, 0, buf, k), buf + k,
                                  sizeof(buf) - k) == whole);
    free(c);
}

static void test_lzf_decompress(void **state)
{
    /* "aaaaaaaaaab": literal 'a', back reference of 9 at distance 1,
     * literal 'b'. */
    const uint8_t in[] = {0x00, 'a', 0xE0, 0x00, 0x00, 0x00, 'b'};
    uint8_t out[16];

    (void)state;
    /* ctrl 0xE0: len 7 + next byte 0 = 7, +2 = 9; distance 0 + 1. */
    assert_int_equal(goblin__lzf_decompress(in, sizeof(in), out, 11), 0);
    assert_memory_equal(out, "aaaaaaaaaab", 11);
    /* Wrong expected size, short output, a reference before the start. */
    assert_int_equal(goblin__lzf_decompress(in, sizeof(in), out, 12), -1);
    assert_int_equal(goblin__lzf_decompress(in, sizeof(in), out, 5), -1);
    assert_int_equal(goblin__lzf_decompress(in + 2, 3, out, 9), -1);
    assert_int_equal(goblin__lzf_decompress(in, 3, out, 16), -1);
}

/* ---- round trips ---- */

static void test_empty_store_round_trip(void **state)
{
    struct fixture *f = *state;
    struct mbuf m = {0};
    struct goblin_snapshot_result res;
    goblin_store *b = open_like(f);

    save_mem(f->st, &m);
    assert_int_equal(m.len, 64 + 8 + 32);
    assert_int_equal(goblin_snapshot_load_mem(b, m.p, m.len, &res), 0);
    assert_int_equal(res.keys, 0);
    assert_int_equal(goblin_key_count(b), 0);
    goblin_store_close(b);
    free(m.p);
}

static void test_every_type_round_trips(void **state)
{
    struct fixture *f = *state;

    fill_every_kind(f->st, 1);
    round_trip_check(f, 1);
}

static void test_big_collections_span_blocks(void **state)
{
    struct fixture *f = *state;

    /* 30000 pairs of ~30 bytes: about 1 MB, several 256 KiB blocks, so
     * bodies and even single values cross block edges. */
    fill_big(f->st, 30000);
    round_trip_check(f, 0);
}

static void test_round_trip_through_a_file(void **state)
{
    struct fixture *f = *state;
    struct goblin_snapshot_result res;
    char path[64];
    goblin_store *b = open_like(f);

    fill_every_kind(f->st, 1);
    tmp_path(path, sizeof(path), "rt");
    assert_int_equal(goblin_snapshot_save(f->st, path, &res), 0);
    assert_int_equal(res.keys, goblin_key_count(f->st));
    assert_int_equal(goblin_snapshot_verify(path, NULL, &res), 0);
    assert_int_equal(res.keys, goblin_key_count(f->st));
    assert_int_equal(goblin_snapshot_load(b, path, &res), 0);
    assert_stores_equal(f->st, b);
    goblin_store_close(b);
    /* A second save replaces the file; no temporary is left behind. */
    assert_int_equal(goblin_snapshot_save(f->st, path, NULL), 0);
    assert_int_equal(count_tmp_files(path), 0);
    unlink(path);
}

static void test_verify_finds_damage_and_save_fd_takes_a_pipe(void **state)
{
    struct fixture *f = *state;
    struct goblin_snapshot_result res;
    struct mbuf m = {0};
    char path[64];
    int fds[2];
    FILE *out;
    goblin_store *b = open_like(f);

    fill_every_kind(f->st, 0);
    save_mem(f->st, &m);
    tmp_path(path, sizeof(path), "verify");
    m.p[m.len / 2] ^= 1;
    out = fopen(path, "wb");
    fwrite(m.p, 1, m.len, out);
    fclose(out);
    assert_int_equal(goblin_snapshot_verify(path, &f->alloc, &res),
                     GOBLIN_ESNAPCRC);
    assert_non_null(strstr(res.message, "checksum mismatch in block 0"));
    unlink(path);
    m.p[m.len / 2] ^= 1;
    /* A small store through a pipe: written whole, read back whole. */
    assert_int_equal(pipe(fds), 0);
    goblin_store_flush(f->st);
    assert_int_equal(goblin_str_set(f->st, S("k"), S("v"), NULL, NULL), 1);
    assert_int_equal(goblin_snapshot_save_fd(f->st, fds[1], &res), 0);
    close(fds[1]);
    free(m.p);
    m.p = malloc(res.bytes);
    m.len = (size_t)read(fds[0], m.p, res.bytes);
    close(fds[0]);
    assert_int_equal(m.len, res.bytes);
    assert_int_equal(goblin_snapshot_load_mem(b, m.p, m.len, &res), 0);
    assert_stores_equal(f->st, b);
    goblin_store_close(b);
    free(m.p);
}

static void test_expired_keys_are_left_out_and_skipped(void **state)
{
    struct fixture *f = *state;
    struct mbuf m = {0};
    struct goblin_snapshot_result res;
    goblin_store *b;
    int64_t now = f->clock.now_ms;

    assert_int_equal(goblin_str_set(f->st, S("gone"), S("v"), NULL, NULL),
                     1);
    assert_int_equal(goblin_key_pexpireat(f->st, S("gone"), now + 10, 0), 1);
    assert_int_equal(goblin_hash_set(f->st, S("h"), (struct goblin_slice[]){
                         S("f"), S("v")}, 1), 1);
    assert_int_equal(goblin_key_pexpireat(f->st, S("h"), now + 100, 0), 1);
    assert_int_equal(goblin_zset_add(f->st, S("z"), S("m"), 1), 1);
    assert_int_equal(goblin_key_pexpireat(f->st, S("z"), now + 1000, 0), 1);
    assert_int_equal(goblin_str_set(f->st, S("keep"), S("v"), NULL, NULL),
                     1);
    /* Saved at now + 50: "gone" is left out. */
    f->clock.now_ms = now + 50;
    save_mem(f->st, &m);
    /* Loaded at now + 500: "h" has expired since and is skipped. */
    f->clock.now_ms = now + 500;
    b = open_like(f);
    assert_int_equal(goblin_snapshot_load_mem(b, m.p, m.len, &res), 0);
    assert_int_equal(res.keys, 2);
    assert_int_equal(res.expired, 1);
    assert_int_equal(res.expires, 1);
    assert_int_equal(goblin_key_exists(b, S("h")), 0);
    assert_int_equal(goblin_key_exists(b, S("gone")), 0);
    assert_int_equal(goblin_key_pexpiretime(b, S("z")), now + 1000);
    assert_int_equal(goblin_key_pexpiretime(b, S("keep")), -1);
    goblin_store_close(b);
    free(m.p);
}

static void test_load_needs_an_empty_store(void **state)
{
    struct fixture *f = *state;
    struct mbuf m = {0};
    struct goblin_snapshot_result res;

    assert_int_equal(goblin_str_set(f->st, S("k"), S("v"), NULL, NULL), 1);
    save_mem(f->st, &m);
    assert_int_equal(goblin_snapshot_load_mem(f->st, m.p, m.len, &res),
                     GOBLIN_EINVAL);
    assert_int_equal(goblin_key_count(f->st), 1);
    free(m.p);
}

static void test_load_reports_no_change_and_keeps_dirty(void **state)
{
    struct fixture *f = *state;
    struct mbuf m = {0};
    goblin_store *b;

    fill_every_kind(f->st, 0);
    save_mem(f->st, &m);
    b = open_like(f);
    goblin_store_reset_dirty(b);
    assert_int_equal(goblin_snapshot_load_mem(b, m.p, m.len, NULL), 0);
    assert_int_equal(goblin_store_dirty(b), 0);
    goblin_store_close(b);
    free(m.p);
}

/* Rewrites a saved snapshot (no function library, no field deadline)
 * as version v wrote it: the version field, then the header and trailer
 * checksums. */
static void to_version(struct mbuf *m, uint32_t v)
{
    uint32_t len, chain;
    size_t off = 64;

    rewrite_header_u32(m, 8, v);
    chain = goblin__crc32c(0, m->p, 64);
    do {
        memcpy(&len, m->p + off, 4);
        chain = goblin__crc32c(chain, m->p + off, 8);
        off += 8 + len;
    } while (len != 0);
    chain = goblin__crc32c(chain, m->p + off, 28);
    memcpy(m->p + off + 28, &chain, 4);
}

static void test_version_1_files_still_load(void **state)
{
    struct fixture *f = *state;
    struct mbuf m = {0};
    struct goblin_snapshot_result res;
    goblin_store *b;

    fill_every_kind(f->st, 0);
    save_mem(f->st, &m);
    to_version(&m, 1);
    b = open_like(f);
    assert_int_equal(goblin_snapshot_load_mem(b, m.p, m.len, &res), 0);
    assert_int_equal(res.version, 1);
    assert_int_equal(goblin_key_count(b), goblin_key_count(f->st));
    goblin_store_close(b);
    free(m.p);
}

static void test_version_2_files_still_load(void **state)
{
    struct fixture *f = *state;
    struct mbuf m = {0};
    struct goblin_snapshot_result res;
    goblin_store *b;

    fill_every_kind(f->st, 1);
    save_mem(f->st, &m);
    to_version(&m, 2);
    b = open_like(f);
    assert_int_equal(goblin_snapshot_load_mem(b, m.p, m.len, &res), 0);
    assert_int_equal(res.version, 2);
    assert_stores_equal(f->st, b);
    goblin_store_close(b);
    free(m.p);
}

/* Version 3: hash field deadlines. A field whose deadline passed by the
 * load is left out, a hash left with none is skipped as expired, and a
 * version 2 file cannot hold them. */
static void hset1(goblin_store *st, struct goblin_slice key, const char *f)
{
    struct goblin_slice fv[2] = {slice_of(f, strlen(f)), S("v")};

    assert_true(goblin_hash_set(st, key, fv, 1) >= 0);
}

static void hexpire1(goblin_store *st, struct goblin_slice key,
                     const char *f, int64_t when)
{
    struct goblin_slice fs = slice_of(f, strlen(f));
    int8_t code;

    assert_int_equal(goblin_hash_field_expire(st, key, &fs, 1, when, 0,
                                              &code), 1);
    assert_int_equal(code, 1);
}

static int64_t hdeadline(goblin_store *st, struct goblin_slice key,
                         const char *f)
{
    struct goblin_slice fs = slice_of(f, strlen(f));
    int64_t w;

    assert_int_equal(goblin_hash_field_deadline(st, key, &fs, 1, &w), 0);
    return w;
}

static void fill_field_deadlines(goblin_store *st, int64_t now)
{
    char name[16];

    hset1(st, S("small"), "a");
    hset1(st, S("small"), "b");
    hset1(st, S("small"), "c");
    hexpire1(st, S("small"), "a", now + 100);
    hexpire1(st, S("small"), "b", now + 5000);
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof(name), "f%d", i);
        hset1(st, S("big"), name);
        if (i % 3 == 0)
            hexpire1(st, S("big"), name, now + 100 + i * 20);
    }
    hset1(st, S("doomed"), "x");
    hexpire1(st, S("doomed"), "x", now + 50);
}

static void test_field_deadlines_round_trip(void **state)
{
    struct fixture *f = *state;
    struct mbuf m = {0}, m2 = {0};
    struct goblin_snapshot_result res;
    int64_t now = f->clock.now_ms;
    goblin_store *b;

    fill_field_deadlines(f->st, now);
    save_mem(f->st, &m);
    /* Loaded at once: everything, deadlines and all. */
    b = open_like(f);
    assert_int_equal(goblin_snapshot_load_mem(b, m.p, m.len, &res), 0);
    assert_int_equal(res.version, 3);
    assert_stores_equal(f->st, b);
    assert_int_equal(hdeadline(b, S("small"), "a"), now + 100);
    assert_int_equal(hdeadline(b, S("small"), "c"), -1);
    assert_int_equal(hdeadline(b, S("big"), "f297"), now + 100 + 297 * 20);
    assert_int_equal(hdeadline(b, S("big"), "f298"), -1);
    assert_int_equal(goblin__store_check(b), 0);
    goblin_store_close(b);
    /* Loaded later: due fields are left out, "doomed" as a whole. */
    f->clock.now_ms = now + 1000;
    b = open_like(f);
    assert_int_equal(goblin_snapshot_load_mem(b, m.p, m.len, &res), 0);
    assert_int_equal(res.keys, 2);
    assert_int_equal(res.expired, 1);
    assert_int_equal(goblin_key_exists(b, S("doomed")), 0);
    assert_int_equal(goblin_hash_len(b, S("small")), 2);
    assert_int_equal(hdeadline(b, S("small"), "a"), -2);
    assert_int_equal(hdeadline(b, S("small"), "b"), now + 5000);
    assert_int_equal(goblin_hash_len(b, S("big")), 300 - 15);
    assert_int_equal(goblin__store_check(b), 0);
    /* Saved again by the loaded store: the same file. */
    f->clock.now_ms = now;
    goblin_store_close(b);
    b = open_like(f);
    assert_int_equal(goblin_snapshot_load_mem(b, m.p, m.len, &res), 0);
    save_mem(b, &m2);
    goblin_store_close(b);
    assert_int_equal(m2.len, m.len);
    assert_memory_equal(m2.p + 64, m.p + 64, m.len - 64 - 32);
    /* A version 2 file has no field deadlines. */
    to_version(&m, 2);
    b = open_like(f);
    assert_int_equal(goblin_snapshot_load_mem(b, m.p, m.len, &res),
                     GOBLIN_ESNAPFORMAT);
    assert_int_equal(goblin_key_count(b), 0);
    goblin_store_close(b);
    free(m.p);
    free(m2.p);
}

static void test_field_deadlines_load_allocation_failures(void **state)
{
    struct fixture *f = *state;
    struct mbuf m = {0};
    struct goblin_snapshot_result res;
    int rc = GOBLIN_ENOMEM;

    fill_field_deadlines(f->st, f->clock.now_ms);
    save_mem(f->st, &m);
    for (long n = 0; rc == GOBLIN_ENOMEM; n++) {
        size_t before = f->counts.live_bytes;
        goblin_store *b = open_like(f);

        f->counts.fail_after = n;
        rc = goblin_snapshot_load_mem(b, m.p, m.len, &res);
        f->counts.fail_after = -1;
        if (rc == GOBLIN_ENOMEM) {
            assert_int_equal(goblin_key_count(b), 0);
        } else {
            assert_int_equal(rc, 0);
            assert_stores_equal(f->st, b);
            assert_int_equal(hdeadline(b, S("small"), "b"),
                             f->clock.now_ms + 5000);
        }
        goblin_store_close(b);
        assert_int_equal(f->counts.live_bytes, before);
    }
    free(m.p);
}

/* ---- refusals ---- */

static void test_wrong_magic_version_and_missing_file(void **state)
{
    struct fixture *f = *state;
    struct mbuf m = {0};
    struct goblin_snapshot_result res;
    char path[64];

    fill_every_kind(f->st, 0);
    save_mem(f->st, &m);
    goblin_store *b = open_like(f);

    /* A version after this library's, with a correct header checksum. */
    rewrite_header_u32(&m, 8, GOBLIN_SNAPSHOT_VERSION + 1);
    assert_int_equal(goblin_snapshot_load_mem(b, m.p, m.len, &res),
                     GOBLIN_ESNAPVERSION);
    assert_int_equal(res.offset, 8);
    assert_non_null(strstr(res.message, "version 4"));
    assert_int_equal(goblin_key_count(b), 0);
    /* An RDB file is not a snapshot. */
    assert_int_equal(goblin_snapshot_load_mem(b, "REDIS0010\xff", 10, &res),
                     GOBLIN_ESNAPMAGIC);
    assert_int_equal(goblin_snapshot_load_mem(b, "", 0, &res),
                     GOBLIN_ESNAPTRUNC);
    tmp_path(path, sizeof(path), "missing");
    assert_int_equal(goblin_snapshot_load(b, path, &res), -ENOENT);
    assert_non_null(strstr(res.message, path));
    assert_int_equal(goblin_snapshot_verify(path, NULL, &res), -ENOENT);
    goblin_store_close(b);
    free(m.p);
}

static void test_crc_error_names_block_and_offset(void **state)
{
    struct fixture *f = *state;
    struct mbuf m = {0};
    struct goblin_snapshot_result res;
    goblin_store *b = open_like(f);

    fill_big(f->st, 30000);
    save_mem(f->st, &m);
    /* A byte in the middle of the second block. */
    uint32_t len0;

    memcpy(&len0, m.p + 64, 4);
    size_t at = 64 + 8 + len0;

    m.p[at + 8 + 1000] ^= 0x10;
    assert_int_equal(goblin_snapshot_load_mem(b, m.p, m.len, &res),
                     GOBLIN_ESNAPCRC);
    assert_int_equal(res.offset, at);
    assert_non_null(strstr(res.message, "block 1"));
    assert_int_equal(goblin_key_count(b), 0);
    goblin_store_close(b);
    free(m.p);
}

static void test_load_allocation_failures(void **state)
{
    struct fixture *f = *state;
    struct mbuf m = {0};
    struct goblin_snapshot_result res;
    int rc = GOBLIN_ENOMEM;

    fill_every_kind(f->st, 1);
    save_mem(f->st, &m);
    for (long n = 0; rc == GOBLIN_ENOMEM; n++) {
        size_t before = f->counts.live_bytes;
        goblin_store *b = open_like(f);

        f->counts.fail_after = n;
        rc = goblin_snapshot_load_mem(b, m.p, m.len, &res);
        f->counts.fail_after = -1;
        if (rc == GOBLIN_ENOMEM) {
            assert_int_equal(goblin_key_count(b), 0);
            assert_int_equal(res.code, GOBLIN_ENOMEM);
        } else {
            assert_int_equal(rc, 0);
            assert_stores_equal(f->st, b);
        }
        goblin_store_close(b);
        assert_int_equal(f->counts.live_bytes, before);
    }
    free(m.p);
}

static void test_save_allocation_failure(void **state)
{
    struct fixture *f = *state;
    struct goblin_snapshot_result res;
    int fd = open("/dev/null", O_WRONLY);

    fill_every_kind(f->st, 0);
    f->counts.fail_after = 0;
    assert_int_equal(goblin_snapshot_save_fd(f->st, fd, &res),
                     GOBLIN_ENOMEM);
    f->counts.fail_after = -1;
    assert_int_equal(goblin_snapshot_save_fd(f->st, fd, &res), 0);
    close(fd);
}

static void test_save_to_a_missing_directory_fails_cleanly(void **state)
{
    struct fixture *f = *state;
    struct goblin_snapshot_result res;

    assert_int_equal(goblin_snapshot_save(f->st, "/nonexistent/dir/x.gsn",
                                          &res), -ENOENT);
    assert_non_null(strstr(res.message, "/nonexistent/dir/x.gsn"));
}

static void test_rec_obj_matches_lookup(void **state)
{
    struct fixture *f = *state;
    void **slot;
    uint32_t id;

    /* Keys of every length modulo 8, so the object's alignment varies. */
    for (int len = 1; len <= 17; len++) {
        char key[32];

        memset(key, 'k', (size_t)len);
        assert_int_equal(goblin_zset_add(f->st, slice_of(key, (size_t)len),
                                         S("m"), 1), 1);
        assert_int_equal(goblin__key_lookup(f->st, slice_of(key, (size_t)len),
                                            GOBLIN_TYPE_ZSET, &slot), 1);
        assert_int_equal(goblin__key_find(f->st, slice_of(key, (size_t)len),
                                          &id), 1);
        assert_ptr_equal(goblin__snap_rec_obj(goblin__key_rec(f->st, id)),
                         *slot);
        if (len == 9)
            assert_int_equal(goblin_key_pexpire(f->st, slice_of(key, 9),
                                                10000, 0), 1);
    }
}

/* ---- bookkeeping ---- */

static void test_persist_info_settles_dirty(void **state)
{
    struct fixture *f = *state;
    struct goblin_persist_info pi;

    goblin_persist_init(&pi, f->st);
    assert_int_equal(pi.last_save_ms, f->clock.now_ms);
    assert_int_equal(goblin_str_set(f->st, S("a"), S("1"), NULL, NULL), 1);
    assert_int_equal(goblin_str_set(f->st, S("b"), S("1"), NULL, NULL), 1);
    goblin_persist_begin(&pi, f->st);
    assert_int_equal(pi.in_progress, 1);
    /* A write while a background save runs stays unsaved. */
    assert_int_equal(goblin_str_set(f->st, S("c"), S("1"), NULL, NULL), 1);
    f->clock.now_ms += 1500;
    goblin_persist_end(&pi, f->st, 0, 123);
    assert_int_equal(goblin_store_dirty(f->st), 1);
    assert_int_equal(pi.saves, 1);
    assert_int_equal(pi.last_save_ms, f->clock.now_ms);
    assert_int_equal(pi.last_duration_ms, 1500);
    assert_int_equal(pi.last_bytes, 123);
    /* A failed save changes neither dirty nor the last save time. */
    goblin_persist_begin(&pi, f->st);
    f->clock.now_ms += 10;
    goblin_persist_end(&pi, f->st, -EIO, 0);
    assert_int_equal(goblin_store_dirty(f->st), 1);
    assert_int_equal(pi.last_status, -EIO);
    assert_int_equal(pi.last_save_ms, f->clock.now_ms - 10);
    assert_int_equal(pi.saves, 1);
    assert_string_equal(goblin_snapshot_strerror(GOBLIN_ESNAPCRC),
                        "snapshot checksum mismatch");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c_check_values),
        cmocka_unit_test(test_crc64_check_value),
        cmocka_unit_test(test_lzf_decompress),
        FIXTURE_TEST(test_empty_store_round_trip),
        FIXTURE_TEST(test_every_type_round_trips),
        FIXTURE_TEST(test_big_collections_span_blocks),
        FIXTURE_TEST(test_round_trip_through_a_file),
        FIXTURE_TEST(test_verify_finds_damage_and_save_fd_takes_a_pipe),
        FIXTURE_TEST(test_expired_keys_are_left_out_and_skipped),
        FIXTURE_TEST(test_load_needs_an_empty_store),
        FIXTURE_TEST(test_load_reports_no_change_and_keeps_dirty),
        FIXTURE_TEST(test_version_1_files_still_load),
        FIXTURE_TEST(test_version_2_files_still_load),
        FIXTURE_TEST(test_field_deadlines_round_trip),
        FIXTURE_TEST(test_field_deadlines_load_allocation_failures),
        FIXTURE_TEST(test_wrong_magic_version_and_missing_file),
        FIXTURE_TEST(test_crc_error_names_block_and_offset),
        FIXTURE_TEST(test_load_allocation_failures),
        FIXTURE_TEST(test_save_allocation_failure),
        FIXTURE_TEST(test_save_to_a_missing_directory_fails_cleanly),
        FIXTURE_TEST(test_rec_obj_matches_lookup),
        FIXTURE_TEST(test_persist_info_settles_dirty),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
