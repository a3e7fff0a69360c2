// Vectorised table gathers (dnnl_window_gather.hpp). Compiled with -ffp-contract=off (cpu/CMakeLists.txt), so that
// the bilinear blend's multiplies and adds stay separate roundings in both paths.
#include "dnnl_window_gather.hpp"

#include "dnnl_loops.hpp"  // bf16_to_f32

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define RIDGELINE_WINDOW_AVX512 1
#else
#define RIDGELINE_WINDOW_AVX512 0
#endif

#include <algorithm>

namespace ridgeline::cpu::dnnl_detail {

namespace {

using i64 = std::int64_t;
constexpr i64 lanes = window_blocks::lanes;

#if RIDGELINE_WINDOW_AVX512
/// The window of block k as two vectors of 16 elements, each element loaded only where `reads` says an entry reads
/// it (masked loads: nothing past the source is touched, AVX-512's fault suppression).
struct window_pair {
    __m512i lo, hi;
};
__attribute__((target("avx512f"))) inline window_pair load_window(const void* first, std::uint32_t reads) {
    const auto* p = static_cast<const std::uint32_t*>(first);
    return {_mm512_maskz_loadu_epi32(static_cast<__mmask16>(reads & 0xffffu), p),
            _mm512_maskz_loadu_epi32(static_cast<__mmask16>(reads >> 16), p + lanes)};
}

/// gather_u32's full blocks from j (a multiple of lanes) while a whole block fits before j1; returns where it stopped.
__attribute__((target("avx512f"))) i64 gather_u32_blocks(const std::uint32_t* src, const std::int64_t* index,
                                                          const window_blocks& w, std::uint32_t* out, i64 j0, i64 j,
                                                          i64 j1) {
    for (; j + lanes <= j1; j += lanes) {
        const auto k = static_cast<std::size_t>(j / lanes);
        if (w.base[k] < 0) {
            for (i64 i = j; i < j + lanes; ++i) out[i - j0] = src[index[i]];
            continue;
        }
        const window_pair v = load_window(src + w.base[k], w.reads[k]);
        const __m512i idx = _mm512_loadu_si512(w.rel.data() + k * lanes);
        _mm512_storeu_si512(out + (j - j0), _mm512_permutex2var_epi32(v.lo, idx, v.hi));
    }
    return j;
}

/// gather_u16's full blocks, as gather_u32_blocks: the window's 32 two-byte elements are one masked load (the mask
/// is `reads` itself) and the block one word permute (AVX-512BW's vmovdqu16 {k}{z} and vpermw), its 16 outputs the
/// lower half.
__attribute__((target("avx512f,avx512bw"))) i64 gather_u16_blocks(const std::uint16_t* src, const std::int64_t* index,
                                                                   const window_blocks& w, std::uint16_t* out, i64 j0,
                                                                   i64 j, i64 j1) {
    for (; j + lanes <= j1; j += lanes) {
        const auto k = static_cast<std::size_t>(j / lanes);
        if (w.base[k] < 0) {
            for (i64 i = j; i < j + lanes; ++i) out[i - j0] = src[index[i]];
            continue;
        }
        const __m512i v = _mm512_maskz_loadu_epi16(static_cast<__mmask32>(w.reads[k]), src + w.base[k]);
        // the 16 offsets as words (the upper 16 zero: GCC 12's unmasked forms start from an undefined vector)
        const __m256i idx = _mm512_maskz_cvtepi32_epi16(0xffff, _mm512_loadu_si512(w.rel.data() + k * lanes));
        const __m512i r = _mm512_permutexvar_epi16(_mm512_maskz_broadcast_i64x4(0x0f, idx), v);
        _mm512_mask_storeu_epi16(out + (j - j0), 0xffffu, r);
    }
    return j;
}

/// The blend of a windowed block k: (1 - t) * x0 + t * x1, x0 and x1 the window's elements at the two tables'
/// offsets, t = w1[c, c + 16).
__attribute__((target("avx512f"))) inline __m512 lerp_window(const window_pair& v, const window_blocks& w,
                                                              std::size_t k, const float* w1, i64 c) {
    const __m512 one = _mm512_set1_ps(1.0f);
    const std::int32_t* rel = w.rel.data() + k * 2 * lanes;
    const __m512 x0 = _mm512_castsi512_ps(_mm512_permutex2var_epi32(v.lo, _mm512_loadu_si512(rel), v.hi));
    const __m512 x1 = _mm512_castsi512_ps(_mm512_permutex2var_epi32(v.lo, _mm512_loadu_si512(rel + lanes), v.hi));
    const __m512 t = _mm512_loadu_ps(w1 + c);
    return _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(one, t), x0), _mm512_mul_ps(t, x1));
}

