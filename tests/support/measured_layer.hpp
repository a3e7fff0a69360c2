#pragma once
// What the report tests build by hand: the profile of a small Sequential model, and a layer's profile as a
// measurement would leave it (measured, every sample clean, its median and every other statistic the time given,
// the noise target met).
#include <string>
#include <utility>
#include <vector>

#include "ridgeline/core/model.hpp"
#include "ridgeline/profiler/profiler.hpp"

namespace ridgeline::test {

/// The profile of the Sequential model `name` (input "x" of `x_dims`, then each (layer name, op text) in order,
/// analysed in fp32) before anything is measured: the test adds the layers' profiles.
inline profiler::profile_result chain_profile(const std::string& name, const core::shape& x_dims,
                                              const std::vector<std::pair<std::string, std::string>>& layers) {
    core::model_builder b(name);
    b.input("x", x_dims);
    for (const auto& [layer, op] : layers) b.then(layer, core::parse_op(op));
    profiler::profile_result r;
    r.analysis = core::analyze(b.build(), core::dtype::fp32);
    return r;
}

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
