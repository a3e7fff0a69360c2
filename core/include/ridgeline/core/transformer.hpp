#pragma once
// Transformers from a configuration: the model families of Hugging Face's transformers library (bert, gpt2, opt,
// llama, mistral, qwen2), built as its modelling code builds them (modeling_bert.py, modeling_gpt2.py,
// modeling_opt.py, modeling_llama.py, modeling_mistral.py, modeling_qwen2.py), for a prefill of `seq` tokens or one
// decode step over a KV cache of `kv_len` tokens. Layer names are Hugging Face's module paths
// ("model.layers.3.self_attn.q_proj"); the layers Hugging Face computes inside a module get a name under it
// ("model.layers.3.self_attn.q_rope", ".attention", ".k_cache").
//
// Attention is one `attention` layer (SDPA); in a decode step each layer's keys and values go through a `kv_cache`
// that holds the earlier tokens. The LM head of a causal LM reads every position of a prefill (model.forward's
// logits, what FLOP counters run) and the new token of a decode step. io/hf_config.hpp reads a config.json into a
// transformer_config; named_transformers() holds well-known configurations with their sources.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ridgeline/core/model.hpp"

namespace ridgeline::core {

enum class transformer_family { bert, gpt2, opt, llama, mistral, qwen2 };
std::string_view to_string(transformer_family f);

/// The most blocks a config may have (derived: 30x the largest published decoder's ~130; every block is built).
inline constexpr std::int64_t max_transformer_layers = 4096;
/// The most positions a config may declare (2^40, as --seq and --kv-len): OPT's table adds 2 rows to it, and a
/// position past it is beyond any sequence a pass can have.
inline constexpr std::int64_t max_transformer_positions = std::int64_t{1} << 40;

/// One architecture, in Hugging Face's terms (config.json's keys named at each field).
struct transformer_config {
    transformer_family family = transformer_family::llama;
    std::string name;                        // the model's name in reports
    std::int64_t vocab_size = 0;             // vocab_size
    std::int64_t hidden_size = 0;            // hidden_size (n_embd)
    std::int64_t num_layers = 0;             // num_hidden_layers (n_layer)
    std::int64_t num_heads = 0;              // num_attention_heads (n_head)
    std::int64_t num_kv_heads = 0;           // num_key_value_heads (GQA/MQA; = num_heads without it)
    std::int64_t head_dim = 0;               // head_dim (hidden_size / num_heads without it)
    std::int64_t intermediate_size = 0;      // intermediate_size (n_inner; ffn_dim)
    std::int64_t max_position_embeddings = 0;  // max_position_embeddings (n_positions)
    std::int64_t type_vocab_size = 2;        // bert: token type embeddings
    std::string hidden_act;                  // gelu (erf), gelu_new / gelu_pytorch_tanh (tanh), relu, silu
    double norm_eps = 1e-5;                  // layer_norm_eps / layer_norm_epsilon / rms_norm_eps
    bool tie_word_embeddings = true;         // the LM head shares the token embedding
    bool qkv_bias = true;                    // q, k, v projections have a bias (llama: attention_bias; qwen2: true)
    bool o_bias = true;                      // the output projection has a bias (qwen2: false)
    bool mlp_bias = true;                    // the MLP's projections have biases (llama: mlp_bias)
    bool pre_norm = true;                    // opt: do_layer_norm_before (bert is post-norm, gpt2 and llama pre-norm)
    bool final_norm = true;                  // a norm after the last layer (opt: not _remove_final_layer_norm)
    bool norm_affine = true;                 // opt: layer_norm_elementwise_affine
    std::int64_t word_embed_proj_dim = 0;    // opt: embeddings of this width, projected in and out (0: hidden_size)
    bool scale_attn_weights = true;          // gpt2: scores / sqrt(head_dim)
    bool scale_attn_by_inverse_layer_idx = false;  // gpt2: and / (layer index + 1)
    rotary rope;                             // llama, mistral, qwen2: rope_theta and rope_scaling (offset per phase)
    std::int64_t sliding_window = 0;         // mistral: sliding_window; qwen2: with use_sliding_window
    std::int64_t max_window_layers = 0;      // qwen2: layers from this index on use the window
    bool head = true;                        // architectures: the LM head (...ForCausalLM, GPT2LMHeadModel) or BERT's
                                             // pooler (BertModel); false: the base model without it (LlamaModel, ...)
    std::string source;                      // where the numbers come from (a config's name or file)

    /// Whether the model is a causal LM (an LM head, a decode phase): every family but bert.
    [[nodiscard]] bool causal() const { return family != transformer_family::bert; }
    /// Throws core::error naming the config field for an architecture that cannot be built (hidden_size not a
    /// multiple of num_attention_heads without head_dim, query heads not a multiple of kv heads, ...).
    void validate() const;
};

/// The model of one forward pass. Throws core::error for a run the config cannot take (a decode step of an
/// encoder, positions beyond a learned position table), naming the value and the limit.
model build_transformer(const transformer_config& c, const transformer_run& r);

/// What a user should know of a run the config can take but was not trained for: positions past
/// max_position_embeddings of a rotary model (its positions extrapolate; the cost is counted as asked). Empty when
/// there is nothing to say.
std::vector<std::string> pass_notes(const transformer_config& c, const transformer_run& r);

/// A well-known configuration (`ridgeline models`): its config.json values written out, with their source.
struct named_transformer {
    std::string name;
    std::string description;
    transformer_config config;
    std::int64_t default_seq = 0;  // the prefill length when none is given
};
const std::vector<named_transformer>& named_transformers();
/// nullptr when `name` is not one of them.
const named_transformer* find_named_transformer(std::string_view name);

}  // namespace ridgeline::core
