/* geo.h - the store side of the geo commands: positions held as the
 * 52-bit geohash scores of a sorted set (geohash.h), a search collecting
 * the members inside a shape, and storing a search's result.
 */
#ifndef GOBLIN_GEO_H
#define GOBLIN_GEO_H

#include <stdbool.h>
#include <stddef.h>

#include "geohash.h"
#include "goblin/common.h"

struct goblin__geo_point {
    struct goblin_slice member; /* borrowed until the next write */
    double score;
    double lon, lat;
    double dist; /* from the centre, in metres */
};

struct goblin__geo_points {
    struct goblin__geo_point *v;
    size_t n, cap;
};

/* The members of key inside shape, in Redis's order (by cell, then by
 * score), stopping after limit (0: all) as GEOSEARCH ANY does. Returns 1,
 * 0 when key is absent, GOBLIN_EWRONGTYPE or GOBLIN_ENOMEM. */
int goblin__geo_search(goblin_store *st, struct goblin_slice key,
                       struct goblin__geo_shape *shape, size_t limit,
                       struct goblin__geo_points *out);
void goblin__geo_points_free(goblin_store *st, struct goblin__geo_points *p);

/* GEOSEARCHSTORE / GEORADIUS STORE: dst becomes a sorted set of the n
 * points, scored by their geohash or (storedist) their distance divided
 * by conversion; n == 0 deletes dst. Returns 0 or GOBLIN_ENOMEM. */
int goblin__geo_store(goblin_store *st, struct goblin_slice dst,
                      const struct goblin__geo_point *p, size_t n,
                      bool storedist, double conversion);

#endif
