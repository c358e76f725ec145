/* goblin/stream.h - the write stream: every change the engine makes, as
 * the deterministic command sequence that reproduces it, in RESP array
 * bytes. The append-only file and the replication backlog consume it.
 *
 * What goes out (Redis 7.0's propagation, server.c call() and
 * propagatePendingCommands):
 * - A command that ran and changed something (the server's dirty
 *   counter moved) goes out as it was sent (argv verbatim, its case
 *   kept), unless its effect is not a function of its arguments; then it
 *   goes out rewritten into a form that is:
 *     SET/SETEX/PSETEX with a relative or EXAT time -> SET k v PXAT ms
 *     EXPIRE, PEXPIRE, EXPIREAT, GETEX EX|PX|EXAT|PXAT -> PEXPIREAT k ms
 *     (any of them on a time already past, and GETDEL -> DEL k),
 *     GETEX PERSIST -> PERSIST k, GETSET -> SET k v,
 *     INCRBYFLOAT -> SET k result KEEPTTL, HINCRBYFLOAT -> HSET k f result,
 *     SPOP -> SREM k member (one per member; DEL k when the set went),
 *     BLPOP/BRPOP -> LPOP/RPOP k, BLMPOP/LMPOP -> LPOP/RPOP k count,
 *     BLMOVE -> LMOVE, BRPOPLPUSH -> RPOPLPUSH, BZPOPMIN/BZPOPMAX ->
 *     ZPOPMIN/ZPOPMAX k, BZMPOP/ZMPOP -> ZPOPMIN/ZPOPMAX k count,
 *     RESTORE k ttl ... -> RESTORE k abs-ms ... ABSTTL.
 * - A command that changed nothing sends nothing.
 * - A key that expires or is evicted goes out as DEL k (UNLINK k with
 *   lazyfree-lazy-expire / lazyfree-lazy-eviction), in its database.
 * - EVAL, EVALSHA, FCALL and EXEC do not go out themselves: the commands
 *   they ran do, as one unit. A unit of more than one command is wrapped
 *   in MULTI ... EXEC; a unit of one is sent bare (as Redis 7.0).
 * - "SELECT n" precedes a command whose database differs from the one the
 *   stream last selected for that class of consumer (and the first one
 *   after goblin_stream_reselect). Before a MULTI, it names the first
 *   command's database.
 *
 * Delivery: each unit is handed to every consumer of its class in one
 * call, after the command (and, for a blocked client served later, after
 * the serving) and before the command's reply can leave the server: a
 * server that makes the unit durable inside the callback (appendfsync
 * always) therefore never acknowledges a write that is not durable.
 * Callbacks run on the engine's thread, inside the engine call that ran
 * the command; they must not call back into the engine. bytes are
 * borrowed until the callback returns.
 *
 * Classes: GOBLIN_STREAM_LOCAL consumers (the append-only file) receive
 * every change applied here, whoever sent it. GOBLIN_STREAM_REPLICATION
 * consumers (the replication backlog, replica links) receive the same
 * units, except while the engine follows a master (goblin_stream_follow):
 * they then receive only what goblin_stream_feed passes on (the master's
 * own stream, byte for byte), so that a replica of a replica counts the
 * same offsets as the top master. Each class keeps its own selected
 * database.
 *
 * The offset counts every byte handed to the REPLICATION class since the
 * engine opened, or since goblin_stream_set_offset (Redis's
 * master_repl_offset). It advances whether or not a consumer is
 * registered while the engine follows a master; otherwise only while a
 * REPLICATION consumer is registered (Redis: while a backlog exists).
 *
 * Cost: with no consumer registered, a command pays one predictable
 * branch; nothing is encoded or buffered.
 *
 * Threading: all calls belong to the engine's thread (goblin/engine.h).
 */
#ifndef GOBLIN_STREAM_H
#define GOBLIN_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

enum goblin_stream_class {
    GOBLIN_STREAM_REPLICATION = 0,
    GOBLIN_STREAM_LOCAL = 1,
};

/* One unit of the stream: len bytes of RESP arrays (SELECT, MULTI and
 * EXEC included), and the offset after them (for the LOCAL class, the
 * REPLICATION offset at that moment, which these bytes did not move). */
typedef void goblin_stream_fn(void *ctx, const void *bytes, size_t len,
                              uint64_t offset);

/* Registers fn(ctx, ...) for units of class cls; *id names it for
 * goblin_stream_unsubscribe. Returns 0, GOBLIN_ENOMEM, or GOBLIN_ELIMIT
 * past 16 consumers. The first unit after registering starts with a
 * SELECT. */
GOBLIN_API int goblin_stream_subscribe(goblin_engine *eng,
                                       enum goblin_stream_class cls,
                                       goblin_stream_fn *fn, void *ctx,
                                       uint32_t *id);

/* Removes consumer id (an unknown id is a no-op). May be called from
 * inside that consumer's own callback. */
GOBLIN_API void goblin_stream_unsubscribe(goblin_engine *eng, uint32_t id);

/* The REPLICATION offset (see above), and setting it (a replica adopting
 * its master's offset after a full sync). */
GOBLIN_API uint64_t goblin_stream_offset(const goblin_engine *eng);
GOBLIN_API void goblin_stream_set_offset(goblin_engine *eng,
                                         uint64_t offset);

/* The next unit for class cls starts with a SELECT whatever the stream
 * selected last: after an AOF rewrite started a new file, or a replica
 * link started from a full sync. */
GOBLIN_API void goblin_stream_reselect(goblin_engine *eng,
                                       enum goblin_stream_class cls);

/* While on, the engine applies a master's stream: the REPLICATION class
 * receives only goblin_stream_feed's bytes (see above). */
GOBLIN_API void goblin_stream_follow(goblin_engine *eng, bool on);

/* Passes len bytes of the master's stream on to the REPLICATION class as
 * they are, advancing the offset by len; the class's selected database
 * is then unknown (the next unit of its own starts with a SELECT). */
GOBLIN_API void goblin_stream_feed(goblin_engine *eng, const void *bytes,
                                   size_t len);

/* Sends one command of the server's own (argc > 0 arguments, copied) to
 * class cls as a unit of its own: PING and REPLCONF GETACK for replicas
 * go this way. db >= 0 puts it in that database (SELECT first if needed);
 * db < 0 sends it with no SELECT. Returns 0 or GOBLIN_ENOMEM; without a
 * consumer of cls it sends nothing and returns 0. */
GOBLIN_API int goblin_stream_emit(goblin_engine *eng,
                                  enum goblin_stream_class cls, int db,
                                  int argc, const struct goblin_slice *argv);

#ifdef __cplusplus
}
#endif

#endif
