/* sbe.h - lib/sbe inside libgoblin: the SBE reply sink, which lets every
 * command handler answer over SBE, and the request dispatcher behind an
 * SBE session (docs/sbe.md).
 *
 * The sink appends framed reply messages (u32 LE length + SBE message) to
 * a struct goblin_buf. A scalar reply is encoded at once. An aggregate is
 * recorded as a pre-order list of nodes until its last item arrives, then
 * encoded as the most specific message that carries it exactly:
 *   array of bulks                        ArrayReply
 *   array of bulks and nulls              NullableArrayReply
 *   array of doubles and nulls            NullableDoubleArrayReply
 *   array of [bulk, double] pairs         ScoredArrayReply
 *   map of bulk to bulk                   MapReply
 *   anything else                         ValueReply (the node list)
 * so a client that turns each message back into a tree gets the RESP3
 * tree the handler wrote. A group that would pass 65535 entries, or a
 * reply frame longer than the sink's limit, becomes an ErrorReply ("ERR
 * result too large for one SBE ... reply"); replies are never cut short.
 *
 * The sink owns its scratch memory (from the output buffer's allocator).
 * An allocation failure sets out->failed, like the RESP writer, and the
 * rest of that reply is dropped: the owner should close the connection.
 */
#ifndef GOBLIN_SBE_INTERNAL_H
#define GOBLIN_SBE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "goblin/buf.h"
#include "goblin/common.h"
#include "goblin/reply.h"

#include "commands/respond.h" /* struct goblin__scored */

/* One value of a reply being recorded. */
struct goblin__sbe_node {
    uint8_t type;      /* GOBLIN_SBE_VALUE_TYPE_* */
    uint64_t children; /* aggregates: direct children (a map: pairs) */
    int64_t i;         /* integer, boolean */
    double d;          /* double */
    size_t off, len;   /* string bytes, in the sink's byte area */
};

/* An aggregate still waiting for items. */
struct goblin__sbe_open {
    size_t node;     /* its node */
    uint64_t left;   /* items still to come; UINT64_MAX when deferred */
};

struct goblin__sbe_sink {
    struct goblin_sink sink; /* first: handlers get &sink */
    struct goblin_buf *out;  /* borrowed: replies are appended here */
    size_t max_reply;        /* longest reply frame, prefix included */
    struct goblin_buf nodes; /* struct goblin__sbe_node[] */
    struct goblin_buf bytes; /* their strings */
    struct goblin_buf open;  /* struct goblin__sbe_open[] (a stack) */
    size_t nnodes, nopen;
    bool overflow;           /* too big to send: only count items */
    bool broken;             /* out of memory: drop everything */
};

/* The default limit of one reply frame: the default frame limit. */
#define GOBLIN__SBE_MAX_REPLY_DEFAULT ((size_t)64 << 20)

/* Starts a sink appending to out (borrowed; its alloc is used for the
 * sink's scratch too). max_reply 0 means the default. */
void goblin__sbe_sink_init(struct goblin__sbe_sink *k, struct goblin_buf *out,
                           size_t max_reply);

/* Frees the scratch memory. The sink may be initialised again. */
void goblin__sbe_sink_free(struct goblin__sbe_sink *k);

/* True when no reply is half written. */
bool goblin__sbe_sink_idle(const struct goblin__sbe_sink *k);

/* ---- typed replies, written directly (no recording) ---- */

/* ErrorReply from a whole error text "CODE message" (the code is the
 * first word). */
void goblin__sbe_reply_error(struct goblin__sbe_sink *k, const char *text,
                             size_t len);

/* ErrorReply for a GOBLIN_E* code, with Redis's text. */
void goblin__sbe_reply_code(struct goblin__sbe_sink *k, int code);

/* ArrayReply of n strings; with nullable, NullableArrayReply where a NULL
 * ptr is a nil element. */
void goblin__sbe_reply_strings(struct goblin__sbe_sink *k,
                               const struct goblin_slice *v, size_t n,
                               bool nullable);

/* ScoredArrayReply. */
void goblin__sbe_reply_scored(struct goblin__sbe_sink *k,
                              const struct goblin__scored *v, size_t n);

/* NullableDoubleArrayReply; present[i] false is a nil element. */
void goblin__sbe_reply_doubles(struct goblin__sbe_sink *k, const double *v,
                               const bool *present, size_t n);

/* MapReply of npairs pairs: kv holds key, value, key, value, ... */
void goblin__sbe_reply_map(struct goblin__sbe_sink *k,
                           const struct goblin_slice *kv, size_t npairs);

/* StringScanReply and ScoredScanReply. */
void goblin__sbe_reply_scan(struct goblin__sbe_sink *k, uint64_t cursor,
                            const struct goblin_slice *v, size_t n);
void goblin__sbe_reply_scored_scan(struct goblin__sbe_sink *k,
                                   uint64_t cursor,
                                   const struct goblin__scored *v,
                                   size_t n);

#endif
