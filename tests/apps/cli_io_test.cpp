// The command line with model files: --model-file, --onnx, `export` and `weights`.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include "ridgeline/config.hpp"
#include "../support/scratch.hpp"

using ridgeline::test::run_ridgeline;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {
fs::path temp_path(const std::string& name) {
    return ridgeline::test::scratch_dir() / name;
}
}  // namespace

TEST(CliModelFiles, ExportThenModelFileGivesTheSameSummary) {
    const auto file = temp_path("resnet18.json");
    auto e = run_ridgeline({"export", "--model", "resnet18", "--batch", "2", "--output", file.string()});
    ASSERT_EQ(e.exit_code, 0) << e.err;
    EXPECT_EQ(json::parse(std::ifstream(file))["format"], "ridgeline.model/1");
    auto zoo = run_ridgeline({"summary", "--model", "resnet18", "--batch", "2", "--format", "json"});
    auto from_file = run_ridgeline({"summary", "--model-file", file.string(), "--format", "json"});
    ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
    const json a = json::parse(zoo.out), b = json::parse(from_file.out);
    EXPECT_EQ(a["totals"], b["totals"]);
    EXPECT_EQ(a["layers"], b["layers"]);
    EXPECT_EQ(b["source"], "file:" + file.string());
    EXPECT_EQ(b["skipped_nodes"], json::array());
    // --batch applies to a model file too
    auto b4 = run_ridgeline({"summary", "--model-file", file.string(), "--batch", "4", "--format", "json"});
    EXPECT_EQ(json::parse(b4.out)["totals"]["macs"].get<std::int64_t>(), 2 * a["totals"]["macs"].get<std::int64_t>());
}

