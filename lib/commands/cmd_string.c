/* cmd_string.c - string commands: GET, SET and its options, GETSET,
 * GETDEL, GETEX, APPEND, STRLEN, SETRANGE, GETRANGE, SUBSTR, the INCR
 * family, INCRBYFLOAT, MGET, MSET, MSETNX, SETNX, SETEX and PSETEX, with
 * Redis 7's argument order and texts (t_string.c).
 *
 * SET and GETEX options are read as Redis's
 * parseExtendedStringArgumentsOrReply reads them: a repeated option is
 * fine, a conflicting one is "ERR syntax error", and the time argument is
 * an integer checked only after the options.
 *
 * Each command is an execution function (exec.h), which SBE's typed
 * requests call too, and a RESP handler that parses argv and calls it.
 */
#include "goblin/numtext.h"
#include "exec.h"
#include "goblin/str.h"
#include "notify.h"
#include "respond.h"
#include "engine/session.h"

/* A write command's read of key (GETDEL, GETEX), after its store call
 * answered rc; the read commands' lookups count in the store. */
static void hit(goblin__exec *x, int rc, struct goblin_slice key)
{
    if (rc >= 0 || rc == GOBLIN_EWRONGTYPE)
        goblin__read_lookup(x, rc != 0, key);
}

/* Replies a bulk view, null (rc 0) or the error of rc. */
static void view_reply(goblin__exec *x, int rc, struct goblin_slice v)
{
    if (rc == 1)
        goblin__reply_slice(x, v);
    else if (rc == 0)
        goblin__reply_null(x);
    else
        goblin__reply_code(x, rc);
}

static void int_reply(goblin__exec *x, int64_t rc)
{
    if (rc < 0)
        goblin__reply_code(x, (int)rc);
    else
        goblin__reply_int(x, rc);
}

void goblin__exec_get(goblin__exec *x, struct goblin_slice key)
{
    struct goblin_slice v = {NULL, 0};
    int rc = goblin_str_get(x->st, key, &v);

    view_reply(x, rc, v);
}

void goblin__cmd_get(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_get(x, argv[1]);
}

enum {
    OPT_NX = 1 << 0, OPT_XX = 1 << 1, OPT_GET = 1 << 2, OPT_KEEPTTL = 1 << 3,
    OPT_PERSIST = 1 << 4, OPT_EX = 1 << 5, OPT_PX = 1 << 6,
    OPT_EXAT = 1 << 7, OPT_PXAT = 1 << 8,
    OPT_TIMES = OPT_EX | OPT_PX | OPT_EXAT | OPT_PXAT,
};

struct str_opts {
    int flags;
    const struct goblin_slice *time;
};

/* One option of SET (is_set) or GETEX at argv[j]; returns how many
 * arguments it took, or 0 when it is not allowed here. */
static int str_opt(const struct goblin_slice *argv, int argc, int j,
                   bool is_set, struct str_opts *o)
{
    static const struct { const char *name; int flag; } times[] = {
        {"ex", OPT_EX}, {"px", OPT_PX}, {"exat", OPT_EXAT},
        {"pxat", OPT_PXAT},
    };
    struct goblin_slice a = argv[j];
    size_t i;

    if (is_set && goblin__arg_is(a, "nx") && !(o->flags & OPT_XX))
        return o->flags |= OPT_NX, 1;
    if (is_set && goblin__arg_is(a, "xx") && !(o->flags & OPT_NX))
        return o->flags |= OPT_XX, 1;
    if (is_set && goblin__arg_is(a, "get"))
        return o->flags |= OPT_GET, 1;
    if (is_set && goblin__arg_is(a, "keepttl") &&
        !(o->flags & (OPT_PERSIST | OPT_TIMES)))
        return o->flags |= OPT_KEEPTTL, 1;
    if (!is_set && goblin__arg_is(a, "persist") &&
        !(o->flags & (OPT_KEEPTTL | OPT_TIMES)))
        return o->flags |= OPT_PERSIST, 1;
    for (i = 0; i < 4; i++) {
        if (goblin__arg_is(a, times[i].name) && j + 1 < argc &&
            !(o->flags & (OPT_KEEPTTL | OPT_PERSIST |
                          (OPT_TIMES & ~times[i].flag)))) {
            o->flags |= times[i].flag;
            o->time = &argv[j + 1];
            return 2;
        }
    }
    return 0;
}

