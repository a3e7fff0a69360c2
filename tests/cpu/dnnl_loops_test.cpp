// ridgeline's own loops in the oneDNN backend (cpu/src/dnnl_loops.hpp and its users): the paths the vectorised,
// threaded loops take, each against the reference backend or against values derived by hand: broadcast operands
// read by stride, runs shorter than a vector and tails past one, rows cut into pieces (64 Ki elements), views with an
// offset, bf16 where the loop runs it, and outputs written with non-temporal stores (write_run).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "dnnl_loops.hpp"  // cpu/src: write_run and the streaming threshold

#include "ridgeline/cpu/cpu_backends.hpp"
#include "ridgeline/cpu/reference.hpp"
#include "ridgeline/profiler/profiler.hpp"

using namespace ridgeline;

namespace {

std::unique_ptr<backend_api::backend>& cpu_backend() {
    static std::unique_ptr<backend_api::backend> b = cpu::make_dnnl_backend(0);
    return b;
}

bool runs(core::dtype dt) {
    const auto g = core::analyze(core::single_layer_model(core::parse_op("relu"), {core::shape{4}}), dt);
    return cpu_backend()->supports(g.layers[0], dt).supported;
}

/// The graph on the CPU backend (outputs poisoned first) against the reference backend, on random data.
profiler::verification_result against_reference(const core::model_analysis& g, core::dtype dt) {
    const auto data = backend_api::make_graph_data(g, dt, 11);
    auto fast = cpu_backend()->prepare(g, data);
    fast->poison_outputs();
    fast->run();
    auto ref = cpu::make_reference_backend(0)->prepare(g, data);
    ref->run();
    return profiler::compare_outputs(fast->outputs(), ref->outputs(), profiler::verification_tolerance(dt));
}

profiler::verification_result against_reference(const std::string& layer, const std::vector<core::shape>& inputs,
                                                core::dtype dt = core::dtype::fp32) {
    return against_reference(core::analyze(core::single_layer_model(core::parse_op(layer), inputs, "op", "t"), dt), dt);
}

/// The layer on the CPU backend on the given inputs (named input, or input0, input1, ... as single_layer_model names
/// them), outputs poisoned first: its notes and output values.
std::pair<std::string, std::vector<float>> run_on(const std::string& layer,
                                                  const std::vector<backend_api::host_tensor>& in,
                                                  core::dtype dt = core::dtype::fp32) {
    std::vector<core::shape> shapes;
    for (const auto& t : in) shapes.push_back(t.dims);
    const auto g = core::analyze(core::single_layer_model(core::parse_op(layer), shapes, "op", "t"), dt);
    backend_api::graph_data data;
    for (std::size_t i = 0; i < in.size(); ++i)
        data.tensors[in.size() == 1 ? "input" : "input" + std::to_string(i)] = in[i];
    auto prep = cpu_backend()->prepare(g, data);
    prep->poison_outputs();
    prep->run();
    return {prep->notes(), prep->outputs().at(0).data};
}

backend_api::host_tensor arange(core::shape s, float from = 0) {
    backend_api::host_tensor t{s, {}};
    for (std::int64_t i = 0; i < s.numel(); ++i) t.data.push_back(from + static_cast<float>(i));
    return t;
}

void expect_passed(const profiler::verification_result& v) {
    EXPECT_EQ(v.state, profiler::verification_state::passed) << v.message;
    EXPECT_EQ(v.unwritten, 0);
}

/// Each (layer, input) against the reference, in fp32 and in bf16 where this CPU runs it.
void expect_match(const std::vector<std::pair<std::string, core::shape>>& cases) {
    for (const core::dtype dt : {core::dtype::fp32, core::dtype::bf16}) {
        if (!runs(dt)) continue;
        for (const auto& [layer, in] : cases) {
            SCOPED_TRACE(std::string(core::to_string(dt)) + " " + layer + " on " + in.to_string());
            expect_passed(against_reference(layer, {in}, dt));
        }
    }
}

}  // namespace

