/* buf.c - struct goblin_buf (goblin/buf.h): a growable byte buffer for a
 * connection's input or output, the SBE sink's scratch and the client's
 * requests, with an optional allocator (libc by default).
 *
 * Invariants: len <= cap; data is NULL exactly when cap is 0. A failed
 * growth leaves data, len and cap as they were and sets failed.
 */
#include <stdlib.h>
#include <string.h>

#include "goblin/buf.h"

#define MIN_CAP 64

static void *buf_grow(struct goblin_buf *b, size_t new_cap)
{
    const struct goblin_allocator *a = b->alloc;
    void *p;

    if (a == NULL)
        return realloc(b->data, new_cap);
    if (a->realloc != NULL)
        return a->realloc(a->ctx, b->data, b->cap, new_cap);
    p = a->malloc(a->ctx, new_cap);
    if (p != NULL && b->data != NULL) {
        memcpy(p, b->data, b->len);
        a->free(a->ctx, b->data, b->cap);
    }
    return p;
}

int goblin_buf_reserve(struct goblin_buf *b, size_t extra)
{
    size_t need, cap;
    void *p;

    if (b->cap - b->len >= extra)
        return 0;
    if (__builtin_add_overflow(b->len, extra, &need))
        goto fail;
    cap = b->cap < MIN_CAP ? MIN_CAP : b->cap;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    p = buf_grow(b, cap);
    if (p == NULL)
        goto fail;
    b->data = p;
    b->cap = cap;
    return 0;
fail:
    b->failed = true;
    return GOBLIN_ENOMEM;
}

int goblin_buf_append(struct goblin_buf *b, const void *p, size_t n)
{
    if (goblin_buf_reserve(b, n) != 0)
        return GOBLIN_ENOMEM;
    if (n > 0)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

void goblin_buf_consume(struct goblin_buf *b, size_t n)
{
    if (n >= b->len) {
        b->len = 0;
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
}

void goblin_buf_free(struct goblin_buf *b)
{
    const struct goblin_allocator *a = b->alloc;

    if (b->data != NULL) {
        if (a == NULL)
            free(b->data);
        else
            a->free(a->ctx, b->data, b->cap);
    }
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->failed = false;
}
