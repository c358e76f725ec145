/* config_load.c - the config-file reader and the command line, as
 * redis-server 7.0 reads them (config.c loadServerConfig*):
 *
 *   - one directive per line, '#' starts a comment line; words split and
 *     quoted by sdssplitargs' rules (libgoblin's inline RESP parser);
 *   - "include PATH" reads another file there (a glob may name several);
 *   - a directive whose value is several words (save, bind,
 *     client-output-buffer-limit, ...) joins them; any other takes one;
 *   - "save" lines add up: the first one read replaces the default, each
 *     later one adds its policies, save "" clears them;
 *   - the command line: a first argument not starting with "--" is the
 *     config file ("-": standard input), read first; then every
 *     "--name word..." is one more directive, so the command line wins.
 *
 * A directive goes to its setting (immutable ones included, since this is
 * start-up); "user NAME rule..." declares an ACL user and "rename-command
 * NAME NEWNAME" renames (NEWNAME "": disables) a command, as Redis does;
 * loadmodule and sentinel, which Redis 7.0 also knows but Goblin has no
 * use for (no modules or sentinel mode), are accepted with a warning in
 * the log, so a Redis config file still starts the server; one the table does not know is offered to the
 * server's directive hook (goblind's --ring options). The first bad one
 * stops the
 * load with Redis's report: "*** FATAL CONFIG FILE ERROR ***", where, the
 * line, the reason.
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "acl.h"
#include "commands/command.h"
#include "goblin/resp.h"
#include "settings.h"

#define INCLUDE_DEPTH 16

struct loader {
    goblin_engine *eng;
    goblin_resp_parser *parser;
    char *err;
    size_t cap;
    bool save_seen;              /* a save line replaced the default */
    char save[GOBLIN_SETTING_VALUE_MAX + 1];
    bool from_args;              /* marks settings for CONFIG REWRITE */
    int depth;
};

/* Redis's report; where is "the configuration file X, at line N" or
 * "the command line, at --name". */
static int fatal(struct loader *ld, const char *where, int argc,
                 const char *const *argv, const char *why)
{
    size_t n = (size_t)snprintf(ld->err, ld->cap,
                                "*** FATAL CONFIG FILE ERROR (Goblin %s) "
                                "***\nReading %s\n>>> '",
                                GOBLIN_VERSION_STRING, where);

    for (int i = 0; i < argc && n < ld->cap; i++)
        n += (size_t)snprintf(ld->err + n, ld->cap - n,
                              i == 0 ? "%s" : " \"%s\"", argv[i]);
    if (n < ld->cap)
        snprintf(ld->err + n, ld->cap - n, "'\n%s", why);
    return GOBLIN_EINVAL;
}

static int load_path(struct loader *ld, const char *path);

/* The value of a directive: its one word, or its words joined. */
static bool join_value(const struct goblin__sdesc *d, int argc,
                       const char *const *argv, char *buf, size_t cap)
{
    size_t n = 0;

    if (argc < 2 || (argc != 2 && !(d->flags & GOBLIN__SF_MULTI_ARG)))
        return false;
    buf[0] = '\0';
    for (int i = 1; i < argc && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", i > 1 ? " " : "",
                              argv[i]);
    return n < cap;
}

/* Sets registry entry s from a directive; 0 or GOBLIN_EINVAL with *why. */
static int set_one(struct loader *ld, struct goblin__setting *s,
                   const char *value, const char **why)
{
    int rc;

    if (s->s.set == NULL) {
        *why = "can't set immutable config";
        return GOBLIN_EINVAL;
    }
    rc = s->s.set(s->s.ctx, (struct goblin_slice){value, strlen(value)},
                  why);
    if (rc == 0 && ld->from_args)
        s->changed = true;
    return rc == 0 ? 0 : GOBLIN_EINVAL;
}

/* "save" lines add up (see the top of the file). */
static const char *save_value(struct loader *ld, const char *value)
{
    size_t n;

    if (!ld->save_seen || value[0] == '\0')
        ld->save[0] = '\0';
    n = strlen(ld->save);
    if (value[0] != '\0')
        snprintf(ld->save + n, sizeof(ld->save) - n, "%s%s",
                 n > 0 ? " " : "", value);
    ld->save_seen = true;
    return ld->save;
}

