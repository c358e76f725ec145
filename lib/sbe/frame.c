/* frame.c - the public face of the SBE wire (goblin/sbe.h): the schema's
 * id and version, and finding frames in a byte stream. */
#include "goblin/sbe.h"
#include "sbe/goblin_sbe_gen.h"

_Static_assert(GOBLIN_SBE_FRAME_PREFIX == 4, "u32 length prefix");

int goblin_sbe_schema_id(void)
{
    return GOBLIN_SBE_SCHEMA_ID;
}

int goblin_sbe_schema_version(void)
{
    return GOBLIN_SBE_SCHEMA_VERSION;
}

int64_t goblin_sbe_frame_next(const void *buf, size_t avail, uint32_t max,
                              const void **msg, size_t *len)
{
    const uint8_t *p = buf;
    uint32_t n;

    if (avail < GOBLIN_SBE_FRAME_PREFIX)
        return 0;
    n = goblin_sbe_rd_u32(p);
    if (n > (max != 0 ? max : GOBLIN_SBE_FRAME_MAX_DEFAULT))
        return GOBLIN_ELIMIT;
    if (n < GOBLIN_SBE_HEADER_LENGTH)
        return GOBLIN_EPROTO;
    if (avail - GOBLIN_SBE_FRAME_PREFIX < n)
        return 0;
    *msg = p + GOBLIN_SBE_FRAME_PREFIX;
    *len = n;
    return (int64_t)n + GOBLIN_SBE_FRAME_PREFIX;
}
