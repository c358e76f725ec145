/* format.h - the byte layout of Goblin's snapshot files (version 3), as
 * docs/snapshot.md describes it. All integers are little-endian; lengths
 * and counts inside records are LEB128 varints.
 *
 *   header   64 bytes: magic, version, header size, creation time, key
 *            count, keys with a deadline, block size, flags, function
 *            libraries (version 2; reserved, zero, in version 1),
 *            reserved, CRC32C of the 60 bytes before it
 *   blocks   each: u32 payload length L (1..block size), u32 CRC32C of
 *            (L, block index, payload), L payload bytes. The payloads,
 *            joined, are the record stream; a record may span blocks.
 *   end      a block header with L = 0 (its CRC covers (0, index))
 *   trailer  32 bytes: magic, keys, payload bytes, data blocks, CRC32C
 *            of the header, every block header and the 28 bytes before
 *
 * A record: tag (bits 0-1 and 5 the type, goblin_type's bits 0-1 and 2;
 * bit 2 has a deadline, bits 3-4 string encoding), [i64 deadline ms],
 * varint key length, key, then
 *   string:  varint length, bytes
 *   hash:    varint pairs, varint body bytes, body: pairs of
 *            (varint length, field, varint length, value), each pair
 *            followed by a varint deadline + 1 (0: none) when the tag
 *            has TAG_HASH_TTL (version 3)
 *   zset:    varint pairs, then chunks until that many pairs came:
 *            varint chunk pairs (1 or more), varint chunk bytes, pairs
 *            of (f64 score, varint length, member); strictly increasing
 *            by (score, member) across the whole set
 *   list:    varint elements, then chunks until that many came: varint
 *            chunk elements (1 or more), varint chunk bytes, elements of
 *            (varint length, bytes), head first
 *   set:     varint members, varint body bytes, body: members as
 *            (varint length, member)
 */
#ifndef GOBLIN_SNAPSHOT_FORMAT_H
#define GOBLIN_SNAPSHOT_FORMAT_H

#include <stdint.h>
#include <string.h>

#define SNAP_MAGIC "GOBLINSN"
#define SNAP_END_MAGIC "GOBLNEND"
#define SNAP_HEADER_SIZE 64
#define SNAP_TRAILER_SIZE 32
#define SNAP_BLOCK_HDR 8
#define SNAP_BLOCK_SIZE (256u * 1024)    /* what the writer uses */
#define SNAP_BLOCK_MAX (16u * 1024 * 1024) /* the most a reader accepts */

/* The most bytes the writer gathers in one sorted-set or list chunk (a
 * pair or element bigger than that gets a chunk of its own). */
#define SNAP_ZCHUNK (64u * 1024)

/* Header fields. */
#define SH_MAGIC 0
#define SH_VERSION 8
#define SH_SIZE 12
#define SH_CREATED 16
#define SH_KEYS 24
#define SH_EXPIRES 32
#define SH_BLOCK 40
#define SH_FLAGS 44
#define SH_FUNCTIONS 48 /* version 2: function library records (u64) */
#define SH_CRC 60

/* Trailer fields. */
#define ST_MAGIC 0
#define ST_KEYS 8
#define ST_PAYLOAD 16
#define ST_BLOCKS 24
#define ST_CRC 28

/* Record tags. Tag 0 (type 0) is not a key: it marks the start of a
 * database other than 0, whose number follows as a varint; the records
 * after it, up to the next marker, are that database's keys. */
#define SNAP_TAG_DB 0x00
/* Version 2: a function library (varint length, its whole code). The
 * header's SH_FUNCTIONS counts them; they come first, before any key. */
#define SNAP_TAG_FUNCTION 0x08
#define TAG_TYPE 0x03
#define TAG_DEADLINE 0x04
#define TAG_ENC_SHIFT 3
#define TAG_ENC 0x18
#define TAG_TYPE_HI 0x20 /* the type's bit 2: lists (4) and sets (5) */
/* Version 3: on a hash record, each pair of the body is followed by a
 * varint, its field's deadline in Unix ms plus one (0: none). */
#define TAG_HASH_TTL 0x08
#define TAG_RESERVED 0xC0

/* The type a tag names, and the tag bits of a type. */
static inline int tag_type(uint8_t tag)
{
    return (tag & TAG_TYPE) | ((tag & TAG_TYPE_HI) ? 4 : 0);
}

static inline uint8_t type_tag(int type)
{
    return (uint8_t)((type & TAG_TYPE) | ((type & 4) ? TAG_TYPE_HI : 0));
}

/* The longest varint: 10 bytes hold a u64. */
#define VARINT_MAX 10
/* The longest key or value a snapshot may hold: what a store's string
 * record holds (GOBLIN_STRING_LIMIT, 4 GiB - 1), so a string stored with
 * proto-max-bulk-len raised past 512 MB saves and loads whatever the limit
 * is at load time, as in Redis. Hashes and sorted sets are bounded by the
 * file itself. */
#define SNAP_STR_MAX ((uint64_t)UINT32_MAX)

static inline void le32_put(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void le64_put(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t le32_get(const uint8_t *p)
{
    uint32_t v = 0;

    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static inline uint64_t le64_get(const uint8_t *p)
{
    uint64_t v = 0;

    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static inline size_t varint_size(uint64_t v)
{
    size_t n = 1;

    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline size_t varint_put(uint8_t *p, uint64_t v)
{
    size_t n = 0;

    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* A block's CRC: over its length and index, then its payload. */
uint32_t goblin__snap_block_crc(uint32_t len, uint32_t index,
                                const uint8_t *payload);

#endif
