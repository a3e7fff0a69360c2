// ONNX nodes left out of an imported model (--skip-unsupported) appear in the summary's JSON and table.
#include <gtest/gtest.h>

#include "ridgeline/report/summary.hpp"

namespace core = ridgeline::core;
namespace report = ridgeline::report;

TEST(SkippedNodes, SummaryJsonAndTableFooter) {
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
