"""diff_bits.py - the differential stages of test_differential.py for
bitmaps, LCS, HyperLogLog and geo: fixed command lists, plus seeded
random ones, whose replies must be byte-identical between redis-server
and goblind (every reply here is an integer, a string, an array of them
or an error, so nothing needs normalizing)."""

BITMAP_FIXED = [
    [b"SETBIT", b"bm:b", b"7", b"1"], [b"GET", b"bm:b"],
    [b"SETBIT", b"bm:b", b"100", b"1"], [b"GETBIT", b"bm:b", b"100"],
    [b"GETBIT", b"bm:b", b"4294967295"], [b"GETBIT", b"bm:b", b"4294967296"],
    [b"SETBIT", b"bm:b", b"4294967296", b"1"],
    [b"SETBIT", b"bm:b", b"-1", b"1"], [b"SETBIT", b"bm:b", b"1", b"2"],
    [b"SETBIT", b"bm:b", b"1", b"x"], [b"SETBIT", b"bm:b", b" 1", b"1"],
    [b"SET", b"bm:i", b"12345"], [b"SETBIT", b"bm:i", b"0", b"0"],
    [b"OBJECT", b"ENCODING", b"bm:i"], [b"GET", b"bm:i"],
    [b"HSET", b"bm:h", b"f", b"v"], [b"SETBIT", b"bm:h", b"1", b"1"],
    [b"GETBIT", b"bm:h", b"1"], [b"BITCOUNT", b"bm:h"],
    [b"BITPOS", b"bm:h", b"1"], [b"BITPOS", b"bm:h", b"2"],
    [b"BITFIELD", b"bm:h", b"GET", b"u8", b"0"],
    [b"BITFIELD_RO", b"bm:h", b"SET", b"u8", b"0", b"1"],
    [b"BITOP", b"AND", b"bm:d", b"bm:b", b"bm:h"],
    [b"BITOP", b"NOT", b"bm:d", b"bm:b", b"bm:i"],
    [b"BITOP", b"NAND", b"bm:d", b"bm:b"],
    [b"BITOP", b"AND", b"bm:d", b"nokey"], [b"EXISTS", b"bm:d"],
    [b"BITCOUNT", b"nokey", b"a", b"b"], [b"BITCOUNT", b"bm:b", b"1"],
    [b"BITCOUNT", b"bm:b", b"-1", b"-3", b"foo"],
    [b"BITCOUNT", b"bm:b", b"1", b"1", b"foo"],
    [b"BITPOS", b"bm:b", b"0", b"1", b"a", b"foo"],
    [b"BITPOS", b"bm:b", b"0", b"1", b"2", b"3", b"4"],
    [b"SET", b"bm:e", b""], [b"BITPOS", b"bm:e", b"0"],
    [b"BITPOS", b"bm:e", b"1"], [b"BITCOUNT", b"bm:e", b"0", b"-1"],
    [b"BITFIELD", b"bm:f", b"SET", b"i8", b"0", b"100", b"INCRBY", b"i8",
     b"0", b"100", b"OVERFLOW", b"SAT", b"INCRBY", b"i8", b"0", b"100",
     b"OVERFLOW", b"FAIL", b"INCRBY", b"i8", b"0", b"-1000", b"GET", b"i8",
     b"0"],
    [b"BITFIELD", b"bm:f", b"SET", b"i64", b"8", b"-9223372036854775808",
     b"INCRBY", b"i64", b"8", b"-1", b"OVERFLOW", b"SAT", b"INCRBY", b"i64",
     b"8", b"-1", b"INCRBY", b"i64", b"8", b"9223372036854775807",
     b"INCRBY", b"i64", b"8", b"1"],
    [b"BITFIELD", b"bm:f", b"SET", b"u63", b"80", b"-1", b"OVERFLOW",
     b"SAT", b"SET", b"u63", b"80", b"-1", b"INCRBY", b"u63", b"80", b"1",
     b"OVERFLOW", b"FAIL", b"INCRBY", b"u63", b"80", b"1"],
    [b"BITFIELD", b"bm:f", b"SET", b"i8", b"#3", b"1", b"GET", b"i8", b"#3",
     b"GET", b"u8", b"24", b"GET", b"u1", b"4294967295"],
    [b"BITFIELD", b"bm:f", b"GET", b"i8", b"#536870912"],
    [b"BITFIELD", b"bm:f", b"GET", b"i8", b"#-1"],
    [b"BITFIELD", b"bm:f", b"GET", b"u64", b"0"],
    [b"BITFIELD", b"bm:f", b"GET", b"i65", b"0"],
    [b"BITFIELD", b"bm:f", b"GET", b"I8", b"0"],
    [b"BITFIELD", b"bm:f", b"SET", b"i8", b"0"],
    [b"BITFIELD", b"bm:f", b"OVERFLOW", b"foo", b"GET", b"i8", b"0"],
    [b"BITFIELD", b"bm:f", b"OVERFLOW"], [b"BITFIELD", b"bm:f", b"FOO"],
    [b"BITFIELD", b"bm:f"], [b"BITFIELD", b"nokey", b"GET", b"u8", b"0"],
    [b"EXISTS", b"nokey"], [b"BITFIELD_RO", b"bm:f", b"GET", b"u8", b"0"],
    [b"BITFIELD_RO", b"bm:f", b"INCRBY", b"u8", b"0", b"1"],
    [b"GET", b"bm:f"],
    # proto-max-bulk-len bounds offsets (its smallest value is 1 MB)
    [b"CONFIG", b"SET", b"proto-max-bulk-len", b"1mb"],
    [b"SETBIT", b"bm:p", b"8388607", b"1"], [b"STRLEN", b"bm:p"],
    [b"SETBIT", b"bm:p", b"8388608", b"1"],
    [b"BITFIELD", b"bm:p", b"GET", b"u8", b"8388608"],
    [b"CONFIG", b"SET", b"proto-max-bulk-len", b"512mb"],
    [b"BITCOUNT", b"bm:p"], [b"DEL", b"bm:p"],
]


