/* test_bits_cmds.c - the bitmap, LCS, HyperLogLog and geo commands
 * through a session: Redis 7.0's reply and error texts at the edges
 * (offsets at 2^32 - 1 bits, BITFIELD overflows, LCS's transient memory)
 * and allocation failures answered without a change. */
#include "test_commands_util.h"

static void test_bit_offsets_at_the_limit(void **state)
{
    struct cfix *f = *state;

    EXPECT("GETBIT b 4294967295", ":0\r\n");
    EXPECT("GETBIT b 4294967296",
           "-ERR bit offset is not an integer or out of range\r\n");
    EXPECT("SETBIT b -1 1",
           "-ERR bit offset is not an integer or out of range\r\n");
    EXPECT("SETBIT b 0 2", "-ERR bit is not an integer or out of range\r\n");
    EXPECT("BITFIELD b GET u1 4294967295", "*1\r\n:0\r\n");
    EXPECT("BITFIELD b GET u8 #536870911", "*1\r\n:0\r\n");
    EXPECT("BITFIELD b GET u8 #536870912",
           "-ERR bit offset is not an integer or out of range\r\n");
    EXPECT("EXISTS b", ":0\r\n");
    EXPECT("CONFIG SET proto-max-bulk-len 1mb", "+OK\r\n");
    EXPECT("SETBIT b 8388607 1", ":0\r\n");
    EXPECT("STRLEN b", ":1048576\r\n");
    EXPECT("BITCOUNT b", ":1\r\n");
    EXPECT("BITPOS b 1", ":8388607\r\n");
    EXPECT("SETBIT b 8388608 1",
           "-ERR bit offset is not an integer or out of range\r\n");
}

static void test_bitfield_overflows(void **state)
{
    struct cfix *f = *state;

    EXPECT("BITFIELD k SET i8 0 127 INCRBY i8 0 1",
           "*2\r\n:0\r\n:-128\r\n");
    EXPECT("BITFIELD k OVERFLOW SAT INCRBY i8 0 -1000 OVERFLOW FAIL "
           "INCRBY i8 0 -1 GET i8 0", "*3\r\n:-128\r\n$-1\r\n:-128\r\n");
    EXPECT("BITFIELD k OVERFLOW SAT SET u63 8 -1 GET u63 8",
           "*2\r\n:0\r\n:9223372036854775807\r\n");
    EXPECT("BITFIELD k GET u64 0",
           "-ERR Invalid bitfield type. Use something like i16 u8. Note "
           "that u64 is not supported but i64 is.\r\n");
    EXPECT("BITFIELD k OVERFLOW MAYBE", "-ERR Invalid OVERFLOW type "
                                        "specified\r\n");
    EXPECT("BITFIELD_RO k SET u8 0 1",
           "-ERR BITFIELD_RO only supports the GET subcommand\r\n");
    EXPECT("BITOP NOT d k k",
           "-ERR BITOP NOT must be called with a single source key.\r\n");
    EXPECT("BITPOS k 2", "-ERR The bit argument must be 1 or 0.\r\n");
}

static void test_lcs_ranges_and_refusals(void **state)
{
    struct cfix *f = *state;

    EXPECT("MSET a ohmytext b mynewtext", "+OK\r\n");
    EXPECT("LCS a b", "$6\r\nmytext\r\n");
    EXPECT("LCS a b LEN", ":6\r\n");
    EXPECT("LCS a b IDX MINMATCHLEN 4 WITHMATCHLEN",
           "*4\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n"
           ":5\r\n:8\r\n:4\r\n$3\r\nlen\r\n:6\r\n");
    EXPECT("LCS a b IDX LEN", "-ERR If you want both the length and "
                              "indexes, please just use IDX.\r\n");
    EXPECT("HSET h f v", ":1\r\n");
    EXPECT("LCS a h", "-ERR The specified keys must contain string "
                      "values\r\n");
    EXPECT("CONFIG SET proto-max-bulk-len 1mb", "+OK\r\n");
    EXPECT("SETRANGE big 600 x", ":601\r\n");
    EXPECT("LCS big big LEN", "-ERR Insufficient memory, transient memory "
                              "for LCS exceeds proto-max-bulk-len\r\n");
    f->base->counts.fail_after = 0;
    EXPECT("LCS a b", "-ERR Insufficient memory, failed allocating "
                      "transient memory for LCS\r\n");
    f->base->counts.fail_after = -1;
}

