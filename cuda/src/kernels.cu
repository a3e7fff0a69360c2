// The backend's own kernels (declared in kernels.hpp). The streaming ones (unary, binary, bias, scale_shift,
// copies, the STREAM kernels) load and store 16 bytes at a time with a scalar head and tail (index_math.hpp's
// vector_split), two vectors per thread per step, on a grid of a few blocks per SM; their index maps divide by
// launch-time divisors with a multiply and a shift (fast_divider) whenever every index fits in 31 bits, and fall
// back to 64-bit arithmetic otherwise. Reductions (softmax with inner == 1, layer_norm) use one block per row;
// pooling is one thread per output.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "index_math.hpp"
#include "kernels.hpp"

namespace ridgeline::cuda::kernels {

namespace {

constexpr int threads = 256;

using i64 = std::int64_t;

template <class T>
__device__ __forceinline__ float to_float(T v);
template <>
__device__ __forceinline__ float to_float<float>(float v) {
    return v;
}
template <>
__device__ __forceinline__ float to_float<__half>(__half v) {
    return __half2float(v);
}
template <>
__device__ __forceinline__ float to_float<__nv_bfloat16>(__nv_bfloat16 v) {
    return __bfloat162float(v);
}

template <class T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
    return v;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
    return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}

/// Blocks for a grid-stride loop over n elements.
unsigned blocks_for(i64 n) { return static_cast<unsigned>(std::min<i64>((n + threads - 1) / threads, i64{1} << 20)); }

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

// ------------------------------------------------------------------ elementwise

__device__ __forceinline__ float apply(unary_op op, float v, float alpha) {
    switch (op) {
        case unary_op::relu: return v > 0.0f ? v : (v != v ? v : 0.0f);  // NaN propagates, as torch.clamp
        case unary_op::relu6: return v != v ? v : fminf(fmaxf(v, 0.0f), 6.0f);
        case unary_op::gelu_erf: return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
        case unary_op::gelu_tanh: {
            const float k = 0.79788456080286536f;  // sqrt(2 / pi)
            return 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
        }
        case unary_op::tanh: return tanhf(v);
        case unary_op::sigmoid: return 1.0f / (1.0f + expf(-v));
        case unary_op::scale: return v * alpha;
    }
    return v;
}

__device__ __forceinline__ float apply(binary_op op, float a, float b) { return op == binary_op::add ? a + b : a * b; }

/// 16 bytes of T: one vector load or store (ld.global.v4 / st.global.v4).
template <class T>
struct alignas(vector_bytes) pack {
    T v[vector_bytes / sizeof(T)];
};

/// Blocks for a streaming kernel over `work` items (vectors): enough to fill the device (8 blocks of 256
/// threads per SM, 2,048 threads: full occupancy on sm_80/sm_90), fewer for small work; each thread then
/// walks its items grid-stride, two per step.
unsigned stream_blocks(i64 work) {
    static int sms = [] {
        int dev = 0, v = 0;
        if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
            v = 132;
        return std::max(v, 1);
    }();
    const i64 wanted = (work + threads - 1) / threads;
    return static_cast<unsigned>(std::clamp<i64>(wanted, 1, i64{8} * sms));
}

/// y = f(x) (f: elementwise, float arithmetic) over n elements whose buffers split as `s`, element by element
/// in the head and tail and 16 bytes at a time between, two vectors per thread per step.
template <class T, class F>
__device__ __forceinline__ void stream_unary(const T* __restrict__ x, T* __restrict__ y, vector_split s, F f) {
    const i64 tid = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
    const i64 step = static_cast<i64>(blockDim.x) * gridDim.x;
    for (i64 i = tid; i < s.head; i += step) y[i] = from_float<T>(f(to_float(x[i])));
    const auto* xv = reinterpret_cast<const pack<T>*>(x + s.head);
    auto* yv = reinterpret_cast<pack<T>*>(y + s.head);
    for (i64 v = tid; v < s.vectors; v += 2 * step) {
        const bool second = v + step < s.vectors;
        pack<T> p0 = xv[v], p1{};
        if (second) p1 = xv[v + step];
#pragma unroll
        for (int k = 0; k < vector_bytes / static_cast<int>(sizeof(T)); ++k) {
            p0.v[k] = from_float<T>(f(to_float(p0.v[k])));
            p1.v[k] = from_float<T>(f(to_float(p1.v[k])));
        }
        yv[v] = p0;
        if (second) yv[v + step] = p1;
    }
    const i64 t0 = s.head + s.vectors * s.width;
    for (i64 i = tid; i < s.tail; i += step) y[t0 + i] = from_float<T>(f(to_float(x[t0 + i])));
}

template <class T>
__global__ void unary_kernel(unary_op op, float alpha, const T* __restrict__ x, T* __restrict__ y, vector_split s) {
    stream_unary(x, y, s, [=](float v) { return apply(op, v, alpha); });
}

template <class T>
__global__ void binary_same_kernel(binary_op op, const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ y,
                                   vector_split s) {
    const i64 tid = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
    const i64 step = static_cast<i64>(blockDim.x) * gridDim.x;
    for (i64 i = tid; i < s.head; i += step) y[i] = from_float<T>(apply(op, to_float(a[i]), to_float(b[i])));
    const auto* av = reinterpret_cast<const pack<T>*>(a + s.head);
    const auto* bv = reinterpret_cast<const pack<T>*>(b + s.head);
    auto* yv = reinterpret_cast<pack<T>*>(y + s.head);
    for (i64 v = tid; v < s.vectors; v += 2 * step) {
        const bool second = v + step < s.vectors;
        pack<T> a0 = av[v], b0 = bv[v], a1{}, b1{};
        if (second) {
            a1 = av[v + step];
            b1 = bv[v + step];
        }
#pragma unroll
        for (int k = 0; k < vector_bytes / static_cast<int>(sizeof(T)); ++k) {
            a0.v[k] = from_float<T>(apply(op, to_float(a0.v[k]), to_float(b0.v[k])));
            a1.v[k] = from_float<T>(apply(op, to_float(a1.v[k]), to_float(b1.v[k])));
        }
        yv[v] = a0;
        if (second) yv[v + step] = a1;
    }
    const i64 t0 = s.head + s.vectors * s.width;
    for (i64 i = tid; i < s.tail; i += step)
        y[t0 + i] = from_float<T>(apply(op, to_float(a[t0 + i]), to_float(b[t0 + i])));
}

/// Broadcasting with 32-bit indices: the offsets of each output element from fast_index_map.
template <class T>
__global__ void binary_map_fast_kernel(binary_op op, const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ y,
                                       std::uint32_t n, fast_index_map map) {
    const std::uint32_t step = blockDim.x * gridDim.x;
    for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        std::uint32_t oa = 0, ob = 0;
        map.offsets(i, oa, ob);
        y[i] = from_float<T>(apply(op, to_float(a[oa]), to_float(b[ob])));
    }
}

