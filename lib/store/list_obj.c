/* list_obj.c - list objects in either form (list_impl.h): pushes and
 * deletions at any place, point reads and writes, LREM's filter, walks,
 * and the conversions between the forms.
 *
 * Invariants:
 *  - A compact object is one block whose cap is the content's exact size
 *    (a shrink the allocator refused may leave it bigger; harmless), at
 *    most GOBLIN__LIST_COMPACT_MAX bytes.
 *  - A full object's blocks are never empty; their positions are
 *    consecutive (slot j + 1 starts where slot j ends), slot 0 starts at
 *    head, and count is the sum of their elements.
 *  - A write either completes or leaves the elements as they were. A push
 *    of several elements that fails half way pops what it had pushed;
 *    pops and deletions never allocate (a shrink that fails is skipped),
 *    so the undo cannot fail. The form may have changed (a compact list
 *    turned full), which no command can see: OBJECT ENCODING says
 *    "quicklist" for both, as Redis 7.0 does.
 *  - A full object whose elements fit in one block of at most half the
 *    compact limit turns compact again; the gap between the two limits
 *    keeps a list that hovers near one from converting at every step.
 */
#include <assert.h>

#include "list_impl.h"

#define BLOCK_MAX GOBLIN__LIST_BLOCK_MAX
#define COMPACT_MAX GOBLIN__LIST_COMPACT_MAX
#define HDR GOBLIN__LB_HDR

static size_t content_bytes(const uint8_t *b)
{
    return HDR + goblin__lb_used(b) + goblin__lb_n(b);
}

static struct goblin__list_slot *slots(const struct goblin__list_full *f)
{
    return f->s + f->first;
}

size_t goblin__list_obj_len(const void *obj)
{
    if (obj == NULL)
        return 0;
    if (goblin__lobj_is_full(obj))
        return (size_t)goblin__lobj_full(obj)->count;
    return goblin__lb_n(obj);
}

size_t goblin__list_obj_bytes(const void *obj)
{
    const struct goblin__list_full *f;
    size_t bytes;

    if (obj == NULL)
        return 0;
    if (!goblin__lobj_is_full(obj))
        return goblin__lb_cap(obj);
    f = goblin__lobj_full(obj);
    bytes = sizeof(*f) + f->cap * sizeof(f->s[0]);
    for (uint32_t j = 0; j < f->nb; j++)
        bytes += goblin__lb_cap(slots(f)[j].b);
    return bytes;
}

static void full_free(goblin_store *st, struct goblin__list_full *f)
{
    for (uint32_t j = 0; j < f->nb; j++)
        goblin__lb_free_block(st, slots(f)[j].b);
    goblin__free(st, f->s, f->cap * sizeof(f->s[0]));
    goblin__free(st, f, sizeof(*f));
}

void goblin__list_free(goblin_store *st, void *obj)
{
    if (obj == NULL)
        return;
    if (goblin__lobj_is_full(obj))
        full_free(st, goblin__lobj_full(obj));
    else
        goblin__lb_free_block(st, obj);
}

const char *goblin__list_encoding(const void *obj)
{
    (void)obj;
    return "quicklist"; /* Redis 7.0 answers it for every list */
}

/* ---- the slot array ---- */

/* Makes room for `extra` more slots at the back (front: at the front),
 * recentring or growing the array. 0 or GOBLIN_ENOMEM (nothing changed). */
static int slot_room(goblin_store *st, struct goblin__list_full *f,
                     uint32_t extra, bool front)
{
    uint32_t ncap = f->cap, nfirst;
    struct goblin__list_slot *ns = f->s;

    if (front ? f->first >= extra : f->first + f->nb + extra <= f->cap)
        return 0;
    if ((size_t)f->nb + extra > f->cap / 2) {
        if (f->cap > UINT32_MAX / 4)
            return GOBLIN_ELIMIT;
        ncap = f->cap * 2 + 2 * extra;
        ns = goblin__realloc(st, f->s, f->cap * sizeof(f->s[0]),
                             ncap * sizeof(f->s[0]));
        if (ns == NULL)
            return GOBLIN_ENOMEM;
    }
    nfirst = (ncap - f->nb) / 2;
    memmove(ns + nfirst, ns + f->first, f->nb * sizeof(ns[0]));
    f->s = ns;
    f->cap = ncap;
    f->first = nfirst;
    return 0;
}

