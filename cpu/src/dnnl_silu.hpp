#pragma once
// ridgeline's own SiLU loop, y = x * sigmoid(x) = x / (1 + e^-x) (Ramachandran et al. 2017, "Searching for
// Activation Functions"; PyTorch's torch.nn.SiLU), for float32. oneDNN 2.6.3's swish (eltwise_swish, as a primitive
// or as a convolution's post-op) spends about 37 cycles a 16-float vector on the Zen 4 VM: 400 us for 1.2 M floats
// alone, 257 us as the post-op of a 1x1 convolution whose own work takes 203 us (docs/performance.md). This loop
// takes about a third of that: e^-x as 2^n e^r (n = round(-x log2 e), r = -x - n ln 2 by Cody and Waite's two-part
// ln 2, |r| <= ln 2 / 2, e^r its Taylor polynomial to degree 6: relative error below 1.2e-7), 1 / (1 + e^-x) by
// AVX-512's 14-bit reciprocal and one Newton step (elsewhere a division, vectorised by the compiler for AVX2 or SSE2).
// -x is clamped to +-126 ln 2, so the reciprocal stays a normal number; where e^-x passes 2^126 (x < -87.3) sigmoid
// is taken as 0 and the result is x * 0: -0 (the exact value is below 1.2e-36 in size there and underflows float
// below x = -103.3), NaN for -inf (as the exact quotient -inf / inf); NaN stays NaN, +inf gives +inf. Private to cpu/.
#include <cstdint>

namespace ridgeline::cpu::dnnl_detail {

enum class silu_path { fastest, portable };

/// y[i] = x[i] * sigmoid(x[i]) for i in [0, n); y may be x (in place). Splits [0, n) over the profile's OpenMP
/// threads. `fastest`: the AVX-512 loop where the CPU has AVX-512F (asked at run time), else the portable one;
/// `portable` (tests) always the latter.
void silu_f32(const float* x, float* y, std::int64_t n, silu_path path = silu_path::fastest);

/// The number of elements from which silu_f32 after a producer beats oneDNN's swish post-op: below it the post-op's
/// extra cost (0.21 ns an element, docs/performance.md) is less than the loop's parallel region (about 1 us).
inline constexpr std::int64_t silu_loop_min_elements = 4096;

}  // namespace ridgeline::cpu::dnnl_detail
