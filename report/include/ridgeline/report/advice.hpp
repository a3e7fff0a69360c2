#pragma once
// Advice: the next step for a layer or a group of layers, where the profile's own evidence supports it. A small set
// of rules in one place, as Nsight Compute's rules name what to look at next; each names the layers it is about, the
// time at stake (what the layers took, from their medians), and why. Disturbed layers are no evidence: no rule reads
// them.
//
// The rules (advise() applies them in this order, then keeps the five with the most time at stake; fold_norm and
// post_op give one advice each, over every layer they apply to):
//   fold_norm       a batch_norm2d whose only input is a conv2d read by nothing else: a deployment engine (ONNX
//                   Runtime, TensorRT, oneDNN's graph API) folds it into the convolution's weights; its time is saved.
//   post_op         an elementwise activation (relu, relu6, gelu, silu, sigmoid, tanh, hardswish) whose only input is
//                   a conv2d or linear read by nothing else: run as the producer's post-op (oneDNN, cuDNN, cuBLASLt
//                   epilogues), its pass over memory is saved.
//   overhead        overhead-bound layers holding at least 20% of the layers' time: their fixed cost, not their work,
//                   sets their time; a larger batch amortises it, and on a GPU graph replay (--graph) removes launches.
//   memory_headroom a memory-bound layer with at least 5% of the time at under 50% of its roof: its kernel leaves
//                   bandwidth unused (ordinary stores read each line before writing it; a layout conversion; a loop
//                   of ridgeline's own).
//   compute_headroom a compute-bound layer with at least 5% of the time at under 50% of its roof: another algorithm or
//                   layout (its implementation is named), or the GEMM ceiling is the realistic roof.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ridgeline/profiler/profiler.hpp"

namespace ridgeline::report {

struct advice {
    std::string rule;                 // "fold_norm", "post_op", "overhead", "memory_headroom", "compute_headroom"
    std::vector<std::string> layers;  // what it is about
    double time_ms = 0;               // their time in this profile (medians summed): what is at stake
    std::string text;                 // one sentence: what to do, and why
};

/// The advice of `r`'s evidence: at most `most`, the most time at stake first.
std::vector<advice> advise(const profiler::profile_result& r, std::size_t most = 5);

/// [{"rule", "layers", "time_ms", "text"}].
nlohmann::json advice_json(const std::vector<advice>& a);

/// "advice:" and one line each (empty where there is none).
std::string advice_text(const std::vector<advice>& a);

}  // namespace ridgeline::report
