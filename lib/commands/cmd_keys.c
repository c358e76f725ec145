/* cmd_keys.c - keyspace commands: DEL, UNLINK, EXISTS, TOUCH, TYPE, RENAME,
 * RENAMENX, KEYS, SCAN, RANDOMKEY, DBSIZE, FLUSHALL, FLUSHDB, the EXPIRE
 * family, TTL, PTTL, EXPIRETIME, PEXPIRETIME, PERSIST and OBJECT, with Redis
 * 7's argument checks and texts (db.c, expire.c, object.c).
 *
 * Replies of unknown length (KEYS, SCAN) collect key views in the
 * session's scratch array first: nothing writes to the store between the
 * walk and the reply, so the views stay valid.
 */
#include <stdio.h>
#include <string.h>

#include "goblin/keys.h"
#include "maxmemory.h"
#include "respond.h"
#include "session.h"

void cmd_del(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    int64_t n = 0;
    int j;

    for (j = 1; j < argc; j++)
        n += goblin_key_delete(x->st, argv[j]);
    goblin__reply_int(x, n);
}

void cmd_unlink(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    cmd_del(x, argc, argv);
}

void cmd_exists(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    int64_t n = 0;
    int j;

    for (j = 1; j < argc; j++)
        n += goblin_key_exists(x->st, argv[j]);
    goblin__reply_int(x, n);
}

void cmd_touch(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    cmd_exists(x, argc, argv);
}

const char *goblin__type_name(enum goblin_type t)
{
    switch (t) {
    case GOBLIN_TYPE_STRING: return "string";
    case GOBLIN_TYPE_HASH: return "hash";
    case GOBLIN_TYPE_ZSET: return "zset";
    default: return "none";
    }
}

void cmd_type(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    (void)argc;
    goblin__reply_status(x, goblin__type_name(goblin_key_type(x->st,
                                                              argv[1])));
}

static void rename_common(goblin__exec *x, const struct goblin_slice *argv,
                          int nx)
{
    int rc = goblin_key_rename(x->st, argv[1], argv[2], nx);

    if (rc == GOBLIN_ENOKEY)
        goblin__reply_error(x, "ERR no such key");
    else if (rc < 0)
        goblin__reply_code(x, rc);
    else if (nx)
        goblin__reply_int(x, rc);
    else
        goblin__reply_ok(x);
}

void cmd_rename(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    (void)argc;
    rename_common(x, argv, 0);
}

void cmd_renamenx(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    (void)argc;
    rename_common(x, argv, 1);
}

struct collect {
    goblin_session *s;
    struct goblin_slice pat;
    bool all;
    bool drop; /* SCAN TYPE of a type Goblin has no keys of */
    size_t n;
    int err;
};

static int collect_key(struct collect *c, struct goblin_slice key)
{
    if (c->drop)
        return 0;
    if (!c->all && !goblin_glob_match(c->pat.ptr, c->pat.len, key.ptr,
                                      key.len, 0))
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

static void reply_collected(goblin__exec *x, const struct collect *c)
{
    size_t i;

    if (c->err != 0) {
        goblin__reply_code(x, c->err);
        return;
    }
    goblin__reply_array(x, c->n);
    for (i = 0; i < c->n; i++)
        goblin__reply_slice(x, x->sess->scratch[i]);
}

void cmd_keys(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    struct collect c = {x->sess, argv[1], false, false, 0, 0};

    (void)argc;
    c.all = argv[1].len == 1 && ((const char *)argv[1].ptr)[0] == '*';
    goblin_key_foreach(x->st, keys_visit, &c);
    reply_collected(x, &c);
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
            o->match = argv[i + 1];
            if (o->match.len == 1 && ((const char *)o->match.ptr)[0] == '*')
                o->match.ptr = NULL;
        } else if (goblin__arg_is(argv[i], "type") && allow_type &&
                   argc - i >= 2) {
            o->type = goblin__arg_is(argv[i + 1], "string") ? GOBLIN_TYPE_STRING
                      : goblin__arg_is(argv[i + 1], "hash") ? GOBLIN_TYPE_HASH
                      : goblin__arg_is(argv[i + 1], "zset") ? GOBLIN_TYPE_ZSET
                                                             : GOBLIN_TYPE_NONE;
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
    if (t == GOBLIN_TYPE_NONE) {
        goblin__reply_cursor(x, 0);
        goblin__reply_array(x, 0);
    } else {
        goblin__reply_code(x, GOBLIN_EWRONGTYPE);
    }
    return false;
}

/* The cursor of a SCAN reply, as a bulk string. */
void goblin__reply_cursor(goblin__exec *x, uint64_t cursor)
{
    char buf[24];
    int n = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)cursor);

    goblin__reply_array(x, 2);
    goblin__reply_bulk(x, buf, (size_t)n);
}

