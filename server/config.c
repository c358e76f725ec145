/* config.c - goblind's options, in Redis's shapes so habits carry over:
 *
 *     goblind [config-file] [--directive arg... ]...
 *
 * The config file holds one directive per line ("port 7000", '#' starts a
 * comment line, arguments split and quoted as Redis does), then each
 * "--name args" on the command line is one more directive, so the command
 * line overrides the file. Directives goblind owns (port, bind, unixsocket,
 * unixsocketperm, requirepass, maxclients, timeout, loglevel, logfile) are
 * applied here; every other one is handed to the engine as CONFIG SET once
 * it is open (client-output-buffer-limit, hz, ...), and one the engine does
 * not know either is a startup error naming the file and line.
 *
 * goblind's settings are registered with the engine, so CONFIG GET shows
 * them all and CONFIG SET changes those that can change while running
 * (maxclients, timeout, loglevel).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>

#include "goblind.h"

#define MAX_ARGS 64

static int keep_for_engine(struct goblind *g, int argc, char **argv,
                           const char *origin);

/* Redis leaves normal clients' output unlimited ("normal 0 0 0"), so one
 * client that sends requests and never reads replies can make the server
 * grow without bound. goblind's default is a hard limit of 256 MiB; a
 * client-output-buffer-limit directive replaces it. */
static char *const default_output_limit[] = {
    "client-output-buffer-limit", "normal", "268435456", "0", "0",
};

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
    g->loglevel = GOBLIN_LOG_NOTICE;
    g->epfd = g->sigfd = -1;
    keep_for_engine(g, 5, (char **)default_output_limit, "default");
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
    free(g->logfile);
    free(g->config_file);
    for (int i = 0; i < g->nengine; i++) {
        free(g->engine_directives[i]);
        free(g->engine_origins[i]);
    }
    free(g->engine_directives);
    free(g->engine_origins);
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* One argument of a config line at *pp into out, as Redis's sdssplitargs:
 * "double quotes" know \n \r \t \b \a \xHH escapes, 'single quotes' only
 * \', and a closing quote must end the argument. Returns 0 or -1. */
static int split_one(const char **pp, char *out)
{
    const char *p = *pp;
    char q = (*p == '"' || *p == '\'') ? *p++ : 0;

    for (;; p++) {
        if (q == 0 && (*p == '\0' || *p == ' ' || *p == '\t' ||
                       *p == '\r' || *p == '\n'))
            break;
        if (*p == '\0')
            return -1; /* unbalanced quotes */
        if (*p == q) {
            p++;
            if (*p != '\0' && *p != ' ' && *p != '\t' && *p != '\r' &&
                *p != '\n')
                return -1;
            break;
        }
        if (q == '"' && p[0] == '\\' && p[1] == 'x' && hexval(p[2]) >= 0 &&
            hexval(p[3]) >= 0) {
            *out++ = (char)(hexval(p[2]) * 16 + hexval(p[3]));
            p += 3;
        } else if (q != 0 && p[0] == '\\' && p[1] != '\0' &&
                   (q == '"' || p[1] == '\'')) {
            const char *from = "nrtba", *to = "\n\r\t\b\a";
            const char *e = q == '"' ? strchr(from, p[1]) : NULL;
            *out++ = e != NULL ? to[e - from] : p[1];
            p++;
        } else {
            *out++ = *p;
        }
    }
    *out = '\0';
    *pp = p;
    return 0;
}

/* Splits line in place-free fashion into argv (pointers into buf, which
 * must be as long as line). Returns the count, or -1. */
static int split_line(const char *line, char *buf, char **argv)
{
    int argc = 0;

    for (;;) {
        while (*line == ' ' || *line == '\t' || *line == '\r' ||
               *line == '\n')
            line++;
        if (*line == '\0')
            return argc;
        if (argc == MAX_ARGS || split_one(&line, buf) < 0)
            return -1;
        argv[argc++] = buf;
        buf += strlen(buf) + 1;
    }
}

static int parse_long(const char *s, long lo, long hi, int base, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, base);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static void set_string(char **field, const char *value)
{
    free(*field);
    *field = value[0] != '\0' ? strdup(value) : NULL;
}

/* Keeps a directive for the engine as the RESP command
 * CONFIG SET name "arg arg...". */
