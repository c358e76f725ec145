/* key_memory.c - what one key costs, for MEMORY USAGE.
 *
 * The figure is Goblin's own, not an estimate of what Redis would hold:
 * the key's record (key bytes, flags, a string value inline) as
 * used_memory charges it, plus every block of its collection at the size
 * the store asked the allocator for. Collections live in a few large
 * blocks (arena chunks, list blocks, index tables), so the sum is exact
 * and walks blocks, not elements: MEMORY USAGE's SAMPLES has nothing to
 * sample. The keyspace's shared tables (index, id and expiry pages) are
 * not counted per key; MEMORY STATS shows them per database. A value
 * in a one-block form (listpack, intset, one list block) is charged as
 * used_memory charges that block, with malloc's rounding. */
#include "hash.h"
#include "hash_impl.h"
#include "keyspace.h"
#include "list.h"
#include "list_impl.h"
#include "set.h"
#include "store.h"
#include "zset.h"

/* The one block of a compact value, or NULL for a form of many. */
static void *one_block(enum goblin_type type, void *obj)
{
    switch (type) {
    case GOBLIN_TYPE_HASH:
        return goblin__hobj_is_full(obj) ? NULL : obj;
    case GOBLIN_TYPE_ZSET:
        return goblin__zset_encoding(obj)[0] == 'l' ? obj : NULL;
    case GOBLIN_TYPE_LIST:
        return goblin__lobj_is_full(obj) ? NULL : obj;
    case GOBLIN_TYPE_SET:
        if (goblin__set_form(obj) == GOBLIN__SET_INTSET ||
            goblin__set_form(obj) == GOBLIN__SET_COMPACT)
            return goblin__set_ptr(obj);
        return NULL;
    default:
        return NULL;
    }
}

int goblin__key_memory(goblin_store *st, struct goblin_slice key,
                       size_t *out)
{
    enum goblin_type type;
    uint32_t id;
    uint8_t *rec;
    void *obj, *block;
    size_t n;

    if (!goblin__key_find(st, key, &id))
        return 0;
    rec = goblin__key_rec(st, id);
    type = goblin__rec_type(rec);
    *out = goblin__charge(st, rec, goblin__rec_size(rec));
    if (type != GOBLIN_TYPE_HASH && type != GOBLIN_TYPE_ZSET &&
        type != GOBLIN_TYPE_LIST && type != GOBLIN_TYPE_SET)
        return 1; /* a string lives in its record */
    obj = goblin__rec_obj(rec);
    if (type == GOBLIN_TYPE_HASH)
        n = goblin__hash_obj_bytes(obj);
    else if (type == GOBLIN_TYPE_ZSET)
        n = goblin__zset_obj_bytes(obj);
    else if (type == GOBLIN_TYPE_LIST)
        n = goblin__list_obj_bytes(obj);
    else
        n = goblin__set_obj_bytes(obj);
    if ((block = one_block(type, obj)) != NULL)
        n = goblin__charge(st, block, n);
    *out += n;
    return 1;
}
