/* exec.h - the execution of each command, shared by every protocol.
 *
 * A command runs in two steps. Its arguments are decoded first: from
 * argv text by its RESP handler (cmd_*.c, which keeps every text-parsing
 * error: "ERR value is not an integer or out of range", "ERR syntax
 * error", ...), or from a typed SBE frame's native fields (lib/sbe
 * req_*.c). Both then call the one execution function below, which runs
 * the command on the store and writes its whole reply through x->sink
 * with Redis's texts, so the two protocols cannot drift.
 *
 * Executions allocate nothing of their own and look nothing up by name:
 * a fast path may call them directly. Slices are borrowed for the call;
 * arrays of keys or pairs may live in the session's scratch array only
 * where the function says so. Grouped by type, as cmd_*.c are.
 */
#ifndef GOBLIN_EXEC_H
#define GOBLIN_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "command.h"
#include "goblin/keys.h"
#include "goblin/list.h"
#include "goblin/set.h"
#include "goblin/str.h"
#include "goblin/zset.h"
#include "pubsub/pubsub.h"
#include "store/bitmap.h"
#include "store/geohash.h"

/* ---- connection (cmd_conn.c) ---- */

/* PING, or PING message (message not NULL). */
void goblin__exec_ping(goblin__exec *x, const struct goblin_slice *message);
void goblin__exec_echo(goblin__exec *x, struct goblin_slice message);

/* ---- strings (cmd_string.c) ---- */

void goblin__exec_get(goblin__exec *x, struct goblin_slice key);
/* SET and its forms (SETEX, PSETEX): so as goblin_str_set takes it. */
void goblin__exec_set(goblin__exec *x, struct goblin_slice key,
                      struct goblin_slice value,
                      const struct goblin_set_options *so);
void goblin__exec_setnx(goblin__exec *x, struct goblin_slice key,
                        struct goblin_slice value);
void goblin__exec_getset(goblin__exec *x, struct goblin_slice key,
                         struct goblin_slice value);
void goblin__exec_getdel(goblin__exec *x, struct goblin_slice key);
/* GETEX with mode DEFAULT (no option), EX, PX, EXAT, PXAT or PERSIST. */
void goblin__exec_getex(goblin__exec *x, struct goblin_slice key,
                        enum goblin_ttl_mode mode, int64_t t);
/* MGET: keys must not be the session's scratch array (the values go
 * there). */
void goblin__exec_mget(goblin__exec *x, const struct goblin_slice *keys,
                       size_t n);
/* MSET and MSETNX: n keys and their n values. */
void goblin__exec_mset(goblin__exec *x, const struct goblin_slice *keys,
                       const struct goblin_slice *values, size_t n);
void goblin__exec_msetnx(goblin__exec *x, const struct goblin_slice *keys,
                         const struct goblin_slice *values, size_t n);
void goblin__exec_append(goblin__exec *x, struct goblin_slice key,
                         struct goblin_slice value);
void goblin__exec_strlen(goblin__exec *x, struct goblin_slice key);
void goblin__exec_setrange(goblin__exec *x, struct goblin_slice key,
                           int64_t offset, struct goblin_slice value);
void goblin__exec_getrange(goblin__exec *x, struct goblin_slice key,
                           int64_t start, int64_t end);
/* INCR, DECR, INCRBY: adds delta. */
void goblin__exec_incrby(goblin__exec *x, struct goblin_slice key,
                         int64_t delta);
/* DECRBY: subtracts decrement (INT64_MIN cannot be negated). */
void goblin__exec_decrby(goblin__exec *x, struct goblin_slice key,
                         int64_t decrement);
/* INCRBYFLOAT: the increment as a native number (incr), or as text that
 * the store reads after checking the key, in Redis's order (incr NULL). */
void goblin__exec_incrbyfloat(goblin__exec *x, struct goblin_slice key,
                              const long double *incr,
                              struct goblin_slice text);

/* ---- keys (cmd_keys.c) ---- */

/* DEL and UNLINK. */
void goblin__exec_del(goblin__exec *x, const struct goblin_slice *keys,
                      size_t n);
