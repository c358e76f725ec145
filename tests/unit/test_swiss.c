/* test_swiss.c - the shared swiss index: probes, incremental growth,
 * tombstone cleanup, shrinking, retargeting and allocation failures. */
#include <stdbool.h>

#include "testutil.h"
#include "store/store.h"
#include "store/swiss.h"

/* The test owner: key k_i = keys[i] (8 bytes) lives under id i. */
struct owner {
    uint64_t keys[1 << 18];
    uint64_t (*hf)(uint64_t key);
};

static uint64_t good_hash(uint64_t k)
{
    return goblin__hash_bytes(7, &k, sizeof(k));
}

/* Every key in one of four home groups with one of two fingerprints. */
static uint64_t bad_hash(uint64_t k)
{
    return ((k & 3) << 62) | (k & 1);
}

static uint64_t o_hash(const void *owner, uint32_t id)
{
    const struct owner *o = owner;

    return o->hf(o->keys[id]);
}

static bool o_eq(const void *owner, uint32_t id, const void *key, size_t len)
{
    const struct owner *o = owner;

    return len == 8 && memcmp(&o->keys[id], key, 8) == 0;
}

static const struct goblin__swiss_ops ops = {o_hash, o_eq};

static struct owner *owner_new(uint64_t (*hf)(uint64_t))
{
    struct owner *o = calloc(1, sizeof(*o));

    assert_non_null(o);
    o->hf = hf;
    for (size_t i = 0; i < sizeof(o->keys) / 8; i++)
        o->keys[i] = i * 0x9E3779B97F4A7C15ull + 1;
    return o;
}

static int find(const struct goblin__swiss *s, const struct owner *o,
                uint64_t key, uint32_t *id)
{
    return goblin__swiss_find(s, &ops, o, o->hf(key), &key, 8, id);
}

static int insert(goblin_store *st, struct goblin__swiss *s,
                  struct owner *o, uint32_t id)
{
    return goblin__swiss_insert(st, s, &ops, o, o->hf(o->keys[id]), id);
}

static void erase(goblin_store *st, struct goblin__swiss *s,
                  struct owner *o, uint32_t id)
{
    goblin__swiss_erase(st, s, &ops, o, o->hf(o->keys[id]), id);
}

/* Checks that exactly the ids in [lo, hi) with present[id] are found. */
static void check(const struct goblin__swiss *s, const struct owner *o,
                  const bool *present, size_t n)
{
    size_t count = 0;
    uint32_t id;

    for (size_t i = 0; i < n; i++) {
        int r = find(s, o, o->keys[i], &id);

        assert_int_equal(r, present[i] ? 1 : 0);
        if (r) {
            assert_int_equal(id, i);
            count++;
        }
    }
    assert_int_equal(goblin__swiss_count(s), count);
}

static void test_empty_index_finds_nothing_and_holds_no_memory(void **state)
{
    struct fixture *f = *state;
    struct goblin__swiss s;
    struct owner *o = owner_new(good_hash);
    uint32_t id = 77;

    goblin__swiss_init(&s);
    assert_int_equal(find(&s, o, 5, &id), 0);
    assert_int_equal(id, 77);
    assert_int_equal(goblin__swiss_count(&s), 0);
    assert_int_equal(goblin__swiss_bytes(&s), 0);
    goblin__swiss_free(f->st, &s);
    free(o);
}

static void test_insert_find_erase_single(void **state)
{
    struct fixture *f = *state;
    struct goblin__swiss s;
    struct owner *o = owner_new(good_hash);
    uint32_t id;

    goblin__swiss_init(&s);
    assert_int_equal(insert(f->st, &s, o, 3), 0);
    assert_int_equal(find(&s, o, o->keys[3], &id), 1);
    assert_int_equal(id, 3);
    assert_int_equal(find(&s, o, o->keys[4], &id), 0);
    assert_int_equal(goblin__swiss_bytes(&s), 16 * 5);
    erase(f->st, &s, o, 3);
    assert_int_equal(find(&s, o, o->keys[3], &id), 0);
    assert_int_equal(goblin__swiss_bytes(&s), 0);
    goblin__swiss_free(f->st, &s);
    free(o);
}

