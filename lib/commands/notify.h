/* notify.h - keyspace and keyevent notifications (Redis's
 * notify-keyspace-events): the one hook every command that changes a key
 * calls, with Redis's event names.
 *
 * A command calls goblin__notify(x, CLASS, "event", key) after the change
 * took effect, exactly where Redis calls notifyKeyspaceEvent. With
 * notifications off (the default) that is one load and one predictable
 * branch: eng->notify_flags is 0 unless K or E is set. When on, the event
 * is published on __keyspace@<db>__:<key> (message: the event) and/or
 * __keyevent@<db>__:<event> (message: the key), as Redis does. Expired
 * and evicted keys are reported by the store (goblin__key_gone).
 */
#ifndef GOBLIN_NOTIFY_H
#define GOBLIN_NOTIFY_H

#include "command.h"
#include "engine/session.h"
#include "goblin/keys.h"

/* Redis's NOTIFY_* classes (server.h), with their letters. */
enum {
    GOBLIN__NOTIFY_KEYSPACE = 1 << 0, /* K */
    GOBLIN__NOTIFY_KEYEVENT = 1 << 1, /* E */
    GOBLIN__NOTIFY_GENERIC = 1 << 2,  /* g */
    GOBLIN__NOTIFY_STRING = 1 << 3,   /* $ */
    GOBLIN__NOTIFY_LIST = 1 << 4,     /* l */
    GOBLIN__NOTIFY_SET = 1 << 5,      /* s */
    GOBLIN__NOTIFY_HASH = 1 << 6,     /* h */
    GOBLIN__NOTIFY_ZSET = 1 << 7,     /* z */
    GOBLIN__NOTIFY_EXPIRED = 1 << 8,  /* x */
    GOBLIN__NOTIFY_EVICTED = 1 << 9,  /* e */
    GOBLIN__NOTIFY_STREAM = 1 << 10,  /* t */
    GOBLIN__NOTIFY_KEY_MISS = 1 << 11, /* m */
    GOBLIN__NOTIFY_LOADED = 1 << 12,  /* module key loaded: no letter */
    GOBLIN__NOTIFY_MODULE = 1 << 13,  /* d */
    GOBLIN__NOTIFY_NEW = 1 << 14,     /* n */
};

/* The flags of a notify-keyspace-events text (letters as Redis's
 * keyspaceEventsStringToFlags reads them), or -1 for a bad letter. */
int goblin__notify_parse(const char *text, size_t len);

/* Registers notify-keyspace-events. 0 or GOBLIN_ENOMEM. */
int goblin__notify_init(goblin_engine *eng);

/* The store key events (GOBLIN__KEY_NEW, GOBLIN__KEY_MISS) that the
 * current notify-keyspace-events publishes. */
int goblin__notify_key_events(const goblin_engine *eng);

/* Publishes the event (class type) for key of database dbid. */
void goblin__notify_emit(goblin_engine *eng, int type, const char *event,
                         struct goblin_slice key, int dbid);

/* Each database store's key_gone hook (db.c installs it with ctx the
 * database's slot): expired and evicted keys. */
void goblin__notify_key_gone(void *ctx, int why, struct goblin_slice key);

/* A read lookup of key made by a write command (Redis's lookupKeyRead
 * there: GETDEL, COPY's source, the STORE commands' sources, ...):
 * counted in keyspace_hits/misses, a miss a keymiss event. found: the
 * key is there (of any type). */
void goblin__read_lookup(goblin__exec *x, int found, struct goblin_slice key);

/* The read lookups of n keys, in order, before a write command's own. */
void goblin__read_keys(goblin__exec *x, const struct goblin_slice *keys,
                       size_t n);

/* The lookups from here on are read lookups (a write command's sources,
 * Redis's lookupKeyRead there), until goblin__reads_done or the store
 * call that ends its read phase. */
static inline void goblin__reads_begin(goblin__exec *x)
{
    x->st->reads = GOBLIN__READS_COUNT | GOBLIN__READS_NOTIFY;
}

/* The command's read lookups count but do not notify (OBJECT: Redis's
 * LOOKUP_NONOTIFY). */
static inline void goblin__reads_unnotified(goblin__exec *x)
{
    x->st->reads &= (uint8_t)~GOBLIN__READS_NOTIFY;
}

/* The command's read lookups are over: later lookups of the same keys
 * (a second pass over them) are not counted again. */
static inline void goblin__reads_done(goblin__exec *x)
{
    x->st->reads = 0;
}

/* The hook: the session's database names the channel. */
static inline void goblin__notify(goblin__exec *x, int type,
                                  const char *event, struct goblin_slice key)
{
    if (__builtin_expect((x->eng->notify_flags & type) != 0, 0))
        goblin__notify_emit(x->eng, type, event, key, x->sess->dbid);
}

/* True when an event of class type would be published: for the few
 * commands that must look before they know which event happened. */
static inline bool goblin__notify_on(const goblin__exec *x, int type)
{
    return __builtin_expect((x->eng->notify_flags & type) != 0, 0);
}

/* The same event for each of n keys. */
static inline void goblin__notify_keys(goblin__exec *x, int type,
                                       const char *event,
                                       const struct goblin_slice *keys,
                                       size_t n)
{
    if (__builtin_expect((x->eng->notify_flags & type) != 0, 0))
        for (size_t i = 0; i < n; i++)
            goblin__notify_emit(x->eng, type, event, keys[i],
                                x->sess->dbid);
}

/* After a removal from key's collection: "del" too when it emptied it. */
static inline void goblin__notify_removed(goblin__exec *x, int type,
                                          const char *event,
                                          struct goblin_slice key)
{
    if (!goblin__notify_on(x, type | GOBLIN__NOTIFY_GENERIC))
        return;
    goblin__notify(x, type, event, key);
    if (!goblin_key_exists(x->st, key))
        goblin__notify(x, GOBLIN__NOTIFY_GENERIC, "del", key);
}

/* After a STORE command wrote n members to dst (existed: dst was there
 * before): event, or "del" when the empty result deleted dst. */
static inline void goblin__notify_stored(goblin__exec *x, int type,
                                         const char *event,
                                         struct goblin_slice dst, int64_t n,
                                         bool existed)
{
    if (n > 0)
        goblin__notify(x, type, event, dst);
    else if (n == 0 && existed)
        goblin__notify(x, GOBLIN__NOTIFY_GENERIC, "del", dst);
}

#endif
