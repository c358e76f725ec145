/* reply.c - the protocol-neutral part of reply.h: Redis's error texts for
 * GOBLIN_E* codes. */
#include <string.h>

#include "goblin/reply.h"

static const char *known_text(int code)
{
    switch (code) {
    case GOBLIN_EWRONGTYPE:
        return "WRONGTYPE Operation against a key holding the wrong kind "
               "of value";
    case GOBLIN_ENOTINT:
        return "ERR value is not an integer or out of range";
    case GOBLIN_EOVERFLOW:
        return "ERR increment or decrement would overflow";
    case GOBLIN_ENOTFLOAT:
        return "ERR value is not a valid float";
    case GOBLIN_ENANINF:
        return "ERR increment would produce NaN or Infinity";
    case GOBLIN_ENAN:
        return "ERR resulting score is not a number (NaN)";
    case GOBLIN_ENOKEY:
        return "ERR no such key";
    case GOBLIN_ESYNTAX:
        return "ERR syntax error";
    case GOBLIN_EHASHNOTINT:
        return "ERR hash value is not an integer";
    case GOBLIN_EHASHNOTFLOAT:
        return "ERR hash value is not a float";
    case GOBLIN_ESTRBIG:
        return "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
    case GOBLIN_EOFFSET:
        return "ERR offset is out of range";
    case GOBLIN_ENOMEM:
        return "OOM command not allowed when used memory > 'maxmemory'.";
    default:
        return NULL;
    }
}

static size_t copy_out(char *buf, size_t cap, size_t at, const char *s)
{
    size_t n = strlen(s);

    if (at < cap)
        memcpy(buf + at, s, n < cap - at ? n : cap - at);
    return at + n;
}

size_t goblin_reply_error_text(int code, char *buf, size_t cap)
{
    const char *t = known_text(code);

    if (t != NULL)
        return copy_out(buf, cap, 0, t);
    return copy_out(buf, cap, copy_out(buf, cap, 0, "ERR "),
                    goblin_strerror(code));
}
