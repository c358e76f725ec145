/* cmd_hash.c - hash commands: HSET, HMSET, HSETNX, HGET, HMGET, HDEL,
 * HLEN, HEXISTS, HSTRLEN, HGETALL, HKEYS, HVALS, HINCRBY, HINCRBYFLOAT,
 * HRANDFIELD and HSCAN (with Redis 7.4's NOVALUES), with Redis 7's
 * argument checks and texts
 * (t_hash.c). HGETALL is a map in RESP3; HRANDFIELD WITHVALUES gives
 * field/value pairs in RESP3 and a flat list in RESP2, as Redis does.
 *
 * Each command is an execution function (exec.h), which SBE's typed
 * requests call too, and a RESP handler that parses argv and calls it.
 */
#include <math.h>

#include "exec.h"
#include "goblin/hash.h"
#include "goblin/keys.h"
#include "goblin/numtext.h"
#include "notify.h"
#include "respond.h"
#include "engine/session.h"

static void int_reply(goblin__exec *x, int64_t rc)
{
    if (rc < 0)
        goblin__reply_code(x, (int)rc);
    else
        goblin__reply_int(x, rc);
}

static bool pairs_ok(goblin__exec *x, int argc)
{
    if (argc % 2 == 0)
        return true;
    goblin__reply_errorf(x, "ERR wrong number of arguments for '%s' command",
                         x->cmd->fullname);
    return false;
}

void goblin__exec_hset(goblin__exec *x, struct goblin_slice key,
                       const struct goblin_slice *fv, size_t npairs)
{
    int rc = goblin_hash_set(x->st, key, fv, npairs);

    if (rc >= 0)
        goblin__notify(x, GOBLIN__NOTIFY_HASH, "hset", key);
    int_reply(x, rc);
}

void goblin__cmd_hset(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    if (pairs_ok(x, argc))
        goblin__exec_hset(x, argv[1], argv + 2, (size_t)(argc - 2) / 2);
}

void goblin__exec_hmset(goblin__exec *x, struct goblin_slice key,
                        const struct goblin_slice *fv, size_t npairs)
{
    int rc = goblin_hash_set(x->st, key, fv, npairs);

    if (rc >= 0)
        goblin__notify(x, GOBLIN__NOTIFY_HASH, "hset", key);
    if (rc < 0)
        goblin__reply_code(x, rc);
    else
        goblin__reply_ok(x);
}

void goblin__cmd_hmset(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    if (pairs_ok(x, argc))
        goblin__exec_hmset(x, argv[1], argv + 2, (size_t)(argc - 2) / 2);
}

void goblin__exec_hsetnx(goblin__exec *x, struct goblin_slice key,
                         struct goblin_slice field, struct goblin_slice value)
{
    int rc = goblin_hash_setnx(x->st, key, field, value);

    if (rc == 1)
        goblin__notify(x, GOBLIN__NOTIFY_HASH, "hset", key);
    int_reply(x, rc);
}

void goblin__cmd_hsetnx(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_hsetnx(x, argv[1], argv[2], argv[3]);
}

void goblin__exec_hget(goblin__exec *x, struct goblin_slice key,
                       struct goblin_slice field)
{
    struct goblin_slice v = {NULL, 0};
    int rc = goblin_hash_get(x->st, key, field, &v);

    if (rc == 1)
        goblin__reply_slice(x, v);
    else if (rc == 0)
        goblin__reply_null(x);
    else
        goblin__reply_code(x, rc);
}

void goblin__cmd_hget(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_hget(x, argv[1], argv[2]);
}

void goblin__exec_hmget(goblin__exec *x, struct goblin_slice key,
                        const struct goblin_slice *fields, size_t n)
{
    int rc;

    if (goblin__scratch_reserve(x->sess, n) != 0) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    rc = goblin_hash_mget(x->st, key, fields, n, x->sess->scratch);
    if (rc < 0)
        goblin__reply_code(x, rc);
    else
        goblin__reply_strings(x, x->sess->scratch, n, true);
}

void goblin__cmd_hmget(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    goblin__exec_hmget(x, argv[1], argv + 2, (size_t)argc - 2);
}

void goblin__exec_hdel(goblin__exec *x, struct goblin_slice key,
                       const struct goblin_slice *fields, size_t n)
{
    int rc = goblin_hash_del(x->st, key, fields, n);

    if (rc > 0)
        goblin__notify_removed(x, GOBLIN__NOTIFY_HASH, "hdel", key);
    int_reply(x, rc);
}

void goblin__cmd_hdel(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    goblin__exec_hdel(x, argv[1], argv + 2, (size_t)argc - 2);
}

