/* wait_any.c - a server waiting on several rings at once, in priority
 * order: spin over every ring's next stamp with the relax hint (the
 * producers' tail lines are read only before sleeping: reading them while
 * spinning would pull a line the client writes on every request), then (in
 * backoff) announce sleep on every ring's SQ futex word, re-check them
 * all, and sleep on all the words with one futex_waitv call.
 *
 * The no-lost-wake-up argument of wait.c holds per ring: each word is
 * announced (seq_cst) before that ring is re-checked (seq_cst), and a
 * client that publishes after the re-check sees the announcement and
 * wakes its word, which ends the whole futex_waitv.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ring_int.h"

#define CLOCK_EVERY 64          /* spins between clock reads */
#define FALLBACK_SLICE_NS 1000000 /* no futex_waitv: sleep on ring 0 */

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449     /* x86_64, arm64 and the generic table */
#endif

/* The first ring with something to peek, or -1. */
static int first_ready(goblin_ring *const *rings, unsigned n,
                       bool check_tail)
{
    for (unsigned i = 0; i < n; i++)
        if (goblin__ring_ready(rings[i], check_tail))
            return (int)i;
    return -1;
}

/* Sleeps on every ring's SQ word until one is woken or until ns pass.
 * A kernel without futex_waitv sleeps on rings[0] only, for at most
 * FALLBACK_SLICE_NS, so the others are looked at again soon. */
static void sleep_all(goblin_ring *const *rings, unsigned n, int64_t ns)
{
    struct futex_waitv w[GOBLIN_RING_WAIT_MAX];
    struct timespec ts;
    int64_t until;

    for (unsigned i = 0; i < n; i++) {
        atomic_store_explicit(rings[i]->rx.sleep_w, 1, memory_order_seq_cst);
        w[i] = (struct futex_waitv){
            .val = 1,
            .uaddr = (uint64_t)(uintptr_t)rings[i]->rx.sleep_w,
            .flags = FUTEX_32, /* shared between processes: not private */
        };
    }
    if (first_ready(rings, n, true) < 0) {
        for (unsigned i = 0; i < n; i++)
            rings[i]->stats.sleeps++;
        until = goblin__ring_now_ns() + ns;
        ts = (struct timespec){until / 1000000000, until % 1000000000};
        if (syscall(SYS_futex_waitv, w, n, 0, &ts, CLOCK_MONOTONIC) < 0 &&
            errno == ENOSYS) {
            ns = ns < FALLBACK_SLICE_NS ? ns : FALLBACK_SLICE_NS;
            ts = (struct timespec){ns / 1000000000, ns % 1000000000};
            syscall(SYS_futex, (uint32_t *)rings[0]->rx.sleep_w, FUTEX_WAIT,
                    1, &ts, NULL, 0);
        }
    }
    for (unsigned i = 0; i < n; i++)
        atomic_store_explicit(rings[i]->rx.sleep_w, 0, memory_order_relaxed);
}

int goblin_ring_wait_any(goblin_ring *const *rings, unsigned n,
                         int64_t timeout_ns)
{                                                 /* server side */
    int64_t start, now, deadline, slice;
    unsigned spins = 0;
    int i;

    if (n == 0 || n > GOBLIN_RING_WAIT_MAX || rings == NULL)
        return GOBLIN_EINVAL;
    for (unsigned k = 0; k < n; k++)
        if (rings[k] == NULL || !rings[k]->server)
            return GOBLIN_EINVAL;
    if ((i = first_ready(rings, n, timeout_ns == 0)) >= 0)
        return i;
    if (timeout_ns == 0)
        return GOBLIN_ETIMEDOUT;
    start = goblin__ring_now_ns();
    deadline = timeout_ns < 0 ? -1 : start + timeout_ns;
    for (;;) {
        if ((i = first_ready(rings, n, false)) >= 0)
            return i;
        goblin__ring_relax();
        if (++spins % CLOCK_EVERY != 0)
            continue;
        now = goblin__ring_now_ns();
        if (deadline >= 0 && now >= deadline)
            return GOBLIN_ETIMEDOUT;
        if (rings[0]->cfg.idle != GOBLIN_RING_IDLE_BACKOFF ||
            now - start < (int64_t)rings[0]->cfg.spin_ns)
            continue;
        slice = rings[0]->sleep_slice_ns;
        if (deadline >= 0 && deadline - now < slice)
            slice = deadline - now;
        sleep_all(rings, n, slice);
    }
}
