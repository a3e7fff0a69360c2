// core::predict_time: the rule of docs/roofline.md ("Predicting another device") on hand-computed layers, and
// the invariants every prediction keeps.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <set>

#include "ridgeline/core/datasheet.hpp"
#include "ridgeline/core/predict.hpp"

namespace ridgeline::core {
namespace {

// Source: 100 GFLOP/s, 10 GB/s, 0.01 ms dispatch. Target: 200 GFLOP/s, 40 GB/s, 0.004 ms dispatch.
// The layer: 1e6 FLOPs and 5e4 bytes, so (GFLOP/s = 1e6 FLOP per ms)
//   source: compute 1e6 / 100e6 = 0.01 ms, memory 5e4 / 10e6 = 0.005 ms -> floor 0.01 ms (compute)
//   target: compute 1e6 / 200e6 = 0.005 ms, memory 5e4 / 40e6 = 0.00125 ms -> floor 0.005 ms (compute)
prediction_input layer(double median, double low, double high) {
    prediction_input in;
    in.flops = 1'000'000;
    in.bytes = 50'000;
    in.median_ms = median;
    in.ci95_low_ms = low;
    in.ci95_high_ms = high;
    in.source.compute_gflops = 100;
    in.source.bandwidth_gbs = 10;
    in.source.dispatch_ms = 0.01;
    in.target.compute_gflops = 200;
    in.target.bandwidth_gbs = 40;
    in.target.dispatch_ms = 0.004;
    return in;
}

TEST(Predict, SplitsTheWorkByWhatAccountsForItOnTheSource) {
    // median 0.03 ms: work 0.03 - 0.01 = 0.02 ms, e = 0.01 / 0.02 = 0.5; the memory floor 0.005 ms accounts for
    // m = 0.005 / 0.02 = 0.25 of the work, which scales by the memory floors' 0.00125 / 0.005 = 0.25, the other 0.75
    // by the compute floors' 0.005 / 0.01 = 0.5: scale 0.25 x 0.25 + 0.75 x 0.5 = 0.4375;
    // target: 0.004 + 0.02 x 0.4375 = 0.01275 ms; baseline 0.03 x 0.005 / 0.01 = 0.015 ms
    const prediction p = predict_time(layer(0.03, 0.028, 0.033), 0.15);  // an error of 15% given explicitly
    EXPECT_EQ(p.rule, prediction_rule::roofs);
    EXPECT_NEAR(p.efficiency, 0.5, 1e-12);
    EXPECT_NEAR(p.memory_share, 0.25, 1e-12);
    EXPECT_NEAR(p.time_ms, 0.01275, 1e-12);
    EXPECT_NEAR(p.baseline_ms, 0.015, 1e-12);
    EXPECT_NEAR(p.source_floor_ms, 0.01, 1e-12);
    EXPECT_NEAR(p.target_floor_ms, 0.005, 1e-12);
    // the CI through the rule (the split of the median): 0.004 + (0.028 - 0.01) x 0.4375 = 0.011875 and
    // 0.004 + (0.033 - 0.01) x 0.4375 = 0.0140625; widened by 15%
    EXPECT_NEAR(p.low_ms, 0.011875 / 1.15, 1e-12);
    EXPECT_NEAR(p.high_ms, 0.0140625 * 1.15, 1e-12);
    EXPECT_FALSE(p.bound_changes);
    EXPECT_NE(p.reason.find("the 25% its memory floor accounts for scales by 0.25, the rest by the compute roofs' 0.5"),
              std::string::npos)
        << p.reason;
}

TEST(Predict, TheSameRoofsPredictTheSameTime) {
    prediction_input in = layer(0.03, 0.029, 0.031);
    in.target = in.source;
    const prediction p = predict_time(in, 0.0);
    EXPECT_NEAR(p.time_ms, 0.03, 1e-12);
    EXPECT_NEAR(p.low_ms, 0.029, 1e-12);
    EXPECT_NEAR(p.high_ms, 0.031, 1e-12);
}

TEST(Predict, ATimeWithinTheDispatchCostScalesWithTheTargetsDispatchCost) {
    // 0.008 ms <= 0.01 ms dispatch: all fixed cost; on the target the target's fixed cost plus its floor:
    // 0.004 + 0.005 = 0.009 ms
    const prediction p = predict_time(layer(0.008, 0.0079, 0.0081), 0.0);
    EXPECT_EQ(p.rule, prediction_rule::dispatch);
    EXPECT_NEAR(p.time_ms, 0.009, 1e-12);
    EXPECT_TRUE(std::isnan(p.efficiency));
}

TEST(Predict, WorkFasterThanTheRoofsIsTakenAtTheRoofs) {
    // 0.012 ms: work 0.002 ms < floor 0.01 ms (dispatch overlapped the work), e capped at 1:
    // target 0.004 + 0.005 = 0.009 ms, never below its floor plus dispatch
    const prediction p = predict_time(layer(0.012, 0.0119, 0.0121), 0.0);
    EXPECT_EQ(p.rule, prediction_rule::roofs);
    EXPECT_DOUBLE_EQ(p.efficiency, 1.0);
    EXPECT_NEAR(p.time_ms, 0.009, 1e-12);
}

TEST(Predict, AFloorThatChangesResourceIsFlagged) {
    // target bandwidth 1 GB/s: memory 5e4 / 1e6 = 0.05 ms > compute 0.005 ms; the floor is memory there, compute
    // here. The work 0.02 ms: its memory quarter scales by 0.05 / 0.005 = 10, the rest by 0.5:
    // 0.004 + 0.02 x (0.25 x 10 + 0.75 x 0.5) = 0.004 + 0.0575 = 0.0615 ms
    prediction_input in = layer(0.03, 0.03, 0.03);
    in.target.bandwidth_gbs = 1;
    const prediction p = predict_time(in, 0.0);
    EXPECT_TRUE(p.bound_changes);
    EXPECT_NEAR(p.time_ms, 0.0615, 1e-12);
    EXPECT_NE(p.reason.find("compute on the source and memory on the target"), std::string::npos) << p.reason;
}

TEST(Predict, AMemoryBoundLayerSplitsItsWorkToo) {
    // 4e5 bytes: source memory 4e5 / 10e6 = 0.04 ms > compute 0.01 ms (memory); target memory 4e5 / 40e6 = 0.01 ms
    // > compute 0.005 ms. Median 0.09 ms: work 0.08 ms, of which the memory floor accounts for m = 0.04 / 0.08 = 0.5:
    // t = 0.004 + 0.08 x (0.5 x 0.25 + 0.5 x 0.5) = 0.004 + 0.03 = 0.034 ms
    prediction_input in = layer(0.09, 0.09, 0.09);
    in.bytes = 400'000;
    const prediction p = predict_time(in, 0.0);
    EXPECT_NEAR(p.memory_share, 0.5, 1e-12);
    EXPECT_NEAR(p.time_ms, 0.034, 1e-12);
    EXPECT_NEAR(p.baseline_ms, 0.09 * 0.25, 1e-12);  // the baseline scales the whole time by the floor ratio
    // a layer at its bandwidth roof (median 0.05: work 0.04 = its memory floor, m = 1) scales by the memory ratio
    // alone: 0.004 + 0.04 x 0.25 = 0.014 ms
    in.median_ms = in.ci95_low_ms = in.ci95_high_ms = 0.05;
    EXPECT_NEAR(predict_time(in, 0.0).time_ms, 0.014, 1e-12);
    // a target 100x faster in both (4e5 / 1e9 = 4e-4 ms of memory, 1e6 / 1e10 = 1e-4 ms of compute): both ratios
    // 0.01, so 0.004 + 0.04 x 0.01 = 0.0044 ms, which is also its dispatch plus floor
    in.target.bandwidth_gbs = 1000;
    in.target.compute_gflops = 10'000;
    EXPECT_NEAR(predict_time(in, 0.0).time_ms, 0.0044, 1e-12);
}

TEST(Predict, AColdCacheAddsTheBytesFromDramAndTheColdFixedCost) {
    // the same roofs on both sides (same device), the target judged cold: the bytes 5e4 come from DRAM at 5 GB/s
    // instead of the 10 GB/s level, and the fixed cost is 0.02 ms instead of 0.01 ms:
    // 0.03 + 5e4 / 5e6 - 5e4 / 10e6 + (0.02 - 0.01) = 0.03 + 0.01 - 0.005 + 0.01 = 0.045 ms
    prediction_input in = layer(0.03, 0.03, 0.03);
    in.target = in.source;
    in.shift = cache_shift{true, 10.0, 5.0, 0.01, 0.02};
    const prediction p = predict_time(in, 0.0);
    EXPECT_NEAR(p.time_ms, 0.045, 1e-12);
    EXPECT_NEAR(p.cache_shift_ms, 0.015, 1e-12);
    // and back: a cold source judged hot loses the same, but never goes below the hot floor plus dispatch
    in.shift->to_cold = false;
    const prediction back = predict_time(in, 0.0);
    // 0.03 - 0.015 = 0.015 is below the hot floor 0.01 plus the hot dispatch 0.01: 0.02
    EXPECT_NEAR(back.time_ms, 0.02, 1e-12);
}

TEST(Predict, APassFetchesItsBytesColdOnlyWhereTheHotCacheHeldThem) {
    // D = 100 MB, C = 200 MB (a pass keeps 0.5 x 200 = 100 MB: it fits), the level 32 GB/s, one run after a flush
    // 12.5 GB/s, fixed cost 0.001 -> 0.015 ms: 1e8 / 12.5e6 - 1e8 / 32e6 = 8 - 3.125 = 4.875 ms of bytes, plus 0.014 ms
    pass_cache_change c{1e8, 200'000'000, 32.0, 12.5, 0.001, 0.015};
    EXPECT_NEAR(pass_cache_shift_ms(c), 4.875 + 0.014, 1e-12);
    EXPECT_DOUBLE_EQ(pass_cache_share, 0.5);
    // D = 150 MB exceeds the 100 MB a pass keeps: the hot pass fetched them from DRAM already, only the fixed cost
    c.distinct_bytes = 1.5e8;
    EXPECT_NEAR(pass_cache_shift_ms(c), 0.014, 1e-12);
    c.distinct_bytes = 3e8;
    // a cache that holds nothing (0): only the fixed cost
    c.capacity_bytes = 0;
    EXPECT_NEAR(pass_cache_shift_ms(c), 0.014, 1e-12);
    // C unknown (-1): the pass is taken to fit, 3e8 / 12.5e6 - 3e8 / 32e6 = 24 - 9.375 = 14.625 ms
    c.capacity_bytes = -1;
    EXPECT_NEAR(pass_cache_shift_ms(c), 14.625 + 0.014, 1e-12);
    // a cold run faster than the level moves its bytes no slower: the bytes add nothing
    c.cold_gbs = 40;
    EXPECT_NEAR(pass_cache_shift_ms(c), 0.014, 1e-12);
    // the cold fixed cost unknown: the hot one, so only the bytes (back at 12.5 GB/s) change
    c.cold_gbs = 12.5;
    c.cold_dispatch_ms = 0;
    EXPECT_NEAR(pass_cache_shift_ms(c), 14.625, 1e-12);
    // a bandwidth unknown: no bytes term
    c.level_gbs = 0;
    EXPECT_DOUBLE_EQ(pass_cache_shift_ms(c), 0.0);
    // a negative or non-finite input: NaN, not a number that looks measured
    c.distinct_bytes = -1;
    EXPECT_TRUE(std::isnan(pass_cache_shift_ms(c)));
    c.distinct_bytes = std::numeric_limits<double>::infinity();
    EXPECT_TRUE(std::isnan(pass_cache_shift_ms(c)));
}

TEST(Predict, TheEndToEndGapScalesWithTheLayersDamped) {
    // source: 10 ms end to end, 8 ms of layers (gap 2 ms); layers predicted at 4 ms: 4 + 2 x 0.5^0.7
    EXPECT_NEAR(predict_end_to_end(10, 8, 4), 4 + 2 * std::pow(0.5, 0.7), 1e-12);
    // an end-to-end time below the layers' sum (no gap): scaled by the layers' ratio
    EXPECT_NEAR(predict_end_to_end(6, 8, 4), 3, 1e-12);
    EXPECT_TRUE(std::isnan(predict_end_to_end(0, 8, 4)));
}

TEST(Predict, NothingToPredictFromSaysWhy) {
    EXPECT_EQ(predict_time(layer(0.0, 0.0, 0.0)).rule, prediction_rule::none);
    EXPECT_TRUE(std::isnan(predict_time(layer(0.0, 0.0, 0.0)).time_ms));
    prediction_input in = layer(0.03, 0.03, 0.03);
    in.target = roofs{};
    in.target.compute_tolerance = 0;
    const prediction p = predict_time(in);
    EXPECT_EQ(p.rule, prediction_rule::none);
    EXPECT_EQ(p.reason, "the target has no roofs for this layer");
    // a layer with no floor, from a cold source to a hot target without a fixed cost: nothing is left to time
    prediction_input empty = layer(0.03, 0.03, 0.03);
    empty.flops = empty.bytes = 0;
    empty.target = empty.source;
    empty.shift = cache_shift{false, 10.0, 5.0, 0.0, 0.03};
    EXPECT_EQ(predict_time(empty).rule, prediction_rule::none);
}

TEST(Predict, EveryPredictionKeepsItsInvariants) {
    // random layers and roofs: 0 < low <= time <= high, and under the roofs rule the time is never below the
    // target's dispatch cost plus its floor (a prediction cannot beat the roofs)
    std::mt19937_64 rng(7);
    auto pick = [&](double lo, double hi) { return std::exp(std::uniform_real_distribution<double>(std::log(lo), std::log(hi))(rng)); };
    for (int i = 0; i < 2000; ++i) {
        prediction_input in;
        in.flops = static_cast<std::int64_t>(pick(1, 1e12));
        in.bytes = static_cast<std::int64_t>(pick(1, 1e10));
        in.median_ms = pick(1e-4, 1e3);
        in.ci95_low_ms = in.median_ms * pick(0.5, 1.0);
        in.ci95_high_ms = in.median_ms * pick(1.0, 2.0);
        for (roofs* r : {&in.source, &in.target}) {
            r->compute_gflops = pick(1, 1e6);
            r->bandwidth_gbs = pick(1, 1e5);
            r->dispatch_ms = pick(1e-4, 1e-1);
        }
        const prediction p = predict_time(in);
        ASSERT_NE(p.rule, prediction_rule::none);
        ASSERT_GT(p.low_ms, 0) << i;
        ASSERT_LE(p.low_ms, p.time_ms) << i;
        ASSERT_LE(p.time_ms, p.high_ms) << i;
        if (p.rule == prediction_rule::roofs) {
            ASSERT_GE(p.time_ms * (1 + 1e-12), in.target.dispatch_ms + p.target_floor_ms) << i;
        }
    }
}

TEST(Datasheet, EntriesAreAskedForByKeyNameOrAUniquePrefix) {
    EXPECT_EQ(datasheet_by_name("h100").device, "NVIDIA H100 SXM5 80GB");
    EXPECT_EQ(datasheet_by_name("H100 PCIe").key, "h100-pcie");
    EXPECT_EQ(datasheet_by_name("NVIDIA H200 NVL").key, "h200-nvl");
    EXPECT_EQ(datasheet_by_name("rtx").key, "rtx4090");  // a prefix of one entry
    try {
        (void)datasheet_by_name("a100");
        FAIL() << "a100 is a prefix of four entries";
    } catch (const std::invalid_argument& e) {
        EXPECT_STREQ(e.what(),
                     "\"a100\" names 4 datasheet entries (a100-sxm4-80gb, a100-sxm4-40gb, a100-pcie-80gb, a100-pcie-40gb); "
                     "give one of them");
    }
    try {
        (void)datasheet_by_name("tpu v5");
        FAIL() << "no entry";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("no datasheet entry is named \"tpu v5\" (the entries: a100-sxm4-80gb, "),
                  std::string::npos)
            << e.what();
    }
    EXPECT_THROW((void)datasheet_by_name(""), std::invalid_argument);
    std::set<std::string_view> keys;
    for (const auto& e : datasheet()) EXPECT_TRUE(keys.insert(e.key).second) << "duplicate key " << e.key;
}

}  // namespace
}  // namespace ridgeline::core
