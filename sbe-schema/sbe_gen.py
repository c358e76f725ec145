#!/usr/bin/env python3
"""sbe_gen.py - generates Goblin's header-only C codecs from an SBE 1.0
message schema (FIX Simple Binary Encoding, http://fixprotocol.io/2016/sbe).

Usage:
    sbe_gen.py SCHEMA.xml OUT.h [TEST_OUT.h]   C codecs (and round-trip tests)
    sbe_gen.py --markdown SCHEMA.xml           message table for docs/sbe.md

Python 3 standard library only: it runs at build time from a meson
custom_target, and the generated files live in the build directory only.

The supported subset of SBE 1.0, checked as the schema is read:
  * byteOrder littleEndian or bigEndian; a messageHeader composite of four
    uint16 (blockLength, templateId, schemaId, version); groupSizeEncoding
    of uint16 blockLength + uint16 numInGroup; varDataEncoding of a uint32
    length + uint8 varData of length 0 (maxValue bounds the length).
  * Fields of a primitive type, of a single-value <type>, of an <enum> or
    of a <set>; optional offset (no overlap), optional blockLength (never
    smaller than the fields), sinceVersion on messages, fields, groups and
    data. Fields come first, then groups, then data (spec 4.3).
  * Groups hold fields and data but do not nest.

What the generated code guarantees:
  * Decoding works in place on a received message and checks every offset
    and length against the message before use. The root block and each
    group's entries are located with the blockLength that was received, so
    a newer sender with longer blocks still decodes; a field added after
    the sender's version reads as its null value.
  * Encoding writes into a caller's buffer without allocating. A writer
    that runs out of room, or a group past 65535 entries, or a data field
    past the schema maximum, fails the whole message and leaves the buffer
    as it was before the message began.
"""

import argparse
import re
import sys
import xml.etree.ElementTree as ET

SBE_NS = 'http://fixprotocol.io/2016/sbe'

# name: (C type, size, accessor suffix, null value for absent fields)
PRIMITIVES = {
    'char': ('uint8_t', 1, 'u8', '0'),
    'int8': ('int8_t', 1, 'i8', 'INT8_MIN'),
    'uint8': ('uint8_t', 1, 'u8', 'UINT8_MAX'),
    'int16': ('int16_t', 2, 'i16', 'INT16_MIN'),
    'uint16': ('uint16_t', 2, 'u16', 'UINT16_MAX'),
    'int32': ('int32_t', 4, 'i32', 'INT32_MIN'),
    'uint32': ('uint32_t', 4, 'u32', 'UINT32_MAX'),
    'int64': ('int64_t', 8, 'i64', 'INT64_MIN'),
    'uint64': ('uint64_t', 8, 'u64', 'UINT64_MAX'),
    'float': ('float', 4, 'f32', 'NAN'),
    'double': ('double', 8, 'f64', 'NAN'),
}

C_KEYWORDS = {
    'auto', 'break', 'case', 'char', 'const', 'continue', 'default', 'do',
    'double', 'else', 'enum', 'extern', 'float', 'for', 'goto', 'if',
    'inline', 'int', 'long', 'register', 'restrict', 'return', 'short',
    'signed', 'sizeof', 'static', 'struct', 'switch', 'typedef', 'union',
    'unsigned', 'void', 'volatile', 'while', 'bool', 'true', 'false',
}

PREFIX = 'goblin_sbe'
MACRO = 'GOBLIN_SBE'


class SchemaError(Exception):
    pass


def snake(name):
    """ZAddFlags -> zadd_flags, withScores -> with_scores, ZRANGE -> zrange."""
    if re.fullmatch(r'[A-Z0-9_]+', name):
        return name.lower()
    return re.sub(r'(?<=[a-z0-9])([A-Z])', r'_\1', name).lower()


def param(name):
    s = snake(name)
    return s + '_' if s in C_KEYWORDS else s


def local(tag):
    return tag.split('}', 1)[-1]


def int_attr(el, name, default=None):
    v = el.get(name)
    if v is None:
        if default is None:
            raise SchemaError('%s: missing attribute %s'
                              % (el.get('name'), name))
        return default
    try:
        return int(v, 0)
    except ValueError:
        raise SchemaError('%s: %s is not an integer' % (el.get('name'), name))


class Type:
    """A field's type: a primitive, an enum or a set."""

    def __init__(self, name, kind, prim, values=(), desc=''):
        self.name = name
        self.kind = kind          # 'prim', 'enum' or 'set'
        self.prim = prim
        self.values = list(values)
        self.desc = desc
        self.ctype, self.size, self.acc, self.null = PRIMITIVES[prim]


class Field:
    def __init__(self, el, types, offset):
        self.name = el.get('name')
        self.since = int_attr(el, 'sinceVersion', 0)
        tname = el.get('type')
        if tname in PRIMITIVES:
            self.type = Type(tname, 'prim', tname)
        elif tname in types:
            self.type = types[tname]
        else:
            raise SchemaError('field %s: unknown or unsupported type %s'
                              % (self.name, tname))
        want = int_attr(el, 'offset', offset)
        if want < offset:
            raise SchemaError('field %s: offset %d overlaps the field before'
                              % (self.name, want))
        self.offset = want
        self.end = want + self.type.size
        self.desc = el.get('description', '')


class Data:
    def __init__(self, el, var_type):
        self.name = el.get('name')
        self.since = int_attr(el, 'sinceVersion', 0)
        if el.get('type') != var_type:
            raise SchemaError('data %s: type must be %s'
                              % (self.name, var_type))
        self.desc = el.get('description', '')


def read_body(el, types, var_type, allow_groups, owner):
    """Fields, then groups, then data, in schema order (spec 4.3)."""
    fields, groups, datas = [], [], []
    offset = 0
    for child in el:
        tag = local(child.tag)
        if tag == 'field':
            if groups or datas:
                raise SchemaError('%s: field %s after a group or data'
                                  % (owner, child.get('name')))
            f = Field(child, types, offset)
            fields.append(f)
            offset = f.end
        elif tag == 'group':
            if not allow_groups:
                raise SchemaError('%s: nested groups are not supported' % owner)
            if datas:
                raise SchemaError('%s: group %s after data'
                                  % (owner, child.get('name')))
            groups.append(Group(child, types, var_type))
        elif tag == 'data':
            datas.append(Data(child, var_type))
        else:
            raise SchemaError('%s: unexpected element %s' % (owner, tag))
    block = offset
    if el.get('blockLength') is not None:
        block = int_attr(el, 'blockLength')
        if block < offset:
            raise SchemaError('%s: blockLength %d is shorter than its fields'
                              % (owner, block))
    if block > 65535:
        raise SchemaError('%s: block longer than 65535 bytes' % owner)
    return fields, groups, datas, block


def min_block(fields, version_expr):
    """C expression: the shortest block a sender of that version may send."""
    base = max([f.end for f in fields if f.since == 0] + [0])
    later = sorted({f.since for f in fields if f.since > 0})
    expr = str(base)
    for v in later:
        end = max(f.end for f in fields if f.since <= v)
        expr = '(%s >= %d ? %d : %s)' % (version_expr, v, end, expr)
    return expr


