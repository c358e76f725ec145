/* mem_bytes.c - bytes per element that the store spends on a data set,
 * measured two ways: goblin_store_used_memory (every block the store
 * allocates, at what glibc malloc really holds for it: its usable size
 * plus the chunk header) and the process's resident
 * set (VmRSS from /proc/self/status after malloc_trim(0): what the machine
 * really gives up, allocator overhead and fragmentation included).
 *
 * Cases (n is the element count; --n changes it):
 *   zset_int    one sorted set of n members "member:%08d" (15 bytes),
 *               score = the member's index, inserted in a seeded random
 *               order, ZADD batches of --batch pairs
 *   zset_u32    the same members with seeded random u32 scores
 *   hash        one hash of n fields "field:%010d" (16 bytes) with values
 *               "value:%010d" (16 bytes), random order, HSET batches
 *   zset_small  n/10 keys "zset:%08d", each a 10-member sorted set
 *               (members "member:%08d" 0..9, scores 0..9), one ZADD a key
 *   hash_small  n/10 keys "hash:%08d", each a 10-field hash (16-byte
 *               fields and values), one HSET a key
 *   string      n keys "key:%08d" (12 bytes) holding 8-byte values
 *               "v:%06d", random order
 *   list        one list of n elements "element:%08d" (16 bytes), in
 *               order, RPUSH 128 a call
 *   list_small  n/10 keys "list:%08d", each a 10-element list (16-byte
 *               elements), one RPUSH a key
 *   set         one set of n members "member:%09d" (16 bytes), random
 *               order, SADD batches of --batch members
 *   set_int     one set of the n integers 0..n-1, random order, SADD
 *               batches
 *   set_small   n/10 keys "set:%08d", each a 10-member set (16-byte
 *               members "member:%09d" 0..9), one SADD a key
 *
 * Each case runs in a fresh child process (fork), so the allocator state
 * one case leaves behind cannot flatter or penalise the next. The same
 * op sequence can be written as RESP commands (--resp) for redis-cli
 * --pipe, which is how bench/memory.sh loads redis-server with exactly
 * the same data.
 *
 * Output: one tab-separated line per case:
 *   case elements keys used_bytes rss_bytes used_per_elem rss_per_elem
 * This is a benchmark: it reports and never judges.
 *
 * usage: mem_bytes [--case NAME|all] [--n N] [--seed S] [--batch B]
 *                  [--resp]
 */
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "goblin.h"

enum op_kind { OP_ZADD, OP_HSET, OP_SET, OP_RPUSH, OP_SADD };

/* Receives one write: ZADD key (scores[i], args[i]) for i < n; HSET key
 * (args[2i], args[2i+1]) for i < n; SET key args[0]; RPUSH or SADD key
 * args[i] for i < n. */
typedef void op_fn(void *ctx, enum op_kind kind, struct goblin_slice key,
                   const struct goblin_slice *args, const double *scores,
                   size_t n);

struct opts {
    const char *name;
    long n;
    uint64_t seed;
    int batch;
    int resp;
};

struct gen {
    const struct opts *o;
    op_fn *op;
    void *ctx;
    uint32_t *order; /* a seeded permutation of 0..count-1 */
    size_t count;
};

struct bench_case {
    const char *name;
    void (*run)(struct gen *g);
    size_t (*order_len)(long n); /* how many things get shuffled */
    size_t (*keys)(long n);
    size_t per_item; /* elements per shuffled item */
};

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void shuffle(uint32_t *a, size_t n, uint64_t seed)
{
    uint64_t s = seed;

    for (size_t i = 0; i < n; i++)
        a[i] = (uint32_t)i;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(rng_next(&s) % i);
        uint32_t t = a[i - 1];

        a[i - 1] = a[j];
        a[j] = t;
    }
}

static struct goblin_slice sl(const char *p, int len)
{
    return (struct goblin_slice){ p, (size_t)len };
}

/* ---- the cases: each calls g->op with the same sequence every time ---- */

struct zbatch {
    char names[512][16];
    struct goblin_slice members[512];
    double scores[512];
    size_t n;
};

