/* eval.c - EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT (LOAD, EXISTS,
 * FLUSH, KILL, HELP), with Redis 7.0's semantics (eval.c) and texts.
 *
 * The script cache (sha_cache.c) maps the lower-case SHA-1 of a script's
 * whole text to its compiled function (a reference in the EVAL
 * interpreter's registry) and its flags. EVAL
 * caches what it compiles, as Redis does, and SCRIPT FLUSH replaces the
 * interpreter (the only way to drop what scripts left in it). A shebang
 * line (#!lua flags=no-writes,...) gives a script its flags; without one
 * the script runs under Redis 6's rules (GOBLIN_SCRIPT_EVAL_COMPAT). The
 * shebang line is not compiled, but its newline is, so line numbers in
 * errors count from the top of the text.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "goblin/numtext.h"
#include "goblin/sha1.h"
#include "script.h"

static bool word_is(struct goblin_slice s, const char *w)
{
    size_t n = strlen(w), i;

    if (s.len != n)
        return false;
    for (i = 0; i < n; i++)
        if (tolower(((const unsigned char *)s.ptr)[i]) != w[i])
            return false;
    return true;
}

/* ---- shebang ---- */

/* Parses "a,b,c" into *flags; on an unknown name writes Redis's error. */
static bool parse_flags(const char *p, size_t len, unsigned *flags,
                        char *err, size_t cap)
{
    size_t i = 0;

    while (i < len) {
        size_t j = i, k;

        while (j < len && p[j] != ',')
            j++;
        for (k = 0; goblin__flag_names[k].name != NULL; k++)
            if (strlen(goblin__flag_names[k].name) == j - i &&
                memcmp(goblin__flag_names[k].name, p + i, j - i) == 0)
                break;
        if (goblin__flag_names[k].name == NULL) {
            snprintf(err, cap, "ERR Unexpected flag in script shebang: "
                               "%.*s", (int)(j - i), p + i);
            return false;
        }
        *flags |= goblin__flag_names[k].flag;
        i = j + 1;
    }
    return true;
}

/* Reads the shebang of body, if any: *skip is its length (up to, not
 * including, the newline), *flags its flags. Returns false with err. */
static bool shebang(const char *body, size_t len, size_t *skip,
                    unsigned *flags, char *err, size_t cap)
{
    const char *nl, *p, *end;

    *skip = 0;
    *flags = GOBLIN_SCRIPT_EVAL_COMPAT;
    if (len < 2 || body[0] != '#' || body[1] != '!')
        return true;
    nl = memchr(body, '\n', len);
    end = nl != NULL ? nl : body + len;
    *skip = (size_t)(end - body);
    *flags = 0;
    p = body + 2;
    {
        const char *sp = memchr(p, ' ', (size_t)(end - p));
        const char *eng_end = sp != NULL ? sp : end;

        if (eng_end - p != 3 || memcmp(p, "lua", 3) != 0) {
            snprintf(err, cap, "ERR Unexpected engine in script shebang: "
                               "%.*s", (int)(eng_end - body), body);
            return false;
        }
        p = eng_end;
    }
    while (p < end) {
        const char *w, *we;

        while (p < end && *p == ' ')
            p++;
        if (p >= end)
            break;
        w = p;
        while (p < end && *p != ' ')
            p++;
        we = p;
        if (we - w >= 6 && memcmp(w, "flags=", 6) == 0) {
            if (!parse_flags(w + 6, (size_t)(we - w - 6), flags, err, cap))
                return false;
        } else {
            snprintf(err, cap, "ERR Unknown lua shebang option: %.*s",
                     (int)(we - w), w);
            return false;
        }
    }
    return true;
}

/* ---- the cache ---- */

static void lower_sha(char out[41], struct goblin_slice s)
{
    size_t i;

    for (i = 0; i < 40; i++) {
        char c = i < s.len ? ((const char *)s.ptr)[i] : '0';

        out[i] = c >= 'A' && c <= 'Z' ? (char)(c + ('a' - 'A')) : c;
    }
    out[40] = '\0';
}

/* Compiles a script body, with its prologue (prologue.c) when it has
 * one; should that fail, without, so a script that does not compile
 * gets Lua's own words for its own text. */
static int load_body(lua_State *L, const char *body, size_t len)
{
    char pro[64];
    size_t plen = goblin__script_prologue(body, len, pro, sizeof(pro));
    char *text;
    int rc;

    if (plen > 0 && (text = malloc(plen + len)) != NULL) {
        memcpy(text, pro, plen);
        memcpy(text + plen, body, len);
        rc = luaL_loadbuffer(L, text, plen + len, "@user_script");
        free(text);
        if (rc == 0)
            return 0;
        lua_pop(L, 1);
    }
    return luaL_loadbuffer(L, body, len, "@user_script");
}

/* The cache entry of the script body (its sha computed into sha),
 * compiled and added unless it is there; NULL with the error written to
 * sink. The entry is valid until the next addition. */
