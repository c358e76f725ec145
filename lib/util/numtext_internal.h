/* numtext_internal.h - what the number-text files share inside libgoblin:
 * the power-of-ten table and the unsigned digit writer. */
#ifndef GOBLIN_NUMTEXT_INTERNAL_H
#define GOBLIN_NUMTEXT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#define GOBLIN__POW10_K_MIN (-324)
#define GOBLIN__POW10_K_MAX 292
#define GOBLIN__POW10_ROWS (GOBLIN__POW10_K_MAX - GOBLIN__POW10_K_MIN + 1)

/* See numtext_pow10.c. */
extern const uint64_t goblin__pow10_g[GOBLIN__POW10_ROWS][2];

/* Writes v in decimal at buf (room for 20 bytes); returns the length. */
size_t goblin__u64_format(char *buf, uint64_t v);

#endif
