/* cmd_memory.c - MEMORY USAGE, STATS, DOCTOR, MALLOC-STATS, PURGE and
 * HELP with Redis 7.0's replies and texts.
 *
 * The numbers are Goblin's own (docs/memory.md): USAGE is what the key's
 * record and collection blocks take in Goblin (store/key_memory.c), and
 * STATS reports Goblin's accounting under Redis's field names. The
 * allocator is glibc malloc (or the embedding program's), not jemalloc,
 * so the allocator.* fields are filled as Redis fills them for a libc
 * build: allocated is used memory, active and resident the RSS. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "engine/maxmemory.h"
#include "engine/session.h"
#include "exec.h"
#include "handlers.h"
#include "respond.h"
#include "store/keyspace.h"
#include "store/store.h"

void goblin__cmd_memory_usage(goblin__exec *x, int argc,
                              const struct goblin_slice *argv)
{
    int64_t samples;
    size_t bytes;

    /* SAMPLES is checked as Redis checks it; the count is exact anyway
     * (key_memory.c walks blocks, not elements). */
    for (int j = 3; j < argc; j++) {
        if (!goblin__arg_is(argv[j], "samples") || j + 1 >= argc) {
            goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
            return;
        }
        if (!goblin__arg_int64(x, argv[j + 1], &samples, NULL))
            return;
        if (samples < 0) {
            goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
            return;
        }
        j++;
    }
    if (!goblin__key_memory(x->st, argv[2], &bytes)) {
        goblin__reply_null(x);
        return;
    }
    goblin__reply_int(x, (int64_t)bytes);
}

static void field_int(goblin__exec *x, const char *name, uint64_t v)
{
    goblin__reply_cstr(x, name);
    goblin__reply_int(x, (int64_t)v);
}

static void field_double(goblin__exec *x, const char *name, double v)
{
    goblin__reply_cstr(x, name);
    goblin__reply_double(x, v);
}

static double ratio(uint64_t a, uint64_t b)
{
    return b > 0 ? (double)(float)((double)a / (double)b) : 0.0;
}

static int open_dbs(const goblin_engine *e)
{
    int n = 0;

    for (int i = 0; i < e->ndbs; i++)
        if (goblin__db_peek(e, i) != NULL &&
            goblin_key_count(goblin__db_peek(e, i)) > 0)
            n++;
    return n;
}

static void stats_dbs(goblin__exec *x)
{
    const goblin_engine *e = x->eng;
    size_t main, expires;
    char name[32];

    for (int i = 0; i < e->ndbs; i++) {
        goblin_store *st = goblin__db_peek(e, i);

        if (st == NULL || goblin_key_count(st) == 0)
            continue;
        goblin__keyspace_overhead_parts(st, &main, &expires);
        snprintf(name, sizeof(name), "db.%d", i);
        goblin__reply_cstr(x, name);
        goblin__reply_map(x, 3);
        field_int(x, "overhead.hashtable.main", main);
        field_int(x, "overhead.hashtable.expires", expires);
        field_int(x, "overhead.hashtable.slot-to-keys", 0);
    }
}

