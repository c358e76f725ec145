/* replica.c - the link to a master (replica.h): a non-blocking socket
 * driven by the server's loop through goblin_repl_link_fd /
 * goblin_repl_link_ready and by the cron, the handshake, the full sync's
 * payload into a file and its load, and the master's stream run by the
 * master session, each command's bytes passed on to our own replicas
 * (goblin_stream_feed) once it ran. Redis 7.0's replication.c
 * (connectWithMaster, syncWithMaster, readSyncBulkPayload,
 * replicationCron) is the model, with its log lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine/block.h"
#include "goblin/aof.h"
#include "goblin/repl.h"
#include "goblin/snapshot.h"
#include "goblin/stream.h"
#include "engine/settings.h"
#include "repl.h"
#include "replica.h"

#define READ_CHUNK 65536
#define READS_PER_CALL 16

static void say(goblin_engine *eng, enum goblin_log_level lv,
                const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(goblin_engine *eng, enum goblin_log_level lv,
                const char *fmt, ...)
{
    char line[600];
    va_list ap;

    if (eng->cfg.log == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    eng->cfg.log(eng->cfg.log_ctx, lv, line);
}

struct goblin__link *goblin__link_of(const goblin_engine *eng)
{
    return eng->repl != NULL ? eng->repl->link : NULL;
}

bool goblin__repl_following(const goblin_engine *eng)
{
    return goblin__link_of(eng) != NULL;
}

static int64_t now_ms(const goblin_engine *eng)
{
    return goblin__now_ms(eng->st);
}

/* ---- the socket ---- */

static void watch(struct goblin__link *l, uint32_t want)
{
    struct epoll_event ev = {.events = want, .data.u64 = 0};

    if (l->fd < 0 || l->epfd < 0 || want == l->watching)
        return;
    epoll_ctl(l->epfd, l->watching == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD,
              l->fd, &ev);
    l->watching = want;
}

static void close_socket(struct goblin__link *l)
{
    if (l->fd < 0)
        return;
    if (l->epfd >= 0 && l->watching != 0)
        epoll_ctl(l->epfd, EPOLL_CTL_DEL, l->fd, NULL);
    l->watching = 0;
    close(l->fd);
    l->fd = -1;
}

/* Writes what is pending; false when the socket failed. */
static bool flush_out(struct goblin__link *l)
{
    while (l->out_pos < l->out.len) {
        ssize_t n = write(l->fd, l->out.data + l->out_pos,
                          l->out.len - l->out_pos);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0)
            return false;
        l->out_pos += (size_t)n;
    }
    if (l->out_pos == l->out.len) {
        l->out.len = 0;
        l->out_pos = 0;
    }
    if (l->state != GOBLIN__LINK_CONNECTING)
        watch(l, EPOLLIN | (l->out.len > 0 ? EPOLLOUT : 0));
    return true;
}

/* Sends a command of argc words as a RESP array. */
static void send_cmd(struct goblin__link *l, int argc, const char **argv)
{
    char head[32];
    int n = snprintf(head, sizeof(head), "*%d\r\n", argc);

    goblin_buf_append(&l->out, head, (size_t)n);
    for (int i = 0; i < argc; i++) {
        size_t len = strlen(argv[i]);

        n = snprintf(head, sizeof(head), "$%zu\r\n", len);
        goblin_buf_append(&l->out, head, (size_t)n);
        goblin_buf_append(&l->out, argv[i], len);
        goblin_buf_append(&l->out, "\r\n", 2);
    }
}

static void send_ack(goblin_engine *eng, struct goblin__link *l)
{
    char off[24];
    const char *argv[3] = {"REPLCONF", "ACK", off};

    snprintf(off, sizeof(off), "%llu",
             (unsigned long long)goblin_stream_offset(eng));
    send_cmd(l, 3, argv);
    l->last_ack_ms = now_ms(eng);
    flush_out(l);
}

/* ---- leaving a state ---- */

static void drop_transfer(struct goblin__link *l)
{
    if (l->tmpfd >= 0) {
        close(l->tmpfd);
        unlink(l->tmp);
    }
    l->tmpfd = -1;
    l->size = l->got = 0;
    l->eof_form = false;
}

static void drop_master(struct goblin__link *l)
{
    if (l->master == NULL)
        return;
    goblin_session_close(l->master);
    l->master = NULL;
}

/* Back to CONNECT: the next cron pass connects again. cache: the link
 * was up, and what it had is what the next PSYNC asks to continue. */
