/* sha1.h - SHA-1 (FIPS 180-4) for DEBUG DIGEST, whose value Redis defines
 * through SHA-1. Not for anything that needs a secure hash. Private to
 * libgoblin. */
#ifndef GOBLIN_SHA1_H
#define GOBLIN_SHA1_H

#include <stddef.h>

#define GOBLIN__SHA1_LEN 20

/* Writes the SHA-1 digest of p[0..len) into out. */
void goblin__sha1(const void *p, size_t len,
                  unsigned char out[GOBLIN__SHA1_LEN]);

#endif
