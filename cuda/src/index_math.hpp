#pragma once
// Index arithmetic of the backend's own kernels (kernels.cu), in functions that compile for the host and the
// device alike, so that host tests (tests/cuda/index_math_test.cpp) check what the kernels compute: the split
// of a buffer into a scalar head, 16-byte vectors and a scalar tail; 32-bit division by a divisor fixed at
// launch (a multiply and a shift, no division instruction); the broadcast and strided index maps; the bytes a
// STREAM kernel moves.
//
// Why (issue "CUDA backend: kernels that can reach an H200's memory roof"): a thread that moves one 2-byte
// element per loop step keeps about 4 KB in flight per SM, where an H200 needs about 25 KB (4.8 TB/s x ~0.65 us
// over 132 SMs); 16-byte loads move 8 bf16 at once. A 64-bit division costs tens of instructions per element;
// the divisors of a launch are known on the host, so each becomes a multiply-high and a shift (Granlund and
// Montgomery, "Division by invariant integers using multiplication", PLDI 1994; Hacker's Delight, 2nd ed.,
// section 10-9), exact for every 32-bit dividend.
#include <cstdint>

#ifdef __CUDACC__
#define RIDGELINE_HD __host__ __device__ __forceinline__
#else
#define RIDGELINE_HD inline
#endif

namespace ridgeline::cuda::kernels {

/// Bytes per vector load or store (float4, 8 x bf16/fp16 as uint4).
inline constexpr int vector_bytes = 16;

/// A buffer of n elements of `elem_bytes` split for vector access: `head` elements one by one until the first
/// 16-byte boundary, `vectors` vectors of vector_bytes / elem_bytes elements, then `tail` elements one by one.
/// Every buffer a kernel reads or writes must be split the same way: when their addresses differ modulo 16,
/// no vector access is possible and everything is `head` (a scalar loop).
struct vector_split {
    std::int64_t head = 0;
    std::int64_t vectors = 0;
    std::int64_t tail = 0;
    int width = 1;  // elements per vector
};

/// The split of n elements at `address` (and at every address in `others` with the same offset modulo 16).
RIDGELINE_HD vector_split split_for_vectors(std::uint64_t address, std::int64_t n, int elem_bytes,
                                             const std::uint64_t* others = nullptr, int count = 0) {
    vector_split s;
    s.width = vector_bytes / elem_bytes;
    const std::uint64_t misalign = address % vector_bytes;
    bool same = misalign % static_cast<std::uint64_t>(elem_bytes) == 0;
    for (int i = 0; i < count; ++i) same = same && others[i] % vector_bytes == misalign;
    if (!same || n <= 0) {
        s.head = n > 0 ? n : 0;
        return s;
    }
    const std::int64_t to_boundary =
        misalign == 0 ? 0 : static_cast<std::int64_t>((vector_bytes - misalign) / static_cast<std::uint64_t>(elem_bytes));
    s.head = to_boundary < n ? to_boundary : n;
    const std::int64_t rest = n - s.head;
    s.vectors = rest / s.width;
    s.tail = rest - s.vectors * s.width;
    return s;
}

/// 32-bit unsigned division by a divisor fixed at launch: q = mulhi(n, multiplier) >> shift, exact for every
/// n < 2^32 (the round-up method: shift = ceil(log2 d), multiplier = floor(2^(32 + shift) / d) - 2^32 + 1, and
/// q = (t + ((n - t) >> 1)) >> (shift - 1) with t = mulhi(n, multiplier), which avoids a 33-bit multiplier).
struct fast_divider {
    std::uint32_t divisor = 1;
    std::uint32_t multiplier = 0;
    std::uint32_t shift = 0;

    fast_divider() = default;
    /// `d` >= 1.
    explicit fast_divider(std::uint32_t d) : divisor(d) {
        std::uint32_t l = 0;
        while (l < 32 && (std::uint64_t{1} << l) < d) ++l;
        shift = l;
        multiplier = static_cast<std::uint32_t>(((std::uint64_t{1} << 32) * ((std::uint64_t{1} << l) - d)) / d + 1);
    }
    RIDGELINE_HD std::uint32_t div(std::uint32_t n) const {
        if (divisor == 1) return n;
#ifdef __CUDA_ARCH__
        const std::uint32_t t = __umulhi(n, multiplier);
#else
        const auto t = static_cast<std::uint32_t>((static_cast<std::uint64_t>(n) * multiplier) >> 32);
#endif
        return (t + ((n - t) >> 1)) >> (shift - 1);
    }
    /// (quotient, remainder)
    RIDGELINE_HD void divmod(std::uint32_t n, std::uint32_t& q, std::uint32_t& r) const {
        q = div(n);
        r = n - q * divisor;
    }
};

inline constexpr int fast_max_rank = 8;

/// A row-major walk over `rank` output dims with 32-bit indices: element i reads offset sum_d index_d x
/// stride_a[d] of operand a (and stride_b[d] of b). Made on the host from an index_map whose element count and
/// largest offsets fit in 31 bits (fits_32_bits); dims[d] is a fast_divider.
struct fast_index_map {
    int rank = 0;
    fast_divider dims[fast_max_rank];
    std::uint32_t stride_a[fast_max_rank] = {};
    std::uint32_t stride_b[fast_max_rank] = {};

