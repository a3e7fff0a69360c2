// The transformer layers' kernels (declared in kernels.hpp): RMSNorm (one block per row), rotary embedding (one
// thread per rotated pair), and the masked softmax between attention's two GEMMs (one block per score row).
// Semantics follow the reference loops (cpu/src/reference_attention.cpp).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cfloat>
#include <cmath>

#include "kernel_common.cuh"
#include "kernels.hpp"

namespace ridgeline::cuda::kernels {

using namespace detail;

namespace {

template <class T>
__global__ void rms_norm_kernel(const T* __restrict__ x, T* __restrict__ y, const float* __restrict__ gamma, i64 inner,
                                float eps) {
    __shared__ float scratch[32];
    const T* xr = x + static_cast<i64>(blockIdx.x) * inner;
    T* yr = y + static_cast<i64>(blockIdx.x) * inner;
    float q = 0.0f;
    for (i64 k = threadIdx.x; k < inner; k += blockDim.x) {
        const float v = to_float(xr[k]);
        q += v * v;
    }
    const float inv = rsqrtf(block_reduce<false>(q, scratch) / static_cast<float>(inner) + eps);
    for (i64 k = threadIdx.x; k < inner; k += blockDim.x)
        yr[k] = from_float<T>(to_float(xr[k]) * inv * (gamma ? gamma[k] : 1.0f));
}

template <class T>
__global__ void rotary_kernel(const T* __restrict__ x, T* __restrict__ y, const float* __restrict__ cos,
                              const float* __restrict__ sin, i64 rows, i64 seq, i64 dim) {
    const i64 half = dim / 2;
    RIDGELINE_GRID_STRIDE(p, rows * half) {
        const i64 row = p / half, i = p % half, s = row % seq;
        const T* xr = x + row * dim;
        T* yr = y + row * dim;
        const float* c = cos + s * dim;
        const float* sn = sin + s * dim;
        const float x1 = to_float(xr[i]), x2 = to_float(xr[i + half]);
        yr[i] = from_float<T>(x1 * c[i] - x2 * sn[i]);
        yr[i + half] = from_float<T>(x2 * c[i + half] + x1 * sn[i + half]);
    }
}

/// One block per score row: row r of group g is query r % sq (position skv - sq + r % sq); the causal bound and window
/// drop keys, the mask (when given) is added through its strides, then the softmax into the storage type.
template <class T>
__global__ void attention_softmax_kernel(const float* __restrict__ scores, T* __restrict__ probs, attention_mask m) {
    __shared__ float scratch[32];
    const i64 row = blockIdx.x;  // over groups * rows
    const i64 r = row % m.rows, g = row / m.rows;
    const i64 i = r % m.sq;
    const i64 pos = m.skv - m.sq + i;
    const float* s = scores + row * m.skv;
    T* p = probs + row * m.skv;
    // the mask's offset of this row: group g is (batch b, kv head), row r is (query head in the group, query i)
    const i64 head = (g % m.kv_heads) * (m.rows / m.sq) + r / m.sq, b = g / m.kv_heads;
    const float* mr = m.mask ? m.mask + b * m.stride[0] + head * m.stride[1] + i * m.stride[2] : nullptr;
    auto value = [&](i64 j) -> float {
        if (m.causal && (j > pos || (m.window > 0 && pos - j >= m.window))) return -INFINITY;
        return s[j] + (mr ? mr[j * m.stride[3]] : 0.0f);
    };
    float top = -INFINITY;
    for (i64 j = threadIdx.x; j < m.skv; j += blockDim.x) top = fmaxf(top, value(j));
    top = block_reduce<true>(top, scratch);
    float sum = 0.0f;
    for (i64 j = threadIdx.x; j < m.skv; j += blockDim.x) sum += expf(value(j) - top);
    const float inv = 1.0f / block_reduce<false>(sum, scratch);
    for (i64 j = threadIdx.x; j < m.skv; j += blockDim.x) p[j] = from_float<T>(expf(value(j) - top) * inv);
}

}  // namespace

cudaError_t rms_norm(elem t, const void* x, void* y, const float* gamma, i64 rows, i64 inner, float eps,
                     cudaStream_t stream) {
    if (rows <= 0 || inner <= 0) return cudaSuccess;
    if (rows > 0x7fffffff) return cudaErrorInvalidConfiguration;
    return dispatch(t, [&](auto tag) {
        using T = decltype(tag);
        rms_norm_kernel<T><<<static_cast<unsigned>(rows), threads, 0, stream>>>(static_cast<const T*>(x),
                                                                               static_cast<T*>(y), gamma, inner, eps);
    });
}

cudaError_t rotary(elem t, const void* x, void* y, const float* cos, const float* sin, i64 rows, i64 seq, i64 dim,
                   cudaStream_t stream) {
    if (rows <= 0 || dim <= 0) return cudaSuccess;
    return dispatch(t, [&](auto tag) {
        using T = decltype(tag);
        rotary_kernel<T><<<blocks_for(rows * dim / 2), threads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y),
                                                                            cos, sin, rows, seq, dim);
    });
}

cudaError_t attention_softmax(elem t, const float* scores, void* probs, const attention_mask& m, cudaStream_t stream) {
    const i64 rows = m.groups * m.rows;
    if (rows <= 0 || m.skv <= 0) return cudaSuccess;
    if (rows > 0x7fffffff) return cudaErrorInvalidConfiguration;
    const int block = m.skv >= 1024 ? 256 : (m.skv >= 128 ? 128 : 32);
    return dispatch(t, [&](auto tag) {
        using T = decltype(tag);
        attention_softmax_kernel<T><<<static_cast<unsigned>(rows), block, 0, stream>>>(scores, static_cast<T*>(probs), m);
    });
}

}  // namespace ridgeline::cuda::kernels
