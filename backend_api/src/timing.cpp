#include "ridgeline/backend_api/timing.hpp"

#include <algorithm>
#include <ostream>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace ridgeline::backend_api {

namespace {
std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
}  // namespace

std::string to_string(cache_mode m) { return m == cache_mode::hot ? "hot" : "cold"; }

std::string_view to_string(stop_reason r) {
    switch (r) {
        case stop_reason::none: return "none";
        case stop_reason::noise_target_met: return "noise target met";
        case stop_reason::noise_stable: return "noise stable";
        case stop_reason::max_time: return "max time";
        case stop_reason::disturbed: return "disturbed";
        case stop_reason::interrupted: return "interrupted";
    }
    return "none";
}

std::ostream& operator<<(std::ostream& os, stop_reason r) { return os << to_string(r); }

bool stopping_rule::noise_test_due(std::int64_t clean_samples, double elapsed_s) const {
    return clean_samples >= o_.min_samples && clean_samples >= next_noise_test_ && elapsed_s >= o_.min_time_s;
}

stop_reason stopping_rule::after_noise_test(std::int64_t clean_samples, double width, bool exact) {
    // The noise test summarizes every sample so far (a sort and the median's binomial interval): O(n log n).
    // Run after every sample it took 86 us at 2,000 samples and 850 us at 10,000: a gap between samples in
    // which the data of a cache-resident working set can be evicted (by neighbours sharing the last-level
    // cache) and the next sample starts cold. It runs when the sample count has grown by 1/16 since the last
    // test: amortized O(log n) per sample, and the stop comes at most 1/16 of the samples late.
    next_noise_test_ = clean_samples + std::max<std::int64_t>(1, clean_samples / 16);
    if (!exact) return stop_reason::none;
    if (width <= o_.max_noise) return stop_reason::noise_target_met;
    readings_.emplace_back(clean_samples, width);
    if (o_.stable_min_samples <= 0 || clean_samples < o_.stable_min_samples) return stop_reason::none;
    // the reading taken at 1/stable_span of the samples (the last one at or below it), and the narrowest one since
    const std::int64_t first = clean_samples / std::max(2, o_.stable_span);
    auto start = readings_.end();
    for (auto it = readings_.begin(); it != readings_.end() && it->first <= first; ++it) start = it;
    if (start == readings_.end()) return stop_reason::none;
    double narrowest = start->second;
    for (auto it = start; it != readings_.end(); ++it) narrowest = std::min(narrowest, it->second);
    return narrowest >= start->second * (1.0 - o_.stable_narrowing) ? stop_reason::noise_stable : stop_reason::none;
}

stop_reason stopping_rule::after_budget(double elapsed_s, double lost_s, std::int64_t clean_samples,
                                        std::int64_t disturbed_samples) const {
    const std::int64_t min_clean = std::max(1, o_.min_samples);
    // the budget grows by what other work took, at most to twice itself
    const double budget = o_.max_time_s + std::min(lost_s, o_.max_time_s);
    if (elapsed_s < budget) return stop_reason::none;
    if (clean_samples >= min_clean) return stop_reason::max_time;
    if (disturbed_samples >= min_clean) return stop_reason::disturbed;
    return stop_reason::none;
}

timing_options timing_options::quick() {
    timing_options o{
        .warmup_runs = 1, .warmup_ms = 5.0, .min_samples = 5, .min_time_s = 0.01, .max_noise = 0.05, .max_time_s = 0.2};
    return o;
}

double steady_wall_clock::now_s() { return static_cast<double>(now_ns()) * 1e-9; }

steady_timer::steady_timer() {
    meter_on_ = !disturbance_accounting_off();
    // resolution: smallest non-zero step between consecutive readings
    std::int64_t best = INT64_MAX;
    for (int i = 0; i < 200; ++i) {
        const std::int64_t a = now_ns();
        std::int64_t b = now_ns();
        while (b == a) b = now_ns();
        best = std::min(best, b - a);
    }
    resolution_ns_ = static_cast<double>(std::max<std::int64_t>(best, 1));
    overhead_ns_ = median_empty_pair_ns(*this, 201);
}

