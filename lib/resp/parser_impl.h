/* parser_impl.h - the RESP command parser's state (parser.c), shared
 * inside libgoblin so that a session's input loop parses the common
 * request without a call (goblin__resp_take_whole), leaving the rest to
 * goblin_resp_parse.
 *
 * Between commands (GOBLIN__RESP_START) pos, line_scan and nul_seen are
 * 0; finish, goblin_resp_parser_reset and the first open leave them so.
 */
#ifndef GOBLIN_RESP_PARSER_IMPL_H
#define GOBLIN_RESP_PARSER_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "goblin/resp.h"

enum goblin__resp_state {
    GOBLIN__RESP_START,     /* between commands */
    GOBLIN__RESP_INLINE,    /* waiting for the inline line's LF */
    GOBLIN__RESP_MB_COUNT,  /* waiting for "*<count>\r?" */
    GOBLIN__RESP_BULK_LEN,  /* waiting for "$<len>\r?" */
    GOBLIN__RESP_BULK_DATA, /* waiting for <len> bytes and two more */
    GOBLIN__RESP_FAILED,
};

/* An argv larger than this is freed before the next command. */
#define GOBLIN__RESP_ARGV_KEEP 1024

struct goblin_resp_parser {
    struct goblin_allocator alloc;
    bool has_alloc;
    bool unauth;
    enum goblin__resp_state state;
    uint64_t max_bulk;
    size_t pos;
    size_t line_scan; /* bytes of the current line searched in vain */
    bool nul_seen;    /* a NUL hides the current line's end */
    uint64_t mb_left; /* arguments still to come */
    uint64_t bulk_len;
    size_t last_len;
    size_t argc;
    size_t argv_cap;
    struct goblin_slice *argv;
    size_t scratch_cap;
    char *scratch;
    char err[GOBLIN_RESP_ERROR_TEXT_MAX];
};

/* The n >= 1 arguments at in[pos..len) when every one is whole and its
 * length has one or two digits ("$5\r\n", "$15\r\n"; a leading zero only
 * in "$0"), into argv (room for n). Each length is below 100, so within
 * every limit but a proto-max-bulk-len below 99, which the caller rules
 * out. The byte after each CR, and the two after each argument, are not
 * checked, as Redis does not check them. Returns the offset past the
 * last argument, or 0 when anything differs (the caller then takes the
 * general road, which decides; argv may have been written). Every
 * argument but the last must leave the next one's five header bytes in
 * the input, which is the one bounds test per argument. */
static inline size_t goblin__resp_short_arguments(const char *in, size_t len,
                                                  size_t pos,
                                                  struct goblin_slice *argv,
                                                  size_t n)
{
    size_t last = len - 5; /* a header may start here at the latest */

    if (len < 5 || pos > last)
        return 0;
    for (size_t k = 0;; k++) {
        const char *s = in + pos;
        unsigned d1 = (unsigned char)s[1] - (unsigned)'0';
        unsigned d2 = (unsigned char)s[2] - (unsigned)'0';
        size_t ll;

        if (s[0] != '$')
            return 0;
        if (s[2] == '\r' && d1 <= 9) {
            ll = d1;
            pos += 4;
        } else if (s[3] == '\r' && d1 - 1 < 9 && d2 < 10) {
            ll = d1 * 10 + d2;
            pos += 5;
        } else {
            return 0;
        }
        argv[k].ptr = in + pos;
        argv[k].len = ll;
        /* pos <= len and ll < 100: no overflow. */
        pos += ll + 2;
        if (k + 1 == n)
            return pos <= len ? pos : 0;
        if (pos > last)
            return 0;
    }
}

/* goblin_resp_parse's common case, inline: between commands, a whole
 * request "*N\r\n" of 1 to 99 arguments that argv has room for, each
 * taken by goblin__resp_short_arguments, under the limits given (those
 * goblin_resp_parse would apply: not authenticated, proto-max-bulk-len).
 * Returns the bytes it takes, with *cmd set and the parser between
 * commands as goblin_resp_parse would leave it (argc and last_len, which
 * nothing reads between commands, aside); or 0, having changed nothing
 * but argv's contents and *cmd, for goblin_resp_parse to decide. */
static inline size_t goblin__resp_take_whole(goblin_resp_parser *p,
                                             const char *in, size_t len,
                                             bool unauth, uint64_t max_bulk,
                                             struct goblin_resp_command *cmd)
{
    unsigned d1, d2;
    size_t n, pos;

    if (p->state != GOBLIN__RESP_START || len < 5 || in[0] != '*')
        return 0;
    d1 = (unsigned char)in[1] - (unsigned)'0';
    d2 = (unsigned char)in[2] - (unsigned)'0';
    if (in[2] == '\r' && d1 - 1 < 9) {
        n = d1;
        pos = 4;
    } else if (in[3] == '\r' && d1 - 1 < 9 && d2 < 10) {
        n = d1 * 10 + d2;
        pos = 5;
    } else {
        return 0;
    }
    /* n <= argv_cap <= GOBLIN__RESP_ARGV_KEEP (n >= 1): a larger argv
     * is for goblin_resp_parse to free. */
    if (p->argv_cap - n > GOBLIN__RESP_ARGV_KEEP - n || max_bulk < 99 ||
        (unauth && n > GOBLIN_RESP_UNAUTH_MULTIBULK_MAX))
        return 0;
    /* Set first, so that nothing need be kept across the arguments. */
    cmd->argc = n;
    cmd->argv = p->argv;
    return goblin__resp_short_arguments(in, len, pos, p->argv, n);
}

/* goblin_resp_parser_wanted, inline. */
static inline uint64_t goblin__resp_wanted(const goblin_resp_parser *p)
{
    uint64_t end;

    if (p->state != GOBLIN__RESP_BULK_DATA)
        return 0;
    end = (uint64_t)p->pos + p->bulk_len + 2;
    return end > p->last_len ? end - p->last_len : 0;
}

#endif
