/* checksum.h - the checksums persistence uses: CRC32C (Castagnoli) for
 * Goblin's snapshots and CRC64 (Jones, reflected, as Redis computes it)
 * for RDB files, plus the LZF decompressor RDB strings need.
 *
 * Neither checksum keeps state between calls: CRC32C's fallback table is
 * a constant, and CRC64's slicing tables live in a struct the caller
 * builds once per file (lib/ keeps no mutable static state).
 */
#ifndef GOBLIN_SNAPSHOT_CHECKSUM_H
#define GOBLIN_SNAPSHOT_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/* CRC32C of n bytes at p, continuing from crc (0 to start): the same
 * convention as zlib's crc32, so crc32c(crc32c(0, a), b) == crc32c(0, ab).
 * Uses the SSE4.2 crc32 instruction when the CPU has it (checked at run
 * time), else a table. */
uint32_t goblin__crc32c(uint32_t crc, const void *p, size_t n);

/* The two implementations, for tests: the portable one always works; the
 * hardware one returns the portable result when the CPU lacks SSE4.2. */
uint32_t goblin__crc32c_sw(uint32_t crc, const void *p, size_t n);
uint32_t goblin__crc32c_hw(uint32_t crc, const void *p, size_t n);

/* CRC64 with Jones's polynomial (0xad93d23594c935a9), reflected, initial
 * value 0 and no final xor: Redis's crc64. Slicing-by-8 tables. */
struct goblin__crc64 {
    uint64_t t[8][256];
};

void goblin__crc64_init(struct goblin__crc64 *c);
uint64_t goblin__crc64(const struct goblin__crc64 *c, uint64_t crc,
                       const void *p, size_t n);

/* Decompresses LZF data in[0..in_len) into exactly out_len bytes at out.
 * Returns 0, or -1 when the input is malformed (a back reference before
 * the start, a run past either end) or does not yield exactly out_len
 * bytes. Never reads or writes outside the two buffers. */
int goblin__lzf_decompress(const uint8_t *in, size_t in_len, uint8_t *out,
                           size_t out_len);

#endif
