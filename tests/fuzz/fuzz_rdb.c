/* fuzz_rdb.c - the Redis RDB importer (lib/snapshot/rdb_load.c) on hostile
 * dumps. A refusal must leave the store empty; an import must leave a
 * store whose own invariants hold. Both flag values are tried. */
#include <string.h>

#include "goblin.h"
#include "fuzz.h"
#include "store/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct goblin_snapshot_result res;
    goblin_store *st;
    unsigned flags;
    int rc;

    if (size < 1)
        return 0;
    flags = data[0] & 1 ? GOBLIN_RDB_SKIP_OTHER_DBS : 0;
    FUZZ_CHECK(goblin_store_open(NULL, &st) == 0);
    rc = goblin_rdb_import_mem(st, data + 1, size - 1, flags, &res);
    FUZZ_CHECK(res.code == rc);
    if (rc < 0) {
        FUZZ_CHECK(res.message[0] != '\0');
        FUZZ_CHECK(goblin_key_count(st) == 0);
    } else {
        FUZZ_CHECK(goblin__store_check(st) == 0);
    }
    goblin_store_close(st);
    return 0;
}
