/* cmd_geo.c - geo commands on sorted sets: GEOADD, GEODIST, GEOHASH,
 * GEOPOS, GEOSEARCH, GEOSEARCHSTORE, GEORADIUS, GEORADIUSBYMEMBER and
 * their _RO forms, with Redis 7.0's argument order and texts (geo.c).
 *
 * Positions are the 52-bit geohash scores Redis gives them
 * (lib/store/geohash.c), so ZSCORE and ZRANGE see Redis's numbers;
 * coordinates print as "%.17Lf" with trailing zeros dropped and
 * distances as "%.4f", as Redis prints them. Results of one search are
 * sorted as Redis sorts them: the C library's qsort, or Redis's partial
 * pqsort when COUNT keeps fewer than were found.
 *
 * Each command is an execution function (exec.h) and a RESP handler that
 * parses argv and calls it; SBE reaches the handlers through its argv
 * frame.
 */
#include <stdio.h>
#include <stdlib.h>

#include "engine/session.h"
#include "exec.h"
#include "goblin/numtext.h"
#include "goblin/zset.h"
#include "notify.h"
#include "respond.h"
#include "store/geo.h"
#include "util/pqsort.h"

/* GEORADIUS* and GEOSEARCH* variants, as Redis's georadiusGeneric flags. */
enum {
    RADIUS_COORDS = 1 << 0,
    RADIUS_MEMBER = 1 << 1,
    RADIUS_NOSTORE = 1 << 2,
    GEOSEARCH = 1 << 3,
    GEOSEARCHSTORE = 1 << 4,
};

enum { SORT_NONE, SORT_ASC, SORT_DESC };

static bool arg_double(goblin__exec *x, struct goblin_slice a, double *v,
                       const char *msg)
{
    if (goblin_double_parse(a.ptr, a.len, v) == 0)
        return true;
    goblin__reply_error(x, msg != NULL ? msg : "ERR value is not a valid "
                                               "float");
    return false;
}

/* extractLongLatOrReply: argv[0] longitude, argv[1] latitude. */
static bool arg_lonlat(goblin__exec *x, const struct goblin_slice *argv,
                       double xy[2])
{
    if (!arg_double(x, argv[0], &xy[0], NULL) ||
        !arg_double(x, argv[1], &xy[1], NULL))
        return false;
    if (xy[0] < GOBLIN__GEO_LONG_MIN || xy[0] > GOBLIN__GEO_LONG_MAX ||
        xy[1] < GOBLIN__GEO_LAT_MIN || xy[1] > GOBLIN__GEO_LAT_MAX) {
        goblin__reply_errorf(x, "ERR invalid longitude,latitude pair %f,%f",
                             xy[0], xy[1]);
        return false;
    }
    return true;
}

/* extractUnitOrReply: metres per unit, or -1 after replying. */
static double arg_unit(goblin__exec *x, struct goblin_slice u)
{
    if (goblin__arg_is(u, "m"))
        return 1;
    if (goblin__arg_is(u, "km"))
        return 1000;
    if (goblin__arg_is(u, "ft"))
        return 0.3048;
    if (goblin__arg_is(u, "mi"))
        return 1609.34;
    goblin__reply_error(x, "ERR unsupported unit provided. please use M, KM, "
                           "FT, MI");
    return -1;
}

/* "%.17Lf" without trailing zeros, as Redis's addReplyHumanLongDouble. */
static void reply_coord(goblin__exec *x, double v)
{
    char buf[400];
    int l = snprintf(buf, sizeof(buf), "%.17Lf", (long double)v);

    while (l > 0 && buf[l - 1] == '0')
        l--;
    if (l > 0 && buf[l - 1] == '.')
        l--;
    if (l == 2 && buf[0] == '-' && buf[1] == '0') {
        buf[0] = '0';
        l = 1;
    }
    /* RESP3 sends a double, in Goblin's shortest text (docs/errors.md). */
    if (goblin__reply_proto(x) == 3)
        goblin__reply_double(x, v);
    else
        goblin__reply_bulk(x, buf, (size_t)l);
}

static void reply_distance(goblin__exec *x, double d)
{
    char buf[400];
    int l = snprintf(buf, sizeof(buf), "%.4f", d);

    goblin__reply_bulk(x, buf, (size_t)l);
}

