// report::predict_json on a hand-made profile report: which layers are predicted, the numbers (derived by hand
// from core::predict_time's rule), the datasheet target's assumptions, and compare reading a prediction.
#include <gtest/gtest.h>

#include <cmath>

#include "ridgeline/report/compare.hpp"
#include "ridgeline/report/predict.hpp"

namespace ridgeline::report {
namespace {

using json = nlohmann::json;

// Roofs of the source: 100 GFLOP/s, 10 GB/s, 0.01 ms dispatch (1 GFLOP/s = 1e6 FLOP per ms).
json layer(const std::string& name, const std::string& op, double median, const std::string& bound,
           bool disturbed = false) {
    return {{"name", name},
            {"op", op},
            {"macs", 1'000'000},
            {"executed_macs", 1'000'000},
            {"flops", 2'000'000},
            {"bytes", 150'000},
            {"bound", bound},
            {"roof_fraction", 0.5},
            {"time", {{"median_ms", median}, {"ci95_low_ms", median * 0.99}, {"ci95_high_ms", median * 1.01}, {"disturbed", disturbed}}},
            {"roofs", {{"compute_gflops", 100.0}, {"bandwidth_gbs", 10.0}, {"dispatch_ms", 0.01}}}};
}

compare_run source() {
    json j = {{"schema", "ridgeline.profile/2"},
              {"model", "m"},
              {"source", "zoo:m"},
              {"dtype", "fp32"},
              {"batch", 1},
              {"timing", {{"mode", "hot"}}},
              {"device", {{"backend", "cpu"}, {"name", "a CPU"}, {"threads", 1}}},
              {"end_to_end", {{"time", {{"median_ms", 0.2}}}}}};
    j["layers"] = json::array({layer("conv", "conv2d", 0.05, "compute"), layer("act", "relu", 0.03, "memory", true),
                               layer("odd", "add", 0.001, "mistrusted"),
                               {{"name", "flat"}, {"op", "flatten"}, {"state", "view"}, {"time", nullptr}}});
    return {"m (cpu, 1 thread)", j};
}

TEST(PredictReport, ALayerOnAnH100FromItsDatasheet) {
    const prediction_target h100 = datasheet_target(core::datasheet_by_name("h100"));
    const json p = predict_json(source(), h100);
    EXPECT_EQ(p["schema"], "ridgeline.prediction/1");
    EXPECT_TRUE(p["prediction"]["datasheet"].get<bool>());
    EXPECT_EQ(p["prediction"]["assumptions"][0].get<std::string>().rfind("predicted from datasheet peaks, not measured", 0), 0u);
    // one layer predicted; the disturbed, the mistrusted and the view are listed with their reasons
    ASSERT_EQ(p["layers"].size(), 1u);
    ASSERT_EQ(p["not_predicted"].size(), 3u);
    EXPECT_EQ(p["not_predicted"][0]["reason"], "its time on the source was disturbed by other work");
    EXPECT_EQ(p["not_predicted"][1]["reason"], "its time beats the source's roofs (mistrusted): no efficiency to carry over");
    EXPECT_EQ(p["not_predicted"][2]["reason"], "a view: no time on either device");
    const json& conv = p["layers"][0];
    // source floor: compute 2e6 / 100e6 = 0.02 ms, memory 1.5e5 / 10e6 = 0.015 ms -> 0.02 ms (compute);
    // e = 0.02 / (0.05 - 0.01) = 0.5.
    // H100 SXM5 (datasheet): conv2d is matrix work, fp32 at 67 TFLOP/s; 3350 GB/s; dispatch assumed 0.005 ms:
    //   compute 2e6 / 67e9 = 2.985e-5 ms, memory 1.5e5 / 3.35e9 = 4.478e-5 ms -> floor 4.478e-5 ms (memory: the
    //   larger floor changes resource); t = 0.005 + 0.04 x 4.478e-5 / 0.02
    const double floor_t = 1.5e5 / 3.35e9;
    EXPECT_NEAR(conv["time"]["median_ms"].get<double>(), 0.005 + 0.04 * floor_t / 0.02, 1e-12);
    EXPECT_NEAR(conv["efficiency"].get<double>(), 0.5, 1e-12);
    EXPECT_NEAR(conv["baseline_ms"].get<double>(), 0.05 * floor_t / 0.02, 1e-12);
    EXPECT_NEAR(conv["roofs"]["compute_gflops"].get<double>(), 67'000.0, 1e-9);
    EXPECT_TRUE(conv["floor_changes"].get<bool>());
    // the time is 0.0051 ms against a floor of 4.5e-5 ms and 4 x 0.005 ms of dispatch: overhead on the target
    EXPECT_EQ(conv["bound"], "overhead");
    EXPECT_TRUE(conv["bound_changed"].get<bool>());
    // end to end: the layers timed on the source are conv (0.05 ms, predicted at t) and the disturbed and the
    // mistrusted ones (0.03 + 0.001 ms, not predicted: scaled by conv's ratio t / 0.05); the gap beyond them,
    // 0.2 - 0.081 ms, scales by that ratio to the power 0.7
    const double t = conv["time"]["median_ms"].get<double>(), r = t / 0.05;
    EXPECT_NEAR(p["end_to_end"]["time"]["median_ms"].get<double>(), t + 0.031 * r + (0.2 - 0.081) * std::pow(r, 0.7),
                1e-12);
    const std::string table = predict_table(p);
    EXPECT_NE(table.find("compute -> overhead !"), std::string::npos) << table;
    EXPECT_NE(table.find("predicted from datasheet peaks, not measured"), std::string::npos) << table;
}

TEST(PredictReport, MatrixWorkAtTheTensorCorePeakTheRestAtTheFmaPeak) {
    const prediction_target h100 = datasheet_target(core::datasheet_by_name("h100"));
    // bf16: 989.5 TFLOP/s dense on tensor cores for conv2d; relu on the CUDA cores at the fp32 FMA peak, 67
    EXPECT_DOUBLE_EQ(roofs_on(h100.ceilings, "conv2d", "bf16", 1000, false).compute_gflops, 989'500.0);
    EXPECT_DOUBLE_EQ(roofs_on(h100.ceilings, "relu", "bf16", 1000, false).compute_gflops, 67'000.0);
    EXPECT_DOUBLE_EQ(roofs_on(h100.ceilings, "relu", "bf16", 1000, false).bandwidth_gbs, 3350.0);
    EXPECT_DOUBLE_EQ(roofs_on(h100.ceilings, "relu", "bf16", 1000, false).dispatch_ms, datasheet_gpu_dispatch_ms);
    // a CPU's datasheet peak is its FMA units' for every op
    const prediction_target epyc = datasheet_target(core::datasheet_by_name("epyc-9654"));
    EXPECT_DOUBLE_EQ(roofs_on(epyc.ceilings, "relu", "bf16", 1000, false).compute_gflops, 14'750.0);
    EXPECT_DOUBLE_EQ(roofs_on(epyc.ceilings, "relu", "bf16", 1000, false).dispatch_ms, datasheet_cpu_dispatch_ms);
    // T4 has no bf16 unit: nothing is predicted, and it says why
    compare_run s = source();
    s.report["dtype"] = "bf16";
    try {
        (void)predict_json(s, datasheet_target(core::datasheet_by_name("t4")));
        FAIL() << "T4 has no bf16 peak";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("can be predicted (4 not predicted; the first, conv: the target has no bf16 "
                                             "compute peak)"),
                  std::string::npos)
            << e.what();
    }
}

TEST(PredictReport, CompareReadsAPredictionAndUsesTheSameMethod) {
    const compare_run src = source();
    const json p = predict_json(src, datasheet_target(core::datasheet_by_name("h100")));
    // a prediction as the second run: the predicted speedup compare gives from the roofs is the prediction's own
    // speedup (one method), and the measured "speedup" of the two is the same number
    const json c = compare_json({src, compare_run{"h100 (predicted)", p}});
    ASSERT_EQ(c["layers"].size(), 1u);
    const json& run = c["layers"][0]["runs"][1];
    EXPECT_NEAR(run["predicted_speedup"].get<double>(), p["layers"][0]["speedup"].get<double>(), 1e-9);
    EXPECT_NEAR(run["speedup"].get<double>(), p["layers"][0]["speedup"].get<double>(), 1e-9);
}

}  // namespace
}  // namespace ridgeline::report
