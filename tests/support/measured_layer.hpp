#pragma once
// A layer's profile as a measurement would leave it, made by hand for the report tests: measured, every sample
// clean, its median (and every other statistic) the time given, the noise target met.
#include "ridgeline/profiler/profiler.hpp"

namespace ridgeline::test {

inline profiler::layer_profile measured_layer(const core::layer_analysis& analysis, double median_ms) {
    profiler::layer_profile p;
    p.analysis = analysis;
    p.state = profiler::run_state::measured;
    backend_api::timing_result t;
    t.samples = t.clean_samples = 10;
    t.runs = 100;
    t.stats.median = t.stats.ci95_low = t.stats.ci95_high = t.stats.mean = t.stats.min = t.stats.max = median_ms;
    t.noise_target_met = true;
    p.time = t;
    return p;
}

}  // namespace ridgeline::test
