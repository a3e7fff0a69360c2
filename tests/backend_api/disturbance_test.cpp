// Disturbed samples (backend_api/disturbance.hpp, docs/timing.md): the rule and the /proc parsers on synthetic
// accounting, and the timing protocol replacing disturbed samples, with a fake timer whose meter reports
// what a scripted neighbour took.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ridgeline/backend_api/disturbance.hpp"
#include "ridgeline/backend_api/timing.hpp"
#include "../support/world_clock.hpp"

using namespace ridgeline::backend_api;

TEST(Disturbance, TheRuleIsFivePercentOfTheSampleLost) {
    struct rule_case {
        const char* what;
        sample_disturbance d;
        bool disturbed;
    };
    const rule_case cases[] = {
        // a 1 ms sample one of whose threads waited 0.04 ms in the run queue lost 4%: clean; 0.06 ms (6%): disturbed
        {"4% waited", {.wall_ms = 1.0, .max_thread_wait_ms = 0.04}, false},
        {"6% waited", {.wall_ms = 1.0, .max_thread_wait_ms = 0.06}, true},
        // the longest steal of a CPU counts too: 0.03 wait + 0.03 steal = 6%
        {"3% waited, 3% stolen", {.wall_ms = 1.0, .max_thread_wait_ms = 0.03, .steal_ms = 0.03}, true},
        // the 8 ms layers of a busy 2-core machine: a 4 ms time slice waited in an 8 ms sample
        {"a time slice of 8 ms", {.wall_ms = 8.0, .run_queue_wait_ms = 4.0, .max_thread_wait_ms = 4.0}, true},
        // 64 threads each waking 0.03 ms late on a 1 ms sample: 1.92 ms of summed wait, but no thread held the team
        // more than 3%: clean (the sum feeds stolen_fraction only)
        {"64 threads 3% late",
         {.wall_ms = 1.0, .run_queue_wait_ms = 64 * 0.03, .max_thread_wait_ms = 0.03, .threads = 64},
         false},
        // a GPU sample at 70% of the default clock is below nvbench's 75% threshold; at 80% it is clean
        {"GPU clock at 70%", {.wall_ms = 1.0, .clock_fraction = 0.70}, true},
        {"GPU clock at 80%", {.wall_ms = 1.0, .clock_fraction = 0.80}, false},
    };
    for (const rule_case& c : cases) EXPECT_EQ(is_disturbed(c.d), c.disturbed) << c.what;
    EXPECT_DOUBLE_EQ(cases[2].d.lost_ms(), 0.06);  // the longest wait plus the longest steal
}

TEST(Disturbance, ParsesSchedstatAndSteal) {
    // /proc/<pid>/task/<tid>/schedstat: time on the CPU, run-queue wait (ns), timeslices
    const auto v = parse_schedstat("123456789 4000000 17\n");
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->first, 123456789);
    EXPECT_EQ(v->second, 4000000);
    EXPECT_FALSE(parse_schedstat("").has_value());
    EXPECT_FALSE(parse_schedstat("garbage").has_value());
    // /proc/stat: the 8th value of a cpuN line is steal; the "cpu " total line is not a CPU
    const char* stat =
        "cpu  63574 0 7900 13956 359 0 73 900 0 0\n"
        "cpu0 31569 0 3582 7781 24 0 10 37 0 0\n"
        "cpu1 32005 0 4318 6175 335 0 62 40 0 0\n"
        "cpu12 1 2 3 4 5 6 7 1000 0 0\n"
        "intr 12345 0 0\n";
    using ticks = std::vector<std::int64_t>;
    EXPECT_EQ(parse_steal_ticks(stat, {0}), (ticks{37}));
    EXPECT_EQ(parse_steal_ticks(stat, {0, 1}), (ticks{37, 40}));
    EXPECT_EQ(parse_steal_ticks(stat, {1, 12}), (ticks{40, 1000}));  // cpu12 is not cpu1
    // the longest steal over a sample: of every CPU (a CPU backend's threads use them all), or only of the CPUs
    // the launching thread was on (a GPU's): cpu 12 stole 9 ticks, cpu 1 stole 2, cpu 3 none
    const std::vector<int> cpus{1, 3, 12};
    EXPECT_EQ(longest_steal_ticks({40, 7, 1000}, {42, 7, 1009}, cpus, {}), 9);
    EXPECT_EQ(longest_steal_ticks({40, 7, 1000}, {42, 7, 1009}, cpus, {1, 3}), 2);
    EXPECT_EQ(longest_steal_ticks({40, 7, 1000}, {42, 7, 1009}, cpus, {3}), 0);
    EXPECT_EQ(longest_steal_ticks({40, 7, 1000}, {42, 7, 1009}, cpus, {5}), 0);  // a CPU it may not use
    EXPECT_EQ(parse_steal_ticks(stat, {5}), (ticks{0}));             // a CPU /proc/stat does not list
    // a file cut short in a line (a buffer too small for hundreds of CPUs) does not read the cut line
    EXPECT_EQ(parse_steal_ticks("cpu0 1 2 3 4 5 6 7 37 0 0\ncpu1 1 2 3 4 5 6 7 4", {0, 1}), (ticks{37, 0}));
}

