/* goblin/client.h - a C client for goblind (and, over RESP, for any
 * Redis-compatible server): connect over TCP, a Unix socket, a
 * shared-memory ring or straight to an in-process session; speak RESP2,
 * RESP3 or SBE; make typed calls that take and return native numbers,
 * generic calls that take argv and return a reply tree, and pipelines.
 *
 * Replies: every call reads exactly one reply. String results (a GET's
 * value, a generic call's tree) are views into the client's receive
 * buffer, valid until the next call on the client. An error reply is not
 * a failure of the connection: typed calls return GOBLIN_EWRONGTYPE for
 * WRONGTYPE and GOBLIN_EREPLY for any other error reply, and
 * goblin_client_error() gives its text ("ERR syntax error"); generic
 * calls return it as a tree of type GOBLIN_RESP_ERROR.
 *
 * Failures: a negative GOBLIN_E* code from the connection itself
 * (GOBLIN_ETIMEDOUT, GOBLIN_ECONNRESET, GOBLIN_EPROTO, ...) leaves the
 * client unusable except for goblin_client_close(); goblin_client_error()
 * says what happened.
 *
 * Pipelining: after goblin_client_pipeline_begin(), every call (typed or
 * generic) only queues its request and returns 0, leaving its
 * out-parameters alone. goblin_client_next_reply() sends what is queued and
 * reads the replies one by one, in order, as trees. Typed calls made
 * outside a pipeline while replies are still unread fail with
 * GOBLIN_EINVAL. Over SBE, request n is simply the n-th frame; nothing
 * numbers them.
 *
 * Threading: a client belongs to one thread at a time.
 */
#ifndef GOBLIN_CLIENT_H
#define GOBLIN_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "goblin/common.h"
#include "goblin/engine.h"
#include "goblin/keys.h"
#include "goblin/resp.h"
#include "goblin/ring.h"
#include "goblin/str.h"
#include "goblin/zset.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GOBLIN_EREPLY (goblin/common.h): the server answered with an error
 * reply (see goblin_client_error()). */

typedef struct goblin_client goblin_client;

enum goblin_client_protocol {
    GOBLIN_CLIENT_RESP2 = 2,
    GOBLIN_CLIENT_RESP3 = 3, /* HELLO 3 is sent when connecting */
    GOBLIN_CLIENT_SBE = 8,   /* the SBE magic is sent when connecting */
};

/* A zeroed field means its default; the struct grows only at the end. */
struct goblin_client_config {
    enum goblin_client_protocol protocol; /* default RESP2 */
    /* How long one reply may take, in ms; 0 waits for ever. */
    int timeout_ms;
    /* When password is not NULL, AUTH [username] password is sent first
     * and connecting fails (GOBLIN_EREPLY) if it is refused. */
    const char *username;
    const char *password;
    /* The longest SBE reply frame accepted; default 64 MiB. */
    uint32_t max_frame;
    const struct goblin_allocator *allocator; /* NULL: libc */
    /* Rings: how this side waits (enum goblin_ring_idle; default
     * backoff: spin, then sleep). */
    int ring_idle;
};

/* Connects to host:port (a name or address; IPv4 or IPv6). cfg may be
 * NULL. Returns 0, a -errno code such as GOBLIN_ECONNREFUSED (-111), or
 * GOBLIN_EREPLY when AUTH or HELLO was refused. */
GOBLIN_API int goblin_client_connect_tcp_sized(
    const char *host, int port, const struct goblin_client_config *cfg,
    size_t cfg_size, goblin_client **out);
static inline int goblin_client_connect_tcp(
    const char *host, int port, const struct goblin_client_config *cfg,
    goblin_client **out)
{
    return goblin_client_connect_tcp_sized(host, port, cfg, sizeof(*cfg), out);
}

/* Connects to a Unix socket at path. As goblin_client_connect_tcp. */
GOBLIN_API int goblin_client_connect_unix_sized(
    const char *path, const struct goblin_client_config *cfg, size_t cfg_size,
    goblin_client **out);
static inline int goblin_client_connect_unix(
    const char *path, const struct goblin_client_config *cfg,
    goblin_client **out)
{
    return goblin_client_connect_unix_sized(path, cfg, sizeof(*cfg), out);
}

/* Attaches to the ring file at path that a server created (goblin/ring.h),
 * waiting up to 2 s for it. Requests go to SQ (over SBE one frame per
 * record, the magic first on its own), replies come from CQ. Returns 0,
 * the errors of goblin_ring_open, or GOBLIN_EREPLY. */
