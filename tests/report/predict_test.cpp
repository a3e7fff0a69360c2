// report::predict_json on a hand-made profile report: which layers are predicted, the numbers (derived by hand
// from core::predict_time's rule), the datasheet target's assumptions, and compare reading a prediction.
#include <gtest/gtest.h>

#include <cmath>

#include "ridgeline/report/compare.hpp"
#include "ridgeline/report/predict.hpp"
#include "../support/wide_tables.hpp"

namespace ridgeline::report {
namespace {

using json = nlohmann::json;

// Roofs of the source: 100 GFLOP/s, 10 GB/s, 0.01 ms dispatch (1 GFLOP/s = 1e6 FLOP per ms).
// The layers carry the shapes and layer string a report writes (the op-class models of a GPU read them, and check
// them against the counts): a conv is [1, 10, 50, 50] -> [1, 40, 50, 50] as a 1x1 convolution without bias (2,500 x
// 40 x 10 = 1,000,000 MACs, 2,000,000 FLOPs); a relu [1, 40, 50, 50] -> the same (100,000 FLOPs, one an element).
// Every layer moves 150,000 bytes, so that the roofs' rule's arithmetic below stays one.
json layer(const std::string& name, const std::string& op, double median, const std::string& bound,
           bool disturbed = false,
           const std::string& layer_string = "conv2d:in_channels=10,out_channels=40,kernel_size=1,bias=false") {
    const bool relu = layer_string == "relu";
    return {{"name", name},
            {"op", op},
            {"layer", layer_string},
            {"input_shapes", json::array({relu ? json::array({1, 40, 50, 50}) : json::array({1, 10, 50, 50})})},
            {"output_shape", json::array({1, 40, 50, 50})},
            {"macs", relu ? 0 : 1'000'000},
            {"executed_macs", relu ? 0 : 1'000'000},
            {"flops", relu ? 100'000 : 2'000'000},
            {"bytes", 150'000},
            {"bound", bound},
            {"roof_fraction", 0.5},
            {"time", {{"median_ms", median}, {"ci95_low_ms", median * 0.99}, {"ci95_high_ms", median * 1.01}, {"disturbed", disturbed}}},
            {"roofs", {{"compute_gflops", 100.0}, {"bandwidth_gbs", 10.0}, {"dispatch_ms", 0.01}}}};
}

json source_json() {
    json j = {{"schema", "ridgeline.profile/2"},
              {"model", "m"},
              {"source", "zoo:m"},
              {"dtype", "fp32"},
              {"batch", 1},
              {"timing", {{"mode", "hot"}}},
              {"device", {{"backend", "cpu"}, {"name", "a CPU"}, {"threads", 1}}},
              {"end_to_end", {{"time", {{"median_ms", 0.2}}}}}};
    j["layers"] = json::array({layer("conv", "conv2d", 0.05, "compute"), layer("act", "relu", 0.03, "memory", true, "relu"),
                               layer("odd", "relu", 0.001, "mistrusted", false, "relu"),
                               {{"name", "flat"}, {"op", "flatten"}, {"state", "view"}, {"time", nullptr}}});
    return j;
}

/// The report as compare and predict read it back (profile_from_json).
compare_run source(const json& j = source_json()) { return {"m (cpu, 1 thread)", j}; }

TEST(PredictReport, ALayerOnAnotherCpuCarriesItsEfficiency) {
    // a CPU from a CPU's profile: the same class of device, so the rule carries the layer's efficiency
    const prediction_target epyc = datasheet_target(core::datasheet_by_name("epyc-9654"));
    const json p = predict_json(source(), epyc);
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
    EXPECT_EQ(conv["rule"], "roofs");
    // source floor: compute 2e6 / 100e6 = 0.02 ms, memory 1.5e5 / 10e6 = 0.015 ms -> 0.02 ms (compute);
    // e = 0.02 / (0.05 - 0.01) = 0.5.
    // EPYC 9654 (datasheet): fp32 7.37 TFLOP/s, 460.8 GB/s, dispatch assumed 0.002 ms: compute 2e6 / 7.37e9 =
    //   2.714e-4 ms, memory 1.5e5 / 4.608e8 = 3.255e-4 ms -> floor 3.255e-4 ms (memory: the larger floor changes
    //   resource). The work 0.04 ms splits: its memory floor accounts for 0.015 / 0.04 = 0.375 of it, scaled by
    //   3.255e-4 / 0.015; the rest by 2.714e-4 / 0.02
    const double floor_t = 1.5e5 / 460.8e6, compute_t = 2e6 / 7.37e9;
    EXPECT_NEAR(conv["time"]["median_ms"].get<double>(),
                0.002 + 0.04 * (0.375 * floor_t / 0.015 + 0.625 * compute_t / 0.02), 1e-12);
    EXPECT_NEAR(conv["memory_share"].get<double>(), 0.375, 1e-12);
    EXPECT_NEAR(conv["efficiency"].get<double>(), 0.5, 1e-12);
    EXPECT_NEAR(conv["baseline_ms"].get<double>(), 0.05 * floor_t / 0.02, 1e-12);
    EXPECT_NEAR(conv["roofs"]["compute_gflops"].get<double>(), 7370.0, 1e-9);
    EXPECT_TRUE(conv["floor_changes"].get<bool>());
    // the time is 0.0027 ms against a floor of 3.3e-4 ms and 4 x 0.002 ms of dispatch: overhead on the target
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

TEST(PredictReport, AGpuFromACpuProfileByItsOpClassModels) {
    // an H100 from a CPU's profile: another class of device; each layer's time is the GPU's op-class model of its
    // shapes, so the disturbed and the mistrusted layers are predicted too (their source times are not used); the
    // view is not (no time on the source)
    const prediction_target h100 = datasheet_target(core::datasheet_by_name("h100"));
    const json p = predict_json(source(), h100);
    ASSERT_EQ(p["layers"].size(), 3u);
    ASSERT_EQ(p["not_predicted"].size(), 1u);
    const core::gpu_spec s = core::gpu_spec_of(core::datasheet_by_name("h100"), core::dtype::fp32, datasheet_gpu_dispatch_ms);
    // conv: the implicit GEMM of 2,500 rows, 40 columns, depth 10 (the fastest tiles: 40 of 64x64 in one wave)
    const json& conv = p["layers"][0];
    EXPECT_EQ(conv["rule"], "gemm");
    EXPECT_NEAR(conv["time"]["median_ms"].get<double>(), core::gemm_on_gpu({1, 2500, 40, 10}, 150'000, s).time_ms, 1e-12);
    EXPECT_NE(conv["reason"].get<std::string>().find("40 tiles of 64x64, 1 waves of 132 SMs"), std::string::npos)
        << conv["reason"];
    // relu: a stream of its 150,000 bytes at 0.9 x 3350 GB/s plus a launch
    const json& act = p["layers"][1];
    EXPECT_EQ(act["rule"], "stream");
    EXPECT_NEAR(act["time"]["median_ms"].get<double>(), 0.005 + 1.5e5 / (0.9 * 3350e6), 1e-12);
    // the interval is the assumed error of the class models, +-50%
    EXPECT_NEAR(act["time"]["ci95_high_ms"].get<double>(), act["time"]["median_ms"].get<double>() * 1.5, 1e-12);
    // the end to end is the sum of the predicted layers, not the CPU's time between its layers scaled
    double sum = 0;
    for (const auto& l : p["layers"]) sum += l["time"]["median_ms"].get<double>();
    EXPECT_NEAR(p["end_to_end"]["time"]["median_ms"].get<double>(), sum, 1e-12);
    EXPECT_NE(p["end_to_end"]["how"].get<std::string>().find("not carried over"), std::string::npos);
    bool said = false;
    for (const auto& a : p["prediction"]["assumptions"])
        said = said || a.get<std::string>().rfind("another class of device: each layer's time from the GPU's op-class "
                                                  "models", 0) == 0;
    EXPECT_TRUE(said) << p["prediction"]["assumptions"];
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
    json bf16 = source_json();
    bf16["dtype"] = "bf16";
    const compare_run s = source(bf16);
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

TEST(PredictReport, AColdPassFetchesItsBytesOnlyWhereTheHotCacheHeldThem) {
    // a measured target: 10 GB/s DRAM, a sweep at 40 GB/s up to 2 MB and DRAM speed at 4 MB (the hot cache holds
    // 2 MB), fixed cost 0.01 ms hot and 0.03 ms cold, 5 GB/s for one run after a flush
    prediction_target t;
    t.label = t.short_label = "cpu.json";
    auto& c = t.ceilings;
    c.backend = "cpu";
    c.peak_gflops = c.fma_peak_gflops = {{"fp32", 100.0}};
    c.bandwidth_gbs = 10;
    c.working_set_gbs = {{1'000'000, 40.0}, {2'000'000, 40.0}, {4'000'000, 10.0}};
    c.dispatch_overhead_ms = 0.01;
    c.cold_dispatch_overhead_ms = 0.03;
    c.cold_bandwidth_gbs = 5;
    json sj = source_json();
    // D = 0.6 MB of parameters + 0.3 MB of activations = 0.9 MB: within the 1 MB a pass keeps (0.5 x 2 MB); the level
    // is 40 GB/s, so cold adds 0.9e6 / 5e6 - 0.9e6 / 40e6 = 0.18 - 0.0225 = 0.1575 ms of bytes and 0.02 ms of fixed
    // cost, once
    sj["memory"] = {{"parameter_bytes", 600'000}, {"total_activation_bytes", 300'000}};
    compare_run src = source(sj);
    const auto e2e = [&](bool cold) { return predict_json(src, t, cold)["end_to_end"]; };
    EXPECT_NEAR(e2e(true)["time"]["median_ms"].get<double>() - e2e(false)["time"]["median_ms"].get<double>(),
                0.1575 + 0.02, 1e-12);
    EXPECT_NE(e2e(true)["how"].get<std::string>().find(
                  "a cold pass pays the cold fixed cost once and fetches its distinct bytes (900.0 kB) from DRAM once "
                  "(a pass keeps 1.000 MB in the target's hot cache, 0.5 of the 2.000 MB it holds) (+177.50 us)"),
              std::string::npos)
        << e2e(true)["how"];
    // D = 1.5 MB exceeds the 1 MB a pass keeps: a hot pass fetched them from DRAM too, only the 0.02 ms
    sj["memory"]["parameter_bytes"] = 1'200'000;
    src = source(sj);
    EXPECT_NEAR(e2e(true)["time"]["median_ms"].get<double>() - e2e(false)["time"]["median_ms"].get<double>(), 0.02,
                1e-12);
    EXPECT_NE(e2e(true)["how"].get<std::string>().find("its distinct bytes (1.500 MB) exceed what stays cached (a pass "
                                                       "keeps 1.000 MB in the target's hot cache, 0.5 of the 2.000 MB "
                                                       "it holds), so a hot pass fetches them from DRAM too (+20.00 us)"),
              std::string::npos)
        << e2e(true)["how"];
}

TEST(PredictReport, CompareReadsAPredictionAndUsesTheSameMethod) {
    const compare_run src = source();
    const json p = predict_json(src, datasheet_target(core::datasheet_by_name("epyc-9654")));
    // a prediction as the second run: the predicted speedup compare gives from the roofs is the prediction's own
    // speedup (one method), and the measured "speedup" of the two is the same number
    const json c = compare_json({src, compare_run{"epyc-9654 (predicted)", p}});
    ASSERT_EQ(c["layers"].size(), 1u);
    const json& run = c["layers"][0]["runs"][1];
    EXPECT_NEAR(run["predicted_speedup"].get<double>(), p["layers"][0]["speedup"].get<double>(), 1e-9);
    EXPECT_NEAR(run["speedup"].get<double>(), p["layers"][0]["speedup"].get<double>(), 1e-9);
    // the prediction first: nothing measured to predict from, so no "predicted" column, and the table says why
    const json r = compare_json({compare_run{"epyc-9654 (predicted)", p}, src});
    ASSERT_EQ(r["layers"].size(), 1u);
    EXPECT_TRUE(r["layers"][0]["runs"][1]["predicted_speedup"].is_null());
    EXPECT_NE(compare_table(r).find("none here: the baseline is a prediction"), std::string::npos) << compare_table(r);
    // the layers the prediction left out (the disturbed act and the mistrusted odd) are named, not dropped silently
    EXPECT_EQ(c["layers_left_out"], json::array({"act", "odd"}));
    EXPECT_NE(compare_table(c).find("2 layers of the baseline left out, not timed in every run (act, ...)"),
              std::string::npos)
        << compare_table(c);
}

TEST(PredictReport, TheH200IsPredictedByItsOpClassModelsLikeEveryGpuEntry) {
    const ridgeline::testing::wide_tables wide;  // the footers' sentences on one line
    // every GPU entry of the datasheet, by its key, takes the op-class models (the H200's display name, "NVIDIA H200
    // SXM 141GB", is no name a driver reports, and its target once fell back to the roofs' rule without a word); the
    // roofs' rule's assumptions (no cache levels, the peaks per op) are not printed beside the models'
    for (const auto& e : core::datasheet()) {
        if (e.sms <= 0) continue;  // a CPU
        const json p = predict_json(source(), datasheet_target(e));
        EXPECT_EQ(p["prediction"]["models"], "op-class") << e.key;
        EXPECT_EQ(p["layers"][0]["rule"], "gemm") << e.key;
        EXPECT_DOUBLE_EQ(p["prediction"]["rule_error"].get<double>(), core::class_model_error) << e.key;
        for (const auto& a : p["prediction"]["assumptions"])
            EXPECT_EQ(a.get<std::string>().find("no cache levels"), std::string::npos) << e.key << ": " << a;
        const std::string table = predict_table(p);
        EXPECT_NE(table.find("method: each layer's time by the GPU's op-class model"), std::string::npos) << table;
        EXPECT_NE(table.find("intervals: the model's time / 1.5 to x 1.5"), std::string::npos) << table;
        EXPECT_EQ(table.find("(least certain)"), std::string::npos) << table;  // the roofs' rule's flag
    }
    // a CPU target keeps the roofs' rule, its assumptions and its measured error
    const json cpu = predict_json(source(), datasheet_target(core::datasheet_by_name("epyc-9654")));
    EXPECT_EQ(cpu["prediction"]["models"], "roofs");
    EXPECT_DOUBLE_EQ(cpu["prediction"]["rule_error"].get<double>(), core::prediction_error);
    EXPECT_NE(cpu["prediction"]["assumptions"].dump().find("no cache levels"), std::string::npos);
}

TEST(PredictReport, AMeasuredGpuWithoutADatasheetEntryIsRefusedByName) {
    // its SM count and architecture unknown, the waves would be a guess (1 SM made every GEMM one wave long)
    backend_api::ceilings c;
    c.backend = "cuda";
    c.device_name = "NVIDIA L40S";
    c.peak_gflops = {{"fp32", 91'600.0}};
    c.bandwidth_gbs = 864;
    try {
        (void)gpu_spec_for(c, "fp32");
        FAIL() << "no error";
    } catch (const core::error& e) {
        EXPECT_NE(std::string(e.what()).find("the GPU \"NVIDIA L40S\" has no datasheet entry"), std::string::npos)
            << e.what();
    }
    c.device_name = "NVIDIA H100 80GB HBM3";  // as the driver reports an H100 SXM: 132 SMs from its entry
    const auto s = gpu_spec_for(c, "fp32");
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->sms, 132);
    c.backend = "cpu";  // not a GPU: no op-class models
    EXPECT_FALSE(gpu_spec_for(c, "fp32").has_value());
}

TEST(PredictReport, AnEndToEndThatLeavesLayersOutSaysPartial) {
    // a layer the source skipped (no time) cannot be predicted; a GPU's end to end is the sum of its predicted layers,
    // so it leaves that layer out and says so; the view (no time anywhere) is not counted as left out
    json sj = source_json();
    sj["layers"].push_back({{"name", "big"}, {"op", "conv2d"}, {"state", "skipped"}, {"reason", "over --max-memory"},
                            {"time", nullptr}});
    const json p = predict_json(source(sj), datasheet_target(core::datasheet_by_name("h100")));
    EXPECT_TRUE(p["end_to_end"]["partial"].get<bool>());
    EXPECT_EQ(p["end_to_end"]["layers_left_out"], 1);
    EXPECT_DOUBLE_EQ(p["end_to_end"]["left_out_source_ms"].get<double>(), 0.0);
    EXPECT_NE(predict_table(p).find("PARTIAL: the end to end leaves out 1 layer(s) not predicted"), std::string::npos)
        << predict_table(p);
    // without it, every layer with a time is predicted: the sum is the whole pass
    const json whole = predict_json(source(), datasheet_target(core::datasheet_by_name("h100")));
    EXPECT_FALSE(whole["end_to_end"]["partial"].get<bool>());
    EXPECT_EQ(predict_table(whole).find("PARTIAL"), std::string::npos);
    // a CPU target scales the source's measured end to end, which holds every layer: not partial
    EXPECT_FALSE(predict_json(source(sj), datasheet_target(core::datasheet_by_name("epyc-9654")))["end_to_end"]["partial"]
                     .get<bool>());
}

TEST(PredictReport, WhetherThePassFitsTheTargetsMemory) {
    // weights 14 GB, KV cache 2 GB (the buffers: a profile counts the cache among them), input 1 MB, activations at
    // their peak 0.5 GB, workspace 32 MB: 16.533e9 B in all, under a T4's 16 GiB (17.180e9 B); 1 GB more of KV cache
    // (17.533e9 B) does not fit
    json sj = source_json();
    sj["memory"] = {{"parameter_bytes", 14'000'000'000LL}, {"buffer_bytes", 2'000'000'000LL}, {"kv_cache_bytes", 2'000'000'000LL},
                    {"input_bytes", 1'000'000},           {"total_activation_bytes", 900'000'000},
                    {"peak_activation_bytes", 500'000'000}, {"workspace_bytes", 32'000'000}};
    const double needed = 14e9 + 2e9 + 1e6 + 5e8 + 3.2e7;
    const json t4 = predict_json(source(sj), datasheet_target(core::datasheet_by_name("t4")));
    const json& m = t4["prediction"]["memory"];
    EXPECT_DOUBLE_EQ(m["needed_bytes"].get<double>(), needed);
    EXPECT_DOUBLE_EQ(m["target_bytes"].get<double>(), 16.0 * (1LL << 30));
    EXPECT_TRUE(m["fits"].get<bool>());
    EXPECT_DOUBLE_EQ(m["weights_bytes"].get<double>(), 14e9);  // the buffers less the KV cache: none
    sj["memory"]["kv_cache_bytes"] = 3'000'000'000LL;
    sj["memory"]["buffer_bytes"] = 3'000'000'000LL;
    const json over = predict_json(source(sj), datasheet_target(core::datasheet_by_name("t4")));
    EXPECT_FALSE(over["prediction"]["memory"]["fits"].get<bool>());
    EXPECT_NE(predict_table(over).find("and does not fit the target's 16.00 GiB"), std::string::npos) << predict_table(over);
    // a report without "memory" says nothing of it
    EXPECT_TRUE(predict_json(source(), datasheet_target(core::datasheet_by_name("t4")))["prediction"]["memory"].is_null());
}

TEST(PredictReport, ShapesThatDisagreeWithTheCountsAreNotModelled) {
    // an edited report: the conv's input made 64 x 3 x 512 x 512 under the 1x1 conv's counts; its shapes would model
    // another layer (the GPU's time from the shapes), so it is not predicted, and the reason names both
    json sj = source_json();
    sj["layers"][0]["input_shapes"] = json::array({json::array({64, 10, 512, 512})});
    const json p = predict_json(source(sj), datasheet_target(core::datasheet_by_name("h100")));
    ASSERT_FALSE(p["not_predicted"].empty());
    EXPECT_EQ(p["not_predicted"][0]["name"], "conv");
    EXPECT_NE(p["not_predicted"][0]["reason"].get<std::string>().find(
                  "its shapes give 13,421,772,800 FLOPs and an output of 64x40x512x512, its counts 2,000,000"),
              std::string::npos)
        << p["not_predicted"][0]["reason"];  // 64 x 512^2 x 40 x 10 = 6,710,886,400 MACs, 2 FLOPs each
    // a shape that is no shape is refused with its path when the report is read
    sj["layers"][0]["input_shapes"] = json::array({json::array({-1, 10, 50, 50})});
    EXPECT_THROW((void)source(sj), core::error);
}

TEST(PredictReport, AMemoryThatContradictsItselfIsRefusedAndAPartialOneIsNoFit) {
    json sj = source_json();
    sj["memory"] = {{"parameter_bytes", 1000}, {"buffer_bytes", 0},          {"kv_cache_bytes", 1'000'000'000'000LL},
                    {"input_bytes", 10},       {"peak_activation_bytes", 10}, {"workspace_bytes", 0}};
    try {
        (void)source(sj);
        FAIL() << "a KV cache larger than the buffers it is one of";
    } catch (const core::error& e) {
        EXPECT_NE(std::string(e.what()).find("$.memory.kv_cache_bytes: expected at most $.memory.buffer_bytes"),
                  std::string::npos)
            << e.what();
    }
    sj["memory"]["kv_cache_bytes"] = 0;
    sj["memory"]["parameter_bytes"] = 0.5;  // not a count
    EXPECT_THROW((void)source(sj), core::error);
    sj["memory"]["parameter_bytes"] = 1000;
    sj["memory"].erase("workspace_bytes");  // a part missing: no fit rather than a part taken as 0
    EXPECT_TRUE(predict_json(source(sj), datasheet_target(core::datasheet_by_name("t4")))["prediction"]["memory"].is_null());
}

TEST(PredictReport, CompareNamesTheLayersABaselinePredictionLeftOut) {
    // a prediction to a CPU leaves out the disturbed act and the mistrusted odd; with it as the baseline, the
    // measured run's act and odd have nothing to be compared with: named, not dropped
    const compare_run src = source();
    const json p = predict_json(src, datasheet_target(core::datasheet_by_name("epyc-9654")));
    const json c = compare_json({compare_run{"epyc-9654 (predicted)", p}, src});
    EXPECT_EQ(c["layers_not_in_baseline"], json::array({"act", "odd"}));
    EXPECT_NE(compare_table(c).find("2 layers timed in another run but not in the baseline (act, ...)"), std::string::npos)
        << compare_table(c);
}

}  // namespace
// An end-to-end pass that other work disturbed (state "disturbed", too few clean samples) is not a measurement:
// predict does not scale it (the sum of the predicted layers stands in, and says why) and compare shows none.
// Beside another ridgeline process a 7.3 ms pass once read 804 ms, and both read it as a clean time.
TEST(PredictReport, ADisturbedEndToEndIsNeverUsedAsAMeasurement) {
    json sj = source_json();
    sj["end_to_end"] = {{"state", "disturbed"}, {"time", {{"median_ms", 804.0}, {"disturbed", true}}}};
    compare_run src = source(sj);
    const json p = predict_json(src, datasheet_target(core::datasheet_by_name("epyc-9654")));
    EXPECT_TRUE(p["end_to_end"]["source_ms"].is_null());
    EXPECT_DOUBLE_EQ(p["end_to_end"]["time"]["median_ms"].get<double>(), p["totals"]["predicted_ms"].get<double>());
    EXPECT_NE(p["end_to_end"]["how"].get<std::string>().find("the source's end-to-end pass was disturbed by other work"),
              std::string::npos)
        << p["end_to_end"]["how"];
    compare_run other = source();
    const json c = compare_json({src, other});
    EXPECT_TRUE(c["end_to_end_ms"][0].is_null());
    EXPECT_DOUBLE_EQ(c["end_to_end_ms"][1].get<double>(), 0.2);
    // the state alone is enough (a time not marked disturbed in an edited file)
    sj["end_to_end"]["time"].erase("disturbed");
    src = source(sj);
    EXPECT_TRUE(compare_json({src, other})["end_to_end_ms"][0].is_null());
}

}  // namespace ridgeline::report
