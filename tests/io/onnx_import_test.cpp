// ONNX import: every supported op on files generated here, shared and external initializers, the error
// messages, and the three torchvision exports in ../shared/models (skipped when that folder is absent).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "onnx_builder.hpp"
#include "onnx_test_graphs.hpp"
#include "ridgeline/backend_api/tensor.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/core/fusion.hpp"
#include "ridgeline/io/model_file.hpp"
#include "ridgeline/io/onnx_import.hpp"
#include "ridgeline/report/weights.hpp"
#include "../support/scratch.hpp"

namespace core = ridgeline::core;
namespace io = ridgeline::io;
namespace fs = std::filesystem;
using ridgeline::test::onnx_builder;
using ridgeline::test::cnn;
using ridgeline::test::transformer;

namespace {

fs::path temp_dir() {
    return ridgeline::test::scratch_dir();
}

std::string error_of(const fs::path& p, const io::onnx_options& o = {}) {
    try {
        (void)io::import_onnx(p, o);
    } catch (const core::error& e) {
        return e.what();
    }
    return "";
}

std::vector<std::string> kinds(const core::model& m) {
    std::vector<std::string> k;
    for (const auto& l : m.layers()) k.emplace_back(core::kind_of(l.op));
    return k;
}

const core::layer& layer_named(const core::model& m, const std::string& name) {
    for (const auto& l : m.layers())
        if (l.name == name) return l;
    throw std::runtime_error("no layer " + name);
}

}  // namespace

TEST(OnnxImport, ThisBuildHasOnnx) { EXPECT_TRUE(io::have_onnx()); }

TEST(OnnxImport, ConvolutionalOps) {
    const auto p = cnn().save(temp_dir() / "cnn.onnx");
    const io::onnx_model m = io::import_onnx(p);
    EXPECT_EQ(kinds(m.model), (std::vector<std::string>{"conv2d", "batch_norm2d", "relu", "relu6", "max_pool2d", "avg_pool2d",
                                                        "sigmoid", "tanh", "add", "mul", "concat", "adaptive_avg_pool2d",
                                                        "flatten", "linear", "softmax"}));
    EXPECT_TRUE(m.skipped.empty());
    EXPECT_EQ(m.model.name(), "test_model");
    EXPECT_EQ(core::to_string(layer_named(m.model, "/conv/Conv").op), "conv2d:in_channels=3,out_channels=4,kernel_size=3,padding=1");
    EXPECT_EQ(core::to_string(layer_named(m.model, "/pool/MaxPool").op), "max_pool2d:kernel_size=2");
    // ONNX's AveragePool defaults differ from PyTorch's: stride 1 and count_include_pad as given
    EXPECT_EQ(core::to_string(layer_named(m.model, "/avg/AveragePool").op), "avg_pool2d:kernel_size=3,stride=1,padding=1");
    EXPECT_EQ(layer_named(m.model, "/Concat").inputs, (std::vector<std::string>{"/Mul", "/Add"}));
    // Identity and Dropout are no layers: GlobalAveragePool reads the Concat
    EXPECT_EQ(layer_named(m.model, "/GlobalAveragePool").inputs, std::vector<std::string>{"/Concat"});

    const auto a = core::analyze(m.model, core::dtype::fp32);
    // macs: conv 1*4*8*8 * 3*3*3 = 6912; Gemm 1 * 8 * 5 = 40
    EXPECT_EQ(a.totals.macs, 6912 + 40);
    // params: conv 4*3*3*3 + 4 = 112; BN gamma+beta 8 (mean/var are 8 buffers); fc 8*5 + 5 = 45
    EXPECT_EQ(a.totals.params, 112 + 8 + 45);
    EXPECT_EQ(a.totals.buffers, 8);
    // Gemm transB=0: B is [K=8, N=5] with B[k][n] = 5k + n; linear's weight is [out=5, in=8], W[n][k] = B[k][n]
    const auto& w = m.weights->tensors.at("/fc/Gemm.weight");
    EXPECT_EQ(w.dims, (core::shape{5, 8}));
    for (int n = 0; n < 5; ++n)
        for (int k = 0; k < 8; ++k) EXPECT_EQ(w.data[static_cast<std::size_t>(n * 8 + k)], static_cast<float>(5 * k + n));
    EXPECT_EQ(m.weights->tensors.at("/bn/BatchNormalization.running_var").data, (std::vector<float>{1.0f, 2.0f, 0.5f, 1.0f}));
    EXPECT_EQ(m.weights->tensors.size(), 2u + 4u + 2u);  // conv w, b; BN 4; fc w, b

    // a symbolic batch takes --batch, and macs scale with it
    const io::onnx_model m8 = io::import_onnx(p, {{}, 8, false});
    EXPECT_EQ(core::analyze(m8.model, core::dtype::fp32).totals.macs, 8 * (6912 + 40));
}

