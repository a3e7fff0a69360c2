#include "ridgeline/io/model_file.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "ridgeline/core/error.hpp"
#include "ridgeline/core/file.hpp"

namespace ridgeline::io {

namespace {

using json = nlohmann::json;

const std::vector<std::string> top_level_keys = {"format", "name", "inputs", "layers", "outputs"};
const std::vector<std::string> input_keys = {"name", "shape", "dtype"};
const std::set<std::string> layer_reserved = {"name", "op", "inputs", "tied"};

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
}

/// Compact JSON text of `v`, at most about `budget` characters, nested at most 8 deep ("..." beyond): unlike
/// json::dump(), which recurses once per level, it cannot overflow the stack on a file nested 100,000 deep.
void excerpt(const json& v, std::string& out, std::size_t budget, int depth) {
    if (out.size() > budget) return;
    if (v.is_primitive()) {
        out += v.dump();
        return;
    }
    const bool object = v.is_object();
    out += object ? '{' : '[';
    if (depth >= 8 && !v.empty()) {
        out += "...";
    } else {
        bool first = true;
        for (auto it = v.begin(); it != v.end() && out.size() <= budget; ++it) {
            if (!first) out += ',';
            first = false;
            if (object) out += json(it.key()).dump() + ':';
            excerpt(*it, out, budget, depth + 1);
        }
    }
    out += object ? '}' : ']';
}

/// A JSON value as a user wrote it, short enough for one error line.
std::string shown(const json& v) {
    std::string s;
    excerpt(v, s, 60, 0);
    if (s.size() > 60) s = s.substr(0, 57) + "...";
    return s;
}

/// A key as a step of a JSON path: `.stride` for a plain name, else `["a.b"]` with the key JSON-escaped (a
/// NUL, a quote or a dot stays unambiguous), cut to about 40 characters.
std::string member(std::string_view key) {
    const bool plain = !key.empty() && (std::isalpha(static_cast<unsigned char>(key[0])) || key[0] == '_') &&
                       std::all_of(key.begin(), key.end(), [](char c) {
                           return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                       });
    if (plain && key.size() <= 40) return "." + std::string(key);
    std::string quoted = json(std::string(key)).dump();
    if (quoted.size() > 42) quoted = quoted.substr(0, 38) + "...\"";
    return "[" + quoted + "]";
}

std::string type_name(const json& v) {
    switch (v.type()) {
        case json::value_t::null: return "null";
        case json::value_t::object: return "an object";
        case json::value_t::array: return "an array";
        case json::value_t::string: return "a string";
        case json::value_t::boolean: return "a boolean";
        case json::value_t::number_float: return "a number";
        default: return "an integer";
    }
}

class reader {
public:
    reader(std::string_view label, const input_overrides& o) : label_(label), overrides_(o) {}

    [[noreturn]] void fail(const std::string& path, const std::string& message) const {
        throw core::parse_error(label_ + ": " + path + ": " + message);
    }
    [[noreturn]] void fail_layer(const std::string& path, const std::string& message) const {
        throw core::invalid_layer(label_ + ": " + path + ": " + message);
    }

    /// An integer (or an integral float such as 3.0) that fits in int64.
    std::optional<std::int64_t> as_int(const json& v) const {
        if (v.is_number_unsigned()) {  // before is_number_integer(), which is true for unsigned numbers too
            const auto u = v.get<std::uint64_t>();
            if (u > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
            return static_cast<std::int64_t>(u);
        }
        if (v.is_number_integer()) return v.get<std::int64_t>();
        if (v.is_number_float()) {
            const double d = v.get<double>();
            if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.007199254740992e15)
                return static_cast<std::int64_t>(d);
        }
        return std::nullopt;
    }

    const std::string& string_field(const json& obj, const std::string& key, const std::string& path) const {
        auto it = obj.find(key);
        if (it == obj.end()) fail(path, "missing required field \"" + key + "\"");
        if (!it->is_string()) fail(path + member(key), "expected a string, got " + shown(*it));
        if (it->get_ref<const std::string&>().empty()) fail(path + member(key), "must not be empty");
        return it->get_ref<const std::string&>();
    }

