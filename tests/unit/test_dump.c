/* test_dump.c - DUMP and RESTORE through a session: payloads redis-server
 * 7.0.15 wrote (listpack hash and sorted set, an int-encoded string)
 * restore here; every type round-trips with its deadline; the options
 * (REPLACE, ABSTTL, IDLETIME, FREQ) and every refusal have Redis's
 * texts; a corrupt payload changes nothing; RESTORE under allocation
 * failure. */
#include "test_commands_util.h"

#include "snapshot/checksum.h"

/* Feeds RESTORE key ttl payload [opts...] with a binary payload. */
static const char *restore(struct cfix *f, const char *key, const char *ttl,
                           const void *p, size_t n, const char *opts)
{
    static char buf[1 << 17];
    char words[256];
    int argc = 4;
    size_t len;
    const char *o = opts;

    words[0] = '\0';
    for (; o != NULL && *o != '\0'; o++)
        argc += (*o != ' ' && (o == opts || o[-1] == ' '));
    len = (size_t)snprintf(buf, sizeof(buf),
                           "*%d\r\n$7\r\nRESTORE\r\n$%zu\r\n%s\r\n$%zu\r\n%s"
                           "\r\n$%zu\r\n", argc, strlen(key), key,
                           strlen(ttl), ttl, n);
    assert_true(n < sizeof(buf) - len - 1024);
    memcpy(buf + len, p, n);
    len += n;
    len += (size_t)snprintf(buf + len, sizeof(buf) - len, "\r\n");
    for (o = opts; o != NULL && *o != '\0';) {
        const char *e = strchr(o, ' ');
        size_t wl = e != NULL ? (size_t)(e - o) : strlen(o);

        len += (size_t)snprintf(buf + len, sizeof(buf) - len,
                                "$%zu\r\n%.*s\r\n", wl, (int)wl, o);
        o += wl;
        while (*o == ' ')
            o++;
    }
    (void)words;
    f->rc = goblin_session_feed(f->s, buf, len);
    return take_output(f, f->s);
}

/* The payload of DUMP key (a bulk reply) into p; its length. */
static size_t dump(struct cfix *f, const char *key, char *p, size_t cap)
{
    char cmd[128];
    const char *r;
    char *end;
    size_t n;

    snprintf(cmd, sizeof(cmd), "dump %s", key);
    r = CMD(cmd);
    assert_int_equal(r[0], '$');
    n = strtoul(r + 1, &end, 10);
    assert_true(n < cap);
    memcpy(p, end + 2, n);
    return n;
}

static void test_redis_payloads_restore(void **state)
{
    struct cfix *f = *state;
    static const char h[] = "\x10\x12\x12\x00\x00\x00\x04\x00\x81\x66\x02"
                            "\x81\x76\x02\x81\x67\x02\x0c\x01\xff\x0a\x00"
                            "\xde\x13\x39\x93\xf7\x83\x81\x7e";
    static const char z[] = "\x11\x14\x14\x00\x00\x00\x04\x00\x81\x61\x02"
                            "\x01\x01\x81\x62\x02\x83\x32\x2e\x35\x04\xff"
                            "\x0a\x00\xd4\x4c\x6e\xa4\xf6\x44\xd9\xd7";
    static const char i[] = "\x00\xc1\xd2\x04\x0a\x00\x00\x87\x08\xa1\x44"
                            "\x82\x5c\xed";

    assert_string_equal(restore(f, "h", "0", h, sizeof(h) - 1, NULL),
                        "+OK\r\n");
    EXPECT("hgetall h", "*4\r\n$1\r\nf\r\n$1\r\nv\r\n$1\r\ng\r\n$2\r\n12\r\n");
    EXPECT("object encoding h", "$8\r\nlistpack\r\n");
    assert_string_equal(restore(f, "z", "0", z, sizeof(z) - 1, NULL),
                        "+OK\r\n");
    EXPECT("zrange z 0 -1 withscores",
           "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$3\r\n2.5\r\n");
    assert_string_equal(restore(f, "i", "0", i, sizeof(i) - 1, NULL),
                        "+OK\r\n");
    EXPECT("get i", "$4\r\n1234\r\n");
    /* A list (one LZF-compressed listpack node) and an intset. */
    {
        static const char l[] =
            "\x12\x01\x02\xc3\x21\x40\x61\x19\x61\x00\x00\x00\x06\x00"
            "\x81\x61\x02\x01\x01\xdf\xff\x02\xf1\x78\xec\x03\xf2\x70"
            "\x11\x01\x04\xe0\x46\x78\xe0\x3c\x00\x01\x48\xff\x0a\x00"
            "\x5c\x53\xd7\xb0\x75\xcb\xe2\xbd";
        static const char s[] =
            "\x0b\x0e\x02\x00\x00\x00\x03\x00\x00\x00\xfe\xff\x03\x00"
            "\x64\x00\x0a\x00\x20\x15\x06\x0c\xac\x19\xd6\x70";
        char p[256];
        size_t n;

        assert_string_equal(restore(f, "l", "0", l, sizeof(l) - 1, NULL),
                            "+OK\r\n");
        EXPECT("lrange l 0 4", "*5\r\n$1\r\na\r\n$1\r\n1\r\n$2\r\n-1"
               "\r\n$5\r\n-5000\r\n$5\r\n70000\r\n");
        EXPECT("strlen l", "-WRONGTYPE Operation against a key holding the "
               "wrong kind of value\r\n");
        EXPECT("llen l", ":6\r\n");
        assert_string_equal(restore(f, "s", "0", s, sizeof(s) - 1, NULL),
                            "+OK\r\n");
        EXPECT("object encoding s", "$6\r\nintset\r\n");
        EXPECT("smembers s", "*3\r\n$2\r\n-2\r\n$1\r\n3\r\n$3\r\n100"
               "\r\n");
        /* The intset's payload is byte for byte Redis's. */
        n = dump(f, "s", p, sizeof(p));
        assert_int_equal(n, sizeof(s) - 1);
        assert_memory_equal(p, s, n);
    }
    /* Goblin's own DUMP of the int is byte for byte Redis's. */
    {
        char p[64];
        size_t n = dump(f, "i", p, sizeof(p));

        assert_int_equal(n, sizeof(i) - 1);
        assert_memory_equal(p, i, n);
    }
}

