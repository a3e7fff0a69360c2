#include "resources.hpp"

#include <cstdio>
#include <string>

namespace ridgeline::cuda {

stream make_stream() {
    cudaStream_t s = nullptr;
    RIDGELINE_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return stream(s);
}

event make_event(bool timing) {
    cudaEvent_t e = nullptr;
    RIDGELINE_CUDA_CHECK(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
    return event(e);
}

cublas_handle make_cublas() {
    cublasHandle_t h = nullptr;
    RIDGELINE_CUDA_CHECK(cublasCreate(&h));
    return cublas_handle(h);
}

cublaslt_handle make_cublaslt() {
    cublasLtHandle_t h = nullptr;
    RIDGELINE_CUDA_CHECK(cublasLtCreate(&h));
    return cublaslt_handle(h);
}

cudnn_handle make_cudnn() {
    cudnnHandle_t h = nullptr;
    RIDGELINE_CUDA_CHECK(cudnnCreate(&h));
    return cudnn_handle(h);
}

tensor_desc make_tensor_desc() {
    cudnnTensorDescriptor_t d = nullptr;
    RIDGELINE_CUDA_CHECK(cudnnCreateTensorDescriptor(&d));
    return tensor_desc(d);
}

filter_desc make_filter_desc() {
    cudnnFilterDescriptor_t d = nullptr;
    RIDGELINE_CUDA_CHECK(cudnnCreateFilterDescriptor(&d));
    return filter_desc(d);
}

conv_desc make_conv_desc() {
    cudnnConvolutionDescriptor_t d = nullptr;
    RIDGELINE_CUDA_CHECK(cudnnCreateConvolutionDescriptor(&d));
    return conv_desc(d);
}

activation_desc make_activation_desc(cudnnActivationMode_t mode) {
    cudnnActivationDescriptor_t d = nullptr;
    RIDGELINE_CUDA_CHECK(cudnnCreateActivationDescriptor(&d));
    activation_desc owned(d);
    RIDGELINE_CUDA_CHECK(cudnnSetActivationDescriptor(d, mode, CUDNN_PROPAGATE_NAN, 0.0));
    return owned;
}

lt_matmul_desc make_lt_matmul_desc(cublasComputeType_t compute, cudaDataType_t scale) {
    cublasLtMatmulDesc_t d = nullptr;
    RIDGELINE_CUDA_CHECK(cublasLtMatmulDescCreate(&d, compute, scale));
    return lt_matmul_desc(d);
}

lt_layout make_lt_layout(cudaDataType_t type, std::uint64_t rows, std::uint64_t cols, std::int64_t ld) {
    cublasLtMatrixLayout_t d = nullptr;
    RIDGELINE_CUDA_CHECK(cublasLtMatrixLayoutCreate(&d, type, rows, cols, ld));
    return lt_layout(d);
}

lt_preference make_lt_preference() {
    cublasLtMatmulPreference_t d = nullptr;
    RIDGELINE_CUDA_CHECK(cublasLtMatmulPreferenceCreate(&d));
    return lt_preference(d);
}

device_buffer::device_buffer(std::size_t bytes) {
    if (bytes == 0) return;
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, bytes);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();  // not sticky: clear it so the next launch check does not see it
        char mib[64];
        std::snprintf(mib, sizeof mib, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
        throw device_bad_alloc(std::string("cudaMalloc of ") + mib + " failed: out of device memory");
    }
    detail::check(e, "cudaMalloc(&p, bytes)", __FILE__, __LINE__);
    ptr_ = p;
    bytes_ = bytes;
}

void device_buffer::reset() noexcept {
    if (ptr_) RIDGELINE_CUDA_CHECK_NOTHROW(cudaFree(ptr_));
    ptr_ = nullptr;
    bytes_ = 0;
}

}  // namespace ridgeline::cuda