// A GPU's meter watches the launching thread alone: with a second thread of this process busy, a sample counts one
// thread (the calling one), where the process-wide meter counts both.
TEST(Disturbance, TheLaunchingThreadsMeterWatchesThatThreadAlone) {
    cpu_disturbance_meter m(meter_scope::calling_thread);
    if (m.source().rfind("unavailable", 0) == 0) GTEST_SKIP() << m.source();
    EXPECT_NE(m.source().find("(the launching thread)"), std::string::npos) << m.source();
    std::atomic<bool> stop{false};
    std::thread busy([&] {
        volatile double x = 0;
        while (!stop.load()) x = x + 1.0;
    });
    auto spin_ms = [](double ms) {
        const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(ms);
        volatile double y = 0;
        while (std::chrono::steady_clock::now() < end) y = y + 1.0;
    };
    spin_ms(5);  // the busy thread has run by now
    m.arm();
    m.before_sample();
    spin_ms(20);
    const sample_disturbance d = m.after_sample(20.0);
    cpu_disturbance_meter all;
    all.arm();
    all.before_sample();
    spin_ms(20);
    const sample_disturbance e = all.after_sample(20.0);
    stop = true;
    busy.join();
    EXPECT_EQ(d.threads, 1);
    EXPECT_GE(e.threads, 2);  // this thread and the busy one
}

TEST(Disturbance, TheLinuxMeterSeesItsOwnThreadsWait) {
    cpu_disturbance_meter m;
    if (m.source().rfind("unavailable", 0) == 0) GTEST_SKIP() << m.source();
    EXPECT_EQ(m.source().rfind("schedstat", 0), 0u) << m.source();
    // a sample in which this thread sleeps loses nothing to the run queue (sleeping is not waiting to run)
    m.arm();
    m.before_sample();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const sample_disturbance d = m.after_sample(20.0);
    EXPECT_DOUBLE_EQ(d.wall_ms, 20.0);
    EXPECT_GE(d.run_queue_wait_ms, 0.0);
    EXPECT_GE(d.involuntary_switches, 0);
}

namespace {

/// Time advances by each run's time; the meter reports, per sample, what the script says other work took.
struct scripted_world {
    double now_ns = 0;
    double run_ns = 100'000;  // 0.1 ms per run
    std::vector<double> lost_fraction;  // per sample, cycled; the sample also takes that much longer
    std::vector<double> clock{1.0};     // per sample, cycled: the GPU's SM clock / its default
    std::size_t sample = 0;
};

class scripted_meter final : public disturbance_meter {
public:
    explicit scripted_meter(scripted_world& w) : w_(w) {}
    void arm() override {}
    void before_sample() override {}
    sample_disturbance after_sample(double wall_ms) override {
        const double clock = w_.clock[w_.sample % w_.clock.size()];
        const double f = w_.lost_fraction[w_.sample++ % w_.lost_fraction.size()];
        sample_disturbance d;
        d.clock_fraction = clock;
        if (clock < throttled_clock_fraction) d.throttle_cause = "SM clock at " + std::to_string(clock);
        d.wall_ms = wall_ms;
        d.run_queue_wait_ms = f * wall_ms;
        d.max_thread_wait_ms = f * wall_ms;
        d.threads = 2;
        return d;
    }
    std::string source() const override { return "scripted"; }

private:
    scripted_world& w_;
};

class scripted_timer final : public device_timer {
public:
    explicit scripted_timer(scripted_world& w) : w_(w), meter_(w) {}
    void start() override { start_ = w_.now_ns; }
    double stop_ms() override {
        // other work lengthens the sample by what it took: wall = work / (1 - lost)
        const double f = w_.lost_fraction[w_.sample % w_.lost_fraction.size()];
        w_.now_ns = start_ + (w_.now_ns - start_) / (1.0 - f);
        return (w_.now_ns - start_) * 1e-6;
    }
    double resolution_ns() const override { return 1; }
    double overhead_ns() const override { return 0; }
    std::string name() const override { return "scripted"; }
    disturbance_meter* disturbance() override { return &meter_; }

private:
    scripted_world& w_;
    scripted_meter meter_;
    double start_ = 0;
};

using scripted_clock = ridgeline::test::world_clock<scripted_world>;

timing_options protocol() {
    timing_options o{
        .warmup_runs = 1, .warmup_ms = 0, .min_samples = 10, .min_time_s = 0, .max_noise = 0.02, .max_time_s = 0.05};
    return o;
}

/// The protocol's measurement of a 0.1 ms run whose samples lose `lost_fraction` (cycled) of their time to a
/// scripted neighbour.
timing_result measure_losing(std::vector<double> lost_fraction) {
    scripted_world w;
    w.lost_fraction = std::move(lost_fraction);
    scripted_timer t(w);
    scripted_clock c(w);
    return measure([&] { w.now_ns += w.run_ns; }, t, protocol(), {}, &c);
}

}  // namespace