static bool str_opts_parse(goblin__exec *x, int argc,
                           const struct goblin_slice *argv, int first,
                           bool is_set, struct str_opts *o)
{
    int j, n;

    for (j = first; j < argc; j += n) {
        if ((n = str_opt(argv, argc, j, is_set, o)) == 0) {
            goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
            return false;
        }
    }
    return true;
}

static enum goblin_ttl_mode ttl_mode(int flags)
{
    if (flags & OPT_EX)
        return GOBLIN_TTL_EX;
    if (flags & OPT_PX)
        return GOBLIN_TTL_PX;
    if (flags & OPT_EXAT)
        return GOBLIN_TTL_EXAT;
    if (flags & OPT_PXAT)
        return GOBLIN_TTL_PXAT;
    if (flags & OPT_KEEPTTL)
        return GOBLIN_TTL_KEEP;
    if (flags & OPT_PERSIST)
        return GOBLIN_TTL_PERSIST;
    return GOBLIN_TTL_DEFAULT;
}

static void invalid_expire(goblin__exec *x)
{
    goblin__reply_errorf(x, "ERR invalid expire time in '%s' command",
                         x->cmd->fullname);
}

void goblin__exec_set(goblin__exec *x, struct goblin_slice key,
                      struct goblin_slice value,
                      const struct goblin_set_options *so)
{
    struct goblin_slice old = {NULL, 0};
    int rc;

    if (so->get) /* Redis reads the old value first, as GET does */
        goblin__read_keys(x, &key, 1);
    rc = goblin_str_set(x->st, key, value, so, so->get ? &old : NULL);

    if (rc >= 0 && (rc & GOBLIN_SET_DONE)) {
        goblin__notify(x, GOBLIN__NOTIFY_STRING, "set", key);
        if (so->ttl != GOBLIN_TTL_DEFAULT && so->ttl != GOBLIN_TTL_KEEP)
            goblin__notify(x, GOBLIN__NOTIFY_GENERIC, "expire", key);
    }
    if (rc == GOBLIN_EINVAL)
        invalid_expire(x);
    else if (rc < 0)
        goblin__reply_code(x, rc);
    else if (so->get && (rc & GOBLIN_SET_HAD_OLD))
        goblin__reply_slice(x, old);
    else if (so->get || !(rc & GOBLIN_SET_DONE))
        goblin__reply_null(x);
    else
        goblin__reply_ok(x);
}

void goblin__cmd_set(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    struct str_opts o = {0, NULL};
    struct goblin_set_options so = {GOBLIN_SET_ALWAYS, GOBLIN_TTL_DEFAULT, 0,
                                    0};

    if (!str_opts_parse(x, argc, argv, 3, true, &o))
        return;
    if (o.time != NULL && !goblin__arg_int64(x, *o.time, &so.ttl_value, NULL))
        return;
    so.cond = o.flags & OPT_NX   ? GOBLIN_SET_NX
              : o.flags & OPT_XX ? GOBLIN_SET_XX
                                 : GOBLIN_SET_ALWAYS;
    so.ttl = ttl_mode(o.flags);
    so.get = (o.flags & OPT_GET) != 0;
    goblin__exec_set(x, argv[1], argv[2], &so);
}

void goblin__exec_setnx(goblin__exec *x, struct goblin_slice key,
                        struct goblin_slice value)
{
    int rc = goblin_str_setnx(x->st, key, value);

    if (rc == 1)
        goblin__notify(x, GOBLIN__NOTIFY_STRING, "set", key);
    int_reply(x, rc);
}

void goblin__cmd_setnx(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_setnx(x, argv[1], argv[2]);
}

static void setex_common(goblin__exec *x, const struct goblin_slice *argv,
                         enum goblin_ttl_mode mode)
{
    struct goblin_set_options so = {GOBLIN_SET_ALWAYS, mode, 0, 0};

