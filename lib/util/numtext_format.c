/* numtext_format.c - numbers to text as Redis writes them: int64 (ll2string),
 * doubles (d2string of Redis 7.2+) and long doubles (ld2string, human mode).
 *
 * Integers below 10^10 take no division: up to 8 digits in one SWAR word
 * (digits8), 9 or 10 (every uint32 score past 10^8) from one binary
 * fraction, two digits per multiply (nine_or_ten). Up to 10^16 they are
 * two SWAR words, the rest two digits per division.
 *
 * Doubles take one of four roads. Whole values with |v| < 10^10 print
 * directly and first, from one truncation and one comparison, without
 * saving a register; those up to 2^62 print as integers too (Redis's
 * double2ll fast path), out of line. Special values are fixed texts. A
 * value with at most three decimals (short_decimal) prints as integer
 * part, point and fraction (thousandths_after). Everything else
 * gets its shortest round-trip digits from the Schubfach algorithm
 * (R. Giulietti, "The Schubfach way to render doubles", 2020): the rounding
 * interval of v = c * 2^q is scaled by 10^-k with a 126-bit approximation
 * of the power (numtext_pow10.c), rounded to odd so that comparisons with
 * the interval's ends stay exact, and the candidate with fewest digits --
 * else the closest, ties to even -- is taken. The digits are then laid out
 * with the rules of Redis's fpconv_dtoa (emit_digits), which decide between
 * plain digits, a decimal point and an exponent.
 *
 * Nothing here allocates or reads the locale.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "goblin/numtext.h"
#include "util/numtext_internal.h"

#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#endif

static const char digit_pairs[201] =
    "0001020304050607080910111213141516171819"
    "2021222324252627282930313233343536373839"
    "4041424344454647484950515253545556575859"
    "6061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static const uint64_t pow10_u64[20] = {
    UINT64_C(1), UINT64_C(10), UINT64_C(100), UINT64_C(1000),
    UINT64_C(10000), UINT64_C(100000), UINT64_C(1000000),
    UINT64_C(10000000), UINT64_C(100000000), UINT64_C(1000000000),
    UINT64_C(10000000000), UINT64_C(100000000000),
    UINT64_C(1000000000000), UINT64_C(10000000000000),
    UINT64_C(100000000000000), UINT64_C(1000000000000000),
    UINT64_C(10000000000000000), UINT64_C(100000000000000000),
    UINT64_C(1000000000000000000), UINT64_C(10000000000000000000),
};

/* Decimal digits of v: log10 from the bit length (1233 / 4096 is just
 * above log10 2), then one comparison settles the rounding. */
static unsigned digits10(uint64_t v)
{
    unsigned bits = 64 - (unsigned)__builtin_clzll(v | 1);
    unsigned t = (bits * 1233) >> 12;

    return t + (v >= pow10_u64[t]) + (v == 0);
}

