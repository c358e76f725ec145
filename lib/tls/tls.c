/* tls.c - libgoblin-tls (goblin/tls.h): OpenSSL under a goblin_conn, as
 * its I/O layer. SSL_read and SSL_write report WANT_READ or WANT_WRITE,
 * which become EAGAIN with the readiness to wait for. Partial writes are
 * allowed and the write buffer may move between retries, since the
 * session's output buffer can.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <goblin/tls.h>

struct goblin_tls_server {
    SSL_CTX *ctx;
};

static int fail(goblin_tls_server *srv, const char *what, const char *file,
                char *err, size_t cap)
{
    char text[256] = "";
    unsigned long e = ERR_get_error();

    if (e != 0)
        ERR_error_string_n(e, text, sizeof(text));
    ERR_clear_error();
    snprintf(err, cap, "Failed to configure TLS: %s %s: %s", what,
             file != NULL ? file : "", text);
    goblin_tls_server_close(srv);
    return GOBLIN_EINVAL;
}

/* auth_clients: yes (require), optional, or no. */
static int verify_mode(const char *a)
{
    if (a == NULL || strcmp(a, "yes") == 0)
        return SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    if (strcmp(a, "optional") == 0)
        return SSL_VERIFY_PEER;
    if (strcmp(a, "no") == 0)
        return SSL_VERIFY_NONE;
    return -1;
}

/* The caller's struct in this library's layout, by goblin/common.h's
 * rule for sized structs (this library cannot reach libgoblin's internal
 * helper): bytes past ours must be zero. */
static bool copy_in(struct goblin_tls_server_config *dst,
                    const struct goblin_tls_server_config *src, size_t size)
{
    const unsigned char *b = (const void *)src;

    memset(dst, 0, sizeof(*dst));
    if (src == NULL || size < sizeof(src->cert_file))
        return false;
    for (size_t i = sizeof(*dst); i < size; i++)
        if (b[i] != 0)
            return false;
    memcpy(dst, src, size < sizeof(*dst) ? size : sizeof(*dst));
    return true;
}

int goblin_tls_server_open_sized(const struct goblin_tls_server_config *in,
                                 size_t in_size, goblin_tls_server **out,
                                 char *err, size_t cap)
{
    struct goblin_tls_server_config c;
    const struct goblin_tls_server_config *cfg = &c;
    goblin_tls_server *srv;
    SSL_CTX *ctx;
    int mode;

    *out = NULL;
    if (!copy_in(&c, in, in_size)) {
        snprintf(err, cap, "Failed to configure TLS: a configuration this "
                 "library does not know");
        return GOBLIN_EINVAL;
    }
    mode = verify_mode(cfg->auth_clients);
    if (mode < 0 || cfg->cert_file == NULL || cfg->key_file == NULL ||
        (mode != SSL_VERIFY_NONE && cfg->ca_cert_file == NULL)) {
        snprintf(err, cap, "Failed to configure TLS: tls-port needs "
                 "tls-cert-file and tls-key-file, and tls-ca-cert-file "
                 "unless tls-auth-clients is no (tls-auth-clients: yes, no "
                 "or optional)");
        return GOBLIN_EINVAL;
    }
    if ((srv = calloc(1, sizeof(*srv))) == NULL)
        return GOBLIN_ENOMEM;
    if ((ctx = srv->ctx = SSL_CTX_new(TLS_server_method())) == NULL)
        return fail(srv, "SSL_CTX_new", NULL, err, cap);
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
                              SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION);
    if (SSL_CTX_use_certificate_chain_file(ctx, cfg->cert_file) != 1)
        return fail(srv, "certificate", cfg->cert_file, err, cap);
    if (SSL_CTX_use_PrivateKey_file(ctx, cfg->key_file,
                                    SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1)
        return fail(srv, "private key", cfg->key_file, err, cap);
    if (cfg->ca_cert_file != NULL &&
        SSL_CTX_load_verify_locations(ctx, cfg->ca_cert_file, NULL) != 1)
        return fail(srv, "CA certificates", cfg->ca_cert_file, err, cap);
    SSL_CTX_set_verify(ctx, mode, NULL);
    *out = srv;
    return 0;
}

