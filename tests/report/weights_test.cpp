// Weight statistics on a tiny model whose numbers are derived by hand in the comments.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <regex>

#include "ridgeline/core/error.hpp"
#include "ridgeline/report/weights.hpp"

namespace core = ridgeline::core;
namespace report = ridgeline::report;
namespace backend_api = ridgeline::backend_api;

namespace {

/// fc1 = linear 2 -> 2 with weight w and bias b; fc2 = linear 2 -> 2 without bias, its weight tied to fc1's.
core::model_analysis tiny() {
    core::model_builder mb("tiny");
    mb.input("x", core::shape{1, 2});
    mb.then("fc1", core::parse_op("linear:in_features=2,out_features=2"));
    mb.then("fc2", core::parse_op("linear:in_features=2,out_features=2,bias=false"));
    mb.tie_last("weight", "shared.w");
    mb.then("act", core::parse_op("relu"));
    return core::analyze(mb.build(), core::dtype::fp32);
}

backend_api::graph_data values() {
    backend_api::graph_data d;
    d.tensors["fc1.weight"] = {core::shape{2, 2}, {-0.5f, 0.0005f, 0.02f, 0.2f}};
    d.tensors["fc1.bias"] = {core::shape{2}, {0.1f, -0.3f}};
    d.tensors["shared.w"] = {core::shape{2, 2}, {1.0f, -1.0f, 3.0f, -3.0f}};
    return d;
}

}  // namespace

TEST(WeightStats, HandComputed) {
    const report::weight_stats s = report::compute_weight_stats({-0.5f, 0.0005f, 0.02f, 0.2f});
    EXPECT_EQ(s.count, 4);
    // mean |w| = (0.5 + 0.0005 + 0.02 + 0.2) / 4 = 0.7205 / 4 = 0.180125
    EXPECT_NEAR(s.mean_abs, 0.180125, 1e-7);
    // mean w = (-0.5 + 0.0005 + 0.02 + 0.2) / 4 = -0.069875; deviations -0.430125, 0.070375, 0.089875, 0.269875;
    // squares 0.185007515625 + 0.004952640625 + 0.008077515625 + 0.072832515625 = 0.2708701875;
    // std = sqrt(0.2708701875 / 4) = sqrt(0.067717546875) = 0.26022595...
    EXPECT_NEAR(s.stddev, std::sqrt(0.067717546875), 1e-7);
    EXPECT_FLOAT_EQ(s.min, -0.5f);
    EXPECT_FLOAT_EQ(s.max, 0.2f);
    // sorted |w| = 0.0005, 0.02, 0.2, 0.5 (n = 4); type 7: h = 3q, x[floor h] + frac(h) * (next - x[floor h])
    EXPECT_NEAR(s.p10_abs, 0.0005 + 0.3 * (0.02 - 0.0005), 1e-7);   // h = 0.3  -> 0.00635
    EXPECT_NEAR(s.p25_abs, 0.0005 + 0.75 * (0.02 - 0.0005), 1e-7);  // h = 0.75 -> 0.015125
    EXPECT_NEAR(s.p50_abs, 0.02 + 0.5 * (0.2 - 0.02), 1e-7);        // h = 1.5  -> 0.11
    EXPECT_NEAR(s.p75_abs, 0.2 + 0.25 * (0.5 - 0.2), 1e-7);         // h = 2.25 -> 0.275
    EXPECT_NEAR(s.p90_abs, 0.2 + 0.7 * (0.5 - 0.2), 1e-7);          // h = 2.7  -> 0.41
    EXPECT_DOUBLE_EQ(s.below_1e_3, 0.25);  // 0.0005
    EXPECT_DOUBLE_EQ(s.below_1e_2, 0.25);  // 0.0005 (0.02 is not below 0.01)
    EXPECT_DOUBLE_EQ(s.below_1e_1, 0.5);   // 0.0005, 0.02
    EXPECT_THROW(report::compute_weight_stats({}), core::error);
}