    if (goblin__arg_int64(x, argv[2], &so.ttl_value, NULL))
        goblin__exec_set(x, argv[1], argv[3], &so);
}

void goblin__cmd_setex(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    (void)argc;
    setex_common(x, argv, GOBLIN_TTL_EX);
}

void goblin__cmd_psetex(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    (void)argc;
    setex_common(x, argv, GOBLIN_TTL_PX);
}

void goblin__exec_getset(goblin__exec *x, struct goblin_slice key,
                         struct goblin_slice value)
{
    struct goblin_slice old = {NULL, 0};
    int rc;

    goblin__read_keys(x, &key, 1); /* Redis reads the old value first */
    rc = goblin_str_getset(x->st, key, value, &old);

    if (rc >= 0)
        goblin__notify(x, GOBLIN__NOTIFY_STRING, "set", key);
    view_reply(x, rc, old);
}

void goblin__cmd_getset(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_getset(x, argv[1], argv[2]);
}

void goblin__exec_getdel(goblin__exec *x, struct goblin_slice key)
{
    struct goblin_slice v = {NULL, 0};
    int rc = goblin_str_getdel(x->st, key, &v);

    hit(x, rc, key);
    if (rc == 1)
        goblin__notify(x, GOBLIN__NOTIFY_GENERIC, "del", key);
    view_reply(x, rc, v);
}

void goblin__cmd_getdel(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_getdel(x, argv[1]);
}

void goblin__exec_getex(goblin__exec *x, struct goblin_slice key,
                        enum goblin_ttl_mode mode, int64_t t)
{
    struct goblin_slice v = {NULL, 0};
    bool had_ttl = mode == GOBLIN_TTL_PERSIST &&
                   goblin__notify_on(x, GOBLIN__NOTIFY_GENERIC) &&
                   goblin_key_ttl(x->st, key) >= 0;
    int rc = goblin_str_getex(x->st, key, mode, t, &v);

    hit(x, rc, key);
    if (rc == 1 && mode == GOBLIN_TTL_PERSIST && had_ttl)
        goblin__notify(x, GOBLIN__NOTIFY_GENERIC, "persist", key);
    else if (rc == 1 && mode != GOBLIN_TTL_DEFAULT &&
             mode != GOBLIN_TTL_PERSIST &&
             goblin__notify_on(x, GOBLIN__NOTIFY_GENERIC))
        goblin__notify(x, GOBLIN__NOTIFY_GENERIC,
                       goblin_key_exists(x->st, key) ? "expire" : "del",
                       key);
    if (rc == GOBLIN_EINVAL)
        invalid_expire(x);
    else
        view_reply(x, rc, v);
}

void goblin__cmd_getex(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    struct str_opts o = {0, NULL};
    struct goblin_slice v;
    int64_t t = 0;
    int rc;

    if (!str_opts_parse(x, argc, argv, 2, false, &o))
        return;
    if (o.time != NULL && goblin_int64_parse(o.time->ptr, o.time->len,
                                             &t) != 0) {
        /* Redis reads the time only once it found a string there. */
        rc = goblin_str_get(x->st, argv[1], &v);
        if (rc == 1)
            goblin__reply_error(x, GOBLIN__ERR_NOTINT);
        else
            view_reply(x, rc, v);
        return;
    }
    goblin__exec_getex(x, argv[1], ttl_mode(o.flags), t);
}

/* Redis's checkStringLength: a string may not grow past proto-max-bulk-len,
 * except for what our master's stream sends. Above 512 MB the store's own
 * limit is the setting (goblin__db_string_max); below, the store keeps 512
 * MB and this checks. Only asked on the way to an error, so a wrong type
 * still answers WRONGTYPE first, as in Redis. */
static bool grows_past_bulk_len(goblin__exec *x, uint64_t total)
{
    return total > x->eng->proto_max_bulk_len &&
           !(x->sess != NULL && (x->sess->flags & SESS_MASTER));
}

void goblin__exec_append(goblin__exec *x, struct goblin_slice key,
                         struct goblin_slice value)
{
    int rc;