static void test_every_type_round_trips(void **state)
{
    struct cfix *f = *state;
    static const char *const keys[] = {"s", "e", "r", "h", "hb", "z", "zb",
                                       "l", "lb", "si", "sb", "ss", "sh"};
    char p[65536], cmd[256];
    size_t n;

    EXPECT("set s -7", "+OK\r\n");
    EXPECT("set e hello", "+OK\r\n");
    EXPECT("set r 012345678901234567890123456789012345678901234567", "+OK\r\n");
    EXPECT("hset h a 1 b 2", ":2\r\n");
    EXPECT("zadd z -inf m 0 n inf o", ":3\r\n");
    for (int i = 0; i < 300; i++) {
        snprintf(cmd, sizeof(cmd), "hset hb f%d %d", i, i * 7);
        CMD(cmd);
        snprintf(cmd, sizeof(cmd), "zadd zb %d.5 m%d", i, i);
        CMD(cmd);
    }
    EXPECT("pexpire zb 100000", ":1\r\n");
    EXPECT("rpush l a 1 -1 70000", ":4\r\n");
    for (int i = 0; i < 3000; i++) {
        if (i < 800) {
            snprintf(cmd, sizeof(cmd), "rpush lb %d %0*d", i * 1000, i % 40,
                     i);
            CMD(cmd);
        }
        snprintf(cmd, sizeof(cmd), "sadd sb %d", i * 11);
        CMD(cmd);
        if (i < 300) {
            snprintf(cmd, sizeof(cmd), "sadd sh m%d", i);
            CMD(cmd);
        }
    }
    EXPECT("sadd si 1 -40000 9000000000", ":3\r\n");
    EXPECT("sadd ss a b 7", ":3\r\n");
    for (size_t k = 0; k < sizeof(keys) / sizeof(*keys); k++) {
        char enc[64], newkey[16];

        snprintf(cmd, sizeof(cmd), "object encoding %s", keys[k]);
        snprintf(enc, sizeof(enc), "%.40s", CMD(cmd));
        n = dump(f, keys[k], p, sizeof(p));
        snprintf(newkey, sizeof(newkey), "%s2", keys[k]);
        assert_string_equal(restore(f, newkey, "5000", p, n, NULL),
                            "+OK\r\n");
        snprintf(cmd, sizeof(cmd), "object encoding %s", newkey);
        assert_string_equal(CMD(cmd), enc);
        snprintf(cmd, sizeof(cmd), "pttl %s", newkey);
        assert_string_equal(CMD(cmd), ":5000\r\n");
    }
    EXPECT("hget hb2 f299", "$4\r\n2093\r\n");
    EXPECT("zscore zb2 m150", "$5\r\n150.5\r\n");
    EXPECT("zscore z2 m", "$4\r\n-inf\r\n");
    EXPECT("get s2", "$2\r\n-7\r\n");
    EXPECT("llen lb2", ":1600\r\n");
    EXPECT("lindex lb2 1598", "$6\r\n799000\r\n");
    EXPECT("lindex lb2 1599", "$39\r\n000000000000000000000000000000000000799"
           "\r\n");
    EXPECT("lindex lb2 3", "$1\r\n1\r\n");
    EXPECT("lrange l2 0 -1", "*4\r\n$1\r\na\r\n$1\r\n1\r\n$2\r\n-1\r\n"
           "$5\r\n70000\r\n");
    EXPECT("scard sb2", ":3000\r\n");
    EXPECT("sismember sb2 32989", ":1\r\n");
    EXPECT("smembers si2", "*3\r\n$6\r\n-40000\r\n$1\r\n1\r\n$10\r\n"
           "9000000000\r\n");
    EXPECT("sismember sh2 m299", ":1\r\n");
    EXPECT("dump nope", "$-1\r\n");
}