    void check_keys(const json& obj, const std::vector<std::string>& known, const std::string& path) const {
        for (auto it = obj.begin(); it != obj.end(); ++it)
            if (std::find(known.begin(), known.end(), it.key()) == known.end())
                fail(path + member(it.key()), "unknown field (known: " + joined(known) + ")");
    }

    /// JSON attribute value -> layer-string text.
    std::string attribute_text(const json& v, const std::string& path) const {
        if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
        if (v.is_string()) {
            const auto& s = v.get_ref<const std::string&>();
            if (s.empty()) fail(path, "expected a value, got an empty string");
            return s;
        }
        if (v.is_number()) {
            if (auto i = as_int(v)) return std::to_string(*i);
            if (v.is_number_float()) {
                char buf[64];
                auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v.get<double>());
                if (ec == std::errc()) return std::string(buf, ptr);
            }
            fail(path, "number " + shown(v) + " is out of range");
        }
        if (v.is_array()) {
            if (v.empty()) fail(path, "expected a non-empty array of integers, got []");
            std::string s;
            for (std::size_t i = 0; i < v.size(); ++i) {
                auto x = as_int(v[i]);
                if (!x) fail(path + "[" + std::to_string(i) + "]", "expected an integer, got " + shown(v[i]));
                s += (i ? "x" : "") + std::to_string(*x);
            }
            return s;
        }
        fail(path, "expected a number, boolean, string or array of integers, got " + type_name(v));
    }

    /// Rewrites an attribute error of core (`<key> "<text>" is not ...`) in JSON terms.
    static std::string json_message(const std::string& tail, const std::string& text, const json& value,
                                    const std::string& core_message) {
        const std::string quoted = "\"" + text + "\" ";
        if (tail.rfind(quoted, 0) != 0) return core_message;
        const std::string rest = tail.substr(quoted.size());
        const std::string got = ", got " + shown(value);
        if (rest.rfind("is not an integer or HxW pair", 0) == 0 || rest.find("expected one integer or an HxW pair") != std::string::npos)
            return "expected an integer or [h, w]" + got;
        if (rest == "is not an integer") return "expected an integer" + got;
        if (rest.rfind("is not a boolean", 0) == 0) return "expected true or false" + got;
        if (rest == "is not a decimal number") return "expected a number" + got;
        if (rest.rfind("is not a list of integers", 0) == 0) return "expected an array of integers" + got;
        if (rest.rfind("is not one of: ", 0) == 0) return "expected one of " + rest.substr(15) + got;
        return core_message;
    }

    core::op make_op(const std::string& kind, const std::string& name, const std::vector<core::attribute>& attrs,
                     const std::map<std::string, json>& values, const std::string& path) const {
        try {
            return core::make_op(kind, attrs, name);
        } catch (const core::parse_error& e) {
            const std::string msg = e.what();
            const std::string prefix = core::layer_where(kind, name) + ": ";
            if (msg.rfind(prefix, 0) != 0) fail(path, msg);
            const std::string rest = msg.substr(prefix.size());
            const std::string unknown = "unknown attribute \"";
            if (rest.rfind(unknown, 0) == 0) {
                const std::string key = rest.substr(unknown.size(), rest.find('"', unknown.size()) - unknown.size());
                fail(path + member(key), rest);
            }
            // the longest key first: "stride" must not match an error about "strides"
            std::vector<std::string> keys;
            for (const auto& a : attrs) keys.push_back(a.key);
            std::sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
            for (const auto& key : keys)
                if (rest.rfind(key + " ", 0) == 0) {
                    const auto& a = *std::find_if(attrs.begin(), attrs.end(), [&](const auto& x) { return x.key == key; });
                    fail(path + member(key), json_message(rest.substr(key.size() + 1), a.value, values.at(key), msg));
                }
            const auto sp = rest.find(' ');
            if (sp != std::string::npos && rest.substr(sp) == " is required")
                fail(path, "missing required attribute \"" + rest.substr(0, sp) + "\" (" + prefix.substr(0, prefix.size() - 2) + ")");
            fail(path, msg);
        }
    }

