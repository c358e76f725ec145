/* fuzz_sbe.c - the SBE frame decoder and dispatcher (lib/sbe) behind a
 * live session: the input is everything a client sends after the magic
 * "GOBLINS!", delivered in chunks whose size the first byte picks. Every
 * reply frame the session writes must decode into a reply tree (as the
 * client library reads it), and the store's invariants must hold after
 * each chunk. goblin_sbe_frame_next also walks the raw input. */
#include <string.h>

#include "fuzz_session.h"
#include "client/client.h"
#include "goblin/sbe.h"
#include "sbe/goblin_sbe_gen.h"

/* Decodes every whole reply frame in the output, then drops it. */
static void check_replies(struct fuzz_live *l, struct goblin__sbe_tree *t)
{
    size_t n, pos = 0;
    const uint8_t *p = goblin_session_output(l->s, &n);

    while (n - pos >= 4) {
        uint32_t len = goblin_sbe_rd_u32(p + pos);
        const struct goblin_resp_value *v;

        FUZZ_CHECK(n - pos - 4 >= len);
        FUZZ_CHECK(goblin__sbe_tree_build(t, p + pos + 4, len, &v) == 0);
        pos += 4 + (size_t)len;
    }
    FUZZ_CHECK(pos == n);
    goblin_session_output_consume(l->s, n);
}

static void walk_frames(const uint8_t *p, size_t n)
{
    for (;;) {
        const void *msg;
        size_t len;
        int64_t got = goblin_sbe_frame_next(p, n, 1 << 16, &msg, &len);

        if (got <= 0)
            break;
        FUZZ_CHECK((uint64_t)got <= n);
        FUZZ_CHECK((const uint8_t *)msg >= p &&
                   (const uint8_t *)msg + len <= p + got);
        p += got;
        n -= (size_t)got;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct goblin__sbe_tree t = {0};
    struct fuzz_live l;
    size_t chunk;

    if (size < 1)
        return 0;
    chunk = data[0] ? data[0] : size;
    data++;
    size--;
    walk_frames(data, size);
    live_open(&l);
    FUZZ_CHECK(goblin_session_feed(l.s, GOBLIN_SBE_MAGIC,
                                   GOBLIN_SBE_MAGIC_LEN) == 0);
    for (size_t off = 0; off < size; off += chunk) {
        size_t c = size - off < chunk ? size - off : chunk;

        (void)goblin_session_feed(l.s, data + off, c);
        check_replies(&l, &t);
        FUZZ_CHECK(goblin__store_check(l.st) == 0);
        if (goblin_session_should_close(l.s))
            break;
    }
    goblin__sbe_tree_free(&t);
    live_close(&l);
    return 0;
}
