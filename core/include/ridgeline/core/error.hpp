#pragma once
// Error types of ridgeline::core.
//
// Every error is one line that names the thing at fault and the rule it broke, for example
//   conv2d "layer3.0.conv1": in_channels 64 is not divisible by groups 3
// The command line prints what() as is and exits 1.

#include <stdexcept>
#include <string>
#include <vector>
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
/// It names the request's fields at fault (batch, input, phase, seq, kv_len, model): the message speaks of the
/// request ("a decode step needs the KV cache length"), and a front end adds its own names for them (the CLI its
/// flags: "--kv-len").
class request_error : public error {
public:
    using error::error;
    request_error(const std::string& message, std::vector<std::string> fields)
        : error(message), fields_(std::move(fields)) {}
    [[nodiscard]] const std::vector<std::string>& fields() const { return fields_; }

private:
    std::vector<std::string> fields_;
};

/// A count (elements, MACs, FLOPs, bytes) that does not fit in int64.
class overflow_error : public error {
public:
    using error::error;
};

/// `s` with each control character shown as its code point, "[U+000A]": C0 (bytes 0x00-0x1F), DEL (0x7F), C1
/// (U+0080-U+009F) and the bidirectional controls that reorder what follows them (U+200E, U+200F, U+202A-U+202E,
/// U+2066-U+2069: "Trojan Source", CVE-2021-42574); a byte that is not part of valid UTF-8 as "[0x9B]" (a lone 0x9B
/// is a CSI to an 8-bit terminal). So a name read from a file (an ONNX node, a config, a report's layer) stays on
/// one line and cannot move a terminal's cursor, change its colours or reorder the line; everything else as it is.
inline std::string printable(std::string_view s) {
    static constexpr char hex[] = "0123456789ABCDEF";
    auto code = [](unsigned v) {
        std::string c = "[U+";
        for (int shift = 12; shift >= 0; shift -= 4) c += hex[(v >> shift) & 15];
        return c + "]";
    };
    auto byte = [](unsigned v) { return std::string("[0x") + hex[(v >> 4) & 15] + hex[v & 15] + "]"; };
    auto hidden = [](unsigned cp) {
        return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
               (cp >= 0x2066 && cp <= 0x2069);
    };
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const auto b = static_cast<unsigned char>(s[i]);
        // the length of the UTF-8 sequence this byte starts, and its first bits (RFC 3629)
        const std::size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
        unsigned cp = n == 1 ? b : n == 2 ? (b & 0x1Fu) : n == 3 ? (b & 0x0Fu) : (b & 0x07u);
        bool valid = n > 0 && i + n <= s.size();
        for (std::size_t k = 1; valid && k < n; ++k) {
            const auto c = static_cast<unsigned char>(s[i + k]);
            valid = (c >> 6) == 0x2;
            cp = (cp << 6) | (c & 0x3Fu);
        }
        // overlong forms, surrogates and code points past U+10FFFF are not UTF-8
        valid = valid && !(n == 2 && cp < 0x80) && !(n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) &&
                !(n == 4 && (cp < 0x10000 || cp > 0x10FFFF));
        if (!valid) {
            out += byte(b);
            ++i;
        } else if (hidden(cp)) {
            out += code(cp);
            i += n;
        } else {
            out.append(s.substr(i, n));
            i += n;
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
