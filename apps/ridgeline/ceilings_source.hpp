#pragma once
#include <atomic>

#include "ridgeline/backend_api/backend.hpp"
#include "ridgeline/report/ceilings.hpp"

namespace ridgeline::app {

/// profiler::obtain_ceilings with the command line's habits: what it says goes to stderr (info lines and
/// warnings) unless `quiet`; the warnings are also returned for the report.
profiler::obtained_ceilings obtain_ceilings(backend_api::backend& b, bool recalibrate, bool quick, bool quiet,
                                          const std::atomic<bool>* stop = nullptr);

}  // namespace ridgeline::app
