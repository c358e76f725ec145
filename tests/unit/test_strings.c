/* test_strings.c - string values: every call of goblin/str.h with its
 * edge cases, Redis's encodings, deadlines, and allocation failures. */
#include <float.h>
#include <math.h>

#include "test_keys_util.h"

static void test_get_absent_leaves_out_alone(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice out = {"x", 1};

    assert_int_equal(goblin_str_get(f->st, S("nope"), &out), 0);
    assert_slice(out, "x");
    assert_int_equal(goblin_str_len(f->st, S("nope")), 0);
}

static void test_set_and_get_are_binary_safe(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice out;

    assert_int_equal(goblin_str_set(f->st, S("a\0b"), S("v\0\1"), NULL, NULL),
                     GOBLIN_SET_DONE);
    assert_int_equal(goblin_str_set(f->st, S("a\0c"), S("w"), NULL, NULL),
                     GOBLIN_SET_DONE);
    assert_int_equal(goblin_str_get(f->st, S("a\0b"), &out), 1);
    assert_slice(out, "v\0\1");
    assert_int_equal(goblin_str_get(f->st, S("a\0c"), &out), 1);
    assert_slice(out, "w");
    assert_int_equal(goblin_str_get(f->st, S("a"), &out), 0);
    assert_int_equal(goblin_str_len(f->st, S("a\0b")), 3);
    assert_int_equal(goblin_key_count(f->st), 2);
}

static void test_empty_key_and_empty_value(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice out = {NULL, 99};

    assert_int_equal(goblin_str_set(f->st, S(""), S(""), NULL, NULL),
                     GOBLIN_SET_DONE);
    assert_int_equal(goblin_str_get(f->st, S(""), &out), 1);
    assert_non_null(out.ptr);
    assert_int_equal(out.len, 0);
    assert_string_equal(encoding_of(f->st, S("")), "embstr");
    assert_int_equal(goblin_key_exists(f->st, S("")), 1);
}

static void test_set_replaces_other_types_unless_get(void **state)
{
    struct fixture *f = *state;
    struct goblin_set_options get = {0};
    struct goblin_slice out = {"x", 1};

    get.get = 1;
    add_fake_hash(f->st, S("h"));
    assert_int_equal(goblin_str_get(f->st, S("h"), &out), GOBLIN_EWRONGTYPE);
    assert_int_equal(goblin_str_len(f->st, S("h")), GOBLIN_EWRONGTYPE);
    assert_int_equal(goblin_str_set(f->st, S("h"), S("v"), &get, &out),
                     GOBLIN_EWRONGTYPE);
    assert_int_equal(goblin_key_type(f->st, S("h")), GOBLIN_TYPE_HASH);
    assert_slice(out, "x");
    assert_int_equal(goblin_str_set(f->st, S("h"), S("v"), NULL, NULL),
                     GOBLIN_SET_DONE);
    assert_int_equal(goblin_key_type(f->st, S("h")), GOBLIN_TYPE_STRING);
    assert_int_equal(goblin_str_get(f->st, S("h"), &out), 1);
    assert_slice(out, "v");
}

static void test_set_nx_and_xx(void **state)
{
    struct fixture *f = *state;
    struct goblin_set_options nx = {GOBLIN_SET_NX, 0, 0, 0};
    struct goblin_set_options xx = {GOBLIN_SET_XX, 0, 0, 0};
    struct goblin_slice out;
    uint64_t dirty;

    assert_int_equal(goblin_str_set(f->st, S("k"), S("1"), &xx, NULL), 0);
    assert_int_equal(goblin_key_exists(f->st, S("k")), 0);
    assert_int_equal(goblin_str_set(f->st, S("k"), S("1"), &nx, NULL),
                     GOBLIN_SET_DONE);
    dirty = goblin_store_dirty(f->st);
    assert_int_equal(goblin_str_set(f->st, S("k"), S("2"), &nx, NULL), 0);
    assert_int_equal(goblin_store_dirty(f->st), dirty);
    assert_int_equal(goblin_str_set(f->st, S("k"), S("3"), &xx, NULL),
                     GOBLIN_SET_DONE);
    assert_int_equal(goblin_str_get(f->st, S("k"), &out), 1);
    assert_slice(out, "3");
    assert_int_equal(goblin_str_setnx(f->st, S("k"), S("4")), 0);
    assert_int_equal(goblin_str_setnx(f->st, S("j"), S("4")), 1);
    assert_int_equal(goblin_str_get(f->st, S("j"), &out), 1);
    assert_slice(out, "4");
    nx.cond = 7;
    assert_int_equal(goblin_str_set(f->st, S("k"), S("3"), &nx, NULL),
                     GOBLIN_ESYNTAX);
}

