// Roll-ups (report/rollup.hpp): the module and block rules, a group's sums and its time-weighted %roof, the orders,
// --top and its footer line, the JSON and CSV rows, and the refusals naming the closest value.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "../support/measured_layer.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/report/profile.hpp"
#include "ridgeline/report/rollup.hpp"

using namespace ridgeline;
using report::group_key;
using report::sort_key;
using report::view_options;

namespace {

/// A two-stage model as resnet names its layers: stem.conv, layer1.0.fc, layer1.0.act, layer1.1.fc, layer2.0.fc,
/// flat (a view), each linear 100 -> 100 on 10 rows (100,000 MACs) or a relu; medians and verdicts
/// set by hand (below).
profiler::profile_result staged() {
    core::model_builder b("staged");
    b.input("x", core::shape{10, 100});
    const char* names[] = {"stem.conv", "layer1.0.fc", "layer1.0.act", "layer1.1.fc", "layer2.0.fc"};
    for (const char* n : names)
        b.then(n, core::parse_op(std::string(n).find("act") != std::string::npos ? "relu"
                                                                                  : "linear:in_features=100,out_features=100"));
    b.then("flat", core::parse_op("flatten"));
    profiler::profile_result r;
    r.analysis = core::analyze(b.build(), core::dtype::fp32);
    // medians 1, 2, 0.5, 4, 8 ms; roof fractions 0.5, 0.25, 0.8, 0.5, 1.0 (each as a memory-bound layer's floor / time,
    // within no tolerance: shown as given); act memory-bound, the rest compute-bound
    const double median[] = {1.0, 2.0, 0.5, 4.0, 8.0};
    const double roof[] = {0.5, 0.25, 0.8, 0.5, 1.0};
    for (std::size_t i = 0; i < r.analysis.layers.size(); ++i) {
        if (i == 5) {
            profiler::layer_profile view;
            view.analysis = r.analysis.layers[i];
            view.state = profiler::run_state::view;
            r.layers.push_back(view);
            continue;
        }
        profiler::layer_profile p = test::measured_layer(r.analysis.layers[i], median[i]);
        core::roofline_point v;
        v.bound = i == 2 ? core::bound_class::memory : core::bound_class::compute;
        v.roof_fraction = roof[i];
        v.compute_ms = i == 2 ? 0.0 : roof[i] * median[i];
        v.memory_ms = i == 2 ? roof[i] * median[i] : 0.0;
        p.roofline = v;
        r.layers.push_back(p);
        r.sum_of_layers_ms += median[i];
    }
    return r;  // sum of layers 15.5 ms
}

const report::group_row& row(const std::vector<report::group_row>& rows, const std::string& key) {
    for (const auto& g : rows)
        if (g.key == key) return g;
    throw std::runtime_error("no group " + key);
}

}  // namespace

TEST(Rollup, TheModuleBlockAndPrefixRules) {
    view_options module = report::parse_group_by("module");
    // the part before the first numbered part, as the issue asks: layer1.0.conv1 -> layer1
    EXPECT_EQ(report::module_of("layer1.0.conv1", module), "layer1");
    EXPECT_EQ(report::module_of("transformer.h.3.attn.c_attn", module), "transformer.h");
    EXPECT_EQ(report::module_of("embeddings.LayerNorm", module), "embeddings");  // no number: all but the last part
    EXPECT_EQ(report::module_of("fc", module), "fc");                            // one part: itself
    const view_options block = report::parse_group_by("block");
    EXPECT_EQ(report::module_of("layer1.0.conv1", block), "layer1.0");
    EXPECT_EQ(report::module_of("encoder.layer.11.attention.self.query", block), "encoder.layer.11");
    EXPECT_EQ(report::module_of("lm_head", block), "lm_head");
    const view_options two = report::parse_group_by("module:2");
    EXPECT_EQ(two.group, group_key::prefix);
    EXPECT_EQ(report::module_of("layer1.0.conv1", two), "layer1.0");
    EXPECT_EQ(report::module_of("fc", two), "fc");
}