/* Writes exactly its digits: for callers that size buf to the text. */
size_t goblin__u64_format(char *buf, uint64_t v)
{
    unsigned n = digits10(v);
    char *p = buf + n;

    while (v >= 100) {
        unsigned i = (unsigned)(v % 100) * 2;

        v /= 100;
        *--p = digit_pairs[i + 1];
        *--p = digit_pairs[i];
    }
    if (v >= 10) {
        *--p = digit_pairs[v * 2 + 1];
        *--p = digit_pairs[v * 2];
    } else {
        *--p = (char)('0' + v);
    }
    return n;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SWAR_DIGITS 1

/* The eight decimal digits of v < 10^8 (leading zeros included) as ASCII
 * bytes, the most significant in the lowest byte, with no division loop:
 * v splits into two 4-digit halves in 32-bit lanes, each into two 2-digit
 * quarters in 16-bit lanes, each into two digits in bytes. The multiply
 * and shift pairs divide exactly in their ranges (10486 / 2^20 is 1/100
 * for n < 10^4, 103 / 2^10 is 1/10 for n < 100: checked for every v), and
 * no lane's product reaches the next lane's bits that its mask keeps. */
static inline uint64_t digits8(uint32_t v)
{
    uint64_t x = (v / 10000) | ((uint64_t)(v % 10000) << 32);
    uint64_t h = ((x * 10486) >> 20) & UINT64_C(0x0000007F0000007F);

    x = h | ((x - h * 100) << 16);
    h = ((x * 103) >> 10) & UINT64_C(0x000F000F000F000F);
    x = h | ((x - h * 10) << 8);
    return x + UINT64_C(0x3030303030303030);
}

/* v < 10^16 in decimal at buf past 10 digits, in two 8-byte stores: it
 * writes max(n, 8) bytes for its n digits. */
static inline size_t u64_format_short(char *buf, uint64_t v)
{
    uint64_t hi = v / 100000000;
    uint64_t lo = digits8((uint32_t)(v - hi * 100000000));
    unsigned n = digits10(v);

    hi = digits8((uint32_t)hi) >> (8 * (16 - n));
    memcpy(buf, &hi, 8);
    memcpy(buf + n - 8, &lo, 8);
    return n;
}
#endif

/* The next two digits of the binary fraction *f / 2^64. On x86-64 one
 * mulq, which GCC writes with two copies of the fraction around it. */
static inline size_t next_pair(uint64_t *f)
{
#if defined(__x86_64__) && defined(__GNUC__)
    uint64_t hi, lo = *f;

    __asm__("mulq %3" : "=a"(lo), "=d"(hi) : "0"(lo), "r"(UINT64_C(100))
            : "cc");
    *f = lo;
    return (size_t)hi;
#else
    unsigned __int128 t = (unsigned __int128)*f * 100;

    *f = (uint64_t)t;
    return (size_t)(t >> 64);
#endif
}

/* The 9 or 10 digits of 10^8 <= v < 10^10 at buf, in one multiply and
 * then one per pair: t / 2^64 is v / 10^8 from above by less than
 * v * 2^-64 (the constant is 2^64 / 10^8 rounded up), an error that the
 * four products by 100 keep below the next digit (checked for every v).
 * Without a branch on v < 10^9, which random scores leave to chance: the
 * leading pair of a 9-digit number is copied from its second digit, and
 * the next pair overwrites what is left of it. */
static inline size_t nine_or_ten(char *buf, uint64_t v)
{
    unsigned __int128 t = (unsigned __int128)v * UINT64_C(184467440738);
    size_t one = v < 1000000000, n = 10 - one;
    char *p = buf + n - 8;

    uint64_t f = (uint64_t)t;

    memcpy(buf, digit_pairs + (size_t)(t >> 64) * 2 + one, 2);
    memcpy(p, digit_pairs + next_pair(&f) * 2, 2);
    memcpy(p + 2, digit_pairs + next_pair(&f) * 2, 2);
    memcpy(p + 4, digit_pairs + next_pair(&f) * 2, 2);
    memcpy(p + 6, digit_pairs + next_pair(&f) * 2, 2);
    return n;
}

/* v < 10^10 in decimal at buf, which has room for 10 bytes (8 past the
 * digits of a short v): every whole uint32 score, with no division. */
static inline size_t ten_digits_format(char *buf, uint64_t v)
{
    if (v < 100) {
        /* Without a branch on v < 10: a one-digit v copies its pair from
         * the second digit. */
        unsigned one = v < 10;

        memcpy(buf, digit_pairs + v * 2 + one, 2);
        return 2 - one;
    }
    if (v < 100000000) {
#ifdef SWAR_DIGITS
        unsigned n = digits10(v);
        uint64_t lo = digits8((uint32_t)v) >> (8 * (8 - n));

        memcpy(buf, &lo, 8);
        return n;
#else
        return goblin__u64_format(buf, v);
#endif
    }
    return nine_or_ten(buf, v);
}

/* v in decimal at buf, which has room for 20 bytes. */
static inline size_t u64_format_roomy(char *buf, uint64_t v)
{
    if (v < UINT64_C(10000000000))
        return ten_digits_format(buf, v);
#ifdef SWAR_DIGITS
    if (v < UINT64_C(10000000000000000))
        return u64_format_short(buf, v);
#endif
    return goblin__u64_format(buf, v);
}

static inline size_t int64_format(char *buf, int64_t v)
{
    if (v < 0) {
        buf[0] = '-';
        /* The negation in unsigned arithmetic is exact for INT64_MIN. */
        return 1 + u64_format_roomy(buf + 1, 0 - (uint64_t)v);
    }
    return u64_format_roomy(buf, (uint64_t)v);
}

size_t goblin_int64_format(char *buf, int64_t v)
{
    return int64_format(buf, v);
}

/* ---- Schubfach -------------------------------------------------------- */

#define Q_MIN (-1074)                 /* exponent of the subnormals */
#define C_MIN (UINT64_C(1) << 52)     /* smallest normal significand */
#define MASK63 ((UINT64_C(1) << 63) - 1)

/* floor(q log10 2), floor(log10(3/4 2^q)) and floor(e log2 10), exact for
 * the ranges used here (checked against big-integer results for |q| < 1200
 * and |e| < 400). Right shifts of negative values are arithmetic with the
 * compilers Goblin supports. */
static int flog10pow2(int q)
{
    return (int)(((int64_t)q * 661971961083) >> 41);
}

static int flog10_three_quarters_pow2(int q)
{
    return (int)(((int64_t)q * 661971961083 - 274743187321) >> 41);
}

static int flog2pow10(int e)
{
    return (int)(((int64_t)e * 913124641741) >> 38);
}

static uint64_t mul_high(uint64_t a, uint64_t b)
{
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
}

/* cp * g / 2^127 rounded to odd, with g = g1 * 2^63 + g0. */
static uint64_t round_to_odd(uint64_t g1, uint64_t g0, uint64_t cp)
{
    unsigned __int128 y = (unsigned __int128)g1 * cp;
    uint64_t x1 = mul_high(g0, cp);
    uint64_t z = ((uint64_t)y >> 1) + x1;
    uint64_t vbp = (uint64_t)(y >> 64) + (z >> 63);

    return vbp | (((z & MASK63) + MASK63) >> 63);
}

/* The decimal f * 10^*e10 of fewest digits (then closest to v, ties to
 * even) that reads back as v = c * 2^q, c > 0. f may end in zeros. */
static uint64_t shortest_decimal(int q, uint64_t c, int *e10)
{
    uint64_t out = c & 1, cb = c << 2, cbr = cb + 2, cbl;
    uint64_t vb, vbl, vbr, s, t;
    const uint64_t *g;
    int k, h, uin, win;

    if (c != C_MIN || q == Q_MIN) {
        cbl = cb - 2;
        k = flog10pow2(q);
    } else {
        /* At a power of two the gap below is half the gap above. */
        cbl = cb - 1;
        k = flog10_three_quarters_pow2(q);
    }
    h = q + flog2pow10(-k) + 2;
    g = goblin__pow10_g[k - GOBLIN__POW10_K_MIN];
    vb = round_to_odd(g[0], g[1], cb << h);
    vbl = round_to_odd(g[0], g[1], cbl << h);
    vbr = round_to_odd(g[0], g[1], cbr << h);
    s = vb >> 2;
    *e10 = k;
    if (s >= 100) {
        /* Is exactly one multiple of ten in the interval? Then it is the
         * shorter answer. */
        uint64_t sp10 = s / 10 * 10, tp10 = sp10 + 10;
        int upin = vbl + out <= sp10 << 2;
        int wpin = (tp10 << 2) + out <= vbr;

        if (upin != wpin)
            return upin ? sp10 : tp10;
    }
    t = s + 1;
    uin = vbl + out <= s << 2;
    win = (t << 2) + out <= vbr;
    if (uin != win)
        return uin ? s : t;
    if (vb < (s + t) << 1 || (vb == (s + t) << 1 && (s & 1) == 0))
        return s;
    return t;
}

/* Lays out n digits d with value d * 10^k as fpconv_dtoa's emit_digits
 * does. Returns the length written at dest. */
static size_t emit_digits(char *dest, const char *d, int n, int k)
{
    int exp = k + n - 1 < 0 ? -(k + n - 1) : k + n - 1;
    size_t i = 0;

    if (k >= 0 && exp < n + 7) {              /* plain integer */
        memcpy(dest, d, (size_t)n);
        memset(dest + n, '0', (size_t)k);
        return (size_t)(n + k);
    }
    if (k < 0 && (k > -7 || exp < 4)) {       /* decimal, no exponent */
        int offset = n + k;

        if (offset <= 0) {
            dest[0] = '0';
            dest[1] = '.';
            memset(dest + 2, '0', (size_t)-offset);
            memcpy(dest + 2 - offset, d, (size_t)n);
            return (size_t)(n + 2 - offset);
        }
        memcpy(dest, d, (size_t)offset);
        dest[offset] = '.';
        memcpy(dest + offset + 1, d + offset, (size_t)(n - offset));
        return (size_t)(n + 1);
    }
    dest[i++] = d[0];                         /* d.ddde+x */
    if (n > 1) {
        dest[i++] = '.';
        memcpy(dest + i, d + 1, (size_t)(n - 1));
        i += (size_t)(n - 1);
    }
    dest[i++] = 'e';
    dest[i++] = k + n - 1 < 0 ? '-' : '+';
    return i + goblin__u64_format(dest + i, (uint64_t)exp);
}

/* Most scores have few decimals. When an integer m of at most 2^50 (here
 * a * 1000 rounded) gives m / 1000 reading back as a, no other decimal
 * with three or fewer fraction digits lies in a's rounding interval (it
 * is narrower than a * 2^-52 <= 1/4000), and a decimal with more fraction
 * digits would need more digits: so m * 10^-3 has the shortest, closest
 * digits, the ones Schubfach would find, for one multiply and one divide.
 * a * 1000 need not be exact, which it is not for a score of 10 integer
 * digits in one case out of a hundred: the division checks m. */
static inline int short_decimal(double a, uint64_t *f)
{
    double s = a * 1000.0;
    int64_t m;

    if (!(s >= 1.0 && s <= 0x1p50))
        return 0;
    /* s + 0.5 is exact below 2^50, and its truncation an int64. */
    m = (int64_t)(s + 0.5);
    if ((double)m / 1000.0 != a)
        return 0;
    *f = (uint64_t)m;
    return 1;
}

/* f without its trailing zeros, *e10 raised to match. f > 0. */
static uint64_t strip_zeros(uint64_t f, int *e10)
{
    while (f % 100000000 == 0) {
        f /= 100000000;
        *e10 += 8;
    }
    if (f % 10000 == 0) {
        f /= 10000;
        *e10 += 4;
    }
    if (f % 100 == 0) {
        f /= 100;
        *e10 += 2;
    }
    if (f % 10 == 0) {
        f /= 10;
        *e10 += 1;
    }
    return f;
}

static size_t format_special(char *buf, uint64_t bits)
{
    int neg = (int)(bits >> 63);

    if ((bits & ((UINT64_C(1) << 52) - 1)) != 0) {
        memcpy(buf, "nan", 3);
        return 3;
    }
    if (neg) {
        memcpy(buf, "-inf", 4);
        return 4;
    }
    memcpy(buf, "inf", 3);
    return 3;
}

/* The fraction f / 1000 (0 < f < 1000) after the n digits of an integer
 * part at buf: a point and one to three digits without trailing zeros,
 * which is what strip_zeros and emit_digits make of short_decimal's
 * m * 10^-3 (a fraction of three or fewer digits never takes an
 * exponent), with no division and no variable-length copy. Returns the
 * whole text's length. */
static inline size_t thousandths_after(char *buf, size_t n, unsigned f)
{
    /* f * 41 >> 12 is f / 100 for every f < 1000. */
    unsigned a = (f * 41) >> 12, bc = f - a * 100;

    buf[n] = '.';
    buf[n + 1] = (char)('0' + a);
    memcpy(buf + n + 2, digit_pairs + bc * 2, 2);
    /* Three digits, else two (bc ends in 0), else one (bc is 0). */
    return n + 4 - (digit_pairs[bc * 2 + 1] == '0') - (bc == 0);
}

/* The text of -ip - f / 1000 if neg, else ip + f / 1000, for an ip of
 * 10^10 or more (short_decimal's range ends below 2^40). */
static __attribute__((noinline)) size_t thousandths_long(char *buf,
                                                         size_t neg,
                                                         uint64_t ip,
                                                         unsigned f)
{
    return neg + thousandths_after(buf + neg, goblin__u64_format(buf + neg,
                                                                 ip), f);
}

/* The shortest digits of a finite, nonzero, not whole v, laid out. */
static __attribute__((noinline)) size_t shortest_text(char *buf,
                                                      uint64_t bits)
{
    uint64_t c = bits & ((UINT64_C(1) << 52) - 1);
    int bq = (int)(bits >> 52) & 0x7ff, q, e10, n;
    size_t neg = (size_t)(bits >> 63);
    char digits[24];

    if (bq != 0) {
        c |= C_MIN;
        q = bq - 1075;
    } else {
        q = Q_MIN;
    }
    c = shortest_decimal(q, c, &e10);
    c = strip_zeros(c, &e10);
    n = (int)u64_format_roomy(digits, c);
    buf[0] = '-';
    return neg + emit_digits(buf + neg, digits, n, e10);
}

/* v that is not a whole number of magnitude up to 2^62 (those print as
 * integers) nor a short decimal: a fraction, a larger number, an
 * infinity or NaN. */
static __attribute__((noinline)) size_t double_format_rest(char *buf,
                                                           double v)
{
    uint64_t bits;

    memcpy(&bits, &v, sizeof(bits));
    if (((bits >> 52) & 0x7ff) == 0x7ff)
        return format_special(buf, bits);
    return shortest_text(buf, bits);
}

/* v truncated toward zero, or INT64_MIN when that is not an int64 (NaN,
 * |v| >= 2^63). x86-64's cvttsd2si does exactly this for every v; the C
 * cast is undefined past the range, so elsewhere the range is tested. */
static inline int64_t trunc_int64(double v)
{
#if defined(__x86_64__) && defined(__SSE2__)
    return _mm_cvttsd_si64(_mm_set_sd(v));
#else
    return v > -0x1p63 && v < 0x1p63 ? (int64_t)v : INT64_MIN;
#endif
}

/* A whole v of magnitude 10^10 or more, i = trunc_int64(v): up to 2^62
 * an integer, as Redis's double2ll prints it. Out of line, as its digit
 * writer keeps more registers than the common roads may save. */
static __attribute__((noinline)) size_t whole_text(char *buf, double v,
                                                   int64_t i)
{
    if (i < -(INT64_C(1) << 62) || i > INT64_C(1) << 62)
        return double_format_rest(buf, v);
    return int64_format(buf, i);
}

/* v that is not a whole number of magnitude below 2^63: a fraction, an
 * infinity or NaN. i is trunc_int64(v). A fraction with at most three
 * decimals (short_decimal's test: then |v| < 2^40) prints as |i|, a point
 * and the decimals; m / 1000 and v then share their rounding interval,
 * which holds no integer (that would be the one multiple of 0.001 in it,
 * m / 1000, and v would be whole), so |i| is m / 1000 truncated and the
 * fraction is m less 1000 |i|. */
static __attribute__((noinline)) size_t fraction_text(char *buf, double v,
                                                      int64_t i, size_t neg)
{
    uint64_t m, ipa = neg ? 0 - (uint64_t)i : (uint64_t)i;
    unsigned f;

    if (!short_decimal(fabs(v), &m))
        return double_format_rest(buf, v);
    f = (unsigned)(m - ipa * 1000);
    buf[0] = '-';
    if (ipa >= UINT64_C(10000000000))
        return thousandths_long(buf, neg, ipa, f);
    return neg + thousandths_after(buf + neg,
                                   ten_digits_format(buf + neg, ipa), f);
}

size_t goblin_double_format(char *buf, double v)
{
    /* The common score first: a whole number below 10^10 in magnitude
     * prints as that integer, zero as "0" or "-0" (the sign comes from the
     * bits, not from i). NaN and the magnitudes of 2^63 and more make i
     * INT64_MIN, which is not v but for v = -2^63. */
    int64_t i = trunc_int64(v);
    uint64_t bits, u;
    size_t neg;

    memcpy(&bits, &v, sizeof(bits));
    neg = (size_t)(bits >> 63);
    u = neg ? 0 - (uint64_t)i : (uint64_t)i;
    if (__builtin_expect((double)i != v, 0))
        return fraction_text(buf, v, i, neg);
    if (__builtin_expect(u >= UINT64_C(10000000000), 0))
        return whole_text(buf, v, i);
    buf[0] = '-';
    return neg + ten_digits_format(buf + neg, u);
}

/* ---- long double (INCRBYFLOAT) ---------------------------------------- */

/* printf's %.17Lf writes the locale's decimal point; the C locale's is
 * '.'. The text is [-]digits <point> 17 digits, so whatever sits between
 * the integer digits and the last 17 is the point, and it becomes '.'. */
static size_t fix_decimal_point(char *buf, size_t len)
{
    size_t i = buf[0] == '-', end = len - 17;

    while (i < end && buf[i] >= '0' && buf[i] <= '9')
        i++;
    if (end - i == 1) {
        buf[i] = '.';
        return len;
    }
    buf[i] = '.';
    memmove(buf + i + 1, buf + end, 17);
    return i + 18;
}

size_t goblin_long_double_format(char *buf, size_t cap, long double v)
{
    char tmp[GOBLIN_LONG_DOUBLE_TEXT_MAX + 64];
    int r;
    size_t len;

    /* The room checks are ld2string's, which counts a NUL. */
    if (isnan(v)) {
        if (cap < 4)
            return 0;
        memcpy(buf, "nan", 3);
        return 3;
    }
    if (isinf(v)) {
        if (cap < 5)
            return 0;
        memcpy(buf, "-inf", 4);
        if (v < 0)
            return 4;
        memcpy(buf, "inf", 3);
        return 3;
    }
    r = snprintf(tmp, sizeof(tmp), "%.17Lf", v);
    if (r < 19 || (size_t)r >= sizeof(tmp))
        return 0;
    len = fix_decimal_point(tmp, (size_t)r);
    while (tmp[len - 1] == '0')
        len--;
    if (tmp[len - 1] == '.')
        len--;
    if (len == 2 && tmp[0] == '-' && tmp[1] == '0') {
        tmp[0] = '0';
        len = 1;
    }
    /* Redis's ld2string needs room for a NUL as well. */
    if (len + 1 > cap)
        return 0;
    memcpy(buf, tmp, len);
    return len;
}
