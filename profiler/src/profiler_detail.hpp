#pragma once
// The Profiler's steps after the layers are measured (internal to profiler/).

#include "ridgeline/profiler/profiler.hpp"

namespace ridgeline::profiler::detail {

/// The twin check (twin_check in profiler.hpp): groups the measured layers by signature, measures every twin of a
/// disagreeing group again, keeps each one's lower median, judges them again against r.ceilings, and records what
/// still disagrees. Recomputes r.sum_of_layers_ms and r.bound_ms.
void check_twins(profile_result& r, backend_api::backend& b, const profile_options& o);

/// The forward pass of `analysis`, timed (and traced, replayed as a graph, as `o` asks) into r's end_to_end fields.
void profile_end_to_end(profile_result& r, const core::model_analysis& analysis, backend_api::backend& b,
                        const profile_options& o);

/// profile_options::fusion_savings: fills r.fusion where core::fuse finds groups in r.analysis (fusion_savings.cpp).
void measure_fusion_savings(profile_result& r, backend_api::backend& b, const profile_options& o);

}  // namespace ridgeline::profiler::detail
