/* test_latency_hist.c - LATENCY HISTOGRAM's levels and counts: Redis
 * 7.0's labels at every level's edge, every call counted while one in 16
 * is timed (each untimed call charged the last timed one's duration),
 * slow calls exactly,
 * both protocols' shapes, latency-tracking and CONFIG RESETSTAT. The
 * engine's clock steps by a set amount at each read, so a timed command
 * lasts exactly that. */
#include <stdio.h>
#include <string.h>

#include "engine/latency.h"
#include "engine/session.h"
#include "test_commands_util.h"

static uint64_t step_ns;

static uint64_t stepping_now_ns(void *ctx)
{
    struct cfix *f = ctx;

    f->now_ns += step_ns;
    return f->now_ns;
}

static int setup(void **state)
{
    struct cfix *f;

    if (cfix_setup(state) != 0)
        return -1;
    f = *state;
    f->eng->cfg.now_ns = stepping_now_ns;
    step_ns = 0;
    return 0;
}

#define HIST_TEST(fn) cmocka_unit_test_setup_teardown(fn, setup, cfix_teardown)

static void test_levels_and_labels_are_redis(void **state)
{
    /* Redis 7.0.15's labels (LATENCY HISTOGRAM after DEBUG SLEEP). */
    static const uint64_t labels[GOBLIN__CMDHIST_LEVELS] = {
        1,     2,     4,     8,      16,     33,     66,
        132,   264,   528,   1056,   2113,   4227,   8454,
        16908, 33816, 67633, 135266, 270532, 541065, 1073741};

    (void)state;
    for (int i = 0; i < GOBLIN__CMDHIST_LEVELS; i++)
        assert_int_equal(goblin__cmdhist_bound_us(i), labels[i]);
    assert_int_equal(goblin__cmdhist_level(0), 0);
    assert_int_equal(goblin__cmdhist_level(1), 0);
    assert_int_equal(goblin__cmdhist_level(2), 1);
    assert_int_equal(goblin__cmdhist_level(3), 2);
    assert_int_equal(goblin__cmdhist_level(4), 2);
    assert_int_equal(goblin__cmdhist_level(5), 3);
    /* A label is the last duration its level takes, in whole us of
     * Redis's us * 1000 ns: 1056 us is level 10's, 1057 us the next. */
    for (int i = 0; i < GOBLIN__CMDHIST_LEVELS - 1; i++) {
        assert_int_equal(goblin__cmdhist_level(labels[i]), i);
        assert_int_equal(goblin__cmdhist_level(labels[i] + 1), i + 1);
    }
    assert_int_equal(goblin__cmdhist_level(1000000), 20);
    assert_int_equal(goblin__cmdhist_level(UINT64_MAX), 20);
}

static void test_every_call_counted_while_sampled(void **state)
{
    struct cfix *f = *state;

    assert_false(f->eng->time_all);
    EXPECT("latency histogram ping", "*0\r\n");
    step_ns = 5000; /* 5 us: the level labelled 8 */
    for (int i = 0; i < 20; i++)
        EXPECT("ping", "+PONG\r\n");
    EXPECT("latency histogram ping",
           "*2\r\n$4\r\nping\r\n*4\r\n$5\r\ncalls\r\n:20\r\n"
           "$14\r\nhistogram_usec\r\n*2\r\n:8\r\n:20\r\n");
    /* Calls 20..31 are charged the 5 us of call 16; call 32 and those
     * after it, the 100 us of call 32. */
    step_ns = 100000;
    for (int i = 0; i < 20; i++)
        EXPECT("ping", "+PONG\r\n");
    EXPECT("latency histogram ping",
           "*2\r\n$4\r\nping\r\n*4\r\n$5\r\ncalls\r\n:40\r\n"
           "$14\r\nhistogram_usec\r\n*4\r\n:8\r\n:32\r\n:132\r\n:40\r\n");
    CMD("hello 3");
    EXPECT("latency histogram ping nosuch",
           "%1\r\n$4\r\nping\r\n%2\r\n$5\r\ncalls\r\n:40\r\n"
           "$14\r\nhistogram_usec\r\n%2\r\n:8\r\n:32\r\n:132\r\n:40\r\n");
}

static void test_slow_calls_counted_exactly(void **state)
{
    struct cfix *f = *state;

    /* A threshold of 0: every call is slow, so every call is put in its
     * own level, not charged the sample's. */
    EXPECT("config set slowlog-log-slower-than 0", "+OK\r\n");
    assert_true(f->eng->time_all);
    step_ns = 5000;
    for (int i = 0; i < 20; i++)
        EXPECT("ping", "+PONG\r\n");
    step_ns = 100000;
    for (int i = 0; i < 20; i++)
        EXPECT("ping", "+PONG\r\n");
    EXPECT("latency histogram ping",
           "*2\r\n$4\r\nping\r\n*4\r\n$5\r\ncalls\r\n:40\r\n"
           "$14\r\nhistogram_usec\r\n*4\r\n:8\r\n:20\r\n:132\r\n:40\r\n");
}