static void link_reset(goblin_engine *eng, struct goblin__link *l,
                       bool cache)
{
    struct goblin__repl *r = eng->repl;

    if (cache && l->state == GOBLIN__LINK_CONNECTED) {
        l->cached = true;
        memcpy(l->cached_id, r->replid, 41);
        l->cached_off = goblin_stream_offset(eng);
        say(eng, GOBLIN_LOG_NOTICE, "Connection with master lost.");
        say(eng, GOBLIN_LOG_NOTICE, "* Caching the disconnected master "
            "state.");
    }
    if (l->state == GOBLIN__LINK_CONNECTED || l->down_since_ms == 0)
        l->down_since_ms = now_ms(eng);
    close_socket(l);
    drop_transfer(l);
    drop_master(l);
    l->in.len = 0;
    l->out.len = 0;
    l->out_pos = 0;
    l->txn.len = 0;
    l->state = GOBLIN__LINK_CONNECT;
    l->state_ms = now_ms(eng);
    goblin__repl_gate_update(eng);
}

/* ---- connecting ---- */

static void link_connect(goblin_engine *eng, struct goblin__link *l)
{
    struct addrinfo hints = {0}, *res = NULL, *ai;
    char port[16];
    int fd = -1, rc;

    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(port, sizeof(port), "%d", l->port);
    l->state_ms = now_ms(eng);
    if ((rc = getaddrinfo(l->host, port, &hints, &res)) != 0) {
        say(eng, GOBLIN_LOG_WARNING, "Unable to connect to MASTER: %s",
            gai_strerror(rc));
        return;
    }
    for (ai = res; ai != NULL; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
                    SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ||
            errno == EINPROGRESS)
            break;
        close(fd);
        fd = -1;
    }
    rc = errno;
    freeaddrinfo(res);
    if (fd < 0) {
        say(eng, GOBLIN_LOG_WARNING, "Unable to connect to MASTER: %s",
            strerror(rc));
        return;
    }
    rc = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &rc, sizeof(rc));
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &rc, sizeof(rc));
    l->fd = fd;
    l->state = GOBLIN__LINK_CONNECTING;
    watch(l, EPOLLOUT);
    say(eng, GOBLIN_LOG_NOTICE, "MASTER <-> REPLICA sync started");
}

/* ---- the handshake ---- */

static void send_psync(goblin_engine *eng, struct goblin__link *l)
{
    char off[24];
    const char *argv[3] = {"PSYNC", "?", "-1"};

    if (l->cached) {
        snprintf(off, sizeof(off), "%llu",
                 (unsigned long long)l->cached_off + 1);
        argv[1] = l->cached_id;
        argv[2] = off;
        say(eng, GOBLIN_LOG_NOTICE, "Trying a partial resynchronization "
            "(request %s:%s).", argv[1], argv[2]);
    } else {
        say(eng, GOBLIN_LOG_NOTICE, "Partial resynchronization not "
            "possible (no cached master)");
    }
    send_cmd(l, 3, argv);
    l->step = GOBLIN__HS_PSYNC;
}

static void send_capa(struct goblin__link *l)
{
    const char *argv[5] = {"REPLCONF", "capa", "eof", "capa", "psync2"};

    send_cmd(l, 5, argv);
    l->step = GOBLIN__HS_CAPA;
}

static void send_ip_or_capa(goblin_engine *eng, struct goblin__link *l)
{
    char ip[256];
    const char *argv[3] = {"REPLCONF", "ip-address", ip};

    if (goblin_engine_config_get(eng, "replica-announce-ip", ip,
                                 sizeof(ip)) > 0) {
        send_cmd(l, 3, argv);
        l->step = GOBLIN__HS_IP;
        return;
    }
    send_capa(l);
}

static void send_port(goblin_engine *eng, struct goblin__link *l)
{
    char port[24];
    const char *argv[3] = {"REPLCONF", "listening-port", port};
    int64_t p = goblin_engine_config_int(eng, "replica-announce-port", 0);

    if (p == 0)
        p = goblin_engine_config_int(eng, "port", 6379);
    snprintf(port, sizeof(port), "%lld", (long long)p);
    send_cmd(l, 3, argv);
    l->step = GOBLIN__HS_PORT;
}

static void send_auth_or_port(goblin_engine *eng, struct goblin__link *l)
{
    char user[256], pass[GOBLIN_SETTING_VALUE_MAX + 1];
    const char *argv[3] = {"AUTH", user, pass};

    if (goblin_engine_config_get(eng, "masterauth", pass, sizeof(pass)) <= 0) {
        send_port(eng, l);
        return;
    }
    if (goblin_engine_config_get(eng, "masteruser", user, sizeof(user)) > 0)
        send_cmd(l, 3, argv);
    else {
        argv[1] = pass;
        send_cmd(l, 2, argv);
    }
    l->step = GOBLIN__HS_AUTH;
}

