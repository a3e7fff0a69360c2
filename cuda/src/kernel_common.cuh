#pragma once
// What the backend's kernel files share (kernels.cu: reductions, pooling, data movement; kernels_stream.cu: the
// streaming elementwise kernels and STREAM): the block size, float conversion of every storage type, the
// grid-stride loop, the dispatch of a launch on the element type, and the block-wide sum or max (kernels.cu and
// kernels_attention.cu).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels.hpp"

namespace ridgeline::cuda::kernels::detail {

constexpr int threads = 256;

using i64 = std::int64_t;

/// The conversions of a storage type to float and back (rounding to nearest): one specialisation per type the
/// kernels store (float, __half, __nv_bfloat16); another type does not compile.
template <class T>
struct storage;
template <>
struct storage<float> {
    __device__ __forceinline__ static float to_float(float v) { return v; }
    __device__ __forceinline__ static float from_float(float v) { return v; }
};
template <>
struct storage<__half> {
    __device__ __forceinline__ static float to_float(__half v) { return __half2float(v); }
    __device__ __forceinline__ static __half from_float(float v) { return __float2half_rn(v); }
};
template <>
struct storage<__nv_bfloat16> {
    __device__ __forceinline__ static float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
    __device__ __forceinline__ static __nv_bfloat16 from_float(float v) { return __float2bfloat16_rn(v); }
};

template <class T>
__device__ __forceinline__ float to_float(T v) {
    return storage<T>::to_float(v);
}
template <class T>
__device__ __forceinline__ T from_float(float v) {
    return storage<T>::from_float(v);
}

/// Blocks for a grid-stride loop over n elements.
inline unsigned blocks_for(i64 n) { return static_cast<unsigned>(std::min<i64>((n + threads - 1) / threads, i64{1} << 20)); }

#define RIDGELINE_GRID_STRIDE(i, n)                                                            \
    for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);            \
         i += static_cast<i64>(blockDim.x) * gridDim.x)

/// Dispatches a templated launch on the element type.
template <class F>
cudaError_t dispatch(elem t, F&& f) {
    switch (t) {
        case elem::f32: f(float{}); break;
        case elem::f16: f(__half{}); break;
        case elem::bf16: f(__nv_bfloat16{}); break;
    }
    return cudaGetLastError();
}

/// Sum (or max) over the block; every thread gets the result. `scratch` holds 32 floats. A lane past the last
/// warp adds 0 to a sum and -inf to a max (their identities).
template <bool Max>
__device__ float block_reduce(float v, float* scratch) {
    for (int o = 16; o > 0; o >>= 1) {
        const float other = __shfl_xor_sync(0xffffffffu, v, o);
        v = Max ? fmaxf(v, other) : v + other;
    }
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int warps = (blockDim.x + 31) >> 5;
    __syncthreads();  // scratch may still be read by a previous reduction
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < warps ? scratch[lane] : (Max ? -INFINITY : 0.0f);
        for (int o = 16; o > 0; o >>= 1) {
            const float other = __shfl_xor_sync(0xffffffffu, v, o);
            v = Max ? fmaxf(v, other) : v + other;
        }
        if (lane == 0) scratch[0] = v;
    }
    __syncthreads();
    return scratch[0];
}

}  // namespace ridgeline::cuda::kernels::detail
