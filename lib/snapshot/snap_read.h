/* snap_read.h - the block reader of snapshot files: turns the blocks of
 * a file (or a buffer) back into the record stream, checking each block's
 * CRC32C before any of its bytes is used, and the trailer at the end.
 *
 * Offsets in error messages are file offsets. Views handed out point into
 * the current block (or the caller's buffer, for memory sources) or into
 * the reader's scratch; each lasts until the next read.
 */
#ifndef GOBLIN_SNAP_READ_H
#define GOBLIN_SNAP_READ_H

#include <stdbool.h>
#include <stdint.h>

#include "snapshot_int.h"

struct goblin__rd {
    struct goblin__mem mem;
    struct goblin__src *src;
    struct goblin_snapshot_result *res;
    uint8_t *blk;            /* payload buffer (file sources) */
    size_t blk_cap;
    const uint8_t *p, *e;    /* unread payload of the current block */
    uint64_t e_off;          /* file offset of e */
    uint32_t index;          /* blocks read so far */
    uint32_t block_max;      /* from the header */
    uint32_t chain;          /* the trailer's CRC so far */
    uint64_t payload;        /* payload bytes read */
    uint8_t *tmp;            /* scratch for views spanning blocks */
    size_t tmp_cap;
    /* header */
    uint32_t version;
    int64_t created_ms;
    uint64_t keys, expires;
    uint64_t functions; /* function library records (version 2) */
};

/* Reads and checks the header. Returns 0 or an error (reported). */
int goblin__rd_open(struct goblin__rd *r);
void goblin__rd_close(struct goblin__rd *r);

/* File offset of the next record byte. */
static inline uint64_t goblin__rd_off(const struct goblin__rd *r)
{
    return r->e_off - (uint64_t)(r->e - r->p);
}

/* Bytes of the file not yet read past the current block. */
static inline uint64_t goblin__rd_left(const struct goblin__rd *r)
{
    return r->src->size - r->src->off + (uint64_t)(r->e - r->p);
}

int goblin__rd_copy(struct goblin__rd *r, void *dst, size_t n);
int goblin__rd_byte(struct goblin__rd *r, uint8_t *b);
int goblin__rd_u64(struct goblin__rd *r, uint64_t *v);
int goblin__rd_varint(struct goblin__rd *r, uint64_t *v);

/* A view of the next n bytes (n checked against the file's size first). */
int goblin__rd_view(struct goblin__rd *r, size_t n, const uint8_t **out);

/* After the last record: checks that the stream ends there, then the end
 * marker and the trailer (counts and CRC) and that nothing follows it. */
int goblin__rd_finish(struct goblin__rd *r, uint64_t keys);

#endif
