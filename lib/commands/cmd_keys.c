/* cmd_keys.c - keyspace commands: DEL, UNLINK, EXISTS, TOUCH, TYPE, RENAME,
 * RENAMENX, KEYS, SCAN, RANDOMKEY, DBSIZE, FLUSHALL, FLUSHDB, the EXPIRE
 * family, TTL, PTTL, EXPIRETIME, PEXPIRETIME, PERSIST and OBJECT, with Redis
 * 7's argument checks and texts (db.c, expire.c, object.c).
 *
 * Replies of unknown length (KEYS, SCAN) collect key views in the
 * session's scratch array first: nothing writes to the store between the
 * walk and the reply, so the views stay valid.
 *
 * Each command with a typed SBE request is an execution function
 * (exec.h), which lib/sbe calls too, and a RESP handler that parses argv
 * and calls it.
 */
#include <stdio.h>
#include <string.h>

#include "debug.h"
#include "exec.h"
#include "goblin/keys.h"
#include "engine/maxmemory.h"
#include "notify.h"
#include "respond.h"
#include "engine/session.h"
#include "engine/tracking.h"

/* Sums fn over the keys (DEL and UNLINK, EXISTS and TOUCH). */
static void sum_keys(goblin__exec *x, const struct goblin_slice *keys,
                     size_t n, int (*fn)(goblin_store *, struct goblin_slice))
{
    int64_t count = 0;
    size_t i;

    for (i = 0; i < n; i++)
        count += fn(x->st, keys[i]);
    goblin__reply_int(x, count);
}

void goblin__exec_del(goblin__exec *x, const struct goblin_slice *keys,
                      size_t n)
{
    int64_t count = 0;

    for (size_t i = 0; i < n; i++) {
        int rc = goblin_key_delete(x->st, keys[i]);

        if (rc > 0)
            goblin__notify(x, GOBLIN__NOTIFY_GENERIC, "del", keys[i]);
        count += rc;
    }
    goblin__reply_int(x, count);
}

void goblin__cmd_del(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    goblin__exec_del(x, argv + 1, (size_t)argc - 1);
}

void goblin__cmd_unlink(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    goblin__cmd_del(x, argc, argv);
}

void goblin__exec_exists(goblin__exec *x, const struct goblin_slice *keys,
                         size_t n)
{
    sum_keys(x, keys, n, goblin_key_exists);
}

void goblin__cmd_exists(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    goblin__exec_exists(x, argv + 1, (size_t)argc - 1);
}

void goblin__cmd_touch(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    goblin__cmd_exists(x, argc, argv);
}

const char *goblin__type_name(enum goblin_type t)
{
    switch (t) {
    case GOBLIN_TYPE_STRING: return "string";
    case GOBLIN_TYPE_HASH: return "hash";
    case GOBLIN_TYPE_ZSET: return "zset";
    case GOBLIN_TYPE_LIST: return "list";
    case GOBLIN_TYPE_SET: return "set";
    default: return "none";
    }
}

void goblin__exec_type(goblin__exec *x, struct goblin_slice key)
{
    goblin__reply_status(x, goblin__type_name(goblin_key_type(x->st, key)));
}

void goblin__cmd_type(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_type(x, argv[1]);
}

void goblin__exec_rename(goblin__exec *x, struct goblin_slice key,
                         struct goblin_slice new_key, int nx)
{
    int rc = goblin_key_rename(x->st, key, new_key, nx);
    bool same = key.len == new_key.len &&
                memcmp(key.ptr, new_key.ptr, key.len) == 0;

    if (rc >= 0 && (!nx || rc == 1) && !same) {
        goblin__notify(x, GOBLIN__NOTIFY_GENERIC, "rename_from", key);
        goblin__notify(x, GOBLIN__NOTIFY_GENERIC, "rename_to", new_key);
    }
    if (rc == GOBLIN_ENOKEY)
        goblin__reply_error(x, "ERR no such key");
    else if (rc < 0)
        goblin__reply_code(x, rc);
    else if (nx)
        goblin__reply_int(x, rc);
    else
        goblin__reply_ok(x);
}

