// The library API as a user's program calls it.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "ridgeline/api.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/core/zoo.hpp"

using namespace ridgeline;

TEST(Api, Counts) {
    const auto m = core::build_zoo_model("resnet18");
    EXPECT_EQ(count_parameters(m), 11689512);  // torchvision num_params
    EXPECT_EQ(count_macs(m), 1814073344);      // torchvision GMACs 1.81
    EXPECT_EQ(count_flops(m), 3637806568);     // 2*macs + bias adds + elementwise (ridgeline summary)
}

TEST(Api, MeasureLatencyOfACallable) {
    // a callable that sleeps 2 ms: the median is at least 2 ms (sleep never returns early) and the
    // statistics are consistent
    backend_api::timing_options o{
        .warmup_runs = 1, .warmup_ms = 0, .min_samples = 5, .min_time_s = 0, .max_noise = 0.5, .max_time_s = 0.2};
    const auto t = measure_latency([] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); }, o);
    EXPECT_GE(t.samples, 5);
    EXPECT_GE(t.stats.median, 2.0);
    EXPECT_LE(t.stats.min, t.stats.median);
    EXPECT_LE(t.stats.median, t.stats.max);
    EXPECT_EQ(t.runs_per_sample, 1);  // 2 ms is far above 1000x the clock's resolution
}

TEST(Api, ProfileOneLayerString) {
    auto b = make_backend("cpu");
    profiler::profile_options o;
    o.timing = backend_api::timing_options::quick();
    const auto p = profile_layer("linear:in_features=64,out_features=32", {core::shape{8, 64}}, *b, core::dtype::fp32, o);
    EXPECT_EQ(p.state, profiler::run_state::measured);
    EXPECT_EQ(p.verification.state, profiler::verification_state::passed);
    EXPECT_EQ(p.analysis.cost.macs, 8 * 64 * 32);
}

TEST(Api, ScopedTimerRecordsRegions) {
    timing_log log;
    for (int i = 0; i < 3; ++i) {
        scoped_timer s(log, "region");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const auto st = log.statistics("region");
    EXPECT_EQ(st.count, 3);
    EXPECT_GE(st.min, 1.0);
    EXPECT_EQ(log.names(), std::vector<std::string>{"region"});
    EXPECT_THROW((void)log.statistics("other"), core::error);
}
