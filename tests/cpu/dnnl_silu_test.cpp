// ridgeline's own SiLU loop (cpu/src/dnnl_silu.hpp), both paths (AVX-512 where this CPU has it, and the portable one),
// against x / (1 + e^-x) in double precision: its error bound over the range where float's e^-x is finite, the clamp
// beyond it, NaN and the infinities, every length and offset (the masked tail), in place, and over 1-3 threads
// (each thread's slice of whole lines: an element written twice or never shows).
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "dnnl_silu.hpp"  // cpu/src

using namespace ridgeline::cpu::dnnl_detail;
using i64 = std::int64_t;

namespace {

double silu_exact(double x) { return x / (1.0 + std::exp(-x)); }

const silu_path paths[] = {silu_path::fastest, silu_path::portable};

}  // namespace

TEST(SiluLoop, MatchesTheFormulaWithinItsBound) {
    // x from -87 to 87 by 1/64 (11,137 values, with every tie of the rounding to nearest at a half step): the
    // relative error is the Taylor polynomial's 1.2e-7 plus about four roundings of 6e-8 (dnnl_silu.hpp), 3.6e-7:
    // 5e-7 bounds it (measured on a Zen 4: 2.2e-7 on the AVX-512 path, 2.6e-7 on the portable one)
    std::vector<float> x;
    for (i64 k = -87 * 64; k <= 87 * 64; ++k) x.push_back(static_cast<float>(k) / 64.0f);
    for (const silu_path p : paths) {
        std::vector<float> y(x.size());
        silu_f32(x.data(), y.data(), static_cast<i64>(x.size()), p);
        double worst = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            const double e = silu_exact(x[i]);
            if (e != 0) worst = std::max(worst, std::abs(y[i] - e) / std::abs(e));
            else EXPECT_EQ(y[i], 0.0f);
        }
        EXPECT_LT(worst, 5e-7) << static_cast<int>(p);
        EXPECT_GT(worst, 0.0) << static_cast<int>(p);  // an approximation, not the library's expf
    }
}

TEST(SiluLoop, KnownValuesClampAndSpecials) {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    // silu(1) = 1 / (1 + e^-1) = 0.7310585786; silu(-2) = -2 / (1 + e^2) = -0.2384058440; silu(0) = 0;
    // silu(20) = 20 / (1 + 2.06e-9) = 20 in float; x = -87 (inside the clamp at -126 ln 2 = -87.34): -87 e^-87 / (1 +
    // e^-87) = -1.4429e-36; x = -100, -1e30, the lowest float: past the clamp sigmoid is taken as 0, so -0 (exactly
    // -3.7e-42, -0 and -0 in float); -inf * 0: NaN, as -inf / inf
    const float lowest = std::numeric_limits<float>::lowest();
    const std::vector<float> x{1, -2, 0, 20, -87, -100, -1e30f, lowest, nan, inf, -inf};
    for (const silu_path p : paths) {
        std::vector<float> y(x.size());
        silu_f32(x.data(), y.data(), static_cast<i64>(x.size()), p);
        EXPECT_NEAR(y[0], 0.7310585786, 1e-6);
        EXPECT_NEAR(y[1], -0.2384058440, 1e-6);
        EXPECT_EQ(y[2], 0.0f);
        EXPECT_EQ(y[3], 20.0f);
        EXPECT_NEAR(y[4], silu_exact(-87), 1e-6 * -silu_exact(-87));
        for (std::size_t i : {5, 6, 7}) {
            EXPECT_EQ(y[i], 0.0f) << x[i];
            EXPECT_TRUE(std::signbit(y[i])) << x[i];
        }
        EXPECT_TRUE(std::isnan(y[8]));
        EXPECT_EQ(y[9], inf);
        EXPECT_TRUE(std::isnan(y[10]));
    }
}

TEST(SiluLoop, EveryLengthOffsetAndThreadCountWritesEachElementOnce) {
    // lengths 0-70 (the 16-float vectors' tails) at offsets 0-16 floats from a 64-byte line, in place and not, on
    // 1-3 threads: y[i] within 1e-6 of the formula for i < n, and the guard floats after n never written
    const int threads = omp_get_max_threads();
    for (int t = 1; t <= 3; ++t) {
        omp_set_num_threads(t);
        for (const silu_path p : paths)
            for (i64 n = 0; n <= 70; ++n)
                for (i64 off = 0; off <= 16; ++off)
                    for (const bool in_place : {false, true}) {
                        std::vector<float> x(static_cast<std::size_t>(off + n + 16)), y(x.size(), -7.0f);
                        for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 23) * 0.37f - 4.0f;
                        const std::vector<float> x0 = x;
                        float* out = in_place ? x.data() + off : y.data() + off;
                        silu_f32(x.data() + off, out, n, p);
                        const std::vector<float>& written = in_place ? x : y;
                        for (i64 i = 0; i < n; ++i)
                            ASSERT_NEAR(out[i], silu_exact(x0[static_cast<std::size_t>(off + i)]), 1e-6)
                                << "n " << n << " offset " << off << " element " << i << " threads " << t;
                        for (i64 i = off + n; i < static_cast<i64>(written.size()); ++i)
                            ASSERT_EQ(written[static_cast<std::size_t>(i)],
                                      in_place ? x0[static_cast<std::size_t>(i)] : -7.0f)
                                << "n " << n << " offset " << off << " wrote past the end at " << i;
                    }
    }
    omp_set_num_threads(threads);
}
