// The JSON model format: export + re-import over the whole zoo, attribute conversion, and every error
// message with its JSON path.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ridgeline/core/error.hpp"
#include "ridgeline/core/zoo.hpp"
#include "ridgeline/io/model_file.hpp"
#include "../support/scratch.hpp"

namespace core = ridgeline::core;
namespace io = ridgeline::io;
using json = nlohmann::json;

namespace {

core::model parse(const std::string& text, const io::input_overrides& o = {}) {
    return io::parse_model_json(json::parse(text), "model.json", o);
}

/// The message of the error parse() throws, or "" when it does not throw.
std::string error_of(const std::string& text) {
    try {
        (void)parse(text);
    } catch (const core::error& e) {
        return e.what();
    }
    return "";
}

const char* tiny = R"({"format": "ridgeline.model/1", "name": "tiny",
  "inputs": [{"name": "image", "shape": [1, 3, 8, 8]}],
  "layers": [
    {"name": "conv", "op": "conv2d", "in_channels": 3, "out_channels": 4, "kernel_size": 3, "padding": 1, "bias": false},
    {"name": "act", "op": "relu"},
    {"name": "sum", "op": "add", "inputs": ["conv", "act"]}]})";

}  // namespace

TEST(ModelFile, ReadsTheDocumentedExample) {
    const core::model m = parse(tiny);
    EXPECT_EQ(m.name(), "tiny");
    ASSERT_EQ(m.layers().size(), 3u);
    EXPECT_EQ(core::to_string(m.layers()[0].op), "conv2d:in_channels=3,out_channels=4,kernel_size=3,padding=1,bias=false");
    EXPECT_EQ(m.layers()[0].inputs, std::vector<std::string>{"image"});  // the first layer reads the first input
    EXPECT_EQ(m.layers()[1].inputs, std::vector<std::string>{"conv"});   // then the previous layer
    EXPECT_EQ(m.layers()[2].inputs, (std::vector<std::string>{"conv", "act"}));
    const auto a = core::analyze(m, core::dtype::fp32);
    // conv macs: N*C_out*H_out*W_out*C_in*kh*kw = 1*4*8*8*3*3*3 = 6912
    EXPECT_EQ(a.totals.macs, 6912);
}

TEST(ModelFile, JsonValuesBecomeLayerStringText) {
    const core::model m = parse(R"({"inputs": [{"name": "x", "shape": "1x8x16x16"}], "layers": [
        {"name": "c", "op": "conv2d", "in_channels": 8, "out_channels": 8, "kernel_size": [3, 5], "padding": [1, 2],
         "stride": 1.0, "groups": 2, "bias": true},
        {"name": "p", "op": "max_pool2d", "kernel_size": 2, "ceil_mode": false},
        {"name": "r", "op": "reshape", "shape": [0, 8, -1]},
        {"name": "n", "op": "layer_norm", "normalized_shape": [64], "eps": 1e-12},
        {"name": "g", "op": "gelu", "approximate": "tanh"},
        {"name": "s", "op": "scale", "factor": 0.125}]})");
    EXPECT_EQ(core::to_string(m.layers()[0].op), "conv2d:in_channels=8,out_channels=8,kernel_size=3x5,padding=1x2,groups=2");
    EXPECT_EQ(core::to_string(m.layers()[2].op), "reshape:shape=0x8x-1");
    EXPECT_EQ(core::to_string(m.layers()[3].op), "layer_norm:normalized_shape=64,eps=1e-12");
    EXPECT_EQ(core::to_string(m.layers()[5].op), "scale:factor=0.125");
    EXPECT_EQ(io::attribute_json("3"), 3);
    EXPECT_EQ(io::attribute_json("3x5"), (nlohmann::ordered_json{3, 5}));
    EXPECT_EQ(io::attribute_json("0x0x12x-1"), (nlohmann::ordered_json{0, 0, 12, -1}));
    EXPECT_EQ(io::attribute_json("false"), false);
    EXPECT_EQ(io::attribute_json("1e-05"), 1e-05);
    EXPECT_EQ(io::attribute_json("same"), "same");
}

