/* goblin/tls.h - libgoblin-tls, the TLS companion of libgoblin: a server
 * context built from certificate files and a TLS session per connection,
 * plugged under a goblin_conn as its I/O layer (goblin/serve.h). Only
 * this library links OpenSSL (pkg-config goblin-tls); libgoblin does not.
 *
 * The context: TLS 1.2 and newer, the certificate chain and key, and for
 * client certificates (auth_clients "yes", the default as in Redis, or
 * "optional") the CAs of ca_cert_file. Each connection is an SSL in accept
 * state over its non-blocking socket: reads and writes run the handshake
 * as bytes come and say which readiness they wait for (WRITE interest
 * from the connection when a read must write first).
 */
#ifndef GOBLIN_TLS_H
#define GOBLIN_TLS_H

#include "serve.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct goblin_tls_server goblin_tls_server;

/* Sized as every configuration struct (goblin/common.h). */
struct goblin_tls_server_config {
    const char *cert_file;       /* required: PEM certificate chain */
    const char *key_file;        /* required: PEM private key */
    const char *ca_cert_file;    /* required unless auth_clients is "no" */
    const char *auth_clients;    /* "yes" (NULL), "optional" or "no" */
};

/* Builds the server context into *out. Returns 0, or GOBLIN_EINVAL with
 * the reason ("Failed to configure TLS: ...", Redis's words) in err. */
GOBLIN_API int goblin_tls_server_open_sized(
    const struct goblin_tls_server_config *cfg, size_t cfg_size,
    goblin_tls_server **out, char *err, size_t cap);
static inline int goblin_tls_server_open(
    const struct goblin_tls_server_config *cfg, goblin_tls_server **out,
    char *err, size_t cap)
{
    return goblin_tls_server_open_sized(cfg, sizeof(*cfg), out, err, cap);
}

/* The same, from an engine's settings tls-cert-file, tls-key-file,
 * tls-ca-cert-file and tls-auth-clients (Redis's directives). */
GOBLIN_API int goblin_tls_server_open_settings(const goblin_engine *eng,
                                               goblin_tls_server **out,
                                               char *err, size_t cap);

/* For a server running the library's epoll loop (goblin/serve.h) from
 * Redis's settings: with tls-port set, the context from the settings
 * into *out and cfg's secure hook attaching it to each connection of a
 * secure listener; without, *out is NULL and cfg is left alone. Returns
 * 0, or GOBLIN_EINVAL with the reason in err. */
GOBLIN_API int goblin_tls_epoll_settings(const goblin_engine *eng,
                                         struct goblin_epoll_config *cfg,
                                         goblin_tls_server **out, char *err,
                                         size_t cap);

/* NULL is a no-op; connections using it must be closed first. */
GOBLIN_API void goblin_tls_server_close(goblin_tls_server *srv);

/* Starts the server side of a TLS session on c's socket (just accepted)
 * and sets it as c's I/O layer; goblin_conn_close ends it. Returns 0 or
 * GOBLIN_ENOMEM (then c is unchanged: close it). */
GOBLIN_API int goblin_tls_attach(goblin_tls_server *srv, goblin_conn *c);

#ifdef __cplusplus
}
#endif

#endif