// where(c, a, b) = c > 0 ? a : b, on the values' bits: c [3, 1] = [0.5, -0.0, NaN] broadcast over the rows of
// a [3, 5] = arange(15), b [5] = 100 + arange(5) broadcast over the rows: row 0 takes a (0.5 > 0), rows 1 and 2 take b
// (-0.0 > 0 and NaN > 0 are false): [0 1 2 3 4 | 100 .. 104 | 100 .. 104]. In bf16 the same (every value here is
// exact in bf16's 8 significant bits).
TEST(DnnlLoops, WhereSelectsByTheConditionsSignIncludingMinusZeroAndNaN) {
    const backend_api::host_tensor c{core::shape{3, 1}, {0.5F, -0.0F, std::numeric_limits<float>::quiet_NaN()}};
    const float want[] = {0, 1, 2, 3, 4, 100, 101, 102, 103, 104, 100, 101, 102, 103, 104};
    for (const core::dtype dt : {core::dtype::fp32, core::dtype::bf16}) {
        if (!runs(dt)) continue;
        SCOPED_TRACE(core::to_string(dt));
        const auto [notes, y] = run_on("where", {c, arange(core::shape{3, 5}), arange(core::shape{5}, 100)}, dt);
        EXPECT_NE(notes.find("ridgeline where loop"), std::string::npos) << notes;
        EXPECT_EQ(notes.find("reorder"), std::string::npos) << "where runs in the graph's type: " << notes;
        ASSERT_EQ(y.size(), 15U);
        for (std::size_t i = 0; i < 15; ++i) EXPECT_EQ(y[i], want[i]) << i;
    }
}

// Every variant of the run (each operand contiguous or broadcast along the innermost dimension), runs shorter than a
// vector (3), tails past one (131 * 67 = 8,777 merged elements), and rows longer than a piece (70,001 > 65,536: cut
// in two, the broadcast operands' offsets kept), in fp32 and bf16.
void expect_where_matches() {
    const std::vector<std::vector<core::shape>> cases = {
        {{1, 1, 67, 131}, {2, 3, 67, 131}, {1}},        // GPT-2's mask: condition over the heads, a scalar value
        {{2, 3, 1, 1}, {2, 3, 67, 131}, {131}},         // a condition per row, a value per column
        {{2, 3, 67, 131}, {67, 1}, {2, 3, 67, 131}},    // the input broadcast along the run
        {{3}, {5, 3}, {5, 1}},                          // runs of 3
        {{70001}, {3, 70001}, {3, 1}},                  // rows in two pieces
        {{3, 70001}, {3, 70001}, {3, 70001}},           // one merged run of 210,003
    };
    for (const core::dtype dt : {core::dtype::fp32, core::dtype::bf16}) {
        if (!runs(dt)) continue;
        for (const auto& in : cases) {
            SCOPED_TRACE(std::string(core::to_string(dt)) + " " + in[0].to_string() + " " + in[1].to_string() + " " +
                         in[2].to_string());
            expect_passed(against_reference("where", in, dt));
        }
    }
}

TEST(DnnlLoops, WhereMatchesTheReferenceOnEveryBroadcastPath) { expect_where_matches(); }

// pad's table [-1, 0..9, -1] (value 7) is a fill, a copy of 10 (a run of at least 8) and a fill: [7, 0 .. 9, 7];
// reflect pads with the mirror without its edge: arange(4) padded 2 and 2 is [2 1 | 0 1 2 3 | 2 1] (gathers of 2, a
// run of 4, too short to copy, gathered too).
TEST(DnnlLoops, PadFillsCopiesAndGathersByItsTable) {
    const auto [notes, constant] = run_on("pad:pad=1x1,value=7", {arange(core::shape{1, 10})});
    EXPECT_NE(notes.find("ridgeline index gather"), std::string::npos) << notes;
    const std::vector<float> want_constant = {7, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 7};
    EXPECT_EQ(constant, want_constant);
    const std::vector<float> want_reflect = {2, 1, 0, 1, 2, 3, 2, 1};
    EXPECT_EQ(run_on("pad:pad=2x2,mode=reflect", {arange(core::shape{1, 4})}).second, want_reflect);
}

// expand [2, 1] -> [2, 9]: the innermost table all 0, a splat of each row's one value: [0 x9, 1 x9].
TEST(DnnlLoops, ExpandSplatsABroadcastInnermostDimension) {
    const auto y = run_on("expand:size=2x9", {arange(core::shape{2, 1})}).second;
    ASSERT_EQ(y.size(), 18U);
    for (std::size_t i = 0; i < 18; ++i) EXPECT_EQ(y[i], i < 9 ? 0.0F : 1.0F) << i;
}

