#pragma once
// The Profiler's steps after the layers are measured (internal to profiler/).

#include "ridgeline/profiler/profiler.hpp"

namespace ridgeline::profiler::detail {

/// The twin check (twin_check in profiler.hpp): groups the measured layers by signature, measures every twin of a
/// disagreeing group again, keeps each one's lower median, judges them again against r.ceilings, and records what
/// still disagrees. Recomputes r.sum_of_layers_ms and r.bound_ms.
void check_twins(profile_result& r, backend_api::backend& b, const profile_options& o);

}  // namespace ridgeline::profiler::detail
