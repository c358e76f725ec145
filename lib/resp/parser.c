/* parser.c - the incremental RESP command parser (server side).
 *
 * It follows Redis 7's processInputBuffer: a command whose first byte is
 * '*' is multibulk (processMultibulkBuffer), anything else is an inline
 * line split with sdssplitargs' rules (processInlineBuffer). Every limit
 * and error text is Redis's; so are its quirks:
 *   - Redis finds line ends with strchr in its NUL-terminated query buffer,
 *     so a NUL byte before the CR (multibulk) or LF (inline) hides that
 *     line's end for good: the parser waits, and fails with the "too big"
 *     error once more than 64 KiB are buffered from the line's start.
 *   - A "too big" line is one whose end byte lies at offset 65537 or later,
 *     which is what Redis decides when bytes arrive one at a time; so the
 *     verdict never depends on how the input was split.
 *   - The byte after each CR is skipped without being checked, and a bulk
 *     argument is followed by two bytes that are not checked either.
 *   - "*0", "*-1" (any count <= 0) and empty inline lines are commands
 *     without arguments: consumed and skipped.
 *
 * State: `pos` is how far into the unconsumed input the command has been
 * parsed; arguments of a partial multibulk command are kept as offsets
 * from the command's first byte (in argv[i].ptr) and turned into pointers
 * when the command completes, so the caller may move its buffer between
 * calls. A line search resumes where it stopped (line_scan). A count
 * claimed by the peer commits no memory: argv grows as arguments arrive.
 *
 * A whole request already in the buffer, the common case, skips the state
 * machine: whole_multibulk reads it in one pass (and hands the request to
 * the state machine, from its first byte, whenever it is not plain). The
 * most common of those, every length of one or two digits, is also read
 * inline in a session's input loop (parser_impl.h), without a call.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "goblin/numtext.h"
#include "goblin/resp.h"
#include "resp/parser_impl.h"

/* The state machine's states (parser_impl.h), by their short names. */
#define ST_START GOBLIN__RESP_START
#define ST_INLINE GOBLIN__RESP_INLINE
#define ST_MB_COUNT GOBLIN__RESP_MB_COUNT
#define ST_BULK_LEN GOBLIN__RESP_BULK_LEN
#define ST_BULK_DATA GOBLIN__RESP_BULK_DATA
#define ST_FAILED GOBLIN__RESP_FAILED

#define ARGV_KEEP GOBLIN__RESP_ARGV_KEEP
#define CONTINUE INT64_MIN /* a step went on; call the next one */

/* ---- memory ------------------------------------------------------------ */

static void *mem_alloc(goblin_resp_parser *p, size_t n)
{
    return p->has_alloc ? p->alloc.malloc(p->alloc.ctx, n) : malloc(n);
}

static void mem_free(goblin_resp_parser *p, void *ptr, size_t n)
{
    if (ptr == NULL)
        return;
    if (p->has_alloc)
        p->alloc.free(p->alloc.ctx, ptr, n);
    else
        free(ptr);
}

/* Makes argv hold at least `need` slices, keeping its contents. */
static int argv_grow(goblin_resp_parser *p, size_t need)
{
    size_t cap = p->argv_cap ? p->argv_cap : 8;
    struct goblin_slice *a;

    if (need <= p->argv_cap)
        return 0;
    while (cap < need)
        cap *= 2;
    if (cap > SIZE_MAX / sizeof(*a))
        return GOBLIN_ENOMEM;
    a = mem_alloc(p, cap * sizeof(*a));
    if (a == NULL)
        return GOBLIN_ENOMEM;
    if (p->argc > 0)
        memcpy(a, p->argv, p->argc * sizeof(*a));
    mem_free(p, p->argv, p->argv_cap * sizeof(*a));
    p->argv = a;
    p->argv_cap = cap;
    return 0;
}

static int scratch_grow(goblin_resp_parser *p, size_t need)
{
    char *s;

    if (need <= p->scratch_cap)
        return 0;
    s = mem_alloc(p, need);
    if (s == NULL)
        return GOBLIN_ENOMEM;
    mem_free(p, p->scratch, p->scratch_cap);
    p->scratch = s;
    p->scratch_cap = need;
    return 0;
}

/* ---- lifecycle ----------------------------------------------------------- */

