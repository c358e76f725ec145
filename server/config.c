/* config.c - goblind's options, in Redis's shapes so habits carry over:
 *
 *     goblind [config-file] [--directive arg... ]...
 *
 * The config file holds one directive per line ("port 7000"; '#' starts a
 * comment line; words split and quoted as Redis's inline commands, by
 * libgoblin's RESP parser), then each "--name args" on the command line is
 * one more directive, so the command line overrides the file.
 *
 * The directives goblind owns are one table (options[]): the same entry
 * parses a directive, shows the value to CONFIG GET and, when `live`, takes
 * CONFIG SET. Every other directive is kept as a CONFIG SET command and run
 * on a local session once the engine is open (client-output-buffer-limit,
 * hz, ...); one the engine refuses too is a startup error naming the file
 * and line. A failed parse changes nothing.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>

#include <goblin/resp.h>

#include "goblind.h"

#define MAX_ARGS 64
#define VALUE_MAX 4096

enum kind { NUM, OCTAL, LEVEL, TEXT, LIST, YESNO };

struct option {
    const char *name;
    enum kind kind;
    size_t off;     /* of the field in struct goblind */
    long lo, hi;    /* NUM and OCTAL */
    bool live;      /* CONFIG SET may change it */
    bool setting;   /* registered (requirepass is the engine's) */
};

#define AT(field) offsetof(struct goblind, field)

static const struct option options[GOBLIND_NOPTIONS] = {
    {"port", NUM, AT(port), 0, 65535, false, true},
    {"bind", LIST, AT(bind), 0, 0, false, true},
    {"unixsocket", TEXT, AT(unixsocket), 0, 0, false, true},
    {"unixsocketperm", OCTAL, AT(unixsocketperm), 0, 0777, false, true},
    {"requirepass", TEXT, AT(requirepass), 0, 0, false, false},
    {"maxclients", NUM, AT(maxclients), 1, INT_MAX, true, true},
    {"timeout", NUM, AT(timeout), 0, INT_MAX, true, true},
    {"loglevel", LEVEL, AT(loglevel), 0, 3, true, true},
    {"logfile", TEXT, AT(logfile), 0, 0, false, true},
    {"sbe-tcp", YESNO, AT(sbe_tcp), 0, 0, false, true},
    {"sbe-unixsocket", YESNO, AT(sbe_unixsocket), 0, 0, false, true},
    {"sbe-ring", YESNO, AT(sbe_ring), 0, 0, false, true},
    {"socket-spin-us", NUM, AT(socket_spin_us), 0, 1000000, true, true},
    {"aclfile", TEXT, AT(aclfile), 0, 0, false, true},
    {"protected-mode", YESNO, AT(protected_mode), 0, 0, true, true},
    {"tls-port", NUM, AT(tls_port), 0, 65535, false, true},
    {"tls-cert-file", TEXT, AT(tls_cert_file), 0, 0, false, true},
    {"tls-key-file", TEXT, AT(tls_key_file), 0, 0, false, true},
    {"tls-ca-cert-file", TEXT, AT(tls_ca_cert_file), 0, 0, false, true},
    {"tls-auth-clients", TEXT, AT(tls_auth_clients), 0, 0, false, true},
    {"daemonize", YESNO, AT(daemonize), 0, 0, false, true},
    {"pidfile", TEXT, AT(pidfile), 0, 0, false, true},
    {"import-rdb", TEXT, AT(import_rdb), 0, 0, false, false},
};

/* Redis leaves normal clients' output unlimited ("normal 0 0 0"), so one
 * client that sends requests and never reads replies can make the server
 * grow without bound. goblind's default is a hard limit of 256 MiB; a
 * client-output-buffer-limit directive replaces it. */
static const char *const default_output_limit[] = {
    "client-output-buffer-limit", "normal", "268435456", "0", "0",
};

static int keep_for_engine(struct goblind *g, int argc,
                           const char *const *argv, const char *origin);

