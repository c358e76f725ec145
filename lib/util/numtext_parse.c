/* numtext_parse.c - text to numbers as Redis reads them: string2ll,
 * string2d, string2ld and the sorted-set range bounds (zslParseRange,
 * zslParseLexRangeItem).
 *
 * Redis reads floats with strtod/strtold, whose syntax (and whose decimal
 * point) depends on the locale. Goblin scans the C-locale syntax itself --
 * sign, "inf"/"infinity", "nan[(chars)]", decimal or "0x" hexadecimal
 * digits with one optional point, an exponent only when digits follow it
 * -- so the accepted set never changes with LC_NUMERIC. The value comes
 * from a fast exact path (at most 19 significant digits that fit in 53 bits
 * and a power of ten up to 10^22: one correctly rounded multiply or
 * divide), else from the C library's correctly rounded strtod/strtold fed
 * a normalised copy with no decimal point ("12345e-3"), which reads the same
 * in every locale. Beyond 800 significant digits a double's rounding is
 * already decided (halfway points have at most 767), so further digits are
 * folded into one sticky digit. errno is left as it was found.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "goblin/numtext.h"

enum num_kind { NUM_NONE, NUM_DEC, NUM_HEX, NUM_INF, NUM_NAN };

/* A number strtod would read at the start of some text. */
struct num {
    enum num_kind kind;
    int neg;
    const char *mant;  /* digits and at most one '.' */
    size_t mant_len;
    int64_t exp;       /* the written exponent (saturated), 0 if none */
    size_t len;        /* bytes the number spans, sign included */
};

