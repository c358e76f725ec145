/* geohash.c - Redis's geohash (geohash.h): bit interleaving, encoding
 * and decoding, neighbour cells, the step a radius calls for, the cells
 * a search covers, and the haversine distance, each as Redis 7.0 computes
 * it so scores, coordinates and distances print identically.
 */
#include <math.h>

#include "geohash.h"

#define D_R (M_PI / 180.0)
#define EARTH_RADIUS_IN_METERS 6372797.560856
#define MERCATOR_MAX 20037726.37

static inline double deg_rad(double ang)
{
    return ang * D_R;
}

static inline double rad_deg(double ang)
{
    return ang / D_R;
}

static uint64_t interleave64(uint32_t xlo, uint32_t ylo)
{
    static const uint64_t B[] = {0x5555555555555555ull, 0x3333333333333333ull,
                                 0x0F0F0F0F0F0F0F0Full, 0x00FF00FF00FF00FFull,
                                 0x0000FFFF0000FFFFull};
    static const unsigned S[] = {1, 2, 4, 8, 16};
    uint64_t x = xlo, y = ylo;

    for (int i = 4; i >= 0; i--) {
        x = (x | (x << S[i])) & B[i];
        y = (y | (y << S[i])) & B[i];
    }
    return x | (y << 1);
}

static uint64_t deinterleave64(uint64_t interleaved)
{
    static const uint64_t B[] = {0x5555555555555555ull, 0x3333333333333333ull,
                                 0x0F0F0F0F0F0F0F0Full, 0x00FF00FF00FF00FFull,
                                 0x0000FFFF0000FFFFull, 0x00000000FFFFFFFFull};
    static const unsigned S[] = {0, 1, 2, 4, 8, 16};
    uint64_t x = interleaved, y = interleaved >> 1;

    for (int i = 0; i < 6; i++) {
        x = (x | (x >> S[i])) & B[i];
        y = (y | (y >> S[i])) & B[i];
    }
    return x | (y << 32);
}

static const struct goblin__geo_range lon_range = {GOBLIN__GEO_LONG_MIN,
                                                   GOBLIN__GEO_LONG_MAX};
static const struct goblin__geo_range lat_range = {GOBLIN__GEO_LAT_MIN,
                                                   GOBLIN__GEO_LAT_MAX};

bool goblin__geohash_encode(const struct goblin__geo_range *lon,
                            const struct goblin__geo_range *lat,
                            double longitude, double latitude, uint8_t step,
                            struct goblin__geohash *out)
{
    double lat_off, lon_off;

    if (step > 32 || step == 0)
        return false;
    if (longitude > GOBLIN__GEO_LONG_MAX || longitude < GOBLIN__GEO_LONG_MIN ||
        latitude > GOBLIN__GEO_LAT_MAX || latitude < GOBLIN__GEO_LAT_MIN)
        return false;
    out->bits = 0;
    out->step = step;
    if (latitude < lat->min || latitude > lat->max || longitude < lon->min ||
        longitude > lon->max)
        return false;
    lat_off = (latitude - lat->min) / (lat->max - lat->min);
    lon_off = (longitude - lon->min) / (lon->max - lon->min);
    lat_off *= (double)(1ull << step);
    lon_off *= (double)(1ull << step);
    out->bits = interleave64((uint32_t)lat_off, (uint32_t)lon_off);
    return true;
}

static void decode(struct goblin__geohash h, struct goblin__geo_area *a)
{
    uint64_t sep = deinterleave64(h.bits);
    double lat_scale = lat_range.max - lat_range.min;
    double lon_scale = lon_range.max - lon_range.min;
    uint32_t ilato = (uint32_t)sep, ilono = (uint32_t)(sep >> 32);
    double cells = (double)(1ull << h.step);

    a->hash = h;
    a->lat.min = lat_range.min + (ilato * 1.0 / cells) * lat_scale;
    a->lat.max = lat_range.min + ((ilato + 1) * 1.0 / cells) * lat_scale;
    a->lon.min = lon_range.min + (ilono * 1.0 / cells) * lon_scale;
    a->lon.max = lon_range.min + ((ilono + 1) * 1.0 / cells) * lon_scale;
}

static uint64_t align52(struct goblin__geohash h)
{
    return h.bits << (52 - h.step * 2);
}

uint64_t goblin__geohash_score(double longitude, double latitude)
{
    struct goblin__geohash h = {0, GOBLIN__GEO_STEP_MAX};

    goblin__geohash_encode(&lon_range, &lat_range, longitude, latitude,
                           GOBLIN__GEO_STEP_MAX, &h);
    return align52(h);
}