def bitmap_random(r, count=600):
    """Random strings, then BITCOUNT, BITPOS, BITFIELD, SETBIT and BITOP
    over random ranges, offsets and widths."""
    keys = [b"bm:r%d" % i for i in range(4)]
    c = []
    for k in keys:
        n = r.choice([0, 1, 3, 8, 9, 17, 64, 100])
        c.append([b"SET", k, bytes(r.choice([0, 255, r.randrange(256)])
                                   for _ in range(n))])
    idx = [b"0", b"1", b"-1", b"2", b"-2", b"7", b"8", b"-8", b"9", b"63",
           b"64", b"100", b"-100", b"800", b"13", b"-13"]
    for _ in range(count):
        k = r.choice(keys)
        w = r.random()
        unit = [r.choice([b"BIT", b"BYTE", b"bit"])] if r.random() < 0.6 \
            else []
        if w < 0.25:
            c.append([b"BITCOUNT", k] + ([r.choice(idx), r.choice(idx)] +
                                         unit if r.random() < 0.8 else []))
        elif w < 0.5:
            extra = [r.choice(idx)] if r.random() < 0.8 else []
            if extra and r.random() < 0.7:
                extra += [r.choice(idx)] + unit
            c.append([b"BITPOS", k, r.choice([b"0", b"1"])] + extra)
        elif w < 0.65:
            c.append([b"SETBIT", k, b"%d" % r.randrange(900),
                      r.choice([b"0", b"1"])])
        elif w < 0.85:
            ops = []
            for _ in range(r.randint(1, 4)):
                t = (b"i%d" % r.randint(1, 64)) if r.random() < 0.5 else \
                    (b"u%d" % r.randint(1, 63))
                off = b"%d" % r.randrange(600) if r.random() < 0.8 else \
                    b"#%d" % r.randrange(20)
                kind = r.random()
                if kind < 0.2:
                    ops += [b"OVERFLOW", r.choice([b"WRAP", b"SAT", b"FAIL"])]
                if kind < 0.4:
                    ops += [b"GET", t, off]
                elif kind < 0.7:
                    ops += [b"SET", t, off, b"%d" % r.randint(-2**63,
                                                             2**63 - 1)]
                else:
                    ops += [b"INCRBY", t, off,
                            b"%d" % r.choice([1, -1, 100, -100, 2**62,
                                              -2**63, 2**63 - 1])]
            c.append([r.choice([b"BITFIELD", b"BITFIELD"]), k] + ops)
        elif w < 0.95:
            op = r.choice([b"AND", b"OR", b"XOR", b"NOT"])
            src = [r.choice(keys + [b"nokey"])]
            if op != b"NOT":
                src += [r.choice(keys + [b"nokey"])
                        for _ in range(r.randint(0, 3))]
            c.append([b"BITOP", op, r.choice(keys + [b"bm:dst"])] + src)
        else:
            c.append([b"GET", k])
    return c + [[b"GET", k] for k in keys + [b"bm:dst"]]


