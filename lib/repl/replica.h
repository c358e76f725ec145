/* replica.h - the replica side of replication (goblin/repl.h): the link
 * to a master that REPLICAOF (or the replicaof setting) names, driven
 * without blocking from the server's event loop and the engine's cron,
 * and what a replica changes elsewhere (writes refused, keys read as
 * expired but never expired here, INFO and ROLE). Redis 7.0's
 * replication.c (the replica half) is the model.
 *
 * The link's states, as Redis's REPL_STATE_*: CONNECT (to connect at the
 * next cron pass), CONNECTING (a non-blocking connect in progress),
 * HANDSHAKE (PING, AUTH, REPLCONF listening-port, REPLCONF capa, PSYNC,
 * one at a time), TRANSFER (the full sync's RDB payload into a file),
 * CONNECTED (the master's stream runs in the master session).
 */
#ifndef GOBLIN_REPL_REPLICA_H
#define GOBLIN_REPL_REPLICA_H

#include <stdbool.h>
#include <stdint.h>

#include "commands/command.h"
#include "engine/session.h"
#include "goblin/buf.h"

enum goblin__link_state {
    GOBLIN__LINK_CONNECT = 1,
    GOBLIN__LINK_CONNECTING,
    GOBLIN__LINK_HANDSHAKE,
    GOBLIN__LINK_TRANSFER,
    GOBLIN__LINK_CONNECTED,
};

/* The handshake step waiting for its reply. */
enum goblin__link_step {
    GOBLIN__HS_PONG = 1,
    GOBLIN__HS_AUTH,
    GOBLIN__HS_PORT,
    GOBLIN__HS_IP,
    GOBLIN__HS_CAPA,
    GOBLIN__HS_PSYNC,
};

struct goblin__link {
    char host[256];
    int port;
    enum goblin__link_state state;
    enum goblin__link_step step;
    int fd;              /* the socket, -1 when none */
    int epfd;            /* private epoll over fd: goblin_repl_link_fd */
    uint32_t watching;   /* EPOLLIN / EPOLLOUT registered for fd */
    struct goblin_buf in;  /* read, not yet used */
    struct goblin_buf out; /* to write */
    size_t out_pos;
    int64_t state_ms;    /* when the state began (store clock) */
    int64_t last_io_ms;  /* the last byte from the master */
    int64_t down_since_ms; /* 0: never up */
    int64_t last_ack_ms;
    /* What PSYNC asks for: a cached master (the link that dropped, or
     * this server's own history when it was a master), else "? -1". */
    bool cached;
    char cached_id[41];
    uint64_t cached_off;  /* the offset it has: PSYNC asks for + 1 */
    /* +FULLRESYNC's id and offset, the payload being received. */
    char sync_id[41];
    uint64_t sync_off;
    bool eof_form;
    unsigned char mark[40];
    unsigned char tail[40]; /* the payload's last 40 bytes (EOF form) */
    uint64_t size, got;     /* $<len> form: size; both: bytes so far */
    int tmpfd;
    char tmp[4200];
    goblin_session *master; /* the master client, from PSYNC's reply on */
    struct goblin_buf txn;  /* an open MULTI's bytes, offset not moved */
    uint64_t read_off;      /* slave_read_repl_offset */
};

/* The link, or NULL when this server is a master. */
struct goblin__link *goblin__link_of(const goblin_engine *eng);

/* True while this server is a replica (REPLICAOF host port). */
bool goblin__repl_following(const goblin_engine *eng);

/* REPLICAOF host port (host NULL: NO ONE). Logs as Redis; by names the
 * client for the log ("" at start). Returns 0, 1 when already a replica
 * of host:port, or GOBLIN_ENOMEM. */
int goblin__link_set(goblin_engine *eng, const char *host, int port,
                     const char *by);

/* The cron's part: connects, times out, ACKs every second. */
void goblin__link_cron(goblin_engine *eng);

/* REPLCONF GETACK from the master: an ACK at once. */
void goblin__link_getack(goblin_engine *eng);

/* Refuses x's command on a replica (READONLY, MASTERDOWN) or a master
 * short of good replicas (NOREPLICAS): the error's text, else NULL. Asked
 * only while eng->refuse_writes says some gate is up. */
const char *goblin__repl_gate(const goblin__exec *x);

/* Recomputes eng->refuse_writes from the gates. */
void goblin__repl_gate_update(goblin_engine *eng);

/* INFO replication's replica part (false on a master: nothing added)
 * and ROLE's reply for a replica. */
struct goblin__text;
bool goblin__link_info(goblin_engine *eng, struct goblin__text *t);
void goblin__link_role(goblin__exec *x);

/* The settings replica-read-only and replica-serve-stale-data. */
int goblin__link_settings_init(goblin_engine *eng);

/* Frees the link (engine close). */
void goblin__link_free(goblin_engine *eng);

/* master.c's part of a replica's life. */
/* After a full sync: the master's id and offset become ours, the
 * backlog restarts at it, replicas of ours resync. */
int goblin__repl_adopt(goblin_engine *eng, const char *replid,
                       uint64_t offset);
/* +CONTINUE with another id, and promotion: the current id becomes the
 * second (valid up to the offset now), newid (NULL: a new random one)
 * the first. */
void goblin__repl_shift_id(goblin_engine *eng, const char *newid);
/* Closes every replica of ours (they reconnect and PSYNC again). */
void goblin__repl_drop_replicas(goblin_engine *eng);
/* The backlog exists (created at the stream's offset, the id kept).
 * 0 or GOBLIN_ENOMEM. */
int goblin__repl_backlog_ensure(goblin_engine *eng);

#endif
