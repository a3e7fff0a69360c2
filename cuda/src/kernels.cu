// The backend's own kernels (declared in kernels.hpp) other than the streaming ones (kernels_stream.cu):
// reductions (softmax with inner == 1, layer_norm: one block per row), pooling (one thread per output), data
// movement (embedding, padding), the random fill of the ceilings' buffers and the probes.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>

#include "index_math.hpp"
#include "kernel_common.cuh"
#include "kernels.hpp"

namespace ridgeline::cuda::kernels {

using namespace detail;

namespace {

// ------------------------------------------------------------------ reductions (one block per row)

template <class T>
__global__ void softmax_rows_kernel(const T* __restrict__ x, T* __restrict__ y, i64 size) {
    __shared__ float scratch[32];
    const T* xr = x + static_cast<i64>(blockIdx.x) * size;
    T* yr = y + static_cast<i64>(blockIdx.x) * size;
    float m = -INFINITY;
    for (i64 k = threadIdx.x; k < size; k += blockDim.x) m = fmaxf(m, to_float(xr[k]));
    m = block_reduce<true>(m, scratch);
    float s = 0.0f;
    for (i64 k = threadIdx.x; k < size; k += blockDim.x) s += expf(to_float(xr[k]) - m);
    s = block_reduce<false>(s, scratch);
    const float inv = 1.0f / s;
    for (i64 k = threadIdx.x; k < size; k += blockDim.x) yr[k] = from_float<T>(expf(to_float(xr[k]) - m) * inv);
}

/// softmax over the middle dim of [outer, size, inner] with inner > 1: one thread per (outer, inner)
/// column, consecutive threads on consecutive inner indices (coalesced).
template <class T>
__global__ void softmax_columns_kernel(const T* __restrict__ x, T* __restrict__ y, i64 outer, i64 size, i64 inner) {
    RIDGELINE_GRID_STRIDE(col, outer * inner) {
        const i64 o = col / inner, i = col % inner;
        const T* xc = x + o * size * inner + i;
        T* yc = y + o * size * inner + i;
        float m = -INFINITY;
        for (i64 k = 0; k < size; ++k) m = fmaxf(m, to_float(xc[k * inner]));
        float s = 0.0f;
        for (i64 k = 0; k < size; ++k) s += expf(to_float(xc[k * inner]) - m);
        const float inv = 1.0f / s;
        for (i64 k = 0; k < size; ++k) yc[k * inner] = from_float<T>(expf(to_float(xc[k * inner]) - m) * inv);
    }
}

template <class T>
__global__ void layer_norm_kernel(const T* __restrict__ x, T* __restrict__ y, const float* __restrict__ gamma,
                                  const float* __restrict__ beta, i64 inner, float eps) {
    __shared__ float scratch[32];
    const T* xr = x + static_cast<i64>(blockIdx.x) * inner;
    T* yr = y + static_cast<i64>(blockIdx.x) * inner;
    float s = 0.0f;
    for (i64 k = threadIdx.x; k < inner; k += blockDim.x) s += to_float(xr[k]);
    const float mean = block_reduce<false>(s, scratch) / static_cast<float>(inner);
    float q = 0.0f;
    for (i64 k = threadIdx.x; k < inner; k += blockDim.x) {
        const float d = to_float(xr[k]) - mean;
        q += d * d;
    }
    const float var = block_reduce<false>(q, scratch) / static_cast<float>(inner);  // biased, as PyTorch
    const float inv_std = rsqrtf(var + eps);
    for (i64 k = threadIdx.x; k < inner; k += blockDim.x) {
        float v = (to_float(xr[k]) - mean) * inv_std;
        if (gamma) v = v * gamma[k] + (beta ? beta[k] : 0.f);
        yr[k] = from_float<T>(v);
    }
}

// ------------------------------------------------------------------ pooling (one thread per output element)

template <class T>
__global__ void max_pool_kernel(const T* __restrict__ x, T* __restrict__ y, pool_geometry g) {
    const i64 total = g.planes * g.out_h * g.out_w;
    RIDGELINE_GRID_STRIDE(i, total) {
        const i64 ow = i % g.out_w, oh = (i / g.out_w) % g.out_h, p = i / (g.out_w * g.out_h);
        const T* xp = x + p * g.in_h * g.in_w;
        float m = -INFINITY;  // a window of padding only gives -inf, as PyTorch
        // the taps inside the input, computed (not searched): a huge kernel costs what the input has
        const i64 h0 = oh * g.stride_h - g.pad_h, w0 = ow * g.stride_w - g.pad_w;
        const i64 kh0 = h0 >= 0 ? 0 : (-h0 + g.dilation_h - 1) / g.dilation_h;
        const i64 kw0 = w0 >= 0 ? 0 : (-w0 + g.dilation_w - 1) / g.dilation_w;
        const i64 kh1 = g.in_h - 1 - h0 < 0 ? 0 : min(g.kernel_h, (g.in_h - 1 - h0) / g.dilation_h + 1);
        const i64 kw1 = g.in_w - 1 - w0 < 0 ? 0 : min(g.kernel_w, (g.in_w - 1 - w0) / g.dilation_w + 1);
        for (i64 kh = kh0; kh < kh1; ++kh) {
            const i64 ih = h0 + kh * g.dilation_h;
            for (i64 kw = kw0; kw < kw1; ++kw) {
                const float v = to_float(xp[ih * g.in_w + w0 + kw * g.dilation_w]);
                if (v > m || v != v) m = v;  // NaN propagates, as PyTorch
            }
        }
        y[i] = from_float<T>(m);
    }
}

/// PyTorch's AvgPool2d (aten/src/ATen/native/cpu/AvgPoolKernel.cpp): the window clipped first to the
/// padded input (the count_include_pad divisor), then to the input (the sum); an empty window gives 0.
template <class T>
__global__ void avg_pool_kernel(const T* __restrict__ x, T* __restrict__ y, pool_geometry g) {
    const i64 total = g.planes * g.out_h * g.out_w;
    RIDGELINE_GRID_STRIDE(i, total) {
        const i64 ow = i % g.out_w, oh = (i / g.out_w) % g.out_h, p = i / (g.out_w * g.out_h);
        const T* xp = x + p * g.in_h * g.in_w;
        i64 h0 = oh * g.stride_h - g.pad_h, w0 = ow * g.stride_w - g.pad_w;
        i64 h1 = h0 + g.kernel_h < g.in_h + g.pad_h ? h0 + g.kernel_h : g.in_h + g.pad_h;
        i64 w1 = w0 + g.kernel_w < g.in_w + g.pad_w ? w0 + g.kernel_w : g.in_w + g.pad_w;
        const i64 padded = (h1 - h0) * (w1 - w0);
        h0 = h0 > 0 ? h0 : 0;
        w0 = w0 > 0 ? w0 : 0;
        h1 = h1 < g.in_h ? h1 : g.in_h;
        w1 = w1 < g.in_w ? w1 : g.in_w;
        if (h0 >= h1 || w0 >= w1) {
            y[i] = from_float<T>(0.0f);
            continue;
        }
        float s = 0.0f;
        for (i64 ih = h0; ih < h1; ++ih)
            for (i64 iw = w0; iw < w1; ++iw) s += to_float(xp[ih * g.in_w + iw]);
        const i64 divisor = g.count_include_pad ? padded : (h1 - h0) * (w1 - w0);
        y[i] = from_float<T>(s / static_cast<float>(divisor));
    }
}

/// torch.nn.AdaptiveAvgPool2d: output i averages input [floor(i H / out), ceil((i + 1) H / out)).
template <class T>
__global__ void adaptive_avg_pool_kernel(const T* __restrict__ x, T* __restrict__ y, pool_geometry g) {
    const i64 total = g.planes * g.out_h * g.out_w;
    RIDGELINE_GRID_STRIDE(i, total) {
        const i64 ow = i % g.out_w, oh = (i / g.out_w) % g.out_h, p = i / (g.out_w * g.out_h);
        const T* xp = x + p * g.in_h * g.in_w;
        const i64 h0 = (oh * g.in_h) / g.out_h, h1 = ((oh + 1) * g.in_h + g.out_h - 1) / g.out_h;
        const i64 w0 = (ow * g.in_w) / g.out_w, w1 = ((ow + 1) * g.in_w + g.out_w - 1) / g.out_w;
        float s = 0.0f;
        for (i64 ih = h0; ih < h1; ++ih)
            for (i64 iw = w0; iw < w1; ++iw) s += to_float(xp[ih * g.in_w + iw]);
        y[i] = from_float<T>(s / static_cast<float>((h1 - h0) * (w1 - w0)));
    }
}

// ------------------------------------------------------------------ data movement

template <class T>
__global__ void embedding_kernel(const i64* __restrict__ ids, const T* __restrict__ table, T* __restrict__ y,
                                 i64 total, i64 dim) {
    RIDGELINE_GRID_STRIDE(i, total) { y[i] = table[ids[i / dim] * dim + i % dim]; }
}

template <class T>
__global__ void pad_copy_fast_kernel(const T* __restrict__ x, T* __restrict__ y, std::uint32_t total, fast_divider h,
                                     fast_divider w, i64 hp, i64 wp, i64 top, i64 left) {
    const std::uint32_t step = blockDim.x * gridDim.x;
    for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
        std::uint32_t row = 0, iw = 0, p = 0, ih = 0;
        w.divmod(i, row, iw);
        h.divmod(row, p, ih);
        y[(static_cast<i64>(p) * hp + ih + top) * wp + iw + left] = x[i];
    }
}

template <class T>
__global__ void pad_copy_kernel(const T* __restrict__ x, T* __restrict__ y, i64 total, i64 h, i64 w, i64 hp, i64 wp,
                                i64 top, i64 left) {
    RIDGELINE_GRID_STRIDE(i, total) {
        const i64 iw = i % w, ih = (i / w) % h, p = i / (w * h);
        y[(p * hp + ih + top) * wp + iw + left] = x[i];
    }
}

template <class T>
__global__ void fill_random_kernel(T* __restrict__ y, i64 n, std::uint32_t seed) {
    RIDGELINE_GRID_STRIDE(i, n) {
        // a 32-bit integer hash (Chris Wellons' lowbias32) of the index and the seed
        std::uint32_t h = static_cast<std::uint32_t>(i) ^ (static_cast<std::uint32_t>(i >> 32) * 0x9e3779b9u) ^ seed;
        h ^= h >> 16;
        h *= 0x7feb352du;
        h ^= h >> 15;
        h *= 0x846ca68bu;
        h ^= h >> 16;
        y[i] = from_float<T>(static_cast<float>(h >> 8) * (2.0f / 16777216.0f) - 1.0f);
    }
}

__global__ void empty_kernel() {}

// ------------------------------------------------------------------ the CUDA cores' FMA peak

template <class V>
struct fma_lanes;  // one fused multiply-add instruction on V: fmaf (FFMA), __hfma2 on half2 (HFMA2) or bf162
template <>
struct fma_lanes<float> {
    __device__ static float make(float v) { return v; }
    __device__ static float fma(float a, float b, float c) { return fmaf(a, b, c); }
    __device__ static float first(float v) { return v; }
};
template <>
struct fma_lanes<__half2> {
    __device__ static __half2 make(float v) { return __float2half2_rn(v); }
    __device__ static __half2 fma(__half2 a, __half2 b, __half2 c) { return __hfma2(a, b, c); }
    __device__ static float first(__half2 v) { return __low2float(v); }
};
template <>
struct fma_lanes<__nv_bfloat162> {
    __device__ static __nv_bfloat162 make(float v) { return __float2bfloat162_rn(v); }
    __device__ static __nv_bfloat162 fma(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
        return a;  // no bf16 arithmetic before sm_80 (the backend declines bf16 there)
#else
        return __hfma2(a, b, c);
#endif
    }
    __device__ static float first(__nv_bfloat162 v) { return __low2float(v); }
};

/// 8 independent chains of `iters` FMAs per thread (a = a * 0.999 + 0.001 tends to 1: no overflow, no subnormals);
/// the sum is written only where it is one impossible value, so no FMA can be dropped.
template <class V>
__global__ void fma_peak_kernel(int iters, float* sink) {
    using L = fma_lanes<V>;
    V a[fma_chains];
#pragma unroll
    for (int k = 0; k < fma_chains; ++k) a[k] = L::make(1.0f + 1e-3f * static_cast<float>(k + threadIdx.x % 7));
    const V b = L::make(0.999f), c = L::make(0.001f);
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int k = 0; k < fma_chains; ++k) a[k] = L::fma(a[k], b, c);
    }
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < fma_chains; ++k) s += L::first(a[k]);
    if (s == -1.5e-45f) *sink = s;
}

