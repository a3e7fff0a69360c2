#pragma once
// What a backend's prepare() checks first: that it supports every layer of the graph.

#include "ridgeline/backend_api/backend.hpp"

namespace ridgeline::backend_api {

/// Throws unsupported with the reason of the first layer of `graph` that `b.supports()` declines.
void require_supported(const backend& b, const core::model_analysis& graph);

}  // namespace ridgeline::backend_api