// The index gathers and the bilinear loop against the reference: rows past a piece (70,001 wide), a leading expanded
// dimension, reflect and replicate edges around a long copy, nearest and bilinear up and down with planes whose rows
// split into blocks of 32 (101 rows), in fp32 and bf16 (bilinear: through float32 and reorders).
const std::vector<std::pair<std::string, core::shape>> gather_cases = {
        {"expand:size=2x3x70001", {3, 1}},
        {"expand:size=4x3x70001", {3, 70001}},
        {"expand:size=5x2x37", {2, 1}},
        {"pad:pad=3x2x1x0", {2, 3, 5, 70001}},
        {"pad:pad=3x2x1x1,mode=reflect", {2, 3, 5, 40}},
        {"pad:pad=0x5,mode=replicate", {3, 37}},
        {"interpolate:size=101x45", {1, 2, 70, 30}},
        {"interpolate:size=33x17", {2, 3, 70, 45}},
        {"interpolate:size=101x45,mode=bilinear", {1, 2, 70, 30}},
        {"interpolate:size=33x17,mode=bilinear,align_corners=true", {2, 3, 70, 45}},
};

TEST(DnnlLoops, GathersMatchTheReference) { expect_match(gather_cases); }

// A slice oneDNN cannot describe (every third column of 3x8: strides 8 and 3 over 3x3, 3 * 3 > 8) is ridgeline's
// strided copy, from the view's offset (start 1): arange(24) as 3x8 gives columns 1, 4, 7 of each row:
// [1 4 7 | 9 12 15 | 17 20 23].
TEST(DnnlLoops, StridedCopyReadsAViewFromItsOffset) {
    const auto [notes, y] = run_on("slice:dim=1,start=1,step=3", {arange(core::shape{3, 8})});
    EXPECT_NE(notes.find("ridgeline strided copy"), std::string::npos) << notes;
    const std::vector<float> want = {1, 4, 7, 9, 12, 15, 17, 20, 23};
    EXPECT_EQ(y, want);
    // a longer one, in pieces: every second column of 3 x 140,001 (70,001 columns, 2 * 70,001 > 140,001)
    expect_passed(against_reference("slice:dim=1,start=0,step=2", {core::shape{3, 140001}}));
}

// rms_norm's sum of squares runs in 32 partial sums and a tail: rows of 13 (all tail) and 4,100 (128 * 32 + 4),
// with and without a weight, fp32 and bf16. A row [3, 4] has mean(x^2) = 12.5, so y = x / sqrt(12.5 + eps): with
// eps 0.5, [3, 4] / sqrt(13) = [0.83205, 1.10940].
TEST(DnnlLoops, RmsNormSumsInPartsAndATail) {
    const auto y =
        run_on("rms_norm:normalized_shape=2,eps=0.5,elementwise_affine=false", {arange(core::shape{1, 2}, 3)});
    ASSERT_EQ(y.second.size(), 2U);
    EXPECT_NEAR(y.second[0], 3 / std::sqrt(13.0), 1e-6);
    EXPECT_NEAR(y.second[1], 4 / std::sqrt(13.0), 1e-6);
    for (const core::dtype dt : {core::dtype::fp32, core::dtype::bf16}) {
        if (!runs(dt)) continue;
        for (const std::string layer : {"rms_norm:normalized_shape=13", "rms_norm:normalized_shape=4100",
                                        "rms_norm:normalized_shape=4100,elementwise_affine=false"}) {
            SCOPED_TRACE(std::string(core::to_string(dt)) + " " + layer);
            const std::int64_t inner = layer.find("=13") != std::string::npos ? 13 : 4100;
            expect_passed(against_reference(layer, {core::shape{5, inner}}, dt));
        }
    }
}

