/* req_hash.c - SBE requests on hashes: HSET, HMSET, HSETNX, HGET, HMGET,
 * HDEL, HLEN, HSTRLEN, HEXISTS, HKEYS, HVALS, HGETALL, HINCRBY,
 * HINCRBYFLOAT (a native double increment), HSCAN and HRANDFIELD; replies
 * and texts as commands/cmd_hash.c gives them.
 *
 * Whole-hash replies gather borrowed views of the fields and values in
 * the scratch area, then send one message: nothing writes to the store in
 * between, so the views stay valid. */
#include <math.h>

#include "goblin/hash.h"
#include "request.h"

void goblin__sbe_hset(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hset v;
    struct goblin_slice *fv;
    size_t n;

    if (!goblin__sbe_decoded(r, goblin_sbe_hset_decode(&v, r->m)))
        return;
    if (v.entries.count == 0) {
        goblin__sbe_arity(r, "hset");
        return;
    }
    if ((fv = goblin__sbe_gather(r, v.entries, 2, &n)) != NULL)
        goblin__sbe_count(r, goblin_hash_set(r->x.st, v.key, fv, n / 2));
}

void goblin__sbe_hmset(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hmset v;
    struct goblin_slice *fv;
    size_t n;
    int rc;

    if (!goblin__sbe_decoded(r, goblin_sbe_hmset_decode(&v, r->m)))
        return;
    if (v.entries.count == 0) {
        goblin__sbe_arity(r, "hmset");
        return;
    }
    if ((fv = goblin__sbe_gather(r, v.entries, 2, &n)) == NULL)
        return;
    rc = goblin_hash_set(r->x.st, v.key, fv, n / 2);
    if (rc < 0)
        goblin__reply_code(&r->x, rc);
    else
        goblin__reply_ok(&r->x);
}

void goblin__sbe_hsetnx(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hsetnx v;

    if (goblin__sbe_decoded(r, goblin_sbe_hsetnx_decode(&v, r->m)))
        goblin__sbe_count(r, goblin_hash_setnx(r->x.st, v.key, v.field,
                                               v.value));
}

void goblin__sbe_hget(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hget v;
    struct goblin_slice val = {NULL, 0};
    int rc;

    if (!goblin__sbe_decoded(r, goblin_sbe_hget_decode(&v, r->m)))
        return;
    rc = goblin_hash_get(r->x.st, v.key, v.field, &val);
    goblin__sbe_view(r, rc, val);
}

void goblin__sbe_hmget(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hmget v;
    struct goblin_slice *fields;
    size_t n;
    int rc;

    if (!goblin__sbe_decoded(r, goblin_sbe_hmget_decode(&v, r->m)))
        return;
    if (v.fields.count == 0) {
        goblin__sbe_arity(r, "hmget");
        return;
    }
    fields = goblin__sbe_scratch(r, 2 * (size_t)v.fields.count,
                                 sizeof(*fields));
    if (fields == NULL)
        return;
    for (n = 0; goblin_sbe_rt_entry_next(&v.fields, 1, fields + n); n++)
        ;
    rc = goblin_hash_mget(r->x.st, v.key, fields, n, fields + n);
    if (rc < 0)
        goblin__reply_code(&r->x, rc);
    else if (goblin__sbe_out(r) != NULL)
        goblin__sbe_reply_strings(goblin__sbe_out(r), fields + n, n, true);
}

void goblin__sbe_hdel(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hdel v;
    struct goblin_slice *fields;
    size_t n;

    if (!goblin__sbe_decoded(r, goblin_sbe_hdel_decode(&v, r->m)))
        return;
    if (v.fields.count == 0) {
        goblin__sbe_arity(r, "hdel");
        return;
    }
    if ((fields = goblin__sbe_gather(r, v.fields, 1, &n)) != NULL)
        goblin__sbe_count(r, goblin_hash_del(r->x.st, v.key, fields, n));
}

void goblin__sbe_hlen(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hlen v;

    if (goblin__sbe_decoded(r, goblin_sbe_hlen_decode(&v, r->m)))
        goblin__sbe_count(r, goblin_hash_len(r->x.st, v.key));
}