/* The master session: the master's stream runs in it, as Redis's master
 * client (no replies, every permission, never paused). */
static int make_master(goblin_engine *eng, struct goblin__link *l)
{
    char peer[300];
    struct goblin_session_info si = {GOBLIN_TRANSPORT_TCP, peer, "", l->fd,
                                     NULL};
    int rc;

    if (l->master != NULL)
        return 0;
    snprintf(peer, sizeof(peer), strchr(l->host, ':') != NULL ? "[%s]:%d"
             : "%s:%d", l->host, l->port);
    if ((rc = goblin_session_open(eng, &si, &l->master)) != 0)
        return rc;
    goblin_session_no_sbe(l->master);
    l->master->flags |= SESS_AUTHED | SESS_NO_PAUSE | SESS_MASTER |
                        SESS_REPLY_OFF;
    l->master->acl = eng->default_user;
    return 0;
}

/* The link is up: the stream flows (after a full sync or +CONTINUE). */
static void attach(goblin_engine *eng, struct goblin__link *l)
{
    l->state = GOBLIN__LINK_CONNECTED;
    l->state_ms = l->last_io_ms = now_ms(eng);
    l->down_since_ms = 0;
    l->read_off = goblin_stream_offset(eng);
    l->cached = false;
    goblin__repl_backlog_ensure(eng);
    goblin__repl_gate_update(eng);
    send_ack(eng, l);
}

static bool is_err(const char *line, const char *code)
{
    return strncmp(line, code, strlen(code)) == 0;
}

static void start_transfer(goblin_engine *eng, struct goblin__link *l,
                           const char *line)
{
    char dir[4096];
    const char *id = line + 12, *sp;

    while (*id == ' ')
        id++;
    sp = strchr(id, ' ');
    if (sp == NULL || sp - id != 40) {
        say(eng, GOBLIN_LOG_WARNING, "Master replied with wrong "
            "+FULLRESYNC syntax.");
        link_reset(eng, l, false);
        return;
    }
    memcpy(l->sync_id, id, 40);
    l->sync_id[40] = '\0';
    l->sync_off = strtoull(sp + 1, NULL, 10);
    say(eng, GOBLIN_LOG_NOTICE, "Full resync from master: %s:%llu",
        l->sync_id, (unsigned long long)l->sync_off);
    l->cached = false;
    if (goblin_engine_config_get(eng, "dir", dir, sizeof(dir)) <= 0)
        snprintf(dir, sizeof(dir), ".");
    snprintf(l->tmp, sizeof(l->tmp), "%s/temp-%lld.%ld.rdb", dir,
             (long long)now_ms(eng), (long)getpid());
    l->tmpfd = open(l->tmp, O_CREAT | O_WRONLY | O_EXCL | O_TRUNC |
                    O_CLOEXEC, 0644);
    if (l->tmpfd < 0) {
        say(eng, GOBLIN_LOG_WARNING, "Opening the temp file needed for "
            "MASTER <-> REPLICA synchronization: %s", strerror(errno));
        link_reset(eng, l, false);
        return;
    }
    l->state = GOBLIN__LINK_TRANSFER;
    l->state_ms = now_ms(eng);
    l->size = l->got = 0;
    l->eof_form = false;
    l->mark[0] = '\0';
}

static void psync_reply(goblin_engine *eng, struct goblin__link *l,
                        const char *line)
{
    if (line[0] == '\0')
        return; /* a newline that keeps the link alive */
    if (strncmp(line, "+FULLRESYNC", 11) == 0) {
        start_transfer(eng, l, line);
        return;
    }
    if (strncmp(line, "+CONTINUE", 9) == 0) {
        const char *id = line + 9;

        while (*id == ' ')
            id++;
        say(eng, GOBLIN_LOG_NOTICE, "Successful partial resynchronization "
            "with master.");
        if (strlen(id) == 40 && memcmp(id, l->cached_id, 40) != 0) {
            say(eng, GOBLIN_LOG_NOTICE, "Master replication ID changed "
                "to %s", id);
            goblin__repl_shift_id(eng, id);
            goblin__repl_drop_replicas(eng);
        }
        if (make_master(eng, l) != 0) {
            link_reset(eng, l, false);
            return;
        }
        goblin_stream_set_offset(eng, l->cached_off);
        say(eng, GOBLIN_LOG_NOTICE, "MASTER <-> REPLICA sync: Master "
            "accepted a Partial Resynchronization.");
        attach(eng, l);
        return;
    }
    if (is_err(line, "-NOMASTERLINK") || is_err(line, "-LOADING"))
        say(eng, GOBLIN_LOG_NOTICE, "Master is currently unable to PSYNC "
            "but should be in the future: %s", line);
    else
        say(eng, GOBLIN_LOG_WARNING, "Unexpected reply to PSYNC from "
            "master: %s", line);
    link_reset(eng, l, false);
}

