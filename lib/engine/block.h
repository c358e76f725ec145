/* block.h - blocking commands (BLPOP, BZPOPMIN, BLMOVE, ...): the wait
 * registry and the blocked state of a session, as Redis 7.0 keeps them
 * (blocked.c).
 *
 * A blocking command that finds nothing to take registers its session on
 * its keys (goblin__block) and writes no reply: the session is blocked and
 * runs none of the input behind the command. The engine's table maps each
 * waited key (per database) to its waiters in the order they blocked. A
 * write to a waited key (the store's key_changed hook) puts the key on the
 * ready list; once the command that wrote it has completed (EXEC's whole
 * queue for a write inside MULTI), goblin__block_serve takes the ready
 * keys in the order they became ready and offers each key to its waiters
 * in order, until one of them empties it. A served waiter's reply (or a
 * timeout, or CLIENT UNBLOCK) is written into the session's own reply
 * buffer, not its output: the transport may be writing the output without
 * the lock (goblin/engine.h). The session is woken (its wake hook, or the
 * engine's session_wake) and its transport calls goblin_session_resume,
 * which moves the reply into the output and runs the input that waited.
 *
 * Memory: the table and every blocked state come from the store's
 * allocator; a session that closes while blocked leaves nothing behind.
 */
#ifndef GOBLIN_BLOCK_H
#define GOBLIN_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "commands/command.h"
#include "goblin/keys.h"
#include "session.h"

struct goblin__blocked;

/* Offers key (which holds a value of the waiter's type) to blocked
 * state b, replying through x (x->sess is the waiter). Returns true when
 * it replied (the waiter is then unblocked), false to leave it waiting. */
typedef bool goblin__block_serve_fn(goblin__exec *x,
                                    const struct goblin__blocked *b,
                                    struct goblin_slice key);

/* What a blocking command waits for. */
struct goblin__block_spec {
    goblin__block_serve_fn *serve;
    enum goblin_type type;      /* the type of key that can serve it */
    int where;                  /* 0 left / min, 1 right / max */
    int whereto;                /* BLMOVE: 0 left, 1 right */
    int64_t count;              /* BLMPOP, BZMPOP: COUNT; else 0 */
    const struct goblin_slice *dst; /* BLMOVE's destination, or NULL */
    int64_t deadline_ms;        /* store clock; 0 = for ever */
};

struct goblin__bkey;

/* One session waiting on one key: a link of the key's waiter list. */
struct goblin__bwait {
    struct goblin__bwait *prev, *next;
    struct goblin__bkey *key;
    goblin_session *s;
};

/* A session's blocked state (s->blk). While waiting, w[0..nkeys) are its
 * links on the keys it named (duplicates dropped, in its order); once
 * served, done is set and reply holds the bytes for its output. */
struct goblin__blocked {
    struct goblin__block_spec spec; /* spec.dst points at dst below */
    struct goblin_slice dst;
    struct goblin_sink *sink;       /* where the command was answering */
    const struct goblin__command *cmd;
    goblin_session *s;
    struct goblin__blocked *prev, *next; /* the table's blocked list */
    int db;
    bool done;
    /* Set by the command after goblin__block: a timeout (or CLIENT
     * UNBLOCK without ERROR) calls serve, which must reply, with
     * timed_out set, instead of answering a null array (WAIT answers its
     * count); woff is WAIT's offset to be acknowledged. */
    bool serve_on_timeout, timed_out;
    uint64_t woff;
    struct goblin_buf reply;
    size_t nkeys, size;             /* size: bytes allocated */
    struct goblin__bwait w[];       /* then the dst bytes */
};

/* The engine's wait registry (eng->blocking, made at the first block). */
struct goblin__block_table {
    struct goblin__bkey **buckets;
    size_t mask, nkeys;
    struct goblin__bkey *ready, *ready_last; /* in the order they became
                                              * ready */
    struct goblin__blocked *first, *last;    /* blocked sessions */
    size_t nblocked;
};

/* Parses a blocking command's timeout in seconds as Redis does (a long
 * double; 0 = for ever; milliseconds rounded up) into a deadline
 * in the store clock; replies the refusal ("ERR timeout is negative",
 * "ERR timeout is not a float or out of range") and returns false. */
bool goblin__block_timeout(goblin__exec *x, struct goblin_slice arg,
                           int64_t *deadline_ms);

/* May x's session block now? Not inside EXEC (the command then answers
 * as if it had timed out at once, as Redis does). */
bool goblin__block_allowed(const goblin__exec *x);

/* Blocks x's session on keys[0..n) (copied) for spec. No reply is
 * written; on GOBLIN_ENOMEM the OOM error is. */
int goblin__block(goblin__exec *x, const struct goblin_slice *keys, size_t n,
                  const struct goblin__block_spec *spec);

/* The store's key_changed hook: a waited key of database db becomes
 * ready (db is the store's database, not the running session's: MOVE
 * and COPY ... DB write into another one). */
void goblin__block_touch(goblin_engine *eng, int db, struct goblin_slice key);

/* SWAPDB: every waited key of database db that now holds a value
 * becomes ready (Redis 7.0's scanDatabaseForReadyKeys); serving checks
 * the type. */
void goblin__block_touch_db(goblin_engine *eng, int db);

/* Serves the waiters of every ready key (see the top of this file). */
void goblin__block_serve(goblin_engine *eng);

/* After a command completes: serves when a key became ready (one branch
 * when nobody waits). */
static inline void goblin__block_after(goblin_engine *eng)
{
    if (eng->blocking != NULL && eng->blocking->ready != NULL &&
        !eng->in_exec)
        goblin__block_serve(eng);
}

/* Offers s, blocked without keys (WAIT), to its serve function now: true
 * when it replied. */
bool goblin__block_offer(goblin_session *s);

/* Cron: answers the waiters whose timeout passed. */
void goblin__block_cron(goblin_engine *eng);

/* CLIENT UNBLOCK: answers target as a timeout, or with the UNBLOCKED
 * error. False when target is not blocked. */
bool goblin__block_unblock(goblin_session *target, bool error);

/* REPLICAOF host port (Redis's disconnectAllBlockedClients): every
 * blocked session, WAIT's included, answers Redis's -UNBLOCKED error and
 * closes after it, as its command cannot complete on a replica. */
void goblin__block_disconnect_all(goblin_engine *eng);

/* Session close: drops its waits and any reply not yet taken. */
void goblin__block_drop(goblin_session *s);

/* Moves a served reply into the session's output (its own transport's
 * call, under the lock). */
void goblin__block_flush(goblin_session *s);

/* Sessions waiting now (INFO blocked_clients), and those of them with a
 * timeout (clients_in_timeout_table). */
size_t goblin__block_count(const goblin_engine *eng);
size_t goblin__block_timed_count(const goblin_engine *eng);

/* Wakes s's transport: its own wake hook, else the engine's
 * session_wake. */
void goblin__session_wake(goblin_session *s);

/* Engine close: frees the table (every session is closed by then). */
void goblin__block_free(goblin_engine *eng);

/* The session's database for blocking (0 until SELECT has others). */
int goblin__block_db(const goblin_session *s);

#endif
