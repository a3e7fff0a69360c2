// The vectorised table gathers of the resampling loops (cpu/src/dnnl_window_gather.hpp): which blocks of 16 outputs
// are windowed, and the vectorised path (AVX-512F, where this CPU has it) against the scalar path and against the
// formula, bit for bit, on every alignment of a range, with the source ending at an inaccessible page so that a
// load past the window's last read element would fault.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "dnnl_loops.hpp"          // cpu/src: stream_fence, f32_to_bf16
#include "dnnl_window_gather.hpp"  // cpu/src
#include "guarded_pages.hpp"

using namespace ridgeline::cpu::dnnl_detail;
using i64 = std::int64_t;
using ridgeline::test::guarded;

namespace {

/// Sets window_gather_allowed() for a scope.
struct allowed_scope {
    explicit allowed_scope(bool v) : old(window_gather_allowed()) { window_gather_allowed() = v; }
    ~allowed_scope() { window_gather_allowed() = old; }
    bool old;
};

/// PyTorch's nearest table (floor(j * in / out), as float32 scale) and bilinear's two taps and weight (align_corners
/// false: x = (j + 0.5) * in / out - 0.5 clamped at 0, i1 = min(i0 + 1, in - 1)), for out outputs of in inputs.
struct taps {
    std::vector<i64> nearest, i0, i1;
    std::vector<float> w1;
};
taps make_taps(i64 in, i64 out) {
    taps t;
    const float scale = static_cast<float>(in) / static_cast<float>(out);
    for (i64 j = 0; j < out; ++j) {
        t.nearest.push_back(std::min(in - 1, static_cast<i64>(static_cast<float>(j) * scale)));
        const float x = std::max(0.0f, (static_cast<float>(j) + 0.5f) * scale - 0.5f);
        const i64 a = std::min(in - 1, static_cast<i64>(x));
        t.i0.push_back(a);
        t.i1.push_back(std::min(a + 1, in - 1));
        t.w1.push_back(x - static_cast<float>(a));
    }
    return t;
}

/// gather_u32, gather_u16 (the source's upper halves, bf16's bits) and lerp_gather (from both sources) over every
/// range [j0, j1) with j0 in 0..17 and j1 in the last 17 entries, vectorised (where the CPU can) and scalar, each
/// against the formula evaluated here.
void expect_paths_agree(i64 in, i64 out) {
    SCOPED_TRACE(std::to_string(in) + " -> " + std::to_string(out));
    const taps t = make_taps(in, out);
    guarded<float> src(in);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    for (i64 i = 0; i < in; ++i) src.data()[i] = u(rng);
    const auto* bits = reinterpret_cast<const std::uint32_t*>(src.data());
    guarded<std::uint16_t> half(in);  // bf16's bits: the upper halves of the float32 source
    for (i64 i = 0; i < in; ++i) half.data()[i] = static_cast<std::uint16_t>(bits[i] >> 16);
    const window_blocks near = make_window_blocks({t.nearest.data()}, out);
    const window_blocks lerp = make_window_blocks({t.i0.data(), t.i1.data()}, out);
    std::vector<std::uint32_t> g(static_cast<std::size_t>(out));
    std::vector<std::uint16_t> g16(static_cast<std::size_t>(out));
    std::vector<float> l(static_cast<std::size_t>(out)), l16(static_cast<std::size_t>(out));
    for (const bool vectorised : {true, false}) {
        const allowed_scope scope(vectorised);
        for (i64 j0 = 0; j0 < std::min<i64>(out, 18); ++j0)
            for (i64 j1 = std::max(j0, out - 17); j1 <= out; ++j1) {
                gather_u32(bits, t.nearest.data(), near, g.data(), j0, j1);
                gather_u16(half.data(), t.nearest.data(), near, g16.data(), j0, j1);
                lerp_gather(src.data(), t.i0.data(), t.i1.data(), t.w1.data(), lerp, l.data(), j0, j1);
                lerp_gather(half.data(), t.i0.data(), t.i1.data(), t.w1.data(), lerp, l16.data(), j0, j1);
                for (i64 j = j0; j < j1; ++j) {
                    const auto k = static_cast<std::size_t>(j - j0);
                    ASSERT_EQ(g[k], bits[t.nearest[static_cast<std::size_t>(j)]]) << "nearest at " << j;
                    ASSERT_EQ(g16[k], half.data()[t.nearest[static_cast<std::size_t>(j)]]) << "2-byte nearest at " << j;
                    const auto s = static_cast<std::size_t>(j);
                    const float want = (1 - t.w1[s]) * src.data()[t.i0[s]] + t.w1[s] * src.data()[t.i1[s]];
                    std::uint32_t a, b;
                    std::memcpy(&a, &l[k], 4);
                    std::memcpy(&b, &want, 4);
                    ASSERT_EQ(a, b) << "bilinear at " << j << " of [" << j0 << ", " << j1 << ")";
                    const float want16 = (1 - t.w1[s]) * bf16_to_f32(half.data()[t.i0[s]]) +
                                         t.w1[s] * bf16_to_f32(half.data()[t.i1[s]]);
                    std::memcpy(&a, &l16[k], 4);
                    std::memcpy(&b, &want16, 4);
                    ASSERT_EQ(a, b) << "bilinear from bf16 at " << j << " of [" << j0 << ", " << j1 << ")";
                }
            }
    }
}

/// The blend's weights, h0 + h1 = 1, both exact in float32; a bf16 no blend here writes (3.4e38).
constexpr float h1 = 0.3125f, h0 = 1 - h1;
constexpr std::uint16_t sentinel = 0x7f7f;

/// fn(a, b, n) for rows a and b of 0..40 values (no whole vector up to 15, one partial vector before and after) and
/// 1,037 (64 vectors and 13), values in [-2, 2], each row ending at an inaccessible page (a masked load reads nothing
/// past it).
template <class Fn>
void for_each_blend_row(unsigned seed, Fn&& fn) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    std::vector<i64> lengths;
    for (i64 n = 0; n <= 40; ++n) lengths.push_back(n);
    lengths.push_back(1037);
    for (const i64 n : lengths) {
        guarded<float> a(n), b(n);
        for (i64 i = 0; i < n; ++i) a.data()[i] = u(rng), b.data()[i] = u(rng);
        fn(static_cast<const float*>(a.data()), static_cast<const float*>(b.data()), n);
    }
}

}  // namespace