int goblin_resp_parser_open(const struct goblin_resp_parser_config *cfg,
                            goblin_resp_parser **out)
{
    goblin_resp_parser *p;
    const struct goblin_allocator *a = cfg != NULL ? cfg->allocator : NULL;

    if (out == NULL)
        return GOBLIN_EINVAL;
    p = a != NULL ? a->malloc(a->ctx, sizeof(*p)) : malloc(sizeof(*p));
    if (p == NULL)
        return GOBLIN_ENOMEM;
    memset(p, 0, sizeof(*p));
    if (a != NULL) {
        p->alloc = *a;
        p->has_alloc = true;
    }
    goblin_resp_parser_set_max_bulk_len(p, cfg != NULL ? cfg->max_bulk_len
                                                       : 0);
    *out = p;
    return 0;
}

void goblin_resp_parser_close(goblin_resp_parser *p)
{
    if (p == NULL)
        return;
    mem_free(p, p->argv, p->argv_cap * sizeof(*p->argv));
    mem_free(p, p->scratch, p->scratch_cap);
    mem_free(p, p, sizeof(*p));
}

void goblin_resp_parser_set_max_bulk_len(goblin_resp_parser *p, uint64_t max)
{
    p->max_bulk = max != 0 ? max : GOBLIN_RESP_BULK_MAX_DEFAULT;
}

void goblin_resp_parser_set_unauthenticated(goblin_resp_parser *p, bool on)
{
    p->unauth = on;
}

void goblin_resp_parser_reset(goblin_resp_parser *p)
{
    p->state = ST_START;
    p->pos = 0;
    p->argc = 0;
    p->line_scan = 0;
    p->nul_seen = false;
    p->err[0] = '\0';
}

const char *goblin_resp_parser_error(const goblin_resp_parser *p)
{
    return p->state == ST_FAILED ? p->err : "";
}

uint64_t goblin_resp_parser_wanted(const goblin_resp_parser *p)
{
    return goblin__resp_wanted(p);
}

/* ---- helpers ------------------------------------------------------------- */

static int64_t fail(goblin_resp_parser *p, const char *text)
{
    snprintf(p->err, sizeof(p->err), "ERR Protocol error: %s", text);
    p->state = ST_FAILED;
    return GOBLIN_EPROTO;
}

/* Looks for byte c in the line at in[start..len) as Redis's strchr would.
 * Returns 1 with *at its offset from start, 0 if more bytes are needed,
 * or -1 if the line is too big (see the file comment). */
static int find_line_end(goblin_resp_parser *p, const char *in, size_t len,
                         size_t start, char c, size_t *at)
{
    size_t avail = len - start;

    if (!p->nul_seen && p->line_scan < avail) {
        const char *s = in + start + p->line_scan;
        size_t n = avail - p->line_scan;
        const char *hit = memchr(s, c, n);
        size_t upto = hit != NULL ? (size_t)(hit - s) : n;

        if (memchr(s, '\0', upto) != NULL) {
            p->nul_seen = true;
        } else if (hit != NULL) {
            p->line_scan += upto;
            *at = p->line_scan;
            return *at > GOBLIN_RESP_INLINE_MAX ? -1 : 1;
        } else {
            p->line_scan = avail;
        }
    }
    return avail > GOBLIN_RESP_INLINE_MAX ? -1 : 0;
}

/* The common line "<prefix><digits>\r" followed by one more byte, read in
 * place: 1-18 digits without a leading zero ("0" alone is fine), which
 * string2ll accepts and which hold no NUL. Returns 1 with the value and
 * the CR's offset, or 0 to take the general road (find_line_end and
 * goblin_int64_parse), which gives the same answer for every line. */
static inline int quick_line(const char *s, size_t avail, int64_t *ll,
                             size_t *at)
{
    size_t i = 1;
    int64_t v;
    unsigned d1, d2;

    if (avail < 4)
        return 0;
    /* One and two digits, nearly every count and length, first. */
    d1 = (unsigned char)s[1] - (unsigned)'0';
    if (s[2] == '\r') {
        if (d1 > 9)
            return 0;
        *ll = d1;
        *at = 2;
        return 1;
    }
    d2 = (unsigned char)s[2] - (unsigned)'0';
    if (avail >= 5 && s[3] == '\r' && d1 - 1 < 9 && d2 < 10) {
        *ll = d1 * 10 + d2;
        *at = 3;
        return 1;
    }
    if (s[1] < '0' || s[1] > '9' ||
        (s[1] == '0' && s[2] != '\r'))
        return 0;
    v = s[1] - '0';
    for (i = 2; i < avail && i < 19 && s[i] >= '0' && s[i] <= '9'; i++)
        v = v * 10 + (s[i] - '0');
    if (i + 1 >= avail || s[i] != '\r')
        return 0;
    *ll = v;
    *at = i;
    return 1;
}

