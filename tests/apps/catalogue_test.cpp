// The error catalogue (issue 6; counted in docs/reliability.md): bad inputs of every kind, each run through
// the real binary as a user would. Layer strings, --input shapes, JSON model files, ONNX files (when this
// build reads ONNX) and command-line flags. Every entry must
//   - exit with its code (2: a command-line mistake; 1: any other error), never by a signal or a timeout,
//   - print exactly one line on stderr, "ridgeline: error: ..." with the entry's key words (the thing at
//     fault and the rule), no stack trace, and nothing on stdout.
// Files are written to a fresh folder per entry ("{dir}" in the arguments).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "process.hpp"
#include "ridgeline/config.hpp"

#if RIDGELINE_HAVE_ONNX
#include "../io/onnx_builder.hpp"
#include "../support/scratch.hpp"
#endif

namespace fs = std::filesystem;
using ridgeline::test::run_ridgeline;

namespace {

struct entry {
    std::string name;                          // unique, [A-Za-z0-9_]
    std::vector<std::string> args;             // "{dir}" is replaced by the entry's folder
    int exit_code = 1;
    std::vector<std::string> key_words;        // each must appear in the error line
    std::map<std::string, std::string> files;  // written to {dir} first: name -> bytes
};

std::vector<entry> g_entries;

void add(std::string name, std::vector<std::string> args, int code, std::vector<std::string> words,
         std::map<std::string, std::string> files = {}) {
    g_entries.push_back({std::move(name), std::move(args), code, std::move(words), std::move(files)});
}

/// `summary --layer L --input S...`: exit 1 with the key words.
void layer(std::string name, std::string text, std::vector<std::string> inputs, std::vector<std::string> words) {
    std::vector<std::string> args{"summary", "--layer", std::move(text)};
    for (auto& s : inputs) {
        args.push_back("--input");
        args.push_back(std::move(s));
    }
    add("layer_" + name, std::move(args), 1, std::move(words));
}

/// `summary --model-file {dir}/model.json` of `json`: exit 1; the key words usually start with the JSON path.
void model_file(std::string name, std::string json, std::vector<std::string> words, std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"summary", "--model-file", "{dir}/model.json"};
    args.insert(args.end(), extra.begin(), extra.end());
    add("json_" + name, std::move(args), 1, std::move(words), {{"model.json", std::move(json)}});
}

/// A one-input model file with the given layers (JSON array text), input shape `shape` (JSON array text).
std::string net(const std::string& layers, const std::string& shape = "[1, 3, 8, 8]") {
    return R"({"inputs": [{"name": "x", "shape": )" + shape + R"(}], "layers": )" + layers + "}";
}

