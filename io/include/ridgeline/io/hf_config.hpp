#pragma once
// A Hugging Face config.json -> core::transformer_config, for model_type bert, gpt2, opt, llama, mistral and qwen2,
// with each family's defaults as its configuration class sets them (BertConfig, GPT2Config, OPTConfig, LlamaConfig,
// MistralConfig, Qwen2Config). Every key is either read, or known not to change the architecture (dropout rates,
// token ids, initializer ranges, labels, ...); any other key is refused by name, never ignored, as is a value the
// family does not model (cross-attention, relative position embeddings, a rope_scaling type such as longrope).
//
// Errors: core::parse_error, one line that starts with the file's label and names the key:
//   llama.json: "num_key_value_heads" must be an integer >= 1, got "8"
//   llama.json: key "rope_interleaved" (model_type llama) is not one ridgeline knows: it may change the
//     architecture, so it is refused rather than ignored

#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ridgeline/core/transformer.hpp"

namespace ridgeline::io {

/// Reads and checks a config.json, or the config.json in the model folder `path` names; errors start with the file's
/// path. What the reading assumed (a head
/// built as another, the size keys taken from the class defaults) is appended to `warnings` when given.
core::transformer_config read_hf_config(const std::filesystem::path& path, std::vector<std::string>* warnings = nullptr);
core::transformer_config parse_hf_config(const nlohmann::json& doc, std::string_view label,
                                         std::string_view fallback_name, std::vector<std::string>* warnings = nullptr);

/// The prefill length when none is given: 128 for an encoder (bert_base's), else the context up to 2048 tokens.
std::int64_t default_sequence(const core::transformer_config& c);

}  // namespace ridgeline::io