double median_empty_pair_ns(device_timer& timer, int pairs) {
    std::vector<double> ns;
    for (int i = 0; i < pairs; ++i) {
        timer.start();
        ns.push_back(timer.stop_ms() * 1e6);
    }
    const auto mid = ns.begin() + pairs / 2;
    std::nth_element(ns.begin(), mid, ns.end());
    return *mid;
}

void steady_timer::start() { start_ns_ = now_ns(); }

double steady_timer::stop_ms() { return static_cast<double>(now_ns() - start_ns_) * 1e-6; }

double without_timer_overhead(double ms, const device_timer& timer) {
    return std::max(ms - timer.overhead_ns() * 1e-6, timer.resolution_ns() * 1e-6);
}

double sample_target_ns(const device_timer& timer, double meter_cost_ns) {
    return std::max({1000.0 * timer.resolution_ns(), 100.0 * timer.overhead_ns(), sample_to_meter_cost * meter_cost_ns});
}

std::int64_t runs_per_sample(double run_estimate_ns, const device_timer& timer, double meter_cost_ns) {
    const double target_ns = sample_target_ns(timer, meter_cost_ns);
    if (!(run_estimate_ns > 0)) return 1;
    const double n = std::ceil(target_ns / run_estimate_ns);
    return static_cast<std::int64_t>(std::clamp(n, 1.0, 1e9));
}