__device__ long long global_ns() {
    long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/// One block per SM, one thread each: the block on SM 0 writes the global timer and SM 0's clock64(). Two such
/// launches bracket a sample; SM 0's cycles over the global nanoseconds between them is its mean clock (the same
/// SM's counter both times: each SM counts its own cycles).
__global__ void sm0_timestamps_kernel(unsigned long long* out) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    if (smid != 0) return;
    out[0] = static_cast<unsigned long long>(global_ns());
    out[1] = static_cast<unsigned long long>(clock64());
}

__global__ void clock_probe_kernel(long long cycles, long long* out) {
    const long long t0 = global_ns();
    const long long start = clock64();
    long long now = start;
    while (now - start < cycles) now = clock64();
    const long long t1 = global_ns();
    out[0] = now - start;
    out[1] = t1 - t0;
}

/// `start` plus the offset of element i of a walk over map.dims (row-major) with input strides map.stride_a: where a
/// reduction's output (out_map) or one of its inputs (red_map, from the output's base) lies in x.
__device__ __forceinline__ i64 offset_of(i64 i, const index_map& map, i64 start) {
    for (int d = map.rank - 1; d >= 0; --d) {
        start += (i % map.dims[d]) * map.stride_a[d];
        i /= map.dims[d];
    }
    return start;
}

