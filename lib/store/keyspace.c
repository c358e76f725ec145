/* keyspace.c - the one namespace of keys: dense ids, key records, the
 * swiss index over them, the expiry array, and the interface the type
 * modules build on.
 *
 * A record is one allocation per key:
 *
 *   byte 0     flags: bits 0-2 the type (enum goblin_type), bit 3 KF_EXP,
 *              bits 4-5 a string's encoding (int, embstr, raw)
 *   [4 bytes]  if KF_EXP: the key's position in the expiry array
 *   varint     key length, LEB128 (1-5 bytes)
 *   key bytes
 *   value      string int/embstr: 1 length byte (<= 44), the bytes;
 *              string raw: u32 length, u32 capacity, capacity bytes
 *              (so a string holds at most GOBLIN_STRING_LIMIT bytes);
 *              collections (hash, zset, list, set): zero padding to
 *              8-byte alignment, the object
 *              pointer (that pointer is the slot goblin__key_lookup gives).
 *
 * The page slot of an id holds the record's pointer and, in its top 16
 * bits (which user-space pointers leave zero on x86-64 and arm64), the
 * key's access stamp (evict.c: its access time on the store's coarse
 * clock, or its LFU counter): the stamp costs no byte per key. Swap-remove moves the whole slot,
 * stamp included; replacing a key's record keeps the stamp.
 *
 * Invariants: ids 0..count-1 each hold one record; the index maps every
 * key to its id; a record has KF_EXP exactly when the expiry array holds
 * (deadline, id) at the position the record names. A key is expired when
 * now > deadline (as Redis: at the deadline itself it still exists).
 */
#include <assert.h>

#include "hash.h"
#include "keyspace.h"
#include "list.h"
#include "set.h"
#include "store.h"
#include "zset.h"
#include "util/bytes_cmp.h"

#define KF_TYPE GOBLIN__REC_TYPE_MASK
#define KF_EXP 0x08
#define KF_ENC_SHIFT 4
#define KF_ENC (0x03 << KF_ENC_SHIFT)
#define PAGE GOBLIN__KS_PAGE
#define PAGE_SHIFT GOBLIN__KS_PAGE_SHIFT

/* ---- records ---- */

/* Frees a collection's object: the one place that knows which module
 * owns which type (a new collection type adds its case here). */
void goblin__obj_free(goblin_store *st, enum goblin_type type, void *obj)
{
    switch (type) {
    case GOBLIN_TYPE_HASH:
        goblin__hash_free(st, obj);
        break;
    case GOBLIN_TYPE_ZSET:
        goblin__zset_free(st, obj);
        break;
    case GOBLIN_TYPE_LIST:
        goblin__list_free(st, obj);
        break;
    case GOBLIN_TYPE_SET:
        goblin__set_free(st, obj);
        break;
    default:
        assert(!"a collection type without a free function");
        break;
    }
}

/* Copies a collection's object into store dst (COPY, MOVE): the other
 * place that knows every collection type (a new type adds its case here
 * too). Returns 0, or GOBLIN_ENOMEM / GOBLIN_ELIMIT with nothing
 * allocated. */
int goblin__obj_copy(goblin_store *dst, enum goblin_type type,
                     const void *obj, void **out)
{
    switch (type) {
    case GOBLIN_TYPE_HASH:
        return goblin__hash_obj_copy(dst, obj, out);
    case GOBLIN_TYPE_ZSET:
        return goblin__zset_obj_copy(dst, obj, out);
    case GOBLIN_TYPE_LIST:
        return goblin__list_obj_copy(dst, obj, out);
    case GOBLIN_TYPE_SET:
        return goblin__set_obj_copy(dst, obj, out);
    default:
        assert(!"a collection type without a copy function");
        return GOBLIN_EINVAL;
    }
}

