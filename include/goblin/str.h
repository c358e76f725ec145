/* goblin/str.h - string values: GET, SET (NX, XX, GET, EX, PX, EXAT, PXAT,
 * KEEPTTL), SETNX, SETEX, GETSET, GETDEL, GETEX, APPEND, STRLEN, SETRANGE,
 * GETRANGE, INCR, DECR, INCRBY, DECRBY, INCRBYFLOAT, MGET, MSET, MSETNX.
 *
 * Values are binary-safe and copied in. Reads hand back a view, a
 * struct goblin_slice borrowing from the store, valid until the next call
 * that writes to the store (a view of a key whose deadline has passed ends
 * at the next call). A view of a present value never has a NULL ptr, even
 * when empty. A string holds at most the store's limit: 512 MB (Redis's
 * default proto-max-bulk-len) unless goblin_config.string_max raises it,
 * up to GOBLIN_STRING_LIMIT, what a value record's 32-bit length holds.
 * "512 MB" below means that limit.
 *
 * Writes that change a key report it through the store's key_changed hook
 * and count in goblin_store_dirty. Setting a value without KEEPTTL drops the
 * key's deadline, as in Redis; APPEND, SETRANGE and the INCR family keep it.
 */
#ifndef GOBLIN_STR_H
#define GOBLIN_STR_H

#include "goblin/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The longest string value by default: 512 MB. */
#define GOBLIN_STRING_MAX ((size_t)512 * 1024 * 1024)
/* The most goblin_config.string_max may be: 4 GiB - 1 bytes. */
#define GOBLIN_STRING_LIMIT ((size_t)UINT32_MAX)

/* GET. Returns 1 and sets *out to a view of the value, 0 when key is
 * absent, or GOBLIN_EWRONGTYPE. */
GOBLIN_API int goblin_str_get(goblin_store *st, struct goblin_slice key,
                              struct goblin_slice *out);

/* How a write treats the key's deadline. Each call lists what it takes;
 * any other is GOBLIN_ESYNTAX. */
enum goblin_ttl_mode {
    GOBLIN_TTL_DEFAULT = 0, /* SET: drop the deadline; GETEX: keep it */
    GOBLIN_TTL_EX = 1,      /* value seconds from now */
    GOBLIN_TTL_PX = 2,      /* value ms from now */
    GOBLIN_TTL_EXAT = 3,    /* at Unix time value, in seconds */
    GOBLIN_TTL_PXAT = 4,    /* at Unix time value, in ms */
    GOBLIN_TTL_KEEP = 5,    /* SET KEEPTTL: keep the deadline */
    GOBLIN_TTL_PERSIST = 6, /* GETEX PERSIST: drop the deadline */
};

enum goblin_set_cond {
    GOBLIN_SET_ALWAYS = 0,
    GOBLIN_SET_NX = 1, /* only when key is absent */
    GOBLIN_SET_XX = 2, /* only when key exists */
};

/* The options of SET. A zeroed struct is a plain SET. */
struct goblin_set_options {
    enum goblin_set_cond cond;
    enum goblin_ttl_mode ttl;   /* DEFAULT, EX, PX, EXAT, PXAT or KEEP */
    int64_t ttl_value;          /* with EX, PX, EXAT, PXAT: must be > 0 */
    int get;                    /* nonzero: SET ... GET, see below */
};

/* Bits of goblin_str_set's result. */
#define GOBLIN_SET_DONE 0x1    /* the value was set */
#define GOBLIN_SET_HAD_OLD 0x2 /* with get: key held a string, in *old */

/* SET key value with opts (NULL for none). Returns a combination of
 * GOBLIN_SET_* bits (0: NX or XX stopped it), or an error, with nothing
 * changed:
 *  - GOBLIN_EINVAL: ttl_value <= 0 or the deadline overflows ("ERR
 *    invalid expire time in 'set' command"); checked first, as Redis does;
 *  - GOBLIN_ESYNTAX: a ttl mode SET does not take, or a bad cond;
 *  - GOBLIN_ESTRBIG: value is longer than 512 MB;
 *  - GOBLIN_EWRONGTYPE: with get, when key holds another type (without
 *    get any type is overwritten);
 *  - GOBLIN_ENOMEM.
 * With get, *old (which may then not be NULL) receives a view of the old
 * value when key held a string, and GOBLIN_SET_HAD_OLD says so; the view
 * stays valid although the call overwrote it. A deadline already past is
 * stored as given; the key then reads as absent (as in Redis). */
GOBLIN_API int goblin_str_set(goblin_store *st, struct goblin_slice key,
                              struct goblin_slice value,
                              const struct goblin_set_options *opts,
                              struct goblin_slice *old);

/* GETSET: sets value (dropping any deadline) and returns 1 with *old a view
 * of the old value, or 0 when key was absent; GOBLIN_EWRONGTYPE (nothing
 * set) or GOBLIN_ENOMEM. */
GOBLIN_API int goblin_str_getset(goblin_store *st, struct goblin_slice key,
                                 struct goblin_slice value,
                                 struct goblin_slice *old);

/* GETDEL: returns 1 with *out a view of the value and deletes key, 0 when
 * absent, or GOBLIN_EWRONGTYPE (nothing deleted). */
GOBLIN_API int goblin_str_getdel(goblin_store *st, struct goblin_slice key,
                                 struct goblin_slice *out);

