/* cmd_hfe.c - hash field expiry, as Redis 7.4 has it: HEXPIRE, HPEXPIRE,
 * HEXPIREAT, HPEXPIREAT, HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME and
 * HPERSIST, with 7.4's argument order, error texts and reply codes
 * (t_hash.c: hexpireGenericCommand, httlGenericCommand, hpersistCommand).
 *
 * The type is checked before anything else, as 7.4 looks the key up
 * first. A deadline setter goes out in the write stream as HPEXPIREAT
 * with the absolute time and only the fields it set, each field it
 * deleted (a time not in the future) as an HDEL, and nothing when it
 * changed nothing, as 7.4 propagates it.
 */
#include <string.h>

#include "goblin/hash.h"
#include "goblin/keys.h"
#include "goblin/numtext.h"
#include "handlers.h"
#include "notify.h"
#include "respond.h"
#include "engine/session.h"
#include "store/store.h"
#include "stream/propagate.h"

/* Redis 7.4's HFE_MAX_ABS_TIME_MSEC: EB_EXPIRE_TIME_MAX >> 2. */
#define HFE_MAX_MS ((((int64_t)1 << 48) - 1) >> 2)

/* WRONGTYPE for a key holding something else than a hash. */
static bool hash_or_none(goblin__exec *x, struct goblin_slice key)
{
    enum goblin_type t = goblin_key_type(x->st, key);

    if (t == GOBLIN_TYPE_NONE || t == GOBLIN_TYPE_HASH)
        return true;
    goblin__reply_code(x, GOBLIN_EWRONGTYPE);
    return false;
}

/* "FIELDS numfields field ..." from argv[at - 1]: sets *n. */
static bool fields_arg(goblin__exec *x, int argc,
                       const struct goblin_slice *argv, int at,
                       const char *count_err, int64_t *n)
{
    if (at >= argc || !goblin__arg_is(argv[at - 1], "fields")) {
        goblin__reply_error(x, "ERR Mandatory argument FIELDS is missing "
                               "or not at the right position");
        return false;
    }
    if (!goblin__arg_range(x, argv[at], 1, INT64_MAX, n, count_err))
        return false;
    if (*n != (int64_t)argc - at - 1) {
        goblin__reply_error(x, "ERR The `numfields` parameter must match "
                               "the number of arguments");
        return false;
    }
    return true;
}

/* A per-field code array: on the stack when small. */
struct codes {
    int8_t local[64];
    int8_t *p;
    size_t n;
};

static bool codes_init(goblin__exec *x, struct codes *c, size_t n)
{
    c->n = n;
    c->p = n <= sizeof(c->local) ? c->local : goblin__alloc(x->eng->st, n);
    if (c->p == NULL) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return false;
    }
    return true;
}

static void codes_free(goblin__exec *x, struct codes *c)
{
    if (c->p != c->local)
        goblin__free(x->eng->st, c->p, c->n);
}

/* What the stream gets: HDEL per deleted field, then HPEXPIREAT with the
 * fields set (Redis 7.4 rewrites the command the same way). */
static void propagate_expire(goblin__exec *x, const struct goblin_slice *argv,
                             int at, const struct goblin_slice *fields,
                             const int8_t *codes, size_t n, int64_t when)
{
    char tbuf[GOBLIN_INT64_TEXT_MAX], nbuf[GOBLIN_INT64_TEXT_MAX];
    struct goblin_slice *v;
    size_t set = 0, k = 0;

    if (!x->eng->stream_on)
        return;
    goblin__propagate_none(x);
    for (size_t i = 0; i < n; i++) {
        if (codes[i] == 2) {
            struct goblin_slice d[3] = {{"HDEL", 4}, argv[1], fields[i]};

            goblin__propagate_as(x, 3, d);
        }
        set += codes[i] == 1;
    }
    if (set == 0 || goblin__scratch_reserve(x->sess, set + 6) != 0)
        return;
    v = x->sess->scratch;
    v[k++] = (struct goblin_slice){"HPEXPIREAT", 10};
    v[k++] = argv[1];
    v[k++] = (struct goblin_slice){tbuf, goblin_int64_format(tbuf, when)};
    if (at == 5)
        v[k++] = argv[3];
    v[k++] = (struct goblin_slice){"FIELDS", 6};
    v[k++] = (struct goblin_slice){nbuf, goblin_int64_format(nbuf,
                                                             (int64_t)set)};
    for (size_t i = 0; i < n; i++)
        if (codes[i] == 1)
            v[k++] = fields[i];
    goblin__propagate_as(x, (int)k, v);
}

/* hexpireGenericCommand: unit 1000 (seconds) or 1 (ms), relative to now
 * or absolute. */
