#pragma once
// Error types of ridgeline::core.
//
// Every error is one line that names the thing at fault and the rule it broke, for example
//   conv2d "layer3.0.conv1": in_channels 64 is not divisible by groups 3
// The command line prints what() as is and exits 1.

#include <stdexcept>
#include <string>
#include <string_view>

namespace ridgeline::core {

/// Base of every error ridgeline raises on purpose (bad input, overflow, unsupported request).
class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A layer string, shape string, attribute or model description that does not parse.
class parse_error : public error {
public:
    using error::error;
};

/// A layer or model that parses but breaks a rule (channel mismatch, empty output, ...).
class invalid_layer : public error {
public:
    using error::error;
};

/// A count (elements, MACs, FLOPs, bytes) that does not fit in int64.
class overflow_error : public error {
public:
    using error::error;
};

/// A JSON library's message without its "[json.exception.parse_error.101] " tag, to follow our own
/// "FILE: not valid JSON: " prefix: "parse error at line 3, column 19: ...". Other messages are returned whole.
inline std::string without_json_exception_tag(std::string_view what) {
    const auto end = what.find("] ");
    if (what.rfind("[json.exception", 0) == 0 && end != std::string_view::npos) what.remove_prefix(end + 2);
    return std::string(what);
}

}  // namespace ridgeline::core
