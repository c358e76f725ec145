/* client.h - inside the client (goblin/client.h): the connection object,
 * its transports and the SBE reply trees.
 *
 * Buffers: out holds request bytes not yet written; in holds received
 * bytes, of which [in_pos, in.len) are not consumed. The reply handed to
 * the caller spans [in_pos, in_pos + last) until the next read, which
 * consumes it first; views into it stay put until then because the
 * buffer is compacted and grown only at the start of a read. Over a ring
 * (SBE) a reply that fills its CQ record is read in place instead: the
 * record stays peeked (cq_held) until the next read or send releases it.
 */
#ifndef GOBLIN_CLIENT_INTERNAL_H
#define GOBLIN_CLIENT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "goblin/client.h"
#include "goblin/resp.h"
#include "goblin/ring.h"
#include "sbe/goblin_sbe_gen.h"

struct goblin_sbe_writer;

/* A reply tree built from one SBE reply message (sbe_tree.c). */
struct goblin__sbe_tree {
    const struct goblin_allocator *alloc; /* NULL: libc */
    struct goblin_resp_value *v;          /* v[0] is the root */
    size_t cap, used;
    char *text;                           /* doubles, cursors, errors */
    size_t text_cap, text_used;
    void *stack;                          /* ValueReply nesting */
    bool double_text; /* give doubles their text (else str is empty) */
};

/* Builds the tree of the SBE reply message msg[0..len) into t; strings are
 * views into msg. Returns 0 with *out (valid until the next build),
 * GOBLIN_EPROTO for a malformed message or one that is not a reply, or
 * GOBLIN_ENOMEM. */
int goblin__sbe_tree_build(struct goblin__sbe_tree *t, const void *msg,
                           size_t len, const struct goblin_resp_value **out);

void goblin__sbe_tree_free(struct goblin__sbe_tree *t);

/* The commonest replies, inline: a StatusReply, BulkReply, NilReply or
 * IntReply message of this schema version msg[0..len), into t's root
 * when t has one from an earlier reply. Its layout is the schema's
 * (docs/sbe.md; sbe_tree.c checks it at compile time). 1 with *out, or 0:
 * anything else, well formed or not, is goblin__sbe_tree_build's. */
static inline int goblin__sbe_tree_scalar(struct goblin__sbe_tree *t,
                                          const uint8_t *p, size_t len,
                                          const struct goblin_resp_value **out)
{
    struct goblin_resp_value *v = t->v;
    uint32_t hdr[2];

    if (len < 8 || t->cap < 1)
        return 0;
    hdr[0] = goblin_sbe_rd_u32(p);     /* block length, template */
    hdr[1] = goblin_sbe_rd_u32(p + 4); /* schema id, version */
    if (hdr[1] != ((uint32_t)GOBLIN_SBE_SCHEMA_VERSION << 16 |
                   GOBLIN_SBE_SCHEMA_ID))
        return 0;
    memset(v, 0, sizeof(*v));
    switch (hdr[0]) {
    case (uint32_t)GOBLIN_SBE_STATUS_REPLY << 16:
    case (uint32_t)GOBLIN_SBE_BULK_REPLY << 16:
        if (len < 12 || goblin_sbe_rd_u32(p + 8) != len - 12)
            return 0;
        v->type = hdr[0] == (uint32_t)GOBLIN_SBE_BULK_REPLY << 16
                      ? GOBLIN_RESP_BULK
                      : GOBLIN_RESP_STATUS;
        v->str.ptr = p + 12;
        v->str.len = len - 12;
        break;
    case (uint32_t)GOBLIN_SBE_NIL_REPLY << 16:
        if (len != 8)
            return 0;
        v->type = GOBLIN_RESP_NULL;
        break;
    case (uint32_t)GOBLIN_SBE_INT_REPLY << 16 | 8:
        if (len != 16)
            return 0;
        v->type = GOBLIN_RESP_INTEGER;
        v->integer = goblin_sbe_rd_i64(p + 8);
        break;
    default:
        return 0;
    }
    t->used = 1;
    t->text_used = 0;
    *out = v;
    return 1;
}

