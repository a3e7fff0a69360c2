#pragma once
// Attributes of a layer: the `key=value` pairs of a layer string such as
//   conv2d:in_channels=16,out_channels=32,kernel_size=3,stride=2,padding=1,bias=false
// Keys are PyTorch's argument names. Values are integers, pairs ("3" or "3x5"), lists ("0x0x12x64"),
// booleans (true/false), floats, or words ("same", "tanh"). Every reader error names the layer, the key
// and the rule; a key the op does not know is an error that lists the keys it does know.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ridgeline::core {

/// (height, width) pair of a 2-D attribute: kernel_size, stride, dilation, output_size.
struct pair2d {
    std::int64_t h = 0;
    std::int64_t w = 0;
    bool operator==(const pair2d&) const = default;
};

/// One `key=value` as written.
struct attribute {
    std::string key;
    std::string value;
    bool operator==(const attribute&) const = default;
};

/// "conv2d \"layer1.0.conv1\"" or just "conv2d" when the layer has no name: the prefix of every
/// error about a layer.
std::string layer_where(std::string_view kind, std::string_view name);

/// Reads typed attributes for one op and remembers which keys were used.
class attribute_reader {
public:
    attribute_reader(std::string_view kind, std::string_view name, std::vector<attribute> attrs);

    /// Required integer; throws parse_error when missing or not an integer.
    std::int64_t get_int(std::string_view key);
    std::int64_t get_int(std::string_view key, std::int64_t fallback);
    /// "3" (square) or "3x5" (height x width).
    pair2d get_pair(std::string_view key);
    pair2d get_pair(std::string_view key, pair2d fallback);
    std::optional<pair2d> find_pair(std::string_view key);
    /// true/false (also 1/0, True/False).
    bool get_bool(std::string_view key, bool fallback);
    /// Finite float; NaN and infinities are errors.
    double get_float(std::string_view key);
    double get_float(std::string_view key, double fallback);
    /// Integers separated by 'x' ("0x0x12x64"); negative values allowed.
    std::vector<std::int64_t> get_int_list(std::string_view key);
    /// The raw text of a key, if present.
    std::optional<std::string> find_raw(std::string_view key);
    /// One of `allowed`; throws listing them otherwise.
    std::string get_word(std::string_view key, const std::vector<std::string>& allowed, std::string_view fallback);

    /// Throws parse_error for any key that was not read, naming the key and the keys this op accepts.
    void finish() const;

    /// Prefix of errors: `conv2d "name"`.
    [[nodiscard]] const std::string& where() const { return where_; }

    /// Throws parse_error("<where>: <key> <message>").
    [[noreturn]] void fail(std::string_view key, std::string_view message) const;
    /// A required `key` is absent: throws parse_error naming a given key not read yet that is a near miss of it (at
    /// most 2 edits, or a prefix of 3 characters or more either way) as unknown, with the guess ("unknown attribute
    /// \"kernel\" (did you mean \"kernel_size\"?)"), else "<key> is required".
    [[noreturn]] void missing(std::string_view key) const;

private:
    const attribute* lookup(std::string_view key);

    std::string kind_;
    std::string where_;
    std::vector<attribute> attrs_;
    std::vector<std::string> known_;  // every key asked for, for the error listing
    std::vector<bool> used_;
};

/// Collects `key=value` pairs in a fixed order and prints them as "k=v,k=v".
class attribute_writer {
public:
    void add(std::string_view key, std::int64_t value);
    void add(std::string_view key, pair2d value);  // "3" when square, else "3x5"
    void add(std::string_view key, bool value);
    void add(std::string_view key, double value);  // shortest round-trip form
    void add(std::string_view key, const std::vector<std::int64_t>& values);
    void add_word(std::string_view key, std::string_view value);

    [[nodiscard]] const std::vector<attribute>& attributes() const { return attrs_; }
    [[nodiscard]] std::string str() const;

private:
    std::vector<attribute> attrs_;
};

/// "3" or "3x5".
std::string to_string(pair2d p);

}  // namespace ridgeline::core
