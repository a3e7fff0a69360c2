// The differential generator and runner (differential.hpp).
#include "differential.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "ridgeline/profiler/profiler.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/cpu/cpu_backends.hpp"
#include "ridgeline/cpu/reference.hpp"

namespace ridgeline::test::differential {

namespace {

using i64 = std::int64_t;

/// Draws of one case: the random source and the size class.
struct draw {
    std::mt19937_64& rng;
    size_class size;

    i64 between(i64 lo, i64 hi) { return std::uniform_int_distribution<i64>(lo, hi)(rng); }
    bool coin(double p = 0.5) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }
    template <class T>
    const T& pick(const std::vector<T>& v) {
        return v[static_cast<std::size_t>(between(0, static_cast<i64>(v.size()) - 1))];
    }
    [[nodiscard]] bool tiny() const { return size == size_class::tiny; }
    /// A dimension of an activation: 1..max (smaller for tiny cases).
    i64 dim(i64 max_normal, i64 max_tiny) { return between(1, tiny() ? max_tiny : max_normal); }
    /// Channels of an image: a quarter of the time 8, 16 or 32 (normal cases), where oneDNN gives 4-D activations
    /// its blocked layouts (nChw8c, nChw16c; backends/dnnl_common.hpp), else 1..max.
    i64 channels(i64 max_normal, i64 max_tiny) {
        if (!tiny() && coin(0.25)) return pick(std::vector<i64>{8, 16, 32});
        return dim(max_normal, max_tiny);
    }
    /// A random shape of rank lo..hi with dimensions 1..max.
    core::shape any_shape(std::size_t lo, std::size_t hi, i64 max_normal, i64 max_tiny) {
        const auto rank = static_cast<std::size_t>(between(static_cast<i64>(lo), static_cast<i64>(hi)));
        std::vector<i64> d(rank);
        for (auto& x : d) x = dim(max_normal, max_tiny);
        return core::shape(d);
    }
    /// A dimension index in [-rank, rank) (negative half the time).
    i64 axis(std::size_t rank) {
        const i64 a = between(0, static_cast<i64>(rank) - 1);
        return coin() ? a - static_cast<i64>(rank) : a;
    }
};

/// "k=v" pairs; keys at their default are written only now and then, so the parser's defaults are used too.
struct attrs {
    std::vector<std::string> items;
    void add(const std::string& key, const std::string& value) { items.push_back(key + "=" + value); }
    void add(const std::string& key, i64 value) { add(key, std::to_string(value)); }
    void maybe(draw& d, const std::string& key, const std::string& value, bool is_default) {
        if (!is_default || d.coin(0.3)) add(key, value);
    }
    [[nodiscard]] std::string text(std::string_view kind) const {
        std::string s(kind);
        for (std::size_t i = 0; i < items.size(); ++i) s += (i == 0 ? ":" : ",") + items[i];
        return s;
    }
};

std::string pair_text(i64 h, i64 w) { return h == w ? std::to_string(h) : std::to_string(h) + "x" + std::to_string(w); }
std::string bool_text(bool b) { return b ? "true" : "false"; }

core::shape image(i64 n, i64 c, i64 h, i64 w) { return core::shape{n, c, h, w}; }

// ------------------------------------------------------------------ one generator per op

layer_case gen_linear(draw& d) {
    const i64 in = d.dim(40, 6), out = d.dim(40, 6);
    attrs a;
    a.add("in_features", in);
    a.add("out_features", out);
    const bool bias = d.coin(0.7);
    a.maybe(d, "bias", bool_text(bias), bias);
    core::shape x = d.any_shape(0, 3, 5, 3);
    auto dims = x.dims();
    dims.push_back(in);
    return {a.text("linear"), {core::shape(dims)}};
}

layer_case gen_matmul(draw& d) {
    // batch dims broadcast: each leading dim equal, or 1 on one side; ranks may differ
    const auto ra = static_cast<std::size_t>(d.between(2, 4)), rb = static_cast<std::size_t>(d.between(2, 4));
    const std::size_t batch = std::max(ra, rb) - 2;
    std::vector<i64> full(batch);
    for (auto& b : full) b = d.dim(4, 2);
    auto batch_dims = [&](std::size_t rank) {
        std::vector<i64> out;
        for (std::size_t i = batch - (rank - 2); i < batch; ++i) out.push_back(d.coin(0.25) ? 1 : full[i]);
        return out;
    };
    const i64 m = d.dim(20, 4), k = d.dim(20, 4), n = d.dim(20, 4);
    auto a = batch_dims(ra), b = batch_dims(rb);
    a.push_back(m);
    a.push_back(k);
    b.push_back(k);
    b.push_back(n);
    if (d.coin(0.15)) {  // one tensor read twice: matmul(x, transpose(x)), x [..., m, k]
        auto t = a;
        std::swap(t[t.size() - 1], t[t.size() - 2]);
        return {"matmul", {core::shape(a), core::shape(t)}, true};
    }
    return {"matmul", {core::shape(a), core::shape(b)}};
}

layer_case gen_embedding(draw& d) {
    attrs a;
    a.add("num_embeddings", d.dim(50, 8));
    a.add("embedding_dim", d.dim(20, 5));
    const core::shape ids = d.any_shape(1, 3, 6, 3);
    if (d.coin(0.25)) {  // ids the layer holds (a registered index buffer): no input
        a.add("indices", ids.to_string());
        return {a.text("embedding"), {}};
    }
    return {a.text("embedding"), {ids}};
}

layer_case gen_conv2d(draw& d) {
    i64 groups = 1, in_c = 1, out_c = 1;
    const double kind = std::uniform_real_distribution<double>(0, 1)(d.rng);
    if (kind < 0.25) {  // depthwise, channel multiplier 1 or 2
        groups = d.channels(8, 3);
        in_c = groups;
        out_c = groups * d.between(1, 2);
    } else {
        groups = kind < 0.5 ? d.between(2, 4) : 1;
        in_c = groups == 1 ? d.channels(4, 2) : groups * d.dim(4, 2);
        out_c = groups == 1 ? d.channels(4, 2) : groups * d.dim(4, 2);
    }
    const i64 kh = d.dim(5, 3), kw = d.coin(0.6) ? kh : d.dim(5, 3);
    const i64 sh = d.dim(3, 2), sw = d.coin(0.6) ? sh : d.dim(3, 2);
    const i64 dh = d.coin(0.6) ? 1 : d.dim(3, 2), dw = d.coin(0.6) ? dh : d.dim(3, 2);
    attrs a;
    a.add("in_channels", in_c);
    a.add("out_channels", out_c);
    a.add("kernel_size", pair_text(kh, kw));
    a.maybe(d, "stride", pair_text(sh, sw), sh == 1 && sw == 1);
    i64 pt = 0, pl = 0, pb = 0, pr = 0;
    const i64 mode = d.between(0, 4);
    if (mode == 0 && sh == 1 && sw == 1) {
        a.add("padding", "same");
        pt = pb = dh * (kh - 1);  // total, for the size check below
        pl = pr = dw * (kw - 1);
    } else if (mode == 1) {
        a.add("padding", "valid");
    } else if (mode == 2) {
        pt = pb = d.between(0, 3);
        pl = pr = d.coin(0.6) ? pt : d.between(0, 3);
        a.maybe(d, "padding", pair_text(pt, pl), pt == 0 && pl == 0);
    } else {
        pt = d.between(0, 3), pl = d.between(0, 3), pb = d.between(0, 3), pr = d.between(0, 3);
        a.add("padding",
              std::to_string(pt) + "x" + std::to_string(pl) + "x" + std::to_string(pb) + "x" + std::to_string(pr));
    }
    a.maybe(d, "dilation", pair_text(dh, dw), dh == 1 && dw == 1);
    a.maybe(d, "groups", std::to_string(groups), groups == 1);
    const bool bias = d.coin(0.7);
    a.maybe(d, "bias", bool_text(bias), bias);
    // input just large enough for one output, plus a few more
    const i64 ext_h = dh * (kh - 1) + 1, ext_w = dw * (kw - 1) + 1;
    const i64 h = std::max<i64>(1, ext_h - pt - pb) + d.between(0, d.tiny() ? 2 : 9);
    const i64 w = std::max<i64>(1, ext_w - pl - pr) + d.between(0, d.tiny() ? 2 : 9);
    return {a.text("conv2d"), {image(d.dim(3, 1), in_c, h, w)}};
}

/// kernel, stride and padding (at most half the kernel, as PyTorch requires) of a pool; returns the input.
core::shape pool_common(draw& d, attrs& a, i64 dil_h, i64 dil_w, bool& ceil_mode) {
    const i64 kh = d.dim(4, 3), kw = d.coin(0.6) ? kh : d.dim(4, 3);
    a.add("kernel_size", pair_text(kh, kw));
    const bool default_stride = d.coin(0.3);
    const i64 sh = default_stride ? kh : d.dim(3, 2), sw = default_stride ? kw : (d.coin(0.6) ? sh : d.dim(3, 2));
    if (!default_stride || d.coin(0.3)) a.add("stride", pair_text(sh, sw));
    const i64 ext_h = dil_h * (kh - 1) + 1, ext_w = dil_w * (kw - 1) + 1;
    const i64 ph = d.between(0, ext_h / 2 < kh / 2 ? ext_h / 2 : kh / 2),
              pw = d.between(0, ext_w / 2 < kw / 2 ? ext_w / 2 : kw / 2);
    a.maybe(d, "padding", pair_text(ph, pw), ph == 0 && pw == 0);
    ceil_mode = d.coin();
    a.maybe(d, "ceil_mode", bool_text(ceil_mode), !ceil_mode);
    i64 h = std::max<i64>(1, ext_h - 2 * ph) + d.between(0, d.tiny() ? 3 : 12);
    i64 w = std::max<i64>(1, ext_w - 2 * pw) + d.between(0, d.tiny() ? 3 : 12);
    if (ceil_mode && d.coin(0.2)) {  // a window larger than the padded input, which ceil_mode allows (PyTorch too)
        h = d.between(1, std::max<i64>(1, ext_h - 2 * ph));
        w = d.between(1, std::max<i64>(1, ext_w - 2 * pw));
    }
    return image(d.dim(2, 1), d.channels(6, 2), h, w);
}

layer_case gen_max_pool2d(draw& d) {
    attrs a;
    const i64 dh = d.coin(0.6) ? 1 : d.dim(3, 2), dw = d.coin(0.6) ? dh : d.dim(3, 2);
    bool ceil_mode = false;
    const core::shape x = pool_common(d, a, dh, dw, ceil_mode);
    a.maybe(d, "dilation", pair_text(dh, dw), dh == 1 && dw == 1);
    return {a.text("max_pool2d"), {x}};
}

layer_case gen_avg_pool2d(draw& d) {
    attrs a;
    bool ceil_mode = false;
    const core::shape x = pool_common(d, a, 1, 1, ceil_mode);
    const bool include = d.coin();
    a.maybe(d, "count_include_pad", bool_text(include), include);
    return {a.text("avg_pool2d"), {x}};
}

layer_case gen_adaptive_avg_pool2d(draw& d) {
    const i64 oh = d.dim(7, 3), ow = d.coin(0.6) ? oh : d.dim(7, 3);
    // half the time a multiple of the output (even windows), else any size
    const i64 h = d.coin() ? oh * d.dim(4, 2) : d.dim(16, 6), w = d.coin() ? ow * d.dim(4, 2) : d.dim(16, 6);
    attrs a;
    a.add("output_size", pair_text(oh, ow));
    return {a.text("adaptive_avg_pool2d"), {image(d.dim(2, 1), d.channels(6, 2), h, w)}};
}

layer_case gen_batch_norm2d(draw& d) {
    const i64 c = d.channels(16, 4);
    attrs a;
    a.add("num_features", c);
    a.maybe(d, "eps", d.pick(std::vector<std::string>{"1e-05", "0.001", "0.1"}), false);
    const bool affine = d.coin(0.7);
    a.maybe(d, "affine", bool_text(affine), affine);
    return {a.text("batch_norm2d"), {image(d.dim(3, 1), c, d.dim(9, 3), d.dim(9, 3))}};
}

/// What layer_norm and rms_norm draw alike: an input, its last k dimensions as normalized_shape, an eps of
/// `eps_choices` (always written), and elementwise_affine (returned: 70% true).
bool draw_norm(draw& d, core::shape& x, attrs& a, std::vector<std::string> eps_choices) {
    x = d.any_shape(1, 4, 12, 4);
    const auto k = static_cast<std::size_t>(d.between(1, static_cast<i64>(x.rank())));
    std::string ns;
    for (std::size_t i = x.rank() - k; i < x.rank(); ++i) ns += (ns.empty() ? "" : "x") + std::to_string(x[i]);
    a.add("normalized_shape", ns);
    a.maybe(d, "eps", d.pick(eps_choices), false);
    const bool affine = d.coin(0.7);
    a.maybe(d, "elementwise_affine", bool_text(affine), affine);
    return affine;
}

layer_case gen_layer_norm(draw& d) {
    core::shape x;
    attrs a;
    if (draw_norm(d, x, a, {"1e-05", "1e-12", "0.01"})) {
        const bool bias = d.coin(0.7);
        a.maybe(d, "bias", bool_text(bias), bias);
    }
    return {a.text("layer_norm"), {x}};
}

layer_case gen_rms_norm(draw& d) {
    core::shape x;
    attrs a;
    draw_norm(d, x, a, {"1e-06", "1e-05", "0.01"});
    return {a.text("rms_norm"), {x}};
}

/// [B, heads, S, D] with D even; every scaling type with its keys (Hugging Face's modeling_rope_utils.py).
layer_case gen_rotary(draw& d) {
    core::shape x{d.dim(2, 1), d.dim(4, 2), d.dim(9, 3), 2 * d.dim(8, 2)};
    attrs a;
    a.maybe(d, "theta", d.pick(std::vector<std::string>{"10000", "500000", "1000000", "100"}), false);
    const i64 offset = d.coin(0.5) ? d.between(0, 3000) : 0;
    a.maybe(d, "offset", std::to_string(offset), offset == 0);
    const std::string sc = d.pick(std::vector<std::string>{"none", "linear", "dynamic", "yarn", "llama3"});
    a.maybe(d, "scaling", sc, sc == "none");
    if (sc != "none") a.add("factor", d.pick(std::vector<std::string>{"2", "4", "8", "32"}));
    if (sc == "dynamic" || sc == "yarn") a.add("max_position_embeddings", d.pick(std::vector<i64>{16, 512, 4096}));
    if (sc == "dynamic" && x[3] <= 2) x = core::shape{x[0], x[1], x[2], 4};  // its exponent is D / (D - 2)
    if (sc == "yarn") {
        a.maybe(d, "attention_factor", d.pick(std::vector<std::string>{"1.2", "0"}), false);
        a.maybe(d, "beta_fast", d.pick(std::vector<std::string>{"32", "16"}), false);
        a.maybe(d, "beta_slow", d.pick(std::vector<std::string>{"1", "2"}), false);
    }
    if (sc == "llama3") {
        a.add("original_max_position_embeddings", d.pick(std::vector<i64>{8192, 64, 1024}));
        a.add("low_freq_factor", d.pick(std::vector<std::string>{"1", "2"}));
        a.add("high_freq_factor", d.pick(std::vector<std::string>{"4", "8"}));
    }
    return {a.text("rotary"), {x}};
}

/// Queries [B, H, Sq, D], keys and values [B, KVH, Skv, D / Dv] (H a multiple of KVH), causal with or without a
/// window (Skv >= Sq), or an additive mask broadcast from one of its shapes.
layer_case gen_attention(draw& d) {
    const i64 b = d.dim(2, 1), kv = d.dim(3, 1), group = d.dim(3, 2), sq = d.dim(9, 3), dh = d.dim(16, 4);
    const bool causal = d.coin(0.5);
    const i64 skv = causal ? sq + d.between(0, d.tiny() ? 2 : 12) : d.dim(12, 4);
    const i64 dv = d.coin(0.8) ? dh : d.dim(12, 3);
    attrs a;
    a.maybe(d, "is_causal", bool_text(causal), !causal);
    a.maybe(d, "scale", d.pick(std::vector<std::string>{"0.125", "1", "0"}), false);
    if (causal) a.maybe(d, "sliding_window", std::to_string(d.coin(0.5) ? d.between(1, skv) : 0), true);
    core::shapes in{core::shape{b, kv * group, sq, dh}, core::shape{b, kv, skv, dh}, core::shape{b, kv, skv, dv}};
    if (!causal && d.coin(0.5))
        in.push_back(d.pick(std::vector<core::shape>{core::shape{b, kv * group, sq, skv}, core::shape{b, 1, 1, skv},
                                                     core::shape{1, 1, sq, skv}, core::shape{skv}}));
    return {a.text("attention"), in};
}

/// A KV cache of `past` tokens appending new ones.
layer_case gen_kv_cache(draw& d) {
    const i64 b = d.dim(2, 1), h = d.dim(4, 2), dh = d.dim(16, 4), past = d.between(0, d.tiny() ? 3 : 20);
    const i64 fresh = d.coin(0.7) ? 1 : d.dim(4, 2);
    attrs a;
    a.add("batch", b);
    a.add("num_heads", h);
    a.add("head_dim", dh);
    a.add("past", past);
    a.maybe(d, "new_tokens", std::to_string(fresh), fresh == 1);
    return {a.text("kv_cache"), {core::shape{b, h, fresh, dh}}};
}

/// An activation for an elementwise op: now and then an image whose channels give a blocked layout, else any rank.
core::shape activation(draw& d, i64 max_normal, i64 max_tiny) {
    if (d.coin(0.2)) return image(d.dim(2, 1), d.channels(max_normal, max_tiny), d.dim(6, 3), d.dim(6, 3));
    return d.any_shape(1, 4, max_normal, max_tiny);
}

layer_case gen_unary(draw& d, std::string_view kind) {
    attrs a;
    if (kind == "gelu") {
        const bool tanh = d.coin();
        a.maybe(d, "approximate", tanh ? "tanh" : "none", !tanh);
    } else if (kind == "scale") {
        a.add("factor", d.pick(std::vector<std::string>{"0.125", "-2", "3.5", "1", "0"}));
    } else if (kind == "pow") {
        a.add("exponent", d.pick(std::vector<std::string>{"2", "3", "0.5", "1.5", "1"}));  // of |x| (run_case)
    } else if (kind == "softmax") {
        const core::shape x = activation(d, 12, 4);
        const i64 dim = d.axis(x.rank());
        a.maybe(d, "dim", std::to_string(dim), dim == -1);
        return {a.text(kind), {x}};
    }
    return {a.text(kind), {activation(d, 12, 4)}};
}

layer_case gen_binary(draw& d, std::string_view kind) {
    // numpy broadcasting: align from the right; each aligned pair equal, or 1 on one side
    const core::shape full = activation(d, 8, 3);
    auto side = [&] {
        const auto rank = static_cast<std::size_t>(d.between(1, static_cast<i64>(full.rank())));
        std::vector<i64> out;
        for (std::size_t i = full.rank() - rank; i < full.rank(); ++i) out.push_back(d.coin(0.3) ? 1 : full[i]);
        return core::shape(out);
    };
    if (d.coin(0.15)) return {std::string(kind), {full, full}, true};  // one tensor read twice: add(x, x)
    core::shape a = d.coin(0.3) ? full : side();
    core::shape b = d.coin(0.3) ? full : side();
    return {std::string(kind), {a, b}};
}

layer_case gen_where(draw& d) {
    // condition, input, other: each the full shape or a broadcast side of it (the condition true where > 0: the
    // harness's inputs in [-1, 1] pick both ways)
    const core::shape full = activation(d, 8, 3);
    auto side = [&] {
        if (d.coin(0.4)) return full;
        const auto rank = static_cast<std::size_t>(d.between(1, static_cast<i64>(full.rank())));
        std::vector<i64> out;
        for (std::size_t i = full.rank() - rank; i < full.rank(); ++i) out.push_back(d.coin(0.3) ? 1 : full[i]);
        return core::shape(out);
    };
    return {"where", {side(), side(), side()}};
}

layer_case gen_expand(draw& d) {
    // the input: the output's trailing dims, each 1 now and then; the size: the output's, -1 where kept
    const core::shape out = d.any_shape(1, 4, 6, 3);
    const auto rank = static_cast<std::size_t>(d.between(1, static_cast<i64>(out.rank())));
    std::vector<i64> in;
    std::string size;
    for (std::size_t i = 0; i < out.rank(); ++i) {
        const bool kept = i >= out.rank() - rank;
        const bool one = kept && d.coin(0.5);
        if (kept) in.push_back(one ? 1 : out[i]);
        const bool minus = kept && !one && d.coin(0.3);
        size += (i ? "x" : "") + (minus ? std::string("-1") : std::to_string(out[i]));
    }
    return {"expand:size=" + size, {core::shape(in)}};
}

layer_case gen_concat(draw& d) {
    const core::shape base = d.any_shape(1, 4, 6, 3);
    const i64 dim = d.axis(base.rank());
    const auto at = static_cast<std::size_t>(dim < 0 ? dim + static_cast<i64>(base.rank()) : dim);
    std::vector<core::shape> in;
    const i64 count = d.between(1, 4);
    for (i64 i = 0; i < count; ++i) {
        auto dims = base.dims();
        dims[at] = d.dim(5, 3);
        in.emplace_back(dims);
    }
    attrs a;
    a.maybe(d, "dim", std::to_string(dim), dim == 1);
    if (count > 1 && d.coin(0.15)) return {a.text("concat"), std::vector<core::shape>(in.size(), in[0]), true};
    return {a.text("concat"), in};
}

layer_case gen_flatten(draw& d) {
    const core::shape x = d.any_shape(1, 5, 6, 3);
    const auto r = static_cast<i64>(x.rank());
    i64 s = d.between(0, r - 1), e = d.between(s, r - 1);
    if (d.coin()) s -= r;
    if (d.coin()) e -= r;
    attrs a;
    a.maybe(d, "start_dim", std::to_string(s), s == 1);
    a.maybe(d, "end_dim", std::to_string(e), e == -1);
    return {a.text("flatten"), {x}};
}

layer_case gen_reshape(draw& d) {
    const core::shape x = d.any_shape(1, 4, 6, 3);
    // the target: the input's element count split into 1-4 factors, one of them -1 now and then, or 0 (copy)
    std::vector<i64> factors;
    i64 n = x.numel();
    const i64 parts = d.between(1, 4);
    for (i64 i = 0; i + 1 < parts; ++i) {
        std::vector<i64> divisors;
        for (i64 k = 1; k <= n; ++k)
            if (n % k == 0) divisors.push_back(k);
        const i64 f = d.pick(divisors);
        factors.push_back(f);
        n /= f;
    }
    factors.push_back(n);
    std::shuffle(factors.begin(), factors.end(), d.rng);
    std::string t;
    const auto minus = d.coin(0.4) ? d.between(0, static_cast<i64>(factors.size()) - 1) : -1;
    for (std::size_t i = 0; i < factors.size(); ++i) {
        std::string v = std::to_string(factors[i]);
        if (static_cast<i64>(i) == minus)
            v = "-1";
        else if (i < x.rank() && factors[i] == x[i] && d.coin(0.3))
            v = "0";
        t += (t.empty() ? "" : "x") + v;
    }
    return {"reshape:shape=" + t, {x}};
}

layer_case gen_transpose(draw& d) {
    const core::shape x = d.any_shape(1, 5, 6, 3);
    attrs a;
    a.add("dim0", d.axis(x.rank()));
    a.add("dim1", d.axis(x.rank()));
    return {a.text("transpose"), {x}};
}

layer_case gen_slice(draw& d) {
    const core::shape x = d.any_shape(1, 4, 9, 4);
    const i64 dim = d.axis(x.rank());
    const i64 size = x[static_cast<std::size_t>(dim < 0 ? dim + static_cast<i64>(x.rank()) : dim)];
    attrs a;
    a.maybe(d, "dim", std::to_string(dim), dim == 0);
    // start and end anywhere in [-size-2, size+2]: negative, past the end and clamped; the draw is redone if empty
    const i64 start = d.coin(0.3) ? 0 : d.between(-size - 2, size + 1);
    a.maybe(d, "start", std::to_string(start), start == 0);
    if (d.coin(0.7)) a.add("end", d.between(-size - 1, size + 2));
    const i64 step = d.between(1, 3);
    a.maybe(d, "step", std::to_string(step), step == 1);
    return {a.text("slice"), {x}};
}

layer_case gen_parameter(draw& d) {
    // a held tensor; sometimes broadcast: dimensions of size 1 repeated, a leading one added
    const core::shape full = d.any_shape(1, 4, 9, 4);
    std::vector<i64> stored = full.dims();
    const bool expand = d.coin(0.5);
    if (expand)
        for (auto& x : stored)
            if (d.coin(0.5)) x = 1;
    auto text = [](const std::vector<i64>& v) {
        std::string t;
        for (std::size_t i = 0; i < v.size(); ++i) t += (i ? "x" : "") + std::to_string(v[i]);
        return t;
    };
    std::vector<i64> out = full.dims();
    if (expand && d.coin(0.3)) out.insert(out.begin(), d.between(1, 3));
    attrs a;
    a.add("shape", text(stored));
    if (expand) a.add("expand", text(out));
    if (d.coin(0.3)) a.add("trainable", "false");
    return {a.text("parameter"), {}};
}

layer_case gen_reduce(draw& d, std::string_view kind) {
    // any subset of the dimensions (negative or not), none for every one; keepdim either way
    const core::shape x = d.any_shape(1, 4, 9, 4);
    attrs a;
    std::string dims;
    if (d.coin(0.85))
        for (std::size_t k = 0; k < x.rank(); ++k)
            if (d.coin(0.5)) {
                const i64 v = d.coin(0.3) ? static_cast<i64>(k) - static_cast<i64>(x.rank()) : static_cast<i64>(k);
                dims += (dims.empty() ? "" : "x") + std::to_string(v);
            }
    if (!dims.empty()) a.add("dim", dims);
    const bool keep = d.coin(0.5);
    a.maybe(d, "keepdim", bool_text(keep), !keep);
    return {a.text(kind), {x}};
}

layer_case gen_pad(draw& d) {
    // 1..rank (before, after) pairs from the last dimension, 0..3 each (reflect: below the size, redrawn if not);
    // a channel-blocked 4-D input now and then (the CPU backend reads it through a reorder)
    const core::shape x = d.coin(0.3) ? image(d.dim(2, 1), d.channels(6, 2), d.dim(9, 4), d.dim(9, 4))
                                      : d.any_shape(1, 4, 7, 4);
    const i64 pairs = d.between(1, static_cast<i64>(x.rank()));
    std::string amounts;
    for (i64 i = 0; i < 2 * pairs; ++i) amounts += (i ? "x" : "") + std::to_string(d.between(0, 3));
    attrs a;
    a.add("pad", amounts);
    const std::string mode = d.pick(std::vector<std::string>{"constant", "reflect", "replicate"});
    a.maybe(d, "mode", mode, mode == "constant");
    if (mode == "constant" && d.coin(0.5)) a.add("value", d.pick(std::vector<std::string>{"-1.5", "0.25", "3"}));
    return {a.text("pad"), {x}};
}

layer_case gen_interpolate(draw& d) {
    // up by an integer factor (oneDNN's resampling on the CPU), or to any size, down included (ridgeline's loops)
    const i64 h = d.dim(9, 4), w = d.coin(0.6) ? h : d.dim(9, 4);
    const bool integer = d.coin(0.5);
    const i64 oh = integer ? h * d.between(1, 3) : d.dim(14, 6), ow = integer ? w * d.between(1, 3) : d.dim(14, 6);
    attrs a;
    a.add("size", pair_text(oh, ow));
    const bool bilinear = d.coin(0.5);
    a.maybe(d, "mode", bilinear ? "bilinear" : "nearest", !bilinear);
    if (bilinear) {
        const bool corners = d.coin(0.4);
        a.maybe(d, "align_corners", bool_text(corners), !corners);
    }
    return {a.text("interpolate"), {image(d.dim(2, 1), d.channels(6, 2), h, w)}};
}

const std::map<std::string_view, std::function<layer_case(draw&)>>& generators() {
    static const std::map<std::string_view, std::function<layer_case(draw&)>> g = [] {
        std::map<std::string_view, std::function<layer_case(draw&)>> m{{"linear", gen_linear},
                                                                       {"matmul", gen_matmul},
                                                                       {"embedding", gen_embedding},
                                                                       {"conv2d", gen_conv2d},
                                                                       {"batch_norm2d", gen_batch_norm2d},
                                                                       {"layer_norm", gen_layer_norm},
                                                                       {"max_pool2d", gen_max_pool2d},
                                                                       {"avg_pool2d", gen_avg_pool2d},
                                                                       {"adaptive_avg_pool2d", gen_adaptive_avg_pool2d},
                                                                       {"concat", gen_concat},
                                                                       {"flatten", gen_flatten},
                                                                       {"reshape", gen_reshape},
                                                                       {"transpose", gen_transpose},
                                                                       {"slice", gen_slice},
                                                                       {"parameter", gen_parameter},
                                                                       {"pad", gen_pad},
                                                                       {"interpolate", gen_interpolate},
                                                                       {"where", gen_where},
                                                                       {"expand", gen_expand},
                                                                       {"rms_norm", gen_rms_norm},
                                                                       {"rotary", gen_rotary},
                                                                       {"attention", gen_attention},
                                                                       {"kv_cache", gen_kv_cache}};
        for (std::string_view k :
             {"relu", "relu6", "gelu", "tanh", "sigmoid", "hardswish", "hardsigmoid", "silu", "scale", "softmax", "erf",
              "sqrt", "exp", "neg", "pow"})
            m[k] = [k](draw& d) { return gen_unary(d, k); };
        for (std::string_view k : {"add", "mul", "sub", "div"}) m[k] = [k](draw& d) { return gen_binary(d, k); };
        for (std::string_view k : {"mean", "sum", "amax"}) m[k] = [k](draw& d) { return gen_reduce(d, k); };
        return m;
    }();
    return g;
}

/// Without the layer name's prefix ("op \"op\": "), so that reasons of different cases count together.
std::string reason_of(const std::string& what) {
    const auto p = what.find("\": ");
    return p == std::string::npos ? what : what.substr(p + 3);
}

}  // namespace

