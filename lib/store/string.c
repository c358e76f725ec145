/* string.c - string values (GET, SET and its options, GETSET, GETDEL,
 * GETEX, APPEND, STRLEN, SETRANGE, GETRANGE, the INCR family, MGET, MSET,
 * MSETNX, SETNX), stored inline in key records (see keyspace.c).
 *
 * Encodings follow Redis so OBJECT ENCODING agrees: a value set whole is
 * "int" when string2ll reads it and it has at most 20 bytes, else "embstr"
 * up to 44 bytes, else "raw"; INCR results are "int"; INCRBYFLOAT results
 * "embstr" or "raw" by length; APPEND to an existing key and a SETRANGE
 * that writes make "raw". Every encoding keeps the value as text, so reads
 * are views. Raw values keep spare room (doubling below 1 MB, then 1 MB
 * more, as Redis's sds does) so repeated APPENDs are amortized O(1).
 */
#include <math.h>

#include "bitmap.h"
#include "goblin/str.h"
#include "goblin/numtext.h"
#include "store.h"

#define MB ((size_t)1024 * 1024)

/* Finds key as a string. Returns 1 with *id and *rec, 0, or
 * GOBLIN_EWRONGTYPE. */
static int find_str(goblin_store *st, struct goblin_slice key, uint32_t *id,
                    uint8_t **rec)
{
    if (!goblin__key_find(st, key, id))
        return 0;
    *rec = goblin__key_rec(st, *id);
    if (goblin__rec_type(*rec) != GOBLIN_TYPE_STRING)
        return GOBLIN_EWRONGTYPE;
    return 1;
}

/* Redis's tryObjectEncoding, for a value set whole. */
static int enc_for(struct goblin_slice v)
{
    int64_t ll;

    if (v.len <= 20 && goblin_int64_parse(v.ptr, v.len, &ll) == 0)
        return GOBLIN__STR_INT;
    return v.len <= GOBLIN__EMBSTR_MAX ? GOBLIN__STR_EMB : GOBLIN__STR_RAW;
}

/* Whether a value of len bytes is past the store's limit, which is never
 * below the default: that is tested first, so a value under it costs one
 * compare with a constant, as before the limit could be raised. */
static inline bool too_long(const goblin_store *st, size_t len)
{
    return len > GOBLIN_STRING_MAX && len > goblin__string_limit(st);
}

/* Whether len bytes more on a value of cur bytes pass the limit. */
static bool grows_too_long(const goblin_store *st, size_t cur, size_t len)
{
    size_t max = goblin__string_limit(st);

    return cur > max || len > max - cur;
}

/* Room for a raw value growing to len, as sdsMakeRoomFor leaves it, within
 * what a record's 32-bit capacity holds. */
static size_t greedy(size_t len)
{
    if (len < MB)
        return len * 2;
    return len > GOBLIN_STRING_LIMIT - MB ? GOBLIN_STRING_LIMIT : len + MB;
}

/* Stores value whole under key. found/id: what goblin__key_find said.
 * Returns 0 or GOBLIN_ENOMEM (nothing changed). */
static int put_whole(goblin_store *st, struct goblin_slice key, int found,
                     uint32_t id, struct goblin_slice value, int enc, int ttl,
                     int64_t when)
{
    struct goblin__str_put p = {key, found, id, value.len, enc, value.len,
                                ttl, when};
    uint8_t *dst = goblin__key_put_str(st, &p);

    if (dst == NULL)
        return GOBLIN_ENOMEM;
    if (value.len != 0)
        memcpy(dst, value.ptr, value.len);
    return 0;
}

int goblin_str_get(goblin_store *st, struct goblin_slice key,
                   struct goblin_slice *out)
{
    return goblin__key_get_str(st, key, out);
}

int64_t goblin_str_len(goblin_store *st, struct goblin_slice key)
{
    uint32_t id;
    uint8_t *rec;
    int r = find_str(st, key, &id, &rec);

    if (r == 1)
        return (int64_t)goblin__rec_str(rec).len;
    return r;
}

