/* test_sbe_equiv.c - SBE and RESP agree, and the ring's fast path agrees
 * with the general path. A seeded random sequence of commands over the
 * whole typed surface (strings, keys and deadlines, hashes, sorted sets,
 * lists and sets)
 * goes to four fresh engines: to one as RESP3 words fed to a session, to
 * one as typed SBE requests with native numbers fed to a session (the
 * general path: the session's input buffer and frame loop), and the same
 * bytes, one request per record, over two shared-memory rings served by
 * libgoblin's ring endpoint (SBE frames there take the fast path: stack
 * copy, dispatch by template id, reply encoded into CQ). Ring and session
 * replies must be the same bytes; RESP and SBE replies must print the
 * same (redis-cli -3 form); at the end all four stores must hold the same
 * keys, types, deadlines and values, and each ring's engine must count
 * in INFO commandstats exactly what its session twin counts (calls,
 * rejected and failed calls). RESP commands cut across ring records at
 * every offset give the replies of the whole record.
 *
 * Increments of INCRBYFLOAT and HINCRBYFLOAT are dyadic (exact in binary),
 * because over SBE they travel as doubles while RESP reads decimal text:
 * 0.1 as a double is not the decimal 0.1, and the stored text shows it.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "test_commands_util.h"

#include "goblin/ring.h"
#include "goblin/serve.h"
#include "goblin/stream.h"

#include "client/client.h"
#include "goblin/client.h"
#include "goblin/numtext.h"
#include "goblin/sbe.h"
#include "sbe/goblin_sbe_gen.h"

/* ---- one request in both encodings ---- */

struct req {
    struct goblin_slice w[96];
    size_t n;
    char text[8192];
    size_t tlen;
    uint8_t sbe[16384];
    struct goblin_sbe_writer sw;
};

static void W(struct req *q, const void *p, size_t n)
{
    assert_true(q->n < 96 && q->tlen + n <= sizeof(q->text));
    memcpy(q->text + q->tlen, p, n);
    q->w[q->n++] = (struct goblin_slice){q->text + q->tlen, n};
    q->tlen += n;
}

static void Ws(struct req *q, const char *s)
{
    W(q, s, strlen(s));
}

static void Wi(struct req *q, int64_t v)
{
    char b[GOBLIN_INT64_TEXT_MAX];

    W(q, b, goblin_int64_format(b, v));
}

static void Wd(struct req *q, double v)
{
    char b[GOBLIN_DOUBLE_TEXT_MAX];

    W(q, b, goblin_double_format(b, v));
}

/* A score bound: "(" for exclusive. */
static void Wb(struct req *q, double v, int excl)
{
    char b[GOBLIN_DOUBLE_TEXT_MAX + 1] = "(";
    size_t n = goblin_double_format(b + 1, v);

    if (excl)
        W(q, b, n + 1);
    else
        W(q, b + 1, n);
}

/* ---- random choices ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static unsigned pick(unsigned n)
{
    return (unsigned)(rnd() % n);
}

#define PICK(a) ((a)[pick(sizeof(a) / sizeof((a)[0]))])

static struct goblin_slice sl(const char *s)
{
    return (struct goblin_slice){s, strlen(s)};
}

static const char *const skeys[] = {"s0", "s1", "s2", "s3", "h0", "z0"};
static const char *const hkeys[] = {"h0", "h1", "h2", "s0", "z1"};
static const char *const zkeys[] = {"z0", "z1", "z2", "z3", "h0", "s1"};
static const char *const anykeys[] = {"s0", "s1", "h0", "h1", "z0", "z1",
                                      "z2", "nope"};
static const char *const values[] = {"", "1", "-3", "10", "abc", "x y",
                                     "9223372036854775807", "1.5", "v\x01"};
static const char *const fields[] = {"f0", "f1", "f2", "f3", "f4", "n"};
static const char *const members[] = {"m0", "m1", "m2", "m3", "m4", "m5",
                                      "a", "b", "c", "m10"};
/* NaN is RESP's "nan", which no command takes: both sides must refuse
 * it with the same text in the same place. */
static const double scores[] = {0, 1, -1, 1.5, 2.25, 3, 1e10, -7.75,
                                INFINITY, -INFINITY, 100, NAN};
static const double dyadic[] = {0.5, -1.25, 10, 3e5, 2.75, -0.125, NAN,
                                INFINITY};
static const int64_t ints[] = {0, 1, -1, 2, 5, 100, -100, 3};
static const int64_t ranks[] = {0, 1, -1, 2, -2, 5, 100, -100, INT64_MAX,
                                INT64_MIN};

static const char *const lkeys[] = {"l0", "l1", "l2", "s0", "t0"};
static const char *const tkeys[] = {"t0", "t1", "t2", "l0", "h0"};
/* Integers first, so some sets stay integer-only (Redis's intset). */
static const char *const smembers_[] = {"1", "2", "-7", "100", "3", "a", "b",
                                        "m1", "", "x y"};

static const char *s_key(void) { return PICK(skeys); }
static const char *h_key(void) { return PICK(hkeys); }
static const char *z_key(void) { return PICK(zkeys); }
static const char *a_key(void) { return PICK(anykeys); }

#define SW (&q->sw)
#define K(s) sl(s)

/* ---- strings ---- */

static void g_set(struct req *q)
{
    const char *k = s_key(), *v = PICK(values);
    unsigned flags = 0, mode = 0;
    int64_t amount = 0;

    Ws(q, "SET"), Ws(q, k), Ws(q, v);
    switch (pick(4)) {
    case 1: flags |= GOBLIN_SBE_SET_FLAGS_NX, Ws(q, "NX"); break;
    case 2: flags |= GOBLIN_SBE_SET_FLAGS_XX, Ws(q, "XX"); break;
    }
    switch (pick(6)) {
    case 1: mode = 1, amount = PICK(ints), Ws(q, "EX"), Wi(q, amount); break;
    case 2: mode = 2, amount = 500 * PICK(ints), Ws(q, "PX"), Wi(q, amount);
        break;
    case 3: mode = 3, amount = 1700000000 + PICK(ints), Ws(q, "EXAT"),
            Wi(q, amount); break;
    case 4: flags |= GOBLIN_SBE_SET_FLAGS_KEEPTTL, Ws(q, "KEEPTTL"); break;
    }
    if (pick(3) == 0)
        flags |= GOBLIN_SBE_SET_FLAGS_GET, Ws(q, "GET");
    goblin_sbe_set_encode(SW, (uint8_t)flags, (uint8_t)mode, amount, K(k),
                          K(v));
}

static void g_get(struct req *q)
{
    const char *k = a_key();

    Ws(q, "GET"), Ws(q, k);
    goblin_sbe_get_encode(SW, K(k));
}

static void g_incr(struct req *q)
{
    const char *k = s_key();
    int64_t d = pick(8) ? PICK(ints) : PICK(ranks); /* overflows too */

    switch (pick(4)) {
    case 0: Ws(q, "INCR"), Ws(q, k), goblin_sbe_incr_encode(SW, K(k)); break;
    case 1: Ws(q, "DECR"), Ws(q, k), goblin_sbe_decr_encode(SW, K(k)); break;
    case 2:
        Ws(q, "INCRBY"), Ws(q, k), Wi(q, d);
        goblin_sbe_incrby_encode(SW, d, K(k));
        break;
    default:
        Ws(q, "DECRBY"), Ws(q, k), Wi(q, d);
        goblin_sbe_decrby_encode(SW, d, K(k));
    }
}

static void g_incrbyfloat(struct req *q)
{
    const char *k = s_key();
    double d = PICK(dyadic);

    Ws(q, "INCRBYFLOAT"), Ws(q, k), Wd(q, d);
    goblin_sbe_incrbyfloat_encode(SW, d, K(k));
}

static void g_append(struct req *q)
{
    const char *k = s_key(), *v = PICK(values);

    if (pick(2)) {
        Ws(q, "APPEND"), Ws(q, k), Ws(q, v);
        goblin_sbe_append_encode(SW, K(k), K(v));
    } else {
        Ws(q, "STRLEN"), Ws(q, k);
        goblin_sbe_strlen_encode(SW, K(k));
    }
}

static void g_range(struct req *q)
{
    const char *k = s_key(), *v = PICK(values);
    int64_t a = PICK(ranks), b = PICK(ranks);

    if (pick(2)) {
        Ws(q, "GETRANGE"), Ws(q, k), Wi(q, a), Wi(q, b);
        goblin_sbe_getrange_encode(SW, a, b, K(k));
    } else {
        a = a < 0 && (pick(2) || a == INT64_MIN) ? a : (a < 0 ? -a : a);
        Ws(q, "SETRANGE"), Ws(q, k), Wi(q, a), Ws(q, v);
        goblin_sbe_setrange_encode(SW, a, K(k), K(v));
    }
}

static void g_mset(struct req *q)
{
    unsigned n = 1 + pick(3), i;
    bool nx = pick(2);
    const char *k[3], *v[3];

    Ws(q, nx ? "MSETNX" : "MSET");
    for (i = 0; i < n; i++) {
        k[i] = s_key(), v[i] = PICK(values);
        Ws(q, k[i]), Ws(q, v[i]);
    }
    if (nx) {
        goblin_sbe_msetnx_begin(SW);
        goblin_sbe_msetnx_entries_begin(SW);
        for (i = 0; i < n; i++)
            goblin_sbe_msetnx_entries_add(SW, K(k[i]), K(v[i]));
        goblin_sbe_msetnx_end(SW);
        return;
    }
    goblin_sbe_mset_begin(SW);
    goblin_sbe_mset_entries_begin(SW);
    for (i = 0; i < n; i++)
        goblin_sbe_mset_entries_add(SW, K(k[i]), K(v[i]));
    goblin_sbe_mset_end(SW);
}

static void g_mget(struct req *q)
{
    unsigned n = 1 + pick(4), i;

    Ws(q, "MGET");
    goblin_sbe_mget_begin(SW);
    goblin_sbe_mget_keys_begin(SW);
    for (i = 0; i < n; i++) {
        const char *k = a_key();

        Ws(q, k);
        goblin_sbe_mget_keys_add(SW, K(k));
    }
    goblin_sbe_mget_end(SW);
}

