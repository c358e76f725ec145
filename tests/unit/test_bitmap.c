/* test_bitmap.c - strings as bits (lib/store/bitmap.c): word-at-a-time
 * counting and scanning against a bit-by-bit model, bit fields of every
 * width, BITFIELD's overflow rules at their edges, SETBIT's growth and
 * its limit at 2^32 bits, BITOP, and allocation failures. */
#include "test_keys_util.h"
#include "goblin/str.h"
#include "store/bitmap.h"

static int model_bit(const uint8_t *p, uint64_t i)
{
    return (p[i >> 3] >> (7 - (i & 7))) & 1;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)(seed >> 16);
    }
}

static void test_popcount_and_bitpos_match_a_bit_model(void **state)
{
    uint8_t buf[300];

    (void)state;
    for (size_t n = 0; n <= sizeof(buf); n += (n < 40 ? 1 : 37)) {
        for (unsigned kind = 0; kind < 4; kind++) {
            uint64_t ones = 0;
            int64_t first1 = -1, first0 = (int64_t)n * 8;

            fill(buf, n, (unsigned)n * 7 + kind);
            if (kind == 1)
                memset(buf, 0, n);
            if (kind == 2)
                memset(buf, 0xff, n);
            if (kind == 3 && n > 0) { /* one bit near the end */
                memset(buf, 0, n);
                buf[n - 1] = 0x01;
            }
            for (uint64_t i = 0; i < n * 8; i++) {
                int b = model_bit(buf, i);

                ones += (uint64_t)b;
                if (b && first1 < 0)
                    first1 = (int64_t)i;
                if (!b && first0 == (int64_t)n * 8)
                    first0 = (int64_t)i;
            }
            assert_int_equal(goblin__popcount(buf, n), ones);
            assert_int_equal(goblin__bitpos(buf, n, 1), first1);
            assert_int_equal(goblin__bitpos(buf, n, 0), first0);
        }
    }
}

static void test_bitfield_roundtrips_every_width_and_offset(void **state)
{
    uint8_t buf[16];

    (void)state;
    for (unsigned bits = 1; bits <= 64; bits++) {
        for (uint64_t off = 0; off < 16; off++) {
            uint64_t v = 0x9e3779b97f4a7c15ull * (bits + off);
            uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;

            fill(buf, sizeof(buf), bits);
            goblin__bitfield_set(buf, off, bits, v);
            assert_int_equal(goblin__bitfield_get(buf, off, bits), v & mask);
            for (unsigned j = 0; j < bits; j++)
                assert_int_equal(model_bit(buf, off + j),
                                 (v >> (bits - 1 - j)) & 1);
            if (bits < 64 && ((v >> (bits - 1)) & 1))
                assert_int_equal(goblin__bitfield_get_signed(buf, off, bits),
                                 (int64_t)((v & mask) | ~mask));
        }
    }
}

static void test_signed_overflow_edges(void **state)
{
    int64_t lim = 0;

    (void)state;
    assert_int_equal(goblin__bf_overflow_s(100, 27, 8, GOBLIN__BF_WRAP, &lim),
                     0);
    assert_int_equal(goblin__bf_overflow_s(100, 28, 8, GOBLIN__BF_WRAP, &lim),
                     1);
    assert_int_equal(lim, -128);
    assert_int_equal(goblin__bf_overflow_s(100, 100, 8, GOBLIN__BF_SAT, &lim),
                     1);
    assert_int_equal(lim, 127);
    assert_int_equal(goblin__bf_overflow_s(-100, -100, 8, GOBLIN__BF_SAT,
                                           &lim), -1);
    assert_int_equal(lim, -128);
    assert_int_equal(goblin__bf_overflow_s(-1, -1, 1, GOBLIN__BF_FAIL, &lim),
                     -1);
    assert_int_equal(goblin__bf_overflow_s(INT64_MAX, 1, 64, GOBLIN__BF_WRAP,
                                           &lim), 1);
    assert_int_equal(lim, INT64_MIN);
    assert_int_equal(goblin__bf_overflow_s(INT64_MIN, -1, 64, GOBLIN__BF_SAT,
                                           &lim), -1);
    assert_int_equal(lim, INT64_MIN);
    assert_int_equal(goblin__bf_overflow_s(-1, INT64_MIN, 64, GOBLIN__BF_SAT,
                                           &lim), -1);
    assert_int_equal(goblin__bf_overflow_s(0, INT64_MIN, 64, GOBLIN__BF_SAT,
                                           &lim), 0);
    /* SET checks the value itself with an increment of 0. */
    assert_int_equal(goblin__bf_overflow_s(200, 0, 8, GOBLIN__BF_WRAP, &lim),
                     1);
    assert_int_equal(lim, -56);
}

