/* fuzz_resp.c - the RESP command parser (lib/resp/parser.c) and the reply
 * reader (lib/resp/reader.c) on hostile bytes.
 *
 * Input: one control byte, then the stream. Each stream is parsed twice:
 * whole, and in chunks of 1..16 bytes with the unconsumed bytes moved to a
 * new buffer before every call (as a server's buffer may move). Both runs
 * must tell the same story: the same commands with the same arguments,
 * the same error text, the same bytes left over. Control bits also pick a
 * small proto-max-bulk-len and the unauthenticated limits, so every limit
 * is reachable. */
#include <stdbool.h>
#include <string.h>

#include "goblin.h"
#include "fuzz.h"

/* A transcript: what a run saw, as bytes, for comparing runs. */
struct story {
    unsigned char *p;
    size_t len, cap;
};

static void say(struct story *s, const void *p, size_t n)
{
    if (s->len + n > s->cap) {
        s->cap = (s->len + n) * 2 + 64;
        s->p = realloc(s->p, s->cap);
        FUZZ_CHECK(s->p != NULL);
    }
    if (n > 0)
        memcpy(s->p + s->len, p, n);
    s->len += n;
}

static void say_u64(struct story *s, uint64_t v)
{
    say(s, &v, sizeof(v));
}

/* Feeds in[0..n) in chunks of `chunk` bytes, each time into a fresh copy
 * of the unconsumed bytes, and parses with `parse` until it fails. */
struct run {
    const uint8_t *in;
    size_t n, chunk;
    struct story story;
};

static void parse_commands(struct run *r, unsigned ctl)
{
    struct goblin_resp_parser_config cfg = {0};
    goblin_resp_parser *p;
    char *buf = NULL;
    size_t have = 0, fed = 0;
    bool failed = false;

    cfg.max_bulk_len = (ctl & 1) ? 64 : 0;
    FUZZ_CHECK(goblin_resp_parser_open(&cfg, &p) == 0);
    if (ctl & 2)
        goblin_resp_parser_set_unauthenticated(p, true);
    for (;;) {
        struct goblin_resp_command cmd;
        int64_t got = goblin_resp_parse(p, buf, have, &cmd);

        if (got > 0) {
            FUZZ_CHECK((uint64_t)got <= have);
            say_u64(&r->story, cmd.argc);
            for (size_t i = 0; i < cmd.argc; i++) {
                const char *a = cmd.argv[i].ptr;

                /* Multibulk arguments are views of the input (quoted
                 * inline words may live in the parser's scratch). */
                FUZZ_CHECK(buf[0] != '*' || cmd.argv[i].len == 0 ||
                           (a >= buf && a + cmd.argv[i].len <= buf + have));
                say_u64(&r->story, cmd.argv[i].len);
                say(&r->story, a, cmd.argv[i].len);
            }
            memmove(buf, buf + got, have - (size_t)got);
            have -= (size_t)got;
            continue;
        }
        if (got < 0) {
            const char *e = goblin_resp_parser_error(p);

            FUZZ_CHECK(got == GOBLIN_EPROTO);
            FUZZ_CHECK(e != NULL && strlen(e) < GOBLIN_RESP_ERROR_TEXT_MAX);
            say(&r->story, "E", 1);
            say(&r->story, e, strlen(e));
            failed = true;
            break;
        }
        if (fed == r->n)
            break;
        {   /* more bytes, in a buffer that moved */
            size_t c = r->n - fed < r->chunk ? r->n - fed : r->chunk;
            char *nb = malloc(have + c);

            FUZZ_CHECK(nb != NULL);
            if (have > 0)
                memcpy(nb, buf, have);
            memcpy(nb + have, r->in + fed, c);
            free(buf);
            buf = nb;
            have += c;
            fed += c;
        }
    }
    if (!failed)
        say_u64(&r->story, have);
    free(buf);
    goblin_resp_parser_close(p);
}

/* Touches every byte of a reply tree, so a view past the input shows. */
static void walk(struct story *s, const struct goblin_resp_value *v,
                 int depth)
{
    FUZZ_CHECK(depth <= 1024);
    say_u64(s, (uint64_t)v->type);
    say_u64(s, v->str.len);
    say(s, v->str.ptr, v->str.len);
    if (v->attribute != NULL)
        walk(s, v->attribute, depth + 1);
    for (size_t i = 0; i < v->n; i++)
        walk(s, &v->items[i], depth + 1);
}

static void parse_replies(struct run *r, unsigned ctl)
{
    goblin_resp_reader *rd;
    char *buf = NULL;
    size_t have = 0, fed = 0;

    FUZZ_CHECK(goblin_resp_reader_open(NULL, (ctl & 1) ? 64 : 0, &rd) == 0);
    for (;;) {
        const struct goblin_resp_value *v;
        int64_t got = goblin_resp_reply_parse(rd, buf, have, &v);

        if (got > 0) {
            FUZZ_CHECK((uint64_t)got <= have);
            walk(&r->story, v, 0);
            memmove(buf, buf + got, have - (size_t)got);
            have -= (size_t)got;
            continue;
        }
        if (got < 0) {
            FUZZ_CHECK(got == GOBLIN_EPROTO);
            say(&r->story, "E", 1);
            break;
        }
        if (fed == r->n) {
            say_u64(&r->story, have);
            break;
        }
        {
            size_t c = r->n - fed < r->chunk ? r->n - fed : r->chunk;
            char *nb = malloc(have + c);

            FUZZ_CHECK(nb != NULL);
            if (have > 0)
                memcpy(nb, buf, have);
            memcpy(nb + have, r->in + fed, c);
            free(buf);
            buf = nb;
            have += c;
            fed += c;
        }
    }
    free(buf);
    goblin_resp_reader_close(rd);
}

static void same_story(void (*parse)(struct run *, unsigned),
                       const uint8_t *in, size_t n, unsigned ctl)
{
    struct run whole = {in, n, n ? n : 1, {0}};
    struct run bits = {in, n, 1 + (ctl >> 4), {0}};

    parse(&whole, ctl);
    parse(&bits, ctl);
    FUZZ_CHECK(whole.story.len == bits.story.len);
    FUZZ_CHECK(whole.story.len == 0 ||
               memcmp(whole.story.p, bits.story.p, whole.story.len) == 0);
    free(whole.story.p);
    free(bits.story.p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned ctl;

    if (size < 1)
        return 0;
    ctl = data[0];
    same_story(parse_commands, data + 1, size - 1, ctl);
    same_story(parse_replies, data + 1, size - 1, ctl);
    return 0;
}
