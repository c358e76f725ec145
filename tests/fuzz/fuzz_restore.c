/* fuzz_restore.c - RESTORE's payload check and value loader
 * (lib/snapshot/rdb_write.c) on hostile payloads. The first byte picks
 * the mode: odd, the rest is a payload as sent; even, the rest is a
 * value whose version and CRC64 footer are made right first, so the
 * value parser itself is explored. A refused payload leaves the scratch
 * store empty; an accepted one leaves a store whose invariants hold and
 * a key whose own DUMP restores again. */
#include <string.h>

#include "fuzz.h"
#include "goblin.h"
#include "snapshot/checksum.h"
#include "snapshot/snapshot_int.h"
#include "store/store.h"

static size_t with_footer(const uint8_t *v, size_t n, uint8_t *out)
{
    struct goblin__crc64 tab;
    uint64_t crc;

    memcpy(out, v, n);
    out[n++] = 10;
    out[n++] = 0;
    goblin__crc64_init(&tab);
    crc = goblin__crc64(&tab, 0, out, n);
    for (int i = 0; i < 8; i++)
        out[n++] = (uint8_t)(crc >> (8 * i));
    return n;
}

static void round_trip(goblin_store *st)
{
    struct goblin_buf b = {0};
    goblin_store *again;
    uint32_t id;

    FUZZ_CHECK(goblin__key_find(st, (struct goblin_slice){"k", 1}, &id));
    FUZZ_CHECK(goblin__dump_payload(st, goblin__key_rec(st, id), &b) == 0);
    FUZZ_CHECK(goblin__dump_verify(st, b.data, b.len) == 0);
    FUZZ_CHECK(goblin_store_open(NULL, &again) == 0);
    FUZZ_CHECK(goblin__dump_restore(again, (struct goblin_slice){"k", 1},
                                    b.data, b.len) == 0);
    FUZZ_CHECK(goblin_key_count(again) == 1);
    goblin_store_close(again);
    goblin_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t buf[1 << 20];
    const uint8_t *p = data + 1;
    goblin_store *st;
    size_t n = size - 1;
    int rc;

    if (size < 1 || size > sizeof(buf) - 16)
        return 0;
    if (!(data[0] & 1)) {
        n = with_footer(data + 1, size - 1, buf);
        p = buf;
    }
    FUZZ_CHECK(goblin_store_open(NULL, &st) == 0);
    rc = goblin__dump_verify(st, p, n);
    if (rc == 0)
        rc = goblin__dump_restore(st, (struct goblin_slice){"k", 1}, p, n);
    if (rc != 0) {
        FUZZ_CHECK(goblin_key_count(st) == 0);
    } else {
        FUZZ_CHECK(goblin__store_check(st) == 0);
        if (goblin_key_count(st) == 1)
            round_trip(st);
    }
    goblin_store_close(st);
    return 0;
}
