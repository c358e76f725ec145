/* hll.h - HyperLogLog on strings (PFADD, PFCOUNT, PFMERGE, PFDEBUG,
 * PFSELFTEST), in Redis's own representation (hyperloglog.c), inside
 * libgoblin.
 *
 * A value is a string: a 16-byte header ("HYLL", the encoding byte, three
 * unused bytes, the cached cardinality as 8 little-endian bytes whose top
 * bit marks it stale), then 16384 registers of 6 bits, either dense
 * (12288 bytes) or sparse (runs of ZERO, XZERO and VAL opcodes). Elements
 * hash with MurmurHash64A and seed 0xadc83b19, so a value is byte for
 * byte what Redis stores for the same additions and counts agree.
 */
#ifndef GOBLIN_HLL_H
#define GOBLIN_HLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "goblin/common.h"

#define GOBLIN__HLL_REGISTERS 16384
#define GOBLIN__HLL_HDR 16
#define GOBLIN__HLL_DENSE_SIZE (GOBLIN__HLL_HDR + GOBLIN__HLL_REGISTERS * 6 / 8)

/* The store's HLL refusals, beyond GOBLIN_EWRONGTYPE and GOBLIN_ENOMEM:
 * a string that is no HLL (Redis's "WRONGTYPE Key is not a valid
 * HyperLogLog string value."), and a sparse HLL whose runs do not cover
 * exactly 16384 registers ("INVALIDOBJ Corrupted HLL object detected"). */
#define GOBLIN__EHLL_NOT (-1900)
#define GOBLIN__EHLL_CORRUPT (-1901)

uint64_t goblin__murmur64a(const void *key, size_t len, uint64_t seed);

/* The register an element lands in and the run of zeros its hash gives
 * (1..51), as hllPatLen. */
int goblin__hll_patlen(const void *ele, size_t len, long *reg);

/* Whether v passes isHLLObjectOrReply's checks. */
bool goblin__hll_valid(struct goblin_slice v);

/* PFADD: adds n elements (n may be 0) to the HLL at key, creating it.
 * Returns 1 when a register changed (or the key was made), 0, or
 * GOBLIN_EWRONGTYPE, GOBLIN__EHLL_NOT, GOBLIN__EHLL_CORRUPT,
 * GOBLIN_ENOMEM (nothing changed). sparse_max: hll-sparse-max-bytes. */
int goblin__hll_add(goblin_store *st, struct goblin_slice key,
                    const struct goblin_slice *elems, size_t n,
                    size_t sparse_max);

/* PFCOUNT of one key (caching the result in the value, as Redis does) or
 * of the union of n keys. Returns 0 with *card, or an error as above. */
int goblin__hll_count(goblin_store *st, const struct goblin_slice *keys,
                      size_t n, uint64_t *card);

/* PFMERGE dst keys...: dst (one of the inputs itself) becomes the union.
 * Returns 0 or an error as above. */
int goblin__hll_merge(goblin_store *st, struct goblin_slice dst,
                      const struct goblin_slice *keys, size_t n,
                      size_t sparse_max);

/* PFDEBUG's view of key: 1 with *v (the value made raw, as Redis
 * unshares it), 0 when absent, or an error as above. */
int goblin__hll_debug_view(goblin_store *st, struct goblin_slice key,
                           struct goblin_slice *v);
/* PFDEBUG TODENSE / GETREG: makes the HLL at key dense. Returns 1 when it
 * was sparse, 0, or an error; with regs, the 16384 registers. */
int goblin__hll_todense(goblin_store *st, struct goblin_slice key,
                        uint8_t *regs);

/* PFSELFTEST: checks the registers, sparse and dense agreement and the
 * estimate's error. Returns NULL, or the failure's text (static). */
const char *goblin__hll_selftest(goblin_store *st);

#endif