    core::shape read_shape(const json& v, const std::string& path) const {
        if (v.is_string()) {
            try {
                return core::parse_shape(v.get<std::string>());
            } catch (const core::error& e) {
                fail(path, e.what());
            }
        }
        if (!v.is_array() || v.empty()) fail(path, "expected a non-empty array of positive integers, got " + shown(v));
        std::vector<std::int64_t> dims;
        for (std::size_t i = 0; i < v.size(); ++i) {
            auto x = as_int(v[i]);
            if (!x || *x < 1) fail(path + "[" + std::to_string(i) + "]", "expected a positive integer, got " + shown(v[i]));
            dims.push_back(*x);
        }
        return core::shape(std::move(dims));
    }

    core::model read(const json& doc) {
        if (!doc.is_object()) fail("$", "expected an object with \"inputs\" and \"layers\", got " + type_name(doc));
        check_keys(doc, top_level_keys, "$");
        if (auto it = doc.find("format"); it != doc.end())
            if (!it->is_string() || it->get<std::string>() != model_format_id)
                fail("$.format", "expected \"" + std::string(model_format_id) + "\", got " + shown(*it));
        core::model m(doc.contains("name") ? string_field(doc, "name", "$") : std::string("model"));

        // inputs
        auto in_it = doc.find("inputs");
        if (in_it == doc.end()) fail("$", "missing required field \"inputs\"");
        if (!in_it->is_array() || in_it->empty()) fail("$.inputs", "expected a non-empty array of inputs, got " + shown(*in_it));
        std::map<std::string, std::string> tensor_path;  // tensor name -> where it is defined
        for (std::size_t i = 0; i < in_it->size(); ++i) {
            const std::string path = "$.inputs[" + std::to_string(i) + "]";
            const json& in = (*in_it)[i];
            if (!in.is_object()) fail(path, "expected an object with \"name\" and \"shape\", got " + shown(in));
            check_keys(in, input_keys, path);
            const std::string name = string_field(in, "name", path);
            if (!in.contains("shape")) fail(path, "missing required field \"shape\"");
            core::model_input mi{name, read_shape(in.at("shape"), path + ".shape"), false};
            if (auto d = in.find("dtype"); d != in.end()) {
                if (*d == "int64")
                    mi.indices = true;
                else if (*d != "float")
                    fail(path + ".dtype", "expected \"int64\" (token ids) or \"float\", got " + shown(*d));
            }
            if (auto [it, ok] = tensor_path.emplace(name, path + ".name"); !ok)
                fail(path + ".name", "duplicate name \"" + name + "\" (also " + it->second + ")");
            m.add_input(std::move(mi));
        }
        apply_overrides(m);

        // layers
        auto l_it = doc.find("layers");
        if (l_it == doc.end()) fail("$", "missing required field \"layers\"");
        if (!l_it->is_array() || l_it->empty()) fail("$.layers", "expected a non-empty array of layers, got " + shown(*l_it));
        const auto& kinds = core::op_kinds();
        std::string previous = m.inputs().front().name;
        for (std::size_t i = 0; i < l_it->size(); ++i) {
            const std::string path = "$.layers[" + std::to_string(i) + "]";
            const json& lj = (*l_it)[i];
            if (!lj.is_object()) fail(path, "expected an object with \"name\" and \"op\", got " + shown(lj));
            core::layer l;
            l.name = string_field(lj, "name", path);
            const std::string kind = string_field(lj, "op", path);
            if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
                std::vector<std::string> known(kinds.begin(), kinds.end());
                fail(path + ".op", "unknown op \"" + kind + "\" (known: " + joined(known) + ")");
            }
            if (auto [it, ok] = tensor_path.emplace(l.name, path + ".name"); !ok)
                fail(path + ".name", "duplicate name \"" + l.name + "\" (also " + it->second + ")");
            std::vector<core::attribute> attrs;
            std::map<std::string, json> values;
            for (auto it = lj.begin(); it != lj.end(); ++it) {
                if (layer_reserved.count(it.key())) continue;
                attrs.push_back({it.key(), attribute_text(it.value(), path + member(it.key()))});
                values.emplace(it.key(), it.value());
            }
            l.op = make_op(kind, l.name, attrs, values, path);
            if (auto it = lj.find("inputs"); it != lj.end()) {
                // [] only for an op that reads nothing (a parameter, an embedding holding its ids); a layer's arity
                // is checked with its shapes
                const bool reads_nothing = core::reads_no_input(l.op);
                if (!it->is_array() || (it->empty() && !reads_nothing))
                    fail(path + ".inputs", "expected a non-empty array of tensor names, got " + shown(*it));
                for (std::size_t k = 0; k < it->size(); ++k) {
                    const json& t = (*it)[k];
                    if (!t.is_string() || t.get_ref<const std::string&>().empty())
                        fail(path + ".inputs[" + std::to_string(k) + "]", "expected a tensor name, got " + shown(t));
                    l.inputs.push_back(t.get<std::string>());
                }
            } else {
                l.inputs.push_back(previous);
            }
            if (auto it = lj.find("tied"); it != lj.end()) {
                if (!it->is_object() || it->empty())
                    fail(path + ".tied", "expected an object {\"parameter\": \"shared tensor name\"}, got " + shown(*it));
                for (auto t = it->begin(); t != it->end(); ++t) {
                    if (!t->is_string() || t->get_ref<const std::string&>().empty())
                        fail(path + ".tied." + t.key(), "expected a shared tensor name, got " + shown(*t));
                    l.tied.emplace(t.key(), t->get<std::string>());
                }
            }
            previous = l.name;
            m.add_layer(std::move(l));
        }
        // outputs a layer also reads (optional; a layer no other reads is an output anyway)
        if (auto o_it = doc.find("outputs"); o_it != doc.end()) {
            if (!o_it->is_array()) fail("$.outputs", "expected an array of layer names, got " + shown(*o_it));
            std::set<std::string> layer_names;
            for (const auto& l : m.layers()) layer_names.insert(l.name);
            for (std::size_t i = 0; i < o_it->size(); ++i) {
                const std::string path = "$.outputs[" + std::to_string(i) + "]";
                const json& o = (*o_it)[i];
                if (!o.is_string() || !layer_names.count(o.get<std::string>()))
                    fail(path, "expected the name of a layer, got " + shown(o));
                m.add_output(o.get<std::string>());
            }
        }
        check_graph(m, tensor_path);
        check_analysis(m);
        return m;
    }

