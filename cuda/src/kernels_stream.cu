// The backend's streaming kernels (declared in kernels.hpp): unary, binary, strided copies, bias and
// scale_shift, and McCalpin's STREAM copy and triad. They load and store 16 bytes at a time with a scalar head and
// tail (index_math.hpp's vector_split), two vectors per thread per step, on one wave of the blocks that fit at once (by each kernel's occupancy); their
// index maps divide by launch-time divisors with a multiply and a shift (fast_divider) whenever every index fits
// in 31 bits, and fall back to 64-bit arithmetic otherwise.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <utility>

#include "index_math.hpp"
#include "kernel_common.cuh"
#include "kernels.hpp"

namespace ridgeline::cuda::kernels {

using namespace detail;

namespace {

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
        case unary_op::hardswish: return v != v ? v : v * fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) * (1.0f / 6.0f);
        case unary_op::hardsigmoid: return v != v ? v : fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) * (1.0f / 6.0f);
        case unary_op::silu: return v / (1.0f + expf(-v));
        case unary_op::erf: return erff(v);
        case unary_op::sqrt: return sqrtf(v);
        case unary_op::exp: return expf(v);
        case unary_op::neg: return -v;
        case unary_op::pow: return powf(v, alpha);
    }
    return v;
}

__device__ __forceinline__ float apply(binary_op op, float a, float b) {
    switch (op) {
        case binary_op::add: return a + b;
        case binary_op::mul: return a * b;
        case binary_op::sub: return a - b;
        case binary_op::div: return a / b;
    }
    return a;
}

/// 16 bytes of T: one vector load or store (ld.global.v4 / st.global.v4).
template <class T>
struct alignas(vector_bytes) pack {
    T v[vector_bytes / sizeof(T)];
};

/// Blocks for the streaming kernel `kernel` over `work` items (vectors): one wave of as many blocks of 256 as can
/// be resident at once on the current device (stream_grid: cudaOccupancyMaxActiveBlocksPerMultiprocessor for this
/// kernel, asked once per device and kernel), fewer for small work; each thread then walks its items
/// grid-stride, two per step.
unsigned stream_blocks(const void* kernel, i64 work) {
    static std::mutex mutex;
    static std::map<std::pair<int, const void*>, std::pair<int, int>> known;  // (device, kernel) -> (per SM, SMs)
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) dev = -1;
    std::pair<int, int> fit;
    {
        const std::lock_guard<std::mutex> lock(mutex);
        auto it = known.find({dev, kernel});
        if (it == known.end()) {
            int per_sm = 0, sms = 0;
            if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0) != cudaSuccess) per_sm = 1;
            if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) sms = 1;
            (void)cudaGetLastError();  // a failed query leaves no error for the launch's check
            it = known.emplace(std::make_pair(dev, kernel), std::make_pair(per_sm, sms)).first;
        }
        fit = it->second;
    }
    return static_cast<unsigned>(stream_grid(work, threads, fit.first, fit.second));
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

__global__ void stream_read_kernel(const float* __restrict__ a, vector_split s, float* sink) {
    const i64 tid = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
    const i64 step = static_cast<i64>(blockDim.x) * gridDim.x;
    float acc = 0.0f;
    for (i64 i = tid; i < s.head; i += step) acc += a[i];
    const auto* av = reinterpret_cast<const float4*>(a + s.head);
    for (i64 v = tid; v < s.vectors; v += 2 * step) {
        const float4 x = av[v];
        const float4 y = v + step < s.vectors ? av[v + step] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        acc += (x.x + x.y) + (x.z + x.w) + (y.x + y.y) + (y.z + y.w);
    }
    const i64 tail0 = s.head + 4 * s.vectors;
    for (i64 i = tail0 + tid; i < tail0 + s.tail; i += step) acc += a[i];
    if (acc == -1.5e-45f) *sink = acc;  // never true for sums of the data ridgeline fills; the loads must happen
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
        const unsigned blocks = stream_blocks(reinterpret_cast<const void*>(&unary_kernel<T>), s.vectors + s.head + s.tail);
        unary_kernel<T><<<blocks, threads, 0, stream>>>(
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
            binary_same_kernel<T><<<stream_blocks(reinterpret_cast<const void*>(&binary_same_kernel<T>),
                                                   s.vectors + s.head + s.tail), threads, 0, stream>>>(op, pa, pb, py, s);
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
    const unsigned blocks = stream_blocks(reinterpret_cast<const void*>(&stream_copy_kernel), s.vectors + s.head + s.tail);
    stream_copy_kernel<<<blocks, threads, 0, stream>>>(a, c, s);
    return cudaGetLastError();
}

cudaError_t stream_triad(float* a, const float* b, const float* c, float scalar, i64 n, cudaStream_t stream) {
    if (n <= 0) return cudaSuccess;
    const std::uint64_t others[2] = {address(b), address(c)};
    const vector_split s = split_for_vectors(address(a), n, sizeof(float), others, 2);
    stream_triad_kernel<<<stream_blocks(reinterpret_cast<const void*>(&stream_triad_kernel), s.vectors + s.head + s.tail),
                          threads, 0, stream>>>(a, b, c, scalar, s);
    return cudaGetLastError();
}

cudaError_t stream_read(const float* a, i64 n, float* sink, cudaStream_t stream) {
    if (n <= 0) return cudaSuccess;
    const vector_split s = split_for_vectors(address(a), n, sizeof(float), nullptr, 0);
    const unsigned blocks = stream_blocks(reinterpret_cast<const void*>(&stream_read_kernel), s.vectors + s.head + s.tail);
    stream_read_kernel<<<blocks, threads, 0, stream>>>(a, s, sink);
    return cudaGetLastError();
}

}  // namespace ridgeline::cuda::kernels
