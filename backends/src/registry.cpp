#include "ridgeline/backends/registry.hpp"

#include "ridgeline/config.hpp"
#include "ridgeline/cpu/cpu_backends.hpp"

namespace ridgeline::backends {

namespace {
const char* no_cuda_build =
    "this build of ridgeline has no CUDA backend (the CUDA toolkit, cuBLAS or cuDNN was not found when it was built)";
}

std::vector<backend_entry> list_backends() {
    std::vector<backend_entry> list;
    list.push_back({"cuda", "cuBLAS and cuDNN on an NVIDIA GPU", false, no_cuda_build});
    list.push_back({"cpu", "oneDNN " + cpu::dnnl_version() + " on the host CPU", true, ""});
    list.push_back({"cpu-ref", "reference loops (the correctness oracle; slow)", true, ""});
    return list;
}

selection select_backend(std::string_view device, int threads) {
    selection s;
    if (device == "auto") {
        s.chosen = cpu::make_dnnl_backend(threads);
        s.notice = std::string("device auto: ") + no_cuda_build + "; using cpu";
        return s;
    }
    if (device == "cpu") {
        s.chosen = cpu::make_dnnl_backend(threads);
        return s;
    }
    if (device == "cpu-ref") {
        s.chosen = cpu::make_reference_backend(threads);
        return s;
    }
    if (device == "cuda" || device.rfind("cuda:", 0) == 0) throw backend_error(std::string("no CUDA device: ") + no_cuda_build);
    throw backend_error("unknown device \"" + std::string(device) + "\" (devices: auto, cpu, cpu-ref, cuda, cuda:N)");
}

}  // namespace ridgeline::backends
