// The error catalogue: ONNX files (catalogue_test.cpp runs them), when this build reads ONNX.
#include "ridgeline/config.hpp"
#if RIDGELINE_HAVE_ONNX
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "catalogue.hpp"

#include "../io/onnx_builder.hpp"

namespace ridgeline::test::catalogue {

namespace {
using ridgeline::test::onnx_builder;
using tp = onnx::TensorProto;
using ints = std::vector<std::int64_t>;

std::string bytes_of(onnx_builder& b) { return b.proto().SerializeAsString(); }

/// `summary --onnx {dir}/model.onnx` of the model `b` (plus extra files and arguments): exit 1.
void onnx_file(std::string name, std::string bytes, std::vector<std::string> words, std::vector<std::string> extra = {},
               std::map<std::string, std::string> files = {}) {
    std::vector<std::string> args{"summary", "--onnx", "{dir}/model.onnx"};
    args.insert(args.end(), extra.begin(), extra.end());
    files["model.onnx"] = std::move(bytes);
    add("onnx_" + name, std::move(args), 1, std::move(words), std::move(files));
}

/// x [1, 3, 8, 8] -> Conv (w [4, 3, 3, 3]) -> Relu -> y: the base most ONNX entries break one piece of.
onnx_builder small_cnn() {
    onnx_builder b;
    b.input("x", {1, 3, 8, 8});
    b.init_n("w", {4, 3, 3, 3});
    b.node("Conv", {"x", "w"}, {"c"}, "/conv/Conv");
    b.node("Relu", {"c"}, {"y"}, "/relu/Relu");
    b.output("y");
    return b;
}

/// small_cnn() whose weight lives in the external file "weights.bin" with these keys.
std::string external(std::vector<std::pair<std::string, std::string>> keys) {
    onnx_builder b;
    b.input("x", {1, 3, 8, 8});
    b.init_external("w", {4, 3, 3, 3}, keys);
    b.node("Conv", {"x", "w"}, {"y"}, "/conv/Conv");
    b.output("y");
    return bytes_of(b);
}

/// x -> Conv (an initializer w, `group` when given) -> y.
std::string one_conv(const ints& x, const ints& w, std::optional<std::int64_t> group = std::nullopt) {
    onnx_builder b;
    b.input("x", x);
    b.init_n("w", w);
    auto& c = b.node("Conv", {"x", "w"}, {"y"}, "/conv/Conv");
    if (group) onnx_builder::set(c, "group", *group);
    b.output("y");
    return bytes_of(b);
}

}  // namespace

void onnx_models() {
    auto good = small_cnn();
    const std::string whole = bytes_of(good);
    onnx_file("empty_file", "", {"model.onnx", "the file is empty"});
    onnx_file("text_file", "hello, world", {"model.onnx", "not a valid ONNX model"});
    onnx_file("garbage", std::string("\xff\xfe\xfd\x00\x01\x02garbage", 13), {"not a valid ONNX model"});
    onnx_file("truncated_half", whole.substr(0, whole.size() / 2), {"not a valid ONNX model", "truncated or corrupted"});
    onnx_file("truncated_last_byte", whole.substr(0, whole.size() - 1), {"not a valid ONNX model"});
    {
        std::string flipped = whole;
        for (std::size_t i = 0; i < flipped.size(); i += 7) flipped[i] = static_cast<char>(flipped[i] ^ 0x5a);
        onnx_file("corrupted_bytes", flipped, {"model.onnx"});
    }
    {
        onnx_builder b;
        b.input("x", {1, 4});
        b.output("x");
        onnx_file("no_nodes", bytes_of(b), {"it has no graph nodes"});
    }
    {
        auto b = small_cnn();
        b.proto().set_ir_version(0);
        onnx_file("no_ir_version", bytes_of(b), {"it has no ir_version"});
    }
    {
        onnx_builder b;
        b.init_n("x", {1, 4});
        b.node("Relu", {"x"}, {"y"});
        b.output("y");
        auto* in = b.proto().mutable_graph()->add_input();
        in->set_name("x");
        in->mutable_type()->mutable_tensor_type()->set_elem_type(tp::FLOAT);
        onnx_file("every_input_an_initializer", bytes_of(b), {"the graph has no inputs"});
    }
    {
        onnx_builder b;
        b.input("x", {1, 4}, tp::STRING);
        b.node("Relu", {"x"}, {"y"});
        b.output("y");
        onnx_file("input_of_strings", bytes_of(b), {"input \"x\" has element type STRING"});
    }
    {
        // an element type code ONNX does not name (99): said as its code, not as an empty name
        onnx_builder b;
        b.input("x", {1, 4}, static_cast<tp::DataType>(99));
        b.node("Relu", {"x"}, {"y"});
        b.output("y");
        onnx_file("input_of_unknown_type", bytes_of(b), {"input \"x\" has element type code 99;"});
    }
    {
        onnx_builder b;
        auto* in = b.proto().mutable_graph()->add_input();
        in->set_name("x");
        in->mutable_type()->mutable_tensor_type()->set_elem_type(tp::FLOAT);
        b.node("Relu", {"x"}, {"y"});
        b.output("y");
        onnx_file("input_without_shape", bytes_of(b), {"input \"x\" has no shape in the file; give its full shape"});
    }
    {
        onnx_builder b;
        b.input("x", {-1, -1, 8});
        b.node("Relu", {"x"}, {"y"});
        b.output("y");
        const std::string bytes = bytes_of(b);
        onnx_file("symbolic_dimension", bytes, {"input \"x\" has symbolic dimension 1", "give the input's full shape (e.g. "});
        onnx_file("input_rank_mismatch", bytes, {"the input shape 2x5 has rank 2 but input \"x\" has rank 3"}, {"--input", "2x5"});
        onnx_file("input_count_mismatch", bytes, {"the model has 1 input(s) but 2 input shape(s) were given"},
                  {"--input", "2x5x8", "--input", "2x5x8"});
    }
    {
        auto b = small_cnn();
        b.node("Sin", {"y"}, {"z"}, "/sin/Sin");
        b.node("Cos", {"y"}, {"v"}, "/cos/Cos");
        b.output("z");
        b.output("v");
        onnx_file("unsupported_ops", bytes_of(b), {"2 node(s) cannot be imported", "Sin \"/sin/Sin\"", "Cos \"/cos/Cos\"",
                                                    "skipping the unsupported nodes imports the rest"});
    }
    {
        auto b = small_cnn();
        b.node("Relu", {"nowhere"}, {"z"}, "/dangling/Relu");
        b.output("z");
        onnx_file("dangling_tensor", bytes_of(b), {"model.onnx"});
    }
    {
        onnx_builder b;
        b.input("x", {1, 4});
        b.node("Add", {"x", "z"}, {"y"}, "/a/Add");
        b.node("Relu", {"y"}, {"z"}, "/b/Relu");
        b.output("z");
        onnx_file("cycle", bytes_of(b), {"model.onnx"});
    }
    {
        onnx_builder b;
        b.input("x", {1, 4});
        b.node("Relu", {"x"}, {"y"}, "/a/Relu");
        b.node("Relu", {"x"}, {"y"}, "/b/Relu");
        b.output("y");
        onnx_file("duplicate_output_names", bytes_of(b), {"model.onnx", "node \"/b/Relu\" (Relu) writes tensor \"y\"", "node \"/a/Relu\" writes already"});
    }
    {
        auto b = small_cnn();
        auto* t = b.proto().mutable_graph()->mutable_initializer(0);
        t->set_raw_data(t->raw_data().substr(0, 40));
        onnx_file("initializer_truncated", bytes_of(b), {"\"w\"", "truncated or corrupted"});
    }
    {
        auto b = small_cnn();
        b.proto().mutable_graph()->mutable_initializer(0)->set_dims(0, -4);
        onnx_file("initializer_negative_dimension", bytes_of(b), {"model.onnx"});
    }
    {
        auto b = small_cnn();
        auto* t = b.proto().mutable_graph()->mutable_initializer(0);
        t->set_dims(0, 4611686018427387904LL);
        t->set_dims(1, 4611686018427387904LL);
        onnx_file("initializer_dimensions_overflow", bytes_of(b), {"model.onnx"});
    }
    {
        auto b = small_cnn();
        auto* t = b.proto().mutable_graph()->mutable_initializer(0);
        t->set_data_type(tp::STRING);
        t->clear_raw_data();
        for (int i = 0; i < 108; ++i) t->add_string_data("w");
        onnx_file("initializer_of_strings", bytes_of(b), {"model.onnx"});
    }
    // what to do is named: the graph imports by shape only (a usage mistake: exit 2)
    add("onnx_external_data_missing", {"summary", "--onnx", "{dir}/model.onnx"}, 2,
        {"initializer \"w\" is stored in the external file \"weights.bin\"", "which does not exist",
         "(--shapes-only)"},
        {{"model.onnx", external({{"location", "weights.bin"}})}});
    onnx_file("external_data_truncated", external({{"location", "weights.bin"}}),
              {"initializer \"w\" needs 432 bytes", "truncated"}, {}, {{"weights.bin", std::string(100, '\0')}});
    onnx_file("external_data_without_location", external({{"offset", "0"}}),
              {"initializer \"w\" is stored as external data without a location"});
    onnx_file("external_data_offset_not_a_number", external({{"location", "weights.bin"}, {"offset", "zero"}}),
              {"initializer \"w\"", "offset"}, {}, {{"weights.bin", std::string(432, '\0')}});
    onnx_file("external_data_offset_overflows",
              external({{"location", "weights.bin"}, {"offset", "9223372036854775807"}, {"length", "432"}}),
              {"initializer \"w\"", "offset"}, {}, {{"weights.bin", std::string(432, '\0')}});
    onnx_file("external_data_length_huge", external({{"location", "weights.bin"}, {"length", "99999999999999999999"}}),
              {"initializer \"w\"", "length"}, {}, {{"weights.bin", std::string(432, '\0')}});
    onnx_file("external_data_outside_folder", external({{"location", "../weights.bin"}}),
              {"initializer \"w\"", "\"../weights.bin\"", "outside the model's folder"});
    onnx_file("external_data_absolute_path", external({{"location", "/etc/passwd"}}),
              {"initializer \"w\"", "\"/etc/passwd\"", "outside the model's folder"});
    onnx_file("external_data_is_a_folder", external({{"location", "sub"}}), {"initializer \"w\"", "\"sub\""}, {},
              {{"sub/placeholder", "x"}});
    onnx_file("conv_groups_do_not_divide", one_conv({1, 6, 8, 8}, {3, 3, 3, 3}, 2), {"model.onnx", "Conv"});
    onnx_file("conv_groups_overflow", one_conv({1, 3, 8, 8}, {4, 3, 3, 3}, 4611686018427387904LL), {"model.onnx"});
    onnx_file("conv_kernel_larger_than_input", one_conv({1, 3, 2, 2}, {4, 3, 5, 5}), {"model.onnx"});
    onnx_file("conv_channel_mismatch", one_conv({1, 4, 8, 8}, {4, 3, 3, 3}), {"model.onnx"});
    {
        onnx_builder b(17);
        b.input("x", {2, 4});
        b.init("s", {4}, {1, 1, 1, 1});
        b.init("bb", {4}, {0, 0, 0, 0});
        auto& n = b.node("LayerNormalization", {"x", "s", "bb"}, {"y"}, "/ln/LayerNormalization");
        onnx_builder::set(n, "epsilon", std::numeric_limits<float>::quiet_NaN());
        b.output("y");
        onnx_file("epsilon_nan", bytes_of(b), {"LayerNormalization \"/ln/LayerNormalization\"", "eps", "finite"});
    }
    {
        onnx_builder b;
        b.input("x", {1, 3, 4, 4});
        for (const char* n : {"s", "bb", "m", "v"}) b.init(n, {3}, {1, 1, 1});
        auto& n = b.node("BatchNormalization", {"x", "s", "bb", "m", "v"}, {"y"}, "/bn/BatchNormalization");
        onnx_builder::set(n, "epsilon", std::numeric_limits<float>::infinity());
        b.output("y");
        onnx_file("epsilon_infinite", bytes_of(b), {"BatchNormalization \"/bn/BatchNormalization\"", "eps", "finite"});
    }
    {
        onnx_builder b;
        b.input("x", {2, 12});
        b.init_ints("shape", {2}, {5, 5});
        b.node("Reshape", {"x", "shape"}, {"y"}, "/Reshape");
        b.output("y");
        onnx_file("reshape_count_changes", bytes_of(b), {"model.onnx"});
    }
    {
        onnx_builder b;
        b.input("x", {2, 3, 4});
        auto& t = b.node("Transpose", {"x"}, {"y"}, "/Transpose");
        onnx_builder::set(t, "perm", ints{0, 0, 1});
        b.output("y");
        onnx_file("transpose_bad_permutation", bytes_of(b), {"model.onnx"});
    }
    {
        onnx_builder b;
        b.input("x", {2, 3});
        b.input("z", {2, 3});
        auto& c = b.node("Concat", {"x", "z"}, {"y"}, "/Concat");
        onnx_builder::set(c, "axis", std::int64_t{7});
        b.output("y");
        onnx_file("concat_axis_out_of_range", bytes_of(b), {"model.onnx"});
    }
    {
        onnx_builder b;
        b.input("x", {2, 3, 4});
        auto& f = b.node("Flatten", {"x"}, {"y"}, "/Flatten");
        onnx_builder::set(f, "axis", std::int64_t{9});
        b.output("y");
        onnx_file("flatten_axis_out_of_range", bytes_of(b), {"model.onnx"});
    }
    add("onnx_weights_of_broken_file", {"weights", "--onnx", "{dir}/model.onnx"}, 1, {"not a valid ONNX model"},
        {{"model.onnx", "hello"}});
}

}  // namespace ridgeline::test::catalogue
#endif
