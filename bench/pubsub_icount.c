/* pubsub_icount.c - the instructions one Pub/Sub delivery costs over
 * rings, client and server together, counted under callgrind
 * (bench/pubsub_icount.sh runs it and prints the table). Instruction
 * counts are deterministic: they measure the delivery path on a shared,
 * noisy machine where latencies cannot.
 *
 * One engine, two ring endpoints in this thread (only the attach and
 * SUBSCRIBE handshakes have a helper thread step them): a publisher on
 * ring A, a subscriber of channel "ch" on ring B, both SBE (or both
 * RESP2 with --proto resp). One round:
 *   send     the publisher queues PUBLISH ch <16 bytes>
 *            (goblin_client_publish: a typed frame over SBE, the command
 *            over RESP; with --argv the generic call, an Argv frame over
 *            SBE) and flushes it into A's SQ
 *   pub-ep   endpoint A is stepped: PUBLISH runs, its reply goes into
 *            A's CQ, the message into the subscriber's output, B nudged
 *   sub-ep   endpoint B is stepped: the message goes into B's CQ
 *   reply    the publisher reads its reply (integer 1)
 *   message  the subscriber decodes the published-message frame
 *            (goblin_client_next_message)
 * Each phase is counted on its own: --iters rounds run with collection
 * on for that phase only, and the counts are dumped with the description
 * "icount pubsub PHASE ITERS"; "total" counts whole rounds, and "base"
 * the same loop around nothing (subtracted by the script).
 *
 *   pubsub_icount [--iters N] [--warmup N] [--payload BYTES]
 *                 [--proto sbe|resp] [--argv 1]
 *
 * Outside valgrind the program only checks that every round works.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "goblin.h"

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

enum phase { P_SEND, P_PUB_EP, P_SUB_EP, P_REPLY, P_MESSAGE, P_TOTAL,
             P_BASE, NPHASES };
static const char *const phase_name[NPHASES] = {
    "send", "pub-ep", "sub-ep", "reply", "message", "total", "base"};

struct bench {
    goblin_ring_endpoint *ep[2]; /* publisher, subscriber */
    goblin_client *pub, *sub;
    struct goblin_slice argv[3];
    bool generic; /* --argv: goblin_client_call instead */
};

/* Collection on around phase p when p is the one counted. */
#define PHASE(b, p, counted, body)                                         \
    do {                                                                   \
        if ((counted) == (p))                                              \
            CALLGRIND_TOGGLE_COLLECT;                                      \
        body;                                                              \
        if ((counted) == (p))                                              \
            CALLGRIND_TOGGLE_COLLECT;                                      \
    } while (0)

static void step_until_idle(goblin_ring_endpoint *ep)
{
    do
        goblin_ring_endpoint_step(ep);
    while (goblin_ring_endpoint_full(ep));
}

/* One round; counted is the phase whose instructions are collected. */
static int round_trip(struct bench *b, enum phase counted)
{
    const struct goblin_resp_value *r = NULL;
    struct goblin_client_message m;
    int64_t rc = 0;
    int got = 0;

    PHASE(b, P_SEND, counted,
          rc = b->generic ? goblin_client_call(b->pub, 3, b->argv, &r)
                          : goblin_client_publish(b->pub, b->argv[1],
                                                  b->argv[2]);
          if (rc == 0) rc = goblin_client_flush(b->pub));
    if (rc != 0)
        return (int)rc;
    PHASE(b, P_PUB_EP, counted, step_until_idle(b->ep[0]));
    PHASE(b, P_SUB_EP, counted, step_until_idle(b->ep[1]));
    PHASE(b, P_REPLY, counted, rc = goblin_client_next_reply(b->pub, &r));
    if (rc != 0 || r->type != GOBLIN_RESP_INTEGER || r->integer != 1)
        return rc != 0 ? (int)rc : GOBLIN_EREPLY;
    PHASE(b, P_MESSAGE, counted,
          got = goblin_client_next_message(b->sub, 0, &m));
    if (got != 1 || m.payload.len != b->argv[2].len)
        return got < 0 ? got : GOBLIN_EPROTO;
    return 0;
}

static int nothing(struct bench *b, enum phase counted)
{
    (void)b;
    PHASE(b, P_BASE, counted, (void)0);
    return 0;
}

__attribute__((noinline)) static int measure(struct bench *b, enum phase p,
                                             long iters)
{
    int rc = 0;

    CALLGRIND_ZERO_STATS;
    if (p == P_TOTAL)
        CALLGRIND_TOGGLE_COLLECT;
    for (long k = 0; k < iters && rc == 0; k++)
        rc = p == P_BASE ? nothing(b, p) : round_trip(b, p);
    if (p == P_TOTAL)
        CALLGRIND_TOGGLE_COLLECT;
    return rc;
}

/* The attach and SUBSCRIBE handshakes wait for the endpoints: another
 * thread steps them meanwhile, and is joined before anything is
 * counted. */
struct helper {
    goblin_ring_endpoint **ep;
    atomic_bool done;
};

