// NVML through dlopen (nvml.hpp). The entry points and their signatures are nvml.h's (NVML API Reference Guide):
// nvmlInit_v2(void), nvmlShutdown(void), nvmlDeviceGetHandleByPciBusId_v2(const char*, nvmlDevice_t*),
// nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t, unsigned long long*); nvmlReturn_t is an int, 0 success.
#include "nvml.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

namespace ridgeline::cuda {

nvml_clock_reasons::nvml_clock_reasons(int ordinal) {
    lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib_) {
        const char* e = dlerror();
        status_ = std::string("no libnvidia-ml.so.1: ") + (e ? e : "dlopen failed");
        return;
    }
    auto sym = [&](const char* name) { return dlsym(lib_, name); };
    auto init = reinterpret_cast<int (*)()>(sym("nvmlInit_v2"));
    auto by_bus = reinterpret_cast<int (*)(const char*, void**)>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
    shutdown_ = reinterpret_cast<int (*)()>(sym("nvmlShutdown"));
    reasons_ = reinterpret_cast<int (*)(void*, unsigned long long*)>(sym("nvmlDeviceGetCurrentClocksEventReasons"));
    if (!reasons_)  // drivers before 535
        reasons_ = reinterpret_cast<int (*)(void*, unsigned long long*)>(sym("nvmlDeviceGetCurrentClocksThrottleReasons"));
    char bus[32] = {};
    if (!init || !by_bus || !shutdown_ || !reasons_) {
        status_ = "libnvidia-ml.so.1 lacks the entry points used";
    } else if (init() != 0) {
        status_ = "nvmlInit_v2 failed";
        shutdown_ = nullptr;
    } else if (cudaDeviceGetPCIBusId(bus, sizeof bus, ordinal) != cudaSuccess || by_bus(bus, &device_) != 0) {
        (void)cudaGetLastError();
        status_ = "NVML does not know CUDA device " + std::to_string(ordinal);
        device_ = nullptr;
    } else {
        status_ = "NVML";
        return;
    }
    reasons_ = nullptr;
}

nvml_clock_reasons::~nvml_clock_reasons() {
    if (shutdown_) shutdown_();
    if (lib_) dlclose(lib_);
}

std::optional<std::uint64_t> nvml_clock_reasons::current() const {
    unsigned long long mask = 0;
    if (!reasons_ || !device_ || reasons_(device_, &mask) != 0) return std::nullopt;
    return static_cast<std::uint64_t>(mask);
}

}  // namespace ridgeline::cuda