/// Broadcasting with 64-bit indices (more than 2^31 elements or offsets).
template <class T>
__global__ void binary_map_kernel(binary_op op, const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ y,
                                  i64 n, index_map map) {
    RIDGELINE_GRID_STRIDE(i, n) {
        i64 rest = i, oa = 0, ob = 0;
        for (int d = map.rank - 1; d >= 0; --d) {
            const i64 idx = rest % map.dims[d];
            rest /= map.dims[d];
            oa += idx * map.stride_a[d];
            ob += idx * map.stride_b[d];
        }
        y[i] = from_float<T>(apply(op, to_float(a[oa]), to_float(b[ob])));
    }
}

template <class T>
__global__ void strided_copy_fast_kernel(const T* __restrict__ src, T* __restrict__ dst, std::uint32_t n,
                                         fast_index_map map) {
    const std::uint32_t step = blockDim.x * gridDim.x;
    for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        std::uint32_t o = 0, unused = 0;
        map.offsets(i, o, unused);
        dst[i] = src[o];
    }
}

template <class T>
__global__ void strided_copy_kernel(const T* __restrict__ src, T* __restrict__ dst, i64 n, index_map map) {
    RIDGELINE_GRID_STRIDE(i, n) {
        i64 rest = i, o = 0;
        for (int d = map.rank - 1; d >= 0; --d) {
            o += (rest % map.dims[d]) * map.stride_a[d];
            rest /= map.dims[d];
        }
        dst[i] = src[o];
    }
}

