/* keyspace.h - the one namespace of keys, and the interface the type
 * modules (strings, hashes, sorted sets) use to reach their objects.
 *
 * A key holds exactly one type. Hash and sorted-set objects are owned by
 * the keyspace once added: deleting, expiring or overwriting the key frees
 * them through goblin__hash_free / goblin__zset_free.
 */
#ifndef GOBLIN_KEYSPACE_H
#define GOBLIN_KEYSPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "goblin/common.h"
#include "swiss.h"

/* Keys live in dense ids 0..count-1. Each id maps to one record, a block
 * holding the key's bytes and its value (a string inline; for hashes and
 * sorted sets the object pointer). Record pointers sit in pages of
 * GOBLIN__KS_PAGE, so the array grows without copying. Removing a key moves
 * the last id into its place (swap-remove). Keys with a deadline also have
 * an entry in the dense expiry array (deadline, id); their record stores
 * that entry's position. keyspace.c documents the record layout. */
#define GOBLIN__KS_PAGE_SHIFT 10
#define GOBLIN__KS_PAGE (1u << GOBLIN__KS_PAGE_SHIFT)
#define GOBLIN__LIMBO 4

struct goblin__exp_page {
    int64_t when[GOBLIN__KS_PAGE]; /* deadline, ms since the epoch */
    uint32_t id[GOBLIN__KS_PAGE];  /* the key holding it */
};

struct goblin__keyspace {
    struct goblin__swiss index;     /* key bytes -> id */
    void **pages;                   /* pages of record pointers, by id */
    size_t npages, pages_cap;       /* pages allocated, directory slots */
    size_t count;                   /* keys */
    void **epages;                  /* struct goblin__exp_page, by pos */
    size_t nepages, epages_cap;
    size_t exp_count;               /* keys with a deadline */
    size_t exp_cursor;              /* where the active expiry resumes */
    size_t lru_cursor;              /* where stamp aging resumes */
    /* Records that left the keyspace but whose bytes may still be in use
     * (views handed out or passed in); freed when the next write begins. */
    uint8_t *limbo[GOBLIN__LIMBO];
    size_t nlimbo;
};

void goblin__keyspace_init(goblin_store *st);
void goblin__keyspace_free(goblin_store *st);

/* None of the calls below calls goblin__key_changed, except that a lazily
 * expired key is reported deleted through it: the caller reports its own
 * change, once per changed key. */

/* Finds key for an operation on type `type` (lazily deleting it first if it
 * has expired). Returns 1 and sets *slot to the place holding the object
 * pointer, which the caller may read or replace (e.g. after converting a
 * compact form to a full one); 0 if the key is absent; GOBLIN_EWRONGTYPE if
 * it holds another type. *slot stays valid until the next key is added or
 * removed or its expiry changes. For GOBLIN_TYPE_STRING *slot is NULL. */
int goblin__key_lookup(goblin_store *st, struct goblin_slice key,
                       enum goblin_type type, void ***slot);

/* Adds key, known to be absent, holding obj of type, with no expiry.
 * Returns 0, or GOBLIN_ENOMEM with nothing added (obj stays the caller's). */
int goblin__key_add(goblin_store *st, struct goblin_slice key,
                    enum goblin_type type, void *obj);

/* Replaces whatever key holds (any type, any expiry) with obj of type and
 * no expiry, as a STORE-style command does. Returns 0, or GOBLIN_ENOMEM with
 * nothing changed (obj stays the caller's). */
int goblin__key_replace(goblin_store *st, struct goblin_slice key,
                        enum goblin_type type, void *obj);

/* Removes key, which is present, and frees its object: used when a
 * collection becomes empty. */
void goblin__key_remove(goblin_store *st, struct goblin_slice key);

/* ---- Inside the store core (keyspace, strings, expiry) ---- */

/* String encodings, as OBJECT ENCODING names them. */
enum goblin__str_enc {
    GOBLIN__STR_INT = 0,    /* "int": text that string2ll accepts */
    GOBLIN__STR_EMB = 1,    /* "embstr": up to 44 bytes, set whole */
    GOBLIN__STR_RAW = 2,    /* "raw": longer, or changed in place */
};
#define GOBLIN__EMBSTR_MAX 44

/* Byte 0 of a record keeps the type in its low three bits. */
#define GOBLIN__REC_TYPE_MASK 0x07

/* A record's key and where its value starts. */
struct goblin__rec {
    const uint8_t *key;
    size_t klen;
    size_t voff;
};

void goblin__rec_parse(const uint8_t *rec, struct goblin__rec *r);
static inline enum goblin_type goblin__rec_type(const uint8_t *rec)
{
    return (enum goblin_type)(rec[0] & GOBLIN__REC_TYPE_MASK);
}
size_t goblin__rec_size(const uint8_t *rec);
/* The value of a string record (borrowed from the record). */
struct goblin_slice goblin__rec_str(const uint8_t *rec);

/* Finds key, lazily deleting it if expired. Returns 1 and sets *id, or 0. */
int goblin__key_find(goblin_store *st, struct goblin_slice key,
                     uint32_t *id);
/* GET's lookup in one call: finds key (lazily deleting it if expired)
 * and, when it is a string, sets *value to a view of its bytes. Returns 1,
 * 0 when absent, or GOBLIN_EWRONGTYPE. */
int goblin__key_get_str(goblin_store *st, struct goblin_slice key,
                        struct goblin_slice *value);
/* The record of id (valid until the next write). */
uint8_t *goblin__key_rec(const goblin_store *st, uint32_t id);
/* Deletes the key at id; its record stays readable until the next write
 * begins. Does not call goblin__key_changed. */
void goblin__key_delete_id(goblin_store *st, uint32_t id);
/* Deletes the key at id and frees its record at once: for expired keys
 * met by calls that read, whose bytes no view in use can point to. */