class Group:
    def __init__(self, el, types, var_type):
        self.name = el.get('name')
        self.since = int_attr(el, 'sinceVersion', 0)
        if el.get('dimensionType', 'groupSizeEncoding') != 'groupSizeEncoding':
            raise SchemaError('group %s: only groupSizeEncoding is supported'
                              % self.name)
        (self.fields, _, self.datas,
         self.block) = read_body(el, types, var_type, False, self.name)
        self.desc = el.get('description', '')


class Message:
    def __init__(self, el, types, var_type):
        self.name = el.get('name')
        self.id = int_attr(el, 'id')
        self.since = int_attr(el, 'sinceVersion', 0)
        self.desc = el.get('description', '')
        self.reply = el.get('semanticType') == 'reply'
        (self.fields, self.groups, self.datas,
         self.block) = read_body(el, types, var_type, True, self.name)
        self.c = snake(self.name)


class Schema:
    def __init__(self, path):
        root = ET.parse(path).getroot()
        if root.tag != '{%s}messageSchema' % SBE_NS:
            raise SchemaError('root must be sbe:messageSchema in namespace %s'
                              % SBE_NS)
        self.package = root.get('package', '')
        self.id = int_attr(root, 'id')
        self.version = int_attr(root, 'version', 0)
        self.order = root.get('byteOrder', 'littleEndian')
        if self.order not in ('littleEndian', 'bigEndian'):
            raise SchemaError('byteOrder must be littleEndian or bigEndian')
        self.types = {}
        self.var_max = None
        for types in root.findall('types'):
            for t in types:
                self.read_type(t)
        self.check_composites()
        self.messages = [Message(m, self.types, 'varDataEncoding')
                         for m in root.findall('{%s}message' % SBE_NS)]
        self.check_messages()

    def read_type(self, t):
        tag, name = local(t.tag), t.get('name')
        if tag == 'composite':
            self.composites = getattr(self, 'composites', {})
            self.composites[name] = t
        elif tag == 'type':
            prim = t.get('primitiveType')
            if prim not in PRIMITIVES or int_attr(t, 'length', 1) != 1:
                raise SchemaError('type %s: only single primitives' % name)
            self.types[name] = Type(name, 'prim', prim,
                                    desc=t.get('description', ''))
        elif tag in ('enum', 'set'):
            prim = t.get('encodingType')
            if prim not in PRIMITIVES or prim in ('float', 'double'):
                raise SchemaError('%s %s: bad encodingType' % (tag, name))
            sub = 'validValue' if tag == 'enum' else 'choice'
            vals = [(v.get('name'), int(v.text.strip(), 0))
                    for v in t if local(v.tag) == sub]
            if tag == 'set':
                for vname, bit in vals:
                    if not 0 <= bit < PRIMITIVES[prim][1] * 8:
                        raise SchemaError('set %s: bit %d out of range'
                                          % (name, bit))
            self.types[name] = Type(name, tag, prim, vals,
                                    t.get('description', ''))
        else:
            raise SchemaError('unsupported type element %s' % tag)

    def check_composites(self):
        comps = getattr(self, 'composites', {})
        expect = {
            'messageHeader': [('blockLength', 'uint16'),
                              ('templateId', 'uint16'),
                              ('schemaId', 'uint16'),
                              ('version', 'uint16')],
            'groupSizeEncoding': [('blockLength', 'uint16'),
                                  ('numInGroup', 'uint16')],
            'varDataEncoding': [('length', 'uint32'), ('varData', 'uint8')],
        }
        for cname, members in expect.items():
            if cname not in comps:
                raise SchemaError('composite %s is missing' % cname)
            got = [(m.get('name'), m.get('primitiveType'))
                   for m in comps[cname]]
            if got != members:
                raise SchemaError('composite %s must be %s' % (cname, members))
        var = list(comps['varDataEncoding'])
        if var[1].get('length') != '0':
            raise SchemaError('varDataEncoding.varData must have length 0')
        self.var_max = int_attr(var[0], 'maxValue', 2 ** 30)
        if self.var_max > 2 ** 31 - 1:
            raise SchemaError('varDataEncoding maxValue must fit an int')

    def check_messages(self):
        ids, names = set(), set()
        for m in self.messages:
            if not 0 < m.id < 65536 or m.id in ids:
                raise SchemaError('message %s: bad or duplicate id %d'
                                  % (m.name, m.id))
            if m.c in names:
                raise SchemaError('message %s: duplicate name' % m.name)
            ids.add(m.id)
            names.add(m.c)
            members = ([f.name for f in m.fields] + [g.name for g in m.groups]
                       + [d.name for d in m.datas])
            for g in m.groups:
                members += ['%s_%s' % (g.name, x.name)
                            for x in g.fields + g.datas]
            lowered = [snake(x) for x in members]
            reserved = {'decode', 'encode'}
            if m.groups:
                reserved |= {'begin', 'end', 'fill'}
            for x in lowered:
                if lowered.count(x) > 1 or x in reserved:
                    raise SchemaError('message %s: name %s clashes'
                                      % (m.name, x))


# ---------------------------------------------------------------------------
# C output