void flags() {
    const std::string ok_layer = "linear:in_features=4,out_features=2";
    auto profile = [&](std::vector<std::string> more) {
        std::vector<std::string> a{"profile", "--layer", ok_layer, "--input", "2x4", "--quiet", "--no-roofline"};
        a.insert(a.end(), more.begin(), more.end());
        return a;
    };
    add("flag_no_command", {}, 2, {"subcommand"});
    add("flag_unknown_command", {"frobnicate"}, 2, {"unknown command \"frobnicate\""});
    add("flag_no_model", {"summary"}, 2, {"give a model"});
    add("flag_model_and_layer", {"summary", "--model", "resnet18", "--layer", "relu"}, 2, {"--model and --layer cannot be used together"});
    add("flag_model_and_onnx", {"summary", "--model", "resnet18", "--onnx", "x.onnx"}, 2, {"cannot be used together"});
    add("flag_file_and_layer", {"summary", "--model-file", "x.json", "--layer", "relu"}, 2, {"cannot be used together"});
    add("flag_layer_without_input", {"summary", "--layer", "relu"}, 2, {"--layer needs --input"});
    add("flag_format_unknown", {"summary", "--model", "resnet18", "--format", "xml"}, 2, {"--format", "xml"});
    add("flag_batch_zero", {"summary", "--model", "resnet18", "--batch", "0"}, 2, {"--batch"});
    add("flag_batch_negative", {"summary", "--model", "resnet18", "--batch", "-4"}, 2, {"--batch"});
    add("flag_batch_not_a_number", {"summary", "--model", "resnet18", "--batch", "eight"}, 2, {"--batch"});
    add("flag_batch_overflows", {"summary", "--model", "resnet18", "--batch", "99999999999999999999"}, 2, {"--batch"});
    add("flag_batch_enormous", {"summary", "--model", "resnet18", "--batch", "2000000000000"}, 2, {"--batch"});
    add("flag_dtype_unknown", {"summary", "--model", "resnet18", "--dtype", "fp64"}, 2, {"--dtype", "fp64"});
    add("flag_unknown_option", {"summary", "--model", "resnet18", "--bogus"}, 2, {"--bogus"});
    add("flag_missing_value", {"summary", "--model"}, 2, {"--model"});
    add("flag_skip_unsupported_without_onnx", {"summary", "--model", "resnet18", "--skip-unsupported"}, 2,
        {"--skip-unsupported applies to --onnx only"});
    add("flag_model_two_inputs", {"summary", "--model", "resnet18", "--input", "1x3x64x64", "--input", "1x3x64x64"}, 2,
        {"--model takes one --input, got 2"});
    add("flag_batch_disagrees_with_input", {"summary", "--layer", "relu", "--input", "2x4", "--batch", "3"}, 2,
        {"--batch 3 disagrees with the batch dimension of --input 2x4"});
    add("flag_threads_negative", profile({"--threads", "-1"}), 2, {"--threads"});
    add("flag_threads_enormous", profile({"--threads", "100000"}), 2, {"--threads"});
    add("flag_warmup_negative", profile({"--warmup", "-1"}), 2, {"--warmup"});
    add("flag_min_samples_zero", profile({"--min-samples", "0"}), 2, {"--min-samples"});
    add("flag_max_noise_zero", profile({"--max-noise", "0"}), 2, {"--max-noise"});
    add("flag_max_noise_above_one", profile({"--max-noise", "2"}), 2, {"--max-noise"});
    add("flag_max_noise_nan", profile({"--max-noise", "nan"}), 2, {"--max-noise"});
    add("flag_max_time_zero", profile({"--max-time", "0"}), 2, {"--max-time"});
    add("flag_min_time_negative", profile({"--min-time", "-1"}), 2, {"--min-time"});
    add("flag_warmup_ms_infinite", profile({"--warmup-ms", "inf"}), 2, {"--warmup-ms"});
    add("flag_cache_unknown", profile({"--cache", "lukewarm"}), 2, {"--cache", "lukewarm"});
    add("flag_seed_not_a_number", profile({"--seed", "abc"}), 2, {"--seed"});
    add("flag_max_memory_not_a_number", profile({"--max-memory", "lots"}), 2, {"invalid byte count \"lots\""});
    add("flag_max_memory_zero", profile({"--max-memory", "0"}), 2, {"byte count \"0\" must be > 0"});
    add("flag_max_memory_negative", profile({"--max-memory", "-5"}), 2, {"invalid byte count \"-5\""});
    add("flag_max_memory_overflows", profile({"--max-memory", "99999999T"}), 2, {"does not fit in int64"});
    add("flag_max_memory_unit_unknown", profile({"--max-memory", "12Q"}), 2, {"invalid byte count \"12Q\""});
    add("flag_device_unknown", profile({"--device", "tpu"}), 1, {"unknown device \"tpu\""});
    add("flag_device_cuda_not_a_number", profile({"--device", "cuda:first"}), 1, {"unknown device \"cuda:first\""});
    add("flag_output_folder_missing", {"summary", "--model", "resnet18", "--output", "{dir}/no/such/folder/r.json"}, 1,
        {"cannot write", "does not exist"});
    add("flag_output_is_a_folder", {"summary", "--model", "resnet18", "--output", "{dir}"}, 1, {"cannot write", "folder"});
    add("flag_profile_output_folder_missing", profile({"--format", "json", "--output", "{dir}/missing/r.json"}), 1,
        {"cannot write", "does not exist"});
    add("flag_profile_svg_folder_missing", profile({"--svg", "{dir}/missing/r.svg"}), 1, {"cannot write", "does not exist"});
    add("flag_export_output_folder_missing", {"export", "--model", "resnet18", "--output", "{dir}/missing/m.json"}, 1,
        {"cannot write", "does not exist"});
    add("flag_model_unknown", {"summary", "--model", "resnet19"}, 1, {"unknown model \"resnet19\""});
    add("flag_model_file_missing", {"summary", "--model-file", "{dir}/absent.json"}, 1, {"absent.json", "no such file"});
    add("flag_model_file_is_a_folder", {"summary", "--model-file", "{dir}"}, 1, {"is a directory, not a file"});
    add("flag_onnx_missing", {"summary", "--onnx", "{dir}/absent.onnx"}, 1, {"absent.onnx", "no such file"});
    add("flag_onnx_is_a_folder", {"summary", "--onnx", "{dir}"}, 1, {"directory"});
    add("flag_weights_without_onnx", {"weights", "--model", "resnet18"}, 2, {"give --onnx FILE"});
    add("flag_compare_one_report", {"compare", "{dir}/a.json"}, 2, {"at least two"}, {{"a.json", "{}"}});
    add("flag_compare_report_missing", {"compare", "{dir}/a.json", "{dir}/b.json"}, 2, {"b.json"}, {{"a.json", "{}"}});
    add("flag_compare_not_json", {"compare", "{dir}/a.json", "{dir}/b.json"}, 1, {"a.json", "is not valid JSON"},
        {{"a.json", "{\"schema\": "}, {"b.json", "{}"}});
    add("flag_compare_not_a_profile", {"compare", "{dir}/a.json", "{dir}/b.json"}, 1,
        {"a.json", "is not a ridgeline profile report"}, {{"a.json", "[1, 2]"}, {"b.json", "{}"}});
    add("flag_compare_wrong_field_type", {"compare", "{dir}/a.json", "{dir}/b.json"}, 1, {"a.json", "threads"},
        {{"a.json", R"({"schema": "ridgeline.profile/1", "layers": [], "device": {"threads": "two"}})"},
         {"b.json", R"({"schema": "ridgeline.profile/1", "layers": []})"}});
    add("flag_compare_unknown_schema_version", {"compare", "{dir}/a.json", "{dir}/b.json"}, 1,
        {"a.json", "ridgeline.profile/9", "does not know"},
        {{"a.json", R"({"schema": "ridgeline.profile/9", "layers": []})"},
         {"b.json", R"({"schema": "ridgeline.profile/2", "layers": []})"}});
    add("flag_sweep_batch_list_bad", {"sweep", "--layer", ok_layer, "--input", "1x4", "--batch", "1,x,8"}, 2,
        {"--batch", "\"x\" is not a batch size"});
    add("flag_sweep_batch_list_empty", {"sweep", "--layer", ok_layer, "--input", "1x4", "--batch", ","}, 2, {"--batch"});
    add("flag_ceilings_device_unknown", {"ceilings", "--device", "abacus"}, 1, {"unknown device \"abacus\""});
    add("flag_models_format_unknown", {"models", "--format", "yaml"}, 2, {"--format"});
}

