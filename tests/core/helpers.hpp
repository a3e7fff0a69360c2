#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ridgeline/core/model.hpp"

namespace ridgeline::test {

/// Analyses one layer string on the given input shapes (fp32 unless told).
inline core::layer_analysis one_layer(const std::string& text, const std::vector<core::shape>& inputs,
                                      core::dtype dt = core::dtype::fp32) {
    return core::analyze(core::single_layer_model(core::parse_op(text), inputs, "layer", "one"), dt).layers.at(0);
}

/// What a test expects of one analysed layer; a field left empty is not checked. The order is the
/// cost's own (params, buffers, macs, flops, bytes), then the output shape.
struct expected_layer {
    std::optional<std::int64_t> params{}, buffers{}, macs{}, flops{}, bytes{};
    std::optional<core::shape> out{};
};

/// Checks every field `want` gives (EXPECT_EQ each, so one call reports every difference).
inline void expect_layer(const core::layer_analysis& l, const expected_layer& want) {
    if (want.params) { EXPECT_EQ(l.cost.params, *want.params); }
    if (want.buffers) { EXPECT_EQ(l.cost.buffers, *want.buffers); }
    if (want.macs) { EXPECT_EQ(l.cost.macs, *want.macs); }
    if (want.flops) { EXPECT_EQ(l.cost.flops, *want.flops); }
    if (want.bytes) { EXPECT_EQ(l.cost.bytes, *want.bytes); }
    if (want.out) { EXPECT_EQ(l.output_shape, *want.out); }
}

}  // namespace ridgeline::test
