#pragma once
// The frame of ridgeline's own loops in the oneDNN backend (where, the index gathers of pad, expand and interpolate,
// the strided copy): each walks its output as rows of a contiguous innermost run, hoists the index arithmetic out of
// that run, and splits the runs over the profile's OpenMP threads, so that the compiler vectorises the run
// (`#pragma omp simd`: GCC vectorises such loops at -O2, where its default cost model vectorises almost nothing) and
// the loop streams at memory speed. A computed output or a copy larger than the last-level cache is written with
// non-temporal stores (write_run row by row, stream_flat across rows with whole lines, stream_bytes), as oneDNN
// writes its large outputs; fills and splats are not (streamed, they ran slower: docs/performance.md). Otherwise
// portable C++; the instruction sets beyond the x86-64 baseline are picked when the program runs: whole lines streamed
// with AVX-512's or AVX2's stores where the CPU has them (stream_lines), the row kernels compiled for each
// (RIDGELINE_LOOP_CLONES), the resampling gathers' AVX-512 path (dnnl_window_gather.hpp). Private to cpu/.
#include <omp.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "dnnl_common.hpp"

/// Marks a loop kernel to be compiled for AVX-512, AVX2 and the x86-64 baseline, the widest the CPU has picked when
/// the program loads (GCC's function multiversioning; the kernel's inlined helpers and lambdas are compiled into
/// each clone). The baseline's SSE2 has no 32-to-16-bit pack: its bf16 conversions took several instructions per 4
/// values, and bf16 rms_norm ran at 21% of its DRAM roof, rotary at 9% (float32 68-73%). Put it on a function a
/// parallel region calls (a row, a group), not on one that opens the region: OpenMP outlines the region's body
/// before the clones are made, so the body would stay at the baseline. GCC on x86-64 only: Clang 14 (the fuzz
/// preset's) refuses target_clones on function templates, and builds the baseline.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define RIDGELINE_LOOP_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define RIDGELINE_LOOP_CLONES
#endif
/// The loop helpers a kernel calls (fold_run, write_run, stream_bytes; the lambdas it passes them:
/// RIDGELINE_LAMBDA_INLINE) are always inlined, so they are compiled into
/// each clone of the kernel, not called at the baseline (GCC inlines a baseline function into a wider clone only when
/// told to).
#if defined(__GNUC__) || defined(__clang__)
#define RIDGELINE_LOOP_INLINE [[gnu::always_inline]] inline
#define RIDGELINE_LAMBDA_INLINE __attribute__((always_inline))
#else
#define RIDGELINE_LOOP_INLINE inline
#define RIDGELINE_LAMBDA_INLINE
#endif

