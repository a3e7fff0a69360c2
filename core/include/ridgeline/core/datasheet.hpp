#pragma once
// Vendor datasheet peaks of devices: what the manufacturer says the hardware can do, next to what
// ridgeline measures (the ceilings). A pure table (core/src/datasheet.cpp) with the source of every row.
//
// Peaks are dense (no structured sparsity: datasheets that print "with sparsity" figures are halved),
// in TFLOP/s (10^12 FLOP/s, one FMA = 2 FLOPs) per data type as ridgeline computes it: fp32 on the FMA
// (CUDA) cores, tf32 / fp16 / bf16 on tensor cores with fp32 accumulation. 0 means the device has no such
// unit (T4 has neither TF32 nor BF16). Memory bandwidth in GB/s (10^9 B/s).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ridgeline/core/dtype.hpp"

namespace ridgeline::core {

struct datasheet_entry {
    std::string_view device;        // "NVIDIA H100 SXM5 80GB"
    /// Names the device reports (CUDA's cudaDeviceProp::name, a CPU's model name) for this entry,
    /// separated by '|'; matched whole, ignoring case, spaces and the characters "-_()" and "(R)"/"(TM)".
    std::string_view name_pattern;
    double fp32_tflops = 0;
    double tf32_tflops = 0;
    double fp16_tflops = 0;
    double bf16_tflops = 0;
    double memory_bandwidth_gbs = 0;
    std::string_view source;        // document and URL of the numbers
    /// A short name to ask for the entry by (`ridgeline predict --to h100`): lower case, unique.
    std::string_view key;
    /// What the op-class models of a GPU need (gpu_model.hpp); 0 where unknown (the CPUs'): streaming
    /// multiprocessors, compute capability (80: A100, 89: Ada, 90: Hopper), L2 cache (MB) and memory (GB).
    int sms = 0;
    int compute_capability = 0;
    double l2_mb = 0;
    double memory_gb = 0;
    std::string_view spec_source;  // where the SM count, the L2 and the memory size come from

    /// Peak of a data type in TFLOP/s; empty when the device has none (0 in the table).
    [[nodiscard]] std::optional<double> peak_tflops(dtype dt) const;
};

/// Every entry, GPUs first.
const std::vector<datasheet_entry>& datasheet();

/// The entry whose display name or one of whose name patterns matches `device_name` (compared as
/// normalize_device_name does); empty when none does.
std::optional<datasheet_entry> find_datasheet(std::string_view device_name);

/// The entry asked for by `name`: its key or its device name (compared as normalize_device_name does), or a
/// prefix of exactly one entry's key or device name. Throws std::invalid_argument when nothing matches (listing
/// the keys) or a prefix matches several (listing those).
const datasheet_entry& datasheet_by_name(std::string_view name);

/// "fp32 67 / tf32 494.5 / fp16 989.5 / bf16 989.5 TFLOP/s dense, 3350 GB/s".
std::string describe_peaks(const datasheet_entry& e);

/// The normal form names are compared in: upper case, "(R)" and "(TM)" dropped, runs of spaces and the
/// characters "-_()" turned into one space, trimmed. "NVIDIA A100-SXM4-80GB" -> "NVIDIA A100 SXM4 80GB".
std::string normalize_device_name(std::string_view name);

}  // namespace ridgeline::core
