// "cpu": every op of the cost model on oneDNN primitives (Debian's libdnnl 2.x, OpenMP runtime). The lowering of a
// graph is dnnl_graph.hpp's; this file is the backend around it: device description, data types, timer, cache flush,
// ceilings.

#include <omp.h>

#include <oneapi/dnnl/dnnl_version.h>

#include "dnnl_graph.hpp"
#include "ridgeline/backend_api/require_supported.hpp"
#include "ridgeline/backend_api/timing.hpp"
#include "ridgeline/cpu/cpu_backends.hpp"
#include "ridgeline/cpu/cpu_ceilings.hpp"
#include "ridgeline/cpu/cpu_info.hpp"

namespace ridgeline::cpu {

std::string dnnl_version() {
    const dnnl_version_t* v = ::dnnl_version();
    return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

namespace {

using namespace dnnl_detail;

class dnnl_backend final : public backend_api::backend {
public:
    explicit dnnl_backend(int threads) : threads_(set_threads(threads)) {
        try {
            engine_ = dnnl::engine(dnnl::engine::kind::cpu, 0);
            stream_ = dnnl::stream(engine_);
        } catch (const dnnl::error& e) {
            throw backend_api::backend_error(std::string("oneDNN could not create a CPU engine: ") + e.what());
        }
    }

    [[nodiscard]] std::string name() const override { return "cpu"; }

    [[nodiscard]] backend_api::device_info device() const override {
        const cpu_info& c = host_cpu();
        backend_api::device_info d = host_device_info("cpu", threads_);
        d.details = {{"library", "oneDNN " + dnnl_version()},
                     {"onednn_isa", isa_name()},
                     {"threading", "OpenMP"},
                     {"governor", c.governor.empty() ? "unknown" : c.governor}};
        if (c.max_mhz > 0) d.details.emplace_back("max_mhz", std::to_string(static_cast<int>(c.max_mhz)));
        return d;
    }

    [[nodiscard]] backend_api::support supports(const core::layer_analysis& la, core::dtype dt) const override {
        switch (dt) {
            case core::dtype::fp32:
                break;
            case core::dtype::tf32:
                return backend_api::support::no("tf32 is a tensor-core format of NVIDIA GPUs; use fp32 on the CPU");
            case core::dtype::bf16:
                if (!isa_at_least_avx512())
                    return backend_api::support::no("bf16 needs AVX-512 (oneDNN " + dnnl_version() +
                                                 " runs bf16 on avx512_core and newer); this CPU runs " + isa_name());
                break;
            case core::dtype::fp16: {
                // oneDNN runs fp16 on the CPU from 2.7 on (its avx512_core_fp16 ISA); 2.6 has no fp16 kernels even
                // where the CPU has AVX512-FP16 (then every primitive is declined)
                const dnnl_version_t* v = ::dnnl_version();
                const bool library = v->major > 2 || (v->major == 2 && v->minor >= 7);
                if (!library)
                    return backend_api::support::no("fp16 on the CPU needs oneDNN 2.7 or newer (its AVX512-FP16 kernels); "
                                                 "this build uses oneDNN " + dnnl_version() + " on " + isa_name());
                if (!host_cpu().has("avx512_fp16"))
                    return backend_api::support::no("fp16 needs AVX512-FP16 on the CPU; this CPU runs " + isa_name());
                break;
            }
        }
        (void)la;
        return backend_api::support::yes();
    }

    std::unique_ptr<backend_api::prepared> prepare(const core::model_analysis& graph,
                                                const backend_api::graph_data& data) override {
        backend_api::require_supported(*this, graph);
        auto g = std::make_unique<dnnl_graph>(engine_, stream_, graph.data_type);
        g->build(graph, data);
        return g;
    }

    void synchronize() override { stream_.wait(); }
    backend_api::device_timer& timer() override { return timer_; }

    void flush_cache() override {
        if (flush_.empty()) flush_.assign(cache_flush_bytes(), 0);
        char* p = flush_.data();
        const auto n = static_cast<std::int64_t>(flush_.size());
#pragma omp parallel for
        for (std::int64_t i = 0; i < n; i += 64) p[i] = static_cast<char>(p[i] + 1);
    }

    [[nodiscard]] std::int64_t free_memory_bytes() const override { return available_memory_bytes(); }

    [[nodiscard]] bool measures_ceilings() const override { return true; }
    backend_api::ceilings measure_ceilings(const backend_api::ceilings_options& options) override {
        return measure_cpu_ceilings(*this, options);
    }
    std::optional<backend_api::ceilings_spot_check> spot_check_ceilings(
        const backend_api::ceilings& cached, const backend_api::ceilings_options& options) override {
        return spot_check_cpu_ceilings(*this, cached, options);
    }
    std::vector<double> remeasure_working_set(const std::vector<std::int64_t>& sizes,
                                              const backend_api::ceilings_options& options) override {
        return remeasure_cpu_working_set(sizes, options);
    }

private:
    int threads_;
    dnnl::engine engine_;
    dnnl::stream stream_;
    backend_api::steady_timer timer_;
    std::vector<char> flush_;
};

}  // namespace

std::unique_ptr<backend_api::backend> make_dnnl_backend(int threads) { return std::make_unique<dnnl_backend>(threads); }

}  // namespace ridgeline::cpu
