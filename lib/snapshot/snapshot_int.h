/* snapshot_int.h - what the persistence files share: result reporting,
 * the byte source both loaders read from, and the store-side helpers that
 * put loaded keys into a store (and take them all out again on failure).
 */
#ifndef GOBLIN_SNAPSHOT_INT_H
#define GOBLIN_SNAPSHOT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "goblin/snapshot.h"
#include "goblin/zset.h"
#include "store/store.h"

/* ---- results ---- */

/* Fills res (may be NULL) for a failure: code, offset and a message made
 * from fmt. Returns code, so a caller can `return goblin__snap_fail(...)`.
 */
int goblin__snap_fail(struct goblin_snapshot_result *res, int code,
                      uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Writes key as text for a message: printable ASCII as is, other bytes as
 * \xHH, cut to about 48 characters with "..." after. Returns buf. */
const char *goblin__snap_keytext(char *buf, size_t cap, const void *key,
                                 size_t len);
#define GOBLIN__KEYTEXT_CAP 200

/* ---- memory of a store or, for verify, of a plain allocator ---- */

struct goblin__mem {
    goblin_store *st;                   /* when not NULL, used */
    const struct goblin_allocator *al;  /* else this (NULL: libc) */
};

void *goblin__mem_alloc(const struct goblin__mem *m, size_t size);
void goblin__mem_free(const struct goblin__mem *m, void *p, size_t size);

/* ---- a byte source: a file descriptor or a buffer in memory ---- */

struct goblin__src {
    int fd;              /* -1 for memory */
    const uint8_t *mem;  /* memory: the bytes */
    uint64_t size;       /* bytes in all (a file's size at open) */
    uint64_t off;        /* bytes consumed so far */
};

/* Opens path read-only into s (a regular file, its size read once).
 * Returns 0 or -errno (GOBLIN_EINVAL when not a regular file). */
int goblin__src_open(struct goblin__src *s, const char *path);
void goblin__src_mem(struct goblin__src *s, const void *data, size_t len);
void goblin__src_close(struct goblin__src *s);

/* Reads exactly n bytes (n <= size - off) into dst. Returns 0, -errno, or
 * GOBLIN_ESNAPTRUNC when the file shrank under us. */
int goblin__src_read(struct goblin__src *s, void *dst, size_t n);

/* ---- putting keys into a store ---- */

/* Adds string key (known to be absent, else GOBLIN_ESNAPFORMAT for a
 * duplicate) with value and deadline (-1: none). enc is the string
 * encoding to keep when it is valid for value, or -1 to choose as SET
 * does. Returns 0, GOBLIN_ESNAPFORMAT, GOBLIN_ELIMIT or GOBLIN_ENOMEM. */
int goblin__snap_put_str(goblin_store *st, struct goblin_slice key,
                         struct goblin_slice value, int enc,
                         int64_t deadline);

/* Adds key holding obj (a hash or sorted-set object) with deadline (-1:
 * none). On success the keyspace owns obj; on failure (GOBLIN_ESNAPFORMAT
 * for a duplicate key, GOBLIN_ENOMEM) obj is still the caller's. */
int goblin__snap_put_obj(goblin_store *st, struct goblin_slice key,
                         enum goblin_type type, void *obj, int64_t deadline);

/* Removes every key from st without reporting changes: undoes a load
 * into an empty store, and zeroes res's counts of what was loaded (its
 * error fields stay). */
void goblin__snap_rollback(goblin_store *st,
                           struct goblin_snapshot_result *res);

/* res, or local when res is NULL, zeroed: where a load reports. */
struct goblin_snapshot_result *goblin__snap_res_init(
    struct goblin_snapshot_result *res, struct goblin_snapshot_result *local);

/* Builds a sorted-set object from n pairs in strictly increasing (score,
 * member) order. Checks that no member appears twice (the bulk builder
 * trusts its input). Returns 0, GOBLIN_ESNAPFORMAT (unordered, NaN or a
 * duplicate), GOBLIN_ELIMIT or GOBLIN_ENOMEM. */
int goblin__snap_zset_build(goblin_store *st, const struct goblin_zpair *p,
                            size_t n, void **out);

/* The full-form builders (snap_build.c). goblin__snap_zset_full: as
 * goblin__snap_zset_build for a set that is not compact-sized, which it
 * does not check. goblin__snap_hash_full: an empty full hash whose index
 * already has room for n fields, to fill with goblin__hash_obj_set. */
int goblin__snap_zset_full(goblin_store *st, const struct goblin_zpair *p,
                           size_t n, void **out);
int goblin__snap_hash_full(goblin_store *st, size_t n, void **out);

/* goblin__hash_obj_set for a load: on a full hash, in small batches whose
 * index slots are fetched ahead. Not all or nothing (a failed load drops
 * the whole object). Returns the number of new fields or an error. */
int goblin__snap_hash_set(goblin_store *st, void **objp,
                          const struct goblin_slice *fv, size_t n);

/* The hash or sorted-set object of a keyspace record. */
void *goblin__snap_rec_obj(const uint8_t *rec);

/* ---- atomic files (snap_write.c) ---- */

/* Writes a whole file to fd from its start; returns 0 or an error after
 * filling res. */
typedef int (*goblin__save_fn)(void *ctx, int fd,
                               struct goblin_snapshot_result *res);
/* Writes path atomically with fn: path.tmp-PID, fsync, rename, fsync of
 * the directory; the temporary file is removed on failure. */
int goblin__save_atomic(const char *path, goblin__save_fn fn, void *ctx,
                        struct goblin_snapshot_result *res);

/* ---- DUMP and RESTORE (rdb_write.c) ---- */

/* Appends the RDB encoding of the record's value (type byte, body) to
 * out: a hash's fields past their deadlines at now are left out, the
 * others go without theirs. 0, GOBLIN_ENOMEM or GOBLIN_ESNAPTYPE. */
struct goblin_buf;
int goblin__rdb_write_value(const uint8_t *rec, int64_t now,
                            struct goblin_buf *out);
/* Appends the DUMP payload of the record (value, RDB version 10 as 2
 * bytes little-endian, CRC64 of both, little-endian). */
int goblin__dump_payload(goblin_store *st, const uint8_t *rec,
                         struct goblin_buf *out);
/* Checks a payload's footer as Redis's verifyDumpPayload: 0, or
 * GOBLIN_ESNAPFORMAT (too short), GOBLIN_ESNAPVERSION (newer than 10),
 * GOBLIN_ESNAPCRC, GOBLIN_ENOMEM. */
int goblin__dump_verify(goblin_store *st, const void *p, size_t len);
/* Loads a checked payload's value as key into scratch, an empty store.
 * 0 or the RDB import's error (the value is bad or of a type Goblin does
 * not hold). */
int goblin__dump_restore(goblin_store *scratch, struct goblin_slice key,
                         const void *payload, size_t len);

/* RDB's length and string encodings (an integer string's text as
 * RDB_ENC_INT8/16/32 when it fits), for rdb_save.c. */
void goblin__rdb_put_len(struct goblin_buf *b, uint64_t n);
void goblin__rdb_put_str(struct goblin_buf *b, struct goblin_slice s);
void goblin__rdb_put_int_str(struct goblin_buf *b, struct goblin_slice s);
/* An allocator that charges st (goblin__alloc): for a goblin_buf. */
struct goblin_allocator;
void goblin__snap_allocator(goblin_store *st, struct goblin_allocator *a);

/* The quicklist DUMP writes for a list object: its node count and the
 * bytes of its nodes (DEBUG OBJECT's ql_nodes, ql_uncompressed_size). */
void goblin__rdb_list_shape(const void *obj, size_t *nodes, size_t *bytes);

/* ---- the listpack writer (lp_write.c) ---- */

/* Bytes element e takes as a listpack entry. */
size_t goblin__lp_entry_size(struct goblin_slice e);
/* Bytes of a whole listpack whose entries take entry_bytes. */
size_t goblin__lp_size(size_t entry_bytes);
/* A listpack is its header (its total size and count), its entries,
 * its end byte; each put marks b failed when it cannot grow. */
void goblin__lp_put_header(struct goblin_buf *b, size_t entry_bytes,
                           size_t count);
void goblin__lp_put_entry(struct goblin_buf *b, struct goblin_slice e);
void goblin__lp_put_end(struct goblin_buf *b);

/* The string encoding SET would give value (enum goblin__str_enc). */
int goblin__snap_str_enc(struct goblin_slice value);

/* ---- function libraries (an engine's FUNCTION libraries) ----
 *
 * What a file carries besides keys: Goblin snapshots (version 2) and RDB
 * files (RDB_OPCODE_FUNCTION2) hold each library's whole code. The
 * engine passes one of these to the _fn forms below; the public calls
 * pass NULL, which writes no library and reads past the ones a file
 * holds. */
struct goblin__fnlibs {
    const struct goblin_slice *codes; /* saving: the codes, in load order */
    size_t n;
    /* loading: called with each library's code in file order (a view,
     * valid for the call); 0, or an error code with the reason in err
     * (cap bytes), which fails the load. */
    int (*add)(void *ctx, struct goblin_slice code, char *err, size_t cap);
    void *ctx;
};

int goblin__snapshot_save_dbs_fn(goblin_store *const *dbs, size_t count,
                                 const char *path,
                                 const struct goblin__fnlibs *fns,
                                 struct goblin_snapshot_result *res);
int goblin__snapshot_load_dbs_fn(goblin_store *const *dbs, size_t count,
                                 const char *path,
                                 const struct goblin__fnlibs *fns,
                                 struct goblin_snapshot_result *res);
int goblin__rdb_import_dbs_fn(goblin_store *const *dbs, size_t count,
                              const char *path, unsigned flags,
                              const struct goblin__fnlibs *fns,
                              struct goblin_snapshot_result *res);
int goblin__rdb_write_fd_fn(goblin_store *const *dbs, size_t count, int fd,
                            const struct goblin_rdb_aux *aux,
                            const struct goblin__fnlibs *fns,
                            struct goblin_snapshot_result *res);
int goblin__rdb_write_fn(goblin_store *const *dbs, size_t count,
                         const char *path, const struct goblin_rdb_aux *aux,
                         const struct goblin__fnlibs *fns,
                         struct goblin_snapshot_result *res);

#endif