private:
    void apply_overrides(core::model& m) const {
        auto& ins = m.inputs();
        if (!overrides_.inputs.empty()) {
            if (overrides_.inputs.size() != ins.size())
                fail("$.inputs", "the model has " + std::to_string(ins.size()) + " input(s) but " +
                                     std::to_string(overrides_.inputs.size()) + " input shape(s) were given");
            for (std::size_t i = 0; i < ins.size(); ++i) {
                if (overrides_.batch && overrides_.inputs[i][0] != *overrides_.batch)
                    fail("$.inputs[" + std::to_string(i) + "]", "batch " + std::to_string(*overrides_.batch) +
                                                               " disagrees with the input shape " + overrides_.inputs[i].to_string());
                ins[i].dims = overrides_.inputs[i];
            }
        } else if (overrides_.batch) {
            for (auto& in : ins) in.dims[0] = *overrides_.batch;
        }
    }

    /// Tensor references, unread inputs and cycles, each reported at its JSON path.
    void check_graph(const core::model& m, const std::map<std::string, std::string>& tensor_path) const {
        const auto& ls = m.layers();
        std::map<std::string, std::size_t> index;
        for (std::size_t i = 0; i < ls.size(); ++i) index.emplace(ls[i].name, i);
        std::set<std::string> read;
        for (std::size_t i = 0; i < ls.size(); ++i)
            for (std::size_t k = 0; k < ls[i].inputs.size(); ++k) {
                const auto& t = ls[i].inputs[k];
                if (!tensor_path.count(t))
                    fail_layer("$.layers[" + std::to_string(i) + "].inputs[" + std::to_string(k) + "]",
                               "unknown tensor \"" + t + "\" (not a model input or a layer name)");
                if (t == ls[i].name)
                    fail_layer("$.layers[" + std::to_string(i) + "].inputs[" + std::to_string(k) + "]",
                               "layer \"" + t + "\" reads its own output (a cycle)");
                read.insert(t);
            }
        for (std::size_t i = 0; i < m.inputs().size(); ++i)
            if (!read.count(m.inputs()[i].name))
                fail_layer("$.inputs[" + std::to_string(i) + "]",
                           "input \"" + m.inputs()[i].name + "\" is not read by any layer (a dangling input)");
        // depth-first search with an explicit stack (a chain of 200,000 layers must not recurse 200,000 deep);
        // a grey node reached again closes a cycle
        std::vector<int> colour(ls.size(), 0);
        std::vector<std::pair<std::size_t, std::size_t>> stack;  // (layer, next input to follow)
        for (std::size_t root = 0; root < ls.size(); ++root) {
            if (colour[root] != 0) continue;
            colour[root] = 1;
            stack.emplace_back(root, 0);
            while (!stack.empty()) {
                auto& [i, k] = stack.back();
                if (k == ls[i].inputs.size()) {
                    colour[i] = 2;
                    stack.pop_back();
                    continue;
                }
                const std::size_t at = k++;
                auto it = index.find(ls[i].inputs[at]);
                if (it == index.end()) continue;
                const std::size_t j = it->second;
                if (colour[j] == 1) {
                    std::string chain;
                    auto from = std::find_if(stack.begin(), stack.end(), [&](const auto& e) { return e.first == j; });
                    const auto length = stack.end() - from;  // a long cycle is shown by its ends
                    for (auto e = from; e != stack.end(); ++e) {
                        const auto pos = e - from;
                        if (length > 8 && pos == 3) chain += "... (" + std::to_string(length - 6) + " more) <- ";
                        if (length <= 8 || pos < 3 || pos >= length - 3) chain += ls[e->first].name + " <- ";
                    }
                    chain += ls[j].name;
                    fail_layer("$.layers[" + std::to_string(i) + "].inputs[" + std::to_string(at) + "]",
                               "\"" + ls[j].name + "\" closes a cycle (" + chain + ")");
                }
                if (colour[j] == 0) {
                    colour[j] = 1;
                    stack.emplace_back(j, 0);  // invalidates i and k: not used again in this iteration
                }
            }
        }
    }

    /// Shape rules of every layer (core::analyze), errors mapped to the layer's path.
    void check_analysis(const core::model& m) const {
        try {
            (void)core::analyze(m, core::dtype::fp32);
        } catch (const core::error& e) {
            const std::string msg = e.what();
            const auto& ls = m.layers();
            for (std::size_t i = 0; i < ls.size(); ++i) {
                const std::string w = core::where(ls[i]) + ":";
                if (msg.rfind(w, 0) != 0) continue;
                std::string path = "$.layers[" + std::to_string(i) + "]";
                if (msg.find(" ties ") != std::string::npos || msg.find("tied tensor") != std::string::npos) path += ".tied";
                fail_layer(path, msg);
            }
            fail_layer("$", msg);
        }
    }

    std::string label_;
    const input_overrides& overrides_;
};