void goblin__cmd_rename(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_rename(x, argv[1], argv[2], 0);
}

void goblin__cmd_renamenx(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_rename(x, argv[1], argv[2], 1);
}

struct collect {
    goblin_session *s;
    struct goblin_slice pat; /* ptr NULL: every key */
    bool drop; /* SCAN TYPE of a type Goblin has no keys of */
    size_t n;
    int err;
};

static int collect_key(struct collect *c, struct goblin_slice key)
{
    if (c->drop)
        return 0;
    if (c->pat.ptr != NULL && !goblin_glob_match(c->pat.ptr, c->pat.len,
                                                 key.ptr, key.len, 0))
        return 0;
    if (goblin__scratch_reserve(c->s, c->n + 1) != 0) {
        c->err = GOBLIN_ENOMEM;
        return 1;
    }
    c->s->scratch[c->n++] = key;
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

/* "*" matches everything, as Redis reads it: no pattern to match. */
struct goblin_slice goblin__match_pattern(struct goblin_slice p)
{
    if (p.len == 1 && ((const char *)p.ptr)[0] == '*')
        p.ptr = NULL;
    return p;
}

void goblin__exec_keys(goblin__exec *x, struct goblin_slice pattern)
{
    struct collect c = {x->sess, pattern, false, 0, 0};

    goblin_key_foreach(x->st, keys_visit, &c);
    if (c.err != 0)
        goblin__reply_code(x, c.err);
    else
        goblin__reply_strings(x, x->sess->scratch, c.n, false);
}

void goblin__cmd_keys(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_keys(x, goblin__match_pattern(argv[1]));
}

/* Reads a SCAN cursor as Redis's parseScanCursorOrReply does with
 * strtoul: an optional sign ("-1" wraps), decimal digits, the end of the
 * argument (or a NUL byte); no leading space, no overflow. */
bool goblin__scan_cursor(goblin__exec *x, struct goblin_slice arg,
                         uint64_t *out)
{
    const unsigned char *p = arg.ptr, *end = p + arg.len;
    uint64_t v = 0;
    bool neg = false, digits = false;

    if (p < end && (*p == '+' || *p == '-'))
        neg = *p++ == '-';
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
            goto bad;
        v = v * 10 + (uint64_t)(*p - '0');
        digits = true;
    }
    if (!digits)
        p = arg.ptr;
    if (p < end && *p != '\0')
        goto bad;
    *out = neg ? (uint64_t)0 - v : v;
    return true;
bad:
    goblin__reply_error(x, "ERR invalid cursor");
    return false;
}

/* The type SCAN's TYPE names, case-insensitively; GOBLIN_TYPE_NONE for a
 * type Goblin has no keys of. */
enum goblin_type goblin__scan_type(struct goblin_slice name)
{
    return goblin__arg_is(name, "string") ? GOBLIN_TYPE_STRING
           : goblin__arg_is(name, "hash") ? GOBLIN_TYPE_HASH
           : goblin__arg_is(name, "zset") ? GOBLIN_TYPE_ZSET
           : goblin__arg_is(name, "list") ? GOBLIN_TYPE_LIST
           : goblin__arg_is(name, "set") ? GOBLIN_TYPE_SET
                                          : GOBLIN_TYPE_NONE;
}

/* Reads SCAN's options from argv[i..]: COUNT, MATCH and, when allow_type,
 * TYPE. *type_known is false for a TYPE Goblin has no keys of. */
