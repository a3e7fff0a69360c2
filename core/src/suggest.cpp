#include "ridgeline/core/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace ridgeline::core {

std::size_t edit_distance(std::string_view a, std::string_view b) {
    auto low = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
    std::vector<std::size_t> row(b.size() + 1);  // the previous row of the dynamic programme, then this one
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (low(a[i - 1]) == low(b[j - 1]) ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

namespace {

/// The one candidate that `name` (3 characters or more) begins, ignoring case: "kernel" -> "kernel_size"; none where
/// no candidate or several do ("gpt2" begins gpt2-medium and gpt2-large).
std::optional<std::string> unique_prefix_of(std::string_view name, const std::vector<std::string>& candidates) {
    if (name.size() < 3) return std::nullopt;
    std::optional<std::string> found;
    for (const auto& c : candidates) {
        if (c.size() <= name.size() || edit_distance(name, std::string_view(c).substr(0, name.size())) != 0) continue;
        if (found) return std::nullopt;
        found = c;
    }
    return found;
}

}  // namespace

std::optional<std::string> closest(std::string_view name, const std::vector<std::string>& candidates) {
    std::optional<std::string> best;
    std::size_t best_distance = 0;
    for (const auto& c : candidates)
        if (edit_distance(name, c) == 0) return c;
    if (auto p = unique_prefix_of(name, candidates)) return p;
    for (const auto& c : candidates) {
        const std::size_t d = edit_distance(name, c);
        const std::size_t allowed = std::max<std::size_t>(2, std::max(name.size(), c.size()) / 3);
        if (d <= allowed && (!best || d < best_distance)) {
            best = c;
            best_distance = d;
        }
    }
    return best;
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
    const auto c = closest(name, candidates);
    return c ? " (did you mean \"" + *c + "\"?)" : "";
}

}  // namespace ridgeline::core
