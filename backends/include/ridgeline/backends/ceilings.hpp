#pragma once
// A device's own ceilings, measured on it (docs/roofline.md): the roofs a layer's time is judged against.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ridgeline/core/dtype.hpp"

namespace ridgeline::backends {

struct ceilings {
    std::string backend;      // "cpu", "cuda:0"
    std::string device_name;  // the device's own name (CPU model name, GPU name): the datasheet lookup key
    std::string fingerprint;  // what identifies the device for the cache (CPU model, cores, ISA / GPU name, driver)
    /// Compute roof per data type ("fp32", "bf16", ...): what a large GEMM attains, in GFLOP/s.
    std::map<std::string, double> peak_gflops;
    /// Instruction-issue peak per data type (CPU: a register-resident FMA kernel), in GFLOP/s.
    std::map<std::string, double> fma_peak_gflops;
    /// The FMA kernel per instruction set ("fp32 fma128", "fp32 avx2", "fp32 avx512", "bf16 avx512_bf16").
    std::map<std::string, double> fma_peak_by_isa_gflops;
    /// Memory roof in GB/s (10^9 B/s), bytes read plus bytes written: STREAM triad on the CPU,
    /// device-to-device copy on a GPU.
    double bandwidth_gbs = 0;
    double copy_gbs = 0;   // STREAM copy (CPU) / device-to-device copy (GPU)
    double triad_gbs = 0;  // STREAM triad (CPU); 0 where not measured
    /// Working-set sweep: bytes of the working set -> GB/s (shows the cache levels).
    std::vector<std::pair<std::int64_t, double>> working_set_gbs;
    /// Time of the smallest op through the backend (dispatch cost), in ms.
    double dispatch_overhead_ms = 0;
    /// GPU: an empty kernel's launch-to-completion time, in ms (0 on the CPU).
    double launch_overhead_ms = 0;
    std::int64_t last_level_cache_bytes = 0;
    std::string measured_at;        // ISO 8601 UTC
    std::string ridgeline_version;  // of the build that measured them
    std::string source = "measured";  // "measured" now, or "cache" (read from the cache file)
    /// How each number was obtained ("peak_gflops.fp32": "oneDNN sgemm 2048^3, median of 10").
    std::map<std::string, std::string> method;

    /// Ridge point of a data type: peak_gflops / bandwidth_gbs, in FLOP per byte; empty when unknown.
    [[nodiscard]] std::optional<double> ridge_point(core::dtype dt) const;
    /// Compute roof of a data type; empty when not measured.
    [[nodiscard]] std::optional<double> compute_roof_gflops(core::dtype dt) const;
    /// Memory roof for a working set of `bytes` with a hot cache: the working-set sweep's bandwidth at
    /// the smallest measured size >= bytes (the cache level the data fits in), else bandwidth_gbs.
    [[nodiscard]] double bandwidth_for_working_set_gbs(std::int64_t bytes) const;
};

struct device_info;

/// What identifies a device for the ceilings cache: backend, name, cores, threads, ISA and the library
/// versions and settings in its details (so a new driver or library measures again).
std::string device_fingerprint(const device_info& d);

}  // namespace ridgeline::backends
