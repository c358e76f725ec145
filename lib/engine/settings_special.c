/* settings_special.c - the descriptors' own parsers (goblin__sdesc.parse):
 * the directives whose value has a syntax of its own, with Redis 7.0's
 * rules and error texts. Each takes the value as given and writes the
 * normal form CONFIG GET shows and the setting's owner applies:
 *
 *   notify-keyspace-events  flag letters, shown in Redis's canonical order
 *   oom-score-adj-values    three integers in [-2000, 2000]
 *   latency-tracking-info-percentiles  numbers in [0, 100], as Redis's
 *                           "%f" without trailing zeros
 *   proc-title-template     {variables} Redis knows, something shown
 *   cluster-announce-hostname  letters, digits, '-' and '.'
 *   bind                    at most GOBLIN__MAX_BIND addresses
 *   save                    "seconds changes" pairs (cmd_persist.c)
 *   client-output-buffer-limit  "class hard soft seconds" groups, memory
 *                           amounts in bytes, class names as Redis shows
 *                           them (settings.c)
 *   dir                     an existing directory (cmd_persist.c)
 *   dbfilename              a file name, not a path (cmd_persist.c)
 *
 * A normal form longer than cap is cut short; an owner that keeps longer
 * values (dbfilename, dir) parses into a buffer of its own size.
 *
 * A parser only validates and normalizes: the owner of a setting applies
 * the normal form, so CONFIG SET, the config file, the command line and a
 * value written back by CONFIG REWRITE are checked by the same code.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "settings.h"

static bool eq_nocase(const char *a, struct goblin_slice b)
{
    const unsigned char *q = b.ptr;

    for (size_t i = 0; i < b.len; i++) {
        unsigned char x = (unsigned char)a[i], y = q[i];

        if (x == '\0')
            return false;
        if (y >= 'A' && y <= 'Z')
            y += 'a' - 'A';
        if (x != y)
            return false;
    }
    return a[b.len] == '\0';
}

/* Words of v split at spaces, copied NUL-terminated; how many, or -1. */
static int words(struct goblin_slice v, char w[][64], int max)
{
    const char *p = v.ptr, *end = p + v.len;
    int n = 0;

    while (p < end) {
        size_t len;

        while (p < end && *p == ' ')
            p++;
        if (p == end)
            break;
        len = strcspn(p, " ");
        len = len < (size_t)(end - p) ? len : (size_t)(end - p);
        if (n == max || len >= 64)
            return -1;
        memcpy(w[n], p, len);
        w[n++][len] = '\0';
        p += len;
    }
    return n;
}

/* The same split as slices into v; how many, or -1 when there are more
 * than max (no length limit on a word). */
static int split(struct goblin_slice v, struct goblin_slice *w, int max)
{
    const char *p = v.ptr, *end = p + v.len;
    int n = 0;

    while (p < end) {
        const char *q;

        while (p < end && *p == ' ')
            p++;
        if (p == end)
            break;
        for (q = p; q < end && *q != ' '; q++)
            ;
        if (n == max)
            return -1;
        w[n++] = (struct goblin_slice){p, (size_t)(q - p)};
        p = q;
    }
    return n;
}

static int copy_as_given(struct goblin_slice v, char *norm, size_t cap)
{
    snprintf(norm, cap, "%.*s", (int)v.len, (const char *)v.ptr);
    return 0;
}

int goblin__sparse_notify(struct goblin_slice v, char *norm, size_t cap,
                          const char **why)
{
    static const char all[] = "g$lshzxetd", order[] = "g$lshzxetdn";
    bool on[128] = {false};
    const char *p = v.ptr;
    size_t n = 0;
    bool every = true;

    for (size_t i = 0; i < v.len; i++) {
        unsigned char c = (unsigned char)p[i];

        if (c >= 128 || strchr("Ag$lshzxeKEtmdn", c) == NULL || c == 0) {
            *why = "Invalid event class character. Use "
                   "'Ag$lshzxeKEtmdn'.";
            return GOBLIN_EINVAL;
        }
        if (c == 'A')
            for (const char *a = all; *a != '\0'; a++)
                on[(unsigned char)*a] = true;
        on[c] = true;
    }
    for (const char *a = all; *a != '\0'; a++)
        every = every && on[(unsigned char)*a];
    if (every && cap > 1)
        norm[n++] = 'A';
    for (const char *o = order; *o != '\0' && n + 1 < cap; o++)
        if (on[(unsigned char)*o] && (!every || *o == 'n'))
            norm[n++] = *o;
    for (const char *o = "KEm"; *o != '\0' && n + 1 < cap; o++)
        if (on[(unsigned char)*o])
            norm[n++] = *o;
    norm[n] = '\0';
    return 0;
}

