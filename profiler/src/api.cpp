#include "ridgeline/api.hpp"

#include <chrono>

#include "ridgeline/core/error.hpp"

namespace ridgeline {

namespace {
core::model_analysis analysis_of(const core::model& m) { return core::analyze(m, core::dtype::fp32); }
std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
}  // namespace

std::int64_t count_parameters(const core::model& m) { return analysis_of(m).totals.params; }
std::int64_t count_macs(const core::model& m) { return analysis_of(m).totals.macs; }
std::int64_t count_flops(const core::model& m) { return analysis_of(m).totals.flops; }

std::unique_ptr<backend_api::backend> make_backend(std::string_view device, int threads) {
    return profiler::select_backend(device, threads).chosen;
}

backend_api::timing_result measure_latency(const std::function<void()>& fn, const backend_api::timing_options& options) {
    backend_api::steady_timer timer;
    return backend_api::measure(fn, timer, options);
}

backend_api::timing_result measure_latency(backend_api::prepared& op, backend_api::backend& b,
                                        const backend_api::timing_options& options) {
    return backend_api::measure([&] { op.run(); }, b.timer(), options, [&] { b.flush_cache(); });
}

profiler::layer_profile profile_layer(std::string_view layer, const std::vector<core::shape>& inputs,
                                      backend_api::backend& b, core::dtype dt, const profiler::profile_options& options) {
    const auto a = core::analyze(core::single_layer_model(core::parse_op(layer), inputs), dt);
    return profiler::profile_layer(a.layers.at(0), a, b, options);
}

profiler::profile_result profile_model(const core::model& m, backend_api::backend& b, core::dtype dt,
                                       const profiler::profile_options& options) {
    return profiler::profile_model(core::analyze(m, dt), b, options);
}

void timing_log::record(const std::string& name, double ms) {
    std::lock_guard<std::mutex> lock(mutex_);
    samples_[name].push_back(ms);
}

core::statistics timing_log::statistics(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = samples_.find(name);
    if (it == samples_.end()) throw core::error("timing_log: no region named \"" + name + "\" was recorded");
    return core::summarize(it->second);
}

std::vector<std::string> timing_log::names() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> n;
    for (const auto& [k, v] : samples_) n.push_back(k);
    return n;
}

scoped_timer::scoped_timer(timing_log& log, std::string name) : log_(log), name_(std::move(name)), start_ns_(now_ns()) {}

scoped_timer::~scoped_timer() { log_.record(name_, static_cast<double>(now_ns() - start_ns_) * 1e-6); }

}  // namespace ridgeline
