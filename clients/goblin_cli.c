/* goblin_cli.c - goblin-cli: a command-line client in the manner of
 * redis-cli, over TCP, a Unix socket or a shared-memory ring, speaking
 * RESP2, RESP3 or SBE.
 *
 *   goblin-cli [-h host] [-p port] [-s socket] [--ring path] [-a password]
 *              [--user name] [-2 | -3 | --sbe] [--raw | --no-raw]
 *              [command [arg ...]]
 *
 * With a command it runs it once and prints the reply; without one it
 * reads commands line by line (with a prompt on a terminal), splitting
 * words as redis-cli does (double quotes with C escapes, single quotes).
 * Replies print as redis-cli prints them: its terminal form when stdout
 * is a terminal (or --no-raw), its raw form otherwise (or --raw). Over
 * SBE every command travels as an Argv message, so any command works and
 * prints like redis-cli -3 (SBE keeps RESP3's types).
 *
 * SUBSCRIBE, PSUBSCRIBE and SSUBSCRIBE (as the command given on the
 * command line) print their confirmations and then every message as it
 * comes, as redis-cli does, until the connection ends or Ctrl-C.
 * Confirmations show the server's final count for the last name and
 * count up to it for the others (distinct names, as usually given).
 *
 * Uses the public API only (goblin/client.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "goblin.h"
#include "goblin/client.h"

struct opts {
    const char *host, *socket, *ring, *password, *user;
    int port;
    enum goblin_client_protocol proto;
    int raw; /* -1: by whether stdout is a terminal */
};

static void usage(FILE *f)
{
    fputs("Usage: goblin-cli [OPTIONS] [cmd [arg [arg ...]]]\n"
          "  -h <hostname>      Server hostname (default: 127.0.0.1).\n"
          "  -p <port>          Server port (default: 6379).\n"
          "  -s <socket>        Server socket (overrides hostname and "
          "port).\n"
          "  --ring <path>      Server ring file (overrides the others).\n"
          "  -a <password>      Password to use when connecting.\n"
          "  --user <username>  Username to send along with -a.\n"
          "  -2                 Speak RESP2 (the default).\n"
          "  -3                 Speak RESP3.\n"
          "  --sbe              Speak SBE, Goblin's binary protocol.\n"
          "  --raw              Use raw formatting for replies.\n"
          "  --no-raw           Force formatted output even when not a "
          "tty.\n"
          "  --help             Output this help and exit.\n"
          "  --version          Output version and exit.\n",
          f);
}

/* Parses options; returns the index of the first command word. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
    int i;

    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;

        if (!strcmp(a, "-h") && more)
            o->host = argv[++i];
        else if (!strcmp(a, "-p") && more)
            o->port = atoi(argv[++i]);
        else if (!strcmp(a, "-s") && more)
            o->socket = argv[++i];
        else if (!strcmp(a, "--ring") && more)
            o->ring = argv[++i];
        else if (!strcmp(a, "-a") && more)
            o->password = argv[++i];
        else if (!strcmp(a, "--user") && more)
            o->user = argv[++i];
        else if (!strcmp(a, "-2"))
            o->proto = GOBLIN_CLIENT_RESP2;
        else if (!strcmp(a, "-3"))
            o->proto = GOBLIN_CLIENT_RESP3;
        else if (!strcmp(a, "--sbe"))
            o->proto = GOBLIN_CLIENT_SBE;
        else if (!strcmp(a, "--raw"))
            o->raw = 1;
        else if (!strcmp(a, "--no-raw"))
            o->raw = 0;
        else if (!strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--version")) {
            printf("goblin-cli %s\n", GOBLIN_VERSION_STRING);
            exit(0);
        } else {
            fprintf(stderr, "Unrecognized option or bad number of args "
                            "for: '%s'\n", a);
            exit(1);
        }
    }
    return i;
}

static goblin_client *connect_or_die(const struct opts *o)
{
    struct goblin_client_config cfg = {0};
    goblin_client *c = NULL;
    int rc;

    cfg.protocol = o->proto;
    cfg.password = o->password;
    cfg.username = o->user;
    if (o->ring != NULL)
        rc = goblin_client_connect_ring(o->ring, &cfg, &c);
    else if (o->socket != NULL)
        rc = goblin_client_connect_unix(o->socket, &cfg, &c);
    else
        rc = goblin_client_connect_tcp(o->host, o->port, &cfg, &c);
    if (rc == 0)
        return c;
    if (o->ring != NULL)
        fprintf(stderr, "Could not attach to the Goblin ring %s: %s\n",
                o->ring, strerror(-rc));
    else if (o->socket != NULL)
        fprintf(stderr, "Could not connect to Goblin at %s: %s\n", o->socket,
                rc == GOBLIN_EREPLY ? "authentication failed" : strerror(-rc));
    else
        fprintf(stderr, "Could not connect to Goblin at %s:%d: %s\n",
                o->host, o->port,
                rc == GOBLIN_EREPLY ? "authentication failed" : strerror(-rc));
    exit(1);
}

/* redis-cli prints these commands' text raw even on a terminal. */
static int raw_strings(size_t argc, const struct goblin_slice *argv)
{
    static const char *const one[] = {"info", "lolwut"};
    static const char *const two[][2] = {
        {"client", "list"}, {"client", "info"}, {"memory", "doctor"},
        {"memory", "malloc-stats"}, {"latency", "doctor"},
        {"latency", "graph"}, {"debug", "htstats"}, {"debug", "htstats-key"},
    };
    size_t i;

    for (i = 0; i < 2; i++)
        if (argv[0].len == strlen(one[i]) &&
            !strncasecmp(argv[0].ptr, one[i], argv[0].len))
            return 1;
    for (i = 0; argc >= 2 && i < sizeof(two) / sizeof(two[0]); i++)
        if (argv[0].len == strlen(two[i][0]) &&
            !strncasecmp(argv[0].ptr, two[i][0], argv[0].len) &&
            argv[1].len == strlen(two[i][1]) &&
            !strncasecmp(argv[1].ptr, two[i][1], argv[1].len))
            return 1;
    return 0;
}

