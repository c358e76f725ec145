/* daemon.c - --daemonize yes (fork, setsid, standard streams to
 * /dev/null, as Redis does; the working directory stays, so relative
 * paths keep their meaning) and --pidfile (written after daemonizing,
 * removed at exit).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "goblind.h"

int goblind_daemonize(struct goblind *g)
{
    pid_t pid;
    int fd;

    (void)g;
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
    FILE *f = fopen(g->pidfile, "we");

    if (f == NULL) {
        fprintf(stderr, "goblind: can't write the pidfile '%s': %s\n",
                g->pidfile, strerror(errno));
        return -1;
    }
    fprintf(f, "%ld\n", (long)getpid());
    fclose(f);
    g->pidfile_written = true;
    return 0;
}

void goblind_pidfile_remove(struct goblind *g)
{
    if (g->pidfile_written)
        unlink(g->pidfile);
    g->pidfile_written = false;
}
