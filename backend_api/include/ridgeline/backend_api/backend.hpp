#pragma once
// The Backend interface: what every device implementation (cpu: oneDNN, cpu-ref: reference loops,
// cuda: cuBLAS/cuDNN) provides. Vendor types never appear here, so a CPU-only user compiles against it.
//
// Life of a measurement (nothing before run() is ever timed):
//   supports(layer, dtype)          -> supported, or unsupported with a reason (a status, never a crash)
//   prepare(graph, data)            -> allocate buffers, upload inputs and weights, create primitives/plans
//   prepared.poison_outputs(); run(); outputs()  -> verification against the reference
//   timer().start(); run() x N; timer().stop_ms() -> timing samples
//
// Errors: prepare() throws backend_api::unsupported for a problem the backend declines, and
// backend_api::backend_error (or std::bad_alloc) for a failure; the Profiler records either against the
// layer and goes on.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ridgeline/backend_api/ceilings.hpp"
#include "ridgeline/backend_api/disturbance.hpp"
#include "ridgeline/backend_api/tensor.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/core/model.hpp"

namespace ridgeline::backend_api {

/// The answer of supports(): supported, or not with the reason ("bf16 needs AVX512-BF16 or AMX").
struct support {
    bool supported = true;
    std::string reason;
    static support yes() { return {}; }
    static support no(std::string why) { return {false, std::move(why)}; }
};

/// A problem the backend declines.
class unsupported : public core::error {
public:
    using core::error::error;
};

/// A failure inside the backend or its library (the message has the library's own error name).
class backend_error : public core::error {
public:
    using core::error::error;
};

/// What kind of processor a backend runs on; reports write it by to_string ("cpu", "gpu").
enum class device_kind { cpu, gpu };
inline std::string_view to_string(device_kind k) { return k == device_kind::gpu ? "gpu" : "cpu"; }

/// What a report says about the device.
struct device_info {
    std::string backend;       // "cpu", "cpu-ref", "cuda:0"
    device_kind kind = device_kind::cpu;
    std::string name;          // "AMD EPYC 7B13", "NVIDIA H200"
    int cores = 0;             // physical cores (CPU) or SMs (GPU)
    int threads = 0;           // threads the backend uses (CPU)
    std::string isa;           // "avx2 fma" / "sm_90"
    std::int64_t memory_bytes = 0;
    std::int64_t last_level_cache_bytes = 0;
    std::vector<std::pair<std::string, std::string>> details;  // library versions, clocks, ...
};

/// Clock for device work. On the CPU a steady clock around synchronous work; on a GPU events recorded
/// on the stream of the work.
class device_timer {
public:
    virtual ~device_timer() = default;
    virtual void start() = 0;
    /// Waits for the work issued since start() and returns the elapsed milliseconds.
    virtual double stop_ms() = 0;
    /// Smallest time step the clock can show (ns), measured at start-up.
    [[nodiscard]] virtual double resolution_ns() const = 0;
    /// Cost of one start()/stop_ms() pair around no work (ns), measured at start-up.
    [[nodiscard]] virtual double overhead_ns() const = 0;
    [[nodiscard]] virtual std::string name() const = 0;
    /// What tells a disturbed sample on this clock's device (backend_api/disturbance.hpp): the CPU's per-thread
    /// stolen time, a GPU's clock. Null where nothing can tell (then no sample is ever called disturbed).
    virtual disturbance_meter* disturbance() { return nullptr; }
};

/// A graph (a model, or one layer) ready to run.
class prepared {
public:
    virtual ~prepared() = default;
    prepared() = default;
    prepared(const prepared&) = delete;
    prepared& operator=(const prepared&) = delete;

