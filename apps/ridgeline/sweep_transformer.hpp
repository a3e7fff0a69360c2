#pragma once
// `ridgeline sweep --model M --phase decode` (or --hf-config): the decode roofline. One transformer step profiled per
// batch size (or per --kv-len), each distinct layer measured once: the time per step, tokens per second, where each
// layer class (linear, attention, the KV cache append, the rest) spends its time by bound, and the batch at which
// the step turns compute-bound, here and, with --to, predicted on another device.

#include <optional>
#include <string>
#include <vector>

#include "cli_common.hpp"

namespace ridgeline::app {

struct transformer_sweep_options {
    std::string model, hf_config, phase = "decode", device = "auto", dtype = "fp32", cache = "hot", to;
    std::vector<std::int64_t> batches;   // one of batches and kv_lens has several values
    std::vector<std::int64_t> kv_lens;   // decode: cached tokens per sequence
    std::optional<std::int64_t> seq;    // prefill: tokens per sequence
    int threads = 0;
    bool quick = false, recalibrate = false;
    std::int64_t max_memory_bytes = 0;  // 0: what the device has free
    std::string svg_path, html_path;
};

/// Runs the sweep and writes its report (table or JSON through `out`, the chart to svg/html). Exit code 0, or
/// throws usage_error / core::error.
int run_transformer_sweep(const transformer_sweep_options& s, const output_options& out);

/// Where a sweep turns compute-bound. `compute_leads[i]`: whether point i's step is compute-bound (compute takes more
/// of its layers' time than memory and than overhead), nothing where the step cannot be read (disturbed, not
/// predicted). The first readable point from which every later readable point is compute-bound, or nothing: a lead
/// that flips back (noise on a tiny model) never places the turn at a size a later one contradicts.
std::optional<std::size_t> compute_turn(const std::vector<std::optional<bool>>& compute_leads);

/// "1,8,32" -> sizes (each >= minimum); throws usage_error naming `flag`.
std::vector<std::int64_t> parse_size_list(const std::string& text, const std::string& flag, std::int64_t minimum);

}  // namespace ridgeline::app
