#pragma once
#include "ridgeline/backends/backend.hpp"

namespace ridgeline::app {

/// The device's ceilings: from the cache when present (unless `recalibrate`), else measured once now
/// (saying so on stderr unless `quiet`) and saved to the cache.
backends::ceilings obtain_ceilings(backends::backend& b, bool recalibrate, bool quick, bool quiet);

}  // namespace ridgeline::app