void goblind_defaults(struct goblind *g)
{
    memset(g, 0, sizeof(*g));
    g->port = 6379;
    g->bind[0] = strdup("127.0.0.1");
    g->bind[1] = strdup("::1");
    g->nbind = 2;
    g->bind_default = true;
    g->unixsocketperm = 0700;
    g->maxclients = 10000;
    g->socket_spin_us = 50;
    g->loglevel = GOBLIN_LOG_NOTICE;
    g->sbe_tcp = g->sbe_unixsocket = g->sbe_ring = true;
    g->protected_mode = true;
    g->tls_auth_clients = strdup("yes");
    g->epfd = g->sigfd = -1;
    keep_for_engine(g, 5, default_output_limit, "default");
}

static void free_bind(struct goblind *g)
{
    for (int i = 0; i < g->nbind; i++)
        free(g->bind[i]);
    g->nbind = 0;
}

void goblind_free_options(struct goblind *g)
{
    free_bind(g);
    free(g->unixsocket);
    free(g->requirepass);
    free(g->aclfile);
    free(g->tls_cert_file);
    free(g->tls_key_file);
    free(g->tls_ca_cert_file);
    free(g->tls_auth_clients);
    free(g->logfile);
    free(g->pidfile);
    free(g->import_rdb);
    free(g->save);
    free(g->config_file);
    for (int i = 0; i < g->nengine; i++)
        free(g->engine_origins[i]);
    free(g->engine_origins);
    free(g->engine_ends);
    goblin_buf_free(&g->engine_cmds);
}

/* Appends CONFIG SET name "arg arg..." for the engine. */
static int keep_for_engine(struct goblind *g, int argc,
                           const char *const *argv, const char *origin)
{
    char value[VALUE_MAX] = "";
    struct goblin_slice cmd[4] = {{"CONFIG", 6}, {"SET", 3}};
    size_t vlen = 0, *ends;
    char **origins;

    for (int i = 1; i < argc && vlen < sizeof(value); i++)
        vlen += (size_t)snprintf(value + vlen, sizeof(value) - vlen,
                                 "%s%s", i > 1 ? " " : "", argv[i]);
    cmd[2] = (struct goblin_slice){argv[0], strlen(argv[0])};
    cmd[3] = (struct goblin_slice){value, strlen(value)};
    ends = realloc(g->engine_ends, sizeof(*ends) * (size_t)(g->nengine + 1));
    if (ends != NULL)
        g->engine_ends = ends;
    origins = realloc(g->engine_origins,
                      sizeof(*origins) * (size_t)(g->nengine + 1));
    if (origins != NULL)
        g->engine_origins = origins;
    if (ends == NULL || origins == NULL || vlen >= sizeof(value) ||
        goblin_resp_command_write(&g->engine_cmds, 4, cmd) < 0)
        return -1;
    ends[g->nengine] = g->engine_cmds.len;
    origins[g->nengine++] = strdup(origin);
    return 0;
}

/* "save" directives add up, as in Redis's config file: "save 3600 1" and
 * "save 300 100" on two lines mean both; save "" means none. The engine
 * gets them as one CONFIG SET save once they are all read. */
static int add_save(struct goblind *g, int argc, const char *const *argv)
{
    size_t len = g->save != NULL ? strlen(g->save) : 0;
    char *s;

    if (argc == 2 && argv[1][0] == '\0') {
        free(g->save);
        g->save = strdup("");
        return g->save != NULL ? 0 : -1;
    }
    for (int i = 1; i < argc; i++)
        len += strlen(argv[i]) + 1;
    if (argc < 2 || (s = realloc(g->save, len + 1)) == NULL)
        return -1;
    if (g->save == NULL)
        s[0] = '\0';
    g->save = s;
    for (int i = 1; i < argc; i++) {
        if (s[0] != '\0')
            strcat(s, " ");
        strcat(s, argv[i]);
    }
    return 0;
}

