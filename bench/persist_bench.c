/* persist_bench.c - times Goblin's snapshot save and load of one big
 * sorted set or one big hash, and writes the same data as RESP so
 * bench/persist.sh can load redis-server with exactly the same content.
 *
 * Cases (n elements, seeded):
 *   zset   one sorted set "zset" of n members "member:%08d" (15 bytes)
 *          with random scores (a random u32 / 1000, so most have a
 *          fraction), ZADD batches of 1000
 *   hash   one hash "hash" of n fields "field:%010d" with values
 *          "value:%010d" (16 bytes each), HSET batches of 1000
 *
 * Without --resp: builds the case through the C API, then times
 * goblin_snapshot_save to DIR/CASE.gsn (temp file, fsync, rename, fsync
 * of the directory) and goblin_snapshot_load of it into a fresh store,
 * each the best of --reps runs, and prints one tab-separated line:
 *   case elements file_bytes save_ms load_ms
 * This is a benchmark: it reports and never judges.
 *
 * usage: persist_bench --case zset|hash [--n N] [--seed S] [--dir DIR]
 *                      [--reps R] [--resp]
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "goblin.h"
#include "goblin/snapshot.h"

#define BATCH 1000

struct opts {
    const char *name;
    long n;
    uint64_t seed;
    const char *dir;
    int reps;
    int resp;
};

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void resp_bulk(const void *p, size_t len)
{
    printf("$%zu\r\n", len);
    fwrite(p, 1, len, stdout);
    fputs("\r\n", stdout);
}

/* One batch of the case, as RESP or into st. */
static void emit(const struct opts *o, goblin_store *st, char (*a)[32],
                 char (*b)[32], size_t n)
{
    int zset = strcmp(o->name, "zset") == 0;
    const char *key = zset ? "zset" : "hash";

    if (o->resp) {
        printf("*%zu\r\n", 2 + 2 * n);
        resp_bulk(zset ? "ZADD" : "HSET", 4);
        resp_bulk(key, 4);
        for (size_t i = 0; i < n; i++) {
            resp_bulk(zset ? b[i] : a[i], strlen(zset ? b[i] : a[i]));
            resp_bulk(zset ? a[i] : b[i], strlen(zset ? a[i] : b[i]));
        }
        return;
    }
    struct goblin_slice k = {key, 4};
    struct goblin_zpair zp[BATCH];
    struct goblin_slice fv[2 * BATCH];

    for (size_t i = 0; i < n; i++) {
        if (zset) {
            zp[i].member = (struct goblin_slice){a[i], strlen(a[i])};
            zp[i].score = strtod(b[i], NULL);
        } else {
            fv[2 * i] = (struct goblin_slice){a[i], strlen(a[i])};
            fv[2 * i + 1] = (struct goblin_slice){b[i], strlen(b[i])};
        }
    }
    if (zset ? goblin_zset_add_pairs(st, k, 0, zp, n) < 0
             : goblin_hash_set(st, k, fv, n) < 0) {
        fputs("persist_bench: write failed\n", stderr);
        exit(1);
    }
}

/* The case's writes, in batches. Scores go through text so Goblin and
 * Redis get exactly the same doubles. */
static void generate(const struct opts *o, goblin_store *st)
{
    static char a[BATCH][32], b[BATCH][32];
    uint64_t s = o->seed;
    size_t n = 0;
    int zset = strcmp(o->name, "zset") == 0;

    for (long i = 0; i < o->n; i++) {
        if (zset) {
            snprintf(a[n], 32, "member:%08ld", i % 100000000);
            snprintf(b[n], 32, "%.3f",
                     (double)(uint32_t)rng_next(&s) / 1000);
        } else {
            snprintf(a[n], 32, "field:%010ld", i % 1000000000);
            snprintf(b[n], 32, "value:%010" PRIu64,
                     (uint64_t)(rng_next(&s) % 10000000000ULL));
        }
        if (++n == BATCH) {
            emit(o, st, a, b, n);
            n = 0;
        }
    }
    if (n > 0)
        emit(o, st, a, b, n);
}

static int run(const struct opts *o)
{
    struct goblin_snapshot_result res;
    goblin_store *st, *ld;
    char path[4096];
    double best_save = 1e30, best_load = 1e30;

    snprintf(path, sizeof(path), "%s/%s.gsn", o->dir, o->name);
    if (goblin_store_open(NULL, &st) != 0)
        return 1;
    generate(o, st);
    for (int r = 0; r < o->reps; r++) {
        double t0 = now_ms(), t1;

        if (goblin_snapshot_save(st, path, &res) != 0) {
            fprintf(stderr, "persist_bench: %s\n", res.message);
            return 1;
        }
        t1 = now_ms();
        if (t1 - t0 < best_save)
            best_save = t1 - t0;
        if (goblin_store_open(NULL, &ld) != 0)
            return 1;
        t0 = now_ms();
        if (goblin_snapshot_load(ld, path, &res) != 0) {
            fprintf(stderr, "persist_bench: %s\n", res.message);
            return 1;
        }
        t1 = now_ms();
        if (t1 - t0 < best_load)
            best_load = t1 - t0;
        goblin_store_close(ld);
    }
    printf("%s\t%ld\t%" PRIu64 "\t%.1f\t%.1f\n", o->name, o->n, res.bytes,
           best_save, best_load);
    goblin_store_close(st);
    unlink(path);
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o = {"zset", 1000000, 12345, "/tmp", 3, 0};
    static const struct option lo[] = {
        {"case", required_argument, NULL, 'c'},
        {"n", required_argument, NULL, 'n'},
        {"seed", required_argument, NULL, 's'},
        {"dir", required_argument, NULL, 'd'},
        {"reps", required_argument, NULL, 'r'},
        {"resp", no_argument, NULL, 'R'},
        {NULL, 0, NULL, 0},
    };
    int c;

    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (c) {
        case 'c': o.name = optarg; break;
        case 'n': o.n = atol(optarg); break;
        case 's': o.seed = strtoull(optarg, NULL, 10); break;
        case 'd': o.dir = optarg; break;
        case 'r': o.reps = atoi(optarg); break;
        case 'R': o.resp = 1; break;
        default:
            fputs("usage: persist_bench --case zset|hash [--n N] [--seed S]"
                  " [--dir DIR] [--reps R] [--resp]\n", stderr);
            return 2;
        }
    }
    if (strcmp(o.name, "zset") != 0 && strcmp(o.name, "hash") != 0) {
        fprintf(stderr, "persist_bench: unknown case %s\n", o.name);
        return 2;
    }
    if (o.resp) {
        generate(&o, NULL);
        return 0;
    }
    return run(&o);
}
