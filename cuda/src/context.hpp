#pragma once
// What the pieces of the CUDA backend share (private to cuda/): the per-device context with the stream
// and library handles, the CUDA-event timer, host <-> device conversions, the cuBLASLt GEMM planner used
// by linear layers and by the ceilings, and the graph builder (cuda_graph.cpp).

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels.hpp"
#include "nvml.hpp"
#include "resources.hpp"
#include "ridgeline/backend_api/backend.hpp"
#include "ridgeline/core/model.hpp"
#include "ridgeline/cuda/translate.hpp"

namespace ridgeline::cuda {

/// cuBLAS's recommended workspace on Hopper (cuBLAS documentation, cublasSetWorkspace): 32 MiB; it is
/// also the cap of what a cuBLASLt algorithm may ask for here.
inline constexpr std::size_t gemm_workspace_bytes = 32u << 20;

/// One device's stream and library handles. Every kernel, library call, copy and event of the backend
/// goes to `work`, so CUDA events recorded on it time exactly that work.
struct device_context {
    explicit device_context(int ordinal);
    device_context(const device_context&) = delete;
    device_context& operator=(const device_context&) = delete;

    /// cudaSetDevice(ordinal): every entry point calls it first (the backend may share the process).
    void activate() const;
    [[nodiscard]] cudaStream_t s() const { return work.get(); }

    int ordinal = 0;
    cudaDeviceProp props{};
    stream work;
    cublas_handle blas;
    cublaslt_handle blas_lt;
    cudnn_handle dnn;
    device_buffer blas_workspace;  // bound to `blas` with cublasSetWorkspace, so stream capture never allocates
};

/// device_timer on CUDA events recorded on the context's stream: start() records one event, stop_ms()
/// records another, waits for it and returns cudaEventElapsedTime. From 101 start/stop pairs around no work at
/// construction: the overhead is their median reading (measure() takes it out of cold single-run samples), the
/// resolution the smallest step between their readings (event_resolution_ns; the documented "around 0.5
/// microseconds" of cudaEventElapsedTime where no reading is positive).
/// The GPU's disturbance meter: the host threads' stolen time (they issue the work; a preempted launch thread
/// leaves the GPU idle inside the timed region) and the SM clock over each sample, as nvbench reads it: a
/// timestamp kernel on the work stream before the sample's start event and another after its stop event each
/// write the global timer (%globaltimer, ns) and SM 0's clock64() (kernels::sm0_timestamps), so SM 0's cycles
/// over the nanoseconds between them is the mean clock of the sample (mean_clock_mhz); against the device's
/// default clock (cudaDevAttrClockRate) it is the sample's clock_fraction. A sample below
/// backend_api::throttled_clock_fraction is disturbed (replaced); its cause is named from NVML's clock event
/// reasons where the driver has NVML (nvml.hpp), and sampling pauses `throttle_pause_ms` to let the clocks
/// recover before the next sample.
class gpu_disturbance_meter final : public backend_api::disturbance_meter {
public:
    explicit gpu_disturbance_meter(device_context& ctx);
    ~gpu_disturbance_meter() override;
    gpu_disturbance_meter(const gpu_disturbance_meter&) = delete;
    gpu_disturbance_meter& operator=(const gpu_disturbance_meter&) = delete;
    void arm() override { host_.arm(); }
    void disarm() override { host_.disarm(); }
    void before_sample() override;
    backend_api::sample_disturbance after_sample(double wall_ms) override;
    [[nodiscard]] std::string source() const override;
    /// The host meter's cost and the two timestamp launches with their wait (measured at construction).
    [[nodiscard]] double cost_ns() const override { return host_.cost_ns() + stamps_cost_ns_; }

