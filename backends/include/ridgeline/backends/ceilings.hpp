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
    /// The compute roof per data type ("fp32", "bf16", ...), in GFLOP/s: the highest measured compute ceiling
    /// of the data type (set by finish_compute_roofs: the FMA kernel's issue peak where the CPU has one,
    /// else the library GEMM). This is the roof that judges layers and defines %roof.
    std::map<std::string, double> peak_gflops;
    /// What a large library GEMM attains per data type (oneDNN matmul, cuBLAS), in GFLOP/s: a lower ceiling.
    std::map<std::string, double> gemm_gflops;
    /// Instruction-issue peak per data type (CPU: a register-resident FMA kernel), in GFLOP/s.
    std::map<std::string, double> fma_peak_gflops;
    /// The FMA kernel per instruction set ("fp32 fma128", "fp32 avx2", "fp32 avx512", "bf16 avx512_bf16").
    std::map<std::string, double> fma_peak_by_isa_gflops;
    /// Memory roof in GB/s (10^9 B/s), bytes read plus bytes written, far beyond the last-level cache: the
    /// higher of STREAM copy and triad on the CPU, of the STREAM kernels and the device-to-device copy on a GPU.
    double bandwidth_gbs = 0;
    double copy_gbs = 0;   // STREAM copy (CPU loops; GPU: ridgeline's vectorised kernel)
    double triad_gbs = 0;  // STREAM triad (CPU loops; GPU: ridgeline's vectorised kernel); 0 where not measured
    double read_gbs = 0;   // STREAM-style read of three arrays (CPU); 0 where not measured
    double device_copy_gbs = 0;  // the driver's device-to-device copy (GPU: cudaMemcpyAsync); 0 where not measured
    /// Working-set sweep: bytes of the working set -> GB/s (shows the cache levels).
    std::vector<std::pair<std::int64_t, double>> working_set_gbs;
    /// Time of the smallest op through the backend (dispatch cost), in ms.
    double dispatch_overhead_ms = 0;
    /// The same smallest op timed with a cold cache (the last-level cache flushed before each run, one run per
    /// sample), in ms: the fixed cost of a single run after other work, which --cache cold pays on every sample
    /// (threads woken, TLB and prefetchers cold). 0 where not measured (older cache files, the CUDA backend).
    double cold_dispatch_overhead_ms = 0;
    /// What one run after a flush moves per second (GB/s): an elementwise op over 8 MiB with the last-level cache
    /// flushed before each run, less the cold dispatch cost. Below the STREAM roof: a single run cannot hide its
    /// first-touch misses behind a long stream. 0 where not measured.
    double cold_bandwidth_gbs = 0;
    /// GPU: an empty kernel's launch-to-completion time, in ms (0 on the CPU).
    double launch_overhead_ms = 0;
    std::int64_t last_level_cache_bytes = 0;
    /// The capacity of each cache level that the measuring threads can fill, in bytes, smallest level first
    /// (CPU: L1d, L2, L3 from /sys; a per-core level counts once per thread, up to the cores allowed, a shared
    /// one once per instance; GPU: L2). Groups the working-set sweep into levels; empty where unknown (older
    /// cache files), and then the sweep's points are used one by one.
    std::vector<std::int64_t> cache_level_bytes;
    std::string measured_at;        // ISO 8601 UTC
    std::string ridgeline_version;  // of the build that measured them
    std::string source = "measured";  // "measured" now, or "cache" (read from the cache file)
    /// How each number was obtained ("peak_gflops.fp32": "oneDNN sgemm 2048^3, best of 10").
    std::map<std::string, std::string> method;
    /// The relative spread of each ceiling's clean samples, (median - best) / best of the sample times, by the
    /// ceiling's key ("peak_gflops.fp32", "fma_peak.fp32 avx2", "gemm.fp32", "copy", "triad", "working_set"):
    /// how much the ceiling itself moves from sample to sample. The tolerances of the roofs come from it.
    std::map<std::string, double> spread;

    // what the measurement was taken under (the cache keeps it)
    bool quick = false;          // smaller problems and fewer samples (--quick): never answers a full request
    bool disturbed = false;      // a ceiling could not collect clean samples: never cached
    std::vector<std::string> disturbed_ceilings;  // which ones
    double stolen_fraction = 0;  // the largest stolen fraction of a ceiling's kept samples
    double load_average = -1;    // the 1-minute load average when measured (-1: unknown)

    /// Ridge point of a data type: peak_gflops / bandwidth_gbs, in FLOP per byte; empty when unknown.
    [[nodiscard]] std::optional<double> ridge_point(core::dtype dt) const;
    /// Compute roof of a data type (peak_gflops); empty when not measured.
    [[nodiscard]] std::optional<double> compute_roof_gflops(core::dtype dt) const;
    /// Memory roof for a working set of `bytes` with a hot cache: the bandwidth of the cache level the data fits
    /// in (the cache-aware roofline: Ilic, Pratas and Sousa, IEEE CAL 2014). That is the highest of
    /// - the working-set sweep's bandwidths at the two sizes around `bytes` (the sweep's step must not put a
    ///   roof under the level the data fits);
    /// - every sweep point of the same cache level (cache_level_bytes): the points of one level scatter by
    ///   10% and more on a shared VM, and a level's roof is the best of them, not the one nearest in size;
    /// - bandwidth_gbs (the DRAM roof).
    [[nodiscard]] double bandwidth_for_working_set_gbs(std::int64_t bytes) const;
    /// The sweep points (sizes in working_set_gbs) that bandwidth_for_working_set_gbs(bytes) takes its roof
    /// from: the two around `bytes` and every point of its cache level, smallest first; empty without a sweep.
    [[nodiscard]] std::vector<std::int64_t> sweep_points_for_working_set(std::int64_t bytes) const;
    /// What a hot cache holds of a working set that is read over and over, in bytes, as measured: the largest size
    /// of the working-set sweep that still moved faster than the DRAM roof (by more than the bandwidth tolerance),
    /// at most last_level_cache_bytes where that is known; 0 where no size of the sweep beat DRAM (the cache holds
    /// nothing a pass could reuse). Without a sweep, last_level_cache_bytes; -1 where neither is known. Below the
    /// last level's nominal size on a shared machine: other tenants and the OS hold part of it (the Intel Xeon VM
    /// here: 201 MB at cache speed one day, 100 MB the next, against a 260 MiB L3).
    [[nodiscard]] std::int64_t hot_cache_capacity_bytes() const;
    /// The fixed cost of a sample: the cold dispatch overhead when `cold` and it was measured, else the hot one.
    [[nodiscard]] double dispatch_ms(bool cold) const {
        return cold && cold_dispatch_overhead_ms > 0 ? cold_dispatch_overhead_ms : dispatch_overhead_ms;
    }
    /// What one run after a flush moves per second: cold_bandwidth_gbs where measured, else the DRAM roof.
    [[nodiscard]] double cold_run_bandwidth_gbs() const { return cold_bandwidth_gbs > 0 ? cold_bandwidth_gbs : bandwidth_gbs; }
    /// The tolerance of the compute roof of `dt` (core::roof_tolerance of its spread).
    [[nodiscard]] double compute_tolerance(core::dtype dt) const;
    [[nodiscard]] double compute_tolerance(const std::string& dtype_name) const;
    /// The tolerance of the bandwidth roofs (the largest spread of the STREAM kernels, copy, triad and read, and
    /// the sweep).
    [[nodiscard]] double bandwidth_tolerance() const;
};