int goblin__sparse_oom_values(struct goblin_slice v, char *norm, size_t cap,
                              const char **why)
{
    char w[4][64];
    int64_t x[3];
    int n = words(v, w, 4);

    if (n != 3) {
        *why = "wrong number of arguments";
        return GOBLIN_EINVAL;
    }
    for (int i = 0; i < 3; i++) {
        if (!goblin__strict_ll(w[i], strlen(w[i]), &x[i]) || x[i] < -2000 ||
            x[i] > 2000) {
            *why = "Invalid oom-score-adj-values, elements must be between "
                   "-2000 and 2000.";
            return GOBLIN_EINVAL;
        }
    }
    snprintf(norm, cap, "%lld %lld %lld", (long long)x[0], (long long)x[1],
             (long long)x[2]);
    return 0;
}

/* A percentile as Redis shows it: "%f" without its trailing zeros
 * (trimDoubleString), so 99.9 is "99.9" and 50 is "50". */
static const char *trimmed(double d, char *buf)
{
    size_t len = (size_t)snprintf(buf, 64, "%f", d);

    while (len > 0 && buf[len - 1] == '0')
        len--;
    if (len > 0 && buf[len - 1] == '.')
        len--;
    buf[len] = '\0';
    return buf;
}

int goblin__sparse_percentiles(struct goblin_slice v, char *norm,
                               size_t cap, const char **why)
{
    char w[16][64], num[64];
    int n = words(v, w, 16);
    size_t len = 0;

    norm[0] = '\0';
    if (n < 0) {
        *why = "Invalid latency-tracking-info-percentiles parameters";
        return GOBLIN_EINVAL;
    }
    for (int i = 0; i < n; i++) {
        char *end;
        double d;

        errno = 0;
        d = strtod(w[i], &end);
        if (errno != 0 || end == w[i] || *end != '\0') {
            *why = "Invalid latency-tracking-info-percentiles parameters";
            return GOBLIN_EINVAL;
        }
        if (!(d >= 0.0 && d <= 100.0)) {
            *why = "latency-tracking-info-percentiles parameters should sit "
                   "between [0.0,100.0]";
            return GOBLIN_EINVAL;
        }
        len += (size_t)snprintf(norm + len, len < cap ? cap - len : 0,
                                "%s%s", i > 0 ? " " : "", trimmed(d, num));
    }
    return 0;
}

/* {variables} Redis knows, and something left once they are expanded
 * with an empty title (Redis's validation). */
int goblin__sparse_title(struct goblin_slice v, char *norm, size_t cap,
                         const char **why)
{
    static const char *const vars[] = {"title", "server-mode", "unixsocket",
                                       "config-file", "listen-addr", "port",
                                       "tls-port"};
    const char *p = v.ptr, *end = p + v.len;
    bool shows = false;

    while (p < end) {
        const char *close;
        size_t i;

        if (*p != '{') {
            shows = shows || *p != ' ';
            p++;
            continue;
        }
        close = memchr(p, '}', (size_t)(end - p));
        for (i = 0; close != NULL && i < 7; i++)
            if (eq_nocase(vars[i], (struct goblin_slice){
                                       p + 1, (size_t)(close - p - 1)}))
                break;
        if (close == NULL || i == 7)
            break;
        shows = shows || i >= 4;   /* the address and ports are never "" */
        p = close + 1;
    }
    if (p < end || !shows) {
        *why = "template format is invalid or contains unknown variables";
        return GOBLIN_EINVAL;
    }
    return copy_as_given(v, norm, cap);
}

int goblin__sparse_hostname(struct goblin_slice v, char *norm, size_t cap,
                            const char **why)
{
    const unsigned char *p = v.ptr;

    for (size_t i = 0; i < v.len; i++) {
        unsigned char c = p[i];

        if (!(c == '-' || c == '.' || (c >= '0' && c <= '9') ||
              ((c | 32) >= 'a' && (c | 32) <= 'z'))) {
            *why = "Hostnames may only contain alphanumeric characters, "
                   "hyphens or dots";
            return GOBLIN_EINVAL;
        }
    }
    return copy_as_given(v, norm, cap);
}

int goblin__sparse_bind(struct goblin_slice v, char *norm, size_t cap,
                        const char **why)
{
    char w[GOBLIN__MAX_BIND + 1][64];

    if (words(v, w, GOBLIN__MAX_BIND + 1) > GOBLIN__MAX_BIND) {
        *why = "Too many bind addresses specified.";
        return GOBLIN_EINVAL;
    }
    return copy_as_given(v, norm, cap);
}

/* "seconds changes ..." pairs, Redis's checks: seconds >= 1, changes >= 0,
 * each read as strtoll does; at most GOBLIN__SAVE_POLICIES pairs. */
