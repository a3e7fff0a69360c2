#pragma once
// What a GPU attains, op class by op class: the time a layer would take on a GPU predicted from the GPU's own
// figures, not from the fraction of its roofs the layer reached on a device of another class (a CPU's fraction is
// not a GPU's: oneDNN reaches ~90% of a CPU's FMA peak on a large GEMM, a CPU's elementwise loop a small part of its
// DRAM roof, where a GPU's elementwise kernels reach most of the HBM roof). docs/roofline.md, "Predicting another
// class of device", has the models and the source of every constant.
//
// The classes, each plus one kernel launch (launch_ms):
//   gemm      linear, matmul, conv2d (as the implicit GEMM cuDNN runs): tiles over the output, waves of tiles over
//             the SMs (the wave quantisation that makes 4,096 tiles on 132 SMs take 32 waves, not 31.03), split-K
//             where the tiles do not fill the SMs; never faster than its bytes at the attained bandwidth.
//   stream    elementwise, normalisation, softmax, reductions, gathers, copies: its bytes at the attained bandwidth
//             (one read and one write of what the layer counts; the fused row kernels of PyTorch and cuDNN).
//   attention a fused flash-attention kernel where the dtype and architecture have one (FlashAttention-2: fp16 and
//             bf16 on sm80 and later) at its attained fraction of the matrix peak over the executed query-key pairs;
//             otherwise the math path PyTorch runs: the q k^T GEMM, the scores scaled and masked, softmax, the GEMM
//             with v, each a kernel.
//   view      reshape, transpose, ...: no kernel, no time.

#include <cstdint>
#include <string>
#include <vector>

#include "ridgeline/core/cost.hpp"
#include "ridgeline/core/datasheet.hpp"
#include "ridgeline/core/dtype.hpp"
#include "ridgeline/core/layer.hpp"
#include "ridgeline/core/ops.hpp"
#include "ridgeline/core/shape.hpp"