static void g_getx(struct req *q)
{
    const char *k = s_key(), *v = PICK(values);
    int64_t t = PICK(ints);

    switch (pick(6)) {
    case 0:
        Ws(q, "GETSET"), Ws(q, k), Ws(q, v);
        goblin_sbe_getset_encode(SW, K(k), K(v));
        break;
    case 1:
        Ws(q, "GETDEL"), Ws(q, k);
        goblin_sbe_getdel_encode(SW, K(k));
        break;
    case 2:
        Ws(q, "SETNX"), Ws(q, k), Ws(q, v);
        goblin_sbe_setnx_encode(SW, K(k), K(v));
        break;
    case 3:
        Ws(q, "SETEX"), Ws(q, k), Wi(q, t), Ws(q, v);
        goblin_sbe_setex_encode(SW, t, K(k), K(v));
        break;
    case 4:
        Ws(q, "PSETEX"), Ws(q, k), Wi(q, 700 * t), Ws(q, v);
        goblin_sbe_psetex_encode(SW, 700 * t, K(k), K(v));
        break;
    default: {
        static const char *const modes[] = {NULL, "EX", "PX", "EXAT", "PXAT",
                                            "PERSIST"};
        unsigned m = pick(6);

        Ws(q, "GETEX"), Ws(q, k);
        if (m == 3)
            t += 1700000000;
        if (m == 4)
            t = 1700000000000 + 1000 * t;
        if (m != 0)
            Ws(q, modes[m]);
        if (m >= 1 && m <= 4)
            Wi(q, t);
        goblin_sbe_getex_encode(SW, (uint8_t)m, t, K(k));
    }
    }
}

/* ---- keys and deadlines ---- */

static void g_keys_group(struct req *q)
{
    static const char *const names[] = {"DEL", "EXISTS", "UNLINK", "TOUCH"};
    unsigned which = pick(4), n = 1 + pick(3), i;
    const char *k[3];

    Ws(q, names[which]);
    for (i = 0; i < n; i++)
        k[i] = a_key(), Ws(q, k[i]);
#define GROUP(name)                                                           \
    goblin_sbe_##name##_begin(SW);                                            \
    goblin_sbe_##name##_keys_begin(SW);                                       \
    for (i = 0; i < n; i++)                                                   \
        goblin_sbe_##name##_keys_add(SW, K(k[i]));                            \
    goblin_sbe_##name##_end(SW);
    switch (which) {
    case 0: GROUP(del) break;
    case 1: GROUP(exists) break;
    case 2: GROUP(unlink) break;
    default: GROUP(touch) break;
    }
#undef GROUP
}

static void g_key_misc(struct req *q)
{
    const char *k = a_key(), *d = a_key();

    switch (pick(9)) {
    case 0: Ws(q, "TYPE"), Ws(q, k), goblin_sbe_type_encode(SW, K(k)); break;
    case 1:
        Ws(q, "RENAME"), Ws(q, k), Ws(q, d);
        goblin_sbe_rename_encode(SW, K(k), K(d));
        break;
    case 2:
        Ws(q, "RENAMENX"), Ws(q, k), Ws(q, d);
        goblin_sbe_renamenx_encode(SW, K(k), K(d));
        break;
    case 3:
        Ws(q, "PERSIST"), Ws(q, k), goblin_sbe_persist_encode(SW, K(k));
        break;
    case 4: Ws(q, "TTL"), Ws(q, k), goblin_sbe_ttl_encode(SW, K(k)); break;
    case 5: Ws(q, "PTTL"), Ws(q, k), goblin_sbe_pttl_encode(SW, K(k)); break;
    case 6:
        Ws(q, "EXPIRETIME"), Ws(q, k);
        goblin_sbe_expiretime_encode(SW, K(k));
        break;
    case 7:
        Ws(q, "PEXPIRETIME"), Ws(q, k);
        goblin_sbe_pexpiretime_encode(SW, K(k));
        break;
    default: Ws(q, "DBSIZE"), goblin_sbe_dbsize_encode(SW); break;
    }
}

static void g_expire(struct req *q)
{
    static const char *const conds[] = {NULL, "NX", "XX", "GT", "LT"};
    const char *k = a_key();
    unsigned which = pick(4), c = pick(5);
    int64_t t = PICK(ints) * (which == 1 ? 1000 : 1);

    if (which == 2)
        t += 1700000000;
    if (which == 3)
        t = 1700000000000 + 1000 * t;
    Ws(q, which == 0 ? "EXPIRE" : which == 1 ? "PEXPIRE"
          : which == 2 ? "EXPIREAT" : "PEXPIREAT");
    Ws(q, k), Wi(q, t);
    if (c != 0)
        Ws(q, conds[c]);
    switch (which) {
    case 0: goblin_sbe_expire_encode(SW, t, (uint8_t)c, K(k)); break;
    case 1: goblin_sbe_pexpire_encode(SW, t, (uint8_t)c, K(k)); break;
    case 2: goblin_sbe_expireat_encode(SW, t, (uint8_t)c, K(k)); break;
    default: goblin_sbe_pexpireat_encode(SW, t, (uint8_t)c, K(k)); break;
    }
}

static void g_iterate(struct req *q)
{
    static const char *const pats[] = {"*", "s*", "?0", "z[0-2]", "h1",
                                       "nomatch"};
    static const char *const types[] = {"string", "hash", "zset", "list"};
    const char *p = PICK(pats), *t = PICK(types);
    unsigned flags = 0;
    int64_t count = 0;

    switch (pick(3)) {
    case 0: Ws(q, "KEYS"), Ws(q, p), goblin_sbe_keys_encode(SW, K(p)); return;
    case 1: Ws(q, "RANDOMKEY"), goblin_sbe_randomkey_encode(SW); return;
    }
    Ws(q, "SCAN"), Ws(q, "0");
    if (pick(2))
        flags |= GOBLIN_SBE_SCAN_FLAGS_HAS_MATCH, Ws(q, "MATCH"), Ws(q, p);
    if (pick(2)) {
        count = PICK(ints);
        flags |= GOBLIN_SBE_SCAN_FLAGS_HAS_COUNT, Ws(q, "COUNT");
        Wi(q, count);
    }
    if (pick(3) == 0)
        flags |= GOBLIN_SBE_SCAN_FLAGS_HAS_TYPE, Ws(q, "TYPE"), Ws(q, t);
    goblin_sbe_scan_encode(SW, 0, count, (uint8_t)flags, K(p), K(t));
}

/* ---- hashes ---- */

static void g_hset(struct req *q)
{
    const char *k = h_key(), *f[3], *v[3];
    unsigned n = 1 + pick(3), i, which = pick(3);

    Ws(q, which == 0 ? "HSET" : which == 1 ? "HMSET" : "HSETNX"), Ws(q, k);
    if (which == 2)
        n = 1;
    for (i = 0; i < n; i++) {
        f[i] = PICK(fields), v[i] = PICK(values);
        Ws(q, f[i]), Ws(q, v[i]);
    }
    if (which == 2) {
        goblin_sbe_hsetnx_encode(SW, K(k), K(f[0]), K(v[0]));
    } else if (which == 0) {
        goblin_sbe_hset_begin(SW);
        goblin_sbe_hset_entries_begin(SW);
        for (i = 0; i < n; i++)
            goblin_sbe_hset_entries_add(SW, K(f[i]), K(v[i]));
        goblin_sbe_hset_end(SW, K(k));
    } else {
        goblin_sbe_hmset_begin(SW);
        goblin_sbe_hmset_entries_begin(SW);
        for (i = 0; i < n; i++)
            goblin_sbe_hmset_entries_add(SW, K(f[i]), K(v[i]));
        goblin_sbe_hmset_end(SW, K(k));
    }
}

static void g_hfields(struct req *q)
{
    const char *k = h_key(), *f[3];
    unsigned n = 1 + pick(3), i;
    bool del = pick(2);

    Ws(q, del ? "HDEL" : "HMGET"), Ws(q, k);
    for (i = 0; i < n; i++)
        f[i] = PICK(fields), Ws(q, f[i]);
    if (del) {
        goblin_sbe_hdel_begin(SW);
        goblin_sbe_hdel_fields_begin(SW);
        for (i = 0; i < n; i++)
            goblin_sbe_hdel_fields_add(SW, K(f[i]));
        goblin_sbe_hdel_end(SW, K(k));
        return;
    }
    goblin_sbe_hmget_begin(SW);
    goblin_sbe_hmget_fields_begin(SW);
    for (i = 0; i < n; i++)
        goblin_sbe_hmget_fields_add(SW, K(f[i]));
    goblin_sbe_hmget_end(SW, K(k));
}

static void g_hread(struct req *q)
{
    const char *k = h_key(), *f = PICK(fields);

    switch (pick(8)) {
    case 0:
        Ws(q, "HGET"), Ws(q, k), Ws(q, f);
        goblin_sbe_hget_encode(SW, K(k), K(f));
        break;
    case 1: Ws(q, "HLEN"), Ws(q, k), goblin_sbe_hlen_encode(SW, K(k)); break;
    case 2:
        Ws(q, "HSTRLEN"), Ws(q, k), Ws(q, f);
        goblin_sbe_hstrlen_encode(SW, K(k), K(f));
        break;
    case 3:
        Ws(q, "HEXISTS"), Ws(q, k), Ws(q, f);
        goblin_sbe_hexists_encode(SW, K(k), K(f));
        break;
    case 4: Ws(q, "HKEYS"), Ws(q, k), goblin_sbe_hkeys_encode(SW, K(k)); break;
    case 5: Ws(q, "HVALS"), Ws(q, k), goblin_sbe_hvals_encode(SW, K(k)); break;
    case 6:
        Ws(q, "HGETALL"), Ws(q, k);
        goblin_sbe_hgetall_encode(SW, K(k));
        break;
    default:
        Ws(q, "HSCAN"), Ws(q, k), Ws(q, "0");
        goblin_sbe_hscan_encode(SW, 0, 0, 0, K(k), K(""));
    }
}

