// The error catalogue: command-line flags, --input shapes and layer strings (catalogue_test.cpp runs them).
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "catalogue.hpp"

namespace ridgeline::test::catalogue {

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
    // a phase, KV cache length, sequence or input the model cannot take is a usage mistake (core::request_error)
    add("flag_phase_of_a_cnn", {"summary", "--model", "resnet18", "--phase", "decode", "--kv-len", "3"}, 2,
        {"\"resnet18\" is not a transformer"});
    add("flag_decode_without_kv_len", {"summary", "--model", "gpt2", "--phase", "decode"}, 2, {"needs the KV cache length", "(--kv-len)"});
    add("flag_kv_len_of_a_prefill", {"summary", "--model", "gpt2", "--kv-len", "8"}, 2,
        {"a KV cache length applies to a decode step (--kv-len, --phase)"});
    add("flag_seq_of_a_decode", {"summary", "--model", "gpt2", "--phase", "decode", "--kv-len", "8", "--seq", "4"}, 2,
        {"a sequence length is a prefill's", "(--seq, --phase)"});
    add("flag_transformer_input_with_a_zero", {"summary", "--model", "gpt2", "--input", "1x0"}, 2,
        {"--input: invalid shape \"1x0\""});
    add("flag_seq_past_learned_positions", {"summary", "--model", "gpt2", "--seq", "2048"}, 2,
        {"learned position embeddings"});
    add("flag_max_memory_empty", profile({"--max-memory", ""}), 2, {"--max-memory: invalid byte count \"\""});
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
    add("flag_device_unknown", profile({"--device", "tpu"}), 2, {"unknown device \"tpu\""});
    add("flag_device_cuda_not_a_number", profile({"--device", "cuda:first"}), 2, {"unknown device \"cuda:first\""});
    add("flag_output_folder_missing", {"summary", "--model", "resnet18", "--output", "{dir}/no/such/folder/r.json"}, 1,
        {"cannot write", "does not exist"});
    add("flag_output_is_a_folder", {"summary", "--model", "resnet18", "--output", "{dir}"}, 1, {"cannot write", "folder"});
    add("flag_profile_output_folder_missing", profile({"--format", "json", "--output", "{dir}/missing/r.json"}), 1,
        {"cannot write", "does not exist"});
    add("flag_profile_svg_folder_missing", profile({"--svg", "{dir}/missing/r.svg"}), 1, {"cannot write", "does not exist"});
    // an empty file name would read as "not given": the report to stdout, the chart nowhere, without a word
    add("flag_profile_output_empty", profile({"--format", "json", "--output", ""}), 2, {"--output", "an empty file name"});
    add("flag_profile_svg_empty", profile({"--svg", ""}), 2, {"--svg", "an empty file name"});
    add("flag_predict_html_empty", {"predict", "--from", "a.json", "--to", "h100", "--html", ""}, 2,
        {"--html", "an empty file name"});
    add("flag_ceilings_output_folder_missing", {"ceilings", "--quick", "--output", "{dir}/missing/c.json"}, 1,
        {"cannot write", "does not exist"});  // before seconds of measuring
    add("flag_group_by_unknown", profile({"--group-by", "modul"}), 2,
        {"group by \"modul\" is not one of", "did you mean \"module\"?", "(--group-by)"});
    add("flag_group_by_module_zero", profile({"--group-by", "module:0"}), 2, {"module:N takes", "(--group-by)"});
    add("flag_sort_unknown", profile({"--sort", "tme"}), 2, {"did you mean \"time\"?", "(--sort)"});
    add("flag_top_zero", profile({"--top", "0"}), 2, {"--top"});
    add("flag_export_output_folder_missing", {"export", "--model", "resnet18", "--output", "{dir}/missing/m.json"}, 1,
        {"cannot write", "does not exist"});
    add("flag_model_unknown", {"summary", "--model", "resnet19"}, 2, {"unknown model \"resnet19\" (did you mean \"resnet18\"?)"});
    add("flag_model_file_missing", {"summary", "--model-file", "{dir}/absent.json"}, 1, {"absent.json", "no such file"});
    add("flag_model_file_is_a_folder", {"summary", "--model-file", "{dir}"}, 1, {"is a directory, not a file"});
    add("flag_onnx_missing", {"summary", "--onnx", "{dir}/absent.onnx"}, 1, {"absent.onnx", "no such file"});
    // a file given to the other reader says what it is and names the flag that reads it
    add("flag_model_file_given_onnx", {"summary", "--model-file", "{dir}/m.onnx"}, 2,
        {"m.onnx: an ONNX model, not a ridgeline model file", "(--onnx)"}, {{"m.onnx", "\x08\x07\x12\x07pytorch"}});
    add("flag_onnx_given_json", {"summary", "--onnx", "{dir}/m.json"}, 2,
        {"m.json: a JSON text, not an ONNX model", "(--model-file, --hf-config)"}, {{"m.json", "{\"layers\": []}"}});
    // an unknown option names the closest of the command's own, or what other tools call it
    add("flag_unknown_option_synonym", profile({"--fast"}), 2, {"unknown option \"--fast\" (did you mean \"--quick\"?)"});
    add("flag_unknown_option_misspelt", profile({"--thread", "2"}), 2,
        {"unknown option \"--thread\" (did you mean \"--threads\"?)"});
    add("flag_onnx_is_a_folder", {"summary", "--onnx", "{dir}"}, 1, {"directory"});
    add("flag_weights_without_onnx", {"weights", "--model", "resnet18"}, 2, {"give --onnx FILE"});
    add("flag_compare_one_report", {"compare", "{dir}/a.json"}, 2, {"at least two"}, {{"a.json", "{}"}});
    add("flag_compare_report_missing", {"compare", "{dir}/b.json", "{dir}/a.json"}, 1, {"b.json", "no such file"},
        {{"a.json", "{}"}});
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
    {
        // a timed layer "fc" in a minimal profile/2 report of the model `model` from `source`, its disturbed flag
        // written as `disturbed`
        auto report = [](const std::string& model, const std::string& source, const std::string& layer,
                         const std::string& disturbed = "false") {
            return R"({"schema": "ridgeline.profile/2", "model": ")" + model + R"(", "source": ")" + source +
                   R"(", "layers": [{"name": ")" + layer +
                   R"(", "time": {"median_ms": 1, "ci95_low_ms": 0.9, "ci95_high_ms": 1.1, "disturbed": )" + disturbed +
                   "}}]}";
        };
        add("flag_compare_field_of_wrong_type_in_a_layer", {"compare", "{dir}/a.json", "{dir}/b.json"}, 1,
            {"b.json", "$.layers[0].time.disturbed", "true or false", "\"yes\""},
            {{"a.json", report("m", "zoo:m", "fc")}, {"b.json", report("m", "zoo:m", "fc", "\"yes\"")}});
        // every one-layer profile is the model "layer"; the sources differ
        add("flag_compare_different_layers", {"compare", "{dir}/a.json", "{dir}/b.json"}, 1,
            {"profiles layer:linear:in_features=2048", "the baseline layer:linear:in_features=256"},
            {{"a.json", report("layer", "layer:linear:in_features=256", "linear")},
             {"b.json", report("layer", "layer:linear:in_features=2048", "linear")}});
        // of three reports, the third shares no timed layer with the baseline: it is the one named
        add("flag_compare_third_report_shares_nothing", {"compare", "{dir}/a.json", "{dir}/b.json", "{dir}/c.json"}, 1,
            {"no layer was measured in every run", "\"a (", "\"c ("},
            {{"a.json", report("m", "zoo:m", "fc")}, {"b.json", report("m", "zoo:m", "fc")},
             {"c.json", report("m", "zoo:m", "conv")}});
    }
    {
        // a profile report with one timed layer "fc" (1 -> 2000 FLOPs at 100 GFLOP/s: 0.00002 ms; 0.001 ms measured)
        const std::string fc_report =
            R"({"schema": "ridgeline.profile/2", "model": "m", "source": "zoo:m", "dtype": "fp32", "layers": [{"name": "fc",)"
            R"( "op": "linear", "flops": 2000, "bytes": 100, "time": {"median_ms": 0.001, "ci95_low_ms": 0.0009,)"
            R"( "ci95_high_ms": 0.0011}, "roofs": {"compute_gflops": 100, "bandwidth_gbs": 10, "dispatch_ms": 0.0001}}]})";
        const std::string untimed =
            R"({"schema": "ridgeline.profile/2", "model": "m", "layers": [{"name": "fc", "op": "linear", "time": null,)"
            R"( "state": "unsupported", "reason": "no kernel"}]})";
        add("flag_predict_without_from", {"predict", "--to", "h100"}, 2, {"predict needs --from"});
        add("flag_predict_without_to", {"predict", "--from", "{dir}/a.json"}, 2, {"predict needs --to"},
            {{"a.json", fc_report}});
        add("flag_predict_to_a_prefix_of_several", {"predict", "--from", "{dir}/a.json", "--to", "a100"}, 1,
            {"\"a100\" names 4 datasheet entries", "a100-pcie-40gb"}, {{"a.json", fc_report}});
        add("flag_predict_to_unknown_device", {"predict", "--from", "{dir}/a.json", "--to", "tpu"}, 1,
            {"no datasheet entry is named \"tpu\"", "h100"}, {{"a.json", fc_report}});
        add("flag_predict_to_missing_file", {"predict", "--from", "{dir}/a.json", "--to", "{dir}/c.json"}, 1,
            {"c.json", "does not exist"}, {{"a.json", fc_report}});
        add("flag_predict_to_not_ceilings", {"predict", "--from", "{dir}/a.json", "--to", "{dir}/b.json"}, 1,
            {"b.json", "is neither ceilings nor a profile report"}, {{"a.json", fc_report}, {"b.json", R"({"schema": "x"})"}});
        add("flag_predict_to_profile_without_ceilings", {"predict", "--from", "{dir}/a.json", "--to", "{dir}/a.json"}, 1,
            {"a.json", "a profile report without ceilings"}, {{"a.json", fc_report}});
        add("flag_predict_to_implausible_ceilings", {"predict", "--from", "{dir}/a.json", "--to", "{dir}/b.json"}, 1,
            {"b.json", "has ceilings no device has"},
            {{"a.json", fc_report},
             {"b.json", R"({"schema": "ridgeline.ceilings/2", "backend": "cpu", "fingerprint": "f", "peak_gflops":)"
                        R"( {"fp32": -5}, "bandwidth_gbs": 10, "dispatch_overhead_ms": 0.001})"}});
        add("flag_predict_from_a_prediction", {"predict", "--from", "{dir}/p.json", "--to", "h100"}, 1,
            {"p.json", "is a prediction"}, {{"p.json", R"({"schema": "ridgeline.prediction/1", "model": "m", "layers": []})"}});
        add("flag_predict_nothing_timed", {"predict", "--from", "{dir}/a.json", "--to", "h100"}, 1,
            {"can be predicted", "fc: no time on the source (no kernel)"}, {{"a.json", untimed}});
        add("flag_predict_report_of_another_model", {"predict", "--model", "resnet18", "--from", "{dir}/a.json", "--to", "h100"},
            1, {"a.json\" profiles zoo:m, not zoo:resnet18"}, {{"a.json", fc_report}});
        // the same built-in model at another input: the counts differ
        add("flag_predict_report_of_another_input",
            {"predict", "--layer", "linear:in_features=10,out_features=100", "--input", "2x10", "--from", "{dir}/a.json",
             "--to", "h100"},
            1, {"layer \"linear\" has 2000 flops in", "but 4200 in layer:linear"},
            {{"a.json", R"({"schema": "ridgeline.profile/2", "model": "layer", "source": "layer:linear:in_features=10,out_features=100",)"
                        R"( "layers": [{"name": "linear", "op": "linear", "flops": 2000, "bytes": 100, "time": {"median_ms": 0.001,)"
                        R"( "ci95_low_ms": 0.0009, "ci95_high_ms": 0.0011}}]})"}});
        add("flag_predict_flops_beyond_int64", {"predict", "--from", "{dir}/a.json", "--to", "h100"}, 1,
            {"a.json", "$.layers[0].flops", "a count"},
            {{"a.json", R"({"schema": "ridgeline.profile/2", "model": "m", "layers": [{"name": "fc", "flops": 1e308}]})"}});
        add("flag_predict_end_to_end_negative", {"predict", "--from", "{dir}/a.json", "--to", "h100"}, 1,
            {"a.json", "$.end_to_end.time.median_ms", "a positive number"},
            {{"a.json", R"({"schema": "ridgeline.profile/2", "model": "m", "layers": [], "end_to_end": {"time":)"
                        R"( {"median_ms": -3}}})"}});
        add("flag_predict_source_not_a_string", {"predict", "--from", "{dir}/a.json", "--to", "h100"}, 1,
            {"a.json", "$.source", "a string"},
            {{"a.json", R"({"schema": "ridgeline.profile/2", "model": "m", "source": 5, "layers": []})"}});
        add("flag_predict_ceilings_schema_unknown", {"predict", "--from", "{dir}/a.json", "--to", "{dir}/b.json"}, 1,
            {"b.json", "ridgeline.ceilings/9", "does not know"},
            {{"a.json", fc_report}, {"b.json", R"({"schema": "ridgeline.ceilings/9"})"}});
        add("flag_predict_cache_unknown", {"predict", "--from", "{dir}/a.json", "--to", "h100", "--cache", "warm"}, 2,
            {"--cache"}, {{"a.json", fc_report}});
    }
    add("flag_sweep_batch_list_bad", {"sweep", "--layer", ok_layer, "--input", "1x4", "--batch", "1,x,8"}, 2,
        {"--batch", "\"x\" is not a size from 1 to 2^40"});
    add("flag_sweep_batch_list_empty", {"sweep", "--layer", ok_layer, "--input", "1x4", "--batch", ","}, 2, {"--batch"});
    add("flag_ceilings_device_unknown", {"ceilings", "--device", "abacus"}, 2, {"unknown device \"abacus\""});
    add("flag_models_format_unknown", {"models", "--format", "yaml"}, 2, {"--format"});
}

void shapes() {
    // a malformed --input, or one the model cannot take, is a usage mistake (exit 2); one that breaks a layer's rule
    // is the model's (exit 1)
    const std::string relu = "relu";
    layer("shape_zero_dimension", relu, {"1x0x4"}, {"invalid shape \"1x0x4\"", "dimension 1 is 0", ">= 1"}, 2);
    layer("shape_negative_dimension", relu, {"1x-3x4"}, {"dimension 1 is -3"}, 2);
    layer("shape_empty_dimension", relu, {"1xx4"}, {"dimension 1 is empty"}, 2);
    layer("shape_trailing_x", relu, {"1x4x"}, {"dimension 2 is empty"}, 2);
    layer("shape_fraction", relu, {"1x3.5x4"}, {"dimension 1", "is not an integer"}, 2);
    layer("shape_words", relu, {"axb"}, {"invalid shape \"axb\"", "not an integer"}, 2);
    layer("shape_junk_after", relu, {"1x3x224x224px"}, {"dimension 3", "not an integer"}, 2);
    layer("shape_too_big_for_int64", relu, {"99999999999999999999x1"}, {"dimension 0", "does not fit in int64"}, 2);
    // an --input too large to count: a count error (exit 1), as in a model file
    layer("shape_product_overflows", relu, {"4294967296x4294967296"}, {"4294967296x4294967296", "does not fit in int64"}, 1);
    layer("shape_product_overflows_late", relu, {"65536x65536x65536x65536"}, {"does not fit in int64"}, 1);
    layer("shape_blank", relu, {" "}, {"invalid shape", "empty"}, 2);
    add("shape_model_wrong_rank", {"summary", "--model", "resnet18", "--input", "1x3x224"}, 2,
        {"model \"resnet18\"", "input 1x3x224 has rank 3, expected NCHW"});
    add("shape_model_wrong_channels", {"summary", "--model", "resnet18", "--input", "1x1x224x224"}, 1,
        {"conv2d \"conv1\"", "input has 1 channels", "in_channels is 3"});
    add("shape_model_image_too_small", {"summary", "--model", "alexnet", "--input", "1x3x8x8"}, 1,
        {"larger than the padded input"});
    add("shape_sequence_too_long", {"summary", "--model", "bert_base", "--input", "1x100000"}, 2,
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
    // a required key missing beside one spelled close to it: the misspelling is named, with the guess
    layer("conv_kernel_misspelt", "conv2d:in_channels=3,out_channels=8,kernel=3", {"1x3x8x8"},
          {"conv2d: unknown attribute \"kernel\" (did you mean \"kernel_size\"?)"});
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
          {"eps is 1e400, out of the range of a double"});
    layer("layer_norm_shape_mismatch", "layer_norm:normalized_shape=8", {"2x4"}, {"layer_norm", "normalized_shape"});
    layer("layer_norm_eps_word", "layer_norm:normalized_shape=4,eps=small", {"2x4"}, {"eps \"small\" is not a decimal number"});
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
    add("layer_whitespace_only", {"summary", "--layer", "   ", "--input", "2x3"}, 2, {"empty layer string"});
}

}  // namespace ridgeline::test::catalogue
