// The model zoo. Architectures follow torchvision 0.15 (resnet, vgg, alexnet, squeezenet, mobilenet_v2)
// and Hugging Face transformers (BertModel, GPT2LMHeadModel); layer names are their module paths.
#include "ridgeline/core/zoo.hpp"

#include <cmath>
#include <functional>

#include "ridgeline/core/error.hpp"
#include "ridgeline/core/suggest.hpp"

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

/// VGG's and AlexNet's head: average pool to pool x pool, flatten, then classifier = fc 4096, relu, fc 4096, relu,
/// fc 1000 with the first fc at index `first` (the dropouts, not modelled, take the indices between: AlexNet has one
/// before each of its first two fcs, VGG one after each relu).
void classifier_head(model_builder& b, i64 channels, i64 pool, int first) {
    const auto at = [](int index) { return "classifier." + std::to_string(index); };
    b.then("avgpool", adaptive(pool, pool));
    b.then("flatten", flatten{});
    b.then(at(first), fc(channels * pool * pool, 4096));
    b.then(at(first + 1), relu{});
    b.then(at(first + 3), fc(4096, 4096));
    b.then(at(first + 4), relu{});
    b.then(at(6), fc(4096, 1000));
}

// ------------------------------------------------------------------ ResNet
/// The end of a residual block: `main` (the block's last layer) plus its input `x`, which a 1x1 conv and a batch
/// norm ("downsample") bring to `out` channels and the block's stride where the shape changes; then the relu.
void join_residual(model_builder& b, const std::string& p, const std::string& x, const std::string& main, i64 inplanes,
                   i64 out, i64 stride, const std::string& relu_name) {
    std::string identity = x;
    if (stride != 1 || inplanes != out) {
        b.add(p + "downsample.0", conv(inplanes, out, 1, stride), {x});
        identity = b.then(p + "downsample.1", bn(out));
    }
    b.add(p + "add", add{}, {main, identity});
    b.then(p + relu_name, relu{});
}

void basic_block(model_builder& b, const std::string& p, i64 inplanes, i64 planes, i64 stride) {
    const std::string x = b.current();
    b.then(p + "conv1", conv(inplanes, planes, 3, stride, 1));
    b.then(p + "bn1", bn(planes));
    b.then(p + "relu1", relu{});
    b.then(p + "conv2", conv(planes, planes, 3, 1, 1));
    const std::string main = b.then(p + "bn2", bn(planes));
    join_residual(b, p, x, main, inplanes, planes, stride, "relu2");
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
    join_residual(b, p, x, main, inplanes, out, stride, "relu3");
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
    classifier_head(b, 512, 7, 0);
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
    classifier_head(b, 256, 6, 1);
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

struct zoo_builder {
    zoo_entry entry;
    std::function<model(const shape&)> build;  // null: a transformer (named_transformers)
};

/// The named transformer behind a zoo entry (bert_base is bert-base).
const named_transformer& transformer_of(const std::string& name) {
    const named_transformer* n = find_named_transformer(name == "bert_base" ? "bert-base" : name);
    if (!n) throw error("model \"" + name + "\": no such transformer");
    return *n;
}

const std::vector<zoo_builder>& builders() {
    static const std::vector<zoo_builder> all{
        {{"resnet18", "ResNet-18 (torchvision)", shape{1, 3, 224, 224}, false, "torchvision", false},
         [](const shape& s) { return resnet("resnet18", s, false, {2, 2, 2, 2}); }},
        {{"resnet34", "ResNet-34 (torchvision)", shape{1, 3, 224, 224}, false, "torchvision", false},
         [](const shape& s) { return resnet("resnet34", s, false, {3, 4, 6, 3}); }},
        {{"resnet50", "ResNet-50 v1.5 (torchvision)", shape{1, 3, 224, 224}, false, "torchvision", false},
         [](const shape& s) { return resnet("resnet50", s, true, {3, 4, 6, 3}); }},
        {{"resnet101", "ResNet-101 v1.5 (torchvision)", shape{1, 3, 224, 224}, false, "torchvision", false},
         [](const shape& s) { return resnet("resnet101", s, true, {3, 4, 23, 3}); }},
        {{"mobilenet_v2", "MobileNetV2 (torchvision)", shape{1, 3, 224, 224}, false, "torchvision", false}, mobilenet_v2},
        {{"vgg11", "VGG-11 (torchvision)", shape{1, 3, 224, 224}, false, "torchvision", false},
         [](const shape& s) { return vgg("vgg11", s, vgg_a, false); }},
        {{"vgg16", "VGG-16 (torchvision)", shape{1, 3, 224, 224}, false, "torchvision", false},
         [](const shape& s) { return vgg("vgg16", s, vgg_d, false); }},
        {{"vgg16_bn", "VGG-16 with BatchNorm (torchvision)", shape{1, 3, 224, 224}, false, "torchvision", false},
         [](const shape& s) { return vgg("vgg16_bn", s, vgg_d, true); }},
        {{"alexnet", "AlexNet (torchvision)", shape{1, 3, 224, 224}, false, "torchvision", false}, alexnet},
        {{"squeezenet1_0", "SqueezeNet 1.0 (torchvision)", shape{1, 3, 224, 224}, false, "torchvision", false}, squeezenet1_0},
        {{"bert_base", "BERT-base encoder with pooler (Hugging Face BertModel); bert-base at sequence 128",
          shape{1, 128}, true, "google-bert/bert-base-uncased", true},
         nullptr},
    };
    return all;
}

}  // namespace