/* "user NAME rule...": the user, as ACL SETUSER would make it. */
static int user_directive(struct loader *ld, int argc,
                          const char *const *argv, const char *where)
{
    struct goblin_slice rules[64];
    char why[512], text[600];
    const char *reason;
    int bad = 0, n = argc - 2 < 64 ? argc - 2 : 64;

    for (int i = 0; i < n; i++)
        rules[i] = (struct goblin_slice){argv[i + 2], strlen(argv[i + 2])};
    if (goblin__acl_setuser(ld->eng, (struct goblin_slice){argv[1],
                                                         strlen(argv[1])},
                            n, rules, why, sizeof(why), &bad) == 0)
        return 0;
    reason = strstr(why, "': ");
    snprintf(text, sizeof(text), "Error in user declaration '%s': %s",
             bad >= 0 && bad < n ? argv[bad + 2] : argv[1],
             reason != NULL ? reason + 3 : why + 4);
    return fatal(ld, where, argc, argv, text);
}

/* "rename-command NAME NEWNAME": calls know the command by NEWNAME
 * only; NEWNAME "" disables it (lookup.c). */
static int rename_directive(struct loader *ld, int argc,
                            const char *const *argv, const char *where)
{
    const char *why = "";

    if (goblin__command_rename(ld->eng, (struct goblin_slice){
                                   argv[1], strlen(argv[1])},
                               (struct goblin_slice){argv[2],
                                                     strlen(argv[2])},
                               &why) == 0)
        return 0;
    return fatal(ld, where, argc, argv, why);
}

/* loadmodule, sentinel: accepted and reported. */
static bool accepted_directive(struct loader *ld, int argc,
                               const char *const *argv)
{
    static const struct { const char *name; int min; const char *what; }
    known[] = {
        {"loadmodule", 2, "Goblin does not load Redis modules"},
        {"sentinel", 2, "Goblin has no sentinel mode"},
    };
    char text[1024];

    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        if (strcasecmp(argv[0], known[i].name) != 0 || argc < known[i].min)
            continue;
        if (ld->eng->cfg.log != NULL) {
            snprintf(text, sizeof(text), "Ignoring the directive '%s %s%s': "
                     "%s", argv[0], argv[1], argc > 2 ? " ..." : "",
                     known[i].what);
            ld->eng->cfg.log(ld->eng->cfg.log_ctx, GOBLIN_LOG_WARNING, text);
        }
        return true;
    }
    return false;
}

static int directive(struct loader *ld, int argc, const char *const *argv,
                     const char *where)
{
    char value[GOBLIN_SETTING_VALUE_MAX + 1];
    struct goblin_slice name = {argv[0], strlen(argv[0])};
    const struct goblin__setting *s = goblin__setting_find(ld->eng, name);
    const char *why = "Bad directive or wrong number of arguments";
    int rc;

    if (strcasecmp(argv[0], "include") == 0 && argc == 2) {
        if (ld->depth >= INCLUDE_DEPTH)
            return fatal(ld, where, argc, argv, "too many nested includes");
        return load_path(ld, argv[1]);
    }
    if (strcasecmp(argv[0], "user") == 0 && argc >= 2)
        return user_directive(ld, argc, argv, where);
    if (strcasecmp(argv[0], "rename-command") == 0 && argc == 3)
        return rename_directive(ld, argc, argv, where);
    if (accepted_directive(ld, argc, argv))
        return 0;
    if (s != NULL && (s->desc == NULL || !(s->desc->flags &
                                           GOBLIN__SF_HIDDEN) ||
                      s->s.set != NULL)) {
        if (s->desc != NULL ? !join_value(s->desc, argc, argv, value,
                                          sizeof(value))
                            : argc != 2) {
            return fatal(ld, where, argc, argv, "wrong number of arguments");
        }
        if (s->desc == NULL)
            snprintf(value, sizeof(value), "%s", argv[1]);
        if (s->desc != NULL && (s->desc->flags & GOBLIN__SF_APPEND))
            snprintf(value, sizeof(value), "%s", save_value(ld, value));
        if (set_one(ld, (struct goblin__setting *)s, value, &why) == 0)
            return 0;
        return fatal(ld, where, argc, argv, why);
    }
    if (ld->eng->hooks.directive != NULL) {
        rc = ld->eng->hooks.directive(ld->eng->hooks.ctx, argc, argv, &why);
        if (rc == 0)
            return 0;
        if (rc > 0)
            why = "Bad directive or wrong number of arguments";
    }
    return fatal(ld, where, argc, argv, why);
}