static void test_set_get_hands_back_the_old_value(void **state)
{
    struct fixture *f = *state;
    struct goblin_set_options o = {0};
    struct goblin_slice old = {"x", 1}, out;

    o.get = 1;
    assert_int_equal(goblin_str_set(f->st, S("k"), S("first"), &o, &old),
                     GOBLIN_SET_DONE);
    assert_slice(old, "x");
    assert_int_equal(goblin_str_set(f->st, S("k"), S("second"), &o, &old),
                     GOBLIN_SET_DONE | GOBLIN_SET_HAD_OLD);
    /* The old value is still readable after the overwrite. */
    assert_slice(old, "first");
    assert_int_equal(goblin_str_get(f->st, S("k"), &out), 1);
    assert_slice(out, "second");
    /* NX with GET on an existing key: the old value, nothing set. */
    o.cond = GOBLIN_SET_NX;
    assert_int_equal(goblin_str_set(f->st, S("k"), S("third"), &o, &old),
                     GOBLIN_SET_HAD_OLD);
    assert_slice(old, "second");
    assert_int_equal(goblin_str_get(f->st, S("k"), &out), 1);
    assert_slice(out, "second");
    o.cond = GOBLIN_SET_XX;
    assert_int_equal(goblin_str_set(f->st, S("new"), S("v"), &o, &old), 0);
}

/* A view handed out by a write lasts until the next write, even when
 * reads in between delete many expired keys. */
static void test_views_survive_reads_that_expire_keys(void **state)
{
    struct fixture *f = *state;
    struct goblin_set_options o = {0};
    struct goblin_slice old, v;
    char buf[16];

    for (int i = 0; i < 10; i++) {
        int n = snprintf(buf, sizeof(buf), "e%d", i);

        assert_int_equal(goblin_str_set(f->st, slice_of(buf, (size_t)n),
                                        S("x"), NULL, NULL), 1);
        assert_int_equal(goblin_key_pexpire(f->st, slice_of(buf, (size_t)n),
                                            5, 0), 1);
    }
    assert_int_equal(goblin_str_set(f->st, S("k"), S("old value"), NULL,
                                    NULL), 1);
    o.get = 1;
    assert_int_equal(goblin_str_set(f->st, S("k"), S("new"), &o, &old), 3);
    assert_int_equal(goblin_str_get(f->st, S("k"), &v), 1);
    f->clock.now_ms += 10;
    for (int i = 0; i < 10; i++) {
        int n = snprintf(buf, sizeof(buf), "e%d", i);

        assert_int_equal(goblin_key_exists(f->st, slice_of(buf, (size_t)n)),
                         0);
    }
    assert_slice(old, "old value");
    assert_slice(v, "new");
}

static void test_set_expiry_options(void **state)
{
    struct fixture *f = *state;
    struct goblin_set_options o = {0};
    int64_t now = f->clock.now_ms;

    o.ttl = GOBLIN_TTL_EX;
    o.ttl_value = 10;
    assert_int_equal(goblin_str_set(f->st, S("k"), S("v"), &o, NULL), 1);
    assert_int_equal(goblin_key_pttl(f->st, S("k")), 10000);
    o.ttl = GOBLIN_TTL_PX;
    o.ttl_value = 1500;
    assert_int_equal(goblin_str_set(f->st, S("k"), S("v"), &o, NULL), 1);
    assert_int_equal(goblin_key_pttl(f->st, S("k")), 1500);
    assert_int_equal(goblin_key_ttl(f->st, S("k")), 2);
    o.ttl = GOBLIN_TTL_EXAT;
    o.ttl_value = now / 1000 + 100;
    assert_int_equal(goblin_str_set(f->st, S("k"), S("v"), &o, NULL), 1);
    assert_int_equal(goblin_key_pexpiretime(f->st, S("k")),
                     (now / 1000 + 100) * 1000);
    o.ttl = GOBLIN_TTL_PXAT;
    o.ttl_value = now + 777;
    assert_int_equal(goblin_str_set(f->st, S("k"), S("v"), &o, NULL), 1);
    assert_int_equal(goblin_key_pexpiretime(f->st, S("k")), now + 777);
    o.ttl = GOBLIN_TTL_KEEP;
    assert_int_equal(goblin_str_set(f->st, S("k"), S("w"), &o, NULL), 1);
    assert_int_equal(goblin_key_pttl(f->st, S("k")), 777);
    assert_int_equal(goblin_key_expires_count(f->st), 1);
    /* A plain SET drops the deadline. */
    assert_int_equal(goblin_str_set(f->st, S("k"), S("x"), NULL, NULL), 1);
    assert_int_equal(goblin_key_ttl(f->st, S("k")), -1);
    assert_int_equal(goblin_key_expires_count(f->st), 0);
    /* KEEPTTL on a new key or one without a deadline: none. */
    assert_int_equal(goblin_str_set(f->st, S("n"), S("x"), &o, NULL), 1);
    assert_int_equal(goblin_key_ttl(f->st, S("n")), -1);
}

static void test_set_rejects_bad_expire_times(void **state)
{
    struct fixture *f = *state;
    struct goblin_set_options o = {0};
    const int64_t bad[][2] = {
        {GOBLIN_TTL_EX, 0}, {GOBLIN_TTL_EX, -1}, {GOBLIN_TTL_PX, 0},
        {GOBLIN_TTL_EXAT, 0}, {GOBLIN_TTL_PXAT, -5},
        {GOBLIN_TTL_EX, INT64_MAX / 1000 + 1}, {GOBLIN_TTL_PX, INT64_MAX},
        {GOBLIN_TTL_EX, INT64_MAX / 1000},
    };

    o.get = 1;
    add_fake_hash(f->st, S("h"));
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        o.ttl = (enum goblin_ttl_mode)bad[i][0];
        o.ttl_value = bad[i][1];
        /* Checked before the type, as Redis does. */
        assert_int_equal(goblin_str_set(f->st, S("h"), S("v"), &o, NULL),
                         GOBLIN_EINVAL);
    }
    o.ttl = GOBLIN_TTL_PXAT;
    o.ttl_value = INT64_MAX;
    o.get = 0;
    assert_int_equal(goblin_str_set(f->st, S("k"), S("v"), &o, NULL), 1);
    o.ttl = GOBLIN_TTL_EXAT;
    o.ttl_value = INT64_MAX / 1000;
    assert_int_equal(goblin_str_set(f->st, S("k"), S("v"), &o, NULL), 1);
    o.ttl = GOBLIN_TTL_PERSIST;
    assert_int_equal(goblin_str_set(f->st, S("k"), S("v"), &o, NULL),
                     GOBLIN_ESYNTAX);
    assert_int_equal(goblin_key_count(f->st), 2);
}