/* Gives the slots from j on their positions again, after a change in the
 * middle. */
static void renumber(struct goblin__list_full *f, uint32_t j)
{
    struct goblin__list_slot *s = slots(f);

    if (f->nb == 0)
        return;
    if (j == 0) {
        s[0].start = f->head;
        j = 1;
    }
    for (; j < f->nb; j++)
        s[j].start = s[j - 1].start + goblin__lb_n(s[j - 1].b);
}

/* Slot j and index k within it of the element at index idx (< count). */
static uint32_t locate(const struct goblin__list_full *f, uint64_t idx,
                       uint32_t *k)
{
    const struct goblin__list_slot *s = slots(f);
    int64_t pos = f->head + (int64_t)idx;
    uint32_t lo = 0, hi = f->nb - 1;

    if (pos >= s[hi].start) {
        lo = hi;
    } else {
        while (lo < hi) { /* the last slot starting at or before pos */
            uint32_t mid = lo + (hi - lo + 1) / 2;

            if (s[mid].start <= pos)
                lo = mid;
            else
                hi = mid - 1;
        }
    }
    *k = (uint32_t)(pos - s[lo].start);
    return lo;
}

/* A full object holding the compact block b (NULL: none). */
static int to_full(goblin_store *st, uint8_t *b,
                   struct goblin__list_full **out)
{
    struct goblin__list_full *f = goblin__alloc(st, sizeof(*f));

    if (f == NULL)
        return GOBLIN_ENOMEM;
    f->cap = 4;
    f->s = goblin__alloc(st, f->cap * sizeof(f->s[0]));
    if (f->s == NULL) {
        goblin__free(st, f, sizeof(*f));
        return GOBLIN_ENOMEM;
    }
    f->head = 0;
    f->first = 1;
    f->nb = 0;
    f->count = 0;
    if (b != NULL && goblin__lb_n(b) > 0) {
        f->s[1].b = b;
        f->s[1].start = 0;
        f->nb = 1;
        f->count = goblin__lb_n(b);
    } else {
        goblin__lb_free_block(st, b);
    }
    *out = f;
    return 0;
}

/* Turns a full object of one small block (or none) back into a compact
 * one. Allocates nothing. */
static void maybe_compact(goblin_store *st, void **objp)
{
    struct goblin__list_full *f;
    uint8_t *b;

    if (!goblin__lobj_is_full(*objp))
        return;
    f = goblin__lobj_full(*objp);
    if (f->nb != 1 || content_bytes(slots(f)[0].b) > COMPACT_MAX / 2)
        return;
    b = slots(f)[0].b;
    f->nb = 0;
    full_free(st, f);
    *objp = b;
    b = goblin__lb_resize(st, b, content_bytes(b));
    if (b != NULL)
        *objp = b;
}

/* ---- pushes ---- */

/* Pushes one element at an end of a full object. */
static int full_push(goblin_store *st, struct goblin__list_full *f,
                     bool head, struct goblin_slice e)
{
    size_t cost = goblin__lb_cost(e.len);
    struct goblin__list_slot *s;
    uint8_t *b;
    int rc;

    if (f->nb > 0) {
        uint32_t j = head ? 0 : f->nb - 1;

        s = &slots(f)[j];
        b = s->b;
        if (goblin__lb_free(b) < cost &&
            content_bytes(b) + cost <= BLOCK_MAX) {
            if ((b = goblin__lb_resize(st, b, BLOCK_MAX)) == NULL)
                return GOBLIN_ENOMEM;
            s->b = b;
        }
        if (goblin__lb_free(b) >= cost) {
            goblin__lb_insert(b, head ? 0 : goblin__lb_n(b),
                              head ? 0 : goblin__lb_used(b), e);
            if (head)
                s->start = --f->head;
            f->count++;
            return 0;
        }
    }
    if ((rc = slot_room(st, f, 1, head)) != 0)
        return rc;
    b = goblin__lb_new(st, cost + HDR > BLOCK_MAX ? cost + HDR : BLOCK_MAX);
    if (b == NULL)
        return GOBLIN_ENOMEM;
    goblin__lb_insert(b, 0, 0, e);
    if (head) {
        f->first--;
        slots(f)[0].b = b;
        slots(f)[0].start = --f->head;
    } else {
        slots(f)[f->nb].b = b;
        slots(f)[f->nb].start = f->head + (int64_t)f->count;
    }
    f->nb++;
    f->count++;
    return 0;
}

