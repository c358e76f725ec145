/* repl.h - the master side of replication inside the engine (goblin/
 * repl.h says what it does): the replication ids, the backlog, and the
 * replicas, which are sessions flagged SESS_REPLICA.
 *
 * A replica's states, as Redis's SLAVE_STATE_*: WAIT_START (it asked for
 * a full sync; none runs for it yet), SYNCING (a child writes its
 * payload; changes are kept in hold), ONLINE (changes go to its output).
 * A session that only sent REPLCONF has a record in state NONE, which
 * keeps what it announced.
 */
#ifndef GOBLIN_REPL_INT_H
#define GOBLIN_REPL_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "backlog.h"
#include "commands/command.h"
#include "engine/session.h"

enum goblin__replica_state {
    GOBLIN__REPLICA_NONE = 0,
    GOBLIN__REPLICA_WAIT_START,
    GOBLIN__REPLICA_SYNCING,
    GOBLIN__REPLICA_ONLINE,
};

struct goblin__replica {
    goblin_session *s;
    enum goblin__replica_state state;
    bool capa_eof, capa_psync2;
    bool old_sync;       /* SYNC: no +FULLRESYNC line */
    /* Online after an EOF-marker payload: the stream waits in hold for
     * the first ACK, or the replica could read its first bytes as part
     * of the payload and miss the marker (Redis's
     * repl_start_cmd_stream_on_ack). */
    bool start_on_ack;
    bool acked;          /* an ACK came while SYNCING: it has loaded */
    long port;           /* REPLCONF listening-port */
    char ip[64];         /* REPLCONF ip-address, or "" */
    uint64_t ack_off;    /* REPLCONF ACK */
    int64_t ack_ms;      /* when the last ACK came (store clock) */
    int64_t wait_ms;     /* when it asked for the full sync (WAIT_START) */
    struct goblin_buf hold; /* changes since the fork, while SYNCING */
};

struct goblin__repl {
    char replid[41], replid2[41];
    int64_t second_off;  /* -1: none */
    struct goblin__backlog backlog; /* buf NULL until the first replica */
    uint32_t stream_id;
    bool subscribed;
    bool child;          /* a sync child runs */
    struct goblin__replica **replicas;
    size_t nreplicas, cap;
    int64_t no_replicas_since_ms;
    int64_t last_ping_ms;
    uint64_t sync_full, sync_partial_ok, sync_partial_err;
    int64_t good;        /* replicas within min-replicas-max-lag */
    uint32_t id_gen;
    bool noreplicas;     /* min-replicas-to-write is not met */
    /* The replica side (replica.h): the link to our master, NULL on a
     * master; the loop's descriptor (goblin_repl_link_fd), -1 until
     * asked; replica-read-only and replica-serve-stale-data. */
    struct goblin__link *link;
    int link_epfd;
    bool read_only, serve_stale;
    bool replicaof_read; /* the replicaof setting was looked at */
};

/* The state, created on first use (NULL only when out of memory). */
struct goblin__repl *goblin__repl_get(goblin_engine *eng);
void goblin__repl_free(goblin_engine *eng);
/* DEBUG CHANGE-REPL-ID: a new id, and no second one. */
void goblin__repl_change_id(goblin_engine *eng);
void goblin__repl_cron(goblin_engine *eng);
/* min-replicas-to-write and min-replicas-max-lag (at engine open). */
int goblin__repl_settings_init(goblin_engine *eng);
/* A session flagged SESS_REPLICA closes. */
void goblin__repl_session_gone(goblin_session *s);

/* s's record (created in state NONE when create), or NULL. */
struct goblin__replica *goblin__replica_of(goblin_session *s, bool create);

/* Whether s is a replica (it sent PSYNC or SYNC). */
bool goblin__repl_is_replica(goblin_session *s);

/* PSYNC replid offset (replid NULL: SYNC). Replies itself. */
void goblin__repl_psync(goblin__exec *x, struct goblin_slice replid,
                        int64_t offset, bool old_sync);

/* An online replica's first ACK: the changes kept since its fork follow
 * (start_on_ack). */
void goblin__repl_start_stream(struct goblin__replica *rp);

/* The replicas online whose ACK reached offset. */
size_t goblin__repl_acked(goblin_engine *eng, uint64_t offset);

/* INFO replication's text and ROLE's reply (master). */
struct goblin__text;
void goblin__repl_info(goblin_engine *eng, struct goblin__text *t);
void goblin__repl_role(goblin__exec *x);
/* INFO stats' sync_full, sync_partial_ok and sync_partial_err. */
void goblin__repl_stats(const goblin_engine *eng, struct goblin__text *t);

#endif
