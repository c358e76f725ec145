/* req_hash.c - SBE requests on hashes: HSET, HMSET, HSETNX, HGET, HMGET,
 * HDEL, HLEN, HSTRLEN, HEXISTS, HKEYS, HVALS, HGETALL, HINCRBY,
 * HINCRBYFLOAT (a native double increment), HSCAN and HRANDFIELD. Each
 * decodes its frame into the arguments of the command's execution
 * (commands/exec.h), which RESP's handler calls too. */
#include "commands/exec.h"
#include "goblin/hash.h"
#include "request.h"

void goblin__sbe_hset(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hset v;
    struct goblin_slice *fv;
    size_t n;

    if (GOBLIN__SBE_DECODED(hset, v) &&
        (fv = goblin__sbe_args(r, v.entries, 2, "hset", &n)) != NULL)
        goblin__exec_hset(&r->x, v.key, fv, n / 2);
}

void goblin__sbe_hmset(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hmset v;
    struct goblin_slice *fv;
    size_t n;

    if (GOBLIN__SBE_DECODED(hmset, v) &&
        (fv = goblin__sbe_args(r, v.entries, 2, "hmset", &n)) != NULL)
        goblin__exec_hmset(&r->x, v.key, fv, n / 2);
}

void goblin__sbe_hsetnx(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hsetnx v;

    if (GOBLIN__SBE_DECODED(hsetnx, v))
        goblin__exec_hsetnx(&r->x, v.key, v.field, v.value);
}

void goblin__sbe_hget(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hget v;

    if (GOBLIN__SBE_DECODED(hget, v))
        goblin__exec_hget(&r->x, v.key, v.field);
}

void goblin__sbe_hmget(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hmget v;
    struct goblin_slice *fields;
    size_t n;

    if (GOBLIN__SBE_DECODED(hmget, v) &&
        (fields = goblin__sbe_args(r, v.fields, 1, "hmget", &n)) != NULL)
        goblin__exec_hmget(&r->x, v.key, fields, n);
}

void goblin__sbe_hdel(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hdel v;
    struct goblin_slice *fields;
    size_t n;

    if (GOBLIN__SBE_DECODED(hdel, v) &&
        (fields = goblin__sbe_args(r, v.fields, 1, "hdel", &n)) != NULL)
        goblin__exec_hdel(&r->x, v.key, fields, n);
}

void goblin__sbe_hlen(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hlen v;

    if (GOBLIN__SBE_DECODED(hlen, v))
        goblin__exec_hlen(&r->x, v.key);
}

void goblin__sbe_hstrlen(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hstrlen v;

    if (GOBLIN__SBE_DECODED(hstrlen, v))
        goblin__exec_hstrlen(&r->x, v.key, v.field);
}

void goblin__sbe_hexists(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hexists v;

    if (GOBLIN__SBE_DECODED(hexists, v))
        goblin__exec_hexists(&r->x, v.key, v.field);
}

void goblin__sbe_hkeys(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hkeys v;

    if (GOBLIN__SBE_DECODED(hkeys, v))
        goblin__exec_hkeys(&r->x, v.key);
}

void goblin__sbe_hvals(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hvals v;

    if (GOBLIN__SBE_DECODED(hvals, v))
        goblin__exec_hvals(&r->x, v.key);
}

void goblin__sbe_hgetall(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hgetall v;

    if (GOBLIN__SBE_DECODED(hgetall, v))
        goblin__exec_hgetall(&r->x, v.key);
}

void goblin__sbe_hincrby(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hincrby v;

    if (GOBLIN__SBE_DECODED(hincrby, v))
        goblin__exec_hincrby(&r->x, v.key, v.field,
                             goblin_sbe_hincrby_increment(&v));
}

void goblin__sbe_hincrbyfloat(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hincrbyfloat v;

    if (GOBLIN__SBE_DECODED(hincrbyfloat, v))
        goblin__exec_hincrbyfloat(&r->x, v.key, v.field,
                                  goblin_sbe_hincrbyfloat_increment(&v));
}

void goblin__sbe_hscan(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hscan v;
    struct goblin_scan_options o = {{NULL, 0}, GOBLIN_TYPE_NONE, 0};
    bool known;

    if (GOBLIN__SBE_DECODED(hscan, v) &&
        goblin__scan_key(&r->x, v.key, GOBLIN_TYPE_HASH) &&
        goblin__sbe_scan_options(r, goblin_sbe_hscan_flags(&v),
                                 goblin_sbe_hscan_count(&v), v.pattern, NULL,
                                 &o, &known))
        goblin__exec_hscan(&r->x, v.key, goblin_sbe_hscan_cursor(&v), &o);
}

void goblin__sbe_hrandfield(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hrandfield v;
    int64_t count;
    bool has_count, values;

    if (!GOBLIN__SBE_DECODED(hrandfield, v))
        return;
    count = goblin_sbe_hrandfield_count(&v);
    if (goblin__sbe_count_flags(r, goblin_sbe_hrandfield_flags(&v), count,
                                &has_count, &values))
        goblin__exec_hrandfield(&r->x, v.key, has_count, count, values);
}