TEST(OnnxImport, TransformerOps) {
    const auto p = transformer().save(temp_dir() / "transformer.onnx");
    const io::onnx_model m = io::import_onnx(p);
    // MatMul + Add fuse into one linear; Div/Erf/Add/Mul/Mul is one gelu; the 3-cycle is two transposes
    EXPECT_EQ(kinds(m.model), (std::vector<std::string>{"embedding", "linear", "gelu", "layer_norm", "reshape", "transpose",
                                                        "transpose", "transpose", "transpose", "matmul", "scale", "scale",
                                                        "gelu"}));
    EXPECT_EQ(core::to_string(layer_named(m.model, "/fc1/MatMul").op), "linear:in_features=6,out_features=6");
    EXPECT_EQ(layer_named(m.model, "/act/Gelu").inputs, std::vector<std::string>{"/fc1/MatMul"});
    EXPECT_EQ(core::to_string(layer_named(m.model, "/ln/LayerNormalization").op), "layer_norm:normalized_shape=6,eps=1e-06");
    EXPECT_EQ(core::to_string(layer_named(m.model, "/Reshape").op), "reshape:shape=0x4x2x3");
    EXPECT_EQ(core::to_string(layer_named(m.model, "/Transpose").op), "transpose:dim0=1,dim1=2");
    EXPECT_EQ(core::to_string(layer_named(m.model, "/Mul").op), "scale:factor=0.25");
    EXPECT_EQ(core::to_string(layer_named(m.model, "/Div").op), "scale:factor=0.5");
    EXPECT_TRUE(m.model.inputs()[0].indices);
    const auto a = core::analyze(m.model, core::dtype::fp32);
    // macs: linear 4 rows * 6 * 6 = 144; matmul [1,3,2,4] x [1,3,4,2]: 3 * 2 * 4 * 2 = 48
    EXPECT_EQ(a.totals.macs, 144 + 48);
    EXPECT_EQ(a.layers.back().output_shape, (core::shape{1, 3, 2, 2}));
    // MatMul's constant B [K, N] becomes linear's [N, K]; the Add's constant is its bias
    const auto& w = m.weights->tensors.at("/fc1/MatMul.weight").data;
    EXPECT_EQ(w[1], 0.01f * static_cast<float>((6 * 7) % 23 - 11));  // W[0][1] = B[1][0] = value 6 of w1
    EXPECT_EQ(m.weights->tensors.at("/fc1/MatMul.bias").dims, core::shape{6});
}

TEST(OnnxImport, SharedInitializersAreTiedAndCountedOnce) {
    onnx_builder b;
    b.input("x", {1, 3, 4, 4});
    b.init_n("w", {3, 3, 1, 1});
    b.init("bias", {3}, {0.0f, 0.0f, 0.0f});
    b.node("Conv", {"x", "w", "bias"}, {"c1"}, "/c1/Conv");
    b.node("Identity", {"w"}, {"w_again"}, "Identity_0");  // as PyTorch exports repeated weights
    b.node("Conv", {"c1", "w_again", "bias"}, {"c2"}, "/c2/Conv");
    b.output("c2");
    const io::onnx_model m = io::import_onnx(b.save(temp_dir() / "shared.onnx"));
    ASSERT_EQ(m.model.layers().size(), 2u);
    for (const auto& l : m.model.layers()) {
        EXPECT_EQ(l.tied.at("weight"), "w") << l.name;
        EXPECT_EQ(l.tied.at("bias"), "bias") << l.name;
    }
    const auto a = core::analyze(m.model, core::dtype::fp32);
    EXPECT_EQ(a.layers[0].cost.params, 9 + 3);  // each layer shows the shared tensors
    EXPECT_EQ(a.totals.params, 9 + 3);          // the model counts them once
    EXPECT_EQ(m.weights->tensors.size(), 2u);
    EXPECT_EQ(m.weights->tensors.count("w"), 1u);
}

