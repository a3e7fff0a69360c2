// The reference loops against PyTorch: tests/data/golden/pytorch_reference.json holds PyTorch 1.13's outputs (computed
// in float64) for 460 tiny cases of every op, drawn by the differential generator (scripts/pytorch_golden.py writes it,
// with Debian's python3-torch; CI only reads it). Inputs and weights are multiples of 1/8 and 1/16, exact in float.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <set>

#include "ridgeline/core/model.hpp"
#include "ridgeline/cpu/reference.hpp"

using namespace ridgeline;

namespace {

const nlohmann::json& golden() {
    static const nlohmann::json doc = [] {
        std::ifstream f(std::string(RIDGELINE_SOURCE_DIR) + "/tests/data/golden/pytorch_reference.json");
        if (!f) throw std::runtime_error("tests/data/golden/pytorch_reference.json is missing");
        return nlohmann::json::parse(f);
    }();
    return doc;
}

/// A stored tensor: numbers, or "inf" / "-inf" / "nan" where PyTorch's value is not finite.
backend_api::host_tensor tensor_of(const nlohmann::json& j) {
    backend_api::host_tensor t{core::shape(j.at("dims").get<std::vector<std::int64_t>>()), {}};
    for (const auto& v : j.at("values"))
        t.data.push_back(v.is_string() ? std::stof(v.get<std::string>()) : v.get<float>());
    return t;
}

}  // namespace

// Every case: ridgeline infers PyTorch's output shape and the reference's output is within a relative L2 error of
// 1e-6 of PyTorch's float64 answer (the reference accumulates in double; float32 rounding of the output alone is
// 6e-8); infinities must be the same infinity.
TEST(Golden, ReferenceAgreesWithPyTorch) {
    const auto& cases = golden().at("cases");
    ASSERT_GE(cases.size(), 400U);
    std::set<std::string> kinds;
    for (const auto& c : cases) {
        const std::string layer = c.at("layer");
        SCOPED_TRACE(layer);
        const core::op o = core::parse_op(layer, "op");
        kinds.insert(std::string(core::kind_of(o)));
        std::vector<backend_api::host_tensor> inputs;
        std::vector<core::shape> shapes;
        for (const auto& in : c.at("inputs")) {
            inputs.push_back(tensor_of(in));
            shapes.push_back(inputs.back().dims);
        }
        // the layer's own shape rule (a model needs an input; a parameter has none)
        const core::layer l{"op", o, {}, {}};
        const core::shape out = core::infer_shape(l, shapes);
        const backend_api::host_tensor want = tensor_of(c.at("output"));
        ASSERT_EQ(out, want.dims);
        std::map<std::string, backend_api::host_tensor> param_values;
        for (const auto& [name, t] : c.at("params").items()) param_values[name] = tensor_of(t);
        std::map<std::string, const backend_api::host_tensor*> params;
        for (const auto& [name, t] : param_values) params[name] = &t;
        std::vector<const backend_api::host_tensor*> in;
        for (const auto& t : inputs) in.push_back(&t);
        const auto got = cpu::reference_forward(l, in, params, want.dims);
        ASSERT_EQ(got.data.size(), want.data.size());
        double diff = 0, norm = 0;
        for (std::size_t i = 0; i < got.data.size(); ++i) {
            if (!std::isfinite(want.data[i])) {
                EXPECT_EQ(got.data[i], want.data[i]) << "element " << i;
                continue;
            }
            diff += std::pow(double(got.data[i]) - want.data[i], 2);
            norm += std::pow(double(want.data[i]), 2);
        }
        // an output of zeros (layer_norm over one element) has no norm: then the floor 1e-6 per element, an absolute
        // error of 1e-6 on values of order 1e-3
        EXPECT_LE(std::sqrt(diff / std::max(norm, 1e-6 * static_cast<double>(got.data.size()))), 1e-6);
    }
    EXPECT_EQ(kinds.size(), core::op_kinds().size()) << "the golden file misses an op kind";
}
