#pragma once
// Built-in models, by torchvision's (and Hugging Face's) names and with their layer names.
// Totals at batch 1 equal torchvision's published num_params and GMACs (tests/core/zoo_test.cpp).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ridgeline/core/model.hpp"
#include "ridgeline/core/transformer.hpp"

namespace ridgeline::core {

struct zoo_entry {
    std::string name;
    std::string description;
    shape default_input;  // NCHW images, or batch x sequence length of token ids
    bool token_input = false;
    std::string source;        // where its architecture comes from (torchvision, a Hub repository, a paper)
    bool transformer = false;  // built from a transformer_config: takes --phase, --seq, --kv-len
};

/// What to build: the input shape or batch (every model), and for a transformer the phase, the prefill length and
/// the cached tokens of a decode step.
struct zoo_request {
    std::optional<shape> input;           // the full input shape (batch included)
    std::optional<std::int64_t> batch;    // replaces dimension 0 of the default input
    transformer_phase phase = transformer_phase::prefill;
    bool phase_given = false;             // --phase was given (an error for a CNN)
    std::optional<std::int64_t> seq;      // prefill tokens per sequence
    std::optional<std::int64_t> kv_len;   // decode: cached tokens per sequence
};

/// Every built-in model, in display order.
const std::vector<zoo_entry>& zoo_models();

/// Builds a zoo model. `input` is the full input shape (batch included: 8x3x160x160, or 1x128 tokens);
/// `batch` replaces dimension 0 of the default input. Both given and disagreeing is an error.
/// Throws core::error for an unknown name (listing the known ones) or an input the model cannot take.
model build_zoo_model(std::string_view name, std::optional<shape> input = std::nullopt,
                      std::optional<std::int64_t> batch = std::nullopt);
/// The same with a transformer's phase; throws core::error for a transformer option given to a CNN, a decode step of
/// an encoder or without --kv-len, an --input that disagrees with --batch or --seq.
model build_zoo_model(std::string_view name, const zoo_request& request);

/// The transformer_run a request asks of a transformer whose default prefill is `default_seq` tokens (shared by the
/// built-ins and --hf-config). Throws core::error as build_zoo_model.
transformer_run transformer_run_of(const std::string& model_name, const zoo_request& request, std::int64_t default_seq);

}  // namespace ridgeline::core