static void next_line(goblin_resp_parser *p)
{
    p->line_scan = 0;
    p->nul_seen = false;
}

/* The command is whole: offsets become pointers into in. */
static int64_t finish(goblin_resp_parser *p, const char *in,
                      struct goblin_resp_command *cmd, bool offsets)
{
    size_t used = p->pos;

    if (offsets)
        for (size_t i = 0; i < p->argc; i++)
            p->argv[i].ptr = in + (uintptr_t)p->argv[i].ptr;
    cmd->argc = p->argc;
    cmd->argv = p->argv;
    p->state = ST_START;
    p->pos = 0;
    next_line(p);
    return (int64_t)used;
}

/* ---- multibulk ----------------------------------------------------------- */

static int64_t mb_count(goblin_resp_parser *p, const char *in, size_t len,
                        struct goblin_resp_command *cmd)
{
    size_t at;
    int64_t ll;
    int r;

    if (!quick_line(in, len, &ll, &at)) {
        r = find_line_end(p, in, len, 0, '\r', &at);
        if (r < 0)
            return fail(p, "too big mbulk count string");
        if (r == 0 || at + 2 > len)
            return 0;
        if (goblin_int64_parse(in + 1, at - 1, &ll) != 0)
            return fail(p, "invalid multibulk length");
    }
    if (ll > INT_MAX)
        return fail(p, "invalid multibulk length");
    if (ll > GOBLIN_RESP_UNAUTH_MULTIBULK_MAX && p->unauth)
        return fail(p, "unauthenticated multibulk length");
    p->pos = at + 2;
    next_line(p);
    if (ll <= 0)
        return finish(p, in, cmd, false);
    p->mb_left = (uint64_t)ll;
    p->state = ST_BULK_LEN;
    return CONTINUE;
}

static int64_t expected_dollar(goblin_resp_parser *p, char got)
{
    char text[32];

    /* Redis formats the byte with %c (a NUL ends the text there) and turns
     * CR and LF into spaces. */
    if (got == '\r' || got == '\n')
        got = ' ';
    snprintf(text, sizeof(text), "expected '$', got '%c'", got);
    return fail(p, text);
}

static int64_t bulk_len(goblin_resp_parser *p, const char *in, size_t len)
{
    size_t at;
    int64_t ll;
    const char *line = in + p->pos;
    int r;

    if (p->pos >= len)   /* the input ends right before this line */
        return 0;
    if (line[0] != '$' || !quick_line(line, len - p->pos, &ll, &at)) {
        r = find_line_end(p, in, len, p->pos, '\r', &at);
        if (r < 0)
            return fail(p, "too big bulk count string");
        if (r == 0 || at + 2 > len - p->pos)
            return 0;
        if (line[0] != '$')
            return expected_dollar(p, line[0]);
        if (goblin_int64_parse(line + 1, at - 1, &ll) != 0 || ll < 0)
            return fail(p, "invalid bulk length");
    }
    if ((uint64_t)ll > p->max_bulk)
        return fail(p, "invalid bulk length");
    if (ll > GOBLIN_RESP_UNAUTH_BULK_MAX && p->unauth)
        return fail(p, "unauthenticated bulk length");
    /* Room for the argument before anything changes: a failure here can
     * be retried. Grow for what has arrived, not for what is claimed. */
    if (p->argc == p->argv_cap) {
        size_t want = p->argv_cap ? p->argv_cap * 2 : 8;

        if (want > p->argc + p->mb_left)
            want = p->argc + (size_t)p->mb_left;
        if (argv_grow(p, want) != 0)
            return GOBLIN_ENOMEM;
    }
    p->bulk_len = (uint64_t)ll;
    p->pos += at + 2;
    next_line(p);
    p->state = ST_BULK_DATA;
    return CONTINUE;
}

static int64_t bulk_data(goblin_resp_parser *p, const char *in, size_t len,
                         struct goblin_resp_command *cmd)
{
    struct goblin_slice *a;

    if (len - p->pos < p->bulk_len + 2)
        return 0;
    a = &p->argv[p->argc++];
    a->ptr = (const void *)(uintptr_t)p->pos;
    a->len = (size_t)p->bulk_len;
    p->pos += (size_t)p->bulk_len + 2;
    if (--p->mb_left == 0)
        return finish(p, in, cmd, true);
    p->state = ST_BULK_LEN;
    return CONTINUE;
}

