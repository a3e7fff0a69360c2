// The classification rule of docs/roofline.md on synthetic numbers.
#include <gtest/gtest.h>

#include "ridgeline/core/roofline.hpp"

using namespace ridgeline::core;

namespace {
// roofs: 100 GFLOP/s attained (issue peak 125), 10 GB/s (ridge 10 FLOP/B), dispatch 0.002 ms
const roofs r{100.0, 125.0, 10.0, 0.002};
}  // namespace

TEST(Roofline, ComputeBound) {
    // 1e9 flops, 1e6 bytes (intensity 1000): compute floor 1e9/100e9 s = 10 ms, memory floor 0.1 ms
    // measured 12.5 ms -> roof fraction 10/12.5 = 0.8
    const auto p = classify(1'000'000'000, 1'000'000, 12.5, 12.0, 13.0, r);
    EXPECT_EQ(p.bound, "compute");
    EXPECT_DOUBLE_EQ(p.compute_ms, 10.0);
    EXPECT_DOUBLE_EQ(p.memory_ms, 0.1);
    EXPECT_DOUBLE_EQ(p.floor_ms, 10.0);
    EXPECT_DOUBLE_EQ(p.roof_fraction, 0.8);
}

TEST(Roofline, MemoryBound) {
    // 1e6 flops, 1e8 bytes (intensity 0.01): memory floor 1e8/10e9 s = 10 ms; measured 20 ms -> 0.5
    const auto p = classify(1'000'000, 100'000'000, 20.0, 19.0, 21.0, r);
    EXPECT_EQ(p.bound, "memory");
    EXPECT_DOUBLE_EQ(p.floor_ms, 10.0);
    EXPECT_DOUBLE_EQ(p.roof_fraction, 0.5);
}

TEST(Roofline, OverheadBound) {
    // 42 flops, 200 bytes: floors ~1e-9 ms; 0.005 ms is within 4 x 0.002 = 0.008 ms of dispatch
    const auto p = classify(42, 200, 0.005, 0.0048, 0.0052, r);
    EXPECT_EQ(p.bound, "overhead");
    EXPECT_LT(p.roof_fraction, 0.5);
    // the same layer measured at 0.02 ms (10x dispatch) is no longer overhead: its floors decide
    EXPECT_EQ(classify(42, 200, 0.02, 0.019, 0.021, r).bound, "memory");
}

TEST(Roofline, AmbiguousNearTheRidge) {
    // intensity 10.5 FLOP/B vs ridge 10: within 10% -> ambiguous; 12 FLOP/B (ridge 17% below) -> compute
    EXPECT_EQ(classify(10'500'000'000, 1'000'000'000, 200.0, 190.0, 210.0, r).bound, "ambiguous");
    EXPECT_EQ(classify(12'000'000'000, 1'000'000'000, 200.0, 190.0, 210.0, r).bound, "compute");
    // the time's CI straddles 4 x dispatch (0.008 ms) while the roofs explain little: ambiguous
    EXPECT_EQ(classify(42, 200, 0.0075, 0.006, 0.0095, r).bound, "ambiguous");
}

TEST(Roofline, MistrustedBelowTheHardFloor) {
    // compute floor 10 ms at the attained roof; hard floor 1e9 / 125e9 s = 8 ms at the issue peak.
    // 5 ms (CI up to 5.1) is impossible: mistrusted
    const auto p = classify(1'000'000'000, 1'000'000, 5.0, 4.9, 5.1, r);
    EXPECT_EQ(p.bound, "mistrusted");
    EXPECT_DOUBLE_EQ(p.hard_floor_ms, 8.0);
    EXPECT_DOUBLE_EQ(p.roof_fraction, 2.0);
    // 9 ms beats the GEMM roof (roof fraction 1.11) but not the issue peak: a well-tuned layer, compute
    const auto q = classify(1'000'000'000, 1'000'000, 9.0, 8.9, 9.1, r);
    EXPECT_EQ(q.bound, "compute");
    EXPECT_NEAR(q.roof_fraction, 10.0 / 9.0, 1e-12);
    // a CI that reaches the hard floor is not mistrusted (within the measurement's uncertainty)
    EXPECT_EQ(classify(1'000'000'000, 1'000'000, 7.9, 7.5, 8.1, r).bound, "compute");
    // memory: floor 1e8 B / 10 GB/s = 10 ms; beating it 2x over (4 ms) is mistrusted, 6 ms is not
    EXPECT_EQ(classify(1'000'000, 100'000'000, 4.0, 3.9, 4.1, r).bound, "mistrusted");
    EXPECT_EQ(classify(1'000'000, 100'000'000, 6.0, 5.9, 6.1, r).bound, "memory");
}

TEST(Roofline, ViewsHaveNoBound) {
    EXPECT_EQ(classify(0, 0, 0.001, 0.001, 0.001, r).bound, "none");
}
