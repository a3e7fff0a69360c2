// Malformed layers and shapes: each gets one clear line naming the layer and the rule.
#include <gtest/gtest.h>

#include "helpers.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/core/file.hpp"
#include "ridgeline/core/suggest.hpp"

using namespace ridgeline::core;
using ridgeline::test::one_layer;

namespace {

struct bad_case {
    const char* layer;                  // layer string (or "" for a shape-only case)
    std::vector<const char*> inputs;    // input shape strings
    const char* message;                // the exact error
};

std::string error_text(const bad_case& c) {
    try {
        std::vector<shape> in;
        for (const char* s : c.inputs) in.push_back(parse_shape(s));
        if (*c.layer) {
            // name the layer as a model would
            (void)analyze(single_layer_model(parse_op(c.layer, "net.0"), in, "net.0", "m"), dtype::fp32);
        }
    } catch (const error& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST(Errors, MalformedLayersAndShapes) {
    const bad_case cases[] = {
        // attributes
        {"conv2d:in_channels=64,out_channels=64,kernel_size=3,groups=3", {"1x64x8x8"},
         "conv2d \"net.0\": in_channels 64 is not divisible by groups 3"},
        {"conv2d:in_channels=6,out_channels=8,kernel_size=3,groups=3", {"1x6x8x8"},
         "conv2d \"net.0\": out_channels 8 is not divisible by groups 3"},
        {"conv2d:in_channels=0,out_channels=8,kernel_size=3", {"1x1x8x8"},
         "conv2d \"net.0\": in_channels must be >= 1, got 0"},
        {"conv2d:in_channels=3,out_channels=8,kernel_size=-3", {"1x3x8x8"},
         "conv2d \"net.0\": kernel_size must be >= 1, got -3"},
        {"conv2d:in_channels=3,out_channels=8,kernel_size=3,stride=0", {"1x3x8x8"},
         "conv2d \"net.0\": stride must be >= 1, got 0"},
        {"conv2d:in_channels=3,out_channels=8", {"1x3x8x8"}, "conv2d \"net.0\": kernel_size is required"},
        {"conv2d:in_channels=3,out_channels=8,kernel_size=3,padding=-1", {"1x3x8x8"},
         "conv2d \"net.0\": padding \"-1\" is negative, padding must be >= 0"},
        {"conv2d:in_channels=3,out_channels=8,kernel_size=3,padding=full", {"1x3x8x8"},
         "conv2d \"net.0\": padding \"full\" is not an integer, HxW, TxLxBxR, \"same\" or \"valid\""},
        {"conv2d:in_channels=3,out_channels=8,kernel_size=3,stride=2,padding=same", {"1x3x8x8"},
         "conv2d \"net.0\": padding \"same\" needs stride 1 (as in PyTorch), got stride 2"},
        {"conv2d:in_channels=3,out_channels=8,kernel_size=3x3x3", {"1x3x8x8"},
         "conv2d \"net.0\": kernel_size \"3x3x3\" has 3 values, expected one integer or an HxW pair"},
        {"conv2d:in_channels=3,out_channels=8,kernel_size=3,bias=maybe", {"1x3x8x8"},
         "conv2d \"net.0\": bias \"maybe\" is not a boolean (true or false)"},
        {"conv2d:in_channels=3,out_channels=8,kernel_size=3,kernel=3", {"1x3x8x8"},
         "conv2d \"net.0\": unknown attribute \"kernel\" (did you mean \"kernel_size\"?; known: in_channels, "
         "out_channels, kernel_size, stride, padding, dilation, groups, bias)"},
        // a required attribute misspelt: the misspelling named, not "kernel_size is required"
        {"conv2d:in_channels=3,out_channels=8,kernal_size=3", {"1x3x8x8"},
         "conv2d \"net.0\": unknown attribute \"kernal_size\" (did you mean \"kernel_size\"?)"},
        {"conv2d:in_channels=3,in_channels=4,out_channels=8,kernel_size=3", {"1x3x8x8"},
         "conv2d \"net.0\": in_channels is given twice"},
        {"conv2d:in_channels=3.5,out_channels=8,kernel_size=3", {"1x3x8x8"},
         "conv2d \"net.0\": in_channels \"3.5\" is not an integer"},
        {"conv2d:in_channels=3,out_channels=8,kernel_size=3,stride", {"1x3x8x8"},
         "conv2d \"net.0\": attribute \"stride\" has no '=' (expected key=value)"},
        {"conv2d:in_channels=3,,out_channels=8", {"1x3x8x8"},
         "conv2d \"net.0\": empty attribute in \"conv2d:in_channels=3,,out_channels=8\" (attributes are key=value "
         "separated by ',')"},
        {"conv3d:in_channels=3", {"1x3x8x8"},
         "layer \"net.0\": unknown op \"conv3d\" (known ops: linear, matmul, embedding, conv2d, batch_norm2d, "
         "layer_norm, relu, relu6, gelu, tanh, sigmoid, scale, softmax, add, mul, max_pool2d, avg_pool2d, "
         "adaptive_avg_pool2d, concat, flatten, reshape, transpose, slice, hardswish, hardsigmoid, silu, parameter, erf, "
         "sqrt, exp, neg, pow, sub, div, mean, sum, amax, pad, interpolate, where, expand, rms_norm, rotary, attention, kv_cache)"},
        {"relu:inplace=true", {"1x3"}, "relu \"net.0\": unknown attribute \"inplace\" (this op takes no attributes)"},
        {"sum", {"1x3"},
         "sum \"net.0\": reduces every dimension of 1x3 to a scalar; ridgeline's tensors have rank >= 1 (use keepdim=true)"},
        {"mean:dim=1x-1", {"2x3"}, "mean \"net.0\": dim -1 is given twice"},
        {"gelu:approximate=fast", {"1x3"}, "gelu \"net.0\": approximate \"fast\" is not one of: none, tanh"},
        {"scale:factor=nan", {"1x3"}, "scale \"net.0\": factor is nan, it must be a finite number"},
        {"batch_norm2d:num_features=4,eps=inf", {"1x4x2x2"}, "batch_norm2d \"net.0\": eps is inf, it must be a finite number"},
        {"max_pool2d:kernel_size=2,padding=2", {"1x1x8x8"},
         "max_pool2d \"net.0\": padding 2 is more than half the kernel_size 2 (PyTorch's rule for pooling)"},
        {"reshape:shape=-1x-1", {"4x6"}, "reshape \"net.0\": shape has more than one -1 dimension"},
        {"slice:dim=1,start=0,end=4,step=0", {"4x6"}, "slice \"net.0\": step must be >= 1, got 0"},
        // shapes against the layer
        {"conv2d:in_channels=16,out_channels=8,kernel_size=3", {"1x3x8x8"},
         "conv2d \"net.0\": input has 3 channels (dimension 1 of 1x3x8x8) but in_channels is 16"},
        {"conv2d:in_channels=3,out_channels=8,kernel_size=3", {"3x8x8"},
         "conv2d \"net.0\": expects a 4-D NCHW input, got 3x8x8 (rank 3)"},
        {"conv2d:in_channels=3,out_channels=8,kernel_size=7", {"1x3x5x5"},
         "conv2d \"net.0\": kernel height 7 is larger than the padded input height 5 (input 5 + padding 0 + 0)"},
        {"conv2d:in_channels=3,out_channels=8,kernel_size=3,dilation=3,padding=1", {"1x3x4x4"},
         "conv2d \"net.0\": kernel height 3 (dilated extent 7) is larger than the padded input height 6 (input 4 + "
         "padding 1 + 1)"},
        {"linear:in_features=1024,out_features=10", {"1x512"},
         "linear \"net.0\": input has 512 features (last dimension of 1x512) but in_features is 1024"},
        {"batch_norm2d:num_features=8", {"1x4x2x2"},
         "batch_norm2d \"net.0\": input has 4 channels (dimension 1 of 1x4x2x2) but num_features is 8"},
        {"max_pool2d:kernel_size=3", {"1x1x2x2"},
         "max_pool2d \"net.0\": kernel height 3 is larger than the padded input height 2"},
        {"add", {"1x3", "1x4"}, "add \"net.0\": shapes 1x3 and 1x4 do not broadcast (dimension -1: 3 vs 4)"},
        {"matmul", {"2x3x4", "2x5x6"},
         "matmul \"net.0\": inner dimensions differ: 2x3x4 has K=4 but 2x5x6 has K=5"},
        {"concat", {"1x2x4x4", "1x2x5x4"},
         "concat \"net.0\": input 2 1x2x5x4 differs from input 1 1x2x4x4 in dimension 2 (only dimension 1 may differ)"},
        {"reshape:shape=0x5", {"4x6"}, "reshape \"net.0\": cannot reshape 4x6 (24 elements) to 4x5 (20 elements)"},
        {"softmax:dim=3", {"4x6"}, "softmax \"net.0\": dim 3 is out of range for rank 2"},
        {"slice:dim=1,start=6", {"4x6"}, "slice \"net.0\": start 6 to the end selects nothing of dimension 1 (size 6)"},
        {"embedding:num_embeddings=169,embedding_dim=3,indices=49x0", {}, "embedding \"net.0\": indices has dimension 0: every dimension must be >= 1"},
        {"embedding:num_embeddings=169,embedding_dim=3,indices=49", {"4x6"}, "embedding \"net.0\": holds its token ids (indices=49) and takes no input, got 1"},
        {"pad:pad=1x1x1", {"4x6"}, "pad \"net.0\": pad needs (before, after) pairs from the last dimension backwards, got 3 value(s)"},
        {"pad:pad=1x-1", {"4x6"}, "pad \"net.0\": pad has -1: every amount must be >= 0 (a negative pad crops; use slice)"},
        {"pad:pad=1x1,mode=circular", {"4x6"}, "pad \"net.0\": mode \"circular\" is not one of: constant, reflect, replicate"},
        {"pad:pad=1x1,mode=reflect,value=2", {"4x6"}, "pad \"net.0\": value is only used by mode=constant"},
        {"pad:pad=1x1x1x1x1x1", {"4x6"}, "pad \"net.0\": pad has 3 (before, after) pairs but the input 4x6 (rank 2) has only 2 dimensions"},
        {"pad:pad=6x0,mode=reflect", {"4x6"}, "pad \"net.0\": reflect padding 6, 0 of dimension 1 must be less than its size 6"},
        // numbers are decimal, as PyTorch's arguments are written: no hex, no sign after the '+'
        {"pad:pad=1x1,value=0x10", {"4x6"}, "pad \"net.0\": value \"0x10\" is not a decimal number"},
        {"pad:pad=1x1,value=+-1", {"4x6"}, "pad \"net.0\": value \"+-1\" is not a decimal number"},
        {"pad:pad=1x1,value=1e400", {"4x6"}, "pad \"net.0\": value is 1e400, out of the range of a double (beyond 1.8e308, or too small to tell from 0)"},
        {"pad:pad=+-1x1", {"4x6"}, "pad \"net.0\": pad \"+-1x1\" is not a list of integers separated by 'x'"},
        {"layer_norm:normalized_shape=6,eps=nan", {"4x6"}, "layer_norm \"net.0\": eps is nan, it must be a finite number"},
        {"layer_norm:normalized_shape=6,eps=-1e-10", {"4x6"}, "layer_norm \"net.0\": eps is -1e-10, it must be >= 0"},
        {"pad:pad=1x1,value=1e39", {"4x6"}, "pad \"net.0\": value 1e+39 is not finite in fp32 (its largest value is 3.40282e+38)"},
        {"interpolate:size=0x4", {"1x1x2x2"}, "interpolate \"net.0\": size must be >= 1, got 0x4"},
        {"interpolate:size=4,align_corners=true", {"1x1x2x2"}, "interpolate \"net.0\": align_corners can only be set with mode=bilinear (as in PyTorch)"},
        {"interpolate:size=4,mode=bicubic", {"1x1x2x2"}, "interpolate \"net.0\": mode \"bicubic\" is not one of: nearest, bilinear"},
        {"where", {"2x3", "4x3", "2x3"}, "where \"net.0\": shapes 2x3 and 4x3 do not broadcast (dimension -2: 2 vs 4)"},
        {"expand:size=4x3", {"2x3"}, "expand \"net.0\": cannot expand 2x3 to 4x3 (dimension 0: 2 is not 1)"},
        {"expand:size=3", {"2x3"}, "expand \"net.0\": size 3 has fewer dimensions than the input 2x3 (rank 2)"},
        {"expand:size=-1x2x3", {"2x3"}, "expand \"net.0\": size -1 at new leading dimension 0 keeps nothing"},
        {"expand:size=0x3", {"1x3"}, "expand \"net.0\": size has 0: every size must be >= 1, or -1 to keep the dimension"},
        {"interpolate:size=4", {"2x2x2"}, "interpolate \"net.0\": expects a 4-D NCHW input, got 2x2x2 (rank 3)"},
        {"layer_norm:normalized_shape=5", {"4x6"},
         "layer_norm \"net.0\": normalized_shape 5 does not match the trailing dimensions of the input 4x6"},
        {"flatten:start_dim=1,end_dim=0", {"4x6"},
         "flatten \"net.0\": start_dim 1 comes after end_dim 0 for input 4x6"},
        // shape strings
        {"", {"1x0x4"}, "invalid shape \"1x0x4\": dimension 1 is 0, every dimension must be >= 1"},
        {"", {"1x-3"}, "invalid shape \"1x-3\": dimension 1 is -3, every dimension must be >= 1"},
        {"", {"1xax4"}, "invalid shape \"1xax4\": dimension 1 (\"a\") is not an integer"},
        {"", {"1xx4"}, "invalid shape \"1xx4\": dimension 1 is empty"},
        {"", {""}, "invalid shape \"\": empty, expected dimensions like 1x3x224x224"},
        {"", {"99999999999999999999x2"}, "invalid shape \"99999999999999999999x2\": dimension 0 (99999999999999999999) does not fit in int64"},
        {"", {"3037000500x3037000500x2"},
         "element count of shape 3037000500x3037000500x2: count does not fit in int64 (overflow)"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(std::string(c.layer) + " on " + (c.inputs.empty() ? "" : c.inputs[0]));
        EXPECT_EQ(error_text(c), c.message);
    }
    EXPECT_GE(std::size(cases), 20u);
}

TEST(Errors, EmptyLayerString) {
    EXPECT_THROW((void)parse_op(""), parse_error);
    EXPECT_THROW((void)parse_op(":in_features=3"), parse_error);
}

TEST(Errors, JsonLibraryTagIsDropped) {
    // nlohmann's what() starts with "[json.exception.<kind>.<id>] "; ours follows "FILE: not valid JSON: "
    EXPECT_EQ(without_json_exception_tag("[json.exception.parse_error.101] parse error at line 1, column 1: x"),
              "parse error at line 1, column 1: x");
    EXPECT_EQ(without_json_exception_tag("[json.exception.out_of_range.406] number overflow parsing '1e999'"),
              "number overflow parsing '1e999'");
    // anything else is kept whole, also a bracket that is not the library's tag
    EXPECT_EQ(without_json_exception_tag("[x] y"), "[x] y");
    EXPECT_EQ(without_json_exception_tag("[json.exception without an end"), "[json.exception without an end");
}

TEST(Errors, JsonTextsNestedTooDeepOrWithANulAreRefused) {
    auto message = [](const std::string& text) {
        try {
            check_json_text(text, "f.json", 4);
        } catch (const parse_error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    // four levels pass, the fifth bracket is refused at its offset (0-based: "[[[[" then "{" at 4)
    EXPECT_EQ(message("[[[[1]]]]"), "");
    EXPECT_EQ(message("[[[[{}]]]]"),
              "f.json: not valid JSON for ridgeline: nested deeper than 4 levels at offset 4 (no file ridgeline reads "
              "nests so deep)");
    // brackets inside strings (escaped quotes too) are text, not nesting
    EXPECT_EQ(message(R"({"a": "[[[[[[\"[[[[", "b": [1]})"), "");
    // a NUL byte would end the parse early, the rest of the file unread
    EXPECT_EQ(message(std::string("{\"a\": 1}\0{\"b\": 2}", 17)), "f.json: not valid JSON: a NUL byte at offset 8");
    // 100,000 levels (a real attack: each recursive dump or copy of it overflows the stack) with the default limit
    EXPECT_THROW(check_json_text(std::string(100000, '[') + std::string(100000, ']'), "deep.json"), parse_error);
}

TEST(Errors, ClosestNameIsSuggestedOnlyWhenClose) {
    // Levenshtein distances: kitten -> sitting is 3 (two substitutions, one insertion); case is ignored
    EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
    EXPECT_EQ(edit_distance("GPT2", "gpt2"), 0u);
    EXPECT_EQ(edit_distance("", "abc"), 3u);
    const std::vector<std::string> names{"resnet18", "resnet34", "gpt2", "gpt2-medium"};
    EXPECT_EQ(closest("resnet19", names), "resnet18");  // 1 edit; resnet34 is 2 and comes later
    EXPECT_EQ(closest("gpt-2", names), "gpt2");         // 1 deletion
    EXPECT_EQ(closest("llama", names), std::nullopt);   // nothing within 2 edits or a third of the length
    EXPECT_EQ(did_you_mean("GPT2", names), " (did you mean \"gpt2\"?)");
    EXPECT_EQ(did_you_mean("bert", names), "");
    // a name that begins exactly one candidate: 5 edits from "kernel_size", more than a third of its 11 characters,
    // but its first 6; one that begins several (and is far from each) or is under 3 characters names none
    EXPECT_EQ(closest("kernel", {"in_channels", "kernel_size", "stride"}), "kernel_size");
    EXPECT_EQ(closest("kernel", {"kernel_size", "kernel_shape"}), std::nullopt);
    EXPECT_EQ(closest("gp", {"gpt2-medium"}), std::nullopt);
    EXPECT_EQ(closest("GPT2-MED", names), "gpt2-medium");
}