#define DOUBLE_DIGITS_MAX 800
#define EXP_SATURATE 1000000000

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int is_c_space(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Does s[i..len) start with word (lower case), in any case? */
static int has_word(const char *s, size_t len, size_t i, const char *word)
{
    size_t n = strlen(word);

    if (len - i < n)
        return 0;
    for (size_t j = 0; j < n; j++)
        if ((s[i + j] | 0x20) != word[j])
            return 0;
    return 1;
}

/* Digits of base 10 or 16 with at most one point, at least one digit.
 * Returns the bytes spanned, 0 if there is no digit. */
static size_t scan_mantissa(const char *s, size_t len, size_t i, int hex)
{
    size_t start = i, ndig = 0;
    int point = 0;

    for (; i < len; i++) {
        if (hex ? hex_value(s[i]) >= 0 : is_digit(s[i]))
            ndig++;
        else if (s[i] == '.' && !point)
            point = 1;
        else
            break;
    }
    return ndig ? i - start : 0;
}

/* An exponent marker, an optional sign and at least one digit; the value
 * saturates. Returns the bytes spanned, 0 if there is no such exponent. */
static size_t scan_exponent(const char *s, size_t len, size_t i, char mark,
                            int64_t *exp)
{
    size_t start = i;
    int neg = 0;
    int64_t e = 0;

    if (i >= len || (s[i] | 0x20) != mark)
        return 0;
    i++;
    if (i < len && (s[i] == '+' || s[i] == '-'))
        neg = s[i++] == '-';
    if (i >= len || !is_digit(s[i]))
        return 0;
    for (; i < len && is_digit(s[i]); i++)
        if (e < EXP_SATURATE)
            e = e * 10 + (s[i] - '0');
    *exp = neg ? -e : e;
    return i - start;
}

static size_t scan_nan_tail(const char *s, size_t len, size_t i)
{
    size_t j = i + 1;

    if (i >= len || s[i] != '(')
        return 0;
    while (j < len && (is_digit(s[j]) || ((s[j] | 0x20) >= 'a' &&
                       (s[j] | 0x20) <= 'z') || s[j] == '_'))
        j++;
    return j < len && s[j] == ')' ? j + 1 - i : 0;
}

/* Reads the longest number at s[0..len) as strtod would (no white space
 * skipping). n->kind is NUM_NONE when there is none. */
static void scan_number(const char *s, size_t len, struct num *n)
{
    size_t i = 0, m;

    memset(n, 0, sizeof(*n));
    if (i < len && (s[i] == '+' || s[i] == '-'))
        n->neg = s[i++] == '-';
    if (has_word(s, len, i, "inf")) {
        n->kind = NUM_INF;
        n->len = i + (has_word(s, len, i, "infinity") ? 8 : 3);
        return;
    }
    if (has_word(s, len, i, "nan")) {
        n->kind = NUM_NAN;
        n->len = i + 3 + scan_nan_tail(s, len, i + 3);
        return;
    }
    if (len - i >= 2 && s[i] == '0' && (s[i + 1] | 0x20) == 'x' &&
        (m = scan_mantissa(s, len, i + 2, 1)) != 0) {
        n->kind = NUM_HEX;
        n->mant = s + i + 2;
        n->mant_len = m;
        i += 2 + m;
        n->len = i + scan_exponent(s, len, i, 'p', &n->exp);
        return;
    }
    if ((m = scan_mantissa(s, len, i, 0)) == 0)
        return;
    n->kind = NUM_DEC;
    n->mant = s + i;
    n->mant_len = m;
    i += m;
    n->len = i + scan_exponent(s, len, i, 'e', &n->exp);
}

/* Copies the significant digits of n's mantissa to out (at most cap of
 * them, then a sticky '1' when a dropped digit was not zero, so out needs
 * cap + 1 bytes) without leading or trailing zeros. Returns how many; the
 * value is out * base^*shift * base^exp. */
static size_t collect_digits(const struct num *n, char *out, size_t cap,
                             int64_t *shift)
{
    size_t k = 0;
    int64_t sh = 0;
    int point = 0, sticky = 0;

    for (size_t i = 0; i < n->mant_len; i++) {
        char c = n->mant[i];

        if (c == '.') {
            point = 1;
        } else if (k == 0 && c == '0') {
            sh -= point;
        } else if (k < cap) {
            out[k++] = c;
            sh -= point;
        } else {
            sticky |= c != '0';
            sh += !point;
        }
    }
    if (sticky) {
        out[k++] = '1';
        sh--;
    }
    while (k > 0 && out[k - 1] == '0') {
        k--;
        sh++;
    }
    *shift = sh;
    return k;
}

static int64_t clamp_exp(int64_t e)
{
    if (e > 99999999)
        return 99999999;
    if (e < -99999999)
        return -99999999;
    return e;
}

/* Writes "[0x]DIGITS[e|p]EXP" NUL-terminated at buf. */
static void normalised_text(char *buf, const struct num *n,
                            const char *digits, size_t k, int64_t shift)
{
    char *p = buf, tmp[12];
    int64_t e;
    int t = 0;

    if (n->kind == NUM_HEX) {
        *p++ = '0';
        *p++ = 'x';
    }
    memcpy(p, digits, k);
    p += k;
    e = clamp_exp(n->kind == NUM_HEX ? n->exp + 4 * shift : n->exp + shift);
    *p++ = n->kind == NUM_HEX ? 'p' : 'e';
    if (e < 0) {
        *p++ = '-';
        e = -e;
    }
    do {
        tmp[t++] = (char)('0' + e % 10);
        e /= 10;
    } while (e);
    while (t)
        *p++ = tmp[--t];
    *p = '\0';
}

static const double exact_pow10[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* The exact fast path: w and 10^e both exactly doubles, so one IEEE
 * operation rounds correctly. Returns 0 if it does not apply. */
static int fast_value(const char *d, size_t k, int64_t e, double *out)
{
    uint64_t w = 0;

    if (k > 19 || e < -22 || e > 22)
        return 0;
    for (size_t i = 0; i < k; i++)
        w = w * 10 + (uint64_t)(d[i] - '0');
    if (w > (UINT64_C(1) << 53))
        return 0;
    *out = e < 0 ? (double)w / exact_pow10[-e] : (double)w * exact_pow10[e];
    return 1;
}

/* The value of a NUM_DEC or NUM_HEX number; *range_err is set when a
 * non-zero number overflowed to infinity or underflowed to zero. */
static double num_value(const struct num *n, int *range_err)
{
    char digits[DOUBLE_DIGITS_MAX + 1], text[DOUBLE_DIGITS_MAX + 32];
    int64_t shift;
    size_t k = collect_digits(n, digits, DOUBLE_DIGITS_MAX, &shift);
    double v;
    int saved;

    *range_err = 0;
    if (k == 0)
        return n->neg ? -0.0 : 0.0;
    if (n->kind == NUM_DEC && fast_value(digits, k, n->exp + shift, &v))
        return n->neg ? -v : v;
    normalised_text(text, n, digits, k, shift);
    saved = errno;
    v = strtod(text, NULL);
    errno = saved;
    *range_err = isinf(v) || v == 0;
    return n->neg ? -v : v;
}

/* The usual score: [-]DIGITS[.DIGITS], at most 19 digits, whose digits
 * as an integer w fit in 53 bits. Then w and 10^f (f fraction digits,
 * at most 19) are exact doubles and one division rounds correctly, to
 * the value every correctly rounded reading gives (num_value's). 1 with
 * *out, 0 for anything else (left to the full scan). */
static int short_decimal_value(const char *s, size_t len, double *out)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len, *q;
    bool neg = p[0] == '-';
    size_t whole, frac = 0;
    uint64_t w = 0;

    p += neg;
    if ((size_t)(end - p) > 20)
        return 0;
    /* At most 20 characters: w may wrap only past 19 digits, which are
     * refused before w is used. */
    for (q = p; q < end && (unsigned)(*q - '0') < 10; q++)
        w = w * 10 + (unsigned)(*q - '0');
    whole = (size_t)(q - p);
    if (whole == 0)
        return 0;
    if (q < end) {
        if (*q != '.' || q + 1 == end)
            return 0;
        p = ++q;
        for (; q < end && (unsigned)(*q - '0') < 10; q++)
            w = w * 10 + (unsigned)(*q - '0');
        if (q != end)
            return 0;
        frac = (size_t)(q - p);
    }
    if (whole + frac > 19 || w > (UINT64_C(1) << 53))
        return 0;
    *out = frac ? (double)w / exact_pow10[frac] : (double)w;
    if (neg)
        *out = -*out;
    return 1;
}

int goblin_double_parse(const char *s, size_t len, double *out)
{
    struct num n;
    int range_err;
    double v;

    if (len == 0 || is_c_space(s[0]))
        return GOBLIN_ENOTFLOAT;
    if (short_decimal_value(s, len, out))
        return 0;
    scan_number(s, len, &n);
    if (n.kind == NUM_NONE || n.kind == NUM_NAN || n.len != len)
        return GOBLIN_ENOTFLOAT;
    if (n.kind == NUM_INF) {
        *out = n.neg ? -HUGE_VAL : HUGE_VAL;
        return 0;
    }
    v = num_value(&n, &range_err);
    if (range_err)
        return GOBLIN_ENOTFLOAT;
    *out = v;
    return 0;
}

int goblin_int64_parse(const char *s, size_t len, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    uint64_t v;

    /* string2ll: at most 20 bytes, "0" alone, else no leading zero. */
    if (len == 0 || len >= GOBLIN_INT64_TEXT_MAX)
        return GOBLIN_ENOTINT;
    if (len == 1 && s[0] == '0') {
        *out = 0;
        return 0;
    }
    if (s[0] == '-') {
        neg = 1;
        if (++i == len)
            return GOBLIN_ENOTINT;
    }
    if (s[i] < '1' || s[i] > '9')
        return GOBLIN_ENOTINT;
    for (v = 0; i < len; i++) {
        if (!is_digit(s[i]))
            return GOBLIN_ENOTINT;
        if (v > UINT64_MAX / 10 ||
            v * 10 > UINT64_MAX - (uint64_t)(s[i] - '0'))
            return GOBLIN_ENOTINT;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > (uint64_t)INT64_MAX + (uint64_t)neg)
        return GOBLIN_ENOTINT;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

int goblin_long_double_parse(const char *s, size_t len, long double *out)
{
    char digits[GOBLIN_LONG_DOUBLE_TEXT_MAX + 1];
    char text[GOBLIN_LONG_DOUBLE_TEXT_MAX + 32];
    struct num n;
    int64_t shift;
    size_t k;
    long double v;
    int saved;

    if (len == 0 || len >= GOBLIN_LONG_DOUBLE_TEXT_MAX || is_c_space(s[0]))
        return GOBLIN_ENOTFLOAT;
    scan_number(s, len, &n);
    if (n.kind == NUM_NONE || n.kind == NUM_NAN || n.len != len)
        return GOBLIN_ENOTFLOAT;
    if (n.kind == NUM_INF) {
        *out = n.neg ? -HUGE_VALL : HUGE_VALL;
        return 0;
    }
    k = collect_digits(&n, digits, GOBLIN_LONG_DOUBLE_TEXT_MAX, &shift);
    if (k == 0) {
        *out = n.neg ? -0.0L : 0.0L;
        return 0;
    }
    normalised_text(text, &n, digits, k, shift);
    saved = errno;
    v = strtold(text, NULL);
    errno = saved;
    if (isinf(v) || v == 0)
        return GOBLIN_ENOTFLOAT;
    *out = n.neg ? -v : v;
    return 0;
}

int goblin_score_bound_parse(const char *s, size_t len, double *v,
                             int *exclusive)
{
    const char *nul = memchr(s, '\0', len);
    size_t i = 0, start;
    int ex = 0, range_err;
    struct num n;
    double d = 0;

    /* Redis hands strtod a C string: it stops at the first NUL. */
    if (nul != NULL)
        len = (size_t)(nul - s);
    if (len > 0 && s[0] == '(') {
        ex = 1;
        i = 1;
    }
    start = i;
    while (i < len && is_c_space(s[i]))
        i++;
    scan_number(s + i, len - i, &n);
    if (n.kind == NUM_NONE) {
        /* strtod read nothing: only an empty text passes, as 0. */
        if (start != len)
            return GOBLIN_ENOTFLOAT;
    } else if (n.kind == NUM_NAN || i + n.len != len) {
        return GOBLIN_ENOTFLOAT;
    } else if (n.kind == NUM_INF) {
        d = n.neg ? -HUGE_VAL : HUGE_VAL;
    } else {
        d = num_value(&n, &range_err);
    }
    *v = d;
    *exclusive = ex;
    return 0;
}

int goblin_lex_bound_parse(const char *s, size_t len,
                           struct goblin_lex_bound *out)
{
    if (len == 0)
        return GOBLIN_ESYNTAX;
    switch (s[0]) {
    case '+':
    case '-':
        /* Redis tests c[1] != '\0' on a C string. */
        if (len > 1 && s[1] != '\0')
            return GOBLIN_ESYNTAX;
        out->kind = s[0] == '+' ? GOBLIN_LEX_PLUS_INF : GOBLIN_LEX_MIN_INF;
        out->value.ptr = s + 1;
        out->value.len = 0;
        return 0;
    case '(':
    case '[':
        out->kind = s[0] == '(' ? GOBLIN_LEX_EXCLUSIVE : GOBLIN_LEX_INCLUSIVE;
        out->value.ptr = s + 1;
        out->value.len = len - 1;
        return 0;
    default:
        return GOBLIN_ESYNTAX;
    }
}
