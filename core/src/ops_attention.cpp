// rotary, attention, kv_cache: the layers of a transformer's attention (ops.hpp gives each one's formula and source).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>

#include "op_helpers.hpp"
#include "ridgeline/core/format.hpp"

namespace ridgeline::core {

using detail::fail;

namespace {

constexpr const char* scaling_names[] = {"none", "linear", "dynamic", "yarn", "llama3"};

std::string g(double v) { return significant(v, 6); }

double positive(attribute_reader& r, const char* key, double fallback) {
    const double v = r.get_float(key, fallback);
    if (!(v > 0)) r.fail(key, "is " + g(v) + ", it must be > 0");
    return v;
}

double positive(attribute_reader& r, const char* key) {
    const double v = r.get_float(key);
    if (!(v > 0)) r.fail(key, "is " + g(v) + ", it must be > 0");
    return v;
}

/// [B, heads, S, D]: every attention-side tensor is 4-D.
void expect_heads_layout(const shape& s, const std::string& where, const char* what) {
    if (s.rank() != 4)
        fail(where, std::string("expects ") + what + " of rank 4 [batch, heads, sequence, head_dim], got " +
                        detail::describe(s));
}

}  // namespace

// ------------------------------------------------------------------ rotary
rotary rotary::read(attribute_reader& r) {
    rotary o;
    o.theta = positive(r, "theta", 10000.0);
    o.offset = r.get_int("offset", 0);
    if (o.offset < 0) r.fail("offset", "is " + std::to_string(o.offset) + ", a position must be >= 0");
    const std::string sc = r.get_word("scaling", {"none", "linear", "dynamic", "yarn", "llama3"}, "none");
    for (int i = 0; i < 5; ++i)
        if (sc == scaling_names[i]) o.scaling = static_cast<scaling_t>(i);
    // every key is read (so that an error lists them all); a key of another scaling type is refused by name
    const bool given_factor = r.find_raw("factor").has_value();
    const bool given_max = r.find_raw("max_position_embeddings").has_value();
    const bool given_original = r.find_raw("original_max_position_embeddings").has_value();
    const bool given_low = r.find_raw("low_freq_factor").has_value(), given_high = r.find_raw("high_freq_factor").has_value();
    const bool given_yarn = r.find_raw("attention_factor").has_value() || r.find_raw("beta_fast").has_value() ||
                            r.find_raw("beta_slow").has_value();
    const auto refuse = [&](bool given, const char* key, const char* types) {
        if (given) r.fail(key, std::string("applies to scaling=") + types + ", not to scaling=" + sc);
    };
    const bool dyn_or_yarn = o.scaling == scaling_t::dynamic || o.scaling == scaling_t::yarn;
    refuse(given_factor && o.scaling == scaling_t::none, "factor", "linear, dynamic, yarn or llama3");
    refuse(given_max && !dyn_or_yarn, "max_position_embeddings", "dynamic or yarn");
    refuse(given_yarn && o.scaling != scaling_t::yarn, "attention_factor / beta_fast / beta_slow", "yarn");
    refuse((given_original || given_low || given_high) && o.scaling != scaling_t::llama3,
           "original_max_position_embeddings / low_freq_factor / high_freq_factor", "llama3");
    if (o.scaling == scaling_t::none) return o;
    o.factor = positive(r, "factor");
    if (dyn_or_yarn) {
        o.max_position_embeddings = r.get_int("max_position_embeddings");
        detail::require_at_least(r, "max_position_embeddings", o.max_position_embeddings, 1);
    }
    if (o.scaling == scaling_t::yarn) {
        o.attention_factor = r.get_float("attention_factor", 0.0);
        if (o.attention_factor < 0) r.fail("attention_factor", "is negative; 0 (the default) means 0.1 ln(factor) + 1");
        o.beta_fast = positive(r, "beta_fast", 32.0);
        o.beta_slow = positive(r, "beta_slow", 1.0);
        if (o.beta_fast < o.beta_slow) r.fail("beta_fast", "is below beta_slow: the ramp runs from beta_fast down to beta_slow");
    }
    if (o.scaling == scaling_t::llama3) {
        o.original_max_position_embeddings = r.get_int("original_max_position_embeddings");
        detail::require_at_least(r, "original_max_position_embeddings", o.original_max_position_embeddings, 1);
        o.low_freq_factor = positive(r, "low_freq_factor");
        o.high_freq_factor = positive(r, "high_freq_factor");
        if (o.high_freq_factor <= o.low_freq_factor)
            r.fail("high_freq_factor", "must be above low_freq_factor (the two bound the band that is interpolated)");
    }
    return o;
}

void rotary::write(attribute_writer& w) const {
    if (theta != 10000.0) w.add("theta", theta);
    if (offset != 0) w.add("offset", offset);
    if (scaling == scaling_t::none) return;
    w.add_word("scaling", scaling_names[static_cast<int>(scaling)]);
    w.add("factor", factor);
    if (scaling == scaling_t::dynamic || scaling == scaling_t::yarn)
        w.add("max_position_embeddings", max_position_embeddings);
    if (scaling == scaling_t::yarn) {
        if (attention_factor != 0.0) w.add("attention_factor", attention_factor);
        if (beta_fast != 32.0) w.add("beta_fast", beta_fast);
        if (beta_slow != 1.0) w.add("beta_slow", beta_slow);
    }
    if (scaling == scaling_t::llama3) {
        w.add("original_max_position_embeddings", original_max_position_embeddings);
        w.add("low_freq_factor", low_freq_factor);
        w.add("high_freq_factor", high_freq_factor);
    }
}

shape rotary::infer(const shapes& in, const std::string& where) const {
    const shape& x = in.at(0);
    expect_heads_layout(x, where, "an input");
    if (x[3] % 2 != 0)
        fail(where, "head_dim " + std::to_string(x[3]) + " (dimension 3 of " + x.to_string() +
                        ") is odd: rotate-half pairs element i with i + head_dim/2");
    if (scaling == scaling_t::dynamic && x[3] <= 2)
        fail(where, "scaling=dynamic needs head_dim > 2 (its exponent is head_dim / (head_dim - 2)), got " +
                        std::to_string(x[3]));
    (void)checked::add(offset, x[2], where + " positions");
    return x;
}

cost rotary::work(const shapes& in, const shape& out, dtype dt) const {
    cost c;
    c.flops = checked::mul(3, out.numel(), "rotary flops");
    // x read, y written, the cos and sin tables (S x D each) read once
    const std::int64_t table_elements = checked::product({2, in.at(0)[2], in.at(0)[3]}, "rotary bytes");
    c.bytes = detail::standard_bytes(in, out, table_elements, dt);
    return c;
}

double rotary::table_scale() const {
    if (scaling != scaling_t::yarn) return 1.0;
    return attention_factor > 0 ? attention_factor : 0.1 * std::log(factor) + 1.0;
}

std::vector<float> rotary::inv_freq(std::int64_t dim, std::int64_t seq_end) const {
    const std::int64_t half = dim / 2;
    double base = theta;
    if (scaling == scaling_t::dynamic && seq_end > max_position_embeddings) {
        // _compute_dynamic_ntk_parameters: base * ((factor * seq_len / max_pos) - (factor - 1)) ** (dim / (dim - 2))
        const double s = factor * static_cast<double>(seq_end) / static_cast<double>(max_position_embeddings) - (factor - 1);
        base *= std::pow(s, static_cast<double>(dim) / static_cast<double>(dim - 2));
    }
    std::vector<float> f(static_cast<std::size_t>(half));
    for (std::int64_t i = 0; i < half; ++i) {
        // 1 / base^(2i / dim), the exponent in float32 as torch.arange(0, dim, 2).float() / dim
        const float e = static_cast<float>(2 * i) / static_cast<float>(dim);
        f[static_cast<std::size_t>(i)] = static_cast<float>(1.0 / std::pow(base, static_cast<double>(e)));
    }
    switch (scaling) {
        case scaling_t::none:
        case scaling_t::dynamic:
            break;
        case scaling_t::linear:
            for (auto& v : f) v = static_cast<float>(v / factor);
            break;
        case scaling_t::yarn: {
            // _compute_yarn_parameters: interpolation (/ factor) and extrapolation mixed by a linear ramp over the
            // dimensions between the correction range of beta_fast and beta_slow rotations
            const double pi = std::numbers::pi;
            const auto correction_dim = [&](double rotations) {
                return static_cast<double>(dim) *
                       std::log(static_cast<double>(max_position_embeddings) / (rotations * 2 * pi)) / (2 * std::log(theta));
            };
            double low = std::max(std::floor(correction_dim(beta_fast)), 0.0);
            double high = std::min(std::ceil(correction_dim(beta_slow)), static_cast<double>(dim - 1));
            if (low == high) high += 0.001;
            for (std::int64_t i = 0; i < half; ++i) {
                const double ramp = std::clamp((static_cast<double>(i) - low) / (high - low), 0.0, 1.0);
                const double extrapolation = 1.0 - ramp;
                const double v = f[static_cast<std::size_t>(i)];
                f[static_cast<std::size_t>(i)] =
                    static_cast<float>(v / factor * (1 - extrapolation) + v * extrapolation);
            }
            break;
        }
        case scaling_t::llama3: {
            // _compute_llama3_parameters: wavelengths beyond old_context/low_freq_factor are divided by factor, those
            // below old_context/high_freq_factor kept, the band between interpolated smoothly
            const double pi = std::numbers::pi;
            const double old = static_cast<double>(original_max_position_embeddings);
            const double low_wavelen = old / low_freq_factor, high_wavelen = old / high_freq_factor;
            for (auto& v : f) {
                const double wavelen = 2 * pi / v;
                double nv = wavelen > low_wavelen ? v / factor : v;
                if (!(wavelen < high_wavelen) && !(wavelen > low_wavelen)) {
                    const double smooth = (old / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
                    nv = (1 - smooth) * nv / factor + smooth * nv;
                }
                v = static_cast<float>(nv);
            }
            break;
        }
    }
    return f;
}

rotary::tables rotary::make_tables(std::int64_t dim, std::int64_t seq) const {
    const std::vector<float> f = inv_freq(dim, offset + seq);
    const std::int64_t half = dim / 2;
    const float s = static_cast<float>(table_scale());
    tables out;
    out.cos.resize(static_cast<std::size_t>(seq * dim));
    out.sin.resize(out.cos.size());
    for (std::int64_t p = 0; p < seq; ++p)
        for (std::int64_t i = 0; i < dim; ++i) {
            const float angle = static_cast<float>(offset + p) * f[static_cast<std::size_t>(i % half)];
            const auto k = static_cast<std::size_t>(p * dim + i);
            out.cos[k] = static_cast<float>(std::cos(static_cast<double>(angle))) * s;
            out.sin[k] = static_cast<float>(std::sin(static_cast<double>(angle))) * s;
        }
    return out;
}

// ------------------------------------------------------------------ attention
attention attention::read(attribute_reader& r) {
    attention a;
    a.is_causal = r.get_bool("is_causal", false);
    a.scale = r.get_float("scale", 0.0);
    if (a.scale < 0) r.fail("scale", "is negative; 0 (the default) means 1/sqrt(head_dim)");
    a.sliding_window = r.get_int("sliding_window", 0);
    if (a.sliding_window < 0) r.fail("sliding_window", "is " + std::to_string(a.sliding_window) + ", it must be >= 1 (0: none)");
    if (a.sliding_window > 0 && !a.is_causal)
        r.fail("sliding_window", "needs is_causal=true (a window of the keys before each query, as Mistral's)");
    return a;
}

void attention::write(attribute_writer& w) const {
    if (is_causal) w.add("is_causal", true);
    if (scale != 0.0) w.add("scale", scale);
    if (sliding_window != 0) w.add("sliding_window", sliding_window);
}

shape attention::infer(const shapes& in, const std::string& where) const {
    const shape& q = in.at(0);
    const shape& k = in.at(1);
    const shape& v = in.at(2);
    expect_heads_layout(q, where, "queries (input 0)");
    expect_heads_layout(k, where, "keys (input 1)");
    expect_heads_layout(v, where, "values (input 2)");
    if (k[0] != q[0] || v[0] != q[0])
        fail(where, "batch sizes differ: queries " + q.to_string() + ", keys " + k.to_string() + ", values " + v.to_string());
    if (k[3] != q[3])
        fail(where, "keys have head_dim " + std::to_string(k[3]) + " (" + k.to_string() + ") but queries " +
                        std::to_string(q[3]) + " (" + q.to_string() + ")");
    if (v[1] != k[1] || v[2] != k[2])
        fail(where, "values " + v.to_string() + " do not match keys " + k.to_string() +
                        " in kv heads and sequence (dimensions 1 and 2)");
    if (q[1] % k[1] != 0)
        fail(where, std::to_string(q[1]) + " query heads are not a multiple of " + std::to_string(k[1]) +
                        " kv heads (grouped-query attention shares each kv head among H/KVH query heads)");
    if (is_causal && k[2] < q[2])
        fail(where, "is_causal with " + std::to_string(q[2]) + " queries but only " + std::to_string(k[2]) +
                        " keys: each query attends the keys up to its own position, so there are at least as many keys");
    if (in.size() == 4) {
        if (is_causal)
            fail(where, "has both a mask (input 3) and is_causal=true; give one (PyTorch refuses both too)");
        const shape full{q[0], q[1], q[2], k[2]};
        const shape& m = in[3];
        if (m.rank() > 4) fail(where, "mask (input 3) " + detail::describe(m) + " has more than 4 dimensions");
        for (std::size_t i = 0; i < m.rank(); ++i) {
            const std::size_t d = 4 - m.rank() + i;
            if (m[i] != 1 && m[i] != full[d])
                fail(where, "mask (input 3) " + m.to_string() + " does not broadcast to the scores " + full.to_string() +
                                ": dimension " + std::to_string(d) + " is " + std::to_string(m[i]) + " in one and " +
                                std::to_string(full[d]) + " in the other");
        }
    }
    return shape{q[0], q[1], q[2], v[3]};
}

bool attention::keeps(std::int64_t i, std::int64_t j, std::int64_t sq, std::int64_t skv) const {
    if (!is_causal) return true;
    const std::int64_t pos = skv - sq + i;
    if (j > pos) return false;
    return sliding_window == 0 || pos - j < sliding_window;
}

std::int64_t attention::pairs(std::int64_t sq, std::int64_t skv) const {
    if (!is_causal) return checked::mul(sq, skv, "attention pairs");
    // query i (position p = skv - sq + i) keeps min(p + 1, W) keys: the sum of min(u, W) for u in [a, b]
    const std::int64_t a = skv - sq + 1, b = skv;
    const std::int64_t w = sliding_window > 0 ? std::min(sliding_window, b) : b;
    // a + ... + z over consecutive integers: halve the even one of (count, a + z) first
    const auto series = [](std::int64_t first, std::int64_t last) -> std::int64_t {
        const std::int64_t n = last - first + 1, ends = checked::add(first, last, "attention pairs");
        return n % 2 == 0 ? checked::mul(n / 2, ends, "attention pairs") : checked::mul(n, ends / 2, "attention pairs");
    };
    if (w >= b) return series(a, b);
    if (w < a) return checked::mul(w, b - a + 1, "attention pairs");
    return checked::add(series(a, w), checked::mul(w, b - w, "attention pairs"), "attention pairs");
}

double attention::scale_for(std::int64_t d) const {
    return scale > 0 ? scale : 1.0 / std::sqrt(static_cast<double>(d));
}

cost attention::work(const shapes& in, const shape& out, dtype dt) const {
    const shape& q = in.at(0);
    const shape& k = in.at(1);
    const shape& v = in.at(2);
    const std::int64_t heads = checked::mul(q[0], q[1], "attention macs");
    const std::int64_t per_pair = checked::add(q[3], v[3], "attention macs");  // q.k and p.v
    cost c;
    c.macs = checked::product({heads, q[2], k[2], per_pair}, "attention macs");
    const std::int64_t kept = checked::mul(heads, pairs(q[2], k[2]), "attention macs");
    c.skipped_macs = c.macs - checked::mul(kept, per_pair, "attention macs");
    c.flops = checked::mul(2, c.macs, "attention flops");
    c.bytes = detail::standard_bytes(in, out, 0, dt);
    return c;
}

// ------------------------------------------------------------------ kv_cache
kv_cache kv_cache::read(attribute_reader& r) {
    kv_cache c;
    c.batch = r.get_int("batch");
    c.num_heads = r.get_int("num_heads");
    c.head_dim = r.get_int("head_dim");
    c.past = r.get_int("past");
    c.new_tokens = r.get_int("new_tokens", 1);
    detail::require_at_least(r, "batch", c.batch, 1);
    detail::require_at_least(r, "num_heads", c.num_heads, 1);
    detail::require_at_least(r, "head_dim", c.head_dim, 1);
    detail::require_at_least(r, "past", c.past, 0);
    detail::require_at_least(r, "new_tokens", c.new_tokens, 1);
    (void)checked::product({c.batch, c.num_heads, checked::add(c.past, c.new_tokens, "kv_cache length"), c.head_dim},
                           r.where() + " cache elements");
    return c;
}

void kv_cache::write(attribute_writer& w) const {
    w.add("batch", batch);
    w.add("num_heads", num_heads);
    w.add("head_dim", head_dim);
    w.add("past", past);
    if (new_tokens != 1) w.add("new_tokens", new_tokens);
}

shape kv_cache::infer(const shapes& in, const std::string& where) const {
    const shape& x = in.at(0);
    const shape expected{batch, num_heads, new_tokens, head_dim};
    if (x != expected)
        fail(where, "input " + x.to_string() + " is not the new entries " + expected.to_string() +
                        " [batch, num_heads, new_tokens, head_dim] the cache appends");
    return shape{batch, num_heads, past + new_tokens, head_dim};
}

std::vector<param_spec> kv_cache::parameters() const {
    return {{"cache", shape{batch, num_heads, past + new_tokens, head_dim}, false}};
}

cost kv_cache::work(const shapes& in, const shape&, dtype dt) const {
    cost c;  // the new entries read and written into the buffer; the cached ones stay where they are
    c.bytes = checked::product({2, in.at(0).numel(), size_bytes(dt)}, "kv_cache bytes");
    return c;
}

}  // namespace ridgeline::core
