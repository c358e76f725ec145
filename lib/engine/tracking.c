/* tracking.c - client-side caching: the tracking table, BCAST prefixes and
 * the invalidation messages (tracking.h), as Redis 7.0's tracking.c.
 *
 * The table is a chained hash of struct track_key (key bytes and the ids
 * of the sessions that read the key), in the engine's memory. Ids, not
 * pointers: a session that turned tracking off or closed is skipped when
 * the key is written, as Redis does. tracking-table-max-keys bounds the
 * keys: past it, keys picked at random are invalidated at once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "settings.h"
#include "tracking.h"

struct goblin__track_key {
    struct goblin__track_key *next;
    uint64_t hash;
    uint64_t *ids;
    uint32_t nids, capids;
    size_t keylen;
    unsigned char key[];
};

static void update_on(goblin_engine *eng)
{
    eng->track_on = eng->tkeys != 0 || eng->track_bcast != 0;
}

static goblin_session *by_id(const goblin_engine *eng, uint64_t id)
{
    for (goblin_session *s = eng->first; s != NULL; s = s->next)
        if (s->id == id)
            return s;
    return NULL;
}

static void put(struct goblin_buf *b, const void *p, size_t n)
{
    goblin_buf_append(b, p, n);
}

#define put_lit(b, lit) put(b, lit, sizeof(lit) - 1)

static void put_bulk(struct goblin_buf *b, const void *p, size_t n)
{
    char head[24];
    int k = snprintf(head, sizeof(head), "$%zu\r\n", n);

    put(b, head, (size_t)k);
    put(b, p, n);
    put(b, "\r\n", 2);
}

/* Puts msg into t's output: after the reply when t runs the command. */
static void emit(goblin_engine *eng, goblin_session *t,
                 const struct goblin_buf *msg)
{
    if (t->flags & SESS_CLOSE || msg->failed)
        return;
    if (t == eng->running) {
        put(&eng->track_self, msg->data, msg->len);
        eng->track_pending = true;
        return;
    }
    put(&t->push, msg->data, msg->len);
    goblin__session_wake(t);
}

/* Redis's sendTrackingMessage: payload is the RESP of the keys (or of a
 * null, for a flush). */
static void send_msg(goblin_engine *eng, goblin_session *c,
                     const void *payload, size_t plen)
{
    struct goblin_buf m = {.alloc = &eng->acct};
    goblin_session *t = c;
    bool redir = false;
    char head[64];

    if (c->track_redir != 0) {
        t = by_id(eng, c->track_redir);
        if (t == NULL) {
            c->track |= TRACK_BROKEN;
            if (c->resp == 3) {
                int k = snprintf(head, sizeof(head),
                                 ">2\r\n$21\r\ntracking-redir-broken\r\n"
                                 ":%llu\r\n",
                                 (unsigned long long)c->track_redir);
                put(&m, head, (size_t)k);
                emit(eng, c, &m);
            }
            goto out;
        }
        redir = true;
    }
    if (t->proto == GOBLIN__PROTO_SBE)
        goto out;
    if (t->resp == 3)
        put_lit(&m, ">2\r\n$10\r\ninvalidate\r\n");
    else if (redir && goblin__ps_total(&t->ps) > 0)
        put_lit(&m, "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n");
    else
        goto out;
    put(&m, payload, plen);
    emit(eng, t, &m);
out:
    goblin_buf_free(&m);
}

/* ---- the table ---- */

static uint64_t key_hash(const goblin_engine *eng, struct goblin_slice key)
{
    return goblin__hash_bytes(eng->st->hash_seed, key.ptr, key.len);
}

static struct goblin__track_key **slot_of(goblin_engine *eng,
                                          struct goblin_slice key,
                                          uint64_t h)
{
    struct goblin__track_key **p;

    if (eng->tbuckets == NULL)
        return NULL;
    for (p = &eng->tbuckets[h & eng->tmask]; *p != NULL; p = &(*p)->next)
        if ((*p)->hash == h && (*p)->keylen == key.len &&
            memcmp((*p)->key, key.ptr, key.len) == 0)
            return p;
    return NULL;
}