void goblin__exec_geoadd(goblin__exec *x, struct goblin_slice key,
                         unsigned flags, const struct goblin_zpair *pairs,
                         size_t n)
{
    int64_t rc = goblin_zset_add_pairs(x->st, key, flags, pairs, n);

    /* GEOADD is ZADD underneath, and says so (see goblin__exec_zadd). */
    if (rc > 0 || (rc == 0 && !(flags & GOBLIN_ZADD_NX)))
        goblin__notify(x, GOBLIN__NOTIFY_ZSET, "zadd", key);
    if (rc < 0)
        goblin__reply_code(x, (int)rc);
    else
        goblin__reply_int(x, rc);
}

void goblin__cmd_geoadd(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    unsigned flags = 0;
    int i = 2;
    size_t n;
    struct goblin_zpair *pairs;

    for (; i < argc; i++) {
        if (goblin__arg_is(argv[i], "nx"))
            flags |= GOBLIN_ZADD_NX;
        else if (goblin__arg_is(argv[i], "xx"))
            flags |= GOBLIN_ZADD_XX;
        else if (goblin__arg_is(argv[i], "ch"))
            flags |= GOBLIN_ZADD_CH;
        else
            break;
    }
    n = (size_t)(argc - i) / 3;
    if ((argc - i) % 3 != 0 || n == 0 ||
        (flags & (GOBLIN_ZADD_NX | GOBLIN_ZADD_XX)) ==
            (GOBLIN_ZADD_NX | GOBLIN_ZADD_XX)) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return;
    }
    if ((pairs = goblin__scratch_bytes(x->sess, n * sizeof(*pairs))) == NULL) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    for (size_t j = 0; j < n; j++, i += 3) {
        double xy[2];

        if (!arg_lonlat(x, argv + i, xy))
            return;
        pairs[j].score = (double)goblin__geohash_score(xy[0], xy[1]);
        pairs[j].member = argv[i + 2];
    }
    goblin__exec_geoadd(x, argv[1], flags, pairs, n);
}

void goblin__exec_geodist(goblin__exec *x, struct goblin_slice key,
                          struct goblin_slice m1, struct goblin_slice m2,
                          double to_meter)
{
    double s1, s2, a[2], b[2];
    int r1 = goblin_zset_score(x->st, key, m1, &s1), r2;

    if (r1 < 0) {
        goblin__reply_code(x, r1);
        return;
    }
    r2 = r1 == 1 ? goblin_zset_score(x->st, key, m2, &s2) : 0;
    if (r1 != 1 || r2 != 1) {
        goblin__reply_null(x);
        return;
    }
    goblin__geohash_decode_score(s1, a);
    goblin__geohash_decode_score(s2, b);
    reply_distance(x, goblin__geo_distance(a[0], a[1], b[0], b[1]) /
                          to_meter);
}

void goblin__cmd_geodist(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    double to_meter = 1;

    if (argc == 5 && (to_meter = arg_unit(x, argv[4])) < 0)
        return;
    if (argc > 5) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return;
    }
    goblin__exec_geodist(x, argv[1], argv[2], argv[3], to_meter);
}

/* GEOHASH (pos false) and GEOPOS (pos true) of n members. */
void goblin__exec_geopos(goblin__exec *x, struct goblin_slice key,
                         const struct goblin_slice *members, size_t n,
                         bool pos)
{
    int64_t card = goblin_zset_card(x->st, key);
    double score, xy[2];
    char text[11];

    if (card < 0) {
        goblin__reply_code(x, (int)card);
        return;
    }
    goblin__reply_array(x, n);
    for (size_t i = 0; i < n; i++) {
        if (card == 0 || goblin_zset_score(x->st, key, members[i], &score) !=
                             1) {
            if (pos)
                goblin__reply_null_array(x);
            else
                goblin__reply_null(x);
        } else if (pos) {
            goblin__geohash_decode_score(score, xy);
            goblin__reply_array(x, 2);
            reply_coord(x, xy[0]);
            reply_coord(x, xy[1]);
        } else {
            goblin__geohash_text(score, text);
            goblin__reply_bulk(x, text, sizeof(text));
        }
    }
}

