// The AVX-512 BF16 row kernels of rms_norm and rotary (cpu/src/dnnl_bf16_rows.hpp) against their formulas evaluated
// here in float32 and rounded to bf16 (f32_to_bf16, the portable loops' rounding): rows of every length around the
// vector width, outputs at every 2-byte offset in a line, streamed and not, with sentinels either side of the output
// and the input ending at an inaccessible page (a masked load reads nothing past the row). Where the CPU lacks AVX-512
// BF16 the kernels must decline and write nothing (the portable loops run; the op tests check those).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "dnnl_bf16_rows.hpp"  // cpu/src
#include "dnnl_loops.hpp"      // cpu/src: bf16_to_f32, f32_to_bf16, stream_fence
#include "guarded_pages.hpp"

using namespace ridgeline::cpu::dnnl_detail;
using i64 = std::int64_t;
using u16 = std::uint16_t;
using ridgeline::test::guarded;

namespace {

/// How many bf16 steps apart two bf16 values of the same sign are (their bit patterns' distance).
i64 steps_apart(u16 a, u16 b) { return std::abs(static_cast<i64>(a) - static_cast<i64>(b)); }

constexpr u16 sentinel = 0x7f7f;  // a bf16 no kernel here writes (3.4e38)

/// An output buffer of n values at 2-byte offset `at` (0..31) from a line boundary, 40 sentinels either side.
struct out_buffer {
    std::vector<u16> storage;
    u16* y;
    out_buffer(i64 n, i64 at) : storage(static_cast<std::size_t>(n + 160), sentinel) {
        auto p = reinterpret_cast<std::uintptr_t>(storage.data() + 40);
        const auto aligned = (p + 63) / 64 * 64;
        y = reinterpret_cast<u16*>(aligned) + at;
    }
};

/// Both kernels decline a row of two values and write nothing (a CPU without AVX-512 BF16, or the setting off).
void expect_declined() {
    const u16 x[2] = {0x3f80, 0x4000};
    u16 y[2] = {sentinel, sentinel};
    const float c[2] = {1, 1}, s[2] = {0, 0};
    EXPECT_FALSE(rms_row_bf16(x, y, nullptr, 2, 0.0f, false));
    EXPECT_FALSE(rotary_slab_bf16(x, 2, y, c, s, 1, 2, false));
    EXPECT_EQ(y[0], sentinel);
    EXPECT_EQ(y[1], sentinel);
}

}  // namespace

// Ties round to even, as oneDNN's bf16 kernels and f32_to_bf16 do: one value x = 1 with eps 0 makes the scale exactly
// 1 / sqrt(1 / 1) = 1, so y = w; w = 1 + 2^-8 lies halfway between bf16's 1.0 (0x3f80) and 1.0078125 (0x3f81) and
// rounds to the even 0x3f80; w = 1 + 3 * 2^-8, halfway between 0x3f81 and 0x3f82, rounds to 0x3f82.
TEST(Bf16Rows, RmsNormRoundsTiesToEven) {
    const u16 one = 0x3f80;
    for (const auto& [w, want] : std::vector<std::pair<float, u16>>{{1.00390625f, 0x3f80}, {1.01171875f, 0x3f82}}) {
        u16 y = sentinel;
        const bool ran = rms_row_bf16(&one, &y, &w, 1, 0.0f, false);
        ASSERT_EQ(ran, bf16_rows_vectorised());
        if (!ran) {
            EXPECT_EQ(y, sentinel) << "declined, yet wrote";
            continue;
        }
        EXPECT_EQ(y, want) << "w = " << w;
        EXPECT_EQ(f32_to_bf16(w), want) << "the portable rounding";
    }
    RecordProperty("vectorised", bf16_rows_vectorised() ? "avx512_bf16" : "portable only (no AVX-512 BF16)");
}

