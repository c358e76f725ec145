/* goblin/resp.h - the RESP2/RESP3 codec: the reply writer (over the byte
 * buffer of goblin/buf.h) (a reply sink, see reply.h), the incremental command parser a
 * server feeds, and the command encoder and reply reader a client uses.
 *
 * None of this touches a store. Memory comes from the allocator given
 * (NULL: malloc/realloc/free); a connection owns its buffers and parsers.
 * Decoders return the bytes consumed (> 0), 0 when they need more bytes,
 * or a negative GOBLIN_E* code, and stay failed after a protocol error.
 */
#ifndef GOBLIN_RESP_H
#define GOBLIN_RESP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "goblin/buf.h"
#include "goblin/common.h"
#include "goblin/reply.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- reply writer ----------------------------------------------------- */

/* A reply sink that appends RESP to a buffer. Its sink member is first, so
 * &w->sink (or goblin_resp_writer_sink(w)) is what handlers get. Every op
 * of reply.h is provided, the optional ones too. An allocation failure
 * sets out->failed and drops the rest of that reply; the owner should then
 * close the connection. */
struct goblin_resp_writer {
    struct goblin_sink sink;
    struct goblin_buf *out; /* borrowed */
    int proto;              /* 2 or 3 */
};

/* Starts a writer appending to out, speaking RESP `proto` (2 or 3). */
GOBLIN_API void goblin_resp_writer_init(struct goblin_resp_writer *w,
                                        struct goblin_buf *out, int proto);

/* Switches the protocol (HELLO 2 / HELLO 3) for the replies that follow. */
GOBLIN_API void goblin_resp_writer_set_proto(struct goblin_resp_writer *w,
                                             int proto);

static inline struct goblin_sink *
goblin_resp_writer_sink(struct goblin_resp_writer *w)
{
    return &w->sink;
}

static inline bool goblin_resp_writer_failed(const struct goblin_resp_writer *w)
{
    return w->out->failed;
}

/* ---- command parser (server side) ------------------------------------- */

/* Redis 7's limits and defaults (networking.c). */
#define GOBLIN_RESP_INLINE_MAX (64 * 1024)   /* PROTO_INLINE_MAX_SIZE */
#define GOBLIN_RESP_MULTIBULK_MAX 2147483647 /* a count above INT_MAX */
#define GOBLIN_RESP_BULK_MAX_DEFAULT (512ULL * 1024 * 1024)
/* While authentication is required and missing (Redis 7): */
#define GOBLIN_RESP_UNAUTH_MULTIBULK_MAX 10
#define GOBLIN_RESP_UNAUTH_BULK_MAX 16384

/* Room that always holds a protocol error text. */
#define GOBLIN_RESP_ERROR_TEXT_MAX 96

typedef struct goblin_resp_parser goblin_resp_parser;

struct goblin_resp_parser_config {
    const struct goblin_allocator *allocator; /* NULL: libc */
    /* proto-max-bulk-len: the largest bulk argument. 0: 512 MiB. */
    uint64_t max_bulk_len;
};

/* One command found in the input. argv[i] are views: into the input passed
 * to the call that returned it (multibulk arguments and unquoted inline
 * words), or into the parser's own scratch (quoted inline words). They,
 * and the argv array itself (owned by the parser), stay valid until the
 * next call on the parser or until the input bytes are changed or moved. */
struct goblin_resp_command {
    size_t argc;
    const struct goblin_slice *argv;
};

/* Opens a parser into *out. cfg may be NULL. Returns 0 or GOBLIN_ENOMEM. */
GOBLIN_API int goblin_resp_parser_open(const struct goblin_resp_parser_config *cfg,
                                       goblin_resp_parser **out);

/* Frees the parser. NULL is a no-op. */
GOBLIN_API void goblin_resp_parser_close(goblin_resp_parser *p);

/* Finds the next command in in[0..len), where in points at the first byte
 * not yet consumed (the caller drops consumed bytes and may move or grow
 * its buffer between calls, as long as the unconsumed bytes keep their
 * order and are passed again, with any new bytes after them).
 *
 * Returns the bytes the command spanned (> 0) and fills *cmd. argc may be
 * 0: an empty inline line, "*0" or "*-1" -- nothing to run, just drop the
 * bytes (Redis skips them the same way). Returns 0 when the command is not
 * complete yet; the parser remembers how far it got, so the next call
 * resumes instead of starting over. Returns GOBLIN_EPROTO on a protocol
 * error, with Redis's text in goblin_resp_parser_error(); the parser then
 * stays failed (reply the error and close, as Redis does). Returns
 * GOBLIN_ENOMEM if the argv array could not grow (nothing changed; the call
 * may be retried).
 *
 * Follows Redis 7's processInlineBuffer and processMultibulkBuffer:
 * a first byte '*' means multibulk, anything else an inline line split by
 * sdssplitargs' quoting rules; every limit, every error text, the
 * unchecked byte after each CR, and the way a NUL byte in a line hides
 * the end of that line (Redis searches it with strchr) are Redis's. */
GOBLIN_API int64_t goblin_resp_parse(goblin_resp_parser *p, const char *in,
                                     size_t len,
                                     struct goblin_resp_command *cmd);