void goblin__cmd_geohash(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    goblin__exec_geopos(x, argv[1], argv + 2, (size_t)argc - 2, false);
}

void goblin__cmd_geopos(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    goblin__exec_geopos(x, argv[1], argv + 2, (size_t)argc - 2, true);
}

/* The position of member, or false after "could not decode requested
 * zset member". */
static bool member_pos(goblin__exec *x, struct goblin_slice key,
                       struct goblin_slice member, double xy[2])
{
    double score;

    if (goblin_zset_score(x->st, key, member, &score) != 1) {
        goblin__reply_error(x, "ERR could not decode requested zset member");
        return false;
    }
    goblin__geohash_decode_score(score, xy);
    return true;
}

/* extractDistanceOrReply: argv[0] the radius, argv[1] its unit. */
static bool arg_radius(goblin__exec *x, const struct goblin_slice *argv,
                       struct goblin__geo_shape *s)
{
    if (!arg_double(x, argv[0], &s->radius, "ERR need numeric radius"))
        return false;
    if (s->radius < 0) {
        goblin__reply_error(x, "ERR radius cannot be negative");
        return false;
    }
    if ((s->conversion = arg_unit(x, argv[1])) < 0)
        return false;
    s->box = false;
    return true;
}

static bool arg_box(goblin__exec *x, const struct goblin_slice *argv,
                    struct goblin__geo_shape *s)
{
    if (!arg_double(x, argv[0], &s->width, "ERR need numeric width") ||
        !arg_double(x, argv[1], &s->height, "ERR need numeric height"))
        return false;
    if (s->height < 0 || s->width < 0) {
        goblin__reply_error(x, "ERR height or width cannot be negative");
        return false;
    }
    if ((s->conversion = arg_unit(x, argv[2])) < 0)
        return false;
    s->box = true;
    return true;
}

void goblin__geo_query_init(struct goblin__geo_query *q)
{
    memset(q, 0, sizeof(*q));
}

/* The options after the base arguments, as georadiusGeneric reads them;
 * false after replying an error. has_key: the source exists (a missing
 * one still has its options read, FROMMEMBER unresolved). */
static bool geo_options(goblin__exec *x, int argc,
                        const struct goblin_slice *argv, int base, int flags,
                        bool has_key, struct goblin__geo_query *q)
{
    bool frommember = false, fromloc = false, byradius = false;
    bool bybox = false, search = flags & GEOSEARCH;
    bool store_ok = !(flags & RADIUS_NOSTORE) && !search;

    for (int i = base; i < argc; i++) {
        struct goblin_slice a = argv[i];
        int rem = argc - i - 1;

        if (goblin__arg_is(a, "withdist")) {
            q->withdist = true;
        } else if (goblin__arg_is(a, "withhash")) {
            q->withhash = true;
        } else if (goblin__arg_is(a, "withcoord")) {
            q->withcoord = true;
        } else if (goblin__arg_is(a, "any")) {
            q->any = true;
        } else if (goblin__arg_is(a, "asc")) {
            q->sort = SORT_ASC;
        } else if (goblin__arg_is(a, "desc")) {
            q->sort = SORT_DESC;
        } else if (goblin__arg_is(a, "count") && rem >= 1) {
            if (!goblin__arg_int64(x, argv[++i], &q->count, NULL))
                return false;
            if (q->count <= 0) {
                goblin__reply_error(x, "ERR COUNT must be > 0");
                return false;
            }
        } else if ((goblin__arg_is(a, "store") ||
                    goblin__arg_is(a, "storedist")) && rem >= 1 && store_ok) {
            q->storedist = goblin__arg_is(a, "storedist");
            q->store = argv[++i];
            q->has_store = true;
        } else if (goblin__arg_is(a, "storedist") && search &&
                   (flags & GEOSEARCHSTORE)) {
            q->storedist = true;
        } else if (goblin__arg_is(a, "frommember") && rem >= 1 && search &&
                   !fromloc) {
            if (has_key && !member_pos(x, q->key, argv[i + 1], q->shape.xy))
                return false;
            frommember = true;
            i++;
        } else if (goblin__arg_is(a, "fromlonlat") && rem >= 2 && search &&
                   !frommember) {
            if (!arg_lonlat(x, argv + i + 1, q->shape.xy))
                return false;
            fromloc = true;
            i += 2;
        } else if (goblin__arg_is(a, "byradius") && rem >= 2 && search &&
                   !bybox) {
            if (!arg_radius(x, argv + i + 1, &q->shape))
                return false;
            byradius = true;
            i += 2;
        } else if (goblin__arg_is(a, "bybox") && rem >= 3 && search &&
                   !byradius) {
            if (!arg_box(x, argv + i + 1, &q->shape))
                return false;
            bybox = true;
            i += 3;
        } else {
            goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
            return false;
        }
    }
    if (q->has_store && (q->withdist || q->withhash || q->withcoord)) {
        goblin__reply_errorf(x, "ERR %s is not compatible with WITHDIST, "
                                "WITHHASH and WITHCOORD options",
                             flags & GEOSEARCHSTORE
                                 ? "GEOSEARCHSTORE"
                                 : "STORE option in GEORADIUS");
        return false;
    }
    if (search && !(frommember || fromloc)) {
        goblin__reply_errorf(x, "ERR exactly one of FROMMEMBER or FROMLONLAT "
                                "can be specified for %.*s",
                             goblin__cstr_len(argv[0]),
                             (const char *)argv[0].ptr);
        return false;
    }
    if (search && !(byradius || bybox)) {
        goblin__reply_errorf(x, "ERR exactly one of BYRADIUS and BYBOX can "
                                "be specified for %.*s",
                             goblin__cstr_len(argv[0]),
                             (const char *)argv[0].ptr);
        return false;
    }
    if (q->any && q->count == 0) {
        goblin__reply_error(x, "ERR the ANY argument requires COUNT "
                               "argument");
        return false;
    }
    return true;
}

