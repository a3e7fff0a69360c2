#pragma once
#include <string>
#include <vector>

#include "ridgeline/core/model.hpp"

namespace ridgeline::test {

/// Analyses one layer string on the given input shapes (fp32 unless told).
inline core::layer_analysis one_layer(const std::string& text, const std::vector<core::shape>& inputs,
                                      core::dtype dt = core::dtype::fp32) {
    return core::analyze(core::single_layer_model(core::parse_op(text), inputs, "layer", "one"), dt).layers.at(0);
}

}  // namespace ridgeline::test
