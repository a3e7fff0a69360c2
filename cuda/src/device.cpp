// Device discovery (never throws), library versions, the per-device context, the CUDA-event timer and
// host <-> device data conversions.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <thread>
#include <vector>

#include "context.hpp"
#include "ridgeline/backend_api/timing.hpp"
#include "ridgeline/cuda/cuda_backend.hpp"

namespace ridgeline::cuda {

namespace {

struct device_probe {
    int count = 0;
    std::string error;
};

device_probe probe_devices() {
    device_probe p;
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    // Without an NVIDIA kernel driver (a laptop, a VM) the runtime says "CUDA driver version is insufficient for
    // CUDA runtime version", which tells the user to update a driver that does not exist: say what is true.
    const bool driver_loaded = std::ifstream("/proc/driver/nvidia/version").good();
    if (e != cudaSuccess) {
        const char* text = cudaGetErrorString(e);
        p.error = !driver_loaded && (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice)
                      ? std::string(no_gpu_found) + " (no NVIDIA driver is loaded)"
                      : std::string(text ? text : "cudaGetDeviceCount failed");
        (void)cudaGetLastError();
        return p;
    }
    if (n <= 0) {
        p.error = std::string(no_gpu_found) + " (the NVIDIA driver reports no CUDA-capable device)";
        return p;
    }
    p.count = n;
    return p;
}

const device_probe& probe() {
    static const device_probe p = probe_devices();
    return p;
}

}  // namespace

int device_count() noexcept {
    try {
        return probe().count;
    } catch (...) {  // allocating the message failed: still no device to offer
        return 0;
    }
}

std::string device_count_error() { return probe().error; }

std::string runtime_version() {
    int v = 0;
    if (cudaRuntimeGetVersion(&v) != cudaSuccess) return "unknown";
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string cudnn_version() {
    // cuDNN 9 encodes its version as major * 10000 + minor * 100 + patch (cudnn_version.h, CUDNN_VERSION)
    const std::size_t v = cudnnGetVersion();
    return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
}

std::string cublas_version() {
    int major = 0, minor = 0, patch = 0;
    if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
        cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
        cublasGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS)
        return "unknown";
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

// ------------------------------------------------------------------------------------------ context

device_context::device_context(int device) : ordinal(device) {
    const int count = device_count();
    if (count == 0) throw backend_api::backend_error("no CUDA device: " + device_count_error());
    if (device < 0 || device >= count)
        throw backend_api::backend_error("no CUDA device " + std::to_string(device) + ": this machine has " +
                                      std::to_string(count) + " (cuda:0 to cuda:" + std::to_string(count - 1) + ")");
    activate();
    RIDGELINE_CUDA_CHECK(cudaGetDeviceProperties(&props, device));
    work = make_stream();
    blas = make_cublas();
    RIDGELINE_CUDA_CHECK(cublasSetStream(blas.get(), work.get()));
    // fp32 stays fp32: CUBLAS_DEFAULT_MATH never uses TF32 for CUBLAS_COMPUTE_32F (tf32 asks for it with
    // CUBLAS_COMPUTE_32F_FAST_TF32 per call)
    RIDGELINE_CUDA_CHECK(cublasSetMathMode(blas.get(), CUBLAS_DEFAULT_MATH));
    blas_workspace = device_buffer(gemm_workspace_bytes);
    RIDGELINE_CUDA_CHECK(cublasSetWorkspace(blas.get(), blas_workspace.get(), blas_workspace.bytes()));
    blas_lt = make_cublaslt();
    dnn = make_cudnn();
    RIDGELINE_CUDA_CHECK(cudnnSetStream(dnn.get(), work.get()));
}

void device_context::activate() const { RIDGELINE_CUDA_CHECK(cudaSetDevice(ordinal)); }

// ------------------------------------------------------------------------------------------ timer

gpu_disturbance_meter::gpu_disturbance_meter(device_context& ctx)
    : ctx_(ctx), out_(2 * sizeof(long long)), nvml_(ctx.ordinal) {
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, ctx_.ordinal) == cudaSuccess && khz > 0)
        default_mhz_ = khz / 1000.0;
    else
        (void)cudaGetLastError();
    void* host = nullptr;
    void* dev = nullptr;
    if (cudaHostAlloc(&host, 4 * sizeof(unsigned long long), cudaHostAllocMapped) == cudaSuccess &&
        cudaHostGetDevicePointer(&dev, host, 0) == cudaSuccess) {
        stamps_ = static_cast<unsigned long long*>(host);
        stamps_dev_ = static_cast<unsigned long long*>(dev);
    } else {
        (void)cudaGetLastError();
        if (host) (void)cudaFreeHost(host);
        return;
    }
    // what the two timestamp launches and their wait cost per sample: the median of 11
    std::vector<double> ns;
    for (int i = 0; i < 11; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        before_sample();
        (void)after_sample(0.0);
        ns.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count());
    }
    std::nth_element(ns.begin(), ns.begin() + 5, ns.end());
    stamps_cost_ns_ = ns[5];
}

