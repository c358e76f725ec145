/* test_numtext.c - number text: Redis's d2string/ll2string/ld2string
 * outputs, string2d/string2ll/string2ld acceptance, round trips of random
 * doubles, shortest digits against a brute-force search, and the sorted-set
 * range bounds. Expected texts come from Redis 7.2's code paths and from
 * redis-server runs. */
#include <float.h>
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "goblin.h"
#include "testutil.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static void check_format(double v, const char *want)
{
    char buf[GOBLIN_DOUBLE_TEXT_MAX];
    size_t n = goblin_double_format(buf, v);

    if (n != strlen(want) || memcmp(buf, want, n) != 0)
        fail_msg("%a: got '%.*s', want '%s'", v, (int)n, buf, want);
}

/* Outputs of Redis 7.2's d2string (double2ll + fpconv_dtoa). */
static void test_double_format_matches_redis(void **state)
{
    static const struct {
        double v;
        const char *text;
    } cases[] = {
        {0x0p+0, "0"},
        {-0x0p+0, "-0"},
        {0x1.8p+1, "3"},
        {-0x1.8p+1, "-3"},
        {0x1.8p+0, "1.5"},
        {0x1.999999999999ap-4, "0.1"},
        {-0x1.999999999999ap-4, "-0.1"},
        {0x1.3333333333333p-2, "0.3"},
        {0x1.3333333333334p-2, "0.30000000000000004"},
        {0x1.5af1d78b58c4p+66, "1e+20"},
        {0x1.b1ae4d6e2ef5p+69, "1e+21"},
        {0x1.0f0cf064dd592p+73, "1e+22"},
        {0x1p+53, "9007199254740992"},
        {0x1p+62, "4611686018427387904"},
        {0x1.0000000000001p+62, "4611686018427389000"},
        {-0x1.0000000000001p+62, "-4611686018427389000"},
        {0x1p+63, "9223372036854776000"},
        {0x1.1ccf385ebc8ap+1023, "1e+308"},
        {0x0.0000000000001p-1022, "5e-324"},
        {0x0.0000000000002p-1022, "1e-323"},
        {0x1.fffffffffffffp+1023, "1.7976931348623157e+308"},
        {0x1p-1022, "2.2250738585072014e-308"},
        {-0x1.fffffffffffffp+1023, "-1.7976931348623157e+308"},
        {0x1.ad7f29abcaf48p-24, "1e-7"},
        {0x1.421f5f40d8376p-23, "1.5e-7"},
        {0x1.4f8b588e368f1p-17, "0.00001"},
        {0x1.01f31f46ed246p-13, "0.000123"},
        {0x1.e240c9fbe76c9p+16, "123456.789"},
        {0x1.a249b1f10a06cp+76, "123456789012345670000000"},
        {-0x1.a249b1f10a06cp+76, "-123456789012345670000000"},
        {0x1.249ad2594c37dp+332, "1e+100"},
        {0x1.1eb2d66005835p+997, "1.5e+300"},
        {0x1.56e1fc2f8f359p-997, "1e-300"},
        {0x1.4p+1, "2.5"},
        {0x1.2d6872p+20, "1234567.125"},
        {0x1p-1, "0.5"},
        {0x1.0aaaaaaaaaaabp+5, "33.333333333333336"},
        {0x1.312d01p+23, "10000000.5"},
        {0x1.78c29dccccccdp+23, "12345678.9"},
        {0x1.5555555555555p+1022, "5.992310449541053e+307"},
        {0x1.f75104d551d69p-16, "0.00003"},
        {0x1.1c37937e08001p+53, "10000000000000002"},
        {INFINITY, "inf"},
        {-INFINITY, "-inf"},
        {NAN, "nan"},
        {-NAN, "nan"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        check_format(cases[i].v, cases[i].text);
}

/* Where Redis's Grisu2 digits are longer than needed, Goblin writes the
 * shortest; both read back as the same double. */
static void test_double_format_is_shortest_where_redis_is_not(void **state)
{
    (void)state;
    check_format(0x1.a8de666666667p+12, "6797.900000000001");
    check_format(0x1.52d02c7e14af6p+76, "1e+23");
}

static void test_double_format_longest_texts_fit(void **state)
{
    char buf[GOBLIN_DOUBLE_TEXT_MAX];

    (void)state;
    assert_int_equal(goblin_double_format(buf, -0x1.a249b1f10a06cp+76), 25);
    assert_int_equal(goblin_double_format(buf, -DBL_MIN), 24);
    assert_int_equal(goblin_double_format(buf, -0x1.fffffffffffffp+61), 20);
}

static void check_round_trip(double v)
{
    char buf[GOBLIN_DOUBLE_TEXT_MAX];
    size_t n = goblin_double_format(buf, v);
    double back = 0;

    if (goblin_double_parse(buf, n, &back) != 0 ||
        memcmp(&back, &v, sizeof(v)) != 0)
        fail_msg("%a -> '%.*s' -> %a", v, (int)n, buf, back);
}

static void test_double_round_trips_random_bits(void **state)
{
    (void)state;
    for (int i = 0; i < 1000000; i++) {
        uint64_t bits = rnd();
        double v;

        memcpy(&v, &bits, sizeof(v));
        if (!isnan(v) && !isinf(v))
            check_round_trip(v);
    }
    for (uint64_t bits = 1; bits < 5000; bits++) { /* subnormals */
        double v;

        memcpy(&v, &bits, sizeof(v));
        check_round_trip(v);
        check_round_trip(-v);
    }
}

static void test_double_round_trips_decimal_like_values(void **state)
{
    (void)state;
    for (int i = 0; i < 500000; i++) {
        double m = (double)(rnd() % 100000000);
        int e = (int)(rnd() % 60) - 30;

        check_round_trip(m * pow(10, e));
        check_round_trip(m / 1000.0);
        /* Powers of two: the rounding interval is lopsided there. */
        check_round_trip(ldexp(1.0, (int)(rnd() % 2098) - 1074));
    }
}

/* Scores of three or fewer decimals take a road of their own (integer
 * part, point, fraction): its text must be printf's "%.3f" without the
 * trailing zeros, for every fraction, with or without an integer part, up
 * to the largest such road's magnitude (2^50 thousandths) and past it. */
static void test_double_format_of_thousandths(void **state)
{
    (void)state;
    for (int i = 0; i < 300000; i++) {
        uint64_t m = i < 3000 ? (uint64_t)i + 1
                     : rnd() % ((UINT64_C(1) << (10 + rnd() % 41)) + 1);
        double v = (double)m / 1000.0;
        char want[64], got[GOBLIN_DOUBLE_TEXT_MAX + 1];
        int n;
        size_t k;

        if ((double)(int64_t)v == v || m > (UINT64_C(1) << 50))
            continue;
        /* Only where m / 1000 is the shortest text (m below 2^50 and
         * reading back): otherwise a shorter text exists. */
        n = snprintf(want, sizeof(want), "%s%.3f", i % 2 ? "-" : "", v);
        while (want[n - 1] == '0')
            n--;
        k = goblin_double_format(got, i % 2 ? -v : v);
        if (k != (size_t)n || memcmp(got, want, k) != 0)
            fail_msg("%.17g: got %.*s want %.*s", v, (int)k, got, n, want);
    }
}

/* The significant digits of a formatted double, without point, sign,
 * exponent, leading or trailing zeros. */
static void significant_digits(const char *t, size_t n, char *out)
{
    size_t k = 0, i = 0, start = 0;

    for (; i < n && t[i] != 'e'; i++)
        if (t[i] >= '0' && t[i] <= '9')
            out[k++] = t[i];
    while (start < k && out[start] == '0')
        start++;
    while (k > start && out[k - 1] == '0')
        k--;
    memmove(out, out + start, k - start);
    out[k - start] = '\0';
}

/* Brute force: the fewest digits p such that some p-digit decimal reads
 * back as v. Only the decimal nearest to v (correctly rounded by printf)
 * and its two p-digit neighbours can be the nearest one inside v's
 * rounding interval on either side, so those three are tried. *nearest
 * gets the digits when the nearest one reads back, else "". */
static int shortest_len(double v, char *nearest)
{
    char buf[64], cand[64];

    for (int p = 1; p <= 17; p++) {
        unsigned long long d = 0;
        int e;

        snprintf(buf, sizeof(buf), "%.*e", p - 1, fabs(v));
        if (strtod(buf, NULL) == fabs(v)) {
            significant_digits(buf, strlen(buf), nearest);
            return p;
        }
        for (const char *q = buf; *q != 'e'; q++)
            if (*q != '.')
                d = d * 10 + (unsigned long long)(*q - '0');
        e = atoi(strchr(buf, 'e') + 1) - (p - 1);
        for (int delta = -1; delta <= 1; delta += 2) {
            snprintf(cand, sizeof(cand), "%llue%d", d + (unsigned long long)delta,
                     e);
            if (strtod(cand, NULL) == fabs(v)) {
                nearest[0] = '\0';
                return p;
            }
        }
    }
    return 17;
}

static void test_double_format_gives_shortest_closest_digits(void **state)
{
    (void)state;
    for (int i = 0; i < 40000; i++) {
        uint64_t bits = rnd();
        char buf[GOBLIN_DOUBLE_TEXT_MAX], got[32], nearest[32];
        double v;
        size_t n;
        int p;

        memcpy(&v, &bits, sizeof(v));
        if (i % 2)
            v = (double)(rnd() % 1000000) / 1000.0 + 0.5e-3;
        if (isnan(v) || isinf(v) || (fabs(v) <= 0x1p62 && v == (int64_t)v))
            continue;
        n = goblin_double_format(buf, v);
        significant_digits(buf, n, got);
        p = shortest_len(v, nearest);
        if ((int)strlen(got) != p)
            fail_msg("%a: '%.*s' has %zu digits, %d suffice", v, (int)n,
                     buf, strlen(got), p);
        if (nearest[0] != '\0' && strcmp(got, nearest) != 0)
            fail_msg("%a: digits %s, nearest %s", v, got, nearest);
    }
}

static void check_parse(const char *s, int want_rc, double want)
{
    double v = -12345.0;
    int rc = goblin_double_parse(s, strlen(s), &v);

    if (rc != want_rc)
        fail_msg("'%s': rc %d, want %d", s, rc, want_rc);
    if (rc == 0 && memcmp(&v, &want, sizeof(v)) != 0)
        fail_msg("'%s': %a, want %a", s, v, want);
    if (rc != 0 && v != -12345.0)
        fail_msg("'%s': failed parse changed the output", s);
}

/* Checked against redis-server: ZADD accepts these and ZSCORE shows the
 * value, or answers "ERR value is not a valid float". */
static void test_double_parse_accepts_what_redis_accepts(void **state)
{
    (void)state;
    check_parse("1.5", 0, 1.5);
    check_parse("+1.5", 0, 1.5);
    check_parse("-1.5", 0, -1.5);
    check_parse("inf", 0, INFINITY);
    check_parse("-INF", 0, -INFINITY);
    check_parse("+Infinity", 0, INFINITY);
    check_parse("iNfInItY", 0, INFINITY);
    check_parse("4e-324", 0, 0x0.0000000000001p-1022);
    check_parse("1e-310", 0, 1e-310);
    check_parse("0x10", 0, 16.0);
    check_parse("0x1.8p1", 0, 3.0);
    check_parse("0X.8P+1", 0, 1.0);
    check_parse("-0", 0, -0.0);
    check_parse("0e-999999", 0, 0.0);
    check_parse("00012", 0, 12.0);
    check_parse("1.", 0, 1.0);
    check_parse(".5", 0, 0.5);
    check_parse("1e5", 0, 1e5);
    check_parse("1E+05", 0, 1e5);
    check_parse("1.7976931348623157e308", 0, DBL_MAX);
    check_parse("0.1", 0, 0.1);
    check_parse("123456789012345678901234567890", 0,
                123456789012345678901234567890.0);
    check_parse("9007199254740993", 0, 9007199254740992.0);
    check_parse("9007199254740995", 0, 9007199254740996.0);
}

static void test_double_parse_rejects_what_redis_rejects(void **state)
{
    static const char *bad[] = {
        "", " 1", "1 ", "\t1", "nan", "-nan", "NaN(123)", "infinit", "in",
        "1e400", "-1e400", "1e-400", "2e-324", "1e99999999999999999999",
        "1_0", "1,5", ".", "e5", "1e", "1e+", "0x", "0xg", "0x1p", "+",
        "-", "--1", "+-1", "1.2.3", "1e5.5", "0x1.8p1.", "abc",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        check_parse(bad[i], GOBLIN_ENOTFLOAT, 0);
    double v = 7;
    assert_int_equal(goblin_double_parse("1\0", 2, &v), GOBLIN_ENOTFLOAT);
    assert_true(v == 7);
}

/* Random decimal texts (short, long, tiny, huge, and far past 800
 * digits) must give what the C library's strtod gives. */
static void test_double_parse_is_correctly_rounded(void **state)
{
    char text[1200];

    (void)state;
    for (int i = 0; i < 200000; i++) {
        int nd = 1 + (int)(rnd() % (i % 50 == 0 ? 1000 : 25)), k = 0;
        double want, got;

        for (int j = 0; j < nd; j++) {
            if (j == (int)(rnd() % (nd + 1)) && memchr(text, '.', k) == 0)
                text[k++] = '.';
            text[k++] = (char)('0' + rnd() % 10);
        }
        k += snprintf(text + k, 16, "e%d", (int)(rnd() % 700) - 350);
        text[k] = '\0';
        want = strtod(text, NULL);
        if (isinf(want) || want == 0) {
            continue;
        }
        assert_int_equal(goblin_double_parse(text, (size_t)k, &got), 0);
        if (memcmp(&got, &want, sizeof(got)) != 0)
            fail_msg("'%s': %a, want %a", text, got, want);
    }
}

/* The plain decimals scores mostly are ([-]DIGITS[.DIGITS], no exponent,
 * up to 20 digits: both sides of the short path's limits of 19 digits and
 * 2^53) give what strtod gives, bit for bit, signed zeros included. */
static void test_double_parse_of_plain_decimals(void **state)
{
    static const char *edge[] = {
        "9007199254740992", "9007199254740993", "900719925474099.3",
        "0.9999999999999999999", "1234567890123456789",
        "12345678901234567890", "1.234567890123456789", "-0.0", "-0",
        "0.0000000000000000001", "000000000000000000001", "5.75", "-10.1",
    };
    char text[32];

    (void)state;
    for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
        double got, want = strtod(edge[i], NULL);

        assert_int_equal(goblin_double_parse(edge[i], strlen(edge[i]), &got),
                         0);
        if (memcmp(&got, &want, sizeof(got)) != 0)
            fail_msg("'%s': %a, want %a", edge[i], got, want);
    }
    for (int i = 0; i < 500000; i++) {
        int nd = 1 + (int)(rnd() % 20), k = 0, point = (int)(rnd() % nd);
        double want, got;

        if (rnd() % 2)
            text[k++] = '-';
        for (int j = 0; j < nd; j++) {
            if (j == point && j > 0)
                text[k++] = '.';
            text[k++] = (char)('0' + rnd() % 10);
        }
        text[k] = '\0';
        want = strtod(text, NULL);
        assert_int_equal(goblin_double_parse(text, (size_t)k, &got), 0);
        if (memcmp(&got, &want, sizeof(got)) != 0)
            fail_msg("'%s': %a, want %a", text, got, want);
    }
}

/* Halfway between two doubles, a digit far past the 800th decides. */
static void test_double_parse_uses_digits_past_the_limit(void **state)
{
    char text[2000];
    double v;
    size_t n;

    (void)state;
    /* 2^53 + 1 is halfway between 2^53 and 2^53 + 2: ties to even. */
    n = (size_t)snprintf(text, sizeof(text), "9007199254740993.");
    memset(text + n, '0', 1500);
    n += 1500;
    assert_int_equal(goblin_double_parse(text, n, &v), 0);
    assert_true(v == 9007199254740992.0);
    text[n++] = '1';
    assert_int_equal(goblin_double_parse(text, n, &v), 0);
    assert_true(v == 9007199254740994.0);
}

static void test_parse_ignores_the_process_locale(void **state)
{
    static const char *names[] = {"de_DE.UTF-8", "de_DE", "fr_FR.UTF-8",
                                  "ru_RU.UTF-8"};
    char buf[GOBLIN_LONG_DOUBLE_TEXT_MAX];
    double v = 0;
    long double ld = 0;
    int set = 0;

    (void)state;
    for (size_t i = 0; i < 4 && !set; i++)
        set = setlocale(LC_NUMERIC, names[i]) != NULL;
    assert_int_equal(goblin_double_parse("1.25", 4, &v), 0);
    assert_true(v == 1.25);
    assert_int_equal(goblin_double_parse("1,25", 4, &v), GOBLIN_ENOTFLOAT);
    assert_int_equal(goblin_double_parse("0.1000000000000000055511151231257827",
                                         36, &v), 0);
    assert_true(v == 0.1);
    assert_int_equal(goblin_long_double_parse("10.5", 4, &ld), 0);
    assert_true(ld == 10.5L);
    assert_int_equal(goblin_long_double_format(buf, sizeof(buf), 10.5L), 4);
    assert_memory_equal(buf, "10.5", 4);
    setlocale(LC_NUMERIC, "C");
}

static void check_int(const char *s, size_t len, int want_rc, int64_t want)
{
    int64_t v = 12345;
    int rc = goblin_int64_parse(s, len, &v);

    if (rc != want_rc || (rc == 0 && v != want) || (rc != 0 && v != 12345))
        fail_msg("'%.*s': rc %d value %lld", (int)len, s, rc, (long long)v);
}

#define INT_OK(lit, v) check_int(lit, sizeof(lit) - 1, 0, v)
#define INT_BAD(lit) check_int(lit, sizeof(lit) - 1, GOBLIN_ENOTINT, 0)

/* Redis's own string2ll tests, and the edges. */
static void test_int64_parse_is_string2ll(void **state)
{
    (void)state;
    INT_OK("0", 0);
    INT_OK("1", 1);
    INT_OK("-1", -1);
    INT_OK("99", 99);
    INT_OK("-99", -99);
    INT_OK("9223372036854775807", INT64_MAX);
    INT_OK("-9223372036854775808", INT64_MIN);
    INT_BAD("9223372036854775808");
    INT_BAD("-9223372036854775809");
    INT_BAD("18446744073709551616");
    INT_BAD("99999999999999999999");
    INT_BAD("");
    INT_BAD("+1");
    INT_BAD(" 1");
    INT_BAD("1 ");
    INT_BAD("01");
    INT_BAD("00");
    INT_BAD("-0");
    INT_BAD("-");
    INT_BAD("-01");
    INT_BAD("1a");
    INT_BAD("1.0");
    INT_BAD("1\0");
    INT_BAD("0x10");
    INT_BAD("000000000000000000001");
}

static void test_int64_format_round_trips(void **state)
{
    static const int64_t edges[] = {0, 1, -1, 9, 10, 99, 100, -100, 12345,
                                    INT64_MAX, INT64_MIN, INT64_MIN + 1,
                                    1000000000000000000, -999999999999999999};
    char buf[GOBLIN_INT64_TEXT_MAX], want[32];

    (void)state;
    for (int i = 0; i < 200000; i++) {
        int64_t v = i < 14 ? edges[i] : (int64_t)(rnd() >> (rnd() % 64));
        size_t n;
        int64_t back = 0;

        if (i >= 14 && (i & 1))
            v = -v;
        n = goblin_int64_format(buf, v);
        snprintf(want, sizeof(want), "%lld", (long long)v);
        assert_int_equal(n, strlen(want));
        assert_memory_equal(buf, want, n);
        assert_int_equal(goblin_int64_parse(buf, n, &back), 0);
        assert_true(back == v);
    }
}

/* Integers are written eight digits at a time below 10^16: every digit
 * count's edges, in both signs, through goblin_int64_format and through
 * goblin_double_format's integer road. */
static void test_integer_format_digit_count_edges(void **state)
{
    char buf[GOBLIN_DOUBLE_TEXT_MAX], want[32];
    int64_t p10 = 1;

    (void)state;
    for (int k = 0; k <= 18; k++, p10 = k <= 18 ? p10 * 10 : p10) {
        const int64_t vs[] = {p10 - 1, p10, p10 + 1, p10 * 5 + 3};

        for (int i = 0; i < 4; i++) {
            for (int sign = 1; sign >= -1; sign -= 2) {
                int64_t v = vs[i] * sign;
                size_t n = goblin_int64_format(buf, v);

                snprintf(want, sizeof(want), "%lld", (long long)v);
                assert_int_equal(n, strlen(want));
                assert_memory_equal(buf, want, n);
                if (v > -(INT64_C(1) << 53) && v < (INT64_C(1) << 53)) {
                    n = goblin_double_format(buf, (double)v);
                    assert_int_equal(n, strlen(want));
                    assert_memory_equal(buf, want, n);
                }
            }
        }
    }
}

/* A whole double of magnitude up to 2^62 prints as the integer (Redis's
 * double2ll): below 10^10 on goblin_double_format's own road, above on
 * int64's. Every digit count's edges that a double holds, the roads'
 * edges (2^32, 10^10, 2^62) and their neighbours, both signs, and -0. */
static void test_double_format_prints_whole_numbers_as_integers(void **state)
{
    static const double edges[] = {
        0x1p32 - 1, 0x1p32, 0x1p32 + 1, 9999999999.0, 1e10, 10000000001.0,
        5999999999.0, 6000000000.0, 999999999.0, 1e9, 99999999.0, 1e8,
        0x1p53, 0x1p53 + 2, 0x1p62 - 1024, 0x1p62,
    };
    char buf[GOBLIN_DOUBLE_TEXT_MAX], want[32];
    double p10 = 1;

    (void)state;
    check_format(-0.0, "-0");
    check_format(0.0, "0");
    check_format(-0x1p62, "-4611686018427387904");
    check_format(0x1p62 + 1024, "4611686018427389000");
    for (int k = 0; k <= 18; k++, p10 *= 10) {
        /* p10 is exact up to 10^18 < 2^62; its neighbours are the
         * doubles next to it, whole from 2^53 on. */
        const double vs[] = {p10 - 1, p10, p10 + 1, nextafter(p10, 0),
                             nextafter(p10, INFINITY)};

        for (int i = 0; i < 5; i++) {
            for (int sign = 1; sign >= -1; sign -= 2) {
                double v = vs[i] * sign;
                size_t n;

                if (v != floor(v) || v == 0) /* zeros: above */
                    continue;
                n = goblin_double_format(buf, v);
                snprintf(want, sizeof(want), "%lld", (long long)v);
                if (n != strlen(want) || memcmp(buf, want, n) != 0)
                    fail_msg("%a: got '%.*s', want '%s'", v, (int)n, buf,
                             want);
            }
        }
    }
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
        for (int sign = 1; sign >= -1; sign -= 2) {
            double v = edges[i] * sign;
            size_t n = goblin_double_format(buf, v);

            snprintf(want, sizeof(want), "%lld", (long long)v);
            if (n != strlen(want) || memcmp(buf, want, n) != 0)
                fail_msg("%a: got '%.*s', want '%s'", v, (int)n, buf, want);
        }
    }
    for (int i = 0; i < 1000000; i++) {
        /* Random whole numbers of every magnitude up to 2^62. */
        int64_t m = (int64_t)(rnd() >> (2 + rnd() % 62));
        double v = (double)(i & 1 ? -m : m);
        size_t n = goblin_double_format(buf, v);

        snprintf(want, sizeof(want), "%lld", (long long)v);
        if (n != strlen(want) || memcmp(buf, want, n) != 0)
            fail_msg("%a: got '%.*s', want '%s'", v, (int)n, buf, want);
    }
}

/* The fraction road writes its integer part with the same digit writers:
 * integer parts at every digit-count edge up to 2^40, with one to three
 * decimals, against printf. */
static void test_double_format_fraction_digit_count_edges(void **state)
{
    static const unsigned fracs[] = {1, 5, 10, 50, 100, 120, 125, 999};
    char want[64], got[GOBLIN_DOUBLE_TEXT_MAX];
    uint64_t p10 = 1;

    (void)state;
    for (int k = 0; k <= 12; k++, p10 *= 10) {
        const uint64_t ips[] = {p10 - 1, p10, p10 + 1, UINT64_C(0xffffffff),
                                UINT64_C(0x100000000)};

        for (int i = 0; i < 5; i++) {
            for (int j = 0; j < 8; j++) {
                uint64_t m = ips[i] * 1000 + fracs[j];
                double v = (double)m / 1000.0;
                int n;
                size_t len;

                if (m > (UINT64_C(1) << 50))
                    continue;
                n = snprintf(want, sizeof(want), "%s%.3f", j & 1 ? "-" : "",
                             v);
                while (want[n - 1] == '0')
                    n--;
                len = goblin_double_format(got, j & 1 ? -v : v);
                if (len != (size_t)n || memcmp(got, want, len) != 0)
                    fail_msg("%.17g: got %.*s want %.*s", v, (int)len, got,
                             n, want);
            }
        }
    }
}

static void check_ld(long double v, const char *want)
{
    char buf[GOBLIN_LONG_DOUBLE_TEXT_MAX];
    size_t n = goblin_long_double_format(buf, sizeof(buf), v);

    if (n != strlen(want) || memcmp(buf, want, n) != 0)
        fail_msg("%La: got '%.*s', want '%s'", v, (int)n, buf, want);
}

/* a + b as INCRBYFLOAT computes and writes it. */
static void check_incr(const char *a, const char *b, const char *want)
{
    long double x, y;

    assert_int_equal(goblin_long_double_parse(a, strlen(a), &x), 0);
    assert_int_equal(goblin_long_double_parse(b, strlen(b), &y), 0);
    check_ld(x + y, want);
}

/* Redis's INCRBYFLOAT/HINCRBYFLOAT tests and documentation examples. */
static void test_long_double_format_is_ld2string_human(void **state)
{
    char buf[8];

    if (under_valgrind())
        skip(); /* long double precision: see under_valgrind() */
    (void)state;
    check_incr("0", "1", "1");
    check_incr("1", "0.25", "1.25");
    check_incr("17179869184", "1.5", "17179869185.5");
    check_incr("17179869184", "17179869184", "34359738368");
    check_incr("1", "-1.1", "-0.1");
    check_incr("10.50", "0.1", "10.6");
    check_incr("10.6", "-5", "5.6");
    check_incr("5.0e3", "2.0e2", "5200");
    check_incr("1.23", "0.77", "2");
    check_incr("2", "-0.1", "1.9");
    check_ld(0.0L, "0");
    check_ld(-0.0L, "0");
    check_ld(-1e-20L, "0");
    check_ld(1e-20L, "0");
    check_ld(1e20L, "100000000000000000000");
    check_ld((long double)1.1, "1.10000000000000009");
    check_ld(-2.5L, "-2.5");
    check_ld(INFINITY, "inf");
    check_ld(-INFINITY, "-inf");
    check_ld(NAN, "nan");
    assert_int_equal(goblin_long_double_format(buf, sizeof(buf), 1e10L), 0);
    assert_int_equal(goblin_long_double_format(buf, sizeof(buf), 1e6L), 7);
}

static void test_long_double_format_handles_the_largest_value(void **state)
{
    char buf[GOBLIN_LONG_DOUBLE_TEXT_MAX];
    size_t n;

    if (under_valgrind())
        skip(); /* long double precision: see under_valgrind() */
    (void)state;
    n = goblin_long_double_format(buf, sizeof(buf), -LDBL_MAX);
    assert_true(n > 4900 && n < sizeof(buf));
    assert_true(buf[0] == '-' && buf[1] == '1');
    for (size_t i = 1; i < n; i++)
        assert_true(buf[i] >= '0' && buf[i] <= '9');
}

static void test_long_double_parse_is_string2ld(void **state)
{
    static const char *bad[] = {"", " 1", "1 ", "nan", "1e5000", "1e-5000",
                                "abc", "1,5", "0x", "--1"};
    long double v = 3;
    char big[GOBLIN_LONG_DOUBLE_TEXT_MAX + 1];

    if (under_valgrind())
        skip(); /* long double precision: see under_valgrind() */
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(goblin_long_double_parse(bad[i], strlen(bad[i]), &v),
                         GOBLIN_ENOTFLOAT);
    assert_true(v == 3);
    assert_int_equal(goblin_long_double_parse("+inf", 4, &v), 0);
    assert_true(isinf(v) && v > 0);
    assert_int_equal(goblin_long_double_parse("1e4000", 6, &v), 0);
    assert_true(v > 1e4000L * 0.99L);
    assert_int_equal(goblin_long_double_parse("0x1p-16445", 10, &v), 0);
    assert_true(v > 0);
    assert_int_equal(goblin_long_double_parse("-0.0", 4, &v), 0);
    assert_true(v == 0 && signbit(v));
    /* 5119 bytes is the most string2ld takes. */
    memset(big, '0', sizeof(big));
    big[0] = '1';
    big[1] = '.';
    assert_int_equal(goblin_long_double_parse(big, 5119, &v), 0);
    assert_true(v == 1);
    assert_int_equal(goblin_long_double_parse(big, 5120, &v),
                     GOBLIN_ENOTFLOAT);
}

static void check_bound(const char *s, size_t len, int want_rc, double want,
                        int want_ex)
{
    double v = -7;
    int ex = -1;
    int rc = goblin_score_bound_parse(s, len, &v, &ex);

    if (rc != want_rc)
        fail_msg("'%.*s': rc %d want %d", (int)len, s, rc, want_rc);
    if (rc == 0 && (memcmp(&v, &want, sizeof(v)) != 0 || ex != want_ex))
        fail_msg("'%.*s': %a ex %d, want %a ex %d", (int)len, s, v, ex,
                 want, want_ex);
    if (rc != 0 && (v != -7 || ex != -1))
        fail_msg("'%.*s': failed parse changed the outputs", (int)len, s);
}

#define BOUND(lit, v, ex) check_bound(lit, sizeof(lit) - 1, 0, v, ex)
#define BOUND_BAD(lit) \
    check_bound(lit, sizeof(lit) - 1, GOBLIN_ENOTFLOAT, 0, 0)

/* Checked against redis-server's ZRANGEBYSCORE. */
static void test_score_bound_parse_is_zslParseRange(void **state)
{
    (void)state;
    BOUND("1.5", 1.5, 0);
    BOUND("(1.5", 1.5, 1);
    BOUND("-inf", -INFINITY, 0);
    BOUND("+inf", INFINITY, 0);
    BOUND("(-inf", -INFINITY, 1);
    BOUND("INFINITY", INFINITY, 0);
    BOUND("", 0.0, 0);
    BOUND("(", 0.0, 1);
    BOUND(" 1", 1.0, 0);
    BOUND("(  1", 1.0, 1);
    BOUND("1e400", INFINITY, 0);
    BOUND("(1e-400", 0.0, 1);
    BOUND("0x1p0", 1.0, 0);
    BOUND("1.", 1.0, 0);
    BOUND(".5", 0.5, 0);
    BOUND("1\0abc", 1.0, 0);
    BOUND("\0abc", 0.0, 0);
    BOUND_BAD("nan");
    BOUND_BAD("(nan");
    BOUND_BAD("   ");
    BOUND_BAD("+");
    BOUND_BAD("-");
    BOUND_BAD("1 ");
    BOUND_BAD(".");
    BOUND_BAD("1e");
    BOUND_BAD("1e+");
    BOUND_BAD("((1");
    BOUND_BAD("[1");
    BOUND_BAD("abc");
}

static void check_lex(const char *s, size_t len, int want_rc,
                      enum goblin_lex_bound_kind kind, const char *val,
                      size_t val_len)
{
    struct goblin_lex_bound b = {GOBLIN_LEX_INCLUSIVE, {"x", 1}};
    int rc = goblin_lex_bound_parse(s, len, &b);

    assert_int_equal(rc, want_rc);
    if (rc != 0) {
        assert_int_equal(b.kind, GOBLIN_LEX_INCLUSIVE);
        assert_int_equal(b.value.len, 1);
        return;
    }
    assert_int_equal(b.kind, kind);
    assert_int_equal(b.value.len, val_len);
    assert_memory_equal(b.value.ptr, val, b.value.len);
}

#define LEX(lit, k, v) \
    check_lex(lit, sizeof(lit) - 1, 0, k, v, sizeof(v) - 1)
#define LEX_BAD(lit) \
    check_lex(lit, sizeof(lit) - 1, GOBLIN_ESYNTAX, GOBLIN_LEX_MIN_INF, "", 0)

static void test_lex_bound_parse_is_zslParseLexRangeItem(void **state)
{
    (void)state;
    LEX("-", GOBLIN_LEX_MIN_INF, "");
    LEX("+", GOBLIN_LEX_PLUS_INF, "");
    LEX("-\0zz", GOBLIN_LEX_MIN_INF, "");
    LEX("[abc", GOBLIN_LEX_INCLUSIVE, "abc");
    LEX("(abc", GOBLIN_LEX_EXCLUSIVE, "abc");
    LEX("[", GOBLIN_LEX_INCLUSIVE, "");
    LEX("(", GOBLIN_LEX_EXCLUSIVE, "");
    LEX("[a\0b", GOBLIN_LEX_INCLUSIVE, "a\0b");
    LEX_BAD("");
    LEX_BAD("abc");
    LEX_BAD("-a");
    LEX_BAD("+a");
    LEX_BAD("--");
    LEX_BAD(" [a");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_double_format_matches_redis),
        cmocka_unit_test(test_double_format_is_shortest_where_redis_is_not),
        cmocka_unit_test(test_double_format_longest_texts_fit),
        cmocka_unit_test(test_double_round_trips_random_bits),
        cmocka_unit_test(test_double_format_of_thousandths),
        cmocka_unit_test(test_double_round_trips_decimal_like_values),
        cmocka_unit_test(test_double_format_gives_shortest_closest_digits),
        cmocka_unit_test(test_double_parse_accepts_what_redis_accepts),
        cmocka_unit_test(test_double_parse_rejects_what_redis_rejects),
        cmocka_unit_test(test_double_parse_is_correctly_rounded),
        cmocka_unit_test(test_double_parse_of_plain_decimals),
        cmocka_unit_test(test_double_parse_uses_digits_past_the_limit),
        cmocka_unit_test(test_parse_ignores_the_process_locale),
        cmocka_unit_test(test_int64_parse_is_string2ll),
        cmocka_unit_test(test_int64_format_round_trips),
        cmocka_unit_test(test_integer_format_digit_count_edges),
        cmocka_unit_test(test_double_format_prints_whole_numbers_as_integers),
        cmocka_unit_test(test_double_format_fraction_digit_count_edges),
        cmocka_unit_test(test_long_double_format_is_ld2string_human),
        cmocka_unit_test(test_long_double_format_handles_the_largest_value),
        cmocka_unit_test(test_long_double_parse_is_string2ld),
        cmocka_unit_test(test_score_bound_parse_is_zslParseRange),
        cmocka_unit_test(test_lex_bound_parse_is_zslParseLexRangeItem),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
