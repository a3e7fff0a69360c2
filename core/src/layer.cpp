#include "ridgeline/core/layer.hpp"

#include <cctype>
#include <utility>

#include "op_helpers.hpp"

namespace ridgeline::core {

namespace {

template <std::size_t I = 0>
op make_by_index(std::string_view kind, attribute_reader& r, bool& found) {
    if constexpr (I < std::variant_size_v<op>) {
        using T = std::variant_alternative_t<I, op>;
        if (kind == T::kind) {
            found = true;
            T t = T::read(r);
            r.finish();
            return op{std::in_place_index<I>, std::move(t)};
        }
        return make_by_index<I + 1>(kind, r, found);
    } else {
        return op{};
    }
}

template <std::size_t... I>
std::vector<std::string_view> kinds_of(std::index_sequence<I...>) {
    return {std::variant_alternative_t<I, op>::kind...};
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

/// Accepted spellings that are not the canonical kind (PyTorch module names in lower case).
std::string canonical_kind(std::string_view text) {
    std::string k(text);
    for (auto& ch : k) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    static const std::pair<std::string_view, std::string_view> aliases[] = {
        {"batchnorm2d", "batch_norm2d"}, {"bn", "batch_norm2d"},       {"layernorm", "layer_norm"},
        {"maxpool2d", "max_pool2d"},     {"avgpool2d", "avg_pool2d"},  {"adaptiveavgpool2d", "adaptive_avg_pool2d"},
        {"cat", "concat"},               {"bmm", "matmul"},            {"dense", "linear"},
        {"gemm", "linear"},              {"view", "reshape"},
    };
    for (const auto& [alias, kind] : aliases)
        if (k == alias) return std::string(kind);
    return k;
}

}  // namespace

const std::vector<std::string_view>& op_kinds() {
    static const auto kinds = kinds_of(std::make_index_sequence<std::variant_size_v<op>>{});
    return kinds;
}

std::string_view kind_of(const op& o) {
    return std::visit([](const auto& x) { return std::decay_t<decltype(x)>::kind; }, o);
}

op make_op(std::string_view kind_text, const std::vector<attribute>& attrs, std::string_view name) {
    const std::string kind = canonical_kind(kind_text);
    attribute_reader r(kind, name, attrs);
    bool found = false;
    op o = make_by_index(kind, r, found);
    if (!found) {
        std::string list;
        for (auto k : op_kinds()) list += (list.empty() ? "" : ", ") + std::string(k);
        throw parse_error((name.empty() ? std::string() : "layer \"" + std::string(name) + "\": ") + "unknown op \"" +
                          std::string(kind_text) + "\" (known ops: " + list + ")");
    }
    return o;
}

op parse_op(std::string_view text, std::string_view name) {
    const std::string_view t = trim(text);
    if (t.empty()) throw parse_error("empty layer string: expected op:key=value,... such as linear:in_features=4,out_features=3");
    const std::size_t colon = t.find(':');
    const std::string_view kind = trim(t.substr(0, colon));
    if (kind.empty()) throw parse_error("layer string \"" + std::string(t) + "\" has no op name before ':'");
    std::vector<attribute> attrs;
    if (colon != std::string_view::npos) {
        std::string_view rest = t.substr(colon + 1);
        std::size_t pos = 0;
        while (pos <= rest.size()) {
            const std::size_t comma = rest.find(',', pos);
            const std::string_view item =
                trim(rest.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
            if (item.empty()) {
                if (comma == std::string_view::npos && attrs.empty() && pos == rest.size() && rest.empty()) break;
                throw parse_error(layer_where(kind, name) + ": empty attribute in \"" + std::string(t) +
                                  "\" (attributes are key=value separated by ',')");
            }
            const std::size_t eq = item.find('=');
            if (eq == std::string_view::npos)
                throw parse_error(layer_where(kind, name) + ": attribute \"" + std::string(item) +
                                  "\" has no '=' (expected key=value)");
            const std::string_view key = trim(item.substr(0, eq));
            const std::string_view value = trim(item.substr(eq + 1));
            if (key.empty()) throw parse_error(layer_where(kind, name) + ": attribute \"" + std::string(item) + "\" has no key");
            if (value.empty())
                throw parse_error(layer_where(kind, name) + ": " + std::string(key) + " has no value");
            attrs.push_back({std::string(key), std::string(value)});
            if (comma == std::string_view::npos) break;
            pos = comma + 1;
        }
    }
    return make_op(kind, attrs, name);
}

std::vector<attribute> attributes_of(const op& o) {
    attribute_writer w;
    std::visit([&](const auto& x) { x.write(w); }, o);
    return w.attributes();
}

std::string to_string(const op& o) {
    attribute_writer w;
    std::visit([&](const auto& x) { x.write(w); }, o);
    const std::string attrs = w.str();
    std::string s(kind_of(o));
    if (!attrs.empty()) s += ":" + attrs;
    return s;
}

std::string where(const layer& l) { return layer_where(kind_of(l.op), l.name); }

shape infer_shape(const layer& l, const shapes& in) {
    const std::string w = where(l);
    return std::visit(
        [&](const auto& x) -> shape {
            using T = std::decay_t<decltype(x)>;
            const auto n = static_cast<int>(in.size());
            if (n < T::min_inputs || (T::max_inputs >= 0 && n > T::max_inputs)) {
                const std::string expected =
                    T::max_inputs < 0 ? "at least " + std::to_string(T::min_inputs)
                                      : (T::min_inputs == T::max_inputs ? std::to_string(T::min_inputs)
                                                                        : std::to_string(T::min_inputs) + " to " +
                                                                              std::to_string(T::max_inputs));
                detail::fail(w, "takes " + expected + " input" + (expected == "1" ? "" : "s") + ", got " +
                                    std::to_string(n));
            }
            for (const auto& s : in) (void)s.numel();
            shape out = x.infer(in, w);
            for (std::size_t i = 0; i < out.rank(); ++i)
                if (out[i] < 1)
                    detail::fail(w, "output shape " + out.to_string() + " has an empty dimension " + std::to_string(i));
            (void)out.numel();
            return out;
        },
        l.op);
}

std::vector<param_spec> parameters_of(const op& o) {
    return std::visit([](const auto& x) { return x.parameters(); }, o);
}

cost cost_of(const layer& l, const shapes& in, const shape& out, dtype dt) {
    cost c;
    try {
        c = std::visit([&](const auto& x) { return x.work(in, out, dt); }, l.op);
    } catch (const invalid_layer& e) {  // a rule that depends on the data type (pad's value): named with its layer
        const std::string msg = e.what();
        if (msg.rfind(where(l), 0) == 0) throw;
        throw invalid_layer(where(l) + ": " + msg);
    }
    for (const auto& p : parameters_of(l.op)) {
        const std::int64_t n = p.dims.numel();
        if (p.trainable)
            c.params = checked::add(c.params, n, where(l) + " params");
        else
            c.buffers = checked::add(c.buffers, n, where(l) + " buffers");
    }
    return c;
}

bool reads_no_input(const op& o) {
    if (std::holds_alternative<parameter>(o)) return true;
    const auto* e = std::get_if<embedding>(&o);
    return e != nullptr && !e->indices.empty();
}

bool matrix_work(const op& o) {
    return std::holds_alternative<conv2d>(o) || std::holds_alternative<linear>(o) || std::holds_alternative<matmul>(o) ||
           std::holds_alternative<attention>(o);
}

bool is_view(const op& o) {
    return std::holds_alternative<flatten>(o) || std::holds_alternative<reshape>(o) ||
           std::holds_alternative<transpose>(o) || std::holds_alternative<slice>(o) ||
           std::holds_alternative<parameter>(o);
}

std::optional<double> cost::arithmetic_intensity() const {
    if (bytes <= 0) return std::nullopt;
    return static_cast<double>(flops) / static_cast<double>(bytes);
}

cost& cost::operator+=(const cost& o) {
    params = checked::add(params, o.params, "total params");
    buffers = checked::add(buffers, o.buffers, "total buffers");
    macs = checked::add(macs, o.macs, "total macs");
    skipped_macs = checked::add(skipped_macs, o.skipped_macs, "total skipped macs");
    flops = checked::add(flops, o.flops, "total flops");
    bias_flops = checked::add(bias_flops, o.bias_flops, "total bias flops");
    bytes = checked::add(bytes, o.bytes, "total bytes");
    return *this;
}

}  // namespace ridgeline::core

namespace ridgeline::core::conventions {

std::int64_t flop_counter_mode_flops(const cost& c) { return checked::mul(2, c.macs, "FlopCounterMode flops"); }

double tinytorch_flops(const cost& c, std::int64_t batch) {
    return static_cast<double>(c.flops - c.bias_flops) / static_cast<double>(batch < 1 ? 1 : batch);
}

}  // namespace ridgeline::core::conventions
