// microbench.cpp - in-process costs of sorted-set reads and writes at
// scale, layer by layer, next to the memory floor of the same machine.
//
// Layers (each a benchmark family, named category/metric):
//   floor/          one dependent random DRAM access (a pointer chase over
//                   a buffer much larger than the LLC), one L3-sized and
//                   one L1-resident chase: the units every figure is read in
//   raw/            a standalone sorted-set object: no key lookup
//   store/          the public C API on a store key (goblin_zset_*)
//   resp/           the reply alone, appended into a reused buffer
//   command_into/   the command layer's execute entry point: lookup,
//                   arity, dispatch, handler, reply into a reused buffer
//   command_string/ an inline command line fed to a session: inline
//                   parsing, then as command_into, reply into the
//                   session's output
//   parse_into/     RESP multibulk bytes fed to a session, every op's
//                   request read from an array built before timing
//   parse_into_hot/ the same requests, each written into one reused
//                   buffer just before it is fed (as recv leaves them)
//   zrange_breakdown/ the pieces of a 16-entry ZRANGE, each alone
//   write_path/     ZADD updates (the score really changes and the member
//                   moves), ZADD of new members into a fresh set, ZREM +
//                   restore: raw, through the store, through command_into
//
// Method: the fixture (members "member:%08d", seeded scores, inserted in a
// seeded random order) is built once before any timing. Every op reads
// its inputs from arrays laid out in op order (sequential, so input
// fetching costs no misses) and indexed by a running counter. Each run is
// exactly one pass of --ops operations (Iterations(ops)), timed as a
// whole: no per-op timer, no PauseTiming. Per-run inputs that depend on
// state (update scores, command texts) are prepared before the timed loop.
// Results go through DoNotOptimize. Repetitions give the median.
//
// Knobs (before any --benchmark_* flag): --members N (1000000), --ops N
// (1000000), --range N (16), --seed S (12345), --score-shape
// integer|fractional, --reps N (5), --chase-mib N (1024).
// This is a benchmark: it reports and never judges.
#include <benchmark/benchmark.h>

#include <sys/mman.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "goblin.h"
#include "microbench_raw.h"

