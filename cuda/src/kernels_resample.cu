// The selection and resampling copies' kernels (declared in kernels.hpp): where (select); pad and nearest
// interpolation as a gather through one
// table of source offsets per output dimension, bilinear interpolation through per-axis tables. The tables are
// computed on the host (core::resample_coordinates for interpolate), the same ones the CPU backend uses.
#include "kernel_common.cuh"
#include "kernels.hpp"

namespace ridgeline::cuda::kernels {

using namespace detail;

namespace {

template <class T>
__global__ void index_gather_kernel(const T* __restrict__ x, T* __restrict__ y, i64 n, gather_tables g,
                                    const i64* __restrict__ table, float fill) {
    RIDGELINE_GRID_STRIDE(i, n) {
        i64 rem = i, src = 0;
        bool outside = false;
        for (int d = g.rank - 1; d >= 0; --d) {
            const i64 t = table[g.start[d] + rem % g.dims[d]];
            rem /= g.dims[d];
            outside = outside || t < 0;
            src += t;
        }
        y[i] = outside ? from_float<T>(fill) : x[src];
    }
}

template <class T>
__global__ void bilinear_kernel(const T* __restrict__ x, T* __restrict__ y, i64 planes, i64 ih, i64 iw, i64 oh, i64 ow,
                                const i64* __restrict__ rows, const i64* __restrict__ cols,
                                const float* __restrict__ row_lambda, const float* __restrict__ col_lambda) {
    // rows: index0 then index1 (2 * oh entries); cols likewise (2 * ow)
    RIDGELINE_GRID_STRIDE(i, planes * oh * ow) {
        const i64 c = i % ow, r = (i / ow) % oh, p = i / (ow * oh);
        const T* xs = x + p * ih * iw;
        const float h1 = row_lambda[r], h0 = 1.0f - h1, w1 = col_lambda[c], w0 = 1.0f - w1;
        const T* a = xs + rows[r] * iw;
        const T* b = xs + rows[oh + r] * iw;
        const i64 c0 = cols[c], c1 = cols[ow + c];
        y[i] = from_float<T>(h0 * (w0 * to_float(a[c0]) + w1 * to_float(a[c1])) +
                             h1 * (w0 * to_float(b[c0]) + w1 * to_float(b[c1])));
    }
}

template <class T>
__global__ void select_kernel(const T* __restrict__ c, const T* __restrict__ a, const T* __restrict__ b,
                              T* __restrict__ y, i64 n, select_map m) {
    RIDGELINE_GRID_STRIDE(i, n) {
        i64 rem = i, oc = 0, oa = 0, ob = 0;
        for (int d = m.rank - 1; d >= 0; --d) {
            const i64 k = rem % m.dims[d];
            rem /= m.dims[d];
            oc += k * m.stride_c[d];
            oa += k * m.stride_a[d];
            ob += k * m.stride_b[d];
        }
        y[i] = to_float(c[oc]) > 0.0f ? a[oa] : b[ob];
    }
}

}  // namespace

cudaError_t select(elem t, const void* c, const void* a, const void* b, void* y, i64 n, const select_map& m,
                   cudaStream_t stream) {
    if (n <= 0) return cudaSuccess;
    return dispatch(t, [&](auto tag) {
        using T = decltype(tag);
        select_kernel<T><<<blocks_for(n), threads, 0, stream>>>(static_cast<const T*>(c), static_cast<const T*>(a),
                                                               static_cast<const T*>(b), static_cast<T*>(y), n, m);
    });
}

cudaError_t index_gather(elem t, const void* x, void* y, i64 n, const gather_tables& g, const i64* table, float fill,
                         cudaStream_t stream) {
    if (n <= 0) return cudaSuccess;
    return dispatch(t, [&](auto tag) {
        using T = decltype(tag);
        index_gather_kernel<T><<<blocks_for(n), threads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n, g,
                                                                     table, fill);
    });
}

cudaError_t bilinear(elem t, const void* x, void* y, i64 planes, i64 ih, i64 iw, i64 oh, i64 ow, const i64* rows,
                     const i64* cols, const float* row_lambda, const float* col_lambda, cudaStream_t stream) {
    const i64 n = planes * oh * ow;
    if (n <= 0) return cudaSuccess;
    return dispatch(t, [&](auto tag) {
        using T = decltype(tag);
        bilinear_kernel<T><<<blocks_for(n), threads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), planes, ih,
                                                                 iw, oh, ow, rows, cols, row_lambda, col_lambda);
    });
}

}  // namespace ridgeline::cuda::kernels
