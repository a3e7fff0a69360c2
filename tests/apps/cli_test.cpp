// The command line as a user runs it: exit codes, the table, JSON and CSV.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "process.hpp"
#include "../support/scratch.hpp"

using ridgeline::test::run_ridgeline;
using json = nlohmann::json;

namespace {
std::size_t count_lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }
}  // namespace

TEST(Cli, VersionAndHelp) {
    auto v = run_ridgeline({"--version"});
    EXPECT_EQ(v.exit_code, 0);
    EXPECT_TRUE(std::regex_search(v.out, std::regex(R"(^ridgeline \d+\.\d+\.\d+)"))) << v.out;
    for (const char* cmd : {"summary", "models"}) {
        auto h = run_ridgeline({cmd, "--help"});
        EXPECT_EQ(h.exit_code, 0) << cmd;
        EXPECT_NE(h.out.find("--format"), std::string::npos) << cmd;
    }
}

TEST(Cli, UsageErrorsExitTwoWithOneLine) {
    struct c {
        std::vector<std::string> args;
        const char* key_words;
    };
    const c cases[] = {
        {{}, "A subcommand is required"},
        {{"summary"}, "give a model: --model NAME, --hf-config FILE, --layer STRING"},
        {{"summary", "--model", "resnet18", "--layer", "relu"}, "--model and --layer cannot be used together"},
        {{"summary", "--layer", "relu"}, "--layer needs --input"},
        {{"summary", "--model", "resnet18", "--format", "xml"}, "--format"},
        {{"summary", "--model", "resnet18", "--batch", "0"}, "--batch"},
        {{"summary", "--model", "resnet18", "--bogus"}, "--bogus"},
        // integers are decimal, as in layer strings (CLI11 alone reads 0x10 as 16 and 010 as 8)
        {{"summary", "--model", "gpt2", "--seq", "0x10"}, "\"0x10\" is not a decimal integer"},
        {{"summary", "--model", "resnet18", "--batch", "010"}, "\"010\" is not a decimal integer"},
        {{"profile-everything"}, "unknown command \"profile-everything\""},
        // a switch given a value that is not true or false (CLI11 alone: "Could not convert: --fuse = banana")
        {{"summary", "--model", "resnet18", "--fuse=banana"},
         "--fuse is a switch: give it alone, or =true or =false; got \"banana\" (see `ridgeline summary --help`)"},
    };
    for (const auto& k : cases) {
        auto r = run_ridgeline(k.args);
        EXPECT_EQ(r.exit_code, 2) << r.err;
        EXPECT_EQ(count_lines(r.err), 1u) << r.err;
        EXPECT_NE(r.err.find(k.key_words), std::string::npos) << r.err;
        EXPECT_EQ(r.err.rfind("ridgeline: error: ", 0), 0u) << r.err;
    }
}

TEST(Cli, BadModelsAndInputsExitWithOneLine) {
    // README: exit 2 for a command-line mistake (a shape string that is not one), 1 for a model that cannot
    // be built or cannot take the input
    struct c {
        std::vector<std::string> args;
        int exit_code;
        const char* message;
    };
    const c cases[] = {
        {{"summary", "--model", "resnet19"}, 2, "unknown model \"resnet19\" (did you mean \"resnet18\"?)"},
        {{"summary", "--model", "GPT2"}, 2, "unknown model \"GPT2\" (did you mean \"gpt2\"?)"},
        // a layer string is what the user typed: its mistakes are usage mistakes
        {{"summary", "--layer", "conv2d:in_channels=64,out_channels=64,kernel_size=3,groups=3", "--input", "1x64x8x8"},
         2, "conv2d: in_channels 64 is not divisible by groups 3"},
        {{"summary", "--model", "resnet18", "--input", "1x3x0x224"}, 2, "--input: invalid shape \"1x3x0x224\": dimension 2 is 0"},
        {{"summary", "--model", "resnet18", "--input", "1x3x224"}, 2, "input 1x3x224 has rank 3, expected NCHW"},
        {{"summary", "--model", "resnet18", "--input", "1x1x224x224"},
         1, "conv2d \"conv1\": input has 1 channels (dimension 1 of 1x1x224x224) but in_channels is 3"},
    };
    for (const auto& k : cases) {
        auto r = run_ridgeline(k.args);
        EXPECT_EQ(r.exit_code, k.exit_code) << r.err;
        EXPECT_EQ(count_lines(r.err), 1u) << r.err;
        EXPECT_NE(r.err.find(k.message), std::string::npos) << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
    }
}

TEST(Cli, SummaryTableHasEveryLayerAndTotals) {
    auto r = run_ridgeline({"summary", "--model", "resnet18"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // header, one row per layer (69), totals with exact numbers
    EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(layer\s+op\s+output\s+params\s+MACs\s+FLOPs\s+bytes\s+FLOP/B)")));
    EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\nconv1\s+conv2d\s+1x64x112x112\s+9,408\s+118\.0 M\s+236\.0 M)")))
        << r.out.substr(0, 600);
    EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\ntotal \(69 layers\)\s+11,689,512\s+1\.814 G)")));
    EXPECT_NE(r.out.find("MACs 1,814,073,344"), std::string::npos);
}

