/* sha1.c - SHA-1 as FIPS 180-4 section 6.1 defines it: the message is
 * padded with 0x80, zeros and its bit length (big-endian) to a multiple of
 * 64 bytes, and each 64-byte block updates five 32-bit words. One call
 * hashes a whole buffer; nothing is kept. */
#include <stdint.h>
#include <string.h>

#include "goblin/sha1.h"

static uint32_t rol(uint32_t x, int n)
{
    return (x << n) | (x >> (32 - n));
}

static void block(uint32_t h[5], const unsigned char *p)
{
    uint32_t w[80], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];

    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 80; i++)
        w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    for (int i = 0; i < 80; i++) {
        uint32_t f, k, t;

        if (i < 20) {
            f = (b & c) | (~b & d);
            k = 0x5a827999;
        } else if (i < 40) {
            f = b ^ c ^ d;
            k = 0x6ed9eba1;
        } else if (i < 60) {
            f = (b & c) | (b & d) | (c & d);
            k = 0x8f1bbcdc;
        } else {
            f = b ^ c ^ d;
            k = 0xca62c1d6;
        }
        t = rol(a, 5) + f + e + k + w[i];
        e = d;
        d = c;
        c = rol(b, 30);
        b = a;
        a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

void goblin_sha1(const void *p, size_t len,
                  unsigned char out[GOBLIN_SHA1_LEN])
{
    uint32_t h[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476,
                     0xc3d2e1f0};
    const unsigned char *s = p;
    unsigned char tail[128];
    uint64_t bits = (uint64_t)len * 8;
    size_t full = len / 64 * 64, rest = len - full, n;

    for (size_t i = 0; i < full; i += 64)
        block(h, s + i);
    memset(tail, 0, sizeof(tail));
    if (rest != 0)
        memcpy(tail, s + full, rest);
    tail[rest] = 0x80;
    n = rest + 1 + 8 <= 64 ? 64 : 128;
    for (int i = 0; i < 8; i++)
        tail[n - 1 - i] = (uint8_t)(bits >> (8 * i));
    block(h, tail);
    if (n == 128)
        block(h, tail + 64);
    for (int i = 0; i < 5; i++) {
        out[4 * i] = (uint8_t)(h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(h[i] >> 8);
        out[4 * i + 3] = (uint8_t)h[i];
    }
}

void goblin_sha1_hex(char out[2 * GOBLIN_SHA1_LEN + 1], const void *data,
                     size_t len)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char d[GOBLIN_SHA1_LEN];

    goblin_sha1(data, len, d);
    for (int i = 0; i < GOBLIN_SHA1_LEN; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[2 * GOBLIN_SHA1_LEN] = '\0';
}