static void test_unsigned_overflow_edges(void **state)
{
    uint64_t lim = 0;
    uint64_t max63 = INT64_MAX;

    (void)state;
    assert_int_equal(goblin__bf_overflow_u(255, 0, 8, GOBLIN__BF_WRAP, &lim),
                     0);
    assert_int_equal(goblin__bf_overflow_u(255, 1, 8, GOBLIN__BF_WRAP, &lim),
                     1);
    assert_int_equal(lim, 0);
    assert_int_equal(goblin__bf_overflow_u(0, -1, 8, GOBLIN__BF_WRAP, &lim),
                     1);
    assert_int_equal(lim, 255);
    assert_int_equal(goblin__bf_overflow_u(0, -1, 8, GOBLIN__BF_SAT, &lim),
                     -1);
    assert_int_equal(lim, 0);
    assert_int_equal(goblin__bf_overflow_u(UINT64_MAX, 0, 8, GOBLIN__BF_SAT,
                                           &lim), 1);
    assert_int_equal(lim, 255);
    assert_int_equal(goblin__bf_overflow_u(max63, 1, 63, GOBLIN__BF_SAT,
                                           &lim), 1);
    assert_int_equal(lim, max63);
    assert_int_equal(goblin__bf_overflow_u(1, INT64_MAX - 1, 63,
                                           GOBLIN__BF_FAIL, &lim), 0);
}

static void test_setbit_grows_raw_and_reports_the_old_bit(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice v;
    const char *e;

    assert_int_equal(goblin__bit_set(f->st, S("b"), 7, 1), 0);
    assert_int_equal(goblin_str_get(f->st, S("b"), &v), 1);
    assert_slice(v, "\x01");
    assert_int_equal(goblin__bit_set(f->st, S("b"), 7, 1), 1);
    assert_int_equal(goblin__bit_set(f->st, S("b"), 7, 0), 1);
    assert_int_equal(goblin__bit_set(f->st, S("b"), 17, 1), 0);
    assert_int_equal(goblin_str_get(f->st, S("b"), &v), 1);
    assert_slice(v, "\x00\x00\x40");
    assert_int_equal(goblin_str_set(f->st, S("n"), S("12"), NULL, NULL),
                     GOBLIN_SET_DONE);
    assert_int_equal(goblin__bit_set(f->st, S("n"), 0, 0), 0);
    assert_int_equal(goblin_key_encoding(f->st, S("n"), &e), 1);
    assert_string_equal(e, "raw");
    add_fake_hash(f->st, S("h"));
    assert_int_equal(goblin__bit_set(f->st, S("h"), 0, 1), GOBLIN_EWRONGTYPE);
}

static void test_setbit_at_the_limit(void **state)
{
    struct fixture *f = *state;
    struct goblin__bf_op op = {GOBLIN__BF_SET, GOBLIN__BF_WRAP, false, 8,
                               (uint64_t)GOBLIN_STRING_MAX * 8 - 4, 1};
    struct goblin__bf_result res;

    /* Byte 2^29 is one past the 512 MB a string may hold: refused with
     * nothing created. (Bit 2^32 - 1 itself is accepted; a test does not
     * allocate 512 MB to show it.) */
    assert_int_equal(goblin__bit_set(f->st, S("b"), 4294967296ull, 1),
                     GOBLIN_ESTRBIG);
    assert_int_equal(goblin__bit_field(f->st, S("b"), &op, 1, &res),
                     GOBLIN_ESTRBIG);
    assert_int_equal(goblin_key_exists(f->st, S("b")), 0);
}