/* EXISTS and TOUCH. */
void goblin__exec_exists(goblin__exec *x, const struct goblin_slice *keys,
                         size_t n);
void goblin__exec_type(goblin__exec *x, struct goblin_slice key);
/* RENAME (nx 0) and RENAMENX (nx 1). */
void goblin__exec_rename(goblin__exec *x, struct goblin_slice key,
                         struct goblin_slice new_key, int nx);
/* KEYS: a pattern whose ptr is NULL matches every key. */
void goblin__exec_keys(goblin__exec *x, struct goblin_slice pattern);
/* SCAN: o as goblin_key_scan takes it; !type_known for a TYPE Goblin has
 * no keys of (the page is then empty, the cursor still moves). */
void goblin__exec_scan(goblin__exec *x, uint64_t cursor,
                       const struct goblin_scan_options *o, bool type_known);
void goblin__exec_randomkey(goblin__exec *x);
void goblin__exec_dbsize(goblin__exec *x);
/* FLUSHDB (all false: the session's database) and FLUSHALL (every
 * database); SYNC and ASYNC are the same in Goblin. */
void goblin__exec_flush(goblin__exec *x, bool all);

/* The EXPIRE family: t in the unit and base its command names. */
enum goblin__expire_kind {
    GOBLIN__EXPIRE, GOBLIN__PEXPIRE, GOBLIN__EXPIREAT, GOBLIN__PEXPIREAT,
};
/* flags: one of GOBLIN_EXPIRE_NX, _XX, _GT, _LT, or XX with GT or LT, or
 * 0 (the decoders refuse the other mixes). */
void goblin__exec_expire(goblin__exec *x, enum goblin__expire_kind kind,
                         struct goblin_slice key, int64_t t, int flags);
/* TTL, PTTL, EXPIRETIME and PEXPIRETIME. */
enum goblin__ttl_kind {
    GOBLIN__TTL, GOBLIN__PTTL, GOBLIN__EXPIRETIME, GOBLIN__PEXPIRETIME,
};
void goblin__exec_ttl(goblin__exec *x, enum goblin__ttl_kind kind,
                      struct goblin_slice key);
void goblin__exec_persist(goblin__exec *x, struct goblin_slice key);

/* ---- hashes (cmd_hash.c) ---- */

/* HSET and HMSET: fv holds field, value, field, value, ... (npairs). */
void goblin__exec_hset(goblin__exec *x, struct goblin_slice key,
                       const struct goblin_slice *fv, size_t npairs);
void goblin__exec_hmset(goblin__exec *x, struct goblin_slice key,
                        const struct goblin_slice *fv, size_t npairs);
void goblin__exec_hsetnx(goblin__exec *x, struct goblin_slice key,
                         struct goblin_slice field, struct goblin_slice value);
void goblin__exec_hget(goblin__exec *x, struct goblin_slice key,
                       struct goblin_slice field);
/* HMGET: fields must not be the session's scratch array. */
void goblin__exec_hmget(goblin__exec *x, struct goblin_slice key,
                        const struct goblin_slice *fields, size_t n);
void goblin__exec_hdel(goblin__exec *x, struct goblin_slice key,
                       const struct goblin_slice *fields, size_t n);
void goblin__exec_hlen(goblin__exec *x, struct goblin_slice key);
void goblin__exec_hexists(goblin__exec *x, struct goblin_slice key,
                          struct goblin_slice field);
void goblin__exec_hstrlen(goblin__exec *x, struct goblin_slice key,
                          struct goblin_slice field);
void goblin__exec_hgetall(goblin__exec *x, struct goblin_slice key);
void goblin__exec_hkeys(goblin__exec *x, struct goblin_slice key);
void goblin__exec_hvals(goblin__exec *x, struct goblin_slice key);
void goblin__exec_hincrby(goblin__exec *x, struct goblin_slice key,
                          struct goblin_slice field, int64_t incr);
/* HINCRBYFLOAT: a NaN increment is "not a valid float" (as the text
 * "nan" is), an infinite one "NaN or Infinity". */
void goblin__exec_hincrbyfloat(goblin__exec *x, struct goblin_slice key,
                               struct goblin_slice field, long double incr);
