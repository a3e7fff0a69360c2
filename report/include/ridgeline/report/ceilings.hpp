#pragma once
// Device ceilings as a table (and the datasheet values when the device is recognised). Their JSON form, their cache
// and the policy of obtaining them are the profiler's (ridgeline/profiler/ceilings_store.hpp).

#include <string>

#include "ridgeline/backend_api/ceilings.hpp"
#include "ridgeline/profiler/ceilings_store.hpp"

namespace ridgeline::report {

/// Human-readable table of the ceilings (and the datasheet values when the device is recognised).
std::string ceilings_table(const backend_api::ceilings& c);

}  // namespace ridgeline::report
