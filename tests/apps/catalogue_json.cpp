// The error catalogue: JSON model files (catalogue_test.cpp runs them).
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "catalogue.hpp"

namespace ridgeline::test::catalogue {

void json_models() {
    model_file("not_json", "{\"inputs\": [", {"model.json", "not valid JSON"});
    model_file("empty_file", "", {"model.json", "not valid JSON"});
    model_file("binary_garbage", std::string("\x89PNG\r\n\x1a\n\0\0\0", 11), {"not valid JSON"});
    model_file("nan_literal", net(R"([{"name": "bn", "op": "batch_norm2d", "num_features": 3, "eps": NaN}])"),
               {"not valid JSON"});
    model_file("top_level_array", "[1, 2, 3]", {"$: expected an object", "got an array"});
    model_file("inputs_missing", R"({"layers": []})", {"$: missing required field \"inputs\""});
    model_file("inputs_not_array", R"({"inputs": {"x": [1, 3]}, "layers": []})", {"$.inputs: expected a non-empty array"});
    model_file("inputs_empty", R"({"inputs": [], "layers": []})", {"$.inputs: expected a non-empty array"});
    model_file("input_not_object", R"({"inputs": ["x"], "layers": [{"name": "r", "op": "relu"}]})",
               {"$.inputs[0]: expected an object"});
    model_file("input_name_missing", R"({"inputs": [{"shape": [1, 4]}], "layers": [{"name": "r", "op": "relu"}]})",
               {"$.inputs[0]: missing required field \"name\""});
    model_file("input_name_number", R"({"inputs": [{"name": 7, "shape": [1, 4]}], "layers": [{"name": "r", "op": "relu"}]})",
               {"$.inputs[0].name: expected a string, got 7"});
    model_file("input_shape_missing", R"({"inputs": [{"name": "x"}], "layers": [{"name": "r", "op": "relu"}]})",
               {"$.inputs[0]: missing required field \"shape\""});
    // one relu on an input shape that is not one: the entry's name (after "input_shape_"), the shape as written, the
    // words of the error
    struct bad_shape {
        std::string name, shape;
        std::vector<std::string> words;
    };
    for (const bad_shape& c : std::vector<bad_shape>{
             {"zero", "[1, 0, 4]", {"$.inputs[0].shape[1]: expected a positive integer, got 0"}},
             {"negative", "[1, -3]", {"$.inputs[0].shape[1]: expected a positive integer, got -3"}},
             {"fraction", "[1, 2.5]", {"$.inputs[0].shape[1]: expected a positive integer, got 2.5"}},
             {"beyond_int64", "[1, 9223372036854775808]", {"$.inputs[0].shape[1]: expected a positive integer"}},
             {"huge_float", "[1, 1e300]", {"$.inputs[0].shape[1]: expected a positive integer"}},
             {"product_overflows", "[4294967296, 4294967296]", {"does not fit in int64"}},
             {"string_bad", R"("1x0")", {"$.inputs[0].shape", "dimension 1 is 0"}},
             {"empty_array", "[]", {"$.inputs[0].shape: expected a non-empty array"}},
         })
        model_file("input_shape_" + c.name, net(R"([{"name": "r", "op": "relu"}])", c.shape), c.words);
    model_file("input_dtype_unknown",
               R"({"inputs": [{"name": "x", "shape": [1, 4], "dtype": "int8"}], "layers": [{"name": "r", "op": "relu"}]})",
               {"$.inputs[0].dtype", "int8"});
    model_file("unknown_top_level_field", R"({"inputs": [{"name": "x", "shape": [1, 4]}], "layers": [], "extra": 1})",
               {"$.extra: unknown field"});
    model_file("format_wrong",
               R"({"format": "ridgeline.model/2", "inputs": [{"name": "x", "shape": [1, 4]}], "layers": [{"name": "r", "op": "relu"}]})",
               {"$.format: expected \"ridgeline.model/1\""});
    model_file("name_not_string", R"({"name": [], "inputs": [{"name": "x", "shape": [1, 4]}], "layers": [{"name": "r", "op": "relu"}]})",
               {"$.name: expected a string"});
    model_file("duplicate_input_names",
               R"({"inputs": [{"name": "x", "shape": [1, 4]}, {"name": "x", "shape": [1, 4]}], "layers": [{"name": "r", "op": "relu"}]})",
               {"$.inputs[1].name: duplicate name \"x\""});
    // a key written twice: nlohmann would keep the last one and drop the other without a word
    model_file("duplicate_key_in_layer",
               net(R"([{"name": "r", "op": "relu"}, {"name": "p", "op": "maxpool2d", "kernel_size": 2, "kernel_size": 3}])"),
               {"$.layers[1].kernel_size: duplicate key \"kernel_size\""});
    model_file("duplicate_key_top_level",
               R"({"inputs": [{"name": "x", "shape": [1, 4]}], "layers": [{"name": "r", "op": "relu"}], "inputs": []})",
               {"$.inputs: duplicate key \"inputs\""});
    model_file("duplicate_key_in_nested_array",
               R"({"inputs": [{"name": "x", "shape": [1, 4]}, {"name": "y", "shape": [1, 4], "name": "z"}], "layers": []})",
               {"$.inputs[1].name: duplicate key \"name\""});
    // a key that is not a plain name is quoted in the path, so "a.b" cannot read as two steps
    model_file("duplicate_key_with_a_dot",
               net(R"([{"name": "r", "op": "relu", "a.b": 1, "a.b": 2}])"), {"$.layers[0][\"a.b\"]: duplicate key \"a.b\""});
    // an escaped NUL in a key would cut every later message short at the NUL
    model_file("control_character_in_key", net(R"([{"name": "r", "op": "relu", "a\u0000b": 1}])"),
               {"$.layers[0][\"a\\u0000b\"]: control character U+0000 in a key"});
    model_file("control_character_in_name", net(R"([{"name": "r\u0007", "op": "relu"}])"),
               {"$.layers[0].name: control character U+0007 in a string"});
    model_file("layers_missing", R"({"inputs": [{"name": "x", "shape": [1, 4]}]})", {"$: missing required field \"layers\""});
    model_file("layers_empty", net("[]"), {"$.layers: expected a non-empty array"});
    model_file("layers_not_array", net(R"({"r": "relu"})"), {"$.layers: expected a non-empty array"});
    model_file("layer_not_object", net(R"(["relu"])"), {"$.layers[0]: expected an object"});
    model_file("layer_op_missing", net(R"([{"name": "r"}])"), {"$.layers[0]: missing required field \"op\""});
    model_file("layer_op_unknown", net(R"([{"name": "c", "op": "conv3d"}])"), {"$.layers[0].op: unknown op \"conv3d\""});
    model_file("layer_op_number", net(R"([{"name": "c", "op": 3}])"), {"$.layers[0].op: expected a string, got 3"});
    model_file("layer_name_missing", net(R"([{"op": "relu"}])"), {"$.layers[0]: missing required field \"name\""});
    model_file("layer_name_empty", net(R"([{"name": "", "op": "relu"}])"), {"$.layers[0].name: must not be empty"});
    model_file("duplicate_layer_names", net(R"([{"name": "r", "op": "relu"}, {"name": "r", "op": "relu"}])"),
               {"$.layers[1].name: duplicate name \"r\""});
    model_file("layer_named_like_input", net(R"([{"name": "x", "op": "relu"}])"), {"$.layers[0].name: duplicate name \"x\""});
    model_file("kernel_size_string",
               net(R"([{"name": "c", "op": "conv2d", "in_channels": 3, "out_channels": 8, "kernel_size": "x"}])"),
               {"$.layers[0].kernel_size: expected an integer or [h, w], got \"x\""});
    model_file("kernel_size_object",
               net(R"([{"name": "c", "op": "conv2d", "in_channels": 3, "out_channels": 8, "kernel_size": {"h": 3}}])"),
               {"$.layers[0].kernel_size", "got an object"});
    model_file("kernel_size_three_values",
               net(R"([{"name": "c", "op": "conv2d", "in_channels": 3, "out_channels": 8, "kernel_size": [3, 3, 3]}])"),
               {"$.layers[0].kernel_size: expected an integer or [h, w], got [3,3,3]"});
    model_file("kernel_size_list_of_strings",
               net(R"([{"name": "c", "op": "conv2d", "in_channels": 3, "out_channels": 8, "kernel_size": ["3", "3"]}])"),
               {"$.layers[0].kernel_size[0]: expected an integer"});
    model_file("bias_string", net(R"([{"name": "c", "op": "conv2d", "in_channels": 3, "out_channels": 8, "kernel_size": 3, "bias": "maybe"}])"),
               {"$.layers[0].bias: expected true or false, got \"maybe\""});
    model_file("channels_fraction", net(R"([{"name": "c", "op": "conv2d", "in_channels": 3.5, "out_channels": 8, "kernel_size": 3}])"),
               {"$.layers[0].in_channels: expected an integer, got 3.5"});
    model_file("channels_null", net(R"([{"name": "c", "op": "conv2d", "in_channels": null, "out_channels": 8, "kernel_size": 3}])"),
               {"$.layers[0].in_channels", "null"});
    model_file("eps_string_nan", net(R"([{"name": "bn", "op": "batch_norm2d", "num_features": 3, "eps": "nan"}])"),
               {"$.layers[0].eps", "finite"});
    model_file("eps_overflows_to_infinity", net(R"([{"name": "bn", "op": "batch_norm2d", "num_features": 3, "eps": 1e999}])"),
               {"model.json: not valid JSON", "number overflow parsing '1e999'"});
    model_file("required_attribute_missing", net(R"([{"name": "c", "op": "conv2d", "out_channels": 8, "kernel_size": 3}])"),
               {"$.layers[0]: missing required attribute \"in_channels\""});
    model_file("unknown_attribute", net(R"([{"name": "c", "op": "conv2d", "in_channels": 3, "out_channels": 8, "kernel_size": 3, "kernel": 3}])"),
               {"$.layers[0].kernel: unknown attribute \"kernel\""});
    model_file("groups_do_not_divide",
               net(R"([{"name": "c", "op": "conv2d", "in_channels": 3, "out_channels": 8, "kernel_size": 3, "groups": 2}])"),
               {"conv2d \"c\"", "in_channels 3 is not divisible by groups 2"});
    model_file("dangling_tensor_reference", net(R"([{"name": "r", "op": "relu", "inputs": ["conv9"]}])"),
               {"$.layers[0].inputs[0]: unknown tensor \"conv9\""});
    model_file("layer_inputs_not_array", net(R"([{"name": "r", "op": "relu", "inputs": "x"}])"),
               {"$.layers[0].inputs: expected a non-empty array of tensor names"});
    model_file("inputs_empty_array", net(R"([{"name": "r", "op": "relu", "inputs": []}])"),
               {"$.layers[0].inputs: expected a non-empty array of tensor names"});
    model_file("inputs_number", net(R"([{"name": "r", "op": "relu", "inputs": [3]}])"),
               {"$.layers[0].inputs[0]: expected a tensor name, got 3"});
    model_file("layer_reads_itself", net(R"([{"name": "r", "op": "relu", "inputs": ["r"]}])"),
               {"$.layers[0].inputs[0]: layer \"r\" reads its own output (a cycle)"});
    model_file("cycle_of_two",
               net(R"([{"name": "a", "op": "add", "inputs": ["x", "b"]}, {"name": "b", "op": "relu", "inputs": ["a"]}])"),
               {"closes a cycle"});
    model_file("cycle_of_three",
               net(R"([{"name": "a", "op": "add", "inputs": ["x", "c"]}, {"name": "b", "op": "relu", "inputs": ["a"]},
                       {"name": "c", "op": "relu", "inputs": ["b"]}])"),
               {"closes a cycle", "a <- "});
    model_file("input_never_read",
               R"({"inputs": [{"name": "x", "shape": [1, 4]}, {"name": "y", "shape": [1, 4]}], "layers": [{"name": "r", "op": "relu", "inputs": ["x"]}]})",
               {"$.inputs[1]: input \"y\" is not read by any layer (a dangling input)"});
    model_file("channel_mismatch_between_layers",
               net(R"([{"name": "c1", "op": "conv2d", "in_channels": 3, "out_channels": 8, "kernel_size": 3},
                       {"name": "c2", "op": "conv2d", "in_channels": 16, "out_channels": 8, "kernel_size": 1}])"),
               {"$.layers[1]", "conv2d \"c2\": input has 8 channels", "in_channels is 16"});
    model_file("features_mismatch_after_flatten",
               net(R"([{"name": "f", "op": "flatten"}, {"name": "fc", "op": "linear", "in_features": 100, "out_features": 10}])"),
               {"$.layers[1]", "linear \"fc\""});
    model_file("kernel_larger_deep_in_model",
               net(R"([{"name": "p", "op": "max_pool2d", "kernel_size": 4}, {"name": "c", "op": "conv2d", "in_channels": 3, "out_channels": 8, "kernel_size": 3}])"),
               {"$.layers[1]", "larger than the padded input"});
    model_file("tied_to_missing_parameter", net(R"([{"name": "r", "op": "relu", "tied": {"weight": "shared"}}])"),
               {"$.layers[0].tied", "ties parameter \"weight\", which this op does not have"});
    model_file("tied_sizes_differ",
               net(R"([{"name": "f", "op": "flatten"},
                       {"name": "a", "op": "linear", "in_features": 192, "out_features": 4, "tied": {"weight": "w"}},
                       {"name": "b", "op": "linear", "in_features": 4, "out_features": 2, "tied": {"weight": "w"}}])"),
               {"$.layers[2].tied", "tied tensor \"w\""});
    model_file("tied_not_object", net(R"([{"name": "r", "op": "relu", "tied": "w"}])"), {"$.layers[0].tied: expected an object"});
    model_file("override_count_mismatch", net(R"([{"name": "r", "op": "relu"}])"),
               {"$.inputs: the model has 1 input(s) but 2 input shape(s) were given"},
               {"--input", "1x3x8x8", "--input", "1x3x8x8"});
    model_file("override_batch_disagrees", net(R"([{"name": "r", "op": "relu"}])"), {"batch 2 disagrees with the input shape 1x3x8x8"},
               {"--input", "1x3x8x8", "--batch", "2"});
    {  // deeply nested arrays: the parser must not recurse itself to death
        std::string deep(100000, '[');
        deep += std::string(100000, ']');
        // refused before parsing (core::check_json_text): 64 levels, the 65th bracket at offset 64; in a field, the
        // object's brace is the first level and the array starts after the 11 characters of {"inputs": , so the
        // 65th level opens at 11 + 63 = 74
        model_file("deeply_nested_arrays", deep, {"nested deeper than 64 levels at offset 64"});
        model_file("deeply_nested_field", R"({"inputs": )" + deep + R"(, "layers": []})",
                   {"nested deeper than 64 levels at offset 74"});
        add("flag_compare_deeply_nested_field", {"compare", "{dir}/a.json", "{dir}/b.json"}, 1,
            {"a.json", "nested deeper than 64 levels"},
            {{"a.json", R"({"schema": "ridgeline.profile/1", "layers": [], "device": )" + deep + "}"},
             {"b.json", R"({"schema": "ridgeline.profile/1", "layers": []})"}});
    }
    {  // a long chain written last layer first: graph checks must not recurse once per layer
        const int n = 200000;
        std::string layers = "[";
        for (int i = n - 1; i >= 0; --i)
            layers += R"({"name": "r)" + std::to_string(i) + R"(", "op": "relu", "inputs": [")" +
                      (i == 0 ? std::string("x") : "r" + std::to_string(i - 1)) + R"("]})" + (i ? ", " : "");
        layers += R"(, {"name": "bad", "op": "linear", "in_features": 5, "out_features": 2, "inputs": ["r)" +
                  std::to_string(n - 1) + R"("]}])";
        model_file("long_chain_reversed", net(layers, "[1, 4]"), {"$.layers[" + std::to_string(n) + "]", "linear \"bad\""});
    }
}

}  // namespace ridgeline::test::catalogue