RUNTIME = r'''
/* ---- byte order and unaligned access (memcpy: fields are unpadded) ---- */

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define GOBLIN_SBE_HOST_BIG 1
#else
#define GOBLIN_SBE_HOST_BIG 0
#endif
#define GOBLIN_SBE_SWAP (GOBLIN_SBE_HOST_BIG != GOBLIN_SBE_WIRE_BIG)

static inline uint8_t goblin_sbe_rd_u8(const uint8_t *p) { return p[0]; }
static inline int8_t goblin_sbe_rd_i8(const uint8_t *p)
{
    return (int8_t)p[0];
}
static inline uint16_t goblin_sbe_rd_u16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof(v));
    return GOBLIN_SBE_SWAP ? __builtin_bswap16(v) : v;
}
static inline uint32_t goblin_sbe_rd_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return GOBLIN_SBE_SWAP ? __builtin_bswap32(v) : v;
}
static inline uint64_t goblin_sbe_rd_u64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return GOBLIN_SBE_SWAP ? __builtin_bswap64(v) : v;
}
static inline int16_t goblin_sbe_rd_i16(const uint8_t *p)
{
    return (int16_t)goblin_sbe_rd_u16(p);
}
static inline int32_t goblin_sbe_rd_i32(const uint8_t *p)
{
    return (int32_t)goblin_sbe_rd_u32(p);
}
static inline int64_t goblin_sbe_rd_i64(const uint8_t *p)
{
    return (int64_t)goblin_sbe_rd_u64(p);
}
static inline float goblin_sbe_rd_f32(const uint8_t *p)
{
    uint32_t u = goblin_sbe_rd_u32(p);
    float v;
    memcpy(&v, &u, sizeof(v));
    return v;
}
static inline double goblin_sbe_rd_f64(const uint8_t *p)
{
    uint64_t u = goblin_sbe_rd_u64(p);
    double v;
    memcpy(&v, &u, sizeof(v));
    return v;
}

static inline void goblin_sbe_wr_u8(uint8_t *p, uint8_t v) { p[0] = v; }
static inline void goblin_sbe_wr_i8(uint8_t *p, int8_t v)
{
    p[0] = (uint8_t)v;
}
static inline void goblin_sbe_wr_u16(uint8_t *p, uint16_t v)
{
    v = GOBLIN_SBE_SWAP ? __builtin_bswap16(v) : v;
    memcpy(p, &v, sizeof(v));
}
static inline void goblin_sbe_wr_u32(uint8_t *p, uint32_t v)
{
    v = GOBLIN_SBE_SWAP ? __builtin_bswap32(v) : v;
    memcpy(p, &v, sizeof(v));
}
static inline void goblin_sbe_wr_u64(uint8_t *p, uint64_t v)
{
    v = GOBLIN_SBE_SWAP ? __builtin_bswap64(v) : v;
    memcpy(p, &v, sizeof(v));
}
static inline void goblin_sbe_wr_i16(uint8_t *p, int16_t v)
{
    goblin_sbe_wr_u16(p, (uint16_t)v);
}
static inline void goblin_sbe_wr_i32(uint8_t *p, int32_t v)
{
    goblin_sbe_wr_u32(p, (uint32_t)v);
}
static inline void goblin_sbe_wr_i64(uint8_t *p, int64_t v)
{
    goblin_sbe_wr_u64(p, (uint64_t)v);
}
static inline void goblin_sbe_wr_f32(uint8_t *p, float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof(u));
    goblin_sbe_wr_u32(p, u);
}
static inline void goblin_sbe_wr_f64(uint8_t *p, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof(u));
    goblin_sbe_wr_u64(p, u);
}

/* ---- decoding ---- */

/* A received message (header + body, without any frame length prefix),
 * wrapped by goblin_sbe_msg_wrap(). buf is borrowed. When a decode fails,
 * why names the check that failed, for the error reply. */
struct goblin_sbe_msg {
    const uint8_t *buf;
    size_t len;
    uint16_t block_length;
    uint16_t template_id;
    uint16_t schema_id;
    uint16_t version;
    const char *why;
};

/* A repeating group as received: an iterator over its entries. Copy it to
 * walk the entries again. */
struct goblin_sbe_group {
    const uint8_t *p;      /* next entry */
    const uint8_t *end;    /* end of the message */
    uint16_t block_length; /* bytes of each entry's block, as received */
    uint16_t count;        /* entries not yet visited */
    uint16_t version;      /* the sender's schema version */
};

static inline int goblin_sbe_rt_fail(struct goblin_sbe_msg *m, int code,
                                     const char *why)
{
    m->why = why;
    return code;
}

/* Reads and checks the message header: returns 0, GOBLIN_EPROTO (shorter
 * than a header) or GOBLIN_EINCOMPAT (another schema, or a version older
 * than GOBLIN_SBE_MIN_VERSION). Newer versions are accepted: what they add
 * is skipped by block length. The template is checked by its decoder. */
static inline int goblin_sbe_msg_wrap(struct goblin_sbe_msg *m,
                                      const void *buf, size_t len)
{
    const uint8_t *p = (const uint8_t *)buf;

    m->buf = p;
    m->len = len;
    m->why = NULL;
    if (len < GOBLIN_SBE_HEADER_LENGTH)
        return goblin_sbe_rt_fail(m, GOBLIN_EPROTO, "truncated header");
    m->block_length = goblin_sbe_rd_u16(p);
    m->template_id = goblin_sbe_rd_u16(p + 2);
    m->schema_id = goblin_sbe_rd_u16(p + 4);
    m->version = goblin_sbe_rd_u16(p + 6);
    if (m->schema_id != GOBLIN_SBE_SCHEMA_ID)
        return goblin_sbe_rt_fail(m, GOBLIN_EINCOMPAT, "schema id mismatch");
    if (m->version < GOBLIN_SBE_MIN_VERSION)
        return goblin_sbe_rt_fail(m, GOBLIN_EINCOMPAT,
                                  "schema version mismatch");
    return 0;
}

/* Checks the root block: at least min bytes, all inside the message. */
static inline int goblin_sbe_rt_root(struct goblin_sbe_msg *m, size_t min)
{
    if (m->block_length > m->len - GOBLIN_SBE_HEADER_LENGTH)
        return goblin_sbe_rt_fail(m, GOBLIN_EPROTO,
                                  "block length past the end of the frame");
    if (m->block_length < min)
        return goblin_sbe_rt_fail(m, GOBLIN_EPROTO,
                                  "block length too short for the template");
    return 0;
}

/* Reads a data field (length prefix + bytes) at *pos. */
static inline int goblin_sbe_rt_var(struct goblin_sbe_msg *m, size_t *pos,
                                    struct goblin_slice *out)
{
    size_t p = *pos;
    uint32_t n;

    if (m->len - p < GOBLIN_SBE_VAR_HEADER_LENGTH)
        return goblin_sbe_rt_fail(m, GOBLIN_EPROTO,
                                  "var data length past the end of the frame");
    n = goblin_sbe_rd_u32(m->buf + p);
    p += GOBLIN_SBE_VAR_HEADER_LENGTH;
    if (n > GOBLIN_SBE_VAR_MAX)
        return goblin_sbe_rt_fail(m, GOBLIN_EPROTO,
                                  "var data longer than the schema allows");
    if (n > m->len - p)
        return goblin_sbe_rt_fail(m, GOBLIN_EPROTO,
                                  "var data past the end of the frame");
    out->ptr = m->buf + p;
    out->len = n;
    *pos = p + n;
    return 0;
}

/* Reads a group at *pos and checks every entry: its block (at least min
 * bytes) and its nvar data fields, moving *pos past the group. */
static inline int goblin_sbe_rt_group(struct goblin_sbe_msg *m, size_t *pos,
                                      size_t min, unsigned nvar,
                                      struct goblin_sbe_group *g)
{
    size_t p = *pos;
    struct goblin_slice skip;
    unsigned i, j;
    int r;

    if (m->len - p < GOBLIN_SBE_GROUP_HEADER_LENGTH)
        return goblin_sbe_rt_fail(m, GOBLIN_EPROTO,
                                  "group header past the end of the frame");
    g->block_length = goblin_sbe_rd_u16(m->buf + p);
    g->count = goblin_sbe_rd_u16(m->buf + p + 2);
    g->version = m->version;
    g->end = m->buf + m->len;
    p += GOBLIN_SBE_GROUP_HEADER_LENGTH;
    g->p = m->buf + p;
    if (g->block_length < min)
        return goblin_sbe_rt_fail(m, GOBLIN_EPROTO,
                                  "group block length too short");
    if (nvar == 0) {
        if ((uint64_t)g->count * g->block_length > m->len - p)
            return goblin_sbe_rt_fail(
                m, GOBLIN_EPROTO, "group entries past the end of the frame");
        *pos = p + (size_t)g->count * g->block_length;
        return 0;
    }
    for (i = 0; i < g->count; i++) {
        if (g->block_length > m->len - p)
            return goblin_sbe_rt_fail(
                m, GOBLIN_EPROTO, "group entries past the end of the frame");
        p += g->block_length;
        for (j = 0; j < nvar; j++)
            if ((r = goblin_sbe_rt_var(m, &p, &skip)) < 0)
                return r;
    }
    *pos = p;
    return 0;
}

/* An empty group, for a group newer than the sender's version. */
static inline void goblin_sbe_rt_absent(struct goblin_sbe_msg *m, size_t pos,
                                        struct goblin_sbe_group *g)
{
    g->p = m->buf + pos;
    g->end = m->buf + m->len;
    g->block_length = 0;
    g->count = 0;
    g->version = m->version;
}

/* A message of this schema version or older must end where its last
 * element ends; a newer one may carry elements this code does not know. */
static inline int goblin_sbe_rt_done(struct goblin_sbe_msg *m, size_t pos)
{
    if (pos != m->len && m->version <= GOBLIN_SBE_SCHEMA_VERSION)
        return goblin_sbe_rt_fail(m, GOBLIN_EPROTO,
                                  "trailing bytes after the message");
    return 0;
}

/* Steps over one entry of g: its block, then its data fields into out[].
 * The decoder has checked the whole group; the checks here only keep a
 * misused iterator inside the message. */
static inline const uint8_t *goblin_sbe_rt_entry_next(
    struct goblin_sbe_group *g, unsigned nvar, struct goblin_slice *out)
{
    const uint8_t *block = g->p;
    const uint8_t *p = g->p;
    unsigned j;
    uint32_t n;

    if (g->count == 0 || (size_t)(g->end - p) < g->block_length)
        return NULL;
    p += g->block_length;
    for (j = 0; j < nvar; j++) {
        if ((size_t)(g->end - p) < GOBLIN_SBE_VAR_HEADER_LENGTH)
            return NULL;
        n = goblin_sbe_rd_u32(p);
        p += GOBLIN_SBE_VAR_HEADER_LENGTH;
        if ((size_t)(g->end - p) < n)
            return NULL;
        out[j].ptr = p;
        out[j].len = n;
        p += n;
    }
    g->p = p;
    g->count--;
    return block;
}

/* ---- encoding ---- */

/* Writes messages one after another into buf[0, cap). With framed set,
 * each message is preceded by its u32 length (header + body), as on
 * streams and rings. A message is begun by its _begin or _encode call and
 * finished by its _end or _encode call, which returns the bytes it added
 * (length prefix included) or a negative code: GOBLIN_ERANGE (cap too
 * small), GOBLIN_ELIMIT (a group past 65535 entries or data past the
 * schema maximum). A failed message leaves pos where the message began. */
struct goblin_sbe_writer {
    uint8_t *buf;
    size_t cap;
    size_t pos;
    size_t start;    /* where the current message's frame begins */
    size_t msg;      /* where the current message's header is */
    size_t group;    /* where the current group's header is */
    int err;         /* the first failure of the current message */
    unsigned stage;  /* groups of the current message written so far */
    bool framed;
};

static inline void goblin_sbe_writer_init(struct goblin_sbe_writer *w,
                                          void *buf, size_t cap, bool framed)
{
    w->buf = (uint8_t *)buf;
    w->cap = cap;
    w->pos = 0;
    w->start = 0;
    w->msg = 0;
    w->group = 0;
    w->err = 0;
    w->stage = 0;
    w->framed = framed;
}

static inline uint8_t *goblin_sbe_rt_put(struct goblin_sbe_writer *w,
                                         size_t n)
{
    uint8_t *p;

    if (w->err != 0)
        return NULL;
    if (n > w->cap - w->pos) {
        w->err = GOBLIN_ERANGE;
        return NULL;
    }
    p = w->buf + w->pos;
    w->pos += n;
    return p;
}

/* Starts a message: the length prefix when framed, the header, and a
 * zeroed root block, whose address it returns (NULL after a failure). */
static inline uint8_t *goblin_sbe_rt_begin(struct goblin_sbe_writer *w,
                                           uint16_t template_id,
                                           uint16_t block_length)
{
    uint8_t *p;

    w->err = 0;
    w->stage = 0;
    w->start = w->pos;
    if (w->framed && goblin_sbe_rt_put(w, 4) == NULL)
        return NULL;
    w->msg = w->pos;
    p = goblin_sbe_rt_put(w, GOBLIN_SBE_HEADER_LENGTH + (size_t)block_length);
    if (p == NULL)
        return NULL;
    goblin_sbe_wr_u16(p, block_length);
    goblin_sbe_wr_u16(p + 2, template_id);
    goblin_sbe_wr_u16(p + 4, GOBLIN_SBE_SCHEMA_ID);
    goblin_sbe_wr_u16(p + 6, GOBLIN_SBE_SCHEMA_VERSION);
    memset(p + GOBLIN_SBE_HEADER_LENGTH, 0, block_length);
    return p + GOBLIN_SBE_HEADER_LENGTH;
}

/* Starts a group with no entries yet. */
static inline void goblin_sbe_rt_group_begin(struct goblin_sbe_writer *w,
                                             uint16_t block_length)
{
    uint8_t *p = goblin_sbe_rt_put(w, GOBLIN_SBE_GROUP_HEADER_LENGTH);

    if (p == NULL)
        return;
    w->group = w->pos - GOBLIN_SBE_GROUP_HEADER_LENGTH;
    goblin_sbe_wr_u16(p, block_length);
    goblin_sbe_wr_u16(p + 2, 0);
}

/* Adds an entry to the current group and returns its zeroed block. */
static inline uint8_t *goblin_sbe_rt_entry(struct goblin_sbe_writer *w,
                                           uint16_t block_length)
{
    uint8_t *g, *p;
    uint16_t n;

    if (w->err != 0)
        return NULL;
    n = goblin_sbe_rd_u16(w->buf + w->group + 2);
    if (n == GOBLIN_SBE_GROUP_MAX) {
        w->err = GOBLIN_ELIMIT;
        return NULL;
    }
    p = goblin_sbe_rt_put(w, block_length);
    if (p == NULL)
        return NULL;
    g = w->buf + w->group;
    goblin_sbe_wr_u16(g + 2, (uint16_t)(n + 1));
    memset(p, 0, block_length);
    return p;
}

/* goblin_sbe_rt_entry with room for extra more bytes after the block
 * (the entry's data fields), bounds checked once: the data fields are
 * then written by goblin_sbe_rt_var_at from block + block_length. */
static inline uint8_t *goblin_sbe_rt_entry_room(struct goblin_sbe_writer *w,
                                                uint16_t block_length,
                                                size_t extra)
{
    uint8_t *g, *p;
    uint16_t n;

    if (w->err != 0)
        return NULL;
    g = w->buf + w->group;
    n = goblin_sbe_rd_u16(g + 2);
    if (n == GOBLIN_SBE_GROUP_MAX) {
        w->err = GOBLIN_ELIMIT;
        return NULL;
    }
    p = goblin_sbe_rt_put(w, block_length + extra);
    if (p == NULL)
        return NULL;
    goblin_sbe_wr_u16(g + 2, (uint16_t)(n + 1));
    memset(p, 0, block_length);
    return p;
}

/* A data field at p, in room already reserved: u32 length, then the
 * bytes. Returns the byte after it. */
static inline uint8_t *goblin_sbe_rt_var_at(uint8_t *p, struct goblin_slice v)
{
    goblin_sbe_wr_u32(p, (uint32_t)v.len);
    goblin__copy_short(p + GOBLIN_SBE_VAR_HEADER_LENGTH, v.ptr, v.len);
    return p + GOBLIN_SBE_VAR_HEADER_LENGTH + v.len;
}

/* Records the first failure of the current message. */
static inline void goblin_sbe_rt_writer_fail(struct goblin_sbe_writer *w,
                                             int err)
{
    if (w->err == 0)
        w->err = err;
}

/* Appends a data field: u32 length, then the bytes. */
static inline void goblin_sbe_rt_put_var(struct goblin_sbe_writer *w,
                                         struct goblin_slice v)
{
    uint8_t *p;

    if (__builtin_expect(v.len > GOBLIN_SBE_VAR_MAX, 0)) {
        if (w->err == 0)
            w->err = GOBLIN_ELIMIT;
        return;
    }
    p = goblin_sbe_rt_put(w, GOBLIN_SBE_VAR_HEADER_LENGTH + v.len);
    if (p == NULL)
        return;
    goblin_sbe_wr_u32(p, (uint32_t)v.len);
    goblin__copy_short(p + GOBLIN_SBE_VAR_HEADER_LENGTH, v.ptr, v.len);
}

/* Finishes the current message (see struct goblin_sbe_writer). */
static inline int goblin_sbe_rt_finish(struct goblin_sbe_writer *w)
{
    int err = w->err;

    if (err == 0 && w->pos - w->start > (size_t)INT32_MAX)
        err = GOBLIN_ELIMIT;
    if (err != 0) {
        w->pos = w->start;
        w->err = 0;
        return err;
    }
    if (w->framed)
        goblin_sbe_wr_u32(w->buf + w->start, (uint32_t)(w->pos - w->msg));
    return (int)(w->pos - w->start);
}
'''


