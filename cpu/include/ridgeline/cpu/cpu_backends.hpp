#pragma once
// The CPU backends. No oneDNN type appears here.
//   "cpu"     : oneDNN primitives (convolution, inner product, matmul, batch/layer normalization, eltwise,
//               pooling, binary, concat, softmax) and a gather for embeddings; fp32, and bf16 where the
//               CPU has AVX-512 (oneDNN 2.6's requirement), "unsupported" otherwise.
//   "cpu-ref" : the reference loops (cpu/reference.hpp), the correctness oracle, also runnable by name.

#include <memory>
#include <string>

#include "ridgeline/backend_api/backend.hpp"

namespace ridgeline::cpu {

/// `threads` <= 0 uses every CPU this process may run on. Throws backend_api::backend_error when oneDNN
/// cannot create a CPU engine. Built only where oneDNN was found (RIDGELINE_HAVE_DNNL in
/// ridgeline/config.hpp); make_dnnl_backend() and dnnl_version() are absent otherwise.
std::unique_ptr<backend_api::backend> make_dnnl_backend(int threads = 0);

std::unique_ptr<backend_api::backend> make_reference_backend(int threads = 0);

/// "2.6.3" (the oneDNN library this build runs with).
std::string dnnl_version();

/// Sets the OpenMP thread count used by oneDNN and the reference loops; <= 0 means all CPUs.
/// Returns the count in effect.
int set_threads(int threads);

/// The host as both CPU backends describe it (cpu_info.hpp): `backend` ("cpu", "cpu-ref"), `threads` in
/// effect, model, cores, ISA flags, memory and last-level cache. `details` is left for the backend to fill.
backend_api::device_info host_device_info(const std::string& backend, int threads);

}  // namespace ridgeline::cpu