void shapes() {
    const std::string relu = "relu";
    layer("shape_zero_dimension", relu, {"1x0x4"}, {"invalid shape \"1x0x4\"", "dimension 2 is 0", ">= 1"});
    layer("shape_negative_dimension", relu, {"1x-3x4"}, {"dimension 2 is -3"});
    layer("shape_empty_dimension", relu, {"1xx4"}, {"dimension 2 is empty"});
    layer("shape_trailing_x", relu, {"1x4x"}, {"dimension 3 is empty"});
    layer("shape_fraction", relu, {"1x3.5x4"}, {"dimension 2", "is not an integer"});
    layer("shape_words", relu, {"axb"}, {"invalid shape \"axb\"", "not an integer"});
    layer("shape_junk_after", relu, {"1x3x224x224px"}, {"dimension 4", "not an integer"});
    layer("shape_too_big_for_int64", relu, {"99999999999999999999x1"}, {"dimension 1", "does not fit in int64"});
    layer("shape_product_overflows", relu, {"4294967296x4294967296"}, {"4294967296x4294967296", "does not fit in int64"});
    layer("shape_product_overflows_late", relu, {"65536x65536x65536x65536"}, {"does not fit in int64"});
    layer("shape_blank", relu, {" "}, {"invalid shape", "empty"});
    add("shape_model_wrong_rank", {"summary", "--model", "resnet18", "--input", "1x3x224"}, 1,
        {"model \"resnet18\"", "input 1x3x224 has rank 3, expected NCHW"});
    add("shape_model_wrong_channels", {"summary", "--model", "resnet18", "--input", "1x1x224x224"}, 1,
        {"conv2d \"conv1\"", "input has 1 channels", "in_channels is 3"});
    add("shape_model_image_too_small", {"summary", "--model", "alexnet", "--input", "1x3x8x8"}, 1,
        {"larger than the padded input"});
    add("shape_sequence_too_long", {"summary", "--model", "bert_base", "--input", "1x100000"}, 1,
        {"bert_base", "sequence length 100000"});
    add("shape_batch_overflows_costs", {"summary", "--model", "vgg16", "--input", "1000000000000x3x224x224"}, 1,
        {"does not fit in int64"});
}

