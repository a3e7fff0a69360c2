// Shared helpers of the oneDNN backend (dnnl_common.hpp).
#include "dnnl_common.hpp"

#include <cstring>

#include "ridgeline/backend_api/backend.hpp"
#include "ridgeline/cpu/cpu_backends.hpp"

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

void strided_gather(const unsigned char* src, unsigned char* dst, const dims& d, const dims& s, std::size_t es) {
    const std::size_t rank = d.size();
    std::int64_t rows = 1;
    for (std::size_t i = 0; i + 1 < rank; ++i) rows *= d[i];
    const std::int64_t inner = rank > 0 ? d[rank - 1] : 1, inner_stride = rank > 0 ? s[rank - 1] : 1;
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
        std::int64_t offset = 0, rest = r;
        for (std::size_t i = rank - 1; i-- > 0;) {
            offset += (rest % d[i]) * s[i];
            rest /= d[i];
        }
        unsigned char* out = dst + static_cast<std::size_t>(r * inner) * es;
        for (std::int64_t j = 0; j < inner; ++j)
            std::memcpy(out + static_cast<std::size_t>(j) * es,
                        src + static_cast<std::size_t>(offset + j * inner_stride) * es, es);
    }
}

[[noreturn]] void rethrow(const dnnl::error& e, const std::string& where) {
    if (e.status == dnnl_unimplemented)
        throw backend_api::unsupported(where + ": oneDNN " + dnnl_version() +
                                    " has no implementation for this problem on " + isa_name());
    throw backend_api::backend_error(where + ": oneDNN error " + std::to_string(static_cast<int>(e.status)) + ": " +
                                  e.what());
}

}  // namespace ridgeline::cpu::dnnl_detail