    if (value.len > 0 && x->eng->proto_max_bulk_len < GOBLIN_STRING_MAX) {
        int64_t cur = goblin_str_len(x->st, key);

        /* Redis checks only a string that exists. */
        if (cur > 0 && grows_past_bulk_len(x, (uint64_t)cur + value.len)) {
            int_reply(x, GOBLIN_ESTRBIG);
            return;
        }
    }
    rc = goblin_str_append(x->st, key, value);

    if (rc >= 0)
        goblin__notify(x, GOBLIN__NOTIFY_STRING, "append", key);
    int_reply(x, rc);
}

void goblin__cmd_append(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_append(x, argv[1], argv[2]);
}

void goblin__exec_strlen(goblin__exec *x, struct goblin_slice key)
{
    int_reply(x, goblin_str_len(x->st, key));
}

void goblin__cmd_strlen(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_strlen(x, argv[1]);
}

void goblin__exec_setrange(goblin__exec *x, struct goblin_slice key,
                           int64_t offset, struct goblin_slice value)
{
    int rc;

    if (offset >= 0 && value.len > 0 &&
        grows_past_bulk_len(x, (uint64_t)offset + value.len)) {
        int64_t cur = goblin_str_len(x->st, key); /* WRONGTYPE first */

        int_reply(x, cur < 0 ? cur : GOBLIN_ESTRBIG);
        return;
    }
    rc = goblin_str_setrange(x->st, key, offset, value);

    if (rc >= 0 && value.len > 0)
        goblin__notify(x, GOBLIN__NOTIFY_STRING, "setrange", key);
    int_reply(x, rc);
}

void goblin__cmd_setrange(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    int64_t off;

    (void)argc;
    if (goblin__arg_int64(x, argv[2], &off, NULL))
        goblin__exec_setrange(x, argv[1], off, argv[3]);
}

void goblin__exec_getrange(goblin__exec *x, struct goblin_slice key,
                           int64_t start, int64_t end)
{
    struct goblin_slice v = {"", 0};
    int rc = goblin_str_getrange(x->st, key, start, end, &v);

    if (rc < 0)
        goblin__reply_code(x, rc);
    else
        goblin__reply_slice(x, rc == 1 ? v : (struct goblin_slice){"", 0});
}

void goblin__cmd_getrange(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    int64_t start, end;

    (void)argc;
    if (goblin__arg_int64(x, argv[2], &start, NULL) &&
        goblin__arg_int64(x, argv[3], &end, NULL))
        goblin__exec_getrange(x, argv[1], start, end);
}

void goblin__cmd_substr(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    goblin__cmd_getrange(x, argc, argv);
}

void goblin__exec_incrby(goblin__exec *x, struct goblin_slice key,
                         int64_t delta)
{
    int64_t result;
    int rc = goblin_str_incrby(x->st, key, delta, &result);

    if (rc >= 0)
        goblin__notify(x, GOBLIN__NOTIFY_STRING, "incrby", key);
    if (rc < 0)
        goblin__reply_code(x, rc);
    else
        goblin__reply_int(x, result);
}

void goblin__exec_decrby(goblin__exec *x, struct goblin_slice key,
                         int64_t decrement)
{
    if (decrement == INT64_MIN)
        goblin__reply_error(x, "ERR decrement would overflow");
    else
        goblin__exec_incrby(x, key, -decrement);
}

void goblin__cmd_incr(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_incrby(x, argv[1], 1);
}

void goblin__cmd_decr(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_incrby(x, argv[1], -1);
}

void goblin__cmd_incrby(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    int64_t delta;

    (void)argc;
    if (goblin__arg_int64(x, argv[2], &delta, NULL))
        goblin__exec_incrby(x, argv[1], delta);
}

void goblin__cmd_decrby(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    int64_t delta;

    (void)argc;
    if (goblin__arg_int64(x, argv[2], &delta, NULL))
        goblin__exec_decrby(x, argv[1], delta);
}

