/* cmd_sort.c - SORT and SORT_RO over lists, sets and sorted sets, as
 * Redis 7.0's sort.c: by value (numbers, or bytes with ALPHA), BY pattern
 * (a string key, or a hash field with "->"; a pattern without '*' means
 * "do not sort"), LIMIT offset count, ASC / DESC, GET patterns (# is the
 * element itself), STORE destination (SORT only), and Redis's texts.
 *
 * How elements are ordered, as Redis orders them:
 *  - numerically, each element's weight (the element, or its BY value;
 *    a missing BY key weighs 0) is read as strtod reads it, whole, and an
 *    unreadable one fails the command with "One or more scores can't be
 *    converted into double"; equal weights fall back to the bytes of the
 *    elements;
 *  - with ALPHA, by bytes up to the first NUL (Redis's strcoll in the C
 *    locale), or by all the bytes with STORE (Redis compares binary
 *    then), elements without a BY value first; ties keep the order the
 *    elements were read in;
 *  - a "do not sort" BY leaves a sorted set or a list in its own order
 *    (LIMIT and DESC apply to that order: DESC reads it from the end) and
 *    a set in the order it is stored in; with STORE a set is sorted ALPHA
 *    instead, so that what is stored does not depend on the encoding.
 * A compact sorted set is converted to the full form first, as Redis
 * converts a listpack one to a skiplist (OBJECT ENCODING shows it).
 *
 * STORE keeps the result as a list (GET values, "" for a missing one) in
 * place of whatever the destination held, replies its length, and
 * deletes the destination when the result is empty ("sortstore" or
 * "del" keyspace events); the destination's blocked clients are served
 * after the command (the store's key_changed hook). BY with a real pattern and GET name keys no key spec shows:
 * like Redis 7.0, they need a user that may read every key.
 *
 * Elements are copied into the session's scratch bytes, laid out as
 * [items][element bytes][BY bytes][key buffer]([STORE's slices][GET
 * bytes]), by offsets since the buffer may move while it grows; nothing
 * else is allocated. Lookups happen after the copy, so no view of the
 * sorted key is held across them.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "notify.h"
#include "goblin/hash.h"
#include "goblin/keys.h"
#include "goblin/set.h"
#include "goblin/str.h"
#include "goblin/list.h"
#include "goblin/zset.h"
#include "respond.h"
#include "engine/acl.h"
#include "engine/session.h"
#include "store/zset.h"

struct item {
    size_t moff, mlen;   /* the element */
    size_t boff, blen;   /* its BY value, when has_by */
    double score;
    bool has_by;
};

struct sorter {
    goblin__exec *x;
    const struct goblin__sort *a;
    size_t g0;           /* scratch bytes before base: GET patterns */
    uint8_t *base;       /* scratch: items, then bytes */
    size_t n, bytes, cap;
    size_t max_mlen;
    bool fill;           /* second pass: copy, else measure */
};

static inline struct item *items(const struct sorter *s)
{
    return (struct item *)(void *)s->base;
}

static inline struct goblin_slice elem(const struct sorter *s, size_t i)
{
    struct goblin_slice e = {s->base + items(s)[i].moff, items(s)[i].mlen};

    return e;
}

/* ---- reading the elements ---- */

static int take(void *ctx, struct goblin_slice m)
{
    struct sorter *s = ctx;

    if (s->fill) {
        struct item *it = &items(s)[s->n];

        it->moff = s->bytes;
        it->mlen = m.len;
        it->has_by = false;
        it->score = 0;
        if (m.len != 0)
            memcpy(s->base + s->bytes, m.ptr, m.len);
    }
    s->n++;
    s->bytes += m.len;
    if (m.len > s->max_mlen)
        s->max_mlen = m.len;
    return 0;
}

/* One pass over the key's elements in [start, stop] of their native
 * order (sorted sets with a do-not-sort BY), or all of them. */
static int walk(struct sorter *s, enum goblin_type t, int64_t start,
                int64_t stop, bool desc)
{
    goblin_store *st = s->x->st;

    if (t == GOBLIN_TYPE_SET) {
        int64_t r = goblin_set_foreach(st, s->a->key, take, s);

        return r < 0 ? (int)r : 0;
    }
    if (t == GOBLIN_TYPE_LIST) {
        /* DESC's range counts from the end; load() turns it around. */
        int64_t len = desc ? goblin_list_len(st, s->a->key) : 0;
        int64_t r = goblin_list_range(st, s->a->key,
                                      desc ? len - 1 - stop : start,
                                      desc ? len - 1 - start : stop, take, s);

        return r < 0 ? (int)r : 0;
    }
    struct goblin_zrange r = {0};
    struct goblin_zset_iter it;
    struct goblin_slice m;
    double sc;
    int64_t n;

    r.by = GOBLIN_ZRANGE_BY_RANK;
    r.rev = desc;
    r.start = start;
    r.stop = stop;
    n = goblin_zset_range(st, s->a->key, &r, &it);
    if (n < 0)
        return (int)n;
    while (goblin_zset_next(&it, &m, &sc))
        take(s, m);
    return 0;
}

