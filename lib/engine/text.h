/* text.h - a growing text buffer for the replies people read (INFO,
 * CLIENT LIST, CONFIG values), allocated from the store so it is counted
 * like every other byte. After an allocation failure the buffer stays
 * failed (oom) and further appends do nothing. */
#ifndef GOBLIN_TEXT_H
#define GOBLIN_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "goblin/common.h"

struct goblin__text {
    goblin_store *st;
    char *p;
    size_t len, cap;
    bool oom;
};

void goblin__text_init(struct goblin__text *t, goblin_store *st);
void goblin__text_free(struct goblin__text *t);
void goblin__text_add(struct goblin__text *t, const void *p, size_t n);
void goblin__text_addf(struct goblin__text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