GOBLIN_API int goblin_client_connect_ring_sized(
    const char *path, const struct goblin_client_config *cfg, size_t cfg_size,
    goblin_client **out);
static inline int goblin_client_connect_ring(
    const char *path, const struct goblin_client_config *cfg,
    goblin_client **out)
{
    return goblin_client_connect_ring_sized(path, cfg, sizeof(*cfg), out);
}

/* Talks to an in-process session (borrowed; it must outlive the client
 * and have seen no bytes yet): requests go in with goblin_session_feed and
 * replies come from goblin_session_output, with no thread and no socket.
 * For embedding and for tests. */
GOBLIN_API int goblin_client_connect_session_sized(
    goblin_session *s, const struct goblin_client_config *cfg, size_t cfg_size,
    goblin_client **out);
static inline int goblin_client_connect_session(
    goblin_session *s, const struct goblin_client_config *cfg,
    goblin_client **out)
{
    return goblin_client_connect_session_sized(s, cfg, sizeof(*cfg), out);
}

/* Closes the connection and frees the client. NULL is a no-op. */
GOBLIN_API void goblin_client_close(goblin_client *c);

/* The text of the last error reply or failure, "" if none. Valid until the
 * next call on the client. */
GOBLIN_API const char *goblin_client_error(const goblin_client *c);

/* The protocol the client speaks. */
GOBLIN_API enum goblin_client_protocol
goblin_client_protocol(const goblin_client *c);

/* ---- generic calls ---- */

/* Sends argv (argv[0] the command name) and reads its reply into *reply.
 * Over SBE the command travels as an Argv message, so any command works.
 * Returns 0 (also for an error reply) or a failure code. */
GOBLIN_API int goblin_client_call(goblin_client *c, size_t argc,
                                  const struct goblin_slice *argv,
                                  const struct goblin_resp_value **reply);

/* ---- pipelining ---- */

/* From now on calls only queue their requests (see the top of the file). */
GOBLIN_API void goblin_client_pipeline_begin(goblin_client *c);

/* Back to synchronous calls; replies still unread stay readable with
 * goblin_client_next_reply(). */
GOBLIN_API void goblin_client_pipeline_end(goblin_client *c);

/* Requests whose replies have not been read yet. */
GOBLIN_API size_t goblin_client_pending(const goblin_client *c);

/* Sends whatever is queued. Returns 0 or a failure code. */
GOBLIN_API int goblin_client_flush(goblin_client *c);

/* Reads the next pending reply (sending what is queued first). Returns 0,
 * GOBLIN_EINVAL when none is pending, or a failure code. */
GOBLIN_API int goblin_client_next_reply(goblin_client *c,
                                        const struct goblin_resp_value **reply);

/* ---- typed calls ----
 * Results as in the store API of the same name: 0 or more is a result,
 * "not found" is 0 with out-values untouched. */

/* PING: 0. */
GOBLIN_API int goblin_client_ping(goblin_client *c);

/* SET with opts (NULL: plain; the get field must be 0). Returns 1 when set,
 * 0 when NX or XX stopped it. */
GOBLIN_API int goblin_client_set(goblin_client *c, struct goblin_slice key,
                                 struct goblin_slice value,
                                 const struct goblin_set_options *opts);

/* GET: 1 with *value (a view), 0 when absent. */
GOBLIN_API int goblin_client_get(goblin_client *c, struct goblin_slice key,
                                 struct goblin_slice *value);

/* INCRBY: 0 with *result. */
GOBLIN_API int goblin_client_incrby(goblin_client *c, struct goblin_slice key,
                                    int64_t delta, int64_t *result);

/* DEL and EXISTS of n keys: how many. */
GOBLIN_API int64_t goblin_client_del(goblin_client *c,
                                     const struct goblin_slice *keys,
                                     size_t n);
GOBLIN_API int64_t goblin_client_exists(goblin_client *c,
                                        const struct goblin_slice *keys,
                                        size_t n);

/* PEXPIRE with at most one GOBLIN_EXPIRE_* flag (goblin/keys.h): 1 when
 * set, 0 when not. */
GOBLIN_API int goblin_client_pexpire(goblin_client *c, struct goblin_slice key,
                                     int64_t ms, int flags);

/* PTTL: ms left, -1 without a deadline, -2 when absent. */
GOBLIN_API int64_t goblin_client_pttl(goblin_client *c,
                                      struct goblin_slice key);