/// One thread per output (where reduce_per_block says no): out_map (the output's dims, the input strides of its
/// kept dimensions) places it,
/// red_map (the reduced dimensions' sizes and input strides) walks its `red_n` inputs; float accumulation,
/// amax propagates NaN (torch.amax).
template <class T>
__global__ void reduce_kernel(reduce_op op, const T* __restrict__ x, T* __restrict__ y, i64 out_n, index_map out_map,
                              i64 red_n, index_map red_map) {
    RIDGELINE_GRID_STRIDE(o, out_n) {
        const i64 base = offset_of(o, out_map, 0);
        float acc = op == reduce_op::max ? -INFINITY : 0.0f;
        for (i64 r = 0; r < red_n; ++r) {
            const i64 off = offset_of(r, red_map, base);
            const float v = to_float(x[off]);
            if (op != reduce_op::max)
                acc += v;
            else
                acc = (v != v || acc != acc) ? NAN : fmaxf(acc, v);
        }
        y[o] = from_float<T>(op == reduce_op::mean ? acc / static_cast<float>(red_n) : acc);
    }
}

/// One block per output (the blocks walk the outputs grid-stride): the block's threads take the output's inputs in
/// turn and block_reduce combines them (reduce_per_block decides when); amax keeps NaN through a separate count of
/// NaNs seen, since fmaxf drops them.
template <class T>
__global__ void reduce_block_kernel(reduce_op op, const T* __restrict__ x, T* __restrict__ y, i64 out_n,
                                    index_map out_map, i64 red_n, index_map red_map) {
    __shared__ float scratch[32];
    for (i64 o = blockIdx.x; o < out_n; o += gridDim.x) {
        const i64 base = offset_of(o, out_map, 0);
        float acc = op == reduce_op::max ? -INFINITY : 0.0f, nans = 0.0f;
        for (i64 r = threadIdx.x; r < red_n; r += blockDim.x) {
            const i64 off = offset_of(r, red_map, base);
            const float v = to_float(x[off]);
            if (op != reduce_op::max)
                acc += v;
            else if (v != v)
                nans = 1.0f;
            else
                acc = fmaxf(acc, v);
        }
        if (op == reduce_op::max) {
            acc = block_reduce<true>(acc, scratch);
            if (block_reduce<false>(nans, scratch) > 0.0f) acc = NAN;
        } else {
            acc = block_reduce<false>(acc, scratch);
        }
        if (threadIdx.x == 0) y[o] = from_float<T>(op == reduce_op::mean ? acc / static_cast<float>(red_n) : acc);
    }
}

}  // namespace