/* (uint64_t)score as gcc converts it on x86-64 (Redis casts any zset
 * score so): truncation below 2^64, 0 at or above it, two's complement
 * for negatives, 2^63 at or below -2^63. */
static uint64_t score_bits(double score)
{
    if (score >= 0 && score < 18446744073709551616.0)
        return (uint64_t)score;
    if (score < 0 && score > -9223372036854775808.0)
        return (uint64_t)(int64_t)score;
    return score < 0 ? 0x8000000000000000ull : 0;
}

void goblin__geohash_decode_score(double score, double xy[2])
{
    struct goblin__geohash h = {score_bits(score), GOBLIN__GEO_STEP_MAX};
    struct goblin__geo_area a;

    decode(h, &a);
    xy[0] = (a.lon.min + a.lon.max) / 2;
    if (xy[0] > GOBLIN__GEO_LONG_MAX)
        xy[0] = GOBLIN__GEO_LONG_MAX;
    if (xy[0] < GOBLIN__GEO_LONG_MIN)
        xy[0] = GOBLIN__GEO_LONG_MIN;
    xy[1] = (a.lat.min + a.lat.max) / 2;
    if (xy[1] > GOBLIN__GEO_LAT_MAX)
        xy[1] = GOBLIN__GEO_LAT_MAX;
    if (xy[1] < GOBLIN__GEO_LAT_MIN)
        xy[1] = GOBLIN__GEO_LAT_MIN;
}

void goblin__geohash_text(double score, char out[11])
{
    static const char alphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
    static const struct goblin__geo_range lon = {-180, 180}, lat = {-90, 90};
    struct goblin__geohash h = {0, 26};
    double xy[2];

    /* Stored positions use latitudes up to 85.05; the standard geohash
     * spans -90..90, so the position is decoded and encoded again. */
    goblin__geohash_decode_score(score, xy);
    goblin__geohash_encode(&lon, &lat, xy[0], xy[1], 26, &h);
    for (int i = 0; i < 11; i++) {
        int idx = i == 10 ? 0 : (int)((h.bits >> (52 - (i + 1) * 5)) & 0x1f);

        out[i] = alphabet[idx];
    }
}

static void move_x(struct goblin__geohash *h, int d)
{
    uint64_t x = h->bits & 0xaaaaaaaaaaaaaaaaull;
    uint64_t y = h->bits & 0x5555555555555555ull;
    uint64_t zz = 0x5555555555555555ull >> (64 - h->step * 2);

    if (d == 0)
        return;
    if (d > 0) {
        x = x + (zz + 1);
    } else {
        x = x | zz;
        x = x - (zz + 1);
    }
    x &= (0xaaaaaaaaaaaaaaaaull >> (64 - h->step * 2));
    h->bits = x | y;
}

static void move_y(struct goblin__geohash *h, int d)
{
    uint64_t x = h->bits & 0xaaaaaaaaaaaaaaaaull;
    uint64_t y = h->bits & 0x5555555555555555ull;
    uint64_t zz = 0xaaaaaaaaaaaaaaaaull >> (64 - h->step * 2);

    if (d == 0)
        return;
    if (d > 0) {
        y = y + (zz + 1);
    } else {
        y = y | zz;
        y = y - (zz + 1);
    }
    y &= (0x5555555555555555ull >> (64 - h->step * 2));
    h->bits = x | y;
}

double goblin__geo_distance(double lon1d, double lat1d, double lon2d,
                            double lat2d)
{
    double lat1r = deg_rad(lat1d), lon1r = deg_rad(lon1d);
    double lat2r = deg_rad(lat2d), lon2r = deg_rad(lon2d);
    double u = sin((lat2r - lat1r) / 2), v = sin((lon2r - lon1r) / 2);

    return 2.0 * EARTH_RADIUS_IN_METERS *
           asin(sqrt(u * u + cos(lat1r) * cos(lat2r) * v * v));
}

bool goblin__geo_within(const struct goblin__geo_shape *s, double lon,
                        double lat, double *dist)
{
    if (!s->box) {
        *dist = goblin__geo_distance(s->xy[0], s->xy[1], lon, lat);
        return *dist <= s->radius * s->conversion;
    }
    if (goblin__geo_distance(lon, lat, s->xy[0], lat) >
            s->width * s->conversion / 2 ||
        goblin__geo_distance(lon, lat, lon, s->xy[1]) >
            s->height * s->conversion / 2)
        return false;
    *dist = goblin__geo_distance(s->xy[0], s->xy[1], lon, lat);
    return true;
}