static void test_set_with_past_deadline_reads_absent(void **state)
{
    struct fixture *f = *state;
    struct goblin_set_options o = {0};
    struct goblin_slice out;

    o.ttl = GOBLIN_TTL_PXAT;
    o.ttl_value = 1;
    assert_int_equal(goblin_str_set(f->st, S("k"), S("v"), &o, NULL), 1);
    assert_int_equal(goblin_str_get(f->st, S("k"), &out), 0);
    assert_int_equal(goblin_key_count(f->st), 0);
    assert_int_equal(goblin_key_expires_count(f->st), 0);
}

static void test_encodings_follow_redis(void **state)
{
    struct fixture *f = *state;
    static const struct {
        const char *value, *enc;
    } cases[] = {
        {"123", "int"}, {"-5", "int"}, {"0", "int"},
        {"-9223372036854775808", "int"}, {"9223372036854775807", "int"},
        {"9223372036854775808", "embstr"}, {"01", "embstr"},
        {"-0", "embstr"}, {"+1", "embstr"}, {" 1", "embstr"},
        {"1.5", "embstr"}, {"", "embstr"},
        {"12345678901234567890123456789012345678901234", "embstr"},
        {"123456789012345678901234567890123456789012345", "raw"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct goblin_slice v = {cases[i].value, strlen(cases[i].value)};
        struct goblin_slice out;

        assert_int_equal(goblin_str_set(f->st, S("k"), v, NULL, NULL), 1);
        assert_string_equal(encoding_of(f->st, S("k")), cases[i].enc);
        assert_int_equal(goblin_str_get(f->st, S("k"), &out), 1);
        assert_int_equal(out.len, v.len);
        if (v.len)
            assert_memory_equal(out.ptr, v.ptr, v.len);
    }
}

static void test_getset(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice old = {"x", 1}, out;

    assert_int_equal(goblin_str_getset(f->st, S("k"), S("a"), &old), 0);
    assert_slice(old, "x");
    assert_int_equal(goblin_key_pexpire(f->st, S("k"), 5000, 0), 1);
    assert_int_equal(goblin_str_getset(f->st, S("k"), S("b"), &old), 1);
    assert_slice(old, "a");
    assert_int_equal(goblin_key_ttl(f->st, S("k")), -1);
    assert_int_equal(goblin_str_get(f->st, S("k"), &out), 1);
    assert_slice(out, "b");
    add_fake_hash(f->st, S("h"));
    assert_int_equal(goblin_str_getset(f->st, S("h"), S("b"), &old),
                     GOBLIN_EWRONGTYPE);
    assert_int_equal(goblin_key_type(f->st, S("h")), GOBLIN_TYPE_HASH);
}

static void test_getdel(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice out = {"x", 1};

    assert_int_equal(goblin_str_getdel(f->st, S("k"), &out), 0);
    assert_slice(out, "x");
    assert_int_equal(goblin_str_set(f->st, S("k"), S("val\0ue"), NULL, NULL),
                     1);
    assert_int_equal(goblin_key_expire(f->st, S("k"), 100, 0), 1);
    assert_int_equal(goblin_str_getdel(f->st, S("k"), &out), 1);
    assert_slice(out, "val\0ue");
    assert_int_equal(goblin_key_exists(f->st, S("k")), 0);
    assert_int_equal(goblin_key_expires_count(f->st), 0);
    add_fake_hash(f->st, S("h"));
    assert_int_equal(goblin_str_getdel(f->st, S("h"), &out),
                     GOBLIN_EWRONGTYPE);
    assert_int_equal(goblin_key_exists(f->st, S("h")), 1);
}

static void test_getex(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice out = {"x", 1};
    int64_t now = f->clock.now_ms;

    /* Absent: nothing else is checked. */
    assert_int_equal(goblin_str_getex(f->st, S("k"), GOBLIN_TTL_EX, -1, &out),
                     0);
    assert_slice(out, "x");
    assert_int_equal(goblin_str_set(f->st, S("k"), S("v"), NULL, NULL), 1);
    assert_int_equal(goblin_str_getex(f->st, S("k"), GOBLIN_TTL_DEFAULT, 0,
                                      &out), 1);
    assert_slice(out, "v");
    assert_int_equal(goblin_key_ttl(f->st, S("k")), -1);
    assert_int_equal(goblin_str_getex(f->st, S("k"), GOBLIN_TTL_EX, 0, &out),
                     GOBLIN_EINVAL);
    assert_int_equal(goblin_str_getex(f->st, S("k"), GOBLIN_TTL_KEEP, 0,
                                      &out), GOBLIN_ESYNTAX);
    assert_int_equal(goblin_str_getex(f->st, S("k"), GOBLIN_TTL_EX, 50, &out),
                     1);
    assert_slice(out, "v");
    assert_int_equal(goblin_key_ttl(f->st, S("k")), 50);
    assert_int_equal(goblin_str_getex(f->st, S("k"), GOBLIN_TTL_PXAT,
                                      now + 10, &out), 1);
    assert_int_equal(goblin_key_pttl(f->st, S("k")), 10);
    assert_int_equal(goblin_str_getex(f->st, S("k"), GOBLIN_TTL_PERSIST, 0,
                                      &out), 1);
    assert_slice(out, "v");
    assert_int_equal(goblin_key_ttl(f->st, S("k")), -1);
    assert_int_equal(goblin_str_getex(f->st, S("k"), GOBLIN_TTL_PERSIST, 0,
                                      &out), 1);
    /* A deadline already past deletes the key but returns the value. */
    out.ptr = NULL;
    assert_int_equal(goblin_str_getex(f->st, S("k"), GOBLIN_TTL_PXAT, now,
                                      &out), 1);
    assert_slice(out, "v");
    assert_int_equal(goblin_key_exists(f->st, S("k")), 0);
    add_fake_hash(f->st, S("h"));
    assert_int_equal(goblin_str_getex(f->st, S("h"), GOBLIN_TTL_EX, 0, &out),
                     GOBLIN_EWRONGTYPE);
}

static void test_append(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice out;

    assert_int_equal(goblin_str_append(f->st, S("k"), S("12")), 2);
    assert_string_equal(encoding_of(f->st, S("k")), "int");
    assert_int_equal(goblin_key_expire(f->st, S("k"), 100, 0), 1);
    assert_int_equal(goblin_str_append(f->st, S("k"), S("3\0")), 4);
    assert_string_equal(encoding_of(f->st, S("k")), "raw");
    assert_int_equal(goblin_key_ttl(f->st, S("k")), 100);
    assert_int_equal(goblin_str_get(f->st, S("k"), &out), 1);
    assert_slice(out, "123\0");
    /* An empty append still makes the value raw. */
    assert_int_equal(goblin_str_append(f->st, S("e"), S("")), 0);
    assert_string_equal(encoding_of(f->st, S("e")), "embstr");
    assert_int_equal(goblin_str_append(f->st, S("e"), S("")), 0);
    assert_string_equal(encoding_of(f->st, S("e")), "raw");
    add_fake_hash(f->st, S("h"));
    assert_int_equal(goblin_str_append(f->st, S("h"), S("x")),
                     GOBLIN_EWRONGTYPE);
}

static void test_many_appends_build_the_right_string(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice out;
    char expect[3000];

    for (int i = 0; i < 3000; i++) {
        char c = (char)('a' + i % 26);

        expect[i] = c;
        assert_int_equal(goblin_str_append(f->st, S("k"), slice_of(&c, 1)),
                         i + 1);
    }
    assert_int_equal(goblin_str_get(f->st, S("k"), &out), 1);
    assert_int_equal(out.len, 3000);
    assert_memory_equal(out.ptr, expect, 3000);
    /* Appending a value to itself (a view of the store) works. */
    assert_int_equal(goblin_str_append(f->st, S("k"), out), 6000);
    assert_int_equal(goblin_str_get(f->st, S("k"), &out), 1);
    assert_memory_equal((const char *)out.ptr + 3000, expect, 3000);
}

static void test_setrange(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice out;
    uint64_t dirty;

    assert_int_equal(goblin_str_setrange(f->st, S("k"), 3, S("")), 0);
    assert_int_equal(goblin_key_exists(f->st, S("k")), 0);
    assert_int_equal(goblin_str_setrange(f->st, S("k"), 3, S("ab")), 5);
    assert_int_equal(goblin_str_get(f->st, S("k"), &out), 1);
    assert_slice(out, "\0\0\0ab");
    assert_string_equal(encoding_of(f->st, S("k")), "raw");
    assert_int_equal(goblin_str_set(f->st, S("s"), S("Hello World"), NULL,
                                    NULL), 1);
    assert_int_equal(goblin_key_expire(f->st, S("s"), 100, 0), 1);
    dirty = goblin_store_dirty(f->st);
    assert_int_equal(goblin_str_setrange(f->st, S("s"), 100, S("")), 11);
    assert_int_equal(goblin_store_dirty(f->st), dirty);
    assert_string_equal(encoding_of(f->st, S("s")), "embstr");
    assert_int_equal(goblin_str_setrange(f->st, S("s"), 6, S("Redis")), 11);
    assert_int_equal(goblin_str_get(f->st, S("s"), &out), 1);
    assert_slice(out, "Hello Redis");
    assert_int_equal(goblin_key_ttl(f->st, S("s")), 100);
    assert_int_equal(goblin_str_setrange(f->st, S("s"), 13, S("!")), 14);
    assert_int_equal(goblin_str_get(f->st, S("s"), &out), 1);
    assert_slice(out, "Hello Redis\0\0!");
    /* The value may be a view of the same string. */
    assert_int_equal(goblin_str_setrange(f->st, S("s"), 1, out), 15);
    assert_int_equal(goblin_str_get(f->st, S("s"), &out), 1);
    assert_slice(out, "HHello Redis\0\0!");
}

static void test_setrange_errors_in_redis_order(void **state)
{
    struct fixture *f = *state;

    add_fake_hash(f->st, S("h"));
    assert_int_equal(goblin_str_setrange(f->st, S("h"), -1, S("x")),
                     GOBLIN_EOFFSET);
    assert_int_equal(goblin_str_setrange(f->st, S("k"), -1, S("")),
                     GOBLIN_EOFFSET);
    assert_int_equal(goblin_str_setrange(f->st, S("h"), 0, S("x")),
                     GOBLIN_EWRONGTYPE);
    assert_int_equal(goblin_str_setrange(f->st, S("h"), INT64_MAX, S("x")),
                     GOBLIN_EWRONGTYPE);
    assert_int_equal(goblin_str_setrange(f->st, S("k"), 512 * 1024 * 1024,
                                         S("x")), GOBLIN_ESTRBIG);
    assert_int_equal(goblin_str_setrange(f->st, S("k"),
                                         512 * 1024 * 1024 - 1, S("xy")),
                     GOBLIN_ESTRBIG);
    assert_int_equal(goblin_str_setrange(f->st, S("k"), INT64_MAX, S("x")),
                     GOBLIN_ESTRBIG);
    assert_int_equal(goblin_str_setrange(f->st, S("k"), INT64_MAX, S("")),
                     0);
    assert_int_equal(goblin_str_set(f->st, S("k"), S("abc"), NULL, NULL), 1);
    assert_int_equal(goblin_str_setrange(f->st, S("k"), INT64_MAX, S("x")),
                     GOBLIN_ESTRBIG);
    assert_int_equal(goblin_str_setrange(f->st, S("k"), INT64_MAX, S("")),
                     3);
    assert_int_equal(goblin_key_count(f->st), 2);
}

static void check_range(goblin_store *st, int64_t a, int64_t b,
                        const char *expect)
{
    struct goblin_slice out = {NULL, 77};

    assert_int_equal(goblin_str_getrange(st, S("s"), a, b, &out), 1);
    assert_non_null(out.ptr);
    assert_int_equal(out.len, strlen(expect));
    if (out.len)
        assert_memory_equal(out.ptr, expect, out.len);
}

static void test_getrange(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice out = {"x", 1};

    assert_int_equal(goblin_str_getrange(f->st, S("s"), 0, -1, &out), 0);
    assert_slice(out, "x");
    assert_int_equal(goblin_str_set(f->st, S("s"), S("This is a string"),
                                    NULL, NULL), 1);
    check_range(f->st, 0, 3, "This");
    check_range(f->st, -3, -1, "ing");
    check_range(f->st, 0, -1, "This is a string");
    check_range(f->st, 10, 100, "string");
    check_range(f->st, -1, -5, "");
    check_range(f->st, 5, 3, "");
    check_range(f->st, -100, 2, "Thi");
    check_range(f->st, -100, -100, "T");
    check_range(f->st, 16, 20, "");
    check_range(f->st, INT64_MIN, INT64_MAX, "This is a string");
    check_range(f->st, INT64_MAX, INT64_MAX, "");
    check_range(f->st, INT64_MIN, INT64_MIN, "T");
    assert_int_equal(goblin_str_set(f->st, S("s"), S(""), NULL, NULL), 1);
    check_range(f->st, 0, -1, "");
    check_range(f->st, 0, 0, "");
    add_fake_hash(f->st, S("h"));
    assert_int_equal(goblin_str_getrange(f->st, S("h"), 0, -1, &out),
                     GOBLIN_EWRONGTYPE);
}

static void test_incr_family(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice out;
    int64_t r = 0;

    assert_int_equal(goblin_str_incrby(f->st, S("n"), 1, &r), 0);
    assert_int_equal(r, 1);
    assert_int_equal(goblin_str_incrby(f->st, S("n"), 41, &r), 0);
    assert_int_equal(r, 42);
    assert_int_equal(goblin_str_decrby(f->st, S("n"), 50, &r), 0);
    assert_int_equal(r, -8);
    assert_int_equal(goblin_str_get(f->st, S("n"), &out), 1);
    assert_slice(out, "-8");
    assert_string_equal(encoding_of(f->st, S("n")), "int");
    assert_int_equal(goblin_str_decrby(f->st, S("absent"), 3, &r), 0);
    assert_int_equal(r, -3);
    /* A raw value that is an integer: the result is "int" again. */
    assert_int_equal(goblin_str_append(f->st, S("raw"), S("")), 0);
    assert_int_equal(goblin_str_append(f->st, S("raw"), S("99")), 2);
    assert_string_equal(encoding_of(f->st, S("raw")), "raw");
    assert_int_equal(goblin_str_incrby(f->st, S("raw"), 1, &r), 0);
    assert_int_equal(r, 100);
    assert_string_equal(encoding_of(f->st, S("raw")), "int");
    /* INCR keeps the deadline. */
    assert_int_equal(goblin_key_expire(f->st, S("n"), 60, 0), 1);
    assert_int_equal(goblin_str_incrby(f->st, S("n"), 1, &r), 0);
    assert_int_equal(goblin_str_incrby(f->st, S("n"), 1000, &r), 0);
    assert_int_equal(r, 993);
    assert_int_equal(goblin_key_ttl(f->st, S("n")), 60);
}

static void test_incr_rejects_what_string2ll_rejects(void **state)
{
    struct fixture *f = *state;
    static const char *const bad[] = {
        "", " 1", "1 ", "+1", "01", "-0", "1.0", "abc", "0x10", "1e3",
        "9223372036854775808", "-9223372036854775809", "1\0",
    };
    int64_t r = 77;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct goblin_slice v = {bad[i], strlen(bad[i])};

        if (i == sizeof(bad) / sizeof(bad[0]) - 1)
            v.len = 2;
        assert_int_equal(goblin_str_set(f->st, S("k"), v, NULL, NULL), 1);
        assert_int_equal(goblin_str_incrby(f->st, S("k"), 1, &r),
                         GOBLIN_ENOTINT);
        assert_int_equal(r, 77);
        assert_int_equal(goblin_str_len(f->st, S("k")), (int64_t)v.len);
    }
    add_fake_hash(f->st, S("h"));
    assert_int_equal(goblin_str_incrby(f->st, S("h"), 1, &r),
                     GOBLIN_EWRONGTYPE);
}

