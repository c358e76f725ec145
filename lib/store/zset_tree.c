/* zset_tree.c - the order-statistics B+tree of full sorted sets (see
 * zset_tree.h for the layout and invariants).
 *
 * Levels are numbered from the root (0) to the leaves (height - 1); a
 * struct zt_path records the node and index taken at each level, so no
 * node needs a parent or sibling pointer.
 *
 * Overflowing leaves: the records of the full leaf, the new one and those
 * of one sibling are gathered into a small array and dealt out again over
 * the same leaves (no allocation), or over them plus one new leaf (two
 * full leaves become three). An insert at the very end (or start) of the
 * set instead leaves the full leaf as it is and starts a new one, so
 * ordered loads fill leaves completely. Every node an insert needs is
 * allocated before anything changes. Underfull nodes (below a third) merge
 * with a sibling when they fit in one node, else take records from it.
 */
#include <assert.h>
#include <math.h>
#include <stddef.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "zset_tree.h"

#define LEAF_MIN_W (ZT_CAP_W / 3)
#define LEAF_MIN_N (ZT_CAP_N / 3)
#define INNER_MIN (ZT_FAN / 3)
#define GATHER_MAX (3 * ZT_CAP_N + 1)

struct key {
    double s;
    uint32_t id;
    const uint8_t *m;
    size_t len;
};

/* Records of up to three leaves plus one new record, in order. */
struct gather {
    unsigned n;
    double s[GATHER_MAX];
    uint32_t id[GATHER_MAX];
    unsigned wide_before[GATHER_MAX + 1]; /* non-narrow scores in [0, i) */
};

/* Nodes allocated up front for one insert. */
struct pool {
    unsigned n;
    void *node[ZT_MAXH + 2];
};

static void key_of(const struct ztree *t, struct key *k, double s,
                   uint32_t id)
{
    k->s = s;
    k->id = id;
    k->m = za_member(t->ar, id, &k->len);
}

/* Below zero, zero or above zero as record (r, p) is below, equal to or
 * above the key. */
static inline int rec_cmp(const struct ztree *t, double r, uint32_t p,
                          const struct key *k)
{
    if (r < k->s)
        return -1;
    if (r > k->s)
        return 1;
    if (p == k->id)
        return 0;
    return za_cmp(t->ar, p, k->m, k->len);
}

static inline bool is_leaf(const void *n)
{
    return ((const struct zt_leaf *)n)->leaf != 0;
}

static inline unsigned node_n(const void *n)
{
    return ((const struct zt_leaf *)n)->n;
}

static inline unsigned leaf_cap(const struct zt_leaf *l)
{
    return l->wide ? ZT_CAP_W : ZT_CAP_N;
}

static void node_min(const void *n, double *s, uint32_t *id)
{
    if (is_leaf(n)) {
        *s = zt_leaf_score(n, 0);
        *id = zt_leaf_ids(n)[0];
    } else {
        const struct zt_inner *in = n;

        *s = in->ks[0];
        *id = in->kid[0];
    }
}

static size_t node_total(const void *n)
{
    const struct zt_inner *in = n;
    size_t sum = 0;

    if (is_leaf(n))
        return node_n(n);
    for (unsigned i = 0; i < in->n; i++)
        sum += in->cnt[i];
    return sum;
}

static void set_entry(struct zt_inner *in, unsigned i, const void *child)
{
    node_min(child, &in->ks[i], &in->kid[i]);
    in->cnt[i] = (uint32_t)node_total(child);
    in->ch[i] = (void *)child;
}

static void free_node(goblin_store *st, struct ztree *t, void *n)
{
    size_t size = is_leaf(n) ? sizeof(struct zt_leaf)
                             : sizeof(struct zt_inner);

    goblin__free(st, n, size);
    t->bytes -= size;
}

static void *alloc_node(goblin_store *st, struct ztree *t, bool leaf)
{
    size_t size = leaf ? sizeof(struct zt_leaf) : sizeof(struct zt_inner);
    struct zt_leaf *n = goblin__alloc(st, size);

    if (n == NULL)
        return NULL;
    n->n = 0;
    n->leaf = leaf;
    n->wide = 0;
    t->bytes += size;
    return n;
}

void goblin__zt_init(struct ztree *t, const struct zarena *ar)
{
    memset(t, 0, sizeof(*t));
    t->ar = ar;
}

static void free_subtree(goblin_store *st, struct ztree *t, void *n)
{
    if (!is_leaf(n)) {
        struct zt_inner *in = n;

        for (unsigned i = 0; i < in->n; i++)
            free_subtree(st, t, in->ch[i]);
    }
    free_node(st, t, n);
}

void goblin__zt_free(goblin_store *st, struct ztree *t)
{
    if (t->root != NULL)
        free_subtree(st, t, t->root);
    t->root = NULL;
    t->height = 0;
    t->count = 0;
}

/* ---- searching inside nodes ---- */

/* Branch-free lower bounds: how many of a[lo, hi) are below s (at or
 * below s when excl). The halving steps compile to conditional moves, so
 * a search costs no mispredicted branches. */
static inline unsigned count_below_d(const double *a, unsigned lo,
                                     unsigned hi, double s, bool excl)
{
    const double *base = a + lo;
    unsigned len = hi - lo;

    if (len == 0)
        return lo;
    while (len > 1) {
        unsigned half = len / 2;

        base = (excl ? base[half - 1] <= s : base[half - 1] < s)
                   ? base + half : base;
        len -= half;
    }
    return (unsigned)(base - a) + (excl ? *base <= s : *base < s);
}

static inline unsigned count_below_i(const int32_t *a, unsigned lo,
                                     unsigned hi, double s, bool excl)
{
    const int32_t *base = a + lo;
    unsigned len = hi - lo;

    if (len == 0)
        return lo;
    while (len > 1) {
        unsigned half = len / 2;
        double v = base[half - 1];

        base = (excl ? v <= s : v < s) ? base + half : base;
        len -= half;
    }
    return (unsigned)(base - a) + (excl ? *base <= s : *base < s);
}

