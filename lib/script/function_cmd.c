/* function_cmd.c - FUNCTION LOAD, LIST, DELETE, FLUSH, DUMP, RESTORE,
 * STATS, KILL and HELP with Redis 7.0's replies and texts (functions.c).
 * The libraries themselves are function.c's.
 *
 * RESTORE builds every library of the payload into a set of its own
 * first (each checked against the others, as Redis loads into a fresh
 * context), so a payload that fails halfway changes nothing; then FLUSH
 * swaps the sets, and APPEND and REPLACE join them with Redis's checks.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "goblin/keys.h"
#include "script.h"

static void reply_cstr(struct goblin_sink *sink, const char *s)
{
    sink->ops->bulk(sink, s, strlen(s));
}

static bool word_is(struct goblin_slice s, const char *w)
{
    size_t n = strlen(w);

    if (s.len != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (tolower(((const unsigned char *)s.ptr)[i]) != w[i])
            return false;
    return true;
}

static bool function_load(struct goblin__lua *g, int argc,
                          const struct goblin_slice *argv,
                          struct goblin_sink *sink)
{
    struct goblin__lib *lib;
    bool replace = false;
    char err[600];
    int i = 2;

    for (; i < argc - 1; i++) {
        if (!word_is(argv[i], "replace")) {
            snprintf(err, sizeof(err), "ERR Unknown option given: %.*s",
                     (int)argv[i].len, (const char *)argv[i].ptr);
            goblin__lua_reply_error(sink, err);
            return false;
        }
        replace = true;
    }
    if (goblin__lib_create(g, &g->libs, argv[i], replace, &lib, err,
                           sizeof(err)) != 0) {
        goblin__lua_reply_error(sink, err);
        return false;
    }
    if (goblin__lib_commit(g, &g->libs, lib) != 0) {
        goblin_sink_error_code(sink, GOBLIN_ENOMEM);
        return false;
    }
    reply_cstr(sink, lib->name);
    return true;
}

static void reply_flags(struct goblin_sink *sink, unsigned flags)
{
    size_t n = 0;

    for (int k = 0; goblin__flag_names[k].name != NULL; k++)
        n += (flags & goblin__flag_names[k].flag) != 0;
    sink->ops->set(sink, n);
    for (int k = 0; goblin__flag_names[k].name != NULL; k++)
        if (flags & goblin__flag_names[k].flag)
            sink->ops->status(sink, goblin__flag_names[k].name,
                              strlen(goblin__flag_names[k].name));
}

static void reply_library(struct goblin_sink *sink,
                          const struct goblin__lib *lib, bool code)
{
    sink->ops->map(sink, code ? 4 : 3);
    reply_cstr(sink, "library_name");
    reply_cstr(sink, lib->name);
    reply_cstr(sink, "engine");
    reply_cstr(sink, "LUA");
    reply_cstr(sink, "functions");
    sink->ops->array(sink, lib->nfns);
    for (size_t j = 0; j < lib->nfns; j++) {
        const struct goblin__fn *f = &lib->fns[j];

        sink->ops->map(sink, 3);
        reply_cstr(sink, "name");
        sink->ops->bulk(sink, f->name, f->name_len);
        reply_cstr(sink, "description");
        if (f->desc != NULL)
            reply_cstr(sink, f->desc);
        else
            sink->ops->null(sink);
        reply_cstr(sink, "flags");
        reply_flags(sink, f->flags);
    }
    if (code) {
        reply_cstr(sink, "library_code");
        sink->ops->bulk(sink, lib->code, lib->code_len);
    }
}

static void function_list(struct goblin__lua *g, int argc,
                          const struct goblin_slice *argv,
                          struct goblin_sink *sink)
{
    const struct goblin_slice *pattern = NULL;
    bool code = false;
    size_t n = 0;
    char err[300];

    for (int i = 2; i < argc; i++) {
        if (!code && word_is(argv[i], "withcode")) {
            code = true;
            continue;
        }
        if (pattern == NULL && word_is(argv[i], "libraryname")) {
            if (i >= argc - 1) {
                goblin__lua_reply_error(sink, "ERR library name argument was not "
                                  "given");
                return;
            }
            pattern = &argv[++i];
            continue;
        }
        snprintf(err, sizeof(err), "ERR Unknown argument %.*s",
                 (int)argv[i].len, (const char *)argv[i].ptr);
        goblin__lua_reply_error(sink, err);
        return;
    }
    for (size_t i = 0; i < g->libs.n; i++)
        n += pattern == NULL ||
             goblin_glob_match(pattern->ptr, pattern->len, g->libs.v[i]->name,
                               strlen(g->libs.v[i]->name), 1);
    sink->ops->array(sink, n);
    for (size_t i = 0; i < g->libs.n; i++)
        if (pattern == NULL ||
            goblin_glob_match(pattern->ptr, pattern->len, g->libs.v[i]->name,
                              strlen(g->libs.v[i]->name), 1))
            reply_library(sink, g->libs.v[i], code);
}

static bool function_delete(struct goblin__lua *g,
                            const struct goblin_slice *argv,
                            struct goblin_sink *sink)
{
    struct goblin__lib *lib = goblin__lib_find(&g->libs, argv[2].ptr,
                                               argv[2].len);

    if (lib == NULL) {
        goblin__lua_reply_error(sink, "ERR Library not found");
        return false;
    }
    goblin__lib_delete(g, &g->libs, lib);
    goblin_sink_ok(sink);
    return true;
}

static void subcommand_error(struct goblin_sink *sink,
                             const struct goblin_slice *argv)
{
    char err[300];

    snprintf(err, sizeof(err), "ERR unknown subcommand or wrong number of "
                               "arguments for '%.*s'. Try FUNCTION HELP.",
             (int)argv[1].len, (const char *)argv[1].ptr);
    goblin__lua_reply_error(sink, err);
}

static bool function_flush(struct goblin__lua *g, int argc,
                           const struct goblin_slice *argv,
                           struct goblin_sink *sink)
{
    if (argc > 3) {
        subcommand_error(sink, argv);
        return false;
    }
    if (argc == 3 && !word_is(argv[2], "sync") &&
        !word_is(argv[2], "async")) {
        goblin__lua_reply_error(sink, "ERR FUNCTION FLUSH only supports SYNC|ASYNC "
                          "option");
        return false;
    }
    goblin__lib_flush(g, &g->libs);
    goblin_sink_ok(sink);
    return true;
}

static void function_dump(struct goblin__lua *g, struct goblin_sink *sink)
{
    struct goblin_buf out = {0};
    struct goblin_slice *codes = NULL;
    int rc = GOBLIN_ENOMEM;

    if (g->libs.n == 0 ||
        (codes = calloc(g->libs.n, sizeof(*codes))) != NULL) {
        for (size_t i = 0; i < g->libs.n; i++)
            codes[i] = (struct goblin_slice){g->libs.v[i]->code,
                                             g->libs.v[i]->code_len};
        rc = goblin_function_dump(&out, codes, g->libs.n);
    }
    if (rc == 0)
        sink->ops->bulk(sink, out.data, out.len);
    else
        goblin_sink_error_code(sink, rc);
    free(codes);
    goblin_buf_free(&out);
}

struct restore_ctx {
    struct goblin__lua *g;
    struct goblin__libset set;
    char err[600];
};

static int restore_one(void *ctx, struct goblin_slice code)
{
    struct restore_ctx *r = ctx;
    struct goblin__lib *lib;
    int rc = goblin__lib_create(r->g, &r->set, code, false, &lib, r->err,
                                sizeof(r->err));

    if (rc != 0)
        return rc;
    if ((rc = goblin__lib_commit(r->g, &r->set, lib)) != 0)
        snprintf(r->err, sizeof(r->err), "ERR Out of memory");
    return rc;
}

/* Redis's libraryJoin: r->set into g->libs; on a collision nothing
 * moves and err says why. */
