/* listen_set.c - every listener a server's settings ask for (goblin/serve.h,
 * "listener sets"): port on each bind address, tls-port likewise (secure),
 * then unixsocket with unixsocketperm, in that order and with Redis's
 * rules and log lines (the default bind, "127.0.0.1 -::1" in effect, skips
 * a missing address family; a bind that cannot be had stops the server).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <goblin/serve.h>

#include "util/config_size.h"

#define MAX_BIND 16
#define MAX_LISTEN (2 * MAX_BIND + 1)

struct goblin_listen_set {
    struct goblin_listen_set_config cfg;
    struct goblin_listener l[MAX_LISTEN];
    int n;
    char unix_path[108];          /* CLIENT LIST's name, and unlinked */
};

static void say(const goblin_listen_set *ls, enum goblin_log_level level,
                const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(const goblin_listen_set *ls, enum goblin_log_level level,
                const char *fmt, ...)
{
    char text[1024];
    va_list ap;

    if (ls->cfg.log == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    ls->cfg.log(ls->cfg.log_ctx, level, text);
}

/* Every bind address on port; 0, or -1 after logging why. */
static int listen_port(goblin_listen_set *ls, long port, bool secure)
{
    char bind[GOBLIN_SETTING_VALUE_MAX], msg[512], *save = NULL;
    int before = ls->n, nbind = 0;
    bool optional;

    if (port == 0)
        return 0;
    goblin_engine_config_get(ls->cfg.engine, "bind", bind, sizeof(bind));
    optional = strcmp(bind, "127.0.0.1 ::1") == 0;
    for (char *w = strtok_r(bind, " ", &save); w != NULL && nbind < MAX_BIND;
         w = strtok_r(NULL, " ", &save), nbind++) {
        bool skipped;
        int fd = goblin_listen_tcp(w, port, optional, &skipped, msg,
                                   sizeof(msg));

        if (fd < 0) {
            say(ls, GOBLIN_LOG_WARNING, "%s", msg);
            if (!skipped)
                return -1;
            continue;
        }
        ls->l[ls->n++] = (struct goblin_listener){fd, GOBLIN_TRANSPORT_TCP,
                                                  secure, NULL};
    }
    if (ls->n == before) {
        say(ls, GOBLIN_LOG_WARNING, "Failed listening on port %ld (tcp), "
            "aborting.", port);
        return -1;
    }
    return 0;
}

static int open_all(goblin_listen_set *ls)
{
    goblin_engine *eng = ls->cfg.engine;
    long port = (long)goblin_engine_config_int(eng, "port", 0);
    long tls_port = (long)goblin_engine_config_int(eng, "tls-port", 0);
    long perm = (long)goblin_engine_config_int(eng, "unixsocketperm", 0);
    char msg[512], path[sizeof(ls->unix_path)] = "";
    int fd;

    goblin_engine_config_get(eng, "unixsocket", path, sizeof(path));
    if (port == 0 && tls_port == 0 && path[0] == '\0') {
        say(ls, GOBLIN_LOG_WARNING, "Configured to not listen anywhere, "
            "exiting.");
        return -1;
    }
    if (tls_port != 0 && !ls->cfg.tls) {
        say(ls, GOBLIN_LOG_WARNING, "tls-port is set but this server was "
            "built without TLS (meson -Dtls=enabled)");
        return -1;
    }
    if (listen_port(ls, port, false) < 0 ||
        listen_port(ls, tls_port, true) < 0)
        return -1;
    if (path[0] == '\0')
        return 0;
    fd = goblin_listen_unix(path, (unsigned)perm, msg, sizeof(msg));
    if (fd < 0) {
        say(ls, GOBLIN_LOG_WARNING, "%s", msg);
        return -1;
    }
    memcpy(ls->unix_path, path, sizeof(path));    /* ours to remove */
    ls->l[ls->n++] = (struct goblin_listener){fd, GOBLIN_TRANSPORT_UNIX,
                                              false, ls->unix_path};
    return 0;
}

int goblin_listen_set_open_sized(const struct goblin_listen_set_config *cfg,
                                 size_t cfg_size, goblin_listen_set **out)
{
    goblin_listen_set *ls = calloc(1, sizeof(*ls));

    *out = NULL;
    if (ls == NULL)
        return GOBLIN_ENOMEM;
    if (cfg == NULL || goblin__config_copy(&ls->cfg, sizeof(ls->cfg), cfg,
                                           cfg_size, sizeof(cfg->engine)) ||
        ls->cfg.engine == NULL) {
        free(ls);
        return GOBLIN_EINVAL;
    }
    *out = ls;
    return open_all(ls) < 0 ? GOBLIN_EINVAL : 0;
}

int goblin_listen_set_count(const goblin_listen_set *ls)
{
    return ls != NULL ? ls->n : 0;
}

const struct goblin_listener *goblin_listen_set_get(
    const goblin_listen_set *ls, int i)
{
    return ls != NULL && i >= 0 && i < ls->n ? &ls->l[i] : NULL;
}

void goblin_listen_set_close(goblin_listen_set *ls)
{
    if (ls == NULL)
        return;
    for (int i = 0; i < ls->n; i++)
        close(ls->l[i].fd);
    if (ls->unix_path[0] != '\0' && unlink(ls->unix_path) == 0)
        say(ls, GOBLIN_LOG_NOTICE, "Removing the unix socket file.");
    free(ls);
}