const std::vector<std::string_view>& kinds() { return core::op_kinds(); }

layer_case random_case(std::string_view kind, std::mt19937_64& rng, size_class size) {
    const auto& g = generators();
    const auto it = g.find(kind);
    if (it == g.end())
        throw std::invalid_argument("differential: no generator for op kind \"" + std::string(kind) + "\"");
    draw d{rng, size};
    for (int attempt = 0; attempt < 1000; ++attempt) {
        layer_case c = it->second(d);
        try {
            (void)graph_of(c, core::dtype::fp32);
            return c;
        } catch (const core::error&) {
            // a combination the op rejects (an empty slice, a kernel larger than the padded input): draw again
        }
    }
    throw std::logic_error("differential: 1000 draws of " + std::string(kind) + " were all invalid");
}

core::model_analysis graph_of(const layer_case& c, core::dtype dt) {
    const core::op o = core::parse_op(c.layer, "op");
    if (c.inputs.empty()) {
        // a layer without inputs (parameter): a model needs one, so one of one element that nothing reads
        core::model_builder b("differential");
        b.input("anchor", core::shape{1});
        b.add("op", o, {});
        return core::analyze(b.build(), dt);
    }
    if (!c.same_input) return core::analyze(core::single_layer_model(o, c.inputs, "op", "differential"), dt);
    // one tensor read by every input: the layer reads "input" each time, or "input" and its transpose (matmul)
    core::model_builder b("differential");
    b.input("input", c.inputs.at(0));
    std::vector<std::string> names(c.inputs.size(), "input");
    if (std::holds_alternative<core::matmul>(o)) {
        b.add("t", core::parse_op("transpose:dim0=-1,dim1=-2"), {"input"});
        names = {"input", "t"};
    }
    b.add("op", o, names);
    return core::analyze(b.build(), dt);
}