static void test_containers_unknown_names_and_repeats(void **state)
{
    struct cfix *f = *state;

    EXPECT("config get hz", "*2\r\n$2\r\nhz\r\n$2\r\n10\r\n");
    EXPECT("latency histogram nosuch hgetall client|nosuch", "*0\r\n");
    EXPECT("latency histogram CONFIG|GET config ping config|get",
           "*6\r\n"
           "$10\r\nconfig|get\r\n*4\r\n$5\r\ncalls\r\n:1\r\n"
           "$14\r\nhistogram_usec\r\n*2\r\n:1\r\n:1\r\n"
           "$10\r\nconfig|get\r\n*4\r\n$5\r\ncalls\r\n:1\r\n"
           "$14\r\nhistogram_usec\r\n*2\r\n:1\r\n:1\r\n"
           "$10\r\nconfig|get\r\n*4\r\n$5\r\ncalls\r\n:1\r\n"
           "$14\r\nhistogram_usec\r\n*2\r\n:1\r\n:1\r\n");
    /* Without names: every command that ran (in the table's order; a
     * map, Redis's is in its dictionary's), this one's last call
     * included. */
    EXPECT("latency histogram",
           "*4\r\n"
           "$17\r\nlatency|histogram\r\n*4\r\n$5\r\ncalls\r\n:2\r\n"
           "$14\r\nhistogram_usec\r\n*2\r\n:1\r\n:2\r\n"
           "$10\r\nconfig|get\r\n*4\r\n$5\r\ncalls\r\n:1\r\n"
           "$14\r\nhistogram_usec\r\n*2\r\n:1\r\n:1\r\n");
}

static void test_tracking_off_and_resetstat(void **state)
{
    struct cfix *f = *state;

    EXPECT("config set latency-tracking no", "+OK\r\n");
    EXPECT("config get latency-tracking",
           "*2\r\n$16\r\nlatency-tracking\r\n$2\r\nno\r\n");
    for (int i = 0; i < 40; i++)
        EXPECT("ping", "+PONG\r\n");
    EXPECT("latency histogram ping", "*0\r\n");
    EXPECT("config set latency-tracking yes", "+OK\r\n");
    for (int i = 0; i < 8; i++) /* calls 40..47: 40 and 48 are timed */
        EXPECT("ping", "+PONG\r\n");
    EXPECT("latency histogram ping",
           "*2\r\n$4\r\nping\r\n*4\r\n$5\r\ncalls\r\n:8\r\n"
           "$14\r\nhistogram_usec\r\n*2\r\n:1\r\n:8\r\n");
    EXPECT("config resetstat", "+OK\r\n");
    EXPECT("latency histogram ping", "*0\r\n");
    EXPECT("ping", "+PONG\r\n");
    EXPECT("latency histogram ping config|resetstat",
           "*4\r\n"
           "$4\r\nping\r\n*4\r\n$5\r\ncalls\r\n:1\r\n"
           "$14\r\nhistogram_usec\r\n*2\r\n:1\r\n:1\r\n"
           "$16\r\nconfig|resetstat\r\n*4\r\n$5\r\ncalls\r\n:1\r\n"
           "$14\r\nhistogram_usec\r\n*2\r\n:1\r\n:1\r\n");
    EXPECT("config set latency-tracking maybe",
           "-ERR CONFIG SET failed (possibly related to argument "
           "'latency-tracking') - argument must be 'yes' or 'no'\r\n");
}

static void test_hdr_layout_is_redis(void **state)
{
    static const uint64_t one[GOBLIN__HDR_COUNTS] = {0};
    uint64_t counts[GOBLIN__HDR_COUNTS] = {0};

    (void)state;
    /* Exact below 256, then 128 sub-buckets a power of two. */
    assert_int_equal(goblin__hdr_index(0), 1);
    assert_int_equal(goblin__hdr_index(1), 1);
    assert_int_equal(goblin__hdr_index(255), 255);
    assert_int_equal(goblin__hdr_index(256), 256);
    assert_int_equal(goblin__hdr_index(257), 256);
    assert_int_equal(goblin__hdr_index(258), 257);
    assert_int_equal(goblin__hdr_index(UINT64_MAX),
                     goblin__hdr_index(1000000000));
    assert_true(goblin__hdr_index(1000000000) < GOBLIN__HDR_COUNTS);
    /* Redis reports 6 us as 6.015 (p50..p100) and 5.984 (p0). */
    counts[goblin__hdr_index(6000)] = 1;
    assert_int_equal(goblin__hdr_percentile(counts, 1, 0, 0, 50.0), 6015);
    assert_int_equal(goblin__hdr_percentile(counts, 1, 0, 0, 0.0), 5984);
    assert_int_equal(goblin__hdr_percentile(counts, 1, 0, 0, 100.0), 6015);
    /* Calls not yet in counts (the untimed ones since the last sample). */
    assert_int_equal(goblin__hdr_percentile(one, 3, goblin__hdr_index(999),
                                            3, 99.0), 999);
    assert_int_equal(goblin__hdr_percentile(one, 0, 0, 0, 50.0), 0);
    /* 1 s and more: Redis's cap. */
    memset(counts, 0, sizeof(counts));
    counts[goblin__hdr_index(5000000000u)] = 1;
    assert_int_equal(goblin__hdr_percentile(counts, 1, 0, 0, 50.0),
                     1002438655);
}