/* First index in [lo, hi) of the leaf whose score is >= s (> s if excl). */
static unsigned leaf_lower_score(const struct zt_leaf *l, unsigned lo,
                                 unsigned hi, double s, bool excl)
{
    if (l->wide)
        return count_below_d(l->u.w, lo, hi, s, excl);
    return count_below_i(l->u.s, lo, hi, s, excl);
}

/* First index of the leaf whose record is >= k. */
static unsigned leaf_lower(const struct ztree *t, const struct zt_leaf *l,
                           const struct key *k)
{
    unsigned lo = leaf_lower_score(l, 0, l->n, k->s, false), hi = lo;
    const uint32_t *ids = zt_leaf_ids(l);

    while (hi < l->n && zt_leaf_score(l, hi) == k->s)
        hi++;
    /* In [lo, hi) the scores equal k's: order by member. */
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;

        if (ids[mid] != k->id && za_cmp(t->ar, ids[mid], k->m, k->len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* First index in [lo, hi) of the inner node whose key score is >= s (> s
 * if excl). */
static unsigned inner_lower_score(const struct zt_inner *in, unsigned lo,
                                  unsigned hi, double s, bool excl)
{
    return count_below_d(in->ks, lo, hi, s, excl);
}

/* The child whose range holds k: the last one whose smallest record is
 * <= k, or the first. */
static unsigned inner_route(const struct ztree *t, const struct zt_inner *in,
                            const struct key *k)
{
    unsigned hi = inner_lower_score(in, 0, in->n, k->s, true), lo = hi;

    while (lo > 0 && in->ks[lo - 1] == k->s)
        lo--;
    /* In [lo, hi) the scores equal k's: find the first member above. */
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;

        if (in->kid[mid] == k->id ||
            za_cmp(t->ar, in->kid[mid], k->m, k->len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 ? lo - 1 : 0;
}

/* Starts loading the node a walk goes to next, all the lines its search
 * reads at once, so a node costs about one memory latency instead of one
 * per step of its binary search. */
static inline void prefetch_node(const struct ztree *t, unsigned lv,
                                 const void *n)
{
    /* An inner node's kid array is read on score ties only. */
    enum {
        LEAF_LINES = (sizeof(struct zt_leaf) + 63) / 64,
        INNER_LINES = (offsetof(struct zt_inner, kid) + 63) / 64,
    };
    const char *p = n;

    if (lv + 1 == t->height) {
        for (unsigned k = 0; k < LEAF_LINES; k++)
            __builtin_prefetch(p + 64 * k);
    } else {
        for (unsigned k = 0; k < INNER_LINES; k++)
            __builtin_prefetch(p + 64 * k);
    }
}

/* Walks from the root to the leaf position of k (its lower bound). */
static void descend(const struct ztree *t, const struct key *k,
                    struct zt_path *p)
{
    void *n = t->root;
    unsigned lv;

    for (lv = 0; lv + 1 < t->height; lv++) {
        const struct zt_inner *in = n;
        unsigned i = inner_route(t, in, k);

        p->node[lv] = n;
        p->idx[lv] = i;
        n = in->ch[i];
        prefetch_node(t, lv + 1, n);
    }
    p->node[lv] = n;
    p->idx[lv] = leaf_lower(t, n, k);
}

/* Two walks at once, level by level, so the misses of one overlap those
 * of the other (a score update needs the old and the new position). */
static void descend2(const struct ztree *t, const struct key *ka,
                     struct zt_path *pa, const struct key *kb,
                     struct zt_path *pb)
{
    void *a = t->root, *b = t->root;
    unsigned lv;

    for (lv = 0; lv + 1 < t->height; lv++) {
        const struct zt_inner *ia = a, *ib = b;
        unsigned i = inner_route(t, ia, ka), j = inner_route(t, ib, kb);

        pa->node[lv] = a;
        pa->idx[lv] = i;
        pb->node[lv] = b;
        pb->idx[lv] = j;
        a = ia->ch[i];
        b = ib->ch[j];
        prefetch_node(t, lv + 1, a);
        if (b != a)
            prefetch_node(t, lv + 1, b);
    }
    pa->node[lv] = a;
    pa->idx[lv] = leaf_lower(t, a, ka);
    pb->node[lv] = b;
    pb->idx[lv] = leaf_lower(t, b, kb);
}

/* Adds d to the counts of the entries on the path at levels [0, upto). */
static void path_add(struct zt_path *p, unsigned upto, int d)
{
    for (unsigned lv = 0; lv < upto; lv++) {
        struct zt_inner *in = p->node[lv];

        in->cnt[p->idx[lv]] += (uint32_t)d;
    }
}

/* The smallest record of the node at `level` may have changed: update the
 * keys above it, as far as it is the first child. */
static void fix_up(struct zt_path *p, unsigned level)
{
    for (unsigned lv = level; lv > 0; lv--) {
        struct zt_inner *in = p->node[lv - 1];
        unsigned i = p->idx[lv - 1];
        double s;
        uint32_t id;

        node_min(p->node[lv], &s, &id);
        if (in->kid[i] == id && memcmp(&in->ks[i], &s, sizeof(s)) == 0)
            return;
        in->ks[i] = s;
        in->kid[i] = id;
        if (i != 0)
            return;
    }
}

/* ---- leaf editing ---- */

static void leaf_set_mode(struct zt_leaf *l, bool wide)
{
    uint32_t ids[ZT_CAP_N];
    double s[ZT_CAP_N];
    unsigned n = l->n;

    if ((bool)l->wide == wide)
        return;
    assert(!wide || n <= ZT_CAP_W);
    for (unsigned i = 0; i < n; i++)
        s[i] = zt_leaf_score(l, i);
    memcpy(ids, zt_leaf_ids(l), n * sizeof(uint32_t));
    l->wide = wide;
    for (unsigned i = 0; i < n; i++) {
        if (wide)
            l->u.w[i] = s[i];
        else
            l->u.s[i] = (int32_t)s[i];
    }
    memcpy(zt_leaf_ids(l), ids, n * sizeof(uint32_t));
}

static bool leaf_has_room(const struct zt_leaf *l, double s)
{
    if (!l->wide && !zt_fits_narrow(s))
        return l->n < ZT_CAP_W;
    return l->n < leaf_cap(l);
}

static void leaf_put(struct zt_leaf *l, unsigned i, double s, uint32_t id)
{
    uint32_t *ids;
    unsigned n = l->n;

    if (!l->wide && !zt_fits_narrow(s))
        leaf_set_mode(l, true);
    ids = zt_leaf_ids(l);
    memmove(ids + i + 1, ids + i, (n - i) * sizeof(uint32_t));
    ids[i] = id;
    if (l->wide) {
        memmove(l->u.w + i + 1, l->u.w + i, (n - i) * sizeof(double));
        l->u.w[i] = s;
    } else {
        memmove(l->u.s + i + 1, l->u.s + i, (n - i) * sizeof(int32_t));
        l->u.s[i] = (int32_t)s;
    }
    l->n++;
}

static void leaf_del(struct zt_leaf *l, unsigned i, unsigned m)
{
    uint32_t *ids = zt_leaf_ids(l);
    unsigned rest = l->n - i - m;

    memmove(ids + i, ids + i + m, rest * sizeof(uint32_t));
    if (l->wide)
        memmove(l->u.w + i, l->u.w + i + m, rest * sizeof(double));
    else
        memmove(l->u.s + i, l->u.s + i + m, rest * sizeof(int32_t));
    l->n = (uint16_t)(l->n - m);
}

/* ---- gathering and dealing out records ---- */

static void gather_push(struct gather *g, double s, uint32_t id)
{
    g->s[g->n] = s;
    g->id[g->n] = id;
    g->wide_before[g->n + 1] = g->wide_before[g->n] + !zt_fits_narrow(s);
    g->n++;
}

/* Appends the leaf's records, with (s, id) slipped in before record `at`
 * when at is not UINT32_MAX. */
static void gather_leaf(struct gather *g, const struct zt_leaf *l,
                        unsigned at, double s, uint32_t id)
{
    const uint32_t *ids = zt_leaf_ids(l);

    for (unsigned i = 0; i <= l->n; i++) {
        if (i == at)
            gather_push(g, s, id);
        if (i < l->n)
            gather_push(g, zt_leaf_score(l, i), ids[i]);
    }
}

static unsigned run_cap(const struct gather *g, unsigned from, unsigned n)
{
    return g->wide_before[from + n] != g->wide_before[from] ? ZT_CAP_W
                                                          : ZT_CAP_N;
}

/* Deals g's records over m leaves as evenly as their capacities allow.
 * Returns false if they do not fit. */
static bool plan(const struct gather *g, unsigned m, unsigned *cnt)
{
    unsigned pos = 0;

    for (unsigned j = 0; j < m; j++) {
        unsigned rem = g->n - pos, left = m - j;
        unsigned want = (rem + left - 1) / left;

        if (rem < left)
            return false;
        while (want > 0 && want > run_cap(g, pos, want))
            want--;
        cnt[j] = want;
        pos += want;
    }
    return pos == g->n;
}

/* Whether fixed counts fit their leaves. */
static bool plan_fits(const struct gather *g, unsigned m,
                      const unsigned *cnt)
{
    unsigned pos = 0;

    for (unsigned j = 0; j < m; j++) {
        if (cnt[j] == 0 || cnt[j] > run_cap(g, pos, cnt[j]))
            return false;
        pos += cnt[j];
    }
    return pos == g->n;
}

static void deal(const struct gather *g, struct zt_leaf **out, unsigned m,
                 const unsigned *cnt)
{
    unsigned pos = 0;

    for (unsigned j = 0; j < m; j++) {
        struct zt_leaf *l = out[j];
        uint32_t *ids;

        l->n = (uint16_t)cnt[j];
        l->wide = run_cap(g, pos, cnt[j]) == ZT_CAP_W;
        ids = zt_leaf_ids(l);
        for (unsigned i = 0; i < cnt[j]; i++) {
            if (l->wide)
                l->u.w[i] = g->s[pos + i];
            else
                l->u.s[i] = (int32_t)g->s[pos + i];
            ids[i] = g->id[pos + i];
        }
        pos += cnt[j];
    }
}

/* ---- insert ---- */

static void *pool_take(struct pool *pl)
{
    assert(pl->n > 0);
    return pl->node[--pl->n];
}

/* Spreads the FAN entries of the full node x, plus child as entry pos,
 * half and half over x and x2. */
static void inner_split(struct zt_inner *x, struct zt_inner *x2,
                        unsigned pos, void *child)
{
    double ks[ZT_FAN + 1];
    uint32_t kid[ZT_FAN + 1], cnt[ZT_FAN + 1];
    void *ch[ZT_FAN + 1];
    unsigned half = (ZT_FAN + 1) / 2, k = 0;

    for (unsigned i = 0, j = 0; j <= ZT_FAN; j++) {
        if (j == pos) {
            node_min(child, &ks[k], &kid[k]);
            cnt[k] = (uint32_t)node_total(child);
            ch[k++] = child;
        }
        if (j < ZT_FAN) {
            ks[k] = x->ks[i];
            kid[k] = x->kid[i];
            cnt[k] = x->cnt[i];
            ch[k++] = x->ch[i++];
        }
    }
    x->n = (uint16_t)half;
    x2->n = (uint16_t)(ZT_FAN + 1 - half);
    memcpy(x->ks, ks, half * sizeof(double));
    memcpy(x->kid, kid, half * sizeof(uint32_t));
    memcpy(x->cnt, cnt, half * sizeof(uint32_t));
    memcpy(x->ch, ch, half * sizeof(void *));
    memcpy(x2->ks, ks + half, x2->n * sizeof(double));
    memcpy(x2->kid, kid + half, x2->n * sizeof(uint32_t));
    memcpy(x2->cnt, cnt + half, x2->n * sizeof(uint32_t));
    memcpy(x2->ch, ch + half, x2->n * sizeof(void *));
}

/* Inserts child as entry pos of the inner node at `level` of the path,
 * splitting nodes upward with the pool's nodes. pos is never 0, so no
 * node's smallest record changes. */
static void inner_insert(struct ztree *t, struct zt_path *p, unsigned level,
                         unsigned pos, void *child, struct pool *pl)
{
    struct zt_inner *x = p->node[level], *x2, *g;
    unsigned n = x->n;

    if (n < ZT_FAN) {
        unsigned rest = n - pos;

        memmove(x->ks + pos + 1, x->ks + pos, rest * sizeof(double));
        memmove(x->kid + pos + 1, x->kid + pos, rest * sizeof(uint32_t));
        memmove(x->cnt + pos + 1, x->cnt + pos, rest * sizeof(uint32_t));
        memmove(x->ch + pos + 1, x->ch + pos, rest * sizeof(void *));
        x->n++;
        set_entry(x, pos, child);
        return;
    }
    x2 = pool_take(pl);
    inner_split(x, x2, pos, child);
    if (level == 0) {
        g = pool_take(pl);
        g->n = 2;
        set_entry(g, 0, x);
        set_entry(g, 1, x2);
        t->root = g;
        t->height++;
        return;
    }
    g = p->node[level - 1];
    set_entry(g, p->idx[level - 1], x);
    inner_insert(t, p, level - 1, p->idx[level - 1] + 1, x2, pl);
}

/* Allocates a new leaf and every inner node the path needs to take one
 * more child at `level` (the leaf's parent). */
static int pool_fill(goblin_store *st, struct ztree *t,
                     const struct zt_path *p, int level, struct pool *pl)
{
    unsigned want = 1;
    int lv = level;

    while (lv >= 0 && node_n(p->node[lv]) == ZT_FAN) {
        want++;
        lv--;
    }
    if (lv < 0)
        want++; /* a new root */
    pl->n = 0;
    for (unsigned i = 0; i < want; i++) {
        /* node[0] is the new leaf; the inner nodes follow. */
        void *n = alloc_node(st, t, i == 0);

        if (n == NULL) {
            while (pl->n > 0)
                free_node(st, t, pl->node[--pl->n]);
            return GOBLIN_ENOMEM;
        }
        pl->node[pl->n++] = n;
    }
    return 0;
}

/* Redistributes the records of children first and first + 1 of the leaf's
 * parent, plus the new record, without allocating. */
static bool redistribute(struct ztree *t, struct zt_path *p, unsigned first,
                         double s, uint32_t id)
{
    unsigned lv = t->height - 1, cnt[2];
    struct zt_inner *par = p->node[lv - 1];
    unsigned pi = p->idx[lv - 1], li = p->idx[lv];
    struct zt_leaf *out[2] = {par->ch[first], par->ch[first + 1]};
    struct gather g;

    g.n = 0;
    g.wide_before[0] = 0;
    gather_leaf(&g, out[0], pi == first ? li : UINT32_MAX, s, id);
    gather_leaf(&g, out[1], pi == first ? UINT32_MAX : li, s, id);
    if (g.n > 2 * ZT_CAP_N || !plan(&g, 2, cnt))
        return false;
    if (cnt[0] == node_n(out[0]) + (pi == first))
        return false; /* nothing would move */
    path_add(p, lv - 1, 1);
    deal(&g, out, 2, cnt);
    set_entry(par, first, out[0]);
    set_entry(par, first + 1, out[1]);
    if (first == 0)
        fix_up(p, lv - 1);
    return true;
}

static bool at_far_end(const struct ztree *t, const struct zt_path *p,
                       bool right)
{
    unsigned lv = t->height - 1;

    for (unsigned l = 0; l < lv; l++) {
        unsigned last = node_n(p->node[l]) - 1;

        if (p->idx[l] != (right ? last : 0))
            return false;
    }
    return p->idx[lv] == (right ? node_n(p->node[lv]) : 0);
}

/* How a split deals records: which leaves (out[0, m - 1); the new one
 * goes last, right after them in the parent, at entry first + m - 1) get
 * how many (cnt). */
struct split_plan {
    struct gather g;
    struct zt_leaf *out[3];
    unsigned cnt[3];
    unsigned m;
    unsigned first;
};

/* Plans the split of the full leaf on the path: at either end of the set
 * the leaf stays full and the new leaf starts with one record; elsewhere
 * the leaf and a sibling become three leaves, or, lacking a sibling, the
 * leaf becomes two. */
static void split_plan(const struct ztree *t, const struct zt_path *p,
                       double s, uint32_t id, struct split_plan *sp)
{
    unsigned lv = t->height - 1, li = p->idx[lv];
    unsigned pi = lv > 0 ? p->idx[lv - 1] : 0;
    const struct zt_inner *par = lv > 0 ? p->node[lv - 1] : NULL;
    struct zt_leaf *l = p->node[lv];
    struct gather *g = &sp->g;

    g->n = 0;
    g->wide_before[0] = 0;
    sp->first = pi;
    sp->out[0] = l;
    sp->m = 2;
    if (at_far_end(t, p, true) || at_far_end(t, p, false)) {
        gather_leaf(g, l, li, s, id);
        sp->cnt[0] = li == 0 ? 1 : l->n;
        sp->cnt[1] = g->n - sp->cnt[0];
        if (!plan_fits(g, 2, sp->cnt))
            (void)plan(g, 2, sp->cnt);
        return;
    }
    if (par != NULL && par->n > 1) {
        sp->first = pi + 1 < par->n ? pi : pi - 1;
        sp->out[0] = par->ch[sp->first];
        sp->out[1] = par->ch[sp->first + 1];
        gather_leaf(g, sp->out[0], pi == sp->first ? li : UINT32_MAX, s, id);
        gather_leaf(g, sp->out[1], pi == sp->first ? UINT32_MAX : li, s, id);
        sp->m = 3;
        if (plan(g, 3, sp->cnt))
            return;
    }
    g->n = 0;
    sp->first = pi;
    sp->out[0] = l;
    sp->m = 2;
    gather_leaf(g, l, li, s, id);
    (void)plan(g, 2, sp->cnt);
}

/* Splits the full leaf on the path (see split_plan), allocating every
 * node it needs before changing anything. */
static int split(goblin_store *st, struct ztree *t, struct zt_path *p,
                 double s, uint32_t id)
{
    unsigned lv = t->height - 1;
    struct zt_inner *par = lv > 0 ? p->node[lv - 1] : NULL;
    struct split_plan sp;
    struct pool pl;
    unsigned m;
    int rc;

    split_plan(t, p, s, id, &sp);
    m = sp.m;
    if ((rc = pool_fill(st, t, p, (int)lv - 1, &pl)) != 0)
        return rc;
    sp.out[m - 1] = pl.node[0];
    memmove(pl.node, pl.node + 1, --pl.n * sizeof(void *));
    if (par != NULL)
        path_add(p, lv - 1, 1);
    deal(&sp.g, sp.out, m, sp.cnt);
    if (par == NULL) {
        struct zt_inner *root = pool_take(&pl);

        root->n = 2;
        set_entry(root, 0, sp.out[0]);
        set_entry(root, 1, sp.out[1]);
        t->root = root;
        t->height = 2;
        return 0;
    }
    for (unsigned j = 0; j + 1 < m; j++)
        set_entry(par, sp.first + j, sp.out[j]);
    if (sp.first == 0)
        fix_up(p, lv - 1);
    inner_insert(t, p, lv - 1, sp.first + m - 1, sp.out[m - 1], &pl);
    assert(pl.n == 0);
    return 0;
}

int goblin__zt_insert(goblin_store *st, struct ztree *t, double s, uint32_t id)
{
    struct zt_path p;
    struct zt_leaf *l;
    struct key k;
    unsigned lv;
    int rc;

    if (t->root == NULL) {
        if ((l = alloc_node(st, t, true)) == NULL)
            return GOBLIN_ENOMEM;
        leaf_put(l, 0, s, id);
        t->root = l;
        t->height = 1;
        t->count = 1;
        return 0;
    }
    key_of(t, &k, s, id);
    descend(t, &k, &p);
    lv = t->height - 1;
    l = p.node[lv];
    if (leaf_has_room(l, s)) {
        leaf_put(l, p.idx[lv], s, id);
        path_add(&p, lv, 1);
        if (p.idx[lv] == 0)
            fix_up(&p, lv);
        t->count++;
        return 0;
    }
    if (lv > 0) {
        unsigned pi = p.idx[lv - 1];
        struct zt_inner *par = p.node[lv - 1];
        bool end = at_far_end(t, &p, true) || at_far_end(t, &p, false);

        if (!end && pi > 0 && redistribute(t, &p, pi - 1, s, id))
            goto done;
        if (!end && pi + 1 < par->n && redistribute(t, &p, pi, s, id))
            goto done;
    }
    if ((rc = split(st, t, &p, s, id)) != 0)
        return rc;
done:
    t->count++;
    return 0;
}

/* ---- erase ---- */

static void remove_entry(struct zt_inner *in, unsigned i)
{
    unsigned rest = in->n - i - 1;

    memmove(in->ks + i, in->ks + i + 1, rest * sizeof(double));
    memmove(in->kid + i, in->kid + i + 1, rest * sizeof(uint32_t));
    memmove(in->cnt + i, in->cnt + i + 1, rest * sizeof(uint32_t));
    memmove(in->ch + i, in->ch + i + 1, rest * sizeof(void *));
    in->n--;
}

static void shrink_root(goblin_store *st, struct ztree *t)
{
    while (t->root != NULL && !is_leaf(t->root)) {
        struct zt_inner *r = t->root;

        if (r->n > 1)
            return;
        t->root = r->n == 1 ? r->ch[0] : NULL;
        t->height = r->n == 1 ? t->height - 1 : 0;
        free_node(st, t, r);
    }
    if (t->root != NULL && node_n(t->root) == 0) {
        free_node(st, t, t->root);
        t->root = NULL;
        t->height = 0;
    }
}

/* Merges or evens out two adjacent leaves; returns true if they merged
 * (into a, b being left empty). */
static bool leaves_rebalance(struct zt_leaf *a, struct zt_leaf *b)
{
    struct zt_leaf *out[2] = {a, b};
    struct gather g;
    unsigned cnt[2];

    g.n = 0;
    g.wide_before[0] = 0;
    gather_leaf(&g, a, UINT32_MAX, 0, 0);
    gather_leaf(&g, b, UINT32_MAX, 0, 0);
    if (g.n <= ZT_CAP_N && plan(&g, 1, cnt)) {
        deal(&g, out, 1, cnt);
        b->n = 0;
        return true;
    }
    if (plan(&g, 2, cnt))
        deal(&g, out, 2, cnt);
    return false;
}

static bool inners_rebalance(struct zt_inner *a, struct zt_inner *b)
{
    unsigned total = a->n + b->n, want = total / 2;

    if (total <= ZT_FAN) {
        memcpy(a->ks + a->n, b->ks, b->n * sizeof(double));
        memcpy(a->kid + a->n, b->kid, b->n * sizeof(uint32_t));
        memcpy(a->cnt + a->n, b->cnt, b->n * sizeof(uint32_t));
        memcpy(a->ch + a->n, b->ch, b->n * sizeof(void *));
        a->n = (uint16_t)total;
        b->n = 0;
        return true;
    }
    while (a->n < want) {
        unsigned i = a->n++;

        a->ks[i] = b->ks[0];
        a->kid[i] = b->kid[0];
        a->cnt[i] = b->cnt[0];
        a->ch[i] = b->ch[0];
        remove_entry(b, 0);
    }
    while (a->n > want) {
        unsigned i = --a->n, n = b->n;

        memmove(b->ks + 1, b->ks, n * sizeof(double));
        memmove(b->kid + 1, b->kid, n * sizeof(uint32_t));
        memmove(b->cnt + 1, b->cnt, n * sizeof(uint32_t));
        memmove(b->ch + 1, b->ch, n * sizeof(void *));
        b->ks[0] = a->ks[i];
        b->kid[0] = a->kid[i];
        b->cnt[0] = a->cnt[i];
        b->ch[0] = a->ch[i];
        b->n++;
    }
    return false;
}

static unsigned node_min_fill(const void *n)
{
    if (!is_leaf(n))
        return INNER_MIN;
    return ((const struct zt_leaf *)n)->wide ? LEAF_MIN_W : LEAF_MIN_N;
}

/* The node at `level` of the path lost records or children. */
static void rebalance(goblin_store *st, struct ztree *t, struct zt_path *p,
                      unsigned level)
{
    void *x = p->node[level];
    struct zt_inner *par;
    unsigned pi, first;
    bool merged;

    if (level == 0) {
        shrink_root(st, t);
        return;
    }
    if (node_n(x) >= node_min_fill(x))
        return;
    par = p->node[level - 1];
    pi = p->idx[level - 1];
    if (node_n(x) == 0) {
        remove_entry(par, pi);
        free_node(st, t, x);
        if (pi == 0 && par->n > 0)
            fix_up(p, level - 1);
        rebalance(st, t, p, level - 1);
        return;
    }
    if (par->n < 2)
        return;
    first = pi > 0 ? pi - 1 : pi;
    if (is_leaf(x))
        merged = leaves_rebalance(par->ch[first], par->ch[first + 1]);
    else
        merged = inners_rebalance(par->ch[first], par->ch[first + 1]);
    if (merged) {
        free_node(st, t, par->ch[first + 1]);
        remove_entry(par, first + 1);
        set_entry(par, first, par->ch[first]);
        rebalance(st, t, p, level - 1);
        return;
    }
    set_entry(par, first, par->ch[first]);
    set_entry(par, first + 1, par->ch[first + 1]);
}

/* Walks to the record equal to k, which must exist. */
static void descend_exact(const struct ztree *t, const struct key *k,
                          struct zt_path *p)
{
    descend(t, k, p);
    assert(p->idx[t->height - 1] < node_n(p->node[t->height - 1]));
    assert(zt_leaf_ids(p->node[t->height - 1])[p->idx[t->height - 1]] ==
           k->id);
}

void goblin__zt_erase(goblin_store *st, struct ztree *t, double s, uint32_t id)
{
    struct zt_path p;
    struct key k;
    unsigned lv = t->height - 1;
    struct zt_leaf *l;

    key_of(t, &k, s, id);
    descend_exact(t, &k, &p);
    l = p.node[lv];
    leaf_del(l, p.idx[lv], 1);
    path_add(&p, lv, -1);
    t->count--;
    if (l->n > 0 && p.idx[lv] == 0)
        fix_up(&p, lv);
    rebalance(st, t, &p, lv);
}

void goblin__zt_erase_range(goblin_store *st, struct ztree *t, size_t from,
                            size_t n,
                            void (*fn)(void *ctx, double score, uint32_t id),
                            void *ctx)
{
    while (n > 0) {
        struct zt_path p;
        unsigned lv = t->height - 1, i, m;
        struct zt_leaf *l;

        goblin__zt_seek(t, from, &p);
        l = p.node[lv];
        i = p.idx[lv];
        m = l->n - i;
        if (m > n)
            m = (unsigned)n;
        for (unsigned j = i; j < i + m; j++)
            fn(ctx, zt_leaf_score(l, j), zt_leaf_ids(l)[j]);
        leaf_del(l, i, m);
        path_add(&p, lv, -(int)m);
        t->count -= m;
        n -= m;
        if (l->n > 0 && i == 0)
            fix_up(&p, lv);
        rebalance(st, t, &p, lv);
    }
}

/* Moves record i of leaf l to the place of key k inside the same leaf,
 * given that k lies strictly between two other records of l. */
static bool leaf_move(struct ztree *t, struct zt_path *p, struct zt_leaf *l,
                      unsigned i, const struct key *k)
{
    unsigned lo = i == 0 ? 1 : 0, hi = i + 1 == l->n ? l->n - 2 : l->n - 1;
    const uint32_t *ids = zt_leaf_ids(l);
    unsigned j;

    if (l->n < 3 || rec_cmp(t, zt_leaf_score(l, lo), ids[lo], k) >= 0 ||
        rec_cmp(t, zt_leaf_score(l, hi), ids[hi], k) <= 0)
        return false;
    if (!l->wide && !zt_fits_narrow(k->s) && l->n > ZT_CAP_W)
        return false;
    leaf_del(l, i, 1);
    j = leaf_lower(t, l, k);
    leaf_put(l, j, k->s, k->id);
    if (i == 0 || j == 0)
        fix_up(p, t->height - 1);
    return true;
}

int goblin__zt_update(goblin_store *st, struct ztree *t, double old_s, double new_s,
                      uint32_t id)
{
    struct zt_path po, pn;
    struct key k, kn;
    unsigned lv = t->height - 1;
    struct zt_leaf *lo, *ln;
    int rc;

    key_of(t, &k, old_s, id);
    kn = k;
    kn.s = new_s;
    descend2(t, &k, &po, &kn, &pn);
    lo = po.node[lv];
    assert(zt_leaf_ids(lo)[po.idx[lv]] == id);
    if (leaf_move(t, &po, lo, po.idx[lv], &kn))
        return 0;
    ln = pn.node[lv];
    if (!leaf_has_room(ln, new_s)) {
        if ((rc = goblin__zt_insert(st, t, new_s, id)) != 0)
            return rc;
        goblin__zt_erase(st, t, old_s, id);
        return 0;
    }
    /* Room where it goes: nothing moves between the two walks, so the
     * first one's path still holds for the erase. */
    leaf_put(ln, pn.idx[lv], new_s, id);
    path_add(&pn, lv, 1);
    if (pn.idx[lv] == 0)
        fix_up(&pn, lv);
    if (ln == lo && pn.idx[lv] <= po.idx[lv])
        po.idx[lv]++;
    leaf_del(lo, po.idx[lv], 1);
    path_add(&po, lv, -1);
    if (lo->n > 0 && po.idx[lv] == 0)
        fix_up(&po, lv);
    rebalance(st, t, &po, lv);
    return 0;
}

void goblin__zt_retarget(struct ztree *t, double s, uint32_t old_id, uint32_t new_id)
{
    struct zt_path p;
    struct key k;
    unsigned lv = t->height - 1;

    key_of(t, &k, s, old_id);
    descend_exact(t, &k, &p);
    zt_leaf_ids(p.node[lv])[p.idx[lv]] = new_id;
    for (unsigned l = lv; l > 0; l--) {
        struct zt_inner *in = p.node[l - 1];

        if (in->kid[p.idx[l - 1]] != old_id)
            break;
        in->kid[p.idx[l - 1]] = new_id;
    }
}

/* ---- ranks and walks ---- */

/* Records under the children left of child i. A tree holds fewer than
 * 2^32 records, so 32-bit lanes cannot overflow. */
static size_t count_left(const struct zt_inner *in, unsigned i)
{
    unsigned j = 0;
    uint32_t sum = 0;
#ifdef __SSE2__
    __m128i acc = _mm_setzero_si128();

    for (; j + 4 <= i; j += 4)
        acc = _mm_add_epi32(acc, _mm_loadu_si128((const __m128i *)(const void *)
                                                 (in->cnt + j)));
    acc = _mm_add_epi32(acc, _mm_srli_si128(acc, 8));
    acc = _mm_add_epi32(acc, _mm_srli_si128(acc, 4));
    sum = (uint32_t)_mm_cvtsi128_si32(acc);
#endif
    for (; j < i; j++)
        sum += in->cnt[j];
    return sum;
}

size_t goblin__zt_rank(const struct ztree *t, double s, uint32_t id)
{
    struct zt_path p;
    struct key k;
    size_t r = 0;
    unsigned lv = t->height - 1;

    key_of(t, &k, s, id);
    descend_exact(t, &k, &p);
    for (unsigned l = 0; l < lv; l++)
        r += count_left(p.node[l], p.idx[l]);
    return r + p.idx[lv];
}

size_t goblin__zt_rank_score(const struct ztree *t, double s, bool excl)
{
    const void *n = t->root;
    size_t r = 0;
    unsigned lv = 0;

    if (n == NULL)
        return 0;
    while (!is_leaf(n)) {
        const struct zt_inner *in = n;
        unsigned i = inner_lower_score(in, 0, in->n, s, excl);

        i = i > 0 ? i - 1 : 0;
        n = in->ch[i];
        prefetch_node(t, ++lv, n);
        r += count_left(in, i);
    }
    return r + leaf_lower_score(n, 0, node_n(n), s, excl);
}

/* Whether member id is below the bound m (at or below it when excl). */
static bool lex_below(const struct ztree *t, uint32_t id, const void *m,
                      size_t len, bool excl)
{
    int c = za_cmp(t->ar, id, m, len);

    return excl ? c <= 0 : c < 0;
}

size_t goblin__zt_rank_lex(const struct ztree *t, const void *m, size_t len,
                   bool excl)
{
    const void *n = t->root;
    size_t r = 0;
    unsigned lo, hi, lv = 0;

    if (n == NULL)
        return 0;
    while (!is_leaf(n)) {
        const struct zt_inner *in = n;

        for (lo = 0, hi = in->n; lo < hi;) {
            unsigned mid = (lo + hi) / 2;

            if (lex_below(t, in->kid[mid], m, len, excl))
                lo = mid + 1;
            else
                hi = mid;
        }
        lo = lo > 0 ? lo - 1 : 0;
        n = in->ch[lo];
        prefetch_node(t, ++lv, n);
        r += count_left(in, lo);
    }
    for (lo = 0, hi = node_n(n); lo < hi;) {
        unsigned mid = (lo + hi) / 2;

        if (lex_below(t, zt_leaf_ids(n)[mid], m, len, excl))
            lo = mid + 1;
        else
            hi = mid;
    }
    return r + lo;
}

void goblin__zt_seek(const struct ztree *t, size_t r, struct zt_path *p)
{
    void *n = t->root;
    unsigned lv;

    assert(r < t->count);
    for (lv = 0; lv + 1 < t->height; lv++) {
        struct zt_inner *in = n;
        unsigned i = 0;

        while (r >= in->cnt[i]) {
            r -= in->cnt[i];
            i++;
        }
        p->node[lv] = n;
        p->idx[lv] = i;
        n = in->ch[i];
        prefetch_node(t, lv + 1, n);
    }
    p->node[lv] = n;
    p->idx[lv] = (uint32_t)r;
}

bool goblin__zt_next(const struct ztree *t, struct zt_path *p)
{
    unsigned lv = t->height - 1;
    int l;

    if (++p->idx[lv] < node_n(p->node[lv]))
        return true;
    for (l = (int)lv - 1; l >= 0; l--)
        if (p->idx[l] + 1 < node_n(p->node[l]))
            break;
    if (l < 0) {
        p->idx[lv] = node_n(p->node[lv]) - 1;
        return false;
    }
    p->idx[l]++;
    for (; l < (int)lv; l++) {
        const struct zt_inner *in = p->node[l];

        p->node[l + 1] = in->ch[p->idx[l]];
        p->idx[l + 1] = 0;
    }
    return true;
}

bool goblin__zt_prev(const struct ztree *t, struct zt_path *p)
{
    unsigned lv = t->height - 1;
    int l;

    if (p->idx[lv] > 0) {
        p->idx[lv]--;
        return true;
    }
    for (l = (int)lv - 1; l >= 0; l--)
        if (p->idx[l] > 0)
            break;
    if (l < 0)
        return false;
    p->idx[l]--;
    for (; l < (int)lv; l++) {
        const struct zt_inner *in = p->node[l];
        void *c = in->ch[p->idx[l]];

        p->node[l + 1] = c;
        p->idx[l + 1] = node_n(c) - 1;
    }
    return true;
}

/* ---- bulk build ---- */

/* Appends a record above every other one: no search, the walk follows
 * the last children. */
static int append_last(goblin_store *st, struct ztree *t, double s,
                       uint32_t id)
{
    struct zt_path p;
    void *x = t->root;
    unsigned lv;
    int rc;

    if (x == NULL)
        return goblin__zt_insert(st, t, s, id);
    for (lv = 0; lv + 1 < t->height; lv++) {
        struct zt_inner *in = x;

        p.node[lv] = x;
        p.idx[lv] = in->n - 1u;
        x = in->ch[in->n - 1];
    }
    p.node[lv] = x;
    p.idx[lv] = node_n(x);
    if (leaf_has_room(x, s)) {
        leaf_put(x, node_n(x), s, id);
        path_add(&p, lv, 1);
    } else if ((rc = split(st, t, &p, s, id)) != 0) {
        return rc;
    }
    t->count++;
    return 0;
}

int goblin__zt_build(goblin_store *st, struct ztree *t, const double *scores,
                     const uint32_t *ids, size_t n)
{
    assert(t->root == NULL);
    for (size_t i = 0; i < n; i++) {
        int rc = append_last(st, t, scores[i], ids[i]);

        if (rc != 0) {
            goblin__zt_free(st, t);
            return rc;
        }
    }
    return 0;
}

/* ---- checking ---- */

struct check {
    const struct ztree *t;
    bool have_prev;
    double prev_s;
    uint32_t prev_id;
    size_t leaves;
    size_t records;
    unsigned leaf_depth;
    size_t thin;        /* leaves under a third full so far */
    size_t first_thin;  /* index of the first of them */
    size_t last_thin;   /* index of the last of them */
};

#define FAIL() return -__LINE__

static int check_record(struct check *c, double s, uint32_t id)
{
    struct key k;

    if (isnan(s))
        FAIL();
    if (c->have_prev) {
        key_of(c->t, &k, s, id);
        if (rec_cmp(c->t, c->prev_s, c->prev_id, &k) >= 0)
            FAIL();
    }
    c->have_prev = true;
    c->prev_s = s;
    c->prev_id = id;
    c->records++;
    return 0;
}

static int check_leaf(struct check *c, const struct zt_leaf *l, bool root,
                      unsigned depth)
{
    int rc;

    if (l->n > leaf_cap(l) || (l->n == 0 && !root))
        FAIL();
    if (!root && l->n < node_min_fill(l)) {
        if (c->thin++ == 0)
            c->first_thin = c->leaves;
        c->last_thin = c->leaves;
    }
    if (c->leaves++ == 0)
        c->leaf_depth = depth;
    else if (c->leaf_depth != depth)
        FAIL();
    for (unsigned i = 0; i < l->n; i++) {
        if ((rc = check_record(c, zt_leaf_score(l, i),
                               zt_leaf_ids(l)[i])) != 0)
            return rc;
    }
    return 0;
}

static int check_node(struct check *c, const void *n, bool root,
                      unsigned depth)
{
    const struct zt_inner *in = n;
    int rc;

    if (is_leaf(n))
        return check_leaf(c, n, root, depth);
    if (in->n == 0 || in->n > ZT_FAN || (root && in->n < 2) ||
        (!root && in->n < INNER_MIN))
        FAIL();
    for (unsigned i = 0; i < in->n; i++) {
        double s;
        uint32_t id;
        size_t before = c->records;

        node_min(in->ch[i], &s, &id);
        if (s != in->ks[i] || id != in->kid[i] ||
            __builtin_signbit(s) != __builtin_signbit(in->ks[i]))
            FAIL();
        if ((rc = check_node(c, in->ch[i], false, depth + 1)) != 0)
            return rc;
        if (c->records - before != in->cnt[i])
            FAIL();
    }
    return 0;
}

int goblin__zt_check(const struct ztree *t, size_t *leaves)
{
    struct check c;
    int rc;

    memset(&c, 0, sizeof(c));
    c.t = t;
    if (t->root == NULL) {
        if (t->height != 0 || t->count != 0)
            FAIL();
        if (leaves != NULL)
            *leaves = 0;
        return 0;
    }
    if ((rc = check_node(&c, t->root, true, 1)) != 0)
        return rc;
    if (c.records != t->count || c.leaf_depth != t->height)
        FAIL();
    /* Fill: a leaf under a third full is the first or the last one (an
     * ordered load starts the next leaf with one record). */
    if (c.thin > 2 || (c.thin == 2 && (c.first_thin != 0 ||
                                       c.last_thin != c.leaves - 1)))
        FAIL();
    if (c.thin == 1 && c.last_thin != 0 && c.last_thin != c.leaves - 1)
        FAIL();
    if (leaves != NULL)
        *leaves = c.leaves;
    return 0;
}