static void full_delete(goblin_store *st, struct goblin__list_full *f,
                        uint64_t idx, uint64_t cnt);

static int check_elems(const struct goblin_slice *e, size_t n,
                       size_t *total)
{
    *total = 0;
    for (size_t i = 0; i < n; i++) {
        if (e[i].len > GOBLIN__LIST_ELEM_MAX)
            return GOBLIN_ELIMIT;
        *total += goblin__lb_cost(e[i].len);
        if (*total > SIZE_MAX / 2)
            return GOBLIN_ELIMIT;
    }
    return 0;
}

/* Pushes into a compact block (NULL: none) that stays compact. */
static int compact_push(goblin_store *st, void **objp, bool head,
                        const struct goblin_slice *e, size_t n,
                        size_t total)
{
    uint8_t *b = *objp;
    size_t cap = (b != NULL ? content_bytes(b) : HDR) + total;

    b = b != NULL ? goblin__lb_resize(st, b, cap) : goblin__lb_new(st, cap);
    if (b == NULL)
        return GOBLIN_ENOMEM;
    for (size_t i = 0; i < n; i++)
        goblin__lb_insert(b, head ? 0 : goblin__lb_n(b),
                          head ? 0 : goblin__lb_used(b), e[i]);
    *objp = b;
    return 0;
}

int goblin__list_obj_push(goblin_store *st, void **objp,
                          enum goblin_list_end end,
                          const struct goblin_slice *e, size_t n)
{
    bool head = end == GOBLIN_LIST_HEAD;
    struct goblin__list_full *f;
    size_t total;
    int rc;

    if ((rc = check_elems(e, n, &total)) != 0)
        return rc;
    if (n == 0)
        return 0;
    if (*objp == NULL || !goblin__lobj_is_full(*objp)) {
        size_t cur = *objp != NULL ? content_bytes(*objp) : HDR;

        if (cur + total <= COMPACT_MAX)
            return compact_push(st, objp, head, e, n, total);
        if ((rc = to_full(st, *objp, &f)) != 0)
            return rc;
        *objp = goblin__lobj_of_full(f);
    }
    f = goblin__lobj_full(*objp);
    for (size_t i = 0; i < n; i++) {
        if ((rc = full_push(st, f, head, e[i])) != 0) {
            if (i > 0)
                full_delete(st, f, head ? 0 : f->count - i, i);
            return rc;
        }
    }
    return 0;
}

/* ---- deletion ---- */

static void full_delete(goblin_store *st, struct goblin__list_full *f,
                        uint64_t idx, uint64_t cnt)
{
    struct goblin__list_slot *s = slots(f);
    uint64_t left = cnt, old = f->count;
    uint32_t k, j0, j, w;

    if (cnt == 0)
        return;
    j0 = locate(f, idx, &k);
    for (j = j0; left > 0; j++, k = 0) {
        uint32_t n = goblin__lb_n(s[j].b);
        uint32_t m = left < n - k ? (uint32_t)left : n - k;

        if (m == n) {
            goblin__lb_free_block(st, s[j].b);
            s[j].b = NULL;
        } else {
            goblin__lb_delete(s[j].b, k, goblin__lb_offset(s[j].b, k), m);
        }
        left -= m;
    }
    for (w = j0, k = j0; k < f->nb; k++)
        if (s[k].b != NULL)
            s[w++] = s[k];
    f->nb = w;
    f->count -= cnt;
    if (idx == 0) {
        f->head += (int64_t)cnt;
        if (f->nb > 0)
            s[0].start = f->head;
    } else if (idx + cnt != old) {
        renumber(f, j0);
    }
}

void goblin__list_obj_delete(goblin_store *st, void **objp, uint64_t idx,
                             uint64_t cnt)
{
    uint8_t *b;

    if (cnt == 0)
        return;
    if (goblin__lobj_is_full(*objp)) {
        full_delete(st, goblin__lobj_full(*objp), idx, cnt);
        maybe_compact(st, objp);
        return;
    }
    b = *objp;
    goblin__lb_delete(b, (uint32_t)idx, goblin__lb_offset(b, (uint32_t)idx),
                      (uint32_t)cnt);
    if ((b = goblin__lb_resize(st, b, content_bytes(b))) != NULL)
        *objp = b;
}

