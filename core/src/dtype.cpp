#include "ridgeline/core/dtype.hpp"

#include "ridgeline/core/error.hpp"

namespace ridgeline::core {

std::int64_t size_bytes(dtype t) {
    switch (t) {
        case dtype::fp32:
        case dtype::tf32: return 4;
        case dtype::fp16:
        case dtype::bf16: return 2;
    }
    return 4;
}

std::string_view to_string(dtype t) {
    switch (t) {
        case dtype::fp32: return "fp32";
        case dtype::tf32: return "tf32";
        case dtype::fp16: return "fp16";
        case dtype::bf16: return "bf16";
    }
    return "?";
}

dtype parse_dtype(std::string_view text) {
    if (text == "fp32" || text == "float32" || text == "float" || text == "f32") return dtype::fp32;
    if (text == "tf32") return dtype::tf32;
    if (text == "fp16" || text == "float16" || text == "half" || text == "f16") return dtype::fp16;
    if (text == "bf16" || text == "bfloat16") return dtype::bf16;
    throw parse_error("unknown dtype \"" + std::string(text) + "\": expected one of fp32, tf32, fp16, bf16");
}

const std::vector<dtype>& all_dtypes() {
    static const std::vector<dtype> all{dtype::fp32, dtype::tf32, dtype::fp16, dtype::bf16};
    return all;
}

}  // namespace ridgeline::core
