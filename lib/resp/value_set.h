/* value_set.h - filling a goblin_resp_value (goblin/resp.h) whole, field
 * by field, for the readers that build values one at a time (the RESP
 * reader's short road, the client's SBE trees). A compound literal or a
 * memset of the whole struct compiles to a rep stos, whose start-up costs
 * more than the value's own parse. */
#ifndef GOBLIN_RESP_VALUE_SET_H
#define GOBLIN_RESP_VALUE_SET_H

#include <string.h>

#include "goblin/resp.h"

/* *v of type with the text p[0..n) and integer, every other field zero. */
static inline void goblin__resp_value_set(struct goblin_resp_value *v,
                                          enum goblin_resp_type type,
                                          const char *p, size_t n,
                                          int64_t integer)
{
    v->type = type;
    v->null_array = false;
    memset(v->fmt, 0, sizeof(v->fmt));
    v->integer = integer;
    v->dbl = 0;
    v->str.ptr = p;
    v->str.len = n;
    v->n = 0;
    v->items = NULL;
    v->attribute = NULL;
}

#endif