/* HSET of npairs field/value pairs (fv: field, value, ...): new fields. */
GOBLIN_API int64_t goblin_client_hset(goblin_client *c, struct goblin_slice key,
                                      const struct goblin_slice *fv,
                                      size_t npairs);

/* HGET: 1 with *value (a view), 0 when absent. */
GOBLIN_API int goblin_client_hget(goblin_client *c, struct goblin_slice key,
                                  struct goblin_slice field,
                                  struct goblin_slice *value);

/* HDEL: fields removed. HLEN: fields. */
GOBLIN_API int64_t goblin_client_hdel(goblin_client *c, struct goblin_slice key,
                                      const struct goblin_slice *fields,
                                      size_t n);
GOBLIN_API int64_t goblin_client_hlen(goblin_client *c,
                                      struct goblin_slice key);

/* ZADD of n members with their scores and GOBLIN_ZADD_* flags
 * (goblin/zset.h; not INCR: see goblin_client_zincrby): members added
 * (added or changed with GOBLIN_ZADD_CH). */
GOBLIN_API int64_t goblin_client_zadd(goblin_client *c, struct goblin_slice key,
                                      const double *scores,
                                      const struct goblin_slice *members,
                                      size_t n, int flags);

/* ZINCRBY: 0 with *score the new score. */
GOBLIN_API int goblin_client_zincrby(goblin_client *c, struct goblin_slice key,
                                     struct goblin_slice member, double incr,
                                     double *score);

/* ZSCORE: 1 with *score, 0 when the key or member is absent. */
GOBLIN_API int goblin_client_zscore(goblin_client *c, struct goblin_slice key,
                                    struct goblin_slice member,
                                    double *score);

/* ZRANK (rev 0) or ZREVRANK: 1 with *rank, 0 when absent. */
GOBLIN_API int goblin_client_zrank(goblin_client *c, struct goblin_slice key,
                                   struct goblin_slice member, int rev,
                                   int64_t *rank);

/* ZREM: members removed. ZCARD: members. */
GOBLIN_API int64_t goblin_client_zrem(goblin_client *c, struct goblin_slice key,
                                      const struct goblin_slice *members,
                                      size_t n);
GOBLIN_API int64_t goblin_client_zcard(goblin_client *c,
                                       struct goblin_slice key);

/* A member of a range result: views valid until the next call. */
struct goblin_client_member {
    struct goblin_slice member;
    double score;
};

/* ZRANGE by rank WITHSCORES (rev: ZREVRANGE): the number of members, with
 * *out an array owned by the client, valid until the next call. */
GOBLIN_API int64_t goblin_client_zrange(
    goblin_client *c, struct goblin_slice key, int64_t start, int64_t stop,
    int rev, const struct goblin_client_member **out);

/* ZRANGE BYSCORE WITHSCORES between min and max (each exclusive when
 * asked), lowest first or with rev highest first, skipping offset and
 * returning at most count members (count < 0: all). As zrange. */
GOBLIN_API int64_t goblin_client_zrange_by_score(
    goblin_client *c, struct goblin_slice key, double min, int min_exclusive,
    double max, int max_exclusive, int rev, int64_t offset, int64_t count,
    const struct goblin_client_member **out);

/* ---- lists and sets ----
 * Calls that return strings give how many with *out, an array owned by
 * the client whose slices point into the reply: all valid until the next
 * call on the client. */

/* LPUSH and RPUSH of n elements (n >= 1): the list's new length. */
GOBLIN_API int64_t goblin_client_lpush(goblin_client *c,
                                       struct goblin_slice key,
                                       const struct goblin_slice *elems,
                                       size_t n);
GOBLIN_API int64_t goblin_client_rpush(goblin_client *c,
                                       struct goblin_slice key,
                                       const struct goblin_slice *elems,
                                       size_t n);

/* LPOP and RPOP key count (count >= 0): the elements popped, in the order
 * popped; 0 when the key is absent. */
GOBLIN_API int64_t goblin_client_lpop(goblin_client *c,
                                      struct goblin_slice key, int64_t count,
                                      const struct goblin_slice **out);
GOBLIN_API int64_t goblin_client_rpop(goblin_client *c,
                                      struct goblin_slice key, int64_t count,
                                      const struct goblin_slice **out);

/* LRANGE key start stop (negative indices count from the end): the
 * elements. */
