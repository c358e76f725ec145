/* test_sbe.c - the generated SBE codecs (sbe-schema/goblin.xml).
 *
 * Three kinds of checks:
 *  - every template round-trips through its typed encoder and decoder
 *    with random values (the round trips are generated with the codecs);
 *  - golden byte vectors written by hand from the SBE 1.0 specification
 *    (header, root block without padding, groupSizeEncoding, uint32-length
 *    var data, little-endian), so the generator is held to the standard
 *    and not only to itself;
 *  - malformed messages of every kind the decoder must refuse, fed from
 *    exact-size heap copies so a sanitizer sees any read past the end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "goblin.h"
#include "goblin/sbe.h"

/* A slice from a string literal (binary-safe: sizeof, not strlen). */
#define S(lit) ((struct goblin_slice){(lit), sizeof(lit) - 1})

#include "sbe/goblin_sbe_gen.h"
#include "sbe/goblin_sbe_gen_test.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* A message checked from a heap block of exactly its size. */
static int validate_exact(const uint8_t *bytes, size_t len, const char **why)
{
    uint8_t *copy = malloc(len > 0 ? len : 1);
    struct goblin_sbe_msg m;
    int r;

    assert_non_null(copy);
    memcpy(copy, bytes, len);
    r = goblin_sbe_msg_wrap(&m, copy, len);
    if (r == 0)
        r = goblin_sbe_validate(&m);
    if (why != NULL)
        *why = m.why;
    free(copy);
    return r;
}

/* ---- round trips ---- */

static void test_every_template_round_trips(void **state)
{
    static uint8_t buf[8192];
    uint64_t rng = 12345;
    size_t i;
    int k;

    (void)state;
    assert_int_equal(NELEM(goblin_sbe_test_cases), GOBLIN_SBE_TEMPLATE_COUNT);
    for (i = 0; i < NELEM(goblin_sbe_test_cases); i++) {
        const struct goblin_sbe_test_case *c = &goblin_sbe_test_cases[i];

        assert_string_equal(goblin_sbe_template_name(c->id), c->name);
        for (k = 0; k < 300; k++) {
            int line = c->run(&rng, buf, sizeof(buf));

            if (line != 0)
                fail_msg("%s: round trip failed at generated line %d",
                         c->name, line);
        }
    }
}

static void test_template_ids_are_unique_and_known(void **state)
{
    size_t i, j;

    (void)state;
    for (i = 0; i < GOBLIN_SBE_TEMPLATE_COUNT; i++) {
        assert_non_null(goblin_sbe_template_name(goblin_sbe_template_ids[i]));
        for (j = i + 1; j < GOBLIN_SBE_TEMPLATE_COUNT; j++)
            assert_int_not_equal(goblin_sbe_template_ids[i],
                                 goblin_sbe_template_ids[j]);
    }
    /* The ids the reference design gave these messages. */
    assert_int_equal(GOBLIN_SBE_NIL_REPLY, 1);
    assert_int_equal(GOBLIN_SBE_SCORED_SCAN_REPLY, 15);
    assert_int_equal(GOBLIN_SBE_STRING_SCAN_REPLY, 125);
    assert_int_equal(GOBLIN_SBE_PING, 16);
    assert_int_equal(GOBLIN_SBE_ZADD, 17);
    assert_int_equal(GOBLIN_SBE_ZSCORE, 19);
    assert_int_equal(GOBLIN_SBE_ZRANK, 20);
    assert_int_equal(GOBLIN_SBE_ZRANGE, 21);
    assert_int_equal(GOBLIN_SBE_GET, 22);
    assert_int_equal(GOBLIN_SBE_SET, 23);
    assert_int_equal(GOBLIN_SBE_DEL, 34);
    assert_int_equal(GOBLIN_SBE_HSET, 46);
    assert_int_equal(GOBLIN_SBE_HGET, 48);
    assert_int_equal(GOBLIN_SBE_ZREVRANK, 58);
    assert_int_equal(GOBLIN_SBE_ZREM, 59);
    assert_int_equal(GOBLIN_SBE_LPUSH, 110);
    assert_int_equal(GOBLIN_SBE_SCARD, 120);
    assert_null(goblin_sbe_template_name(0));
    assert_int_equal(GOBLIN_SBE_PUBLISHED_MESSAGE, 12);
    assert_string_equal(goblin_sbe_template_name(12), "PublishedMessage");
    assert_null(goblin_sbe_template_name(13));
    assert_null(goblin_sbe_template_name(9999));
}

