// A Hugging Face config.json -> core::transformer_config (hf_config.hpp). The defaults of each family are those of its
// configuration class in transformers (configuration_bert.py, configuration_gpt2.py, configuration_opt.py,
// configuration_llama.py, configuration_mistral.py, configuration_qwen2.py).
#include "ridgeline/io/hf_config.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "ridgeline/core/error.hpp"
#include "ridgeline/core/file.hpp"

namespace ridgeline::io {

namespace {

using nlohmann::json;
using core::transformer_family;

/// Keys that do not change what a forward pass computes or costs: training-only rates, token ids, bookkeeping.
const std::set<std::string> harmless = {
    "_name_or_path", "model_type", "_attn_implementation_autoset", "torch_dtype", "dtype", "transformers_version", "bos_token_id",
    "eos_token_id", "pad_token_id", "sep_token_id", "decoder_start_token_id", "use_cache", "initializer_range",
    "init_std", "attention_dropout", "hidden_dropout_prob", "attention_probs_dropout_prob", "hidden_dropout",
    "resid_pdrop", "embd_pdrop", "attn_pdrop", "dropout", "activation_dropout", "layerdrop", "classifier_dropout",
    "summary_type", "summary_use_proj", "summary_activation", "summary_proj_to_labels", "summary_first_dropout",
    "task_specific_params", "prefix", "id2label", "label2id", "num_labels", "problem_type", "tokenizer_class",
    "gradient_checkpointing", "output_past", "return_dict", "torchscript", "keys_to_ignore_at_inference",
    "pretraining_tp", "reorder_and_upcast_attn", "n_ctx", "is_encoder_decoder", "chunk_size_feed_forward",
    "finetuning_task", "output_attentions", "output_hidden_states", "use_return_dict", "bad_words_ids",
    "max_length", "min_length", "do_sample", "num_beams", "temperature", "top_k", "top_p", "repetition_penalty",
    "length_penalty", "no_repeat_ngram_size", "early_stopping", "num_return_sequences", "forced_bos_token_id",
    "forced_eos_token_id", "remove_invalid_values", "_attn_implementation", "attn_implementation"};

/// A value for a message: a scalar as JSON, at most 60 characters; a list or object by its size (never dump() a
/// container whole: one of 20,000 entries would make a 40 KB error line).
std::string shown(const json& v) {
    if (v.is_array()) return "a list of " + std::to_string(v.size()) + " entries";
    if (v.is_object()) return "an object of " + std::to_string(v.size()) + " keys";
    std::string d = v.dump();
    if (d.size() > 60) d = d.substr(0, 57) + "...";
    return d;
}

class reader {
public:
    reader(const json& doc, std::string_view label) : doc_(doc), label_(label) {}