// A long row's sum of squares stays exact to float32's rounding of a block (fold_block): x = [4096, then 1,048,576
// ones], sum(x^2) = 2^24 + 2^20 = 17,825,792. One float32 partial sum holding 4096^2 = 2^24 loses every 1 added to it
// (2^24 + 1 rounds to 2^24): with the 32 partials over the whole row, partial 0 lost 32,768 ones, a sum 0.18% low and
// y 0.09% high, past fp32's tolerance (1e-4); in blocks of 4,096 summed in double it loses at most the 127 of block
// 0, 7e-6 of the sum. y[0] = 4096 / sqrt(17,825,792 / 1,048,577 + 1e-5) = 993.44..., y[1] = y[0] / 4096.
TEST(DnnlLoops, RmsNormOfALongRowSumsInBlocks) {
    const std::int64_t n = 1048577;
    backend_api::host_tensor x{core::shape{1, n}, std::vector<float>(static_cast<std::size_t>(n), 1.0f)};
    x.data[0] = 4096;
    const auto y = run_on("rms_norm:normalized_shape=1048577,elementwise_affine=false", {x});
    ASSERT_EQ(y.second.size(), static_cast<std::size_t>(n));
    const double want = 4096 / std::sqrt(17825792.0 / static_cast<double>(n) + 1e-5);
    EXPECT_NEAR(y.second[0], want, want * 2e-5);
    EXPECT_NEAR(y.second[1], want / 4096, want / 4096 * 2e-5);
    EXPECT_NEAR(y.second[static_cast<std::size_t>(n - 1)], want / 4096, want / 4096 * 2e-5);
}

// rotary reads its input through its strides: contiguous along D (the vectorised run), and a view whose D is strided
// (a transpose of the last two dimensions: stride 6 along D), both against the reference chain.
TEST(DnnlLoops, RotaryReadsContiguousAndStridedRuns) {
    for (const core::dtype dt : {core::dtype::fp32, core::dtype::bf16}) {
        if (!runs(dt)) continue;
        SCOPED_TRACE(core::to_string(dt));
        expect_passed(against_reference("rotary", {core::shape{2, 3, 5, 38}}, dt));
        core::model_builder b("strided");
        b.input("x", core::shape{1, 2, 8, 6});
        b.then("t", core::parse_op("transpose:dim0=2,dim1=3"));
        b.then("rope", core::parse_op("rotary"));
        expect_passed(against_reference(core::analyze(b.build(), dt), dt));
    }
}

// The reduce loop (where oneDNN would run its reference: an outer dimension reduced): arange(12) as 3x4. sum over
// dim 0 is the column sums [0+4+8, 1+5+9, 2+6+10, 3+7+11] = [12, 15, 18, 21] (the outermost group reduced: partial
// results per thread, combined); amax over dim 0 with element 6 (row 1, column 2) NaN is [8, 9, NaN, 11] (torch.amax
// propagates NaN). mean over dim 1 (oneDNN's jit) the row means [(0+1+2+3)/4, (4+..+7)/4, (8+..+11)/4] =
// [1.5, 5.5, 9.5]; amax over every dimension 11 (a full reduction keeps its dimensions: ridgeline's tensors have
// rank >= 1).
TEST(DnnlLoops, ReduceLoopSumsColumnsAndRowsAndPropagatesNaN) {
    const auto [notes, sum0] = run_on("sum:dim=0", {arange(core::shape{3, 4})});
    EXPECT_NE(notes.find("ridgeline reduce loop"), std::string::npos) << notes;
    EXPECT_EQ(sum0, (std::vector<float>{12, 15, 18, 21}));
    EXPECT_EQ(run_on("mean:dim=1", {arange(core::shape{3, 4})}).second, (std::vector<float>{1.5F, 5.5F, 9.5F}));
    EXPECT_EQ(run_on("amax:keepdim=true", {arange(core::shape{3, 4})}).second, (std::vector<float>{11}));
    auto with_nan = arange(core::shape{3, 4});
    with_nan.data[6] = std::numeric_limits<float>::quiet_NaN();
    const auto [amax_notes, m] = run_on("amax:dim=0", {with_nan});
    EXPECT_NE(amax_notes.find("ridgeline reduce loop"), std::string::npos) << amax_notes;
    ASSERT_EQ(m.size(), 4U);
    EXPECT_EQ(m[0], 8.0F);
    EXPECT_EQ(m[1], 9.0F);
    EXPECT_TRUE(std::isnan(m[2]));
    EXPECT_EQ(m[3], 11.0F);
}

