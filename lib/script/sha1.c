/* sha1.c - SHA-1 (FIPS 180-4), for script names: EVALSHA's digests and
 * redis.sha1hex, which Redis gives as 40 lower-case hex digits.
 */
#include <stdint.h>
#include <string.h>

#include "script.h"

static uint32_t rol(uint32_t v, int n)
{
    return v << n | v >> (32 - n);
}

static void block(uint32_t h[5], const unsigned char *p)
{
    uint32_t w[80], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    int i;

    for (i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (; i < 80; i++)
        w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    for (i = 0; i < 80; i++) {
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

void goblin__sha1_hex(char out[41], const void *data, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    uint32_t h[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476,
                     0xc3d2e1f0};
    const unsigned char *p = data;
    unsigned char tail[128];
    size_t rest = len % 64, full = len - rest, tlen;
    uint64_t bits = (uint64_t)len * 8;
    int i;

    for (size_t off = 0; off < full; off += 64)
        block(h, p + off);
    memset(tail, 0, sizeof(tail));
    if (rest > 0)
        memcpy(tail, p + full, rest);
    tail[rest] = 0x80;
    tlen = rest < 56 ? 64 : 128;
    for (i = 0; i < 8; i++)
        tail[tlen - 1 - i] = (unsigned char)(bits >> (8 * i));
    block(h, tail);
    if (tlen == 128)
        block(h, tail + 64);
    for (i = 0; i < 20; i++) {
        unsigned char byte = (unsigned char)(h[i / 4] >> (24 - 8 * (i % 4)));

        out[2 * i] = hex[byte >> 4];
        out[2 * i + 1] = hex[byte & 15];
    }
    out[40] = '\0';
}