void goblin__exec_hlen(goblin__exec *x, struct goblin_slice key)
{
    int_reply(x, goblin_hash_len(x->st, key));
}

void goblin__cmd_hlen(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_hlen(x, argv[1]);
}

void goblin__exec_hexists(goblin__exec *x, struct goblin_slice key,
                          struct goblin_slice field)
{
    int_reply(x, goblin_hash_exists(x->st, key, field));
}

void goblin__cmd_hexists(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_hexists(x, argv[1], argv[2]);
}

void goblin__exec_hstrlen(goblin__exec *x, struct goblin_slice key,
                          struct goblin_slice field)
{
    int_reply(x, goblin_hash_strlen(x->st, key, field));
}

void goblin__cmd_hstrlen(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_hstrlen(x, argv[1], argv[2]);
}

enum { WANT_FIELDS = 1, WANT_VALUES = 2 };

struct pair_out {
    goblin__exec *x;
    int want;
};

static int write_pair(void *ctx, struct goblin_slice field,
                      struct goblin_slice value)
{
    struct pair_out *o = ctx;

    if (o->want & WANT_FIELDS)
        goblin__reply_slice(o->x, field);
    if (o->want & WANT_VALUES)
        goblin__reply_slice(o->x, value);
    return 0;
}

static void getall(goblin__exec *x, struct goblin_slice key, int want)
{
    struct pair_out o = {x, want};
    int64_t n = goblin_hash_len(x->st, key);

    goblin__reads_done(x);
    if (n < 0) {
        goblin__reply_code(x, (int)n);
        return;
    }
    if (want == (WANT_FIELDS | WANT_VALUES))
        goblin__reply_map(x, (size_t)n);
    else
        goblin__reply_array(x, (size_t)n);
    goblin_hash_foreach(x->st, key, write_pair, &o);
}

void goblin__exec_hgetall(goblin__exec *x, struct goblin_slice key)
{
    getall(x, key, WANT_FIELDS | WANT_VALUES);
}

void goblin__exec_hkeys(goblin__exec *x, struct goblin_slice key)
{
    getall(x, key, WANT_FIELDS);
}

void goblin__exec_hvals(goblin__exec *x, struct goblin_slice key)
{
    getall(x, key, WANT_VALUES);
}

void goblin__cmd_hgetall(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_hgetall(x, argv[1]);
}

void goblin__cmd_hkeys(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_hkeys(x, argv[1]);
}

void goblin__cmd_hvals(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_hvals(x, argv[1]);
}

void goblin__exec_hincrby(goblin__exec *x, struct goblin_slice key,
                          struct goblin_slice field, int64_t incr)
{
    int64_t result;
    int rc = goblin_hash_incrby(x->st, key, field, incr, &result);

    if (rc >= 0)
        goblin__notify(x, GOBLIN__NOTIFY_HASH, "hincrby", key);
    if (rc < 0)
        goblin__reply_code(x, rc);
    else
        goblin__reply_int(x, result);
}

void goblin__cmd_hincrby(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    int64_t incr;

    (void)argc;
    if (goblin__arg_int64(x, argv[3], &incr, NULL))
        goblin__exec_hincrby(x, argv[1], argv[2], incr);
}

/* Redis checks the increment before the key: NaN does not parse ("nan"
 * is no float to string2ld), an infinity parses and is refused. */
void goblin__exec_hincrbyfloat(goblin__exec *x, struct goblin_slice key,
                               struct goblin_slice field, long double incr)
{
    struct goblin_slice v;
    int rc;

    if (isnan(incr)) {
        goblin__reply_code(x, GOBLIN_ENOTFLOAT);
        return;
    }
    rc = isinf(incr) ? GOBLIN_EINVAL
                     : goblin_hash_incrbyfloat(x->st, key, field, incr, &v);
    if (rc >= 0)
        goblin__notify(x, GOBLIN__NOTIFY_HASH, "hincrbyfloat", key);
    if (rc == GOBLIN_EINVAL)
        goblin__reply_error(x, "ERR value is NaN or Infinity");
    else if (rc < 0)
        goblin__reply_code(x, rc);
    else
        goblin__reply_slice(x, v);
}

void goblin__cmd_hincrbyfloat(goblin__exec *x, int argc,
                              const struct goblin_slice *argv)
{
    long double incr;

    (void)argc;
    if (goblin_long_double_parse(argv[3].ptr, argv[3].len, &incr) != 0)
        goblin__reply_code(x, GOBLIN_ENOTFLOAT);
    else
        goblin__exec_hincrbyfloat(x, argv[1], argv[2], incr);
}

/* Gathers visited pairs in the session's scratch array (field, value). */
struct gather {
    goblin_session *s;
    size_t n; /* pairs */
};

