#pragma once
// The backend's own CUDA kernels (kernels.cu): the ops cuBLAS and cuDNN do not cover the way PyTorch
// defines them, plus the empty kernel of the launch-overhead ceiling. Each launcher enqueues on `stream`
// and returns the launch's cudaError_t (cudaGetLastError after the launch) for the caller to check; a
// launcher with no work (n == 0) launches nothing and returns cudaSuccess.
//
// Element types: activations and weights in the storage type (f32 for fp32 and tf32, f16, bf16),
// normalisation parameters always in float, arithmetic always in float. Indices are 32-bit where every index
// and offset of a launch fits in 31 bits, 64-bit otherwise (index_math.hpp).
// Semantics follow the reference loops (cpu/src/reference.cpp) operation for operation.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace ridgeline::cuda::kernels {

enum class elem : int { f32, f16, bf16 };
enum class unary_op : int {
    relu, relu6, gelu_erf, gelu_tanh, tanh, sigmoid, scale, hardswish, hardsigmoid, silu, erf, sqrt, exp, neg, pow
};
enum class binary_op : int { add, mul, sub, div };
enum class reduce_op : int { sum, mean, max };

inline constexpr int max_rank = 8;

/// Row-major walk over `dims` (the output); element i of the output reads offset sum_d index_d * stride_x[d]
/// of operand x. Unused dims: size 1.
struct index_map {
    int rank = 0;
    std::int64_t dims[max_rank] = {};
    std::int64_t stride_a[max_rank] = {};
    std::int64_t stride_b[max_rank] = {};
};

/// 2-D pooling over planes (N x C) of in_h x in_w, as translate.hpp's pool_params.
struct pool_geometry {
    std::int64_t planes = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
    std::int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
    std::int64_t pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
    bool count_include_pad = true;
};

/// y[i] = op(x[i]) for i < n (`alpha`: the factor of scale, the exponent of pow).
cudaError_t unary(elem t, unary_op op, float alpha, const void* x, void* y, std::int64_t n, cudaStream_t stream);

/// y[i] = a[i] op b[i] (map == nullptr: same shapes), or with the offsets of `map` (broadcasting).
cudaError_t binary(elem t, binary_op op, const void* a, const void* b, void* y, std::int64_t n, const index_map* map,
                   cudaStream_t stream);

/// y[o] = the sum, mean or max (NaN propagating) of the red_n inputs of output o: out_map.dims are the output's
/// dims with out_map.stride_a the input strides of the kept dimensions; red_map walks the reduced ones the same way.
cudaError_t reduce(elem t, reduce_op op, const void* x, void* y, std::int64_t out_n, const index_map& out_map,
                   std::int64_t red_n, const index_map& red_map, cudaStream_t stream);

/// dst[i] = src[offset of i through map.stride_a]: a strided view made dense.
cudaError_t strided_copy(elem t, const void* src, void* dst, const index_map& map, std::int64_t n, cudaStream_t stream);

/// y[n, c, :] += bias[c] over an NCHW tensor (hw = H x W); bias in the storage type.
cudaError_t bias_nchw(elem t, void* y, const void* bias, std::int64_t n, std::int64_t c, std::int64_t hw,
                      cudaStream_t stream);

/// y[n, c, :] = x[n, c, :] * scale[c] + shift[c] (BatchNorm in inference folded on the host).
cudaError_t scale_shift_nchw(elem t, const void* x, void* y, const float* scale, const float* shift, std::int64_t n,
                             std::int64_t c, std::int64_t hw, cudaStream_t stream);

/// torch.nn.LayerNorm over the last `inner` elements of each of `rows` rows; gamma/beta may be null.
cudaError_t layer_norm(elem t, const void* x, void* y, const float* gamma, const float* beta, std::int64_t rows,
                       std::int64_t inner, float eps, cudaStream_t stream);

/// softmax over the middle dim of [outer, size, inner].
cudaError_t softmax(elem t, const void* x, void* y, std::int64_t outer, std::int64_t size, std::int64_t inner,
                    cudaStream_t stream);

cudaError_t max_pool(elem t, const void* x, void* y, const pool_geometry& g, cudaStream_t stream);
cudaError_t avg_pool(elem t, const void* x, void* y, const pool_geometry& g, cudaStream_t stream);
cudaError_t adaptive_avg_pool(elem t, const void* x, void* y, const pool_geometry& g, cudaStream_t stream);

/// y[i, :] = table[ids[i], :] for i < count, rows of `dim` elements (copied in the storage type).
cudaError_t embedding(elem t, const std::int64_t* ids, const void* table, void* y, std::int64_t count, std::int64_t dim,
                      cudaStream_t stream);

/// Copies planes of h x w into the interior of planes of hp x wp at (top, left); the border is left as is
/// (zeroed once when the buffer is made).
cudaError_t pad_copy(elem t, const void* x, void* y, std::int64_t planes, std::int64_t h, std::int64_t w,
                     std::int64_t hp, std::int64_t wp, std::int64_t top, std::int64_t left, cudaStream_t stream);

/// torch.where: y[i] = c[.] > 0 ? a[.] : b[.] over `dims` (the output, row-major), each operand read through its own
/// broadcast strides (0 on a broadcast dimension).
struct select_map {
    int rank = 0;
    std::int64_t dims[max_rank] = {};
    std::int64_t stride_c[max_rank] = {};
    std::int64_t stride_a[max_rank] = {};
    std::int64_t stride_b[max_rank] = {};
};
cudaError_t select(elem t, const void* c, const void* a, const void* b, void* y, std::int64_t n, const select_map& m,
                   cudaStream_t stream);

