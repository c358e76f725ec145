/* config.c - goblind's options. libgoblin reads the command line and the
 * config file (goblin_engine_config_args: Redis's syntax, every Redis 7.0
 * directive, docs/config.md); this file prints --help from the library's
 * table, offers the --ring options to ring_options.c, and copies the
 * settings goblind acts on into struct goblind whenever one changes.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "goblind.h"

#define AT(f, kind) {#f, offsetof(struct goblind, f), kind}

/* Each goblind field, named as its setting with '_' for '-'. */
static const struct { const char *name; size_t off; char kind; } fields[] = {
    AT(port, 'l'), AT(unixsocketperm, 'l'), AT(maxclients, 'l'),
    AT(timeout, 'l'), AT(loglevel, 'l'), AT(tls_port, 'l'),
    AT(socket_spin_us, 'l'), AT(sbe_tcp, 'b'), AT(sbe_unixsocket, 'b'),
    AT(sbe_ring, 'b'), AT(protected_mode, 'b'), AT(daemonize, 'b'),
    AT(unixsocket, 's'), AT(logfile, 's'), AT(pidfile, 's'),
    AT(import_rdb, 's'), AT(tls_cert_file, 's'), AT(tls_key_file, 's'),
    AT(tls_ca_cert_file, 's'), AT(tls_auth_clients, 's'),
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

void goblind_defaults(struct goblind *g)
{
    memset(g, 0, sizeof(*g));
    g->epfd = g->sigfd = -1;
}

void goblind_free_options(struct goblind *g)
{
    for (size_t i = 0; i < NFIELDS; i++)
        if (fields[i].kind == 's')
            free(*(char **)((char *)g + fields[i].off));
    for (int i = 0; i < g->nbind; i++)
        free(g->bind[i]);
    g->nbind = 0;
    free(g->config_file);
}

/* Copies every setting goblind reads out of the engine. */
static int pull(void *ctx, const char *changed, const char **why)
{
    struct goblind *g = ctx;
    char name[32], text[GOBLIN_SETTING_VALUE_MAX];

    if (changed != NULL && strcmp(changed, "maxclients") == 0 &&
        goblind_maxclients_check(g, why) != 0)
        return -1;
    goblind_free_options(g);
    for (size_t i = 0; i < NFIELDS; i++) {
        void *f = (char *)g + fields[i].off;
        int64_t v;

        snprintf(name, sizeof(name), "%s", fields[i].name);
        for (char *p = strchr(name, '_'); p; p = strchr(p, '_'))
            *p = '-';
        v = goblin_engine_config_int(g->engine, name, 0);
        if (fields[i].kind == 'l')
            *(long *)f = (long)v;
        else if (fields[i].kind == 'b')
            *(bool *)f = v != 0;
        else if (goblin_engine_config_get(g->engine, name, text,
                                          sizeof(text)) > 0)
            *(char **)f = strdup(text);
        else
            *(char **)f = NULL;
    }
    goblin_engine_config_get(g->engine, "bind", text, sizeof(text));
    g->bind_default = strcmp(text, "127.0.0.1 ::1") == 0;
    for (char *w = strtok(text, " "); w != NULL && g->nbind <
         GOBLIND_MAX_BIND; w = strtok(NULL, " "))
        g->bind[g->nbind++] = strdup(w);
    g->config_file = goblin_engine_config_file(g->engine) == NULL ? NULL :
                     strdup(goblin_engine_config_file(g->engine));
    return 0;
}

static int ring_directive(void *ctx, int argc, const char *const *argv,
                          const char **why)
{
    return goblind_ring_option(ctx, argc, argv, why);
}

/* The directives goblind acts on, with its defaults (the engine's values
 * before the command line is read). */
static void usage(struct goblind *g)
{
    struct goblin_setting_info s;
    char v[GOBLIN_SETTING_VALUE_MAX];

    printf("usage: goblind [config-file | -] [--directive value...]...\n"
           "Every directive of a Redis 7.0 config file (docs/config.md);\n"
           "  --ring PATH SIZE, --ring-cpus LIST, --ring-idle spin|backoff,\n"
           "  --ring-spin-us N, --ring-perm OCT  shared-memory rings\n"
           "Directives Goblin acts on, with their defaults:\n");
    for (size_t i = 0; goblin_setting_info(i, &s) == 0; i++)
        if (s.acts && goblin_engine_config_get(g->engine, s.name, v,
                                               sizeof(v)) >= 0)
            printf("  --%-26s %-8s \"%s\"%s%s\n", s.name, s.type, v,
                   s.choices != NULL ? " of " : "",
                   s.choices != NULL ? s.choices : "");
}

/* 0 to go on, 1 after --help or --version, -1 after an error. */
int goblind_parse_args(struct goblind *g, int argc, char **argv)
{
    struct goblin_config_hooks hooks = {ring_directive, pull, g};
    char err[4096];

    /* Redis leaves normal clients' output unlimited, so one client that
     * never reads its replies can grow the server without bound; goblind
     * caps it at 256 MiB unless told otherwise. */
    goblin_engine_config_set(g->engine, "client-output-buffer-limit",
                             "normal 268435456 0 0", err, sizeof(err));
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage(g);
        return 1;
    }
    if (argc > 1 && (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--version"))) {
        printf("goblind v=%s\n", GOBLIN_VERSION_STRING);
        return 1;
    }
    goblin_engine_config_hooks(g->engine, &hooks);
    if (goblin_engine_config_args(g->engine, argc, argv, err, sizeof(err))) {
        fprintf(stderr, "\n%s\n", err);
        return -1;
    }
    return pull(g, NULL, NULL);
}