static int keep_for_engine(struct goblind *g, int argc, char **argv,
                           const char *origin)
{
    char value[4096] = "", *cmd, **d, **o;
    size_t vlen = 0, nlen = strlen(argv[0]), cap;

    for (int i = 1; i < argc; i++)
        vlen += (size_t)snprintf(value + vlen, sizeof(value) - vlen,
                                 "%s%s", i > 1 ? " " : "", argv[i]);
    if (vlen >= sizeof(value))
        return -1;
    cap = nlen + vlen + 64;
    cmd = malloc(cap);
    d = realloc(g->engine_directives, sizeof(*d) * (size_t)(g->nengine + 1));
    if (d != NULL)
        g->engine_directives = d;
    o = realloc(g->engine_origins, sizeof(*o) * (size_t)(g->nengine + 1));
    if (o != NULL)
        g->engine_origins = o;
    if (cmd == NULL || d == NULL || o == NULL) {
        free(cmd);
        return -1;
    }
    snprintf(cmd, cap, "*4\r\n$6\r\nCONFIG\r\n$3\r\nSET\r\n$%zu\r\n%s\r\n"
             "$%zu\r\n%s\r\n", nlen, argv[0], vlen, value);
    d[g->nengine] = cmd;
    o[g->nengine++] = strdup(origin);
    return 0;
}

static int set_bind(struct goblind *g, int argc, char **argv)
{
    if (argc < 2 || argc - 1 > GOBLIND_MAX_BIND)
        return -1;
    free_bind(g);
    for (int i = 1; i < argc; i++)
        g->bind[g->nbind++] = strdup(argv[i]);
    g->bind_default = false;
    return 0;
}

/* Applies one directive; returns 0, or -1 with *why set. */
static int apply(struct goblind *g, int argc, char **argv, const char *origin,
                 const char **why)
{
    const char *name = argv[0], *v = argv[1];
    long n;

    *why = "wrong number of arguments";
    if (strcasecmp(name, "bind") == 0)
        return set_bind(g, argc, argv);
    if (strcasecmp(name, "port") != 0 && strcasecmp(name, "unixsocket") &&
        strcasecmp(name, "unixsocketperm") && strcasecmp(name, "requirepass")
        && strcasecmp(name, "maxclients") && strcasecmp(name, "timeout") &&
        strcasecmp(name, "loglevel") && strcasecmp(name, "logfile"))
        return keep_for_engine(g, argc, argv, origin);
    if (argc != 2)
        return -1;
    *why = "invalid value";
    if (strcasecmp(name, "port") == 0) {
        if (parse_long(v, 0, 65535, 10, &n) < 0)
            return -1;
        g->port = (int)n;
    } else if (strcasecmp(name, "unixsocketperm") == 0) {
        if (parse_long(v, 0, 0777, 8, &n) < 0)
            return -1;
        g->unixsocketperm = (unsigned)n;
    } else if (strcasecmp(name, "maxclients") == 0) {
        if (parse_long(v, 1, INT_MAX, 10, &n) < 0)
            return -1;
        g->maxclients = n;
    } else if (strcasecmp(name, "timeout") == 0) {
        if (parse_long(v, 0, INT_MAX, 10, &n) < 0)
            return -1;
        g->timeout = n;
    } else if (strcasecmp(name, "loglevel") == 0) {
        if ((g->loglevel = goblind_loglevel_parse(v)) < 0)
            return -1;
    } else if (strcasecmp(name, "unixsocket") == 0) {
        set_string(&g->unixsocket, v);
    } else if (strcasecmp(name, "logfile") == 0) {
        set_string(&g->logfile, v);
    } else {
        set_string(&g->requirepass, v);
    }
    return 0;
}

static int apply_line(struct goblind *g, const char *line, const char *origin)
{
    char buf[8192], *argv[MAX_ARGS];
    const char *why = "unbalanced quotes or too many arguments";
    int argc;

    if (strlen(line) >= sizeof(buf))
        argc = -1;
    else
        argc = split_line(line, buf, argv);
    if (argc == 0 || (argc > 0 && argv[0][0] == '#'))
        return 0;
    if (argc > 0 && apply(g, argc, argv, origin, &why) == 0)
        return 0;
    fprintf(stderr, "goblind: %s: bad directive '%s': %s\n", origin, line,
            why);
    return -1;
}

static int read_config_file(struct goblind *g, const char *path)
{
    char line[8192], origin[PATH_MAX + 32];
    FILE *f = fopen(path, "re");
    int lineno = 0, rc = 0;

    if (f == NULL) {
        fprintf(stderr, "goblind: can't open config file '%s': %s\n", path,
                strerror(errno));
        return -1;
    }
    g->config_file = realpath(path, NULL);
    while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        snprintf(origin, sizeof(origin), "%s:%d", path, lineno);
        rc = apply_line(g, line, origin);
    }
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
            "  --maxclients N       default 10000\n"
            "  --timeout SECONDS    close idle clients (default 0 = never)\n"
            "  --loglevel LEVEL     debug, verbose, notice or warning\n"
            "  --logfile PATH       default: standard output\n"
            "Other directives (hz, client-output-buffer-limit, ...) are\n"
            "passed to CONFIG SET. See goblind(1).\n");
}