/// (x and y are not __restrict__: bias runs in place, x == y.)
/// y[n, c, :] = x[n, c, :] * scale[c] + shift[c] with one (n, c) plane per block row (blockIdx.y, grid-stride
/// over planes): the channel and its scale and shift are read once per plane, and the plane streams in vectors.
/// bias is the same with scale 1 and shift = bias[c] (in the storage type).
template <class T, bool Bias>
__global__ void plane_affine_kernel(const T* x, T* y, const float* __restrict__ scale,
                                    const float* __restrict__ shift, const T* __restrict__ bias, i64 planes, i64 c,
                                    i64 hw) {
    for (i64 plane = blockIdx.y; plane < planes; plane += gridDim.y) {
        const i64 ch = plane % c;
        const float sc = Bias ? 1.0f : scale[ch];
        const float sh = Bias ? to_float(bias[ch]) : shift[ch];
        const T* xp = x + plane * hw;
        T* yp = y + plane * hw;
        const std::uint64_t others[1] = {reinterpret_cast<std::uint64_t>(yp)};
        const vector_split s =
            split_for_vectors(reinterpret_cast<std::uint64_t>(xp), hw, static_cast<int>(sizeof(T)), others, 1);
        const i64 tid = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
        const i64 step = static_cast<i64>(blockDim.x) * gridDim.x;
        for (i64 i = tid; i < s.head; i += step) yp[i] = from_float<T>(to_float(xp[i]) * sc + sh);
        const auto* xv = reinterpret_cast<const pack<T>*>(xp + s.head);
        auto* yv = reinterpret_cast<pack<T>*>(yp + s.head);
        for (i64 v = tid; v < s.vectors; v += step) {
            pack<T> p = xv[v];
#pragma unroll
            for (int k = 0; k < vector_bytes / static_cast<int>(sizeof(T)); ++k)
                p.v[k] = from_float<T>(to_float(p.v[k]) * sc + sh);
            yv[v] = p;
        }
        const i64 t0 = s.head + s.vectors * s.width;
        for (i64 i = tid; i < s.tail; i += step) yp[t0 + i] = from_float<T>(to_float(xp[t0 + i]) * sc + sh);
    }
}

/// The same over small planes (fewer elements than a block's worth of vectors), one thread per element: the
/// channel of element i is (i / hw) mod c, by fast dividers when the element count fits in 31 bits.
template <class T, bool Bias>
__global__ void flat_affine_fast_kernel(const T* x, T* y, const float* __restrict__ scale,
                                        const float* __restrict__ shift, const T* __restrict__ bias, std::uint32_t total,
                                        fast_divider c, fast_divider hw) {
    const std::uint32_t step = blockDim.x * gridDim.x;
    for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
        std::uint32_t plane = 0, unused = 0, ch = 0;
        hw.divmod(i, plane, unused);
        c.divmod(plane, unused, ch);
        y[i] = Bias ? from_float<T>(to_float(x[i]) + to_float(bias[ch])) : from_float<T>(to_float(x[i]) * scale[ch] + shift[ch]);
    }
}

template <class T, bool Bias>
__global__ void flat_affine_kernel(const T* x, T* y, const float* __restrict__ scale,
                                   const float* __restrict__ shift, const T* __restrict__ bias, i64 total, i64 c,
                                   i64 hw) {
    RIDGELINE_GRID_STRIDE(i, total) {
        const i64 ch = (i / hw) % c;
        y[i] = Bias ? from_float<T>(to_float(x[i]) + to_float(bias[ch])) : from_float<T>(to_float(x[i]) * scale[ch] + shift[ch]);
    }
}

/// McCalpin's STREAM copy (c = a) and triad (a = b + s c) in float, 16 bytes per access, grid-stride.
__global__ void stream_copy_kernel(const float* __restrict__ a, float* __restrict__ c, vector_split s) {
    stream_unary(a, c, s, [](float v) { return v; });
}