void goblin__key_drop_id(goblin_store *st, uint32_t id);
/* The key's access stamp: st->lru_clock when it was last looked up
 * (keyspace.c keeps it in the id's page slot). */
uint16_t goblin__key_stamp(const goblin_store *st, uint32_t id);
void goblin__key_set_stamp(goblin_store *st, uint32_t id, uint16_t stamp);

/* The expiry array: deadline and key id at position pos < exp_count. */
int64_t goblin__exp_when(const goblin_store *st, size_t pos);
uint32_t goblin__exp_id(const goblin_store *st, size_t pos);

/* The deadline of the key at id in ms, or -1 when it has none. */
int64_t goblin__key_deadline(const goblin_store *st, uint32_t id);
/* Gives the key at id a deadline. Returns 0 or GOBLIN_ENOMEM (nothing
 * changed). Moves the key's record. */
int goblin__key_set_deadline(goblin_store *st, uint32_t id, int64_t when);
/* Drops the key's deadline. Returns 1 if it had one, 0 if not, or
 * GOBLIN_ENOMEM (nothing changed). Moves the key's record. */
int goblin__key_clear_deadline(goblin_store *st, uint32_t id);

/* What goblin__key_put_str makes of a key. */
enum { GOBLIN__TTL_CLEAR, GOBLIN__TTL_KEEP, GOBLIN__TTL_SET };
struct goblin__str_put {
    struct goblin_slice key;
    int found;          /* key exists under id (found by goblin__key_find) */
    uint32_t id;
    size_t len;         /* the new value's length */
    int enc;            /* enum goblin__str_enc; int and embstr: len <= 44 */
    size_t cap;         /* raw only: bytes to reserve, >= len, at most
                         * GOBLIN_STRING_LIMIT (a u32 in the record) */
    int ttl;            /* GOBLIN__TTL_*: the deadline after the put */
    int64_t when;       /* with GOBLIN__TTL_SET */
};
/* Makes key hold a string of p->len bytes, replacing whatever it held, and
 * returns where the caller writes them (their content is undefined). The
 * old record stays readable until the next write begins. Returns NULL on GOBLIN_ENOMEM, with nothing changed. */
uint8_t *goblin__key_put_str(goblin_store *st, const struct goblin__str_put *p);
int goblin__rec_str_enc(const uint8_t *rec);
size_t goblin__rec_str_spare(const uint8_t *rec);
void goblin__rec_str_set_len(uint8_t *rec, size_t len);

/* MSET's core: sets keys[i] to values[i] (encoded as enc_for says),
 * dropping deadlines, all or none. Reports each key changed. Returns 0 or
 * GOBLIN_ENOMEM with nothing changed. */
int goblin__key_mset(goblin_store *st, const struct goblin_slice *keys,
                     const struct goblin_slice *values, size_t n,
                     int (*enc_for)(struct goblin_slice value));

/* Bytes of the keyspace's own tables (index, id pages, expiry pages), as
 * opposed to the records and objects: INFO's used_memory_overhead. */
size_t goblin__keyspace_overhead(const goblin_store *st);
/* The same, split as MEMORY STATS shows it: the key index and record
 * pages (*main), the expiry pages (*expires). */
void goblin__keyspace_overhead_parts(const goblin_store *st, size_t *main,
                                     size_t *expires);

/* MEMORY USAGE: the bytes key takes, its record as used_memory charges
 * it plus the blocks of its collection (the sizes asked of the
 * allocator). Finds key as goblin__key_find does (an expired key is
 * deleted). Returns 1 and sets *out, or 0 when key is absent. */
int goblin__key_memory(goblin_store *st, struct goblin_slice key,
                       size_t *out);

/* Called first by every public call that writes: frees the records kept
 * for views that the previous calls handed out. */
void goblin__write_begin(goblin_store *st);

/* Provided by the type modules and called by the keyspace. */
void goblin__hash_free(goblin_store *st, void *obj);
/* Frees the object of a collection of the given type (keyspace.c). */
void goblin__obj_free(goblin_store *st, enum goblin_type type, void *obj);
void goblin__zset_free(goblin_store *st, void *obj);
/* Copies a collection's object into store dst (keyspace.c dispatches by
 * type to the modules' copies, obj_copy.c). 0, GOBLIN_ENOMEM or
 * GOBLIN_ELIMIT, with nothing allocated on failure. */
int goblin__obj_copy(goblin_store *dst, enum goblin_type type,
                     const void *obj, void **out);
int goblin__hash_obj_copy(goblin_store *dst, const void *obj, void **out);
int goblin__zset_obj_copy(goblin_store *dst, const void *obj, void **out);
int goblin__list_obj_copy(goblin_store *dst, const void *obj, void **out);
int goblin__set_obj_copy(goblin_store *dst, const void *obj, void **out);
/* The object pointer of a collection record. */
void *goblin__rec_obj(const uint8_t *rec);
/* Copies key of src to new_key of dst (which may be src, with another
 * key), value, encoding and deadline (key_copy.c). Returns 1 when copied,
 * 0 when key is absent or new_key exists and !replace, or GOBLIN_ENOMEM /
 * GOBLIN_ELIMIT with nothing changed. Reports new_key changed in dst. */
int goblin__key_copy(goblin_store *src, struct goblin_slice key,
                     goblin_store *dst, struct goblin_slice new_key,
                     bool replace);
const char *goblin__hash_encoding(const void *obj); /* "listpack" or "hashtable" */
const char *goblin__zset_encoding(const void *obj); /* "listpack" or "skiplist" */
void goblin__list_free(goblin_store *st, void *obj);
const char *goblin__list_encoding(const void *obj); /* "quicklist" */

#endif
