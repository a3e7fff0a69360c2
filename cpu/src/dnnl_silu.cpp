// ridgeline's own SiLU loop (dnnl_silu.hpp).
#include "dnnl_silu.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define RIDGELINE_SILU_AVX512 1
#else
#define RIDGELINE_SILU_AVX512 0
#endif

namespace ridgeline::cpu::dnnl_detail {

namespace {

using i64 = std::int64_t;

// derived: e^z = 2^n e^r with n = round(z log2 e) and r = z - n ln 2 (Cody and Waite's reduction: ln 2 = ln2_hi +
// ln2_lo, ln2_hi with 9 significant bits, so n ln2_hi is exact for |n| <= 126 and r keeps float's precision however
// large z is); e^r = sum_k r^k / k! for |r| <= ln 2 / 2, the first term left out, (ln 2 / 2)^7 / 7!, being 1.2e-7 of it.
// z = -x is clamped to +-126 ln 2, so 2^n and 1 / (1 + e^z) stay normal floats; below x = -126 ln 2 the loops take
// sigmoid(x) as 0 (x * 0).
constexpr float log2e = 1.44269504088896341f, ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
constexpr float c2 = 1.0f / 2, c3 = 1.0f / 6, c4 = 1.0f / 24, c5 = 1.0f / 120, c6 = 1.0f / 720;
constexpr float z_limit = 87.3365448f;  // 126 ln 2

/// e^-x (a NaN x clamps to -126 ln 2, so gives 2^-126: the caller's x / (1 + e^-x) keeps it NaN).
inline float exp_neg(float x) {
    const float z = std::fmin(std::fmax(-x, -z_limit), z_limit);
    const float n = __builtin_rintf(z * log2e);
    const float r = (z - n * ln2_hi) - n * ln2_lo;
    float p = c6;
    p = p * r + c5;
    p = p * r + c4;
    p = p * r + c3;
    p = p * r + c2;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    std::int32_t bits;
    std::memcpy(&bits, &p, 4);
    bits += static_cast<std::int32_t>(n) * (1 << 23);  // p * 2^n, p in [0.70, 1.42]: at most 2^126.5; at the
    // lower clamp the bits may read as a subnormal rather than p * 2^-126, where 1 + e^-x is 1 either way
    std::memcpy(&p, &bits, 4);
    return p;
}

__attribute__((target_clones("avx2", "default"))) void silu_portable(const float* x, float* y, i64 lo, i64 hi) {
#pragma omp simd
    for (i64 i = lo; i < hi; ++i) y[i] = x[i] < -z_limit ? x[i] * 0.0f : x[i] / (1.0f + exp_neg(x[i]));
}

#if RIDGELINE_SILU_AVX512
// g++ 12 warns that the undefined vector behind avx512fintrin.h's _mm512_max_ps, _mm512_min_ps, _mm512_roundscale_ps
// and _mm512_scalef_ps (_mm512_undefined_ps) may be used uninitialised: a known false positive (GCC bug 105593)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
__attribute__((target("avx512f"))) inline __m512 silu16(__m512 x) {
    const __m512 z = _mm512_min_ps(_mm512_max_ps(_mm512_sub_ps(_mm512_setzero_ps(), x), _mm512_set1_ps(-z_limit)),
                                   _mm512_set1_ps(z_limit));
    const __m512 n =
        _mm512_roundscale_ps(_mm512_mul_ps(z, _mm512_set1_ps(log2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(ln2_lo), _mm512_fnmadd_ps(n, _mm512_set1_ps(ln2_hi), z));
    __m512 p = _mm512_set1_ps(c6);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c5));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    const __m512 d = _mm512_add_ps(_mm512_scalef_ps(p, n), _mm512_set1_ps(1.0f));  // 1 + e^-x, in [1, 2^126.5]
    __m512 q = _mm512_rcp14_ps(d);                                                   // 1 / d within 2^-14
    q = _mm512_fmadd_ps(_mm512_fnmadd_ps(d, q, _mm512_set1_ps(1.0f)), q, q);        // Newton: q (2 - d q)
    // past the clamp sigmoid(x) is below 2^-126: 0, so x * 0 (-0, or NaN for -inf as -inf / inf is)
    q = _mm512_mask_mov_ps(q, _mm512_cmp_ps_mask(x, _mm512_set1_ps(-z_limit), _CMP_LT_OQ), _mm512_setzero_ps());
    return _mm512_mul_ps(x, q);
}

__attribute__((target("avx512f"))) void silu_avx512(const float* x, float* y, i64 lo, i64 hi) {
    i64 i = lo;
    for (; i + 16 <= hi; i += 16) _mm512_storeu_ps(y + i, silu16(_mm512_loadu_ps(x + i)));
    if (i < hi) {
        const __mmask16 m = static_cast<__mmask16>((1u << (hi - i)) - 1u);
        _mm512_mask_storeu_ps(y + i, m, silu16(_mm512_maskz_loadu_ps(m, x + i)));
    }
}
#pragma GCC diagnostic pop
#endif

}  // namespace

void silu_f32(const float* x, float* y, std::int64_t n, silu_path path) {
#if RIDGELINE_SILU_AVX512
    static const bool avx512f = __builtin_cpu_supports("avx512f");
    const bool wide = avx512f && path == silu_path::fastest;
#else
    const bool wide = false;
    (void)path;
#endif
#pragma omp parallel
    {
        // contiguous slices of whole 16-float vectors (whole 64-byte lines where y is aligned to one)
        const i64 t = omp_get_thread_num(), threads = omp_get_num_threads(), lines = (n + 15) / 16;
        const i64 lo = std::min(n, lines * t / threads * 16), hi = std::min(n, lines * (t + 1) / threads * 16);
#if RIDGELINE_SILU_AVX512
        if (wide)
            silu_avx512(x, y, lo, hi);
        else
#endif
            silu_portable(x, y, lo, hi);
    }
}

}  // namespace ridgeline::cpu::dnnl_detail
