/* icount.c - the instructions one request/reply costs, client and server
 * together, counted under callgrind (bench/icount.sh runs it and prints
 * the table). Instruction counts are deterministic, so they measure the
 * fast path on a shared, noisy machine where latencies cannot.
 *
 * Rows (--rows, comma separated; default all):
 *   ring-sbe, ring-resp  goblin's C client over a shared-memory ring to a
 *                        ring endpoint (goblin/serve.h) in the same
 *                        thread (only the attach handshake has a helper
 *                        thread answer it): the client queues one request
 *                        (goblin_client_pipeline_begin + a typed call),
 *                        sends it (goblin_client_flush), the endpoint is
 *                        stepped (goblin_ring_endpoint_step: it consumes
 *                        SQ, runs the command, writes the reply into CQ)
 *                        and the client reads the reply
 *                        (goblin_client_next_reply). Nothing spins.
 *   session-sbe, session-resp  the same client calls on an in-process
 *                        session (goblin_client_connect_session): what the
 *                        protocol and command layers cost without a ring.
 *   capi                 the store's C API called directly (no PING).
 *   ring-bare            the ring alone (op REC32): a 32-byte record
 *                        published by a client, peeked and published back
 *                        by the server, peeked by the client, over the
 *                        public calls of goblin/ring.h; what the
 *                        transport costs in each ring row.
 *
 * Ops (--ops; default all): PING, SET and GET of a 16-byte value under a
 * one-byte key, HSET and HGET on a 10-field hash, ZADD, ZSCORE and ZRANK
 * on a 10-member sorted set, ZRANGE of all 10 members WITHSCORES, and
 * GET5: GET of a 5-byte key ("k0001") in a store that holds only it (the
 * C API GET target is stated for that one); with libgoblin-script, EVALSHA
 * and FCALL of a script of GET, INCR and EXPIRE (bench/ops.h), Lua
 * attached to the in-process engines.
 *
 * Method: every (row, op) runs --warmup round trips, then callgrind's
 * counters are zeroed, collection is switched on for exactly --iters
 * round trips, off again, and the counts are dumped with the description
 * "icount ROW OP ITERS" (CALLGRIND_DUMP_STATS_AT). icount.sh runs this
 * program with --collect-atstart=no, so only those loops are counted, and
 * divides each dump's total by ITERS, less the baseline: the same loop
 * around an op that does nothing (row "base", op NOP; about 20
 * instructions), so a figure is what the op itself costs. Outside valgrind the client
 * requests do nothing and the program only checks that every op works
 * (it prints one line per row and op, and exits 1 on any failure).
 *
 * usage: icount [--rows LIST] [--ops LIST] [--iters N] [--warmup N]
 */
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "goblin.h"
#include "ops.h"
#ifdef GOBLIN_SCRIPTING
#include "goblin/lua.h"
#endif

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif
#ifndef HAVE_CALLGRIND
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_TOGGLE_COLLECT
#define CALLGRIND_DUMP_STATS_AT(s) ((void)(s))
#endif

/* ---- what the ops act on and the ops themselves: ops.h ---- */

/* Nothing: the measured loop's own cost, subtracted from every row. */
static int a_nop(struct ctx *x)
{
    (void)x;
    return 0;
}

struct op {
    const char *name;
    op_fn *client;
    op_fn *capi; /* NULL: not applicable */
};

static const struct op ops[] = {
    { "PING", c_ping, NULL },       { "SET", c_set, a_set },
    { "GET", c_get, a_get },        { "HSET", c_hset, a_hset },
    { "HGET", c_hget, a_hget },     { "ZADD", c_zadd, a_zadd },
    { "ZSCORE", c_zscore, a_zscore }, { "ZRANK", c_zrank, a_zrank },
    { "ZRANGE", c_zrange, a_zrange }, { "GET5", c_get5, a_get5 },
    { "HSET10", c_hset10, a_hset10 }, { "ZADD10", c_zadd10, a_zadd10 },
#ifdef GOBLIN_SCRIPTING
    { "EVALSHA", c_evalsha, NULL },   { "FCALL", c_fcall, NULL },
#endif
};

#define NOPS (sizeof(ops) / sizeof(ops[0]))

/* ---- one round trip per row kind ---- */

