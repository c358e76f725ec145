/* scan.c - walking the keyspace: SCAN with MATCH, TYPE and COUNT, a full
 * walk for KEYS and snapshots, and Redis's glob matching.
 *
 * SCAN visits ids from the top down. Keys only ever move to a lower id (a
 * swap-remove moves the last id into a hole) and new keys take ids at the
 * top, so a key present for the whole scan cannot jump over the position
 * being visited: it is returned at least once. The cursor is the next id
 * to visit plus one; 0 starts and ends a scan.
 */
#include "goblin/keys.h"
#include "store.h"

#define NESTING_MAX 1000

/* The pattern byte at i, or 0 past the end (Redis reads the terminating
 * NUL of its sds strings there). */
static inline int at(const uint8_t *p, size_t len, size_t i)
{
    return i < len ? (int)(signed char)p[i] : 0;
}

static inline int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

static int glob(const uint8_t *p, size_t plen, const uint8_t *s, size_t slen,
                int nocase, int *skip_longer, int nesting);

/* '*' at p[0]: tries the rest of the pattern at every suffix of s. */
static int glob_star(const uint8_t *p, size_t plen, const uint8_t *s,
                     size_t slen, int nocase, int *skip_longer, int nesting)
{
    while (plen > 1 && p[1] == '*') {
        p++;
        plen--;
    }
    if (plen == 1)
        return 1;
    while (slen > 0) {
        if (glob(p + 1, plen - 1, s, slen, nocase, skip_longer, nesting + 1))
            return 1;
        if (*skip_longer)
            return 0;
        s++;
        slen--;
    }
    /* No match of the rest anywhere in s: a longer match for an earlier
     * '*' cannot help either. */
    *skip_longer = 1;
    return 0;
}

/* '[' at p[-1]: matches one byte c against the set, advancing the pattern
 * to its closing ']' (or the pattern's last byte). */
static int glob_set(const uint8_t **pp, size_t *plenp, int c, int nocase)
{
    const uint8_t *p = *pp;
    size_t plen = *plenp;
    int not = at(p, plen, 0) == '^', match = 0;

    if (not) {
        p++;
        plen--;
    }
    for (;;) {
        if (at(p, plen, 0) == '\\' && plen >= 2) {
            p++;
            plen--;
            if (at(p, plen, 0) == c)
                match = 1;
        } else if (at(p, plen, 0) == ']') {
            break;
        } else if (plen == 0) {
            p--;
            plen++;
            break;
        } else if (plen >= 3 && at(p, plen, 1) == '-') {
            int lo = at(p, plen, 0), hi = at(p, plen, 2), x = c;

            if (lo > hi) {
                int t = lo;

                lo = hi;
                hi = t;
            }
            if (nocase) {
                lo = lower(lo);
                hi = lower(hi);
                x = lower(x);
            }
            p += 2;
            plen -= 2;
            if (x >= lo && x <= hi)
                match = 1;
        } else if (nocase ? lower(at(p, plen, 0)) == lower(c)
                          : at(p, plen, 0) == c) {
            match = 1;
        }
        p++;
        plen--;
    }
    *pp = p;
    *plenp = plen;
    return not ? !match : match;
}

/* Redis's stringmatchlen_impl, reading past the pattern's end as a NUL. */
static int glob(const uint8_t *p, size_t plen, const uint8_t *s, size_t slen,
                int nocase, int *skip_longer, int nesting)
{
    if (nesting > NESTING_MAX)
        return 0;
    while (plen > 0 && slen > 0) {
        int c = (int)(signed char)s[0];

        switch (p[0]) {
        case '*':
            return glob_star(p, plen, s, slen, nocase, skip_longer,
                             nesting);
        case '?':
            break;
        case '[':
            p++;
            plen--;
            if (!glob_set(&p, &plen, c, nocase))
                return 0;
            break;
        case '\\':
            if (plen >= 2) {
                p++;
                plen--;
            }
            /* fall through */
        default:
            if (nocase ? lower(at(p, plen, 0)) != lower(c)
                       : at(p, plen, 0) != c)
                return 0;
            break;
        }
        s++;
        slen--;
        p++;
        plen--;
        if (slen == 0) {
            while (plen > 0 && p[0] == '*') {
                p++;
                plen--;
            }
            break;
        }
    }
    return plen == 0 && slen == 0;
}

