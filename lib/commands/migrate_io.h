/* migrate_io.h - MIGRATE's blocking connection to its target
 * (migrate_io.c): every call waits at most its timeout; a failure leaves
 * errno set (ETIMEDOUT when the time ran out). */
#ifndef GOBLIN_MIGRATE_IO_H
#define GOBLIN_MIGRATE_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct goblin__migrate_conn {
    int fd;          /* -1: not connected */
    size_t pos, len; /* unread reply bytes in[pos..len) */
    char in[4096];
};

/* Connects to host:port: 0, or -1 (nothing to close). */
int goblin__migrate_connect(struct goblin__migrate_conn *c, const char *host,
                            const char *port, int64_t timeout_ms);
/* Writes all n bytes: 0 or -1. */
int goblin__migrate_write(struct goblin__migrate_conn *c, const void *p,
                          size_t n, int64_t timeout_ms);
/* Reads one reply line without its CR LF into line (cut to cap - 1
 * bytes, NUL-ended): its length, 0 when the target closed, -1 failed. */
ssize_t goblin__migrate_read_line(struct goblin__migrate_conn *c, char *line,
                                  size_t cap, int64_t timeout_ms);
void goblin__migrate_close(struct goblin__migrate_conn *c);

#endif