/* Ring: queue, send, let the endpoint run it, read the reply. */
static int rt_ring(struct ctx *x, op_fn *fn)
{
    const struct goblin_resp_value *v;
    int rc;

    if ((rc = fn(x)) < 0 || (rc = goblin_client_flush(x->c)) < 0)
        return rc;
    do
        goblin_ring_endpoint_step(x->ep);
    while (goblin_ring_endpoint_full(x->ep));
    if ((rc = goblin_client_next_reply(x->c, &v)) < 0)
        return rc;
    return v->type == GOBLIN_RESP_ERROR ? GOBLIN_EREPLY : 0;
}

/* Session: the same pipelined calls; reading the reply feeds the session
 * and takes its output. */
static int rt_session(struct ctx *x, op_fn *fn)
{
    const struct goblin_resp_value *v;
    int rc;

    if ((rc = fn(x)) < 0 || (rc = goblin_client_next_reply(x->c, &v)) < 0)
        return rc;
    return v->type == GOBLIN_RESP_ERROR ? GOBLIN_EREPLY : 0;
}

static int rt_capi(struct ctx *x, op_fn *fn)
{
    int rc = fn(x);

    return rc < 0 ? rc : 0;
}

typedef int rt_fn(struct ctx *x, op_fn *fn);

/* ---- running ---- */

struct opts {
    const char *rows, *ops;
    long iters, warmup;
};

/* The measured loop; kept out of line so that what callgrind counts is
 * this loop and the calls it makes. */
__attribute__((noinline)) static int measure(struct ctx *x, rt_fn *rt,
                                             op_fn *fn, long iters)
{
    int rc = 0;

    CALLGRIND_ZERO_STATS;
    CALLGRIND_TOGGLE_COLLECT;
    for (long k = 0; k < iters && rc == 0; k++)
        rc = rt(x, fn);
    CALLGRIND_TOGGLE_COLLECT;
    return rc;
}

static int run_row(const struct opts *o, const char *row, struct ctx *x,
                   rt_fn *rt, bool capi)
{
    int failed = 0;

    for (size_t i = 0; i < NOPS; i++) {
        op_fn *fn = capi ? ops[i].capi : ops[i].client;
        char desc[96];
        int rc = 0;

        if (fn == NULL || !wanted(o->ops, ops[i].name))
            continue;
        for (long k = 0; k < o->warmup && rc == 0; k++)
            rc = rt(x, fn);
        if (rc == 0)
            rc = measure(x, rt, fn, o->iters);
        snprintf(desc, sizeof(desc), "icount %s %s %ld", row, ops[i].name,
                 o->iters);
        CALLGRIND_DUMP_STATS_AT(desc);
        if (rc != 0) {
            fprintf(stderr, "icount: %s %s: %s\n", row, ops[i].name,
                    x->c ? goblin_client_error(x->c) : goblin_strerror(rc));
            failed = 1;
            continue;
        }
        printf("%s,%s,%ld\n", row, ops[i].name, o->iters);
    }
    return failed;
}

/* The C API's data: a 10-field hash, a 10-member set, the strings. */
static int preload_capi(struct ctx *x)
{
    struct goblin_zpair p[10];
    int rc;

    for (int j = 0; j < 10; j++)
        p[j] = (struct goblin_zpair){ scores10[j], members10[j] };
    if ((rc = goblin_hash_set(x->st, KEY("h"), fv10, 10)) < 0 ||
        (rc = (int)goblin_zset_add_pairs(x->st, KEY("z"), 0, p, 10)) < 0 ||
        (rc = a_set(x)) < 0 ||
        (rc = goblin_str_set(x->st, KEY("k0001"), KEY(value16), NULL,
                             NULL)) < 0)
        return rc;
    return 0;
}

static int c_load_hash(struct ctx *x)
{
    return (int)goblin_client_hset(x->c, KEY("h"), fv10, 10);
}

static int c_load_zset(struct ctx *x)
{
    return (int)goblin_client_zadd(x->c, KEY("z"), scores10, members10, 10,
                                   0);
}

static int c_load_get5(struct ctx *x)
{
    return goblin_client_set(x->c, KEY("k0001"), KEY(value16), NULL);
}