class Out:
    def __init__(self):
        self.lines = []

    def __call__(self, s=''):
        self.lines.append(s)

    def text(self):
        return '\n'.join(self.lines) + '\n'


def comment(out, text, indent=''):
    """A C comment wrapped to 79 columns."""
    words = text.split()
    line = indent + '/*'
    lines = []
    for w in words:
        if len(line) + 1 + len(w) > 76:
            lines.append(line)
            line = indent + ' *'
        line += ' ' + w
    lines.append(line + ' */')
    for line in lines:
        out(line)


def emit_types(out, schema):
    for t in schema.types.values():
        if t.kind == 'prim':
            continue
        base = '%s_%s' % (MACRO, snake(t.name).upper())
        if t.desc:
            comment(out, '%s: %s' % (t.name, t.desc))
        if t.kind == 'enum':
            out('enum %s_%s {' % (PREFIX, snake(t.name)))
            for vname, v in t.values:
                out('    %s_%s = %d,' % (base, snake(vname).upper(), v))
            out('};')
            top = max(v for _, v in t.values)
            out('#define %s_MAX %d' % (base, top))
            out('static inline bool %s_%s_valid(uint64_t v)'
                % (PREFIX, snake(t.name)))
            out('{')
            vals = sorted(v for _, v in t.values)
            if vals == list(range(len(vals))):
                out('    return v <= %d;' % top)
            else:
                out('    return ' + ' || '.join('v == %d' % v for v in vals)
                    + ';')
            out('}')
        else:
            mask = 0
            for vname, bit in t.values:
                out('#define %s_%s (1u << %d)' % (base, snake(vname).upper(),
                                                 bit))
                mask |= 1 << bit
            out('#define %s_MASK 0x%xu' % (base, mask))
        out()