/* How bytes reach the server (conn.c). */
struct goblin__transport {
    /* Writes all n bytes, or returns a negative code. */
    int (*send)(goblin_client *c, const void *p, size_t n);
    /* Reads what is available into p[0..cap), waiting up to the client's
     * timeout for the first byte: > 0 bytes, or a negative code
     * (GOBLIN_ECONNRESET at end of stream). */
    int64_t (*recv)(goblin_client *c, void *p, size_t cap);
    void (*close)(goblin_client *c);
};

struct goblin_client {
    const struct goblin_allocator *alloc;
    const struct goblin__transport *tr;
    enum goblin_client_protocol proto;
    int fd;
    goblin_session *sess; /* the in-process transport */
    struct goblin_ring *ring;  /* the ring transport */
    bool magic_sent;      /* ring, SBE: the magic went as its own record */
    /* Ring, SBE, one request at a time: the request being encoded straight
     * into an SQ reservation, and the reply read in place from its CQ
     * record, which stays peeked (held) until the next read. */
    bool sq_direct;
    bool cq_held;
    size_t read_min;      /* room each read needs (a whole ring record) */
    size_t max_request;   /* longest SBE frame a ring record holds; 0: any */
    int timeout_ms;
    uint32_t max_frame;

    struct goblin_buf out; /* requests not yet sent */
    struct goblin_buf in;  /* replies received */
    size_t in_pos;         /* first byte not consumed */
    size_t last;           /* bytes of the reply handed out last */
    size_t pending;        /* requests whose replies are unread */
    bool pipelining;
    int failed;            /* a failure code: the client is unusable */

    const struct goblin_resp_value *reply; /* the reply read last */
    goblin_resp_reader *reader; /* RESP replies */
    struct goblin__sbe_tree tree; /* SBE replies */

    /* Pub/Sub (pubsub.c): messages that came while a reply was awaited
     * (records of kind, three lengths, bytes), the one handed out last,
     * the server's subscription counts, and a wait whose timeout is not
     * a failure. */
    struct goblin_buf msgq;
    size_t msgq_pos;
    struct goblin_buf msg;
    int64_t subs, ssubs;  /* as the server counts them */
    int64_t kinds[3];     /* channels, patterns, shard channels */
    bool soft_timeout;

    struct goblin_client_member *members; /* zrange results */
    size_t members_cap;
    struct goblin_slice *strings; /* list and set results (typed_coll.c) */
    size_t strings_cap;
    /* typed_reply.c: what the typed call reading the next SBE reply
     * wants of it, and whether the read decoded it so (then the result
     * is in members or strings, and direct is the reply's stand-in). */
    uint8_t want;
    bool decoded;
    struct goblin_resp_value direct;
    char err[512];
};

/* conn.c */
/* Memory from the client's allocator; free takes the size back. */
void *goblin__client_mem(goblin_client *c, size_t size);
void goblin__client_mem_free(goblin_client *c, void *p, size_t size);
int goblin__client_new(const struct goblin_client_config *cfg,
                       goblin_client **out);
int goblin__client_fail(goblin_client *c, int code, const char *what);
extern const struct goblin__transport goblin__fd_transport;
extern const struct goblin__transport goblin__session_transport;
extern const struct goblin__transport goblin__ring_transport;

/* conn.c: waits for the next non-empty CQ record and leaves it peeked. */
int goblin__client_ring_next(goblin_client *c, struct goblin_slice *rec);

/* io.c: releases the CQ record a reply was read from in place. */
void goblin__client_ring_let_go(goblin_client *c);

/* io.c: sends what is queued and reads the next reply as a tree; a
 * published message met on the way is kept (pubsub.c). */
int goblin__client_read(goblin_client *c, const struct goblin_resp_value **v);
/* io.c: the same, handing a published message out like a reply. */
int goblin__client_read_any(goblin_client *c,
                            const struct goblin_resp_value **v);

/* pubsub.c: the kind of a published message (a RESP3 push, or while
 * subscribed a RESP2 array, of message, pmessage or smessage), or -1. */
int goblin__client_message_kind(const goblin_client *c,
                                const struct goblin_resp_value *v);
/* pubsub.c: keeps a copy of message v for goblin_client_next_message. */
int goblin__client_message_keep(goblin_client *c,
                                const struct goblin_resp_value *v, int kind);

