#pragma once
#include <string>
#include <vector>

#include "ridgeline/core/model.hpp"

namespace ridgeline::test {

/// Analyses one layer string on the given input shapes (fp32 unless told).
inline core::layer_analysis one_layer(const std::string& text, const std::vector<core::shape>& inputs,
                                      core::dtype dt = core::dtype::fp32) {
    core::op o = core::parse_op(text);
    core::model_builder b("one");
    std::vector<std::string> names;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        names.push_back("x" + std::to_string(i));
        b.input(names.back(), inputs[i], std::holds_alternative<core::embedding>(o));
    }
    b.add("layer", o, names);
    return core::analyze(b.build(), dt).layers.at(0);
}

}  // namespace ridgeline::test
