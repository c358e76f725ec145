/* snap_read.c - the block reader of snapshot files (snap_read.h).
 *
 * A block is read whole and its CRC checked before a byte of it is
 * parsed, so corruption is reported as such, with the block's number and
 * offset, rather than as whatever a damaged length would cause. A view
 * that spans blocks is assembled in scratch memory whose size was first
 * checked against the bytes left in the file; whole blocks inside such a
 * view are read straight into the scratch, not copied twice.
 */
#include <inttypes.h>

#include "checksum.h"
#include "format.h"
#include "snap_read.h"

static int fail(struct goblin__rd *r, int code, uint64_t off,
                const char *what)
{
    return goblin__snap_fail(r->res, code, off, "%s at byte %" PRIu64,
                             what, off);
}

static int trunc_at(struct goblin__rd *r, const char *what)
{
    return goblin__snap_fail(r->res, GOBLIN_ESNAPTRUNC, r->src->size,
                             "file is truncated: it ends at byte %" PRIu64
                             " inside %s", r->src->size, what);
}

static int read_src(struct goblin__rd *r, void *dst, size_t n,
                    const char *what)
{
    int rc = goblin__src_read(r->src, dst, n);

    if (rc == GOBLIN_ESNAPTRUNC)
        return trunc_at(r, what);
    if (rc != 0)
        return goblin__snap_fail(r->res, rc, r->src->off, "read error at "
                                 "byte %" PRIu64 ": %s", r->src->off,
                                 strerror(-rc));
    return 0;
}

/* Reads the payload of a block of len bytes into dst (or, for memory
 * sources with dst NULL, points at it) and checks its CRC. */
static int read_payload(struct goblin__rd *r, uint32_t len, uint32_t crc,
                        uint8_t *dst, const uint8_t **out)
{
    uint64_t at = r->src->off - SNAP_BLOCK_HDR;
    uint32_t got;
    int rc;

    if (dst == NULL && r->src->fd < 0) {
        if (len > r->src->size - r->src->off)
            return trunc_at(r, "a block");
        dst = (uint8_t *)r->src->mem + r->src->off;
        r->src->off += len;
    } else {
        if (dst == NULL)
            dst = r->blk;
        if ((rc = read_src(r, dst, len, "a block")) != 0)
            return rc;
    }
    got = goblin__snap_block_crc(len, r->index, dst);
    if (got != crc)
        return goblin__snap_fail(r->res, GOBLIN_ESNAPCRC, at,
                                 "checksum mismatch in block %" PRIu32
                                 " at byte %" PRIu64 " (stored 0x%08" PRIx32
                                 ", computed 0x%08" PRIx32 ")", r->index, at,
                                 crc, got);
    *out = dst;
    r->index++;
    r->payload += len;
    return 0;
}

/* Reads the next block header. Returns 0 with *len (0: the end marker). */
static int read_header(struct goblin__rd *r, uint32_t *len, uint32_t *crc)
{
    uint8_t h[SNAP_BLOCK_HDR];
    uint64_t at = r->src->off;
    int rc;

    if ((rc = read_src(r, h, sizeof(h), "a block header")) != 0)
        return rc;
    *len = le32_get(h);
    *crc = le32_get(h + 4);
    if (*len > r->block_max)
        return fail(r, GOBLIN_ESNAPFORMAT, at, "block length above the "
                    "header's block size");
    r->chain = goblin__crc32c(r->chain, h, sizeof(h));
    return 0;
}

/* Loads the next data block into the window. dst: where to put its
 * payload when it holds no more than want bytes (then the window stays
 * empty and *took says how many bytes went there). */
static int next_block(struct goblin__rd *r, uint8_t *dst, size_t want,
                      size_t *took)
{
    uint64_t at = r->src->off;
    uint32_t len, crc;
    const uint8_t *p;
    int rc;

    if ((rc = read_header(r, &len, &crc)) != 0)
        return rc;
    if (len == 0)
        return fail(r, GOBLIN_ESNAPFORMAT, at, "a record runs past the end "
                    "of the data");
    if (dst != NULL && len <= want) {
        if ((rc = read_payload(r, len, crc, dst, &p)) != 0)
            return rc;
        *took = len;
        r->p = r->e = NULL;
        r->e_off = r->src->off;
        return 0;
    }
    if ((rc = read_payload(r, len, crc, NULL, &p)) != 0)
        return rc;
    *took = 0;
    r->p = p;
    r->e = p + len;
    r->e_off = r->src->off;
    return 0;
}

