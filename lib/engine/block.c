/* block.c - the wait registry of blocking commands (block.h): blocking a
 * session on its keys, marking keys ready, serving waiters in order,
 * timeouts, CLIENT UNBLOCK, and leaving nothing behind on close.
 *
 * Layout: a chained hash table of waited keys (struct goblin__bkey, one
 * per database and key), each with a doubly linked list of waits (one
 * struct goblin__bwait per session and key, held in the session's blocked
 * state), and the list of blocked sessions in the order they blocked (for
 * timeouts and INFO).
 *
 * Invariants: a key is in the table while it has waiters, is on the ready
 * list (ready) or is being served (busy); it is freed when none of the
 * three holds. s->blk is NULL, or waiting (SESS_BLOCKED, on the table's
 * list), or done (its reply not yet moved into the output).
 */
#include <string.h>

#include "block.h"
#include "goblin/numtext.h"
#include "commands/respond.h"
#include "stream/propagate.h"

struct goblin__bkey {
    struct goblin__bkey *next;  /* hash chain */
    struct goblin__bkey *rnext; /* ready list */
    uint64_t hash;
    struct goblin__bwait *first, *last; /* waiters, in the order they came */
    int db;
    bool ready, busy;
    size_t keylen;
    unsigned char key[];
};

#define TIMEOUT_TEXT "ERR timeout is not a float or out of range"
#define UNBLOCKED_TEXT "UNBLOCKED client unblocked via CLIENT UNBLOCK"

int goblin__block_db(const goblin_session *s)
{
    return s != NULL ? s->dbid : 0;
}

static uint64_t key_hash(const goblin_engine *eng, int db,
                         struct goblin_slice key)
{
    return goblin__hash_bytes(eng->st->hash_seed, key.ptr, key.len) ^
           (uint64_t)db * 0x9e3779b97f4a7c15u;
}

static struct goblin_slice key_of(const struct goblin__bkey *k)
{
    return (struct goblin_slice){k->key, k->keylen};
}

static struct goblin__block_table *table(goblin_engine *eng)
{
    struct goblin__block_table *t = eng->blocking;

    if (t != NULL)
        return t;
    if ((t = goblin__alloc(eng->st, sizeof(*t))) == NULL)
        return NULL;
    memset(t, 0, sizeof(*t));
    t->buckets = goblin__alloc(eng->st, 16 * sizeof(*t->buckets));
    if (t->buckets == NULL) {
        goblin__free(eng->st, t, sizeof(*t));
        return NULL;
    }
    memset(t->buckets, 0, 16 * sizeof(*t->buckets));
    t->mask = 15;
    eng->blocking = t;
    return t;
}

static struct goblin__bkey *find(const struct goblin__block_table *t,
                                 uint64_t h, int db, struct goblin_slice key)
{
    struct goblin__bkey *k;

    for (k = t->buckets[h & t->mask]; k != NULL; k = k->next)
        if (k->hash == h && k->db == db && k->keylen == key.len &&
            (key.len == 0 || memcmp(k->key, key.ptr, key.len) == 0))
            return k;
    return NULL;
}

/* Doubles the buckets once there are more keys than buckets; a failed
 * growth only makes chains longer. */
static void grow(goblin_engine *eng, struct goblin__block_table *t)
{
    size_t n = (t->mask + 1) * 2, i;
    struct goblin__bkey **b, *k, *next;

    if (t->nkeys <= t->mask + 1 ||
        (b = goblin__alloc(eng->st, n * sizeof(*b))) == NULL)
        return;
    memset(b, 0, n * sizeof(*b));
    for (i = 0; i <= t->mask; i++) {
        for (k = t->buckets[i]; k != NULL; k = next) {
            next = k->next;
            k->next = b[k->hash & (n - 1)];
            b[k->hash & (n - 1)] = k;
        }
    }
    goblin__free(eng->st, t->buckets, (t->mask + 1) * sizeof(*b));
    t->buckets = b;
    t->mask = n - 1;
}

static struct goblin__bkey *key_get(goblin_engine *eng,
                                    struct goblin__block_table *t, int db,
                                    struct goblin_slice key)
{
    uint64_t h = key_hash(eng, db, key);
    struct goblin__bkey *k = find(t, h, db, key);

