/* req_keys.c - SBE requests on the keyspace: DEL, UNLINK, EXISTS, TOUCH,
 * TYPE, RENAME, RENAMENX, KEYS, SCAN, RANDOMKEY, PERSIST, the EXPIRE
 * family (with its condition as an enum and its time as an int64), TTL,
 * PTTL, EXPIRETIME, PEXPIRETIME, DBSIZE, FLUSHDB and FLUSHALL; replies
 * and texts as commands/cmd_keys.c gives them on RESP.
 *
 * KEYS and SCAN collect key views in the scratch area: nothing writes to
 * the store between the walk and the reply, so the views stay valid. */
#include "goblin/keys.h"
#include "request.h"

/* Sums fn over the keys of group g (DEL, UNLINK, EXISTS, TOUCH). */
static void each_key(struct goblin__sbe_req *r, struct goblin_sbe_group g,
                     int (*fn)(goblin_store *, struct goblin_slice),
                     const char *name)
{
    struct goblin_slice key;
    int64_t n = 0;

    if (g.count == 0) {
        goblin__sbe_arity(r, name);
        return;
    }
    while (goblin_sbe_rt_entry_next(&g, 1, &key) != NULL)
        n += fn(r->x.st, key);
    goblin__reply_int(&r->x, n);
}

void goblin__sbe_del(struct goblin__sbe_req *r)
{
    struct goblin_sbe_del v;

    if (goblin__sbe_decoded(r, goblin_sbe_del_decode(&v, r->m)))
        each_key(r, v.keys, goblin_key_delete, "del");
}

void goblin__sbe_unlink(struct goblin__sbe_req *r)
{
    struct goblin_sbe_unlink v;

    if (goblin__sbe_decoded(r, goblin_sbe_unlink_decode(&v, r->m)))
        each_key(r, v.keys, goblin_key_delete, "unlink");
}

void goblin__sbe_exists(struct goblin__sbe_req *r)
{
    struct goblin_sbe_exists v;

    if (goblin__sbe_decoded(r, goblin_sbe_exists_decode(&v, r->m)))
        each_key(r, v.keys, goblin_key_exists, "exists");
}

void goblin__sbe_touch(struct goblin__sbe_req *r)
{
    struct goblin_sbe_touch v;

    if (goblin__sbe_decoded(r, goblin_sbe_touch_decode(&v, r->m)))
        each_key(r, v.keys, goblin_key_exists, "touch");
}

void goblin__sbe_type(struct goblin__sbe_req *r)
{
    struct goblin_sbe_type v;

    if (goblin__sbe_decoded(r, goblin_sbe_type_decode(&v, r->m)))
        goblin__reply_status(&r->x, goblin__type_name(
                                        goblin_key_type(r->x.st, v.key)));
}

static void rename_reply(struct goblin__sbe_req *r, int rc, int nx)
{
    if (rc == GOBLIN_ENOKEY)
        goblin__reply_error(&r->x, "ERR no such key");
    else if (rc < 0)
        goblin__reply_code(&r->x, rc);
    else if (nx)
        goblin__reply_int(&r->x, rc);
    else
        goblin__reply_ok(&r->x);
}

void goblin__sbe_rename(struct goblin__sbe_req *r)
{
    struct goblin_sbe_rename v;

    if (goblin__sbe_decoded(r, goblin_sbe_rename_decode(&v, r->m)))
        rename_reply(r, goblin_key_rename(r->x.st, v.key, v.new_key, 0), 0);
}

void goblin__sbe_renamenx(struct goblin__sbe_req *r)
{
    struct goblin_sbe_renamenx v;

    if (goblin__sbe_decoded(r, goblin_sbe_renamenx_decode(&v, r->m)))
        rename_reply(r, goblin_key_rename(r->x.st, v.key, v.new_key, 1), 1);
}

/* ---- KEYS and SCAN ---- */

struct collect {
    struct goblin__sbe_req *r;
    struct goblin_slice pat; /* ptr NULL: every key */
    bool drop;               /* SCAN TYPE of a type Goblin has none of */
    size_t n;
    int err;
};

static int collect_key(struct collect *c, struct goblin_slice key)
{
    struct goblin_buf *b = &c->r->ss->scratch;

    if (c->drop || (c->pat.ptr != NULL &&
                    !goblin_glob_match(c->pat.ptr, c->pat.len, key.ptr,
                                       key.len, 0)))
        return 0;
    if (goblin_buf_append(b, &key, sizeof(key)) != 0) {
        b->failed = false;
        c->err = GOBLIN_ENOMEM;
        return 1;
    }
    c->n++;
    return 0;
}

