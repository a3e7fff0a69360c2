#pragma once
// Ceilings of the host CPU, measured through a CPU backend (see cpu_ceilings.cpp for the methods).

#include <cstdint>
#include <string>
#include <vector>

#include "ridgeline/backend_api/backend.hpp"

namespace ridgeline::cpu {

/// FMA peak per instruction set and data type, a large GEMM per data type through `b`, a working-set sweep into the
/// DRAM level, STREAM copy, triad and read over arrays of 4x the sum of the caches each, and the dispatch overhead
/// of the smallest op. Uses every OpenMP thread; announces each step through options.on_progress.
backend_api::ceilings measure_cpu_ceilings(backend_api::backend& b, const backend_api::ceilings_options& options);

/// The spot check of cached ceilings: the fp32 FMA kernel of the instruction set that set the cached peak, two
/// points of the cached working-set sweep measured as the sweep measured them (a cache level, and the DRAM level's
/// smallest point: at least 4x the sum of the caches), and the dispatch cost of the smallest op through `b`. A
/// short protocol; about 0.3 s. Throws ceilings_interrupted when options.stop is set.
backend_api::ceilings_spot_check spot_check_cpu_ceilings(backend_api::backend& b, const backend_api::ceilings& cached,
                                                      const backend_api::ceilings_options& options);

/// Points of the working-set sweep measured again (sizes in bytes, as in ceilings::working_set_gbs), each
/// the way the sweep measured it (the highest of triad, read and the streaming-store copy on arrays of just
/// that working set) with a protocol of about 0.1 s; GB/s per size, 0 where the samples were disturbed. Throws
/// ceilings_interrupted when options.stop is set.
std::vector<double> remeasure_cpu_working_set(const std::vector<std::int64_t>& sizes,
                                              const backend_api::ceilings_options& options);

/// Where a working-set sweep (bytes, GB/s in ascending size) shows the last cache level ending, for a machine whose OS
/// gives no cache topology (cpu_info::cache_source "cpuid", where a hypervisor may report the host socket's L3): past
/// `below` (the level under it), the largest working set that still reads within 25% of the best point so far. 0 when
/// the sweep shows no such fall. Derived from the sweeps of a 2-vCPU Zen 5 VM without /sys cache topology, whose
/// CPUID says 508 MB of L3: 155-160 GB/s from 3 to 25 MB, then 107 at 50 MB and 87 beyond.
std::int64_t last_level_from_sweep(const std::vector<std::pair<std::int64_t, double>>& sweep, std::int64_t below);

/// "cpu|<model>|<cores> cores|<threads> threads|<isa flags>|oneDNN <version>": the cache key of ceilings.
std::string cpu_fingerprint(int threads);

}  // namespace ridgeline::cpu