namespace ridgeline::cpu::dnnl_detail {

/// bf16 <-> float: a bf16 is the high half of a float32 (rounded to nearest even on the way down, as oneDNN does).
inline float bf16_to_f32(std::uint16_t v) {
    const std::uint32_t u = static_cast<std::uint32_t>(v) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
inline std::uint16_t f32_to_bf16(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    const std::uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const std::uint32_t nan = (u >> 16) | 0x40;  // NaN stays NaN; a select, not a branch, so loops vectorise
    return static_cast<std::uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

/// Element i of float32 (T = float) or bf16 (T = std::uint16_t) data as a float, and back.
template <class T>
inline float load(const T* p, std::int64_t i) {
    if constexpr (std::is_same_v<T, float>)
        return p[i];
    else
        return bf16_to_f32(p[i]);
}
template <class T>
inline void store(T* p, std::int64_t i, float v) {
    if constexpr (std::is_same_v<T, float>)
        p[i] = v;
    else
        p[i] = f32_to_bf16(v);
}

/// op(init, map(x[0]), map(x[1]), ...) over a contiguous run of float32 or bf16 values, in 32 partial results: 8
/// independent 16-byte vector chains, so the adder's latency does not bound the loop (a fixed inner loop GCC vectorises
/// at -O2, where it vectorises no `omp simd reduction`), then the tail, then the partials pairwise. (Two 16-lane
/// vector variables instead of the array, so that the partials stay in registers, ran no faster: the loop is bound
/// by memory, not by the partials' stores to the stack.)
template <class T, class Map, class Op>
RIDGELINE_LOOP_INLINE float fold_run(const T* x, std::int64_t n, float init, Map map, Op op) {
    constexpr std::int64_t lanes = 32;
    float part[lanes];
    for (float& v : part) v = init;
    std::int64_t i = 0;
    for (; i + lanes <= n; i += lanes)
        for (std::int64_t k = 0; k < lanes; ++k) part[k] = op(part[k], map(load(x, i + k)));
    for (; i < n; ++i) part[0] = op(part[0], map(load(x, i)));
    for (std::int64_t w = lanes / 2; w > 0; w /= 2)
        for (std::int64_t k = 0; k < w; ++k) part[k] = op(part[k], part[k + w]);
    return part[0];
}

/// A long sum in float32 drifts with its length (rms_norm's sum of squares over a row of 33.5 million float32 values
/// was off by 2e-4 relative, past fp32's tolerance of 1e-4): the loops sum blocks of this many values in float32
/// (fold_run, vectorised) and the blocks' sums in double, so the error stays that of a block.
inline constexpr std::int64_t fold_block = 4096;

/// o[0, n) = v, vectorised (`omp simd`): std::fill of 2- and 4-byte values stays a scalar loop at -O2 (GCC's cost
/// model there vectorises no loop that needs an epilogue), one store per element: a bf16 expand of a broadcast
/// innermost dimension wrote 7.6 GB/s, a fifth of its roof.
template <class T>
RIDGELINE_LOOP_INLINE void splat_run(T* o, std::int64_t n, T v) {
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i) o[i] = v;
}

/// Whether a loop writing an output of `bytes` writes it with non-temporal stores: true past the last-level cache
/// (cpu_info's llc_total_bytes, 32 MiB where unknown), where the output cannot stay cached for the next layer anyway
/// and an ordinary store reads every line before writing it (a read for ownership: a copy whose counted 8 bytes an
/// element move 12). oneDNN writes its large outputs the same way, and the DRAM roof's copy kernel measures such
/// stores (cpu_ceilings_kernels.cpp), so a loop that streams can reach the roof; one that does not, about 2/3 of it.
/// The threshold is a setting of the process, so that tests can set it to 0 and run every loop's streaming path on
/// small tensors.
std::int64_t& stream_threshold_bytes();
inline bool stream_output(std::int64_t bytes) { return bytes > stream_threshold_bytes(); }

/// Orders this thread's non-temporal stores before what follows (SSE2's sfence; nothing elsewhere): every thread that
/// ran write_run with `stream` calls it once before its parallel region ends, so the next layer reads what it wrote.
inline void stream_fence() {
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

/// Writes `lines` whole 64-byte lines from s to d (d on a line boundary, s anywhere) with non-temporal stores as wide
/// as the CPU has: one AVX-512 store a line, two AVX2 ones, four SSE2 ones; picked once (dnnl_common.cpp). Wider
/// stores write a line in fewer pieces: on the Zen 4 VM a pure streaming write of 512 MiB ran at 44-50 GB/s in
/// 16-byte stores and 51-53 GB/s in 32- or 64-byte ones (interleaved, 3 rounds).
using stream_lines_fn = void (*)(unsigned char* d, const unsigned char* s, std::int64_t lines);
stream_lines_fn stream_lines();

/// Copies `n` bytes from `src` to `dst` with non-temporal stores from dst's first 16-byte boundary on (a plain copy
/// without SSE2): 16-byte stores up to a line boundary, whole lines (stream_lines), 16-byte stores after. The thread
/// calls stream_fence() before its parallel region ends.
RIDGELINE_LOOP_INLINE void stream_bytes(void* dst, const void* src, std::int64_t n) {
    auto* d = static_cast<unsigned char*>(dst);
    const auto* s = static_cast<const unsigned char*>(src);
    std::int64_t i = std::min<std::int64_t>(n, static_cast<std::int64_t>(-reinterpret_cast<std::uintptr_t>(d) & 15));
    if (i > 0) std::memcpy(d, s, static_cast<std::size_t>(i));
#if defined(__SSE2__)
    auto sixteen = [&] {
        _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
        i += 16;
    };
    while (i + 16 <= n && (reinterpret_cast<std::uintptr_t>(d + i) & 63) != 0) sixteen();
    if (const std::int64_t lines = (n - i) / 64; lines > 0) {
        stream_lines()(d + i, s + i, lines);
        i += 64 * lines;
    }
    while (i + 16 <= n) sixteen();
#endif
    if (i < n) std::memcpy(d + i, s + i, static_cast<std::size_t>(n - i));
}

/// Writes elements [j0, j1) of a run whose element j lives at y[j], through make(out, lo, hi), which writes elements
/// [lo, hi) to out[0, hi - lo). `stream` false: straight into y. `stream` true: the elements before y's first 16-byte
/// boundary straight, the rest made in blocks of 4 KiB in a buffer that stays in L1 and copied out with non-temporal
/// stores (stream_bytes); the caller's thread calls stream_fence() before its parallel region ends.
template <class T, class Make>
RIDGELINE_LOOP_INLINE void write_run(T* y, std::int64_t j0, std::int64_t j1, bool stream, Make&& make) {
    if (!stream || j0 >= j1) {
        if (j0 < j1) make(y + j0, j0, j1);
        return;
    }
    constexpr std::int64_t block = 4096 / static_cast<std::int64_t>(sizeof(T));
    std::int64_t j = j0;
    if (const auto mis = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(y + j) & 15); mis != 0) {
        const std::int64_t head = std::min(j1, j + (16 - mis) / static_cast<std::int64_t>(sizeof(T)));
        make(y + j, j, head);
        j = head;
        if ((reinterpret_cast<std::uintptr_t>(y + j) & 15) != 0) {  // elements that never meet a boundary
            make(y + j, j, j1);
            return;
        }
    }
    alignas(64) T buf[block];
    for (; j < j1; j += block) {
        const std::int64_t e = std::min(j1, j + block);
        make(buf, j, e);
        stream_bytes(y + j, buf, (e - j) * static_cast<std::int64_t>(sizeof(T)));
    }
}

/// Writes a whole contiguous output y[0, n) with non-temporal stores, lines whole: the output is cut into blocks of
/// 4 KiB that start on 64-byte line boundaries (after the elements before y's first boundary, written directly), each
/// made in a buffer that stays in L1 and streamed (stream_bytes), so no cache line takes both plain and streaming
/// stores even where the output's rows do not end on a line (pad's rows of 514 floats; write_run, row by row, mixes
/// both kinds on every row's edge lines). The blocks split statically over the OpenMP threads in contiguous ranges:
/// each thread calls cursor_at(e) once, e the first element it writes, and the cursor it returns, `next(out, count)`,
/// writes the next `count` elements of the flat output to out[0, count), in order. Each thread fences its stores.
template <class T, class CursorAt>
void stream_flat(T* y, std::int64_t n, CursorAt&& cursor_at) {
    constexpr std::int64_t block = 4096 / static_cast<std::int64_t>(sizeof(T));
    if (n <= 0) return;
    const auto mis = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(y) & 63);
    const std::int64_t es = static_cast<std::int64_t>(sizeof(T));
    const std::int64_t head = mis == 0 ? 0 : std::min<std::int64_t>(n, (64 - mis) / es);
    const std::int64_t blocks = (n - head + block - 1) / block;
#pragma omp parallel
    {
        const std::int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
        const std::int64_t b0 = blocks * t / threads, b1 = blocks * (t + 1) / threads;
        if (b0 < b1 || (t == 0 && head > 0)) {
            auto next = cursor_at(t == 0 ? 0 : head + b0 * block);
            if (t == 0 && head > 0) next(y, head);
            alignas(64) T buf[block];
            for (std::int64_t b = b0; b < b1; ++b) {
                const std::int64_t e0 = head + b * block, count = std::min(block, n - e0);
                next(buf, count);
                stream_bytes(y + e0, buf, count * static_cast<std::int64_t>(sizeof(T)));
            }
        }
        stream_fence();
    }
}

/// Output dims and each operand's element strides (0: broadcast). coalesce() merges adjacent dimensions that every
/// operand steps through as one (stride[d] == stride[d+1] * dims[d+1]) and drops dimensions of size 1, so the
/// innermost dimension is the longest run every operand reads with one stride.
struct strided_shape {
    dims d;
    std::vector<dims> s;  // s[k][i]: operand k's stride along d[i]

