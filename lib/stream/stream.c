/* stream.c - the write stream's consumers, its pending unit and its
 * framing (goblin/stream.h, propagate.h).
 *
 * A unit's ops are kept with their database; framing happens once per
 * class at delivery, because each class has its own selected database:
 * SELECT before an op whose database is not the class's, and MULTI ...
 * EXEC around a unit of more than one op, its SELECT (for the first op's
 * database) before the MULTI, as Redis 7.0's propagatePendingCommands.
 */
#include <stdio.h>
#include <string.h>

#include "propagate.h"
#include "store/store.h"

static struct goblin__stream *stream_get(goblin_engine *eng)
{
    struct goblin__stream *s = eng->stream;

    if (s != NULL)
        return s;
    s = goblin__alloc(eng->st, sizeof(*s));
    if (s == NULL)
        return NULL;
    memset(s, 0, sizeof(*s));
    s->next_id = 1;
    s->seldb[0] = s->seldb[1] = -1;
    s->ops.alloc = &eng->acct;
    s->out.alloc = &eng->acct;
    eng->stream = s;
    return s;
}

void goblin__stream_free(goblin_engine *eng)
{
    struct goblin__stream *s = eng->stream;

    if (s == NULL)
        return;
    goblin_buf_free(&s->ops);
    goblin_buf_free(&s->out);
    goblin__free(eng->st, s, sizeof(*s));
    eng->stream = NULL;
    eng->stream_on = false;
    goblin__engine_direct_update(eng);
}

static void update_on(goblin_engine *eng)
{
    struct goblin__stream *s = eng->stream;

    eng->stream_on = s->ncls[0] + s->ncls[1] > 0;
    goblin__engine_direct_update(eng);
}

int goblin_stream_subscribe(goblin_engine *eng, enum goblin_stream_class cls,
                            goblin_stream_fn *fn, void *ctx, uint32_t *id)
{
    struct goblin__stream *s;
    struct goblin__stream_consumer *c;

    if (fn == NULL || (cls != GOBLIN_STREAM_REPLICATION &&
                       cls != GOBLIN_STREAM_LOCAL))
        return GOBLIN_EINVAL;
    if ((s = stream_get(eng)) == NULL)
        return GOBLIN_ENOMEM;
    if (s->nc == GOBLIN__STREAM_MAX_CONSUMERS)
        return GOBLIN_ELIMIT;
    c = &s->c[s->nc++];
    c->fn = fn;
    c->ctx = ctx;
    c->cls = (uint8_t)cls;
    c->id = s->next_id++;
    if (s->ncls[cls]++ == 0)
        s->seldb[cls] = -1;
    if (id != NULL)
        *id = c->id;
    update_on(eng);
    return 0;
}

static void compact(struct goblin__stream *s)
{
    int i, j = 0;

    for (i = 0; i < s->nc; i++)
        if (s->c[i].fn != NULL)
            s->c[j++] = s->c[i];
    s->nc = j;
}

void goblin_stream_unsubscribe(goblin_engine *eng, uint32_t id)
{
    struct goblin__stream *s = eng->stream;
    int i;

    if (s == NULL)
        return;
    for (i = 0; i < s->nc; i++) {
        if (s->c[i].fn == NULL || s->c[i].id != id)
            continue;
        s->ncls[s->c[i].cls]--;
        s->c[i].fn = NULL;
        if (!s->delivering)
            compact(s);
        update_on(eng);
        return;
    }
}

uint64_t goblin_stream_offset(const goblin_engine *eng)
{
    return eng->stream != NULL ? eng->stream->offset : 0;
}

void goblin_stream_set_offset(goblin_engine *eng, uint64_t offset)
{
    struct goblin__stream *s = stream_get(eng);

    if (s != NULL)
        s->offset = offset;
}

void goblin_stream_reselect(goblin_engine *eng, enum goblin_stream_class cls)
{
    if (eng->stream != NULL && (cls == 0 || cls == 1))
        eng->stream->seldb[cls] = -1;
}

void goblin_stream_follow(goblin_engine *eng, bool on)
{
    struct goblin__stream *s = stream_get(eng);

    if (s == NULL)
        return;
    s->follow = on;
    s->seldb[GOBLIN_STREAM_REPLICATION] = -1;
}

/* Hands out to every consumer of cls. */
static void hand_out(struct goblin__stream *s, int cls, const void *bytes,
                     size_t len)
{
    bool was = s->delivering;
    int i;

    s->delivering = true;
    for (i = 0; i < s->nc; i++)
        if (s->c[i].fn != NULL && s->c[i].cls == cls)
            s->c[i].fn(s->c[i].ctx, bytes, len, s->offset);
    s->delivering = was;
    if (!was)
        compact(s);
}

void goblin_stream_feed(goblin_engine *eng, const void *bytes, size_t len)
{
    struct goblin__stream *s = stream_get(eng);

    if (s == NULL || len == 0)
        return;
    s->offset += len;
    s->seldb[GOBLIN_STREAM_REPLICATION] = -1;
    if (s->ncls[GOBLIN_STREAM_REPLICATION] > 0)
        hand_out(s, GOBLIN_STREAM_REPLICATION, bytes, len);
}