// rms_norm rows of 0..70 values and 4,109 (256 vectors and 13), with and without a weight, each output at the 32
// 2-byte offsets of a line, streamed and not: every value within one bf16 step of x * (1 / sqrt(mean(x^2) + eps)) * w
// evaluated here in float32 (the kernel sums in another order: its scale can differ in the last float32 bit, which
// can move a rounding by one step), the sentinels untouched.
TEST(Bf16Rows, RmsNormMatchesItsFormula) {
    if (!bf16_rows_vectorised()) return expect_declined();  // the portable loop runs: the op tests check it
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-3.0f, 3.0f);
    std::vector<i64> lengths;
    for (i64 n = 1; n <= 70; ++n) lengths.push_back(n);
    lengths.push_back(4109);
    for (const i64 n : lengths) {
        guarded<u16> x(n);
        std::vector<float> w(static_cast<std::size_t>(n));
        double sq = 0;
        for (i64 i = 0; i < n; ++i) {
            x.data()[i] = f32_to_bf16(u(rng));
            w[static_cast<std::size_t>(i)] = u(rng);
            sq += static_cast<double>(bf16_to_f32(x.data()[i])) * bf16_to_f32(x.data()[i]);
        }
        const float eps = 1e-5f;
        const float inv = 1.0f / std::sqrt(static_cast<float>(sq) / static_cast<float>(n) + eps);
        for (const bool weighted : {true, false})
            for (const bool stream : {false, true})
                for (i64 at = 0; at < 32; ++at) {
                    out_buffer out(n, at);
                    ASSERT_TRUE(rms_row_bf16(x.data(), out.y, weighted ? w.data() : nullptr, n, eps, stream));
                    stream_fence();
                    for (i64 i = -40; i < n + 40; ++i) {
                        if (i < 0 || i >= n) {
                            ASSERT_EQ(out.y[i], sentinel) << "written outside the row at " << i << " of " << n;
                            continue;
                        }
                        const float v = bf16_to_f32(x.data()[i]) * inv * (weighted ? w[static_cast<std::size_t>(i)] : 1);
                        ASSERT_LE(steps_apart(out.y[i], f32_to_bf16(v)), 1)
                            << "value " << i << " of " << n << " at offset " << at << (stream ? ", streamed" : "")
                            << (weighted ? "" : ", no weight");
                    }
                }
    }
}

// Rotary slabs of 1..5 rows of dim 2, 6, 32, 34, 128 and 130 (halves inside and across vectors), rows read with a
// stride of dim + 3 (a padded view), the output at 4 offsets, streamed and not: each value within one bf16 step of
// x[i] cos[i] -/+ x[i +/- dim/2] sin[i] evaluated here (the kernel fuses a multiply-add: a rounding can move one step).
TEST(Bf16Rows, RotaryMatchesItsFormula) {
    if (!bf16_rows_vectorised()) return expect_declined();
    std::mt19937 rng(9);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    for (const i64 dim : {2, 6, 32, 34, 128, 130})
        for (i64 rows = 1; rows <= 5; ++rows) {
            const i64 stride = dim + 3, half = dim / 2;
            guarded<u16> x((rows - 1) * stride + dim);
            for (i64 i = 0; i < (rows - 1) * stride + dim; ++i) x.data()[i] = f32_to_bf16(u(rng));
            std::vector<float> c(static_cast<std::size_t>(rows * dim)), s(c.size());
            for (auto& v : c) v = u(rng);
            for (auto& v : s) v = u(rng);
            for (const bool stream : {false, true})
                for (const i64 at : {0, 1, 7, 31}) {
                    out_buffer out(rows * dim, at);
                    ASSERT_TRUE(rotary_slab_bf16(x.data(), stride, out.y, c.data(), s.data(), rows, dim, stream));
                    stream_fence();
                    for (i64 e = -40; e < rows * dim + 40; ++e) {
                        if (e < 0 || e >= rows * dim) {
                            ASSERT_EQ(out.y[e], sentinel) << "written outside the slab at " << e;
                            continue;
                        }
                        const i64 r = e / dim, i = e % dim;
                        const u16* xr = x.data() + r * stride;
                        const auto t = static_cast<std::size_t>(e);
                        const float v = i < half ? bf16_to_f32(xr[i]) * c[t] - bf16_to_f32(xr[i + half]) * s[t]
                                                 : bf16_to_f32(xr[i]) * c[t] + bf16_to_f32(xr[i - half]) * s[t];
                        ASSERT_LE(steps_apart(out.y[e], f32_to_bf16(v)), 1)
                            << "row " << r << " value " << i << " of dim " << dim << " at offset " << at
                            << (stream ? ", streamed" : "");
                    }
                }
        }
}

// With the setting off, the kernels decline and write nothing: the callers run the portable loops.
TEST(Bf16Rows, DeclineWhenNotAllowed) {
    const bool old = bf16_rows_allowed();
    bf16_rows_allowed() = false;
    EXPECT_FALSE(bf16_rows_vectorised());
    expect_declined();
    bf16_rows_allowed() = old;
}
