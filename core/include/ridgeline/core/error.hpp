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

/// A request the model cannot take (a phase, sequence, KV cache length, batch or input shape that does not fit it):
/// the command line's arguments are at fault, so it exits 2 as for any usage mistake.
class request_error : public error {
public:
    using error::error;
};

/// A count (elements, MACs, FLOPs, bytes) that does not fit in int64.
class overflow_error : public error {
public:
    using error::error;
};

/// `s` with each control character shown as its code point, "[U+000A]": C0 (bytes 0x00-0x1F), DEL (0x7F) and C1
/// (U+0080-U+009F, two bytes in UTF-8), so a name read from a file (an ONNX node, a report's layer) stays on one
/// line and cannot move a terminal's cursor or change its colours; everything else, UTF-8 included, as it is.
inline std::string printable(std::string_view s) {
    static constexpr char hex[] = "0123456789ABCDEF";
    auto code = [](unsigned v) {
        return std::string("[U+00") + hex[(v >> 4) & 15] + hex[v & 15] + "]";
    };
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto b = static_cast<unsigned char>(s[i]);
        if (b < 0x20 || b == 0x7F) {
            out += code(b);
        } else if (b == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
                   static_cast<unsigned char>(s[i + 1]) <= 0x9F) {
            out += code(static_cast<unsigned char>(s[i + 1]));
            ++i;
        } else {
            out += s[i];
        }
    }
    return out;
}

/// A JSON library's message without its "[json.exception.parse_error.101] " tag, to follow our own
/// "FILE: not valid JSON: " prefix: "parse error at line 3, column 19: ...". Other messages are returned whole.
inline std::string without_json_exception_tag(std::string_view what) {
    const auto end = what.find("] ");
    if (what.rfind("[json.exception", 0) == 0 && end != std::string_view::npos) what.remove_prefix(end + 2);
    return std::string(what);
}

}  // namespace ridgeline::core