int goblin__rd_copy(struct goblin__rd *r, void *dst, size_t n)
{
    uint8_t *d = dst;

    while (n > 0) {
        size_t have = (size_t)(r->e - r->p), took = 0;
        int rc;

        if (have == 0) {
            if ((rc = next_block(r, d, n, &took)) != 0)
                return rc;
            d += took;
            n -= took;
            continue;
        }
        if (have > n)
            have = n;
        memcpy(d, r->p, have);
        r->p += have;
        d += have;
        n -= have;
    }
    return 0;
}

int goblin__rd_byte(struct goblin__rd *r, uint8_t *b)
{
    if (r->p < r->e) {
        *b = *r->p++;
        return 0;
    }
    return goblin__rd_copy(r, b, 1);
}

int goblin__rd_u64(struct goblin__rd *r, uint64_t *v)
{
    uint8_t b[8];
    int rc;

    if (r->e - r->p >= 8) {
        *v = le64_get(r->p);
        r->p += 8;
        return 0;
    }
    if ((rc = goblin__rd_copy(r, b, 8)) != 0)
        return rc;
    *v = le64_get(b);
    return 0;
}

int goblin__rd_varint(struct goblin__rd *r, uint64_t *v)
{
    uint64_t off = goblin__rd_off(r), x = 0;

    for (unsigned i = 0; i < VARINT_MAX; i++) {
        uint8_t b;
        int rc = goblin__rd_byte(r, &b);

        if (rc != 0)
            return rc;
        if (i == VARINT_MAX - 1 && b > 1)
            break;
        x |= (uint64_t)(b & 0x7F) << (7 * i);
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return fail(r, GOBLIN_ESNAPFORMAT, off, "bad length");
}

int goblin__rd_view(struct goblin__rd *r, size_t n, const uint8_t **out)
{
    uint64_t off = goblin__rd_off(r);
    int rc;

    if ((size_t)(r->e - r->p) >= n) {
        *out = r->p;
        r->p += n;
        return 0;
    }
    if (n > goblin__rd_left(r))
        return goblin__snap_fail(r->res, GOBLIN_ESNAPTRUNC, off,
                                 "file is truncated: %zu bytes at byte %"
                                 PRIu64 " run past its end", n, off);
    if (n > r->tmp_cap) {
        uint8_t *t = goblin__mem_alloc(&r->mem, n);

        if (t == NULL)
            return fail(r, GOBLIN_ENOMEM, off, "out of memory for a value");
        goblin__mem_free(&r->mem, r->tmp, r->tmp_cap);
        r->tmp = t;
        r->tmp_cap = n;
    }
    if ((rc = goblin__rd_copy(r, r->tmp, n)) != 0)
        return rc;
    *out = r->tmp;
    return 0;
}

/* ---- header and trailer ---- */

static int check_header(struct goblin__rd *r, const uint8_t *h)
{
    uint32_t crc = le32_get(h + SH_CRC);

    r->version = le32_get(h + SH_VERSION);
    if (r->version < 1 || r->version > GOBLIN_SNAPSHOT_VERSION)
        return goblin__snap_fail(r->res, GOBLIN_ESNAPVERSION, SH_VERSION,
                                 "snapshot format version %" PRIu32
                                 " (at byte %d) is not supported: this "
                                 "library reads versions 1 to %d", r->version,
                                 SH_VERSION, GOBLIN_SNAPSHOT_VERSION);
    if (goblin__crc32c(0, h, SH_CRC) != crc)
        return fail(r, GOBLIN_ESNAPCRC, SH_CRC, "header checksum mismatch");
    r->block_max = le32_get(h + SH_BLOCK);
    if (le32_get(h + SH_SIZE) != SNAP_HEADER_SIZE || r->block_max == 0 ||
        r->block_max > SNAP_BLOCK_MAX || le32_get(h + SH_FLAGS) != 0)
        return fail(r, GOBLIN_ESNAPFORMAT, SH_SIZE, "bad header field");
    r->created_ms = (int64_t)le64_get(h + SH_CREATED);
    r->keys = le64_get(h + SH_KEYS);
    r->expires = le64_get(h + SH_EXPIRES);
    r->functions = r->version >= 2 ? le64_get(h + SH_FUNCTIONS) : 0;
    r->chain = goblin__crc32c(0, h, SNAP_HEADER_SIZE);
    return 0;
}

int goblin__rd_open(struct goblin__rd *r)
{
    uint8_t h[SNAP_HEADER_SIZE];
    size_t n = r->src->size < 8 ? (size_t)r->src->size : 8;
    int rc;

    if ((rc = read_src(r, h, n, "the header")) != 0)
        return rc;
    if (memcmp(h, SNAP_MAGIC, n) != 0)
        return goblin__snap_fail(r->res, GOBLIN_ESNAPMAGIC, 0, "not a Goblin"
                                 " snapshot: bad magic at byte 0");
    if (r->src->size < SNAP_HEADER_SIZE)
        return trunc_at(r, "the header");
    if ((rc = read_src(r, h + 8, SNAP_HEADER_SIZE - 8, "the header")) != 0)
        return rc;
    if ((rc = check_header(r, h)) != 0)
        return rc;
    if (r->src->fd >= 0) {
        r->blk = goblin__mem_alloc(&r->mem, r->block_max);
        if (r->blk == NULL)
            return fail(r, GOBLIN_ENOMEM, 0, "out of memory for a block");
        r->blk_cap = r->block_max;
    }
    r->e_off = r->src->off;
    if (r->res != NULL) {
        r->res->version = r->version;
        r->res->created_ms = r->created_ms;
    }
    return 0;
}

void goblin__rd_close(struct goblin__rd *r)
{
    goblin__mem_free(&r->mem, r->blk, r->blk_cap);
    goblin__mem_free(&r->mem, r->tmp, r->tmp_cap);
    r->blk = r->tmp = NULL;
    r->blk_cap = r->tmp_cap = 0;
}

static int check_trailer(struct goblin__rd *r, const uint8_t *t,
                         uint64_t at, uint64_t keys, uint32_t blocks)
{
    if (memcmp(t + ST_MAGIC, SNAP_END_MAGIC, 8) != 0)
        return fail(r, GOBLIN_ESNAPFORMAT, at, "bad trailer magic");
    if (goblin__crc32c(r->chain, t, ST_CRC) != le32_get(t + ST_CRC))
        return fail(r, GOBLIN_ESNAPCRC, at + ST_CRC,
                    "trailer checksum mismatch");
    if (le64_get(t + ST_KEYS) != keys ||
        le64_get(t + ST_PAYLOAD) != r->payload ||
        le32_get(t + ST_BLOCKS) != blocks)
        return fail(r, GOBLIN_ESNAPFORMAT, at, "trailer counts disagree "
                    "with the data");
    if (r->src->off != r->src->size)
        return fail(r, GOBLIN_ESNAPFORMAT, r->src->off, "data after the "
                    "trailer");
    return 0;
}

int goblin__rd_finish(struct goblin__rd *r, uint64_t keys)
{
    uint8_t t[SNAP_TRAILER_SIZE];
    uint32_t len, crc, blocks = r->index;
    uint64_t at = goblin__rd_off(r);
    int rc;

    if (r->p != r->e)
        return fail(r, GOBLIN_ESNAPFORMAT, at, "data after the last record");
    at = r->src->off;
    if ((rc = read_header(r, &len, &crc)) != 0)
        return rc;
    if (len != 0)
        return fail(r, GOBLIN_ESNAPFORMAT, at, "data after the last record");
    if (crc != goblin__snap_block_crc(0, r->index, NULL))
        return fail(r, GOBLIN_ESNAPCRC, at, "end marker checksum mismatch");
    at = r->src->off;
    if ((rc = read_src(r, t, sizeof(t), "the trailer")) != 0)
        return rc;
    return check_trailer(r, t, at, keys, blocks);
}