void goblin__cmd_memory_stats(goblin__exec *x, int argc,
                              const struct goblin_slice *argv)
{
    struct goblin__mem_overhead m;
    uint64_t net;
    int64_t frag_bytes;

    (void)argc;
    (void)argv;
    goblin__mem_overhead(x->eng, &m);
    net = m.used > m.startup ? m.used - m.startup : 1;
    frag_bytes = (int64_t)m.rss - (int64_t)m.used;
    goblin__reply_map(x, 27 + (size_t)open_dbs(x->eng));
    field_int(x, "peak.allocated", m.peak);
    field_int(x, "total.allocated", m.used);
    field_int(x, "startup.allocated", m.startup);
    field_int(x, "replication.backlog", 0);
    field_int(x, "clients.slaves", 0);
    field_int(x, "clients.normal", m.clients);
    field_int(x, "cluster.links", 0);
    field_int(x, "aof.buffer", 0);
    field_int(x, "lua.caches", 0);
    field_int(x, "functions.caches", 0);
    stats_dbs(x);
    field_int(x, "overhead.total", m.overhead);
    field_int(x, "keys.count", m.keys);
    field_int(x, "keys.bytes-per-key", m.keys ? net / m.keys : 0);
    field_int(x, "dataset.bytes", m.dataset);
    field_double(x, "dataset.percentage", ratio(m.dataset * 100, net));
    field_double(x, "peak.percentage", ratio(m.used * 100, m.peak));
    field_int(x, "allocator.allocated", m.used);
    field_int(x, "allocator.active", m.rss);
    field_int(x, "allocator.resident", m.rss);
    field_double(x, "allocator-fragmentation.ratio", ratio(m.rss, m.used));
    goblin__reply_cstr(x, "allocator-fragmentation.bytes");
    goblin__reply_int(x, frag_bytes);
    field_double(x, "allocator-rss.ratio", m.rss ? 1.0 : 0.0);
    field_int(x, "allocator-rss.bytes", 0);
    field_double(x, "rss-overhead.ratio", m.rss ? 1.0 : 0.0);
    field_int(x, "rss-overhead.bytes", 0);
    field_double(x, "fragmentation", ratio(m.rss, m.used));
    goblin__reply_cstr(x, "fragmentation.bytes");
    goblin__reply_int(x, frag_bytes);
}

/* Redis 7.0's getMemoryDoctorReport over Goblin's figures. With malloc's
 * allocator figures filled as a libc build fills them (the top of this
 * file), the allocator RSS and process RSS checks never fire. */
static const char doc_empty[] =
    "Hi Sam, this instance is empty or is using very little memory, my "
    "issues detector can't be used in these conditions. Please, leave for "
    "your mission on Earth and fill it with some data. The new Sam and I "
    "will be back to our programming as soon as I finished rebooting.\n";
static const char doc_fine[] =
    "Hi Sam, I can't find any memory issue in your instance. I can only "
    "account for what occurs on this base.\n";
static const char doc_head[] =
    "Sam, I detected a few issues in this Redis instance memory "
    "implants:\n\n";
static const char doc_peak[] =
    " * Peak memory: In the past this instance used more than 150% the "
    "memory that is currently using. The allocator is normally not able "
    "to release memory after a peak, so you can expect to see a big "
    "fragmentation ratio, however this is actually harmless and is only "
    "due to the memory peak, and if the Redis instance Resident Set Size "
    "(RSS) is currently bigger than expected, the memory will be used as "
    "soon as you fill the Redis instance with more data. If the memory "
    "peak was only occasional and you want to try to reclaim memory, "
    "please try the MEMORY PURGE command, otherwise the only other option "
    "is to shutdown and restart the instance.\n\n";
static const char doc_frag[] =
    " * High total RSS: This instance has a memory fragmentation and RSS "
    "overhead greater than 1.4 (this means that the Resident Set Size of "
    "the Redis process is much larger than the sum of the logical "
    "allocations Redis performed). This problem is usually due either to "
    "a large peak memory (check if there is a peak memory entry above in "
    "the report) or may result from a workload that causes the allocator "
    "to fragment memory a lot. If the problem is a large peak memory, "
    "then there is no issue. Otherwise, make sure you are using the "
    "Jemalloc allocator and not the default libc malloc. Note: The "
    "currently used allocator is \"libc\".\n\n";
static const char doc_alloc_frag[] =
    " * High allocator fragmentation: This instance has an allocator "
    "external fragmentation greater than 1.1. This problem is usually due "
    "either to a large peak memory (check if there is a peak memory entry "
    "above in the report) or may result from a workload that causes the "
    "allocator to fragment memory a lot. You can try enabling "
    "'activedefrag' config option.\n\n";
