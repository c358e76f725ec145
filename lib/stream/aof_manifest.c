/* aof_manifest.c - the AOF manifest (Redis 7.0's aof.c,
 * aofLoadManifestFromFile and getAofManifestAsString): one line per part,
 * "file <name> seq <n> type <b|h|i>", in any key order; '#' lines are
 * comments. A manifest names at most one base; history parts ('h') are
 * ones a rewrite replaced, kept for nothing but listed, so they are read
 * and skipped. Writing goes through a temporary file, fsync and rename.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aof_int.h"

static int bad(char *err, size_t cap, const char *why, int line)
{
    snprintf(err, cap, "Invalid AOF manifest file format (line %d: %s)",
             line, why);
    return GOBLIN_EPROTO;
}

/* Splits one line into words at spaces; returns their number. */
static int words(char *line, char **w, int max)
{
    int n = 0;
    char *p = line;

    while (*p != '\0') {
        while (*p == ' ' || *p == '\t')
            *p++ = '\0';
        if (*p == '\0')
            break;
        if (n == max)
            return max + 1;
        w[n++] = p;
        while (*p != '\0' && *p != ' ' && *p != '\t')
            p++;
    }
    return n;
}

static int one_line(struct goblin__aof_manifest *m, char *line, int no,
                    char *err, size_t cap)
{
    char *w[8], *name = NULL, type = 0, *end;
    long seq = -1;
    int n = words(line, w, 8);

    if (n == 0 || w[0][0] == '#')
        return 0;
    if (n % 2 != 0 || n > 8)
        return bad(err, cap, "odd number of words", no);
    for (int i = 0; i < n; i += 2) {
        if (strcmp(w[i], "file") == 0)
            name = w[i + 1];
        else if (strcmp(w[i], "seq") == 0) {
            seq = strtol(w[i + 1], &end, 10);
            if (*end != '\0' || seq < 1 || seq > INT32_MAX)
                return bad(err, cap, "bad seq", no);
        } else if (strcmp(w[i], "type") == 0) {
            if (strlen(w[i + 1]) != 1 || strchr("bhi", w[i + 1][0]) == NULL)
                return bad(err, cap, "bad type", no);
            type = w[i + 1][0];
        }
    }
    if (name == NULL || seq < 0 || type == 0)
        return bad(err, cap, "missing file, seq or type", no);
    if (strlen(name) >= GOBLIN__AOF_NAME || strchr(name, '/') != NULL)
        return bad(err, cap, "bad file name", no);
    if (type == 'h')
        return 0;
    if (type == 'b') {
        if (m->base[0] != '\0')
            return bad(err, cap, "more than one base", no);
        snprintf(m->base, sizeof(m->base), "%s", name);
        m->base_seq = (int)seq;
        return 0;
    }
    if (m->nincr == GOBLIN__AOF_MAX_INCR)
        return bad(err, cap, "too many incremental files", no);
    if (m->nincr > 0 && seq <= m->incr_seq[m->nincr - 1])
        return bad(err, cap, "incremental files out of order", no);
    snprintf(m->incr[m->nincr], sizeof(m->incr[0]), "%s", name);
    m->incr_seq[m->nincr++] = (int)seq;
    return 0;
}

int goblin__aof_manifest_parse(struct goblin__aof_manifest *m,
                               const char *text, size_t len, char *err,
                               size_t cap)
{
    char line[1024];
    size_t at = 0;
    int no = 0, rc;

    memset(m, 0, sizeof(*m));
    while (at < len) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl != NULL ? (size_t)(nl - (text + at)) : len - at;

        no++;
        if (n >= sizeof(line))
            return bad(err, cap, "line too long", no);
        if (memchr(text + at, '\0', n) != NULL)
            return bad(err, cap, "NUL byte", no);
        memcpy(line, text + at, n);
        line[n] = '\0';
        if (n > 0 && line[n - 1] == '\r')
            line[n - 1] = '\0';
        if ((rc = one_line(m, line, no, err, cap)) != 0)
            return rc;
        at += n + (nl != NULL);
    }
    if (m->base[0] == '\0' && m->nincr == 0) {
        snprintf(err, cap, "Invalid AOF manifest file format (no files)");
        return GOBLIN_EPROTO;
    }
    return 0;
}

int goblin__aof_manifest_text(const struct goblin__aof_manifest *m,
                              char *out, size_t cap)
{
    size_t n = 0;

    if (m->base[0] != '\0')
        n += (size_t)snprintf(out + n, cap - n, "file %s seq %d type b\n",
                              m->base, m->base_seq);
    for (int i = 0; i < m->nincr && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "file %s seq %d type i\n",
                              m->incr[i], m->incr_seq[i]);
    return n < cap ? (int)n : GOBLIN_ERANGE;
}

int goblin__aof_manifest_write(const struct goblin__aof_manifest *m,
                               const char *dir, const char *name)
{
    char text[GOBLIN__AOF_MAX_INCR * (GOBLIN__AOF_NAME + 32) + 512];
    char path[4096], tmp[4200];
    int len = goblin__aof_manifest_text(m, text, sizeof(text));
    int fd, rc = 0;

    if (len < 0)
        return len;
    snprintf(path, sizeof(path), "%s/%s.manifest", dir, name);
    snprintf(tmp, sizeof(tmp), "%s/temp-%s.manifest", dir, name);
    if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
        return -errno;
    if (write(fd, text, (size_t)len) != len || fsync(fd) != 0)
        rc = errno != 0 ? -errno : -EIO;
    close(fd);
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    if (rc != 0) {
        unlink(tmp);
        return rc;
    }
    return goblin__aof_sync_dir(dir);
}

int goblin__aof_sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = 0;

    if (fd < 0)
        return -errno;
    if (fsync(fd) != 0)
        rc = -errno;
    close(fd);
    return rc;
}