void goblin_tls_server_close(goblin_tls_server *srv)
{
    if (srv == NULL)
        return;
    SSL_CTX_free(srv->ctx);
    free(srv);
}

/* Maps an SSL_read/SSL_write result to the read(2) convention. */
static long result(SSL *ssl, int n, bool *want_write)
{
    int e = SSL_get_error(ssl, n);

    *want_write = false;
    if (n > 0)
        return n;
    switch (e) {
    case SSL_ERROR_WANT_READ:
        errno = EAGAIN;
        return -1;
    case SSL_ERROR_WANT_WRITE:
        *want_write = true;
        errno = EAGAIN;
        return -1;
    case SSL_ERROR_ZERO_RETURN:
        return 0;
    case SSL_ERROR_SYSCALL:
        ERR_clear_error();
        if (errno == 0 || errno == EAGAIN)
            errno = ECONNRESET;
        return -1;
    default:
        ERR_clear_error();
        errno = EPROTO;
        return -1;
    }
}

static long tls_read(void *io, void *buf, size_t n, bool *want_write)
{
    errno = 0;
    return result(io, SSL_read(io, buf, n > INT_MAX ? INT_MAX : (int)n),
                  want_write);
}

static long tls_write(void *io, const void *buf, size_t n, bool *want_write)
{
    errno = 0;
    return result(io, SSL_write(io, buf, n > INT_MAX ? INT_MAX : (int)n),
                  want_write);
}

static size_t tls_pending(void *io)
{
    return (size_t)SSL_pending(io);
}

static void tls_close(void *io)
{
    SSL_shutdown(io);       /* best effort: the socket is non-blocking */
    SSL_free(io);
    ERR_clear_error();
}

static const struct goblin_conn_io tls_io = {
    tls_read, tls_write, tls_pending, tls_close,
};

int goblin_tls_attach(goblin_tls_server *srv, goblin_conn *c)
{
    SSL *ssl = SSL_new(srv->ctx);

    if (ssl == NULL || SSL_set_fd(ssl, goblin_conn_fd(c)) != 1) {
        SSL_free(ssl);
        ERR_clear_error();
        return GOBLIN_ENOMEM;
    }
    SSL_set_accept_state(ssl);
    goblin_conn_set_io(c, &tls_io, ssl);
    return 0;
}

/* A setting's text, or NULL when it is empty (as CONFIG GET shows it). */
static const char *setting(const goblin_engine *eng, const char *name,
                           char *buf, size_t cap)
{
    return goblin_engine_config_get(eng, name, buf, cap) > 0 ? buf : NULL;
}

int goblin_tls_server_open_settings(const goblin_engine *eng,
                                    goblin_tls_server **out, char *err,
                                    size_t cap)
{
    char v[4][GOBLIN_SETTING_VALUE_MAX];
    struct goblin_tls_server_config cfg = {
        setting(eng, "tls-cert-file", v[0], sizeof(v[0])),
        setting(eng, "tls-key-file", v[1], sizeof(v[1])),
        setting(eng, "tls-ca-cert-file", v[2], sizeof(v[2])),
        setting(eng, "tls-auth-clients", v[3], sizeof(v[3]))};

    return goblin_tls_server_open(&cfg, out, err, cap);
}

static int secure(void *ctx, goblin_conn *c)
{
    return goblin_tls_attach(ctx, c);
}

int goblin_tls_epoll_settings(const goblin_engine *eng,
                              struct goblin_epoll_config *cfg,
                              goblin_tls_server **out, char *err, size_t cap)
{
    int rc;

    *out = NULL;
    if (goblin_engine_config_int(eng, "tls-port", 0) == 0)
        return 0;
    if ((rc = goblin_tls_server_open_settings(eng, out, err, cap)) < 0)
        return rc;
    cfg->secure = secure;
    cfg->secure_ctx = *out;
    return 0;
}