static void test_incr_overflow_at_both_ends(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice out;
    int64_t r = 77;

    assert_int_equal(goblin_str_set(f->st, S("k"),
                                    S("9223372036854775806"), NULL, NULL), 1);
    assert_int_equal(goblin_str_incrby(f->st, S("k"), 1, &r), 0);
    assert_true(r == INT64_MAX);
    assert_int_equal(goblin_str_incrby(f->st, S("k"), 1, &r),
                     GOBLIN_EOVERFLOW);
    assert_int_equal(goblin_str_get(f->st, S("k"), &out), 1);
    assert_slice(out, "9223372036854775807");
    assert_int_equal(goblin_str_incrby(f->st, S("k"), INT64_MIN, &r), 0);
    assert_int_equal(r, -1);
    assert_int_equal(goblin_str_incrby(f->st, S("k"), INT64_MIN, &r),
                     GOBLIN_EOVERFLOW);
    assert_int_equal(goblin_str_incrby(f->st, S("k"), INT64_MIN + 1, &r), 0);
    assert_true(r == INT64_MIN);
    assert_int_equal(goblin_str_decrby(f->st, S("k"), 1, &r),
                     GOBLIN_EOVERFLOW);
    assert_int_equal(goblin_str_incrby(f->st, S("k"), -1, &r),
                     GOBLIN_EOVERFLOW);
    assert_int_equal(goblin_str_decrby(f->st, S("z"), INT64_MIN, &r),
                     GOBLIN_EOVERFLOW);
    assert_int_equal(goblin_key_exists(f->st, S("z")), 0);
    assert_int_equal(goblin_str_incrby(f->st, S("k"), INT64_MAX, &r), 0);
    assert_int_equal(r, -1);
}

