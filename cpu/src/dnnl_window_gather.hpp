#pragma once
// Vectorised table gathers for ridgeline's own resampling loops (dnnl_graph_resample.cpp): nearest interpolation's
// element gathers, bilinear's two taps along the width and its blend of two rows (blend_rows). An element-by-element
// gather out[j] = src[index[j]] runs scalar (one load and one store an element: about a third of the DRAM roof on the
// Zen 4 VM, docs/performance.md), but where the sources of 16 consecutive outputs lie within 32 consecutive source
// elements (every upsampling, and downsampling by less than 2), the block is one masked load of that window and one
// permute: AVX-512F's vmovdqu32 {k}{z} and vpermt2d (2-byte elements: AVX-512BW's vmovdqu16 {k}{z} and vpermw). Blocks that do not fit (larger jumps, fill entries) and the CPUs
// without AVX-512F run the scalar loop, with the same results bit for bit (the bilinear blend without fused
// multiply-adds: this file is compiled with -ffp-contract=off). Private to cpu/.
#include <cstdint>
#include <vector>

namespace ridgeline::cpu::dnnl_detail {

/// The innermost index tables of a gather cut into blocks of `lanes` outputs, block k holding outputs
/// [k * lanes, (k + 1) * lanes). A block is windowed when every table's entries in it are >= 0 and within `window`
/// elements of the block's smallest entry: base[k] that entry, rel its entries' offsets from it (tables * lanes a
/// block, table t's first), reads[k] the bit mask of the window's elements any entry reads (bit i: base + i). A block
/// that is not windowed has base[k] = -1. The last, partial block is never windowed.
struct window_blocks {
    static constexpr std::int64_t lanes = 16, window = 32;
    std::int64_t tables = 0;
    std::vector<std::int64_t> base;
    std::vector<std::int32_t> rel;
    std::vector<std::uint32_t> reads;
};

/// The blocks of `tables.size()` index tables of `n` entries each (entries: source element offsets, -1 for a fill).
window_blocks make_window_blocks(const std::vector<const std::int64_t*>& tables, std::int64_t n);

/// Whether the windowed blocks run vectorised: the CPU has AVX-512F (asked at run time) and the process setting
/// allows it. The setting is true by default; tests set it to false to compare both paths on the same CPU.
bool window_gather_vectorised();
bool& window_gather_allowed();

/// out[j - j0] = src[index[j]] for j in [j0, j1), 4-byte elements (float32, int32 bit patterns); `w` made from
/// {index} over the whole table. No entry of index[j0, j1) may be -1.
void gather_u32(const std::uint32_t* src, const std::int64_t* index, const window_blocks& w, std::uint32_t* out,
                std::int64_t j0, std::int64_t j1);

/// gather_u32 for 2-byte elements (bf16, fp16): its windowed blocks vectorised where
/// window_gather_u16_vectorised() (AVX-512BW's word permute), the rest a scalar loop unrolled 4x.
void gather_u16(const std::uint16_t* src, const std::int64_t* index, const window_blocks& w, std::uint16_t* out,
                std::int64_t j0, std::int64_t j1);
bool window_gather_u16_vectorised();

/// out[c - c0] = (1 - w1[c]) * a[i0[c]] + w1[c] * a[i1[c]] for c in [c0, c1) (bilinear along a row, PyTorch's
/// order of operations); `w` made from {i0, i1} over the whole table.
void lerp_gather(const float* a, const std::int64_t* i0, const std::int64_t* i1, const float* w1,
                 const window_blocks& w, float* out, std::int64_t c0, std::int64_t c1);

/// lerp_gather from a bf16 source, each element widened to float32 (exactly) before the same arithmetic, so the same
/// float32 values as lerp_gather of the widened row; its windowed blocks vectorised where
/// window_gather_u16_vectorised() (one masked load of the window, widened in registers).
void lerp_gather(const std::uint16_t* a, const std::int64_t* i0, const std::int64_t* i1, const float* w1,
                 const window_blocks& w, float* out, std::int64_t c0, std::int64_t c1);

/// y[c] = h0 * a[c] + h1 * b[c] for c in [0, n): bilinear's blend of two resampled source rows (two products
/// rounded, then their sum: the scalar loop's order, so the same values), with `stream` through non-temporal stores
/// from y's first 64-byte boundary to the last whole vector (AVX-512's vmovntps straight from the registers, no L1
/// buffer; the elements before and after by masked plain stores, so no line takes both kinds). Vectorised where
/// window_gather_vectorised(); elsewhere returns false having written nothing (the caller blends it itself). The
/// caller's thread calls stream_fence() before its parallel region ends.
bool blend_rows(const float* a, const float* b, float h0, float h1, float* y, std::int64_t n, bool stream);

/// blend_rows into bf16 output: the same float32 blend, each value rounded to bf16 once (to nearest even, by AVX-512
/// BF16's vcvtneps2bf16, which flushes float32 subnormals to zero as oneDNN's conversions do), streamed as above.
/// Runs where window_gather_vectorised() and the CPU has AVX-512BW, VL and BF16; elsewhere returns false having
/// written nothing (the caller blends and rounds itself, f32_to_bf16).
bool blend_rows_bf16(const float* a, const float* b, float h0, float h1, std::uint16_t* y, std::int64_t n,
                     bool stream);

}  // namespace ridgeline::cpu::dnnl_detail
