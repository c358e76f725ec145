/* req_keys.c - SBE requests on the keyspace: DEL, UNLINK, EXISTS, TOUCH,
 * TYPE, RENAME, RENAMENX, KEYS, SCAN, RANDOMKEY, PERSIST, the EXPIRE
 * family (with its condition as an enum and its time as an int64), TTL,
 * PTTL, EXPIRETIME, PEXPIRETIME, DBSIZE, FLUSHDB and FLUSHALL. Each
 * decodes its frame into the arguments of the command's execution
 * (commands/exec.h), which RESP's handler calls too. */
#include "commands/exec.h"
#include "goblin/keys.h"
#include "request.h"

#define KEYS_REQUEST(name, exec)                                              \
    void goblin__sbe_##name(struct goblin__sbe_req *r)                        \
    {                                                                         \
        struct goblin_sbe_##name v;                                           \
        struct goblin_slice *keys;                                            \
        size_t n;                                                             \
                                                                              \
        if (GOBLIN__SBE_DECODED(name, v) &&                                   \
            (keys = goblin__sbe_args(r, v.keys, 1, #name, &n)) != NULL)       \
            exec(&r->x, keys, n);                                             \
    }

KEYS_REQUEST(del, goblin__exec_del)
KEYS_REQUEST(unlink, goblin__exec_del)
KEYS_REQUEST(exists, goblin__exec_exists)
KEYS_REQUEST(touch, goblin__exec_exists)

void goblin__sbe_type(struct goblin__sbe_req *r)
{
    struct goblin_sbe_type v;

    if (GOBLIN__SBE_DECODED(type, v))
        goblin__exec_type(&r->x, v.key);
}

void goblin__sbe_rename(struct goblin__sbe_req *r)
{
    struct goblin_sbe_rename v;

    if (GOBLIN__SBE_DECODED(rename, v))
        goblin__exec_rename(&r->x, v.key, v.new_key, 0);
}

void goblin__sbe_renamenx(struct goblin__sbe_req *r)
{
    struct goblin_sbe_renamenx v;

    if (GOBLIN__SBE_DECODED(renamenx, v))
        goblin__exec_rename(&r->x, v.key, v.new_key, 1);
}

void goblin__sbe_keys(struct goblin__sbe_req *r)
{
    struct goblin_sbe_keys v;

    if (GOBLIN__SBE_DECODED(keys, v))
        goblin__exec_keys(&r->x, goblin__match_pattern(v.pattern));
}

/* SCAN-family options (hasMatch, hasCount, hasType) into *o: a count
 * below 1 is a syntax error as on RESP, and so are unknown flags and a
 * type where none is allowed. *type_known as goblin__scan_options gives
 * it. Replies and returns false on failure. */
bool goblin__sbe_scan_options(struct goblin__sbe_req *r, unsigned flags,
                              int64_t count, struct goblin_slice pattern,
                              const struct goblin_slice *type,
                              struct goblin_scan_options *o, bool *type_known)
{
    *type_known = true;
    if ((flags & ~GOBLIN_SBE_SCAN_FLAGS_MASK) ||
        (type == NULL && (flags & GOBLIN_SBE_SCAN_FLAGS_HAS_TYPE)) ||
        ((flags & GOBLIN_SBE_SCAN_FLAGS_HAS_COUNT) && count < 1)) {
        goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);
        return false;
    }
    if (flags & GOBLIN_SBE_SCAN_FLAGS_HAS_COUNT)
        o->count = (size_t)count;
    if (flags & GOBLIN_SBE_SCAN_FLAGS_HAS_MATCH)
        o->match = goblin__match_pattern(pattern);
    if (flags & GOBLIN_SBE_SCAN_FLAGS_HAS_TYPE) {
        o->type = goblin__scan_type(*type);
        *type_known = o->type != GOBLIN_TYPE_NONE;
    }
    return true;
}

void goblin__sbe_scan(struct goblin__sbe_req *r)
{
    struct goblin_sbe_scan v;
    struct goblin_scan_options o = {{NULL, 0}, GOBLIN_TYPE_NONE, 0};
    bool known;

    if (GOBLIN__SBE_DECODED(scan, v) &&
        goblin__sbe_scan_options(r, goblin_sbe_scan_flags(&v),
                                 goblin_sbe_scan_count(&v), v.pattern,
                                 &v.type, &o, &known))
        goblin__exec_scan(&r->x, goblin_sbe_scan_cursor(&v), &o, known);
}

void goblin__sbe_randomkey(struct goblin__sbe_req *r)
{
    struct goblin_sbe_randomkey v;

    if (GOBLIN__SBE_DECODED(randomkey, v))
        goblin__exec_randomkey(&r->x);
}

/* ---- deadlines ---- */

#define EXPIRE_REQUEST(name, kind)                                            \
    void goblin__sbe_##name(struct goblin__sbe_req *r)                        \
    {                                                                         \
        static const int flags[] = {0, GOBLIN_EXPIRE_NX, GOBLIN_EXPIRE_XX,    \
                                    GOBLIN_EXPIRE_GT, GOBLIN_EXPIRE_LT};      \
        struct goblin_sbe_##name v;                                           \
        unsigned cond;                                                        \
                                                                              \
        if (!GOBLIN__SBE_DECODED(name, v))                                    \
            return;                                                           \
        cond = goblin_sbe_##name##_condition(&v);                             \
        if (goblin_sbe_expire_condition_valid(cond))                          \
            goblin__exec_expire(&r->x, kind, v.key,                           \
                                goblin_sbe_##name##_value(&v), flags[cond]);  \
        else                                                                  \
            goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);                   \
    }

EXPIRE_REQUEST(expire, GOBLIN__EXPIRE)
EXPIRE_REQUEST(pexpire, GOBLIN__PEXPIRE)
EXPIRE_REQUEST(expireat, GOBLIN__EXPIREAT)
EXPIRE_REQUEST(pexpireat, GOBLIN__PEXPIREAT)

#define TTL_REQUEST(name, kind)                                               \
    void goblin__sbe_##name(struct goblin__sbe_req *r)                        \
    {                                                                         \
        struct goblin_sbe_##name v;                                           \
                                                                              \
        if (GOBLIN__SBE_DECODED(name, v))                                     \
            goblin__exec_ttl(&r->x, kind, v.key);                             \
    }

TTL_REQUEST(ttl, GOBLIN__TTL)
TTL_REQUEST(pttl, GOBLIN__PTTL)
TTL_REQUEST(expiretime, GOBLIN__EXPIRETIME)
TTL_REQUEST(pexpiretime, GOBLIN__PEXPIRETIME)

void goblin__sbe_persist(struct goblin__sbe_req *r)
{
    struct goblin_sbe_persist v;

    if (GOBLIN__SBE_DECODED(persist, v))
        goblin__exec_persist(&r->x, v.key);
}

void goblin__sbe_dbsize(struct goblin__sbe_req *r)
{
    struct goblin_sbe_dbsize v;

    if (GOBLIN__SBE_DECODED(dbsize, v))
        goblin__exec_dbsize(&r->x);
}

#define FLUSH_REQUEST(name, all)                                              \
    void goblin__sbe_##name(struct goblin__sbe_req *r)                        \
    {                                                                         \
        struct goblin_sbe_##name v;                                           \
                                                                              \
        if (!GOBLIN__SBE_DECODED(name, v))                                    \
            return;                                                           \
        if (goblin_sbe_flush_mode_valid(goblin_sbe_##name##_mode(&v)))        \
            goblin__exec_flush(&r->x, all);                                   \
        else                                                                  \
            goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);                   \
    }

FLUSH_REQUEST(flushdb, false)
FLUSH_REQUEST(flushall, true)