// 1.5x nearest upsampling (512 -> 768, floor(j * 2 / 3)): block 0 (outputs 0..15) reads sources 0..10, base 0, so 11
// window elements (reads 0x7ff); block 1 (16..31) reads 10..20 (floor(16 * 2 / 3) = 10, floor(31 * 2 / 3) = 20),
// base 10, reads 0x7ff again. Entries 32..47 set to 0 and 100: a span of 100 >= 32, not windowed; entries 48..63
// with one -1 (a fill): not windowed; the partial block 64..69: not a block at all (70 / 16 = 4 blocks).
TEST(WindowGather, BlocksHoldTheirWindowOrFallBack) {
    std::vector<i64> t;
    for (i64 j = 0; j < 70; ++j) t.push_back(j * 2 / 3);
    for (i64 j = 32; j < 48; ++j) t[static_cast<std::size_t>(j)] = j % 2 == 0 ? 0 : 100;
    t[50] = -1;
    const window_blocks w = make_window_blocks({t.data()}, 70);
    ASSERT_EQ(w.base.size(), 4u);
    EXPECT_EQ(w.base[0], 0);
    EXPECT_EQ(w.reads[0], 0x7ffu);
    EXPECT_EQ(w.rel[15], 10);  // floor(15 * 2 / 3) = 10
    EXPECT_EQ(w.base[1], 10);
    EXPECT_EQ(w.reads[1], 0x7ffu);
    EXPECT_EQ(w.rel[16], 0);  // entry 16: 10 - 10
    EXPECT_EQ(w.base[2], -1);
    EXPECT_EQ(w.base[3], -1);
}

// Two tables share a block's window: bilinear's taps i0 and i1 = i0 + 1 (a 1.5x upsample reads 0..10 in block 0:
// output 15's source coordinate is 15.5 * 2 / 3 - 0.5 = 9.83, so i0 = 9 and i1 = 10), the second table's offsets
// after the first's.
TEST(WindowGather, TwoTablesShareOneWindow) {
    const taps t = make_taps(512, 768);
    const window_blocks w = make_window_blocks({t.i0.data(), t.i1.data()}, 768);
    ASSERT_EQ(w.base.size(), 48u);
    EXPECT_EQ(w.base[0], 0);
    EXPECT_EQ(w.rel[15], 9);        // i0 of output 15
    EXPECT_EQ(w.rel[16 + 15], 10);  // i1 of output 15
    EXPECT_EQ(w.reads[0], 0x7ffu);  // sources 0..10
}