void layers() {
    const std::string conv = "conv2d:in_channels=3,out_channels=8,kernel_size=3";
    layer("conv_groups_do_not_divide_in", "conv2d:in_channels=64,out_channels=64,kernel_size=3,groups=3", {"1x64x8x8"},
          {"in_channels 64 is not divisible by groups 3"});
    layer("conv_groups_do_not_divide_out", "conv2d:in_channels=6,out_channels=8,kernel_size=3,groups=3", {"1x6x8x8"},
          {"out_channels 8 is not divisible by groups 3"});
    layer("conv_groups_zero", conv + ",groups=0", {"1x3x8x8"}, {"groups must be >= 1, got 0"});
    layer("conv_in_channels_zero", "conv2d:in_channels=0,out_channels=8,kernel_size=3", {"1x1x8x8"},
          {"in_channels must be >= 1, got 0"});
    layer("conv_out_channels_negative", "conv2d:in_channels=3,out_channels=-8,kernel_size=3", {"1x3x8x8"},
          {"out_channels must be >= 1, got -8"});
    layer("conv_kernel_negative", "conv2d:in_channels=3,out_channels=8,kernel_size=-3", {"1x3x8x8"},
          {"kernel_size must be >= 1, got -3"});
    layer("conv_kernel_larger_than_padded_input", conv, {"1x3x2x2"},
          {"conv2d", "kernel height 3 is larger than the padded input height 2"});
    layer("conv_dilated_kernel_larger_than_input", conv + ",dilation=4", {"1x3x8x8"},
          {"dilated extent 9", "larger than the padded input"});
    layer("conv_channel_mismatch", conv, {"1x4x8x8"}, {"input has 4 channels", "in_channels is 3"});
    layer("conv_input_rank", conv, {"3x8x8"}, {"expects a 4-D NCHW input", "rank 3"});
    layer("conv_stride_zero", conv + ",stride=0", {"1x3x8x8"}, {"stride must be >= 1, got 0"});
    layer("conv_padding_negative", conv + ",padding=-1", {"1x3x8x8"}, {"padding \"-1\" is negative"});
    layer("conv_padding_word", conv + ",padding=full", {"1x3x8x8"}, {"padding \"full\" is not"});
    layer("conv_padding_three_values", conv + ",padding=1x1x1", {"1x3x8x8"}, {"padding \"1x1x1\" has 3 values"});
    layer("conv_same_with_stride", conv + ",stride=2,padding=same", {"1x3x8x8"}, {"padding \"same\" needs stride 1"});
    layer("conv_kernel_three_values", "conv2d:in_channels=3,out_channels=8,kernel_size=3x3x3", {"1x3x8x8"},
          {"kernel_size \"3x3x3\" has 3 values"});
    layer("conv_kernel_missing", "conv2d:in_channels=3,out_channels=8", {"1x3x8x8"}, {"kernel_size is required"});
    layer("conv_bias_not_boolean", conv + ",bias=maybe", {"1x3x8x8"}, {"bias \"maybe\" is not a boolean"});
    layer("conv_unknown_attribute", conv + ",kernel=3", {"1x3x8x8"}, {"unknown attribute \"kernel\"", "known: in_channels"});
    layer("conv_attribute_twice", "conv2d:in_channels=3,in_channels=4,out_channels=8,kernel_size=3", {"1x3x8x8"},
          {"in_channels is given twice"});
    layer("conv_fractional_channels", "conv2d:in_channels=3.5,out_channels=8,kernel_size=3", {"1x3x8x8"},
          {"in_channels \"3.5\" is not an integer"});
    layer("conv_weight_count_overflows", "conv2d:in_channels=4294967296,out_channels=4294967296,kernel_size=1",
          {"1x1x1x1"}, {"weight elements", "does not fit in int64"});
    // MACs = N x C_out x H_out x W_out x C_in = 2^20 x 2^20 x 2^10 x 2^10 x 2^20 = 2^80 (every shape fits)
    layer("conv_macs_overflow", "conv2d:in_channels=1048576,out_channels=1048576,kernel_size=1", {"1048576x1048576x1024x1024"},
          {"conv2d macs", "does not fit in int64"});
    layer("conv_padding_overflows", conv + ",padding=9223372036854775807", {"1x3x8x8"}, {"does not fit in int64"});
    layer("conv_dilation_overflows", conv + ",dilation=9223372036854775807", {"1x3x8x8"}, {"does not fit in int64"});
    layer("conv_same_padding_dilation_overflows", conv + ",padding=same,dilation=4611686018427387904", {"1x3x8x8"},
          {"does not fit in int64"});
    layer("conv_channels_beyond_int64", "conv2d:in_channels=99999999999999999999,out_channels=8,kernel_size=3",
          {"1x3x8x8"}, {"in_channels", "is not an integer"});
    layer("linear_feature_mismatch", "linear:in_features=4,out_features=2", {"2x5"}, {"linear", "in_features"});
    layer("linear_in_features_zero", "linear:in_features=0,out_features=2", {"2x4"}, {"in_features must be >= 1, got 0"});
    layer("linear_out_features_negative", "linear:in_features=4,out_features=-2", {"2x4"}, {"out_features must be >= 1"});
    layer("linear_params_overflow", "linear:in_features=4611686018427387904,out_features=4", {"1x4611686018427387904"},
          {"does not fit in int64"});
    layer("linear_missing_in_features", "linear:out_features=2", {"2x4"}, {"in_features is required"});
    layer("linear_bias_number", "linear:in_features=4,out_features=2,bias=2", {"2x4"}, {"bias \"2\" is not a boolean"});
    layer("batch_norm_channel_mismatch", "batch_norm2d:num_features=8", {"1x4x2x2"}, {"batch_norm2d", "8"});
    layer("batch_norm_input_rank", "batch_norm2d:num_features=4", {"4x4"}, {"batch_norm2d", "4-D"});
    layer("batch_norm_eps_nan", "batch_norm2d:num_features=4,eps=nan", {"1x4x2x2"}, {"eps is nan, it must be a finite number"});
    layer("batch_norm_eps_infinite", "batch_norm2d:num_features=4,eps=inf", {"1x4x2x2"}, {"eps is inf, it must be a finite number"});
    layer("layer_norm_eps_overflows_to_infinity", "layer_norm:normalized_shape=4,eps=1e400", {"2x4"},
          {"eps", "finite"});
    layer("layer_norm_shape_mismatch", "layer_norm:normalized_shape=8", {"2x4"}, {"layer_norm", "normalized_shape"});
    layer("layer_norm_eps_word", "layer_norm:normalized_shape=4,eps=small", {"2x4"}, {"eps \"small\" is not a number"});
    layer("scale_factor_nan", "scale:factor=nan", {"2x4"}, {"factor is nan, it must be a finite number"});
    layer("scale_factor_infinite", "scale:factor=-inf", {"2x4"}, {"factor is -inf, it must be a finite number"});
    layer("scale_factor_missing", "scale", {"2x4"}, {"factor is required"});
    layer("gelu_approximation_unknown", "gelu:approximate=fast", {"2x4"}, {"approximate \"fast\" is not one of: none, tanh"});
    layer("softmax_dim_out_of_range", "softmax:dim=3", {"2x4"}, {"dim 3 is out of range for rank 2"});
    layer("add_one_input", "add", {"2x4"}, {"add", "takes 2 inputs, got 1"});
    layer("add_three_inputs", "add", {"2x4", "2x4", "2x4"}, {"takes 2 inputs, got 3"});
    layer("add_shapes_do_not_broadcast", "add", {"2x3", "2x4"}, {"add", "2x3", "2x4"});
    layer("matmul_inner_mismatch", "matmul", {"2x3", "4x5"}, {"matmul", "2x3", "4x5"});
    layer("matmul_rank_one", "matmul", {"3", "3x4"}, {"matmul"});
    layer("concat_shape_mismatch", "concat:dim=1", {"1x2x4", "1x3x5"}, {"concat", "1x3x5"});
    layer("concat_dim_out_of_range", "concat:dim=5", {"1x2x4", "1x3x4"}, {"dim 5 is out of range"});
    layer("max_pool_kernel_larger_than_input", "max_pool2d:kernel_size=5", {"1x1x3x3"}, {"max_pool2d", "kernel"});
    layer("max_pool_padding_over_half_kernel", "max_pool2d:kernel_size=2,padding=2", {"1x1x8x8"}, {"max_pool2d", "padding"});
    layer("max_pool_stride_zero", "max_pool2d:kernel_size=2,stride=0", {"1x1x8x8"}, {"stride must be >= 1, got 0"});
    layer("max_pool_dilation_zero", "max_pool2d:kernel_size=2,dilation=0", {"1x1x8x8"}, {"dilation must be >= 1, got 0"});
    layer("avg_pool_input_rank", "avg_pool2d:kernel_size=2", {"8x8"}, {"avg_pool2d", "4-D"});
    layer("adaptive_pool_output_zero", "adaptive_avg_pool2d:output_size=0", {"1x1x8x8"}, {"output_size must be >= 1"});
    layer("embedding_num_zero", "embedding:num_embeddings=0,embedding_dim=4", {"2x3"}, {"num_embeddings must be >= 1"});
    layer("embedding_table_overflows", "embedding:num_embeddings=4611686018427387904,embedding_dim=4", {"2x3"},
          {"does not fit in int64"});
    layer("flatten_start_after_end", "flatten:start_dim=2,end_dim=1", {"2x3x4"}, {"flatten"});
    layer("flatten_dim_out_of_range", "flatten:start_dim=7", {"2x3x4"}, {"out of range"});
    layer("reshape_count_changes", "reshape:shape=3x5", {"4x4"}, {"reshape"});
    layer("reshape_two_inferred", "reshape:shape=-1x-1", {"4x4"}, {"reshape", "-1"});
    layer("reshape_negative_dimension", "reshape:shape=-4x4", {"4x4"}, {"reshape"});
    layer("reshape_copy_beyond_rank", "reshape:shape=0x0x0", {"16"}, {"reshape"});
    layer("transpose_dim_out_of_range", "transpose:dim0=0,dim1=4", {"2x3"}, {"dim 4 is out of range for rank 2"});
    layer("slice_step_zero", "slice:dim=0,step=0", {"4x4"}, {"slice", "step"});
    layer("slice_empty_result", "slice:dim=0,start=3,end=1", {"4x4"}, {"slice"});
    layer("slice_dim_out_of_range", "slice:dim=2", {"4x4"}, {"out of range"});
    layer("unknown_op", "conv3d:in_channels=3", {"1x3x8x8"}, {"unknown op \"conv3d\"", "known ops: linear"});
    layer("op_name_missing", ":in_features=3", {"2x3"}, {"has no op name before ':'"});
    layer("attribute_without_value", "linear:in_features=,out_features=2", {"2x3"}, {"in_features has no value"});
    layer("attribute_without_key", "linear:=4,out_features=2", {"2x3"}, {"has no key"});
    layer("attribute_without_equals", "linear:in_features", {"2x3"}, {"attribute \"in_features\" has no '='"});
    layer("empty_attribute", "linear:in_features=3,,out_features=2", {"2x3"}, {"empty attribute"});
    layer("newline_in_op", "relu\nrelu", {"2x3"}, {"unknown op"});
    layer("very_long_string", "linear:in_features=3,out_features=2," + std::string(100000, 'a') + "=1", {"2x3"},
          {"unknown attribute"});
    layer("relu_takes_no_attributes", "relu:inplace=true", {"2x3"}, {"unknown attribute \"inplace\"", "takes no attributes"});
    add("layer_empty_string", {"summary", "--layer", "", "--input", "2x3"}, 2, {"give a model"});
    add("layer_whitespace_only", {"summary", "--layer", "   ", "--input", "2x3"}, 1, {"empty layer string"});
}

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
    model_file("input_shape_zero", net(R"([{"name": "r", "op": "relu"}])", "[1, 0, 4]"),
               {"$.inputs[0].shape[1]: expected a positive integer, got 0"});
    model_file("input_shape_negative", net(R"([{"name": "r", "op": "relu"}])", "[1, -3]"),
               {"$.inputs[0].shape[1]: expected a positive integer, got -3"});
    model_file("input_shape_fraction", net(R"([{"name": "r", "op": "relu"}])", "[1, 2.5]"),
               {"$.inputs[0].shape[1]: expected a positive integer, got 2.5"});
    model_file("input_shape_beyond_int64", net(R"([{"name": "r", "op": "relu"}])", "[1, 9223372036854775808]"),
               {"$.inputs[0].shape[1]: expected a positive integer"});
    model_file("input_shape_huge_float", net(R"([{"name": "r", "op": "relu"}])", "[1, 1e300]"),
               {"$.inputs[0].shape[1]: expected a positive integer"});
    model_file("input_shape_product_overflows", net(R"([{"name": "r", "op": "relu"}])", "[4294967296, 4294967296]"),
               {"does not fit in int64"});
    model_file("input_shape_string_bad", net(R"([{"name": "r", "op": "relu"}])", R"("1x0")"),
               {"$.inputs[0].shape", "dimension 2 is 0"});
    model_file("input_shape_empty_array", net(R"([{"name": "r", "op": "relu"}])", "[]"),
               {"$.inputs[0].shape: expected a non-empty array"});
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
               {"$.inputs: the model has 1 input(s) but 2 --input shape(s) were given"},
               {"--input", "1x3x8x8", "--input", "1x3x8x8"});
    model_file("override_batch_disagrees", net(R"([{"name": "r", "op": "relu"}])"), {"--batch 2 disagrees with --input 1x3x8x8"},
               {"--input", "1x3x8x8", "--batch", "2"});
    {  // deeply nested arrays: the parser must not recurse itself to death
        std::string deep(100000, '[');
        deep += std::string(100000, ']');
        model_file("deeply_nested_arrays", deep, {"$: expected an object"});
        model_file("deeply_nested_field", R"({"inputs": )" + deep + R"(, "layers": []})",
                   {"$.inputs[0]: expected an object", "[[[[[[[[..."});
        add("flag_compare_deeply_nested_field", {"compare", "{dir}/a.json", "{dir}/b.json"}, 1,
            {"a.json", "$.device: expected an object, got array"},
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

#if RIDGELINE_HAVE_ONNX
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
    auto& t = b.init("w", {4, 3, 3, 3}, {});
    t.clear_raw_data();
    t.set_data_location(tp::EXTERNAL);
    for (const auto& [k, v] : keys) {
        auto* e = t.add_external_data();
        e->set_key(k);
        e->set_value(v);
    }
    b.node("Conv", {"x", "w"}, {"y"}, "/conv/Conv");
    b.output("y");
    return bytes_of(b);
}

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
        onnx_builder b;
        auto* in = b.proto().mutable_graph()->add_input();
        in->set_name("x");
        in->mutable_type()->mutable_tensor_type()->set_elem_type(tp::FLOAT);
        b.node("Relu", {"x"}, {"y"});
        b.output("y");
        onnx_file("input_without_shape", bytes_of(b), {"input \"x\" has no shape in the file", "--input"});
    }
    {
        onnx_builder b;
        b.input("x", {-1, -1, 8});
        b.node("Relu", {"x"}, {"y"});
        b.output("y");
        const std::string bytes = bytes_of(b);
        onnx_file("symbolic_dimension", bytes, {"input \"x\" has symbolic dimension 1", "--input"});
        onnx_file("input_rank_mismatch", bytes, {"--input 2x5 has rank 2 but input \"x\" has rank 3"}, {"--input", "2x5"});
        onnx_file("input_count_mismatch", bytes, {"the model has 1 input(s) but 2 --input shape(s) were given"},
                  {"--input", "2x5x8", "--input", "2x5x8"});
    }
    {
        auto b = small_cnn();
        b.node("Sin", {"y"}, {"z"}, "/sin/Sin");
        b.node("Cos", {"y"}, {"v"}, "/cos/Cos");
        b.output("z");
        b.output("v");
        onnx_file("unsupported_ops", bytes_of(b), {"2 node(s) cannot be imported", "Sin \"/sin/Sin\"", "Cos \"/cos/Cos\"",
                                                    "--skip-unsupported"});
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
    onnx_file("external_data_missing", external({{"location", "weights.bin"}}),
              {"initializer \"w\" is stored in the external file \"weights.bin\"", "which does not exist"});
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
    {
        onnx_builder b;
        b.input("x", {1, 6, 8, 8});
        b.init_n("w", {3, 3, 3, 3});
        auto& c = b.node("Conv", {"x", "w"}, {"y"}, "/conv/Conv");
        onnx_builder::set(c, "group", std::int64_t{2});
        b.output("y");
        onnx_file("conv_groups_do_not_divide", bytes_of(b), {"model.onnx", "Conv"});
    }
    {
        onnx_builder b;
        b.input("x", {1, 3, 8, 8});
        b.init_n("w", {4, 3, 3, 3});
        auto& c = b.node("Conv", {"x", "w"}, {"y"}, "/conv/Conv");
        onnx_builder::set(c, "group", std::int64_t{4611686018427387904LL});
        b.output("y");
        onnx_file("conv_groups_overflow", bytes_of(b), {"model.onnx"});
    }
    {
        onnx_builder b;
        b.input("x", {1, 3, 2, 2});
        b.init_n("w", {4, 3, 5, 5});
        b.node("Conv", {"x", "w"}, {"y"}, "/conv/Conv");
        b.output("y");
        onnx_file("conv_kernel_larger_than_input", bytes_of(b), {"model.onnx"});
    }
    {
        onnx_builder b;
        b.input("x", {1, 4, 8, 8});
        b.init_n("w", {4, 3, 3, 3});
        b.node("Conv", {"x", "w"}, {"y"}, "/conv/Conv");
        b.output("y");
        onnx_file("conv_channel_mismatch", bytes_of(b), {"model.onnx"});
    }
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
#endif

const std::vector<entry>& catalogue() {
    static const bool built = [] {
        flags();
        shapes();
        layers();
        json_models();
#if RIDGELINE_HAVE_ONNX
        onnx_models();
#endif
        return true;
    }();
    (void)built;
    return g_entries;
}

std::string substitute(std::string s, const std::string& dir) {
    for (std::size_t p; (p = s.find("{dir}")) != std::string::npos;) s.replace(p, 5, dir);
    return s;
}

class Catalogue : public testing::TestWithParam<entry> {};

/// How gtest prints an entry (in ctest's list and in failures): its name, not its bytes.
[[maybe_unused]] void PrintTo(const entry& e, std::ostream* os) { *os << e.name; }

}  // namespace