/* Builds "--name a b" into one directive and applies it; returns how many
 * argv entries it used, or -1. */
static int apply_option(struct goblind *g, int argc, char **argv, int i)
{
    char *args[MAX_ARGS], origin[256];
    const char *why = "too many arguments";
    int n = 0, j = i;

    args[n++] = argv[j++] + 2;
    while (j < argc && strncmp(argv[j], "--", 2) != 0 && n < MAX_ARGS)
        args[n++] = argv[j++];
    snprintf(origin, sizeof(origin), "command line (--%s)", args[0]);
    if ((j == argc || strncmp(argv[j], "--", 2) == 0) &&
        apply(g, n, args, origin, &why) == 0)
        return j - i;
    fprintf(stderr, "goblind: %s: %s\n", origin, why);
    return -1;
}

int goblind_parse_args(struct goblind *g, int argc, char **argv)
{
    int i = 1;

    if (argc > 1 && (strcmp(argv[1], "-h") == 0 ||
                     strcmp(argv[1], "--help") == 0)) {
        usage();
        return 1;
    }
    if (argc > 1 && (strcmp(argv[1], "-v") == 0 ||
                     strcmp(argv[1], "--version") == 0)) {
        printf("goblind v=%s\n", GOBLIN_VERSION_STRING);
        return 1;
    }
    if (argc > 1 && strncmp(argv[1], "--", 2) != 0) {
        if (read_config_file(g, argv[1]) < 0)
            return -1;
        i = 2;
    }
    while (i < argc) {
        int used;

        if (strncmp(argv[i], "--", 2) != 0 || argv[i][2] == '\0') {
            fprintf(stderr, "goblind: unexpected argument '%s'\n", argv[i]);
            usage();
            return -1;
        }
        if ((used = apply_option(g, argc, argv, i)) < 0)
            return -1;
        i += used;
    }
    return 0;
}

/* Sends the directives goblind does not know to the engine as CONFIG SET
 * on a local session; the first one refused is a startup error. */
int goblind_apply_engine_directives(struct goblind *g)
{
    struct goblin_session_info info = {GOBLIN_TRANSPORT_LOCAL, "config",
                                       "config", -1, NULL};
    goblin_session *s;
    int rc = 0;

    if (g->nengine == 0)
        return 0;
    if (goblin_session_open(g->engine, &info, &s) < 0)
        return -1;
    if (g->requirepass != NULL) {
        char auth[1024];
        int n = snprintf(auth, sizeof(auth), "*2\r\n$4\r\nAUTH\r\n$%zu\r\n"
                         "%s\r\n", strlen(g->requirepass), g->requirepass);
        goblin_session_feed(s, auth, (size_t)n);
    }
    for (int i = 0; i < g->nengine && rc == 0; i++) {
        const char *d = g->engine_directives[i], *out, *end;
        size_t len;

        goblin_session_output(s, &len);
        goblin_session_output_consume(s, len);
        goblin_session_feed(s, d, strlen(d));
        out = goblin_session_output(s, &len);
        if (len > 0 && out[0] == '+')
            continue;
        end = len > 0 ? memchr(out, '\r', len) : NULL;
        fprintf(stderr, "goblind: %s: %.*s\n", g->engine_origins[i],
                end != NULL ? (int)(end - out - 1) : 14,
                end != NULL ? out + 1 : "no reply");
        rc = -1;
    }
    goblin_session_close(s);
    return rc;
}

/* ---- settings for CONFIG GET / CONFIG SET ---- */

static int put(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int put(char *buf, size_t cap, const char *fmt, ...)
{
    char tmp[GOBLIN_SETTING_VALUE_MAX + 1];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n > cap)
        n = (int)cap;
    if ((size_t)n >= sizeof(tmp))
        n = (int)sizeof(tmp) - 1;
    memcpy(buf, tmp, (size_t)n);
    return n;
}

static int get_port(void *ctx, char *buf, size_t cap)
{
    return put(buf, cap, "%d", ((struct goblind *)ctx)->port);
}

static int get_bind(void *ctx, char *buf, size_t cap)
{
    struct goblind *g = ctx;
    char text[GOBLIN_SETTING_VALUE_MAX] = "";
    size_t len = 0;

    for (int i = 0; i < g->nbind && len < sizeof(text); i++)
        len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s",
                                i > 0 ? " " : "", g->bind[i]);
    return put(buf, cap, "%s", text);
}