namespace ridgeline::core {

/// The figures of one GPU the models need, in the units of its datasheet.
struct gpu_spec {
    std::string name;
    int sms = 0;                 // streaming multiprocessors
    double matrix_gflops = 0;    // the peak of the layer's dtype for matrix work (tensor cores; fp32: CUDA cores)
    double vector_gflops = 0;    // the CUDA cores' fp32 peak
    double memory_gbs = 0;       // the memory bandwidth
    double gemm_fraction = 0;    // of matrix_gflops a large GEMM attains
    double memory_fraction = 0;  // of memory_gbs a streaming kernel attains
    double launch_ms = 0;        // one kernel launched through a library
    bool flash_attention = false;  // a fused attention kernel exists for this dtype and architecture
    double flash_fraction = 0;     // of matrix_gflops it attains over the executed pairs
};

/// A large GEMM's attained fraction of the dense datasheet peak: 0.80. Measured in this workplace (the device tool's
/// KINDS.md): an 8192^3 bf16 product through PyTorch at 798 TFLOP/s on an H100 SXM (0.81 of 989.5) and 769-798 on an
/// H200 (0.78-0.81); FlashAttention-2's paper (T. Dao, arXiv:2307.08691, section 1): "optimized GEMM can reach up to
/// 80-90% of the theoretical maximum device throughput" (A100).
inline constexpr double gpu_gemm_fraction = 0.80;
/// A streaming kernel's attained fraction of the datasheet bandwidth: 0.90. Measured in this workplace (KINDS.md): a
/// device-to-device copy at about 3.0 TB/s on an H100 SXM (3.35 datasheet) and 4.3 TB/s on an H200 (4.8).
inline constexpr double gpu_memory_fraction = 0.90;
/// FlashAttention-2's attained fraction of the matrix peak: 0.60 on Ampere and Ada ("50-73% of the theoretical
/// maximum FLOPs/s on A100", T. Dao, arXiv:2307.08691, abstract), 0.35 on Hopper ("FlashAttention-2 achieving only
/// 35% utilization on the H100", J. Shah et al., FlashAttention-3, arXiv:2407.08608, abstract).
inline constexpr double flash_fraction_ampere = 0.60;
inline constexpr double flash_fraction_hopper = 0.35;

/// A datasheet GPU's figures for layers in `dt`: the peak of `dt` for matrix work (fp32: the CUDA cores), the fp32
/// CUDA-core peak, the bandwidth, the attained fractions above, one launch of `launch_ms`, and FlashAttention-2 for
/// fp16 and bf16 from compute capability 8.0 (Hopper's fraction from 9.0). `sms` 0 where the entry has none (a CPU).
gpu_spec gpu_spec_of(const datasheet_entry& e, dtype dt, double launch_ms);

/// The relative error given to an op-class model's time (its interval: time / 1.5 to time x 1.5): assumed, not
/// measured. No GPU has run ridgeline's predictions yet; the GPU issue's run measures it (docs/roofline.md).
inline constexpr double class_model_error = 0.5;

/// A GEMM: `batch` independent products of an m x k by a k x n matrix.
struct gemm_dims {
    std::int64_t batch = 1, m = 0, n = 0, k = 0;
};

/// A layer's time on a GPU by its class's model.
struct gpu_estimate {
    double time_ms = 0;     // launches plus the larger of compute and memory
    double compute_ms = 0;  // the tiles' waves (gemm, attention), 0 for a stream
    double memory_ms = 0;   // the bytes at the attained bandwidth
    int kernels = 1;        // launches
    std::string model;      // "gemm", "stream", "flash attention", "attention math path", "view"
    std::string detail;     // one line: the tiles and waves, or the bytes
};

/// The most rows a GEMM's product may have to run as a small-M kernel: 16. Derived: the smallest tensor-core MMA
/// instruction is 16 rows deep (PTX ISA, "Matrix shape": mma.m16n8k16), so up to 16 rows fill one MMA without
/// padding, and cuBLAS picks dedicated kernels for such skinny products (a decode step's projections, M = the batch)
/// rather than the 64- to 256-row tiles of large GEMMs; their time is the weights' bytes, read once. Not measured:
/// the GPU issue's run checks it.
inline constexpr std::int64_t gpu_small_m_rows = 16;

/// A GEMM's time: at most gpu_small_m_rows rows (m) per product, a small-M kernel: its FLOPs at gemm_fraction of the
/// matrix peak, no tile padding. Otherwise, for each tile shape of 256x128, 128x256, 128x128, 128x64, 64x128 and 64x64 (the threadblock
/// shapes CUTLASS's and cuBLAS's kernels use), tiles = batch x ceil(m / tm) x ceil(n / tn); where they do not fill the
/// SMs the k dimension is split (split-K: at most sms / tiles ways, at least 128 of k each); waves = ceil(tiles x split
/// / sms); a tile's time = 2 tm tn (k / split) / (the SM's share of gemm_fraction x matrix_gflops x e), e = min(1,
/// tm tn / (tm + tn) / 64): derived, a tile's operand reuse per loaded element tm tn / (tm + tn) relative to the
/// 128x128 tile's 64, the smallest tile CUTLASS's large-GEMM configurations use. The fastest shape is taken (as a
/// library's heuristic picks one). Either way never below `bytes` at memory_fraction x memory_gbs; where the bytes take
/// longer, the detail says "its bytes decide".
gpu_estimate gemm_on_gpu(const gemm_dims& g, double bytes, const gpu_spec& s);

/// A streaming kernel's time: launch + bytes / (memory_fraction x memory_gbs).
gpu_estimate stream_on_gpu(double bytes, const gpu_spec& s);

/// The time of one layer of op `o` (its input shapes, output shape, dtype and cost as counted) on the GPU `s`, by
/// its class. Throws nothing; an op it has no class for is a stream of its bytes.
gpu_estimate estimate_on_gpu(const op& o, const std::vector<shape>& inputs, const shape& output, dtype dt,
                             const cost& c, const gpu_spec& s);

}  // namespace ridgeline::core