/* Reads the elements into scratch: count and size, then copy. */
static int load(struct sorter *s, enum goblin_type t, int64_t start,
                int64_t stop, bool desc)
{
    size_t head;
    int rc;

    s->n = s->bytes = s->max_mlen = 0;
    s->fill = false;
    if ((rc = walk(s, t, start, stop, desc)) != 0)
        return rc;
    head = s->n * sizeof(struct item);
    s->cap = head + s->bytes;
    if ((s->base = goblin__scratch_bytes(s->x->sess, s->g0 + s->cap + 1)) ==
        NULL)
        return GOBLIN_ENOMEM;
    s->base += s->g0;
    s->fill = true;
    s->n = 0;
    s->bytes = head;
    if ((rc = walk(s, t, start, stop, desc)) != 0)
        return rc;
    for (size_t i = 0; t == GOBLIN_TYPE_LIST && desc && i < s->n / 2; i++) {
        struct item tmp = items(s)[i];

        items(s)[i] = items(s)[s->n - 1 - i];
        items(s)[s->n - 1 - i] = tmp;
    }
    return 0;
}

/* Grows scratch to cap bytes, keeping its content. *v, when it points
 * into the scratch (an element itself: no BY, or BY "#"), is moved with
 * it. */
static int grow(struct sorter *s, size_t cap, struct goblin_slice *v)
{
    uintptr_t lo = (uintptr_t)s->base, at = (uintptr_t)v->ptr;
    bool inside = v->len != 0 && at >= lo && at < lo + s->cap;
    uint8_t *b;

    if (cap <= s->cap)
        return 0;
    /* goblin__scratch_bytes keeps what the scratch holds as it grows. */
    if ((b = goblin__scratch_bytes(s->x->sess, s->g0 + cap)) == NULL)
        return GOBLIN_ENOMEM;
    s->base = b + s->g0;
    s->cap = cap;
    if (inside)
        v->ptr = s->base + (at - lo);
    return 0;
}

/* ---- patterns ---- */

/* The value pattern p names for element e: 1 and *v (borrowed), or 0.
 * "#" is e itself; no '*' names nothing; "...*...->field" a hash field.
 * The key is built in kb (room for the pattern plus the element). */
static int lookup(goblin__exec *x, struct goblin_slice p,
                  struct goblin_slice e, char *kb, struct goblin_slice *v)
{
    const char *pat = p.ptr, *star, *arrow = NULL;
    struct goblin_slice key, field;
    size_t pre, post;

    if (p.len == 1 && pat[0] == '#') {
        *v = e;
        return 1;
    }
    if ((star = memchr(pat, '*', p.len)) == NULL)
        return 0;
    for (const char *q = star + 1; q + 2 < pat + p.len; q++) {
        if (q[0] == '-' && q[1] == '>') {
            arrow = q;
            break;
        }
    }
    pre = (size_t)(star - pat);
    post = (size_t)((arrow != NULL ? arrow : pat + p.len) - star - 1);
    memcpy(kb, pat, pre);
    if (e.len != 0)
        memcpy(kb + pre, e.ptr, e.len);
    memcpy(kb + pre + e.len, star + 1, post);
    key.ptr = kb;
    key.len = pre + e.len + post;
    if (arrow == NULL)
        return goblin_str_get(x->st, key, v) == 1;
    field.ptr = arrow + 2;
    field.len = (size_t)(pat + p.len - arrow - 2);
    return goblin_hash_get(x->st, key, field, v) == 1;
}

/* strtod over the whole text, as Redis reads a weight. */
static bool weight(struct goblin_slice v, char *buf, double *out)
{
    char *end;

    memcpy(buf, v.ptr, v.len);
    buf[v.len] = '\0';
    errno = 0;
    *out = strtod(buf, &end);
    return *end == '\0' && errno != ERANGE && !isnan(*out) &&
           (size_t)(end - buf) == strlen(buf);
}

/* ---- ordering ---- */

struct order {
    const struct sorter *s;
    bool alpha, by, desc;
    bool binary; /* STORE: ALPHA compares all the bytes */
};