static int gather_pair(void *ctx, struct goblin_slice field,
                       struct goblin_slice value)
{
    struct gather *g = ctx;

    if (goblin__scratch_reserve(g->s, 2 * g->n + 2) != 0)
        return GOBLIN_ENOMEM;
    g->s->scratch[2 * g->n] = field;
    g->s->scratch[2 * g->n + 1] = value;
    g->n++;
    return 0;
}

/* Replies n gathered pairs: as [field, value] arrays in RESP3 when
 * nested, else flat; only fields when !values. */
void goblin__reply_pairs(goblin__exec *x, size_t n, bool values, bool nested)
{
    const struct goblin_slice *p = x->sess->scratch;
    size_t i;

    nested = nested && values && x->resp == 3;
    goblin__reply_array(x, values && !nested ? 2 * n : n);
    for (i = 0; i < n; i++) {
        if (nested)
            goblin__reply_array(x, 2);
        goblin__reply_slice(x, p[2 * i]);
        if (values)
            goblin__reply_slice(x, p[2 * i + 1]);
    }
}

void goblin__exec_hrandfield(goblin__exec *x, struct goblin_slice key,
                             bool has_count, int64_t count, bool withvalues)
{
    struct gather g = {x->sess, 0};
    struct goblin_slice f;
    int64_t rc;

    if (!has_count) {
        rc = goblin_hash_randfield(x->st, key, &f, NULL);
        if (rc == 1)
            goblin__reply_slice(x, f);
        else if (rc == 0)
            goblin__reply_null(x);
        else
            goblin__reply_code(x, (int)rc);
        return;
    }
    rc = goblin_hash_randfield_count(x->st, key, count, withvalues,
                                     gather_pair, &g);
    if (rc < 0)
        goblin__reply_code(x, (int)rc);
    else
        goblin__reply_pairs(x, g.n, withvalues, true);
}

void goblin__cmd_hrandfield(goblin__exec *x, int argc,
                            const struct goblin_slice *argv)
{
    int64_t count = 0;

    if (argc == 2 || goblin__arg_rand_count(x, argc, argv, "withvalues",
                                            &count))
        goblin__exec_hrandfield(x, argv[1], argc > 2, count, argc == 4);
}

/* HSCAN's page: field, value, ... or (novalues) the fields alone. */
static void hscan_page(goblin__exec *x, struct goblin_slice key,
                       uint64_t cursor, const struct goblin_scan_options *o,
                       bool novalues)
{
    struct gather g = {x->sess, 0};
    uint64_t next = 0;
    int64_t rc = goblin_hash_scan(x->st, key, cursor, o->count, o->match,
                                  gather_pair, &g, &next);

    if (rc < 0) {
        goblin__reply_code(x, (int)rc);
        return;
    }
    if (!novalues) {
        goblin__reply_scan(x, next, x->sess->scratch, 2 * g.n);
        return;
    }
    for (size_t i = 0; i < g.n; i++)
        x->sess->scratch[i] = x->sess->scratch[2 * i];
    goblin__reply_scan(x, next, x->sess->scratch, g.n);
}

void goblin__exec_hscan(goblin__exec *x, struct goblin_slice key,
                        uint64_t cursor, const struct goblin_scan_options *o)
{
    hscan_page(x, key, cursor, o, false);
}

void goblin__exec_hscan_fields(goblin__exec *x, struct goblin_slice key,
                               uint64_t cursor,
                               const struct goblin_scan_options *o)
{
    hscan_page(x, key, cursor, o, true);
}

/* HSCAN's options: SCAN's COUNT and MATCH pairs, and Redis 7.4's
 * NOVALUES, a word alone. */
static bool hscan_options(goblin__exec *x, int argc,
                          const struct goblin_slice *argv,
                          struct goblin_scan_options *o, bool *novalues)
{
    bool known;

    for (int j = 3; j < argc;) {
        if (goblin__arg_is(argv[j], "novalues")) {
            *novalues = true;
            j++;
            continue;
        }
        if (!goblin__scan_options(x, j + 2 < argc ? j + 2 : argc, argv, j,
                                  false, o, &known))
            return false;
        j += 2;
    }
    return true;
}

void goblin__cmd_hscan(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    struct goblin_scan_options o = {{NULL, 0}, GOBLIN_TYPE_NONE, 0};
    uint64_t cursor;
    bool novalues = false;

    if (goblin__scan_cursor(x, argv[2], &cursor) &&
        goblin__scan_key(x, argv[1], GOBLIN_TYPE_HASH) &&
        hscan_options(x, argc, argv, &o, &novalues))
        hscan_page(x, argv[1], cursor, &o, novalues);
}
