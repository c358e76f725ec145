/* req_string.c - SBE requests on strings: GET, SET (flags as bits, the
 * expiry mode as an enum and its amount as an int64), SETNX, SETEX,
 * PSETEX, GETSET, GETDEL, GETEX, MGET, MSET, MSETNX, APPEND, STRLEN, the
 * INCR family, INCRBYFLOAT (a native double increment), GETRANGE and
 * SETRANGE. Each decodes its frame into the arguments of the command's
 * execution (commands/exec.h), which RESP's handler calls too. */
#include <math.h>

#include "commands/exec.h"
#include "goblin/str.h"
#include "request.h"

void goblin__sbe_get(struct goblin__sbe_req *r)
{
    struct goblin_sbe_get v;

    if (GOBLIN__SBE_DECODED(get, v))
        goblin__exec_get(&r->x, v.key);
}

/* SET's flags and expiry as goblin_str_set's options; false for a mix
 * Redis refuses as a syntax error (NX with XX, KEEPTTL with a time) or
 * bits and modes the schema does not define. */
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

    if (!GOBLIN__SBE_DECODED(set, v))
        return;
    if (set_options(goblin_sbe_set_flags(&v), goblin_sbe_set_expire_mode(&v),
                    goblin_sbe_set_expire_value(&v), &so))
        goblin__exec_set(&r->x, v.key, v.value, &so);
    else
        goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);
}

void goblin__sbe_setnx(struct goblin__sbe_req *r)
{
    struct goblin_sbe_setnx v;

    if (GOBLIN__SBE_DECODED(setnx, v))
        goblin__exec_setnx(&r->x, v.key, v.value);
}

void goblin__sbe_setex(struct goblin__sbe_req *r)
{
    struct goblin_sbe_setex v;
    struct goblin_set_options so = {GOBLIN_SET_ALWAYS, GOBLIN_TTL_EX, 0, 0};

    if (!GOBLIN__SBE_DECODED(setex, v))
        return;
    so.ttl_value = goblin_sbe_setex_seconds(&v);
    goblin__exec_set(&r->x, v.key, v.value, &so);
}

void goblin__sbe_psetex(struct goblin__sbe_req *r)
{
    struct goblin_sbe_psetex v;
    struct goblin_set_options so = {GOBLIN_SET_ALWAYS, GOBLIN_TTL_PX, 0, 0};

    if (!GOBLIN__SBE_DECODED(psetex, v))
        return;
    so.ttl_value = goblin_sbe_psetex_milliseconds(&v);
    goblin__exec_set(&r->x, v.key, v.value, &so);
}

void goblin__sbe_getset(struct goblin__sbe_req *r)
{
    struct goblin_sbe_getset v;

    if (GOBLIN__SBE_DECODED(getset, v))
        goblin__exec_getset(&r->x, v.key, v.value);
}

void goblin__sbe_getdel(struct goblin__sbe_req *r)
{
    struct goblin_sbe_getdel v;

    if (GOBLIN__SBE_DECODED(getdel, v))
        goblin__exec_getdel(&r->x, v.key);
}

void goblin__sbe_getex(struct goblin__sbe_req *r)
{
    static const enum goblin_ttl_mode modes[] = {
        GOBLIN_TTL_DEFAULT, GOBLIN_TTL_EX, GOBLIN_TTL_PX, GOBLIN_TTL_EXAT,
        GOBLIN_TTL_PXAT, GOBLIN_TTL_PERSIST};
    struct goblin_sbe_getex v;
    unsigned mode;

    if (!GOBLIN__SBE_DECODED(getex, v))
        return;
    mode = goblin_sbe_getex_mode(&v);
    if (goblin_sbe_get_ex_mode_valid(mode))
        goblin__exec_getex(&r->x, v.key, modes[mode],
                           goblin_sbe_getex_value(&v));
    else
        goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);
}

