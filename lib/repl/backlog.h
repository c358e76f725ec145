/* backlog.h - the replication backlog: the last repl-backlog-size bytes
 * of the write stream, in a circular buffer, addressed by Redis's
 * replication offsets, so that a replica that lost its link can be sent
 * only what it missed (PSYNC ... +CONTINUE).
 *
 * Offsets are Redis's: the stream's byte n (counting from 1) has offset
 * n; end is the offset of the last byte appended (master_repl_offset),
 * first = end - histlen + 1 (repl_backlog_first_byte_offset). A replica
 * that has everything up to offset o asks for o + 1.
 */
#ifndef GOBLIN_REPL_BACKLOG_H
#define GOBLIN_REPL_BACKLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct goblin__backlog {
    unsigned char *buf;
    size_t size;    /* capacity */
    size_t idx;     /* where the next byte goes */
    size_t histlen; /* bytes held, at most size */
    uint64_t end;   /* offset of the last byte appended */
};

/* An empty backlog of size bytes whose next byte will have offset
 * end + 1. Returns 0 or GOBLIN_ENOMEM. */
int goblin__backlog_init(struct goblin__backlog *b, size_t size,
                         uint64_t end);
void goblin__backlog_free(struct goblin__backlog *b);

void goblin__backlog_append(struct goblin__backlog *b, const void *p,
                            size_t n);

/* Changes the capacity, keeping the newest bytes that fit. 0 or
 * GOBLIN_ENOMEM (then unchanged). */
int goblin__backlog_resize(struct goblin__backlog *b, size_t size);

/* The offset of the oldest byte held (end + 1 when empty). */
uint64_t goblin__backlog_first(const struct goblin__backlog *b);

/* True when a replica asking for offset from (its next byte) can be
 * served: from is in [first, end + 1]. */
bool goblin__backlog_covers(const struct goblin__backlog *b, uint64_t from);

/* Hands the bytes from offset from to the end to fn, in at most two
 * pieces (the buffer wraps); from must be covered. Returns the count. */
size_t goblin__backlog_copy(const struct goblin__backlog *b, uint64_t from,
                            void (*fn)(void *ctx, const void *p, size_t n),
                            void *ctx);

#endif