static void hexpire_common(goblin__exec *x, int argc,
                           const struct goblin_slice *argv, int64_t unit,
                           bool relative)
{
    struct goblin_slice key = argv[1];
    int64_t t, base, nf;
    int flags = 0, at = 4, rc;
    struct codes c;
    size_t deleted = 0;

    if (!hash_or_none(x, key) || !goblin__arg_int64(x, argv[2], &t, NULL))
        return;
    if (t < 0) {
        goblin__reply_error(x, "ERR invalid expire time, must be >= 0");
        return;
    }
    base = relative ? goblin__now_ms(x->st) : 0;
    if ((unit == 1000 && t > HFE_MAX_MS / 1000) ||
        t * unit > HFE_MAX_MS - base) {
        goblin__reply_errorf(x, "ERR invalid expire time in '%s' command",
                             x->cmd->fullname);
        return;
    }
    t = t * unit + base;
    if (goblin__arg_is(argv[3], "nx"))
        flags = GOBLIN_EXPIRE_NX;
    else if (goblin__arg_is(argv[3], "xx"))
        flags = GOBLIN_EXPIRE_XX;
    else if (goblin__arg_is(argv[3], "gt"))
        flags = GOBLIN_EXPIRE_GT;
    else if (goblin__arg_is(argv[3], "lt"))
        flags = GOBLIN_EXPIRE_LT;
    at += flags != 0;
    if (!fields_arg(x, argc, argv, at,
                    "ERR Parameter `numFields` should be greater than 0",
                    &nf) ||
        !codes_init(x, &c, (size_t)nf))
        return;
    rc = goblin_hash_field_expire(x->st, key, argv + at + 1, (size_t)nf, t,
                                  flags, c.p);
    if (rc < 0) {
        goblin__reply_code(x, rc);
        codes_free(x, &c);
        return;
    }
    goblin__reply_array(x, c.n);
    for (size_t i = 0; i < c.n; i++) {
        goblin__reply_int(x, c.p[i]);
        deleted += c.p[i] == 2;
    }
    if (rc > 0 && goblin__notify_on(x, GOBLIN__NOTIFY_HASH |
                                           GOBLIN__NOTIFY_GENERIC)) {
        bool gone = !goblin_key_exists(x->st, key);

        goblin__notify(x, GOBLIN__NOTIFY_HASH,
                       deleted > 0 ? "hdel" : "hexpire", key);
        if (gone)
            goblin__notify(x, GOBLIN__NOTIFY_GENERIC, "del", key);
    }
    propagate_expire(x, argv, at, argv + at + 1, c.p, c.n, t);
    codes_free(x, &c);
}

void goblin__cmd_hexpire(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    hexpire_common(x, argc, argv, 1000, true);
}

void goblin__cmd_hpexpire(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    hexpire_common(x, argc, argv, 1, true);
}

void goblin__cmd_hexpireat(goblin__exec *x, int argc,
                           const struct goblin_slice *argv)
{
    hexpire_common(x, argc, argv, 1000, false);
}

void goblin__cmd_hpexpireat(goblin__exec *x, int argc,
                            const struct goblin_slice *argv)
{
    hexpire_common(x, argc, argv, 1, false);
}

/* httlGenericCommand: seconds rounded up, relative or absolute. */
static void httl_common(goblin__exec *x, int argc,
                        const struct goblin_slice *argv, bool seconds,
                        bool relative)
{
    int64_t nf, *when, now;
    int rc;

    if (!hash_or_none(x, argv[1]) ||
        !fields_arg(x, argc, argv, 3,
                    "ERR Number of fields must be a positive integer", &nf))
        return;
    when = goblin__scratch_bytes(x->sess, (size_t)nf * sizeof(*when));
    if (when == NULL) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    /* The fields live in argv, not in the scratch array. */
    rc = goblin_hash_field_deadline(x->st, argv[1], argv + 4, (size_t)nf,
                                    when);
    if (rc < 0) {
        goblin__reply_code(x, rc);
        return;
    }
    now = relative ? goblin__now_ms(x->st) : 0;
    goblin__reply_array(x, (size_t)nf);
    for (int64_t i = 0; i < nf; i++) {
        int64_t w = when[i];

        if (w >= 0)
            w = seconds ? (w + 999 - now) / 1000 : w - now;
        goblin__reply_int(x, w);
    }
}

void goblin__cmd_httl(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    httl_common(x, argc, argv, true, true);
}

void goblin__cmd_hpttl(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    httl_common(x, argc, argv, false, true);
}

void goblin__cmd_hexpiretime(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    httl_common(x, argc, argv, true, false);
}

void goblin__cmd_hpexpiretime(goblin__exec *x, int argc,
                              const struct goblin_slice *argv)
{
    httl_common(x, argc, argv, false, false);
}

void goblin__cmd_hpersist(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    struct codes c;
    int64_t nf;
    int rc;

    if (!hash_or_none(x, argv[1]) ||
        !fields_arg(x, argc, argv, 3,
                    "ERR Number of fields must be a positive integer", &nf) ||
        !codes_init(x, &c, (size_t)nf))
        return;
    rc = goblin_hash_field_persist(x->st, argv[1], argv + 4, (size_t)nf,
                                   c.p);
    if (rc < 0) {
        goblin__reply_code(x, rc);
    } else {
        goblin__reply_array(x, c.n);
        for (size_t i = 0; i < c.n; i++)
            goblin__reply_int(x, c.p[i]);
        if (rc > 0)
            goblin__notify(x, GOBLIN__NOTIFY_HASH, "hpersist", argv[1]);
    }
    codes_free(x, &c);
}