static const char doc_clients[] =
    " * Big client buffers: The clients output buffers in this instance "
    "are greater than 200K per client (on average). This may result from "
    "different causes, like Pub/Sub clients subscribed to channels bot "
    "not receiving data fast enough, so that data piles on the Redis "
    "instance output buffer, or clients sending commands with large "
    "replies or very large sequences of commands in the same pipeline. "
    "Please use the CLIENT LIST command in order to investigate the issue "
    "if it causes problems in your instance, or to understand better why "
    "certain clients are using a big amount of memory.\n\n";
static const char doc_tail[] =
    "I'm here to keep you safe, Sam. I want to help you.\n";

void goblin__cmd_memory_doctor(goblin__exec *x, int argc,
                               const struct goblin_slice *argv)
{
    struct goblin__mem_overhead m;
    char buf[sizeof(doc_head) + sizeof(doc_peak) + sizeof(doc_frag) +
             sizeof(doc_alloc_frag) + sizeof(doc_clients) +
             sizeof(doc_tail)];
    bool peak, frag, clients;
    size_t n = x->eng->nsessions;

    (void)argc;
    (void)argv;
    goblin__mem_overhead(x->eng, &m);
    if (m.used < 5u * 1024 * 1024) {
        goblin__reply_verbatim(x, doc_empty, sizeof(doc_empty) - 1);
        return;
    }
    peak = (float)m.peak / (float)m.used > 1.5f;
    frag = (float)m.rss / (float)m.used > 1.4f &&
           m.rss > m.used + (10u << 20);
    clients = n > 0 && m.clients / n > 1024 * 200;
    if (!peak && !frag && !clients) {
        goblin__reply_verbatim(x, doc_fine, sizeof(doc_fine) - 1);
        return;
    }
    strcpy(buf, doc_head);
    if (peak)
        strcat(buf, doc_peak);
    if (frag) /* allocator fragmentation is the same ratio here */
        strcat(strcat(buf, doc_frag), doc_alloc_frag);
    if (clients)
        strcat(buf, doc_clients);
    strcat(buf, doc_tail);
    goblin__reply_verbatim(x, buf, strlen(buf));
}

/* glibc's malloc_info report (XML) for the default allocator; Redis's
 * text for any other, as a Redis build without jemalloc answers. */
void goblin__cmd_memory_malloc_stats(goblin__exec *x, int argc,
                                     const struct goblin_slice *argv)
{
    static const char none[] = "Stats not supported for the current "
                               "allocator";
#if defined(__GLIBC__)
    char *p = NULL;
    size_t n = 0;
    FILE *f;

    if (x->st->libc && (f = open_memstream(&p, &n)) != NULL) {
        int rc = malloc_info(0, f);

        fclose(f);
        if (rc == 0 && p != NULL) {
            goblin__reply_verbatim(x, p, n);
            free(p);
            return;
        }
        free(p);
    }
#endif
    (void)argc;
    (void)argv;
    goblin__reply_verbatim(x, none, sizeof(none) - 1);
}

/* Gives free memory at the heap's top and in its arenas back to the
 * system where malloc can (malloc_trim); OK always, as in Redis. */
void goblin__cmd_memory_purge(goblin__exec *x, int argc,
                              const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
#if defined(__GLIBC__)
    if (x->st->libc)
        malloc_trim(0);
#endif
    goblin__reply_ok(x);
}

void goblin__cmd_memory_help(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    static const char *const lines[] = {
        "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DOCTOR",
        "    Return memory problems reports.",
        "MALLOC-STATS",
        "    Return internal statistics report from the memory allocator.",
        "PURGE",
        "    Attempt to purge dirty pages for reclamation by the allocator.",
        "STATS",
        "    Return information about the memory usage of the server.",
        "USAGE <key> [SAMPLES <count>]",
        "    Return memory in bytes used by <key> and its value. Nested "
        "values are",
        "    sampled up to <count> times (default: 5, 0 means sample all).",
        "HELP",
        "    Prints this help.",
    };

    (void)argc;
    (void)argv;
    goblin__reply_help(x, lines, sizeof(lines) / sizeof(*lines));
}
