/* lzf.c - LZF decompression, for the compressed strings of RDB files
 * (Redis writes them with liblzf when rdbcompression is on).
 *
 * The stream is a sequence of runs, each led by a control byte c:
 *   c < 32:  a literal run of c + 1 bytes that follow;
 *   c >= 32: a back reference of length (c >> 5) + 2, or, when c >> 5 is
 *            7, 7 + the next byte + 2; the distance back is
 *            ((c & 0x1f) << 8) + the following byte + 1.
 * Every run is checked against both buffers before it is copied, so
 * hostile input can neither read nor write out of bounds.
 */
#include <string.h>

#include "checksum.h"

int goblin__lzf_decompress(const uint8_t *in, size_t in_len, uint8_t *out,
                           size_t out_len)
{
    const uint8_t *ip = in, *ie = in + in_len;
    size_t op = 0;

    while (ip < ie) {
        unsigned c = *ip++;

        if (c < 32) {
            size_t len = (size_t)c + 1;

            if ((size_t)(ie - ip) < len || out_len - op < len)
                return -1;
            memcpy(out + op, ip, len);
            ip += len;
            op += len;
            continue;
        }
        size_t len = c >> 5, back;

        if (len == 7) {
            if (ip >= ie)
                return -1;
            len += *ip++;
        }
        if (ip >= ie)
            return -1;
        back = ((size_t)(c & 0x1f) << 8) + *ip++ + 1;
        len += 2;
        if (back > op || out_len - op < len)
            return -1;
        /* Byte by byte: the source may overlap what is being written. */
        for (size_t i = 0; i < len; i++, op++)
            out[op] = out[op - back];
    }
    return op == out_len ? 0 : -1;
}
