/* test_bytes_cmp.c - the inline comparisons of util/bytes_cmp.h against
 * memcmp: every pair of lengths up to 24 (each path: byte loop, one word,
 * word then memcmp), equal strings, and strings differing at every
 * position by bytes that order differently as signed and unsigned. */
#include <string.h>

#include "testutil.h"
#include "util/bytes_cmp.h"

static int sign(int v)
{
    return (v > 0) - (v < 0);
}

static int reference_cmp(const unsigned char *a, size_t alen,
                         const unsigned char *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c = n > 0 ? memcmp(a, b, n) : 0;

    if (c != 0)
        return sign(c);
    return alen < blen ? -1 : alen > blen;
}

#define MAXLEN 24

static void check(const unsigned char *a, size_t alen,
                  const unsigned char *b, size_t blen)
{
    assert_int_equal(sign(goblin__bytes_cmp(a, alen, b, blen)),
                     reference_cmp(a, alen, b, blen));
    assert_int_equal(sign(goblin__bytes_cmp(b, blen, a, alen)),
                     reference_cmp(b, blen, a, alen));
    if (alen == blen)
        assert_int_equal(goblin__bytes_eq(a, b, alen),
                         alen == 0 || memcmp(a, b, alen) == 0);
}

static void test_every_length_pair_and_difference(void **state)
{
    unsigned char a[MAXLEN], b[MAXLEN];
    static const unsigned char pairs[][2] = {
        {0x00, 0xff}, {0x7f, 0x80}, {'a', 'b'}, {0x01, 0x00}};

    (void)state;
    for (size_t i = 0; i < MAXLEN; i++)
        a[i] = (unsigned char)('a' + i % 26);
    for (size_t alen = 0; alen <= MAXLEN; alen++) {
        for (size_t blen = 0; blen <= MAXLEN; blen++) {
            memcpy(b, a, MAXLEN);
            check(a, alen, b, blen); /* one a prefix of the other */
            for (size_t pos = 0; pos < MAXLEN; pos++) {
                for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]);
                     k++) {
                    memcpy(b, a, MAXLEN);
                    unsigned char save = a[pos];

                    a[pos] = pairs[k][0];
                    b[pos] = pairs[k][1];
                    check(a, alen, b, blen);
                    a[pos] = save;
                }
            }
        }
    }
}

/* Random strings over a tiny alphabet, so that long common prefixes and
 * equal strings are frequent. */
static void test_random_strings(void **state)
{
    unsigned char a[MAXLEN], b[MAXLEN];
    uint64_t x = 0x9e3779b97f4a7c15u;

    (void)state;
    for (int round = 0; round < 200000; round++) {
        size_t alen, blen;

        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        alen = x % (MAXLEN + 1);
        blen = (x >> 8) % (MAXLEN + 1);
        for (size_t i = 0; i < MAXLEN; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            a[i] = (unsigned char)(x & 1 ? 0xfe : 0x01);
            b[i] = (x >> 1) % 8 == 0 ? (unsigned char)(a[i] ^ 0xff) : a[i];
        }
        check(a, alen, b, blen);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_length_pair_and_difference),
        cmocka_unit_test(test_random_strings),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
