/* config_size.h - reading a configuration struct that the caller compiled
 * against a header of another version.
 *
 * Every public call that takes a configuration struct also takes the size
 * the caller's header gave that struct (the header's inline wrapper passes
 * sizeof). The structs only grow at the end, so:
 * - an older caller passes fewer bytes: the library reads those and leaves
 *   the fields the caller never knew at zero, which means their default;
 * - a newer caller passes more bytes: the library accepts them when every
 *   byte it does not know is zero (the caller asked for nothing this
 *   library lacks), and refuses the call with GOBLIN_EINVAL otherwise, so a
 *   setting is never silently ignored.
 * This is the rule Linux applies to openat2() and clone3() arguments.
 */
#ifndef GOBLIN_UTIL_CONFIG_SIZE_H
#define GOBLIN_UTIL_CONFIG_SIZE_H

#include <stddef.h>

/* Copies the caller's struct (src, src_size bytes) into dst (dst_size
 * bytes, the library's own layout), zeroing what src does not cover.
 * Returns 0, or GOBLIN_EINVAL when src sets a byte past dst_size or when
 * src_size is smaller than the struct's first field (min_size). */
int goblin__config_copy(void *dst, size_t dst_size, const void *src,
                        size_t src_size, size_t min_size);

#endif
