/* process.c - what is about the process: the log in Redis's line format
 * "pid:R dd Mon yyyy hh:mm:ss.mmm C text" (R: M server, C BGSAVE child;
 * C: '.' debug, '-' verbose, '*' notice, '#' warning), flushed per line;
 * the fork behind BGSAVE and the AOF rewrite;
 * --daemonize (fork, setsid, standard streams to /dev/null; the working
 * directory stays); --pidfile; and systemd's readiness protocol without
 * libsystemd: "READY=1" and "STOPPING=1" to NOTIFY_SOCKET ('@' for the
 * abstract namespace; docs/goblind.service has Type=notify).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "goblind.h"

void goblind_engine_log(void *ctx, enum goblin_log_level level,
                        const char *text)
{
    struct goblind *g = ctx;
    FILE *f = g->logf != NULL ? g->logf : stdout;
    struct timeval tv;
    char stamp[64];
    struct tm tm;

    if ((long)level < g->loglevel)
        return;
    gettimeofday(&tv, NULL);
    localtime_r(&tv.tv_sec, &tm);
    strftime(stamp, sizeof(stamp), "%d %b %Y %H:%M:%S", &tm);
    fprintf(f, "%d:%c %s.%03d %c %s\n", (int)getpid(),
            g->in_child ? 'C' : 'M', stamp, (int)(tv.tv_usec / 1000),
            ".-*#"[level & 3], text);
    fflush(f);
}

void goblind_log(struct goblind *g, int level, const char *fmt, ...)
{
    char text[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    goblind_engine_log(g, (enum goblin_log_level)level, text);
}

/* The library's fork hook: stdio flushed first, so that the child does
 * not write the parent's buffered lines again. */
int goblind_fork(void *ctx, int *keep_fd)
{
    struct goblind *g = ctx;
    pid_t pid;

    if (g->logf != NULL)
        fflush(g->logf);
    fflush(stdout);
    if ((pid = fork()) == 0) {
        g->in_child = true;
        *keep_fd = g->logf != NULL ? fileno(g->logf) : -1;
    }
    return pid;
}

/* A path setting opened with mode: 0 when it is empty, -1 after saying
 * why on stderr ("goblind: " what ": reason"). */
static int open_setting(struct goblind *g, const char *name,
                        const char *mode, const char *what, FILE **f,
                        char **path)
{
    char v[GOBLIN_SETTING_VALUE_MAX];

    if (goblin_engine_config_get(g->engine, name, v, sizeof(v)) <= 0)
        return 0;
    if ((*f = fopen(v, mode)) == NULL) {
        fputs("goblind: ", stderr);
        fprintf(stderr, what, v);
        fprintf(stderr, ": %s\n", strerror(errno));
        return -1;
    }
    if (path != NULL)
        *path = strdup(v);
    return 0;
}

int goblind_log_open(struct goblind *g)
{
    return open_setting(g, "logfile", "ae", "can't open the log file %s",
                        &g->logf, NULL);
}

int goblind_daemonize(void)
{
    pid_t pid;
    int fd;

    fflush(NULL);
    if ((pid = fork()) < 0) {
        fprintf(stderr, "goblind: fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid > 0)
        _exit(0);
    setsid();
    if ((fd = open("/dev/null", O_RDWR)) >= 0) {
        dup2(fd, STDIN_FILENO);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        if (fd > STDERR_FILENO)
            close(fd);
    }
    return 0;
}

int goblind_pidfile_write(struct goblind *g)
{
    FILE *f = NULL;

    if (open_setting(g, "pidfile", "we", "can't write the pidfile '%s'", &f,
                     &g->pidfile) < 0)
        return -1;
    if (f != NULL) {
        fprintf(f, "%ld\n", (long)getpid());
        fclose(f);
    }
    return 0;
}

/* At exit: the pidfile and the log file. */
void goblind_process_end(struct goblind *g)
{
    if (g->pidfile != NULL)
        unlink(g->pidfile);
    free(g->pidfile);
    g->pidfile = NULL;
    if (g->logf != NULL)
        fclose(g->logf);
    g->logf = NULL;
}

void goblind_notify(const char *state)
{
    const char *path = getenv("NOTIFY_SOCKET");
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t len;
    int fd;

    if (path == NULL || (path[0] != '/' && path[0] != '@') ||
        (len = strlen(path)) >= sizeof(sa.sun_path))
        return;
    memcpy(sa.sun_path, path, len);
    if (path[0] == '@')
        sa.sun_path[0] = '\0';
    if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
        return;
    sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
           (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len));
    close(fd);
}
