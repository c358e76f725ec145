/* fuzz_snapshot.c - the snapshot loader (lib/snapshot/snap_load.c) on
 * hostile files. A refusal must leave the store empty; a load must leave
 * a store whose own invariants hold, that saves and loads back to the same
 * key count. */
#include <string.h>

#include "goblin.h"
#include "fuzz.h"
#include "store/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct goblin_snapshot_result res;
    goblin_store *st;
    int rc;

    FUZZ_CHECK(goblin_store_open(NULL, &st) == 0);
    rc = goblin_snapshot_load_mem(st, data, size, &res);
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
