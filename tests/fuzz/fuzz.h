/* fuzz.h - what every fuzz target shares: the libFuzzer entry point and a
 * check that stops the run loudly. A target is one file fuzz_<name>.c; it
 * is linked with libFuzzer in the fuzz build (-Dfuzz=enabled, clang) and
 * with replay.c in every build, so `meson test` replays its corpus and
 * regressions through the same entry point. */
#ifndef GOBLIN_FUZZ_H
#define GOBLIN_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An invariant the code under test broke: report and abort, which both
 * libFuzzer and the replay test count as a failure. */
#define FUZZ_CHECK(cond)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,        \
                    __LINE__, #cond);                                      \
            abort();                                                       \
        }                                                                  \
    } while (0)

#endif
