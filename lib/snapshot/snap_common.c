/* snap_common.c - what both loaders and the writer share: failure
 * reports, memory of a store or a plain allocator, the byte source, and
 * putting loaded keys into a store (or taking them all out again).
 *
 * Loaded keys go in through the keyspace's own calls (goblin__key_put_str,
 * goblin__key_add, goblin__key_set_deadline), which trust their callers:
 * a key added twice or a sorted set with a member twice would break the
 * store's invariants. So every key is looked up before it is added, and
 * sorted sets are checked for repeated members before the bulk build.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "goblin/numtext.h"
#include "goblin/str.h"
#include "snapshot_int.h"
#include "store/zset.h"

/* ---- results ---- */

int goblin__snap_fail(struct goblin_snapshot_result *res, int code,
                      uint64_t offset, const char *fmt, ...)
{
    va_list ap;

    if (res == NULL)
        return code;
    res->code = code;
    res->offset = offset;
    va_start(ap, fmt);
    vsnprintf(res->message, sizeof(res->message), fmt, ap);
    va_end(ap);
    return code;
}

const char *goblin__snap_keytext(char *buf, size_t cap, const void *key,
                                 size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *k = key;
    size_t o = 0;

    for (size_t i = 0; i < len && o + 8 < cap; i++) {
        if (o >= 48) {
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
        if (k[i] >= 0x20 && k[i] < 0x7f && k[i] != '\\' && k[i] != '\'') {
            buf[o++] = (char)k[i];
            continue;
        }
        buf[o++] = '\\';
        buf[o++] = 'x';
        buf[o++] = hex[k[i] >> 4];
        buf[o++] = hex[k[i] & 15];
    }
    buf[o] = '\0';
    return buf;
}

/* Kept for callers of the persistence header; every code's text lives in
 * goblin_strerror. */
const char *goblin_snapshot_strerror(int code)
{
    return goblin_strerror(code);
}

/* ---- memory ---- */

void *goblin__mem_alloc(const struct goblin__mem *m, size_t size)
{
    if (m->st != NULL)
        return goblin__alloc(m->st, size);
    if (m->al != NULL)
        return m->al->malloc(m->al->ctx, size);
    return malloc(size);
}

void goblin__mem_free(const struct goblin__mem *m, void *p, size_t size)
{
    if (p == NULL)
        return;
    if (m->st != NULL)
        goblin__free(m->st, p, size);
    else if (m->al != NULL)
        m->al->free(m->al->ctx, p, size);
    else
        free(p);
}

/* ---- byte source ---- */

int goblin__src_open(struct goblin__src *s, const char *path)
{
    struct stat sb;

    memset(s, 0, sizeof(*s));
    s->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (s->fd < 0)
        return -errno;
    if (fstat(s->fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        int r = S_ISREG(sb.st_mode) ? -errno : GOBLIN_EINVAL;

        close(s->fd);
        s->fd = -1;
        return r;
    }
    s->size = (uint64_t)sb.st_size;
    return 0;
}

void goblin__src_mem(struct goblin__src *s, const void *data, size_t len)
{
    memset(s, 0, sizeof(*s));
    s->fd = -1;
    s->mem = data;
    s->size = len;
}

void goblin__src_close(struct goblin__src *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
}

int goblin__src_read(struct goblin__src *s, void *dst, size_t n)
{
    uint8_t *d = dst;

    if (n > s->size - s->off)
        return GOBLIN_ESNAPTRUNC;
    if (s->fd < 0) {
        memcpy(d, s->mem + s->off, n);
        s->off += n;
        return 0;
    }
    while (n > 0) {
        ssize_t r = read(s->fd, d, n);

        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0)
            return GOBLIN_ESNAPTRUNC;
        d += r;
        n -= (size_t)r;
        s->off += (uint64_t)r;
    }
    return 0;
}

/* ---- keys ---- */

int goblin__snap_str_enc(struct goblin_slice v)
{
    int64_t ll;

    if (v.len <= 20 && goblin_int64_parse(v.ptr, v.len, &ll) == 0)
        return GOBLIN__STR_INT;
    return v.len <= GOBLIN__EMBSTR_MAX ? GOBLIN__STR_EMB : GOBLIN__STR_RAW;
}

/* enc when it is a valid encoding for v, else what SET would choose. */
static int keep_enc(struct goblin_slice v, int enc)
{
    int64_t ll;

    if (enc == GOBLIN__STR_RAW)
        return enc;
    if (enc == GOBLIN__STR_EMB && v.len <= GOBLIN__EMBSTR_MAX)
        return enc;
    if (enc == GOBLIN__STR_INT && v.len <= 20 &&
        goblin_int64_parse(v.ptr, v.len, &ll) == 0)
        return enc;
    return goblin__snap_str_enc(v);
}

int goblin__snap_put_str(goblin_store *st, struct goblin_slice key,
                         struct goblin_slice value, int enc,
                         int64_t deadline)
{
    struct goblin__str_put p;
    uint32_t id;
    uint8_t *dst;

    if (value.len > GOBLIN_STRING_LIMIT || key.len > UINT32_MAX)
        return GOBLIN_ELIMIT;
    if (goblin__key_find(st, key, &id))
        return GOBLIN_ESNAPFORMAT;
    memset(&p, 0, sizeof(p));
    p.key = key;
    p.len = value.len;
    p.enc = keep_enc(value, enc);
    p.cap = value.len;
    /* The deadline is set apart, not with GOBLIN__TTL_SET: when the
     * expiry array cannot grow, goblin__key_put_str frees its new record
     * before the record's length is written, with a size read from it. */
    p.ttl = GOBLIN__TTL_CLEAR;
    dst = goblin__key_put_str(st, &p);
    if (dst == NULL)
        return GOBLIN_ENOMEM;
    if (value.len != 0)
        memcpy(dst, value.ptr, value.len);
    if (deadline < 0)
        return 0;
    if (!goblin__key_find(st, key, &id) ||
        goblin__key_set_deadline(st, id, deadline) != 0) {
        goblin__key_remove(st, key);
        return GOBLIN_ENOMEM;
    }
    return 0;
}

static void obj_free(goblin_store *st, enum goblin_type type, void *obj)
{
    goblin__obj_free(st, type, obj);
}

int goblin__snap_put_obj(goblin_store *st, struct goblin_slice key,
                         enum goblin_type type, void *obj, int64_t deadline)
{
    uint32_t id;
    int r;

    if (key.len > UINT32_MAX) {
        obj_free(st, type, obj);
        return GOBLIN_ELIMIT;
    }
    if (goblin__key_find(st, key, &id)) {
        obj_free(st, type, obj);
        return GOBLIN_ESNAPFORMAT;
    }
    if ((r = goblin__key_add(st, key, type, obj)) != 0) {
        obj_free(st, type, obj);
        return r;
    }
    if (deadline < 0)
        return 0;
    if (!goblin__key_find(st, key, &id) ||
        (r = goblin__key_set_deadline(st, id, deadline)) != 0) {
        goblin__key_remove(st, key); /* frees obj */
        return GOBLIN_ENOMEM;
    }
    return 0;
}

void goblin__snap_rollback(goblin_store *st,
                           struct goblin_snapshot_result *res)
{
    while (st->ks.count > 0)
        goblin__key_drop_id(st, (uint32_t)(st->ks.count - 1));
    goblin__write_begin(st);
    res->keys = res->strings = res->hashes = res->zsets = 0;
    res->expires = res->expired = 0;
}

struct goblin_snapshot_result *goblin__snap_res_init(
    struct goblin_snapshot_result *res, struct goblin_snapshot_result *local)
{
    if (res == NULL)
        res = local;
    memset(res, 0, sizeof(*res));
    return res;
}

void *goblin__snap_rec_obj(const uint8_t *rec)
{
    struct goblin__rec r;
    void *obj;

    /* keyspace.c: the object pointer follows the key, at the next 8-byte
     * boundary of the record (tests check this against the lookup). */
    goblin__rec_parse(rec, &r);
    memcpy(&obj, rec + ((r.voff + 7) & ~(size_t)7), sizeof(obj));
    return obj;
}

/* ---- sorted sets ---- */

static bool same(struct goblin_slice a, struct goblin_slice b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

/* Whether some member of a compact-sized p (n <= 128) appears twice: an
 * open-addressing set of indexes on the stack. */
static bool has_repeat(goblin_store *st, const struct goblin_zpair *p,
                       size_t n)
{
    uint16_t slot[256] = {0};

    for (size_t i = 0; i < n; i++) {
        uint64_t h = goblin__hash_bytes(st->hash_seed, p[i].member.ptr,
                                        p[i].member.len);
        size_t j = (size_t)(h >> 56);

        for (; slot[j] != 0; j = (j + 1) & 255) {
            if (same(p[slot[j] - 1].member, p[i].member))
                return true;
        }
        slot[j] = (uint16_t)(i + 1);
    }
    return false;
}

/* memcmp order, a shorter prefix first: the order of members. */
static int member_cmp(struct goblin_slice a, struct goblin_slice b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int c = n == 0 ? 0 : memcmp(a.ptr, b.ptr, n);

    if (c != 0)
        return c;
    return a.len < b.len ? -1 : a.len > b.len;
}

/* Checks order and NaN; *compact says whether the set fits the compact
 * form. */
static bool sorted_ok(const struct goblin_zpair *p, size_t n, bool *compact)
{
    *compact = n <= GOBLIN__ZSET_COMPACT_MAX_ENTRIES;
    for (size_t i = 0; i < n; i++) {
        if (isnan(p[i].score))
            return false;
        if (p[i].member.len > GOBLIN__ZSET_COMPACT_MAX_VALUE)
            *compact = false;
        if (i > 0 && (p[i - 1].score > p[i].score ||
                      (p[i - 1].score == p[i].score &&
                       member_cmp(p[i - 1].member, p[i].member) >= 0)))
            return false;
    }
    return true;
}

int goblin__snap_zset_build(goblin_store *st, const struct goblin_zpair *p,
                            size_t n, void **out)
{
    bool compact;
    int r;

    if (n == 0 || n > UINT32_MAX - 1 || !sorted_ok(p, n, &compact))
        return GOBLIN_ESNAPFORMAT;
    if (!compact)
        return goblin__snap_zset_full(st, p, n, out);
    if (has_repeat(st, p, n))
        return GOBLIN_ESNAPFORMAT;
    r = goblin__zset_obj_from_sorted(st, p, n, out);
    return r == GOBLIN_EINVAL ? GOBLIN_ESNAPFORMAT : r;
}