// Every grouping of kept (K) and reduced (R) dimensions against the reference (the reduce loop where oneDNN has no
// jit kernel, oneDNN's elsewhere): [K, R] with a tail past the 32 partial sums (rows of 1,003 = 31 * 32 + 11),
// [R, K] (columns: per-thread partials, four rows a pass and the remainder one by one), [K, R, K], [R, K, R],
// one group [R] of 300,001 (32 partials and a tail of 1), size-1 dimensions between (dropped), in fp32 and bf16.
TEST(DnnlLoops, ReduceLoopMatchesTheReferenceOnEveryGrouping) {
    const std::vector<std::pair<std::string, core::shape>> cases = {
        {"sum:dim=-1", {37, 1003}},
        {"mean:dim=0", {1003, 37}},
        {"amax:dim=1", {5, 301, 7}},
        {"sum:dim=0x2,keepdim=true", {9, 13, 11}},
        {"mean:keepdim=true", {300001}},
        {"amax:dim=0x3", {3, 1, 4, 5}},
        {"sum:dim=1x2", {6, 17, 1, 19}},
    };
    expect_match(cases);
}

namespace {

/// Sets the output size past which the loops stream for one scope (0: every output), restoring it after.
struct stream_threshold_scope {
    std::int64_t saved = cpu::dnnl_detail::stream_threshold_bytes();
    explicit stream_threshold_scope(std::int64_t bytes) { cpu::dnnl_detail::stream_threshold_bytes() = bytes; }
    ~stream_threshold_scope() { cpu::dnnl_detail::stream_threshold_bytes() = saved; }
    stream_threshold_scope(const stream_threshold_scope&) = delete;
    stream_threshold_scope& operator=(const stream_threshold_scope&) = delete;
};

/// write_run with `stream` on a buffer of n + 48 elements of T, the run written at element `at` from j0 to j1 with
/// element j's value j + 1 (its bytes in T), the rest left at 0xEE: every element in [j0, j1) holds its value and
/// none outside it changed.
template <class T>
void expect_run_written(std::int64_t at, std::int64_t j0, std::int64_t j1) {
    std::vector<T> buf(static_cast<std::size_t>(j1 + at + 48));
    std::memset(buf.data(), 0xEE, buf.size() * sizeof(T));
    const std::vector<T> before = buf;
    T* y = buf.data() + at;
    cpu::dnnl_detail::write_run(y, j0, j1, true, [](T* out, std::int64_t lo, std::int64_t hi) {
        for (std::int64_t j = lo; j < hi; ++j) out[j - lo] = static_cast<T>(j + 1);
    });
    cpu::dnnl_detail::stream_fence();
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(buf.size()); ++i) {
        const std::int64_t j = i - at;
        const T want = j >= j0 && j < j1 ? static_cast<T>(j + 1) : before[static_cast<std::size_t>(i)];
        ASSERT_EQ(buf[static_cast<std::size_t>(i)], want) << "element " << i << " of a run [" << j0 << ", " << j1
                                                           << ") at " << at << ", " << sizeof(T) << "-byte elements";
    }
}

}  // namespace

// write_run streaming: the elements before the first 16-byte boundary written directly, then blocks of 4 KiB through
// the L1 buffer: every start offset within 16 bytes (1-byte elements: 0..15; 2-byte: 0..7; 4-byte: 0..3), runs
// empty, shorter than the head, ending on a boundary, and past several blocks (4 KiB = 4,096 bytes: 1,024 floats;
// 10,000 + 3 elements cross 9 or more blocks and end in a tail under 16 bytes), starting mid-row (j0 = 5).
TEST(DnnlLoops, WriteRunStreamsEveryElementOnceAndNothingElse) {
    for (const std::int64_t at : {0, 1, 2, 3, 5, 7, 8, 11, 15})
        for (const auto& [j0, j1] : std::vector<std::pair<std::int64_t, std::int64_t>>{
                 {0, 0}, {0, 1}, {0, 3}, {5, 21}, {0, 64}, {5, 4101}, {0, 10003}}) {
            expect_run_written<std::uint8_t>(at, j0, j1);
            if (at < 8) expect_run_written<std::uint16_t>(at, j0, j1);
            if (at < 4) expect_run_written<float>(at, j0, j1);
        }
}