static void check_float(goblin_store *st, const char *start, const char *by,
                        const char *expect)
{
    struct goblin_slice out;

    if (start != NULL)
        assert_int_equal(goblin_str_set(st, S("f"), slice_of(start,
                                        strlen(start)), NULL, NULL), 1);
    assert_int_equal(goblin_str_incrbyfloat_text(st, S("f"),
                                                 slice_of(by, strlen(by)),
                                                 &out), 0);
    assert_int_equal(out.len, strlen(expect));
    assert_memory_equal(out.ptr, expect, out.len);
}

static void test_incrbyfloat(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice out = {"x", 1};

    if (under_valgrind())
        skip(); /* long double precision: see under_valgrind() */
    check_float(f->st, NULL, "10.5", "10.5");
    check_float(f->st, "10.50", "0.1", "10.6");
    check_float(f->st, NULL, "-5", "5.6");
    check_float(f->st, "5.0e3", "2.0e2", "5200");
    check_float(f->st, "1.1", "-1", "0.1");
    check_float(f->st, "0.1", "0.2", "0.3");
    check_float(f->st, "1", "-1", "0");
    check_float(f->st, "0", "-0", "0");
    check_float(f->st, "3", "0x10", "19");
    assert_string_equal(encoding_of(f->st, S("f")), "embstr");
    check_float(f->st, "1", "1e50",
                "100000000000000000003583830118858923890798487404544");
    assert_string_equal(encoding_of(f->st, S("f")), "raw");
    assert_int_equal(goblin_str_set(f->st, S("f"), S("2"), NULL, NULL), 1);
    assert_int_equal(goblin_key_expire(f->st, S("f"), 60, 0), 1);
    assert_int_equal(goblin_str_incrbyfloat(f->st, S("f"), 0.5L, &out), 0);
    assert_slice(out, "2.5");
    assert_int_equal(goblin_key_ttl(f->st, S("f")), 60);
}