std::string_view to_string(outcome o) {
    switch (o) {
        case outcome::matched:
            return "matched";
        case outcome::declined:
            return "declined";
        case outcome::mismatched:
            return "mismatched";
        case outcome::failed:
            return "failed";
    }
    return "?";
}

profiler::verification_result verify(backend_api::backend& b, const core::model_analysis& g,
                                     const backend_api::graph_data& data) {
    auto prep = b.prepare(g, data);
    prep->poison_outputs();
    prep->run();
    const auto got = prep->outputs();
    // the reference loops directly: a cpu-ref backend would set the OpenMP thread count the backend under test uses
    return profiler::compare_outputs(got, cpu::reference_graph_outputs(g, data),
                                     profiler::verification_tolerance(g.data_type, g));
}

case_result run_case(backend_api::backend& b, const layer_case& c, core::dtype dt, std::uint64_t seed) {
    const core::model_analysis g = graph_of(c, dt);
    for (const auto& la : g.layers)
        if (const auto s = b.supports(la, dt); !s.supported) return {outcome::declined, s.reason, 0};
    try {
        backend_api::graph_data data = backend_api::make_graph_data(g, dt, seed);
        // activations see [-8, 8] rather than [-1, 1]: relu6's clamp, the tails of gelu, tanh and sigmoid (x8 is exact)
        static const std::set<std::string_view> wide{"relu",      "relu6",       "gelu", "tanh",    "sigmoid",
                                                     "hardswish", "hardsigmoid", "silu", "softmax", "scale"};
        if (wide.count(core::kind_of(g.layers.back().layer.op)))
            for (const auto& in : g.inputs)
                for (float& v : data.tensors.at(in.name).data) v *= 8.0F;
        // sqrt and pow (fractional exponents) are real only for x >= 0: they see |x|
        static const std::set<std::string_view> positive{"sqrt", "pow"};
        if (positive.count(core::kind_of(g.layers.back().layer.op)))
            for (const auto& in : g.inputs)
                for (float& v : data.tensors.at(in.name).data) v = std::fabs(v);
        const auto v = verify(b, g, data);
        if (v.state != profiler::verification_state::passed) return {outcome::mismatched, v.message, v.rel_l2_error};
        return {outcome::matched, {}, v.rel_l2_error};
    } catch (const backend_api::unsupported& e) {
        return {outcome::declined, reason_of(e.what()), 0};
    } catch (const std::exception& e) {
        return {outcome::failed, e.what(), 0};
    }
}