static const struct goblin__sha_entry *
compile(struct goblin__lua *g, struct goblin_slice body, char sha[41],
        struct goblin_sink *sink)
{
    lua_State *L = g->eval.L;
    const struct goblin__sha_entry *e;
    char err[300];
    size_t skip;
    unsigned flags;
    int rc, ref;

    goblin_sha1_hex(sha, body.ptr, body.len);
    if ((e = goblin__sha_cache_find(&g->scripts, sha)) != NULL)
        return e;
    if (!shebang(body.ptr, body.len, &skip, &flags, err, sizeof(err))) {
        goblin__lua_reply_error(sink, err);
        return NULL;
    }
    goblin__vm_bound(&g->eval, true);
    rc = load_body(L, (const char *)body.ptr + skip, body.len - skip);
    goblin__vm_bound(&g->eval, false);
    if (rc != 0) {
        const char *msg = lua_tostring(L, -1);

        snprintf(err, sizeof(err), "ERR Error compiling script (new "
                                   "function): %s", msg != NULL ? msg : "?");
        lua_pop(L, 1);
        if (rc == LUA_ERRMEM)
            goblin__vm_reclaim(&g->eval);
        goblin__lua_reply_error(sink, err);
        return NULL;
    }
    /* Its environment is the sandbox's globals, once and for all. */
    goblin__vm_push_globals(L);
    lua_setfenv(L, -2);
    ref = luaL_ref(L, LUA_REGISTRYINDEX);
    if (goblin__sha_cache_add(&g->scripts, sha, ref, flags) != 0) {
        luaL_unref(L, LUA_REGISTRYINDEX, ref);
        goblin_sink_error_code(sink, GOBLIN_ENOMEM);
        return NULL;
    }
    g->nscripts++;
    g->scripts_bytes += body.len;
    return goblin__sha_cache_find(&g->scripts, sha);
}

/* ---- running ---- */

/* Writes the error a failed run left on top of the stack (popped). */
void goblin__lua_run_error(lua_State *L, goblin_session *s,
                           const char *funcname, struct goblin_sink *sink)
{
    char small[512];
    const char *msg = NULL, *source = NULL;
    size_t mlen = 0;
    int line = -1;
    luaL_Buffer b;

    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, "err");
        if (lua_isstring(L, -1))
            msg = lua_tolstring(L, -1, &mlen);
        lua_getfield(L, -2, "source");
        if (lua_isstring(L, -1))
            source = lua_tostring(L, -1);
        lua_getfield(L, -3, "line");
        if (lua_isnumber(L, -1))
            line = (int)lua_tonumber(L, -1);
        if (msg == NULL) {
            msg = "ERR unknown error";
            mlen = strlen(msg);
        }
        luaL_buffinit(L, &b);
        luaL_addlstring(&b, msg, mlen);
        if (source != NULL && line >= 0) {
            snprintf(small, sizeof(small), " script: %s, on %s:%d.",
                     funcname, source, line);
            luaL_addstring(&b, small);
        }
        luaL_pushresult(&b);
        msg = lua_tolstring(L, -1, &mlen);
        /* An error a command the script called raised: counted then. */
        lua_getfield(L, -5, "ignore_error_stats_update");
        if (lua_toboolean(L, -1))
            goblin_script_error_counted(s);
        lua_pop(L, 1);
        sink->ops->error(sink, msg, mlen);
        lua_pop(L, 5);
        return;
    }
    msg = lua_tostring(L, -1);
    snprintf(small, sizeof(small), "ERR Error running script %s, %.100s",
             funcname, msg != NULL ? msg : "execution failure");
    goblin__lua_reply_error(sink, small);
    lua_pop(L, 1);
}

/* Runs the cached script e. */
static void run_entry(struct goblin__lua *g, goblin_session *s,
                      const struct goblin__sha_entry *e, const char *sha,
                      bool ro, int nkeys, const struct goblin_slice *keys,
                      int nargs, const struct goblin_slice *args,
                      struct goblin_sink *sink)
{
    lua_State *L = g->eval.L;
    struct goblin_script_run run = {0};
    int rc;

    run.flags = e->flags | GOBLIN_SCRIPT_EVAL | (ro ? GOBLIN_SCRIPT_RO : 0);
    run.resp = 2;
    if (goblin_script_begin(s, &run, sink) != 0)
        return;
    goblin__vm_set_keys_argv(L, keys, (size_t)nkeys, args, (size_t)nargs);
    goblin__vm_push_handler(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, e->ref);
    g->run = &run;
    g->funcname = sha;
    goblin__script_hook_start(g, &g->eval);
    goblin__vm_bound(&g->eval, true);
    rc = lua_pcall(L, 0, 1, -2);
    goblin__vm_bound(&g->eval, false);
    goblin__script_hook_stop(g, &g->eval);
    g->run = NULL;
    goblin_script_end(&run);
    if (rc == 0)
        goblin__lua_reply(L, s, run.resp, sink);
    else
        goblin__lua_run_error(L, s, sha, sink);
    lua_pop(L, 1); /* the handler */
    goblin__vm_after_run(&g->eval, rc);
}

