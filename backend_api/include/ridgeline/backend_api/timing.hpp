#pragma once
// The timing protocol shared by every backend (docs/timing.md):
//
// 1. Warm-up: at least `warmup_runs` runs and at least `warmup_ms` of wall time, each run timed alone
//    to estimate the time of one run.
// 2. Samples: each sample times a batch of back-to-back runs between timer.start() and timer.stop_ms(),
//    sized so one sample lasts at least max(1000 x timer resolution, 100 x timer overhead, 20 x the
//    disturbance meter's cost); the time per
//    run is the sample time divided by the real number of runs in that batch. A sample that comes out
//    shorter than the target (the estimate was low, or the clock is too coarse to see one run) is
//    discarded and the batch grows. Cold cache: the cache is
//    flushed before every sample and a sample is one run.
// 3. Stopping (stopping_rule): after `min_samples` samples and `min_time_s` of sampling, stop as soon as the 95%
//    confidence interval of the median is narrower than `max_noise` x median ("noise target met"); stop when the
//    noise settled above the target ("noise stable": from `stable_min_samples` samples on, no noise reading since
//    the sample count was 1/`stable_span` of today's is narrower than that reading by `stable_narrowing` or more,
//    where samples from one unchanging distribution narrow it by about 65% over 8x the samples, 1 - 1/sqrt(8): more
//    samples would not meet the target, as nvbench's stdrel criterion stops when its noise readings stop
//    changing; over one doubling instead of three the readings' own noise made 23-40% of unchanging
//    distributions stop early in a simulation, docs/timing.md); stop in any case at `max_time_s` of
//    sampling once `min_samples` exist ("max time"; noise_target_met says whether the target was reached), or
//    when interrupted. The minimum number of samples is never cut short by the time budget.
// 4. Other work: where the timer has a disturbance meter (device_timer::disturbance(): the CPU's per-thread
//    stolen time, a GPU's clock), a sample that lost more than the rule allows (backend_api/disturbance.hpp) is
//    disturbed: it is kept out of the statistics and replaced. `min_samples` counts clean samples; the
//    budget `max_time_s` grows by the wall time of the disturbed samples, at most to twice itself. A
//    measurement that cannot collect `min_samples` clean samples within that (and has taken at least as many
//    disturbed ones) stops with `disturbed` set: its statistics are those of its clean samples (of all of
//    them when none was clean), and no verdict may be drawn from them.

#include <atomic>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "ridgeline/backend_api/backend.hpp"
#include "ridgeline/core/stats.hpp"

namespace ridgeline::backend_api {

enum class cache_mode { hot, cold };
std::string to_string(cache_mode m);

/// Why sampling stopped (3. and 4. above); written as its name (to_string) only at output.
enum class stop_reason {
    none,              // not stopped (no sample taken)
    noise_target_met,  // "noise target met": the median's 95% CI is narrower than max_noise x median
    noise_stable,      // "noise stable": the noise settled above the target and more samples did not narrow it
    max_time,          // "max time": the budget ran out with min_samples clean samples
    disturbed,         // "disturbed": the budget ran out without min_samples clean samples
    interrupted,       // "interrupted": the stop flag was raised
};
std::string_view to_string(stop_reason r);
std::ostream& operator<<(std::ostream& os, stop_reason r);

struct timing_options {
    int warmup_runs = 3;
    double warmup_ms = 20.0;
    int min_samples = 10;
    double min_time_s = 0.05;
    double max_noise = 0.02;  // relative width of the median's 95% CI
    double max_time_s = 2.0;
    cache_mode cache = cache_mode::hot;
    /// noise_stable (3. above): from this many clean samples on (0: never)...
    int stable_min_samples = 128;
    /// ...stop when the median's CI, still wider than the target, narrowed by less than this fraction of its
    /// width while the sample count grew `stable_span`-fold.
    double stable_narrowing = 0.05;
    int stable_span = 8;