def field_params(fields):
    return ''.join(', %s %s' % (f.type.ctype, param(f.name)) for f in fields)


def data_params(datas):
    return ''.join(', struct goblin_slice %s' % param(d.name) for d in datas)


def emit_field_writes(out, fields, ptr, indent='    '):
    for f in fields:
        out('%s%s_wr_%s(%s + %d, %s);' % (indent, PREFIX, f.type.acc, ptr,
                                          f.offset, param(f.name)))


def emit_accessors(out, owner_struct, owner_c, fields):
    for f in fields:
        out('static inline %s %s_%s(const struct %s *m)'
            % (f.type.ctype, owner_c, snake(f.name), owner_struct))
        out('{')
        read = '%s_rd_%s(m->block + %d)' % (PREFIX, f.type.acc, f.offset)
        if f.since > 0:
            out('    if (m->version < %d)' % f.since)
            out('        return %s;' % f.type.null)
        out('    return %s;' % read)
        out('}')


def emit_group_decl(out, m, g, gi):
    mc = '%s_%s' % (PREFIX, m.c)
    gc = '%s_%s' % (mc, snake(g.name))
    gm = gc.upper()
    out('#define %s_BLOCK_LENGTH %d' % (gm, g.block))
    comment(out, 'One entry of %s.%s.' % (m.name, g.name))
    out('struct %s {' % gc)
    out('    const uint8_t *block;')
    out('    uint16_t version;')
    for d in g.datas:
        out('    struct goblin_slice %s;' % snake(d.name))
    out('};')
    emit_accessors(out, gc, gc, g.fields)
    # iterator
    nvar = len(g.datas)
    out('static inline bool %s_next(struct goblin_sbe_group *g,' % gc)
    out('    struct %s *e)' % gc)
    out('{')
    if nvar:
        out('    struct goblin_slice v[%d];' % nvar)
    else:
        out('    struct goblin_slice *v = NULL;')
    out('    uint16_t version = g->version;')
    out()
    out('    e->block = goblin_sbe_rt_entry_next(g, %d, v);' % nvar)
    out('    if (e->block == NULL)')
    out('        return false;')
    out('    e->version = version;')
    for j, d in enumerate(g.datas):
        out('    e->%s = v[%d];' % (snake(d.name), j))
    if nvar == 0:
        out('    (void)v;')
    out('    return true;')
    out('}')
    # encoder
    out('static inline void %s_begin(struct goblin_sbe_writer *w)' % gc)
    out('{')
    out('    %s_fill(w, %d);' % (mc, gi))
    out('    goblin_sbe_rt_group_begin(w, %s_BLOCK_LENGTH);' % gm)
    out('    w->stage = %d;' % (gi + 1))
    out('}')
    out('static inline void %s_add(struct goblin_sbe_writer *w%s%s)'
        % (gc, field_params(g.fields), data_params(g.datas)))
    out('{')
    if not g.datas:
        out('    uint8_t *p = goblin_sbe_rt_entry(w, %s_BLOCK_LENGTH);' % gm)
        out()
        out('    if (p == NULL)')
        out('        return;')
        emit_field_writes(out, g.fields, 'p')
        out('}')
        return
    # One bound check for the block and every data field (each at most
    # GOBLIN_SBE_VAR_MAX, so their sum cannot wrap).
    out('    uint8_t *p;')
    out()
    out('    if (%s) {' % ' || '.join('%s.len > GOBLIN_SBE_VAR_MAX'
                                     % param(d.name) for d in g.datas))
    out('        goblin_sbe_rt_writer_fail(w, GOBLIN_ELIMIT);')
    out('        return;')
    out('    }')
    out('    p = goblin_sbe_rt_entry_room(w, %s_BLOCK_LENGTH, %d * '
        'GOBLIN_SBE_VAR_HEADER_LENGTH + %s);'
        % (gm, len(g.datas), ' + '.join('%s.len' % param(d.name)
                                        for d in g.datas)))
    out('    if (p == NULL)')
    out('        return;')
    emit_field_writes(out, g.fields, 'p')
    out('    p += %s_BLOCK_LENGTH;' % gm)
    for j, d in enumerate(g.datas):
        if j + 1 < len(g.datas):
            out('    p = goblin_sbe_rt_var_at(p, %s);' % param(d.name))
        else:
            out('    goblin_sbe_rt_var_at(p, %s);' % param(d.name))
    out('}')


