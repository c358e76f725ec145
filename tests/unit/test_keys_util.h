/* test_keys_util.h - what the keyspace, string and expiry tests share:
 * slice assertions, a snapshot of the whole store to compare before and
 * after a call, and a driver that fails the Nth allocation of a call. */
#ifndef GOBLIN_TEST_KEYS_UTIL_H
#define GOBLIN_TEST_KEYS_UTIL_H

#include <stdio.h>

#include "testutil.h"
#include "store/store.h"

#define assert_slice(s, lit)                                              \
    do {                                                                  \
        struct goblin_slice s_ = (s);                                     \
        assert_int_equal(s_.len, sizeof(lit) - 1);                        \
        assert_non_null(s_.ptr);                                          \
        if (s_.len != 0)                                                  \
            assert_memory_equal(s_.ptr, (lit), sizeof(lit) - 1);         \
    } while (0)

/* A key holding another type, without an object behind it: enough for
 * the keyspace, which never looks inside. */
static inline void add_fake_hash(goblin_store *st, struct goblin_slice key)
{
    /* As the type modules do: look first (which deletes an expired key),
     * then add. */
    assert_int_equal(goblin_key_exists(st, key), 0);
    assert_int_equal(goblin__key_add(st, key, GOBLIN_TYPE_HASH, NULL), 0);
}

static inline const char *encoding_of(goblin_store *st,
                                      struct goblin_slice key)
{
    const char *e = NULL;

    assert_int_equal(goblin_key_encoding(st, key, &e), 1);
    return e;
}

/* The whole store as one sorted text: one line per key with its type,
 * deadline and (for strings) value, bytes escaped. */
struct snap {
    char **lines;
    size_t n, cap;
};

static inline int snap_visit(void *ctx, const struct goblin_key_info *in)
{
    struct snap *s = ctx;
    size_t room = 64 + 4 * (in->key.len + in->value.len);
    char *line = malloc(room), *p = line;

    p += sprintf(p, "%d %lld ", (int)in->type, (long long)in->deadline_ms);
    for (size_t i = 0; i < in->key.len; i++)
        p += sprintf(p, "%02x", ((const unsigned char *)in->key.ptr)[i]);
    *p++ = '=';
    for (size_t i = 0; i < in->value.len; i++)
        p += sprintf(p, "%02x", ((const unsigned char *)in->value.ptr)[i]);
    *p = 0;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->lines = realloc(s->lines, s->cap * sizeof(char *));
    }
    s->lines[s->n++] = line;
    return 0;
}

static inline int snap_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static inline struct snap snap_take(goblin_store *st)
{
    struct snap s = {NULL, 0, 0};

    assert_int_equal(goblin_key_foreach(st, snap_visit, &s), 0);
    if (s.n > 1)
        qsort(s.lines, s.n, sizeof(char *), snap_cmp);
    return s;
}

static inline void snap_free(struct snap *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->lines[i]);
    free(s->lines);
}

static inline void snap_assert_equal(const struct snap *a,
                                     const struct snap *b)
{
    assert_int_equal(a->n, b->n);
    for (size_t i = 0; i < a->n; i++)
        assert_string_equal(a->lines[i], b->lines[i]);
}

/* Runs op(st, arg) with allocation N failing, for N = 0, 1, 2... until it
 * returns something other than GOBLIN_ENOMEM, which it returns. Every
 * failed run must leave the store exactly as it was (keys, values,
 * deadlines, counts, dirty counter). */
typedef int64_t (*store_op)(goblin_store *st, void *arg);

static inline int64_t run_failing(struct fixture *f, store_op op, void *arg)
{
    for (long n = 0;; n++) {
        struct snap before = snap_take(f->st), after;
        size_t count = goblin_key_count(f->st);
        size_t expires = goblin_key_expires_count(f->st);
        uint64_t dirty = goblin_store_dirty(f->st);
        int64_t r;

        f->counts.fail_after = n;
        r = op(f->st, arg);
        f->counts.fail_after = -1;
        if (r != GOBLIN_ENOMEM) {
            snap_free(&before);
            return r;
        }
        after = snap_take(f->st);
        snap_assert_equal(&before, &after);
        /* The store's own count agrees with the allocator's. */
        assert_int_equal(goblin_store_used_memory(f->st),
                         f->counts.live_bytes);
        assert_int_equal(goblin_key_count(f->st), count);
        assert_int_equal(goblin_key_expires_count(f->st), expires);
        assert_int_equal(goblin_store_dirty(f->st), dirty);
        snap_free(&before);
        snap_free(&after);
        assert_true(n < 1000);
    }
}

#endif