/* One reply line of the handshake (the CRLF cut). */
static void handshake_reply(goblin_engine *eng, struct goblin__link *l,
                            const char *line)
{
    switch (l->step) {
    case GOBLIN__HS_PONG:
        if (line[0] == '-' && !is_err(line, "-NOAUTH") &&
            !is_err(line, "-NOPERM") &&
            !is_err(line, "-ERR operation not permitted")) {
            say(eng, GOBLIN_LOG_WARNING, "Error reply to PING from "
                "master: '%s'", line);
            link_reset(eng, l, false);
            return;
        }
        say(eng, GOBLIN_LOG_NOTICE, "Master replied to PING, replication "
            "can continue...");
        send_auth_or_port(eng, l);
        break;
    case GOBLIN__HS_AUTH:
        if (line[0] == '-') {
            say(eng, GOBLIN_LOG_WARNING, "Unable to AUTH to MASTER: %s",
                line);
            link_reset(eng, l, false);
            return;
        }
        send_port(eng, l);
        break;
    case GOBLIN__HS_PORT:
        if (line[0] == '-')
            say(eng, GOBLIN_LOG_NOTICE, "(Non critical) Master does not "
                "understand REPLCONF listening-port: %s", line);
        send_ip_or_capa(eng, l);
        break;
    case GOBLIN__HS_IP:
        if (line[0] == '-')
            say(eng, GOBLIN_LOG_NOTICE, "(Non critical) Master does not "
                "understand REPLCONF ip-address: %s", line);
        send_capa(l);
        break;
    case GOBLIN__HS_CAPA:
        if (line[0] == '-')
            say(eng, GOBLIN_LOG_NOTICE, "(Non critical) Master does not "
                "understand REPLCONF capa: %s", line);
        send_psync(eng, l);
        break;
    case GOBLIN__HS_PSYNC:
        psync_reply(eng, l, line);
        return;
    }
    if (l->fd >= 0 && !flush_out(l))
        link_reset(eng, l, false);
}

/* The next line of l->in into line (cap bytes, CRLF cut); false when no
 * whole line arrived yet. */
static bool take_line(struct goblin__link *l, char *line, size_t cap)
{
    char *nl = memchr(l->in.data, '\n', l->in.len);
    size_t n;

    if (nl == NULL)
        return false;
    n = (size_t)(nl - l->in.data);
    if (n > 0 && l->in.data[n - 1] == '\r')
        n--;
    if (n >= cap)
        n = cap - 1;
    memcpy(line, l->in.data, n);
    line[n] = '\0';
    goblin_buf_consume(&l->in, (size_t)(nl - l->in.data) + 1);
    return true;
}

/* ---- the full sync's payload ---- */

static void load_payload(goblin_engine *eng, struct goblin__link *l)
{
    static const struct goblin_slice flushall = {"FLUSHALL", 8};
    static const struct goblin_slice rewrite = {"BGREWRITEAOF", 12};
    struct goblin_snapshot_result res;
    int rc;

    close(l->tmpfd);
    l->tmpfd = -1;
    say(eng, GOBLIN_LOG_NOTICE, "MASTER <-> REPLICA sync: Finished with "
        "success receiving %llu bytes", (unsigned long long)l->got);
    goblin__repl_drop_replicas(eng);
    if (make_master(eng, l) != 0) {
        unlink(l->tmp);
        link_reset(eng, l, false);
        return;
    }
    say(eng, GOBLIN_LOG_NOTICE, "MASTER <-> REPLICA sync: Flushing old "
        "data");
    goblin__command_execute(l->master, 1, &flushall, &l->master->discard);
    say(eng, GOBLIN_LOG_NOTICE, "MASTER <-> REPLICA sync: Loading DB in "
        "memory");
    memset(&res, 0, sizeof(res));
    rc = goblin_engine_import_rdb(eng, l->tmp, 0, &res);
    unlink(l->tmp);
    if (rc != 0) {
        say(eng, GOBLIN_LOG_WARNING, "Failed trying to load the MASTER "
            "synchronization DB from disk, check server logs. (%s)",
            goblin_strerror(rc));
        link_reset(eng, l, false);
        return;
    }
    if (goblin__repl_adopt(eng, l->sync_id, l->sync_off) != 0) {
        link_reset(eng, l, false);
        return;
    }
    /* The AOF has the FLUSHALL, not what the payload loaded. */
    if (eng->aof != NULL)
        goblin__command_execute(l->master, 1, &rewrite, &l->master->discard);
    say(eng, GOBLIN_LOG_NOTICE, "MASTER <-> REPLICA sync: Finished with "
        "success");
    attach(eng, l);
}

