/* test_memory_rss.c - with the default allocator, used_memory tracks what
 * the process really takes: on each large data set (1M string keys, a
 * 1M-field hash, a 1M-member sorted set, 100k small hashes and 100k small
 * sorted sets) the growth of goblin_store_used_memory is within 10% of the
 * growth of the process's RSS. Skipped under AddressSanitizer, whose
 * allocator pads and quarantines every block. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED true
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED true
#endif
#endif
#ifndef SANITIZED
#define SANITIZED false
#endif

static size_t rss(void)
{
    unsigned long long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");

    assert_non_null(f);
    assert_int_equal(fscanf(f, "%llu %llu", &size, &resident), 2);
    fclose(f);
    return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

typedef void load_fn(goblin_store *st);

static void strings(goblin_store *st)
{
    char k[32], v[16];

    for (int i = 0; i < 1000000; i++) {
        int kn = snprintf(k, sizeof(k), "key:%08d", i);
        int vn = snprintf(v, sizeof(v), "v%07d", i);

        assert_true(goblin_str_set(st, slice_of(k, (size_t)kn),
                                   slice_of(v, (size_t)vn), NULL, NULL) > 0);
    }
}

static void big_hash(goblin_store *st)
{
    static char text[256][24];
    struct goblin_slice fv[256];

    for (int i = 0; i < 1000000; i += 128) {
        for (int j = 0; j < 128; j++) {
            int fn = snprintf(text[2 * j], 24, "field:%010d", i + j);
            int vn = snprintf(text[2 * j + 1], 24, "value:%010d", i + j);

            fv[2 * j] = slice_of(text[2 * j], (size_t)fn);
            fv[2 * j + 1] = slice_of(text[2 * j + 1], (size_t)vn);
        }
        assert_true(goblin_hash_set(st, S("h"), fv, 128) >= 0);
    }
}

static void big_zset(goblin_store *st)
{
    static char text[128][24];
    struct goblin_zpair p[128];

    for (int i = 0; i < 1000000; i += 128) {
        for (int j = 0; j < 128; j++) {
            int n = snprintf(text[j], 24, "member:%08d", i + j);

            p[j].score = (double)(((int64_t)(i + j) * 7919) % 1000003);
            p[j].member = slice_of(text[j], (size_t)n);
        }
        assert_true(goblin_zset_add_pairs(st, S("z"), 0, p, 128) >= 0);
    }
}

static void small_hashes(goblin_store *st)
{
    static char text[20][8];
    struct goblin_slice fv[20];
    char k[32];

    for (int j = 0; j < 10; j++) {
        fv[2 * j] = slice_of(text[2 * j],
                             (size_t)snprintf(text[2 * j], 8, "f%d", j));
        fv[2 * j + 1] = slice_of(text[2 * j + 1], (size_t)snprintf(
                                     text[2 * j + 1], 8, "v%d", j));
    }
    for (int i = 0; i < 100000; i++) {
        int kn = snprintf(k, sizeof(k), "h:%07d", i);

        assert_int_equal(goblin_hash_set(st, slice_of(k, (size_t)kn), fv,
                                         10), 10);
    }
}

static void small_zsets(goblin_store *st)
{
    static char text[10][8];
    struct goblin_zpair p[10];
    char k[32];

    for (int j = 0; j < 10; j++) {
        p[j].score = j;
        p[j].member = slice_of(text[j],
                               (size_t)snprintf(text[j], 8, "m%d", j));
    }
    for (int i = 0; i < 100000; i++) {
        int kn = snprintf(k, sizeof(k), "z:%07d", i);

        assert_int_equal(goblin_zset_add_pairs(st, slice_of(k, (size_t)kn),
                                               0, p, 10), 10);
    }
}

/* Loads a data set in a fresh child process (so no case reuses memory a
 * previous one freed) and compares the two growths. */
static void check(const char *name, load_fn *load)
{
    size_t r[2] = {0, 0}, used, grown;
    int fd[2], status;
    pid_t pid;

    assert_int_equal(pipe(fd), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        goblin_store *st;
        size_t used0, rss0;

        close(fd[0]);
        if (goblin_store_open(NULL, &st) != 0)
            _exit(1);
        used0 = goblin_store_used_memory(st);
        rss0 = rss();
        load(st);
        r[0] = goblin_store_used_memory(st) - used0;
        r[1] = rss() - rss0;
        goblin_store_close(st);
        _exit(write(fd[1], r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
    }
    close(fd[1]);
    assert_int_equal(read(fd[0], r, sizeof(r)), (ssize_t)sizeof(r));
    close(fd[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    used = r[0];
    grown = r[1];
    print_message("%-22s used +%zu, rss +%zu (%.3f)\n", name, used, grown,
                  (double)used / (double)grown);
    assert_true(used <= grown + grown / 10);
    assert_true(grown <= used + grown / 10);
}

static void test_used_memory_tracks_rss(void **state)
{
    (void)state;
    if (SANITIZED)
        skip();
    check("1M string keys", strings);
    check("1M-field hash", big_hash);
    check("1M-member zset", big_zset);
    check("100k 10-field hashes", small_hashes);
    check("100k 10-member zsets", small_zsets);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_used_memory_tracks_rss),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