static int keys_visit(void *ctx, const struct goblin_key_info *info)
{
    return collect_key(ctx, info->key);
}

static int scan_visit(void *ctx, struct goblin_slice key)
{
    return collect_key(ctx, key);
}

/* "*" matches everything, as Redis reads it. */
static struct goblin_slice pattern(struct goblin_slice p)
{
    if (p.len == 1 && ((const char *)p.ptr)[0] == '*')
        p.ptr = NULL;
    return p;
}

void goblin__sbe_keys(struct goblin__sbe_req *r)
{
    struct goblin_sbe_keys v;
    struct collect c = {r, {NULL, 0}, false, 0, 0};

    if (!goblin__sbe_decoded(r, goblin_sbe_keys_decode(&v, r->m)))
        return;
    c.pat = pattern(v.pattern);
    r->ss->scratch.len = 0;
    goblin_key_foreach(r->x.st, keys_visit, &c);
    if (c.err != 0)
        goblin__reply_code(&r->x, c.err);
    else if (goblin__sbe_out(r) != NULL)
        goblin__sbe_reply_strings(goblin__sbe_out(r),
                                  (const void *)r->ss->scratch.data, c.n,
                                  false);
}

/* SCAN-family options (hasMatch, hasCount, hasType): replies a syntax
 * error and returns false for a count below 1 or a type where none is
 * allowed. */
bool goblin__sbe_scan_options(struct goblin__sbe_req *r, unsigned flags,
                              int64_t count, bool allow_type,
                              struct goblin_scan_options *o)
{
    if ((flags & ~GOBLIN_SBE_SCAN_FLAGS_MASK) ||
        (!allow_type && (flags & GOBLIN_SBE_SCAN_FLAGS_HAS_TYPE)) ||
        ((flags & GOBLIN_SBE_SCAN_FLAGS_HAS_COUNT) && count < 1)) {
        goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);
        return false;
    }
    if (flags & GOBLIN_SBE_SCAN_FLAGS_HAS_COUNT)
        o->count = (size_t)count;
    return true;
}

static enum goblin_type type_named(struct goblin_slice t)
{
    static const char *const names[] = {"string", "hash", "zset"};
    static const enum goblin_type types[] = {
        GOBLIN_TYPE_STRING, GOBLIN_TYPE_HASH, GOBLIN_TYPE_ZSET};
    size_t i, j;

    for (i = 0; i < 3; i++) {
        for (j = 0; j < t.len && names[i][j] != '\0'; j++)
            if ((((const char *)t.ptr)[j] | 0x20) != names[i][j])
                break;
        if (j == t.len && names[i][j] == '\0')
            return types[i];
    }
    return GOBLIN_TYPE_NONE;
}

void goblin__sbe_scan(struct goblin__sbe_req *r)
{
    struct goblin_sbe_scan v;
    struct goblin_scan_options o = {{NULL, 0}, GOBLIN_TYPE_NONE, 0};
    struct collect c = {r, {NULL, 0}, false, 0, 0};
    unsigned flags;
    uint64_t next = 0;

    if (!goblin__sbe_decoded(r, goblin_sbe_scan_decode(&v, r->m)))
        return;
    flags = goblin_sbe_scan_flags(&v);
    if (!goblin__sbe_scan_options(r, flags, goblin_sbe_scan_count(&v), true,
                                  &o))
        return;
    if (flags & GOBLIN_SBE_SCAN_FLAGS_HAS_MATCH)
        o.match = pattern(v.pattern);
    if (flags & GOBLIN_SBE_SCAN_FLAGS_HAS_TYPE) {
        o.type = type_named(v.type);
        c.drop = o.type == GOBLIN_TYPE_NONE;
    }
    r->ss->scratch.len = 0;
    goblin_key_scan(r->x.st, goblin_sbe_scan_cursor(&v), &o, scan_visit, &c,
                    &next);
    if (c.err != 0)
        goblin__reply_code(&r->x, c.err);
    else if (goblin__sbe_out(r) != NULL)
        goblin__sbe_reply_scan(goblin__sbe_out(r), next,
                               (const void *)r->ss->scratch.data, c.n);
}