static int cmp_asc(const void *a, const void *b)
{
    double x = ((const struct goblin__geo_point *)a)->dist;
    double y = ((const struct goblin__geo_point *)b)->dist;

    return x > y ? 1 : x == y ? 0 : -1;
}

static int cmp_desc(const void *a, const void *b)
{
    return -cmp_asc(a, b);
}

static void geo_reply(goblin__exec *x, const struct goblin__geo_query *q,
                      struct goblin__geo_point *v, size_t n)
{
    size_t opts = q->withdist + q->withhash + q->withcoord;

    goblin__reply_array(x, n);
    for (size_t i = 0; i < n; i++) {
        if (opts)
            goblin__reply_array(x, opts + 1);
        goblin__reply_slice(x, v[i].member);
        if (q->withdist)
            reply_distance(x, v[i].dist / q->shape.conversion);
        if (q->withhash)
            goblin__reply_int(x, (int64_t)v[i].score);
        if (q->withcoord) {
            goblin__reply_array(x, 2);
            reply_coord(x, v[i].lon);
            reply_coord(x, v[i].lat);
        }
    }
}

void goblin__exec_geosearch(goblin__exec *x, struct goblin__geo_query *q)
{
    struct goblin__geo_points pts = {0};
    size_t n;
    int sort = q->sort, rc;

    if (q->count != 0 && sort == SORT_NONE && !q->any)
        sort = SORT_ASC;
    rc = goblin__geo_search(x->st, q->key, &q->shape,
                            q->any ? (size_t)q->count : 0, &pts);
    if (rc < 0) {
        goblin__geo_points_free(x->st, &pts);
        goblin__reply_code(x, rc);
        return;
    }
    n = q->count == 0 || pts.n < (size_t)q->count ? pts.n : (size_t)q->count;
    /* As Redis: the whole result sorted with qsort, or with COUNT below
     * it, only its first n places (pqsort), so ties come out alike. */
    if (sort != SORT_NONE && n == pts.n && pts.n > 1)
        qsort(pts.v, pts.n, sizeof(*pts.v),
              sort == SORT_ASC ? cmp_asc : cmp_desc);
    else if (sort != SORT_NONE && n > 0 && pts.n > 1)
        goblin__pqsort(pts.v, pts.n, sizeof(*pts.v),
                       sort == SORT_ASC ? cmp_asc : cmp_desc, 0, n - 1);
    if (!q->has_store) {
        geo_reply(x, q, pts.v, n);
    } else {
        bool existed = goblin__notify_on(x, GOBLIN__NOTIFY_GENERIC) &&
                       goblin_key_exists(x->st, q->store);

        if ((rc = goblin__geo_store(x->st, q->store, pts.v, n, q->storedist,
                                    q->shape.conversion)) < 0) {
            goblin__reply_code(x, rc);
        } else {
            goblin__reply_int(x, (int64_t)n);
            goblin__notify_stored(x, GOBLIN__NOTIFY_ZSET,
                                  q->radius ? "georadiusstore"
                                            : "geosearchstore",
                                  q->store, (int64_t)n, existed);
        }
    }
    goblin__geo_points_free(x->st, &pts);
}