/// Why `c` cannot be true ceilings of a device, or "" when it can: every roof positive and finite and within
/// what any device of today could reach (compute at most 10^7 GFLOP/s, bandwidth at most 10^6 GB/s), the
/// compute roof the highest of the FMA and GEMM ceilings, the DRAM roof at least each STREAM kernel, the sweep's
/// sizes and rates positive, the dispatch cost between 0 and 1 s. A cache file that fails this was damaged or
/// edited: it is measured again.
std::string implausible_ceilings(const ceilings& c);

/// Sets peak_gflops[dt] to the highest of fma_peak_gflops[dt] and gemm_gflops[dt] for every data type either
/// has, with its method and spread; called at the end of a backend's measure_ceilings.
void finish_compute_roofs(ceilings& c);

/// Keeps in `now` the higher of each compute and bandwidth ceiling of `now` and `earlier` (same device): a
/// ceiling is what the machine can do, and a measurement that met neighbours the accounting cannot see (a
/// shared last-level cache, memory bandwidth, a sibling hyperthread) must not lower it. The dispatch overhead,
/// spreads and the rest stay `now`'s; method["merged"] says so.
void merge_ceilings(ceilings& now, const ceilings& earlier);

/// (median - min) / min of a measurement's sample times (the spread kept in ceilings::spread); 0 when empty.
double sample_spread(const std::vector<double>& sample_ms);

struct device_info;

/// What identifies a device for the ceilings cache: backend, name, cores, threads, ISA and the library
/// versions and settings in its details (so a new driver or library measures again).
std::string device_fingerprint(const device_info& d);

}  // namespace ridgeline::backends