void goblin__sbe_hstrlen(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hstrlen v;

    if (goblin__sbe_decoded(r, goblin_sbe_hstrlen_decode(&v, r->m)))
        goblin__sbe_count(r, goblin_hash_strlen(r->x.st, v.key, v.field));
}

void goblin__sbe_hexists(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hexists v;

    if (goblin__sbe_decoded(r, goblin_sbe_hexists_decode(&v, r->m)))
        goblin__sbe_count(r, goblin_hash_exists(r->x.st, v.key, v.field));
}

/* Gathers visited pairs (field, value) in the scratch area. */
struct gather {
    struct goblin_buf *b;
    size_t n; /* pairs */
};

static int gather_pair(void *ctx, struct goblin_slice field,
                       struct goblin_slice value)
{
    struct gather *g = ctx;
    struct goblin_slice p[2] = {field, value};

    if (goblin_buf_append(g->b, p, sizeof(p)) != 0) {
        g->b->failed = false;
        return GOBLIN_ENOMEM;
    }
    g->n++;
    return 0;
}

/* Gathers every pair of key; replies the error and returns NULL. */
static struct goblin_slice *all_pairs(struct goblin__sbe_req *r,
                                      struct goblin_slice key, size_t *n)
{
    struct gather g = {&r->ss->scratch, 0};
    int64_t rc;

    g.b->len = 0;
    rc = goblin_hash_foreach(r->x.st, key, gather_pair, &g);
    if (rc < 0) {
        goblin__reply_code(&r->x, (int)rc);
        return NULL;
    }
    *n = g.n;
    return (struct goblin_slice *)g.b->data;
}

/* HKEYS (values 0) and HVALS (values 1): every other slice of the pairs,
 * packed in place. */
static void half(struct goblin__sbe_req *r, struct goblin_slice key,
                 int values)
{
    struct goblin_slice *p;
    size_t n, i;

    if ((p = all_pairs(r, key, &n)) == NULL || goblin__sbe_out(r) == NULL)
        return;
    for (i = 0; i < n; i++)
        p[i] = p[2 * i + values];
    goblin__sbe_reply_strings(goblin__sbe_out(r), p, n, false);
}

void goblin__sbe_hkeys(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hkeys v;

    if (goblin__sbe_decoded(r, goblin_sbe_hkeys_decode(&v, r->m)))
        half(r, v.key, 0);
}

void goblin__sbe_hvals(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hvals v;

    if (goblin__sbe_decoded(r, goblin_sbe_hvals_decode(&v, r->m)))
        half(r, v.key, 1);
}

void goblin__sbe_hgetall(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hgetall v;
    struct goblin_slice *p;
    size_t n;

    if (goblin__sbe_decoded(r, goblin_sbe_hgetall_decode(&v, r->m)) &&
        (p = all_pairs(r, v.key, &n)) != NULL && goblin__sbe_out(r) != NULL)
        goblin__sbe_reply_map(goblin__sbe_out(r), p, n);
}

void goblin__sbe_hincrby(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hincrby v;
    int64_t result;
    int rc;

    if (!goblin__sbe_decoded(r, goblin_sbe_hincrby_decode(&v, r->m)))
        return;
    rc = goblin_hash_incrby(r->x.st, v.key, v.field,
                            goblin_sbe_hincrby_increment(&v), &result);
    if (rc < 0)
        goblin__reply_code(&r->x, rc);
    else
        goblin__reply_int(&r->x, result);
}

void goblin__sbe_hincrbyfloat(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hincrbyfloat v;
    struct goblin_slice out;
    double incr;
    int rc;

    if (!goblin__sbe_decoded(r, goblin_sbe_hincrbyfloat_decode(&v, r->m)))
        return;
    incr = goblin_sbe_hincrbyfloat_increment(&v);
    if (isnan(incr)) { /* as RESP's "nan", which does not parse */
        goblin__reply_code(&r->x, GOBLIN_ENOTFLOAT);
        return;
    }
    if (isinf(incr)) {
        goblin__reply_error(&r->x, "ERR value is NaN or Infinity");
        return;
    }
    rc = goblin_hash_incrbyfloat(r->x.st, v.key, v.field, (long double)incr,
                                 &out);
    if (rc == GOBLIN_EINVAL)
        goblin__reply_error(&r->x, "ERR value is NaN or Infinity");
    else if (rc < 0)
        goblin__reply_code(&r->x, rc);
    else
        goblin__reply_slice(&r->x, out);
}

