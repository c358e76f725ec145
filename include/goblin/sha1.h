/* goblin/sha1.h - SHA-1 (FIPS 180-4), as Redis uses it to name things:
 * script digests (EVALSHA, SCRIPT LOAD, redis.sha1hex) and DEBUG DIGEST.
 * Not for anything that needs a secure hash.
 *
 * Both calls hash one whole buffer and keep nothing; data needs no NUL
 * terminator and may hold NUL bytes.
 */
#ifndef GOBLIN_SHA1_H
#define GOBLIN_SHA1_H

#include <stddef.h>

#include "goblin/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GOBLIN_SHA1_LEN 20

/* Writes the 20-byte digest of data[0..len) into out. */
GOBLIN_API void goblin_sha1(const void *data, size_t len,
                            unsigned char out[GOBLIN_SHA1_LEN]);

/* Writes the digest as 40 lower-case hex digits and a NUL into out. */
GOBLIN_API void goblin_sha1_hex(char out[2 * GOBLIN_SHA1_LEN + 1],
                                const void *data, size_t len);

#ifdef __cplusplus
}
#endif

#endif
