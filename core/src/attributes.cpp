#include "ridgeline/core/attributes.hpp"
#include "ridgeline/core/format.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "ridgeline/core/error.hpp"
#include "ridgeline/core/suggest.hpp"

namespace ridgeline::core {

namespace {

std::optional<std::int64_t> parse_int(std::string_view s) {
    if (s.empty()) return std::nullopt;
    const char* first = s.data();
    const char* last = s.data() + s.size();
    if (*first == '+') {
        ++first;
        if (first != last && *first == '-') return std::nullopt;  // "+-1" is not a number
    }
    std::int64_t v = 0;
    auto [ptr, ec] = std::from_chars(first, last, v);
    if (ec != std::errc() || ptr != last) return std::nullopt;
    return v;
}

}  // namespace

std::string layer_where(std::string_view kind, std::string_view name) {
    std::string w(kind);
    if (!name.empty()) {
        w += " \"";
        w += name;
        w += '"';
    }
    return w;
}

namespace {
/// A key as an error shows it: in full up to 40 characters, so the error stays one short line.
std::string shown_key(const std::string& key) { return key.size() > 40 ? key.substr(0, 37) + "..." : key; }
}  // namespace

attribute_reader::attribute_reader(std::string_view kind, std::string_view name, std::vector<attribute> attrs)
    : kind_(kind), where_(layer_where(kind, name)), attrs_(std::move(attrs)), used_(attrs_.size(), false) {
    for (std::size_t i = 0; i < attrs_.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (attrs_[i].key == attrs_[j].key) fail(attrs_[i].key, "is given twice");
}

void attribute_reader::fail(std::string_view key, std::string_view message) const {
    throw parse_error(where_ + ": " + std::string(key) + " " + std::string(message));
}

void attribute_reader::missing(std::string_view key) const {
    // a required key that is absent beside a given key spelled close to it is a misspelling: name what was given
    // ("kernel=3" for kernel_size said "kernel_size is required" and left the user to find "kernel")
    // Only a near miss counts: at most 2 edits, or one a prefix of the other; a key not read yet may be another
    // attribute of the op (out_features is 3 edits from in_features, and linear reads it later).
    for (std::size_t i = 0; i < attrs_.size(); ++i) {
        if (used_[i]) continue;
        const std::string& given = attrs_[i].key;
        const std::size_t shorter = std::min(given.size(), key.size());
        const bool prefix = shorter >= 3 && edit_distance(given.substr(0, shorter), key.substr(0, shorter)) == 0;
        if (edit_distance(given, key) <= 2 || prefix)
            throw parse_error(where_ + ": unknown attribute \"" + shown_key(given) + "\" (did you mean \"" +
                              std::string(key) + "\"?)");
    }
    fail(key, "is required");
}

const attribute* attribute_reader::lookup(std::string_view key) {
    if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
    for (std::size_t i = 0; i < attrs_.size(); ++i) {
        if (attrs_[i].key == key) {
            used_[i] = true;
            return &attrs_[i];
        }
    }
    return nullptr;
}

std::int64_t attribute_reader::get_int(std::string_view key) {
    const attribute* a = lookup(key);
    if (!a) missing(key);
    auto v = parse_int(a->value);
    if (!v) fail(key, "\"" + a->value + "\" is not an integer");
    return *v;
}

std::int64_t attribute_reader::get_int(std::string_view key, std::int64_t fallback) {
    const attribute* a = lookup(key);
    if (!a) return fallback;
    auto v = parse_int(a->value);
    if (!v) fail(key, "\"" + a->value + "\" is not an integer");
    return *v;
}

std::optional<pair2d> attribute_reader::find_pair(std::string_view key) {
    const attribute* a = lookup(key);
    if (!a) return std::nullopt;
    const auto parts = split(a->value, 'x');
    if (parts.size() == 1) {
        auto v = parse_int(parts[0]);
        if (!v) fail(key, "\"" + a->value + "\" is not an integer or HxW pair");
        return pair2d{*v, *v};
    }
    if (parts.size() == 2) {
        auto h = parse_int(parts[0]);
        auto w = parse_int(parts[1]);
        if (!h || !w) fail(key, "\"" + a->value + "\" is not an integer or HxW pair");
        return pair2d{*h, *w};
    }
    fail(key, "\"" + a->value + "\" has " + std::to_string(parts.size()) +
                  " values, expected one integer or an HxW pair");
}

pair2d attribute_reader::get_pair(std::string_view key) {
    auto p = find_pair(key);
    if (!p) missing(key);
    return *p;
}

pair2d attribute_reader::get_pair(std::string_view key, pair2d fallback) {
    auto p = find_pair(key);
    return p ? *p : fallback;
}

bool attribute_reader::get_bool(std::string_view key, bool fallback) {
    const attribute* a = lookup(key);
    if (!a) return fallback;
    const std::string& v = a->value;
    if (v == "true" || v == "True" || v == "1") return true;
    if (v == "false" || v == "False" || v == "0") return false;
    fail(key, "\"" + v + "\" is not a boolean (true or false)");
}

double attribute_reader::get_float(std::string_view key) {
    const attribute* a = lookup(key);
    if (!a) missing(key);
    const std::string& v = a->value;
    // decimal only, as PyTorch's arguments are written (from_chars: no hex "0x10", no leading space, no locale);
    // one leading '+' is allowed
    const char* first = v.data() + (!v.empty() && v.front() == '+' ? 1 : 0);
    const char* last = v.data() + v.size();
    double d = 0;
    const auto [ptr, ec] = std::from_chars(first, last, d, std::chars_format::general);
    const std::string shown = v.size() > 40 ? v.substr(0, 37) + "..." : v;  // a 5000-digit value is not echoed whole
    if (ec == std::errc::result_out_of_range)
        fail(key, "is " + shown + ", out of the range of a double (beyond 1.8e308, or too small to tell from 0)");
    if (v.empty() || first == last || ec != std::errc() || ptr != last || (first != v.data() && *first == '-'))
        fail(key, "\"" + shown + "\" is not a decimal number");
    if (!std::isfinite(d)) fail(key, "is " + v + ", it must be a finite number");
    return d;
}

double attribute_reader::get_float(std::string_view key, double fallback) {
    if (!find_raw(key)) return fallback;
    return get_float(key);
}

std::vector<std::int64_t> attribute_reader::get_int_list(std::string_view key) {
    const attribute* a = lookup(key);
    if (!a) missing(key);
    std::vector<std::int64_t> out;
    for (std::string_view part : split(a->value, 'x')) {
        auto v = parse_int(part);
        if (!v) fail(key, "\"" + a->value + "\" is not a list of integers separated by 'x'");
        out.push_back(*v);
    }
    return out;
}

std::optional<std::string> attribute_reader::find_raw(std::string_view key) {
    const attribute* a = lookup(key);
    if (!a) return std::nullopt;
    return a->value;
}

std::string attribute_reader::get_word(std::string_view key, const std::vector<std::string>& allowed,
                                       std::string_view fallback) {
    const attribute* a = lookup(key);
    if (!a) return std::string(fallback);
    if (std::find(allowed.begin(), allowed.end(), a->value) != allowed.end()) return a->value;
    std::string list;
    for (const auto& w : allowed) list += (list.empty() ? "" : ", ") + w;
    fail(key, "\"" + a->value + "\" is not one of: " + list);
}

void attribute_reader::finish() const {
    for (std::size_t i = 0; i < attrs_.size(); ++i) {
        if (used_[i]) continue;
        std::string list;
        for (const auto& k : known_) list += (list.empty() ? "" : ", ") + k;
        const std::string& key = attrs_[i].key;
        const std::string guess = did_you_mean(key, known_);
        throw parse_error(where_ + ": unknown attribute \"" + shown_key(key) + "\"" +
                          (list.empty()      ? std::string(" (this op takes no attributes)")
                           : !guess.empty() ? guess.substr(0, guess.size() - 1) + "; known: " + list + ")"
                                            : " (known: " + list + ")"));
    }
}

std::string to_string(pair2d p) {
    if (p.h == p.w) return std::to_string(p.h);
    return std::to_string(p.h) + "x" + std::to_string(p.w);
}

void attribute_writer::add(std::string_view key, std::int64_t value) {
    attrs_.push_back({std::string(key), std::to_string(value)});
}
void attribute_writer::add(std::string_view key, pair2d value) {
    attrs_.push_back({std::string(key), to_string(value)});
}
void attribute_writer::add(std::string_view key, bool value) {
    attrs_.push_back({std::string(key), value ? "true" : "false"});
}
void attribute_writer::add(std::string_view key, double value) {
    char buf[64];
    // integral values in plain digits (theta=500000, not the shortest form's 5e+05), others in the shortest form
    const bool integral = std::abs(value) < 1e15 && value == std::trunc(value);
    auto [ptr, ec] = integral ? std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed)
                              : std::to_chars(buf, buf + sizeof buf, value);
    attrs_.push_back({std::string(key), ec == std::errc() ? std::string(buf, ptr) : std::to_string(value)});
}
void attribute_writer::add(std::string_view key, const std::vector<std::int64_t>& values) {
    std::string s;
    for (std::size_t i = 0; i < values.size(); ++i) s += (i ? "x" : "") + std::to_string(values[i]);
    attrs_.push_back({std::string(key), s});
}
void attribute_writer::add_word(std::string_view key, std::string_view value) {
    attrs_.push_back({std::string(key), std::string(value)});
}

std::string attribute_writer::str() const {
    std::string s;
    for (const auto& a : attrs_) s += (s.empty() ? "" : ",") + a.key + "=" + a.value;
    return s;
}

}  // namespace ridgeline::core