/* ---- point reads ---- */

struct goblin_slice goblin__list_obj_at(const void *obj, uint64_t idx)
{
    const uint8_t *b = obj;
    uint32_t k = (uint32_t)idx;

    if (goblin__lobj_is_full(obj)) {
        const struct goblin__list_full *f = goblin__lobj_full(obj);

        b = slots(f)[locate(f, idx, &k)].b;
    }
    return goblin__lb_elem(b, k, goblin__lb_offset(b, k));
}

/* ---- inserts and replacements in the middle ---- */

/* Inserts e at k of slot j's block, which lacks room: splits the block at
 * k, the new right part getting room for e too. */
static int full_split_insert(goblin_store *st, struct goblin__list_full *f,
                             uint32_t j, uint32_t k, struct goblin_slice e)
{
    size_t cost = goblin__lb_cost(e.len), span, cap;
    uint8_t *b = slots(f)[j].b, *c;
    uint32_t n = goblin__lb_n(b), off = goblin__lb_offset(b, k);
    struct goblin__list_slot *s;
    int rc;

    span = goblin__lb_span_bytes(b, k, off, n - k);
    cap = HDR + span + cost;
    if (cap < BLOCK_MAX)
        cap = BLOCK_MAX;
    if ((c = goblin__lb_new(st, cap)) == NULL)
        return GOBLIN_ENOMEM;
    if ((rc = slot_room(st, f, 1, false)) != 0) {
        goblin__lb_free_block(st, c);
        return rc;
    }
    s = slots(f);
    goblin__lb_append_from(c, b, k, off, n - k);
    goblin__lb_delete(b, k, off, n - k);
    memmove(s + j + 2, s + j + 1, (f->nb - j - 1) * sizeof(s[0]));
    s[j + 1].b = c;
    f->nb++;
    if (k > 0 && goblin__lb_free(b) >= cost)
        goblin__lb_insert(b, k, goblin__lb_used(b), e);
    else
        goblin__lb_insert(c, 0, 0, e);
    if (goblin__lb_n(b) == 0) { /* k was 0: the left part is empty */
        goblin__lb_free_block(st, b);
        memmove(s + j, s + j + 1, (f->nb - j - 1) * sizeof(s[0]));
        f->nb--;
    }
    f->count++;
    renumber(f, j);
    return 0;
}

static int full_insert(goblin_store *st, struct goblin__list_full *f,
                       uint64_t idx, struct goblin_slice e)
{
    size_t cost = goblin__lb_cost(e.len);
    uint32_t j, k;
    uint8_t *b;

    if (idx == 0 || idx == f->count)
        return full_push(st, f, idx == 0, e);
    j = locate(f, idx, &k);
    if (k == 0) { /* the end of the block before may have room */
        uint8_t *p = slots(f)[j - 1].b;

        if (goblin__lb_free(p) >= cost ||
            content_bytes(p) + cost <= BLOCK_MAX) {
            j--;
            k = goblin__lb_n(p);
        }
    }
    b = slots(f)[j].b;
    if (goblin__lb_free(b) < cost && content_bytes(b) + cost <= BLOCK_MAX) {
        if ((b = goblin__lb_resize(st, b, BLOCK_MAX)) == NULL)
            return GOBLIN_ENOMEM;
        slots(f)[j].b = b;
    }
    if (goblin__lb_free(b) < cost)
        return full_split_insert(st, f, j, k, e);
    goblin__lb_insert(b, k, goblin__lb_offset(b, k), e);
    f->count++;
    renumber(f, j + 1);
    return 0;
}

int goblin__list_obj_insert(goblin_store *st, void **objp, uint64_t idx,
                            struct goblin_slice e)
{
    struct goblin__list_full *f;
    uint8_t *b = *objp;
    size_t cost = goblin__lb_cost(e.len);
    int rc;