static void g_hincr(struct req *q)
{
    const char *k = h_key(), *f = PICK(fields);
    int64_t i = pick(8) ? PICK(ints) : PICK(ranks); /* overflows too */
    double d = PICK(dyadic);

    if (pick(2)) {
        Ws(q, "HINCRBY"), Ws(q, k), Ws(q, f), Wi(q, i);
        goblin_sbe_hincrby_encode(SW, i, K(k), K(f));
    } else {
        Ws(q, "HINCRBYFLOAT"), Ws(q, k), Ws(q, f), Wd(q, d);
        goblin_sbe_hincrbyfloat_encode(SW, d, K(k), K(f));
    }
}

static void g_hrandfield(struct req *q)
{
    const char *k = h_key();
    int64_t count = PICK(ranks);
    unsigned flags = 0;

    Ws(q, "HRANDFIELD"), Ws(q, k);
    if (pick(3)) {
        flags |= GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT;
        Wi(q, count);
        if (pick(2))
            flags |= GOBLIN_SBE_COUNT_FLAGS_WITH_SCORES, Ws(q, "WITHVALUES");
    }
    goblin_sbe_hrandfield_encode(SW, count, (uint8_t)flags, K(k));
}

/* ---- sorted sets ---- */

static void g_zadd(struct req *q)
{
    static const char *const opt[] = {"NX", "XX", "GT", "LT", "CH", "INCR"};
    const char *k = z_key(), *m[4];
    double s[4];
    unsigned n = 1 + pick(4), flags = 0, i;

    if (pick(3) == 0)
        flags = 1u << pick(6);
    if (pick(4) == 0)
        flags |= 1u << pick(6);
    if (flags & GOBLIN_SBE_ZADD_FLAGS_INCR && pick(4))
        n = 1;
    Ws(q, "ZADD"), Ws(q, k);
    for (i = 0; i < 6; i++)
        if (flags & (1u << i))
            Ws(q, opt[i]);
    for (i = 0; i < n; i++) {
        s[i] = PICK(scores), m[i] = PICK(members);
        Wd(q, s[i]), Ws(q, m[i]);
    }
    goblin_sbe_zadd_begin(SW, (uint8_t)flags);
    goblin_sbe_zadd_members_begin(SW);
    for (i = 0; i < n; i++)
        goblin_sbe_zadd_members_add(SW, s[i], K(m[i]));
    goblin_sbe_zadd_end(SW, K(k));
}

static void g_zread(struct req *q)
{
    const char *k = z_key(), *m = PICK(members);
    double d = PICK(dyadic);

    switch (pick(6)) {
    case 0:
        Ws(q, "ZINCRBY"), Ws(q, k), Wd(q, d), Ws(q, m);
        goblin_sbe_zincrby_encode(SW, d, K(k), K(m));
        break;
    case 1:
        Ws(q, "ZSCORE"), Ws(q, k), Ws(q, m);
        goblin_sbe_zscore_encode(SW, K(k), K(m));
        break;
    case 2:
        Ws(q, "ZRANK"), Ws(q, k), Ws(q, m);
        goblin_sbe_zrank_encode(SW, K(k), K(m));
        break;
    case 3:
        Ws(q, "ZREVRANK"), Ws(q, k), Ws(q, m);
        goblin_sbe_zrevrank_encode(SW, K(k), K(m));
        break;
    case 4: Ws(q, "ZCARD"), Ws(q, k), goblin_sbe_zcard_encode(SW, K(k)); break;
    default:
        Ws(q, "ZSCAN"), Ws(q, k), Ws(q, "0");
        goblin_sbe_zscan_encode(SW, 0, 0, 0, K(k), K(""));
    }
}

static void g_zmembers(struct req *q)
{
    const char *k = z_key(), *m[3];
    unsigned n = 1 + pick(3), i;
    bool rem = pick(2);

    Ws(q, rem ? "ZREM" : "ZMSCORE"), Ws(q, k);
    for (i = 0; i < n; i++)
        m[i] = PICK(members), Ws(q, m[i]);
    if (rem) {
        goblin_sbe_zrem_begin(SW);
        goblin_sbe_zrem_members_begin(SW);
        for (i = 0; i < n; i++)
            goblin_sbe_zrem_members_add(SW, K(m[i]));
        goblin_sbe_zrem_end(SW, K(k));
        return;
    }
    goblin_sbe_zmscore_begin(SW);
    goblin_sbe_zmscore_members_begin(SW);
    for (i = 0; i < n; i++)
        goblin_sbe_zmscore_members_add(SW, K(m[i]));
    goblin_sbe_zmscore_end(SW, K(k));
}

struct lex {
    unsigned kind; /* the schema's LexBoundKind */
    const char *m;
};

static struct lex lex_bound(void)
{
    struct lex l = {pick(4), PICK(members)};

    return l;
}

static void Wlex(struct req *q, struct lex l)
{
    char b[32];

    if (l.kind >= 2) {
        Ws(q, l.kind == 2 ? "-" : "+");
        return;
    }
    snprintf(b, sizeof(b), "%c%s", l.kind == 0 ? '[' : '(', l.m);
    Ws(q, b);
}

static void g_zcount(struct req *q)
{
    const char *k = z_key();
    double lo = PICK(scores), hi = PICK(scores);
    unsigned f = pick(4);
    struct lex a = lex_bound(), b = lex_bound();

    if (pick(2)) {
        Ws(q, "ZCOUNT"), Ws(q, k), Wb(q, lo, f & 1), Wb(q, hi, f & 2);
        goblin_sbe_zcount_encode(SW, lo, hi, (uint8_t)f, K(k));
        return;
    }
    Ws(q, "ZLEXCOUNT"), Ws(q, k), Wlex(q, a), Wlex(q, b);
    goblin_sbe_zlexcount_encode(SW, (uint8_t)a.kind, (uint8_t)b.kind, K(k),
                                K(a.m), K(b.m));
}

static void g_zrange_rank(struct req *q)
{
    const char *k = z_key();
    int64_t a = PICK(ranks), b = PICK(ranks);
    bool rev = pick(2), ws = pick(2);

    Ws(q, "ZRANGE"), Ws(q, k), Wi(q, a), Wi(q, b);
    if (rev)
        Ws(q, "REV");
    if (ws)
        Ws(q, "WITHSCORES");
    goblin_sbe_zrange_encode(SW, a, b, ws, rev, K(k));
}

/* LIMIT offset count, maybe. */
static unsigned limit(struct req *q, int64_t *off, int64_t *cnt)
{
    if (pick(2))
        return 0;
    *off = PICK(ranks);
    *cnt = PICK(ranks);
    Ws(q, "LIMIT"), Wi(q, *off), Wi(q, *cnt);
    return GOBLIN_SBE_RANGE_FLAGS_HAS_LIMIT;
}

static void g_zrange_score(struct req *q)
{
    const char *k = z_key(), *d = z_key();
    double lo = PICK(scores), hi = PICK(scores);
    unsigned f = pick(4), store = pick(4) == 0;
    int64_t off = 0, cnt = 0;
    bool rev = pick(2);

    Ws(q, store ? "ZRANGESTORE" : "ZRANGE");
    if (store)
        Ws(q, d);
    Ws(q, k);
    if (rev)
        Wb(q, hi, f & 2), Wb(q, lo, f & 1);
    else
        Wb(q, lo, f & 1), Wb(q, hi, f & 2);
    Ws(q, "BYSCORE");
    if (rev)
        Ws(q, "REV"), f |= GOBLIN_SBE_RANGE_FLAGS_REV;
    f |= limit(q, &off, &cnt);
    if (!store && pick(2))
        Ws(q, "WITHSCORES"), f |= GOBLIN_SBE_RANGE_FLAGS_WITH_SCORES;
    if (store)
        goblin_sbe_zrangestorebyscore_encode(SW, lo, hi, off, cnt,
                                             (uint8_t)f, K(d), K(k));
    else
        goblin_sbe_zrangebyscore_encode(SW, lo, hi, off, cnt, (uint8_t)f,
                                        K(k));
}

static void g_zrange_lex(struct req *q)
{
    const char *k = z_key(), *d = z_key();
    struct lex a = lex_bound(), b = lex_bound();
    unsigned f = 0, store = pick(4) == 0;
    int64_t off = 0, cnt = 0;
    bool rev = pick(2);

    Ws(q, store ? "ZRANGESTORE" : "ZRANGE");
    if (store)
        Ws(q, d);
    Ws(q, k);
    if (rev)
        Wlex(q, b), Wlex(q, a);
    else
        Wlex(q, a), Wlex(q, b);
    Ws(q, "BYLEX");
    if (rev)
        Ws(q, "REV"), f |= GOBLIN_SBE_RANGE_FLAGS_REV;
    f |= limit(q, &off, &cnt);
    if (store)
        goblin_sbe_zrangestorebylex_encode(SW, off, cnt, (uint8_t)a.kind,
                                           (uint8_t)b.kind, (uint8_t)f, K(d),
                                           K(k), K(a.m), K(b.m));
    else
        goblin_sbe_zrangebylex_encode(SW, off, cnt, (uint8_t)a.kind,
                                      (uint8_t)b.kind, (uint8_t)f, K(k),
                                      K(a.m), K(b.m));
}

static void g_zrangestore_rank(struct req *q)
{
    const char *k = z_key(), *d = z_key();
    int64_t a = PICK(ranks), b = PICK(ranks);
    bool rev = pick(2);

    Ws(q, "ZRANGESTORE"), Ws(q, d), Ws(q, k), Wi(q, a), Wi(q, b);
    if (rev)
        Ws(q, "REV");
    goblin_sbe_zrangestore_encode(SW, a, b,
                                  rev ? GOBLIN_SBE_RANGE_FLAGS_REV : 0, K(d),
                                  K(k));
}