namespace {

struct Knobs {
    size_t members = 1000000;
    size_t ops = 1000000;
    size_t range = 16;
    uint64_t seed = 12345;
    bool fractional = false;
    int reps = 5;
    size_t chase_mib = 1024;
};

Knobs K;

// Scores move by this much on an update: far enough that the member
// changes rank (about SHIFT * members / 2^32 places).
constexpr double SHIFT = 1048576.0;
constexpr size_t NAME = 16; // "member:%08d" is 15 bytes; slot of 16

uint64_t splitmix(uint64_t &s)
{
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void permute(std::vector<uint32_t> &a, size_t n, uint64_t &s)
{
    size_t base = a.size();

    for (size_t i = 0; i < n; i++)
        a.push_back((uint32_t)i);
    for (size_t i = n; i > 1; i--)
        std::swap(a[base + i - 1], a[base + splitmix(s) % i]);
}

goblin_slice sl(const void *p, size_t n)
{
    return goblin_slice{p, n};
}

goblin_slice sl(const char *s)
{
    return goblin_slice{s, strlen(s)};
}

struct ScoreText {
    uint8_t len;
    char s[31];
};

struct Entry {
    goblin_slice m;
    double score;
};

// A reply buffer that is emptied, not freed, between ops.
struct Reply {
    goblin_buf buf{};
    goblin_resp_writer w{};

    Reply() { goblin_resp_writer_init(&w, &buf, 2); }
    ~Reply() { goblin_buf_free(&buf); }
    goblin_sink *sink()
    {
        buf.len = 0;
        return &w.sink;
    }
};

// A store with an engine and one local session on it.
struct Server {
    goblin_store *st = nullptr;
    goblin_engine *eng = nullptr;
    goblin_session *sess = nullptr;

    bool open(goblin_store *store)
    {
        goblin_engine_config ec{};
        goblin_session_info si{};

        st = store;
        ec.store = st;
        si.transport = GOBLIN_TRANSPORT_LOCAL;
        si.fd = -1;
        return goblin_engine_open(&ec, &eng) == 0 &&
               goblin_session_open(eng, &si, &sess) == 0;
    }
    void close()
    {
        goblin_session_close(sess);
        goblin_engine_close(eng);
        goblin_store_close(st);
        sess = nullptr;
        eng = nullptr;
        st = nullptr;
    }
};

struct Fixture {
    size_t n = 0, ops = 0, wops = 0, range = 0, nstarts = 0;
    std::vector<char> names;       // n * NAME, by member id
    std::vector<double> base;      // score by member id
    std::vector<uint32_t> order;   // insertion order
    std::vector<uint32_t> look;    // member id of each op
    std::vector<char> look_text;   // ops * NAME, member text in op order
    std::vector<double> look_score;
    std::vector<uint32_t> starts;  // range start of each op
    std::vector<char> start_text;  // ops * 16: start and stop as text
    std::vector<char> stop_text;
    std::vector<ScoreText> rank_text; // score text at each rank
    std::vector<Entry> entries;       // (member view, score) at each rank
    mb_zset *raw = nullptr;
    mb_split *split = nullptr;
    Server srv;
    size_t store_bytes = 0;
    double moved = 0;
    // Completed update passes per target: parity says where scores are.
    uint64_t raw_passes = 0, store_passes = 0;
    Reply reply;
    uint64_t sum = 0;

    const char *name(uint32_t id) const { return &names[id * NAME]; }
    goblin_slice look_member(size_t k) const
    {
        return sl(&look_text[k * NAME], NAME - 1);
    }
    double shift(uint64_t passes) const { return passes & 1 ? SHIFT : 0; }
};

Fixture *F;
Fixture *build_fixture();

// The fixture is built on first use, before that benchmark's timed loop.
Fixture &fx()
{
    if (F == nullptr)
        F = build_fixture();
    return *F;
}

// ---- building the fixture ----

void make_inputs(Fixture &f)
{
    uint64_t s = K.seed;

    f.names.resize(f.n * NAME);
    f.base.resize(f.n);
    for (size_t i = 0; i < f.n; i++) {
        snprintf(&f.names[i * NAME], NAME, "member:%08u",
                 (unsigned)(i % 100000000));
        double v = (double)(uint32_t)splitmix(s);
        if (K.fractional)
            v += (double)(splitmix(s) % 999 + 1) / 1000.0;
        f.base[i] = v;
    }
    permute(f.order, f.n, s);
    while (f.look.size() < f.ops)
        permute(f.look, f.n, s);
    f.look.resize(f.ops);
    f.look_text.resize(f.ops * NAME);
    f.look_score.resize(f.ops);
    f.starts.resize(f.ops);
    f.start_text.resize(f.ops * 16);
    f.stop_text.resize(f.ops * 16);
    for (size_t k = 0; k < f.ops; k++) {
        memcpy(&f.look_text[k * NAME], f.name(f.look[k]), NAME);
        f.look_score[k] = f.base[f.look[k]];
        f.starts[k] = (uint32_t)(splitmix(s) % f.nstarts);
        // Text in bytes 0..14, its length in byte 15.
        f.start_text[k * 16 + 15] = (char)snprintf(
            &f.start_text[k * 16], 15, "%" PRIu32, f.starts[k]);
        f.stop_text[k * 16 + 15] = (char)snprintf(
            &f.stop_text[k * 16], 15, "%zu", f.starts[k] + f.range - 1);
    }
}

bool load_sets(Fixture &f)
{
    goblin_store *st;
    std::vector<goblin_zpair> pairs(f.n);

    if (mb_zset_open(&f.raw) != 0 || goblin_store_open(nullptr, &st) != 0)
        return false;
    size_t used0 = goblin_store_used_memory(st);
    for (size_t i = 0; i < f.n; i++) {
        uint32_t id = f.order[i];
        goblin_slice m = sl(f.name(id), NAME - 1);

        pairs[i] = goblin_zpair{f.base[id], m};
        if (mb_zset_add(f.raw, m, f.base[id]) < 0 ||
            goblin_zset_add(st, sl("leaders"), m, f.base[id]) < 0)
            return false;
    }
    f.store_bytes = goblin_store_used_memory(st) - used0;
    if (!f.srv.open(st))
        return false;
    return mb_split_open(pairs.data(), f.n, &f.split) == 0;
}

void make_rank_inputs(Fixture &f)
{
    f.rank_text.resize(f.n);
    f.entries.resize(f.n);
    for (size_t r = 0; r < f.n; r++) {
        double s = mb_split_score_at(f.split, r);
        uint32_t id = mb_split_id_at(f.split, r);

        f.rank_text[r].len = (uint8_t)goblin_double_format(f.rank_text[r].s, s);
        f.entries[r] = Entry{mb_split_member(f.split, id), s};
    }
    // How often an update of SHIFT really moves the member.
    size_t sample = std::min<size_t>(f.wops, 1000), moved = 0;
    for (size_t k = 0; k < sample; k++) {
        double b = f.base[f.look[k]];
        moved += mb_zset_rank_of_score(f.raw, b) !=
                 mb_zset_rank_of_score(f.raw, b + SHIFT);
    }
    f.moved = sample ? (double)moved / (double)sample : 0;
}

Fixture *build_fixture()
{
    auto *f = new Fixture;

    f->n = K.members;
    f->ops = K.ops;
    f->wops = std::min(K.ops, K.members);
    f->range = std::min(K.range, K.members);
    f->nstarts = K.members - f->range + 1;
    make_inputs(*f);
    if (!load_sets(*f)) {
        fprintf(stderr, "microbench: building the fixture failed\n");
        exit(1);
    }
    make_rank_inputs(*f);
    return f;
}

// ---- the floor: pointer chases ----

// Kilobytes of anonymous memory in transparent huge pages, process-wide.
long anon_huge_kb()
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    long kb = 0;

    if (f == nullptr)
        return 0;
    while (fgets(line, sizeof(line), f) != nullptr)
        if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

struct Chase {
    uint8_t *map = nullptr, *mem = nullptr;
    size_t bytes = 0, mapped = 0;
    double huge = 0; // fraction of the buffer in huge pages

    // A random cyclic permutation over 64-byte lines (Sattolo), so every
    // step is a dependent load of a line the prefetchers cannot guess.
    // With hugepages the buffer asks for transparent huge pages, which
    // takes most page-table walks out of each step.
    Chase(size_t b, bool hugepages) : bytes(b)
    {
        size_t lines = bytes / 64, align = 2u << 20;
        uint64_t s = K.seed ^ bytes;
        std::vector<uint32_t> p(lines);
        long huge0 = anon_huge_kb();

        mapped = bytes + align;
        map = (uint8_t *)mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (map == MAP_FAILED) {
            perror("mmap");
            exit(1);
        }
        mem = (uint8_t *)(((uintptr_t)map + align - 1) &
                          ~(uintptr_t)(align - 1));
        madvise(mem, bytes, hugepages ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
        for (size_t i = 0; i < lines; i++)
            p[i] = (uint32_t)i;
        for (size_t i = lines - 1; i > 0; i--)
            std::swap(p[i], p[splitmix(s) % i]);
        for (size_t i = 0; i < lines; i++) {
            uint64_t next = (uint64_t)p[i] * 64;
            memcpy(mem + (uint64_t)i * 64, &next, 8);
        }
        huge = (double)(anon_huge_kb() - huge0) * 1024 / (double)bytes;
    }
    ~Chase() { munmap(map, mapped); }
};

void chase(benchmark::State &state, Chase *&c, size_t bytes, bool hugepages)
{
    if (c == nullptr)
        c = new Chase(bytes, hugepages);
    uint64_t p = 0;
    const uint8_t *mem = c->mem;

    for (auto _ : state)
        p = *(const uint64_t *)(const void *)(mem + p);
    benchmark::DoNotOptimize(p);
    state.counters["buffer_MiB"] = (double)bytes / (1 << 20);
    state.counters["huge_page_fraction"] = c->huge;
}

Chase *dram_chase, *dram_huge_chase, *fixture_chase, *l3_chase, *l1_chase;

void BM_dram(benchmark::State &s)
{
    chase(s, dram_chase, K.chase_mib << 20, false);
}

void BM_dram_huge(benchmark::State &s)
{
    chase(s, dram_huge_chase, K.chase_mib << 20, true);
}

// A buffer about as large as the 1M-member fixture's set.
void BM_fixture_sized(benchmark::State &s)
{
    chase(s, fixture_chase, 64u << 20, false);
}

void BM_l3(benchmark::State &s) { chase(s, l3_chase, 8u << 20, false); }
void BM_l1(benchmark::State &s) { chase(s, l1_chase, 16u << 10, false); }

// The op index of a timed loop: 0 .. n - 1, then around again.
inline void step(size_t &k, size_t n)
{
    if (++k == n)
        k = 0;
}

} // namespace

// ---- reads: raw object and store API ----

namespace {

void BM_raw_zscore(benchmark::State &state)
{
    Fixture &f = fx();
    size_t k = 0, hits = 0;
    double score = 0;

    for (auto _ : state) {
        hits += (size_t)mb_zset_score(f.raw, f.look_member(k), &score);
        benchmark::DoNotOptimize(score);
        step(k, f.ops);
    }
    state.counters["hit_rate"] = (double)hits / (double)state.iterations();
}

void raw_rank(benchmark::State &state, int rev)
{
    Fixture &f = fx();
    size_t k = 0, hits = 0;
    int64_t rank = 0;

    for (auto _ : state) {
        hits += (size_t)mb_zset_rank(f.raw, f.look_member(k), rev, &rank);
        benchmark::DoNotOptimize(rank);
        step(k, f.ops);
    }
    state.counters["hit_rate"] = (double)hits / (double)state.iterations();
}

void BM_raw_zrank(benchmark::State &s) { raw_rank(s, 0); }
void BM_raw_zrevrank(benchmark::State &s) { raw_rank(s, 1); }

void BM_raw_zrange(benchmark::State &state)
{
    Fixture &f = fx();
    size_t k = 0;

    for (auto _ : state) {
        benchmark::DoNotOptimize(mb_zset_walk(f.raw, f.starts[k], f.range));
        step(k, f.ops);
    }
}

void BM_store_zscore(benchmark::State &state)
{
    Fixture &f = fx();
    goblin_slice key = sl("leaders");
    size_t k = 0, hits = 0;
    double score = 0;

    for (auto _ : state) {
        hits += (size_t)goblin_zset_score(f.srv.st, key, f.look_member(k),
                                          &score);
        benchmark::DoNotOptimize(score);
        step(k, f.ops);
    }
    state.counters["hit_rate"] = (double)hits / (double)state.iterations();
}

void store_rank(benchmark::State &state, int rev)
{
    Fixture &f = fx();
    goblin_slice key = sl("leaders");
    size_t k = 0, hits = 0;
    int64_t rank = 0;

    for (auto _ : state) {
        hits += (size_t)goblin_zset_rank(f.srv.st, key, f.look_member(k), rev,
                                         &rank, nullptr);
        benchmark::DoNotOptimize(rank);
        step(k, f.ops);
    }
    state.counters["hit_rate"] = (double)hits / (double)state.iterations();
}

void BM_store_zrank(benchmark::State &s) { store_rank(s, 0); }
void BM_store_zrevrank(benchmark::State &s) { store_rank(s, 1); }

void BM_store_zrange(benchmark::State &state)
{
    Fixture &f = fx();
    goblin_slice key = sl("leaders"), m;
    goblin_zrange r{};
    goblin_zset_iter it;
    size_t k = 0;
    double score;

    r.by = GOBLIN_ZRANGE_BY_RANK;
    for (auto _ : state) {
        uint64_t sum = 0;

        r.start = f.starts[k];
        r.stop = (int64_t)(f.starts[k] + f.range - 1);
        goblin_zset_range(f.srv.st, key, &r, &it);
        while (goblin_zset_next(&it, &m, &score))
            sum += m.len + ((const uint8_t *)m.ptr)[0] +
                   ((const uint8_t *)m.ptr)[m.len - 1] + (uint64_t)score;
        benchmark::DoNotOptimize(sum);
        step(k, f.ops);
    }
}

// ---- the reply alone ----

void BM_resp_zscore(benchmark::State &state)
{
    Fixture &f = fx();
    size_t k = 0;

    for (auto _ : state) {
        goblin_sink *s = f.reply.sink();

        s->ops->dbl(s, f.look_score[k]);
        benchmark::DoNotOptimize(f.reply.buf.data);
        step(k, f.ops);
    }
}

void BM_resp_zrank(benchmark::State &state)
{
    Fixture &f = fx();
    size_t k = 0;

    // A rank is uniform over 0 .. members - 1, as the looked-up ids are.
    for (auto _ : state) {
        goblin_sink *s = f.reply.sink();

        s->ops->integer(s, (int64_t)f.look[k]);
        benchmark::DoNotOptimize(f.reply.buf.data);
        step(k, f.ops);
    }
}

void resp_range(benchmark::State &state, bool withscores)
{
    Fixture &f = fx();
    size_t k = 0;

    for (auto _ : state) {
        goblin_sink *s = f.reply.sink();
        const Entry *e = &f.entries[f.starts[k]];

        s->ops->array(s, withscores ? 2 * f.range : f.range);
        for (size_t i = 0; i < f.range; i++) {
            if (withscores)
                s->ops->bulk_dbl(s, e[i].m.ptr, e[i].m.len, e[i].score);
            else
                s->ops->bulk(s, e[i].m.ptr, e[i].m.len);
        }
        benchmark::DoNotOptimize(f.reply.buf.data);
        step(k, f.ops);
    }
}

void BM_resp_zrange(benchmark::State &s) { resp_range(s, false); }
void BM_resp_zrange_ws(benchmark::State &s) { resp_range(s, true); }

} // namespace

// ---- through the command layer ----

namespace {

enum Cmd { C_ZSCORE, C_ZRANK, C_ZREVRANK, C_ZRANGE, C_ZRANGE_WS };

goblin_slice text16(const std::vector<char> &v, size_t k)
{
    return sl(&v[k * 16], (size_t)(unsigned char)v[k * 16 + 15]);
}

// The argv of op k of command c on the store key.
int make_argv(const Fixture &f, Cmd c, size_t k, goblin_slice *argv)
{
    static const char *const names[] = {"ZSCORE", "ZRANK", "ZREVRANK",
                                        "ZRANGE", "ZRANGE"};

    argv[0] = sl(names[c]);
    argv[1] = sl("leaders", 7);
    if (c < C_ZRANGE) {
        argv[2] = f.look_member(k);
        return 3;
    }
    argv[2] = text16(f.start_text, k);
    argv[3] = text16(f.stop_text, k);
    argv[4] = sl("WITHSCORES", 10);
    return c == C_ZRANGE_WS ? 5 : 4;
}

// The first byte a good reply to c starts with (RESP2).
char reply_kind(Cmd c)
{
    return c == C_ZSCORE ? '$' : c < C_ZRANGE ? ':' : '*';
}

// Runs op 0 once and reports an error reply as the benchmark's error.
bool check_reply(benchmark::State &state, const char *p, size_t len, char want)
{
    if (len > 0 && p[0] == want)
        return true;
    std::string why = "unexpected reply: " +
                      std::string(p, std::min<size_t>(len, 80));
    state.SkipWithError(why.c_str());
    return false;
}

void command_into(benchmark::State &state, Cmd c)
{
    Fixture &f = fx();
    goblin_slice argv[5];
    size_t k = 0;

    mb_command_execute(f.srv.sess, make_argv(f, c, 0, argv), argv,
                       f.reply.sink());
    if (!check_reply(state, f.reply.buf.data, f.reply.buf.len, reply_kind(c)))
        return;
    for (auto _ : state) {
        int argc = make_argv(f, c, k, argv);

        mb_command_execute(f.srv.sess, argc, argv, f.reply.sink());
        benchmark::DoNotOptimize(f.reply.buf.data);
        step(k, f.ops);
    }
}

// Every op's request as bytes, back to back: RESP multibulk, or an inline
// command line. Built before the timed loop.
struct Requests {
    std::vector<char> bytes;
    std::vector<uint32_t> off;

    Requests(const Fixture &f, Cmd c, bool inl)
    {
        goblin_buf b{};
        goblin_slice argv[5];

        off.reserve(f.ops + 1);
        for (size_t k = 0; k < f.ops; k++) {
            int argc = make_argv(f, c, k, argv);

            off.push_back((uint32_t)b.len);
            if (!inl) {
                goblin_resp_command_write(&b, (size_t)argc, argv);
                continue;
            }
            for (int i = 0; i < argc; i++) {
                goblin_buf_append(&b, argv[i].ptr, argv[i].len);
                goblin_buf_append(&b, i + 1 < argc ? " " : "\r\n",
                                  i + 1 < argc ? 1 : 2);
            }
        }
        off.push_back((uint32_t)b.len);
        bytes.assign(b.data, b.data + b.len);
        goblin_buf_free(&b);
    }
};

// Feeds op 0's request once, untimed: whether its reply is good (else
// the benchmark reports it as its error).
bool first_reply_ok(benchmark::State &state, goblin_session *s,
                    const char *req, size_t n, Cmd c)
{
    size_t len;
    const void *out;

    goblin_session_feed(s, req, n);
    out = goblin_session_output(s, &len);
    bool ok = check_reply(state, (const char *)out, len, reply_kind(c));
    goblin_session_output_consume(s, len);
    return ok;
}

void session_fed(benchmark::State &state, Cmd c, bool inl)
{
    Fixture &f = fx();
    Requests rq(f, c, inl);
    goblin_session *s = f.srv.sess;
    const char *in = rq.bytes.data();
    const uint32_t *off = rq.off.data();
    size_t k = 0, len;
    const void *out;

    if (!first_reply_ok(state, s, in, off[1], c))
        return;
    for (auto _ : state) {
        goblin_session_feed(s, in + off[k], off[k + 1] - off[k]);
        out = goblin_session_output(s, &len);
        benchmark::DoNotOptimize(out);
        goblin_session_output_consume(s, len);
        step(k, f.ops);
    }
}

// parse_into_hot: the requests of parse_into, each written into one
// reused buffer just before it is fed (op k's member into a fixed
// multibulk request), as a server parses the bytes recv() has just left
// in its input buffer. parse_into reads them from an array of every op's
// request (about 50 bytes each: 50 MB at a million ops), a stream whose
// lines evict the store's. The member has the same length in every op,
// so only its bytes change; copying them is timed. ZSCORE, ZRANK and
// ZREVRANK.
void session_fed_hot(benchmark::State &state, Cmd c)
{
    Fixture &f = fx();
    goblin_session *s = f.srv.sess;
    goblin_slice argv[5];
    goblin_buf b{};
    char req[256];
    size_t k = 0, len, at, rlen;
    const void *out;
    int argc = make_argv(f, c, 0, argv);

    goblin_resp_command_write(&b, (size_t)argc, argv);
    rlen = b.len;
    if (rlen > sizeof(req)) {
        goblin_buf_free(&b);
        state.SkipWithError("request too long");
        return;
    }
    memcpy(req, b.data, rlen);
    goblin_buf_free(&b);
    at = rlen - 2 - argv[argc - 1].len; /* the member, last, then CRLF */
    if (!first_reply_ok(state, s, req, rlen, c))
        return;
    for (auto _ : state) {
        goblin_slice m = f.look_member(k);

        memcpy(req + at, m.ptr, m.len);
        goblin_session_feed(s, req, rlen);
        out = goblin_session_output(s, &len);
        benchmark::DoNotOptimize(out);
        goblin_session_output_consume(s, len);
        step(k, f.ops);
    }
}

// ---- the ZRANGE breakdown (arena + tree built apart) ----

const uint32_t *ids_at(const Fixture &f, size_t rank)
{
    static std::vector<uint32_t> ids;

    if (ids.empty()) {
        ids.resize(f.n);
        for (size_t r = 0; r < f.n; r++)
            ids[r] = mb_split_id_at(f.split, r);
    }
    return &ids[rank];
}

const double *scores_at(const Fixture &f, size_t rank)
{
    static std::vector<double> scores;

    if (scores.empty()) {
        scores.resize(f.n);
        for (size_t r = 0; r < f.n; r++)
            scores[r] = mb_split_score_at(f.split, r);
    }
    return &scores[rank];
}

void BM_bd_traverse(benchmark::State &state)
{
    Fixture &f = fx();
    size_t k = 0;

    for (auto _ : state) {
        benchmark::DoNotOptimize(
            mb_split_traverse(f.split, f.starts[k], f.range));
        step(k, f.ops);
    }
}

void BM_bd_members(benchmark::State &state)
{
    Fixture &f = fx();
    size_t k = 0;

    ids_at(f, 0);
    for (auto _ : state) {
        benchmark::DoNotOptimize(
            mb_split_members(f.split, ids_at(f, f.starts[k]), f.range));
        step(k, f.ops);
    }
}

void BM_bd_format(benchmark::State &state)
{
    Fixture &f = fx();
    size_t k = 0;
    char buf[32];

    scores_at(f, 0);
    for (auto _ : state) {
        const double *sc = scores_at(f, f.starts[k]);
        size_t n = 0;

        for (size_t i = 0; i < f.range; i++) {
            n += goblin_double_format(buf, sc[i]);
            benchmark::DoNotOptimize(buf);
        }
        benchmark::DoNotOptimize(n);
        step(k, f.ops);
    }
}

void BM_bd_member_resp(benchmark::State &state)
{
    Fixture &f = fx();
    size_t k = 0;

    ids_at(f, 0);
    for (auto _ : state) {
        mb_split_resp_members(f.split, ids_at(f, f.starts[k]), f.range,
                              f.reply.sink());
        benchmark::DoNotOptimize(f.reply.buf.data);
        step(k, f.ops);
    }
}

void score_resp(benchmark::State &state, bool preformatted)
{
    Fixture &f = fx();
    size_t k = 0;

    scores_at(f, 0);
    for (auto _ : state) {
        goblin_sink *s = f.reply.sink();
        size_t r = f.starts[k];

        s->ops->array(s, f.range);
        if (preformatted) {
            for (size_t i = 0; i < f.range; i++)
                s->ops->bulk(s, f.rank_text[r + i].s, f.rank_text[r + i].len);
        } else {
            const double *sc = scores_at(f, r);
            for (size_t i = 0; i < f.range; i++)
                s->ops->dbl(s, sc[i]);
        }
        benchmark::DoNotOptimize(f.reply.buf.data);
        step(k, f.ops);
    }
}

void BM_bd_score_pre(benchmark::State &s) { score_resp(s, true); }
void BM_bd_score_fmt(benchmark::State &s) { score_resp(s, false); }

void BM_bd_direct_ws(benchmark::State &state)
{
    Fixture &f = fx();
    size_t k = 0;

    ids_at(f, 0);
    for (auto _ : state) {
        mb_split_resp_withscores(f.split, ids_at(f, f.starts[k]), f.range,
                                 f.reply.sink());
        benchmark::DoNotOptimize(f.reply.buf.data);
        step(k, f.ops);
    }
}

} // namespace

// ---- the write path ----
//
// Updates: op k sets the score of member look[k] (distinct within a pass
// of wops ops) to base + SHIFT on even passes and back to base on odd
// ones, so every timed op changes the score and moves the member.
// ZREM + restore removes look[k] and adds it back with its current score.
// New members go into a fresh set made before the timed loop.

namespace {

// The score look[k] gets on the coming pass, given the passes done.
std::vector<double> update_scores(const Fixture &f, uint64_t passes)
{
    std::vector<double> v(f.wops);

    for (size_t k = 0; k < f.wops; k++)
        v[k] = f.base[f.look[k]] + f.shift(passes + 1);
    return v;
}

std::vector<double> current_scores(const Fixture &f, uint64_t passes)
{
    std::vector<double> v(f.wops);

    for (size_t k = 0; k < f.wops; k++)
        v[k] = f.base[f.look[k]] + f.shift(passes);
    return v;
}

std::vector<ScoreText> as_text(const std::vector<double> &v)
{
    std::vector<ScoreText> t(v.size());

    for (size_t k = 0; k < v.size(); k++)
        t[k].len = (uint8_t)goblin_double_format(t[k].s, v[k]);
    return t;
}

// One pass done: only a whole pass keeps the parity bookkeeping right.
void pass_done(benchmark::State &state, const Fixture &f, uint64_t &passes)
{
    if ((size_t)state.iterations() == f.wops)
        passes++;
    else
        state.SkipWithError("write benchmarks need exactly one pass per run");
}

void BM_raw_update(benchmark::State &state)
{
    Fixture &f = fx();
    std::vector<double> sc = update_scores(f, f.raw_passes);
    size_t k = 0;

    for (auto _ : state) {
        benchmark::DoNotOptimize(mb_zset_add(f.raw, f.look_member(k), sc[k]));
        step(k, f.wops);
    }
    pass_done(state, f, f.raw_passes);
    state.counters["moved_fraction"] = f.moved;
}

void BM_store_update(benchmark::State &state)
{
    Fixture &f = fx();
    std::vector<double> sc = update_scores(f, f.store_passes);
    goblin_slice key = sl("leaders");
    size_t k = 0;

    for (auto _ : state) {
        benchmark::DoNotOptimize(
            goblin_zset_add(f.srv.st, key, f.look_member(k), sc[k]));
        step(k, f.wops);
    }
    pass_done(state, f, f.store_passes);
    state.counters["moved_fraction"] = f.moved;
}

void zadd_argv(goblin_slice *argv, const char *key, const ScoreText &t,
               goblin_slice m)
{
    argv[0] = sl("ZADD", 4);
    argv[1] = sl(key);
    argv[2] = sl(t.s, t.len);
    argv[3] = m;
}

void BM_cmd_update(benchmark::State &state)
{
    Fixture &f = fx();
    std::vector<ScoreText> t = as_text(update_scores(f, f.store_passes));
    goblin_slice argv[4];
    size_t k = 0;

    for (auto _ : state) {
        zadd_argv(argv, "leaders", t[k], f.look_member(k));
        mb_command_execute(f.srv.sess, 4, argv, f.reply.sink());
        benchmark::DoNotOptimize(f.reply.buf.data);
        step(k, f.wops);
    }
    pass_done(state, f, f.store_passes);
    state.counters["moved_fraction"] = f.moved;
}

void BM_raw_new(benchmark::State &state)
{
    Fixture &f = fx();
    mb_zset *z;
    size_t k = 0;

    if (mb_zset_open(&z) != 0) {
        state.SkipWithError("out of memory");
        return;
    }
    for (auto _ : state) {
        benchmark::DoNotOptimize(
            mb_zset_add(z, f.look_member(k), f.look_score[k]));
        step(k, f.wops);
    }
    state.counters["bytes_per_member"] =
        (double)mb_zset_bytes(z) / (double)mb_zset_card(z);
    mb_zset_close(z);
}

void BM_store_new(benchmark::State &state)
{
    Fixture &f = fx();
    goblin_store *st;
    goblin_slice key = sl("fresh");
    size_t k = 0;

    if (goblin_store_open(nullptr, &st) != 0) {
        state.SkipWithError("out of memory");
        return;
    }
    for (auto _ : state) {
        benchmark::DoNotOptimize(
            goblin_zset_add(st, key, f.look_member(k), f.look_score[k]));
        step(k, f.wops);
    }
    goblin_store_close(st);
}

void BM_cmd_new(benchmark::State &state)
{
    Fixture &f = fx();
    std::vector<ScoreText> t = as_text(current_scores(f, 0));
    Server srv;
    goblin_store *st;
    goblin_slice argv[4];
    size_t k = 0;

    if (goblin_store_open(nullptr, &st) != 0 || !srv.open(st)) {
        state.SkipWithError("out of memory");
        return;
    }
    for (auto _ : state) {
        zadd_argv(argv, "fresh", t[k], f.look_member(k));
        mb_command_execute(srv.sess, 4, argv, f.reply.sink());
        benchmark::DoNotOptimize(f.reply.buf.data);
        step(k, f.wops);
    }
    srv.close();
}

void BM_raw_remove(benchmark::State &state)
{
    Fixture &f = fx();
    std::vector<double> sc = current_scores(f, f.raw_passes);
    size_t k = 0;

    for (auto _ : state) {
        goblin_slice m = f.look_member(k);

        benchmark::DoNotOptimize(mb_zset_remove(f.raw, m));
        benchmark::DoNotOptimize(mb_zset_add(f.raw, m, sc[k]));
        step(k, f.wops);
    }
}

void BM_store_remove(benchmark::State &state)
{
    Fixture &f = fx();
    std::vector<double> sc = current_scores(f, f.store_passes);
    goblin_slice key = sl("leaders");
    size_t k = 0;

    for (auto _ : state) {
        goblin_slice m = f.look_member(k);

        benchmark::DoNotOptimize(goblin_zset_rem(f.srv.st, key, &m, 1));
        benchmark::DoNotOptimize(goblin_zset_add(f.srv.st, key, m, sc[k]));
        step(k, f.wops);
    }
}

void BM_cmd_remove(benchmark::State &state)
{
    Fixture &f = fx();
    std::vector<ScoreText> t = as_text(current_scores(f, f.store_passes));
    goblin_slice argv[4];
    size_t k = 0;

    for (auto _ : state) {
        goblin_slice m = f.look_member(k);

        argv[0] = sl("ZREM", 4);
        argv[1] = sl("leaders", 7);
        argv[2] = m;
        mb_command_execute(f.srv.sess, 3, argv, f.reply.sink());
        zadd_argv(argv, "leaders", t[k], m);
        mb_command_execute(f.srv.sess, 4, argv, f.reply.sink());
        benchmark::DoNotOptimize(f.reply.buf.data);
        step(k, f.wops);
    }
}

// What the fixture costs in memory, as counters (the time is meaningless).
void BM_fixture_memory(benchmark::State &state)
{
    Fixture &f = fx();

    for (auto _ : state)
        benchmark::DoNotOptimize(f.n);
    state.counters["raw_object_B_per_member"] =
        (double)mb_zset_bytes(f.raw) / (double)f.n;
    state.counters["store_used_B_per_member"] =
        (double)f.store_bytes / (double)f.n;
    state.counters["members"] = (double)f.n;
}

// ---- registration and knobs ----

benchmark::internal::Benchmark *reg(const std::string &name,
                                    std::function<void(benchmark::State &)> fn,
                                    size_t iters)
{
    return benchmark::RegisterBenchmark(name.c_str(), fn)
        ->Iterations((benchmark::IterationCount)iters)
        ->Repetitions(K.reps)
        ->Unit(benchmark::kNanosecond)
        ->DisplayAggregatesOnly(true);
}

void register_all()
{
    size_t ops = K.ops, wops = std::min(K.ops, K.members);
    static const char *const cmds[] = {"ZSCORE", "ZRANK", "ZREVRANK",
                                       "ZRANGE", "ZRANGE_WITHSCORES"};

    reg("floor/dram_miss", BM_dram, ops);
    reg("floor/dram_miss_hugepages", BM_dram_huge, ops);
    reg("floor/chase_64MiB", BM_fixture_sized, ops);
    reg("floor/l3_hit", BM_l3, ops);
    reg("floor/l1_hit", BM_l1, ops);
    reg("fixture/memory", BM_fixture_memory, 1)->Repetitions(1);
    reg("raw/ZSCORE", BM_raw_zscore, ops);
    reg("raw/ZRANK", BM_raw_zrank, ops);
    reg("raw/ZREVRANK", BM_raw_zrevrank, ops);
    reg("raw/ZRANGE", BM_raw_zrange, ops);
    reg("store/ZSCORE", BM_store_zscore, ops);
    reg("store/ZRANK", BM_store_zrank, ops);
    reg("store/ZREVRANK", BM_store_zrevrank, ops);
    reg("store/ZRANGE", BM_store_zrange, ops);
    reg("resp/ZSCORE", BM_resp_zscore, ops);
    reg("resp/ZRANK", BM_resp_zrank, ops);
    reg("resp/ZRANGE", BM_resp_zrange, ops);
    reg("resp/ZRANGE_WITHSCORES", BM_resp_zrange_ws, ops);
    for (int c = C_ZSCORE; c <= C_ZRANGE_WS; c++)
        reg(std::string("command_into/") + cmds[c],
            [c](benchmark::State &s) { command_into(s, (Cmd)c); }, ops);
    for (int c = C_ZSCORE; c <= C_ZRANGE_WS; c++)
        reg(std::string("command_string/") + cmds[c],
            [c](benchmark::State &s) { session_fed(s, (Cmd)c, true); }, ops);
    for (int c = C_ZSCORE; c <= C_ZRANGE_WS; c++)
        reg(std::string("parse_into/") + cmds[c],
            [c](benchmark::State &s) { session_fed(s, (Cmd)c, false); }, ops);
    for (int c = C_ZSCORE; c <= C_ZREVRANK; c++)
        reg(std::string("parse_into_hot/") + cmds[c],
            [c](benchmark::State &s) { session_fed_hot(s, (Cmd)c); }, ops);
    reg("zrange_breakdown/score_index_traversal", BM_bd_traverse, ops);
    reg("zrange_breakdown/member_lookup", BM_bd_members, ops);
    reg("zrange_breakdown/score_format_only", BM_bd_format, ops);
    reg("zrange_breakdown/member_resp_append_only", BM_bd_member_resp, ops);
    reg("zrange_breakdown/score_resp_append_preformatted", BM_bd_score_pre,
        ops);
    reg("zrange_breakdown/score_resp_append_formatting", BM_bd_score_fmt, ops);
    reg("zrange_breakdown/direct_resp_append_withscores", BM_bd_direct_ws, ops);
    reg("write_path/raw_zset_add_update", BM_raw_update, wops);
    reg("write_path/store_zadd_update", BM_store_update, wops);
    reg("write_path/command_into_zadd_update", BM_cmd_update, wops);
    reg("write_path/raw_zset_add_new", BM_raw_new, wops);
    reg("write_path/store_zadd_new", BM_store_new, wops);
    reg("write_path/command_into_zadd_new", BM_cmd_new, wops);
    reg("write_path/raw_zset_remove", BM_raw_remove, wops);
    reg("write_path/store_zrem", BM_store_remove, wops);
    reg("write_path/command_into_zrem", BM_cmd_remove, wops);
    // The unit again at the end: the machine may have changed meanwhile.
    reg("floor/dram_miss_after", BM_dram, ops);
}

// Takes our knobs out of argv, leaving Google Benchmark's. Returns false
// on a bad knob.
bool parse_knobs(int *argc, char **argv)
{
    int out = 1;

    for (int i = 1; i < *argc; i++) {
        std::string a = argv[i];
        const char *v = i + 1 < *argc ? argv[i + 1] : nullptr;
        bool takes = a == "--members" || a == "--ops" || a == "--range" ||
                     a == "--seed" || a == "--score-shape" || a == "--reps" ||
                     a == "--chase-mib";

        if (!takes) {
            argv[out++] = argv[i];
            continue;
        }
        if (v == nullptr)
            return false;
        i++;
        if (a == "--members")
            K.members = strtoull(v, nullptr, 10);
        else if (a == "--ops")
            K.ops = strtoull(v, nullptr, 10);
        else if (a == "--range")
            K.range = strtoull(v, nullptr, 10);
        else if (a == "--seed")
            K.seed = strtoull(v, nullptr, 10);
        else if (a == "--reps")
            K.reps = atoi(v);
        else if (a == "--chase-mib")
            K.chase_mib = strtoull(v, nullptr, 10);
        else if (strcmp(v, "integer") == 0 || strcmp(v, "fractional") == 0)
            K.fractional = strcmp(v, "fractional") == 0;
        else
            return false;
    }
    *argc = out;
    argv[out] = nullptr;
    return K.members >= 1 && K.members <= 99999999 && K.ops >= 1 &&
           K.range >= 1 && K.reps >= 1 && K.chase_mib >= 1;
}

} // namespace

int main(int argc, char **argv)
{
    if (!parse_knobs(&argc, argv)) {
        fprintf(stderr,
                "usage: microbench [--members N] [--ops N] [--range N] "
                "[--seed S]\n                  [--score-shape "
                "integer|fractional] [--reps N] [--chase-mib N]\n"
                "                  [--benchmark_* flags]\n");
        return 2;
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 2;
    benchmark::AddCustomContext("members", std::to_string(K.members));
    benchmark::AddCustomContext("ops", std::to_string(K.ops));
    benchmark::AddCustomContext("range", std::to_string(K.range));
    benchmark::AddCustomContext("seed", std::to_string(K.seed));
    benchmark::AddCustomContext("score_shape",
                                K.fractional ? "fractional" : "integer");
    benchmark::AddCustomContext("chase_mib", std::to_string(K.chase_mib));
    register_all();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    if (F != nullptr) {          // so a leak checker sees a clean exit
        mb_zset_close(F->raw);
        mb_split_close(F->split);
        F->srv.close();
        delete F;
        F = nullptr;
    }
    return 0;
}