/* Payload bytes from l->in into the file; loads it once complete. */
static void transfer_step(goblin_engine *eng, struct goblin__link *l)
{
    size_t n = l->in.len;

    if (!l->eof_form && l->size == 0) {
        char line[256];

        if (!take_line(l, line, sizeof(line)))
            return;
        if (line[0] == '\0')
            return; /* a newline while the master prepares the payload */
        if (line[0] == '-') {
            say(eng, GOBLIN_LOG_WARNING, "MASTER aborted replication with "
                "an error: %s", line + 1);
            link_reset(eng, l, false);
            return;
        }
        if (line[0] != '$') {
            say(eng, GOBLIN_LOG_WARNING, "Bad protocol from MASTER, the "
                "first byte is not '$' (we received '%s'), are you sure "
                "the host and port are right?", line);
            link_reset(eng, l, false);
            return;
        }
        if (strncmp(line + 1, "EOF:", 4) == 0 && strlen(line + 5) == 40) {
            l->eof_form = true;
            memcpy(l->mark, line + 5, 40);
            say(eng, GOBLIN_LOG_NOTICE, "MASTER <-> REPLICA sync: "
                "receiving streamed RDB from master with EOF to disk");
        } else {
            l->size = strtoull(line + 1, NULL, 10);
            say(eng, GOBLIN_LOG_NOTICE, "MASTER <-> REPLICA sync: "
                "receiving %llu bytes from master to disk",
                (unsigned long long)l->size);
            if (l->size == 0) {
                link_reset(eng, l, false);
                return;
            }
        }
        return;
    }
    if (!l->eof_form && n > l->size - l->got)
        n = (size_t)(l->size - l->got);
    if (n == 0)
        return;
    for (size_t off = 0; off < n;) {
        ssize_t w = write(l->tmpfd, l->in.data + off, n - off);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            say(eng, GOBLIN_LOG_WARNING, "Write error or short write "
                "writing to the DB dumped on disk for MASTER <-> REPLICA "
                "synchronization: %s", strerror(errno));
            link_reset(eng, l, false);
            return;
        }
        off += (size_t)w;
    }
    if (l->eof_form) {
        /* The last 40 bytes received, to find the mark. */
        if (n >= 40) {
            memcpy(l->tail, l->in.data + n - 40, 40);
        } else {
            memmove(l->tail, l->tail + n, 40 - n);
            memcpy(l->tail + 40 - n, l->in.data, n);
        }
    }
    l->got += n;
    goblin_buf_consume(&l->in, n);
    if (l->eof_form && l->got >= 40 && memcmp(l->tail, l->mark, 40) == 0) {
        if (ftruncate(l->tmpfd, (off_t)(l->got - 40)) != 0) {
            link_reset(eng, l, false);
            return;
        }
        l->got -= 40;
        load_payload(eng, l);
    } else if (!l->eof_form && l->got == l->size) {
        load_payload(eng, l);
    }
}

/* ---- the stream ---- */

static bool is_getack(int argc, const struct goblin_slice *argv)
{
    return argc >= 2 && argv[0].len == 8 &&
           strncasecmp(argv[0].ptr, "replconf", 8) == 0 &&
           argv[1].len == 6 && strncasecmp(argv[1].ptr, "getack", 6) == 0;
}

/* Runs every whole command of l->in in the master session. A command's
 * bytes count in the offset (and go on to our replicas) once it ran;
 * inside MULTI they wait for the EXEC, so a link lost in the middle of
 * a transaction resumes from before it. */