static void test_setbit_walking_up_grows_in_place(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice v;
    long allocations;

    /* Each growth doubles the room (sdsgrowzero's rule), so 8000 bytes
     * written one bit at a time take a handful of allocations, not one
     * per byte. fail_after counts the allocations down. */
    f->counts.fail_after = 1000000;
    for (uint64_t i = 0; i < 64000; i += 8)
        assert_int_equal(goblin__bit_set(f->st, S("w"), i, 1), 0);
    allocations = 1000000 - f->counts.fail_after;
    f->counts.fail_after = -1;
    assert_int_equal(goblin_str_get(f->st, S("w"), &v), 1);
    assert_int_equal(v.len, 8000);
    assert_int_equal(goblin__popcount(v.ptr, v.len), 8000);
    assert_true(allocations < 40);
}

static void test_bitop_pads_shorter_sources(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice keys[3] = {S("a"), S("b"), S("none")};
    struct goblin_slice v;

    goblin_str_set(f->st, S("a"), S("\xff\x0f\xf0\xaa\x55\xff\x00\x11\x22"),
                   NULL, NULL);
    goblin_str_set(f->st, S("b"), S("\x0f"), NULL, NULL);
    assert_int_equal(goblin__bit_op(f->st, GOBLIN__BITOP_OR, S("d"), keys, 2),
                     9);
    goblin_str_get(f->st, S("d"), &v);
    assert_slice(v, "\xff\x0f\xf0\xaa\x55\xff\x00\x11\x22");
    assert_int_equal(goblin__bit_op(f->st, GOBLIN__BITOP_AND, S("d"), keys,
                                    2), 9);
    goblin_str_get(f->st, S("d"), &v);
    assert_slice(v, "\x0f\x00\x00\x00\x00\x00\x00\x00\x00");
    assert_int_equal(goblin__bit_op(f->st, GOBLIN__BITOP_XOR, S("a"), keys,
                                    3), 9);
    goblin_str_get(f->st, S("a"), &v);
    assert_slice(v, "\xf0\x0f\xf0\xaa\x55\xff\x00\x11\x22");
    assert_int_equal(goblin__bit_op(f->st, GOBLIN__BITOP_NOT, S("b"), keys + 1,
                                    1), 1);
    goblin_str_get(f->st, S("b"), &v);
    assert_slice(v, "\xf0");
    assert_int_equal(goblin__bit_op(f->st, GOBLIN__BITOP_AND, S("d"),
                                    keys + 2, 1), 0);
    assert_int_equal(goblin_key_exists(f->st, S("d")), 0);
}

static int64_t op_setbit_new(goblin_store *st, void *arg)
{
    (void)arg;
    return goblin__bit_set(st, S("n"), 1000, 1);
}

static int64_t op_setbit_grow(goblin_store *st, void *arg)
{
    (void)arg;
    return goblin__bit_set(st, S("g"), 100000, 1);
}

static int64_t op_bitop(goblin_store *st, void *arg)
{
    struct goblin_slice keys[2] = {S("g"), S("s")};

    (void)arg;
    return goblin__bit_op(st, GOBLIN__BITOP_OR, S("g"), keys, 2);
}

static int64_t op_bitfield(goblin_store *st, void *arg)
{
    struct goblin__bf_op op = {GOBLIN__BF_INCRBY, GOBLIN__BF_SAT, true, 16,
                               5000, 7};
    struct goblin__bf_result res;

    (void)arg;
    return goblin__bit_field(st, S("s"), &op, 1, &res);
}

static void test_allocation_failures_change_nothing(void **state)
{
    struct fixture *f = *state;

    goblin_str_set(f->st, S("g"), S("abc"), NULL, NULL);
    goblin_str_set(f->st, S("s"), S("12345"), NULL, NULL);
    assert_int_equal(run_failing(f, op_setbit_new, NULL), 0);
    assert_int_equal(run_failing(f, op_setbit_grow, NULL), 0);
    assert_int_equal(run_failing(f, op_bitop, NULL), 12501);
    assert_int_equal(run_failing(f, op_bitfield, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_popcount_and_bitpos_match_a_bit_model),
        cmocka_unit_test(test_bitfield_roundtrips_every_width_and_offset),
        cmocka_unit_test(test_signed_overflow_edges),
        cmocka_unit_test(test_unsigned_overflow_edges),
        FIXTURE_TEST(test_setbit_grows_raw_and_reports_the_old_bit),
        FIXTURE_TEST(test_setbit_at_the_limit),
        FIXTURE_TEST(test_setbit_walking_up_grows_in_place),
        FIXTURE_TEST(test_bitop_pads_shorter_sources),
        FIXTURE_TEST(test_allocation_failures_change_nothing),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
