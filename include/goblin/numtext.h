/* goblin/numtext.h - numbers as Redis writes and reads them: doubles
 * (scores), 64-bit integers, long doubles (INCRBYFLOAT) and the range bounds
 * of sorted-set commands.
 *
 * Every function here is pure: no allocation, no global state, and the
 * results do not depend on the process locale (a ',' decimal point in
 * LC_NUMERIC changes nothing). Inputs are byte slices; they need no NUL
 * terminator and may hold NUL bytes. Outputs are written without a NUL.
 */
#ifndef GOBLIN_NUMTEXT_H
#define GOBLIN_NUMTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "goblin/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Room goblin_double_format needs (the longest text is 25 bytes, e.g.
 * "-123456789012345680000000" for -1.2345678901234568e23). */
#define GOBLIN_DOUBLE_TEXT_MAX 32

/* Room goblin_int64_format needs ("-9223372036854775808" is 20 bytes). */
#define GOBLIN_INT64_TEXT_MAX 21

/* Room goblin_long_double_format needs for any finite value (Redis's
 * MAX_LONG_DOUBLE_CHARS; LDBL_MAX in %.17Lf is 4951 bytes). */
#define GOBLIN_LONG_DOUBLE_TEXT_MAX 5120

/* Writes v as Redis 7.2+ writes doubles (d2string: scores in replies and
 * RESP3 doubles) into buf, which must have room for
 * GOBLIN_DOUBLE_TEXT_MAX bytes. Returns the length; no NUL is written.
 *   - NaN is "nan", infinities "inf" and "-inf", zeros "0" and "-0".
 *   - An integral v with |v| <= 2^62 prints as an integer ("3", "-7",
 *     "4611686018427387904"), like Redis's double2ll fast path.
 *   - Anything else prints the shortest digit string that reads back as
 *     the same double (the closest one if several are as short), laid out
 *     with the rules of Redis's fpconv_dtoa: plain digits when the decimal
 *     exponent is small ("0.1", "1.5", "0.00001", "9223372036854776000"),
 *     otherwise one digit, an optional fraction and an exponent of at least
 *     one digit with its sign ("1e+20", "1.5e-7", "5e-324").
 * Redis generates its digits with Grisu2, which for a small share of
 * doubles yields a digit string one digit longer than needed (or not the
 * closest); Goblin always yields the shortest, so those rare values differ
 * in text but never in value. */
GOBLIN_API size_t goblin_double_format(char *buf, double v);

/* Parses s[0..len) as Redis 7's string2d parses a float argument (ZADD
 * and ZINCRBY scores, GEO and other double arguments): strtod's syntax in the C
 * locale over the whole slice -- decimal or hexadecimal ("0x1p4") digits,
 * an optional sign, "inf"/"infinity" in any case -- with no leading space,
 * nothing after the number, no NaN, and no result that overflowed to an
 * infinity or underflowed to zero ("1e400", "1e-400"; subnormals such as
 * "5e-324" are fine). Returns 0 and sets *out, or GOBLIN_ENOTFLOAT and
 * leaves *out alone. Correctly rounded. */
GOBLIN_API int goblin_double_parse(const char *s, size_t len, double *out);

/* Parses s[0..len) exactly as Redis's string2ll: an optional '-', then
 * digits without leading zeros ("0" alone is fine, "-0", "+1", "01", " 1"
 * and "" are not), nothing else, within int64 range. Returns 0 and sets
 * *out, or GOBLIN_ENOTINT and leaves *out alone. */
GOBLIN_API int goblin_int64_parse(const char *s, size_t len, int64_t *out);

/* Writes v in decimal into buf (room for GOBLIN_INT64_TEXT_MAX bytes).
 * Returns the length; no NUL is written. */
GOBLIN_API size_t goblin_int64_format(char *buf, int64_t v);

/* Parses s[0..len) as Redis's string2ld (INCRBYFLOAT and HINCRBYFLOAT
 * operands and the values they add to): strtold's syntax in the C locale,
 * the whole slice, no leading space, at most 5119 bytes, no NaN, no result
 * that overflowed or underflowed to zero. "inf" is accepted (the caller
 * then refuses the infinite result). Returns 0 and sets *out, or
 * GOBLIN_ENOTFLOAT and leaves *out alone. */
GOBLIN_API int goblin_long_double_parse(const char *s, size_t len,
                                        long double *out);

/* Writes v as Redis's ld2string in LD_STR_HUMAN mode (how INCRBYFLOAT
 * stores and returns its result): printf's %.17Lf, then trailing zeros
 * after the point and a bare point trimmed, and "-0" written "0"; "inf",
 * "-inf" and "nan" for the special values. So 10.5 is "10.5", 3.0 is "3",
 * and 1 + -1.1 is "-0.1" (x86's long double carries 64 significant bits;
 * 17 decimals hide its last rounding).
 * Returns the length (no NUL is written) or 0 when cap is too small;
 * GOBLIN_LONG_DOUBLE_TEXT_MAX always suffices. */
GOBLIN_API size_t goblin_long_double_format(char *buf, size_t cap,
                                            long double v);

/* Parses one bound of ZRANGEBYSCORE, ZCOUNT, ZREMRANGEBYSCORE and friends
 * as Redis's zslParseRange: an optional '(' makes it exclusive, the rest is
 * read by strtod in the C locale up to the first NUL byte or the end.
 * Matching Redis, leading white space is skipped, an empty number is 0
 * ("" and "(" are 0), and overflow gives an infinity; only text strtod
 * cannot read whole and NaN are errors. Returns 0 and sets *v and
 * *exclusive (0 or 1), or GOBLIN_ENOTFLOAT ("ERR min or max is not a
 * float") and leaves them alone. */
GOBLIN_API int goblin_score_bound_parse(const char *s, size_t len, double *v,
                                        int *exclusive);

/* One bound of ZRANGEBYLEX, ZLEXCOUNT and ZREMRANGEBYLEX. */
enum goblin_lex_bound_kind {
    GOBLIN_LEX_MIN_INF = 0,   /* "-": below every member */
    GOBLIN_LEX_PLUS_INF = 1,  /* "+": above every member */
    GOBLIN_LEX_INCLUSIVE = 2, /* "[abc": value included */
    GOBLIN_LEX_EXCLUSIVE = 3, /* "(abc": value excluded */
};

struct goblin_lex_bound {
    enum goblin_lex_bound_kind kind;
    /* The member text after '[' or '(' (borrowed from the parsed slice);
     * empty for the infinities. */
    struct goblin_slice value;
};

/* Parses one lex bound as Redis's zslParseLexRangeItem: "-" and "+"
 * (optionally followed by a NUL byte and anything, as Redis reads them as
 * C strings), "[member" or "(member". Returns 0 and fills *out (whose value
 * borrows from s), or GOBLIN_ESYNTAX ("ERR min or max not valid string
 * range item") and leaves *out alone. */
GOBLIN_API int goblin_lex_bound_parse(const char *s, size_t len,
                                      struct goblin_lex_bound *out);

#ifdef __cplusplus
}
#endif

#endif