static int grow(goblin_engine *eng)
{
    size_t n = eng->tbuckets == NULL ? 64 : (eng->tmask + 1) * 2;
    struct goblin__track_key **b, *e, *next;

    b = goblin__alloc(eng->st, goblin__mul(n, sizeof(*b)));
    if (b == NULL)
        return GOBLIN_ENOMEM;
    memset(b, 0, n * sizeof(*b));
    for (size_t i = 0; eng->tbuckets != NULL && i <= eng->tmask; i++)
        for (e = eng->tbuckets[i]; e != NULL; e = next) {
            next = e->next;
            e->next = b[e->hash & (n - 1)];
            b[e->hash & (n - 1)] = e;
        }
    if (eng->tbuckets != NULL)
        goblin__free(eng->st, eng->tbuckets,
                     (eng->tmask + 1) * sizeof(*eng->tbuckets));
    eng->tbuckets = b;
    eng->tmask = n - 1;
    return 0;
}

static void entry_free(goblin_engine *eng, struct goblin__track_key *e)
{
    eng->titems -= e->nids;
    eng->tkeys--;
    goblin__free(eng->st, e->ids, e->capids * sizeof(*e->ids));
    goblin__free(eng->st, e, sizeof(*e) + e->keylen);
}

static void remember(goblin_engine *eng, struct goblin_slice key,
                     uint64_t id)
{
    uint64_t h = key_hash(eng, key);
    struct goblin__track_key **p = slot_of(eng, key, h), *e;

    if (p == NULL) {
        if ((eng->tbuckets == NULL || eng->tkeys > eng->tmask) &&
            grow(eng) != 0)
            return;
        e = goblin__alloc(eng->st, sizeof(*e) + key.len);
        if (e == NULL)
            return;
        memset(e, 0, sizeof(*e));
        e->hash = h;
        e->keylen = key.len;
        if (key.len > 0)
            memcpy(e->key, key.ptr, key.len);
        e->next = eng->tbuckets[h & eng->tmask];
        eng->tbuckets[h & eng->tmask] = e;
        eng->tkeys++;
        update_on(eng);
    } else {
        e = *p;
    }
    for (uint32_t i = 0; i < e->nids; i++)
        if (e->ids[i] == id)
            return;
    if (e->nids == e->capids) {
        uint32_t cap = e->capids == 0 ? 2 : e->capids * 2;
        uint64_t *ids = goblin__alloc(eng->st, cap * sizeof(*ids));

        if (ids == NULL)
            return;
        if (e->nids > 0)
            memcpy(ids, e->ids, e->nids * sizeof(*ids));
        goblin__free(eng->st, e->ids, e->capids * sizeof(*e->ids));
        e->ids = ids;
        e->capids = cap;
    }
    e->ids[e->nids++] = id;
    eng->titems++;
}

/* The RESP array of one key. */
static void key_payload(struct goblin_buf *b, const void *p, size_t n)
{
    put(b, "*1\r\n", 4);
    put_bulk(b, p, n);
}

/* Sends the invalidation of e's key to its sessions and drops e (already
 * unlinked). */
static void invalidate_entry(goblin_engine *eng, struct goblin__track_key *e)
{
    struct goblin_buf pl = {.alloc = &eng->acct};

    key_payload(&pl, e->key, e->keylen);
    for (uint32_t i = 0; i < e->nids && !pl.failed; i++) {
        goblin_session *t = by_id(eng, e->ids[i]);

        if (t == NULL || !(t->track & TRACK_ON) || t->track & TRACK_BCAST)
            continue;
        if (t->track & TRACK_NOLOOP && t == eng->running)
            continue;
        send_msg(eng, t, pl.data, pl.len);
    }
    goblin_buf_free(&pl);
    entry_free(eng, e);
    update_on(eng);
}

/* ---- BCAST ---- */

static bool has_prefix(struct goblin_slice key,
                       const struct goblin__track_prefix *p)
{
    return key.len >= p->len && memcmp(key.ptr, p->p, p->len) == 0;
}

static void bcast_remember(goblin_engine *eng, struct goblin_slice key)
{
    uint64_t writer = eng->running != NULL ? eng->running->id : 0;
    uint32_t len = (uint32_t)key.len;

    for (goblin_session *s = eng->first; s != NULL; s = s->next) {
        if (!(s->track & TRACK_BCAST))
            continue;
        for (size_t i = 0; i < s->ntprefix; i++) {
            struct goblin__track_prefix *p = &s->tprefix[i];

            if (!has_prefix(key, p))
                continue;
            put(&p->keys, &len, sizeof(len));
            put(&p->keys, &writer, sizeof(writer));
            put(&p->keys, key.ptr, key.len);
            eng->track_pending = true;
        }
    }
}