/* Runs one command and prints its reply. Returns 0, or -1 when the
 * connection failed. */
static int run(goblin_client *c, size_t argc, const struct goblin_slice *argv,
               int raw)
{
    const struct goblin_resp_value *v;
    struct goblin_buf out = {0};
    int rc = goblin_client_call(c, argc, argv, &v), strings;

    if (rc < 0) {
        fprintf(stderr, "Error: %s\n", goblin_client_error(c));
        return -1;
    }
    strings = !raw && raw_strings(argc, argv);
    if (goblin_client_format_reply(v, raw || strings, &out) != 0) {
        fputs("Error: out of memory\n", stderr);
        return -1;
    }
    if (strings && out.len > 0)
        out.len--; /* the text keeps its own line ends */
    fwrite(out.data, 1, out.len, stdout);
    fflush(stdout);
    goblin_buf_free(&out);
    return 0;
}

/* Prints [word, a, (b,) c] as redis-cli prints a push of it. */
static void print_push(int raw, const char *word, struct goblin_slice a,
                       const struct goblin_slice *b, struct goblin_slice c,
                       const int64_t *count)
{
    struct goblin_resp_value items[4] = {{0}}, top = {0};
    struct goblin_buf out = {0};
    size_t n = 0;

    items[n].type = GOBLIN_RESP_BULK;
    items[n++].str = (struct goblin_slice){word, strlen(word)};
    items[n].type = GOBLIN_RESP_BULK;
    items[n++].str = a;
    if (b != NULL) {
        items[n].type = GOBLIN_RESP_BULK;
        items[n++].str = *b;
    }
    if (count != NULL) {
        items[n].type = GOBLIN_RESP_INTEGER;
        items[n++].integer = *count;
    } else {
        items[n].type = GOBLIN_RESP_BULK;
        items[n++].str = c;
    }
    top.type = GOBLIN_RESP_ARRAY;
    top.n = n;
    top.items = items;
    if (goblin_client_format_reply(&top, raw, &out) == 0)
        fwrite(out.data, 1, out.len, stdout);
    fflush(stdout);
    goblin_buf_free(&out);
}

/* SUBSCRIBE and its kin on the command line: confirmations, then the
 * messages until the connection ends. */
static int subscribe_mode(goblin_client *c, size_t argc,
                          const struct goblin_slice *argv, int raw)
{
    static const char *const words[] = {"message", "pmessage", "smessage"};
    struct goblin_client_message m;
    char cmd[16], lower[16];
    int64_t total;
    size_t i;
    int rc;

    snprintf(cmd, sizeof(cmd), "%.*s", (int)argv[0].len,
             (const char *)argv[0].ptr);
    for (i = 0; cmd[i] != '\0'; i++)
        lower[i] = (char)(cmd[i] >= 'A' && cmd[i] <= 'Z' ? cmd[i] + 32
                                                         : cmd[i]);
    lower[i] = '\0';
    total = goblin_client_subscribe(c, cmd, argc - 1, argv + 1);
    if (total == GOBLIN_EREPLY) {
        fprintf(stdout, "(error) %s\n", goblin_client_error(c));
        return 0;
    }
    if (total < 0) {
        fprintf(stderr, "Error: %s\n", goblin_client_error(c));
        return -1;
    }
    if (!raw)
        fputs("Reading messages... (press Ctrl-C to quit)\n", stdout);
    for (i = 1; i < argc; i++) {
        int64_t k = total - (int64_t)(argc - 1 - i);

        print_push(raw, lower, argv[i], NULL, (struct goblin_slice){0},
                   &k);
    }
    for (;;) {
        rc = goblin_client_next_message(c, -1, &m);
        if (rc < 0) {
            fprintf(stderr, "Error: %s\n", goblin_client_error(c));
            return -1;
        }
        if (m.kind == GOBLIN_CLIENT_PMESSAGE)
            print_push(raw, words[m.kind], m.pattern, &m.channel, m.payload,
                       NULL);
        else
            print_push(raw, words[m.kind], m.channel, NULL, m.payload, NULL);
    }
}