/* One line: split, lower-case the name, apply. */
static int line(struct loader *ld, const char *text, const char *where)
{
    struct goblin_resp_command cmd;
    const char **argv;
    char *copy, *line_nl;
    size_t len = strlen(text), used = 0;
    int64_t n;
    int rc;

    text += strspn(text, " \t\r\n");
    len = strlen(text);
    while (len > 0 && strchr(" \t\r\n", text[len - 1]) != NULL)
        len--;
    if (len == 0 || text[0] == '#')
        return 0;
    if ((line_nl = malloc(len + 2)) == NULL)
        return GOBLIN_ENOMEM;
    memcpy(line_nl, text, len);
    memcpy(line_nl + len, "\n", 2);
    goblin_resp_parser_reset(ld->parser);
    n = text[0] == '*' ? -1 : goblin_resp_parse(ld->parser, line_nl, len + 1,
                                                &cmd);
    if (n <= 0) {
        const char *word[1] = {line_nl};

        line_nl[len] = '\0';
        rc = fatal(ld, where, 1, word,
                   "Unbalanced quotes in configuration line");
        free(line_nl);
        return rc;
    }
    argv = malloc(cmd.argc * sizeof(*argv));
    for (size_t i = 0; i < cmd.argc; i++)
        used += cmd.argv[i].len + 1;
    copy = malloc(used + 1);
    if (argv == NULL || copy == NULL) {
        free(argv);
        free(copy);
        free(line_nl);
        return GOBLIN_ENOMEM;
    }
    used = 0;
    for (size_t i = 0; i < cmd.argc; i++) {   /* NUL-terminated copies */
        argv[i] = copy + used;
        memcpy(copy + used, cmd.argv[i].ptr, cmd.argv[i].len);
        used += cmd.argv[i].len;
        copy[used++] = '\0';
    }
    for (char *p = copy; *p != '\0'; p++)
        *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
    rc = cmd.argc == 0 ? 0 : directive(ld, (int)cmd.argc, argv, where);
    free(argv);
    free(copy);
    free(line_nl);
    return rc;
}

static int load_stream(struct loader *ld, FILE *f, const char *path)
{
    char *buf = NULL, where[PATH_MAX + 64];
    size_t cap = 0;
    int lineno = 0, rc = 0;

    while (rc == 0 && getline(&buf, &cap, f) >= 0) {
        lineno++;
        snprintf(where, sizeof(where), "the configuration file %s:%d, at "
                 "line %d", path, lineno, lineno);
        rc = line(ld, buf, where);
    }
    free(buf);
    return rc;
}

static int load_file(struct loader *ld, const char *path)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
    int rc;

    if (f == NULL) {
        snprintf(ld->err, ld->cap, "Fatal error, can't open config file "
                 "'%s': %s", path, strerror(errno));
        return GOBLIN_EINVAL;
    }
    ld->depth++;
    rc = load_stream(ld, f, strcmp(path, "-") == 0 ? "(stdin)" : path);
    ld->depth--;
    if (f != stdin)
        fclose(f);
    return rc;
}

/* A path, or every file a glob names ("include conf.d/PATTERN"). */
static int load_path(struct loader *ld, const char *path)
{
    glob_t g;
    int rc = 0;

    if (strpbrk(path, "*?[") == NULL)
        return load_file(ld, path);
    if (glob(path, 0, NULL, &g) != 0) {
        snprintf(ld->err, ld->cap, "Fatal error, can't open config file "
                 "'%s': no file matches", path);
        return GOBLIN_EINVAL;
    }
    for (size_t i = 0; i < g.gl_pathc && rc == 0; i++)
        rc = load_file(ld, g.gl_pathv[i]);
    globfree(&g);
    return rc;
}