/* The same data over the client, one round trip each. */
static int load_client(struct ctx *x, rt_fn *rt)
{
    int rc;

    goblin_client_pipeline_begin(x->c);
    if ((rc = rt(x, c_load_hash)) < 0 || (rc = rt(x, c_load_zset)) < 0 ||
        (rc = rt(x, c_set)) < 0 || (rc = rt(x, c_load_get5)) < 0)
        return rc;
#ifdef GOBLIN_SCRIPTING
    if ((rc = rt(x, c_script_load)) < 0 || (rc = rt(x, c_function_load)) < 0)
        return rc;
#endif
    return 0;
}

/* Lua on the engine, when this build has libgoblin-script (EVALSHA,
 * FCALL). */
static int attach_scripting(goblin_engine *eng)
{
#ifdef GOBLIN_SCRIPTING
    return goblin_lua_attach(eng);
#else
    (void)eng;
    return 0;
#endif
}

static struct goblin_client_config client_config(const char *proto)
{
    struct goblin_client_config cfg = { 0 };

    cfg.protocol = strcmp(proto, "sbe") == 0 ? GOBLIN_CLIENT_SBE
                                             : GOBLIN_CLIENT_RESP2;
    /* one thread: a missing reply must fail, not wait for ever */
    cfg.timeout_ms = 2000;
    cfg.ring_idle = GOBLIN_RING_IDLE_SPIN;
    return cfg;
}

static int row_session(const struct opts *o, const char *row,
                       const char *proto)
{
    struct goblin_client_config cfg = client_config(proto);
    struct goblin_engine_config ec = { 0 };
    struct goblin_session_info si = { GOBLIN_TRANSPORT_LOCAL, NULL, NULL, -1,
                                      NULL };
    goblin_engine *eng = NULL;
    goblin_session *sess = NULL;
    struct ctx x = { NULL, NULL, NULL, 0 };
    int rc = 1;

    if (goblin_store_open(NULL, &x.st) != 0)
        return 1;
    ec.store = x.st;
    if (goblin_engine_open(&ec, &eng) == 0 && attach_scripting(eng) == 0 &&
        goblin_session_open(eng, &si, &sess) == 0 &&
        goblin_client_connect_session(sess, &cfg, &x.c) == 0 &&
        load_client(&x, rt_session) == 0) {
        rc = run_row(o, row, &x, rt_session, false);
    } else {
        fprintf(stderr, "icount: %s: setting up failed: %s\n", row,
                x.c ? goblin_client_error(x.c) : "");
    }
    goblin_client_close(x.c);
    goblin_session_close(sess);
    goblin_engine_close(eng);
    goblin_store_close(x.st);
    return rc;
}

/* Attaching to a ring is a handshake the endpoint must answer, so while
 * the client connects another thread steps the endpoint; it is joined
 * before anything is counted, and from then on the endpoint belongs to
 * the main thread again. */
struct attach {
    goblin_ring_endpoint *ep;
    atomic_bool done;
};

static void *attach_server(void *arg)
{
    struct attach *a = arg;

    while (!atomic_load(&a->done))
        if (goblin_ring_endpoint_step(a->ep) == 0)
            usleep(100);
    return NULL;
}

static int connect_ring(const char *path,
                        const struct goblin_client_config *cfg,
                        goblin_ring_endpoint *ep, goblin_client **c)
{
    struct attach a = { ep, false };
    pthread_t t;
    int rc;

    if (pthread_create(&t, NULL, attach_server, &a) != 0)
        return GOBLIN_ENOMEM;
    rc = goblin_client_connect_ring(path, cfg, c);
    atomic_store(&a.done, true);
    pthread_join(t, NULL);
    return rc;
}