cudaError_t layer_norm(elem t, const void* x, void* y, const float* gamma, const float* beta, i64 rows, i64 inner,
                       float eps, cudaStream_t stream) {
    if (rows <= 0 || inner <= 0) return cudaSuccess;
    if (rows > 0x7fffffff) return cudaErrorInvalidConfiguration;
    return dispatch(t, [&](auto tag) {
        using T = decltype(tag);
        layer_norm_kernel<T><<<static_cast<unsigned>(rows), threads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y),
                                                                                 gamma, beta, inner, eps);
    });
}

cudaError_t softmax(elem t, const void* x, void* y, i64 outer, i64 size, i64 inner, cudaStream_t stream) {
    if (outer <= 0 || size <= 0 || inner <= 0) return cudaSuccess;
    if (inner == 1 && outer > 0x7fffffff) return cudaErrorInvalidConfiguration;
    return dispatch(t, [&](auto tag) {
        using T = decltype(tag);
        if (inner == 1) {
            // small rows: fewer threads per block, so that most threads have work
            const int block = size >= 1024 ? 256 : (size >= 128 ? 128 : 32);
            softmax_rows_kernel<T><<<static_cast<unsigned>(outer), block, 0, stream>>>(static_cast<const T*>(x),
                                                                                       static_cast<T*>(y), size);
        } else {
            softmax_columns_kernel<T><<<blocks_for(outer * inner), threads, 0, stream>>>(
                static_cast<const T*>(x), static_cast<T*>(y), outer, size, inner);
        }
    });
}