timing_result measure(const std::function<void()>& run, device_timer& timer, const timing_options& o,
                      const std::function<void()>& flush, wall_clock* clock, const std::atomic<bool>* stop) {
    steady_wall_clock default_clock;
    wall_clock& wc = clock ? *clock : default_clock;
    auto interrupted = [&] { return stop && stop->load(); };
    timing_result r;

    // 1. warm-up: every run timed alone, to estimate one run
    const double warm_start = wc.now_s();
    std::vector<double> warm_ms;
    while (!interrupted() &&
           (r.warmup_runs < o.warmup_runs || (wc.now_s() - warm_start) * 1e3 < o.warmup_ms)) {
        if (o.cache == cache_mode::cold && flush) flush();
        timer.start();
        run();
        warm_ms.push_back(timer.stop_ms());
        ++r.warmup_runs;
        if (r.warmup_runs >= 1000000) break;
    }
    double estimate_ns = 0;
    if (!warm_ms.empty()) {
        std::sort(warm_ms.begin(), warm_ms.end());
        estimate_ns = warm_ms[warm_ms.size() / 2] * 1e6;
    }
    // 2-4. samples until the noise target or the budget; disturbed samples are replaced
    disturbance_meter* meter = timer.disturbance();
    double meter_ns = 0;
    if (meter) {
        meter->arm();  // after the warm-up: the threads the runs use exist now
        r.disturbance_source = meter->source();
        meter_ns = meter->cost_ns();
    }
    const double target_ns = sample_target_ns(timer, meter_ns);
    std::int64_t n = o.cache == cache_mode::cold ? 1 : runs_per_sample(estimate_ns, timer, meter_ns);
    double lost_s = 0;                          // wall time of the disturbed samples
    std::int64_t disturbed_runs = 0;
    double disturbed_wait_ms = 0, disturbed_thread_ms = 0;  // stolen_fraction when no sample is clean
    double kept_wait_ms = 0, kept_thread_ms = 0;  // for stolen_fraction
    double clock_sum = 0;                         // for mean_clock_fraction
    const double sample_start = wc.now_s();
    stopping_rule rule(o);

    while (true) {
        if (interrupted()) {
            r.stop_reason = stop_reason::interrupted;
            break;
        }
        if (o.cache == cache_mode::cold && flush) flush();
        if (meter) meter->before_sample();  // read outside the timed region, never inside it
        timer.start();
        for (std::int64_t i = 0; i < n; ++i) run();
        const double raw_ms = timer.stop_ms();
        sample_disturbance d;
        if (meter) d = meter->after_sample(raw_ms);
        // a cold sample is one run, and the timer's own start/stop cost is in it once: taken out (a hot sample is
        // >= 100x that cost by sample_target_ns)
        const double ms = o.cache == cache_mode::cold ? without_timer_overhead(raw_ms, timer) : raw_ms;
        r.involuntary_switches += d.involuntary_switches;
        if (o.cache == cache_mode::hot && ms * 1e6 < target_ns) {
            // shorter than the target: the estimate was low (or the clock too coarse to see one run).
            // The sample is discarded and the batch grows; it never counts as a measurement.
            r.calibration_runs += n;
            const std::int64_t grown =
                ms > 0 ? runs_per_sample(ms * 1e6 / static_cast<double>(n) * 0.9, timer, meter_ns) : n * 10;
            n = std::max(n + 1, std::min<std::int64_t>(grown, n * 1000));
        } else if (is_disturbed(d)) {
            r.disturbed_sample_ms.push_back(ms / static_cast<double>(n));
            ++r.disturbed_samples;
            disturbed_runs += n;
            lost_s += ms * 1e-3;
            disturbed_wait_ms += d.run_queue_wait_ms + d.steal_ms;
            disturbed_thread_ms += ms * std::max(d.threads, 1);
        } else {
            r.sample_ms.push_back(ms / static_cast<double>(n));
            r.runs += n;
            r.runs_per_sample = n;
            ++r.samples;
            kept_wait_ms += d.run_queue_wait_ms + d.steal_ms;
            kept_thread_ms += ms * std::max(d.threads, 1);
            r.min_clock_fraction = std::min(r.min_clock_fraction, d.clock_fraction);
            clock_sum += d.clock_fraction;
        }
        if (r.throttle_cause.empty() && !d.throttle_cause.empty()) r.throttle_cause = d.throttle_cause;
        const double elapsed = wc.now_s() - sample_start;
        if (rule.noise_test_due(r.samples, elapsed) && !r.sample_ms.empty()) {
            const core::statistics s = core::summarize(r.sample_ms);
            r.stop_reason = rule.after_noise_test(r.samples, s.relative_ci_width(), s.ci_exact);
            if (r.stop_reason != stop_reason::none) {
                r.noise_target_met = r.stop_reason == stop_reason::noise_target_met;
                break;
            }
        }
        r.stop_reason = rule.after_budget(elapsed, lost_s, r.samples, r.disturbed_samples);
        if (r.stop_reason != stop_reason::none) {
            r.disturbed = r.stop_reason == stop_reason::disturbed;
            break;
        }
    }
    if (meter) meter->disarm();
    r.clean_samples = r.samples;
    if (r.samples > 0) r.mean_clock_fraction = clock_sum / static_cast<double>(r.samples);
    r.stolen_fraction = kept_thread_ms > 0 ? kept_wait_ms / kept_thread_ms : 0.0;
    if (r.sample_ms.empty() && !r.disturbed_sample_ms.empty()) {
        // nothing clean at all: the disturbed samples are all there is to show, flagged as such
        r.disturbed = true;
        r.sample_ms = r.disturbed_sample_ms;
        r.samples = static_cast<std::int64_t>(r.sample_ms.size());
        r.runs = disturbed_runs;
        r.runs_per_sample = n;
        r.stolen_fraction = disturbed_thread_ms > 0 ? disturbed_wait_ms / disturbed_thread_ms : 0.0;
    }
    r.sampling_time_s = wc.now_s() - sample_start;
    if (!r.sample_ms.empty()) r.stats = core::summarize(r.sample_ms);
    return r;
}

}  // namespace ridgeline::backend_api
