/* bitmap.h - strings seen as arrays of bits (SETBIT, GETBIT, BITCOUNT,
 * BITPOS, BITOP, BITFIELD), inside libgoblin.
 *
 * Bit 0 is the most significant bit of byte 0, as in Redis (bitops.c).
 * The pure functions work on byte arrays, a machine word at a time where
 * the operation allows it; the store functions look keys up and grow
 * their strings with zero bytes, always leaving them "raw" as Redis's
 * dbUnshareStringValue does.
 */
#ifndef GOBLIN_BITMAP_H
#define GOBLIN_BITMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "goblin/common.h"

/* ---- on bytes ---- */

/* The number of set bits in p[0..n). */
uint64_t goblin__popcount(const uint8_t *p, size_t n);

/* The position of the first bit equal to bit in p[0..n), as Redis's
 * redisBitpos: none found is -1 for a 1 and n * 8 for a 0 (the string
 * reads as padded with zeros on the right). */
int64_t goblin__bitpos(const uint8_t *p, size_t n, int bit);

/* The bits [off, off + bits) of p as an unsigned number, most significant
 * bit first (1 <= bits <= 64); p must hold them. */
uint64_t goblin__bitfield_get(const uint8_t *p, uint64_t off, unsigned bits);
/* The same bits as a two's complement number. */
int64_t goblin__bitfield_get_signed(const uint8_t *p, uint64_t off,
                                    unsigned bits);
/* Writes the low bits of v there. */
void goblin__bitfield_set(uint8_t *p, uint64_t off, unsigned bits,
                          uint64_t v);

/* BITFIELD's overflow behaviours. */
enum goblin__bf_overflow {
    GOBLIN__BF_WRAP, GOBLIN__BF_SAT, GOBLIN__BF_FAIL,
};

/* Whether value + incr leaves the range of an unsigned (or signed) field
 * of bits bits, with *limit the value WRAP or SAT makes of it, exactly as
 * Redis's checkUnsignedBitfieldOverflow / checkSignedBitfieldOverflow
 * (the value itself may be out of range: SET checks it with incr 0).
 * Returns 0, 1 (above) or -1 (below). */
int goblin__bf_overflow_u(uint64_t value, int64_t incr, unsigned bits,
                          enum goblin__bf_overflow ow, uint64_t *limit);
int goblin__bf_overflow_s(int64_t value, int64_t incr, unsigned bits,
                          enum goblin__bf_overflow ow, int64_t *limit);

enum goblin__bitop {
    GOBLIN__BITOP_AND, GOBLIN__BITOP_OR, GOBLIN__BITOP_XOR, GOBLIN__BITOP_NOT,
};

/* dst[0..maxlen) = op over the n sources, each src[i] of len[i] bytes
 * read as padded with zeros to maxlen (NOT takes src[0] only). */
void goblin__bitop_bytes(enum goblin__bitop op, uint8_t *dst, size_t maxlen,
                         const uint8_t *const *src, const size_t *len,
                         size_t n);

/* ---- on the store ---- */

/* SETBIT: bit off of key to on (0 or 1), growing the string as needed.
 * Returns the old bit, GOBLIN_EWRONGTYPE, GOBLIN_ESTRBIG (past
 * the store's string limit) or GOBLIN_ENOMEM. */
int goblin__bit_set(goblin_store *st, struct goblin_slice key, uint64_t off,
                    int on);

/* BITOP op dst keys...: stores the result (deleting dst when it is
 * empty) and returns its length, GOBLIN_EWRONGTYPE or GOBLIN_ENOMEM. */
int64_t goblin__bit_op(goblin_store *st, enum goblin__bitop op,
                       struct goblin_slice dst,
                       const struct goblin_slice *keys, size_t n);

/* One BITFIELD operation, decoded. */
enum goblin__bf_kind { GOBLIN__BF_GET, GOBLIN__BF_SET, GOBLIN__BF_INCRBY };
struct goblin__bf_op {
    enum goblin__bf_kind kind;
    enum goblin__bf_overflow ow;
    bool sign;
    unsigned bits;  /* 1..64 signed, 1..63 unsigned */
    uint64_t off;   /* in bits */
    int64_t value;  /* SET's value, INCRBY's increment */
};
/* One result: the value, or failed (OVERFLOW FAIL: a null). */
struct goblin__bf_result {
    int64_t value;
    bool failed;
};

/* Runs BITFIELD's n operations in order into out[0..n). With only GETs
 * the key is read (absent reads as zeros); else it is grown to hold the
 * farthest field written. Returns 0, GOBLIN_EWRONGTYPE, GOBLIN_ESTRBIG or
 * GOBLIN_ENOMEM (nothing changed). */
int goblin__bit_field(goblin_store *st, struct goblin_slice key,
                      const struct goblin__bf_op *ops, size_t n,
                      struct goblin__bf_result *out);

/* Makes key (absent or a string) a raw string of at least len bytes,
 * zeros added at its end, and sets *bytes and *out_len to its bytes.
 * Returns 1 when it was created or grew, 0 when it only became raw,
 * GOBLIN_EWRONGTYPE, GOBLIN_ESTRBIG or GOBLIN_ENOMEM (nothing changed).
 * The caller began the write (goblin__write_begin); string.c. */
int goblin__str_grow_zero(goblin_store *st, struct goblin_slice key,
                          size_t len, uint8_t **bytes, size_t *out_len);

/* Stores a raw string of len bytes under key (any type before; no
 * deadline after, as Redis's setKey does for a computed value, unless
 * keep_ttl) and returns where the caller writes the bytes, or NULL
 * (GOBLIN_ENOMEM). The caller began the write; string.c. */
uint8_t *goblin__str_put_raw(goblin_store *st, struct goblin_slice key,
                             size_t len, bool keep_ttl);

#endif