/* The deadline a SET or GETEX option asks for, as Redis's
 * getExpireMillisecondsOrReply computes it. Returns 0 or GOBLIN_EINVAL. */
static int deadline_of(goblin_store *st, enum goblin_ttl_mode mode,
                       int64_t v, int64_t *when)
{
    int64_t base = 0;

    if (v <= 0)
        return GOBLIN_EINVAL;
    if (mode == GOBLIN_TTL_EX || mode == GOBLIN_TTL_EXAT) {
        if (v > INT64_MAX / 1000)
            return GOBLIN_EINVAL;
        v *= 1000;
    }
    if (mode == GOBLIN_TTL_EX || mode == GOBLIN_TTL_PX)
        base = goblin__now_ms(st);
    if (v > INT64_MAX - base)
        return GOBLIN_EINVAL;
    *when = v + base;
    return 0;
}

/* Checks SET's options and resolves the deadline into *ttl and *when. */
static int set_ttl(goblin_store *st, const struct goblin_set_options *o,
                   int *ttl, int64_t *when)
{
    if (o->cond != GOBLIN_SET_ALWAYS && o->cond != GOBLIN_SET_NX &&
        o->cond != GOBLIN_SET_XX)
        return GOBLIN_ESYNTAX;
    switch (o->ttl) {
    case GOBLIN_TTL_DEFAULT:
        *ttl = GOBLIN__TTL_CLEAR;
        return 0;
    case GOBLIN_TTL_KEEP:
        *ttl = GOBLIN__TTL_KEEP;
        return 0;
    case GOBLIN_TTL_EX:
    case GOBLIN_TTL_PX:
    case GOBLIN_TTL_EXAT:
    case GOBLIN_TTL_PXAT:
        *ttl = GOBLIN__TTL_SET;
        return deadline_of(st, o->ttl, o->ttl_value, when);
    default:
        return GOBLIN_ESYNTAX;
    }
}

int goblin_str_set(goblin_store *st, struct goblin_slice key,
                   struct goblin_slice value,
                   const struct goblin_set_options *opts,
                   struct goblin_slice *old)
{
    struct goblin_set_options o = {0};
    struct goblin_slice prev = {NULL, 0};
    int ttl = GOBLIN__TTL_CLEAR, found, had = 0, r;
    int64_t when = 0;
    uint32_t id = 0;
    uint8_t *rec = NULL;

    if (opts != NULL)
        o = *opts;
    r = set_ttl(st, &o, &ttl, &when);
    if (r != 0)
        return r;
    if (too_long(st, value.len))
        return GOBLIN_ESTRBIG;
    goblin__write_begin(st);
    found = goblin__key_find(st, key, &id);
    if (found) {
        rec = goblin__key_rec(st, id);
        had = goblin__rec_type(rec) == GOBLIN_TYPE_STRING;
        if (o.get && !had)
            return GOBLIN_EWRONGTYPE;
        if (had)
            prev = goblin__rec_str(rec);
    }
    if ((o.cond == GOBLIN_SET_NX && found) ||
        (o.cond == GOBLIN_SET_XX && !found)) {
        r = 0;
    } else {
        r = put_whole(st, key, found, id, value, enc_for(value), ttl, when);
        if (r != 0)
            return r;
        goblin__key_changed(st, key);
        r = GOBLIN_SET_DONE;
    }
    if (o.get && had) {
        *old = prev;
        r |= GOBLIN_SET_HAD_OLD;
    }
    return r;
}

int goblin_str_setnx(goblin_store *st, struct goblin_slice key,
                     struct goblin_slice value)
{
    struct goblin_set_options o = {GOBLIN_SET_NX, GOBLIN_TTL_DEFAULT, 0, 0};
    int r = goblin_str_set(st, key, value, &o, NULL);

    return r < 0 ? r : (r & GOBLIN_SET_DONE);
}

