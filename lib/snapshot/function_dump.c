/* function_dump.c - FUNCTION DUMP's payload in Redis 7.0's format
 * (functions.c functionDumpCommand): each library's code as an
 * RDB_OPCODE_FUNCTION2 record (the opcode byte, then the code as an RDB
 * string), then the RDB version (10, 2 bytes little-endian) and the
 * CRC64 of everything before it (8 bytes little-endian). Reading takes
 * what redis-server writes: strings raw, integer-encoded or LZF
 * compressed. The texts are functionRestoreCommand's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checksum.h"
#include "goblin/buf.h"
#include "goblin/script.h"
#include "rdb.h"

#define DUMP_RDB_VERSION 10

static uint64_t crc_of(const void *p, size_t n, int *rc)
{
    struct goblin__crc64 *tab = malloc(sizeof(*tab));
    uint64_t crc;

    if (tab == NULL) {
        *rc = GOBLIN_ENOMEM;
        return 0;
    }
    goblin__crc64_init(tab);
    crc = goblin__crc64(tab, 0, p, n);
    free(tab);
    return crc;
}

static void put_len(struct goblin_buf *b, uint64_t n)
{
    uint8_t p[9];
    size_t k;

    if (n < 64) {
        p[0] = (uint8_t)n;
        k = 1;
    } else if (n < 16384) {
        p[0] = (uint8_t)(0x40 | (n >> 8));
        p[1] = (uint8_t)n;
        k = 2;
    } else if (n <= UINT32_MAX) {
        p[0] = 0x80;
        for (int i = 0; i < 4; i++)
            p[1 + i] = (uint8_t)(n >> (24 - 8 * i));
        k = 5;
    } else {
        p[0] = 0x81;
        for (int i = 0; i < 8; i++)
            p[1 + i] = (uint8_t)(n >> (56 - 8 * i));
        k = 9;
    }
    if (!b->failed && goblin_buf_append(b, p, k) != 0)
        b->failed = true;
}

int goblin_function_dump(struct goblin_buf *out,
                         const struct goblin_slice *codes, size_t n)
{
    uint8_t op = RDB_OPCODE_FUNCTION2, foot[10];
    size_t start = out->len;
    uint64_t crc;
    int rc = 0;

    for (size_t i = 0; i < n; i++) {
        if (!out->failed && goblin_buf_append(out, &op, 1) != 0)
            out->failed = true;
        put_len(out, codes[i].len);
        if (!out->failed && goblin_buf_append(out, codes[i].ptr,
                                              codes[i].len) != 0)
            out->failed = true;
    }
    foot[0] = DUMP_RDB_VERSION & 0xff;
    foot[1] = DUMP_RDB_VERSION >> 8;
    if (out->failed || goblin_buf_append(out, foot, 2) != 0)
        return GOBLIN_ENOMEM;
    crc = crc_of(out->data + start, out->len - start, &rc);
    for (int i = 0; i < 8; i++)
        foot[i] = (uint8_t)(crc >> (8 * i));
    if (rc != 0 || goblin_buf_append(out, foot, 8) != 0)
        return GOBLIN_ENOMEM;
    return 0;
}

/* An RDB length at p[*pos, end); *enc: it was an encoding instead. */
static bool get_len(const uint8_t *p, size_t end, size_t *pos, uint64_t *len,
                    bool *enc)
{
    uint8_t b;

    if (*pos >= end)
        return false;
    b = p[(*pos)++];
    *enc = false;
    switch (b >> 6) {
    case 0:
        *len = b & 0x3f;
        return true;
    case 1:
        if (*pos >= end)
            return false;
        *len = (uint64_t)(b & 0x3f) << 8 | p[(*pos)++];
        return true;
    case 3:
        *enc = true;
        *len = b & 0x3f;
        return true;
    default: {
        int k = b == 0x80 ? 4 : b == 0x81 ? 8 : 0;

        if (k == 0 || end - *pos < (size_t)k)
            return false;
        *len = 0;
        for (int i = 0; i < k; i++)
            *len = *len << 8 | p[(*pos)++];
        return true;
    }
    }
}

