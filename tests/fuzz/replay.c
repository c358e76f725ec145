/* replay.c - main() for a fuzz target outside libFuzzer: runs every file
 * named on the command line, and every file in every directory named, once
 * through LLVMFuzzerTestOneInput. The normal test suite uses it to replay
 * each target's seed corpus and its regressions (tests/fuzz/corpus/<t>/,
 * tests/fuzz/regress/<t>/) with the normal compiler and sanitizers. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    unsigned char *p = NULL;
    size_t len = 0, cap = 0, n;

    if (f == NULL) {
        perror(path);
        return -1;
    }
    do {
        if (len == cap) {
            cap = cap ? cap * 2 : 4096;
            p = realloc(p, cap);
            if (p == NULL)
                abort();
        }
        n = fread(p + len, 1, cap - len, f);
        len += n;
    } while (n > 0);
    fclose(f);
    LLVMFuzzerTestOneInput(p, len);
    free(p);
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs the files of dir in name order, so a failure is reproducible. */
static int run_dir(const char *dir, size_t *count)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;

    if (d == NULL) {
        perror(dir);
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            names = realloc(names, cap * sizeof(*names));
            if (names == NULL)
                abort();
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof(*names), cmp_names);
    for (size_t i = 0; i < n; i++) {
        char path[4096];

        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        if (rc == 0 && run_file(path) != 0)
            rc = -1;
        (*count)++;
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    size_t count = 0;

    for (int i = 1; i < argc; i++) {
        struct stat sb;

        if (stat(argv[i], &sb) != 0) {
            perror(argv[i]);
            return 1;
        }
        if (S_ISDIR(sb.st_mode) ? run_dir(argv[i], &count) != 0
                                : (count++, run_file(argv[i]) != 0))
            return 1;
    }
    printf("replayed %zu inputs\n", count);
    return 0;
}