static void test_setbit_allocation_failure_changes_nothing(void **state)
{
    struct cfix *f = *state;

    EXPECT("SET s abc", "+OK\r\n");
    f->base->counts.fail_after = 0;
    EXPECT("SETBIT s 100000 1",
           "-OOM command not allowed when used memory > 'maxmemory'.\r\n");
    f->base->counts.fail_after = -1;
    EXPECT("GET s", "$3\r\nabc\r\n");
}

static void test_hll_and_geo_texts(void **state)
{
    struct cfix *f = *state;

    EXPECT("SET s plain", "+OK\r\n");
    EXPECT("PFADD s a", "-WRONGTYPE Key is not a valid HyperLogLog string "
                        "value.\r\n");
    EXPECT("PFADD h a b c", ":1\r\n");
    EXPECT("PFCOUNT h", ":3\r\n");
    EXPECT("PFDEBUG ENCODING h", "+sparse\r\n");
    EXPECT("PFDEBUG DECODE h",
           "$44\r\nZ:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603\r\n");
    EXPECT("PFDEBUG TODENSE h", ":1\r\n");
    EXPECT("PFDEBUG DECODE h", "-ERR HLL encoding is not sparse\r\n");
    EXPECT("PFDEBUG FOO h", "-ERR Unknown PFDEBUG subcommand 'FOO'\r\n");
    EXPECT("PFDEBUG GETREG nokey", "-ERR The specified key does not "
                                   "exist\r\n");
    EXPECT("PFSELFTEST", "+OK\r\n");
    EXPECT("GEOADD g 13.361389 38.115556 Palermo 15.087269 37.502669 "
           "Catania", ":2\r\n");
    EXPECT("ZSCORE g Palermo", "$16\r\n3479099956230698\r\n");
    EXPECT("GEODIST g Palermo Catania km", "$8\r\n166.2742\r\n");
    EXPECT("GEOPOS g Palermo", "*1\r\n*2\r\n$20\r\n13.36138933897018433"
                               "\r\n$20\r\n38.11555639549629859\r\n");
    EXPECT("GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 100 km ASC",
           "*1\r\n$7\r\nCatania\r\n");
    EXPECT("GEOADD g 181 0 x", "-ERR invalid longitude,latitude pair "
                               "181.000000,0.000000\r\n");
    EXPECT("GEOSEARCH g FROMLONLAT 15 37 BYRADIUS 1 km ANY",
           "-ERR the ANY argument requires COUNT argument\r\n");
}

static void test_zrank_withscore_and_hscan_novalues(void **state)
{
    struct cfix *f = *state;

    EXPECT("ZADD z 1.5 a 2 b", ":2\r\n");
    EXPECT("ZRANK z b WITHSCORE", "*2\r\n:1\r\n$1\r\n2\r\n");
    EXPECT("ZREVRANK z b withscore", "*2\r\n:0\r\n$1\r\n2\r\n");
    EXPECT("ZRANK z nope WITHSCORE", "*-1\r\n");
    EXPECT("ZRANK z b foo", "-ERR syntax error\r\n");
    EXPECT("ZRANK z b WITHSCORE x",
           "-ERR wrong number of arguments for 'zrank' command\r\n");
    EXPECT("ZRANK z b", ":1\r\n");
    EXPECT("HSET h f1 v1", ":1\r\n");
    EXPECT("HSCAN h 0 NOVALUES",
           "*2\r\n$1\r\n0\r\n*1\r\n$2\r\nf1\r\n");
    EXPECT("HSCAN h 0 NOVALUES COUNT 10 MATCH f*",
           "*2\r\n$1\r\n0\r\n*1\r\n$2\r\nf1\r\n");
    EXPECT("HSCAN h 0", "*2\r\n$1\r\n0\r\n*2\r\n$2\r\nf1\r\n$2\r\n"
                        "v1\r\n");
    EXPECT("HSCAN h 0 COUNT", "-ERR syntax error\r\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CMD_TEST(test_bit_offsets_at_the_limit),
        CMD_TEST(test_bitfield_overflows),
        CMD_TEST(test_lcs_ranges_and_refusals),
        CMD_TEST(test_setbit_allocation_failure_changes_nothing),
        CMD_TEST(test_hll_and_geo_texts),
        CMD_TEST(test_zrank_withscore_and_hscan_novalues),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
