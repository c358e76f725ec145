/* tls.c - TLS for goblind's TCP connections with OpenSSL (tls.h).
 *
 * One SSL_CTX for the server: TLS 1.2 and newer, the certificate chain
 * and key of tls-cert-file and tls-key-file, and for client certificates
 * (tls-auth-clients yes, the default as in Redis, or optional) the CAs of
 * tls-ca-cert-file. Each connection is an SSL in accept state over its
 * non-blocking socket: SSL_read and SSL_write run the handshake as bytes
 * come, and report WANT_READ or WANT_WRITE, which become EAGAIN with the
 * readiness to wait for. Partial writes are allowed and the write buffer
 * may move between retries, since the session's output buffer can.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "goblind.h"
#include "tls.h"

#ifdef GOBLIND_TLS

#include <openssl/err.h>
#include <openssl/ssl.h>

struct goblind_tls {
    SSL *ssl;
};

bool goblind_tls_available(void)
{
    return true;
}

static void log_ssl(struct goblind *g, const char *what, const char *file)
{
    char text[256] = "";
    unsigned long e = ERR_get_error();

    if (e != 0)
        ERR_error_string_n(e, text, sizeof(text));
    ERR_clear_error();
    goblind_log(g, GOBLIN_LOG_WARNING, "Failed to configure TLS: %s %s: %s",
                what, file != NULL ? file : "", text);
}

/* tls-auth-clients: yes (require), optional, or no. */
static int verify_mode(struct goblind *g)
{
    const char *a = g->tls_auth_clients;

    if (a == NULL || strcmp(a, "yes") == 0)
        return SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    if (strcmp(a, "optional") == 0)
        return SSL_VERIFY_PEER;
    if (strcmp(a, "no") == 0)
        return SSL_VERIFY_NONE;
    return -1;
}

int goblind_tls_init(struct goblind *g)
{
    SSL_CTX *ctx;
    int mode = verify_mode(g);

    if (g->tls_port == 0)
        return 0;
    if (mode < 0 || g->tls_cert_file == NULL || g->tls_key_file == NULL ||
        (mode != SSL_VERIFY_NONE && g->tls_ca_cert_file == NULL)) {
        goblind_log(g, GOBLIN_LOG_WARNING, "Failed to configure TLS: "
                    "tls-port needs tls-cert-file and tls-key-file, and "
                    "tls-ca-cert-file unless tls-auth-clients is no "
                    "(tls-auth-clients: yes, no or optional)");
        return -1;
    }
    ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL) {
        log_ssl(g, "SSL_CTX_new", NULL);
        return -1;
    }
    g->tls_ctx = ctx;
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
                              SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION);
    if (SSL_CTX_use_certificate_chain_file(ctx, g->tls_cert_file) != 1) {
        log_ssl(g, "certificate", g->tls_cert_file);
        return -1;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, g->tls_key_file,
                                    SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1) {
        log_ssl(g, "private key", g->tls_key_file);
        return -1;
    }
    if (g->tls_ca_cert_file != NULL &&
        SSL_CTX_load_verify_locations(ctx, g->tls_ca_cert_file, NULL) != 1) {
        log_ssl(g, "CA certificates", g->tls_ca_cert_file);
        return -1;
    }
    SSL_CTX_set_verify(ctx, mode, NULL);
    return 0;
}

void goblind_tls_free(struct goblind *g)
{
    SSL_CTX_free(g->tls_ctx);
    g->tls_ctx = NULL;
}

struct goblind_tls *goblind_tls_open(struct goblind *g, int fd)
{
    struct goblind_tls *t = calloc(1, sizeof(*t));

    if (t == NULL || (t->ssl = SSL_new(g->tls_ctx)) == NULL ||
        SSL_set_fd(t->ssl, fd) != 1) {
        goblind_tls_close(t);
        return NULL;
    }
    SSL_set_accept_state(t->ssl);
    return t;
}

void goblind_tls_close(struct goblind_tls *t)
{
    if (t == NULL)
        return;
    if (t->ssl != NULL) {
        SSL_shutdown(t->ssl);   /* best effort: the socket is non-blocking */
        SSL_free(t->ssl);
    }
    ERR_clear_error();
    free(t);
}

/* Maps an SSL_read/SSL_write result to the read(2) convention. */
static ssize_t result(struct goblind_tls *t, int n, bool *want_write)
{
    int e = SSL_get_error(t->ssl, n);

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

ssize_t goblind_tls_read(struct goblind_tls *t, void *buf, size_t n,
                         bool *want_write)
{
    int cap = n > INT_MAX ? INT_MAX : (int)n;

    errno = 0;
    return result(t, SSL_read(t->ssl, buf, cap), want_write);
}

ssize_t goblind_tls_write(struct goblind_tls *t, const void *buf, size_t n,
                          bool *want_write)
{
    int cap = n > INT_MAX ? INT_MAX : (int)n;

    errno = 0;
    return result(t, SSL_write(t->ssl, buf, cap), want_write);
}

size_t goblind_tls_pending(struct goblind_tls *t)
{
    return (size_t)SSL_pending(t->ssl);
}

#else /* no TLS in this build */

bool goblind_tls_available(void)
{
    return false;
}

int goblind_tls_init(struct goblind *g)
{
    if (g->tls_port == 0)
        return 0;
    goblind_log(g, GOBLIN_LOG_WARNING, "tls-port is set but this goblind "
                "was built without TLS (meson -Dtls=enabled)");
    return -1;
}

void goblind_tls_free(struct goblind *g)
{
    (void)g;
}

struct goblind_tls *goblind_tls_open(struct goblind *g, int fd)
{
    (void)g;
    (void)fd;
    return NULL;
}

void goblind_tls_close(struct goblind_tls *t)
{
    (void)t;
}

ssize_t goblind_tls_read(struct goblind_tls *t, void *buf, size_t n,
                         bool *want_write)
{
    (void)t, (void)buf, (void)n;
    *want_write = false;
    errno = ENOTSUP;
    return -1;
}

ssize_t goblind_tls_write(struct goblind_tls *t, const void *buf, size_t n,
                          bool *want_write)
{
    (void)t, (void)buf, (void)n;
    *want_write = false;
    errno = ENOTSUP;
    return -1;
}

size_t goblind_tls_pending(struct goblind_tls *t)
{
    (void)t;
    return 0;
}

#endif