static void big_zset(struct gen *g, int u32_scores)
{
    static struct zbatch b;
    uint64_t s = g->o->seed ^ 0x5c0e5;
    size_t batch = (size_t)g->o->batch;

    b.n = 0;
    for (size_t i = 0; i < g->count; i++) {
        uint32_t id = g->order[i];
        int len = snprintf(b.names[b.n], 16, "member:%08" PRIu32, id);

        b.members[b.n] = sl(b.names[b.n], len);
        b.scores[b.n] = u32_scores ? (double)(uint32_t)rng_next(&s)
                                   : (double)id;
        if (++b.n == batch || i + 1 == g->count) {
            g->op(g->ctx, OP_ZADD, sl("zset", 4), b.members, b.scores, b.n);
            b.n = 0;
        }
    }
}

static void run_zset_int(struct gen *g)
{
    big_zset(g, 0);
}

static void run_zset_u32(struct gen *g)
{
    big_zset(g, 1);
}

static void run_hash(struct gen *g)
{
    static char text[1024][17];
    static struct goblin_slice fv[1024];
    size_t batch = (size_t)g->o->batch, n = 0;

    for (size_t i = 0; i < g->count; i++) {
        uint32_t id = g->order[i];

        fv[2 * n] = sl(text[2 * n],
                       snprintf(text[2 * n], 17, "field:%010" PRIu32, id));
        fv[2 * n + 1] = sl(text[2 * n + 1], snprintf(text[2 * n + 1], 17,
                                                     "value:%010" PRIu32, id));
        if (++n == batch || i + 1 == g->count) {
            g->op(g->ctx, OP_HSET, sl("hash", 4), fv, NULL, n);
            n = 0;
        }
    }
}

static void run_zset_small(struct gen *g)
{
    char names[10][16], key[24];
    struct goblin_slice members[10];
    double scores[10];

    for (int j = 0; j < 10; j++) {
        members[j] = sl(names[j], snprintf(names[j], 16, "member:%08d", j));
        scores[j] = j;
    }
    for (size_t i = 0; i < g->count; i++) {
        int len = snprintf(key, sizeof(key), "zset:%08" PRIu32, g->order[i]);

        g->op(g->ctx, OP_ZADD, sl(key, len), members, scores, 10);
    }
}

static void run_hash_small(struct gen *g)
{
    char text[20][17], key[24];
    struct goblin_slice fv[20];

    for (size_t i = 0; i < g->count; i++) {
        uint32_t id = g->order[i];
        int len = snprintf(key, sizeof(key), "hash:%08" PRIu32, id);

        for (int j = 0; j < 10; j++) {
            fv[2 * j] = sl(text[2 * j],
                           snprintf(text[2 * j], 17, "field:%010d", j));
            fv[2 * j + 1] = sl(text[2 * j + 1],
                               snprintf(text[2 * j + 1], 17, "value:%010"
                                        PRIu32, id * 10 + (uint32_t)j));
        }
        g->op(g->ctx, OP_HSET, sl(key, len), fv, NULL, 10);
    }
}

static void run_string(struct gen *g)
{
    char key[24], val[16];

    for (size_t i = 0; i < g->count; i++) {
        uint32_t id = g->order[i];
        int klen = snprintf(key, sizeof(key), "key:%08" PRIu32, id);
        struct goblin_slice v =
            sl(val, snprintf(val, sizeof(val), "v:%06" PRIu32, id % 1000000));

        g->op(g->ctx, OP_SET, sl(key, klen), &v, NULL, 1);
    }
}

static void run_list(struct gen *g)
{
    static char text[128][17];
    struct goblin_slice e[128];
    size_t k = 0;

    for (size_t i = 0; i < g->count; i++) {
        e[k] = sl(text[k], snprintf(text[k], 17, "element:%08zu", i));
        if (++k == 128 || i + 1 == g->count) {
            g->op(g->ctx, OP_RPUSH, sl("list", 4), e, NULL, k);
            k = 0;
        }
    }
}

static void run_set(struct gen *g, int ints)
{
    static char text[1024][17];
    static struct goblin_slice m[1024];
    size_t batch = (size_t)g->o->batch, n = 0;

    for (size_t i = 0; i < g->count; i++) {
        uint32_t id = g->order[i];

        m[n] = sl(text[n], ints ? snprintf(text[n], 17, "%" PRIu32, id)
                                : snprintf(text[n], 17, "member:%09" PRIu32,
                                           id));
        if (++n == batch || i + 1 == g->count) {
            g->op(g->ctx, OP_SADD, sl("set", 3), m, NULL, n);
            n = 0;
        }
    }
}