static size_t varint_len(size_t v)
{
    size_t n = 1;

    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static size_t varint_put(uint8_t *p, size_t v)
{
    size_t n = 0;

    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

static size_t varint_get(const uint8_t *p, size_t *v)
{
    size_t n = 0, r = 0;
    unsigned shift = 0;

    do {
        r |= (size_t)(p[n] & 0x7F) << shift;
        shift += 7;
    } while (p[n++] & 0x80);
    *v = r;
    return n;
}

/* The header of rec, inline: keys shorter than 128 bytes (a one-byte
 * varint) take no loop. */
static inline void rec_parse(const uint8_t *rec, struct goblin__rec *r)
{
    size_t off = (rec[0] & KF_EXP) ? 5 : 1;

    if (rec[off] < 0x80) {
        r->klen = rec[off];
        off++;
    } else {
        off += varint_get(rec + off, &r->klen);
    }
    r->key = rec + off;
    r->voff = off + r->klen;
}

void goblin__rec_parse(const uint8_t *rec, struct goblin__rec *r)
{
    rec_parse(rec, r);
}

static inline size_t align8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static inline uint32_t get32(const uint8_t *p)
{
    uint32_t v;

    memcpy(&v, p, 4);
    return v;
}

static inline void put32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

/* Bytes the value part of a record of this type and encoding needs after
 * a header of voff bytes, for a string of cap bytes. */
static size_t value_size(int type, int enc, size_t voff, size_t cap)
{
    if (type != GOBLIN_TYPE_STRING)
        return align8(voff) - voff + sizeof(void *);
    if (enc == GOBLIN__STR_RAW)
        return 8 + cap;
    return 1 + cap;
}

size_t goblin__rec_size(const uint8_t *rec)
{
    struct goblin__rec r;
    int type = rec[0] & KF_TYPE, enc = (rec[0] & KF_ENC) >> KF_ENC_SHIFT;
    size_t cap = 0;

    goblin__rec_parse(rec, &r);
    if (type == GOBLIN_TYPE_STRING)
        cap = enc == GOBLIN__STR_RAW ? get32(rec + r.voff + 4)
                                     : rec[r.voff];
    return r.voff + value_size(type, enc, r.voff, cap);
}

/* A new record for key with the given flags whose value part holds a
 * string of cap bytes (ignored for other types). Writes the header and the
 * key; the caller fills the value. */
static uint8_t *rec_new(goblin_store *st, struct goblin_slice key,
                        unsigned flags, size_t cap, size_t *voff_out)
{
    int type = flags & KF_TYPE, enc = (flags & KF_ENC) >> KF_ENC_SHIFT;
    size_t voff, size;
    uint8_t *rec;

    if (key.len > UINT32_MAX || cap > UINT32_MAX)
        return NULL;
    voff = ((flags & KF_EXP) ? 5 : 1) + varint_len(key.len) + key.len;
    size = voff + value_size(type, enc, voff, cap);
    rec = goblin__alloc(st, size);
    if (rec == NULL)
        return NULL;
    memset(rec, 0, voff < size ? voff : size);
    rec[0] = (uint8_t)flags;
    if (key.len != 0)
        memcpy(rec + voff - key.len, key.ptr, key.len);
    varint_put(rec + ((flags & KF_EXP) ? 5 : 1), key.len);
    if (type != GOBLIN_TYPE_STRING)
        memset(rec + voff, 0, size - voff);
    *voff_out = voff;
    return rec;
}

static void **obj_slot(uint8_t *rec)
{
    struct goblin__rec r;

    goblin__rec_parse(rec, &r);
    return (void **)(void *)(rec + align8(r.voff));
}

void *goblin__rec_obj(const uint8_t *rec)
{
    return *obj_slot((uint8_t *)rec);
}

/* A string record's value, whose part starts at voff. */
static inline struct goblin_slice str_at(const uint8_t *rec, size_t voff)
{
    struct goblin_slice v;

    if (((rec[0] & KF_ENC) >> KF_ENC_SHIFT) == GOBLIN__STR_RAW) {
        v.len = get32(rec + voff);
        v.ptr = rec + voff + 8;
    } else {
        v.len = rec[voff];
        v.ptr = rec + voff + 1;
    }
    return v;
}

static inline struct goblin_slice rec_str(const uint8_t *rec)
{
    struct goblin__rec r;

    rec_parse(rec, &r);
    return str_at(rec, r.voff);
}

struct goblin_slice goblin__rec_str(const uint8_t *rec)
{
    return rec_str(rec);
}

static void rec_free(goblin_store *st, uint8_t *rec)
{
    void *obj = NULL;

    if ((rec[0] & KF_TYPE) != GOBLIN_TYPE_STRING)
        obj = *obj_slot(rec);
    if (obj != NULL)
        goblin__obj_free(st, (enum goblin_type)(rec[0] & KF_TYPE), obj);
    goblin__free(st, rec, goblin__rec_size(rec));
}

void goblin__write_begin(goblin_store *st)
{
    struct goblin__keyspace *ks = &st->ks;

    for (size_t i = 0; i < ks->nlimbo; i++)
        rec_free(st, ks->limbo[i]);
    ks->nlimbo = 0;
}

/* Keeps the bytes of rec, a record leaving the keyspace, until the next
 * write begins: a view of its key or value handed out, or passed in by
 * the caller, stays valid through the current call. A collection's object
 * is freed at once when the record owns it, else left alone (it moved to
 * another record). When all slots are taken the oldest is freed. */
static void retire_rec(goblin_store *st, uint8_t *rec, bool owns_obj)
{
    struct goblin__keyspace *ks = &st->ks;

    if ((rec[0] & KF_TYPE) != GOBLIN_TYPE_STRING) {
        void **slot = obj_slot(rec);

        if (owns_obj && *slot != NULL)
            goblin__obj_free(st, (enum goblin_type)(rec[0] & KF_TYPE),
                             *slot);
        *slot = NULL;
    }
    if (ks->nlimbo == GOBLIN__LIMBO) {
        rec_free(st, ks->limbo[0]);
        memmove(ks->limbo, ks->limbo + 1,
                (GOBLIN__LIMBO - 1) * sizeof(ks->limbo[0]));
        ks->nlimbo--;
    }
    ks->limbo[ks->nlimbo++] = rec;
}

static void retire(goblin_store *st, uint8_t *rec)
{
    retire_rec(st, rec, true);
}

/* ---- paged arrays ---- */

/* Makes room for entry n, the array's current count. Returns 1 when a page
 * was allocated (page_drop undoes it), 0 when there was room, or
 * GOBLIN_ENOMEM. */
static int page_reserve(goblin_store *st, void ***dir, size_t *np,
                        size_t *dcap, size_t n, size_t page_bytes)
{
    void *pg;

    if (n < *np * PAGE)
        return 0;
    if (*np == *dcap) {
        size_t nc = *dcap != 0 ? *dcap * 2 : 4;
        void **d = goblin__realloc(st, *dir, *dcap * sizeof(void *),
                                   goblin__mul(nc, sizeof(void *)));

        if (d == NULL)
            return GOBLIN_ENOMEM;
        *dir = d;
        *dcap = nc;
    }
    pg = goblin__alloc(st, page_bytes);
    if (pg == NULL)
        return GOBLIN_ENOMEM;
    (*dir)[(*np)++] = pg;
    return 1;
}

static void page_drop(goblin_store *st, void **dir, size_t *np,
                      size_t page_bytes)
{
    goblin__free(st, dir[--*np], page_bytes);
}

/* After a removal left n entries: frees pages while two are spare, and
 * the directory once no page is left. */
static void page_trim(goblin_store *st, void ***dir, size_t *np,
                      size_t *dcap, size_t n, size_t page_bytes)
{
    while (*np * PAGE >= n + 2 * PAGE)
        page_drop(st, *dir, np, page_bytes);
    if (n == 0) {
        while (*np > 0)
            page_drop(st, *dir, np, page_bytes);
        goblin__free(st, *dir, *dcap * sizeof(void *));
        *dir = NULL;
        *dcap = 0;
    }
}

#define REC_PAGE_BYTES (PAGE * sizeof(uintptr_t))

#if UINTPTR_MAX > 0xFFFFFFFFu
#define STAMP_SHIFT 48
#define PTR_MASK ((UINT64_C(1) << STAMP_SHIFT) - 1)
#else
#define STAMP_SHIFT 0 /* no room: 32-bit builds keep no access times */
#define PTR_MASK UINTPTR_MAX
#endif

static inline uintptr_t *slot_ref(const struct goblin__keyspace *ks,
                                  size_t id)
{
    return &((uintptr_t *)ks->pages[id >> PAGE_SHIFT])[id & (PAGE - 1)];
}

/* The record of id. */
static inline uint8_t *rec_at(const struct goblin__keyspace *ks, size_t id)
{
    return (uint8_t *)(*slot_ref(ks, id) & PTR_MASK);
}

/* Makes id hold rec, keeping the key's access stamp. */
static inline void rec_set(struct goblin__keyspace *ks, size_t id,
                           uint8_t *rec)
{
    uintptr_t *ref = slot_ref(ks, id);

    assert(((uintptr_t)rec & ~(uintptr_t)PTR_MASK) == 0);
    *ref = (*ref & ~(uintptr_t)PTR_MASK) | (uintptr_t)rec;
}

/* Makes the new id hold rec, stamped now. */
static inline void rec_set_new(goblin_store *st, size_t id, uint8_t *rec)
{
    assert(((uintptr_t)rec & ~(uintptr_t)PTR_MASK) == 0);
#if STAMP_SHIFT
    *slot_ref(&st->ks, id) = (uintptr_t)rec |
                             ((uintptr_t)goblin__stamp_new(st) << STAMP_SHIFT);
#else
    *slot_ref(&st->ks, id) = (uintptr_t)rec;
#endif
}

uint8_t *goblin__key_rec(const goblin_store *st, uint32_t id)
{
    return rec_at(&st->ks, id);
}

uint16_t goblin__key_stamp(const goblin_store *st, uint32_t id)
{
#if STAMP_SHIFT
    return (uint16_t)(*slot_ref(&st->ks, id) >> STAMP_SHIFT);
#else
    (void)st;
    (void)id;
    return 0;
#endif
}

void goblin__key_set_stamp(goblin_store *st, uint32_t id, uint16_t stamp)
{
#if STAMP_SHIFT
    uintptr_t *ref = slot_ref(&st->ks, id);

    *ref = (*ref & PTR_MASK) | ((uintptr_t)stamp << STAMP_SHIFT);
#else
    (void)st;
    (void)id;
    (void)stamp;
#endif
}

/* ---- the expiry array ---- */

static inline struct goblin__exp_page *epage(const struct goblin__keyspace
                                             *ks, size_t pos)
{
    return ks->epages[pos >> PAGE_SHIFT];
}

int64_t goblin__exp_when(const goblin_store *st, size_t pos)
{
    return epage(&st->ks, pos)->when[pos & (PAGE - 1)];
}

uint32_t goblin__exp_id(const goblin_store *st, size_t pos)
{
    return epage(&st->ks, pos)->id[pos & (PAGE - 1)];
}

static int exp_reserve(goblin_store *st)
{
    struct goblin__keyspace *ks = &st->ks;

    return page_reserve(st, &ks->epages, &ks->nepages, &ks->epages_cap,
                        ks->exp_count, sizeof(struct goblin__exp_page));
}

static void exp_unreserve(goblin_store *st)
{
    struct goblin__keyspace *ks = &st->ks;

    page_drop(st, ks->epages, &ks->nepages, sizeof(struct goblin__exp_page));
}

static void exp_set(struct goblin__keyspace *ks, size_t pos, uint32_t id,
                    int64_t when)
{
    struct goblin__exp_page *pg = epage(ks, pos);

    pg->when[pos & (PAGE - 1)] = when;
    pg->id[pos & (PAGE - 1)] = id;
}

/* Appends (when, id) for rec, which has KF_EXP; room was reserved. */
static void exp_push(struct goblin__keyspace *ks, uint8_t *rec, uint32_t id,
                     int64_t when)
{
    size_t pos = ks->exp_count++;

    exp_set(ks, pos, id, when);
    put32(rec + 1, (uint32_t)pos);
}

static void exp_remove(goblin_store *st, size_t pos)
{
    struct goblin__keyspace *ks = &st->ks;
    size_t last = --ks->exp_count;

    if (pos != last) {
        uint32_t id = goblin__exp_id(st, last);

        exp_set(ks, pos, id, goblin__exp_when(st, last));
        put32(rec_at(ks, id) + 1, (uint32_t)pos);
    }
    page_trim(st, &ks->epages, &ks->nepages, &ks->epages_cap, ks->exp_count,
              sizeof(struct goblin__exp_page));
}

/* ---- the index ---- */

static uint64_t rec_hash(const goblin_store *st, const uint8_t *rec)
{
    struct goblin__rec r;

    rec_parse(rec, &r);
    return goblin__hash_with(st->hash_secret, r.key, r.klen);
}

static uint64_t ks_hash(const void *owner, uint32_t id)
{
    const goblin_store *st = owner;

    return rec_hash(st, rec_at(&st->ks, id));
}

static bool ks_eq(const void *owner, uint32_t id, const void *key,
                  size_t len)
{
    const goblin_store *st = owner;
    struct goblin__rec r;

    rec_parse(rec_at(&st->ks, id), &r);
    return r.klen == len && goblin__bytes_eq(r.key, key, len);
}

static const struct goblin__swiss_ops ks_ops = {ks_hash, ks_eq};

static inline uint64_t key_hash(const goblin_store *st,
                               struct goblin_slice key)
{
    return goblin__hash_with(st->hash_secret, key.ptr, key.len);
}

/* One lookup: the key looked for, and what the match found on the way
 * (the id's page slot, its record, where the value starts), so a point
 * read reaches each of them once. */
struct probe {
    const goblin_store *st;
    struct goblin_slice key;
    uintptr_t *ref;
    uint8_t *rec;
    size_t voff;
};

static inline __attribute__((always_inline)) bool probe_match(void *ctx,
                                                              uint32_t id)
{
    struct probe *p = ctx;
    uintptr_t *ref = slot_ref(&p->st->ks, id);
    uint8_t *rec = (uint8_t *)(*ref & PTR_MASK);
    struct goblin__rec r;

    rec_parse(rec, &r);
    if (r.klen != p->key.len || !goblin__bytes_eq(r.key, p->key.ptr, r.klen))
        return false;
    p->ref = ref;
    p->rec = rec;
    p->voff = r.voff;
    return true;
}

/* Finds p->key, whose hash is hash, with the probe and the compare inline
 * (swiss.h). Returns 1 with *id and p's findings, or 0. */
static inline __attribute__((always_inline)) int probe_find(
    struct probe *p, uint64_t hash, uint32_t *id)
{
    return goblin__swiss_find_with(&p->st->ks.index, hash, probe_match, p,
                                   id);
}

/* Finds key without looking at its deadline. */
static inline int find_raw(const goblin_store *st, struct goblin_slice key,
                           uint64_t hash, uint32_t *id)
{
    struct probe p = {st, key, NULL, NULL, 0};

    return probe_find(&p, hash, id);
}

/* Gives rec the next id. Returns 0 or GOBLIN_ENOMEM with nothing changed
 * (rec stays the caller's). */
static int id_insert(goblin_store *st, uint64_t hash, uint8_t *rec)
{
    struct goblin__keyspace *ks = &st->ks;
    size_t id = ks->count;
    int grew;

    if (id >= UINT32_MAX)
        return GOBLIN_ENOMEM;
    grew = page_reserve(st, &ks->pages, &ks->npages, &ks->pages_cap, id,
                        REC_PAGE_BYTES);
    if (grew < 0)
        return grew;
    rec_set_new(st, id, rec);
    if (goblin__swiss_insert(st, &ks->index, &ks_ops, st, hash,
                             (uint32_t)id) != 0) {
        if (grew)
            page_drop(st, ks->pages, &ks->npages, REC_PAGE_BYTES);
        return GOBLIN_ENOMEM;
    }
    ks->count++;
    return 0;
}

/* Takes id out of the keyspace, moving the last id into its place, and
 * returns its record, which the caller frees or retires. Without drop_exp
 * the caller has handed the key's expiry entry to another key. */
static uint8_t *id_unlink_exp(goblin_store *st, uint32_t id, uint64_t hash,
                              bool drop_exp)
{
    struct goblin__keyspace *ks = &st->ks;
    uintptr_t *ref = slot_ref(ks, id);
    uint8_t *rec = rec_at(ks, id);
    size_t last = ks->count - 1;

    if (drop_exp && (rec[0] & KF_EXP))
        exp_remove(st, get32(rec + 1));
    goblin__swiss_erase(st, &ks->index, &ks_ops, st, hash, id);
    if (id != last) {
        uint8_t *lrec = rec_at(ks, last);

        *ref = *slot_ref(ks, last); /* the pointer and its stamp */
        goblin__swiss_retarget(&ks->index, rec_hash(st, lrec),
                               (uint32_t)last, id);
        if (lrec[0] & KF_EXP)
            exp_set(ks, get32(lrec + 1), id,
                    goblin__exp_when(st, get32(lrec + 1)));
    }
    ks->count--;
    page_trim(st, &ks->pages, &ks->npages, &ks->pages_cap, ks->count,
              REC_PAGE_BYTES);
    return rec;
}

static uint8_t *id_unlink(goblin_store *st, uint32_t id, uint64_t hash)
{
    return id_unlink_exp(st, id, hash, true);
}

void goblin__key_delete_id(goblin_store *st, uint32_t id)
{
    uint8_t *rec = rec_at(&st->ks, id);

    retire(st, id_unlink(st, id, rec_hash(st, rec)));
}

void goblin__key_drop_id(goblin_store *st, uint32_t id)
{
    uint8_t *rec = rec_at(&st->ks, id);

    rec_free(st, id_unlink(st, id, rec_hash(st, rec)));
}

/* Whether the caller's slice points into rec. */
static bool aliases(struct goblin_slice s, const uint8_t *rec)
{
    const uint8_t *p = s.ptr;

    return p != NULL && p >= rec && p < rec + goblin__rec_size(rec);
}

/* Whether the key at id has expired by now. */
static bool expired(const goblin_store *st, const uint8_t *rec)
{
    return (rec[0] & KF_EXP) &&
           goblin__expiry_now(st) > goblin__exp_when(st, get32(rec + 1));
}

/* goblin__key_find, inline, leaving p's findings for the caller. */
static inline __attribute__((always_inline)) int key_find(
    goblin_store *st, struct goblin_slice key, uint32_t *id,
    struct probe *p)
{
    uint64_t hash = key_hash(st, key);
    uint32_t i;
    uint8_t *rec;

    p->st = st;
    p->key = key;
    if (!probe_find(p, hash, &i)) {
        goblin__read_counted(st, 0, key);
        return 0;
    }
    rec = p->rec;
    if (expired(st, rec) && !__builtin_expect(st->master_view, 0)) {
        if (__builtin_expect(st->expire_paused, 0) && st->reads) {
            goblin__read_counted(st, 0, key);
            return 0;
        }
        /* Freed at once unless key is a view of this very record: a read
         * must not end the views that earlier calls handed out. */
        goblin__key_gone(st, GOBLIN__GONE_EXPIRED, key);
        if (aliases(key, rec))
            retire(st, id_unlink(st, i, hash));
        else
            rec_free(st, id_unlink(st, i, hash));
        goblin__read_counted(st, 0, key);
        return 0;
    }
    goblin__read_counted(st, 1, key);
#if STAMP_SHIFT
    if (!st->no_touch) {
        uintptr_t *ref = p->ref;
        uint16_t stamp = st->lfu ? goblin__stamp_touch(
                                       st, (uint16_t)(*ref >> STAMP_SHIFT))
                                 : st->lru_clock;
        uintptr_t v = (*ref & PTR_MASK) | ((uintptr_t)stamp << STAMP_SHIFT);

        if (*ref != v) /* a line already read; written only on change */
            *ref = v;
    }
#endif
    *id = i;
    return 1;
}

int goblin__key_find(goblin_store *st, struct goblin_slice key,
                     uint32_t *id)
{
    struct probe p;

    return key_find(st, key, id, &p);
}

int goblin__key_get_str(goblin_store *st, struct goblin_slice key,
                        struct goblin_slice *value)
{
    struct probe p;
    uint32_t id;
    const uint8_t *rec;

    if (!key_find(st, key, &id, &p))
        return 0;
    rec = p.rec;
    if ((rec[0] & KF_TYPE) != GOBLIN_TYPE_STRING)
        return GOBLIN_EWRONGTYPE;
    *value = str_at(rec, p.voff);
    return 1;
}

/* ---- the interface of the type modules ---- */

void goblin__keyspace_init(goblin_store *st)
{
    memset(&st->ks, 0, sizeof(st->ks));
    goblin__swiss_init(&st->ks.index);
}

static void free_all(goblin_store *st)
{
    struct goblin__keyspace *ks = &st->ks;

    goblin__evpool_clear(st);
    for (size_t id = 0; id < ks->count; id++)
        rec_free(st, rec_at(ks, id));
    ks->count = 0;
    ks->exp_count = 0;
    ks->exp_cursor = 0;
    page_trim(st, &ks->pages, &ks->npages, &ks->pages_cap, 0,
              REC_PAGE_BYTES);
    page_trim(st, &ks->epages, &ks->nepages, &ks->epages_cap, 0,
              sizeof(struct goblin__exp_page));
    goblin__swiss_free(st, &ks->index);
    goblin__write_begin(st);
}

void goblin__keyspace_free(goblin_store *st)
{
    free_all(st);
}

static uint8_t *rec_new_obj(goblin_store *st, struct goblin_slice key,
                            enum goblin_type type, void *obj)
{
    size_t voff;
    unsigned flags = (unsigned)type;
    uint8_t *rec;

    if (type == GOBLIN_TYPE_STRING) /* an empty string; obj is unused */
        flags |= GOBLIN__STR_EMB << KF_ENC_SHIFT;
    rec = rec_new(st, key, flags, 0, &voff);
    if (rec == NULL)
        return NULL;
    if (type == GOBLIN_TYPE_STRING)
        rec[voff] = 0;
    else
        *obj_slot(rec) = obj;
    return rec;
}

int goblin__key_lookup(goblin_store *st, struct goblin_slice key,
                       enum goblin_type type, void ***slot)
{
    struct probe p;
    uint32_t id;

    /* The probe's match holds the record and where its value starts. */
    if (!key_find(st, key, &id, &p))
        return 0;
    if ((p.rec[0] & KF_TYPE) != (unsigned)type)
        return GOBLIN_EWRONGTYPE;
    *slot = type == GOBLIN_TYPE_STRING
                ? NULL
                : (void **)(void *)(p.rec + align8(p.voff));
    return 1;
}

int goblin__key_add(goblin_store *st, struct goblin_slice key,
                    enum goblin_type type, void *obj)
{
    uint8_t *rec;

    /* Absent means goblin__key_lookup said so, which also deleted an
     * expired record of the key; otherwise the key would be there twice. */
    assert(!find_raw(st, key, key_hash(st, key), &(uint32_t){0}));
    rec = rec_new_obj(st, key, type, obj);
    if (rec == NULL)
        return GOBLIN_ENOMEM;
    if (id_insert(st, key_hash(st, key), rec) != 0) {
        goblin__free(st, rec, goblin__rec_size(rec));
        return GOBLIN_ENOMEM;
    }
    goblin__key_created(st, key);
    return 0;
}

/* Puts rec in place of the record at id, dropping the old one's deadline
 * unless rec took it over (then rec has KF_EXP and the same position). */
static void rec_swap(goblin_store *st, uint32_t id, uint8_t *rec)
{
    uint8_t *old = rec_at(&st->ks, id);

    if ((old[0] & KF_EXP) && !(rec[0] & KF_EXP))
        exp_remove(st, get32(old + 1));
    rec_set(&st->ks, id, rec);
    retire(st, old);
}

int goblin__key_replace(goblin_store *st, struct goblin_slice key,
                        enum goblin_type type, void *obj)
{
    uint32_t id;
    uint8_t *rec;

    rec = rec_new_obj(st, key, type, obj);
    if (rec == NULL)
        return GOBLIN_ENOMEM;
    if (goblin__key_find(st, key, &id)) {
        rec_swap(st, id, rec);
        return 0;
    }
    if (id_insert(st, key_hash(st, key), rec) != 0) {
        goblin__free(st, rec, goblin__rec_size(rec));
        return GOBLIN_ENOMEM;
    }
    goblin__key_created(st, key);
    return 0;
}

void goblin__key_remove(goblin_store *st, struct goblin_slice key)
{
    uint64_t hash = key_hash(st, key);
    uint32_t id;

    if (!find_raw(st, key, hash, &id)) {
        assert(!"goblin__key_remove: key is absent");
        return;
    }
    retire(st, id_unlink(st, id, hash));
}

/* ---- deadlines ---- */

/* A copy of rec under key with flags (KF_EXP or not: the position is left
 * for the caller), or NULL. A collection's object pointer is copied. */
static uint8_t *rec_copy(goblin_store *st, const uint8_t *rec,
                         struct goblin_slice key, unsigned flags)
{
    struct goblin__rec r;
    size_t voff, size = goblin__rec_size(rec), cap = 0;
    uint8_t *n;

    goblin__rec_parse(rec, &r);
    if ((rec[0] & KF_TYPE) == GOBLIN_TYPE_STRING)
        cap = (size - r.voff) - ((((rec[0] & KF_ENC) >> KF_ENC_SHIFT) ==
                                  GOBLIN__STR_RAW) ? 8 : 1);
    n = rec_new(st, key, flags, cap, &voff);
    if (n == NULL)
        return NULL;
    if ((rec[0] & KF_TYPE) == GOBLIN_TYPE_STRING)
        memcpy(n + voff, rec + r.voff, size - r.voff);
    else
        *obj_slot(n) = *obj_slot((uint8_t *)rec);
    return n;
}

static uint8_t *rec_copy_flags(goblin_store *st, const uint8_t *rec,
                               unsigned flags)
{
    struct goblin__rec r;
    struct goblin_slice key;

    goblin__rec_parse(rec, &r);
    key.ptr = r.key;
    key.len = r.klen;
    return rec_copy(st, rec, key, flags);
}

int64_t goblin__key_deadline(const goblin_store *st, uint32_t id)
{
    const uint8_t *rec = rec_at(&st->ks, id);

    if (!(rec[0] & KF_EXP))
        return -1;
    return goblin__exp_when(st, get32(rec + 1));
}

int goblin__key_set_deadline(goblin_store *st, uint32_t id, int64_t when)
{
    struct goblin__keyspace *ks = &st->ks;
    uint8_t *rec = rec_at(ks, id), *n;
    int grew;

    if (rec[0] & KF_EXP) {
        exp_set(ks, get32(rec + 1), id, when);
        return 0;
    }
    grew = exp_reserve(st);
    if (grew < 0)
        return grew;
    n = rec_copy_flags(st, rec, rec[0] | KF_EXP);
    if (n == NULL) {
        if (grew)
            exp_unreserve(st);
        return GOBLIN_ENOMEM;
    }
    exp_push(ks, n, id, when);
    rec_set(ks, id, n);
    retire_rec(st, rec, false);
    return 0;
}

int goblin__key_clear_deadline(goblin_store *st, uint32_t id)
{
    uint8_t *rec = rec_at(&st->ks, id), *n;

    if (!(rec[0] & KF_EXP))
        return 0;
    n = rec_copy_flags(st, rec, rec[0] & ~KF_EXP);
    if (n == NULL)
        return GOBLIN_ENOMEM;
    exp_remove(st, get32(rec + 1));
    rec_set(&st->ks, id, n);
    retire_rec(st, rec, false);
    return 1;
}

/* ---- string values ---- */

/* Gives the new record n the deadline the put asks for, given the record
 * old it replaces (NULL when the key is new). Space in the expiry array
 * was reserved when needed. */
static void put_deadline(goblin_store *st, const struct goblin__str_put *p,
                         uint8_t *old, uint8_t *n, uint32_t id)
{
    struct goblin__keyspace *ks = &st->ks;
    bool had = old != NULL && (old[0] & KF_EXP);

    if (!(n[0] & KF_EXP)) {
        if (had)
            exp_remove(st, get32(old + 1));
        return;
    }
    if (had) {
        put32(n + 1, get32(old + 1));
        if (p->ttl == GOBLIN__TTL_SET)
            exp_set(ks, get32(old + 1), id, p->when);
    } else {
        exp_push(ks, n, id, p->when);
    }
}

uint8_t *goblin__key_put_str(goblin_store *st, const struct goblin__str_put *p)
{
    struct goblin__keyspace *ks = &st->ks;
    uint8_t *old = p->found ? rec_at(ks, p->id) : NULL, *n;
    bool had = old != NULL && (old[0] & KF_EXP);
    bool exp = p->ttl == GOBLIN__TTL_SET || (p->ttl == GOBLIN__TTL_KEEP && had);
    size_t voff, cap = p->enc == GOBLIN__STR_RAW ? p->cap : p->len;
    int grew = 0;

    assert(p->enc == GOBLIN__STR_RAW || p->len <= GOBLIN__EMBSTR_MAX);
    n = rec_new(st, p->key, GOBLIN_TYPE_STRING | (exp ? KF_EXP : 0) |
                (unsigned)p->enc << KF_ENC_SHIFT, cap, &voff);
    if (n == NULL)
        return NULL;
    if (p->enc == GOBLIN__STR_RAW) {
        put32(n + voff, (uint32_t)p->len);
        put32(n + voff + 4, (uint32_t)cap);
        voff += 8;
    } else {
        n[voff++] = (uint8_t)p->len;
    }
    /* After the length is written: the failure path sizes the record
     * from it. */
    if (exp && !had && (grew = exp_reserve(st)) < 0)
        goto fail;
    if (old == NULL) {
        if (id_insert(st, key_hash(st, p->key), n) != 0)
            goto fail;
        goblin__key_created(st, p->key);
        put_deadline(st, p, NULL, n, (uint32_t)(ks->count - 1));
        return n + voff;
    }
    put_deadline(st, p, old, n, p->id);
    rec_set(ks, p->id, n);
    retire(st, old);
    return n + voff;
fail:
    if (grew > 0)
        exp_unreserve(st);
    goblin__free(st, n, goblin__rec_size(n));
    return NULL;
}

int goblin__rec_str_enc(const uint8_t *rec)
{
    return (rec[0] & KF_ENC) >> KF_ENC_SHIFT;
}

/* Room left in a raw string record beyond its length, or 0. */
size_t goblin__rec_str_spare(const uint8_t *rec)
{
    struct goblin__rec r;

    if (goblin__rec_str_enc(rec) != GOBLIN__STR_RAW)
        return 0;
    goblin__rec_parse(rec, &r);
    return get32(rec + r.voff + 4) - get32(rec + r.voff);
}

/* Sets the length of a raw string record within its capacity. */
void goblin__rec_str_set_len(uint8_t *rec, size_t len)
{
    struct goblin__rec r;

    goblin__rec_parse(rec, &r);
    assert(len <= get32(rec + r.voff + 4));
    put32(rec + r.voff, (uint32_t)len);
}

/* ---- MSET: all keys or none ---- */

struct mset_ent {
    uint8_t *rec;
    uint32_t id;
    bool inserted;
};

static uint8_t *rec_new_str(goblin_store *st, struct goblin_slice key,
                            struct goblin_slice value, int enc)
{
    size_t voff;
    uint8_t *rec = rec_new(st, key, GOBLIN_TYPE_STRING |
                           (unsigned)enc << KF_ENC_SHIFT, value.len, &voff);

    if (rec == NULL)
        return NULL;
    if (enc == GOBLIN__STR_RAW) {
        put32(rec + voff, (uint32_t)value.len);
        put32(rec + voff + 4, (uint32_t)value.len);
        voff += 8;
    } else {
        rec[voff++] = (uint8_t)value.len;
    }
    if (value.len != 0)
        memcpy(rec + voff, value.ptr, value.len);
    return rec;
}

/* Takes the keys added so far (the last ones, in order) out again and
 * frees every prepared record. */
static void mset_undo(goblin_store *st, struct mset_ent *e, size_t n)
{
    struct goblin__keyspace *ks = &st->ks;

    for (size_t i = n; i-- > 0;) {
        if (e[i].inserted)
            id_unlink(st, (uint32_t)(ks->count - 1), rec_hash(st, e[i].rec));
        if (e[i].rec != NULL)
            goblin__free(st, e[i].rec, goblin__rec_size(e[i].rec));
    }
}

int goblin__key_mset(goblin_store *st, const struct goblin_slice *keys,
                     const struct goblin_slice *values, size_t n,
                     int (*enc_for)(struct goblin_slice value))
{
    size_t bytes = goblin__mul(n, sizeof(struct mset_ent)), i;
    struct mset_ent *e;

    if (n == 0)
        return 0;
    e = goblin__alloc(st, bytes);
    if (e == NULL)
        return GOBLIN_ENOMEM;
    memset(e, 0, bytes);
    for (i = 0; i < n; i++) {
        e[i].rec = rec_new_str(st, keys[i], values[i], enc_for(values[i]));
        if (e[i].rec == NULL)
            goto fail;
    }
    for (i = 0; i < n; i++) {
        uint64_t hash = key_hash(st, keys[i]);

        if (find_raw(st, keys[i], hash, &e[i].id))
            continue;
        if (id_insert(st, hash, e[i].rec) != 0)
            goto fail;
        e[i].inserted = true;
        goblin__key_created(st, keys[i]);
    }
    for (i = 0; i < n; i++)
        goblin__key_changed(st, keys[i]);
    for (i = 0; i < n; i++)
        if (!e[i].inserted)
            rec_swap(st, e[i].id, e[i].rec);
    goblin__free(st, e, bytes);
    return 0;
fail:
    mset_undo(st, e, n);
    goblin__free(st, e, bytes);
    return GOBLIN_ENOMEM;
}

/* ---- the public key calls ---- */

int goblin_key_delete(goblin_store *st, struct goblin_slice key)
{
    uint32_t id;

    goblin__write_begin(st);
    if (!goblin__key_find(st, key, &id))
        return 0;
    goblin__key_changed(st, key);
    goblin__key_delete_id(st, id);
    return 1;
}

int goblin_key_exists(goblin_store *st, struct goblin_slice key)
{
    uint32_t id;

    return goblin__key_find(st, key, &id);
}

enum goblin_type goblin_key_type(goblin_store *st, struct goblin_slice key)
{
    uint32_t id;

    if (!goblin__key_find(st, key, &id))
        return GOBLIN_TYPE_NONE;
    return goblin__rec_type(rec_at(&st->ks, id));
}

size_t goblin_key_count(const goblin_store *st)
{
    return st->ks.count;
}

size_t goblin_key_expires_count(const goblin_store *st)
{
    return st->ks.exp_count;
}

size_t goblin_store_flush(goblin_store *st)
{
    struct goblin__keyspace *ks = &st->ks;
    size_t n = ks->count;

    goblin__write_begin(st);
    for (size_t id = 0; id < n; id++) {
        struct goblin__rec r;
        struct goblin_slice key;

        goblin__rec_parse(rec_at(ks, id), &r);
        key.ptr = r.key;
        key.len = r.klen;
        goblin__key_changed(st, key);
    }
    free_all(st);
    return n;
}

int goblin_key_random(goblin_store *st, struct goblin_slice *out)
{
    struct goblin__keyspace *ks = &st->ks;
    struct goblin__rec r;
    uint8_t *rec;

    /* Expired keys met on the way are deleted; after 100 tries the store
     * is taken to be all expired keys and one is returned anyway, as
     * Redis's dbRandomKey does. */
    for (int tries = 0; ks->count > 0; tries++) {
        uint32_t id = (uint32_t)(goblin__rand64(st) % ks->count);

        rec = rec_at(ks, id);
        goblin__rec_parse(rec, &r);
        if (tries < 100 && expired(st, rec)) {
            struct goblin_slice key = {r.key, r.klen};

            goblin__key_gone(st, GOBLIN__GONE_EXPIRED, key);
            goblin__key_drop_id(st, id);
            continue;
        }
        out->ptr = r.key;
        out->len = r.klen;
        return 1;
    }
    return 0;
}

int goblin_key_encoding(goblin_store *st, struct goblin_slice key,
                        const char **out)
{
    static const char *const str_enc[] = {"int", "embstr", "raw"};
    uint32_t id;
    uint8_t *rec;

    if (!goblin__key_find(st, key, &id))
        return 0;
    rec = rec_at(&st->ks, id);
    switch (goblin__rec_type(rec)) {
    case GOBLIN_TYPE_HASH:
        *out = goblin__hash_encoding(*obj_slot(rec));
        break;
    case GOBLIN_TYPE_ZSET:
        *out = goblin__zset_encoding(*obj_slot(rec));
        break;
    case GOBLIN_TYPE_LIST:
        *out = goblin__list_encoding(*obj_slot(rec));
        break;
    case GOBLIN_TYPE_SET:
        *out = goblin__set_encoding(*obj_slot(rec));
        break;
    default:
        *out = str_enc[goblin__rec_str_enc(rec)];
        break;
    }
    return 1;
}

static bool same_bytes(struct goblin_slice a, struct goblin_slice b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

/* Puts n, dst's new record, where dst is (did) or adds it. Returns the id
 * or GOBLIN_ENOMEM (n is then the caller's). dst is a new key either way,
 * as Redis deletes an existing dst before adding it. */
static int64_t rename_place(goblin_store *st, struct goblin_slice dst,
                            int dfound, uint32_t did, uint8_t *n)
{
    uint8_t *old;

    if (!dfound) {
        if (id_insert(st, key_hash(st, dst), n) != 0)
            return GOBLIN_ENOMEM;
        goblin__key_created(st, dst);
        return (int64_t)(st->ks.count - 1);
    }
    old = rec_at(&st->ks, did);
    if (old[0] & KF_EXP)
        exp_remove(st, get32(old + 1));
    rec_set_new(st, did, n);
    retire(st, old);
    goblin__key_created(st, dst);
    return did;
}

int goblin_key_rename(goblin_store *st, struct goblin_slice src,
                      struct goblin_slice dst, int nx)
{
    struct goblin__keyspace *ks = &st->ks;
    uint32_t sid, did = 0;
    uint8_t *srec, *n;
    int dfound;
    int64_t tid;

    goblin__write_begin(st);
    if (!goblin__key_find(st, src, &sid))
        return GOBLIN_ENOKEY;
    if (same_bytes(src, dst))
        return nx ? 0 : 1;
    dfound = goblin__key_find(st, dst, &did);
    if (dfound && nx)
        return 0;
    /* Deleting an expired dst may have moved src to another id. */
    find_raw(st, src, key_hash(st, src), &sid);
    srec = rec_at(ks, sid);
    n = rec_copy(st, srec, dst, srec[0]);
    if (n == NULL)
        return GOBLIN_ENOMEM;
    tid = rename_place(st, dst, dfound, did, n);
    if (tid < 0) {
        goblin__free(st, n, goblin__rec_size(n));
        return GOBLIN_ENOMEM;
    }
    goblin__key_set_stamp(st, (uint32_t)tid, goblin__key_stamp(st, sid));
    if (srec[0] & KF_EXP) {
        uint32_t pos = get32(srec + 1);

        put32(n + 1, pos);
        exp_set(ks, pos, (uint32_t)tid, goblin__exp_when(st, pos));
    }
    goblin__key_changed(st, src);
    goblin__key_changed(st, dst);
    retire_rec(st, id_unlink_exp(st, sid, key_hash(st, src), false), false);
    return 1;
}

size_t goblin__keyspace_overhead(const goblin_store *st)
{
    size_t main, expires;

    goblin__keyspace_overhead_parts(st, &main, &expires);
    return main + expires;
}

void goblin__keyspace_overhead_parts(const goblin_store *st, size_t *main,
                                     size_t *expires)
{
    const struct goblin__keyspace *ks = &st->ks;

    *main = goblin__swiss_bytes(&ks->index) + ks->npages * REC_PAGE_BYTES +
            ks->pages_cap * sizeof(void *);
    *expires = ks->nepages * sizeof(struct goblin__exp_page) +
               ks->epages_cap * sizeof(void *);
}

/* ---- checking (tests and fuzz targets) ---- */

/* The invariants in the comment at the top of this file, then each
 * collection's own (goblin__hash_obj_check, goblin__zset_obj_check). Reads
 * only; returns 0, or a negative number saying which check failed. */
int goblin__store_check(const goblin_store *st)
{
    const struct goblin__keyspace *ks = &st->ks;
    size_t exps = 0;

    if (goblin__swiss_count(&ks->index) != ks->count)
        return -1;
    if (ks->exp_count > ks->count)
        return -2;
    for (size_t id = 0; id < ks->count; id++) {
        const uint8_t *rec = rec_at(ks, id);
        struct goblin__rec r;
        struct goblin_slice key;
        uint32_t found;
        int type, rc;

        if (rec == NULL)
            return -3;
        type = rec[0] & KF_TYPE;
        goblin__rec_parse(rec, &r);
        key.ptr = r.key;
        key.len = r.klen;
        if (!find_raw(st, key, key_hash(st, key), &found) || found != id)
            return -4;
        if (rec[0] & KF_EXP) {
            size_t pos = get32(rec + 1);

            if (pos >= ks->exp_count || goblin__exp_id(st, pos) != id)
                return -5;
            exps++;
        }
        if (type == GOBLIN_TYPE_STRING) {
            int enc = (rec[0] & KF_ENC) >> KF_ENC_SHIFT;
            struct goblin_slice v = goblin__rec_str(rec);

            if (enc != GOBLIN__STR_RAW && v.len > GOBLIN__EMBSTR_MAX)
                return -6;
            if (enc == GOBLIN__STR_RAW && v.len > get32(rec + r.voff + 4))
                return -6;
            continue;
        }
        {
            void *obj = *obj_slot((uint8_t *)rec);

            if (obj == NULL)
                return -7;
            if (type == GOBLIN_TYPE_HASH)
                rc = goblin__hash_obj_check(st, obj);
            else if (type == GOBLIN_TYPE_ZSET)
                rc = goblin__zset_obj_check(obj) == 0 &&
                             goblin__zset_obj_card(obj) > 0 ? 0 : -1;
            else if (type == GOBLIN_TYPE_LIST)
                rc = goblin__list_obj_check(obj) == 0 &&
                             goblin__list_obj_len(obj) > 0 ? 0 : -1;
            else if (type == GOBLIN_TYPE_SET)
                rc = goblin__set_obj_check(st, obj);
            else
                return -8;
            if (rc != 0)
                return -100 + rc;
        }
    }
    if (exps != ks->exp_count)
        return -9;
    return 0;
}
