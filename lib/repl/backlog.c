/* backlog.c - the replication backlog's circular buffer (backlog.h).
 * Plain malloc: like Redis, the backlog is not data and is left out of
 * what maxmemory evicts for. */
#include <stdlib.h>
#include <string.h>

#include "backlog.h"
#include "goblin/common.h"

int goblin__backlog_init(struct goblin__backlog *b, size_t size,
                         uint64_t end)
{
    memset(b, 0, sizeof(*b));
    if (size == 0)
        size = 1;
    if ((b->buf = malloc(size)) == NULL)
        return GOBLIN_ENOMEM;
    b->size = size;
    b->end = end;
    return 0;
}

void goblin__backlog_free(struct goblin__backlog *b)
{
    free(b->buf);
    memset(b, 0, sizeof(*b));
}

void goblin__backlog_append(struct goblin__backlog *b, const void *p,
                            size_t n)
{
    const unsigned char *q = p;

    b->end += n;
    if (n >= b->size) { /* only the last size bytes stay */
        memcpy(b->buf, q + n - b->size, b->size);
        b->idx = 0;
        b->histlen = b->size;
        return;
    }
    while (n > 0) {
        size_t room = b->size - b->idx, k = n < room ? n : room;

        memcpy(b->buf + b->idx, q, k);
        b->idx = (b->idx + k) % b->size;
        q += k;
        n -= k;
        b->histlen += k;
    }
    if (b->histlen > b->size)
        b->histlen = b->size;
}

uint64_t goblin__backlog_first(const struct goblin__backlog *b)
{
    return b->end - b->histlen + 1;
}

bool goblin__backlog_covers(const struct goblin__backlog *b, uint64_t from)
{
    return b->buf != NULL && from >= goblin__backlog_first(b) &&
           from <= b->end + 1;
}

size_t goblin__backlog_copy(const struct goblin__backlog *b, uint64_t from,
                            void (*fn)(void *ctx, const void *p, size_t n),
                            void *ctx)
{
    size_t len = (size_t)(b->end + 1 - from);
    /* The oldest byte is at idx - histlen (mod size). */
    size_t start = (b->idx + b->size - b->histlen % b->size) % b->size;
    size_t pos = (start + (size_t)(from - goblin__backlog_first(b))) % b->size;
    size_t first = b->size - pos < len ? b->size - pos : len;

    if (len == 0)
        return 0;
    fn(ctx, b->buf + pos, first);
    if (first < len)
        fn(ctx, b->buf, len - first);
    return len;
}

struct gather {
    unsigned char *p;
};

static void gather(void *ctx, const void *p, size_t n)
{
    struct gather *g = ctx;

    memcpy(g->p, p, n);
    g->p += n;
}

int goblin__backlog_resize(struct goblin__backlog *b, size_t size)
{
    size_t keep = b->histlen < size ? b->histlen : size;
    struct gather g;
    unsigned char *nb;

    if (size == 0)
        size = 1;
    if (size == b->size)
        return 0;
    if ((nb = malloc(size)) == NULL)
        return GOBLIN_ENOMEM;
    g.p = nb;
    if (keep > 0)
        goblin__backlog_copy(b, b->end + 1 - keep, gather, &g);
    free(b->buf);
    b->buf = nb;
    b->size = size;
    b->histlen = keep;
    b->idx = keep % size;
    return 0;
}