TEST(WeightStats, NonFiniteValuesAreCountedApartNotAveraged) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    // finite values -2, 1: mean|w| 1.5, mean -0.5, std sqrt((1.5^2 + 1.5^2) / 2) = 1.5; |w| sorted 1, 2:
    // p50 = 1.5 (h = 0.5)
    const report::weight_stats s = report::compute_weight_stats({1.0f, nan, -2.0f, inf});
    EXPECT_EQ(s.count, 4);
    EXPECT_EQ(s.non_finite, 2);
    EXPECT_DOUBLE_EQ(s.mean_abs, 1.5);
    EXPECT_DOUBLE_EQ(s.stddev, 1.5);
    EXPECT_DOUBLE_EQ(s.min, -2.0);
    EXPECT_DOUBLE_EQ(s.max, 1.0);
    EXPECT_DOUBLE_EQ(s.p50_abs, 1.5);
    // nothing finite: counted, and every statistic NaN (null in JSON), never 0
    const report::weight_stats none = report::compute_weight_stats({nan, nan});
    EXPECT_EQ(none.count, 2);
    EXPECT_EQ(none.non_finite, 2);
    EXPECT_TRUE(std::isnan(none.mean_abs));
    EXPECT_TRUE(std::isnan(none.p90_abs));
}

TEST(WeightStats, PerLayerAndModelWithTiedTensorsOnce) {
    const report::weights_report r = report::weight_statistics(tiny(), values());
    ASSERT_EQ(r.layers.size(), 2u);  // relu has no parameters
    EXPECT_EQ(r.layers[0].layer, "fc1");
    EXPECT_EQ(r.layers[0].weights->count, 4);
    EXPECT_EQ(r.layers[0].biases->count, 2);
    // biases apart: mean |b| = (0.1 + 0.3) / 2 = 0.2, min -0.3, max 0.1
    EXPECT_NEAR(r.layers[0].biases->mean_abs, 0.2, 1e-7);
    EXPECT_FLOAT_EQ(r.layers[0].biases->min, -0.3f);
    EXPECT_EQ(r.layers[1].weight_tensors, std::vector<std::string>{"shared.w"});
    EXPECT_FALSE(r.layers[1].biases);
    // fc2's weight is 1, -1, 3, -3: mean |w| = (1 + 1 + 3 + 3) / 4 = 2; mean w = 0, so
    // std = sqrt((1 + 1 + 9 + 9) / 4) = sqrt(5)
    EXPECT_NEAR(r.layers[1].weights->mean_abs, 2.0, 1e-12);
    EXPECT_NEAR(r.layers[1].weights->stddev, std::sqrt(5.0), 1e-12);
    // model: fc1.weight and shared.w once each (8 values); biases: fc1.bias (2 values)
    EXPECT_EQ(r.weights->count, 8);
    EXPECT_EQ(r.weight_tensors, 2);
    EXPECT_EQ(r.biases->count, 2);
    // mean |w| over 8 values = (0.7205 + 8) / 8 = 1.0900625
    EXPECT_NEAR(r.weights->mean_abs, 1.0900625, 1e-7);
}

TEST(WeightStats, JsonAndTable) {
    const report::weights_report r = report::weight_statistics(tiny(), values());
    const auto j = report::weights_json(r, {"ridgeline weights --onnx tiny.onnx", "onnx:tiny.onnx", {}});
    EXPECT_EQ(j["schema"], "ridgeline.weights/1");
    EXPECT_EQ(j["layers"][0]["weights"]["count"], 4);
    EXPECT_DOUBLE_EQ(j["layers"][0]["weights"]["below_1e-1"].get<double>(), 0.5);
    EXPECT_TRUE(j["layers"][1]["biases"].is_null());
    EXPECT_EQ(j["totals"]["weights"]["count"], 8);
    EXPECT_EQ(j["skipped_nodes"], nlohmann::json::array());
    const std::string t = report::weights_table(r, {{"/up/Resize", "Resize", "ridgeline has no layer for Resize"}});
    // fc1's weight row: count 4, no NaN/inf, mean 0.1801, ..., shares 25.0% 25.0% 50.0%
    EXPECT_TRUE(std::regex_search(t, std::regex(R"(fc1\s+weight\s+4\s+0\s+0\.1801\s.*25\.0%\s+25\.0%\s+50\.0%)"))) << t;
    EXPECT_TRUE(std::regex_search(t, std::regex(R"(\n\s+bias\s+2\s+0\s+0\.2\s)"))) << t;
    EXPECT_NE(t.find("model (2 tensors)"), std::string::npos) << t;
    EXPECT_NE(t.find("skipped 1 ONNX node(s) that are not layers: Resize \"/up/Resize\" (ridgeline has no layer for Resize)"),
              std::string::npos) << t;
    // a missing tensor is an error naming the layer
    auto incomplete = values();
    incomplete.tensors.erase("fc1.bias");
    EXPECT_THROW(report::weight_statistics(tiny(), incomplete), core::error);
}
