/* fuzz_snapshot.c - the snapshot loader (lib/snapshot/snap_load.c) on
 * hostile files. A refusal must leave the store empty; a load must leave
 * a store whose own invariants hold.
 *
 * Input: a control byte, then
 *   bit 0 clear: a whole snapshot file, checksums and all;
 *   bit 0 set:   u16 key count, then a record stream, which the target
 *                seals into a one-block snapshot with correct checksums
 *                (as snap_write.c would), so mutations reach the record
 *                decoder instead of stopping at a CRC. */
#include <string.h>

#include "goblin.h"
#include "fuzz.h"
#include "snapshot/checksum.h"
#include "snapshot/format.h"
#include "store/store.h"

/* The snapshot holding payload[0..n) in one block, claiming keys. */
static uint8_t *seal(const uint8_t *payload, size_t n, uint64_t keys,
                     size_t *len)
{
    uint8_t *p = malloc(64 + 8 + n + 8 + 32), *t;
    uint32_t chain, idx = 0;

    FUZZ_CHECK(p != NULL);
    memset(p, 0, 64);
    memcpy(p, SNAP_MAGIC, 8);
    le32_put(p + SH_VERSION, GOBLIN_SNAPSHOT_VERSION);
    le32_put(p + SH_SIZE, SNAP_HEADER_SIZE);
    le64_put(p + SH_KEYS, keys);
    le32_put(p + SH_BLOCK, SNAP_BLOCK_SIZE);
    le32_put(p + SH_CRC, goblin__crc32c(0, p, SH_CRC));
    chain = goblin__crc32c(0, p, 64);
    *len = 64;
    if (n > 0) {
        le32_put(p + 64, (uint32_t)n);
        le32_put(p + 68, goblin__snap_block_crc((uint32_t)n, idx++, payload));
        chain = goblin__crc32c(chain, p + 64, 8);
        memcpy(p + 72, payload, n);
        *len += 8 + n;
    }
    le32_put(p + *len, 0);
    le32_put(p + *len + 4, goblin__snap_block_crc(0, idx, NULL));
    chain = goblin__crc32c(chain, p + *len, 8);
    *len += 8;
    t = p + *len;
    memset(t, 0, 32);
    memcpy(t, SNAP_END_MAGIC, 8);
    le64_put(t + ST_KEYS, keys);
    le64_put(t + ST_PAYLOAD, n);
    le32_put(t + ST_BLOCKS, idx);
    le32_put(t + ST_CRC, goblin__crc32c(chain, t, ST_CRC));
    *len += 32;
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct goblin_snapshot_result res;
    goblin_store *st;
    uint8_t *sealed = NULL;
    int rc;

    if (size < 1)
        return 0;
    if (data[0] & 1) {
        if (size < 3 || size - 3 > SNAP_BLOCK_SIZE)
            return 0;
        sealed = seal(data + 3, size - 3, data[1] | (uint64_t)data[2] << 8,
                      &size);
        data = sealed;
    } else {
        data++;
        size--;
    }
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
    free(sealed);
    return 0;
}