void goblin__sbe_randomkey(struct goblin__sbe_req *r)
{
    struct goblin_sbe_randomkey v;
    struct goblin_slice key;

    if (!goblin__sbe_decoded(r, goblin_sbe_randomkey_decode(&v, r->m)))
        return;
    if (goblin_key_random(r->x.st, &key) == 1)
        goblin__reply_slice(&r->x, key);
    else
        goblin__reply_null(&r->x);
}

/* ---- deadlines ---- */

typedef int expire_fn(goblin_store *st, struct goblin_slice key, int64_t t,
                      int flags);

static void expire_common(struct goblin__sbe_req *r, struct goblin_slice key,
                          int64_t t, unsigned cond, expire_fn *fn,
                          const char *name)
{
    static const int flags[] = {0, GOBLIN_EXPIRE_NX, GOBLIN_EXPIRE_XX,
                                GOBLIN_EXPIRE_GT, GOBLIN_EXPIRE_LT};
    int rc;

    if (!goblin_sbe_expire_condition_valid(cond)) {
        goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);
        return;
    }
    rc = fn(r->x.st, key, t, flags[cond]);
    if (rc == GOBLIN_EINVAL)
        goblin__reply_errorf(&r->x, "ERR invalid expire time in '%s' command",
                             name);
    else
        goblin__sbe_count(r, rc);
}

#define EXPIRE_REQUEST(name, fn)                                          \
    void goblin__sbe_##name(struct goblin__sbe_req *r)                        \
    {                                                                         \
        struct goblin_sbe_##name v;                                           \
                                                                              \
        if (goblin__sbe_decoded(r, goblin_sbe_##name##_decode(&v, r->m)))     \
            expire_common(r, v.key, goblin_sbe_##name##_value(&v),            \
                          goblin_sbe_##name##_condition(&v), fn, #name);      \
    }

EXPIRE_REQUEST(expire, goblin_key_expire)
EXPIRE_REQUEST(pexpire, goblin_key_pexpire)
EXPIRE_REQUEST(expireat, goblin_key_expireat)
EXPIRE_REQUEST(pexpireat, goblin_key_pexpireat)

/* TTL and friends: -1 (no deadline) and -2 (no key) are answers. */
#define KEY_INT_REQUEST(name, fn)                                             \
    void goblin__sbe_##name(struct goblin__sbe_req *r)                        \
    {                                                                         \
        struct goblin_sbe_##name v;                                           \
                                                                              \
        if (goblin__sbe_decoded(r, goblin_sbe_##name##_decode(&v, r->m)))     \
            goblin__reply_int(&r->x, fn(r->x.st, v.key));                     \
    }

KEY_INT_REQUEST(ttl, goblin_key_ttl)
KEY_INT_REQUEST(pttl, goblin_key_pttl)
KEY_INT_REQUEST(expiretime, goblin_key_expiretime)
KEY_INT_REQUEST(pexpiretime, goblin_key_pexpiretime)

void goblin__sbe_persist(struct goblin__sbe_req *r)
{
    struct goblin_sbe_persist v;

    if (goblin__sbe_decoded(r, goblin_sbe_persist_decode(&v, r->m)))
        goblin__sbe_count(r, goblin_key_persist(r->x.st, v.key));
}

void goblin__sbe_dbsize(struct goblin__sbe_req *r)
{
    struct goblin_sbe_dbsize v;

    if (goblin__sbe_decoded(r, goblin_sbe_dbsize_decode(&v, r->m)))
        goblin__reply_int(&r->x, (int64_t)goblin_key_count(r->x.st));
}

static bool watched_key_exists(goblin_store *st, struct goblin_slice key)
{
    return goblin_key_exists(st, key) == 1;
}

static void flush(struct goblin__sbe_req *r, unsigned mode)
{
    if (!goblin_sbe_flush_mode_valid(mode)) {
        goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);
        return;
    }
    goblin__watch_touch_if(r->x.eng, watched_key_exists);
    goblin_store_flush(r->x.st);
    goblin__reply_ok(&r->x);
}

void goblin__sbe_flushdb(struct goblin__sbe_req *r)
{
    struct goblin_sbe_flushdb v;

    if (goblin__sbe_decoded(r, goblin_sbe_flushdb_decode(&v, r->m)))
        flush(r, goblin_sbe_flushdb_mode(&v));
}

void goblin__sbe_flushall(struct goblin__sbe_req *r)
{
    struct goblin_sbe_flushall v;

    if (goblin__sbe_decoded(r, goblin_sbe_flushall_decode(&v, r->m)))
        flush(r, goblin_sbe_flushall_mode(&v));
}