/* ---- golden vectors (u32 LE frame length, then the SBE message) ---- */

static const uint8_t golden_ping[] = {
    0x08, 0x00, 0x00, 0x00,             /* frame: 8 bytes */
    0x00, 0x00, 0x10, 0x00,             /* blockLength 0, templateId 16 */
    0x07, 0x00, 0x01, 0x00,             /* schemaId 7, version 1 */
};

static const uint8_t golden_get_s[] = {
    0x0d, 0x00, 0x00, 0x00,             /* frame: 13 bytes */
    0x00, 0x00, 0x16, 0x00, 0x07, 0x00, 0x01, 0x00, /* GET (22) */
    0x01, 0x00, 0x00, 0x00, 's',        /* key: length 1, "s" */
};

static const uint8_t golden_set[] = {
    0x1c, 0x00, 0x00, 0x00,             /* frame: 28 bytes */
    0x0a, 0x00, 0x17, 0x00, 0x07, 0x00, 0x01, 0x00, /* SET (23), block 10 */
    0x01,                               /* flags: NX */
    0x01,                               /* expireMode: EX */
    0x0a, 0, 0, 0, 0, 0, 0, 0,          /* expireValue 10, at offset 2 */
    0x01, 0x00, 0x00, 0x00, 'k',        /* key */
    0x01, 0x00, 0x00, 0x00, 'v',        /* value */
};

static const uint8_t golden_zadd[] = {
    0x2c, 0x00, 0x00, 0x00,             /* frame: 44 bytes */
    0x01, 0x00, 0x11, 0x00, 0x07, 0x00, 0x01, 0x00, /* ZADD (17), block 1 */
    0x10,                               /* flags: CH */
    0x08, 0x00, 0x02, 0x00,             /* members: blockLength 8, 2 */
    0, 0, 0, 0, 0, 0, 0xf8, 0x3f,       /* score 1.5 */
    0x01, 0x00, 0x00, 0x00, 'a',        /* member "a" */
    0, 0, 0, 0, 0, 0, 0x00, 0xc0,       /* score -2.0 */
    0x01, 0x00, 0x00, 0x00, 'b',        /* member "b" */
    0x01, 0x00, 0x00, 0x00, 'z',        /* key "z", after the group */
};

static const uint8_t golden_hset[] = {
    0x1e, 0x00, 0x00, 0x00,             /* frame: 30 bytes */
    0x00, 0x00, 0x2e, 0x00, 0x07, 0x00, 0x01, 0x00, /* HSET (46) */
    0x00, 0x00, 0x01, 0x00,             /* entries: blockLength 0, 1 */
    0x02, 0x00, 0x00, 0x00, 'f', '1',   /* field */
    0x03, 0x00, 0x00, 0x00, 'v', 0, '1', /* value, binary */
    0x01, 0x00, 0x00, 0x00, 'h',        /* key */
};

static const uint8_t golden_int_reply[] = {
    0x10, 0x00, 0x00, 0x00,
    0x08, 0x00, 0x04, 0x00, 0x07, 0x00, 0x01, 0x00, /* IntReply (4) */
    0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* -2 */
};

static const uint8_t golden_array_reply[] = {
    0x16, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x07, 0x00, 0x07, 0x00, 0x01, 0x00, /* ArrayReply (7) */
    0x00, 0x00, 0x02, 0x00,             /* items: blockLength 0, 2 */
    0x02, 0x00, 0x00, 0x00, 'h', 'i',
    0x00, 0x00, 0x00, 0x00,             /* "" */
};

static const uint8_t golden_error_reply[] = {
    0x17, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x03, 0x00, 0x07, 0x00, 0x01, 0x00, /* ErrorReply (3) */
    0x03, 0x00, 0x00, 0x00, 'E', 'R', 'R',
    0x04, 0x00, 0x00, 0x00, 'b', 'o', 'o', 'm',
};