TEST(OnnxImport, AGraphOutputThatANodeReadsStaysAnOutputAndIsNeverFused) {
    // conv -> bn -> relu -> sigmoid with the graph's outputs the sigmoid's and the conv's: the conv's output is
    // returned, so a deployment cannot fold the bn into it (it once was: conv+bn+relu+sig, the output `c` dropped)
    auto imported = [](const std::string& second_output) {
        onnx_builder b;
        b.input("x", {1, 3, 8, 8});
        b.init_n("w", {4, 3, 3, 3});
        for (const char* v : {"g", "beta", "mean"}) b.init_n(v, {4});
        b.init("var", {4}, {1.0f, 2.0f, 0.5f, 1.0f});
        b.node("Conv", {"x", "w"}, {"c"}, "/conv/Conv");
        b.node("BatchNormalization", {"c", "g", "beta", "mean", "var"}, {"n"}, "/bn/BatchNormalization");
        b.node("Relu", {"n"}, {"r"}, "/relu/Relu");
        b.node("Sigmoid", {"r"}, {"y"}, "/sig/Sigmoid");
        b.output("y");
        b.output(second_output);
        return io::import_onnx(b.save(temp_dir() / ("mid_output_" + second_output + ".onnx")));
    };
    const io::onnx_model m = imported("c");
    EXPECT_EQ(m.model.outputs(), std::vector<std::string>{"/conv/Conv"});
    const auto a = core::analyze(m.model, core::dtype::fp32);
    EXPECT_EQ(a.outputs, (std::vector<std::string>{"/conv/Conv", "/sig/Sigmoid"}));  // in layer order
    const auto f = core::fuse(a);
    ASSERT_EQ(f.layers.size(), 4u);  // nothing fused: bn and relu could fold only into a conv nothing else reads
    EXPECT_TRUE(f.layers[0].fused.empty());
    EXPECT_EQ(f.outputs, a.outputs);
    // the bn's output returned instead: conv+bn fuse (their tensor between is no output), the relu stays its own row
    const auto fn = core::fuse(core::analyze(imported("n").model, core::dtype::fp32));
    ASSERT_EQ(fn.layers.size(), 3u);
    EXPECT_EQ(fn.layers[0].fused.size(), 2u);  // conv+bn
    EXPECT_EQ(fn.outputs, (std::vector<std::string>{"/conv/Conv", "/sig/Sigmoid"}));  // the group carries conv's name
}

TEST(OnnxImport, ExternalData) {
    const auto dir = temp_dir() / "external";
    fs::create_directories(dir);
    const std::vector<float> w{1, 2, 3, 4, 5, 6};
    {
        std::ofstream f(dir / "weights.bin", std::ios::binary);
        f.write("0123456789abcdef", 16);  // 16 bytes of something else first
        f.write(reinterpret_cast<const char*>(w.data()), 24);
    }
    onnx_builder b;
    b.input("x", {1, 3});
    b.init_external("fc.w", {2, 3}, {{"location", "weights.bin"}, {"offset", "16"}, {"length", "24"}});
    auto& g = b.node("Gemm", {"x", "fc.w"}, {"y"}, "/fc/Gemm");
    onnx_builder::set(g, "transB", std::int64_t{1});
    b.output("y");
    const auto p = b.save(dir / "model.onnx");
    const io::onnx_model m = io::import_onnx(p);
    EXPECT_EQ(m.weights->tensors.at("/fc/Gemm.weight").data, w);  // transB=1: stored as [out, in] already

    fs::remove(dir / "weights.bin");
    EXPECT_EQ(error_of(p), p.string() + ": initializer \"fc.w\" is stored in the external file \"weights.bin\" (looked for " +
                               (dir / "weights.bin").string() +
                               "), which does not exist: an import by shape only reads the graph without its weights");
    {
        std::ofstream f(dir / "weights.bin", std::ios::binary);
        f.write("short", 5);
    }
    EXPECT_NE(error_of(p).find("the external data file is truncated or does not belong to this model"), std::string::npos);
}