/* The line INFO latencystats has for name, or "" when none. */
static const char *latency_line(struct cfix *f, const char *name,
                                char *buf, size_t cap)
{
    const char *r = CMD("info latencystats"), *p, *e;
    char key[64];

    snprintf(key, sizeof(key), "latency_percentiles_usec_%s:", name);
    p = strstr(r, key);
    if (p == NULL)
        return "";
    e = strstr(p, "\r\n");
    snprintf(buf, cap, "%.*s", (int)(e - p), p);
    return buf;
}

/* CONFIG SET latency-tracking-info-percentiles of one value with spaces. */
#define SET_PERCENTILES(len, value)                                         \
    "*4\r\n$6\r\nconfig\r\n$3\r\nset\r\n$33\r\n"                          \
    "latency-tracking-info-percentiles\r\n" len "\r\n" value "\r\n"

static void test_latencystats_percentiles(void **state)
{
    struct cfix *f = *state;
    char buf[256];

    /* Nothing timed yet: the header only; then INFO's own call. */
    EXPECT("info latencystats", "$16\r\n# Latencystats\r\n\r\n");
    assert_string_equal(latency_line(f, "info", buf, sizeof(buf)),
                        "latency_percentiles_usec_info:p50=0.001,"
                        "p99=0.001,p99.9=0.001");
    assert_true(strstr(CMD("info"), "Latencystats") == NULL);
    assert_true(strstr(CMD("info all"), "# Errorstats") <
                strstr(CMD("info all"), "# Latencystats"));
    step_ns = 5000;
    for (int i = 0; i < 20; i++)
        EXPECT("ping", "+PONG\r\n");
    step_ns = 100000;
    for (int i = 0; i < 20; i++)
        EXPECT("ping", "+PONG\r\n");
    /* 32 calls charged 5 us, 8 charged 100 us (as LATENCY HISTOGRAM). */
    assert_string_equal(latency_line(f, "ping", buf, sizeof(buf)),
                        "latency_percentiles_usec_ping:p50=5.023,"
                        "p99=100.351,p99.9=100.351");
    assert_string_equal(FEED(SET_PERCENTILES("$13", "0 80 99.99999")),
                        "+OK\r\n");
    EXPECT("config get latency-tracking-info-percentiles",
           "*2\r\n$33\r\nlatency-tracking-info-percentiles\r\n"
           "$13\r\n0 80 99.99999\r\n");
    assert_string_equal(latency_line(f, "ping", buf, sizeof(buf)),
                        "latency_percentiles_usec_ping:p0=4.992,p80=5.023,"
                        "p99.99999=100.351");
    assert_string_equal(latency_line(f, "config|set", buf, sizeof(buf)),
                        "latency_percentiles_usec_config|set:p0=99.840,"
                        "p80=100.351,p99.99999=100.351");
    assert_string_equal(FEED(SET_PERCENTILES("$0", "")), "+OK\r\n");
    assert_string_equal(latency_line(f, "ping", buf, sizeof(buf)),
                        "latency_percentiles_usec_ping:");
    EXPECT("config set latency-tracking no", "+OK\r\n");
    EXPECT("info latencystats", "$16\r\n# Latencystats\r\n\r\n");
    EXPECT("config set latency-tracking yes", "+OK\r\n");
    EXPECT("config resetstat", "+OK\r\n");
    assert_string_equal(latency_line(f, "ping", buf, sizeof(buf)), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        HIST_TEST(test_levels_and_labels_are_redis),
        HIST_TEST(test_every_call_counted_while_sampled),
        HIST_TEST(test_slow_calls_counted_exactly),
        HIST_TEST(test_containers_unknown_names_and_repeats),
        HIST_TEST(test_tracking_off_and_resetstat),
        HIST_TEST(test_hdr_layout_is_redis),
        HIST_TEST(test_latencystats_percentiles),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