/* "<c><n>\r\n" into b. */
static void header(struct goblin_buf *b, char c, uint64_t n)
{
    char text[32], *p = text + sizeof(text);

    *--p = '\n';
    *--p = '\r';
    do {
        *--p = (char)('0' + n % 10);
        n /= 10;
    } while (n != 0);
    *--p = c;
    goblin_buf_append(b, p, (size_t)(text + sizeof(text) - p));
}

/* RESP array encoding of argv into b. */
static void encode(struct goblin_buf *b, int argc,
                   const struct goblin_slice *argv)
{
    header(b, '*', (uint64_t)argc);
    for (int i = 0; i < argc; i++) {
        header(b, '$', argv[i].len);
        goblin_buf_append(b, argv[i].ptr, argv[i].len);
        goblin_buf_append(b, "\r\n", 2);
    }
}

static void encode_select(struct goblin_buf *b, int db)
{
    char num[16];
    struct goblin_slice v[2] = {{"SELECT", 6}, {num, 0}};

    v[1].len = (size_t)snprintf(num, sizeof(num), "%d", db);
    encode(b, 2, v);
}

void goblin__stream_op(goblin_engine *eng, int db, int argc,
                       const struct goblin_slice *argv)
{
    struct goblin__stream *s = eng->stream;
    struct goblin_buf *b = &s->ops;
    size_t at = b->len;
    int32_t d = db;
    uint32_t len;

    goblin_buf_append(b, &d, sizeof(d));
    goblin_buf_append(b, &d, sizeof(len)); /* the length, patched below */
    encode(b, argc, argv);
    if (b->failed) {
        b->failed = false;
        b->len = at;
        s->lost = true;
        return;
    }
    len = (uint32_t)(b->len - at - sizeof(d) - sizeof(len));
    memcpy(b->data + at + sizeof(d), &len, sizeof(len));
    s->nops++;
}

/* Frames the pending ops for class cls into s->out. */
static void frame(struct goblin__stream *s, int cls)
{
    static const char multi[] = "*1\r\n$5\r\nMULTI\r\n";
    static const char exec[] = "*1\r\n$4\r\nEXEC\r\n";
    struct goblin_buf *o = &s->out;
    size_t at = 0;
    int32_t db;
    uint32_t len;

    o->len = 0;
    while (at < s->ops.len) {
        memcpy(&db, s->ops.data + at, sizeof(db));
        memcpy(&len, s->ops.data + at + sizeof(db), sizeof(len));
        if (db >= 0 && db != s->seldb[cls]) {
            encode_select(o, db);
            s->seldb[cls] = db;
        }
        if (at == 0 && s->nops > 1)
            goblin_buf_append(o, multi, sizeof(multi) - 1);
        at += sizeof(db) + sizeof(len);
        goblin_buf_append(o, s->ops.data + at, len);
        at += len;
    }
    if (s->nops > 1)
        goblin_buf_append(o, exec, sizeof(exec) - 1);
}

void goblin__stream_deliver(goblin_engine *eng)
{
    struct goblin__stream *s = eng->stream;
    int cls;

    if (s->nops == 0 && !s->lost)
        return;
    for (cls = 0; cls < 2; cls++) {
        if (s->ncls[cls] == 0 ||
            (cls == GOBLIN_STREAM_REPLICATION && s->follow))
            continue;
        if (s->lost) {
            s->seldb[cls] = -1;
            hand_out(s, cls, NULL, 0);
            continue;
        }
        frame(s, cls);
        if (s->out.failed) {
            s->out.failed = false;
            s->seldb[cls] = -1;
            hand_out(s, cls, NULL, 0);
            continue;
        }
        if (cls == GOBLIN_STREAM_REPLICATION)
            s->offset += s->out.len;
        hand_out(s, cls, s->out.data, s->out.len);
    }
    s->ops.len = 0;
    s->nops = 0;
    s->lost = false;
}

int goblin_stream_emit(goblin_engine *eng, enum goblin_stream_class cls,
                       int db, int argc, const struct goblin_slice *argv)
{
    struct goblin__stream *s = eng->stream;
    struct goblin_buf *o;

    if (argc < 1 || (cls != 0 && cls != 1))
        return GOBLIN_EINVAL;
    if (s == NULL || s->ncls[cls] == 0)
        return 0;
    o = &s->out;
    o->len = 0;
    if (db >= 0 && db != s->seldb[cls])
        encode_select(o, db);
    encode(o, argc, argv);
    if (o->failed) {
        o->failed = false;
        return GOBLIN_ENOMEM;
    }
    if (db >= 0)
        s->seldb[cls] = db;
    if (cls == GOBLIN_STREAM_REPLICATION)
        s->offset += o->len;
    hand_out(s, cls, o->data, o->len);
    return 0;
}

int goblin__stream_db_of(const goblin_engine *eng, const goblin_store *st)
{
    for (int i = 0; i < eng->ndbs; i++)
        if (eng->dbs[i].st == st)
            return i;
    return -1;
}