int goblin_str_getset(goblin_store *st, struct goblin_slice key,
                      struct goblin_slice value, struct goblin_slice *old)
{
    struct goblin_set_options o = {GOBLIN_SET_ALWAYS, GOBLIN_TTL_DEFAULT, 0,
                                   1};
    struct goblin_slice prev;
    int r = goblin_str_set(st, key, value, &o, &prev);

    if (r < 0)
        return r;
    if (r & GOBLIN_SET_HAD_OLD) {
        *old = prev;
        return 1;
    }
    return 0;
}

int goblin_str_getdel(goblin_store *st, struct goblin_slice key,
                      struct goblin_slice *out)
{
    uint32_t id;
    uint8_t *rec;
    int r;

    goblin__write_begin(st);
    r = find_str(st, key, &id, &rec);
    if (r != 1)
        return r;
    *out = goblin__rec_str(rec);
    goblin__key_changed(st, key);
    goblin__key_delete_id(st, id);
    return 1;
}

int goblin_str_getex(goblin_store *st, struct goblin_slice key,
                     enum goblin_ttl_mode ttl, int64_t value,
                     struct goblin_slice *out)
{
    uint32_t id;
    uint8_t *rec;
    int64_t when = 0;
    int r;

    goblin__write_begin(st);
    r = find_str(st, key, &id, &rec);
    if (r != 1)
        return r;
    if (ttl == GOBLIN_TTL_DEFAULT) {
        *out = goblin__rec_str(rec);
        return 1;
    }
    if (ttl == GOBLIN_TTL_PERSIST) {
        r = goblin__key_clear_deadline(st, id);
    } else if (ttl >= GOBLIN_TTL_EX && ttl <= GOBLIN_TTL_PXAT) {
        r = deadline_of(st, ttl, value, &when);
        if (r != 0)
            return r;
        if ((ttl == GOBLIN_TTL_EXAT || ttl == GOBLIN_TTL_PXAT) &&
            when <= goblin__now_ms(st) && !st->master_view) {
            *out = goblin__rec_str(rec);
            goblin__key_changed(st, key);
            goblin__key_delete_id(st, id);
            return 1;
        }
        r = goblin__key_set_deadline(st, id, when);
        if (r == 0)
            r = 1;
    } else {
        return GOBLIN_ESYNTAX;
    }
    if (r < 0)
        return r;
    if (r == 1)
        goblin__key_changed(st, key);
    *out = goblin__rec_str(goblin__key_rec(st, id));
    return 1;
}

/* Rebuilds the string at id (found) as raw with room for len bytes,
 * keeping its first keep bytes and its deadline, and returns where its
 * bytes now are, or NULL (GOBLIN_ENOMEM, nothing changed). */
static uint8_t *make_raw(goblin_store *st, struct goblin_slice key,
                         uint32_t id, size_t len, size_t keep)
{
    struct goblin_slice v = goblin__rec_str(goblin__key_rec(st, id));
    struct goblin__str_put p = {key, 1, id, len, GOBLIN__STR_RAW,
                                greedy(len), GOBLIN__TTL_KEEP, 0};
    uint8_t *dst = goblin__key_put_str(st, &p);

    /* The old record stays readable until the next write begins. */
    if (dst != NULL && keep != 0)
        memcpy(dst, v.ptr, keep);
    return dst;
}

int64_t goblin_str_append(goblin_store *st, struct goblin_slice key,
                          struct goblin_slice value)
{
    struct goblin_slice v;
    uint32_t id;
    uint8_t *rec, *dst;
    int r;