static int row_ring(const struct opts *o, const char *row, const char *proto)
{
    struct goblin_client_config cfg = client_config(proto);
    struct goblin_engine_config ec = { 0 };
    struct goblin_ring_endpoint_config rc_ep = { 0 };
    goblin_engine *eng = NULL;
    struct ctx x = { NULL, NULL, NULL, 0 };
    char path[64];
    int rc = 1;

    snprintf(path, sizeof(path), "/dev/shm/goblin-icount-%ld.ring",
             (long)getpid());
    if (goblin_store_open(NULL, &x.st) != 0)
        return 1;
    ec.store = x.st;
    if (goblin_engine_open(&ec, &eng) != 0 || attach_scripting(eng) != 0)
        goto out;
    rc_ep.engine = eng;
    rc_ep.path = path;
    if (goblin_ring_endpoint_open(&rc_ep, &x.ep) != 0) {
        /* no shared memory here: nothing to count, nothing failed */
        fprintf(stderr, "icount: %s: cannot create %s, skipped\n", row, path);
        rc = 0;
        goto out;
    }
    if (connect_ring(path, &cfg, x.ep, &x.c) != 0) {
        fprintf(stderr, "icount: %s: cannot attach to %s\n", row, path);
        goto out;
    }
    while (goblin_ring_endpoint_step(x.ep) > 0)
        ; /* the new client's session, the SBE magic */
    if (load_client(&x, rt_ring) != 0) {
        fprintf(stderr, "icount: %s: preload failed: %s\n", row,
                goblin_client_error(x.c));
        goto out;
    }
    rc = run_row(o, row, &x, rt_ring, false);
out:
    goblin_client_close(x.c);
    goblin_ring_endpoint_close(x.ep);
    goblin_engine_close(eng);
    goblin_store_close(x.st);
    unlink(path);
    return rc;
}

static int row_capi(const struct opts *o)
{
    struct ctx x = { NULL, NULL, NULL, 0 };
    int rc = 1;

    if (goblin_store_open(NULL, &x.st) == 0 &&
        preload_capi(&x) == 0)
        rc = run_row(o, "capi", &x, rt_capi, true);
    else
        fprintf(stderr, "icount: capi: setting up failed\n");
    goblin_store_close(x.st);
    return rc;
}

/* The baseline: the measured loop around an op that does nothing. */
static int row_base(const struct opts *o)
{
    struct ctx x = { NULL, NULL, NULL, 0 };
    char desc[64];
    int rc;

    rc = measure(&x, rt_capi, a_nop, o->iters);
    snprintf(desc, sizeof(desc), "icount base NOP %ld", o->iters);
    CALLGRIND_DUMP_STATS_AT(desc);
    printf("base,NOP,%ld\n", o->iters);
    return rc;
}

/* The bare ring: a 32-byte record there and back over the public ring
 * calls (as bench/ring_pingpong does between two threads), so the ring
 * rows can be read as this transport cost plus the protocol and command
 * layers. */
struct bare {
    goblin_ring *srv, *cli;
};

static int bare_round(struct bare *b)
{
    static const char rec32[32] = "0123456789abcdef0123456789abcdef";
    struct goblin_slice rec;
    int rc;

    if ((rc = goblin_ring_publish(b->cli, rec32, sizeof(rec32))) != 0)
        return rc < 0 ? rc : GOBLIN_EAGAIN;
    if (goblin_ring_peek(b->srv, &rec) != GOBLIN_RING_RECORD ||
        (rc = goblin_ring_publish(b->srv, rec.ptr, (uint32_t)rec.len)) != 0)
        return GOBLIN_EPROTO;
    goblin_ring_release(b->srv);
    if (goblin_ring_peek(b->cli, &rec) != GOBLIN_RING_RECORD ||
        rec.len != sizeof(rec32))
        return GOBLIN_EPROTO;
    goblin_ring_release(b->cli);
    return 0;
}

__attribute__((noinline)) static int measure_bare(struct bare *b, long iters)
{
    int rc = 0;

    CALLGRIND_ZERO_STATS;
    CALLGRIND_TOGGLE_COLLECT;
    for (long k = 0; k < iters && rc == 0; k++)
        rc = bare_round(b);
    CALLGRIND_TOGGLE_COLLECT;
    return rc;
}

/* The handshake needs the server's answer: a helper thread peeks until
 * the client's session begins (as attach_server does for the rows with
 * an endpoint). */
struct bare_attach {
    goblin_ring *srv;
    atomic_int seen;
};

static void *bare_server(void *arg)
{
    struct bare_attach *a = arg;
    struct goblin_slice rec;

    while (atomic_load(&a->seen) == 0)
        if (goblin_ring_peek(a->srv, &rec) == GOBLIN_RING_SESSION)
            atomic_store(&a->seen, 1);
        else
            usleep(100);
    return NULL;
}