cudaError_t max_pool(elem t, const void* x, void* y, const pool_geometry& g, cudaStream_t stream) {
    const i64 total = g.planes * g.out_h * g.out_w;
    if (total <= 0) return cudaSuccess;
    return dispatch(t, [&](auto tag) {
        using T = decltype(tag);
        max_pool_kernel<T><<<blocks_for(total), threads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), g);
    });
}

cudaError_t avg_pool(elem t, const void* x, void* y, const pool_geometry& g, cudaStream_t stream) {
    const i64 total = g.planes * g.out_h * g.out_w;
    if (total <= 0) return cudaSuccess;
    return dispatch(t, [&](auto tag) {
        using T = decltype(tag);
        avg_pool_kernel<T><<<blocks_for(total), threads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), g);
    });
}

cudaError_t adaptive_avg_pool(elem t, const void* x, void* y, const pool_geometry& g, cudaStream_t stream) {
    const i64 total = g.planes * g.out_h * g.out_w;
    if (total <= 0) return cudaSuccess;
    return dispatch(t, [&](auto tag) {
        using T = decltype(tag);
        adaptive_avg_pool_kernel<T><<<blocks_for(total), threads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), g);
    });
}

cudaError_t embedding(elem t, const i64* ids, const void* table, void* y, i64 count, i64 dim, cudaStream_t stream) {
    const i64 total = count * dim;
    if (total <= 0) return cudaSuccess;
    return dispatch(t, [&](auto tag) {
        using T = decltype(tag);
        embedding_kernel<T><<<blocks_for(total), threads, 0, stream>>>(ids, static_cast<const T*>(table), static_cast<T*>(y),
                                                                      total, dim);
    });
}