static void run_list_small(struct gen *g)
{
    char text[10][17], key[24];
    struct goblin_slice e[10];

    for (size_t i = 0; i < g->count; i++) {
        uint32_t id = g->order[i];
        int len = snprintf(key, sizeof(key), "list:%08" PRIu32, id);

        for (int j = 0; j < 10; j++)
            e[j] = sl(text[j], snprintf(text[j], 17, "element:%08" PRIu32,
                                        id * 10 + (uint32_t)j));
        g->op(g->ctx, OP_RPUSH, sl(key, len), e, NULL, 10);
    }
}

static void run_set_str(struct gen *g)
{
    run_set(g, 0);
}

static void run_set_int(struct gen *g)
{
    run_set(g, 1);
}

static void run_set_small(struct gen *g)
{
    char names[10][17], key[24];
    struct goblin_slice m[10];

    for (int j = 0; j < 10; j++)
        m[j] = sl(names[j], snprintf(names[j], 17, "member:%09d", j));
    for (size_t i = 0; i < g->count; i++) {
        int len = snprintf(key, sizeof(key), "set:%08" PRIu32, g->order[i]);

        g->op(g->ctx, OP_SADD, sl(key, len), m, NULL, 10);
    }
}

static size_t count_n(long n)
{
    return (size_t)n;
}

static size_t count_tenth(long n)
{
    return (size_t)(n / 10);
}

static size_t one_key(long n)
{
    (void)n;
    return 1;
}

static const struct bench_case cases[] = {
    { "zset_int", run_zset_int, count_n, one_key, 1 },
    { "zset_u32", run_zset_u32, count_n, one_key, 1 },
    { "hash", run_hash, count_n, one_key, 1 },
    { "zset_small", run_zset_small, count_tenth, count_tenth, 10 },
    { "hash_small", run_hash_small, count_tenth, count_tenth, 10 },
    { "string", run_string, count_n, count_n, 1 },
    { "list", run_list, count_n, one_key, 1 },
    { "list_small", run_list_small, count_tenth, count_tenth, 10 },
    { "set", run_set_str, count_n, one_key, 1 },
    { "set_int", run_set_int, count_n, one_key, 1 },
    { "set_small", run_set_small, count_tenth, count_tenth, 10 },
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* ---- applying the ops: into a store, or as RESP text ---- */

struct apply {
    goblin_store *st;
    long errors;
};

static void apply_op(void *ctx, enum op_kind kind, struct goblin_slice key,
                     const struct goblin_slice *args, const double *scores,
                     size_t n)
{
    static struct goblin_zpair pairs[512];
    struct apply *a = ctx;
    int64_t rc = 0;

    if (kind == OP_ZADD) {
        for (size_t i = 0; i < n; i++)
            pairs[i] = (struct goblin_zpair){ scores[i], args[i] };
        rc = goblin_zset_add_pairs(a->st, key, 0, pairs, n);
    } else if (kind == OP_HSET) {
        rc = goblin_hash_set(a->st, key, args, n);
    } else if (kind == OP_RPUSH) {
        rc = goblin_list_push(a->st, key, GOBLIN_LIST_TAIL, args, n, 0);
    } else if (kind == OP_SADD) {
        rc = goblin_set_add(a->st, key, args, n);
    } else {
        rc = goblin_str_set(a->st, key, args[0], NULL, NULL);
    }
    if (rc < 0)
        a->errors++;
}

static void resp_bulk(FILE *f, const void *p, size_t len)
{
    fprintf(f, "$%zu\r\n", len);
    fwrite(p, 1, len, f);
    fputs("\r\n", f);
}

static void resp_op(void *ctx, enum op_kind kind, struct goblin_slice key,
                    const struct goblin_slice *args, const double *scores,
                    size_t n)
{
    static const char *names[] = { "ZADD", "HSET", "SET", "RPUSH", "SADD" };
    FILE *f = ctx;
    size_t words = kind == OP_SET ? 1
                   : kind == OP_RPUSH || kind == OP_SADD ? n : 2 * n;
    char num[32];

    fprintf(f, "*%zu\r\n", 2 + words);
    resp_bulk(f, names[kind], strlen(names[kind]));
    resp_bulk(f, key.ptr, key.len);
    for (size_t i = 0; i < n; i++) {
        if (kind == OP_ZADD) {
            resp_bulk(f, num, goblin_double_format(num, scores[i]));
            resp_bulk(f, args[i].ptr, args[i].len);
        } else if (kind == OP_HSET) {
            resp_bulk(f, args[2 * i].ptr, args[2 * i].len);
            resp_bulk(f, args[2 * i + 1].ptr, args[2 * i + 1].len);
        } else if (kind == OP_RPUSH || kind == OP_SADD) {
            resp_bulk(f, args[i].ptr, args[i].len);
        } else {
            resp_bulk(f, args[0].ptr, args[0].len);
        }
    }
}

/* ---- measuring ---- */

static long vm_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;

    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

static long settled_rss(void)
{
    malloc_trim(0);
    return vm_rss_bytes();
}

static int measure(const struct bench_case *c, const struct opts *o)
{
    size_t count = c->order_len(o->n), elems = count * c->per_item;
    struct gen g = { o, apply_op, NULL, NULL, count };
    struct apply a = { NULL, 0 };
    long rss0, rss1;
    size_t used0, used1;

    g.order = malloc((count ? count : 1) * sizeof(*g.order));
    if (g.order == NULL || goblin_store_open(NULL, &a.st) != 0)
        return 1;
    shuffle(g.order, count, o->seed);
    g.ctx = &a;
    used0 = goblin_store_used_memory(a.st);
    rss0 = settled_rss();
    c->run(&g);
    used1 = goblin_store_used_memory(a.st);
    rss1 = settled_rss();
    if (a.errors != 0)
        fprintf(stderr, "mem_bytes: %s: %ld failed writes\n", c->name,
                a.errors);
    printf("%s\t%zu\t%zu\t%zu\t%ld\t%.2f\t%.2f\n", c->name, elems,
           c->keys(o->n), used1 - used0, rss1 - rss0,
           elems ? (double)(used1 - used0) / (double)elems : 0.0,
           elems ? (double)(rss1 - rss0) / (double)elems : 0.0);
    fflush(stdout);
    goblin_store_close(a.st);
    free(g.order);
    return a.errors != 0;
}

static int emit_resp(const struct bench_case *c, const struct opts *o)
{
    size_t count = c->order_len(o->n);
    struct gen g = { o, resp_op, stdout, NULL, count };

    g.order = malloc((count ? count : 1) * sizeof(*g.order));
    if (g.order == NULL)
        return 1;
    shuffle(g.order, count, o->seed);
    c->run(&g);
    free(g.order);
    return fflush(stdout) != 0;
}

/* Runs one case in a child process, so each starts from a fresh heap. */
static int run_forked(const struct bench_case *c, const struct opts *o)
{
    int status;
    pid_t pid;

    fflush(stdout);
    pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0)
        _exit(measure(c, o));
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
        return 1;
    return WEXITSTATUS(status);
}