    goblin__write_begin(st);
    r = find_str(st, key, &id, &rec);
    if (r < 0)
        return r;
    if (r == 0) {
        if (too_long(st, value.len))
            return GOBLIN_ESTRBIG;
        r = put_whole(st, key, 0, 0, value, enc_for(value),
                      GOBLIN__TTL_CLEAR, 0);
        if (r != 0)
            return r;
        goblin__key_changed(st, key);
        return (int64_t)value.len;
    }
    v = goblin__rec_str(rec);
    if (grows_too_long(st, v.len, value.len))
        return GOBLIN_ESTRBIG;
    if (goblin__rec_str_enc(rec) == GOBLIN__STR_RAW &&
        goblin__rec_str_spare(rec) >= value.len) {
        dst = (uint8_t *)v.ptr;
        goblin__rec_str_set_len(rec, v.len + value.len);
    } else {
        dst = make_raw(st, key, id, v.len + value.len, v.len);
        if (dst == NULL)
            return GOBLIN_ENOMEM;
    }
    if (value.len != 0)
        memmove(dst + v.len, value.ptr, value.len);
    goblin__key_changed(st, key);
    return (int64_t)(v.len + value.len);
}

/* SETRANGE on a key that does not exist: a raw string of exactly the
 * needed length, zeros before offset. */
static int64_t setrange_new(goblin_store *st, struct goblin_slice key,
                            size_t offset, struct goblin_slice value)
{
    size_t len = offset + value.len;
    struct goblin__str_put p = {key, 0, 0, len, GOBLIN__STR_RAW, len,
                                GOBLIN__TTL_CLEAR, 0};
    uint8_t *dst = goblin__key_put_str(st, &p);

    if (dst == NULL)
        return GOBLIN_ENOMEM;
    memset(dst, 0, offset);
    memcpy(dst + offset, value.ptr, value.len);
    goblin__key_changed(st, key);
    return (int64_t)len;
}

int64_t goblin_str_setrange(goblin_store *st, struct goblin_slice key,
                            int64_t offset, struct goblin_slice value)
{
    struct goblin_slice v;
    uint32_t id;
    uint8_t *rec, *dst;
    size_t off = (size_t)offset, len;
    int r;

    if (offset < 0)
        return GOBLIN_EOFFSET;
    goblin__write_begin(st);
    r = find_str(st, key, &id, &rec);
    if (r < 0)
        return r;
    if (r == 1 && value.len == 0)
        return (int64_t)goblin__rec_str(rec).len;
    if (value.len == 0)
        return 0;
    if (grows_too_long(st, value.len, off))
        return GOBLIN_ESTRBIG;
    if (r == 0)
        return setrange_new(st, key, off, value);
    v = goblin__rec_str(rec);
    len = off + value.len > v.len ? off + value.len : v.len;
    if (goblin__rec_str_enc(rec) == GOBLIN__STR_RAW &&
        goblin__rec_str_spare(rec) >= len - v.len) {
        dst = (uint8_t *)v.ptr;
        goblin__rec_str_set_len(rec, len);
    } else {
        dst = make_raw(st, key, id, len, v.len);
        if (dst == NULL)
            return GOBLIN_ENOMEM;
    }
    if (off > v.len)
        memset(dst + v.len, 0, off - v.len);
    memmove(dst + off, value.ptr, value.len);
    goblin__key_changed(st, key);
    return (int64_t)len;
}

int goblin_str_getrange(goblin_store *st, struct goblin_slice key,
                        int64_t start, int64_t end, struct goblin_slice *out)
{
    struct goblin_slice v;
    uint32_t id;
    uint8_t *rec;
    int64_t n;
    int r = find_str(st, key, &id, &rec);

    if (r != 1)
        return r;
    v = goblin__rec_str(rec);
    n = (int64_t)v.len;
    out->ptr = v.ptr;
    out->len = 0;
    if (start < 0 && end < 0 && start > end)
        return 1;
    if (start < 0)
        start += n;
    if (end < 0)
        end += n;
    if (start < 0)
        start = 0;
    if (end < 0)
        end = 0;
    if (end >= n)
        end = n - 1;
    if (start > end || n == 0)
        return 1;
    out->ptr = (const uint8_t *)v.ptr + start;
    out->len = (size_t)(end - start + 1);
    return 1;
}

