/* request.c - helpers the SBE request handlers share (request.h). */
#include <stdio.h>
#include <string.h>

#include "request.h"

bool goblin__sbe_decoded(struct goblin__sbe_req *r, int rc)
{
    if (rc == 0)
        return true;
    goblin__reply_errorf(&r->x, "ERR malformed SBE frame: %s",
                         r->m->why != NULL ? r->m->why : "bad message");
    return false;
}

void *goblin__sbe_scratch(struct goblin__sbe_req *r, size_t n, size_t size)
{
    struct goblin_buf *b = &r->ss->scratch;

    b->len = 0;
    if (n > SIZE_MAX / (size ? size : 1) ||
        goblin_buf_reserve(b, n * size + 1) != 0) {
        b->failed = false;
        goblin__reply_code(&r->x, GOBLIN_ENOMEM);
        return NULL;
    }
    return b->data;
}

struct goblin_slice *goblin__sbe_gather(struct goblin__sbe_req *r,
                                        struct goblin_sbe_group g,
                                        unsigned nvar, size_t *n)
{
    struct goblin_slice *v = goblin__sbe_scratch(r,
                                                 (size_t)g.count * nvar + 1,
                                                 sizeof(*v));
    size_t i = 0;

    if (v == NULL)
        return NULL;
    /* A constant field count per loop, so each loop's inner one unrolls:
     * every caller passes 1 or 2. */
    if (nvar == 1)
        while (goblin__sbe_next(&g, 1, v + i) != NULL)
            i++;
    else if (nvar == 2)
        while (goblin__sbe_next(&g, 2, v + i) != NULL)
            i += 2;
    else
        while (goblin__sbe_next(&g, nvar, v + i) != NULL)
            i += nvar;
    *n = i;
    return v;
}

struct goblin_slice *goblin__sbe_args(struct goblin__sbe_req *r,
                                      struct goblin_sbe_group g,
                                      unsigned nvar, const char *name,
                                      size_t *n)
{
    if (g.count != 0)
        return goblin__sbe_gather(r, g, nvar, n);
    goblin__sbe_arity(r, name);
    return NULL;
}

bool goblin__sbe_count_flags(struct goblin__sbe_req *r, unsigned flags,
                             int64_t count, bool *has_count, bool *with)
{
    *has_count = (flags & GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT) != 0;
    *with = (flags & GOBLIN_SBE_COUNT_FLAGS_WITH_SCORES) != 0;
    if ((flags & ~GOBLIN_SBE_COUNT_FLAGS_MASK) || (*with && !*has_count)) {
        goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);
        return false;
    }
    return !*has_count || goblin__rand_count_ok(&r->x, count, *with);
}

void goblin__sbe_arity(struct goblin__sbe_req *r, const char *name)
{
    goblin__reply_errorf(&r->x,
                         "ERR wrong number of arguments for '%s' command",
                         name);
}

void goblin__sbe_run_argv(struct goblin__sbe_req *r, int argc,
                      const struct goblin_slice *argv)
{
    goblin__command_execute(r->x.sess, argc, argv, &r->ss->sink.sink);
}