TEST(ModelFile, ExportAndReimportIsIdenticalForEveryZooModel) {
    for (const auto& entry : core::zoo_models()) {
        SCOPED_TRACE(entry.name);
        const core::model original = core::build_zoo_model(entry.name);
        const std::string text = io::model_json(original).dump(2);
        const core::model back = parse(text);
        const auto a = core::analyze(original, core::dtype::fp32);
        const auto b = core::analyze(back, core::dtype::fp32);
        ASSERT_EQ(a.layers.size(), b.layers.size());
        for (std::size_t i = 0; i < a.layers.size(); ++i) {
            const auto& x = a.layers[i];
            const auto& y = b.layers[i];
            ASSERT_EQ(x.layer.name, y.layer.name);
            EXPECT_EQ(x.layer.op, y.layer.op) << x.layer.name;
            EXPECT_EQ(x.layer.inputs, y.layer.inputs) << x.layer.name;
            EXPECT_EQ(x.layer.tied, y.layer.tied) << x.layer.name;
            EXPECT_EQ(x.input_shapes, y.input_shapes) << x.layer.name;
            EXPECT_EQ(x.output_shape, y.output_shape) << x.layer.name;
            EXPECT_EQ(x.cost, y.cost) << x.layer.name;
        }
        EXPECT_EQ(a.totals, b.totals);
        EXPECT_EQ(io::model_json(back).dump(2), text);  // and it prints back the same
    }
}

TEST(ModelFile, OutputsALayerReadsRoundTrip) {
    // tiny's conv is read by act and sum; declared an output, it is one (in layer order, before sum), and export
    // writes it back; a file without "outputs" exports without it
    json j = json::parse(tiny);
    j["outputs"] = {"conv"};
    const core::model m = parse(j.dump());
    EXPECT_EQ(m.outputs(), std::vector<std::string>{"conv"});
    EXPECT_EQ(core::analyze(m, core::dtype::fp32).outputs, (std::vector<std::string>{"conv", "sum"}));
    EXPECT_EQ(io::model_json(m)["outputs"], json({"conv"}));
    EXPECT_EQ(parse(io::model_json(m).dump()).outputs(), m.outputs());
    EXPECT_FALSE(io::model_json(parse(tiny)).contains("outputs"));
}

TEST(ModelFile, BatchAndInputOverrides) {
    const auto b = core::analyze(parse(tiny, {{}, 4}), core::dtype::fp32);
    EXPECT_EQ(b.totals.macs, 4 * 6912);  // macs scale with the batch
    const auto i = core::analyze(parse(tiny, {{core::shape{2, 3, 16, 16}}, std::nullopt}), core::dtype::fp32);
    EXPECT_EQ(i.totals.macs, 2 * 4 * 6912);  // batch 2, four times the pixels
    try {
        (void)parse(tiny, {{core::shape{2, 3, 16, 16}}, 3});
        FAIL() << "no error";
    } catch (const core::error& e) {
        EXPECT_STREQ(e.what(), "model.json: $.inputs[0]: batch 3 disagrees with the input shape 2x3x16x16");
    }
}