static void test_options_and_refusals(void **state)
{
    struct cfix *f = *state;
    char p[256];
    size_t n;

    EXPECT("set k v", "+OK\r\n");
    n = dump(f, "k", p, sizeof(p));
    assert_string_equal(restore(f, "k", "0", p, n, NULL),
                        "-BUSYKEY Target key name already exists.\r\n");
    assert_string_equal(restore(f, "k", "0", p, n, "bogus"),
                        "-ERR syntax error\r\n");
    assert_string_equal(restore(f, "k", "0", p, n, "idletime -1"),
                        "-ERR Invalid IDLETIME value, must be >= 0\r\n");
    assert_string_equal(restore(f, "k", "0", p, n, "freq 256"),
                        "-ERR Invalid FREQ value, must be >= 0 and <= "
                        "255\r\n");
    assert_string_equal(restore(f, "k", "0", p, n, "idletime 5 freq 1"),
                        "-ERR syntax error\r\n");
    assert_string_equal(restore(f, "n", "-1", p, n, NULL),
                        "-ERR Invalid TTL value, must be >= 0\r\n");
    assert_string_equal(restore(f, "n", "x", p, n, NULL),
                        "-ERR value is not an integer or out of range\r\n");
    assert_string_equal(restore(f, "n", "0", p, 9, NULL),
                        "-ERR DUMP payload version or checksum are "
                        "wrong\r\n");
    p[1] ^= 1; /* the value's byte: the checksum no longer matches */
    assert_string_equal(restore(f, "n", "0", p, n, NULL),
                        "-ERR DUMP payload version or checksum are "
                        "wrong\r\n");
    p[1] ^= 1;
    p[n - 10] = 11; /* a version 7.0 does not read */
    assert_string_equal(restore(f, "n", "0", p, n, NULL),
                        "-ERR DUMP payload version or checksum are "
                        "wrong\r\n");
    p[n - 10] = 10;
    assert_string_equal(restore(f, "k", "0", p, n, "replace idletime 100"),
                        "+OK\r\n");
    EXPECT("object idletime k", ":100\r\n");
    assert_string_equal(restore(f, "k", "1", p, n, "replace absttl"),
                        "+OK\r\n"); /* long past: only the delete */
    EXPECT("exists k", ":0\r\n");
    assert_string_equal(restore(f, "k", "99999999999999", p, n, "absttl"),
                        "+OK\r\n");
    EXPECT("pexpiretime k", ":99999999999999\r\n");
    EXPECT("exists n", ":0\r\n");
}

/* A payload whose checksum is right but whose value is not. */
static void test_bad_value_with_good_checksum(void **state)
{
    struct cfix *f = *state;
    struct goblin__crc64 tab;
    unsigned char p[32] = {4, 5, 1, 'a'}; /* a hash of 5 pairs, cut */
    uint64_t crc;
    size_t n = 4;

    p[n++] = 10;
    p[n++] = 0;
    goblin__crc64_init(&tab);
    crc = goblin__crc64(&tab, 0, p, n);
    for (int i = 0; i < 8; i++)
        p[n++] = (unsigned char)(crc >> (8 * i));
    assert_string_equal(restore(f, "k", "0", p, n, NULL),
                        "-ERR Bad data format\r\n");
    EXPECT("exists k", ":0\r\n");
}

static void test_restore_allocation_failures(void **state)
{
    struct cfix *f = *state;
    char p[8192], cmd[64];
    size_t n;
    long i;

    for (i = 0; i < 200; i++) {
        snprintf(cmd, sizeof(cmd), "zadd big %ld m%ld", i, i);
        CMD(cmd);
    }
    n = dump(f, "big", p, sizeof(p));
    for (i = 0;; i++) {
        const char *r;

        f->base->counts.fail_after = i;
        r = restore(f, "copy", "0", p, n, NULL);
        f->base->counts.fail_after = -1;
        if (strcmp(r, "+OK\r\n") == 0)
            break;
        assert_int_equal(r[0], '-');
        EXPECT("exists copy", ":0\r\n");
        assert_true(i < 2000);
    }
    EXPECT("zcard copy", ":200\r\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CMD_TEST(test_redis_payloads_restore),
        CMD_TEST(test_every_type_round_trips),
        CMD_TEST(test_options_and_refusals),
        CMD_TEST(test_bad_value_with_good_checksum),
        CMD_TEST(test_restore_allocation_failures),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
