/* sha256.h - SHA-256 (FIPS 180-4) for ACL passwords, and a comparison
 * whose time does not depend on where two byte strings differ. Private
 * to libgoblin. */
#ifndef GOBLIN_SHA256_H
#define GOBLIN_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GOBLIN__SHA256_LEN 32

/* Writes the SHA-256 digest of p[0..len) into out. */
void goblin__sha256(const void *p, size_t len,
                    unsigned char out[GOBLIN__SHA256_LEN]);

/* True when a[0..n) equals b[0..n); reads every byte either way. */
bool goblin__same_bytes(const void *a, const void *b, size_t n);

#endif