static const struct option *find_option(const char *name)
{
    for (int i = 0; i < GOBLIND_NOPTIONS; i++)
        if (strcasecmp(options[i].name, name) == 0)
            return &options[i];
    return NULL;
}

/* Redis's texts for CONFIG SET; why points into g, valid until the next
 * parse. */
static int parse_num(struct goblind *g, const struct option *o,
                     const char *text, long *out, const char **why)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(text, &end, o->kind == OCTAL ? 8 : 10);
    if (errno != 0 || end == text || *end != '\0') {
        *why = "argument couldn't be parsed into an integer";
        return -1;
    }
    if (v < o->lo || v > o->hi) {
        snprintf(g->why, sizeof(g->why), o->kind == OCTAL ?
                 "argument must be between %lo and %lo inclusive" :
                 "argument must be between %ld and %ld inclusive",
                 o->lo, o->hi);
        *why = g->why;
        return -1;
    }
    *out = v;
    return 0;
}

static int set_list(struct goblind *g, int argc, const char *const *argv)
{
    if (argc < 2 || argc - 1 > GOBLIND_MAX_BIND)
        return -1;
    free_bind(g);
    for (int i = 1; i < argc; i++)
        g->bind[g->nbind++] = strdup(argv[i]);
    g->bind_default = false;
    return 0;
}

/* Redis's boolean directives: yes or no, in any case. */
static int parse_yesno(const char *text, bool *out, const char **why)
{
    if (strcasecmp(text, "yes") != 0 && strcasecmp(text, "no") != 0) {
        *why = "argument must be 'yes' or 'no'";
        return -1;
    }
    *out = strcasecmp(text, "yes") == 0;
    return 0;
}

/* Applies option o from argv (argv[0] its name); 0, or -1 with *why. */
static int option_parse(struct goblind *g, const struct option *o, int argc,
                        const char *const *argv, const char **why)
{
    void *field = (char *)g + o->off;
    long v;

    *why = "wrong number of arguments";
    if (o->kind == LIST)
        return set_list(g, argc, argv);
    if (argc != 2)
        return -1;
    if (o->kind == YESNO)
        return parse_yesno(argv[1], (bool *)field, why);
    if (o->kind == TEXT) {
        free(*(char **)field);
        *(char **)field = argv[1][0] != '\0' ? strdup(argv[1]) : NULL;
        return 0;
    }
    if (o->kind == LEVEL) {
        v = goblind_loglevel_parse(argv[1]);
        *why = "argument(s) must be one of the following: debug, verbose, "
               "notice, warning";
    } else if (parse_num(g, o, argv[1], &v, why) < 0) {
        return -1;
    }
    if (v < 0)
        return -1;
    *(long *)field = v;
    return 0;
}

/* One directive from the file or the command line; -1 after printing. */
static int apply(struct goblind *g, int argc, const char *const *argv,
                 const char *origin)
{
    const struct option *o = find_option(argv[0]);
    const char *why = "can't keep the directive";
    int ring = o == NULL ? goblind_ring_option(g, argc, argv, &why) : 1;

    if (ring == 0)
        return 0;
    if (o == NULL && strcasecmp(argv[0], "save") == 0) {
        why = "wrong number of arguments";
        if (add_save(g, argc, argv) == 0)
            return 0;
        ring = -1;
    }
    if (ring > 0 && o == NULL && keep_for_engine(g, argc, argv, origin) == 0)
        return 0;
    if (ring > 0 && o != NULL && option_parse(g, o, argc, argv, &why) == 0)
        return 0;
    fprintf(stderr, "goblind: %s: bad directive '%s': %s\n", origin,
            argv[0], why);
    return -1;
}