static int loader_open(struct loader *ld, goblin_engine *eng, char *err,
                       size_t cap)
{
    memset(ld, 0, sizeof(*ld));
    ld->eng = eng;
    ld->err = cap > 0 ? err : (char[1]){0};
    ld->cap = cap > 0 ? cap : 1;
    ld->err[0] = '\0';
    return goblin_resp_parser_open(NULL, &ld->parser);
}

/* After everything is read: the ACL file the directives named. */
static int loader_finish(struct loader *ld, int rc)
{
    char path[PATH_MAX];

    goblin_resp_parser_close(ld->parser);
    if (rc != 0)
        return rc;
    if (goblin_engine_config_get(ld->eng, "aclfile", path, sizeof(path)) >
            0 &&
        (rc = goblin_engine_acl_file(ld->eng, path, ld->err, ld->cap)) < 0 &&
        rc != GOBLIN_ENOMEM)
        memmove(ld->err, ld->err + 4, strlen(ld->err + 4) + 1); /* "ERR " */
    return rc;
}

static int remember_file(goblin_engine *eng, const char *path)
{
    char *abs = strcmp(path, "-") == 0 ? NULL : realpath(path, NULL);
    size_t len = abs != NULL ? strlen(abs) : 0;
    char *copy = abs != NULL ? goblin__alloc(eng->st, len + 1) : NULL;

    if (abs != NULL && copy == NULL) {
        free(abs);
        return GOBLIN_ENOMEM;
    }
    if (copy != NULL)
        memcpy(copy, abs, len + 1);
    free(abs);
    if (eng->config_file != NULL)
        goblin__free(eng->st, eng->config_file, strlen(eng->config_file) + 1);
    eng->config_file = copy;
    return 0;
}

int goblin_engine_config_load(goblin_engine *eng, const char *path,
                              char *err, size_t cap)
{
    struct loader ld;
    int rc;

    if (eng == NULL || path == NULL)
        return GOBLIN_EINVAL;
    if ((rc = loader_open(&ld, eng, err, cap)) != 0)
        return rc;
    rc = remember_file(eng, path);
    if (rc == 0)
        rc = load_path(&ld, path);
    return loader_finish(&ld, rc);
}

int goblin_engine_config_args(goblin_engine *eng, int argc,
                              char *const *argv, char *err, size_t cap)
{
    struct loader ld;
    int i = 1, rc;

    if (eng == NULL || (argc > 0 && argv == NULL))
        return GOBLIN_EINVAL;
    if ((rc = loader_open(&ld, eng, err, cap)) != 0)
        return rc;
    if (argc > 1 && strncmp(argv[1], "--", 2) != 0) {
        rc = remember_file(eng, argv[1]);
        if (rc == 0)
            rc = load_path(&ld, argv[i]);
        i++;
    }
    ld.from_args = true;   /* and save lines go on adding up */
    while (rc == 0 && i < argc) {   /* "--name a b" up to the next "--" */
        const char **args = malloc((size_t)argc * sizeof(*args));
        char where[256];
        int n = 0;

        if (args == NULL) {
            rc = GOBLIN_ENOMEM;
            break;
        }
        if (strncmp(argv[i], "--", 2) != 0 || argv[i][2] == '\0') {
            snprintf(ld.err, ld.cap, "Unexpected argument '%s': options "
                     "are --name value...", argv[i]);
            free(args);
            rc = GOBLIN_EINVAL;
            break;
        }
        snprintf(where, sizeof(where), "the command line, at %.200s",
                 argv[i]);
        args[n++] = argv[i++] + 2;
        while (i < argc && strncmp(argv[i], "--", 2) != 0)
            args[n++] = argv[i++];
        rc = directive(&ld, n, args, where);
        free(args);
    }
    return loader_finish(&ld, rc);
}

const char *goblin_engine_config_file(const goblin_engine *eng)
{
    return eng != NULL ? eng->config_file : NULL;
}

void goblin_engine_config_hooks(goblin_engine *eng,
                                const struct goblin_config_hooks *hooks)
{
    if (eng == NULL)
        return;
    if (hooks != NULL)
        eng->hooks = *hooks;
    else
        memset(&eng->hooks, 0, sizeof(eng->hooks));
}