static void test_incrbyfloat_errors(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice out = {"x", 1};

    if (under_valgrind())
        skip(); /* long double precision: see under_valgrind() */
    assert_int_equal(goblin_str_set(f->st, S("f"), S("abc"), NULL, NULL), 1);
    assert_int_equal(goblin_str_incrbyfloat(f->st, S("f"), 1, &out),
                     GOBLIN_ENOTFLOAT);
    assert_int_equal(goblin_str_set(f->st, S("f"), S(""), NULL, NULL), 1);
    assert_int_equal(goblin_str_incrbyfloat(f->st, S("f"), 1, &out),
                     GOBLIN_ENOTFLOAT);
    assert_int_equal(goblin_str_set(f->st, S("f"), S("1"), NULL, NULL), 1);
    assert_int_equal(goblin_str_incrbyfloat_text(f->st, S("f"), S(" 1"),
                                                 &out), GOBLIN_ENOTFLOAT);
    assert_int_equal(goblin_str_incrbyfloat_text(f->st, S("f"), S("nan"),
                                                 &out), GOBLIN_ENOTFLOAT);
    assert_int_equal(goblin_str_incrbyfloat_text(f->st, S("f"), S("inf"),
                                                 &out), GOBLIN_ENANINF);
    assert_int_equal(goblin_str_incrbyfloat(f->st, S("f"), LDBL_MAX, &out),
                     0);
    assert_int_equal(goblin_str_incrbyfloat(f->st, S("f"), LDBL_MAX, &out),
                     GOBLIN_ENANINF);
    assert_int_equal(goblin_str_incrbyfloat(f->st, S("g"), NAN, &out),
                     GOBLIN_ENANINF);
    assert_int_equal(goblin_key_exists(f->st, S("g")), 0);
    add_fake_hash(f->st, S("h"));
    out = S("x");
    /* The type is checked before the increment's text. */
    assert_int_equal(goblin_str_incrbyfloat_text(f->st, S("h"), S("x"),
                                                 &out), GOBLIN_EWRONGTYPE);
    assert_slice(out, "x");
}

