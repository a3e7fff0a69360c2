#pragma once
// The timing protocol shared by every backend (docs/timing.md):
//
// 1. Warm-up: at least `warmup_runs` runs and at least `warmup_ms` of wall time, each run timed alone
//    to estimate the time of one run.
// 2. Samples: each sample times a batch of back-to-back runs between timer.start() and timer.stop_ms(),
//    sized so one sample lasts at least max(1000 x timer resolution, 100 x timer overhead); the time per
//    run is the sample time divided by the real number of runs in that batch. A sample that comes out
//    shorter than the target (the estimate was low, or the clock is too coarse to see one run) is
//    discarded and the batch grows. Cold cache: the cache is
//    flushed before every sample and a sample is one run.
// 3. Stopping: after `min_samples` samples and `min_time_s` of sampling, stop as soon as the 95% confidence
//    interval of the median is narrower than `max_noise` x median; stop in any case at `max_time_s` of
//    sampling once `min_samples` exist (then noise_target_met says whether the target was reached), or
//    when interrupted. The minimum number of samples is never cut short by the time budget.

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ridgeline/backends/backend.hpp"
#include "ridgeline/core/stats.hpp"

namespace ridgeline::backends {

enum class cache_mode { hot, cold };
std::string to_string(cache_mode m);

struct timing_options {
    int warmup_runs = 3;
    double warmup_ms = 20.0;
    int min_samples = 10;
    double min_time_s = 0.05;
    double max_noise = 0.02;  // relative width of the median's 95% CI
    double max_time_s = 2.0;
    cache_mode cache = cache_mode::hot;

    /// The --quick preset: a fast look (5 samples minimum, 5% noise, 0.2 s per layer).
    static timing_options quick();
};

struct timing_result {
    core::statistics stats;          // of the per-run times in ms
    std::int64_t samples = 0;
    std::int64_t runs = 0;           // timed runs in all samples (warm-up excluded)
    std::int64_t runs_per_sample = 0;  // of the last sample
    std::int64_t warmup_runs = 0;
    std::int64_t calibration_runs = 0;  // runs of samples discarded for being shorter than the target
    bool noise_target_met = false;
    double sampling_time_s = 0;      // wall time spent sampling
    std::string stop_reason;         // "noise target met", "max time", "interrupted"
    std::vector<double> sample_ms;   // per-run time of each sample, in order
};

/// Wall clock for budgets (max_time, warmup_ms); tests substitute a fake one.
class wall_clock {
public:
    virtual ~wall_clock() = default;
    virtual double now_s() = 0;
};

/// std::chrono::steady_clock.
class steady_wall_clock final : public wall_clock {
public:
    double now_s() override;
};

/// A device_timer for synchronous host work: std::chrono::steady_clock, with resolution and overhead
/// measured at construction.
class steady_timer final : public device_timer {
public:
    steady_timer();
    void start() override;
    double stop_ms() override;
    [[nodiscard]] double resolution_ns() const override { return resolution_ns_; }
    [[nodiscard]] double overhead_ns() const override { return overhead_ns_; }
    [[nodiscard]] std::string name() const override { return "steady_clock"; }

private:
    std::int64_t start_ns_ = 0;
    double resolution_ns_ = 1;
    double overhead_ns_ = 0;
};

/// Runs the protocol on `run` (one forward pass), timed by `timer`.
/// `flush` is called before each sample in cold mode; `stop` (may be null) interrupts between samples.
timing_result measure(const std::function<void()>& run, device_timer& timer, const timing_options& options,
                      const std::function<void()>& flush = {}, wall_clock* clock = nullptr,
                      const std::atomic<bool>* stop = nullptr);

/// Runs per sample so that one sample lasts at least the target (see above) given an estimate of one run.
std::int64_t runs_per_sample(double run_estimate_ns, const device_timer& timer);

}  // namespace ridgeline::backends