/* ---- inline -------------------------------------------------------------- */

static int c_isspace(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
        return (c | 0x20) - 'a' + 10;
    return -1;
}

static char unescape(char c)
{
    switch (c) {
    case 'n':
        return '\n';
    case 'r':
        return '\r';
    case 't':
        return '\t';
    case 'b':
        return '\b';
    case 'a':
        return '\a';
    default:
        return c;
    }
}

/* One sdssplitargs token starting at s[*i] (not a blank). Its bytes go to
 * out; returns the count, or -1 for unbalanced quotes. *quoted tells
 * whether the token differs from its source span. */
static long split_token(const char *s, size_t n, size_t *i, char *out,
                        bool *quoted)
{
#define AT(k) ((k) < n ? s[(k)] : '\0')
    size_t j = *i;
    long k = 0;
    int inq = 0, insq = 0;

    for (;;) {
        char c = AT(j);

        if (inq) {
            if (c == '\\' && AT(j + 1) == 'x' && hex_digit(AT(j + 2)) >= 0 &&
                hex_digit(AT(j + 3)) >= 0) {
                out[k++] = (char)(hex_digit(AT(j + 2)) * 16 +
                                  hex_digit(AT(j + 3)));
                j += 3;
            } else if (c == '\\' && AT(j + 1) != '\0') {
                j++;
                out[k++] = unescape(AT(j));
            } else if (c == '"') {
                if (AT(j + 1) != '\0' && !c_isspace(AT(j + 1)))
                    return -1;
                j++;
                break;
            } else if (c == '\0') {
                return -1;
            } else {
                out[k++] = c;
            }
        } else if (insq) {
            if (c == '\\' && AT(j + 1) == '\'') {
                out[k++] = '\'';
                j++;
            } else if (c == '\'') {
                if (AT(j + 1) != '\0' && !c_isspace(AT(j + 1)))
                    return -1;
                j++;
                break;
            } else if (c == '\0') {
                return -1;
            } else {
                out[k++] = c;
            }
        } else if (c == ' ' || c == '\n' || c == '\r' || c == '\t' ||
                   c == '\0') {
            break;
        } else if (c == '"' || c == '\'') {
            inq = c == '"';
            insq = c == '\'';
            *quoted = true;
        } else {
            out[k++] = c;
        }
        j++;
    }
    /* Like sdssplitargs, step over the byte that ended the token. */
    *i = j < n ? j + 1 : j;
    return k;
#undef AT
}

/* Splits line[0..n) into p->argv. Returns 0, -1 for unbalanced quotes or
 * GOBLIN_ENOMEM. */
static int split_line(goblin_resp_parser *p, const char *line, size_t n)
{
    size_t i = 0, used = 0;

    if (scratch_grow(p, n + 1) != 0)
        return GOBLIN_ENOMEM;
    p->argc = 0;
    for (;;) {
        bool quoted = false;
        size_t start;
        long k;

        while (i < n && c_isspace(line[i]))
            i++;
        if (i >= n)
            return 0;
        start = i;
        k = split_token(line, n, &i, p->scratch + used, &quoted);
        if (k < 0)
            return -1;
        if (p->argc == p->argv_cap && argv_grow(p, p->argc + 1) != 0)
            return GOBLIN_ENOMEM;
        if (quoted) {
            p->argv[p->argc].ptr = p->scratch + used;
            used += (size_t)k;
        } else {
            p->argv[p->argc].ptr = line + start;
        }
        p->argv[p->argc++].len = (size_t)k;
    }
}

static int64_t parse_inline(goblin_resp_parser *p, const char *in,
                            size_t len, struct goblin_resp_command *cmd)
{
    size_t at, n;
    int r = find_line_end(p, in, len, 0, '\n', &at);

    if (r < 0)
        return fail(p, "too big inline request");
    if (r == 0)
        return 0;
    n = at > 0 && in[at - 1] == '\r' ? at - 1 : at;
    r = split_line(p, in, n);
    if (r == GOBLIN_ENOMEM) {
        p->argc = 0;
        return GOBLIN_ENOMEM;
    }
    if (r < 0)
        return fail(p, "unbalanced quotes in request");
    p->pos = at + 1;
    return finish(p, in, cmd, false);
}

/* ---- a whole request at once ---------------------------------------------- */