TEST(ModelFile, ErrorsNameTheJsonPath) {
    const std::string in = R"("inputs": [{"name": "x", "shape": [1, 3, 8, 8]}])";
    auto doc = [&](const std::string& layers) { return "{" + in + R"(, "layers": [)" + layers + "]}"; };
    const std::string conv = R"({"name": "c", "op": "conv2d", "in_channels": 3, "out_channels": 4, "kernel_size": 3})";
    struct c {
        std::string text;
        std::string message;
    };
    const c cases[] = {
        // wrong attribute types, in JSON terms
        {doc(conv + R"(, {"name": "p", "op": "max_pool2d", "kernel_size": "x"})"),
         R"(model.json: $.layers[1].kernel_size: expected an integer or [h, w], got "x")"},
        {doc(R"({"name": "c", "op": "conv2d", "in_channels": 3, "out_channels": 4, "kernel_size": [3, "a"]})"),
         R"(model.json: $.layers[0].kernel_size[1]: expected an integer, got "a")"},
        {doc(R"({"name": "c", "op": "conv2d", "in_channels": 3, "out_channels": 4, "kernel_size": [3, 3, 3]})"),
         R"(model.json: $.layers[0].kernel_size: expected an integer or [h, w], got [3,3,3])"},
        {doc(R"({"name": "c", "op": "conv2d", "in_channels": "three", "out_channels": 4, "kernel_size": 3})"),
         R"(model.json: $.layers[0].in_channels: expected an integer, got "three")"},
        {doc(R"({"name": "c", "op": "conv2d", "in_channels": 3, "out_channels": 4, "kernel_size": 3, "bias": "yes"})"),
         R"(model.json: $.layers[0].bias: expected true or false, got "yes")"},
        {doc(R"({"name": "c", "op": "conv2d", "in_channels": 3, "out_channels": 4, "kernel_size": 3, "padding": {"h": 1}})"),
         "model.json: $.layers[0].padding: expected a number, boolean, string or array of integers, got an object"},
        {doc(R"({"name": "g", "op": "gelu", "approximate": "fast"})"),
         R"(model.json: $.layers[0].approximate: expected one of none, tanh, got "fast")"},
        {doc(R"({"name": "s", "op": "scale", "factor": "big"})"), R"(model.json: $.layers[0].factor: expected a number, got "big")"},
        // missing fields and attributes, unknown fields, attributes and ops
        {doc(R"({"name": "c", "in_channels": 3})"), R"(model.json: $.layers[0]: missing required field "op")"},
        {doc(R"({"op": "relu"})"), R"(model.json: $.layers[0]: missing required field "name")"},
        {doc(R"({"name": 7, "op": "relu"})"), "model.json: $.layers[0].name: expected a string, got 7"},
        {doc(R"({"name": "c", "op": "conv2d", "in_channels": 3, "kernel_size": 3})"),
         R"(model.json: $.layers[0]: missing required attribute "out_channels" (conv2d "c"))"},
        // a misspelt required attribute is named where it is, with the guess (1 edit from kernel_size)
        {doc(R"({"name": "c", "op": "conv2d", "in_channels": 3, "out_channels": 4, "kernal_size": 3})"),
         R"(model.json: $.layers[0].kernal_size: unknown attribute "kernal_size" (did you mean "kernel_size"?))"},
        {doc(R"({"name": "c", "op": "conv2d", "in_channels": 3, "out_channels": 4})"),
         R"(model.json: $.layers[0]: missing required attribute "kernel_size" (conv2d "c"))"},
        {doc(R"({"name": "r", "op": "relu", "inplace": true})"),
         R"(model.json: $.layers[0].inplace: unknown attribute "inplace" (this op takes no attributes))"},
        {doc(R"({"name": "c", "op": "conv3d"})"), R"(model.json: $.layers[0].op: unknown op "conv3d" (known: linear, )"},
        {"{" + in + R"(, "layers": [{"name": "r", "op": "relu"}], "output": ["r"]})",
         "model.json: $.output: unknown field (known: format, name, inputs, layers, outputs)"},
        // outputs name layers (a layer another reads, returned too)
        {"{" + in + R"(, "layers": [{"name": "r", "op": "relu"}], "outputs": ["x"]})",
         R"(model.json: $.outputs[0]: expected the name of a layer, got "x")"},
        {"{" + in + R"(, "layers": [{"name": "r", "op": "relu"}], "outputs": "r"})",
         R"(model.json: $.outputs: expected an array of layer names, got "r")"},
        {R"({"format": "ridgeline.model/2", "inputs": [], "layers": []})",
         R"(model.json: $.format: expected "ridgeline.model/1", got "ridgeline.model/2")"},
        {R"({"layers": [{"name": "r", "op": "relu"}]})", R"(model.json: $: missing required field "inputs")"},
        {R"([1, 2])", R"(model.json: $: expected an object with "inputs" and "layers", got an array)"},
        {R"({"inputs": [{"name": "x", "shape": [1, 0]}], "layers": [{"name": "r", "op": "relu"}]})",
         "model.json: $.inputs[0].shape[1]: expected a positive integer, got 0"},
        {R"({"inputs": [{"name": "x", "shape": [1, 4], "dtype": "int32"}], "layers": [{"name": "r", "op": "relu"}]})",
         R"(model.json: $.inputs[0].dtype: expected "int64" (token ids) or "float", got "int32")"},
        {doc(R"({"name": "r", "op": "relu", "inputs": "x"})"),
         R"(model.json: $.layers[0].inputs: expected a non-empty array of tensor names, got "x")"},
        // tensor names: unknown, dangling, duplicate, cycles
        {doc(R"({"name": "r", "op": "relu"}, {"name": "s", "op": "add", "inputs": ["r", "nope"]})"),
         R"(model.json: $.layers[1].inputs[1]: unknown tensor "nope" (not a model input or a layer name))"},
        {R"({"inputs": [{"name": "x", "shape": [1, 4]}, {"name": "mask", "shape": [1, 4]}], "layers": [{"name": "r", "op": "relu"}]})",
         R"(model.json: $.inputs[1]: input "mask" is not read by any layer (a dangling input))"},
        {doc(R"({"name": "r", "op": "relu"}, {"name": "r", "op": "sigmoid"})"),
         R"(model.json: $.layers[1].name: duplicate name "r" (also $.layers[0].name))"},
        {doc(R"({"name": "x", "op": "relu"})"), R"(model.json: $.layers[0].name: duplicate name "x" (also $.inputs[0].name))"},
        {doc(R"({"name": "a", "op": "add", "inputs": ["x", "c"]}, {"name": "b", "op": "relu"}, {"name": "c", "op": "relu"})"),
         R"(model.json: $.layers[1].inputs[0]: "a" closes a cycle (a <- c <- b <- a))"},
        {doc(R"({"name": "a", "op": "add", "inputs": ["x", "a"]})"),
         R"(model.json: $.layers[0].inputs[1]: layer "a" reads its own output (a cycle))"},
        // shape rules, mapped to the layer
        {doc(R"({"name": "c", "op": "conv2d", "in_channels": 4, "out_channels": 4, "kernel_size": 3})"),
         R"(model.json: $.layers[0]: conv2d "c": )"},
        {doc(R"({"name": "l", "op": "linear", "in_features": 8, "out_features": 2, "tied": {"gamma": "w"}})"),
         R"(model.json: $.layers[0].tied: )"},
    };
    for (const auto& k : cases) {
        const std::string got = error_of(k.text);
        EXPECT_EQ(got.substr(0, k.message.size()), k.message) << k.text;
        EXPECT_EQ(got.find('\n'), std::string::npos) << got;
    }
}