    /// The --quick preset: a fast look (5 samples minimum, 5% noise, 0.2 s per layer).
    static timing_options quick();
};

/// The stopping rule (3. above) as one object: measure() asks it after every sample; the presets
/// (timing_options{}, timing_options::quick()) choose its parameters, and a test can drive it alone.
class stopping_rule {
public:
    explicit stopping_rule(const timing_options& o) : o_(o) {}
    /// Whether the noise test is due after this sample (it summarizes every sample: run when the count has
    /// grown by 1/16 since the last one, so its O(n log n) stays amortized O(log n) per sample).
    [[nodiscard]] bool noise_test_due(std::int64_t clean_samples, double elapsed_s) const;
    /// The noise test at `clean_samples` samples whose median's CI has relative width `width` (exact: the
    /// binomial interval exists at this count): noise_target_met, noise_stable or none.
    stop_reason after_noise_test(std::int64_t clean_samples, double width, bool exact);
    /// The budget: max_time once `min_samples` clean samples exist and the budget (max_time_s, grown by
    /// `lost_s` of disturbed samples, at most to twice itself) is spent; disturbed when it is spent with at
    /// least `min_samples` disturbed samples and fewer clean ones; none otherwise.
    [[nodiscard]] stop_reason after_budget(double elapsed_s, double lost_s, std::int64_t clean_samples,
                                           std::int64_t disturbed_samples) const;

private:
    timing_options o_;
    std::int64_t next_noise_test_ = 0;
    std::vector<std::pair<std::int64_t, double>> readings_;  // (clean samples, CI width) of each noise test
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
    backend_api::stop_reason stop_reason = backend_api::stop_reason::none;
    std::vector<double> sample_ms;   // per-run time of each sample, in order (clean samples only)

    // other work on the machine (4. above)
    std::int64_t clean_samples = 0;      // samples that lost too little to matter (== samples unless none was clean)
    std::int64_t disturbed_samples = 0;  // samples kept out of the statistics for what they lost
    std::vector<double> disturbed_sample_ms;  // their per-run times, in order
    bool disturbed = false;          // fewer than min_samples clean samples: the time is not to be trusted
    /// Run-queue wait (plus steal) of the threads that ran, summed over threads, divided by wall time x
    /// threads, over the kept samples (over the disturbed ones when none was clean): the share of the CPU time
    /// the timed threads were denied.
    double stolen_fraction = 0;
    std::int64_t involuntary_switches = 0;  // over all samples, kept or not
    double min_clock_fraction = 1.0;        // GPU: the lowest SM clock / default clock of a kept sample
    double mean_clock_fraction = 1.0;       // GPU: the mean of the kept samples' SM clock / default clock
    std::string throttle_cause;             // GPU: the first throttled sample's clock and cause, or ""
    std::string disturbance_source = "none";  // what the meter read ("schedstat", ...), or why nothing
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

/// A timer's overhead (ns): the median of `pairs` (odd) start()/stop_ms() pairs around no work. For a timer's
/// constructor, once its clock works.
double median_empty_pair_ns(device_timer& timer, int pairs);

/// A single run's reading `ms` without the timer's own cost (overhead_ns: what a start/stop pair around nothing
/// reads), never below the timer's resolution. measure() applies it to cold samples (one run each); on a GPU the
/// event pair's overhead is microseconds, the size of a small kernel.
double without_timer_overhead(double ms, const device_timer& timer);

/// A device_timer for synchronous host work: std::chrono::steady_clock, with resolution and overhead
/// measured at construction; its disturbance meter reads the stolen time of this process's threads.
class steady_timer final : public device_timer {
public:
    steady_timer();
    void start() override;
    double stop_ms() override;
    [[nodiscard]] double resolution_ns() const override { return resolution_ns_; }
    [[nodiscard]] double overhead_ns() const override { return overhead_ns_; }
    [[nodiscard]] std::string name() const override { return "steady_clock"; }
    /// The per-sample accounting, or a meter that reads nothing (and says so) when the environment turns it
    /// off (RIDGELINE_DISTURBANCE=off, for bench/timing_overhead.sh, which measures what the accounting costs).
    disturbance_meter* disturbance() override {
        if (meter_on_) return &meter_;
        return &off_;
    }

private:
    cpu_disturbance_meter meter_;
    off_disturbance_meter off_;
    bool meter_on_ = true;
    std::int64_t start_ns_ = 0;
    double resolution_ns_ = 1;
    double overhead_ns_ = 0;
};

/// Runs the protocol on `run` (one forward pass), timed by `timer`.
/// `flush` is called before each sample in cold mode; `stop` (may be null) interrupts between samples.
timing_result measure(const std::function<void()>& run, device_timer& timer, const timing_options& options,
                      const std::function<void()>& flush = {}, wall_clock* clock = nullptr,
                      const std::atomic<bool>* stop = nullptr);

/// The shortest a sample may be: max(1000 x the timer's resolution, 100 x its overhead, 20 x the disturbance
/// meter's cost per sample).
double sample_target_ns(const device_timer& timer, double meter_cost_ns = 0);

/// Runs per sample so that one sample lasts at least the target (see above) given an estimate of one run.
std::int64_t runs_per_sample(double run_estimate_ns, const device_timer& timer, double meter_cost_ns = 0);

}  // namespace ridgeline::backend_api