gpu_disturbance_meter::~gpu_disturbance_meter() {
    if (stamps_) (void)cudaFreeHost(stamps_);
}

void gpu_disturbance_meter::before_sample() {
    host_.before_sample();
    if (!stamps_) return;
    for (int i = 0; i < 4; ++i) stamps_[i] = 0;
    RIDGELINE_CUDA_CHECK(kernels::sm0_timestamps(stamps_dev_, ctx_.props.multiProcessorCount, ctx_.s()));
}

double gpu_disturbance_meter::probe_clock_mhz() {
    RIDGELINE_CUDA_CHECK(kernels::clock_probe(ctx_.s(), probe_cycles, static_cast<long long*>(out_.get())));
    long long host[2] = {0, 0};
    RIDGELINE_CUDA_CHECK(cudaMemcpyAsync(host, out_.get(), sizeof host, cudaMemcpyDeviceToHost, ctx_.s()));
    RIDGELINE_CUDA_CHECK(cudaStreamSynchronize(ctx_.s()));
    return host[1] > 0 ? static_cast<double>(host[0]) / static_cast<double>(host[1]) * 1e3 : 0.0;  // cycles/ns -> MHz
}

backend_api::sample_disturbance gpu_disturbance_meter::after_sample(double wall_ms) {
    backend_api::sample_disturbance d = host_.after_sample(wall_ms);
    if (!stamps_) return d;
    RIDGELINE_CUDA_CHECK(kernels::sm0_timestamps(stamps_dev_ + 2, ctx_.props.multiProcessorCount, ctx_.s()));
    RIDGELINE_CUDA_CHECK(cudaStreamSynchronize(ctx_.s()));
    const double mhz = mean_clock_mhz(stamps_[0], stamps_[1], stamps_[2], stamps_[3]);
    if (!(mhz > 0) || !(default_mhz_ > 0)) return d;
    d.clock_fraction = std::min(1.0, mhz / default_mhz_);
    if (d.clock_fraction < backend_api::throttled_clock_fraction) {
        const std::optional<std::uint64_t> why = nvml_.current();
        char buf[160];
        std::snprintf(buf, sizeof buf, "SM clock %.0f MHz over a sample, %.0f%% of its default %.0f MHz", mhz,
                      100.0 * mhz / default_mhz_, default_mhz_);
        d.throttle_cause = std::string(buf) + (why ? "; NVML: " + clock_event_reasons_text(*why) : "; " + nvml_.status());
        // the sample is replaced: a pause lets the clocks recover before the next one
        std::this_thread::sleep_for(std::chrono::milliseconds(throttle_pause_ms));
    }
    return d;
}

std::string gpu_disturbance_meter::source() const {
    if (!stamps_) return host_.source() + "+sm_clock unavailable (no mapped host memory for the timestamps)";
    return host_.source() + (default_mhz_ > 0 ? "+sm_clock" : "+sm_clock unavailable (no default clock)") +
           (nvml_.status() == "NVML" ? "+nvml" : "");
}

event_timer::event_timer(device_context& ctx)
    : ctx_(ctx), start_(make_event()), stop_(make_event()), meter_(ctx) {
    // 101 start/stop pairs around no work: their median is the overhead, their steps the resolution
    std::vector<double> ns;
    for (int i = 0; i < 101; ++i) {
        start();
        ns.push_back(stop_ms() * 1e6);
    }
    resolution_ns_ = event_resolution_ns(ns);
    std::nth_element(ns.begin(), ns.begin() + 50, ns.end());
    overhead_ns_ = ns[50];
}

