/* log.c - goblind's log: one line per event in Redis's format,
 * "pid:M dd Mon yyyy hh:mm:ss.mmm C text", where C is '.' debug, '-'
 * verbose, '*' notice and '#' warning, so tools that read Redis logs read
 * these. M is the server; a BGSAVE child logs as C, as in Redis. Lines below the configured level are dropped; each line is
 * flushed at once (the log is for events, never per request).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "goblind.h"

static const char *const level_names[] = {
    "debug", "verbose", "notice", "warning",
};

static void log_line(struct goblind *g, int level, const char *text)
{
    char stamp[64];
    struct timeval tv;
    struct tm tm;
    FILE *f = g->logf != NULL ? g->logf : stdout;

    if (level < (int)g->loglevel)
        return;
    gettimeofday(&tv, NULL);
    localtime_r(&tv.tv_sec, &tm);
    strftime(stamp, sizeof(stamp), "%d %b %Y %H:%M:%S", &tm);
    fprintf(f, "%d:%c %s.%03d %c %s\n", (int)getpid(),
            g->child_pid < 0 ? 'C' : 'M', stamp,
            (int)(tv.tv_usec / 1000), ".-*#"[level & 3], text);
    fflush(f);
}

void goblind_log(struct goblind *g, int level, const char *fmt, ...)
{
    char text[1024];
    va_list ap;

    if (level < (int)g->loglevel)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    log_line(g, level, text);
}

void goblind_engine_log(void *ctx, enum goblin_log_level level,
                        const char *text)
{
    log_line(ctx, (int)level, text);
}

/* Opens the log file for appending; stdout when none is configured. */
int goblind_log_open(struct goblind *g)
{
    if (g->logfile == NULL || g->logfile[0] == '\0')
        return 0;
    g->logf = fopen(g->logfile, "ae");
    if (g->logf == NULL) {
        fprintf(stderr, "goblind: can't open the log file %s: %s\n",
                g->logfile, strerror(errno));
        return -1;
    }
    return 0;
}

void goblind_log_close(struct goblind *g)
{
    if (g->logf != NULL)
        fclose(g->logf);
    g->logf = NULL;
}

/* Returns the level named by text, or -1. */
int goblind_loglevel_parse(const char *text)
{
    for (int i = 0; i < 4; i++)
        if (strcasecmp(text, level_names[i]) == 0)
            return i;
    return -1;
}

const char *goblind_loglevel_name(int level)
{
    return level_names[level & 3];
}