const std::vector<zoo_entry>& zoo_models() {
    static const std::vector<zoo_entry> entries = [] {
        std::vector<zoo_entry> e;
        for (const auto& b : builders()) {
            e.push_back(b.entry);
        }
        for (const auto& n : named_transformers())
            e.push_back({n.name, n.description, shape{1, n.default_seq}, true, n.config.source, true});
        return e;
    }();
    return entries;
}

transformer_run transformer_run_of(const std::string& model_name, const zoo_request& q, std::int64_t default_seq) {
    const std::string where = "model \"" + model_name + "\": ";
    transformer_run r;
    r.phase = q.phase;
    if (q.input) {
        if (q.input->rank() != 2)
            throw request_error(where + "input " + q.input->to_string() + " has rank " + std::to_string(q.input->rank()) +
                                ", expected batch x sequence_length of token ids, e.g. 1x" + std::to_string(default_seq), {"input"});
        if (q.batch && (*q.input)[0] != *q.batch)
            throw request_error(where + "batch " + std::to_string(*q.batch) +
                                " disagrees with the batch dimension of the input " + q.input->to_string(), {"batch", "input"});
    }
    r.batch = q.batch ? *q.batch : q.input ? (*q.input)[0] : 1;
    if (r.batch < 1) throw request_error(where + "batch " + std::to_string(r.batch) + " must be >= 1", {"batch"});
    if (q.phase == transformer_phase::decode) {
        if (q.seq) throw request_error(where + "a sequence length is a prefill's; a decode step has one new token (give the KV cache length)", {"seq", "phase"});
        if (!q.kv_len) throw request_error(where + "a decode step needs the KV cache length: the tokens already in the KV cache", {"kv_len"});
        if (q.input && (*q.input)[1] != 1)
            throw request_error(where + "a decode step reads one new token per sequence: the input " +
                                q.input->to_string() + " has " + std::to_string((*q.input)[1]), {"input"});
        r.kv_len = *q.kv_len;
        return r;
    }
    if (q.kv_len) throw request_error(where + "a KV cache length applies to a decode step", {"kv_len", "phase"});
    if (q.input && q.seq && (*q.input)[1] != *q.seq)
        throw request_error(where + "sequence length " + std::to_string(*q.seq) + " disagrees with the sequence of the input " +
                            q.input->to_string(), {"seq", "input"});
    r.seq = q.seq ? *q.seq : q.input ? (*q.input)[1] : default_seq;
    return r;
}

model build_zoo_model(std::string_view name, const zoo_request& q) {
    for (const auto& b : builders())
        if (b.entry.name == name && b.build) {
            if (q.phase_given || q.seq || q.kv_len)
                throw request_error("model \"" + b.entry.name + "\" is not a transformer: a phase, a sequence length or a KV cache "
                            "length applies to transformers", {"phase", "seq", "kv_len"});
            return build_zoo_model(name, q.input, q.batch);
        }
    for (const auto& e : zoo_models())
        if (e.name == name && e.transformer) {
            const named_transformer& n = transformer_of(e.name);
            transformer_config c = n.config;
            c.name = e.name;
            return build_transformer(c, transformer_run_of(e.name, q, n.default_seq));
        }
    return build_zoo_model(name, q.input, q.batch);  // the unknown-name error
}

model build_zoo_model(std::string_view name, std::optional<shape> input, std::optional<std::int64_t> batch) {
    for (const auto& b : builders()) {
        if (b.entry.name != name || !b.build) continue;
        const zoo_entry& e = b.entry;
        shape in = e.default_input;
        if (input) {
            if (input->rank() != e.default_input.rank())
                throw request_error("model \"" + e.name + "\": input " + input->to_string() + " has rank " +
                                    std::to_string(input->rank()) + ", expected " +
                                    (e.token_input ? "batch x sequence_length, e.g. " : "NCHW, e.g. ") +
                                    e.default_input.to_string(), {"input"});
            if (batch && (*input)[0] != *batch)
                throw request_error("model \"" + e.name + "\": batch " + std::to_string(*batch) +
                                    " disagrees with the batch dimension of the input " + input->to_string(), {"batch", "input"});
            in = *input;
        } else if (batch) {
            if (*batch < 1) throw request_error("model \"" + e.name + "\": batch " + std::to_string(*batch) + " must be >= 1", {"batch"});
            in[0] = *batch;
        }
        return b.build(in);
    }
    for (const auto& e : zoo_models())
        if (e.name == name && e.transformer) return build_zoo_model(name, zoo_request{input, batch, {}, false, {}, {}});
    std::string list;
    std::vector<std::string> names;
    for (const auto& e : zoo_models()) {
        list += (list.empty() ? "" : ", ") + e.name;
        names.push_back(e.name);
    }
    // a request this ridgeline cannot take (exit 2, as a usage mistake), with the name most likely meant
    throw request_error("unknown model \"" + printable(name) + "\"" + did_you_mean(name, names) + " (built-in models: " +
                        list + ")", {"model"});
}

}  // namespace ridgeline::core