static void eval(struct goblin__lua *g, goblin_session *s, int argc,
                 const struct goblin_slice *argv, bool by_sha, bool ro,
                 struct goblin_sink *sink)
{
    const struct goblin__sha_entry *e;
    int64_t numkeys;
    char sha[41];

    if (goblin__lua_numkeys(argc, argv, "ERR value is not an integer or "
                                        "out of range", sink, &numkeys) != 0)
        return;
    if (by_sha) {
        if (argv[1].len != 40) {
            goblin__lua_reply_error(sink, "NOSCRIPT No matching script. Please use "
                              "EVAL.");
            return;
        }
        /* Clients send the digits in lower case, as SCRIPT LOAD gives
         * them: folding comes only after a miss. */
        memcpy(sha, argv[1].ptr, 40);
        sha[40] = '\0';
        if ((e = goblin__sha_cache_find(&g->scripts, sha)) == NULL) {
            lower_sha(sha, argv[1]);
            e = goblin__sha_cache_find(&g->scripts, sha);
        }
        if (e == NULL) {
            goblin__lua_reply_error(sink, "NOSCRIPT No matching script. Please use "
                              "EVAL.");
            return;
        }
    } else if ((e = compile(g, argv[1], sha, sink)) == NULL) {
        return;
    }
    run_entry(g, s, e, sha, ro, (int)numkeys, argv + 3,
              argc - 3 - (int)numkeys, argv + 3 + numkeys, sink);
}

/* ---- SCRIPT ---- */

static const char *const script_help[] = {
    "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DEBUG (YES|SYNC|NO)",
    "    Set the debug mode for subsequent scripts executed.",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the "
    "script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is "
    "determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
    "HELP",
    "    Prints this help.",
};

int goblin__eval_flush(struct goblin__lua *g)
{
    struct goblin__vm fresh;

    if (goblin__vm_open(g, &fresh) != 0)
        return GOBLIN_ENOMEM;
    goblin__vm_close(&g->eval);
    g->eval = fresh;
    g->eval.L = fresh.L;
    /* The allocator's ud is the vm struct: it moved with the copy. */
    lua_setallocf(g->eval.L, goblin__vm_alloc, &g->eval);
    goblin__sha_cache_clear(&g->scripts);
    g->nscripts = 0;
    g->scripts_bytes = 0;
    return 0;
}

static void script(struct goblin__lua *g, int argc,
                   const struct goblin_slice *argv, struct goblin_sink *sink)
{
    struct goblin_slice sub = argv[1];
    char sha[41];
    int i;

    if (word_is(sub, "load")) {
        if (compile(g, argv[2], sha, sink) == NULL)
            return;
        sink->ops->bulk(sink, sha, 40);
    } else if (word_is(sub, "exists")) {
        sink->ops->array(sink, (size_t)argc - 2);
        for (i = 2; i < argc; i++) {
            bool found = false;

            if (argv[i].len == 40) {
                lower_sha(sha, argv[i]);
                found = goblin__sha_cache_find(&g->scripts, sha) != NULL;
            }
            sink->ops->integer(sink, found);
        }
    } else if (word_is(sub, "flush")) {
        if (argc > 3 || (argc == 3 && !word_is(argv[2], "sync") &&
                         !word_is(argv[2], "async"))) {
            goblin__lua_reply_error(sink, "ERR SCRIPT FLUSH only support SYNC|ASYNC "
                              "option");
            return;
        }
        if (goblin__eval_flush(g) != 0) {
            goblin_sink_error_code(sink, GOBLIN_ENOMEM);
            return;
        }
        goblin_sink_ok(sink);
    } else if (word_is(sub, "kill")) {
        goblin__script_kill(g, true, sink);
    } else {
        sink->ops->array(sink, sizeof(script_help) / sizeof(*script_help));
        for (i = 0; i < (int)(sizeof(script_help) / sizeof(*script_help));
             i++)
            sink->ops->status(sink, script_help[i], strlen(script_help[i]));
    }
}

void goblin__eval_command(struct goblin__lua *g, goblin_session *s, int argc,
                          const struct goblin_slice *argv,
                          struct goblin_sink *sink)
{
    struct goblin_slice name = argv[0];

    if (word_is(name, "eval"))
        eval(g, s, argc, argv, false, false, sink);
    else if (word_is(name, "evalsha"))
        eval(g, s, argc, argv, true, false, sink);
    else if (word_is(name, "eval_ro"))
        eval(g, s, argc, argv, false, true, sink);
    else if (word_is(name, "evalsha_ro"))
        eval(g, s, argc, argv, true, true, sink);
    else
        script(g, argc, argv, sink);
}