    if (k != NULL)
        return k;
    if ((k = goblin__alloc(eng->st, sizeof(*k) + key.len)) == NULL)
        return NULL;
    memset(k, 0, sizeof(*k));
    k->hash = h;
    k->db = db;
    k->keylen = key.len;
    if (key.len > 0)
        memcpy(k->key, key.ptr, key.len);
    k->next = t->buckets[h & t->mask];
    t->buckets[h & t->mask] = k;
    t->nkeys++;
    grow(eng, t);
    return k;
}

/* Frees k when nothing holds it any more (see the invariants above). */
static void key_release(goblin_engine *eng, struct goblin__block_table *t,
                        struct goblin__bkey *k)
{
    struct goblin__bkey **p;

    if (k->first != NULL || k->ready || k->busy)
        return;
    for (p = &t->buckets[k->hash & t->mask]; *p != k; p = &(*p)->next)
        ;
    *p = k->next;
    t->nkeys--;
    goblin__free(eng->st, k, sizeof(*k) + k->keylen);
}

static void wait_unlink(goblin_engine *eng, struct goblin__block_table *t,
                        struct goblin__bwait *w)
{
    struct goblin__bkey *k = w->key;

    if (w->prev != NULL)
        w->prev->next = w->next;
    else
        k->first = w->next;
    if (w->next != NULL)
        w->next->prev = w->prev;
    else
        k->last = w->prev;
    w->key = NULL;
    key_release(eng, t, k);
}

/* Takes s off every key and off the blocked list; its state stays. */
static void unwait(goblin_session *s)
{
    struct goblin__block_table *t = s->eng->blocking;
    struct goblin__blocked *b = s->blk;
    size_t i;

    for (i = 0; i < b->nkeys; i++)
        if (b->w[i].key != NULL)
            wait_unlink(s->eng, t, &b->w[i]);
    if (b->prev != NULL)
        b->prev->next = b->next;
    else
        t->first = b->next;
    if (b->next != NULL)
        b->next->prev = b->prev;
    else
        t->last = b->prev;
    t->nblocked--;
    s->flags &= ~(uint32_t)SESS_BLOCKED;
}

static void blocked_free(goblin_session *s)
{
    struct goblin__blocked *b = s->blk;

    goblin_buf_free(&b->reply);
    goblin__free(s->eng->st, b, b->size);
    s->blk = NULL;
}

bool goblin__block_timeout(goblin__exec *x, struct goblin_slice arg,
                           int64_t *deadline_ms)
{
    long double v, ms;
    int64_t t, now;

    if (goblin_long_double_parse(arg.ptr, arg.len, &v) != 0) {
        goblin__reply_error(x, TIMEOUT_TEXT);
        return false;
    }
    /* Redis takes ceill(seconds * 1000) as a long long: 0.0001 is 1 ms,
     * -0.0001 is 0 (for ever), and past the range (or infinite) the
     * conversion gives LLONG_MIN on x86, "timeout is negative". */
    ms = v * 1000.0L;
    if (ms >= -9223372036854775808.0L && ms < 9223372036854775807.0L) {
        t = (int64_t)ms;
        t += (long double)t < ms;
    } else {
        t = INT64_MIN;
    }
    if (t < 0) {
        goblin__reply_error(x, "ERR timeout is negative");
        return false;
    }
    now = goblin__now_ms(x->st);
    *deadline_ms = t == 0 ? 0 : t > INT64_MAX - now ? INT64_MAX : now + t;
    return true;
}

bool goblin__block_allowed(const goblin__exec *x)
{
    return !x->eng->in_exec;
}

/* Undoes a half-made block (out of memory). */
static void block_undo(goblin_session *s, struct goblin__blocked *b,
                       size_t nk)
{
    size_t i;

    for (i = 0; i < nk; i++)
        wait_unlink(s->eng, s->eng->blocking, &b->w[i]);
    goblin__free(s->eng->st, b, b->size);
}