int goblin_glob_match(const void *pattern, size_t pattern_len,
                      const void *str, size_t str_len, int nocase)
{
    int skip_longer = 0;

    return glob(pattern, pattern_len, str, str_len, nocase, &skip_longer, 0);
}

/* ---- SCAN ---- */

static struct goblin_slice key_of(const uint8_t *rec)
{
    struct goblin__rec r;
    struct goblin_slice key;

    goblin__rec_parse(rec, &r);
    key.ptr = r.key;
    key.len = r.klen;
    return key;
}

static bool passes(const struct goblin_scan_options *o, const uint8_t *rec,
                   struct goblin_slice key)
{
    if (o == NULL)
        return true;
    if (o->type != GOBLIN_TYPE_NONE && goblin__rec_type(rec) != o->type)
        return false;
    /* Like Redis, "*" alone is no pattern at all: it even matches the
     * empty key, which stringmatchlen("*", "") does not. */
    if (o->match.ptr == NULL ||
        (o->match.len == 1 && *(const char *)o->match.ptr == '*'))
        return true;
    return goblin_glob_match(o->match.ptr, o->match.len, key.ptr, key.len,
                             0) != 0;
}

int goblin_key_scan(goblin_store *st, uint64_t cursor,
                    const struct goblin_scan_options *opts, goblin_key_fn fn,
                    void *ctx, uint64_t *next)
{
    size_t count = opts != NULL && opts->count != 0 ? opts->count : 10;
    int64_t now = goblin__expiry_now(st), pos;

    if (st->ks.count == 0) {
        *next = 0;
        return 0;
    }
    pos = (int64_t)st->ks.count - 1;
    if (cursor != 0 && cursor - 1 < (uint64_t)pos)
        pos = (int64_t)(cursor - 1);
    for (size_t i = 0; i < count && pos >= 0; i++, pos--) {
        uint8_t *rec = goblin__key_rec(st, (uint32_t)pos);
        struct goblin_slice key = key_of(rec);
        int64_t when = goblin__key_deadline(st, (uint32_t)pos);
        int r;

        if (when != -1 && now > when) {
            /* The last key moves here; it was visited or is new. */
            goblin__key_gone(st, GOBLIN__GONE_EXPIRED, key);
            goblin__key_drop_id(st, (uint32_t)pos);
            continue;
        }
        if (!passes(opts, rec, key))
            continue;
        r = fn(ctx, key);
        if (r != 0) {
            *next = (uint64_t)pos;
            return r;
        }
    }
    *next = (uint64_t)(pos + 1);
    return 0;
}

int goblin_key_foreach(goblin_store *st, goblin_key_visit_fn fn, void *ctx)
{
    int64_t now = goblin__expiry_now(st);

    for (size_t id = 0; id < st->ks.count; id++) {
        uint8_t *rec = goblin__key_rec(st, (uint32_t)id);
        struct goblin_key_info info;
        int r;

        info.key = key_of(rec);
        info.type = goblin__rec_type(rec);
        info.deadline_ms = goblin__key_deadline(st, (uint32_t)id);
        if (info.deadline_ms != -1 && now > info.deadline_ms)
            continue;
        info.value.ptr = NULL;
        info.value.len = 0;
        if (info.type == GOBLIN_TYPE_STRING)
            info.value = goblin__rec_str(rec);
        r = fn(ctx, &info);
        if (r != 0)
            return r;
    }
    return 0;
}
