/* ring_fault.c - ring clients that fail on purpose, for test_faults.py.
 *
 *     ring_fault MODE PATH [ARG]
 *
 * Modes that stop half way print "ready" once the fault is in place and
 * then wait to be killed with SIGKILL:
 *   partial    reserved an SQ record and wrote half its payload (a SET of
 *              the differential key s:0), nothing committed
 *   unflushed  committed a whole SET s:1 record but never flushed it
 *   halfframe  flushed a record holding half a RESP frame (SET s:2 ...)
 *   stuck      filled SQ with requests and never reads CQ
 * Modes that exit by themselves:
 *   garbage    publishes records of random bytes, then a RESP protocol
 *              error; exits 0 once the server has reset the ring
 *   scribble   writes random bytes over SQ and a misaligned SQ tail into
 *              the header; exits 0 once the server has reset the ring
 *   check TAG  connects (retrying while the ring is being re-created),
 *              SET/GET ringchk:TAG and PING; exits 0 if all replies are
 *              right
 *   flap N     connects, PINGs and disconnects N times in a row (half the
 *              time without waiting for the PONG); exits 0 if the last
 *              connection still works
 *   control S  a control client: SET/GET/INCR for S seconds, every reply
 *              checked; prints the count, exits 0 with no error
 * None of the faults may reach the store: the keys s:0..s:2 belong to the
 * differential sequence, so a fault that executed shows in its dump.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <goblin.h>
#include <goblin/client.h>
#include <goblin/ring.h>

#define SL(s) ((struct goblin_slice){(s), sizeof(s) - 1})

static const char set_s0[] = "*3\r\n$3\r\nSET\r\n$3\r\ns:0\r\n$9\r\nRINGFAULT\r\n";
static const char set_s1[] = "*3\r\n$3\r\nSET\r\n$3\r\ns:1\r\n$9\r\nRINGFAULT\r\n";
static const char set_s2[] = "*3\r\n$3\r\nSET\r\n$3\r\ns:2\r\n$9\r\nRINGFAULT\r\n";

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

    nanosleep(&ts, NULL);
}

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static goblin_ring *attach(const char *path)
{
    struct goblin_ring_config cfg = {0};
    goblin_ring *r = NULL;
    int rc;

    cfg.open_timeout_ns = 10000000000ull;
    for (int i = 0; i < 100; i++) {
        rc = goblin_ring_open(path, &cfg, &r);
        if (rc == 0)
            return r;
        if (rc != GOBLIN_EBUSY)
            break;
        nap_ms(100);   /* EBUSY while the last client's lock goes away */
    }
    fprintf(stderr, "ring_fault: open %s: %s\n", path, goblin_strerror(rc));
    exit(1);
}

/* Prints "ready" and waits for SIGKILL (gives up after 10 minutes). */
static int hold(void)
{
    printf("ready\n");
    fflush(stdout);
    for (int i = 0; i < 600; i++)
        sleep(1);
    return 1;
}

/* Exits 0 once the server has reset this client's ring. Reads and drops
 * the replies meanwhile: a server with a full CQ reads no more SQ. */
static int wait_reset(goblin_ring *r)
{
    struct goblin_slice rec;

    for (int i = 0; i < 1000; i++) {
        while (goblin_ring_peek(r, &rec) == GOBLIN_RING_RECORD)
            ;
        goblin_ring_release(r);
        if (goblin_ring_check(r) == GOBLIN_ECONNRESET) {
            printf("reset\n");
            goblin_ring_close(r);
            return 0;
        }
        nap_ms(10);
    }
    fprintf(stderr, "ring_fault: the server did not reset the ring\n");
    goblin_ring_close(r);
    return 1;
}

static int fault_partial(const char *path)
{
    goblin_ring *r = attach(path);
    void *p;

    if (goblin_ring_reserve(r, sizeof(set_s0) - 1, &p) != 0)
        return 1;
    memcpy(p, set_s0, (sizeof(set_s0) - 1) / 2);
    return hold();
}