GOBLIN_API int64_t goblin_client_lrange(goblin_client *c,
                                        struct goblin_slice key,
                                        int64_t start, int64_t stop,
                                        const struct goblin_slice **out);

/* LLEN: elements (0 when absent). */
GOBLIN_API int64_t goblin_client_llen(goblin_client *c,
                                      struct goblin_slice key);

/* SADD and SREM of n members (n >= 1): members added or removed. */
GOBLIN_API int64_t goblin_client_sadd(goblin_client *c,
                                      struct goblin_slice key,
                                      const struct goblin_slice *members,
                                      size_t n);
GOBLIN_API int64_t goblin_client_srem(goblin_client *c,
                                      struct goblin_slice key,
                                      const struct goblin_slice *members,
                                      size_t n);

/* SISMEMBER: 1 when member is in the set, 0 when not (or no key). */
GOBLIN_API int goblin_client_sismember(goblin_client *c,
                                       struct goblin_slice key,
                                       struct goblin_slice member);

/* SMEMBERS: the members, in the server's order. SCARD: members. */
GOBLIN_API int64_t goblin_client_smembers(goblin_client *c,
                                          struct goblin_slice key,
                                          const struct goblin_slice **out);
GOBLIN_API int64_t goblin_client_scard(goblin_client *c,
                                       struct goblin_slice key);

/* DBSIZE, and FLUSHALL (0). */
GOBLIN_API int64_t goblin_client_dbsize(goblin_client *c);
GOBLIN_API int goblin_client_flushall(goblin_client *c);

/* ---- Pub/Sub ----
 * A client subscribes with goblin_client_subscribe() and then takes its
 * messages one at a time with goblin_client_next_message(), over every
 * transport and protocol (RESP2, RESP3 pushes, SBE PublishedMessage
 * frames). A message that arrives while the client waits for a reply
 * (RESP3 and SBE let a subscribed client run any command) is kept, in
 * order, for the next goblin_client_next_message(). */

enum goblin_client_message_kind {
    GOBLIN_CLIENT_MESSAGE = 0,  /* SUBSCRIBE: "message" */
    GOBLIN_CLIENT_PMESSAGE = 1, /* PSUBSCRIBE: "pmessage", with pattern */
    GOBLIN_CLIENT_SMESSAGE = 2, /* SSUBSCRIBE: "smessage" */
};

/* One published message; views valid until the next call on the client.
 * pattern is empty unless kind is GOBLIN_CLIENT_PMESSAGE. */
struct goblin_client_message {
    enum goblin_client_message_kind kind;
    struct goblin_slice channel, pattern, payload;
};

/* Sends command ("SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE", "UNSUBSCRIBE",
 * "PUNSUBSCRIBE" or "SUNSUBSCRIBE", any case) with its n names (n 0 for
 * an UNSUBSCRIBE of everything) and reads every confirmation. Returns the
 * subscription count of the last one (as the server counts: channels and
 * patterns together, shard channels apart), GOBLIN_EREPLY for an error
 * reply (goblin_client_error(), e.g. an ACL refusal), GOBLIN_EINVAL for
 * another command or inside a pipeline, or a failure code. */
GOBLIN_API int64_t goblin_client_subscribe(goblin_client *c,
                                           const char *command, size_t n,
                                           const struct goblin_slice *names);

/* The next message: 1 with *m, 0 when none came within timeout_ms (-1
 * waits for ever; the client stays usable), GOBLIN_EINVAL while replies
 * are pending, or a failure code. */
GOBLIN_API int goblin_client_next_message(goblin_client *c, int timeout_ms,
                                          struct goblin_client_message *m);

/* PUBLISH channel message: the number of clients that received it, or a
 * failure code (GOBLIN_EREPLY for an error reply, e.g. an ACL refusal).
 * Over SBE a typed frame, the same command on RESP. */
GOBLIN_API int64_t goblin_client_publish(goblin_client *c,
                                         struct goblin_slice channel,
                                         struct goblin_slice message);

/* ---- printing replies ---- */

/* Appends v to out as redis-cli prints it: raw 0 is its terminal form
 * ("(integer) 1", quoted strings, numbered aggregates, "(double) 1.5" for
 * RESP3 doubles), raw 1 its --raw form. The text ends with a newline.
 * Returns 0 or GOBLIN_ENOMEM. */
GOBLIN_API int goblin_client_format_reply(const struct goblin_resp_value *v,
                                          int raw, struct goblin_buf *out);

#ifdef __cplusplus
}
#endif

#endif