static void usage(void)
{
    fputs("usage: mem_bytes [--case NAME|all] [--n N] [--seed S] "
          "[--batch B] [--resp]\ncases:", stderr);
    for (size_t i = 0; i < NCASES; i++)
        fprintf(stderr, " %s", cases[i].name);
    fputc('\n', stderr);
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
    static const struct option lo[] = {
        { "case", required_argument, NULL, 'c' },
        { "n", required_argument, NULL, 'n' },
        { "seed", required_argument, NULL, 's' },
        { "batch", required_argument, NULL, 'b' },
        { "resp", no_argument, NULL, 'r' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int ch;

    while ((ch = getopt_long(argc, argv, "c:n:s:b:rh", lo, NULL)) != -1) {
        if (ch == 'c')
            o->name = optarg;
        else if (ch == 'n')
            o->n = strtol(optarg, NULL, 10);
        else if (ch == 's')
            o->seed = strtoull(optarg, NULL, 10);
        else if (ch == 'b')
            o->batch = atoi(optarg);
        else if (ch == 'r')
            o->resp = 1;
        else
            return -1;
    }
    if (o->n < 0 || o->batch < 1 || o->batch > 512 || optind != argc)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o = { "all", 1000000, 12345, 128, 0 };
    int all, found = 0, rc = 0;

    if (parse_opts(argc, argv, &o) != 0) {
        usage();
        return 2;
    }
    all = strcmp(o.name, "all") == 0;
    if (all && o.resp) {
        fputs("mem_bytes: --resp needs one --case\n", stderr);
        return 2;
    }
    if (!o.resp)
        puts("# case\telements\tkeys\tused_bytes\trss_bytes"
             "\tused_per_elem\trss_per_elem");
    for (size_t i = 0; i < NCASES; i++) {
        if (!all && strcmp(o.name, cases[i].name) != 0)
            continue;
        found = 1;
        rc |= o.resp ? emit_resp(&cases[i], &o) : run_forked(&cases[i], &o);
    }
    if (!found)
        usage();
    return found ? rc : 2;
}