static void expect_bytes(const uint8_t *got, int n, const uint8_t *want,
                         size_t len)
{
    assert_int_equal(n, (int)len);
    assert_memory_equal(got, want, len);
}

static void test_golden_encodings(void **state)
{
    uint8_t buf[256];
    struct goblin_sbe_writer w;
    int n;

    (void)state;
    goblin_sbe_writer_init(&w, buf, sizeof(buf), true);
    expect_bytes(buf, goblin_sbe_ping_encode(&w), golden_ping,
                 sizeof(golden_ping));

    goblin_sbe_writer_init(&w, buf, sizeof(buf), true);
    expect_bytes(buf, goblin_sbe_get_encode(&w, S("s")), golden_get_s,
                 sizeof(golden_get_s));

    goblin_sbe_writer_init(&w, buf, sizeof(buf), true);
    n = goblin_sbe_set_encode(&w, GOBLIN_SBE_SET_FLAGS_NX,
                              GOBLIN_SBE_EXPIRE_MODE_EX, 10, S("k"), S("v"));
    expect_bytes(buf, n, golden_set, sizeof(golden_set));

    goblin_sbe_writer_init(&w, buf, sizeof(buf), true);
    goblin_sbe_zadd_begin(&w, GOBLIN_SBE_ZADD_FLAGS_CH);
    goblin_sbe_zadd_members_begin(&w);
    goblin_sbe_zadd_members_add(&w, 1.5, S("a"));
    goblin_sbe_zadd_members_add(&w, -2.0, S("b"));
    expect_bytes(buf, goblin_sbe_zadd_end(&w, S("z")), golden_zadd,
                 sizeof(golden_zadd));

    goblin_sbe_writer_init(&w, buf, sizeof(buf), true);
    goblin_sbe_hset_begin(&w);
    goblin_sbe_hset_entries_begin(&w);
    goblin_sbe_hset_entries_add(&w, S("f1"), S("v\0001"));
    expect_bytes(buf, goblin_sbe_hset_end(&w, S("h")), golden_hset,
                 sizeof(golden_hset));

    goblin_sbe_writer_init(&w, buf, sizeof(buf), true);
    expect_bytes(buf, goblin_sbe_int_reply_encode(&w, -2), golden_int_reply,
                 sizeof(golden_int_reply));

    goblin_sbe_writer_init(&w, buf, sizeof(buf), true);
    goblin_sbe_array_reply_begin(&w);
    goblin_sbe_array_reply_items_begin(&w);
    goblin_sbe_array_reply_items_add(&w, S("hi"));
    goblin_sbe_array_reply_items_add(&w, S(""));
    expect_bytes(buf, goblin_sbe_array_reply_end(&w), golden_array_reply,
                 sizeof(golden_array_reply));

    goblin_sbe_writer_init(&w, buf, sizeof(buf), true);
    n = goblin_sbe_error_reply_encode(&w, S("ERR"), S("boom"));
    expect_bytes(buf, n, golden_error_reply, sizeof(golden_error_reply));
}

/* Wraps the message inside a golden frame (skipping its length prefix). */
static void wrap_golden(struct goblin_sbe_msg *m, const uint8_t *frame,
                        size_t len)
{
    assert_true(len >= 4);
    assert_int_equal(frame[0] | frame[1] << 8 | frame[2] << 16, len - 4);
    assert_int_equal(goblin_sbe_msg_wrap(m, frame + 4, len - 4), 0);
}