int goblin_str_incrby(goblin_store *st, struct goblin_slice key,
                      int64_t delta, int64_t *result)
{
    char buf[GOBLIN_INT64_TEXT_MAX];
    struct goblin_slice v = {buf, 0};
    int64_t old = 0;
    uint32_t id = 0;
    uint8_t *rec;
    int r;

    goblin__write_begin(st);
    r = find_str(st, key, &id, &rec);
    if (r < 0)
        return r;
    if (r == 1) {
        struct goblin_slice cur = goblin__rec_str(rec);

        if (goblin_int64_parse(cur.ptr, cur.len, &old) != 0)
            return GOBLIN_ENOTINT;
    }
    if ((delta < 0 && old < 0 && delta < INT64_MIN - old) ||
        (delta > 0 && old > 0 && delta > INT64_MAX - old))
        return GOBLIN_EOVERFLOW;
    v.len = goblin_int64_format(buf, old + delta);
    if (r == 1 && goblin__rec_str_enc(rec) == GOBLIN__STR_INT &&
        goblin__rec_str(rec).len == v.len) {
        /* Same length: write over the digits in place. */
        memcpy((uint8_t *)goblin__rec_str(rec).ptr, buf, v.len);
    } else {
        r = put_whole(st, key, r, id, v, GOBLIN__STR_INT,
                      r == 1 ? GOBLIN__TTL_KEEP : GOBLIN__TTL_CLEAR, 0);
        if (r != 0)
            return r;
    }
    goblin__key_changed(st, key);
    *result = old + delta;
    return 0;
}

int goblin_str_decrby(goblin_store *st, struct goblin_slice key,
                      int64_t delta, int64_t *result)
{
    if (delta == INT64_MIN)
        return GOBLIN_EOVERFLOW;
    return goblin_str_incrby(st, key, -delta, result);
}

/* INCRBYFLOAT after the type check: incr is given, or read from text. */
static int incrbyfloat(goblin_store *st, struct goblin_slice key,
                       const long double *incr, struct goblin_slice text,
                       struct goblin_slice *result)
{
    char buf[GOBLIN_LONG_DOUBLE_TEXT_MAX];
    struct goblin_slice v = {buf, 0};
    long double old = 0, add;
    uint32_t id = 0;
    uint8_t *rec;
    int r;

    goblin__write_begin(st);
    r = find_str(st, key, &id, &rec);
    if (r < 0)
        return r;
    if (r == 1) {
        struct goblin_slice cur = goblin__rec_str(rec);

        if (goblin_long_double_parse(cur.ptr, cur.len, &old) != 0)
            return GOBLIN_ENOTFLOAT;
    }
    if (incr != NULL)
        add = *incr;
    else if (goblin_long_double_parse(text.ptr, text.len, &add) != 0)
        return GOBLIN_ENOTFLOAT;
    old += add;
    if (isnan(old) || isinf(old))
        return GOBLIN_ENANINF;
    v.len = goblin_long_double_format(buf, sizeof(buf), old);
    r = put_whole(st, key, r, id, v,
                  v.len <= GOBLIN__EMBSTR_MAX ? GOBLIN__STR_EMB
                                              : GOBLIN__STR_RAW,
                  r == 1 ? GOBLIN__TTL_KEEP : GOBLIN__TTL_CLEAR, 0);
    if (r != 0)
        return r;
    goblin__key_changed(st, key);
    goblin_str_get(st, key, result);
    return 0;
}

int goblin_str_incrbyfloat(goblin_store *st, struct goblin_slice key,
                           long double incr, struct goblin_slice *result)
{
    struct goblin_slice none = {NULL, 0};

    return incrbyfloat(st, key, &incr, none, result);
}

int goblin_str_incrbyfloat_text(goblin_store *st, struct goblin_slice key,
                                struct goblin_slice incr,
                                struct goblin_slice *result)
{
    return incrbyfloat(st, key, NULL, incr, result);
}

