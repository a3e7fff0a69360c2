#pragma once
#include <atomic>

#include "ridgeline/backends/backend.hpp"
#include "ridgeline/report/ceilings.hpp"

namespace ridgeline::app {

/// report::obtain_ceilings with the command line's habits: what it says goes to stderr (info lines and
/// warnings) unless `quiet`; the warnings are also returned for the report.
report::obtained_ceilings obtain_ceilings(backends::backend& b, bool recalibrate, bool quick, bool quiet,
                                          const std::atomic<bool>* stop = nullptr);

}  // namespace ridgeline::app