static int steps_for(double range_meters, double lat)
{
    int step = 1;

    if (range_meters == 0)
        return 26;
    while (range_meters < MERCATOR_MAX) {
        range_meters *= 2;
        step++;
    }
    step -= 2; /* the range fits in most base cases */
    /* Cells get narrower towards the poles. */
    if (lat > 66 || lat < -66) {
        step--;
        if (lat > 80 || lat < -80)
            step--;
    }
    return step < 1 ? 1 : step > 26 ? 26 : step;
}

static void bounding_box(struct goblin__geo_shape *s)
{
    double lon = s->xy[0], lat = s->xy[1];
    double height = s->conversion * (s->box ? s->height / 2 : s->radius);
    double width = s->conversion * (s->box ? s->width / 2 : s->radius);
    double lat_delta = rad_deg(height / EARTH_RADIUS_IN_METERS);
    double top = rad_deg(width / EARTH_RADIUS_IN_METERS /
                         cos(deg_rad(lat + lat_delta)));
    double bottom = rad_deg(width / EARTH_RADIUS_IN_METERS /
                            cos(deg_rad(lat - lat_delta)));
    bool south = lat < 0;

    /* The hemispheres are mirrored: the wider edge is the one nearer
     * the pole. */
    s->bounds[0] = south ? lon - bottom : lon - top;
    s->bounds[2] = south ? lon + bottom : lon + top;
    s->bounds[1] = lat - lat_delta;
    s->bounds[3] = lat + lat_delta;
}

/* The cell at step and its neighbours, in geohashNeighbors' layout:
 * n[0] the cell, then N, S, E, W, NE, NW, SE, SW. */
static void cells_at(const struct goblin__geo_shape *s, int step,
                     struct goblin__geohash n[9])
{
    static const int dx[9] = {0, 0, 0, 1, -1, 1, -1, 1, -1};
    static const int dy[9] = {0, 1, -1, 0, 0, 1, 1, -1, -1};

    n[0].bits = 0;
    n[0].step = (uint8_t)step;
    goblin__geohash_encode(&lon_range, &lat_range, s->xy[0], s->xy[1],
                           (uint8_t)step, &n[0]);
    for (int i = 1; i < 9; i++) {
        n[i] = n[0];
        move_x(&n[i], dx[i]);
        move_y(&n[i], dy[i]);
    }
}

void goblin__geo_ranges(struct goblin__geo_shape *s, double min[9],
                        double max[9])
{
    struct goblin__geohash n[9], zero = {0, 0};
    struct goblin__geo_area area, a;
    double radius;
    int steps, last = 0;
    bool decrease = false;

    bounding_box(s);
    radius = s->box ? sqrt((s->width / 2) * (s->width / 2) +
                           (s->height / 2) * (s->height / 2))
                    : s->radius;
    radius *= s->conversion;
    steps = steps_for(radius, s->xy[1]);
    cells_at(s, steps, n);
    /* Near a cell's edge the step may be too coarse for a neighbour to
     * cover the whole shape: one step coarser then. */
    decode(n[1], &a);
    decrease |= a.lat.max < s->bounds[3];
    decode(n[2], &a);
    decrease |= a.lat.min > s->bounds[1];
    decode(n[3], &a);
    decrease |= a.lon.max < s->bounds[2];
    decode(n[4], &a);
    decrease |= a.lon.min > s->bounds[0];
    if (steps > 1 && decrease)
        cells_at(s, --steps, n);
    decode(n[0], &area);
    /* Neighbours wholly outside the shape's bounds are left out. */
    if (steps >= 2) {
        if (area.lat.min < s->bounds[1])
            n[2] = n[8] = n[7] = zero;
        if (area.lat.max > s->bounds[3])
            n[1] = n[5] = n[6] = zero;
        if (area.lon.min < s->bounds[0])
            n[4] = n[8] = n[6] = zero;
        if (area.lon.max > s->bounds[2])
            n[3] = n[7] = n[5] = zero;
    }
    for (int i = 0; i < 9; i++) {
        struct goblin__geohash up = n[i];

        min[i] = max[i] = 0;
        if (n[i].bits == 0 && n[i].step == 0)
            continue;
        /* Huge radii make neighbours coincide: each range once. */
        if (last && n[i].bits == n[last].bits && n[i].step == n[last].step)
            continue;
        up.bits++;
        min[i] = (double)align52(n[i]);
        max[i] = (double)align52(up);
        last = i;
    }
}
