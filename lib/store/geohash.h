/* geohash.h - Redis's 52-bit geohash and its distances (geohash.c and
 * geohash_helper.c of Redis 7.0), inside libgoblin.
 *
 * A position is longitude and latitude interleaved, 26 bits each, over
 * [-180, 180] x [-85.05112878, 85.05112878] (the Web Mercator square);
 * that 52-bit number is the member's score in the sorted set, exactly
 * representable in a double. Distances are the haversine formula on
 * Redis's earth radius, 6372797.560856 m. A search covers its shape with
 * the geohash cell of a step fitted to the radius and its eight
 * neighbours, each a score range, then checks each candidate exactly.
 */
#ifndef GOBLIN_GEOHASH_H
#define GOBLIN_GEOHASH_H

#include <stdbool.h>
#include <stdint.h>

#define GOBLIN__GEO_STEP_MAX 26
#define GOBLIN__GEO_LAT_MIN (-85.05112878)
#define GOBLIN__GEO_LAT_MAX 85.05112878
#define GOBLIN__GEO_LONG_MIN (-180.0)
#define GOBLIN__GEO_LONG_MAX 180.0

struct goblin__geohash {
    uint64_t bits;
    uint8_t step;
};

struct goblin__geo_range {
    double min, max;
};

struct goblin__geo_area {
    struct goblin__geohash hash;
    struct goblin__geo_range lon, lat;
};

/* A search shape: a circle of radius, or a box of width x height, in
 * units of conversion metres, centred at xy (longitude, latitude). */
struct goblin__geo_shape {
    bool box;
    double xy[2];
    double conversion;
    double radius;
    double width, height;
    double bounds[4]; /* min lon, min lat, max lon, max lat */
};

/* geohashEncode over the given ranges; false outside them. */
bool goblin__geohash_encode(const struct goblin__geo_range *lon,
                            const struct goblin__geo_range *lat,
                            double longitude, double latitude, uint8_t step,
                            struct goblin__geohash *out);
/* The 52-bit score of a position (GEOADD). */
uint64_t goblin__geohash_score(double longitude, double latitude);
/* The centre of a score's cell, clamped to the ranges (GEOPOS). */
void goblin__geohash_decode_score(double score, double xy[2]);
/* The 11-character standard geohash of a score (GEOHASH). */
void goblin__geohash_text(double score, char out[11]);

/* Distance in metres between two positions. */
double goblin__geo_distance(double lon1, double lat1, double lon2,
                            double lat2);
/* Whether (lon, lat) is inside shape; *dist its distance from the
 * centre, in metres. */
bool goblin__geo_within(const struct goblin__geo_shape *shape, double lon,
                        double lat, double *dist);

/* The nine score ranges [min, max) to search for shape, in Redis's order
 * (centre, N, S, E, W, NE, NW, SE, SW); an unused one has min == max. */
void goblin__geo_ranges(struct goblin__geo_shape *shape, double min[9],
                        double max[9]);

#endif
