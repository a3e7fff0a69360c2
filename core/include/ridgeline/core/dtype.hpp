#pragma once
// Data types that ridgeline counts bytes for and backends compute in.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ridgeline::core {

/// Element type of activations, weights and outputs.
/// tf32 is stored as 32-bit floats and computed with 10-bit mantissas on tensor cores (NVIDIA).
enum class dtype : std::uint8_t { fp32, tf32, fp16, bf16 };

/// Bytes one element occupies in memory: 4 for fp32/tf32, 2 for fp16/bf16.
std::int64_t size_bytes(dtype t);

/// Canonical lower-case name: "fp32", "tf32", "fp16", "bf16".
std::string_view to_string(dtype t);

/// Parses a canonical name (also accepts "float32", "float16", "bfloat16", "half", "float").
/// Throws core::parse_error naming the text and the accepted names.
dtype parse_dtype(std::string_view text);

/// All data types in display order.
const std::vector<dtype>& all_dtypes();

/// Bytes of one index element (Embedding inputs are int64 token ids, as in PyTorch).
inline constexpr std::int64_t index_size_bytes = 8;

}  // namespace ridgeline::core
