/* config.c - goblind's options. libgoblin reads the command line and the
 * config file (goblin_engine_config_args: Redis's syntax, every Redis 7.0
 * directive, docs/config.md) and keeps every value; goblind prints --help
 * from the library's table, hands the ring directives to the ring set and
 * follows loglevel and maxclients. */
#include <stdio.h>
#include <string.h>

#include "goblind.h"

/* A setting goblind acts on changed (config file, command line, CONFIG
 * SET); refusing it makes the engine keep the old value. */
static int changed(void *ctx, const char *name, const char **why)
{
    struct goblind *g = ctx;

    if (strcmp(name, "loglevel") == 0)
        g->loglevel = (long)goblin_engine_config_int(g->engine, name, 2);
    *why = g->why;
    if (strcmp(name, "appendonly") == 0 && g->started)
        return goblin_persist_appendonly(
            g->persist, goblin_engine_config_int(g->engine, name, 0) != 0,
            why);
    *why = g->why;
    return g->started && strcmp(name, "maxclients") == 0
               ? goblin_serve_maxclients_check(g->engine, g->why,
                                               sizeof(g->why))
               : 0;
}

static int ring_directive(void *ctx, int argc, const char *const *argv,
                          const char **why)
{
    return goblin_ring_set_directive(((struct goblind *)ctx)->rings, argc,
                                     argv, why);
}

/* 0 to go on, 1 after --help or --version, -1 after an error. */
int goblind_parse_args(struct goblind *g, int argc, char **argv)
{
    struct goblin_config_hooks hooks = {ring_directive, changed, g};
    char err[4096];

    /* Redis leaves normal clients' output unlimited, so one client that
     * never reads its replies can grow the server without bound; goblind
     * caps it at 256 MiB unless told otherwise. */
    goblin_engine_config_set(g->engine, "client-output-buffer-limit",
                             "normal 268435456 0 0", err, sizeof(err));
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: goblind [config-file | -] [--directive value...]...\n"
               "Every directive of a Redis 7.0 config file (docs/config.md)"
               ";\nthose Goblin acts on, with their defaults:\n");
        goblin_engine_config_usage(g->engine, stdout);
        goblin_ring_set_usage(stdout);
        return 1;
    }
    if (argc > 1 && (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--version"))) {
        printf("goblind v=%s\n", GOBLIN_VERSION_STRING);
        return 1;
    }
    if (goblin_ring_set_new(&g->rings) < 0)
        return -1;
    goblin_engine_config_hooks(g->engine, &hooks);
    if (goblin_engine_config_args(g->engine, argc, argv, err, sizeof(err))) {
        fprintf(stderr, "\n%s\n", err);
        return -1;
    }
    g->loglevel = (long)goblin_engine_config_int(g->engine, "loglevel", 2);
    return goblin_ring_set_settings(g->rings, g->engine) < 0 ? -1 : 0;
}