bool all_digits(std::string_view s) {
    std::size_t i = (!s.empty() && s[0] == '-') ? 1 : 0;
    if (i == s.size()) return false;
    for (; i < s.size(); ++i)
        if (s[i] < '0' || s[i] > '9') return false;
    return true;
}

}  // namespace

core::model parse_model_json(const nlohmann::json& doc, std::string_view label, const input_overrides& overrides) {
    // another of ridgeline's files, or a Hugging Face config, given as a model file: say which, and what reads it
    if (doc.is_object() && doc.contains("schema") && doc["schema"].is_string()) {
        const std::string& schema = doc["schema"].get_ref<const std::string&>();
        if (schema.rfind("ridgeline.", 0) == 0)
            throw core::request_error(std::string(label) + ": a ridgeline report (" + core::printable(schema.substr(0, 40)) +
                                          "), not a model file: `ridgeline export --model NAME` writes one",
                                      {});
    }
    if (doc.is_object() && doc.contains("model_type") && !doc.contains("layers"))
        throw core::request_error(std::string(label) + ": a Hugging Face config.json, not a ridgeline model file",
                                  {"hf-config"});
    reader r(label, overrides);
    return r.read(doc);
}

namespace {

/// A first, linear pass over the text (nlohmann's SAX interface, no document built) that rejects a key
/// written twice in one object and a control character in a key or a string, naming the JSON path. RFC 8259
/// leaves duplicate names to the implementation and nlohmann keeps the last one, so a model file with two
/// "stride" fields would be profiled with one of them silently dropped; no field of the format holds a
/// control character, and a NUL would cut an error message short. A syntax error ends the pass quietly: the
/// parse that follows reports it with its line and column. (A parser callback could do the same in one pass,
/// but nlohmann's callback parser is quadratic on an array of objects: 15 s for 200,000 layers.)
class strict_keys final : public nlohmann::json_sax<json> {
public:
    explicit strict_keys(std::string label) : label_(std::move(label)) {}