bool goblin__scan_options(goblin__exec *x, int argc,
                          const struct goblin_slice *argv, int i,
                          bool allow_type, struct goblin_scan_options *o,
                          bool *type_known)
{
    int64_t count;

    *type_known = true;
    for (; i < argc; i += 2) {
        if (goblin__arg_is(argv[i], "count") && argc - i >= 2) {
            if (!goblin__arg_int64(x, argv[i + 1], &count, NULL))
                return false;
            if (count < 1) {
                goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
                return false;
            }
            o->count = (size_t)count;
        } else if (goblin__arg_is(argv[i], "match") && argc - i >= 2) {
            o->match = goblin__match_pattern(argv[i + 1]);
        } else if (goblin__arg_is(argv[i], "type") && allow_type &&
                   argc - i >= 2) {
            o->type = goblin__scan_type(argv[i + 1]);
            *type_known = o->type != GOBLIN_TYPE_NONE;
        } else {
            goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
            return false;
        }
    }
    return true;
}

/* HSCAN and ZSCAN look at the key before their options, as Redis does: a
 * missing key is an empty scan, another type WRONGTYPE. Replies those and
 * returns false. */
bool goblin__scan_key(goblin__exec *x, struct goblin_slice key,
                      enum goblin_type type)
{
    enum goblin_type t = goblin_key_type(x->st, key);

    if (t == type)
        return true;
    if (t == GOBLIN_TYPE_NONE && type == GOBLIN_TYPE_ZSET)
        goblin__reply_scored_scan(x, 0, NULL, 0);
    else if (t == GOBLIN_TYPE_NONE)
        goblin__reply_scan(x, 0, NULL, 0);
    else
        goblin__reply_code(x, GOBLIN_EWRONGTYPE);
    return false;
}

void goblin__exec_scan(goblin__exec *x, uint64_t cursor,
                       const struct goblin_scan_options *o, bool type_known)
{
    struct collect c = {x->sess, {NULL, 0}, !type_known, 0, 0};
    uint64_t next = 0;

    goblin_key_scan(x->st, cursor, o, scan_visit, &c, &next);
    if (c.err != 0)
        goblin__reply_code(x, c.err);
    else
        goblin__reply_scan(x, next, x->sess->scratch, c.n);
}

void goblin__cmd_scan(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    struct goblin_scan_options o = {{NULL, 0}, GOBLIN_TYPE_NONE, 0};
    uint64_t cursor;
    bool known;

    if (goblin__scan_cursor(x, argv[1], &cursor) &&
        goblin__scan_options(x, argc, argv, 2, true, &o, &known))
        goblin__exec_scan(x, cursor, &o, known);
}

void goblin__exec_randomkey(goblin__exec *x)
{
    struct goblin_slice key;

    if (goblin_key_random(x->st, &key) == 1)
        goblin__reply_slice(x, key);
    else
        goblin__reply_null(x);
}

void goblin__cmd_randomkey(goblin__exec *x, int argc,
                           const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    goblin__exec_randomkey(x);
}

void goblin__exec_dbsize(goblin__exec *x)
{
    goblin__reply_int(x, (int64_t)goblin_key_count(x->st));
}

void goblin__cmd_dbsize(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    goblin__exec_dbsize(x);
}

static bool watched_key_exists(goblin_store *st, struct goblin_slice key)
{
    return goblin_key_exists(st, key) == 1;
}

void goblin__exec_flush(goblin__exec *x, bool all)
{
    goblin_engine *eng = x->eng;

    goblin__watch_touch_if(eng, all ? -1 : x->sess->dbid,
                           watched_key_exists);
    if (eng->tracking_clients != 0 || eng->tkeys != 0)
        goblin__tracking_flushed(eng);
    if (!all) {
        goblin_store_flush(x->st);
    } else {
        for (int i = 0; i < eng->ndbs; i++)
            if (goblin__db_peek(eng, i) != NULL)
                goblin_store_flush(goblin__db_peek(eng, i));
    }
    goblin__reply_ok(x);
}

/* FLUSHALL and FLUSHDB [SYNC|ASYNC]: Goblin frees at once either way. */
static void flush(goblin__exec *x, int argc, const struct goblin_slice *argv,
                  bool all)
{
    if (argc > 2 || (argc == 2 && !goblin__arg_is(argv[1], "sync") &&
                     !goblin__arg_is(argv[1], "async")))
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
    else
        goblin__exec_flush(x, all);
}