/// lerp_gather's full blocks, as gather_u32_blocks.
__attribute__((target("avx512f"))) i64 lerp_blocks(const float* a, const std::int64_t* i0, const std::int64_t* i1,
                                                    const float* w1, const window_blocks& w, float* out, i64 c0, i64 c,
                                                    i64 c1) {
    for (; c + lanes <= c1; c += lanes) {
        const auto k = static_cast<std::size_t>(c / lanes);
        if (w.base[k] < 0) {
            for (i64 i = c; i < c + lanes; ++i) out[i - c0] = (1 - w1[i]) * a[i0[i]] + w1[i] * a[i1[i]];
            continue;
        }
        _mm512_storeu_ps(out + (c - c0), lerp_window(load_window(a + w.base[k], w.reads[k]), w, k, w1, c));
    }
    return c;
}

/// 16 bf16 values as float32 bit patterns. Masked forms throughout: GCC 12's unmasked ones start from an undefined
/// vector, which its -Wuninitialized flags.
__attribute__((target("avx512f"))) inline __m512i widen_bf16(__m256i h) {
    return _mm512_maskz_slli_epi32(0xffff, _mm512_maskz_cvtepu16_epi32(0xffff, h), 16);
}

/// The window of block k of a bf16 source, widened to float32: its 32 two-byte elements one masked load (the mask is
/// `reads` itself), each half widened by a shift (a bf16 is a float32's upper half).
__attribute__((target("avx512f,avx512bw"))) inline window_pair load_window_bf16(const std::uint16_t* p,
                                                                                 std::uint32_t reads) {
    const __m512i v = _mm512_maskz_loadu_epi16(static_cast<__mmask32>(reads), p);
    return {widen_bf16(_mm512_maskz_extracti64x4_epi64(0x0f, v, 0)),
            widen_bf16(_mm512_maskz_extracti64x4_epi64(0x0f, v, 1))};
}

/// lerp_gather's full blocks from a bf16 source, as lerp_blocks.
__attribute__((target("avx512f,avx512bw"))) i64 lerp_blocks_bf16(const std::uint16_t* a, const std::int64_t* i0,
                                                                  const std::int64_t* i1, const float* w1,
                                                                  const window_blocks& w, float* out, i64 c0, i64 c,
                                                                  i64 c1) {
    for (; c + lanes <= c1; c += lanes) {
        const auto k = static_cast<std::size_t>(c / lanes);
        if (w.base[k] < 0) {
            for (i64 i = c; i < c + lanes; ++i)
                out[i - c0] = (1 - w1[i]) * bf16_to_f32(a[i0[i]]) + w1[i] * bf16_to_f32(a[i1[i]]);
            continue;
        }
        _mm512_storeu_ps(out + (c - c0), lerp_window(load_window_bf16(a + w.base[k], w.reads[k]), w, k, w1, c));
    }
    return c;
}

/// h0 * a[c..c+16) + h1 * b[c..c+16), the elements outside `mask` zero (not loaded).
__attribute__((target("avx512f"))) inline __m512 blend_at(const float* a, const float* b, __m512 h0, __m512 h1, i64 c,
                                                          __mmask16 mask) {
    return _mm512_add_ps(_mm512_mul_ps(h0, _mm512_maskz_loadu_ps(mask, a + c)),
                         _mm512_mul_ps(h1, _mm512_maskz_loadu_ps(mask, b + c)));
}

/// blend_rows, vectorised: whole vectors streamed or stored, the partial ones before and after by masked stores.
__attribute__((target("avx512f"))) void blend_avx512(const float* a, const float* b, float h0, float h1, float* y,
                                                     i64 n, bool stream) {
    const __m512 v0 = _mm512_set1_ps(h0), v1 = _mm512_set1_ps(h1);
    i64 c = 0;
    if (stream) {
        c = std::min(n, static_cast<i64>((-reinterpret_cast<std::uintptr_t>(y) & 63) / sizeof(float)));
        if (c > 0) {
            const auto mask = static_cast<__mmask16>((1u << c) - 1);
            _mm512_mask_storeu_ps(y, mask, blend_at(a, b, v0, v1, 0, mask));
        }
        for (; c + lanes <= n; c += lanes) _mm512_stream_ps(y + c, blend_at(a, b, v0, v1, c, 0xffff));
    } else {
        for (; c + lanes <= n; c += lanes) _mm512_storeu_ps(y + c, blend_at(a, b, v0, v1, c, 0xffff));
    }
    if (c < n) {
        const auto mask = static_cast<__mmask16>((1u << (n - c)) - 1);
        _mm512_mask_storeu_ps(y + c, mask, blend_at(a, b, v0, v1, c, mask));
    }
}

