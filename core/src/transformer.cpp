// Transformers from a configuration (transformer.hpp): one builder per family, as Hugging Face's modelling code
// orders the modules; the attention block and the MLP shared where the families agree.
#include "ridgeline/core/transformer.hpp"

#include <cmath>

#include "ridgeline/core/checked.hpp"
#include "ridgeline/core/error.hpp"

namespace ridgeline::core {

std::string_view to_string(transformer_family f) {
    switch (f) {
        case transformer_family::bert: return "bert";
        case transformer_family::gpt2: return "gpt2";
        case transformer_family::opt: return "opt";
        case transformer_family::llama: return "llama";
        case transformer_family::mistral: return "mistral";
        case transformer_family::qwen2: return "qwen2";
    }
    return "?";
}

void transformer_config::validate() const {
    const std::string where = "config \"" + name + "\": ";
    auto positive = [&](std::int64_t v, const char* key) {
        if (v < 1) throw error(where + key + " is " + std::to_string(v) + ", it must be >= 1");
    };
    positive(vocab_size, "vocab_size");
    positive(hidden_size, "hidden_size");
    positive(num_layers, "num_hidden_layers");
    positive(num_heads, "num_attention_heads");
    positive(num_kv_heads, "num_key_value_heads");
    const bool rotary_family = family == transformer_family::llama || family == transformer_family::mistral ||
                               family == transformer_family::qwen2;
    // a family without a head_dim key splits hidden_size into the heads (GPT2Attention: "embed_dim must be
    // divisible by num_heads"): said in those keys, before the head_dim they imply
    if (!rotary_family && hidden_size % num_heads != 0)
        throw error(where + "hidden_size " + std::to_string(hidden_size) + " is not a multiple of num_attention_heads " +
                    std::to_string(num_heads));
    positive(head_dim, "head_dim");
    (void)checked::mul(num_heads, head_dim, where + "num_attention_heads x head_dim");
    if (max_position_embeddings > max_transformer_positions)
        throw error(where + "max_position_embeddings " + std::to_string(max_position_embeddings) +
                    " is more than ridgeline builds (2^40 positions)");
    positive(intermediate_size, "intermediate_size");
    // the largest published decoders have about 130 blocks; a count far beyond it is a mistake, and each block is
    // built and counted (a model of 2^40 blocks would fill any memory before it was refused)
    if (num_layers > max_transformer_layers)
        throw error(where + "num_hidden_layers " + std::to_string(num_layers) + " is more than ridgeline builds (" +
                    std::to_string(max_transformer_layers) + " blocks)");
    if (!rotary_family && head_dim * num_heads != hidden_size)
        throw error(where + "hidden_size " + std::to_string(hidden_size) + " is not a multiple of num_attention_heads " +
                    std::to_string(num_heads));
    if (num_heads % num_kv_heads != 0)
        throw error(where + "num_attention_heads " + std::to_string(num_heads) + " is not a multiple of " +
                    "num_key_value_heads " + std::to_string(num_kv_heads));
    if (head_dim % 2 != 0 && rotary_family)
        throw error(where + "head_dim " + std::to_string(head_dim) + " is odd: rotary embeddings rotate pairs");
    if (!(norm_eps >= 0)) throw error(where + "the norm's eps must be >= 0");
    if (sliding_window < 0) throw error(where + "sliding_window must be >= 1 (or null)");
    static const char* acts[] = {"gelu", "gelu_python", "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "relu", "silu", "swish"};
    bool known = false;
    for (const char* a : acts) known = known || hidden_act == a;
    if (!known)
        throw error(where + "hidden_act \"" + printable(hidden_act) +
                    "\" is not one ridgeline models (gelu, gelu_python, gelu_new, gelu_pytorch_tanh, gelu_fast, relu, silu, swish)");
}

namespace {

using i64 = std::int64_t;

/// A graph builder that knows the run: the tokens of this pass and how many came before.
struct block_builder {
    model_builder& b;
    const transformer_config& c;
    const transformer_run& r;
    i64 tokens;  // per sequence in this pass
    i64 past;    // cached before it

    std::string ln(const std::string& name, const std::string& x) {
        if (c.family == transformer_family::llama || c.family == transformer_family::mistral ||
            c.family == transformer_family::qwen2) {
            rms_norm n;
            n.normalized_shape = {c.hidden_size};
            n.eps = c.norm_eps;
            return b.add(name, n, {x});
        }
        layer_norm n;
        n.normalized_shape = {c.hidden_size};
        n.eps = c.norm_eps;
        n.elementwise_affine = c.norm_affine;
        n.bias = c.norm_affine;
        return b.add(name, n, {x});
    }

    std::string act(const std::string& name, const std::string& x) {
        const std::string& a = c.hidden_act;
        if (a == "relu") return b.add(name, relu{}, {x});
        if (a == "silu" || a == "swish") return b.add(name, silu{}, {x});
        gelu g;
        // gelu and gelu_python: the erf form (activations.py's GELUActivation); gelu_new, gelu_pytorch_tanh, gelu_fast:
    // the tanh form
    g.tanh_approximation = a != "gelu" && a != "gelu_python";
        return b.add(name, g, {x});
    }

    /// [B, S, heads*D] -> [B, heads, S, D] (a view and a transpose, as .view(...).transpose(1, 2))
    std::string heads(const std::string& p, const std::string& x, i64 n) {
        b.add(p + "_heads", reshape{{0, 0, n, c.head_dim}}, {x});
        return b.then(p + "_perm", transpose{1, 2});
    }

    /// q, k, v [B, S, *] -> the attention's output [B, S, heads*D] (before the output projection)
    std::string attention_core(const std::string& p, const std::string& q, const std::string& k, const std::string& v,
                               i64 layer_index) {
        const bool rope = c.family == transformer_family::llama || c.family == transformer_family::mistral ||
                          c.family == transformer_family::qwen2;
        std::string qh = heads(p + "q", q, c.num_heads);
        std::string kh = heads(p + "k", k, c.num_kv_heads);
        std::string vh = heads(p + "v", v, c.num_kv_heads);
        if (rope) {
            rotary ro = c.rope;
            ro.offset = past;
            qh = b.add(p + "q_rope", ro, {qh});
            kh = b.add(p + "k_rope", ro, {kh});
        }
        if (r.phase == transformer_phase::decode) {
            kv_cache kc{r.batch, c.num_kv_heads, c.head_dim, past, tokens};
            kh = b.add(p + "k_cache", kc, {kh});
            vh = b.add(p + "v_cache", kc, {vh});
        }
        attention a;
        a.is_causal = c.causal();
        double scale = 1.0 / std::sqrt(static_cast<double>(c.head_dim));
        if (c.family == transformer_family::gpt2) {
            if (!c.scale_attn_weights) scale = 1.0;
            if (c.scale_attn_by_inverse_layer_idx) scale /= static_cast<double>(layer_index + 1);
        }
        if (std::abs(scale - 1.0 / std::sqrt(static_cast<double>(c.head_dim))) > 0) a.scale = scale;
        const bool windowed = c.sliding_window > 0 &&
                              (c.family == transformer_family::mistral ||
                               (c.family == transformer_family::qwen2 && layer_index >= c.max_window_layers));
        if (windowed) a.sliding_window = c.sliding_window;
        b.add(p + "attention", a, {qh, kh, vh});
        b.then(p + "attn_perm", transpose{1, 2});
        return b.then(p + "attn_merge", reshape{{0, 0, c.num_heads * c.head_dim}});
    }

    /// down(act(gate(x)) * up(x)): the gated MLP of llama, mistral and qwen2
    std::string gated_mlp(const std::string& p, const std::string& x) {
        const std::string g = b.add(p + "gate_proj", linear{c.hidden_size, c.intermediate_size, c.mlp_bias}, {x});
        const std::string u = b.add(p + "up_proj", linear{c.hidden_size, c.intermediate_size, c.mlp_bias}, {x});
        const std::string a = act(p + "act_fn", g);
        b.add(p + "mul", mul{}, {a, u});
        return b.then(p + "down_proj", linear{c.intermediate_size, c.hidden_size, c.mlp_bias});
    }

    /// The LM head over the last hidden state, tied to `embedding` when the config says so.
    void lm_head(const std::string& x, i64 width, const std::string& embedding) {
        if (!c.head) return;  // the base model: its last hidden state is the output
        b.add("lm_head", linear{width, c.vocab_size, false}, {x});
        if (c.tie_word_embeddings) b.tie_last("weight", embedding + ".weight");
    }

    /// Position ids of this pass (positions past .. past + tokens - 1; learned tables read them).
    std::string positions(i64 table_rows, i64 first_row) {
        const i64 last = first_row + past + tokens;  // one past the last row read
        if (last > table_rows) {
            const std::string table = std::to_string(c.max_position_embeddings) + " learned position embeddings";
            if (r.phase == transformer_phase::decode)
                throw request_error("model \"" + c.name + "\": positions up to " + std::to_string(past + tokens) +
                                    " (a KV cache of " + std::to_string(past) + " and the new token) pass its " + table, {"kv_len"});
            throw request_error("model \"" + c.name + "\": sequence length " + std::to_string(tokens) +
                                " is longer than its " + table, {"seq"});
        }
        return b.input("position_ids", shape{1, tokens}, true);
    }
};

model bert(const transformer_config& c, const transformer_run& r, block_builder& x) {
    if (r.phase == transformer_phase::decode)
        throw request_error("model \"" + c.name + "\": BERT is an encoder, it has no decode phase (its pass is a prefill)", {"phase"});
    model_builder& b = x.b;
    const i64 h = c.hidden_size;
    b.input("input_ids", shape{r.batch, x.tokens}, true);
    b.input("token_type_ids", shape{r.batch, x.tokens}, true);
    x.positions(c.max_position_embeddings, 0);
    b.add("embeddings.word_embeddings", embedding{c.vocab_size, h, {}}, {"input_ids"});
    b.add("embeddings.token_type_embeddings", embedding{c.type_vocab_size, h, {}}, {"token_type_ids"});
    b.add("embeddings.position_embeddings", embedding{c.max_position_embeddings, h, {}}, {"position_ids"});
    b.add("embeddings.add_token_type", add{}, {"embeddings.word_embeddings", "embeddings.token_type_embeddings"});
    b.add("embeddings.add_position", add{}, {"embeddings.add_token_type", "embeddings.position_embeddings"});
    std::string hs = x.ln("embeddings.LayerNorm", "embeddings.add_position");
    for (i64 i = 0; i < c.num_layers; ++i) {
        const std::string p = "encoder.layer." + std::to_string(i) + ".";
        const std::string q = b.add(p + "attention.self.query", linear{h, h, c.qkv_bias}, {hs});
        const std::string k = b.add(p + "attention.self.key", linear{h, h, c.qkv_bias}, {hs});
        const std::string v = b.add(p + "attention.self.value", linear{h, h, c.qkv_bias}, {hs});
        const std::string ctx = x.attention_core(p + "attention.self.", q, k, v, i);
        const std::string o = b.add(p + "attention.output.dense", linear{h, h, c.o_bias}, {ctx});
        b.add(p + "attention.output.add", add{}, {o, hs});
        const std::string a = x.ln(p + "attention.output.LayerNorm", p + "attention.output.add");
        b.add(p + "intermediate.dense", linear{h, c.intermediate_size, c.mlp_bias}, {a});
        x.act(p + "intermediate.intermediate_act_fn", p + "intermediate.dense");
        const std::string f = b.then(p + "output.dense", linear{c.intermediate_size, h, c.mlp_bias});
        b.add(p + "output.add", add{}, {f, a});
        hs = x.ln(p + "output.LayerNorm", p + "output.add");
    }
    // BertPooler: the first token's hidden state, a dense layer and tanh
    if (!c.head) return b.build();
    b.add("pooler.first_token", slice{1, 0, 1, 1}, {hs});
    b.then("pooler.squeeze", reshape{{0, h}});
    b.then("pooler.dense", linear{h, h, true});
    b.then("pooler.activation", tanh_op{});
    return b.build();
}

model gpt2(const transformer_config& c, const transformer_run& r, block_builder& x) {
    model_builder& b = x.b;
    const i64 h = c.hidden_size;
    b.input("input_ids", shape{r.batch, x.tokens}, true);
    x.positions(c.max_position_embeddings, 0);
    b.add("transformer.wte", embedding{c.vocab_size, h, {}}, {"input_ids"});
    b.add("transformer.wpe", embedding{c.max_position_embeddings, h, {}}, {"position_ids"});
    std::string hs = b.add("transformer.embed_add", add{}, {"transformer.wte", "transformer.wpe"});
    for (i64 i = 0; i < c.num_layers; ++i) {
        const std::string p = "transformer.h." + std::to_string(i) + ".";
        x.ln(p + "ln_1", hs);
        const std::string qkv = b.then(p + "attn.c_attn", linear{h, 3 * h, c.qkv_bias});
        const std::string q = b.add(p + "attn.q", slice{2, 0, h, 1}, {qkv});
        const std::string k = b.add(p + "attn.k", slice{2, h, 2 * h, 1}, {qkv});
        const std::string v = b.add(p + "attn.v", slice{2, 2 * h, 3 * h, 1}, {qkv});
        const std::string ctx = x.attention_core(p + "attn.", q, k, v, i);
        const std::string o = b.add(p + "attn.c_proj", linear{h, h, c.o_bias}, {ctx});
        const std::string r1 = b.add(p + "add_1", add{}, {o, hs});
        x.ln(p + "ln_2", r1);
        b.then(p + "mlp.c_fc", linear{h, c.intermediate_size, c.mlp_bias});
        x.act(p + "mlp.act", p + "mlp.c_fc");
        const std::string m = b.then(p + "mlp.c_proj", linear{c.intermediate_size, h, c.mlp_bias});
        hs = b.add(p + "add_2", add{}, {m, r1});
    }
    const std::string f = x.ln("transformer.ln_f", hs);
    x.lm_head(f, h, "transformer.wte");
    return b.build();
}

model opt(const transformer_config& c, const transformer_run& r, block_builder& x) {
    model_builder& b = x.b;
    const i64 h = c.hidden_size;
    const i64 wep = c.word_embed_proj_dim > 0 ? c.word_embed_proj_dim : h;
    b.input("input_ids", shape{r.batch, x.tokens}, true);
    // OPTLearnedPositionalEmbedding: max_position_embeddings + 2 rows, position p reads row p + 2
    x.positions(c.max_position_embeddings + 2, 2);
    b.add("model.decoder.embed_tokens", embedding{c.vocab_size, wep, {}}, {"input_ids"});
    std::string tok = "model.decoder.embed_tokens";
    if (wep != h) tok = b.add("model.decoder.project_in", linear{wep, h, false}, {tok});
    b.add("model.decoder.embed_positions", embedding{c.max_position_embeddings + 2, h, {}}, {"position_ids"});
    std::string hs = b.add("model.decoder.embed_add", add{}, {tok, "model.decoder.embed_positions"});
    for (i64 i = 0; i < c.num_layers; ++i) {
        const std::string p = "model.decoder.layers." + std::to_string(i) + ".";
        const std::string in = c.pre_norm ? x.ln(p + "self_attn_layer_norm", hs) : hs;
        const std::string q = b.add(p + "self_attn.q_proj", linear{h, h, c.qkv_bias}, {in});
        const std::string k = b.add(p + "self_attn.k_proj", linear{h, h, c.qkv_bias}, {in});
        const std::string v = b.add(p + "self_attn.v_proj", linear{h, h, c.qkv_bias}, {in});
        const std::string ctx = x.attention_core(p + "self_attn.", q, k, v, i);
        const std::string o = b.add(p + "self_attn.out_proj", linear{h, h, c.o_bias}, {ctx});
        std::string r1 = b.add(p + "attn_residual", add{}, {hs, o});
        if (!c.pre_norm) r1 = x.ln(p + "self_attn_layer_norm", r1);
        const std::string fin = c.pre_norm ? x.ln(p + "final_layer_norm", r1) : r1;
        b.add(p + "fc1", linear{h, c.intermediate_size, c.mlp_bias}, {fin});
        x.act(p + "activation_fn", p + "fc1");
        const std::string f2 = b.then(p + "fc2", linear{c.intermediate_size, h, c.mlp_bias});
        hs = b.add(p + "mlp_residual", add{}, {r1, f2});
        if (!c.pre_norm) hs = x.ln(p + "final_layer_norm", hs);
    }
    if (c.pre_norm && c.final_norm) hs = x.ln("model.decoder.final_layer_norm", hs);
    if (wep != h) hs = b.add("model.decoder.project_out", linear{h, wep, false}, {hs});
    x.lm_head(hs, wep, "model.decoder.embed_tokens");
    return b.build();
}

model llama_like(const transformer_config& c, const transformer_run& r, block_builder& x) {
    model_builder& b = x.b;
    const i64 h = c.hidden_size, qd = c.num_heads * c.head_dim, kvd = c.num_kv_heads * c.head_dim;
    b.input("input_ids", shape{r.batch, x.tokens}, true);
    std::string hs = b.add("model.embed_tokens", embedding{c.vocab_size, h, {}}, {"input_ids"});
    for (i64 i = 0; i < c.num_layers; ++i) {
        const std::string p = "model.layers." + std::to_string(i) + ".";
        const std::string in = x.ln(p + "input_layernorm", hs);
        const std::string q = b.add(p + "self_attn.q_proj", linear{h, qd, c.qkv_bias}, {in});
        const std::string k = b.add(p + "self_attn.k_proj", linear{h, kvd, c.qkv_bias}, {in});
        const std::string v = b.add(p + "self_attn.v_proj", linear{h, kvd, c.qkv_bias}, {in});
        const std::string ctx = x.attention_core(p + "self_attn.", q, k, v, i);
        const std::string o = b.add(p + "self_attn.o_proj", linear{qd, h, c.o_bias}, {ctx});
        const std::string r1 = b.add(p + "attn_residual", add{}, {hs, o});
        const std::string post = x.ln(p + "post_attention_layernorm", r1);
        const std::string m = x.gated_mlp(p + "mlp.", post);
        hs = b.add(p + "mlp_residual", add{}, {r1, m});
    }
    hs = x.ln("model.norm", hs);
    x.lm_head(hs, h, "model.embed_tokens");
    return b.build();
}

}  // namespace

std::vector<std::string> pass_notes(const transformer_config& c, const transformer_run& r) {
    std::vector<std::string> notes;
    const bool decode = r.phase == transformer_phase::decode;
    const i64 positions = decode ? r.kv_len + 1 : r.seq;  // learned tables refuse more (positions() above)
    const bool rotary_positions = c.family == transformer_family::llama || c.family == transformer_family::mistral ||
                                  c.family == transformer_family::qwen2;
    if (rotary_positions && c.max_position_embeddings > 0 && positions > c.max_position_embeddings)
        notes.push_back("model \"" + c.name + "\": " + std::to_string(positions) + " positions per sequence pass its " +
                        "max_position_embeddings " + std::to_string(c.max_position_embeddings) +
                        ": its rotary positions extrapolate past what it was trained for; the cost is counted as asked");
    return notes;
}

model build_transformer(const transformer_config& c, const transformer_run& r) {
    c.validate();
    if (r.batch < 1) throw request_error("model \"" + c.name + "\": batch " + std::to_string(r.batch) + " must be >= 1", {"batch"});
    const bool decode = r.phase == transformer_phase::decode;
    if (decode && !c.causal())
        throw request_error("model \"" + c.name + "\": " + std::string(to_string(c.family)) +
                    " is an encoder, it has no decode phase (its pass is a prefill)", {"phase"});
    if (!decode && r.seq < 1)
        throw request_error("model \"" + c.name + "\": sequence length " + std::to_string(r.seq) + " must be >= 1", {"seq"});
    if (decode && r.kv_len < 0)
        throw request_error("model \"" + c.name + "\": KV cache length " + std::to_string(r.kv_len) + " must be >= 0", {"kv_len"});
    model_builder b(c.name);
    transformer_run pass = r;
    if (decode) pass.seq = 0;
    else pass.kv_len = 0;
    b.set_run(pass);
    block_builder x{b, c, r, decode ? 1 : r.seq, decode ? r.kv_len : 0};
    switch (c.family) {
        case transformer_family::bert: return bert(c, r, x);
        case transformer_family::gpt2: return gpt2(c, r, x);
        case transformer_family::opt: return opt(c, r, x);
        case transformer_family::llama:
        case transformer_family::mistral:
        case transformer_family::qwen2: return llama_like(c, r, x);
    }
    throw error("model \"" + c.name + "\": unknown family");
}

}  // namespace ridgeline::core
