/* rdb.h - reading Redis RDB files: the buffered reader with its running
 * CRC64, RDB's lengths, strings and doubles, and the packed encodings
 * (ziplist, listpack, zipmap) that small hashes and sorted sets use.
 *
 * Every length read from the file is checked against the bytes left
 * before anything is allocated for it; the only allocation not bounded by
 * the file's size is an LZF string's output, which is bounded by what LZF
 * can expand to (88 times its input: a 3-byte back reference yields at
 * most 264 bytes) and by 4 GiB - 1 (SNAP_STR_MAX).
 */
#ifndef GOBLIN_SNAPSHOT_RDB_H
#define GOBLIN_SNAPSHOT_RDB_H

#include <stdbool.h>
#include <stdint.h>

#include "checksum.h"
#include "snapshot_int.h"

/* RDB types and opcodes (Redis's rdb.h). */
enum {
    RDB_TYPE_STRING = 0,
    RDB_TYPE_LIST = 1,
    RDB_TYPE_SET = 2,
    RDB_TYPE_ZSET = 3,
    RDB_TYPE_HASH = 4,
    RDB_TYPE_ZSET_2 = 5,
    RDB_TYPE_HASH_ZIPMAP = 9,
    RDB_TYPE_LIST_ZIPLIST = 10,
    RDB_TYPE_SET_INTSET = 11,
    RDB_TYPE_ZSET_ZIPLIST = 12,
    RDB_TYPE_HASH_ZIPLIST = 13,
    RDB_TYPE_LIST_QUICKLIST = 14,
    RDB_TYPE_HASH_LISTPACK = 16,
    RDB_TYPE_ZSET_LISTPACK = 17,
    RDB_TYPE_LIST_QUICKLIST_2 = 18,
    RDB_TYPE_SET_LISTPACK = 20,
    RDB_OPCODE_FUNCTION2 = 245,
    RDB_OPCODE_FUNCTION_PRE_GA = 246,
    RDB_OPCODE_MODULE_AUX = 247,
    RDB_OPCODE_IDLE = 248,
    RDB_OPCODE_FREQ = 249,
    RDB_OPCODE_AUX = 250,
    RDB_OPCODE_RESIZEDB = 251,
    RDB_OPCODE_EXPIRETIME_MS = 252,
    RDB_OPCODE_EXPIRETIME = 253,
    RDB_OPCODE_SELECTDB = 254,
    RDB_OPCODE_EOF = 255,
};

#define RDB_VERSION_MAX 11

struct goblin__rdb {
    struct goblin__mem mem;
    struct goblin__src *src;
    struct goblin_snapshot_result *res;
    uint8_t *buf;           /* window over the file (or the caller's bytes) */
    size_t cap;             /* bytes allocated (0: memory source) */
    size_t pos, end;        /* unread bytes are buf[pos, end) */
    uint64_t base;          /* file offset of buf[0] */
    uint64_t crc;           /* CRC64 of the file's bytes [0, crc_done) */
    uint64_t crc_done;
    struct goblin__crc64 *tab;
    uint8_t *lzf;           /* output of the last LZF string */
    size_t lzf_cap;
    char num[32];           /* text of the last integer string */
};

/* File offset of the next unread byte. */
static inline uint64_t goblin__rdb_off(const struct goblin__rdb *r)
{
    return r->base + r->pos;
}

/* Bytes not yet read. */
static inline uint64_t goblin__rdb_left(const struct goblin__rdb *r)
{
    return r->src->size - goblin__rdb_off(r);
}

int goblin__rdb_init(struct goblin__rdb *r);
void goblin__rdb_fini(struct goblin__rdb *r);

/* A view of the next n bytes, valid until the next read. */
int goblin__rdb_take(struct goblin__rdb *r, size_t n, const uint8_t **out);
int goblin__rdb_byte(struct goblin__rdb *r, uint8_t *b);

/* An RDB length; *enc says whether it was a special encoding instead
 * (then *len is the encoding: 0-2 integers, 3 LZF). enc may be NULL, in
 * which case an encoding is an error. */
int goblin__rdb_len(struct goblin__rdb *r, uint64_t *len, bool *enc);

/* An RDB string (raw, integer or LZF), as a view valid until the next
 * read. */
int goblin__rdb_string(struct goblin__rdb *r, struct goblin_slice *s);

/* A score: text (ZSET) or binary (ZSET_2). */
int goblin__rdb_double_text(struct goblin__rdb *r, double *d);
int goblin__rdb_double_bin(struct goblin__rdb *r, double *d);

/* Checks the checksum after the EOF opcode (version >= 5) and that the
 * file ends there. */
int goblin__rdb_finish(struct goblin__rdb *r, unsigned version);

/* Fails with a message "what at byte N". */
int goblin__rdb_fail(struct goblin__rdb *r, int code, uint64_t off,
                     const char *what);

/* ---- packed encodings ---- */

/* Called with each element of a packed blob, in order (a view, valid for
 * the call; integers come as their decimal text). Return 0 to go on. */
typedef int (*goblin__rdb_elem_fn)(void *ctx, struct goblin_slice e);

/* Walks a ziplist, a listpack or a zipmap held in blob[0, len), checking
 * its structure as it goes. Returns the number of elements (a zipmap
 * gives field, value, field, value...), GOBLIN_ESNAPFORMAT, or fn's
 * nonzero return. fn may be NULL (just count and check). */
int64_t goblin__rdb_ziplist(const uint8_t *blob, size_t len,
                            goblin__rdb_elem_fn fn, void *ctx);
int64_t goblin__rdb_listpack(const uint8_t *blob, size_t len,
                             goblin__rdb_elem_fn fn, void *ctx);
int64_t goblin__rdb_zipmap(const uint8_t *blob, size_t len,
                           goblin__rdb_elem_fn fn, void *ctx);

/* ---- lists (rdb_list.c) ---- */

/* Reads a list value of type t (RDB_TYPE_LIST, _LIST_ZIPLIST,
 * _LIST_QUICKLIST or _LIST_QUICKLIST_2) and, unless skip, puts it under
 * key with deadline (-1: none); *stored says whether a key was added (an
 * empty list is not). Returns 0 or an error (nothing added). */
int goblin__rdb_list(struct goblin__rdb *r, goblin_store *st, unsigned t,
                     struct goblin_slice key, int64_t deadline, bool skip,
                     bool *stored);
/* A set of RDB type t (SET, SET_INTSET or SET_LISTPACK) read into a new
 * object *out (NULL when empty, or when st is NULL: only checked); *n
 * its size. 0, GOBLIN_ESNAPFORMAT or GOBLIN_ENOMEM (rdb_set.c). */
int goblin__rdb_set(struct goblin__rdb *r, goblin_store *st, unsigned t,
                    void **out, uint64_t *n);

#endif
