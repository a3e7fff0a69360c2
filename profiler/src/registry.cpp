#include "ridgeline/profiler/registry.hpp"

#include <cctype>
#include <exception>
#include <fstream>

#include "ridgeline/config.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/cpu/cpu_backends.hpp"
#if RIDGELINE_HAVE_CUDA
#include "ridgeline/cuda/cuda_backend.hpp"
#endif

namespace ridgeline::profiler {

using backend_api::backend;
using backend_api::backend_error;

namespace {

#if !RIDGELINE_HAVE_CUDA
const char* no_cuda_build =
    "this build of ridgeline has no CUDA backend (the CUDA toolkit, cuBLAS or cuDNN was not found when it was built)";
#endif
#if !RIDGELINE_HAVE_DNNL
const char* no_dnnl_build =
    "this build of ridgeline has no oneDNN backend (oneDNN was not found when it was built); use cpu-ref";
#endif

/// The start of the reason when the machine has no NVIDIA GPU at all (a laptop): no NVIDIA kernel driver.
constexpr const char* no_gpu_found = "no NVIDIA GPU found";

/// Why the cuda backend cannot run here, as one line starting "no CUDA device: "; empty when it can.
std::string cuda_unavailable() {
#if RIDGELINE_HAVE_CUDA
    if (cuda::device_count() > 0) return {};
    return "no CUDA device: " + cuda::device_count_error();
#else
    // without an NVIDIA driver the build's lack of a CUDA backend is beside the point
    if (!std::ifstream("/proc/driver/nvidia/version").good())
        return std::string("no CUDA device: ") + no_gpu_found + " (no NVIDIA driver is loaded)";
    return std::string("no CUDA device: ") + no_cuda_build;
#endif
}

std::unique_ptr<backend> make_cpu(int threads) {
#if RIDGELINE_HAVE_DNNL
    return cpu::make_dnnl_backend(threads);
#else
    (void)threads;
    throw backend_error(no_dnnl_build);
#endif
}

/// Whether "cuda:" is followed by a device number (1-4 digits).
bool cuda_digits(std::string_view digits) {
    bool ok = !digits.empty() && digits.size() <= 4;
    for (char c : digits) ok = ok && std::isdigit(static_cast<unsigned char>(c));
    return ok;
}

/// "cuda" -> 0, "cuda:N" -> N (a name device_name_error accepts).
int cuda_ordinal(std::string_view device) { return device == "cuda" ? 0 : std::stoi(std::string(device.substr(5))); }

}  // namespace

std::vector<backend_entry> list_backends() {
    std::vector<backend_entry> list;
    const std::string cuda_reason = cuda_unavailable();
    list.push_back({"cuda", "cuBLAS and cuDNN on an NVIDIA GPU", cuda_reason.empty(), cuda_reason});
#if RIDGELINE_HAVE_DNNL
    list.push_back({"cpu", "oneDNN " + cpu::dnnl_version() + " on the host CPU", true, ""});
#else
    list.push_back({"cpu", "oneDNN on the host CPU", false, no_dnnl_build});
#endif
    list.push_back({"cpu-ref", "reference loops (the correctness oracle; slow)", true, ""});
    return list;
}

std::string device_name_error(std::string_view device) {
    if (device == "auto" || device == "cpu" || device == "cpu-ref" || device == "cuda") return "";
    if (device.rfind("cuda:", 0) == 0)
        return cuda_digits(device.substr(5)) ? ""
                                             : "unknown device \"" + core::printable(device) +
                                                   "\" (cuda:N takes a device number, e.g. cuda:0)";
    return "unknown device \"" + core::printable(device) + "\" (devices: auto, cpu, cpu-ref, cuda, cuda:N)";
}

selection select_backend(std::string_view device, int threads) {
    if (const std::string e = device_name_error(device); !e.empty()) throw backend_error(e);
    selection s;
    if (device == "auto") {
        std::string cuda_reason = cuda_unavailable();
#if RIDGELINE_HAVE_CUDA
        if (cuda_reason.empty()) {
            try {
                s.chosen = cuda::make_cuda_backend(0);
                s.notice = "device auto: using cuda:0 (" + s.chosen->device().name + ")";
                return s;
            } catch (const std::exception& e) {  // a device that cannot be initialised: fall back, saying why
                cuda_reason = std::string("cuda:0 could not be initialised: ") + e.what();
            }
        }
#endif
        // a machine without an NVIDIA GPU is the normal laptop case: say so plainly, not as a CUDA error
        std::string why = cuda_reason;
        if (why.find(no_gpu_found) != std::string::npos) why = no_gpu_found;
#if RIDGELINE_HAVE_DNNL
        s.chosen = cpu::make_dnnl_backend(threads);
        s.notice = "device auto: " + why + "; using cpu";
#else
        s.chosen = cpu::make_reference_backend(threads);
        s.notice = "device auto: " + why + "; no oneDNN in this build; using cpu-ref (the slow reference loops)";
#endif
        return s;
    }
    if (device == "cpu") {
        s.chosen = make_cpu(threads);
        return s;
    }
    if (device == "cpu-ref") {
        s.chosen = cpu::make_reference_backend(threads);
        return s;
    }
    if (device == "cuda" || device.rfind("cuda:", 0) == 0) {
        const int ordinal = cuda_ordinal(device);
        const std::string cuda_reason = cuda_unavailable();
        if (!cuda_reason.empty()) throw backend_error(cuda_reason);
#if RIDGELINE_HAVE_CUDA
        s.chosen = cuda::make_cuda_backend(ordinal);
        return s;
#else
        (void)ordinal;
#endif
    }
    throw backend_error("device \"" + std::string(device) + "\" is not in this build");  // unreachable with CUDA
}

}  // namespace ridgeline::profiler