static int get_unixsocket(void *ctx, char *buf, size_t cap)
{
    const char *s = ((struct goblind *)ctx)->unixsocket;
    return put(buf, cap, "%s", s != NULL ? s : "");
}

static int get_unixsocketperm(void *ctx, char *buf, size_t cap)
{
    return put(buf, cap, "%o", ((struct goblind *)ctx)->unixsocketperm);
}

static int get_logfile(void *ctx, char *buf, size_t cap)
{
    const char *s = ((struct goblind *)ctx)->logfile;
    return put(buf, cap, "%s", s != NULL ? s : "");
}

static int get_maxclients(void *ctx, char *buf, size_t cap)
{
    return put(buf, cap, "%ld", ((struct goblind *)ctx)->maxclients);
}

static int get_timeout(void *ctx, char *buf, size_t cap)
{
    return put(buf, cap, "%ld", ((struct goblind *)ctx)->timeout);
}

static int get_loglevel(void *ctx, char *buf, size_t cap)
{
    int level = ((struct goblind *)ctx)->loglevel;
    return put(buf, cap, "%s", goblind_loglevel_name(level));
}

/* Parses an integer setting value in [lo, hi] with Redis's texts. */
static int slice_long(struct goblin_slice v, long lo, long hi, long *out,
                      const char **why)
{
    char text[32];
    long n;

    *why = "argument couldn't be parsed into an integer";
    if (v.len == 0 || v.len >= sizeof(text))
        return GOBLIN_EINVAL;
    memcpy(text, v.ptr, v.len);
    text[v.len] = '\0';
    if (parse_long(text, LONG_MIN, LONG_MAX, 10, &n) < 0)
        return GOBLIN_EINVAL;
    if (n < lo || n > hi) {
        *why = lo == 0 ? "argument must be between 0 and 2147483647 inclusive"
                       : "argument must be between 1 and 2147483647 inclusive";
        return GOBLIN_EINVAL;
    }
    *out = n;
    return 0;
}

/* Raises the open-files limit so maxclients connections fit, as Redis
 * does; keeps going (with a warning) when the hard limit is lower. */
static void fit_fd_limit(struct goblind *g)
{
    struct rlimit rl;
    rlim_t want = (rlim_t)g->maxclients + 32;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
        return;
    rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < want)
        goblind_log(g, GOBLIN_LOG_WARNING, "You requested maxclients of %ld "
                    "requiring at least %lu max file descriptors; the hard "
                    "limit allows %lu.", g->maxclients, (unsigned long)want,
                    (unsigned long)rl.rlim_cur);
}

static int set_maxclients(void *ctx, struct goblin_slice v, const char **why)
{
    struct goblind *g = ctx;
    long n;

    if (slice_long(v, 1, INT_MAX, &n, why) < 0)
        return GOBLIN_EINVAL;
    g->maxclients = n;
    fit_fd_limit(g);
    return 0;
}

static int set_timeout(void *ctx, struct goblin_slice v, const char **why)
{
    long n;

    if (slice_long(v, 0, INT_MAX, &n, why) < 0)
        return GOBLIN_EINVAL;
    ((struct goblind *)ctx)->timeout = n;
    return 0;
}

static int set_loglevel(void *ctx, struct goblin_slice v, const char **why)
{
    char text[16];
    int level = -1;

    if (v.len < sizeof(text)) {
        memcpy(text, v.ptr, v.len);
        text[v.len] = '\0';
        level = goblind_loglevel_parse(text);
    }
    if (level < 0) {
        *why = "argument(s) must be one of the following: debug, verbose, "
               "notice, warning";
        return GOBLIN_EINVAL;
    }
    ((struct goblind *)ctx)->loglevel = level;
    return 0;
}

int goblind_register_settings(struct goblind *g)
{
    const struct goblin_setting settings[] = {
        {"port", NULL, get_port, NULL, g},
        {"bind", NULL, get_bind, NULL, g},
        {"unixsocket", NULL, get_unixsocket, NULL, g},
        {"unixsocketperm", NULL, get_unixsocketperm, NULL, g},
        {"logfile", NULL, get_logfile, NULL, g},
        {"maxclients", NULL, get_maxclients, set_maxclients, g},
        {"timeout", NULL, get_timeout, set_timeout, g},
        {"loglevel", NULL, get_loglevel, set_loglevel, g},
    };

    fit_fd_limit(g);
    for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
        int rc = goblin_engine_setting_add(g->engine, &settings[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}
