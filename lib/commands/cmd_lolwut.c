/* cmd_lolwut.c - LOLWUT [VERSION v] [args...], as Redis 7.0 answers it:
 * without VERSION (or with a version other than 5 and 6) the line
 * "Redis ver. 7.0.15"; VERSION 5 draws Georg Nees's Schotter in braille
 * dots (LOLWUT 5 [columns] [squares per row] [squares per column],
 * defaults 66 8 12); VERSION 6 a city skyline in the terminal's four
 * grays (LOLWUT 6 [columns] [rows], defaults 80 20). The drawings use
 * the store's random numbers, so like Redis's they differ between calls;
 * their sizes, characters, limits and closing lines are Redis's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "goblin/buf.h"
#include "handlers.h"
#include "respond.h"
#include "engine/session.h"
#include "store/store.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

struct canvas {
    int w, h;
    uint8_t *px;
};

static int canvas_init(goblin__exec *x, struct canvas *c, int w, int h,
                       int color)
{
    c->w = w;
    c->h = h;
    c->px = goblin__alloc(x->eng->st, (size_t)w * (size_t)h);
    if (c->px == NULL)
        return GOBLIN_ENOMEM;
    memset(c->px, color, (size_t)w * (size_t)h);
    return 0;
}

static void canvas_free(goblin__exec *x, struct canvas *c)
{
    goblin__free(x->eng->st, c->px, (size_t)c->w * (size_t)c->h);
}

static void put_px(struct canvas *c, int px, int py, int color)
{
    if (px >= 0 && px < c->w && py >= 0 && py < c->h)
        c->px[px + py * c->w] = (uint8_t)color;
}

static int get_px(const struct canvas *c, int px, int py)
{
    if (px < 0 || px >= c->w || py < 0 || py >= c->h)
        return 0;
    return c->px[px + py * c->w];
}

/* A line by Bresenham's method. */
static void line(struct canvas *c, int x1, int y1, int x2, int y2)
{
    int dx = abs(x2 - x1), dy = abs(y2 - y1);
    int sx = x1 < x2 ? 1 : -1, sy = y1 < y2 ? 1 : -1, err = dx - dy;

    for (;;) {
        int e2;

        put_px(c, x1, y1, 1);
        if (x1 == x2 && y1 == y2)
            return;
        e2 = err * 2;
        if (e2 > -dy) {
            err -= dy;
            x1 += sx;
        }
        if (e2 < dx) {
            err += dx;
            y1 += sy;
        }
    }
}

/* A square of side size centred on (cx, cy), turned by angle: its
 * corners on the circle around it, a quarter turn apart. */
static void square(struct canvas *c, int cx, int cy, float size, float angle)
{
    int px[4], py[4];
    float k = (float)M_PI / 4 + angle;

    size = roundf(size / 1.4142135623f);
    for (int j = 0; j < 4; j++) {
        px[j] = (int)lroundf(sinf(k) * size + (float)cx);
        py[j] = (int)lroundf(cosf(k) * size + (float)cy);
        k += (float)M_PI / 2;
    }
    for (int j = 0; j < 4; j++)
        line(c, px[j], py[j], px[(j + 1) % 4], py[(j + 1) % 4]);
}

/* A uniform number in [0, 1] and a coin. */
static float unit(goblin__exec *x)
{
    return (float)(goblin__rand64(x->st) >> 40) / (float)((1u << 24) - 1);
}

static int rnd(goblin__exec *x, int n)
{
    return (int)(goblin__rand64(x->st) % (uint64_t)n);
}

