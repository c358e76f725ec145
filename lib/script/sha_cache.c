/* sha_cache.c - EVAL's script cache index: a script's lower-case SHA-1
 * (40 hex digits) -> the registry reference of its compiled function and
 * its shebang flags, in an open-addressing table in C. EVALSHA finds its
 * script here without making the SHA-1 a Lua string (interning 40 bytes
 * and a registry table lookup cost more than the rest of a short
 * script's setup). Entries are only added; SCRIPT FLUSH empties it with
 * the interpreter the references point into.
 */
#include <stdlib.h>
#include <string.h>

#include "script.h"

/* The digits of a SHA-1 are uniform: the first sixteen make the hash. */
static size_t slot_of(const char sha[40], size_t mask)
{
    uint64_t h;

    memcpy(&h, sha, sizeof(h));
    h *= 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) & mask;
}

const struct goblin__sha_entry *
goblin__sha_cache_find(const struct goblin__sha_cache *c, const char sha[40])
{
    size_t mask, i;

    if (c->cap == 0)
        return NULL;
    mask = c->cap - 1;
    for (i = slot_of(sha, mask);; i = (i + 1) & mask) {
        const struct goblin__sha_entry *e = &c->v[i];

        if (e->ref == 0)
            return NULL;
        if (memcmp(e->sha, sha, 40) == 0)
            return e;
    }
}

static void put(struct goblin__sha_entry *v, size_t cap,
                const struct goblin__sha_entry *e)
{
    size_t mask = cap - 1, i;

    for (i = slot_of(e->sha, mask); v[i].ref != 0; i = (i + 1) & mask)
        ;
    v[i] = *e;
}

int goblin__sha_cache_add(struct goblin__sha_cache *c, const char sha[40],
                          int ref, unsigned flags)
{
    struct goblin__sha_entry e;

    /* At most half full, so every probe ends soon at an empty slot. */
    if ((c->n + 1) * 2 > c->cap) {
        size_t cap = c->cap == 0 ? 64 : c->cap * 2, i;
        struct goblin__sha_entry *v = calloc(cap, sizeof(*v));

        if (v == NULL)
            return GOBLIN_ENOMEM;
        for (i = 0; i < c->cap; i++)
            if (c->v[i].ref != 0)
                put(v, cap, &c->v[i]);
        free(c->v);
        c->v = v;
        c->cap = cap;
    }
    memcpy(e.sha, sha, 40);
    e.ref = ref;
    e.flags = flags;
    put(c->v, c->cap, &e);
    c->n++;
    return 0;
}

void goblin__sha_cache_clear(struct goblin__sha_cache *c)
{
    free(c->v);
    c->v = NULL;
    c->n = c->cap = 0;
}
