/* notify.c - keyspace and keyevent notifications (notify.h): the
 * notify-keyspace-events setting and the publishing of one event, as
 * Redis's notify.c. */
#include <stdio.h>
#include <string.h>

#include "engine/settings.h"
#include "engine/tracking.h"
#include "notify.h"

#define NOTIFY_ALL                                                          \
    (GOBLIN__NOTIFY_GENERIC | GOBLIN__NOTIFY_STRING | GOBLIN__NOTIFY_LIST | \
     GOBLIN__NOTIFY_SET | GOBLIN__NOTIFY_HASH | GOBLIN__NOTIFY_ZSET |       \
     GOBLIN__NOTIFY_EXPIRED | GOBLIN__NOTIFY_EVICTED |                      \
     GOBLIN__NOTIFY_STREAM | GOBLIN__NOTIFY_MODULE)

int goblin__notify_parse(const char *text, size_t len)
{
    static const char letters[] = "AgSlshzxeKEtmdn";
    static const int bits[] = {
        NOTIFY_ALL, GOBLIN__NOTIFY_GENERIC, GOBLIN__NOTIFY_STRING,
        GOBLIN__NOTIFY_LIST, GOBLIN__NOTIFY_SET, GOBLIN__NOTIFY_HASH,
        GOBLIN__NOTIFY_ZSET, GOBLIN__NOTIFY_EXPIRED, GOBLIN__NOTIFY_EVICTED,
        GOBLIN__NOTIFY_KEYSPACE, GOBLIN__NOTIFY_KEYEVENT,
        GOBLIN__NOTIFY_STREAM, GOBLIN__NOTIFY_KEY_MISS,
        GOBLIN__NOTIFY_MODULE, GOBLIN__NOTIFY_NEW,
    };
    int flags = 0;

    for (size_t i = 0; i < len; i++) {
        /* '$' is the string class; 'S' stands in for it in letters so
         * that 's' (sets) stays distinct. */
        const char *at = text[i] == '$' ? letters + 2
                         : text[i] == 'S' || text[i] == '\0'
                             ? NULL
                             : strchr(letters, text[i]);

        if (at == NULL)
            return -1;
        flags |= bits[at - letters];
    }
    return flags;
}

/* Only the classes that can publish: none unless K or E is on. */
static int effective(int flags)
{
    return flags & (GOBLIN__NOTIFY_KEYSPACE | GOBLIN__NOTIFY_KEYEVENT)
               ? flags
               : 0;
}

static int notify_get(void *ctx, char *buf, size_t cap)
{
    goblin_engine *eng = ctx;
    size_t n = strlen(eng->notify_text);

    n = n < cap ? n : cap;
    memcpy(buf, eng->notify_text, n);
    return (int)n;
}

static int notify_set(void *ctx, struct goblin_slice v, const char **why)
{
    goblin_engine *eng = ctx;
    const struct goblin__sdesc *d =
        goblin__sdesc_find((struct goblin_slice){"notify-keyspace-events",
                                                 22});
    char norm[sizeof(eng->notify_text)];
    static char whybuf[96];
    int64_t num;
    int flags;

    if (goblin__sdesc_parse(d, v, norm, sizeof(norm), &num, why, whybuf,
                            sizeof(whybuf)) != 0)
        return GOBLIN_EINVAL;
    if ((flags = goblin__notify_parse(v.ptr, v.len)) < 0) {
        *why = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";
        return GOBLIN_EINVAL;
    }
    memcpy(eng->notify_text, norm, sizeof(norm));
    eng->notify_flags = effective(flags);
    if (eng->dbs != NULL)
        goblin__db_key_events(eng);
    return 0;
}

int goblin__notify_key_events(const goblin_engine *eng)
{
    return (eng->notify_flags & GOBLIN__NOTIFY_NEW ? GOBLIN__KEY_NEW : 0) |
           (eng->notify_flags & GOBLIN__NOTIFY_KEY_MISS ? GOBLIN__KEY_MISS
                                                        : 0);
}

void goblin__notify_key_gone(void *ctx, int why, struct goblin_slice key)
{
    const struct goblin__db *d = ctx;

    /* A key gone is a key written, for client-side caching too. */
    if (__builtin_expect(d->eng->track_on, 0))
        goblin__tracking_invalidate(d->eng, key);
    if (why == GOBLIN__GONE_EXPIRED)
        goblin__notify_emit(d->eng, GOBLIN__NOTIFY_EXPIRED, "expired", key,
                            d->id);
    else
        goblin__notify_emit(d->eng, GOBLIN__NOTIFY_EVICTED, "evicted", key,
                            d->id);
}

int goblin__notify_init(goblin_engine *eng)
{
    const struct goblin_setting s = {"notify-keyspace-events", NULL,
                                     notify_get, notify_set, eng};

    eng->notify_flags = 0;
    eng->notify_text[0] = '\0';
    return goblin_engine_setting_add(eng, &s);
}

/* "<prefix><db>__:<name>" in buf (cap bytes) or in memory of the store's
 * when longer; returns the channel, NULL when out of memory. */
static char *channel(goblin_engine *eng, const char *prefix, int dbid,
                     struct goblin_slice name, char *buf, size_t cap,
                     size_t *len)
{
    char head[40];
    int h = snprintf(head, sizeof(head), "%s%d__:", prefix, dbid);
    char *p = buf;

    *len = (size_t)h + name.len;
    if (*len > cap && (p = goblin__alloc(eng->st, *len)) == NULL)
        return NULL;
    memcpy(p, head, (size_t)h);
    if (name.len > 0)
        memcpy(p + h, name.ptr, name.len);
    return p;
}

static void publish(goblin_engine *eng, const char *prefix, int dbid,
                    struct goblin_slice name, struct goblin_slice message)
{
    char buf[256], *ch;
    size_t len;

    if ((ch = channel(eng, prefix, dbid, name, buf, sizeof(buf), &len)) ==
        NULL)
        return;
    goblin__pubsub_publish(eng, false, (struct goblin_slice){ch, len},
                           message);
    if (ch != buf)
        goblin__free(eng->st, ch, len);
}

void goblin__notify_emit(goblin_engine *eng, int type, const char *event,
                         struct goblin_slice key, int dbid)
{
    struct goblin_slice ev = {event, strlen(event)};

    if (!(eng->notify_flags & type))
        return;
    if (eng->notify_flags & GOBLIN__NOTIFY_KEYSPACE)
        publish(eng, "__keyspace@", dbid, key, ev);
    if (eng->notify_flags & GOBLIN__NOTIFY_KEYEVENT)
        publish(eng, "__keyevent@", dbid, ev, key);
}

void goblin__read_lookup(goblin__exec *x, int found, struct goblin_slice key)
{
    uint8_t mode = x->st->reads;

    x->st->reads = GOBLIN__READS_COUNT | GOBLIN__READS_NOTIFY;
    goblin__read_counted(x->st, found, key);
    x->st->reads = mode;
}

void goblin__read_keys(goblin__exec *x, const struct goblin_slice *keys,
                       size_t n)
{
    for (size_t i = 0; i < n; i++)
        goblin__read_lookup(x, goblin_key_exists(x->st, keys[i]) == 1,
                            keys[i]);
}