    bool null() override { return value(); }
    bool boolean(bool) override { return value(); }
    bool number_integer(number_integer_t) override { return value(); }
    bool number_unsigned(number_unsigned_t) override { return value(); }
    bool number_float(number_float_t, const string_t&) override { return value(); }
    bool binary(binary_t&) override { return value(); }
    bool string(string_t& v) override {
        enter_child();
        if (has_control(v)) fail(path(), "control character " + first_control(v) + " in a string");
        return true;
    }
    bool start_object(std::size_t) override {
        enter_child();
        frames_.push_back({false, 0, "", {}});
        return true;
    }
    bool key(string_t& k) override {
        frame& f = frames_.back();
        // the path is built only for an error: building it for every key would be quadratic in the depth
        if (has_control(k)) fail(path(false) + member(k), "control character " + first_control(k) + " in a key");
        if (!f.keys.insert(k).second)
            fail(path(false) + member(k),
                 "duplicate key " + json(k).dump().substr(0, 42) + " (each field may appear once in an object)");
        f.child = member(k);
        return true;
    }
    bool end_object() override { return leave(); }
    bool start_array(std::size_t) override {
        enter_child();
        frames_.push_back({true, 0, "", {}});
        return true;
    }
    bool end_array() override { return leave(); }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

private:
    struct frame {
        bool is_array;
        std::size_t next_index;
        std::string child;  // ".key", ["key"] or "[i]": where the value being read sits
        std::set<std::string> keys;
    };
    bool value() {
        enter_child();
        return true;
    }
    bool leave() {
        frames_.pop_back();
        return true;
    }
    void enter_child() {
        if (!frames_.empty() && frames_.back().is_array)
            frames_.back().child = "[" + std::to_string(frames_.back().next_index++) + "]";
    }
    /// The path of the value being read (`with_last`), or of the innermost open container: each step, cut in
    /// the middle beyond 200 characters (a file nested 100,000 deep must not give a 300 KB error line).
    std::string path(bool with_last = true) const {
        std::string p = "$";
        const std::size_t n = frames_.size() - (with_last || frames_.empty() ? 0 : 1);
        for (std::size_t i = 0; i < n; ++i) p += frames_[i].child;
        if (p.size() > 200) p = p.substr(0, 100) + "..." + p.substr(p.size() - 100);
        return p;
    }
    static bool has_control(const std::string& text) {
        return std::any_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; });
    }
    static std::string first_control(const std::string& text) {
        const auto c = static_cast<unsigned char>(
            *std::find_if(text.begin(), text.end(), [](char x) { return static_cast<unsigned char>(x) < 0x20; }));
        const char* hex = "0123456789ABCDEF";
        return std::string("U+00") + hex[c >> 4] + hex[c & 15];
    }
    [[noreturn]] void fail(const std::string& at, const std::string& message) const {
        throw core::parse_error(label_ + ": " + at + ": " + message);
    }
    std::string label_;
    std::vector<frame> frames_;
};

}  // namespace