TEST(CliModelFiles, UsageAndFileErrors) {
    struct c {
        std::vector<std::string> args;
        int exit_code;
        std::string message;
    };
    const auto bad = temp_path("bad.json");
    std::ofstream(bad) << R"({"inputs": [{"name": "x", "shape": [1, 4]}], "layers": [{"name": "r", "op": "relu", "bias": 1}]})";
    const c cases[] = {
        {{"summary", "--model", "resnet18", "--onnx", "m.onnx"}, 2, "--model and --onnx cannot be used together"},
        {{"summary", "--model-file", "a.json", "--onnx", "m.onnx"}, 2, "--model-file and --onnx cannot be used together"},
        {{"summary", "--model", "resnet18", "--skip-unsupported"}, 2, "--skip-unsupported applies to --onnx only"},
        {{"weights", "--model", "resnet18"}, 2, "`weights` reads a model's real weights: give --onnx FILE"},
        {{"summary", "--model-file", bad.string()}, 1,
         bad.string() + ": $.layers[0].bias: unknown attribute \"bias\" (this op takes no attributes)"},
        {{"summary", "--model-file", temp_path("none.json").string()}, 1, "none.json: no such file"},
    };
    for (const auto& k : cases) {
        auto r = run_ridgeline(k.args);
        EXPECT_EQ(r.exit_code, k.exit_code) << r.err;
        EXPECT_NE(r.err.find(k.message), std::string::npos) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
}

TEST(CliModelFiles, OnnxSupportIsStatedClearly) {
    if (RIDGELINE_HAVE_ONNX) {
        auto r = run_ridgeline({"summary", "--onnx", temp_path("missing.onnx").string()});
        EXPECT_EQ(r.exit_code, 1);
        EXPECT_NE(r.err.find("missing.onnx: no such file"), std::string::npos) << r.err;
    } else {
        auto r = run_ridgeline({"summary", "--onnx", "model.onnx"});
        EXPECT_EQ(r.exit_code, 1);
        EXPECT_NE(r.err.find("model.onnx: this build has no ONNX support"), std::string::npos) << r.err;
    }
}

TEST(CliModelFiles, OnnxSummaryWeightsAndExport) {
    if (!RIDGELINE_HAVE_ONNX) GTEST_SKIP() << "this build has no ONNX support";
    // the graph-only export in tests/data/onnx, alone in a scratch folder (its weights are not committed)
    const auto model = temp_path("fixture/squeezenet1_0_folded.onnx");
    fs::create_directories(model.parent_path());
    fs::copy_file(fs::path(RIDGELINE_SOURCE_DIR) / "tests/data/onnx/squeezenet1_0_folded.onnx", model,
                  fs::copy_options::overwrite_existing);
    auto absent = run_ridgeline({"summary", "--onnx", model.string()});
    EXPECT_EQ(absent.exit_code, 2);  // what to do is a flag: a usage mistake, and the message names it
    EXPECT_NE(absent.err.find("\"squeezenet1_0_folded.data\""), std::string::npos) << absent.err;
    EXPECT_NE(absent.err.find("(--shapes-only)"), std::string::npos) << absent.err;
    auto s = run_ridgeline({"summary", "--onnx", model.string(), "--shapes-only", "--format", "json"});
    ASSERT_EQ(s.exit_code, 0) << s.err;
    const json j = json::parse(s.out);
    EXPECT_EQ(j["totals"]["macs"], 818'924'576);  // torchvision's squeezenet1_0 at 1x3x224x224
    EXPECT_EQ(j["source"], "onnx:" + model.string());
    // the report says its weights are random: 50 of the 52 float initializers (26 convolutions' weights and
    // biases) are in the absent data file; the two 16-channel biases (64 bytes) stay inline, under the script's 128
    ASSERT_EQ(j["warnings"].size(), 1u);
    EXPECT_NE(j["warnings"][0].get<std::string>().find("--shapes-only: 50 initializer(s) have no data"),
              std::string::npos)
        << j["warnings"];
    EXPECT_NE(s.err.find("seeded random weights"), std::string::npos) << s.err;

    // weights reports the file's real weights: --shapes-only has none
    auto w = run_ridgeline({"weights", "--onnx", model.string(), "--shapes-only"});
    EXPECT_EQ(w.exit_code, 2);
    EXPECT_NE(w.err.find("--shapes-only imports without them"), std::string::npos) << w.err;

    const auto file = temp_path("squeezenet.json");
    auto e = run_ridgeline({"export", "--onnx", model.string(), "--shapes-only", "--output", file.string()});
    ASSERT_EQ(e.exit_code, 0) << e.err;
    auto back = run_ridgeline({"summary", "--model-file", file.string(), "--format", "json"});
    ASSERT_EQ(back.exit_code, 0) << back.err;
    EXPECT_EQ(json::parse(back.out)["totals"], j["totals"]);
}

TEST(CliModelFiles, ProfileVerifiesEveryLayerOfMobileNetV3ATransformerEncoderAndAGpt2Block) {
    if (!RIDGELINE_HAVE_ONNX) GTEST_SKIP() << "this build has no ONNX support";
    // issue 11: every computed layer of the PyTorch exports runs on oneDNN and matches the reference loops;
    // views (flatten, reshape, transpose, slice) compute nothing and are not verified
    // mobilenet_v3_large: 140 layers, one view (the classifier's flatten); the encoder: 56 layers, 30 views (14
    // transposes, 10 reshapes, 6 slices of the packed q, k, v projection); the GPT-2 block: 27 layers, 13 views
    // (3 slices of c_attn's split, 4 reshapes, 5 transposes, and the causal mask, a held buffer)
    const std::map<std::string, int> views_of = {
        {"mobilenet_v3_large_folded.onnx", 1}, {"transformer_encoder_bn.onnx", 30}, {"gpt2_block_bn.onnx", 13}};
    for (const auto& [file, expected_views] : views_of) {
        SCOPED_TRACE(file);
        const auto model = temp_path("verify/" + file);
        fs::create_directories(model.parent_path());
        fs::copy_file(fs::path(RIDGELINE_SOURCE_DIR) / "tests/data/onnx" / file, model,
                      fs::copy_options::overwrite_existing);
        auto r = run_ridgeline({"profile", "--onnx", model.string(), "--shapes-only", "--quick", "--quiet",
                                "--no-roofline", "--device", "cpu", "--format", "json"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const json j = json::parse(r.out);
        int passed = 0, views = 0;
        for (const auto& l : j["layers"]) {
            if (l["state"] == "view") {
                ++views;
                continue;
            }
            EXPECT_EQ(l["verification"]["state"], "passed") << l["name"] << " " << l["verification"];
            passed += l["verification"]["state"] == "passed";
        }
        EXPECT_EQ(passed + views, static_cast<int>(j["layers"].size()));
        EXPECT_EQ(views, expected_views);
    }
}

TEST(CliModelFiles, AnExportedModelWithHeldTensorsReadsBack) {
    if (!RIDGELINE_HAVE_ONNX) GTEST_SKIP() << "this build has no ONNX support";
    // Swin-T holds tensors: the shifted blocks' attention masks (parameter layers with "inputs": [], computed in the
    // graph and folded) and relative_position_index (ids an embedding holds). Exported to ridgeline's JSON format, it
    // reads back with the same counts (tests/io/onnx_fixtures_test.cpp derives them): params 28,288,354 (PyTorch's),
    // buffers 223,293 = the masks (nW, 49, 49) of stage 1's shifted block (64 windows), stage 2's (16) and stage 3's
    // three (4 each): 153,664 + 38,416 + 3 x 9,604 = 220,892, plus the 49 x 49 = 2,401 held ids
    const auto out = temp_path("swin_t.json");
    const std::string onnx = (fs::path(RIDGELINE_SOURCE_DIR) / "tests/data/onnx/swin_t_bn.onnx").string();
    auto e = run_ridgeline({"export", "--onnx", onnx, "--shapes-only", "-o", out.string()});
    ASSERT_EQ(e.exit_code, 0) << e.err;
    auto r = run_ridgeline({"summary", "--model-file", out.string(), "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    auto o = run_ridgeline({"summary", "--onnx", onnx, "--shapes-only", "--format", "json"});
    ASSERT_EQ(o.exit_code, 0) << o.err;
    const json from_onnx = json::parse(o.out);
    EXPECT_EQ(j["totals"]["params"], 28'288'354);
    EXPECT_EQ(j["totals"]["buffers"], 223'293);
    EXPECT_EQ(j["totals"], from_onnx["totals"]);
    int held = 0;
    for (const auto& l : j["layers"]) held += l["op"] == "parameter";
    EXPECT_EQ(held, 5);  // the five shifted blocks' masks
}