static void g_zremrange(struct req *q)
{
    const char *k = z_key();
    int64_t a = PICK(ranks), b = PICK(ranks);
    double lo = PICK(scores), hi = PICK(scores);
    struct lex la = lex_bound(), lb = lex_bound();
    unsigned f = pick(4);

    switch (pick(3)) {
    case 0:
        Ws(q, "ZREMRANGEBYRANK"), Ws(q, k), Wi(q, a), Wi(q, b);
        goblin_sbe_zremrangebyrank_encode(SW, a, b, K(k));
        break;
    case 1:
        Ws(q, "ZREMRANGEBYSCORE"), Ws(q, k), Wb(q, lo, f & 1),
            Wb(q, hi, f & 2);
        goblin_sbe_zremrangebyscore_encode(SW, lo, hi, (uint8_t)f, K(k));
        break;
    default:
        Ws(q, "ZREMRANGEBYLEX"), Ws(q, k), Wlex(q, la), Wlex(q, lb);
        goblin_sbe_zremrangebylex_encode(SW, (uint8_t)la.kind,
                                         (uint8_t)lb.kind, K(k), K(la.m),
                                         K(lb.m));
    }
}

static void g_zpop(struct req *q)
{
    const char *k = z_key();
    int64_t count = PICK(ranks) % 4;
    bool max = pick(2);

    count = count < 0 && pick(2) ? -count : count;
    Ws(q, max ? "ZPOPMAX" : "ZPOPMIN"), Ws(q, k), Wi(q, count);
    if (max)
        goblin_sbe_zpopmax_encode(SW, count, GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT,
                                  K(k));
    else
        goblin_sbe_zpopmin_encode(SW, count, GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT,
                                  K(k));
}

static void g_zrandmember(struct req *q)
{
    const char *k = z_key();
    int64_t count = PICK(ranks);
    unsigned flags = 0;

    Ws(q, "ZRANDMEMBER"), Ws(q, k);
    if (pick(3)) {
        flags |= GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT;
        Wi(q, count);
        if (pick(2))
            flags |= GOBLIN_SBE_COUNT_FLAGS_WITH_SCORES, Ws(q, "WITHSCORES");
    }
    goblin_sbe_zrandmember_encode(SW, count, (uint8_t)flags, K(k));
}

static void g_zcombine(struct req *q)
{
    static const char *const ops[] = {"ZUNION", "ZINTER", "ZDIFF"};
    static const char *const aggs[] = {"SUM", "MIN", "MAX"};
    unsigned op = pick(3), n = 1 + pick(3), i, agg = pick(3), flags = 0;
    bool store = pick(2), weights = op != 2 && pick(2);
    const char *k[3], *d = z_key();
    double w[3];

    if (store) {
        char name[16];

        snprintf(name, sizeof(name), "%sSTORE", ops[op]);
        Ws(q, name), Ws(q, d);
    } else {
        Ws(q, ops[op]);
    }
    Wi(q, n);
    for (i = 0; i < n; i++)
        k[i] = z_key(), Ws(q, k[i]), w[i] = PICK(dyadic);
    if (weights)
        for (Ws(q, "WEIGHTS"), i = 0; i < n; i++)
            Wd(q, w[i]);
    if (op != 2 && agg != 0)
        Ws(q, "AGGREGATE"), Ws(q, aggs[agg]);
    if (!store && pick(2))
        Ws(q, "WITHSCORES"), flags |= GOBLIN_SBE_SET_OP_FLAGS_WITH_SCORES;
    if (weights)
        flags |= GOBLIN_SBE_SET_OP_FLAGS_HAS_WEIGHTS;
    agg = op == 2 ? 0 : agg;
#define WEIGHTED(name)                                                        \
    goblin_sbe_##name##_begin(SW, (uint8_t)agg, (uint8_t)flags);              \
    goblin_sbe_##name##_keys_begin(SW);                                       \
    for (i = 0; i < n; i++)                                                   \
        goblin_sbe_##name##_keys_add(SW, w[i], K(k[i]));
#define PLAIN(name, ...)                                                      \
    goblin_sbe_##name##_begin(SW, ##__VA_ARGS__);                             \
    goblin_sbe_##name##_keys_begin(SW);                                       \
    for (i = 0; i < n; i++)                                                   \
        goblin_sbe_##name##_keys_add(SW, K(k[i]));
    switch (op * 2 + store) {
    case 0: WEIGHTED(zunion) goblin_sbe_zunion_end(SW); break;
    case 1: WEIGHTED(zunionstore) goblin_sbe_zunionstore_end(SW, K(d)); break;
    case 2: WEIGHTED(zinter) goblin_sbe_zinter_end(SW); break;
    case 3: WEIGHTED(zinterstore) goblin_sbe_zinterstore_end(SW, K(d)); break;
    case 4: PLAIN(zdiff, (uint8_t)flags) goblin_sbe_zdiff_end(SW); break;
    default: PLAIN(zdiffstore) goblin_sbe_zdiffstore_end(SW, K(d)); break;
    }
#undef WEIGHTED
#undef PLAIN
}

static void g_zintercard(struct req *q)
{
    unsigned n = 1 + pick(3), i;
    int64_t lim = PICK(ints);
    const char *k[3];

    Ws(q, "ZINTERCARD"), Wi(q, n);
    for (i = 0; i < n; i++)
        k[i] = z_key(), Ws(q, k[i]);
    if (lim != 0)
        Ws(q, "LIMIT"), Wi(q, lim);
    goblin_sbe_zintercard_begin(SW, lim);
    goblin_sbe_zintercard_keys_begin(SW);
    for (i = 0; i < n; i++)
        goblin_sbe_zintercard_keys_add(SW, K(k[i]));
    goblin_sbe_zintercard_end(SW);
}

/* ---- lists ---- */

static void g_lpush(struct req *q)
{
    const char *k = PICK(lkeys), *e[4];
    unsigned n = 1 + pick(4), i;
    bool tail = pick(2);

    Ws(q, tail ? "RPUSH" : "LPUSH"), Ws(q, k);
    for (i = 0; i < n; i++)
        e[i] = PICK(values), Ws(q, e[i]);
#define PUSH(name)                                                            \
    goblin_sbe_##name##_begin(SW);                                            \
    goblin_sbe_##name##_elements_begin(SW);                                   \
    for (i = 0; i < n; i++)                                                   \
        goblin_sbe_##name##_elements_add(SW, K(e[i]));                        \
    goblin_sbe_##name##_end(SW, K(k));
    if (tail) {
        PUSH(rpush)
    } else {
        PUSH(lpush)
    }
#undef PUSH
}

static void g_lpop(struct req *q)
{
    const char *k = PICK(lkeys);
    bool tail = pick(2), has = pick(3) != 0;
    int64_t count = pick(8) ? PICK(ints) : PICK(ranks);
    unsigned f = has ? GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT : 0;

    if (count < 0 && count != INT64_MIN && pick(2))
        count = -count; /* mostly counts RESP takes; a few it refuses */
    Ws(q, tail ? "RPOP" : "LPOP"), Ws(q, k);
    if (has)
        Wi(q, count);
    if (tail)
        goblin_sbe_rpop_encode(SW, count, (uint8_t)f, K(k));
    else
        goblin_sbe_lpop_encode(SW, count, (uint8_t)f, K(k));
}

static void g_lread(struct req *q)
{
    const char *k = PICK(lkeys);
    int64_t a = pick(3) ? PICK(ints) : PICK(ranks);
    int64_t b = pick(3) ? PICK(ints) : PICK(ranks);

    if (pick(3) == 0) {
        Ws(q, "LLEN"), Ws(q, k);
        goblin_sbe_llen_encode(SW, K(k));
        return;
    }
    Ws(q, "LRANGE"), Ws(q, k), Wi(q, a), Wi(q, b);
    goblin_sbe_lrange_encode(SW, a, b, K(k));
}

/* ---- sets ---- */

static void g_sadd(struct req *q)
{
    const char *k = PICK(tkeys), *m[4];
    unsigned n = 1 + pick(4), i;
    bool rem = pick(3) == 0;

    Ws(q, rem ? "SREM" : "SADD"), Ws(q, k);
    for (i = 0; i < n; i++)
        m[i] = pick(2) ? smembers_[pick(5)] : PICK(smembers_), Ws(q, m[i]);
#define MEMBERS(name)                                                         \
    goblin_sbe_##name##_begin(SW);                                            \
    goblin_sbe_##name##_members_begin(SW);                                    \
    for (i = 0; i < n; i++)                                                   \
        goblin_sbe_##name##_members_add(SW, K(m[i]));                         \
    goblin_sbe_##name##_end(SW, K(k));
    if (rem) {
        MEMBERS(srem)
    } else {
        MEMBERS(sadd)
    }
#undef MEMBERS
}

static void g_sread(struct req *q)
{
    const char *k = PICK(tkeys), *m = PICK(smembers_);

    switch (pick(3)) {
    case 0:
        Ws(q, "SISMEMBER"), Ws(q, k), Ws(q, m);
        goblin_sbe_sismember_encode(SW, K(k), K(m));
        break;
    case 1:
        Ws(q, "SMEMBERS"), Ws(q, k);
        goblin_sbe_smembers_encode(SW, K(k));
        break;
    default: Ws(q, "SCARD"), Ws(q, k), goblin_sbe_scard_encode(SW, K(k));
    }
}

/* ---- the connection and the whole keyspace ---- */

static void g_server(struct req *q)
{
    static const char *const modes[] = {NULL, "SYNC", "ASYNC"};
    const char *v = PICK(values);
    unsigned m = pick(3);

    switch (pick(40)) {
    case 0: /* rare: the store empties */
        Ws(q, "FLUSHDB");
        if (m != 0)
            Ws(q, modes[m]);
        goblin_sbe_flushdb_encode(SW, (uint8_t)m);
        return;
    case 1:
        Ws(q, "FLUSHALL");
        if (m != 0)
            Ws(q, modes[m]);
        goblin_sbe_flushall_encode(SW, (uint8_t)m);
        return;
    case 2:
    case 3: { /* nobody subscribes: the reply is 0 on both sides */
        const char *ch = PICK(tkeys);

        Ws(q, "PUBLISH"), Ws(q, ch), Ws(q, v);
        goblin_sbe_publish_encode(SW, K(ch), K(v));
        return;
    }
    }
    if (pick(2)) {
        Ws(q, "PING"), goblin_sbe_ping_encode(SW);
    } else {
        Ws(q, "ECHO"), Ws(q, v), goblin_sbe_echo_encode(SW, K(v));
    }
}