struct pending_key {
    const unsigned char *p;
    uint32_t len;
    uint32_t order; /* arrival: the later write of a key wins */
    uint64_t writer;
};

static int pending_cmp(const void *a, const void *b)
{
    const struct pending_key *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = n > 0 ? memcmp(x->p, y->p, n) : 0;

    if (c != 0)
        return c;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return x->order < y->order ? -1 : 1;
}

/* One prefix's message: its keys sorted, each once, without the ones s
 * wrote itself under NOLOOP. */
static void bcast_send(goblin_engine *eng, goblin_session *s,
                       struct goblin__track_prefix *p)
{
    struct goblin_buf pl = {.alloc = &eng->acct};
    struct pending_key *k;
    size_t n = 0, cap = 0, off = 0, out = 0;
    char head[24];

    for (off = 0; off < p->keys.len; cap++) {
        uint32_t len; /* records are packed: no alignment */

        memcpy(&len, p->keys.data + off, 4);
        off += 12 + len;
    }
    k = goblin__alloc(eng->st, goblin__mul(cap, sizeof(*k)));
    if (k == NULL)
        return;
    for (off = 0; off < p->keys.len; n++) {
        memcpy(&k[n].len, p->keys.data + off, 4);
        memcpy(&k[n].writer, p->keys.data + off + 4, 8);
        k[n].p = (const unsigned char *)p->keys.data + off + 12;
        k[n].order = (uint32_t)n;
        off += 12 + k[n].len;
    }
    qsort(k, n, sizeof(*k), pending_cmp);
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && k[i + 1].len == k[i].len &&
            memcmp(k[i + 1].p, k[i].p, k[i].len) == 0)
            continue; /* a later write of the same key follows */
        if (s->track & TRACK_NOLOOP && k[i].writer == s->id)
            continue;
        k[out++] = k[i];
    }
    if (out > 0) {
        int h = snprintf(head, sizeof(head), "*%zu\r\n", out);

        put(&pl, head, (size_t)h);
        for (size_t i = 0; i < out; i++)
            put_bulk(&pl, k[i].p, k[i].len);
        if (!pl.failed)
            send_msg(eng, s, pl.data, pl.len);
    }
    goblin_buf_free(&pl);
    goblin__free(eng->st, k, cap * sizeof(*k));
}

static void bcast_flush(goblin_engine *eng)
{
    for (goblin_session *s = eng->first; s != NULL; s = s->next) {
        if (!(s->track & TRACK_BCAST))
            continue;
        for (size_t i = 0; i < s->ntprefix; i++) {
            struct goblin__track_prefix *p = &s->tprefix[i];

            if (p->keys.len == 0)
                continue;
            bcast_send(eng, s, p);
            p->keys.len = 0;
            if (p->keys.cap > 64 * 1024) {
                goblin_buf_free(&p->keys);
                p->keys.alloc = &eng->acct;
            }
        }
    }
}

/* ---- the hooks ---- */

void goblin__tracking_invalidate(goblin_engine *eng, struct goblin_slice key)
{
    struct goblin__track_key **p, *e;

    if (eng->track_bcast != 0)
        bcast_remember(eng, key);
    if (eng->tkeys == 0)
        return;
    p = slot_of(eng, key, key_hash(eng, key));
    if (p == NULL)
        return;
    e = *p;
    *p = e->next;
    invalidate_entry(eng, e);
}

void goblin__tracking_flushed(goblin_engine *eng)
{
    for (goblin_session *s = eng->first; s != NULL; s = s->next) {
        if (!(s->track & TRACK_ON))
            continue;
        if (s->resp == 3)
            send_msg(eng, s, "_\r\n", 3);
        else
            send_msg(eng, s, "$-1\r\n", 5);
    }
    for (size_t i = 0; eng->tbuckets != NULL && i <= eng->tmask; i++) {
        struct goblin__track_key *e = eng->tbuckets[i], *next;

        for (; e != NULL; e = next) {
            next = e->next;
            entry_free(eng, e);
        }
        eng->tbuckets[i] = NULL;
    }
    update_on(eng);
}

/* Redis's trackingLimitUsedSlots: random keys go until the table is back
 * under tracking-table-max-keys, with more effort each time it was not. */