    if (e.len > GOBLIN__LIST_ELEM_MAX)
        return GOBLIN_ELIMIT;
    if (!goblin__lobj_is_full(b)) {
        if (content_bytes(b) + cost <= COMPACT_MAX) {
            if ((b = goblin__lb_resize(st, b, content_bytes(b) + cost)) ==
                NULL)
                return GOBLIN_ENOMEM;
            goblin__lb_insert(b, (uint32_t)idx,
                              goblin__lb_offset(b, (uint32_t)idx), e);
            *objp = b;
            return 0;
        }
        if ((rc = to_full(st, b, &f)) != 0)
            return rc;
        *objp = goblin__lobj_of_full(f);
    }
    return full_insert(st, goblin__lobj_full(*objp), idx, e);
}

/* Replaces element k (data at off) of b with e where the block has the
 * room for it. */
static void replace_in(uint8_t *b, uint32_t k, uint32_t off,
                       struct goblin_slice old, struct goblin_slice e)
{
    if (old.len == e.len) {
        if (e.len > 0)
            memcpy((void *)old.ptr, e.ptr, e.len);
        return;
    }
    goblin__lb_delete(b, k, off, 1);
    goblin__lb_insert(b, k, off, e);
}

int goblin__list_obj_set(goblin_store *st, void **objp, uint64_t idx,
                         struct goblin_slice e)
{
    size_t cost = goblin__lb_cost(e.len), ocost, need;
    uint32_t j = 0, k = (uint32_t)idx, off;
    struct goblin__list_full *f = NULL;
    struct goblin_slice old;
    uint8_t *b = *objp;
    int rc;

    if (e.len > GOBLIN__LIST_ELEM_MAX)
        return GOBLIN_ELIMIT;
    if (goblin__lobj_is_full(b)) {
        f = goblin__lobj_full(b);
        j = locate(f, idx, &k);
        b = slots(f)[j].b;
    }
    off = goblin__lb_offset(b, k);
    old = goblin__lb_elem(b, k, off);
    ocost = goblin__lb_cost(old.len);
    if (goblin__lb_free(b) + ocost >= cost) {
        replace_in(b, k, off, old, e);
        if (f == NULL && cost < ocost &&
            (b = goblin__lb_resize(st, b, content_bytes(b))) != NULL)
            *objp = b;
        return 0;
    }
    need = content_bytes(b) - ocost + cost;
    if (need <= (f == NULL ? COMPACT_MAX : BLOCK_MAX)) {
        if ((b = goblin__lb_resize(st, b, f == NULL ? need : BLOCK_MAX)) ==
            NULL)
            return GOBLIN_ENOMEM;
        if (f == NULL)
            *objp = b;
        else
            slots(f)[j].b = b;
        replace_in(b, k, off, goblin__lb_elem(b, k, off), e);
        return 0;
    }
    /* No room in place: insert the new element, then drop the old. */
    if ((rc = goblin__list_obj_insert(st, objp, idx, e)) != 0)
        return rc;
    goblin__list_obj_delete(st, objp, idx + 1, 1);
    return 0;
}

/* ---- LREM ---- */