def emit_message(out, m, schema):
    mc = '%s_%s' % (PREFIX, m.c)
    mm = mc.upper()
    out('/* ---- %s (template %d) ---- */' % (m.name, m.id))
    if m.desc:
        comment(out, m.desc)
    out('#define %s %d' % (mm, m.id))
    out('#define %s_BLOCK_LENGTH %d' % (mm, m.block))
    out('#define %s_GROUPS %d' % (mm, len(m.groups)))
    # decoder view
    out('struct %s {' % mc)
    out('    const uint8_t *block;')
    out('    uint16_t block_length;')
    out('    uint16_t version;')
    for g in m.groups:
        out('    struct goblin_sbe_group %s;' % snake(g.name))
    for d in m.datas:
        out('    struct goblin_slice %s;' % snake(d.name))
    out('};')
    emit_accessors(out, mc, mc, m.fields)
    # decode
    out('static inline int %s_decode(struct %s *v, struct goblin_sbe_msg *m)'
        % (mc, mc))
    out('{')
    out('    size_t pos = GOBLIN_SBE_HEADER_LENGTH;')
    out('    int r;')
    out()
    out('    v->block = m->buf + GOBLIN_SBE_HEADER_LENGTH;')
    out('    v->block_length = m->block_length;')
    out('    v->version = m->version;')
    for g in m.groups:
        out('    goblin_sbe_rt_absent(m, 0, &v->%s);' % snake(g.name))
    for d in m.datas:
        out('    v->%s.ptr = NULL;' % snake(d.name))
        out('    v->%s.len = 0;' % snake(d.name))
    out('    if (m->template_id != %s)' % mm)
    out('        return goblin_sbe_rt_fail(m, GOBLIN_EINVAL,')
    out('                                  "wrong template");')
    if m.since > 0:
        out('    if (m->version < %d)' % m.since)
        out('        return goblin_sbe_rt_fail(m, GOBLIN_EINCOMPAT,')
        out('                                  "schema version mismatch");')
    out('    if ((r = goblin_sbe_rt_root(m, %s)) < 0)'
        % min_block(m.fields, 'm->version'))
    out('        return r;')
    out('    pos += m->block_length;')
    for g in m.groups:
        call = ('goblin_sbe_rt_group(m, &pos, %s, %d, &v->%s)'
                % (min_block(g.fields, 'm->version'), len(g.datas),
                   snake(g.name)))
        if g.since > 0:
            out('    if (m->version < %d)' % g.since)
            out('        goblin_sbe_rt_absent(m, pos, &v->%s);'
                % snake(g.name))
            out('    else if ((r = %s) < 0)' % call)
        else:
            out('    if ((r = %s) < 0)' % call)
        out('        return r;')
    for d in m.datas:
        call = 'goblin_sbe_rt_var(m, &pos, &v->%s)' % snake(d.name)
        if d.since > 0:
            out('    if (m->version < %d) {' % d.since)
            out('        v->%s.ptr = NULL;' % snake(d.name))
            out('        v->%s.len = 0;' % snake(d.name))
            out('    } else if ((r = %s) < 0) {' % call)
            out('        return r;')
            out('    }')
        else:
            out('    if ((r = %s) < 0)' % call)
            out('        return r;')
    out('    return goblin_sbe_rt_done(m, pos);')
    out('}')
    # encoders
    if not m.groups:
        out('static inline int %s_encode(struct goblin_sbe_writer *w%s%s)'
            % (mc, field_params(m.fields), data_params(m.datas)))
        out('{')
        out('    uint8_t *b = goblin_sbe_rt_begin(w, %s, %s_BLOCK_LENGTH);'
            % (mm, mm))
        out()
        if m.fields:
            out('    if (b != NULL) {')
            emit_field_writes(out, m.fields, 'b', '        ')
            out('    }')
        else:
            out('    (void)b;')
        for d in m.datas:
            out('    goblin_sbe_rt_put_var(w, %s);' % param(d.name))
        out('    return goblin_sbe_rt_finish(w);')
        out('}')
        out()
        return
    out('static inline void %s_fill(struct goblin_sbe_writer *w, unsigned upto)'
        % mc)
    out('{')
    out('    static const uint16_t blocks[] = {%s};'
        % ', '.join(str(g.block) for g in m.groups))
    out()
    out('    while (w->stage < upto)')
    out('        goblin_sbe_rt_group_begin(w, blocks[w->stage++]);')
    out('}')
    out('static inline void %s_begin(struct goblin_sbe_writer *w%s)'
        % (mc, field_params(m.fields)))
    out('{')
    out('    uint8_t *b = goblin_sbe_rt_begin(w, %s, %s_BLOCK_LENGTH);'
        % (mm, mm))
    out()
    if m.fields:
        out('    if (b == NULL)')
        out('        return;')
        emit_field_writes(out, m.fields, 'b')
    else:
        out('    (void)b;')
    out('}')
    for gi, g in enumerate(m.groups):
        emit_group_decl(out, m, g, gi)
    out('static inline int %s_end(struct goblin_sbe_writer *w%s)'
        % (mc, data_params(m.datas)))
    out('{')
    out('    %s_fill(w, %d);' % (mc, len(m.groups)))
    for d in m.datas:
        out('    goblin_sbe_rt_put_var(w, %s);' % param(d.name))
    out('    return goblin_sbe_rt_finish(w);')
    out('}')
    out()


def emit_tables(out, schema):
    out('/* ---- every template ---- */')
    out()
    out('/* The schema name of a template id, or NULL if unknown. */')
    out('static inline const char *goblin_sbe_template_name(unsigned id)')
    out('{')
    out('    switch (id) {')
    for m in sorted(schema.messages, key=lambda m: m.id):
        out('    case %d: return "%s";' % (m.id, m.name))
    out('    default: return NULL;')
    out('    }')
    out('}')
    out()
    out('/* Decodes m as whatever its template is, for checking a message')
    out(' * without using it. Returns 0 or a negative code (m->why says why);')
    out(' * an unknown template gives GOBLIN_EPROTO too. */')
    out('static inline int goblin_sbe_validate(struct goblin_sbe_msg *m)')
    out('{')
    out('    switch (m->template_id) {')
    for m in sorted(schema.messages, key=lambda m: m.id):
        mc = '%s_%s' % (PREFIX, m.c)
        out('    case %d: {' % m.id)
        out('        struct %s v;' % mc)
        out('        return %s_decode(&v, m);' % mc)
        out('    }')
    out('    default:')
    out('        return goblin_sbe_rt_fail(m, GOBLIN_EPROTO,')
    out('                                  "unknown template id");')
    out('    }')
    out('}')
    out()
    out('/* True for the templates the schema marks semanticType="reply". */')
    out('static inline bool goblin_sbe_is_reply(unsigned id)')
    out('{')
    out('    switch (id) {')
    for m in sorted(schema.messages, key=lambda m: m.id):
        if m.reply:
            out('    case %d:' % m.id)
    out('        return true;')
    out('    default:')
    out('        return false;')
    out('    }')
    out('}')
    out()
    out('/* Every request as X(ID, name): GOBLIN_SBE_##ID is its template')
    out(' * id and struct goblin_sbe_##name its decoder view. */')
    out('#define GOBLIN_SBE_REQUESTS(X) \\')
    reqs = [m for m in sorted(schema.messages, key=lambda m: m.id)
            if not m.reply]
    for i, m in enumerate(reqs):
        out('    X(%s, %s)%s' % (m.c.upper(), m.c,
                               ' \\' if i + 1 < len(reqs) else ''))
    out()
    ids = ', '.join(str(m.id) for m in sorted(schema.messages,
                                               key=lambda m: m.id))
    out('#define GOBLIN_SBE_TEMPLATE_COUNT %d' % len(schema.messages))
    out('static const uint16_t goblin_sbe_template_ids[] = {')
    line = '   '
    for tok in ids.split(', '):
        if len(line) + len(tok) + 2 > 78:
            out(line)
            line = '   '
        line += ' ' + tok + ','
    out(line)
    out('};')


