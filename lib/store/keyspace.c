/* keyspace.c - the one namespace of keys (placeholder until the keyspace
 * module lands). */
#include "store.h"

void goblin__keyspace_init(goblin_store *st)
{
    (void)st;
}

void goblin__keyspace_free(goblin_store *st)
{
    (void)st;
}
