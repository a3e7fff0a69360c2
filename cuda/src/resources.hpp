#pragma once
// RAII owners of every CUDA, cuBLAS and cuDNN resource the backend creates: move-only, copy deleted,
// released with the noexcept check (a failure while releasing is a warning, never an exception).

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "check.hpp"

namespace ridgeline::cuda {

/// An owned handle of type H released by Traits::destroy(H) noexcept.
template <class H, class Traits>
class unique_handle {
public:
    unique_handle() = default;
    explicit unique_handle(H h) : h_(h) {}
    ~unique_handle() { reset(); }
    unique_handle(const unique_handle&) = delete;
    unique_handle& operator=(const unique_handle&) = delete;
    unique_handle(unique_handle&& o) noexcept : h_(std::exchange(o.h_, H{})) {}
    unique_handle& operator=(unique_handle&& o) noexcept {
        if (this != &o) {
            reset();
            h_ = std::exchange(o.h_, H{});
        }
        return *this;
    }
    [[nodiscard]] H get() const { return h_; }
    explicit operator bool() const { return h_ != H{}; }
    void reset() noexcept {
        if (h_ != H{}) Traits::destroy(h_);
        h_ = H{};
    }

private:
    H h_{};
};

struct stream_traits {
    static void destroy(cudaStream_t s) noexcept { RIDGELINE_CUDA_CHECK_NOTHROW(cudaStreamDestroy(s)); }
};
struct event_traits {
    static void destroy(cudaEvent_t e) noexcept { RIDGELINE_CUDA_CHECK_NOTHROW(cudaEventDestroy(e)); }
};
struct graph_traits {
    static void destroy(cudaGraph_t g) noexcept { RIDGELINE_CUDA_CHECK_NOTHROW(cudaGraphDestroy(g)); }
};
struct graph_exec_traits {
    static void destroy(cudaGraphExec_t g) noexcept { RIDGELINE_CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(g)); }
};
struct cublas_traits {
    static void destroy(cublasHandle_t h) noexcept { RIDGELINE_CUDA_CHECK_NOTHROW(cublasDestroy(h)); }
};
struct cublaslt_traits {
    static void destroy(cublasLtHandle_t h) noexcept { RIDGELINE_CUDA_CHECK_NOTHROW(cublasLtDestroy(h)); }
};
struct lt_matmul_desc_traits {
    static void destroy(cublasLtMatmulDesc_t d) noexcept { RIDGELINE_CUDA_CHECK_NOTHROW(cublasLtMatmulDescDestroy(d)); }
};
struct lt_layout_traits {
    static void destroy(cublasLtMatrixLayout_t d) noexcept {
        RIDGELINE_CUDA_CHECK_NOTHROW(cublasLtMatrixLayoutDestroy(d));
    }
};
struct lt_preference_traits {
    static void destroy(cublasLtMatmulPreference_t d) noexcept {
        RIDGELINE_CUDA_CHECK_NOTHROW(cublasLtMatmulPreferenceDestroy(d));
    }
};
struct cudnn_traits {
    static void destroy(cudnnHandle_t h) noexcept { RIDGELINE_CUDA_CHECK_NOTHROW(cudnnDestroy(h)); }
};
struct tensor_desc_traits {
    static void destroy(cudnnTensorDescriptor_t d) noexcept {
        RIDGELINE_CUDA_CHECK_NOTHROW(cudnnDestroyTensorDescriptor(d));
    }
};
struct filter_desc_traits {
    static void destroy(cudnnFilterDescriptor_t d) noexcept {
        RIDGELINE_CUDA_CHECK_NOTHROW(cudnnDestroyFilterDescriptor(d));
    }
};
struct conv_desc_traits {
    static void destroy(cudnnConvolutionDescriptor_t d) noexcept {
        RIDGELINE_CUDA_CHECK_NOTHROW(cudnnDestroyConvolutionDescriptor(d));
    }
};
struct activation_desc_traits {
    static void destroy(cudnnActivationDescriptor_t d) noexcept {
        RIDGELINE_CUDA_CHECK_NOTHROW(cudnnDestroyActivationDescriptor(d));
    }
};

using stream = unique_handle<cudaStream_t, stream_traits>;
using event = unique_handle<cudaEvent_t, event_traits>;
using graph = unique_handle<cudaGraph_t, graph_traits>;
using graph_exec = unique_handle<cudaGraphExec_t, graph_exec_traits>;
using cublas_handle = unique_handle<cublasHandle_t, cublas_traits>;
using cublaslt_handle = unique_handle<cublasLtHandle_t, cublaslt_traits>;
using lt_matmul_desc = unique_handle<cublasLtMatmulDesc_t, lt_matmul_desc_traits>;
using lt_layout = unique_handle<cublasLtMatrixLayout_t, lt_layout_traits>;
using lt_preference = unique_handle<cublasLtMatmulPreference_t, lt_preference_traits>;
using cudnn_handle = unique_handle<cudnnHandle_t, cudnn_traits>;
using tensor_desc = unique_handle<cudnnTensorDescriptor_t, tensor_desc_traits>;
using filter_desc = unique_handle<cudnnFilterDescriptor_t, filter_desc_traits>;
using conv_desc = unique_handle<cudnnConvolutionDescriptor_t, conv_desc_traits>;
using activation_desc = unique_handle<cudnnActivationDescriptor_t, activation_desc_traits>;

// Creators: each throws (RIDGELINE_CUDA_CHECK) when the library refuses.
stream make_stream();                 // non-blocking with respect to the legacy default stream
event make_event(bool timing = true);  // timing=false: cudaEventDisableTiming (synchronisation only)
cublas_handle make_cublas();
cublaslt_handle make_cublaslt();
cudnn_handle make_cudnn();
tensor_desc make_tensor_desc();
filter_desc make_filter_desc();
conv_desc make_conv_desc();
activation_desc make_activation_desc(cudnnActivationMode_t mode);  // NaN propagated (PyTorch's relu keeps NaN)
lt_matmul_desc make_lt_matmul_desc(cublasComputeType_t compute, cudaDataType_t scale);
lt_layout make_lt_layout(cudaDataType_t type, std::uint64_t rows, std::uint64_t cols, std::int64_t ld);
lt_preference make_lt_preference();

/// Device memory from cudaMalloc (256-byte aligned), freed with cudaFree. Throws device_bad_alloc when
/// the device is out of memory.
class device_buffer {
public:
    device_buffer() = default;
    explicit device_buffer(std::size_t bytes);
    ~device_buffer() { reset(); }
    device_buffer(const device_buffer&) = delete;
    device_buffer& operator=(const device_buffer&) = delete;
    device_buffer(device_buffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
    device_buffer& operator=(device_buffer&& o) noexcept {
        if (this != &o) {
            reset();
            ptr_ = std::exchange(o.ptr_, nullptr);
            bytes_ = std::exchange(o.bytes_, 0);
        }
        return *this;
    }
    [[nodiscard]] void* get() const { return ptr_; }
    [[nodiscard]] std::size_t bytes() const { return bytes_; }
    void reset() noexcept;

private:
    void* ptr_ = nullptr;
    std::size_t bytes_ = 0;
};

}  // namespace ridgeline::cuda