def generate(schema, src_name):
    out = Out()
    out('/* goblin_sbe_gen.h - SBE codecs for schema "%s" id %d version %d.'
        % (schema.package, schema.id, schema.version))
    out(' *')
    out(' * GENERATED by sbe-schema/sbe_gen.py from %s; do not edit. The'
        % src_name)
    out(' * schema is the source of truth; docs/sbe.md describes the wire.')
    out(' *')
    out(' * Per message NAME: GOBLIN_SBE_NAME (template id), struct')
    out(' * goblin_sbe_name (decoded view: accessors goblin_sbe_name_FIELD(),')
    out(' * groups as iterators, data as slices into the message),')
    out(' * goblin_sbe_name_decode(), and either goblin_sbe_name_encode() or')
    out(' * _begin(), _GROUP_begin(), _GROUP_add() ..., _end(). Groups not')
    out(' * begun are written empty. */')
    out('#ifndef GOBLIN_SBE_GEN_H')
    out('#define GOBLIN_SBE_GEN_H')
    out()
    out('#include <math.h>')
    out('#include <stdbool.h>')
    out('#include <stddef.h>')
    out('#include <stdint.h>')
    out('#include <string.h>')
    out()
    out('#include "goblin/common.h"')
    out('#include "util/copy_short.h"')
    out()
    out('#define GOBLIN_SBE_SCHEMA_ID %d' % schema.id)
    out('#define GOBLIN_SBE_SCHEMA_VERSION %d' % schema.version)
    out('#define GOBLIN_SBE_MIN_VERSION %d' % max(1, min(
        [schema.version] + [m.since for m in schema.messages if m.since])))
    out('#define GOBLIN_SBE_WIRE_BIG %d' % (schema.order == 'bigEndian'))
    out('#define GOBLIN_SBE_HEADER_LENGTH 8')
    out('#define GOBLIN_SBE_GROUP_HEADER_LENGTH 4')
    out('#define GOBLIN_SBE_VAR_HEADER_LENGTH 4')
    out('#define GOBLIN_SBE_GROUP_MAX 65535')
    out('#define GOBLIN_SBE_VAR_MAX %du' % schema.var_max)
    out(RUNTIME)
    out('/* ---- enums and sets ---- */')
    out()
    emit_types(out, schema)
    for m in schema.messages:
        emit_message(out, m, schema)
    emit_tables(out, schema)
    out()
    out('#endif')
    return out.text()


# ---------------------------------------------------------------------------
# Round-trip tests: for every message, encode random values with the typed
# encoder, then decode them with the typed decoder and compare everything.

def gen_value(f):
    """A C expression giving a random value of f's type."""
    if f.type.acc == 'f64':
        return 'goblin_sbe_test_f64(rng)'
    if f.type.acc == 'f32':
        return 'goblin_sbe_test_f32(rng)'
    return '(%s)goblin_sbe_test_rand(rng)' % f.type.ctype


def same(f, a, b):
    if f.type.acc in ('f64', 'f32'):
        return 'goblin_sbe_test_same_%s(%s, %s)' % (f.type.acc, a, b)
    return '(%s) == (%s)' % (a, b)


def emit_test(out, m):
    mc = '%s_%s' % (PREFIX, m.c)
    out('static int goblin_sbe_test_%s(uint64_t *rng, uint8_t *buf, size_t cap)'
        % m.c)
    out('{')
    out('    struct goblin_sbe_writer w;')
    out('    struct goblin_sbe_msg msg;')
    out('    struct %s v;' % mc)
    out('    size_t want = GOBLIN_SBE_HEADER_LENGTH + %s_BLOCK_LENGTH;'
        % mc.upper())
    out('    int n;')
    for f in m.fields:
        out('    %s f_%s = %s;'
            % (f.type.ctype, snake(f.name), gen_value(f)))
    for d in m.datas:
        out('    struct goblin_slice d_%s = goblin_sbe_test_bytes(rng);'
            % snake(d.name))
    for g in m.groups:
        gn = snake(g.name)
        out('    unsigned n_%s = (unsigned)(goblin_sbe_test_rand(rng) %% 5);'
            % gn)
        for f in g.fields:
            out('    %s g_%s_%s[4];' % (f.type.ctype, gn, snake(f.name)))
        for d in g.datas:
            out('    struct goblin_slice g_%s_%s[4];' % (gn, snake(d.name)))
    if m.groups:
        out('    unsigned i;')
    out()
    out('    (void)rng;')
    # fill group values
    for g in m.groups:
        gn = snake(g.name)
        out('    want += GOBLIN_SBE_GROUP_HEADER_LENGTH;')
        out('    for (i = 0; i < n_%s; i++) {' % gn)
        out('        want += %s_%s_BLOCK_LENGTH;' % (mc.upper(), gn.upper()))
        for f in g.fields:
            out('        g_%s_%s[i] = %s;'
                % (gn, snake(f.name), gen_value(f)))
        for d in g.datas:
            out('        g_%s_%s[i] = goblin_sbe_test_bytes(rng);'
                % (gn, snake(d.name)))
            out('        want += 4 + g_%s_%s[i].len;' % (gn, snake(d.name)))
        out('    }')
    for d in m.datas:
        out('    want += 4 + d_%s.len;' % snake(d.name))
    out('    goblin_sbe_writer_init(&w, buf, cap, true);')
    fargs = ''.join(', f_%s' % snake(f.name) for f in m.fields)
    dargs = ''.join(', d_%s' % snake(d.name) for d in m.datas)
    if not m.groups:
        out('    n = %s_encode(&w%s%s);' % (mc, fargs, dargs))
    else:
        out('    %s_begin(&w%s);' % (mc, fargs))
        for g in m.groups:
            gn = snake(g.name)
            out('    if (n_%s > 0 || goblin_sbe_test_rand(rng) %% 2) {' % gn)
            out('        %s_%s_begin(&w);' % (mc, gn))
            out('        for (i = 0; i < n_%s; i++)' % gn)
            args = ''.join(', g_%s_%s[i]' % (gn, snake(x.name))
                           for x in g.fields + g.datas)
            out('            %s_%s_add(&w%s);' % (mc, gn, args))
            out('    }')
        out('    n = %s_end(&w%s);' % (mc, dargs))
    out('    if (n < 0 || (size_t)n != 4 + want)')
    out('        return __LINE__;')
    out('    if (goblin_sbe_rd_u32(buf) != want)')
    out('        return __LINE__;')
    out('    if (goblin_sbe_msg_wrap(&msg, buf + 4, want) != 0)')
    out('        return __LINE__;')
    out('    if (msg.template_id != %s || goblin_sbe_validate(&msg) != 0)'
        % mc.upper())
    out('        return __LINE__;')
    out('    if (%s_decode(&v, &msg) != 0)' % mc)
    out('        return __LINE__;')
    for f in m.fields:
        out('    if (!(%s))' % same(f, '%s_%s(&v)' % (mc, snake(f.name)),
                                     'f_' + snake(f.name)))
        out('        return __LINE__;')
    for g in m.groups:
        gn = snake(g.name)
        out('    if (v.%s.count != n_%s)' % (gn, gn))
        out('        return __LINE__;')
        out('    for (i = 0; i < n_%s; i++) {' % gn)
        out('        struct %s_%s e;' % (mc, gn))
        out()
        out('        if (!%s_%s_next(&v.%s, &e))' % (mc, gn, gn))
        out('            return __LINE__;')
        for f in g.fields:
            out('        if (!(%s))'
                % same(f, '%s_%s_%s(&e)' % (mc, gn, snake(f.name)),
                       'g_%s_%s[i]' % (gn, snake(f.name))))
            out('            return __LINE__;')
        for d in g.datas:
            out('        if (!goblin_sbe_test_eq(e.%s, g_%s_%s[i]))'
                % (snake(d.name), gn, snake(d.name)))
            out('            return __LINE__;')
        out('    }')
        out('    {')
        out('        struct %s_%s e;' % (mc, gn))
        out()
        out('        if (%s_%s_next(&v.%s, &e))' % (mc, gn, gn))
        out('            return __LINE__;')
        out('    }')
    for d in m.datas:
        out('    if (!goblin_sbe_test_eq(v.%s, d_%s))'
            % (snake(d.name), snake(d.name)))
        out('        return __LINE__;')
    out('    return 0;')
    out('}')
    out()


