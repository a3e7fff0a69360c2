#pragma once
// What the oneDNN backend's files (cpu/src/dnnl_backend.cpp, dnnl_graph.cpp, dnnl_graph_ops.cpp) share: data types,
// descriptors and layouts, the CPU's ISA as oneDNN sees it, error translation. Private to cpu/.
#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <string>

#include "ridgeline/core/dtype.hpp"
#include "ridgeline/core/shape.hpp"

namespace ridgeline::cpu::dnnl_detail {

using dnnl::memory;
using tag = dnnl::memory::format_tag;
using dims = dnnl::memory::dims;

/// oneDNN's data type for ours; throws backend_api::unsupported for tf32 (a GPU tensor-core format).
memory::data_type to_dnnl(core::dtype dt);
dims to_dims(const core::shape& s);
dims row_major_strides(const dims& d);
/// Row-major descriptor of `d` (dense).
memory::desc plain_md(const dims& d, memory::data_type dt);
/// "Any" layout: the primitive chooses.
memory::desc any_md(const dims& d, memory::data_type dt);
/// oneDNN's effective ISA ("avx2", "avx512_core_bf16", ...).
std::string isa_name();
bool isa_at_least_avx512();
/// Layout for a 4-D activation given to a graph: the channel-blocked layout oneDNN's convolutions
/// produce on this CPU (nChw16c with AVX-512, nChw8c otherwise) when the channels fill whole blocks, so
/// that a layer timed alone reads its input as it would inside the model; plain row-major otherwise.
memory::desc activation_md(const dims& d, memory::data_type dt);
/// Strides of a non-blocked memory descriptor (plain or strided); empty when blocked or offset.
dims plain_strides(const memory::desc& md);
bool is_plain_dense(const memory::desc& md);
/// Copies the elements of a strided view (dims `d`, element strides `s` from `src`) into dense row-major `dst`:
/// for the views oneDNN cannot describe. The dimensions both step through as one are merged, and each innermost run
/// is copied (contiguous) or looped (strided), split over the OpenMP threads (dnnl_loops.hpp).
void strided_gather(const unsigned char* src, unsigned char* dst, const dims& d, const dims& s, std::size_t es);
/// Translates a oneDNN error into a backend decision: "unimplemented" declines (backend_api::unsupported), anything
/// else fails (backend_api::backend_error).
[[noreturn]] void rethrow(const dnnl::error& e, const std::string& where);

}  // namespace ridgeline::cpu::dnnl_detail