static void test_golden_decodings(void **state)
{
    struct goblin_sbe_msg m;
    struct goblin_sbe_set set;
    struct goblin_sbe_zadd zadd;
    struct goblin_sbe_zadd_members e;
    struct goblin_sbe_hset hset;
    struct goblin_sbe_hset_entries he;

    (void)state;
    wrap_golden(&m, golden_set, sizeof(golden_set));
    assert_int_equal(m.template_id, GOBLIN_SBE_SET);
    assert_int_equal(goblin_sbe_set_decode(&set, &m), 0);
    assert_int_equal(goblin_sbe_set_flags(&set), GOBLIN_SBE_SET_FLAGS_NX);
    assert_int_equal(goblin_sbe_set_expire_mode(&set), 1);
    assert_int_equal(goblin_sbe_set_expire_value(&set), 10);
    assert_int_equal(set.key.len, 1);
    assert_memory_equal(set.value.ptr, "v", 1);

    wrap_golden(&m, golden_zadd, sizeof(golden_zadd));
    assert_int_equal(goblin_sbe_zadd_decode(&zadd, &m), 0);
    assert_int_equal(goblin_sbe_zadd_flags(&zadd), 0x10);
    assert_int_equal(zadd.members.count, 2);
    assert_true(goblin_sbe_zadd_members_next(&zadd.members, &e));
    assert_true(goblin_sbe_zadd_members_score(&e) == 1.5);
    assert_memory_equal(e.member.ptr, "a", 1);
    assert_true(goblin_sbe_zadd_members_next(&zadd.members, &e));
    assert_true(goblin_sbe_zadd_members_score(&e) == -2.0);
    assert_false(goblin_sbe_zadd_members_next(&zadd.members, &e));
    assert_memory_equal(zadd.key.ptr, "z", 1);

    wrap_golden(&m, golden_hset, sizeof(golden_hset));
    assert_int_equal(goblin_sbe_hset_decode(&hset, &m), 0);
    assert_true(goblin_sbe_hset_entries_next(&hset.entries, &he));
    assert_int_equal(he.value.len, 3);
    assert_memory_equal(he.value.ptr, "v\0001", 3);
    assert_memory_equal(hset.key.ptr, "h", 1);
}

/* ---- malformed messages ---- */

struct bad_case {
    const char *name;
    uint8_t bytes[64];
    size_t len;
    int code;
    const char *why;
};

#define HDR(bl, tid, sid, ver) \
    (bl) & 0xff, (bl) >> 8, (tid) & 0xff, (tid) >> 8, (sid) & 0xff, \
        (sid) >> 8, (ver) & 0xff, (ver) >> 8

static const struct bad_case bad_cases[] = {
    {"empty", {0}, 0, GOBLIN_EPROTO, "truncated header"},
    {"seven header bytes", {HDR(0, 16, 7, 1)}, 7, GOBLIN_EPROTO,
     "truncated header"},
    {"other schema id", {HDR(0, 16, 8, 1)}, 8, GOBLIN_EINCOMPAT,
     "schema id mismatch"},
    {"version 0", {HDR(0, 16, 7, 0)}, 8, GOBLIN_EINCOMPAT,
     "schema version mismatch"},
    {"unknown template", {HDR(0, 9999, 7, 1)}, 8, GOBLIN_EPROTO,
     "unknown template id"},
    {"block past the end", {HDR(8, 4, 7, 1), 1, 2, 3}, 11, GOBLIN_EPROTO,
     "block length past the end of the frame"},
    {"block too short", {HDR(17, 21, 7, 1), 0}, 25, GOBLIN_EPROTO,
     "block length too short for the template"},
    {"var length cut", {HDR(0, 22, 7, 1), 1, 0}, 10, GOBLIN_EPROTO,
     "var data length past the end of the frame"},
    {"var data past the end", {HDR(0, 22, 7, 1), 5, 0, 0, 0, 's'}, 13,
     GOBLIN_EPROTO, "var data past the end of the frame"},
    {"var data over the maximum", {HDR(0, 22, 7, 1), 1, 0, 0, 0x40, 's'},
     13, GOBLIN_EPROTO, "var data longer than the schema allows"},
    {"group header cut", {HDR(1, 17, 7, 1), 0, 8, 0}, 11, GOBLIN_EPROTO,
     "group header past the end of the frame"},
    {"group block too short", {HDR(1, 17, 7, 1), 0, 7, 0, 0, 0}, 13,
     GOBLIN_EPROTO, "group block length too short"},
    {"group count past the end", {HDR(0, 14, 7, 1), 9, 0, 0xe8, 0x03,
     1, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f}, 21, GOBLIN_EPROTO,
     "group entries past the end of the frame"},
    {"group entry var past the end", {HDR(0, 7, 7, 1), 0, 0, 2, 0,
     1, 0, 0, 0, 'a'}, 17, GOBLIN_EPROTO,
     "var data length past the end of the frame"},
    {"trailing bytes", {HDR(0, 16, 7, 1), 0}, 9, GOBLIN_EPROTO,
     "trailing bytes after the message"},
    {"nil reply with a block past the end", {HDR(65535, 1, 7, 1)}, 8,
     GOBLIN_EPROTO, "block length past the end of the frame"},
};

