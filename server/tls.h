/* tls.h - TLS on goblind's TCP listeners (the tls-port option), behind a
 * small interface so net_epoll.c stays the same loop with or without it:
 * a server context built once from the tls-* options, and per connection
 * non-blocking reads and writes that say which readiness they wait for.
 *
 * Built only with -Dtls=enabled (or auto with OpenSSL present); without
 * it goblind_tls_init refuses a tls-port and nothing else exists.
 */
#ifndef GOBLIND_TLS_H
#define GOBLIND_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct goblind;
struct goblind_tls;

/* True when goblind was built with TLS. */
bool goblind_tls_available(void);

/* Builds the server context from g's tls-* options when tls-port is set.
 * 0, or -1 after logging why (no certificate, bad file, no TLS build). */
int goblind_tls_init(struct goblind *g);
void goblind_tls_free(struct goblind *g);

/* Starts the server side of a TLS session on fd (accepted, non-blocking);
 * the handshake runs within the first reads and writes. NULL on failure. */
struct goblind_tls *goblind_tls_open(struct goblind *g, int fd);
void goblind_tls_close(struct goblind_tls *t);

/* Like read(2) and write(2) on a non-blocking socket: bytes moved, 0 for
 * a closed peer (read only), or -1 with errno EAGAIN when the session
 * waits for the socket (*want_write: for it to be writable, else
 * readable), or another errno for a failed session. */
ssize_t goblind_tls_read(struct goblind_tls *t, void *buf, size_t n,
                         bool *want_write);
ssize_t goblind_tls_write(struct goblind_tls *t, const void *buf, size_t n,
                          bool *want_write);

/* Bytes already decrypted and waiting in the session. */
size_t goblind_tls_pending(struct goblind_tls *t);

#endif