/* Large encodings: a hash or sorted set grown past the compact limits
 * (128 entries, 64-byte values) with many entries or one long value. */
static void g_big(struct req *q)
{
    static const char *const hk[] = {"h1", "h2"}, *const zk[] = {"z2", "z3"};
    static char names[40][16];
    char longv[100];
    const char *k;
    unsigned n = 40, i, base = pick(5) * 40;
    bool hash = pick(2), one_long = pick(4) == 0;

    memset(longv, 'L', sizeof(longv) - 1);
    longv[sizeof(longv) - 1] = '\0';
    if (one_long)
        n = 1;
    for (i = 0; i < n; i++)
        snprintf(names[i], sizeof(names[i]), "big%u", base + i);
    k = hash ? PICK(hk) : PICK(zk);
    Ws(q, hash ? "HSET" : "ZADD"), Ws(q, k);
    if (hash) {
        goblin_sbe_hset_begin(SW);
        goblin_sbe_hset_entries_begin(SW);
        for (i = 0; i < n; i++) {
            const char *v = one_long ? longv : PICK(values);

            Ws(q, names[i]), Ws(q, v);
            goblin_sbe_hset_entries_add(SW, K(names[i]), K(v));
        }
        goblin_sbe_hset_end(SW, K(k));
        return;
    }
    goblin_sbe_zadd_begin(SW, 0);
    goblin_sbe_zadd_members_begin(SW);
    for (i = 0; i < n; i++) {
        const char *m = one_long ? longv : names[i];
        double sc = (double)(base + i) / 4;

        Wd(q, sc), Ws(q, m);
        goblin_sbe_zadd_members_add(SW, sc, K(m));
    }
    goblin_sbe_zadd_end(SW, K(k));
}

/* ---- running both sides ---- */

static void (*const gens[])(struct req *) = {
    g_set, g_set, g_get, g_incr, g_incrbyfloat, g_append, g_range, g_mset,
    g_mget, g_getx, g_keys_group, g_key_misc, g_expire, g_iterate, g_hset,
    g_hset, g_hfields, g_hread, g_hread, g_hincr, g_hrandfield, g_zadd,
    g_zadd, g_zadd, g_zread, g_zread, g_zmembers, g_zcount, g_zrange_rank,
    g_zrange_score, g_zrange_lex, g_zrangestore_rank, g_zremrange, g_zpop,
    g_zrandmember, g_zcombine, g_zintercard, g_server, g_big, g_lpush,
    g_lpush, g_lpop, g_lread, g_sadd, g_sadd, g_sread,
};

/* Templates sent typed so far, to check every typed request ran. */
#define TEMPLATE_SLOTS 256
static bool sent[TEMPLATE_SLOTS];

static void put_bytes(struct goblin_buf *b, const void *p, size_t n)
{
    assert_int_equal(goblin_buf_append(b, p, n), 0);
}

/* An engine behind a ring endpoint, and the ring's client side, both
 * stepped by the test's thread once the handshake is done. */
struct ringside {
    struct cfix *f;
    goblin_ring_endpoint *ep;
    goblin_ring *cli;
    atomic_bool up;
    char path[64];
    struct goblin_buf got; /* the replies of the last request */
};

struct pair {
    struct cfix *resp, *sbe;
    struct ringside rresp, rsbe; /* NULL ep: no shared memory here */
    goblin_resp_reader *reader;
    struct goblin__sbe_tree tree;
    struct goblin_buf in, a, b;
    struct goblin_buf sa, sb;   /* write streams, while run_seed keeps them */
    struct goblin_buf rsa, rsb; /* the rings' */
    struct goblin_buf ma, mb;   /* the rings' monitor lines of a step */
    goblin_session *mon[4];     /* MONITORs: RESP, SBE, and their rings */
};

static void *pump(void *arg)
{
    struct ringside *r = arg;

    while (!atomic_load(&r->up))
        goblin_ring_endpoint_step(r->ep);
    return NULL;
}

/* Sends one record and collects every reply byte it produced (the
 * endpoint is stepped until it holds nothing back). */
static const struct goblin_buf *ring_round(struct ringside *r,
                                           const void *p, size_t n)
{
    struct goblin_slice rec;

    r->got.len = 0;
    assert_true(n <= goblin_ring_max_record(r->cli));
    assert_int_equal(goblin_ring_publish(r->cli, p, (uint32_t)n), 0);
    do {
        goblin_ring_endpoint_step(r->ep);
        while (goblin_ring_peek(r->cli, &rec) == GOBLIN_RING_RECORD)
            put_bytes(&r->got, rec.ptr, rec.len);
        goblin_ring_release(r->cli);
    } while (goblin_ring_endpoint_full(r->ep));
    return &r->got;
}

static int ring_open(struct ringside *r, const char *tag)
{
    struct goblin_ring_endpoint_config cfg = {0};
    struct goblin_ring_config ring = {0};
    pthread_t th;
    void *f = NULL;

    if (cfix_setup(&f) != 0)
        return -1;
    r->f = f;
    snprintf(r->path, sizeof(r->path), "/dev/shm/goblin-equiv-%s-%d", tag,
             (int)getpid());
    cfg.engine = r->f->eng;
    cfg.path = r->path;
    ring.sq_size = ring.cq_size = 65536;
    cfg.ring = &ring;
    if (goblin_ring_endpoint_open(&cfg, &r->ep) != 0) {
        r->ep = NULL;
        return 0;
    }
    atomic_store(&r->up, false);
    pthread_create(&th, NULL, pump, r);
    if (goblin_ring_open(r->path, NULL, &r->cli) != 0)
        return -1;
    atomic_store(&r->up, true);
    pthread_join(th, NULL);
    return 0;
}

static void ring_close(struct ringside *r)
{
    void *f = r->f;

    goblin_ring_close(r->cli);
    goblin_ring_endpoint_close(r->ep);
    goblin_buf_free(&r->got);
    cfix_teardown(&f);
}

/* The ring side's bytes must be the session side's. */
static void same_bytes(const char *what, const void *want, size_t n,
                       const struct goblin_buf *got)
{
    if (got->len != n || memcmp(got->data, want, n) != 0)
        fail_msg("%s over the ring differs from the session's reply:\n"
                 "session: %zu bytes, ring: %zu bytes", what, n, got->len);
}

/* All the output of s, consumed. */
static const char *drain(goblin_session *s, size_t *len)
{
    static char buf[1 << 20];
    const void *p = goblin_session_output(s, len);

    assert_true(*len <= sizeof(buf));
    memcpy(buf, p, *len);
    goblin_session_output_consume(s, *len);
    return buf;
}

static void resp_side(struct pair *p, const struct req *q)
{
    const struct goblin_resp_value *v;
    const char *out;
    size_t len;

    p->in.len = 0;
    assert_int_equal(goblin_resp_command_write(&p->in, q->n, q->w), 0);
    assert_int_equal(goblin_session_feed(p->resp->s, p->in.data, p->in.len),
                     0);
    out = drain(p->resp->s, &len);
    if (p->rresp.ep != NULL)
        same_bytes("RESP", out, len,
                   ring_round(&p->rresp, p->in.data, p->in.len));
    assert_int_equal(goblin_resp_reply_parse(p->reader, out, len, &v),
                     (int64_t)len);
    assert_int_equal(goblin_client_format_reply(v, 0, &p->a), 0);
}

/* The request as typed SBE, or its words as an Argv message. */
static void sbe_side(struct pair *p, struct req *q, bool as_argv)
{
    static uint8_t argv_buf[16384];
    struct goblin_sbe_writer w;
    const struct goblin_resp_value *v;
    const uint8_t *out, *msg = q->sbe;
    size_t len, n = q->sw.pos, i;

    if (as_argv) {
        goblin_sbe_writer_init(&w, argv_buf, sizeof(argv_buf), true);
        goblin_sbe_argv_begin(&w);
        goblin_sbe_argv_args_begin(&w);
        for (i = 0; i < q->n; i++)
            goblin_sbe_argv_args_add(&w, q->w[i]);
        assert_true(goblin_sbe_argv_end(&w) > 0);
        msg = argv_buf;
        n = w.pos;
    }
    assert_true(n > 0);
    assert_int_equal(goblin_session_feed(p->sbe->s, msg, n), 0);
    out = (const uint8_t *)drain(p->sbe->s, &len);
    if (p->rsbe.ep != NULL)
        same_bytes("SBE", out, len, ring_round(&p->rsbe, msg, n));
    assert_true(len >= 4 && goblin_sbe_rd_u32(out) == len - 4);
    assert_int_equal(goblin__sbe_tree_build(&p->tree, out + 4, len - 4, &v),
                     0);
    assert_int_equal(goblin_client_format_reply(v, 0, &p->b), 0);
}

static void fail_with(const struct req *q, const struct pair *p,
                      unsigned step)
{
    char words[2048];
    size_t i, n = 0;

    for (i = 0; i < q->n && n < sizeof(words) - 64; i++)
        n += (size_t)snprintf(words + n, sizeof(words) - n, "%.*s ",
                              (int)(q->w[i].len < 40 ? q->w[i].len : 40),
                              (const char *)q->w[i].ptr);
    fail_msg("step %u: %s\nRESP3:\n%.*s\nSBE:\n%.*s", step, words,
             (int)p->a.len, p->a.data, (int)p->b.len, p->b.data);
}

/* RESP3 answers SMEMBERS with a set, a typed SBE request with an
 * ArrayReply (docs/sbe.md, shapes that differ): the same members in the
 * same order. Printed sets ("1~ ", "(empty set)") read as arrays. */