void goblin__sbe_hscan(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hscan v;
    struct goblin_scan_options o = {{NULL, 0}, GOBLIN_TYPE_NONE, 0};
    struct gather g = {&r->ss->scratch, 0};
    enum goblin_type t;
    uint64_t next = 0;
    unsigned flags;
    int64_t rc;

    if (!goblin__sbe_decoded(r, goblin_sbe_hscan_decode(&v, r->m)))
        return;
    t = goblin_key_type(r->x.st, v.key);
    if (t != GOBLIN_TYPE_HASH && t != GOBLIN_TYPE_NONE) {
        goblin__reply_code(&r->x, GOBLIN_EWRONGTYPE);
        return;
    }
    flags = goblin_sbe_hscan_flags(&v);
    if (t == GOBLIN_TYPE_HASH &&
        !goblin__sbe_scan_options(r, flags, goblin_sbe_hscan_count(&v),
                                  false, &o))
        return;
    if ((flags & GOBLIN_SBE_SCAN_FLAGS_HAS_MATCH) &&
        !(v.pattern.len == 1 && ((const char *)v.pattern.ptr)[0] == '*'))
        o.match = v.pattern;
    g.b->len = 0;
    rc = goblin_hash_scan(r->x.st, v.key, goblin_sbe_hscan_cursor(&v),
                          o.count, o.match, gather_pair, &g, &next);
    if (rc < 0)
        goblin__reply_code(&r->x, (int)rc);
    else if (goblin__sbe_out(r) != NULL)
        goblin__sbe_reply_scan(goblin__sbe_out(r), next,
                               (const void *)g.b->data, 2 * g.n);
}

/* HRANDFIELD key count [WITHVALUES] in RESP3's shape: fields, or
 * [field, value] pairs. */
static void randfield_count(struct goblin__sbe_req *r, struct goblin_slice key,
                            int64_t count, bool values)
{
    struct gather g = {&r->ss->scratch, 0};
    const struct goblin_slice *p;
    int64_t rc;
    size_t i;

    if (count == INT64_MIN) {
        goblin__reply_error(&r->x, "ERR value is out of range, value must "
                                   "between -9223372036854775807 and "
                                   "9223372036854775807");
        return;
    }
    if (values && (count < -INT64_MAX / 2 || count > INT64_MAX / 2)) {
        goblin__reply_error(&r->x, "ERR value is out of range");
        return;
    }
    g.b->len = 0;
    rc = goblin_hash_randfield_count(r->x.st, key, count, values, gather_pair,
                                     &g);
    if (rc < 0) {
        goblin__reply_code(&r->x, (int)rc);
        return;
    }
    p = (const void *)g.b->data;
    goblin__reply_array(&r->x, g.n);
    for (i = 0; i < g.n; i++) {
        if (values)
            goblin__reply_array(&r->x, 2);
        goblin__reply_slice(&r->x, p[2 * i]);
        if (values)
            goblin__reply_slice(&r->x, p[2 * i + 1]);
    }
}

void goblin__sbe_hrandfield(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hrandfield v;
    struct goblin_slice f = {NULL, 0};
    unsigned flags;
    int rc;

    if (!goblin__sbe_decoded(r, goblin_sbe_hrandfield_decode(&v, r->m)))
        return;
    flags = goblin_sbe_hrandfield_flags(&v);
    if (flags & ~GOBLIN_SBE_COUNT_FLAGS_MASK ||
        (flags == GOBLIN_SBE_COUNT_FLAGS_WITH_SCORES)) {
        goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);
        return;
    }
    if (flags & GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT) {
        randfield_count(r, v.key, goblin_sbe_hrandfield_count(&v),
                        flags & GOBLIN_SBE_COUNT_FLAGS_WITH_SCORES);
        return;
    }
    rc = goblin_hash_randfield(r->x.st, v.key, &f, NULL);
    goblin__sbe_view(r, rc, f);
}