static bool join(struct restore_ctx *r, bool replace)
{
    struct goblin__lua *g = r->g;

    for (size_t i = 0; i < r->set.n; i++) {
        const struct goblin__lib *lib = r->set.v[i];

        if (goblin__lib_find(&g->libs, lib->name, strlen(lib->name)) &&
            !replace) {
            snprintf(r->err, sizeof(r->err), "ERR Library %s already "
                                             "exists", lib->name);
            return false;
        }
    }
    for (size_t i = 0; i < r->set.n; i++) {
        const struct goblin__lib *lib = r->set.v[i];

        for (size_t j = 0; j < lib->nfns; j++) {
            const struct goblin__fn *f = goblin__fn_find(
                &g->libs, lib->fns[j].name, lib->fns[j].name_len);

            /* A library the payload replaces loses its functions. */
            if (f != NULL && goblin__lib_find(&r->set, f->lib->name,
                                              strlen(f->lib->name)) == NULL) {
                snprintf(r->err, sizeof(r->err), "ERR Function %s already "
                                                 "exists", f->name);
                return false;
            }
        }
    }
    while (r->set.n > 0) {
        struct goblin__lib *lib = r->set.v[0];

        goblin__lib_unlink(&r->set, lib);
        if (goblin__lib_commit(g, &g->libs, lib) != 0) {
            snprintf(r->err, sizeof(r->err), "ERR Out of memory");
            return false;
        }
    }
    return true;
}