void cmd_scan(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    struct goblin_scan_options o = {{NULL, 0}, GOBLIN_TYPE_NONE, 0};
    struct collect c = {x->sess, {NULL, 0}, true, false, 0, 0};
    uint64_t cursor, next = 0;
    bool known;

    if (!goblin__scan_cursor(x, argv[1], &cursor) ||
        !goblin__scan_options(x, argc, argv, 2, true, &o, &known))
        return;
    c.drop = !known;
    goblin_key_scan(x->st, cursor, &o, scan_visit, &c, &next);
    if (c.err != 0) {
        goblin__reply_code(x, c.err);
        return;
    }
    goblin__reply_cursor(x, next);
    reply_collected(x, &c);
}

void cmd_randomkey(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    struct goblin_slice key;

    (void)argc;
    (void)argv;
    if (goblin_key_random(x->st, &key) == 1)
        goblin__reply_slice(x, key);
    else
        goblin__reply_null(x);
}

void cmd_dbsize(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    goblin__reply_int(x, (int64_t)goblin_key_count(x->st));
}

static bool watched_key_exists(goblin_store *st, struct goblin_slice key)
{
    return goblin_key_exists(st, key) == 1;
}

/* FLUSHALL and FLUSHDB [SYNC|ASYNC]: Goblin frees at once either way. */
void cmd_flushall(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    if (argc > 2 || (argc == 2 && !goblin__arg_is(argv[1], "sync") &&
                     !goblin__arg_is(argv[1], "async"))) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return;
    }
    goblin__watch_touch_if(x->eng, watched_key_exists);
    goblin_store_flush(x->st);
    goblin__reply_ok(x);
}

void cmd_flushdb(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    cmd_flushall(x, argc, argv);
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

typedef int expire_fn(goblin_store *st, struct goblin_slice key, int64_t t,
                      int flags);

static void expire_common(goblin__exec *x, int argc,
                          const struct goblin_slice *argv, expire_fn *fn)
{
    int64_t t;
    int flags = 0, rc;

    if (!expire_flags(x, argc, argv, &flags) ||
        !goblin__arg_int64(x, argv[2], &t, NULL))
        return;
    rc = fn(x->st, argv[1], t, flags);
    if (rc == GOBLIN_EINVAL)
        goblin__reply_errorf(x, "ERR invalid expire time in '%s' command",
                             x->cmd->fullname);
    else if (rc < 0)
        goblin__reply_code(x, rc);
    else
        goblin__reply_int(x, rc);
}

void cmd_expire(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    expire_common(x, argc, argv, goblin_key_expire);
}

void cmd_pexpire(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    expire_common(x, argc, argv, goblin_key_pexpire);
}

void cmd_expireat(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    expire_common(x, argc, argv, goblin_key_expireat);
}

void cmd_pexpireat(goblin__exec *x, int argc,
                   const struct goblin_slice *argv)
{
    expire_common(x, argc, argv, goblin_key_pexpireat);
}

void cmd_ttl(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    (void)argc;
    goblin__reply_int(x, goblin_key_ttl(x->st, argv[1]));
}

void cmd_pttl(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    (void)argc;
    goblin__reply_int(x, goblin_key_pttl(x->st, argv[1]));
}

void cmd_expiretime(goblin__exec *x, int argc,
                    const struct goblin_slice *argv)
{
    (void)argc;
    goblin__reply_int(x, goblin_key_expiretime(x->st, argv[1]));
}

void cmd_pexpiretime(goblin__exec *x, int argc,
                     const struct goblin_slice *argv)
{
    (void)argc;
    goblin__reply_int(x, goblin_key_pexpiretime(x->st, argv[1]));
}

void cmd_persist(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    int rc = goblin_key_persist(x->st, argv[1]);

    (void)argc;
    if (rc < 0)
        goblin__reply_code(x, rc);
    else
        goblin__reply_int(x, rc);
}

void cmd_object_encoding(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    const char *enc;

    (void)argc;
    if (goblin_key_encoding(x->st, argv[2], &enc) == 1)
        goblin__reply_cstr(x, enc);
    else
        goblin__reply_null(x);
}

/* OBJECT FREQ: the key's LFU counter, under an LFU maxmemory-policy
 * (maxmemory.c). */
void cmd_object_freq(goblin__exec *x, int argc,
                     const struct goblin_slice *argv)
{
    (void)argc;
    goblin__object_freq(x, argv[2]);
}

/* OBJECT IDLETIME: seconds since the key's last access, on the store's
 * coarse access clock (maxmemory.c). */
void cmd_object_idletime(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    (void)argc;
    goblin__object_idletime(x, argv[2]);
}

/* OBJECT REFCOUNT: values are never shared in Goblin. */
void cmd_object_refcount(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    (void)argc;
    if (goblin_key_exists(x->st, argv[2]))
        goblin__reply_int(x, 1);
    else
        goblin__reply_null(x);
}

void cmd_object_help(goblin__exec *x, int argc,
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

    while (goblin_store_expire_step(eng->st, 200, &expired) == 1 &&
           eng->cfg.now_ns(eng->cfg.now_ns_ctx) - start < 2000000)
        ;
    eng->stat_expired_keys += expired;
}
