#pragma once
// ridgeline as a library: count, time and profile from your own C++ code (docs/library.md).
//
//   #include "ridgeline/api.hpp"
//   auto m = ridgeline::core::build_zoo_model("resnet18");
//   std::int64_t params = ridgeline::count_parameters(m);            // 11,689,512
//   auto backend = ridgeline::make_backend("auto");
//   auto report = ridgeline::profile_model(m, *backend);             // every layer, verified and timed
//   auto t = ridgeline::measure_latency([&] { my_function(); });     // any callable, same protocol
//   ridgeline::timing_log log;
//   { ridgeline::scoped_timer s(log, "preprocess"); preprocess(); }  // a region of your own code
//   log.statistics("preprocess").median;

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "ridgeline/profiler/profiler.hpp"
#include "ridgeline/profiler/registry.hpp"
#include "ridgeline/core/model.hpp"
#include "ridgeline/core/stats.hpp"

namespace ridgeline {

/// Trainable parameters, each distinct (tied) tensor once, as torchvision counts them.
std::int64_t count_parameters(const core::model& m);
/// Multiply-accumulates of the forward pass (docs/conventions.md).
std::int64_t count_macs(const core::model& m);
/// FLOPs of the forward pass: 2*macs + bias adds + elementwise work (docs/conventions.md).
std::int64_t count_flops(const core::model& m);

/// The backend for a device name ("auto", "cpu", "cpu-ref", "cuda", "cuda:N"); throws backend_api::backend_error.
std::unique_ptr<backend_api::backend> make_backend(std::string_view device = "auto", int threads = 0);

/// Times any callable with the timing protocol on the host's steady clock (warm-up, batched samples,
/// the median's CI stopping rule). The callable must finish its work before returning.
backend_api::timing_result measure_latency(const std::function<void()>& fn, const backend_api::timing_options& options = {});

/// Times a prepared graph on its backend's own timer (CUDA events on a GPU).
backend_api::timing_result measure_latency(backend_api::prepared& op, backend_api::backend& b,
                                        const backend_api::timing_options& options = {});

/// One layer from a layer string on the given input shapes: verified and timed.
profiler::layer_profile profile_layer(std::string_view layer, const std::vector<core::shape>& inputs,
                                      backend_api::backend& b, core::dtype dt = core::dtype::fp32,
                                      const profiler::profile_options& options = {});

/// Every layer of a model, then the whole forward pass.
profiler::profile_result profile_model(const core::model& m, backend_api::backend& b, core::dtype dt = core::dtype::fp32,
                                       const profiler::profile_options& options = {});

/// Durations of named regions of your own code, in ms. Thread-safe.
class timing_log {
public:
    void record(const std::string& name, double ms);
    /// Statistics of a region; throws core::error when it was never recorded.
    [[nodiscard]] core::statistics statistics(const std::string& name) const;
    [[nodiscard]] std::vector<std::string> names() const;

private:
    mutable std::mutex mutex_;
    std::map<std::string, std::vector<double>> samples_;
};

/// Records the time from construction to destruction under `name` (steady clock).
class scoped_timer {
public:
    scoped_timer(timing_log& log, std::string name);
    ~scoped_timer();
    scoped_timer(const scoped_timer&) = delete;
    scoped_timer& operator=(const scoped_timer&) = delete;

private:
    timing_log& log_;
    std::string name_;
    std::int64_t start_ns_;
};

}  // namespace ridgeline
