// ONNX nodes left out of an imported model (--skip-unsupported) appear in the summary's JSON and table.
#include <gtest/gtest.h>

#include "ridgeline/report/summary.hpp"
#include "../support/wide_tables.hpp"

namespace core = ridgeline::core;
namespace report = ridgeline::report;

TEST(SkippedNodes, SummaryJsonAndTableFooter) {
    const ridgeline::testing::wide_tables wide;  // the footer's sentence on one line
    core::model_builder b("imported");
    b.input("x", core::shape{1, 4});
    b.then("/Relu", core::parse_op("relu"));
    const auto a = core::analyze(b.build(), core::dtype::fp32);
    const std::vector<report::skipped_node> skipped{{"/up/Resize", "Resize", "ridgeline has no layer for Resize"},
                                                    {"/a/Sin", "Sin", "ridgeline has no layer for Sin"}};
    const auto j = report::summary_json(a, {"ridgeline summary --onnx m.onnx --skip-unsupported", "onnx:m.onnx", skipped});
    ASSERT_EQ(j["skipped_nodes"].size(), 2u);
    EXPECT_EQ(j["skipped_nodes"][0], (nlohmann::json{{"name", "/up/Resize"}, {"op_type", "Resize"},
                                                     {"reason", "ridgeline has no layer for Resize"}}));
    const std::string t = report::summary_table(a, skipped);
    EXPECT_NE(t.find("\nskipped 2 ONNX node(s) that are not layers: Resize \"/up/Resize\" (ridgeline has no layer for "
                     "Resize); Sin \"/a/Sin\" (ridgeline has no layer for Sin)\n"),
              std::string::npos)
        << t;
    // nothing skipped: an empty array and no footer
    EXPECT_EQ(report::summary_json(a, {"", "zoo:x", {}})["skipped_nodes"], nlohmann::json::array());
    EXPECT_EQ(report::summary_table(a).find("skipped"), std::string::npos);
}

TEST(SkippedNodes, FoldedNodesAreListedInJsonAndCountedByOpInTheFooter) {
    const ridgeline::testing::wide_tables wide;  // the footer's sentence on one line
    core::model_builder b("imported");
    b.input("x", core::shape{2, 3, 4});
    b.then("/Reshape", core::parse_op("reshape:shape=2x-1"));
    const auto a = core::analyze(b.build(), core::dtype::fp32);
    const std::vector<report::skipped_node> folded{{"/Shape", "Shape", "folded into a constant of shape 3"},
                                                   {"/Constant", "Constant", "folded into a constant scalar"},
                                                   {"/Gather", "Gather", "folded into a constant scalar"},
                                                   {"/Constant_1", "Constant", "folded into a constant of shape 1"}};
    report::run_info info{"ridgeline summary --onnx m.onnx", "onnx:m.onnx", {}, folded};
    const auto j = report::summary_json(a, info);
    ASSERT_EQ(j["folded_nodes"].size(), 4u);
    EXPECT_EQ(j["folded_nodes"][2], (nlohmann::json{{"name", "/Gather"}, {"op_type", "Gather"},
                                                    {"reason", "folded into a constant scalar"}}));
    EXPECT_EQ(j["skipped_nodes"], nlohmann::json::array());
    // grouped by op type in order of first appearance: Shape 1, Constant 2, Gather 1
    const std::string t = report::summary_table(a, {}, folded);
    EXPECT_NE(t.find("\nfolded 4 ONNX node(s) into constants when the file was read (Shape 1, Constant 2, Gather 1; "
                     "JSON lists them as folded_nodes)\n"),
              std::string::npos)
        << t;
    EXPECT_EQ(t.find("skipped"), std::string::npos);
    EXPECT_EQ(report::summary_json(a, {"", "zoo:x", {}})["folded_nodes"], nlohmann::json::array());
}