// The external data file is opened only when its real path (symbolic links resolved) lies inside the model's
// folder: a link named like a weights file, or a folder link on the way, cannot make ridgeline read a file elsewhere
// (the onnx library closed the same hole in its external-data loader). A link that stays inside the folder is fine.
TEST(OnnxImport, ExternalDataCannotLeaveTheFolderThroughALink) {
    const auto root = temp_dir() / "external_links";
    const auto dir = root / "m", elsewhere = root / "elsewhere";
    fs::create_directories(dir);
    fs::create_directories(elsewhere);
    const std::vector<float> w{1, 2, 3, 4, 5, 6};  // 24 bytes: what a [2, 3] fp32 initializer needs
    for (const auto& f : {elsewhere / "secret.bin", dir / "inside.bin"}) {
        std::ofstream o(f, std::ios::binary);
        o.write(reinterpret_cast<const char*>(w.data()), 24);
    }
    auto model_reading = [&](const std::string& location, const std::string& file) {
        onnx_builder b;
        b.input("x", {1, 3});
        b.init_external("fc.w", {2, 3}, {{"location", location}});
        auto& g = b.node("Gemm", {"x", "fc.w"}, {"y"}, "/fc/Gemm");
        onnx_builder::set(g, "transB", std::int64_t{1});
        b.output("y");
        return b.save(dir / file);
    };
    fs::create_symlink(elsewhere / "secret.bin", dir / "link.bin");  // a file link out of the folder
    fs::create_directory_symlink(elsewhere, dir / "sub");            // a folder link out of the folder
    fs::create_symlink(dir / "inside.bin", dir / "alias.bin");       // a link that stays inside
    const auto real_outside = fs::canonical(elsewhere / "secret.bin").string();
    for (const auto& [location, file] : {std::pair<std::string, std::string>{"link.bin", "a.onnx"},
                                         {"sub/secret.bin", "b.onnx"}}) {
        const auto p = model_reading(location, file);
        EXPECT_EQ(error_of(p), p.string() + ": initializer \"fc.w\" is stored in \"" + location +
                                   "\", which leads through a symbolic link to " + real_outside +
                                   ", outside the model's folder " + fs::canonical(dir).string() +
                                   "; external data must be a file inside the folder of the .onnx file")
            << location;
    }
    const io::onnx_model m = io::import_onnx(model_reading("alias.bin", "c.onnx"));
    EXPECT_EQ(m.weights->tensors.at("/fc/Gemm.weight").data, w);
    // a loop of links, and a link to nothing: each says so, not "does not exist" (also with --shapes-only,
    // which skips only a weights file that is absent)
    fs::create_symlink(dir / "loop_b.bin", dir / "loop_a.bin");
    fs::create_symlink(dir / "loop_a.bin", dir / "loop_b.bin");
    fs::create_symlink(dir / "gone.bin", dir / "dangling.bin");
    const auto loop = model_reading("loop_a.bin", "d.onnx");
    const auto dangling = model_reading("dangling.bin", "e.onnx");
    for (const bool shapes_only : {false, true}) {
        io::onnx_options o;
        o.shapes_only = shapes_only;
        const std::string why_loop = error_of(loop, o), why_dangling = error_of(dangling, o);
        EXPECT_EQ(why_loop, loop.string() + ": initializer \"fc.w\" is stored in the external file \"loop_a.bin\" (" +
                                (dir / "loop_a.bin").string() + "), which cannot be reached: " +
                                std::make_error_code(std::errc::too_many_symbolic_link_levels).message());
        EXPECT_EQ(why_dangling, dangling.string() + ": initializer \"fc.w\" is stored in the external file \"dangling.bin\" (" +
                                    (dir / "dangling.bin").string() + "), a symbolic link to " +
                                    (dir / "gone.bin").string() + ", which does not exist");
    }
}

