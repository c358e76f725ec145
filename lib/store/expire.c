/* expire.c - deadlines: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT with Redis 7's
 * NX/XX/GT/LT, TTL, PTTL, EXPIRETIME, PEXPIRETIME, PERSIST, and the active
 * expiry step.
 *
 * Deadlines are Unix ms in the store's clock. A key is expired when now >
 * deadline (at the deadline it still exists); setting a deadline not after
 * now deletes the key at once, as Redis's checkAlreadyExpired does. The
 * active step walks the dense expiry array with a cursor that survives
 * between calls; deleting the entry under the cursor moves the last entry
 * there, so the cursor stays put and looks at it next. Hash fields with
 * deadlines get their own step first (hash_ttl.c).
 */
#include "goblin/keys.h"
#include "hash_ttl.h"
#include "store.h"

#define BATCH 20

/* EXPIRE's NX|XX|GT|LT flags, shared with the hash field deadlines
 * (hash_ttl.c): 0, or GOBLIN_ESYNTAX for a combination Redis refuses. */
int goblin__expire_flags_check(int flags)
{
    if (flags & ~(GOBLIN_EXPIRE_NX | GOBLIN_EXPIRE_XX | GOBLIN_EXPIRE_GT |
                  GOBLIN_EXPIRE_LT))
        return GOBLIN_ESYNTAX;
    if ((flags & GOBLIN_EXPIRE_NX) && (flags & ~GOBLIN_EXPIRE_NX))
        return GOBLIN_ESYNTAX;
    if ((flags & GOBLIN_EXPIRE_GT) && (flags & GOBLIN_EXPIRE_LT))
        return GOBLIN_ESYNTAX;
    return 0;
}

/* Whether flags let the deadline change from cur (-1: none, which counts
 * as infinitely far, as in Redis 7.4's hash fields) to when. */
bool goblin__expire_allowed(int flags, int64_t cur, int64_t when)
{
    if ((flags & GOBLIN_EXPIRE_NX) && cur != -1)
        return false;
    if ((flags & GOBLIN_EXPIRE_XX) && cur == -1)
        return false;
    if ((flags & GOBLIN_EXPIRE_GT) && (cur == -1 || when <= cur))
        return false;
    if ((flags & GOBLIN_EXPIRE_LT) && cur != -1 && when >= cur)
        return false;
    return true;
}

/* Redis's expireGenericCommand: v in seconds (unit 1000) or ms (unit 1),
 * relative to now or absolute. */
static int expire_generic(goblin_store *st, struct goblin_slice key,
                          int64_t v, int64_t unit, bool relative, int flags)
{
    int64_t base = relative ? goblin__now_ms(st) : 0;
    uint32_t id;
    int r = goblin__expire_flags_check(flags);

    if (r != 0)
        return r;
    if (unit == 1000) {
        if (v > INT64_MAX / 1000 || v < INT64_MIN / 1000)
            return GOBLIN_EINVAL;
        v *= 1000;
    }
    if (v > INT64_MAX - base)
        return GOBLIN_EINVAL;
    v += base;
    goblin__write_begin(st);
    if (!goblin__key_find(st, key, &id))
        return 0;
    if (!goblin__expire_allowed(flags, goblin__key_deadline(st, id), v))
        return 0;
    /* Already past: gone now, but for a replica's master (Redis's
     * checkAlreadyExpired), whose clock may be behind ours. */
    if (v <= goblin__now_ms(st) && !st->master_view) {
        goblin__key_changed(st, key);
        goblin__key_delete_id(st, id);
        return 1;
    }
    r = goblin__key_set_deadline(st, id, v);
    if (r != 0)
        return r;
    goblin__key_changed(st, key);
    return 1;
}

int goblin_key_expire(goblin_store *st, struct goblin_slice key,
                      int64_t seconds, int flags)
{
    return expire_generic(st, key, seconds, 1000, true, flags);
}

int goblin_key_pexpire(goblin_store *st, struct goblin_slice key, int64_t ms,
                       int flags)
{
    return expire_generic(st, key, ms, 1, true, flags);
}

int goblin_key_expireat(goblin_store *st, struct goblin_slice key,
                        int64_t unix_seconds, int flags)
{
    return expire_generic(st, key, unix_seconds, 1000, false, flags);
}

int goblin_key_pexpireat(goblin_store *st, struct goblin_slice key,
                         int64_t unix_ms, int flags)
{
    return expire_generic(st, key, unix_ms, 1, false, flags);
}

/* Redis's ttlGenericCommand. */
static int64_t ttl_generic(goblin_store *st, struct goblin_slice key,
                           bool ms, bool absolute)
{
    uint32_t id;
    int64_t when, t;

    if (!goblin__key_find(st, key, &id))
        return -2;
    when = goblin__key_deadline(st, id);
    if (when == -1)
        return -1;
    t = absolute ? when : when - goblin__now_ms(st);
    if (t < 0)
        t = 0;
    return ms ? t : (t + 500) / 1000;
}

int64_t goblin_key_ttl(goblin_store *st, struct goblin_slice key)
{
    return ttl_generic(st, key, false, false);
}

int64_t goblin_key_pttl(goblin_store *st, struct goblin_slice key)
{
    return ttl_generic(st, key, true, false);
}

int64_t goblin_key_expiretime(goblin_store *st, struct goblin_slice key)
{
    return ttl_generic(st, key, false, true);
}

int64_t goblin_key_pexpiretime(goblin_store *st, struct goblin_slice key)
{
    return ttl_generic(st, key, true, true);
}

int goblin_key_persist(goblin_store *st, struct goblin_slice key)
{
    uint32_t id;
    int r;

    goblin__write_begin(st);
    if (!goblin__key_find(st, key, &id))
        return 0;
    r = goblin__key_clear_deadline(st, id);
    if (r == 1)
        goblin__key_changed(st, key);
    return r;
}

/* Deletes the key whose expiry entry is at pos, reporting it. */
static void expire_at(goblin_store *st, size_t pos)
{
    uint32_t id = goblin__exp_id(st, pos);
    struct goblin__rec r;
    struct goblin_slice key;

    goblin__rec_parse(goblin__key_rec(st, id), &r);
    key.ptr = r.key;
    key.len = r.klen;
    goblin__key_gone(st, GOBLIN__GONE_EXPIRED, key);
    goblin__key_drop_id(st, id);
}

int goblin_store_expire_step(goblin_store *st, size_t max_work,
                             size_t *expired)
{
    struct goblin__keyspace *ks = &st->ks;
    int64_t now = goblin__now_ms(st);
    size_t work = 0, batch = 0, stale = 0, n = 0;
    int more = 0;
    size_t fields;

    goblin__write_begin(st);
    /* Hash fields past their deadlines first (none: one branch). */
    fields = goblin__hash_expire_step(st, max_work);
    while (work < max_work && ks->exp_count > 0) {
        if (ks->exp_cursor >= ks->exp_count)
            ks->exp_cursor = 0;
        if (now > goblin__exp_when(st, ks->exp_cursor)) {
            expire_at(st, ks->exp_cursor);
            stale++;
            n++;
        } else {
            ks->exp_cursor++;
        }
        work++;
        if (++batch == BATCH) {
            more = stale * 10 > BATCH;
            batch = stale = 0;
        }
    }
    if (batch > 0)
        more = stale * 10 > batch;
    if (expired != NULL)
        *expired += n;
    return (work == max_work && more) || fields * 10 > max_work;
}