TEST(Disturbance, DisturbedSamplesAreReplacedAndKeptOutOfTheStatistics) {
    // every third sample loses half its time to a neighbour (it takes 0.2 ms instead of 0.1 ms): those are
    // replaced, so the median is the clean 0.1 ms, not pulled up
    const timing_result r = measure_losing({0.0, 0.0, 0.5});
    EXPECT_FALSE(r.disturbed);
    EXPECT_GE(r.clean_samples, 10);
    EXPECT_EQ(r.samples, r.clean_samples);
    EXPECT_GT(r.disturbed_samples, 0);
    // a run of 0.1 ms in clean samples: the median and the worst kept sample are 0.1 ms
    EXPECT_NEAR(r.stats.median, 0.1, 1e-9);
    EXPECT_NEAR(r.stats.max, 0.1, 1e-9);
    for (double ms : r.disturbed_sample_ms) EXPECT_NEAR(ms, 0.2, 1e-9);
    EXPECT_EQ(r.disturbance_source, "scripted");
    EXPECT_DOUBLE_EQ(r.stolen_fraction, 0.0);  // the kept samples lost nothing
}

TEST(Disturbance, ALayerThatCannotCollectCleanSamplesIsDisturbed) {
    // every sample loses 60%: nothing clean. The budget grows by the lost wall time, at most to twice
    // max_time (0.1 s of sampling), then the measurement stops, disturbed, with the disturbed samples as its time
    const timing_result r = measure_losing({0.6});
    EXPECT_TRUE(r.disturbed);
    EXPECT_EQ(r.stop_reason, stop_reason::disturbed);
    EXPECT_EQ(r.clean_samples, 0);
    EXPECT_GE(r.disturbed_samples, 10);
    EXPECT_GE(r.sampling_time_s, 2 * 0.05);         // the budget grew to twice max_time
    EXPECT_LT(r.sampling_time_s, 2 * 0.05 + 0.01);  // and no further (one more sample at most)
    // its time is that of the disturbed samples: 0.1 ms / (1 - 0.6) = 0.25 ms, flagged
    EXPECT_NEAR(r.stats.median, 0.25, 1e-9);
    // and what was stolen is said, not 0: the scripted meter's 2 threads waited 0.6 of the wall time in all,
    // 0.6 / 2 thread-walls = 0.3 of the threads' time
    EXPECT_NEAR(r.stolen_fraction, 0.3, 1e-9);
}

TEST(Disturbance, TheAccountingTurnedOffIsSaid) {
    // RIDGELINE_DISTURBANCE=off|0|false|no in any case turns it off; anything else leaves it on
    const char* before = std::getenv("RIDGELINE_DISTURBANCE");
    const std::string saved = before ? before : "";
    for (const char* v : {"off", "OFF", "0", "False", "no"}) {
        ::setenv("RIDGELINE_DISTURBANCE", v, 1);
        EXPECT_TRUE(disturbance_accounting_off()) << v;
    }
    for (const char* v : {"on", "", "1", "offf"}) {
        ::setenv("RIDGELINE_DISTURBANCE", v, 1);
        EXPECT_FALSE(disturbance_accounting_off()) << v;
    }
    // a timer made with it off carries a meter that says so (the reports' warning and the ceilings' refusal
    // to cache read that source)
    ::setenv("RIDGELINE_DISTURBANCE", "Off", 1);
    steady_timer t;
    EXPECT_EQ(t.disturbance()->source().rfind("off", 0), 0u) << t.disturbance()->source();
    if (before) ::setenv("RIDGELINE_DISTURBANCE", saved.c_str(), 1);
    else ::unsetenv("RIDGELINE_DISTURBANCE");
}

TEST(Disturbance, AQuietMachineLosesNothing) {
    const timing_result r = measure_losing({0.0});
    EXPECT_FALSE(r.disturbed);
    EXPECT_EQ(r.disturbed_samples, 0);
    EXPECT_NE(r.stop_reason, stop_reason::disturbed);
}

// A GPU sample whose mean SM clock fell below 75% of the default is replaced like a disturbed one; the measurement
// keeps the first throttled sample's cause (the meter's words: the clock and NVML's reasons) and the kept samples'
// lowest and mean clock.
TEST(Disturbance, AThrottledSampleIsReplacedAndItsCauseKept) {
    scripted_world w;
    w.lost_fraction = {0.0};
    w.clock = {1.0, 0.9, 0.5};  // every third sample ran at half the default clock
    scripted_timer t(w);
    scripted_clock c(w);
    const timing_result r = measure([&] { w.now_ns += w.run_ns; }, t, protocol(), {}, &c);
    EXPECT_FALSE(r.disturbed);
    EXPECT_GT(r.disturbed_samples, 0);
    EXPECT_DOUBLE_EQ(r.min_clock_fraction, 0.9);
    // kept samples alternate 1.0 and 0.9: their mean is 0.95, or just above where one more 1.0 was kept
    EXPECT_GE(r.mean_clock_fraction, 0.95 - 1e-12);
    EXPECT_LE(r.mean_clock_fraction, 0.95 + 0.05 / static_cast<double>(r.samples) + 1e-12);
    EXPECT_EQ(r.throttle_cause, "SM clock at " + std::to_string(0.5));
}
