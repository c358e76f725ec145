/* load.c - goblin_load: many concurrent connections to a running goblind
 * (or redis-server), each checking every reply against its own model.
 *
 * Connection i owns the keys PREFIX:i:{s0,s1,s2,s3,h0,h1,z0,z1}: s0 and
 * s1 hold integers (SET, GET, INCRBY, DEL), s2 and s3 byte strings of up
 * to 8 KiB with NUL and CRLF inside (SET, GET, APPEND, STRLEN), h0 and h1
 * hashes of fields f0..f7 (HSET, HGET, HDEL, HLEN), z0 and z1 sorted sets
 * of members m00..m15 with integer scores (ZADD, ZSCORE, ZINCRBY, ZREM,
 * ZCARD, ZRANK). Because nobody else touches a connection's keys, its
 * model predicts every reply byte for byte: the expected RESP2 bytes are
 * appended when a command is sent and compared with what arrives, so a
 * wrong, missing or extra byte is caught where it happens.
 *
 * Connections alternate over the transports given (--tcp, --unix),
 * between depth 1 (send, wait, repeat) and pipelines of 2..32 commands,
 * and between RESP2 and RESP3 (HELLO 3: nulls are _, scores doubles).
 * After --seconds every connection finishes its batch, deletes its keys
 * (checking each DEL against the model) and closes.
 *
 * --runs N repeats the whole run N times; with --server-pid the server's
 * VmRSS is read before and after each run. Output: one table row per
 * run. Exit 0 only with zero errors and, for N >= 2, an RSS after the
 * last run within 10% + 16 MiB of the RSS after the first (a leak per
 * connection or per command would grow it run after run); --no-rss-check
 * only reports it (a sanitizer's quarantine keeps freed memory).
 *
 * usage: goblin_load [--tcp HOST:PORT] [--unix PATH] [--conns N]
 *                    [--seconds S] [--runs N] [--seed S] [--prefix P]
 *                    [--server-pid PID] [--expect-empty]
 *                    [--no-rss-check]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define NSTR_INT 2
#define NSTR_BYTES 2
#define NHASH 2
#define NFIELDS 8
#define NZSET 2
#define NMEMBERS 16
#define MAX_DEPTH 32
#define MAX_STR 8192
#define MAX_OPS (MAX_DEPTH + 8)
#define STALL_MS 30000

struct buf {
    char *p;
    size_t len, cap;
};

struct hash_model {
    bool has[NFIELDS];
    char val[NFIELDS][64];
    int vlen[NFIELDS];
};

struct zset_model {
    bool has[NMEMBERS];
    int64_t score[NMEMBERS];
};

struct conn {
    int fd;
    int id;
    bool pipelined;
    bool resp3;                /* HELLO 3: nulls and doubles differ */
    bool done;
    bool cleaned;
    uint64_t rng;
    /* The model of this connection's keys. */
    bool int_has[NSTR_INT];
    int64_t int_val[NSTR_INT];
    bool str_has[NSTR_BYTES];
    struct buf str[NSTR_BYTES];
    struct hash_model hash[NHASH];
    struct zset_model zset[NZSET];
    /* The batch in flight: bytes to send, replies expected. */
    struct buf out, want;
    size_t out_pos, want_pos;
    size_t ends[MAX_OPS];
    int nends, endi;
};

static struct {
    const char *tcp, *unix_path, *prefix;
    int conns, runs, server_pid;
    double seconds;
    uint64_t seed;
    bool expect_empty;
    bool rss_check;
} opt = {NULL, NULL, "ld", 1000, 1, 0, 20.0, 1, false, true};

