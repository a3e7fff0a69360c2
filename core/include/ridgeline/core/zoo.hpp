#pragma once
// Built-in models, by torchvision's (and Hugging Face's) names and with their layer names.
// Totals at batch 1 equal torchvision's published num_params and GMACs (tests/core/zoo_test.cpp).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ridgeline/core/model.hpp"

namespace ridgeline::core {

struct zoo_entry {
    std::string name;
    std::string description;
    shape default_input;  // NCHW images, or batch x sequence length of token ids
    bool token_input = false;
};

/// Every built-in model, in display order.
const std::vector<zoo_entry>& zoo_models();

/// Builds a zoo model. `input` is the full input shape (batch included: 8x3x160x160, or 1x128 tokens);
/// `batch` replaces dimension 0 of the default input. Both given and disagreeing is an error.
/// Throws core::error for an unknown name (listing the known ones) or an input the model cannot take.
model build_zoo_model(std::string_view name, std::optional<shape> input = std::nullopt,
                      std::optional<std::int64_t> batch = std::nullopt);

}  // namespace ridgeline::core