    [[nodiscard]] std::int64_t elements() const {
        std::int64_t n = 1;
        for (const std::int64_t v : d) n *= v;
        return n;
    }
};

inline strided_shape coalesce(const dims& d, const std::vector<dims>& s) {
    strided_shape out{{}, std::vector<dims>(s.size())};
    for (std::size_t i = 0; i < d.size(); ++i) {
        if (d[i] == 1) continue;
        bool merge = !out.d.empty();
        for (std::size_t k = 0; k < s.size() && merge; ++k) merge = out.s[k].back() == s[k][i] * d[i];
        if (merge) {
            out.d.back() *= d[i];
            for (std::size_t k = 0; k < s.size(); ++k) out.s[k].back() = s[k][i];
            continue;
        }
        out.d.push_back(d[i]);
        for (std::size_t k = 0; k < s.size(); ++k) out.s[k].push_back(s[k][i]);
    }
    if (out.d.empty()) {  // one element
        out.d.push_back(1);
        for (auto& sk : out.s) sk.push_back(0);
    }
    return out;
}

/// The rows of an output of dims `d` (every dimension but the innermost), each cut into pieces of at most
/// `max_piece` elements so that a few long rows still split over the threads. Calls fn(index, j0, j1) for every
/// piece, `index` its row's outer index (d.size() - 1 entries), [j0, j1) its columns; the pieces are split statically
/// over the OpenMP threads, each thread advancing its row index by one step (no division per row).
template <class Fn>
void for_each_piece(const dims& d, std::int64_t max_piece, Fn&& fn) {
    const std::size_t outer = d.size() - 1;
    const std::int64_t inner = d[outer];
    std::int64_t rows = 1;
    for (std::size_t i = 0; i < outer; ++i) rows *= d[i];
    const std::int64_t per_row = std::max<std::int64_t>(1, (inner + max_piece - 1) / max_piece);
    const std::int64_t piece = (inner + per_row - 1) / per_row, items = rows * per_row;
    if (items == 0 || inner == 0) return;  // an empty tensor
#pragma omp parallel
    {
        const std::int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
        const std::int64_t lo = items * t / n, hi = items * (t + 1) / n;
        std::vector<std::int64_t> index(outer, 0);
        std::int64_t rest = lo / per_row, p = lo % per_row;
        for (std::size_t i = outer; i-- > 0;) {
            index[i] = rest % d[i];
            rest /= d[i];
        }
        for (std::int64_t item = lo; item < hi; ++item) {
            fn(static_cast<const std::vector<std::int64_t>&>(index), p * piece, std::min(inner, (p + 1) * piece));
            if (++p < per_row) continue;
            p = 0;
            for (std::size_t i = outer; i-- > 0;) {
                if (++index[i] < d[i]) break;
                index[i] = 0;
            }
        }
        stream_fence();  // whether or not fn streamed: one fence a thread
    }
}

/// Pieces of 64 Ki elements: long enough that a piece's fixed cost vanishes, short enough that one row of a
/// coalesced tensor (often the whole tensor) splits over every thread.
inline constexpr std::int64_t loop_piece = 64 * 1024;

/// for_each_piece over a coalesced shape of K operands: fn(off, j0, j1), off[k] operand k's element offset at the
/// start of the row (its innermost stride, sh.s[k].back(), steps along the row).
template <std::size_t K, class Fn>
void for_each_run(const strided_shape& sh, Fn&& fn) {
    const std::size_t outer = sh.d.size() - 1;
    for_each_piece(sh.d, loop_piece, [&](const std::vector<std::int64_t>& index, std::int64_t j0, std::int64_t j1) {
        std::array<std::int64_t, K> off{};
        for (std::size_t i = 0; i < outer; ++i)
            for (std::size_t k = 0; k < K; ++k) off[k] += index[i] * sh.s[k][i];
        fn(static_cast<const std::array<std::int64_t, K>&>(off), j0, j1);
    });
}

}  // namespace ridgeline::cpu::dnnl_detail