static uint64_t n_ops, n_checked, n_errors;
static int errors_shown;

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void fail(struct conn *c, const char *fmt, ...)
{
    va_list ap;

    n_errors++;
    if (errors_shown++ >= 10)
        return;
    fprintf(stderr, "conn %d: ", c != NULL ? c->id : -1);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void buf_add(struct buf *b, const void *p, size_t n)
{
    if (n == 0)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        b->p = realloc(b->p, cap);
        if (b->p == NULL) {
            perror("realloc");
            exit(2);
        }
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void buf_printf(struct buf *b, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    buf_add(b, tmp, (size_t)n);
}

static uint64_t rnd(struct conn *c)
{
    c->rng ^= c->rng << 13;
    c->rng ^= c->rng >> 7;
    c->rng ^= c->rng << 17;
    return c->rng;
}

static int pick(struct conn *c, int n)
{
    return (int)(rnd(c) % (uint64_t)n);
}

/* ---------------------------------------------------- commands, replies */

struct arg {
    const char *p;
    size_t len;
};

static struct arg A(const char *s)
{
    return (struct arg){s, strlen(s)};
}

static void send_cmd(struct conn *c, int argc, const struct arg *argv)
{
    buf_printf(&c->out, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        buf_printf(&c->out, "$%zu\r\n", argv[i].len);
        buf_add(&c->out, argv[i].p, argv[i].len);
        buf_add(&c->out, "\r\n", 2);
    }
}

static void want_int(struct conn *c, int64_t v)
{
    buf_printf(&c->want, ":%" PRId64 "\r\n", v);
}

static void want_bulk(struct conn *c, const void *p, size_t len)
{
    buf_printf(&c->want, "$%zu\r\n", len);
    buf_add(&c->want, p, len);
    buf_add(&c->want, "\r\n", 2);
}

static void want_nil(struct conn *c)
{
    if (c->resp3)
        buf_add(&c->want, "_\r\n", 3);
    else
        buf_add(&c->want, "$-1\r\n", 5);
}

static void op_done(struct conn *c)
{
    c->ends[c->nends++] = c->want.len;
}

static void key_name(const struct conn *c, char *out, size_t cap,
                     const char *what, int i)
{
    snprintf(out, cap, "%s:%d:%s%d", opt.prefix, c->id, what, i);
}

/* --------------------------------------------------- one random command */

static void op_int(struct conn *c)
{
    int i = pick(c, NSTR_INT), r = pick(c, 10);
    char key[96], num[32];
    int64_t d;

    key_name(c, key, sizeof(key), "s", i);
    if (r < 3) {
        d = (int64_t)(rnd(c) % 2000001) - 1000000;
        snprintf(num, sizeof(num), "%" PRId64, d);
        send_cmd(c, 3, (struct arg[]){A("SET"), A(key), A(num)});
        buf_add(&c->want, "+OK\r\n", 5);
        c->int_has[i] = true;
        c->int_val[i] = d;
    } else if (r < 6) {
        send_cmd(c, 2, (struct arg[]){A("GET"), A(key)});
        if (c->int_has[i]) {
            snprintf(num, sizeof(num), "%" PRId64, c->int_val[i]);
            want_bulk(c, num, strlen(num));
        } else {
            want_nil(c);
        }
    } else if (r < 9) {
        d = (int64_t)(rnd(c) % 201) - 100;
        snprintf(num, sizeof(num), "%" PRId64, d);
        send_cmd(c, 3, (struct arg[]){A("INCRBY"), A(key), A(num)});
        c->int_val[i] = (c->int_has[i] ? c->int_val[i] : 0) + d;
        c->int_has[i] = true;
        want_int(c, c->int_val[i]);
    } else {
        send_cmd(c, 2, (struct arg[]){A("DEL"), A(key)});
        want_int(c, c->int_has[i]);
        c->int_has[i] = false;
    }
}

static void random_bytes(struct conn *c, char *p, size_t n)
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789"
                                   "\r\n\0 ";

    for (size_t k = 0; k < n; k++)
        p[k] = alphabet[rnd(c) % (sizeof(alphabet) - 1)];
}

static void op_bytes(struct conn *c)
{
    int i = pick(c, NSTR_BYTES), r = pick(c, 10);
    struct buf *s = &c->str[i];
    char key[96], val[MAX_STR];
    size_t n;

    key_name(c, key, sizeof(key), "s", NSTR_INT + i);
    if (r < 3) {
        n = pick(c, 20) == 0 ? (size_t)pick(c, 4097) : (size_t)pick(c, 65);
        random_bytes(c, val, n);
        send_cmd(c, 3, (struct arg[]){A("SET"), A(key), {val, n}});
        buf_add(&c->want, "+OK\r\n", 5);
        s->len = 0;
        buf_add(s, val, n);
        c->str_has[i] = true;
    } else if (r < 6) {
        send_cmd(c, 2, (struct arg[]){A("GET"), A(key)});
        if (c->str_has[i])
            want_bulk(c, s->p, s->len);
        else
            want_nil(c);
    } else if (r < 8) {
        n = (size_t)pick(c, 33);
        if (c->str_has[i] && s->len + n > MAX_STR)
            n = 0;
        random_bytes(c, val, n);
        send_cmd(c, 3, (struct arg[]){A("APPEND"), A(key), {val, n}});
        if (!c->str_has[i])
            s->len = 0;
        buf_add(s, val, n);
        c->str_has[i] = true;
        want_int(c, (int64_t)s->len);
    } else {
        send_cmd(c, 2, (struct arg[]){A("STRLEN"), A(key)});
        want_int(c, c->str_has[i] ? (int64_t)s->len : 0);
    }
}

static int hash_len(const struct hash_model *h)
{
    int n = 0;

    for (int f = 0; f < NFIELDS; f++)
        n += h->has[f];
    return n;
}

static void op_hash(struct conn *c)
{
    int i = pick(c, NHASH), f = pick(c, NFIELDS), r = pick(c, 10);
    struct hash_model *h = &c->hash[i];
    char key[96], field[8];
    char val[64];
    int n;

    key_name(c, key, sizeof(key), "h", i);
    snprintf(field, sizeof(field), "f%d", f);
    if (r < 4) {
        n = pick(c, 64);
        random_bytes(c, val, (size_t)n);
        send_cmd(c, 4, (struct arg[]){A("HSET"), A(key), A(field),
                                      {val, (size_t)n}});
        want_int(c, !h->has[f]);
        h->has[f] = true;
        memcpy(h->val[f], val, (size_t)n);
        h->vlen[f] = n;
    } else if (r < 7) {
        send_cmd(c, 3, (struct arg[]){A("HGET"), A(key), A(field)});
        if (h->has[f])
            want_bulk(c, h->val[f], (size_t)h->vlen[f]);
        else
            want_nil(c);
    } else if (r < 9) {
        send_cmd(c, 3, (struct arg[]){A("HDEL"), A(key), A(field)});
        want_int(c, h->has[f]);
        h->has[f] = false;
    } else {
        send_cmd(c, 2, (struct arg[]){A("HLEN"), A(key)});
        want_int(c, hash_len(h));
    }
}

static int zset_card(const struct zset_model *z)
{
    int n = 0;

    for (int m = 0; m < NMEMBERS; m++)
        n += z->has[m];
    return n;
}

/* Rank by (score, member); members m00..m15 sort as their numbers. */
static int zset_rank(const struct zset_model *z, int m)
{
    int rank = 0;

    for (int o = 0; o < NMEMBERS; o++)
        if (z->has[o] && (z->score[o] < z->score[m] ||
                          (z->score[o] == z->score[m] && o < m)))
            rank++;
    return rank;
}

static void want_score(struct conn *c, int64_t s)
{
    char num[32];

    if (c->resp3) {
        buf_printf(&c->want, ",%" PRId64 "\r\n", s);
        return;
    }
    snprintf(num, sizeof(num), "%" PRId64, s);
    want_bulk(c, num, strlen(num));
}

static void op_zset(struct conn *c)
{
    int i = pick(c, NZSET), m = pick(c, NMEMBERS), r = pick(c, 12);
    struct zset_model *z = &c->zset[i];
    char key[96], member[8], num[32];
    int64_t d = (int64_t)pick(c, 2001) - 1000;

    key_name(c, key, sizeof(key), "z", i);
    snprintf(member, sizeof(member), "m%02d", m);
    snprintf(num, sizeof(num), "%" PRId64, d);
    if (r < 3) {
        send_cmd(c, 4, (struct arg[]){A("ZADD"), A(key), A(num),
                                      A(member)});
        want_int(c, !z->has[m]);
        z->has[m] = true;
        z->score[m] = d;
    } else if (r < 5) {
        send_cmd(c, 3, (struct arg[]){A("ZSCORE"), A(key), A(member)});
        if (z->has[m])
            want_score(c, z->score[m]);
        else
            want_nil(c);
    } else if (r < 7) {
        send_cmd(c, 4, (struct arg[]){A("ZINCRBY"), A(key), A(num),
                                      A(member)});
        z->score[m] = (z->has[m] ? z->score[m] : 0) + d;
        z->has[m] = true;
        want_score(c, z->score[m]);
    } else if (r < 9) {
        send_cmd(c, 3, (struct arg[]){A("ZREM"), A(key), A(member)});
        want_int(c, z->has[m]);
        z->has[m] = false;
    } else if (r < 10) {
        send_cmd(c, 2, (struct arg[]){A("ZCARD"), A(key)});
        want_int(c, zset_card(z));
    } else {
        send_cmd(c, 3, (struct arg[]){A("ZRANK"), A(key), A(member)});
        if (z->has[m])
            want_int(c, zset_rank(z, m));
        else
            want_nil(c);
    }
}

static void op_random(struct conn *c)
{
    int r = pick(c, 4);

    if (r == 0)
        op_int(c);
    else if (r == 1)
        op_bytes(c);
    else if (r == 2)
        op_hash(c);
    else
        op_zset(c);
    op_done(c);
}

/* DEL of every key, each checked against the model; then the model is
 * empty. */
static void op_cleanup(struct conn *c)
{
    char key[96];

    for (int i = 0; i < NSTR_INT + NSTR_BYTES; i++) {
        bool has = i < NSTR_INT ? c->int_has[i] : c->str_has[i - NSTR_INT];
        key_name(c, key, sizeof(key), "s", i);
        send_cmd(c, 2, (struct arg[]){A("DEL"), A(key)});
        want_int(c, has);
        op_done(c);
    }
    for (int i = 0; i < NHASH; i++) {
        key_name(c, key, sizeof(key), "h", i);
        send_cmd(c, 2, (struct arg[]){A("DEL"), A(key)});
        want_int(c, hash_len(&c->hash[i]) > 0);
        op_done(c);
    }
    for (int i = 0; i < NZSET; i++) {
        key_name(c, key, sizeof(key), "z", i);
        send_cmd(c, 2, (struct arg[]){A("DEL"), A(key)});
        want_int(c, zset_card(&c->zset[i]) > 0);
        op_done(c);
    }
}

/* ------------------------------------------------------------ transport */

/* Switches a blocking connection to RESP3: HELLO 3, then a PING whose
 * echo marks the end of HELLO's map (its contents are not checked). */
static int hello3(int fd)
{
    static const char req[] = "HELLO 3\r\nPING resp3-ready\r\n";
    static const char end[] = "$11\r\nresp3-ready\r\n";
    char got[4096];
    size_t len = 0;
    struct timeval tv = {30, 0};

    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (write(fd, req, sizeof(req) - 1) != (ssize_t)sizeof(req) - 1)
        return -1;
    while (len < sizeof(got)) {
        ssize_t n = read(fd, got + len, sizeof(got) - len);
        if (n <= 0)
            return -1;
        len += (size_t)n;
        if (len >= sizeof(end) - 1 &&
            memcmp(got + len - (sizeof(end) - 1), end, sizeof(end) - 1) == 0)
            return got[0] == '%' ? 0 : -1;
    }
    return -1;
}

static int dial(int i, bool resp3)
{
    bool use_unix = opt.unix_path != NULL &&
                    (opt.tcp == NULL || i % 2 == 1);
    int fd, one = 1;

    if (use_unix) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", opt.unix_path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
            close(fd);
            return -1;
        }
    } else {
        struct sockaddr_in sa = {.sin_family = AF_INET};
        char host[64];
        const char *colon = strrchr(opt.tcp, ':');
        if (colon == NULL || colon - opt.tcp >= (long)sizeof(host))
            return -1;
        memcpy(host, opt.tcp, (size_t)(colon - opt.tcp));
        host[colon - opt.tcp] = '\0';
        sa.sin_port = htons((uint16_t)atoi(colon + 1));
        if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
            return -1;
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
            close(fd);
            return -1;
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    if (fd >= 0 && resp3 && hello3(fd) < 0) {
        close(fd);
        return -1;
    }
    if (fd >= 0)
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

static void conn_finish(int ep, struct conn *c)
{
    if (c->fd >= 0) {
        epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
    }
    c->fd = -1;
    c->done = true;
}

/* Starts the next batch: traffic until the deadline, then the cleanup. */
static void next_batch(struct conn *c, bool traffic)
{
    int depth = c->pipelined ? 2 + pick(c, MAX_DEPTH - 1) : 1;

    c->out.len = c->want.len = 0;
    c->out_pos = c->want_pos = 0;
    c->nends = c->endi = 0;
    if (traffic) {
        for (int k = 0; k < depth; k++)
            op_random(c);
    } else {
        op_cleanup(c);
        c->cleaned = true;
    }
    n_ops += (uint64_t)c->nends;
}

static void conn_write(int ep, struct conn *c)
{
    struct epoll_event ev = {.data.ptr = c};

    while (c->out_pos < c->out.len) {
        ssize_t n = write(c->fd, c->out.p + c->out_pos,
                          c->out.len - c->out_pos);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            break;
        if (n < 0) {
            fail(c, "write: %s", strerror(errno));
            conn_finish(ep, c);
            return;
        }
        c->out_pos += (size_t)n;
    }
    ev.events = EPOLLIN | (c->out_pos < c->out.len ? EPOLLOUT : 0);
    epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Shows where the bytes differ, escaped, for the error message. */
static void show(char *dst, size_t cap, const char *p, size_t n)
{
    size_t k = 0;

    for (size_t i = 0; i < n && k + 5 < cap; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch >= 32 && ch < 127)
            dst[k++] = (char)ch;
        else
            k += (size_t)snprintf(dst + k, cap - k, "\\x%02x", ch);
    }
    dst[k] = '\0';
}

static void conn_read(int ep, struct conn *c, int64_t deadline)
{
    char tmp[65536];

    for (;;) {
        ssize_t n = read(c->fd, tmp, sizeof(tmp));
        size_t left = c->want.len - c->want_pos;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) {
            fail(c, "%s with %zu reply bytes outstanding",
                 n == 0 ? "closed by server" : strerror(errno), left);
            conn_finish(ep, c);
            return;
        }
        if ((size_t)n > left ||
            memcmp(tmp, c->want.p + c->want_pos, (size_t)n) != 0) {
            char got[200], want[200];
            size_t k = 0;
            while (k < (size_t)n && k < left &&
                   tmp[k] == c->want.p[c->want_pos + k])
                k++;
            show(got, sizeof(got), tmp + k, (size_t)n - k < 40
                                            ? (size_t)n - k : 40);
            show(want, sizeof(want), c->want.p + c->want_pos + k,
                 left - k < 40 ? left - k : 40);
            fail(c, "wrong reply: got \"%s\", want \"%s\"", got, want);
            conn_finish(ep, c);
            return;
        }
        c->want_pos += (size_t)n;
        while (c->endi < c->nends && c->ends[c->endi] <= c->want_pos) {
            c->endi++;
            n_checked++;
        }
        if (c->want_pos == c->want.len) {
            if (c->cleaned) {
                conn_finish(ep, c);
                return;
            }
            next_batch(c, now_ms() < deadline);
            conn_write(ep, c);
            if (c->done)
                return;
        }
    }
}