TEST(OnnxImport, ControlCharactersInNamesBecomeCodePoints) {
    // a graph, a node and a tensor named with a newline and an escape sequence: renamed alike, so the graph stays
    // connected, every report prints them on one line, and an export reads back (a model file refuses control
    // characters)
    onnx_builder b;
    b.proto().mutable_graph()->set_name("g\nraph");
    b.input("x\tin", {1, 4});
    b.node("Relu", {"x\tin"}, {"r\x1b[31m"}, "a\nb\x1b[31m");
    b.node("Sigmoid", {"r\x1b[31m"}, {"y"}, "/s\xc2\x85ig");
    b.output("y");
    const io::onnx_model m = io::import_onnx(b.save(temp_dir() / "control.onnx"));
    EXPECT_EQ(m.model.name(), "g[U+000A]raph");
    ASSERT_EQ(m.model.layers().size(), 2u);
    EXPECT_EQ(m.model.layers()[0].name, "a[U+000A]b[U+001B][31m");
    EXPECT_EQ(m.model.layers()[1].name, "/s[U+0085]ig");
    EXPECT_EQ(m.model.inputs()[0].name, "x[U+0009]in");
    const core::model back = io::parse_model_json(nlohmann::json::parse(io::model_json(m.model).dump()), "export");
    EXPECT_EQ(back.layers()[0].name, m.model.layers()[0].name);
}

TEST(OnnxImport, UnsupportedNodesAreAllListed) {
    onnx_builder b;
    b.input("x", {1, 4});
    b.node("Sin", {"x"}, {"a"}, "/a/Sin");
    b.node("Cos", {"x"}, {"b"}, "/b/Cos");
    b.scalar("zero", 0.0f);
    b.scalar("one", 1.0f);
    b.node("Clip", {"x", "zero", "one"}, {"c"}, "/c/Clip");
    b.node("Sin", {"x"}, {"d"}, "/d/Sin");
    b.node("Relu", {"a"}, {"e"}, "/e/Relu");  // reads a skipped node's output: not listed itself
    b.node("Relu", {"x"}, {"f"}, "/f/Relu");
    for (const char* o : {"b", "c", "d", "e", "f"}) b.output(o);
    const auto p = b.save(temp_dir() / "unsupported.onnx");
    EXPECT_EQ(error_of(p), p.string() +
                               ": 4 node(s) cannot be imported: Sin \"/a/Sin\" (+1 more): ridgeline has no layer for Sin; "
                               "Cos \"/b/Cos\": ridgeline has no layer for Cos; Clip \"/c/Clip\": Clip to [0, 1]; ridgeline "
                               "maps Clip [0, 6] to relu6 and Clip [0, inf) to relu, nothing else (skipping the unsupported nodes imports "
                               "the rest)");

    // --skip-unsupported: the rest is imported; a skipped node's output of known shape becomes an input
    const io::onnx_model m = io::import_onnx(p, {{}, std::nullopt, true});
    EXPECT_EQ(kinds(m.model), (std::vector<std::string>{"relu", "relu"}));
    ASSERT_EQ(m.skipped.size(), 4u);
    EXPECT_EQ(m.skipped[0].name, "/a/Sin");
    EXPECT_EQ(m.skipped[0].op_type, "Sin");
    EXPECT_EQ(m.skipped[2].reason.rfind("Clip to [0, 1]", 0), 0u);
    EXPECT_EQ(layer_named(m.model, "/e/Relu").inputs, std::vector<std::string>{"a"});
    ASSERT_EQ(m.model.inputs().size(), 2u);  // x, and "a" standing in for the skipped Sin
    EXPECT_EQ(m.model.inputs()[1].name, "a");
}

TEST(OnnxImport, SymbolicDimensions) {
    onnx_builder b;
    b.input("x", {-1, -1, 8});
    b.node("Relu", {"x"}, {"y"}, "/Relu");
    b.output("y");
    const auto p = b.save(temp_dir() / "symbolic.onnx");
    EXPECT_EQ(error_of(p), p.string() + ": input \"x\" has symbolic dimension 1 (\"d1\"); give the input's full shape "
                                        "(e.g. 1x128x8)");
    const io::onnx_model m = io::import_onnx(p, {{core::shape{2, 5, 8}}, std::nullopt, false});
    EXPECT_EQ(m.model.inputs()[0].dims, (core::shape{2, 5, 8}));
    EXPECT_EQ(error_of(p, {{core::shape{2, 5}}, std::nullopt, false}),
              p.string() + ": the input shape 2x5 has rank 2 but input \"x\" has rank 3");
    EXPECT_EQ(error_of(p, {{core::shape{2, 5, 8}}, 4, false}), p.string() + ": batch 4 disagrees with the input shape 2x5x8");
}