static void limit_keys(goblin_engine *eng)
{
    int effort = 100 * (int)(eng->track_effort + 1);

    if (eng->track_max_keys == 0 || eng->tkeys <= eng->track_max_keys) {
        eng->track_effort = 0;
        return;
    }
    while (effort-- > 0 && eng->tkeys > 0) {
        size_t b = (size_t)goblin__rand64(eng->st) & eng->tmask;
        struct goblin__track_key *e;

        while (eng->tbuckets[b] == NULL)
            b = (b + 1) & eng->tmask;
        e = eng->tbuckets[b];
        eng->tbuckets[b] = e->next;
        invalidate_entry(eng, e);
        if (eng->tkeys <= eng->track_max_keys) {
            eng->track_effort = 0;
            return;
        }
    }
    eng->track_effort++;
}

static bool is_script_ro(const struct goblin__command *c)
{
    return strcmp(c->fullname, "eval_ro") == 0 ||
           strcmp(c->fullname, "evalsha_ro") == 0 ||
           strcmp(c->fullname, "fcall_ro") == 0;
}

void goblin__tracking_after(goblin__exec *x, int argc,
                            const struct goblin_slice *argv)
{
    const struct goblin__command *c = x->cmd;
    uint32_t f = x->sess->track;
    int pos_small[16], *pos = pos_small;
    uint16_t fl_small[16], *fl = fl_small;
    size_t cap;
    int n;

    if (!(f & TRACK_ON) || f & TRACK_BCAST)
        return;
    if (!(c->flags & CMD_READONLY) || c->flags & CMD_PUBSUB ||
        is_script_ro(c))
        return;
    if ((f & TRACK_OPTIN && !(f & TRACK_CACHING)) ||
        (f & TRACK_OPTOUT && f & TRACK_CACHING))
        return;
    cap = goblin__find_keys_cap(c, argc);
    if (cap > 16) {
        pos = goblin__alloc(x->eng->st, goblin__mul(cap, sizeof(*pos)));
        fl = goblin__alloc(x->eng->st, goblin__mul(cap, sizeof(*fl)));
    }
    if (pos != NULL && fl != NULL) {
        n = goblin__find_keys(c, argc, argv, pos, fl);
        for (int i = 0; i < n; i++)
            remember(x->eng, argv[pos[i]], x->sess->id);
    }
    if (cap > 16) {
        goblin__free(x->eng->st, pos, cap * sizeof(*pos));
        goblin__free(x->eng->st, fl, cap * sizeof(*fl));
    }
    limit_keys(x->eng);
}

void goblin__tracking_flush(goblin_engine *eng, goblin_session *s,
                            bool into_out)
{
    if (eng->track_pending) {
        eng->track_pending = false;
        bcast_flush(eng);
        if (eng->track_self.len > 0 && s != NULL && into_out) {
            put(&s->out, eng->track_self.data, eng->track_self.len);
        } else if (eng->track_self.len > 0 && s != NULL) {
            put(&s->push, eng->track_self.data, eng->track_self.len);
            goblin__session_wake(s);
        }
        eng->track_self.len = 0;
    }
}

void goblin__tracking_cron(goblin_engine *eng)
{
    if (eng->tkeys > 0)
        limit_keys(eng);
    goblin__tracking_flush(eng, NULL, false);
}

/* ---- CLIENT TRACKING ON / OFF ---- */

static int prefix_cmp(const void *a, const void *b)
{
    const struct goblin__track_prefix *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = n > 0 ? memcmp(x->p, y->p, n) : 0;

    return c != 0 ? c : (x->len > y->len) - (x->len < y->len);
}