void goblin__exec_incrbyfloat(goblin__exec *x, struct goblin_slice key,
                              const long double *incr,
                              struct goblin_slice text)
{
    struct goblin_slice v;
    int rc = incr != NULL ? goblin_str_incrbyfloat(x->st, key, *incr, &v)
                          : goblin_str_incrbyfloat_text(x->st, key, text, &v);

    if (rc >= 0)
        goblin__notify(x, GOBLIN__NOTIFY_STRING, "incrbyfloat", key);
    if (rc < 0)
        goblin__reply_code(x, rc);
    else
        goblin__reply_slice(x, v);
}

void goblin__cmd_incrbyfloat(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_incrbyfloat(x, argv[1], NULL, argv[2]);
}

void goblin__exec_mget(goblin__exec *x, const struct goblin_slice *keys,
                       size_t n)
{

    if (goblin__scratch_reserve(x->sess, n) != 0) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    goblin_str_mget(x->st, keys, n, x->sess->scratch);
    goblin__reply_strings(x, x->sess->scratch, n, true);
}

void goblin__cmd_mget(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    goblin__exec_mget(x, argv + 1, (size_t)argc - 1);
}

/* Splits MSET's key value pairs into the scratch array: keys first, then
 * values. Replies the error and returns 0 on failure. */
static size_t mset_split(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    size_t n = (size_t)(argc - 1) / 2, i;

    if (argc % 2 == 0) {
        goblin__reply_errorf(x, "ERR wrong number of arguments for '%s' "
                                "command", x->cmd->fullname);
        return 0;
    }
    if (goblin__scratch_reserve(x->sess, 2 * n) != 0) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return 0;
    }
    for (i = 0; i < n; i++) {
        x->sess->scratch[i] = argv[1 + 2 * i];
        x->sess->scratch[n + i] = argv[2 + 2 * i];
    }
    return n;
}

/* MSET with "new" events on: Redis sets and notifies key by key, so each
 * key's "new" comes right before its "set". (Out of memory part way, the
 * keys before stay set.) */
static int mset_each(goblin__exec *x, const struct goblin_slice *keys,
                     const struct goblin_slice *values, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int rc = goblin_str_mset(x->st, keys + i, values + i, 1);

        if (rc < 0)
            return rc;
        goblin__notify(x, GOBLIN__NOTIFY_STRING, "set", keys[i]);
    }
    return 0;
}

void goblin__exec_mset(goblin__exec *x, const struct goblin_slice *keys,
                       const struct goblin_slice *values, size_t n)
{
    int rc;

    if (goblin__notify_on(x, GOBLIN__NOTIFY_NEW)) {
        rc = mset_each(x, keys, values, n);
    } else {
        rc = goblin_str_mset(x->st, keys, values, n);
        if (rc >= 0)
            goblin__notify_keys(x, GOBLIN__NOTIFY_STRING, "set", keys, n);
    }
    if (rc < 0)
        goblin__reply_code(x, rc);
    else
        goblin__reply_ok(x);
}

void goblin__exec_msetnx(goblin__exec *x, const struct goblin_slice *keys,
                         const struct goblin_slice *values, size_t n)
{
    int rc;

    if (goblin__notify_on(x, GOBLIN__NOTIFY_NEW)) {
        rc = 1;
        for (size_t i = 0; i < n && rc == 1; i++)
            if (goblin_key_exists(x->st, keys[i]) == 1)
                rc = 0;
        if (rc == 1 && (rc = mset_each(x, keys, values, n)) == 0)
            rc = 1;
        int_reply(x, rc);
        return;
    }
    rc = goblin_str_msetnx(x->st, keys, values, n);
    if (rc == 1)
        goblin__notify_keys(x, GOBLIN__NOTIFY_STRING, "set", keys, n);
    int_reply(x, rc);
}

void goblin__cmd_mset(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    size_t n = mset_split(x, argc, argv);

    if (n != 0)
        goblin__exec_mset(x, x->sess->scratch, x->sess->scratch + n, n);
}

void goblin__cmd_msetnx(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    size_t n = mset_split(x, argc, argv);

    if (n != 0)
        goblin__exec_msetnx(x, x->sess->scratch, x->sess->scratch + n, n);
}
