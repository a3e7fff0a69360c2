// The classification rule of docs/roofline.md on synthetic numbers.
#include <gtest/gtest.h>

#include "ridgeline/core/roofline.hpp"

using namespace ridgeline::core;

namespace {
// roofs: compute 100 GFLOP/s, 10 GB/s (ridge 10 FLOP/B), dispatch 0.002 ms, tolerances 5% each
roofs make_roofs() {
    roofs r;
    r.compute_gflops = 100.0;
    r.bandwidth_gbs = 10.0;
    r.dispatch_ms = 0.002;
    r.compute_tolerance = 0.05;
    r.bandwidth_tolerance = 0.05;
    return r;
}
const roofs r = make_roofs();
}  // namespace

TEST(Roofline, ComputeBound) {
    // 1e9 flops, 1e6 bytes (intensity 1000): compute floor 1e9/100e9 s = 10 ms, memory floor 0.1 ms
    // measured 12.5 ms -> roof fraction 10/12.5 = 0.8
    const auto p = classify(1'000'000'000, 1'000'000, 12.5, 12.0, 13.0, r);
    EXPECT_EQ(p.bound, bound_class::compute);
    EXPECT_DOUBLE_EQ(p.compute_ms, 10.0);
    EXPECT_DOUBLE_EQ(p.memory_ms, 0.1);
    EXPECT_DOUBLE_EQ(p.floor_ms, 10.0);
    EXPECT_DOUBLE_EQ(p.roof_fraction, 0.8);
}

TEST(Roofline, MemoryBound) {
    // 1e6 flops, 1e8 bytes (intensity 0.01): memory floor 1e8/10e9 s = 10 ms; measured 20 ms -> 0.5
    const auto p = classify(1'000'000, 100'000'000, 20.0, 19.0, 21.0, r);
    EXPECT_EQ(p.bound, bound_class::memory);
    EXPECT_DOUBLE_EQ(p.floor_ms, 10.0);
    EXPECT_DOUBLE_EQ(p.roof_fraction, 0.5);
}

TEST(Roofline, OverheadBound) {
    // 42 flops, 200 bytes: floors ~1e-9 ms; 0.005 ms is within 4 x 0.002 = 0.008 ms of dispatch
    const auto p = classify(42, 200, 0.005, 0.0048, 0.0052, r);
    EXPECT_EQ(p.bound, bound_class::overhead);
    EXPECT_LT(p.roof_fraction, 0.5);
    // the same layer measured at 0.02 ms (10x dispatch) is no longer overhead: its floors decide
    EXPECT_EQ(classify(42, 200, 0.02, 0.019, 0.021, r).bound, bound_class::memory);
}

TEST(Roofline, AmbiguousNearTheRidge) {
    // intensity 10.5 FLOP/B vs ridge 10: within 10% -> ambiguous; 12 FLOP/B (ridge 17% below) -> compute
    EXPECT_EQ(classify(10'500'000'000, 1'000'000'000, 200.0, 190.0, 210.0, r).bound, bound_class::ambiguous);
    EXPECT_EQ(classify(12'000'000'000, 1'000'000'000, 200.0, 190.0, 210.0, r).bound, bound_class::compute);
    // the time's CI straddles 4 x dispatch (0.008 ms) while the roofs explain little: ambiguous
    EXPECT_EQ(classify(42, 200, 0.0075, 0.006, 0.0095, r).bound, bound_class::ambiguous);
}

TEST(Roofline, AboveTheRoofBeyondItsToleranceIsMistrusted) {
    // compute floor 10 ms; with a 5% tolerance the hard floor is 10 / 1.05 = 9.5238 ms
    const auto p = classify(1'000'000'000, 1'000'000, 9.0, 8.9, 9.1, r);
    EXPECT_EQ(p.bound, bound_class::mistrusted);
    EXPECT_NEAR(p.hard_floor_ms, 10.0 / 1.05, 1e-12);
    EXPECT_NEAR(p.roof_fraction, 10.0 / 9.0, 1e-12);
    EXPECT_NE(p.reason.find("compute roof"), std::string::npos) << p.reason;
    // 9.7 ms is 3% above the roof (10 / 9.7 = 1.031): within the tolerance it reads as at the roof
    const auto q = classify(1'000'000'000, 1'000'000, 9.7, 9.6, 9.8, r);
    EXPECT_EQ(q.bound, bound_class::compute);
    // a CI whose slow end reaches the hard floor is not mistrusted (the measurement's own uncertainty)
    EXPECT_EQ(classify(1'000'000'000, 1'000'000, 9.4, 9.3, 9.6, r).bound, bound_class::compute);
    // memory: floor 1e8 B / 10 GB/s = 10 ms; 9.0 ms (CI to 9.1) beats it by 10% > 5%: mistrusted; 9.7 ms is not
    const auto m = classify(1'000'000, 100'000'000, 9.0, 8.9, 9.1, r);
    EXPECT_EQ(m.bound, bound_class::mistrusted);
    EXPECT_NE(m.reason.find("memory roof"), std::string::npos) << m.reason;
    EXPECT_EQ(classify(1'000'000, 100'000'000, 9.7, 9.6, 9.8, r).bound, bound_class::memory);
}

TEST(Roofline, FewerMultipliesThanCountedIsJudgedOnBandwidthOnly) {
    // a Winograd convolution: 5 ms against a 10 ms compute floor is 2x the roof, which such an algorithm may
    // reach; with compute_checked off only the memory roof (0.1 ms here) could mistrust it
    roofs wino = r;
    wino.compute_checked = false;
    const auto p = classify(1'000'000'000, 1'000'000, 5.0, 4.9, 5.1, wino);
    EXPECT_EQ(p.bound, bound_class::compute);
    EXPECT_DOUBLE_EQ(p.roof_fraction, 2.0);
    EXPECT_NEAR(p.hard_floor_ms, 0.1 / 1.05, 1e-12);
}

TEST(Roofline, ToleranceFromSpread) {
    // 2% plus the measured spread, at most 10%
    EXPECT_DOUBLE_EQ(roof_tolerance(0.0), 0.02);
    EXPECT_DOUBLE_EQ(roof_tolerance(0.03), 0.05);
    EXPECT_DOUBLE_EQ(roof_tolerance(0.5), 0.10);
    EXPECT_DOUBLE_EQ(roof_tolerance(-1.0), 0.02);
}

TEST(Roofline, ViewsHaveNoBound) {
    EXPECT_EQ(classify(0, 0, 0.001, 0.001, 0.001, r).bound, bound_class::none);
}

// Every verdict names its deciding rule as a short code (the table's "rule" column), and an ambiguous one its two
// candidates; the roofs as above (ridge 10 FLOP/B, 4 x dispatch = 0.008 ms).
TEST(Roofline, EachVerdictNamesItsRuleAndAnAmbiguousOneItsCandidates) {
    const auto compute = classify(1'000'000'000, 1'000'000, 12.5, 12.0, 13.0, r);
    EXPECT_EQ(compute.rule, "C>M");
    EXPECT_TRUE(compute.candidates.empty());
    EXPECT_EQ(classify(1'000'000, 100'000'000, 20.0, 19.0, 21.0, r).rule, "M>C");
    EXPECT_EQ(classify(42, 200, 0.005, 0.0048, 0.0052, r).rule, "<=4D");
    // the CI 0.006-0.0095 ms straddles 0.008 ms; the memory floor (2e-5 ms) is the larger: overhead or memory
    const auto straddles = classify(42, 200, 0.0075, 0.006, 0.0095, r);
    EXPECT_EQ(straddles.rule, "~4D");
    EXPECT_EQ(straddles.candidates, (std::vector<bound_class>{bound_class::overhead, bound_class::memory}));
    EXPECT_NE(straddles.reason.find("overhead or memory"), std::string::npos) << straddles.reason;
    // intensity 10.5 against the ridge 10: compute or memory
    const auto ridge = classify(10'500'000'000, 1'000'000'000, 200.0, 190.0, 210.0, r);
    EXPECT_EQ(ridge.rule, "~ridge");
    EXPECT_EQ(ridge.candidates, (std::vector<bound_class>{bound_class::compute, bound_class::memory}));
    // 9 ms against a 10 ms compute floor (hard floor 9.52): beats the compute roof
    EXPECT_EQ(classify(1'000'000'000, 1'000'000, 9.0, 8.9, 9.1, r).rule, ">C");
    // 1e8 bytes at 10 GB/s = 10 ms, measured 8 ms: beats the memory roof
    EXPECT_EQ(classify(1'000, 100'000'000, 8.0, 7.9, 8.1, r).rule, ">M");
    EXPECT_EQ(classify(0, 0, 1.0, 0.9, 1.1, r).rule, "-");
}