/* Splits a config line with Redis's inline-command rules. */
static int apply_line(struct goblind *g, goblin_resp_parser *p,
                      const char *line, const char *origin)
{
    char text[VALUE_MAX + 2], args[VALUE_MAX + MAX_ARGS];
    const char *argv[MAX_ARGS];
    struct goblin_resp_command cmd;
    size_t used = 0;
    int64_t n;

    line += strspn(line, " \t");
    if (line[0] == '#' || line[0] == '\0')
        return 0;
    goblin_resp_parser_reset(p);
    n = snprintf(text, sizeof(text), "%s\n", line);
    if (n < (int64_t)sizeof(text))
        n = goblin_resp_parse(p, text, (size_t)n, &cmd);
    if (n <= 0 || cmd.argc > MAX_ARGS) {
        fprintf(stderr, "goblind: %s: can't parse '%s': %s\n", origin, line,
                n < 0 ? goblin_resp_parser_error(p) : "too long");
        return -1;
    }
    for (size_t i = 0; i < cmd.argc; i++) {   /* NUL-terminated copies */
        argv[i] = args + used;
        memcpy(args + used, cmd.argv[i].ptr, cmd.argv[i].len);
        used += cmd.argv[i].len;
        args[used++] = '\0';
    }
    return apply(g, (int)cmd.argc, argv, origin);
}

static int read_config_file(struct goblind *g, const char *path)
{
    char line[VALUE_MAX], origin[PATH_MAX + 32];
    goblin_resp_parser *p;
    FILE *f = fopen(path, "re");
    int lineno = 0, rc = 0;

    if (f == NULL || goblin_resp_parser_open(NULL, &p) < 0) {
        fprintf(stderr, "goblind: can't open config file '%s': %s\n", path,
                strerror(errno));
        if (f != NULL)
            fclose(f);
        return -1;
    }
    g->config_file = realpath(path, NULL);
    while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        snprintf(origin, sizeof(origin), "%s:%d", path, lineno);
        rc = apply_line(g, p, line, origin);
    }
    goblin_resp_parser_close(p);
    fclose(f);
    return rc;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: goblind [config-file] [--directive value...]...\n"
            "  --port N             TCP port (default 6379; 0 = no TCP)\n"
            "  --bind ADDR...       addresses (default 127.0.0.1 ::1)\n"
            "  --unixsocket PATH    also listen on a Unix socket\n"
            "  --unixsocketperm OCT its mode (default 700)\n"
            "  --requirepass PASS   clients must AUTH first\n"
            "  --aclfile PATH       ACL users (\"user NAME rules\" lines)\n"
            "  --protected-mode yes|no  without a default password, refuse\n"
            "                       non-loopback clients (default yes)\n"
            "  --tls-port N         also serve TLS on this port (default 0)\n"
            "  --tls-cert-file PATH --tls-key-file PATH  its certificate\n"
            "  --tls-ca-cert-file PATH  CAs for client certificates\n"
            "  --tls-auth-clients yes|no|optional  (default yes)\n"
            "  --maxclients N       default 10000\n"
            "  --timeout SECONDS    close idle clients (default 0 = never)\n"
            "  --loglevel LEVEL     debug, verbose, notice or warning\n"
            "  --logfile PATH       default: standard output\n"
            "  --daemonize yes|no   run in the background (default no)\n"
            "  --pidfile PATH       write the process id there\n"
            "  --save \"SEC CHANGES...\"  snapshot policies (default none)\n"
            "  --dir PATH           where the snapshot lives (default .)\n"
            "  --dbfilename NAME    the snapshot file (default dump.goblin)\n"
            "  --import-rdb FILE    start with the keys of a Redis dump.rdb\n"
            "  --sbe-tcp yes|no     the SBE magic works on TCP (default yes)\n"
            "  --sbe-unixsocket yes|no  on the Unix socket (default yes)\n"
            "  --sbe-ring yes|no    on rings (default yes)\n"
            "  --socket-spin-us N   poll sockets this long after traffic\n"
            "                       before sleeping (default 50; 0: off)\n"
            "  --ring PATH SIZE     a shared-memory ring (repeatable)\n"
            "  --ring-cpus LIST     a pinned ring thread per CPU, e.g. 2,3\n"
            "  --ring-idle MODE     spin or backoff (default backoff)\n"
            "  --ring-spin-us N     backoff spins this long (default 50)\n"
            "  --ring-perm OCT      ring file mode (default 600)\n"
            "Other directives (hz, client-output-buffer-limit, ...) go to\n"
            "CONFIG SET. See goblind(1).\n");
}