void goblin__cmd_flushall(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    flush(x, argc, argv, true);
}

void goblin__cmd_flushdb(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    flush(x, argc, argv, false);
}

/* EXPIRE's NX, XX, GT and LT (Redis 7's parseExtendedExpireArguments). */
static bool expire_flags(goblin__exec *x, int argc,
                         const struct goblin_slice *argv, int *flags)
{
    int j;

    for (j = 3; j < argc; j++) {
        if (goblin__arg_is(argv[j], "nx")) {
            *flags |= GOBLIN_EXPIRE_NX;
        } else if (goblin__arg_is(argv[j], "xx")) {
            *flags |= GOBLIN_EXPIRE_XX;
        } else if (goblin__arg_is(argv[j], "gt")) {
            *flags |= GOBLIN_EXPIRE_GT;
        } else if (goblin__arg_is(argv[j], "lt")) {
            *flags |= GOBLIN_EXPIRE_LT;
        } else {
            goblin__reply_errorf(x, "ERR Unsupported option %.*s",
                                 goblin__cstr_len(argv[j]),
                                 (const char *)argv[j].ptr);
            return false;
        }
    }
    if ((*flags & GOBLIN_EXPIRE_NX) && (*flags & ~GOBLIN_EXPIRE_NX)) {
        goblin__reply_error(x, "ERR NX and XX, GT or LT options at the same "
                               "time are not compatible");
        return false;
    }
    if ((*flags & GOBLIN_EXPIRE_GT) && (*flags & GOBLIN_EXPIRE_LT)) {
        goblin__reply_error(x, "ERR GT and LT options at the same time are "
                               "not compatible");
        return false;
    }
    return true;
}

void goblin__exec_expire(goblin__exec *x, enum goblin__expire_kind kind,
                         struct goblin_slice key, int64_t t, int flags)
{
    typedef int expire_fn(goblin_store *, struct goblin_slice, int64_t, int);
    static expire_fn *const fns[] = {
        goblin_key_expire, goblin_key_pexpire, goblin_key_expireat,
        goblin_key_pexpireat};
    int rc = fns[kind](x->st, key, t, flags);

    /* A deadline already past deletes the key. */
    if (rc == 1 && goblin__notify_on(x, GOBLIN__NOTIFY_GENERIC))
        goblin__notify(x, GOBLIN__NOTIFY_GENERIC,
                       goblin_key_exists(x->st, key) ? "expire" : "del", key);
    if (rc == GOBLIN_EINVAL)
        goblin__reply_errorf(x, "ERR invalid expire time in '%s' command",
                             x->cmd->fullname);
    else if (rc < 0)
        goblin__reply_code(x, rc);
    else
        goblin__reply_int(x, rc);
}

static void expire_common(goblin__exec *x, int argc,
                          const struct goblin_slice *argv,
                          enum goblin__expire_kind kind)
{
    int64_t t;
    int flags = 0;

    if (expire_flags(x, argc, argv, &flags) &&
        goblin__arg_int64(x, argv[2], &t, NULL))
        goblin__exec_expire(x, kind, argv[1], t, flags);
}

void goblin__cmd_expire(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    expire_common(x, argc, argv, GOBLIN__EXPIRE);
}

void goblin__cmd_pexpire(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    expire_common(x, argc, argv, GOBLIN__PEXPIRE);
}

void goblin__cmd_expireat(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    expire_common(x, argc, argv, GOBLIN__EXPIREAT);
}

void goblin__cmd_pexpireat(goblin__exec *x, int argc,
                           const struct goblin_slice *argv)
{
    expire_common(x, argc, argv, GOBLIN__PEXPIREAT);
}

