/* config_size.c - the size rule for public configuration structs (see
 * config_size.h). */
#include <string.h>

#include "goblin/common.h"
#include "util/config_size.h"

int goblin__config_copy(void *dst, size_t dst_size, const void *src,
                        size_t src_size, size_t min_size)
{
    const unsigned char *extra = (const unsigned char *)src + dst_size;
    size_t i;

    if (src_size < min_size)
        return GOBLIN_EINVAL;
    memset(dst, 0, dst_size);
    if (src_size <= dst_size) {
        memcpy(dst, src, src_size);
        return 0;
    }
    for (i = 0; i < src_size - dst_size; i++)
        if (extra[i] != 0)
            return GOBLIN_EINVAL;
    memcpy(dst, src, dst_size);
    return 0;
}
