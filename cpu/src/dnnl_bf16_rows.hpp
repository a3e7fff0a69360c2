#pragma once
// ridgeline's bf16 row kernels for AVX-512 BF16 (rms_norm's rows and rotary's (batch, head) slabs,
// dnnl_graph_attention.cpp): 16 bf16 values widened to float32 by a shift, the arithmetic in float32, the results
// rounded back by one instruction (vcvtneps2bf16: round to nearest even, NaN kept a quiet NaN, as oneDNN's bf16
// kernels round; unlike the portable loop it flushes float32 subnormals to zero, as oneDNN's kernels do). The portable
// loops (RIDGELINE_LOOP_CLONES, dnnl_loops.hpp) round with integer arithmetic, several instructions a value, and GCC
// 12 vectorises them at 256 bits: bf16 rms_norm ran at 37% of its DRAM roof and rotary at 31% on the Zen 4 VM, where
// float32 ran at 79% and 70% (docs/performance.md). CPUs without AVX-512 BF16 (asked once, at run time), and builds
// by other compilers than GCC on x86-64, run the portable loops. Private to cpu/.
#include <cstdint>

namespace ridgeline::cpu::dnnl_detail {

/// Whether the kernels below run: the CPU has AVX-512F, BW, VL and BF16 and the process setting allows it. The
/// setting is true by default; tests set it to false to compare both paths on the same CPU.
bool bf16_rows_vectorised();
bool& bf16_rows_allowed();

/// One row of rms_norm in bf16: y[i] = x[i] * (1 / sqrt(sum(x^2) / inner + eps)) * w[i] (without w where it is null;
/// the statistics in float32, as LlamaRMSNorm), `inner` values, y streamed where `stream` (write_run). Returns false
/// having written nothing where !bf16_rows_vectorised(). The caller's thread calls stream_fence() before its parallel
/// region ends.
bool rms_row_bf16(const std::uint16_t* x, std::uint16_t* y, const float* w, std::int64_t inner, float eps,
                  bool stream);

/// Rotate-half RoPE over the `rows` rows of one (batch, head) in bf16: row s of x at x + s * row_stride (its `dim`
/// values contiguous), y dense [rows, dim], cos and sin float32 [rows, dim] (the tables' rows from the slab's first):
/// y[i] = x[i] c[i] - x[i + dim/2] s[i] in the first half, x[i] c[i] + x[i - dim/2] s[i] in the second. The slab is
/// written as one run (write_run, streamed where `stream`), so that its lines stay whole across rows of 128 values.
/// Returns false having written nothing where !bf16_rows_vectorised(). The caller's thread fences as above.
bool rotary_slab_bf16(const std::uint16_t* x, std::int64_t row_stride, std::uint16_t* y, const float* cos,
                      const float* sin, std::int64_t rows, std::int64_t dim, bool stream);

}  // namespace ridgeline::cpu::dnnl_detail
