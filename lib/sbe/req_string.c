/* req_string.c - SBE requests on strings: GET, SET (flags as bits, the
 * expiry mode as an enum and its amount as an int64), SETNX, SETEX,
 * PSETEX, GETSET, GETDEL, GETEX, MGET, MSET, MSETNX, APPEND, STRLEN, the
 * INCR family, INCRBYFLOAT (a native double increment), GETRANGE and
 * SETRANGE; replies and texts as commands/cmd_string.c gives them. */
#include <math.h>

#include "goblin/str.h"
#include "request.h"

void goblin__sbe_get(struct goblin__sbe_req *r)
{
    struct goblin_sbe_get v;
    struct goblin_slice val = {NULL, 0};
    int rc;

    if (!goblin__sbe_decoded(r, goblin_sbe_get_decode(&v, r->m)))
        return;
    rc = goblin_str_get(r->x.st, v.key, &val);
    goblin__sbe_hit(r, rc);
    goblin__sbe_view(r, rc, val);
}

static void invalid_expire(struct goblin__sbe_req *r, const char *name)
{
    goblin__reply_errorf(&r->x, "ERR invalid expire time in '%s' command",
                         name);
}

/* The reply of a SET given goblin_str_set's result. */
static void set_reply(struct goblin__sbe_req *r, int rc, bool get,
                      struct goblin_slice old, const char *name)
{
    if (rc == GOBLIN_EINVAL)
        invalid_expire(r, name);
    else if (rc < 0)
        goblin__reply_code(&r->x, rc);
    else if (get && (rc & GOBLIN_SET_HAD_OLD))
        goblin__reply_slice(&r->x, old);
    else if (get || !(rc & GOBLIN_SET_DONE))
        goblin__reply_null(&r->x);
    else
        goblin__reply_ok(&r->x);
}

/* SET's flags and expiry as goblin_str_set's options; false for a mix
 * Redis refuses as a syntax error. */
static bool set_options(unsigned flags, unsigned mode, int64_t amount,
                        struct goblin_set_options *so)
{
    static const enum goblin_ttl_mode modes[] = {
        GOBLIN_TTL_DEFAULT, GOBLIN_TTL_EX, GOBLIN_TTL_PX, GOBLIN_TTL_EXAT,
        GOBLIN_TTL_PXAT};

    if ((flags & ~GOBLIN_SBE_SET_FLAGS_MASK) ||
        !goblin_sbe_expire_mode_valid(mode) ||
        ((flags & GOBLIN_SBE_SET_FLAGS_NX) && (flags & GOBLIN_SBE_SET_FLAGS_XX))
        || ((flags & GOBLIN_SBE_SET_FLAGS_KEEPTTL) && mode != 0))
        return false;
    so->cond = flags & GOBLIN_SBE_SET_FLAGS_NX   ? GOBLIN_SET_NX
               : flags & GOBLIN_SBE_SET_FLAGS_XX ? GOBLIN_SET_XX
                                                 : GOBLIN_SET_ALWAYS;
    so->ttl = flags & GOBLIN_SBE_SET_FLAGS_KEEPTTL ? GOBLIN_TTL_KEEP
                                                   : modes[mode];
    so->ttl_value = amount;
    so->get = (flags & GOBLIN_SBE_SET_FLAGS_GET) != 0;
    return true;
}

void goblin__sbe_set(struct goblin__sbe_req *r)
{
    struct goblin_sbe_set v;
    struct goblin_set_options so = {GOBLIN_SET_ALWAYS, GOBLIN_TTL_DEFAULT, 0,
                                    0};
    struct goblin_slice old = {NULL, 0};
    int rc;

    if (!goblin__sbe_decoded(r, goblin_sbe_set_decode(&v, r->m)))
        return;
    if (!set_options(goblin_sbe_set_flags(&v), goblin_sbe_set_expire_mode(&v),
                     goblin_sbe_set_expire_value(&v), &so)) {
        goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);
        return;
    }
    rc = goblin_str_set(r->x.st, v.key, v.value, &so, &old);
    set_reply(r, rc, so.get, old, "set");
}

void goblin__sbe_setnx(struct goblin__sbe_req *r)
{
    struct goblin_sbe_setnx v;

    if (goblin__sbe_decoded(r, goblin_sbe_setnx_decode(&v, r->m)))
        goblin__sbe_count(r, goblin_str_setnx(r->x.st, v.key, v.value));
}

static void setex_common(struct goblin__sbe_req *r, struct goblin_slice key,
                         struct goblin_slice value, enum goblin_ttl_mode mode,
                         int64_t amount, const char *name)
{
    struct goblin_set_options so = {GOBLIN_SET_ALWAYS, mode, amount, 0};

    set_reply(r, goblin_str_set(r->x.st, key, value, &so, NULL), false,
              (struct goblin_slice){NULL, 0}, name);
}