static void apply(goblin_engine *eng, struct goblin__link *l)
{
    struct goblin_slice small[32], *argv = small;
    int max = 32, argc = 0;
    size_t at = 0;

    while (at < l->in.len && l->state == GOBLIN__LINK_CONNECTED) {
        const char *rec = l->in.data + at;
        int64_t k = goblin_aof_record(rec, l->in.len - at, argv, max, &argc);

        if (k == GOBLIN_ELIMIT) {
            struct goblin_slice *v = malloc((size_t)argc * sizeof(*v));

            if (v == NULL)
                break;
            if (argv != small)
                free(argv);
            argv = v;
            max = argc;
            continue;
        }
        if (k == 0)
            break;
        if (k < 0) {
            say(eng, GOBLIN_LOG_WARNING, "Protocol error from master: "
                "the link is closed");
            link_reset(eng, l, true);
            break;
        }
        if (is_getack(argc, argv))
            send_ack(eng, l);
        else
            goblin__command_execute(l->master, argc, argv,
                                    &l->master->discard);
        at += (size_t)k;
        if (l->master->flags & SESS_MULTI) {
            goblin_buf_append(&l->txn, rec, (size_t)k);
        } else if (l->txn.len > 0) {
            goblin_buf_append(&l->txn, rec, (size_t)k);
            goblin_stream_feed(eng, l->txn.data, l->txn.len);
            l->txn.len = 0;
        } else {
            goblin_stream_feed(eng, rec, (size_t)k);
        }
        if (l->master->flags & SESS_CLOSE) {
            link_reset(eng, l, true); /* CLIENT KILL of the master */
            break;
        }
    }
    if (argv != small)
        free(argv);
    if (l->state == GOBLIN__LINK_CONNECTED)
        goblin_buf_consume(&l->in, at);
}

/* Works through l->in in whatever state the bytes lead to. */
static void process(goblin_engine *eng, struct goblin__link *l)
{
    for (;;) {
        enum goblin__link_state st = l->state;
        size_t len = l->in.len;
        char line[1024];

        if (st == GOBLIN__LINK_HANDSHAKE) {
            if (!take_line(l, line, sizeof(line)))
                return;
            handshake_reply(eng, l, line);
        } else if (st == GOBLIN__LINK_TRANSFER) {
            transfer_step(eng, l);
        } else if (st == GOBLIN__LINK_CONNECTED) {
            apply(eng, l);
            return;
        } else {
            return;
        }
        if (l->state == st && l->in.len == len)
            return;
    }
}