static int add_prefix(goblin_session *s, struct goblin_slice v)
{
    goblin_engine *eng = s->eng;
    struct goblin__track_prefix *np, *p;

    for (size_t i = 0; i < s->ntprefix; i++)
        if (s->tprefix[i].len == v.len &&
            (v.len == 0 || memcmp(s->tprefix[i].p, v.ptr, v.len) == 0))
            return 0;
    np = goblin__alloc(eng->st,
                       goblin__mul(s->ntprefix + 1, sizeof(*np)));
    if (np == NULL)
        return GOBLIN_ENOMEM;
    if (s->ntprefix > 0)
        memcpy(np, s->tprefix, s->ntprefix * sizeof(*np));
    p = &np[s->ntprefix];
    memset(p, 0, sizeof(*p));
    p->keys.alloc = &eng->acct;
    p->len = v.len;
    p->p = goblin__alloc(eng->st, v.len + 1);
    if (p->p == NULL) {
        goblin__free(eng->st, np, (s->ntprefix + 1) * sizeof(*np));
        return GOBLIN_ENOMEM;
    }
    if (v.len > 0)
        memcpy(p->p, v.ptr, v.len);
    goblin__free(eng->st, s->tprefix, s->ntprefix * sizeof(*np));
    s->tprefix = np;
    s->ntprefix++;
    qsort(s->tprefix, s->ntprefix, sizeof(*np), prefix_cmp);
    return 0;
}

int goblin__tracking_enable(goblin_session *s, uint64_t redir,
                            uint32_t options,
                            const struct goblin_slice *prefix, size_t n)
{
    goblin_engine *eng = s->eng;
    int rc = 0;

    if (!(s->track & TRACK_ON))
        eng->tracking_clients++;
    if ((options & TRACK_BCAST) && !(s->track & TRACK_BCAST))
        eng->track_bcast++;
    s->track = TRACK_ON | (s->track & TRACK_CACHING);
    s->track_redir = redir;
    if (options & TRACK_BCAST) {
        s->track |= TRACK_BCAST;
        if (n == 0)
            rc = add_prefix(s, (struct goblin_slice){"", 0});
        for (size_t i = 0; i < n && rc == 0; i++)
            rc = add_prefix(s, prefix[i]);
    }
    s->track |= options & (TRACK_OPTIN | TRACK_OPTOUT | TRACK_NOLOOP);
    update_on(eng);
    return rc;
}

void goblin__tracking_disable(goblin_session *s)
{
    goblin_engine *eng = s->eng;

    for (size_t i = 0; i < s->ntprefix; i++) {
        goblin__free(eng->st, s->tprefix[i].p, s->tprefix[i].len + 1);
        goblin_buf_free(&s->tprefix[i].keys);
    }
    goblin__free(eng->st, s->tprefix, s->ntprefix * sizeof(*s->tprefix));
    s->tprefix = NULL;
    s->ntprefix = 0;
    if (s->track & TRACK_BCAST)
        eng->track_bcast--;
    if (s->track & TRACK_ON)
        eng->tracking_clients--;
    s->track = 0;
    update_on(eng);
}

size_t goblin__tracking_total_prefixes(const goblin_engine *eng)
{
    size_t n = 0;

    /* Distinct prefixes over every BCAST session (Redis's PrefixTable). */
    for (const goblin_session *s = eng->first; s != NULL; s = s->next)
        for (size_t i = 0; i < s->ntprefix; i++) {
            bool seen = false;

            for (const goblin_session *o = eng->first; o != s && !seen;
                 o = o->next)
                for (size_t j = 0; j < o->ntprefix && !seen; j++)
                    seen = prefix_cmp(&o->tprefix[j], &s->tprefix[i]) == 0;
            n += !seen;
        }
    return n;
}

/* ---- setting and lifetime ---- */

static int get_max_keys(void *ctx, char *buf, size_t cap)
{
    return snprintf(buf, cap, "%llu",
                    (unsigned long long)((goblin_engine *)ctx)
                        ->track_max_keys);
}

static int set_max_keys(void *ctx, struct goblin_slice v, const char **why)
{
    int64_t n;

    if (goblin__setting_parse("tracking-table-max-keys", v, &n, why) != 0)
        return GOBLIN_EINVAL;
    ((goblin_engine *)ctx)->track_max_keys = (uint64_t)n;
    return 0;
}

int goblin__tracking_init(goblin_engine *eng)
{
    const struct goblin_setting s = {"tracking-table-max-keys", NULL,
                                     get_max_keys, set_max_keys, eng};

    eng->track_max_keys = 1000000;
    eng->track_self.alloc = &eng->acct;
    return goblin_engine_setting_add(eng, &s);
}

void goblin__tracking_free(goblin_engine *eng)
{
    goblin__tracking_flushed(eng);
    if (eng->tbuckets != NULL)
        goblin__free(eng->st, eng->tbuckets,
                     (eng->tmask + 1) * sizeof(*eng->tbuckets));
    eng->tbuckets = NULL;
    goblin_buf_free(&eng->track_self);
}