    /// The offsets of output element i in a and b.
    RIDGELINE_HD void offsets(std::uint32_t i, std::uint32_t& oa, std::uint32_t& ob) const {
        oa = 0;
        ob = 0;
        std::uint32_t rest = i;
        for (int d = rank - 1; d >= 0; --d) {
            std::uint32_t q = 0, idx = 0;
            dims[d].divmod(rest, q, idx);
            rest = q;
            oa += idx * stride_a[d];
            ob += idx * stride_b[d];
        }
    }
};

/// Whether a walk of n elements over `dims` with these strides (each of `rank` entries) keeps every index and
/// offset below 2^31: the kernels then run on fast_index_map, else on 64-bit indices.
RIDGELINE_HD bool fits_32_bits(std::int64_t n, int rank, const std::int64_t* dims, const std::int64_t* stride_a,
                                const std::int64_t* stride_b) {
    const std::int64_t limit = std::int64_t{1} << 31;
    if (n < 0 || n >= limit || rank > fast_max_rank) return false;
    std::int64_t max_a = 0, max_b = 0;
    for (int d = 0; d < rank; ++d) {
        if (dims[d] < 1 || dims[d] >= limit) return false;
        if (stride_a[d] < 0 || stride_b[d] < 0) return false;
        // the largest offset: sum of (dim - 1) x stride, checked against the limit term by term
        if (stride_a[d] > 0 && (dims[d] - 1) > (limit - 1 - max_a) / stride_a[d]) return false;
        if (stride_b[d] > 0 && (dims[d] - 1) > (limit - 1 - max_b) / stride_b[d]) return false;
        max_a += (dims[d] - 1) * stride_a[d];
        max_b += (dims[d] - 1) * stride_b[d];
    }
    return true;
}

/// The STREAM kernels (McCalpin's copy c = a and triad a = b + s x c): bytes one pass over n elements moves,
/// counting each array read or written once, as STREAM does (no write-allocate traffic).
/// STREAM read (a sum of a, ridgeline's addition, as the CPU's read kernel): one array read, nothing written.
enum class stream_kind { copy, triad, read };
RIDGELINE_HD std::int64_t stream_bytes(stream_kind k, std::int64_t n, int elem_bytes) {
    return (k == stream_kind::read ? 1 : k == stream_kind::copy ? 2 : 3) * n * elem_bytes;
}

/// Whether a reduction runs one block of threads per output (block_reduce) rather than one thread per output
/// walking its inputs alone: where its inputs per output are many (>= 256: a block's 256 threads each take one or
/// more) and its outputs few (<= 65,536: one thread each would fill less than a quarter of an H100's 270,336
/// resident threads, 132 SMs x 2,048, and each thread's serial walk would set the time). Derived, not measured.
RIDGELINE_HD bool reduce_per_block(std::int64_t out_n, std::int64_t red_n) {
    return red_n >= 256 && out_n <= 65536;
}

/// Blocks of `threads` for a grid-stride streaming kernel over `work` items: one wave of the blocks that can be
/// resident at once (`resident_per_sm`, from cudaOccupancyMaxActiveBlocksPerMultiprocessor for that kernel: its
/// registers decide it, 4-6 blocks of 256 for 36-58 registers on sm_90, not the 8 a 2,048-thread SM would hold),
/// times the SMs; fewer for small work, at least 1. A grid of more blocks than fit runs a thin last wave.
inline std::int64_t stream_grid(std::int64_t work, int threads, int resident_per_sm, int sms) {
    const std::int64_t wanted = (work + threads - 1) / threads;
    const std::int64_t wave = static_cast<std::int64_t>(resident_per_sm < 1 ? 1 : resident_per_sm) * (sms < 1 ? 1 : sms);
    return wanted < 1 ? 1 : wanted < wave ? wanted : wave;
}

}  // namespace ridgeline::cuda::kernels