__global__ void stream_triad_kernel(float* __restrict__ a, const float* __restrict__ b, const float* __restrict__ c,
                                    float scalar, vector_split s) {
    const i64 tid = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
    const i64 step = static_cast<i64>(blockDim.x) * gridDim.x;
    for (i64 i = tid; i < s.head; i += step) a[i] = b[i] + scalar * c[i];
    const auto* bv = reinterpret_cast<const float4*>(b + s.head);
    const auto* cv = reinterpret_cast<const float4*>(c + s.head);
    auto* av = reinterpret_cast<float4*>(a + s.head);
    for (i64 v = tid; v < s.vectors; v += step) {
        const float4 x = bv[v], y = cv[v];
        av[v] = make_float4(x.x + scalar * y.x, x.y + scalar * y.y, x.z + scalar * y.z, x.w + scalar * y.w);
    }
    const i64 t0 = s.head + s.vectors * s.width;
    for (i64 i = tid; i < s.tail; i += step) a[t0 + i] = b[t0 + i] + scalar * c[t0 + i];
}

// ------------------------------------------------------------------ reductions (one block per row)

/// Sum (or max) over the block; every thread gets the result. `scratch` holds 32 floats.
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
        v = lane < warps ? scratch[lane] : (Max ? -FLT_MAX : 0.0f);
        for (int o = 16; o > 0; o >>= 1) {
            const float other = __shfl_xor_sync(0xffffffffu, v, o);
            v = Max ? fmaxf(v, other) : v + other;
        }
        if (lane == 0) scratch[0] = v;
    }
    __syncthreads();
    return scratch[0];
}

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
        if (gamma) v = v * gamma[k] + beta[k];
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

__device__ long long global_ns() {
    long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
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

}  // namespace

namespace {

std::uint64_t address(const void* p) { return reinterpret_cast<std::uint64_t>(p); }

/// The 32-bit form of `map` for n elements, when every index and offset fits (fits_32_bits).
bool fast_map(const index_map& map, i64 n, fast_index_map& out) {
    if (!fits_32_bits(n, map.rank, map.dims, map.stride_a, map.stride_b)) return false;
    out.rank = map.rank;
    for (int d = 0; d < map.rank; ++d) {
        out.dims[d] = fast_divider(static_cast<std::uint32_t>(map.dims[d]));
        out.stride_a[d] = static_cast<std::uint32_t>(map.stride_a[d]);
        out.stride_b[d] = static_cast<std::uint32_t>(map.stride_b[d]);
    }
    return true;
}

/// y[n, c, :] = x * scale[c] + shift[c], or x + bias[c]: planes of at least a block's worth of vectors one per
/// block row, smaller ones element by element.
template <class T, bool Bias>
void launch_affine(const T* x, T* y, const float* scale, const float* shift, const T* bias, i64 n, i64 c, i64 hw,
                   cudaStream_t stream) {
    const i64 planes = n * c, total = planes * hw;
    const i64 width = vector_bytes / static_cast<i64>(sizeof(T));
    if (hw >= width * threads) {
        const i64 per_plane = (hw / width + threads - 1) / threads;  // blocks that cover one plane's vectors
        const dim3 grid(static_cast<unsigned>(std::min<i64>(per_plane, 1024)),
                        static_cast<unsigned>(std::min<i64>(planes, 65535)));
        plane_affine_kernel<T, Bias><<<grid, threads, 0, stream>>>(x, y, scale, shift, bias, planes, c, hw);
    } else if (total < (i64{1} << 31)) {
        flat_affine_fast_kernel<T, Bias><<<blocks_for(total), threads, 0, stream>>>(
            x, y, scale, shift, bias, static_cast<std::uint32_t>(total), fast_divider(static_cast<std::uint32_t>(c)),
            fast_divider(static_cast<std::uint32_t>(hw)));
    } else {
        flat_affine_kernel<T, Bias><<<blocks_for(total), threads, 0, stream>>>(x, y, scale, shift, bias, total, c, hw);
    }
}

}  // namespace

cudaError_t unary(elem t, unary_op op, float alpha, const void* x, void* y, i64 n, cudaStream_t stream) {
    if (n <= 0) return cudaSuccess;
    return dispatch(t, [&](auto tag) {
        using T = decltype(tag);
        const std::uint64_t others[1] = {address(y)};
        const vector_split s = split_for_vectors(address(x), n, sizeof(T), others, 1);
        unary_kernel<T><<<stream_blocks(s.vectors + s.head + s.tail), threads, 0, stream>>>(
            op, alpha, static_cast<const T*>(x), static_cast<T*>(y), s);
    });
}

