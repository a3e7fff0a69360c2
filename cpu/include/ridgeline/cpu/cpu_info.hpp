#pragma once
// What the host CPU is: read from /proc/cpuinfo, /proc/meminfo and /sys (Linux).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ridgeline::cpu {

struct cpu_info {
    std::string model_name;          // "AMD EPYC 7B13"
    int logical_cpus = 0;            // CPUs this process may run on (sched_getaffinity)
    int physical_cores = 0;          // distinct (package, core) pairs among them
    std::vector<std::string> flags;  // the ISA flags ridgeline cares about: avx2 fma avx512f avx512_bf16 amx_bf16 ...
    std::int64_t memory_bytes = 0;   // MemTotal
    std::int64_t l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0;  // per instance, from /sys cache index
    /// Where the cache sizes come from: "sysfs" (/sys/devices/system/cpu/cpu0/cache), "cpuid" (the C library's
    /// sysconf, which asks the CPU, or on a VM the hypervisor; some report the host socket's whole L3 there: 508 MB
    /// on a 2-vCPU Zen 5 VM whose L3 holds 32 MB), or "none". With "cpuid" the ceilings read the last level's
    /// capacity from their own working-set sweep (cpu_ceilings.hpp).
    std::string cache_source;
    /// The last-level cache this process's CPUs can fill together: the L3 (else L2) size times the number of
    /// distinct instances among the allowed CPUs (/sys .../cache/indexN/shared_cpu_list). A server with 12 L3
    /// slices of 32 MB has 384 MB of it: "beyond the LLC" (STREAM's arrays, the cold-cache flush) means beyond
    /// this, not beyond one slice.
    std::int64_t llc_total_bytes = 0;
    std::string governor;            // scaling_governor of cpu0, "" when unknown
    double max_mhz = 0;              // cpuinfo_max_freq or "cpu MHz", 0 when unknown

    [[nodiscard]] bool has(const std::string& flag) const;
    [[nodiscard]] std::string isa() const;  // flags joined by spaces
};

/// Reads the host once and caches it.
const cpu_info& host_cpu();

/// How many bytes a cold-cache flush writes: twice the last-level cache this process can fill
/// (llc_total_bytes), or twice 32 MiB when that is unknown.
std::size_t cache_flush_bytes();

/// MemAvailable now, in bytes (0 when unknown).
std::int64_t available_memory_bytes();

/// The 1-minute load average from /proc/loadavg (negative when unknown). It lags by a minute and counts
/// ridgeline's own earlier runs: recorded in reports, never a basis for decisions (per-sample stolen time is).
double load_average();

}  // namespace ridgeline::cpu