static void *helper_main(void *arg)
{
    struct helper *h = arg;

    while (!atomic_load(&h->done))
        if (goblin_ring_endpoint_step(h->ep[0]) +
                goblin_ring_endpoint_step(h->ep[1]) == 0)
            usleep(100);
    return NULL;
}

static int setup_clients(struct bench *b, const char *const path[2],
                         const struct goblin_client_config *cfg)
{
    struct helper h = { b->ep, false };
    struct goblin_slice ch = { "ch", 2 };
    pthread_t t;
    int rc;

    if (pthread_create(&t, NULL, helper_main, &h) != 0)
        return GOBLIN_ENOMEM;
    rc = goblin_client_connect_ring(path[0], cfg, &b->pub);
    if (rc == 0)
        rc = goblin_client_connect_ring(path[1], cfg, &b->sub);
    if (rc == 0 && goblin_client_subscribe(b->sub, "SUBSCRIBE", 1, &ch) != 1)
        rc = GOBLIN_EREPLY;
    atomic_store(&h.done, true);
    pthread_join(t, NULL);
    return rc;
}

int main(int argc, char **argv)
{
    long iters = 1000, warmup = 200;
    int payload = 16;
    const char *proto = "sbe";
    struct goblin_client_config cfg = { 0 };
    struct goblin_engine_config ec = { 0 };
    goblin_store *st = NULL;
    goblin_engine *eng = NULL;
    struct bench b = { { NULL, NULL }, NULL, NULL, { { NULL, 0 } }, false };
    char path[2][64], *text;
    const char *paths[2] = { path[0], path[1] };
    int rc = 1;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--iters")) iters = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--warmup")) warmup = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--payload")) payload = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--proto")) proto = argv[i + 1];
        else if (!strcmp(argv[i], "--argv")) b.generic = atoi(argv[i + 1]);
        else iters = -1;
    }
    if (iters <= 0 || warmup < 0 || payload < 0 || argc % 2 != 1) {
        fputs("usage: pubsub_icount [--iters N] [--warmup N] "
              "[--payload BYTES] [--proto sbe|resp] [--argv 1]\n", stderr);
        return 2;
    }
    text = malloc((size_t)payload + 1);
    memset(text, 'x', (size_t)payload);
    b.argv[0] = (struct goblin_slice){ "PUBLISH", 7 };
    b.argv[1] = (struct goblin_slice){ "ch", 2 };
    b.argv[2] = (struct goblin_slice){ text, (size_t)payload };
    cfg.protocol = strcmp(proto, "resp") == 0 ? GOBLIN_CLIENT_RESP2
                                              : GOBLIN_CLIENT_SBE;
    cfg.timeout_ms = 2000; /* one thread: a missing reply must fail */
    cfg.ring_idle = GOBLIN_RING_IDLE_SPIN;
    for (int i = 0; i < 2; i++)
        snprintf(path[i], sizeof(path[i]), "/dev/shm/goblin-psicount-%ld-%d"
                 ".ring", (long)getpid(), i);
    if (goblin_store_open(NULL, &st) != 0)
        return 1;
    ec.store = st;
    if (goblin_engine_open(&ec, &eng) != 0)
        goto out;
    for (int i = 0; i < 2; i++) {
        struct goblin_ring_endpoint_config ep = { 0 };

        ep.engine = eng;
        ep.path = path[i];
        if (goblin_ring_endpoint_open(&ep, &b.ep[i]) != 0) {
            fprintf(stderr, "pubsub_icount: cannot create %s, skipped\n",
                    path[i]);
            rc = 0;
            goto out;
        }
    }
    if (setup_clients(&b, paths, &cfg) != 0) {
        fprintf(stderr, "pubsub_icount: setting up failed: %s\n",
                b.sub ? goblin_client_error(b.sub) : "");
        goto out;
    }
    for (int i = 0; i < 2; i++)
        while (goblin_ring_endpoint_step(b.ep[i]) > 0)
            ;
    goblin_client_pipeline_begin(b.pub);
    rc = 0;
    for (long k = 0; k < warmup && rc == 0; k++)
        rc = round_trip(&b, NPHASES);
    for (int p = 0; p < NPHASES && rc == 0; p++) {
        char desc[64];

        rc = measure(&b, (enum phase)p, iters);
        snprintf(desc, sizeof(desc), "icount pubsub %s %ld", phase_name[p],
                 iters);
        CALLGRIND_DUMP_STATS_AT(desc);
        if (rc == 0)
            printf("pubsub,%s,%ld\n", phase_name[p], iters);
    }
    if (rc != 0) {
        fprintf(stderr, "pubsub_icount: a round failed: %d %s / %s\n", rc,
                goblin_client_error(b.pub), goblin_client_error(b.sub));
        rc = 1;
    }
out:
    goblin_client_close(b.pub);
    goblin_client_close(b.sub);
    for (int i = 0; i < 2; i++) {
        goblin_ring_endpoint_close(b.ep[i]);
        unlink(path[i]);
    }
    goblin_engine_close(eng);
    goblin_store_close(st);
    free(text);
    return rc;
}