cudaError_t pad_copy(elem t, const void* x, void* y, i64 planes, i64 h, i64 w, i64 hp, i64 wp, i64 top, i64 left,
                     cudaStream_t stream) {
    const i64 total = planes * h * w;
    if (total <= 0) return cudaSuccess;
    return dispatch(t, [&](auto tag) {
        using T = decltype(tag);
        if (total < (i64{1} << 31)) {
            pad_copy_fast_kernel<T><<<blocks_for(total), threads, 0, stream>>>(
                static_cast<const T*>(x), static_cast<T*>(y), static_cast<std::uint32_t>(total),
                fast_divider(static_cast<std::uint32_t>(h)), fast_divider(static_cast<std::uint32_t>(w)), hp, wp, top, left);
            return;
        }
        pad_copy_kernel<T><<<blocks_for(total), threads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), total, h, w,
                                                                     hp, wp, top, left);
    });
}

cudaError_t fill_random(elem t, void* y, i64 n, std::uint32_t seed, cudaStream_t stream) {
    if (n <= 0) return cudaSuccess;
    return dispatch(t, [&](auto tag) {
        using T = decltype(tag);
        fill_random_kernel<T><<<blocks_for(n), threads, 0, stream>>>(static_cast<T*>(y), n, seed);
    });
}

cudaError_t fma_peak(elem t, int blocks, int iters, float* sink, cudaStream_t stream) {
    switch (t) {
        case elem::f32: fma_peak_kernel<float><<<blocks, threads, 0, stream>>>(iters, sink); break;
        case elem::f16: fma_peak_kernel<__half2><<<blocks, threads, 0, stream>>>(iters, sink); break;
        case elem::bf16: fma_peak_kernel<__nv_bfloat162><<<blocks, threads, 0, stream>>>(iters, sink); break;
    }
    return cudaGetLastError();
}

std::int64_t fma_peak_flops(elem t, int blocks, int iters) {
    const std::int64_t lanes = t == elem::f32 ? 1 : 2;
    return std::int64_t{blocks} * threads * iters * fma_chains * 2 * lanes;
}

cudaError_t empty(cudaStream_t stream) {
    empty_kernel<<<1, 1, 0, stream>>>();
    return cudaGetLastError();
}

cudaError_t sm0_timestamps(unsigned long long* out, int sms, cudaStream_t stream) {
    sm0_timestamps_kernel<<<static_cast<unsigned>(sms > 0 ? sms : 1), 1, 0, stream>>>(out);
    return cudaGetLastError();
}

cudaError_t clock_probe(cudaStream_t stream, long long cycles, long long* cycles_out) {
    clock_probe_kernel<<<1, 1, 0, stream>>>(cycles, cycles_out);
    return cudaGetLastError();
}

cudaError_t reduce(elem t, reduce_op op, const void* x, void* y, i64 out_n, const index_map& out_map, i64 red_n,
                   const index_map& red_map, cudaStream_t stream) {
    if (out_n <= 0 || red_n <= 0) return cudaSuccess;
    return dispatch(t, [&](auto tag) {
        using T = decltype(tag);
        if (reduce_per_block(out_n, red_n))
            reduce_block_kernel<T><<<static_cast<unsigned>(out_n), threads, 0, stream>>>(
                op, static_cast<const T*>(x), static_cast<T*>(y), out_n, out_map, red_n, red_map);
        else
            reduce_kernel<T><<<blocks_for(out_n), threads, 0, stream>>>(op, static_cast<const T*>(x), static_cast<T*>(y),
                                                                       out_n, out_map, red_n, red_map);
    });
}

}  // namespace ridgeline::cuda::kernels