TEST(Rollup, AGroupSumsItsLayersAndWeighsItsRoofByTime) {
    const profiler::profile_result r = staged();
    const auto rows = report::rollup(r, report::parse_group_by("module"));
    ASSERT_EQ(rows.size(), 4u);  // stem, layer1, layer2, flat: in first-seen order
    EXPECT_EQ(rows[0].key, "stem");
    EXPECT_EQ(rows[1].key, "layer1");
    const report::group_row& l1 = row(rows, "layer1");
    // layer1: fc 2 ms, act 0.5 ms, fc 4 ms = 6.5 ms of 15.5; FLOPs: each linear 2 x 100,000 MACs + 1,000 bias adds,
    // the relu 1,000 (one per element): 2 x 201,000 + 1,000
    EXPECT_EQ(l1.layers, 3u);
    EXPECT_DOUBLE_EQ(l1.time_ms, 6.5);
    EXPECT_DOUBLE_EQ(l1.time_share, 6.5 / 15.5);
    EXPECT_DOUBLE_EQ(l1.flops, 2 * 201'000.0 + 1'000.0);
    // GFLOP/s of its rated layers: their executed FLOPs over their 6.5 ms
    EXPECT_NEAR(l1.gflops, l1.executed_flops / (6.5 * 1e6), 1e-12);
    // %roof weighted by time: (0.25 x 2 + 0.8 x 0.5 + 0.5 x 4) / 6.5 = 2.9 / 6.5
    EXPECT_NEAR(l1.roof_fraction, 2.9 / 6.5, 1e-12);
    // the bound holding most of its time: compute, 6 of 6.5 ms
    EXPECT_EQ(l1.bound, "compute");
    EXPECT_NEAR(l1.bound_share, 6.0 / 6.5, 1e-12);
    // the view: no time, no rates, no verdict
    const report::group_row& flat = row(rows, "flat");
    EXPECT_EQ(flat.timed, 0u);
    EXPECT_TRUE(std::isnan(flat.gflops));
    EXPECT_TRUE(std::isnan(flat.roof_fraction));
    EXPECT_EQ(flat.bound, "");
}

TEST(Rollup, ByOpAndByBoundInTheOrderAsked) {
    const profiler::profile_result r = staged();
    view_options v = report::parse_group_by("op");
    v.sort = sort_key::time;
    const auto ops = report::rollup(r, v);
    // linear 1 + 2 + 4 + 8 = 15 ms first, relu 0.5 ms, flatten last (no time)
    ASSERT_EQ(ops.size(), 3u);
    EXPECT_EQ(ops[0].key, "linear");
    EXPECT_DOUBLE_EQ(ops[0].time_ms, 15.0);
    EXPECT_EQ(ops[1].key, "relu");
    EXPECT_EQ(ops[2].key, "flatten");
    view_options b = report::parse_group_by("bound");
    b.sort = sort_key::roof;
    const auto bounds = report::rollup(r, b);
    // compute: (0.5 x 1 + 0.25 x 2 + 0.5 x 4 + 1.0 x 8) / 15 = 11 / 15 = 0.733; memory 0.8: compute first (lower %roof);
    // "-" (the view, no verdict, no %roof) last
    ASSERT_EQ(bounds.size(), 3u);
    EXPECT_EQ(bounds[0].key, "compute");
    EXPECT_NEAR(bounds[0].roof_fraction, 11.0 / 15.0, 1e-12);
    EXPECT_EQ(bounds[1].key, "memory");
    EXPECT_EQ(bounds[2].key, "-");
}

TEST(Rollup, LayersByTimeRoofAndNameStable) {
    const profiler::profile_result r = staged();
    using v = std::vector<std::size_t>;
    EXPECT_EQ(report::layer_order(r, sort_key::model), (v{0, 1, 2, 3, 4, 5}));
    EXPECT_EQ(report::layer_order(r, sort_key::time), (v{4, 3, 1, 0, 2, 5}));  // the view (0 ms) last
    // %roof 0.25 (layer1.0.fc), then 0.5 and 0.5 (stem.conv before layer1.1.fc: the model's order), 0.8, 1.0; the
    // view without one last
    EXPECT_EQ(report::layer_order(r, sort_key::roof), (v{1, 0, 3, 2, 4, 5}));
    EXPECT_EQ(report::layer_order(r, sort_key::name), (v{5, 2, 1, 3, 4, 0}));
}

