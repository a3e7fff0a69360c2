#include "ridgeline/core/shape.hpp"

#include <charconv>
#include <string>

#include "ridgeline/core/checked.hpp"
#include "ridgeline/core/error.hpp"

namespace ridgeline::core {

namespace checked {
void throw_overflow(std::string_view what) {
    throw overflow_error(std::string(what) + ": count does not fit in int64 (overflow)");
}
}  // namespace checked

std::int64_t shape::at(std::int64_t dim) const {
    return dims_[normalize_dim(dim, dims_.size(), "shape " + to_string())];
}

std::int64_t shape::numel() const {
    std::int64_t n = 1;
    for (std::int64_t d : dims_) n = checked::mul(n, d, "element count of shape " + to_string());
    return n;
}

std::string shape::to_string() const {
    if (dims_.empty()) return "scalar";
    std::string s;
    for (std::size_t i = 0; i < dims_.size(); ++i) {
        if (i) s += 'x';
        s += std::to_string(dims_[i]);
    }
    return s;
}

shape parse_shape(std::string_view text) {
    const std::string quoted = "invalid shape \"" + std::string(text) + "\"";
    std::string_view t = text;
    while (!t.empty() && (t.front() == ' ' || t.front() == '[' || t.front() == '(')) t.remove_prefix(1);
    while (!t.empty() && (t.back() == ' ' || t.back() == ']' || t.back() == ')')) t.remove_suffix(1);
    if (t.empty()) throw parse_error(quoted + ": empty, expected dimensions like 1x3x224x224");
    if (t.find_first_of("xX") != std::string_view::npos && t.find(',') != std::string_view::npos)
        throw parse_error(quoted + ": mixes 'x' and ',' between dimensions (two inputs are two shapes)");
    std::vector<std::int64_t> dims;
    std::size_t pos = 0;
    while (true) {
        std::size_t end = t.find_first_of("x,X", pos);
        std::string_view part = t.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
        while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
        while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
        const std::size_t index = dims.size();  // from 0, as PyTorch and the ops' errors number dimensions
        if (part.empty())
            throw parse_error(quoted + ": dimension " + std::to_string(index) + " is empty");
        std::int64_t v = 0;
        const char* first = part.data();
        const char* last = part.data() + part.size();
        if (*first == '+') ++first;
        auto [ptr, ec] = std::from_chars(first, last, v);
        if (ec == std::errc::result_out_of_range)
            throw parse_error(quoted + ": dimension " + std::to_string(index) + " (" + std::string(part) +
                              ") does not fit in int64");
        if (ec != std::errc() || ptr != last)
            throw parse_error(quoted + ": dimension " + std::to_string(index) + " (\"" + std::string(part) +
                              "\") is not an integer");
        if (v < 1)
            throw parse_error(quoted + ": dimension " + std::to_string(index) + " is " + std::to_string(v) +
                              ", every dimension must be >= 1");
        dims.push_back(v);
        if (dims.size() > max_rank)
            throw parse_error(quoted + ": more than " + std::to_string(max_rank) + " dimensions");
        if (end == std::string_view::npos) break;
        pos = end + 1;
    }
    shape s(std::move(dims));
    (void)s.numel();  // rejects shapes whose element count overflows int64
    return s;
}

std::size_t normalize_dim(std::int64_t dim, std::size_t rank, std::string_view where) {
    const auto r = static_cast<std::int64_t>(rank);
    const std::int64_t d = dim < 0 ? dim + r : dim;
    if (d < 0 || d >= r)
        throw invalid_layer(std::string(where) + ": dim " + std::to_string(dim) + " is out of range for rank " +
                            std::to_string(rank));
    return static_cast<std::size_t>(d);
}

std::vector<std::int64_t> broadcast_strides(const std::vector<std::int64_t>& in, const std::vector<std::int64_t>& out,
                                            std::int64_t unit) {
    std::vector<std::int64_t> s(out.size(), 0);
    std::int64_t step = unit;
    for (std::size_t i = 0; i < in.size() && i < out.size(); ++i) {
        const std::size_t din = in.size() - 1 - i;
        const std::size_t dout = out.size() - 1 - i;
        s[dout] = in[din] == 1 ? 0 : step;
        step *= in[din];
    }
    return s;
}

}  // namespace ridgeline::core