/* The common case: a whole multibulk request "*N\r\n$L\r\n<L bytes>\r\n..."
 * already in the buffer, every line plain (quick_line's form), within the
 * limits. It is read in one pass with no state kept between arguments,
 * the arguments becoming slices of in. Returns the bytes the request
 * takes, with *cmd set, or 0 when anything is missing or unusual (a
 * partial request, an empty or oversized count, a length over a limit, a
 * line quick_line does not take, argv failing to grow): the state
 * machine then parses the request from its first byte, which gives the
 * same result, waits or fails with Redis's error. Only argv may have
 * grown (as the state machine would have grown it) when it returns 0. */
static int64_t whole_multibulk(goblin_resp_parser *p, const char *in,
                               size_t len, struct goblin_resp_command *cmd)
{
    struct goblin_slice *argv = p->argv;
    size_t pos, at;
    int64_t n, ll;

    if (!quick_line(in, len, &n, &at) || n <= 0 || n > INT_MAX ||
        (p->unauth && n > GOBLIN_RESP_UNAUTH_MULTIBULK_MAX))
        return 0;
    /* Nearly every request: argv has room, and every length one or two
     * digits, within every limit when proto-max-bulk-len is 99 or more. */
    if ((uint64_t)n <= p->argv_cap && p->max_bulk >= 99 &&
        (pos = goblin__resp_short_arguments(in, len, at + 2, p->argv,
                                            (size_t)n)) > 0) {
        p->argc = (size_t)n;
        p->pos = pos;
        return finish(p, in, cmd, false);
    }
    pos = at + 2;
    for (int64_t k = 0; k < n; k++) {
        const char *line = in + pos;

        if (pos >= len || line[0] != '$' ||
            !quick_line(line, len - pos, &ll, &at) ||
            (uint64_t)ll > p->max_bulk ||
            (p->unauth && ll > GOBLIN_RESP_UNAUTH_BULK_MAX))
            return 0;
        if ((size_t)k == p->argv_cap) {
            /* argv grows as bulk_len grows it: as arguments arrive. A
             * failure is left to the state machine to report. */
            size_t want = p->argv_cap ? p->argv_cap * 2 : 8;
            int r;

            if (want > (uint64_t)n)
                want = (size_t)n;
            p->argc = (size_t)k;
            r = argv_grow(p, want);
            p->argc = 0;
            if (r != 0)
                return 0;
            argv = p->argv;
        }
        pos += at + 2;
        if (len - pos < (uint64_t)ll + 2)
            return 0;
        argv[k].ptr = in + pos;
        argv[k].len = (size_t)ll;
        pos += (size_t)ll + 2;
    }
    p->argc = (size_t)n;
    p->pos = pos;
    return finish(p, in, cmd, false);
}

/* ---- entry --------------------------------------------------------------- */

static void start_command(goblin_resp_parser *p, char first)
{
    if (p->argv_cap > ARGV_KEEP) {
        mem_free(p, p->argv, p->argv_cap * sizeof(*p->argv));
        p->argv = NULL;
        p->argv_cap = 0;
    }
    p->argc = 0;
    p->pos = 0;
    next_line(p);
    p->state = first == '*' ? ST_MB_COUNT : ST_INLINE;
}

/* The state machine, out of line so that goblin_resp_parse's common case
 * (whole_multibulk) runs without saving what it needs. */
static __attribute__((noinline)) int64_t
parse_general(goblin_resp_parser *p, const char *in, size_t len,
              struct goblin_resp_command *cmd, bool started)
{
    int64_t r = CONTINUE;

    if (p->state == ST_FAILED)
        return GOBLIN_EPROTO;
    if (p->state == ST_START && !started) {
        if (len == 0)
            return 0;
        start_command(p, in[0]);
    }
    if (p->state == ST_INLINE)
        return parse_inline(p, in, len, cmd);
    while (r == CONTINUE) {
        switch (p->state) {
        case ST_MB_COUNT:
            r = mb_count(p, in, len, cmd);
            break;
        case ST_BULK_LEN:
            r = bulk_len(p, in, len);
            break;
        case ST_BULK_DATA:
            r = bulk_data(p, in, len, cmd);
            break;
        default:
            return GOBLIN_EPROTO;
        }
    }
    return r;
}

int64_t goblin_resp_parse(goblin_resp_parser *p, const char *in, size_t len,
                          struct goblin_resp_command *cmd)
{
    int64_t r;

    p->last_len = len;
    if (p->state == ST_START && len > 0 && in[0] == '*') {
        start_command(p, '*');
        if ((r = whole_multibulk(p, in, len, cmd)) > 0)
            return r;
        return parse_general(p, in, len, cmd, true);
    }
    return parse_general(p, in, len, cmd, false);
}