/* ------------------------------------------------------------------ run */

static long rss_kib(void)
{
    char path[64], line[256];
    long kib = -1;
    FILE *f;

    if (opt.server_pid <= 0)
        return -1;
    snprintf(path, sizeof(path), "/proc/%d/status", opt.server_pid);
    if ((f = fopen(path, "r")) == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "VmRSS: %ld", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

static void conn_free(struct conn *c)
{
    free(c->out.p);
    free(c->want.p);
    for (int i = 0; i < NSTR_BYTES; i++)
        free(c->str[i].p);
}

/* One run: connect everyone, traffic until the deadline, cleanup. */
static int run_once(int run, uint64_t *ops, uint64_t *checked)
{
    struct conn *cs = calloc((size_t)opt.conns, sizeof(*cs));
    struct epoll_event evs[256];
    int ep = epoll_create1(EPOLL_CLOEXEC), live = 0;
    int64_t deadline, last_progress;
    uint64_t seen = 0;

    if (cs == NULL || ep < 0) {
        perror("setup");
        exit(2);
    }
    for (int i = 0; i < opt.conns; i++) {
        struct conn *c = &cs[i];
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        c->id = i;
        c->pipelined = (i / 2) % 2 == 1;
        c->resp3 = (i / 4) % 2 == 1;
        c->rng = (opt.seed + (uint64_t)run * 1000003u) * 2654435761u +
                 (uint64_t)i * 0x9e3779b97f4a7c15ull + 1;
        c->fd = dial(i, c->resp3);
        if (c->fd < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) < 0) {
            fail(c, "connect: %s", strerror(errno));
            conn_finish(ep, c);
            continue;
        }
        live++;
    }
    deadline = now_ms() + (int64_t)(opt.seconds * 1000);
    for (int i = 0; i < opt.conns; i++) {
        if (cs[i].done)
            continue;
        next_batch(&cs[i], true);
        conn_write(ep, &cs[i]);
    }
    last_progress = now_ms();
    while (live > 0) {
        int n = epoll_wait(ep, evs, 256, 1000);
        for (int k = 0; k < n; k++) {
            struct conn *c = evs[k].data.ptr;
            if (c->done)
                continue;
            if (evs[k].events & EPOLLOUT)
                conn_write(ep, c);
            if (!c->done && evs[k].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
                conn_read(ep, c, deadline);
        }
        live = 0;
        for (int i = 0; i < opt.conns; i++)
            live += !cs[i].done;
        if (n_checked != seen) {
            seen = n_checked;
            last_progress = now_ms();
        } else if (now_ms() - last_progress > STALL_MS) {
            for (int i = 0; i < opt.conns; i++)
                if (!cs[i].done) {
                    fail(&cs[i], "no reply for %d s", STALL_MS / 1000);
                    conn_finish(ep, &cs[i]);
                }
            live = 0;
        }
    }
    for (int i = 0; i < opt.conns; i++)
        conn_free(&cs[i]);
    free(cs);
    close(ep);
    *ops = n_ops;
    *checked = n_checked;
    return 0;
}

/* A DBSIZE over a fresh connection: 0 when every key was deleted. */
static long long dbsize(void)
{
    static const char cmd[] = "*1\r\n$6\r\nDBSIZE\r\n";
    char reply[64] = {0};
    int fd = dial(0, false);
    ssize_t n;

    if (fd < 0)
        return -1;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    n = write(fd, cmd, sizeof(cmd) - 1) == (ssize_t)sizeof(cmd) - 1
            ? read(fd, reply, sizeof(reply) - 1) : -1;
    close(fd);
    return n > 1 && reply[0] == ':' ? atoll(reply + 1) : -1;
}

static void raise_nofile(void)
{
    struct rlimit rl;
    rlim_t want = (rlim_t)opt.conns + 64;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
        return;
    rl.rlim_cur = want;
    if (rl.rlim_max < want)
        rl.rlim_max = want;     /* only root may raise the hard limit */
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
        getrlimit(RLIMIT_NOFILE, &rl);
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: goblin_load [--tcp HOST:PORT] [--unix PATH] "
            "[--conns N] [--seconds S]\n       [--runs N] [--seed S] "
            "[--prefix P] [--server-pid PID] [--expect-empty]\n"
            "       [--no-rss-check]\n");
    exit(2);
}

static void parse_args(int argc, char **argv)
{
    static const struct option longs[] = {
        {"tcp", 1, 0, 't'}, {"unix", 1, 0, 'u'}, {"conns", 1, 0, 'c'},
        {"seconds", 1, 0, 's'}, {"runs", 1, 0, 'r'}, {"seed", 1, 0, 'S'},
        {"prefix", 1, 0, 'p'}, {"server-pid", 1, 0, 'P'},
        {"expect-empty", 0, 0, 'e'}, {"no-rss-check", 0, 0, 'n'},
        {0, 0, 0, 0}};
    int ch;

    while ((ch = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (ch) {
        case 't': opt.tcp = optarg; break;
        case 'u': opt.unix_path = optarg; break;
        case 'c': opt.conns = atoi(optarg); break;
        case 's': opt.seconds = atof(optarg); break;
        case 'r': opt.runs = atoi(optarg); break;
        case 'S': opt.seed = strtoull(optarg, NULL, 10); break;
        case 'p': opt.prefix = optarg; break;
        case 'P': opt.server_pid = atoi(optarg); break;
        case 'e': opt.expect_empty = true; break;
        case 'n': opt.rss_check = false; break;
        default: usage();
        }
    }
    if ((opt.tcp == NULL && opt.unix_path == NULL) || opt.conns < 1 ||
        opt.runs < 1 || opt.seconds < 0)
        usage();
}

int main(int argc, char **argv)
{
    long first_after = -1, last_after = -1;
    int rc = 0;

    parse_args(argc, argv);
    raise_nofile();
    printf("%-4s %6s %-9s %8s %10s %7s %10s %11s %11s\n", "run", "conns",
           "transport", "seconds", "ops", "errors", "checked",
           "rss_before", "rss_after");
    for (int run = 1; run <= opt.runs; run++) {
        uint64_t errs0 = n_errors, ops0 = n_ops, chk0 = n_checked, ops, chk;
        long before = rss_kib(), after;
        int64_t t0 = now_ms();
        long long keys;

        run_once(run, &ops, &chk);
        if (opt.expect_empty && (keys = dbsize()) != 0)
            fail(NULL, "DBSIZE after cleanup is %lld, want 0", keys);
        usleep(300000);         /* let the server see every close */
        after = rss_kib();
        if (run == 1)
            first_after = after;
        last_after = after;
        printf("%-4d %6d %-9s %8.1f %10" PRIu64 " %7" PRIu64 " %10" PRIu64
               " %8ld KiB %8ld KiB\n", run, opt.conns,
               opt.tcp && opt.unix_path ? "tcp+unix" : opt.tcp ? "tcp"
                                                               : "unix",
               (double)(now_ms() - t0) / 1000, ops - ops0,
               n_errors - errs0, chk - chk0, before, after);
        fflush(stdout);
    }
    if (n_errors != 0 || n_checked != n_ops) {
        printf("FAILED: %" PRIu64 " errors, %" PRIu64 " of %" PRIu64
               " replies checked\n", n_errors, n_checked, n_ops);
        rc = 1;
    }
    if (opt.rss_check && opt.runs >= 2 && first_after > 0 &&
        last_after > first_after + first_after / 10 + 16384) {
        printf("FAILED: server RSS grew from %ld to %ld KiB between the "
               "first and the last run\n", first_after, last_after);
        rc = 1;
    } else if (opt.runs >= 2 && first_after > 0) {
        printf("server RSS stable: %ld KiB after run 1, %ld KiB after run "
               "%d\n", first_after, last_after, opt.runs);
    }
    if (rc == 0)
        printf("ok: %" PRIu64 " replies checked, 0 errors\n", n_checked);
    return rc;
}