static void test_malformed_messages_are_refused(void **state)
{
    size_t i;

    (void)state;
    for (i = 0; i < NELEM(bad_cases); i++) {
        const struct bad_case *c = &bad_cases[i];
        const char *why = NULL;
        int r = validate_exact(c->bytes, c->len, &why);

        if (r != c->code || why == NULL || strcmp(why, c->why) != 0)
            fail_msg("%s: got %d (%s), want %d (%s)", c->name, r,
                     why ? why : "-", c->code, c->why);
    }
}

static void test_every_truncation_of_a_message_is_refused(void **state)
{
    const uint8_t *frames[] = {golden_get_s, golden_set, golden_zadd,
                               golden_hset, golden_int_reply,
                               golden_array_reply, golden_error_reply};
    const size_t lens[] = {sizeof(golden_get_s), sizeof(golden_set),
                           sizeof(golden_zadd), sizeof(golden_hset),
                           sizeof(golden_int_reply),
                           sizeof(golden_array_reply),
                           sizeof(golden_error_reply)};
    size_t i, n;

    (void)state;
    for (i = 0; i < NELEM(frames); i++) {
        const uint8_t *msg = frames[i] + 4;
        size_t len = lens[i] - 4;

        assert_int_equal(validate_exact(msg, len, NULL), 0);
        for (n = 0; n < len; n++)
            assert_int_not_equal(validate_exact(msg, n, NULL), 0);
    }
}

/* Newer senders: longer root and entry blocks, extra trailing elements. */
static void test_newer_versions_decode_by_block_length(void **state)
{
    static const uint8_t get_v2[] = {
        HDR(4, 22, 7, 2), 0xaa, 0xbb, 0xcc, 0xdd, /* a field we do not know */
        1, 0, 0, 0, 's',
        9, 9, 9,                           /* a data field we do not know */
    };
    static const uint8_t zadd_v2[] = {
        HDR(2, 17, 7, 2), 0x02, 0xee,
        12, 0, 1, 0,                              /* entries grew to 12 bytes */
        0, 0, 0, 0, 0, 0, 0x04, 0x40, 1, 2, 3, 4, /* 2.5, then unknown */
        1, 0, 0, 0, 'm',
        1, 0, 0, 0, 'k',
    };
    struct goblin_sbe_msg m;
    struct goblin_sbe_get get;
    struct goblin_sbe_zadd zadd;
    struct goblin_sbe_zadd_members e;

    (void)state;
    assert_int_equal(goblin_sbe_msg_wrap(&m, get_v2, sizeof(get_v2)), 0);
    assert_int_equal(goblin_sbe_get_decode(&get, &m), 0);
    assert_int_equal(get.key.len, 1);
    assert_memory_equal(get.key.ptr, "s", 1);

    assert_int_equal(goblin_sbe_msg_wrap(&m, zadd_v2, sizeof(zadd_v2)), 0);
    assert_int_equal(goblin_sbe_zadd_decode(&zadd, &m), 0);
    assert_int_equal(goblin_sbe_zadd_flags(&zadd), GOBLIN_SBE_ZADD_FLAGS_XX);
    assert_true(goblin_sbe_zadd_members_next(&zadd.members, &e));
    assert_true(goblin_sbe_zadd_members_score(&e) == 2.5);
    assert_memory_equal(e.member.ptr, "m", 1);
    assert_memory_equal(zadd.key.ptr, "k", 1);
}

/* Random corruption of valid messages: refused or accepted, never a read
 * outside the message (the sanitizer build checks that). */
