#include "ridgeline/backends/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace ridgeline::backends {

namespace {
std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
}  // namespace

std::string to_string(cache_mode m) { return m == cache_mode::hot ? "hot" : "cold"; }

timing_options timing_options::quick() {
    timing_options o;
    o.warmup_runs = 1;
    o.warmup_ms = 5.0;
    o.min_samples = 5;
    o.min_time_s = 0.01;
    o.max_noise = 0.05;
    o.max_time_s = 0.2;
    return o;
}

double steady_wall_clock::now_s() { return static_cast<double>(now_ns()) * 1e-9; }

steady_timer::steady_timer() {
    // resolution: smallest non-zero step between consecutive readings
    std::int64_t best = INT64_MAX;
    for (int i = 0; i < 200; ++i) {
        const std::int64_t a = now_ns();
        std::int64_t b = now_ns();
        while (b == a) b = now_ns();
        best = std::min(best, b - a);
    }
    resolution_ns_ = static_cast<double>(std::max<std::int64_t>(best, 1));
    // overhead: median of start/stop pairs around no work
    std::vector<double> pairs;
    for (int i = 0; i < 201; ++i) {
        start();
        pairs.push_back(stop_ms() * 1e6);
    }
    std::nth_element(pairs.begin(), pairs.begin() + 100, pairs.end());
    overhead_ns_ = pairs[100];
}

void steady_timer::start() { start_ns_ = now_ns(); }

double steady_timer::stop_ms() { return static_cast<double>(now_ns() - start_ns_) * 1e-6; }

std::int64_t runs_per_sample(double run_estimate_ns, const device_timer& timer) {
    const double target_ns = std::max(1000.0 * timer.resolution_ns(), 100.0 * timer.overhead_ns());
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
    std::int64_t n = o.cache == cache_mode::cold ? 1 : runs_per_sample(estimate_ns, timer);

    // 2-3. samples until the noise target or the budget
    const double target_ns = std::max(1000.0 * timer.resolution_ns(), 100.0 * timer.overhead_ns());
    const double sample_start = wc.now_s();
    while (true) {
        if (interrupted()) {
            r.stop_reason = "interrupted";
            break;
        }
        if (o.cache == cache_mode::cold && flush) flush();
        timer.start();
        for (std::int64_t i = 0; i < n; ++i) run();
        const double ms = timer.stop_ms();
        if (o.cache == cache_mode::hot && ms * 1e6 < target_ns) {
            // shorter than the target: the estimate was low (or the clock too coarse to see one run).
            // The sample is discarded and the batch grows; it never counts as a measurement.
            r.calibration_runs += n;
            const std::int64_t grown =
                ms > 0 ? runs_per_sample(ms * 1e6 / static_cast<double>(n) * 0.9, timer) : n * 10;
            n = std::max(n + 1, std::min<std::int64_t>(grown, n * 1000));
        } else {
            r.sample_ms.push_back(ms / static_cast<double>(n));
            r.runs += n;
            r.runs_per_sample = n;
            ++r.samples;
        }
        const double elapsed = wc.now_s() - sample_start;
        if (r.samples >= o.min_samples && elapsed >= o.min_time_s && !r.sample_ms.empty()) {
            const core::statistics s = core::summarize(r.sample_ms);
            if (s.ci_exact && s.relative_ci_width() <= o.max_noise) {
                r.noise_target_met = true;
                r.stop_reason = "noise target met";
                break;
            }
        }
        if (elapsed >= o.max_time_s && r.samples >= std::max(1, o.min_samples)) {
            r.stop_reason = "max time";
            break;
        }
    }
    r.sampling_time_s = wc.now_s() - sample_start;
    if (!r.sample_ms.empty()) r.stats = core::summarize(r.sample_ms);
    return r;
}

}  // namespace ridgeline::backends