static void set_as_array(struct goblin_buf *b)
{
    static const char empty_set[] = "(empty set)";
    char *p = b->data, *end = b->data + b->len;

    if (b->len == sizeof(empty_set) &&
        memcmp(p, empty_set, sizeof(empty_set) - 1) == 0) {
        b->len = 0;
        put_bytes(b, "(empty array)\n", 14);
        return;
    }
    for (; p < end; p = memchr(p, '\n', (size_t)(end - p)) + 1) {
        char *q = p;

        while (q < end && *q == ' ') /* indices are right-aligned */
            q++;
        p = q;
        while (q < end && *q >= '0' && *q <= '9')
            q++;
        if (q > p && q < end && *q == '~')
            *q = ')';
        if (memchr(p, '\n', (size_t)(end - p)) == NULL)
            break;
    }
}

/* The write stream of the RESP and the SBE engine must be the same bytes
 * after every request: a typed request goes out as its RESP form. */
static void same_stream(struct pair *p, const struct req *q, unsigned step)
{
    if (p->sa.len != p->sb.len ||
        (p->sa.len != 0 && memcmp(p->sa.data, p->sb.data, p->sa.len) != 0)) {
        p->a.len = 0;
        p->b.len = 0;
        put_bytes(&p->a, p->sa.data, p->sa.len);
        put_bytes(&p->b, p->sb.data, p->sb.len);
        fail_with(q, p, step);
    }
    p->sa.len = 0;
    p->sb.len = 0;
}

/* A monitor's lines without their "+<time> [<db> <origin>] " heads. */
static void monitor_lines(goblin_session *m, struct goblin_buf *out)
{
    size_t len;
    const char *p = drain(m, &len), *end = p + len, *nl, *body;

    out->len = 0;
    for (; p < end; p = nl + 1) {
        nl = memchr(p, '\n', (size_t)(end - p));
        body = memchr(p, ']', (size_t)(end - p));
        assert_non_null(nl);
        assert_true(*p == '+' && body != NULL && body < nl);
        put_bytes(out, body + 2, (size_t)(nl + 1 - (body + 2)));
    }
}

/* MONITOR shows a typed request as the line of its RESP form. */
static void same_monitor(struct pair *p, const struct req *q, unsigned step)
{
    p->a.len = 0;
    p->b.len = 0;
    monitor_lines(p->mon[0], &p->sa);
    monitor_lines(p->mon[1], &p->sb);
    if (p->mon[2] != NULL) { /* the ring engines' monitors see the same */
        monitor_lines(p->mon[2], &p->ma);
        monitor_lines(p->mon[3], &p->mb);
        if (p->ma.len != p->sa.len || p->mb.len != p->sb.len ||
            (p->sa.len != 0 &&
             memcmp(p->ma.data, p->sa.data, p->sa.len) != 0) ||
            (p->sb.len != 0 &&
             memcmp(p->mb.data, p->sb.data, p->sb.len) != 0))
            fail_msg("step %u: a ring's monitor differs: %.*s / %.*s", step,
                     (int)p->mb.len, p->mb.data, (int)p->sb.len,
                     p->sb.data);
    }
    same_stream(p, q, step);
}

static void one_step(struct pair *p, unsigned step)
{
    static struct req q;

    q.n = 0;
    q.tlen = 0;
    goblin_sbe_writer_init(&q.sw, q.sbe, sizeof(q.sbe), true);
    gens[pick(sizeof(gens) / sizeof(gens[0]))](&q);
    assert_true(q.sw.pos > 8);
    sent[goblin_sbe_rd_u16(q.sbe + 4 + 2) % TEMPLATE_SLOTS] = true;
    p->a.len = 0;
    p->b.len = 0;
    resp_side(p, &q);
    sbe_side(p, &q, pick(6) == 0);
    if (q.w[0].len == 8 && memcmp(q.w[0].ptr, "SMEMBERS", 8) == 0) {
        set_as_array(&p->a);
        set_as_array(&p->b);
    }
    if (p->a.len != p->b.len || memcmp(p->a.data, p->b.data, p->a.len) != 0)
        fail_with(&q, p, step);
    same_stream(p, &q, step);
    if (p->mon[0] != NULL)
        same_monitor(p, &q, step);
}

/* ---- the stores hold the same data ---- */

struct dump {
    struct goblin_buf *b;
};

static void put(struct goblin_buf *b, const void *p, size_t n)
{
    assert_int_equal(goblin_buf_append(b, p, n), 0);
}

static int dump_pair(void *ctx, struct goblin_slice f, struct goblin_slice v)
{
    struct goblin_buf *b = ctx;

    put(b, f.ptr, f.len);
    put(b, "=", 1);
    put(b, v.ptr, v.len);
    put(b, ";", 1);
    return 0;
}

static int collect(void *ctx, const struct goblin_key_info *info)
{
    struct goblin_buf *keys = ctx;

    put(keys, &info->key.len, sizeof(size_t));
    put(keys, info->key.ptr, info->key.len);
    return 0;
}

static int dump_elem(void *ctx, struct goblin_slice e)
{
    struct goblin_buf *b = ctx;

    put(b, e.ptr, e.len);
    put(b, ";", 1);
    return 0;
}

/* One key as text: type, deadline, value. */
static void dump_key(goblin_store *st, struct goblin_slice key,
                     struct goblin_buf *b)
{
    char num[64];
    struct goblin_slice v;
    struct goblin_zrange r;
    struct goblin_zset_iter it;
    double score;

    snprintf(num, sizeof(num), "%d %lld ", (int)goblin_key_type(st, key),
             (long long)goblin_key_pexpiretime(st, key));
    put(b, key.ptr, key.len);
    put(b, num, strlen(num));
    switch (goblin_key_type(st, key)) {
    case GOBLIN_TYPE_STRING:
        assert_int_equal(goblin_str_get(st, key, &v), 1);
        put(b, v.ptr, v.len);
        break;
    case GOBLIN_TYPE_HASH:
        assert_true(goblin_hash_foreach(st, key, dump_pair, b) > 0);
        break;
    case GOBLIN_TYPE_LIST:
        assert_true(goblin_list_range(st, key, 0, -1, dump_elem, b) > 0);
        break;
    case GOBLIN_TYPE_SET: /* the same seed gives the same order */
        assert_true(goblin_set_foreach(st, key, dump_elem, b) > 0);
        break;
    default:
        memset(&r, 0, sizeof(r));
        r.by = GOBLIN_ZRANGE_BY_RANK;
        r.stop = -1;
        r.count = -1;
        assert_true(goblin_zset_range(st, key, &r, &it) > 0);
        while (goblin_zset_next(&it, &v, &score) == 1) {
            snprintf(num, sizeof(num), ":%.17g;", score);
            put(b, v.ptr, v.len);
            put(b, num, strlen(num));
        }
    }
    put(b, "\n", 1);
}

