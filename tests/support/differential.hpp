#pragma once
// Differential testing: random valid layers of every op, run on a backend and on the reference loops with the
// same data, compared as verification compares them (relative L2 error against the data type's tolerance).
//
// The generator walks each op's whole parameter space (for conv2d: stride, asymmetric padding, "same"/"valid",
// dilation, groups incl. depthwise, bias, odd sizes, batch > 1; for pools: kernel, stride, padding, dilation,
// ceil_mode, count_include_pad, adaptive output sizes; matmul and add/mul broadcast; norms, softmax, concat,
// flatten, transpose and slice over every axis) and writes every key the layer-string parser accepts, defaults
// spelled out now and then. A case that core::analyze rejects is drawn again, so every case is valid.
//
// Users: tests/backend_api/differential_test.cpp (fixed seed, a CI-sized count), tests/cuda/gpu_test.cpp (the CUDA
// backend on a GPU), the `ridgeline-differential` tool behind bench/differential.sh (many more cases), and
// scripts/pytorch_golden.py (tiny cases for the PyTorch golden file, through `ridgeline-differential --emit`).
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "ridgeline/backend_api/backend.hpp"
#include "ridgeline/profiler/profiler.hpp"
#include "ridgeline/core/model.hpp"

namespace ridgeline::test::differential {

/// One layer string and the shapes of its inputs.
struct layer_case {
    std::string layer;
    std::vector<core::shape> inputs;
    /// Every input is one tensor (add(x, x), concat(x, x)), or for matmul x and its transpose: storage read twice
    /// (docs/conventions.md), as the one-layer graph a layer is timed in keeps it.
    bool same_input = false;
};

/// normal: up to a few thousand elements per tensor (backends take their own code paths);
/// tiny: at most about a hundred elements per tensor (the PyTorch golden file stays small).
enum class size_class { normal, tiny };

/// Every op kind the generator covers, in core::op_kinds() order (all of them).
const std::vector<std::string_view>& kinds();

/// A random valid case of `kind` (rejected draws are drawn again). Throws std::invalid_argument for an unknown kind.
layer_case random_case(std::string_view kind, std::mt19937_64& rng, size_class size = size_class::normal);

/// The one-layer graph of a case (core::single_layer_model: "input" or "input0", "input1", ...; the layer "op"); with
/// same_input, one model input "input" read by each input of the layer (through a transpose "t" for matmul).
core::model_analysis graph_of(const layer_case& c, core::dtype dt);

/// Runs `g` on `b` (outputs poisoned first) and on the reference loops from the same `data`, and compares them as
/// verification does (g.data_type's tolerance). Throws what prepare() throws.
profiler::verification_result verify(backend_api::backend& b, const core::model_analysis& g,
                                     const backend_api::graph_data& data);

enum class outcome { matched, declined, mismatched, failed };
std::string_view to_string(outcome o);

struct case_result {
    outcome what = outcome::matched;
    std::string detail;  // the decline reason, the verification message or the error
    double rel_l2_error = 0;
};

/// Runs the case on `b` (outputs poisoned first) and on the reference loops with the same data (seeded by `seed`).
/// declined: supports() said no or prepare() threw backend_api::unsupported; failed: any other exception.
case_result run_case(backend_api::backend& b, const layer_case& c, core::dtype dt, std::uint64_t seed);

/// Counts per op kind.
struct op_tally {
    int tried = 0, matched = 0, declined = 0, mismatched = 0, failed = 0;
    std::map<std::string, int> decline_reasons;  // reason with the layer's name prefix removed -> count
    std::vector<std::string> problems;  // "<layer> on <inputs>: <detail>" for each mismatch or failure
};

/// Runs `cases_per_op` cases of each kind in `only` (every kind when empty) on `b` in `dt`, from `seed`.
std::map<std::string, op_tally> run_all(backend_api::backend& b, core::dtype dt, int cases_per_op, std::uint64_t seed,
                                        const std::vector<std::string>& only = {});

/// The keys the layer-string parser accepts for `kind` (from its "unknown attribute" error on a valid case).
std::vector<std::string> accepted_keys(std::string_view kind);

/// "1x3x8x8, 3x5" for error messages.
std::string shapes_text(const std::vector<core::shape>& s);

}  // namespace ridgeline::test::differential