cudaError_t binary(elem t, binary_op op, const void* a, const void* b, void* y, i64 n, const index_map* map,
                   cudaStream_t stream) {
    if (n <= 0) return cudaSuccess;
    return dispatch(t, [&](auto tag) {
        using T = decltype(tag);
        const auto* pa = static_cast<const T*>(a);
        const auto* pb = static_cast<const T*>(b);
        auto* py = static_cast<T*>(y);
        fast_index_map fast;
        if (!map) {
            const std::uint64_t others[2] = {address(b), address(y)};
            const vector_split s = split_for_vectors(address(a), n, sizeof(T), others, 2);
            binary_same_kernel<T><<<stream_blocks(s.vectors + s.head + s.tail), threads, 0, stream>>>(op, pa, pb, py, s);
        } else if (fast_map(*map, n, fast)) {
            binary_map_fast_kernel<T><<<blocks_for(n), threads, 0, stream>>>(op, pa, pb, py, static_cast<std::uint32_t>(n),
                                                                            fast);
        } else {
            binary_map_kernel<T><<<blocks_for(n), threads, 0, stream>>>(op, pa, pb, py, n, *map);
        }
    });
}

cudaError_t strided_copy(elem t, const void* src, void* dst, const index_map& map, i64 n, cudaStream_t stream) {
    if (n <= 0) return cudaSuccess;
    return dispatch(t, [&](auto tag) {
        using T = decltype(tag);
        fast_index_map fast;
        if (fast_map(map, n, fast))
            strided_copy_fast_kernel<T><<<blocks_for(n), threads, 0, stream>>>(
                static_cast<const T*>(src), static_cast<T*>(dst), static_cast<std::uint32_t>(n), fast);
        else
            strided_copy_kernel<T><<<blocks_for(n), threads, 0, stream>>>(static_cast<const T*>(src), static_cast<T*>(dst), n,
                                                                         map);
    });
}

cudaError_t bias_nchw(elem t, void* y, const void* bias, i64 n, i64 c, i64 hw, cudaStream_t stream) {
    if (n <= 0 || c <= 0 || hw <= 0) return cudaSuccess;
    return dispatch(t, [&](auto tag) {
        using T = decltype(tag);
        launch_affine<T, true>(static_cast<const T*>(y), static_cast<T*>(y), nullptr, nullptr, static_cast<const T*>(bias), n,
                               c, hw, stream);
    });
}

cudaError_t scale_shift_nchw(elem t, const void* x, void* y, const float* scale, const float* shift, i64 n, i64 c,
                             i64 hw, cudaStream_t stream) {
    if (n <= 0 || c <= 0 || hw <= 0) return cudaSuccess;
    return dispatch(t, [&](auto tag) {
        using T = decltype(tag);
        launch_affine<T, false>(static_cast<const T*>(x), static_cast<T*>(y), scale, shift, nullptr, n, c, hw, stream);
    });
}

cudaError_t stream_copy(const float* a, float* c, i64 n, cudaStream_t stream) {
    if (n <= 0) return cudaSuccess;
    const std::uint64_t others[1] = {address(c)};
    const vector_split s = split_for_vectors(address(a), n, sizeof(float), others, 1);
    stream_copy_kernel<<<stream_blocks(s.vectors + s.head + s.tail), threads, 0, stream>>>(a, c, s);
    return cudaGetLastError();
}

cudaError_t stream_triad(float* a, const float* b, const float* c, float scalar, i64 n, cudaStream_t stream) {
    if (n <= 0) return cudaSuccess;
    const std::uint64_t others[2] = {address(b), address(c)};
    const vector_split s = split_for_vectors(address(a), n, sizeof(float), others, 2);
    stream_triad_kernel<<<stream_blocks(s.vectors + s.head + s.tail), threads, 0, stream>>>(a, b, c, scalar, s);
    return cudaGetLastError();
}

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

cudaError_t empty(cudaStream_t stream) {
    empty_kernel<<<1, 1, 0, stream>>>();
    return cudaGetLastError();
}

cudaError_t clock_probe(cudaStream_t stream, long long cycles, long long* cycles_out) {
    clock_probe_kernel<<<1, 1, 0, stream>>>(cycles, cycles_out);
    return cudaGetLastError();
}

}  // namespace ridgeline::cuda::kernels
