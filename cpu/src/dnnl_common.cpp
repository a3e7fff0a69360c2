// Shared helpers of the oneDNN backend (dnnl_common.hpp).
#include "dnnl_common.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "dnnl_loops.hpp"

#include "ridgeline/backend_api/backend.hpp"
#include "ridgeline/cpu/cpu_backends.hpp"
#include "ridgeline/cpu/cpu_info.hpp"

namespace ridgeline::cpu::dnnl_detail {

memory::data_type to_dnnl(core::dtype dt) {
    switch (dt) {
        case core::dtype::fp32:
            return memory::data_type::f32;
        case core::dtype::bf16:
            return memory::data_type::bf16;
        case core::dtype::fp16:
            return memory::data_type::f16;
        case core::dtype::tf32:
            break;
    }
    throw backend_api::unsupported("tf32 is a tensor-core format of NVIDIA GPUs; use fp32 on the CPU");
}

dims to_dims(const core::shape& s) { return dims(s.dims().begin(), s.dims().end()); }

dims row_major_strides(const dims& d) {
    dims s(d.size(), 1);
    for (std::size_t i = d.size(); i-- > 1;) s[i - 1] = s[i] * d[i];
    return s;
}

memory::desc plain_md(const dims& d, memory::data_type dt) { return memory::desc(d, dt, row_major_strides(d)); }

memory::desc any_md(const dims& d, memory::data_type dt) { return memory::desc(d, dt, tag::any); }

std::string isa_name() {
    switch (dnnl::get_effective_cpu_isa()) {
        case dnnl::cpu_isa::sse41:
            return "sse41";
        case dnnl::cpu_isa::avx:
            return "avx";
        case dnnl::cpu_isa::avx2:
            return "avx2";
        case dnnl::cpu_isa::avx512_core:
            return "avx512_core";
        case dnnl::cpu_isa::avx512_core_vnni:
            return "avx512_core_vnni";
        case dnnl::cpu_isa::avx512_core_bf16:
            return "avx512_core_bf16";
        case dnnl::cpu_isa::avx512_core_amx:
            return "avx512_core_amx";
        default:
            return "other";
    }
}

memory::desc activation_md(const dims& d, memory::data_type dt) {
    if (d.size() == 4) {
        const bool wide = isa_at_least_avx512();
        const std::int64_t block = wide ? 16 : 8;
        if (d[1] % block == 0) return memory::desc(d, dt, wide ? tag::nChw16c : tag::nChw8c);
    }
    return memory::desc(d, dt, row_major_strides(d));
}

bool isa_at_least_avx512() {
    const auto isa = dnnl::get_effective_cpu_isa();
    return isa == dnnl::cpu_isa::avx512_core || isa == dnnl::cpu_isa::avx512_core_vnni ||
           isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

dims plain_strides(const memory::desc& md) {
    const auto& d = md.data;
    if (d.format_kind != dnnl_blocked || d.format_desc.blocking.inner_nblks != 0 || d.offset0 != 0) return {};
    return dims(d.format_desc.blocking.strides, d.format_desc.blocking.strides + d.ndims);
}

bool is_plain_dense(const memory::desc& md) {
    const dims s = plain_strides(md);
    if (s.empty()) return false;
    return s == row_major_strides(md.dims());
}

namespace {
#if defined(__SSE2__)
void lines_sse2(unsigned char* d, const unsigned char* s, std::int64_t lines) {
    for (std::int64_t b = 0; b < 64 * lines; b += 16)
        _mm_stream_si128(reinterpret_cast<__m128i*>(d + b), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + b)));
}
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx2"))) void lines_avx2(unsigned char* d, const unsigned char* s, std::int64_t lines) {
    for (std::int64_t b = 0; b < 64 * lines; b += 32)
        _mm256_stream_si256(reinterpret_cast<__m256i*>(d + b), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + b)));
}
__attribute__((target("avx512f"))) void lines_avx512(unsigned char* d, const unsigned char* s, std::int64_t lines) {
    for (std::int64_t b = 0; b < 64 * lines; b += 64)
        _mm512_stream_si512(reinterpret_cast<__m512i*>(d + b), _mm512_loadu_si512(s + b));
}
#endif
#if !defined(__SSE2__)
void lines_plain(unsigned char* d, const unsigned char* s, std::int64_t lines) {
    std::memcpy(d, s, static_cast<std::size_t>(64 * lines));
}
#endif
}  // namespace

stream_lines_fn stream_lines() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    static const stream_lines_fn f = __builtin_cpu_supports("avx512f") ? lines_avx512
                                     : __builtin_cpu_supports("avx2")  ? lines_avx2
                                                                       : lines_sse2;
    return f;
#elif defined(__SSE2__)
    return lines_sse2;
#else
    return lines_plain;
#endif
}

std::int64_t& stream_threshold_bytes() {
    static std::int64_t llc = host_cpu().llc_total_bytes > 0 ? host_cpu().llc_total_bytes : (32 << 20);
    return llc;
}

namespace {

/// The strided copy in elements of type U over a coalesced shape of (dst, src): a contiguous run as one copy, a
/// strided one as a loop the compiler vectorises; an output past the last-level cache streamed (write_run).
template <class U>
void strided_copy(const unsigned char* src, unsigned char* dst, const strided_shape& sh) {
    const auto* x = reinterpret_cast<const U*>(src);
    auto* y = reinterpret_cast<U*>(dst);
    const std::int64_t step = sh.s[1].back();
    const bool stream = stream_output(sh.elements() * static_cast<std::int64_t>(sizeof(U)));
    for_each_run<2>(sh, [&](const std::array<std::int64_t, 2>& off, std::int64_t j0, std::int64_t j1) {
        const U* in = x + off[1];
        write_run(y + off[0], j0, j1, stream, [&](U* out, std::int64_t lo, std::int64_t hi) {
            if (step == 1) {
                std::copy(in + lo, in + hi, out);
                return;
            }
#pragma omp simd
            for (std::int64_t j = lo; j < hi; ++j) out[j - lo] = in[j * step];
        });
    });
}

}  // namespace

void strided_gather(const unsigned char* src, unsigned char* dst, const dims& d, const dims& s, std::size_t es) {
    if (es == 2 || es == 4 || es == 8) {
        const strided_shape sh = coalesce(d, {row_major_strides(d), s});
        if (es == 2) strided_copy<std::uint16_t>(src, dst, sh);
        if (es == 4) strided_copy<std::uint32_t>(src, dst, sh);
        if (es == 8) strided_copy<std::uint64_t>(src, dst, sh);
        return;
    }
    // other element sizes: bytes, the element's own bytes an innermost dimension of stride 1
    dims db = d, sb = s;
    for (auto& v : sb) v *= static_cast<std::int64_t>(es);
    db.push_back(static_cast<std::int64_t>(es));
    sb.push_back(1);
    strided_copy<unsigned char>(src, dst, coalesce(db, {row_major_strides(db), sb}));
}

[[noreturn]] void rethrow(const dnnl::error& e, const std::string& where) {
    if (e.status == dnnl_unimplemented)
        throw backend_api::unsupported(where + ": oneDNN " + dnnl_version() +
                                    " has no implementation for this problem on " + isa_name());
    throw backend_api::backend_error(where + ": oneDNN error " + std::to_string(static_cast<int>(e.status)) + ": " +
                                  e.what());
}

}  // namespace ridgeline::cpu::dnnl_detail