/* HRANDFIELD key, or (has_count) key count [WITHVALUES]; count within
 * goblin__rand_count_ok. */
void goblin__exec_hrandfield(goblin__exec *x, struct goblin_slice key,
                             bool has_count, int64_t count, bool withvalues);
/* HSCAN of a hash (the decoders have answered a missing key or another
 * type with goblin__scan_key); o->type is unused. */
void goblin__exec_hscan(goblin__exec *x, struct goblin_slice key,
                        uint64_t cursor, const struct goblin_scan_options *o);
/* HSCAN ... NOVALUES (Redis 7.4): the page's fields without values. */
void goblin__exec_hscan_fields(goblin__exec *x, struct goblin_slice key,
                               uint64_t cursor,
                               const struct goblin_scan_options *o);

/* ---- sets (cmd_set.c) ---- */

void goblin__exec_sadd(goblin__exec *x, struct goblin_slice key,
                       const struct goblin_slice *members, size_t n);
void goblin__exec_srem(goblin__exec *x, struct goblin_slice key,
                       const struct goblin_slice *members, size_t n);
void goblin__exec_sismember(goblin__exec *x, struct goblin_slice key,
                            struct goblin_slice member);
/* SMISMEMBER: members must not be the session's scratch array. */
void goblin__exec_smismember(goblin__exec *x, struct goblin_slice key,
                             const struct goblin_slice *members, size_t n);
void goblin__exec_scard(goblin__exec *x, struct goblin_slice key);
void goblin__exec_smembers(goblin__exec *x, struct goblin_slice key);
/* SRANDMEMBER key, or (has_count) key count; count > INT64_MIN. */
void goblin__exec_srandmember(goblin__exec *x, struct goblin_slice key,
                              bool has_count, int64_t count);
/* SPOP key, or (has_count) key count. */
void goblin__exec_spop(goblin__exec *x, struct goblin_slice key,
                       bool has_count, uint64_t count);
void goblin__exec_smove(goblin__exec *x, struct goblin_slice src,
                        struct goblin_slice dst, struct goblin_slice member);
/* SSCAN of a set (the decoders have answered a missing key or another
 * type with goblin__scan_key); o->type is unused. */
void goblin__exec_sscan(goblin__exec *x, struct goblin_slice key,
                        uint64_t cursor, const struct goblin_scan_options *o);
/* SINTER, SUNION, SDIFF (dst NULL) and their STORE forms; n >= 1. */
void goblin__exec_scombine(goblin__exec *x, enum goblin_set_op op,
                           const struct goblin_slice *dst,
                           const struct goblin_slice *keys, size_t n);
/* SINTERCARD: limit 0 is no limit. */
void goblin__exec_sintercard(goblin__exec *x, const struct goblin_slice *keys,
                             size_t n, uint64_t limit);

/* ---- SORT (cmd_sort.c) ---- */

struct goblin__sort {
    struct goblin_slice key;
    const struct goblin_slice *by;    /* NULL: by the elements */
    const struct goblin_slice *store; /* NULL: reply the result */
    const struct goblin_slice *get;   /* NULL: the first nget slices of
                                       * the session's scratch array */
    size_t nget;
    int64_t offset, count;            /* LIMIT; count < 0: all */
    bool desc, alpha;
    bool dontsort;                    /* a BY pattern without '*' */
};
/* SORT and SORT_RO, options decoded (store NULL for SORT_RO). */
void goblin__exec_sort(goblin__exec *x, const struct goblin__sort *a);

/* ---- sorted sets (cmd_zset.c, cmd_zrange.c) ---- */

/* ZADD: flags GOBLIN_ZADD_* (checked by goblin__zadd_check), with incr
 * the single pair is an increment; pairs may be in the session's scratch
 * bytes. */
void goblin__exec_zadd(goblin__exec *x, struct goblin_slice key,
                       unsigned flags, bool incr,
                       const struct goblin_zpair *pairs, size_t n);
void goblin__exec_zincrby(goblin__exec *x, struct goblin_slice key,
                          double incr, struct goblin_slice member);
void goblin__exec_zscore(goblin__exec *x, struct goblin_slice key,
                         struct goblin_slice member);