static int bytes_cmp(const uint8_t *a, size_t al, const uint8_t *b,
                     size_t bl)
{
    size_t n = al < bl ? al : bl;
    int c = n != 0 ? memcmp(a, b, n) : 0;

    return c != 0 ? c : (al > bl) - (al < bl);
}

/* strcoll in the C locale, which Redis's ALPHA uses without STORE: the
 * bytes up to the first NUL of each. */
static int cstr_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
    const uint8_t *za = memchr(a, 0, al), *zb = memchr(b, 0, bl);

    if (za != NULL)
        al = (size_t)(za - a);
    if (zb != NULL)
        bl = (size_t)(zb - b);
    return bytes_cmp(a, al, b, bl);
}

static int item_cmp(const void *pa, const void *pb, void *ctx)
{
    const struct order *o = ctx;
    const struct item *a = pa, *b = pb;
    const uint8_t *base = o->s->base;
    int c;

    if (!o->alpha) {
        c = a->score > b->score ? 1 : a->score < b->score ? -1
            : bytes_cmp(base + a->moff, a->mlen, base + b->moff, b->mlen);
    } else if (o->by) {
        if (!a->has_by || !b->has_by)
            c = a->has_by == b->has_by ? 0 : a->has_by ? 1 : -1;
        else
            c = (o->binary ? bytes_cmp : cstr_cmp)(base + a->boff, a->blen,
                                                   base + b->boff, b->blen);
    } else {
        c = (o->binary ? bytes_cmp : cstr_cmp)(base + a->moff, a->mlen,
                                               base + b->moff, b->mlen);
    }
    return o->desc ? -c : c;
}

/* Looks up every BY value (copied behind the elements) and, unless
 * ALPHA, every weight. Returns 0, 1 (a weight that is no number) or
 * GOBLIN_ENOMEM. */
static int weigh(struct sorter *s, const struct goblin_slice *by,
                 bool alpha, size_t kb_off, size_t kb_len)
{
    bool bad = false;

    for (size_t i = 0; i < s->n; i++) {
        struct goblin_slice e = elem(s, i), v = e;
        bool has = true;

        if (by != NULL)
            has = lookup(s->x, *by, e, (char *)s->base + kb_off, &v);
        if (!has)
            continue;
        if (by != NULL && alpha) {
            size_t off = s->bytes;

            if (grow(s, off + v.len + kb_len, &v) != 0)
                return GOBLIN_ENOMEM;
            /* The key buffer moves to the end; v may live in it ("#"
             * never reaches here: it is e, which is copied below). */
            memcpy(s->base + off, v.ptr, v.len);
            items(s)[i].boff = off;
            items(s)[i].blen = v.len;
            items(s)[i].has_by = true;
            s->bytes += v.len;
            kb_off = s->bytes;
            continue;
        }
        if (!alpha) {
            if (grow(s, kb_off + kb_len + v.len + 1, &v) != 0)
                return GOBLIN_ENOMEM;
            if (!weight(v, (char *)s->base + kb_off + kb_len,
                        &items(s)[i].score))
                bad = true;
        }
    }
    return bad ? 1 : 0;
}

/* ---- output ---- */

/* The GET patterns: the caller's, or the front of the scratch. */
static const struct goblin_slice *gets(const struct sorter *s)
{
    return s->a->get != NULL ? s->a->get : s->x->sess->scratch;
}

static void reply_range(struct sorter *s, size_t start, size_t count,
                        size_t kb_off)
{
    const struct goblin__sort *a = s->a;
    size_t per = a->nget != 0 ? a->nget : 1;

    goblin__reply_array(s->x, count * per);
    for (size_t j = start; j < start + count; j++) {
        struct goblin_slice e = elem(s, j), v;

        if (a->nget == 0)
            goblin__reply_slice(s->x, e);
        for (size_t g = 0; g < a->nget; g++) {
            if (lookup(s->x, gets(s)[g], e, (char *)s->base + kb_off, &v))
                goblin__reply_slice(s->x, v);
            else
                goblin__reply_null(s->x);
        }
    }
}

/* STORE: the result's n slices go behind the key buffer, then the bytes
 * of the GET values, copied so that no view of another key is held while
 * the list is built (a later lookup may expire a key looked up before).
 * Two passes: the first measures the values, the second copies them. */
