/* pqsort.c - a partial quicksort: sorts only what lands in a range of
 * positions, the rest in no particular order. It is Redis's pqsort.c
 * (from NetBSD's qsort, by Salvatore Sanfilippo), step for step, so that
 * GEOSEARCH ... COUNT n orders members at equal distances as Redis does.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pqsort.h"

typedef int (*cmp_fn)(const void *, const void *);

static void swap_bytes(char *a, char *b, size_t n)
{
    char t[64];

    while (n > 0) {
        size_t k = n < sizeof(t) ? n : sizeof(t);

        memcpy(t, a, k);
        memcpy(a, b, k);
        memcpy(b, t, k);
        a += k;
        b += k;
        n -= k;
    }
}

static char *med3(char *a, char *b, char *c, cmp_fn cmp)
{
    return cmp(a, b) < 0 ? (cmp(b, c) < 0 ? b : (cmp(a, c) < 0 ? c : a))
                         : (cmp(b, c) > 0 ? b : (cmp(a, c) < 0 ? a : c));
}

static void pq(char *a, size_t n, size_t es, cmp_fn cmp, char *lrange,
               char *rrange)
{
    char *pa, *pb, *pc, *pd, *pl, *pm, *pn;
    size_t d, r;
    int c;

loop:
    if (n < 7) {
        for (pm = a + es; pm < a + n * es; pm += es)
            for (pl = pm; pl > a && cmp(pl - es, pl) > 0; pl -= es)
                swap_bytes(pl, pl - es, es);
        return;
    }
    pm = a + (n / 2) * es;
    if (n > 7) {
        pl = a;
        pn = a + (n - 1) * es;
        if (n > 40) {
            d = (n / 8) * es;
            pl = med3(pl, pl + d, pl + 2 * d, cmp);
            pm = med3(pm - d, pm, pm + d, cmp);
            pn = med3(pn - 2 * d, pn - d, pn, cmp);
        }
        pm = med3(pl, pm, pn, cmp);
    }
    swap_bytes(a, pm, es);
    pa = pb = a + es;
    pc = pd = a + (n - 1) * es;
    for (;;) {
        while (pb <= pc && (c = cmp(pb, a)) <= 0) {
            if (c == 0) {
                swap_bytes(pa, pb, es);
                pa += es;
            }
            pb += es;
        }
        while (pb <= pc && (c = cmp(pc, a)) >= 0) {
            if (c == 0) {
                swap_bytes(pc, pd, es);
                pd -= es;
            }
            pc -= es;
        }
        if (pb > pc)
            break;
        swap_bytes(pb, pc, es);
        pb += es;
        pc -= es;
    }
    pn = a + n * es;
    r = (size_t)(pa - a) < (size_t)(pb - pa) ? (size_t)(pa - a)
                                              : (size_t)(pb - pa);
    if (r > 0)
        swap_bytes(a, pb - r, r);
    r = (size_t)(pd - pc) < (size_t)(pn - pd) - es ? (size_t)(pd - pc)
                                                   : (size_t)(pn - pd) - es;
    if (r > 0)
        swap_bytes(pb, pn - r, r);
    if ((r = (size_t)(pb - pa)) > es) {
        char *l = a, *rr = a + r - 1;

        if (!((lrange < l && rrange < l) || (lrange > rr && rrange > rr)))
            pq(a, r / es, es, cmp, lrange, rrange);
    }
    if ((r = (size_t)(pd - pc)) > es) {
        char *l, *rr;

        a = pn - r;
        n = r / es;
        l = a;
        rr = a + r - 1;
        if (!((lrange < l && rrange < l) || (lrange > rr && rrange > rr)))
            goto loop;
    }
}

void goblin__pqsort(void *a, size_t n, size_t es,
                    int (*cmp)(const void *, const void *), size_t lrange,
                    size_t rrange)
{
    char *base = a;

    pq(base, n, es, cmp, base + lrange * es, base + (rrange + 1) * es - 1);
}