TEST_RUNTIME = r'''
static uint64_t goblin_sbe_test_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#define GOBLIN_SBE_TEST_UNUSED __attribute__((unused))

/* Any bit pattern, NaNs included, but no signalling NaN (which some
 * hardware quiets in flight). */
GOBLIN_SBE_TEST_UNUSED static double goblin_sbe_test_f64(uint64_t *s)
{
    uint64_t u = goblin_sbe_test_rand(s);
    double d;

    if ((u & 0x7ff0000000000000ull) == 0x7ff0000000000000ull)
        u |= 0x0008000000000000ull;
    memcpy(&d, &u, sizeof(d));
    return d;
}

GOBLIN_SBE_TEST_UNUSED static float goblin_sbe_test_f32(uint64_t *s)
{
    uint32_t u = (uint32_t)goblin_sbe_test_rand(s);
    float f;

    if ((u & 0x7f800000u) == 0x7f800000u)
        u |= 0x00400000u;
    memcpy(&f, &u, sizeof(f));
    return f;
}

static const uint8_t goblin_sbe_test_pool[64] = {
    0, 1, 2, 'a', 'b', 'c', 0xff, 0x80, 'x', 'y', 'z', '\r', '\n', ' ',
    7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
    25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41,
    42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56,
};

GOBLIN_SBE_TEST_UNUSED static struct goblin_slice
goblin_sbe_test_bytes(uint64_t *s)
{
    uint64_t r = goblin_sbe_test_rand(s);
    struct goblin_slice v;

    v.len = (size_t)(r % 17);
    v.ptr = goblin_sbe_test_pool + (r >> 8) % (64 - 16);
    return v;
}

GOBLIN_SBE_TEST_UNUSED static bool goblin_sbe_test_same_f64(double a,
                                                            double b)
{
    return memcmp(&a, &b, sizeof(a)) == 0;
}

GOBLIN_SBE_TEST_UNUSED static bool goblin_sbe_test_same_f32(float a, float b)
{
    return memcmp(&a, &b, sizeof(a)) == 0;
}

GOBLIN_SBE_TEST_UNUSED static bool goblin_sbe_test_eq(struct goblin_slice a,
                                                      struct goblin_slice b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}
'''


def generate_tests(schema):
    out = Out()
    out('/* goblin_sbe_gen_test.h - GENERATED by sbe-schema/sbe_gen.py: a')
    out(' * round trip through the typed encoder and decoder for every')
    out(' * template. Include after goblin_sbe_gen.h, in tests only. */')
    out('#ifndef GOBLIN_SBE_GEN_TEST_H')
    out('#define GOBLIN_SBE_GEN_TEST_H')
    out(TEST_RUNTIME)
    for m in schema.messages:
        emit_test(out, m)
    out('struct goblin_sbe_test_case {')
    out('    uint16_t id;')
    out('    const char *name;')
    out('    int (*run)(uint64_t *rng, uint8_t *buf, size_t cap);')
    out('};')
    out()
    out('static const struct goblin_sbe_test_case goblin_sbe_test_cases[] = {')
    for m in schema.messages:
        out('    {%d, "%s", goblin_sbe_test_%s},' % (m.id, m.name, m.c))
    out('};')
    out()
    out('#endif')
    return out.text()


# ---------------------------------------------------------------------------
# Markdown table for the documentation.

def type_name(f):
    return f.type.name if f.type.kind != 'prim' else f.type.prim


def markdown(schema):
    rows = ['| id | message | root block | groups | data | notes |',
            '|---:|---|---|---|---|---|']
    for m in sorted(schema.messages, key=lambda m: m.id):
        fields = ', '.join('%s %s @%d' % (f.name, type_name(f), f.offset)
                           for f in m.fields)
        fields = (fields + ' ' if fields else '') + '[%d]' % m.block
        groups = '; '.join(
            '%s {%s}' % (g.name, ', '.join(
                ['%s %s @%d' % (f.name, type_name(f), f.offset)
                 for f in g.fields] + [d.name for d in g.datas]))
            for g in m.groups) or '-'
        datas = ', '.join(d.name for d in m.datas) or '-'
        rows.append('| %d | %s | %s | %s | %s | %s |'
                    % (m.id, m.name, fields, groups, datas,
                       m.desc.replace('|', '/')))
    return '\n'.join(rows) + '\n'


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--markdown', action='store_true')
    ap.add_argument('schema')
    ap.add_argument('out', nargs='?')
    ap.add_argument('test_out', nargs='?')
    args = ap.parse_args(argv)
    try:
        schema = Schema(args.schema)
    except (SchemaError, ET.ParseError) as e:
        sys.stderr.write('%s: %s\n' % (args.schema, e))
        return 1
    if args.markdown:
        sys.stdout.write(markdown(schema))
        return 0
    if args.out is None:
        ap.error('an output file is required')
    src = 'sbe-schema/' + args.schema.replace('\\', '/').split('/')[-1]
    with open(args.out, 'w', encoding='utf-8') as f:
        f.write(generate(schema, src))
    if args.test_out:
        with open(args.test_out, 'w', encoding='utf-8') as f:
            f.write(generate_tests(schema))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