static void test_corrupted_messages_never_read_outside(void **state)
{
    static uint8_t buf[8192];
    uint64_t rng = 99;
    size_t i;
    int k, flips;

    (void)state;
    for (i = 0; i < NELEM(goblin_sbe_test_cases); i++) {
        for (k = 0; k < 40; k++) {
            uint32_t len;

            assert_int_equal(goblin_sbe_test_cases[i].run(&rng, buf,
                                                          sizeof(buf)), 0);
            len = goblin_sbe_rd_u32(buf);
            for (flips = 0; flips < 3; flips++) {
                uint64_t r = goblin_sbe_test_rand(&rng);

                buf[4 + r % len] = (uint8_t)(r >> 32);
            }
            (void)validate_exact(buf + 4, len, NULL);
            (void)validate_exact(buf + 4, (size_t)(rng % (len + 1)), NULL);
        }
    }
}

/* ---- the writer's limits ---- */

static void test_writer_too_small_fails_keeps_earlier_messages(void **s)
{
    uint8_t buf[64];
    struct goblin_sbe_writer w;
    size_t cap;
    int n;

    (void)s;
    for (cap = 0; cap < sizeof(golden_set); cap++) {
        goblin_sbe_writer_init(&w, buf, cap, true);
        n = goblin_sbe_set_encode(&w, 1, 1, 10, S("k"), S("v"));
        assert_int_equal(n, GOBLIN_ERANGE);
        assert_int_equal(w.pos, 0);
    }
    /* A first message fits, the second does not: the first stays. */
    goblin_sbe_writer_init(&w, buf, 2 * sizeof(golden_ping) + 4, true);
    assert_int_equal(goblin_sbe_ping_encode(&w), (int)sizeof(golden_ping));
    assert_int_equal(goblin_sbe_get_encode(&w, S("long key")), GOBLIN_ERANGE);
    assert_int_equal(w.pos, sizeof(golden_ping));
    assert_memory_equal(buf, golden_ping, sizeof(golden_ping));
    /* ... and the writer goes on. */
    assert_int_equal(goblin_sbe_ping_encode(&w), (int)sizeof(golden_ping));
}

static void test_writer_group_limit_is_65535(void **state)
{
    size_t cap = 16 + 65536 * 4 + 64;
    uint8_t *buf = malloc(cap);
    struct goblin_sbe_writer w;
    unsigned i;

    (void)state;
    assert_non_null(buf);
    goblin_sbe_writer_init(&w, buf, cap, true);
    goblin_sbe_array_reply_begin(&w);
    goblin_sbe_array_reply_items_begin(&w);
    for (i = 0; i < 65535; i++)
        goblin_sbe_array_reply_items_add(&w, S(""));
    assert_int_equal(goblin_sbe_array_reply_end(&w), 4 + 8 + 4 + 65535 * 4);

    goblin_sbe_writer_init(&w, buf, cap, true);
    goblin_sbe_array_reply_begin(&w);
    goblin_sbe_array_reply_items_begin(&w);
    for (i = 0; i < 65536; i++)
        goblin_sbe_array_reply_items_add(&w, S(""));
    assert_int_equal(goblin_sbe_array_reply_end(&w), GOBLIN_ELIMIT);
    assert_int_equal(w.pos, 0);
    free(buf);
}

static void test_writer_data_limit(void **state)
{
    uint8_t buf[64];
    struct goblin_sbe_writer w;
    /* Never read: the length is refused before any copy. */
    struct goblin_slice huge = {buf, (size_t)GOBLIN_SBE_VAR_MAX + 1};

    (void)state;
    goblin_sbe_writer_init(&w, buf, sizeof(buf), false);
    assert_int_equal(goblin_sbe_get_encode(&w, huge), GOBLIN_ELIMIT);
    assert_int_equal(w.pos, 0);
}