static void connected_now(goblin_engine *eng, struct goblin__link *l)
{
    int err = 0;
    socklen_t len = sizeof(err);
    static const char *ping[1] = {"PING"};

    if (getsockopt(l->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        err = errno;
    if (err != 0) {
        say(eng, GOBLIN_LOG_WARNING, "Error condition on socket for SYNC: "
            "%s", strerror(err));
        link_reset(eng, l, false);
        return;
    }
    say(eng, GOBLIN_LOG_NOTICE, "Non blocking connect for SYNC fired the "
        "event.");
    l->state = GOBLIN__LINK_HANDSHAKE;
    l->state_ms = now_ms(eng);
    send_cmd(l, 1, ping);
    l->step = GOBLIN__HS_PONG;
    if (!flush_out(l))
        link_reset(eng, l, false);
}

/* Reads what the socket has (a bounded amount per call) and works
 * through it. */
static void link_io(goblin_engine *eng, struct goblin__link *l,
                    bool readable, bool writable)
{
    if (l->fd < 0)
        return;
    if (l->state == GOBLIN__LINK_CONNECTING) {
        if (readable || writable)
            connected_now(eng, l);
        return;
    }
    if (writable && !flush_out(l)) {
        link_reset(eng, l, true);
        return;
    }
    for (int i = 0; readable && i < READS_PER_CALL && l->fd >= 0; i++) {
        ssize_t n;

        if (goblin_buf_reserve(&l->in, READ_CHUNK) != 0)
            break;
        n = read(l->fd, l->in.data + l->in.len, READ_CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0) {
            if (l->state != GOBLIN__LINK_CONNECTED)
                say(eng, GOBLIN_LOG_WARNING, "Master closed the link "
                    "during the %s.", l->state == GOBLIN__LINK_TRANSFER
                    ? "synchronization" : "handshake");
            link_reset(eng, l, true);
            return;
        }
        l->in.len += (size_t)n;
        l->last_io_ms = now_ms(eng);
        if (l->state == GOBLIN__LINK_CONNECTED)
            l->read_off += (uint64_t)n;
        process(eng, l);
        if ((size_t)n < READ_CHUNK)
            break;
    }
}

static void replicaof_setting(goblin_engine *eng);

int goblin_repl_link_fd(goblin_engine *eng)
{
    struct goblin__repl *r = goblin__repl_get(eng);

    if (r == NULL)
        return -1;
    /* A server's loop asks before it serves: a replica from the first
     * command on. */
    if (!r->replicaof_read)
        replicaof_setting(eng);
    if (r->link_epfd < 0 || r->link_epfd == 0)
        r->link_epfd = epoll_create1(EPOLL_CLOEXEC);
    if (r->link != NULL)
        r->link->epfd = r->link_epfd;
    return r->link_epfd;
}

void goblin_repl_link_ready(goblin_engine *eng)
{
    struct goblin__link *l = goblin__link_of(eng);
    struct epoll_event ev[4];
    bool rd = false, wr = false;
    int n;

    if (l == NULL || l->epfd < 0)
        return;
    n = epoll_wait(l->epfd, ev, 4, 0);
    for (int i = 0; i < n; i++) {
        rd |= (ev[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) != 0;
        wr |= (ev[i].events & EPOLLOUT) != 0;
    }
    if (rd || wr)
        link_io(eng, l, rd, wr);
}

void goblin__link_getack(goblin_engine *eng)
{
    struct goblin__link *l = goblin__link_of(eng);

    if (l != NULL && l->state == GOBLIN__LINK_CONNECTED)
        send_ack(eng, l);
}

/* ---- the cron ---- */

/* The replicaof setting (config file, --replicaof), once, at the first
 * cron pass: it is immutable, so REPLICAOF changes the link after. */
static void replicaof_setting(goblin_engine *eng)
{
    char v[300], host[260];
    long port;
    int n;

    eng->repl->replicaof_read = true;
    if (goblin_engine_config_get(eng, "replicaof", v, sizeof(v)) <= 0)
        return;
    if (sscanf(v, "%259s %ld%n", host, &port, &n) != 2 || v[n] != '\0' ||
        port < 0 || port > 65535) {
        say(eng, GOBLIN_LOG_WARNING, "Invalid replicaof setting: %s", v);
        return;
    }
    if (strcasecmp(host, "no") != 0)
        goblin__link_set(eng, host, (int)port, "");
}

void goblin__link_cron(goblin_engine *eng)
{
    struct goblin__link *l;
    int64_t now = now_ms(eng), timeout;

    if (!eng->repl->replicaof_read)
        replicaof_setting(eng);
    if ((l = goblin__link_of(eng)) == NULL)
        return;
    timeout = goblin_engine_config_int(eng, "repl-timeout", 60) * 1000;
    /* Without a loop watching goblin_repl_link_fd, the cron drives. */
    goblin_repl_link_ready(eng);
    if (l->epfd < 0 && l->fd >= 0)
        link_io(eng, l, true, l->state == GOBLIN__LINK_CONNECTING ||
                l->out.len > 0);
    switch (l->state) {
    case GOBLIN__LINK_CONNECT:
        if (now - l->state_ms >= 1000 || l->state_ms == 0) {
            say(eng, GOBLIN_LOG_NOTICE, "Connecting to MASTER %s:%d",
                l->host, l->port);
            link_connect(eng, l);
        }
        break;
    case GOBLIN__LINK_CONNECTING:
    case GOBLIN__LINK_HANDSHAKE:
        if (now - l->state_ms > timeout) {
            say(eng, GOBLIN_LOG_WARNING, "Timeout connecting to the "
                "MASTER...");
            link_reset(eng, l, false);
        }
        break;
    case GOBLIN__LINK_TRANSFER:
        if (now - l->last_io_ms > timeout && now - l->state_ms > timeout) {
            say(eng, GOBLIN_LOG_WARNING, "Timeout receiving bulk data from "
                "MASTER... If the problem persists try to set the "
                "'repl-timeout' parameter in redis.conf to a larger "
                "value.");
            link_reset(eng, l, false);
        }
        break;
    case GOBLIN__LINK_CONNECTED:
        if (l->master != NULL && (l->master->flags & SESS_CLOSE)) {
            link_reset(eng, l, true);
            break;
        }
        if (now - l->last_io_ms > timeout) {
            say(eng, GOBLIN_LOG_WARNING, "MASTER timeout: no data nor PING "
                "received...");
            link_reset(eng, l, true);
            break;
        }
        if (now - l->last_ack_ms >= 1000)
            send_ack(eng, l);
        break;
    }
}

/* ---- REPLICAOF ---- */

/* The replicaof setting follows REPLICAOF, so that CONFIG REWRITE
 * writes the master we follow ("" once promoted), as Redis's
 * rewriteConfigReplicaOfOption; it stays immutable for CONFIG SET. */
static void remember_master(goblin_engine *eng, const char *host, int port)
{
    struct goblin__setting *s = (struct goblin__setting *)
        goblin__setting_find(eng, (struct goblin_slice){"replicaof", 9});
    char text[300];
    const char *why;

    if (s == NULL || s->s.set == NULL)
        return;
    if (host != NULL)
        snprintf(text, sizeof(text), "%s %d", host, port);
    else
        text[0] = '\0';
    if (s->s.set(s->s.ctx, (struct goblin_slice){text, strlen(text)},
                 &why) == 0)
        s->changed = true;
}

static void expire_hold(goblin_engine *eng)
{
    for (int i = 0; i < eng->ndbs; i++)
        if (eng->dbs[i].st != NULL)
            eng->dbs[i].st->expire_paused = eng->pause_type != 0 ||
                                            goblin__repl_following(eng);
}

void goblin__link_free(goblin_engine *eng)
{
    struct goblin__repl *r = eng->repl;
    struct goblin__link *l = r != NULL ? r->link : NULL;

    if (l != NULL) {
        close_socket(l);
        drop_transfer(l);
        /* goblin_engine_close closed every session first. */
        if (eng->first == NULL)
            l->master = NULL;
        drop_master(l);
        goblin_buf_free(&l->in);
        goblin_buf_free(&l->out);
        goblin_buf_free(&l->txn);
        free(l);
        r->link = NULL;
    }
    if (r != NULL && r->link_epfd > 0) {
        close(r->link_epfd);
        r->link_epfd = -1;
    }
}

int goblin__link_set(goblin_engine *eng, const char *host, int port,
                     const char *by)
{
    struct goblin__repl *r = goblin__repl_get(eng);
    struct goblin__link *l;
    bool was_master;

    if (r == NULL)
        return GOBLIN_ENOMEM;
    l = r->link;
    if (host == NULL) {
        if (l == NULL)
            return 0;
        say(eng, GOBLIN_LOG_NOTICE, "Connection with master lost.");
        close_socket(l);
        drop_transfer(l);
        drop_master(l);
        goblin_buf_free(&l->in);
        goblin_buf_free(&l->out);
        goblin_buf_free(&l->txn);
        free(l);
        r->link = NULL;
        goblin_stream_follow(eng, false);
        /* As Redis's shiftReplicationId: replicas of the old master can
         * continue from us with the id we had. */
        goblin__repl_shift_id(eng, NULL);
        goblin__repl_drop_replicas(eng);
        r->no_replicas_since_ms = now_ms(eng);
        expire_hold(eng);
        goblin__repl_gate_update(eng);
        remember_master(eng, NULL, 0);
        say(eng, GOBLIN_LOG_NOTICE, "MASTER MODE enabled (user request "
            "from '%s')", by);
        return 0;
    }
    if (l != NULL && strcasecmp(l->host, host) == 0 && l->port == port) {
        say(eng, GOBLIN_LOG_NOTICE, "REPLICAOF would result into "
            "synchronization with the master we are already connected "
            "with. No operation performed.");
        return 1;
    }
    /* Clients blocked on a master, now a replica (Redis's
     * replicationSetMaster). */
    goblin__block_disconnect_all(eng);
    was_master = l == NULL;
    if (l == NULL) {
        if ((l = calloc(1, sizeof(*l))) == NULL)
            return GOBLIN_ENOMEM;
        l->fd = l->tmpfd = -1;
        l->epfd = r->link_epfd > 0 ? r->link_epfd : -1;
        l->in.alloc = l->out.alloc = l->txn.alloc = &eng->acct;
        r->link = l;
    } else {
        link_reset(eng, l, true);
    }
    snprintf(l->host, sizeof(l->host), "%s", host);
    l->port = port;
    if (was_master) {
        /* Our own history is what a PSYNC to the new master can continue
         * (Redis's replicationCacheMasterUsingMyself). */
        l->cached = r->backlog.buf != NULL;
        memcpy(l->cached_id, r->replid, 41);
        l->cached_off = goblin_stream_offset(eng);
        goblin_stream_follow(eng, true);
        expire_hold(eng);
    }
    l->state = GOBLIN__LINK_CONNECT;
    l->state_ms = 0;
    goblin__repl_gate_update(eng);
    if (by[0] != '\0') {
        remember_master(eng, host, port);
        say(eng, GOBLIN_LOG_NOTICE, "REPLICAOF %s:%d enabled (user request "
            "from '%s')", host, port, by);
        say(eng, GOBLIN_LOG_NOTICE, "Connecting to MASTER %s:%d", host,
            port);
        link_connect(eng, l);
    }
    return 0;
}