TEST(ModelFile, FileErrors) {
    const auto dir = ridgeline::test::fresh_scratch_dir("file-errors");
    const auto bad = dir / "bad.json";
    std::ofstream(bad) << "{\n  \"inputs\": [\n    {\"name\": \"x\",, }\n";
    try {
        (void)io::read_model_file(bad);
        FAIL() << "no error";
    } catch (const core::parse_error& e) {
        EXPECT_EQ(std::string(e.what()).rfind(bad.string() + ": not valid JSON: parse error at line 3, column", 0), 0u) << e.what();
    }
    try {
        (void)io::read_model_file(dir / "missing.json");
        FAIL() << "no error";
    } catch (const core::parse_error& e) {
        EXPECT_EQ(std::string(e.what()), (dir / "missing.json").string() + ": no such file");
    }
    // the second "stride" must not silently replace the first: the error names the JSON path and the key
    const auto dup = dir / "dup.json";
    std::ofstream(dup) << R"({"inputs": [{"name": "x", "shape": [1, 3, 8, 8]}], "layers": [{"name": "r", "op": "relu"},
        {"name": "c", "op": "conv2d", "in_channels": 3, "out_channels": 4, "kernel_size": 3, "stride": 1, "stride": 2}]})";
    try {
        (void)io::read_model_file(dup);
        FAIL() << "no error";
    } catch (const core::parse_error& e) {
        EXPECT_EQ(std::string(e.what()), dup.string() + ": $.layers[1].stride: duplicate key \"stride\" (each field may appear once in an object)");
    }
    const auto good = dir / "good.json";
    std::ofstream(good) << tiny;
    EXPECT_EQ(io::read_model_file(good).layers().size(), 3u);
}

TEST(ModelFile, AnEmbeddingHoldingItsIdsReadsNoInput) {
    // "inputs": [] as export writes it for a layer that reads nothing (Swin's relative position bias lookup)
    const core::model m = parse(R"({"inputs": [{"name": "x", "shape": [1, 3, 4]}], "layers": [
        {"name": "bias", "op": "embedding", "num_embeddings": 7, "embedding_dim": 3, "indices": [4], "inputs": []},
        {"name": "t", "op": "transpose", "dim0": 0, "dim1": 1, "inputs": ["bias"]},
        {"name": "sum", "op": "add", "inputs": ["x", "t"]}]})");
    EXPECT_TRUE(m.layers()[0].inputs.empty());
    const auto a = core::analyze(m, core::dtype::fp32);
    EXPECT_EQ(a.totals.params, 21);  // the 7x3 table
    EXPECT_EQ(a.totals.buffers, 4);  // the held ids
    // an embedding that reads ids still needs its input
    EXPECT_NE(error_of(R"({"inputs": [{"name": "ids", "shape": [1, 4]}], "layers": [
        {"name": "e", "op": "embedding", "num_embeddings": 7, "embedding_dim": 3, "inputs": []}]})")
                  .find("$.layers[0].inputs: expected a non-empty array of tensor names, got []"),
              std::string::npos);
}
