#pragma once
// A device's own ceilings, measured on it (docs/roofline.md): the roofs a layer's time is judged against.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ridgeline/core/dtype.hpp"

namespace ridgeline::backend_api {

/// The most cache levels a ceilings file may list (a CPU has 3 or 4, a GPU 1 or 2).
inline constexpr std::size_t max_cache_levels = 8;

/// Where a device's ceilings came from: measured in this run, read from the ceilings cache, or a datasheet's numbers
/// (predict's targets). Reports write it by to_string ("measured", "cache", "datasheet").
enum class ceilings_source { measured, cache, datasheet };
std::string_view to_string(ceilings_source s);
/// The source named by `text`; nullopt for a name that is none of them.
std::optional<ceilings_source> parse_ceilings_source(std::string_view text);

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
    /// The DRAM roof in GB/s (10^9 B/s), bytes read plus bytes written, on working sets of the DRAM level
    /// (dram_level_bytes: 4x the sum of the caches): on the CPU the highest of STREAM copy, triad and read over
    /// arrays of that size each and of the sweep's points in that level; on a GPU the highest of the STREAM
    /// kernels and the device-to-device copy.
    double bandwidth_gbs = 0;
    double copy_gbs = 0;   // STREAM copy (CPU loops; GPU: ridgeline's vectorised kernel)
    double triad_gbs = 0;  // STREAM triad (CPU loops; GPU: ridgeline's vectorised kernel); 0 where not measured
    double read_gbs = 0;   // STREAM-style read of three arrays (CPU); 0 where not measured
    double device_copy_gbs = 0;  // the driver's device-to-device copy (GPU: cudaMemcpyAsync); 0 where not measured
    /// The working set of STREAM triad and read, in bytes (three arrays; copy moves two of them): where on the DRAM
    /// level's size axis those kernels' readings lie (dram_roof_gbs(bytes)). 0 where unknown (older files, a GPU,
    /// a datasheet): then the DRAM roof is one number for every working set.
    std::int64_t stream_bytes = 0;
    /// Working-set sweep: bytes of the working set (what one pass of a kernel reads and writes) -> GB/s: the
    /// cache levels, the transition past the last one and the DRAM level.
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
    ceilings_source source = ceilings_source::measured;
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
    /// The smallest working set of the DRAM level, in bytes: 4x the sum of cache_level_bytes (STREAM's rule,
    /// J. McCalpin, "STREAM: Sustainable Memory Bandwidth in High Performance Computers": each array at least 4x
    /// the sum of the caches, so that no cache holds a useful part of it); 4 x last_level_cache_bytes where the
    /// levels are unknown; 0 where neither is known (then every size past the sweep is DRAM).
    [[nodiscard]] std::int64_t dram_level_bytes() const;
    /// The DRAM roof: bandwidth_gbs, or a point of the working-set sweep in the DRAM level that read higher (a
    /// point raised by a recheck, or a file written by hand).
    [[nodiscard]] double dram_roof_gbs() const;
    /// The DRAM roof for a working set of `bytes`: what the DRAM level's readings say a working set of that size gets.
    /// Derived: a working set moves no faster than a smaller one, so each reading (the sweep's points from
    /// dram_level_bytes, STREAM copy at 2/3 of stream_bytes, triad and read at stream_bytes) is a floor for every
    /// smaller size: the envelope is, at each reading's size, the highest reading at that size or above; between
    /// two sizes it is log-linear (as in the transition), past the largest it stays at the largest's. Up to the
    /// smallest reading's size this is dram_roof_gbs(). Why: on the 2-core Zen 4 VM (its L3 most likely holding
    /// more than its nominal size, two vCPUs on two of the host's slices) the DRAM level's sweep point (201 MB) read
    /// 54.9 GB/s where STREAM read over 417 MB read 41.6, and a 538 MB copy-like layer was judged against the 201 MB
    /// point's rate, above what STREAM copy itself reaches (docs/roofline.md). Without stream_bytes, or where bandwidth_gbs is above every
    /// reading (raised by hand or by a merge), dram_roof_gbs() for every size.
    [[nodiscard]] double dram_roof_gbs(std::int64_t bytes) const;
    /// The envelope dram_roof_gbs(bytes) interpolates: (bytes, GB/s) knots, sizes increasing, roofs falling, the first
    /// at the smallest reading's size, the last where the roof reaches its final value (from there on it stays); a
    /// knot inside a flat stretch left out. Empty where dram_roof_gbs(bytes) is flat (no stream_bytes, no DRAM
    /// level, no reading, or bandwidth_gbs above every reading).
    [[nodiscard]] std::vector<std::pair<std::int64_t, double>> dram_roof_knots() const;
    /// Where a working set of `bytes` falls: a cache level (it fits the capacity of cache_level_bytes[i]), the
    /// transition between the last cache level and the DRAM level (judged by neither plateau's points), or DRAM.
    enum class memory_level { cache, transition, dram };
    [[nodiscard]] memory_level level_of(std::int64_t bytes) const;
    /// The roof of cache level `level` (0-based, as cache_level_bytes): the best sweep point of the level (its points
    /// scatter by 10% and more on a shared VM, and a level's roof is the best of them); 0 where it has none.
    [[nodiscard]] double level_roof_gbs(std::size_t level) const;
    /// Memory roof for a working set of `bytes` with a hot cache (the cache-aware roofline: Ilic, Pratas and Sousa,
    /// IEEE CAL 2014), never below the DRAM roof:
    /// - up to the DRAM level (dram_level_bytes), derived from the level roofs: at most each level's capacity of the
    ///   working set comes from that level at its roof, fastest first, the level `bytes` fits serves the rest (past
    ///   the last level, DRAM does): bytes / (sum of bytes_i / roof_i). An upper bound (as if the levels were
    ///   exclusive, with a replacement that keeps what fits): a working set that fits a level reads that level's
    ///   roof, one a little past it somewhat less, never a lower level's whole roof (a 3.1 MB working set past a
    ///   2.1 MB L2 once took the L2 point's 358 GB/s where the L3 gave 209). In the transition (past the last
    ///   level, short of the DRAM level) what the sweep's points there read around `bytes` (log-linear between the
    ///   two around it, the nearest past them) where that is more: a VM's L3 can hold more than its nominal size
    ///   (two vCPUs on two slices of the host's); those points set no other roof;
    /// - in the DRAM level: the DRAM roof for that working set (dram_roof_gbs(bytes)).
    /// Without cache levels (older files, a GPU without an L2 size): the highest of the sweep's two points around
    /// `bytes` and the DRAM roof.
    [[nodiscard]] double bandwidth_for_working_set_gbs(std::int64_t bytes) const;
    /// The sweep points (sizes in working_set_gbs) that bandwidth_for_working_set_gbs(bytes) takes its roof
    /// from, smallest first: the points of every level up to the one `bytes` fits; in the transition those of every
    /// level, the transition's points around `bytes` and the DRAM level's; in DRAM the DRAM level's. Without levels, the two points around `bytes`.
    /// Empty without a sweep.
    [[nodiscard]] std::vector<std::int64_t> sweep_points_for_working_set(std::int64_t bytes) const;
    /// The sweep's points in the transition nearest below and at or above `bytes` (one or two; none without any).
    [[nodiscard]] std::vector<std::int64_t> transition_points_around(std::int64_t bytes) const;
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
/// compute roof the highest of the FMA and GEMM ceilings, the DRAM roof at least each STREAM kernel and each sweep
/// point of the DRAM level, the sweep's sizes and rates positive, at most max_cache_levels growing cache levels,
/// the last no larger than the last-level cache, the dispatch cost at most 1 ms (cold: 100 ms). A cache file that fails this was damaged or
/// edited: it is measured again.
std::string implausible_ceilings(const ceilings& c);

/// Sets peak_gflops[dt] to the highest of fma_peak_gflops[dt] and gemm_gflops[dt] for every data type either
/// has, with its method and spread; called at the end of a backend's measure_ceilings.
void finish_compute_roofs(ceilings& c);

/// Keeps in `now` the higher of each compute and bandwidth ceiling of `now` and `earlier` (same device): a
/// ceiling is what the machine can do, and a measurement that met neighbours the accounting cannot see (a
/// shared last-level cache, memory bandwidth, a sibling hyperthread) must not lower it; and the lower of each
/// dispatch cost, a floor, for the same reason. Spreads and the rest stay `now`'s; method["merged"] says so.
void merge_ceilings(ceilings& now, const ceilings& earlier);

/// (median - min) / min of a measurement's sample times (the spread kept in ceilings::spread); 0 when empty.
double sample_spread(const std::vector<double>& sample_ms);

struct device_info;

/// What identifies a device for the ceilings cache: backend, name, cores, threads, ISA and the library
/// versions and settings in its details (so a new driver or library measures again).
std::string device_fingerprint(const device_info& d);

}  // namespace ridgeline::backend_api