static bool is_subscribe(struct goblin_slice w)
{
    static const char *const names[] = {"subscribe", "psubscribe",
                                        "ssubscribe"};

    for (size_t i = 0; i < 3; i++)
        if (w.len == strlen(names[i]) &&
            strncasecmp(w.ptr, names[i], w.len) == 0)
            return true;
    return false;
}

/* ---- the prompt ---- */

struct words {
    char *buf;             /* the words' bytes, back to back */
    struct goblin_slice *v;
    size_t n, cap;
};

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* One escape after a backslash inside double quotes; returns the byte
 * and moves *p past what it used. */
static char unescape(const char **p)
{
    const char *s = *p;

    if (s[0] == 'x' && hexval(s[1]) >= 0 && hexval(s[2]) >= 0) {
        *p = s + 3;
        return (char)(hexval(s[1]) * 16 + hexval(s[2]));
    }
    *p = s + 1;
    switch (s[0]) {
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'b': return '\b';
    case 'a': return '\a';
    default: return s[0];
    }
}

/* One word at *p (sdssplitargs): returns its length in out, or -1 for
 * unbalanced quotes. */
static long word(const char **pp, char *out)
{
    const char *p = *pp;
    long n = 0;
    int q = 0; /* 0, '"' or '\'' */

    for (;;) {
        if (q == 0 && (*p == '\0' || *p == ' ' || *p == '\t' || *p == '\n' ||
                       *p == '\r'))
            break;
        if (*p == '\0')
            return -1;
        if (q == '"' && *p == '\\' && p[1] != '\0') {
            p++;
            out[n++] = unescape(&p);
            continue;
        }
        if (q == '\'' && *p == '\\' && p[1] == '\'') {
            out[n++] = '\'';
            p += 2;
            continue;
        }
        if (q != 0 && *p == q) {
            if (p[1] != '\0' && p[1] != ' ' && p[1] != '\t' && p[1] != '\n' &&
                p[1] != '\r')
                return -1;
            q = 0;
            p++;
            continue;
        }
        if (q == 0 && (*p == '"' || *p == '\'')) {
            q = *p++;
            continue;
        }
        out[n++] = *p++;
    }
    *pp = p;
    return n;
}

/* Splits line into w; returns the count or -1. */
static long split(const char *line, struct words *w)
{
    const char *p = line;
    char *at;
    long len;

    w->n = 0;
    at = w->buf = realloc(w->buf, strlen(line) + 1);
    if (at == NULL)
        return -1;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        if (*p == '\0')
            return (long)w->n;
        if ((len = word(&p, at)) < 0)
            return -1;
        if (w->n == w->cap) {
            w->cap = w->cap ? 2 * w->cap : 16;
            w->v = realloc(w->v, w->cap * sizeof(*w->v));
            if (w->v == NULL)
                return -1;
        }
        w->v[w->n++] = (struct goblin_slice){at, (size_t)len};
        at += len;
    }
}

static int repl(goblin_client *c, const struct opts *o, int raw)
{
    struct words w = {0};
    char *line = NULL;
    size_t cap = 0;
    int tty = isatty(STDIN_FILENO), rc = 0;
    long n;

    for (;;) {
        if (tty) {
            if (o->ring != NULL || o->socket != NULL)
                printf("goblin %s> ", o->ring ? o->ring : o->socket);
            else
                printf("%s:%d> ", o->host, o->port);
            fflush(stdout);
        }
        if (getline(&line, &cap, stdin) < 0)
            break;
        if ((n = split(line, &w)) < 0) {
            puts("Invalid argument(s)");
            continue;
        }
        if (n == 0)
            continue;
        if (n == 1 && (!strncasecmp(w.v[0].ptr, "quit", w.v[0].len) ||
                       !strncasecmp(w.v[0].ptr, "exit", w.v[0].len)) &&
            w.v[0].len == 4)
            break;
        if (run(c, (size_t)n, w.v, raw) < 0) {
            rc = 1;
            break;
        }
    }
    free(line);
    free(w.buf);
    free(w.v);
    return rc;
}

int main(int argc, char **argv)
{
    struct opts o = {"127.0.0.1", NULL, NULL, NULL, NULL, 6379,
                     GOBLIN_CLIENT_RESP2, -1};
    int first = parse_opts(argc, argv, &o), raw, rc, i;
    struct goblin_slice *words;
    goblin_client *c;

    raw = o.raw >= 0 ? o.raw : !isatty(STDOUT_FILENO);
    c = connect_or_die(&o);
    if (first >= argc) {
        rc = repl(c, &o, raw);
        goblin_client_close(c);
        return rc;
    }
    words = calloc((size_t)(argc - first), sizeof(*words));
    if (words == NULL)
        return 1;
    for (i = first; i < argc; i++)
        words[i - first] = (struct goblin_slice){argv[i], strlen(argv[i])};
    if (argc - first >= 2 && is_subscribe(words[0]))
        rc = subscribe_mode(c, (size_t)(argc - first), words, raw);
    else
        rc = run(c, (size_t)(argc - first), words, raw);
    free(words);
    goblin_client_close(c);
    return rc < 0 ? 1 : 0;
}
