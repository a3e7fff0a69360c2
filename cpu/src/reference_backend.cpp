// "cpu-ref": the reference loops run as a backend (slow; the oracle everyone is compared with).
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>

#include "ridgeline/backend_api/timing.hpp"
#include "ridgeline/cpu/cpu_backends.hpp"
#include "ridgeline/cpu/cpu_info.hpp"
#include "ridgeline/cpu/reference.hpp"

namespace ridgeline::cpu {

int set_threads(int threads) {
    const int n = threads > 0 ? threads : host_cpu().logical_cpus;
    omp_set_num_threads(n > 0 ? n : 1);
    return omp_get_max_threads();
}

backend_api::device_info host_device_info(const std::string& backend, int threads) {
    const cpu_info& c = host_cpu();
    backend_api::device_info d;
    d.backend = backend;
    d.kind = backend_api::device_kind::cpu;
    d.name = c.model_name;
    d.cores = c.physical_cores;
    d.threads = threads;
    d.isa = c.isa();
    d.memory_bytes = c.memory_bytes;
    d.last_level_cache_bytes = c.l3_bytes ? c.l3_bytes : c.l2_bytes;
    return d;
}

namespace {

class reference_graph final : public backend_api::prepared {
public:
    reference_graph(core::model_analysis graph, backend_api::graph_data data) : graph_(std::move(graph)), data_(std::move(data)) {
        for (const auto& o : graph_.outputs) {
            const core::shape dims = find_shape(o);
            outputs_.push_back(backend_api::host_tensor{dims, std::vector<float>(static_cast<std::size_t>(dims.numel()))});
        }
    }

    void run() override { outputs_ = reference_graph_outputs(graph_, data_); }

    void poison_outputs() override {
        for (auto& t : outputs_) std::fill(t.data.begin(), t.data.end(), std::numeric_limits<float>::quiet_NaN());
    }

    std::vector<backend_api::host_tensor> outputs() override { return outputs_; }

    [[nodiscard]] std::string notes() const override {
        // a fused group runs as its members, one after another: no fused kernel here, and the time says so
        const bool groups = std::any_of(graph_.layers.begin(), graph_.layers.end(),
                                        [](const core::layer_analysis& la) { return !la.fused.empty(); });
        return groups ? "reference loops (a fused group's members one by one: no fused kernel)" : "reference loops";
    }

private:
    [[nodiscard]] core::shape find_shape(const std::string& name) const {
        for (const auto& la : graph_.layers)
            if (la.layer.name == name) return la.output_shape;
        for (const auto& in : graph_.inputs)
            if (in.name == name) return in.dims;
        throw backend_api::backend_error("unknown output tensor " + name);
    }

    core::model_analysis graph_;
    backend_api::graph_data data_;
    std::vector<backend_api::host_tensor> outputs_;
};

class reference_backend final : public backend_api::backend {
public:
    explicit reference_backend(int threads) : threads_(set_threads(threads)) {}

    [[nodiscard]] std::string name() const override { return "cpu-ref"; }

    [[nodiscard]] backend_api::device_info device() const override {
        backend_api::device_info d = host_device_info("cpu-ref", threads_);
        d.details = {{"implementation", "ridgeline reference loops (double accumulation)"}};
        return d;
    }

    [[nodiscard]] backend_api::support supports(const core::layer_analysis&, core::dtype) const override {
        return backend_api::support::yes();
    }

    std::unique_ptr<backend_api::prepared> prepare(const core::model_analysis& graph,
                                                const backend_api::graph_data& data) override {
        return std::make_unique<reference_graph>(graph, data);
    }

    void synchronize() override {}
    backend_api::device_timer& timer() override { return timer_; }

    void flush_cache() override {
        if (flush_.empty()) flush_.assign(cache_flush_bytes(), 0);
        for (std::size_t i = 0; i < flush_.size(); i += 64) flush_[i] = static_cast<char>(flush_[i] + 1);
    }

    [[nodiscard]] std::int64_t free_memory_bytes() const override { return available_memory_bytes(); }

private:
    int threads_;
    backend_api::steady_timer timer_;
    std::vector<char> flush_;
};

}  // namespace

std::unique_ptr<backend_api::backend> make_reference_backend(int threads) {
    return std::make_unique<reference_backend>(threads);
}

}  // namespace ridgeline::cpu