    /// The SM clock now, in MHz (one probe: a one-thread kernel spins `probe_cycles` of clock64() between two
    /// readings of the global timer); 0 when it cannot be read.
    double probe_clock_mhz();
    static constexpr long long probe_cycles = 100'000;  // ~50-100 us at 1-2 GHz: 1 us global-timer steps are <2%
    static constexpr int throttle_pause_ms = 50;

private:
    device_context& ctx_;
    backend_api::cpu_disturbance_meter host_{backend_api::meter_scope::calling_thread};
    device_buffer out_;
    unsigned long long* stamps_ = nullptr;      // pinned host memory, mapped: start ns, start cycles, stop ns, stop cycles
    unsigned long long* stamps_dev_ = nullptr;  // the same, as the device sees it
    double default_mhz_ = 0;
    double stamps_cost_ns_ = 0;
    nvml_clock_reasons nvml_;
};

class event_timer final : public backend_api::device_timer {
public:
    explicit event_timer(device_context& ctx);
    void start() override;
    double stop_ms() override;
    [[nodiscard]] double resolution_ns() const override { return resolution_ns_; }
    [[nodiscard]] double overhead_ns() const override { return overhead_ns_; }
    [[nodiscard]] std::string name() const override { return "cuda_event"; }
    backend_api::disturbance_meter* disturbance() override { return &meter_; }

private:
    device_context& ctx_;
    event start_, stop_;
    double resolution_ns_ = 500;  // measured at construction
    double overhead_ns_ = 0;
    gpu_disturbance_meter meter_;
};

/// Milliseconds per call of `work` (enqueued on the context's stream) over `reps` back-to-back calls after
/// `warmup` calls, timed with events. For choosing among algorithms at prepare time, never for results.
double time_per_call_ms(device_context& ctx, const std::function<void()>& work, int warmup, int reps);

/// A candidate algorithm's time per call for choosing among candidates (cuBLASLt's heuristic results): one warm-up
/// call, one timed call for an estimate, then the median of 3 windows of calls_per_window(estimate) back-to-back
/// calls (each window >= 100 us: one event pair around a call of a few us measures the events, not the call).
double candidate_time_ms(device_context& ctx, const std::function<void()>& work);

kernels::elem elem_of(core::dtype dt);

/// Host floats -> the storage bytes of `dt` (fp16/bf16 round to nearest even, as cuda_fp16.h /
/// cuda_bf16.h's __float2half_rn / __float2bfloat16_rn), and back to floats.
std::vector<unsigned char> to_storage(const float* values, std::size_t n, core::dtype dt);
void from_storage(const unsigned char* bytes, std::size_t n, core::dtype dt, float* out);

/// A cuBLASLt matmul planned once: descriptors, and the algorithm that was fastest of the heuristic's
/// candidates when timed on the real buffers. D = act(op(A) op(B) (+ bias per row of D) (+ C)): C, of D's layout,
/// is added with beta = 1 where an addend is given (a residual add), else C is D and beta 0.
struct lt_gemm {
    lt_matmul_desc desc;
    lt_layout a, b, c;
    cublasLtMatmulAlgo_t algo{};
    std::size_t workspace_bytes = 0;  // what the chosen algorithm needs
    std::string note;                 // describe_choice(...)
};

/// Plans `shape` in `dt` on the given buffers (a, b, c; bias may be null) with `ws` (at least
/// gemm_workspace_bytes) for the trials; `act` is applied as the epilogue's last step (CUBLASLT_EPILOGUE_RELU,
/// _GELU, with _BIAS when there is a bias) to alpha * op(A) op(B) + beta * C + bias (cuBLASLt's cublasLtMatmul
/// page); `addend`, when not null, is C (beta 1; the trials run with it). Throws backend_api::unsupported when no
/// algorithm runs.
std::unique_ptr<lt_gemm> plan_lt_gemm(device_context& ctx, core::dtype dt, const gemm_shape& shape, const void* a,
                                      const void* b, void* c, const void* bias, void* ws, std::size_t ws_bytes,
                                      fused_activation act = fused_activation::none, const void* addend = nullptr);
/// Enqueues one planned matmul, D = c; `addend` as C with beta 1 (the one it was planned with), or null.
void run_lt_gemm(device_context& ctx, const lt_gemm& g, const void* a, const void* b, void* c, void* ws,
                 std::size_t ws_bytes, const void* addend = nullptr);

/// A cuDNN forward convolution planned once (conv.cpp): descriptors, and the algorithm that was fastest when
/// cudnnFindConvolutionForwardAlgorithmEx ran every one on the real buffers (among those the data type's math allows).
struct cudnn_conv {
    tensor_desc x, y;
    filter_desc w;
    conv_desc conv;
    cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    std::size_t workspace_bytes = 0;  // what the chosen algorithm needs
    std::string note;                 // describe_choice(...)
};

/// Plans convolution `p` of layer `la` in `dt` on the given buffers (x already padded where p.pre_padded()), with
/// `ws` for the search. Throws backend_api::unsupported when no algorithm runs, backend_api::backend_error when cuDNN's
/// output shape differs from ridgeline's.
std::shared_ptr<const cudnn_conv> plan_cudnn_conv(device_context& ctx, core::dtype dt, const conv_params& p,
                                                  const core::layer_analysis& la, const void* x, const void* w, void* y,
                                                  void* ws, std::size_t ws_bytes);
/// cudnnConvolutionBiasActivationForward's part of a planned convolution, y = act(conv(x) + z + bias) (cudnn_cnn.h;
/// cuDNN's API reference of that name): the bias 1 x K x 1 x 1 in y's type, the activation (RELU, or IDENTITY,
/// which runs only with IMPLICIT_PRECOMP_GEMM), the algorithm (the convolution's own with RELU) and its workspace.
/// z, of y's shape, is added with alpha2 = 1 where there is one; otherwise alpha2 = 0 and z is y.
struct cudnn_conv_fused {
    tensor_desc bias;
    activation_desc act;
    cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    std::size_t workspace_bytes = 0;
};

/// Plans the fused call on `c` and enqueues it once on the given buffers (z may be null), so that a configuration
/// cuDNN refuses is known at prepare time; with RELU, the convolution's algorithm, then IMPLICIT_PRECOMP_GEMM. Throws
/// backend_api::unsupported (cuDNN's NOT_SUPPORTED, or a workspace larger than ws_bytes) or
/// backend_api::backend_error (any other cuDNN status): the caller runs the plain convolution instead, and
/// synchronises the stream itself, so that an error of the CUDA runtime is not mistaken for a refusal.
std::shared_ptr<const cudnn_conv_fused> plan_cudnn_conv_fused(device_context& ctx, core::dtype dt,
                                                              const cudnn_conv& c, std::int64_t k, bool relu,
                                                              const void* x, const void* w, const void* z,
                                                              const void* bias, void* y, void* ws,
                                                              std::size_t ws_bytes);
/// Enqueues one planned fused call (z may be null).
void run_cudnn_conv_fused(device_context& ctx, const cudnn_conv& c, const cudnn_conv_fused& f, const void* x,
                          const void* w, const void* z, const void* bias, void* y, void* ws, std::size_t ws_bytes);

/// Enqueues one planned convolution (y = conv(x, w), no bias).
void run_cudnn_conv(device_context& ctx, const cudnn_conv& c, const void* x, const void* w, void* y, void* ws,
                    std::size_t ws_bytes);

/// Prepares a graph (model or one layer) on the device (cuda_graph.cpp). Throws backend_api::unsupported,
/// backend_api::backend_error or device_bad_alloc.
std::unique_ptr<backend_api::prepared> build_graph(device_context& ctx, const core::model_analysis& model,
                                                const backend_api::graph_data& data);

}  // namespace ridgeline::cuda