static int fault_unflushed(const char *path)
{
    goblin_ring *r = attach(path);
    void *p;

    if (goblin_ring_reserve(r, sizeof(set_s1) - 1, &p) != 0)
        return 1;
    memcpy(p, set_s1, sizeof(set_s1) - 1);
    goblin_ring_commit(r, sizeof(set_s1) - 1);
    return hold();
}

static int fault_halfframe(const char *path)
{
    goblin_ring *r = attach(path);

    if (goblin_ring_publish(r, set_s2, sizeof(set_s2) - 10) != 0)
        return 1;
    return hold();
}

static int fault_stuck(const char *path)
{
    static const char ping[] = "*1\r\n$4\r\nPING\r\n";
    goblin_ring *r = attach(path);

    for (int round = 0; round < 20; round++) {
        while (goblin_ring_publish(r, ping, sizeof(ping) - 1) == 0)
            ;
        nap_ms(2);
    }
    return hold();
}

static int fault_garbage(const char *path, unsigned seed)
{
    static const char bad[] = "*1\r\n$abc\r\n";   /* a protocol error */
    goblin_ring *r = attach(path);
    unsigned char rec[300];

    srand(seed);
    for (int i = 0; i < 8; i++) {
        size_t n = 1 + (size_t)(rand() % (int)sizeof(rec));
        /* High bytes and line ends: inline commands nobody has. */
        for (size_t k = 0; k < n; k++)
            rec[k] = rand() % 8 == 0 ? '\n' : (unsigned char)(0x80 |
                                                              rand());
        if (goblin_ring_publish(r, rec, (uint32_t)n) != 0)
            break;
    }
    /* Ends the last inline line, so the next record starts a command. */
    goblin_ring_publish(r, "\r\n", 2);
    goblin_ring_publish(r, bad, sizeof(bad) - 1);
    return wait_reset(r);
}

static int fault_scribble(const char *path, unsigned seed)
{
    goblin_ring *r = attach(path);
    int fd = open(path, O_RDWR);
    unsigned char *p;
    uint64_t bad_tail = 64 * 3 + 5;       /* misaligned, past the head */

    p = fd < 0 ? MAP_FAILED : mmap(NULL, 8192, PROT_READ | PROT_WRITE,
                                    MAP_SHARED, fd, 0);
    if (fd >= 0)
        close(fd);
    if (p == MAP_FAILED) {
        goblin_ring_close(r);
        return 1;
    }
    srand(seed);
    for (int k = 4096; k < 8192; k++)
        p[k] = (unsigned char)rand();
    memcpy(p + 384, &bad_tail, 8);        /* sq_tail, docs/ring.md 1.1 */
    munmap(p, 8192);
    return wait_reset(r);
}

static goblin_client *connect_ring(const char *path)
{
    struct goblin_client_config cfg = {0};
    goblin_client *c = NULL;
    int rc = -1;

    cfg.timeout_ms = 10000;
    /* Only EBUSY is retried (a killed client's lock is on its way out):
     * a ring being reset must not make a new client time out. */
    for (int i = 0; i < 100 && rc != 0; i++) {
        rc = goblin_client_connect_ring(path, &cfg, &c);
        if (rc != GOBLIN_EBUSY)
            break;
        nap_ms(100);
    }
    if (rc != 0)
        fprintf(stderr, "ring_fault: connect %s: %s\n", path,
                goblin_strerror(rc));
    return rc == 0 ? c : NULL;
}

