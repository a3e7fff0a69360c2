#pragma once
// The explicit, ordered list of backends: the first available one is what `--device auto` picks.
//   1. cuda     cuBLAS/cuDNN on an NVIDIA GPU (when this build has it and a device is present)
//   2. cpu      oneDNN on the host CPU
//   3. cpu-ref  the reference loops (the oracle; never picked by auto)

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ridgeline/backend_api/backend.hpp"

namespace ridgeline::profiler {

struct backend_entry {
    std::string name;
    std::string description;
    bool available = false;
    std::string unavailable_reason;
};

/// Every backend in priority order, with whether it can run here.
std::vector<backend_entry> list_backends();

struct selection {
    std::unique_ptr<backend_api::backend> chosen;
    std::string notice;  // one line for the user when auto chose or fell back ("no CUDA device: ...; using cpu")
};

/// Empty when `device` is a name select_backend knows ("auto", "cpu", "cpu-ref", "cuda", or "cuda:N" with N of 1-4
/// digits), else the one line it would throw ("unknown device \"tpu\" (devices: ...)"): a command-line mistake,
/// which the CLI checks before it runs anything. Whether a known device can be used here is select_backend's.
std::string device_name_error(std::string_view device);

/// `device`: "auto", "cpu", "cpu-ref", "cuda" or "cuda:N". `threads` <= 0: all CPUs.
/// Throws backend_error with one line giving the reason when the device cannot be used
/// (e.g. "no CUDA device: CUDA driver version is insufficient for CUDA runtime version").
selection select_backend(std::string_view device, int threads);

}  // namespace ridgeline::profiler