    [[noreturn]] void fail(const std::string& key, const std::string& message) const {
        throw core::parse_error(core::printable(label_ + ": \"" + key + "\" " + message));
    }
    bool has(const std::string& key) {
        used_.insert(key);
        return doc_.contains(key) && !doc_[key].is_null();
    }
    /// Whether the key is in the file with the value null.
    bool present_null(const std::string& key) const { return doc_.contains(key) && doc_[key].is_null(); }
    /// has(), but a null value is refused: for flags, numbers and words Hugging Face's modelling code reads None as
    /// false (`if config.enable_bias:`) or fails later (`eps=None`), never as the class default, so taking the
    /// default would count another model silently.
    bool given(const std::string& key) {
        used_.insert(key);
        if (!doc_.contains(key)) return false;
        if (doc_[key].is_null())
            fail(key, "is null; give its value (Hugging Face's modelling code does not read null as the " +
                          (type_.empty() ? std::string("family") : type_) + " default)");
        return true;
    }
    /// An integer >= minimum; absent, the fallback; null is refused (given()).
    std::int64_t integer(const std::string& key, std::int64_t fallback, std::int64_t minimum = 1) {
        if (!given(key)) return fallback;
        const json& v = doc_[key];
        if (!v.is_number_integer()) fail(key, "must be an integer >= " + std::to_string(minimum) + ", got " + shown(v));
        const std::int64_t x = v.get<std::int64_t>();
        if (x < minimum) fail(key, "must be an integer >= " + std::to_string(minimum) + ", got " + shown(v));
        return x;
    }
    /// An integer whose config class reads null as "derive it" (head_dim, n_inner, word_embed_proj_dim,
    /// num_key_value_heads: `x if x is not None else ...`): `absent` when the key is missing, `if_null` when null.
    /// With `class_default`, an absent key is the class's default and noted in defaulted() as size() notes it.
    std::int64_t integer_or_null(const std::string& key, std::int64_t absent, std::int64_t if_null,
                                 bool class_default = false) {
        used_.insert(key);
        if (!doc_.contains(key)) {
            if (class_default) defaulted_.push_back(key + " " + std::to_string(absent));
            return absent;
        }
        if (doc_[key].is_null()) return if_null;
        return integer(key, absent);
    }
    /// A window size where null means no window (MistralConfig, Qwen2Config: `sliding_window: null` turns it off): the
    /// fallback when the key is absent, 0 when it is null.
    std::int64_t window(const std::string& key, std::int64_t fallback) {
        used_.insert(key);
        if (!doc_.contains(key)) return fallback;
        if (doc_[key].is_null()) return 0;
        return integer(key, fallback);
    }
    /// A size of the architecture (hidden_size, the layers, the heads, ...): absent, the config class's default,
    /// noted in defaulted(); null is refused (Hugging Face's classes would take None and fail later).
    std::int64_t size(const std::string& key, std::int64_t fallback) {
        used_.insert(key);
        if (!doc_.contains(key)) {
            defaulted_.push_back(key + " " + std::to_string(fallback));
            return fallback;
        }
        if (doc_[key].is_null()) fail(key, "is null; give its value (the " + type_ + " default is " + std::to_string(fallback) + ")");
        return integer(key, fallback);
    }
    /// A norm's eps: a number >= 0.
    double eps(const std::string& key, double fallback) {
        const double v = number(key, fallback);
        if (!(v >= 0)) fail(key, "must be a number >= 0, got " + shown(doc_[key]));
        return v;
    }
    const std::vector<std::string>& defaulted() const { return defaulted_; }
    std::int64_t required(const std::string& key, std::int64_t minimum = 1) {
        if (!has(key)) fail(key, "is required for model_type " + type_ + " (the config has no such key)");
        return integer(key, 0, minimum);
    }
    double number(const std::string& key, double fallback) {
        if (!given(key)) return fallback;
        const json& v = doc_[key];
        if (!v.is_number()) fail(key, "must be a number, got " + shown(v));
        return v.get<double>();
    }
    bool boolean(const std::string& key, bool fallback) {
        if (!given(key)) return fallback;
        const json& v = doc_[key];
        if (!v.is_boolean()) fail(key, "must be true or false, got " + shown(v));
        return v.get<bool>();
    }
    std::string word(const std::string& key, const std::string& fallback) {
        if (!given(key)) return fallback;
        const json& v = doc_[key];
        if (!v.is_string()) fail(key, "must be a string, got " + shown(v));
        return v.get<std::string>();
    }
    /// A key whose only modelled value is `expected` (cross-attention, a decoder flag): refused otherwise.
    template <class T>
    void only(const std::string& key, const T& expected, const std::string& why) {
        if (!given(key)) return;
        if (doc_[key] != json(expected)) fail(key, "is " + shown(doc_[key]) + ": " + why);
    }
    const json& at(const std::string& key) const { return doc_[key]; }
    const std::string& label() const { return label_; }
    void set_type(std::string t) { type_ = std::move(t); }
    /// Every key not read and not harmless, refused by name.
    void finish() const {
        for (const auto& [key, value] : doc_.items()) {
            (void)value;
            if (used_.count(key) || harmless.count(key)) continue;
            throw core::parse_error(core::printable(label_ + ": key \"" + key + "\" (model_type " + type_ +
                                    ") is not one ridgeline knows: it may change the architecture, so it is refused "
                                    "rather than ignored"));
        }
    }

private:
    const json& doc_;
    std::string label_;
    std::string type_;
    std::set<std::string> used_;
    std::vector<std::string> defaulted_;
};

/// GPT-2's MLP width when n_inner is absent or null: 4 x n_embd, which must fit in int64.
std::int64_t four_times(reader& r, std::int64_t hidden) {
    if (hidden > INT64_MAX / 4) r.fail("n_embd", "is " + std::to_string(hidden) + ": 4 x n_embd (the MLP's width) does not fit in int64");
    return 4 * hidden;
}

void read_rope(reader& r, core::transformer_config& c, const std::string& label) {
    c.rope.theta = r.number("rope_theta", 10000.0);
    if (!(c.rope.theta > 0)) r.fail("rope_theta", "must be > 0");
    json s;  // the scaling: rope_scaling, or rope_parameters (transformers 5) less its rope_theta
    std::string where = "rope_scaling";  // the key the scaling came from, for messages
    if (r.has("rope_parameters")) {
        where = "rope_parameters";
        const json& p = r.at("rope_parameters");
        if (!p.is_object()) r.fail("rope_parameters", "must be an object or null, got " + shown(p));
        if (r.has("rope_scaling")) r.fail("rope_parameters", "and \"rope_scaling\" are both given: give one");
        s = p;
        if (p.contains("rope_theta")) {
            if (!p["rope_theta"].is_number() || !(p["rope_theta"].get<double>() > 0))
                r.fail("rope_parameters", "needs \"rope_theta\" as a number > 0, got " + shown(p["rope_theta"]));
            if (r.has("rope_theta") && r.at("rope_theta") != p["rope_theta"])
                r.fail("rope_theta", "is " + shown(r.at("rope_theta")) + " and rope_parameters.rope_theta " +
                                         shown(p["rope_theta"]) + ": give one");
            c.rope.theta = p["rope_theta"].get<double>();
            s.erase("rope_theta");
        }
        if (!s.contains("rope_type") && !s.contains("type")) s["rope_type"] = "default";
    } else if (r.has("rope_scaling")) {
        s = r.at("rope_scaling");
        if (!s.is_object()) r.fail("rope_scaling", "must be an object or null, got " + shown(s));
    } else {
        return;
    }
    // LlamaConfig and Qwen2Config copy a legacy "type" over "rope_type": two that differ would be read as the legacy
    // one, which a reader of the file may not expect; refused
    if (s.contains("rope_type") && s.contains("type") && s["rope_type"] != s["type"])
        throw core::parse_error(label + ": \"" + where + "\" has \"rope_type\" " + shown(s["rope_type"]) + " and \"type\" " +
                                shown(s["type"]) + ": give one");
    const char* type_key = s.contains("rope_type") ? "rope_type" : "type";
    if (!s.contains(type_key) || !s[type_key].is_string())
        throw core::parse_error(label + ": \"" + where + "\" needs \"rope_type\" (or \"type\") as a string, got " +
                                shown(s));
    const std::string type = s[type_key].get<std::string>();
    auto num = [&](const char* key, double fallback, bool required) {
        if (!s.contains(key) || s[key].is_null()) {
            if (required)
                throw core::parse_error(label + ": \"" + where + "\" of type " + type + " needs \"" + key + "\"");
            return fallback;
        }
        if (!s[key].is_number())
            throw core::parse_error(label + ": \"" + where + "." + key + "\" must be a number, got " + shown(s[key]));
        return s[key].get<double>();
    };
    using st = core::rotary::scaling_t;
    if (type == "default") {
    } else if (type == "linear") c.rope.scaling = st::linear;
    else if (type == "dynamic") c.rope.scaling = st::dynamic;
    else if (type == "yarn") c.rope.scaling = st::yarn;
    else if (type == "llama3") c.rope.scaling = st::llama3;
    else
        throw core::parse_error(label + ": \"" + where + "\" type \"" + type +
                                "\" is not modelled (ridgeline has default, linear, dynamic, yarn and llama3)");
    const std::set<std::string> known = {"rope_type", "type", "factor", "original_max_position_embeddings",
                                         "low_freq_factor", "high_freq_factor", "attention_factor", "beta_fast",
                                         "beta_slow"};
    for (const auto& [key, v] : s.items()) {
        if (!known.count(key))
            throw core::parse_error(label + ": \"" + where + "." + key + "\" is not a key ridgeline models (rope type " +
                                    type + ")");
        // a key of another rope type is left alone by this one (as Hugging Face's validation does), but a number
        // it must be
        if (key != "rope_type" && key != "type" && !v.is_null() && !v.is_number())
            throw core::parse_error(label + ": \"" + where + "." + key + "\" must be a number, got " + shown(v));
    }
    if (type == "default") return;
    c.rope.factor = num("factor", 1, true);
    if (!(c.rope.factor > 0)) throw core::parse_error(label + ": \"" + where + ".factor\" must be > 0");
    // a length in tokens: a whole number from 1 to 2^40 (a double past int64 must not be converted: undefined)
    auto tokens = [&](const char* key, std::int64_t fallback, bool required) {
        if (!s.contains(key) || s[key].is_null()) {  // the fallback is an integer already
            (void)num(key, 0, required);
            return fallback;
        }
        const double v = num(key, static_cast<double>(fallback), required);
        if (!(v >= 1 && v <= static_cast<double>(std::int64_t{1} << 40)) || v != std::floor(v))
            throw core::parse_error(label + ": \"" + where + "." + key + "\" must be a whole number of tokens from 1 to 2^40, got " +
                                    shown(s[key]));
        return static_cast<std::int64_t>(v);
    };
    if (type == "dynamic" || type == "yarn")
        c.rope.max_position_embeddings = tokens("original_max_position_embeddings", c.max_position_embeddings, false);
    if (type == "yarn") {
        c.rope.attention_factor = num("attention_factor", 0, false);
        c.rope.beta_fast = num("beta_fast", 32, false);
        c.rope.beta_slow = num("beta_slow", 1, false);
    }
    if (type == "llama3") {
        c.rope.original_max_position_embeddings = tokens("original_max_position_embeddings", 0, true);
        c.rope.low_freq_factor = num("low_freq_factor", 1, true);
        c.rope.high_freq_factor = num("high_freq_factor", 4, true);
    }
    // the same rules as a layer string's (a round trip through the parser checks them)
    try {
        (void)core::parse_op(core::to_string(core::op{c.rope}));
    } catch (const core::error& e) {
        throw core::parse_error(label + ": \"" + where + "\": " + e.what());
    }
}

/// layer_types (transformers 4.54 on: "full_attention" or "sliding_attention" per layer) must be the pattern that
/// sliding_window (and qwen2's max_window_layers) give: another per-layer pattern is not modelled.
void read_layer_types(reader& r, const core::transformer_config& c) {
    if (!r.has("layer_types")) return;
    const json& t = r.at("layer_types");
    if (!t.is_array() || static_cast<std::int64_t>(t.size()) != c.num_layers)
        r.fail("layer_types", "must be a list of " + std::to_string(c.num_layers) + " entries (num_hidden_layers), got " +
                                  (t.is_array() ? std::to_string(t.size()) + " entries" : shown(t)));
    for (std::int64_t i = 0; i < c.num_layers; ++i) {
        const bool sliding = c.sliding_window > 0 &&
                             (c.family != transformer_family::qwen2 || i >= c.max_window_layers);
        const std::string expected = sliding ? "sliding_attention" : "full_attention";
        const json& v = t[static_cast<std::size_t>(i)];
        if (!v.is_string() || (v != "full_attention" && v != "sliding_attention"))
            r.fail("layer_types", "entry " + std::to_string(i) + " is " + shown(v) +
                                      "; ridgeline models \"full_attention\" and \"sliding_attention\"");
        if (v != expected)
            r.fail("layer_types", "entry " + std::to_string(i) + " is " + shown(v) + " where sliding_window" +
                                      (c.family == transformer_family::qwen2 ? " and max_window_layers give " : " gives ") +
                                      "\"" + expected + "\": another per-layer pattern is not modelled");
    }
}

void read_llama_like(reader& r, core::transformer_config& c, const std::string& label) {
    // LlamaConfig's defaults, MistralConfig's and Qwen2Config's where they differ
    const bool mistral = c.family == transformer_family::mistral, qwen2 = c.family == transformer_family::qwen2;
    const bool llama = c.family == transformer_family::llama;
    c.vocab_size = r.size("vocab_size", qwen2 ? 151936 : 32000);
    c.hidden_size = r.size("hidden_size", 4096);
    c.intermediate_size = r.size("intermediate_size", mistral ? 14336 : qwen2 ? 22016 : 11008);
    c.num_layers = r.size("num_hidden_layers", 32);
    c.num_heads = r.size("num_attention_heads", 32);
    // absent: LlamaConfig's None is num_attention_heads, MistralConfig's default 8, Qwen2Config's 32; null is
    // num_attention_heads in all three ("for backward compatibility")
    c.num_kv_heads = llama ? r.integer_or_null("num_key_value_heads", c.num_heads, c.num_heads)
                           : r.integer_or_null("num_key_value_heads", mistral ? 8 : 32, c.num_heads, true);
    // Llama and Mistral derive a null head_dim; Qwen2Attention reads getattr(config, "head_dim", ...), which is
    // None when the key is null, and fails
    if (qwen2 && r.present_null("head_dim"))
        r.fail("head_dim", "is null; give its value (Qwen2's attention reads it as given)");
    c.head_dim = r.integer_or_null("head_dim", c.hidden_size / c.num_heads, c.hidden_size / c.num_heads);
    c.hidden_act = r.word("hidden_act", "silu");
    c.max_position_embeddings = r.size("max_position_embeddings", mistral ? 4096 * 32 : qwen2 ? 32768 : 2048);
    c.norm_eps = r.eps("rms_norm_eps", 1e-6);
    c.tie_word_embeddings = r.boolean("tie_word_embeddings", false);
    c.qkv_bias = c.o_bias = c.mlp_bias = false;
    if (c.family == transformer_family::llama) {
        c.qkv_bias = c.o_bias = r.boolean("attention_bias", false);
        c.mlp_bias = r.boolean("mlp_bias", false);
    }
    if (c.family == transformer_family::mistral) {
        c.sliding_window = r.window("sliding_window", 4096);  // Mistral v0.2 and later: null, no window
    }
    if (c.family == transformer_family::qwen2) {
        c.qkv_bias = true;  // Qwen2Attention: q, k and v with bias, o_proj without
        const bool use = r.boolean("use_sliding_window", false);
        const std::int64_t window = r.window("sliding_window", 4096);
        c.max_window_layers = r.integer("max_window_layers", 28, 0);
        c.sliding_window = use ? window : 0;
        r.only("use_mrope", false, "multimodal rotary embeddings (Qwen2-VL) are not modelled");
    }
    read_rope(r, c, label);
    read_layer_types(r, c);
}

/// A validation message in the file's own key names (GPT-2's n_embd, n_head, ...; OPT's ffn_dim): core names the
/// fields as Llama's config does.
std::string keys_of_family(std::string message, transformer_family f) {
    std::vector<std::pair<std::string, std::string>> names;
    if (f == transformer_family::gpt2)
        names = {{"hidden_size", "n_embd"},        {"num_attention_heads", "n_head"}, {"num_hidden_layers", "n_layer"},
                 {"intermediate_size", "n_inner"}, {"hidden_act", "activation_function"},
                 {"max_position_embeddings", "n_positions"}, {"the norm's eps", "layer_norm_epsilon"}};
    else if (f == transformer_family::opt)
        names = {{"intermediate_size", "ffn_dim"}, {"hidden_act", "activation_function"}};
    for (const auto& [from, to] : names) {
        for (std::size_t at = message.find(from); at != std::string::npos; at = message.find(from, at + to.size())) {
            const bool starts = at == 0 || !(std::isalnum(static_cast<unsigned char>(message[at - 1])) || message[at - 1] == '_');
            const std::size_t end = at + from.size();
            const bool ends = end >= message.size() || !(std::isalnum(static_cast<unsigned char>(message[end])) || message[end] == '_');
            if (starts && ends) message.replace(at, from.size(), to);
        }
    }
    return message;
}

std::string config_class(transformer_family f) {
    switch (f) {
        case transformer_family::bert: return "BertConfig";
        case transformer_family::gpt2: return "GPT2Config";
        case transformer_family::opt: return "OPTConfig";
        case transformer_family::llama: return "LlamaConfig";
        case transformer_family::mistral: return "MistralConfig";
        case transformer_family::qwen2: return "Qwen2Config";
    }
    return "the config class";
}

/// architectures: which head the model has. The causal LM (the default) or the base model without its head; BERT's
/// pretraining heads are built as BertModel with its pooler, said in a warning; any other head is refused by name.
void read_architectures(reader& r, core::transformer_config& c, const std::string& type,
                        std::vector<std::string>* warnings) {
    if (!r.has("architectures")) return;
    const json& a = r.at("architectures");
    if (!a.is_array() || a.empty()) r.fail("architectures", "must be a list of class names, got " + shown(a));
    if (a.size() > 1)  // which head to build would be a guess
        r.fail("architectures", "names " + std::to_string(a.size()) + " classes (" + shown(a[0]) + ", " + shown(a[1]) +
                                    (a.size() > 2 ? ", ..." : "") + "); give the one to build");
    static const std::map<std::string, std::pair<std::string, std::string>> classes = {  // lm, base
        {"bert", {"", "BertModel"}},           {"gpt2", {"GPT2LMHeadModel", "GPT2Model"}},
        {"opt", {"OPTForCausalLM", "OPTModel"}}, {"llama", {"LlamaForCausalLM", "LlamaModel"}},
        {"mistral", {"MistralForCausalLM", "MistralModel"}}, {"qwen2", {"Qwen2ForCausalLM", "Qwen2Model"}}};
    const auto& [lm, base] = classes.at(type);
    for (const auto& v : a) {
        const std::string name = v.is_string() ? v.get<std::string>() : shown(v);
        if (name == base) {
            c.head = type == "bert";  // BertModel has its pooler; a decoder's base model has no LM head
        } else if (!lm.empty() && name == lm) {
            c.head = true;
        } else if (type == "bert" && (name == "BertForMaskedLM" || name == "BertForPreTraining")) {
            if (warnings)
                warnings->push_back(r.label() + ": architectures " + name +
                                    ": built as BertModel with its pooler, as bert-base's published parameter count is; "
                                    "the pretraining head (cls.predictions) is not counted");
        } else {
            r.fail("architectures", "names " + core::printable(name) + ", whose head ridgeline does not model (it builds " +
                                        (lm.empty() ? base + " with its pooler" : lm + " or " + base) + ")");
        }
    }
}

}  // namespace

namespace {

core::transformer_config read_config(const nlohmann::json& doc, std::string_view label, std::string_view fallback_name,
                                     std::vector<std::string>* warnings) {
    const std::string lab(label);
    if (!doc.is_object()) throw core::parse_error(lab + ": a config.json is a JSON object, got " + doc.type_name());
    // another of ridgeline's files given as a config: say which, and what reads it
    if (doc.contains("schema") && doc["schema"].is_string() &&
        doc["schema"].get_ref<const std::string&>().rfind("ridgeline.", 0) == 0)
        throw core::request_error(lab + ": a ridgeline report (" +
                                      core::printable(doc["schema"].get_ref<const std::string&>().substr(0, 40)) +
                                      "), not a Hugging Face config.json",
                                  {});
    if (doc.contains("layers") && doc.contains("inputs") && !doc.contains("model_type"))
        throw core::request_error(lab + ": a ridgeline model file, not a Hugging Face config.json", {"model-file"});
    reader r(doc, label);
    if (!r.has("model_type")) r.fail("model_type", "is required (bert, gpt2, opt, llama, mistral or qwen2)");
    const std::string type = r.word("model_type", "");
    r.set_type(type);
    core::transformer_config c;
    c.name = r.has("_name_or_path") && doc["_name_or_path"].is_string() && !doc["_name_or_path"].get<std::string>().empty()
                 ? core::printable(doc["_name_or_path"].get<std::string>())
                 : core::printable(std::string(fallback_name));
    c.source = lab;
    if (type == "bert") {
        c.family = transformer_family::bert;
        c.vocab_size = r.size("vocab_size", 30522);
        c.hidden_size = r.size("hidden_size", 768);
        c.num_layers = r.size("num_hidden_layers", 12);
        c.num_heads = r.size("num_attention_heads", 12);
        c.intermediate_size = r.size("intermediate_size", 3072);
        c.hidden_act = r.word("hidden_act", "gelu");
        c.max_position_embeddings = r.size("max_position_embeddings", 512);
        c.type_vocab_size = r.integer("type_vocab_size", 2);
        c.norm_eps = r.eps("layer_norm_eps", 1e-12);
        r.only("position_embedding_type", "absolute", "relative position embeddings are not modelled");
        r.only("is_decoder", false, "BERT as a decoder is not modelled");
        r.only("add_cross_attention", false, "cross-attention is not modelled");
        c.pre_norm = false;
        c.tie_word_embeddings = r.boolean("tie_word_embeddings", true);  // BertModel has no LM head to tie
    } else if (type == "gpt2") {
        c.family = transformer_family::gpt2;
        c.vocab_size = r.size("vocab_size", 50257);
        c.max_position_embeddings = r.size("n_positions", 1024);
        c.hidden_size = r.size("n_embd", 768);
        c.num_layers = r.size("n_layer", 12);
        c.num_heads = r.size("n_head", 12);
        c.intermediate_size = r.integer_or_null("n_inner", four_times(r, c.hidden_size), four_times(r, c.hidden_size));
        c.hidden_act = r.word("activation_function", "gelu_new");
        c.norm_eps = r.eps("layer_norm_epsilon", 1e-5);
        c.scale_attn_weights = r.boolean("scale_attn_weights", true);
        c.scale_attn_by_inverse_layer_idx = r.boolean("scale_attn_by_inverse_layer_idx", false);
        r.only("add_cross_attention", false, "cross-attention is not modelled");
        c.tie_word_embeddings = r.boolean("tie_word_embeddings", true);
    } else if (type == "opt") {
        c.family = transformer_family::opt;
        c.vocab_size = r.size("vocab_size", 50272);
        c.hidden_size = r.size("hidden_size", 768);
        c.num_layers = r.size("num_hidden_layers", 12);
        c.intermediate_size = r.size("ffn_dim", 3072);
        c.num_heads = r.size("num_attention_heads", 12);
        c.max_position_embeddings = r.size("max_position_embeddings", 2048);
        c.word_embed_proj_dim = r.integer_or_null("word_embed_proj_dim", c.hidden_size, c.hidden_size);
        c.pre_norm = r.boolean("do_layer_norm_before", true);
        c.final_norm = !r.boolean("_remove_final_layer_norm", false);
        c.hidden_act = r.word("activation_function", "relu");
        const bool bias = r.boolean("enable_bias", true);
        c.qkv_bias = c.o_bias = c.mlp_bias = bias;
        c.norm_affine = r.boolean("layer_norm_elementwise_affine", true);
        c.tie_word_embeddings = r.boolean("tie_word_embeddings", true);
    } else if (type == "llama" || type == "mistral" || type == "qwen2") {
        c.family = type == "llama" ? transformer_family::llama
                   : type == "mistral" ? transformer_family::mistral : transformer_family::qwen2;
        read_llama_like(r, c, lab);
    } else {
        r.fail("model_type", "is \"" + type + "\"; ridgeline builds bert, gpt2, opt, llama, mistral and qwen2");
    }
    read_architectures(r, c, type, warnings);
    if (c.num_kv_heads == 0) c.num_kv_heads = c.num_heads;
    if (c.head_dim == 0) c.head_dim = c.hidden_size / c.num_heads;
    r.finish();
    try {
        c.validate();
    } catch (const core::error& e) {
        throw core::parse_error(lab + ": " + keys_of_family(e.what(), c.family));
    }
    if (warnings && !r.defaulted().empty()) {
        std::string keys;
        for (const auto& k : r.defaulted()) keys += (keys.empty() ? "" : ", ") + k;
        warnings->push_back(lab + ": not in the file, so " + config_class(c.family) + "'s defaults: " + keys);
    }
    return c;
}

}  // namespace

core::transformer_config parse_hf_config(const nlohmann::json& doc, std::string_view label,
                                         std::string_view fallback_name, std::vector<std::string>* warnings) {
    // every message and warning shown as printable: a value or key of the file may hold control characters
    std::vector<std::string> own;
    try {
        core::transformer_config c = read_config(doc, label, fallback_name, warnings ? &own : nullptr);
        if (warnings)
            for (auto& w : own) warnings->push_back(core::printable(w));
        return c;
    } catch (const core::parse_error& e) {
        throw core::parse_error(core::printable(e.what()));
    }
}

core::transformer_config read_hf_config(const std::filesystem::path& given, std::vector<std::string>* warnings) {
    // a model's folder (as Hugging Face's from_pretrained takes it) is read through its config.json
    std::error_code ec;
    const std::filesystem::path path =
        std::filesystem::is_directory(given, ec) && std::filesystem::is_regular_file(given / "config.json", ec)
            ? given / "config.json"
            : given;
    const std::string label = path.string();
    const std::string text = core::read_regular_file(path, label);
    core::check_json_text(text, core::printable(label));
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::exception& e) {  // a syntax error, or a number past a double (1e999)
        throw core::parse_error(core::printable(label + ": not valid JSON (" +
                                                core::without_json_exception_tag(e.what()) + ")"));
    }
    // a file named config.json is named by its folder ("./config.json" too: the folder it is in, not ".")
    std::string name = path.stem().string();
    if (name == "config") {
        ec.clear();
        const std::filesystem::path folder = std::filesystem::absolute(path, ec).lexically_normal().parent_path();
        if (!ec && !folder.filename().empty()) name = folder.filename().string();
    }
    return parse_hf_config(doc, label, name, warnings);
}

std::int64_t default_sequence(const core::transformer_config& c) {
    if (!c.causal()) return std::min<std::int64_t>(128, c.max_position_embeddings);
    return std::min<std::int64_t>(2048, c.max_position_embeddings);
}

}  // namespace ridgeline::io