void goblin__sbe_setex(struct goblin__sbe_req *r)
{
    struct goblin_sbe_setex v;

    if (goblin__sbe_decoded(r, goblin_sbe_setex_decode(&v, r->m)))
        setex_common(r, v.key, v.value, GOBLIN_TTL_EX,
                     goblin_sbe_setex_seconds(&v), "setex");
}

void goblin__sbe_psetex(struct goblin__sbe_req *r)
{
    struct goblin_sbe_psetex v;

    if (goblin__sbe_decoded(r, goblin_sbe_psetex_decode(&v, r->m)))
        setex_common(r, v.key, v.value, GOBLIN_TTL_PX,
                     goblin_sbe_psetex_milliseconds(&v), "psetex");
}

void goblin__sbe_getset(struct goblin__sbe_req *r)
{
    struct goblin_sbe_getset v;
    struct goblin_slice old = {NULL, 0};
    int rc;

    if (!goblin__sbe_decoded(r, goblin_sbe_getset_decode(&v, r->m)))
        return;
    rc = goblin_str_getset(r->x.st, v.key, v.value, &old);
    goblin__sbe_view(r, rc, old);
}

void goblin__sbe_getdel(struct goblin__sbe_req *r)
{
    struct goblin_sbe_getdel v;
    struct goblin_slice val = {NULL, 0};
    int rc;

    if (!goblin__sbe_decoded(r, goblin_sbe_getdel_decode(&v, r->m)))
        return;
    rc = goblin_str_getdel(r->x.st, v.key, &val);
    goblin__sbe_hit(r, rc);
    goblin__sbe_view(r, rc, val);
}

void goblin__sbe_getex(struct goblin__sbe_req *r)
{
    static const enum goblin_ttl_mode modes[] = {
        GOBLIN_TTL_DEFAULT, GOBLIN_TTL_EX, GOBLIN_TTL_PX, GOBLIN_TTL_EXAT,
        GOBLIN_TTL_PXAT, GOBLIN_TTL_PERSIST};
    struct goblin_sbe_getex v;
    struct goblin_slice val = {NULL, 0};
    unsigned mode;
    int rc;

    if (!goblin__sbe_decoded(r, goblin_sbe_getex_decode(&v, r->m)))
        return;
    mode = goblin_sbe_getex_mode(&v);
    if (!goblin_sbe_get_ex_mode_valid(mode)) {
        goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);
        return;
    }
    rc = goblin_str_getex(r->x.st, v.key, modes[mode],
                          goblin_sbe_getex_value(&v), &val);
    goblin__sbe_hit(r, rc);
    if (rc == GOBLIN_EINVAL)
        invalid_expire(r, "getex");
    else
        goblin__sbe_view(r, rc, val);
}

void goblin__sbe_mget(struct goblin__sbe_req *r)
{
    struct goblin_sbe_mget v;
    struct goblin_slice *keys, *out;
    size_t n, i;

    if (!goblin__sbe_decoded(r, goblin_sbe_mget_decode(&v, r->m)))
        return;
    if (v.keys.count == 0) {
        goblin__sbe_arity(r, "mget");
        return;
    }
    keys = goblin__sbe_scratch(r, 2 * (size_t)v.keys.count, sizeof(*keys));
    if (keys == NULL)
        return;
    for (n = 0; goblin_sbe_rt_entry_next(&v.keys, 1, keys + n) != NULL; n++)
        ;
    out = keys + n;
    goblin_str_mget(r->x.st, keys, n, out);
    for (i = 0; i < n; i++)
        goblin__sbe_hit(r, out[i].ptr != NULL);
    if (goblin__sbe_out(r) != NULL)
        goblin__sbe_reply_strings(goblin__sbe_out(r), out, n, true);
}

/* MSET's pairs as keys[0, n) then values[0, n); NULL after a reply. */
static struct goblin_slice *mset_split(struct goblin__sbe_req *r,
                                       struct goblin_sbe_group g,
                                       const char *name, size_t *n)
{
    struct goblin_slice *v, pair[2];
    size_t i;

    if (g.count == 0) {
        goblin__sbe_arity(r, name);
        return NULL;
    }
    v = goblin__sbe_scratch(r, 2 * (size_t)g.count, sizeof(*v));
    if (v == NULL)
        return NULL;
    *n = g.count;
    for (i = 0; goblin_sbe_rt_entry_next(&g, 2, pair) != NULL; i++) {
        v[i] = pair[0];
        v[*n + i] = pair[1];
    }
    return v;
}

void goblin__sbe_mset(struct goblin__sbe_req *r)
{
    struct goblin_sbe_mset v;
    struct goblin_slice *kv;
    size_t n;
    int rc;

    if (!goblin__sbe_decoded(r, goblin_sbe_mset_decode(&v, r->m)) ||
        (kv = mset_split(r, v.entries, "mset", &n)) == NULL)
        return;
    rc = goblin_str_mset(r->x.st, kv, kv + n, n);
    if (rc < 0)
        goblin__reply_code(&r->x, rc);
    else
        goblin__reply_ok(&r->x);
}