    /// One forward pass; may return before the device finishes (GPU).
    virtual void run() = 0;
    /// Fills every output buffer with NaN so that unwritten elements show up in verification.
    virtual void poison_outputs() = 0;
    /// Waits, then copies the graph's outputs (model.outputs order) to the host as float, row-major.
    virtual std::vector<host_tensor> outputs() = 0;
    /// Scratchpad / workspace bytes the primitives use.
    [[nodiscard]] virtual std::int64_t workspace_bytes() const { return 0; }
    /// Which implementation ran, per layer ("jit:avx2", "gemm:jit", cuDNN algorithm ...).
    [[nodiscard]] virtual std::string notes() const { return {}; }
    /// Captures the work of run() once (a CUDA Graph) so that later run() calls replay it with one
    /// launch. Returns false, changing nothing, where the backend has no such mechanism.
    virtual bool enable_graph_replay() { return false; }
    /// One forward pass that calls `mark(i)` when the work of layer i (its index in the graph's
    /// model_analysis::layers) has finished, the device waited on first; a layer without work of its own (a view)
    /// gets no mark. What a trace of the pass needs (profile --trace); the waits make it slower than run() where the
    /// device runs ahead of the host (a GPU). Returns false, running nothing, where the backend cannot tell its
    /// layers' work apart (the reference loops, a captured graph).
    virtual bool run_marked(const std::function<void(std::size_t layer)>& mark) {
        (void)mark;
        return false;
    }
};

/// One step of a ceilings measurement, announced as it starts (ceilings_options::on_progress).
struct ceilings_progress {
    std::string step;   // what is measured now: "FMA fp32 avx512", "sweep 6.29 MB", "STREAM triad 435 MB"
    int index = 0;      // 0-based, of `total` planned steps
    int total = 0;
    double elapsed_s = 0;
    double left_s = -1;  // an estimate of the time left (the plan's seconds at the pace so far); < 0 unknown
};

/// What measure_ceilings() may spend.
struct ceilings_options {
    bool quick = false;  // smaller problems and fewer repetitions (tests, --quick)
    /// When set (SIGINT/SIGTERM), the measurement stops between samples and measure_ceilings throws
    /// ceilings_interrupted: nothing half-measured is returned or cached. May be null.
    const std::atomic<bool>* stop = nullptr;
    /// Called as each step of the measurement starts; may be empty.
    std::function<void(const ceilings_progress&)> on_progress;
};

/// A short check of cached ceilings (backend::spot_check_ceilings): the FMA kernel behind the fp32 compute roof,
/// and two points of the working-set sweep (a cache level, DRAM), measured again with a small budget (about
/// 0.3 s together).
struct ceilings_spot_check {
    std::string fma_isa;     // the instruction set checked ("fp32 avx2"); empty when none was
    double fma_gflops = 0;
    std::int64_t cache_working_set_bytes = 0;  // a cache level's point of the working-set sweep
    double cache_gbs = 0;                      // what it measured there (0: not checked)
    std::int64_t dram_working_set_bytes = 0;   // a point of the sweep beyond the last-level cache
    double dram_gbs = 0;                       // what it measured there (0: not checked)
    /// The dispatch cost measured again (the smallest op's median, ms; 0: not measured or disturbed): a floor,
    /// which the cached value is lowered to when this is lower (obtain_ceilings).
    double dispatch_ms = 0;
    bool clean = true;       // false: a sample was disturbed by other work, so the check proves nothing
    double seconds = 0;      // what the check took
};

/// Thrown by measure_ceilings when ceilings_options::stop was set.
class ceilings_interrupted : public core::error {
public:
    ceilings_interrupted() : core::error("the ceilings measurement was interrupted") {}
};

class backend {
public:
    virtual ~backend() = default;
    backend() = default;
    backend(const backend&) = delete;
    backend& operator=(const backend&) = delete;

    [[nodiscard]] virtual std::string name() const = 0;
    [[nodiscard]] virtual device_info device() const = 0;
    /// Whether this backend can run the layer in this data type (cheap; no allocation).
    [[nodiscard]] virtual support supports(const core::layer_analysis& l, core::dtype dt) const = 0;
    /// Prepares `graph` (its layers in order, model inputs and parameters taken from `data`).
    /// Throws unsupported or backend_error.
    virtual std::unique_ptr<prepared> prepare(const core::model_analysis& graph, const graph_data& data) = 0;
    /// Waits for all work issued so far.
    virtual void synchronize() = 0;
    virtual device_timer& timer() = 0;
    /// Evicts the last-level cache (touches a buffer of at least twice its size, allocated once).
    virtual void flush_cache() = 0;
    /// Bytes this backend can still allocate (device memory free, or host memory available).
    [[nodiscard]] virtual std::int64_t free_memory_bytes() const = 0;
    /// Measures the device's ceilings (compute roof per data type, bandwidth, dispatch overhead).
    /// Throws unsupported where the backend cannot (the default).
    virtual ceilings measure_ceilings(const ceilings_options& options);
    /// Whether measure_ceilings() measures anything (false for the default, which throws).
    [[nodiscard]] virtual bool measures_ceilings() const { return false; }
    /// Checks cached ceilings cheaply (see ceilings_spot_check); empty where the backend has no such check
    /// (the default).
    virtual std::optional<ceilings_spot_check> spot_check_ceilings(const ceilings& cached,
                                                                   const ceilings_options& options) {
        (void)cached;
        (void)options;
        return std::nullopt;
    }
    /// Measures points of the working-set sweep again (`sizes`: bytes of points in ceilings::working_set_gbs),
    /// each the way the sweep measured it, with a short budget (about 0.1 s a point): a roof that a layer beat
    /// is checked at the moment the layer ran (profile_model). Returns GB/s per size, 0 where the samples were
    /// disturbed; empty where the backend has no sweep (the default).
    virtual std::vector<double> remeasure_working_set(const std::vector<std::int64_t>& sizes,
                                                      const ceilings_options& options) {
        (void)sizes;
        (void)options;
        return {};
    }
    /// Opens / closes a named range (one layer's measurement, the end-to-end pass) for the device's
    /// tracing tools: an NVTX range on CUDA, so a run lines up in Nsight Systems. Ranges nest; they cost
    /// nothing without a tool attached and are never inside a timed region. No-ops by default.
    virtual void push_range(const std::string& name) { (void)name; }
    virtual void pop_range() {}
};

}  // namespace ridgeline::backend_api