static bool same(struct goblin_slice a, struct goblin_slice b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

uint64_t goblin__list_obj_rem(goblin_store *st, void **objp, int64_t count,
                              struct goblin_slice e)
{
    uint64_t from = 0, removed = 0, len = goblin__list_obj_len(*objp);
    int64_t quota = count > 0 ? count : -1;
    struct goblin__list_iter it;
    struct goblin_slice v;

    if (len == 0)
        return 0;
    if (count < 0) {
        /* Find the -count-th match from the tail: every match from there
         * on is one of the last -count. */
        uint64_t idx = len, need = count == INT64_MIN ? (uint64_t)INT64_MAX
                                                     : (uint64_t)-count;

        goblin__list_iter_init(&it, *objp, len - 1, true);
        while (need > 0 && goblin__list_iter_next(&it, &v)) {
            idx--;
            if (same(v, e)) {
                from = idx;
                need--;
            }
        }
        if (need == (count == INT64_MIN ? (uint64_t)INT64_MAX
                                        : (uint64_t)-count))
            return 0;
    }
    if (!goblin__lobj_is_full(*objp)) {
        uint8_t *b = *objp;

        removed = goblin__lb_filter(b, (uint32_t)from, e, &quota);
        if (removed > 0 &&
            (b = goblin__lb_resize(st, b, content_bytes(b))) != NULL)
            *objp = b;
        return removed;
    }
    struct goblin__list_full *f = goblin__lobj_full(*objp);
    struct goblin__list_slot *s = slots(f);
    uint32_t k, j0 = locate(f, from, &k), w;

    for (uint32_t j = j0; j < f->nb && quota != 0; j++, k = 0) {
        removed += goblin__lb_filter(s[j].b, k, e, &quota);
        if (goblin__lb_n(s[j].b) == 0) {
            goblin__lb_free_block(st, s[j].b);
            s[j].b = NULL;
        }
    }
    for (w = j0, k = j0; k < f->nb; k++)
        if (s[k].b != NULL)
            s[w++] = s[k];
    f->nb = w;
    f->count -= removed;
    renumber(f, j0);
    maybe_compact(st, objp);
    return removed;
}

/* ---- walks ---- */

void goblin__list_iter_init(struct goblin__list_iter *it, const void *obj,
                            uint64_t idx, bool rev)
{
    uint64_t len = goblin__list_obj_len(obj);

    memset(it, 0, sizeof(*it));
    it->obj = obj;
    it->rev = rev;
    if (idx >= len)
        return;
    it->left = rev ? idx + 1 : len - idx;
    it->b = obj;
    it->k = (uint32_t)idx;
    if (goblin__lobj_is_full(obj)) {
        const struct goblin__list_full *f = goblin__lobj_full(obj);

        it->slot = locate(f, idx, &it->k);
        it->b = slots(f)[it->slot].b;
    }
    if (rev)
        it->k++;
    it->off = goblin__lb_offset(it->b, it->k);
}

bool goblin__list_iter_next(struct goblin__list_iter *it,
                            struct goblin_slice *e)
{
    const struct goblin__list_full *f;
    uint32_t ds;

    if (it->left == 0)
        return false;
    it->left--;
    if (!it->rev) {
        if (it->k == goblin__lb_n(it->b)) {
            f = goblin__lobj_full(it->obj);
            it->b = slots(f)[++it->slot].b;
            it->k = 0;
            it->off = 0;
        }
        *e = goblin__lb_elem(it->b, it->k, it->off);
        it->off += goblin__lb_dsize_fwd(it->b, it->k, it->off);
        it->k++;
        return true;
    }
    if (it->k == 0) {
        f = goblin__lobj_full(it->obj);
        it->b = slots(f)[--it->slot].b;
        it->k = goblin__lb_n(it->b);
        it->off = goblin__lb_used(it->b);
    }
    ds = goblin__lb_dsize_back(it->b, it->k - 1, it->off);
    it->off -= ds;
    it->k--;
    *e = goblin__lb_elem(it->b, it->k, it->off);
    return true;
}

/* ---- checking ---- */

static int block_check(const uint8_t *b)
{
    uint32_t n = goblin__lb_n(b), off = 0, longs = 0;

    if (content_bytes(b) > goblin__lb_cap(b))
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t ds = goblin__lb_dsize_fwd(b, i, off);

        longs += goblin__lb_lens(b, i) == GOBLIN__LB_LONG;
        if (off + ds > goblin__lb_used(b))
            return -2;
        if (goblin__lb_lens(b, i) == GOBLIN__LB_LONG &&
            goblin__lb_get32(goblin__lb_data(b) + off + ds - 4) != ds - 8)
            return -3;
        off += ds;
    }
    if (off != goblin__lb_used(b) || longs != goblin__lb_nlong(b))
        return -4;
    return 0;
}

int goblin__list_obj_check(const void *obj)
{
    const struct goblin__list_full *f;
    uint64_t count = 0;
    int rc;

    if (obj == NULL)
        return -10;
    if (!goblin__lobj_is_full(obj)) {
        if (goblin__lb_cap(obj) > COMPACT_MAX)
            return -11;
        return block_check(obj);
    }
    f = goblin__lobj_full(obj);
    if ((size_t)f->first + f->nb > f->cap)
        return -12;
    for (uint32_t j = 0; j < f->nb; j++) {
        const struct goblin__list_slot *s = &slots(f)[j];

        if ((rc = block_check(s->b)) != 0)
            return rc;
        if (goblin__lb_n(s->b) == 0)
            return -13;
        if (s->start != f->head + (int64_t)count)
            return -14;
        count += goblin__lb_n(s->b);
    }
    if (count != f->count)
        return -15;
    return 0;
}