static int row_ring_bare(const struct opts *o)
{
    struct goblin_ring_config cfg = { 0 };
    struct bare_attach a = { NULL, 0 };
    struct bare b = { NULL, NULL };
    pthread_t t;
    char path[64], desc[64];
    int rc = 1;

    snprintf(path, sizeof(path), "/dev/shm/goblin-icount-bare-%ld.ring",
             (long)getpid());
    if (goblin_ring_create(path, &cfg, &b.srv) != 0) {
        fprintf(stderr, "icount: ring-bare: cannot create %s, skipped\n",
                path);
        return 0;
    }
    cfg.idle = GOBLIN_RING_IDLE_SPIN;
    a.srv = b.srv;
    if (pthread_create(&t, NULL, bare_server, &a) != 0) {
        goblin_ring_close(b.srv);
        unlink(path);
        return 1;
    }
    rc = goblin_ring_open(path, &cfg, &b.cli);
    if (rc != 0)
        atomic_store(&a.seen, -1);
    pthread_join(t, NULL);
    if (rc == 0 && atomic_load(&a.seen) == 1) {
        rc = 0;
        for (long k = 0; k < o->warmup && rc == 0; k++)
            rc = bare_round(&b);
        if (rc == 0)
            rc = measure_bare(&b, o->iters);
        snprintf(desc, sizeof(desc), "icount ring-bare REC32 %ld", o->iters);
        CALLGRIND_DUMP_STATS_AT(desc);
        if (rc == 0)
            printf("ring-bare,REC32,%ld\n", o->iters);
        else
            fprintf(stderr, "icount: ring-bare: %s\n", goblin_strerror(rc));
    } else {
        fprintf(stderr, "icount: ring-bare: cannot attach to %s\n", path);
        rc = 1;
    }
    goblin_ring_close(b.cli);
    goblin_ring_close(b.srv);
    unlink(path);
    return rc != 0;
}

/* GET5 on the C API alone, in a store holding only that key. */
static int row_capi_get5(const struct opts *o)
{
    struct ctx x = { NULL, NULL, NULL, 0 };
    struct opts one = *o;
    int rc = 1;

    one.ops = "GET5";
    if (goblin_store_open(NULL, &x.st) == 0 &&
        goblin_str_set(x.st, KEY("k0001"), KEY(value16), NULL, NULL) >= 0)
        rc = run_row(&one, "capi-1key", &x, rt_capi, true);
    else
        fprintf(stderr, "icount: capi-1key: setting up failed\n");
    goblin_store_close(x.st);
    return rc;
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        { "rows", required_argument, NULL, 'r' },
        { "ops", required_argument, NULL, 'o' },
        { "iters", required_argument, NULL, 'n' },
        { "warmup", required_argument, NULL, 'w' },
        { NULL, 0, NULL, 0 },
    };
    struct opts o = { NULL, NULL, 1000, 200 };
    int ch, rc = 0;

    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (ch) {
        case 'r': o.rows = optarg; break;
        case 'o': o.ops = optarg; break;
        case 'n': o.iters = atol(optarg); break;
        case 'w': o.warmup = atol(optarg); break;
        default:
            fputs("usage: icount [--rows LIST] [--ops LIST] [--iters N] "
                  "[--warmup N]\n", stderr);
            return 2;
        }
    }
    if (optind != argc || o.iters <= 0 || o.warmup < 0) {
        fputs("usage: icount [--rows LIST] [--ops LIST] [--iters N] "
              "[--warmup N]\n", stderr);
        return 2;
    }
    ops_data_init();
    ops_scripts_init();
    rc |= row_base(&o);
    if (wanted(o.rows, "ring-bare") && wanted(o.ops, "REC32"))
        rc |= row_ring_bare(&o);
    if (wanted(o.rows, "ring-sbe"))
        rc |= row_ring(&o, "ring-sbe", "sbe");
    if (wanted(o.rows, "ring-resp"))
        rc |= row_ring(&o, "ring-resp", "resp");
    if (wanted(o.rows, "session-sbe"))
        rc |= row_session(&o, "session-sbe", "sbe");
    if (wanted(o.rows, "session-resp"))
        rc |= row_session(&o, "session-resp", "resp");
    if (wanted(o.rows, "capi"))
        rc |= row_capi(&o);
    if (wanted(o.rows, "capi-1key") && wanted(o.ops, "GET5"))
        rc |= row_capi_get5(&o);
    return rc;
}