/* ZMSCORE: members must not be the session's scratch array. */
void goblin__exec_zmscore(goblin__exec *x, struct goblin_slice key,
                          const struct goblin_slice *members, size_t n);
void goblin__exec_zcard(goblin__exec *x, struct goblin_slice key);
/* ZRANK (rev 0) and ZREVRANK (rev 1). */
void goblin__exec_zrank(goblin__exec *x, struct goblin_slice key,
                        struct goblin_slice member, int rev, bool withscore);
void goblin__exec_zrem(goblin__exec *x, struct goblin_slice key,
                       const struct goblin_slice *members, size_t n);
/* ZCOUNT and ZLEXCOUNT: r by score or by lex. */
void goblin__exec_zcount(goblin__exec *x, struct goblin_slice key,
                         const struct goblin_zrange *r);
/* ZREMRANGEBYRANK, ZREMRANGEBYSCORE and ZREMRANGEBYLEX. */
void goblin__exec_zremrange(goblin__exec *x, struct goblin_slice key,
                            const struct goblin_zrange *r);
/* The ZRANGE family (r passed goblin__zrange_check). */
void goblin__exec_zrange(goblin__exec *x, struct goblin_slice key,
                         const struct goblin_zrange *r, bool withscores);
void goblin__exec_zrangestore(goblin__exec *x, struct goblin_slice dst,
                              struct goblin_slice src,
                              const struct goblin_zrange *r);

/* ---- sorted sets as wholes (cmd_zsetops.c) ---- */

/* ZPOPMIN (max 0) and ZPOPMAX (max 1): count >= 0, or !has_count. */
void goblin__exec_zpop(goblin__exec *x, struct goblin_slice key, int max,
                       bool has_count, int64_t count);
/* ZRANDMEMBER key, or (has_count) key count [WITHSCORES]; count within
 * goblin__rand_count_ok. */
void goblin__exec_zrandmember(goblin__exec *x, struct goblin_slice key,
                              bool has_count, int64_t count,
                              bool withscores);
/* ZSCAN of a sorted set (the decoders have answered a missing key or
 * another type with goblin__scan_key); o->type is unused. */
void goblin__exec_zscan(goblin__exec *x, struct goblin_slice key,
                        uint64_t cursor, const struct goblin_scan_options *o);

/* ZUNION, ZINTER, ZDIFF and their STORE forms, decoded. */
struct goblin__zcombine {
    enum goblin_zset_op op;
    const struct goblin_slice *dst; /* NULL: reply the result */
    const struct goblin_slice *keys; /* passed goblin__zkeys_check */
    size_t nkeys;
    const double *weights; /* NULL: all 1 */
    enum goblin_zset_aggregate agg;
    bool withscores;
};
void goblin__exec_zcombine(goblin__exec *x, const struct goblin__zcombine *a);
/* ZINTERCARD: limit >= 0 (0: no limit). */
void goblin__exec_zintercard(goblin__exec *x, const struct goblin_slice *keys,
                             size_t n, int64_t limit);

/* ---- Pub/Sub (cmd_pubsub.c) ---- */

/* SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE (by k) of n names, one reply each. */
void goblin__exec_subscribe(goblin__exec *x, enum goblin__ps_kind k,
                            const struct goblin_slice *names, size_t n);
/* UNSUBSCRIBE and its kin; n 0 drops every subscription of kind k. */
void goblin__exec_unsubscribe(goblin__exec *x, enum goblin__ps_kind k,
                              const struct goblin_slice *names, size_t n);
/* PUBLISH (shard false) and SPUBLISH: the number of receivers. */
void goblin__exec_publish(goblin__exec *x, bool shard,
                          struct goblin_slice channel,
                          struct goblin_slice message);

/* ---- lists (cmd_list.c) ---- */

/* LPUSH, RPUSH (exists false), LPUSHX, RPUSHX (exists true). */
void goblin__exec_listpush(goblin__exec *x, struct goblin_slice key,
                           enum goblin_list_end end,
                           const struct goblin_slice *elems, size_t n,
                           bool exists);