nlohmann::json parse_model_text(std::string_view text, std::string_view label) {
    core::check_json_text(text, label);
    try {
        strict_keys check{std::string(label)};
        (void)nlohmann::json::sax_parse(text, &check);  // on a syntax error it stops; parse() reports it
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {  // syntax (parse_error) and numbers like 1e999 (out_of_range)
        throw core::parse_error(std::string(label) + ": not valid JSON: " + core::without_json_exception_tag(e.what()));
    }
}

core::model read_model_file(const std::filesystem::path& path, const input_overrides& overrides) {
    const std::string label = path.string();
    const std::string text = core::read_regular_file(path, label);
    // an ONNX model given as a model file: a protobuf (its first field, ir_version, is the byte 0x08), not JSON
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && text[first] != '{' &&
        (text[0] == '\x08' || path.extension() == ".onnx" || path.extension() == ".ONNX"))
        throw core::request_error(label + ": an ONNX model, not a ridgeline model file (JSON): it is read as ONNX",
                                  {"onnx"});
    return parse_model_json(parse_model_text(text, label), label, overrides);
}

nlohmann::ordered_json attribute_json(std::string_view text) {
    using oj = nlohmann::ordered_json;
    if (text == "true") return true;
    if (text == "false") return false;
    if (all_digits(text)) {
        std::int64_t v = 0;
        auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec == std::errc() && ptr == text.data() + text.size()) return v;
    }
    // "3x5", "0x0x12x64", "1x-1": every part an integer
    if (text.find('x') != std::string_view::npos) {
        oj list = oj::array();
        std::size_t pos = 0;
        bool ok = true;
        while (ok) {
            const std::size_t end = text.find('x', pos);
            const std::string_view part = text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
            std::int64_t v = 0;
            auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
            ok = !part.empty() && ec == std::errc() && ptr == part.data() + part.size();
            if (ok) list.push_back(v);
            if (end == std::string_view::npos) break;
            pos = end + 1;
        }
        if (ok) return list;
    }
    double d = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
    if (ec == std::errc() && ptr == text.data() + text.size() && std::isfinite(d)) return d;
    return std::string(text);
}

nlohmann::ordered_json model_json(const core::model& m) {
    using oj = nlohmann::ordered_json;
    oj inputs = oj::array();
    for (const auto& in : m.inputs()) {
        oj j = {{"name", in.name}, {"shape", in.dims.dims()}};
        if (in.indices) j["dtype"] = "int64";
        inputs.push_back(std::move(j));
    }
    oj layers = oj::array();
    std::string previous = m.inputs().empty() ? std::string() : m.inputs().front().name;
    for (const auto& l : m.layers()) {
        oj j = {{"name", l.name}, {"op", std::string(core::kind_of(l.op))}};
        for (const auto& a : core::attributes_of(l.op)) j[a.key] = attribute_json(a.value);
        if (!(l.inputs.size() == 1 && l.inputs[0] == previous)) j["inputs"] = l.inputs;
        if (!l.tied.empty()) {
            oj tied = oj::object();
            for (const auto& [param, shared] : l.tied) tied[param] = shared;
            j["tied"] = std::move(tied);
        }
        previous = l.name;
        layers.push_back(std::move(j));
    }
    oj j = {{"format", std::string(model_format_id)}, {"name", m.name()}, {"inputs", inputs}, {"layers", layers}};
    if (!m.outputs().empty()) j["outputs"] = m.outputs();
    return j;
}

}  // namespace ridgeline::io
