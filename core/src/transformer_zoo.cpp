// Well-known transformer configurations (transformer.hpp): the values of each model's public config.json on the
// Hugging Face Hub (the repository named in `source`), or of the paper that defines it. Their parameter totals equal
// Hugging Face's (tests/core/transformer_test.cpp derives each one).
#include <algorithm>

#include "ridgeline/core/transformer.hpp"

namespace ridgeline::core {

namespace {

using i64 = std::int64_t;
using tf = transformer_family;

/// What every family sets alike: the sizes, the heads (head_dim = hidden / heads, as each config class derives it
/// when the key is absent) and the source.
transformer_config sized(tf family, const std::string& name, i64 vocab, i64 hidden, i64 layers, i64 heads, i64 kv_heads,
                         i64 ffn, i64 positions, const std::string& source) {
    transformer_config c;
    c.family = family;
    c.name = name;
    c.vocab_size = vocab;
    c.hidden_size = hidden;
    c.num_layers = layers;
    c.num_heads = heads;
    c.num_kv_heads = kv_heads;
    c.head_dim = hidden / heads;
    c.intermediate_size = ffn;
    c.max_position_embeddings = positions;
    c.source = source;
    return c;
}

transformer_config bert(const std::string& name, i64 hidden, i64 layers, i64 heads, const std::string& source) {
    transformer_config c = sized(tf::bert, name, 30522, hidden, layers, heads, heads, 4 * hidden, 512, source);
    c.hidden_act = "gelu";
    c.norm_eps = 1e-12;
    c.pre_norm = false;
    c.tie_word_embeddings = false;
    return c;
}

transformer_config gpt2(const std::string& name, i64 hidden, i64 layers, i64 heads, i64 positions,
                        const std::string& source) {
    // n_inner: null, so 4 x n_embd
    transformer_config c = sized(tf::gpt2, name, 50257, hidden, layers, heads, heads, 4 * hidden, positions, source);
    c.hidden_act = "gelu_new";
    c.norm_eps = 1e-5;
    return c;
}

transformer_config opt(const std::string& name, i64 hidden, i64 layers, i64 heads, i64 ffn, i64 wep, bool pre_norm,
                       const std::string& source) {
    transformer_config c = sized(tf::opt, name, 50272, hidden, layers, heads, heads, ffn, 2048, source);
    c.word_embed_proj_dim = wep;
    c.pre_norm = pre_norm;
    c.hidden_act = "relu";
    c.norm_eps = 1e-5;
    return c;
}

transformer_config llama(const std::string& name, tf family, i64 vocab, i64 hidden, i64 ffn, i64 layers, i64 heads,
                         i64 kv_heads, i64 positions, double eps, double theta, bool tied, const std::string& source) {
    transformer_config c = sized(family, name, vocab, hidden, layers, heads, kv_heads, ffn, positions, source);
    c.norm_eps = eps;
    c.rope.theta = theta;
    c.tie_word_embeddings = tied;
    c.hidden_act = "silu";
    c.qkv_bias = c.o_bias = c.mlp_bias = false;
    return c;
}

std::vector<named_transformer> make_all() {
    std::vector<named_transformer> all;
    auto add = [&](const std::string& description, transformer_config c, i64 seq) {
        const std::string name = c.name;
        all.push_back({name, description, std::move(c), seq});
    };
    add("BERT-base encoder with pooler (BertModel)", bert("bert-base", 768, 12, 12, "google-bert/bert-base-uncased"), 128);
    add("BERT-large encoder with pooler (BertModel)", bert("bert-large", 1024, 24, 16, "google-bert/bert-large-uncased"),
        128);
    add("GPT-2 small, LM head tied", gpt2("gpt2", 768, 12, 12, 1024, "openai-community/gpt2"), 1024);
    add("GPT-2 medium, LM head tied", gpt2("gpt2-medium", 1024, 24, 16, 1024, "openai-community/gpt2-medium"), 1024);
    add("GPT-2 large, LM head tied", gpt2("gpt2-large", 1280, 36, 20, 1024, "openai-community/gpt2-large"), 1024);
    add("GPT-2 XL, LM head tied", gpt2("gpt2-xl", 1600, 48, 25, 1024, "openai-community/gpt2-xl"), 1024);
    // the GPT-3 paper (Brown et al. 2020, arXiv 2005.14165) table 2.1: GPT-2's architecture, context 2048. Its XL row
    // gives 24 heads of 128, which do not make its d_model of 2048: 16 heads of d_head 128 do.
    add("GPT-3 XL (1.3B), GPT-2 architecture",
        gpt2("gpt3-xl", 2048, 24, 16, 2048, "GPT-3 paper, table 2.1 (n_heads 16 = d_model / d_head)"), 2048);
    add("GPT-3 2.7B, GPT-2 architecture", gpt2("gpt3-2.7b", 2560, 32, 32, 2048, "GPT-3 paper, table 2.1"), 2048);
    add("OPT-125M (OPTForCausalLM)", opt("opt-125m", 768, 12, 12, 3072, 768, true, "facebook/opt-125m"), 2048);
    add("OPT-350M: post-norm, 512-wide embeddings projected", opt("opt-350m", 1024, 24, 16, 4096, 512, false,
                                                                   "facebook/opt-350m"), 2048);
    add("OPT-1.3B (OPTForCausalLM)", opt("opt-1.3b", 2048, 24, 32, 8192, 2048, true, "facebook/opt-1.3b"), 2048);
    add("Llama 2 7B (LlamaForCausalLM)", llama("llama-2-7b", tf::llama, 32000, 4096, 11008, 32, 32, 32, 4096, 1e-5,
                                               10000, false, "meta-llama/Llama-2-7b-hf"), 2048);
    add("Llama 3 8B, GQA 32/8 (LlamaForCausalLM)", llama("llama-3-8b", tf::llama, 128256, 4096, 14336, 32, 32, 8, 8192,
                                                         1e-5, 500000, false, "meta-llama/Meta-Llama-3-8B"), 2048);
    {
        transformer_config c = llama("llama-3.2-1b", tf::llama, 128256, 2048, 8192, 16, 32, 8, 131072, 1e-5, 500000,
                                     true, "meta-llama/Llama-3.2-1B");
        c.rope.scaling = rotary::scaling_t::llama3;
        c.rope.factor = 32;
        c.rope.low_freq_factor = 1;
        c.rope.high_freq_factor = 4;
        c.rope.original_max_position_embeddings = 8192;
        add("Llama 3.2 1B, llama3 RoPE scaling, LM head tied", c, 2048);
    }
    add("TinyLlama 1.1B, GQA 32/4", llama("tinyllama-1.1b", tf::llama, 32000, 2048, 5632, 22, 32, 4, 2048, 1e-5, 10000,
                                          false, "TinyLlama/TinyLlama-1.1B-Chat-v1.0"), 2048);
    {
        transformer_config c = llama("qwen2.5-0.5b", tf::qwen2, 151936, 896, 4864, 24, 14, 2, 32768, 1e-6, 1000000,
                                     true, "Qwen/Qwen2.5-0.5B");
        c.qkv_bias = true;  // Qwen2Attention: q, k, v with bias, o_proj without
        c.max_window_layers = 24;
        add("Qwen2.5 0.5B, q/k/v bias, LM head tied", c, 2048);
    }
    {
        transformer_config c = llama("mistral-7b", tf::mistral, 32000, 4096, 14336, 32, 32, 8, 32768, 1e-5, 10000, false,
                                     "mistralai/Mistral-7B-v0.1");
        c.sliding_window = 4096;
        add("Mistral 7B v0.1, sliding window 4096", c, 2048);
    }
    return all;
}

}  // namespace

const std::vector<named_transformer>& named_transformers() {
    static const std::vector<named_transformer> all = make_all();
    return all;
}

const named_transformer* find_named_transformer(std::string_view name) {
    const auto& all = named_transformers();
    const auto it = std::find_if(all.begin(), all.end(), [&](const named_transformer& n) { return n.name == name; });
    return it == all.end() ? nullptr : &*it;
}

}  // namespace ridgeline::core