void event_timer::start() { RIDGELINE_CUDA_CHECK(cudaEventRecord(start_.get(), ctx_.s())); }

double event_timer::stop_ms() {
    RIDGELINE_CUDA_CHECK(cudaEventRecord(stop_.get(), ctx_.s()));
    RIDGELINE_CUDA_CHECK(cudaEventSynchronize(stop_.get()));
    float ms = 0;
    RIDGELINE_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    return static_cast<double>(ms);
}

double time_per_call_ms(device_context& ctx, const std::function<void()>& work, int warmup, int reps) {
    event a = make_event(), b = make_event();
    for (int i = 0; i < warmup; ++i) work();
    RIDGELINE_CUDA_CHECK(cudaEventRecord(a.get(), ctx.s()));
    for (int i = 0; i < reps; ++i) work();
    RIDGELINE_CUDA_CHECK(cudaEventRecord(b.get(), ctx.s()));
    RIDGELINE_CUDA_CHECK(cudaEventSynchronize(b.get()));
    float ms = 0;
    RIDGELINE_CUDA_CHECK(cudaEventElapsedTime(&ms, a.get(), b.get()));
    return static_cast<double>(ms) / std::max(1, reps);
}

double candidate_time_ms(device_context& ctx, const std::function<void()>& work) {
    const int calls = calls_per_window(time_per_call_ms(ctx, work, 1, 1));
    std::array<double, 3> windows{};
    for (double& w : windows) w = time_per_call_ms(ctx, work, 0, calls);
    std::sort(windows.begin(), windows.end());
    return windows[1];
}

// ------------------------------------------------------------------------------------------ data

kernels::elem elem_of(core::dtype dt) {
    switch (dt) {
        case core::dtype::fp32:
        case core::dtype::tf32: return kernels::elem::f32;
        case core::dtype::fp16: return kernels::elem::f16;
        case core::dtype::bf16: return kernels::elem::bf16;
    }
    return kernels::elem::f32;
}

namespace {

/// values[0, n) rounded by `narrow` into storage type T, written unaligned at `bytes`.
template <class T, class Narrow>
void narrow_each(const float* values, std::size_t n, unsigned char* bytes, Narrow narrow) {
    for (std::size_t i = 0; i < n; ++i) {
        const T h = narrow(values[i]);
        std::memcpy(bytes + sizeof(T) * i, &h, sizeof(T));
    }
}

/// n values of storage type T read unaligned from `bytes`, widened by `widen` into out[0, n).
template <class T, class Widen>
void widen_each(const unsigned char* bytes, std::size_t n, float* out, Widen widen) {
    for (std::size_t i = 0; i < n; ++i) {
        T h;
        std::memcpy(&h, bytes + sizeof(T) * i, sizeof(T));
        out[i] = widen(h);
    }
}

}  // namespace

std::vector<unsigned char> to_storage(const float* values, std::size_t n, core::dtype dt) {
    const auto bytes = static_cast<std::size_t>(precision_of(dt).storage_bytes);
    std::vector<unsigned char> out(n * bytes);
    switch (dt) {
        case core::dtype::fp32:
        case core::dtype::tf32:
            if (n) std::memcpy(out.data(), values, n * sizeof(float));
            break;
        case core::dtype::fp16:
            narrow_each<__half>(values, n, out.data(), [](float v) { return __float2half_rn(v); });
            break;
        case core::dtype::bf16:
            narrow_each<__nv_bfloat16>(values, n, out.data(), [](float v) { return __float2bfloat16_rn(v); });
            break;
    }
    return out;
}

void from_storage(const unsigned char* bytes, std::size_t n, core::dtype dt, float* out) {
    switch (dt) {
        case core::dtype::fp32:
        case core::dtype::tf32:
            if (n) std::memcpy(out, bytes, n * sizeof(float));
            return;
        case core::dtype::fp16:
            widen_each<__half>(bytes, n, out, [](__half h) { return __half2float(h); });
            return;
        case core::dtype::bf16:
            widen_each<__nv_bfloat16>(bytes, n, out, [](__nv_bfloat16 h) { return __bfloat162float(h); });
            return;
    }
}

}  // namespace ridgeline::cuda