static int schotter(goblin__exec *x, struct canvas *c, int cols, int per_row,
                    int per_col)
{
    int width = cols * 2, pad = width > 4 ? 2 : 0, height;
    float side = (float)(width - pad * 2) / (float)per_row;

    height = (int)(side * (float)per_col) + pad * 2;
    if (canvas_init(x, c, width, height, 0) != 0)
        return GOBLIN_ENOMEM;
    for (int sqy = 0; sqy < per_col; sqy++) {
        for (int sqx = 0; sqx < per_row; sqx++) {
            int cx = (int)((float)sqx * side + side / 2 + (float)pad);
            int cy = (int)((float)sqy * side + side / 2 + (float)pad);
            float angle = 0;

            /* Lower rows drift and turn more. */
            if (sqy > 1) {
                float r1 = unit(x) / (float)per_col * (float)sqy;
                float r2 = unit(x) / (float)per_col * (float)sqy;
                float r3 = unit(x) / (float)per_col * (float)sqy;

                if (rnd(x, 2))
                    r1 = -r1;
                if (rnd(x, 2))
                    r2 = -r2;
                if (rnd(x, 2))
                    r3 = -r3;
                angle = r1;
                cx += (int)(r2 * side / 3);
                cy += (int)(r3 * side / 3);
            }
            square(c, cx, cy, side, angle);
        }
    }
    return 0;
}

/* Braille: each character is 2x4 dots, bit i set for the dot
 *   0 3
 *   1 4
 *   2 5
 *   6 7 */
static void render_braille(const struct canvas *c, struct goblin_buf *out)
{
    static const int dx[8] = {0, 0, 0, 1, 1, 1, 0, 1};
    static const int dy[8] = {0, 1, 2, 0, 1, 2, 3, 3};

    for (int y = 0; y < c->h; y += 4) {
        for (int xx = 0; xx < c->w; xx += 2) {
            int code = 0x2800;
            char u[3];

            for (int b = 0; b < 8; b++)
                if (get_px(c, xx + dx[b], y + dy[b]))
                    code |= 1 << b;
            u[0] = (char)(0xE0 | (code >> 12));
            u[1] = (char)(0x80 | ((code >> 6) & 0x3F));
            u[2] = (char)(0x80 | (code & 0x3F));
            goblin_buf_append(out, u, 3);
        }
        if (y != c->h - 1)
            goblin_buf_append(out, "\n", 1);
    }
}

struct tower {
    int xoff, width, height, windows, color;
};

/* One skyscraper standing on the bottom row; windows two pixels wide and
 * one tall, in one of the two grays that is not the wall's. */
static void tower(goblin__exec *x, struct canvas *c, const struct tower *t)
{
    int top = c->h - 1, end = top - t->height + 1;

    for (int y = top; y >= end; y--) {
        for (int px = t->xoff; px < t->xoff + t->width; px++) {
            int color = t->color;

            if (y == end && (px <= t->xoff + 1 || px >= t->xoff + t->width - 2))
                continue; /* the roof is four pixels narrower */
            if (t->windows && px > t->xoff + 1 &&
                px < t->xoff + t->width - 2 && y > end + 1 && y < top - 1) {
                int relx = px - (t->xoff + 1), rely = y - (end + 1);

                if ((relx / 2) % 2 && rely % 2) {
                    do
                        color = 1 + rnd(x, 2);
                    while (color == t->color);
                    if (relx % 2)
                        color = get_px(c, px - 1, y);
                }
            }
            put_px(c, px, y, color);
        }
    }
}

static void skyline(goblin__exec *x, struct canvas *c)
{
    struct tower t;

    /* Two rows of plain towers behind, the lighter ones at the back. */
    for (int color = 2; color >= 1; color--) {
        t.color = color;
        for (int off = -10; off < c->w;) {
            off += rnd(x, 8);
            t.xoff = off;
            t.width = 10 + rnd(x, 9);
            t.height = c->h / 2 + (color == 2 ? rnd(x, c->h) / 2
                                              : rnd(x, c->h) / 3);
            t.windows = 0;
            tower(x, c, &t);
            off += color == 2 ? t.width / 2 : t.width + 1;
        }
    }
    t.color = 0;
    for (int off = -10; off < c->w;) {
        off += rnd(x, 8);
        t.xoff = off;
        t.width = 5 + rnd(x, 14);
        if (t.width % 4)
            t.width += t.width % 3;
        t.height = c->h / 3 + rnd(x, c->h) / 2;
        t.windows = 1;
        tower(x, c, &t);
        off += t.width + 5;
    }
}