int goblind_parse_args(struct goblind *g, int argc, char **argv)
{
    int i = 1;

    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage();
        return 1;
    }
    if (argc > 1 && (!strcmp(argv[1], "-v") ||
                     !strcmp(argv[1], "--version"))) {
        printf("goblind v=%s\n", GOBLIN_VERSION_STRING);
        return 1;
    }
    if (argc > 1 && strncmp(argv[1], "--", 2) != 0 &&
        read_config_file(g, argv[i++]) < 0)
        return -1;
    while (i < argc) {   /* "--name a b" up to the next "--" */
        const char *args[MAX_ARGS];
        char origin[128];
        int n = 0;

        if (strncmp(argv[i], "--", 2) != 0 || argv[i][2] == '\0') {
            fprintf(stderr, "goblind: unexpected argument '%s'\n", argv[i]);
            usage();
            return -1;
        }
        snprintf(origin, sizeof(origin), "command line (%s)", argv[i]);
        args[n++] = argv[i++] + 2;
        while (i < argc && strncmp(argv[i], "--", 2) != 0 && n < MAX_ARGS)
            args[n++] = argv[i++];
        if (apply(g, n, args, origin) < 0)
            return -1;
    }
    if (g->save != NULL) {
        const char *args[2] = {"save", g->save};

        return keep_for_engine(g, 2, args, "save directives");
    }
    return 0;
}

/* Runs the kept CONFIG SET commands on a local session; the first one the
 * engine refuses is a startup error. */
int goblind_apply_engine_directives(struct goblind *g)
{
    struct goblin_session_info info = {GOBLIN_TRANSPORT_LOCAL, "config",
                                       "config", -1, NULL};
    struct goblin_slice auth[2] = {{"AUTH", 4}, {g->requirepass, 0}};
    struct goblin_buf buf = {0};
    goblin_session *s;
    size_t start = 0, len;
    int rc = 0;

    if (goblin_session_open(g->engine, &info, &s) < 0)
        return -1;
    if (g->requirepass != NULL) {
        auth[1].len = strlen(g->requirepass);
        goblin_resp_command_write(&buf, 2, auth);
        goblin_session_feed(s, buf.data, buf.len);
        goblin_buf_free(&buf);
    }
    for (int i = 0; i < g->nengine && rc == 0; i++) {
        const char *out, *end;

        goblin_session_output(s, &len);
        goblin_session_output_consume(s, len);
        goblin_session_feed(s, g->engine_cmds.data + start,
                            g->engine_ends[i] - start);
        start = g->engine_ends[i];
        out = goblin_session_output(s, &len);
        if (len > 0 && out[0] == '+')
            continue;
        end = len > 0 ? memchr(out, '\r', len) : NULL;
        fprintf(stderr, "goblind: %s: %.*s\n", g->engine_origins[i],
                end != NULL ? (int)(end - out - 1) : 8,
                end != NULL ? out + 1 : "no reply");
        rc = -1;
    }
    goblin_session_close(s);
    return rc;
}

/* ---- settings for CONFIG GET / CONFIG SET ---- */