int goblin__sparse_save(struct goblin_slice v, char *norm, size_t cap,
                        const char **why)
{
    char text[GOBLIN_SETTING_VALUE_MAX + 1], *s, *end, *save;
    long long vals[2 * GOBLIN__SAVE_POLICIES];
    size_t len = 0;
    int n = 0;

    *why = "Invalid save parameters";
    if (v.len >= sizeof(text))
        return GOBLIN_EINVAL;
    memcpy(text, v.ptr, v.len);
    text[v.len] = '\0';
    for (s = strtok_r(text, " ", &save); s != NULL;
         s = strtok_r(NULL, " ", &save)) {
        long long x;

        if (n == 2 * GOBLIN__SAVE_POLICIES)
            return GOBLIN_EINVAL;
        errno = 0;
        x = strtoll(s, &end, 10);
        if (errno != 0 || *end != '\0' || x < (n % 2 == 0 ? 1 : 0))
            return GOBLIN_EINVAL;
        vals[n++] = x;
    }
    if (n % 2 != 0)
        return GOBLIN_EINVAL;
    norm[0] = '\0';
    for (int i = 0; i < n && len < cap; i++)
        len += (size_t)snprintf(norm + len, cap - len, "%s%lld",
                                i > 0 ? " " : "", vals[i]);
    return 0;
}

static int obuf_class_of(struct goblin_slice name)
{
    if (eq_nocase("normal", name))
        return 0;
    if (eq_nocase("slave", name) || eq_nocase("replica", name))
        return 1;
    if (eq_nocase("pubsub", name))
        return 2;
    return -1;
}

/* Groups of "class hard soft seconds"; the normal form names each class
 * as CONFIG GET does (replica is slave) with the amounts in bytes. */
int goblin__sparse_obuf(struct goblin_slice v, char *norm, size_t cap,
                        const char **why)
{
    static const char *const names[3] = {"normal", "slave", "pubsub"};
    struct goblin_slice w[12];
    int n = split(v, w, 12);
    size_t len = 0;

    if (n < 0 || n % 4 != 0) {
        *why = "Wrong number of arguments in buffer limit configuration.";
        return GOBLIN_EINVAL;
    }
    norm[0] = '\0';
    for (int i = 0; i < n; i += 4) {
        uint64_t lim[3];
        int c = obuf_class_of(w[i]);

        if (c < 0) {
            *why = "Invalid client class specified in buffer limit "
                   "configuration.";
            return GOBLIN_EINVAL;
        }
        for (int k = 0; k < 3; k++) {
            if (goblin__parse_memory(w[i + 1 + k], &lim[k]) != 0) {
                *why = "Error in hard, soft or soft_seconds setting in "
                       "buffer limit configuration.";
                return GOBLIN_EINVAL;
            }
        }
        if (len < cap)
            len += (size_t)snprintf(norm + len, cap - len,
                                    "%s%s %llu %llu %llu",
                                    i > 0 ? " " : "", names[c],
                                    (unsigned long long)lim[0],
                                    (unsigned long long)lim[1],
                                    (unsigned long long)lim[2]);
    }
    return 0;
}

/* An existing directory, as its absolute path (the library does not
 * chdir: the process's working directory is the application's). The
 * empty text is the descriptor's default, "the working directory", which
 * only the start-up value may be (cmd_persist.c refuses to set it). */
int goblin__sparse_dir(struct goblin_slice v, char *norm, size_t cap,
                       const char **why)
{
    char text[PATH_MAX], *abs;
    struct stat sb;

    *why = "No such file or directory";
    if (v.len == 0) {
        norm[0] = '\0';
        return 0;
    }
    if (v.len >= sizeof(text))
        return GOBLIN_EINVAL;
    memcpy(text, v.ptr, v.len);
    text[v.len] = '\0';
    abs = realpath(text, NULL);
    if (abs == NULL || stat(abs, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
        *why = abs == NULL ? "No such file or directory" : "Not a directory";
        free(abs);
        return GOBLIN_EINVAL;
    }
    if (strlen(abs) >= cap) {
        free(abs);
        return GOBLIN_EINVAL;
    }
    memcpy(norm, abs, strlen(abs) + 1);
    free(abs);
    return 0;
}

int goblin__sparse_dbfilename(struct goblin_slice v, char *norm, size_t cap,
                              const char **why)
{
    *why = "dbfilename can't be a path, just a filename";
    if (v.len == 0 || memchr(v.ptr, '/', v.len) != NULL ||
        memchr(v.ptr, '\0', v.len) != NULL)
        return GOBLIN_EINVAL;
    return copy_as_given(v, norm, cap);
}