/* LPOP and RPOP key [count]: count >= 0, or !has_count (one element, a
 * bulk string or a null). */
void goblin__exec_listpop(goblin__exec *x, struct goblin_slice key,
                          enum goblin_list_end end, bool has_count,
                          int64_t count);
void goblin__exec_llen(goblin__exec *x, struct goblin_slice key);
void goblin__exec_lindex(goblin__exec *x, struct goblin_slice key,
                         int64_t index);
void goblin__exec_lset(goblin__exec *x, struct goblin_slice key,
                       int64_t index, struct goblin_slice elem);
void goblin__exec_lrange(goblin__exec *x, struct goblin_slice key,
                         int64_t start, int64_t stop);
void goblin__exec_ltrim(goblin__exec *x, struct goblin_slice key,
                        int64_t start, int64_t stop);
void goblin__exec_linsert(goblin__exec *x, struct goblin_slice key,
                          bool after, struct goblin_slice pivot,
                          struct goblin_slice elem);
void goblin__exec_lrem(goblin__exec *x, struct goblin_slice key,
                       int64_t count, struct goblin_slice elem);
/* LPOS: o checked as the RESP decoder checks it (rank not 0, count and
 * maxlen >= 0); without has_count the reply is one index or a null. */
void goblin__exec_lpos(goblin__exec *x, struct goblin_slice key,
                       struct goblin_slice elem,
                       const struct goblin_lpos_options *o, bool has_count);
/* LMOVE, and RPOPLPUSH (from TAIL, to HEAD). */
void goblin__exec_lmove(goblin__exec *x, struct goblin_slice src,
                        struct goblin_slice dst, enum goblin_list_end from,
                        enum goblin_list_end to);
/* LMPOP: keys (n >= 1) in order, count >= 1. */
void goblin__exec_lmpop(goblin__exec *x, const struct goblin_slice *keys,
                        size_t n, enum goblin_list_end end, int64_t count);

/* LMPOP's and BLMPOP's arguments after the command name (and BLMPOP's
 * timeout): numkeys, keys, LEFT|RIGHT, [COUNT count]. */
struct goblin__lmpop {
    const struct goblin_slice *keys; /* into argv */
    size_t nkeys;
    enum goblin_list_end end;
    int64_t count; /* >= 1 */
};
/* Parses them from argv[first] (numkeys) with Redis's texts and order;
 * replies and returns false on an error. */
bool goblin__lmpop_args(goblin__exec *x, int argc,
                        const struct goblin_slice *argv, int first,
                        struct goblin__lmpop *a);
/* For the blocking forms: the index of the first of keys that holds a
 * non-empty list, -1 when none does, or GOBLIN_EWRONGTYPE when a key of
 * another type comes first (Redis checks keys in order). */
int64_t goblin__list_first_nonempty(goblin_store *st,
                                    const struct goblin_slice *keys,
                                    size_t n);
/* Replies an array of up to count elements popped at end of key, which
 * holds a non-empty list (LPOP key count, and LMPOP's inner array). */
void goblin__reply_list_pop(goblin__exec *x, struct goblin_slice key,
                            enum goblin_list_end end, int64_t count);

/* ---- bitmaps (cmd_bitmap.c) ---- */

/* A BITCOUNT or BITPOS range: start and end in bytes, or bits (isbit);
 * end_given is BITPOS's "an end was written". */
struct goblin__bitrange {
    int64_t start, end;
    bool isbit;
    bool end_given;
};

/* SETBIT: offset within proto-max-bulk-len bytes, on 0 or 1. */
void goblin__exec_setbit(goblin__exec *x, struct goblin_slice key,
                         uint64_t offset, int on);
void goblin__exec_getbit(goblin__exec *x, struct goblin_slice key,
                         uint64_t offset);
/* BITCOUNT and BITPOS (bit 0 or 1): r NULL is the whole string. */
void goblin__exec_bitcount(goblin__exec *x, struct goblin_slice key,
                           const struct goblin__bitrange *r);
void goblin__exec_bitpos(goblin__exec *x, struct goblin_slice key, int bit,
                         const struct goblin__bitrange *r);
