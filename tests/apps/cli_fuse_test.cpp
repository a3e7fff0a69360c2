// `--fuse` and what fusing saves, as a user runs them on examples/tiny_cnn.onnx (conv1 -> bn1 -> relu1 -> pool ->
// conv2 -> relu2 -> gap -> flatten -> fc; make_tiny_cnn_onnx.py writes it).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "../support/scratch.hpp"
#include "process.hpp"

using ridgeline::test::run_ridgeline;
using json = nlohmann::json;

namespace {
const std::string tiny = std::string(RIDGELINE_SOURCE_DIR) + "/examples/tiny_cnn.onnx";
/// A time is measured, or disturbed where other work on the machine took its samples (a loaded CI host): either
/// way it was timed.
bool timed(const json& state) { return state == "measured" || state == "disturbed"; }
}  // namespace

TEST(CliFuse, SummaryCountsEachGroupOnceWithItsBoundaryBytes) {
    const auto plain = run_ridgeline({"summary", "--onnx", tiny, "--format", "json"});
    const auto fused = run_ridgeline({"summary", "--onnx", tiny, "--fuse", "--format", "json"});
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    ASSERT_EQ(fused.exit_code, 0) << fused.err;
    const json p = json::parse(plain.out), f = json::parse(fused.out);
    EXPECT_EQ(f["fusion"], "2 fused groups: 1 batch norm folded and 2 activations as post-ops");
    EXPECT_FALSE(p.contains("fusion"));
    ASSERT_EQ(p["layers"].size(), 9u);
    ASSERT_EQ(f["layers"].size(), 6u);  // conv1+bn1+relu1 and conv2+relu2 are one row each
    const json& g = f["layers"][0];
    EXPECT_EQ(g["name"], "conv1");
    EXPECT_EQ(g["label"], "conv1+bn1+relu1");
    ASSERT_EQ(g["fused"].size(), 3u);
    EXPECT_EQ(g["fused"][1]["rule"], "fold batch norm");
    EXPECT_EQ(g["fused"][2]["rule"], "activation post-op");
    // the group's MACs and FLOPs are its members'; its bytes: conv1's input 3x32x32 = 3,072, weights 432 + bias 16,
    // output 16x32x32 = 16,384 elements (bn1's four vectors folded), 4 bytes each
    EXPECT_EQ(g["macs"], p["layers"][0]["macs"]);
    EXPECT_EQ(g["flops"].get<std::int64_t>(), p["layers"][0]["flops"].get<std::int64_t>() +
                                                  p["layers"][1]["flops"].get<std::int64_t>() +
                                                  p["layers"][2]["flops"].get<std::int64_t>());
    EXPECT_EQ(g["bytes"], (3072 + 432 + 16 + 16384) * 4);
    EXPECT_EQ(f["totals"]["params"], p["totals"]["params"]);
    EXPECT_EQ(f["totals"]["macs"], p["totals"]["macs"]);
    EXPECT_LT(f["totals"]["bytes"].get<std::int64_t>(), p["totals"]["bytes"].get<std::int64_t>());
    // the CSV names each row by its label, and its inputs the same way: pool reads the group conv1+bn1+relu1
    const auto csv = run_ridgeline({"summary", "--onnx", tiny, "--fuse", "--format", "csv"});
    ASSERT_EQ(csv.exit_code, 0) << csv.err;
    const std::string label = f["layers"][1]["name"].get<std::string>();  // the layer after the first group (no group)
    const std::size_t at = csv.out.find("\n" + label + ",");
    ASSERT_NE(at, std::string::npos) << csv.out;
    std::vector<std::string> fields;
    std::string field;
    for (std::size_t i = at + 1; i < csv.out.size() && csv.out[i] != '\n'; ++i)
        if (csv.out[i] == ',') fields.push_back(std::exchange(field, {}));
        else field += csv.out[i];
    ASSERT_GE(fields.size(), 4u);
    EXPECT_EQ(fields[3], "conv1+bn1+relu1");  // name, op, layer, inputs
}