/// A gather through per-dimension tables (pad, nearest interpolation): output element (i_0, ..., i_{rank-1}) of
/// dims `dims` reads x at sum_d table[start[d] + i_d] (element offsets), or is `fill` where any entry is -1.
struct gather_tables {
    int rank = 0;
    std::int64_t dims[max_rank] = {};
    std::int64_t start[max_rank] = {};
};
cudaError_t index_gather(elem t, const void* x, void* y, std::int64_t n, const gather_tables& g,
                         const std::int64_t* table, float fill, cudaStream_t stream);

/// Bilinear interpolation of planes of ih x iw to oh x ow: rows[r] and rows[oh + r] are output row r's two source
/// rows, weighted 1 - row_lambda[r] and row_lambda[r]; cols likewise (ATen's upsample_bilinear2d).
cudaError_t bilinear(elem t, const void* x, void* y, std::int64_t planes, std::int64_t ih, std::int64_t iw,
                     std::int64_t oh, std::int64_t ow, const std::int64_t* rows, const std::int64_t* cols,
                     const float* row_lambda, const float* col_lambda, cudaStream_t stream);

/// The transformer layers (kernels_attention.cu). RMSNorm over the last `inner` elements of each row (gamma may be
/// null); rotate-half RoPE of `rows` rows of `dim` (row r is token r % seq), cos and sin tables [seq, dim] in float.
cudaError_t rms_norm(elem t, const void* x, void* y, const float* gamma, std::int64_t rows, std::int64_t inner,
                     float eps, cudaStream_t stream);
cudaError_t rotary(elem t, const void* x, void* y, const float* cos, const float* sin, std::int64_t rows,
                   std::int64_t seq, std::int64_t dim, cudaStream_t stream);
/// Attention's scores [groups, rows, skv] (float; a group is a (batch, kv head), its rows the query heads it serves
/// times sq queries) -> probabilities in the storage type: the causal bound and window of core::attention::keeps,
/// an additive float mask [B, H, Sq, Skv] read through `stride` (0 on a broadcast dimension), a softmax per row.
struct attention_mask {
    std::int64_t groups = 0, rows = 0, sq = 0, skv = 0, kv_heads = 1;
    bool causal = false;
    std::int64_t window = 0;
    const float* mask = nullptr;
    std::int64_t stride[4] = {};
};
cudaError_t attention_softmax(elem t, const float* scores, void* probs, const attention_mask& m, cudaStream_t stream);

/// y[i] = a hash of (seed, i) mapped to [-1, 1): non-trivial inputs for the ceilings' GEMMs and copies
/// (zeros would let the hardware save power and run faster than on real data).
cudaError_t fill_random(elem t, void* y, std::int64_t n, std::uint32_t seed, cudaStream_t stream);

/// McCalpin's STREAM copy c[i] = a[i] and triad a[i] = b[i] + scalar * c[i] over n floats, 16 bytes per access,
/// a few blocks per SM walking grid-stride: the DRAM roof measured by a kernel, beside the driver's device copy
/// (bytes moved: index_math.hpp's stream_bytes).
cudaError_t stream_copy(const float* a, float* c, std::int64_t n, cudaStream_t stream);
cudaError_t stream_triad(float* a, const float* b, const float* c, float scalar, std::int64_t n, cudaStream_t stream);
/// STREAM read: every float of a[0, n) loaded (16 bytes at a time) and summed per thread; nothing is written but
/// `*sink`, and only where a thread's sum is one impossible value (so the loads cannot be dropped). The DRAM roof
/// of read-heavy layers, and the L2 flush: reading twice the L2 leaves it full of clean lines, where a memset
/// left dirty ones for the timed run to write back.
cudaError_t stream_read(const float* a, std::int64_t n, float* sink, cudaStream_t stream);

/// The CUDA cores' FMA peak of element type `t` (what non-matrix work runs on: softmax, norms, elementwise): `blocks`
/// of 256 threads, each running fma_chains independent chains of `iters` fused multiply-adds, on float (FFMA) or
/// pairs of halves / bfloat16s (HFMA2). Writes nothing but `*sink`, and only for an impossible sum.
inline constexpr int fma_chains = 8;
cudaError_t fma_peak(elem t, int blocks, int iters, float* sink, cudaStream_t stream);
/// The FLOPs one fma_peak launch executes: blocks x 256 x iters x fma_chains x 2 (multiply and add) x lanes (1 for
/// float, 2 for half2 and bfloat162).
std::int64_t fma_peak_flops(elem t, int blocks, int iters);

/// A kernel that does nothing, one block of one thread: the launch-overhead ceiling.
cudaError_t empty(cudaStream_t stream);
/// Writes the global timer (ns) to out[0] and SM 0's clock64() to out[1] from a block on SM 0 (`sms` blocks of
/// one thread: one lands there); out is host memory mapped for the device (cudaHostAllocMapped). Two of them
/// around a sample give the SM clock over the sample (the disturbance meter's throttle check, nvbench's method).
cudaError_t sm0_timestamps(unsigned long long* out, int sms, cudaStream_t stream);
/// One thread that spins until its SM's clock64() has advanced `cycles`, then writes the cycles it counted and
/// the nanoseconds the global timer (%globaltimer) advanced meanwhile to out[0] and out[1]: their ratio is the
/// SM clock at that moment, with no launch latency in it (the disturbance meter's throttle probe).
cudaError_t clock_probe(cudaStream_t stream, long long cycles, long long* out);

}  // namespace ridgeline::cuda::kernels