static int cmp_lines(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every key of st as sorted lines, into out. */
static void dump_store(goblin_store *st, struct goblin_buf *out)
{
    struct goblin_buf keys = {0}, lines = {0};
    char *ptrs[1024];
    size_t pos = 0, n = 0, i, len;

    goblin_key_foreach(st, collect, &keys);
    while (pos < keys.len) {
        memcpy(&len, keys.data + pos, sizeof(len));
        assert_true(n < 1024);
        ptrs[n++] = (char *)(uintptr_t)lines.len;
        dump_key(st, (struct goblin_slice){keys.data + pos + sizeof(len), len},
                 &lines);
        put(&lines, "", 1);
        pos += sizeof(len) + len;
    }
    for (i = 0; i < n; i++)
        ptrs[i] = lines.data + (uintptr_t)ptrs[i];
    qsort(ptrs, n, sizeof(*ptrs), cmp_lines);
    for (i = 0; i < n; i++)
        put(out, ptrs[i], strlen(ptrs[i]));
    goblin_buf_free(&keys);
    goblin_buf_free(&lines);
}

static void same_store(struct goblin_buf *a, goblin_store *st,
                       const char *what)
{
    struct goblin_buf b = {0};

    dump_store(st, &b);
    if (a->len != b.len || memcmp(a->data, b.data, a->len) != 0)
        fail_msg("stores differ\nRESP3 side:\n%.*s\n%s side:\n%.*s",
                 (int)a->len, a->data, what, (int)b.len, b.data);
    goblin_buf_free(&b);
}

static void same_data(struct pair *p)
{
    struct goblin_buf a = {0};

    dump_store(p->resp->base->st, &a);
    assert_true(a.len > 0);
    same_store(&a, p->sbe->base->st, "SBE");
    if (p->rresp.ep != NULL)
        same_store(&a, p->rresp.f->base->st, "RESP ring");
    if (p->rsbe.ep != NULL)
        same_store(&a, p->rsbe.f->base->st, "SBE ring");
    goblin_buf_free(&a);
}

/* ---- the engines counted alike ---- */

/* The first lit in p[0..n), or NULL. */
static const char *find(const char *p, const char *end, const char *lit)
{
    size_t k = strlen(lit);

    for (; p + k <= end; p++)
        if (memcmp(p, lit, k) == 0)
            return p;
    return NULL;
}

/* INFO commandstats of eng, as "name calls rejected failed" lines (the
 * times differ from run to run), read by a session of its own. */
static void cmdstats(goblin_engine *eng, struct goblin_buf *out)
{
    static const char info[] = "*2\r\n$4\r\nINFO\r\n$12\r\ncommandstats\r\n";
    struct goblin_session_info si = {GOBLIN_TRANSPORT_LOCAL, NULL, NULL, -1,
                                     NULL};
    goblin_session *s;
    const char *p, *end;
    size_t len;

    out->len = 0;
    assert_int_equal(goblin_session_open(eng, &si, &s), 0);
    assert_int_equal(goblin_session_feed(s, info, sizeof(info) - 1), 0);
    p = drain(s, &len);
    end = p + len;
    while ((p = find(p, end, "cmdstat_")) != NULL) {
        unsigned long long calls, rejected, failed;
        char name[64], line[128];
        const char *rej = find(p, end, "rejected_calls=");
        int n;

        assert_non_null(rej);
        assert_int_equal(sscanf(p, "cmdstat_%63[^:]:calls=%llu", name,
                                &calls), 2);
        assert_int_equal(sscanf(rej, "rejected_calls=%llu,failed_calls=%llu",
                                &rejected, &failed), 2);
        n = snprintf(line, sizeof(line), "%s %llu %llu %llu\n", name, calls,
                     rejected, failed);
        put_bytes(out, line, (size_t)n);
        p = rej;
    }
    goblin_session_close(s);
}

/* The ring's fast path counts every request as the general path does:
 * INFO commandstats' calls, rejected and failed calls are the same. */
/* keyspace_hits and keyspace_misses of INFO stats, as one line. */
static void keyspace_stats(goblin_engine *eng, char *out, size_t cap)
{
    static const char info[] = "*2\r\n$4\r\nINFO\r\n$5\r\nstats\r\n";
    struct goblin_session_info si = {GOBLIN_TRANSPORT_LOCAL, NULL, NULL, -1,
                                     NULL};
    goblin_session *s;
    unsigned long long hits = 0, misses = 0;
    const char *p, *end;
    size_t len;

    assert_int_equal(goblin_session_open(eng, &si, &s), 0);
    assert_int_equal(goblin_session_feed(s, info, sizeof(info) - 1), 0);
    p = drain(s, &len);
    end = p + len;
    assert_non_null(p = find(p, end, "keyspace_hits:"));
    assert_int_equal(sscanf(p, "keyspace_hits:%llu\r\nkeyspace_misses:%llu",
                            &hits, &misses), 2);
    snprintf(out, cap, "hits %llu misses %llu", hits, misses);
    goblin_session_close(s);
}

/* Typed requests count their read lookups as their RESP forms do, on a
 * session and on a ring. */
static void same_keyspace_stats(struct pair *p, bool resp_too)
{
    char a[64], b[64];

    keyspace_stats(p->sbe->eng, a, sizeof(a));
    assert_true(strcmp(a, "hits 0 misses 0") != 0);
    if (resp_too) {
        keyspace_stats(p->resp->eng, b, sizeof(b));
        if (strcmp(a, b) != 0)
            fail_msg("keyspace stats, SBE: %s, RESP: %s", a, b);
    }
    if (p->rsbe.ep != NULL) {
        keyspace_stats(p->rsbe.f->eng, b, sizeof(b));
        if (strcmp(a, b) != 0)
            fail_msg("keyspace stats, SBE: %s, ring SBE: %s", a, b);
    }
}

static void same_stats(struct pair *p)
{
    struct goblin_buf a = {0}, b = {0};

    if (p->rsbe.ep != NULL) {
        cmdstats(p->sbe->eng, &a);
        cmdstats(p->rsbe.f->eng, &b);
        assert_true(a.len > 0);
        if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0)
            fail_msg("SBE commandstats, session:\n%.*s\nring:\n%.*s",
                     (int)a.len, a.data, (int)b.len, b.data);
    }
    if (p->rresp.ep != NULL) {
        cmdstats(p->resp->eng, &a);
        cmdstats(p->rresp.f->eng, &b);
        if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0)
            fail_msg("RESP commandstats, session:\n%.*s\nring:\n%.*s",
                     (int)a.len, a.data, (int)b.len, b.data);
    }
    goblin_buf_free(&a);
    goblin_buf_free(&b);
}

/* ---- the test ---- */

static int pair_setup(void **state)
{
    struct pair *p = calloc(1, sizeof(*p));
    void *a = NULL, *b = NULL;
    const char hello[] = "*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n";
    size_t len;

    if (p == NULL || cfix_setup(&a) != 0 || cfix_setup(&b) != 0)
        return -1;
    p->resp = a;
    p->sbe = b;
    p->tree.double_text = true;
    if (goblin_resp_reader_open(NULL, 0, &p->reader) != 0)
        return -1;
    goblin_session_feed(p->resp->s, hello, sizeof(hello) - 1);
    drain(p->resp->s, &len);
    goblin_session_feed(p->sbe->s, GOBLIN_SBE_MAGIC, GOBLIN_SBE_MAGIC_LEN);
    if (ring_open(&p->rresp, "resp") != 0 || ring_open(&p->rsbe, "sbe") != 0)
        return -1;
    if (p->rresp.ep != NULL)
        ring_round(&p->rresp, hello, sizeof(hello) - 1);
    if (p->rsbe.ep != NULL)
        assert_int_equal(ring_round(&p->rsbe, GOBLIN_SBE_MAGIC,
                                    GOBLIN_SBE_MAGIC_LEN)->len, 0);
    *state = p;
    return 0;
}

static int pair_teardown(void **state)
{
    struct pair *p = *state;
    void *a = p->resp, *b = p->sbe;

    if (p->rresp.ep != NULL)
        ring_close(&p->rresp);
    if (p->rsbe.ep != NULL)
        ring_close(&p->rsbe);
    goblin_resp_reader_close(p->reader);
    goblin__sbe_tree_free(&p->tree);
    goblin_buf_free(&p->in);
    goblin_buf_free(&p->a);
    goblin_buf_free(&p->b);
    goblin_buf_free(&p->sa);
    goblin_buf_free(&p->sb);
    goblin_buf_free(&p->rsa);
    goblin_buf_free(&p->rsb);
    goblin_buf_free(&p->ma);
    goblin_buf_free(&p->mb);
    free(p);
    cfix_teardown(&a);
    return cfix_teardown(&b);
}

/* Every typed request but those the command table runs from argv (AUTH,
 * HELLO and INFO, whose replies tell the two engines apart, and Argv,
 * sent for a sixth of the steps anyway). */