static void test_mget(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice keys[4] = {S("a"), S("nope"), S("h"), S("b")};
    struct goblin_slice out[4];

    assert_int_equal(goblin_str_set(f->st, S("a"), S("1"), NULL, NULL), 1);
    assert_int_equal(goblin_str_set(f->st, S("b"), S(""), NULL, NULL), 1);
    add_fake_hash(f->st, S("h"));
    assert_int_equal(goblin_str_mget(f->st, keys, 4, out), 2);
    assert_slice(out[0], "1");
    assert_null(out[1].ptr);
    assert_null(out[2].ptr);
    assert_slice(out[3], "");
}

static void test_mset_and_msetnx(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice keys[4] = {S("a"), S("b"), S("a"), S("h")};
    struct goblin_slice vals[4] = {S("1"), S("2"), S("3"), S("4")};
    struct goblin_slice out;
    uint64_t dirty;

    add_fake_hash(f->st, S("h"));
    assert_int_equal(goblin_str_set(f->st, S("b"), S("old"), NULL, NULL), 1);
    assert_int_equal(goblin_key_expire(f->st, S("b"), 100, 0), 1);
    dirty = goblin_store_dirty(f->st);
    assert_int_equal(goblin_str_mset(f->st, keys, vals, 4), 0);
    assert_int_equal(goblin_store_dirty(f->st), dirty + 4);
    assert_int_equal(goblin_str_get(f->st, S("a"), &out), 1);
    assert_slice(out, "3");
    assert_int_equal(goblin_str_get(f->st, S("b"), &out), 1);
    assert_slice(out, "2");
    assert_int_equal(goblin_key_ttl(f->st, S("b")), -1);
    assert_int_equal(goblin_str_get(f->st, S("h"), &out), 1);
    assert_slice(out, "4");
    assert_int_equal(goblin_key_count(f->st), 3);
    assert_int_equal(goblin_str_mset(f->st, keys, vals, 0), 0);
    keys[0] = S("x");
    keys[2] = S("y");
    assert_int_equal(goblin_str_msetnx(f->st, keys, vals, 3), 0);
    assert_int_equal(goblin_key_exists(f->st, S("x")), 0);
    keys[1] = S("z");
    assert_int_equal(goblin_str_msetnx(f->st, keys, vals, 3), 1);
    assert_int_equal(goblin_str_get(f->st, S("z"), &out), 1);
    assert_slice(out, "2");
    assert_int_equal(goblin_key_count(f->st), 6);
}

/* ---- allocation failures ---- */

static void fill(goblin_store *st, size_t n, bool with_ttl)
{
    char buf[32];

    for (size_t i = 0; i < n; i++) {
        int len = snprintf(buf, sizeof(buf), "fill:%zu", i);

        assert_int_equal(goblin_str_set(st, slice_of(buf, (size_t)len),
                                        S("v"), NULL, NULL), 1);
        if (with_ttl && i % 3 == 0)
            assert_int_equal(goblin_key_expire(st, slice_of(buf,
                                               (size_t)len), 1000, 0), 1);
    }
}

static int64_t op_set_new_ex(goblin_store *st, void *arg)
{
    struct goblin_set_options o = {0};

    (void)arg;
    o.ttl = GOBLIN_TTL_EX;
    o.ttl_value = 100;
    return goblin_str_set(st, S("new"), S("value"), &o, NULL);
}

static int64_t op_set_get_over_ttl(goblin_store *st, void *arg)
{
    struct goblin_set_options o = {0};
    struct goblin_slice old;

    (void)arg;
    o.get = 1;
    o.ttl = GOBLIN_TTL_KEEP;
    return goblin_str_set(st, S("fill:0"), S("a long value, longer than "
                                             "forty-four bytes: raw"),
                          &o, &old);
}

