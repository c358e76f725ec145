/* tracking.h - client-side caching (Redis's tracking.c): CLIENT TRACKING
 * and its invalidation messages.
 *
 * Default mode: the keys a tracking session reads (commands flagged
 * readonly, their key positions from the key specs) go into the tracking
 * table, key -> ids of the sessions that read it; the first write to the
 * key sends each of them one invalidation and forgets the key. BCAST
 * mode: nothing is remembered; a write to a key under one of a session's
 * prefixes queues the key for that prefix, and after the command every
 * prefix with keys sends them in one message (sorted, each once).
 *
 * A message goes to the session itself as a RESP3 push (">2 invalidate
 * [keys]"), or to the session of its REDIRECT: as a push when that one
 * speaks RESP3, else as a message on __redis__:invalidate when it is
 * subscribed. Messages for the session running the command wait until
 * its reply is written, as in Redis. FLUSHDB and FLUSHALL send every
 * tracking session a null in place of the keys.
 *
 * Cost when unused: the store's change hook tests eng->track_on (no
 * table keys and no BCAST session: false), and goblin__run tests the
 * session's track flags.
 */
#ifndef GOBLIN_TRACKING_H
#define GOBLIN_TRACKING_H

#include "session.h"

enum {
    TRACK_ON = 1u << 0,
    TRACK_BCAST = 1u << 1,
    TRACK_OPTIN = 1u << 2,
    TRACK_OPTOUT = 1u << 3,
    TRACK_NOLOOP = 1u << 4,
    TRACK_CACHING = 1u << 5, /* CLIENT CACHING yes/no was given */
    TRACK_BROKEN = 1u << 6,  /* the redirect session is gone */
};

/* One BCAST prefix of a session, with the keys written under it since the
 * last broadcast: records of [u32 length][u64 writer id][bytes]. */
struct goblin__track_prefix {
    unsigned char *p;
    size_t len;
    struct goblin_buf keys;
};

/* Turns tracking on for s (options TRACK_*; prefixes in BCAST mode are
 * added to those s has). 0 or GOBLIN_ENOMEM. */
int goblin__tracking_enable(goblin_session *s, uint64_t redir,
                            uint32_t options,
                            const struct goblin_slice *prefix, size_t n);
void goblin__tracking_disable(goblin_session *s);

/* goblin__run, after a command of a tracking session. */
void goblin__tracking_after(goblin__exec *x, int argc,
                            const struct goblin_slice *argv);
/* goblin__dispatch, after the top-level command of s: sends the
 * broadcasts and what waited for s's reply, straight after that reply
 * when into_out (s's replies go to its own output), else as a push. */
void goblin__tracking_flush(goblin_engine *eng, goblin_session *s,
                            bool into_out);

/* A key was written (the change hook), or every key (FLUSHDB/FLUSHALL). */
void goblin__tracking_invalidate(goblin_engine *eng, struct goblin_slice key);
void goblin__tracking_flushed(goblin_engine *eng);

/* cron: tracking-table-max-keys. */
void goblin__tracking_cron(goblin_engine *eng);

/* INFO figures. */
size_t goblin__tracking_total_prefixes(const goblin_engine *eng);

/* Registers tracking-table-max-keys; engine close frees the table. */
int goblin__tracking_init(goblin_engine *eng);
void goblin__tracking_free(goblin_engine *eng);

#endif