/* After GOBLIN_EPROTO: the error reply text, with its code word and no
 * '-' ("ERR Protocol error: invalid bulk length"); "" otherwise. */
GOBLIN_API const char *goblin_resp_parser_error(const goblin_resp_parser *p);

/* Bytes the parser knows it still needs for the command in progress
 * (the rest of a bulk argument and its CRLF), or 0 when it cannot tell.
 * Lets the caller size its next read and its buffer to what is coming. */
GOBLIN_API uint64_t goblin_resp_parser_wanted(const goblin_resp_parser *p);

/* Changes proto-max-bulk-len (0: the default) for the next length read. */
GOBLIN_API void goblin_resp_parser_set_max_bulk_len(goblin_resp_parser *p,
                                                    uint64_t max);

/* While set, the lower unauthenticated limits of Redis 7 apply
 * ("Protocol error: unauthenticated multibulk length" above 10 arguments,
 * "... unauthenticated bulk length" above 16384 bytes). Default: off. */
GOBLIN_API void goblin_resp_parser_set_unauthenticated(goblin_resp_parser *p,
                                                       bool on);

/* Forgets any partial command and a failure: a fresh parser. */
GOBLIN_API void goblin_resp_parser_reset(goblin_resp_parser *p);

/* ---- client side: encode commands, read replies ----------------------- */

/* Appends argv as a RESP multibulk command. Returns 0 or GOBLIN_ENOMEM
 * (then nothing is appended). */
GOBLIN_API int goblin_resp_command_write(struct goblin_buf *b, size_t argc,
                                         const struct goblin_slice *argv);

enum goblin_resp_type {
    GOBLIN_RESP_STATUS = 1,     /* +  str */
    GOBLIN_RESP_ERROR = 2,      /* -  str (code word included) */
    GOBLIN_RESP_INTEGER = 3,    /* :  integer */
    GOBLIN_RESP_BULK = 4,       /* $  str */
    GOBLIN_RESP_ARRAY = 5,      /* *  n items */
    GOBLIN_RESP_NULL = 6,       /* _, or RESP2's $-1 and *-1 (see null_array) */
    GOBLIN_RESP_DOUBLE = 7,     /* ,  dbl; str holds the text */
    GOBLIN_RESP_BOOLEAN = 8,    /* #  integer is 0 or 1 */
    GOBLIN_RESP_BLOB_ERROR = 9, /* !  str */
    GOBLIN_RESP_VERBATIM = 10,  /* =  fmt and str (without "fmt:") */
    GOBLIN_RESP_BIGNUM = 11,    /* (  str holds the digits */
    GOBLIN_RESP_MAP = 12,       /* %  n items: key, value, key, value... */
    GOBLIN_RESP_SET = 13,       /* ~  n items */
    GOBLIN_RESP_ATTRIBUTE = 14, /* |  n items as a map; see attribute */
    GOBLIN_RESP_PUSH = 15,      /* >  n items */
};

/* A reply as a tree. Strings are views into the input given to the call
 * that returned the tree; nodes belong to the reader. Both stay valid until
 * the next call on the reader or until the input bytes change or move. */
struct goblin_resp_value {
    enum goblin_resp_type type;
    bool null_array;           /* GOBLIN_RESP_NULL written as "*-1" */
    char fmt[4];               /* GOBLIN_RESP_VERBATIM: "txt", NUL-ended */
    int64_t integer;
    double dbl;
    struct goblin_slice str;
    size_t n;                  /* items (2 per pair for map/attribute) */
    struct goblin_resp_value *items;
    /* An attribute ("|") sent before this value, or NULL. */
    struct goblin_resp_value *attribute;
};

typedef struct goblin_resp_reader goblin_resp_reader;

/* max_bulk_len: the largest bulk or verbatim string accepted (0: 512 MiB);
 * allocator NULL: libc. Returns 0 or GOBLIN_ENOMEM. */
GOBLIN_API int goblin_resp_reader_open(const struct goblin_allocator *allocator,
                                       uint64_t max_bulk_len,
                                       goblin_resp_reader **out);

GOBLIN_API void goblin_resp_reader_close(goblin_resp_reader *r);

/* Reads one whole reply from in[0..len) (in at the first unconsumed byte,
 * as for goblin_resp_parse). Returns the bytes it spanned (> 0) and sets
 * *out to its tree, 0 if it is not complete yet (the reader resumes where
 * it stopped), GOBLIN_EPROTO for bytes that are not RESP (the reader then
 * stays failed), or GOBLIN_ENOMEM (nothing changed; may be retried).
 * Nesting deeper than 512 levels is GOBLIN_EPROTO. Claimed lengths and
 * counts allocate nothing until the bytes they claim have arrived. */
GOBLIN_API int64_t goblin_resp_reply_parse(goblin_resp_reader *r,
                                           const char *in, size_t len,
                                           const struct goblin_resp_value **out);

/* Forgets a partial reply and a failure. */
GOBLIN_API void goblin_resp_reader_reset(goblin_resp_reader *r);

#ifdef __cplusplus
}
#endif

#endif