std::map<std::string, op_tally> run_all(backend_api::backend& b, core::dtype dt, int cases_per_op, std::uint64_t seed,
                                        const std::vector<std::string>& only) {
    std::map<std::string, op_tally> out;
    for (std::string_view kind : kinds()) {
        if (!only.empty() && std::find(only.begin(), only.end(), kind) == only.end()) continue;
        // one stream per op, so that the cases of an op do not depend on which other ops ran
        std::seed_seq seq{seed, static_cast<std::uint64_t>(std::hash<std::string_view>{}(kind))};
        std::mt19937_64 rng(seq);
        op_tally& t = out[std::string(kind)];
        for (int i = 0; i < cases_per_op; ++i) {
            const layer_case c = random_case(kind, rng);
            const case_result r = run_case(b, c, dt, seed + static_cast<std::uint64_t>(i));
            ++t.tried;
            switch (r.what) {
                case outcome::matched:
                    ++t.matched;
                    break;
                case outcome::declined:
                    ++t.declined;
                    ++t.decline_reasons[r.detail];
                    break;
                case outcome::mismatched:
                    ++t.mismatched;
                    break;
                case outcome::failed:
                    ++t.failed;
                    break;
            }
            if (r.what == outcome::mismatched || r.what == outcome::failed)
                t.problems.push_back(c.layer + " on " + shapes_text(c.inputs) + (c.same_input ? " (one tensor)" : "") +
                                     ": " + r.detail);
        }
    }
    return out;
}