void goblin__sbe_mget(struct goblin__sbe_req *r)
{
    struct goblin_sbe_mget v;
    struct goblin_slice *keys;
    size_t n;

    if (!GOBLIN__SBE_DECODED(mget, v))
        return;
    if (v.keys.count == 0)
        goblin__sbe_arity(r, "mget");
    else if ((keys = goblin__sbe_gather(r, v.keys, 1, &n)) != NULL)
        goblin__exec_mget(&r->x, keys, n);
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

    if (GOBLIN__SBE_DECODED(mset, v) &&
        (kv = mset_split(r, v.entries, "mset", &n)) != NULL)
        goblin__exec_mset(&r->x, kv, kv + n, n);
}

void goblin__sbe_msetnx(struct goblin__sbe_req *r)
{
    struct goblin_sbe_msetnx v;
    struct goblin_slice *kv;
    size_t n;

    if (GOBLIN__SBE_DECODED(msetnx, v) &&
        (kv = mset_split(r, v.entries, "msetnx", &n)) != NULL)
        goblin__exec_msetnx(&r->x, kv, kv + n, n);
}

void goblin__sbe_append(struct goblin__sbe_req *r)
{
    struct goblin_sbe_append v;

    if (GOBLIN__SBE_DECODED(append, v))
        goblin__exec_append(&r->x, v.key, v.value);
}

void goblin__sbe_strlen(struct goblin__sbe_req *r)
{
    struct goblin_sbe_strlen v;

    if (GOBLIN__SBE_DECODED(strlen, v))
        goblin__exec_strlen(&r->x, v.key);
}

void goblin__sbe_incr(struct goblin__sbe_req *r)
{
    struct goblin_sbe_incr v;

    if (GOBLIN__SBE_DECODED(incr, v))
        goblin__exec_incrby(&r->x, v.key, 1);
}

void goblin__sbe_decr(struct goblin__sbe_req *r)
{
    struct goblin_sbe_decr v;

    if (GOBLIN__SBE_DECODED(decr, v))
        goblin__exec_incrby(&r->x, v.key, -1);
}

void goblin__sbe_incrby(struct goblin__sbe_req *r)
{
    struct goblin_sbe_incrby v;

    if (GOBLIN__SBE_DECODED(incrby, v))
        goblin__exec_incrby(&r->x, v.key, goblin_sbe_incrby_increment(&v));
}

void goblin__sbe_decrby(struct goblin__sbe_req *r)
{
    struct goblin_sbe_decrby v;

    if (GOBLIN__SBE_DECODED(decrby, v))
        goblin__exec_decrby(&r->x, v.key, goblin_sbe_decrby_decrement(&v));
}

void goblin__sbe_incrbyfloat(struct goblin__sbe_req *r)
{
    static const struct goblin_slice nan_text = {"nan", 3};
    struct goblin_sbe_incrbyfloat v;
    long double incr;

    if (!GOBLIN__SBE_DECODED(incrbyfloat, v))
        return;
    incr = goblin_sbe_incrbyfloat_increment(&v);
    /* A NaN is refused as RESP refuses the text "nan", in Redis's order
     * (the key's type and value first). */
    goblin__exec_incrbyfloat(&r->x, v.key, isnan(incr) ? NULL : &incr,
                             nan_text);
}

void goblin__sbe_getrange(struct goblin__sbe_req *r)
{
    struct goblin_sbe_getrange v;

    if (GOBLIN__SBE_DECODED(getrange, v))
        goblin__exec_getrange(&r->x, v.key, goblin_sbe_getrange_start(&v),
                              goblin_sbe_getrange_end(&v));
}

void goblin__sbe_setrange(struct goblin__sbe_req *r)
{
    struct goblin_sbe_setrange v;

    if (GOBLIN__SBE_DECODED(setrange, v))
        goblin__exec_setrange(&r->x, v.key, goblin_sbe_setrange_offset(&v),
                              v.value);
}