static int check(const char *path, const char *tag)
{
    goblin_client *c = connect_ring(path);
    char key[64];
    struct goblin_slice k, v;
    int ok;

    if (c == NULL)
        return 1;
    snprintf(key, sizeof(key), "ringchk:%s", tag);
    k = (struct goblin_slice){key, strlen(key)};
    ok = goblin_client_ping(c) == 0 &&
         goblin_client_set(c, k, (struct goblin_slice){tag, strlen(tag)},
                           NULL) == 1 &&
         goblin_client_get(c, k, &v) == 1 && v.len == strlen(tag) &&
         memcmp(v.ptr, tag, v.len) == 0;
    if (!ok)
        fprintf(stderr, "ring_fault check: %s\n", goblin_client_error(c));
    goblin_client_close(c);
    return ok ? 0 : 1;
}

static int flap(const char *path, int n)
{
    static const char ping[] = "*1\r\n$4\r\nPING\r\n";

    for (int i = 0; i < n; i++) {
        goblin_ring *r = attach(path);
        goblin_client *c = NULL;
        int rc = 0;

        if (i % 2 == 0)
            goblin_ring_publish(r, ping, sizeof(ping) - 1);
        else
            rc = goblin_client_connect_ring(path, NULL, &c);
        goblin_ring_close(r);
        if (rc != GOBLIN_EBUSY && i % 2 == 1) {
            /* A second client must be refused, not handed a session. */
            fprintf(stderr, "ring_fault flap: second client got %d\n", rc);
            goblin_client_close(c);
            return 1;
        }
    }
    return check(path, "flap");
}

static int control(const char *path, double seconds)
{
    goblin_client *c = connect_ring(path);
    int64_t end = now_ms() + (int64_t)(seconds * 1000), n = 0, got;
    const char *base = strrchr(path, '/');
    char kn[96], kv[96], val[32];
    struct goblin_slice v, key_n, key_v;

    if (c == NULL)
        return 1;
    /* Keys of this ring's own: several control rings run at once. */
    base = base != NULL ? base + 1 : path;
    snprintf(kn, sizeof(kn), "ctl:ring:%s:n", base);
    snprintf(kv, sizeof(kv), "ctl:ring:%s:v", base);
    key_n = (struct goblin_slice){kn, strlen(kn)};
    key_v = (struct goblin_slice){kv, strlen(kv)};
    goblin_client_del(c, &key_n, 1);
    while (now_ms() < end) {
        n++;
        snprintf(val, sizeof(val), "%lld", (long long)n);
        if (goblin_client_incrby(c, key_n, 1, &got) != 0 || got != n ||
            goblin_client_set(c, key_v,
                              (struct goblin_slice){val, strlen(val)},
                              NULL) != 1 ||
            goblin_client_get(c, key_v, &v) != 1 ||
            v.len != strlen(val) || memcmp(v.ptr, val, v.len) != 0) {
            fprintf(stderr, "ring control %s: request %lld failed: %s\n",
                    base, (long long)n, goblin_client_error(c));
            goblin_client_close(c);
            return 1;
        }
    }
    goblin_client_close(c);
    printf("ring control %s: %lld rounds, 0 errors\n", base, (long long)n);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 2 ? argv[1] : "", *path = argv[2];
    const char *arg = argc > 3 ? argv[3] : "1";

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(mode, "partial") == 0)
        return fault_partial(path);
    if (strcmp(mode, "unflushed") == 0)
        return fault_unflushed(path);
    if (strcmp(mode, "halfframe") == 0)
        return fault_halfframe(path);
    if (strcmp(mode, "stuck") == 0)
        return fault_stuck(path);
    if (strcmp(mode, "garbage") == 0)
        return fault_garbage(path, (unsigned)atoi(arg));
    if (strcmp(mode, "scribble") == 0)
        return fault_scribble(path, (unsigned)atoi(arg));
    if (strcmp(mode, "check") == 0)
        return check(path, arg);
    if (strcmp(mode, "flap") == 0)
        return flap(path, atoi(arg));
    if (strcmp(mode, "control") == 0)
        return control(path, atof(arg));
    fprintf(stderr, "usage: ring_fault MODE PATH [ARG]\n");
    return 2;
}
