"""test_redis_harness.py - goblind starts a unit the way Redis 7.0's own
test harness (tests/support/server.tcl, external-server mode) starts
every one, with nothing answering an error that would stop it.

    /usr/bin/python3 test_redis_harness.py GOBLIND

The harness connects and selects database 9, then FLUSHALL, FUNCTION
FLUSH, and CONFIG SET of each unit's overrides: the encoding thresholds
under their listpack names and their old ziplist aliases, and the limits
the units change. The same sequence runs on redis-server first, so the
list itself is checked to be one Redis accepts; then on goblind, over
RESP2 and again over RESP3 (HELLO 3), where every reply must be a
success. It also checks that what was set reads back as redis-server
reads it, and that the harness's database 9 is really separate.
"""

import sys

import e2e

# CONFIG SET pairs the Redis 7.0 units use in their overrides (tests/unit
# and tests/unit/type), old names included.
OVERRIDES = [
    (b"hash-max-ziplist-entries", b"512"), (b"hash-max-ziplist-value",
                                            b"64"),
    (b"hash-max-listpack-entries", b"512"), (b"hash-max-listpack-value",
                                             b"64"),
    (b"zset-max-ziplist-entries", b"128"), (b"zset-max-ziplist-value",
                                            b"64"),
    (b"zset-max-listpack-entries", b"128"), (b"zset-max-listpack-value",
                                             b"64"),
    (b"list-max-ziplist-size", b"-2"), (b"list-max-listpack-size", b"-2"),
    (b"list-compress-depth", b"0"), (b"set-max-intset-entries", b"512"),
    (b"stream-node-max-bytes", b"4096"), (b"stream-node-max-entries",
                                          b"100"),
    (b"hll-sparse-max-bytes", b"3000"), (b"proto-max-bulk-len", b"512mb"),
    (b"client-query-buffer-limit", b"1gb"), (b"lua-time-limit", b"5000"),
    (b"busy-reply-threshold", b"5000"), (b"appendonly", b"no"),
    (b"save", b""), (b"activerehashing", b"yes"),
    (b"latency-tracking", b"yes"), (b"lazyfree-lazy-user-flush", b"no"),
    (b"maxmemory", b"0"), (b"maxmemory-policy", b"noeviction"),
    (b"slowlog-log-slower-than", b"10000"), (b"slowlog-max-len", b"128"),
    (b"latency-monitor-threshold", b"0"), (b"notify-keyspace-events", b""),
    (b"lfu-log-factor", b"10"), (b"lfu-decay-time", b"1"),
    (b"active-expire-effort", b"1"), (b"hz", b"10"),
]


def start_sequence():
    seq = [[b"SELECT", b"9"], [b"FLUSHALL"], [b"FUNCTION", b"FLUSH"],
           [b"FUNCTION", b"FLUSH", b"SYNC"], [b"FUNCTION", b"FLUSH",
                                               b"ASYNC"]]
    seq += [[b"CONFIG", b"SET", k, v] for k, v in OVERRIDES]
    seq += [[b"PING"], [b"DBSIZE"]]
    return seq


def errors_of(client, seq):
    replies = client.pipeline(seq)
    return [(c, r) for c, r in zip(seq, replies) if r[0] == "-"]


def test_redis_accepts_the_sequence(goblind):
    srv = e2e.redis_server()
    try:
        bad = errors_of(srv.client(), start_sequence())
        assert not bad, "redis-server refuses %r" % bad[:3]
    finally:
        srv.kill_now()


def test_goblind_starts_a_unit(goblind):
    srv = e2e.goblind(goblind)
    try:
        for resp3 in (False, True):
            c = srv.client()
            if resp3:
                assert c.call(b"HELLO", b"3")[0] == "%"
            bad = errors_of(c, start_sequence())
            assert not bad, "goblind refuses %r" % bad[:3]
        c = srv.client()
        ref = e2e.redis_server()
        try:
            r = ref.client()
            errors_of(r, start_sequence())
            for k, _ in OVERRIDES:
                got = c.call(b"CONFIG", b"GET", k)
                want = r.call(b"CONFIG", b"GET", k)
                assert got == want, "CONFIG GET %r: %r, redis %r" % (
                    k, got, want)
        finally:
            ref.kill_now()
        # The harness's database is its own.
        assert c.call(b"SELECT", b"9") == ("+", b"OK")
        assert c.call(b"SET", b"k", b"v") == ("+", b"OK")
        assert c.call(b"SELECT", b"0") == ("+", b"OK")
        assert c.call(b"EXISTS", b"k") == (":", 0)
        assert c.call(b"FUNCTION", b"FLUSH", b"BOGUS")[1].startswith(
            b"ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
        e2e.check_stopped_cleanly(srv)
    finally:
        srv.kill_now()


if __name__ == "__main__":
    e2e.run_tests([test_redis_accepts_the_sequence,
                   test_goblind_starts_a_unit], sys.argv[1])