int goblin__block(goblin__exec *x, const struct goblin_slice *keys, size_t n,
                  const struct goblin__block_spec *spec)
{
    goblin_session *s = x->sess;
    struct goblin__block_table *t = table(x->eng);
    size_t dlen = spec->dst != NULL ? spec->dst->len : 0;
    size_t size = goblin__mul(n, sizeof(struct goblin__bwait));
    struct goblin__blocked *b = NULL;
    size_t i, nk = 0;
    int db = goblin__block_db(s);

    size = size > SIZE_MAX - sizeof(*b) - dlen ? SIZE_MAX
                                                : size + sizeof(*b) + dlen;
    if (t == NULL || size == SIZE_MAX ||
        (b = goblin__alloc(x->st, size)) == NULL)
        goto oom;
    memset(b, 0, sizeof(*b));
    b->spec = *spec;
    b->size = size;
    b->sink = x->sink;
    b->cmd = x->cmd;
    b->db = db;
    b->s = s;
    b->reply.alloc = &x->eng->acct;
    if (spec->dst != NULL) {
        unsigned char *d = (unsigned char *)&b->w[n];

        if (dlen > 0)
            memcpy(d, spec->dst->ptr, dlen);
        b->dst = (struct goblin_slice){d, dlen};
        b->spec.dst = &b->dst;
    }
    for (i = 0; i < n; i++) {
        struct goblin__bkey *k = key_get(x->eng, t, db, keys[i]);
        struct goblin__bwait *w = &b->w[nk];

        if (k == NULL) {
            block_undo(s, b, nk);
            goto oom;
        }
        if (k->last != NULL && k->last->s == s)
            continue; /* the same key twice: one wait, as in Redis */
        *w = (struct goblin__bwait){k->last, NULL, k, s};
        if (k->last != NULL)
            k->last->next = w;
        else
            k->first = w;
        k->last = w;
        nk++;
    }
    b->nkeys = nk;
    b->prev = t->last;
    if (t->last != NULL)
        t->last->next = b;
    else
        t->first = b;
    t->last = b;
    t->nblocked++;
    s->blk = b;
    s->flags |= SESS_BLOCKED;
    return 0;
oom:
    goblin__reply_code(x, GOBLIN_ENOMEM);
    return GOBLIN_ENOMEM;
}

void goblin__block_touch(goblin_engine *eng, int db, struct goblin_slice key)
{
    struct goblin__block_table *t = eng->blocking;
    struct goblin__bkey *k;

    if (t == NULL || t->nkeys == 0)
        return;
    k = find(t, key_hash(eng, db, key), db, key);
    if (k == NULL || k->ready || k->first == NULL)
        return;
    k->ready = true;
    k->rnext = NULL;
    if (t->ready_last != NULL)
        t->ready_last->rnext = k;
    else
        t->ready = k;
    t->ready_last = k;
}

void goblin__block_touch_db(goblin_engine *eng, int db)
{
    struct goblin__block_table *t = eng->blocking;
    goblin_store *st = eng->dbs[db].st;

    if (t == NULL || t->nkeys == 0 || st == NULL)
        return;
    for (size_t i = 0; i <= t->mask; i++)
        for (struct goblin__bkey *k = t->buckets[i]; k != NULL; k = k->next)
            if (k->db == db && goblin_key_exists(st, key_of(k)) == 1)
                goblin__block_touch(eng, db, key_of(k));
}

void goblin__session_wake(goblin_session *s)
{
    goblin_engine *eng = s->eng;

    if (s->wake != NULL)
        s->wake(s->wake_ctx);
    else if (eng->cfg.session_wake != NULL)
        eng->cfg.session_wake(eng->cfg.session_wake_ctx, s->user);
}

/* Runs fn's reply for blocked session s into its reply buffer (not its
 * output, which its transport may be writing without the lock): the
 * session's output buffer is swapped for the reply buffer meanwhile, so
 * the sink the command answered through (RESP writer or SBE) is reused. */
static bool answer(goblin_session *s, goblin__block_serve_fn *fn,
                   struct goblin_slice key, bool timeout, const char *error)
{
    goblin_engine *eng = s->eng;
    struct goblin__blocked *b = s->blk;
    goblin_session *running = eng->running;
    goblin__exec x = {eng, s, s->db, b->sink, b->sink, b->cmd, s->resp,
                      false, NULL};
    struct goblin_buf out = s->out;
    bool done = true;

    s->out = b->reply;
    eng->running = s;
    b->timed_out = timeout;
    if (error != NULL)
        goblin__reply_error(&x, error);
    else if (timeout && !b->serve_on_timeout)
        goblin__reply_null_array(&x);
    else
        done = (fn != NULL ? fn : b->spec.serve)(&x, b, key);
    eng->running = running;
    b->reply = s->out;
    s->out = out;
    if (!done)
        return false;
    unwait(s);
    b->done = true;
    goblin__session_wake(s);
    return true;
}