namespace {

/// stream_flat over a buffer of n + 128 elements of T, the output at element `at`, with `threads` OpenMP threads:
/// each thread's cursor starts where its first block (or the head, thread 0) starts and hands out elements in order,
/// element e made as e + 1 (its bytes in T); every element of [0, n) holds its value, the rest keep 0xEE, and the
/// cursors started at most `threads` times.
template <class T>
void expect_flat_written(std::int64_t at, std::int64_t n, int threads) {
    std::vector<T> buf(static_cast<std::size_t>(n + at + 128));
    // the buffer's own line offset varies with the allocator: place y at `at` elements past a 64-byte boundary
    const auto skew = static_cast<std::int64_t>((-reinterpret_cast<std::uintptr_t>(buf.data()) & 63) / sizeof(T));
    std::memset(buf.data(), 0xEE, buf.size() * sizeof(T));
    const std::vector<T> before = buf;
    T* y = buf.data() + skew + at;
    int cursors = 0;
    const int saved_threads = omp_get_max_threads();
    omp_set_num_threads(threads);
    cpu::dnnl_detail::stream_flat(y, n, [&](std::int64_t e) {
#pragma omp atomic
        ++cursors;
        return [e](T* out, std::int64_t count) mutable {
            for (std::int64_t i = 0; i < count; ++i, ++e) out[i] = static_cast<T>(e + 1);
        };
    });
    omp_set_num_threads(saved_threads);
    EXPECT_LE(cursors, threads);
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(buf.size()); ++i) {
        const std::int64_t e = i - skew - at;
        const T want = e >= 0 && e < n ? static_cast<T>(e + 1) : before[static_cast<std::size_t>(i)];
        ASSERT_EQ(buf[static_cast<std::size_t>(i)], want) << "element " << e << " of " << n << " at " << at << ", "
                                                           << sizeof(T) << "-byte elements, " << threads << " threads";
    }
}

}  // namespace

// stream_flat: the elements before the output's first 64-byte line boundary (0..63 bytes of them) written by thread
// 0's cursor straight, then 4 KiB blocks streamed, split over 1, 2 or 3 threads: outputs empty, shorter than the
// head, of one partial block, and of 10,003 elements (floats: 9 blocks of 1,024 and a partial one; bytes: 2 blocks
// and a partial), starting at every element offset within a line for 4-byte elements and at 0, 1, 7, 33 and 63 bytes.
TEST(DnnlLoops, StreamFlatWritesEveryElementOnceInOrder) {
    for (const int threads : {1, 2, 3})
        for (const std::int64_t n : {0, 1, 5, 17, 1000, 10003}) {
            for (std::int64_t at = 0; at < 16; ++at) expect_flat_written<float>(at, n, threads);
            for (const std::int64_t at : {0, 1, 7, 33, 63}) expect_flat_written<std::uint8_t>(at, n, threads);
            expect_flat_written<std::uint16_t>(5, n, threads);
        }
}

// With the threshold at 0 every own loop that streams writes its output with non-temporal stores (write_run,
// stream_bytes): the same cases as above against the reference (where on every broadcast path, the index gathers'
// copies (their fills and gathers beside them) and bilinear, the strided copy, rms_norm with and without a weight,
// rotary contiguous and strided, the embedding gather with each row streamed), so the streaming path of each is
// checked on small tensors as well as on the large ones that take it by default.
TEST(DnnlLoops, StreamedOutputsMatchTheReference) {
    const stream_threshold_scope all(0);
    expect_where_matches();
    expect_match(gather_cases);
    expect_match({{"slice:dim=1,start=0,step=2", {3, 140001}},
                  {"rms_norm:normalized_shape=4100", {5, 4100}},
                  {"rms_norm:normalized_shape=13,elementwise_affine=false", {5, 13}},
                  {"rotary", {2, 3, 5, 38}}});
    core::model_builder b("strided");
    b.input("x", core::shape{1, 2, 8, 6});
    b.then("t", core::parse_op("transpose:dim0=2,dim1=3"));
    b.then("rope", core::parse_op("rotary"));
    expect_passed(against_reference(core::analyze(b.build(), core::dtype::fp32), core::dtype::fp32));
    // embedding rows of 37 floats (148 bytes: rows start off 16-byte boundaries) for 2 x 9 token ids
    expect_passed(against_reference("embedding:num_embeddings=11,embedding_dim=37", {core::shape{2, 9}}));
}