TEST(Cli, SummaryJsonFieldByField) {
    auto r = run_ridgeline({"summary", "--layer", "conv2d:in_channels=16,out_channels=32,kernel_size=3,stride=2,padding=1,bias=false",
                            "--input", "1x16x64x64", "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["schema"], "ridgeline.summary/1");
    EXPECT_EQ(j["batch"], 1);
    EXPECT_EQ(j["dtype"], "fp32");
    EXPECT_EQ(j["source"], "layer:conv2d:in_channels=16,out_channels=32,kernel_size=3,stride=2,padding=1,bias=false");
    EXPECT_TRUE(j["conventions"].contains("macs"));
    ASSERT_EQ(j["layers"].size(), 1u);
    const json& l = j["layers"][0];
    EXPECT_EQ(l["name"], "conv2d");
    EXPECT_EQ(l["op"], "conv2d");
    EXPECT_EQ(l["inputs"], json::array({"input"}));
    EXPECT_EQ(l["input_shapes"], json::parse("[[1,16,64,64]]"));
    EXPECT_EQ(l["output_shape"], json::parse("[1,32,32,32]"));
    // derivations in tests/core/cost_test.cpp (StridedConvWithoutBias)
    EXPECT_EQ(l["params"], 4608);
    EXPECT_EQ(l["buffers"], 0);
    EXPECT_EQ(l["macs"], 4718592);
    EXPECT_EQ(l["flops"], 9437184);
    EXPECT_EQ(l["bytes"], 411648);
    EXPECT_DOUBLE_EQ(l["arithmetic_intensity"].get<double>(), 9437184.0 / 411648.0);
    EXPECT_EQ(j["totals"]["macs"], 4718592);
}

TEST(Cli, SummaryJsonOfTransformerAndDtype) {
    auto r = run_ridgeline({"summary", "--model", "gpt2", "--input", "2x64", "--dtype", "bf16", "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["dtype"], "bf16");
    EXPECT_EQ(j["batch"], 2);
    EXPECT_EQ(j["totals"]["params"], 124439808);
    EXPECT_EQ(j["conventions"]["bytes_per_element"], 2);
    // a view moves nothing: its intensity is null
    bool saw_view = false;
    for (const auto& l : j["layers"])
        if (l["op"] == "reshape") {
            saw_view = true;
            EXPECT_TRUE(l["arithmetic_intensity"].is_null());
            EXPECT_EQ(l["bytes"], 0);
        }
    EXPECT_TRUE(saw_view);
}

TEST(Cli, SummaryCsvHasTheJsonFields) {
    auto r = run_ridgeline({"summary", "--model", "squeezenet1_0", "--format", "csv"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::istringstream in(r.out);
    std::string header, first;
    std::getline(in, header);
    std::getline(in, first);
    EXPECT_EQ(header, "name,op,layer,inputs,input_shapes,output_shape,params,buffers,macs,flops,bytes,arithmetic_intensity,"
                      "executed_macs,executed_flops");
    // features.0: conv 3->96 k7 s2 on 224: (224-7)/2+1 = 109; macs 96*109*109*147 = 167,664,672;
    // params 96*147 + 96 = 14,208
    EXPECT_TRUE(first.rfind("features.0,conv2d,\"conv2d:in_channels=3,out_channels=96,kernel_size=7,stride=2\",input,"
                            "1x3x224x224,1x96x109x109,14208,0,167664672,",
                            0) == 0)
        << first;
    // without padding every tap executes: executed_macs = macs, executed_flops = flops (2 x macs + the 96 x 109 x 109
    // = 1,140,576 bias adds = 336,469,920)
    EXPECT_TRUE(first.size() > 20 && first.substr(first.size() - 20) == ",167664672,336469920") << first;
    // resnet18's conv1 (7x7, stride 2, padding 3, 224 -> 112) skips the taps in the padding: along one axis output 0
    // loses 3 taps, output 1 one, output 111 two, so 112 x 7 - 6 = 778 taps execute; 64 x 3 x 778^2 = 116,214,528
    // executed MACs and, without a bias, 232,429,056 executed FLOPs
    auto rn = run_ridgeline({"summary", "--model", "resnet18", "--format", "csv"});
    ASSERT_EQ(rn.exit_code, 0) << rn.err;
    std::istringstream rin(rn.out);
    std::string conv1;
    std::getline(rin, conv1);
    std::getline(rin, conv1);
    EXPECT_TRUE(conv1.rfind("conv1,", 0) == 0 && conv1.substr(conv1.size() - 20) == ",116214528,232429056") << conv1;
}

TEST(Cli, OutputFileIsWrittenWhole) {
    namespace fs = std::filesystem;
    const fs::path dir = ridgeline::test::fresh_scratch_dir("output");
    const std::string path = (dir / "r.json").string();
    auto r = run_ridgeline({"summary", "--model", "resnet50", "--format", "json", "--output", path});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::ifstream f(path);
    const json j = json::parse(f);
    EXPECT_EQ(j["totals"]["params"], 25557032);
    EXPECT_EQ(j["totals"]["macs"], 4089184256);
    auto bad = run_ridgeline({"summary", "--model", "resnet50", "--output", (dir / "no" / "r.json").string()});
    EXPECT_EQ(bad.exit_code, 1);
    EXPECT_NE(bad.err.find("does not exist"), std::string::npos) << bad.err;
}

TEST(Cli, ModelsListsTheZoo) {
    auto r = run_ridgeline({"models", "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    std::vector<std::string> names;
    for (const auto& m : j) names.push_back(m["name"]);
    for (const char* want : {"resnet18", "resnet34", "resnet50", "resnet101", "mobilenet_v2", "vgg11", "vgg16",
                             "vgg16_bn", "alexnet", "squeezenet1_0", "bert_base", "gpt2"})
        EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
}