static int64_t op_append(goblin_store *st, void *arg)
{
    return goblin_str_append(st, S("fill:3"), *(struct goblin_slice *)arg);
}

static int64_t op_setrange(goblin_store *st, void *arg)
{
    return goblin_str_setrange(st, *(struct goblin_slice *)arg, 5, S("xy"));
}

static int64_t op_incr(goblin_store *st, void *arg)
{
    int64_t r;

    return goblin_str_incrby(st, *(struct goblin_slice *)arg, 1000, &r);
}

static int64_t op_incrbyfloat(goblin_store *st, void *arg)
{
    struct goblin_slice r;

    return goblin_str_incrbyfloat(st, *(struct goblin_slice *)arg, 1.5L,
                                  &r);
}

static int64_t op_getex(goblin_store *st, void *arg)
{
    struct goblin_slice r;

    return goblin_str_getex(st, *(struct goblin_slice *)arg,
                            GOBLIN_TTL_PX, 5000, &r);
}

static int64_t op_mset(goblin_store *st, void *arg)
{
    struct goblin_slice keys[5] = {S("m1"), S("fill:1"), S("m2"), S("m1"),
                                   S("fill:3")};
    struct goblin_slice vals[5] = {S("1"), S("2"), S("3"), S("4"), S("5")};

    (void)arg;
    return goblin_str_mset(st, keys, vals, 5);
}

/* The first deadline in a store needs a new expiry page: failing that
 * allocation must free the new record at its real size. */
static void test_failed_first_deadline_frees_its_record(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(run_failing(f, op_set_new_ex, NULL), GOBLIN_SET_DONE);
    assert_int_equal(goblin_key_expires_count(f->st), 1);
}

static void test_failed_allocations_change_nothing(void **state)
{
    struct fixture *f = *state;
    struct goblin_slice s1 = S("!"), s300, k;
    char big[300];
    struct goblin_slice out;

    memset(big, 'b', sizeof(big));
    s300 = slice_of(big, sizeof(big));
    /* 1023 keys: the next new key needs a new page of ids. */
    fill(f->st, 1023, true);
    assert_int_equal(run_failing(f, op_set_new_ex, NULL), GOBLIN_SET_DONE);
    assert_int_equal(run_failing(f, op_set_get_over_ttl, NULL),
                     GOBLIN_SET_DONE | GOBLIN_SET_HAD_OLD);
    assert_int_equal(run_failing(f, op_append, &s1), 2);
    assert_int_equal(run_failing(f, op_append, &s300), 302);
    assert_int_equal(run_failing(f, op_append, &s1), 303); /* in place */
    k = S("fill:6");
    assert_int_equal(run_failing(f, op_setrange, &k), 7);
    k = S("sr");
    assert_int_equal(run_failing(f, op_setrange, &k), 7);
    k = S("ctr");
    assert_int_equal(run_failing(f, op_incr, &k), 0);
    assert_int_equal(run_failing(f, op_incr, &k), 0);
    assert_int_equal(run_failing(f, op_incrbyfloat, &k), 0);
    assert_int_equal(goblin_str_get(f->st, S("ctr"), &out), 1);
    assert_slice(out, "2001.5");
    k = S("fill:4");
    assert_int_equal(run_failing(f, op_getex, &k), 1);
    assert_int_equal(run_failing(f, op_mset, NULL), 0);
    assert_int_equal(goblin_str_get(f->st, S("m1"), &out), 1);
    assert_slice(out, "4");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_get_absent_leaves_out_alone),
        FIXTURE_TEST(test_set_and_get_are_binary_safe),
        FIXTURE_TEST(test_empty_key_and_empty_value),
        FIXTURE_TEST(test_set_replaces_other_types_unless_get),
        FIXTURE_TEST(test_set_nx_and_xx),
        FIXTURE_TEST(test_set_get_hands_back_the_old_value),
        FIXTURE_TEST(test_views_survive_reads_that_expire_keys),
        FIXTURE_TEST(test_set_expiry_options),
        FIXTURE_TEST(test_set_rejects_bad_expire_times),
        FIXTURE_TEST(test_set_with_past_deadline_reads_absent),
        FIXTURE_TEST(test_encodings_follow_redis),
        FIXTURE_TEST(test_getset),
        FIXTURE_TEST(test_getdel),
        FIXTURE_TEST(test_getex),
        FIXTURE_TEST(test_append),
        FIXTURE_TEST(test_many_appends_build_the_right_string),
        FIXTURE_TEST(test_setrange),
        FIXTURE_TEST(test_setrange_errors_in_redis_order),
        FIXTURE_TEST(test_getrange),
        FIXTURE_TEST(test_incr_family),
        FIXTURE_TEST(test_incr_rejects_what_string2ll_rejects),
        FIXTURE_TEST(test_incr_overflow_at_both_ends),
        FIXTURE_TEST(test_incrbyfloat),
        FIXTURE_TEST(test_incrbyfloat_errors),
        FIXTURE_TEST(test_mget),
        FIXTURE_TEST(test_mset_and_msetnx),
        FIXTURE_TEST(test_failed_first_deadline_frees_its_record),
        FIXTURE_TEST(test_failed_allocations_change_nothing),
    };

    return cmocka_run_group_tests_name("strings", tests, NULL, NULL);
}