static void store_range(struct sorter *s, size_t start, size_t count,
                        size_t kb_off, size_t kb_len)
{
    const struct goblin__sort *a = s->a;
    size_t per = a->nget != 0 ? a->nget : 1, nout, off, voff, vend;
    size_t vbytes = 0;
    struct goblin_slice *out, v;
    bool existed;
    char *kb;
    int64_t rc;

    if (count > SIZE_MAX / per / (2 * sizeof(*out))) {
        goblin__reply_code(s->x, GOBLIN_ENOMEM);
        return;
    }
    nout = count * per;
    off = (kb_off + kb_len + sizeof(*out) - 1) / sizeof(*out) * sizeof(*out);
    for (size_t j = start; j < start + count; j++)
        for (size_t g = 0; g < a->nget; g++)
            if (lookup(s->x, gets(s)[g], elem(s, j),
                       (char *)s->base + kb_off, &v))
                vbytes += v.len;
    voff = off + nout * sizeof(*out);
    if (vbytes > SIZE_MAX / 2 - voff ||
        grow(s, voff + vbytes + 1, &(struct goblin_slice){0}) != 0) {
        goblin__reply_code(s->x, GOBLIN_ENOMEM);
        return;
    }
    out = (struct goblin_slice *)(void *)(s->base + off);
    kb = (char *)s->base + kb_off;
    vend = voff + vbytes;
    for (size_t j = start, k = 0; j < start + count; j++) {
        struct goblin_slice e = elem(s, j);

        if (a->nget == 0)
            out[k++] = e;
        for (size_t g = 0; g < a->nget; g++) {
            out[k] = (struct goblin_slice){"", 0};
            if (lookup(s->x, gets(s)[g], e, kb, &v) &&
                v.len <= vend - voff) {
                if (v.len != 0)
                    memcpy(s->base + voff, v.ptr, v.len);
                out[k] = (struct goblin_slice){s->base + voff, v.len};
                voff += v.len;
            }
            k++;
        }
    }
    existed = goblin__notify_on(s->x, GOBLIN__NOTIFY_GENERIC) &&
              goblin_key_exists(s->x->st, *a->store);
    rc = goblin_list_replace(s->x->st, *a->store, out, nout);
    if (rc < 0) {
        goblin__reply_code(s->x, (int)rc);
        return;
    }
    goblin__reply_int(s->x, rc);
    goblin__notify_stored(s->x, GOBLIN__NOTIFY_LIST, "sortstore", *a->store,
                          rc, existed);
}

void goblin__exec_sort(goblin__exec *x, const struct goblin__sort *a)
{
    struct sorter s = {x, a, a->get != NULL ? 0 : a->nget *
                                 sizeof(struct goblin_slice),
                       NULL, 0, 0, 0, 0, false};
    enum goblin_type t;
    bool dontsort = a->dontsort, native = false, alpha = a->alpha;
    const struct goblin_slice *by = a->by;
    size_t maxpat, kb_off, kb_len, count;
    int64_t vlen, start, end;
    int rc;

    /* Redis's read lookups: the key once, then each BY and GET key (not
     * the GET keys of STORE, which are read twice here). */
    goblin__reads_begin(x);
    t = goblin_key_type(x->st, a->key);
    goblin__reads_done(x);
    if (t != GOBLIN_TYPE_NONE && t != GOBLIN_TYPE_SET &&
        t != GOBLIN_TYPE_ZSET && t != GOBLIN_TYPE_LIST) {
        goblin__reply_code(x, GOBLIN_EWRONGTYPE);
        return;
    }
    if (t == GOBLIN_TYPE_ZSET &&
        (rc = goblin__zset_sort_prepare(x->st, a->key)) != 0) {
        goblin__reply_code(x, rc);
        return;
    }
    vlen = t == GOBLIN_TYPE_SET    ? goblin_set_card(x->st, a->key)
           : t == GOBLIN_TYPE_ZSET ? goblin_zset_card(x->st, a->key)
           : t == GOBLIN_TYPE_LIST ? goblin_list_len(x->st, a->key)
                                   : 0;
    start = a->offset < 0 ? 0 : a->offset;
    end = a->count < 0 ? vlen - 1 : start + a->count - 1;
    if (start >= vlen) {
        start = vlen - 1;
        end = vlen - 2;
    }
    if (end >= vlen)
        end = vlen - 1;
    /* A sorted set or a list keeps its own order when nothing is sorted:
     * only the LIMIT range is read, in DESC's direction. A set stored
     * is sorted ALPHA, by the elements (Redis: the same result whatever
     * the encoding, for replicas and the AOF). */
    if ((t == GOBLIN_TYPE_ZSET || t == GOBLIN_TYPE_LIST) && dontsort)
        native = true;
    if (t == GOBLIN_TYPE_SET && dontsort && a->store != NULL) {
        dontsort = false;
        alpha = true;
        by = NULL;
    }
    maxpat = by != NULL ? by->len : 0;
    rc = native ? (end >= start ? load(&s, t, start, end, a->desc) : 0)
                : t != GOBLIN_TYPE_NONE ? load(&s, t, 0, -1, false) : 0;
    if (rc == 0 && s.base == NULL) {
        if ((s.base = goblin__scratch_bytes(x->sess, s.g0 + 1)) == NULL)
            rc = GOBLIN_ENOMEM;
        else
            s.base += s.g0;
    }
    if (rc != 0) {
        goblin__reply_code(x, rc);
        return;
    }
    if (native) {
        end -= start;
        start = 0;
    }
    for (size_t g = 0; g < a->nget; g++)
        if (gets(&s)[g].len > maxpat)
            maxpat = gets(&s)[g].len;
    kb_off = s.bytes;
    kb_len = maxpat + s.max_mlen + 1;
    if (grow(&s, kb_off + kb_len, &(struct goblin_slice){0}) != 0) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    if (!dontsort) {
        struct order o = {&s, alpha, by != NULL, a->desc, a->store != NULL};

        goblin__reads_begin(x);
        rc = weigh(&s, by, alpha, kb_off, kb_len);
        goblin__reads_done(x);
        if (rc < 0) {
            goblin__reply_code(x, rc);
            return;
        }
        if (rc == 1) {
            goblin__reply_error(x, "ERR One or more scores can't be "
                                   "converted into double");
            return;
        }
        kb_off = s.bytes;
        qsort_r(s.base, s.n, sizeof(struct item), item_cmp, &o);
    }
    count = end < start ? 0 : (size_t)(end - start + 1);
    if (count == 0)
        start = 0;
    if (a->store != NULL)
        store_range(&s, (size_t)start, count, kb_off, kb_len);
    else {
        goblin__reads_begin(x);
        reply_range(&s, (size_t)start, count, kb_off);
        goblin__reads_done(x);
    }
}