TEST(Rollup, TopCutsTheRowsAndSaysWhatTheRestTake) {
    const profiler::profile_result r = staged();
    view_options v;
    v.sort = sort_key::time;
    v.top = 2;
    const std::string table = report::profile_table(r, {}, {}, v);
    // kept: layer2.0.fc (8 ms) and layer1.1.fc (4 ms); the other 4 take 1 + 2 + 0.5 = 3.5 ms, 22.6% of 15.5 ms
    EXPECT_NE(table.find("showing 2 of 6 layers, by time; the other 4 take 3.500 ms (22.6% of the sum of layers)"),
              std::string::npos)
        << table;
    EXPECT_NE(table.find("layer2.0.fc"), std::string::npos);
    EXPECT_EQ(table.find("stem.conv"), std::string::npos);
    // every layer row has its %time: layer2.0.fc 8 / 15.5 = 51.6%
    EXPECT_NE(table.find("51.6%"), std::string::npos) << table;
    // the CSV follows the view: a header and two rows, time_share last
    const std::string csv = report::profile_csv(r, v);
    std::istringstream in(csv);
    std::string header, first, second, third;
    std::getline(in, header);
    std::getline(in, first);
    std::getline(in, second);
    EXPECT_FALSE(std::getline(in, third));
    EXPECT_NE(header.find(",time_share,measured_as"), std::string::npos) << header;
    EXPECT_EQ(first.rfind("layer2.0.fc,", 0), 0u) << first;
    EXPECT_NE(first.find(",0.5161290322580645,"), std::string::npos) << first;  // 8 / 15.5, then measured_as (none)
}

TEST(Rollup, JsonKeepsEveryLayerAndAddsTheGroupsAndTheView) {
    const profiler::profile_result r = staged();
    report::run_info info;
    info.view = report::parse_group_by("module");
    info.view.top = 1;
    const nlohmann::json j = report::profile_json(r, info);
    EXPECT_EQ(j["layers"].size(), 6u);  // every layer, in the model's order
    EXPECT_NEAR(j["layers"][4]["time_share"].get<double>(), 8.0 / 15.5, 1e-12);
    EXPECT_TRUE(j["layers"][5]["time_share"].is_null());  // the view
    EXPECT_EQ(j["view"], (nlohmann::json{{"group_by", "module"}, {"sort", "model"}, {"top", 1}}));
    ASSERT_EQ(j["groups"].size(), 4u);  // every group: --top cuts the table, not the record
    EXPECT_EQ(j["groups"][1]["key"], "layer1");
    EXPECT_DOUBLE_EQ(j["groups"][1]["time_ms"].get<double>(), 6.5);
    // without a view, neither key
    EXPECT_FALSE(report::profile_json(r, report::run_info{}).contains("groups"));
}

TEST(Rollup, UnknownValuesAreRefusedWithTheClosest) {
    try {
        (void)report::parse_group_by("modul");
        FAIL();
    } catch (const core::request_error& e) {
        EXPECT_NE(std::string(e.what()).find("did you mean \"module\"?"), std::string::npos) << e.what();
        EXPECT_EQ(e.fields(), std::vector<std::string>{"group-by"});
    }
    EXPECT_THROW((void)report::parse_group_by("module:0"), core::request_error);
    EXPECT_THROW((void)report::parse_group_by("module:x"), core::request_error);
    try {
        (void)report::parse_sort("tme");
        FAIL();
    } catch (const core::request_error& e) {
        EXPECT_NE(std::string(e.what()).find("did you mean \"time\"?"), std::string::npos) << e.what();
    }
}