/// 16 float32 values rounded to bf16 (nearest even).
__attribute__((target("avx512f,avx512bf16"))) inline __m256i bf16(__m512 v) {
    return reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(v));
}

/// blend_rows_bf16, vectorised: blend_at's float32 values rounded to bf16 by vcvtneps2bf16 (ties to even); whole
/// vectors of 16 (32 bytes) streamed or stored from y's first 64-byte boundary, the partial ones by masked stores.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void blend_bf16_avx512(const float* a, const float* b,
                                                                                      float h0, float h1,
                                                                                      std::uint16_t* y, i64 n,
                                                                                      bool stream) {
    const __m512 v0 = _mm512_set1_ps(h0), v1 = _mm512_set1_ps(h1);
    i64 c = 0;
    if (stream) {
        c = std::min(n, static_cast<i64>((-reinterpret_cast<std::uintptr_t>(y) & 63) / sizeof(std::uint16_t)));
        for (i64 h = 0; h < c; h += lanes) {
            const auto mask = static_cast<__mmask16>(c - h >= lanes ? 0xffff : (1u << (c - h)) - 1);
            _mm256_mask_storeu_epi16(y + h, mask, bf16(blend_at(a, b, v0, v1, h, mask)));
        }
        for (; c + lanes <= n; c += lanes)
            _mm256_stream_si256(reinterpret_cast<__m256i*>(y + c), bf16(blend_at(a, b, v0, v1, c, 0xffff)));
    } else {
        for (; c + lanes <= n; c += lanes)
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + c), bf16(blend_at(a, b, v0, v1, c, 0xffff)));
    }
    if (c < n) {
        const auto mask = static_cast<__mmask16>((1u << (n - c)) - 1);
        _mm256_mask_storeu_epi16(y + c, mask, bf16(blend_at(a, b, v0, v1, c, mask)));
    }
}
#endif

/// The first multiple of lanes at or after j, not past end.
i64 block_start(i64 j, i64 end) { return std::min(end, (j + lanes - 1) / lanes * lanes); }

}  // namespace

window_blocks make_window_blocks(const std::vector<const std::int64_t*>& tables, std::int64_t n) {
    window_blocks w;
    w.tables = static_cast<i64>(tables.size());
    const i64 blocks = std::max<i64>(0, n / lanes);
    w.base.assign(static_cast<std::size_t>(blocks), -1);
    w.rel.assign(static_cast<std::size_t>(blocks * w.tables * lanes), 0);
    w.reads.assign(static_cast<std::size_t>(blocks), 0);
    for (i64 k = 0; k < blocks; ++k) {
        i64 lo = tables.empty() ? -1 : tables[0][k * lanes], hi = lo;
        for (const std::int64_t* t : tables)
            for (i64 j = k * lanes; j < (k + 1) * lanes; ++j) {
                lo = std::min(lo, t[j]);
                hi = std::max(hi, t[j]);
            }
        if (lo < 0 || hi - lo >= window_blocks::window) continue;
        const auto kk = static_cast<std::size_t>(k);
        w.base[kk] = lo;
        for (std::size_t t = 0; t < tables.size(); ++t)
            for (i64 j = 0; j < lanes; ++j) {
                const auto r = static_cast<std::int32_t>(tables[t][k * lanes + j] - lo);
                w.rel[(kk * tables.size() + t) * static_cast<std::size_t>(lanes) + static_cast<std::size_t>(j)] = r;
                w.reads[kk] |= 1u << r;
            }
    }
    return w;
}

bool& window_gather_allowed() {
    static bool allowed = true;
    return allowed;
}

bool window_gather_vectorised() {
#if RIDGELINE_WINDOW_AVX512
    static const bool avx512f = __builtin_cpu_supports("avx512f");
    return avx512f && window_gather_allowed();
#else
    return false;
#endif
}

