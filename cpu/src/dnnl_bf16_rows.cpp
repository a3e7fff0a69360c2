// bf16 row kernels for AVX-512 BF16 (dnnl_bf16_rows.hpp). The kernels are compiled for AVX-512F, BW, VL and BF16
// (GCC's target pragma, so the lambdas they hand to write_run are too) and called only where the CPU has them.
#include "dnnl_bf16_rows.hpp"

#include <algorithm>
#include <cmath>

#include "dnnl_loops.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define RIDGELINE_BF16_ROWS 1
#else
#define RIDGELINE_BF16_ROWS 0
#endif

namespace ridgeline::cpu::dnnl_detail {

namespace {

using i64 = std::int64_t;

#if RIDGELINE_BF16_ROWS
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512bf16")
// GCC 12's unmasked AVX-512 intrinsics (vpmovzxwd, vpslld, the reduction's extracts) start from an undefined vector
// (_mm512_undefined_epi32()), which its -Wmaybe-uninitialized and -Wuninitialized take for an uninitialised read
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

constexpr i64 lanes = 16;

/// The first min(n, 16) lanes.
inline __mmask16 lanes_of(i64 n) { return n >= lanes ? __mmask16{0xffff} : static_cast<__mmask16>((1u << n) - 1); }

/// Values p[0, 16) under mask m as float32 (a bf16 is a float32's upper half), the others 0 and not read.
inline __m512 load_bf16(const std::uint16_t* p, __mmask16 m) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p)), 16));
}

/// v rounded to bf16 (nearest even) into p[0, 16) under mask m.
inline void store_bf16(std::uint16_t* p, __m512 v, __mmask16 m) {
    _mm256_mask_storeu_epi16(p, m, reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(v)));
}

/// sum(x[i]^2) over n values in four chains of 16 lanes (a fused multiply-add's latency does not bound the loop).
float sum_of_squares(const std::uint16_t* x, i64 n) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    i64 i = 0;
    for (; i + 4 * lanes <= n; i += 4 * lanes) {
        const __m512 v0 = load_bf16(x + i, 0xffff), v1 = load_bf16(x + i + lanes, 0xffff);
        const __m512 v2 = load_bf16(x + i + 2 * lanes, 0xffff), v3 = load_bf16(x + i + 3 * lanes, 0xffff);
        a0 = _mm512_fmadd_ps(v0, v0, a0);
        a1 = _mm512_fmadd_ps(v1, v1, a1);
        a2 = _mm512_fmadd_ps(v2, v2, a2);
        a3 = _mm512_fmadd_ps(v3, v3, a3);
    }
    for (; i < n; i += lanes) {
        const __m512 v = load_bf16(x + i, lanes_of(n - i));
        a0 = _mm512_fmadd_ps(v, v, a0);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

void rms_row_avx512(const std::uint16_t* x, std::uint16_t* y, const float* w, i64 inner, float eps, bool stream) {
    double sq = 0;  // blocks of fold_block values in float32, their sums in double (fold_block)
    for (i64 b = 0; b < inner; b += fold_block) sq += sum_of_squares(x + b, std::min(fold_block, inner - b));
    const float inv = 1.0f / std::sqrt(static_cast<float>(sq / static_cast<double>(inner)) + eps);
    const __m512 vi = _mm512_set1_ps(inv);
    write_run(y, 0, inner, stream, [&](std::uint16_t* o, i64 lo, i64 hi) {
        for (i64 i = lo; i < hi; i += lanes) {
            const __mmask16 m = lanes_of(hi - i);
            __m512 v = _mm512_mul_ps(load_bf16(x + i, m), vi);
            if (w != nullptr) v = _mm512_mul_ps(v, _mm512_maskz_loadu_ps(m, w + i));
            store_bf16(o + (i - lo), v, m);
        }
    });
}

/// Elements [a, b) of one rotary row into o[0, b - a): the first half's and the second half's parts.
inline void rotary_part(const std::uint16_t* x, const float* c, const float* s, i64 dim, i64 a, i64 b,
                        std::uint16_t* o) {
    const i64 half = dim / 2;
    for (i64 i = a; i < std::min(b, half); i += lanes) {
        const __mmask16 m = lanes_of(std::min(b, half) - i);
        const __m512 v = _mm512_mul_ps(load_bf16(x + i, m), _mm512_maskz_loadu_ps(m, c + i));
        store_bf16(o + (i - a), _mm512_fnmadd_ps(load_bf16(x + i + half, m), _mm512_maskz_loadu_ps(m, s + i), v), m);
    }
    for (i64 i = std::max(a, half); i < b; i += lanes) {
        const __mmask16 m = lanes_of(b - i);
        const __m512 v = _mm512_mul_ps(load_bf16(x + i, m), _mm512_maskz_loadu_ps(m, c + i));
        store_bf16(o + (i - a), _mm512_fmadd_ps(load_bf16(x + i - half, m), _mm512_maskz_loadu_ps(m, s + i), v), m);
    }
}

void rotary_slab_avx512(const std::uint16_t* x, i64 row_stride, std::uint16_t* y, const float* c, const float* s,
                        i64 rows, i64 dim, bool stream) {
    write_run(y, 0, rows * dim, stream, [&](std::uint16_t* o, i64 lo, i64 hi) {
        for (i64 r = lo / dim; lo < hi; ++r) {
            const i64 a = lo - r * dim, b = std::min(dim, hi - r * dim);
            rotary_part(x + r * row_stride, c + r * dim, s + r * dim, dim, a, b, o);
            o += b - a;
            lo = r * dim + b;
        }
    });
}

#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif

}  // namespace

bool& bf16_rows_allowed() {
    static bool allowed = true;
    return allowed;
}

bool bf16_rows_vectorised() {
#if RIDGELINE_BF16_ROWS
    static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                            __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
    return has && bf16_rows_allowed();
#else
    return false;
#endif
}

bool rms_row_bf16(const std::uint16_t* x, std::uint16_t* y, const float* w, std::int64_t inner, float eps,
                  bool stream) {
    if (!bf16_rows_vectorised()) return false;
#if RIDGELINE_BF16_ROWS
    rms_row_avx512(x, y, w, inner, eps, stream);
#else
    (void)x, (void)y, (void)w, (void)inner, (void)eps, (void)stream;
#endif
    return true;
}

bool rotary_slab_bf16(const std::uint16_t* x, std::int64_t row_stride, std::uint16_t* y, const float* cos,
                      const float* sin, std::int64_t rows, std::int64_t dim, bool stream) {
    if (!bf16_rows_vectorised()) return false;
#if RIDGELINE_BF16_ROWS
    rotary_slab_avx512(x, row_stride, y, cos, sin, rows, dim, stream);
#else
    (void)x, (void)row_stride, (void)y, (void)cos, (void)sin, (void)rows, (void)dim, (void)stream;
#endif
    return true;
}

}  // namespace ridgeline::cpu::dnnl_detail
