/* goblin/sbe.h - Goblin's binary protocol, as far as a program outside
 * libgoblin needs it: how a connection selects it and how messages are
 * framed. The messages themselves are defined by sbe-schema/goblin.xml
 * (an SBE 1.0 schema) and described in docs/sbe.md; goblin/client.h
 * speaks them for you.
 *
 * Selection: a connection (TCP, Unix socket or ring) whose first eight
 * bytes are GOBLIN_SBE_MAGIC speaks SBE for the rest of its life. Framing:
 * on every transport each message is preceded by its length (message
 * header + body) as a u32 little-endian. A server refuses frames longer
 * than its limit (GOBLIN_SBE_FRAME_MAX_DEFAULT unless configured) with an
 * ErrorReply and closes the connection, since it cannot find the next
 * frame.
 */
#ifndef GOBLIN_SBE_H
#define GOBLIN_SBE_H

#include <stddef.h>
#include <stdint.h>

#include "goblin/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GOBLIN_SBE_MAGIC "GOBLINS!"
#define GOBLIN_SBE_MAGIC_LEN 8

/* The frame length prefix. */
#define GOBLIN_SBE_FRAME_PREFIX 4

/* The default limit of one frame's length (prefix excluded): 64 MiB. */
#define GOBLIN_SBE_FRAME_MAX_DEFAULT ((uint32_t)64 << 20)

/* The schema id and version this library speaks (the messageSchema's
 * id and version attributes). */
GOBLIN_API int goblin_sbe_schema_id(void);
GOBLIN_API int goblin_sbe_schema_version(void);

/* Looks at the start of a stream: returns the bytes of its first whole
 * frame (prefix included, > 0) and sets *msg and *len to the message in
 * it; 0 when more bytes are needed; GOBLIN_ELIMIT when the declared length
 * passes max (0 means GOBLIN_SBE_FRAME_MAX_DEFAULT), or GOBLIN_EPROTO when
 * it is shorter than a message header. */
GOBLIN_API int64_t goblin_sbe_frame_next(const void *buf, size_t avail,
                                         uint32_t max, const void **msg,
                                         size_t *len);

#ifdef __cplusplus
}
#endif

#endif