/* -1 (no deadline) and -2 (no key) are answers, not errors. */
void goblin__exec_ttl(goblin__exec *x, enum goblin__ttl_kind kind,
                      struct goblin_slice key)
{
    typedef int64_t ttl_fn(goblin_store *, struct goblin_slice);
    static ttl_fn *const fns[] = {goblin_key_ttl, goblin_key_pttl,
                                  goblin_key_expiretime,
                                  goblin_key_pexpiretime};

    goblin__reply_int(x, fns[kind](x->st, key));
}

void goblin__cmd_ttl(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_ttl(x, GOBLIN__TTL, argv[1]);
}

void goblin__cmd_pttl(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_ttl(x, GOBLIN__PTTL, argv[1]);
}

void goblin__cmd_expiretime(goblin__exec *x, int argc,
                            const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_ttl(x, GOBLIN__EXPIRETIME, argv[1]);
}

void goblin__cmd_pexpiretime(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_ttl(x, GOBLIN__PEXPIRETIME, argv[1]);
}

void goblin__exec_persist(goblin__exec *x, struct goblin_slice key)
{
    int rc = goblin_key_persist(x->st, key);

    if (rc == 1)
        goblin__notify(x, GOBLIN__NOTIFY_GENERIC, "persist", key);
    if (rc < 0)
        goblin__reply_code(x, rc);
    else
        goblin__reply_int(x, rc);
}

void goblin__cmd_persist(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_persist(x, argv[1]);
}

void goblin__cmd_object_encoding(goblin__exec *x, int argc,
                                 const struct goblin_slice *argv)
{
    const char *enc;

    (void)argc;
    goblin__reads_unnotified(x);
    if (goblin_key_encoding(x->st, argv[2], &enc) == 1)
        goblin__reply_cstr(x, enc);
    else
        goblin__reply_null(x);
}

/* OBJECT FREQ: the key's LFU counter, under an LFU maxmemory-policy
 * (maxmemory.c). */
void goblin__cmd_object_freq(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    (void)argc;
    goblin__reads_unnotified(x);
    goblin__object_freq(x, argv[2]);
}

/* OBJECT IDLETIME: seconds since the key's last access, on the store's
 * coarse access clock (maxmemory.c). */
void goblin__cmd_object_idletime(goblin__exec *x, int argc,
                                 const struct goblin_slice *argv)
{
    (void)argc;
    goblin__reads_unnotified(x);
    goblin__object_idletime(x, argv[2]);
}

/* OBJECT REFCOUNT: Goblin shares no value, but answers Redis's count
 * for the integers Redis shares (debug.h). */
void goblin__cmd_object_refcount(goblin__exec *x, int argc,
                                 const struct goblin_slice *argv)
{
    uint32_t id;

    (void)argc;
    goblin__reads_unnotified(x);
    if (goblin__key_find(x->st, argv[2], &id) == 1)
        goblin__reply_int(x, goblin__refcount(x, id));
    else
        goblin__reply_null(x);
}

void goblin__cmd_object_help(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    static const char *const help[] = {
        "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to "
        "store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned "
        "integer is",
        "    proportional to the logarithm of the recent access frequency "
        "of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated "
        "number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with "
        "the specified",
        "    <key>.",
        "HELP",
        "    Prints this help.",
    };

    (void)argc;
    (void)argv;
    goblin__reply_help(x, help, sizeof(help) / sizeof(help[0]));
}

/* One bounded step of active expiry for cron: batches of 200 keys while
 * the store reports more work, for at most about 2 ms. */
void goblin__expire_step(goblin_engine *eng)
{
    uint64_t start = eng->cfg.now_ns(eng->cfg.now_ns_ctx);
    size_t expired = 0;

    for (int i = 0; i < eng->ndbs; i++) {
        goblin_store *st = goblin__db_peek(eng, i);

        while (st != NULL && goblin_store_expire_step(st, 200, &expired) == 1 &&
               eng->cfg.now_ns(eng->cfg.now_ns_ctx) - start < 2000000)
            ;
        if (eng->dbs_open == 0)
            break;
    }
    eng->stat_expired_keys += expired;
}
