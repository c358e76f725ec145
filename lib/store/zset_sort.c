/* zset_sort.c - what SORT does to a sorted set before it reads one:
 * Redis 7.0's sortCommand converts a listpack sorted set to a skiplist
 * for good (zsetConvert), and OBJECT ENCODING shows it, so a compact
 * object becomes the full form here too. */
#include "keyspace.h"
#include "zset.h"
#include "zset_impl.h"

int goblin__zset_sort_prepare(goblin_store *st, struct goblin_slice key)
{
    struct zfull *z;
    void **slot;
    int r = goblin__key_lookup(st, key, GOBLIN_TYPE_ZSET, &slot);

    if (r != 1 || *(const uint8_t *)*slot != ZK_COMPACT)
        return r < 0 ? r : 0;
    if ((r = goblin__zc_to_full(st, *slot, &z)) != 0)
        return r;
    goblin__zc_free(st, *slot);
    *slot = z;
    return 0;
}