/* Checks an SBE request of n bytes just encoded at the end of c->out
 * against the transport's limit; 0, or GOBLIN_ELIMIT (the request is
 * dropped; the connection goes on). */
int goblin__client_fits(goblin_client *c, int n);

/* Queues one request and, outside a pipeline, reads its reply. Returns
 * 1 with *v, 0 when the request was only queued, or a failure code. The
 * request's bytes must already be appended to c->out. */
static inline int goblin__client_round(goblin_client *c,
                                       const struct goblin_resp_value **v)
{
    int rc;

    c->pending++;
    if (c->pipelining)
        return 0;
    rc = goblin__client_read(c, v);
    return rc < 0 ? rc : 1;
}

/* Sets c->err from an error reply and returns GOBLIN_EWRONGTYPE or
 * GOBLIN_EREPLY. */
int goblin__client_reply_error(goblin_client *c,
                               const struct goblin_resp_value *v);

/* typed_reply.c: a typed call's SBE reply decoded where it lies. */
enum {
    GOBLIN__WANT_TREE,    /* every reply read as a tree */
    GOBLIN__WANT_MEMBERS, /* a scored array into c->members */
    GOBLIN__WANT_STRINGS, /* an array of strings into c->strings */
};
/* Room for n members or strings in the client's result arrays: 0 or
 * GOBLIN_ENOMEM. */
int goblin__client_members_room(goblin_client *c, size_t n);
int goblin__client_strings_room(goblin_client *c, size_t n);
/* The reply frame p[0..len) (header first) when it is what c->want asks
 * for: decoded into the client's array, 1 with *v standing for it and
 * c->decoded set; 0 when it is something else (the tree reads it), or
 * GOBLIN_EPROTO, GOBLIN_ENOMEM. */
int goblin__client_typed_reply(goblin_client *c, const uint8_t *p,
                               size_t len, const struct goblin_resp_value **v);
/* Before a typed call that returns an array reads its reply: asks for
 * want when the reply will be read by this call (not queued in a
 * pipeline, no subscription whose messages may come first). */
static inline void goblin__client_want(goblin_client *c, uint8_t want)
{
    c->decoded = false;
    c->want = !c->pipelining && c->subs + c->ssubs == 0 ? want
                                                         : GOBLIN__WANT_TREE;
}

/* typed.c: the steps every typed call takes, for typed_coll.c.
 * typed_begin: may a typed call start now (0, or a code). typed_room: a
 * writer over room for need more SBE request bytes (0 or GOBLIN_ENOMEM).
 * typed_sent: takes an encoded SBE request (n bytes, or a negative code)
 * and runs the round: 1 with *v, 0 queued, or a code; typed_sent_array
 * the same for a call that returns an array, asking for its reply in the
 * shape want (goblin__client_want). typed_resp: the
 * same for a RESP command of argc words. typed_resp_list: a RESP command
 * of name, key and n more words. typed_int: an integer reply (or the
 * error a reply holds) from a round's result rc. typed_unexpected: sets
 * the error text and returns GOBLIN_EPROTO. typed_bytes: a request size
 * estimate for n slices. */
int goblin__client_typed_begin(goblin_client *c);
int goblin__client_typed_room(goblin_client *c, size_t need,
                              struct goblin_sbe_writer *w);
int goblin__client_typed_sent(goblin_client *c, int n,
                              const struct goblin_resp_value **v);
int goblin__client_typed_sent_array(goblin_client *c, uint8_t want, int n,
                                    const struct goblin_resp_value **v);
int goblin__client_typed_resp(goblin_client *c, size_t argc,
                              const struct goblin_slice *a,
                              const struct goblin_resp_value **v);
int goblin__client_typed_resp_list(goblin_client *c, struct goblin_slice name,
                                   struct goblin_slice key,
                                   const struct goblin_slice *s, size_t n,
                                   const struct goblin_resp_value **v);
int64_t goblin__client_typed_int(goblin_client *c, int rc);
int goblin__client_typed_unexpected(goblin_client *c);
size_t goblin__client_typed_bytes(const struct goblin_slice *s, size_t n);

#endif
