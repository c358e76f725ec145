/* keyspace.h - the one namespace of keys (placeholder until the keyspace
 * module lands). */
#ifndef GOBLIN_KEYSPACE_H
#define GOBLIN_KEYSPACE_H

struct goblin__keyspace {
    int unused;
};

#endif
