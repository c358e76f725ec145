/* zset.c - sorted-set values (placeholder until the sorted-set module
 * lands). */
#include "store.h"

void goblin__zset_free(goblin_store *st, void *obj)
{
    (void)st;
    (void)obj;
}

const char *goblin__zset_encoding(const void *obj)
{
    (void)obj;
    return "listpack";
}
