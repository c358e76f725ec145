/* watch.c - the WATCH table: which sessions watch which keys, and marking
 * them dirty when a key changes (Redis's touchWatchedKey).
 *
 * A chained hash table maps a key to one struct goblin__watch holding the
 * key's bytes and the sessions watching it; each session lists the entries
 * it watches. An entry lives while some session watches it. The table is
 * empty unless someone uses WATCH, so the store's change hook costs one
 * test on the path of every write.
 */
#include <string.h>

#include "session.h"

static uint64_t key_hash(const goblin_engine *eng, int db,
                         struct goblin_slice key)
{
    return goblin__hash_bytes(eng->st->hash_seed, key.ptr, key.len) ^
           (uint64_t)db * 0x9e3779b97f4a7c15ull;
}

static struct goblin__watch *find(const goblin_engine *eng, int db,
                                  struct goblin_slice key, uint64_t h)
{
    struct goblin__watch *w;

    if (eng->wbuckets == NULL)
        return NULL;
    for (w = eng->wbuckets[h & eng->wmask]; w != NULL; w = w->next)
        if (w->hash == h && w->db == db && w->keylen == key.len &&
            memcmp(w->key, key.ptr, key.len) == 0)
            return w;
    return NULL;
}

static int grow_buckets(goblin_engine *eng)
{
    size_t n = eng->wbuckets == NULL ? 16 : (eng->wmask + 1) * 2, i;
    struct goblin__watch **b, *w, *next;

    b = goblin__alloc(eng->st, goblin__mul(n, sizeof(*b)));
    if (b == NULL)
        return GOBLIN_ENOMEM;
    memset(b, 0, n * sizeof(*b));
    for (i = 0; eng->wbuckets != NULL && i <= eng->wmask; i++) {
        for (w = eng->wbuckets[i]; w != NULL; w = next) {
            next = w->next;
            w->next = b[w->hash & (n - 1)];
            b[w->hash & (n - 1)] = w;
        }
    }
    if (eng->wbuckets != NULL)
        goblin__free(eng->st, eng->wbuckets,
                     (eng->wmask + 1) * sizeof(*eng->wbuckets));
    eng->wbuckets = b;
    eng->wmask = n - 1;
    return 0;
}

static struct goblin__watch *entry_get(goblin_engine *eng, int db,
                                       struct goblin_slice key)
{
    uint64_t h = key_hash(eng, db, key);
    struct goblin__watch *w = find(eng, db, key, h);

    if (w != NULL)
        return w;
    if ((eng->wbuckets == NULL || eng->nwatched > eng->wmask) &&
        grow_buckets(eng) != 0)
        return NULL;
    w = goblin__alloc(eng->st, sizeof(*w) + key.len);
    if (w == NULL)
        return NULL;
    memset(w, 0, sizeof(*w));
    w->hash = h;
    w->db = db;
    w->keylen = key.len;
    if (key.len > 0)
        memcpy(w->key, key.ptr, key.len);
    w->next = eng->wbuckets[h & eng->wmask];
    eng->wbuckets[h & eng->wmask] = w;
    eng->nwatched++;
    return w;
}

static void entry_put(goblin_engine *eng, struct goblin__watch *w)
{
    struct goblin__watch **p = &eng->wbuckets[w->hash & eng->wmask];

    if (w->nwatchers > 0)
        return;
    while (*p != w)
        p = &(*p)->next;
    *p = w->next;
    goblin__free(eng->st, w->watchers,
                 w->capwatchers * sizeof(*w->watchers));
    goblin__free(eng->st, w, sizeof(*w) + w->keylen);
    eng->nwatched--;
}

/* Grows an array of pointers held in *arr with *cap slots to hold one
 * more than n. */
static int reserve(goblin_store *st, void *arr, uint32_t *cap, uint32_t n)
{
    void **a = *(void ***)arr;
    uint32_t c = *cap == 0 ? 4 : *cap * 2;

    if (n < *cap)
        return 0;
    a = goblin__realloc(st, a, *cap * sizeof(void *), c * sizeof(void *));
    if (a == NULL)
        return GOBLIN_ENOMEM;
    *(void ***)arr = a;
    *cap = c;
    return 0;
}

int goblin__watch_key(goblin_session *s, struct goblin_slice key)
{
    goblin_engine *eng = s->eng;
    struct goblin__watch *w;
    uint32_t i;

    for (i = 0; i < s->nwatched; i++)
        if (s->watched[i]->db == s->dbid && s->watched[i]->keylen == key.len &&
            memcmp(s->watched[i]->key, key.ptr, key.len) == 0)
            return 0;
    if (reserve(eng->st, &s->watched, &s->capwatched, s->nwatched) != 0)
        return GOBLIN_ENOMEM;
    w = entry_get(eng, s->dbid, key);
    if (w == NULL)
        return GOBLIN_ENOMEM;
    if (reserve(eng->st, &w->watchers, &w->capwatchers, w->nwatchers) != 0) {
        entry_put(eng, w);
        return GOBLIN_ENOMEM;
    }
    w->watchers[w->nwatchers++] = s;
    s->watched[s->nwatched++] = w;
    return 0;
}

void goblin__unwatch_all(goblin_session *s)
{
    struct goblin__watch *w;
    uint32_t i, j;

    for (i = 0; i < s->nwatched; i++) {
        w = s->watched[i];
        for (j = 0; j < w->nwatchers; j++) {
            if (w->watchers[j] == s) {
                w->watchers[j] = w->watchers[--w->nwatchers];
                break;
            }
        }
        entry_put(s->eng, w);
    }
    goblin__free(s->eng->st, s->watched, s->capwatched * sizeof(*s->watched));
    s->watched = NULL;
    s->nwatched = s->capwatched = 0;
    s->flags &= ~(uint32_t)SESS_DIRTY_CAS;
}

void goblin__watch_touch(goblin_engine *eng, int db, struct goblin_slice key)
{
    struct goblin__watch *w;
    uint32_t i;

    if (eng->nwatched == 0)
        return;
    w = find(eng, db, key, key_hash(eng, db, key));
    if (w == NULL)
        return;
    for (i = 0; i < w->nwatchers; i++)
        w->watchers[i]->flags |= SESS_DIRTY_CAS;
}

/* Marks dirty every session watching a key for which changed() says the
 * flush changes it (Redis's touchAllWatchedKeysInDb marks keys that
 * exist). */
void goblin__watch_touch_if(goblin_engine *eng, int db,
                            bool (*changed)(goblin_store *st,
                                            struct goblin_slice key))
{
    struct goblin__watch *w;
    size_t b;
    uint32_t i;

    for (b = 0; eng->nwatched > 0 && b <= eng->wmask; b++) {
        for (w = eng->wbuckets[b]; w != NULL; w = w->next) {
            goblin_store *st;

            if (db >= 0 && w->db != db)
                continue;
            st = goblin__db_peek(eng, w->db);
            if (st == NULL ||
                !changed(st, (struct goblin_slice){w->key, w->keylen}))
                continue;
            for (i = 0; i < w->nwatchers; i++)
                w->watchers[i]->flags |= SESS_DIRTY_CAS;
        }
    }
}

void goblin__watch_free(goblin_engine *eng)
{
    if (eng->wbuckets != NULL)
        goblin__free(eng->st, eng->wbuckets,
                     (eng->wmask + 1) * sizeof(*eng->wbuckets));
    eng->wbuckets = NULL;
    eng->wmask = 0;
}