/* Offers ready key k to its waiters in order while it holds a value;
 * waiters for another type are passed over (Redis 7.0's
 * serveClientsBlockedOn*Key). */
static void serve_key(goblin_engine *eng, struct goblin__bkey *k)
{
    struct goblin__bwait *w, *next;
    goblin_store *st = eng->dbs[k->db].st; /* the database k waits in */

    for (w = k->first; w != NULL; w = next) {
        enum goblin_type type = goblin_key_type(st, key_of(k));

        next = w->next;
        if (type == GOBLIN_TYPE_NONE)
            break;
        if (type == w->s->blk->spec.type)
            answer(w->s, w->s->blk->spec.serve, key_of(k), false, NULL);
    }
}

void goblin__block_serve(goblin_engine *eng)
{
    struct goblin__block_table *t = eng->blocking;
    struct goblin__bkey *k;

    while ((k = t->ready) != NULL) {
        t->ready = k->rnext;
        if (t->ready == NULL)
            t->ready_last = NULL;
        k->ready = false;
        k->busy = true;
        serve_key(eng, k);
        k->busy = false;
        key_release(eng, t, k);
    }
    goblin__stream_flush(eng); /* the served pops, a unit each time */
}

void goblin__block_cron(goblin_engine *eng)
{
    struct goblin__block_table *t = eng->blocking;
    struct goblin__blocked *b, *next;
    int64_t now;

    if (t == NULL || t->nblocked == 0)
        return;
    now = goblin__now_ms(eng->st);
    for (b = t->first; b != NULL; b = next) {
        next = b->next;
        if (b->spec.deadline_ms != 0 && b->spec.deadline_ms <= now)
            answer(b->s, NULL, (struct goblin_slice){"", 0}, true, NULL);
    }
}

bool goblin__block_offer(goblin_session *s)
{
    if (!(s->flags & SESS_BLOCKED) || s->blk == NULL)
        return false;
    return answer(s, s->blk->spec.serve, (struct goblin_slice){"", 0},
                  false, NULL);
}

bool goblin__block_unblock(goblin_session *target, bool error)
{
    if (!(target->flags & SESS_BLOCKED))
        return false;
    return answer(target, NULL, (struct goblin_slice){"", 0}, !error,
                  error ? UNBLOCKED_TEXT : NULL);
}

void goblin__block_disconnect_all(goblin_engine *eng)
{
    struct goblin__block_table *t = eng->blocking;
    struct goblin__blocked *b, *next;

    for (b = t != NULL ? t->first : NULL; b != NULL; b = next) {
        goblin_session *s = b->s;

        next = b->next;
        if (!(s->flags & SESS_BLOCKED))
            continue;
        answer(s, NULL, (struct goblin_slice){"", 0}, false,
               "UNBLOCKED force unblock from blocking operation, instance "
               "state changed (master -> replica?)");
        s->flags |= SESS_CLOSE; /* once the error is out */
    }
}

void goblin__block_drop(goblin_session *s)
{
    if (s->blk == NULL)
        return;
    if (s->flags & SESS_BLOCKED)
        unwait(s);
    blocked_free(s);
}

void goblin__block_flush(goblin_session *s)
{
    struct goblin__blocked *b = s->blk;

    if (b == NULL || !b->done)
        return;
    if (b->reply.failed ||
        (b->reply.len > 0 &&
         goblin_buf_append(&s->out, b->reply.data, b->reply.len) != 0))
        s->out.failed = true;
    blocked_free(s);
}

size_t goblin__block_count(const goblin_engine *eng)
{
    return eng->blocking != NULL ? eng->blocking->nblocked : 0;
}

size_t goblin__block_timed_count(const goblin_engine *eng)
{
    const struct goblin__blocked *b;
    size_t n = 0;

    for (b = eng->blocking != NULL ? eng->blocking->first : NULL; b != NULL;
         b = b->next)
        n += b->spec.deadline_ms != 0;
    return n;
}

void goblin__block_free(goblin_engine *eng)
{
    struct goblin__block_table *t = eng->blocking;

    if (t == NULL)
        return;
    goblin__free(eng->st, t->buckets, (t->mask + 1) * sizeof(*t->buckets));
    goblin__free(eng->st, t, sizeof(*t));
    eng->blocking = NULL;
}