static void render_grays(const struct canvas *c, struct goblin_buf *out)
{
    static const char *const esc[4] = {"0;30;40m", "0;90;100m", "0;37;47m",
                                       "0;97;107m"};
    char cell[32];

    for (int y = 0; y < c->h; y++) {
        for (int px = 0; px < c->w; px++) {
            int color = get_px(c, px, y);
            int n = snprintf(cell, sizeof(cell), "\033[%s \033[0m",
                             esc[color < 4 ? color : 0]);

            goblin_buf_append(out, cell, (size_t)n);
        }
        if (y != c->h - 1)
            goblin_buf_append(out, "\n", 1);
    }
}

/* argv[i] as a long, kept within [lo, hi] (Redis clamps, it does not
 * refuse). */
static bool arg_clamped(goblin__exec *x, int argc,
                        const struct goblin_slice *argv, int i, long lo,
                        long hi, long *v)
{
    int64_t n;

    if (i >= argc)
        return true;
    if (!goblin__arg_int64(x, argv[i], &n, NULL))
        return false;
    *v = n < lo ? lo : n > hi ? hi : (long)n;
    return true;
}

static void reply_buf(goblin__exec *x, struct goblin_buf *b, const char *tail)
{
    goblin_buf_append(b, tail, strlen(tail));
    goblin_buf_append(b, GOBLIN__REDIS_VERSION "\n",
                      sizeof(GOBLIN__REDIS_VERSION));
    if (b->failed)
        goblin__reply_code(x, GOBLIN_ENOMEM);
    else
        goblin__reply_verbatim(x, (const char *)b->data, b->len);
    goblin_buf_free(b);
}

static void lolwut5(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    long cols = 66, per_row = 8, per_col = 12;
    struct canvas c;
    struct goblin_buf b = {NULL, 0, 0, &x->eng->acct, false};

    if (!arg_clamped(x, argc, argv, 1, 1, 1000, &cols) ||
        !arg_clamped(x, argc, argv, 2, 1, 200, &per_row) ||
        !arg_clamped(x, argc, argv, 3, 1, 200, &per_col))
        return;
    if (schotter(x, &c, (int)cols, (int)per_row, (int)per_col) != 0) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    render_braille(&c, &b);
    canvas_free(x, &c);
    reply_buf(x, &b, "\nGeorg Nees - schotter, plotter on paper, 1968. "
                     "Redis ver. ");
}

static void lolwut6(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    long cols = 80, rows = 20;
    struct canvas c;
    struct goblin_buf b = {NULL, 0, 0, &x->eng->acct, false};

    if (!arg_clamped(x, argc, argv, 1, 1, 1000, &cols) ||
        !arg_clamped(x, argc, argv, 2, 1, 1000, &rows))
        return;
    if (canvas_init(x, &c, (int)cols, (int)rows, 3) != 0) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    skyline(x, &c);
    render_grays(&c, &b);
    canvas_free(x, &c);
    reply_buf(x, &b, "\nDedicated to the 8 bit game developers of past and "
                     "present.\nOriginal 8 bit image from Plaguemon by "
                     "hikikomori. Redis ver. ");
}

void goblin__cmd_lolwut(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    int64_t v;

    if (argc >= 3 && goblin__arg_is(argv[1], "version")) {
        if (!goblin__arg_int64(x, argv[2], &v, NULL))
            return;
        /* Redis prints the version as "%u.0.0" and looks at its start. */
        if ((uint32_t)v == 5) {
            lolwut5(x, argc - 2, argv + 2);
            return;
        }
        if ((uint32_t)v == 6) {
            lolwut6(x, argc - 2, argv + 2);
            return;
        }
    }
    goblin__reply_verbatim(x, "Redis ver. " GOBLIN__REDIS_VERSION "\n",
                           sizeof("Redis ver. " GOBLIN__REDIS_VERSION));
}
