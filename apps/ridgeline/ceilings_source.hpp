#pragma once
#include <atomic>

#include "ridgeline/backends/backend.hpp"

namespace ridgeline::app {

/// The device's ceilings: from the cache when present (unless `recalibrate`), else measured once now
/// (saying so on stderr unless `quiet`) and saved to the cache.
/// `stop` (may be null): a flag a signal handler sets; the measurement then throws
/// backends::ceilings_interrupted and nothing is cached.
backends::ceilings obtain_ceilings(backends::backend& b, bool recalibrate, bool quick, bool quiet,
                                   const std::atomic<bool>* stop = nullptr);

}  // namespace ridgeline::app