/* SORT key [BY pattern] [LIMIT offset count] [GET pattern ...]
 * [ASC|DESC] [ALPHA] [STORE destination]: Redis reads the options before
 * it looks at the key. The GET patterns go to the front of the session's
 * scratch array (a.get NULL), ahead of what the sort keeps there. */
static void sort_cmd(goblin__exec *x, int argc,
                     const struct goblin_slice *argv, bool ro)
{
    struct goblin__sort a = {argv[1], NULL, NULL, NULL, 0, 0, -1, false,
                             false, false};
    struct goblin_slice *gets;
    int64_t off, cnt;
    bool all_keys = goblin__acl_reads_all_keys(x->sess->acl);

    if (goblin__scratch_reserve(x->sess, (size_t)argc) != 0) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    gets = x->sess->scratch;
    for (int j = 2; j < argc; j++) {
        int left = argc - j - 1;

        if (goblin__arg_is(argv[j], "asc")) {
            a.desc = false;
        } else if (goblin__arg_is(argv[j], "desc")) {
            a.desc = true;
        } else if (goblin__arg_is(argv[j], "alpha")) {
            a.alpha = true;
        } else if (goblin__arg_is(argv[j], "limit") && left >= 2) {
            if (!goblin__arg_int64(x, argv[j + 1], &off, NULL) ||
                !goblin__arg_int64(x, argv[j + 2], &cnt, NULL))
                return;
            a.offset = off;
            a.count = cnt;
            j += 2;
        } else if (!ro && goblin__arg_is(argv[j], "store") && left >= 1) {
            a.store = &argv[++j];
        } else if (goblin__arg_is(argv[j], "by") && left >= 1) {
            /* A BY without '*' turns sorting off for good, even if a
             * later BY has one (Redis keeps the last pattern). */
            a.by = &argv[++j];
            if (memchr(a.by->ptr, '*', a.by->len) == NULL) {
                a.dontsort = true;
            } else if (!all_keys) {
                goblin__reply_error(x, "ERR BY option of SORT denied due "
                                       "to insufficient ACL permissions.");
                return;
            }
        } else if (goblin__arg_is(argv[j], "get") && left >= 1) {
            if (!all_keys) {
                goblin__reply_error(x, "ERR GET option of SORT denied due "
                                       "to insufficient ACL permissions.");
                return;
            }
            gets[a.nget++] = argv[++j];
        } else {
            goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
            return;
        }
    }
    goblin__exec_sort(x, &a);
}

void goblin__cmd_sort(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    sort_cmd(x, argc, argv, false);
}

void goblin__cmd_sort_ro(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    sort_cmd(x, argc, argv, true);
}