/* BITOP: NOT with n == 1. */
void goblin__exec_bitop(goblin__exec *x, enum goblin__bitop op,
                        struct goblin_slice dst,
                        const struct goblin_slice *keys, size_t n);
/* BITFIELD (and BITFIELD_RO, whose decoders refuse writes): n operations,
 * out room for n results. */
void goblin__exec_bitfield(goblin__exec *x, struct goblin_slice key,
                           const struct goblin__bf_op *ops, size_t n,
                           struct goblin__bf_result *out);

/* ---- LCS (cmd_lcs.c) ---- */

struct goblin__lcs_options {
    bool len, idx, withmatchlen;
    int64_t minmatchlen; /* >= 0 */
};
void goblin__exec_lcs(goblin__exec *x, struct goblin_slice key1,
                      struct goblin_slice key2,
                      const struct goblin__lcs_options *o);

/* ---- HyperLogLog (cmd_hll.c) ---- */

void goblin__exec_pfadd(goblin__exec *x, struct goblin_slice key,
                        const struct goblin_slice *elems, size_t n);
/* PFCOUNT of one key, or of the union of n keys. */
void goblin__exec_pfcount(goblin__exec *x, const struct goblin_slice *keys,
                          size_t n);
/* PFMERGE: keys are the inputs, dst usually among them (keys[0]). */
void goblin__exec_pfmerge(goblin__exec *x, struct goblin_slice dst,
                          const struct goblin_slice *keys, size_t n);

/* ---- geo (cmd_geo.c) ---- */

/* GEOADD: pairs scored with goblin__geohash_score; flags NX, XX, CH. */
void goblin__exec_geoadd(goblin__exec *x, struct goblin_slice key,
                         unsigned flags, const struct goblin_zpair *pairs,
                         size_t n);
/* GEODIST in units of to_meter metres. */
void goblin__exec_geodist(goblin__exec *x, struct goblin_slice key,
                          struct goblin_slice m1, struct goblin_slice m2,
                          double to_meter);
/* GEOPOS (pos) and GEOHASH of n members. */
void goblin__exec_geopos(goblin__exec *x, struct goblin_slice key,
                         const struct goblin_slice *members, size_t n,
                         bool pos);

/* A GEOSEARCH / GEORADIUS query, decoded: the shape's centre resolved. */
struct goblin__geo_query {
    struct goblin_slice key;
    struct goblin__geo_shape shape;
    bool withdist, withhash, withcoord, any, storedist, has_store;
    bool radius;    /* GEORADIUS*: its STORE reports "georadiusstore" */
    int sort;       /* 0 none, 1 ASC, 2 DESC */
    int64_t count;  /* 0: no COUNT */
    struct goblin_slice store;
};
void goblin__geo_query_init(struct goblin__geo_query *q);
/* The search, on a key known to hold a sorted set. */
void goblin__exec_geosearch(goblin__exec *x, struct goblin__geo_query *q);

/* ---- argument checks both decoders make, with Redis's texts ---- */

/* ZADD's option mixes (GOBLIN_ZADD_* flags, incr) for n pairs, in
 * Redis's order; replies and returns false on a refused one. */
bool goblin__zadd_check(goblin__exec *x, unsigned flags, bool incr,
                        size_t n);
/* ZRANGE's LIMIT only by score or lex, WITHSCORES not by lex; replies
 * and returns false. */
bool goblin__zrange_check(goblin__exec *x, enum goblin_zrange_by by,
                          bool limit, bool withscores);
/* The input keys of ZUNION, ZINTER, ZDIFF (and STORE) and ZINTERCARD,
 * before their options, as Redis checks them: none is "at least 1 input
 * key", another type than a sorted set WRONGTYPE. Replies and returns
 * false. */
bool goblin__zkeys_check(goblin__exec *x, const struct goblin_slice *keys,
                         size_t n);

/* Texts several decoders share. */
#define GOBLIN__ERR_POSITIVE "ERR value is out of range, must be positive"
#define GOBLIN__ERR_WEIGHT "ERR weight value is not a float"
#define GOBLIN__ERR_LIMIT_NEGATIVE "ERR LIMIT can't be negative"

#endif
