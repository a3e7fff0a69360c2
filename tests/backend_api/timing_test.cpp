// The timing protocol against a fake clock and a fake timer of coarse resolution.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "ridgeline/backend_api/timing.hpp"
#include "ridgeline/core/stats.hpp"
#include "../support/world_clock.hpp"

using namespace ridgeline::backend_api;

namespace {

/// Simulated time: every run advances it by the next run time; the timer reads it quantised to its
/// resolution (a coarse clock); the wall clock reads it exactly.
struct fake_world {
    double now_ns = 0;
    std::vector<double> run_ns;  // cycled
    std::size_t next = 0;
    std::int64_t runs = 0;
    void run() {
        now_ns += run_ns[next++ % run_ns.size()];
        ++runs;
    }
};

class fake_timer final : public device_timer {
public:
    fake_timer(fake_world& w, double resolution_ns, double overhead_ns) : w_(w), res_(resolution_ns), ovh_(overhead_ns) {}
    void start() override { start_ = std::floor(w_.now_ns / res_) * res_; }
    double stop_ms() override { return (std::floor(w_.now_ns / res_) * res_ - start_) * 1e-6; }
    double resolution_ns() const override { return res_; }
    double overhead_ns() const override { return ovh_; }
    std::string name() const override { return "fake"; }

private:
    fake_world& w_;
    double res_, ovh_, start_ = 0;
};

using fake_clock = ridgeline::test::world_clock<fake_world>;

}  // namespace

