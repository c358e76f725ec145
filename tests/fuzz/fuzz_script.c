/* fuzz_script.c - scripting (libgoblin-script) with random Lua source
 * and random redis.call argument lists, against a live store, checking
 * the store's invariants after every script and that the engine still
 * answers afterwards.
 *
 * Input: one item per line. A line starting with '!' is Lua source (the
 * rest of the line; "\n" written as the two characters \ and n becomes a
 * newline), run by EVAL and loaded as a function library's body. Any
 * other line is an argument list split by single spaces, run through
 * both redis.call and redis.pcall (each argument a Lua long string), so
 * every command the table has meets the script path's checks. A script
 * that loops is stopped by the busy hook after busy-reply-threshold, as
 * SHUTDOWN NOSAVE would stop it.
 */
#include <stdio.h>
#include <string.h>

#include "fuzz_session.h"
#include "goblin/lua.h"
#include "goblin/script.h"

#define MAX_ARGS 32

static void stop_script(void *ctx, goblin_session *s)
{
    (void)s;
    goblin_engine_script_stop(ctx);
}

static void command(struct fuzz_live *l, int argc,
                    const struct goblin_slice *argv)
{
    struct goblin_buf b = {0};

    FUZZ_CHECK(goblin_resp_command_write(&b, (size_t)argc, argv) == 0);
    (void)goblin_session_feed(l->s, b.data, b.len);
    goblin_buf_free(&b);
    live_drain(l);
    FUZZ_CHECK(goblin__store_check(l->st) == 0);
}

#define S(lit) ((struct goblin_slice){lit, sizeof(lit) - 1})

static void run_source(struct fuzz_live *l, const uint8_t *p, size_t n)
{
    struct goblin_buf src = {0}, lib = {0};
    static const char head[] = "#!lua name=fz\n";

    for (size_t i = 0; i < n; i++) {
        char c = (char)p[i];

        if (c == '\\' && i + 1 < n && p[i + 1] == 'n') {
            c = '\n';
            i++;
        }
        FUZZ_CHECK(goblin_buf_append(&src, &c, 1) == 0);
    }
    FUZZ_CHECK(goblin_buf_append(&lib, head, sizeof(head) - 1) == 0);
    FUZZ_CHECK(src.len == 0 || goblin_buf_append(&lib, src.data,
                                                 src.len) == 0);
    command(l, 3, (struct goblin_slice[]){
        S("EVAL"), {src.data != NULL ? src.data : "", src.len}, S("0")});
    command(l, 4, (struct goblin_slice[]){
        S("FUNCTION"), S("LOAD"), S("REPLACE"), {lib.data, lib.len}});
    goblin_buf_free(&src);
    goblin_buf_free(&lib);
}

/* Appends [==[arg]==] (the level chosen so arg cannot close it). */
static void long_string(struct goblin_buf *b, const uint8_t *p, size_t n)
{
    char open[24], close[24];
    int level = 0;

    for (;; level++) {
        int k = snprintf(close, sizeof(close), "]%.*s]", level,
                         "==========");
        if (level >= 10 || memmem(p, n, close, (size_t)k) == NULL)
            break;
    }
    snprintf(open, sizeof(open), "[%.*s[\n", level, "==========");
    snprintf(close, sizeof(close), "]%.*s]", level, "==========");
    FUZZ_CHECK(goblin_buf_append(b, open, strlen(open)) == 0);
    FUZZ_CHECK(n == 0 || goblin_buf_append(b, p, n) == 0);
    FUZZ_CHECK(goblin_buf_append(b, close, strlen(close)) == 0);
}

static void run_call(struct fuzz_live *l, const uint8_t *p, size_t n)
{
    static const char *const fns[] = {"redis.pcall", "redis.call"};

    for (int f = 0; f < 2; f++) {
        struct goblin_buf b = {0};
        size_t start = 0, args = 0;

        FUZZ_CHECK(goblin_buf_append(&b, "return ", 7) == 0);
        FUZZ_CHECK(goblin_buf_append(&b, fns[f], strlen(fns[f])) == 0);
        FUZZ_CHECK(goblin_buf_append(&b, "(", 1) == 0);
        for (size_t i = 0; i <= n && args < MAX_ARGS; i++) {
            if (i < n && p[i] != ' ')
                continue;
            if (args++ > 0)
                FUZZ_CHECK(goblin_buf_append(&b, ",", 1) == 0);
            long_string(&b, p + start, i - start);
            start = i + 1;
        }
        FUZZ_CHECK(goblin_buf_append(&b, ")", 1) == 0);
        command(l, 3, (struct goblin_slice[]){
            S("EVAL"), {b.data, b.len}, S("0")});
        goblin_buf_free(&b);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_live l;
    size_t start = 0;

    live_open(&l);
    if (goblin_lua_attach(l.eng) != 0) {
        live_close(&l);
        return 0;
    }
    goblin_engine_busy_hook(l.eng, stop_script, l.eng);
    command(&l, 4, (struct goblin_slice[]){
        S("CONFIG"), S("SET"), S("busy-reply-threshold"), S("20")});
    for (size_t i = 0; i <= size; i++) {
        if (i < size && data[i] != '\n')
            continue;
        if (i > start && data[start] == '!')
            run_source(&l, data + start + 1, i - start - 1);
        else if (i > start)
            run_call(&l, data + start, i - start);
        start = i + 1;
        if (goblin_session_should_close(l.s))
            break;
    }
    command(&l, 1, (struct goblin_slice[]){S("PING")});
    live_close(&l);
    return 0;
}