/* One RDB string into out (replacing what it held). */
static int get_string(const uint8_t *p, size_t end, size_t *pos,
                      struct goblin_buf *out)
{
    uint64_t len, clen, ulen;
    bool enc;

    out->len = 0;
    if (!get_len(p, end, pos, &len, &enc))
        return GOBLIN_EINVAL;
    if (enc && len <= 2) {
        size_t k = (size_t)1 << len;
        int64_t v = 0;
        char num[24];
        int n;

        if (end - *pos < k)
            return GOBLIN_EINVAL;
        for (size_t i = 0; i < k; i++)
            v |= (int64_t)p[*pos + i] << (8 * i);
        if (k < 8 && (v >> (8 * k - 1)) & 1)
            v -= (int64_t)1 << (8 * k);
        *pos += k;
        n = snprintf(num, sizeof(num), "%lld", (long long)v);
        return goblin_buf_append(out, num, (size_t)n);
    }
    if (enc && len == 3) {
        if (!get_len(p, end, pos, &clen, &enc) || enc ||
            !get_len(p, end, pos, &ulen, &enc) || enc ||
            clen > end - *pos || ulen > clen * 88 + 64)
            return GOBLIN_EINVAL;
        if (goblin_buf_reserve(out, (size_t)ulen + 1) != 0)
            return GOBLIN_ENOMEM;
        if (goblin__lzf_decompress(p + *pos, (size_t)clen,
                                   (uint8_t *)out->data, (size_t)ulen) != 0)
            return GOBLIN_EINVAL;
        out->len = (size_t)ulen;
        *pos += (size_t)clen;
        return 0;
    }
    if (enc || len > end - *pos)
        return GOBLIN_EINVAL;
    if (goblin_buf_append(out, p + *pos, (size_t)len) != 0)
        return GOBLIN_ENOMEM;
    *pos += (size_t)len;
    return 0;
}

int goblin_function_undump(const void *payload, size_t len,
                           int (*fn)(void *ctx, struct goblin_slice code),
                           void *ctx, const char **err)
{
    const uint8_t *p = payload;
    struct goblin_buf code = {0};
    uint64_t want = 0, crc;
    size_t pos = 0, end;
    int rc = 0;

    *err = NULL;
    if (len < 10 || ((unsigned)p[len - 10] | (unsigned)p[len - 9] << 8) >
                        DUMP_RDB_VERSION) {
        *err = "ERR DUMP payload version or checksum are wrong";
        return GOBLIN_EINVAL;
    }
    crc = crc_of(p, len - 8, &rc);
    if (rc != 0)
        return rc;
    for (int i = 7; i >= 0; i--)
        want = want << 8 | p[len - 8 + (size_t)i];
    if (crc != want) {
        *err = "ERR DUMP payload version or checksum are wrong";
        return GOBLIN_EINVAL;
    }
    end = len - 10;
    while (rc == 0 && pos < end) {
        uint8_t type = p[pos++];

        if (type == RDB_OPCODE_FUNCTION_PRE_GA) {
            *err = "ERR Pre-GA function format not supported";
            rc = GOBLIN_EINVAL;
        } else if (type != RDB_OPCODE_FUNCTION2) {
            *err = "ERR given type is not a function";
            rc = GOBLIN_EINVAL;
        } else if ((rc = get_string(p, end, &pos, &code)) != 0) {
            if (rc != GOBLIN_ENOMEM)
                *err = "ERR Failed loading library payload";
        } else {
            rc = fn(ctx, (struct goblin_slice){code.data != NULL ? code.data
                                                                 : "",
                                               code.len});
        }
    }
    goblin_buf_free(&code);
    return rc;
}