void gather_u32(const std::uint32_t* src, const std::int64_t* index, const window_blocks& w, std::uint32_t* out,
                std::int64_t j0, std::int64_t j1) {
    i64 j = j0;
#if RIDGELINE_WINDOW_AVX512
    if (window_gather_vectorised()) {
        for (; j < block_start(j0, j1); ++j) out[j - j0] = src[index[j]];
        j = gather_u32_blocks(src, index, w, out, j0, j, j1);
    }
#else
    (void)w;
#endif
    for (; j < j1; ++j) out[j - j0] = src[index[j]];
}

bool window_gather_u16_vectorised() {
#if RIDGELINE_WINDOW_AVX512
    static const bool avx512bw = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    return avx512bw && window_gather_allowed();
#else
    return false;
#endif
}

void gather_u16(const std::uint16_t* src, const std::int64_t* index, const window_blocks& w, std::uint16_t* out,
                std::int64_t j0, std::int64_t j1) {
    i64 j = j0;
#if RIDGELINE_WINDOW_AVX512
    if (window_gather_u16_vectorised()) {
        for (; j < block_start(j0, j1); ++j) out[j - j0] = src[index[j]];
        j = gather_u16_blocks(src, index, w, out, j0, j, j1);
    }
#else
    (void)w;
#endif
    // unrolled 4x: one element an iteration, the loop's speed hung on where the linker put it (bf16 nearest took 24
    // or 43 ms by the loop's alignment alone, 2026-12-07)
    for (; j + 4 <= j1; j += 4) {
        const std::uint16_t a = src[index[j]], b = src[index[j + 1]], c = src[index[j + 2]], d = src[index[j + 3]];
        out[j - j0] = a;
        out[j + 1 - j0] = b;
        out[j + 2 - j0] = c;
        out[j + 3 - j0] = d;
    }
    for (; j < j1; ++j) out[j - j0] = src[index[j]];
}

void lerp_gather(const float* a, const std::int64_t* i0, const std::int64_t* i1, const float* w1,
                 const window_blocks& w, float* out, std::int64_t c0, std::int64_t c1) {
    i64 c = c0;
#if RIDGELINE_WINDOW_AVX512
    if (window_gather_vectorised()) {
        for (; c < block_start(c0, c1); ++c) out[c - c0] = (1 - w1[c]) * a[i0[c]] + w1[c] * a[i1[c]];
        c = lerp_blocks(a, i0, i1, w1, w, out, c0, c, c1);
    }
#else
    (void)w;
#endif
    for (; c < c1; ++c) out[c - c0] = (1 - w1[c]) * a[i0[c]] + w1[c] * a[i1[c]];
}

bool blend_rows_bf16(const float* a, const float* b, float h0, float h1, std::uint16_t* y, std::int64_t n,
                     bool stream) {
#if RIDGELINE_WINDOW_AVX512
    static const bool bf16 = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                             __builtin_cpu_supports("avx512bf16");
    if (!bf16 || !window_gather_vectorised()) return false;
    blend_bf16_avx512(a, b, h0, h1, y, n, stream);
    return true;
#else
    (void)a, (void)b, (void)h0, (void)h1, (void)y, (void)n, (void)stream;
    return false;
#endif
}

void lerp_gather(const std::uint16_t* a, const std::int64_t* i0, const std::int64_t* i1, const float* w1,
                 const window_blocks& w, float* out, std::int64_t c0, std::int64_t c1) {
    auto one = [&](i64 c) { out[c - c0] = (1 - w1[c]) * bf16_to_f32(a[i0[c]]) + w1[c] * bf16_to_f32(a[i1[c]]); };
    i64 c = c0;
#if RIDGELINE_WINDOW_AVX512
    if (window_gather_u16_vectorised()) {
        for (; c < block_start(c0, c1); ++c) one(c);
        c = lerp_blocks_bf16(a, i0, i1, w1, w, out, c0, c, c1);
    }
#else
    (void)w;
#endif
    for (; c < c1; ++c) one(c);
}

bool blend_rows(const float* a, const float* b, float h0, float h1, float* y, std::int64_t n, bool stream) {
#if RIDGELINE_WINDOW_AVX512
    if (!window_gather_vectorised()) return false;
    blend_avx512(a, b, h0, h1, y, n, stream);
    return true;
#else
    (void)a, (void)b, (void)h0, (void)h1, (void)y, (void)n, (void)stream;
    return false;
#endif
}

}  // namespace ridgeline::cpu::dnnl_detail