void goblin__sbe_msetnx(struct goblin__sbe_req *r)
{
    struct goblin_sbe_msetnx v;
    struct goblin_slice *kv;
    size_t n;

    if (!goblin__sbe_decoded(r, goblin_sbe_msetnx_decode(&v, r->m)) ||
        (kv = mset_split(r, v.entries, "msetnx", &n)) == NULL)
        return;
    goblin__sbe_count(r, goblin_str_msetnx(r->x.st, kv, kv + n, n));
}

void goblin__sbe_append(struct goblin__sbe_req *r)
{
    struct goblin_sbe_append v;

    if (goblin__sbe_decoded(r, goblin_sbe_append_decode(&v, r->m)))
        goblin__sbe_count(r, goblin_str_append(r->x.st, v.key, v.value));
}

void goblin__sbe_strlen(struct goblin__sbe_req *r)
{
    struct goblin_sbe_strlen v;

    if (goblin__sbe_decoded(r, goblin_sbe_strlen_decode(&v, r->m)))
        goblin__sbe_count(r, goblin_str_len(r->x.st, v.key));
}

static void incr_common(struct goblin__sbe_req *r, struct goblin_slice key,
                        int64_t delta)
{
    int64_t result;
    int rc = goblin_str_incrby(r->x.st, key, delta, &result);

    if (rc < 0)
        goblin__reply_code(&r->x, rc);
    else
        goblin__reply_int(&r->x, result);
}

void goblin__sbe_incr(struct goblin__sbe_req *r)
{
    struct goblin_sbe_incr v;

    if (goblin__sbe_decoded(r, goblin_sbe_incr_decode(&v, r->m)))
        incr_common(r, v.key, 1);
}

void goblin__sbe_decr(struct goblin__sbe_req *r)
{
    struct goblin_sbe_decr v;

    if (goblin__sbe_decoded(r, goblin_sbe_decr_decode(&v, r->m)))
        incr_common(r, v.key, -1);
}

void goblin__sbe_incrby(struct goblin__sbe_req *r)
{
    struct goblin_sbe_incrby v;

    if (goblin__sbe_decoded(r, goblin_sbe_incrby_decode(&v, r->m)))
        incr_common(r, v.key, goblin_sbe_incrby_increment(&v));
}

void goblin__sbe_decrby(struct goblin__sbe_req *r)
{
    struct goblin_sbe_decrby v;
    int64_t d;

    if (!goblin__sbe_decoded(r, goblin_sbe_decrby_decode(&v, r->m)))
        return;
    d = goblin_sbe_decrby_decrement(&v);
    if (d == INT64_MIN)
        goblin__reply_error(&r->x, "ERR decrement would overflow");
    else
        incr_common(r, v.key, -d);
}

void goblin__sbe_incrbyfloat(struct goblin__sbe_req *r)
{
    struct goblin_sbe_incrbyfloat v;
    struct goblin_slice out;
    double incr;
    int rc;

    if (!goblin__sbe_decoded(r, goblin_sbe_incrbyfloat_decode(&v, r->m)))
        return;
    incr = goblin_sbe_incrbyfloat_increment(&v);
    /* A NaN is refused as RESP refuses the text "nan", in Redis's order
     * (the key's type and value first). */
    if (isnan(incr))
        rc = goblin_str_incrbyfloat_text(r->x.st, v.key,
                                         (struct goblin_slice){"nan", 3},
                                         &out);
    else
        rc = goblin_str_incrbyfloat(r->x.st, v.key, (long double)incr, &out);
    if (rc < 0)
        goblin__reply_code(&r->x, rc);
    else
        goblin__reply_slice(&r->x, out);
}

void goblin__sbe_getrange(struct goblin__sbe_req *r)
{
    struct goblin_sbe_getrange v;
    struct goblin_slice out = {"", 0};
    int rc;

    if (!goblin__sbe_decoded(r, goblin_sbe_getrange_decode(&v, r->m)))
        return;
    rc = goblin_str_getrange(r->x.st, v.key, goblin_sbe_getrange_start(&v),
                             goblin_sbe_getrange_end(&v), &out);
    if (rc < 0)
        goblin__reply_code(&r->x, rc);
    else
        goblin__reply_slice(&r->x, rc == 1 ? out
                                           : (struct goblin_slice){"", 0});
}

void goblin__sbe_setrange(struct goblin__sbe_req *r)
{
    struct goblin_sbe_setrange v;

    if (goblin__sbe_decoded(r, goblin_sbe_setrange_decode(&v, r->m)))
        goblin__sbe_count(r, goblin_str_setrange(r->x.st, v.key,
                                                 goblin_sbe_setrange_offset(&v),
                                                 v.value));
}