TEST(CliFuse, AFusedProfileIsVerifiedAndAPlainOneSaysWhatFusingSaves) {
    const auto fused = run_ridgeline({"profile", "--onnx", tiny, "--fuse", "--quick", "--quiet", "--no-roofline",
                                      "--device", "cpu", "--format", "json"});
    ASSERT_EQ(fused.exit_code, 0) << fused.err;
    const json f = json::parse(fused.out);
    EXPECT_TRUE(timed(f["end_to_end"]["state"])) << f["end_to_end"];
    EXPECT_FALSE(f.contains("fusion_savings"));  // nothing is left to fuse
    for (const auto& l : f["layers"])
        if (timed(l["state"])) {
            EXPECT_EQ(l["verification"]["state"], "passed") << l["name"];
        }
    EXPECT_EQ(f["layers"][0]["label"], "conv1+bn1+relu1");

    const auto plain = run_ridgeline({"profile", "--onnx", tiny, "--quick", "--quiet", "--no-roofline", "--device",
                                      "cpu", "--format", "json"});
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    const json p = json::parse(plain.out);
    ASSERT_TRUE(p.contains("fusion_savings"));
    const json& s = p["fusion_savings"];
    ASSERT_EQ(s["groups"].size(), 2u);
    EXPECT_EQ(s["groups"][0]["label"], "conv1+bn1+relu1");
    EXPECT_EQ(s["groups"][0]["members"], json({"conv1", "bn1", "relu1"}));
    for (const auto& g : s["groups"]) {
        EXPECT_TRUE(timed(g["state"])) << g["label"];
        EXPECT_EQ(g["verification"], "passed") << g["label"];
        // the members' medians summed; null only where one of them was disturbed
        if (!g["members_ms"].is_null()) {
            EXPECT_GT(g["members_ms"].get<double>(), 0.0);
        }
    }
    EXPECT_TRUE(timed(s["end_to_end"]["state"])) << s["end_to_end"];
    // the fused pass's outputs against the reference run of the fused model (conv+bn+relu, folded, on its random
    // weights): a tiny model within end_to_end_verify_max_macs, so it is compared, never merely skipped
    EXPECT_EQ(s["end_to_end"]["verification"]["state"], "passed") << s["end_to_end"];
    // --no-fusion-savings leaves it out
    const auto without = run_ridgeline({"profile", "--onnx", tiny, "--quick", "--quiet", "--no-roofline", "--device",
                                        "cpu", "--no-end-to-end", "--no-fusion-savings", "--format", "json"});
    ASSERT_EQ(without.exit_code, 0) << without.err;
    EXPECT_FALSE(json::parse(without.out).contains("fusion_savings"));
}

TEST(CliFuse, TheTableSaysWhatFusingSaves) {
    const auto r = run_ridgeline({"profile", "--onnx", tiny, "--quick", "--no-roofline", "--device", "cpu"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("what fusing saves (2 groups a deployment fuses"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" as profiled, "), std::string::npos) << r.out;  // the end to end both ways
    // the fused pass's outputs were compared with the reference run of the fused model before it was timed
    const std::size_t e2e = r.out.find("  end to end ");
    ASSERT_NE(e2e, std::string::npos) << r.out;
    const std::string line = r.out.substr(e2e, r.out.find(" groups: ", e2e) - e2e);
    EXPECT_NE(line.find("outputs verified)"), std::string::npos) << line;
    const auto f = run_ridgeline({"profile", "--onnx", tiny, "--quick", "--no-roofline", "--device", "cpu", "--fuse"});
    ASSERT_EQ(f.exit_code, 0) << f.err;
    EXPECT_NE(f.out.find("fused as a deployment runs it: 2 fused groups"), std::string::npos) << f.out;
    EXPECT_NE(f.out.find("conv1+bn1+relu1"), std::string::npos) << f.out;
}

TEST(CliFuse, APredictionOfAFusedProfileIsFusedToo) {
    // a prediction keeps the source's groups, members and all, so that compare reads it beside a fused run (and
    // refuses it beside an unfused one, saying why) as it reads the fused profile itself
    const auto dir = ridgeline::test::fresh_scratch_dir("fused-predict");
    const std::string fused = (dir / "fused.json").string(), plain = (dir / "plain.json").string(),
                      predicted = (dir / "predicted.json").string();
    for (const auto& [file, fuse] : {std::pair{fused, true}, std::pair{plain, false}}) {
        std::vector<std::string> args{"profile", "--onnx", tiny, "--quick", "--quiet", "--device", "cpu",
                                      "--no-fusion-savings", "--format", "json", "--output", file};
        if (fuse) args.push_back("--fuse");
        const auto r = run_ridgeline(args);
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    // to a datasheet's GPU: a target measured here could have disturbed ceilings on a busy host, which predict refuses
    const auto p = run_ridgeline({"predict", "--from", fused, "--to", "h100", "--format", "json", "--output", predicted});
    ASSERT_EQ(p.exit_code, 0) << p.err;
    const auto c = run_ridgeline({"compare", fused, predicted});
    EXPECT_EQ(c.exit_code, 0) << c.err;
    EXPECT_NE(c.out.find("conv1+bn1+relu1"), std::string::npos) << c.out;
    const auto mixed = run_ridgeline({"compare", plain, predicted});
    EXPECT_NE(mixed.exit_code, 0);
    EXPECT_NE(mixed.err.find("profiles the model fused and"), std::string::npos) << mixed.err;
    // a --fuse profile with nothing to fuse is a fused profile: predict --fuse takes it
    const std::string lone = (dir / "lone.json").string();
    const auto relu = run_ridgeline({"profile", "--layer", "relu", "--input", "1x64", "--fuse", "--quick", "--quiet",
                                     "--device", "cpu", "--format", "json", "--output", lone});
    ASSERT_EQ(relu.exit_code, 0) << relu.err;
    const auto lone_predicted = run_ridgeline({"predict", "--from", lone, "--to", "h100", "--fuse"});
    EXPECT_EQ(lone_predicted.exit_code, 0) << lone_predicted.err;
    // --fuse on an unfused profile names the file (it once printed `but  + from +  was profiled`)
    const auto unfused = run_ridgeline({"predict", "--from", plain, "--to", "h100", "--fuse"});
    EXPECT_EQ(unfused.exit_code, 2);
    EXPECT_NE(unfused.err.find("predict: --fuse, but \"" + plain + "\" was profiled without it"), std::string::npos)
        << unfused.err;
}