static void all_sent(void)
{
#define CHECK(ID, name)                                                       \
    if (GOBLIN_SBE_##ID != GOBLIN_SBE_AUTH &&                                 \
        GOBLIN_SBE_##ID != GOBLIN_SBE_HELLO &&                                \
        GOBLIN_SBE_##ID != GOBLIN_SBE_INFO &&                                 \
        GOBLIN_SBE_##ID != GOBLIN_SBE_ARGV && !sent[GOBLIN_SBE_##ID])         \
        fail_msg("no %s request was sent", #name);
    GOBLIN_SBE_REQUESTS(CHECK)
#undef CHECK
}

/* A write stream consumer keeping every byte (an AOF in memory). */
static void stream_keep(void *ctx, const void *bytes, size_t len,
                        uint64_t offset)
{
    (void)offset;
    if (bytes == NULL)
        put_bytes(ctx, "<lost>", 6);
    else
        put_bytes(ctx, bytes, len);
}

/* With streams, every engine keeps its write stream (the rings then take
 * their general path), compared after every step; the session engines'
 * are. A stream changes when expired keys are deleted, and so the order
 * SCAN sees: the rings keep one too, or their replies would differ. */
static void run_seed(void **state, uint64_t seed, unsigned steps,
                     bool streams)
{
    struct pair *p = *state;
    goblin_engine *engs[4] = {p->resp->eng, p->sbe->eng,
                              p->rresp.ep != NULL ? p->rresp.f->eng : NULL,
                              p->rsbe.ep != NULL ? p->rsbe.f->eng : NULL};
    struct goblin_buf *bufs[2] = {&p->sa, &p->sb};
    uint32_t ids[2], rids[2];
    unsigned i;

    p->rsa.len = p->rsb.len = 0;
    for (i = 0; streams && i < 2; i++)
        assert_int_equal(goblin_stream_subscribe(engs[i], GOBLIN_STREAM_LOCAL,
                                                 stream_keep, bufs[i],
                                                 &ids[i]), 0);
    if (streams && p->rresp.ep != NULL)
        assert_int_equal(goblin_stream_subscribe(p->rresp.f->eng,
                                                 GOBLIN_STREAM_LOCAL,
                                                 stream_keep, &p->rsa,
                                                 &rids[0]), 0);
    if (streams && p->rsbe.ep != NULL)
        assert_int_equal(goblin_stream_subscribe(p->rsbe.f->eng,
                                                 GOBLIN_STREAM_LOCAL,
                                                 stream_keep, &p->rsb,
                                                 &rids[1]), 0);
    for (i = 0; streams && i < 4 && engs[i] != NULL; i++) {
        static const char mon[] = "*1\r\n$7\r\nMONITOR\r\n";
        struct goblin_session_info si = {GOBLIN_TRANSPORT_LOCAL, NULL, NULL,
                                         -1, NULL};
        size_t len;

        assert_int_equal(goblin_session_open(engs[i], &si, &p->mon[i]), 0);
        assert_int_equal(goblin_session_feed(p->mon[i], mon, sizeof(mon) - 1),
                         0);
        drain(p->mon[i], &len);
    }
    memset(sent, 0, sizeof(sent));
    rng_state = seed;
    for (i = 0; i < steps; i++) {
        if (i % 64 == 63) { /* let deadlines pass on every side alike */
            p->resp->base->clock.now_ms += 700;
            p->sbe->base->clock.now_ms += 700;
            if (p->rresp.ep != NULL)
                p->rresp.f->base->clock.now_ms += 700;
            if (p->rsbe.ep != NULL)
                p->rsbe.f->base->clock.now_ms += 700;
        }
        one_step(p, i);
    }
    if (streams) {
        for (i = 0; i < 4; i++) {
            if (i < 2)
                goblin_stream_unsubscribe(engs[i], ids[i]);
            if (p->mon[i] != NULL)
                goblin_session_close(p->mon[i]);
            p->mon[i] = NULL;
        }
        if (p->rresp.ep != NULL) {
            goblin_stream_unsubscribe(p->rresp.f->eng, rids[0]);
            goblin_stream_unsubscribe(p->rsbe.f->eng, rids[1]);
            /* Ring or session, the same stream. */
            assert_true(p->rsa.len > 0);
            assert_int_equal(p->rsa.len, p->rsb.len);
            assert_memory_equal(p->rsa.data, p->rsb.data, p->rsa.len);
        }
    }
    same_data(p);
    same_stats(p);
    same_keyspace_stats(p, true);
    all_sent();
}

static void test_random_sequence_seed_1(void **state)
{
    run_seed(state, 1, 10000, false);
}

static void test_random_sequence_seed_2024(void **state)
{
    run_seed(state, 2024, 10000, false);
}

static void test_random_sequence_seed_77(void **state)
{
    run_seed(state, 77, 10000, false);
}

/* Typed requests go out on the write stream (the AOF, replicas) as the
 * same bytes as their RESP forms, step by step, session and ring; and a
 * MONITOR sees the same line for a typed request as for its RESP form. */
static void test_random_sequence_streams_alike(void **state)
{
    run_seed(state, 5, 10000, true);
}

/* RESP over a ring: whole commands of a small record run from its stack
 * copy; a command cut at a record's end resumes from the input buffer
 * when the next record brings the rest, at any cut. */
static void test_resp_commands_split_across_records(void **state)
{
    struct pair *p = *state;
    static const char two[] = "*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n"
                              "*1\r\n$4\r\nPING\r\n"
                              "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nabc\r\n";
    static const char want[] = "$2\r\nhi\r\n+PONG\r\n+OK\r\n";
    struct goblin_buf all = {0};
    size_t cut, n = sizeof(two) - 1;

    if (p->rresp.ep == NULL)
        skip();
    for (cut = 1; cut < n; cut++) {
        const struct goblin_buf *got;

        all.len = 0;
        got = ring_round(&p->rresp, two, cut);
        put_bytes(&all, got->data, got->len);
        got = ring_round(&p->rresp, two + cut, n - cut);
        put_bytes(&all, got->data, got->len);
        same_bytes("split RESP", want, sizeof(want) - 1, &all);
    }
    goblin_buf_free(&all);
}

/* One Argv request of words to the SBE session and to its ring twin,
 * whose replies must be the same bytes: how the test moves both into a
 * session state (MULTI, a restricted user, maxmemory, CLIENT REPLY). */
static void both_argv(struct pair *p, size_t n, const char *const *words)
{
    static uint8_t buf[1024];
    struct goblin_sbe_writer w;
    const char *out;
    size_t len, i;

    goblin_sbe_writer_init(&w, buf, sizeof(buf), true);
    goblin_sbe_argv_begin(&w);
    goblin_sbe_argv_args_begin(&w);
    for (i = 0; i < n; i++)
        goblin_sbe_argv_args_add(
            &w, (struct goblin_slice){words[i], strlen(words[i])});
    assert_true(goblin_sbe_argv_end(&w) > 0);
    assert_int_equal(goblin_session_feed(p->sbe->s, buf, w.pos), 0);
    out = drain(p->sbe->s, &len);
    same_bytes("Argv", out, len, ring_round(&p->rsbe, buf, w.pos));
}

#define BOTH(p, ...)                                                          \
    both_argv(p, sizeof((const char *const[]){__VA_ARGS__}) /                \
                     sizeof(const char *),                                    \
              (const char *const[]){__VA_ARGS__})

/* A typed request of the random mix to the SBE session and its ring twin:
 * the same reply bytes (the ring takes its direct path only when the
 * session is in its plain state; the general path otherwise). */
static void typed_both(struct pair *p)
{
    static struct req q;
    const char *out;
    size_t len;

    q.n = 0;
    q.tlen = 0;
    goblin_sbe_writer_init(&q.sw, q.sbe, sizeof(q.sbe), true);
    gens[pick(sizeof(gens) / sizeof(gens[0]))](&q);
    assert_int_equal(goblin_session_feed(p->sbe->s, q.sbe, q.sw.pos), 0);
    out = drain(p->sbe->s, &len);
    same_bytes("SBE", out, len, ring_round(&p->rsbe, q.sbe, q.sw.pos));
}

/* A write stream consumer that only counts the bytes it gets. */
static void stream_count(void *ctx, const void *bytes, size_t len,
                         uint64_t offset)
{
    (void)bytes;
    (void)offset;
    *(size_t *)ctx += len;
}

static void typed_some(struct pair *p, unsigned n)
{
    while (n-- > 0)
        typed_both(p);
}

/* Every session state that sends a typed frame the general way, entered
 * and left between random typed requests: inside MULTI (refused, then
 * EXEC aborts), as a user limited to some keys and commands, under a
 * maxmemory no write fits under, with replies off and skipped, with a
 * write stream consumer (typed writes streamed as their argv form),
 * and after deadlines passed. Replies and INFO commandstats match the session's. */
static void test_session_states_match_on_the_ring(void **state)
{
    struct pair *p = *state;
    size_t streamed[2] = {0, 0};
    uint32_t ids[2];
    unsigned round;

    if (p->rsbe.ep == NULL)
        skip();
    rng_state = 99;
    for (round = 0; round < 40; round++) {
        typed_some(p, 20);
        BOTH(p, "MULTI");
        typed_some(p, 3);
        BOTH(p, "EXEC");
        BOTH(p, "ACL", "SETUSER", "lim", "on", "nopass", "~k*", "~h*",
             "+@read", "+ping");
        BOTH(p, "AUTH", "lim", "x");
        typed_some(p, 20);
        BOTH(p, "AUTH", "default", "x");
        BOTH(p, "CONFIG", "SET", "maxmemory", "1");
        typed_some(p, 20);
        BOTH(p, "CONFIG", "SET", "maxmemory", "0");
        BOTH(p, "CLIENT", "REPLY", "SKIP");
        typed_some(p, 2);
        BOTH(p, "CLIENT", "REPLY", "OFF");
        typed_some(p, 5);
        BOTH(p, "CLIENT", "REPLY", "ON");
        assert_int_equal(goblin_stream_subscribe(p->sbe->eng,
                                                 GOBLIN_STREAM_LOCAL,
                                                 stream_count, &streamed[0],
                                                 &ids[0]), 0);
        assert_int_equal(goblin_stream_subscribe(p->rsbe.f->eng,
                                                 GOBLIN_STREAM_LOCAL,
                                                 stream_count, &streamed[1],
                                                 &ids[1]), 0);
        typed_some(p, 20);
        goblin_stream_unsubscribe(p->sbe->eng, ids[0]);
        goblin_stream_unsubscribe(p->rsbe.f->eng, ids[1]);
        p->sbe->base->clock.now_ms += 700;
        p->rsbe.f->base->clock.now_ms += 700;
    }
    assert_int_equal(streamed[0], streamed[1]);
    same_stats(p);
    same_keyspace_stats(p, false);
}

/* A typed write over a ring sends the invalidations it causes at once, as
 * a RESP command does: RESP3 tracking clients, BCAST and default mode,
 * have their pushes before anything else runs (no later command, no
 * cron tick). */
static void test_typed_write_invalidates_at_once(void **state)
{
    static const char hello[] = "*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n";
    static const char bcast[] = "*4\r\n$6\r\nCLIENT\r\n$8\r\nTRACKING\r\n"
                                "$2\r\nON\r\n$5\r\nBCAST\r\n";
    static const char track[] = "*3\r\n$6\r\nCLIENT\r\n$8\r\nTRACKING\r\n"
                                "$2\r\nON\r\n";
    static const char get[] = "*2\r\n$3\r\nGET\r\n$4\r\ninv2\r\n";
    struct pair *p = *state;
    struct goblin_session_info si = {GOBLIN_TRANSPORT_LOCAL, NULL, NULL, -1,
                                     NULL};
    goblin_session *b, *d;
    static struct req q;
    const char *out;
    size_t len;

    if (p->rsbe.ep == NULL)
        skip();
    assert_int_equal(goblin_session_open(p->rsbe.f->eng, &si, &b), 0);
    assert_int_equal(goblin_session_open(p->rsbe.f->eng, &si, &d), 0);
    assert_int_equal(goblin_session_feed(b, hello, sizeof(hello) - 1), 0);
    assert_int_equal(goblin_session_feed(b, bcast, sizeof(bcast) - 1), 0);
    assert_int_equal(goblin_session_feed(d, hello, sizeof(hello) - 1), 0);
    assert_int_equal(goblin_session_feed(d, track, sizeof(track) - 1), 0);
    assert_int_equal(goblin_session_feed(d, get, sizeof(get) - 1), 0);
    drain(b, &len);
    drain(d, &len);
    goblin_sbe_writer_init(&q.sw, q.sbe, sizeof(q.sbe), true);
    goblin_sbe_set_encode(&q.sw, 0, 0, 0, sl("inv1"), sl("v"));
    ring_round(&p->rsbe, q.sbe, q.sw.pos);
    out = drain(b, &len);
    assert_non_null(memmem(out, len, "invalidate", 10));
    assert_non_null(memmem(out, len, "inv1", 4));
    goblin_sbe_writer_init(&q.sw, q.sbe, sizeof(q.sbe), true);
    goblin_sbe_set_encode(&q.sw, 0, 0, 0, sl("inv2"), sl("v"));
    ring_round(&p->rsbe, q.sbe, q.sw.pos);
    out = drain(d, &len);
    assert_non_null(memmem(out, len, "invalidate", 10));
    assert_non_null(memmem(out, len, "inv2", 4));
    out = drain(b, &len);
    assert_non_null(memmem(out, len, "inv2", 4));
    goblin_session_close(b);
    goblin_session_close(d);
}

#define PAIR_TEST(fn) \
    cmocka_unit_test_setup_teardown(fn, pair_setup, pair_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        PAIR_TEST(test_random_sequence_seed_1),
        PAIR_TEST(test_random_sequence_seed_2024),
        PAIR_TEST(test_random_sequence_seed_77),
        PAIR_TEST(test_random_sequence_streams_alike),
        PAIR_TEST(test_resp_commands_split_across_records),
        PAIR_TEST(test_session_states_match_on_the_ring),
        PAIR_TEST(test_typed_write_invalidates_at_once),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