TEST(CatalogueSize, AtLeastOneHundredDistinctEntries) {
    const auto& all = catalogue();
    std::set<std::string> names;
    std::set<std::pair<std::vector<std::string>, std::map<std::string, std::string>>> inputs;
    for (const auto& e : all) {
        EXPECT_TRUE(names.insert(e.name).second) << "duplicate name " << e.name;
        EXPECT_TRUE(inputs.insert({e.args, e.files}).second) << "duplicate input " << e.name;
    }
    std::map<std::string, int> by_kind;
    for (const auto& e : all) ++by_kind[e.name.substr(0, e.name.find('_'))];
    std::string counts;
    for (const auto& [k, n] : by_kind) counts += " " + k + "=" + std::to_string(n);
    std::printf("catalogue: %zu entries:%s\n", all.size(), counts.c_str());
    EXPECT_GE(all.size(), 100u);
}

TEST_P(Catalogue, OneLineErrorNoCrash) {
    const entry& e = GetParam();
    const fs::path dir = ridgeline::test::fresh_scratch_dir(e.name);
    for (const auto& [name, bytes] : e.files) {
        fs::create_directories((dir / name).parent_path());
        std::ofstream(dir / name, std::ios::binary) << bytes;
    }
    std::vector<std::string> args;
    for (const auto& a : e.args) args.push_back(substitute(a, dir.string()));
    const auto r = run_ridgeline(args, 120);
    fs::remove_all(dir);

    ASSERT_GE(r.exit_code, 0) << "killed by signal " << -r.exit_code << " (or timed out): " << r.err.substr(0, 2000);
    EXPECT_EQ(r.exit_code, e.exit_code) << r.err.substr(0, 2000);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err.substr(0, 2000);
    EXPECT_EQ(r.err.rfind("ridgeline: error: ", 0), 0u) << r.err.substr(0, 2000);
    std::string err = r.err;
    for (const auto& w : e.key_words) {
        const std::string word = substitute(w, dir.string());
        EXPECT_NE(err.find(word), std::string::npos) << "missing \"" << word << "\" in: " << err.substr(0, 2000);
    }
    EXPECT_TRUE(r.out.empty()) << r.out.substr(0, 2000);
}

INSTANTIATE_TEST_SUITE_P(All, Catalogue, testing::ValuesIn(catalogue()),
                         [](const testing::TestParamInfo<entry>& param_info) { return param_info.param.name; });
