/* goblin/buf.h - a growable byte buffer with an optional allocator: the
 * connection buffers of the RESP codec, the SBE sink and the client share
 * it (lib/util/buf.c). */
#ifndef GOBLIN_BUF_H
#define GOBLIN_BUF_H

#include <stdbool.h>
#include <stddef.h>

#include "goblin/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes data[0..len) of cap allocated. Zero-initialise it ({0}) to start;
 * alloc may be set first (NULL means libc). After a failed allocation the
 * buffer is unchanged and `failed` is set (sticky until cleared by the
 * owner), so writers that cannot return an error can be checked once. */
struct goblin_buf {
    char *data;
    size_t len;
    size_t cap;
    const struct goblin_allocator *alloc;
    bool failed;
};

/* Makes room for `extra` more bytes after len. Returns 0 or GOBLIN_ENOMEM.
 * Grows geometrically, so appending byte by byte is amortised O(1). */
GOBLIN_API int goblin_buf_reserve(struct goblin_buf *b, size_t extra);

/* Appends n bytes. Returns 0 or GOBLIN_ENOMEM (then nothing is appended). */
GOBLIN_API int goblin_buf_append(struct goblin_buf *b, const void *p,
                                 size_t n);

/* Drops the first n bytes (n <= len), moving the rest to the front. */
GOBLIN_API void goblin_buf_consume(struct goblin_buf *b, size_t n);

/* Frees the memory and zeroes the buffer, keeping alloc. */
GOBLIN_API void goblin_buf_free(struct goblin_buf *b);

#ifdef __cplusplus
}
#endif

#endif