static void test_writer_fills_groups_not_begun(void **state)
{
    static const uint8_t want[] = {
        HDR(2, 103, 7, 1), 0x02, 0x00, /* ZUNIONSTORE, aggregate Max */
        8, 0, 0, 0,                    /* keys: blockLength 8, none */
        1, 0, 0, 0, 'd',
    };
    uint8_t buf[64];
    struct goblin_sbe_writer w;
    struct goblin_sbe_msg m;

    (void)state;
    goblin_sbe_writer_init(&w, buf, sizeof(buf), false);
    goblin_sbe_zunionstore_begin(&w, GOBLIN_SBE_AGGREGATE_MAX, 0);
    expect_bytes(buf, goblin_sbe_zunionstore_end(&w, S("d")), want,
                 sizeof(want));
    assert_int_equal(goblin_sbe_msg_wrap(&m, buf, sizeof(want)), 0);
    assert_int_equal(goblin_sbe_validate(&m), 0);
}

static void test_enum_and_set_helpers(void **state)
{
    (void)state;
    assert_true(goblin_sbe_expire_mode_valid(GOBLIN_SBE_EXPIRE_MODE_PXAT));
    assert_false(goblin_sbe_expire_mode_valid(5));
    assert_true(goblin_sbe_get_ex_mode_valid(GOBLIN_SBE_GET_EX_MODE_PERSIST));
    assert_int_equal(GOBLIN_SBE_ZADD_FLAGS_INCR, 0x20);
    assert_int_equal(GOBLIN_SBE_ZADD_FLAGS_MASK, 0x3f);
    assert_int_equal(GOBLIN_SBE_SET_FLAGS_KEEPTTL, 0x08);
    assert_int_equal(GOBLIN_SBE_VALUE_TYPE_NULL_ARRAY, 13);
}

/* The public frame finder of goblin/sbe.h. */
static void test_frame_next_finds_whole_frames(void **state)
{
    uint8_t two[sizeof(golden_ping) + sizeof(golden_get_s)];
    const uint8_t huge[] = {0x01, 0x00, 0x00, 0x04};
    const uint8_t tiny[] = {0x07, 0x00, 0x00, 0x00};
    const void *msg = NULL;
    size_t len = 0, cut;

    (void)state;
    memcpy(two, golden_ping, sizeof(golden_ping));
    memcpy(two + sizeof(golden_ping), golden_get_s, sizeof(golden_get_s));
    for (cut = 0; cut < sizeof(golden_ping); cut++)
        assert_int_equal(goblin_sbe_frame_next(two, cut, 0, &msg, &len), 0);
    assert_int_equal(goblin_sbe_frame_next(two, sizeof(two), 0, &msg, &len),
                     (int64_t)sizeof(golden_ping));
    assert_ptr_equal(msg, two + 4);
    assert_int_equal(len, 8);
    assert_int_equal(goblin_sbe_frame_next(huge, 4, 0, &msg, &len),
                     GOBLIN_ELIMIT);
    assert_int_equal(goblin_sbe_frame_next(golden_get_s, 4, 12, &msg, &len),
                     GOBLIN_ELIMIT);
    assert_int_equal(goblin_sbe_frame_next(tiny, 4, 0, &msg, &len),
                     GOBLIN_EPROTO);
    assert_int_equal(goblin_sbe_schema_id(), 7);
    assert_int_equal(goblin_sbe_schema_version(), GOBLIN_SBE_SCHEMA_VERSION);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_template_round_trips),
        cmocka_unit_test(test_template_ids_are_unique_and_known),
        cmocka_unit_test(test_golden_encodings),
        cmocka_unit_test(test_golden_decodings),
        cmocka_unit_test(test_malformed_messages_are_refused),
        cmocka_unit_test(test_every_truncation_of_a_message_is_refused),
        cmocka_unit_test(test_newer_versions_decode_by_block_length),
        cmocka_unit_test(test_corrupted_messages_never_read_outside),
        cmocka_unit_test(test_writer_too_small_fails_keeps_earlier_messages),
        cmocka_unit_test(test_writer_group_limit_is_65535),
        cmocka_unit_test(test_writer_data_limit),
        cmocka_unit_test(test_writer_fills_groups_not_begun),
        cmocka_unit_test(test_enum_and_set_helpers),
        cmocka_unit_test(test_frame_next_finds_whole_frames),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