size_t goblin_str_mget(goblin_store *st, const struct goblin_slice *keys,
                       size_t n, struct goblin_slice *out)
{
    size_t found = 0;

    for (size_t i = 0; i < n; i++) {
        out[i].ptr = NULL;
        out[i].len = 0;
        if (goblin_str_get(st, keys[i], &out[i]) == 1)
            found++;
    }
    return found;
}

int goblin_str_mset(goblin_store *st, const struct goblin_slice *keys,
                    const struct goblin_slice *values, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (too_long(st, values[i].len))
            return GOBLIN_ESTRBIG;
    goblin__write_begin(st);
    return goblin__key_mset(st, keys, values, n, enc_for);
}

int goblin_str_msetnx(goblin_store *st, const struct goblin_slice *keys,
                      const struct goblin_slice *values, size_t n)
{
    uint32_t id;
    int r;

    for (size_t i = 0; i < n; i++)
        if (too_long(st, values[i].len))
            return GOBLIN_ESTRBIG;
    goblin__write_begin(st);
    for (size_t i = 0; i < n; i++)
        if (goblin__key_find(st, keys[i], &id))
            return 0;
    r = goblin__key_mset(st, keys, values, n, enc_for);
    return r < 0 ? r : 1;
}

int goblin__str_grow_zero(goblin_store *st, struct goblin_slice key,
                          size_t len, uint8_t **bytes, size_t *out_len)
{
    struct goblin_slice v;
    uint32_t id = 0;
    uint8_t *rec, *dst;
    int r = find_str(st, key, &id, &rec);

    if (r < 0)
        return r;
    if (len > goblin__string_limit(st))
        return GOBLIN_ESTRBIG;
    if (r == 0) {
        /* A new string has exactly the length asked (sdsnewlen). */
        struct goblin__str_put p = {key, 0, 0, len, GOBLIN__STR_RAW, len,
                                    GOBLIN__TTL_CLEAR, 0};

        if ((dst = goblin__key_put_str(st, &p)) == NULL)
            return GOBLIN_ENOMEM;
        memset(dst, 0, len);
        *bytes = dst;
        *out_len = len;
        return 1;
    }
    v = goblin__rec_str(rec);
    if (len <= v.len && goblin__rec_str_enc(rec) == GOBLIN__STR_RAW) {
        *bytes = (uint8_t *)v.ptr;
        *out_len = v.len;
        return 0;
    }
    if (len <= v.len) {
        /* int or embstr: unshared into a raw string of the same bytes. */
        struct goblin__str_put p = {key, 1, id, v.len, GOBLIN__STR_RAW,
                                    v.len, GOBLIN__TTL_KEEP, 0};

        if ((dst = goblin__key_put_str(st, &p)) == NULL)
            return GOBLIN_ENOMEM;
        memcpy(dst, v.ptr, v.len);
        *bytes = dst;
        *out_len = v.len;
        return 0;
    }
    /* Growing keeps spare room as sdsgrowzero does, so SETBIT walking
     * up a bitmap is amortized O(1) per byte. */
    if (goblin__rec_str_enc(rec) == GOBLIN__STR_RAW &&
        goblin__rec_str_spare(rec) >= len - v.len) {
        dst = (uint8_t *)v.ptr;
        goblin__rec_str_set_len(rec, len);
    } else if ((dst = make_raw(st, key, id, len, v.len)) == NULL) {
        return GOBLIN_ENOMEM;
    }
    memset(dst + v.len, 0, len - v.len);
    *bytes = dst;
    *out_len = len;
    return 1;
}

uint8_t *goblin__str_put_raw(goblin_store *st, struct goblin_slice key,
                             size_t len, bool keep_ttl)
{
    uint32_t id = 0;
    int found = goblin__key_find(st, key, &id);
    struct goblin__str_put p = {key, found, id, len, GOBLIN__STR_RAW, len,
                                keep_ttl ? GOBLIN__TTL_KEEP
                                         : GOBLIN__TTL_CLEAR, 0};

    return goblin__key_put_str(st, &p);
}
