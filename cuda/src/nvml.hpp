#pragma once
// NVML, the driver's management library (libnvidia-ml.so.1), opened with dlopen where the driver has it: why the
// GPU holds its clocks down at this moment (nvmlDeviceGetCurrentClocksEventReasons; ...ThrottleReasons on drivers
// before 535). Nothing links against it: a machine without NVML loses only the name of a throttle's cause.
// Private to cuda/.
#include <cstdint>
#include <optional>
#include <string>

namespace ridgeline::cuda {

class nvml_clock_reasons {
public:
    /// The device with the CUDA ordinal `ordinal`, found by its PCI bus id (NVML's indices need not be CUDA's).
    explicit nvml_clock_reasons(int ordinal);
    ~nvml_clock_reasons();
    nvml_clock_reasons(const nvml_clock_reasons&) = delete;
    nvml_clock_reasons& operator=(const nvml_clock_reasons&) = delete;

    /// The current reasons' bits (translate.hpp's clock_event_reasons_text names them); empty where NVML is
    /// not there or the query fails.
    [[nodiscard]] std::optional<std::uint64_t> current() const;
    /// "NVML" when it answers, else why not ("no libnvidia-ml.so.1: ...").
    [[nodiscard]] const std::string& status() const { return status_; }

private:
    void* lib_ = nullptr;
    void* device_ = nullptr;
    int (*reasons_)(void*, unsigned long long*) = nullptr;
    int (*shutdown_)() = nullptr;
    std::string status_;
};

}  // namespace ridgeline::cuda