TEST(OnnxImport, BrokenFiles) {
    const auto dir = temp_dir();
    const auto good = cnn().save(dir / "whole.onnx");
    std::string bytes;
    {
        std::ifstream f(good, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    const auto truncated = dir / "truncated.onnx";
    std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    EXPECT_EQ(error_of(truncated), truncated.string() +
                                       ": not a valid ONNX model: the protobuf data does not parse (the file is truncated or "
                                       "corrupted, or not an ONNX file)");
    const auto garbage = dir / "garbage.onnx";
    std::ofstream(garbage, std::ios::binary) << "this is not a protobuf \xff\xff\xff\xff";
    EXPECT_EQ(error_of(garbage).rfind(garbage.string() + ": not a valid ONNX model", 0), 0u) << error_of(garbage);
    const auto text = dir / "text.onnx";
    std::ofstream(text, std::ios::binary) << "hello";
    EXPECT_EQ(error_of(text).rfind(text.string() + ": not a valid ONNX model", 0), 0u) << error_of(text);
    const auto empty = dir / "empty.onnx";
    std::ofstream(empty, std::ios::binary).flush();
    EXPECT_EQ(error_of(empty), empty.string() + ": the file is empty, not an ONNX model");
    EXPECT_EQ(error_of(dir / "missing.onnx"), (dir / "missing.onnx").string() + ": no such file");

    // an initializer whose data is shorter than its shape says
    onnx_builder b;
    b.input("x", {1, 2});
    b.init("w", {2, 3}, {1, 2, 3});
    b.node("MatMul", {"x", "w"}, {"y"}, "/MatMul");
    b.output("y");
    const auto shortdata = b.save(dir / "short.onnx");
    EXPECT_EQ(error_of(shortdata), shortdata.string() + ": tensor \"w\" has 12 bytes of data for shape 2x3 (24 expected); "
                                                        "the file is truncated or corrupted");
}

// fuzz_onnx's finding (fuzz/corpus/onnx/gelu_pattern_add_without_inputs.onnx, a mutation of transformer.onnx whose
// misspelt op types keep ONNX's shape inference from refusing it first): the GELU pattern
// x/sqrt2 -> Erf -> Add -> Mul(x) -> Mul(0.5) read past the inputs of a pattern node that had none (under the asan
// preset a heap-buffer-overflow). A node of the pattern short of inputs is no GELU: every node is converted on its
// own, and those that cannot be are listed by name.
TEST(OnnxImport, AGeluPatternWithANodeShortOfInputsIsRefusedByName) {
    const fs::path corpus = fs::path(RIDGELINE_SOURCE_DIR) / "fuzz/corpus/onnx/gelu_pattern_add_without_inputs.onnx";
    EXPECT_EQ(error_of(corpus),
              corpus.string() + ": 3 node(s) cannot be imported: LayerN \"/mm/MatMul\": ridgeline has no layer for LayerN; "
                                "Mul \"/ge/Mul\": Mul has 1 input(s), it takes 2; LayerNormlzatiiaon \"/ln/LayerNormalization\": "
                                "ridgeline has no layer for LayerNormlzatiiaon (skipping the unsupported nodes imports the rest)");
    // the same pattern written with known op types: ONNX's shape inference refuses the Add without inputs
    onnx_builder b;
    b.input("x", {2, 3});
    b.scalar("sqrt2", 1.4142135f);
    b.scalar("half", 0.5f);
    b.node("Div", {"x", "sqrt2"}, {"g1"}, "/act/Div");
    b.node("Erf", {"g1"}, {"g2"}, "/act/Erf");
    b.node("Add", {}, {"g3"}, "/act/Add");
    b.node("Mul", {"x", "g3"}, {"g4"}, "/act/Mul");
    b.node("Mul", {"g4", "half"}, {"ge"}, "/act/Mul_1");
    b.output("ge");
    const auto p = b.save(temp_dir() / "gelu_short.onnx");
    EXPECT_EQ(error_of(p), p.string() + ": ONNX shape inference failed: Input 0 is out of bounds.");
}

TEST(OnnxImport, WeightStatisticsOfAnImportedModel) {
    onnx_builder b;
    b.input("x", {1, 2});
    // W as stored with transB=1: [out=2, in=2]; the same four values as report/weights_test.cpp
    b.init("w", {2, 2}, {-0.5f, 0.0005f, 0.02f, 0.2f});
    b.init("b", {2}, {0.1f, -0.3f});
    auto& g = b.node("Gemm", {"x", "w", "b"}, {"y"}, "/fc/Gemm");
    onnx_builder::set(g, "transB", std::int64_t{1});
    b.output("y");
    const io::onnx_model m = io::import_onnx(b.save(temp_dir() / "stats.onnx"));
    const auto r = ridgeline::report::weight_statistics(core::analyze(m.model, core::dtype::fp32), *m.weights);
    ASSERT_TRUE(r.weights && r.biases);
    // mean |w| = (0.5 + 0.0005 + 0.02 + 0.2) / 4 = 0.180125; median |w| = (0.02 + 0.2) / 2 = 0.11
    EXPECT_NEAR(r.weights->mean_abs, 0.180125, 1e-7);
    EXPECT_NEAR(r.weights->p50_abs, 0.11, 1e-7);
    // biases apart: mean |b| = (0.1 + 0.3) / 2 = 0.2
    EXPECT_NEAR(r.biases->mean_abs, 0.2, 1e-7);
}

// Gemm with beta = 0: C is multiplied by zero, so it is neither stored nor added. y = x W^T with x 1x3, W 2x3:
// params 6 (not 6 + 2), MACs 6, FLOPs 2*6 = 12 (no bias adds), bytes (3 + 6 + 2) * 4 = 44 (C not read).
TEST(OnnxImport, GemmWithBetaZeroDropsC) {
    onnx_builder b;
    b.input("x", {1, 3});
    b.init("w", {2, 3}, {1, 2, 3, 4, 5, 6});
    b.init("c", {2}, {7, 8});
    auto& g = b.node("Gemm", {"x", "w", "c"}, {"y"}, "/fc/Gemm");
    onnx_builder::set(g, "transB", std::int64_t{1});
    onnx_builder::set(g, "beta", 0.0f);
    b.output("y");
    const io::onnx_model m = io::import_onnx(b.save(temp_dir() / "beta0.onnx"));
    const auto a = core::analyze(m.model, core::dtype::fp32);
    ASSERT_EQ(a.layers.size(), 1U);
    EXPECT_EQ(core::to_string(a.layers[0].layer.op), "linear:in_features=3,out_features=2,bias=false");
    EXPECT_EQ(a.layers[0].cost.params, 6);
    EXPECT_EQ(a.layers[0].cost.flops, 12);
    EXPECT_EQ(a.layers[0].cost.bytes, 44);
    EXPECT_FALSE(m.weights->tensors.count("/fc/Gemm.bias"));
}

// ---------------------------------------------------------------- torchvision exports (tests/data/onnx)

namespace {
/// A graph-only export of tests/data/onnx alone in a scratch folder (its weights file absent, as on a clone).
fs::path fixture(const std::string& name) {
    const fs::path p = temp_dir() / "fixtures" / name;
    fs::create_directories(p.parent_path());
    fs::copy_file(fs::path(RIDGELINE_SOURCE_DIR) / "tests" / "data" / "onnx" / name, p,
                  fs::copy_options::overwrite_existing);
    return p;
}
}  // namespace

TEST(OnnxImport, TorchvisionExportsGiveTorchvisionMacs) {
    // torchvision's published GMACs (and ridgeline's zoo, tests/core/zoo_test.cpp) at 1x3x224x224
    const std::pair<const char*, std::int64_t> cases[] = {{"resnet18_folded.onnx", 1'814'073'344},
                                                          {"mobilenet_v2_folded.onnx", 300'774'272},
                                                          {"squeezenet1_0_folded.onnx", 818'924'576}};
    io::onnx_options o;
    o.shapes_only = true;  // the weights are not committed
    for (const auto& [file, macs] : cases) {
        SCOPED_TRACE(file);
        const io::onnx_model m = io::import_onnx(fixture(file), o);
        EXPECT_TRUE(m.skipped.empty());
        const auto a = core::analyze(m.model, core::dtype::fp32);
        EXPECT_EQ(a.totals.macs, macs);
        EXPECT_EQ(a.batch, 1);
        io::onnx_options o4 = o;
        o4.batch = 4;
        const io::onnx_model m4 = io::import_onnx(fixture(file), o4);
        EXPECT_EQ(core::analyze(m4.model, core::dtype::fp32).totals.macs, 4 * macs);  // macs scale with --batch
    }
}