static uint64_t rng_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* Inserts 200k keys, erasing a random present one after every third
 * insert. No call may move more than one old group (16 entries), every
 * migration must finish, and the contents stay exact throughout. */
static void test_growth_is_incremental_and_exact(void **state)
{
    struct fixture *f = *state;
    struct goblin__swiss s;
    struct owner *o = owner_new(good_hash);
    const size_t n = 200000;
    bool *present = calloc(n, 1);
    uint32_t *live = calloc(n, sizeof(uint32_t));
    size_t nlive = 0, migrations = 0;
    uint64_t x = 88172645463325252ull;

    goblin__swiss_init(&s);
    for (uint32_t i = 0; i < n; i++) {
        size_t before = s.old.used, had_old = s.old.cap;

        assert_int_equal(insert(f->st, &s, o, i), 0);
        present[i] = true;
        live[nlive++] = i;
        if (had_old == 0 && s.old.cap != 0)
            migrations++;
        if (had_old != 0 && s.old.cap != 0)
            assert_true(before - s.old.used <= 16);
        if (i % 3 == 2) {
            size_t k = rng_next(&x) % nlive;

            before = s.old.used;
            had_old = s.old.cap;
            erase(f->st, &s, o, live[k]);
            present[live[k]] = false;
            live[k] = live[--nlive];
            if (had_old != 0 && s.old.cap != 0)
                assert_true(before - s.old.used <= 17);
        }
        if (i % 20011 == 0)
            check(&s, o, present, n);
    }
    check(&s, o, present, n);
    assert_true(migrations >= 10);
    /* Memory: cap * 5 bytes, at a load over 1/2 once migration is done. */
    if (s.old.cap == 0)
        assert_true(s.cur.used * 2 > s.cur.cap);
    goblin__swiss_free(f->st, &s);
    free(present);
    free(live);
    free(o);
}

/* A steady live set with constant churn must not grow without bound:
 * tombstones are cleaned by rebuilding. */
static void test_churn_cleans_tombstones(void **state)
{
    struct fixture *f = *state;
    struct goblin__swiss s;
    struct owner *o = owner_new(good_hash);
    const size_t n = 100000, keep = 1000;
    bool *present = calloc(n, 1);

    goblin__swiss_init(&s);
    for (uint32_t i = 0; i < keep; i++) {
        assert_int_equal(insert(f->st, &s, o, i), 0);
        present[i] = true;
    }
    for (uint32_t i = keep; i < n; i++) {
        erase(f->st, &s, o, i - (uint32_t)keep);
        present[i - keep] = false;
        assert_int_equal(insert(f->st, &s, o, i), 0);
        present[i] = true;
        assert_true(s.cur.cap + s.old.cap <= 8 * keep);
    }
    check(&s, o, present, n);
    goblin__swiss_free(f->st, &s);
    free(present);
    free(o);
}

static void test_sparse_index_shrinks_and_empty_frees(void **state)
{
    struct fixture *f = *state;
    struct goblin__swiss s;
    struct owner *o = owner_new(good_hash);
    const size_t n = 50000;
    bool *present = calloc(n, 1);

    goblin__swiss_init(&s);
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(insert(f->st, &s, o, i), 0);
        present[i] = true;
    }
    for (uint32_t i = 0; i < n - 10; i++) {
        erase(f->st, &s, o, i);
        present[i] = false;
    }
    check(&s, o, present, n);
    assert_true(goblin__swiss_bytes(&s) <= 256 * 5);
    for (uint32_t i = n - 10; i < n; i++) {
        erase(f->st, &s, o, i);
        present[i] = false;
    }
    check(&s, o, present, n);
    assert_int_equal(goblin__swiss_bytes(&s), 0);
    assert_int_equal(f->counts.live_blocks, 1); /* the store itself */
    goblin__swiss_free(f->st, &s);
    free(present);
    free(o);
}