TEST(Timing, BatchSizingAgainstACoarseTimer) {
    // resolution 1 ms, overhead 0: a sample must last >= 1000 x 1 ms = 1 s; one run takes 10 us
    // -> 1 s / 10 us = 100,000 runs per sample
    fake_world w{0, {10'000.0}};
    fake_timer t(w, 1e6, 0);
    EXPECT_EQ(runs_per_sample(10'000.0, t), 100000);
    // the overhead term: resolution 1 ns, overhead 500 ns -> target max(1 us, 50 us) = 50 us -> 5 runs of 10 us
    fake_timer t2(w, 1.0, 500.0);
    EXPECT_EQ(runs_per_sample(10'000.0, t2), 5);
    // a run longer than the target is one run per sample
    EXPECT_EQ(runs_per_sample(1e9, t2), 1);
}

TEST(Timing, PerRunTimeIsSampleTimeOverTheRealRunCount) {
    // every run takes exactly 10 us: whatever the batch, the per-run time must come out as 0.010 ms
    fake_world w{0, {10'000.0}};
    fake_timer t(w, 1e6, 0);  // 1 ms resolution
    fake_clock c(w);
    timing_options o{.warmup_runs = 3, .warmup_ms = 0, .min_samples = 10, .min_time_s = 0, .max_time_s = 100};
    const timing_result r = measure([&] { w.run(); }, t, o, {}, &c);
    EXPECT_EQ(r.runs_per_sample, 100000);
    // the 1 ms clock quantises a 1 s sample by at most 1 ms: 0.1%
    EXPECT_NEAR(r.stats.median, 0.010, 0.010 * 1e-3);
    EXPECT_EQ(r.runs, r.samples * 100000);
    // warm-up runs read 0 on this clock: calibration samples (1, 10, 100 runs...) were discarded, not counted
    EXPECT_GT(r.calibration_runs, 0);
    EXPECT_EQ(w.runs, r.runs + r.warmup_runs + r.calibration_runs);
    for (double ms : r.sample_ms) EXPECT_GT(ms, 0.0);
    // identical samples: the CI has zero width, so the rule stops at min_samples
    EXPECT_EQ(r.samples, 10);
    EXPECT_TRUE(r.noise_target_met);
    EXPECT_EQ(r.stop_reason, stop_reason::noise_target_met);
}

TEST(Timing, StopsAtMaxTimeWhenTooNoisy) {
    // runs alternate 1 ms and 3 ms with one run per sample (fine timer): the median's CI spans both values,
    // far wider than 2%, so sampling stops at max_time (0.5 s of fake time) without meeting the target.
    fake_world w{0, {1e6, 3e6}};
    fake_timer t(w, 1.0, 0);
    fake_clock c(w);
    timing_options o{
        .warmup_runs = 2, .warmup_ms = 0, .min_samples = 10, .min_time_s = 0, .max_noise = 0.02, .max_time_s = 0.5};
    o.stable_min_samples = 0;  // the noise_stable exit off: the budget is the only exit left (next test: on)
    const timing_result r = measure([&] { w.run(); }, t, o, {}, &c);
    EXPECT_FALSE(r.noise_target_met);
    EXPECT_EQ(r.stop_reason, stop_reason::max_time);
    EXPECT_EQ(r.runs_per_sample, 1);
    // 0.5 s of alternating 1 and 3 ms runs: 250 samples (mean 2 ms)
    EXPECT_NEAR(static_cast<double>(r.samples), 250.0, 1.0);
    EXPECT_GE(r.sampling_time_s, 0.5);
    EXPECT_NEAR(r.stats.min, 1.0, 1e-9);
    EXPECT_NEAR(r.stats.max, 3.0, 1e-9);
}

TEST(Timing, StopsWhenTheNoiseSettlesAboveTheTarget) {
    // the same alternating 1 ms / 3 ms runs with the default rule: from 20 samples on the median's CI is
    // [x(j), x(n+1-j)] with both ends in different modes, [1, 3] ms, relative width 2 / median 2 = 1.0 at
    // every count (median 2: the two middle samples differ). It does not narrow while the count grows 8-fold, so
    // at the first noise test from 128 samples on the rule stops. The tests come when the count has grown by
    // max(1, n/16) since the last: 10, 11, ..., 32, 34, ..., 48, 51, ..., 63, 66, 70, 74, 78, 82, 87, 92, 97,
    // 103, 109, 115, 122, 129: 129 samples, 258 ms of fake time instead of the 2 s budget.
    fake_world w{0, {1e6, 3e6}};
    fake_timer t(w, 1.0, 0);
    fake_clock c(w);
    timing_options o{.warmup_runs = 2, .warmup_ms = 0, .min_time_s = 0};
    const timing_result r = measure([&] { w.run(); }, t, o, {}, &c);
    EXPECT_EQ(r.stop_reason, stop_reason::noise_stable);
    EXPECT_FALSE(r.noise_target_met);
    EXPECT_EQ(r.samples, 129);
    EXPECT_NEAR(r.stats.ci95_low, 1.0, 1e-9);
    EXPECT_NEAR(r.stats.ci95_high, 3.0, 1e-9);
    EXPECT_LT(r.sampling_time_s, 0.3);
}

TEST(Timing, ANarrowingCiIsNeverCalledStable) {
    // runs from one unchanging distribution: 997 run times spread evenly over [1, 2] ms, in a scrambled order
    // (k * 389 mod 997). The median's CI narrows as 1/sqrt(n): at n samples its ends lie near the quantiles
    // 1/2 -+ 0.98/sqrt(n), about 1.96/sqrt(n) ms apart around the 1.5 ms median, so the 2% target needs
    // (1.96 / (0.02 x 1.5))^2 ~ 4,270 samples. The rule must wait for them (noise target met), never calling
    // the still-narrowing CI stable.
    std::vector<double> times;
    for (int k = 0; k < 997; ++k) times.push_back(1e6 + 1e6 * static_cast<double>((k * 389) % 997) / 996.0);
    fake_world w{0, times};
    fake_timer t(w, 1.0, 0);
    fake_clock c(w);
    timing_options o{.warmup_runs = 2, .warmup_ms = 0, .min_time_s = 0, .max_time_s = 100};
    const timing_result r = measure([&] { w.run(); }, t, o, {}, &c);
    EXPECT_EQ(r.stop_reason, stop_reason::noise_target_met);
    EXPECT_TRUE(r.noise_target_met);
    EXPECT_GT(r.samples, 3500);
    EXPECT_LT(r.samples, 5500);
    std::printf("narrowing CI: noise target met at %lld samples\n", static_cast<long long>(r.samples));
}

TEST(Timing, UnchangingNoiseIsAlmostNeverCalledStable) {
    // 200 measurements of samples drawn from one unchanging distribution (lognormal, sigma 0.1: a CV of 10%;
    // target 1%, which needs ~400 samples): the rule with the real statistics (core::summarize) must meet the
    // target, not stop as noise stable. Over one doubling instead of three, a simulation of this rule stopped
    // 23% of such runs early (docs/timing.md); over three it stopped at most 1 in 100. Allowed here: 4 of 200.
    std::mt19937_64 rng(20261201);
    std::lognormal_distribution<double> draw(0.0, 0.1);
    timing_options o;
    o.min_time_s = 0;
    o.max_noise = 0.01;
    int stable = 0, met = 0;
    for (int run = 0; run < 200; ++run) {
        stopping_rule rule(o);
        std::vector<double> xs;
        for (int n = 1; n <= 20000; ++n) {
            xs.push_back(draw(rng));
            if (!rule.noise_test_due(n, 1.0)) continue;
            const auto st = ridgeline::core::summarize(xs);
            const stop_reason why = rule.after_noise_test(n, st.relative_ci_width(), st.ci_exact);
            if (why == stop_reason::noise_stable) ++stable;
            if (why == stop_reason::noise_target_met) ++met;
            if (why != stop_reason::none) break;
        }
    }
    std::printf("unchanging noise: %d of 200 met the target, %d stopped as noise stable\n", met, stable);
    EXPECT_LE(stable, 4);
    EXPECT_EQ(met + stable, 200);
}

TEST(Timing, TheStoppingRuleAlone) {
    // driven directly: a CI 10% wide at 16 samples and 9.6% at 128 (8x the samples) narrowed by 4% (< 5%):
    // stable; 10% then 8% (20% narrower) is not; 1.9% meets the 2% target whatever came before
    timing_options o;
    o.min_samples = 10;
    o.min_time_s = 0;
    stopping_rule stable(o);
    EXPECT_EQ(stable.after_noise_test(16, 0.10, true), stop_reason::none);
    EXPECT_EQ(stable.after_noise_test(64, 0.099, true), stop_reason::none);  // fewer than 128 samples
    EXPECT_EQ(stable.after_noise_test(128, 0.096, true), stop_reason::noise_stable);
    stopping_rule narrowing(o);
    EXPECT_EQ(narrowing.after_noise_test(16, 0.10, true), stop_reason::none);
    EXPECT_EQ(narrowing.after_noise_test(128, 0.08, true), stop_reason::none);
    EXPECT_EQ(narrowing.after_noise_test(256, 0.019, true), stop_reason::noise_target_met);
    // an interval that does not exist yet (fewer than 6 samples) is never narrow enough
    stopping_rule early(o);
    EXPECT_EQ(early.after_noise_test(5, 0.0, false), stop_reason::none);
    // the budget: 2 s, grown by 0.5 s of disturbed samples; 10 clean samples -> max time, else disturbed
    EXPECT_EQ(stable.after_budget(2.4, 0.5, 10, 0), stop_reason::none);
    EXPECT_EQ(stable.after_budget(2.5, 0.5, 10, 0), stop_reason::max_time);
    EXPECT_EQ(stable.after_budget(2.5, 0.5, 3, 12), stop_reason::disturbed);
    EXPECT_EQ(stable.after_budget(2.5, 0.5, 3, 4), stop_reason::none);  // neither minimum yet: sampling goes on
    // the growth is capped at twice the budget
    EXPECT_EQ(stable.after_budget(4.0, 9.0, 10, 0), stop_reason::max_time);
}

TEST(Timing, MinTimeAndMinSamplesAreHonoured) {
    // constant 1 ms runs: the CI is narrow at once, but sampling continues until 50 samples and 0.2 s
    fake_world w{0, {1e6}};
    fake_timer t(w, 1.0, 0);
    fake_clock c(w);
    timing_options o;
    o.warmup_runs = 1;
    o.warmup_ms = 10;  // 10 ms of warm-up = 10 runs
    o.min_samples = 50;
    o.min_time_s = 0.2;
    const timing_result r = measure([&] { w.run(); }, t, o, {}, &c);
    EXPECT_EQ(r.warmup_runs, 10);
    EXPECT_NEAR(static_cast<double>(r.samples), 200.0, 1.0);  // 0.2 s / 1 ms (min_time dominates min_samples)
    EXPECT_TRUE(r.noise_target_met);
}

TEST(Timing, ColdCacheFlushesBeforeEverySampleWithOneRunEach) {
    fake_world w{0, {1e5}};
    fake_timer t(w, 1.0, 0);
    fake_clock c(w);
    timing_options o{.warmup_runs = 2, .warmup_ms = 0, .min_samples = 10, .min_time_s = 0, .cache = cache_mode::cold};
    int flushes = 0;
    const timing_result r = measure([&] { w.run(); }, t, o, [&] { ++flushes; }, &c);
    EXPECT_EQ(r.runs_per_sample, 1);
    EXPECT_EQ(r.runs, r.samples);
    EXPECT_EQ(flushes, r.samples + r.warmup_runs);
}

// A cold sample is one run, and a timer's reading holds its own start/stop cost once (3 us here, as a CUDA event pair
// reads around no work): measure takes the measured overhead out, so a 100 us run reads 100 us, not 103.
TEST(Timing, ColdSamplesLeaveTheTimersOwnOverheadOut) {
    struct costly_timer final : device_timer {
        fake_world& w;
        double start_ns = 0;
        explicit costly_timer(fake_world& world) : w(world) {}
        void start() override { start_ns = w.now_ns; }
        double stop_ms() override { return (w.now_ns - start_ns + 3000.0) * 1e-6; }
        double resolution_ns() const override { return 500; }
        double overhead_ns() const override { return 3000; }
        std::string name() const override { return "costly"; }
    };
    fake_world w{0, {1e5}};
    costly_timer t(w);
    fake_clock c(w);
    timing_options o{.warmup_runs = 2, .warmup_ms = 0, .min_samples = 10, .min_time_s = 0, .cache = cache_mode::cold};
    const timing_result r = measure([&] { w.run(); }, t, o, [] {}, &c);
    ASSERT_GE(r.samples, 10);
    for (const double ms : r.sample_ms) EXPECT_NEAR(ms, 0.1, 1e-12);
    // a run shorter than the overhead's noise reads no less than the resolution (0.5 us), never 0 or negative
    EXPECT_DOUBLE_EQ(without_timer_overhead(0.0025, t), 0.0005);
    EXPECT_DOUBLE_EQ(without_timer_overhead(0.0130, t), 0.0100);
    // hot samples hold many runs (>= 100x the overhead): left as read
    o.cache = cache_mode::hot;
    const timing_result hot = measure([&] { w.run(); }, t, o, {}, &c);
    ASSERT_GE(hot.samples, 10);
    EXPECT_GT(hot.stats.median, 0.1);  // 100 us + 3 us / runs per sample
}

TEST(Timing, InterruptionStopsBetweenSamples) {
    fake_world w{0, {1e6}};
    fake_timer t(w, 1.0, 0);
    fake_clock c(w);
    std::atomic<bool> stop{false};
    timing_options o{.warmup_ms = 0, .min_samples = 1000, .max_time_s = 100};
    int calls = 0;
    const timing_result r = measure(
        [&] {
            w.run();
            if (++calls == 20) stop = true;
        },
        t, o, {}, &c, &stop);
    EXPECT_EQ(r.stop_reason, stop_reason::interrupted);
    EXPECT_LT(r.samples, 20);
}
