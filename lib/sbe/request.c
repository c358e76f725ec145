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

struct goblin__sbe_sink *goblin__sbe_out(struct goblin__sbe_req *r)
{
    return r->quiet ? NULL : &r->ss->sink;
}

void goblin__sbe_count(struct goblin__sbe_req *r, int64_t rc)
{
    if (rc < 0)
        goblin__reply_code(&r->x, (int)rc);
    else
        goblin__reply_int(&r->x, rc);
}

void goblin__sbe_view(struct goblin__sbe_req *r, int rc,
                      struct goblin_slice v)
{
    if (rc > 0)
        goblin__reply_slice(&r->x, v);
    else if (rc == 0)
        goblin__reply_null(&r->x);
    else
        goblin__reply_code(&r->x, rc);
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
    while (goblin_sbe_rt_entry_next(&g, nvar, v + i) != NULL)
        i += nvar;
    *n = i;
    return v;
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

void goblin__sbe_hit(struct goblin__sbe_req *r, int found)
{
    if (found > 0)
        r->x.eng->stat_keyspace_hits++;
    else if (found == 0)
        r->x.eng->stat_keyspace_misses++;
}

int goblin__sbe_keep(void *ctx, struct goblin_slice member, double score)
{
    struct goblin__sbe_members *c = ctx;
    struct goblin__scored e = {member, score};
    struct goblin_buf *b = &c->r->ss->scratch;

    if (c->copy) {
        /* Bytes now, pointers once the copies stop moving. */
        e.member.ptr = (const void *)(uintptr_t)c->r->ss->copies.len;
        if (goblin_buf_append(&c->r->ss->copies, member.ptr,
                              member.len) != 0) {
            c->r->ss->copies.failed = false;
            return GOBLIN_ENOMEM;
        }
    }
    if (goblin_buf_append(b, &e, sizeof(e)) != 0) {
        b->failed = false;
        return GOBLIN_ENOMEM;
    }
    c->n++;
    return 0;
}

struct goblin__scored *goblin__sbe_kept(struct goblin__sbe_members *c)
{
    struct goblin__scored *v = (void *)c->r->ss->scratch.data;
    const char *base = c->r->ss->copies.data;
    size_t i;

    for (i = 0; c->copy && i < c->n; i++)
        v[i].member.ptr = base != NULL ? base + (uintptr_t)v[i].member.ptr
                                       : "";
    return v;
}

void goblin__sbe_members_start(struct goblin__sbe_members *c,
                               struct goblin__sbe_req *r, bool copy)
{
    c->r = r;
    c->n = 0;
    c->copy = copy;
    r->ss->scratch.len = 0;
    r->ss->copies.len = 0;
}

void goblin__sbe_reply_members(struct goblin__sbe_req *r,
                               struct goblin__scored *v, size_t n,
                               bool scores)
{
    struct goblin__sbe_sink *k = goblin__sbe_out(r);
    struct goblin_slice *m = (struct goblin_slice *)v;
    size_t i;

    if (k == NULL)
        return;
    if (scores) {
        goblin__sbe_reply_scored(k, v, n);
        return;
    }
    /* Members only: packed in place over the pairs. */
    for (i = 0; i < n; i++)
        m[i] = v[i].member;
    goblin__sbe_reply_strings(k, m, n, false);
}