static void test_colliding_hashes_still_work(void **state)
{
    struct fixture *f = *state;
    struct goblin__swiss s;
    struct owner *o = owner_new(bad_hash);
    const size_t n = 3000;
    bool *present = calloc(n, 1);

    goblin__swiss_init(&s);
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(insert(f->st, &s, o, i), 0);
        present[i] = true;
    }
    check(&s, o, present, n);
    for (uint32_t i = 0; i < n; i += 2) {
        erase(f->st, &s, o, i);
        present[i] = false;
    }
    check(&s, o, present, n);
    goblin__swiss_free(f->st, &s);
    free(present);
    free(o);
}

static void test_retarget_moves_an_entry_to_a_new_id(void **state)
{
    struct fixture *f = *state;
    struct goblin__swiss s;
    struct owner *o = owner_new(good_hash);
    uint32_t id;
    size_t retargeted_in_old = 0;

    goblin__swiss_init(&s);
    for (uint32_t i = 0; i < 5000; i++) {
        assert_int_equal(insert(f->st, &s, o, i), 0);
        if (i > 0 && i % 7 == 0) {
            uint32_t from = i - 7, to = 100000 + i;

            if (s.old.cap != 0)
                retargeted_in_old++;
            o->keys[to] = o->keys[from];
            goblin__swiss_retarget(&s, o->hf(o->keys[to]), from, to);
            assert_int_equal(find(&s, o, o->keys[to], &id), 1);
            assert_int_equal(id, to);
            o->keys[from] = 0; /* the old id no longer names a key */
        }
    }
    assert_true(retargeted_in_old > 0);
    assert_int_equal(goblin__swiss_count(&s), 5000);
    goblin__swiss_free(f->st, &s);
    free(o);
}

/* Every insert is tried first with the next allocation failing: those
 * that need memory return GOBLIN_ENOMEM and leave the index as it was. */
static void test_failed_allocation_changes_nothing(void **state)
{
    struct fixture *f = *state;
    struct goblin__swiss s;
    struct owner *o = owner_new(good_hash);
    const size_t n = 20000;
    bool *present = calloc(n, 1);
    size_t failures = 0;

    goblin__swiss_init(&s);
    for (uint32_t i = 0; i < n; i++) {
        struct goblin__swiss before = s;
        size_t mem = goblin_store_used_memory(f->st);
        int r;

        f->counts.fail_after = 0;
        r = insert(f->st, &s, o, i);
        f->counts.fail_after = -1;
        if (r == GOBLIN_ENOMEM) {
            failures++;
            assert_memory_equal(&before, &s, sizeof(s));
            assert_int_equal(goblin_store_used_memory(f->st), mem);
            if (failures % 16 == 1)
                check(&s, o, present, n);
            assert_int_equal(insert(f->st, &s, o, i), 0);
        } else {
            assert_int_equal(r, 0);
        }
        present[i] = true;
    }
    check(&s, o, present, n);
    assert_true(failures >= 10);
    goblin__swiss_free(f->st, &s);
    free(present);
    free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_empty_index_finds_nothing_and_holds_no_memory),
        FIXTURE_TEST(test_insert_find_erase_single),
        FIXTURE_TEST(test_growth_is_incremental_and_exact),
        FIXTURE_TEST(test_churn_cleans_tombstones),
        FIXTURE_TEST(test_sparse_index_shrinks_and_empty_frees),
        FIXTURE_TEST(test_colliding_hashes_still_work),
        FIXTURE_TEST(test_retarget_moves_an_entry_to_a_new_id),
        FIXTURE_TEST(test_failed_allocation_changes_nothing),
    };

    return cmocka_run_group_tests_name("swiss", tests, NULL, NULL);
}