static bool function_restore(struct goblin__lua *g, int argc,
                             const struct goblin_slice *argv,
                             struct goblin_sink *sink)
{
    struct restore_ctx r = {.g = g};
    const char *err = NULL;
    int policy = 'a';
    int rc;

    if (argc > 4) {
        subcommand_error(sink, argv);
        return false;
    }
    if (argc == 4) {
        if (word_is(argv[3], "append"))
            policy = 'a';
        else if (word_is(argv[3], "replace"))
            policy = 'r';
        else if (word_is(argv[3], "flush"))
            policy = 'f';
        else {
            goblin__lua_reply_error(sink, "ERR Wrong restore policy given, value should "
                              "be either FLUSH, APPEND or REPLACE.");
            return false;
        }
    }
    rc = goblin_function_undump(argv[2].ptr, argv[2].len, restore_one, &r,
                                &err);
    if (rc == 0 && policy == 'f') {
        struct goblin__libset t = g->libs;

        g->libs = r.set;
        r.set = t;
    } else if (rc == 0 && !join(&r, policy == 'r')) {
        rc = GOBLIN_EINVAL;
        err = r.err;
    } else if (rc != 0 && err == NULL) {
        err = r.err[0] != '\0' ? r.err : NULL;
    }
    goblin__lib_flush(g, &r.set);
    if (rc == 0)
        goblin_sink_ok(sink);
    else if (err != NULL)
        goblin__lua_reply_error(sink, err);
    else
        goblin_sink_error_code(sink, rc);
    return rc == 0;
}

static void function_stats(struct goblin__lua *g, struct goblin_sink *sink)
{
    struct goblin_script_run *run = g->run;

    if (run != NULL && (run->flags & GOBLIN_SCRIPT_EVAL)) {
        goblin__lua_reply_error(sink, "BUSY Redis is busy running a script. You can "
                          "only call SCRIPT KILL or SHUTDOWN NOSAVE.");
        return;
    }
    sink->ops->map(sink, 2);
    reply_cstr(sink, "running_script");
    if (run == NULL || g->running_argv == NULL) {
        sink->ops->null(sink);
    } else {
        sink->ops->map(sink, 3);
        reply_cstr(sink, "name");
        reply_cstr(sink, g->funcname);
        reply_cstr(sink, "command");
        sink->ops->array(sink, (size_t)g->running_argc);
        for (int i = 0; i < g->running_argc; i++)
            sink->ops->bulk(sink, g->running_argv[i].ptr,
                            g->running_argv[i].len);
        reply_cstr(sink, "duration_ms");
        sink->ops->integer(sink, (int64_t)(goblin__script_elapsed_ns(g) /
                                           1000000u));
    }
    reply_cstr(sink, "engines");
    sink->ops->map(sink, 1);
    reply_cstr(sink, "LUA");
    sink->ops->map(sink, 2);
    reply_cstr(sink, "libraries_count");
    sink->ops->integer(sink, (int64_t)g->libs.n);
    reply_cstr(sink, "functions_count");
    sink->ops->integer(sink, (int64_t)g->libs.nfunctions);
}

static const char *const function_help[] = {
    "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using "
    "LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is "
    "determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, "
    "can be restored using FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is "
    "possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. "
    "On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing "
    "libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this "
    "option there is a chance of failure",
    "      in case of functions name collision with another library).",
    "HELP",
    "    Prints this help.",
};

void goblin__function_command(struct goblin__lua *g, goblin_session *s,
                              int argc, const struct goblin_slice *argv,
                              struct goblin_sink *sink)
{
    struct goblin_slice sub = argv[1];
    size_t n = sizeof(function_help) / sizeof(*function_help);
    bool changed = false;

    if (word_is(sub, "load"))
        changed = function_load(g, argc, argv, sink);
    else if (word_is(sub, "list"))
        function_list(g, argc, argv, sink);
    else if (word_is(sub, "delete"))
        changed = function_delete(g, argv, sink);
    else if (word_is(sub, "flush"))
        changed = function_flush(g, argc, argv, sink);
    else if (word_is(sub, "dump"))
        function_dump(g, sink);
    else if (word_is(sub, "restore"))
        changed = function_restore(g, argc, argv, sink);
    else if (word_is(sub, "stats"))
        function_stats(g, sink);
    else if (word_is(sub, "kill"))
        goblin__script_kill(g, false, sink);
    else {
        sink->ops->array(sink, n);
        for (size_t i = 0; i < n; i++)
            sink->ops->status(sink, function_help[i],
                              strlen(function_help[i]));
    }
    /* A change the files and the write stream must see (Redis's
     * server.dirty++ in each of these). */
    if (changed)
        goblin_script_functions_changed(s);
}
