#pragma once
// Device ceilings as a table (and the datasheet values when the device is recognised). Their JSON form, their cache
// and the policy of obtaining them are the profiler's (ridgeline/profiler/ceilings_store.hpp).

#include <string>

#include "ridgeline/backend_api/ceilings.hpp"
#include "ridgeline/profiler/ceilings_store.hpp"

namespace ridgeline::report {

/// Human-readable table of the ceilings (and the datasheet values when the device is recognised).
std::string ceilings_table(const backend_api::ceilings& c);

/// The DRAM roof by working set (ceilings::dram_roof_knots) in words: "66.4 GB/s up to 201.3 MB, 51.0 GB/s at
/// 250.0 MB, 41.5 GB/s from 285.7 MB" (log-linear between the sizes named); "" where the roof is one number.
std::string dram_roof_by_size(const backend_api::ceilings& c);

}  // namespace ridgeline::report