std::vector<std::string> accepted_keys(std::string_view kind) {
    std::mt19937_64 rng(1);
    layer_case c = random_case(kind, rng);
    // every read happens before the unknown-key check, so its error lists every key the op knows
    const std::string probe = c.layer + (c.layer.find(':') == std::string::npos ? ":" : ",") + "zz_not_a_key=1";
    try {
        (void)core::parse_op(probe);
    } catch (const core::error& e) {
        const std::string msg = e.what();
        if (msg.find("(this op takes no attributes)") != std::string::npos) return {};
        const auto open = msg.find("(known: ");
        if (open == std::string::npos)  // the parser's message changed: say so rather than check nothing
            throw std::logic_error("differential: no key list in the parser's error \"" + msg + "\"");
        const auto close = msg.find(')', open);
        std::vector<std::string> keys;
        std::stringstream ss(msg.substr(open + 8, close - open - 8));
        std::string k;
        while (std::getline(ss, k, ',')) {
            k.erase(0, k.find_first_not_of(' '));
            keys.push_back(k);
        }
        return keys;
    }
    throw std::logic_error("differential: \"" + probe + "\" was accepted");
}

std::string shapes_text(const std::vector<core::shape>& s) {
    std::string out;
    for (const auto& x : s) out += (out.empty() ? "" : ", ") + x.to_string();
    return out;
}

}  // namespace ridgeline::test::differential