/* GETEX: returns 1 with *out a view of the value and then applies ttl
 * (DEFAULT: no change, EX, PX, EXAT, PXAT with value, or PERSIST); 0 when
 * absent (nothing else is checked, as in Redis); GOBLIN_EWRONGTYPE; then
 * GOBLIN_EINVAL for a value <= 0 or a deadline that overflows ("ERR invalid
 * expire time in 'getex' command"); GOBLIN_ESYNTAX for another mode;
 * GOBLIN_ENOMEM. An EXAT or PXAT deadline not after now deletes the key
 * (the value is still returned). */
GOBLIN_API int goblin_str_getex(goblin_store *st, struct goblin_slice key,
                                enum goblin_ttl_mode ttl, int64_t value,
                                struct goblin_slice *out);

/* APPEND: appends value (creating key if absent) and returns the new
 * length, or GOBLIN_EWRONGTYPE, GOBLIN_ESTRBIG (the result would pass 512
 * MB) or GOBLIN_ENOMEM. */
GOBLIN_API int64_t goblin_str_append(goblin_store *st,
                                     struct goblin_slice key,
                                     struct goblin_slice value);

/* STRLEN: the length of the value, 0 when absent, or GOBLIN_EWRONGTYPE. */
GOBLIN_API int64_t goblin_str_len(goblin_store *st, struct goblin_slice key);

/* SETRANGE: writes value at offset, padding with zero bytes, and returns
 * the new length. An empty value changes nothing (and creates no key). In
 * Redis's order: GOBLIN_EOFFSET when offset < 0 ("ERR offset is out of
 * range"), GOBLIN_EWRONGTYPE, GOBLIN_ESTRBIG when offset + length passes
 * 512 MB ("ERR string exceeds maximum allowed size (proto-max-bulk-len)"),
 * GOBLIN_ENOMEM. */
GOBLIN_API int64_t goblin_str_setrange(goblin_store *st,
                                       struct goblin_slice key,
                                       int64_t offset,
                                       struct goblin_slice value);

/* GETRANGE: the bytes from start to end inclusive, negative offsets
 * counting from the end, clamped as Redis clamps them. Returns 1 with *out
 * a view (possibly empty), 0 when key is absent (the reply is then an empty
 * string too), or GOBLIN_EWRONGTYPE. */
GOBLIN_API int goblin_str_getrange(goblin_store *st, struct goblin_slice key,
                                   int64_t start, int64_t end,
                                   struct goblin_slice *out);

/* INCRBY (INCR, DECR with +1, -1): adds delta to the integer value (absent
 * counts as 0) and stores it, keeping any deadline. Returns 0 with
 * *result, GOBLIN_EWRONGTYPE, GOBLIN_ENOTINT when the value is not an
 * integer as Redis's string2ll reads them ("ERR value is not an integer or
 * out of range"), GOBLIN_EOVERFLOW ("ERR increment or decrement would
 * overflow"), or GOBLIN_ENOMEM. */
GOBLIN_API int goblin_str_incrby(goblin_store *st, struct goblin_slice key,
                                 int64_t delta, int64_t *result);

/* DECRBY: as goblin_str_incrby with -delta. delta INT64_MIN is
 * GOBLIN_EOVERFLOW before the key is looked at; Redis's text for that case
 * is "ERR decrement would overflow". */
GOBLIN_API int goblin_str_decrby(goblin_store *st, struct goblin_slice key,
                                 int64_t delta, int64_t *result);

/* INCRBYFLOAT: adds incr to the value read as a long double (absent counts
 * as 0) and stores the sum as Redis writes it (%.17Lf, trailing zeros and a
 * bare point trimmed), keeping any deadline. Returns 0 with *result a view
 * of the stored text; GOBLIN_EWRONGTYPE; GOBLIN_ENOTFLOAT when the stored
 * value is not a float ("ERR value is not a valid float");
 * GOBLIN_ENANINF when incr is NaN or infinite or the sum is ("ERR
 * increment would produce NaN or Infinity"); GOBLIN_ENOMEM. */
GOBLIN_API int goblin_str_incrbyfloat(goblin_store *st,
                                      struct goblin_slice key,
                                      long double incr,
                                      struct goblin_slice *result);

/* INCRBYFLOAT with the increment as text, checked in Redis's order: the
 * key's type, then the stored value, then incr (GOBLIN_ENOTFLOAT). */
GOBLIN_API int goblin_str_incrbyfloat_text(goblin_store *st,
                                           struct goblin_slice key,
                                           struct goblin_slice incr,
                                           struct goblin_slice *result);

/* MGET: for each of the n keys, out[i] is a view of its value, or
 * {NULL, 0} when absent or not a string. Returns the number found. */
GOBLIN_API size_t goblin_str_mget(goblin_store *st,
                                  const struct goblin_slice *keys, size_t n,
                                  struct goblin_slice *out);

/* MSET: sets keys[i] to values[i] for i < n, in order (a repeated key
 * ends with its last value), dropping deadlines. All or nothing: returns 0,
 * or GOBLIN_ESTRBIG (a value over 512 MB) or GOBLIN_ENOMEM with nothing
 * changed. */
GOBLIN_API int goblin_str_mset(goblin_store *st,
                               const struct goblin_slice *keys,
                               const struct goblin_slice *values, size_t n);

/* MSETNX: as goblin_str_mset when none of the keys exists, returning 1;
 * otherwise sets nothing and returns 0. Or GOBLIN_ENOMEM. */
GOBLIN_API int goblin_str_msetnx(goblin_store *st,
                                 const struct goblin_slice *keys,
                                 const struct goblin_slice *values, size_t n);

/* SETNX: returns 1 when key was absent and is now set, else 0; or
 * GOBLIN_ENOMEM. */
GOBLIN_API int goblin_str_setnx(goblin_store *st, struct goblin_slice key,
                                struct goblin_slice value);

#ifdef __cplusplus
}
#endif

#endif