static void georadius_generic(goblin__exec *x, int argc,
                              const struct goblin_slice *argv, int src,
                              int flags)
{
    struct goblin__geo_query q;
    int64_t card;
    int base;

    goblin__geo_query_init(&q);
    q.key = argv[src];
    q.radius = !(flags & GEOSEARCH);
    /* The one read lookup of the source (STORE or not), before the
     * options are read, as Redis's georadiusGeneric. */
    goblin__reads_begin(x);
    card = goblin_zset_card(x->st, q.key);
    goblin__reads_done(x);
    if (card < 0) {
        goblin__reply_code(x, (int)card);
        return;
    }
    if (flags & RADIUS_COORDS) {
        base = 6;
        if (!arg_lonlat(x, argv + 2, q.shape.xy) ||
            !arg_radius(x, argv + base - 2, &q.shape))
            return;
    } else if (flags & RADIUS_MEMBER) {
        base = 5;
        if (card != 0 && (!member_pos(x, q.key, argv[2], q.shape.xy) ||
                          !arg_radius(x, argv + base - 2, &q.shape)))
            return;
    } else {
        base = flags & GEOSEARCHSTORE ? 3 : 2;
        if (flags & GEOSEARCHSTORE) {
            q.store = argv[1];
            q.has_store = true;
        }
    }
    if (!geo_options(x, argc, argv, base, flags, card != 0, &q))
        return;
    if (card == 0) {
        /* A missing source: STORE deletes its destination. */
        if (q.has_store) {
            bool existed = goblin__notify_on(x, GOBLIN__NOTIFY_GENERIC) &&
                           goblin_key_exists(x->st, q.store);
            int rc = goblin__geo_store(x->st, q.store, NULL, 0, false, 1);

            if (rc < 0) {
                goblin__reply_code(x, rc);
            } else {
                goblin__reply_int(x, 0);
                goblin__notify_stored(x, GOBLIN__NOTIFY_ZSET, "", q.store, 0,
                                      existed);
            }
        } else {
            goblin__reply_array(x, 0);
        }
        return;
    }
    goblin__exec_geosearch(x, &q);
}

void goblin__cmd_georadius(goblin__exec *x, int argc,
                           const struct goblin_slice *argv)
{
    georadius_generic(x, argc, argv, 1, RADIUS_COORDS);
}

void goblin__cmd_georadius_ro(goblin__exec *x, int argc,
                              const struct goblin_slice *argv)
{
    georadius_generic(x, argc, argv, 1, RADIUS_COORDS | RADIUS_NOSTORE);
}

void goblin__cmd_georadiusbymember(goblin__exec *x, int argc,
                                   const struct goblin_slice *argv)
{
    georadius_generic(x, argc, argv, 1, RADIUS_MEMBER);
}

void goblin__cmd_georadiusbymember_ro(goblin__exec *x, int argc,
                                      const struct goblin_slice *argv)
{
    georadius_generic(x, argc, argv, 1, RADIUS_MEMBER | RADIUS_NOSTORE);
}

void goblin__cmd_geosearch(goblin__exec *x, int argc,
                           const struct goblin_slice *argv)
{
    georadius_generic(x, argc, argv, 1, GEOSEARCH);
}

void goblin__cmd_geosearchstore(goblin__exec *x, int argc,
                                const struct goblin_slice *argv)
{
    georadius_generic(x, argc, argv, 2, GEOSEARCH | GEOSEARCHSTORE);
}