LCS_FIXED = [
    [b"MSET", b"lcs:a", b"ohmytext", b"lcs:b", b"mynewtext"],
    [b"LCS", b"lcs:a", b"lcs:b"], [b"LCS", b"lcs:a", b"lcs:b", b"LEN"],
    [b"LCS", b"lcs:a", b"lcs:b", b"IDX"],
    [b"LCS", b"lcs:a", b"lcs:b", b"IDX", b"MINMATCHLEN", b"4",
     b"WITHMATCHLEN"],
    [b"LCS", b"lcs:a", b"lcs:b", b"IDX", b"LEN"],
    [b"LCS", b"lcs:a", b"lcs:b", b"MINMATCHLEN"],
    [b"LCS", b"lcs:a", b"lcs:b", b"MINMATCHLEN", b"x"],
    [b"LCS", b"lcs:a", b"lcs:b", b"MINMATCHLEN", b"-5", b"IDX"],
    [b"LCS", b"lcs:a", b"lcs:b", b"FOO"], [b"LCS", b"lcs:a", b"nokey"],
    [b"LCS", b"nokey", b"nokey2", b"IDX"],
    [b"HSET", b"lcs:h", b"f", b"v"], [b"LCS", b"lcs:a", b"lcs:h"],
    [b"LCS", b"lcs:h", b"lcs:a", b"FOO"],
    [b"SET", b"lcs:n", b"12345"], [b"SET", b"lcs:m", b"23451"],
    [b"LCS", b"lcs:n", b"lcs:m", b"IDX", b"WITHMATCHLEN"],
    [b"SUBSTR", b"lcs:a", b"1", b"3"], [b"SUBSTR", b"lcs:a", b"-3", b"-1"],
]


def lcs_random(r, count=150):
    c = []
    for _ in range(count):
        a = bytes(r.choice(b"abc\x00") for _ in range(r.randint(0, 30)))
        b = bytes(r.choice(b"abc\x00") for _ in range(r.randint(0, 30)))
        c.append([b"MSET", b"lcs:x", a, b"lcs:y", b])
        opts = r.choice([[], [b"LEN"], [b"IDX"], [b"IDX", b"WITHMATCHLEN"],
                         [b"IDX", b"MINMATCHLEN", b"%d" % r.randint(0, 4)],
                         [b"IDX", b"MINMATCHLEN", b"2", b"WITHMATCHLEN"]])
        c.append([b"LCS", b"lcs:x", b"lcs:y"] + opts)
    return c


def stages(rng):
    """(name, commands) pairs, each list compared byte for byte."""
    return [("bitmaps", BITMAP_FIXED), ("bitmaps random", bitmap_random(rng)),
            ("LCS", LCS_FIXED), ("LCS random", lcs_random(rng))]


def run(pair, rng):
    for name, cmds in stages(rng):
        err = pair.run(cmds, exact=True)
        if err:
            return "%s: %s" % (name, err)
    return None
