/* test_commands_util.h - what the command and session tests share: a
 * fixture with a store (counting allocator, settable clock), an engine
 * (settable monotonic clock) and one session; feeding RESP bytes and
 * comparing the exact reply bytes. */
#ifndef GOBLIN_TEST_COMMANDS_UTIL_H
#define GOBLIN_TEST_COMMANDS_UTIL_H

#include <stdio.h>

#include "testutil.h"

struct cfix {
    struct fixture *base;
    goblin_engine *eng;
    goblin_session *s;
    uint64_t now_ns;
    char out[1 << 18]; /* the whole COMMAND reply fits */
    size_t outlen;
    int rc; /* the last feed's return */
};

static inline uint64_t cfix_now_ns(void *ctx)
{
    return ((struct cfix *)ctx)->now_ns;
}

static inline int cfix_open(void **state, const char *requirepass)
{
    struct cfix *f = calloc(1, sizeof(*f));
    struct goblin_engine_config ec = {0};
    struct goblin_session_info si = {GOBLIN_TRANSPORT_TCP, "127.0.0.1:5000",
                                     "127.0.0.1:6379", 7, NULL};
    void *base = NULL;

    if (f == NULL || fixture_setup(&base) != 0)
        return -1;
    f->base = base;
    f->now_ns = 1000000000;
    ec.store = f->base->st;
    ec.now_ns = cfix_now_ns;
    ec.now_ns_ctx = f;
    ec.requirepass = requirepass;
    if (goblin_engine_open(&ec, &f->eng) != 0)
        return -1;
    if (goblin_session_open(f->eng, &si, &f->s) != 0)
        return -1;
    *state = f;
    return 0;
}

static inline int cfix_setup(void **state)
{
    return cfix_open(state, NULL);
}

static inline int cfix_setup_pass(void **state)
{
    return cfix_open(state, "sekret");
}

static inline int cfix_teardown(void **state)
{
    struct cfix *f = *state;
    void *base = f->base;

    goblin_engine_close(f->eng);
    free(f);
    return fixture_teardown(&base);
}

#define CMD_TEST(fn) cmocka_unit_test_setup_teardown(fn, cfix_setup, \
                                                     cfix_teardown)
#define CMD_TEST_PASS(fn) \
    cmocka_unit_test_setup_teardown(fn, cfix_setup_pass, cfix_teardown)

/* Takes everything the session has written, as a NUL-ended string in
 * f->out (replies may hold NUL bytes: f->outlen has the length). */
static inline const char *take_output(struct cfix *f, goblin_session *s)
{
    size_t len;
    const void *p = goblin_session_output(s, &len);

    assert_true(len < sizeof(f->out));
    memcpy(f->out, p, len);
    f->out[len] = '\0';
    f->outlen = len;
    goblin_session_output_consume(s, len);
    return f->out;
}

/* Feeds bytes (a C string) to session s and returns its replies. */
static inline const char *feed_on(struct cfix *f, goblin_session *s, const char *in)
{
    f->rc = goblin_session_feed(s, in, strlen(in));
    return take_output(f, s);
}

/* Encodes a command given as words split at spaces (no quoting) as a
 * RESP multibulk into buf. */
static inline const char *resp_of(char *buf, size_t cap, const char *words)
{
    const char *p = words, *q;
    size_t n = 0, len = 0, argc = 0;
    char tmp[8192];

    while (*p != '\0') {
        while (*p == ' ')
            p++;
        if (*p == '\0')
            break;
        for (q = p; *q != '\0' && *q != ' '; q++)
            ;
        n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "$%d\r\n%.*s\r\n",
                              (int)(q - p), (int)(q - p), p);
        argc++;
        p = q;
    }
    len = (size_t)snprintf(buf, cap, "*%zu\r\n%s", argc, tmp);
    assert_true(len < cap);
    return buf;
}

/* Runs one command (words split at spaces) on the fixture's session as
 * multibulk and returns the reply bytes. */
static inline const char *cmd_on(struct cfix *f, goblin_session *s,
                          const char *words)
{
    char buf[8192];

    return feed_on(f, s, resp_of(buf, sizeof(buf), words));
}

#define CMD(words) cmd_on(f, f->s, (words))
#define FEED(bytes) feed_on(f, f->s, (bytes))
#define EXPECT(words, reply) assert_string_equal(CMD(words), (reply))

#endif
