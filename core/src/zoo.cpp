// The model zoo. Architectures follow torchvision 0.15 (resnet, vgg, alexnet, squeezenet, mobilenet_v2)
// and Hugging Face transformers (BertModel, GPT2LMHeadModel); layer names are their module paths.
#include "ridgeline/core/zoo.hpp"

#include <cmath>
#include <functional>

#include "ridgeline/core/error.hpp"

namespace ridgeline::core {

namespace {

using i64 = std::int64_t;

op conv(i64 in, i64 out, i64 k, i64 stride = 1, i64 pad = 0, bool bias = false, i64 groups = 1) {
    conv2d c;
    c.in_channels = in;
    c.out_channels = out;
    c.kernel_size = {k, k};
    c.stride = {stride, stride};
    c.padding = padding2d{padding2d::mode::explicit_pads, pad, pad, pad, pad};
    c.groups = groups;
    c.bias = bias;
    return c;
}
op bn(i64 c) {
    batch_norm2d b;
    b.num_features = c;
    return b;
}
op fc(i64 in, i64 out, bool bias = true) { return linear{in, out, bias}; }
op maxpool(i64 k, i64 s, i64 p = 0, bool ceil = false) {
    max_pool2d m;
    m.kernel_size = {k, k};
    m.stride = {s, s};
    m.padding = {p, p};
    m.ceil_mode = ceil;
    return m;
}
op adaptive(i64 h, i64 w) { return adaptive_avg_pool2d{{h, w}}; }
op ln(i64 d, double eps) {
    layer_norm l;
    l.normalized_shape = {d};
    l.eps = eps;
    return l;
}
op view(std::vector<i64> target) { return reshape{std::move(target)}; }
op swap(i64 a, i64 b) { return transpose{a, b}; }

// ------------------------------------------------------------------ ResNet
void basic_block(model_builder& b, const std::string& p, i64 inplanes, i64 planes, i64 stride) {
    const std::string x = b.current();
    b.then(p + "conv1", conv(inplanes, planes, 3, stride, 1));
    b.then(p + "bn1", bn(planes));
    b.then(p + "relu1", relu{});
    b.then(p + "conv2", conv(planes, planes, 3, 1, 1));
    const std::string main = b.then(p + "bn2", bn(planes));
    std::string identity = x;
    if (stride != 1 || inplanes != planes) {
        b.add(p + "downsample.0", conv(inplanes, planes, 1, stride), {x});
        identity = b.then(p + "downsample.1", bn(planes));
    }
    b.add(p + "add", add{}, {main, identity});
    b.then(p + "relu2", relu{});
}

void bottleneck(model_builder& b, const std::string& p, i64 inplanes, i64 planes, i64 stride) {
    const i64 out = planes * 4;
    const std::string x = b.current();
    b.then(p + "conv1", conv(inplanes, planes, 1));
    b.then(p + "bn1", bn(planes));
    b.then(p + "relu1", relu{});
    b.then(p + "conv2", conv(planes, planes, 3, stride, 1));  // torchvision v1.5: stride on the 3x3
    b.then(p + "bn2", bn(planes));
    b.then(p + "relu2", relu{});
    b.then(p + "conv3", conv(planes, out, 1));
    const std::string main = b.then(p + "bn3", bn(out));
    std::string identity = x;
    if (stride != 1 || inplanes != out) {
        b.add(p + "downsample.0", conv(inplanes, out, 1, stride), {x});
        identity = b.then(p + "downsample.1", bn(out));
    }
    b.add(p + "add", add{}, {main, identity});
    b.then(p + "relu3", relu{});
}

model resnet(const std::string& name, const shape& in, bool bottleneck_blocks, std::vector<int> blocks) {
    model_builder b(name);
    b.input("input", in);
    b.then("conv1", conv(3, 64, 7, 2, 3));
    b.then("bn1", bn(64));
    b.then("relu", relu{});
    b.then("maxpool", maxpool(3, 2, 1));
    const i64 expansion = bottleneck_blocks ? 4 : 1;
    i64 inplanes = 64;
    for (int stage = 0; stage < 4; ++stage) {
        const i64 planes = 64LL << stage;
        for (int i = 0; i < blocks[static_cast<std::size_t>(stage)]; ++i) {
            const std::string p = "layer" + std::to_string(stage + 1) + "." + std::to_string(i) + ".";
            const i64 stride = (i == 0 && stage > 0) ? 2 : 1;
            if (bottleneck_blocks)
                bottleneck(b, p, inplanes, planes, stride);
            else
                basic_block(b, p, inplanes, planes, stride);
            inplanes = planes * expansion;
        }
    }
    b.then("avgpool", adaptive(1, 1));
    b.then("flatten", flatten{});
    b.then("fc", fc(512 * expansion, 1000));
    return b.build();
}

// ------------------------------------------------------------------ VGG
model vgg(const std::string& name, const shape& in, const std::vector<int>& cfg, bool batch_norm) {
    model_builder b(name);
    b.input("input", in);
    i64 channels = 3;  // torchvision models take RGB images
    int idx = 0;
    auto f = [&](int i) { return "features." + std::to_string(i); };
    for (int v : cfg) {
        if (v == 0) {
            b.then(f(idx++), maxpool(2, 2));
            continue;
        }
        b.then(f(idx++), conv(channels, v, 3, 1, 1, true));
        if (batch_norm) b.then(f(idx++), bn(v));
        b.then(f(idx++), relu{});
        channels = v;
    }
    b.then("avgpool", adaptive(7, 7));
    b.then("flatten", flatten{});
    b.then("classifier.0", fc(512 * 7 * 7, 4096));
    b.then("classifier.1", relu{});
    b.then("classifier.3", fc(4096, 4096));
    b.then("classifier.4", relu{});
    b.then("classifier.6", fc(4096, 1000));
    return b.build();
}

const std::vector<int> vgg_a{64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0};
const std::vector<int> vgg_d{64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0};

// ------------------------------------------------------------------ AlexNet
model alexnet(const shape& in) {
    model_builder b("alexnet");
    b.input("input", in);
    b.then("features.0", conv(3, 64, 11, 4, 2, true));
    b.then("features.1", relu{});
    b.then("features.2", maxpool(3, 2));
    b.then("features.3", conv(64, 192, 5, 1, 2, true));
    b.then("features.4", relu{});
    b.then("features.5", maxpool(3, 2));
    b.then("features.6", conv(192, 384, 3, 1, 1, true));
    b.then("features.7", relu{});
    b.then("features.8", conv(384, 256, 3, 1, 1, true));
    b.then("features.9", relu{});
    b.then("features.10", conv(256, 256, 3, 1, 1, true));
    b.then("features.11", relu{});
    b.then("features.12", maxpool(3, 2));
    b.then("avgpool", adaptive(6, 6));
    b.then("flatten", flatten{});
    b.then("classifier.1", fc(256 * 6 * 6, 4096));
    b.then("classifier.2", relu{});
    b.then("classifier.4", fc(4096, 4096));
    b.then("classifier.5", relu{});
    b.then("classifier.6", fc(4096, 1000));
    return b.build();
}

// ------------------------------------------------------------------ SqueezeNet 1.0
void fire(model_builder& b, const std::string& p, i64 in, i64 squeeze, i64 e1, i64 e3) {
    b.then(p + "squeeze", conv(in, squeeze, 1, 1, 0, true));
    const std::string s = b.then(p + "squeeze_activation", relu{});
    b.then(p + "expand1x1", conv(squeeze, e1, 1, 1, 0, true));
    const std::string a = b.then(p + "expand1x1_activation", relu{});
    b.add(p + "expand3x3", conv(squeeze, e3, 3, 1, 1, true), {s});
    const std::string c = b.then(p + "expand3x3_activation", relu{});
    b.add(p + "cat", concat{1}, {a, c});
}

model squeezenet1_0(const shape& in) {
    model_builder b("squeezenet1_0");
    b.input("input", in);
    b.then("features.0", conv(3, 96, 7, 2, 0, true));
    b.then("features.1", relu{});
    b.then("features.2", maxpool(3, 2, 0, true));
    fire(b, "features.3.", 96, 16, 64, 64);
    fire(b, "features.4.", 128, 16, 64, 64);
    fire(b, "features.5.", 128, 32, 128, 128);
    b.then("features.6", maxpool(3, 2, 0, true));
    fire(b, "features.7.", 256, 32, 128, 128);
    fire(b, "features.8.", 256, 48, 192, 192);
    fire(b, "features.9.", 384, 48, 192, 192);
    fire(b, "features.10.", 384, 64, 256, 256);
    b.then("features.11", maxpool(3, 2, 0, true));
    fire(b, "features.12.", 512, 64, 256, 256);
    b.then("classifier.1", conv(512, 1000, 1, 1, 0, true));
    b.then("classifier.2", relu{});
    b.then("classifier.3", adaptive(1, 1));
    b.then("flatten", flatten{});
    return b.build();
}

// ------------------------------------------------------------------ MobileNetV2
void conv_bn_relu6(model_builder& b, const std::string& p, i64 in, i64 out, i64 k, i64 stride, i64 groups) {
    b.then(p + "0", conv(in, out, k, stride, (k - 1) / 2, false, groups));
    b.then(p + "1", bn(out));
    b.then(p + "2", relu6{});
}

model mobilenet_v2(const shape& in) {
    model_builder b("mobilenet_v2");
    b.input("input", in);
    conv_bn_relu6(b, "features.0.", 3, 32, 3, 2, 1);
    struct setting {
        i64 t, c;
        int n;
        i64 s;
    };
    const setting settings[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
    i64 channels = 32;
    int idx = 1;
    for (const auto& st : settings) {
        for (int i = 0; i < st.n; ++i) {
            const i64 stride = i == 0 ? st.s : 1;
            const std::string p = "features." + std::to_string(idx++) + ".conv.";
            const i64 hidden = channels * st.t;
            const std::string x = b.current();
            int k = 0;
            if (st.t != 1) conv_bn_relu6(b, p + std::to_string(k++) + ".", channels, hidden, 1, 1, 1);
            conv_bn_relu6(b, p + std::to_string(k++) + ".", hidden, hidden, 3, stride, hidden);
            b.then(p + std::to_string(k++), conv(hidden, st.c, 1));
            const std::string y = b.then(p + std::to_string(k++), bn(st.c));
            if (stride == 1 && channels == st.c) b.add(p.substr(0, p.size() - 5) + "add", add{}, {x, y});
            channels = st.c;
        }
    }
    conv_bn_relu6(b, "features.18.", channels, 1280, 1, 1, 1);
    b.then("avgpool", adaptive(1, 1));
    b.then("flatten", flatten{});
    b.then("classifier.1", fc(1280, 1000));
    return b.build();
}

// ------------------------------------------------------------------ transformers
/// Multi-head self-attention core from q, k, v tensors of shape [B, S, heads*head_dim]; returns the
/// merged context [B, S, heads*head_dim]. Matmuls are counted in full (no causal skipping).
std::string attention(model_builder& b, const std::string& p, const std::string& q, const std::string& k,
                      const std::string& v, i64 heads, i64 head_dim) {
    b.add(p + "q_heads", view({0, 0, heads, head_dim}), {q});
    const std::string qh = b.then(p + "q_perm", swap(1, 2));  // B x heads x S x d
    b.add(p + "k_heads", view({0, 0, heads, head_dim}), {k});
    b.then(p + "k_perm", swap(1, 2));
    const std::string kt = b.then(p + "k_t", swap(2, 3));  // B x heads x d x S
    b.add(p + "v_heads", view({0, 0, heads, head_dim}), {v});
    const std::string vh = b.then(p + "v_perm", swap(1, 2));
    b.add(p + "scores", matmul{}, {qh, kt});
    b.then(p + "scale", scale{1.0 / std::sqrt(static_cast<double>(head_dim))});
    const std::string probs = b.then(p + "softmax", softmax{-1});
    b.add(p + "context", matmul{}, {probs, vh});
    b.then(p + "context_perm", swap(1, 2));
    return b.then(p + "context_merge", view({0, 0, heads * head_dim}));
}

model bert_base(const shape& in) {
    const i64 hidden = 768, heads = 12, ffn = 3072, layers = 12, vocab = 30522, max_pos = 512;
    const i64 seq = in[1];
    if (seq > max_pos)
        throw invalid_layer("model \"bert_base\": sequence length " + std::to_string(seq) +
                            " is longer than its " + std::to_string(max_pos) + " position embeddings");
    model_builder b("bert_base");
    b.input("input_ids", in, true);
    b.input("token_type_ids", in, true);
    b.input("position_ids", shape{1, seq}, true);
    b.add("embeddings.word_embeddings", embedding{vocab, hidden, {}}, {"input_ids"});
    b.add("embeddings.token_type_embeddings", embedding{2, hidden, {}}, {"token_type_ids"});
    b.add("embeddings.position_embeddings", embedding{max_pos, hidden, {}}, {"position_ids"});
    b.add("embeddings.add_token_type", add{}, {"embeddings.word_embeddings", "embeddings.token_type_embeddings"});
    b.add("embeddings.add_position", add{}, {"embeddings.add_token_type", "embeddings.position_embeddings"});
    std::string h = b.then("embeddings.LayerNorm", ln(hidden, 1e-12));
    for (i64 i = 0; i < layers; ++i) {
        const std::string p = "encoder.layer." + std::to_string(i) + ".";
        const std::string q = b.add(p + "attention.self.query", fc(hidden, hidden), {h});
        const std::string k = b.add(p + "attention.self.key", fc(hidden, hidden), {h});
        const std::string v = b.add(p + "attention.self.value", fc(hidden, hidden), {h});
        attention(b, p + "attention.self.", q, k, v, heads, hidden / heads);
        const std::string o = b.then(p + "attention.output.dense", fc(hidden, hidden));
        b.add(p + "attention.output.add", add{}, {o, h});
        const std::string a = b.then(p + "attention.output.LayerNorm", ln(hidden, 1e-12));
        b.then(p + "intermediate.dense", fc(hidden, ffn));
        b.then(p + "intermediate.gelu", gelu{});
        const std::string f = b.then(p + "output.dense", fc(ffn, hidden));
        b.add(p + "output.add", add{}, {f, a});
        h = b.then(p + "output.LayerNorm", ln(hidden, 1e-12));
    }
    b.then("pooler.first_token", slice{1, 0, 1, 1});
    b.then("pooler.squeeze", view({0, hidden}));
    b.then("pooler.dense", fc(hidden, hidden));
    b.then("pooler.activation", tanh_op{});
    return b.build();
}

model gpt2(const shape& in) {
    const i64 hidden = 768, heads = 12, layers = 12, vocab = 50257, max_pos = 1024;
    const i64 seq = in[1];
    if (seq > max_pos)
        throw invalid_layer("model \"gpt2\": sequence length " + std::to_string(seq) + " is longer than its " +
                            std::to_string(max_pos) + " position embeddings");
    model_builder b("gpt2");
    b.input("input_ids", in, true);
    b.input("position_ids", shape{1, seq}, true);
    b.add("transformer.wte", embedding{vocab, hidden, {}}, {"input_ids"});
    b.add("transformer.wpe", embedding{max_pos, hidden, {}}, {"position_ids"});
    std::string h = b.add("transformer.embed_add", add{}, {"transformer.wte", "transformer.wpe"});
    for (i64 i = 0; i < layers; ++i) {
        const std::string p = "transformer.h." + std::to_string(i) + ".";
        b.then(p + "ln_1", ln(hidden, 1e-5));
        const std::string qkv = b.then(p + "attn.c_attn", fc(hidden, 3 * hidden));
        const std::string q = b.add(p + "attn.q", slice{2, 0, hidden, 1}, {qkv});
        const std::string k = b.add(p + "attn.k", slice{2, hidden, 2 * hidden, 1}, {qkv});
        const std::string v = b.add(p + "attn.v", slice{2, 2 * hidden, 3 * hidden, 1}, {qkv});
        attention(b, p + "attn.", q, k, v, heads, hidden / heads);
        const std::string o = b.then(p + "attn.c_proj", fc(hidden, hidden));
        const std::string r1 = b.add(p + "add_1", add{}, {o, h});
        b.then(p + "ln_2", ln(hidden, 1e-5));
        b.then(p + "mlp.c_fc", fc(hidden, 4 * hidden));
        gelu g;
        g.tanh_approximation = true;  // GPT-2's "gelu_new"
        b.then(p + "mlp.gelu", g);
        const std::string m = b.then(p + "mlp.c_proj", fc(4 * hidden, hidden));
        h = b.add(p + "add_2", add{}, {m, r1});
    }
    b.then("transformer.ln_f", ln(hidden, 1e-5));
    b.then("lm_head", fc(hidden, vocab, false));
    b.tie_last("weight", "transformer.wte.weight");
    return b.build();
}

struct zoo_builder {
    zoo_entry entry;
    std::function<model(const shape&)> build;
};

const std::vector<zoo_builder>& builders() {
    static const std::vector<zoo_builder> all{
        {{"resnet18", "ResNet-18 (torchvision)", shape{1, 3, 224, 224}, false},
         [](const shape& s) { return resnet("resnet18", s, false, {2, 2, 2, 2}); }},
        {{"resnet34", "ResNet-34 (torchvision)", shape{1, 3, 224, 224}, false},
         [](const shape& s) { return resnet("resnet34", s, false, {3, 4, 6, 3}); }},
        {{"resnet50", "ResNet-50 v1.5 (torchvision)", shape{1, 3, 224, 224}, false},
         [](const shape& s) { return resnet("resnet50", s, true, {3, 4, 6, 3}); }},
        {{"resnet101", "ResNet-101 v1.5 (torchvision)", shape{1, 3, 224, 224}, false},
         [](const shape& s) { return resnet("resnet101", s, true, {3, 4, 23, 3}); }},
        {{"mobilenet_v2", "MobileNetV2 (torchvision)", shape{1, 3, 224, 224}, false}, mobilenet_v2},
        {{"vgg11", "VGG-11 (torchvision)", shape{1, 3, 224, 224}, false},
         [](const shape& s) { return vgg("vgg11", s, vgg_a, false); }},
        {{"vgg16", "VGG-16 (torchvision)", shape{1, 3, 224, 224}, false},
         [](const shape& s) { return vgg("vgg16", s, vgg_d, false); }},
        {{"vgg16_bn", "VGG-16 with BatchNorm (torchvision)", shape{1, 3, 224, 224}, false},
         [](const shape& s) { return vgg("vgg16_bn", s, vgg_d, true); }},
        {{"alexnet", "AlexNet (torchvision)", shape{1, 3, 224, 224}, false}, alexnet},
        {{"squeezenet1_0", "SqueezeNet 1.0 (torchvision)", shape{1, 3, 224, 224}, false}, squeezenet1_0},
        {{"bert_base", "BERT-base encoder with pooler (Hugging Face BertModel)", shape{1, 128}, true}, bert_base},
        {{"gpt2", "GPT-2 small with the LM head tied to the token embedding", shape{1, 1024}, true}, gpt2},
    };
    return all;
}

}  // namespace

const std::vector<zoo_entry>& zoo_models() {
    static const std::vector<zoo_entry> entries = [] {
        std::vector<zoo_entry> e;
        for (const auto& b : builders()) e.push_back(b.entry);
        return e;
    }();
    return entries;
}

model build_zoo_model(std::string_view name, std::optional<shape> input, std::optional<std::int64_t> batch) {
    for (const auto& b : builders()) {
        if (b.entry.name != name) continue;
        const zoo_entry& e = b.entry;
        shape in = e.default_input;
        if (input) {
            if (input->rank() != e.default_input.rank())
                throw invalid_layer("model \"" + e.name + "\": input " + input->to_string() + " has rank " +
                                    std::to_string(input->rank()) + ", expected " +
                                    (e.token_input ? "batch x sequence_length, e.g. " : "NCHW, e.g. ") +
                                    e.default_input.to_string());
            if (batch && (*input)[0] != *batch)
                throw invalid_layer("model \"" + e.name + "\": --batch " + std::to_string(*batch) +
                                    " disagrees with the batch dimension of --input " + input->to_string());
            in = *input;
        } else if (batch) {
            if (*batch < 1) throw invalid_layer("model \"" + e.name + "\": batch " + std::to_string(*batch) + " must be >= 1");
            in[0] = *batch;
        }
        return b.build(in);
    }
    std::string list;
    for (const auto& e : zoo_models()) list += (list.empty() ? "" : ", ") + e.name;
    throw error("unknown model \"" + std::string(name) + "\" (built-in models: " + list + ")");
}

}  // namespace ridgeline::core