// Upsampling (1.5x, 3x, 7 -> 1000: one source element for ~143 outputs), downsampling by less than 2 (windowed) and
// by 3 (every block spans 45 sources: scalar), rows shorter than a block and a source of one element. Each with the
// source ending at an inaccessible page: the last window reads up to the source's last element and no further.
TEST(WindowGather, VectorisedAndScalarPathsAgreeBitForBit) {
    for (const auto& [in, out] : std::vector<std::pair<i64, i64>>{
             {512, 768}, {100, 300}, {7, 1000}, {300, 200}, {300, 100}, {5, 9}, {1, 40}, {37, 37}})
        expect_paths_agree(in, out);
    RecordProperty("vectorised", window_gather_vectorised() ? "avx512f" : "scalar only (no AVX-512F)");
    RecordProperty("vectorised_2_byte", window_gather_u16_vectorised() ? "avx512bw" : "scalar only (no AVX-512BW)");
}

// bilinear's blend h0 * a + h1 * b, vectorised (AVX-512F, where the CPU has it: blend_rows returns true), against
// the formula bit for bit: rows of 0..40 elements (no whole vector up to 15, one partial vector before and after)
// and 1,037 (64 vectors and 13), starting at each of the 16 float offsets in a line, streamed and not; the 16
// elements either side keep their sentinel, and a and b end at an inaccessible page (a masked load reads nothing
// past the row).
TEST(WindowGather, BlendRowsMatchesTheFormulaBitForBit) {
    for_each_blend_row(11, [](const float* a, const float* b, i64 n) {
        for (const bool stream : {false, true})
            for (i64 at = 16; at < 32; ++at) {
                alignas(64) static float y[1037 + 64];
                std::fill(std::begin(y), std::end(y), -7.0f);
                const bool ran = blend_rows(a, b, h0, h1, y + at, n, stream);
                stream_fence();
                ASSERT_EQ(ran, window_gather_vectorised());
                if (!ran) return;  // nothing written: the caller's scalar loop blends (checked by the op's tests)
                for (i64 i = 0; i < n + at + 16; ++i) {
                    const i64 j = i - at;
                    const float want = j < 0 || j >= n ? -7.0f : h0 * a[j] + h1 * b[j];
                    std::uint32_t got_bits, want_bits;
                    std::memcpy(&got_bits, &y[i], 4);
                    std::memcpy(&want_bits, &want, 4);
                    ASSERT_EQ(got_bits, want_bits) << "element " << j << " of " << n << " at offset " << at - 16
                                                   << (stream ? ", streamed" : "");
                }
            }
    });
}

// blend_rows_bf16: the same blend rounded to bf16, where the CPU has AVX-512 BF16 (elsewhere it declines and writes
// nothing), against f32_to_bf16 of the formula bit for bit (both round to nearest even; the values here, within
// [-2, 2], are no float32 subnormals, which vcvtneps2bf16 alone flushes): rows of 0..40 values and 1,037, each
// output at the 32 2-byte offsets of a line, streamed and not, 16 sentinels either side.
TEST(WindowGather, BlendRowsIntoBf16MatchesTheFormulaBitForBit) {
    for_each_blend_row(13, [](const float* a, const float* b, i64 n) {
        for (const bool stream : {false, true})
            for (i64 at = 32; at < 64; ++at) {
                alignas(64) static std::uint16_t y[1037 + 128];
                std::fill(std::begin(y), std::end(y), sentinel);
                const bool ran = blend_rows_bf16(a, b, h0, h1, y + at, n, stream);
                stream_fence();
                if (!ran) {  // a CPU without AVX-512 BF16: declined, nothing written
                    ASSERT_TRUE(std::all_of(std::begin(y), std::end(y), [](std::uint16_t v) { return v == sentinel; }));
                    continue;
                }
                for (i64 i = 0; i < n + at + 16; ++i) {
                    const i64 j = i - at;
                    const std::uint16_t want =
                        j < 0 || j >= n ? sentinel : f32_to_bf16(h0 * a[j] + h1 * b[j]);
                    ASSERT_EQ(y[i], want) << "element " << j << " of " << n << " at offset " << at - 32
                                          << (stream ? ", streamed" : "");
                }
            }
    });
}