static int setting_get(void *ctx, char *buf, size_t cap)
{
    const struct goblind_setting_ref *ref = ctx;
    const struct option *o = &options[ref->index];
    const void *field = (const char *)ref->g + o->off;
    char text[GOBLIN_SETTING_VALUE_MAX + 1] = "";
    size_t len = 0;

    if (o->kind == NUM || o->kind == OCTAL)
        snprintf(text, sizeof(text), o->kind == NUM ? "%ld" : "%lo",
                 *(const long *)field);
    else if (o->kind == LEVEL)
        snprintf(text, sizeof(text), "%s",
                 goblind_loglevel_name((int)*(const long *)field));
    else if (o->kind == YESNO)
        snprintf(text, sizeof(text), "%s",
                 *(const bool *)field ? "yes" : "no");
    else if (o->kind == TEXT && *(char *const *)field != NULL)
        snprintf(text, sizeof(text), "%s", *(char *const *)field);
    for (int i = 0; o->kind == LIST && i < ref->g->nbind; i++)
        len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s",
                                i > 0 ? " " : "", ref->g->bind[i]);
    len = strlen(text);
    len = len < cap ? len : cap;
    memcpy(buf, text, len);
    return (int)len;
}

/* Raises the open-files limit so maxclients connections fit, as Redis
 * does. When the hard limit is lower, maxclients comes down to what fits
 * (32 descriptors stay for listeners, rings, the log...), so extra
 * clients get "max number of clients reached" instead of waiting in the
 * backlog of a server that cannot accept them. */
static void fit_fd_limit(struct goblind *g)
{
    struct rlimit rl;
    rlim_t want = (rlim_t)g->maxclients + 32;
    long fit;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
        return;
    rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
        return;
    fit = rl.rlim_cur > 33 ? (long)(rl.rlim_cur - 32) : 1;
    goblind_log(g, GOBLIN_LOG_WARNING, "You requested maxclients of %ld "
                "requiring at least %lu max file descriptors; the hard "
                "limit allows %lu.", g->maxclients, (unsigned long)want,
                (unsigned long)rl.rlim_cur);
    goblind_log(g, GOBLIN_LOG_WARNING, "Current maximum open files is %lu. "
                "maxclients has been reduced to %ld to compensate for low "
                "ulimit. If you need higher maxclients increase "
                "'ulimit -n'.", (unsigned long)rl.rlim_cur, fit);
    g->maxclients = fit;
}

static int setting_set(void *ctx, struct goblin_slice v, const char **why)
{
    const struct goblind_setting_ref *ref = ctx;
    const struct option *o = &options[ref->index];
    char text[GOBLIN_SETTING_VALUE_MAX + 1];
    const char *argv[2] = {o->name, text};
    long old_maxclients, wanted;

    *why = "argument too long";
    if (v.len >= sizeof(text))
        return GOBLIN_EINVAL;
    memcpy(text, v.ptr, v.len);
    text[v.len] = '\0';
    old_maxclients = ref->g->maxclients;
    if (option_parse(ref->g, o, 2, argv, why) < 0)
        return GOBLIN_EINVAL;
    if (o->off != AT(maxclients))
        return 0;
    wanted = ref->g->maxclients;
    fit_fd_limit(ref->g);
    if (ref->g->maxclients == wanted)
        return 0;
    /* Redis's text; the old value stays, as in Redis. */
    snprintf(ref->g->why, sizeof(ref->g->why), "The operating system is "
             "not able to handle the specified number of clients, try with "
             "%ld", ref->g->maxclients);
    ref->g->maxclients = old_maxclients;
    *why = ref->g->why;
    return GOBLIN_EINVAL;
}

int goblind_register_settings(struct goblind *g)
{
    fit_fd_limit(g);
    for (int i = 0; i < GOBLIND_NOPTIONS; i++) {
        struct goblin_setting s = {options[i].name, NULL, setting_get,
                                   options[i].live ? setting_set : NULL,
                                   &g->setting_refs[i]};
        int rc;

        g->setting_refs[i] = (struct goblind_setting_ref){g, i};
        if (options[i].setting &&
            (rc = goblin_engine_setting_add(g->engine, &s)) < 0)
            return rc;
    }
    return 0;
}
