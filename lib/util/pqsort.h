/* pqsort.h - a partial quicksort (pqsort.c): a[lrange..rrange] end up
 * in sorted order and in place, as Redis's pqsort leaves them. */
#ifndef GOBLIN_PQSORT_H
#define GOBLIN_PQSORT_H

#include <stddef.h>

void goblin__pqsort(void *a, size_t n, size_t es,
                    int (*cmp)(const void *, const void *), size_t lrange,
                    size_t rrange);

#endif
