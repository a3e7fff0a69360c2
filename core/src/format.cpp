// Numbers as ridgeline writes them (format.hpp).
#include "ridgeline/core/format.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace ridgeline::core {

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> parts;
    std::size_t pos = 0;
    while (true) {
        const std::size_t end = s.find(sep, pos);
        parts.push_back(s.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos));
        if (end == std::string_view::npos) break;
        pos = end + 1;
    }
    return parts;
}


namespace {
/// printf's %.*f: the digits fmt's {:.Nf} gives for a finite double.
std::string print_fixed(double v, int decimals) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}
}  // namespace

std::string with_commas(std::int64_t v) {
    const unsigned long long magnitude =
        v < 0 ? 0ULL - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
    const std::string digits = std::to_string(magnitude);
    std::string out;
    const std::size_t n = digits.size();
    for (std::size_t i = 0; i < n; ++i) {
        if (i && (n - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return v < 0 ? "-" + out : out;
}

std::string counted(std::int64_t n, std::string_view noun) {
    return with_commas(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

std::string si(double v, std::string_view unit) {
    static const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
    if (!std::isfinite(v)) return "-";
    double a = std::fabs(v);
    int p = 0;
    while (a >= 999.95 && p < 6) {
        a /= 1000.0;
        v /= 1000.0;
        ++p;
    }
    std::string num;
    if (p == 0 && v == std::floor(v))
        num = print_fixed(v, 0);
    else if (a >= 99.995)
        num = print_fixed(v, 1);
    else if (a >= 9.9995)
        num = print_fixed(v, 2);
    else
        num = print_fixed(v, 3);
    const std::string prefix = prefixes[p];
    if (prefix.empty() && unit.empty()) return num;
    return num + " " + prefix + std::string(unit);
}

std::string shortest(double v) {
    char buf[64];
    auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc() ? std::string(buf, ptr) : print_fixed(v, 17);
}

std::string fixed(double v, int decimals) {
    if (!std::isfinite(v)) return "-";
    return print_fixed(v, decimals);
}

std::string significant(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
}

std::string time_ms(double ms) {
    if (!std::isfinite(ms)) return "-";
    const double a = std::fabs(ms);
    if (a >= 1000.0) return print_fixed(ms / 1000.0, 3) + " s";
    if (a >= 1.0) return print_fixed(ms, 3) + " ms";
    if (a >= 1e-3) return print_fixed(ms * 1e3, 2) + " us";
    return print_fixed(ms * 1e6, 1) + " ns";
}

}  // namespace ridgeline::core
